//! OpenHands rows (SWE-Gym/OpenHands-Sampled-Trajectories as extracted by ADP).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::Object;
use super::openai::{ChatMessage, chat_messages};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{SOURCE_OPENHANDS, Trajectory};

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
        let messages = chat_messages(&record.loc, "messages", self.messages)?;
        let OpenHands { instance_id, resolved, tools, repo, .. } = self;
        Ok(Trajectory { instance_id, source: SOURCE_OPENHANDS, resolved, tools, repo, messages })
    }

    /// A first row with `tools`, or with a message whose `tool_calls` is not null.
    fn detect(container: Container, first: &Value) -> bool {
        container == Container::Array
            && (first.get("tools").is_some()
                || first
                    .get("messages")
                    .and_then(Value::as_array)
                    .is_some_and(|ms| ms.iter().any(|m| m.get("tool_calls").is_some_and(|c| !c.is_null()))))
    }
}
