//! SWE-bench/SWE-smith-trajectories rows (tool calls in `<function=NAME>` text).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::access::Object;
use super::openai::{Content, role};
use super::text_calls::xml_function_calls;
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Message, Role, SOURCE_SWE_SMITH, Trajectory};

/// Read SWE-bench/SWE-smith-trajectories rows (a JSON array): row {`instance_id`,
/// `resolved`, `messages` [{`role`, `content`}]}. Assistant tool calls are parsed from
/// the XML-style text ([`xml_function_calls`]).
pub fn read_swe_smith_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as::<SweSmith>(path, text)
}

/// One message of a [`SweSmith`] row: its calls are in the text.
#[derive(Deserialize)]
struct SweSmithMessage {
    #[serde(deserialize_with = "role")]
    role: Role,
    #[serde(default)]
    content: Content,
}

/// One swe-smith row, the format's record: the fields read, in the files' order
/// ([`read_swe_smith_rows`]).
#[derive(Deserialize)]
pub struct SweSmith {
    messages: Vec<Object<SweSmithMessage>>,
    instance_id: String,
    resolved: Option<bool>,
    /// `owner/name`, as SWE-bench task rows carry it.
    repo: Option<String>,
}

impl TrajectoryFormat for SweSmith {
    const CONTAINER: Container = Container::Array;
    const ID_FIELDS: &'static [&'static str] = &["instance_id", "repo"];

    fn convert(self, _record: &Record) -> Result<Trajectory> {
        let messages = self.messages.into_iter().enumerate().map(|(i, Object(m))| {
            let mut msg = Message::new(i, m.role, m.content.0);
            if m.role == Role::Assistant {
                msg.tool_calls = xml_function_calls(&msg.text);
            }
            msg
        });
        let messages = messages.collect();
        let SweSmith { instance_id, resolved, repo, .. } = self;
        Ok(Trajectory { instance_id, source: SOURCE_SWE_SMITH, resolved, tools: None, repo, messages })
    }

    /// A first row with `traj_id`, or with an assistant message whose text holds `<function=`.
    fn detect(container: Container, first: &Value) -> bool {
        container == Container::Array
            && (first.get("traj_id").is_some()
                || first.get("messages").and_then(Value::as_array).is_some_and(|ms| {
                    ms.iter().any(|m| {
                        m.get("role").and_then(Value::as_str) == Some("assistant")
                            && m.get("content").and_then(Value::as_str).is_some_and(|c| c.contains("<function="))
                    })
                }))
    }
}
