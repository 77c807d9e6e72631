-- sft_report_only_v1: the report-only views, listed apart from training (SPEC §3.3: dedup
-- never unions them). Grain: one row per view of a pool with role report.
-- Grain key: view_id.
-- Columns: view_id; pool; instance_id; tokens; supervised.
select v.view_id, v.pool, v.instance_id, v.n_ids as tokens,
       coalesce((select sum(run_end - run_start) from sft_view_runs as r where r.view_id = v.view_id), 0) as supervised
from sft_views as v
join sft_pool_roles as p on p.pool = v.pool and p.role = 'report'
