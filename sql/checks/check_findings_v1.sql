-- check_findings_v1: every check of the default suite with its verdict (issue 26):
-- check_findings_at_v1 (where the columns and the status rule are documented) at a
-- training length of 32,768 tokens, right truncation. What `sphragis check` prints with no
-- checks.toml, readable from any DuckDB client.
-- Grain key: check_name, scope.
-- Grain: one row per (check, scope).
select * from check_findings_at_v1(32768, 'right')
