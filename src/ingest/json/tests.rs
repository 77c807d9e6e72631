use super::*;

/// The lines [`for_each_raw_line`] hands on are those `read_until(b'\n')` reads, with
/// buffers smaller than a line, as large as one, and larger than the input: blank
/// lines, `\r\n`, a last line without a newline, a lone newline, nothing.
#[test]
fn raw_lines_are_those_of_read_until() {
    let long = "y".repeat(300);
    let texts = [
        String::new(),
        "\n".to_string(),
        "a".to_string(),
        "a\n\nbc\r\n\n\ndef".to_string(),
        format!("{long}\n{long}{long}\nz\n"),
        format!("\u{e9}\u{1F600}\n{long}"),
    ];
    for text in &texts {
        let mut want: Vec<Vec<u8>> = Vec::new();
        let mut reader = text.as_bytes();
        loop {
            let mut line = Vec::new();
            if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                break;
            }
            want.push(line);
        }
        for capacity in [1, 2, 3, 7, 64, 301, 1 << 16] {
            let mut got: Vec<Vec<u8>> = Vec::new();
            let mut reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
            for_each_raw_line(&mut reader, |line| {
                got.push(line.to_vec());
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want, "{text:?} through a buffer of {capacity}");
        }
    }
    // the first error of `each` ends the reading
    let mut seen = 0;
    let err = for_each_raw_line(&mut std::io::BufReader::with_capacity(2, "a\nb\nc\n".as_bytes()), |line| {
        seen += 1;
        if line == b"b\n" { anyhow::bail!("b refused") } else { Ok(()) }
    })
    .unwrap_err();
    assert_eq!((err.to_string(), seen), ("b refused".to_string(), 2));
}

