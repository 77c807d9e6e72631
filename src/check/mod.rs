//! The verdict layer (`sphragis check`, issue 26): every fault sphragis detects as a check
//! with a severity, conditions and a status a pipeline can gate on.
//!
//! The checks are SQL: `sql/checks/check_*_v1.sql`, one view per area (and a table macro
//! for the truncation checks, which take the training length), unioned with the default
//! verdicts by the table macro `check_findings_at_v1(max_length, side)`; any DuckDB client
//! reads `check_findings_v1`. This module reads those rows ([`findings`]), applies a
//! `checks.toml` to the same figures ([`config`]), compares them with a baseline
//! ([`baseline`]), records every result ([`record`]) and writes JUnit XML ([`junit`]); the
//! union's parts are computed side by side before it runs ([`parts`]: the same rows). It
//! computes no figure itself: `tested` and `failing` come only from the views, so a
//! recorded result can be re-derived from its drill-down query.
//!
//! The status rule, the same here ([`judge`]) as in `check_findings_at_v1` (a test runs
//! both on every row of the demo database): `not-run` when nothing was tested (never a
//! pass); else `fail` when the severity is error and `error_if` holds; else `warn` when
//! the severity is error or warn and `warn_if` holds (for severity warn, `error_if` too);
//! else `info` when the severity is info and either condition holds; else `pass`.

pub mod baseline;
pub mod config;
pub mod junit;
pub mod parts;
pub mod record;

use anyhow::{Context, Result, bail};
use duckdb::Connection;
use serde::Serialize;
use std::fmt;

/// How much a failing check matters: `error` fails a pipeline by default, `warn` with
/// `--fail-on warn`, `info` never.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Error,
}

impl Severity {
    /// Parses `error`, `warn` or `info`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "error" => Some(Self::Error),
            "warn" => Some(Self::Warn),
            "info" => Some(Self::Info),
            _ => None,
        }
    }

    /// `error`, `warn` or `info`, as the views and `check_results` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
        }
    }
}

/// The verdict on one check and scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    #[serde(rename = "fail")]
    Fail,
    #[serde(rename = "warn")]
    Warn,
    #[serde(rename = "not-run")]
    NotRun,
    #[serde(rename = "info")]
    Info,
    #[serde(rename = "pass")]
    Pass,
}

impl Status {
    /// Parses a status as the views write it.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "fail" => Some(Self::Fail),
            "warn" => Some(Self::Warn),
            "not-run" => Some(Self::NotRun),
            "info" => Some(Self::Info),
            "pass" => Some(Self::Pass),
            _ => None,
        }
    }

    /// `fail`, `warn`, `not-run`, `info` or `pass`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Warn => "warn",
            Self::NotRun => "not-run",
            Self::Info => "info",
            Self::Pass => "pass",
        }
    }

    /// The order findings are printed in: failures first, passes last.
    pub fn rank(self) -> u8 {
        match self {
            Self::Fail => 0,
            Self::Warn => 1,
            Self::NotRun => 2,
            Self::Info => 3,
            Self::Pass => 4,
        }
    }
}

/// What `--fail-on` names: the lowest status that makes `check` exit 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Only `fail` (an error-severity check whose `error_if` holds).
    #[default]
    Error,
    /// `fail` or `warn`.
    Warn,
}

impl FailOn {
    /// Whether a result of `status` makes the run fail.
    pub fn fails(self, status: Status) -> bool {
        match self {
            Self::Error => status == Status::Fail,
            Self::Warn => matches!(status, Status::Fail | Status::Warn),
        }
    }

    /// `error` or `warn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
        }
    }
}

/// The figure a condition reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `failing`: the count of failing rows.
    Failing,
    /// `share`: failing / tested, 0..1.
    Share,
}

/// A comparison operator of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
}

/// A condition on a check's figures, as `error_if` / `warn_if` write it:
/// `[failing|share] <op> <number>` with op one of `>`, `>=`, `<`, `<=`, `=`, `!=`; a
/// condition without a field reads `failing` (dbt's `warn_if: ">0"`). Examples: `> 0`,
/// `share >= 0.05`, `failing > 10`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Condition {
    pub field: Field,
    pub op: Op,
    pub value: f64,
}

