//! `checks.toml`: per-check severity, conditions, scopes and `enabled`, and the training
//! length the truncation checks cut at (issue 26).
//!
//! ```toml
//! [truncation]
//! max_length = 8192          # tokens, >= 1 (default 32768)
//! side = "left"              # right (default) | left
//!
//! [checks.contract_vocab]
//! severity = "warn"          # error | warn | info
//! error_if = "> 0"           # [failing|share] <op> <number>; "" removes the default
//! warn_if = "share > 0.01"
//! scopes = ["pool=A"]        # judge only scopes holding every word of one entry
//! tolerance = 0.01           # --baseline: how much higher the share may be
//!
//! [checks.fence_selectors_disagree]
//! enabled = false            # not judged, not recorded
//! ```
//!
//! Every error names the file and line: an unknown key or check name, a severity or side
//! that is not one of the allowed words, a condition that does not parse.

use super::{CHECKS, Condition, Severity};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// A parsed, validated `checks.toml`.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// SHA-256 of the file's bytes (recorded in `check_runs.config_sha256`).
    pub sha256: Option<String>,
    /// `[truncation]`, default 32,768 tokens, right.
    pub truncation: super::Truncation,
    /// `[checks.<name>]`, by check name.
    pub checks: BTreeMap<String, CheckConfig>,
}

/// One `[checks.<name>]` table. `None` leaves the view's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckConfig {
    pub severity: Option<Severity>,
    /// `Some(None)`: `error_if = ""`, the default condition removed.
    pub error_if: Option<Option<Condition>>,
    pub warn_if: Option<Option<Condition>>,
    /// Judge only scopes matching one entry: every `key=value` word of the entry among
    /// the scope's words, or the entry equal to the scope (`corpus`).
    pub scopes: Option<Vec<String>>,
    /// `false`: the check is neither judged nor recorded.
    pub enabled: bool,
    /// `--baseline`: how much higher than the baseline's the share may be (0..1, default 0).
    pub tolerance: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    truncation: Option<Spanned<RawTruncation>>,
    #[serde(default)]
    checks: BTreeMap<Spanned<String>, Spanned<RawCheck>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTruncation {
    max_length: Option<Spanned<i64>>,
    side: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    severity: Option<Spanned<String>>,
    error_if: Option<Spanned<String>>,
    warn_if: Option<Spanned<String>>,
    scopes: Option<Vec<String>>,
    enabled: Option<bool>,
    tolerance: Option<Spanned<f64>>,
}

/// The 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

