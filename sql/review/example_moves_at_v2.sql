-- example_moves_at_v2(version_a, version_b): the examples whose verdict, split or half differs
-- between two corpus versions (`sphragis diff --version A --version B --examples`; a stock
-- DuckDB client calls `select * from example_moves_at_v2('v2', 'v3')`). Ids and verdicts
-- only, never content, so sealed examples are listed like any other.
-- Same rows as example_moves_at_v1; v2 names its first two columns version_a and version_b (v1's
-- took the argument expressions as names, e.g. CAST('v2' AS VARCHAR), in CSV headers too).
-- Parameters: version_a VARCHAR (from); version_b VARCHAR (to).
-- Grain key: example_id.
-- Grain: one row per example in either version that moved.
-- Columns: version_a; version_b; org; example_id;
--   status_a, status_b ('kept', the removing rule, or '(absent)' when the version did not
--   judge the example); split_a, split_b and half_a, half_b (null when the version placed
--   it in no split or no half); move, the first that applies: 'removed' (kept -> a rule),
--   'resurrected' (a rule -> kept), 'added' (absent -> kept), 'dropped' (kept -> absent),
--   'new_removed' (absent -> a rule), 'gone_removed' (a rule -> absent), 'reason' (removed
--   by both under different rules), 'split' (kept by both, other split), 'half' (kept by
--   both, same split, other registered half).
create or replace macro example_moves_at_v2(version_a varchar, version_b varchar) as table
with a as (
    select r.example_id, r.org, r.kept, coalesce(r.removed_reason, 'kept') as status, s.split, s.half
    from refine_examples as r
    left join review_splits as s on s.version = r.version and s.example_id = r.example_id
    where r.version = version_a
),
b as (
    select r.example_id, r.org, r.kept, coalesce(r.removed_reason, 'kept') as status, s.split, s.half
    from refine_examples as r
    left join review_splits as s on s.version = r.version and s.example_id = r.example_id
    where r.version = version_b
),
pairs as (
    select
        coalesce(a.org, b.org) as org,
        coalesce(a.example_id, b.example_id) as example_id,
        coalesce(a.status, '(absent)') as status_a,
        coalesce(b.status, '(absent)') as status_b,
        a.split as split_a,
        b.split as split_b,
        a.half as half_a,
        b.half as half_b
    from a
    full outer join b on b.example_id = a.example_id
),
classified as (
    select
        *,
        case
            when status_a = 'kept' and status_b not in ('kept', '(absent)') then 'removed'
            when status_a not in ('kept', '(absent)') and status_b = 'kept' then 'resurrected'
            when status_a = '(absent)' and status_b = 'kept' then 'added'
            when status_a = 'kept' and status_b = '(absent)' then 'dropped'
            when status_a = '(absent)' then 'new_removed'
            when status_b = '(absent)' then 'gone_removed'
            when status_a <> status_b then 'reason'
            when split_a is not null and split_b is not null and split_a <> split_b then 'split'
            when split_a is not null and split_b is not null and half_a is distinct from half_b then 'half'
        end as move
    from pairs
)
select version_a as version_a, version_b as version_b, org, example_id, status_a, status_b, split_a, split_b, half_a, half_b, move
from classified
where move is not null
