//! Trajectory shapes as the field publishes them (issue 27), on small rows written here:
//! SWE-smith's three splits of one trajectory (tool, xml, ticks) give the same figures;
//! `messages` as a JSON string in JSON lines (Hugging Face datasets); OpenHands without
//! native function calling; a row pretty-printed over several lines.
//!
//! The trajectory, in every split: system, user (the task), then four assistant turns with
//! an observation after each of the first three —
//!   1. view /testbed/a.py (a read), 2. str_replace in it (an edit),
//!   3. `python -m pytest -q` (a shell command), 4. submit.
//!
//! By hand: 4 tool calls, classes read 1, edit 1, bash 1, submit 1; one shell command.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sphragis-shapes-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

const VIEW: &str = r#"{"command": "view", "path": "/testbed/a.py"}"#;
const EDIT: &str =
    r#"{"command": "str_replace", "path": "/testbed/a.py", "old_str": "return a - b", "new_str": "return a + b"}"#;
const TEST: &str = r#"{"command": "python -m pytest -q"}"#;

fn head() -> Vec<Value> {
    vec![
        json!({"role": "system", "content": "You are a helpful assistant that can interact with a computer to solve tasks."}),
        json!({"role": "user", "content": "<uploaded_files>/testbed</uploaded_files> add() returns the difference"}),
    ]
}

fn observations() -> [&'static str; 3] {
    [
        "OBSERVATION:\n     1\tdef add(a, b):\n     2\t    return a - b\n",
        "OBSERVATION:\nThe file /testbed/a.py has been edited.",
        "OBSERVATION:\n1 passed in 0.01s",
    ]
}

