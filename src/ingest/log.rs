//! The ingest log and transactional loads (SPEC §1 principle 4).
//!
//! [`load_file`] opens the file once as an [`Input`] (read and SHA-256 on another
//! thread), opens one transaction, reserves a `file_id`, hands the loader the stream,
//! then reads whatever the loader left (so the SHA-256 covers the whole file) and
//! records the file (path, bytes, SHA-256, rows, loader version) before commit.
//!
//! Same bytes: when the SHA-256 equals an earlier load of the same kind, the kind's
//! [`Reload`] policy decides — skipped (rolled back, reported, a line in `sph_log`),
//! applied again, or (bound to its path) skipped only at the same path. A duplicate is
//! recognised even when its parse fails (its example ids collide with the earlier
//! load's): the failing load's stream is then read to its end and hashed, but only when
//! an earlier file of the kind has the same size. Any other error rolls everything back.

use super::kind::{InputKind, Reload};
use super::read::Input;
use anyhow::Result;
use duckdb::Connection;
use std::path::Path;

/// A file that was loaded, as recorded in `ingest_log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFile {
    pub file_id: i32,
    /// [`InputKind::name`].
    pub kind: String,
    /// Absolute path.
    pub path: String,
    pub bytes: i64,
    /// Lowercase hex SHA-256 of the bytes read.
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

/// Runs `load` inside one transaction on the file at `path`, read once, and records the
/// file in the ingest log.
///
/// `load` gets the connection, the reserved `file_id` and the [`Input`] (the only way
/// it reads the file; the path is a label for errors) and returns the number of rows it
/// wrote. `options` are the mapping options (JSON text) recorded with the file.
/// Anomalies the loader accepted ([`super::anomaly::record`]) are written to
/// `ingest_anomaly_records` in the same transaction.
///
/// The commit writes the loaded rows once, into the database file: DuckDB would write
/// them to its write-ahead log at commit and again to the file when it checkpoints on
/// close. A zero `checkpoint_threshold` makes the commit checkpoint instead, and a
/// transaction estimated at 100 kB or more (`auto_checkpoint_skip_wal_threshold`) then
/// skips the log; that checkpoint runs through [`crate::db::checkpoint::guarded`], and
/// the setting is zero only for the commit ([`commit_checkpointed`]).
///
/// Errors: the file cannot be opened or read, or `load` fails; either way the database
/// is left exactly as before.
pub fn load_file(
    conn: &Connection,
    path: &Path,
    kind: InputKind,
    options: Option<&str>,
    load: impl FnOnce(&Connection, i32, &mut Input) -> Result<i64>,
) -> Result<LoadOutcome> {
    load_in_transaction(conn, path, kind, options, load)
}

/// [`load_file`]'s work: the transaction, the ingest log, a duplicate's skip.
fn load_in_transaction(
    conn: &Connection,
    path: &Path,
    kind: InputKind,
    options: Option<&str>,
    load: impl FnOnce(&Connection, i32, &mut Input) -> Result<i64>,
) -> Result<LoadOutcome> {
    let (mut input, size) = Input::open(path)?;
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let absolute = absolute.to_string_lossy().into_owned();
    // Same bytes means same size: only then may a failing parse be a duplicate.
    let same_size: i64 = conn.query_row(
        "select count(*) from ingest_log where kind = ? and bytes = ?",
        duckdb::params![kind.name(), size as i64],
        |r| r.get(0),
    )?;
    let duplicate_of = |sha256: &str| -> Result<Option<LoadedFile>> { earlier_load(conn, kind, sha256, &absolute) };
    conn.execute_batch("begin transaction")?;
    let result = (|| -> Result<(i32, i64)> {
        let file_id: i64 = conn.query_row("select nextval('ingest_file_id')", [], |r| r.get(0))?;
        let file_id = i32::try_from(file_id)?;
        // what the loader accepted under the anomaly policy, written in this transaction
        let (rows, anomalies) = super::anomaly::collect(|| load(conn, file_id, &mut input));
        let rows = rows?;
        write_anomalies(conn, file_id, &anomalies)?;
        Ok((file_id, rows))
    })();
    let (file_id, rows) = match result {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = conn.execute_batch("rollback");
            if same_size > 0
                && kind.reload() != Reload::Reapplied
                && let Ok((_, sha256)) = input.finish()
                && let Some(earlier) = duplicate_of(&sha256)?
            {
                log_skip(conn, kind, &absolute, &earlier)?;
                return Ok(LoadOutcome::AlreadyLoaded { earlier, path: absolute });
            }
            return Err(e);
        }
    };
    let finished = (|| -> Result<LoadOutcome> {
        let (bytes, sha256) = input.finish().map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
        let earlier = duplicate_of(&sha256)?;
        if let Some(earlier) = &earlier
            && kind.reload() != Reload::Reapplied
        {
            return Ok(LoadOutcome::AlreadyLoaded { earlier: earlier.clone(), path: absolute.clone() });
        }
        let file = LoadedFile {
            file_id,
            kind: kind.name().to_string(),
            path: absolute.clone(),
            bytes: bytes as i64,
            sha256,
            rows,
            same_bytes_as: earlier.map(|e| e.file_id),
        };
        record(conn, kind, options, &file)?;
        Ok(LoadOutcome::Loaded(file))
    })();
    match finished {
        Ok(LoadOutcome::Loaded(file)) => {
            commit_checkpointed(conn)?;
            Ok(LoadOutcome::Loaded(file))
        }
        Ok(LoadOutcome::AlreadyLoaded { earlier, path }) => {
            conn.execute_batch("rollback")?;
            log_skip(conn, kind, &path, &earlier)?;
            Ok(LoadOutcome::AlreadyLoaded { earlier, path })
        }
        Err(e) => {
            let _ = conn.execute_batch("rollback");
            Err(e)
        }
    }
}

