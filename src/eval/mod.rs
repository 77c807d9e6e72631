//! Evaluation runs side by side (SPEC §3.5): `load run NAME --model M [--harness H]
//! [--continues OTHER] FILES/DIRS...`.
//!
//! A *run* is a named set of trajectories on a task set with its evaluator outcomes. Its
//! files are told apart by content ([`files`]): per-instance `report.json` in both
//! SWE-bench shapes (`infra_failure` included), the SWE-bench harness's run report (schema
//! version 2) and sb-cli's (with id lists, or counts only), the older harness summary,
//! mini-swe-agent batch `exit_statuses_*.yaml`, and trajectories in every format the SFT
//! readers know ([`crate::sft::trajectories::detect_and_read`]), Inspect AI logs
//! (`.eval` and `.json`, one run per epoch: [`inspect`]); run-level files that hold
//! no outcome are skipped by name ([`files::KNOWN_RUN_FILES`]). A run loads whole or not at
//! all: every file is read and checked, then all are written in one transaction bound in the
//! ingest log ([`load::load_run`]); a trajectory is kept as its finish and heuristic
//! verdicts ([`symptoms`]), not as messages.
//!
//! The figures are views in `sql/eval/`. The current ones keep an outcome class per
//! instance — resolved, unresolved, empty patch, evaluator error, infra failure, not run —
//! and never count the last three as failures: `eval_instances_v2`, `eval_runs_v3` (resolved
//! of graded and of attempted, each with a Wilson interval; the harness's own figure apart),
//! `eval_run_populations_v1` (named / run report / trajectories), `eval_pair_instances_v2`
//! and `eval_pairs_v2` (shared graded instances, attrition, exact McNemar, Holm, a verdict),
//! `eval_pair_bootstrap_at_v1` (a seeded paired bootstrap interval), `eval_repeat_instances_v3`
//! and `eval_pass_k_v1` (pass@k, pass^k, consistency over true repeats),
//! `eval_item_analysis_v1`, `eval_grader_flakes_v1`; `eval_symptoms_v1` (run × heuristic
//! symptom). The earlier `eval_instances_v1`, `eval_runs_v1`/`_v2`, `eval_pairs_v1`,
//! `eval_repeats_v1`/`_v2` and `eval_pass_at_k_v1`/`_v2` stay registered with their meaning
//! (an evaluator error counted as not resolved).

pub mod autocoderover;
pub mod files;
pub mod inspect;
pub mod load;
pub mod symptoms;
