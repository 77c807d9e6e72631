-- check_eval_v1: evaluation runs' faults as checks (issue 26; SPEC §3.5), per run, read
-- from eval_runs_v2 and eval_instances_v1.
-- Grain key: check_name, scope.
-- Grain: one row per (check, run); with no run loaded, one row per check with scope
--   'corpus', not run.
-- Checks (severity; default condition):
--   instances_without_outcome (error; failing > 0): instances the run's files name that
--     no file grades (never counted as unresolved: the resolve rate leaves them out), of
--     the run's instances;
--   evaluator_errors_counted (error; failing > 0): instances whose outcome is an evaluator
--     error, counted in the resolve rate's denominator as not resolved (an infrastructure
--     failure counted as a model failure), of the graded instances;
--   implied_unresolved (warn; failing > 0): instances counted unresolved only because a
--     run-level id list leaves them out, of the graded instances;
--   outcome_sources_disagree (error; failing > 0): instances whose outcome files disagree on
--     resolved, of the instances with two or more explicit sources (not run: none has two);
--   rerun_after_retry_error (warn; failing > 0): instances re-run in a later batch after a
--     RetryError (the later batch's outcome counts), of the run's instances;
--   continued_run (info; failing > 0): 1 when the run continues another or ran in 2+
--     batches: never counted as an independent repeat (eval_repeats_v2 leaves it out).
-- Columns: the check columns (check_findings_at_v1).
with runs as (
    select *, replace(run, '''', '''''') as q from eval_runs_v2
),
checks as (
    select 'instances_without_outcome' as check_name, 'error' as severity, 'run=' || run as scope,
           instances::bigint as tested, no_outcome::bigint as failing, 'failing > 0' as error_if, null::varchar as warn_if,
           case when instances = 0 then 'the run names no instance' end as reason,
           format('{} of {} instances graded', n, instances) as detail,
           format('select * from eval_instances_v1 where run = ''{}'' and outcome is null', q) as drill_down
    from runs
    union all
    select 'evaluator_errors_counted', 'error', 'run=' || run, n::bigint, evaluator_errors::bigint, 'failing > 0', null,
           case when n = 0 then 'no instance of the run is graded' end,
           format('resolve rate {} over {} graded', round(resolve_rate, 4), n),
           format('select * from eval_instances_v1 where run = ''{}'' and outcome = ''error''', q)
    from runs
    union all
    select 'implied_unresolved', 'warn', 'run=' || run, n::bigint, implied_outcomes::bigint, null, 'failing > 0',
           case when n = 0 then 'no instance of the run is graded' end, null,
           format('select * from eval_instances_v1 where run = ''{}'' and outcome_basis = ''implied''', q)
    from runs
    union all
    select 'outcome_sources_disagree', 'error', 'run=' || run,
           nullif(outcomes_checked, 0)::bigint, case when outcomes_checked > 0 then outcomes_checked - outcomes_agree end::bigint,
           'failing > 0', null,
           case when coalesce(outcomes_checked, 0) = 0 then 'no instance has two or more outcome files' end, null,
           format('select * from eval_instances_v1 where run = ''{}'' and not sources_agree', q)
    from runs
    union all
    select 'rerun_after_retry_error', 'warn', 'run=' || run, instances::bigint, rerun_after_retry_error::bigint, null, 'failing > 0',
           case when instances = 0 then 'the run names no instance' end, rerun_instances,
           format('select * from eval_instances_v1 where run = ''{}'' and rerun_after_retry_error', q)
    from runs
    union all
    select 'continued_run', 'info', 'run=' || run, 1::bigint, case when continued then 1 else 0 end::bigint, null, 'failing > 0',
           null,
           case when continues is not null then format('continues {}', continues)
                when batches > 1 then format('{} batches', batches) end,
           format('select run, model, harness, continues, batches, continued from eval_runs_v2 where run = ''{}''', q)
    from runs
),
absent as (
    select name, severity, 'corpus', null::bigint, null::bigint, error_if, warn_if,
           'no evaluation run loaded (load run NAME --model M DIR)', null::varchar, null::varchar
    from (values ('instances_without_outcome', 'error', 'failing > 0', null),
                 ('evaluator_errors_counted', 'error', 'failing > 0', null),
                 ('implied_unresolved', 'warn', null, 'failing > 0'),
                 ('outcome_sources_disagree', 'error', 'failing > 0', null),
                 ('rerun_after_retry_error', 'warn', null, 'failing > 0'),
                 ('continued_run', 'info', null, 'failing > 0')) as c(name, severity, error_if, warn_if)
    where not exists (select 1 from eval_run_specs)
)
select check_name, 'eval' as area, severity, scope, tested, failing, error_if, warn_if, reason, detail, drill_down
from (select * from checks union all select * from absent)
