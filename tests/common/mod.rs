//! What several integration tests share: where the team's real data is, and a probe of
//! DuckDB's lock on a database file.

// each test binary that shares this module uses part of it
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The team's shared folder: `$SPHRAGIS_SHARED` (CI sets it) or `../shared` beside the
/// repository. Tests that read it are `#[ignore]`d; CI runs them.
pub fn shared() -> PathBuf {
    std::env::var_os("SPHRAGIS_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// Whether another process could take the write lock DuckDB takes on the database file
/// `path` now (false while a connection of this process holds it): a forked child tries,
/// with async-signal-safe calls only, and exits 0 when it can.
pub fn write_lock_is_free(path: &Path) -> bool {
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
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
}
