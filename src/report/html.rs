//! The HTML report: one self-contained, offline HTML file with every chosen report as a
//! stamped section (title, view or macro name, SHA-256, corpus version, arguments), a
//! chart where one helps, the table, and drill-downs from counts to the ids behind them.
//!
//! - Markup is built with `maud`, which escapes every interpolated string; charts are
//!   inline SVG drawn by `plotters` with its SVG backend only (no font files: plotters'
//!   built-in size estimate lays text out and the browser draws it with its own
//!   `sans-serif`, so neither the build nor the output depends on fonts on the machine).
//! - No network: no external script, style sheet, font or image. CSS is inline; a small
//!   inline script only sorts tables when a header is clicked — tables and charts read the
//!   same without it.
//! - Each chart reads the rows of the section's own stamped table (see [`chart`]).
//! - Drill-downs ([`DRILL_DOWNS`]) are registered views run through [`super::run_with`], so
//!   each list of ids carries its own stamp and a stock DuckDB client reproduces it. They
//!   never list sealed-window ids (the views leave them out, SPEC §1.6) and carry no
//!   content (hunk, target, comment text) and no author.
//! - Text cells are shown as the view returns them, except that e-mail-like strings are
//!   replaced by `[e-mail removed]` (SPEC §1.7: names and e-mails never appear in a
//!   report), should a trajectory text a view shows carry one.
//!
//! Sizes are capped: at most [`HtmlOptions::max_rows`] rows per table and
//! [`HtmlOptions::max_ids`] ids per drill-down group, each cap stated where it applies.

use super::{Cell, ExportContext, Report, ReportTable, run_with, stamp};
use crate::db::views::SqlKind;
use anyhow::{Result, anyhow};
use duckdb::Connection;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Caps that keep the file a reasonable size.
#[derive(Debug, Clone, Copy)]
pub struct HtmlOptions {
    /// Rows shown per table (the rest are counted and named by the CSV command).
    pub max_rows: usize,
    /// Ids listed per drill-down group.
    pub max_ids: usize,
    /// Views embedded in the loss-mask section.
    pub max_mask_views: usize,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        Self { max_rows: 500, max_ids: 200, max_mask_views: 20 }
    }
}

/// A drill-down: a registered view listing the ids behind the counts of another report's
/// view, grouped by `keys`.
#[derive(Debug, Clone, Copy)]
pub struct DrillDown {
    /// The stamped view of ids (run like a report).
    pub report: Report,
    /// The view whose counts link here.
    pub source_view: &'static str,
    /// Columns of `report.view` that name one count of the source (its group).
    pub keys: &'static [&'static str],
    /// The id column listed per group.
    pub id_column: &'static str,
}

/// Every drill-down of the HTML report.
pub const DRILL_DOWNS: &[DrillDown] = &[
    DrillDown {
        report: Report {
            name: "removed-examples",
            view: "refine_removed_examples_v1",
            about: "the example ids behind each removal count (sealed-window examples are counted, never listed)",
            by_version: true,
            macro_name: None,
        },
        source_view: "refine_removals_v1",
        keys: &["version", "org", "reason"],
        id_column: "example_id",
    },
    DrillDown {
        report: Report {
            name: "contract-failures",
            view: "sft_contract_failures_v1",
            about: "the view ids behind each failed contract count",
            by_version: false,
            macro_name: None,
        },
        source_view: "sft_contract_summary_v1",
        keys: &["pool", "check_name"],
        id_column: "view_id",
    },
];

/// The drill-down group a count cell of `view` explains: the index into [`DRILL_DOWNS`]
/// and the group's key values, or `None` when the cell is not such a count.
///
/// - `refine_removals_v1`: `removed_<reason>` of an org row (not `(all)`) → (version, org, reason);
/// - `sft_contract_summary_v1`: `failed` → (pool, check_name).
fn drill_group(view: &str, columns: &[String], row: &[Cell], col: usize) -> Option<(usize, Vec<String>)> {
    let get = |name: &str| columns.iter().position(|c| c == name).map(|i| super::text(&row[i]));
    match view {
        "refine_removals_v1" => {
            let reason = columns[col].strip_prefix("removed_")?;
            if !matches!(
                reason,
                "service_account" | "rebase_successor" | "suggested_edit" | "applied_fix" | "duplicate"
            ) {
                return None;
            }
            let org = get("org")?;
            if org == "(all)" {
                return None;
            }
            Some((0, vec![get("version")?, org, reason.to_string()]))
        }
        "sft_contract_summary_v1" if columns[col] == "failed" => Some((1, vec![get("pool")?, get("check_name")?])),
        _ => None,
    }
}

