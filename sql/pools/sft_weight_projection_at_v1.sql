-- sft_weight_projection_at_v1(weights): supervised-token totals if the recovery region is
-- weighted w, for each w in `weights` (SPEC §3.3): total(w) = U + w * |R|,
-- region(w) = (1 + w) * |R|, with U the union of the repair pools' supervised positions
-- (each once: sft_union_runs_v1) and |R| the distinct recovery-region positions
-- (sft_recovery_exposure_v1, mode 'union'). At w = 1, total equals the union mode's
-- exposure when the region lies inside the repair union.
-- Parameter: weights DOUBLE[] (recovery weights, each finite and >= 0; duplicates give
--   duplicate rows). Called by sft_weight_projection_v1 with the default grid and by
--   `sphragis report weights --weights W,...`; a stock DuckDB client calls
--   `select * from sft_weight_projection_at_v1([0.5, 3.0])`.
-- Grain: one row per element of `weights`.
-- Columns: weight; union_exposure (U, positions); region_positions (|R|, positions);
--   total (positions, weighted); region (positions, weighted); region_share (region / total).
create or replace macro sft_weight_projection_at_v1(weights double[]) as table
with base as (
    select (select coalesce(sum(run_end - run_start), 0) from sft_union_runs_v1) as u,
           (select region_positions from sft_recovery_exposure_v1 where mode = 'union') as r
)
select w.w as weight, b.u as union_exposure, b.r as region_positions,
       b.u + w.w * b.r as total, (1 + w.w) * b.r as region, (1 + w.w) * b.r / nullif(b.u + w.w * b.r, 0) as region_share
from base as b, (select unnest(weights) as w) as w
