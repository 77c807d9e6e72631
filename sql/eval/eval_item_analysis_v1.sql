-- eval_item_analysis_v1: which instances tell the loaded runs apart (issue 31; SPEC §3.5):
-- those every run that graded them solves, those none solves, and those that discriminate.
-- Grain key: instance_id.
-- Grain: one row per instance that at least one run graded (eval_instances_v2.graded).
-- Columns: runs_graded (runs that graded it), runs_loaded (runs in eval_run_specs);
--   runs_resolved; solved_by (the runs that resolved it, sorted, space-separated);
--   item: solved_by_all (every run that graded it resolved it) / solved_by_none /
--   discriminating (some did, some did not) / one_run (a single run graded it: it says nothing
--   of a difference); graded_by_every_run: runs_graded = runs_loaded.
with graded as (
    select instance_id, run, resolved from eval_instances_v2 where graded
),
per as (
    select
        instance_id,
        count(*) as runs_graded,
        count(*) filter (where resolved) as runs_resolved,
        string_agg(run, ' ' order by run) filter (where resolved) as solved_by
    from graded
    group by instance_id
)
select
    p.instance_id,
    p.runs_graded,
    (select count(*) from eval_run_specs) as runs_loaded,
    p.runs_resolved,
    p.solved_by,
    case
        when p.runs_graded = 1 then 'one_run'
        when p.runs_resolved = p.runs_graded then 'solved_by_all'
        when p.runs_resolved = 0 then 'solved_by_none'
        else 'discriminating'
    end as item,
    p.runs_graded = (select count(*) from eval_run_specs) as graded_by_every_run
from per as p
order by p.instance_id
