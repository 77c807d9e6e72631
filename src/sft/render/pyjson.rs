//! Python's `json.dumps`, as Hugging Face's chat-template environment calls it for
//! the `tojson` filter (`ensure_ascii=False`, `indent=None`, `separators=None`,
//! `sort_keys=False` unless the template passes others).

use std::fmt::Write as _;

/// Options of Python's `json.dumps` that HF's `tojson` exposes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PyJsonOptions {
    pub ensure_ascii: bool,
    /// `None`: single line. `Some(s)`: newline + `s` repeated per level.
    pub indent: Option<String>,
    /// `(item_separator, key_separator)`; `None` = Python's default.
    pub separators: Option<(String, String)>,
    pub sort_keys: bool,
}

/// `json.dumps(value, **opts)` as CPython produces it.
pub fn python_json_dumps(value: &serde_json::Value, opts: &PyJsonOptions) -> String {
    let (item_sep, key_sep) = match &opts.separators {
        Some((i, k)) => (i.clone(), k.clone()),
        None if opts.indent.is_some() => (",".to_owned(), ": ".to_owned()),
        None => (", ".to_owned(), ": ".to_owned()),
    };
    let mut out = String::new();
    dump_value(value, opts, &item_sep, &key_sep, 0, &mut out);
    out
}

fn dump_value(
    v: &serde_json::Value,
    opts: &PyJsonOptions,
    item_sep: &str,
    key_sep: &str,
    level: usize,
    out: &mut String,
) {
    use serde_json::Value as J;
    let newline_indent = |out: &mut String, level: usize| {
        if let Some(ind) = &opts.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(ind);
            }
        }
    };
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else {
                out.push_str(&python_float_repr(n.as_f64().unwrap_or(f64::NAN)));
            }
        }
        J::String(s) => dump_str(s, opts.ensure_ascii, out),
        J::Array(a) => {
            if a.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline_indent(out, level + 1);
                dump_value(item, opts, item_sep, key_sep, level + 1, out);
            }
            newline_indent(out, level);
            out.push(']');
        }
        J::Object(o) => {
            if o.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut entries: Vec<(&String, &serde_json::Value)> = o.iter().collect();
            if opts.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline_indent(out, level + 1);
                dump_str(k, opts.ensure_ascii, out);
                out.push_str(key_sep);
                dump_value(item, opts, item_sep, key_sep, level + 1, out);
            }
            newline_indent(out, level);
            out.push('}');
        }
    }
}

/// Python's `json` string encoder (`ensure_ascii` selects the ASCII-only one).
fn dump_str(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && !(' '..='~').contains(&c) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// CPython's `float.__repr__` (shortest round-trip digits; exponent form
/// when the decimal exponent is < -4 or >= 16), plus json's spellings of
/// the non-finite values.
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sci = format!("{:e}", x.abs()); // e.g. "1.5e-7", "1e16", "0e0"
    let (mant, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let (int_part, frac_part) = if exp >= 0 {
            let e = exp as usize + 1;
            if digits.len() <= e {
                (format!("{digits}{}", "0".repeat(e - digits.len())), "0".to_owned())
            } else {
                (digits[..e].to_owned(), digits[e..].to_owned())
            }
        } else {
            ("0".to_owned(), format!("{}{digits}", "0".repeat((-exp - 1) as usize)))
        };
        format!("{sign}{int_part}.{frac_part}")
    } else {
        let mut m = digits[..1].to_owned();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tojson_matches_python_json_dumps() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"z": 1, "a": [1.0, 2.5, "é\"<&>\n\u0001"], "m": {}, "n": null, "t": true, "e": []}"#,
        )
        .unwrap();
        let default = python_json_dumps(&v, &PyJsonOptions::default());
        assert_eq!(default, r#"{"z": 1, "a": [1.0, 2.5, "é\"<&>\n\u0001"], "m": {}, "n": null, "t": true, "e": []}"#);
        let sorted = python_json_dumps(&v, &PyJsonOptions { sort_keys: true, ..Default::default() });
        assert!(sorted.starts_with(r#"{"a": "#), "{sorted}");
        let ascii = python_json_dumps(&json!("é😀\u{7f}"), &PyJsonOptions { ensure_ascii: true, ..Default::default() });
        assert_eq!(ascii, r#""\u00e9\ud83d\ude00\u007f""#);
        let indented = python_json_dumps(
            &json!({"a": [1, {"b": 2}], "c": {}}),
            &PyJsonOptions { indent: Some("  ".into()), ..Default::default() },
        );
        assert_eq!(indented, "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ],\n  \"c\": {}\n}");
        let compact = python_json_dumps(
            &json!({"a": [1, 2]}),
            &PyJsonOptions { separators: Some((",".into(), ":".into())), ..Default::default() },
        );
        assert_eq!(compact, r#"{"a":[1,2]}"#);
    }

    #[test]
    fn python_float_repr_matches_cpython() {
        for (x, want) in [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5e300, "-2.5e+300"),
            (123.456, "123.456"),
        ] {
            assert_eq!(python_float_repr(x), want, "{x}");
        }
    }
}
