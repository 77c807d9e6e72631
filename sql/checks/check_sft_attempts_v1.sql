-- check_sft_attempts_v1: several trajectories of one instance (issue 27) as checks, read
-- from sft_attempts_v1. One row per check, scope corpus.
--   trajectory_attempts (info; failing > 0): the trajectories of instances with several
--     attempts, and of those the unresolved ones (their own flag, or the report's with one
--     attempt: sft_attempts_v1.resolved false): failed attempts the corpus trains on unless
--     a pool leaves them out; detail: instances, trajectories, resolved / unresolved /
--     without a verdict.
--   identical_attempts (warn; failing > 0): of the same trajectories, those whose messages
--     equal an earlier attempt's (sft_attempts_v1.identical_to): their tokens count twice in
--     exposure and dedup.
--   Both not run when no trajectory is loaded, or when no instance has several attempts
--   (every trajectory is its instance's only one: nothing to tell apart).
-- Grain key: check_name, scope.
-- Grain: one row per check.
-- Columns: the check columns (check_findings_at_v1).
with several as (
    select * from sft_attempts_v1 where attempts > 1
),
figures as (
    select count(*) as trajectories,
           count(distinct instance) as instances,
           count(*) filter (where resolved) as resolved,
           count(*) filter (where not resolved) as unresolved,
           count(*) filter (where resolved is null) as unknown,
           count(identical_to) as identical,
           (select count(*) from sft_trajectories) as loaded
    from several
),
checks as (
    select 'trajectory_attempts' as check_name, 'info' as severity,
           case when trajectories > 0 then trajectories end::bigint as tested,
           case when trajectories > 0 then unresolved end::bigint as failing,
           null::varchar as error_if, 'failing > 0' as warn_if,
           case when loaded = 0 then 'no trajectories loaded (load trajectories FILE)'
                when trajectories = 0 then 'no instance has several trajectories (one attempt each)' end as reason,
           case when trajectories > 0
                then format('{} instances with several attempts, {} trajectories: {} resolved, {} unresolved, {} without a verdict',
                            instances, trajectories, resolved, unresolved, unknown) end as detail,
           'select * from sft_attempts_v1 where attempts > 1 order by instance, attempt' as drill_down
    from figures
    union all
    select 'identical_attempts', 'warn',
           case when trajectories > 0 then trajectories end::bigint,
           case when trajectories > 0 then identical end::bigint,
           null, 'failing > 0',
           case when loaded = 0 then 'no trajectories loaded (load trajectories FILE)'
                when trajectories = 0 then 'no instance has several trajectories (one attempt each)' end,
           case when identical > 0 then 'the same messages as an earlier attempt of the instance: counted twice' end,
           'select * from sft_attempts_v1 where identical_to is not null order by instance, attempt'
    from figures
)
select check_name, 'sft' as area, severity, 'corpus' as scope, tested, failing, error_if, warn_if, reason, detail,
       drill_down
from checks
