//! Pool configuration (issue 5): pool names and roles are data, loaded from a JSON file
//! recorded in the ingest log like any input (kind `pools`).
//!
//! ```json
//! {"pools": {"A": {"role": "repair"}, "C1": {"role": "repair", "label_subset": true},
//!            "B": {"role": "recovery"}, "C3": {"role": "report"}}}
//! ```
//!
//! `role`: `repair` (dedup's union collapses these per instance), `recovery` (kept apart),
//! `report` (report-only, never a training view). `label_subset`: a behaviour-labelled
//! subset of another pool. Loading a file replaces the roles of the pools it names.

use crate::ingest::json::parse_json;
use crate::ingest::{self, InputError, InputKind, LoadOutcome};
use anyhow::Result;
use duckdb::{Connection, OptionalExt, params};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    pools: BTreeMap<String, RawPool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPool {
    role: String,
    #[serde(default)]
    label_subset: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    splits: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    protected_families: Vec<String>,
}

/// Loads a split manifest (kind `manifest`): `{"splits": {"train": [instance ids], "dev":
/// [...]}, "protected_families": ["astropy__astropy", ...]}` (both parts optional).
/// Loading one replaces the whole manifest and protected list.
///
/// Errors ([`InputError`] naming the field): malformed JSON, a key twice in one object, an
/// unknown field, an instance in two splits, an empty name or protected family.
pub fn load_manifest(conn: &Connection, path: &Path) -> Result<LoadOutcome> {
    ingest::load_file(conn, path, InputKind::Manifest, None, |conn, file_id, input| {
        let text = input.read_text()?;
        let parsed: RawManifest = parse_json(path, 1, &text)?;
        crate::sft::outcomes::refuse_duplicate_keys(path, &text)?;
        conn.execute("delete from sft_split_manifest", [])?;
        conn.execute("delete from sft_protected_families", [])?;
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        let mut rows = 0i64;
        for (split, ids) in &parsed.splits {
            for (i, id) in ids.iter().enumerate() {
                let field = format!("splits.{split}[{i}]");
                if id.trim().is_empty() || split.trim().is_empty() {
                    return Err(InputError::at(path, None, Some(&field), "must not be empty").into());
                }
                if let Some(other) = seen.insert(id, split) {
                    return Err(InputError::at(
                        path,
                        None,
                        Some(&field),
                        format!("instance {id} is also in split {other}"),
                    )
                    .into());
                }
                conn.execute("insert into sft_split_manifest values (?, ?, ?)", params![id, split, file_id])?;
                rows += 1;
            }
        }
        if let Some(i) = parsed.protected_families.iter().position(|f| f.trim().is_empty()) {
            return Err(
                InputError::at(path, None, Some(&format!("protected_families[{i}]")), "must not be empty").into()
            );
        }
        let mut families: Vec<&String> = parsed.protected_families.iter().collect();
        families.sort();
        families.dedup();
        for family in families {
            conn.execute("insert into sft_protected_families values (?, ?)", params![family, file_id])?;
            rows += 1;
        }
        Ok(rows)
    })
}

/// Loads a pools file in one transaction.
///
/// Errors ([`InputError`] naming the field): malformed JSON, a key twice in one object
/// (`"A": {...}, "A": {...}`: serde keeps the last), an unknown field, a role other than
/// repair / recovery / report, an empty pool name, no pool.
pub fn load(conn: &Connection, path: &Path) -> Result<LoadOutcome> {
    ingest::load_file(conn, path, InputKind::Pools, None, |conn, file_id, input| {
        let text = input.read_text()?;
        let parsed: RawFile = parse_json(path, 1, &text)?;
        crate::sft::outcomes::refuse_duplicate_keys(path, &text)?;
        if parsed.pools.is_empty() {
            return Err(InputError::at(path, None, Some("pools"), "names no pool").into());
        }
        for (name, pool) in &parsed.pools {
            if name.trim().is_empty() {
                return Err(InputError::at(path, None, Some("pools"), "a pool name must not be empty").into());
            }
            if !["repair", "recovery", "report"].contains(&pool.role.as_str()) {
                return Err(InputError::at(
                    path,
                    None,
                    Some(&format!("pools.{name}.role")),
                    format!("{:?} is not repair, recovery or report", pool.role),
                )
                .into());
            }
            conn.execute("delete from sft_pool_roles where pool = ?", [name])?;
            conn.execute(
                "insert into sft_pool_roles values (?, ?, ?, ?)",
                params![name, pool.role, pool.label_subset, file_id],
            )?;
        }
        Ok(parsed.pools.len() as i64)
    })
}

