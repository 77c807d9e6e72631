//! Evaluation runs side by side (SPEC §3.5): `load run NAME --model M [--harness H]
//! [--continues OTHER] FILES/DIRS...`.
//!
//! A *run* is a named set of trajectories on a task set with its evaluator outcomes. Its
//! files are told apart by content ([`files`]): per-instance `report.json` in both
//! SWE-bench shapes, run-level id lists (sb-cli run report, the older harness summary),
//! mini-swe-agent batch `exit_statuses_*.yaml`, and trajectories in every format the SFT
//! readers know ([`crate::sft::trajectories::detect_and_read`]). Each file is one
//! transaction bound in the ingest log ([`load`]); a trajectory is kept as its finish and
//! heuristic verdicts ([`symptoms`]), not as messages.
//!
//! The figures are views in `sql/eval/`: `eval_instances_v1` (one outcome per run and
//! instance: explicit or implied, or none), `eval_runs_v1` (resolved k/n with a Wilson
//! interval, finishes, continued runs), `eval_symptoms_v1` (run × heuristic symptom),
//! `eval_pairs_v1` / `eval_pair_instances_v1` (two runs on their shared instances, exact
//! McNemar p), `eval_repeats_v1`, `eval_repeat_instances_v1` and `eval_pass_at_k_v1`
//! (independent repeats of one model and harness; continued runs never count). The
//! `runs` report reads `eval_runs_v2`, `eval_repeats_v2` (over `eval_repeat_instances_v2`)
//! and `eval_pass_at_k_v2`: the same rows as their `_v1`s, written so that they run on
//! Spark too (README "Beyond one machine").

pub mod files;
pub mod load;
pub mod symptoms;
