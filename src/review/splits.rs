//! Splits, split criteria and membership manifests (SPEC §2.4).
//!
//! A split assigns every example a version keeps to the registered window its
//! `created_at` falls in, with its registered half by project, and stores that
//! membership as rows (`review_splits`), so splits of different versions live side by
//! side. The criteria (counts per split, halves' training sizes and size floor, suffix
//! mixes and their total variation distance, the matched suffix, `target_in_comment` per
//! half) are read from the views `split_counts_v1`, `half_suffix_mix_v1` and
//! `split_criteria_v1` — never computed by separate code — and written as JSON.

use crate::db::views;
use crate::hash::sha256_hex;
use anyhow::{Context, Result, bail};
use duckdb::{Connection, OptionalExt, params};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const SPLITS_SQL: &str = include_str!("../../sql/steps/splits.sql");

/// Computes the split of `version` for `org`, or for every registered org of the
/// version when `org` is `None`. Returns `(org, examples placed)` per org.
///
/// The windows and halves are those the version was refined with (a version is a
/// snapshot of its registration), so a later orgs file never moves an example.
///
/// Errors (nothing is written): the version does not exist or is frozen; `org` had no
/// registered windows or halves when the version was refined (the registration guard);
/// with `org = None`, no org of the version had registered halves.
pub fn compute(conn: &Connection, version: &str, org: Option<&str>) -> Result<Vec<(String, i64)>> {
    let state: Option<Option<String>> = conn
        .query_row("select frozen_at::varchar from corpus_versions where version = ?", [version], |r| r.get(0))
        .optional()?;
    match state {
        None => bail!("version {version} does not exist; refine it first"),
        Some(Some(at)) => bail!("version {version} was frozen at {at}; its splits cannot change"),
        Some(None) => {}
    }
    let orgs: Vec<String> = match org {
        Some(o) => vec![o.to_string()],
        None => {
            let mut stmt = conn.prepare(
                "select org from refine_examples where version = ? group by org \
                 having bool_or(registered_halves) order by org",
            )?;
            let orgs: Vec<String> = stmt.query_map([version], |r| r.get(0))?.collect::<duckdb::Result<_>>()?;
            if orgs.is_empty() {
                bail!("no org of version {version} has registered halves; register windows and halves in an orgs file");
            }
            orgs
        }
    };
    let mut registrations = Vec::new();
    for o in &orgs {
        registrations.push(registration(conn, version, o)?);
    }
    crate::db::in_transaction(conn, || -> Result<Vec<(String, i64)>> {
        let mut placed = Vec::new();
        for (o, file_id) in orgs.iter().zip(registrations) {
            conn.execute("delete from review_splits where version = ? and org = ?", params![version, o])?;
            conn.execute("delete from split_runs where version = ? and org = ?", params![version, o])?;
            let n = conn.execute(SPLITS_SQL, params![version, o]).context("split step sql/steps/splits.sql")?;
            conn.execute("insert into split_runs values (?, ?, ?, current_timestamp)", params![version, o, file_id])?;
            crate::db::log(conn, "split", &format!("{version} {o}: {n} examples, registration file_id {file_id}"))?;
            placed.push((o.clone(), n as i64));
        }
        Ok(placed)
    })
}

