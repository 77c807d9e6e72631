//! The release lock: `sql/released.sha256` names every view, macro and migration file of
//! a released version with the SHA-256 of its bytes (`sha256sum` format: `<hex>  <path>`).
//!
//! From version 0.2.0 on a released file is never edited: a change of meaning is a new
//! `_v<N+1>` view or macro, or a new migration (SPEC §1 principle 2). The lock is cut by
//! `sha256sum sql/*/*.sql migrations/*.sql > sql/released.sha256` when a version is
//! released; a test checks every listed file against it, so an edit fails the build's
//! tests before it can reach a database.

use std::path::Path;

/// The first released version: from it on, the lock file must exist.
pub const FIRST_RELEASE: (u64, u64, u64) = (0, 2, 0);

/// Parses `major.minor.patch` (a pre-release or build suffix is ignored).
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// Checks the lock text `lock` against the files under `root`. Returns one line per
/// problem: a malformed line, a listed file that is gone, or one whose bytes changed
/// (empty: every listed file is as released).
pub fn check_lock(root: &Path, lock: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, line) in lock.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let Some((hex, path)) = line.split_once("  ") else {
            problems.push(format!("sql/released.sha256:{}: not `<sha256>  <path>`", i + 1));
            continue;
        };
        match std::fs::read(root.join(path)) {
            Err(e) => {
                problems.push(format!("{path}: released, but cannot be read ({e}); a released file is never removed"))
            }
            Ok(bytes) => {
                let now = crate::hash::sha256_hex(&bytes);
                if now != hex {
                    problems.push(format!(
                        "{path}: released with sha256 {hex}, now {now}; a change of meaning is a new _v<N+1> file"
                    ));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_sql_is_locked() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let version = parse_version(env!("CARGO_PKG_VERSION")).unwrap();
        let lock = std::fs::read_to_string(root.join("sql/released.sha256"));
        if version < FIRST_RELEASE {
            assert!(lock.is_err(), "sql/released.sha256 exists before the first release {FIRST_RELEASE:?}");
            return;
        }
        let lock = lock.expect("from 0.2.0 on, sql/released.sha256 locks the released SQL");
        assert!(lock.lines().count() > 10, "the lock lists every released view, macro and migration");
        let problems = check_lock(root, &lock);
        assert!(problems.is_empty(), "released SQL changed:\n{}", problems.join("\n"));
    }

    #[test]
    fn lock_check_names_edited_and_missing_files() {
        let dir = std::env::temp_dir().join(format!("sphragis-lock-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sql")).unwrap();
        std::fs::write(dir.join("sql/a_v1.sql"), "select 1\n").unwrap();
        std::fs::write(dir.join("sql/b_v1.sql"), "select 2\n").unwrap();
        let lock = format!(
            "{}  sql/a_v1.sql\n{}  sql/b_v1.sql\n{}  sql/gone_v1.sql\nnonsense\n",
            crate::hash::sha256_hex(b"select 1\n"),
            crate::hash::sha256_hex(b"select 2 -- before an edit\n"),
            crate::hash::sha256_hex(b"x"),
        );
        let problems = check_lock(&dir, &lock);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("sql/b_v1.sql: released with sha256"), "{problems:?}");
        assert!(problems[1].starts_with("sql/gone_v1.sql: released, but cannot be read"), "{problems:?}");
        assert_eq!(problems[2], "sql/released.sha256:4: not `<sha256>  <path>`");
        assert_eq!(parse_version("0.2.0"), Some((0, 2, 0)));
        assert_eq!(parse_version("1.10.3-rc.1"), Some((1, 10, 3)));
        assert!(parse_version("0.1.0") < Some(FIRST_RELEASE));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
