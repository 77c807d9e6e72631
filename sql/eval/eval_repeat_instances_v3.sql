-- eval_repeat_instances_v3: how often independent repeats of one model and harness resolve
-- each instance, on the instances every repeat graded (issue 31; SPEC §3.5).
-- Unlike eval_repeat_instances_v2, an instance counts only where every repeat graded it
-- (eval_instances_v2.graded): an infra failure, an evaluator error or an instance never run
-- is never a failed repeat.
-- Grain key: model, harness, instance_id.
-- Grain: one row per (model, harness, instance_id) for every group of 2+ runs with the same
--   model and harness that are not continued (eval_runs_v3.continued is false: a continued or
--   resumed run is never an independent repeat), over the instances graded in every run of
--   the group.
-- Columns: runs (n: runs in the group); resolved_by (c: runs that resolved it);
--   flips: resolved by some repeats and not others (0 < c < n).
with runs as (
    select run, model, harness from eval_runs_v3 where not continued
),
groups as (
    select model, harness, count(*) as runs from runs group by model, harness having count(*) >= 2
),
members as (
    select r.run, g.model, g.harness, g.runs
    from runs as r
    join groups as g on g.model = r.model and g.harness is not distinct from r.harness
),
outcomes as (
    select m.model, m.harness, m.runs, i.instance_id, i.resolved
    from members as m
    join eval_instances_v2 as i on i.run = m.run
    where i.graded
),
counted as (
    select model, harness, instance_id, any_value(runs) as runs, count(*) as graded_in,
           count(*) filter (where resolved) as resolved_by
    from outcomes
    group by model, harness, instance_id
)
select model, harness, instance_id, runs, resolved_by, resolved_by > 0 and resolved_by < runs as flips
from counted
where graded_in = runs
