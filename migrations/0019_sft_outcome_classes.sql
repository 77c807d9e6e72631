-- 0019 SFT outcome classes (issue 31): a SWE-bench report.json that says the environment
-- broke (`infra_failure: true`, SWE-bench PR #594) or that the prediction had no patch
-- (`patch_is_None: true`) is kept as such, so an instance whose grading failed is never
-- counted as a model failure by the SFT views (sft_instances_v2, sft_outcome_distribution_v2).
-- * sft_outcomes.infra_failure: the report's `infra_failure` (null when the report has none,
--   and for outcomes loaded before 0019);
-- * sft_outcomes.infra_failure_reason: its `infra_failure_reason` (e.g. out_of_memory), when
--   given;
-- * sft_outcomes.empty_patch: the report's `patch_is_None` (null when absent or loaded before
--   0019).
alter table sft_outcomes add column infra_failure boolean;
alter table sft_outcomes add column infra_failure_reason varchar;
alter table sft_outcomes add column empty_patch boolean;
