-- eval_runs_v3: one row per evaluation run, side by side, with denominators that do not lie
-- (issue 31; SPEC §3.5). Unlike eval_runs_v2, infra failures, evaluator errors and instances
-- never run are left out of the graded denominator and counted by class, the attempted
-- denominator is given beside it, and what the harness's own run-level report states is
-- kept apart (its population is usually the whole benchmark).
-- Grain key: run.
-- Grain: one row per run (eval_run_specs).
-- Columns:
--   model, harness, continues, batches, first_batch_at, last_batch_at, continued: as in v2;
--   instances: instances any file of the run names; trajectories: those with a trajectory;
--   graded: resolved + unresolved + empty_patch (eval_instances_v2.graded); resolved: k;
--   resolve_rate = resolved / graded (0..1; null when graded = 0), wilson_low, wilson_high:
--     its Wilson score interval (null when graded = 0) at z = 1.959963984540054 (95%), as in v2;
--   attempted: graded + error + infra_failure (the harness received a prediction);
--   resolve_rate_attempted = resolved / attempted, wilson_low_attempted, wilson_high_attempted;
--   unresolved, empty_patch, evaluator_errors, infra_failures, not_run, no_outcome: instances by
--     class (eval_instances_v2.outcome; no_outcome: no file says); ambiguous_failures: listed in
--     ambiguous_failure_ids (their class kept);
--   run_status: complete (every named instance graded) / completed_with_gaps (some are left out:
--     error, infra failure, not run or no outcome) / counts_only (nothing graded, a count-only
--     report states run-level figures) / no_outcomes (nothing graded);
--   explicit_outcomes, implied_outcomes, outcomes_checked, outcomes_agree: as in v2;
--   reported_by: the shape of the run's last-loaded run-level report that states counts
--     (eval_run_reports; null: none); reported_per_instance: false for a count-only report
--     (sb-cli#27: per-instance figures of such a run are not known);
--   reported_total, reported_submitted, reported_resolved: its total_instances,
--     submitted_instances, resolved_instances; reported_rate = reported_resolved /
--     reported_total (the harness's own figure over its population);
--   natural_finishes, limit_finishes, error_finishes, cut_off, median_turns_before_first_edit,
--   rerun_after_retry_error, rerun_instances: as in v2.
with i as (
    select * from eval_instances_v2
),
per as (
    select
        run,
        count(*) as instances,
        count(*) filter (where has_trajectory) as trajectories,
        count(*) filter (where graded) as graded,
        count(*) filter (where resolved) as resolved,
        count(*) filter (where attempted) as attempted,
        count(*) filter (where outcome = 'unresolved') as unresolved,
        count(*) filter (where outcome = 'empty_patch') as empty_patch,
        count(*) filter (where outcome = 'error') as evaluator_errors,
        count(*) filter (where outcome = 'infra_failure') as infra_failures,
        count(*) filter (where outcome = 'not_run') as not_run,
        count(*) filter (where outcome is null) as no_outcome,
        count(*) filter (where ambiguous_failure) as ambiguous_failures,
        count(*) filter (where outcome_basis = 'explicit') as explicit_outcomes,
        count(*) filter (where outcome_basis = 'implied') as implied_outcomes,
        count(*) filter (where outcome_sources >= 2) as outcomes_checked,
        count(*) filter (where sources_agree) as outcomes_agree,
        count(*) filter (where finish = 'natural') as natural_finishes,
        count(*) filter (where finish = 'limit') as limit_finishes,
        count(*) filter (where finish = 'error') as error_finishes,
        count(*) filter (where finish = 'cut_off') as cut_off,
        median(turns_before_first_edit) as median_turns_before_first_edit,
        count(*) filter (where rerun_after_retry_error) as rerun_after_retry_error,
        string_agg(instance_id, ' ' order by instance_id) filter (where rerun_after_retry_error) as rerun_instances
    from i
    group by run
),
batches as (
    select
        run,
        count(distinct file_id) as batches,
        make_timestamp(cast(round_even(min(batch_time) * 1000000, 0) as bigint)) as first_batch_at,
        make_timestamp(cast(round_even(max(batch_time) * 1000000, 0) as bigint)) as last_batch_at
    from eval_exit_statuses
    group by run
),
reports as (
    select
        run,
        arg_max(shape, file_id) as reported_by,
        arg_max(per_instance, file_id) as reported_per_instance,
        arg_max(total, file_id) as reported_total,
        arg_max(submitted, file_id) as reported_submitted,
        arg_max(resolved, file_id) as reported_resolved
    from eval_run_reports
    group by run
),
joined as (
    select
        r.run,
        r.model,
        r.harness,
        r.continues,
        coalesce(b.batches, 0) as batches,
        b.first_batch_at,
        b.last_batch_at,
        r.continues is not null or coalesce(b.batches, 0) > 1 as continued,
        coalesce(p.instances, 0) as instances,
        coalesce(p.trajectories, 0) as trajectories,
        coalesce(p.graded, 0) as graded,
        coalesce(p.resolved, 0) as resolved,
        coalesce(p.attempted, 0) as attempted,
        coalesce(p.unresolved, 0) as unresolved,
        coalesce(p.empty_patch, 0) as empty_patch,
        coalesce(p.evaluator_errors, 0) as evaluator_errors,
        coalesce(p.infra_failures, 0) as infra_failures,
        coalesce(p.not_run, 0) as not_run,
        coalesce(p.no_outcome, 0) as no_outcome,
        coalesce(p.ambiguous_failures, 0) as ambiguous_failures,
        p.explicit_outcomes,
        p.implied_outcomes,
        p.outcomes_checked,
        p.outcomes_agree,
        rp.reported_by,
        rp.reported_per_instance,
        rp.reported_total,
        rp.reported_submitted,
        rp.reported_resolved,
        p.natural_finishes,
        p.limit_finishes,
        p.error_finishes,
        p.cut_off,
        p.median_turns_before_first_edit,
        p.rerun_after_retry_error,
        p.rerun_instances,
        1.959963984540054 as z
    from eval_run_specs as r
    left join per as p on p.run = r.run
    left join batches as b on b.run = r.run
    left join reports as rp on rp.run = r.run
),
rated as (
    select
        *,
        case when graded > 0 then resolved / graded end as p,
        case when attempted > 0 then resolved / attempted end as pa
    from joined
)
select
    run, model, harness, continues, batches, first_batch_at, last_batch_at, continued, instances, trajectories,
    graded, resolved,
    p as resolve_rate,
    -- greatest/least skip a NULL in DuckDB: no bound without a rate
    case when graded > 0 then
        greatest(0.0, (p + z * z / (2 * graded) - z * sqrt(p * (1 - p) / graded + z * z / (4 * graded * graded)))
            / (1 + z * z / graded)) end as wilson_low,
    case when graded > 0 then
        least(1.0, (p + z * z / (2 * graded) + z * sqrt(p * (1 - p) / graded + z * z / (4 * graded * graded)))
            / (1 + z * z / graded)) end as wilson_high,
    attempted,
    pa as resolve_rate_attempted,
    case when attempted > 0 then
        greatest(0.0, (pa + z * z / (2 * attempted) - z * sqrt(pa * (1 - pa) / attempted + z * z / (4 * attempted * attempted)))
            / (1 + z * z / attempted)) end as wilson_low_attempted,
    case when attempted > 0 then
        least(1.0, (pa + z * z / (2 * attempted) + z * sqrt(pa * (1 - pa) / attempted + z * z / (4 * attempted * attempted)))
            / (1 + z * z / attempted)) end as wilson_high_attempted,
    unresolved, empty_patch, evaluator_errors, infra_failures, not_run, no_outcome, ambiguous_failures,
    case
        when graded = 0 and reported_per_instance = false then 'counts_only'
        when graded = 0 then 'no_outcomes'
        when evaluator_errors + infra_failures + not_run + no_outcome > 0 then 'completed_with_gaps'
        else 'complete'
    end as run_status,
    explicit_outcomes, implied_outcomes, outcomes_checked, outcomes_agree,
    reported_by, reported_per_instance, reported_total, reported_submitted, reported_resolved,
    case when reported_total > 0 then reported_resolved / reported_total end as reported_rate,
    natural_finishes, limit_finishes, error_finishes, cut_off, median_turns_before_first_edit,
    rerun_after_retry_error, rerun_instances
from rated
order by run
