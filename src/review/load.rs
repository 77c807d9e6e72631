//! Loads one review input file in one transaction, bound in the ingest log.

use super::adapters::{gerrit_query, gerrit_rest, jsonl, review4repair, tufano};
use super::config;
use super::store::ExampleWriter;
use crate::ingest::{self, Corpus, InputError, InputKind, LoadOutcome};
use anyhow::{Context, Result};
use duckdb::{Connection, OptionalExt};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Loads `path` as `kind`. `org` overrides the org for `tufano2021` and `gerrit-query`,
/// and is required for `gerrit-rest`.
/// `progress` is called with the number of examples written so far, every 1,000
/// examples and once at the end.
///
/// Errors: `kind` is not a review kind, the file is missing or unreadable, or the
/// adapter rejects it (an [`InputError`] naming file, line and field); the database is
/// then unchanged.
pub fn load(
    conn: &Connection,
    kind: InputKind,
    path: &Path,
    org: Option<&str>,
    progress: &mut dyn FnMut(u64),
) -> Result<LoadOutcome> {
    if kind.corpus() != Corpus::Review {
        anyhow::bail!("{kind} is not a review input kind");
    }
    if org.is_some_and(|o| o.trim().is_empty()) {
        anyhow::bail!("--org must not be empty");
    }
    if kind != InputKind::Labels {
        super::sealed::check_companion(conn)?;
    }
    let options = org.map(|o| serde_json::json!({ "org": o }).to_string());
    let mut seen: HashMap<String, i64> = HashMap::new();
    let outcome = ingest::load_file(conn, path, kind, options.as_deref(), |conn, file_id, reader| {
        if kind == InputKind::Orgs {
            let configs = config::parse(path, &mut *reader)?;
            return config::store(conn, file_id, &configs);
        }
        if kind == InputKind::Labels {
            return super::labels::read(conn, file_id, path, &mut *reader);
        }
        // example ids already loaded from earlier files: a repeat is named on its own line,
        // in file order with the file's other errors (the primary key would only fail when
        // the rows are written, after the whole file was read)
        let loaded: HashSet<String> = {
            let mut stmt = conn.prepare("select example_id from review_examples")?;
            stmt.query_map([], |r| r.get(0))?.collect::<duckdb::Result<_>>()?
        };
        let mut writer = ExampleWriter::new(conn, file_id)?;
        let mut failed_at: Option<String> = None;
        let mut written = 0u64;
        let result = {
            let seen = &mut seen;
            let mut sink = |example: super::model::Example| -> Result<()> {
                if let Some(first) = seen.insert(example.example_id.clone(), example.record) {
                    return Err(InputError::at(
                        path,
                        Some(example.record as u64),
                        Some("example_id"),
                        format!("{:?} repeats the example of record {first}", example.example_id),
                    )
                    .into());
                }
                if loaded.contains(&example.example_id) {
                    return Err(already_loaded(conn, path, &example.example_id, example.record)?);
                }
                if let Err(e) = writer.append(&example) {
                    failed_at = Some(example.example_id.clone());
                    return Err(e);
                }
                written += 1;
                if written.is_multiple_of(1000) {
                    progress(written);
                }
                Ok(())
            };
            match kind {
                InputKind::Examples => jsonl::read(path, &mut *reader, &mut sink),
                InputKind::Review4Repair => review4repair::read(path, org, &mut *reader, &mut sink),
                InputKind::Tufano2021 => {
                    tufano::read(path, org.unwrap_or(tufano::DEFAULT_ORG), &mut *reader, &mut sink)
                }
                InputKind::GerritQuery => gerrit_query::read(path, org, &mut *reader, &mut sink),
                InputKind::GerritRest => gerrit_rest::read(path, org, &mut *reader, &mut sink),
                _ => unreachable!("review kinds only, orgs and labels handled above"),
            }
        };
        progress(written);
        result.map_err(|e| match &failed_at {
            Some(id) => e.context(format!("{}: writing example {id}", path.display())),
            None => e,
        })?;
        writer.finish().map_err(|e| e.context(IdCollision))
    });
    let outcome = match outcome {
        Err(e) if e.downcast_ref::<IdCollision>().is_some() => Err(collision(conn, path, &seen)?.unwrap_or(e)),
        other => other,
    }?;
    // Examples or windows arrived: move content that falls in a sealed window out of the main file.
    if kind != InputKind::Labels {
        super::sealed::seal(conn)
            .with_context(|| format!("{}: loaded; sealing its sealed-window content", path.display()))?;
    }
    Ok(outcome)
}

/// Marks a flush failure that may be an example id already in the database.
#[derive(Debug)]
struct IdCollision;

impl std::fmt::Display for IdCollision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("writing the examples failed")
    }
}

impl std::error::Error for IdCollision {}

/// After a rolled-back load: the first example id of the file (by record) that the
/// database already holds, as an error naming both places (`None` when no id of the
/// file is loaded yet; a failing lookup is an error of its own, never "absent").
fn collision(conn: &Connection, path: &Path, seen: &HashMap<String, i64>) -> Result<Option<anyhow::Error>> {
    let mut ids: Vec<(&i64, &String)> = seen.iter().map(|(id, record)| (record, id)).collect();
    ids.sort();
    for (record, id) in ids {
        if let Some(e) = earlier_load(conn, path, id, *record)? {
            return Ok(Some(e));
        }
    }
    Ok(None)
}

/// The error for example `id` at `record` of `path` when the database already holds it,
/// naming the earlier file and record; `None` when it does not.
fn earlier_load(conn: &Connection, path: &Path, id: &str, record: i64) -> Result<Option<anyhow::Error>> {
    let mut stmt = conn.prepare_cached(
        "select e.file_id, e.record, l.path from review_examples e join ingest_log l using (file_id) where e.example_id = ?",
    )?;
    let earlier =
        stmt.query_row([id], |r| Ok((r.get::<_, i32>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?))).optional()?;
    Ok(earlier.map(|(file_id, earlier, earlier_path)| {
        InputError::at(
            path,
            Some(record as u64),
            Some("example_id"),
            format!("{id:?} is already loaded (file_id {file_id}, {earlier_path} record {earlier})"),
        )
        .into()
    }))
}

/// [`earlier_load`] for an id known to be loaded (a failing lookup, or one that finds
/// nothing after all, is an error of its own).
fn already_loaded(conn: &Connection, path: &Path, id: &str, record: i64) -> Result<anyhow::Error> {
    earlier_load(conn, path, id, record)?
        .ok_or_else(|| anyhow::anyhow!("{}: example {id:?} was loaded but is no longer found", path.display()))
}
