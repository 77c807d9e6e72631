-- sft_samples_outcomes_v1: outcomes from the samples database (SPEC §3.1, §3.4 outcome):
-- evaluator success and how each run finished.
-- Grain key: finish_reason.
-- Grain: one row per finish reason. Columns: finish_reason; instances; successes;
--   not_graded (instances with neither test-node count: no test graded, kept out of the
--   medians, never counted as 0); median_fail_to_pass and median_pass_to_pass (declared
--   test nodes over the instances that have the count, linear interpolation).
select
    coalesce(finish_reason, '(unknown)') as finish_reason,
    count(*) as instances,
    count(*) filter (where success) as successes,
    count(*) filter (where fail_to_pass is null and pass_to_pass is null) as not_graded,
    quantile_cont(fail_to_pass, 0.5) as median_fail_to_pass,
    quantile_cont(pass_to_pass, 0.5) as median_pass_to_pass
from sft_samples
group by finish_reason
