//! The review corpus (code refinement examples mined from code review, SPEC §2).
//!
//! Pipeline: [`adapters`] parse a source format into [`model::Example`]s, [`load`] writes
//! them through [`store`] in one transaction bound in the ingest log, [`config`] holds
//! per-org service accounts, windows and registered halves, [`refine`] turns the built
//! examples into a corpus version with stored rule verdicts, [`splits`] places a
//! version's kept examples in windows and halves, [`freeze`] writes criteria and
//! manifests and reproduces a frozen version, [`sealed`] keeps the sealed window's content
//! in a companion database, [`labels`] loads label-audit items, and [`diff`] compares two
//! versions.
//! Report views in `sql/review/` and `sql/splits/` read those tables.

pub mod adapters;
pub mod config;
pub mod diff;
pub mod freeze;
pub mod labels;
pub mod load;
pub mod model;
pub mod refine;
pub mod splits;
pub mod store;
