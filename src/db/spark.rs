//! The Spark SQL of every view, generated — not written by hand — and proven.
//!
//! `src/db/spark_views.json` is written by `tests/acceptance/spark_parity.py
//! --generate`: it transpiles each view file from DuckDB to Spark SQL with sqlglot, runs
//! it on a local Spark over a Parquet export of the demo database, and compares the rows
//! with DuckDB's on the same export. A view is recorded as portable only when its rows are
//! equal; otherwise the entry says why (a construct that transpiles silently wrong, a
//! Spark error, rows that differ, or a view it reads that is not portable). A table macro
//! has no Spark counterpart: a view that calls one gets the macro's body inlined with the
//! call's arguments, and the macro's own entry is its body with named parameter markers
//! (`:weights`), proven through such a view. Each entry
//! carries the SHA-256 of the DuckDB SQL it was generated from: a view edited or added
//! since is reported as not checked, never as portable.

use crate::db::views::SqlKind;
use serde::Deserialize;

const GENERATED: &str = include_str!("spark_views.json");

#[derive(Debug, Deserialize)]
struct Generated {
    views: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    name: String,
    duckdb_sha256: String,
    portable: bool,
    reason: Option<String>,
    spark_sql: Option<String>,
}

/// A view's Spark dialect as far as the generated table knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparkSql {
    /// The Spark `select`, when one was generated.
    pub sql: Option<String>,
    /// True only when the parity check found the same rows on Spark as on DuckDB.
    pub portable: bool,
    /// Why the view is not portable (`None` when it is).
    pub reason: Option<String>,
}

/// The Spark SQL of view or table macro `name` whose DuckDB SQL has SHA-256 `sha256`.
///
/// A table macro's Spark SQL is its body with every parameter a named parameter marker
/// (`:grad_accums`), to run with `spark.sql(sql, args={...})` (Spark SQL has no table
/// macros); it is portable when the parity check found a view that calls it equal on
/// Spark, both inlined and through the markers. A view or macro missing from the
/// generated table, or generated from other SQL, is "not checked".
pub fn lookup(name: &str, sha256: &str, kind: SqlKind) -> SparkSql {
    let generated: Generated = match serde_json::from_str(GENERATED) {
        Ok(g) => g,
        Err(e) => return not_checked(format!("the generated Spark table does not parse: {e}")),
    };
    let what = if kind == SqlKind::Macro { "macro" } else { "view" };
    match generated.views.into_iter().find(|e| e.name == name) {
        None => not_checked(format!(
            "no Spark SQL generated for this {what} yet (tests/acceptance/spark_parity.py --generate)"
        )),
        Some(e) if e.duckdb_sha256 != sha256 => not_checked(format!(
            "the Spark SQL was generated from other DuckDB SQL (sha256 {}); regenerate with tests/acceptance/spark_parity.py --generate",
            e.duckdb_sha256
        )),
        Some(e) => SparkSql {
            portable: e.portable && e.spark_sql.is_some(),
            reason: if e.portable { None } else { Some(e.reason.unwrap_or_else(|| "not portable".into())) },
            sql: e.spark_sql,
        },
    }
}

fn not_checked(reason: String) -> SparkSql {
    SparkSql { sql: None, portable: false, reason: Some(format!("not checked: {reason}")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_table_parses_and_names_only_known_views() {
        let g: Generated = serde_json::from_str(GENERATED).unwrap();
        for e in &g.views {
            assert!(crate::db::views::find(&e.name).is_some(), "{} is not a registered view", e.name);
            assert!(e.portable || e.reason.is_some(), "{} is not portable and says not why", e.name);
            assert!(!e.portable || e.spark_sql.is_some(), "{} is portable without Spark SQL", e.name);
        }
    }

    #[test]
    fn every_registered_view_and_macro_has_an_entry_generated_from_its_sql() {
        // A view or macro added or edited since spark_views.json was generated shows as "not
        // checked" in every manifest; this fails first, naming the command that fixes it.
        let g: Generated = serde_json::from_str(GENERATED).unwrap();
        let regenerate = "regenerate: tests/acceptance/spark_parity.py EXPORT --generate src/db/spark_views.json \
                          (docs/spark.md \"The same views on Spark\")";
        for file in crate::db::views::VIEWS {
            let entry = g.views.iter().find(|e| e.name == file.name());
            let Some(entry) = entry else {
                panic!("{} has no entry in src/db/spark_views.json; {regenerate}", file.name())
            };
            assert_eq!(
                entry.duckdb_sha256,
                file.sha256(),
                "the entry of {} was generated from other SQL; {regenerate}",
                file.name()
            );
            let s = lookup(file.name(), &file.sha256(), file.kind);
            assert!(s.reason.as_deref().is_none_or(|r| !r.starts_with("not checked")), "{}: {s:?}", file.name());
        }
    }

    #[test]
    fn stale_or_missing_entries_are_never_portable() {
        let s = lookup("no_such_view_v1", "00", SqlKind::View);
        assert!(!s.portable && s.reason.unwrap().starts_with("not checked"));
        let s = lookup("refine_removals_v1", "not-the-sha", SqlKind::View);
        assert!(!s.portable && s.sql.is_none());
        let s = lookup("sft_budget_at_v1", "x", SqlKind::Macro);
        assert!(!s.portable && s.sql.is_none() && s.reason.unwrap().starts_with("not checked"));
    }
}
