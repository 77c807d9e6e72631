//! SWE-agent `.traj` files (their `history`, the chat as sent to the model).

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::access::{
    Loc, as_object, get, join, kind, link_tool_names, openai_content, openai_tool_calls, opt_str, req_array, req_role,
};
use super::text_calls::swe_agent_command_call;
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_SWE_AGENT, Trajectory};

///
/// * `content`: string or list of `{type: "text", text}` parts;
/// * assistant: structured `tool_calls` when present (function-calling files); else
///   the `action` field (older text-command files such as the pydicom run) becomes one
///   text-style call via [`swe_agent_command_call`] (first word = tool name);
/// * tool messages: `tool_call_ids` → `tool_call_id`, name from the call answered.
///
/// `instance_id` is the file stem (the files carry none); `resolved` is `None`
/// (`info.exit_status` "submitted" is not an evaluation). `thought` is part of
/// `content` and is not copied to `reasoning`.
pub fn read_swe_agent_traj(path: &Path, text: &str) -> Result<Trajectory> {
    Ok(super::read_as(&SweAgent, path, text)?.remove(0))
}

/// SWE-agent `.traj` files ([`read_swe_agent_traj`]).
pub struct SweAgent;

impl TrajectoryFormat for SweAgent {
    fn source(&self) -> &'static str {
        SOURCE_SWE_AGENT
    }
    fn container(&self) -> Container {
        Container::Object
    }
    /// A JSON object whose `history` is an array whose first entry (if any) is a chat
    /// message with a `role`. An OpenHands event stream (`output.jsonl`: `history` of
    /// events with `action` / `observation` / `source`, no `role`) is not one.
    fn detect(&self, container: Container, first: &Value) -> bool {
        container == Container::Object
            && match first.get("history").and_then(Value::as_array) {
                Some(h) => h.first().is_none_or(|e| e.get("role").is_some()),
                None => false,
            }
    }
    fn convert(&self, record: &Record) -> Result<Trajectory> {
        swe_agent_from_value(record.loc, record.value)
    }
}

fn swe_agent_from_value(loc: Loc, v: &Value) -> Result<Trajectory> {
    let path = loc.file;
    let top = as_object(&loc, v, "")?;
    let hist = req_array(&loc, top, "history", "")?;
    let mut messages = Vec::with_capacity(hist.len());
    for (i, m) in hist.iter().enumerate() {
        let p = format!("history[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        msg.tool_calls = openai_tool_calls(&loc, m, &p)?;
        if role == Role::Assistant
            && msg.tool_calls.is_empty()
            && let Some(action) = opt_str(&loc, m, "action", &p)?
        {
            msg.tool_calls.extend(swe_agent_command_call(action));
        }
        if let Some(ids) = get(m, "tool_call_ids") {
            let ip = join(&p, "tool_call_ids");
            let ids = ids.as_array().ok_or_else(|| loc.err(&ip, format!("expected an array, got {}", kind(ids))))?;
            let mut out = Vec::new();
            for (k, id) in ids.iter().enumerate() {
                out.push(
                    id.as_str().ok_or_else(|| {
                        loc.err(&format!("{ip}[{k}]"), format!("expected a string, got {}", kind(id)))
                    })?,
                );
            }
            if !out.is_empty() {
                msg.tool_call_id = Some(out.join(","));
            }
        }
        if msg.tool_call_id.is_none() {
            msg.tool_call_id = opt_str(&loc, m, "tool_call_id", &p)?.map(str::to_string);
        }
        messages.push(msg);
    }
    link_tool_names(&mut messages);
    let instance_id = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    Ok(Trajectory { instance_id, source: SOURCE_SWE_AGENT, resolved: None, tools: None, repo: None, messages })
}
