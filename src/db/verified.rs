//! Files whose catalogue sphragis checked, left as they were since (issue 29).
//!
//! Every open checks the file's views and macros against this binary's
//! ([`super::views::check_current`], [`super::views::register`]): a scan of
//! `duckdb_functions()` (some 3,300 rows, DuckDB's own functions included, whose first scan
//! parses DuckDB's default macros) and of `duckdb_views()` with each view's SQL rendered,
//! 60-90 ms of the 0.2 s a `sphragis sql "select 1"` took (perf, 2-core AMD EPYC): the
//! largest fixed cost of every command. So once a command has checked the catalogue (or
//! created it) it records the file's **fingerprint** in the cache folder
//! ([`super::template::cache_dir`], subfolder `verified/`, one small file per database
//! path), and the next open that finds the same fingerprint skips the two scans; any other
//! fingerprint, or none, means the full check.
//!
//! The fingerprint ([`Witness::fingerprint`]) is the SHA-256 of this binary's schema key
//! ([`super::template::key`]: its version, DuckDB library, migrations and SQL files) and
//! the file's state ([`super::checkpoint::file_state`]): its device, inode, size,
//! modification and change times (nanoseconds), and its first 12,288 bytes: DuckDB's main header and its two database headers, one of which every
//! checkpoint rewrites with a higher iteration count. What makes it sound:
//!
//! - **It is the file DuckDB holds.** The bytes and times are read through one descriptor
//!   the process keeps open for good ([`super::checkpoint::kept_open`]: closing a
//!   descriptor of the file would drop DuckDB's lock on it), taken before DuckDB opens the
//!   file when no other descriptor of the process is on it, and used only when another
//!   (DuckDB's) is on the same device and inode afterwards (`/proc/self/fd`; no fingerprint
//!   elsewhere than Linux, nor when this process had the file open already). A file moved
//!   over the path, or a link retargeted, while a command runs is then never the one
//!   fingerprinted.
//! - **DuckDB read nothing but the file.** No fingerprint when DuckDB replayed or holds a
//!   write-ahead log (`pragma_database_size().wal_size` not 0, which DuckDB keeps even if
//!   the log is removed after), or a log or checkpoint journal lies beside the file.
//! - **A change changes it.** A client that changes a view or macro writes the file at its
//!   checkpoint (new header, new times; the change time cannot be set back) or leaves a
//!   write-ahead log. A different sphragis has a different schema key.
//! - **What is recorded was checked.** A command records only a file exactly as it was
//!   before DuckDB opened it (DuckDB then loaded the state recorded), or, at a writing
//!   command's close, exactly as the process's own last checkpoint of it left it: with no
//!   write-ahead log left, the file then holds the connection's catalogue, checked at the
//!   open and changed only by sphragis's own migrations and views. A file that anything
//!   else wrote during the command (a backup copied over it, which ignores DuckDB's lock)
//!   matches neither and is not recorded.
//! - **Stamps are the user's files.** Whoever can write the cache folder could forge one; the
//!   fingerprint guards against other clients' changes and mistakes, as the check it
//!   skips does, not against someone forging sphragis's own records. Two deliberate
//!   constructions are outside it too: a copy landing in the microseconds between a
//!   writer's last checkpoint and its read of the state ([`super::checkpoint::guarded`]
//!   reads it at once), and a write through a shared memory map to pages already dirty,
//!   which Linux gives no new change time.
//!
//! With the cache off (`SPHRAGIS_CACHE_DIR=off`) nothing is recorded and every open checks
//! in full. Recording is best effort (a read-only home, a full disk: the next open checks in
//! full); it changes how fast a file opens, never what an open accepts.

use super::checkpoint::{descriptors_on, file_state, identity, journal_of, kept_open, last_written};
use duckdb::Connection;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Stamps kept in the folder: past this many, the oldest half is removed when a new one
/// is written (each is one small file; tests and `verify` make many scratch databases).
const KEEP_STAMPS: usize = 256;