impl Config {
    /// Reads and validates `path`.
    ///
    /// Errors: the file cannot be read or is not UTF-8; and, naming `file:line`, TOML that
    /// does not parse, an unknown key, an unknown check name (with the known ones), a
    /// severity other than error / warn / info, a side other than right / left, a
    /// max_length below 1 or past 2^31 - 1 (a DuckDB INTEGER), a condition that does not
    /// parse, a tolerance outside 0..1.
    pub fn read(path: &Path) -> Result<Self> {
        // the configuration of this command, not a loaded input: its SHA-256 is recorded
        // with the run instead of in the ingest log
        let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| anyhow::anyhow!("{}: not UTF-8 (byte {})", path.display(), e.utf8_error().valid_up_to()))?;
        let mut config = Self::parse(&text, &path.display().to_string())?;
        config.sha256 = Some(crate::hash::sha256_hex(text.as_bytes()));
        Ok(config)
    }

    /// Parses `text`; `file` names it in errors. See [`Config::read`].
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let at = |offset: usize| format!("{file}:{}", line_of(text, offset));
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let place = e.span().map(|s| at(s.start)).unwrap_or_else(|| file.to_string());
            anyhow::anyhow!("{place}: {}", e.message().trim_end())
        })?;
        let mut config = Config::default();
        if let Some(t) = raw.truncation {
            let t = t.into_inner();
            if let Some(n) = t.max_length {
                let value = *n.get_ref();
                if value < 1 {
                    bail!("{}: truncation.max_length {value}: expected a token count of 1 or more", at(n.span().start));
                }
                // check_findings_at_v1 takes a DuckDB INTEGER
                if value > i64::from(i32::MAX) {
                    bail!("{}: truncation.max_length {value}: at most {} tokens", at(n.span().start), i32::MAX);
                }
                config.truncation.max_length = value as u32;
            }
            if let Some(side) = t.side {
                config.truncation.side = match side.get_ref().as_str() {
                    "right" => "right",
                    "left" => "left",
                    other => {
                        bail!("{}: truncation.side {other:?}: expected \"right\" or \"left\"", at(side.span().start))
                    }
                };
            }
        }
        for (name, table) in raw.checks {
            let span = name.span();
            let name = name.into_inner();
            if !CHECKS.iter().any(|c| c.name == name) {
                let known: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
                bail!("{}: unknown check {name:?}; the checks are: {}", at(span.start), known.join(", "));
            }
            let raw = table.into_inner();
            let condition = |c: Option<Spanned<String>>, key: &str| -> Result<Option<Option<Condition>>> {
                let Some(c) = c else { return Ok(None) };
                if c.get_ref().trim().is_empty() {
                    return Ok(Some(None));
                }
                let parsed = Condition::parse(c.get_ref())
                    .map_err(|e| anyhow::anyhow!("{}: {name}.{key}: {e:#}", at(c.span().start)))?;
                Ok(Some(Some(parsed)))
            };
            let severity = match raw.severity {
                None => None,
                Some(s) => Some(Severity::parse(s.get_ref()).with_context(|| {
                    format!(
                        "{}: {name}.severity {:?}: expected \"error\", \"warn\" or \"info\"",
                        at(s.span().start),
                        s.get_ref()
                    )
                })?),
            };
            let tolerance = match raw.tolerance {
                None => 0.0,
                Some(t) if (0.0..=1.0).contains(t.get_ref()) => *t.get_ref(),
                Some(t) => {
                    bail!("{}: {name}.tolerance {}: expected a share from 0 to 1", at(t.span().start), t.get_ref())
                }
            };
            let check = CheckConfig {
                severity,
                error_if: condition(raw.error_if, "error_if")?,
                warn_if: condition(raw.warn_if, "warn_if")?,
                scopes: raw.scopes,
                enabled: raw.enabled.unwrap_or(true),
                tolerance,
            };
            config.checks.insert(name, check);
        }
        Ok(config)
    }

    /// Applies the configuration to `findings`: drops disabled checks and scopes not
    /// selected, sets severities and conditions, and judges every finding again. A check
    /// whose `scopes` select none of its scopes is not dropped: it stays as one `not-run`
    /// finding, scope the entries, reason `no scope matches <entries>` (never a silent pass).
    pub fn apply(&self, findings: Vec<super::Finding>) -> Vec<super::Finding> {
        let mut out = Vec::with_capacity(findings.len());
        // checks with findings all left out by their scopes: the first such finding
        let mut unmatched: Vec<super::Finding> = Vec::new();
        let mut matched = std::collections::HashSet::new();
        for mut f in findings {
            if let Some(c) = self.checks.get(&f.check_name) {
                if !c.enabled {
                    continue;
                }
                if let Some(scopes) = &c.scopes {
                    if !scopes.iter().any(|s| scope_matches(&f.scope, s)) {
                        if !unmatched.iter().any(|u| u.check_name == f.check_name) {
                            unmatched.push(f);
                        }
                        continue;
                    }
                    matched.insert(f.check_name.clone());
                }
                if let Some(s) = c.severity {
                    f.severity = s;
                }
                if let Some(e) = c.error_if {
                    f.error_if = e;
                }
                if let Some(w) = c.warn_if {
                    f.warn_if = w;
                }
            }
            f.rejudge();
            out.push(f);
        }
        for mut f in unmatched.into_iter().filter(|f| !matched.contains(&f.check_name)) {
            let entries = self.checks[&f.check_name].scopes.as_deref().unwrap_or_default().join(" or ");
            f.reason = Some(format!("no scope matches {entries}"));
            f.scope = entries;
            (f.tested, f.failing, f.share, f.detail, f.drill_down) = (None, None, None, None, None);
            f.rejudge();
            out.push(f);
        }
        out
    }

    /// The tolerance `--baseline` allows `check` (0 when not configured).
    pub fn tolerance(&self, check: &str) -> f64 {
        self.checks.get(check).map_or(0.0, |c| c.tolerance)
    }
}

