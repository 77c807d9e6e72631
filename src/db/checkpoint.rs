//! Checkpoints that a stopped process cannot tear.
//!
//! A DuckDB checkpoint (2.0.0) writes the new metadata into free 4 KiB slots of the
//! file's existing 256 KiB metadata blocks and writes each such block back in place
//! (`MetadataManager::Flush`), before it writes the new database header. The header on
//! disk until then points into those same blocks. A process killed while one of them is
//! being written (Linux ends a buffered write at a page boundary when SIGKILL arrives;
//! a power cut can tear it too) leaves a block whose pages are part new, part old, and
//! whose checksum no longer matches: the file does not open ("Corrupt database file:
//! computed checksum ... does not match stored checksum ... in block at location ...").
//! `tests/crash.rs` found it: a few kills in a hundred during a load's commit.
//!
//! So sphragis turns DuckDB's own checkpoints off on the connections it writes with
//! ([`configure`]) and runs each checkpoint through [`guarded`]: first the file's
//! headers and every metadata block with a free slot (`pragma_metadata_info`; a block
//! without one gets no new metadata, and new blocks are written where the header on disk
//! points at nothing) are copied to a journal beside the file, `<file>.checkpoint-journal`,
//! synced and then renamed into place; then the checkpoint runs; then the journal is
//! removed. [`recover`] runs before every open of a file: a journal whose two database
//! headers are still the file's (the checkpoint never wrote its header) is written back,
//! main header included, which returns
//! every block the header on disk points at to what it held, and DuckDB then replays its
//! write-ahead log, which it removes only after a header is written. A journal whose
//! database headers differ from the file's belongs to a checkpoint that wrote its
//! header: it is kept until DuckDB has opened the file ([`forget_completed`]), and
//! applied should DuckDB refuse the file as corrupt ([`restore_after_refusal`]: that
//! header write torn, as a power cut can leave it). `crate::db::open_journaled` runs the
//! three around every open and attach. None of them touches a journal, or a half-written
//! one, while another process holds DuckDB's lock on the file.
//!
//! Layout assumed (DuckDB's single-file storage, 1.x to 2.0): three 4 KiB headers,
//! then block `i` at byte `12288 + i × block_size`, `block_size` as
//! `pragma_database_size()` reports it. The journal is restored only when the database
//! headers match byte for byte, and then every range it holds gets back the bytes it had:
//! the file as its header describes it is unchanged however the ranges fall.

use anyhow::{Context, Result, bail};
use duckdb::Connection;
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Bytes before block 0: the main header and the two database headers.
pub const HEADERS: u64 = 3 * 4096;

/// Bytes of the main header (magic, storage version), before the two database headers.
const MAIN_HEADER: u64 = 4096;

const MAGIC: &[u8] = b"sphragis checkpoint journal 1\n";

/// The largest `checkpoint_threshold` DuckDB accepts, so that no commit checkpoints on
/// its own (sphragis checkpoints through [`guarded`]).
const NO_AUTOMATIC_CHECKPOINT: &str = "1000TB";

/// The journal of the file at `file`: `<file>.checkpoint-journal`.
pub fn journal_of(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.checkpoint-journal", file.display()))
}

/// The name a journal is written under until it is whole: `<journal>.partial`.
pub fn partial_of(journal: &Path) -> PathBuf {
    PathBuf::from(format!("{}.partial", journal.display()))
}

/// Turns off the checkpoints DuckDB runs by itself on `conn`'s database instance: at
/// shutdown and detach (`disable_checkpoint_on_shutdown`) and at a commit that grows the
/// write-ahead log past `checkpoint_threshold` (set to the largest value). Committed
/// work stays in the write-ahead log until [`guarded`] checkpoints it.
///
/// Errors: DuckDB refuses a setting.
pub fn configure(conn: &Connection) -> Result<()> {
    conn.execute_batch("pragma disable_checkpoint_on_shutdown")?;
    no_automatic_checkpoint(conn)
}

/// Sets `checkpoint_threshold` back to the value [`configure`] gives it.
pub fn no_automatic_checkpoint(conn: &Connection) -> Result<()> {
    conn.execute_batch(&format!("set checkpoint_threshold = '{NO_AUTOMATIC_CHECKPOINT}'"))?;
    Ok(())
}

