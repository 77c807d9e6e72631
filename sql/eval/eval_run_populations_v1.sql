-- eval_run_populations_v1: a run's figures on each population it can be read on, so that
-- no figure mixes two (issue 31; SPEC §3.5). A harness's run-level report usually covers the
-- whole benchmark (300 or 500 instances) while the trajectories loaded are of some of them:
-- "28 resolved of 48" over the union of both is neither the run's rate nor the rate on its
-- trajectories.
-- Grain key: run, population.
-- Grain: one row per run and population that has instances:
--   named: every instance any file of the run names (eval_runs_v3's figures);
--   run_report: the instances a run-level report lists (harness run report, sb-cli report; the
--     older summary lists resolved ids only and states no population); for a count-only report
--     (sb-cli#27), its stated counts;
--   trajectories: the instances with a trajectory.
-- Columns:
--   instances: the population's size (run_report of a count-only report: total_instances);
--   graded, resolved, attempted (eval_instances_v2; null for a count-only report, whose
--     classes are unknown); resolve_rate = resolved / graded; resolve_rate_attempted =
--     resolved / attempted; resolve_rate_population = resolved / instances (the harness's
--     "resolved (total)");
--   evaluator_errors, infra_failures, not_run, no_outcome: left out of graded, by class;
--   counts_only: the figures are a count-only report's, not per instance;
--   same_as_named: the population is every named instance (its figures are eval_runs_v3's).
with i as (
    select * from eval_instances_v2
),
named as (
    select run, count(*) as named from i group by run
),
tagged as (
    select i.*, p.population
    from i
    join (values ('named'), ('run_report'), ('trajectories')) as p(population)
      on p.population = 'named'
      or (p.population = 'run_report' and i.in_run_report)
      or (p.population = 'trajectories' and i.has_trajectory)
),
per_instance as (
    select
        run,
        population,
        count(*) as instances,
        count(*) filter (where graded) as graded,
        count(*) filter (where resolved) as resolved,
        count(*) filter (where attempted) as attempted,
        count(*) filter (where outcome = 'error') as evaluator_errors,
        count(*) filter (where outcome = 'infra_failure') as infra_failures,
        count(*) filter (where outcome = 'not_run') as not_run,
        count(*) filter (where outcome is null) as no_outcome
    from tagged
    group by run, population
),
counts_only as (
    select
        run,
        'run_report' as population,
        arg_max(total, file_id) as instances,
        arg_max(resolved, file_id) as resolved,
        arg_max(error, file_id) as evaluator_errors,
        arg_max(infra_failure, file_id) as infra_failures
    from eval_run_reports
    where not per_instance
      and run not in (select run from eval_listings)
    group by run
),
rows as (
    select run, population, instances, graded, resolved, attempted, evaluator_errors, infra_failures, not_run,
           no_outcome, false as counts_only
    from per_instance
    union all
    select run, population, instances, null, resolved, null, evaluator_errors, infra_failures, null, null, true
    from counts_only
)
select
    r.run,
    r.population,
    r.instances,
    r.graded,
    r.resolved,
    r.attempted,
    case when r.graded > 0 then r.resolved / r.graded end as resolve_rate,
    case when r.attempted > 0 then r.resolved / r.attempted end as resolve_rate_attempted,
    case when r.instances > 0 then r.resolved / r.instances end as resolve_rate_population,
    r.evaluator_errors,
    r.infra_failures,
    r.not_run,
    r.no_outcome,
    r.counts_only,
    not r.counts_only and r.instances = n.named as same_as_named
from rows as r
left join named as n on n.run = r.run
order by r.run, case r.population when 'named' then 1 when 'run_report' then 2 else 3 end
