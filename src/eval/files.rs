//! The shapes of a run's files, told apart by content, and their readers.
//!
//! | shape | what it is | how it is told |
//! |---|---|---|
//! | `exit-statuses` | mini-swe-agent batch `exit_statuses_<unix time>.yaml`: `instances_by_exit_status: {Status: [ids]}` | `.yaml` / `.yml` |
//! | `swebench-run-report` | SWE-bench harness run report (`make_run_report`, `schema_version` 2): `resolved_ids`, `unresolved_ids`, `empty_patch_ids`, `error_ids`, `incomplete_ids`, `infra_failure_ids`, `ambiguous_failure_ids`, `failure_reasons`, `completed_ids`, `submitted_ids` (+ `*_instances` counts) | a JSON object with `resolved_ids` and one of `empty_patch_ids`, `infra_failure_ids`, `ambiguous_failure_ids` |
//! | `sb-cli-run` | sb-cli run report: the same lists and `pending_ids`, `failed_ids` | a JSON object with `resolved_ids` |
//! | `sb-cli-counts` | sb-cli report with counts only (`total_instances`, `resolved_instances`, ...; sb-cli#27): run-level figures, no instance | `resolved_instances` is a number, no `resolved_ids` |
//! | `harness-summary` | older SWE-bench harness summary `{"resolved": [ids], ...}` | `resolved` is an array |
//! | `sb-cli-instance` | per-instance `report.json`, `resolved` at the top; the instance is its folder (`logs/<id>/report.json`) | `resolved` is a boolean |
//! | `swebench-report` | harness per-instance `report.json` keyed by id `{"<id>": {"resolved": ...}}` | one key holding an object with `resolved` |
//! | `inspect` | an Inspect AI log: a `.eval` archive or a `.json` log ([`super::inspect`]) | a zip (`PK\x03\x04`); a JSON object with a number `version` and `eval.task` |
//! | trajectories | any format [`detect_and_read`] reads | everything else |
//!
//! Per-instance reports are read by the SFT reader ([`read_report`]), strictly: a file with
//! the shape of one that the reader refuses is an error, never a trajectory. Files a run
//! folder holds that are neither ([`KNOWN_RUN_FILES`]: summaries, predictions, configs) are
//! skipped by name and listed.

use super::symptoms::{Recorded, recorded};
use crate::ingest::InputError;
use crate::sft::trajectories::{Trajectory, detect_and_read, looks_like_report, read_report};
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// The outcome class of one instance of a run (`eval_outcomes.status`).
///
/// Source of the classes: the SWE-bench harness's run report (`make_run_report`, schema
/// version 2: `resolved_ids`, `unresolved_ids`, `error_ids`, `empty_patch_ids`,
/// `incomplete_ids`, and since SWE-bench PR #594 `infra_failure_ids`) and its per-instance
/// `report.json` (`patch_is_None`, `infra_failure`); sb-cli adds `pending_ids` and
/// `failed_ids`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Graded, resolved.
    Resolved,
    /// Graded, not resolved.
    Unresolved,
    /// The prediction had no patch (`empty_patch_ids`, `patch_is_None`): a model failure,
    /// graded as not resolved.
    EmptyPatch,
    /// The evaluator could not grade it (`error_ids`, sb-cli `failed_ids`): never a
    /// model failure.
    Error,
    /// The environment broke (`infra_failure_ids`, `infra_failure: true`): never a model
    /// failure.
    InfraFailure,
    /// Never graded: no prediction reached the harness (`incomplete_ids`) or its grading
    /// is pending (sb-cli `pending_ids`).
    NotRun,
}

impl Status {
    /// `resolved`, `unresolved`, `empty_patch`, `error`, `infra_failure` or `not_run`, as
    /// stored in `eval_outcomes.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Resolved => "resolved",
            Status::Unresolved => "unresolved",
            Status::EmptyPatch => "empty_patch",
            Status::Error => "error",
            Status::InfraFailure => "infra_failure",
            Status::NotRun => "not_run",
        }
    }
}

/// One instance as a run-level report lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub instance_id: String,
    pub status: Status,
    /// In `ambiguous_failure_ids`: the harness saw a signature that a broken environment
    /// or a bad patch can leave; the class stays as listed.
    pub ambiguous: bool,
    /// `failure_reasons[instance_id]` (e.g. `out_of_memory`), when given.
    pub reason: Option<String>,
}

