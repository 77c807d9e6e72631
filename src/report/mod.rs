//! Reports: run a versioned view, render it as a terminal table, CSV or JSON, and stamp
//! every output with the view's name and SHA-256 (SPEC §1 principle 2).
//!
//! A report is a name users type (`removals`) bound to one versioned view
//! (`refine_removals_v1`). The library renders to strings and files; it never prints.

use crate::db::views;
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use duckdb::types::{TimeUnit, Value};
use serde_json::json;
use std::path::{Path, PathBuf};

/// A named report over one versioned view.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    /// Name on the command line.
    pub name: &'static str,
    /// The versioned view it reads.
    pub view: &'static str,
    /// One line for `--help` and the table caption.
    pub about: &'static str,
    /// Whether the view has a `version` column that `--version` filters.
    pub by_version: bool,
}

/// Every report, in the order `report all` prints them.
pub const REPORTS: &[Report] = &[
    Report { name: "inputs", view: "ingest_files_v1", about: "input files bound to this database", by_version: false },
    Report {
        name: "removals",
        view: "refine_removals_v1",
        about: "removals by reason and org (first removing rule)",
        by_version: true,
    },
    Report {
        name: "suggested-share",
        view: "suggested_edit_share_v1",
        about: "suggested-edit share per org and window, and its ratio to the training window",
        by_version: true,
    },
    Report {
        name: "fences",
        view: "fence_agreement_v1",
        about: "strict fence rule vs Gerrit's substring test vs the loose pattern",
        by_version: true,
    },
    Report {
        name: "target-in-comment",
        view: "target_in_comment_v1",
        about: "targets a reviewer typed into a comment (reported, not removed)",
        by_version: true,
    },
    Report {
        name: "reconciliation",
        view: "reconciliation_v1",
        about: "base kept - removed + resurrected = kept, per org and window",
        by_version: true,
    },
    Report {
        name: "suggested-share-halves",
        view: "suggested_edit_share_by_half_v1",
        about: "suggested-edit share per org, window and registered half, and its ratio to the training window",
        by_version: true,
    },
    Report {
        name: "splits",
        view: "split_counts_v1",
        about: "kept examples per split (sealed window: count only)",
        by_version: true,
    },
    Report {
        name: "suffix-mix",
        view: "half_suffix_mix_v1",
        about: "suffix mix of each registered half's training rows",
        by_version: true,
    },
    Report {
        name: "criteria",
        view: "split_criteria_v1",
        about: "split criteria: half sizes, size floor, language-mix ceiling (TV distance), matched suffix",
        by_version: true,
    },
    Report {
        name: "labels",
        view: "label_audit_v1",
        about: "label audit: valid share per rater with n and a Wilson 95% interval",
        by_version: true,
    },
];

/// Finds a report by name. Errors list the known names.
pub fn find(name: &str) -> Result<&'static Report> {
    REPORTS.iter().find(|r| r.name == name).with_context(|| {
        let names: Vec<_> = REPORTS.iter().map(|r| r.name).collect();
        format!("unknown report {name:?}; reports: {}, all", names.join(", "))
    })
}

