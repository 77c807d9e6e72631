//! SWE-bench harness outcomes (`report.json`): the evaluator's verdict for one task
//! attempt, read by `load outcomes` and `load run`.
//!
//! What the harness writes (`swebench.harness.grading.get_eval_report`, dumped by
//! `run_evaluation` as `<log dir>/<instance_id>/report.json`): one object keyed by the
//! instance id, holding the booleans `patch_is_None`, `patch_exists`,
//! `patch_successfully_applied` and `resolved`, since SWE-bench PR #594 `infra_failure`
//! (with `infra_failure_reason` when a log signature was found), and — only when the
//! patch applied —
//! `tests_status`: `FAIL_TO_PASS`, `PASS_TO_PASS`, `FAIL_TO_FAIL`, `PASS_TO_FAIL`, each
//! `{"success": [test ids], "failure": [test ids]}`. sb-cli and SWE-smith write the same
//! fields flat (no instance key; SWE-smith writes `tests_status: null` when nothing ran).
//!
//! The reader is strict in those terms: another shape, a field the harness never
//! writes, a missing or non-boolean `resolved`, a key that appears twice in one object
//! (Python's `json` keeps the last; which one the evaluator meant is unknowable), and a
//! nested report keyed by another instance than the folder it is filed under are
//! refused, each with the file, the line of the field and the field.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};

use super::formats::access::{Loc, join, kind};
use crate::ingest::InputError;

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
    /// `patch_is_None`, when present: the prediction had no patch.
    pub patch_is_none: Option<bool>,
    /// `infra_failure`, when present (SWE-bench #594): the environment broke, so the
    /// verdict says nothing of the model.
    pub infra_failure: Option<bool>,
    /// `infra_failure_reason`, when present (e.g. `out_of_memory`; also written for an
    /// ambiguous signature with `infra_failure: false`).
    pub infra_failure_reason: Option<String>,
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

/// A `report.json` read: the instance it is for and the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The instance: the key of the harness's nested layout, else the name of the folder
    /// holding the file (`logs/<id>/report.json`); `None` for a flat report with no
    /// folder to name it.
    pub instance_id: Option<String>,
    /// True for the harness's nested layout `{"<id>": {...}}`.
    pub nested: bool,
    /// The verdict.
    pub outcome: Outcome,
}

/// The fields a harness report object may hold.
const REPORT_FIELDS: [&str; 7] = [
    "patch_is_None",
    "patch_exists",
    "patch_successfully_applied",
    "resolved",
    "infra_failure",
    "infra_failure_reason",
    "tests_status",
];

/// The lists of `tests_status`.
const TEST_LISTS: [&str; 4] = ["FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"];

/// Fields of a trajectory row (which may carry `resolved` too) that no report has.
pub const TRAJECTORY_FIELDS: [&str; 4] = ["instance_id", "messages", "trajectory", "history"];

/// True when `v` has the shape of a per-instance report (flat: an object with a report
/// field and none of a trajectory's `instance_id`, `messages`, `trajectory`, `history`;
/// nested: one key holding such an object), so that a run's file reader hands it to
/// [`read_report`] — which then says what is wrong with it — rather than to the
/// trajectory readers.
pub fn looks_like_report(v: &Value) -> bool {
    let has_field = |o: &Map<String, Value>| {
        REPORT_FIELDS.iter().any(|f| o.contains_key(*f)) && !TRAJECTORY_FIELDS.iter().any(|f| o.contains_key(*f))
    };
    match v {
        Value::Object(o) if has_field(o) => true,
        Value::Object(o) if o.len() == 1 => o.values().next().and_then(Value::as_object).is_some_and(has_field),
        _ => false,
    }
}

/// Read a SWE-bench harness `report.json` (see the module doc for the layouts) and
/// return its verdict. Counts are numbers of test ids.
///
/// Errors (file, line, field): see [`read_report`].
pub fn read_swebench_report(path: &Path, text: &str) -> Result<Outcome> {
    Ok(read_report(path, text)?.outcome)
}

/// Read a SWE-bench `report.json` whole: the instance it is for and its verdict.
///
/// Errors, each naming the file, the line and the field: not JSON; a key twice in one
/// object; not an object, or an object that is neither the nested layout (one instance
/// key holding a report) nor a flat report; a field the harness never writes (in the
/// report, in `tests_status` or in one of its lists); `resolved` missing or not a
/// boolean; `patch_*` not a boolean; a test list that is not an array of test ids;
/// `tests_status` missing on a resolved report, or without `FAIL_TO_PASS` /
/// `PASS_TO_PASS`; a nested report in a file named `report.json` keyed by an instance
/// other than its folder's name (the harness files `report.json` under
/// `<instance_id>/`).
pub fn read_report(path: &Path, text: &str) -> Result<Report> {
    read_report_filed(path, text, None)
}

