//! Segment-level mask audit (issue 9): `data-samples/sft/segment_views.jsonl` holds six
//! views of one 72-token ChatML conversation in `data-samples/sft/chatml_tokenizer.json`
//! (system [0,11), user [11,21), assistant [21,49), tool [49,61), assistant [61,71),
//! `<|endoftext|>` at 71 in no span; the cut is pinned token by token in
//! `src/sft/segments.rs`'s unit tests). Pool A: `seg-normal` trains thinking, tool call,
//! text and end of turn, not the header; `seg-header` also trains both headers;
//! `seg-no-eot` never trains `<|im_end|>\n`; `seg-last-only` trains only the last
//! assistant message. Pool C: `seg-tie-a` (normal) and `seg-tie-b` (no end of turn).
//! The real-data test reads the two Qwen3 reference views in the shared data.

mod common;

use sphragis::ingest::read::TokenizerFile;
use sphragis::sft::segments::Segmenter;
use sphragis::sft::views::{SpanEnd, ViewOptions, load};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft")
}

/// Options as `load views --tokenizer T` builds them.
fn with_tokenizer(path: &Path) -> ViewOptions {
    let t = TokenizerFile::read(path).unwrap();
    let vocab = (t.vocab_size(), t.sha256.clone());
    ViewOptions {
        tokenizer: Some(vocab),
        segments: Some(Arc::new(Segmenter::new(t.tokenizer, t.sha256))),
        ..ViewOptions::default()
    }
}

type Row = (String, Option<String>, String, i64, i64, i64, i64, i64, i64, Option<String>);

