-- eval_symptoms_v1: trajectory symptoms per run, k of n (SPEC §3.5, issue 11). Every symptom
-- is a HEURISTIC read from the trajectory (src/eval/symptoms.rs), never an official failure
-- reason; basis says so on every row. README "Evaluation runs" gives each rule's known false
-- positives.
-- Grain key: run, symptom.
-- Grain: one row per (run, symptom), for runs with trajectories.
-- Columns:
--   symptom: git_history_query (1+ shell command running git log/show/blame/rev-list/reflog),
--     runaway_before_edit (N+ assistant turns before any edit, N = eval_run_specs.runaway_n),
--     no_edit (no assistant turn writes a file), long_repetitive_output (an assistant text or
--     thinking body >= 3,000 chars with zlib ratio < 0.1), truncated_at_token_limit (a model
--     response with finish_reason 'length', or an exit status naming the context window),
--     stopped_at_step_or_cost_limit (finish 'limit'), pass_after_last_edit (the last passing
--     test run follows the last edit);
--   basis: 'heuristic'; rule: the rule with its parameter;
--   k: trajectories showing it; n: trajectories of the run; share = k / n (0..1);
--   wilson_low, wilson_high: Wilson 95% interval (z = 1.959963984540054, clamped to [0, 1], as
--     eval_runs_v1);
--   instances: the k instance ids, sorted, space-separated.
with t as (
    select t.*, r.runaway_n from eval_trajectories as t join eval_run_specs as r using (run)
),
s as (
    select run, 1 as ordinal, 'git_history_query' as symptom,
           'a shell command runs git log/show/blame/rev-list/reflog' as rule,
           instance_id, git_history_commands > 0 as hit from t
    union all
    select run, 2, 'runaway_before_edit', '>= ' || runaway_n || ' assistant turns before any edit',
           instance_id, runaway from t
    union all
    select run, 3, 'no_edit', 'no assistant turn writes a file', instance_id, turns_before_first_edit is null from t
    union all
    select run, 4, 'long_repetitive_output', 'an assistant body >= 3000 chars with zlib ratio < 0.1',
           instance_id, long_repetition from t
    union all
    select run, 5, 'truncated_at_token_limit', 'a response stopped at finish_reason length, or exit status names the context',
           instance_id, token_limit from t
    union all
    select run, 6, 'stopped_at_step_or_cost_limit', 'exit status of a step, cost or context budget',
           instance_id, finish = 'limit' from t
    union all
    select run, 7, 'pass_after_last_edit', 'the last passing test run follows the last edit',
           instance_id, pass_after_last_edit from t
),
counted as (
    select
        run,
        ordinal,
        symptom,
        string_agg(distinct rule, '; ') as rule,
        count(*) filter (where hit) as k,
        count(*) as n,
        string_agg(instance_id, ' ' order by instance_id) filter (where hit) as instances
    from s
    group by run, ordinal, symptom
),
rated as (
    select *, k / n as p, 1.959963984540054 as z from counted
)
select
    run,
    symptom,
    'heuristic' as basis,
    rule,
    k,
    n,
    p as share,
    greatest(0.0, (p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)) as wilson_low,
    least(1.0, (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)) as wilson_high,
    instances
from rated
order by run, ordinal
