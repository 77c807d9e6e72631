//! Inspect AI logs as evaluation runs (issue 27): `load run` reads a `.eval` archive and a
//! `.json` log (data-samples/sft/shapes/inspect/, written by make_samples.py; figures
//! worked out by hand from the files, data-samples/sft/shapes/README.md):
//!
//! * `calc.eval`, one epoch: `calc__add-1` scored "C" → resolved; `7` scored "C" and "P"
//!   → no verdict, no outcome (left out of the graded denominator). Both end with a
//!   `submit` call (natural finish); `calc__add-1` makes 2 assistant turns (ls, view)
//!   before its edit and passes its test run after it; `7` edits in its first turn and
//!   runs no test.
//! * `calc_epochs.json`, two epochs of `calc__add-1`: epoch 1 (score 1.0, resolved) in
//!   the run as named, epoch 2 (scores 0.0 and "I", unresolved) in `<run>@epoch2`, a
//!   repeat of the same model and harness: 1 of 2 repeats resolves it, pass@1 = 1 − 1/2
//!   = 0.5, pass@2 = 1 − C(1,2)/C(2,2) = 1, pass^2 = C(1,2)/C(2,2) = 0.

use serde_json::{Value, json};
use sphragis::eval::load::{RunSpec, expand};
use sphragis::ingest::LoadOutcome;
use std::io::Write;
use std::path::{Path, PathBuf};

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/shapes/inspect").join(rel)
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sphragis-inspect-runs-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

fn spec(name: &str, continues: Option<&str>) -> RunSpec {
    RunSpec {
        name: name.into(),
        model: "example/example-model-1".into(),
        harness: Some("inspect_ai 0.3.140".into()),
        continues: continues.map(str::to_string),
        runaway_turns: 3,
    }
}

/// Loads `paths` into the run `spec` as `load run` does.
fn load_run(conn: &duckdb::Connection, spec: &RunSpec, paths: &[PathBuf]) -> anyhow::Result<Vec<LoadOutcome>> {
    Ok(sphragis::eval::load::load_paths(conn, spec, paths)?.0)
}

fn fresh() -> sphragis::db::Database {
    sphragis::db::open(Path::new(":memory:")).unwrap()
}

/// Loads `bytes` as `name` into a fresh database's run `calc`: the error, after checking
/// that nothing was written.
fn refused(d: &Path, name: &str, bytes: &[u8]) -> String {
    let path = d.join(name);
    std::fs::write(&path, bytes).unwrap();
    let conn = fresh();
    let e = format!("{:#}", load_run(&conn, &spec("calc", None), &[path]).unwrap_err());
    for table in ["eval_run_specs", "eval_trajectories", "eval_outcomes", "ingest_log"] {
        assert_eq!(rows(&conn, &format!("select count(*) from {table}")), [["0"]], "{table}: {e}");
    }
    e
}