/// The name and file of the database `conn` uses by default; `None` in memory.
pub fn main_database(conn: &Connection) -> Result<Option<(String, PathBuf)>> {
    let (name, path): (String, Option<String>) = conn.query_row(
        "select database_name, path from duckdb_databases() where database_name = current_database()",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(path.filter(|p| !p.is_empty() && p != ":memory:").map(|p| (name, PathBuf::from(p))))
}

/// Runs `checkpoint` (work that checkpoints `database`, attached on `conn` from
/// `file`: a `CHECKPOINT` statement, or a commit at a zero `checkpoint_threshold`)
/// with the blocks it may write in place saved in the journal first, and removes the
/// journal when it returns `Ok`. On an error the journal stays; the next [`recover`]
/// restores it or removes it.
///
/// Errors: the journal cannot be written or synced (nothing is checkpointed then), or
/// `checkpoint`'s own.
pub fn guarded<T>(conn: &Connection, database: &str, file: &Path, checkpoint: impl FnOnce() -> Result<T>) -> Result<T> {
    let journal = journal_of(file);
    write_journal(conn, database, file, &journal)
        .with_context(|| format!("{}: saving the blocks a checkpoint rewrites in place", journal.display()))?;
    super::crash_point("checkpoint:journal-written");
    let value = checkpoint()?;
    // at once: the shorter the time between DuckDB's last write and this read, the less
    // room for another writer that ignores the lock (super::verified)
    note_written(file);
    std::fs::remove_file(&journal).with_context(|| format!("{}: cannot remove", journal.display()))?;
    Ok(value)
}

/// Checkpoints the database `conn` opened from a file, through [`guarded`]; nothing for
/// an in-memory database or an empty write-ahead log.
///
/// Errors: as [`guarded`] (for example a transaction still open on `conn`).
pub fn checkpoint_main(conn: &Connection) -> Result<()> {
    let Some((name, file)) = main_database(conn)? else { return Ok(()) };
    let wal = super::wal_path(&file);
    if std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0) == 0 {
        return Ok(());
    }
    guarded(conn, &name, &file, || Ok(conn.execute_batch(&format!("checkpoint {}", super::identifier(&name)))?))
}

