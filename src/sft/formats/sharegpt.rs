//! LLaMA-Factory's sharegpt format (its `dataset_info.json` `"formatting": "sharegpt"` with
//! the default tags), as JSON lines or a JSON array.
//!
//! A row: `conversations` [{`from`, `value`}], `system` (optional text), `tools` (optional:
//! a JSON string or a list of OpenAI function schemas). The tags, LLaMA-Factory's defaults:
//!
//! | `from` | role | tool calls |
//! |---|---|---|
//! | `system` | system (only as the first turn) | — |
//! | `human` | user | — |
//! | `gpt` | assistant | — |
//! | `function_call` | assistant: the turn that calls | its `value`, a JSON string `{"name", "arguments"}` or a list of them (parallel calls) |
//! | `observation` | tool | — |
//!
//! A row's `system` text is message 0 (as a chat template sees the system prompt), so the
//! conversation's turns are messages 1.. in order; a first `system` turn replaces it. The format names no instance: the id is
//! `<file stem>:<row index>` (0-based over the file's rows), stable for the same file.

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::{Object, from_value, join, parse_nested};
use super::openai::{NamedCall, call_arguments};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_SHAREGPT, ToolCall, Trajectory};

/// Read LLaMA-Factory sharegpt rows (JSON lines or a JSON array; see the module docs).
/// Errors name the row and field (`[2].conversations[3].from`: an unknown tag; a
/// `function_call` value that is not a call).
pub fn read_sharegpt(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as::<ShareGpt>(path, text)
}

/// One sharegpt row, the format's record: the fields read ([`read_sharegpt`]).
#[derive(Deserialize)]
pub struct ShareGpt {
    conversations: Vec<Object<Turn>>,
    system: Option<String>,
    /// A JSON string (parsed) or the schemas themselves.
    tools: Option<Value>,
}

/// One `conversations` entry.
#[derive(Deserialize)]
struct Turn {
    from: String,
    value: String,
}

/// The role of a sharegpt tag, and whether the turn holds calls.
fn role_of(tag: &str) -> Option<(Role, bool)> {
    match tag {
        "system" => Some((Role::System, false)),
        "human" => Some((Role::User, false)),
        "gpt" => Some((Role::Assistant, false)),
        "function_call" => Some((Role::Assistant, true)),
        "observation" => Some((Role::Tool, false)),
        _ => None,
    }
}

impl TrajectoryFormat for ShareGpt {
    const CONTAINER: Container = Container::Lines;

    fn convert(self, record: &Record) -> Result<Trajectory> {
        let loc = record.loc;
        let tools = match self.tools {
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(parse_nested(&loc, &s, "tools")?),
            other => other,
        };
        let mut messages = Vec::with_capacity(self.conversations.len() + 1);
        // a first `system` turn replaces the row's `system` text, as LLaMA-Factory reads it
        let first_is_system = self.conversations.first().is_some_and(|Object(t)| t.from == "system");
        if let Some(system) = self.system.filter(|s| !s.is_empty() && !first_is_system) {
            messages.push(Message::new(0, Role::System, system));
        }
        for (i, Object(turn)) in self.conversations.into_iter().enumerate() {
            let at = format!("conversations[{i}]");
            let Some((role, calls)) = role_of(&turn.from) else {
                return Err(loc.err(
                    &join(&at, "from"),
                    format!(
                        "unknown tag {:?} (LLaMA-Factory's sharegpt tags: system, human, gpt, function_call, observation)",
                        turn.from
                    ),
                ));
            };
            if role == Role::System && i > 0 {
                return Err(
                    loc.err(&join(&at, "from"), "a system turn after the first (LLaMA-Factory reads it first only)")
                );
            }
            let mut msg = Message::new(messages.len(), role, turn.value);
            if calls {
                let value_at = join(&at, "value");
                let parsed = parse_nested(&loc, &msg.text, &value_at)?;
                let list = match parsed {
                    Value::Array(items) => items,
                    one => vec![one],
                };
                for (k, call) in list.iter().enumerate() {
                    let call_at = if list.len() == 1 { value_at.clone() } else { format!("{value_at}[{k}]") };
                    let named: NamedCall =
                        from_value(call).map_err(|r| loc.err(&join(&call_at, &r.path), r.message))?;
                    let arguments = call_arguments(&loc, named.arguments.as_ref(), &join(&call_at, "arguments"))?;
                    msg.tool_calls.push(ToolCall { id: None, name: named.name, arguments, from_text: false });
                }
            }
            messages.push(msg);
        }
        let instance_id = format!("{}:{}", record.file_stem(), record.index);
        Ok(Trajectory {
            instance_id,
            source: SOURCE_SHAREGPT,
            resolved: None,
            tools,
            repo: None,
            messages,
            attempt: None,
        })
    }

    /// Any container whose first record has a `conversations` list (its turns are then read
    /// strictly: a turn without `from` or `value` is refused at its field).
    fn detect(_container: Container, first: &Value) -> bool {
        first.get("conversations").is_some_and(Value::is_array)
    }
}
