-- sft_recovery_exposure_v2: recovery-region accounting (SPEC §3.3), with instances and
-- trajectories told apart (issue 27): sft_recovery_exposure_v1's new_instances compared view
-- instance_ids, so a recovery view of one attempt of an instance ('<instance>#<n>') counted
-- as new although a repair view of another attempt covers the instance.
-- The recovery region of a trajectory is the supervised positions of its recovery-pool
-- view(s). Region exposure counts, for every training view of the trajectory, the positions
-- it supervises inside that region.
-- Grain key: mode.
-- Grain: one row per dedup mode ('none': all training views; 'union': repair views
-- collapsed per trajectory, recovery views unchanged).
-- Columns: region_positions (|R|, distinct recovery-region positions); region_exposure;
--   exposure (all supervised positions of the mode's views); region_share (region_exposure
--   / exposure); recovery_views and recovery_file_share (recovery views / all training
--   views of the mode); new_instances (SWE-bench instances with a recovery view and no
--   repair view of any of their trajectories: the instance of the trajectory a view names,
--   or its instance_id when no trajectory is loaded); new_trajectories (sft_recovery_exposure_v1's
--   new_instances: trajectories with a recovery view and no repair view); new_positions
--   (region positions no repair view of the same trajectory supervises).
with views as (
    select v.view_id, v.instance_id, p.role, coalesce(t.instance, v.instance_id) as instance
    from sft_views as v join sft_pool_roles as p on p.pool = v.pool and p.role in ('repair', 'recovery')
    left join sft_trajectories as t on t.instance_id = v.instance_id
),
region as (
    select distinct v.instance_id, r.run_start as s, r.run_end as e
    from sft_view_runs as r join views as v using (view_id)
    where v.role = 'recovery'
),
-- merged region runs per instance (a recovery pool may hold several views of one instance)
region_merged as (
    select instance_id, min(s) as s, max(e) as e from (
        select *, sum(case when previous_end is null or s > previous_end then 1 else 0 end)
                      over (partition by instance_id order by s, e rows unbounded preceding) as grp
        from (select *, max(e) over (partition by instance_id order by s, e rows between unbounded preceding and 1 preceding) as previous_end from region)
    ) group by instance_id, grp
),
all_runs as (
    select 'none' as mode, v.instance_id, r.run_start as s, r.run_end as e
    from sft_view_runs as r join views as v using (view_id)
    union all
    select 'union', instance_id, run_start, run_end from sft_union_runs_v1
    union all
    select 'union', v.instance_id, r.run_start, r.run_end
    from sft_view_runs as r join views as v using (view_id) where v.role = 'recovery'
),
region_hits as (
    select a.mode, sum(least(a.e, m.e) - greatest(a.s, m.s)) as n
    from all_runs as a join region_merged as m on m.instance_id = a.instance_id and a.s < m.e and a.e > m.s
    group by a.mode
),
totals as (
    select mode, sum(e - s) as exposure from all_runs group by mode
),
counts as (
    select 'none' as mode, count(*) as views, count(*) filter (where role = 'recovery') as recovery_views from views
    union all
    select 'union',
           (select count(distinct instance_id) from views where role = 'repair') + count(*) filter (where role = 'recovery'),
           count(*) filter (where role = 'recovery')
    from views
),
repair_cover as (
    select sum(least(m.e, u.run_end) - greatest(m.s, u.run_start)) as covered
    from region_merged as m join sft_union_runs_v1 as u on u.instance_id = m.instance_id and u.run_start < m.e and u.run_end > m.s
)
select
    t.mode,
    (select sum(e - s) from region_merged)::bigint as region_positions,
    coalesce(o.n, 0)::bigint as region_exposure,
    t.exposure::bigint as exposure,
    coalesce(o.n, 0) / nullif(t.exposure, 0) as region_share,
    c.recovery_views,
    c.recovery_views / nullif(c.views, 0) as recovery_file_share,
    (select count(distinct instance) from views where role = 'recovery'
        and instance not in (select instance from views where role = 'repair')) as new_instances,
    (select count(distinct instance_id) from views where role = 'recovery'
        and instance_id not in (select instance_id from views where role = 'repair')) as new_trajectories,
    ((select sum(e - s) from region_merged) - coalesce((select covered from repair_cover), 0))::bigint as new_positions
from totals as t
left join region_hits as o using (mode)
left join counts as c using (mode)
