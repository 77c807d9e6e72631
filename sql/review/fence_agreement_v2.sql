-- fence_agreement_v2: how the strict suggestion-fence rule agrees with the two report-only
-- selectors (SPEC §2.2): Gerrit's substring test and the loose case-insensitive pattern;
-- structured suggested fixes (Gerrit's fix_suggestions) counted apart.
-- Grain key: version, org.
-- Grain: one row per (version, org), plus one row per version with org = '(all)'.
-- Columns (counts of built examples, judged on their kept comments):
--   examples; suggestion_rule (the strict rule's version, e.g. fence-2);
--   suggested_edit (the removal rule: strict fence or structured suggestion);
--   strict (a strict fence); structured (a structured suggested fix);
--   structured_only (structured, no strict fence); gerrit_substring; loose;
--   strict_not_gerrit, gerrit_not_strict, strict_not_loose, loose_not_strict (disagreements
--   among fences); agree (true when the three fence selectors select exactly the same examples).
-- Versions refined before migration 0012 stored no separate fence verdict: their
-- suggested_edit was the strict fence alone.
-- Same rows as fence_agreement_v1, written without DuckDB's `* replace (...)` (Spark SQL
-- has no star REPLACE), so it runs on Spark too (README "Beyond one machine").
with examples as (
    select
        r.version,
        r.org,
        r.suggested_edit,
        coalesce(r.fence_strict, r.suggested_edit) as fence_strict,
        r.structured_suggestion,
        r.fence_gerrit,
        r.fence_loose,
        v.suggestion_rule
    from refine_examples as r
    join corpus_versions as v using (version)
)
select
    version,
    coalesce(org, '(all)') as org,
    count(*) as examples,
    any_value(suggestion_rule) as suggestion_rule,
    count(*) filter (where suggested_edit) as suggested_edit,
    count(*) filter (where fence_strict) as strict,
    count(*) filter (where structured_suggestion) as structured,
    count(*) filter (where structured_suggestion and not fence_strict) as structured_only,
    count(*) filter (where fence_gerrit) as gerrit_substring,
    count(*) filter (where fence_loose) as loose,
    count(*) filter (where fence_strict and not fence_gerrit) as strict_not_gerrit,
    count(*) filter (where fence_gerrit and not fence_strict) as gerrit_not_strict,
    count(*) filter (where fence_strict and not fence_loose) as strict_not_loose,
    count(*) filter (where fence_loose and not fence_strict) as loose_not_strict,
    count(*) filter (where fence_strict <> fence_gerrit or fence_strict <> fence_loose) = 0 as agree
from examples
group by grouping sets ((version, org), (version))
