-- eval_grader_flakes_v1: the same instance of a run graded twice by the evaluator with
-- different verdicts — re-grade files, a duplicate report.json (issue 31; SWE-bench#418,
-- OpenHands benchmarks#140): a flake of the grader, kept apart from the model's.
-- Grain key: run, instance_id.
-- Grain: one row per (run, instance_id) with two or more per-instance reports (shapes
--   swebench-report / sb-cli-instance) whose classes differ.
-- Columns: reports (per-instance report files); classes (their outcome classes, in load order,
--   joined with ' > '); resolved_in, not_resolved_in (reports saying resolved, and not);
--   files (the reports' paths, in load order, joined with ' ').
with reports as (
    select o.run, o.instance_id, o.status, o.file_id, l.path
    from eval_outcomes as o
    join ingest_log as l using (file_id)
    where o.shape in ('swebench-report', 'sb-cli-instance')
)
select
    run,
    instance_id,
    count(*) as reports,
    string_agg(status, ' > ' order by file_id) as classes,
    count(*) filter (where status = 'resolved') as resolved_in,
    count(*) filter (where status <> 'resolved') as not_resolved_in,
    string_agg(path, ' ' order by file_id) as files
from reports
group by run, instance_id
having count(*) >= 2 and count(distinct status) >= 2
order by run, instance_id
