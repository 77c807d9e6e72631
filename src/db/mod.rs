//! The database file: open, migrate, register functions and views.
//!
//! [`open`] is how commands that change the file get a connection: it applies pending
//! migrations, registers every `sph_` scalar function and (re)creates every report
//! view, so all commands see the same schema, functions and view versions.
//! [`open_read_only`] serves the commands that only read (`report`, `views`, `sql`):
//! it never creates or changes the file, and refuses one whose schema or views are not
//! those of this binary.

pub mod catalogue;
pub mod checkpoint;
pub mod empty;
pub mod migrations;
pub mod release;
pub mod sealed;
pub mod spark;
pub mod template;
pub mod verified;
pub mod views;

use anyhow::{Context, Result, bail};
use duckdb::{AccessMode, Config, Connection};
use std::path::{Path, PathBuf};

/// Appends one line to the database's command log `sph_log` (command, detail, time):
/// every command that changes the file or opens sealed content records itself here.
///
/// Errors: the insert fails (e.g. the file is read-only).
pub fn log(conn: &Connection, command: &str, detail: &str) -> Result<()> {
    conn.execute("insert into sph_log (command, detail) values (?, ?)", [command, detail])?;
    Ok(())
}

/// The schema state `init` prints: (migrations applied, views and macros registered).
pub fn schema_state(conn: &Connection) -> Result<(i64, i64)> {
    let migrations = conn.query_row("select count(*) from sph_migrations", [], |r| r.get(0))?;
    let views = conn.query_row("select count(*) from sph_views", [], |r| r.get(0))?;
    Ok((migrations, views))
}

/// Whether the file at `path` is a database an earlier `sphragis demo` made (its
/// `sph_log` has a `demo` line), so the demo may replace it. Any failure to open or
/// read it as such is "no": the demo then refuses to replace the file.
pub fn made_by_demo(path: &Path) -> bool {
    let Ok(config) = Config::default().access_mode(AccessMode::ReadOnly) else { return false };
    let Ok(conn) = Connection::open_with_flags(path, config) else { return false };
    conn.query_row("select count(*) from sph_log where command = 'demo'", [], |r| r.get::<_, i64>(0))
        .is_ok_and(|n| n > 0)
}

/// A named point where the crash tests (tests/crash.rs) kill the process: when the
/// environment variable `SPHRAGIS_CRASH_AT` equals `name`, the process aborts at once
/// (SIGABRT: no destructor runs, no transaction commits, no file is flushed or renamed),
/// as a kill -9 would stop it there. Without the variable this is a no-op. Points:
/// `freeze:before-commit`, `freeze:after-commit`, `export:before-manifest`,
/// `views-build:before-rename`, `checkpoint:journal-written` (the first checkpoint of the
/// command, its journal on disk, the checkpoint not begun).
pub fn crash_point(name: &str) {
    if std::env::var_os("SPHRAGIS_CRASH_AT").is_some_and(|v| v == name) {
        std::process::abort();
    }
}

/// DuckDB's file magic, at byte offset 8 of a database file.
const DUCKDB_MAGIC: &[u8; 4] = b"DUCK";

/// Refuses an existing file that is not a DuckDB database (a CSV or JSON file named by
/// mistake would otherwise be opened by DuckDB's file readers and nothing kept).
///
/// The header is read through the descriptor the process keeps for the file
/// ([`checkpoint::kept_open`]), never one opened and closed here: when this process
/// already holds the file (`diff --against` the file itself, or a link to it), closing
/// another descriptor of it would release DuckDB's lock on it.
fn check_database_file(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    if !path.is_file() {
        bail!("{}: not a file", path.display());
    }
    let mut head = [0u8; 12];
    let (file, _) = checkpoint::kept_open(&checkpoint::resolved(path))?;
    let n = read_at_most(&file, &mut head)?;
    if n == 0 {
        return Ok(()); // an empty file becomes a new database
    }
    if n < 12 || &head[8..12] != DUCKDB_MAGIC {
        bail!("{}: not a DuckDB database file (pass the database with --db, not an input file)", path.display());
    }
    Ok(())
}

