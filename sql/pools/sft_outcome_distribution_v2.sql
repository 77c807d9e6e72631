-- sft_outcome_distribution_v2: evaluator outcomes of the instances with a view or a
-- trajectory (SPEC §3.4 outcome), with infra failures kept apart (issue 31): a report whose
-- `infra_failure` is true (SWE-bench PR #594) graded the environment, not the model, so it is
-- in no row of the distribution and in no total but all_infra_failures.
-- Grain key: fail_to_pass.
-- Grain: one row per fail-to-pass node count (the distribution), with totals repeated;
--   reports that graded no test (patch None or not applied: no tests_status, stored as NULL
--   counts) form their own row with fail_to_pass NULL and graded false; with no report other
--   than infra failures, no row.
-- Columns: graded (false for the ungraded row); fail_to_pass (declared fail-to-pass test
--   nodes: success + failure; NULL when not graded); instances (with that count); resolved
--   (of those); all_instances (reports that are not infra failures), all_resolved,
--   all_not_graded (of those, reports that graded no test); all_infra_failures (reports left
--   out as infra failures); median_pass_to_pass (median of passed pass-to-pass nodes over the
--   graded reports only, linear interpolation). A resolve rate is all_resolved / all_instances.
with reported as (
    select o.* from sft_outcomes as o
    where o.instance_id in (select instance_id from sft_views union select instance_id from sft_trajectories)
),
o as (
    select * from reported where not coalesce(infra_failure, false)
)
select
    fail_to_pass_success is not null as graded,
    fail_to_pass_success + fail_to_pass_failure as fail_to_pass,
    count(*) as instances,
    count(*) filter (where resolved) as resolved,
    (select count(*) from o) as all_instances,
    (select count(*) filter (where resolved) from o) as all_resolved,
    (select count(*) filter (where fail_to_pass_success is null) from o) as all_not_graded,
    (select count(*) filter (where infra_failure) from reported) as all_infra_failures,
    (select quantile_cont(pass_to_pass_success, 0.5) from o where pass_to_pass_success is not null) as median_pass_to_pass
from o
group by all
