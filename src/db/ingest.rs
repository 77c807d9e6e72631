//! The ingest log and transactional loads (SPEC §1 principle 4).
//!
//! A load opens one transaction, reserves a `file_id`, streams the file through a
//! [`ReadAhead`](crate::hash::ReadAhead) (read and SHA-256 on another thread) into the
//! loader, and records the file
//! (path, bytes, SHA-256, rows, loader version) before commit. If the same bytes were
//! already loaded by the same kind of loader, the transaction is rolled back and the
//! earlier load is reported: nothing is doubled. Any error rolls everything back.

use anyhow::{Context, Result};
use crate::hash::HashingReader;
use duckdb::Connection;
use std::fmt;
use std::io::Seek;
use std::path::{Path, PathBuf};

/// An input error that names the file, the line (or record) and the field.
///
/// Display: `<path>:<line>: field `<field>`: <message>`, omitting what is unknown.
#[derive(Debug, Clone)]
pub struct InputError {
    pub path: PathBuf,
    /// 1-based line (JSONL, or the line of a JSON document where the parser stopped),
    /// or CSV record line.
    pub line: Option<u64>,
    /// Dotted path of the field, e.g. `comments[0].message`.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// An error at `line` (1-based) of `path`.
    pub fn at(path: &Path, line: Option<u64>, field: Option<&str>, message: impl Into<String>) -> Self {
        Self { path: path.to_path_buf(), line, field: field.map(str::to_string), message: message.into() }
    }
}

/// A file that was loaded, as recorded in `ingest_log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFile {
    pub file_id: i32,
    pub kind: String,
    pub path: String,
    pub bytes: i64,
    pub sha256: String,
    pub rows: i64,
    /// For a kind loaded again on purpose (a registration re-applied): the earlier load
    /// of the same bytes.
    pub same_bytes_as: Option<i32>,
}

/// What a load did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    /// The file was written under a new `file_id`.
    Loaded(LoadedFile),
    /// The same bytes were loaded before by the same kind of loader: nothing was written.
    AlreadyLoaded { earlier: LoadedFile, path: String },
}

/// What a loader reports back after streaming a file.
pub struct LoaderResult {
    /// Records written.
    pub rows: i64,
    /// Bytes read and their SHA-256.
    pub bytes: u64,
    pub sha256: String,
}

/// Kinds whose same bytes are applied again when loaded again (a configuration that
/// is re-registered), instead of being skipped as a duplicate.
pub const REAPPLIED_KINDS: &[&str] = &["orgs", "pools", "manifest"];

/// Kinds whose file path is part of what they say (a SWE-bench `report.json` names its
/// instance by its folder): the same bytes at another path are another input.
pub const PATH_BOUND_KINDS: &[&str] = &["outcomes"];

