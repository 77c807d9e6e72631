//! The ingest anomaly policy (issue 15, `src/ingest/anomaly.rs`): what Python's
//! `json.dumps` and SWE-bench observations write is accepted and recorded in
//! `ingest_anomalies_v1` by file, line, field and kind — or refused with the reason in
//! the field's terms, leaving the database as it was. Small inputs written here; every
//! expected row is counted by hand from the input.

use duckdb::Connection;
use sphragis::ingest::LoadOutcome;
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sphragis-anomalies-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `(line, field, kind, detail, occurrences)` of the view, in its order.
fn anomalies(conn: &Connection) -> Vec<(Option<i64>, String, String, String, i64)> {
    let mut stmt = conn.prepare("select line, field, kind, detail, occurrences from ingest_anomalies_v1").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn row(line: Option<i64>, field: &str, kind: &str, detail: &str, n: i64) -> (Option<i64>, String, String, String, i64) {
    (line, field.to_string(), kind.to_string(), detail.to_string(), n)
}

/// A mini-swe-agent file (1.x) whose lines are numbered for the expectations: line 4
/// holds the observation.
fn mini(observation: &str, extra: &str) -> String {
    format!(
        "{{\"trajectory_format\": \"mini-swe-agent-1\", \"instance_id\": \"demo__x-1\", \"info\": {{{extra}}},\n\
         \"messages\": [{{\"role\": \"system\", \"content\": \"s\"}},\n\
         {{\"role\": \"assistant\", \"content\": \"run\\n```bash\\nls\\n```\"}},\n\
         {{\"role\": \"user\", \"content\": \"{observation}\"}}]}}\n"
    )
}

#[test]
fn lone_surrogate_in_tool_output_is_stored_as_replacement_and_its_escape_recorded() {
    let d = dir("surrogate");
    // a broken emoji (high half only) and a whole one (a pair: not an anomaly)
    let p = write(&d, "s.traj.json", &mini(r"<returncode>0</returncode> ok \ud83d and \ud83d\ude00 \ud83d", ""));
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    assert!(matches!(sphragis::sft::store::load_trajectories(&conn, &p, None).unwrap(), LoadOutcome::Loaded(_)));
    let text: String = conn.query_row("select text from sft_messages where msg_index = 2", [], |r| r.get(0)).unwrap();
    assert_eq!(text, "<returncode>0</returncode> ok \u{fffd} and \u{1f600} \u{fffd}");
    assert_eq!(anomalies(&conn), [row(Some(4), "messages[2].content", "lone_surrogate", r"\ud83d", 2)]);
    let path: String = conn.query_row("select path from ingest_anomalies_v1", [], |r| r.get(0)).unwrap();
    assert!(path.ends_with("s.traj.json"), "{path}");
}

#[test]
fn nan_and_infinity_in_fields_read_as_missing_are_null_and_recorded() {
    let d = dir("nan");
    // info.cost is not read; `resolved` is read as "no verdict" when missing
    let p = write(&d, "n.traj.json", &mini("done", "\"cost\": NaN, \"limit\": -Infinity"));
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &p, None).unwrap();
    assert_eq!(
        anomalies(&conn),
        [row(Some(1), "info.cost", "nan", "NaN", 1), row(Some(1), "info.limit", "infinity", "-Infinity", 1)]
    );
    let rows = String::from(
        "[{\"instance_id\": \"r__a-1\", \"resolved\": NaN, \"tools\": [], \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]},\n\
         {\"instance_id\": \"r__a-2\", \"resolved\": true, \"tools\": [], \"messages\": [{\"role\": \"user\", \"content\": \"y\"}]}]\n",
    );
    let p = write(&d, "rows.json", &rows);
    sphragis::sft::store::load_trajectories(&conn, &p, None).unwrap();
    assert_eq!(
        count(
            &conn,
            "select count(*) from sft_trajectories where instance_id = 'r__a-1' and declared_resolved is null"
        ),
        1
    );
    assert_eq!(anomalies(&conn)[2], row(Some(1), "[0].resolved", "nan", "NaN", 1));
}

#[test]
fn nan_loss_weight_is_refused_as_a_number_field_and_nothing_is_written() {
    let d = dir("loss-weight");
    let text = concat!(
        r#"{"messages": [{"role": "user", "content": [{"type": "text", "value": "hi \ud83d"}]}]}"#,
        "\n",
        r#"{"messages": [{"role": "assistant", "content": [{"type": "text", "value": "a"}], "loss_weight": NaN}]}"#,
        "\n"
    );
    let p = write(&d, "lf.jsonl", text);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = format!("{:#}", sphragis::sft::store::load_trajectories(&conn, &p, None).unwrap_err());
    assert!(err.contains("lf.jsonl:2: field `[1].messages[0].loss_weight`: NaN in a number field"), "{err}");
    assert_eq!(count(&conn, "select count(*) from ingest_anomaly_records"), 0, "the refused load recorded nothing");
    assert_eq!(count(&conn, "select count(*) from ingest_log"), 0);
    // the same file without the NaN loads, and the first line's surrogate is recorded
    let p = write(&d, "lf_ok.jsonl", &text.replace("NaN", "0.0"));
    sphragis::sft::store::load_trajectories(&conn, &p, None).unwrap();
    assert_eq!(anomalies(&conn), [row(Some(1), "[0].messages[0].content[0].value", "lone_surrogate", r"\ud83d", 1)]);
}

