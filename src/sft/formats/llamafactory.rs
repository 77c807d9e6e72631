//! LLaMA-Factory v1 rows (typed content parts), as JSON lines or a JSON array.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Deserializer, de};
use serde_json::Value;

use super::access::{Object, from_value, join, parse_nested};
use super::openai::{NamedCall, call_arguments, role};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_LLAMAFACTORY, ToolCall, Trajectory};

/// Read LLaMA-Factory v1 JSONL: one row a line {`messages`, `tools` (JSON string or
/// array of OpenAI function schemas)}; blank lines skipped, LF or CRLF.
/// `messages[*]` {`role`, `content`: [{`type`: "text" | "reasoning" | "tool_call",
/// `value`: string}], `loss_weight`?}; a `tool_call` value is a JSON string
/// `{"name", "arguments"}` (`arguments` an object or a JSON string of one).
///
/// * text parts are concatenated into `text`, reasoning parts into `reasoning`;
/// * `loss_weight` as given; `train` = weight > 1e-6 with LLaMA-Factory's default
///   weight 1.0 for assistant and 0.0 otherwise (`src/llamafactory/v1/core/rendering`);
///   a `loss_weight` of `NaN` / `Infinity` is refused ("NaN in a number field"): it has
///   no supervision meaning, and reading it as "not set" would train the message;
/// * `instance_id` = `<file stem>:<row index>` (0-based over non-blank lines).
pub fn read_llamafactory_jsonl(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as::<LlamaFactory>(path, text)
}

/// Whether a `messages` value uses typed parts `[{type, value}]` (LLaMA-Factory v1).
fn has_typed_parts(messages: &Value) -> bool {
    messages.as_array().is_some_and(|ms| {
        ms.iter().any(|m| {
            m.get("content")
                .and_then(Value::as_array)
                .is_some_and(|parts| parts.iter().any(|p| p.get("type").is_some() && p.get("value").is_some()))
        })
    })
}

/// One LLaMA-Factory row, the format's record: the fields read
/// ([`read_llamafactory_jsonl`]).
#[derive(Deserialize)]
pub struct LlamaFactory {
    messages: Vec<Object<LlamaFactoryMessage>>,
    /// A JSON string (parsed) or the schemas themselves.
    tools: Option<Value>,
}

/// One `messages` entry of a [`LlamaFactory`] row.
#[derive(Deserialize)]
struct LlamaFactoryMessage {
    #[serde(deserialize_with = "role")]
    role: Role,
    content: Vec<Object<Part>>,
    loss_weight: Option<f64>,
}

/// One typed content part.
#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: PartKind,
    value: String,
}

/// A part's `type`.
enum PartKind {
    Text,
    Reasoning,
    ToolCall,
}

impl<'de> Deserialize<'de> for PartKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match String::deserialize(deserializer)?.as_str() {
            "text" => Ok(PartKind::Text),
            "reasoning" => Ok(PartKind::Reasoning),
            "tool_call" => Ok(PartKind::ToolCall),
            other => Err(de::Error::custom(format!("unsupported part type {other:?}"))),
        }
    }
}

impl TrajectoryFormat for LlamaFactory {
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
            let mut msg = Message::new(i, m.role, String::new());
            for (k, Object(part)) in m.content.into_iter().enumerate() {
                match part.kind {
                    PartKind::Text => msg.text.push_str(&part.value),
                    PartKind::Reasoning => msg.reasoning.get_or_insert_with(String::new).push_str(&part.value),
                    PartKind::ToolCall => {
                        let at = format!("messages[{i}].content[{k}].value");
                        let call: NamedCall = from_value(&parse_nested(&loc, &part.value, &at)?)
                            .map_err(|r| loc.err(&join(&at, &r.path), r.message))?;
                        let arguments = call_arguments(&loc, call.arguments.as_ref(), &join(&at, "arguments"))?;
                        msg.tool_calls.push(ToolCall { id: None, name: call.name, arguments, from_text: false });
                    }
                }
            }
            // `NaN` / `Infinity` were read as null: never taken for "not set"
            let at = format!("messages[{i}].loss_weight");
            if m.loss_weight.is_none()
                && let Some(reason) = record.non_finite(&at, "a number field")
            {
                return Err(loc.err(&at, reason));
            }
            msg.loss_weight = m.loss_weight;
            let weight = msg.loss_weight.unwrap_or(if m.role == Role::Assistant { 1.0 } else { 0.0 });
            msg.train = Some(weight > 1e-6);
            messages.push(msg);
        }
        let instance_id = format!("{}:{}", record.file_stem(), record.index);
        Ok(Trajectory {
            instance_id,
            source: SOURCE_LLAMAFACTORY,
            resolved: None,
            tools,
            repo: None,
            messages,
            attempt: None,
        })
    }

    /// Any container whose first record's `messages` use typed parts `[{type, value}]`.
    fn detect(_container: Container, first: &Value) -> bool {
        first.get("messages").is_some_and(has_typed_parts)
    }
}
