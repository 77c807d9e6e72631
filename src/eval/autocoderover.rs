//! AutoCodeRover result folders (issue 31): one folder per task attempt, as AutoCodeRover
//! writes them (`<output>/<task_id>_<YYYY-MM-DD_HH-MM-SS>/`, after post-processing under a
//! category folder `applicable_patch/`, `no_patch/`, `raw_patch_but_unmatched/`, ...).
//!
//! A folder is a task folder when it holds `meta.json` and a `conversation_round_<n>.json`.
//! Its files, by name ([`role_of`]):
//!
//! | file | what it is | read as |
//! |---|---|---|
//! | `meta.json` | `{task_id, setup_info, task_info}`: `task_id` is the SWE-bench instance id | the instance ([`read_meta`]); `task_info.instance_id`, when given, must agree |
//! | `conversation_round_<n>.json` | the search agent's message thread after round `n` (a JSON array of OpenAI messages), each round's file holding the thread so far | the highest `n`: the trajectory ([`read_conversation`]); lower rounds are skipped as earlier snapshots of it |
//! | `extract_status.json` | `{"extract_status": [...]}`, one status per patch attempt | the best status, AutoCodeRover's own order (`NO_PATCH` < `RAW_PATCH_BUT_UNPARSED` < `RAW_PATCH_BUT_UNMATCHED` < `MATCHED_BUT_EMPTY_DIFF` < `MATCHED_BUT_EMPTY_ORIGIN` < `APPLICABLE_PATCH`), is the exit status ([`read_extract_status`]) |
//! | `report.json` | the SWE-bench harness's verdict, copied beside the attempt | an outcome of the instance named by `meta.json` (the folder's name carries a time stamp) |
//! | `agent_proxy_<n>.json`, `debug_agent_write_patch_<n>.json`, `conv_*.json`, `agent_selection.json`, `selected_patch.json`, `cost.json`, `regression_*.json`, `execution_*.json`, `review_*.json`, `reproducer*.json` | AutoCodeRover's internal threads and records | skipped by name, listed |
//!
//! The finish of the trajectory: `APPLICABLE_PATCH` is a natural finish (the agent wrote a
//! patch that applies), any other status an error (no usable patch reached the harness);
//! without `extract_status.json` the run was cut off. AutoCodeRover's search calls
//! (`search_class("X")`) are text in its messages that a proxy agent turns into JSON: they
//! are not read as tool calls, so its trajectories have none (no shell command is run).

use crate::ingest::InputError;
use crate::sft::formats::access::{Loc, Object, from_value, parse_json_file};
use crate::sft::formats::openai::{ChatMessage, chat_messages};
use crate::sft::schema::Trajectory;
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// `source` of AutoCodeRover trajectories (`eval_trajectories.source`).
pub const SOURCE_AUTOCODEROVER: &str = "autocoderover";

/// Why an earlier `conversation_round_<n>.json` is skipped.
pub const EARLIER_ROUND: &str =
    "an earlier round of AutoCodeRover's conversation (the last round's file holds the whole thread)";

/// AutoCodeRover's extract statuses, worst to best (its `ExtractStatus` order).
pub const EXTRACT_STATUSES: &[&str] = &[
    "NO_PATCH",
    "RAW_PATCH_BUT_UNPARSED",
    "RAW_PATCH_BUT_UNMATCHED",
    "MATCHED_BUT_EMPTY_DIFF",
    "MATCHED_BUT_EMPTY_ORIGIN",
    "APPLICABLE_PATCH",
];

/// What a file of a task folder is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `meta.json`.
    Meta,
    /// `conversation_round_<n>.json`, with `n`.
    Conversation(u32),
    /// `extract_status.json`.
    ExtractStatus,
    /// `report.json`: the harness's verdict.
    Report,
    /// An internal thread or record of AutoCodeRover's, skipped (what it is).
    Internal(&'static str),
    /// Any other file (patches, logs, text): not a run file.
    Other,
}

/// The `n` of `conversation_round_<n>.json`.
fn round_of(name: &str) -> Option<u32> {
    name.strip_prefix("conversation_round_")?.strip_suffix(".json")?.parse().ok()
}

