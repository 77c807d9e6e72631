//! ms-swift's agent rows (its standard `messages` format with agent roles), as JSON lines
//! or a JSON array.
//!
//! A row: `messages` [{`role`, `content`, `loss`?}], `tools` (optional: a JSON string or a
//! list of OpenAI function schemas). Roles, as ms-swift's agent templates read them:
//!
//! | `role` | role here | tool calls |
//! |---|---|---|
//! | `system`, `user`, `assistant` | the same | — |
//! | `tool_call` | assistant: the turn that calls (consecutive ones are parallel calls) | its `content`, a JSON string `{"name", "arguments"}` |
//! | `tool_response`, `tool` | tool | — |
//!
//! A message's `loss` (true / false) is the producer's supervision intent for it: kept as
//! [`crate::sft::schema::Message::train`], so `views build` honours it and a view can be
//! checked against it; without `loss` the format declares nothing. The format names no
//! instance: the id is `<file stem>:<row index>` (0-based over the file's rows).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::{Object, from_value, join, parse_nested};
use super::openai::{Content, NamedCall, call_arguments};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_MS_SWIFT, ToolCall, Trajectory};

/// Read ms-swift agent rows (JSON lines or a JSON array; see the module docs). Errors name
/// the row and field (`[2].messages[3].role`: an unknown role; a `tool_call` content that
/// is not a call; a `loss` that is not a boolean).
pub fn read_ms_swift(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as::<MsSwift>(path, text)
}

/// One ms-swift row, the format's record: the fields read ([`read_ms_swift`]).
#[derive(Deserialize)]
pub struct MsSwift {
    messages: Vec<Object<SwiftMessage>>,
    /// A JSON string (parsed) or the schemas themselves.
    tools: Option<Value>,
}

/// One `messages` entry.
#[derive(Deserialize)]
struct SwiftMessage {
    role: String,
    #[serde(default)]
    content: Content,
    loss: Option<bool>,
}

/// The role of an ms-swift role name, and whether the message is a call.
fn role_of(name: &str) -> Option<(Role, bool)> {
    match name {
        "system" => Some((Role::System, false)),
        "user" => Some((Role::User, false)),
        "assistant" => Some((Role::Assistant, false)),
        "tool_call" => Some((Role::Assistant, true)),
        "tool_response" | "tool" => Some((Role::Tool, false)),
        _ => None,
    }
}

/// Whether a `messages` value holds ms-swift's agent roles or a per-message `loss` flag (of
/// any type: one that is not a boolean is then refused at its field).
fn is_swift(messages: &Value) -> bool {
    messages.as_array().is_some_and(|ms| {
        ms.iter().any(|m| {
            matches!(m.get("role").and_then(Value::as_str), Some("tool_call" | "tool_response"))
                || m.get("loss").is_some()
        })
    })
}

impl TrajectoryFormat for MsSwift {
    const CONTAINER: Container = Container::Lines;

    fn convert(self, record: &Record) -> Result<Trajectory> {
        let loc = record.loc;
        let tools = match self.tools {
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(parse_nested(&loc, &s, "tools")?),
            other => other,
        };
        let mut messages = Vec::with_capacity(self.messages.len());
        for (i, Object(m)) in self.messages.into_iter().enumerate() {
            let at = format!("messages[{i}]");
            let Some((role, call)) = role_of(&m.role) else {
                return Err(loc.err(
                    &join(&at, "role"),
                    format!(
                        "unknown role {:?} (ms-swift's: system, user, assistant, tool_call, tool_response, tool)",
                        m.role
                    ),
                ));
            };
            let mut msg = Message::new(i, role, m.content.0);
            if call {
                let content_at = join(&at, "content");
                let named: NamedCall = from_value(&parse_nested(&loc, &msg.text, &content_at)?)
                    .map_err(|r| loc.err(&join(&content_at, &r.path), r.message))?;
                let arguments = call_arguments(&loc, named.arguments.as_ref(), &join(&content_at, "arguments"))?;
                msg.tool_calls.push(ToolCall { id: None, name: named.name, arguments, from_text: false });
            }
            msg.train = m.loss;
            messages.push(msg);
        }
        let instance_id = format!("{}:{}", record.file_stem(), record.index);
        Ok(Trajectory {
            instance_id,
            source: SOURCE_MS_SWIFT,
            resolved: None,
            tools,
            repo: None,
            messages,
            attempt: None,
        })
    }

    /// Any container whose first record's `messages` hold a `tool_call` / `tool_response`
    /// role or a `loss`.
    fn detect(_container: Container, first: &Value) -> bool {
        first.get("messages").is_some_and(is_swift)
    }
}
