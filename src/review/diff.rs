//! `diff`: what changed between two corpus versions (issue 10), from the table macros
//! `version_diff_v1` (per org: removed, resurrected, added, dropped, moved between splits
//! and halves, with a reconciliation check) and `example_moves_v1` (per example that
//! moved). The tables are stamped with the macro and its arguments, so a stock DuckDB
//! client re-runs the stamp's query and gets the same rows.

use crate::db::views;
use crate::report::{ReportTable, Stamp, query, sql_literal};
use anyhow::{Context, Result, bail};
use duckdb::Connection;

/// Compares version `a` (from) with version `b` (to): per org with `per_example` false,
/// per moved example with it true.
///
/// Errors: a version that does not exist, `a` equal to `b`, or a SQL failure.
pub fn diff(conn: &Connection, a: &str, b: &str, per_example: bool) -> Result<ReportTable> {
    if a == b {
        bail!("diff needs two different versions (both are {a})");
    }
    for v in [a, b] {
        let known: i64 = conn.query_row("select count(*) from corpus_versions where version = ?", [v], |r| r.get(0))?;
        if known == 0 {
            bail!("version {v} does not exist; `sphragis sql \"select version from corpus_versions\"` lists them");
        }
    }
    let (name, about) = if per_example {
        ("example_moves_v1", format!("examples whose verdict, split or half differs from {a} to {b}"))
    } else {
        ("version_diff_v1", format!("per org, {a} -> {b}: removed, resurrected, added, dropped, moved; reconciles"))
    };
    let file = views::find(name).with_context(|| format!("{name} is not registered"))?;
    let arguments = format!("{}, {}", sql_literal(a), sql_literal(b));
    let sql = format!("select * from {name}({arguments}) order by all");
    let table = query(conn, &sql, &[])?;
    Ok(ReportTable {
        report: "diff".into(),
        about,
        stamp: Some(Stamp { kind: file.kind, name: name.into(), sha256: file.sha256(), arguments: Some(arguments), filter: None, query: sql }),
        ..table
    })
}
