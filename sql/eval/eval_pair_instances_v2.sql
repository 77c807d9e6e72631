-- eval_pair_instances_v2: two runs instance by instance, on every instance either names
-- (issue 31; SPEC §3.5). Unlike eval_pair_instances_v1, an instance is shared only when both
-- runs graded it (eval_instances_v2.graded: an infra failure, an evaluator error or an instance
-- never run is never a failure), and the instances one run lacks are kept and named, so the
-- attrition of a comparison is stated.
-- Grain key: run_a, run_b, instance_id.
-- Grain: one row per pair of runs (run_a < run_b, every pair of eval_run_specs) and instance
--   named by either run.
-- Columns:
--   a_graded, b_graded: graded in that run (false: not named, or named and left out);
--   a_resolved, b_resolved: resolved in that run (null: not graded there);
--   shared: graded in both; cell: both / only_a / only_b / neither (resolved in both, A only,
--     B only, neither) for a shared instance; else graded_in_a_only / graded_in_b_only /
--     graded_in_neither (the attrition).
with pairs as (
    select a.run as run_a, b.run as run_b
    from eval_run_specs as a
    join eval_run_specs as b on a.run < b.run
),
named as (
    select p.run_a, p.run_b, i.instance_id
    from pairs as p
    join eval_instances_v2 as i on i.run = p.run_a or i.run = p.run_b
    group by p.run_a, p.run_b, i.instance_id
),
joined as (
    select
        n.run_a,
        n.run_b,
        n.instance_id,
        coalesce(a.graded, false) as a_graded,
        coalesce(b.graded, false) as b_graded,
        case when a.graded then a.resolved end as a_resolved,
        case when b.graded then b.resolved end as b_resolved
    from named as n
    left join eval_instances_v2 as a on a.run = n.run_a and a.instance_id = n.instance_id
    left join eval_instances_v2 as b on b.run = n.run_b and b.instance_id = n.instance_id
)
select
    run_a,
    run_b,
    instance_id,
    a_graded,
    b_graded,
    a_resolved,
    b_resolved,
    a_graded and b_graded as shared,
    case
        when a_graded and b_graded and a_resolved and b_resolved then 'both'
        when a_graded and b_graded and a_resolved then 'only_a'
        when a_graded and b_graded and b_resolved then 'only_b'
        when a_graded and b_graded then 'neither'
        when a_graded then 'graded_in_a_only'
        when b_graded then 'graded_in_b_only'
        else 'graded_in_neither'
    end as cell
from joined
