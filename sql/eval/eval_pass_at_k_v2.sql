-- eval_pass_at_k_v2: pass@k over independent repeats (SPEC §3.5, issue 11), by the unbiased
-- estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on Code"):
-- per instance with n repeats of which c resolved it, pass@k = 1 - C(n-c, k) / C(n, k),
-- averaged over the instances. C(n-c, k) / C(n, k) is computed as the product
-- prod_{j=0..k-1} (n-c-j) / (n-j) (0 once n-c < k).
-- Same rows as eval_pass_at_k_v1, read from eval_repeat_instances_v2 (the same rows as
-- eval_repeat_instances_v1, portable), with the steps j = 0 .. n-1 unnested from
-- generate_series in the select list (v1 reads range() as a table in FROM, once per row,
-- which Spark SQL has not) and the product of the factors as list_reduce over their list
-- (Spark SQL has no product aggregate; the factors are multiplied in the list's order, so
-- a product may differ from v1's in its last bits), so it runs on Spark too (README
-- "Beyond one machine").
-- Grain key: model, harness, k.
-- Grain: one row per (model, harness, k), k = 1 .. n (the group's runs), over the instances
--   of eval_repeat_instances_v2 (an outcome in every repeat; continued runs excluded).
-- Columns: n_runs; instances; pass_at_k (0..1).
with shared as (
    select * from eval_repeat_instances_v2
),
groups as (
    select distinct model, harness, runs from shared
),
steps as (
    select model, harness, runs, unnest(generate_series(0, runs - 1)) as j from groups
),
per_instance as (
    select k.model, k.harness, k.runs, k.j + 1 as k, s.instance_id,
           1 - list_reduce(list((s.runs - s.resolved_by - f.j)::double / (s.runs - f.j)), lambda acc, x: acc * x, 1.0::double)
               as pass
    from steps as k
    join shared as s on s.model = k.model and s.harness is not distinct from k.harness
    join steps as f on f.model = k.model and f.harness is not distinct from k.harness and f.j <= k.j
    group by k.model, k.harness, k.runs, k.j, s.instance_id
)
select model, harness, k, any_value(runs) as n_runs, count(*) as instances, avg(pass) as pass_at_k
from per_instance
group by model, harness, k
order by model, harness, k
