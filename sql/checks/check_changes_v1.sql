-- check_changes_v1: what changed between the last two recorded `sphragis check` runs (issue
-- 26): every check and scope either judged, with its status and figures in both, so `diff
-- --reports` and the HTML report can say which check flipped since the previous run.
-- Grain key: check_name, scope.
-- Grain: one row per (check, scope) judged by the latest recorded run or the one before it
--   (none with fewer than two recorded runs).
-- Columns: previous_run_id, latest_run_id; check_name; scope; previous_status,
--   latest_status (null: that run did not judge it); previous_failing, latest_failing,
--   previous_tested, latest_tested; change: 'new' (judged only by the latest run),
--   'gone' (only by the previous one), 'status' (the status differs), 'figures' (same status,
--   failing or tested differ), 'same'.
with ranked as (
    select run_id, row_number() over (order by run_id desc) as back from check_runs
),
latest as (
    select r.* from check_results as r join ranked as k using (run_id) where k.back = 1
),
previous as (
    select r.* from check_results as r join ranked as k using (run_id) where k.back = 2
),
runs as (
    select max(run_id) filter (where back = 1) as latest_run_id, max(run_id) filter (where back = 2) as previous_run_id
    from ranked
),
joined as (
    select
        coalesce(l.check_name, p.check_name) as check_name,
        coalesce(l.scope, p.scope) as scope,
        p.status as previous_status,
        l.status as latest_status,
        p.failing as previous_failing,
        l.failing as latest_failing,
        p.tested as previous_tested,
        l.tested as latest_tested
    from latest as l
    full outer join previous as p on p.check_name = l.check_name and p.scope = l.scope
)
select
    runs.previous_run_id,
    runs.latest_run_id,
    j.check_name,
    j.scope,
    j.previous_status,
    j.latest_status,
    j.previous_failing,
    j.latest_failing,
    j.previous_tested,
    j.latest_tested,
    case
        when j.previous_status is null then 'new'
        when j.latest_status is null then 'gone'
        when j.previous_status <> j.latest_status then 'status'
        when j.previous_failing is distinct from j.latest_failing or j.previous_tested is distinct from j.latest_tested
            then 'figures'
        else 'same'
    end as change
from joined as j
cross join runs
where runs.previous_run_id is not null
order by j.check_name, j.scope
