-- eval_pair_bootstrap_v1: eval_pair_bootstrap_at_v1 at 2,000 resamples and seed 0 (issue 31):
-- the paired bootstrap interval of the difference in resolve rate that the `eval-pairs`
-- reports give beside the exact McNemar test. Another seed or count: call the macro.
-- Grain key: run_a, run_b.
-- Grain: one row per pair of runs (run_a < run_b) with a shared graded instance.
-- Columns: as eval_pair_bootstrap_at_v1.
select * from eval_pair_bootstrap_at_v1(2000, 0)