/// Reads from offset 0 of `file` until `buf` is full or the file ends; returns the bytes read.
fn read_at_most(file: &std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Opens (creating if needed) the database at `path`, or an in-memory database for
/// `:memory:`, migrated and with functions and views registered, and with any content
/// left in a sealed window moved to the sealed companion (see `db::sealed`).
///
/// Committed work reaches the file through [`checkpoint::guarded`] when the returned
/// [`Database`] is dropped; DuckDB's own checkpoints are off on it ([`checkpoint::configure`]).
///
/// Errors: the file exists and is not a DuckDB database, cannot be opened (locked by
/// another process), a checkpoint journal beside it cannot be applied, a migration or
/// view was edited after it was recorded, a migration fails, or content left in a sealed
/// window cannot be moved (its companion is missing or cannot be written).
///
/// A new file is a copy of the template of this binary's schema when the template cache
/// can hold one ([`template`]: the same file, made without DuckDB parsing every view again).
pub fn open(path: &Path) -> Result<Database> {
    open_with_cache(path, template::cache_dir().as_deref())
}

/// [`open`], with the template cache folder given (`None`: a new file is made from
/// scratch). A copy of the template that does not open as a current sphragis file is
/// removed with the template, and the file made from scratch ([`template::discard`]).
///
/// Errors: as [`open`].
pub fn open_with_cache(path: &Path, cache: Option<&Path>) -> Result<Database> {
    if path.as_os_str() == ":memory:" {
        return prepared(path, Connection::open_in_memory()?, None);
    }
    check_database_file(path)?;
    // the file itself, not a link to it (a dangling link: DuckDB would keep its log beside the link)
    let file = checkpoint::resolved(path);
    if let Some(cache) = cache
        && template::copy_into(&file, cache)
    {
        match open_file(path, &file) {
            Ok(db) => return Ok(db),
            Err(e) => template::discard(&file, cache, &e),
        }
    }
    open_file(path, &file)
}

/// Opens the database file `file` (`path` resolved), as [`open`] does.
fn open_file(path: &Path, file: &Path) -> Result<Database> {
    let witness = template::cache_dir().and_then(|_| verified::Witness::before_open(file));
    let conn = open_journaled(path, || Connection::open(file))?.map_err(|e| open_error(path, e, false))?;
    checkpoint::configure(&conn)?;
    remove_stale_spill(path, &conn);
    // a new file: DuckDB made it, so there was nothing before its open to compare with
    let witness = witness.or_else(|| template::cache_dir().and_then(|_| verified::Witness::after_open(file)));
    prepared(path, conn, witness)
}

/// Removes what a stopped process left in this database's temporary folder (hostile input
/// D20): a load spills its transaction to `<file>.tmp/` past its memory limit (hundreds of
/// MB for a large view file), and DuckDB removes the files at close, so a process killed
/// during a load left them for good (a later open neither used nor removed them). DuckDB
/// names them `duckdb_temp_<pid>_...`; a writing open holds the file's exclusive lock, so
/// no other process has this database open: the files of a process that is not this one
/// (and, on Linux, no longer runs) are removed, then the folder if it is empty, and a note
/// says how much was freed. Best effort: what cannot be listed or removed is left.
fn remove_stale_spill(path: &Path, conn: &Connection) {
    let Ok(dir) = conn.query_row("select current_setting('temp_directory')", [], |r| r.get::<_, String>(0)) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let (mut files, mut bytes) = (0u64, 0u64);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("duckdb_temp_"))
            .and_then(|rest| rest.split('_').next().and_then(|p| p.parse::<u32>().ok()))
        else {
            continue;
        };
        let alive =
            pid == std::process::id() || (cfg!(target_os = "linux") && Path::new(&format!("/proc/{pid}")).exists());
        if alive {
            continue;
        }
        let size = entry.metadata().map_or(0, |m| m.len());
        if std::fs::remove_file(entry.path()).is_ok() {
            files += 1;
            bytes += size;
        }
    }
    if files > 0 {
        let emptied = std::fs::remove_dir(&dir).is_ok();
        eprintln!(
            "{}: removed {files} temporary file{} ({:.1} MB) that a stopped command left in {}{}",
            path.display(),
            if files == 1 { "" } else { "s" },
            bytes as f64 / 1e6,
            dir.display(),
            if emptied { " (and the empty folder)" } else { "" }
        );
    }
}

