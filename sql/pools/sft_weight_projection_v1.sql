-- sft_weight_projection_v1: supervised-token totals if the recovery region is weighted w
-- (SPEC §3.3): total(w) = U + w * |R|, region(w) = (1 + w) * |R|, with U the union of the
-- repair pools' supervised positions (each once: sft_union_runs_v1) and |R| the distinct
-- recovery-region positions (sft_recovery_exposure_v1). At w = 1, total equals the union
-- mode's exposure when the region lies inside the repair union.
-- Grain: one row per w in 0, 0.25, 0.5, 1, 2, 4 (`report weights --weights` for others).
with base as (
    select (select coalesce(sum(run_end - run_start), 0) from sft_union_runs_v1) as u,
           (select region_positions from sft_recovery_exposure_v1 where mode = 'union') as r
)
select w.w as weight, b.u as union_exposure, b.r as region_positions,
       b.u + w.w * b.r as total, (1 + w.w) * b.r as region, (1 + w.w) * b.r / nullif(b.u + w.w * b.r, 0) as region_share
from base as b, (values (0.0), (0.25), (0.5), (1.0), (2.0), (4.0)) as w(w)
