//! The HTML report: one self-contained, offline HTML file with every chosen report as a
//! stamped section (title, view or macro name, SHA-256, corpus version, arguments), a
//! chart where one helps, the table, and drill-downs from counts to the ids behind them.
//!
//! - Markup is built with `maud`, which escapes every interpolated string; charts are
//!   inline SVG drawn by `plotters` ([`plot`]: the chart shapes; [`charts`]: which view gets
//!   which chart, from the rows of the section's own stamped table).
//! - No network: no external script, style sheet, font or image. CSS is inline; a small
//!   inline script only sorts tables when a header is clicked — tables and charts read the
//!   same without it.
//! - Drill-downs ([`drill`], [`DRILL_DOWNS`]) are registered views run through
//!   [`super::run_with`], so each list of ids carries its own stamp and a stock DuckDB client
//!   reproduces it. They never list sealed-window ids (the views leave them out, SPEC §1.6)
//!   and carry no content (hunk, target, comment text) and no author.
//! - Text cells are shown as the view returns them, except that e-mail-like strings are
//!   replaced by `[e-mail removed]` (SPEC §1.7: names and e-mails never appear in a
//!   report), should a trajectory text a view shows carry one.
//!
//! Sizes are capped: at most [`HtmlOptions::max_rows`] rows per table and
//! [`HtmlOptions::max_ids`] ids per drill-down group, each cap stated where it applies.

pub mod charts;
pub mod drill;
mod plot;

pub use charts::chart;
pub use drill::{DRILL_DOWNS, DrillDown, DrillLink, KeyFrom};

use super::{Cell, ExportContext, ReportTable, stamp};
use crate::db::views::SqlKind;
use anyhow::Result;
use duckdb::Connection;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use std::collections::BTreeSet;
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
    let drills = drill::run_drill_downs(conn, &present, version)?;
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
    // the groups of ids some shown count links to (a drill-down's other groups are left out)
    let mut linked = BTreeSet::new();
    for t in tables {
        let view = t.stamp.as_ref().map_or("", |s| s.name.as_str());
        for row in t.rows.iter().take(opts.max_rows) {
            linked.extend((0..row.len()).filter_map(|k| drill::anchor_of(&drills, view, &t.columns, row, k)));
        }
    }
    let shown_views: BTreeSet<&str> = present
        .iter()
        .copied()
        .chain(drills.iter().filter_map(|d| d.table.stamp.as_ref().map(|s| s.name.as_str())))
        .collect();
    let others = other_views(&shown_views);
    let mut sections = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let figure = match chart(t, tables) {
            Ok(svg) => svg,
            Err(e) => return Err(e.context(format!("chart of {}", t.report))),
        };
        let view = t.stamp.as_ref().map_or("", |s| s.name.as_str());
        sections.push(section(&format!("r-{i}-{}", t.report), t, figure, opts, &|c, r, k| {
            drill::anchor_of(&drills, view, c, r, k)
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
                    (verdict_panel(tables, &crate::check::record::latest_statuses(conn).unwrap_or_default()))
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
                            @if !others.is_empty() { li { a href="#other-views" { "other views" } " — the newest version of every view family no section above shows, with its stamp" } }
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
                            @for d in &drills { (drill::drill_section(d, &linked, opts)) }
                        }
                    }
                    @if !failing_views.is_empty() { (mask_section(conn, &failing_views, opts)?) }
                    @if !others.is_empty() { (other_views_section(&others)) }
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    Ok(page.into_string())
}