/// `conn` migrated, with functions and views registered and sealed-window content moved.
/// `witness` is of the database file `conn` holds the lock of (`None`: in memory): when
/// its fingerprint is the one recorded after its catalogue was last checked
/// ([`verified`]), the views and macros are not scanned again; when the returned
/// [`Database`] is dropped, the fingerprint of the checkpointed file is recorded.
fn prepared(path: &Path, conn: Connection, witness: Option<verified::Witness>) -> Result<Database> {
    let cache = witness.as_ref().and_then(|_| template::cache_dir());
    let trusted = witness.as_ref().is_some_and(|w| w.is_current(cache.as_deref(), &conn));
    let mut conn = Database { conn, stamp: None };
    let repaired =
        prepare_with(&conn, trusted).with_context(|| format!("{}: preparing the database", path.display()))?;
    // only a catalogue that passed (or was created by) prepare is recorded at drop
    conn.stamp = witness.zip(cache);
    if !repaired.is_empty() {
        // never silent: a figure read before this command came from the changed definition
        eprintln!(
            "{}: re-created {} from this sphragis's SQL: {} changed or dropped outside sphragis since it \
             created {}",
            path.display(),
            repaired.join(", "),
            if repaired.len() == 1 { "it was" } else { "they were" },
            if repaired.len() == 1 { "it" } else { "them" }
        );
    }
    // a load stopped after its commit but before its seal left sealed-window content here
    let moved = sealed::seal(&conn)
        .with_context(|| format!("{}: moving sealed-window content to the sealed companion", path.display()))?;
    if moved > 0 {
        // rare (a stopped load, or another client's rows) and the user was told to run a
        // writing command for it: say that it happened
        eprintln!(
            "{}: moved the content of {moved} example{} in sealed windows to the sealed companion (it was left in \
             the main file)",
            path.display(),
            if moved == 1 { "" } else { "s" }
        );
    }
    Ok(conn)
}

/// A connection that writes the database file: derefs to DuckDB's [`Connection`], and
/// when dropped checkpoints what was committed through [`checkpoint::checkpoint_main`]
/// (a checkpoint a kill cannot tear). Should that checkpoint fail, the committed work
/// stays in the write-ahead log, which the next open replays, and a note says so.
pub struct Database {
    conn: Connection,
    /// The database file's witness and the cache folder its fingerprint is recorded in
    /// at drop, once [`prepare`] passed ([`verified`]).
    stamp: Option<(verified::Witness, PathBuf)>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Database")
    }
}

impl std::ops::Deref for Database {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl std::ops::DerefMut for Database {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        match checkpoint::checkpoint_main(&self.conn) {
            // still holding the file's lock: recorded when the file is as this process's
            // own checkpoint (or the open) left it
            Ok(()) => {
                if let Some((witness, cache)) = &self.stamp {
                    witness.record(Some(cache), &self.conn, true);
                }
            }
            Err(e) => eprintln!(
                "note: the database was not checkpointed ({e:#}); whatever was committed is kept in its write-ahead \
                 log, which the next command replays"
            ),
        }
    }
}

