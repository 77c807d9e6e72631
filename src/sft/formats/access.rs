//! The JSON plumbing the trajectory formats share: error locations ([`Loc`]), a record
//! read into a typed serde struct with the failing field's path ([`from_value`],
//! [`Refusal`]), JSON objects only ([`Object`]), JSON texts held in string fields
//! ([`parse_nested`]) and the whole-document and array readers.

use std::fmt::Display;
use std::marker::PhantomData;
use std::path::Path;

use anyhow::{Result, anyhow};
use serde::de::{DeserializeOwned, MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::ingest::anomaly;

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

/// What a JSON value is, with its article ("a string", "an array", "null").
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

/// `path.key`; `key` alone at the top (`path` empty), `path` alone for the value
/// itself (`key` empty).
pub(crate) fn join(path: &str, key: &str) -> String {
    match (path.is_empty(), key.is_empty()) {
        (true, _) => key.to_string(),
        (false, true) => path.to_string(),
        (false, false) => format!("{path}.{key}"),
    }
}

/// A JSON object read as `T`. serde's derived structs would also take a JSON array and
/// map its elements onto the fields by position; this refuses anything but an object
/// ("invalid type: array, expected an object").
#[derive(Debug, Clone, PartialEq)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Object)
            }
        }
        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

/// Why a value did not read as its serde type: the failing field below the value, in
/// the source's terms (`messages[5].tool_calls[0].function`; empty for the value
/// itself), and the reason in JSON's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The field path below the value read.
    pub path: String,
    /// serde's reason ("invalid type: integer `5`, expected a string"), or "missing"
    /// for an absent required field (the field is then the last part of `path`).
    pub message: String,
}

impl Refusal {
    /// The type the field expected, as serde names it (`a string`, `f64`), if said.
    pub fn expected(&self) -> Option<&str> {
        self.message.rsplit_once("expected ").map(|(_, e)| e)
    }
}

/// `value` (a JSON object) read as `T` through `serde_path_to_error`, so that a refusal
/// names the field. Errors: a [`Refusal`]; its message says what was expected, in JSON's
/// words (an array, an object) rather than serde's (a sequence, a map).
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, Refusal> {
    // Fast path: plain serde; only a refused value is read again with path tracking
    // (which costs on every value), as `crate::ingest::json` does.
    if let Ok(Object(t)) = Object::<T>::deserialize(value) {
        return Ok(t);
    }
    match serde_path_to_error::deserialize::<_, Object<T>>(value) {
        Ok(Object(t)) => Ok(t),
        Err(e) => {
            let path = e.path().to_string();
            let mut path = if path == "." { String::new() } else { path };
            let mut message = json_words(&e.into_inner().to_string());
            if let Some((field, "")) = crate::ingest::json::missing_field(&message) {
                path = join(&path, field);
                message = "missing".to_string();
            }
            Err(Refusal { path, message })
        }
    }
}

/// serde's names of JSON's kinds in a message replaced by JSON's own.
fn json_words(message: &str) -> String {
    message
        .replace("invalid type: sequence,", "invalid type: array,")
        .replace("invalid type: map,", "invalid type: object,")
        .replace("expected a sequence", "expected an array")
        .replace("expected a map", "expected an object")
        .replace("expected f64", "expected a number")
}

/// A whole document, parsed with each object's keys distinct
/// ([`crate::ingest::unique_keys`]); errors say "not JSON" with serde_json's reason, or
/// name the repeated key.
pub(crate) fn parse_json_file(path: &Path, text: &str) -> Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    parse_record(text).map_err(|reason| anyhow!("{}: {reason}", path.display()))
}

/// One record's text parsed with each object's keys distinct
/// ([`crate::ingest::unique_keys`]). The reason when it cannot be: `not JSON: <serde_json's
/// reason>`, or `duplicate key "k" in one object (...) at line L column C`.
pub(crate) fn parse_record(text: &str) -> std::result::Result<Value, String> {
    use crate::ingest::unique_keys;
    unique_keys::from_str(text)
        .map_err(|e| if unique_keys::is_repeated_key(&e) { e.to_string() } else { format!("not JSON: {e}") })
}

/// The rows of a JSON array text, each with the line it starts on, parsed.
pub(crate) fn array_values(path: &Path, text: &str) -> Result<Vec<(u64, Value)>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    crate::ingest::json::array_rows(path, text)?
        .into_iter()
        .map(|(line, raw)| {
            let value = crate::ingest::unique_keys::from_str(raw.get()).map_err(|e| {
                let reason = if crate::ingest::unique_keys::is_repeated_key(&e) {
                    e.to_string()
                } else {
                    format!("malformed JSON: {e}")
                };
                crate::ingest::InputError::at(path, Some(line), None, reason)
            })?;
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
    let value = parse_record(&scanned.text).map_err(|reason| loc.err(path, reason))?;
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
