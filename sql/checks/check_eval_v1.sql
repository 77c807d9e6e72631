-- check_eval_v1: evaluation runs' faults as checks (issues 26 and 31; SPEC §3.5), per run and
-- per pair of runs, read from eval_runs_v3, eval_instances_v2, eval_run_populations_v1 and
-- eval_pairs_v2.
-- Grain key: check_name, scope.
-- Grain: one row per (check, run), and per (check, pair of runs) for pair_attrition; with no
--   run loaded, one row per check with scope 'corpus', not run.
-- A run whose only report gives counts (sb-cli#27, eval_runs_v3.run_status = 'counts_only')
-- has no per-instance outcome: its per-instance checks are not run, with that reason.
-- Checks (severity; default condition):
--   instances_without_outcome (error; failing > 0): instances the run's files name that
--     no file grades (left out of every rate, never counted as unresolved), of the run's
--     instances;
--   evaluator_errors_counted (error; failing > 0): instances the run's own run-level report
--     counts in its denominator (total_instances) though they were never graded: evaluator
--     errors, infra failures (SWE-bench #594 keeps them in unresolved_ids / error_ids, "the
--     denominator is unchanged") and instances never run, of the instances it lists (not run:
--     no run-level report lists instances); eval_runs_v3.resolve_rate leaves them out;
--   infra_failures (warn; failing > 0): instances whose environment broke (infra_failure_ids,
--     report.json infra_failure), of the attempted instances: left out of the graded
--     denominator; re-run them;
--   implied_unresolved (warn; failing > 0): instances counted unresolved only because an
--     older run-level id list (resolved ids only) leaves them out, of the graded instances;
--   outcome_sources_disagree (error; failing > 0): instances whose outcome files disagree on
--     resolved, of the instances with two or more explicit sources (not run: none has two);
--   rerun_after_retry_error (warn; failing > 0): instances re-run in a later batch after a
--     RetryError (the later batch's outcome counts), of the run's instances;
--   continued_run (info; failing > 0): 1 when the run continues another or ran in 2+
--     batches: never counted as an independent repeat (eval_repeats_v2 leaves it out);
--   populations_differ (info; failing > 0): 1 when the run's run-level report and its
--     trajectories cover different instances (an instance in one and not the other): every figure is given per population in
--     eval_run_populations_v1 (not run: the run lacks a run-level report or trajectories);
--   grader_flakes (error; failing > 0): instances the evaluator graded twice or more with
--     different verdicts (eval_grader_flakes_v1), of the instances with two or more per-instance
--     reports (not run: none has two);
--   pair_attrition (warn; share > 0.1): of the instances graded by either run of a pair, those
--     graded by only one (eval_pairs_v2): the comparison is on the shared instances only.
--   run_log_unfinished (error; failing > 0): Inspect logs of the run whose header does not say
--     status 'success' (eval_log_headers): a 'cancelled' or 'error' log holds only the samples
--     that finished before the run stopped, so every figure of the run is of part of its
--     dataset; of the run's Inspect logs (not run: the run has none; only an Inspect log states
--     whether its run finished).
-- Columns: the check columns (check_findings_at_v1).
with runs as (
    select *, replace(run, '''', '''''') as q, run_status = 'counts_only' as counts_only from eval_runs_v3
),
reported as (
    select run, instances, resolved, evaluator_errors + infra_failures + not_run as ungraded
    from eval_run_populations_v1
    where population = 'run_report' and not counts_only
),
trajectories as (
    select run, instances, resolved from eval_run_populations_v1 where population = 'trajectories'
),
regraded as (
    select run, count(*) as regraded
    from (
        select run, instance_id from eval_outcomes
        where shape in ('swebench-report', 'sb-cli-instance')
        group by run, instance_id
        having count(*) >= 2
    )
    group by run
),
flakes as (
    select run, count(*) as flakes from eval_grader_flakes_v1 group by run
),
cover as (
    select run, count(*) filter (where in_run_report <> has_trajectory) as uncovered
    from eval_instances_v2
    group by run
),
logs as (
    select
        run,
        count(*) as logs,
        count(*) filter (where status is distinct from 'success') as unfinished,
        string_agg(
            format('{}: {} of {} samples completed{}',
                   case when status is null then 'no status' when status = '' then 'empty status' else status end,
                   coalesce(completed_samples::varchar, '?'), coalesce(total_samples::varchar, '?'),
                   coalesce(' (' || error_message || ')', '')),
            '; ' order by file_id) filter (where status is distinct from 'success') as detail
    from eval_log_headers
    group by run
),
pairs as (
    select
        *,
        replace(run_a, '''', '''''') as qa,
        replace(run_b, '''', '''''') as qb,
        shared + graded_in_a_only + graded_in_b_only as graded_by_either
    from eval_pairs_v2
),
checks as (
    select 'instances_without_outcome' as check_name, 'error' as severity, 'run=' || run as scope,
           case when not counts_only then instances end::bigint as tested,
           case when not counts_only then no_outcome end::bigint as failing,
           'failing > 0' as error_if, null::varchar as warn_if,
           case when counts_only then 'the run''s report gives counts only (sb-cli#27): no per-instance outcome'
                when instances = 0 then 'the run names no instance' end as reason,
           format('{} of {} instances graded', graded, instances) as detail,
           format('select * from eval_instances_v2 where run = ''{}'' and outcome is null', q) as drill_down
    from runs
    union all
    select 'evaluator_errors_counted', 'error', 'run=' || r.run, p.instances::bigint, p.ungraded::bigint, 'failing > 0', null,
           case when r.counts_only then 'the run''s report gives counts only (sb-cli#27): no per-instance outcome'
                when p.run is null then 'no run-level report lists the run''s instances: its rates are eval_runs_v3''s, graded only'
                when p.instances = 0 then 'the run-level report lists no instance' end,
           case when p.run is not null and r.reported_total is not null then
               format('the report says {} resolved of {} ({}); graded only: {} of {} ({})', r.reported_resolved,
                      r.reported_total, round(r.reported_rate, 4), r.resolved, r.graded, round(r.resolve_rate, 4))
                when p.run is not null then
               format('{} of the {} instances the report lists resolved (after per-instance reports); graded only: {} of {} ({})',
                      p.resolved, p.instances, r.resolved, r.graded, round(r.resolve_rate, 4)) end,
           format('select * from eval_instances_v2 where run = ''{}'' and in_run_report and excluded in (''error'', ''infra_failure'', ''not_run'')', r.q)
    from runs as r
    left join reported as p on p.run = r.run
    union all
    select 'infra_failures', 'warn', 'run=' || run,
           case when not counts_only then attempted end::bigint, case when not counts_only then infra_failures end::bigint,
           null, 'failing > 0',
           case when counts_only then 'the run''s report gives counts only (sb-cli#27): no per-instance outcome'
                when attempted = 0 then 'no instance of the run was attempted' end,
           format('left out of the graded denominator ({} graded, {} attempted)', graded, attempted),
           format('select instance_id, failure_reason, outcome_shapes from eval_instances_v2 where run = ''{}'' and outcome = ''infra_failure''', q)
    from runs
    union all
    select 'implied_unresolved', 'warn', 'run=' || run,
           case when not counts_only then graded end::bigint, case when not counts_only then implied_outcomes end::bigint,
           null, 'failing > 0',
           case when counts_only then 'the run''s report gives counts only (sb-cli#27): no per-instance outcome'
                when graded = 0 then 'no instance of the run is graded' end, null,
           format('select * from eval_instances_v2 where run = ''{}'' and outcome_basis = ''implied''', q)
    from runs
    union all
    select 'outcome_sources_disagree', 'error', 'run=' || run,
           nullif(outcomes_checked, 0)::bigint, case when outcomes_checked > 0 then outcomes_checked - outcomes_agree end::bigint,
           'failing > 0', null,
           case when counts_only then 'the run''s report gives counts only (sb-cli#27): no per-instance outcome'
                when coalesce(outcomes_checked, 0) = 0 then 'no instance has two or more outcome files' end, null,
           format('select * from eval_instances_v2 where run = ''{}'' and not sources_agree', q)
    from runs
    union all
    select 'rerun_after_retry_error', 'warn', 'run=' || run, nullif(instances, 0)::bigint, rerun_after_retry_error::bigint,
           null, 'failing > 0',
           case when instances = 0 then 'the run names no instance' end, rerun_instances,
           format('select * from eval_instances_v2 where run = ''{}'' and rerun_after_retry_error', q)
    from runs
    union all
    select 'continued_run', 'info', 'run=' || run, 1::bigint, case when continued then 1 else 0 end::bigint, null, 'failing > 0',
           null,
           case when continues is not null then format('continues {}', continues)
                when batches > 1 then format('{} batches', batches) end,
           format('select run, model, harness, continues, batches, continued from eval_runs_v3 where run = ''{}''', q)
    from runs
    union all
    select 'populations_differ', 'info', 'run=' || r.run,
           case when p.run is not null and t.run is not null then 1 end::bigint,
           case when p.run is not null and t.run is not null then (case when c.uncovered > 0 then 1 else 0 end) end::bigint,
           null, 'failing > 0',
           case when p.run is null then 'no run-level report lists the run''s instances'
                when t.run is null then 'the run has no trajectory' end,
           case when p.run is not null and t.run is not null then
               format('run report: {} resolved of {} instances; trajectories: {} resolved of {}', p.resolved, p.instances,
                      t.resolved, t.instances) end,
           format('select * from eval_run_populations_v1 where run = ''{}''', r.q)
    from runs as r
    left join reported as p on p.run = r.run
    left join trajectories as t on t.run = r.run
    left join cover as c on c.run = r.run
    union all
    select 'grader_flakes', 'error', 'run=' || r.run, g.regraded::bigint,
           case when g.run is not null then coalesce(f.flakes, 0) end::bigint, 'failing > 0', null,
           case when g.run is null then 'no instance of the run has two per-instance reports' end, null,
           format('select * from eval_grader_flakes_v1 where run = ''{}''', r.q)
    from runs as r
    left join regraded as g on g.run = r.run
    left join flakes as f on f.run = r.run
    union all
    select 'pair_attrition', 'warn', 'run_a=' || run_a || ' run_b=' || run_b,
           nullif(graded_by_either, 0)::bigint, (graded_in_a_only + graded_in_b_only)::bigint, null, 'share > 0.1',
           case when graded_by_either = 0 then 'neither run graded an instance' end,
           verdict_text,
           format('select * from eval_pair_instances_v2 where run_a = ''{}'' and run_b = ''{}'' and not shared', qa, qb)
    from pairs
    union all
    select 'run_log_unfinished', 'error', 'run=' || r.run, l.logs::bigint, l.unfinished::bigint, 'failing > 0', null,
           case when l.run is null then 'the run has no Inspect log (only an Inspect log states whether its run finished)' end,
           l.detail,
           format('select * from eval_log_headers where run = ''{}''', r.q)
    from runs as r
    left join logs as l on l.run = r.run
),
absent as (
    select name, severity, 'corpus', null::bigint, null::bigint, error_if, warn_if,
           'no evaluation run loaded (load run NAME --model M DIR)', null::varchar, null::varchar
    from (values ('instances_without_outcome', 'error', 'failing > 0', null),
                 ('evaluator_errors_counted', 'error', 'failing > 0', null),
                 ('infra_failures', 'warn', null, 'failing > 0'),
                 ('implied_unresolved', 'warn', null, 'failing > 0'),
                 ('outcome_sources_disagree', 'error', 'failing > 0', null),
                 ('rerun_after_retry_error', 'warn', null, 'failing > 0'),
                 ('continued_run', 'info', null, 'failing > 0'),
                 ('populations_differ', 'info', null, 'failing > 0'),
                 ('grader_flakes', 'error', 'failing > 0', null),
                 ('pair_attrition', 'warn', null, 'share > 0.1'),
                 ('run_log_unfinished', 'error', 'failing > 0', null)) as c(name, severity, error_if, warn_if)
    where not exists (select 1 from eval_run_specs)
),
lone as (
    select 'pair_attrition', 'warn', 'corpus', null::bigint, null::bigint, null, 'share > 0.1',
           'one evaluation run loaded: no pair to compare', null::varchar, null::varchar
    where (select count(*) from eval_run_specs) = 1
)
select check_name, 'eval' as area, severity, scope, tested, failing, error_if, warn_if, reason, detail, drill_down
from (select * from checks union all select * from absent union all select * from lone)
