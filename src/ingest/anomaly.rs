//! What real producers write that strict JSON refuses or that an audit should see:
//! the ingest anomaly policy (issue 15).
//!
//! Python's `json.dumps` — the writer behind most trajectory and dataset files — writes
//! a lone surrogate escape (`"\ud83d"`) for an emoji cut in half in tool output, and
//! `NaN` / `Infinity` / `-Infinity` for floats (pandas writes `NaN` for a missing value);
//! SWE-bench observations carry NUL, backspace and ANSI colour escapes. Python's
//! `json.loads` accepts all of them; serde_json refuses the first two. The policy:
//!
//! | kind | written as | accepted as | recorded detail |
//! |---|---|---|---|
//! | `lone_surrogate` | `\uD800`–`\uDFFF` escape not part of a pair | U+FFFD in the stored text (the escape is rewritten to `\ufffd` before parsing) | the original escape, e.g. `\ud83d` |
//! | `nan` | `NaN` outside a string | JSON `null` (a missing value) | `NaN` |
//! | `infinity` | `Infinity` / `-Infinity` outside a string | JSON `null` | the token |
//! | `nul` | the escape `\u0000` in a string | kept as U+0000 | `\u0000` |
//! | `control_char` | an escaped control character other than tab, LF, CR, NUL (`\b`, `\f`, `\u001b` ESC of ANSI colours, `\u007f`, ...) | kept | the first escape |
//!
//! Each is recorded once per (line, field, kind) with the number of occurrences and the
//! first original escape, in `ingest_anomaly_records` (migration 0015), read by the view
//! `ingest_anomalies_v1` and the report `anomalies`. A field that needs a number and got
//! `NaN` / `Infinity` is refused by its loader with the reason in the field's terms ("NaN
//! in a number field"): the null the value became is never taken for "not set".
//! What Python's strict `json.loads` refuses is refused too: a raw (unescaped) control
//! character inside a string, invalid UTF-8, malformed JSON.
//!
//! # Recording
//!
//! [`scan`] finds the anomalies of one JSON text and returns the text to parse. A loader
//! that accepts them calls [`record`]; [`crate::ingest::load_file`] collects what was
//! recorded during one load (a per-thread collector, see [`collect`]) and writes it in
//! the same transaction, so a refused load leaves no anomaly row behind.

use std::borrow::Cow;
use std::cell::RefCell;

/// The kind of an anomaly, as stored in `ingest_anomaly_records.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnomalyKind {
    /// A `\uD800`–`\uDFFF` escape without its pair; stored as U+FFFD.
    LoneSurrogate,
    /// `NaN` (not JSON); read as `null`.
    Nan,
    /// `Infinity` or `-Infinity` (not JSON); read as `null`.
    Infinity,
    /// The escape `\u0000`; kept.
    Nul,
    /// Another escaped control character (not tab, LF, CR); kept.
    ControlChar,
}

impl AnomalyKind {
    /// `lone_surrogate`, `nan`, `infinity`, `nul` or `control_char`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LoneSurrogate => "lone_surrogate",
            Self::Nan => "nan",
            Self::Infinity => "infinity",
            Self::Nul => "nul",
            Self::ControlChar => "control_char",
        }
    }

    /// Whether the value was a non-finite number (now `null`).
    pub fn is_non_finite(self) -> bool {
        matches!(self, Self::Nan | Self::Infinity)
    }
}

/// One anomaly of a JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anomaly {
    /// 1-based line of the text where the value holding it starts.
    pub line: u64,
    /// 0-based index of the top-level JSON value it is in (the record of a JSON-lines
    /// text; 0 for a single document).
    pub document: usize,
    /// Path of the value inside its top-level value, e.g. `messages[5].content`
    /// (`[3].messages[5].content` inside a JSON array of rows); empty for the top level.
    pub path: String,
    /// What it is.
    pub kind: AnomalyKind,
    /// The first original spelling, e.g. `\ud83d`, `NaN`, `\u001b`.
    pub detail: String,
    /// How many of this kind the value holds.
    pub occurrences: u64,
}

/// What [`scan`] found, and the text to parse.
#[derive(Debug)]
pub struct Scanned<'t> {
    /// The text with lone surrogate escapes rewritten to `\ufffd` and `NaN` /
    /// `Infinity` / `-Infinity` to `null`; borrowed when nothing was rewritten. Lines
    /// are unchanged (a rewrite never adds or removes a newline).
    pub text: Cow<'t, str>,
    /// In text order, one per (value, kind).
    pub anomalies: Vec<Anomaly>,
}

