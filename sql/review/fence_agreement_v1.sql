-- fence_agreement_v1: how the strict suggestion-fence rule agrees with the two report-only
-- selectors (SPEC §2.2): Gerrit's substring test and the loose case-insensitive pattern.
-- Grain key: version, org.
-- Grain: one row per (version, org), plus one row per version with org = '(all)'.
-- Columns (counts of built examples, judged on their kept comments):
--   examples; strict (the removal rule); gerrit_substring; loose;
--   strict_not_gerrit, gerrit_not_strict, strict_not_loose, loose_not_strict (disagreements);
--   agree (true when all three select exactly the same examples).
select
    version,
    coalesce(org, '(all)') as org,
    count(*) as examples,
    count(*) filter (where suggested_edit) as strict,
    count(*) filter (where fence_gerrit) as gerrit_substring,
    count(*) filter (where fence_loose) as loose,
    count(*) filter (where suggested_edit and not fence_gerrit) as strict_not_gerrit,
    count(*) filter (where fence_gerrit and not suggested_edit) as gerrit_not_strict,
    count(*) filter (where suggested_edit and not fence_loose) as strict_not_loose,
    count(*) filter (where fence_loose and not suggested_edit) as loose_not_strict,
    count(*) filter (where suggested_edit <> fence_gerrit or suggested_edit <> fence_loose) = 0 as agree
from refine_examples
group by grouping sets ((version, org), (version))