/// [`read_report`] of a report whose place names its instance otherwise than by its folder:
/// `filed` is `(instance, what names it)` (an AutoCodeRover task folder `<id>_<time>/` names
/// it in its `meta.json`). A flat report is of that instance; a report keyed by another is
/// refused, naming `what`.
pub fn read_report_filed(path: &Path, text: &str, filed: Option<(&str, &str)>) -> Result<Report> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    // a BOM is not a line: lines count the same without it
    let v: Value = serde_json::from_str(body).map_err(|e| {
        InputError::at(path, Some(e.line().max(1) as u64), None, format!("not a JSON report.json: {e}"))
    })?;
    let lines = field_lines(path, body)?;
    let at = |field: &str| Located { path, lines: &lines, field: field.to_string() };
    let Some(top) = v.as_object() else {
        return Err(at("").err(format!("expected a SWE-bench report object, got {}", kind(&v))));
    };
    let flat = REPORT_FIELDS.iter().any(|f| top.contains_key(*f));
    let (base, obj) = match top.iter().next() {
        _ if flat => (String::new(), top),
        Some((key, Value::Object(inner))) if top.len() == 1 => (key.clone(), inner),
        _ => {
            return Err(at("").err(
                "unknown shape: expected the harness's {\"<instance_id>\": {\"resolved\": ..., ...}} or a flat \
                 report with `resolved`",
            ));
        }
    };
    let folder = match filed {
        Some((instance, _)) => Some(instance.to_string()),
        None => path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()),
    };
    let instance_id = if flat {
        folder
    } else {
        let filed_under = path.file_name().is_some_and(|n| n == "report.json");
        if let (true, Some(folder)) = (filed_under, &folder)
            && *folder != base
        {
            if let Some((instance, named_by)) = filed {
                return Err(
                    at(&base).err(format!("the report is for instance {base}, but {named_by} names {instance}"))
                );
            }
            return Err(at(&base).err(format!(
                "the report is for instance {base} but is filed under {folder}/ (the harness writes \
                 <instance_id>/report.json); move it to {base}/report.json or rename the file"
            )));
        }
        Some(base.clone())
    };
    for key in obj.keys() {
        if !REPORT_FIELDS.contains(&key.as_str()) {
            return Err(at(&join(&base, key))
                .err(format!("not a field of a SWE-bench report (it has {})", REPORT_FIELDS.join(", "))));
        }
    }
    let boolean = |key: &str| -> Result<Option<bool>> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(at(&join(&base, key)).err(format!("expected true or false, got {}", kind(v)))),
        }
    };
    let resolved = boolean("resolved")?.ok_or_else(|| at(&join(&base, "resolved")).err("missing"))?;
    let patch_is_none = boolean("patch_is_None")?;
    boolean("patch_exists")?;
    let patch_applied = boolean("patch_successfully_applied")?;
    let infra_failure = boolean("infra_failure")?;
    if resolved && infra_failure == Some(true) {
        return Err(at(&join(&base, "infra_failure"))
            .err("true on a resolved report: an instance whose environment broke cannot be resolved"));
    }
    if resolved && patch_is_none == Some(true) {
        return Err(at(&join(&base, "patch_is_None"))
            .err("true on a resolved report: a prediction with no patch cannot resolve the instance"));
    }
    let infra_failure_reason = match obj.get("infra_failure_reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(r)) => Some(r.clone()),
        Some(v) => {
            return Err(
                at(&join(&base, "infra_failure_reason")).err(format!("expected a reason (text), got {}", kind(v)))
            );
        }
    };
    let tp = join(&base, "tests_status");
    // SWE-bench writes no tests_status when the patch is None or did not apply
    // (grading.get_eval_report), SWE-smith writes null: no test ran; not graded.
    let empty = Map::new();
    let (ts, graded) = match obj.get("tests_status") {
        Some(Value::Object(t)) => (t, true),
        Some(Value::Null) | None if !resolved => (&empty, false),
        Some(Value::Null) | None => return Err(at(&tp).err("missing on a resolved report")),
        Some(v) => return Err(at(&tp).err(format!("expected an object of test lists, got {}", kind(v)))),
    };
    for key in ts.keys() {
        if !TEST_LISTS.contains(&key.as_str()) {
            return Err(
                at(&join(&tp, key)).err(format!("not a test list of tests_status (it has {})", TEST_LISTS.join(", ")))
            );
        }
    }
    let counts = |key: &str| -> Result<Option<TestCounts>> {
        let ep = join(&tp, key);
        let e = match ts.get(key) {
            None => return Ok(if ts.is_empty() { Some(TestCounts::default()) } else { None }),
            Some(Value::Object(e)) => e,
            Some(v) => {
                return Err(at(&ep).err(format!("expected an object with success and failure, got {}", kind(v))));
            }
        };
        let n = |k: &str| -> Result<usize> {
            let p = join(&ep, k);
            match e.get(k) {
                None => Ok(0),
                Some(Value::Array(a)) => {
                    if let Some((i, item)) = a.iter().enumerate().find(|(_, item)| !item.is_string()) {
                        return Err(at(&p).err(format!("item {i}: expected a test id (a string), got {}", kind(item))));
                    }
                    Ok(a.len())
                }
                Some(v) => Err(at(&p).err(format!("expected an array of test ids, got {}", kind(v)))),
            }
        };
        if let Some(k) = e.keys().find(|k| *k != "success" && *k != "failure") {
            return Err(at(&join(&ep, k)).err("not a field of a test list (it has success, failure)"));
        }
        Ok(Some(TestCounts { success: n("success")?, failure: n("failure")? }))
    };
    let outcome = Outcome {
        resolved,
        patch_applied,
        patch_is_none,
        infra_failure,
        infra_failure_reason,
        graded,
        fail_to_pass: counts("FAIL_TO_PASS")?.ok_or_else(|| at(&join(&tp, "FAIL_TO_PASS")).err("missing"))?,
        pass_to_pass: counts("PASS_TO_PASS")?.ok_or_else(|| at(&join(&tp, "PASS_TO_PASS")).err("missing"))?,
        fail_to_fail: counts("FAIL_TO_FAIL")?,
        pass_to_fail: counts("PASS_TO_FAIL")?,
    };
    Ok(Report { instance_id, nested: !flat, outcome })
}

