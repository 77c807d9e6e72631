//! `diff`: what changed between two corpus versions (issue 10), from the table macros
//! `version_diff_at_v2` (per org: removed, resurrected, added, dropped, moved between splits
//! and halves, with a reconciliation check) and `example_moves_at_v2` (per example that
//! moved). The tables are stamped with the macro and its arguments, so a stock DuckDB
//! client re-runs the stamp's query and gets the same rows.
//!
//! [`diff_reports`] compares the report views themselves: per version-scoped report, the
//! figures that differ between the two versions, old and new side by side, from the
//! table macro `report_diff_at_v1` keyed on each view's declared grain key.
//!
//! [`diff_files`] compares a version of one database file with a version of another
//! (made from other inputs): both files' verdicts are copied into a scratch in-memory
//! database under the names `this:<A>` and `other:<B>`, and the same macros run there.

use crate::db::views;
use crate::report::{REPORTS, Report, ReportTable, Stamp, sql_literal};
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use std::path::Path;

/// Compares version `a` (from) with version `b` (to): per org with `per_example` false,
/// per moved example with it true.
///
/// Errors: a version that does not exist, `a` equal to `b`, or a SQL failure.
pub fn diff(conn: &Connection, a: &str, b: &str, per_example: bool) -> Result<ReportTable> {
    check_versions(conn, a, b)?;
    let (name, about) = if per_example {
        ("example_moves_at_v2", format!("examples whose verdict, split or half differs from {a} to {b}"))
    } else {
        ("version_diff_at_v2", format!("per org, {a} -> {b}: removed, resurrected, added, dropped, moved; reconciles"))
    };
    let arguments = format!("{}, {}", sql_literal(a), sql_literal(b));
    run_macro(conn, name, arguments, "diff".into(), about)
}

/// Runs table macro `name` with `arguments` (SQL literals in parameter order), rows
/// ordered by all columns, stamped with the macro, its SHA-256 and those arguments.
///
/// Errors: `name` is not a registered view file, or DuckDB rejects the call.
fn run_macro(conn: &Connection, name: &str, arguments: String, report: String, about: String) -> Result<ReportTable> {
    let file = views::find(name).with_context(|| format!("{name} is not registered"))?;
    let sql = format!("select * from {name}({arguments}) order by all");
    let table = crate::table::query_planned_once(conn, &sql)?;
    Ok(ReportTable {
        report,
        about,
        stamp: Some(Stamp {
            kind: file.kind,
            name: name.into(),
            sha256: file.sha256(),
            arguments: Some(arguments),
            filter: None,
            query: sql,
        }),
        ..table
    })
}

/// The version-scoped reports (`by_version`) that `--reports` compares, in `report all`
/// order, when `names` is empty or `["all"]`; otherwise the named ones.
///
/// Errors: an unknown report name, or a named report without a `version` column (the
/// message lists the ones that have one).
pub fn reports_to_compare(names: &[String]) -> Result<Vec<&'static Report>> {
    let comparable: Vec<&'static Report> = REPORTS.iter().filter(|r| r.by_version).collect();
    if names.is_empty() || names.iter().any(|n| n == "all") {
        return Ok(comparable);
    }
    let known = || comparable.iter().map(|r| r.name).collect::<Vec<_>>().join(", ");
    names
        .iter()
        .map(|name| match REPORTS.iter().find(|r| r.name == name) {
            Some(report) if report.by_version => Ok(report),
            Some(_) => bail!("report {name} has no corpus version to compare; --reports takes: all, {}", known()),
            None => bail!("unknown report {name:?}; --reports takes: all, {}", known()),
        })
        .collect()
}

/// Per report in `reports`: the figures of its view that differ from version `a` to
/// version `b` (one row per differing (row, figure), `change` = changed / only in A /
/// only in B), from `report_diff_at_v1(view, grain key without version, a, b)`. Each
/// table is stamped with the macro and those arguments; a report whose figures agree
/// has no rows (and says so when printed).
///
/// Errors: a version that does not exist, `a` equal to `b`, a view without a declared
/// grain key (a defect: tests/grain.rs requires one), or a SQL failure.
pub fn diff_reports(conn: &Connection, a: &str, b: &str, reports: &[&Report]) -> Result<Vec<ReportTable>> {
    check_versions(conn, a, b)?;
    let name = "report_diff_at_v1";
    let mut tables = Vec::new();
    for report in reports {
        let view = views::find(report.view).with_context(|| format!("{} is not registered", report.view))?;
        let keys = view.grain_key().with_context(|| format!("{} declares no grain key", report.view))?;
        let keys: Vec<String> = keys.into_iter().filter(|k| *k != "version").map(sql_literal).collect();
        let arguments =
            format!("{}, [{}], {}, {}", sql_literal(report.view), keys.join(", "), sql_literal(a), sql_literal(b));
        let about = format!("{}: figures that differ from {a} to {b}", report.about);
        tables.push(run_macro(conn, name, arguments, format!("diff-{}", report.name), about)?);
    }
    Ok(tables)
}

/// Refuses `a == b` and a version the database does not hold.
fn check_versions(conn: &Connection, a: &str, b: &str) -> Result<()> {
    if a == b {
        bail!("diff needs two different versions (both are {a})");
    }
    for v in [a, b] {
        let known: i64 = conn.query_row("select count(*) from corpus_versions where version = ?", [v], |r| r.get(0))?;
        if known == 0 {
            bail!("version {v} does not exist; `sphragis sql \"select version from corpus_versions\"` lists them");
        }
    }
    Ok(())
}

