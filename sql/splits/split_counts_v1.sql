-- split_counts_v1: frozen counts per split (SPEC §2.4).
-- Grain key: version, org, split.
-- Grain: one row per (version, org, split) that has a computed split. Counts the rows of
-- the sealed test window (counts only, never content).
-- Columns: version; org; split (window name, '(none)' for examples outside every window);
--   sealed (the split is the sealed window); is_training; examples (kept examples in it).
select
    version,
    org,
    split,
    bool_or(sealed) as sealed,
    bool_or(is_training) as is_training,
    count(*) as examples
from review_splits
group by version, org, split
