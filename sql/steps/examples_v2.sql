-- refine step 2 (v2, issue 28): example verdicts and removal attribution of one corpus version
-- (SPEC §2.2).
-- Parameters: $1 version name; $2..$7 whether the rules service_account, robot_comment,
-- rebase_successor, suggested_edit, applied_fix and duplicate are on (booleans).
-- An example left with no kept comment is removed as robot_comment when robots wrote its
-- dropped comments and no service account did, else as service_account.
-- suggested_edit: a kept comment opens a strict suggestion fence (fence_strict, rule version
-- corpus_versions.suggestion_rule) or carries a structured suggested fix (structured_suggestion).
-- Each removed example is attributed to the FIRST rule that removes it, in that order.
-- Dedup runs after the other rules: among the survivors with the same org and dedup key,
-- the earliest (created_at, then example_id) is kept; a kept example with an earlier twin
-- that a rule removed is 'resurrected'. Examples without a hunk or target are not deduped.
-- The org's registration (windows, halves) is copied onto every row, so later orgs files
-- change no figure of this version. Hunks and targets are read through the temporary view
-- review_examples_content (sealed examples' content from the companion database).
insert into refine_examples
with kept_comments as (
    select * from refine_comments where version = $1
),
agg as (
    select
        e.example_id,
        e.org,
        e.created_at,
        e.hunk,
        e.target,
        e.target is not null as has_target,
        coalesce(e.revision_kind in ('TRIVIAL_REBASE', 'NO_CODE_CHANGE'), false)
            or e.predecessor_id is not null as rebase_successor,
        count(c.comment_id) as comments_built,
        count(c.comment_id) filter (where not c.dropped) as comments_kept,
        count(c.comment_id) filter (where c.service_account) as service_comments,
        count(c.comment_id) filter (where c.robot_comment) as robot_comments,
        coalesce(bool_or(c.fence_strict or c.structured_suggestion) filter (where not c.dropped), false) as suggested_edit,
        coalesce(bool_or(c.structured_suggestion) filter (where not c.dropped), false) as structured_suggestion,
        coalesce(bool_or(c.fence_strict) filter (where not c.dropped), false) as fence_strict,
        count(c.comment_id) filter (where c.host_message) as host_messages,
        coalesce(bool_or(c.fence_gerrit) filter (where not c.dropped), false) as fence_gerrit,
        coalesce(bool_or(c.fence_loose) filter (where not c.dropped), false) as fence_loose,
        coalesce(bool_or(c.fix_applied) filter (where not c.dropped), false) as applied_fix,
        coalesce(bool_or(c.target_quoted) filter (where not c.dropped), false) as target_in_comment
    from review_examples_content as e
    left join kept_comments as c on c.example_id = e.example_id
    group by all
),
ruled as (
    select
        *,
        case
            when $3 and comments_kept = 0 and robot_comments > 0 and service_comments = 0 then 'robot_comment'
            when $2 and comments_kept = 0 then 'service_account'
            when $4 and rebase_successor then 'rebase_successor'
            when $5 and suggested_edit then 'suggested_edit'
            when $6 and applied_fix then 'applied_fix'
        end as rule_reason,
        case
            when hunk is not null and target is not null then sha256(sph_dedup_key(hunk, target))
        end as dedup_key
    from agg
),
ranked as (
    select
        *,
        row_number() over twins as twin_pos,
        first_value(example_id) over (
            partition by org, dedup_key, rule_reason is null
            order by created_at asc nulls last, example_id
        ) as first_survivor
    from ruled
    window twins as (partition by org, dedup_key order by created_at asc nulls last, example_id)
),
twinned as (
    select
        *,
        min(case when rule_reason is not null then twin_pos end) over (partition by org, dedup_key) as first_removed_pos
    from ranked
),
decided as (
    select
        *,
        $7 and dedup_key is not null and rule_reason is null and first_survivor <> example_id as is_duplicate
    from twinned
)
select
    $1 as version,
    d.example_id,
    d.org,
    d.comments_built,
    d.comments_kept,
    d.service_comments,
    d.rebase_successor,
    d.suggested_edit,
    d.fence_gerrit,
    d.fence_loose,
    d.applied_fix,
    d.target_in_comment,
    d.dedup_key,
    coalesce(rule_reason, case when is_duplicate then 'duplicate' end) as removed_reason,
    case when is_duplicate then first_survivor end as duplicate_of,
    coalesce($7 and rule_reason is null and not is_duplicate and dedup_key is not null
             and first_removed_pos < twin_pos, false) as resurrected,
    rule_reason is null and not is_duplicate as kept,
    cfg.file_id as registration_file_id,
    exists (select 1 from org_windows as ow where ow.org = d.org) as registered_windows,
    (select count(distinct oh.half) from org_halves as oh where oh.org = d.org) = 2 as registered_halves,
    w.window_name,
    coalesce(w.sealed, false) as window_sealed,
    coalesce(w.is_training, false) as window_training,
    h.half,
    d.structured_suggestion,
    d.host_messages,
    d.fence_strict,
    d.has_target,
    d.robot_comments
from decided as d
join review_examples as e on e.example_id = d.example_id
left join org_config as cfg on cfg.org = d.org
left join org_windows as w on w.org = d.org and e.created_at >= w.starts_at and e.created_at < w.ends_at
left join org_halves as h on h.org = d.org and h.project = e.project
