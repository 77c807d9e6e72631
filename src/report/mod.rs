//! Reports: run a versioned view or table macro, render it as a terminal table, CSV or
//! JSON, and stamp every output with what produced its rows (SPEC §1 principle 2).
//!
//! A report is a name users type (`removals`) bound to one versioned view
//! (`refine_removals_v1`); a parametrised report (`weights`, `budget`) also names the
//! table macro that computes it for other arguments. Rows reach a rendering only through
//! [`run_with`], which runs the statement it records in the [`Stamp`], so a stamp never
//! names SQL that did not produce the rows. The library renders to strings and files; it
//! never prints. The catalogue of reports ([`REPORTS`]) is in `catalogue.rs`; the HTML
//! report in [`html`].

mod catalogue;
pub mod html;

pub use catalogue::{REPORTS, Report, find};

use crate::db::views::{self, SqlKind};
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use serde_json::json;
use std::path::{Path, PathBuf};

/// One cell of a result, typed enough for JSON; everything else is formatted text.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Text(String),
    /// A list column's value (e.g. `pools`): a JSON array in JSON, `[a, b]` in text.
    List(Vec<Cell>),
}

/// Where a table's rows came from: the view or table macro, its SHA-256, the arguments
/// and filter it was run with, and the exact SQL that produced the rows. A stock DuckDB
/// client that runs [`Stamp::query`] on the same file gets the same rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamp {
    /// View or table macro.
    pub kind: SqlKind,
    /// The versioned name, e.g. `refine_removals_v1` or `sft_budget_at_v1`.
    pub name: String,
    /// SHA-256 of its SQL file (CRLF → LF), as recorded in `sph_views`.
    pub sha256: String,
    /// A macro's arguments as SQL literals in parameter order, e.g. `[8], [500]`.
    pub arguments: Option<String>,
    /// The row filter applied, e.g. `version = 'v3'`.
    pub filter: Option<String>,
    /// The statement that produced the rows, e.g.
    /// `select * from refine_removals_v1 where version = 'v3' order by all`.
    pub query: String,
}

/// The result of running a report: the rows with their provenance.
///
/// A table built by [`run`] or [`run_with`] carries a [`Stamp`] and its rows are exactly
/// what the stamp's query returned; a table from [`query`] (ad-hoc SQL) has none and
/// cannot be written as a report file.
#[derive(Debug, Clone)]
pub struct ReportTable {
    pub report: String,
    pub about: String,
    /// `None` for ad-hoc queries.
    pub stamp: Option<Stamp>,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// Arguments of a parametrised report (a table macro's parameters), each checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// `weights`: recovery weights, each finite and 0 or more.
    Weights(Vec<f64>),
    /// `budget`: gradient accumulation sizes and fixed step counts, each 1 or more.
    Budget { grad_accums: Vec<u32>, step_counts: Vec<u32> },
    /// `truncation`, `truncation-views`: maximum lengths in tokens (each 1 or more) and the
    /// side truncation cuts.
    Truncation { max_lengths: Vec<u32>, side: Side },
    /// `eval-bootstrap`: resamples (1 or more) and the seed of the paired bootstrap.
    Bootstrap { resamples: u32, seed: u32 },
}

/// The side truncation cuts: `Right` keeps the first N tokens, `Left` the last N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Right,
    Left,
}

impl Side {
    /// `right` or `left`, as the truncation macros take it.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Right => "right",
            Side::Left => "left",
        }
    }
}

