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
        crate::db::sealed::check_companion(conn)?;
    }
    let options = org.map(|o| serde_json::json!({ "org": o }).to_string());
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
        // ids of this file, with their record: a repeat within the file names the first
        let mut seen: HashMap<String, i64> = HashMap::new();
        let mut writer = ExampleWriter::new(conn, file_id)?;
        let mut failed_at: Option<String> = None;
        let mut written = 0u64;
        let result = {
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
        writer.finish()
    })?;
    // Examples or windows arrived: move content that falls in a sealed window out of the main file.
    if kind != InputKind::Labels {
        crate::db::sealed::seal(conn)
            .with_context(|| format!("{}: loaded; sealing its sealed-window content", path.display()))?;
    }
    Ok(outcome)
}

/// The error for example `id` at `record` of `path`, which the database already holds:
/// it names the earlier file and record (a failing lookup, or one that finds nothing after
/// all, is an error of its own).
fn already_loaded(conn: &Connection, path: &Path, id: &str, record: i64) -> Result<anyhow::Error> {
    let mut stmt = conn.prepare(
        "select e.file_id, e.record, l.path from review_examples e join ingest_log l using (file_id) where e.example_id = ?",
    )?;
    let earlier =
        stmt.query_row([id], |r| Ok((r.get::<_, i32>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?))).optional()?;
    let (file_id, earlier, earlier_path) = earlier
        .ok_or_else(|| anyhow::anyhow!("{}: example {id:?} was loaded but is no longer found", path.display()))?;
    Ok(InputError::at(
        path,
        Some(record as u64),
        Some("example_id"),
        format!("{id:?} is already loaded (file_id {file_id}, {earlier_path} record {earlier})"),
    )
    .into())
}
