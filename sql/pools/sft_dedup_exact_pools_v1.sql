-- sft_dedup_exact_pools_v1: what exact dedup removes per pool, and the subset views that
-- remain (SPEC §3.3 mode `exact`).
-- Grain key: pool.
-- Grain: one row per pool with views. A view is an exact copy when an earlier view (by
-- view_id) has the same instance, token ids and loss mask. A remaining view is a subset
-- view when its supervised positions are a strict subset of another remaining view's of
-- the same instance (every run inside one run of the other view, and fewer positions).
-- Columns: pool; role; views; exact_copies; remaining; subset_views (remaining views that
--   are subsets).
with v as (
    select v.*, coalesce(p.role, '(no role)') as role,
           row_number() over (partition by instance_id, input_ids, loss_mask order by view_id) as copy
    from sft_views as v
    left join sft_pool_roles as p on p.pool = v.pool
),
remaining as (
    select view_id, instance_id from v where copy = 1
),
sizes as (
    select view_id, sum(run_end - run_start) as n from sft_view_runs group by view_id
),
pairs as (
    -- (x, y): views of one instance; count x's runs outside every run of y
    select x.view_id as x, y.view_id as y,
           count(*) filter (where not exists (
               select 1 from sft_view_runs as ry
               where ry.view_id = y.view_id and ry.run_start <= rx.run_start and rx.run_end <= ry.run_end
           )) as uncovered
    from remaining as x
    join remaining as y on y.instance_id = x.instance_id and y.view_id <> x.view_id
    join sft_view_runs as rx on rx.view_id = x.view_id
    group by x.view_id, y.view_id
),
subsets as (
    select distinct p.x as view_id
    from pairs as p
    join sizes as sx on sx.view_id = p.x
    join sizes as sy on sy.view_id = p.y
    where p.uncovered = 0 and sx.n < sy.n
)
select
    v.pool,
    any_value(v.role) as role,
    count(*) as views,
    count(*) filter (where v.copy > 1) as exact_copies,
    count(*) filter (where v.copy = 1) as remaining,
    count(*) filter (where s.view_id is not null) as subset_views
from v
left join subsets as s using (view_id)
group by v.pool