impl Condition {
    /// Parses a condition.
    ///
    /// Errors: text that is not `[failing|share] <op> <number>` (the number a plain
    /// decimal 0 or more, as `check_findings_at_v1` reads it), with what was expected.
    pub fn parse(text: &str) -> Result<Self> {
        let rest = text.trim();
        let (field, rest) = if let Some(r) = rest.strip_prefix("failing") {
            (Field::Failing, r.trim_start())
        } else if let Some(r) = rest.strip_prefix("share") {
            (Field::Share, r.trim_start())
        } else {
            (Field::Failing, rest)
        };
        let (op, number) =
            [(">=", Op::Ge), ("<=", Op::Le), ("!=", Op::Ne), (">", Op::Gt), ("<", Op::Lt), ("=", Op::Eq)]
                .into_iter()
                .find_map(|(s, op)| rest.strip_prefix(s).map(|n| (op, n.trim())))
                .with_context(|| {
                    format!("condition {text:?}: expected `[failing|share] <op> <number>`, op one of > >= < <= = !=")
                })?;
        // the numbers check_findings_at_v1 reads: `[0-9]+(\.[0-9]+)?`
        let (whole, fraction) = number.split_once('.').unwrap_or((number, "0"));
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let plain = digits(whole) && digits(fraction);
        let value = match number.parse::<f64>() {
            Ok(v) if plain && v.is_finite() => v,
            _ => bail!("condition {text:?}: {number:?} is not a plain decimal number 0 or more, e.g. 0 or 0.05"),
        };
        Ok(Self { field, op, value })
    }

    /// Whether the condition holds on the figures; `false` when its figure is unknown
    /// (`share` of nothing tested).
    pub fn holds(&self, failing: Option<i64>, share: Option<f64>) -> bool {
        let Some(x) = (match self.field {
            Field::Failing => failing.map(|f| f as f64),
            Field::Share => share,
        }) else {
            return false;
        };
        match self.op {
            Op::Gt => x > self.value,
            Op::Ge => x >= self.value,
            Op::Lt => x < self.value,
            Op::Le => x <= self.value,
            Op::Eq => x == self.value,
            Op::Ne => x != self.value,
        }
    }
}

impl fmt::Display for Condition {
    /// The normalized form, e.g. `failing > 0`, `share >= 0.05`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = match self.field {
            Field::Failing => "failing",
            Field::Share => "share",
        };
        let op = match self.op {
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Eq => "=",
            Op::Ne => "!=",
        };
        write!(f, "{field} {op} {}", self.value)
    }
}

/// The status rule (module docs), on one check's figures.
pub fn judge(
    severity: Severity,
    tested: Option<i64>,
    failing: Option<i64>,
    share: Option<f64>,
    error_if: Option<&Condition>,
    warn_if: Option<&Condition>,
) -> Status {
    if tested.is_none_or(|t| t == 0) {
        return Status::NotRun;
    }
    let error = error_if.is_some_and(|c| c.holds(failing, share));
    let warn = warn_if.is_some_and(|c| c.holds(failing, share));
    match severity {
        Severity::Error if error => Status::Fail,
        Severity::Error | Severity::Warn if warn || (severity == Severity::Warn && error) => Status::Warn,
        Severity::Info if error || warn => Status::Info,
        _ => Status::Pass,
    }
}

