use super::*;
use std::os::unix::fs::FileExt;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-verified-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A small DuckDB file at `dir/name` with one view, closed (checkpointed).
fn database(dir: &Path, name: &str) -> PathBuf {
    let file = dir.join(name);
    Connection::open(&file).unwrap().execute_batch("create view v as select 1 as x").unwrap();
    super::super::checkpoint::resolved(&file)
}

/// The fingerprint is the file DuckDB holds, as it is: it follows the headers and the
/// times, and there is none for a file DuckDB does not hold or whose log it replayed.
#[test]
fn fingerprint_follows_the_file_duckdb_holds() {
    let dir = scratch("print");
    let file = database(&dir, "f.duckdb");
    let witness = Witness::before_open(&file).unwrap();
    // DuckDB does not hold it: no fingerprint, whatever the file
    let memory = Connection::open_in_memory().unwrap();
    assert_eq!(witness.fingerprint(&memory), None, "no descriptor of DuckDB's is on the file");
    let conn = Connection::open(&file).unwrap();
    let first = witness.fingerprint(&conn).unwrap();
    assert_eq!(first.len(), 64);
    assert_eq!(witness.before.as_deref(), Some(first.as_str()), "DuckDB's open wrote nothing");
    assert_eq!(witness.fingerprint(&conn).as_deref(), Some(first.as_str()), "same file, same fingerprint");
    // a byte of the second database header changed in place, the times put back: the
    // change time still moves, and the header bytes differ
    let before = std::fs::metadata(&file).unwrap().modified().unwrap();
    let byte = {
        let mut b = [0u8; 1];
        witness.handle.read_exact_at(&mut b, 9000).unwrap();
        b[0]
    };
    witness.handle.write_all_at(&[byte ^ 0xff], 9000).unwrap();
    witness.handle.set_modified(before).unwrap();
    let changed = witness.fingerprint(&conn).unwrap();
    assert_ne!(changed, first, "a header byte changed");
    witness.handle.write_all_at(&[byte], 9000).unwrap();
    witness.handle.set_modified(before).unwrap();
    assert_ne!(witness.fingerprint(&conn).unwrap(), first, "the bytes put back, the change time is not");
    // a log or a journal beside the file: none; an empty log is none
    std::fs::write(super::super::wal_path(&file), b"").unwrap();
    assert!(witness.fingerprint(&conn).is_some(), "an empty log holds nothing");
    std::fs::write(journal_of(&file), b"x").unwrap();
    assert_eq!(witness.fingerprint(&conn), None, "a checkpoint journal beside the file");
    std::fs::remove_file(journal_of(&file)).unwrap();
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// DuckDB replayed a write-ahead log at its open: no fingerprint, even when the log file
/// is gone by the time it is taken (removed by another process after DuckDB read it).
#[test]
fn log_replayed_at_the_open_leaves_no_fingerprint_even_once_removed() {
    let dir = scratch("replayed");
    let file = database(&dir, "f.duckdb");
    Connection::open(&file)
        .unwrap()
        .execute_batch("pragma disable_checkpoint_on_shutdown; create or replace view v as select 2 as x")
        .unwrap();
    let wal = super::super::wal_path(&file);
    assert!(std::fs::metadata(&wal).unwrap().len() > 0, "the change is in the write-ahead log");
    let witness = Witness::before_open(&file).unwrap();
    let config = duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap();
    let conn = Connection::open_with_flags(&file, config).unwrap();
    assert_eq!(conn.query_row("select x from v", [], |r| r.get::<_, i32>(0)).unwrap(), 2, "replayed");
    assert_eq!(witness.fingerprint(&conn), None);
    std::fs::rename(&wal, dir.join("moved.wal")).unwrap();
    assert!(!wal.exists());
    assert_eq!(witness.fingerprint(&conn), None, "DuckDB still holds what it replayed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Another file moved over the path after DuckDB opened it: a witness taken from the path
/// then is of a file DuckDB does not hold, and has no fingerprint; the witness taken
/// before the open still names the file DuckDB holds.
#[test]
fn file_moved_over_the_path_is_not_the_one_fingerprinted() {
    let dir = scratch("moved");
    let file = database(&dir, "f.duckdb");
    let other = database(&dir, "other.duckdb");
    let witness = Witness::before_open(&file).unwrap();
    let conn = Connection::open(&file).unwrap();
    let held = witness.fingerprint(&conn).unwrap();
    std::fs::rename(&other, &file).unwrap();
    let after = Witness::before_open(&file).unwrap();
    assert_eq!(after.fingerprint(&conn), None, "the path now names a file DuckDB does not hold");
    // the witness taken before the open is still of DuckDB's file, whose change time the
    // unlink moved (its link count changed): another fingerprint, so a full check
    let unlinked = witness.fingerprint(&conn).expect("DuckDB holds the witnessed file");
    assert_ne!(unlinked, held);
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stamp is recorded only for what was checked, and matches until the file changes;
/// with no cache folder nothing is written.
#[test]
fn stamp_is_recorded_for_the_checked_file_and_matches_until_it_changes() {
    let dir = scratch("stamp");
    let cache = dir.join("cache");
    let file = database(&dir, "f.duckdb");
    let witness = Witness::before_open(&file).unwrap();
    let conn = Connection::open(&file).unwrap();
    assert!(!witness.is_current(Some(&cache), &conn), "nothing recorded yet");
    witness.record(None, &conn, false);
    assert!(!cache.exists(), "no cache folder: nothing written");
    witness.record(Some(&cache), &conn, false);
    assert!(witness.is_current(Some(&cache), &conn), "the file as it was before the open");
    assert!(!witness.is_current(None, &conn), "no cache folder: never current");
    // the file written after the open by a checkpoint this process did not note (not
    // through checkpoint::guarded): not the state DuckDB loaded, so the stamp is removed
    conn.execute_batch("create table t (a integer); checkpoint").unwrap();
    assert!(!witness.is_current(Some(&cache), &conn), "the file changed after the stamp");
    for own_checkpoint in [false, true] {
        witness.record(Some(&cache), &conn, own_checkpoint);
        assert!(!stamp_path(&cache, &file).exists(), "an unknown state is not recorded as checked");
    }
    // a checkpoint of this process's, noted as checkpoint::guarded notes it: a writer
    // records the file it left
    conn.execute_batch("create table t2 (a integer); checkpoint").unwrap();
    super::super::checkpoint::note_written_for_tests(&file);
    witness.record(Some(&cache), &conn, false);
    assert!(!stamp_path(&cache, &file).exists(), "a reader records only the state before its open");
    witness.record(Some(&cache), &conn, true);
    assert!(witness.is_current(Some(&cache), &conn), "a writer's own checkpoint wrote the connection's catalogue");
    // a change left in the log: no fingerprint, the stamp goes
    conn.execute_batch("set checkpoint_threshold = '1000TB'; create table u (a integer)").unwrap();
    assert!(!witness.is_current(Some(&cache), &conn));
    witness.record(Some(&cache), &conn, true);
    assert!(!stamp_path(&cache, &file).exists());
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A backup copied over the database file while a writing command runs (a `cp`, which
/// ignores DuckDB's lock and writes into the same inode) is neither the state before the
/// open nor the one the command's checkpoint left: the command records nothing, and the
/// next open checks the copied file in full.
#[test]
fn file_copied_over_during_a_writing_command_is_not_recorded() {
    let dir = scratch("copied");
    let cache = dir.join("cache");
    let file = database(&dir, "f.duckdb");
    let backup = dir.join("backup.duckdb");
    std::fs::copy(&file, &backup).unwrap();
    let witness = Witness::before_open(&file).unwrap();
    let conn = Connection::open(&file).unwrap();
    // nothing checkpointed by the command: the copy lands on the file it opened
    std::fs::write(&file, std::fs::read(&backup).unwrap()).unwrap();
    witness.record(Some(&cache), &conn, true);
    assert!(!stamp_path(&cache, &file).exists(), "the copy is not the state before the open");
    // after the command's own checkpoint
    conn.execute_batch("create table t (a integer); checkpoint").unwrap();
    super::super::checkpoint::note_written_for_tests(&file);
    std::fs::write(&file, std::fs::read(&backup).unwrap()).unwrap();
    witness.record(Some(&cache), &conn, true);
    assert!(!stamp_path(&cache, &file).exists(), "the copy is not the state the checkpoint left");
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file this process has open already (a connection holding it, as `diff --against`
/// the same file does through a link) gets no witness: DuckDB's new descriptor could not
/// be told from the one open before, so a link retargeted between the witness and the
/// open would pass for the file DuckDB holds. Such an open checks in full.
#[test]
fn file_open_in_this_process_already_gets_no_witness() {
    let dir = scratch("held");
    let file = database(&dir, "f.duckdb");
    let held = Connection::open(&file).unwrap();
    assert!(Witness::before_open(&file).is_none(), "another descriptor of the process is on the file");
    assert!(Witness::after_open(&file).is_some(), "exactly one other descriptor: the new file's");
    let second = Connection::open(&file).unwrap();
    assert!(Witness::after_open(&file).is_none(), "two connections on it");
    drop((held, second));
    assert!(Witness::before_open(&file).is_some(), "closed: a witness again");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stamp is read only from a regular file of 64 bytes, without waiting and without
/// following a link: a FIFO put in its place (which a plain read would block on, holding
/// DuckDB's lock), a device, a folder or a link is no stamp, and the open checks in full.
#[test]
fn stamp_that_is_not_a_regular_file_is_never_waited_for() {
    let dir = scratch("fifo");
    let database = File::open(database(&dir, "f.duckdb")).unwrap();
    let fifo = dir.join("fifo");
    let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path that lives through the call.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    assert_eq!(read_stamp(&fifo, &database), None);
    assert_eq!(read_stamp(Path::new("/dev/zero"), &database), None);
    assert_eq!(read_stamp(&dir, &database), None);
    std::fs::write(dir.join("short"), "abc").unwrap();
    assert_eq!(read_stamp(&dir.join("short"), &database), None);
    std::fs::write(dir.join("good"), "a".repeat(64)).unwrap();
    assert_eq!(read_stamp(&dir.join("good"), &database), Some("a".repeat(64)));
    std::os::unix::fs::symlink(dir.join("good"), dir.join("link")).unwrap();
    assert_eq!(read_stamp(&dir.join("link"), &database), None, "a symbolic link is not followed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stamp that is a link to the database file itself (symbolic or hard) must not make
/// the open drop DuckDB's lock: the symbolic link is not followed, and the hard link's
/// descriptor, on the database's inode, is never closed (closing any descriptor of a file
/// releases the process's locks on it). The lock is probed from a child process, as
/// another writer would.
#[test]
fn stamp_linked_to_the_database_keeps_duckdbs_lock() {
    let dir = scratch("linked");
    let cache = dir.join("cache");
    let file = database(&dir, "f.duckdb");
    let witness = Witness::before_open(&file).unwrap();
    let conn = Connection::open(&file).unwrap();
    let stamp = stamp_path(&cache, &file);
    std::fs::create_dir_all(stamp.parent().unwrap()).unwrap();
    // whether another process can take a write lock on the file now (DuckDB's is gone):
    // a forked child tries, with async-signal-safe calls only, and exits 0 when it can
    let path = std::ffi::CString::new(file.as_os_str().as_encoded_bytes()).unwrap();
    let lock_is_free = || {
        // SAFETY: the child only calls open, fcntl and _exit on values made before the fork.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0, "fork");
            if pid == 0 {
                let fd = libc::open(path.as_ptr(), libc::O_RDWR);
                let mut lock: libc::flock = std::mem::zeroed();
                lock.l_type = libc::F_WRLCK as _;
                lock.l_whence = libc::SEEK_SET as _;
                let taken = fd >= 0 && libc::fcntl(fd, libc::F_SETLK, &lock) == 0;
                libc::_exit(if taken { 0 } else { 1 });
            }
            let mut status = 0;
            assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
            assert!(libc::WIFEXITED(status));
            libc::WEXITSTATUS(status) == 0
        }
    };
    assert!(!lock_is_free(), "DuckDB holds its lock");
    std::os::unix::fs::symlink(&file, &stamp).unwrap();
    assert!(!witness.is_current(Some(&cache), &conn));
    assert!(!lock_is_free(), "a symbolic link at the stamp dropped DuckDB's lock");
    std::fs::remove_file(&stamp).unwrap();
    std::fs::hard_link(&file, &stamp).unwrap();
    assert!(!witness.is_current(Some(&cache), &conn));
    assert!(!lock_is_free(), "a hard link at the stamp dropped DuckDB's lock");
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Past KEEP_STAMPS stamps, the oldest half goes.
#[test]
fn stamps_are_pruned_to_the_newest() {
    let dir = scratch("prune");
    let folder = dir.join("verified");
    std::fs::create_dir_all(&folder).unwrap();
    // each stamp's time set apart (file times are coarser than the writes)
    let stamp = |name: &str, seconds: u64| {
        std::fs::write(folder.join(name), "x").unwrap();
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + seconds);
        File::options().write(true).open(folder.join(name)).unwrap().set_modified(time).unwrap();
    };
    for i in 0..KEEP_STAMPS {
        stamp(&format!("s{i:03}"), i as u64);
    }
    prune(&folder);
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), KEEP_STAMPS, "at the limit nothing goes");
    stamp("newest", 10_000);
    prune(&folder);
    // 257 stamps: the oldest 128 (257 / 2) removed
    let left: Vec<String> =
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(left.len(), 129, "{} stamps left", left.len());
    assert!(left.iter().any(|n| n == "newest"));
    assert!(!left.iter().any(|n| n == "s127") && left.iter().any(|n| n == "s128"), "the oldest half went");
    std::fs::remove_dir_all(&dir).unwrap();
}
