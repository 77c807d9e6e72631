//! LLaMA-Factory v1 rows (typed content parts), as JSON lines or a JSON array.

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::access::{as_object, call_arguments, get, join, kind, parse_nested, req_array, req_role, req_str};
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
    super::read_as(&LlamaFactory, path, text)
}

/// LLaMA-Factory v1 rows ([`read_llamafactory_jsonl`]).
pub struct LlamaFactory;

impl TrajectoryFormat for LlamaFactory {
    fn source(&self) -> &'static str {
        SOURCE_LLAMAFACTORY
    }
    fn container(&self) -> Container {
        Container::Lines
    }
    /// Any container whose first record's `messages` use typed parts `[{type, value}]`.
    fn detect(&self, _container: Container, first: &Value) -> bool {
        first.get("messages").is_some_and(has_typed_parts)
    }
    fn convert(&self, record: &Record) -> Result<Trajectory> {
        llamafactory_row(record)
    }
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

fn llamafactory_row(record: &Record) -> Result<Trajectory> {
    let loc = record.loc;
    let row = record.value;
    let instance_id = format!("{}:{}", record.file_stem(), record.index);
    let row = as_object(&loc, row, "")?;
    let tools = match get(row, "tools") {
        None => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(parse_nested(&loc, s, "tools")?),
        Some(v) => Some(v.clone()),
    };
    let msgs = req_array(&loc, row, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, String::new());
        let cp = join(&p, "content");
        let parts = req_array(&loc, m, "content", &p)?;
        for (k, part) in parts.iter().enumerate() {
            let pp = format!("{cp}[{k}]");
            let part = as_object(&loc, part, &pp)?;
            let ty = req_str(&loc, part, "type", &pp)?;
            let value = req_str(&loc, part, "value", &pp)?;
            match ty {
                "text" => msg.text.push_str(value),
                "reasoning" => msg.reasoning.get_or_insert_with(String::new).push_str(value),
                "tool_call" => {
                    let vp = join(&pp, "value");
                    let call = parse_nested(&loc, value, &vp)?;
                    let call = as_object(&loc, &call, &vp)?;
                    let name = req_str(&loc, call, "name", &vp)?.to_string();
                    let arguments = call_arguments(&loc, get(call, "arguments"), &join(&vp, "arguments"))?;
                    msg.tool_calls.push(ToolCall { id: None, name, arguments, from_text: false });
                }
                other => return Err(loc.err(&join(&pp, "type"), format!("unsupported part type {other:?}"))),
            }
        }
        msg.loss_weight = match get(m, "loss_weight") {
            // `NaN` / `Infinity` were read as null: never taken for "not set"
            None => match record.non_finite(&join(&p, "loss_weight"), "a number field") {
                Some(reason) => return Err(loc.err(&join(&p, "loss_weight"), reason)),
                None => None,
            },
            Some(v) => Some(
                v.as_f64()
                    .ok_or_else(|| loc.err(&join(&p, "loss_weight"), format!("expected a number, got {}", kind(v))))?,
            ),
        };
        let weight = msg.loss_weight.unwrap_or(if role == Role::Assistant { 1.0 } else { 0.0 });
        msg.train = Some(weight > 1e-6);
        messages.push(msg);
    }
    Ok(Trajectory { instance_id, source: SOURCE_LLAMAFACTORY, resolved: None, tools, repo: None, messages })
}
