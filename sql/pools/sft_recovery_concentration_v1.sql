-- sft_recovery_concentration_v1: how concentrated the recovery pool's supervision is
-- (SPEC §3.3): the share of its supervised tokens held by its k longest views (by
-- tokens, ties by view_id), for k in 1, 3, 5, 10.
-- Grain key: k.
-- Grain: one row per k. Columns: k; views (recovery views); top_k_supervised; supervised;
--   share (top_k_supervised / supervised).
with recovery as (
    select v.view_id, v.n_ids,
           coalesce((select sum(run_end - run_start) from sft_view_runs as r where r.view_id = v.view_id), 0) as supervised,
           row_number() over (order by v.n_ids desc, v.view_id) as place
    from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role = 'recovery'
)
select
    k.k,
    (select count(*) from recovery) as views,
    coalesce((select sum(supervised) from recovery where place <= k.k), 0)::bigint as top_k_supervised,
    coalesce((select sum(supervised) from recovery), 0)::bigint as supervised,
    (select sum(supervised) from recovery where place <= k.k) / nullif((select sum(supervised) from recovery), 0) as share
from (values (1), (3), (5), (10)) as k(k)
