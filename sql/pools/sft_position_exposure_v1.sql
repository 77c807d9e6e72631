-- sft_position_exposure_v1: exposure of every supervised position (SPEC §3.3): how many
-- training views (pools not marked report-only) supervise it, before dedup.
-- Grain key: instance_id, position.
-- Grain: one row per (instance, supervised position). Large (one row per supervised
-- position of the corpus): filter by instance, or aggregate.
-- Columns: instance_id; position (0-based token index); exposure (views); pools (sorted).
select v.instance_id, pos.position, count(*) as exposure, list_sort(list_distinct(list(v.pool))) as pools
from sft_view_runs as r
join sft_views as v using (view_id)
left join sft_pool_roles as p on p.pool = v.pool,
unnest(range(r.run_start, r.run_end)) as pos(position)
where p.role is null or p.role <> 'report'
group by v.instance_id, pos.position
