//! Input adapters: each turns one source format into [`Example`]s.
//!
//! | kind | format | module |
//! |---|---|---|
//! | `examples` | sphragis's own JSONL (docs/formats.md) | [`jsonl`] |
//! | `review4repair` | Review4Repair `test_100.json` (JSON array or JSONL) | [`review4repair`] |
//! | `tufano2021` | Tufano et al. 2021 CSV (`comment,before,before_marked,after`) | [`tufano`] |
//! | `gerrit-query` | Gerrit SSH `gerrit query --format=JSON` output | [`gerrit_query`] |
//!
//! Every adapter streams: it reads through the caller's hashing reader and hands each
//! example to a sink, so memory does not grow with the file (review4repair's JSON array
//! is the exception: it is one document). Errors are [`InputError`]s naming file, line and
//! field.

pub mod gerrit_query;
pub mod jsonl;
pub mod review4repair;
pub mod tufano;

use crate::db::ingest::InputError;
use crate::review::model::Example;
use std::io::BufRead;
use std::path::Path;

/// Receives each example an adapter builds.
pub type Sink<'a> = dyn FnMut(Example) -> anyhow::Result<()> + 'a;

/// Reads `reader` line by line as UTF-8, calling `each(line_number, line)` for every
/// non-blank line (line numbers are 1-based). A final line without a newline is read too.
///
/// Errors: invalid UTF-8 (naming the line and byte column), an empty input, or what
/// `each` returns.
pub fn for_each_line(
    path: &Path,
    mut reader: impl BufRead,
    mut each: impl FnMut(u64, &str) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    let mut buf = Vec::with_capacity(1 << 16);
    let mut line_no = 0u64;
    let mut records = 0u64;
    let mut total = 0usize;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        total += n;
        line_no += 1;
        let bytes = if line_no == 1 { strip_bom(&buf) } else { &buf[..] };
        let text = std::str::from_utf8(bytes).map_err(|e| {
            InputError::at(
                path,
                Some(line_no),
                None,
                format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1),
            )
        })?;
        if text.trim().is_empty() {
            continue;
        }
        records += 1;
        each(line_no, text)?;
    }
    if total == 0 {
        return Err(InputError::at(path, None, None, "file is empty (0 bytes)").into());
    }
    if records == 0 {
        return Err(InputError::at(path, None, None, "file has no records (only blank lines)").into());
    }
    Ok(records)
}

/// `bytes` without a leading UTF-8 byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)
}

/// Decodes a whole document as UTF-8 (after a byte-order mark, if any), naming the line
/// and byte column of the first invalid byte.
pub fn utf8_document<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, InputError> {
    let bytes = strip_bom(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        let line = before.iter().filter(|b| **b == b'\n').count() as u64 + 1;
        let column = before.len() - before.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        InputError::at(path, Some(line), None, format!("invalid UTF-8 at byte {column} of the line"))
    })
}

/// 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> u64 {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|b| **b == b'\n').count() as u64 + 1
}

/// Converts a `serde_path_to_error` failure into an [`InputError`] at `line`.
///
/// serde_json's own line is relative to the text it parsed; `line_offset` is added to it
/// (0 for a JSONL line, whose line is given).
pub fn json_error(
    path: &Path,
    line: u64,
    line_offset: bool,
    err: serde_path_to_error::Error<serde_json::Error>,
) -> InputError {
    let field = err.path().to_string();
    let inner = err.inner();
    let line = if line_offset { line + inner.line() as u64 - 1 } else { line };
    // "." is the whole record; "?" a position serde could not name (a syntax error)
    let field = if field == "." || field == "?" || field.is_empty() { None } else { Some(field) };
    // serde_json appends " at line L column C" (relative to the parsed text): keep the
    // column only, the line is given above.
    let text = inner.to_string();
    let text = match text.rfind(" at line ") {
        Some(i) => format!("{} (column {})", &text[..i], inner.column()),
        None => text,
    };
    let message = match inner.classify() {
        serde_json::error::Category::Eof => format!("truncated record: {text}"),
        serde_json::error::Category::Syntax => format!("malformed JSON: {text}"),
        _ => text,
    };
    InputError { path: path.to_path_buf(), line: Some(line), field, message }
}

/// Parses one JSON object into `T`, naming the failing field. A record that is not a
/// JSON object (an array, a string) is refused: serde would otherwise map an array onto
/// the fields by position.
pub fn parse_json<T: serde::de::DeserializeOwned>(path: &Path, line: u64, text: &str) -> Result<T, InputError> {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => {}
        Some(_) => return Err(InputError::at(path, Some(line), None, "expected a JSON object {...}")),
        None => return Err(InputError::at(path, Some(line), None, "empty record")),
    }
    // The line's own end is not part of the record (a truncated record must be reported
    // on its own line, not the next).
    let text = text.trim_end_matches(['\n', '\r']);
    // Fast path: plain serde_json. Only a failing record is parsed again with path
    // tracking, which costs on every value (millions of token ids per SFT view).
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(path, line, true, e))?;
    de.end().map_err(|e| InputError::at(path, Some(line), None, format!("malformed JSON: {e}")))?;
    Ok(value)
}

/// Accepts a JSON string or integer as text (Gerrit account ids and change numbers come
/// as either).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum TextOrNumber {
    Text(String),
    Number(i64),
}

impl TextOrNumber {
    /// The value as text.
    pub fn into_text(self) -> String {
        match self {
            Self::Text(s) => s,
            Self::Number(n) => n.to_string(),
        }
    }
}

/// Parses an optional timestamp field into microseconds, naming the field on error.
pub fn timestamp_field(path: &Path, line: u64, field: &str, text: Option<&str>) -> Result<Option<i64>, InputError> {
    text.map(|t| crate::review::model::parse_timestamp(t).map_err(|m| InputError::at(path, Some(line), Some(field), m)))
        .transpose()
}