/// One check on one scope: a row of `check_findings_at_v1`, then as judged by `check`.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// e.g. `contract_trains_nothing`.
    pub check_name: String,
    /// `review`, `sft`, `eval` or `ingest`.
    pub area: String,
    pub severity: Severity,
    /// What the row judges, as `key=value` words (`pool=A`, `version=v3 org=qt window=dev`)
    /// or a name (`corpus`, `training pools`).
    pub scope: String,
    /// Rows examined; `None` when the check could not run.
    pub tested: Option<i64>,
    /// Of those, rows failing; `None` when the check could not run.
    pub failing: Option<i64>,
    /// failing / tested (0..1); `None` when not run.
    pub share: Option<f64>,
    #[serde(serialize_with = "condition_text")]
    pub error_if: Option<Condition>,
    #[serde(serialize_with = "condition_text")]
    pub warn_if: Option<Condition>,
    pub status: Status,
    /// Why the check did not run, or what it could test only in part.
    pub reason: Option<String>,
    /// The figures behind the count, in words.
    pub detail: Option<String>,
    /// A query (stock DuckDB) listing the failing rows, or the rows behind the figure.
    pub drill_down: Option<String>,
    /// The same check's figures in the baseline, when one was given and has this scope.
    pub baseline: Option<baseline::Figure>,
}

fn condition_text<S: serde::Serializer>(c: &Option<Condition>, s: S) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_str(&c.to_string()),
        None => s.serialize_none(),
    }
}

impl Finding {
    /// The check's `key=value` scope words, e.g. `[("version", "v3"), ("org", "qt")]`;
    /// empty for a named scope such as `corpus`.
    pub fn scope_words(&self) -> Vec<(&str, &str)> {
        self.scope.split(' ').filter_map(|w| w.split_once('=')).collect()
    }

    /// The corpus version the scope names (`version=<v>`), if any.
    pub fn version(&self) -> Option<&str> {
        self.scope_words().into_iter().find(|(k, _)| *k == "version").map(|(_, v)| v)
    }

    /// Judges the finding again from its figures and conditions ([`judge`]).
    pub fn rejudge(&mut self) {
        self.status =
            judge(self.severity, self.tested, self.failing, self.share, self.error_if.as_ref(), self.warn_if.as_ref());
    }
}

/// The training length the truncation checks cut at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Truncation {
    /// Tokens kept, >= 1 (default 32,768).
    pub max_length: u32,
    /// `right` keeps the first `max_length` tokens, `left` the last.
    pub side: &'static str,
}

impl Default for Truncation {
    fn default() -> Self {
        Self { max_length: 32_768, side: "right" }
    }
}

/// Every row of `check_findings_at_v1(max_length, side)`, with the default severities,
/// conditions and statuses, in the view's order.
///
/// Errors: the query fails (a database made by an older sphragis is migrated by any
/// writing command), or a row holds a severity, status or condition this binary does not
/// know (the views and this module disagree: a bug).
pub fn findings(conn: &Connection, truncation: Truncation) -> Result<Vec<Finding>> {
    // planned once (crate::db::run_into_temp): the union of every check view is most of
    // what `check` costs on a small database, and a prepared statement is planned twice
    const ROWS: &str = "sphragis_findings";
    // seven of its eight parts computed side by side first, on worker connections (parts.rs)
    let shadows = parts::in_parallel(conn)?;
    let verdict = crate::db::run_into_temp(
        conn,
        ROWS,
        &format!(
            "select check_name, area, severity, scope, tested, failing, share, error_if, warn_if, status, reason, \
             detail, drill_down from check_findings_at_v1({}::integer, {}::varchar) order by area, check_name, scope",
            truncation.max_length,
            crate::table::sql_literal(truncation.side)
        ),
    );
    if let Err(e) = verdict {
        return Err(shadows.explain(e));
    }
    drop(shadows);
    let found = read_findings(conn, ROWS);
    crate::db::drop_temp(conn, ROWS)?;
    found
}

