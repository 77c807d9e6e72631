//! SWE-bench/SWE-smith-trajectories rows (tool calls in `<function=NAME>` text).

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::access::{Loc, as_object, openai_content, opt_bool, opt_str, req_array, req_role, req_str};
use super::text_calls::xml_function_calls;
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_SWE_SMITH, Trajectory};

/// Read SWE-bench/SWE-smith-trajectories rows (a JSON array): row {`instance_id`,
/// `resolved`, `messages` [{`role`, `content`}]}. Assistant tool calls are parsed from
/// the XML-style text ([`xml_function_calls`]).
pub fn read_swe_smith_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as(&SweSmith, path, text)
}

/// Rows of this format (see the reader above).
pub struct SweSmith;

impl TrajectoryFormat for SweSmith {
    fn source(&self) -> &'static str {
        SOURCE_SWE_SMITH
    }
    fn container(&self) -> Container {
        Container::Array
    }
    /// A first row with `traj_id`, or with an assistant message whose text holds `<function=`.
    fn detect(&self, container: Container, first: &Value) -> bool {
        container == Container::Array
            && (first.get("traj_id").is_some()
                || first.get("messages").and_then(Value::as_array).is_some_and(|ms| {
                    ms.iter().any(|m| {
                        m.get("role").and_then(Value::as_str) == Some("assistant")
                            && m.get("content").and_then(Value::as_str).is_some_and(|c| c.contains("<function="))
                    })
                }))
    }
    fn convert(&self, record: &Record) -> Result<Trajectory> {
        swe_smith_row(record.loc, record.value)
    }
}

fn swe_smith_row(loc: Loc, row: &Value) -> Result<Trajectory> {
    let row = as_object(&loc, row, "")?;
    let instance_id = req_str(&loc, row, "instance_id", "")?.to_string();
    let repo = opt_str(&loc, row, "repo", "")?.map(str::to_string);
    let resolved = opt_bool(&loc, row, "resolved", "")?;
    let msgs = req_array(&loc, row, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        if role == Role::Assistant {
            msg.tool_calls = xml_function_calls(&msg.text);
        }
        messages.push(msg);
    }
    Ok(Trajectory { instance_id, source: SOURCE_SWE_SMITH, resolved, tools: None, repo, messages })
}