/// Refuses a JSON document (already known to parse) in which one object holds a key twice:
/// Python's `json` keeps the last, so which one the producer meant is unknowable. Used for
/// run-level reports, pools files and split manifests too.
///
/// Errors: `file:line: field \`a.b\`: duplicate key (first on line N)`.
pub fn refuse_duplicate_keys(path: &Path, text: &str) -> Result<()> {
    field_lines(path, text.strip_prefix('\u{feff}').unwrap_or(text)).map(|_| ())
}

/// A field of the report being read, for errors: the line is that of the field's key,
/// else of its nearest enclosing field's key, else 1.
struct Located<'a> {
    path: &'a Path,
    lines: &'a BTreeMap<String, u64>,
    field: String,
}

impl Located<'_> {
    fn err(&self, message: impl std::fmt::Display) -> anyhow::Error {
        let mut f = self.field.as_str();
        let line = loop {
            if let Some(l) = self.lines.get(f) {
                break *l;
            }
            match f.rfind('.') {
                Some(i) => f = &f[..i],
                None => break 1,
            }
        };
        let loc = Loc::file(self.path).line(line);
        loc.err(&self.field, message)
    }
}

/// The line of every object key of a JSON document, by dotted field path (array items
/// are not named: `a.b`, never `a[0].b`; what is under an array is left out), and a
/// refusal of a key repeated in one object. `text` must already parse as JSON (the
/// scan does not validate it); a scan that runs off the text is reported, never a panic.
///
/// Errors: `field: duplicate key (first on line N)` at the repeated key's line.
fn field_lines(path: &Path, text: &str) -> Result<BTreeMap<String, u64>> {
    let mut scan = Scan { text, at: 0, line: 1 };
    let mut out = BTreeMap::new();
    scan.value(path, Some(""), &mut out)?;
    Ok(out)
}

/// A cursor over JSON text that counts lines.
struct Scan<'t> {
    text: &'t str,
    at: usize,
    line: u64,
}

