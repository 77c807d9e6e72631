//! The JSON field access shared by the trajectory formats: error locations ([`Loc`])
//! and typed getters over `serde_json::Value` that name the field in the source's terms
//! (`[3].messages[5].tool_calls[0].function.arguments`) and say what was expected, plus
//! the OpenAI-message pieces several formats share (content, tool calls, arguments).

use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;

use anyhow::{Result, anyhow};
use serde_json::{Map, Value};

use crate::ingest::anomaly;
use crate::sft::schema::{Message, Role, ToolCall};

/// Where in a file we are: prefixes every error.
#[derive(Clone, Copy)]
pub struct Loc<'a> {
    /// The file (a label).
    pub file: &'a Path,
    /// 0-based row of a row format.
    pub row: Option<usize>,
    /// 1-based line where the record starts.
    pub line: Option<usize>,
}

impl<'a> Loc<'a> {
    /// The whole file, no row or line.
    pub fn file(file: &'a Path) -> Self {
        Loc { file, row: None, line: None }
    }
    /// At 0-based `row`.
    pub fn row(self, row: usize) -> Self {
        Loc { row: Some(row), ..self }
    }
    /// At 1-based `line`.
    pub fn line(self, line: u64) -> Self {
        Loc { line: Some(line as usize), ..self }
    }
    /// An [`InputError`](crate::ingest::InputError) here: the row's line, and the field
    /// prefixed with the row (`[3].messages[5].content`, as review4repair rows are named).
    pub fn err(&self, field: &str, msg: impl Display) -> anyhow::Error {
        let field = match (self.row, field.is_empty()) {
            (Some(r), true) => Some(format!("[{r}]")),
            (Some(r), false) => Some(format!("[{r}].{field}")),
            (None, true) => None,
            (None, false) => Some(field.to_string()),
        };
        crate::ingest::InputError {
            path: self.file.to_path_buf(),
            line: self.line.map(|l| l as u64),
            field,
            message: msg.to_string(),
        }
        .into()
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

pub(crate) fn as_object<'v>(loc: &Loc, v: &'v Value, path: &str) -> Result<&'v Map<String, Value>> {
    v.as_object().ok_or_else(|| loc.err(path, format!("expected an object, got {}", kind(v))))
}

/// The value of `key`, `None` when absent or null.
pub(crate) fn get<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

pub(crate) fn req<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<&'v Value> {
    get(obj, key).ok_or_else(|| loc.err(&join(path, key), "missing"))
}

pub(crate) fn req_str<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<&'v str> {
    let v = req(loc, obj, key, path)?;
    v.as_str().ok_or_else(|| loc.err(&join(path, key), format!("expected a string, got {}", kind(v))))
}

pub(crate) fn opt_str<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<Option<&'v str>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(loc.err(&join(path, key), format!("expected a string, got {}", kind(v)))),
    }
}

pub(crate) fn opt_bool(loc: &Loc, obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<bool>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(loc.err(&join(path, key), format!("expected a boolean, got {}", kind(v)))),
    }
}

pub(crate) fn req_array<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<&'v Vec<Value>> {
    let v = req(loc, obj, key, path)?;
    v.as_array().ok_or_else(|| loc.err(&join(path, key), format!("expected an array, got {}", kind(v))))
}

pub(crate) fn req_role(loc: &Loc, obj: &Map<String, Value>, path: &str) -> Result<Role> {
    let s = req_str(loc, obj, "role", path)?;
    Role::parse(s).ok_or_else(|| loc.err(&join(path, "role"), format!("unknown role {s:?}")))
}