/// One rendered drill-down: its stamped table and, per group, the anchor id and the ids.
struct DrillRendered {
    table: ReportTable,
    drill: DrillDown,
    /// group key values → (anchor id, ids in the view's order)
    groups: BTreeMap<Vec<String>, (String, Vec<String>)>,
}

/// Renders the whole report file.
///
/// `tables` are the report tables in order (each must carry a stamp); `version` is the
/// `--version` filter the command used (applied to drill-downs too); `context` gives the
/// header (database, inputs). Drill-downs are run on `conn` only for sources present.
///
/// Errors: a table without a stamp, a drill-down query DuckDB rejects, a chart plotters
/// cannot draw.
pub fn render_html(
    conn: &Connection,
    tables: &[ReportTable],
    version: Option<&str>,
    context: &ExportContext,
    opts: &HtmlOptions,
) -> Result<String> {
    for t in tables {
        if t.stamp.is_none() {
            anyhow::bail!("only report views and macros can be written as HTML sections");
        }
    }
    let present: BTreeSet<&str> = tables.iter().filter_map(|t| t.stamp.as_ref().map(|s| s.name.as_str())).collect();
    let mut drills = Vec::new();
    for (d, drill) in DRILL_DOWNS.iter().enumerate() {
        if !present.contains(drill.source_view) {
            continue;
        }
        let table = run_with(conn, &drill.report, version.filter(|_| drill.report.by_version), None)?;
        let col = |name: &str| {
            table
                .columns
                .iter()
                .position(|c| c == name)
                .ok_or_else(|| anyhow!("{} has no column {name}", drill.report.view))
        };
        let keys: Vec<usize> = drill.keys.iter().map(|k| col(k)).collect::<Result<_>>()?;
        let id = col(drill.id_column)?;
        let mut groups: BTreeMap<Vec<String>, (String, Vec<String>)> = BTreeMap::new();
        for row in &table.rows {
            let key: Vec<String> = keys.iter().map(|&k| super::text(&row[k])).collect();
            let n = groups.len();
            groups.entry(key).or_insert_with(|| (format!("dd-{d}-{n}"), Vec::new())).1.push(super::text(&row[id]));
        }
        drills.push(DrillRendered { table, drill: *drill, groups });
    }
    let anchor_of = |view: &str, columns: &[String], row: &[Cell], col: usize| -> Option<String> {
        let (d, key) = drill_group(view, columns, row, col)?;
        let rendered = drills.iter().find(|r| r.drill.report.view == DRILL_DOWNS[d].report.view)?;
        rendered.groups.get(&key).map(|(anchor, _)| anchor.clone())
    };
    // the views failing a contract check, for the loss-mask section
    let failing_views: Vec<String> = tables
        .iter()
        .chain(drills.iter().map(|d| &d.table))
        .filter(|t| t.stamp.as_ref().is_some_and(|s| s.name == "sft_contract_failures_v1"))
        .flat_map(|t| {
            let i = t.columns.iter().position(|c| c == "view_id");
            t.rows.iter().filter_map(move |r| i.map(|i| super::text(&r[i])))
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut sections = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let figure = match chart(t, tables) {
            Ok(svg) => svg,
            Err(e) => return Err(e.context(format!("chart of {}", t.report))),
        };
        sections.push(section(&format!("r-{i}-{}", t.report), t, figure, opts, &|c, r, k| {
            anchor_of(&t.stamp.as_ref().map(|s| s.name.clone()).unwrap_or_default(), c, r, k)
        }));
    }
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "sphragis report — " (context.database) }
                style { (PreEscaped(CSS)) (PreEscaped(crate::show::MASK_CSS)) }
            }
            body {
                header id="top" {
                    h1 { "sphragis report" }
                    table.meta {
                        tr { th { "database" } td { code { (context.database) } } }
                        tr { th { "code version" } td { code { (crate::CODE_VERSION) } } }
                        tr { th { "corpus version filter" } td { (version.map_or("none (every version in the rows)".to_string(), |v| v.to_string())) } }
                    }
                    h2 { "Inputs (ingest log)" }
                    table.data.inputs {
                        thead { tr { th { "file_id" } th { "kind" } th { "path" } th { "sha256" } th { "rows" } } }
                        tbody {
                            @for input in &context.inputs {
                                tr {
                                    td.num { (json_text(&input["file_id"])) }
                                    td { (json_text(&input["kind"])) }
                                    td { code { (redact(&json_text(&input["path"]))) } }
                                    td { code.sha { (json_text(&input["sha256"])) } }
                                    td.num { (json_text(&input["rows"])) }
                                }
                            }
                        }
                    }
                    nav {
                        h2 { "Sections" }
                        ol {
                            @for (i, t) in tables.iter().enumerate() {
                                li { a href={ "#r-" (i) "-" (t.report) } { (t.report) } " — " (t.about) }
                            }
                            @if !drills.is_empty() { li { a href="#drill-downs" { "drill-downs" } } }
                            @if !failing_views.is_empty() { li { a href="#loss-masks" { "loss masks of views failing a contract check" } } }
                        }
                    }
                }
                main {
                    @for s in &sections { (s) }
                    @if !drills.is_empty() {
                        section id="drill-downs" {
                            h2 { "Drill-downs" }
                            p { "The ids behind the linked counts above, each list from a stamped view. "
                                "Examples of a sealed test window are counted in the reports but never listed; "
                                "no content, names or e-mails are shown." }
                            @for d in &drills { (drill_section(d, opts)) }
                        }
                    }
                    @if !failing_views.is_empty() { (mask_section(conn, &failing_views, opts)?) }
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    Ok(page.into_string())
}

/// The stamp block shared by report and drill-down sections: the SAME fields the CSV and
/// JSON carry ([`super::Stamp`], [`stamp`]).
fn stamp_block(t: &ReportTable) -> Markup {
    let st = t.stamp.as_ref().expect("stamped");
    let corpus_version = match (&st.filter, t.columns.iter().position(|c| c == "version")) {
        (Some(f), _) => f.clone(),
        (None, Some(i)) => {
            let vs: BTreeSet<String> = t.rows.iter().map(|r| super::text(&r[i])).collect();
            format!("every version in the rows: {}", vs.into_iter().collect::<Vec<_>>().join(", "))
        }
        (None, None) => "not versioned (the view has no corpus version column)".to_string(),
    };
    html! {
        table.stamp data-view=(st.name) data-sha256=(st.sha256) {
            tr { th { (st.kind.as_str()) } td { code.view-name { (st.name) } } }
            tr { th { "sha256" } td { code.sha { (st.sha256) } } }
            tr { th { "corpus version" } td { (corpus_version) } }
            @if let Some(a) = &st.arguments { tr { th { "arguments" } td { code { (a) } } } }
            tr { th { "query" } td { code { (st.query) } } }
            tr { th { "stamp" } td { code { (stamp(t)) } } }
        }
    }
}

type AnchorFn<'a> = dyn Fn(&[String], &[Cell], usize) -> Option<String> + 'a;

fn section(id: &str, t: &ReportTable, figure: Option<String>, opts: &HtmlOptions, anchor: &AnchorFn) -> Markup {
    let shown = t.rows.len().min(opts.max_rows);
    let kind = t.stamp.as_ref().map_or(SqlKind::View, |s| s.kind);
    html! {
        section.report id=(id) {
            h2 { (t.report) }
            p.about { (t.about) }
            (stamp_block(t))
            @if let Some(svg) = figure { figure.chart { (PreEscaped(svg)) } }
            @if t.rows.is_empty() {
                p.empty { "No rows: the " (kind.as_str()) " returned none on this database (nothing of that kind is loaded, or nothing matched)." }
            } @else {
                @if shown < t.rows.len() {
                    p.cap { "Showing the first " (shown) " of " (t.rows.len()) " rows; all of them: "
                        code { "sphragis report " (t.report) " --format csv" } "." }
                }
                (data_table(t, shown, anchor))
            }
        }
    }
}

fn data_table(t: &ReportTable, shown: usize, anchor: &AnchorFn) -> Markup {
    html! {
        div.scroll {
            table.data.sortable {
                thead { tr { @for c in &t.columns { th { (c) } } } }
                tbody {
                    @for row in t.rows.iter().take(shown) {
                        tr {
                            @for (k, cell) in row.iter().enumerate() {
                                @let body = cell_text(cell);
                                @let link = anchor(&t.columns, row, k).filter(|_| !matches!(cell, Cell::Int(0) | Cell::UInt(0)));
                                @if matches!(cell, Cell::Int(_) | Cell::UInt(_) | Cell::Float(_)) {
                                    td.num data-sort=(super::text(cell)) {
                                        @if let Some(a) = link { a.drill href={ "#" (a) } { (body) } } @else { (body) }
                                    }
                                } @else {
                                    td { (body) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn drill_section(d: &DrillRendered, opts: &HtmlOptions) -> Markup {
    html! {
        section.drill id={ "drill-" (d.drill.report.name) } {
            h3 { (d.drill.report.name) }
            p.about { (d.drill.report.about) }
            (stamp_block(&d.table))
            @if d.groups.is_empty() { p.empty { "No rows: nothing to list." } }
            @for (key, (anchor, ids)) in &d.groups {
                div.group id=(anchor) {
                    h4 {
                        @for (i, k) in d.drill.keys.iter().enumerate() {
                            @if i > 0 { ", " }
                            (k) " = " code { (key[i]) }
                        }
                        " — " (ids.len()) " " (d.drill.id_column) "s"
                        @if ids.len() > opts.max_ids { " (the first " (opts.max_ids) " shown)" }
                    }
                    ul.ids { @for id in ids.iter().take(opts.max_ids) { li { code { (redact(id)) } } } }
                }
            }
        }
    }
}

/// The loss-mask section: one entry per view failing a contract check (capped).
fn mask_section(conn: &Connection, views: &[String], opts: &HtmlOptions) -> Result<Markup> {
    let shown = views.len().min(opts.max_mask_views);
    let mut entries = Vec::new();
    for (i, view_id) in views.iter().take(shown).enumerate() {
        entries.push((format!("mask-{i}"), view_id, mask_fragment(conn, view_id)?));
    }
    Ok(html! {
        section id="loss-masks" {
            h2 { "Loss masks of views failing a contract check" }
            p { (views.len()) " views fail a check (sft_contract_failures_v1)"
                @if shown < views.len() { "; the first " (shown) " are shown" } "." }
            @for (anchor, view_id, fragment) in &entries {
                div.mask id=(anchor) { h3 { "view " code { (view_id) } } (fragment) }
            }
        }
    })
}

/// The loss-mask fragment of one SFT view, from the loss-mask viewer
/// ([`crate::show::mask_view_html`]): token ids coloured by mask with message spans and
/// the first offending position highlighted (the report has no tokenizer file to decode
/// with; `sphragis show view ID --tokenizer FILE` shows the text).
fn mask_fragment(conn: &Connection, view_id: &str) -> Result<Markup> {
    let opts = crate::show::MaskOptions { tokenizer: None, ids_when_no_tokenizer: true };
    Ok(PreEscaped(crate::show::mask_view_html(conn, view_id, &opts)?))
}

fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Null => "NULL".to_string(),
        Cell::Float(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.1}"),
        Cell::Float(v) => format!("{v:.4}"),
        Cell::Text(s) => redact(s).into_owned(),
        other => redact(&super::text(other)).into_owned(),
    }
}

static EMAIL: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}").expect("e-mail pattern")
});

/// `text` with every e-mail-like string replaced by `[e-mail removed]` (SPEC §1.7).
pub fn redact(text: &str) -> std::borrow::Cow<'_, str> {
    EMAIL.replace_all(text, "[e-mail removed]")
}

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// charts

/// Series colours (a colour-blind-safe qualitative set, Okabe & Ito 2008).
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
    RGBColor(204, 121, 167),
    RGBColor(240, 228, 66),
    RGBColor(100, 100, 100),
];

fn plot_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("chart: {e}")
}

/// A bar chart over categories: one bar per series and category (grouped), or the
/// series stacked; optional intervals on the first series and a horizontal reference.
struct Bars {
    title: String,
    y_desc: String,
    categories: Vec<String>,
    series: Vec<(String, Vec<f64>)>,
    stacked: bool,
    /// (low, high) per category, drawn over the first series' bars.
    intervals: Option<Vec<(f64, f64)>>,
    /// A horizontal line: label and value.
    reference: Option<(String, f64)>,
    /// Fixed top of the y axis (e.g. 1 for shares).
    y_max: Option<f64>,
}

fn draw_bars(b: &Bars) -> Result<String> {
    // Horizontal bars: categories down the y axis, first at the top, their labels
    // horizontal and readable however many there are; values along x.
    let n = b.categories.len();
    let groups = if b.stacked { 1 } else { b.series.len().max(1) };
    let height = (110 + n * (12 * groups + 10)).clamp(240, 2400) as u32;
    let longest = b.categories.iter().map(|c| c.chars().count()).max().unwrap_or(1);
    let y_area = (longest * 7 + 16).clamp(40, 300) as u32;
    let top = if b.stacked {
        (0..n).map(|i| b.series.iter().map(|(_, v)| v[i].max(0.0)).sum::<f64>()).fold(0.0, f64::max)
    } else {
        b.series.iter().flat_map(|(_, v)| v.iter().copied()).fold(0.0, f64::max)
    };
    let top = [
        top,
        b.intervals.iter().flatten().map(|iv| iv.1).fold(0.0, f64::max),
        b.reference.as_ref().map_or(0.0, |r| r.1),
    ]
    .into_iter()
    .fold(0.0, f64::max);
    // room on the right for the legend
    let x_max = b.y_max.unwrap_or(if top > 0.0 { top } else { 1.0 }) * 1.4;
    let at = |i: usize| (n - 1 - i) as f64; // category i's centre on the y axis
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (860, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&b.title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(y_area)
            .build_cartesian_2d(0f64..x_max, CategoryAxis { n })
            .map_err(plot_err)?;
        let cats = b.categories.clone();
        let label = move |v: &f64| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                cats[cats.len() - 1 - i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label)
            .y_label_style(("sans-serif", 11))
            .x_desc(b.y_desc.as_str())
            .draw()
            .map_err(plot_err)?;
        let thick = 0.8 / groups as f64;
        let mut lefts = vec![0.0f64; n];
        for (s, (name, values)) in b.series.iter().enumerate() {
            let color = COLORS[s % COLORS.len()];
            let rects: Vec<_> = values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let (x0, y0) =
                        if b.stacked { (lefts[i], at(i) + 0.4) } else { (0.0, at(i) + 0.4 - s as f64 * thick) };
                    let y1 = y0 - if b.stacked { 0.8 } else { thick };
                    Rectangle::new([(x0, y0), (x0 + v.max(0.0), y1)], color.filled())
                })
                .collect();
            if b.stacked {
                for (i, v) in values.iter().enumerate() {
                    lefts[i] += v.max(0.0);
                }
            }
            chart
                .draw_series(rects)
                .map_err(plot_err)?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
        }
        if let Some(intervals) = &b.intervals {
            let mid = |i: usize| if b.stacked { at(i) } else { at(i) + 0.4 - thick / 2.0 };
            chart
                .draw_series(intervals.iter().enumerate().map(|(i, (lo, hi))| {
                    ErrorBar::new_horizontal(mid(i), *lo, (lo + hi) / 2.0, *hi, BLACK.stroke_width(2), 8)
                }))
                .map_err(plot_err)?
                .label("Wilson 95% interval")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], BLACK.stroke_width(2)));
        }
        if let Some((name, x)) = &b.reference {
            let red = RGBColor(200, 0, 0);
            chart
                .draw_series(LineSeries::new(vec![(*x, -0.5), (*x, n as f64 - 0.5)], red.stroke_width(2)))
                .map_err(plot_err)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], red.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// The category axis of a bar chart: categories at 0, 1, …, n-1 on the range -0.5..n-0.5, every
