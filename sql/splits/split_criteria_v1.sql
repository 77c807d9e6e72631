-- split_criteria_v1: the split criteria of an org for a version (SPEC §2.4).
-- Grain key: version, org.
-- Grain: one row per (version, org) with a computed split.
-- Columns:
--   train_a, train_b: training rows of registered half a / b;
--   size_floor: the smaller of them;
--   language_mix_ceiling: total variation distance between the halves' suffix mixes,
--     1/2 * sum over suffixes of |share_a - share_b| (0..1); null when a half has no
--     training rows (no mix to compare);
--   matched_suffix: the suffix with the largest smaller-half row count (ties by name),
--     with matched_rows_a / matched_rows_b; runner_up_suffix with its rows the same way;
--   target_in_comment_a / judged_a (and _b): training rows of the half with a target and
--     without a suggested edit whose target is in a comment, of all such rows (k of n);
--   no_information: the criteria computed on no information, each named with why (empty
--     when none): 'suffix' (no training row of either half has a file suffix, so the
--     language-mix ceiling is 0 and the matched suffix '' by construction), 'timestamps'
--     (no example of the org has a created time, so no window holds any), 'suggested_edits'
--     (no example of the org has a suggested edit, so every suggested-edit share is 0),
--     'targets' (no training row of either half has a target to judge for target_in_comment).
with runs as (
    select version, org from split_runs
),
sizes as (
    select
        r.version,
        r.org,
        count(s.example_id) filter (where s.is_training and s.half = 'a') as train_a,
        count(s.example_id) filter (where s.is_training and s.half = 'b') as train_b,
        count(s.example_id) filter (where s.is_training and s.half = 'a' and not e.suggested_edit
                                      and coalesce(e.has_target, true)) as judged_a,
        count(s.example_id) filter (where s.is_training and s.half = 'b' and not e.suggested_edit
                                      and coalesce(e.has_target, true)) as judged_b,
        count(s.example_id) filter (where s.is_training and s.half = 'a' and not e.suggested_edit
                                      and coalesce(e.has_target, true) and e.target_in_comment) as target_in_comment_a,
        count(s.example_id) filter (where s.is_training and s.half = 'b' and not e.suggested_edit
                                      and coalesce(e.has_target, true) and e.target_in_comment) as target_in_comment_b,
        count(s.example_id) filter (where s.is_training and s.half is not null and s.suffix <> '') as training_with_suffix
    from runs as r
    left join review_splits as s on s.version = r.version and s.org = r.org
    left join refine_examples as e on e.version = s.version and e.example_id = s.example_id
    group by r.version, r.org
),
org_info as (
    select
        r.version,
        r.org,
        count(x.example_id) filter (where x.created_at is not null) as with_time,
        count(e.example_id) filter (where e.suggested_edit) as with_suggested_edit
    from runs as r
    left join refine_examples as e on e.version = r.version and e.org = r.org
    left join review_examples as x on x.example_id = e.example_id
    group by r.version, r.org
),
sizes_info as (
    select
        s.*,
        list_concat(
            case when s.train_a + s.train_b > 0 and s.training_with_suffix = 0 then ['suffix'] else []::varchar[] end,
            case when i.with_time = 0 then ['timestamps'] else []::varchar[] end,
            case when i.with_suggested_edit = 0 then ['suggested_edits'] else []::varchar[] end,
            case when s.judged_a + s.judged_b = 0 then ['targets'] else []::varchar[] end
        ) as no_information
    from sizes as s
    join org_info as i using (version, org)
),
mix as (
    select
        version,
        org,
        suffix,
        coalesce(max(rows) filter (where half = 'a'), 0) as rows_a,
        coalesce(max(rows) filter (where half = 'b'), 0) as rows_b,
        coalesce(max(share) filter (where half = 'a'), 0) as share_a,
        coalesce(max(share) filter (where half = 'b'), 0) as share_b
    from half_suffix_mix_v1
    group by version, org, suffix
),
tv as (
    select version, org, 0.5 * sum(abs(share_a - share_b)) as tv from mix group by version, org
),
ranked as (
    select *, row_number() over (partition by version, org order by least(rows_a, rows_b) desc, suffix) as place
    from mix
)
select
    s.version,
    s.org,
    s.train_a,
    s.train_b,
    least(s.train_a, s.train_b) as size_floor,
    case when s.train_a > 0 and s.train_b > 0 then tv.tv end as language_mix_ceiling,
    m1.suffix as matched_suffix,
    m1.rows_a as matched_rows_a,
    m1.rows_b as matched_rows_b,
    m2.suffix as runner_up_suffix,
    m2.rows_a as runner_up_rows_a,
    m2.rows_b as runner_up_rows_b,
    s.target_in_comment_a,
    s.judged_a,
    s.target_in_comment_b,
    s.judged_b,
    s.no_information
from sizes_info as s
left join tv using (version, org)
left join ranked as m1 on m1.version = s.version and m1.org = s.org and m1.place = 1
left join ranked as m2 on m2.version = s.version and m2.org = s.org and m2.place = 2
