//! Report files: one file per stamped table and a `manifest.json` that names the database,
//! its inputs, the code version and each file's stamp.

use super::render::{Format, render};
use crate::table::ReportTable;
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use serde_json::json;
use std::path::{Path, PathBuf};

/// What a reader of exported files needs to re-derive them (`manifest.json`): the
/// database file and its inputs, the code, and the command's filter and arguments.
#[derive(Debug, Clone, Default)]
pub struct ExportContext {
    /// The database file the rows came from (absolute path when known).
    pub database: String,
    /// Its input files as `ingest_log` records them: file_id, kind, path, bytes, sha256, rows.
    pub inputs: Vec<serde_json::Value>,
    /// The command's options that shaped the rows, e.g. `{"version": "v3"}`.
    pub options: serde_json::Value,
}

impl ExportContext {
    /// The context of `conn`'s database at `database`: its ingest log, in file_id order.
    pub fn of(conn: &Connection, database: &Path, options: serde_json::Value) -> Result<Self> {
        let mut stmt = conn.prepare(
            "select file_id, kind, path, bytes, sha256, rows, loader_version from ingest_log order by file_id",
        )?;
        let inputs = stmt
            .query_map([], |r| {
                Ok(json!({
                    "file_id": r.get::<_, i32>(0)?,
                    "kind": r.get::<_, String>(1)?,
                    "path": r.get::<_, String>(2)?,
                    "bytes": r.get::<_, i64>(3)?,
                    "sha256": r.get::<_, String>(4)?,
                    "rows": r.get::<_, i64>(5)?,
                    "loader_version": r.get::<_, String>(6)?,
                }))
            })?
            .collect::<duckdb::Result<Vec<_>>>()?;
        let database = std::fs::canonicalize(database).unwrap_or_else(|_| database.to_path_buf());
        Ok(Self { database: database.display().to_string(), inputs, options })
    }
}

/// Writes `bytes` to `file`, refusing a symbolic link there: a link placed in an output
/// folder (to the database file, say) would have the report written over its target.
fn write_regular(file: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!("{}: is a symbolic link; report files are not written through links (remove it)", file.display());
    }
    std::fs::write(file, bytes).with_context(|| format!("{}: cannot write", file.display()))
}

/// Writes `<dir>/<name>.<ext>` for each table (the file name names the view or macro and
/// its version) and `<dir>/manifest.json`: the database and its inputs (path, SHA-256,
/// rows), the code version, the command's options, and per file its report, stamp
/// (kind, name, SHA-256, arguments, filter, query) and row count. When one macro made
/// several of the tables (`diff --reports`: `report_diff_at_v1` once per compared report),
/// each of its files is `<name>-<report>.<ext>` (`report_diff_at_v1-diff-removals.csv`).
/// A table with no rows is still written (header only) and the manifest says why it is
/// empty. Every name is settled before the first file is written. Returns the paths
/// written.
///
/// Errors: a table without a stamp (an ad-hoc query), two tables of the same report and
/// view (nothing is written then), the directory or a file cannot be written.
pub fn write_files(
    dir: &Path,
    tables: &[ReportTable],
    format: Format,
    context: &ExportContext,
) -> Result<Vec<PathBuf>> {
    let mut stamped = Vec::new();
    for table in tables {
        let Some(st) = &table.stamp else {
            bail!("only report views and macros can be written as files");
        };
        stamped.push((table, st));
    }
    let shared = |name: &str| stamped.iter().filter(|(_, st)| st.name == name).count() > 1;
    let mut files: Vec<PathBuf> = Vec::new();
    for (table, st) in &stamped {
        let file = match shared(&st.name) {
            true => dir.join(format!("{}-{}.{}", st.name, table.report, format.extension())),
            false => dir.join(format!("{}.{}", st.name, format.extension())),
        };
        if files.contains(&file) {
            bail!("{}: two tables would be written to the same file", file.display());
        }
        files.push(file);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create directory", dir.display()))?;
    let mut written = Vec::new();
    let mut manifest = Vec::new();
    for ((table, st), file) in stamped.into_iter().zip(files) {
        write_regular(&file, render(table, format)?.as_bytes())?;
        let note = table.rows.is_empty().then(|| {
            format!(
                "no rows: {} {}{} returned none on this database (nothing of that kind is loaded, or nothing \
                 matched, e.g. no view fails the contract); the file holds the header only",
                st.kind.as_str(),
                st.name,
                st.filter.as_ref().map(|f| format!(" where {f}")).unwrap_or_default()
            )
        });
        manifest.push(json!({
            "file": file.file_name().map(|f| f.to_string_lossy().into_owned()),
            "report": table.report,
            "kind": st.kind.as_str(),
            "name": st.name,
            "sha256": st.sha256,
            "arguments": st.arguments,
            "filter": st.filter,
            "query": st.query,
            "rows": table.rows.len(),
            "note": note,
        }));
        written.push(file);
    }
    // Files already in the folder that this export did not write are named, so the
    // manifest never silently describes only part of the folder.
    let mut others: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !written.contains(p) && p.file_name().is_some_and(|n| n != "manifest.json"))
        .map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
        .collect();
    others.sort();
    let path = dir.join("manifest.json");
    let doc = json!({
        "not_from_this_export": others,
        "database": context.database,
        "code_version": crate::CODE_VERSION,
        "options": context.options,
        "inputs": context.inputs,
        "files": manifest,
    });
    write_regular(&path, (serde_json::to_string_pretty(&doc)? + "\n").as_bytes())?;
    written.push(path);
    Ok(written)
}