/// The run-level figures a harness or sb-cli report states (`*_instances` counts; `None`
/// when the report does not give one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportedCounts {
    /// `schema_version` (2 for the current harness and sb-cli).
    pub schema_version: Option<i64>,
    /// True when the report lists instance ids; false for a count-only report (sb-cli#27),
    /// whose per-instance figures are not known.
    pub per_instance: bool,
    /// The counts, by their field names without `_instances` (`total`, `submitted`,
    /// `completed`, `resolved`, `unresolved`, `error`, `empty_patch`, `infra_failure`,
    /// `ambiguous_failure`, `pending`, `failed`, `incomplete`).
    pub counts: std::collections::BTreeMap<&'static str, i64>,
}

/// One file of a run, read.
#[derive(Debug)]
pub enum RunFile {
    /// A per-instance report (`shape` `sb-cli-instance` or `swebench-report`).
    InstanceReport { shape: &'static str, instance_id: String, status: Status, reason: Option<String> },
    /// A run-level report (`shape` `swebench-run-report` (the harness's),
    /// `sb-cli-run`, `sb-cli-counts` (counts only) or `harness-summary`); `reported` is
    /// `None` for the older harness summary, which states no counts.
    Listing { shape: &'static str, outcomes: Vec<Listed>, reported: Option<ReportedCounts> },
    /// One batch's exit statuses, in file order.
    ExitStatuses { statuses: Vec<(String, String)> },
    /// Trajectories with what their file records beside the messages (same order).
    Trajectories(Vec<(Trajectory, Recorded)>),
    /// An Inspect AI log: its samples, each with its epoch, error, limit and scores.
    Inspect(crate::sft::formats::inspect::LogRead),
}

/// Files a run folder holds that are not outcomes nor trajectories, known by name: each
/// is skipped and listed with what it is (lowercase name or `*` suffix, what it is).
pub const KNOWN_RUN_FILES: &[(&str, &str)] = &[
    ("results_summary.json", "a summary derived from the per-instance reports"),
    ("resolved_by_repo.json", "a summary derived from results.json"),
    ("resolved_by_time.json", "a summary derived from results.json"),
    ("preds.json", "the run's predictions (patches), not outcomes"),
    ("all_preds.jsonl", "the run's predictions (patches), not outcomes"),
    ("predictions.json", "the run's predictions (patches), not outcomes"),
    ("predictions.jsonl", "the run's predictions (patches), not outcomes"),
    ("predictions_for_swebench.json", "AutoCodeRover's predictions (patches), not outcomes"),
    ("metadata.yaml", "the submission's metadata (SWE-bench experiments)"),
    ("args.yaml", "the agent's configuration"),
    ("config.yaml", "the agent's configuration"),
    ("*.config.yaml", "the agent's configuration"),
    ("*.response.json", "sb-cli's response beside its report"),
    ("scorecards.json", "SWE-agent's scorecards (the outcomes are in the report files)"),
    ("model_stats.json", "the model's cost and call counts"),
];

/// What a known non-outcome file of a run folder is ([`KNOWN_RUN_FILES`]), by its name.
pub fn known_run_file(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    KNOWN_RUN_FILES.iter().find_map(|(pattern, what)| match pattern.strip_prefix('*') {
        Some(suffix) => name.ends_with(suffix).then_some(*what),
        None => (name == *pattern).then_some(*what),
    })
}

/// Reads one run file from its bytes, as the input layer read them: an Inspect AI `.eval`
/// archive (a zip) is unzipped in memory ([`crate::sft::formats::inspect::read_eval_samples`]);
/// anything else must be UTF-8 text, read by [`read`].
///
/// Errors: invalid UTF-8 (naming the line and byte column), and those of the readers.
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Result<RunFile> {
    use crate::sft::formats::inspect;
    if inspect::is_eval_archive(bytes) {
        return Ok(RunFile::Inspect(inspect::read_eval_samples(path, bytes)?));
    }
    read(path, crate::ingest::json::utf8_document(path, bytes)?)
}

/// Reads one run file (`text` is its whole content; `path` names it in errors and, for a
/// flat `report.json`, names the instance by its folder).
///
/// Errors (file, line, field): malformed YAML or JSON; an id list that is not a list of
/// strings; an id in two lists; an sb-cli count that contradicts its list; a trajectory
/// the readers refuse.
pub fn read(path: &Path, text: &str) -> Result<RunFile> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if ext == "yaml" || ext == "yml" {
        return exit_statuses(path, text);
    }
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Option<Value> = serde_json::from_str(body).ok();
    // an Inspect log (one written with NaN scores is not strict JSON: read under the
    // anomaly policy); any other document is parsed once more by its own reader below
    let head = &body.as_bytes()[..body.len().min(4096)];
    let may_be_log = match &value {
        Some(v) => crate::sft::formats::inspect::is_log(v),
        None => body.trim_start().starts_with('{') && head.windows(9).any(|w| w == b"\"version\""),
    };
    if may_be_log && let Some(log) = crate::sft::formats::read_inspect_log(path, body)? {
        return Ok(RunFile::Inspect(log));
    }
    if let Some(Value::Object(o)) = &value {
        let run_level = o.contains_key("resolved_ids")
            || o.contains_key("total_instances")
            || o.contains_key("resolved_instances")
            || matches!(o.get("resolved"), Some(Value::Array(_)));
        // a trajectory row's fields: such an object is never read as a run-level report
        if run_level && !crate::sft::outcomes::TRAJECTORY_FIELDS.iter().any(|k| o.contains_key(*k)) {
            // Python's json keeps the last of a repeated key: refused, as in report.json
            crate::sft::outcomes::refuse_duplicate_keys(path, text)?;
        }
        if o.contains_key("resolved_ids") {
            return run_report(path, o);
        }
        if o.contains_key("total_instances") || o.contains_key("resolved_instances") {
            return count_only_report(path, o);
        }
        if let Some(Value::Array(_)) = o.get("resolved") {
            let ids = id_list(path, o, "resolved")?.unwrap_or_default();
            return Ok(RunFile::Listing {
                shape: "harness-summary",
                outcomes: ids
                    .into_iter()
                    .map(|instance_id| Listed { instance_id, status: Status::Resolved, ambiguous: false, reason: None })
                    .collect(),
                reported: None,
            });
        }
    }
    if let Some(v) = &value
        && looks_like_report(v)
    {
        return instance_report(path, read_report(path, text)?);
    }
    let read = detect_and_read(path, text)?;
    let raw: Vec<&Value> = match &value {
        Some(Value::Array(rows)) => rows.iter().collect(),
        Some(Value::Object(o)) if o.get("rows").is_some_and(Value::is_array) => {
            o["rows"].as_array().map(|r| r.iter().collect()).unwrap_or_default()
        }
        Some(v) => vec![v],
        None => Vec::new(),
    };
    let n = read.len();
    Ok(RunFile::Trajectories(
        read.into_iter()
            .enumerate()
            .map(|(i, t)| {
                let rec = if raw.len() == n { recorded(raw[i]) } else { Recorded::default() };
                (t, rec)
            })
            .collect(),
    ))
}

/// A per-instance report, read, as the run file it is: its outcome class (an infra failure
/// first, then an empty patch, then resolved or not) and the infra failure's reason.
/// Errors: a report that names no instance.
pub fn instance_report(path: &Path, report: crate::sft::outcomes::Report) -> Result<RunFile> {
    let instance_id = report
        .instance_id
        .ok_or_else(|| InputError::at(path, None, None, "cannot name the instance: put the report in logs/<id>/"))?;
    let o = &report.outcome;
    let status = if o.infra_failure == Some(true) {
        Status::InfraFailure
    } else if o.patch_is_none == Some(true) {
        Status::EmptyPatch
    } else if o.resolved {
        Status::Resolved
    } else {
        Status::Unresolved
    };
    Ok(RunFile::InstanceReport {
        shape: if report.nested { "swebench-report" } else { "sb-cli-instance" },
        instance_id,
        status,
        reason: o.infra_failure_reason.clone(),
    })
}

/// `o[key]` as a list of strings (`None` when absent); errors name the field and item.
fn id_list(path: &Path, o: &serde_json::Map<String, Value>, key: &str) -> Result<Option<Vec<String>>> {
    let Some(v) = o.get(key) else { return Ok(None) };
    let Some(items) = v.as_array() else {
        return Err(InputError::at(path, None, Some(key), "expected a list of instance ids").into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str().map(str::to_string).ok_or_else(|| {
                InputError::at(path, None, Some(&format!("{key}[{i}]")), "expected an instance id (a string)").into()
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// The outcome lists of a run report, each id in at most one (field, class).
const OUTCOME_LISTS: [(&str, Status); 7] = [
    ("resolved_ids", Status::Resolved),
    ("unresolved_ids", Status::Unresolved),
    ("empty_patch_ids", Status::EmptyPatch),
    ("error_ids", Status::Error),
    ("failed_ids", Status::Error),
    ("incomplete_ids", Status::NotRun),
    ("pending_ids", Status::NotRun),
];

/// The counts a run report may state (field without `_instances`).
const COUNTS: [&str; 12] = [
    "total",
    "submitted",
    "completed",
    "resolved",
    "unresolved",
    "error",
    "empty_patch",
    "infra_failure",
    "ambiguous_failure",
    "pending",
    "failed",
    "incomplete",
];

/// `o[key]` as a whole number, when present; errors name the field.
fn count(path: &Path, o: &serde_json::Map<String, Value>, key: &str) -> Result<Option<i64>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .filter(|n| *n >= 0)
            .map(Some)
            .ok_or_else(|| InputError::at(path, None, Some(key), "expected a count (a whole number >= 0)").into()),
    }
}

/// The counts a report states, by name ([`COUNTS`]).
fn reported_counts(path: &Path, o: &serde_json::Map<String, Value>, per_instance: bool) -> Result<ReportedCounts> {
    let mut counts = std::collections::BTreeMap::new();
    for name in COUNTS {
        if let Some(n) = count(path, o, &format!("{name}_instances"))? {
            counts.insert(name, n);
        }
    }
    let err = |field: &str, m: String| -> anyhow::Error { InputError::at(path, None, Some(field), m).into() };
    // counts that cannot all be true: a part larger than its whole
    let wholes: [(&str, &[&str]); 3] = [
        (
            "total",
            &[
                "submitted",
                "completed",
                "resolved",
                "unresolved",
                "error",
                "empty_patch",
                "infra_failure",
                "pending",
                "failed",
                "incomplete",
            ],
        ),
        ("submitted", &["completed", "resolved", "unresolved", "empty_patch"]),
        ("completed", &["resolved", "unresolved"]),
    ];
    for (whole, parts) in wholes {
        let Some(&w) = counts.get(whole) else { continue };
        for part in parts {
            if let Some(&n) = counts.get(part)
                && n > w
            {
                return Err(err(&format!("{part}_instances"), format!("says {n}, more than {whole}_instances ({w})")));
            }
        }
    }
    if let (Some(&w), Some(&r), Some(&u)) = (counts.get("completed"), counts.get("resolved"), counts.get("unresolved"))
        && r + u > w
    {
        return Err(err(
            "unresolved_instances",
            format!("resolved ({r}) and unresolved ({u}) instances are more than completed_instances ({w})"),
        ));
    }
    if per_instance && let Some(&w) = counts.get("total") {
        let mut listed = std::collections::HashSet::new();
        for key in OUTCOME_LISTS.iter().map(|(k, _)| *k).chain(["submitted_ids", "completed_ids", "infra_failure_ids"])
        {
            if let Some(Value::Array(ids)) = o.get(key) {
                listed.extend(ids.iter().filter_map(Value::as_str));
            }
        }
        if listed.len() as i64 > w {
            return Err(err("total_instances", format!("says {w}, but the report lists {} instances", listed.len())));
        }
    }
    Ok(ReportedCounts { schema_version: count(path, o, "schema_version")?, per_instance, counts })
}

/// A run report with id lists: the SWE-bench harness's (`make_run_report`, schema
/// version 2) or sb-cli's. Classes: [`OUTCOME_LISTS`], each id in one of them;
/// `infra_failure_ids` (additive in the harness: the ids stay in `unresolved_ids` or
/// `error_ids`) makes the class an infra failure; `ambiguous_failure_ids` flags the id and
/// keeps its class; `failure_reasons` gives the reason of either. A `submitted_ids` or
/// `completed_ids` id in no outcome list is not run (sb-cli: pending).
///
/// Errors (file, field): a list that is not a list of ids; an id in two outcome lists; an
/// infra or ambiguous failure that is resolved; a resolved or unresolved id missing from
/// `completed_ids`, or a completed id missing from `submitted_ids`, when those are given;
/// a count `<x>_instances` that contradicts its list `<x>_ids`; a reason that is not text.
fn run_report(path: &Path, o: &serde_json::Map<String, Value>) -> Result<RunFile> {
    let err = |field: &str, m: String| -> anyhow::Error { InputError::at(path, None, Some(field), m).into() };
    let mut class: std::collections::BTreeMap<String, (Status, &str)> = std::collections::BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut lists: std::collections::BTreeMap<&str, Vec<String>> = std::collections::BTreeMap::new();
    for key in ["infra_failure_ids", "ambiguous_failure_ids", "completed_ids", "submitted_ids"]
        .into_iter()
        .chain(OUTCOME_LISTS.iter().map(|(k, _)| *k))
    {
        if let Some(ids) = id_list(path, o, key)? {
            lists.insert(key, ids);
        }
    }
    for (key, status) in OUTCOME_LISTS {
        for id in lists.get(key).into_iter().flatten() {
            if let Some((_, other)) = class.insert(id.clone(), (status, key)) {
                return Err(err(key, format!("{id} is also in {other}")));
            }
            order.push(id.clone());
        }
    }
    for name in COUNTS {
        let (count_key, key) = (format!("{name}_instances"), format!("{name}_ids"));
        if let (Some(n), Some(ids)) = (count(path, o, &count_key)?, lists.get(key.as_str()))
            && n != ids.len() as i64
        {
            return Err(err(&count_key, format!("says {n} but {key} lists {}", ids.len())));
        }
    }
    if let Some(completed) = lists.get("completed_ids") {
        let completed: std::collections::HashSet<&String> = completed.iter().collect();
        for key in ["resolved_ids", "unresolved_ids"] {
            if let Some(id) = lists.get(key).into_iter().flatten().find(|id| !completed.contains(id)) {
                return Err(err(key, format!("{id} is not in completed_ids (only a completed instance is graded)")));
            }
        }
    }
    if let (Some(completed), Some(submitted)) = (lists.get("completed_ids"), lists.get("submitted_ids")) {
        let submitted: std::collections::HashSet<&String> = submitted.iter().collect();
        if let Some(id) = completed.iter().find(|id| !submitted.contains(id)) {
            return Err(err("completed_ids", format!("{id} is not in submitted_ids")));
        }
    }
    let mut reasons = std::collections::HashMap::new();
    match o.get("failure_reasons") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (id, why) in m {
                let Some(why) = why.as_str() else {
                    return Err(err(&format!("failure_reasons.{id}"), "expected a reason (text)".into()));
                };
                reasons.insert(id.clone(), why.to_string());
            }
        }
        Some(_) => return Err(err("failure_reasons", "expected an object of instance id: reason".into())),
    }
    let mut ambiguous = std::collections::HashSet::new();
    for (key, infra) in [("infra_failure_ids", true), ("ambiguous_failure_ids", false)] {
        for id in lists.get(key).into_iter().flatten() {
            match class.get_mut(id) {
                Some((Status::Resolved, _)) => {
                    return Err(err(key, format!("{id} is also in resolved_ids: a resolved instance did not fail")));
                }
                Some((status, _)) if infra => *status = Status::InfraFailure,
                Some(_) => {}
                None => {
                    class.insert(id.clone(), (if infra { Status::InfraFailure } else { Status::Unresolved }, key));
                    order.push(id.clone());
                }
            }
            if !infra {
                ambiguous.insert(id.clone());
            }
        }
    }
    for key in ["submitted_ids", "completed_ids"] {
        for id in lists.get(key).into_iter().flatten() {
            if !class.contains_key(id) {
                class.insert(id.clone(), (Status::NotRun, key));
                order.push(id.clone());
            }
        }
    }
    let outcomes = order
        .into_iter()
        .map(|id| {
            let status = class[&id].0;
            Listed { ambiguous: ambiguous.contains(&id), reason: reasons.get(&id).cloned(), instance_id: id, status }
        })
        .collect();
    // the harness's make_run_report writes these; sb-cli writes pending_ids / failed_ids
    let harness = ["empty_patch_ids", "infra_failure_ids", "ambiguous_failure_ids", "empty_patch_instances"]
        .iter()
        .any(|k| o.contains_key(*k));
    let shape = if harness { "swebench-run-report" } else { "sb-cli-run" };
    Ok(RunFile::Listing { shape, outcomes, reported: Some(reported_counts(path, o, true)?) })
}

/// sb-cli's report with counts and no id lists (sb-cli#27): run-level figures only.
fn count_only_report(path: &Path, o: &serde_json::Map<String, Value>) -> Result<RunFile> {
    for key in ["total_instances", "resolved_instances"] {
        if count(path, o, key)?.is_none() {
            return Err(InputError::at(
                path,
                None,
                Some(key),
                "missing: a count-only run report states total_instances and resolved_instances",
            )
            .into());
        }
    }
    Ok(RunFile::Listing {
        shape: "sb-cli-counts",
        outcomes: Vec::new(),
        reported: Some(reported_counts(path, o, false)?),
    })
}

/// The batch file; serde_norway's `Mapping` keeps the statuses in file order.
#[derive(serde::Deserialize)]
struct ExitStatusFile {
    instances_by_exit_status: serde_norway::Mapping,
}

/// mini-swe-agent's `exit_statuses_<time>.yaml`: `instances_by_exit_status` maps each
/// status to a list of ids (an empty list may be written as nothing: `RetryError:`).
fn exit_statuses(path: &Path, text: &str) -> Result<RunFile> {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if let Some(time) = name.strip_prefix("exit_statuses_").and_then(|t| t.rsplit_once('.')).map(|(t, _)| t)
        && time.parse::<f64>().is_ok()
        && batch_time(&name).is_none()
    {
        let why = format!(
            "the batch time `{time}` in the file name is not a Unix time in seconds from 1970 up to the year 3000 \
             (mini-swe-agent names a batch file exit_statuses_<time.time()>.yaml); rename the file"
        );
        return Err(InputError::at(path, None, None, why).into());
    }
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let file: ExitStatusFile = serde_norway::from_str(body).map_err(|e| {
        InputError::at(
            path,
            e.location().map(|l| l.line() as u64),
            Some("instances_by_exit_status"),
            format!("not an exit-status file: {e}"),
        )
    })?;
    let mut statuses = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (status, ids) in &file.instances_by_exit_status {
        let Some(status) = status.as_str() else {
            return Err(
                InputError::at(path, None, Some("instances_by_exit_status"), "a status that is not a string").into()
            );
        };
        let field = format!("instances_by_exit_status.{status}");
        let ids: Vec<String> = match ids {
            serde_norway::Value::Null => Vec::new(),
            serde_norway::Value::Sequence(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        InputError::at(path, None, Some(&format!("{field}[{i}]")), "expected an instance id").into()
                    })
                })
                .collect::<Result<_>>()?,
            _ => return Err(InputError::at(path, None, Some(&field), "expected a list of instance ids").into()),
        };
        for id in ids {
            if let Some(other) = seen.insert(id.clone(), status.to_string()) {
                return Err(
                    InputError::at(path, None, Some(&field), format!("{id} is also listed under {other}")).into()
                );
            }
            statuses.push((id, status.to_string()));
        }
    }
    Ok(RunFile::ExitStatuses { statuses })
}

