//! JSON containers and the text helpers every loader shares: JSON lines (one record a
//! line), a JSON array of rows, a single JSON document — each record located by its
//! 1-based line — plus UTF-8 decoding with byte-order-mark handling and a field that is
//! a string or an integer.
//!
//! Line numbers of a JSON array's rows are counted incrementally (rows come in file
//! order), so locating every row costs one pass over the text, not one per row.

use super::InputError;
use serde_json::value::RawValue;
use std::io::BufRead;
use std::path::Path;

/// The UTF-8 byte-order mark, skipped at the start of a document (and refused later in a
/// JSON-lines file, as Python's `json.loads` refuses it).
pub const BOM: &[u8] = b"\xef\xbb\xbf";

/// How a JSON input is laid out, from its first non-blank byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// Starts with `[`: one JSON array of rows.
    Array,
    /// Starts with `{`: one object, or JSON lines (one object a line).
    Object,
    /// Starts with anything else.
    Other(u8),
}

/// What [`peek_container`] found before the first content.
#[derive(Debug, PartialEq, Eq)]
pub struct Peeked {
    /// The container of the content; `None`: no content at all.
    pub container: Option<Container>,
    /// Whole blank lines consumed before the content's line.
    pub blank_lines: u64,
    /// Bytes of the content's line already read from the reader (only when blank space
    /// before the content on its line filled the reader's buffer): read them before the rest.
    pub head: Vec<u8>,
}

/// The container of `reader`'s content, consuming only the blank lines before it (and a
/// leading byte-order mark). The content's line is left whole, so what reads on sees it
/// from its first byte whatever the reader's buffer size: where blank space on that line
/// fills the whole buffer, the line is read into [`Peeked::head`] instead.
///
/// Errors: a read error.
pub fn peek_container(reader: &mut impl BufRead) -> std::io::Result<Peeked> {
    let mut blank_lines = 0u64;
    let mut first = true;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(Peeked { container: None, blank_lines, head: Vec::new() });
        }
        if first && buf.starts_with(BOM) {
            reader.consume(BOM.len());
            first = false;
            continue;
        }
        first = false;
        if let Some(i) = buf.iter().position(|b| !b.is_ascii_whitespace()) {
            return Ok(Peeked { container: Some(Container::of(buf[i])), blank_lines, head: Vec::new() });
        }
        // blank space only: whole lines are consumed; blank space that fills the buffer
        // and ends no line is read with the rest of its line
        if let Some(last) = buf.iter().rposition(|b| *b == b'\n') {
            blank_lines += buf[..=last].iter().filter(|b| **b == b'\n').count() as u64;
            reader.consume(last + 1);
            continue;
        }
        let mut head = Vec::new();
        reader.read_until(b'\n', &mut head)?;
        match head.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => return Ok(Peeked { container: Some(Container::of(head[i])), blank_lines, head }),
            None if head.ends_with(b"\n") => blank_lines += 1,
            None => return Ok(Peeked { container: None, blank_lines, head: Vec::new() }),
        }
    }
}

impl Container {
    /// The container a JSON text whose first non-blank byte is `byte` is.
    fn of(byte: u8) -> Container {
        match byte {
            b'[' => Container::Array,
            b'{' => Container::Object,
            other => Container::Other(other),
        }
    }
}

/// Reads `reader` line by line as UTF-8, calling `each(line_number, line)` for every
/// non-blank line (line numbers are 1-based). A final line without a newline is read
/// too; a byte-order mark on line 1 is skipped.
///
/// Errors: invalid UTF-8 (naming the line and byte column), a byte-order mark at the
/// start of any other line (files joined with `cat`: Python refuses it), an empty input,
/// or what `each` returns.
pub fn for_each_line(
    path: &Path,
    reader: impl BufRead,
    each: impl FnMut(u64, &str) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    for_each_line_from(path, reader, 1, each)
}

