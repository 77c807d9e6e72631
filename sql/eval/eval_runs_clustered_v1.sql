-- eval_runs_clustered_v1: each run's resolve rate on its graded instances with a
-- repo-clustered 95% interval (issue 31): instances of one repository are not independent,
-- so an interval that treats them as such is too narrow when outcomes cluster by repository.
-- Method: the cluster-robust (CR1) standard error of a mean, as statsmodels' OLS of the
--   outcome on a constant with cov_type='cluster' computes it: with n graded instances
--   (y = 1 resolved, else 0), rate p = mean(y), G repositories (eval_instance_repos_v1) and
--   S_g = sum over repository g of (y - p): se_clustered = sqrt(G / (G - 1) * sum_g S_g^2) / n;
--   the interval is p -/+ 1.959963984540054 * se_clustered, clamped to [0, 1]. se_iid =
--   sqrt(p (1 - p) / (n - 1)) is the same estimator with every instance its own cluster
--   (instances independent), so design_effect = (se_clustered / se_iid)^2 is 1 when no
--   repository holds two instances, and > 1 when outcomes cluster by repository.
-- Grain key: run.
-- Grain: one row per run with a graded instance (eval_instances_v2.graded).
-- Columns: graded (n); repos (G); unknown_repos (graded instances whose repository the id does
--   not name, each its own cluster); resolved; resolve_rate (p, as eval_runs_v3.resolve_rate);
--   se_iid (null with one instance); se_clustered and ci_low, ci_high (null with one
--   repository); design_effect (null when se_iid is 0 or null, or se_clustered null).
with graded as (
    select i.run, i.instance_id, r.repo, r.repo_known, case when i.resolved then 1.0 else 0.0 end as y
    from eval_instances_v2 as i
    join eval_instance_repos_v1 as r using (instance_id)
    where i.graded
),
rates as (
    select
        run,
        count(*) as n,
        count(distinct repo) as repos,
        count(*) filter (where not repo_known) as unknown_repos,
        sum(y) as resolved,
        avg(y) as rate
    from graded
    group by run
),
sums as (
    select g.run, g.repo, sum(g.y - r.rate) as s
    from graded as g
    join rates as r using (run)
    group by g.run, g.repo
),
meat as (
    select run, sum(s * s) as m from sums group by run
),
errors as (
    select
        r.*,
        case when r.n > 1 then sqrt(r.rate * (1 - r.rate) / (r.n - 1)) end as se_iid,
        case when r.repos > 1 then sqrt(r.repos / (r.repos - 1) * m.m) / r.n end as se_clustered
    from rates as r
    join meat as m using (run)
)
select
    run,
    n as graded,
    repos,
    unknown_repos,
    resolved::bigint as resolved,
    rate as resolve_rate,
    se_iid,
    se_clustered,
    -- greatest / least skip a NULL in DuckDB: no interval without a clustered SE
    case when se_clustered is not null then greatest(0.0, rate - 1.959963984540054 * se_clustered) end as ci_low,
    case when se_clustered is not null then least(1.0, rate + 1.959963984540054 * se_clustered) end as ci_high,
    case when se_iid > 0 then (se_clustered / se_iid) * (se_clustered / se_iid) end as design_effect
from errors
order by run