impl Arguments {
    /// The macros these arguments are for.
    pub fn macro_names(&self) -> &'static [&'static str] {
        match self {
            Arguments::Weights(_) => &["sft_weight_projection_at_v1"],
            Arguments::Budget { .. } => &["sft_budget_at_v1"],
            Arguments::Truncation { .. } => &["sft_truncation_at_v1", "sft_truncation_views_at_v1"],
            Arguments::Bootstrap { .. } => &["eval_pair_bootstrap_at_v1"],
        }
    }

    /// The arguments as SQL literals in parameter order, e.g. `[0.5, 3.0]`.
    /// Errors: an empty list, a weight that is negative or not finite, a size of 0.
    pub fn to_sql(&self) -> Result<String> {
        fn list<T: std::fmt::Debug>(values: &[T], what: &str) -> Result<String> {
            if values.is_empty() {
                bail!("{what}: give at least one value");
            }
            Ok(format!("{values:?}"))
        }
        match self {
            Arguments::Weights(w) => {
                if let Some(bad) = w.iter().find(|x| !x.is_finite() || **x < 0.0) {
                    bail!("weights: {bad} is not a finite number 0 or more");
                }
                // `{:?}` of f64 always has a decimal point or exponent: a DOUBLE literal.
                list(w, "weights")
            }
            Arguments::Budget { grad_accums, step_counts } => {
                if grad_accums.contains(&0) || step_counts.contains(&0) {
                    bail!("gradient accumulation sizes and step counts must be 1 or more");
                }
                Ok(format!("{}, {}", list(grad_accums, "grad_accum")?, list(step_counts, "steps")?))
            }
            Arguments::Truncation { max_lengths, side } => {
                if max_lengths.contains(&0) {
                    bail!("maximum lengths must be 1 or more tokens");
                }
                Ok(format!("{}, {}", list(max_lengths, "max-length")?, sql_literal(side.as_str())))
            }
            Arguments::Bootstrap { resamples, seed } => {
                if *resamples == 0 {
                    bail!("resamples must be 1 or more");
                }
                Ok(format!("{resamples}, {seed}"))
            }
        }
    }
}

/// A SQL string literal: `'` doubled.
pub fn sql_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Runs `report` on its view, optionally keeping only rows of corpus `version`.
/// See [`run_with`].
pub fn run(conn: &Connection, report: &Report, version: Option<&str>) -> Result<ReportTable> {
    run_with(conn, report, version, None)
}

