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
mod export;
pub mod html;
mod render;

pub use crate::table::{Cell, ReportTable, Stamp, query, sql_literal};
pub use catalogue::{REPORTS, Report, find};
pub use export::{ExportContext, write_files};
pub use render::{
    CsvStyle, FORMULA_TRIGGERS, Format, json_document, neutralise_formula, render, render_csv, render_json,
    render_table, stamp, text,
};

use crate::db::views;
use anyhow::{Context, Result, bail};
use duckdb::Connection;

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
            Arguments::Budget { .. } => &["sft_budget_at_v2"],
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
        // the macros take DuckDB INTEGERs: a larger count would be DuckDB's binder error
        fn fits(values: &[u32], what: &str) -> Result<()> {
            match values.iter().find(|v| **v > i32::MAX as u32) {
                Some(v) => bail!("{what} {v}: at most {} (the macros take a DuckDB INTEGER)", i32::MAX),
                None => Ok(()),
            }
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
                fits(grad_accums, "grad-accum")?;
                fits(step_counts, "steps")?;
                Ok(format!("{}, {}", list(grad_accums, "grad_accum")?, list(step_counts, "steps")?))
            }
            Arguments::Truncation { max_lengths, side } => {
                if max_lengths.contains(&0) {
                    bail!("maximum lengths must be 1 or more tokens");
                }
                fits(max_lengths, "max-length")?;
                Ok(format!("{}, {}", list(max_lengths, "max-length")?, sql_literal(side.as_str())))
            }
            Arguments::Bootstrap { resamples, seed } => {
                if *resamples == 0 {
                    bail!("resamples must be 1 or more");
                }
                fits(&[*resamples], "resamples")?;
                fits(&[*seed], "seed")?;
                Ok(format!("{resamples}, {seed}"))
            }
        }
    }
}

/// Runs `report` on its view, optionally keeping only rows of corpus `version`.
/// See [`run_with`].
pub fn run(conn: &Connection, report: &Report, version: Option<&str>) -> Result<ReportTable> {
    run_with(conn, report, version, None)
}

/// Runs each of `reports` as [`run_with`] does (with `arguments_of(report)`) and returns
/// their tables in the order given. The reports run on worker connections
/// ([`crate::db::on_workers`]): a report over a small corpus is mostly DuckDB binding and
/// planning its view, which is single-threaded. The verdict view (`check_findings_v1`)
/// runs on `conn` after its parts were computed among the other reports
/// ([`crate::check::parts`]). Views that two or more of the reports read and whose
/// tables are all empty (an SFT or evaluation corpus never loaded) are computed once on
/// each worker ([`crate::db::empty`]) instead of being planned again by every report. The
/// rows and stamps are those of running the reports one after another.
///
/// Errors: the first report that fails, as [`run_with`]; a connection that cannot be
/// cloned.
pub fn run_many<'a>(
    conn: &Connection,
    reports: &[&Report],
    version: Option<&str>,
    arguments_of: impl Fn(&Report) -> Option<&'a Arguments> + Sync,
) -> Result<Vec<ReportTable>> {
    use crate::check::parts;
    let verdict = |r: &Report| r.view == parts::VERDICT_VIEW && arguments_of(r).is_none();
    let parts: &[&'static str] = if reports.iter().any(|r| verdict(r)) { &parts::PARTS } else { &[] };
    let others: Vec<usize> = (0..reports.len()).filter(|&i| !verdict(reports[i])).collect();
    enum Done {
        Part(Result<parts::Rows>),
        Report(Result<ReportTable>),
    }
    let mut roots: Vec<&str> = parts.to_vec();
    for &i in &others {
        let report = reports[i];
        roots.push(match (arguments_of(report), report.macro_name) {
            (Some(_), Some(macro_name)) => macro_name,
            _ => report.view,
        });
    }
    let computed = crate::db::empty::over_empty_tables(conn, &roots)?;
    let done =
        crate::db::on_workers_reading(conn, parts.len() + others.len(), &computed, |worker, t| match parts.get(t) {
            Some(part) => Done::Part(parts::compute(worker, part)),
            None => {
                let report = reports[others[t - parts.len()]];
                Done::Report(run_with(worker, report, version, arguments_of(report)))
            }
        })?;
    let mut tables: Vec<Option<Result<ReportTable>>> = reports.iter().map(|_| None).collect();
    let mut computed = Vec::new();
    for (t, done) in done.into_iter().enumerate() {
        match done {
            Done::Part(rows) => computed.push((parts[t], rows)),
            Done::Report(table) => tables[others[t - parts.len()]] = Some(table),
        }
    }
    if !parts.is_empty() {
        let shadows = parts::shadow(conn, computed);
        for (table, report) in tables.iter_mut().zip(reports) {
            if verdict(report) {
                *table = Some(run_with(conn, report, version, None).map_err(|e| shadows.explain(e)));
            }
        }
    }
    tables.into_iter().map(|t| t.expect("every report ran")).collect()
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
    let table = crate::table::query_planned_once(conn, &sql)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `report truncation --max-length 2147483648` gave DuckDB's binder error ("Macro
    /// sft_truncation_at_v1() does not support the supplied arguments"): the macros take
    /// INTEGERs (found by a fresh tester). Every count is refused at its option past 2^31 - 1.
    #[test]
    fn count_past_a_duckdb_integer_is_refused_at_its_option() {
        let too_big = i32::MAX as u32 + 1;
        let truncation = Arguments::Truncation { max_lengths: vec![8192, too_big], side: Side::Right };
        assert_eq!(
            truncation.to_sql().unwrap_err().to_string(),
            "max-length 2147483648: at most 2147483647 (the macros take a DuckDB INTEGER)"
        );
        let budget = Arguments::Budget { grad_accums: vec![1], step_counts: vec![too_big] };
        assert!(budget.to_sql().unwrap_err().to_string().starts_with("steps 2147483648: at most"));
        let bootstrap = Arguments::Bootstrap { resamples: 10, seed: too_big };
        assert!(bootstrap.to_sql().unwrap_err().to_string().starts_with("seed 2147483648: at most"));
        let edge = Arguments::Truncation { max_lengths: vec![i32::MAX as u32], side: Side::Left };
        assert_eq!(edge.to_sql().unwrap(), "[2147483647], 'left'");
    }

    #[test]
    fn arguments_become_checked_sql_literals() {
        assert_eq!(Arguments::Weights(vec![0.5, 3.0]).to_sql().unwrap(), "[0.5, 3.0]");
        assert_eq!(Arguments::Weights(vec![1e-7]).to_sql().unwrap(), "[1e-7]");
        let budget = Arguments::Budget { grad_accums: vec![8], step_counts: vec![100, 500] };
        assert_eq!(budget.to_sql().unwrap(), "[8], [100, 500]");
        assert_eq!(budget.macro_names(), ["sft_budget_at_v2"]);
        let truncation = Arguments::Truncation { max_lengths: vec![8192, 32768], side: Side::Left };
        assert_eq!(truncation.to_sql().unwrap(), "[8192, 32768], 'left'");
        assert!(Arguments::Truncation { max_lengths: vec![0], side: Side::Right }.to_sql().is_err());
        assert!(Arguments::Weights(vec![-1.0]).to_sql().is_err());
        assert!(Arguments::Weights(vec![f64::NAN]).to_sql().is_err());
        assert!(Arguments::Weights(vec![]).to_sql().is_err());
        assert!(Arguments::Budget { grad_accums: vec![0], step_counts: vec![1] }.to_sql().is_err());
        assert_eq!(sql_literal("it's"), "'it''s'");
    }
}