/// Writes the journal: magic, the headers, then (offset, length, bytes) for each
/// metadata block with a free slot, then the SHA-256 of all of it; synced, then renamed
/// into place (a journal on disk is always whole).
fn write_journal(conn: &Connection, database: &str, file: &Path, journal: &Path) -> Result<()> {
    let block_size: i64 =
        conn.query_row("select block_size from pragma_database_size() where database_name = ?", [database], |r| {
            r.get(0)
        })?;
    let mut statement =
        conn.prepare("select block_id from pragma_metadata_info(?) where free_blocks > 0 order by block_id")?;
    let blocks: Vec<i64> = statement.query_map([database], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let (source, _) = kept_open(file)?;
    let mut ranges = vec![(0u64, HEADERS)];
    ranges.extend(blocks.iter().map(|&b| (HEADERS + b as u64 * block_size as u64, block_size as u64)));
    let mut text = Vec::with_capacity(MAGIC.len() + ranges.iter().map(|r| r.1 as usize + 16).sum::<usize>() + 40);
    text.extend_from_slice(MAGIC);
    text.extend_from_slice(&(ranges.len() as u64).to_le_bytes());
    for (offset, length) in ranges {
        let mut bytes = vec![0u8; length as usize];
        source
            .read_exact_at(&mut bytes, offset)
            .with_context(|| format!("{}: cannot read {length} bytes at {offset}", file.display()))?;
        text.extend_from_slice(&offset.to_le_bytes());
        text.extend_from_slice(&length.to_le_bytes());
        text.extend_from_slice(&bytes);
    }
    let digest = Sha256::digest(&text);
    text.extend_from_slice(&digest);
    let partial = partial_of(journal);
    let written = (|| -> Result<()> {
        let mut out = File::create(&partial).with_context(|| format!("{}: cannot create", partial.display()))?;
        out.write_all(&text).with_context(|| format!("{}: cannot write", partial.display()))?;
        out.sync_all().with_context(|| format!("{}: cannot sync", partial.display()))?;
        drop(out);
        std::fs::rename(&partial, journal).with_context(|| format!("{}: cannot rename", partial.display()))?;
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&partial); // on a full disk, give its space back
    }
    written?;
    sync_folder(journal);
    Ok(())
}

/// The journal's ranges, checked against its digest: `(offset, bytes)`, headers first.
fn read_journal(journal: &Path) -> Result<Vec<(u64, Vec<u8>)>> {
    let mut text = Vec::new();
    File::open(journal)
        .and_then(|mut f| f.read_to_end(&mut text))
        .with_context(|| format!("{}: cannot read the checkpoint journal", journal.display()))?;
    let bad = || {
        anyhow::anyhow!(
            "{}: not a whole checkpoint journal (its SHA-256 does not match its bytes), so it is not applied and \
             the database file beside it is untouched; sphragis writes its journals whole, so this one was \
             changed since. If no sphragis process is running, move it aside and run the command again (keep \
             it if the file then does not open)",
            journal.display()
        )
    };
    if text.len() < MAGIC.len() + 8 + 32 || !text.starts_with(MAGIC) {
        return Err(bad());
    }
    let (body, digest) = text.split_at(text.len() - 32);
    if Sha256::digest(body).as_slice() != digest {
        return Err(bad());
    }
    let mut at = MAGIC.len();
    let number = |at: &mut usize| -> Result<u64> {
        let bytes = body.get(*at..*at + 8).ok_or_else(bad)?;
        *at += 8;
        Ok(u64::from_le_bytes(bytes.try_into()?))
    };
    let count = number(&mut at)?;
    let mut ranges = Vec::new();
    for _ in 0..count {
        let offset = number(&mut at)?;
        let length = number(&mut at)? as usize;
        let bytes = body.get(at..at + length).ok_or_else(bad)?;
        at += length;
        ranges.push((offset, bytes.to_vec()));
    }
    if ranges.first().is_none_or(|(offset, bytes)| *offset != 0 || bytes.len() as u64 != HEADERS) {
        return Err(bad());
    }
    Ok(ranges)
}

/// What [`recover`] did with a journal it found.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovery {
    /// No journal beside the file (or one another process, which has the file open, may
    /// be writing).
    Nothing,
    /// The checkpoint had written its database header: the journal stays until DuckDB has
    /// opened the file ([`forget_completed`]), in case that header was itself torn.
    Kept,
    /// The checkpoint stopped before its header: this many ranges (headers included) got
    /// their bytes back, and the journal was removed.
    Restored(usize),
}

/// The file DuckDB writes for `file`: symbolic links resolved (DuckDB puts its
/// write-ahead log and sphragis its journal beside the target).
///
/// A link whose target does not exist yet (a new database given through a link) is
/// followed too: DuckDB creates the target, but would name its write-ahead log after the
/// link, where no later open through the link looks.
pub fn resolved(file: &Path) -> PathBuf {
    let mut file = file.to_path_buf();
    for _ in 0..40 {
        if let Ok(real) = std::fs::canonicalize(&file) {
            return real;
        }
        match std::fs::read_link(&file) {
            Ok(target) => file = file.parent().unwrap_or(Path::new("")).join(target),
            Err(_) => break,
        }
    }
    file
}

/// The journal beside `file` (after [`resolved`]) and the file opened for restoring it,
/// holding DuckDB's lock; `None` when there is no journal or another process holds the
/// file (its journal may be in the making). A half-written journal (`.partial`, left by a
/// process stopped while writing it) is removed here, under the lock.
fn locked_journal(file: &Path) -> Result<Option<(PathBuf, Arc<File>)>> {
    let journal = journal_of(file);
    let partial = partial_of(&journal);
    if !(journal.exists() || partial.exists()) || !file.is_file() {
        return Ok(None);
    }
    let (target, writable) = kept_open(file)?;
    if !writable {
        // a user who may only read: a half-written journal is never applied, and one
        // whose checkpoint wrote its header is not needed unless DuckDB refuses the file
        if !journal.exists() || !header_unwritten(&target, &read_journal(&journal)?)? {
            return Ok(None);
        }
        bail!(
            "{}: a process stopped during a checkpoint of this file and left {} to restore it from, but this \
             user cannot write the file: run any sphragis command on it as a user who can",
            file.display(),
            journal.display()
        );
    }
    if !lock_for_writing(&target).with_context(|| format!("{}: cannot lock", file.display()))? {
        return Ok(None);
    }
    if partial.exists() {
        std::fs::remove_file(&partial).with_context(|| format!("{}: cannot remove", partial.display()))?;
    }
    Ok(journal.exists().then_some((journal, target)))
}