/// The verdict first (issue 26): when the tables hold the `checks` report
/// (`check_findings_v1`), its counts per status as badges and every result that is not a
/// pass (failures first) with its figures, reason and drill-down query, each linked to the
/// section of the view the drill-down reads when the report has one, and the status of
/// the latest recorded `check` run gave it (`previous`, by check and scope).
fn verdict_panel(
    tables: &[ReportTable],
    previous: &std::collections::HashMap<(String, String), crate::check::Status>,
) -> Markup {
    let Some((at, t)) =
        tables.iter().enumerate().find(|(_, t)| t.stamp.as_ref().is_some_and(|s| s.name == "check_findings_v1"))
    else {
        return html! {};
    };
    let col = |name: &str| t.columns.iter().position(|c| c == name);
    let (Some(status), Some(check), Some(scope)) = (col("status"), col("check_name"), col("scope")) else {
        return html! {};
    };
    let cell =
        |row: &[Cell], i: Option<usize>| i.map(|i| super::text(&row[i])).filter(|t| !t.is_empty() && t != "NULL");
    let order = ["fail", "warn", "not-run", "info", "pass"];
    let counts: Vec<(&str, usize)> =
        order.iter().map(|o| (*o, t.rows.iter().filter(|r| super::text(&r[status]) == *o).count())).collect();
    let mut shown: Vec<&Vec<Cell>> = t.rows.iter().filter(|r| super::text(&r[status]) != "pass").collect();
    shown.sort_by_key(|r| order.iter().position(|o| *o == super::text(&r[status])).unwrap_or(order.len()));
    // the section of the view a drill-down query reads from, when the report has one
    let section_of = |query: &str| -> Option<String> {
        let from = query.split_once(" from ")?.1.split([' ', '(']).next()?;
        tables
            .iter()
            .enumerate()
            .find(|(_, t)| t.stamp.as_ref().is_some_and(|s| s.name == from))
            .map(|(i, t)| format!("#r-{i}-{}", t.report))
    };
    html! {
        section.verdict id="verdict" {
            h2 { "Verdict" }
            p {
                @for (name, n) in &counts { span class={ "badge " (name) } { (n) " " (name) } " " }
                " — every check of the default suite (" a href={ "#r-" (at) "-" (t.report) } { "checks" } ", view "
                code { "check_findings_v1" } "); " code { "sphragis check" } " exits 4 when one fails."
            }
            @if !shown.is_empty() {
                table.data.verdict {
                    thead { tr { th { "status" } th { "severity" } th { "check" } th { "scope" } th { "failing" } th { "tested" } th { "reason / detail" } th { "last recorded run" } th { "drill-down" } } }
                    tbody {
                        @for r in &shown {
                            @let st = super::text(&r[status]);
                            @let query = cell(r, col("drill_down"));
                            tr {
                                td { span class={ "badge " (st) } { (st) } }
                                td { (cell(r, col("severity")).unwrap_or_default()) }
                                td { code { (super::text(&r[check])) } }
                                td { (super::text(&r[scope])) }
                                td.num { (cell(r, col("failing")).unwrap_or_else(|| "-".into())) }
                                td.num { (cell(r, col("tested")).unwrap_or_else(|| "-".into())) }
                                td { (redact(&[cell(r, col("reason")), cell(r, col("detail"))].into_iter().flatten().collect::<Vec<_>>().join("; "))) }
                                td { (previous.get(&(super::text(&r[check]), super::text(&r[scope]))).map_or("", |p| p.as_str())) }
                                td {
                                    @if let Some(q) = &query {
                                        @if let Some(href) = section_of(q) { a href=(href) { "section" } " " }
                                        code { (q) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
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

/// A view family (`refine_removals`) whose newest version no section or drill-down of the
/// report shows: that version's file, and the older versions it supersedes.
#[derive(Debug, Clone)]
pub struct OtherView {
    /// The newest version's registered file.
    pub newest: &'static crate::db::views::ViewFile,
    /// The names of the family's older versions, oldest first.
    pub older: Vec<&'static str>,
}

/// The view families (registered views and table macros grouped by their name without
/// `_v<N>`) whose newest version is not in `shown` (the views of the report's sections
/// and drill-downs), in registration order (issue 30: every family is either a section
/// or listed with its stamp, none left out in silence).
pub fn other_views(shown: &BTreeSet<&str>) -> Vec<OtherView> {
    use crate::db::views::VIEWS;
    let mut families: Vec<(&str, Vec<&'static crate::db::views::ViewFile>)> = Vec::new();
    for v in VIEWS {
        let base = v.base_and_version().map_or(v.name(), |(b, _)| b);
        match families.iter_mut().find(|(b, _)| *b == base) {
            Some((_, files)) => files.push(v),
            None => families.push((base, vec![v])),
        }
    }
    families
        .into_iter()
        .filter_map(|(_, mut files)| {
            files.sort_by_key(|v| v.base_and_version().map_or(0, |(_, n)| n));
            let newest = files.pop()?;
            (!shown.contains(newest.name()))
                .then(|| OtherView { newest, older: files.iter().map(|v| v.name()).collect() })
        })
        .collect()
}

/// The "other views" section: one row per family [`other_views`] lists, with the stamp of
/// its newest version (kind, name, SHA-256), what its header says it gives, and the query a
/// stock DuckDB client runs to read it.
fn other_views_section(others: &[OtherView]) -> Markup {
    html! {
        section id="other-views" {
            h2 { "Other views" }
            p { "The newest version of every view family that no section above shows: building blocks of the "
                "reports, figures with no report of their own, and newer versions of a view a report still reads. "
                "Each is in the file; read it with " code { "sphragis sql" } " or any DuckDB client. "
                "What each gives, its grain and its columns: docs/views.md." }
            div.scroll {
                table.data.sortable.other-views {
                    thead { tr { th { "kind" } th { "name" } th { "sha256" } th { "gives" } th { "supersedes" } th { "query" } } }
                    tbody {
                        @for o in others {
                            @let v = o.newest;
                            tr data-view=(v.name()) {
                                td { (v.kind.as_str()) }
                                td { code.view-name { (v.name()) } }
                                td { code.sha { (v.sha256()) } }
                                td { (crate::db::catalogue::summary(v).replace("\\|", "|")) }
                                td { (o.older.join(", ")) }
                                td { code { @if let Some((_, names)) = v.macro_parameters() { "select * from " (v.name()) "(" (names.join(", ")) ")" } @else { "select * from " (v.name()) } } }
                            }
                        }
                    }
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
p.about{color:#444;margin:4px 0}.badge{display:inline-block;padding:1px 7px;border-radius:9px;font-weight:600;font-size:90%}.badge.fail{background:#c62828;color:#fff}.badge.warn{background:#f9a825;color:#000}.badge.not-run{background:#9e9e9e;color:#fff}.badge.info{background:#1565c0;color:#fff}.badge.pass{background:#2e7d32;color:#fff}p.empty,p.cap{font-style:italic;color:#666}
a.drill{font-weight:bold}
p.link{margin:14px 0 4px;font-weight:bold}p.query,p.cap{font-size:12px;margin:2px 0}code.query{color:#555}
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
}
