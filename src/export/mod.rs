//! Export to partitioned Parquet, and the rebuild of a database from such an export
//! (SPEC §5: beyond one machine).
//!
//! [`export`] writes every base table of the database (every table of the main schema
//! except the `sph_` bookkeeping tables, so tables added by later migrations export too)
//! with DuckDB's own streaming `COPY (select ...) TO ... (FORMAT parquet, COMPRESSION
//! zstd)`: no table is held in memory. A table with a `version`, `org` or `pool` column is
//! hive-partitioned on those columns (`version=v1/org=wikimedia/data_0.parquet`); the
//! others are one file each. Beside the data, `manifest.json` ([`Manifest`]) names the
//! database file, the code version, each table's columns, files, SHA-256s and rows, and
//! each view and table macro with its SHA-256, its DuckDB SQL and — from the generated
//! [`spark`] table — its Spark SQL, or why it does not run on Spark.
//!
//! Sealed window (SPEC §1.6): the main file never holds sealed content (it lives in the
//! companion database, which export never attaches). Without `include_sealed`, the rows of
//! sealed examples (every row whose `example_id` is listed in `sealed_content`, and
//! `sealed_content` itself) are left out, and the manifest says how many per table; with
//! it, they are exported as the main file holds them (ids, verdicts, no content) and the
//! export is logged in `sph_log`.
//!
//! [`import`] (`sphragis init --from DIR`) builds a new database from an export: it
//! checks every file against the manifest's SHA-256 and every view against this binary's
//! before it creates the file, loads all tables in one transaction, and removes the new
//! file again on any error.
//!
//! The statements here are mechanical (copy a table out, read it back); the audit's SQL
//! stays in `sql/`.

use crate::db::identifier as ident;
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `format` field of a manifest this code writes and reads.
pub const MANIFEST_FORMAT: &str = "sphragis-parquet-export/1";

/// The columns a table is hive-partitioned on, in this order, when it has them.
pub const PARTITION_COLUMNS: &[&str] = &["version", "org", "pool"];

/// Target row-group size of the Parquet files, in bytes (DuckDB's `ROW_GROUP_SIZE_BYTES`):
/// one HDFS/S3 block-sized split per row group for a cluster reader.
pub const ROW_GROUP_BYTES: &str = "128MB";

/// What to export and where.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The folder to write; created, and refused when it exists and is not empty.
    pub out: PathBuf,
    /// Only these tables (names as in the database); `None` = every base table.
    pub tables: Option<Vec<String>>,
    /// Export the rows of sealed-window examples too (without their content, which the
    /// main file does not hold); the caller logs this in `sph_log` ([`log_sealed_export`]).
    pub include_sealed: bool,
}

/// `manifest.json`: what an export holds and how every figure traces back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: String,
    /// The database file exported (absolute path as DuckDB reports it).
    pub database: String,
    /// `sphragis::CODE_VERSION` of the binary that wrote the export.
    pub code_version: String,
    /// UTC time of the export, RFC 3339.
    pub exported_at: String,
    /// What happened to the sealed window's rows.
    pub sealed: SealedNote,
    /// Every exported table, by name.
    pub tables: Vec<TableExport>,
    /// Every view and table macro of the binary that wrote the export, in creation order.
    pub views: Vec<ViewExport>,
}

/// The sealed window in an export.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SealedNote {
    /// Whether sealed-window rows were exported (`--include-sealed`).
    pub rows_included: bool,
    /// Examples listed in `sealed_content` at export time.
    pub sealed_examples: i64,
    /// Rows left out per table (empty when `rows_included`).
    pub rows_left_out: BTreeMap<String, i64>,
    /// Always false: content (hunk, target, comment messages) of sealed examples lives in
    /// the companion database, which export never reads.
    pub content_included: bool,
}

