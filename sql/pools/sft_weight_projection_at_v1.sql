-- sft_weight_projection_at_v1(weights): supervised-token totals a trainer sees if the
-- recovery views are weighted w, for each w in `weights` (SPEC §3.3).
--   total(w)  = U + w * |R|
--   region(w) = |R ∩ U| + w * |R|
-- U: the union of the repair pools' supervised positions, each once (sft_union_runs_v1);
-- R: the recovery region, the distinct positions the recovery views supervise
-- (sft_recovery_exposure_v1, mode 'union'); R ∩ U: region positions a repair view also
-- supervises (seen once there, w times in the recovery view); R \ U: region positions
-- only the recovery views supervise (a recovery instance without a repair view, or a
-- window outside the repair mask), seen w times only. At w = 1, total and region equal the
-- union mode's exposure and region exposure in sft_recovery_exposure_v1.
-- Assumption: each region position is supervised by one recovery view of its instance
-- (overlapping recovery views of one instance would be seen once per view).
-- Parameter: weights DOUBLE[] (recovery weights, each finite and >= 0; duplicates give
--   duplicate rows). Called by sft_weight_projection_v1 with the default grid and by
--   `sphragis report weights --weights W,...`; a stock DuckDB client calls
--   `select * from sft_weight_projection_at_v1([0.5, 3.0])`.
-- Grain key: weight.
-- Grain: one row per element of `weights`.
-- Columns: weight; union_exposure (U, positions); region_positions (|R|, positions);
--   region_in_union (|R ∩ U|); region_outside_union (|R \ U|: when > 0, the region is not
--   inside the repair union); total (positions, weighted); region (positions, weighted);
--   region_share (region / total).
create or replace macro sft_weight_projection_at_v1(weights double[]) as table
with base as (
    select (select coalesce(sum(run_end - run_start), 0) from sft_union_runs_v1) as u,
           coalesce((select region_positions from sft_recovery_exposure_v1 where mode = 'union'), 0) as r,
           coalesce((select new_positions from sft_recovery_exposure_v1 where mode = 'union'), 0) as r_outside
)
select w.w as weight, b.u as union_exposure, b.r as region_positions,
       b.r - b.r_outside as region_in_union, b.r_outside as region_outside_union,
       b.u + w.w * b.r as total, (b.r - b.r_outside) + w.w * b.r as region,
       ((b.r - b.r_outside) + w.w * b.r) / nullif(b.u + w.w * b.r, 0) as region_share
from base as b, (select unnest(weights) as w) as w
