-- eval_pair_instances_v1: two runs on each instance they share (SPEC §3.5, issue 11).
-- Grain key: run_a, run_b, instance_id.
-- Grain: one row per (run_a, run_b, instance_id), run_a < run_b by name, for instances with
--   an outcome (explicit or implied, eval_instances_v1) in both runs.
-- Columns: a_resolved, b_resolved; cell: both / only_a / only_b / neither.
select
    a.run as run_a,
    b.run as run_b,
    a.instance_id,
    a.resolved as a_resolved,
    b.resolved as b_resolved,
    case
        when a.resolved and b.resolved then 'both'
        when a.resolved then 'only_a'
        when b.resolved then 'only_b'
        else 'neither'
    end as cell
from eval_instances_v1 as a
join eval_instances_v1 as b on b.instance_id = a.instance_id and a.run < b.run
where a.outcome is not null and b.outcome is not null