/// category a key point (so each gets its label), fewer when plotters asks for fewer.
struct CategoryAxis {
    n: usize,
}

impl plotters::coord::ranged1d::Ranged for CategoryAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.n.max(1) as f64;
        let t = (value + 0.5) / span;
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let most = hint.max_num_points().max(1);
        let step = self.n.div_ceil(most).max(1);
        (0..self.n).step_by(step).map(|i| i as f64).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        -0.5..(self.n as f64 - 0.5)
    }
}

/// A line chart of (x, y) series with markers, and vertical reference lines.
struct Lines {
    title: String,
    x_desc: String,
    y_desc: String,
    series: Vec<(String, Vec<(f64, f64)>)>,
    vlines: Vec<(String, f64)>,
    y_max: Option<f64>,
}

fn draw_lines(l: &Lines) -> Result<String> {
    let xs = l.series.iter().flat_map(|(_, p)| p.iter().map(|p| p.0)).chain(l.vlines.iter().map(|v| v.1));
    let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (x_min, x_max) = if x_min < x_max { (x_min, x_max) } else { (x_min - 1.0, x_min + 1.0) };
    let pad = (x_max - x_min) * 0.04;
    let top = l.series.iter().flat_map(|(_, p)| p.iter().map(|p| p.1)).fold(0.0, f64::max);
    let y_max = l.y_max.unwrap_or(if top > 0.0 { top * 1.15 } else { 1.0 });
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 380)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&l.title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(72)
            .build_cartesian_2d((x_min - pad)..(x_max + pad), 0f64..y_max)
            .map_err(plot_err)?;
        chart.configure_mesh().x_desc(l.x_desc.as_str()).y_desc(l.y_desc.as_str()).draw().map_err(plot_err)?;
        for (s, (name, points)) in l.series.iter().enumerate() {
            let color = COLORS[s % COLORS.len()];
            chart
                .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
                .map_err(plot_err)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], color.stroke_width(2)));
            chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(plot_err)?;
        }
        for (v, (name, x)) in l.vlines.iter().enumerate() {
            let color = COLORS[(l.series.len() + v) % COLORS.len()];
            chart
                .draw_series(LineSeries::new(vec![(*x, 0.0), (*x, y_max)], color.stroke_width(2)))
                .map_err(plot_err)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Column access on one table for chart building.
struct Rows<'a>(&'a ReportTable);