/// [`for_each_line`] whose first line is `first_line` (after blank lines already consumed).
pub fn for_each_line_from(
    path: &Path,
    mut reader: impl BufRead,
    first_line: u64,
    mut each: impl FnMut(u64, &str) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    let mut line_no = first_line - 1;
    let mut records = 0u64;
    let mut total = 0usize;
    for_each_raw_line(&mut reader, |line| {
        total += line.len();
        line_no += 1;
        // the file's own mark (skipped by the input layer; a text given directly may hold it)
        let bytes = if line_no == 1 { strip_bom(line) } else { line };
        if bytes.starts_with(BOM) {
            return Err(InputError::at(
                path,
                Some(line_no),
                None,
                "a byte-order mark (U+FEFF) begins this line: only the start of a file may carry one (were files \
                 joined with `cat`?); Python's json.loads refuses it too",
            )
            .into());
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            InputError::at(
                path,
                Some(line_no),
                None,
                format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1),
            )
        })?;
        if text.trim().is_empty() {
            return Ok(());
        }
        records += 1;
        each(line_no, text)
    })?;
    if total == 0 && first_line == 1 {
        return Err(InputError::at(path, None, None, "file is empty (no bytes, or only a byte-order mark)").into());
    }
    if records == 0 {
        return Err(InputError::at(path, None, None, "file has no records (only blank lines)").into());
    }
    Ok(records)
}

/// Hands `each` every line of `reader` in order: its bytes up to and including its `\n`
/// (the last line without one when the input does not end with a newline), as
/// `BufRead::read_until(b'\n')` would, but a line that lies within one of the reader's
/// buffers is handed on in place rather than copied, and lines are found with the memchr
/// crate (std's `read_until` search and copy took about a twelfth of a ×100 Review4Repair
/// load's CPU). A line that spans buffers is gathered into a buffer of its own.
///
/// Errors: the reader's, or the first error of `each` (no line after it is read).
pub fn for_each_raw_line(
    reader: &mut impl BufRead,
    mut each: impl FnMut(&[u8]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut spanning: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if buf.is_empty() {
            return if spanning.is_empty() { Ok(()) } else { each(&spanning) };
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', buf) {
            if spanning.is_empty() {
                each(&buf[start..=end])?;
            } else {
                spanning.extend_from_slice(&buf[start..=end]);
                each(&spanning)?;
                spanning.clear();
            }
            start = end + 1;
        }
        spanning.extend_from_slice(&buf[start..]);
        let used = buf.len();
        reader.consume(used);
    }
}

/// `bytes` without a leading UTF-8 byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
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

/// Counts lines up to increasing byte offsets of one text, in one pass overall.
pub struct LineCounter<'a> {
    text: &'a [u8],
    offset: usize,
    line: u64,
}

impl<'a> LineCounter<'a> {
    /// A counter at line 1, offset 0 of `text`.
    pub fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), offset: 0, line: 1 }
    }

    /// 1-based line of byte `offset`. Offsets must not decrease between calls (an
    /// earlier offset restarts the count from the top).
    pub fn line_at(&mut self, offset: usize) -> u64 {
        let offset = offset.min(self.text.len());
        if offset < self.offset {
            self.offset = 0;
            self.line = 1;
        }
        self.line += self.text[self.offset..offset].iter().filter(|b| **b == b'\n').count() as u64;
        self.offset = offset;
        self.line
    }
}

/// The rows of a JSON array document, each with the 1-based line where it starts.
///
/// Errors ([`InputError`]): malformed or truncated JSON (at its line), not an array,
/// trailing content after the array.
pub fn array_rows<'t>(path: &Path, text: &'t str) -> Result<Vec<(u64, &'t RawValue)>, InputError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let rows: Vec<&RawValue> = serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(path, 1, true, e))?;
    de.end().map_err(|e| InputError::at(path, Some(e.line() as u64), None, format!("malformed JSON: {e}")))?;
    let mut lines = LineCounter::new(text);
    Ok(rows.into_iter().map(|raw| (lines.line_at(raw.get().as_ptr() as usize - text.as_ptr() as usize), raw)).collect())
}

/// Converts a `serde_path_to_error` failure into an [`InputError`] at `line`.
///
/// serde_json's own line is relative to the text it parsed; with `line_offset` it is
/// added to `line` (false for a JSONL line, whose line is given).
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
    // a missing field is named as the field, as the trajectory formats name it
    // (`field `comments[0].message`: missing`), not only in serde's words at its parent
    let (field, text) = match missing_field(&text) {
        Some((name, rest)) => {
            let parent = field.unwrap_or_default();
            (Some(super::anomaly::join_field(&parent, name)), format!("missing{rest}"))
        }
        None => (field, text),
    };
    let message = match inner.classify() {
        serde_json::error::Category::Eof => format!("truncated record: {text}"),
        serde_json::error::Category::Syntax => format!("malformed JSON: {text}"),
        _ => text,
    };
    InputError { path: path.to_path_buf(), line: Some(line), field, message }
}