/// The database file of one open, taken before DuckDB opens it: the descriptor kept open
/// for it and the fingerprint it had then.
#[derive(Debug)]
pub struct Witness {
    /// The resolved path of the database file.
    file: PathBuf,
    /// The process's kept descriptor of that file (never closed).
    handle: Arc<File>,
    /// The file's fingerprint before DuckDB opened it (`None`: not readable to its headers).
    before: Option<String>,
}

impl Witness {
    /// Takes the witness of the database file `file` (a resolved path) before DuckDB opens
    /// it; `None` when it does not exist yet or cannot be opened (a new file: its first open
    /// checks in full).
    ///
    /// Also `None` when another descriptor of this process is open on the file already (a
    /// connection of this process holds it, as `diff --against` the same file does): DuckDB's
    /// descriptor would not then be told from that one's, so such an open checks in full.
    pub fn before_open(file: &Path) -> Option<Self> {
        // the path the stamp is kept under: absolute now that the file exists
        let file = super::checkpoint::resolved(file);
        let (handle, _) = kept_open(&file).ok()?;
        if other_descriptor_on(&handle) {
            return None;
        }
        let before = state_print(&handle);
        Some(Self { file, handle, before })
    }

    /// The witness of the database file `file` that DuckDB created at its open (nothing to
    /// compare with before it: only a writing command records it, after its own
    /// checkpoint). `None` when it cannot be opened, or not exactly one other descriptor of
    /// this process (DuckDB's) is open on it.
    pub fn after_open(file: &Path) -> Option<Self> {
        let file = super::checkpoint::resolved(file);
        let (handle, _) = kept_open(&file).ok()?;
        if descriptors_on(&handle) != 1 {
            return None;
        }
        Some(Self { file, handle, before: None })
    }

    /// The fingerprint of the file as it is now, read through the kept descriptor: hex
    /// SHA-256, 64 characters. `None` when the descriptor is not on the inode another
    /// descriptor of this process (DuckDB's) holds, DuckDB's write-ahead log of its
    /// database is not empty, a log or checkpoint journal lies beside the file, or the file
    /// cannot be read to its headers.
    pub fn fingerprint(&self, conn: &Connection) -> Option<String> {
        if !other_descriptor_on(&self.handle) || !log_is_empty(conn) {
            return None;
        }
        if std::fs::metadata(super::wal_path(&self.file)).is_ok_and(|m| m.len() > 0)
            || journal_of(&self.file).symlink_metadata().is_ok()
        {
            return None;
        }
        state_print(&self.handle)
    }

    /// Whether the file DuckDB holds through `conn` has the fingerprint an earlier command
    /// recorded in the cache folder `dir` after checking its catalogue; false with no cache
    /// folder, no stamp or no fingerprint.
    pub fn is_current(&self, dir: Option<&Path>, conn: &Connection) -> bool {
        let Some(dir) = dir else { return false };
        let Some(recorded) = read_stamp(&stamp_path(dir, &self.file), &self.handle) else { return false };
        self.fingerprint(conn).is_some_and(|now| now == recorded)
    }