/// A file read whole before a grouped load ([`load_files_whole`]): its path, size and
/// SHA-256, as [`Input`] read them (the text goes to the caller, which keeps what it needs).
#[derive(Debug, Clone)]
pub struct ReadFile {
    /// The path as given (errors name it).
    pub path: std::path::PathBuf,
    /// Bytes read.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
}

impl ReadFile {
    /// Reads `path` whole as UTF-8 text (byte-order mark kept), hashing it as it is read;
    /// returns the file's record and its text.
    ///
    /// Errors: the file cannot be opened or read, or is not UTF-8 (file and byte named).
    pub fn read(path: &Path) -> Result<(ReadFile, String)> {
        let (file, bytes) = Self::read_bytes(path)?;
        super::json::utf8_document(path, &bytes)?;
        Ok((file, String::from_utf8(bytes).expect("checked above")))
    }

    /// Reads `path` whole as bytes (a leading UTF-8 byte-order mark skipped, as
    /// [`Input::read_all`] does), hashing it as it is read, for inputs that may be binary
    /// (an Inspect AI `.eval` zip); returns the file's record and its bytes.
    ///
    /// Errors: the file cannot be opened or read.
    pub fn read_bytes(path: &Path) -> Result<(ReadFile, Vec<u8>)> {
        let (mut input, _) = Input::open(path)?;
        let content = input.read_all()?;
        let (bytes, sha256) = input.finish().map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
        Ok((ReadFile { path: path.to_path_buf(), bytes, sha256 }, content))
    }
}

/// Loads several files read beforehand in ONE transaction: all of them are written, or
/// none (a run folder loads whole or not at all).
///
/// A file whose bytes the same kind loaded before is skipped as [`load_file`] skips it
/// (its [`Reload`] policy; nothing of it is written, a line in `sph_log`); every other
/// file gets a `file_id`, is handed to `load` with its index in `files`, and is recorded
/// in the ingest log with the anomalies it accepted. Returns one outcome per file, in
/// order.
///
/// Errors: `load` fails for any file; the database is then left exactly as before.
pub fn load_files_whole(
    conn: &Connection,
    kind: InputKind,
    options: Option<&str>,
    files: &[ReadFile],
    mut load: impl FnMut(&Connection, i32, usize) -> Result<i64>,
) -> Result<Vec<LoadOutcome>> {
    load_read_whole(
        conn,
        kind,
        options,
        files.len(),
        |i| Ok((files[i].clone(), i)),
        |conn, file_id, _, i| load(conn, file_id, i),
    )
}

/// As [`load_files_whole`], with each file read when its turn comes, inside the
/// transaction: `read(i)` reads file `i` once (its [`ReadFile`] and whatever the loader
/// needs of it, e.g. a Parquet file's in-memory copy), then — unless its bytes were
/// loaded before — `load` gets the connection, the file's `file_id`, its record and what
/// `read` returned. Only one file's read is held at a time (a split's Parquet shards).
///
/// Errors: `read` or `load` fails for any file; the database is then left exactly as
/// before.
pub fn load_read_whole<S>(
    conn: &Connection,
    kind: InputKind,
    options: Option<&str>,
    count: usize,
    mut read: impl FnMut(usize) -> Result<(ReadFile, S)>,
    mut load: impl FnMut(&Connection, i32, &ReadFile, S) -> Result<i64>,
) -> Result<Vec<LoadOutcome>> {
    conn.execute_batch("begin transaction")?;
    let result = (|| -> Result<Vec<LoadOutcome>> {
        let mut outcomes = Vec::with_capacity(count);
        for i in 0..count {
            let (file, held) = read(i)?;
            let absolute = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
            let absolute = absolute.to_string_lossy().into_owned();
            let earlier = earlier_load(conn, kind, &file.sha256, &absolute)?;
            if let Some(earlier) = &earlier
                && kind.reload() != Reload::Reapplied
            {
                log_skip(conn, kind, &absolute, earlier)?;
                outcomes.push(LoadOutcome::AlreadyLoaded { earlier: earlier.clone(), path: absolute });
                continue;
            }
            let file_id: i64 = conn.query_row("select nextval('ingest_file_id')", [], |r| r.get(0))?;
            let file_id = i32::try_from(file_id)?;
            let (rows, anomalies) = super::anomaly::collect(|| load(conn, file_id, &file, held));
            let rows = rows?;
            write_anomalies(conn, file_id, &anomalies)?;
            let loaded = LoadedFile {
                file_id,
                kind: kind.name().to_string(),
                path: absolute,
                bytes: file.bytes as i64,
                sha256: file.sha256.clone(),
                rows,
                same_bytes_as: earlier.map(|e| e.file_id),
            };
            record(conn, kind, options, &loaded)?;
            outcomes.push(LoadOutcome::Loaded(loaded));
        }
        Ok(outcomes)
    })();
    match result {
        Ok(outcomes) => {
            commit_checkpointed(conn)?;
            Ok(outcomes)
        }
        Err(e) => {
            let _ = conn.execute_batch("rollback");
            Err(e)
        }
    }
}