/// The registration (orgs file id) the version was refined with for `org`, after the
/// registration guard: the org must have had registered windows and halves then.
fn registration(conn: &Connection, version: &str, org: &str) -> Result<i32> {
    let row: Option<(Option<i32>, bool, bool)> = conn
        .query_row(
            "select any_value(registration_file_id), bool_or(registered_windows), bool_or(registered_halves) \
             from refine_examples where version = ? and org = ? group by org",
            params![version, org],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((file_id, windows, halves)) = row else {
        bail!("version {version} has no examples of org {org}");
    };
    let Some(file_id) = file_id else {
        bail!(
            "org {org} had no registration when version {version} was refined; load an orgs file with its \
             windows and halves, then refine a version"
        );
    };
    if !windows {
        bail!("org {org} had no registered windows when version {version} was refined; a split needs them");
    }
    if !halves {
        bail!("org {org} had no registered halves a and b when version {version} was refined; a split needs them");
    }
    Ok(file_id)
}

/// The membership manifest of `org` in `version`: sorted example ids per split and one
/// SHA-256 root over the lines `<split>\t<example_id>\n`, sorted by split then id.
///
/// Returns `(root, manifest JSON)`. The JSON's keys are sorted, so its text is stable.
pub fn manifest(conn: &Connection, version: &str, org: &str) -> Result<(String, Value)> {
    let mut stmt = conn.prepare("select split, example_id from review_splits where version = ? and org = ?")?;
    let mut rows: Vec<(String, String)> =
        stmt.query_map(params![version, org], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?;
    rows.sort();
    let mut text = String::new();
    let mut splits: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (split, id) in rows {
        text.push_str(&split);
        text.push('\t');
        text.push_str(&id);
        text.push('\n');
        splits.entry(split).or_default().push(id);
    }
    let root = sha256_hex(text.as_bytes());
    let value = json!({
        "version": version,
        "org": org,
        "root_sha256": root,
        "root_rule": "SHA-256 over the lines <split>\\t<example_id>\\n, sorted by split then example_id",
        "splits": splits,
    });
    Ok((root, value))
}

fn view_sha(name: &str) -> String {
    views::find(name).map(|v| v.sha256()).unwrap_or_default()
}

/// The split criteria of `org` in `version`, read from the criteria views (SPEC §2.4).
///
/// Shape: `{version, org, views: {name: sha256}, splits: {split: examples},
/// halves: {a|b: {train, suffix_mix: {suffix: {rows, share}}, target_in_comment: {k, n}}},
/// size_floor, language_mix_ceiling, matched_suffix: {suffix, rows_a, rows_b},
/// runner_up: {suffix, rows_a, rows_b}}`. Errors when no split was computed.
pub fn criteria(conn: &Connection, version: &str, org: &str) -> Result<Value> {
    type Row = (
        i64,
        i64,
        i64,
        Option<f64>,
        Option<String>,
        Option<i64>,
        Option<i64>,
        Option<String>,
        Option<i64>,
        Option<i64>,
    );
    let row: Row = conn
        .query_row(
            "select train_a, train_b, size_floor, language_mix_ceiling, matched_suffix, matched_rows_a, \
             matched_rows_b, runner_up_suffix, runner_up_rows_a, runner_up_rows_b \
             from split_criteria_v1 where version = ? and org = ?",
            params![version, org],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                ))
            },
        )
        .with_context(|| format!("no split computed for {org} in version {version}"))?;
    let tic: (i64, i64, i64, i64, String) = conn.query_row(
        "select target_in_comment_a, judged_a, target_in_comment_b, judged_b, to_json(no_information)::varchar \
         from split_criteria_v1 where version = ? and org = ?",
        params![version, org],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let no_information: Value = serde_json::from_str(&tic.4).context("split_criteria_v1.no_information")?;
    let mut stmt = conn.prepare("select split, examples from split_counts_v1 where version = ? and org = ?")?;
    let splits: BTreeMap<String, i64> =
        stmt.query_map(params![version, org], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?;
    let mut stmt =
        conn.prepare("select half, suffix, rows, share from half_suffix_mix_v1 where version = ? and org = ?")?;
    let mut mixes: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for r in stmt.query_map(params![version, org], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, f64>(3)?))
    })? {
        let (half, suffix, rows, share) = r?;
        mixes.entry(half).or_default().insert(suffix, json!({ "rows": rows, "share": share }));
    }
    let half = |name: &str, train: i64, k: i64, n: i64| {
        json!({
            "train": train,
            "suffix_mix": mixes.get(name).cloned().unwrap_or_default(),
            "target_in_comment": { "k": k, "n": n },
        })
    };
    let views: BTreeMap<&str, String> =
        ["split_counts_v1", "half_suffix_mix_v1", "split_criteria_v1"].into_iter().map(|v| (v, view_sha(v))).collect();
    Ok(json!({
        "version": version,
        "org": org,
        "views": views,
        "splits": splits,
        "halves": { "a": half("a", row.0, tic.0, tic.1), "b": half("b", row.1, tic.2, tic.3) },
        "size_floor": row.2,
        "language_mix_ceiling": row.3,
        "matched_suffix": { "suffix": row.4, "rows_a": row.5, "rows_b": row.6 },
        "runner_up": { "suffix": row.7, "rows_a": row.8, "rows_b": row.9 },
        // criteria computed on no information (split_criteria_v1.no_information): e.g.
        // "suffix" when no training row has a file suffix, so the ceiling 0 says nothing
        "no_information": no_information,
    }))
}