/// One exported table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableExport {
    /// Table name.
    pub name: String,
    /// Folder of its files, relative to the export folder (the table name).
    pub path: String,
    /// `(column, DuckDB type)` in table order, partition columns included.
    pub columns: Vec<ColumnType>,
    /// Hive partition columns (path segments `col=value`), empty when one file.
    pub partition_by: Vec<String>,
    /// Rows exported.
    pub rows: i64,
    /// Every file, sorted by path.
    pub files: Vec<FileExport>,
}

/// A column and its DuckDB type, e.g. `input_ids` / `INTEGER[]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ColumnType {
    pub name: String,
    pub r#type: String,
}

/// One Parquet file of a table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileExport {
    /// Path relative to the export folder, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the file.
    pub sha256: String,
    /// Rows in the file.
    pub rows: i64,
}

/// One view or table macro, in both dialects.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ViewExport {
    /// Versioned name, e.g. `refine_removals_v1`.
    pub name: String,
    /// `view` or `macro`.
    pub kind: String,
    /// The version number from the name.
    pub version: Option<i32>,
    /// Source file, e.g. `sql/review/refine_removals_v1.sql`.
    pub source: String,
    /// SHA-256 of the DuckDB SQL (CRLF → LF), as recorded in `sph_views`.
    pub sha256: String,
    /// The file's SQL as DuckDB runs it.
    pub duckdb_sql: String,
    /// The Spark SQL (a `select`), when the view runs on Spark; for a table macro, its
    /// body with named parameter markers (`:weights`) for `spark.sql(sql, args={...})`.
    pub spark_sql: Option<String>,
    /// Whether the Spark SQL is proven to give DuckDB's rows (by the parity check).
    pub spark_portable: bool,
    /// Why not, when it is not portable.
    pub spark_reason: Option<String>,
}

/// What [`import`] built.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    /// `(table, rows)` loaded.
    pub tables: Vec<(String, i64)>,
    /// Tables of the new database that the export did not hold (left as created).
    pub not_in_export: Vec<String>,
}

/// The base tables of the open database's main schema, sorted, without `sph_` tables.
pub fn base_tables(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "select table_name from duckdb_tables() where database_name = current_database() \
         and schema_name = 'main' and not starts_with(table_name, 'sph_') order by table_name",
    )?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    Ok(names)
}