/// Opens the database file or sealed companion at `path` with `open`, under the
/// checkpoint journal's rules ([`checkpoint`]): a journal of a checkpoint stopped before
/// its header is applied first; should DuckDB still refuse the file as corrupt (a header
/// torn by a power cut), the journal is applied and `open` tried once more; once the file
/// opened, a journal of a checkpoint that completed is removed. Says on stderr when it
/// restored the file. Returns DuckDB's own result for the caller to word.
///
/// Errors: as [`checkpoint::recover`].
pub fn open_journaled<T>(path: &Path, open: impl Fn() -> Result<T, duckdb::Error>) -> Result<Result<T, duckdb::Error>> {
    let restored = |ranges: Option<usize>| {
        let file = checkpoint::resolved(path);
        let replay = if wal_path(&file).is_file() {
            "DuckDB replays the committed work from its write-ahead log"
        } else {
            "no write-ahead log is beside it: the stopped command had committed nothing more"
        };
        eprintln!(
            "{}: a process stopped during a checkpoint; restored {} from {} ({replay})",
            file.display(),
            match ranges {
                Some(n) => format!("{n} range{} of the file", if n == 1 { "" } else { "s" }),
                None => "the file as it was before that checkpoint".to_string(),
            },
            checkpoint::journal_of(&file).display()
        );
    };
    if let checkpoint::Recovery::Restored(n) = checkpoint::recover(path)? {
        restored(Some(n));
    }
    let mut opened = open();
    if let Err(e) = &opened
        && checkpoint::restore_after_refusal(path, &e.to_string())?
    {
        restored(None);
        opened = open();
    }
    if opened.is_ok() {
        checkpoint::forget_completed(path)?;
    }
    Ok(opened)
}

/// Opens an existing database read-only, with the `sph_` functions registered. Its views
/// and macros are checked against this binary's unless the file's fingerprint is the one
/// recorded after they were last checked ([`verified`]); after a full check the
/// fingerprint is recorded.
///
/// Errors: the file does not exist or is not a DuckDB database, its migrations or
/// views are not exactly this binary's, or examples in a sealed window still have their
/// content in it (run a writing command such as `sphragis init` to bring it up to date
/// or to move that content).
pub fn open_read_only(path: &Path) -> Result<Connection> {
    if !path.is_file() {
        if path.exists() {
            bail!(
                "{}: not a database file (a database is a regular file; this is a folder or special file)",
                path.display()
            );
        }
        bail!("{}: no such database file (create one with `sphragis init` or `sphragis load`)", path.display());
    }
    check_database_file(path)?;
    let (file, cache) = (checkpoint::resolved(path), template::cache_dir());
    let witness = cache.as_ref().and_then(|_| verified::Witness::before_open(&file));
    let conn = open_journaled(path, || {
        Connection::open_with_flags(path, Config::default().access_mode(AccessMode::ReadOnly)?)
    })?
    .map_err(|e| open_error(path, e, true))?;
    // DuckDB's shared lock is held from here: no other process writes the file
    let trusted = witness.as_ref().is_some_and(|w| w.is_current(cache.as_deref(), &conn));
    migrations::check_current(&conn).with_context(|| format!("{}: checking the schema", path.display()))?;
    if !trusted {
        views::check_current(&conn).with_context(|| format!("{}: checking the views", path.display()))?;
    }
    sealed::refuse_unsealed(&conn, path)?;
    plan_settings(&conn)?;
    crate::rules::udf::register_all(&conn)?;
    if let Some(w) = witness.filter(|_| !trusted) {
        w.record(cache.as_deref(), &conn, false);
    }
    Ok(conn)
}