impl Rows<'_> {
    fn col(&self, name: &str) -> Result<usize> {
        self.0.columns.iter().position(|c| c == name).ok_or_else(|| anyhow!("{} has no column {name}", self.0.report))
    }
    /// The number in `name` per row (NULL → 0).
    fn nums(&self, name: &str) -> Result<Vec<f64>> {
        let i = self.col(name)?;
        Ok(self.0.rows.iter().map(|r| num(&r[i])).collect())
    }
    /// Row labels joined from `names` (e.g. `v3 openstack`).
    fn labels(&self, names: &[&str]) -> Result<Vec<String>> {
        let idx: Vec<usize> = names.iter().map(|n| self.col(n)).collect::<Result<_>>()?;
        Ok(self.0.rows.iter().map(|r| idx.iter().map(|&i| super::text(&r[i])).collect::<Vec<_>>().join(" ")).collect())
    }
    fn filtered(&self, keep: impl Fn(&[Cell]) -> bool) -> ReportTable {
        ReportTable { rows: self.0.rows.iter().filter(|r| keep(r)).cloned().collect(), ..self.0.clone() }
    }
}

fn num(c: &Cell) -> f64 {
    match c {
        Cell::Int(v) => *v as f64,
        Cell::UInt(v) => *v as f64,
        Cell::Float(v) if v.is_finite() => *v,
        _ => 0.0,
    }
}

