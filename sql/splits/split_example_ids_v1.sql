-- split_example_ids_v1: the example ids behind the counts of split_counts_v1 (kept examples
-- per split) and split_criteria_v1 (training rows per registered half): drill-down of the
-- HTML report (SPEC §2.4).
-- Grain key: version, example_id.
-- Grain: one row per (version, example) placed by a split (review_splits) OUTSIDE the sealed
-- test window: a row of the sealed window, or an example whose content is kept in the sealed
-- companion (sealed_content), is counted by split_counts_v1 but never listed here (SPEC §1.6).
-- Columns: version; org; split (window name, '(none)' for examples outside every window);
--   half (registered half 'a' or 'b'; null when the example's project is in neither);
--   is_training (in the org's training window); example_id. No content (hunk, target,
--   comments) and no author.
select
    s.version,
    s.org,
    s.split,
    s.half,
    s.is_training,
    s.example_id
from review_splits as s
where not s.sealed
  and s.example_id not in (select example_id from sealed_content)
