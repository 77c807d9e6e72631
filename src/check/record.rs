//! Results kept over time (issue 26): every recorded `check` run in `check_runs` and every
//! check and scope it judged, passes and not-run checks included, in `check_results`; both
//! written in one transaction. `check_history_v1` and `check_latest_v1` read them.

use super::{FailOn, Finding, Status};
use anyhow::{Context, Result};
use duckdb::{Connection, params};
use std::collections::HashMap;

/// What one recorded run was asked.
#[derive(Debug, Clone)]
pub struct RunOptions<'a> {
    /// SHA-256 of checks.toml; `None`: the defaults.
    pub config_sha256: Option<&'a str>,
    /// The options as JSON: max_length, side, only, version, baseline, fail_on.
    pub options: serde_json::Value,
    pub fail_on: FailOn,
}

/// SHA-256 over the ingest log's file SHA-256s in file_id order (hex concatenated): the
/// inputs a run judged, as one value.
pub fn inputs_sha256(conn: &Connection) -> Result<String> {
    let joined: Option<String> =
        conn.query_row("select string_agg(sha256, '' order by file_id) from ingest_log", [], |r| r.get(0))?;
    Ok(crate::hash::sha256_hex(joined.unwrap_or_default().as_bytes()))
}

/// Records one run and all its `findings` in one transaction; returns the run id.
///
/// Errors: the database cannot be written or refuses a row, e.g. a result already stored
/// under the new run's id (nothing is recorded then, and the error says so).
pub fn record(conn: &Connection, findings: &[Finding], opts: &RunOptions) -> Result<i64> {
    let failed = findings.iter().any(|f| opts.fail_on.fails(f.status));
    let inputs = inputs_sha256(conn)?;
    let now = chrono::Utc::now().naive_utc().format("%Y-%m-%d %H:%M:%S%.6f").to_string();
    crate::db::in_transaction(conn, || {
        let run_id: i64 = conn.query_row(
            "insert into check_runs (checked_at, code_version, corpus_versions, inputs_sha256, config_sha256, options, \
             fail_on, failed) select ?::timestamp, ?, coalesce((select list(version order by version) from \
             corpus_versions), []::varchar[]), ?, ?, ?, ?, ? returning run_id",
            params![
                now,
                crate::CODE_VERSION,
                inputs,
                opts.config_sha256,
                opts.options.to_string(),
                opts.fail_on.as_str(),
                failed
            ],
            |r| r.get(0),
        )?;
        // an appender: a prepared insert is planned again at each execute (some 200 a run)
        let mut insert = conn.appender("check_results")?;
        for f in findings {
            insert.append_row(params![
                run_id,
                f.check_name,
                f.area,
                f.severity.as_str(),
                f.scope,
                f.tested,
                f.failing,
                f.share,
                f.error_if.map(|c| c.to_string()),
                f.warn_if.map(|c| c.to_string()),
                f.status.as_str(),
                f.reason,
                f.drill_down,
            ])?;
        }
        insert.flush()?;
        Ok(run_id)
    })
    .context("the check run was not recorded (the database is unchanged)")
}

/// The status of every check and scope in the latest recorded run, by (check, scope);
/// empty when no run was recorded.
pub fn latest_statuses(conn: &Connection) -> Result<HashMap<(String, String), Status>> {
    let mut stmt = conn.prepare("select check_name, scope, status from check_latest_v1")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?;
    let mut out = HashMap::new();
    for row in rows {
        let (check, scope, status) = row?;
        if let Some(s) = Status::parse(&status) {
            out.insert((check, scope), s);
        }
    }
    Ok(out)
}

/// The checks whose status or figures changed between the last two recorded `check` runs
/// (`check_changes_v1` without its `same` rows), as a stamped report table named
/// `check-changes`: what `diff --reports` prints beside the report figures. No rows with
/// fewer than two recorded runs (the table's about says so).
///
/// Errors: DuckDB rejects the query.
pub fn changes_table(conn: &Connection) -> Result<crate::table::ReportTable> {
    let name = "check_changes_v1";
    let file = crate::db::views::find(name).ok_or_else(|| anyhow::anyhow!("{name} is not registered"))?;
    let filter = "change <> 'same'".to_string();
    let sql = format!("select * from {name} where {filter} order by all");
    let table = crate::table::query_planned_once(conn, &sql)?;
    let runs: i64 = conn.query_row("select count(*) from check_runs", [], |r| r.get(0))?;
    let about = if runs < 2 {
        format!(
            "checks changed since the previous recorded `sphragis check` run: {runs} run(s) recorded, nothing to compare"
        )
    } else {
        "checks whose status or figures changed between the last two recorded `sphragis check` runs".to_string()
    };
    Ok(crate::table::ReportTable {
        report: "check-changes".into(),
        about,
        stamp: Some(crate::table::Stamp {
            kind: file.kind,
            name: name.into(),
            sha256: file.sha256(),
            arguments: None,
            filter: Some(filter),
            query: sql,
        }),
        ..table
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Truncation;

    /// A run whose results cannot be written (here a result row already stored under the
    /// next run id) failed with the appender's bare "Failed to append: Duplicate key ..."
    /// (found by a fresh tester): the error now says the run was not recorded, and nothing
    /// of it is.
    #[test]
    fn record_refused_says_the_run_was_not_recorded() {
        let conn = crate::db::open(std::path::Path::new(":memory:")).unwrap();
        let findings = crate::check::findings(&conn, Truncation::default()).unwrap();
        let opts = RunOptions { config_sha256: None, options: serde_json::json!({}), fail_on: FailOn::Error };
        assert_eq!(record(&conn, &findings, &opts).unwrap(), 1);
        let first = &findings[0];
        conn.execute(
            "insert into check_results (run_id, check_name, area, severity, scope, status) values (2, ?, ?, 'info', ?, 'pass')",
            params![first.check_name, first.area, first.scope],
        )
        .unwrap();
        let err = format!("{:#}", record(&conn, &findings, &opts).unwrap_err());
        assert!(err.starts_with("the check run was not recorded (the database is unchanged): "), "{err}");
        assert!(err.contains("Duplicate key"), "{err}");
        let counts: (i64, i64) = conn
            .query_row("select (select count(*) from check_runs), (select count(*) from check_results)", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(counts, (1, findings.len() as i64 + 1));
    }
}
