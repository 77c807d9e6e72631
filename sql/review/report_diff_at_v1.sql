-- report_diff_at_v1(view_name, key_columns, version_a, version_b): the figures of one
-- version-scoped report view that differ between two corpus versions, old and new side by
-- side (`sphragis diff --version A --version B --reports ...`; a stock DuckDB client calls
-- `select * from report_diff_at_v1('refine_removals_v1', ['org'], 'v2', 'v3')`).
-- Parameters: view_name VARCHAR (a registered view with a `version` column);
--   key_columns VARCHAR[] (the view's grain key without `version`, from its header);
--   version_a VARCHAR (from); version_b VARCHAR (to).
-- Grain key: row_key, figure.
-- Grain: one row per (view row, figure) whose value differs, or whose row exists in one
--   version only (then every figure of the row, the other side null).
-- Columns: row_key ('col=value, ...' over key_columns, 'NULL' for a null key value);
--   figure (column name); value_a, value_b (the values as JSON text: numbers, strings in
--   quotes, true/false, null); change ('changed', 'only in A' = the row is absent from B,
--   'only in B').
-- Values compare as JSON text, so 0.5 and 0.50 are equal and an integer never equals a
-- string; doubles compare exactly (a changed last digit is a change).
create or replace macro report_diff_at_v1(view_name varchar, key_columns varchar[], version_a varchar, version_b varchar) as table
with rows_ as (
    select v.version, to_json(v) as j
    from query_table(view_name) as v
    where v.version in (version_a, version_b)
),
cells as (
    select
        r.version,
        array_to_string(
            list_transform(key_columns, lambda k: k || '=' || coalesce(json_extract_string(r.j, k), 'NULL')),
            ', '
        ) as row_key,
        u.figure,
        json_extract(r.j, u.figure)::varchar as value
    from rows_ as r, unnest(json_keys(r.j)) as u(figure)
    where u.figure <> 'version' and not list_contains(key_columns, u.figure)
),
pairs as (
    select
        row_key,
        figure,
        any_value(value) filter (where version = version_a) as value_a,
        any_value(value) filter (where version = version_b) as value_b,
        count(*) filter (where version = version_a) > 0 as in_a,
        count(*) filter (where version = version_b) > 0 as in_b
    from cells
    group by row_key, figure
)
select
    row_key,
    figure,
    value_a,
    value_b,
    case when in_a and in_b then 'changed' when in_a then 'only in A' else 'only in B' end as change
from pairs
where value_a is distinct from value_b or in_a <> in_b
