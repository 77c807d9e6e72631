-- eval_instances_v1: one evaluator outcome per run and instance (SPEC §3.5, issue 11).
-- Grain key: run, instance_id.
-- Grain: one row per (run, instance_id); the instances of a run are those named by any of
--   its files (trajectories, per-instance reports, run-level id lists, batch exit statuses).
-- Columns:
--   has_trajectory: the run has a trajectory of the instance (eval_trajectories);
--   outcome: resolved / unresolved / error, or null = no outcome (never counted as unresolved);
--     explicit outcomes come from eval_outcomes; when several files state one, a per-instance
--     report wins over a run-level list, which wins over the trajectory's own flag (then the
--     earlier file); with no explicit outcome, an instance of a run that has a run-level id
--     list (eval_listings) is implied unresolved;
--   outcome_basis: explicit / implied / null; resolved: outcome = 'resolved' (null: no outcome);
--   outcome_sources: files stating an explicit outcome; outcome_shapes: their shapes, sorted;
--   sources_agree: with two or more sources, whether they all agree on resolved (else null);
--   finish, exit_status, turns_before_first_edit: from the trajectory (null without one);
--   batches: batch exit-status files naming the instance; last_exit_status: the status in the
--     last of them (batches ordered by the unix time in their name, then load order), which
--     counts; exit_status_history: every status in batch order, joined with ' > ';
--   rerun_after_retry_error: a RetryError in an earlier batch and a later batch ran it again.
with instances as (
    select run, instance_id from eval_trajectories
    union
    select run, instance_id from eval_outcomes
    union
    select run, instance_id from eval_exit_statuses
),
ranked_outcomes as (
    select
        *,
        case shape
            when 'sb-cli-instance' then 1
            when 'swebench-report' then 1
            when 'sb-cli-run' then 2
            when 'harness-summary' then 2
            else 3
        end as priority
    from eval_outcomes
),
explicit as (
    select
        run,
        instance_id,
        count(*) as sources,
        count(distinct status = 'resolved') as verdicts,
        arg_min(status, [priority, file_id]) as status,
        string_agg(distinct shape, ',' order by shape) as shapes
    from ranked_outcomes
    group by run, instance_id
),
listed_runs as (
    select distinct run from eval_listings
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
        coalesce(e.status, case when l.run is not null then 'unresolved' end) as outcome,
        case when e.status is not null then 'explicit' when l.run is not null then 'implied' end as outcome_basis,
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
    outcome = 'resolved' as resolved,
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