fn columns(conn: &Connection, table: &str) -> Result<Vec<ColumnType>> {
    let mut stmt = conn.prepare(
        "select column_name, data_type from duckdb_columns() where database_name = current_database() \
         and schema_name = 'main' and table_name = ? order by column_index",
    )?;
    let cols = stmt
        .query_map([table], |r| Ok(ColumnType { name: r.get(0)?, r#type: r.get(1)? }))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(cols)
}

/// `'text'` with inner quotes doubled.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Records in `sph_log` that sealed-window rows were exported to `out` (SPEC §1.6: opening
/// the sealed window is logged). Needs a read-write connection.
pub fn log_sealed_export(conn: &Connection, out: &Path) -> Result<()> {
    conn.execute(
        "insert into sph_log (command, detail) values ('export', ?)",
        [format!("export --include-sealed: rows of sealed-window examples (no content) written to {}", out.display())],
    )?;
    Ok(())
}

/// Writes the tables of `conn`'s database to `opts.out` as Parquet with `manifest.json`,
/// and returns the manifest.
///
/// The folder is written as `<out>.partial` and renamed to `out` once its manifest is
/// written: an export that fails or is killed never leaves a folder named `out`. A
/// failed export removes its `<out>.partial` (a full disk gets its space back); one left
/// by a killed export is removed by the next export to `out`.
///
/// Errors: `opts.out` exists and is not an empty folder; a named table does not exist;
/// a COPY or a file write fails (a full disk: DuckDB's or the system's "No space left on
/// device").
pub fn export(conn: &Connection, opts: &ExportOptions) -> Result<Manifest> {
    let finished = &opts.out;
    if finished.exists() {
        let empty = finished.is_dir() && std::fs::read_dir(finished)?.next().is_none();
        if !empty {
            bail!("{}: already exists and is not an empty folder (export writes a new folder)", finished.display());
        }
    }
    let partial = PathBuf::from(format!("{}.partial", finished.display()));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("{}: cannot remove the folder a killed export left", partial.display()))?;
    }
    let written = write_partial(conn, opts, &partial);
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    written
}

/// [`export`] after its checks: writes `partial` and renames it to `opts.out`.
fn write_partial(conn: &Connection, opts: &ExportOptions, partial: &Path) -> Result<Manifest> {
    let finished = &opts.out;
    let out = partial;
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create the export folder", out.display()))?;
    let all = base_tables(conn)?;
    let tables = match &opts.tables {
        None => all.clone(),
        Some(names) => {
            for n in names {
                if !all.contains(n) {
                    bail!("--tables {n}: no such table to export (tables: {})", all.join(", "));
                }
            }
            all.iter().filter(|t| names.contains(t)).cloned().collect()
        }
    };
    let sealed_examples: i64 = if all.iter().any(|t| t == "sealed_content") {
        conn.query_row("select count(*) from sealed_content", [], |r| r.get(0))?
    } else {
        0
    };
    let mut sealed = SealedNote {
        rows_included: opts.include_sealed,
        sealed_examples,
        rows_left_out: BTreeMap::new(),
        content_included: false,
    };
    let mut exported = Vec::new();
    for table in &tables {
        let cols = columns(conn, table)?;
        // Sealed-window rows: every row of a sealed example, and the list of them.
        let filter = if opts.include_sealed || sealed_examples == 0 {
            String::new()
        } else if table == "sealed_content" {
            " where false".to_string()
        } else if cols.iter().any(|c| c.name == "example_id") {
            " where example_id is null or example_id not in (select example_id from sealed_content)".to_string()
        } else {
            String::new()
        };
        let source = format!("select * from {}{filter}", ident(table));
        let rows: i64 = conn.query_row(&format!("select count(*) from ({source})"), [], |r| r.get(0))?;
        if !filter.is_empty() {
            let total: i64 = conn.query_row(&format!("select count(*) from {}", ident(table)), [], |r| r.get(0))?;
            if total > rows {
                sealed.rows_left_out.insert(table.clone(), total - rows);
            }
        }
        let partition_by: Vec<String> = if rows == 0 {
            Vec::new() // a partitioned COPY of no rows writes no file; one empty file keeps the schema
        } else {
            PARTITION_COLUMNS.iter().filter(|p| cols.iter().any(|c| c.name == **p)).map(|p| p.to_string()).collect()
        };
        let dir = out.join(table);
        let target = if partition_by.is_empty() {
            std::fs::create_dir_all(&dir)?;
            dir.join("data_0.parquet")
        } else {
            dir.clone()
        };
        let partition = if partition_by.is_empty() {
            String::new()
        } else {
            format!(", PARTITION_BY ({})", partition_by.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", "))
        };
        conn.execute_batch(&format!(
            "COPY ({source}) TO {} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE_BYTES '{ROW_GROUP_BYTES}'{partition})",
            literal(&target.to_string_lossy())
        ))
        .with_context(|| format!("{table}: writing Parquet to {}", dir.display()))?;
        let files = describe_files(conn, out, &dir)?;
        let written: i64 = files.iter().map(|f| f.rows).sum();
        if written != rows {
            bail!("{table}: {written} rows in the Parquet files written, {rows} in the table");
        }
        exported.push(TableExport {
            name: table.clone(),
            path: table.clone(),
            columns: cols,
            partition_by,
            rows,
            files,
        });
    }
    let database: String = conn.query_row(
        "select coalesce(path, '') from duckdb_databases() where database_name = current_database()",
        [],
        |r| r.get(0),
    )?;
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_string(),
        database,
        code_version: crate::CODE_VERSION.to_string(),
        exported_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        sealed,
        tables: exported,
        views: crate::db::views::VIEWS.iter().map(view_export).collect(),
    };
    crate::db::crash_point("export:before-manifest");
    let path = out.join("manifest.json");
    std::fs::write(&path, serde_json::to_string_pretty(&manifest)? + "\n")
        .with_context(|| format!("{}: cannot write the manifest", path.display()))?;
    if finished.exists() {
        std::fs::remove_dir(finished)
            .with_context(|| format!("{}: cannot replace the empty folder", finished.display()))?;
    }
    std::fs::rename(out, finished)
        .with_context(|| format!("{}: cannot rename to {}", out.display(), finished.display()))?;
    Ok(manifest)
}

