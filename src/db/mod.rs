//! The database file: open, migrate, register functions and views.
//!
//! [`open`] is the only way sphragis gets a connection: it applies pending migrations,
//! registers every `sph_` scalar function and (re)creates every report view, so all
//! commands see the same schema, functions and view versions.

pub mod ingest;
pub mod migrations;
pub mod views;

use anyhow::{Context, Result};
use duckdb::Connection;
use std::path::Path;

/// Opens (creating if needed) the database at `path`, or an in-memory database for
/// `:memory:`, migrated and with functions and views registered.
///
/// Errors: the file cannot be opened (locked by another process, not a DuckDB file),
/// a migration or view was edited after it was recorded, or a migration fails.
pub fn open(path: &Path) -> Result<Connection> {
    let conn = if path.as_os_str() == ":memory:" {
        Connection::open_in_memory()?
    } else {
        Connection::open(path).with_context(|| format!("{}: cannot open as a DuckDB database", path.display()))?
    };
    prepare(&conn).with_context(|| format!("{}: preparing the database", path.display()))?;
    Ok(conn)
}

/// Migrates `conn` and registers functions and views on it.
pub fn prepare(conn: &Connection) -> Result<()> {
    migrations::apply(conn)?;
    crate::rules::udf::register_all(conn)?;
    views::register(conn)?;
    Ok(())
}
