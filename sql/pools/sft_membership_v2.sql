-- sft_membership_v2: share of each labelled pool among the training views, before dedup
-- and after the union dedup (SPEC §3.3 membership share), with instances and trajectories
-- told apart (issue 27: sft_membership_v1 counted the views of an instance's later attempts,
-- instance_id '<instance>#<n>' as `views build` writes them, as instances of their own).
-- Grain key: pool.
-- Grain: one row per pool marked label_subset.
-- Columns: pool; views (its views); share_before (views / training views, mode none);
--   instances (distinct SWE-bench instances it has a view of, each once whatever its
--   attempts); trajectories (distinct trajectories it has a view of: a view's instance_id,
--   sft_membership_v1's `instances`); share_after (trajectories / training views after union
--   dedup: one repair view per trajectory plus the recovery views, as sft_dedup_v2 counts them).
with training as (
    select v.view_id, v.instance_id, coalesce(a.instance, v.instance_id) as instance, v.pool, p.role
    from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role in ('repair', 'recovery')
    left join sft_trajectories as a on a.instance_id = v.instance_id
),
after as (
    select (select count(distinct instance_id) from training where role = 'repair')
         + (select count(*) from training where role = 'recovery') as n
)
select
    p.pool,
    count(t.view_id) as views,
    count(t.view_id) / (select count(*) from training) as share_before,
    count(distinct t.instance) as instances,
    count(distinct t.instance_id) as trajectories,
    count(distinct t.instance_id) / (select n from after) as share_after
from sft_pool_roles as p
left join training as t using (pool)
where p.label_subset
group by p.pool
