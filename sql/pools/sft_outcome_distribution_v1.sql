-- sft_outcome_distribution_v1: evaluator outcomes of the instances with a view (SPEC §3.4 outcome).
-- Grain key: fail_to_pass.
-- Grain: one row per fail-to-pass node count (the distribution), with totals repeated;
--   instances whose report graded no test (patch None or not applied: no tests_status,
--   stored as NULL counts) form their own row with fail_to_pass NULL and graded false.
-- Columns: graded (false for the ungraded row); fail_to_pass (declared fail-to-pass test
--   nodes: success + failure; NULL when not graded); instances (with that count);
--   resolved (of those); all_instances, all_resolved, all_not_graded (instances whose
--   report graded no test) and median_pass_to_pass (median of passed pass-to-pass nodes
--   over the graded instances only, linear interpolation).
with o as (
    select o.* from sft_outcomes as o
    where o.instance_id in (select instance_id from sft_views union select instance_id from sft_trajectories)
)
select
    fail_to_pass_success is not null as graded,
    fail_to_pass_success + fail_to_pass_failure as fail_to_pass,
    count(*) as instances,
    count(*) filter (where resolved) as resolved,
    (select count(*) from o) as all_instances,
    (select count(*) filter (where resolved) from o) as all_resolved,
    (select count(*) filter (where fail_to_pass_success is null) from o) as all_not_graded,
    (select quantile_cont(pass_to_pass_success, 0.5) from o where pass_to_pass_success is not null) as median_pass_to_pass
from o
group by all