#[test]
fn nul_and_control_chars_in_observations_are_kept_and_recorded() {
    let d = dir("controls");
    let p = write(&d, "c.traj.json", &mini(r"a\u0000b \u001b[31mred\u001b[0m \b", ""));
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &p, None).unwrap();
    let text: String = conn.query_row("select text from sft_messages where msg_index = 2", [], |r| r.get(0)).unwrap();
    assert_eq!(text, "a\u{0}b \u{1b}[31mred\u{1b}[0m \u{8}");
    assert_eq!(
        anomalies(&conn),
        [
            row(Some(4), "messages[2].content", "control_char", r"\u001b", 3),
            row(Some(4), "messages[2].content", "nul", r"\u0000", 1)
        ]
    );
}

#[test]
fn lone_surrogate_in_tool_call_arguments_is_recorded_at_the_arguments_field() {
    let d = dir("arguments");
    let rows = r#"[{"instance_id": "r__b-1", "tools": [], "messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"echo \\ud83d\"}"}}]}]}]"#;
    let p = write(&d, "args.json", rows);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &p, None).unwrap();
    let command: String = conn.query_row("select command from sft_commands", [], |r| r.get(0)).unwrap();
    assert_eq!(command, "echo \u{fffd}");
    assert_eq!(
        anomalies(&conn),
        [row(Some(1), "[0].messages[0].tool_calls[0].function.arguments", "lone_surrogate", r"\ud83d", 1)]
    );
}

#[test]
fn lone_surrogate_in_a_review_comment_is_accepted_and_recorded_on_its_line() {
    let d = dir("review");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/review/examples.jsonl");
    let text = std::fs::read_to_string(samples).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[1] = lines[1].replacen("\"message\": \"", "\"message\": \"\\ud83d", 1);
    let p = write(&d, "examples.jsonl", &(lines.join("\n") + "\n"));
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::review::load::load(&conn, sphragis::ingest::InputKind::Examples, &p, None, &mut |_| {}).unwrap();
    assert_eq!(anomalies(&conn), [row(Some(2), "comments[0].message", "lone_surrogate", r"\ud83d", 1)]);
}

#[test]
fn nan_in_an_integer_field_is_refused_naming_the_field() {
    let d = dir("integer");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/review/examples.jsonl");
    let text = std::fs::read_to_string(samples).unwrap();
    let p = write(&d, "examples.jsonl", &text.replacen("\"patch_set\": 2", "\"patch_set\": NaN", 1));
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = format!(
        "{:#}",
        sphragis::review::load::load(&conn, sphragis::ingest::InputKind::Examples, &p, None, &mut |_| {}).unwrap_err()
    );
    assert!(err.contains("examples.jsonl:1: field `patch_set`: NaN in an integer field"), "{err}");
    assert_eq!(count(&conn, "select count(*) from ingest_anomaly_records"), 0);
}

#[test]
fn anomalies_report_is_registered() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    assert_eq!(count(&conn, "select count(*) from ingest_anomalies_v1"), 0);
    assert!(sphragis::report::REPORTS.iter().any(|r| r.name == "anomalies" && r.view == "ingest_anomalies_v1"));
}

