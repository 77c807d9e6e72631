//! OpenHands rows (SWE-Gym/OpenHands-Sampled-Trajectories as extracted by ADP).

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::access::{
    Loc, as_object, get, link_tool_names, openai_content, openai_tool_calls, opt_bool, opt_str, req_array, req_role,
    req_str,
};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_OPENHANDS, Trajectory};

/// Read OpenHands rows (a JSON array; SWE-Gym/OpenHands-Sampled-Trajectories as
/// extracted by ADP): row {`instance_id`, `resolved`, `tools`, `messages`}, messages in
/// OpenAI form {`role`, `content` (string/null/parts), `tool_calls`, `tool_call_id`,
/// `name`}. `arguments` JSON strings are parsed (must be objects; `""` = `{}`).
pub fn read_openhands_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as(&OpenHands, path, text)
}

/// Rows of this format (see the reader above).
pub struct OpenHands;

impl TrajectoryFormat for OpenHands {
    fn source(&self) -> &'static str {
        SOURCE_OPENHANDS
    }
    fn container(&self) -> Container {
        Container::Array
    }
    /// A first row with `tools`, or with a message whose `tool_calls` is not null.
    fn detect(&self, container: Container, first: &Value) -> bool {
        container == Container::Array
            && (first.get("tools").is_some()
                || first
                    .get("messages")
                    .and_then(Value::as_array)
                    .is_some_and(|ms| ms.iter().any(|m| m.get("tool_calls").is_some_and(|c| !c.is_null()))))
    }
    fn convert(&self, record: &Record) -> Result<Trajectory> {
        openhands_row(record.loc, record.value)
    }
}

fn openhands_row(loc: Loc, row: &Value) -> Result<Trajectory> {
    let row = as_object(&loc, row, "")?;
    let instance_id = req_str(&loc, row, "instance_id", "")?.to_string();
    let repo = opt_str(&loc, row, "repo", "")?.map(str::to_string);
    let resolved = opt_bool(&loc, row, "resolved", "")?;
    let tools = get(row, "tools").cloned();
    let msgs = req_array(&loc, row, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        msg.tool_calls = openai_tool_calls(&loc, m, &p)?;
        msg.tool_call_id = opt_str(&loc, m, "tool_call_id", &p)?.map(str::to_string);
        if role == Role::Tool {
            msg.tool_name = opt_str(&loc, m, "name", &p)?.map(str::to_string);
        }
        messages.push(msg);
    }
    link_tool_names(&mut messages);
    Ok(Trajectory { instance_id, source: SOURCE_OPENHANDS, resolved, tools, repo, messages })
}
