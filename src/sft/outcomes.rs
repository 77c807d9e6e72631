//! SWE-bench harness outcomes (`report.json`): the evaluator's verdict for one task
//! attempt, read by `load outcomes` and `load run`.

use std::path::Path;

use anyhow::Result;
use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::formats::access::{Loc, Object, from_value, join, parse_json_file};

/// Per-list counts of a SWE-bench `tests_status` entry (numbers of test ids).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TestCounts {
    pub success: usize,
    pub failure: usize,
}

/// The evaluator's verdict from a SWE-bench harness `report.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// `resolved`.
    pub resolved: bool,
    /// `patch_successfully_applied`, when present.
    pub patch_applied: Option<bool>,
    /// False when the report has no `tests_status` (SWE-bench writes none when the patch
    /// was None or did not apply): no test was graded, and the counts below are 0 only
    /// as placeholders — the store writes them as NULL, never as zero results.
    pub graded: bool,
    /// `tests_status.FAIL_TO_PASS`: the declared fail-to-pass tests.
    pub fail_to_pass: TestCounts,
    /// `tests_status.PASS_TO_PASS`.
    pub pass_to_pass: TestCounts,
    /// `tests_status.FAIL_TO_FAIL`, when present.
    pub fail_to_fail: Option<TestCounts>,
    /// `tests_status.PASS_TO_FAIL`, when present.
    pub pass_to_fail: Option<TestCounts>,
}

/// Read a SWE-bench harness `report.json`: `{resolved, patch_successfully_applied,
/// tests_status: {FAIL_TO_PASS: {success: [ids], failure: [ids]}, PASS_TO_PASS, ...}}`,
/// or the same object nested under its instance id (`{"<id>": {...}}`, the harness's
/// own layout). Counts are numbers of test ids. Errors name the file and field.
pub fn read_swebench_report(path: &Path, text: &str) -> Result<Outcome> {
    swebench_report_from_value(path, &parse_json_file(path, text)?)
}

/// [`read_swebench_report`] of an already parsed document.
pub fn swebench_report_from_value(path: &Path, v: &Value) -> Result<Outcome> {
    let loc = Loc::file(path);
    // the harness's own layout: the report under its instance id
    let (base, report) = match v.as_object() {
        Some(obj) if !obj.contains_key("resolved") && obj.len() == 1 => {
            let (k, inner) = obj.iter().next().expect("one key");
            (k.as_str(), inner)
        }
        _ => ("", v),
    };
    let report: Report = from_value(report).map_err(|r| loc.err(&join(base, &r.path), r.message))?;
    let tp = join(base, "tests_status");
    // SWE-bench writes no tests_status when the patch is None or did not apply
    // (grading.get_eval_report): no test ran; the outcome is not graded.
    let graded = report.tests_status.is_some();
    let status = match report.tests_status {
        Some(Object(status)) => status,
        None if !report.resolved => TestsStatus::default(),
        None => return Err(loc.err(&tp, "missing on a resolved report")),
    };
    let empty = status.is_empty();
    // an empty `tests_status` graded no list: every count is 0
    let counts = |lists: Option<Object<Lists>>| match lists {
        Some(Object(l)) => {
            Some(TestCounts { success: l.success.map_or(0, |s| s.len()), failure: l.failure.map_or(0, |f| f.len()) })
        }
        None if empty => Some(TestCounts::default()),
        None => None,
    };
    let required =
        |lists: Option<Object<Lists>>, key: &str| counts(lists).ok_or_else(|| loc.err(&join(&tp, key), "missing"));
    Ok(Outcome {
        resolved: report.resolved,
        patch_applied: report.patch_successfully_applied,
        graded,
        fail_to_pass: required(status.fail_to_pass, "FAIL_TO_PASS")?,
        pass_to_pass: required(status.pass_to_pass, "PASS_TO_PASS")?,
        fail_to_fail: counts(status.fail_to_fail),
        pass_to_fail: counts(status.pass_to_fail),
    })
}

