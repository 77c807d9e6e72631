-- check_history_v1: each check's history over the recorded `sphragis check` runs (issue 26):
-- when it first failed, when it last passed, how often its status changed.
-- Grain key: check_name, scope.
-- Grain: one row per (check, scope) that any recorded run judged.
-- Columns: check_name; scope; runs (recorded runs that judged it); first_run_id,
--   last_run_id; last_status (in the latest run that judged it); first_failing_run_id,
--   last_failing_run_id (status 'fail'; null: never failed); last_passing_run_id (status
--   'pass'; null: never passed); last_failing_at, last_passing_at (UTC); flips (times the
--   status differs from the one in the previous run that judged it; 'not-run' is a status
--   of its own); statuses (the status in every run, oldest first, joined with ' > ').
with results as (
    select r.run_id, c.checked_at, r.check_name, r.scope, r.status,
           lag(r.status) over (partition by r.check_name, r.scope order by r.run_id) as previous_status
    from check_results as r
    join check_runs as c using (run_id)
)
select
    check_name,
    scope,
    count(*) as runs,
    min(run_id) as first_run_id,
    max(run_id) as last_run_id,
    arg_max(status, run_id) as last_status,
    min(run_id) filter (where status = 'fail') as first_failing_run_id,
    max(run_id) filter (where status = 'fail') as last_failing_run_id,
    max(run_id) filter (where status = 'pass') as last_passing_run_id,
    max(checked_at) filter (where status = 'fail') as last_failing_at,
    max(checked_at) filter (where status = 'pass') as last_passing_at,
    count(*) filter (where previous_status is not null and previous_status <> status) as flips,
    string_agg(status, ' > ' order by run_id) as statuses
from results
group by check_name, scope