#[test]
fn id_field_patterns_match_any_index_and_nothing_else() {
    assert!(field_matches("instance_id", "instance_id"));
    assert!(!field_matches("instance_id", "instance_ids"));
    assert!(!field_matches("instance_id", "origin.instance_id"));
    assert!(field_matches("comments[*].comment_id", "comments[12].comment_id"));
    assert!(!field_matches("comments[*].comment_id", "comments[].comment_id"));
    assert!(!field_matches("comments[*].comment_id", "comments[x].comment_id"));
    assert!(!field_matches("comments[*].comment_id", "comments[1].message"));
    assert!(field_matches("[*].a[*].b", "[0].a[7].b"));
}

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Row {
    id: TextOrNumber,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Probe {
    id: String,
    n: Option<i64>,
    x: Option<f64>,
    text: Option<String>,
}

/// The parse that skips the anomaly scan when no escape may be one gives what the
/// scanned parse gives, value for value, error for error and anomaly for anomaly:
/// `NaN` / `Infinity` inside strings (no anomaly), outside them in read and ignored
/// fields, control and surrogate escapes, and malformed records.
#[test]
fn anomaly_scan_skipped_only_where_it_finds_nothing() {
    let texts = [
        r#"{"id": "a", "n": 1, "text": "NaN and Infinity in a string"}"#,
        r#"{"id": "a", "text": "code: x = Double.NaN;\n y = -Infinity;\n", "other": ["NaN", "\"Infinity\""]}"#,
        r#"{"id": "a", "ignored": NaN}"#,
        r#"{"id": "a", "ignored": [1, -Infinity, {"k": Infinity}]}"#,
        r#"{"id": "a", "x": NaN}"#,
        r#"{"id": "a", "n": NaN}"#,
        r#"{"id": "a", "n": Infinity}"#,
        r#"{"id": "a", "text": "nul \u0000 and \b and \f"}"#,
        r#"{"id": "a", "ignored": "\u001b[31m red"}"#,
        r#"{"id": "a\ud83d", "text": "\ud83d half an emoji"}"#,
        r#"{"id": "a", "text": "\\u0000 is an escaped backslash, then u0000"}"#,
        r#"{"id": "a", "text": "unterminated}"#,
        r#"{"id": "a", "n": "seven"}"#,
        r#"{"id": "a", "n": 1} trailing"#,
        r#"{"n": 1}"#,
        "{\"id\": \"a\",\n \"n\": NaN}",
    ];
    let path = Path::new("p.jsonl");
    for text in texts {
        let (fast, fast_anomalies) =
            crate::ingest::anomaly::collect(|| parse_json_ids::<Probe>(path, 7, text, &["id"]));
        let (scanned, scanned_anomalies) =
            crate::ingest::anomaly::collect(|| parse_scanned::<Probe>(path, 7, text, &["id"]));
        assert_eq!(fast.as_ref().map_err(ToString::to_string), scanned.as_ref().map_err(ToString::to_string), "{text}");
        assert_eq!(format!("{fast_anomalies:?}"), format!("{scanned_anomalies:?}"), "{text}");
    }
    // and the cases meant: an ignored NaN is recorded, one in a string is not
    let (_, recorded) =
        crate::ingest::anomaly::collect(|| parse_json_ids::<Probe>(path, 7, texts[2], &["id"]).unwrap());
    assert_eq!(recorded.len(), 1);
    let (_, recorded) =
        crate::ingest::anomaly::collect(|| parse_json_ids::<Probe>(path, 7, texts[1], &["id"]).unwrap());
    assert!(recorded.is_empty(), "{recorded:?}");
}

/// A byte-order mark after blank space (files joined after an indent, or an editor's
/// mark inside a line) is named as one, not as "expected a JSON object".
#[test]
fn byte_order_mark_after_blank_space_is_named() {
    let err = parse_json::<Probe>(Path::new("p.jsonl"), 4, "  \t\u{feff}{\"id\": \"a\"}").unwrap_err().to_string();
    assert!(err.starts_with("p.jsonl:4: a byte-order mark (U+FEFF) follows blank space"), "{err}");
    // at the very start it is the file's own mark, skipped
    let ok: Probe = parse_json(Path::new("p.jsonl"), 1, "\u{feff}{\"id\": \"a\"}").unwrap();
    assert_eq!(ok.id, "a");
    let err = parse_json::<Probe>(Path::new("p.jsonl"), 4, " x{}").unwrap_err().to_string();
    assert_eq!(err, "p.jsonl:4: expected a JSON object {...}");
}

#[test]
fn text_or_number_error_names_the_expectation_not_a_type() {
    let ok: Row = parse_json(Path::new("x.jsonl"), 3, r#"{"id": 12}"#).unwrap();
    assert_eq!(ok.id, TextOrNumber::Number(12));
    let ok: Row = parse_json(Path::new("x.jsonl"), 3, r#"{"id": "c1"}"#).unwrap();
    assert_eq!(ok.id.into_text(), "c1");
    for bad in [r#"{"id": 1.5}"#, r#"{"id": [1]}"#, r#"{"id": true}"#, r#"{"id": null}"#] {
        let err = parse_json::<Row>(Path::new("x.jsonl"), 3, bad).unwrap_err().to_string();
        assert!(
            err.starts_with("x.jsonl:3: field `id`: invalid type") && err.contains("expected a string or an integer"),
            "{err}"
        );
        assert!(!err.contains("untagged") && !err.contains("TextOrNumber"), "{err}");
    }
}

#[test]
fn array_rows_are_located_by_line_in_one_pass() {
    // 20,000 small rows, one a line after a 2-line header; the last row is broken
    let n = 20_000;
    let mut text = String::from("[\n\n");
    for i in 0..n {
        text.push_str(&format!("{{\"id\": {i}}},\n"));
    }
    text.push_str("{\"id\": 1.5}\n]");
    let rows = array_rows(Path::new("big.json"), &text).unwrap();
    assert_eq!(rows.len(), n + 1);
    assert_eq!(rows[0].0, 3);
    assert_eq!(rows[n - 1].0, n as u64 + 2);
    let (line, raw) = rows[n];
    assert_eq!(line, n as u64 + 3);
    let err = parse_json::<Row>(Path::new("big.json"), line, raw.get()).unwrap_err().to_string();
    assert!(err.starts_with("big.json:20003: field `id`"), "{err}");
    // rows on one line share it; a row spread over lines starts where it starts
    let rows = array_rows(Path::new("a.json"), "[{\"id\": 1}, {\"id\": 2},\n {\n\"id\": 3}]").unwrap();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 1, 2]);
    let err = array_rows(Path::new("a.json"), "[{\"id\": 1},\n{\"id\": 2}").unwrap_err().to_string();
    assert!(err.starts_with("a.json:2:") && err.contains("truncated"), "{err}");
    let err = array_rows(Path::new("a.json"), "[1] x").unwrap_err().to_string();
    assert!(err.contains("malformed JSON"), "{err}");
}

#[test]
fn line_counter_restarts_on_an_earlier_offset() {
    let mut c = LineCounter::new("a\nb\nc\n");
    assert_eq!((c.line_at(0), c.line_at(2), c.line_at(4), c.line_at(2), c.line_at(100)), (1, 2, 3, 2, 4));
}

#[test]
fn bom_at_the_start_of_a_later_line_is_refused() {
    let lines = |text: &str, first: u64| {
        let mut seen = Vec::new();
        for_each_line_from(Path::new("x.jsonl"), text.as_bytes(), first, |n, t| {
            seen.push((n, t.trim_end().to_string()));
            Ok(())
        })
        .map(|_| seen)
        .map_err(|e| e.to_string())
    };
    // the file's own mark, on line 1, is skipped
    assert_eq!(lines("\u{feff}{\"a\": 1}\n", 1).unwrap(), [(1, "{\"a\": 1}".to_string())]);
    // a second file's mark, after `cat a.jsonl b.jsonl`, is refused at its line
    let err = lines("{\"a\": 1}\n\u{feff}{\"a\": 2}\n", 1).unwrap_err();
    assert!(err.starts_with("x.jsonl:2:") && err.contains("byte-order mark"), "{err}");
    // also at the first line of a chunk that starts mid-file (parallel readers)
    let err = lines("\u{feff}{\"a\": 2}\n", 7).unwrap_err();
    assert!(err.starts_with("x.jsonl:7:") && err.contains("byte-order mark"), "{err}");
}

#[test]
fn peek_container_skips_bom_and_blank_lines() {
    let mut r = &b"\xef\xbb\xbf\n \n[1]"[..];
    let p = peek_container(&mut r).unwrap();
    assert_eq!((p.container, p.blank_lines), (Some(Container::Array), 0));
    assert_eq!(r, b"\n \n[1]", "blank space within the buffer is not consumed");
    let mut r = &b"  {\"a\":1}"[..];
    assert_eq!(peek_container(&mut r).unwrap().container, Some(Container::Object));
    let mut r = &b"\n\t"[..];
    assert_eq!(peek_container(&mut r).unwrap(), Peeked { container: None, blank_lines: 1, head: Vec::new() });
    let mut r = &b"x"[..];
    assert_eq!(peek_container(&mut r).unwrap().container, Some(Container::Other(b'x')));
}

/// Blank space before the content that fills the reader's buffer: only whole blank
/// lines are consumed, and the content's line comes back whole (found by a fresh
/// tester: with a 64 KB buffer, 70,000 spaces before a record cut its line, and an
/// error named column 4504 instead of 70040), the same for every buffer size.
#[test]
fn blank_space_longer_than_the_buffer_leaves_the_content_line_whole() {
    use std::io::Read;
    let lines = [
        "\n".to_string(),
        " \n".to_string(),
        format!("{}\n", " ".repeat(40)),
        format!("{}{{\"a\": 1}}\n", " ".repeat(100)),
    ];
    let text = lines.concat();
    for capacity in [1, 7, 16, 64, 1 << 16] {
        let mut r = std::io::BufReader::with_capacity(capacity, text.as_bytes());
        let p = peek_container(&mut r).unwrap();
        assert_eq!(p.container, Some(Container::Object), "buffer of {capacity}");
        // what is left starts where a line starts, after the blank lines consumed
        let mut rest = p.head.clone();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, lines[p.blank_lines as usize..].concat().into_bytes(), "buffer of {capacity}");
        if capacity < 100 {
            assert_eq!(p.blank_lines, 3, "buffer of {capacity}");
        }
    }
    // only blank space, ending with or without a newline
    for text in ["   \n      ", "  \n  \n"] {
        let mut r = std::io::BufReader::with_capacity(2, text.as_bytes());
        let p = peek_container(&mut r).unwrap();
        assert_eq!(p.container, None, "{text:?}");
        assert_eq!(p.blank_lines, text.matches('\n').count() as u64, "{text:?}");
    }
}