fn bars(
    t: &ReportTable,
    title: &str,
    y_desc: &str,
    label_cols: &[&str],
    series: &[(&str, &str)],
    stacked: bool,
) -> Result<Bars> {
    let r = Rows(t);
    Ok(Bars {
        title: title.to_string(),
        y_desc: y_desc.to_string(),
        categories: r.labels(label_cols)?,
        series: series.iter().map(|(col, name)| Ok((name.to_string(), r.nums(col)?))).collect::<Result<_>>()?,
        stacked,
        intervals: None,
        reference: None,
        y_max: None,
    })
}

/// The chart of one report table as inline SVG, or `None` when the view has no chart or
/// no rows. Each chart reads the rows of `t` (its own stamped view); the context-length
/// histogram also reads `sft_instances_v1` (per-instance lengths) when that table is in
/// `all`, and says so in its title.
pub fn chart(t: &ReportTable, all: &[ReportTable]) -> Result<Option<String>> {
    let Some(st) = &t.stamp else { return Ok(None) };
    if t.rows.is_empty() {
        return Ok(None);
    }
    let r = Rows(t);
    let svg = match st.name.as_str() {
        "refine_removals_v1" => {
            let org = r.col("org")?;
            let t = r.filtered(|row| super::text(&row[org]) != "(all)");
            let reasons = ["service_account", "rebase_successor", "suggested_edit", "applied_fix", "duplicate"];
            let cols: Vec<(String, &str)> = reasons.iter().map(|x| (format!("removed_{x}"), *x)).collect();
            let series: Vec<(&str, &str)> = cols.iter().map(|(c, n)| (c.as_str(), *n)).collect();
            draw_bars(&bars(
                &t,
                "Removals by reason per org (first removing rule)",
                "examples",
                &["version", "org"],
                &series,
                true,
            )?)?
        }
        "suggested_edit_share_v1" => {
            let mut b = bars(
                t,
                "Suggested-edit share per window, beside the training window's share",
                "share of built examples",
                &["version", "org", "window_name"],
                &[("share", "share in the window"), ("training_share", "training window share (reference)")],
                false,
            )?;
            b.y_max = Some(1.0);
            draw_bars(&b)?
        }
        "fence_agreement_v1" | "fence_agreement_v2" => draw_bars(&bars(
            t,
            "Fence selectors: strict rule vs Gerrit substring vs loose pattern",
            "examples selected",
            &["version", "org"],
            &[("strict", "strict"), ("gerrit_substring", "gerrit_substring"), ("loose", "loose")],
            false,
        )?)?,
        "split_counts_v1" => draw_bars(&bars(
            t,
            "Kept examples per split",
            "examples",
            &["version", "org", "split"],
            &[("examples", "examples")],
            false,
        )?)?,
        "half_suffix_mix_v1" => {
            // one stacked bar per (version, org, half), one series per suffix
            let (v, o, h, s, share) =
                (r.col("version")?, r.col("org")?, r.col("half")?, r.col("suffix")?, r.col("share")?);
            let mut cats: Vec<String> = Vec::new();
            let mut suffixes: BTreeSet<String> = BTreeSet::new();
            let mut values: BTreeMap<(String, String), f64> = BTreeMap::new();
            for row in &t.rows {
                let cat = format!("{} {} half {}", super::text(&row[v]), super::text(&row[o]), super::text(&row[h]));
                if !cats.contains(&cat) {
                    cats.push(cat.clone());
                }
                let suffix = match super::text(&row[s]) {
                    x if x.is_empty() => "(none)".to_string(),
                    x => x,
                };
                suffixes.insert(suffix.clone());
                *values.entry((cat, suffix)).or_default() += num(&row[share]);
            }
            let series = suffixes
                .iter()
                .map(|x| {
                    (
                        x.clone(),
                        cats.iter().map(|c| values.get(&(c.clone(), x.clone())).copied().unwrap_or(0.0)).collect(),
                    )
                })
                .collect();
            draw_bars(&Bars {
                title: "Suffix mix of each registered half's training rows".into(),
                y_desc: "share of the half's training rows".into(),
                categories: cats,
                series,
                stacked: true,
                intervals: None,
                reference: None,
                y_max: Some(1.0),
            })?
        }
        "split_criteria_v1" => {
            let tv = r.col("language_mix_ceiling")?;
            let org = r.col("org")?;
            let note: Vec<String> = t
                .rows
                .iter()
                .map(|row| match &row[tv] {
                    Cell::Float(x) => format!("{} {:.3}", super::text(&row[org]), x),
                    _ => format!("{} n/a", super::text(&row[org])),
                })
                .collect();
            draw_bars(&bars(
                t,
                &format!("Training rows per registered half (TV distance: {})", note.join(", ")),
                "training rows",
                &["version", "org"],
                &[("train_a", "half a"), ("train_b", "half b"), ("size_floor", "size floor")],
                false,
            )?)?
        }
        "label_audit_v1" => {
            let mut b = bars(
                t,
                "Label audit: valid share per rater (Wilson 95% interval)",
                "valid share",
                &["version", "rater", "scope"],
                &[("share", "valid share")],
                false,
            )?;
            let (lo, hi) = (r.nums("wilson_low")?, r.nums("wilson_high")?);
            b.intervals = Some(lo.into_iter().zip(hi).collect());
            b.y_max = Some(1.0);
            draw_bars(&b)?
        }
        "sft_contract_summary_v1" => draw_bars(&bars(
            t,
            "Contract checks: pass / fail per pool and check",
            "views",
            &["pool", "check_name"],
            &[("passed", "passed"), ("failed", "failed"), ("not_checked", "not checked")],
            true,
        )?)?,
        "sft_dedup_v1" => draw_bars(&bars(
            t,
            "Exposure before and after dedup",
            "supervised positions",
            &["mode"],
            &[("exposure", "exposure"), ("unique_positions", "unique positions")],
            false,
        )?)?,
        "sft_recovery_exposure_v1" => {
            let mut b = bars(
                t,
                "Recovery-region share of exposure, before and after dedup",
                "share of exposure",
                &["mode"],
                &[("region_share", "region share")],
                false,
            )?;
            b.y_max = Some(1.0);
            draw_bars(&b)?
        }
        "sft_membership_v1" => {
            let mut b = bars(
                t,
                "Labelled pools: share among training views before and after union dedup",
                "share",
                &["pool"],
                &[("share_before", "before"), ("share_after", "after")],
                false,
            )?;
            b.y_max = Some(1.0);
            draw_bars(&b)?
        }
        "sft_supervised_tools_v1" => {
            let mut b = bars(
                t,
                "Supervised tool calls by class",
                "share of supervised calls",
                &["tool"],
                &[("share", "share")],
                false,
            )?;
            b.y_max = Some(1.0);
            draw_bars(&b)?
        }
        "sft_thinking_v1" | "sft_thinking_v2" => draw_bars(&bars(
            t,
            "Thinking bodies: re-tokenized length per source",
            "tokens",
            &["source"],
            &[("tokens_p50", "P50"), ("tokens_p90", "P90"), ("tokens_max", "max")],
            false,
        )?)?,
        "sft_recovery_concentration_v1" => {
            let points = r.nums("k")?.into_iter().zip(r.nums("share")?).collect();
            draw_lines(&Lines {
                title: "Recovery pool: share of supervised tokens in its k longest views".into(),
                x_desc: "k (longest views)".into(),
                y_desc: "share of supervised tokens".into(),
                series: vec![("share".into(), points)],
                vlines: vec![],
                y_max: Some(1.0),
            })?
        }
        "sft_weight_projection_v1" | "sft_weight_projection_at_v1" => {
            let w = r.nums("weight")?;
            draw_lines(&Lines {
                title: "Weight projection: total(w) = U + w|R| and region(w)".into(),
                x_desc: "recovery weight w".into(),
                y_desc: "weighted supervised positions".into(),
                series: vec![
                    ("total".into(), w.iter().copied().zip(r.nums("total")?).collect()),
                    ("region".into(), w.iter().copied().zip(r.nums("region")?).collect()),
                ],
                vlines: vec![],
                y_max: None,
            })?
        }
        "sft_context_lengths_v1" => return context_histogram(t, all),
        "eval_runs_v1" => {
            let mut b = bars(
                t,
                "Evaluation runs side by side: resolve rate (Wilson 95% interval)",
                "resolve rate",
                &["run"],
                &[("resolve_rate", "resolve rate")],
                false,
            )?;
            let (lo, hi) = (r.nums("wilson_low")?, r.nums("wilson_high")?);
            b.intervals = Some(lo.into_iter().zip(hi).collect());
            b.y_max = Some(1.0);
            draw_bars(&b)?
        }
        _ => return Ok(None),
    };
    Ok(Some(svg))
}

