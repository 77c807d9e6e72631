//! mini-swe-agent trajectories (`<id>.traj.json`, `trajectory_format`
//! `mini-swe-agent-1` and 2.x's `mini-swe-agent-1.1`); see `shared/data/sft/*/PROVENANCE.md`.

use std::path::Path;
use std::sync::LazyLock;

use anyhow::Result;
use regex::Regex;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::access::Object;
use super::openai::{Content, ToolCallIn, link_tool_names, parse_role, tool_calls};
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
    Ok(super::read_as::<MiniSweAgent>(path, text)?.remove(0))
}

/// The `trajectory_format` values [`read_mini_swe_agent`] knows: 1.x files, and 2.x
/// files (`mini-swe-agent-1.1`). Any other value is refused, never guessed.
pub const MINI_SWE_AGENT_FORMATS: &[&str] = &["mini-swe-agent-1", "mini-swe-agent-1.1"];

/// mini-swe-agent 2.x's text-based `action_regex` default: the fence is named
/// `mswea_bash_command` (1.x: `bash`); same shape as [`BASH_BLOCK`].
static MSWEA_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```mswea_bash_command\s*\n(.*?)\r?\n```").expect("mswea block regex"));

/// The format a trajectory declares, read before the rest: a format not known is
/// refused before its fields are looked at.
#[derive(Deserialize)]
struct Header {
    trajectory_format: Option<String>,
}

/// One mini-swe-agent `.traj.json` file, the format's record: the fields read
/// ([`read_mini_swe_agent`]).
#[derive(Deserialize)]
pub struct MiniSweAgent {
    instance_id: Option<String>,
    messages: Vec<Object<TrajMessage>>,
    /// One of [`MINI_SWE_AGENT_FORMATS`] (checked first), or absent (1.x).
    trajectory_format: Option<String>,
}

/// One `messages` entry.
#[derive(Deserialize)]
struct TrajMessage {
    role: TrajRole,
    #[serde(default)]
    content: Content,
    /// 2.x, tool-calling models (assistant messages).
    tool_calls: Option<Vec<Object<ToolCallIn>>>,
    /// 2.x, tool messages.
    tool_call_id: Option<String>,
    extra: Option<Object<Extra>>,
}

/// A message's `role`: a chat role, or 2.x's closing `exit`.
enum TrajRole {
    Chat(Role),
    Exit,
}

impl<'de> Deserialize<'de> for TrajRole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match String::deserialize(deserializer)?.as_str() {
            "exit" => Ok(TrajRole::Exit),
            other => parse_role(other).map(TrajRole::Chat),
        }
    }
}

/// `extra`: the model's response as the harness kept it; only
/// `response.choices[0].message.reasoning` is read (a link absent or null: no
/// reasoning).
#[derive(Deserialize)]
struct Extra {
    response: Option<Object<Response>>,
}

/// `extra.response` (a chat completion).
#[derive(Deserialize)]
struct Response {
    choices: Option<Vec<Object<Choice>>>,
}

/// `extra.response.choices[k]`.
#[derive(Deserialize)]
struct Choice {
    message: Option<Object<ChoiceMessage>>,
}

/// `extra.response.choices[k].message`.
#[derive(Deserialize)]
struct ChoiceMessage {
    reasoning: Option<String>,
}

impl Extra {
    /// `response.choices[0].message.reasoning`.
    fn reasoning(self) -> Option<String> {
        let Object(response) = self.response?;
        let Object(choice) = response.choices?.into_iter().next()?;
        choice.message?.0.reasoning
    }
}

impl TrajectoryFormat for MiniSweAgent {
    const CONTAINER: Container = Container::Object;
    const ID_FIELDS: &'static [&'static str] = &["instance_id"];

    /// A `trajectory_format` of [`MINI_SWE_AGENT_FORMATS`], or none.
    fn precheck(record: &Record) -> Result<()> {
        match record.deserialize::<Header>()?.trajectory_format {
            Some(f) if !MINI_SWE_AGENT_FORMATS.contains(&f.as_str()) => Err(record.loc.err(
                "trajectory_format",
                format!("unknown value {f:?} (known: {})", MINI_SWE_AGENT_FORMATS.join(", ")),
            )),
            _ => Ok(()),
        }
    }

    fn convert(self, record: &Record) -> Result<Trajectory> {
        let loc = record.loc;
        let v2 = self.trajectory_format.as_deref() == Some("mini-swe-agent-1.1");
        let count = self.messages.len();
        let mut messages = Vec::with_capacity(count);
        for (i, Object(m)) in self.messages.into_iter().enumerate() {
            let role = match m.role {
                TrajRole::Chat(role) => role,
                // 2.x ends with `{"role": "exit", "content": <submission>, "extra":
                // {exit_status, submission}}`: the harness's record of the exit, never
                // sent to the model.
                TrajRole::Exit if v2 && i + 1 == count => break,
                TrajRole::Exit if v2 => {
                    return Err(loc.err(&format!("messages[{i}].role"), "an `exit` message before the last message"));
                }
                TrajRole::Exit => return Err(loc.err(&format!("messages[{i}].role"), "unknown role \"exit\"")),
            };
            let mut msg = Message::new(i, role, m.content.0);
            match role {
                Role::Assistant if v2 => {
                    // tool-calling models: OpenAI `tool_calls`; text-based models: fenced blocks
                    msg.tool_calls = tool_calls(&loc, m.tool_calls, &format!("messages[{i}]"))?;
                    if msg.tool_calls.is_empty() {
                        msg.tool_calls = MSWEA_BLOCK
                            .captures_iter(&msg.text)
                            .map(|c| bash_call(c.get(1).map_or("", |g| g.as_str())))
                            .collect();
                    }
                    msg.reasoning = m.extra.and_then(|Object(e)| e.reasoning());
                }
                Role::Assistant => {
                    msg.tool_calls = bash_blocks(&msg.text).into_iter().map(bash_call).collect();
                    msg.reasoning = m.extra.and_then(|Object(e)| e.reasoning());
                }
                Role::Tool => {
                    msg.tool_call_id = m.tool_call_id;
                    msg.returncode = observation_returncode(&msg.text);
                }
                Role::User => msg.returncode = observation_returncode(&msg.text),
                _ => {}
            }
            messages.push(msg);
        }
        link_tool_names(&mut messages);
        let instance_id = self.instance_id.unwrap_or_else(|| {
            let name = loc.file.file_name().and_then(|s| s.to_str()).unwrap_or_default();
            name.strip_suffix(".traj.json").unwrap_or(name).to_string()
        });
        Ok(Trajectory {
            instance_id,
            source: SOURCE_MINI_SWE_AGENT,
            resolved: None,
            tools: None,
            repo: None,
            messages,
            attempt: None,
        })
    }

    /// A JSON object with `trajectory_format` (any value: [`read_mini_swe_agent`]
    /// refuses one it does not know), or with `messages` + `info`.
    fn detect(container: Container, first: &Value) -> bool {
        container == Container::Object
            && (first.get("trajectory_format").is_some()
                || (first.get("messages").is_some() && first.get("info").is_some()))
    }
}
