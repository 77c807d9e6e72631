//! Files whose catalogue sphragis checked, left as they were since (issue 29).
//!
//! Every open checks the file's views and macros against this binary's
//! ([`super::views::check_current`], [`super::views::register`]): a scan of
//! `duckdb_functions()` (some 3,300 rows, DuckDB's own functions included) and of
//! `duckdb_views()` with each view's SQL rendered, about 70 ms of the 150 ms a
//! `sphragis sql "select 1"` took (perf, 2-core AMD EPYC): the largest fixed cost of every
//! command. After a command has checked the catalogue (or created it), and while it still
//! holds DuckDB's lock on the file (no other process can write it then), it records the
//! file's **fingerprint** in the cache folder ([`super::template::cache_dir`], subfolder
//! `verified/`, one small file per database path). The next open that finds the same
//! fingerprint skips the two scans; any other fingerprint, or none, means the full check.
//!
//! The fingerprint ([`fingerprint`]) is the SHA-256 of this binary's schema key
//! ([`super::template::key`]: its version, DuckDB library, migrations and SQL files), the
//! file's device, inode, size, modification and change times (nanoseconds), and its first
//! 12,288 bytes: DuckDB's main header and its two database headers, one of which every
//! checkpoint rewrites with a higher iteration count. A client that changes a view or
//! macro writes the file at its checkpoint (new header, new times) or leaves a
//! write-ahead log; a file with a write-ahead log or a checkpoint journal beside it has no
//! fingerprint. So a changed catalogue never matches the fingerprint recorded before the
//! change, and a different sphragis never matches this one's. With the cache off
//! (`SPHRAGIS_CACHE_DIR=off`) nothing is recorded and every open checks in full.
//!
//! Recording is best effort (a read-only home, a full disk: the next open checks in full);
//! it changes how fast a file opens, never what an open accepts.

use super::checkpoint::{HEADERS, journal_of};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Stamps kept in the folder: past this many, the oldest half is removed when a new one
/// is written (each is one small file; tests and `verify` make many scratch databases).
const KEEP_STAMPS: usize = 256;

/// The fingerprint of the database file `file` (a resolved path) as it is now: hex
/// SHA-256, 64 characters. `None` when the file cannot be read to its headers, or a
/// write-ahead log (not empty) or a checkpoint journal lies beside it: what DuckDB reads
/// then is not the file alone.
pub fn fingerprint(file: &Path) -> Option<String> {
    use sha2::{Digest, Sha256};
    if std::fs::metadata(super::wal_path(file)).is_ok_and(|m| m.len() > 0)
        || journal_of(file).symlink_metadata().is_ok()
    {
        return None;
    }
    let handle = std::fs::File::open(file).ok()?;
    let meta = handle.metadata().ok()?;
    let mut headers = vec![0u8; HEADERS as usize];
    handle.read_exact_at(&mut headers, 0).ok()?;
    let mut h = Sha256::new();
    h.update(super::template::key().as_bytes());
    for n in [meta.dev(), meta.ino(), meta.size()] {
        h.update(n.to_le_bytes());
    }
    for n in [meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()] {
        h.update(n.to_le_bytes());
    }
    h.update(&headers);
    Some(crate::hash::hex(&h.finalize()))
}

/// The stamp of `file` in the cache folder `dir`: `verified/<SHA-256 of the path>`.
fn stamp_path(dir: &Path, file: &Path) -> PathBuf {
    let name = crate::hash::sha256_hex(file.as_os_str().as_encoded_bytes());
    dir.join("verified").join(name)
}

/// Whether `file` (a resolved path) has the fingerprint recorded in `dir` by an open
/// that checked its catalogue; false with no cache folder, no stamp or no fingerprint.
pub fn is_current(dir: Option<&Path>, file: &Path) -> bool {
    let Some(dir) = dir else { return false };
    let Ok(recorded) = std::fs::read_to_string(stamp_path(dir, file)) else { return false };
    fingerprint(file).is_some_and(|now| now == recorded)
}