/// The context-length histogram: per-instance lengths from `sft_instances_v1.tokens` (the
/// instance's longest view, the same lengths `sft_context_lengths_v1` summarises), binned
/// in 16 equal bins, with the P50 / P90 of `t` and the 32,768-token line. Without the
/// instances table in the report, P50 / P90 / max as bars beside the 32,768 line.
fn context_histogram(t: &ReportTable, all: &[ReportTable]) -> Result<Option<String>> {
    let r = Rows(t);
    let (p50, p90) = (r.nums("p50")?[0], r.nums("p90")?[0]);
    let instances =
        all.iter().find(|x| x.stamp.as_ref().is_some_and(|s| s.name == "sft_instances_v1") && !x.rows.is_empty());
    let Some(instances) = instances else {
        let mut b = bars(
            t,
            "Context length per instance: P50, P90, max",
            "tokens",
            &[],
            &[("p50", "P50"), ("p90", "P90"), ("max", "max")],
            false,
        )?;
        b.categories = vec!["instances".into()];
        b.reference = Some(("32,768 tokens".into(), 32768.0));
        return Ok(Some(draw_bars(&b)?));
    };
    let lengths = Rows(instances).nums("tokens")?;
    let max = lengths.iter().copied().fold(0.0, f64::max).max(32768.0);
    let bins = 16usize;
    let step = (max / bins as f64).ceil().max(1.0);
    let mut counts = vec![0.0; bins];
    for l in &lengths {
        counts[((l / step) as usize).min(bins - 1)] += 1.0;
    }
    // a histogram is a line over bin edges here: (bin start, count) steps
    let mut points = Vec::new();
    for (i, c) in counts.iter().enumerate() {
        points.push((i as f64 * step, *c));
        points.push(((i + 1) as f64 * step, *c));
    }
    Ok(Some(draw_lines(&Lines {
        title: format!("Context length per instance ({} instances; sft_instances_v1.tokens)", lengths.len()),
        x_desc: "tokens (longest view of the instance)".into(),
        y_desc: "instances per bin".into(),
        series: vec![("instances".into(), points)],
        vlines: vec![(format!("P50 {p50:.0}"), p50), (format!("P90 {p90:.0}"), p90), ("32,768".into(), 32768.0)],
        y_max: None,
    })?))
}

