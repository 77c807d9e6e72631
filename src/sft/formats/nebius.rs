//! nebius/SWE-agent-trajectories rows.

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::access::{Loc, as_object, opt_bool, opt_str, req_array, req_role, req_str};
use super::text_calls::{swe_agent_command_call, swe_agent_text_action};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_NEBIUS, Trajectory};

/// Read nebius/SWE-agent-trajectories rows (a JSON array): row {`instance_id`, `target`
/// (resolved), `trajectory`}, `trajectory[*]` {`role` system/user/ai, `text`,
/// `system_prompt` (system row, whose `text` is empty), `mask`}.
///
/// * `mask` → [`Message::mask`] and [`Message::train`];
/// * the system row's text is its `system_prompt` when `text` is empty;
/// * an `ai` message's command is the last top-level fenced block
///   ([`swe_agent_text_action`], SWE-agent's own parser for this format); when there is
///   one and it is not blank it becomes one text-style call named after its first word
///   ([`swe_agent_command_call`]). Messages without such a block get no call.
pub fn read_nebius_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as(&Nebius, path, text)
}

/// Rows of this format (see the reader above).
pub struct Nebius;

impl TrajectoryFormat for Nebius {
    fn source(&self) -> &'static str {
        SOURCE_NEBIUS
    }
    fn container(&self) -> Container {
        Container::Array
    }
    /// A first row with `trajectory`.
    fn detect(&self, container: Container, first: &Value) -> bool {
        container == Container::Array && first.get("trajectory").is_some()
    }
    fn convert(&self, record: &Record) -> Result<Trajectory> {
        nebius_row(record.loc, record.value)
    }
}

fn nebius_row(loc: Loc, row: &Value) -> Result<Trajectory> {
    let row = as_object(&loc, row, "")?;
    let instance_id = req_str(&loc, row, "instance_id", "")?.to_string();
    let repo = opt_str(&loc, row, "repo", "")?.map(str::to_string);
    let resolved = opt_bool(&loc, row, "target", "")?;
    let steps = req_array(&loc, row, "trajectory", "")?;
    let mut messages = Vec::with_capacity(steps.len());
    for (i, m) in steps.iter().enumerate() {
        let p = format!("trajectory[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut text = opt_str(&loc, m, "text", &p)?.unwrap_or_default().to_string();
        if role == Role::System && text.is_empty() {
            text = opt_str(&loc, m, "system_prompt", &p)?.unwrap_or_default().to_string();
        }
        let mut msg = Message::new(i, role, text);
        msg.mask = opt_bool(&loc, m, "mask", &p)?;
        msg.train = msg.mask;
        if role == Role::Assistant {
            msg.tool_calls.extend(swe_agent_text_action(&msg.text).and_then(swe_agent_command_call));
        }
        messages.push(msg);
    }
    Ok(Trajectory { instance_id, source: SOURCE_NEBIUS, resolved, tools: None, repo, messages })
}
