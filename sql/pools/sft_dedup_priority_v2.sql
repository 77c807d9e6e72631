-- sft_dedup_priority_v2: dedup mode priority(P) for every repair pool P (SPEC §3.3), with
-- instances and trajectories told apart (issue 27): sft_dedup_priority_v1 counted the views
-- of an instance's later attempts (instance_id '<instance>#<n>') as instances of their own.
-- Supervised positions belong to one trajectory, so the rule still works per trajectory: a
-- trajectory with a view in P keeps P's supervised positions (the union of its P views); the
-- others keep the union over the repair pools. Reports what P drops against the union.
-- Grain key: pool.
-- Grain: one row per repair pool.
-- Columns: pool; instances_with_view (distinct SWE-bench instances with a P view: the
--   instance of the trajectory a view names, or its instance_id when no trajectory is
--   loaded); trajectories_with_view (sft_dedup_priority_v1's instances_with_view);
--   kept_positions (supervised positions the mode keeps over all repair trajectories);
--   union_positions; dropped_positions (union - kept); instances_dropping (distinct
--   instances with a P view of a trajectory that loses positions); trajectories_dropping.
with repair as (
    select v.view_id, v.instance_id, v.pool from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role = 'repair'
),
instance_of as (
    select distinct r.instance_id, coalesce(t.instance, r.instance_id) as instance
    from repair as r left join sft_trajectories as t using (instance_id)
),
union_sizes as (
    select instance_id, sum(run_end - run_start) as n from sft_union_runs_v1 group by instance_id
),
pool_runs as (
    select distinct r.pool, r.instance_id, x.run_start as s, x.run_end as e
    from sft_view_runs as x join repair as r using (view_id)
),
pool_merged as (
    select pool, instance_id, min(s) as s, max(e) as e from (
        select *, sum(case when previous_end is null or s > previous_end then 1 else 0 end)
                      over (partition by pool, instance_id order by s, e rows unbounded preceding) as grp
        from (select *, max(e) over (partition by pool, instance_id order by s, e rows between unbounded preceding and 1 preceding) as previous_end
              from pool_runs)
    ) group by pool, instance_id, grp
),
pool_sizes as (
    select pool, instance_id, sum(e - s) as n from pool_merged group by pool, instance_id
),
pool_instances as (
    select distinct pool, instance_id from repair
),
per_pool as (
    select p.pool, i.instance_id, u.n as union_n, coalesce(ps.n, 0) as pool_n
    from (select distinct pool from repair) as p
    cross join union_sizes as u
    join (select distinct instance_id from repair) as i using (instance_id)
    left join pool_instances as pi on pi.pool = p.pool and pi.instance_id = i.instance_id
    left join pool_sizes as ps on ps.pool = p.pool and ps.instance_id = i.instance_id
    where true
)
select
    pp.pool,
    count(distinct io.instance) filter (where pi.instance_id is not null) as instances_with_view,
    count(*) filter (where pi.instance_id is not null) as trajectories_with_view,
    sum(case when pi.instance_id is not null then pp.pool_n else pp.union_n end)::bigint as kept_positions,
    sum(pp.union_n)::bigint as union_positions,
    (sum(pp.union_n) - sum(case when pi.instance_id is not null then pp.pool_n else pp.union_n end))::bigint as dropped_positions,
    count(distinct io.instance) filter (where pi.instance_id is not null and pp.pool_n < pp.union_n) as instances_dropping,
    count(*) filter (where pi.instance_id is not null and pp.pool_n < pp.union_n) as trajectories_dropping
from per_pool as pp
join instance_of as io on io.instance_id = pp.instance_id
left join pool_instances as pi on pi.pool = pp.pool and pi.instance_id = pp.instance_id
group by pp.pool