/// The findings [`findings`] left in the temporary table `temp.main.<table>`, in its order.
fn read_findings(conn: &Connection, table: &str) -> Result<Vec<Finding>> {
    let mut stmt = conn.prepare(&format!("select * from temp.main.{table}"))?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<i64>>(4)?,
            r.get::<_, Option<i64>>(5)?,
            r.get::<_, Option<f64>>(6)?,
            r.get::<_, Option<String>>(7)?,
            r.get::<_, Option<String>>(8)?,
            r.get::<_, String>(9)?,
            r.get::<_, Option<String>>(10)?,
            r.get::<_, Option<String>>(11)?,
            r.get::<_, Option<String>>(12)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (
            check_name,
            area,
            severity,
            scope,
            tested,
            failing,
            share,
            error_if,
            warn_if,
            status,
            reason,
            detail,
            drill,
        ) = row?;
        let parse = |c: Option<String>| c.map(|c| Condition::parse(&c)).transpose();
        out.push(Finding {
            severity: Severity::parse(&severity)
                .with_context(|| format!("{check_name} [{scope}]: unknown severity {severity:?}"))?,
            status: Status::parse(&status)
                .with_context(|| format!("{check_name} [{scope}]: unknown status {status:?}"))?,
            error_if: parse(error_if).with_context(|| format!("{check_name} [{scope}]: error_if"))?,
            warn_if: parse(warn_if).with_context(|| format!("{check_name} [{scope}]: warn_if"))?,
            check_name,
            area,
            scope,
            tested,
            failing,
            share,
            reason,
            detail,
            drill_down: drill,
            baseline: None,
        });
    }
    Ok(out)
}

/// One check of the default suite: its name, area and what it finds (the SQL file that
/// computes it documents the figures).
#[derive(Debug, Clone, Copy)]
pub struct CheckInfo {
    pub name: &'static str,
    pub area: &'static str,
    /// The view in `sql/checks/` that computes it.
    pub view: &'static str,
    pub about: &'static str,
}

macro_rules! checks {
    ($($name:literal, $area:literal, $view:literal, $about:literal;)*) => {
        &[$(CheckInfo { name: $name, area: $area, view: $view, about: $about }),*]
    };
}