/// Opens the database file `path` read-only as [`open_read_only`] does, while this process
/// holds the database file `held` open: `None` when `path` is `held` itself (the same
/// device and inode: the same path, a link or another name of it), for the caller to read
/// it through the connection it holds. Closing a second descriptor of `held` would release
/// every POSIX lock the process holds on it, DuckDB's included, and let a writer in while
/// the caller still reads; so `path`'s links are resolved once, before it is compared with
/// `held`, and a connection found on `held` after its open is never closed (`None` is
/// returned for it too). What remains: DuckDB opens and closes the path before it locks
/// it, so a file renamed over the resolved path in that instant, if it is `held` (a hard
/// link to it), releases the lock (docs/reliability.md).
///
/// Errors: as [`open_read_only`]; `held` cannot be opened.
pub fn open_read_only_beside(path: &Path, held: &Path) -> Result<Option<Connection>> {
    use std::os::unix::fs::MetadataExt;
    let (handle, _) = checkpoint::kept_open(&checkpoint::resolved(held))?;
    let held_id = checkpoint::identity(&handle);
    // links resolved once: a link retargeted from here on does not change the file opened
    // (DuckDB opens and closes the path to read its magic bytes before it locks it)
    let path = &checkpoint::resolved(path);
    if std::fs::metadata(path).is_ok_and(|m| Some((m.dev(), m.ino())) == held_id) {
        return Ok(None);
    }
    let before = checkpoint::descriptors_on(&handle);
    let conn = open_read_only(path)?;
    if checkpoint::descriptors_on(&handle) > before {
        // DuckDB opened `held` again under `path`: left open until the process ends
        std::mem::forget(conn);
        return Ok(None);
    }
    Ok(Some(conn))
}

/// Opens an existing database read-only for ad-hoc SQL (`sphragis sql`): as
/// [`open_read_only`], then with DuckDB's external access switched off for the rest of
/// the connection (it cannot be switched on again), so a query reads this file only —
/// no `ATTACH` of the sealed companion or any other file, no file readers. Any DuckDB
/// client remains free to do more; sphragis's own query command opens nothing else.
///
/// Errors: as [`open_read_only`].
pub fn open_for_queries(path: &Path) -> Result<Connection> {
    let conn = open_read_only(path)?;
    conn.execute_batch("set enable_external_access = false")?;
    Ok(conn)
}

/// The process holding a database file's lock, as DuckDB names it: `Could not set lock
/// on file "<file>": Conflicting lock is held in <program> (PID <pid>)`. Returns the
/// program and the PID (`None` where DuckDB's message does not say it).
pub fn lock_holder(message: &str) -> Option<(Option<String>, Option<u32>)> {
    if !message.contains("Could not set lock on file") {
        return None;
    }
    let held = message.split_once("Conflicting lock is held in ").map(|(_, rest)| rest);
    let program = held.and_then(|h| h.rsplit_once(" (PID ")).map(|(p, _)| p.trim().to_string());
    let pid = held
        .and_then(|h| h.rsplit_once("(PID "))
        .and_then(|(_, rest)| rest.split(')').next())
        .and_then(|n| n.trim().parse().ok());
    Some((program, pid))
}

/// The error of a failed open, in sphragis's terms: a lock held by another process
/// becomes a message naming that process and the concurrency model (one process that
/// writes, or many that only read); a read-only open beside a pending write-ahead log
/// says how to replay it. DuckDB's own message stays as the cause.
fn open_error(path: &Path, error: duckdb::Error, read_only: bool) -> anyhow::Error {
    let text = error.to_string();
    let wal = wal_path(path);
    let message = match lock_holder(&text) {
        Some((program, pid)) => {
            let holder = match (pid, program) {
                (Some(pid), Some(program)) => format!("process {pid} ({program})"),
                (Some(pid), None) => format!("process {pid}"),
                _ => "another process".to_string(),
            };
            let doing = if read_only { "reading" } else { "writing" };
            format!(
                "{}: in use by {holder}, so it cannot be opened for {doing}: a database file is open for writing by \
                 one process at a time (init, load, refine, split, freeze, verify, examples), or for reading by \
                 any number (report, sql, views) while nothing writes; wait for that process to end and run the \
                 command again",
                path.display()
            )
        }
        None if text.contains("Corrupt database file") => format!(
            "{}: the file is damaged: a block's checksum does not match its bytes (a process stopped while \
             rewriting it: a checkpoint by another DuckDB client, which writes without sphragis's checkpoint \
             journal, or a disk fault); no checkpoint journal {} was beside it to restore from. Replace it with \
             a copy, or rebuild it by loading its input files again (frozen versions check the rebuild: \
             `verify` compares it with their manifests)",
            path.display(),
            checkpoint::journal_of(&checkpoint::resolved(path)).display()
        ),
        None if read_only && wal.is_file() => format!(
            "{}: cannot open for reading; a write-ahead log {} is pending (left by a process that stopped before \
             it finished): run a writing command once, e.g. `sphragis --db {} init`, to replay it, then read again",
            path.display(),
            wal.display(),
            path.display()
        ),
        None => format!("{}: cannot open as a DuckDB database", path.display()),
    };
    anyhow::Error::new(error).context(message)
}

