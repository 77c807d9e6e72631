//! nebius/SWE-agent-trajectories rows.

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::Object;
use super::openai::role;
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
    super::read_as::<Nebius>(path, text)
}

/// One `trajectory` entry of a [`Nebius`] row.
#[derive(Deserialize)]
struct Step {
    /// `true`: the dataset trains on the message.
    mask: Option<bool>,
    #[serde(deserialize_with = "role")]
    role: Role,
    /// Read when `text` is empty on the system row.
    system_prompt: Option<String>,
    text: Option<String>,
}

/// One nebius row, the format's record: the fields read, in the files' order
/// ([`read_nebius_rows`]).
#[derive(Deserialize)]
pub struct Nebius {
    instance_id: String,
    /// The evaluator's verdict (`resolved`).
    target: Option<bool>,
    trajectory: Vec<Object<Step>>,
    /// `owner/name`, as SWE-bench task rows carry it.
    repo: Option<String>,
}

impl TrajectoryFormat for Nebius {
    const CONTAINER: Container = Container::Array;
    const ID_FIELDS: &'static [&'static str] = &["instance_id", "repo"];

    fn convert(self, _record: &Record) -> Result<Trajectory> {
        let messages = self.trajectory.into_iter().enumerate().map(|(i, Object(step))| {
            let mut text = step.text.unwrap_or_default();
            if step.role == Role::System && text.is_empty() {
                text = step.system_prompt.unwrap_or_default();
            }
            let mut msg = Message::new(i, step.role, text);
            msg.mask = step.mask;
            msg.train = step.mask;
            if step.role == Role::Assistant {
                msg.tool_calls.extend(swe_agent_text_action(&msg.text).and_then(swe_agent_command_call));
            }
            msg
        });
        let messages = messages.collect();
        let Nebius { instance_id, target, repo, .. } = self;
        Ok(Trajectory {
            instance_id,
            source: SOURCE_NEBIUS,
            resolved: target,
            tools: None,
            repo,
            messages,
            attempt: None,
        })
    }

    /// A first row with `trajectory`.
    fn detect(_container: Container, first: &Value) -> bool {
        first.get("trajectory").is_some()
    }
}
