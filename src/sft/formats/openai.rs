//! The OpenAI chat-message pieces several formats share, as serde types: the `role`
//! ([`role`]), the `content` ([`Content`]) and the structured `tool_calls`
//! ([`ToolCallIn`], converted by [`tool_calls`] with their `arguments`), a whole chat
//! message as OpenHands rows and SWE-agent histories write it ([`ChatMessage`],
//! converted by [`chat_messages`]), and the linking of tool messages to the calls they
//! answer ([`link_tool_names`]).

use std::collections::HashMap;
use std::fmt;

use anyhow::Result;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::access::{Loc, Object, kind, parse_nested};
use super::text_calls::swe_agent_command_call;
use crate::sft::schema::{Message, Role, ToolCall};

/// A role string as [`Role::parse`] reads it; anything else is refused as
/// `unknown role "robot"`.
pub(crate) fn parse_role<E: de::Error>(s: &str) -> Result<Role, E> {
    Role::parse(s).ok_or_else(|| E::custom(format!("unknown role {s:?}")))
}

/// `#[serde(deserialize_with = "role")]`: a `role` string read by [`parse_role`].
pub(crate) fn role<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Role, D::Error> {
    parse_role(&String::deserialize(deserializer)?)
}

/// OpenAI-style `content`: a string, null or absent (→ `""`), or a list of
/// `{type: "text", text}` parts, concatenated. Any other part type is refused at its
/// `type` (`unsupported content part type "image_url"`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Content(pub String);

/// One part of a list-valued [`Content`].
#[derive(Deserialize)]
struct TextPart {
    #[serde(rename = "type", deserialize_with = "text_part_type")]
    _type: (),
    text: String,
}

/// A part's `type`, which must be `"text"`.
fn text_part_type<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    match String::deserialize(deserializer)? {
        t if t == "text" => Ok(()),
        t => Err(de::Error::custom(format!("unsupported content part type {t:?}"))),
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of parts")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
                Ok(Content(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Content, E> {
                Ok(Content(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Content, E> {
                Ok(Content::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<Content, E> {
                Ok(Content::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut parts: A) -> Result<Content, A::Error> {
                let mut text = String::new();
                while let Some(Object(part)) = parts.next_element::<Object<TextPart>>()? {
                    text.push_str(&part.text);
                }
                Ok(Content(text))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// One OpenAI `tool_calls` entry: `{id, type, function: {name, arguments}}` (`type` is
/// not read).
#[derive(Deserialize)]
pub(crate) struct ToolCallIn {
    id: Option<String>,
    function: Object<FunctionIn>,
}

/// The `function` of a [`ToolCallIn`].
#[derive(Deserialize)]
struct FunctionIn {
    name: String,
    arguments: Option<Value>,
}

/// A structured call's `name` and `arguments` (LLaMA-Factory's `tool_call` values).
#[derive(Deserialize)]
pub(crate) struct NamedCall {
    pub name: String,
    pub arguments: Option<Value>,
}

/// Arguments of a structured call at `path`: a JSON string holding an object (empty
/// string = `{}`), or an object; absent or null = `{}`. Errors: "not JSON: ..." or
/// "expected a JSON object, got an array" at `path`.
pub(crate) fn call_arguments(loc: &Loc, v: Option<&Value>, path: &str) -> Result<Value> {
    let parsed = match v {
        None => return Ok(Value::Object(Map::new())),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Value::Object(Map::new())),
        Some(Value::String(s)) => parse_nested(loc, s, path)?,
        Some(v) => v.clone(),
    };
    if !parsed.is_object() {
        return Err(loc.err(path, format!("expected a JSON object, got {}", kind(&parsed))));
    }
    Ok(parsed)
}

/// The OpenAI `tool_calls` of the message at `path` (`messages[5]`) as [`ToolCall`]s,
/// their `arguments` read by [`call_arguments`] (errors at
/// `messages[5].tool_calls[0].function.arguments`). `None` (absent or null): no calls.
pub(crate) fn tool_calls(loc: &Loc, calls: Option<Vec<Object<ToolCallIn>>>, path: &str) -> Result<Vec<ToolCall>> {
    let calls = calls.unwrap_or_default();
    let mut out = Vec::with_capacity(calls.len());
    for (k, Object(call)) in calls.into_iter().enumerate() {
        let Object(function) = call.function;
        let arguments =
            call_arguments(loc, function.arguments.as_ref(), &format!("{path}.tool_calls[{k}].function.arguments"))?;
        out.push(ToolCall { id: call.id, name: function.name, arguments, from_text: false });
    }
    Ok(out)
}

/// An OpenAI-form chat message as OpenHands rows (`messages`) and SWE-agent `.traj`
/// files (`history`) write it: the fields read.
#[derive(Deserialize)]
pub(crate) struct ChatMessage {
    #[serde(deserialize_with = "role")]
    role: Role,
    #[serde(default)]
    content: Content,
    tool_calls: Option<Vec<Object<ToolCallIn>>>,
    /// SWE-agent: the calls a tool message answers (joined with `,`); else `tool_call_id`.
    tool_call_ids: Option<Vec<String>>,
    tool_call_id: Option<String>,
    /// OpenHands: the tool's name (read on tool messages).
    name: Option<String>,
    /// SWE-agent's text command in older files (read on assistant messages without
    /// `tool_calls`).
    action: Option<String>,
}

/// The chat messages of the list `list` (`messages`, `history`), in order:
///
/// * `content` as [`Content`] reads it; structured `tool_calls` by [`tool_calls`];
/// * an assistant message without `tool_calls` but with an `action` (older SWE-agent
///   files) gets that text command as one call ([`swe_agent_command_call`]);
/// * `tool_call_id`: the `tool_call_ids` joined with `,` when there are any, else
///   `tool_call_id`; a tool message's `tool_name` is its `name`, else the name of the
///   call it answers ([`link_tool_names`]).
///
/// Errors name the field (`messages[5].tool_calls[0].function.arguments`).
pub(crate) fn chat_messages(loc: &Loc, list: &str, messages: Vec<Object<ChatMessage>>) -> Result<Vec<Message>> {
    let mut out = Vec::with_capacity(messages.len());
    for (i, Object(m)) in messages.into_iter().enumerate() {
        let mut msg = Message::new(i, m.role, m.content.0);
        msg.tool_calls = tool_calls(loc, m.tool_calls, &format!("{list}[{i}]"))?;
        if m.role == Role::Assistant && msg.tool_calls.is_empty() {
            msg.tool_calls.extend(m.action.as_deref().and_then(swe_agent_command_call));
        }
        msg.tool_call_id = match m.tool_call_ids {
            Some(ids) if !ids.is_empty() => Some(ids.join(",")),
            _ => m.tool_call_id,
        };
        if m.role == Role::Tool {
            msg.tool_name = m.name;
        }
        out.push(msg);
    }
    link_tool_names(&mut out);
    Ok(out)
}

/// Fill `tool_name` of tool messages from the call their `tool_call_id` answers.
pub(crate) fn link_tool_names(messages: &mut [Message]) {
    let mut names: HashMap<String, String> = HashMap::new();
    for m in messages.iter_mut() {
        for c in &m.tool_calls {
            if let Some(id) = &c.id {
                names.insert(id.clone(), c.name.clone());
            }
        }
        if m.role == Role::Tool
            && m.tool_name.is_none()
            && let Some(id) = &m.tool_call_id
        {
            m.tool_name = names.get(id).cloned();
        }
    }
}
