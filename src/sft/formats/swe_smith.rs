//! SWE-bench/SWE-smith-trajectories rows, in each of the dataset's three splits.
//!
//! The dataset publishes the same trajectories three ways, one split each, and the calls
//! of every split become tool calls, so the figures of the three agree:
//!
//! | split | how an assistant message calls a tool | read as |
//! |---|---|---|
//! | `tool` | OpenAI `tool_calls`, answered by `role: "tool"` messages | the structured calls |
//! | `xml` | `<function=NAME><parameter=P>V</parameter></function>` in the text | [`xml_function_calls`] |
//! | `ticks` | SWE-agent's thought-action text: the command is the last fenced block | [`ticks_call`] |
//!
//! A row's split is told from its messages: structured calls anywhere → `tool`; else a
//! `<function=` call in an assistant message → `xml`; else `ticks`. `messages` is a list, or
//! — as the Hugging Face dataset stores it — a JSON string holding that list (errors then
//! name the field inside it: `messages[3].role`).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::access::{Object, from_value, join, kind, parse_nested};
use super::openai::{ChatMessage, chat_messages};
use super::text_calls::{swe_agent_command_call, swe_agent_text_action, xml_function_calls};
use super::{Container, Record, TrajectoryFormat};
use crate::sft::schema::{Role, SOURCE_SWE_SMITH, ToolCall, Trajectory};

/// Read SWE-bench/SWE-smith-trajectories rows (a JSON array, or JSON lines as
/// `datasets.to_json` writes them): row {`instance_id`, `resolved`, `messages`
/// [{`role`, `content`, `tool_calls`, `tool_call_id`}] or that list as a JSON string}.
/// Tool calls per split: see the module docs.
pub fn read_swe_smith_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    super::read_as::<SweSmith>(path, text)
}

/// One swe-smith row, the format's record: the fields read, in the files' order
/// ([`read_swe_smith_rows`]).
#[derive(Deserialize)]
pub struct SweSmith {
    /// The messages, or a JSON string holding them (the Hugging Face dataset).
    messages: Value,
    instance_id: String,
    resolved: Option<bool>,
    /// `owner/name`, as SWE-bench task rows carry it.
    repo: Option<String>,
}

/// A ticks-split command as a tool call: SWE-agent's `str_replace_editor <command> <path>
/// [--<parameter> <value>]...` (its signature; words split as a POSIX shell splits them,
/// by the `shlex` crate) becomes `str_replace_editor` with `{command, path, parameter: value,
/// ...}` — the arguments the xml and tool splits give the same call; any other command is
/// SWE-agent's text command ([`swe_agent_command_call`]: name = first word, `{"command":
/// <the command>}`, which a shell runs unless it is an interface command). A
/// `str_replace_editor` line the shell rules cannot split (an unclosed quote) is kept as a
/// text command too.
pub fn ticks_call(action: &str) -> Option<ToolCall> {
    let command = action.trim();
    if let Some(rest) = command.strip_prefix("str_replace_editor")
        && rest.starts_with(char::is_whitespace)
        && let Some(words) = shlex::split(rest)
    {
        let mut args = Map::new();
        let mut positional = ["command", "path"].into_iter();
        let mut words = words.into_iter();
        while let Some(w) = words.next() {
            if let Some(flag) = w.strip_prefix("--") {
                args.insert(flag.to_string(), Value::String(words.next().unwrap_or_default()));
            } else if let Some(name) = positional.next() {
                args.insert(name.to_string(), Value::String(w));
            }
        }
        return Some(ToolCall {
            id: None,
            name: "str_replace_editor".into(),
            arguments: Value::Object(args),
            from_text: true,
        });
    }
    swe_agent_command_call(command)
}

impl TrajectoryFormat for SweSmith {
    const CONTAINER: Container = Container::Array;
    const ID_FIELDS: &'static [&'static str] = &["instance_id", "repo"];

    fn convert(self, record: &Record) -> Result<Trajectory> {
        let loc = &record.loc;
        let list = match self.messages {
            Value::String(s) => parse_nested(loc, &s, "messages")?,
            v => v,
        };
        let Value::Array(items) = list else {
            return Err(loc.err("messages", format!("invalid type: {}, expected an array of messages", kind(&list))));
        };
        let mut read = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = format!("messages[{i}]");
            if !item.is_object() {
                return Err(loc.err(&field, format!("invalid type: {}, expected an object", kind(item))));
            }
            let m: ChatMessage = from_value(item).map_err(|r| loc.err(&join(&field, &r.path), r.message))?;
            read.push(Object(m));
        }
        let mut messages = chat_messages(loc, "messages", read)?;
        let assistant = |m: &&crate::sft::schema::Message| m.role == Role::Assistant;
        let structured = messages.iter().any(|m| !m.tool_calls.is_empty());
        let xml = !structured && messages.iter().filter(assistant).any(|m| m.text.contains("<function="));
        if !structured {
            for m in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
                m.tool_calls = if xml {
                    xml_function_calls(&m.text)
                } else {
                    swe_agent_text_action(&m.text).and_then(ticks_call).into_iter().collect()
                };
            }
        }
        let SweSmith { instance_id, resolved, repo, .. } = self;
        Ok(Trajectory { instance_id, source: SOURCE_SWE_SMITH, resolved, tools: None, repo, messages, attempt: None })
    }

    /// A row format (a JSON array, JSON lines, or one object): a first row with `traj_id`
    /// (the dataset's trajectory id, in every split), or with an assistant message whose
    /// text holds `<function=`.
    fn detect(_container: Container, first: &Value) -> bool {
        first.get("traj_id").is_some()
            || first.get("messages").and_then(Value::as_array).is_some_and(|ms| {
                ms.iter().any(|m| {
                    m.get("role").and_then(Value::as_str) == Some("assistant")
                        && m.get("content").and_then(Value::as_str).is_some_and(|c| c.contains("<function="))
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_str_replace_editor_reads_as_the_xml_split_does() {
        let c = ticks_call(
            "str_replace_editor str_replace /testbed/a.py   --old_str 'return a - b' --new_str 'return a + b'\n",
        )
        .unwrap();
        assert_eq!(c.name, "str_replace_editor");
        assert_eq!(
            c.arguments,
            serde_json::json!({"command": "str_replace", "path": "/testbed/a.py", "old_str": "return a - b", "new_str": "return a + b"})
        );
        let view = ticks_call("str_replace_editor view /testbed --view_range '[1, 50]'").unwrap();
        assert_eq!(view.arguments, serde_json::json!({"command": "view", "path": "/testbed", "view_range": "[1, 50]"}));
        // a shell command: SWE-agent's text command, the whole line
        let ls = ticks_call("ls -la /testbed\n").unwrap();
        assert_eq!((ls.name.as_str(), &ls.arguments), ("ls", &serde_json::json!({"command": "ls -la /testbed"})));
        // an unclosed quote: kept as the text command
        let odd = ticks_call("str_replace_editor create /x --file_text 'unclosed").unwrap();
        assert_eq!(odd.arguments, serde_json::json!({"command": "str_replace_editor create /x --file_text 'unclosed"}));
        assert!(ticks_call("  \n").is_none());
    }
}
