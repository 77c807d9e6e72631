//! The corpus rules as pure functions, and their DuckDB scalar-function adapters.
//!
//! Each rule is first a plain Rust function with table-driven tests ([`fence`],
//! [`normalize`], [`compress`]); [`udf`] registers them on a connection as `sph_*`
//! functions. Refine calls the functions from SQL and stores their verdicts as columns,
//! so views never need them.

pub mod compress;
pub mod fence;
pub mod normalize;
pub mod udf;
