-- eval_repeats_v2: independent repeats of one model and harness (SPEC §3.5, issue 11).
-- Same rows as eval_repeats_v1, read from eval_runs_v2 and eval_repeat_instances_v2 (the
-- same rows as their _v1s, portable), so it runs on Spark too (README "Beyond one machine").
-- Grain key: model, harness.
-- Grain: one row per (model, harness) with 2+ runs that are not continued (see
--   eval_repeat_instances_v2, whose instances — those with an outcome in every repeat — are
--   the ones counted here).
-- Columns: runs (the run names, sorted, space-separated); n_runs; instances (shared);
--   mean_resolve_rate, sd_resolve_rate (sample standard deviation, n_runs - 1 in the
--   denominator), min_resolve_rate, max_resolve_rate: of each run's resolved share of the
--   shared instances (0..1); flips: instances resolved by some repeats and not others;
--   always_resolved, never_resolved.
with shared as (
    select * from eval_repeat_instances_v2
),
members as (
    select r.run, r.model, r.harness
    from eval_runs_v2 as r
    join (select distinct model, harness from shared) as g
      on g.model = r.model and g.harness is not distinct from r.harness
    where not r.continued
),
per_run as (
    select m.model, m.harness, m.run, count(*) filter (where i.resolved) / count(*) as rate
    from members as m
    join eval_instances_v1 as i on i.run = m.run
    join shared as s on s.model = m.model and s.harness is not distinct from m.harness and s.instance_id = i.instance_id
    group by m.model, m.harness, m.run
),
rates as (
    select model, harness, string_agg(run, ' ' order by run) as runs, count(*) as n_runs,
           avg(rate) as mean_resolve_rate, stddev_samp(rate) as sd_resolve_rate,
           min(rate) as min_resolve_rate, max(rate) as max_resolve_rate
    from per_run
    group by model, harness
),
instances as (
    select model, harness, count(*) as instances, count(*) filter (where flips) as flips,
           count(*) filter (where resolved_by = runs) as always_resolved,
           count(*) filter (where resolved_by = 0) as never_resolved
    from shared
    group by model, harness
)
select r.model, r.harness, r.runs, r.n_runs, i.instances, r.mean_resolve_rate, r.sd_resolve_rate,
       r.min_resolve_rate, r.max_resolve_rate, i.flips, i.always_resolved, i.never_resolved
from rates as r
join instances as i on i.model = r.model and i.harness is not distinct from r.harness
order by r.model, r.harness