/// Loads a samples database (kind `samples`): an SQLite file, table `samples(instance_id
/// TEXT, success INTEGER, finish_reason TEXT, fail_to_pass INTEGER, pass_to_pass
/// INTEGER)`.
///
/// The file is read once through the input layer (so its SHA-256 is of the bytes
/// queried) and those bytes are opened as an in-memory, read-only SQLite database
/// (SQLite's `sqlite3_deserialize`). A database in WAL mode is read from its main file
/// only; one whose `-wal` file beside it is not empty is refused (its last changes are
/// not in the bytes hashed).
///
/// Errors: not an SQLite file, uncheckpointed WAL changes, no `samples` table or a
/// missing column (named), an empty instance id, an instance already loaded; the database
/// is then unchanged.
pub fn load_samples(conn: &Connection, path: &Path) -> Result<LoadOutcome> {
    ingest::load_file(conn, path, InputKind::Samples, None, |conn, file_id, input| {
        let mut bytes = input.read_all()?;
        let sqlite = open_sqlite_bytes(path, &mut bytes)?;
        let mut stmt = sqlite
            .prepare("select instance_id, success, finish_reason, fail_to_pass, pass_to_pass from samples")
            .map_err(|e| InputError::at(path, None, Some("samples"), format!("not a samples database: {e}")))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                ))
            })
            .map_err(|e| InputError::at(path, None, Some("samples"), e.to_string()))?;
        let mut n = 0i64;
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (i, row) in rows.enumerate() {
            let field = |name: &str| format!("samples[{}].{name}", i + 1);
            let (id, success, finish, f2p, p2p) =
                row.map_err(|e| InputError::at(path, None, Some(&format!("samples[{}]", i + 1)), e.to_string()))?;
            if id.trim().is_empty() {
                return Err(InputError::at(path, None, Some(&field("instance_id")), "must not be empty").into());
            }
            if success != 0 && success != 1 {
                return Err(
                    InputError::at(path, None, Some(&field("success")), format!("{success} is not 0 or 1")).into()
                );
            }
            if let Some(first) = seen.insert(id.clone(), i + 1) {
                return Err(InputError::at(
                    path,
                    None,
                    Some(&field("instance_id")),
                    format!("{id} repeats row {first}"),
                )
                .into());
            }
            let earlier: Option<String> = conn
                .query_row(
                    "select l.path from sft_samples join ingest_log as l using (file_id) where instance_id = ?",
                    [&id],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(earlier) = earlier {
                return Err(InputError::at(
                    path,
                    None,
                    Some(&field("instance_id")),
                    format!("{id} is already loaded from {earlier}"),
                )
                .into());
            }
            conn.execute(
                "insert into sft_samples values (?, ?, ?, ?, ?, ?)",
                params![id, success == 1, finish, f2p, p2p, file_id],
            )?;
            n += 1;
        }
        Ok(n)
    })
}

/// SQLite's file header: the first 16 bytes of every database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Opens the bytes of an SQLite file as an in-memory, read-only database.
fn open_sqlite_bytes(path: &Path, bytes: &mut [u8]) -> Result<rusqlite::Connection> {
    if bytes.len() < 100 || &bytes[..16] != SQLITE_MAGIC {
        return Err(
            InputError::at(path, None, None, "not an SQLite database file (no \"SQLite format 3\" header)").into()
        );
    }
    // Bytes 18 and 19 are the write and read format versions: 2 = WAL. The in-memory
    // copy is read in rollback mode (1); the hashed bytes are untouched.
    if bytes[18] == 2 || bytes[19] == 2 {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
            return Err(InputError::at(
                path,
                None,
                None,
                format!(
                    "{} holds changes not yet in the database file; checkpoint it first \
                     (sqlite3 FILE 'pragma wal_checkpoint(truncate)')",
                    std::path::Path::new(&wal).display()
                ),
            )
            .into());
        }
        bytes[18] = 1;
        bytes[19] = 1;
    }
    let mut sqlite = rusqlite::Connection::open_in_memory()?;
    sqlite
        .deserialize_read_exact(rusqlite::MAIN_DB, &*bytes, bytes.len(), true)
        .map_err(|e| InputError::at(path, None, None, format!("cannot open as SQLite: {e}")))?;
    Ok(sqlite)
}