fn view_export(v: &crate::db::views::ViewFile) -> ViewExport {
    let sha256 = v.sha256();
    let spark = crate::db::spark::lookup(v.name(), &sha256, v.kind);
    ViewExport {
        name: v.name().to_string(),
        kind: v.kind.as_str().to_string(),
        version: v.base_and_version().map(|(_, n)| n),
        source: v.source.to_string(),
        sha256,
        duckdb_sql: v.sql.replace("\r\n", "\n"),
        spark_sql: spark.sql,
        spark_portable: spark.portable,
        spark_reason: spark.reason,
    }
}

/// Every Parquet file under `dir`, sorted, with size, SHA-256 and rows.
fn describe_files(conn: &Connection, root: &Path, dir: &Path) -> Result<Vec<FileExport>> {
    let mut paths = Vec::new();
    walk(dir, &mut paths)?;
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let (sha256, bytes) = file_sha256(&p)?;
        let rows: i64 = conn.query_row(
            &format!(
                "select coalesce(sum(num_rows), 0)::bigint from parquet_file_metadata({})",
                literal(&p.to_string_lossy())
            ),
            [],
            |r| r.get(0),
        )?;
        let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
        files.push(FileExport { path: rel, bytes, sha256, rows });
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
    Ok(())
}

/// SHA-256 (lowercase hex) and size of a file, read in 1 MiB blocks.
fn file_sha256(path: &Path) -> Result<(String, u64)> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file = std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf).with_context(|| format!("{}: cannot read", path.display()))?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((crate::hash::hex(&hasher.finalize()), bytes))
}

/// Reads and checks `dir/manifest.json`: its format, every listed file's presence and
/// SHA-256, and that every view it names with this binary's name has this binary's SHA-256
/// (otherwise the rebuilt database's views would not be the ones whose figures the
/// export recorded).
///
/// Errors name the file or view: missing or unreadable manifest, another format, a file
/// missing or with another SHA-256, a view whose SQL differs.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read the export manifest", path.display()))?;
    let manifest: Manifest =
        serde_json::from_str(&text).with_context(|| format!("{}: not an export manifest", path.display()))?;
    if manifest.format != MANIFEST_FORMAT {
        bail!("{}: format {:?}, this sphragis reads {MANIFEST_FORMAT:?}", path.display(), manifest.format);
    }
    for t in &manifest.tables {
        for f in &t.files {
            let p = dir.join(&f.path);
            if !p.is_file() {
                bail!("{}: listed in the manifest for table {} but missing", p.display(), t.name);
            }
            let (sha, _) = file_sha256(&p)?;
            if sha != f.sha256 {
                bail!(
                    "{}: sha256 {sha}, the manifest records {} (table {}): the export was changed",
                    p.display(),
                    f.sha256,
                    t.name
                );
            }
        }
    }
    for v in &manifest.views {
        if let Some(mine) = crate::db::views::find(&v.name)
            && mine.sha256() != v.sha256
        {
            bail!(
                "{}: view {} has sha256 {} in the export, {} in this sphragis ({}); rebuild with the sphragis that wrote it ({})",
                path.display(),
                v.name,
                v.sha256,
                mine.sha256(),
                mine.source,
                manifest.code_version
            );
        }
    }
    Ok(manifest)
}

