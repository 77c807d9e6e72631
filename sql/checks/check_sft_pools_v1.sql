-- check_sft_pools_v1: the SFT pool audit's faults as checks (issue 26; SPEC §3.3, §3.4),
-- each read from the view that shows it.
-- Grain key: check_name, scope.
-- Grain: one row per (check, pool) for the per-pool checks, one row per check for the
--   corpus-wide ones; with no SFT view loaded (or, for a check that needs them, no
--   recovery pool / protected list / segments), one row per check, not run, with the reason.
-- Checks (severity; default condition; the view it reads):
--   header_only_supervision (warn; failing > 0; sft_assistant_supervision_v1): assistant
--     messages supervised only inside their role header, of all assistant messages;
--   mask_conventions_disagree (warn; failing > 0; sft_views.mask_source): views of the pool
--     whose mask convention (loss_mask, assistant_masks, labels, labels_shifted) is not the
--     pool's most common one (on a tie, every view but those of one convention), of its views;
--   segment_pattern_deviation (warn; failing > 0; sft_segment_deviations_v2): views whose
--     segment supervision differs from the pool's majority pattern or where the pool has
--     none, of the pool's views with known segments (not run: loaded without --tokenizer);
--   end_of_turn_never_trained (error; failing > 0; sft_segment_patterns_v2): views that never
--     supervise the end-of-turn token of a trained assistant message (a model trained on
--     them is never taught to stop), of the views with a pattern for it;
--   duplicate_supervised_positions (warn; failing > 0; sft_dedup_v1 mode none): supervised
--     positions trained more than once across the training views before dedup (exposure -
--     unique positions), of the exposure;
--   recovery_concentration (warn; share > 0.5; sft_recovery_concentration_v1, k = 3): the
--     recovery pool's supervised tokens held by its 3 longest views, of all its supervised
--     tokens (not run with no recovery pool, or 3 views or fewer);
--   protected_family_in_training (error; failing > 0; sft_training_views_v1, family list):
--     training views of a protected family (a held-out benchmark's repository), of the
--     pool's training views (not run without a protected list);
--   family_undetermined (warn; failing > 0): training views whose family neither the data
--     nor the id's scheme names, so isolation cannot be proven for them (with a protected list);
--   outcome_infra_failures (warn; failing > 0; sft_instances_v2): evaluator reports of the
--     corpus's instances (with a view or a trajectory) that say the environment broke
--     (`infra_failure`, SWE-bench PR #594), of the reports: left out of resolved and
--     unresolved, to be re-graded (not run: no report loaded). One row, scope corpus.
-- Columns: the check columns (check_findings_at_v1).
with views as (
    select * from sft_views
),
pools as (
    select distinct pool from views
),
q(pool, q) as (
    select pool, replace(pool, '''', '''''') from pools
),
header_only as (
    select 'header_only_supervision' as check_name, 'warn' as severity, 'pool=' || pool as scope,
           count(*)::bigint as tested, count(*) filter (where finding = 'header_only')::bigint as failing,
           null::varchar as error_if, 'failing > 0' as warn_if, null::varchar as reason, null::varchar as detail,
           format('select * from sft_assistant_supervision_v1 where pool = ''{}'' and finding = ''header_only''',
                  any_value(q.q)) as drill_down
    from sft_assistant_supervision_v1 join q using (pool)
    group by pool
),
conventions as (
    select pool, mask_source, count(*) as views from views group by pool, mask_source
),
mask_conventions as (
    select 'mask_conventions_disagree', 'warn', 'pool=' || pool,
           sum(views)::bigint, (sum(views) - max(views))::bigint,
           null, 'failing > 0', null,
           string_agg(mask_source || ' ' || views, ', ' order by views desc, mask_source),
           format('select mask_source, count(*) as views from sft_views where pool = ''{}'' group by mask_source',
                  any_value(q.q))
    from conventions join q using (pool)
    group by pool
),
segmented as (
    select v.pool, count(*) as views
    from views as v join sft_segment_files as f using (file_id)
    group by v.pool
),
deviating as (
    select pool, count(distinct view_id) as views
    from sft_segment_deviations_v2
    where finding in ('deviates', 'no_majority')
    group by pool
),
segment_deviation as (
    select 'segment_pattern_deviation', 'warn', 'pool=' || p.pool,
           s.views::bigint, case when s.views > 0 then coalesce(d.views, 0) end::bigint,
           null, 'failing > 0',
           case when s.views is null then 'segments unknown: loaded without --tokenizer (views segments --tokenizer T)' end,
           null,
           format('select * from sft_segment_deviations_v2 where pool = ''{}'' and finding <> ''segments_unknown''', q.q)
    from pools as p join q using (pool)
    left join segmented as s using (pool)
    left join deviating as d using (pool)
),
end_of_turn as (
    select 'end_of_turn_never_trained', 'error', 'pool=' || p.pool,
           (e.always_views + e.never_views + e.partly_views)::bigint,
           case when e.pool is not null then e.never_views end::bigint,
           'failing > 0', null,
           case when s.views is null then 'segments unknown: loaded without --tokenizer (views segments --tokenizer T)'
                when e.pool is null then 'no trained assistant message has an end-of-turn segment' end,
           null,
           format('select * from sft_segment_supervision_v2 where pool = ''{}'' and role = ''assistant'' and segment = ''end_of_turn'' and pattern = ''never''', q.q)
    from pools as p join q using (pool)
    left join segmented as s using (pool)
    left join (select * from sft_segment_patterns_v2 where role = 'assistant' and segment = 'end_of_turn') as e using (pool)
),
duplicates as (
    select 'duplicate_supervised_positions', 'warn', 'training pools',
           case when views > 0 then exposure end::bigint,
           case when views > 0 then exposure - unique_positions end::bigint,
           null, 'failing > 0',
           case when views = 0 then 'no training views (every pool is report-only)' end,
           format('{} supervised positions over {} training views, {} distinct', exposure, views, unique_positions),
           'select * from sft_position_exposure_v1 where exposure > 1'
    from sft_dedup_v1
    where mode = 'none' and exists (select 1 from views)
),
concentration as (
    select 'recovery_concentration', 'warn', 'recovery pools',
           case when views > 3 then supervised end::bigint,
           case when views > 3 then top_k_supervised end::bigint,
           null, 'share > 0.5',
           case when views = 0 then 'no pool has the role recovery (roles in load pools FILE)'
                when views <= 3 then format('{} recovery views: the 3 longest hold everything', views) end,
           format('the 3 longest of {} recovery views', views),
           'select * from sft_recovery_concentration_v1'
    from sft_recovery_concentration_v1
    where k = 3 and exists (select 1 from views)
),
training as (
    select t.pool, t.view_id, v.family, f.family is not null as protected
    from sft_training_views_v1 as t
    join views as v using (view_id)
    left join sft_protected_families as f on f.family = v.family
),
listed as (
    select exists (select 1 from sft_protected_families) as has_list
),
isolation as (
    select 'protected_family_in_training', 'error', 'pool=' || p.pool,
           case when l.has_list then count(t.view_id) end::bigint,
           case when l.has_list then count(t.view_id) filter (where t.protected) end::bigint,
           'failing > 0', null,
           case when not l.has_list then 'no protected family list loaded (protected_families in load manifest FILE)'
                when count(t.view_id) = 0 then 'the pool is report-only: no training views' end,
           string_agg(distinct t.family, ', ' order by t.family) filter (where t.protected),
           format('select v.view_id, v.pool, v.instance_id, v.family from sft_views as v join sft_protected_families as f using (family) where v.pool = ''{}''', any_value(q.q))
    from pools as p join q using (pool) cross join listed as l
    left join training as t using (pool)
    group by p.pool, l.has_list
),
undetermined as (
    select 'family_undetermined', 'warn', 'pool=' || p.pool,
           case when l.has_list then count(t.view_id) end::bigint,
           case when l.has_list then count(t.view_id) filter (where t.family is null) end::bigint,
           null, 'failing > 0',
           case when not l.has_list then 'no protected family list loaded (protected_families in load manifest FILE)'
                when count(t.view_id) = 0 then 'the pool is report-only: no training views' end,
           null,
           format('select view_id, pool, instance_id from sft_views where family is null and pool = ''{}''', any_value(q.q))
    from pools as p join q using (pool) cross join listed as l
    left join training as t using (pool)
    group by p.pool, l.has_list
),
reports as (
    select o.* from sft_outcomes as o
    where o.instance_id in (select instance_id from sft_views union select instance_id from sft_trajectories)
),
infra as (
    select 'outcome_infra_failures', 'warn', 'corpus',
           case when count(*) > 0 then count(*) end::bigint,
           case when count(*) > 0 then count(*) filter (where infra_failure) end::bigint,
           null, 'failing > 0',
           case when count(*) = 0
                then 'no evaluator report of an instance with a view or a trajectory loaded (load outcomes report.json)' end,
           case when count(*) filter (where infra_failure) > 0
                then 'left out of resolved and unresolved (sft_instances_v2.outcome = ''infra failure''); re-grade them' end,
           'select instance_id, outcome, infra_failure_reason from sft_instances_v2 where outcome = ''infra failure'''
    from reports
),
found as (
    select * from header_only
    union all select * from mask_conventions
    union all select * from segment_deviation
    union all select * from end_of_turn
    union all select * from duplicates
    union all select * from concentration
    union all select * from isolation
    union all select * from undetermined
    union all select * from infra
),
absent as (
    select name, severity, 'corpus', null::bigint, null::bigint, error_if, warn_if,
           'no SFT views loaded (load views FILE)', null::varchar, null::varchar
    from (values ('header_only_supervision', 'warn', null, 'failing > 0'),
                 ('mask_conventions_disagree', 'warn', null, 'failing > 0'),
                 ('segment_pattern_deviation', 'warn', null, 'failing > 0'),
                 ('end_of_turn_never_trained', 'error', 'failing > 0', null),
                 ('duplicate_supervised_positions', 'warn', null, 'failing > 0'),
                 ('recovery_concentration', 'warn', null, 'share > 0.5'),
                 ('protected_family_in_training', 'error', 'failing > 0', null),
                 ('family_undetermined', 'warn', null, 'failing > 0')) as c(name, severity, error_if, warn_if)
    where not exists (select 1 from views)
),
checks as (
    select * from found
    union all
    select * from absent
)
select check_name, 'sft' as area, severity, scope, tested, failing, error_if, warn_if, reason, detail, drill_down
from checks
