-- eval_pass_k_v1: pass@k, pass^k and consistency over true repeats (issue 31; SPEC §3.5), on
-- the instances every repeat graded (eval_repeat_instances_v3; continued runs never count).
-- Per instance with n repeats of which c resolved it:
--   pass@k = 1 - C(n-c, k) / C(n, k) (at least one of k repeats resolves it; the unbiased
--     estimator of Chen et al. 2021, "Evaluating Large Language Models Trained on Code");
--   pass^k = C(c, k) / C(n, k) (all k repeats resolve it; Yao et al. 2024, tau-bench),
-- each averaged over the instances; the ratios are products prod_{j=0..k-1} (n-c-j) / (n-j)
-- and prod_{j=0..k-1} (c-j) / (n-j) (0 once a factor is 0), as in eval_pass_at_k_v2.
-- Grain key: model, harness, k.
-- Grain: one row per (model, harness, k), k = 1 .. n (the group's runs).
-- Columns: n_runs; instances; pass_at_k, pass_hat_k (0..1); consistent_instances: instances
--   every repeat resolved or none did (c = 0 or c = n); consistency = consistent_instances /
--   instances; flips = instances - consistent_instances.
with shared as (
    select * from eval_repeat_instances_v3
),
groups as (
    select distinct model, harness, runs from shared
),
steps as (
    select model, harness, runs, unnest(generate_series(0, runs - 1)) as j from groups
),
per_instance as (
    select k.model, k.harness, k.runs, k.j + 1 as k, s.instance_id, s.resolved_by,
           1 - list_reduce(list((s.runs - s.resolved_by - f.j)::double / (s.runs - f.j)), lambda acc, x: acc * x, 1.0::double)
               as pass_at,
           list_reduce(list(greatest(s.resolved_by - f.j, 0)::double / (s.runs - f.j)), lambda acc, x: acc * x, 1.0::double)
               as pass_hat
    from steps as k
    join shared as s on s.model = k.model and s.harness is not distinct from k.harness
    join steps as f on f.model = k.model and f.harness is not distinct from k.harness and f.j <= k.j
    group by k.model, k.harness, k.runs, k.j, s.instance_id, s.resolved_by
)
select
    model,
    harness,
    k,
    any_value(runs) as n_runs,
    count(*) as instances,
    avg(pass_at) as pass_at_k,
    avg(pass_hat) as pass_hat_k,
    count(*) filter (where resolved_by = 0 or resolved_by = runs) as consistent_instances,
    count(*) filter (where resolved_by = 0 or resolved_by = runs) / count(*) as consistency,
    count(*) filter (where resolved_by > 0 and resolved_by < runs) as flips
from per_instance
group by model, harness, k
order by model, harness, k
