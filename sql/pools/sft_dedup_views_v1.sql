-- sft_dedup_views_v1: the training units behind the `views` counts of sft_dedup_v1 (per
-- dedup mode) and the `recovery_views` counts of sft_recovery_exposure_v1 (SPEC §3.3).
-- Drill-down of the HTML report.
-- Grain key: mode, unit_kind, unit.
-- Grain: one row per training unit a dedup mode counts:
--   none  — every view of a repair or recovery pool as loaded (unit = its view id);
--   exact — per group of identical lines (same instance, token ids and loss mask) the copy
--           dedup keeps, the lowest view id (as sft_dedup_v1 numbers the copies);
--   union — per instance with a repair view, one union view, which has no view id of its
--           own: unit is the instance id, unit_kind 'union' and merged_views the repair
--           views it unites; plus every recovery view unchanged (unit = its view id).
-- Report-only pools are never training views (sft_report_only_v1 lists them).
-- Columns: mode; unit_kind ('view' or 'union'); unit (view id, or instance id of a union
--   view); instance_id; pool (null for a union view); role (repair or recovery);
--   recovery (role = 'recovery'); merged_views (1 for a view). Ids only, no tokens.
with training as (
    select v.view_id, v.instance_id, v.pool, v.input_ids, v.loss_mask, p.role
    from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role in ('repair', 'recovery')
),
exact as (
    select *, row_number() over (partition by instance_id, input_ids, loss_mask order by view_id) as copy
    from training
)
select 'none' as mode, 'view' as unit_kind, view_id as unit, instance_id, pool, role,
       role = 'recovery' as recovery, 1 as merged_views
from training
union all
select 'exact', 'view', view_id, instance_id, pool, role, role = 'recovery', 1
from exact
where copy = 1
union all
select 'union', 'union', instance_id, instance_id, null, 'repair', false, count(*)
from training
where role = 'repair'
group by instance_id
union all
select 'union', 'view', view_id, instance_id, pool, role, true, 1
from training
where role = 'recovery'