/// Runs each of `reports` as [`run_with`] does (with `arguments_of(report)`) and returns
/// their tables in the order given. The reports run on up to as many threads as the
/// machine has cores (at most 4), each on its own connection to the same database
/// (`try_clone`): a report over a small corpus is mostly DuckDB binding and planning its
/// view, which is single-threaded. The rows and stamps are those of running the reports
/// one after another.
///
/// Errors: the first report that fails, as [`run_with`]; a connection that cannot be
/// cloned.
pub fn run_many<'a>(
    conn: &Connection,
    reports: &[&Report],
    version: Option<&str>,
    arguments_of: impl Fn(&Report) -> Option<&'a Arguments> + Sync,
) -> Result<Vec<ReportTable>> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4).min(reports.len());
    if workers <= 1 {
        return reports.iter().map(|r| run_with(conn, r, version, arguments_of(r))).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let connections = (0..workers).map(|_| conn.try_clone()).collect::<duckdb::Result<Vec<_>>>()?;
    let mut results: Vec<(usize, Result<ReportTable>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = connections
            .into_iter()
            .map(|worker| {
                let (next, arguments_of) = (&next, &arguments_of);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(report) = reports.get(i) else { break };
                        done.push((i, run_with(&worker, report, version, arguments_of(report))));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a report thread panicked")).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, table)| table).collect()
}

/// Runs `report`, optionally keeping only rows of corpus `version`, on its view or — when
/// `arguments` are given — on its table macro with those arguments. Rows are ordered by
/// all columns, left to right, so output is deterministic. The returned table's stamp
/// names exactly what produced the rows, and its query is the statement that was run.
///
/// Errors: `version` names no corpus version; `arguments` for a report without a macro
/// or for another report's macro, or invalid arguments; DuckDB rejects the query.
pub fn run_with(
    conn: &Connection,
    report: &Report,
    version: Option<&str>,
    arguments: Option<&Arguments>,
) -> Result<ReportTable> {
    if let Some(v) = version {
        let known: i64 = conn.query_row("select count(*) from corpus_versions where version = ?", [v], |r| r.get(0))?;
        if known == 0 {
            bail!("version {v} does not exist; `sphragis sql \"select version from corpus_versions\"` lists them");
        }
    }
    let (name, call) = match arguments {
        None => (report.view, report.view.to_string()),
        Some(args) => {
            let Some(macro_name) = report.macro_name.filter(|m| args.macro_names().contains(m)) else {
                bail!("report {} takes no such parameters", report.name);
            };
            (macro_name, format!("{macro_name}({})", args.to_sql()?))
        }
    };
    let file = views::find(name).with_context(|| format!("{name} is not registered"))?;
    let filter = match version {
        Some(v) if report.by_version => Some(format!("version = {}", sql_literal(v))),
        _ => None,
    };
    let sql = match &filter {
        Some(f) => format!("select * from {call} where {f} order by all"),
        None => format!("select * from {call} order by all"),
    };
    let table = query(conn, &sql, &[])?;
    Ok(ReportTable {
        report: report.name.to_string(),
        about: report.about.to_string(),
        stamp: Some(Stamp {
            kind: file.kind,
            name: name.to_string(),
            sha256: file.sha256(),
            arguments: arguments.map(|a| a.to_sql()).transpose()?,
            filter,
            query: sql,
        }),
        ..table
    })
}

/// Runs a query with string parameters and collects its result through Arrow, so every
/// DuckDB type renders (nested types, blobs and intervals as Arrow formats them).
///
/// Errors: an empty query, or DuckDB rejects it.
pub fn query(conn: &Connection, sql: &str, params: &[&str]) -> Result<ReportTable> {
    if sql.trim().is_empty() {
        bail!("the query is empty");
    }
    let mut stmt = conn.prepare(sql)?;
    let arrow = stmt.query_arrow(duckdb::params_from_iter(params.iter()))?;
    let schema = arrow.get_schema();
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut rows = Vec::new();
    for batch in arrow {
        for r in 0..batch.num_rows() {
            let row = batch.columns().iter().map(|array| cell_at(array.as_ref(), r)).collect::<Result<Vec<_>>>()?;
            rows.push(row);
        }
    }
    Ok(ReportTable { report: String::new(), about: String::new(), stamp: None, columns, rows })
}

/// The cell at row `r` of an Arrow column: booleans, integers (DuckDB's HUGEINT sums,
/// carried as scale-0 decimals, when they fit in 64 bits), floats and strings typed;
/// lists (DuckDB `LIST`, e.g. `pools`) as [`Cell::List`] of their elements; every other
/// type (timestamps, decimals, structs, blobs, intervals) as the text Arrow formats.
fn cell_at(array: &dyn duckdb::arrow::array::Array, r: usize) -> Result<Cell> {
    use duckdb::arrow::array::AsArray;
    use duckdb::arrow::datatypes::{
        DataType, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
        UInt16Type, UInt32Type, UInt64Type,
    };
    use duckdb::arrow::util::display::{ArrayFormatter, FormatOptions};
    if array.is_null(r) || *array.data_type() == DataType::Null {
        return Ok(Cell::Null);
    }
    Ok(match array.data_type() {
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
        DataType::Decimal128(_, 0) => {
            let v = array.as_primitive::<Decimal128Type>().value(r);
            i64::try_from(v).map_or_else(|_| Cell::Text(v.to_string()), Cell::Int)
        }
        DataType::List(_) => {
            let items = array.as_list::<i32>().value(r);
            Cell::List((0..items.len()).map(|i| cell_at(items.as_ref(), i)).collect::<Result<_>>()?)
        }
        DataType::LargeList(_) => {
            let items = array.as_list::<i64>().value(r);
            Cell::List((0..items.len()).map(|i| cell_at(items.as_ref(), i)).collect::<Result<_>>()?)
        }
        DataType::Timestamp(unit, None) => {
            use duckdb::arrow::datatypes::{
                TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
                TimestampSecondType,
            };
            use duckdb::arrow::temporal_conversions::as_datetime;
            let at = match unit {
                TimeUnit::Second => {
                    as_datetime::<TimestampSecondType>(array.as_primitive::<TimestampSecondType>().value(r))
                }
                TimeUnit::Millisecond => {
                    as_datetime::<TimestampMillisecondType>(array.as_primitive::<TimestampMillisecondType>().value(r))
                }
                TimeUnit::Microsecond => {
                    as_datetime::<TimestampMicrosecondType>(array.as_primitive::<TimestampMicrosecondType>().value(r))
                }
                TimeUnit::Nanosecond => {
                    as_datetime::<TimestampNanosecondType>(array.as_primitive::<TimestampNanosecondType>().value(r))
                }
            };
            match at {
                Some(at) => Cell::Text(iso_timestamp(at)),
                None => Cell::Text(ArrayFormatter::try_new(array, &FormatOptions::default())?.value(r).to_string()),
            }
        }
        _ => Cell::Text(ArrayFormatter::try_new(array, &FormatOptions::default())?.value(r).to_string()),
    })
}

/// A timestamp without time zone in ISO 8601 form, the way Python's
/// `datetime.isoformat()` writes it (so a stock DuckDB client's value compares as text):
/// no fraction when it is a whole second, six digits when it is whole microseconds, nine
/// otherwise. Arrow's own formatter picks 3, 6 or 9 digits, so `.100000` came out as `.100`.
fn iso_timestamp(at: chrono::NaiveDateTime) -> String {
    use chrono::Timelike;
    let nanos = at.nanosecond();
    let format = match nanos {
        0 => "%Y-%m-%dT%H:%M:%S",
        n if n % 1000 == 0 => "%Y-%m-%dT%H:%M:%S%.6f",
        _ => "%Y-%m-%dT%H:%M:%S%.9f",
    };
    at.format(format).to_string()
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    /// RFC 4180 CSV, written as [`CsvStyle`] says.
    Csv(CsvStyle),
    Json,
}

impl Format {
    /// File extension for `--out`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Table => "txt",
            Format::Csv(_) => "csv",
            Format::Json => "json",
        }
    }
}

/// How CSV is written. The default is CSV safe to open in a spreadsheet, without a
/// byte-order mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CsvStyle {
    /// Keep every cell exactly as the database holds it (CSV for programs): no
    /// neutralisation of formula-like text (see [`neutralise_formula`]).
    pub raw: bool,
    /// Start the output with a UTF-8 byte-order mark (EF BB BF), which some spreadsheet
    /// programs need to read UTF-8.
    pub bom: bool,
}