/// Every check of the default suite, by area. A test holds it equal to the checks
/// `check_findings_at_v1` gives on an empty database (each one row, not run).
pub const CHECKS: &[CheckInfo] = checks![
    "ingest_anomalies", "ingest", "check_ingest_v1", "records holding lone surrogates, NaN, NUL or control characters";
    "suggested_edit_kept", "review", "check_review_v1", "kept examples whose target is a reviewer's suggested edit";
    "robot_comments_kept", "review", "check_review_v1", "kept examples whose prompt holds a robot comment (an analyzer's finding)";
    "target_in_comment_kept", "review", "check_review_v1", "kept examples whose target a reviewer typed into a comment";
    "reconciliation", "review", "check_review_v1", "windows whose counts do not reconcile with the base version";
    "fence_selectors_disagree", "review", "check_review_v1", "examples where the strict fence rule and the report-only selectors disagree";
    "label_audit_valid_share", "review", "check_review_v1", "label-audit items rated not valid, of those the version keeps";
    "label_items_unknown_example", "review", "check_review_v1", "label-audit items whose example the corpus does not hold";
    "split_criteria_no_information", "review", "check_review_v1", "split criteria computed on no information";
    "frozen_version_verifies", "review", "check_review_v1", "the latest verify --reproduce of a frozen version found a difference";
    "frozen_orgs_left_out", "review", "check_review_v1", "orgs with kept examples that the freeze left out";
    "contract_lengths", "sft", "check_sft_contract_v1", "views whose ids and mask differ in length";
    "contract_vocab", "sft", "check_sft_contract_v1", "views with an id outside the vocabulary";
    "contract_mask_values", "sft", "check_sft_contract_v1", "views with a mask value other than 0 or 1";
    "contract_spans", "sft", "check_sft_contract_v1", "views whose message spans are unsorted, overlapping or outside the ids";
    "contract_supervised_in_kept_assistant", "sft", "check_sft_contract_v1", "views supervising a position outside a kept assistant message";
    "contract_keep_msgs_assistant", "sft", "check_sft_contract_v1", "views whose keep_msgs name a message that is not an assistant's";
    "contract_ledger", "sft", "check_sft_contract_v1", "views whose claimed counts differ from the recomputed ones";
    "contract_declared_sha256", "sft", "check_sft_contract_v1", "views whose declared source file SHA-256 differs";
    "contract_same_tokens", "sft", "check_sft_contract_v1", "views of one instance with different token sequences";
    "contract_trains_nothing", "sft", "check_sft_contract_v1", "views with no supervised position";
    "contract_kept_message_trains_nothing", "sft", "check_sft_contract_v1", "views with a kept assistant message that has no supervised position";
    "header_only_supervision", "sft", "check_sft_pools_v1", "assistant messages supervised only in their role header";
    "mask_conventions_disagree", "sft", "check_sft_pools_v1", "views whose mask convention is not their pool's";
    "segment_pattern_deviation", "sft", "check_sft_pools_v1", "views whose segment supervision deviates from their pool's";
    "end_of_turn_never_trained", "sft", "check_sft_pools_v1", "views that never supervise the end-of-turn token";
    "duplicate_supervised_positions", "sft", "check_sft_pools_v1", "supervised positions trained more than once before dedup";
    "recovery_concentration", "sft", "check_sft_pools_v1", "share of recovery supervision held by the 3 longest views";
    "protected_family_in_training", "sft", "check_sft_pools_v1", "training views of a protected (held-out benchmark) family";
    "family_undetermined", "sft", "check_sft_pools_v1", "training views whose family cannot be told";
    "outcome_infra_failures", "sft", "check_sft_pools_v1", "evaluator reports of the corpus that graded a broken environment";
    "pack_attention_crosses", "sft", "check_sft_packs_v1", "rows packing conversations with no boundary: each attends to the ones before";
    "pack_instances_unattributed", "sft", "check_sft_packs_v1", "packed rows naming fewer instances than conversations";
    "pack_boundaries_off_turns", "sft", "check_sft_packs_v1", "packed rows whose boundaries do not match their message spans or positions";
    "pack_padding_supervised", "sft", "check_sft_packs_v1", "packed rows that supervise padding";
    "pack_supervision_crosses", "sft", "check_sft_packs_v1", "packed rows supervising a conversation's first position, scored from the one before";
    "pack_ledger", "sft", "check_sft_packs_v1", "packed rows whose claimed counts differ from the row's";
    "trajectory_attempts", "sft", "check_sft_attempts_v1", "trajectories of instances with several attempts, and the unresolved ones";
    "identical_attempts", "sft", "check_sft_attempts_v1", "attempts whose messages equal an earlier attempt of the instance";
    "trains_nothing_after_truncation", "sft", "check_sft_truncation_at_v1", "training views that train nothing once truncated";
    "final_report_lost_after_truncation", "sft", "check_sft_truncation_at_v1", "training views whose supervised final report truncation cuts";
    "instances_without_outcome", "eval", "check_eval_v1", "instances of a run that no file grades";
    "evaluator_errors_counted", "eval", "check_eval_v1", "ungraded instances (errors, infra failures, not run) a run report counts in its denominator";
    "infra_failures", "eval", "check_eval_v1", "instances whose environment broke: left out of the graded rate";
    "implied_unresolved", "eval", "check_eval_v1", "instances counted unresolved only because a run-level list omits them";
    "outcome_sources_disagree", "eval", "check_eval_v1", "instances whose outcome files disagree";
    "rerun_after_retry_error", "eval", "check_eval_v1", "instances re-run in a later batch after a RetryError";
    "continued_run", "eval", "check_eval_v1", "runs that continue another: never independent repeats";
    "populations_differ", "eval", "check_eval_v1", "runs whose run report and trajectories cover different instances";
    "grader_flakes", "eval", "check_eval_v1", "instances the evaluator graded twice with different verdicts";
    "pair_attrition", "eval", "check_eval_v1", "instances graded by only one run of a compared pair";
    "run_log_unfinished", "eval", "check_eval_v1", "Inspect logs of the run that say it was cancelled or raised";
];

/// The areas a check belongs to.
pub const AREAS: &[&str] = &["review", "sft", "eval", "ingest"];

/// Sorts findings for printing: failures first, then warnings, not-run, info and passes;
/// within a status by area, check and scope.
pub fn sort_for_print(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (a.status.rank(), &a.area, &a.check_name, &a.scope).cmp(&(b.status.rank(), &b.area, &b.check_name, &b.scope))
    });
}