/// Flattens a JSON value into `path → scalar text` (paths like `halves.a.train`), for
/// reporting differences between two criteria files.
pub fn flatten(value: &Value) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    walk(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, v, out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(&format!("{prefix}[{i}]"), v, out);
                }
            }
            other => {
                out.insert(prefix.to_string(), other.to_string());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", value, &mut out);
    out
}

const SPLIT_EXAMPLES_UNSEALED_SQL: &str = include_str!("../../sql/steps/split_examples.sql");

/// The examples of one split with their prompt (kept comments), for `sphragis examples`.
///
/// A split outside the sealed window is read from the view `split_examples_v2` and the
/// table is stamped with it (a stock DuckDB client re-runs the stamp's query and gets the
/// same rows). A sealed split is read only with `unseal`: its content comes from the
/// sealed companion through `sql/steps/split_examples.sql` (same columns), the read is
/// logged in `sph_log`, and the table has no stamp (a stock client cannot open the
/// companion through the main file, by design).
///
/// Errors: no such split for the org in the version; a sealed split without `unseal`; SQL.
pub fn examples(
    conn: &Connection,
    version: &str,
    org: &str,
    split: &str,
    unseal: bool,
) -> Result<crate::report::ReportTable> {
    use crate::report::{ReportTable, Stamp, query, sql_literal};
    let sealed: Option<bool> = conn.query_row(
        "select bool_or(sealed) from review_splits where version = ? and org = ? and split = ?",
        params![version, org, split],
        |r| r.get(0),
    )?;
    let Some(sealed) = sealed else {
        bail!("no split {split:?} for {org} in version {version}; see `sphragis report splits`");
    };
    if sealed && !unseal {
        bail!(
            "split {split} of {org} is the sealed test window; its content opens only with --unseal, which is logged"
        );
    }
    if sealed {
        let mut table = crate::db::sealed::with_content(conn, true, || {
            query(conn, SPLIT_EXAMPLES_UNSEALED_SQL, &[version, org, split])
        })?;
        table.report = "examples".into();
        table.about =
            format!("{org} {split} of version {version}, unsealed (content from the sealed companion; no stamp)");
        crate::db::log(conn, "unseal", &format!("{version} {org} {split}: {} examples shown", table.rows.len()))?;
        return Ok(table);
    }
    let name = "split_examples_v2";
    let file = views::find(name).with_context(|| format!("{name} is not registered"))?;
    let filter =
        format!("version = {} and org = {} and split = {}", sql_literal(version), sql_literal(org), sql_literal(split));
    let sql = format!("select * from {name} where {filter} order by example_id");
    let table = crate::table::query_planned_once(conn, &sql)?;
    Ok(ReportTable {
        report: "examples".into(),
        about: format!("{org} {split} of version {version}: hunk, target and the prompt's comments"),
        stamp: Some(Stamp {
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

    #[test]
    fn flatten_paths() {
        let v = json!({"a": {"b": 1, "c": [true, null]}, "d": "x"});
        let flat = flatten(&v);
        assert_eq!(flat["a.b"], "1");
        assert_eq!(flat["a.c[0]"], "true");
        assert_eq!(flat["a.c[1]"], "null");
        assert_eq!(flat["d"], "\"x\"");
    }
}