/// The write-ahead log DuckDB keeps beside a database file: `<file>.wal`.
pub fn wal_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".wal");
    name.into()
}

/// Runs `work` inside one transaction: commit when it returns `Ok`, roll back when it
/// returns `Err` (the error is returned unchanged).
pub fn in_transaction<T>(conn: &Connection, work: impl FnOnce() -> Result<T>) -> Result<T> {
    conn.execute_batch("begin transaction")?;
    match work() {
        Ok(value) => {
            conn.execute_batch("commit")?;
            Ok(value)
        }
        Err(e) => {
            let _ = conn.execute_batch("rollback");
            Err(e)
        }
    }
}

/// Runs `sql` — one query without parameters — through a single DuckDB plan and keeps
/// its rows, in the order it returned them, in the temporary table `temp.main.<name>` of
/// this connection (replacing one of that name), for the caller to read back with a
/// trivial query and then [`drop_temp`]. Always name it with all three parts: a schema
/// called `temp` in the database file makes `temp.<name>` ambiguous. Temporary tables belong to the connection: the workers
/// of `report all`, each on its own connection, do not see each other's.
///
/// Why: DuckDB 2.0's C API plans a statement when it prepares it and plans it again when
/// the prepared statement executes (the EXECUTE binds the statement anew), so a query
/// run through `prepare` is bound and optimized twice; `execute_batch` runs a statement
/// through one plan but returns no rows. On a review database the verdict view
/// `check_findings_v1` took 0.25 s prepared plus 0.29 s executed, and 0.26 s through one
/// plan (issue 29). The rows are those `sql` returns: `create table ... as` keeps
/// DuckDB's types and, with insertion order preserved (DuckDB's default, which sphragis
/// never changes), the order of an `order by`.
///
/// Errors: DuckDB rejects the statement as the query of a `create table ... as` (a
/// statement that is not a query, duplicate column names) or fails running it.
pub fn run_into_temp(conn: &Connection, name: &str, sql: &str) -> Result<()> {
    conn.execute_batch(&format!("create or replace temporary table {name} as {sql}"))?;
    Ok(())
}

/// Runs `work(connection, i)` for every `i` in `0..count` and returns the results in
/// index order. The work runs on up to as many threads as the machine has cores (at most
/// 4), each with its own connection to `conn`'s database (`try_clone`: its own
/// transactions and temporary tables), taking the next index as it finishes one — list
/// the longest work first. With one core or one task it runs on `conn`, in order.
///
/// Why: DuckDB binds and optimizes a statement on one thread, and a query over a small
/// corpus is mostly that (the reports of `report all`, the parts of the verdict view).
///
/// Errors: a connection cannot be cloned.
pub fn on_workers<T: Send>(
    conn: &Connection,
    count: usize,
    work: impl Fn(&Connection, usize) -> T + Sync,
) -> Result<Vec<T>> {
    on_workers_reading(conn, count, &[], work)
}