/// The tool split: OpenAI tool calls answered by tool messages.
fn tool_split() -> Value {
    let mut m = head();
    let calls = [("str_replace_editor", VIEW), ("str_replace_editor", EDIT), ("bash", TEST), ("submit", "{}")];
    for (k, (name, args)) in calls.iter().enumerate() {
        let id = format!("call_{k}");
        m.push(json!({"role": "assistant", "content": "Next step.", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": args}}]}));
        if k < 3 {
            m.push(json!({"role": "tool", "content": observations()[k], "tool_call_id": id}));
        }
    }
    json!({"instance_id": "owner__repo.abcdef12.func_pm_op__x", "traj_id": "t1", "resolved": true, "messages": m})
}

/// The xml split: `<function=...>` text, observations as user messages.
fn xml_split() -> Value {
    let mut m = head();
    let calls = [
        "<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/testbed/a.py</parameter>\n</function>",
        "<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>/testbed/a.py</parameter>\n<parameter=old_str>return a - b</parameter>\n<parameter=new_str>return a + b</parameter>\n</function>",
        "<function=bash>\n<parameter=command>python -m pytest -q</parameter>\n</function>",
        "<function=submit>\n</function>",
    ];
    for (k, call) in calls.iter().enumerate() {
        m.push(json!({"role": "assistant", "content": format!("Next step.\n\n{call}")}));
        if k < 3 {
            m.push(json!({"role": "user", "content": observations()[k]}));
        }
    }
    json!({"instance_id": "owner__repo.abcdef12.func_pm_op__x", "traj_id": "t1", "resolved": true, "messages": m})
}

/// The ticks split: SWE-agent's thought-action text, the command in the last fenced block.
fn ticks_split() -> Value {
    let mut m = head();
    let commands = [
        "str_replace_editor view /testbed/a.py",
        "str_replace_editor str_replace /testbed/a.py   --old_str 'return a - b' --new_str 'return a + b'",
        "python -m pytest -q",
        "submit",
    ];
    for (k, c) in commands.iter().enumerate() {
        m.push(json!({"role": "assistant", "content": format!("Next step.\n\n```\n{c}\n```")}));
        if k < 3 {
            m.push(json!({"role": "user", "content": observations()[k]}));
        }
    }
    json!({"instance_id": "owner__repo.abcdef12.func_pm_op__x", "traj_id": "t1", "resolved": true, "messages": m})
}

/// Loads `rows` as a JSON array file into a new database.
fn load(d: &Path, name: &str, text: &str) -> sphragis::db::Database {
    let path = d.join(name);
    std::fs::write(&path, text).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &path, None).unwrap();
    conn
}

#[test]
fn swe_smith_splits_give_the_same_figures() {
    let d = dir("splits");
    let figures = |row: Value, name: &str| {
        let conn = load(&d, name, &serde_json::to_string_pretty(&json!([row])).unwrap());
        let mut out = rows(
            &conn,
            "select source, tool_calls_bash, tool_calls_read, tool_calls_edit, tool_calls_search, tool_calls_submit, \
             tool_calls_other from sft_instances_v2",
        );
        out.extend(rows(&conn, "select command from sft_commands order by msg_index"));
        out.extend(rows(
            &conn,
            "select arguments from sft_tool_calls where name = 'str_replace_editor' order by msg_index",
        ));
        out
    };
    let want: Vec<Vec<String>> = vec![
        ["swe-smith", "1", "1", "1", "0", "1", "0"].map(String::from).to_vec(),
        vec!["python -m pytest -q".to_string()],
        vec![serde_json::from_str::<Value>(VIEW).unwrap().to_string()],
        vec![serde_json::from_str::<Value>(EDIT).unwrap().to_string()],
    ];
    assert_eq!(figures(tool_split(), "tool.json"), want, "tool split");
    assert_eq!(figures(xml_split(), "xml.json"), want, "xml split");
    assert_eq!(figures(ticks_split(), "ticks.json"), want, "ticks split");
    std::fs::remove_dir_all(d).unwrap();
}

/// `datasets.to_json` writes JSON lines, and SWE-smith's Hugging Face rows hold `messages`
/// as a JSON string: two such rows read as two trajectories; a bad message inside the
/// string is named at its field and line.
#[test]
fn messages_as_a_json_string_in_json_lines() {
    let d = dir("hf");
    let stringified = |mut row: Value, id: &str| {
        let m = row["messages"].to_string();
        row["messages"] = Value::String(m);
        row["instance_id"] = Value::String(id.into());
        row.to_string()
    };
    let text =
        format!("{}\n{}\n", stringified(xml_split(), "a__b.abcdef12.x"), stringified(ticks_split(), "a__b.abcdef12.y"));
    let conn = load(&d, "train.jsonl", &text);
    assert_eq!(
        rows(
            &conn,
            "select instance_id, source, n_messages, (select count(*) from sft_tool_calls c where c.instance_id = t.instance_id) from sft_trajectories t order by 1"
        ),
        [["a__b.abcdef12.x", "swe-smith", "9", "4"], ["a__b.abcdef12.y", "swe-smith", "9", "4"]]
    );
    let mut bad = ticks_split();
    bad["messages"][2]["role"] = json!("robot");
    let text = format!("{}\n{}\n", stringified(xml_split(), "a__b.abcdef12.x"), stringified(bad, "a__b.abcdef12.z"));
    let path = d.join("bad.jsonl");
    std::fs::write(&path, text).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let e = sphragis::sft::store::load_trajectories(&conn, &path, None).unwrap_err().to_string();
    assert!(e.contains("bad.jsonl:2") && e.contains("field `[1].messages[2].role`") && e.contains("robot"), "{e}");
    assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["0"]]);
    std::fs::remove_dir_all(d).unwrap();
}

