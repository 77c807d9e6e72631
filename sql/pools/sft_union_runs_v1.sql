-- sft_union_runs_v1: per instance, the union of the supervised positions of its views in
-- the repair pools, as maximal runs [run_start, run_end) (SPEC §3.3 dedup mode `union`).
-- Grain key: instance_id, run_start.
-- Grain: one row per merged run. Runs are merged with a running maximum of earlier ends;
-- identical runs are removed first so that ties cannot merge across a gap.
with runs as (
    select distinct v.instance_id, r.run_start as s, r.run_end as e
    from sft_view_runs as r
    join sft_views as v using (view_id)
    join sft_pool_roles as p on p.pool = v.pool and p.role = 'repair'
),
marked as (
    select *, max(e) over (partition by instance_id order by s, e rows between unbounded preceding and 1 preceding) as previous_end
    from runs
),
grouped as (
    select *, sum(case when previous_end is null or s > previous_end then 1 else 0 end)
                  over (partition by instance_id order by s, e rows unbounded preceding) as grp
    from marked
)
select instance_id, min(s) as run_start, max(e) as run_end
from grouped
group by instance_id, grp