/// Counts of each status, in print order: `[fail, warn, not-run, info, pass]`.
pub fn tally(findings: &[Finding]) -> [usize; 5] {
    let mut counts = [0; 5];
    for f in findings {
        counts[f.status.rank() as usize] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_parse_with_or_without_their_field() {
        let c = Condition::parse("> 0").unwrap();
        assert_eq!((c.field, c.op, c.value), (Field::Failing, Op::Gt, 0.0));
        assert_eq!(c.to_string(), "failing > 0");
        let c = Condition::parse("  share>=0.05 ").unwrap();
        assert_eq!((c.field, c.op, c.value), (Field::Share, Op::Ge, 0.05));
        assert_eq!(c.to_string(), "share >= 0.05");
        assert_eq!(Condition::parse("failing != 3").unwrap().op, Op::Ne);
        assert_eq!(Condition::parse("<= 1.5").unwrap().op, Op::Le);
        for bad in ["", "> ", "0", "share", ">> 1", "> -1", "> 1e3", "> nan", "> inf", "> 1.", "> .5", "rows > 1"] {
            assert!(Condition::parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn conditions_hold_on_their_figure_and_never_on_an_unknown_one() {
        let share = Condition::parse("share > 0.5").unwrap();
        assert!(share.holds(Some(1), Some(0.51)));
        assert!(!share.holds(Some(100), Some(0.5)));
        assert!(!share.holds(Some(1), None));
        let failing = Condition::parse("> 0").unwrap();
        assert!(failing.holds(Some(1), None));
        assert!(!failing.holds(Some(0), Some(0.0)));
        assert!(!failing.holds(None, None));
        assert!(Condition::parse("= 2").unwrap().holds(Some(2), None));
    }

    #[test]
    fn judge_follows_the_status_rule() {
        let gt0 = Condition::parse("> 0").unwrap();
        let half = Condition::parse("share > 0.5").unwrap();
        let j = |sev, tested: Option<i64>, failing: i64, e: Option<&Condition>, w: Option<&Condition>| {
            let share = tested.map(|t: i64| failing as f64 / t as f64);
            judge(sev, tested, Some(failing), share, e, w)
        };
        // nothing tested is never a pass
        assert_eq!(judge(Severity::Error, None, None, None, Some(&gt0), None), Status::NotRun);
        assert_eq!(j(Severity::Error, Some(0), 0, Some(&gt0), None), Status::NotRun);
        assert_eq!(j(Severity::Error, Some(4), 1, Some(&gt0), None), Status::Fail);
        assert_eq!(j(Severity::Error, Some(4), 0, Some(&gt0), None), Status::Pass);
        // an error check whose error condition does not hold but whose warn condition does
        assert_eq!(j(Severity::Error, Some(4), 1, Some(&half), Some(&gt0)), Status::Warn);
        assert_eq!(j(Severity::Error, Some(4), 3, Some(&half), Some(&gt0)), Status::Fail);
        // a warn check never fails, whichever condition holds
        assert_eq!(j(Severity::Warn, Some(4), 3, Some(&gt0), None), Status::Warn);
        assert_eq!(j(Severity::Warn, Some(4), 1, None, Some(&half)), Status::Pass);
        // info reports without gating
        assert_eq!(j(Severity::Info, Some(4), 1, None, Some(&gt0)), Status::Info);
        assert_eq!(j(Severity::Info, Some(4), 0, None, Some(&gt0)), Status::Pass);
    }

    #[test]
    fn fail_on_warn_also_fails_warnings() {
        assert!(FailOn::Error.fails(Status::Fail));
        assert!(!FailOn::Error.fails(Status::Warn));
        assert!(FailOn::Warn.fails(Status::Warn));
        for s in [Status::NotRun, Status::Info, Status::Pass] {
            assert!(!FailOn::Warn.fails(s) && !FailOn::Error.fails(s), "{s:?}");
        }
    }
}