/// OpenHands without native function calling: the calls are `<function=...>` text and the
/// results user messages `EXECUTION RESULT of [name]:`. Before, such a row counted no tool
/// call and was cut off; now: 2 calls (execute_bash `ls`, finish), one shell command, and
/// the last turn submits (`finish`), so the run's finish is natural.
#[test]
fn openhands_non_native_calls_are_tool_calls() {
    let d = dir("openhands");
    let row = json!({"instance_id": "django__django-11099", "resolved": false, "messages": [
        {"role": "system", "content": "You are OpenHands agent."},
        {"role": "user", "content": "Fix the validator."},
        {"role": "assistant", "content": "Let me look.\n<function=execute_bash>\n<parameter=command>ls</parameter>\n</function>"},
        {"role": "user", "content": "EXECUTION RESULT of [execute_bash]:\nAUTHORS django\n[Command finished with exit code 0]"},
        {"role": "assistant", "content": "Done.\n<function=finish>\n</function>"}
    ]});
    let path = d.join("rows.json");
    std::fs::write(&path, json!([row]).to_string()).unwrap();
    let read = sphragis::sft::trajectories::detect_and_read(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(read.len(), 1);
    let t = &read[0];
    assert_eq!(t.source, "openhands");
    let calls: Vec<(&str, String)> = t
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.to_string())))
        .collect();
    assert_eq!(calls, [("execute_bash", r#"{"command":"ls"}"#.to_string()), ("finish", "{}".to_string())]);
    assert_eq!(sphragis::eval::symptoms::finish(None, t).as_str(), "natural");
    let conn = load(&d, "rows2.json", &json!([row]).to_string());
    assert_eq!(rows(&conn, "select command from sft_commands"), [["ls"]]);
    // OpenHands' own tool names tell it apart before any result (an unclosed call, no
    // EXECUTION RESULT yet): never labelled swe-smith
    let early = json!({"instance_id": "demo__a-1", "messages": [
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": "<function=execute_bash>\n<parameter=command>ls</parameter>\n"}]});
    let path = d.join("early.jsonl");
    std::fs::write(&path, format!("{early}\n")).unwrap();
    let read = sphragis::sft::trajectories::detect_and_read(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(read[0].source, "openhands");
    std::fs::remove_dir_all(d).unwrap();
}

/// One row written as a pretty-printed JSON object (several lines) is one row; a row
/// format read it line by line before and said "not JSON".
#[test]
fn one_pretty_printed_row_is_one_row() {
    let d = dir("pretty");
    let conn = load(&d, "row.json", &serde_json::to_string_pretty(&xml_split()).unwrap());
    assert_eq!(rows(&conn, "select source, n_messages from sft_trajectories"), [["swe-smith", "9"]]);
    std::fs::remove_dir_all(d).unwrap();
}

/// LLaMA-Factory sharegpt rows (data-samples/sft/shapes/sharegpt_agent.jsonl, figures in its
/// README): no instance id in the format, so `<file stem>:<row>`; `system` is message 0;
/// `function_call` turns are assistant messages with their calls (a list = parallel calls),
/// `observation` turns tool messages.
#[test]
fn sharegpt_rows_by_hand() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/shapes/sharegpt_agent.jsonl");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &path, None).unwrap();
    assert_eq!(
        rows(&conn, "select instance_id, source, n_messages, tools is not null from sft_trajectories order by 1"),
        [
            ["sharegpt_agent:0", "llamafactory-sharegpt", "7", "true"],
            ["sharegpt_agent:1", "llamafactory-sharegpt", "4", "false"]
        ]
    );
    assert_eq!(
        rows(&conn, "select msg_index, role from sft_messages where instance_id = 'sharegpt_agent:0' order by 1"),
        [
            ["0", "system"],
            ["1", "user"],
            ["2", "assistant"],
            ["3", "tool"],
            ["4", "assistant"],
            ["5", "tool"],
            ["6", "assistant"]
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, msg_index, call_index, name from sft_tool_calls order by 1, 2, 3"),
        [
            ["sharegpt_agent:0", "2", "0", "bash"],
            ["sharegpt_agent:0", "4", "0", "str_replace_editor"],
            ["sharegpt_agent:0", "4", "1", "bash"],
            ["sharegpt_agent:1", "1", "0", "bash"]
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, command, git_history from sft_commands order by 1, msg_index, call_index"),
        [
            ["sharegpt_agent:0", "cat src/a.py", "false"],
            ["sharegpt_agent:0", "python -m pytest -q", "false"],
            ["sharegpt_agent:1", "git log --oneline -3 -- src/b.py", "true"]
        ]
    );
    // an unknown tag is named at its row and field, nothing written
    let d = dir("sharegpt");
    let bad = d.join("bad.jsonl");
    std::fs::write(&bad, "{\"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]}\n{\"conversations\": [{\"from\": \"bot\", \"value\": \"x\"}]}\n").unwrap();
    let fresh = sphragis::db::open(Path::new(":memory:")).unwrap();
    let e = sphragis::sft::store::load_trajectories(&fresh, &bad, None).unwrap_err().to_string();
    assert!(
        e.contains("bad.jsonl:2") && e.contains("`[1].conversations[0].from`") && e.contains("unknown tag \"bot\""),
        "{e}"
    );
    // a turn without its value is named, not "not a recognized format"
    std::fs::write(&bad, "{\"conversations\": [{\"from\": \"human\"}]}\n").unwrap();
    let e = sphragis::sft::store::load_trajectories(&fresh, &bad, None).unwrap_err().to_string();
    assert!(e.contains("`[0].conversations[0].value`: missing"), "{e}");
    // a first system turn replaces the row's system text (one system message, not two)
    std::fs::write(
        &bad,
        "{\"system\": \"column\", \"conversations\": [{\"from\": \"system\", \"value\": \"turn\"}, {\"from\": \"human\", \"value\": \"hi\"}]}\n",
    )
    .unwrap();
    let read = sphragis::sft::trajectories::detect_and_read(&bad, &std::fs::read_to_string(&bad).unwrap()).unwrap();
    let texts: Vec<&str> = read[0].messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["turn", "hi"]);
    std::fs::remove_dir_all(d).unwrap();
}

/// ms-swift agent rows (data-samples/sft/shapes/swift_agent.jsonl, figures in its README):
/// `tool_call` messages are assistant calls, `tool_response` tool messages, and a message's
/// `loss` is its training flag (`sft_messages.train`), the producer's mask intent.
#[test]
fn ms_swift_rows_and_loss_flags_by_hand() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/shapes/swift_agent.jsonl");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &path, None).unwrap();
    assert_eq!(
        rows(&conn, "select instance_id, source, n_messages from sft_trajectories"),
        [["swift_agent:0", "ms-swift", "8"]]
    );
    assert_eq!(
        rows(&conn, "select msg_index, role, train from sft_messages order by 1"),
        [
            ["0", "system", ""],
            ["1", "user", ""],
            ["2", "assistant", "false"],
            ["3", "assistant", ""],
            ["4", "tool", ""],
            ["5", "assistant", ""],
            ["6", "tool", ""],
            ["7", "assistant", "true"]
        ]
    );
    assert_eq!(
        rows(&conn, "select msg_index, command, git_history from sft_commands order by 1"),
        [["3", "python -m pytest -q tests/test_a.py", "false"], ["5", "git log --oneline -2 -- src/a.py", "true"]]
    );
    // a loss that is not a boolean, and an unknown role, are named at their fields
    let d = dir("swift");
    for (body, field) in [
        (
            r#"{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y", "loss": "no"}]}"#,
            "`[0].messages[1].loss`",
        ),
        (
            r#"{"messages": [{"role": "tool_call", "content": "{\"name\": \"bash\"}"}, {"role": "robot", "content": "y"}]}"#,
            "`[0].messages[1].role`",
        ),
        (r#"{"messages": [{"role": "tool_call", "content": "not json"}]}"#, "`[0].messages[0].content`"),
    ] {
        let bad = d.join("bad.jsonl");
        std::fs::write(&bad, format!("{body}\n")).unwrap();
        let fresh = sphragis::db::open(Path::new(":memory:")).unwrap();
        let e = sphragis::sft::store::load_trajectories(&fresh, &bad, None).unwrap_err().to_string();
        assert!(e.contains("bad.jsonl:1") && e.contains(field), "{e}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Hostile input D11: a trajectory with `instance_id: ""` was stored (family null), and
/// `views build` then wrote views the views loader refuses. Refused at load, naming the
/// file and the field; nothing is written.
#[test]
fn empty_trajectory_instance_id_is_refused_not_stored() {
    let d = dir("empty-id");
    for id in ["", "  "] {
        let row = json!({"instance_id": id, "info": {}, "messages": [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": "done"}]});
        let path = d.join("e.traj.json");
        std::fs::write(&path, row.to_string()).unwrap();
        let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
        let err = sphragis::sft::store::load_trajectories(&conn, &path, None).unwrap_err().to_string();
        assert_eq!(err, format!("{}: field `[0].instance_id`: must not be empty", path.display()));
        assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["0"]]);
    }
}

/// A key given twice in one object of a trajectory record (hostile input D10):
/// `{"role": "user", "role": "assistant"}` read as the last value would make a user turn
/// an assistant turn, and which one the writer meant is unknowable. Refused naming the
/// file, the line and the key, in JSON lines, a JSON array of rows and one whole
/// document; nothing is loaded. The same key in two objects is not a repeat.
#[test]
fn duplicate_keys_in_trajectory_records_are_refused() {
    let d = dir("duplicate-keys");
    let good = xml_split();
    let line = |v: &Value| serde_json::to_string(v).unwrap();
    let twice = line(&good).replacen(r#""role":"user""#, r#""role":"user","role":"assistant""#, 1);
    assert_ne!(twice, line(&good), "the row has a user message to repeat a key in");
    let cases = [
        (
            "rows.jsonl",
            format!("{}\n{twice}\n", line(&good).replace("a__b.abcdef12.x", "a__b.abcdef12.w")),
            "rows.jsonl:2",
        ),
        (
            "rows.json",
            format!("[\n{},\n{twice}\n]\n", line(&good).replace("a__b.abcdef12.x", "a__b.abcdef12.w")),
            "rows.json:3",
        ),
        ("one.json", twice.replacen(r#""role":"user","#, "\n\"role\":\"user\",\n", 1), "one.json:3"),
    ];
    for (name, text, at) in cases {
        let path = d.join(name);
        std::fs::write(&path, &text).unwrap();
        let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
        let e = format!("{:#}", sphragis::sft::store::load_trajectories(&conn, &path, None).unwrap_err());
        assert!(e.contains(at) && e.contains("duplicate key \"role\" in one object"), "{name}: {e}");
        assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["0"]], "{name}");
    }
    // the good row alone loads: every message has its own "role"
    let conn = load(&d, "good.jsonl", &format!("{}\n", line(&good)));
    assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["1"]]);
    std::fs::remove_dir_all(d).unwrap();
}

/// The repeated-key reader gives serde_json's own values on every sample trajectory file
/// (differential: `unique_keys::from_str` against `serde_json::from_str::<Value>`), for
/// the whole document and for each JSON line.
#[test]
fn unique_key_reader_equals_serde_json_on_the_sample_trajectories() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples");
    let mut files = Vec::new();
    let mut stack = vec![root.join("sft"), root.join("runs")];
    while let Some(p) = stack.pop() {
        for entry in std::fs::read_dir(&p).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json" || e == "jsonl") {
                files.push(path);
            }
        }
    }
    let mut compared = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut pieces = vec![text.to_string()];
        pieces.extend(text.lines().filter(|l| !l.trim().is_empty()).map(str::to_string));
        for piece in pieces {
            match (serde_json::from_str::<Value>(&piece), sphragis::ingest::unique_keys::from_str(&piece)) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{}", path.display());
                    compared += 1;
                }
                (Err(_), Err(e)) => assert!(!sphragis::ingest::unique_keys::is_repeated_key(&e), "{}", path.display()),
                (a, b) => panic!("{}: serde_json {:?}, unique_keys {:?}", path.display(), a.err(), b.err()),
            }
        }
    }
    assert!(compared > 100, "{compared} values compared in {} files", files.len());
}
