-- target_in_comment_v2: examples whose target a reviewer typed into a comment (SPEC §2.2,
-- reported, never removed). The target, whitespace-normalized per line and at least the
-- version's min_target_chars characters (default 20), occurs verbatim in the same
-- normalization of a kept comment. Judged: examples WITH a target (an empty one, a
-- deletion, counts as a target that is never quoted) and WITHOUT a suggested edit;
-- examples without a target (e.g. Gerrit query output, which holds no code) are not
-- judged and are counted apart, so a share of 0 over them is never printed.
-- Grain key: version, org.
-- Grain: one row per (version, org), plus one row per version with org = '(all)'.
-- Columns: min_target_chars; examples (built); not_judged_no_target (examples without a
--   target); not_judged_suggested_edit (with a target and a suggested edit); judged (the
--   rest); target_in_comment (of those); share (0..1, null when none is judged);
--   judged_kept and target_in_comment_kept (the same among examples the version keeps).
-- Versions refined before migration 0012 recorded no has_target: all their examples count
-- as having one (as they were judged then).
-- Same rows as target_in_comment_v1, written without DuckDB's `* replace (...)` (Spark SQL
-- has no star REPLACE), so it runs on Spark too (README "Beyond one machine").
with examples as (
    select
        r.version,
        r.org,
        coalesce(r.has_target, true) as has_target,
        r.suggested_edit,
        r.target_in_comment,
        r.kept
    from refine_examples as r
)
select
    r.version,
    coalesce(r.org, '(all)') as org,
    any_value(v.min_target_chars) as min_target_chars,
    count(*) as examples,
    count(*) filter (where not r.has_target) as not_judged_no_target,
    count(*) filter (where r.has_target and r.suggested_edit) as not_judged_suggested_edit,
    count(*) filter (where r.has_target and not r.suggested_edit) as judged,
    count(*) filter (where r.has_target and not r.suggested_edit and r.target_in_comment) as target_in_comment,
    count(*) filter (where r.has_target and not r.suggested_edit and r.target_in_comment)
        / nullif(count(*) filter (where r.has_target and not r.suggested_edit), 0) as share,
    count(*) filter (where r.has_target and not r.suggested_edit and r.kept) as judged_kept,
    count(*) filter (where r.has_target and not r.suggested_edit and r.kept and r.target_in_comment) as target_in_comment_kept
from examples as r
join corpus_versions as v using (version)
group by grouping sets ((r.version, r.org), (r.version))