/// The result of running a report: the view's rows with their provenance.
#[derive(Debug, Clone)]
pub struct ReportTable {
    pub report: String,
    pub view: String,
    /// SHA-256 of the view's SQL file.
    pub view_sha256: String,
    pub about: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// Runs `report`, optionally keeping only rows of corpus `version`. Rows are ordered by
/// all columns, left to right, so output is deterministic.
pub fn run(conn: &Connection, report: &Report, version: Option<&str>) -> Result<ReportTable> {
    let file = views::find(report.view).with_context(|| format!("view {} is not registered", report.view))?;
    let filter = if report.by_version && version.is_some() { " where version = ?" } else { "" };
    let sql = format!("select * from {}{filter} order by all", report.view);
    let table = query(conn, &sql, if filter.is_empty() { None } else { version })?;
    Ok(ReportTable {
        report: report.name.to_string(),
        view: report.view.to_string(),
        view_sha256: file.sha256(),
        about: report.about.to_string(),
        ..table
    })
}

/// Runs any query (for `sphragis sql`), with at most one string parameter.
pub fn query(conn: &Connection, sql: &str, param: Option<&str>) -> Result<ReportTable> {
    let mut stmt = conn.prepare(sql)?;
    let n = stmt.column_count();
    let mut rows_out = Vec::new();
    {
        let mut rows = match param {
            Some(p) => stmt.query([p])?,
            None => stmt.query([])?,
        };
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(n);
            for i in 0..n {
                values.push(row.get::<_, Value>(i)?);
            }
            rows_out.push(values);
        }
    }
    let columns = stmt.column_names();
    Ok(ReportTable {
        report: String::new(),
        view: String::new(),
        view_sha256: String::new(),
        about: String::new(),
        columns,
        rows: rows_out,
    })
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

impl Format {
    /// File extension for `--out`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Table => "txt",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }
}

/// Text of a value as it appears in tables and CSV: NULL is empty, floats keep full
/// precision (shortest round-trip form), timestamps are `YYYY-MM-DD HH:MM:SS[.ffffff]`.
pub fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Boolean(b) => b.to_string(),
        Value::TinyInt(v) => v.to_string(),
        Value::SmallInt(v) => v.to_string(),
        Value::Int(v) => v.to_string(),
        Value::BigInt(v) => v.to_string(),
        Value::HugeInt(v) => v.to_string(),
        Value::UTinyInt(v) => v.to_string(),
        Value::USmallInt(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::UBigInt(v) => v.to_string(),
        Value::Float(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        Value::Decimal(v) => v.to_string(),
        Value::UHugeInt(v) => v.to_string(),
        Value::Date32(days) => chrono::DateTime::from_timestamp(i64::from(*days) * 86_400, 0)
            .map(|t| t.format("%Y-%m-%d").to_string())
            .unwrap_or_else(|| days.to_string()),
        Value::Enum(s) => s.clone(),
        Value::Text(s) => s.clone(),
        Value::Timestamp(unit, v) => timestamp_text(*unit, *v),
        Value::List(items) | Value::Array(items) => {
            format!("[{}]", items.iter().map(text).collect::<Vec<_>>().join(", "))
        }
        other => format!("{other:?}"),
    }
}

fn timestamp_text(unit: TimeUnit, v: i64) -> String {
    let micros = match unit {
        TimeUnit::Second => v.saturating_mul(1_000_000),
        TimeUnit::Millisecond => v.saturating_mul(1_000),
        TimeUnit::Microsecond => v,
        TimeUnit::Nanosecond => v / 1_000,
    };
    chrono::DateTime::from_timestamp_micros(micros)
        .map(|t| {
            if micros % 1_000_000 == 0 {
                t.format("%Y-%m-%d %H:%M:%S").to_string()
            } else {
                t.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
            }
        })
        .unwrap_or_else(|| v.to_string())
}

fn json_value(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Boolean(b) => json!(b),
        Value::TinyInt(v) => json!(v),
        Value::SmallInt(v) => json!(v),
        Value::Int(v) => json!(v),
        Value::BigInt(v) => json!(v),
        Value::UTinyInt(v) => json!(v),
        Value::USmallInt(v) => json!(v),
        Value::UInt(v) => json!(v),
        Value::UBigInt(v) => json!(v),
        Value::Float(v) => json!(v),
        Value::Double(v) => json!(v),
        Value::List(items) | Value::Array(items) => serde_json::Value::Array(items.iter().map(json_value).collect()),
        other => json!(text(other)),
    }
}

/// The stamp every rendering carries: `view <name> sha256 <hex>`.
pub fn stamp(table: &ReportTable) -> String {
    format!("view {} sha256 {}", table.view, table.view_sha256)
}

/// Renders a terminal table with a caption naming the report, view and SHA-256.
/// Floats are shown with 4 decimals here (CSV and JSON keep full precision).
pub fn render_table(table: &ReportTable) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(table.columns.clone());
    for row in &table.rows {
        t.add_row(row.iter().map(|v| match v {
            Value::Double(d) => format!("{d:.4}"),
            Value::Float(d) => format!("{d:.4}"),
            other => text(other),
        }));
    }
    for (i, _) in table.columns.iter().enumerate() {
        if table.rows.iter().all(|r| is_number(&r[i])) {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(comfy_table::CellAlignment::Right);
            }
        }
    }
    let caption = if table.view.is_empty() {
        String::new()
    } else {
        format!("{} — {}\n{}\n", table.report, table.about, stamp(table))
    };
    format!("{caption}{t}\n({} rows)\n", table.rows.len())
}

