-- fence_disagreement_examples_v1: the example ids behind the disagreement counts of
-- fence_agreement_v2 (SPEC §2.2): where the strict suggestion-fence rule and a report-only
-- selector (Gerrit's substring test, the loose pattern) disagree, and the structured
-- suggested fixes without a strict fence. Drill-down of the HTML report.
-- Grain key: version, disagreement, example_id.
-- Grain: one row per (version, disagreement, built example) OUTSIDE the sealed test window:
-- an example whose window is sealed, or whose content is kept in the sealed companion
-- (sealed_content), is counted by fence_agreement_v2 but never listed here (SPEC §1.6).
-- Columns: version; org; disagreement (the fence_agreement_v2 column it explains:
--   strict_not_gerrit, gerrit_not_strict, strict_not_loose, loose_not_strict,
--   structured_only); example_id. Verdicts as fence_agreement_v2 reads them (a version
--   refined before migration 0012 has its suggested_edit as the strict fence). No content,
--   no author.
with examples as (
    select
        r.version,
        r.org,
        r.example_id,
        coalesce(r.fence_strict, r.suggested_edit) as fence_strict,
        r.structured_suggestion,
        r.fence_gerrit,
        r.fence_loose
    from refine_examples as r
    where not r.window_sealed
      and r.example_id not in (select example_id from sealed_content)
)
select version, org, 'strict_not_gerrit' as disagreement, example_id
from examples where fence_strict and not fence_gerrit
union all
select version, org, 'gerrit_not_strict', example_id
from examples where fence_gerrit and not fence_strict
union all
select version, org, 'strict_not_loose', example_id
from examples where fence_strict and not fence_loose
union all
select version, org, 'loose_not_strict', example_id
from examples where fence_loose and not fence_strict
union all
select version, org, 'structured_only', example_id
from examples where structured_suggestion and not fence_strict