/// Whether `text` may hold an anomaly at all (a fast test: no backslash-escape of a
/// control character or surrogate, no `NaN` / `Infinity`).
fn may_hold_anomaly(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find(b, b"NaN").is_some()
        || memchr::memmem::find(b, b"Infinity").is_some()
        || may_hold_escape_anomaly(text)
}

/// Whether `text` holds a backslash escape that may be an anomaly ([`escape_may_be_anomaly`]):
/// with none, the only anomalies left are `NaN` / `Infinity` outside strings, which
/// serde_json refuses, so a text it parses holds no anomaly at all.
pub fn may_hold_escape_anomaly(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find_iter(b, b"\\").any(|i| b.get(i + 1).is_some_and(|c| escape_may_be_anomaly(*c)))
}

/// Whether a string escape whose letter (the byte after the backslash) is `letter` may
/// be an anomaly of this policy: `\u` (a lone surrogate, NUL, a control character),
/// `\b`, `\f`. A reader that skips strings without [`scan`] (the SFT view lines'
/// structural pass, `sft::views::int_arrays`) hands every text holding one to the path
/// that scans.
pub fn escape_may_be_anomaly(letter: u8) -> bool {
    matches!(letter, b'u' | b'b' | b'f')
}

/// Whether byte `b`, outside every string, may begin an anomaly (`NaN`, `Infinity`,
/// the `I` of `-Infinity`): no JSON token outside a string holds `N` or `I`.
pub fn non_finite_lead(b: u8) -> bool {
    matches!(b, b'N' | b'I')
}

enum Frame {
    /// In an object; the last key read.
    Object(Option<String>),
    /// In an array; the index of the current element.
    Array(usize),
}

/// Scans one JSON text (a document, a JSON array, or JSON lines: several top-level
/// values) for the anomalies of the module docs, and rewrites what serde_json cannot
/// read. Best effort on malformed input: it never fails and never panics; the parser
/// that reads the returned text reports syntax errors.
pub fn scan(text: &str) -> Scanned<'_> {
    scan_as(text, "null")
}