/// Runs `load` inside one transaction and records the file in the ingest log.
///
/// `load` gets the connection, the reserved `file_id` and the opened file; it must
/// read the file through a [`ReadAhead`](crate::hash::ReadAhead) (or a
/// [`HashingReader`]) and return
/// its [`LoaderResult`]. `kind` names the loader, `loader_version` its mapping
/// version, `options` any mapping options (JSON text).
///
/// Errors: the file cannot be opened, or `load` fails; either way the database is
/// left exactly as before.
pub fn load_file(
    conn: &Connection,
    path: &Path,
    kind: &str,
    loader_version: &str,
    options: Option<&str>,
    load: impl FnOnce(&Connection, i32, std::fs::File) -> Result<LoaderResult>,
) -> Result<LoadOutcome> {
    let file = std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let meta = file.metadata().with_context(|| format!("{}: cannot stat", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!(
            "{}: not a regular file (a directory, pipe or device); sphragis binds every input by path and \
             SHA-256, so save it to a file first",
            path.display()
        );
    }
    let reapplied = REAPPLIED_KINDS.contains(&kind);
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let absolute = absolute.to_string_lossy().into_owned();
    // Same bytes means same size: only when an earlier file of this kind has this size is
    // a separate hashing pass needed before parsing (parsing a duplicate could collide on
    // ids before the single-pass hash is known).
    let size = meta.len();
    let same_size: i64 = conn.query_row(
        "select count(*) from ingest_log where kind = ? and bytes = ?",
        duckdb::params![kind, size as i64],
        |r| r.get(0),
    )?;
    if same_size > 0 && !reapplied {
        let (_, sha256) = HashingReader::new(&file).finish().with_context(|| format!("{}: cannot read", path.display()))?;
        if let Some(earlier) = find_loaded(conn, kind, &sha256)?
            .filter(|e| !PATH_BOUND_KINDS.contains(&kind) || e.path == absolute)
        {
            log_skip(conn, kind, &absolute, &earlier)?;
            return Ok(LoadOutcome::AlreadyLoaded { earlier, path: absolute });
        }
        (&file).seek(std::io::SeekFrom::Start(0))?;
    }
    conn.execute_batch("begin transaction")?;
    let result = (|| -> Result<LoadOutcome> {
        let file_id: i64 = conn.query_row("select nextval('ingest_file_id')", [], |r| r.get(0))?;
        let file_id = i32::try_from(file_id)?;
        let loaded = load(conn, file_id, file)?;
        let earlier = find_loaded(conn, kind, &loaded.sha256)?
            .filter(|e| !PATH_BOUND_KINDS.contains(&kind) || e.path == absolute);
        if let Some(earlier) = &earlier
            && !reapplied
        {
            return Ok(LoadOutcome::AlreadyLoaded { earlier: earlier.clone(), path: absolute.clone() });
        }
        conn.execute(
            "insert into ingest_log (file_id, kind, path, bytes, sha256, rows, loader_version, options) \
             values (?, ?, ?, ?, ?, ?, ?, ?)",
            duckdb::params![file_id, kind, absolute, loaded.bytes as i64, loaded.sha256, loaded.rows, loader_version, options],
        )?;
        Ok(LoadOutcome::Loaded(LoadedFile {
            file_id,
            kind: kind.to_string(),
            path: absolute.clone(),
            bytes: loaded.bytes as i64,
            sha256: loaded.sha256,
            rows: loaded.rows,
            same_bytes_as: earlier.map(|e| e.file_id),
        }))
    })();
    match result {
        Ok(LoadOutcome::Loaded(file)) => {
            conn.execute(
                "insert into sph_log (command, detail) values ('load', ?)",
                [format!("{kind} {} sha256 {} rows {}", file.path, file.sha256, file.rows)],
            )?;
            conn.execute_batch("commit")?;
            Ok(LoadOutcome::Loaded(file))
        }
        Ok(skipped @ LoadOutcome::AlreadyLoaded { .. }) => {
            conn.execute_batch("rollback")?;
            if let LoadOutcome::AlreadyLoaded { earlier, path } = &skipped {
                log_skip(conn, kind, path, earlier)?;
            }
            Ok(skipped)
        }
        Err(e) => {
            let _ = conn.execute_batch("rollback");
            Err(e)
        }
    }
}

fn log_skip(conn: &Connection, kind: &str, path: &str, earlier: &LoadedFile) -> Result<()> {
    conn.execute(
        "insert into sph_log (command, detail) values ('load-skipped', ?)",
        [format!("{kind} {path}: same bytes as file_id {} ({})", earlier.file_id, earlier.path)],
    )?;
    Ok(())
}

/// The earlier load of the same bytes by the same kind of loader, if any.
pub fn find_loaded(conn: &Connection, kind: &str, sha256: &str) -> Result<Option<LoadedFile>> {
    let mut stmt = conn.prepare(
        "select file_id, kind, path, bytes, sha256, rows from ingest_log where kind = ? and sha256 = ? order by file_id limit 1",
    )?;
    let mut rows = stmt.query(duckdb::params![kind, sha256])?;
    Ok(match rows.next()? {
        Some(r) => Some(LoadedFile {
            file_id: r.get(0)?,
            kind: r.get(1)?,
            path: r.get(2)?,
            bytes: r.get(3)?,
            sha256: r.get(4)?,
            rows: r.get(5)?,
            same_bytes_as: None,
        }),
        None => None,
    })
}
