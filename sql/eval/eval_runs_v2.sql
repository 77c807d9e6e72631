-- eval_runs_v2: one row per evaluation run, side by side (SPEC §3.5, issue 11).
-- Same rows as eval_runs_v1, with the batch times in microseconds rounded by round_even(x, 0)
-- before the cast to bigint: v1's cast of a double rounds half to even in DuckDB and
-- truncates on Spark (first_batch_at a microsecond apart on a real run); round_even rounds
-- as DuckDB's cast does (round() would round half away from zero, so a time of exactly
-- half a microsecond would move), and Spark's bround as well, so it runs on Spark too
-- (README "Beyond one machine").
-- Grain key: run.
-- Grain: one row per run (eval_run_specs).
-- Columns:
--   model, harness; continues: the run it declares it continues (null: none);
--   batches: batch exit-status files; first_batch_at, last_batch_at: the times in the names of
--     the first and last of them (UTC; mini-swe-agent writes a batch file when the batch ends),
--     the run's known date range (null without batch files); continued: declares --continues or has 2+ batches
--     (a continued or resumed run is never an independent repeat);
--   instances: instances any file of the run names; trajectories: those with a trajectory;
--   n: instances with an outcome (explicit or implied); resolved: k of them resolved;
--   resolve_rate = resolved / n (0..1; null when n = 0); wilson_low, wilson_high: Wilson score
--     interval at z = 1.959963984540054 (95%):
--     (p + z^2/2n -/+ z*sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), clamped to [0, 1] (rounding
--     gives -1e-17 at p = 0);
--   explicit_outcomes, implied_outcomes (unlisted in a run-level id list), evaluator_errors
--     (outcome 'error', counted in n, not resolved), no_outcome (never counted as unresolved);
--   outcomes_checked: instances with 2+ explicit sources; outcomes_agree: of those, agreeing;
--   natural_finishes, limit_finishes (step, cost or context budget), error_finishes, cut_off: finishes
--     of the run's trajectories (eval_trajectories.finish);
--   median_turns_before_first_edit: over trajectories with an edit (HEURISTIC edit reading);
--   rerun_after_retry_error: instances re-run in a later batch after a RetryError, and
--     rerun_instances: their ids, sorted, space-separated.
with i as (
    select * from eval_instances_v1
),
per as (
    select
        run,
        count(*) as instances,
        count(*) filter (where has_trajectory) as trajectories,
        count(outcome) as n,
        count(*) filter (where resolved) as resolved,
        count(*) filter (where outcome_basis = 'explicit') as explicit_outcomes,
        count(*) filter (where outcome_basis = 'implied') as implied_outcomes,
        count(*) filter (where outcome = 'error') as evaluator_errors,
        count(*) filter (where outcome is null) as no_outcome,
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
        coalesce(p.n, 0) as n,
        coalesce(p.resolved, 0) as resolved,
        p.explicit_outcomes,
        p.implied_outcomes,
        p.evaluator_errors,
        p.no_outcome,
        p.outcomes_checked,
        p.outcomes_agree,
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
),
rated as (
    select *, case when n > 0 then resolved / n end as p from joined
)
select
    run, model, harness, continues, batches, first_batch_at, last_batch_at, continued, instances, trajectories, n, resolved,
    p as resolve_rate,
    greatest(0.0, (p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)) as wilson_low,
    least(1.0, (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)) as wilson_high,
    explicit_outcomes, implied_outcomes, evaluator_errors, no_outcome, outcomes_checked, outcomes_agree,
    natural_finishes, limit_finishes, error_finishes, cut_off, median_turns_before_first_edit,
    rerun_after_retry_error, rerun_instances
from rated
order by run