/// Whether the file's two database headers (bytes 4096..12288; a checkpoint writes
/// them last, after the main header, which it rewrites only to change the storage
/// version) are still those the journal saved.
fn header_unwritten(target: &File, ranges: &[(u64, Vec<u8>)]) -> Result<bool> {
    let mut headers = vec![0u8; HEADERS as usize];
    target.read_exact_at(&mut headers, 0)?;
    let database_headers = MAIN_HEADER as usize..HEADERS as usize;
    Ok(headers[database_headers.clone()] == ranges[0].1[database_headers])
}

/// Writes every range of the journal back, syncs the file, removes the journal.
fn restore(target: &File, journal: &Path, ranges: &[(u64, Vec<u8>)]) -> Result<()> {
    for (offset, bytes) in ranges {
        target.write_all_at(bytes, *offset)?;
    }
    target.sync_all()?;
    std::fs::remove_file(journal).with_context(|| format!("{}: cannot remove", journal.display()))?;
    sync_folder(journal);
    Ok(())
}

/// Puts back what a checkpoint stopped before its header rewrote in place (see the
/// module doc). Run before DuckDB opens `file`; does nothing while another process holds
/// DuckDB's lock on the file (its journal may be in use).
///
/// Errors: the journal is not whole (it is kept, the file untouched), the file cannot be
/// written by this user, or it cannot be locked, read or written.
pub fn recover(file: &Path) -> Result<Recovery> {
    let file = resolved(file);
    let Some((journal, target)) = locked_journal(&file)? else { return Ok(Recovery::Nothing) };
    let ranges = read_journal(&journal)?;
    if !header_unwritten(&target, &ranges)? {
        return Ok(Recovery::Kept);
    }
    restore(&target, &journal, &ranges)
        .with_context(|| format!("{}: restoring it from {}", file.display(), journal.display()))?;
    Ok(Recovery::Restored(ranges.len()))
}

/// After DuckDB refused `file` with `refusal`: when it found a corrupt block and a
/// journal is beside the file (a checkpoint whose database header was written but torn,
/// as a power cut can leave a 4 KiB write), puts every range of the journal back and
/// returns `true`: the caller opens the file again, now as it was before that
/// checkpoint, and DuckDB replays the write-ahead log (removed only after the header is
/// synced). `false`: nothing done.
///
/// Errors: as [`recover`].
pub fn restore_after_refusal(file: &Path, refusal: &str) -> Result<bool> {
    if !refusal.contains("Corrupt database file") {
        return Ok(false);
    }
    let file = resolved(file);
    let Some((journal, target)) = locked_journal(&file)? else { return Ok(false) };
    let ranges = read_journal(&journal)?;
    restore(&target, &journal, &ranges)
        .with_context(|| format!("{}: restoring it from {}", file.display(), journal.display()))?;
    Ok(true)
}

/// After DuckDB opened `file`: removes a journal whose checkpoint wrote its database
/// header (that header is whole, as DuckDB read it). A journal whose header was not
/// written is left (another process held the file when this one opened it).
///
/// Errors: the journal cannot be read or removed.
pub fn forget_completed(file: &Path) -> Result<()> {
    let file = resolved(file);
    let journal = journal_of(&file);
    if !journal.is_file() {
        return Ok(());
    }
    let (target, _) = kept_open(&file)?;
    let Ok(ranges) = read_journal(&journal) else { return Ok(()) };
    if !header_unwritten(&target, &ranges)? {
        std::fs::remove_file(&journal).with_context(|| format!("{}: cannot remove", journal.display()))?;
    }
    Ok(())
}

