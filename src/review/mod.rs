//! The review corpus (code refinement examples mined from code review, SPEC §2).
//!
//! Pipeline: [`adapters`] parse a source format into [`model::Example`]s, [`load`] writes
//! them through [`store`] in one transaction bound in the ingest log, [`config`] holds
//! per-org service accounts and windows, and [`refine`] turns the built examples into a
//! corpus version with stored rule verdicts. Report views in `sql/review/` read those
//! tables.

pub mod adapters;
pub mod config;
pub mod load;
pub mod model;
pub mod refine;
pub mod store;
