//! The shapes of a run's files, told apart by content, and their readers.
//!
//! | shape | what it is | how it is told |
//! |---|---|---|
//! | `exit-statuses` | mini-swe-agent batch `exit_statuses_<unix time>.yaml`: `instances_by_exit_status: {Status: [ids]}` | `.yaml` / `.yml` |
//! | `sb-cli-run` | sb-cli run report: `resolved_ids`, `unresolved_ids`, `error_ids` (+ counts) | a JSON object with `resolved_ids` |
//! | `harness-summary` | older SWE-bench harness summary `{"resolved": [ids], ...}` | `resolved` is an array |
//! | `sb-cli-instance` | per-instance `report.json`, `resolved` at the top; the instance is its folder (`logs/<id>/report.json`) | `resolved` is a boolean |
//! | `swebench-report` | harness per-instance `report.json` keyed by id `{"<id>": {"resolved": ...}}` | one key holding an object with `resolved` |
//! | trajectories | any format [`detect_and_read`] reads | everything else |
//!
//! Per-instance reports are read by the SFT reader ([`read_report`]), strictly: a file with
//! the shape of one that the reader refuses is an error, never a trajectory.

use super::symptoms::{Recorded, recorded};
use crate::ingest::InputError;
use crate::sft::trajectories::{Trajectory, detect_and_read, looks_like_report, read_report};
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// An evaluator status of one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Resolved,
    Unresolved,
    /// The evaluator could not grade it (sb-cli `error_ids`): not resolved.
    Error,
}

impl Status {
    /// `resolved`, `unresolved` or `error`, as stored in `eval_outcomes.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Resolved => "resolved",
            Status::Unresolved => "unresolved",
            Status::Error => "error",
        }
    }
}

