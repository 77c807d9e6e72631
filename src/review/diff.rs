//! `diff`: what changed between two corpus versions (issue 10), from the table macros
//! `version_diff_at_v1` (per org: removed, resurrected, added, dropped, moved between splits
//! and halves, with a reconciliation check) and `example_moves_at_v1` (per example that
//! moved). The tables are stamped with the macro and its arguments, so a stock DuckDB
//! client re-runs the stamp's query and gets the same rows.
//!
//! [`diff_files`] compares a version of one database file with a version of another
//! (made from other inputs): both files' verdicts are copied into a scratch in-memory
//! database under the names `this:<A>` and `other:<B>`, and the same macros run there.

use crate::db::views;
use crate::report::{ReportTable, Stamp, query, sql_literal};
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use std::path::Path;

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
        ("example_moves_at_v1", format!("examples whose verdict, split or half differs from {a} to {b}"))
    } else {
        ("version_diff_at_v1", format!("per org, {a} -> {b}: removed, resurrected, added, dropped, moved; reconciles"))
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

/// Compares version `a` of the database file `this` with version `b` of the file `other`
/// (same example ids across files are the same example). Both files are checked to have
/// this sphragis's schema and are read only; their versions, verdicts and splits are
/// copied into a scratch in-memory database as `this:<a>` and `other:<b>`, where
/// [`diff`] runs. The stamp's query therefore names those prefixed versions: a stock
/// client reproduces it after the same copy, not on either file alone.
///
/// Errors: a file that is missing or not a sphragis database of this schema; a version
/// missing from its file; a SQL failure.
pub fn diff_files(this: &Path, a: &str, other: &Path, b: &str, per_example: bool) -> Result<ReportTable> {
    let scratch = crate::db::open(Path::new(":memory:"))?;
    for (alias, path, version, prefix) in [("sph_this", this, a, "this"), ("sph_other", other, b, "other")] {
        // the same checks a read-only open makes (schema and views are this binary's)
        drop(crate::db::open_read_only(path)?);
        let text = path.to_str().with_context(|| format!("{}: the path is not UTF-8", path.display()))?;
        scratch.execute_batch(&format!("attach {} as {alias} (read_only)", sql_literal(text)))?;
        let known: i64 = scratch.query_row(
            &format!("select count(*) from {alias}.corpus_versions where version = ?"),
            [version],
            |r| r.get(0),
        )?;
        if known == 0 {
            bail!("{}: version {version} does not exist in this file", path.display());
        }
        let renamed = |table: &str, extra: &str| {
            format!(
                "insert into {table} select * replace ({} || version as version{extra}) from {alias}.{table} where version = ?",
                sql_literal(&format!("{prefix}:"))
            )
        };
        scratch.execute(&renamed("corpus_versions", ", null::varchar as base_version"), [version])?;
        scratch.execute(&renamed("refine_examples", ""), [version])?;
        scratch.execute(&renamed("review_splits", ""), [version])?;
        scratch.execute_batch(&format!("detach {alias}"))?;
    }
    let mut table = diff(&scratch, &format!("this:{a}"), &format!("other:{b}"), per_example)?;
    table.about = format!("{}; this:{a} = {a} of {}, other:{b} = {b} of {}", table.about, this.display(), other.display());
    Ok(table)
}