/// [`on_workers`], where each connection first computes `computed`, views over empty tables
/// ([`empty::over_empty_tables`]), into temporary tables of their names
/// ([`empty::compute`]) that the work's queries on it then read; the tables are dropped
/// when the connection's last task is done (from `conn` too, when the work ran on it).
///
/// Errors: a connection cannot be cloned.
pub fn on_workers_reading<T: Send>(
    conn: &Connection,
    count: usize,
    computed: &[&'static str],
    work: impl Fn(&Connection, usize) -> T + Sync,
) -> Result<Vec<T>> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4).min(count);
    if workers <= 1 {
        let _computed = empty::compute(conn, computed);
        return Ok((0..count).map(|i| work(conn, i)).collect());
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let connections = (0..workers).map(|_| conn.try_clone()).collect::<duckdb::Result<Vec<_>>>()?;
    let mut results: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = connections
            .into_iter()
            .map(|worker| {
                let (next, work) = (&next, &work);
                scope.spawn(move || {
                    let _computed = empty::compute(&worker, computed);
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        done.push((i, work(&worker, i)));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a worker thread panicked")).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

/// DuckDB's row group size in rows (its default, which sphragis keeps): the unit its
/// table scans hand to its threads.
pub const ROW_GROUP_ROWS: i64 = 122_880;

/// Statements on one connection whose scans, sorts and hash joins DuckDB splits into tasks
/// of 2,048 rows (one vector) rather than one row group, while the value lives
/// ([`fine_grained_tasks`]).
pub struct FineGrainedTasks<'c>(&'c Connection);

impl Drop for FineGrainedTasks<'_> {
    fn drop(&mut self) {
        // a reset that fails leaves the split on a connection that is about to close
        let _ = self.0.execute_batch("pragma disable_verify_parallelism");
    }
}

/// Makes DuckDB split the work of `conn`'s statements into tasks of 2,048 rows until the
/// returned value is dropped.
///
/// Why: DuckDB hands a table scan to its threads a row group at a time, so a table of fewer
/// than [`ROW_GROUP_ROWS`] rows (the 29,610 examples of the ×10 review benchmark) is
/// scanned on one thread however costly the functions applied to each row. `pragma
/// verify_parallelism` is the switch behind DuckDB's `Connection::ForceParallelism`,
/// under which DuckDB's own test suite runs queries to show that their results do not
/// depend on how the work is split: it changes how scans, sorts and hash joins divide
/// their work, not what a statement computes. Over more rows than a row group the row
/// groups already keep every core busy, and smaller tasks only add scheduling.
///
/// Errors: DuckDB refuses the pragma.
pub fn fine_grained_tasks(conn: &Connection) -> Result<FineGrainedTasks<'_>> {
    conn.execute_batch("pragma verify_parallelism")?;
    Ok(FineGrainedTasks(conn))
}

/// `name` as an SQL identifier: double-quoted, inner double quotes doubled (`a"b` →
/// `"a""b"`), so any table, column, schema or view name is read as written.
pub fn identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Drops the temporary table `temp.main.<name>` that [`run_into_temp`] made, if it exists.
///
/// Errors: DuckDB refuses the drop.
pub fn drop_temp(conn: &Connection, name: &str) -> Result<()> {
    conn.execute_batch(&format!("drop table if exists temp.main.{name}"))?;
    Ok(())
}

/// DuckDB optimizer passes switched off on every connection sphragis opens (a
/// comma-separated list, DuckDB's `disabled_optimizers` setting).
///
/// `projection_pullup` (new in DuckDB 2.0) removes projections that only pass columns
/// through, and optimizes the subtree below each one it removes again; on the verdict view
/// `check_findings_v1` (a union of eight check views, each a union of CTEs) that pass alone
/// took 0.46 s of a 1.04 s query on a review database (DuckDB's detailed profile), for
/// projections that cost nothing to execute. Optimizer passes do not change what a query
/// returns; a stock DuckDB client reading the file runs every pass and gets the same rows,
/// only later.
pub const DISABLED_OPTIMIZERS: &str = "projection_pullup";

/// Applies [`DISABLED_OPTIMIZERS`] to the database `conn` belongs to (a global setting:
/// it holds for every connection cloned from it).
fn plan_settings(conn: &Connection) -> Result<()> {
    conn.execute_batch(&format!("set disabled_optimizers = '{DISABLED_OPTIMIZERS}'"))?;
    Ok(())
}

/// Migrates `conn` and registers functions and views on it: every view and macro is
/// re-created when a migration ran (none keeps what DuckDB knew of the tables before it),
/// otherwise only those missing or not what sphragis created. Returns the views and
/// macros re-created because another client had changed or dropped them
/// ([`views::register`]).
pub fn prepare(conn: &Connection) -> Result<Vec<String>> {
    prepare_with(conn, false)
}

/// [`prepare`]; with `trusted` (the file's fingerprint is the one recorded after its
/// catalogue was last checked, [`verified`]) the views and macros are not scanned, unless
/// a migration ran.
fn prepare_with(conn: &Connection, trusted: bool) -> Result<Vec<String>> {
    plan_settings(conn)?;
    let migrated = migrations::apply(conn)?;
    crate::rules::udf::register_all(conn)?;
    if trusted && migrated.is_empty() {
        return Ok(Vec::new());
    }
    views::register(conn, !migrated.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a fresh tester: a folder given as a database was "no such database file",
    /// and a DuckDB file of another tool gave DuckDB's catalog error ("Did you mean ...").
    #[test]
    fn a_folder_or_another_tools_file_is_named_for_what_it_is() {
        let dir = std::env::temp_dir().join(format!("sphragis-db-named-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = format!("{:#}", open_read_only(&dir).unwrap_err());
        assert!(err.contains("not a database file (a database is a regular file"), "{err}");
        let other = dir.join("other.duckdb");
        Connection::open(&other).unwrap().execute_batch("create table t (x integer)").unwrap();
        let err = format!("{:#}", open_read_only(&other).unwrap_err());
        assert!(err.contains("not a sphragis database: it holds no sph_migrations table"), "{err}");
        assert!(!err.contains("Did you mean"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lock_conflict_names_the_holder() {
        let duckdb = "IO Error: Could not set lock on file \"/tmp/cc/t.duckdb\": Conflicting lock is held in \
                      /usr/bin/sphragis (PID 7765). See also https://duckdb.org/docs/current/connect/concurrency";
        assert_eq!(lock_holder(duckdb), Some((Some("/usr/bin/sphragis".into()), Some(7765))));
        assert_eq!(lock_holder("IO Error: Could not set lock on file \"x\": Resource busy"), Some((None, None)));
        assert_eq!(lock_holder("Catalog Error: no such table"), None);
    }

    /// Issue 29: the optimizer passes sphragis switches off are off on the writing and the
    /// read-only connections it opens, and on the connections cloned from them (the
    /// workers of `report all`).
    #[test]
    fn projection_pullup_is_off_on_every_connection_sphragis_opens() {
        let dir = std::env::temp_dir().join(format!("sphragis-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.duckdb");
        let setting = |c: &Connection| -> String {
            c.query_row("select current_setting('disabled_optimizers')", [], |r| r.get(0)).unwrap()
        };
        {
            let db = open_with_cache(&file, None).unwrap();
            assert_eq!(setting(&db), "projection_pullup");
            assert_eq!(setting(&db.try_clone().unwrap()), "projection_pullup");
        }
        let read = open_read_only(&file).unwrap();
        assert_eq!(setting(&read), "projection_pullup");
        assert_eq!(setting(&read.try_clone().unwrap()), "projection_pullup");
        drop(read);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn wal_is_beside_the_file() {
        assert_eq!(wal_path(Path::new("/d/t.duckdb")), Path::new("/d/t.duckdb.wal"));
    }
}