/// The first second of the year 3000: a batch time at or past it is not a time.
const YEAR_3000: f64 = 32_503_680_000.0;

/// The Unix time in seconds in a batch file's name `exit_statuses_<time>.yaml` (the batch
/// order), when it is a number from 0 up to the year 3000; `None` otherwise. A name whose
/// time is a number out of that range (`inf`, `nan`, `1e300`, `-5`) is refused by [`read`],
/// since the runs views turn the time into microseconds; a name with no number in it
/// (`exit_statuses_batch2.yaml`) is read, its batch ordered by load order.
pub fn batch_time(name: &str) -> Option<f64> {
    let time: f64 = name.strip_prefix("exit_statuses_")?.rsplit_once('.').and_then(|(t, _)| t.parse().ok())?;
    (time.is_finite() && (0.0..YEAR_3000).contains(&time)).then_some(time)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> &Path {
        Path::new(s)
    }

    #[test]
    fn exit_statuses_keep_file_order_and_empty_lists() {
        let text = "instances_by_exit_status:\n    RetryError:\n    - a__a-1\n    Submitted:\n    - b__b-2\n    - c__c-3\n    LimitsExceeded:\n";
        let RunFile::ExitStatuses { statuses } = read(p("run/exit_statuses_17.5.yaml"), text).unwrap() else {
            panic!()
        };
        assert_eq!(
            statuses,
            [
                ("a__a-1".into(), "RetryError".into()),
                ("b__b-2".into(), "Submitted".into()),
                ("c__c-3".into(), "Submitted".into())
            ]
        );
        assert_eq!(batch_time("exit_statuses_1763506501.7698028.yaml"), Some(1763506501.7698028));
        assert_eq!(batch_time("statuses.yaml"), None);
    }

    /// Hostile input: `inf`, `nan`, `1e300` were read as batch times (a raw DuckDB error later).
    #[test]
    fn batch_time_out_of_range_is_refused_not_cast() {
        let text = "instances_by_exit_status:\n  Submitted:\n  - a__a-1\n";
        for bad in ["inf", "nan", "1e300", "-5", "32503680000"] {
            let name = format!("run/exit_statuses_{bad}.yaml");
            let err = read(p(&name), text).unwrap_err().to_string();
            assert!(err.contains(&format!("exit_statuses_{bad}.yaml")) && err.contains(&format!("`{bad}`")), "{err}");
            assert!(err.contains("not a Unix time"), "{err}");
        }
        assert_eq!(batch_time("exit_statuses_32503679999.yaml"), Some(32_503_679_999.0));
        assert_eq!((batch_time("exit_statuses_0.yaml"), batch_time("exit_statuses_inf.yaml")), (Some(0.0), None));
        // a name without a number is read (ordered by load order), as before
        assert!(read(p("run/exit_statuses.yaml"), text).is_ok());
        assert!(read(p("run/exit_statuses_batch2.yaml"), text).is_ok());
    }

    #[test]
    fn exit_statuses_refuse_a_twice_listed_instance_and_a_wrong_document() {
        let err = read(p("e.yaml"), "instances_by_exit_status:\n  A:\n  - x\n  B:\n  - x\n").unwrap_err().to_string();
        assert!(err.contains("instances_by_exit_status.B") && err.contains("x is also listed under A"), "{err}");
        let err = read(p("e.yaml"), "statuses:\n  A: [x]\n").unwrap_err().to_string();
        assert!(err.contains("e.yaml:1: field `instances_by_exit_status`"), "{err}");
    }

    fn listed(id: &str, status: Status) -> Listed {
        Listed { instance_id: id.into(), status, ambiguous: false, reason: None }
    }

    #[test]
    fn sb_cli_run_report_lists_and_checks_its_counts() {
        let text = r#"{"resolved_instances": 1, "resolved_ids": ["a"], "unresolved_ids": ["b"], "error_ids": ["c"]}"#;
        let RunFile::Listing { shape, outcomes, reported } = read(p("r.json"), text).unwrap() else { panic!() };
        assert_eq!(shape, "sb-cli-run");
        assert_eq!(
            outcomes,
            [listed("a", Status::Resolved), listed("b", Status::Unresolved), listed("c", Status::Error)]
        );
        let reported = reported.unwrap();
        assert!(reported.per_instance);
        assert_eq!(reported.counts.get("resolved"), Some(&1));
        let err = read(p("r.json"), r#"{"resolved_instances": 2, "resolved_ids": ["a"]}"#).unwrap_err().to_string();
        assert!(err.contains("resolved_instances") && err.contains("says 2 but resolved_ids lists 1"), "{err}");
        let err = read(p("r.json"), r#"{"resolved_ids": ["a"], "error_ids": ["a"]}"#).unwrap_err().to_string();
        assert!(err.contains("a is also in resolved_ids"), "{err}");
        let err = read(p("r.json"), r#"{"resolved_ids": ["a", 3]}"#).unwrap_err().to_string();
        assert!(err.contains("resolved_ids[1]"), "{err}");
    }

    /// A harness run report (schema version 2) with every class: infra and ambiguous
    /// failures are additive (they stay in unresolved_ids / error_ids), as SWE-bench #594
    /// writes them.
    #[test]
    fn harness_run_report_v2_keeps_every_outcome_class() {
        let text = r#"{"total_instances": 7, "submitted_instances": 6, "completed_instances": 4,
            "resolved_instances": 1, "unresolved_instances": 3, "infra_failure_instances": 1,
            "ambiguous_failure_instances": 1, "empty_patch_instances": 1, "error_instances": 1,
            "completed_ids": ["a", "b", "c", "d"], "incomplete_ids": ["g"], "empty_patch_ids": ["e"],
            "submitted_ids": ["a", "b", "c", "d", "e", "f"], "resolved_ids": ["a"], "unresolved_ids": ["b", "c", "d"],
            "infra_failure_ids": ["c"], "ambiguous_failure_ids": ["d"],
            "failure_reasons": {"c": "out_of_memory", "d": "tests_timed_out"}, "error_ids": ["f"], "schema_version": 2}"#;
        let RunFile::Listing { shape, mut outcomes, reported } = read(p("m.run1.json"), text).unwrap() else {
            panic!()
        };
        assert_eq!(shape, "swebench-run-report");
        outcomes.sort_by(|x, y| x.instance_id.cmp(&y.instance_id));
        let got: Vec<(&str, Status, bool, Option<&str>)> =
            outcomes.iter().map(|l| (l.instance_id.as_str(), l.status, l.ambiguous, l.reason.as_deref())).collect();
        assert_eq!(
            got,
            [
                ("a", Status::Resolved, false, None),
                ("b", Status::Unresolved, false, None),
                ("c", Status::InfraFailure, false, Some("out_of_memory")),
                ("d", Status::Unresolved, true, Some("tests_timed_out")),
                ("e", Status::EmptyPatch, false, None),
                ("f", Status::Error, false, None),
                ("g", Status::NotRun, false, None),
            ]
        );
        let reported = reported.unwrap();
        assert_eq!((reported.schema_version, reported.counts["total"], reported.counts["submitted"]), (Some(2), 7, 6));
        // contradictions are refused, naming the field
        let err = read(p("r.json"), r#"{"resolved_ids": ["a"], "infra_failure_ids": ["a"], "schema_version": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("infra_failure_ids") && err.contains("a is also in resolved_ids"), "{err}");
        let err = read(p("r.json"), r#"{"resolved_ids": ["a"], "completed_ids": [], "schema_version": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("field `resolved_ids`") && err.contains("a is not in completed_ids"), "{err}");
        let err = read(p("r.json"), r#"{"resolved_ids": [], "infra_failure_instances": 1, "infra_failure_ids": []}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("says 1 but infra_failure_ids lists 0"), "{err}");
    }

    #[test]
    fn count_only_report_is_run_level_figures() {
        let text =
            r#"{"total_instances": 500, "submitted_instances": 30, "resolved_instances": 12, "error_instances": 1}"#;
        let RunFile::Listing { shape, outcomes, reported } = read(p("sb.json"), text).unwrap() else { panic!() };
        assert_eq!((shape, outcomes.len()), ("sb-cli-counts", 0));
        let reported = reported.unwrap();
        assert!(!reported.per_instance);
        assert_eq!(
            (reported.counts["total"], reported.counts["resolved"], reported.counts.get("unresolved")),
            (500, 12, None)
        );
    }

    /// Counts that cannot all be true, a count of another type, and a key given twice are
    /// refused at their field, never stored.
    #[test]
    fn impossible_counts_and_repeated_keys_are_refused() {
        for (text, want) in [
            (
                r#"{"total_instances": 2, "resolved_instances": 5}"#,
                "resolved_instances`: says 5, more than total_instances (2)",
            ),
            (
                r#"{"total_instances": 9, "submitted_instances": 3, "completed_instances": 4, "resolved_instances": 1}"#,
                "completed_instances`: says 4, more than submitted_instances (3)",
            ),
            (
                r#"{"total_instances": 9, "completed_instances": 3, "resolved_instances": 2, "unresolved_instances": 2}"#,
                "more than completed_instances (3)",
            ),
            (
                r#"{"total_instances": 1, "resolved_ids": ["a"], "unresolved_ids": ["b"]}"#,
                "says 1, but the report lists 2 instances",
            ),
            (r#"{"total_instances": 5, "resolved_instances": "2"}"#, "field `resolved_instances`: expected a count"),
            (r#"{"total_instances": 5}"#, "field `resolved_instances`: missing"),
            (r#"{"total_instances": 5, "resolved_instances": 2, "total_instances": 9}"#, "duplicate key"),
        ] {
            let err = read(p("r.json"), text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn known_run_files_by_name() {
        assert!(known_run_file(p("run/results_summary.json")).is_some());
        assert!(known_run_file(p("run/x.response.json")).is_some());
        assert!(known_run_file(p("run/run_batch.config.yaml")).is_some());
        assert_eq!(known_run_file(p("run/exit_statuses_1.0.yaml")), None);
        assert_eq!(known_run_file(p("logs/a/report.json")), None);
    }

    #[test]
    fn per_instance_reports_in_both_shapes_and_the_old_summary() {
        let flat = r#"{"resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": ["t"], "failure": []}, "PASS_TO_PASS": {"success": [], "failure": []}}}"#;
        let RunFile::InstanceReport { shape, instance_id, status, .. } =
            read(p("logs/x__y-1/report.json"), flat).unwrap()
        else {
            panic!()
        };
        assert_eq!((shape, instance_id.as_str(), status), ("sb-cli-instance", "x__y-1", Status::Resolved));
        let keyed = r#"{"x__y-2": {"resolved": false}}"#;
        let RunFile::InstanceReport { shape, instance_id, status, .. } = read(p("report.json"), keyed).unwrap() else {
            panic!()
        };
        assert_eq!((shape, instance_id.as_str(), status), ("swebench-report", "x__y-2", Status::Unresolved));
        let RunFile::Listing { shape, outcomes, reported } =
            read(p("results.json"), r#"{"resolved": ["a"], "applied": ["a", "b"]}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!((shape, outcomes, reported), ("harness-summary", vec![listed("a", Status::Resolved)], None));
    }

    /// SWE-bench #594: `infra_failure` in report.json (with its reason), and
    /// `patch_is_None`, give their classes.
    #[test]
    fn report_json_infra_failure_and_empty_patch() {
        let infra = r#"{"x__y-3": {"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": false,
            "resolved": false, "infra_failure": true, "infra_failure_reason": "container_unavailable"}}"#;
        let RunFile::InstanceReport { status, reason, .. } = read(p("x__y-3/report.json"), infra).unwrap() else {
            panic!()
        };
        assert_eq!((status, reason.as_deref()), (Status::InfraFailure, Some("container_unavailable")));
        let none = r#"{"x__y-4": {"patch_is_None": true, "patch_exists": false, "patch_successfully_applied": false,
            "resolved": false, "infra_failure": false}}"#;
        let RunFile::InstanceReport { status, reason, .. } = read(p("x__y-4/report.json"), none).unwrap() else {
            panic!()
        };
        assert_eq!((status, reason), (Status::EmptyPatch, None));
    }
}