/// Whether `scope` is selected by `filter`: the filter equals the scope, or each of its
/// `key=value` words is one of the scope's words (`org=qt` selects `version=v3 org=qt
/// window=dev`).
pub fn scope_matches(scope: &str, filter: &str) -> bool {
    let filter = filter.trim();
    if filter == scope {
        return true;
    }
    let words: Vec<&str> = scope.split(' ').collect();
    let wanted: Vec<&str> = filter.split_whitespace().collect();
    !wanted.is_empty() && wanted.iter().all(|w| w.contains('=') && words.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_parses() {
        let c = Config::parse(
            "[truncation]\nmax_length = 8192\nside = \"left\"\n\n[checks.contract_vocab]\nseverity = \"warn\"\n\
             error_if = \"\"\nwarn_if = \"share > 0.01\"\nscopes = [\"pool=A\"]\ntolerance = 0.02\n\n\
             [checks.fence_selectors_disagree]\nenabled = false\n",
            "checks.toml",
        )
        .unwrap();
        assert_eq!(c.truncation, crate::check::Truncation { max_length: 8192, side: "left" });
        let v = &c.checks["contract_vocab"];
        assert_eq!(v.severity, Some(Severity::Warn));
        assert_eq!(v.error_if, Some(None));
        assert_eq!(v.warn_if, Some(Some(Condition::parse("share > 0.01").unwrap())));
        assert_eq!(v.scopes.as_deref(), Some(&["pool=A".to_string()][..]));
        assert!(v.enabled);
        assert_eq!(v.tolerance, 0.02);
        assert!(!c.checks["fence_selectors_disagree"].enabled);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let err = |text: &str| format!("{:#}", Config::parse(text, "checks.toml").unwrap_err());
        let e = err("\n[checks.no_such_check]\nseverity = \"warn\"\n");
        assert!(e.starts_with("checks.toml:2: unknown check \"no_such_check\"; the checks are: "), "{e}");
        let e = err("[checks.contract_vocab]\n\nseverity = \"fatal\"\n");
        assert_eq!(e, "checks.toml:3: contract_vocab.severity \"fatal\": expected \"error\", \"warn\" or \"info\"");
        let e = err("[checks.contract_vocab]\nwarn_if = \"about 3\"\n");
        assert!(e.starts_with("checks.toml:2: contract_vocab.warn_if: condition \"about 3\": expected"), "{e}");
        let e = err("[checks.contract_vocab]\nseverty = \"warn\"\n");
        assert!(e.starts_with("checks.toml:2: unknown field `severty`"), "{e}");
        let e = err("[truncation]\nmax_length = 0\n");
        assert_eq!(e, "checks.toml:2: truncation.max_length 0: expected a token count of 1 or more");
        // past a DuckDB INTEGER: was DuckDB's conversion error, naming no file or line
        let e = err("[truncation]\nmax_length = 2147483648\n");
        assert_eq!(e, "checks.toml:2: truncation.max_length 2147483648: at most 2147483647 tokens");
        let e = err("[truncation]\nmax_length = 9999999999999\n");
        assert_eq!(e, "checks.toml:2: truncation.max_length 9999999999999: at most 2147483647 tokens");
        let e = err("[truncation]\nside = \"middle\"\n");
        assert_eq!(e, "checks.toml:2: truncation.side \"middle\": expected \"right\" or \"left\"");
        let e = err("[checks.contract_vocab]\ntolerance = 2.0\n");
        assert_eq!(e, "checks.toml:2: contract_vocab.tolerance 2: expected a share from 0 to 1");
        let e = err("[checks.contract_vocab\n");
        assert!(e.starts_with("checks.toml:1: "), "{e}");
    }

    #[test]
    fn scope_matching_nothing_is_not_a_silent_pass() {
        let c = Config::parse("[checks.contract_lengths]\nscopes = [\"pool=nosuch\", \"pool=B\"]\n", "checks.toml")
            .unwrap();
        let finding = |check: &str, scope: &str| super::super::Finding {
            check_name: check.into(),
            area: "sft".into(),
            severity: super::super::Severity::Error,
            scope: scope.into(),
            tested: Some(4),
            failing: Some(1),
            share: Some(0.25),
            error_if: Some(super::super::Condition::parse("> 0").unwrap()),
            warn_if: None,
            status: super::super::Status::Fail,
            reason: None,
            detail: Some("1 of 4".into()),
            drill_down: Some("select 1".into()),
            baseline: None,
        };
        let out = c.apply(vec![finding("contract_lengths", "pool=A"), finding("contract_vocab", "pool=A")]);
        let rows: Vec<_> = out
            .iter()
            .map(|f| (f.check_name.as_str(), f.scope.as_str(), f.status, f.tested, f.reason.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [
                ("contract_vocab", "pool=A", super::super::Status::Fail, Some(4), None),
                (
                    "contract_lengths",
                    "pool=nosuch or pool=B",
                    super::super::Status::NotRun,
                    None,
                    Some("no scope matches pool=nosuch or pool=B")
                ),
            ]
        );
        // a scope that matches: judged there only, no not-run row
        let out = c.apply(vec![finding("contract_lengths", "pool=A"), finding("contract_lengths", "pool=B")]);
        let rows: Vec<_> = out.iter().map(|f| (f.scope.as_str(), f.status)).collect();
        assert_eq!(rows, [("pool=B", super::super::Status::Fail)]);
    }

    #[test]
    fn scopes_match_by_their_key_value_words() {
        assert!(scope_matches("version=v3 org=qt window=dev", "org=qt"));
        assert!(scope_matches("version=v3 org=qt window=dev", "window=dev version=v3"));
        assert!(!scope_matches("version=v3 org=qtx window=dev", "org=qt"));
        assert!(!scope_matches("version=v3 org=qt", "org=qt window=dev"));
        assert!(scope_matches("corpus", "corpus"));
        assert!(!scope_matches("training pools", "training"));
        assert!(!scope_matches("pool=A", ""));
    }
}