fn is_number(v: &Value) -> bool {
    !matches!(v, Value::Text(_) | Value::Boolean(_) | Value::Timestamp(..) | Value::List(_))
}

/// Renders RFC 4180 CSV (UTF-8, header row, quoting where needed) with the csv crate.
pub fn render_csv(table: &ReportTable) -> Result<String> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    w.write_record(&table.columns)?;
    for row in &table.rows {
        w.write_record(row.iter().map(text))?;
    }
    Ok(String::from_utf8(w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?)
}

/// Renders JSON: `{"report", "view", "view_sha256", "columns", "rows": [{column: value}]}`.
pub fn render_json(table: &ReportTable) -> Result<String> {
    let rows: Vec<serde_json::Value> = table
        .rows
        .iter()
        .map(|row| {
            serde_json::Value::Object(
                table.columns.iter().cloned().zip(row.iter().map(json_value)).collect(),
            )
        })
        .collect();
    Ok(serde_json::to_string_pretty(&json!({
        "report": table.report,
        "view": table.view,
        "view_sha256": table.view_sha256,
        "columns": table.columns,
        "rows": rows,
    }))?)
}

/// Renders in `format`.
pub fn render(table: &ReportTable, format: Format) -> Result<String> {
    match format {
        Format::Table => Ok(render_table(table)),
        Format::Csv => render_csv(table),
        Format::Json => render_json(table),
    }
}

/// Writes `<dir>/<view>.<ext>` for each table (the file name names the view and its
/// version) and `<dir>/manifest.json` listing every file with its view, SHA-256 and row
/// count. Returns the paths written. Errors when the directory cannot be created or a
/// file cannot be written.
pub fn write_files(dir: &Path, tables: &[ReportTable], format: Format) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create directory", dir.display()))?;
    let mut written = Vec::new();
    let mut manifest = Vec::new();
    for table in tables {
        if table.view.is_empty() {
            bail!("only report views can be written as files");
        }
        let file = dir.join(format!("{}.{}", table.view, format.extension()));
        std::fs::write(&file, render(table, format)?).with_context(|| format!("{}: cannot write", file.display()))?;
        manifest.push(json!({
            "file": file.file_name().map(|f| f.to_string_lossy().into_owned()),
            "report": table.report,
            "view": table.view,
            "view_sha256": table.view_sha256,
            "rows": table.rows.len(),
        }));
        written.push(file);
    }
    let path = dir.join("manifest.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json!({ "files": manifest }))?)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    written.push(path);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ReportTable {
        ReportTable {
            report: "r".into(),
            view: "x_v1".into(),
            view_sha256: "ab".into(),
            about: "about".into(),
            columns: vec!["org".into(), "n".into(), "share".into()],
            rows: vec![
                vec![Value::Text("qt, \"the\" company\nline".into()), Value::BigInt(3), Value::Double(0.125)],
                vec![Value::Text("ünï".into()), Value::Null, Value::Double(1.0 / 3.0)],
            ],
        }
    }

    #[test]
    fn csv_quotes_per_rfc4180() {
        let csv = render_csv(&table()).unwrap();
        assert_eq!(
            csv,
            "org,n,share\r\n\"qt, \"\"the\"\" company\nline\",3,0.125\r\nünï,,0.3333333333333333\r\n"
        );
    }

    #[test]
    fn json_keeps_types() {
        let v: serde_json::Value = serde_json::from_str(&render_json(&table()).unwrap()).unwrap();
        assert_eq!(v["view"], "x_v1");
        assert_eq!(v["rows"][0]["n"], 3);
        assert_eq!(v["rows"][1]["n"], serde_json::Value::Null);
        assert_eq!(v["rows"][0]["share"], 0.125);
    }

    #[test]
    fn table_names_the_view() {
        let t = render_table(&table());
        assert!(t.starts_with("r — about\nview x_v1 sha256 ab\n"), "{t}");
        assert!(t.contains("0.3333") && t.ends_with("(2 rows)\n"));
    }

    #[test]
    fn timestamps_as_text() {
        assert_eq!(text(&Value::Timestamp(TimeUnit::Microsecond, 1_488_925_167_000_000)), "2017-03-07 22:19:27");
        assert_eq!(text(&Value::Timestamp(TimeUnit::Microsecond, 1_488_925_167_500_000)), "2017-03-07 22:19:27.500000");
    }
}