/// Builds a new database at `db` from the export in `dir` (see the module docs).
///
/// Errors: `db` exists; the manifest or a file fails [`read_manifest`]; a table of the
/// export does not exist in this sphragis's schema; a row count differs from the
/// manifest's; a row does not fit its column. On error the new file is removed.
pub fn import(db: &Path, dir: &Path) -> Result<ImportSummary> {
    if db.exists() {
        bail!("{}: already exists; `init --from` builds a new database file", db.display());
    }
    let manifest = read_manifest(dir)?;
    let result = build(db, dir, &manifest);
    if result.is_err() {
        let _ = std::fs::remove_file(db);
        let _ = std::fs::remove_file(format!("{}.wal", db.display()));
    }
    result
}

/// Creates the database at `db` and loads `manifest`'s tables from `dir` into it.
fn build(db: &Path, dir: &Path, manifest: &Manifest) -> Result<ImportSummary> {
    let conn = crate::db::open(db)?;
    let have = base_tables(&conn)?;
    let summary = crate::db::in_transaction(&conn, || load_tables(&conn, dir, manifest, &have))?;
    advance_sequences(&conn)?;
    conn.execute(
        "insert into sph_log (command, detail) values ('init', ?)",
        [format!(
            "built from the Parquet export {} (database {}, written by {} at {})",
            dir.display(),
            manifest.database,
            manifest.code_version,
            manifest.exported_at
        )],
    )?;
    Ok(summary)
}

fn load_tables(conn: &Connection, dir: &Path, manifest: &Manifest, have: &[String]) -> Result<ImportSummary> {
    let mut loaded = Vec::new();
    for t in &manifest.tables {
        if !have.contains(&t.name) {
            bail!("table {}: in the export but not in this sphragis's schema", t.name);
        }
        // Tables seeded by migrations (aliases) hold the exported rows instead.
        conn.execute_batch(&format!("delete from {}", ident(&t.name)))?;
        if t.files.is_empty() {
            continue;
        }
        let list = t.files.iter().map(|f| literal(&dir.join(&f.path).to_string_lossy())).collect::<Vec<_>>().join(", ");
        let hive = if t.partition_by.is_empty() { "false" } else { "true" };
        let n = conn
            .execute(
                &format!(
                    "insert into {} by name select * from read_parquet([{list}], hive_partitioning = {hive}, \
                     hive_types_autocast = false)",
                    ident(&t.name)
                ),
                [],
            )
            .with_context(|| format!("table {}: loading {}", t.name, dir.join(&t.path).display()))?;
        if n as i64 != t.rows {
            bail!("table {}: {n} rows loaded, the manifest records {}", t.name, t.rows);
        }
        loaded.push((t.name.clone(), t.rows));
    }
    let not_in_export = have.iter().filter(|h| !manifest.tables.iter().any(|t| &t.name == *h)).cloned().collect();
    Ok(ImportSummary { tables: loaded, not_in_export })
}

/// Moves every sequence that feeds a column default (`nextval('s')`) past the largest
/// value loaded into that column, so later loads get fresh ids.
fn advance_sequences(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare(
        "select table_name, column_name, regexp_extract(column_default, 'nextval\\(''([^'']+)''', 1) \
         from duckdb_columns() where database_name = current_database() and schema_name = 'main' \
         and column_default like 'nextval(%'",
    )?;
    let uses = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    for (table, column, sequence) in uses {
        let max: Option<i64> =
            conn.query_row(&format!("select max({})::bigint from {}", ident(&column), ident(&table)), [], |r| {
                r.get(0)
            })?;
        let Some(max) = max else { continue };
        let next: i64 =
            conn.query_row(&format!("select currval({})", literal(&sequence)), [], |r| r.get(0)).unwrap_or(0);
        if max > next {
            conn.query_row(
                &format!("select max(nextval({})) from range({})", literal(&sequence), max - next),
                [],
                |r| r.get::<_, i64>(0),
            )?;
        }
    }
    Ok(())
}
