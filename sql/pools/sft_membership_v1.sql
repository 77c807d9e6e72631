-- sft_membership_v1: share of each labelled pool among the training views, before dedup
-- and after the union dedup (SPEC §3.3 membership share).
-- Grain key: pool.
-- Grain: one row per pool marked label_subset.
-- Columns: pool; views (its views); share_before (views / training views, mode none);
--   instances (distinct instances it has a view of); share_after (instances / training
--   views after union dedup: one repair view per instance plus the recovery views).
with training as (
    select v.view_id, v.instance_id, v.pool, p.role from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role in ('repair', 'recovery')
),
after as (
    select (select count(distinct instance_id) from training where role = 'repair')
         + (select count(*) from training where role = 'recovery') as n
)
select
    p.pool,
    count(t.view_id) as views,
    count(t.view_id) / (select count(*) from training) as share_before,
    count(distinct t.instance_id) as instances,
    count(distinct t.instance_id) / (select n from after) as share_after
from sft_pool_roles as p
left join training as t using (pool)
where p.label_subset
group by p.pool
