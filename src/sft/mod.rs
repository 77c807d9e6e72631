//! The SFT corpus (agent trajectories with loss masks, SPEC §3).
//!
//! [`trajectories`] reads the public harness formats into one message schema
//! ([`schema`]; one file per format under [`formats`], behind one trait) and holds the
//! shell-command rule (the git-history rule is [`crate::shell`]'s); [`outcomes`] reads
//! SWE-bench `report.json`; [`heuristics`] reads test commands, file
//! writes and pass/fail summaries; [`store`] loads trajectories and SWE-bench outcomes
//! with those verdicts stored as columns, several trajectories of one instance kept as
//! numbered attempts ([`attempts`]); [`render`] turns messages into tokenized views
//! with a chat template (verified token for token against Hugging Face's
//! `apply_chat_template`); [`build`] renders loaded trajectories with a supervision
//! policy; [`views`] loads views in the field's conventions; [`segments`] cuts their
//! message spans into header, blocks, text and end of turn; [`family`] names the
//! repository family of an instance (data first, then the id's scheme); [`pools`] loads pool roles,
//! the split manifest and a samples database. The contract checks, the per-instance
//! tables and the pool audit are views in `sql/sft/` and `sql/pools/`.

pub mod attempts;
pub mod build;
pub mod family;
pub mod formats;
pub mod heuristics;
pub mod outcomes;
pub mod pools;
pub mod render;
pub mod schema;
pub mod segments;
pub mod store;
pub mod trajectories;
pub mod views;
