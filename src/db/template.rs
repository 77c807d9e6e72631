//! New database files copied from a template (issue 29).
//!
//! Making a sphragis file applies every migration and creates some 150 views and macros,
//! which DuckDB parses one by one: about 0.3 s, the same for every new file and paid by
//! every first `init` or `load`. As PostgreSQL's `CREATE DATABASE` copies `template1`,
//! [`copy_into`] makes a new file a copy of a template: a file made once per schema (by
//! this very code path, before anything was loaded into it) and kept in the template
//! cache ([`cache_dir`]) under a name that is the SHA-256 of everything that decides its
//! content ([`key`]): the sphragis version and commit, `Cargo.lock` (so the DuckDB
//! library and its storage format), every migration and every view and macro file.
//!
//! The copy is then opened like any existing file ([`super::open`]): its migrations and
//! views are checked against this binary's (three catalogue queries), so a damaged or
//! edited template cannot pass for a new file; should that open fail, the copy and the
//! template are removed, a note says so on stderr, and the file is made from scratch.
//! A file made from the template is the file `init` would make, with one difference that
//! is written down rather than hidden: `sph_migrations.applied_at` and
//! `sph_views.registered_at` are the times the template was made.
//!
//! The cache is `$SPHRAGIS_CACHE_DIR` when set (`off` turns templates off), else
//! `$XDG_CACHE_HOME/sphragis`, else `$HOME/.cache/sphragis`. Anything that stops a
//! template from being made or copied (a read-only home, a folder without hard links)
//! leaves the file to be made from scratch, as before: a template changes how fast a file
//! is made, never what is in it.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Templates of other schemas not used for this long are removed when a new one is made.
const KEEP_UNUSED: Duration = Duration::from_secs(7 * 24 * 3600);

/// The template cache folder: `$SPHRAGIS_CACHE_DIR` (`off` or empty: no templates), else
/// `$XDG_CACHE_HOME/sphragis`, else `$HOME/.cache/sphragis`; `None` when none is set.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SPHRAGIS_CACHE_DIR") {
        return (!dir.is_empty() && dir != "off").then(|| PathBuf::from(dir));
    }
    let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()).map(PathBuf::from);
    let home = || std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".cache"));
    xdg.or_else(home).map(|d| d.join("sphragis"))
}

/// The template's key: the SHA-256 (hex, 64 characters) of [`crate::CODE_VERSION`],
/// `Cargo.lock` (which pins the DuckDB library, so its storage format) and each
/// migration's and each view or macro file's name and SQL, in registration order. Hashed
/// once per process (half a megabyte; every fingerprint of [`super::verified`] uses it).
pub fn key() -> String {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(schema_key).clone()
}

/// [`key`], hashed.
fn schema_key() -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut part = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part(crate::CODE_VERSION.as_bytes());
    part(include_bytes!("../../Cargo.lock"));
    for m in super::migrations::MIGRATIONS {
        part(m.file.as_bytes());
        part(m.sql.as_bytes());
    }
    for v in super::views::VIEWS {
        part(v.source.as_bytes());
        part(v.sql.as_bytes());
    }
    crate::hash::hex(&h.finalize())
}

/// The template of this binary's schema in `dir`.
pub fn template_path(dir: &Path) -> PathBuf {
    dir.join(format!("template-{}.duckdb", key()))
}

/// Makes the new database file `file` (which must not exist, nor its write-ahead log) a
/// copy of the template in `dir`, making the template first when there is none. Returns
/// whether `file` was made; `false` leaves nothing behind, for the caller to make the
/// file from scratch. The copy is written beside `file` and linked into place, so `file`
/// is never seen half-copied and a file another process made meanwhile is never replaced.
pub fn copy_into(file: &Path, dir: &Path) -> bool {
    if file.symlink_metadata().is_ok() || super::wal_path(file).symlink_metadata().is_ok() {
        return false;
    }
    let template = template_path(dir);
    if !template.is_file() && make(dir, &template).is_err() {
        return false;
    }
    let Some(name) = file.file_name() else { return false };
    let staging = file.with_file_name(format!(".{}.template-{}", name.to_string_lossy(), std::process::id()));
    let made = std::fs::copy(&template, &staging).is_ok() && std::fs::hard_link(&staging, file).is_ok();
    let _ = std::fs::remove_file(&staging);
    if made {
        // the template was used: keep it from being pruned as unused
        let _ = std::fs::File::options().append(true).open(&template).and_then(|f| f.set_modified(SystemTime::now()));
    }
    made
}

/// Removes `file`, a copy of the template that did not open as a current sphragis file,
/// and the template itself, saying why on stderr.
pub fn discard(file: &Path, dir: &Path, why: &anyhow::Error) {
    let template = template_path(dir);
    eprintln!(
        "note: the database template {} did not open as a current sphragis file ({why:#}); removed it, and made {} \
         from scratch",
        template.display(),
        file.display()
    );
    let _ = std::fs::remove_file(file);
    let _ = std::fs::remove_file(super::wal_path(file));
    let _ = std::fs::remove_file(&template);
}