/// A zip archive of `members` (name, JSON), deflated.
fn archive(members: &[(&str, Value)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, doc) in members {
        w.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(doc.to_string().as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The member `name` of `calc.eval`, parsed.
fn calc_member(name: &str) -> Value {
    let bytes = std::fs::read(sample("calc.eval")).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    serde_json::from_reader(zip.by_name(name).unwrap()).unwrap()
}

fn epochs_log() -> Value {
    serde_json::from_str(&std::fs::read_to_string(sample("calc_epochs.json")).unwrap()).unwrap()
}

/// The `.eval` archive as a run of one epoch: one resolved instance, one without a verdict.
#[test]
fn eval_archive_is_a_run_by_hand() {
    let conn = fresh();
    let loaded = load_run(&conn, &spec("calc", None), &[sample("calc.eval")]).unwrap();
    assert!(matches!(&loaded[..], [LoadOutcome::Loaded(f)] if f.rows == 2), "{loaded:?}");
    assert_eq!(
        rows(
            &conn,
            "select run, instance_id, source, exit_status, finish, assistant_turns, turns_before_first_edit, \
             pass_after_last_edit, declared_resolved, record from eval_trajectories order by record"
        ),
        [
            ["calc", "calc__add-1", "inspect-ai", "", "natural", "5", "2", "true", "true", "1"],
            ["calc", "7", "inspect-ai", "", "natural", "2", "0", "false", "", "2"]
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, outcome, graded, excluded from eval_instances_v2 order by 1"),
        [["7", "", "false", "no_outcome"], ["calc__add-1", "resolved", "true", ""]]
    );
    assert_eq!(
        rows(
            &conn,
            "select run, instances, trajectories, graded, resolved, resolve_rate, no_outcome from eval_runs_v3"
        ),
        [["calc", "2", "2", "1", "1", "1", "1"]]
    );
    // the archive's bytes are the input, bound to the run
    let bytes = std::fs::read(sample("calc.eval")).unwrap();
    assert_eq!(
        rows(&conn, "select kind, sha256, json_extract_string(options, '$.run') from ingest_log"),
        [["run".to_string(), sphragis::hash::sha256_hex(&bytes), "calc".to_string()]]
    );
    // a folder holding it is searched for .eval files
    let (files, skipped) = expand(&[sample("")]).unwrap();
    let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["calc.eval", "calc_epochs.json"]);
    assert!(skipped.iter().any(|s| s.path.ends_with("make_samples.py")), "{skipped:?}");
}

/// The `.json` log of two epochs: epoch 1 in the run as named, epoch 2 in `<run>@epoch2`,
/// two independent repeats of one model and harness.
#[test]
fn json_log_epochs_are_repeats_by_hand() {
    let conn = fresh();
    load_run(&conn, &spec("calc", None), &[sample("calc_epochs.json")]).unwrap();
    assert_eq!(
        rows(&conn, "select run, model, harness, continues from eval_run_specs order by 1"),
        [
            ["calc", "example/example-model-1", "inspect_ai 0.3.140", ""],
            ["calc@epoch2", "example/example-model-1", "inspect_ai 0.3.140", ""]
        ]
    );
    assert_eq!(
        rows(
            &conn,
            "select run, instance_id, finish, assistant_turns, turns_before_first_edit, declared_resolved, record \
             from eval_trajectories order by run"
        ),
        [
            ["calc", "calc__add-1", "natural", "5", "2", "true", "1"],
            ["calc@epoch2", "calc__add-1", "natural", "2", "0", "false", "2"]
        ]
    );
    assert_eq!(
        rows(&conn, "select run, instance_id, status, shape from eval_outcomes order by run"),
        [["calc", "calc__add-1", "resolved", "trajectory"], ["calc@epoch2", "calc__add-1", "unresolved", "trajectory"]]
    );
    assert_eq!(
        rows(&conn, "select run, instances, graded, resolved, resolve_rate from eval_runs_v3 order by run"),
        [["calc", "1", "1", "1", "1"], ["calc@epoch2", "1", "1", "0", "0"]]
    );
    assert_eq!(
        rows(&conn, "select instance_id, runs, resolved_by, flips from eval_repeat_instances_v3"),
        [["calc__add-1", "2", "1", "true"]]
    );
    assert_eq!(
        rows(&conn, "select k, n_runs, instances, pass_at_k, pass_hat_k, consistency from eval_pass_k_v1 order by k"),
        [["1", "2", "1", "0.5", "0.5", "0"], ["2", "2", "1", "1", "0", "0"]]
    );
    // one file, bound to the run as named
    assert_eq!(rows(&conn, "select json_extract_string(options, '$.run') from ingest_log"), [["calc"]]);
    // the same bytes again: skipped
    let again = load_run(&conn, &spec("calc", None), &[sample("calc_epochs.json")]).unwrap();
    assert!(matches!(&again[..], [LoadOutcome::AlreadyLoaded { .. }]), "{again:?}");
}

/// A sample that failed (its `error`) is an evaluator error of its epoch's run, its
/// message the reason; a limit that stopped a sample is its exit status (a limit finish).
#[test]
fn sample_errors_and_limits() {
    let d = dir("errors");
    let mut log = epochs_log();
    log["samples"][1]["scores"] = json!(null);
    log["samples"][1]["error"] = json!({"message": "RuntimeError: sandbox exited", "traceback": "..."});
    log["samples"][0]["limit"] = json!({"type": "token", "limit": 4096});
    let path = d.join("log.json");
    std::fs::write(&path, log.to_string()).unwrap();
    let conn = fresh();
    load_run(&conn, &spec("calc", None), &[path]).unwrap();
    assert_eq!(
        rows(&conn, "select run, exit_status, finish, token_limit from eval_trajectories order by run"),
        [["calc", "token limit", "limit", "true"], ["calc@epoch2", "", "natural", "false"]]
    );
    assert_eq!(
        rows(
            &conn,
            "select run, outcome, graded, attempted, excluded, failure_reason from eval_instances_v2 order by run"
        ),
        [
            ["calc", "resolved", "true", "true", "", ""],
            ["calc@epoch2", "error", "false", "true", "error", "RuntimeError: sandbox exited"]
        ]
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// Refused, naming the file and the field, with nothing written: an archive without
/// `header.json`, a sample without scores (in a log and in an archive), two samples of
/// one epoch; and a log of several epochs with `--continues`, or whose later epoch's run
/// is loaded with another model.
#[test]
fn refusals_name_file_and_field() {
    let d = dir("bad");
    let header = calc_member("header.json");
    let one = calc_member("samples/calc__add-1_epoch_1.json");
    // a header field of the wrong type, named in its member
    let mut odd = header.clone();
    odd["results"]["completed_samples"] = json!(-1);
    let e =
        refused(&d, "odd.eval", &archive(&[("samples/calc__add-1_epoch_1.json", one.clone()), ("header.json", odd)]));
    assert!(e.contains("odd.eval/header.json: field `results.completed_samples`: invalid value: -1"), "{e}");
    let mut log = epochs_log();
    log["status"] = json!(3);
    let e = refused(&d, "odd.json", &serde_json::to_vec(&log).unwrap());
    assert!(e.contains("odd.json: field `status`: invalid type"), "{e}");
    // found by a fresh tester: a header twice (the last one won: a cancelled run passed),
    // a count written NaN or Infinity (kept as "not stated"), a header that is no object, an
    // error that is a string (its message dropped), zero epochs
    let cancelled = json!({"status": "cancelled", "results": {"total_samples": 2, "completed_samples": 1}});
    // the zip crate writes no name twice: the second header is renamed in the bytes (the
    // names in the local and central headers; the checksums are of the contents)
    let bytes = archive(&[
        ("samples/calc__add-1_epoch_1.json", one.clone()),
        ("header.json", cancelled),
        ("header.jsoX", header.clone()),
    ]);
    let mut twice = bytes.clone();
    let at: Vec<usize> = bytes.windows(11).enumerate().filter(|(_, w)| *w == b"header.jsoX").map(|(i, _)| i).collect();
    assert_eq!(at.len(), 2, "the name in the local and the central header");
    for i in at {
        twice[i + 10] = b'n';
    }
    let e = refused(&d, "twice.eval", &twice);
    assert!(e.contains("twice.eval: the archive holds two members of one name"), "{e}");
    let text = header.to_string().replace("\"total_samples\":2", "\"total_samples\":NaN");
    assert!(text.contains("NaN"), "{text}");
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.start_file("samples/calc__add-1_epoch_1.json", zip::write::SimpleFileOptions::default()).unwrap();
    w.write_all(one.to_string().as_bytes()).unwrap();
    w.start_file("header.json", zip::write::SimpleFileOptions::default()).unwrap();
    w.write_all(text.as_bytes()).unwrap();
    let e = refused(&d, "nan.eval", &w.finish().unwrap().into_inner());
    assert!(e.contains("nan.eval/header.json: field `results.total_samples`: invalid value: NaN"), "{e}");
    let text = serde_json::to_string(&epochs_log())
        .unwrap()
        .replace("\"completed_samples\":2", "\"completed_samples\":Infinity");
    let e = refused(&d, "inf.json", text.as_bytes());
    assert!(e.contains("inf.json: field `results.completed_samples`: invalid value: Infinity"), "{e}");
    let e = refused(
        &d,
        "list.eval",
        &archive(&[("samples/calc__add-1_epoch_1.json", one.clone()), ("header.json", json!([1, 2]))]),
    );
    assert!(e.contains("list.eval/header.json: invalid type: an array, expected an object"), "{e}");
    let mut log = epochs_log();
    log["error"] = json!("sandbox died");
    let e = refused(&d, "said.json", &serde_json::to_vec(&log).unwrap());
    assert!(e.contains("said.json: field `error`: invalid type: a string"), "{e}");
    let mut log = epochs_log();
    log["eval"]["config"]["epochs"] = json!(0);
    let e = refused(&d, "none.json", &serde_json::to_vec(&log).unwrap());
    assert!(e.contains("none.json: field `eval.config.epochs`: invalid value: 0"), "{e}");
    // no header.json: a run still being written
    let e = refused(
        &d,
        "running.eval",
        &archive(&[("_journal/start.json", header.clone()), ("samples/calc__add-1_epoch_1.json", one.clone())]),
    );
    assert!(e.contains("running.eval: field `header.json`: missing"), "{e}");
    // a sample without scores, in an archive and in a log
    let mut unscored = one.clone();
    unscored["scores"] = json!({});
    let e = refused(&d, "unscored.eval", &archive(&[("header.json", header), ("samples/a_epoch_1.json", unscored)]));
    assert!(
        e.contains("unscored.eval/samples/a_epoch_1.json: field `scores`: missing") && e.contains("--no-score"),
        "{e}"
    );
    let mut log = epochs_log();
    log["samples"][1].as_object_mut().unwrap().remove("scores");
    let e = refused(&d, "log.json", &serde_json::to_vec(&log).unwrap());
    assert!(e.contains("log.json: field `samples[1].scores`: missing"), "{e}");
    // two samples of one epoch: one run would hold the instance twice
    let mut twice = epochs_log();
    twice["samples"][1]["epoch"] = json!(1);
    let e = refused(&d, "twice.json", &serde_json::to_vec(&twice).unwrap());
    assert!(e.contains("twice.json: field `[1]`: instance calc__add-1 repeats row 0"), "{e}");
    // the SFT reader's refusals hold: a message refused at its field
    let mut bad = epochs_log();
    bad["samples"][0]["messages"][3]["role"] = json!("robot");
    let e = refused(&d, "robot.json", &serde_json::to_vec(&bad).unwrap());
    assert!(e.contains("robot.json: field `samples[0].messages[3].role`: unknown role"), "{e}");
    // several epochs cannot continue one run
    let conn = fresh();
    load_run(&conn, &spec("base", None), &[sample("calc.eval")]).unwrap();
    let e = format!("{:#}", load_run(&conn, &spec("calc", Some("base")), &[sample("calc_epochs.json")]).unwrap_err());
    assert!(e.contains("calc_epochs.json: the log runs several epochs") && e.contains("--continues base"), "{e}");
    // the later epoch's run exists with another model (loaded from a copy of calc.eval:
    // a file belongs to one run)
    let other = RunSpec { model: "other".into(), ..spec("calc@epoch2", None) };
    let copy = d.join("copy.eval");
    std::fs::copy(sample("calc.eval"), &copy).unwrap();
    load_run(&conn, &other, &[copy]).unwrap();
    let e = format!("{:#}", load_run(&conn, &spec("calc", None), &[sample("calc_epochs.json")]).unwrap_err());
    assert!(e.contains("epochs after the first go to run calc@epoch2") && e.contains("model \"other\""), "{e}");
    assert_eq!(rows(&conn, "select run from eval_run_specs order by 1"), [["base"], ["calc@epoch2"]]);
    std::fs::remove_dir_all(d).unwrap();
}

/// Fault kind: an unfinished run loaded as if whole. Inspect writes its log however the
/// run ends, and only `status` `success` says every sample ran: a `cancelled` log (here 1
/// of 2 samples completed, the archive holding that one) or an `error` log (the run raised)
/// holds the samples finished before it stopped, and every figure of the run is of part of
/// its dataset. Both load, their headers are kept per run (both epochs' runs of the `.json`
/// log), and check `run_log_unfinished` fails them; the finished `calc.eval` passes.
#[test]
fn unfinished_run_log_fails_run_log_unfinished() {
    let d = dir("unfinished");
    let mut header = calc_member("header.json");
    header["status"] = json!("cancelled");
    header["results"]["completed_samples"] = json!(1);
    let cancelled = d.join("cancelled.eval");
    let one = calc_member("samples/calc__add-1_epoch_1.json");
    std::fs::write(&cancelled, archive(&[("samples/calc__add-1_epoch_1.json", one), ("header.json", header)])).unwrap();
    let mut log = epochs_log();
    log["status"] = json!("error");
    log["error"] = json!({"message": "RuntimeError: sandbox exited", "traceback": "Traceback ..."});
    let raised = d.join("raised.json");
    std::fs::write(&raised, serde_json::to_vec(&log).unwrap()).unwrap();
    let conn = fresh();
    load_run(&conn, &spec("cut", None), &[cancelled]).unwrap();
    load_run(&conn, &spec("raised", None), &[raised]).unwrap();
    load_run(&conn, &spec("whole", None), &[sample("calc.eval")]).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select run, status, dataset_samples, epochs, total_samples, completed_samples, error_message \
             from eval_log_headers order by run"
        ),
        [
            ["cut", "cancelled", "2", "1", "2", "1", ""],
            ["raised", "error", "2", "2", "2", "2", "RuntimeError: sandbox exited"],
            ["raised@epoch2", "error", "2", "2", "2", "2", "RuntimeError: sandbox exited"],
            ["whole", "success", "2", "1", "2", "2", ""],
        ]
    );
    assert_eq!(
        rows(
            &conn,
            "select scope, status, tested, failing, detail from check_findings_v1 \
             where check_name = 'run_log_unfinished' order by scope"
        ),
        [
            ["run=cut", "fail", "1", "1", "cancelled: 1 of 2 samples completed"],
            ["run=raised", "fail", "1", "1", "error: 2 of 2 samples completed (RuntimeError: sandbox exited)"],
            ["run=raised@epoch2", "fail", "1", "1", "error: 2 of 2 samples completed (RuntimeError: sandbox exited)"],
            ["run=whole", "pass", "1", "0", ""],
        ]
    );
    std::fs::remove_dir_all(d).unwrap();
}
