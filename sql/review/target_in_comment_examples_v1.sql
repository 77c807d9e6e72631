-- target_in_comment_examples_v1: the example ids behind the target_in_comment counts of
-- target_in_comment_v2 (SPEC §2.2: reported, never removed): judged examples (with a
-- target, without a suggested edit) whose target a reviewer typed into a kept comment.
-- Drill-down of the HTML report.
-- Grain key: version, example_id.
-- Grain: one row per (version, such example) OUTSIDE the sealed test window: an example
-- whose window is sealed, or whose content is kept in the sealed companion (sealed_content),
-- is counted by target_in_comment_v2 but never listed here (SPEC §1.6).
-- Columns: version; org; kept (the version keeps the example: the target_in_comment_kept
--   count); example_id. Ids only: never the target or the comment that holds it, never an
--   author.
select
    r.version,
    r.org,
    r.kept,
    r.example_id
from refine_examples as r
where coalesce(r.has_target, true)
  and not r.suggested_edit
  and r.target_in_comment
  and not r.window_sealed
  and r.example_id not in (select example_id from sealed_content)