    /// Records the fingerprint of the file in `dir`: the catalogue DuckDB holds through
    /// `conn` is the file's (no write-ahead log) and was checked. Call it only after the
    /// catalogue was checked or created in this process, holding DuckDB's lock. Only a file
    /// this process knows is recorded: exactly as it was before DuckDB opened it (DuckDB
    /// loaded that state), or, with `own_checkpoint` (a writing command, at its close),
    /// exactly as this process's last checkpoint of it left it ([`last_written`]: the
    /// checked catalogue and sphragis's statements). A file written by anything else since
    /// (a backup copied over it while the command ran) has neither print. Otherwise (or
    /// with no fingerprint) the old stamp is removed. Best effort: a stamp that cannot be
    /// written is left out.
    pub fn record(&self, dir: Option<&Path>, conn: &Connection, own_checkpoint: bool) {
        let Some(dir) = dir else { return };
        let stamp = stamp_path(dir, &self.file);
        let known = |now: &String| {
            self.before.as_deref() == Some(now.as_str())
                || (own_checkpoint && last_written(&self.handle).is_some_and(|state| print_of(&state) == *now))
        };
        let print = self.fingerprint(conn).filter(known);
        let Some(print) = print else {
            let _ = std::fs::remove_file(&stamp);
            return;
        };
        let Some(folder) = stamp.parent() else { return };
        if std::fs::create_dir_all(folder).is_err() {
            return;
        }
        let new = !stamp.exists();
        // one name per process and call: threads of one process may record at once
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let partial = folder.join(format!(".partial-{}-{call}", std::process::id()));
        // a new file only: never one put there beforehand (a link to the database would be
        // truncated)
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
            .and_then(|mut f| std::io::Write::write_all(&mut f, print.as_bytes()));
        if written.is_err() || std::fs::rename(&partial, &stamp).is_err() {
            let _ = std::fs::remove_file(&partial);
            return;
        }
        if new {
            prune(folder);
        }
    }
}

/// The fingerprint of a file state ([`file_state`]): hex SHA-256 of this binary's schema
/// key and the state.
fn print_of(state: &[u8; 32]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(super::template::key().as_bytes());
    h.update(state);
    crate::hash::hex(&h.finalize())
}

/// The fingerprint of the file open as `handle` as it is now ([`file_state`]).
fn state_print(handle: &File) -> Option<String> {
    file_state(handle).map(|state| print_of(&state))
}

/// Whether another descriptor of this process than `handle` is open on `handle`'s device
/// and inode (after [`Witness::before_open`] found none: DuckDB's, on the database file).
fn other_descriptor_on(handle: &File) -> bool {
    descriptors_on(handle) > 0
}

/// Whether DuckDB holds no write-ahead log for `conn`'s database: `wal_size` of
/// `pragma_database_size()` is `0 bytes` (DuckDB keeps the size of a log it replayed even
/// after the log file is removed).
pub(super) fn log_is_empty(conn: &Connection) -> bool {
    conn.query_row("select wal_size from pragma_database_size() where database_name = current_database()", [], |r| {
        r.get::<_, String>(0)
    })
    .is_ok_and(|size| size == "0 bytes")
}

/// The fingerprint a stamp holds: 64 characters of a regular file, read without waiting
/// and without following a symbolic link (a FIFO, device or link put in its place is never
/// read); `None` for anything else. A stamp that is a hard link to the database file open
/// as `database` is left open, never closed: closing a descriptor of the database file
/// would drop DuckDB's lock on it ([`super::checkpoint::kept_open`]).
fn read_stamp(stamp: &Path, database: &File) -> Option<String> {
    use std::io::Read;
    let mut opened =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW).open(stamp).ok()?;
    if identity(&opened).is_some_and(|id| Some(id) == identity(database)) {
        std::mem::forget(opened);
        return None;
    }
    let meta = opened.metadata().ok()?;
    if !meta.is_file() || meta.len() != 64 {
        return None;
    }
    let mut text = String::with_capacity(64);
    opened.read_to_string(&mut text).ok()?;
    (text.len() == 64).then_some(text)
}

/// The stamp of `file` in the cache folder `dir`: `verified/<SHA-256 of the path>`.
fn stamp_path(dir: &Path, file: &Path) -> PathBuf {
    let name = crate::hash::sha256_hex(file.as_os_str().as_encoded_bytes());
    dir.join("verified").join(name)
}

/// Removes the oldest half of the stamps in `folder` once there are more than
/// [`KEEP_STAMPS`].
fn prune(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    let mut stamps: Vec<(std::time::SystemTime, PathBuf)> =
        entries.flatten().filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path()))).collect();
    if stamps.len() <= KEEP_STAMPS {
        return;
    }
    stamps.sort();
    for (_, path) in &stamps[..stamps.len() / 2] {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests;