/// The role of the file `name` (lower case) in a task folder.
pub fn role_of(name: &str) -> Role {
    const INTERNAL: &[(&str, &str)] = &[
        ("agent_proxy_", "AutoCodeRover's proxy-agent threads (its search calls as JSON)"),
        ("debug_agent_write_patch_", "AutoCodeRover's patch-writing thread (a debug copy)"),
        ("conv_", "an AutoCodeRover sub-agent's thread (patch, review or reproducer)"),
        ("agent_selection", "AutoCodeRover's patch-selection thread"),
        ("selected_patch", "which extracted patch AutoCodeRover selected"),
        ("cost", "the model's cost and token counts"),
        ("regression_", "AutoCodeRover's own regression-test run"),
        ("execution_", "AutoCodeRover's own reproducer run"),
        ("review_", "AutoCodeRover's patch review"),
        ("reproducer", "AutoCodeRover's reproducer record"),
    ];
    match name {
        "meta.json" => return Role::Meta,
        "extract_status.json" => return Role::ExtractStatus,
        "report.json" => return Role::Report,
        _ => {}
    }
    if let Some(n) = round_of(name) {
        return Role::Conversation(n);
    }
    if name.ends_with(".json") {
        for (prefix, what) in INTERNAL {
            if name.starts_with(prefix) {
                return Role::Internal(what);
            }
        }
    }
    Role::Other
}

/// Whether `dir` is an AutoCodeRover task folder: it holds a `conversation_round_<n>.json`,
/// or `meta.json` beside one of AutoCodeRover's own records (`extract_status.json`,
/// `agent_proxy_<n>.json`, `cost.json`, ...: [`Role::ExtractStatus`], [`Role::Internal`]) —
/// a task that stopped before its first round. A task folder without `meta.json` is one
/// too, so that its files are refused for what they are, not read as trajectories.
pub fn is_task_folder(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    let roles: Vec<Role> = entries
        .filter_map(|e| e.ok())
        .map(|e| role_of(&e.file_name().to_string_lossy().to_ascii_lowercase()))
        .collect();
    roles.iter().any(|r| matches!(r, Role::Conversation(_)))
        || (roles.contains(&Role::Meta) && roles.iter().any(|r| matches!(r, Role::ExtractStatus | Role::Internal(_))))
}

/// The instance of a task folder, from its `meta.json` text: `task_id` (a string).
///
/// Errors (file, field): not JSON; not an object; `task_id` missing or not a string;
/// `task_info.instance_id` given and different from `task_id`.
pub fn read_meta(path: &Path, text: &str) -> Result<String> {
    let v = parse_json_file(path, text)?;
    let err = |field: &str, m: String| -> anyhow::Error { InputError::at(path, None, Some(field), m).into() };
    let Some(o) = v.as_object() else {
        return Err(err("", "expected AutoCodeRover's meta object ({task_id, setup_info, task_info})".into()));
    };
    let task_id = match o.get("task_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        None => return Err(err("task_id", "missing (AutoCodeRover's meta.json names its instance there)".into())),
        Some(other) => return Err(err("task_id", format!("expected an instance id (a string), got {other}"))),
    };
    if let Some(id) = o.get("task_info").and_then(|t| t.get("instance_id"))
        && id.as_str() != Some(task_id.as_str())
    {
        return Err(err("task_info.instance_id", format!("{id} differs from task_id {task_id:?}")));
    }
    Ok(task_id)
}

/// The best extract status of `extract_status.json` ([`EXTRACT_STATUSES`] order).
///
/// Errors (file, field): not JSON; `extract_status` missing, not a list, empty, or holding
/// a value that is not one of [`EXTRACT_STATUSES`].
pub fn read_extract_status(path: &Path, text: &str) -> Result<String> {
    let v = parse_json_file(path, text)?;
    let err = |field: &str, m: String| -> anyhow::Error { InputError::at(path, None, Some(field), m).into() };
    let Some(list) = v.get("extract_status").and_then(Value::as_array) else {
        return Err(err("extract_status", "expected AutoCodeRover's list of extract statuses".into()));
    };
    let mut best: Option<usize> = None;
    for (i, s) in list.iter().enumerate() {
        let rank = s.as_str().and_then(|s| EXTRACT_STATUSES.iter().position(|k| *k == s)).ok_or_else(|| {
            err(
                &format!("extract_status[{i}]"),
                format!("{s} is not an extract status ({})", EXTRACT_STATUSES.join(", ")),
            )
        })?;
        best = best.max(Some(rank));
    }
    best.map(|r| EXTRACT_STATUSES[r].to_string()).ok_or_else(|| err("extract_status", "empty: no patch attempt".into()))
}

/// The trajectory of a task folder: its last `conversation_round_<n>.json` (a JSON array of
/// OpenAI messages `{role, content}`, `tool_calls` read when present) as the instance
/// `instance_id`.
///
/// Errors (file, field): not JSON; not an array; a message that is not an object, with an
/// unknown role or a content of the wrong type (`[3].role`).
pub fn read_conversation(path: &Path, text: &str, instance_id: &str) -> Result<Trajectory> {
    let v = parse_json_file(path, text)?;
    let loc = Loc::file(path);
    let Some(items) = v.as_array() else {
        return Err(loc.err("", format!("expected AutoCodeRover's message thread (a JSON array), got {}", kind(&v))));
    };
    if items.is_empty() {
        return Err(loc.err("", "an empty message thread: AutoCodeRover writes a round's file after its messages"));
    }
    let mut messages = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("[{i}]");
        if !item.is_object() {
            return Err(loc.err(&field, format!("invalid type: {}, expected an object (a message)", kind(item))));
        }
        let m: ChatMessage =
            from_value(item).map_err(|r| loc.err(&crate::sft::formats::access::join(&field, &r.path), r.message))?;
        messages.push(Object(m));
    }
    Ok(Trajectory {
        instance_id: instance_id.to_string(),
        source: SOURCE_AUTOCODEROVER,
        resolved: None,
        tools: None,
        repo: None,
        messages: chat_messages(&loc, "", messages)?,
        attempt: None,
    })
}

