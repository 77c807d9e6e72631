//! Reports: run a versioned view, render it as a terminal table, CSV or JSON, and stamp
//! every output with the view's name and SHA-256 (SPEC §1 principle 2).
//!
//! A report is a name users type (`removals`) bound to one versioned view
//! (`refine_removals_v1`). The library renders to strings and files; it never prints.

use crate::db::views;
use anyhow::{Context, Result, bail};
use duckdb::Connection;
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
        name: "contract",
        view: "sft_contract_summary_v1",
        about: "SFT views: ids/mask contract pass/fail per pool and check",
        by_version: false,
    },
    Report {
        name: "contract-failures",
        view: "sft_contract_failures_v1",
        about: "SFT views: every failing view with its check, position and reason",
        by_version: false,
    },
    Report {
        name: "trajectories",
        view: "sft_trajectory_stats_v1",
        about: "SFT trajectories per source: messages, tool calls, bash and git-history commands",
        by_version: false,
    },
    Report {
        name: "instances",
        view: "sft_instances_v1",
        about: "SFT per-instance table: pools, views, tokens, supervised tokens, tool calls, outcome",
        by_version: false,
    },
    Report {
        name: "dedup",
        view: "sft_dedup_v1",
        about: "SFT training views under dedup modes none / exact / union: views, instances, exposure, positions",
        by_version: false,
    },
    Report {
        name: "exposure",
        view: "sft_recovery_exposure_v1",
        about: "SFT recovery-region exposure and its share, before and after dedup; what the recovery pool adds",
        by_version: false,
    },
    Report {
        name: "dedup-pools",
        view: "sft_dedup_exact_pools_v1",
        about: "SFT exact dedup per pool: copies removed, views remaining, subset views",
        by_version: false,
    },
    Report {
        name: "priority",
        view: "sft_dedup_priority_v1",
        about: "SFT dedup priority(P) per repair pool: positions kept and dropped against the union",
        by_version: false,
    },
    Report {
        name: "membership",
        view: "sft_membership_v1",
        about: "SFT labelled pools: share among training views before and after union dedup",
        by_version: false,
    },
    Report {
        name: "concentration",
        view: "sft_recovery_concentration_v1",
        about: "SFT recovery pool: share of its supervised tokens in its k longest views",
        by_version: false,
    },
    Report {
        name: "weights",
        view: "sft_weight_projection_v1",
        about: "SFT weight projection: total(w) = U + w|R|, region(w) = (1 + w)|R|",
        by_version: false,
    },
    Report {
        name: "context",
        view: "sft_context_lengths_v1",
        about: "SFT context length per instance: P50, P90, max, count >= 32,768",
        by_version: false,
    },
    Report {
        name: "isolation",
        view: "sft_isolation_v1",
        about: "SFT families: instances, views, and the exact intersection with the protected list",
        by_version: false,
    },
    Report {
        name: "budget",
        view: "sft_budget_v1",
        about: "SFT training budget on the train split: views, exposure, updates per epoch, passes",
        by_version: false,
    },
    Report {
        name: "outcomes",
        view: "sft_outcome_distribution_v1",
        about: "SFT evaluator outcomes: resolved, fail-to-pass node distribution, median pass-to-pass",
        by_version: false,
    },
    Report {
        name: "thinking",
        view: "sft_thinking_v1",
        about: "SFT thinking bodies: count, blank placeholders, length P50/P90/max, long-repetition candidates",
        by_version: false,
    },
    Report {
        name: "tools",
        view: "sft_supervised_tools_v1",
        about: "SFT supervised tool calls by tool, and the bash share",
        by_version: false,
    },
    Report {
        name: "test-runs",
        view: "sft_test_runs_heuristic_v1",
        about: "SFT test runs per trajectory (HEURISTIC): first write, passes/fails, pass after last write, recovery window",
        by_version: false,
    },
    Report {
        name: "recovery",
        view: "sft_recovery_windows_heuristic_v1",
        about: "SFT recovery windows (HEURISTIC): failing and passing runs, their commands, pass from a changed command",
        by_version: false,
    },
    Report {
        name: "final-report",
        view: "sft_final_report_v1",
        about: "SFT final report per trajectory: supervised, masked or absent",
        by_version: false,
    },
    Report {
        name: "expected-failures",
        view: "sft_expected_failures_heuristic_v1",
        about: "SFT report-only views citing an expected failure (HEURISTIC): needs review, with evidence",
        by_version: false,
    },
    Report {
        name: "detail",
        view: "sft_instance_detail_v1",
        about: "SFT per-instance detail: every audit figure side by side (CSV for spreadsheets)",
        by_version: false,
    },
    Report {
        name: "samples",
        view: "sft_samples_outcomes_v1",
        about: "SFT samples database: success and finish reason (natural / max_steps), median test nodes",
        by_version: false,
    },
    Report {
        name: "report-only",
        view: "sft_report_only_v1",
        about: "SFT report-only views, listed apart from training",
        by_version: false,
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

/// One cell of a result, typed enough for JSON; everything else is formatted text.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Text(String),
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
    pub rows: Vec<Vec<Cell>>,
}

