//! ATIF, the Agent Trajectory Interchange Format (Harbor's RFC 0001, versions 1.0 to 1.7;
//! also written by NVIDIA NeMo and fast-agent): one JSON document per trajectory, or one
//! a line / a JSON array of them.
//!
//! A document: `schema_version` (`"ATIF-v1.7"`), `session_id` (run-scoped), `trajectory_id`
//! (per document, v1.7), `agent` {`name`, `version`, `tool_definitions`}, `steps`. A step:
//! `step_id` (1, 2, ... in order), `source` (`system` / `user` / `agent`), `message` (a
//! string or text parts), and on agent steps `reasoning_content` and `tool_calls`
//! [{`tool_call_id`, `function_name`, `arguments`}]; any step may carry an `observation`
//! {`results`: [{`source_call_id`, `content`}]}.
//!
//! | step | messages here |
//! |---|---|
//! | `system` | a system message (its `message`) |
//! | `user` | a user message |
//! | `agent` | an assistant message: `message` as text, `reasoning_content` as thinking, `tool_calls` as structured calls (id = `tool_call_id`) |
//! | its `observation` | one tool message per result, after the step's own message: `tool_call_id` = `source_call_id` (which must name a call of the same step), tool name from that call |
//!
//! * **Copied context.** A step with `is_copied_context: true` was copied from an
//!   earlier trajectory (steps kept across a summarization boundary); ATIF says consumers
//!   must keep it out of SFT data. It is read and checked, then **not loaded**: it is no
//!   message, call or observation here, so a continuation file counts only its new
//!   steps and nothing is counted twice. Message indexes run over the messages kept.
//! * An agent step with `llm_call_count: 0` is a deterministic dispatch (no LLM wrote
//!   it; ATIF: SFT pipelines must filter it out): its assistant message is kept with the
//!   training flag false ([`Message::train`](crate::sft::schema::Message::train)).
//! * Instance id: `trajectory_id`, else `session_id`, else `<file stem>:<record index>`
//!   (stable for the same file). ATIF holds no verdict (Harbor's verifier writes it
//!   apart): `resolved` is `None`. `agent.tool_definitions` are the tools. Step
//!   `metrics`, `extra` and embedded `subagent_trajectories` are not loaded.
//!
//! Refused, naming the field: a `schema_version` that is not ATIF 1.x, a `step_id` out of
//! sequence, an unknown `source`, `tool_calls` or `reasoning_content` on a step that is
//! not an agent's, a call without `arguments`, a `source_call_id` naming no call of its
//! step, an image content part (sphragis reads text).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::{Object, join};
use super::openai::{Content, call_arguments};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_ATIF, ToolCall, Trajectory};

/// Read ATIF trajectories (one document, JSON lines or a JSON array; see the module
/// docs). Errors name the record and field (`steps[3].observation.results[0].source_call_id`).
pub fn read_atif(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as::<Atif>(path, text)
}

/// One ATIF trajectory document, the format's record: the fields read ([`read_atif`]).
#[derive(Deserialize)]
pub struct Atif {
    schema_version: String,
    session_id: Option<String>,
    trajectory_id: Option<String>,
    agent: Object<Agent>,
    steps: Vec<Object<Step>>,
}

/// The `agent` object: only its tools are read.
#[derive(Deserialize)]
struct Agent {
    tool_definitions: Option<Value>,
}

/// One `steps` entry.
#[derive(Deserialize)]
struct Step {
    step_id: u64,
    source: String,
    message: Content,
    reasoning_content: Option<String>,
    tool_calls: Option<Vec<Object<Call>>>,
    observation: Option<Object<Observation>>,
    llm_call_count: Option<u64>,
    is_copied_context: Option<bool>,
}

/// One `tool_calls` entry.
#[derive(Deserialize)]
struct Call {
    tool_call_id: String,
    function_name: String,
    arguments: Option<Value>,
}

/// A step's `observation`.
#[derive(Deserialize)]
struct Observation {
    results: Vec<Object<ObservationResult>>,
}

/// One `observation.results` entry (`subagent_trajectory_ref` is not read).
#[derive(Deserialize)]
struct ObservationResult {
    source_call_id: Option<String>,
    #[serde(default)]
    content: Content,
}

/// The role of an ATIF step `source`.
fn role_of(source: &str) -> Option<Role> {
    match source {
        "system" => Some(Role::System),
        "user" => Some(Role::User),
        "agent" => Some(Role::Assistant),
        _ => None,
    }
}