/// Records the fingerprint of `file` (a resolved path) in `dir`. Call it only while
/// holding DuckDB's lock on the file, after its catalogue was checked or created in this
/// process and nothing outside sphragis could have changed it. Best effort: a stamp that
/// cannot be written is left out; a file without a fingerprint removes its old stamp.
pub fn record(dir: Option<&Path>, file: &Path) {
    let Some(dir) = dir else { return };
    let stamp = stamp_path(dir, file);
    let Some(print) = fingerprint(file) else {
        let _ = std::fs::remove_file(&stamp);
        return;
    };
    let Some(folder) = stamp.parent() else { return };
    if std::fs::create_dir_all(folder).is_err() {
        return;
    }
    let new = !stamp.exists();
    let partial = folder.join(format!(".partial-{}", std::process::id()));
    if std::fs::write(&partial, print).is_err() || std::fs::rename(&partial, &stamp).is_err() {
        let _ = std::fs::remove_file(&partial);
        return;
    }
    if new {
        prune(folder);
    }
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
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sphragis-verified-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The fingerprint changes with the headers, the times and a log beside the file.
    #[test]
    fn fingerprint_follows_the_headers_the_times_and_a_log() {
        let dir = scratch("print");
        let file = dir.join("f.duckdb");
        std::fs::write(&file, vec![7u8; 20_000]).unwrap();
        let first = fingerprint(&file).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(fingerprint(&file).as_deref(), Some(first.as_str()), "same file, same fingerprint");
        // a byte of the second database header changed in place, times put back
        let before = std::fs::metadata(&file).unwrap().modified().unwrap();
        let handle = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        handle.write_all_at(&[8], 9000).unwrap();
        handle.set_modified(before).unwrap();
        drop(handle);
        assert_ne!(fingerprint(&file).unwrap(), first, "a header byte changed");
        // a write-ahead log or a journal beside it: no fingerprint; an empty log is none
        std::fs::write(super::super::wal_path(&file), b"").unwrap();
        assert!(fingerprint(&file).is_some(), "an empty log holds nothing");
        std::fs::write(super::super::wal_path(&file), b"x").unwrap();
        assert_eq!(fingerprint(&file), None);
        std::fs::remove_file(super::super::wal_path(&file)).unwrap();
        std::fs::write(journal_of(&file), b"x").unwrap();
        assert_eq!(fingerprint(&file), None);
        std::fs::remove_file(journal_of(&file)).unwrap();
        // shorter than the headers: none
        std::fs::write(&file, b"short").unwrap();
        assert_eq!(fingerprint(&file), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A stamp matches its file until the file changes; no cache folder, no stamp.
    #[test]
    fn stamp_matches_until_the_file_changes() {
        let dir = scratch("stamp");
        let (cache, file) = (dir.join("cache"), dir.join("f.duckdb"));
        std::fs::write(&file, vec![1u8; 13_000]).unwrap();
        assert!(!is_current(Some(&cache), &file), "nothing recorded yet");
        record(None, &file);
        assert!(!cache.exists(), "no cache folder: nothing written");
        record(Some(&cache), &file);
        assert!(is_current(Some(&cache), &file));
        assert!(!is_current(None, &file), "no cache folder: never current");
        assert!(!is_current(Some(&cache), &dir.join("other.duckdb")), "another path has its own stamp");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all_at(b"z", 13_000).unwrap();
        assert!(!is_current(Some(&cache), &file), "the file grew after the stamp");
        // recording a file that has a log removes the stamp
        record(Some(&cache), &file);
        assert!(is_current(Some(&cache), &file));
        std::fs::write(super::super::wal_path(&file), b"log").unwrap();
        record(Some(&cache), &file);
        assert!(!stamp_path(&cache, &file).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Past KEEP_STAMPS stamps, the oldest half goes.
    #[test]
    fn stamps_are_pruned_to_the_newest() {
        let dir = scratch("prune");
        let cache = dir.join("cache");
        for i in 0..=KEEP_STAMPS {
            let file = dir.join(format!("f{i}.duckdb"));
            std::fs::write(&file, vec![0u8; 12_288]).unwrap();
            record(Some(&cache), &file);
        }
        let left = std::fs::read_dir(cache.join("verified")).unwrap().count();
        // 257 stamps written: the 257th removed the oldest 128 (257 / 2)
        assert_eq!((KEEP_STAMPS, left), (256, 129), "{left} stamps left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
