-- sft_weight_projection_v1: supervised-token totals if the recovery region is weighted w
-- (SPEC §3.3): total(w) = U + w * |R|, region(w) = (1 + w) * |R|, with U the union-mode
-- exposure and |R| the distinct recovery-region positions (sft_recovery_exposure_v1).
-- Grain: one row per w in 0, 0.25, 0.5, 1, 2, 4.
with base as (
    select exposure as u, region_positions as r from sft_recovery_exposure_v1 where mode = 'union'
)
select w.w as weight, b.u as union_exposure, b.r as region_positions,
       b.u + w.w * b.r as total, (1 + w.w) * b.r as region, (1 + w.w) * b.r / (b.u + w.w * b.r) as region_share
from base as b, (values (0.0), (0.25), (0.5), (1.0), (2.0), (4.0)) as w(w)