/// `file`, opened once per process (read-write where allowed) and never closed: closing
/// any descriptor of a file releases every POSIX record lock the process holds on it,
/// DuckDB's own included, so the journal's reads must not open and close the file
/// beside DuckDB. Keyed by device and inode.
/// Also returns whether the descriptor can write.
pub(super) fn kept_open(file: &Path) -> Result<(Arc<File>, bool)> {
    use std::os::unix::fs::MetadataExt;
    /// (device, inode), the descriptor kept open for it, and whether it can write.
    type Kept = ((u64, u64), Arc<File>, bool);
    static FILES: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
    let meta = std::fs::metadata(file).with_context(|| format!("{}: cannot read", file.display()))?;
    let key = (meta.dev(), meta.ino());
    let mut files = FILES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, open, writable)) = files.iter().find(|(k, _, _)| *k == key) {
        return Ok((open.clone(), *writable));
    }
    let (open, writable) = match OpenOptions::new().read(true).write(true).open(file) {
        Ok(open) => (open, true),
        Err(_) => (File::open(file).with_context(|| format!("{}: cannot open", file.display()))?, false),
    };
    let open = Arc::new(open);
    files.push((key, open.clone(), writable));
    Ok((open, writable))
}

/// SHA-256 of the state of the file open as `handle`: its device, inode, size,
/// modification and change times (nanoseconds) and its first [`HEADERS`] bytes (DuckDB's
/// headers, one of which every checkpoint rewrites); `None` when it is shorter or cannot
/// be read. Any write to the file changes its change time, which cannot be set back.
pub(super) fn file_state(handle: &File) -> Option<[u8; 32]> {
    use std::os::unix::fs::MetadataExt;
    let meta = handle.metadata().ok()?;
    let mut headers = vec![0u8; HEADERS as usize];
    handle.read_exact_at(&mut headers, 0).ok()?;
    let mut h = Sha256::new();
    for n in [meta.dev(), meta.ino(), meta.size()] {
        h.update(n.to_le_bytes());
    }
    for n in [meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()] {
        h.update(n.to_le_bytes());
    }
    h.update(&headers);
    Some(h.finalize().into())
}

/// The state ([`file_state`]) each database file had just after this process last
/// checkpointed it through [`guarded`], by device and inode.
static WRITTEN: Mutex<Vec<Written>> = Mutex::new(Vec::new());

/// (device, inode) of a database file, and its state just after a checkpoint.
type Written = ((u64, u64), [u8; 32]);

/// Notes the state of `file` right after this process checkpointed it, read through the
/// kept descriptor while another descriptor (DuckDB's) is on the same inode; an older note
/// of that inode is dropped, and nothing is noted when that cannot be read.
fn note_written(file: &Path) {
    let Ok((handle, _)) = kept_open(file) else { return };
    let Some(key) = identity(&handle) else { return };
    let state = (descriptors_on(&handle) > 0).then(|| file_state(&handle)).flatten();
    let mut notes = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    notes.retain(|(k, _)| *k != key);
    if let Some(state) = state {
        notes.push((key, state));
    }
}

/// [`note_written`], for the tests of [`super::verified`] (a checkpoint run outside
/// [`guarded`]).
#[cfg(test)]
pub(super) fn note_written_for_tests(file: &Path) {
    note_written(file)
}

/// The state [`guarded`] noted after this process last checkpointed the file open as
/// `handle`; `None` when it never did (or could not read it then).
pub(super) fn last_written(handle: &File) -> Option<[u8; 32]> {
    let key = identity(handle)?;
    let notes = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    notes.iter().find(|(k, _)| *k == key).map(|(_, state)| *state)
}

/// The device and inode of the file open as `handle`.
pub(super) fn identity(handle: &File) -> Option<(u64, u64)> {
    handle.metadata().ok().map(|m| identity_of(&m))
}

/// The device and inode in `meta`.
fn identity_of(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// How many descriptors of this process other than `handle` are open on `handle`'s
/// device and inode: read from `/proc/self/fd`, whose entries lead to the open file even
/// after it was renamed or removed. 0 where there is no `/proc` (not Linux) or it cannot
/// be read.
pub(super) fn descriptors_on(handle: &File) -> usize {
    use std::os::fd::AsRawFd;
    let Some(key) = identity(handle) else { return 0 };
    let own = handle.as_raw_fd().to_string();
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return 0 };
    entries
        .flatten()
        .filter(|e| {
            e.file_name().to_str() != Some(own.as_str())
                && std::fs::metadata(e.path()).is_ok_and(|m| identity_of(&m) == key)
        })
        .count()
}

