-- check_latest_v1: the results of the latest recorded `sphragis check` run (issue 26):
-- every check and scope it judged, passes and not-run checks included.
-- Grain key: check_name, scope.
-- Grain: one row per (check, scope) of the run with the highest run_id in check_runs.
-- Columns: run_id; checked_at (UTC); code_version; check_name; area; severity; scope;
--   tested; failing; share; error_if; warn_if; status; reason; drill_down (as recorded in
--   check_results, after checks.toml).
with latest as (
    select max(run_id) as run_id from check_runs
)
select r.run_id, c.checked_at, c.code_version, r.check_name, r.area, r.severity, r.scope, r.tested, r.failing,
       r.share, r.error_if, r.warn_if, r.status, r.reason, r.drill_down
from check_results as r
join latest using (run_id)
join check_runs as c using (run_id)