/// Makes the template: a new file with every migration, view and macro and nothing else,
/// closed (DuckDB checkpoints it: no write-ahead log), then renamed into place. Removes
/// other schemas' templates unused for [`KEEP_UNUSED`].
fn make(dir: &Path, template: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let staging = dir.join(format!(".template-{}-{nanos}.duckdb", std::process::id()));
    let made = (|| -> Result<()> {
        let conn = duckdb::Connection::open(&staging)?;
        super::prepare(&conn)?;
        conn.close().map_err(|(_, e)| e)?;
        anyhow::ensure!(!super::wal_path(&staging).exists(), "the template kept a write-ahead log");
        std::fs::rename(&staging, template)?;
        Ok(())
    })();
    if made.is_err() {
        let _ = std::fs::remove_file(&staging);
        let _ = std::fs::remove_file(super::wal_path(&staging));
    }
    made?;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let unused = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > KEEP_UNUSED);
            if name.starts_with("template-") && name.ends_with(".duckdb") && path != template && unused {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sphragis-template-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Every table, view and macro of the file, with its definition, and the migrations
    /// and view records (times left out): what a file made from the template must share
    /// with one made from scratch.
    fn schema(path: &Path) -> Vec<String> {
        let conn = duckdb::Connection::open(path).unwrap();
        let mut out = Vec::new();
        for sql in [
            "select 'table ' || table_name || ' ' || sql from duckdb_tables() order by 1",
            "select 'view ' || view_name || ' ' || sql from duckdb_views() where not internal order by 1",
            "select 'macro ' || function_name || ' ' || coalesce(macro_definition, '') from duckdb_functions() \
             where database_name = current_database() and function_type in ('macro', 'table_macro') order by 1",
            "select 'migration ' || version || ' ' || description || ' ' || sha256 from sph_migrations order by version",
            "select 'record ' || name || ' ' || sha256 || ' ' || stored_sha256 || ' ' || code_version from sph_views \
             order by name",
        ] {
            let mut stmt = conn.prepare(sql).unwrap();
            out.extend(stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(Result::unwrap));
        }
        out
    }

    #[test]
    fn a_file_made_from_the_template_is_the_file_made_from_scratch() {
        let dir = scratch("same");
        let cache = dir.join("cache");
        let from_scratch = dir.join("scratch.duckdb");
        drop(duckdb::Connection::open(&from_scratch).map(|c| super::super::prepare(&c).map(|_| c)).unwrap().unwrap());
        let copied = dir.join("copied.duckdb");
        assert!(copy_into(&copied, &cache), "the template is made, then copied");
        assert!(template_path(&cache).is_file());
        let again = dir.join("again.duckdb");
        assert!(copy_into(&again, &cache), "the second file is a copy of the same template");
        let expected = schema(&from_scratch);
        assert!(expected.iter().filter(|l| l.starts_with("view ")).count() > 100, "{}", expected.len());
        assert_eq!(schema(&copied), expected);
        assert_eq!(schema(&again), expected);
        // an existing file is never replaced, nor a file whose write-ahead log is there
        assert!(!copy_into(&copied, &cache));
        let orphan = dir.join("orphan.duckdb");
        std::fs::write(super::super::wal_path(&orphan), b"").unwrap();
        assert!(!copy_into(&orphan, &cache));
        assert!(!orphan.exists());
        // no staging file is left beside the copies or in the cache
        let names = |d: &Path| -> Vec<String> {
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
        };
        assert!(names(&dir).iter().all(|n| !n.starts_with('.')), "{:?}", names(&dir));
        assert_eq!(names(&cache), [format!("template-{}.duckdb", key())]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A template that does not open as a current sphragis file (cut short; or recorded by
    /// another build: a view's SHA-256 differs) is refused by the open's own checks;
    /// `open_with_cache` then removes the copy and the template, says so, and makes the file
    /// from scratch.
    #[test]
    fn a_damaged_template_is_discarded_and_the_file_made_from_scratch() {
        let dir = scratch("damaged");
        let cache = dir.join("cache");
        let expected = {
            let reference = dir.join("reference.duckdb");
            assert!(copy_into(&reference, &cache));
            schema(&reference)
        };
        let template = template_path(&cache);
        type Damage = (&'static str, fn(&Path));
        let damages: [Damage; 2] = [
            ("cut short", |t| {
                let len = std::fs::metadata(t).unwrap().len();
                std::fs::File::options().write(true).open(t).unwrap().set_len(len / 3).unwrap();
            }),
            ("another build's record", |t| {
                let conn = duckdb::Connection::open(t).unwrap();
                conn.execute(
                    "update sph_views set sha256 = repeat('0', 64) where name = (select min(name) from sph_views)",
                    [],
                )
                .unwrap();
            }),
        ];
        for (i, (what, damage)) in damages.into_iter().enumerate() {
            if !template.exists() {
                assert!(copy_into(&dir.join(format!("remake{i}.duckdb")), &cache));
            }
            damage(&template);
            let file = dir.join(format!("new{i}.duckdb"));
            drop(super::super::open_with_cache(&file, Some(&cache)).unwrap_or_else(|e| panic!("{what}: {e:#}")));
            assert!(!template.exists(), "{what}: the damaged template is removed");
            assert_eq!(schema(&file), expected, "{what}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn cache_dir_follows_the_environment_names() {
        // read only: the process environment is shared by every test thread
        match std::env::var_os("SPHRAGIS_CACHE_DIR") {
            Some(d) if d.is_empty() || d == "off" => assert_eq!(cache_dir(), None),
            Some(d) => assert_eq!(cache_dir(), Some(PathBuf::from(d))),
            None => assert!(cache_dir().is_none_or(|d| d.ends_with("sphragis"))),
        }
        assert_eq!(key().len(), 64);
        assert_eq!(key(), key());
    }
}
