-- sft_training_views_v1: the views a trainer trains on, written once for every figure
-- whose scope is training (SPEC §3.3: report-only views are listed apart).
-- Grain key: view_id.
-- Grain: view_id. A training view is a view of any pool not marked report-only in
--   sft_pool_roles (a pool with no configured role counts as training).
-- Columns: view_id; pool; instance_id; keep_msgs (null = every assistant message);
--   role (the pool's configured role, null when not configured).
select v.view_id, v.pool, v.instance_id, v.keep_msgs, p.role
from sft_views as v
left join sft_pool_roles as p on p.pool = v.pool
where p.role is null or p.role <> 'report'
