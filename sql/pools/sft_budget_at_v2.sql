-- sft_budget_at_v2(grad_accums, step_counts): training budget on the train split of the
-- manifest (SPEC §3.4), under the union dedup (one repair view per trajectory plus the
-- recovery views), for every gradient accumulation size G in `grad_accums` and every
-- fixed step count S in `step_counts`. As sft_budget_at_v1, with every attempt of a train
-- instance in the train split (issue 27): the manifest names instances, and v1 left out the
-- views of an instance's later attempts (instance_id '<instance>#<n>', as `views build`
-- writes them), their positions and their tokens. Each attempt is a trajectory of its own:
-- the union dedup unites the views of one trajectory, never two attempts.
-- Parameters: grad_accums INTEGER[] (each >= 1); step_counts INTEGER[] (each >= 1).
--   Called by sft_budget_v2 with the default grid and by
--   `sphragis report budget --grad-accum G --steps S`; a stock DuckDB client calls
--   `select * from sft_budget_at_v2([8], [500])`.
-- Grain key: grad_accum, steps.
-- Grain: one row per (G, S) pair of the two lists (their cross product).
-- Columns: grad_accum; steps; train_instances (instances of the manifest's train split);
--   views (training views of their trajectories after union dedup); exposure (their
--   supervised positions); context_tokens; updates_per_epoch (ceil(views / G), one view per
--   micro-batch); passes (S / updates per epoch: epochs S optimizer steps make).
create or replace macro sft_budget_at_v2(grad_accums integer[], step_counts integer[]) as table
with train as (
    select instance_id from sft_split_manifest where split = 'train'
),
keys as (
    -- the view instance_ids of train instances: the instances, and their attempts' keys
    select instance_id from train
    union
    select t.instance_id from sft_trajectories as t where t.instance in (select instance_id from train)
),
repair as (
    select v.instance_id, max(v.n_ids) as n_ids from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role = 'repair'
    where v.instance_id in (select instance_id from keys)
    group by v.instance_id
),
recovery as (
    select v.view_id, v.n_ids from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role = 'recovery'
    where v.instance_id in (select instance_id from keys)
),
totals as (
    select
        (select count(*) from train) as train_instances,
        (select count(*) from repair) + (select count(*) from recovery) as views,
        coalesce((select sum(run_end - run_start) from sft_union_runs_v1 where instance_id in (select instance_id from keys)), 0)
          + coalesce((select sum(r.run_end - r.run_start) from sft_view_runs as r join recovery using (view_id)), 0) as exposure,
        coalesce((select sum(n_ids) from repair), 0) + coalesce((select sum(n_ids) from recovery), 0) as context_tokens
)
select
    g.g as grad_accum,
    s.s as steps,
    t.train_instances,
    t.views,
    t.exposure::bigint as exposure,
    t.context_tokens::bigint as context_tokens,
    ceil(t.views / g.g)::bigint as updates_per_epoch,
    s.s / nullif(ceil(t.views / g.g), 0) as passes
from totals as t, (select unnest(grad_accums) as g) as g, (select unnest(step_counts) as s) as s
