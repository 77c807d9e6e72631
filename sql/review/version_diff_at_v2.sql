-- version_diff_at_v2(version_a, version_b): what changed between two corpus versions, per org
-- (`sphragis diff --version A --version B`; a stock DuckDB client calls
-- `select * from version_diff_at_v2('v2', 'v3')`).
-- Same rows as version_diff_at_v1; v2 names its first two columns version_a and version_b (v1's
-- took the argument expressions as names, e.g. CAST('v2' AS VARCHAR), in CSV headers too).
-- Parameters: version_a VARCHAR (the earlier, "from"); version_b VARCHAR (the later, "to").
-- Grain key: org.
-- Grain: one row per org present in either version, plus one row with org = '(all)'.
-- Columns: version_a, version_b (the arguments); then counts of examples:
--   built_a, built_b (examples each version judged); kept_a, kept_b;
--   removed (kept by A, judged and not kept by B); resurrected (judged and not kept by A,
--   kept by B); added (kept by B, absent from A: loaded after A was refined);
--   dropped (kept by A, absent from B);
--   reason_changed (removed by both, under different reasons);
--   split_moved (kept by both, in a split in both, in different splits); half_moved (kept
--   by both, in a split in both, in different registered halves);
--   reconciles (kept_a - removed + resurrected + added - dropped = kept_b).
-- When A is B's base version, removed, resurrected and added equal reconciliation_v1's
-- for B summed over windows.
create or replace macro version_diff_at_v2(version_a varchar, version_b varchar) as table
with a as (
    select r.example_id, r.org, r.kept, r.removed_reason, s.split, s.half, s.example_id is not null as in_split
    from refine_examples as r
    left join review_splits as s on s.version = r.version and s.example_id = r.example_id
    where r.version = version_a
),
b as (
    select r.example_id, r.org, r.kept, r.removed_reason, s.split, s.half, s.example_id is not null as in_split
    from refine_examples as r
    left join review_splits as s on s.version = r.version and s.example_id = r.example_id
    where r.version = version_b
),
pairs as (
    select
        coalesce(a.org, b.org) as org,
        a.example_id is not null as in_a,
        b.example_id is not null as in_b,
        coalesce(a.kept, false) as kept_a,
        coalesce(b.kept, false) as kept_b,
        a.removed_reason as reason_a,
        b.removed_reason as reason_b,
        coalesce(a.in_split and b.in_split, false) as split_both,
        a.split as split_a,
        b.split as split_b,
        a.half as half_a,
        b.half as half_b
    from a
    full outer join b on b.example_id = a.example_id
),
counted as (
    select
        coalesce(org, '(all)') as org,
        count(*) filter (where in_a) as built_a,
        count(*) filter (where in_b) as built_b,
        count(*) filter (where kept_a) as kept_a,
        count(*) filter (where kept_b) as kept_b,
        count(*) filter (where kept_a and in_b and not kept_b) as removed,
        count(*) filter (where in_a and not kept_a and kept_b) as resurrected,
        count(*) filter (where kept_b and not in_a) as added,
        count(*) filter (where kept_a and not in_b) as dropped,
        count(*) filter (where in_a and in_b and not kept_a and not kept_b and reason_a <> reason_b) as reason_changed,
        count(*) filter (where kept_a and kept_b and split_both and split_a <> split_b) as split_moved,
        count(*) filter (where kept_a and kept_b and split_both and half_a is distinct from half_b) as half_moved
    from pairs
    group by grouping sets ((org), ())
)
select
    version_a as version_a,
    version_b as version_b,
    *,
    kept_a - removed + resurrected + added - dropped = kept_b as reconciles
from counted
