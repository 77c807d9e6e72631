-- eval_run_instance_ids_v1: the instance ids behind the counts of eval_runs_v1 (instances,
-- trajectories, n, resolved, evaluator_errors, no_outcome per run; SPEC §3.5). Drill-down of
-- the HTML report; the outcomes are eval_instances_v1's, where they are defined.
-- Grain key: run, instance_id.
-- Grain: one row per (run, instance) any file of the run names.
-- Columns: run; instance_id; has_trajectory; has_outcome (explicit or implied: counted in
--   n); resolved (false when unresolved, an evaluator error or no outcome); evaluator_error
--   (outcome 'error'); no_outcome (never counted as unresolved); outcome (resolved /
--   unresolved / error, null: none).
select
    run,
    instance_id,
    has_trajectory,
    outcome is not null as has_outcome,
    coalesce(resolved, false) as resolved,
    coalesce(outcome = 'error', false) as evaluator_error,
    outcome is null as no_outcome,
    outcome
from eval_instances_v1
