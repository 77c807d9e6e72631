//! ATIF trajectories and Inspect AI logs (issue 27, "trajectory shapes as published"), on
//! samples written for these tests (data-samples/sft/shapes/atif/ and inspect/; figures
//! counted by hand in data-samples/sft/shapes/README.md), and their refusals of malformed
//! input, each naming the file and the field, with nothing written.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/shapes").join(rel)
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sphragis-atif-inspect-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

fn load(paths: &[PathBuf]) -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for p in paths {
        sphragis::sft::store::load_trajectories(&conn, p, None).unwrap();
    }
    conn
}

/// Loads `bytes` as `name` into a fresh database: the error, after checking that nothing
/// was written.
fn refused(d: &Path, name: &str, bytes: &[u8]) -> String {
    let path = d.join(name);
    std::fs::write(&path, bytes).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let e = sphragis::sft::store::load_trajectories(&conn, &path, None).unwrap_err().to_string();
    assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["0"]], "{e}");
    assert_eq!(rows(&conn, "select count(*) from sft_messages"), [["0"]], "{e}");
    e
}

/// Messages per role of one instance, in the order system, user, assistant, tool.
fn per_role(conn: &duckdb::Connection, id: &str) -> Vec<Vec<String>> {
    rows(
        conn,
        &format!(
            "select role, count(*) from sft_messages where instance_id = '{id}' group by role \
             order by list_position(['system', 'user', 'assistant', 'tool'], role)"
        ),
    )
}