/// Whether `version` is an ATIF 1.x version (`ATIF-v1.0` ... `ATIF-v1.7`; later 1.x
/// versions only add optional fields).
fn known_version(version: &str) -> bool {
    version.strip_prefix("ATIF-v1.").is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
}

impl TrajectoryFormat for Atif {
    const CONTAINER: Container = Container::Object;
    const ID_FIELDS: &'static [&'static str] = &["trajectory_id", "session_id"];

    fn convert(self, record: &Record) -> Result<Trajectory> {
        let loc = record.loc;
        if !known_version(&self.schema_version) {
            return Err(loc.err(
                "schema_version",
                format!("unknown version {:?} (read: ATIF-v1.0 to ATIF-v1.7)", self.schema_version),
            ));
        }
        let mut messages: Vec<Message> = Vec::with_capacity(self.steps.len());
        for (i, Object(step)) in self.steps.into_iter().enumerate() {
            let at = format!("steps[{i}]");
            if step.step_id != i as u64 + 1 {
                return Err(loc.err(
                    &join(&at, "step_id"),
                    format!("{} where {} was expected (ATIF numbers steps 1, 2, ... in order)", step.step_id, i + 1),
                ));
            }
            let Some(role) = role_of(&step.source) else {
                return Err(loc.err(
                    &join(&at, "source"),
                    format!("unknown source {:?} (ATIF's: system, user, agent)", step.source),
                ));
            };
            if role != Role::Assistant {
                for (field, set) in [
                    ("tool_calls", step.tool_calls.as_ref().is_some_and(|c| !c.is_empty())),
                    ("reasoning_content", step.reasoning_content.is_some()),
                ] {
                    if set {
                        return Err(
                            loc.err(&join(&at, field), format!("on a {} step (ATIF: agent steps only)", step.source))
                        );
                    }
                }
            }
            let mut calls = Vec::new();
            for (k, Object(call)) in step.tool_calls.unwrap_or_default().into_iter().enumerate() {
                let call_at = format!("{at}.tool_calls[{k}]");
                let Some(args) = call.arguments.as_ref().filter(|a| !a.is_null()) else {
                    return Err(loc.err(&join(&call_at, "arguments"), "missing"));
                };
                let arguments = call_arguments(&loc, Some(args), &join(&call_at, "arguments"))?;
                calls.push(ToolCall {
                    id: Some(call.tool_call_id),
                    name: call.function_name,
                    arguments,
                    from_text: false,
                });
            }
            let results = step.observation.map(|Object(o)| o.results).unwrap_or_default();
            let mut answers = Vec::with_capacity(results.len());
            for (k, Object(result)) in results.into_iter().enumerate() {
                let name = match &result.source_call_id {
                    None => None,
                    Some(id) => match calls.iter().find(|c| c.id.as_ref() == Some(id)) {
                        Some(call) => Some(call.name.clone()),
                        None => {
                            return Err(loc.err(
                                &format!("{at}.observation.results[{k}].source_call_id"),
                                format!("{id:?} names no tool call of this step"),
                            ));
                        }
                    },
                };
                answers.push((result.source_call_id, name, result.content.0));
            }
            if step.is_copied_context == Some(true) {
                // copied from an earlier trajectory: checked, not loaded (module docs)
                continue;
            }
            let mut msg = Message::new(messages.len(), role, step.message.0);
            msg.reasoning = step.reasoning_content;
            msg.tool_calls = calls;
            if role == Role::Assistant && step.llm_call_count == Some(0) {
                msg.train = Some(false);
            }
            messages.push(msg);
            for (call_id, name, text) in answers {
                let mut tool = Message::new(messages.len(), Role::Tool, text);
                tool.tool_call_id = call_id;
                tool.tool_name = name;
                messages.push(tool);
            }
        }
        let instance_id = [self.trajectory_id, self.session_id]
            .into_iter()
            .flatten()
            .find(|id| !id.is_empty())
            .unwrap_or_else(|| format!("{}:{}", record.file_stem(), record.index));
        let Object(agent) = self.agent;
        Ok(Trajectory {
            instance_id,
            source: SOURCE_ATIF,
            resolved: None,
            tools: agent.tool_definitions.filter(|t| !t.is_null()),
            repo: None,
            messages,
            attempt: None,
        })
    }

    /// Any container whose first record has a string `schema_version` starting `ATIF-`
    /// (a version it does not read is then refused at the field).
    fn detect(_container: Container, first: &Value) -> bool {
        first.get("schema_version").and_then(Value::as_str).is_some_and(|v| v.starts_with("ATIF-"))
    }
}
