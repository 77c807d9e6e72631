-- eval_pair_clustered_v1: the difference in resolve rate of two runs on the instances both
-- graded, with a repo-clustered 95% interval (issue 31): the paired difference per instance
-- d = a_resolved - b_resolved (1, 0 or -1) is averaged, and its standard error clustered by
-- repository (eval_instance_repos_v1), so that one repository's instances moving together
-- are not counted as independent evidence.
-- Method: as eval_runs_clustered_v1, on d: with n shared instances, D = mean(d), G
--   repositories and S_g = sum over repository g of (d - D): se_clustered =
--   sqrt(G / (G - 1) * sum_g S_g^2) / n (statsmodels' OLS of d on a constant, cov_type
--   'cluster'); the interval is D -/+ 1.959963984540054 * se_clustered, clamped to [-1, 1].
-- Grain key: run_a, run_b.
-- Grain: one row per pair of runs (run_a < run_b) with a shared graded instance
--   (eval_pair_instances_v2.shared).
-- Columns: shared (n); repos (G); difference (D: a's rate - b's on the shared instances, as
--   eval_pairs_v2.difference); se_clustered, ci_low, ci_high (null with one repository);
--   excludes_zero (the interval lies wholly above or below 0; null without an interval).
with shared as (
    select
        p.run_a,
        p.run_b,
        r.repo,
        (case when p.a_resolved then 1.0 else 0.0 end) - (case when p.b_resolved then 1.0 else 0.0 end) as d
    from eval_pair_instances_v2 as p
    join eval_instance_repos_v1 as r using (instance_id)
    where p.shared
),
means as (
    select run_a, run_b, count(*) as n, count(distinct repo) as repos, avg(d) as difference
    from shared
    group by run_a, run_b
),
sums as (
    select s.run_a, s.run_b, s.repo, sum(s.d - m.difference) as s
    from shared as s
    join means as m on m.run_a = s.run_a and m.run_b = s.run_b
    group by s.run_a, s.run_b, s.repo
),
meat as (
    select run_a, run_b, sum(s * s) as m from sums group by run_a, run_b
),
errors as (
    select
        x.*,
        case when x.repos > 1 then sqrt(x.repos / (x.repos - 1) * m.m) / x.n end as se_clustered
    from means as x
    join meat as m on m.run_a = x.run_a and m.run_b = x.run_b
),
bounds as (
    select
        *,
        -- greatest / least skip a NULL in DuckDB: no interval without a clustered SE
        case when se_clustered is not null then greatest(-1.0, difference - 1.959963984540054 * se_clustered) end as ci_low,
        case when se_clustered is not null then least(1.0, difference + 1.959963984540054 * se_clustered) end as ci_high
    from errors
)
select
    run_a,
    run_b,
    n as shared,
    repos,
    difference,
    se_clustered,
    ci_low,
    ci_high,
    ci_low > 0 or ci_high < 0 as excludes_zero
from bounds
order by run_a, run_b