const CSS: &str = "
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1500px;padding:0 16px;color:#222}
h1{margin-top:16px}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.stamp{margin:6px 0 10px}table.stamp th{width:9em}
code.sha{font-size:11px}
.scroll{overflow-x:auto;max-height:520px;overflow-y:auto}
figure.chart{margin:8px 0;overflow-x:auto}
p.about{color:#444;margin:4px 0}p.empty,p.cap{font-style:italic;color:#666}
a.drill{font-weight:bold}
ul.ids{columns:4 14em;font-size:12px}
div.group:target{background:#fff6d5}
table.sortable th{cursor:pointer}
";

const SCRIPT: &str = "
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('thead th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var b=t.tBodies[0],rows=Array.from(b.rows),asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
      rows.sort(function(x,y){
        var a=x.cells[i],c=y.cells[i],p=a.dataset.sort,q=c.dataset.sort;
        var r=(p!==undefined&&q!==undefined)?(parseFloat(p)-parseFloat(q)):a.textContent.localeCompare(c.textContent);
        return asc?r:-r;});
      rows.forEach(function(r){b.appendChild(r);});
    });
  });
});
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_removes_email_like_strings() {
        assert_eq!(redact("by jane.doe+x@example.org today"), "by [e-mail removed] today");
        assert_eq!(redact("no at here: a@b"), "no at here: a@b");
    }

    #[test]
    fn bars_draw_marks_without_system_fonts() {
        let svg = draw_bars(&Bars {
            title: "t <&>".into(),
            y_desc: "n".into(),
            categories: vec!["a".into(), "b".into()],
            series: vec![("s".into(), vec![1.0, 2.0])],
            stacked: false,
            intervals: Some(vec![(0.5, 1.5), (1.0, 3.0)]),
            reference: Some(("ref".into(), 1.5)),
            y_max: None,
        })
        .unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("t &lt;&amp;&gt;"));
        // background + 2 bars + legend swatch
        assert!(svg.matches("<rect").count() >= 4, "{svg}");
    }
}
