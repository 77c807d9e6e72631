//! SWE-agent `.traj` files (their `history`, the chat as sent to the model).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::Object;
use super::openai::{ChatMessage, chat_messages};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{SOURCE_SWE_AGENT, Trajectory};

/// Read one SWE-agent `.traj` file: its `history` [{`role`, `content`, `tool_calls`,
/// `action`, `tool_call_ids`}].
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
    Ok(super::read_as::<SweAgent>(path, text)?.remove(0))
}

/// A SWE-agent `.traj` file, the format's record: the fields read
/// ([`read_swe_agent_traj`]).
#[derive(Deserialize)]
pub struct SweAgent {
    history: Vec<Object<ChatMessage>>,
}

impl TrajectoryFormat for SweAgent {
    const CONTAINER: Container = Container::Object;

    fn convert(self, record: &Record) -> Result<Trajectory> {
        let messages = chat_messages(&record.loc, "history", self.history)?;
        let instance_id = record.file_stem();
        Ok(Trajectory {
            instance_id,
            source: SOURCE_SWE_AGENT,
            resolved: None,
            tools: None,
            repo: None,
            messages,
            attempt: None,
        })
    }

    /// A JSON object whose `history` is an array whose first entry (if any) is a chat
    /// message with a `role`. An OpenHands event stream (`output.jsonl`: `history` of
    /// events with `action` / `observation` / `source`, no `role`) is not one.
    fn detect(container: Container, first: &Value) -> bool {
        container == Container::Object
            && match first.get("history").and_then(Value::as_array) {
                Some(h) => h.first().is_none_or(|e| e.get("role").is_some()),
                None => false,
            }
    }
}