/// serde's "missing field `NAME`..." as `(NAME, the rest of the message)`, so that a loader
/// can name the missing field as the field (`field `a.NAME`: missing`); `None` for any
/// other message.
pub fn missing_field(message: &str) -> Option<(&str, &str)> {
    message.strip_prefix("missing field `")?.split_once('`')
}

/// Parses one JSON object (a JSONL line, an array row, or a whole document starting at
/// `line`) into `T`, naming the failing field. A record that is not a JSON object (an
/// array, a string) is refused: serde would otherwise map an array onto the fields by
/// position.
///
/// Lone surrogate escapes, `NaN` / `Infinity`, NUL and control characters follow the
/// anomaly policy ([`super::anomaly`]): accepted and recorded for the load. A `NaN` /
/// `Infinity` in a field the loader reads is refused in the field's terms ("NaN in an
/// integer field"); in a field it ignores it reads as null and stays recorded.
pub fn parse_json<T: serde::de::DeserializeOwned>(path: &Path, line: u64, text: &str) -> Result<T, InputError> {
    parse_json_ids(path, line, text, &[])
}

/// As [`parse_json`], and a lone surrogate escape in one of the id fields `ids` is
/// refused: stored as U+FFFD under the anomaly policy, two ids that differ only there
/// would name one view, instance or example, and every count keyed on them would merge
/// the two. `ids` are field paths as errors write them, `[*]` for any index
/// (`comments[*].comment_id`).
pub fn parse_json_ids<T: serde::de::DeserializeOwned>(
    path: &Path,
    line: u64,
    text: &str,
    ids: &[&str],
) -> Result<T, InputError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let content = text.trim_start();
    match content.as_bytes().first() {
        Some(b'{') => {}
        Some(_) if content.starts_with('\u{feff}') => {
            return Err(InputError::at(
                path,
                Some(line),
                None,
                "a byte-order mark (U+FEFF) follows blank space: only the very start of a file may carry one; \
                 Python's json.loads refuses it too",
            ));
        }
        Some(_) => return Err(InputError::at(path, Some(line), None, "expected a JSON object {...}")),
        None => return Err(InputError::at(path, Some(line), None, "empty record")),
    }
    // The line's own end is not part of the record (a truncated record must be reported
    // on its own line, not the next).
    let text = text.trim_end_matches(['\n', '\r']);
    // Without an escape that may be an anomaly, a text serde_json parses holds none (it
    // refuses `NaN` / `Infinity` wherever they stand outside a string): the two searches
    // for those and the scan are only needed when this parse fails.
    if !super::anomaly::may_hold_escape_anomaly(text)
        && let Ok(value) = serde_json::from_str(text)
    {
        return Ok(value);
    }
    parse_scanned(path, line, text, ids)
}

/// [`parse_json_ids`] of a text that needs the anomaly scan: rewritten and recorded under
/// the anomaly policy, then parsed with the failing field named.
fn parse_scanned<T: serde::de::DeserializeOwned>(
    path: &Path,
    line: u64,
    text: &str,
    ids: &[&str],
) -> Result<T, InputError> {
    // What Python's json.dumps writes and serde_json refuses is rewritten first, and
    // recorded for the load (the anomaly policy, super::anomaly).
    let scanned = super::anomaly::scan(text);
    let in_id = scanned.anomalies.iter().find(|a| {
        a.kind == super::anomaly::AnomalyKind::LoneSurrogate && ids.iter().any(|id| field_matches(id, &a.path))
    });
    if let Some(a) = in_id {
        return Err(InputError::at(
            path,
            Some(line + a.line - 1),
            Some(&a.path),
            super::anomaly::surrogate_in_id(&a.detail),
        ));
    }
    let value = parse_tracked(path, line, &scanned.text).map_err(|mut err| {
        // a NaN / Infinity read as null where the field needs a value: say so
        if let Some(reason) = non_finite_reason(&scanned.anomalies, &err) {
            err.message = reason;
        }
        err
    })?;
    if scanned.anomalies.iter().any(|a| a.kind.is_non_finite()) {
        // Read as null, a NaN in an optional field would pass for "absent": probe with a
        // string in its place, then with an object; a field the loader reads refuses one
        // of them (a number or a struct field the string, a text field the object), a
        // field it ignores or keeps as any JSON value takes both.
        for stand_in in ["\"non-finite\"", "{}"] {
            let probe = super::anomaly::scan_as(text, stand_in);
            if let Err(err) = parse_tracked::<T>(path, line, &probe.text)
                && let Some(reason) = non_finite_reason(&scanned.anomalies, &err)
            {
                return Err(InputError { message: reason, ..err });
            }
        }
    }
    super::anomaly::record(super::anomaly::located(&scanned.anomalies, line, ""));
    Ok(value)
}