/// ATIF: a run (trajectory.json) and its continuation (trajectory.cont-1.json, whose steps
/// 1-3 are copied context). Each step gives its message, then one tool message per
/// observation result; copied steps give nothing, so the continuation counts only its new
/// steps; an `llm_call_count: 0` step is kept, not trained.
#[test]
fn atif_run_and_continuation_by_hand() {
    let conn = load(&[sample("atif/trajectory.json"), sample("atif/trajectory.cont-1.json")]);
    let run = "1c9d2a4e-7b3f-4e51-9a0c-2f8e6d5b4a31";
    let cont = "1c9d2a4e-7b3f-4e51-9a0c-2f8e6d5b4a31-cont-1";
    // the run has no trajectory_id: its session_id; the continuation shares the run's
    // session_id and has its own trajectory_id
    assert_eq!(
        rows(
            &conn,
            "select instance_id, source, n_messages, declared_resolved, tools is not null from sft_trajectories order by 1"
        ),
        [[run, "atif", "11", "", "true"], [cont, "atif", "6", "", "false"]]
    );
    assert_eq!(per_role(&conn, run), [["system", "1"], ["user", "1"], ["assistant", "5"], ["tool", "4"]]);
    // 7 steps of the continuation, 3 copied: user, 3 agent steps, 2 observations
    assert_eq!(per_role(&conn, cont), [["user", "1"], ["assistant", "3"], ["tool", "2"]]);
    assert_eq!(
        rows(
            &conn,
            &format!(
                "select msg_index, role, tool_call_id, tool_name, train from sft_messages where instance_id = '{cont}' order by 1"
            )
        ),
        [
            ["0", "user", "", "", ""],
            ["1", "assistant", "", "", ""],
            ["2", "tool", "call_6", "str_replace_editor", ""],
            ["3", "assistant", "", "", "false"],
            ["4", "tool", "harness_1", "bash", ""],
            ["5", "assistant", "", "", ""]
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, msg_index, call_index, call_id, name from sft_tool_calls order by 1, 2, 3"),
        [
            [run, "2", "0", "call_1", "bash"],
            [run, "4", "0", "call_2", "str_replace_editor"],
            [run, "6", "0", "call_3", "str_replace_editor"],
            [run, "8", "0", "call_4", "bash"],
            [run, "10", "0", "call_5", "submit"],
            [cont, "1", "0", "call_6", "str_replace_editor"],
            [cont, "3", "0", "harness_1", "bash"]
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, msg_index, command from sft_commands order by 1, 2"),
        [
            [run, "2", "ls src tests"],
            [run, "8", "python -m pytest -q tests/test_calc.py"],
            [cont, "3", "python -m pytest -q tests/test_calc.py"]
        ]
    );
    // reasoning_content is the thinking; a text-part observation is its text
    assert_eq!(
        rows(
            &conn,
            &format!(
                "select msg_index, reasoning from sft_messages where instance_id = '{run}' and reasoning is not null"
            )
        ),
        [["2", "Start by listing the source and test folders."]]
    );
    assert_eq!(
        rows(&conn, &format!("select text from sft_messages where instance_id = '{run}' and msg_index = 5")),
        [["     1\tdef add(a, b):\n     2\t    return a - b\n"]]
    );
    // the copied steps' call (call_1 in the continuation) is nowhere: counted once, in the run
    assert_eq!(rows(&conn, "select count(*) from sft_tool_calls where call_id = 'call_1'"), [["1"]]);
}

/// An ATIF document without any id: `<file stem>:<record index>`; JSON lines of documents
/// are records 0, 1, ...
#[test]
fn atif_without_ids_takes_the_file_stem() {
    let d = dir("ids");
    let doc = |msg: &str| {
        json!({"schema_version": "ATIF-v1.4", "agent": {"name": "a", "version": "1"},
               "steps": [{"step_id": 1, "source": "user", "message": msg}]})
        .to_string()
    };
    let path = d.join("runs.jsonl");
    std::fs::write(&path, format!("{}\n{}\n", doc("one"), doc("two"))).unwrap();
    let conn = load(std::slice::from_ref(&path));
    assert_eq!(
        rows(&conn, "select instance_id, n_messages from sft_trajectories order by 1"),
        [["runs:0", "1"], ["runs:1", "1"]]
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// Malformed ATIF is refused at the field, naming the file; nothing is written.
#[test]
fn atif_refusals_name_file_and_field() {
    let d = dir("atif-bad");
    let good: Value = serde_json::from_str(&std::fs::read_to_string(sample("atif/trajectory.json")).unwrap()).unwrap();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        edit(&mut v);
        serde_json::to_vec_pretty(&v).unwrap()
    };
    let cases: Vec<(Vec<u8>, &str, &str)> = vec![
        (with(&|v| v["schema_version"] = json!("ATIF-v2.0")), "`schema_version`", "unknown version \"ATIF-v2.0\""),
        (with(&|v| v["steps"][3]["step_id"] = json!(7)), "`steps[3].step_id`", "7 where 4 was expected"),
        (with(&|v| v["steps"][1]["source"] = json!("tool")), "`steps[1].source`", "unknown source \"tool\""),
        (
            with(&|v| v["steps"][1]["reasoning_content"] = json!("hm")),
            "`steps[1].reasoning_content`",
            "on a user step (ATIF: agent steps only)",
        ),
        (
            with(&|v| v["steps"][2]["observation"]["results"][0]["source_call_id"] = json!("call_9")),
            "`steps[2].observation.results[0].source_call_id`",
            "\"call_9\" names no tool call of this step",
        ),
        (
            with(&|v| {
                v["steps"][2]["tool_calls"][0].as_object_mut().unwrap().remove("arguments");
            }),
            "`steps[2].tool_calls[0].arguments`",
            "missing",
        ),
        (
            with(&|v| v["steps"][2]["tool_calls"][0]["arguments"] = json!("[1, 2]")),
            "`steps[2].tool_calls[0].arguments`",
            "expected a JSON object, got an array",
        ),
        (
            with(&|v| {
                v["steps"][4].as_object_mut().unwrap().remove("message");
            }),
            "`steps[4].message`",
            "missing",
        ),
        (
            with(&|v| {
                v["steps"][1]["message"] =
                    json!([{"type": "image", "source": {"media_type": "image/png", "path": "images/a.png"}}])
            }),
            "`steps[1].message[0].type`",
            "unsupported content part type \"image\"",
        ),
        // a copied step is checked too, before it is left out
        (
            with(&|v| {
                v["steps"][2]["is_copied_context"] = json!(true);
                v["steps"][2]["tool_calls"][0]["function_name"] = json!(5);
            }),
            "`steps[2].tool_calls[0].function_name`",
            "invalid type: integer `5`, expected a string",
        ),
    ];
    for (bytes, field, why) in cases {
        let e = refused(&d, "trajectory.json", &bytes);
        assert!(e.contains("trajectory.json") && e.contains(field) && e.contains(why), "{field}: {e}");
    }
    // in JSON lines, the record's line and index are named
    let line = good.to_string();
    let mut bad = good.clone();
    bad["steps"][0]["source"] = json!("robot");
    let e = refused(&d, "runs.jsonl", format!("{line}\n{bad}\n").as_bytes());
    assert!(e.contains("runs.jsonl:2") && e.contains("`[1].steps[0].source`"), "{e}");
    // every step copied: no message left, refused as such
    let mut copied = good.clone();
    for s in copied["steps"].as_array_mut().unwrap() {
        s["is_copied_context"] = json!(true);
    }
    let e = refused(&d, "copied.json", copied.to_string().as_bytes());
    assert!(e.contains("copied.json") && e.contains("has no message"), "{e}");
    std::fs::remove_dir_all(d).unwrap();
}

/// The Inspect sample run in full (data-samples/sft/shapes/inspect/make_samples.py,
/// FULL): 12 messages — system, user, then five assistant turns (ls, view, edit, test
/// run, submit), each answered by a tool message.
fn check_full_run(conn: &duckdb::Connection, id: &str) {
    assert_eq!(per_role(conn, id), [["system", "1"], ["user", "1"], ["assistant", "5"], ["tool", "5"]]);
    assert_eq!(
        rows(
            conn,
            &format!("select msg_index, call_id, name from sft_tool_calls where instance_id = '{id}' order by 1")
        ),
        [
            ["2", "toolu_01", "bash"],
            ["4", "toolu_02", "text_editor"],
            ["6", "toolu_03", "text_editor"],
            ["8", "toolu_04", "bash"],
            ["10", "toolu_05", "submit"]
        ]
    );
    // Inspect's bash tool takes `cmd`
    assert_eq!(
        rows(conn, &format!("select msg_index, command from sft_commands where instance_id = '{id}' order by 1")),
        [["2", "ls src tests"], ["8", "python -m pytest -q tests/test_calc.py"]]
    );
    // reasoning parts are the thinking (a redacted one: its summary), text parts the text;
    // a tool message without `function` takes its call's name
    assert_eq!(
        rows(
            conn,
            &format!(
                "select msg_index, text, reasoning, tool_name from sft_messages where instance_id = '{id}' \
                 and msg_index in (2, 4, 5, 6, 11) order by 1"
            )
        ),
        [
            ["2", "Let me look at the repository.", "List the folders first.", ""],
            ["4", "", "", ""],
            ["5", "     1\tdef add(a, b):\n     2\t    return a - b\n", "", "text_editor"],
            ["6", "The subtraction is the bug.", "The operator is wrong.", ""],
            ["11", "fixed add()", "", "submit"]
        ]
    );
}

/// An Inspect `.json` log of one sample run for two epochs: two attempts of one instance,
/// epoch 1 attempt 0 (key `calc__add-1`), epoch 2 attempt 1 (`calc__add-1#1`); epoch 1
/// scored 1.0 (resolved), epoch 2 scored 0.0 and "I" (not).
#[test]
fn inspect_json_log_by_hand() {
    let conn = load(&[sample("inspect/calc_epochs.json")]);
    assert_eq!(
        rows(
            &conn,
            "select instance_id, instance, attempt, source, family, n_messages, declared_resolved, record \
             from sft_trajectories order by 1"
        ),
        [
            ["calc__add-1", "calc__add-1", "0", "inspect-ai", "example__calc", "12", "true", "1"],
            ["calc__add-1#1", "calc__add-1", "1", "inspect-ai", "example__calc", "6", "false", "2"]
        ]
    );
    // one instance, two attempts, as the attempts view and check count them
    assert_eq!(
        rows(&conn, "select instance_id, attempts, resolved from sft_attempts_v1 order by 1"),
        [["calc__add-1", "2", "true"], ["calc__add-1#1", "2", "false"]]
    );
    check_full_run(&conn, "calc__add-1");
    let short = "calc__add-1#1";
    assert_eq!(per_role(&conn, short), [["system", "1"], ["user", "1"], ["assistant", "2"], ["tool", "2"]]);
    // a failed tool call with empty content: the error's message is the text
    assert_eq!(
        rows(
            &conn,
            &format!("select text, tool_call_id from sft_messages where instance_id = '{short}' and msg_index = 3")
        ),
        [["No such file: /testbed/calc.py", "toolu_11"]]
    );
    assert_eq!(rows(&conn, &format!("select count(*) from sft_commands where instance_id = '{short}'")), [["0"]]);
}

/// An Inspect `.eval` archive (zip, deflate) of two samples run for one epoch: ids as
/// given (an integer id as its digits); sample 7's scorers say "C" and "P": no verdict.
#[test]
fn inspect_eval_archive_by_hand() {
    let conn = load(&[sample("inspect/calc.eval")]);
    assert_eq!(
        rows(&conn, "select instance_id, n_messages, declared_resolved, record from sft_trajectories order by record"),
        [["calc__add-1", "12", "true", "1"], ["7", "6", "", "2"]]
    );
    check_full_run(&conn, "calc__add-1");
    // the archive's bytes are the input: hashed once, as read
    let bytes = std::fs::read(sample("inspect/calc.eval")).unwrap();
    assert_eq!(
        rows(&conn, "select kind, sha256 from ingest_log"),
        [["trajectories".to_string(), sphragis::hash::sha256_hex(&bytes)]]
    );
}

/// A zip archive of `members` (name, JSON) compressed with `method`.
fn archive(members: &[(&str, Value)], method: zip::CompressionMethod) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, doc) in members {
        w.start_file(*name, zip::write::SimpleFileOptions::default().compression_method(method)).unwrap();
        w.write_all(doc.to_string().as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The `calc__add-1` sample of the .eval sample, as JSON.
fn eval_sample() -> Value {
    let bytes = std::fs::read(sample("inspect/calc.eval")).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    serde_json::from_reader(zip.by_name("samples/calc__add-1_epoch_1.json").unwrap()).unwrap()
}

/// Newer Inspect writes zstd members; a run still being written has only
/// `_journal/start.json` (not read: the epoch is the sample's own).
#[test]
fn inspect_eval_zstd_and_journal_header() {
    let d = dir("zstd");
    let start = json!({"version": 2, "eval": {"task": "calc_fix", "config": {"epochs": 3}}, "plan": {}});
    let bytes = archive(
        &[("_journal/start.json", start), ("samples/calc__add-1_epoch_1.json", eval_sample())],
        zip::CompressionMethod::Zstd,
    );
    let path = d.join("running.eval");
    std::fs::write(&path, &bytes).unwrap();
    let conn = load(std::slice::from_ref(&path));
    assert_eq!(
        rows(&conn, "select instance_id, attempt, n_messages from sft_trajectories"),
        [["calc__add-1", "0", "12"]]
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// Malformed Inspect logs are refused at the field, naming the file (for an archive, the
/// member as a path inside it); nothing is written.
#[test]
fn inspect_refusals_name_file_and_field() {
    let d = dir("inspect-bad");
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(sample("inspect/calc_epochs.json")).unwrap()).unwrap();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut v = log.clone();
        edit(&mut v);
        serde_json::to_vec(&v).unwrap()
    };
    let cases: Vec<(Vec<u8>, &str, &str)> = vec![
        (
            with(&|v| v["samples"][1]["messages"][3]["role"] = json!("robot")),
            "`samples[1].messages[3].role`",
            "unknown role \"robot\"",
        ),
        (with(&|v| v["samples"][0]["id"] = json!(1.5)), "`samples[0].id`", "expected a string or an integer"),
        (
            with(&|v| {
                v["samples"][0].as_object_mut().unwrap().remove("epoch");
            }),
            "`samples[0].epoch`",
            "missing",
        ),
        (
            with(&|v| v["samples"][0]["messages"][2]["tool_calls"][0]["arguments"] = json!(null)),
            "`samples[0].messages[2].tool_calls[0].arguments`",
            "missing",
        ),
        (
            with(&|v| {
                v["samples"][0]["messages"][1]["content"] =
                    json!([{"type": "image", "image": "data:image/png;base64,AAAA"}])
            }),
            "`samples[0].messages[1].content[0].type`",
            "unsupported content part type \"image\"",
        ),
        (
            with(&|v| v["samples"][0]["messages"][1]["content"] = json!("attachment://0123abcd")),
            "`samples[0].messages[1].content`",
            "names attachment \"0123abcd\"",
        ),
        (
            with(&|v| {
                v.as_object_mut().unwrap().remove("samples");
            }),
            "`samples`",
            "the log holds no samples",
        ),
    ];
    for (bytes, field, why) in cases {
        let e = refused(&d, "log.json", &bytes);
        assert!(e.contains("log.json") && e.contains(field) && e.contains(why), "{field}: {e}");
    }
    // an attachment the sample holds is its text
    let held = with(&|v| {
        v["samples"][0]["messages"][1]["content"] = json!("attachment://0123abcd");
        v["samples"][0]["attachments"] = json!({"0123abcd": "the task, held apart"});
    });
    let path = d.join("held.json");
    std::fs::write(&path, held).unwrap();
    let conn = load(std::slice::from_ref(&path));
    assert_eq!(
        rows(&conn, "select text from sft_messages where msg_index = 1 order by instance_id limit 1"),
        [["the task, held apart"]]
    );
    // in an archive, the member is named as a path inside it
    let mut bad = eval_sample();
    bad["messages"][4]["tool_calls"][0]["function"] = json!(["x"]);
    let e = refused(
        &d,
        "run.eval",
        &archive(&[("samples/calc__add-1_epoch_1.json", bad)], zip::CompressionMethod::Deflated),
    );
    assert!(
        e.contains("run.eval/samples/calc__add-1_epoch_1.json") && e.contains("`messages[4].tool_calls[0].function`"),
        "{e}"
    );
    let e = refused(
        &d,
        "empty.eval",
        &archive(&[("header.json", json!({"version": 2, "eval": {"task": "t"}}))], zip::CompressionMethod::Deflated),
    );
    assert!(e.contains("empty.eval") && e.contains("no sample in the archive"), "{e}");
    let mut zipped = archive(&[("samples/a_epoch_1.json", json!({}))], zip::CompressionMethod::Deflated);
    zipped.truncate(zipped.len() - 30);
    let e = refused(&d, "cut.eval", &zipped);
    assert!(e.contains("cut.eval") && e.contains("not a readable .eval archive"), "{e}");
    let e = refused(&d, "notjson.eval", &{
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        w.start_file("samples/a_epoch_1.json", zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(b"{\"id\": 1,").unwrap();
        w.finish().unwrap().into_inner()
    });
    assert!(e.contains("notjson.eval/samples/a_epoch_1.json") && e.contains("not JSON"), "{e}");
    std::fs::remove_dir_all(d).unwrap();
}

/// Inspect's verdicts ([`declared_resolved`]): set only when every score gives one and
/// they agree.
#[test]
fn inspect_score_verdicts() {
    use sphragis::sft::formats::inspect::declared_resolved;
    let v = |values: Value| declared_resolved(values.as_array().unwrap().iter());
    assert_eq!(v(json!(["C"])), Some(true));
    assert_eq!(v(json!(["I", 0, false, 0.0])), Some(false));
    assert_eq!(v(json!([1, true, "C", 1.0])), Some(true));
    assert_eq!(v(json!(["C", "I"])), None);
    assert_eq!(v(json!(["C", "P"])), None);
    assert_eq!(v(json!([0.5])), None);
    assert_eq!(v(json!([null])), None);
    assert_eq!(v(json!([{"resolved": true}])), None);
    assert_eq!(v(json!([])), None);
}

/// Detection: the new formats do not take the files of the others, and a lone Inspect
/// sample (a member taken out of an archive) reads as one trajectory.
#[test]
fn detection_keeps_the_other_formats() {
    let d = dir("detect");
    let lone = d.join("calc__add-1_epoch_2.json");
    let mut s = eval_sample();
    s["epoch"] = json!(2);
    std::fs::write(&lone, s.to_string()).unwrap();
    let conn = load(&[lone, sample("sharegpt_agent.jsonl"), sample("swift_agent.jsonl")]);
    assert_eq!(
        rows(&conn, "select instance_id, source from sft_trajectories order by 1"),
        [
            ["calc__add-1#1", "inspect-ai"],
            ["sharegpt_agent:0", "llamafactory-sharegpt"],
            ["sharegpt_agent:1", "llamafactory-sharegpt"],
            ["swift_agent:0", "ms-swift"]
        ]
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// Epochs number the attempts, not the order of the samples in the log; a later file's
/// epochs keep their numbers when they come after the attempts loaded (a lone epoch-2
/// sample), else move up after them (a second log of the same task); a log holding one
/// epoch of a sample twice is refused, naming both rows.
#[test]
fn inspect_epochs_are_attempts() {
    let d = dir("epochs");
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(sample("inspect/calc_epochs.json")).unwrap()).unwrap();
    let write = |name: &str, v: &Value| {
        let path = d.join(name);
        std::fs::write(&path, v.to_string()).unwrap();
        path
    };
    // epoch 2 first in the file: still attempt 1
    let mut reversed = log.clone();
    reversed["samples"].as_array_mut().unwrap().reverse();
    let conn = load(&[write("reversed.json", &reversed)]);
    assert_eq!(
        rows(&conn, "select instance_id, attempt, record, n_messages from sft_trajectories order by 1"),
        [["calc__add-1", "0", "2", "12"], ["calc__add-1#1", "1", "1", "6"]]
    );
    // calc.eval holds epoch 1 (attempt 0); a lone epoch-2 sample from another file comes
    // after it and keeps attempt 1 (its user text differs: not the same messages)
    let mut lone = eval_sample();
    lone["epoch"] = json!(2);
    lone["messages"][1]["content"] = json!("add() must return the sum.");
    let conn = load(&[sample("inspect/calc.eval"), write("calc__add-1_epoch_2.json", &lone)]);
    assert_eq!(
        rows(&conn, "select instance_id, instance, attempt from sft_trajectories order by instance, attempt"),
        [["7", "7", "0"], ["calc__add-1", "calc__add-1", "0"], ["calc__add-1#1", "calc__add-1", "1"]]
    );
    // a second log of the task (epochs 1 and 2, other user text) after the first: attempts
    // 0 and 1 are taken, so its epochs are attempts 2 and 3
    let mut again = log.clone();
    for s in again["samples"].as_array_mut().unwrap() {
        s["messages"][1]["content"] = json!("add() must return the sum.");
    }
    let conn = load(&[sample("inspect/calc_epochs.json"), write("again.json", &again)]);
    assert_eq!(
        rows(&conn, "select instance_id, attempt, n_messages from sft_trajectories order by attempt"),
        [
            ["calc__add-1", "0", "12"],
            ["calc__add-1#1", "1", "6"],
            ["calc__add-1#2", "2", "12"],
            ["calc__add-1#3", "3", "6"]
        ]
    );
    assert_eq!(rows(&conn, "select count(distinct instance) from sft_trajectories"), [["1"]]);
    // the same log again under another name: its epochs' messages are loaded already
    let e = load_err(
        &conn,
        &write("copy.json", &{
            let mut v = log.clone();
            v["status"] = json!("success ");
            v
        }),
    );
    assert!(e.contains("copy.json") && e.contains("`[0].instance_id`") && e.contains("already loaded from"), "{e}");
    // one epoch of a sample twice in one log
    let mut twice = log.clone();
    twice["samples"][1]["epoch"] = json!(1);
    let e = refused(&d, "twice.json", &serde_json::to_vec(&twice).unwrap());
    assert!(
        e.contains("twice.json")
            && e.contains("`[1].instance_id`")
            && e.contains("which row 0 of this file already takes"),
        "{e}"
    );
    // epochs count from 1
    let mut zero = log.clone();
    zero["samples"][0]["epoch"] = json!(0);
    let e = refused(&d, "zero.json", &serde_json::to_vec(&zero).unwrap());
    assert!(e.contains("zero.json") && e.contains("`samples[0].epoch`") && e.contains("from 1"), "{e}");
    std::fs::remove_dir_all(d).unwrap();
}

/// The error of loading `path` into `conn`.
fn load_err(conn: &duckdb::Connection, path: &Path) -> String {
    sphragis::sft::store::load_trajectories(conn, path, None).unwrap_err().to_string()
}

/// Inspect's editor tool `text_editor` (migration 0022) is an edit, as str_replace_editor
/// is, and a read with command "view": the full run (message 4 views, message 6
/// replaces) has one edit; the short run's one call (message 2, a `str_replace` whose
/// tool answers with an error) is an edit too. `sft_messages.writes` says the same.
#[test]
fn inspect_text_editor_is_an_edit() {
    let conn = load(&[sample("inspect/calc.eval")]);
    assert_eq!(
        rows(&conn, "select instance_id, msg_index, name, command, tool from sft_tool_call_classes_v1 order by 1, 2"),
        [
            ["7", "2", "text_editor", "str_replace", "edit"],
            ["7", "4", "submit", "", "submit"],
            ["calc__add-1", "2", "bash", "", "bash"],
            ["calc__add-1", "4", "text_editor", "view", "read"],
            ["calc__add-1", "6", "text_editor", "str_replace", "edit"],
            ["calc__add-1", "8", "bash", "", "bash"],
            ["calc__add-1", "10", "submit", "", "submit"]
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, msg_index from sft_messages where writes order by 1, 2"),
        [["7", "2"], ["calc__add-1", "6"]]
    );
}