/// The view loader parses on several threads; what they accept under the anomaly policy
/// is recorded all the same (it was lost: the collector is the loading thread's).
#[test]
fn view_load_records_anomalies_found_on_its_parser_threads() {
    let d = dir("views");
    let line = |i: usize, extra: &str| {
        format!(
            "{{\"view_id\":\"v{i}\",\"instance_id\":\"o__r-{i}\",\"input_ids\":[1,2],\"loss_mask\":[0,1]{extra}}}\n"
        )
    };
    let mut text = String::new();
    for i in 1..=40 {
        text.push_str(&match i {
            3 => line(i, ", \"meta\": {\"score\": NaN}"),
            37 => line(i, r#", "meta": {"note": "cut \ud83d here"}"#),
            _ => line(i, ""),
        });
    }
    let p = write(&d, "v.jsonl", &text);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = sphragis::sft::views::ViewOptions { pool: Some("A".into()), ..Default::default() };
    sphragis::sft::views::load(&conn, &p, &options, &mut |_| {}).unwrap();
    assert_eq!(count(&conn, "select count(*) from sft_views"), 40);
    assert_eq!(
        anomalies(&conn),
        [row(Some(3), "meta.score", "nan", "NaN", 1), row(Some(37), "meta.note", "lone_surrogate", r"\ud83d", 1)]
    );
}

/// A NaN in a text field the loader reads (a view's `view_id` or `pool`) passed for an
/// absent value: the view got a made-up id or the `--pool` default, with only an anomaly
/// row to show for it. It is refused like a NaN in an integer field; in a field the
/// loader ignores it is still accepted and recorded.
#[test]
fn nan_in_a_text_field_is_refused_naming_the_field() {
    let d = dir("text");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = sphragis::sft::views::ViewOptions { pool: Some("A".into()), ..Default::default() };
    for (field, words) in
        [("view_id", "a text or integer field"), ("pool", "a text field"), ("ledger", "an object field")]
    {
        let p = write(
            &d,
            &format!("{field}.jsonl"),
            &format!("{{\"{field}\": NaN, \"instance_id\": \"o__r-1\", \"input_ids\": [1], \"loss_mask\": [1]}}\n"),
        );
        let err = format!("{:#}", sphragis::sft::views::load(&conn, &p, &options, &mut |_| {}).unwrap_err());
        assert!(err.contains(&format!("{field}.jsonl:1: field `{field}`: NaN in {words}")), "{err}");
    }
    assert_eq!(count(&conn, "select count(*) from sft_views"), 0);
    // an ignored field keeps the policy: accepted, recorded
    let p = write(
        &d,
        "ok.jsonl",
        "{\"score\": NaN, \"instance_id\": \"o__r-1\", \"input_ids\": [1], \"loss_mask\": [1]}\n",
    );
    sphragis::sft::views::load(&conn, &p, &options, &mut |_| {}).unwrap();
    assert_eq!(anomalies(&conn), [row(Some(1), "score", "nan", "NaN", 1)]);
}

/// Ids that differ only in a lone surrogate escape would be stored alike (U+FFFD) and
/// name one view, instance or example: a lone surrogate in an id field is refused on its
/// line, at its field, and nothing is written. Two instances `o__r-1\ud83d` and
/// `o__r-1\ud83e` used to load as one instance (and fail `same_tokens` together).
#[test]
fn lone_surrogate_in_an_id_is_refused_so_two_ids_never_merge() {
    let d = dir("surrogate-ids");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = sphragis::sft::views::ViewOptions { pool: Some("A".into()), ..Default::default() };
    let view = |fields: &str| format!("{{{fields}, \"input_ids\": [1], \"loss_mask\": [1]}}\n");
    for (fields, field, escape) in [
        (r#""view_id": "t\ud83d", "instance_id": "o__r-1""#, "view_id", r"\ud83d"),
        (r#""instance_id": "o__r-1\ud83e""#, "instance_id", r"\ud83e"),
        (r#""instance_id": "o__r-1", "pool": "\udc00B""#, "pool", r"\udc00"),
        (r#""instance_id": "o__r-1", "family": "o__r\ud83d""#, "family", r"\ud83d"),
    ] {
        let text = view(r#""instance_id": "o__r-2""#) + &view(fields);
        let p = write(&d, "ids.jsonl", &text);
        let err = format!("{:#}", sphragis::sft::views::load(&conn, &p, &options, &mut |_| {}).unwrap_err());
        assert!(
            err.contains(&format!(
                "ids.jsonl:2: field `{field}`: {escape} is a lone surrogate escape (half of a UTF-16 pair): an id must \
                 be exact text"
            )),
            "{err}"
        );
        assert_eq!(count(&conn, "select count(*) from sft_views"), 0);
    }
    // the same escape elsewhere in a view is accepted and recorded, as before
    let origin = write(&d, "origin.jsonl", &view(r#""instance_id": "o__r-1", "origin": {"note": "x\ud83d"}"#));
    sphragis::sft::views::load(&conn, &origin, &options, &mut |_| {}).unwrap();
    assert_eq!(anomalies(&conn), [row(Some(1), "origin.note", "lone_surrogate", r"\ud83d", 1)]);
    // review examples: the example id and a comment's id, author and reply target
    let example = |comment: &str| {
        format!(
            "{{\"example_id\":\"e1\",\"org\":\"o\",\"hunk\":\"a\\n\",\"target\":\"b\\n\",\"comments\":[{{\"comment_id\":\"c0\",\"message\":\"m\"}},{comment}]}}\n"
        )
    };
    for (comment, field) in [
        (r#"{"comment_id":"c\ud83d","message":"m"}"#, "comments[1].comment_id"),
        (r#"{"comment_id":"c1","author_id":"ann\ud83d","message":"m"}"#, "comments[1].author_id"),
        (r#"{"comment_id":"c1","in_reply_to":"c\ud83d","message":"m"}"#, "comments[1].in_reply_to"),
    ] {
        let p = write(&d, "examples.jsonl", &example(comment));
        let err = format!(
            "{:#}",
            sphragis::review::load::load(&conn, sphragis::ingest::InputKind::Examples, &p, None, &mut |_| {})
                .unwrap_err()
        );
        assert!(err.contains(&format!("examples.jsonl:1: field `{field}`: \\ud83d is a lone surrogate")), "{err}");
    }
    let p = write(&d, "examples.jsonl", &example(r#"{"comment_id":"c1","message":"m"}"#).replace("e1", r"e\udfff"));
    let err = format!(
        "{:#}",
        sphragis::review::load::load(&conn, sphragis::ingest::InputKind::Examples, &p, None, &mut |_| {}).unwrap_err()
    );
    assert!(err.contains(r"examples.jsonl:1: field `example_id`: \udfff is a lone surrogate"), "{err}");
    assert_eq!(count(&conn, "select count(*) from review_examples"), 0);
}

/// A trajectory's `instance_id` is an id too: a lone surrogate escape in it is refused on
/// its line for the formats that read it (mini-swe-agent, one object; nebius, rows of an
/// array), and the same escape in a message is accepted as before.
#[test]
fn lone_surrogate_in_a_trajectory_instance_id_is_refused() {
    let d = dir("surrogate-instance");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let mini_file = write(&d, "m.traj.json", &mini("done", "").replace("demo__x-1", r"demo__x-1\ud83d"));
    let err = format!("{:#}", sphragis::sft::store::load_trajectories(&conn, &mini_file, None).unwrap_err());
    assert!(
        err.contains(r"m.traj.json:1: field `instance_id`: \ud83d is a lone surrogate escape (half of a UTF-16 pair)"),
        "{err}"
    );
    let row = |id: &str| {
        format!(
            "{{\"instance_id\": \"{id}\", \"model_name\": \"m\", \"target\": true, \"trajectory\": [\
             {{\"role\": \"system\", \"system_prompt\": \"s\"}}, {{\"role\": \"ai\", \"text\": \"t\"}}]}}"
        )
    };
    let nebius = write(&d, "n.json", &format!("[\n{},\n{}\n]\n", row("o__r-1"), row(r"o__r-1\udc00")));
    let err = format!("{:#}", sphragis::sft::store::load_trajectories(&conn, &nebius, None).unwrap_err());
    assert!(err.contains(r"n.json:3: field `[1].instance_id`: \udc00 is a lone surrogate escape"), "{err}");
    // the repository a row names is the family the isolation checks group by
    let with_repo = row("o__r-2").replacen("\"model_name\"", "\"repo\": \"o/r\\ud83d\", \"model_name\"", 1);
    let nebius = write(&d, "r.json", &format!("[\n{}\n]\n", with_repo));
    let err = format!("{:#}", sphragis::sft::store::load_trajectories(&conn, &nebius, None).unwrap_err());
    assert!(err.contains(r"r.json:2: field `[0].repo`: \ud83d is a lone surrogate escape"), "{err}");
    assert_eq!(count(&conn, "select count(*) from sft_trajectories"), 0);
    let fine = write(&d, "f.traj.json", &mini(r"ok \ud83d", ""));
    sphragis::sft::store::load_trajectories(&conn, &fine, None).unwrap();
    assert_eq!(count(&conn, "select count(*) from sft_trajectories"), 1);
}

/// The review JSON-lines loaders parse on several threads too
/// (`ingest::parallel::parse_lines`): the anomalies their threads accept are recorded on
/// the load (line 3 and line 700 of 800, in different chunks of 256 lines).
#[test]
fn review_load_records_anomalies_found_on_its_parser_threads() {
    let d = dir("review-threads");
    let line = |i: usize, message: &str| {
        format!(
            "{{\"example_id\":\"e{i}\",\"org\":\"o\",\"hunk\":\"a\\n\",\"target\":\"b\\n\",\"comments\":[{{\"comment_id\":\"c\",\"message\":\"{message}\"}}]}}\n"
        )
    };
    let text: String = (1..=800)
        .map(|i| match i {
            3 => line(i, r"use \ud83d here"),
            700 => line(i, r"bell \u0007 rang"),
            _ => line(i, "fine"),
        })
        .collect();
    let p = write(&d, "examples.jsonl", &text);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::review::load::load(&conn, sphragis::ingest::InputKind::Examples, &p, None, &mut |_| {}).unwrap();
    assert_eq!(count(&conn, "select count(*) from review_examples"), 800);
    assert_eq!(
        anomalies(&conn),
        [
            row(Some(3), "comments[0].message", "lone_surrogate", r"\ud83d", 1),
            row(Some(700), "comments[0].message", "control_char", r"\u0007", 1)
        ]
    );
}
