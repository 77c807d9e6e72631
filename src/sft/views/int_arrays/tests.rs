//! The integer-array reader against serde_json (issue 29): arrays by hand, then
//! differential property tests — generated and mutated arrays, generated and mutated view
//! lines, the view lines of `data-samples/sft` with the hostile mutations of
//! `tests/fuzz_loaders.rs` — each read both ways: the same views or the same error (the
//! same message), and the same anomalies recorded.
//!
//! `cargo test` runs a seeded run ([`DEFAULT_CASES`] cases per property). A long run
//! (about 10 minutes on one core):
//! `SPHRAGIS_INT_ARRAY_CASES=400000 cargo test --release --lib int_arrays`
//! (`SPHRAGIS_INT_ARRAY_SEED=<n>` picks another seed).

use super::super::{ID_FIELDS, Narrow, RawView, View, ViewOptions, parse_json_ids, parse_raw, to_view};
use super::*;
use crate::ingest::anomaly::{Recorded, collect};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::Path;

/// Cases per property in `cargo test`.
const DEFAULT_CASES: u32 = 1000;

fn runner() -> TestRunner {
    let cases = std::env::var("SPHRAGIS_INT_ARRAY_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES);
    let seed: u64 = std::env::var("SPHRAGIS_INT_ARRAY_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(29);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config { cases, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

fn read<T: NarrowInt>(text: &str) -> Option<Vec<T>> {
    let mut out = Vec::new();
    (read_array(text.as_bytes(), &mut out)? == text.len()).then_some(out)
}

/// serde_json's reading of an array as the loader read it before (`Narrow`).
fn serde<T: NarrowInt>(text: &str) -> Result<Vec<T>, String> {
    serde_json::from_str::<Narrow<T>>(text).map(|n| n.values).map_err(|e| e.to_string())
}

#[test]
fn plain_arrays_are_read() {
    assert_eq!(read::<i32>("[1,2,3]"), Some(vec![1, 2, 3]));
    assert_eq!(read::<i32>("[ 151644 , 872,\n\t198\r\n]"), Some(vec![151644, 872, 198]));
    assert_eq!(read::<i32>("[]"), Some(vec![]));
    assert_eq!(read::<i32>("[ \t]"), Some(vec![]));
    assert_eq!(read::<i32>("[-100, 0, 7]"), Some(vec![-100, 0, 7]));
    assert_eq!(read::<i32>("[2147483647,-2147483648]"), Some(vec![i32::MAX, i32::MIN]));
    assert_eq!(read::<i8>("[0, 1, 1, 0, 127, -128]"), Some(vec![0, 1, 1, 0, 127, -128]));
    // the bytes taken end at the `]`: what follows is the line's
    let mut out = Vec::<i32>::new();
    assert_eq!(read_array(b"[5, 6], \"x\": 1}", &mut out), Some(6));
    assert_eq!(out, [5, 6]);
}

/// Everything not provably a plain integer array that fits is handed on.
#[test]
fn anything_else_is_handed_on() {
    for text in [
        "[2147483648]",
        "[-2147483649]",
        "[1.0]",
        "[1e2]",
        "[1E2]",
        "[01]",
        "[+1]",
        "[-]",
        "[-0]",
        "[-00]",
        "[1,]",
        "[,1]",
        "[1 2]",
        "[\"1\"]",
        "[[1]]",
        "[null]",
        "[NaN]",
        "[true]",
        "[1x]",
        "1",
        "",
        "[",
        "[1",
        "[1,",
        "{}",
        "[1\u{a0}]",
        "[1\u{c}]",
        "[9223372036854775807]",
        "[1234567890123456789]",
        "[000000000000000000001]",
    ] {
        assert_eq!(read::<i32>(text), None, "{text:?}");
    }
    assert_eq!(read::<i8>("[128]"), None);
    assert_eq!(read::<i8>("[-129]"), None);
    // serde_json refuses -0 in an integer array too (its float -0.0)
    assert!(serde::<i32>("[-0]").unwrap_err().contains("floating point `-0.0`"));
}

/// What the structural pass hands to serde_json, by hand.
#[test]
fn lifted_line_keeps_everything_but_the_integer_arrays() {
    let line = r#"{"view_id": "a", "input_ids": [1, 2, 3], "origin": {"input_ids": [9], "s": "]}\"["}, "loss_mask": [0,1,1], "keep_msgs": null}"#;
    let lifted = lift(line).unwrap();
    assert_eq!(
        lifted.text,
        r#"{"view_id": "a", "input_ids": [], "origin": {"input_ids": [9], "s": "]}\"["}, "loss_mask": [], "keep_msgs": null}"#
    );
    assert_eq!(lifted.arrays[0], Some(Values::I32(vec![1, 2, 3])));
    assert_eq!(lifted.arrays[1], Some(Values::I8(vec![0, 1, 1])));
    assert!(lifted.arrays[2..].iter().all(Option::is_none));
    // no integer array: the line itself
    assert!(matches!(lift(r#"{"a": 1}"#).unwrap().text, Cow::Borrowed(_)));
    for handed_on in [
        // an anomaly of the ingest policy anywhere, or a value the reader cannot prove
        r#"{"view_id": "\ud83d", "input_ids": [1]}"#,
        r#"{"view_id": "a\bc", "input_ids": [1]}"#,
        r#"{"n_tokens": NaN, "input_ids": [1]}"#,
        r#"{"ledger": {"n": -Infinity}, "input_ids": [1]}"#,
        r#"{"input_ids": [1, 2.0]}"#,
        // an escaped key, a field given twice, brackets that do not pair, a cut line
        r#"{"input\u005fids": [1]}"#,
        r#"{"input_ids": [1], "input_ids": [2]}"#,
        r#"{"origin": [1}, "input_ids": [1]}"#,
        r#"{"input_ids": [1], "origin": {"#,
        "\u{feff}{\"input_ids\": [1]}",
        r#"["input_ids", [1]]"#,
    ] {
        assert!(lift(handed_on).is_none(), "{handed_on}");
    }
    // a string holding "NaN" or an escaped quote is no anomaly
    assert!(lift(r#"{"origin": "NaN \" Infinity \\ \n", "input_ids": [1]}"#).is_some());
}

type Read = (Result<Vec<View>, String>, Vec<Recorded>);

fn options() -> ViewOptions {
    ViewOptions { pool: Some("A".into()), ..ViewOptions::default() }
}

/// A view line read the new way and the way every line was read before.
fn both(line: &str) -> (Read, Read) {
    let path = Path::new("v.jsonl");
    let view = |raw: Result<RawView, crate::ingest::InputError>| {
        raw.and_then(|raw| to_view(path, 7, raw, &options())).map_err(|e| e.to_string())
    };
    let fast = collect(|| view(parse_raw(path, 7, line)));
    let before = collect(|| view(parse_json_ids::<RawView>(path, 7, line, ID_FIELDS)));
    (fast, before)
}

/// The errors of the integer arrays, by hand: serde_json's, to the field and position.
#[test]
fn int_array_errors_are_serde_jsons() {
    for (arrays, want) in [
        (r#""input_ids":[1,2.5,3],"loss_mask":[0,1,1]"#, "field `input_ids[1]`"),
        (r#""input_ids":[1,2,3],"loss_mask":[0,1,1e0]"#, "field `loss_mask[2]`"),
        (r#""input_ids":[1,2,2147483648],"loss_mask":[0,1,1]"#, "2147483648 does not fit a 32-bit integer"),
        (r#""input_ids":[1,2,3],"loss_mask":[0,1,300]"#, "mask value 300 is outside -128..127"),
        (r#""input_ids":[1,"2",3],"loss_mask":[0,1,1]"#, "field `input_ids[1]`"),
        (r#""input_ids":[1,2,3,],"loss_mask":[0,1,1]"#, "malformed JSON"),
        (r#""input_ids":[01,2,3],"loss_mask":[0,1,1]"#, "malformed JSON"),
        (r#""input_ids":[-0,2,3],"loss_mask":[0,1,1]"#, "floating point `-0.0`"),
        (r#""input_ids":[NaN,2,3],"loss_mask":[0,1,1]"#, "NaN in"),
        (r#""input_ids":[1,2,3],"loss_mask":[0,1,1],"loss_mask":[0,1,1]"#, "duplicate field `loss_mask`"),
        (r#""input_ids":[1,2,3],"loss_mask":[0,1,1]}x"#, "malformed JSON"),
    ] {
        let line = format!(r#"{{"instance_id":"x",{arrays}}}"#);
        let (fast, before) = both(&line);
        let err = fast.0.clone().unwrap_err();
        assert!(err.contains(want), "{line}: {err}");
        assert_eq!(fast, before, "{line}");
    }
    // white space of every JSON kind: the same view, read by the reader
    let line = "{\"instance_id\":\"x\",\"input_ids\":[ 1 ,\t2,\r\n3 ],\"loss_mask\":[0,1, 1]}";
    assert!(lift(line).is_some());
    let (fast, before) = both(line);
    assert_eq!(fast, before);
    assert_eq!(fast.0.unwrap()[0].input_ids, [1, 2, 3]);
}

fn edge_value() -> impl Strategy<Value = i64> {
    prop_oneof![
        -200i64..200,
        Just(i64::from(i32::MAX)),
        Just(i64::from(i32::MIN)),
        Just(i64::from(i32::MAX) + 1),
        Just(i64::from(i32::MIN) - 1),
        Just(127),
        Just(128),
        Just(-128),
        Just(-129),
        any::<i32>().prop_map(i64::from),
        any::<i64>(),
    ]
}

const WS: [&str; 6] = ["", " ", "\n", "\t", "\r\n", "  "];

/// `values` as a JSON array with white space `ws[k]` cycling around the tokens.
fn array_text(values: &[i64], ws: &[usize]) -> String {
    let w = |k: usize| WS[ws[k % ws.len()] % WS.len()];
    let mut s = String::from("[");
    for (k, v) in values.iter().enumerate() {
        if k > 0 {
            s.push_str(w(3 * k));
            s.push(',');
        }
        s.push_str(w(7 * k + 1));
        s.push_str(&v.to_string());
    }
    s.push_str(w(values.len()));
    s.push(']');
    s
}

/// Generated arrays: the reader's values are serde_json's; it hands on exactly when
/// serde_json refuses or a value does not fit.
#[test]
fn generated_arrays_read_as_serde_json_reads_them() {
    let strategy = (proptest::collection::vec(edge_value(), 0..40), proptest::collection::vec(0usize..6, 1..5));
    runner()
        .run(&strategy, |(values, ws)| {
            let text = array_text(&values, &ws);
            prop_assert_eq!(read::<i32>(&text), serde::<i32>(&text).ok(), "{:?}", text);
            prop_assert_eq!(read::<i8>(&text), serde::<i8>(&text).ok(), "{:?}", text);
            Ok(())
        })
        .unwrap();
}

/// One edit of a text: replace, insert or remove at a character boundary.
fn mutate(text: &mut String, edits: &[(Index, u8, &str)]) {
    for (at, op, piece) in edits {
        let mut k = at.index(text.len() + 1);
        while !text.is_char_boundary(k) {
            k -= 1;
        }
        let next = text[k..].chars().next().map_or(k, |c| k + c.len_utf8());
        match op {
            0 => text.replace_range(k..next, piece),
            1 => text.insert_str(k, piece),
            _ => text.replace_range(k..next, ""),
        }
    }
}

/// Bytes and tokens that make a valid array or line invalid, or a plain one not plain.
const HOSTILE: &[&str] = &[
    "0",
    "1",
    "9",
    "-",
    "+",
    ".",
    "e",
    "E",
    ",",
    "[",
    "]",
    "{",
    "}",
    ":",
    "\"",
    " ",
    "\t",
    "\n",
    "\r",
    "x",
    "\\",
    "NaN",
    "Infinity",
    "-Infinity",
    "-0",
    "1e5",
    "2147483648",
    "-129",
    "128",
    "\\ud83d",
    "\\u0000",
    "\\b",
    "\\n",
    "\u{feff}",
    "\u{a0}",
    "\u{0}",
    "\"input_ids\":[1],",
    "\"loss_mask\":[1],",
    "null",
    "true",
    "[[",
    "]]",
    "é",
];

fn edits() -> impl Strategy<Value = Vec<(Index, u8, &'static str)>> {
    proptest::collection::vec((any::<Index>(), 0u8..3, select(HOSTILE)), 1..4)
}

/// Mutated arrays: whatever the reader accepts, serde_json reads as the same values.
#[test]
fn mutated_arrays_never_disagree_with_serde_json() {
    let strategy = (proptest::collection::vec(-300i64..300, 0..12), edits());
    runner()
        .run(&strategy, |(values, edits)| {
            let mut text = array_text(&values, &[0]);
            mutate(&mut text, &edits);
            if let Some(v) = read::<i32>(&text) {
                prop_assert_eq!(Ok(v), serde::<i32>(&text), "{:?}", text);
            }
            if let Some(v) = read::<i8>(&text) {
                prop_assert_eq!(Ok(v), serde::<i8>(&text), "{:?}", text);
            }
            Ok(())
        })
        .unwrap();
}

/// A view line: its fields in the given order, arrays with the given white space.
fn view_line(
    ids: &[i64],
    mask: &[i64],
    convention: usize,
    extras: &[bool],
    order: &[usize],
    ws: &[usize],
    note: &str,
) -> String {
    let labels: Vec<i64> = ids
        .iter()
        .zip(mask.iter().chain(std::iter::repeat(&0)))
        .map(|(id, m)| if *m == 1 { *id } else { -100 })
        .collect();
    let positions: Vec<i64> = (0..ids.len() as i64).collect();
    let mut fields = vec![
        format!(r#""instance_id": "demo__r-{}""#, ids.len()),
        format!(r#""input_ids": {}"#, array_text(ids, ws)),
        match convention {
            0 => format!(r#""loss_mask": {}"#, array_text(mask, ws)),
            1 => format!(r#""assistant_masks":{}"#, array_text(mask, ws)),
            2 => format!(r#""labels": {}"#, array_text(&labels, ws)),
            _ => format!(r#""labels": {}, "loss_mask": {}"#, array_text(&labels, ws), array_text(mask, ws)),
        },
    ];
    let optional = [
        r#""view_id": "v-1""#.to_string(),
        format!(r#""keep_msgs": {}"#, array_text(&[0, 2], ws)),
        format!(r#""position_ids": {}"#, array_text(&positions, ws)),
        format!(r#""seq_lengths": [{}]"#, ids.len()),
        format!(
            r#""message_spans": [{{"index": 0, "role": "user", "start": 0, "end": {}}}], "span_end": "exclusive""#,
            ids.len()
        ),
        format!(r#""origin": {{"note": "{note}", "input_ids": [1, 2.5], "nested": [[1], {{"a": null}}]}}"#),
        r#""ledger": {"n_tokens": 3, "n_supervised": 1}"#.to_string(),
        r#""meta": [true, false, null, -1.5e3, "x"]"#.to_string(),
    ];
    for (on, field) in extras.iter().zip(optional) {
        if *on {
            fields.push(field);
        }
    }
    let mut ordered: Vec<(usize, String)> = fields.into_iter().enumerate().collect();
    ordered.sort_by_key(|(k, _)| order.get(*k).copied().unwrap_or(*k));
    let body: Vec<String> = ordered.into_iter().map(|(_, f)| f).collect();
    format!("{{{}}}", body.join(", "))
}

fn line_strategy() -> impl Strategy<Value = (String, bool)> {
    (
        proptest::collection::vec(prop_oneof![0i64..1000, edge_value()], 0..16),
        proptest::collection::vec(prop_oneof![4 => 0i64..2, 1 => -2i64..3, 1 => Just(128i64)], 0..16),
        0usize..4,
        proptest::collection::vec(any::<bool>(), 8),
        proptest::collection::vec(0usize..12, 12),
        proptest::collection::vec(0usize..6, 1..4),
        select(&["plain", "quote \\\" and \\\\ and \\n", "NaN in text", "caf\\u00e9", "bell \\b", "é ∑ 😀"][..]),
    )
        .prop_map(|(ids, mask, convention, extras, order, ws, note)| {
            // a plain line: no anomaly in the note, every value fits its field
            let plain = !note.contains("\\u")
                && !note.contains("\\b")
                && ids.iter().all(|v| i32::try_from(*v).is_ok())
                && mask.iter().all(|v| i8::try_from(*v).is_ok());
            (view_line(&ids, &mask, convention, &extras, &order, &ws, note), plain)
        })
}

/// Generated view lines, then mutated: the same views or the same error (message and
/// all), and the same anomalies recorded, whichever way they are read; a plain line is
/// read by the reader.
#[test]
fn view_lines_read_as_before() {
    let strategy = (line_strategy(), proptest::collection::vec((any::<Index>(), 0u8..3, select(HOSTILE)), 0..3));
    runner()
        .run(&strategy, |((line, plain), edits)| {
            if plain {
                // read by the reader, and serde_json takes the rest
                let lifted = lift(&line);
                prop_assert!(lifted.is_some(), "{}", line);
                let rest = serde_json::from_str::<RawView>(&lifted.unwrap().text);
                prop_assert!(rest.is_ok(), "{}: {:?}", line, rest.err());
            }
            let (fast, before) = both(&line);
            prop_assert_eq!(&fast, &before, "{}", line);
            let mut mutated = line.clone();
            mutate(&mut mutated, &edits);
            let (fast, before) = both(&mutated);
            prop_assert_eq!(fast, before, "{}", mutated);
            Ok(())
        })
        .unwrap();
}

/// Every view line of `data-samples/sft` (views, packed rows, segments), as it is and
/// with the fuzz tests' hostile mutations: read as before.
#[test]
fn sample_view_lines_read_as_before() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft");
    let mut lines = Vec::new();
    for file in ["views.jsonl", "audit/views.jsonl", "packed/views.jsonl", "segment_views.jsonl"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        lines.extend(text.lines().filter(|l| !l.trim().is_empty()).map(str::to_string));
    }
    assert!(lines.len() >= 30, "{} sample lines", lines.len());
    let mut lifted = 0;
    for line in &lines {
        lifted += usize::from(lift(line).is_some());
        let (fast, before) = both(line);
        assert_eq!(fast, before, "{line}");
    }
    // the samples hold anomalies on purpose (a lone surrogate, NaN): those go the old way
    assert!(lifted * 10 >= lines.len() * 8, "{lifted} of {} sample lines lifted", lines.len());
    let strategy = (select(lines), edits());
    runner()
        .run(&strategy, |(line, edits)| {
            let mut mutated = line;
            mutate(&mut mutated, &edits);
            let (fast, before) = both(&mutated);
            prop_assert_eq!(fast, before, "{}", mutated);
            Ok(())
        })
        .unwrap();
}