impl<'t> Scan<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn space(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            self.at += 1;
        }
    }

    fn cut(&self, path: &Path) -> anyhow::Error {
        InputError::at(path, Some(self.line), None, "the JSON ends early").into()
    }

    /// Skips a string, returning its raw text with the quotes.
    fn string(&mut self, path: &Path) -> Result<&'t str> {
        let start = self.at;
        self.at += 1;
        loop {
            match self.peek() {
                None => return Err(self.cut(path)),
                Some(b'\\') => self.at += 2,
                Some(b'"') => {
                    self.at += 1;
                    break;
                }
                Some(_) => self.at += 1,
            }
        }
        let text: &'t str = self.text;
        text.get(start..self.at).ok_or_else(|| self.cut(path))
    }

    /// Skips one value; `field` is its dotted path when it is named (not under an array).
    fn value(&mut self, path: &Path, field: Option<&str>, out: &mut BTreeMap<String, u64>) -> Result<()> {
        self.space();
        match self.peek() {
            None => Err(self.cut(path)),
            Some(b'{') => {
                self.at += 1;
                let mut seen: BTreeMap<String, u64> = BTreeMap::new();
                loop {
                    self.space();
                    match self.peek() {
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(());
                        }
                        Some(b',') => {
                            self.at += 1;
                            continue;
                        }
                        Some(b'"') => {}
                        _ => return Err(self.cut(path)),
                    }
                    let line = self.line;
                    let raw = self.string(path)?;
                    let key: String = serde_json::from_str(raw).map_err(|_| self.cut(path))?;
                    let named = field.map(|f| join(f, &key));
                    if let Some(first) = seen.insert(key.clone(), line) {
                        let shown = named.unwrap_or(key);
                        return Err(InputError::at(
                            path,
                            Some(line),
                            Some(&shown),
                            format!("duplicate key (first on line {first}): which value the writer meant is unknown"),
                        )
                        .into());
                    }
                    if let Some(n) = &named {
                        out.insert(n.clone(), line);
                    }
                    self.space();
                    if self.peek() != Some(b':') {
                        return Err(self.cut(path));
                    }
                    self.at += 1;
                    self.value(path, named.as_deref(), out)?;
                }
            }
            Some(b'[') => {
                self.at += 1;
                loop {
                    self.space();
                    match self.peek() {
                        Some(b']') => {
                            self.at += 1;
                            return Ok(());
                        }
                        Some(b',') => self.at += 1,
                        None => return Err(self.cut(path)),
                        Some(_) => self.value(path, None, out)?,
                    }
                }
            }
            Some(b'"') => self.string(path).map(|_| ()),
            Some(_) => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                        break;
                    }
                    self.at += 1;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The harness's own layout, as `json.dumps(report, indent=4)` writes it (one
    /// instance key; the four booleans; the four test lists).
    const HARNESS: &str = r#"{
    "django__django-11099": {
        "patch_is_None": false,
        "patch_exists": true,
        "patch_successfully_applied": true,
        "resolved": true,
        "tests_status": {
            "FAIL_TO_PASS": {
                "success": [
                    "test_ascii_validator (auth_tests.test_validators.UsernameValidatorsTests)"
                ],
                "failure": []
            },
            "PASS_TO_PASS": {
                "success": [
                    "test_help_text (auth_tests.test_validators.UserAttributeSimilarityValidatorTest)",
                    "test_validate (auth_tests.test_validators.UserAttributeSimilarityValidatorTest)"
                ],
                "failure": []
            },
            "FAIL_TO_FAIL": {
                "success": [],
                "failure": []
            },
            "PASS_TO_FAIL": {
                "success": [],
                "failure": []
            }
        }
    }
}"#;

    fn read(path: &str, text: &str) -> Result<Report> {
        read_report(Path::new(path), text)
    }

    /// The error `text` filed at `path` gets, as the CLI prints it.
    fn refused(path: &str, text: &str) -> String {
        format!("{:#}", read(path, text).expect_err("refused"))
    }

    #[test]
    fn harness_layout_reads_with_its_instance_and_counts() {
        let r = read("logs/django__django-11099/report.json", HARNESS).unwrap();
        assert_eq!(r.instance_id.as_deref(), Some("django__django-11099"));
        assert!(r.nested && r.outcome.resolved && r.outcome.graded);
        assert_eq!(r.outcome.patch_applied, Some(true));
        assert_eq!(r.outcome.fail_to_pass, TestCounts { success: 1, failure: 0 });
        assert_eq!(r.outcome.pass_to_pass, TestCounts { success: 2, failure: 0 });
        assert_eq!(r.outcome.fail_to_fail, Some(TestCounts::default()));
    }

    #[test]
    fn patch_that_did_not_apply_reads_ungraded() {
        // get_eval_report returns before tests_status when the patch did not apply;
        // SWE-smith writes tests_status null
        for text in [
            r#"{"a__a-1": {"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": false, "resolved": false}}"#,
            r#"{"patch_exists": false, "resolved": false, "tests_status": null}"#,
        ] {
            let r = read("logs/a__a-1/report.json", text).unwrap();
            assert_eq!(
                (r.instance_id.as_deref(), r.outcome.resolved, r.outcome.graded),
                (Some("a__a-1"), false, false)
            );
        }
    }

    /// Hostile input: a report saying both `resolved: true` and `patch_is_None: true` was read
    /// as resolved by `load outcomes` and as an empty patch by `load run` (which puts the empty
    /// patch first): a contradiction, refused at its field as `infra_failure` is.
    #[test]
    fn resolved_report_without_a_patch_is_refused() {
        let text = r#"{"a__a-1": {"patch_is_None": true, "patch_exists": false, "resolved": true,
            "tests_status": {}}}"#;
        let err = refused("logs/a__a-1/report.json", text);
        assert_eq!(
            err,
            "logs/a__a-1/report.json:1: field `a__a-1.patch_is_None`: true on a resolved report: a prediction \
             with no patch cannot resolve the instance"
        );
        // unresolved with no patch is what the harness writes, and reads
        let r = read("logs/a__a-1/report.json", &text.replace("\"resolved\": true", "\"resolved\": false")).unwrap();
        assert_eq!((r.outcome.resolved, r.outcome.patch_is_none), (false, Some(true)));
    }

    #[test]
    fn report_keyed_by_another_instance_than_its_folder_is_refused() {
        let err = refused("logs/django__django-11133/report.json", HARNESS);
        assert!(
            err.starts_with("logs/django__django-11133/report.json:2: field `django__django-11099`: the report is for instance django__django-11099 but is filed under django__django-11133/"),
            "{err}"
        );
        // a nested report under another file name names its instance by its key
        let r = read("reports/django__django-11099.json", HARNESS).unwrap();
        assert_eq!(r.instance_id.as_deref(), Some("django__django-11099"));
    }

    #[test]
    fn duplicate_keys_are_refused_with_both_lines() {
        let text = HARNESS
            .replace("        \"resolved\": true,\n", "        \"resolved\": true,\n        \"resolved\": false,\n");
        let err = refused("logs/django__django-11099/report.json", &text);
        assert_eq!(
            err,
            "logs/django__django-11099/report.json:7: field `django__django-11099.resolved`: duplicate key (first on \
             line 6): which value the writer meant is unknown"
        );
        // twice at the top: two reports in one file
        let err = refused(
            "x/report.json",
            "{\"x\": {\"resolved\": true, \"tests_status\": {}},\n \"x\": {\"resolved\": false}}",
        );
        assert!(err.starts_with("x/report.json:2: field `x`: duplicate key (first on line 1)"), "{err}");
        // inside a test list's object, and under an array
        let err = refused(
            "a/report.json",
            "{\"resolved\": false,\n \"tests_status\": {\"FAIL_TO_PASS\": {\"success\": [], \"success\": []}, \"PASS_TO_PASS\": {}}}",
        );
        assert!(err.starts_with("a/report.json:2: field `tests_status.FAIL_TO_PASS.success`: duplicate key"), "{err}");
    }

    #[test]
    fn missing_resolved_is_refused_at_its_report() {
        let text = HARNESS.replace("        \"resolved\": true,\n", "");
        let err = refused("logs/django__django-11099/report.json", &text);
        assert_eq!(err, "logs/django__django-11099/report.json:2: field `django__django-11099.resolved`: missing");
    }

    #[test]
    fn non_boolean_resolved_is_refused() {
        for (value, got) in [("\"true\"", "a string"), ("1", "a number"), ("null", "null")] {
            let text = HARNESS.replace("\"resolved\": true", &format!("\"resolved\": {value}"));
            let err = refused("logs/django__django-11099/report.json", &text);
            assert_eq!(
                err,
                format!(
                    "logs/django__django-11099/report.json:6: field `django__django-11099.resolved`: expected true or \
                     false, got {got}"
                )
            );
        }
        let err = refused("a/report.json", r#"{"patch_exists": "yes", "resolved": false}"#);
        assert_eq!(err, "a/report.json:1: field `patch_exists`: expected true or false, got a string");
    }

    #[test]
    fn unknown_shapes_are_refused() {
        for (text, field, says) in [
            ("[]", None, "expected a SWE-bench report object, got an array"),
            ("{}", None, "unknown shape"),
            (r#"{"a": {"resolved": true}, "b": {"resolved": false}}"#, None, "unknown shape"),
            (r#"{"a": true}"#, None, "unknown shape"),
            (r#"{"a": {"status": "RESOLVED_FULL"}}"#, Some("a.status"), "not a field of a SWE-bench report"),
            (r#"{"resolved": false, "score": 1}"#, Some("score"), "not a field of a SWE-bench report"),
            (
                r#"{"resolved": true, "tests_status": {"FAIL_TO_PASS": {}, "PASS_TO_PASS": {}, "F2P": {}}}"#,
                Some("tests_status.F2P"),
                "not a test list of tests_status",
            ),
            (
                r#"{"resolved": true, "tests_status": {"FAIL_TO_PASS": {"passed": []}, "PASS_TO_PASS": {}}}"#,
                Some("tests_status.FAIL_TO_PASS.passed"),
                "not a field of a test list",
            ),
            (
                r#"{"resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": 3}, "PASS_TO_PASS": {}}}"#,
                Some("tests_status.FAIL_TO_PASS.success"),
                "expected an array of test ids, got a number",
            ),
            (
                r#"{"resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": [1]}, "PASS_TO_PASS": {}}}"#,
                Some("tests_status.FAIL_TO_PASS.success"),
                "item 0: expected a test id (a string), got a number",
            ),
            (r#"{"resolved": true, "tests_status": []}"#, Some("tests_status"), "expected an object of test lists"),
            (r#"{"resolved": true}"#, Some("tests_status"), "missing on a resolved report"),
            (
                r#"{"resolved": true, "tests_status": {"FAIL_TO_PASS": {}}}"#,
                Some("tests_status.PASS_TO_PASS"),
                "missing",
            ),
        ] {
            let err = refused("a/report.json", text);
            let prefix = match field {
                Some(f) => format!("a/report.json:1: field `{f}`: {says}"),
                None => format!("a/report.json:1: {says}"),
            };
            assert!(err.starts_with(&prefix), "{text}: {err}");
        }
        let err = refused("a/report.json", "{\"resolved\": tru");
        assert!(err.starts_with("a/report.json:1: not a JSON report.json: "), "{err}");
    }

    #[test]
    fn trajectory_rows_do_not_look_like_reports() {
        let v: Value = serde_json::from_str(r#"{"instance_id": "a", "resolved": true, "messages": []}"#).unwrap();
        assert!(!looks_like_report(&v));
        for text in [HARNESS, r#"{"resolved": "yes"}"#, r#"{"x": {"patch_exists": true}}"#] {
            assert!(looks_like_report(&serde_json::from_str(text).unwrap()), "{text}");
        }
    }

    /// SWE-bench #594's fields are read; an infra failure on a resolved report and a
    /// reason that is not text are refused at their field.
    #[test]
    fn infra_failure_fields_are_read_and_contradictions_refused() {
        let text = "{\"a__b-1\": {\"patch_is_None\": false, \"patch_exists\": true,\n \"patch_successfully_applied\": false, \"resolved\": false,\n \"infra_failure\": true, \"infra_failure_reason\": \"out_of_memory\"}}";
        let r = read("logs/a__b-1/report.json", text).unwrap();
        assert_eq!(r.outcome.infra_failure, Some(true));
        assert_eq!(r.outcome.infra_failure_reason.as_deref(), Some("out_of_memory"));
        assert_eq!((r.outcome.patch_is_none, r.outcome.graded), (Some(false), false));
        let bad = text.replace(
            "\"resolved\": false",
            "\"resolved\": true, \"tests_status\": {\"FAIL_TO_PASS\": {}, \"PASS_TO_PASS\": {}}",
        );
        let err = refused("logs/a__b-1/report.json", &bad);
        assert!(
            err.starts_with("logs/a__b-1/report.json:3: field `a__b-1.infra_failure`: true on a resolved"),
            "{err}"
        );
        let bad = text.replace("\"out_of_memory\"", "7");
        let err = refused("logs/a__b-1/report.json", &bad);
        assert!(err.contains("field `a__b-1.infra_failure_reason`: expected a reason (text), got a number"), "{err}");
    }
}