/// Takes the POSIX record lock DuckDB takes on a database file, for writing, without
/// waiting: `false` when another process holds it. Released when `file` is closed.
fn lock_for_writing(file: &File) -> Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed `flock` is a valid value of this plain C struct, and `fcntl` with
    // F_SETLK reads it and nothing else.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as _;
    lock.l_whence = libc::SEEK_SET as _;
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) };
    if rc == 0 {
        return Ok(true);
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EAGAIN) => Ok(false),
        _ => Err(error.into()),
    }
}

/// Syncs the folder holding `path`, so a rename or removal in it is on disk (best effort).
fn sync_folder(path: &Path) {
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && let Ok(dir) = File::open(folder)
    {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sphragis-checkpoint-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("t.duckdb")
    }

    /// A file whose header points at metadata blocks with free slots (two checkpoints
    /// of a table that changed), and rows 1000..1999 committed to the write-ahead log
    /// only: what a writing command holds just before its closing checkpoint.
    fn file_with_pending_wal(file: &Path) -> Connection {
        let conn = Connection::open(file).unwrap();
        configure(&conn).unwrap();
        conn.execute_batch(
            "create table t (i integer, s varchar); insert into t select i, 'row ' || i from range(500) r(i); \
             checkpoint; create table u (j integer); insert into t select i, 'row ' || i from range(500, 1000) r(i); \
             checkpoint; insert into t select i, 'row ' || i from range(1000, 2000) r(i);",
        )
        .unwrap();
        conn
    }

    /// Writes `bytes` at `offset` of `file`, as a stopped write may have left them.
    fn write_at(file: &Path, offset: u64, bytes: &[u8]) {
        OpenOptions::new().write(true).open(file).unwrap().write_all_at(bytes, offset).unwrap();
    }

    /// The first `n` bytes of a saved range, each flipped: a write cut after them.
    fn torn(bytes: &[u8], n: usize) -> Vec<u8> {
        bytes[..n].iter().map(|b| !b).collect()
    }

    fn rows(file: &Path) -> (i64, i64) {
        let conn = Connection::open(file).unwrap();
        conn.query_row("select count(*), sum(i) from t", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap()
    }

    #[test]
    fn torn_metadata_block_of_a_stopped_checkpoint_is_restored_from_the_journal() {
        let file = scratch("torn");
        let conn = file_with_pending_wal(&file);
        let journal = journal_of(&file);
        write_journal(&conn, "t", &file, &journal).unwrap();
        drop(conn); // stopped before its checkpoint: the rows are in the write-ahead log
        let ranges = read_journal(&journal).unwrap();
        assert!(ranges.len() >= 2, "the journal holds the headers and at least one metadata block");
        // a checkpoint killed mid-write: the first pages of a saved metadata block new
        // (here: other bytes), the rest old, the headers untouched
        let (offset, bytes) = &ranges[1];
        write_at(&file, *offset, &torn(bytes, 8192));
        let refused = Connection::open(&file).map(|_| ()).unwrap_err().to_string();
        assert!(refused.contains("Corrupt database file"), "{refused}");

        assert_eq!(recover(&file).unwrap(), Recovery::Restored(ranges.len()));
        assert!(!journal.exists());
        // every committed row: 0..1999, sum 1999 * 2000 / 2
        assert_eq!(rows(&file), (2000, 1_999_000));
    }

    #[test]
    fn checkpoint_stopped_after_rewriting_only_the_main_header_is_restored() {
        // a checkpoint that changes the storage version rewrites the main header (bytes
        // 0..4096) before its metadata and database header: stopped between them, the
        // file is to be restored, main header included
        let file = scratch("main-header");
        let conn = file_with_pending_wal(&file);
        let journal = journal_of(&file);
        write_journal(&conn, "t", &file, &journal).unwrap();
        drop(conn);
        let ranges = read_journal(&journal).unwrap();
        write_at(&file, 64, &[0xff; 64]);
        let (offset, bytes) = &ranges[1];
        write_at(&file, *offset, &torn(bytes, 4096));
        assert!(Connection::open(&file).is_err());
        assert_eq!(recover(&file).unwrap(), Recovery::Restored(ranges.len()));
        assert_eq!(rows(&file), (2000, 1_999_000));
    }

    #[test]
    fn journal_of_a_completed_checkpoint_is_kept_until_the_file_opens_then_removed() {
        let file = scratch("completed");
        let conn = file_with_pending_wal(&file);
        let journal = journal_of(&file);
        write_journal(&conn, "t", &file, &journal).unwrap();
        conn.execute_batch("checkpoint").unwrap(); // its header written, then stopped
        drop(conn);
        let before = std::fs::read(&file).unwrap();
        assert_eq!(recover(&file).unwrap(), Recovery::Kept);
        assert!(journal.exists());
        assert_eq!(std::fs::read(&file).unwrap(), before);
        assert_eq!(rows(&file), (2000, 1_999_000));
        forget_completed(&file).unwrap();
        assert!(!journal.exists());
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }

    #[test]
    fn torn_database_header_of_a_checkpoint_is_restored_after_duckdb_refuses_it() {
        // a power cut while the checkpoint writes its 4 KiB database header: the header
        // differs from the journal's (so it is not applied before the open), and DuckDB
        // refuses the file; the write-ahead log is still there (removed after the header)
        let file = scratch("torn-header");
        let conn = file_with_pending_wal(&file);
        let journal = journal_of(&file);
        let wal = crate::db::wal_path(&file);
        write_journal(&conn, "t", &file, &journal).unwrap();
        let log = std::fs::read(&wal).unwrap();
        let before = std::fs::read(&file).unwrap();
        conn.execute_batch("checkpoint").unwrap();
        drop(conn);
        // stopped at its header: the log not yet removed, and the file not yet cut short
        // (DuckDB truncates blocks freed at its end after the header is synced)
        std::fs::write(&wal, log).unwrap();
        let mut after = std::fs::read(&file).unwrap();
        if after.len() < before.len() {
            after.extend_from_slice(&before[after.len()..]);
            std::fs::write(&file, &after).unwrap();
        }
        let old = &read_journal(&journal).unwrap()[0].1;
        let new = std::fs::read(&file).unwrap()[..HEADERS as usize].to_vec();
        let slot = [4096usize, 8192].into_iter().find(|&at| new[at..at + 4096] != old[at..at + 4096]).unwrap();
        // the new checksum landed, the old fields after it stayed
        write_at(&file, (slot + 8) as u64, &old[slot + 8..slot + 512]);
        assert_eq!(recover(&file).unwrap(), Recovery::Kept);
        let refusal = Connection::open(&file).map(|_| ()).unwrap_err().to_string();
        assert!(refusal.contains("Corrupt database file"), "{refusal}");
        assert!(restore_after_refusal(&file, &refusal).unwrap());
        assert!(!journal.exists());
        assert_eq!(rows(&file), (2000, 1_999_000));
    }

    #[test]
    fn guarded_checkpoint_leaves_no_journal_and_no_wal() {
        let file = scratch("guarded");
        let conn = file_with_pending_wal(&file);
        checkpoint_main(&conn).unwrap();
        assert!(!journal_of(&file).exists());
        let wal = crate::db::wal_path(&file);
        assert_eq!(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0), 0);
        drop(conn);
        assert_eq!(rows(&file), (2000, 1_999_000));
    }

    #[test]
    fn journal_that_is_not_whole_is_refused_and_kept() {
        let file = scratch("partial");
        let conn = file_with_pending_wal(&file);
        let journal = journal_of(&file);
        write_journal(&conn, "t", &file, &journal).unwrap();
        drop(conn);
        let text = std::fs::read(&journal).unwrap();
        std::fs::write(&journal, &text[..text.len() - 1]).unwrap();
        let before = std::fs::read(&file).unwrap();
        let err = recover(&file).unwrap_err().to_string();
        assert!(err.contains("not a whole checkpoint journal") && err.contains("move it aside"), "{err}");
        assert!(journal.exists());
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }
}
