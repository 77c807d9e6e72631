//! OpenHands rows (SWE-Gym/OpenHands-Sampled-Trajectories as extracted by ADP), with native
//! function calling (OpenAI `tool_calls`) or without it: OpenHands' non-native mode writes
//! the call as `<function=NAME><parameter=P>V</parameter></function>` text in the assistant
//! message and the result as a user message `EXECUTION RESULT of [NAME]:` (its
//! `fn_call_converter`); those calls are read from the text ([`xml_function_calls`]).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::Object;
use super::openai::{ChatMessage, chat_messages};
use super::text_calls::xml_function_calls;
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Role, SOURCE_OPENHANDS, Trajectory};

/// The start of a non-native OpenHands tool result (a user message).
pub const EXECUTION_RESULT: &str = "EXECUTION RESULT of [";

/// The text calls of OpenHands' own tools, which SWE-smith's xml split never writes (it
/// calls `bash` and `submit`): an assistant text holding one is OpenHands without native
/// function calling even before any result.
pub const NON_NATIVE_CALLS: &[&str] =
    &["<function=execute_bash>", "<function=finish>", "<function=execute_ipython_cell>", "<function=think>"];

/// Read OpenHands rows (a JSON array; SWE-Gym/OpenHands-Sampled-Trajectories as
/// extracted by ADP): row {`instance_id`, `resolved`, `tools`, `messages`}, messages in
/// OpenAI form {`role`, `content` (string/null/parts), `tool_calls`, `tool_call_id`,
/// `name`}. `arguments` JSON strings are parsed (must be objects; `""` = `{}`).
pub fn read_openhands_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as::<OpenHands>(path, text)
}

/// One OpenHands row, the format's record: the fields read, in the files' order
/// ([`read_openhands_rows`]).
#[derive(Deserialize)]
pub struct OpenHands {
    instance_id: String,
    resolved: Option<bool>,
    messages: Vec<Object<ChatMessage>>,
    /// OpenAI tool schemas, kept as given.
    tools: Option<Value>,
    /// `owner/name`, as SWE-bench task rows carry it.
    repo: Option<String>,
}

impl TrajectoryFormat for OpenHands {
    const CONTAINER: Container = Container::Array;
    const ID_FIELDS: &'static [&'static str] = &["instance_id", "repo"];

    fn convert(self, record: &Record) -> Result<Trajectory> {
        let mut messages = chat_messages(&record.loc, "messages", self.messages)?;
        // non-native function calling: the calls are text (never both in one message)
        for m in messages.iter_mut().filter(|m| m.role == Role::Assistant && m.tool_calls.is_empty()) {
            m.tool_calls = xml_function_calls(&m.text);
        }
        let OpenHands { instance_id, resolved, tools, repo, .. } = self;
        Ok(Trajectory { instance_id, source: SOURCE_OPENHANDS, resolved, tools, repo, messages, attempt: None })
    }

    /// A row format (a JSON array, JSON lines, or one object): a first row without
    /// SWE-smith's `traj_id` that has `tools`, a message whose `tool_calls` is not null, a
    /// user message starting with [`EXECUTION_RESULT`] or an assistant message calling one
    /// of [`NON_NATIVE_CALLS`] (non-native function calling).
    fn detect(_container: Container, first: &Value) -> bool {
        let messages = first.get("messages").and_then(Value::as_array);
        first.get("traj_id").is_none()
            && (first.get("tools").is_some()
                || messages.is_some_and(|ms| ms.iter().any(|m| m.get("tool_calls").is_some_and(|c| !c.is_null())))
                || messages.is_some_and(|ms| {
                    ms.iter().any(|m| {
                        let text = m.get("content").and_then(Value::as_str).unwrap_or_default();
                        match m.get("role").and_then(Value::as_str) {
                            Some("user") => text.starts_with(EXECUTION_RESULT),
                            Some("assistant") => NON_NATIVE_CALLS.iter().any(|c| text.contains(c)),
                            _ => false,
                        }
                    })
                }))
    }
}