/// [`scan`] with `NaN` / `Infinity` / `-Infinity` rewritten to `non_finite` (a JSON
/// value) instead of `null`: a probe that tells a field a typed loader reads (it
/// refuses the probe) from one it ignores.
pub fn scan_as<'t>(text: &'t str, non_finite: &str) -> Scanned<'t> {
    if !may_hold_anomaly(text) {
        return Scanned { text: Cow::Borrowed(text), anomalies: Vec::new() };
    }
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0usize; // bytes of `text` already copied into `out`
    let mut anomalies: Vec<Anomaly> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut document = 0usize;
    let mut started = false; // a top-level value has begun
    let mut line = 1u64;
    let mut i = 0usize;
    let path_of = |stack: &[Frame]| -> String {
        let mut p = String::new();
        for f in stack {
            match f {
                Frame::Object(Some(k)) => {
                    if !p.is_empty() {
                        p.push('.');
                    }
                    p.push_str(k);
                }
                Frame::Object(None) => {}
                Frame::Array(n) => p.push_str(&format!("[{n}]")),
            }
        }
        p
    };
    let note =
        |anomalies: &mut Vec<Anomaly>, line: u64, document: usize, path: &str, kind: AnomalyKind, detail: &str| {
            if let Some(a) =
                anomalies.iter_mut().rev().take(4).find(|a| a.document == document && a.path == path && a.kind == kind)
            {
                a.occurrences += 1;
            } else {
                anomalies.push(Anomaly {
                    line,
                    document,
                    path: path.to_string(),
                    kind,
                    detail: detail.to_string(),
                    occurrences: 1,
                });
            }
        };
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'{' | b'[' => {
                if stack.is_empty() {
                    if started {
                        document += 1;
                    }
                    started = true;
                }
                stack.push(if c == b'{' { Frame::Object(None) } else { Frame::Array(0) });
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b',' => {
                if let Some(Frame::Array(n)) = stack.last_mut() {
                    *n += 1;
                }
                i += 1;
            }
            b'"' => {
                // a string: a key when inside an object and followed by `:`
                let start = i + 1;
                let value_line = line;
                let mut j = start;
                let mut found: Vec<(usize, usize, AnomalyKind)> = Vec::new(); // (escape start, len, kind)
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\n' {
                        line += 1; // a raw newline: malformed, the parser will say so
                    }
                    if b[j] == b'\\' && j + 1 < b.len() {
                        match b[j + 1] {
                            b'u' => {
                                let unit = hex4(&b[j + 2..]);
                                match unit {
                                    Some(u @ 0xD800..=0xDBFF) => {
                                        let low = (b.get(j + 6) == Some(&b'\\') && b.get(j + 7) == Some(&b'u'))
                                            .then(|| hex4(&b[j + 8..]))
                                            .flatten()
                                            .filter(|l| (0xDC00..=0xDFFF).contains(l));
                                        if low.is_some() {
                                            j += 12;
                                            continue;
                                        }
                                        let _ = u;
                                        found.push((j, 6, AnomalyKind::LoneSurrogate));
                                    }
                                    Some(0xDC00..=0xDFFF) => found.push((j, 6, AnomalyKind::LoneSurrogate)),
                                    Some(0) => found.push((j, 6, AnomalyKind::Nul)),
                                    Some(0x09 | 0x0A | 0x0D) => {}
                                    Some(0x01..=0x1F | 0x7F) => found.push((j, 6, AnomalyKind::ControlChar)),
                                    _ => {}
                                }
                                j += 6;
                            }
                            b'b' | b'f' => {
                                found.push((j, 2, AnomalyKind::ControlChar));
                                j += 2;
                            }
                            _ => j += 2,
                        }
                    } else {
                        j += 1;
                    }
                }
                let end = j.min(b.len());
                let mut k = end + 1;
                while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\r' | b'\n') {
                    k += 1;
                }
                let is_key = matches!(stack.last(), Some(Frame::Object(_))) && b.get(k) == Some(&b':');
                if is_key {
                    let raw = &text[start..end];
                    let key = serde_json::from_str::<String>(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string());
                    if let Some(Frame::Object(slot)) = stack.last_mut() {
                        *slot = Some(key);
                    }
                }
                if !found.is_empty() {
                    if stack.is_empty() && started {
                        document += 1;
                    }
                    started = true;
                    let path = path_of(&stack);
                    for (at, len, kind) in found {
                        note(&mut anomalies, value_line, document, &path, kind, &text[at..at + len]);
                        if kind == AnomalyKind::LoneSurrogate {
                            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                            o.push_str(&text[copied..at]);
                            o.push_str("\\ufffd");
                            copied = at + len;
                        }
                    }
                } else if stack.is_empty() {
                    if started {
                        document += 1;
                    }
                    started = true;
                }
                i = end + 1;
            }
            b'N' | b'I' | b'-'
                if b[i..].starts_with(b"NaN")
                    || b[i..].starts_with(b"Infinity")
                    || b[i..].starts_with(b"-Infinity") =>
            {
                let (token, kind): (&str, _) = if b[i..].starts_with(b"NaN") {
                    ("NaN", AnomalyKind::Nan)
                } else if b[i] == b'-' {
                    ("-Infinity", AnomalyKind::Infinity)
                } else {
                    ("Infinity", AnomalyKind::Infinity)
                };
                if stack.is_empty() {
                    if started {
                        document += 1;
                    }
                    started = true;
                }
                note(&mut anomalies, line, document, &path_of(&stack), kind, token);
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[copied..i]);
                o.push_str(non_finite);
                copied = i + token.len();
                i += token.len();
            }
            _ => {
                if stack.is_empty() && !c.is_ascii_whitespace() {
                    // a bare top-level scalar: a document of its own
                    if started {
                        document += 1;
                    }
                    started = true;
                    while i < b.len() && !matches!(b[i], b'\n' | b'{' | b'[' | b'"') {
                        i += 1;
                    }
                    continue;
                }
                i += 1;
            }
        }
    }
    let text = match out {
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(text),
    };
    Scanned { text, anomalies }
}

