//! `check --baseline`: judge each check against the same check in a reference instead of
//! a fixed condition (Evidently's "conditions from a reference"). The reference is a corpus
//! version (`--baseline v2`: every review scope `version=<v> ...` is compared with the same
//! scope of v2) or a recorded check run (`--baseline run:3`: every scope that run judged).
//!
//! A finding with a baseline figure is judged by `share > <baseline share> + tolerance`
//! (tolerance per check in checks.toml, default 0) in place of its conditions, at its own
//! severity; the finding keeps the baseline's figures, and both are printed. A finding
//! without one (no such scope in the reference, or not run there) keeps its conditions.

use super::{Condition, Field, Finding, Op, Severity};
use anyhow::{Result, bail};
use duckdb::Connection;
use serde::Serialize;
use std::collections::HashMap;

/// What a finding is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Baseline {
    /// A corpus version: review scopes of other versions are compared with its scopes.
    Version(String),
    /// A recorded check run (`run:<id>`): every scope it judged.
    Run(i64),
}

impl Baseline {
    /// `run:<id>` is a recorded check run, anything else a corpus version.
    pub fn parse(text: &str) -> Result<Self> {
        match text.strip_prefix("run:") {
            Some(id) => match id.parse::<i64>() {
                Ok(id) if id > 0 => Ok(Self::Run(id)),
                _ => bail!(
                    "--baseline {text}: expected run:<id> with the id of a recorded check run (check_runs.run_id)"
                ),
            },
            None if text.is_empty() => bail!("--baseline: expected a corpus version or run:<id>"),
            None => Ok(Self::Version(text.to_string())),
        }
    }
}

/// The reference's figures for one check and scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// `version v2` or `check run 3`.
    pub source: String,
    pub tested: Option<i64>,
    pub failing: Option<i64>,
    pub share: Option<f64>,
}

/// Compares `findings` with `baseline` and judges every finding that has a baseline
/// figure again (module docs); `tolerance` gives each check's tolerance.
///
/// Errors: the baseline version is not a corpus version of the database, or the check
/// run was not recorded.
pub fn apply(
    conn: &Connection,
    findings: &mut [Finding],
    baseline: &Baseline,
    tolerance: impl Fn(&str) -> f64,
) -> Result<()> {
    let reference: HashMap<(String, String), Figure> = match baseline {
        Baseline::Version(v) => {
            let known: i64 =
                conn.query_row("select count(*) from corpus_versions where version = ?", [v], |r| r.get(0))?;
            if known == 0 {
                bail!("--baseline {v}: no such corpus version (sphragis report removals lists them)");
            }
            findings
                .iter()
                .filter(|f| f.version() == Some(v))
                .map(|f| {
                    let figure =
                        Figure { source: format!("version {v}"), tested: f.tested, failing: f.failing, share: f.share };
                    ((f.check_name.clone(), without_version(&f.scope)), figure)
                })
                .collect()
        }
        Baseline::Run(id) => {
            let known: i64 = conn.query_row("select count(*) from check_runs where run_id = ?", [id], |r| r.get(0))?;
            if known == 0 {
                bail!("--baseline run:{id}: no such recorded check run (select * from check_runs)");
            }
            let mut stmt =
                conn.prepare("select check_name, scope, tested, failing, share from check_results where run_id = ?")?;
            let rows = stmt.query_map([id], |r| {
                Ok((
                    (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
                    Figure {
                        source: format!("check run {id}"),
                        tested: r.get(2)?,
                        failing: r.get(3)?,
                        share: r.get(4)?,
                    },
                ))
            })?;
            rows.collect::<Result<_, _>>()?
        }
    };
    for f in findings.iter_mut() {
        let key = match baseline {
            Baseline::Version(v) if f.version() == Some(v) => continue,
            Baseline::Version(_) if f.version().is_some() => (f.check_name.clone(), without_version(&f.scope)),
            Baseline::Version(_) => continue,
            Baseline::Run(_) => (f.check_name.clone(), f.scope.clone()),
        };
        let Some(figure) = reference.get(&key) else { continue };
        f.baseline = Some(figure.clone());
        let Some(base) = figure.share.filter(|_| figure.tested.is_some_and(|t| t > 0)) else { continue };
        let worse = Condition { field: Field::Share, op: Op::Gt, value: base + tolerance(&f.check_name) };
        match f.severity {
            Severity::Error => (f.error_if, f.warn_if) = (Some(worse), None),
            Severity::Warn | Severity::Info => (f.error_if, f.warn_if) = (None, Some(worse)),
        }
        f.rejudge();
    }
    Ok(())
}

/// The scope without its `version=` word: `version=v3 org=qt` → `org=qt`.
fn without_version(scope: &str) -> String {
    scope.split(' ').filter(|w| !w.starts_with("version=")).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_parse() {
        assert_eq!(Baseline::parse("v2").unwrap(), Baseline::Version("v2".into()));
        assert_eq!(Baseline::parse("run:3").unwrap(), Baseline::Run(3));
        assert!(Baseline::parse("run:x").is_err());
        assert!(Baseline::parse("run:0").is_err());
        assert!(Baseline::parse("").is_err());
        assert_eq!(without_version("version=v3 org=qt window=dev"), "org=qt window=dev");
    }
}
