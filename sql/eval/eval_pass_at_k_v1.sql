-- eval_pass_at_k_v1: pass@k over independent repeats (SPEC §3.5, issue 11), by the unbiased
-- estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on Code"):
-- per instance with n repeats of which c resolved it, pass@k = 1 - C(n-c, k) / C(n, k),
-- averaged over the instances. C(n-c, k) / C(n, k) is computed as the product
-- prod_{j=0..k-1} (n-c-j) / (n-j) (0 once n-c < k).
-- Grain key: model, harness, k.
-- Grain: one row per (model, harness, k), k = 1 .. n (the group's runs), over the instances
--   of eval_repeat_instances_v1 (an outcome in every repeat; continued runs excluded).
-- Columns: n_runs; instances; pass_at_k (0..1).
with shared as (
    select * from eval_repeat_instances_v1
),
ks as (
    select distinct s.model, s.harness, s.runs, k.k
    from shared as s, range(1, s.runs + 1) as k(k)
),
per_instance as (
    select ks.model, ks.harness, ks.runs, ks.k, s.instance_id,
           1 - (select product((s.runs - s.resolved_by - j)::double / (s.runs - j)) from range(0, ks.k) as r(j)) as pass
    from ks
    join shared as s on s.model = ks.model and s.harness is not distinct from ks.harness
)
select model, harness, k, any_value(runs) as n_runs, count(*) as instances, avg(pass) as pass_at_k
from per_instance
group by model, harness, k
order by model, harness, k
