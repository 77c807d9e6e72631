//! The SFT corpus (agent trajectories with loss masks, SPEC §3).
//!
//! [`trajectories`] reads six public harness formats into one message schema and holds
//! the shell-command and git-history rules; [`store`] loads trajectories and SWE-bench
//! outcomes into the database; [`render`] turns messages into tokenized views with a
//! chat template (verified token for token against Hugging Face's
//! `apply_chat_template`); [`build`] renders loaded trajectories with a supervision
//! policy; [`views`] loads views in the field's conventions. The contract checks and
//! the per-instance table are views in `sql/sft/`. The pool audit (SPEC §3.3-3.4) is
//! not built yet.

pub mod render;
pub mod build;
pub mod heuristics;
pub mod pools;
pub mod store;
pub mod trajectories;
pub mod views;