/// The value of 4 hex digits at the start of `b`.
fn hex4(b: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(b.get(..4)?).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// The field words for serde's expectation text (`i32`, `u64`, `f64`, `a string`,
/// `a boolean`, `struct RawLedger`, ...): "an integer field", "a number field", "a text
/// field", "a text or integer field", "an object field", else "a field that expects <it>".
pub fn field_words(expected: &str) -> String {
    let e = expected.trim();
    let int = ["i8", "i16", "i32", "i64", "i128", "u8", "u16", "u32", "u64", "u128", "usize", "isize"];
    if e.contains("string") && e.contains("integer") {
        "a text or integer field".to_string()
    } else if int.contains(&e) || e.contains("integer") {
        "an integer field".to_string()
    } else if e == "f32" || e == "f64" || e.contains("number") {
        "a number field".to_string()
    } else if e == "a string" {
        "a text field".to_string()
    } else if e.starts_with("struct ") || e == "a map" {
        "an object field".to_string()
    } else {
        format!("a field that expects {e}")
    }
}

/// One anomaly of a load, located in the file's terms (what `ingest_anomaly_records` stores
/// beside the file id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// 1-based line; `None` when only the field locates it (a JSON text nested in a
    /// string field of a whole-document format).
    pub line: Option<u64>,
    /// Field path in the loader's terms (`[3].messages[5].content`); empty for the record itself.
    pub field: String,
    /// `lone_surrogate`, `nan`, `infinity`, `nul`, `control_char`.
    pub kind: AnomalyKind,
    /// The first original spelling.
    pub detail: String,
    /// Occurrences in the field.
    pub occurrences: u64,
}

thread_local! {
    static COLLECTOR: RefCell<Option<Vec<Recorded>>> = const { RefCell::new(None) };
}

/// Adds anomalies to the load running on this thread (nothing when none runs, e.g. a
/// reader called from a test or from `views build`).
pub fn record(anomalies: impl IntoIterator<Item = Recorded>) {
    COLLECTOR.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            v.extend(anomalies);
        }
    });
}

/// Runs `f` with a fresh collector on this thread and returns its result with what was
/// [`record`]ed meanwhile (a collector already running is restored afterwards).
pub fn collect<T>(f: impl FnOnce() -> T) -> (T, Vec<Recorded>) {
    let outer = COLLECTOR.with(|c| c.borrow_mut().replace(Vec::new()));
    let result = f();
    let got = COLLECTOR.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer)).unwrap_or_default();
    (result, got)
}

/// The anomalies of one record that starts at `line` of its file, with fields prefixed
/// by `prefix` (e.g. `[3]` for a JSON-lines row; empty for a whole document). Lines are
/// relative to the record's text: `line` is added.
pub fn located(anomalies: &[Anomaly], line: u64, prefix: &str) -> Vec<Recorded> {
    anomalies
        .iter()
        .map(|a| Recorded {
            line: Some(line + a.line - 1),
            field: join_field(prefix, &a.path),
            kind: a.kind,
            detail: a.detail.clone(),
            occurrences: a.occurrences,
        })
        .collect()
}

/// `prefix` and `path` joined as field paths are written (`[3]` + `messages` →
/// `[3].messages`; `[3]` + `[0].x` → `[3][0].x`).
pub fn join_field(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty(), path.starts_with('[')) {
        (true, _, _) => path.to_string(),
        (_, true, _) => prefix.to_string(),
        (_, _, true) => format!("{prefix}{path}"),
        _ => format!("{prefix}.{path}"),
    }
}

/// The reason to give when a field that needs a number got `NaN` / `Infinity` (now
/// `null`): `Some("NaN in <expected> ...")` when `anomalies` holds one at `path` of
/// top-level value `document`; `expected` names the field, e.g. "an integer field".
pub fn non_finite_at(anomalies: &[Anomaly], document: usize, path: &str, expected: &str) -> Option<String> {
    anomalies.iter().find(|a| a.document == document && a.path == path && a.kind.is_non_finite()).map(|a| {
        format!("{} in {expected} (Python's json.dumps writes it for a float it cannot represent; this field needs a finite value)", a.detail)
    })
}

/// The lone surrogate escape at field `path` of top-level value `document`, if any.
pub fn lone_surrogate_at<'a>(anomalies: &'a [Anomaly], document: usize, path: &str) -> Option<&'a Anomaly> {
    anomalies.iter().find(|a| a.document == document && a.path == path && a.kind == AnomalyKind::LoneSurrogate)
}