/// One file of a run, read.
#[derive(Debug)]
pub enum RunFile {
    /// A per-instance report (`shape` `sb-cli-instance` or `swebench-report`).
    InstanceReport { shape: &'static str, instance_id: String, status: Status },
    /// A run-level report listing ids (`shape` `sb-cli-run` or `harness-summary`); unlisted
    /// instances of the run are implied unresolved.
    Listing { shape: &'static str, outcomes: Vec<(String, Status)> },
    /// One batch's exit statuses, in file order.
    ExitStatuses { statuses: Vec<(String, String)> },
    /// Trajectories with what their file records beside the messages (same order).
    Trajectories(Vec<(Trajectory, Recorded)>),
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
    if let Some(Value::Object(o)) = &value {
        if o.contains_key("resolved_ids") {
            return sb_cli_run(path, o);
        }
        if let Some(Value::Array(_)) = o.get("resolved") {
            let ids = id_list(path, o, "resolved")?.unwrap_or_default();
            return Ok(RunFile::Listing {
                shape: "harness-summary",
                outcomes: ids.into_iter().map(|id| (id, Status::Resolved)).collect(),
            });
        }
    }
    if let Some(v) = &value
        && looks_like_report(v)
    {
        let report = read_report(path, text)?;
        let instance_id = report.instance_id.ok_or_else(|| {
            InputError::at(path, None, None, "cannot name the instance: put the report in logs/<id>/")
        })?;
        return Ok(RunFile::InstanceReport {
            shape: if report.nested { "swebench-report" } else { "sb-cli-instance" },
            instance_id,
            status: status(report.outcome.resolved),
        });
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

fn status(resolved: bool) -> Status {
    if resolved { Status::Resolved } else { Status::Unresolved }
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

/// sb-cli's run report: `resolved_ids`, `unresolved_ids`, `error_ids`; each count it also
/// gives (`resolved_instances`, `unresolved_instances`, `error_instances`) must match.
fn sb_cli_run(path: &Path, o: &serde_json::Map<String, Value>) -> Result<RunFile> {
    let mut outcomes: Vec<(String, Status)> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (key, count_key, st) in [
        ("resolved_ids", "resolved_instances", Status::Resolved),
        ("unresolved_ids", "unresolved_instances", Status::Unresolved),
        ("error_ids", "error_instances", Status::Error),
    ] {
        let ids = id_list(path, o, key)?.unwrap_or_default();
        if let Some(count) = o.get(count_key).and_then(Value::as_u64)
            && count != ids.len() as u64
        {
            return Err(InputError::at(
                path,
                None,
                Some(count_key),
                format!("says {count} but {key} lists {}", ids.len()),
            )
            .into());
        }
        for id in ids {
            if let Some(other) = seen.insert(id.clone(), key) {
                return Err(InputError::at(path, None, Some(key), format!("{id} is also in {other}")).into());
            }
            outcomes.push((id, st));
        }
    }
    Ok(RunFile::Listing { shape: "sb-cli-run", outcomes })
}

/// The batch file; serde_norway's `Mapping` keeps the statuses in file order.
#[derive(serde::Deserialize)]
struct ExitStatusFile {
    instances_by_exit_status: serde_norway::Mapping,
}

/// mini-swe-agent's `exit_statuses_<time>.yaml`: `instances_by_exit_status` maps each
/// status to a list of ids (an empty list may be written as nothing: `RetryError:`).
fn exit_statuses(path: &Path, text: &str) -> Result<RunFile> {
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

/// The unix time in a batch file's name `exit_statuses_<time>.yaml` (the batch order).
pub fn batch_time(name: &str) -> Option<f64> {
    name.strip_prefix("exit_statuses_")?.rsplit_once('.').and_then(|(t, _)| t.parse().ok())
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

    #[test]
    fn exit_statuses_refuse_a_twice_listed_instance_and_a_wrong_document() {
        let err = read(p("e.yaml"), "instances_by_exit_status:\n  A:\n  - x\n  B:\n  - x\n").unwrap_err().to_string();
        assert!(err.contains("instances_by_exit_status.B") && err.contains("x is also listed under A"), "{err}");
        let err = read(p("e.yaml"), "statuses:\n  A: [x]\n").unwrap_err().to_string();
        assert!(err.contains("e.yaml:1: field `instances_by_exit_status`"), "{err}");
    }

    #[test]
    fn sb_cli_run_report_lists_and_checks_its_counts() {
        let text = r#"{"resolved_instances": 1, "resolved_ids": ["a"], "unresolved_ids": ["b"], "error_ids": ["c"]}"#;
        let RunFile::Listing { shape, outcomes } = read(p("r.json"), text).unwrap() else { panic!() };
        assert_eq!(shape, "sb-cli-run");
        assert_eq!(
            outcomes,
            [("a".into(), Status::Resolved), ("b".into(), Status::Unresolved), ("c".into(), Status::Error)]
        );
        let err = read(p("r.json"), r#"{"resolved_instances": 2, "resolved_ids": ["a"]}"#).unwrap_err().to_string();
        assert!(err.contains("resolved_instances") && err.contains("says 2 but resolved_ids lists 1"), "{err}");
        let err = read(p("r.json"), r#"{"resolved_ids": ["a"], "error_ids": ["a"]}"#).unwrap_err().to_string();
        assert!(err.contains("a is also in resolved_ids"), "{err}");
        let err = read(p("r.json"), r#"{"resolved_ids": ["a", 3]}"#).unwrap_err().to_string();
        assert!(err.contains("resolved_ids[1]"), "{err}");
    }

    #[test]
    fn per_instance_reports_in_both_shapes_and_the_old_summary() {
        let flat = r#"{"resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": ["t"], "failure": []}, "PASS_TO_PASS": {"success": [], "failure": []}}}"#;
        let RunFile::InstanceReport { shape, instance_id, status } = read(p("logs/x__y-1/report.json"), flat).unwrap()
        else {
            panic!()
        };
        assert_eq!((shape, instance_id.as_str(), status), ("sb-cli-instance", "x__y-1", Status::Resolved));
        let keyed = r#"{"x__y-2": {"resolved": false}}"#;
        let RunFile::InstanceReport { shape, instance_id, status } = read(p("report.json"), keyed).unwrap() else {
            panic!()
        };
        assert_eq!((shape, instance_id.as_str(), status), ("swebench-report", "x__y-2", Status::Unresolved));
        let RunFile::Listing { shape, outcomes } =
            read(p("results.json"), r#"{"resolved": ["a"], "applied": ["a", "b"]}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!((shape, outcomes), ("harness-summary", vec![("a".to_string(), Status::Resolved)]));
    }
}