/// `sft_segment_supervision_v1` rows of one view: (view, role, segment, messages,
/// tokens, supervised, trained_messages, scope_tokens, scope_supervised, pattern).
fn per_view(conn: &duckdb::Connection, view: &str) -> Vec<Row> {
    let mut stmt = conn
        .prepare(
            "select view_id, role, segment, messages, tokens, supervised, trained_messages, coalesce(scope_tokens, -1), \
             coalesce(scope_supervised, -1), pattern from sft_segment_supervision_v1 where view_id = ? order by role nulls last, segment",
        )
        .unwrap();
    stmt.query_map([view], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
            r.get(9)?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn row(view: &str, role: Option<&str>, segment: &str, n: [i64; 6], pattern: Option<&str>) -> Row {
    (view.into(), role.map(Into::into), segment.into(), n[0], n[1], n[2], n[3], n[4], n[5], pattern.map(Into::into))
}

fn loaded() -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(
        &conn,
        &samples().join("segment_views.jsonl"),
        &with_tokenizer(&samples().join("chatml_tokenizer.json")),
        &mut |_| {},
    )
    .unwrap();
    conn
}

/// A second file, loaded without --tokenizer: its one view (`seg-unknown`, a copy of
/// `seg-normal`) has unknown segments. `tag` keeps the temporary folders of tests apart.
fn load_unknown(conn: &duckdb::Connection, tag: &str) {
    let dir = std::env::temp_dir().join(format!("sphragis-segments-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("plain.jsonl");
    let first = std::fs::read_to_string(samples().join("segment_views.jsonl")).unwrap();
    let line = first.lines().next().unwrap().replace("\"seg-normal\"", "\"seg-unknown\"");
    std::fs::write(&plain, format!("{line}\n")).unwrap();
    load(conn, &plain, &ViewOptions::default(), &mut |_| {}).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn segments_per_view_count_supervised_tokens_by_hand() {
    let conn = loaded();
    // seg-normal: mask [24,49) and [64,71). Tokens per segment: system 3/6/2, user
    // 3/5/2, tool 3/7/2; assistant headers 3+3, thinking 10+4, tool call 13, text 1,
    // ends of turn 2+2; outside 1 (72 in all, 32 supervised).
    let never = Some("never");
    let always = Some("always");
    let a = Some("assistant");
    let normal = vec![
        row("seg-normal", a, "end_of_turn", [2, 4, 4, 2, 4, 4], always),
        row("seg-normal", a, "header", [2, 6, 0, 2, 6, 0], never),
        row("seg-normal", a, "text", [1, 1, 1, 1, 1, 1], always),
        row("seg-normal", a, "thinking", [2, 14, 14, 2, 14, 14], always),
        row("seg-normal", a, "tool_call", [1, 13, 13, 1, 13, 13], always),
        row("seg-normal", Some("system"), "content", [1, 6, 0, 0, 6, 0], never),
        row("seg-normal", Some("system"), "end_of_turn", [1, 2, 0, 0, 2, 0], never),
        row("seg-normal", Some("system"), "header", [1, 3, 0, 0, 3, 0], never),
        row("seg-normal", Some("tool"), "content", [1, 7, 0, 0, 7, 0], never),
        row("seg-normal", Some("tool"), "end_of_turn", [1, 2, 0, 0, 2, 0], never),
        row("seg-normal", Some("tool"), "header", [1, 3, 0, 0, 3, 0], never),
        row("seg-normal", Some("user"), "content", [1, 5, 0, 0, 5, 0], never),
        row("seg-normal", Some("user"), "end_of_turn", [1, 2, 0, 0, 2, 0], never),
        row("seg-normal", Some("user"), "header", [1, 3, 0, 0, 3, 0], never),
        row("seg-normal", None, "outside", [0, 1, 0, 0, 1, 0], never),
    ];
    assert_eq!(per_view(&conn, "seg-normal"), normal);
    let total: (i64, i64) = conn
        .query_row(
            "select sum(tokens), sum(supervised) from sft_segment_supervision_v1 where view_id = 'seg-normal'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(total, (72, 32));
    // seg-header: both headers trained as well (mask [21,49) and [61,71))
    let header = per_view(&conn, "seg-header");
    assert_eq!(header[1], row("seg-header", a, "header", [2, 6, 6, 2, 6, 6], always));
    // seg-no-eot: mask [24,47) and [64,69): the ends of turn never trained
    let no_eot = per_view(&conn, "seg-no-eot");
    assert_eq!(no_eot[0], row("seg-no-eot", a, "end_of_turn", [2, 4, 0, 2, 4, 0], never));
    assert_eq!(no_eot[3], row("seg-no-eot", a, "thinking", [2, 14, 14, 2, 14, 14], always));
    // seg-last-only: mask [64,71), the second assistant message only. Patterns read the
    // trained message; the tool call lies only in the untrained one: no pattern.
    let last = per_view(&conn, "seg-last-only");
    assert_eq!(
        last[..5],
        [
            row("seg-last-only", a, "end_of_turn", [2, 4, 2, 1, 2, 2], always),
            row("seg-last-only", a, "header", [2, 6, 0, 1, 3, 0], never),
            row("seg-last-only", a, "text", [1, 1, 1, 1, 1, 1], always),
            row("seg-last-only", a, "thinking", [2, 14, 4, 1, 4, 4], always),
            row("seg-last-only", a, "tool_call", [1, 13, 0, 0, 0, 0], None),
        ]
    );
    // the file and the tokenizer and rules behind the segments are recorded
    let (views, segments, rules): (i64, i64, String) = conn
        .query_row("select views, segments, rules from sft_segment_files", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!((views, segments), (6, 6 * 18));
    let rules: serde_json::Value = serde_json::from_str(&rules).unwrap();
    assert_eq!(rules["headers_opened_by"]["<|im_start|>"], 30);
    assert_eq!(rules["turns_closed_by"]["<|im_end|>"], 30);
}

/// A view that trains the header and one that never trains the end of turn deviate from
/// their pool's majority; a tie names every view; views loaded without a tokenizer are
/// reported as unknown, never as zero.
#[test]
fn deviating_views_are_named_per_pool_and_unknown_segments_are_said() {
    let conn = loaded();
    load_unknown(&conn, "patterns");

    type P =
        (String, Option<String>, String, i64, i64, i64, i64, i64, Option<String>, i64, Option<String>, Option<String>);
    let mut stmt = conn
        .prepare(
            "select pool, role, segment, views, always_views, never_views, partly_views, no_pattern_views, majority_pattern, \
             deviating_views, deviating_view_ids, note from sft_segment_patterns_v1 order by pool, role nulls last, segment",
        )
        .unwrap();
    let got: Vec<P> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
                r.get(10)?,
                r.get(11)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let p = |pool: &str,
             role: Option<&str>,
             seg: &str,
             n: [i64; 5],
             majority: Option<&str>,
             dev: i64,
             ids: Option<&str>,
             note: Option<&str>|
     -> P {
        (
            pool.into(),
            role.map(Into::into),
            seg.into(),
            n[0],
            n[1],
            n[2],
            n[3],
            n[4],
            majority.map(Into::into),
            dev,
            ids.map(Into::into),
            note.map(Into::into),
        )
    };
    let a = Some("assistant");
    let (always, never) = (Some("always"), Some("never"));
    let mut expected = vec![
        p("A", a, "end_of_turn", [4, 3, 1, 0, 0], always, 1, Some("seg-no-eot"), None),
        p("A", a, "header", [4, 1, 3, 0, 0], never, 1, Some("seg-header"), None),
        p("A", a, "text", [4, 4, 0, 0, 0], always, 0, None, None),
        p("A", a, "thinking", [4, 4, 0, 0, 0], always, 0, None, None),
        // seg-last-only trains no tool call: no pattern, not a deviation
        p("A", a, "tool_call", [4, 3, 0, 0, 1], always, 0, None, None),
    ];
    for role in ["system", "tool", "user"] {
        for seg in ["content", "end_of_turn", "header"] {
            expected.push(p("A", Some(role), seg, [4, 0, 4, 0, 0], never, 0, None, None));
        }
    }
    expected.push(p("A", None, "outside", [4, 0, 4, 0, 0], never, 0, None, None));
    expected.push(p(
        "A",
        None,
        "unknown",
        [1, 0, 0, 0, 1],
        None,
        0,
        None,
        Some("segments unknown: loaded without --tokenizer (cut them with views segments --tokenizer T)"),
    ));
    // pool C: one view trains the end of turn, one does not: no majority, both named
    expected.push(p(
        "C",
        a,
        "end_of_turn",
        [2, 1, 1, 0, 0],
        None,
        2,
        Some("seg-tie-a, seg-tie-b"),
        Some("no majority: patterns tie"),
    ));
    expected.push(p("C", a, "header", [2, 0, 2, 0, 0], never, 0, None, None));
    expected.push(p("C", a, "text", [2, 2, 0, 0, 0], always, 0, None, None));
    expected.push(p("C", a, "thinking", [2, 2, 0, 0, 0], always, 0, None, None));
    expected.push(p("C", a, "tool_call", [2, 2, 0, 0, 0], always, 0, None, None));
    for role in ["system", "tool", "user"] {
        for seg in ["content", "end_of_turn", "header"] {
            expected.push(p("C", Some(role), seg, [2, 0, 2, 0, 0], never, 0, None, None));
        }
    }
    expected.push(p("C", None, "outside", [2, 0, 2, 0, 0], never, 0, None, None));
    assert_eq!(got, expected);

    let mut stmt = conn
        .prepare("select view_id, role, segment, pattern, majority_pattern, finding from sft_segment_deviations_v1 order by view_id")
        .unwrap();
    type D = (String, Option<String>, String, Option<String>, Option<String>, String);
    let got: Vec<D> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let d = |v: &str, role: Option<&str>, seg: &str, pat: Option<&str>, maj: Option<&str>, f: &str| {
        (v.to_string(), role.map(Into::into), seg.to_string(), pat.map(Into::into), maj.map(Into::into), f.to_string())
    };
    assert_eq!(
        got,
        vec![
            d("seg-header", a, "header", always, never, "deviates"),
            d("seg-no-eot", a, "end_of_turn", never, always, "deviates"),
            d("seg-tie-a", a, "end_of_turn", always, None, "no_majority"),
            d("seg-tie-b", a, "end_of_turn", never, None, "no_majority"),
            d("seg-unknown", None, "unknown", None, None, "segments_unknown"),
        ]
    );
    // the unknown view's row carries its size, not zeros pretending to be segments
    let unknown: (i64, i64, Option<String>) = conn
        .query_row(
            "select tokens, supervised, pattern from sft_segment_supervision_v1 where view_id = 'seg-unknown'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(unknown, (72, 32, None));
}

/// A load that fails leaves no segment behind: the derivation is in the load's transaction.
#[test]
fn segments_are_written_in_the_load_transaction() {
    let conn = loaded();
    let dir = std::env::temp_dir().join(format!("sphragis-segments-tx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.jsonl");
    // a good line, then a line that reuses a loaded view_id: the file is refused whole
    let first = std::fs::read_to_string(samples().join("segment_views.jsonl")).unwrap();
    let good = first.lines().next().unwrap().replace("\"seg-normal\"", "\"seg-new\"");
    let again = first.lines().next().unwrap();
    std::fs::write(&bad, format!("{good}\n{again}\n")).unwrap();
    let err = load(&conn, &bad, &with_tokenizer(&samples().join("chatml_tokenizer.json")), &mut |_| {}).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(format!("{err:#}").contains("\"seg-normal\" is already used"), "{err:#}");
    let counts: (i64, i64) = conn
        .query_row(
            "select (select count(*) from sft_view_segments), (select count(*) from sft_segment_files)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(counts, (6 * 18, 1));
}

/// The two Qwen3 reference views (`../shared/data/sft/reference-views-qwen3`, made with
/// TRL's qwen3_training.jinja): 52 assistant turns (17 + 35), each `<|im_start|>assistant\n`
/// (3 tokens, unsupervised), then supervised through `<|im_end|>\n`; no view deviates. Counts checked
/// independently by `tests/acceptance/segments_qwen3.py` (pure Python: the byte-level
/// decoding done by hand from tokenizer.json, no tokenizer library).
#[test]
#[ignore = "needs ../shared/data"]
fn qwen3_reference_views_segments_match_an_independent_count() {
    let shared = common::shared().join("data");
    let views = shared.join("sft/reference-views-qwen3/views.jsonl");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = ViewOptions {
        pool: Some("ref".into()),
        span_end: Some(SpanEnd::Exclusive),
        ..with_tokenizer(&shared.join("tokenizers/qwen3/tokenizer.json"))
    };
    load(&conn, &views, &options, &mut |_| {}).unwrap();
    let mut stmt = conn
        .prepare(
            "select instance_id, coalesce(role, '-'), segment, messages, tokens, supervised, pattern \
             from sft_segment_supervision_v1 order by instance_id, role, segment",
        )
        .unwrap();
    let got: Vec<String> = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {} {} {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, Option<String>>(6)?.unwrap_or_default()
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let expected: Vec<&str> = include_str!("acceptance/segments_qwen3.expected").lines().collect();
    assert_eq!(got, expected);
    let deviating: i64 = conn.query_row("select count(*) from sft_segment_deviations_v1", [], |r| r.get(0)).unwrap();
    assert_eq!(deviating, 0);
}

/// Views that declare the tokenizer they were made with (`views build` writes
/// `origin.tokenizer_sha256`) are refused with another `--tokenizer`: their segments
/// would be cut with the wrong tokens. The same tokenizer loads.
#[test]
fn segments_refuse_a_tokenizer_other_than_the_views_declare() {
    let dir = std::env::temp_dir().join(format!("sphragis-segments-tok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("declared.jsonl");
    let first = std::fs::read_to_string(samples().join("segment_views.jsonl")).unwrap();
    let line = |id: &str, sha: &str| {
        first
            .lines()
            .next()
            .unwrap()
            .replace("\"seg-normal\"", &format!("\"{id}\""))
            .replace("\"origin\": {\"note\"", &format!("\"origin\": {{\"tokenizer_sha256\": \"{sha}\", \"note\""))
    };
    let options = with_tokenizer(&samples().join("chatml_tokenizer.json"));
    let sha = options.segments.as_ref().unwrap().sha256().to_string();
    std::fs::write(&file, format!("{}\n{}\n", line("same", &sha), line("other", "0123abcd"))).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = format!("{:#}", load(&conn, &file, &options, &mut |_| {}).unwrap_err());
    assert!(
        err.contains(&format!(
            "declared.jsonl:2: field `origin.tokenizer_sha256`: the view was made with tokenizer 0123abcd, --tokenizer is {sha}"
        )),
        "{err}"
    );
    let views: i64 = conn.query_row("select count(*) from sft_views", [], |r| r.get(0)).unwrap();
    assert_eq!(views, 0);
    // the mismatch is met in file order: a later bad line does not hide it (it was
    // checked only after the whole file had been read)
    std::fs::write(&file, format!("{}\n{}\n{{\n", line("same", &sha), line("other", "0123abcd"))).unwrap();
    let err = format!("{:#}", load(&conn, &file, &options, &mut |_| {}).unwrap_err());
    assert!(err.contains("declared.jsonl:2: field `origin.tokenizer_sha256`"), "{err}");
    // an origin that repeats the key, naming another tokenizer first: serde_json kept the
    // last value and the view loaded as made with the right one
    let repeated =
        line("same", &sha).replace("\"tokenizer_sha256\"", "\"tokenizer_sha256\": \"0123abcd\", \"tokenizer_sha256\"");
    std::fs::write(&file, format!("{repeated}\n")).unwrap();
    let err = format!("{:#}", load(&conn, &file, &options, &mut |_| {}).unwrap_err());
    assert!(err.contains("declared.jsonl:1: field `origin"), "{err}");
    assert!(err.contains("the key \"tokenizer_sha256\" is repeated"), "{err}");
    // the same hash in upper-case hex is the same tokenizer
    std::fs::write(&file, format!("{}\n{}\n", line("same", &sha), line("upper", &sha.to_uppercase()))).unwrap();
    load(&conn, &file, &options, &mut |_| {}).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let segments: i64 = conn.query_row("select count(*) from sft_view_segments", [], |r| r.get(0)).unwrap();
    assert_eq!(segments, 2 * 18);
}

/// Views loaded without a tokenizer get their segments later with `views segments
/// --tokenizer T` (the same bytes cannot be loaded again): the same figures as at load,
/// once; a file loaded with another tokenizer is refused, naming file and line.
#[test]
fn views_segments_cuts_files_loaded_without_a_tokenizer() {
    let bin = env!("CARGO_BIN_EXE_sphragis");
    let dir = std::env::temp_dir().join(format!("sphragis-segments-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("s.duckdb");
    let run = |args: &[&str]| std::process::Command::new(bin).arg("--db").arg(&db).args(args).output().unwrap();
    let views = samples().join("segment_views.jsonl");
    let tokenizer = samples().join("chatml_tokenizer.json");
    assert!(run(&["init"]).status.success());
    let no_views = run(&["views", "segments", "--tokenizer", tokenizer.to_str().unwrap()]);
    assert!(!no_views.status.success());
    assert!(String::from_utf8_lossy(&no_views.stderr).contains("no views are loaded"), "{no_views:?}");
    assert!(run(&["load", "views", views.to_str().unwrap()]).status.success());
    let unknown = run(&["report", "segments", "--format", "csv"]);
    let text = String::from_utf8_lossy(&unknown.stdout);
    assert!(text.contains("A,,unknown,4,0,0,0,4,288,105,,0,,segments unknown: loaded without --tokenizer (cut them with views segments --tokenizer T)"), "{text}");
    let cut = run(&["views", "segments", "--tokenizer", tokenizer.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&cut.stdout);
    assert!(cut.status.success(), "{cut:?}");
    assert!(
        said.contains("cut 6 views of ") && said.contains("segment_views.jsonl (file_id 1) into 108 segments"),
        "{said}"
    );
    let again = run(&["views", "segments", "--tokenizer", tokenizer.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("every loaded view file already has segments; nothing written")
    );
    let rows = run(&["report", "segment-deviations", "--format", "csv"]);
    let rows: Vec<String> = String::from_utf8_lossy(&rows.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').take(6).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        rows,
        [
            "view_id,pool,instance_id,role,segment,pattern",
            "seg-header,A,demo__seg-1,assistant,header,always",
            "seg-no-eot,A,demo__seg-1,assistant,end_of_turn,never",
            "seg-tie-a,C,demo__seg-1,assistant,end_of_turn,always",
            "seg-tie-b,C,demo__seg-1,assistant,end_of_turn,never",
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `views segments` refuses a file whose views were loaded with another tokenizer (its
/// vocabulary bound recorded, its segments not cut): nothing is written.
#[test]
fn views_segments_refuses_views_loaded_with_another_tokenizer() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let word_level = TokenizerFile::read(&samples().join("tokenizer.json")).unwrap();
    let options =
        ViewOptions { tokenizer: Some((word_level.vocab_size(), word_level.sha256.clone())), ..ViewOptions::default() };
    load(&conn, &samples().join("segment_views.jsonl"), &options, &mut |_| {}).unwrap();
    let chatml = with_tokenizer(&samples().join("chatml_tokenizer.json"));
    let segmenter = chatml.segments.unwrap();
    let err = format!("{:#}", sphragis::sft::segments::derive_missing(&conn, &segmenter).unwrap_err());
    assert!(
        err.contains(&format!(
            "segment_views.jsonl:1: field `tokenizer`: the view was loaded with tokenizer {}, --tokenizer is {}",
            word_level.sha256,
            segmenter.sha256()
        )),
        "{err}"
    );
    let written: (i64, i64) = conn
        .query_row(
            "select (select count(*) from sft_view_segments), (select count(*) from sft_segment_files)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(written, (0, 0));
}

/// The `_v2` segment views (no ASOF JOIN, so they run on Spark: the last run at or before a
/// boundary comes from a window over runs and boundaries) give the rows of `_v1` on these
/// views: runs that start on a segment's start (21 and 61 in `seg-header`), inside one (24,
/// 64), end inside one (47, 69), segments before every run and after the last, views that
/// train one message only, a tie, and a view whose segments are unknown.
#[test]
fn segment_views_v2_without_asof_join_give_the_rows_of_v1() {
    let conn = loaded();
    load_unknown(&conn, "v2");
    let rows = |view: &str| -> Vec<String> {
        let mut stmt = conn.prepare(&format!("select cast(t as varchar) from {view} as t")).unwrap();
        let mut rows: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        rows.sort();
        rows
    };
    for (base, at_least) in
        [("sft_segment_supervision", 6 * 15), ("sft_segment_patterns", 15), ("sft_segment_deviations", 4)]
    {
        let v1 = rows(&format!("{base}_v1"));
        assert!(v1.len() >= at_least, "{base}_v1: {} rows", v1.len());
        assert_eq!(v1, rows(&format!("{base}_v2")), "{base}_v1 and {base}_v2 differ");
    }
}

/// A tokenizer given after the load runs the check that needed it (issue 27): views loaded
/// without `--tokenizer` say "not checked" for the vocabulary bound; `views segments
/// --tokenizer T` gives them T's vocabulary size (added tokens included, read here by the
/// tokenizers crate directly) and SHA-256, and the contract then passes the in-vocabulary
/// view and fails the one holding id 99999.
#[test]
fn tokenizer_after_load_runs_the_vocabulary_check() {
    let dir = std::env::temp_dir().join(format!("sphragis-vocab-after-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("views.jsonl");
    std::fs::write(
        &file,
        "{\"view_id\": \"in\", \"pool\": \"A\", \"instance_id\": \"i1\", \"input_ids\": [1, 2, 3], \"loss_mask\": [0, 1, 1]}\n\
         {\"view_id\": \"out\", \"pool\": \"A\", \"instance_id\": \"i2\", \"input_ids\": [1, 99999], \"loss_mask\": [0, 1]}\n",
    )
    .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::views::load(&conn, &file, &Default::default(), &mut |_| {}).unwrap();
    let vocab = |conn: &duckdb::Connection| -> Vec<(String, Option<bool>)> {
        let mut stmt =
            conn.prepare("select view_id, passed from sft_contract_v1 where check_name = 'vocab' order by 1").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
    };
    assert_eq!(vocab(&conn), [("in".to_string(), None), ("out".to_string(), None)]);
    let path = samples().join("chatml_tokenizer.json");
    let tokenizer = sphragis::ingest::read::TokenizerFile::read(&path).unwrap();
    let size = tokenizers::Tokenizer::from_file(&path).unwrap().get_vocab_size(true) as i64;
    assert!(size < 99999, "the sample tokenizer is small: {size}");
    let sha = tokenizer.sha256.clone();
    let segmenter = sphragis::sft::segments::Segmenter::new(tokenizer.tokenizer, tokenizer.sha256);
    sphragis::sft::segments::derive_missing(&conn, &segmenter).unwrap();
    assert_eq!(vocab(&conn), [("in".to_string(), Some(true)), ("out".to_string(), Some(false))]);
    let (n, recorded): (i64, String) = conn
        .query_row("select any_value(vocab_size), any_value(tokenizer_sha256) from sft_views", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((n, recorded), (size, sha));
    std::fs::remove_dir_all(&dir).unwrap();
}
