-- refine_removed_examples_v1: the example ids behind each removal count of
-- refine_removals_v1 (drill-down of the HTML report, SPEC §2.3).
-- Grain key: version, example_id.
-- Grain: one row per removed example of a refined corpus version, OUTSIDE the sealed test
-- window: an example whose window is sealed, or whose content is kept in the sealed
-- companion (sealed_content), is counted by refine_removals_v1 but never listed here
-- (SPEC §1.6), so a group here may hold fewer ids than the count it explains.
-- Columns: version; org; reason (the first rule that removed it: service_account,
--   rebase_successor, suggested_edit, applied_fix, duplicate); example_id; window_name
--   (the window holding its created_at; null when none does). No content (hunk, target,
--   comments), no author, and not the kept twin of a duplicate (it may be sealed).
select
    r.version,
    r.org,
    r.removed_reason as reason,
    r.example_id,
    r.window_name
from refine_examples as r
where r.removed_reason is not null
  and not r.window_sealed
  and r.example_id not in (select example_id from sealed_content)
