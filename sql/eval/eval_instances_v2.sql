-- eval_instances_v2: one outcome class per run and instance (issue 31; SPEC §3.5).
-- Unlike eval_instances_v1, an infra failure, an empty patch and an instance never run are
-- classes of their own, not unresolved: the SWE-bench harness's run report (schema version 2)
-- lists empty_patch_ids, incomplete_ids and, since SWE-bench PR #594, infra_failure_ids, and
-- report.json writes infra_failure; sb-cli adds pending_ids and failed_ids (src/eval/files.rs).
-- Grain key: run, instance_id.
-- Grain: one row per (run, instance_id); the instances of a run are those named by any of
--   its files (trajectories, per-instance reports, run-level reports, batch exit statuses).
-- Columns:
--   has_trajectory: the run has a trajectory of the instance (eval_trajectories);
--   outcome: resolved / unresolved / empty_patch / error / infra_failure / not_run, or null =
--     no file says (never counted as unresolved); explicit outcomes come from eval_outcomes:
--     when several files state one, a per-instance report wins over a run-level report, which
--     wins over the trajectory's own flag (then the earlier file); with no explicit outcome,
--     an instance of a run with a run-level report that lists every prediction it was given
--     (it states submitted_instances) is implied not_run (the harness never saw it), and of a
--     run with an older id list (resolved ids only) implied unresolved, as in v1;
--   outcome_basis: explicit / implied / null;
--   graded: the evaluator judged the model's output: resolved, unresolved or empty_patch (a
--     prediction without a patch is the model's failure; rules: SWE-bench make_run_report);
--   attempted: the harness received a prediction: graded, error or infra_failure;
--   excluded: why an instance is left out of the graded denominator: error (the evaluator
--     could not grade it), infra_failure (the environment broke), not_run, no_outcome; null
--     when graded;
--   resolved: outcome = 'resolved' (null: no outcome);
--   ambiguous_failure: listed in ambiguous_failure_ids (environment or patch: unknown which;
--     the class stays as listed); failure_reason: failure_reasons[id] or report.json's
--     infra_failure_reason, from the file whose outcome counts (else any file's);
--   in_run_report: a run-level report that lists its population (the harness's run report, sb-cli's)
--     lists the instance (the older summary lists resolved ids only: no population);
--   outcome_sources: files stating an explicit outcome; outcome_shapes: their shapes, sorted;
--   sources_agree: with two or more sources, whether they all agree on resolved (else null);
--   finish, exit_status, turns_before_first_edit: from the trajectory (null without one);
--   batches, last_exit_status, exit_status_history, rerun_after_retry_error: as in v1.
with instances as (
    select run, instance_id from eval_trajectories
    union
    select run, instance_id from eval_outcomes
    union
    select run, instance_id from eval_exit_statuses
),
ranked_outcomes as (
    select
        o.*,
        case o.shape
            when 'sb-cli-instance' then 1
            when 'swebench-report' then 1
            when 'swebench-run-report' then 2
            when 'sb-cli-run' then 2
            when 'harness-summary' then 2
            else 3
        end as priority,
        n.reason,
        coalesce(n.ambiguous, false) as ambiguous
    from eval_outcomes as o
    left join eval_outcome_notes as n on n.run = o.run and n.instance_id = o.instance_id and n.file_id = o.file_id
),
explicit as (
    select
        run,
        instance_id,
        count(*) as sources,
        count(distinct status = 'resolved') as verdicts,
        arg_min(status, [priority, file_id]) as status,
        coalesce(arg_min(reason, [priority, file_id]), min(reason)) as reason,
        bool_or(ambiguous) as ambiguous,
        bool_or(priority = 2 and shape <> 'harness-summary') as in_run_report,
        string_agg(distinct shape, ',' order by shape) as shapes
    from ranked_outcomes
    group by run, instance_id
),
listed_runs as (
    select
        l.run,
        bool_or(r.submitted is not null) as lists_every_prediction
    from eval_listings as l
    left join eval_run_reports as r on r.run = l.run and r.file_id = l.file_id
    where l.shape <> 'sb-cli-counts'
    group by l.run
),
batches as (
    select *, dense_rank() over (partition by run order by batch_time nulls last, file_id) as batch_order
    from eval_exit_statuses
),
exits as (
    select
        run,
        instance_id,
        count(*) as batches,
        arg_max(exit_status, batch_order) as last_exit_status,
        string_agg(exit_status, ' > ' order by batch_order) as exit_status_history,
        min(batch_order) filter (where exit_status = 'RetryError') as first_retry_batch,
        max(batch_order) as last_batch
    from batches
    group by run, instance_id
),
final as (
    select
        i.run,
        i.instance_id,
        t.instance_id is not null as has_trajectory,
        coalesce(
            e.status,
            case when l.lists_every_prediction then 'not_run' when l.run is not null then 'unresolved' end
        ) as outcome,
        case when e.status is not null then 'explicit' when l.run is not null then 'implied' end as outcome_basis,
        coalesce(e.ambiguous, false) as ambiguous_failure,
        e.reason as failure_reason,
        coalesce(e.in_run_report, false) as in_run_report,
        coalesce(e.sources, 0) as outcome_sources,
        e.shapes as outcome_shapes,
        case when e.sources >= 2 then e.verdicts = 1 end as sources_agree,
        t.finish,
        t.exit_status,
        t.turns_before_first_edit,
        coalesce(x.batches, 0) as batches,
        x.last_exit_status,
        x.exit_status_history,
        coalesce(x.first_retry_batch < x.last_batch, false) as rerun_after_retry_error
    from instances as i
    left join eval_trajectories as t on t.run = i.run and t.instance_id = i.instance_id
    left join explicit as e on e.run = i.run and e.instance_id = i.instance_id
    left join listed_runs as l on l.run = i.run
    left join exits as x on x.run = i.run and x.instance_id = i.instance_id
)
select
    run,
    instance_id,
    has_trajectory,
    outcome,
    outcome_basis,
    coalesce(outcome in ('resolved', 'unresolved', 'empty_patch'), false) as graded,
    coalesce(outcome in ('resolved', 'unresolved', 'empty_patch', 'error', 'infra_failure'), false) as attempted,
    case
        when outcome is null then 'no_outcome'
        when outcome in ('error', 'infra_failure', 'not_run') then outcome
    end as excluded,
    outcome = 'resolved' as resolved,
    ambiguous_failure,
    failure_reason,
    in_run_report,
    outcome_sources,
    outcome_shapes,
    sources_agree,
    finish,
    exit_status,
    turns_before_first_edit,
    batches,
    last_exit_status,
    exit_status_history,
    rerun_after_retry_error
from final