fn kind(v: &Value) -> &'static str {
    crate::sft::formats::access::kind(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_by_name() {
        assert_eq!(role_of("meta.json"), Role::Meta);
        assert_eq!(role_of("conversation_round_12.json"), Role::Conversation(12));
        assert_eq!(role_of("conversation_round_x.json"), Role::Other);
        assert!(matches!(role_of("agent_proxy_0.json"), Role::Internal(_)));
        assert!(matches!(role_of("debug_agent_write_patch_1.json"), Role::Internal(_)));
        assert_eq!(role_of("extracted_patch_1.diff"), Role::Other);
        assert_eq!(role_of("report.json"), Role::Report);
    }

    #[test]
    fn best_extract_status_in_autocoderover_order() {
        let p = Path::new("extract_status.json");
        let best = read_extract_status(p, r#"{"extract_status": ["APPLICABLE_PATCH", "NO_PATCH"]}"#).unwrap();
        assert_eq!(best, "APPLICABLE_PATCH");
        let best = read_extract_status(p, r#"{"extract_status": ["NO_PATCH", "RAW_PATCH_BUT_UNMATCHED"]}"#).unwrap();
        assert_eq!(best, "RAW_PATCH_BUT_UNMATCHED");
        let e = read_extract_status(p, r#"{"extract_status": ["NO_PATCH", "DONE"]}"#).unwrap_err().to_string();
        assert!(e.contains("extract_status[1]") && e.contains("\"DONE\" is not an extract status"), "{e}");
        let e = read_extract_status(p, r#"{"extract_status": []}"#).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
    }

    #[test]
    fn meta_names_the_instance() {
        let p = Path::new("meta.json");
        let id = read_meta(
            p,
            r#"{"task_id": "astropy__astropy-12907", "task_info": {"instance_id": "astropy__astropy-12907"}}"#,
        );
        assert_eq!(id.unwrap(), "astropy__astropy-12907");
        let e =
            read_meta(p, r#"{"task_id": "a__b-1", "task_info": {"instance_id": "a__b-2"}}"#).unwrap_err().to_string();
        assert!(e.contains("task_info.instance_id") && e.contains("differs from task_id"), "{e}");
        let e = read_meta(p, r#"{"setup_info": {}}"#).unwrap_err().to_string();
        assert!(e.contains("field `task_id`: missing"), "{e}");
    }

    #[test]
    fn a_conversation_is_a_message_list() {
        let p = Path::new("conversation_round_1.json");
        let text = r#"[{"role": "system", "content": "You are a software developer"},
                       {"role": "user", "content": "<issue>x</issue>"},
                       {"role": "assistant", "content": "search_class(\"Foo\")"}]"#;
        let t = read_conversation(p, text, "a__b-1").unwrap();
        assert_eq!((t.messages.len(), t.source, t.instance_id.as_str()), (3, SOURCE_AUTOCODEROVER, "a__b-1"));
        assert!(t.messages.iter().all(|m| m.tool_calls.is_empty()));
        let e = read_conversation(p, r#"[{"role": "robot", "content": ""}]"#, "a__b-1").unwrap_err().to_string();
        assert!(e.contains("`[0].role`"), "{e}");
        let e = read_conversation(p, r#"[[{"role": "user", "content": ""}]]"#, "a__b-1").unwrap_err().to_string();
        assert!(e.contains("`[0]`") && e.contains("expected an object"), "{e}");
        let e = read_conversation(p, "[]", "a__b-1").unwrap_err().to_string();
        assert!(e.contains("an empty message thread"), "{e}");
    }
}