/// The characters that make a spreadsheet read a cell as a formula or a command when
/// they open it (OWASP "CSV Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
pub const FORMULA_TRIGGERS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell as it is written to CSV meant for spreadsheets: text that begins with
/// one of [`FORMULA_TRIGGERS`] gets a leading single quote (`=HYPERLINK(..)` becomes
/// `'=HYPERLINK(..)`), the mitigation OWASP recommends, so a spreadsheet shows it as
/// text instead of evaluating it. Text that is a plain decimal number (`-3`, `+0.5`,
/// `-1.5e-3`) is left as it is: a spreadsheet reads it as that number, which cannot
/// run anything, and prefixing it would turn numbers into text. Numeric cells never
/// pass through here. Everything else is returned unchanged.
pub fn neutralise_formula(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(FORMULA_TRIGGERS) && !is_plain_number(text) {
        std::borrow::Cow::Owned(format!("'{text}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether `text` is a plain decimal number: optional sign, digits with at most one
/// decimal point, optional exponent; no spaces, nothing else.
fn is_plain_number(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let fraction = parts.next().unwrap_or("");
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
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
        Cell::List(items) => format!("[{}]", items.iter().map(text).collect::<Vec<_>>().join(", ")),
    }
}

/// JSON value of a cell. NaN and infinities, which JSON numbers cannot hold, become the
/// strings "NaN", "Infinity", "-Infinity" (as Python's json writes them, quoted), never
/// a silent null; lists become arrays.
fn json_value(cell: &Cell) -> serde_json::Value {
    match cell {
        Cell::Null => serde_json::Value::Null,
        Cell::Bool(b) => json!(b),
        Cell::Int(v) => json!(v),
        Cell::UInt(v) => json!(v),
        Cell::Float(v) if v.is_nan() => json!("NaN"),
        Cell::Float(v) if v.is_infinite() => json!(if *v > 0.0 { "Infinity" } else { "-Infinity" }),
        Cell::Float(v) => json!(v),
        Cell::Text(s) => json!(s),
        Cell::List(items) => serde_json::Value::Array(items.iter().map(json_value).collect()),
    }
}

/// The stamp every rendering carries: `<view|macro> <name> sha256 <hex>`, then
/// ` args (<literals>)` for a macro and ` where <filter>` when rows were filtered, e.g.
/// `macro sft_budget_at_v1 sha256 … args ([8], [500])`. Empty for an ad-hoc query.
pub fn stamp(table: &ReportTable) -> String {
    let Some(st) = &table.stamp else { return String::new() };
    let mut s = format!("{} {} sha256 {}", st.kind.as_str(), st.name, st.sha256);
    if let Some(a) = &st.arguments {
        s.push_str(&format!(" args ({a})"));
    }
    if let Some(f) = &st.filter {
        s.push_str(&format!(" where {f}"));
    }
    s
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
        if table.rows.iter().all(|r| is_number(&r[i]))
            && let Some(c) = t.column_mut(i)
        {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    let caption = match &table.stamp {
        None => String::new(),
        Some(_) => format!("{} — {}\n{}\n", table.report, table.about, stamp(table)),
    };
    format!("{caption}{t}\n({} rows)\n", table.rows.len())
}

fn is_number(v: &Cell) -> bool {
    matches!(v, Cell::Int(_) | Cell::UInt(_) | Cell::Float(_) | Cell::Null)
}

/// Renders RFC 4180 CSV with the csv crate: UTF-8, CRLF line ends, a header row, a
/// field quoted when it holds a comma, a quote (doubled) or a line break. Unless
/// `style.raw`, header and text cells pass through [`neutralise_formula`] (numbers,
/// booleans and NULL cannot start a formula and are written as they are); with
/// `style.bom` the text starts with a UTF-8 byte-order mark.
pub fn render_csv(table: &ReportTable, style: CsvStyle) -> Result<String> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    let safe = |s: &str| if style.raw { s.to_string() } else { neutralise_formula(s).into_owned() };
    w.write_record(table.columns.iter().map(|c| safe(c)))?;
    for row in &table.rows {
        w.write_record(row.iter().map(|cell| match cell {
            Cell::Text(s) => safe(s),
            other => text(other),
        }))?;
    }
    let body = String::from_utf8(w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    Ok(if style.bom { format!("\u{feff}{body}") } else { body })
}

/// Renders JSON: `{"report", "kind", "name", "sha256", "arguments", "filter", "query",
/// "code_version", "columns", "rows": [{column: value}]}` (the stamp keys are null for
/// an ad-hoc query).
pub fn render_json(table: &ReportTable) -> Result<String> {
    Ok(serde_json::to_string_pretty(&json_document(table))?)
}

/// The JSON document [`render_json`] prints for `table`, as a value (so several tables
/// print as one array without parsing their text again: a double read back from text by
/// serde_json is not always the double written).
pub fn json_document(table: &ReportTable) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = table
        .rows
        .iter()
        .map(|row| serde_json::Value::Object(table.columns.iter().cloned().zip(row.iter().map(json_value)).collect()))
        .collect();
    let st = table.stamp.as_ref();
    json!({
        "report": table.report,
        "kind": st.map(|s| s.kind.as_str()),
        "name": st.map(|s| &s.name),
        "sha256": st.map(|s| &s.sha256),
        "arguments": st.and_then(|s| s.arguments.as_ref()),
        "filter": st.and_then(|s| s.filter.as_ref()),
        "query": st.map(|s| &s.query),
        "code_version": crate::CODE_VERSION,
        "columns": table.columns,
        "rows": rows,
    })
}

/// Renders in `format`.
pub fn render(table: &ReportTable, format: Format) -> Result<String> {
    match format {
        Format::Table => Ok(render_table(table)),
        Format::Csv(style) => render_csv(table, style),
        Format::Json => render_json(table),
    }
}

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
/// (kind, name, SHA-256, arguments, filter, query) and row count. A table with no rows is
/// still written (header only) and the manifest says why it is empty. Returns the paths
/// written.
///
/// Errors: a table without a stamp (an ad-hoc query), two tables with the same file
/// name, the directory or a file cannot be written.
pub fn write_files(
    dir: &Path,
    tables: &[ReportTable],
    format: Format,
    context: &ExportContext,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create directory", dir.display()))?;
    let mut written = Vec::new();
    let mut manifest = Vec::new();
    for table in tables {
        let Some(st) = &table.stamp else {
            bail!("only report views and macros can be written as files");
        };
        let file = dir.join(format!("{}.{}", st.name, format.extension()));
        if written.contains(&file) {
            bail!("{}: two tables would be written to the same file", file.display());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ReportTable {
        ReportTable {
            report: "r".into(),
            stamp: Some(Stamp {
                kind: SqlKind::View,
                name: "x_v1".into(),
                sha256: "ab".into(),
                arguments: None,
                filter: None,
                query: "select * from x_v1 order by all".into(),
            }),
            about: "about".into(),
            columns: vec!["org".into(), "n".into(), "share".into()],
            rows: vec![
                vec![Cell::Text("qt, \"the\" company\nline".into()), Cell::Int(3), Cell::Float(0.125)],
                vec![Cell::Text("ünï".into()), Cell::Null, Cell::Float(1.0 / 3.0)],
            ],
        }
    }

    #[test]
    fn arguments_become_checked_sql_literals() {
        assert_eq!(Arguments::Weights(vec![0.5, 3.0]).to_sql().unwrap(), "[0.5, 3.0]");
        assert_eq!(Arguments::Weights(vec![1e-7]).to_sql().unwrap(), "[1e-7]");
        let budget = Arguments::Budget { grad_accums: vec![8], step_counts: vec![100, 500] };
        assert_eq!(budget.to_sql().unwrap(), "[8], [100, 500]");
        assert_eq!(budget.macro_names(), ["sft_budget_at_v1"]);
        let truncation = Arguments::Truncation { max_lengths: vec![8192, 32768], side: Side::Left };
        assert_eq!(truncation.to_sql().unwrap(), "[8192, 32768], 'left'");
        assert!(Arguments::Truncation { max_lengths: vec![0], side: Side::Right }.to_sql().is_err());
        assert!(Arguments::Weights(vec![-1.0]).to_sql().is_err());
        assert!(Arguments::Weights(vec![f64::NAN]).to_sql().is_err());
        assert!(Arguments::Weights(vec![]).to_sql().is_err());
        assert!(Arguments::Budget { grad_accums: vec![0], step_counts: vec![1] }.to_sql().is_err());
        assert_eq!(sql_literal("it's"), "'it''s'");
    }

    #[test]
    fn stamp_names_macro_arguments_and_filter() {
        let mut t = table();
        let st = t.stamp.as_mut().unwrap();
        st.kind = SqlKind::Macro;
        st.name = "m_at_v1".into();
        st.arguments = Some("[8], [500]".into());
        st.filter = Some("version = 'v3'".into());
        assert_eq!(stamp(&t), "macro m_at_v1 sha256 ab args ([8], [500]) where version = 'v3'");
        t.stamp = None;
        assert_eq!(stamp(&t), "");
    }

    #[test]
    fn csv_quotes_per_rfc4180() {
        let csv = render_csv(&table(), CsvStyle::default()).unwrap();
        assert_eq!(csv, "org,n,share\r\n\"qt, \"\"the\"\" company\nline\",3,0.125\r\nünï,,0.3333333333333333\r\n");
    }

    #[test]
    fn csv_neutralises_formula_cells() {
        for (given, written) in [
            ("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-", "'-"),
            ("- item", "'- item"),
            ("-1e", "'-1e"),
            ("+.", "'+."),
            // plain numbers stay numbers; other text is untouched
            ("-3", "-3"),
            ("+0.5", "+0.5"),
            ("-1.5e-3", "-1.5e-3"),
            ("-.5", "-.5"),
            (" =1", " =1"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(neutralise_formula(given), written, "{given:?}");
        }
    }

    #[test]
    fn csv_neutralises_text_and_header_but_not_numbers_unless_raw() {
        let t = ReportTable {
            report: String::new(),
            about: String::new(),
            stamp: None,
            columns: vec!["=h".into(), "n".into()],
            rows: vec![vec![Cell::Text("@x".into()), Cell::Int(-3)], vec![Cell::Text("-4".into()), Cell::Float(-0.5)]],
        };
        assert_eq!(render_csv(&t, CsvStyle::default()).unwrap(), "'=h,n\r\n'@x,-3\r\n-4,-0.5\r\n");
        let raw = CsvStyle { raw: true, bom: false };
        assert_eq!(render_csv(&t, raw).unwrap(), "=h,n\r\n@x,-3\r\n-4,-0.5\r\n");
        let bom = render_csv(&t, CsvStyle { raw: false, bom: true }).unwrap();
        assert_eq!(bom.as_bytes()[..3], [0xef, 0xbb, 0xbf]);
        assert_eq!(&bom[3..], "'=h,n\r\n'@x,-3\r\n-4,-0.5\r\n");
    }

    #[test]
    fn json_keeps_types() {
        let v: serde_json::Value = serde_json::from_str(&render_json(&table()).unwrap()).unwrap();
        assert_eq!(v["name"], "x_v1");
        assert_eq!(v["kind"], "view");
        assert_eq!(v["query"], "select * from x_v1 order by all");
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
             timestamp '2017-03-07 22:19:27' as ts, 12.50::decimal(5,2) as d, sum(x)::hugeint as h, \
             170141183460469231731687303715884105727::hugeint as big from (values (2), (4)) as t(x)",
            &[],
        )
        .unwrap();
        let row = &t.rows[0];
        assert_eq!(
            row[..6],
            [Cell::Null, Cell::Int(1), Cell::UInt(2), Cell::Float(1.5), Cell::Text("x".into()), Cell::Bool(true)]
        );
        for cell in row[6..9].iter().chain(&row[10..12]) {
            let Cell::Text(s) = cell else { panic!("{cell:?}") };
            assert!(!s.contains("OrderedMap") && !s.is_empty(), "{s}");
        }
        // a list is a list: an array in JSON, `[1, 2]` in text
        assert_eq!(row[9], Cell::List(vec![Cell::Int(1), Cell::Int(2)]));
        assert_eq!(text(&row[9]), "[1, 2]");
        assert_eq!(json_value(&row[9]), json!([1, 2]));
        assert_eq!(row[10], Cell::Text("2017-03-07T22:19:27".into()));
        assert_eq!(row[11], Cell::Text("12.50".into()));
        // integer sums are integers in JSON; beyond i64 they stay exact text
        assert_eq!(row[12], Cell::Int(6));
        assert_eq!(row[13], Cell::Text("170141183460469231731687303715884105727".into()));
        assert!(query(&conn, "  ", &[]).unwrap_err().to_string().contains("empty"));
    }

    /// The fault behind a red CI: Arrow wrote `.100000` as `.100`, so a stamp's timestamp
    /// differed from the one a stock client reads 1 time in 1,000. Expected values are
    /// Python's `datetime(...).isoformat()` of each instant.
    #[test]
    fn timestamp_precision_is_isoformat_not_arrow_auto() {
        let conn = Connection::open_in_memory().unwrap();
        let t = query(
            &conn,
            "select timestamp '2026-12-03 14:19:54.100000' as milli, timestamp '2026-12-03 14:19:54' as whole, \
             timestamp '2026-12-03 14:19:54.000010' as micro, timestamp '1969-12-31 23:59:59.5' as before_epoch, \
             timestamp_ns '2026-12-03 14:19:54.123456789' as nano, timestamp_ms '2026-12-03 14:19:54.120' as ms",
            &[],
        )
        .unwrap();
        let texts: Vec<String> = t.rows[0].iter().map(text).collect();
        assert_eq!(
            texts,
            [
                "2026-12-03T14:19:54.100000",
                "2026-12-03T14:19:54",
                "2026-12-03T14:19:54.000010",
                "1969-12-31T23:59:59.500000",
                "2026-12-03T14:19:54.123456789",
                "2026-12-03T14:19:54.120000"
            ]
        );
    }

    /// A float JSON cannot hold is written as Python's json names it, never as a null
    /// that reads like a missing value; nested lists keep their nulls.
    #[test]
    fn json_never_turns_nan_or_infinity_into_null() {
        assert_eq!(json_value(&Cell::Float(f64::NAN)), json!("NaN"));
        assert_eq!(json_value(&Cell::Float(f64::INFINITY)), json!("Infinity"));
        assert_eq!(json_value(&Cell::Float(f64::NEG_INFINITY)), json!("-Infinity"));
        let conn = Connection::open_in_memory().unwrap();
        let t = query(&conn, "select [['a', null], []] as l, 'nan'::double as n", &[]).unwrap();
        assert_eq!(json_value(&t.rows[0][0]), json!([["a", null], []]));
        assert_eq!(json_value(&t.rows[0][1]), json!("NaN"));
    }
}
