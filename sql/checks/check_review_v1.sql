-- check_review_v1: the review corpus's faults as checks (issue 26; SPEC §2.2-2.4), each
-- read from the view or table that shows it.
-- Grain key: check_name, scope.
-- Grain: one row per (check, version and org / window / rater / frozen version); with no
--   corpus version refined, one row per check with scope 'corpus', not run.
-- Checks (severity; default condition; the view it reads):
--   suggested_edit_kept (error; failing > 0; refine_examples): examples the version keeps
--     whose comments carry a suggested edit (strict fence or structured fix), of its kept
--     examples, per version, org and window (sealed windows counted, never shown): their
--     target is the reviewer's edit, which the prompt already holds (test-window
--     contamination in a later window); detail: the window's suggested-edit share of built
--     examples and its ratio to the training window's (suggested_edit_share_v1); the
--     drill-down of a sealed window counts, it never lists the window's ids (SPEC §1.6);
--   robot_comments_kept (error; failing > 0; refine_comments): examples the version keeps
--     whose prompt holds a robot comment (an analyzer's finding, Gerrit robot comments, kept
--     because the robot_comment rule was off), of its kept examples, per version and org:
--     a robot is never a human reviewer (not run: the version was refined before robot
--     comments were told apart); detail: the robot comments kept and the org's robot share
--     of built comments (refine_removals_v2);
--   target_in_comment_kept (warn; share > 0.05; target_in_comment_v2): kept examples whose
--     target a reviewer typed into a comment, of the kept examples judged;
--   reconciliation (error; failing > 0; reconciliation_v1): windows of a version whose
--     counts do not reconcile with its base version, of its windows (not run: no version
--     names a base version);
--   fence_selectors_disagree (info; failing > 0; fence_disagreement_examples_v1): examples
--     on which the strict fence rule and the report-only selectors (Gerrit's substring
--     test, the loose pattern) disagree, of the built examples (open windows);
--   label_audit_valid_share (warn; share > 0.3; label_audit_v1, scope 'kept by version'):
--     items rated not valid, of the items the version keeps, per rater (not run: no
--     label-audit items, or none of an example the version keeps);
--   label_items_unknown_example (warn; failing > 0; label_items, review_examples): label-audit
--     items whose example the corpus does not hold, of the loaded items (a sample drawn
--     from another corpus or build, or ids that changed since): label_audit_v1's 'all
--     scored' counts them, its 'kept by version' cannot (not run: no items, or no review
--     example loaded);
--   split_criteria_no_information (warn; failing > 0; split_criteria_v1): criteria computed
--     on no information (suffix, timestamps, suggested_edits, targets), of those 4, per
--     version and org with a split;
--   frozen_version_verifies (error; failing > 0; verifications): 1 when the latest
--     `verify --reproduce` of the frozen version found a difference (not run: never
--     verified since it was frozen);
--   frozen_orgs_left_out (warn; failing > 0; frozen_exclusions): orgs with kept examples that
--     the freeze left out, of the orgs with kept examples.
-- Columns: the check columns (check_findings_at_v1).
with versions as (
    select version, replace(version, '''', '''''') as qv from corpus_versions
),
kept_windows as (
    select r.version, r.org, coalesce(r.window_name, '(none)') as window_name,
           count(*) filter (where r.kept) as kept,
           count(*) filter (where r.kept and r.suggested_edit) as kept_suggested,
           bool_or(r.window_sealed) as sealed
    from refine_examples as r
    group by all
),
suggested as (
    select 'suggested_edit_kept' as check_name, 'error' as severity,
           format('version={} org={} window={}', k.version, k.org, k.window_name) as scope,
           k.kept::bigint as tested, k.kept_suggested::bigint as failing,
           'failing > 0' as error_if, null::varchar as warn_if,
           case when k.kept = 0 then 'the version keeps no example in this window' end as reason,
           case when s.share is not null
                then format('suggested-edit share of built examples {}{}', round(s.share, 4),
                            coalesce(format(', {}x the training window''s', round(s.ratio_to_training, 2)), ''))
           end as detail,
           format('select {} from refine_examples where version = ''{}'' and org = ''{}'' and coalesce(window_name, ''(none)'') = ''{}'' and kept and suggested_edit',
                  case when k.sealed then 'count(*) as kept_suggested_edits' else 'example_id, org, window_name' end,
                  v.qv, replace(k.org, '''', ''''''), replace(k.window_name, '''', '''''')) as drill_down
    from kept_windows as k
    join versions as v using (version)
    left join suggested_edit_share_v1 as s using (version, org, window_name)
),
robots as (
    select 'robot_comments_kept', 'error', format('version={} org={}', r.version, r.org),
           r.kept::bigint,
           case when r.told_apart then r.kept_with_robot end::bigint, 'failing > 0', null,
           case when not r.told_apart
                then 'the version was refined before robot comments were told apart (refine a new version)'
                when r.kept = 0 then 'the version keeps no example of this org' end,
           case when r.told_apart
                then format('{} robot comments kept in prompts; robot share of built comments {}',
                            r.robot_comments_kept, coalesce(round(m.robot_share, 4)::varchar, 'n/a')) end,
           case when r.told_apart then
           format('select {} from refine_comments as c join refine_examples as e using (version, example_id) where c.version = ''{}'' and e.org = ''{}'' and e.kept and c.robot_comment and not c.dropped',
                  case when r.sealed then 'count(*) as kept_robot_comments' else 'c.example_id, c.comment_id' end,
                  v.qv, replace(r.org, '''', '''''')) end
    from (
        select e.version, e.org,
               count(*) filter (where e.kept) as kept,
               count(*) filter (where e.kept and exists (
                   select 1 from refine_comments as c
                   where c.version = e.version and c.example_id = e.example_id and c.robot_comment and not c.dropped))
                   as kept_with_robot,
               (select count(*) from refine_comments as c join refine_examples as k using (version, example_id)
                 where c.version = e.version and k.org = e.org and k.kept and c.robot_comment and not c.dropped)
                   as robot_comments_kept,
               bool_and(e.robot_comments is not null) as told_apart,
               bool_or(e.window_sealed) as sealed
        from refine_examples as e
        group by e.version, e.org
    ) as r
    join versions as v using (version)
    left join refine_removals_v2 as m on m.version = r.version and m.org = r.org
),
quoted as (
    select 'target_in_comment_kept', 'warn', format('version={} org={}', t.version, t.org),
           t.judged_kept::bigint, t.target_in_comment_kept::bigint, null, 'share > 0.05',
           case when t.judged_kept = 0 then 'no kept example has a target to judge' end,
           format('min_target_chars {}', t.min_target_chars),
           format('select * from target_in_comment_examples_v1 where version = ''{}'' and org = ''{}''',
                  v.qv, replace(t.org, '''', ''''''))
    from target_in_comment_v2 as t join versions as v using (version)
    where t.org <> '(all)'
),
reconciled as (
    select 'reconciliation', 'error', format('version={} org={}', r.version, r.org),
           count(*)::bigint, count(*) filter (where not r.reconciles)::bigint, 'failing > 0', null, null,
           format('against {}', any_value(r.base_version)),
           format('select * from reconciliation_v1 where version = ''{}'' and org = ''{}'' and not reconciles',
                  any_value(v.qv), replace(r.org, '''', ''''''))
    from reconciliation_v1 as r join versions as v using (version)
    group by r.version, r.org
),
no_base as (
    select 'reconciliation', 'error', 'version=' || c.version, null::bigint, null::bigint, 'failing > 0', null,
           'the version names no base version to reconcile with (refine --base B)', null, null
    from corpus_versions as c
    where c.base_version is null
),
fences as (
    select 'fence_selectors_disagree', 'info', format('version={} org={}', a.version, a.org),
           a.examples::bigint, coalesce(d.examples, 0)::bigint, null, 'failing > 0',
           case when a.examples = 0 then 'no built example in an open window' end,
           format('suggestion rule {}', a.suggestion_rule),
           format('select * from fence_disagreement_examples_v1 where version = ''{}'' and org = ''{}''',
                  v.qv, replace(a.org, '''', ''''''))
    from fence_agreement_v2 as a
    join versions as v using (version)
    left join (select version, org, count(distinct example_id) as examples
               from fence_disagreement_examples_v1 group by version, org) as d using (version, org)
    where a.org <> '(all)'
),
labels as (
    select 'label_audit_valid_share', 'warn', format('version={} rater={}', l.version, l.rater),
           l.n::bigint, (l.n - l.valid)::bigint, null, 'share > 0.3', null,
           format('valid share {} (Wilson 95% {} to {})', round(l.share, 4), round(l.wilson_low, 4), round(l.wilson_high, 4)),
           format('select * from label_audit_v1 where version = ''{}'' and rater = ''{}''', v.qv, replace(l.rater, '''', ''''''))
    from label_audit_v1 as l join versions as v using (version)
    where l.scope = 'kept by version'
),
no_labels as (
    select 'label_audit_valid_share', 'warn', 'version=' || version, null::bigint, null::bigint, null, 'share > 0.3',
           case when not exists (select 1 from label_items)
                then 'no label-audit item loaded (load labels FILE)'
                else format('none of the {} loaded label-audit items is of an example the version keeps',
                            (select count(*) from label_items)) end,
           null, null
    from corpus_versions
    where version not in (select version from label_audit_v1 where scope = 'kept by version')
),
label_matches as (
    select l.rater, e.example_id is not null as known
    from label_items as l
    left join review_examples as e using (example_id)
),
unknown_labels as (
    select 'label_items_unknown_example', 'warn', 'corpus',
           case when exists (select 1 from review_examples) then count(*) end::bigint,
           case when exists (select 1 from review_examples) then count(*) filter (where not known) end::bigint,
           null, 'failing > 0',
           case when not exists (select 1 from review_examples)
                then format('no review example loaded to match the {} label-audit items with (load examples FILE)', count(*)) end,
           case when exists (select 1 from review_examples)
                then format('{} of {} raters', count(distinct rater) filter (where not known), count(distinct rater)) end,
           'select l.* from label_items as l where l.example_id not in (select example_id from review_examples) order by l.file_id, l.record'
    from label_matches
    having count(*) > 0
),
criteria as (
    select 'split_criteria_no_information', 'warn', format('version={} org={}', c.version, c.org),
           4::bigint, len(c.no_information)::bigint, null, 'failing > 0', null,
           nullif(array_to_string(c.no_information, ', '), ''),
           format('select * from split_criteria_v1 where version = ''{}'' and org = ''{}''', v.qv, replace(c.org, '''', ''''''))
    from split_criteria_v1 as c join versions as v using (version)
),
latest_verification as (
    select version, arg_max(clean, verified_at) as clean, max(verified_at) as verified_at,
           arg_max(first_difference, verified_at) as first_difference
    from verifications
    group by version
),
verified as (
    select 'frozen_version_verifies', 'error', 'version=' || f.version,
           case when l.verified_at >= f.frozen_at then 1 end::bigint,
           case when l.verified_at >= f.frozen_at then case when l.clean then 0 else 1 end end::bigint,
           'failing > 0', null,
           case when l.verified_at is null or l.verified_at < f.frozen_at
                then format('never verified since frozen (sphragis verify --reproduce --version {})', f.version) end,
           case when l.verified_at >= f.frozen_at
                then format('verified {}{}', strftime(l.verified_at, '%Y-%m-%d %H:%M:%S'),
                            coalesce(': ' || l.first_difference, '')) end,
           format('select * from verifications where version = ''{}'' order by verified_at', replace(f.version, '''', ''''''))
    from frozen_versions as f
    left join latest_verification as l using (version)
),
left_out as (
    select 'frozen_orgs_left_out', 'warn', 'version=' || f.version,
           (select count(distinct org) from refine_examples as r where r.version = f.version and r.kept)::bigint,
           (select count(*) from frozen_exclusions as e where e.version = f.version)::bigint,
           null, 'failing > 0', null, f.selection,
           format('select * from frozen_exclusions where version = ''{}''', replace(f.version, '''', ''''''))
    from frozen_versions as f
),
found as (
    select * from suggested
    union all select * from robots
    union all select * from quoted
    union all select * from reconciled
    union all select * from no_base
    union all select * from fences
    union all select * from labels
    union all select * from no_labels
    union all select * from unknown_labels
    union all select * from criteria
    union all select * from verified
    union all select * from left_out
),
absent as (
    select name, severity, 'corpus', null::bigint, null::bigint, error_if, warn_if, reason, null::varchar, null::varchar
    from (values ('suggested_edit_kept', 'error', 'failing > 0', null, 'no corpus version refined (refine --version V)'),
                 ('robot_comments_kept', 'error', 'failing > 0', null, 'no corpus version refined (refine --version V)'),
                 ('target_in_comment_kept', 'warn', null, 'share > 0.05', 'no corpus version refined (refine --version V)'),
                 ('reconciliation', 'error', 'failing > 0', null, 'no corpus version refined (refine --version V)'),
                 ('fence_selectors_disagree', 'info', null, 'failing > 0', 'no corpus version refined (refine --version V)'),
                 ('label_audit_valid_share', 'warn', null, 'share > 0.3', 'no corpus version refined (refine --version V)'),
                 ('label_items_unknown_example', 'warn', null, 'failing > 0', 'no label-audit item loaded (load labels FILE)'),
                 ('split_criteria_no_information', 'warn', null, 'failing > 0', 'no split computed (split --version V)'),
                 ('frozen_version_verifies', 'error', 'failing > 0', null, 'no version frozen (freeze --version V)'),
                 ('frozen_orgs_left_out', 'warn', null, 'failing > 0', 'no version frozen (freeze --version V)'))
         as c(name, severity, error_if, warn_if, reason)
    where (name in ('suggested_edit_kept', 'robot_comments_kept', 'target_in_comment_kept', 'reconciliation', 'fence_selectors_disagree',
                    'label_audit_valid_share') and not exists (select 1 from corpus_versions))
       or (name = 'label_items_unknown_example' and not exists (select 1 from label_items))
       or (name = 'split_criteria_no_information' and not exists (select 1 from split_criteria_v1))
       or (name in ('frozen_version_verifies', 'frozen_orgs_left_out') and not exists (select 1 from frozen_versions))
)
select check_name, 'review' as area, severity, scope, tested, failing, error_if, warn_if, reason, detail, drill_down
from (select * from found union all select * from absent)
