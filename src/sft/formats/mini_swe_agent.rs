//! mini-swe-agent trajectories (`<id>.traj.json`, `trajectory_format`
//! `mini-swe-agent-1` and 2.x's `mini-swe-agent-1.1`); see `shared/data/sft/*/PROVENANCE.md`.

use std::path::Path;
use std::sync::LazyLock;

use anyhow::Result;
use regex::Regex;
use serde_json::{Map, Value};

use super::access::{
    Loc, as_object, get, join, link_tool_names, openai_content, openai_tool_calls, opt_str, req_array, req_role,
};
use super::text_calls::{bash_blocks, bash_call, observation_returncode};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_MINI_SWE_AGENT, Trajectory};

/// Read one mini-swe-agent trajectory (`trajectory_format` "mini-swe-agent-1": top-level
/// `instance_id`, `messages[*]` {`role`, `content`, `extra`}).
///
/// `trajectory_format` "mini-swe-agent-1.1" (mini-swe-agent 2.x, its docs' "v2 migration
/// guide"): assistant messages carry OpenAI `tool_calls` (tool-calling models) or
/// ```` ```mswea_bash_command ```` blocks (text-based models); observations are `role:
/// "tool"` messages with `tool_call_id` (or `user` messages for text-based models); the
/// last message is `role: "exit"` (the submission), which is not a chat message and is
/// not stored. Any other `trajectory_format` value is an error naming the field.
///
/// * assistant messages: one `bash` [`ToolCall`](crate::sft::schema::ToolCall) per ```` ```bash ```` block
///   ([`bash_blocks`]), `reasoning` = `extra.response.choices[0].message.reasoning`;
/// * user messages: `returncode` from a leading `<returncode>N</returncode>`;
/// * `resolved` is `None`: the trajectory carries no evaluation. Its SWE-bench
///   `report.json` (`<root>/logs/<id>/report.json` in SWE-bench experiment folders) is
///   never read from here: load it with `load outcomes`, so it is logged with its
///   SHA-256 like every input.
///
/// `instance_id` falls back to the file name without `.traj.json` when absent.
pub fn read_mini_swe_agent(path: &Path, text: &str) -> Result<Trajectory> {
    Ok(super::read_as(&MiniSweAgent, path, text)?.remove(0))
}

/// mini-swe-agent `.traj.json` files ([`read_mini_swe_agent`]).
pub struct MiniSweAgent;

impl TrajectoryFormat for MiniSweAgent {
    fn source(&self) -> &'static str {
        SOURCE_MINI_SWE_AGENT
    }
    fn container(&self) -> Container {
        Container::Object
    }
    /// A JSON object with `trajectory_format` (any value: [`read_mini_swe_agent`]
    /// refuses one it does not know), or with `messages` + `info`.
    fn detect(&self, container: Container, first: &Value) -> bool {
        container == Container::Object
            && (first.get("trajectory_format").is_some()
                || (first.get("messages").is_some() && first.get("info").is_some()))
    }
    fn convert(&self, record: &Record) -> Result<Trajectory> {
        mini_swe_agent_from_value(record.loc, record.value)
    }
}

/// The `trajectory_format` values [`read_mini_swe_agent`] knows: 1.x files, and 2.x
/// files (`mini-swe-agent-1.1`). Any other value is refused, never guessed.
pub const MINI_SWE_AGENT_FORMATS: &[&str] = &["mini-swe-agent-1", "mini-swe-agent-1.1"];

/// mini-swe-agent 2.x's text-based `action_regex` default: the fence is named
/// `mswea_bash_command` (1.x: `bash`); same shape as [`BASH_BLOCK`].
static MSWEA_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```mswea_bash_command\s*\n(.*?)\r?\n```").expect("mswea block regex"));

fn mini_swe_agent_from_value(loc: Loc, v: &Value) -> Result<Trajectory> {
    let path = loc.file;
    let top = as_object(&loc, v, "")?;
    let v2 = match opt_str(&loc, top, "trajectory_format", "")? {
        None | Some("mini-swe-agent-1") => false,
        Some("mini-swe-agent-1.1") => true,
        Some(other) => {
            return Err(loc.err(
                "trajectory_format",
                format!("unknown value {other:?} (known: {})", MINI_SWE_AGENT_FORMATS.join(", ")),
            ));
        }
    };
    let instance_id = match opt_str(&loc, top, "instance_id", "")? {
        Some(s) => s.to_string(),
        None => {
            let name = path.file_name().and_then(|s| s.to_str()).unwrap_or_default();
            name.strip_suffix(".traj.json").unwrap_or(name).to_string()
        }
    };
    let msgs = req_array(&loc, top, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        // 2.x ends with `{"role": "exit", "content": <submission>, "extra": {exit_status,
        // submission}}`: the harness's record of the exit, never sent to the model.
        if v2 && get(m, "role").and_then(Value::as_str) == Some("exit") {
            if i + 1 != msgs.len() {
                return Err(loc.err(&join(&p, "role"), "an `exit` message before the last message"));
            }
            break;
        }
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        match role {
            Role::Assistant if v2 => {
                // tool-calling models: OpenAI `tool_calls`; text-based models: fenced blocks
                msg.tool_calls = openai_tool_calls(&loc, m, &p)?;
                if msg.tool_calls.is_empty() {
                    msg.tool_calls = MSWEA_BLOCK
                        .captures_iter(&msg.text)
                        .map(|c| bash_call(c.get(1).map_or("", |g| g.as_str())))
                        .collect();
                }
                msg.reasoning = mini_reasoning(&loc, m, &p)?;
            }
            Role::Assistant => {
                msg.tool_calls = bash_blocks(&msg.text).into_iter().map(bash_call).collect();
                msg.reasoning = mini_reasoning(&loc, m, &p)?;
            }
            Role::Tool => {
                msg.tool_call_id = opt_str(&loc, m, "tool_call_id", &p)?.map(str::to_string);
                msg.returncode = observation_returncode(&msg.text);
            }
            Role::User => msg.returncode = observation_returncode(&msg.text),
            _ => {}
        }
        messages.push(msg);
    }
    link_tool_names(&mut messages);
    Ok(Trajectory { instance_id, source: SOURCE_MINI_SWE_AGENT, resolved: None, tools: None, repo: None, messages })
}

/// `extra.response.choices[0].message.reasoning`; any missing link → `None`.
fn mini_reasoning(loc: &Loc, m: &Map<String, Value>, path: &str) -> Result<Option<String>> {
    let msg = get(m, "extra")
        .and_then(|e| e.get("response"))
        .and_then(|r| r.get("choices"))
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("message"))
        .and_then(Value::as_object);
    match msg {
        None => Ok(None),
        Some(o) => {
            Ok(opt_str(loc, o, "reasoning", &join(path, "extra.response.choices[0].message"))?.map(str::to_string))
        }
    }
}
