//! SWE-bench harness outcomes (`report.json`): the evaluator's verdict for one task
//! attempt, read by `load outcomes` and `load run`.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;

use super::formats::access::{Loc, as_object, get, join, kind, opt_bool, parse_json_file};

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
    let mut obj = as_object(&loc, v, "")?;
    let mut base = String::new();
    if !obj.contains_key("resolved") && obj.len() == 1 {
        let (k, inner) = obj.iter().next().expect("one key");
        base = k.clone();
        obj = as_object(&loc, inner, &base)?;
    }
    let resolved =
        opt_bool(&loc, obj, "resolved", &base)?.ok_or_else(|| loc.err(&join(&base, "resolved"), "missing"))?;
    let patch_applied = opt_bool(&loc, obj, "patch_successfully_applied", &base)?;
    let tp = join(&base, "tests_status");
    // SWE-bench writes no tests_status when the patch is None or did not apply
    // (grading.get_eval_report): no test ran; the outcome is not graded.
    let empty = serde_json::Map::new();
    let ts = match get(obj, "tests_status") {
        Some(t) => as_object(&loc, t, &tp)?,
        None if !resolved => &empty,
        None => return Err(loc.err(&tp, "missing on a resolved report")),
    };
    let counts = |key: &str| -> Result<Option<TestCounts>> {
        let Some(e) = get(ts, key) else {
            return Ok(if ts.is_empty() { Some(TestCounts::default()) } else { None });
        };
        let ep = join(&tp, key);
        let e = as_object(&loc, e, &ep)?;
        let n = |k: &str| -> Result<usize> {
            match get(e, k) {
                None => Ok(0),
                Some(Value::Array(a)) => Ok(a.len()),
                Some(v) => Err(loc.err(&join(&ep, k), format!("expected an array, got {}", kind(v)))),
            }
        };
        Ok(Some(TestCounts { success: n("success")?, failure: n("failure")? }))
    };
    Ok(Outcome {
        resolved,
        patch_applied,
        graded: get(obj, "tests_status").is_some(),
        fail_to_pass: counts("FAIL_TO_PASS")?.ok_or_else(|| loc.err(&join(&tp, "FAIL_TO_PASS"), "missing"))?,
        pass_to_pass: counts("PASS_TO_PASS")?.ok_or_else(|| loc.err(&join(&tp, "PASS_TO_PASS"), "missing"))?,
        fail_to_fail: counts("FAIL_TO_FAIL")?,
        pass_to_fail: counts("PASS_TO_FAIL")?,
    })
}