/// Commits the load's transaction with a zero `checkpoint_threshold`, so the commit
/// checkpoints (through [`crate::db::checkpoint::guarded`] for a file), and sets the
/// threshold back to "never" right after: nothing else checkpoints at zero (a skipped
/// load's log line would, without the journal). Any failure rolls the transaction back.
fn commit_checkpointed(conn: &Connection) -> Result<()> {
    let commit = || -> Result<()> {
        conn.execute_batch("set checkpoint_threshold = '0b'")?;
        let committed = conn.execute_batch("commit");
        let reset = crate::db::checkpoint::no_automatic_checkpoint(conn);
        committed?;
        reset
    };
    let result = match crate::db::checkpoint::main_database(conn)? {
        Some((name, db)) => crate::db::checkpoint::guarded(conn, &name, &db, commit),
        None => commit(),
    };
    if result.is_err() {
        // the threshold is back already: `commit` resets it whether or not it committed
        let _ = conn.execute_batch("rollback");
    }
    result
}

/// Writes the anomalies a load recorded ([`super::anomaly`]) as rows of
/// `ingest_anomaly_records` for `file_id`.
fn write_anomalies(conn: &Connection, file_id: i32, anomalies: &[super::anomaly::Recorded]) -> Result<()> {
    if anomalies.is_empty() {
        return Ok(());
    }
    let mut app = conn.appender("ingest_anomaly_records")?;
    for a in anomalies {
        app.append_row(duckdb::params![
            file_id,
            a.line.map(|l| l as i64),
            a.field,
            a.kind.as_str(),
            a.detail,
            a.occurrences as i64
        ])?;
    }
    app.flush()?;
    Ok(())
}

/// Records a loaded file in the ingest log (with the loader version and `options`) and a
/// `load` line in `sph_log`, inside the load's transaction.
fn record(conn: &Connection, kind: InputKind, options: Option<&str>, file: &LoadedFile) -> Result<()> {
    conn.execute(
        "insert into ingest_log (file_id, kind, path, bytes, sha256, rows, loader_version, options) \
         values (?, ?, ?, ?, ?, ?, ?, ?)",
        duckdb::params![
            file.file_id,
            file.kind,
            file.path,
            file.bytes,
            file.sha256,
            file.rows,
            kind.loader_version(),
            options
        ],
    )?;
    conn.execute(
        "insert into sph_log (command, detail) values ('load', ?)",
        [format!("{kind} {} sha256 {} rows {}", file.path, file.sha256, file.rows)],
    )?;
    Ok(())
}

fn log_skip(conn: &Connection, kind: InputKind, path: &str, earlier: &LoadedFile) -> Result<()> {
    conn.execute(
        "insert into sph_log (command, detail) values ('load-skipped', ?)",
        [format!("{kind} {path}: same bytes as file_id {} ({})", earlier.file_id, earlier.path)],
    )?;
    Ok(())
}

/// The earlier load that makes a load of `sha256` at `absolute` a duplicate under `kind`'s
/// [`Reload`] policy: the same bytes by the same kind of loader, and — for a kind bound to
/// its path — at the same path (another file with the same bytes loaded earlier at another
/// path does not hide it: a run folder holds byte-identical reports of several instances).
pub fn earlier_load(conn: &Connection, kind: InputKind, sha256: &str, absolute: &str) -> Result<Option<LoadedFile>> {
    let at = (kind.reload() == Reload::BoundToPath).then_some(absolute);
    first_load(conn, kind.name(), sha256, at)
}

/// The earlier load of the same bytes by the same kind of loader (`kind` as in
/// `ingest_log.kind`), if any.
pub fn find_loaded(conn: &Connection, kind: &str, sha256: &str) -> Result<Option<LoadedFile>> {
    first_load(conn, kind, sha256, None)
}

/// The first `ingest_log` row of `kind` with these bytes (and at `path`, when given).
fn first_load(conn: &Connection, kind: &str, sha256: &str, path: Option<&str>) -> Result<Option<LoadedFile>> {
    let mut stmt = conn.prepare(
        "select file_id, kind, path, bytes, sha256, rows from ingest_log \
         where kind = ? and sha256 = ? and (?::varchar is null or path = ?) order by file_id limit 1",
    )?;
    let mut rows = stmt.query(duckdb::params![kind, sha256, path, path])?;
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