/// Whether field path `field` (`comments[3].comment_id`) is `pattern`, where `[*]` in the
/// pattern stands for any index.
fn field_matches(pattern: &str, field: &str) -> bool {
    let mut field = field;
    let mut parts = pattern.split("[*]").peekable();
    while let Some(part) = parts.next() {
        let Some(rest) = field.strip_prefix(part) else { return false };
        field = rest;
        if parts.peek().is_some() {
            // an index: `[` digits `]`
            let Some(rest) = field.strip_prefix('[') else { return false };
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let Some(rest) = rest[digits..].strip_prefix(']').filter(|_| digits > 0) else { return false };
            field = rest;
        }
    }
    field.is_empty()
}

/// serde_json, then (only for a failing record) serde_path_to_error for the field.
fn parse_tracked<T: serde::de::DeserializeOwned>(path: &Path, line: u64, text: &str) -> Result<T, InputError> {
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

/// "NaN in an integer field ..." when `err` is at a field that held `NaN` / `Infinity`.
fn non_finite_reason(anomalies: &[super::anomaly::Anomaly], err: &InputError) -> Option<String> {
    let field = err.field.as_deref()?;
    let expected = err.message.rsplit_once("expected ").map_or("a value", |(_, e)| e);
    let expected = expected.split(" (column").next().unwrap_or(expected);
    super::anomaly::non_finite_at(anomalies, 0, field, &super::anomaly::field_words(expected))
}

/// A field that is a JSON string or integer, kept as text (Gerrit account ids and
/// change numbers come as either). Anything else is refused with "expected a string or
/// an integer".
#[derive(Debug, Clone, PartialEq)]
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

impl<'de> serde::Deserialize<'de> for TextOrNumber {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TextOrNumber;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber::Text(v.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber::Text(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<TextOrNumber, E> {
                Ok(TextOrNumber::Number(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TextOrNumber, E> {
                i64::try_from(v)
                    .map(TextOrNumber::Number)
                    .map_err(|_| E::custom(format!("{v} is too large (an integer up to {})", i64::MAX)))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A JSON object read as `(key, value)` pairs in file order, refusing a repeated key
/// ("the key "k" is repeated ..."): serde_json's maps keep the last of repeated keys and
/// drop the others without a word (a Gerrit comments response listing one file twice
/// would lose the first list's comments). [`UniqueKeys`] reads its objects with it.
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueMap<V>(pub Vec<(String, V)>);

impl<'de, V: serde::Deserialize<'de>> serde::Deserialize<'de> for UniqueMap<V> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visitor<V> {
            type Value = UniqueMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueMap<V>, A::Error> {
                let mut seen = std::collections::HashSet::new();
                let mut pairs = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format!(
                            "the key {key:?} is repeated (JSON readers keep one of the values and drop the other)"
                        )));
                    }
                    let value = map.next_value::<V>()?;
                    pairs.push((key, value));
                }
                Ok(UniqueMap(pairs))
            }
        }
        deserializer.deserialize_map(Visitor(std::marker::PhantomData))
    }
}

/// A JSON value kept as given, except that no object in it may repeat a key: serde_json
/// keeps the last of repeated keys and drops the others without a word (a view's
/// `origin` naming two tokenizers would pass as naming the second). Refused with "the key
/// "k" is repeated".
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueKeys(pub serde_json::Value);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::Value;
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Bool(v)))
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Number(v.into())))
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Number(v.into())))
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::String(v.to_owned())))
            }
            fn visit_string<E: Error>(self, v: String) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::String(v)))
            }
            fn visit_unit<E: Error>(self) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Null))
            }
            fn visit_none<E: Error>(self) -> Result<UniqueKeys, E> {
                Ok(UniqueKeys(Value::Null))
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<UniqueKeys, D::Error> {
                <UniqueKeys as serde::Deserialize>::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
                let mut items = Vec::new();
                while let Some(UniqueKeys(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(UniqueKeys(Value::Array(items)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<UniqueKeys, A::Error> {
                let UniqueMap(pairs) = <UniqueMap<UniqueKeys> as serde::Deserialize>::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                Ok(UniqueKeys(Value::Object(pairs.into_iter().map(|(k, UniqueKeys(v))| (k, v)).collect())))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests;