/// Reports that `diff --against` cannot compare across two files: they read tables that
/// are not per version (review_examples, label_items) or a version's base version, which
/// the scratch copy does not carry. Listed with the reason when `--reports` names them.
pub const NOT_ACROSS_FILES: &[(&str, &str)] = &[
    ("reconciliation", "compares a version with its base version in the same file"),
    ("criteria", "reads the loaded examples (review_examples), which are not per version"),
    ("labels", "reads the loaded label items, which are not per version"),
];

/// `reports` without the ones [`NOT_ACROSS_FILES`] lists, and those left out, each as
/// `name (why)`: what `diff --reports all --against FILE` compares.
pub fn across_files(mut reports: Vec<&'static Report>) -> (Vec<&'static Report>, Vec<String>) {
    let left = NOT_ACROSS_FILES
        .iter()
        .filter(|(name, _)| reports.iter().any(|r| r.name == *name))
        .map(|(name, why)| format!("{name} ({why})"))
        .collect();
    reports.retain(|r| !NOT_ACROSS_FILES.iter().any(|(name, _)| r.name == *name));
    (reports, left)
}

/// Compares version `a` of the database file `this` (open as `this_conn`, read-only) with
/// version `b` of the file `other` (same example ids across files are the same example).
/// `other` is checked to have this sphragis's schema and is read only; both versions'
/// verdicts, comments and splits are copied into a scratch in-memory database as
/// `this:<a>` and `other:<b>`, where [`diff`] runs. The stamp's query therefore names
/// those prefixed versions: a stock client reproduces it after the same copy, not on
/// either file alone.
///
/// Errors: a file that is missing or not a sphragis database of this schema; a version
/// missing from its file; a SQL failure.
pub fn diff_files(
    this_conn: &Connection,
    this: &Path,
    a: &str,
    other: &Path,
    b: &str,
    per_example: bool,
) -> Result<ReportTable> {
    let scratch = scratch_of(this_conn, this, a, other, b)?;
    let mut table = diff(&scratch, &format!("this:{a}"), &format!("other:{b}"), per_example)?;
    table.about =
        format!("{}; this:{a} = {a} of {}, other:{b} = {b} of {}", table.about, this.display(), other.display());
    Ok(table)
}

/// [`diff_reports`] across two files, through the same scratch copy as [`diff_files`].
///
/// Errors: as [`diff_files`]; a report in [`NOT_ACROSS_FILES`] (named with the reason).
pub fn diff_reports_files(
    this_conn: &Connection,
    this: &Path,
    a: &str,
    other: &Path,
    b: &str,
    reports: &[&Report],
) -> Result<Vec<ReportTable>> {
    if let Some((name, why)) = NOT_ACROSS_FILES.iter().find(|(n, _)| reports.iter().any(|r| r.name == *n)) {
        bail!("report {name} cannot be compared across two files: it {why}; leave it out of --reports");
    }
    let scratch = scratch_of(this_conn, this, a, other, b)?;
    let mut tables = diff_reports(&scratch, &format!("this:{a}"), &format!("other:{b}"), reports)?;
    for table in &mut tables {
        table.about =
            format!("{}; this:{a} = {a} of {}, other:{b} = {b} of {}", table.about, this.display(), other.display());
    }
    Ok(tables)
}

/// A scratch in-memory database holding version `a` of `this` (read through `this_conn`)
/// as `this:<a>` and version `b` of `other` as `other:<b>` (corpus_versions without base
/// version, refine_examples, refine_comments, review_splits), copied as Arrow record
/// batches from connections that were checked at their open. `other` is opened read-only
/// beside `this_conn` ([`crate::db::open_read_only_beside`]); when it is `this` itself (a
/// link or another name of it) it is read through `this_conn`: a second open and close of
/// the file would release the lock `this_conn` holds on it.
fn scratch_of(this_conn: &Connection, this: &Path, a: &str, other: &Path, b: &str) -> Result<crate::db::Database> {
    let scratch = crate::db::open(Path::new(":memory:"))?;
    let other_conn = crate::db::open_read_only_beside(other, this)?;
    let sources = [(this_conn, this, a, "this"), (other_conn.as_ref().unwrap_or(this_conn), other, b, "other")];
    for (source, path, version, prefix) in sources {
        let known: i64 =
            source.query_row("select count(*) from corpus_versions where version = ?", [version], |r| r.get(0))?;
        if known == 0 {
            bail!("{}: version {version} does not exist in this file", path.display());
        }
        for (table, extra) in [
            ("corpus_versions", ", null::varchar as base_version"),
            ("refine_examples", ""),
            ("refine_comments", ""),
            ("review_splits", ""),
        ] {
            let sql = format!(
                "select * replace ({} || version as version{extra}) from {table} where version = ?",
                sql_literal(&format!("{prefix}:"))
            );
            let mut rows = source.prepare(&sql)?;
            let mut appender = scratch.appender(table)?;
            for batch in rows.query_arrow([version])? {
                appender.append_record_batch(batch)?;
            }
            appender
                .flush()
                .with_context(|| format!("copying {table} of {} into the scratch database", path.display()))?;
        }
    }
    Ok(scratch)
}