/// Runs `report`, optionally keeping only rows of corpus `version`. Rows are ordered by
/// all columns, left to right, so output is deterministic. Errors when `version` names
/// no corpus version.
pub fn run(conn: &Connection, report: &Report, version: Option<&str>) -> Result<ReportTable> {
    let file = views::find(report.view).with_context(|| format!("view {} is not registered", report.view))?;
    if let Some(v) = version {
        let known: i64 = conn.query_row("select count(*) from corpus_versions where version = ?", [v], |r| r.get(0))?;
        if known == 0 {
            bail!("version {v} does not exist; `sphragis sql \"select version from corpus_versions\"` lists them");
        }
    }
    let filter = if report.by_version && version.is_some() { " where version = ?" } else { "" };
    let sql = format!("select * from {}{filter} order by all", report.view);
    let params: Vec<&str> = if filter.is_empty() { Vec::new() } else { version.into_iter().collect() };
    let table = query(conn, &sql, &params)?;
    Ok(ReportTable {
        report: report.name.to_string(),
        view: report.view.to_string(),
        view_sha256: file.sha256(),
        about: report.about.to_string(),
        ..table
    })
}

/// Runs a query with string parameters and collects its result through Arrow, so every
/// DuckDB type renders (nested types, blobs and intervals as Arrow formats them).
///
/// Errors: an empty query, or DuckDB rejects it.
pub fn query(conn: &Connection, sql: &str, params: &[&str]) -> Result<ReportTable> {
    use duckdb::arrow::array::{Array, AsArray};
    use duckdb::arrow::datatypes::{DataType, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type, Float32Type, Float64Type};
    use duckdb::arrow::util::display::{ArrayFormatter, FormatOptions};
    if sql.trim().is_empty() {
        bail!("the query is empty");
    }
    let mut stmt = conn.prepare(sql)?;
    let arrow = stmt.query_arrow(duckdb::params_from_iter(params.iter()))?;
    let schema = arrow.get_schema();
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let options = FormatOptions::default();
    let mut rows = Vec::new();
    for batch in arrow {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for r in 0..batch.num_rows() {
            let mut row = Vec::with_capacity(columns.len());
            for (c, array) in batch.columns().iter().enumerate() {
                if array.is_null(r) || *array.data_type() == DataType::Null {
                    row.push(Cell::Null);
                    continue;
                }
                row.push(match array.data_type() {
                    DataType::Boolean => Cell::Bool(array.as_boolean().value(r)),
                    DataType::Int8 => Cell::Int(array.as_primitive::<Int8Type>().value(r).into()),
                    DataType::Int16 => Cell::Int(array.as_primitive::<Int16Type>().value(r).into()),
                    DataType::Int32 => Cell::Int(array.as_primitive::<Int32Type>().value(r).into()),
                    DataType::Int64 => Cell::Int(array.as_primitive::<Int64Type>().value(r)),
                    DataType::UInt8 => Cell::UInt(array.as_primitive::<UInt8Type>().value(r).into()),
                    DataType::UInt16 => Cell::UInt(array.as_primitive::<UInt16Type>().value(r).into()),
                    DataType::UInt32 => Cell::UInt(array.as_primitive::<UInt32Type>().value(r).into()),
                    DataType::UInt64 => Cell::UInt(array.as_primitive::<UInt64Type>().value(r)),
                    DataType::Float32 => Cell::Float(array.as_primitive::<Float32Type>().value(r).into()),
                    DataType::Float64 => Cell::Float(array.as_primitive::<Float64Type>().value(r)),
                    DataType::Utf8 => Cell::Text(array.as_string::<i32>().value(r).to_string()),
                    DataType::LargeUtf8 => Cell::Text(array.as_string::<i64>().value(r).to_string()),
                    DataType::Utf8View => Cell::Text(array.as_string_view().value(r).to_string()),
                    _ => Cell::Text(formatters[c].value(r).to_string()),
                });
            }
            rows.push(row);
        }
    }
    Ok(ReportTable {
        report: String::new(),
        view: String::new(),
        view_sha256: String::new(),
        about: String::new(),
        columns,
        rows,
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

/// Text of a cell as it appears in CSV: NULL is empty, floats keep full precision
/// (shortest round-trip form).
pub fn text(cell: &Cell) -> String {
    match cell {
        Cell::Null => String::new(),
        Cell::Bool(b) => b.to_string(),
        Cell::Int(v) => v.to_string(),
        Cell::UInt(v) => v.to_string(),
        Cell::Float(v) => v.to_string(),
        Cell::Text(s) => s.clone(),
    }
}

/// JSON value of a cell; NaN and infinities (which JSON cannot hold) become null.
fn json_value(cell: &Cell) -> serde_json::Value {
    match cell {
        Cell::Null => serde_json::Value::Null,
        Cell::Bool(b) => json!(b),
        Cell::Int(v) => json!(v),
        Cell::UInt(v) => json!(v),
        Cell::Float(v) => json!(v),
        Cell::Text(s) => json!(s),
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
            Cell::Float(d) => format!("{d:.4}"),
            Cell::Null => "NULL".to_string(),
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

fn is_number(v: &Cell) -> bool {
    matches!(v, Cell::Int(_) | Cell::UInt(_) | Cell::Float(_) | Cell::Null)
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
    std::fs::write(&path, serde_json::to_string_pretty(&json!({ "files": manifest }))? + "\n")
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
                vec![Cell::Text("qt, \"the\" company\nline".into()), Cell::Int(3), Cell::Float(0.125)],
                vec![Cell::Text("ünï".into()), Cell::Null, Cell::Float(1.0 / 3.0)],
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
        assert!(t.contains("0.3333") && t.contains("NULL") && t.ends_with("(2 rows)\n"));
    }

    #[test]
    fn queries_render_every_type() {
        let conn = Connection::open_in_memory().unwrap();
        let t = query(
            &conn,
            "select null as n, 1::tinyint as i, 2::ubigint as u, 1.5::float as f, 'x' as s, true as b, \
             {'a': 1} as st, 'a\\x00b'::blob as bl, interval 2 day as iv, [1, 2] as l, \
             timestamp '2017-03-07 22:19:27' as ts, 12.50::decimal(5,2) as d",
            &[],
        )
        .unwrap();
        let row = &t.rows[0];
        assert_eq!(row[..6], [Cell::Null, Cell::Int(1), Cell::UInt(2), Cell::Float(1.5), Cell::Text("x".into()), Cell::Bool(true)]);
        for cell in &row[6..] {
            let Cell::Text(s) = cell else { panic!("{cell:?}") };
            assert!(!s.contains("OrderedMap") && !s.is_empty(), "{s}");
        }
        assert_eq!(row[10], Cell::Text("2017-03-07T22:19:27".into()));
        assert_eq!(row[11], Cell::Text("12.50".into()));
        assert!(query(&conn, "  ", &[]).unwrap_err().to_string().contains("empty"));
    }
}