/// OpenAI-style `content`: a string, null (→ `""`) or a list of `{type: "text", text}`
/// parts (concatenated).
pub(crate) fn openai_content(loc: &Loc, obj: &Map<String, Value>, path: &str) -> Result<String> {
    let p = join(path, "content");
    match get(obj, "content") {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for (k, part) in parts.iter().enumerate() {
                let pp = format!("{p}[{k}]");
                let part = as_object(loc, part, &pp)?;
                let ty = req_str(loc, part, "type", &pp)?;
                if ty != "text" {
                    return Err(loc.err(&join(&pp, "type"), format!("unsupported content part type {ty:?}")));
                }
                text.push_str(req_str(loc, part, "text", &pp)?);
            }
            Ok(text)
        }
        Some(v) => Err(loc.err(&p, format!("expected a string or a list of parts, got {}", kind(v)))),
    }
}

/// Arguments of a structured call: a JSON string holding an object (empty string = `{}`),
/// or an object.
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

/// OpenAI `tool_calls` (`[{id, type, function: {name, arguments}}]`).
pub(crate) fn openai_tool_calls(loc: &Loc, obj: &Map<String, Value>, path: &str) -> Result<Vec<ToolCall>> {
    let Some(v) = get(obj, "tool_calls") else { return Ok(Vec::new()) };
    let p = join(path, "tool_calls");
    let calls = v.as_array().ok_or_else(|| loc.err(&p, format!("expected an array, got {}", kind(v))))?;
    let mut out = Vec::with_capacity(calls.len());
    for (k, c) in calls.iter().enumerate() {
        let cp = format!("{p}[{k}]");
        let c = as_object(loc, c, &cp)?;
        let id = opt_str(loc, c, "id", &cp)?.map(str::to_string);
        let fp = join(&cp, "function");
        let f = as_object(loc, req(loc, c, "function", &cp)?, &fp)?;
        let name = req_str(loc, f, "name", &fp)?.to_string();
        let arguments = call_arguments(loc, get(f, "arguments"), &join(&fp, "arguments"))?;
        out.push(ToolCall { id, name, arguments, from_text: false });
    }
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

/// A whole document, parsed; errors say "not JSON" with serde_json's reason.
pub(crate) fn parse_json_file(path: &Path, text: &str) -> Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).map_err(|e| anyhow!("{}: not JSON: {e}", path.display()))
}

/// The rows of a JSON array text, each with the line it starts on, parsed.
pub(crate) fn array_values(path: &Path, text: &str) -> Result<Vec<(u64, Value)>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    crate::ingest::json::array_rows(path, text)?
        .into_iter()
        .map(|(line, raw)| {
            let value: Value = serde_json::from_str(raw.get())
                .map_err(|e| crate::ingest::InputError::at(path, Some(line), None, format!("malformed JSON: {e}")))?;
            Ok::<_, anyhow::Error>((line, value))
        })
        .collect()
}

/// The rows of a document that must be a JSON array.
pub(crate) fn rows_of<'v>(loc: &Loc, v: &'v Value) -> Result<&'v Vec<Value>> {
    v.as_array().ok_or_else(|| loc.err("", format!("expected a JSON array of rows, got {}", kind(v))))
}

/// A JSON text held in a string field (`arguments`, LLaMA-Factory's `tools` and
/// `tool_call` values), parsed under the anomaly policy of the outer text
/// ([`crate::ingest::anomaly`]): its anomalies are recorded at `path` (the line is the
/// row's, when known). Errors: "not JSON: <serde_json's reason>" at `path`.
pub(crate) fn parse_nested(loc: &Loc, text: &str, path: &str) -> Result<Value> {
    let scanned = anomaly::scan(text);
    let value = serde_json::from_str::<Value>(&scanned.text).map_err(|e| loc.err(path, format!("not JSON: {e}")))?;
    if !scanned.anomalies.is_empty() {
        let prefix = match loc.row {
            Some(r) => format!("[{r}].{path}"),
            None => path.to_string(),
        };
        anomaly::record(scanned.anomalies.iter().map(|a| anomaly::Recorded {
            line: loc.line.map(|l| l as u64),
            field: prefix.clone(),
            kind: a.kind,
            detail: a.detail.clone(),
            occurrences: a.occurrences,
        }));
    }
    Ok(value)
}
