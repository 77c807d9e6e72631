-- sft_dedup_v2: the training views under each dedup mode (SPEC §3.3), with instances and
-- trajectories told apart (issue 27): sft_dedup_v1 counted the views of an instance's later
-- attempts (instance_id '<instance>#<n>', as `views build` writes them) as instances of their
-- own. Several attempts of one instance are distinct trajectories: each keeps its views,
-- positions and exposure in every mode (union unites the views of one trajectory, exact
-- collapses identical lines of one trajectory); only `instances` counts the instance once.
-- Grain key: mode.
-- Grain: one row per mode:
--   none  — every view of a repair or recovery pool as loaded;
--   exact — identical lines (same trajectory, token ids and loss mask) counted once;
--   union — one view per trajectory holding the union of its repair-pool supervised
--           positions, plus the recovery views unchanged.
-- Report-only pools are never training views (sft_dedup_report_only_v1 lists them).
-- Columns: views; instances (distinct SWE-bench instances: a view's instance_id, or the
--   instance of the trajectory it names); exposure (supervised positions summed over views);
--   unique_positions (distinct (trajectory, position) supervised); context_tokens (token
--   positions summed over views); trajectories (distinct view instance_id: a trajectory, or
--   an instance with no trajectory loaded; sft_dedup_v1's `instances`).
with training as (
    select v.*, p.role, coalesce(t.instance, v.instance_id) as instance
    from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role in ('repair', 'recovery')
    left join sft_trajectories as t on t.instance_id = v.instance_id
),
supervised as (
    select view_id, sum(run_end - run_start) as n from sft_view_runs group by view_id
),
unique_positions as (
    -- distinct supervised (instance, position) over every training view: union of all runs
    select sum(hi - lo) as n from (
        select instance_id, grp, min(s) as lo, max(e) as hi from (
            select *, sum(case when previous_end is null or s > previous_end then 1 else 0 end)
                          over (partition by instance_id order by s, e rows unbounded preceding) as grp
            from (
                select *, max(e) over (partition by instance_id order by s, e rows between unbounded preceding and 1 preceding) as previous_end
                from (select distinct t.instance_id, r.run_start as s, r.run_end as e
                      from sft_view_runs as r join training as t using (view_id))
            )
        )
        group by instance_id, grp
    )
),
exact as (
    select *, row_number() over (partition by instance_id, input_ids, loss_mask order by view_id) as copy
    from training
),
union_views as (
    select instance_id, any_value(instance) as instance, max(n_ids) as n_ids
    from training where role = 'repair' group by instance_id
),
union_exposure as (
    select coalesce(sum(run_end - run_start), 0) as n from sft_union_runs_v1
),
recovery as (
    select * from training where role = 'recovery'
)
select 'none' as mode,
       count(*) as views,
       count(distinct instance) as instances,
       coalesce(sum(s.n), 0)::bigint as exposure,
       (select n from unique_positions)::bigint as unique_positions,
       sum(n_ids)::bigint as context_tokens,
       count(distinct instance_id) as trajectories
from training left join supervised as s using (view_id)
union all
select 'exact',
       count(*),
       count(distinct instance),
       coalesce(sum(s.n), 0)::bigint,
       (select n from unique_positions)::bigint,
       sum(n_ids)::bigint,
       count(distinct instance_id)
from exact left join supervised as s using (view_id)
where copy = 1
union all
select 'union',
       (select count(*) from union_views) + (select count(*) from recovery),
       (select count(distinct instance) from (select instance from union_views union all select instance from recovery)),
       ((select n from union_exposure)
           + coalesce((select sum(s.n) from recovery join supervised as s using (view_id)), 0))::bigint,
       (select n from unique_positions)::bigint,
       ((select coalesce(sum(n_ids), 0) from union_views) + (select coalesce(sum(n_ids), 0) from recovery))::bigint,
       (select count(distinct instance_id) from (select instance_id from union_views union all select instance_id from recovery))