/// A `report.json` (or the object under its instance id): the fields read.
#[derive(Deserialize)]
struct Report {
    resolved: bool,
    patch_successfully_applied: Option<bool>,
    tests_status: Option<Object<TestsStatus>>,
}

/// `tests_status`: the test lists per transition.
#[derive(Default, Deserialize)]
struct TestsStatus {
    #[serde(rename = "FAIL_TO_PASS")]
    fail_to_pass: Option<Object<Lists>>,
    #[serde(rename = "PASS_TO_PASS")]
    pass_to_pass: Option<Object<Lists>>,
    #[serde(rename = "FAIL_TO_FAIL")]
    fail_to_fail: Option<Object<Lists>>,
    #[serde(rename = "PASS_TO_FAIL")]
    pass_to_fail: Option<Object<Lists>>,
    /// Any other key (only whether there is one is read: see [`TestsStatus::is_empty`]).
    #[serde(flatten)]
    other: BTreeMap<String, IgnoredAny>,
}

impl TestsStatus {
    /// No list at all (`"tests_status": {}`).
    fn is_empty(&self) -> bool {
        self.fail_to_pass.is_none()
            && self.pass_to_pass.is_none()
            && self.fail_to_fail.is_none()
            && self.pass_to_fail.is_none()
            && self.other.is_empty()
    }
}

/// One transition's test ids (only counted; absent or null = none).
#[derive(Deserialize)]
struct Lists {
    success: Option<Vec<IgnoredAny>>,
    failure: Option<Vec<IgnoredAny>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Outcome> {
        read_swebench_report(Path::new("report.json"), text)
    }

    #[test]
    fn report_errors_name_the_field_under_the_instance_id() {
        let e = read(r#"{"x__y-1": {"patch_successfully_applied": true}}"#).unwrap_err().to_string();
        assert_eq!(e, "report.json: field `x__y-1.resolved`: missing");
        let e = read(r#"{"resolved": true}"#).unwrap_err().to_string();
        assert_eq!(e, "report.json: field `tests_status`: missing on a resolved report");
        let e = read(r#"{"resolved": false, "tests_status": {"FAIL_TO_PASS": {"success": "a"}, "PASS_TO_PASS": {}}}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "report.json: field `tests_status.FAIL_TO_PASS.success`: invalid type: string \"a\", expected an array"
        );
        let e = read(r#"{"resolved": false, "tests_status": {"PASS_TO_PASS": {}}}"#).unwrap_err().to_string();
        assert_eq!(e, "report.json: field `tests_status.FAIL_TO_PASS`: missing");
        let e = read(r#"[{"resolved": true}]"#).unwrap_err().to_string();
        assert_eq!(e, "report.json: invalid type: array, expected an object");
    }

    #[test]
    fn report_counts_test_ids_and_an_empty_status_grades_zero() {
        let o = read(
            r#"{"resolved": false, "tests_status": {"FAIL_TO_PASS": {"success": [1, "b"], "failure": null}, "PASS_TO_PASS": {"failure": ["c"]}, "FAIL_TO_FAIL": {}}}"#,
        )
        .unwrap();
        assert_eq!(
            (o.fail_to_pass, o.pass_to_pass),
            (TestCounts { success: 2, failure: 0 }, TestCounts { success: 0, failure: 1 })
        );
        assert_eq!((o.fail_to_fail, o.pass_to_fail, o.graded), (Some(TestCounts::default()), None, true));
        let o = read(r#"{"resolved": false, "tests_status": {}}"#).unwrap();
        assert_eq!(
            (o.graded, o.fail_to_pass, o.pass_to_fail),
            (true, TestCounts::default(), Some(TestCounts::default()))
        );
        let o = read(r#"{"resolved": false}"#).unwrap();
        assert_eq!((o.graded, o.fail_to_fail), (false, Some(TestCounts::default())));
    }
}