/// Why a lone surrogate escape (`detail`, e.g. `\ud83d`) is refused in an id: stored as
/// U+FFFD, two ids that differ only there would merge.
pub fn surrogate_in_id(detail: &str) -> String {
    format!(
        "{detail} is a lone surrogate escape (half of a UTF-16 pair): an id must be exact text; stored as U+FFFD, \
         two ids that differ only there would merge (the producer likely cut a string inside an emoji)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(u64, usize, String, &'static str, String, u64)> {
        scan(text)
            .anomalies
            .into_iter()
            .map(|a| (a.line, a.document, a.path, a.kind.as_str(), a.detail, a.occurrences))
            .collect()
    }

    #[test]
    fn lone_surrogate_is_replaced_and_its_escape_recorded() {
        let s = scan(r#"{"messages": [{"content": "broken \ud83d emoji"}, {"content": "whole \ud83d\ude00"}]}"#);
        assert_eq!(s.text, r#"{"messages": [{"content": "broken \ufffd emoji"}, {"content": "whole \ud83d\ude00"}]}"#);
        let v: serde_json::Value = serde_json::from_str(&s.text).unwrap();
        assert_eq!(v["messages"][0]["content"], "broken \u{fffd} emoji");
        assert_eq!(v["messages"][1]["content"], "whole \u{1f600}");
        assert_eq!(
            kinds(r#"{"messages": [{"content": "broken \ud83d emoji"}]}"#),
            [(1, 0, "messages[0].content".to_string(), "lone_surrogate", r"\ud83d".to_string(), 1)]
        );
        // a low surrogate alone, and a high one at the end of the string
        assert_eq!(scan(r#"["\ude00", "x\uD83D"]"#).text, r#"["\ufffd", "x\ufffd"]"#);
    }

    #[test]
    fn nan_and_infinity_become_null_and_are_recorded() {
        let text = "{\"a\": NaN,\n \"b\": [1, Infinity, -Infinity], \"s\": \"NaN in a string\"}";
        let s = scan(text);
        assert_eq!(s.text, "{\"a\": null,\n \"b\": [1, null, null], \"s\": \"NaN in a string\"}");
        assert_eq!(
            kinds(text),
            [
                (1, 0, "a".to_string(), "nan", "NaN".to_string(), 1),
                (2, 0, "b[1]".to_string(), "infinity", "Infinity".to_string(), 1),
                (2, 0, "b[2]".to_string(), "infinity", "-Infinity".to_string(), 1),
            ]
        );
    }

    #[test]
    fn nul_and_control_chars_are_kept_and_recorded() {
        let text = r#"{"out": "a\u0000b\u001b[31mred\u001b[0m\b"}"#;
        let s = scan(text);
        assert_eq!(s.text, text, "kept as written");
        assert_eq!(
            kinds(text),
            [
                (1, 0, "out".to_string(), "nul", r"\u0000".to_string(), 1),
                (1, 0, "out".to_string(), "control_char", r"\u001b".to_string(), 3),
            ]
        );
        // tab, newline and carriage return escapes are ordinary text
        assert!(kinds(r#"{"a": "x\ty\n\u000a\u0009\r"}"#).is_empty());
    }

    #[test]
    fn json_lines_count_documents_and_lines() {
        let text = "{\"a\": 1}\n\n{\"b\": \"\\ud800\"}\n{\"c\": NaN}\n";
        assert_eq!(
            kinds(text),
            [
                (3, 1, "b".to_string(), "lone_surrogate", r"\ud800".to_string(), 1),
                (4, 2, "c".to_string(), "nan", "NaN".to_string(), 1)
            ]
        );
        let located = located(&scan("{\"c\": NaN}").anomalies, 7, "[2]");
        assert_eq!((located[0].line, located[0].field.as_str()), (Some(7), "[2].c"));
    }

    #[test]
    fn scan_never_panics_on_malformed_text() {
        for t in [
            "\"\\u",
            "\"\\ud83d",
            "{\"a\": \"\\ud83d\\u",
            "]]]}}}",
            "NaN",
            "-",
            "{\"a\": -Inf",
            "\"\\",
            "[\"\\uZZZZ\"]",
            "\u{e9}\\u00",
        ] {
            let _ = scan(t);
        }
        // keys with escapes name the field decoded
        assert_eq!(kinds(r#"{"k\u0065y": NaN}"#)[0].2, "key");
    }
}
