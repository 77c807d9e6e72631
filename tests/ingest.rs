//! The input layer end to end: every loader reads a file once through `ingest::Input`,
//! skips a UTF-8 byte-order mark, hashes the bytes it parsed (BOM included), and reads no
//! file it was not given.

use sphragis::hash::sha256_hex;
use sphragis::ingest::read::TokenizerFile;
use sphragis::ingest::{InputKind, LoadOutcome};
use sphragis::review::load::load;
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples")
}

/// A fresh temporary folder for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-ingest-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `content` with a UTF-8 byte-order mark in front to `dir/name`.
fn with_bom(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend_from_slice(content);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn loaded(outcome: anyhow::Result<LoadOutcome>) -> sphragis::ingest::LoadedFile {
    match outcome.unwrap() {
        LoadOutcome::Loaded(f) => f,
        other => panic!("not loaded: {other:?}"),
    }
}

/// The file was bound to the SHA-256 of all its bytes, byte-order mark included.
fn assert_bound(f: &sphragis::ingest::LoadedFile, path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert!(bytes.starts_with(b"\xef\xbb\xbf"));
    assert_eq!((f.bytes, f.sha256.as_str()), (bytes.len() as i64, sha256_hex(&bytes).as_str()));
}

fn count(conn: &duckdb::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn review(kind: InputKind, file: &str, content: &[u8]) -> (sphragis::db::Database, sphragis::ingest::LoadedFile) {
    let dir = temp_dir(file);
    let path = with_bom(&dir, file, content);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let f = loaded(load(&conn, kind, &path, None, &mut |_| {}));
    assert_bound(&f, &path);
    std::fs::remove_dir_all(dir).unwrap();
    (conn, f)
}

const R4R_ROW: &str = r#"{"message":"use the constant","comment_id":"c1","target":"    return LIMIT;\n","code_snippet":"<|startfocus|>\n    return -1;\n<|endfocus|>\n","code_file_name":"a","written_on":"2017-03-07 22:19:27","project_name":"android_","base_patch_number":4}"#;

#[test]
fn examples_accept_a_utf8_bom() {
    let text = std::fs::read(samples().join("review/examples.jsonl")).unwrap();
    let (conn, f) = review(InputKind::Examples, "examples.jsonl", &text);
    assert_eq!(f.rows, 18);
    assert_eq!(count(&conn, "select count(*) from review_examples"), 18);
}

#[test]
fn review4repair_array_accepts_a_utf8_bom() {
    // the bug: an array saved with a BOM was read as JSON lines, "expected a JSON object"
    let text = format!("[{R4R_ROW},\n{}]", R4R_ROW.replace("\"c1\"", "\"c2\""));
    let (conn, f) = review(InputKind::Review4Repair, "test_100.json", text.as_bytes());
    assert_eq!(f.rows, 2);
    assert_eq!(count(&conn, "select count(*) from review_examples where org = 'android'"), 2);
}

#[test]
fn tufano2021_accepts_a_utf8_bom() {
    let (conn, f) =
        review(InputKind::Tufano2021, "test.csv", b",comment,before,before_marked,after\n0,why,a,b,c\n1,why,d,e,f\n");
    assert_eq!(f.rows, 2);
    assert_eq!(count(&conn, "select count(*) from review_examples where example_id = 'tufano2021:test:1'"), 1);
}

#[test]
fn gerrit_query_accepts_a_utf8_bom() {
    let change = r#"{"project":"p","number":7,"url":"https://gerrit.wikimedia.org/r/7","comments":[{"timestamp":100,"reviewer":{"username":"u"},"message":"Patch Set 1: looks odd"}],"patchSets":[{"number":1,"createdOn":90}]}"#;
    let text = format!("{change}\n{{\"type\":\"stats\",\"rowCount\":1}}\n");
    let (conn, f) = review(InputKind::GerritQuery, "query.json", text.as_bytes());
    assert_eq!(f.rows, 1);
    assert_eq!(count(&conn, "select count(*) from review_examples where example_id = 'wikimedia:7:1'"), 1);
}

#[test]
fn orgs_accept_a_utf8_bom() {
    let text = br#"{"orgs": {"qt": {"service_accounts": ["qt-ci"]}}}"#;
    let (conn, _) = review(InputKind::Orgs, "orgs.json", text);
    assert_eq!(count(&conn, "select count(*) from org_service_accounts where org = 'qt'"), 1);
}

#[test]
fn labels_accept_a_utf8_bom() {
    let text = std::fs::read(samples().join("review/labels.jsonl")).unwrap();
    let (conn, f) = review(InputKind::Labels, "labels.jsonl", &text);
    assert_eq!(f.rows, 13);
    assert_eq!(count(&conn, "select count(*) from label_items"), 13);
}

#[test]
fn views_accept_a_utf8_bom() {
    let dir = temp_dir("views");
    let path = with_bom(&dir, "views.jsonl", &std::fs::read(samples().join("sft/views.jsonl")).unwrap());
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let f = loaded(sphragis::sft::views::load(&conn, &path, &Default::default(), &mut |_| {}));
    assert_bound(&f, &path);
    assert_eq!(f.rows, 14, "the 14 lines of data-samples/sft/views.jsonl");
    assert_eq!(count(&conn, "select count(*) from sft_views where view_id = 'a-good'"), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn trajectories_accept_a_utf8_bom_in_every_container() {
    let dir = temp_dir("trajectories");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let audit = samples().join("sft/audit");
    // one object (mini-swe-agent), JSON lines (LLaMA-Factory), a JSON array (OpenHands rows)
    let object = with_bom(&dir, "demo__env-1.traj.json", &std::fs::read(audit.join("demo__env-1.traj.json")).unwrap());
    let lines = with_bom(&dir, "thinking.jsonl", &std::fs::read(audit.join("thinking.jsonl")).unwrap());
    let array = with_bom(
        &dir,
        "rows.json",
        br#"[{"instance_id": "a__b-1", "resolved": true, "tools": [], "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}]"#,
    );
    for (path, source) in [(&object, "mini-swe-agent"), (&lines, "llamafactory"), (&array, "openhands")] {
        let f = loaded(sphragis::sft::store::load_trajectories(&conn, path, None));
        assert_bound(&f, path);
        assert_eq!(
            count(
                &conn,
                &format!("select count(*) from sft_trajectories where file_id = {} and source = '{source}'", f.file_id)
            ),
            1
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn outcomes_accept_a_utf8_bom() {
    let dir = temp_dir("outcomes");
    let report = std::fs::read(samples().join("sft/audit/logs/demo__fix-2/report.json")).unwrap();
    let path = with_bom(&dir, "logs/demo__fix-2/report.json", &report);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let f = loaded(sphragis::sft::store::load_outcome(&conn, &path));
    assert_bound(&f, &path);
    assert_eq!(count(&conn, "select count(*) from sft_outcomes where instance_id = 'demo__fix-2' and resolved"), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn pools_accept_a_utf8_bom() {
    let dir = temp_dir("pools");
    let path = with_bom(&dir, "pools.json", &std::fs::read(samples().join("sft/audit/pools.json")).unwrap());
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let f = loaded(sphragis::sft::pools::load(&conn, &path));
    assert_bound(&f, &path);
    assert_eq!(count(&conn, "select count(*) from sft_pool_roles where role = 'repair'"), 3);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn manifest_accepts_a_utf8_bom() {
    let dir = temp_dir("manifest");
    let path = with_bom(&dir, "manifest.json", &std::fs::read(samples().join("sft/audit/manifest.json")).unwrap());
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let f = loaded(sphragis::sft::pools::load_manifest(&conn, &path));
    assert_bound(&f, &path);
    assert_eq!(count(&conn, "select count(*) from sft_split_manifest where split = 'train'"), 2);
    assert_eq!(count(&conn, "select count(*) from sft_protected_families"), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn samples_database_is_read_from_the_hashed_bytes() {
    let path = samples().join("sft/audit/samples.sqlite");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let f = loaded(sphragis::sft::pools::load_samples(&conn, &path));
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!((f.bytes, f.sha256), (bytes.len() as i64, sha256_hex(&bytes)));
    assert_eq!(f.rows, 3);
    assert_eq!(count(&conn, "select count(*) from sft_samples where success and finish_reason = 'natural'"), 2);
    assert_eq!(count(&conn, "select sum(pass_to_pass) from sft_samples"), 49);
    // a file that is not SQLite is refused before SQLite sees it
    let dir = temp_dir("samples");
    let text = dir.join("samples.sqlite");
    std::fs::write(&text, "instance_id,success\n").unwrap();
    let err = sphragis::sft::pools::load_samples(&conn, &text).unwrap_err().to_string();
    assert!(err.contains("samples.sqlite: not an SQLite database file"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn samples_database_with_unsaved_wal_changes_is_refused() {
    let dir = temp_dir("wal");
    let path = dir.join("samples.sqlite");
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        "pragma journal_mode = wal; pragma wal_autocheckpoint = 0;
         create table samples (instance_id text, success integer, finish_reason text, fail_to_pass integer, pass_to_pass integer);
         insert into samples values ('a__a-1', 1, 'natural', 1, 1);",
    )
    .unwrap();
    // the writer is still open: its rows are in samples.sqlite-wal, not in the main file
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = sphragis::sft::pools::load_samples(&conn, &path).unwrap_err().to_string();
    assert!(err.contains("samples.sqlite-wal holds changes not yet in the database file"), "{err}");
    // checkpointed into the main file, the same WAL-mode database loads from its bytes
    db.execute_batch("pragma wal_checkpoint(truncate);").unwrap();
    let f = loaded(sphragis::sft::pools::load_samples(&conn, &path));
    assert_eq!(f.rows, 1);
    drop(db);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn mini_swe_agent_load_ignores_a_report_beside_it() {
    // SWE-bench folder layout: trajs/<id>/<id>.traj.json and logs/<id>/report.json
    let dir = temp_dir("layout");
    let audit = samples().join("sft/audit");
    let id = "demo__env-1";
    let traj = dir.join(format!("trajs/{id}/{id}.traj.json"));
    std::fs::create_dir_all(traj.parent().unwrap()).unwrap();
    std::fs::copy(audit.join(format!("{id}.traj.json")), &traj).unwrap();
    let report = dir.join(format!("logs/{id}/report.json"));
    std::fs::create_dir_all(report.parent().unwrap()).unwrap();
    std::fs::copy(audit.join(format!("logs/{id}/report.json")), &report).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    loaded(sphragis::sft::store::load_trajectories(&conn, &traj, None));
    // nothing from the report: no outcome, no verdict, one logged input
    assert_eq!(count(&conn, "select count(*) from sft_outcomes"), 0);
    assert_eq!(count(&conn, "select count(*) from sft_trajectories where declared_resolved is not null"), 0);
    assert_eq!(count(&conn, "select count(*) from ingest_log"), 1);
    // the outcome enters by `load outcomes`, logged with its own SHA-256
    let f = loaded(sphragis::sft::store::load_outcome(&conn, &report));
    assert_eq!(f.sha256, sha256_hex(&std::fs::read(&report).unwrap()));
    assert_eq!(count(&conn, &format!("select count(*) from sft_outcomes where instance_id = '{id}' and resolved")), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn thinking_lengths_record_the_tokenizer_sha256() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let tokenizer_path = samples().join("sft/tokenizer.json");
    let tokenizer = TokenizerFile::read(&tokenizer_path).unwrap();
    let sha = sha256_hex(&std::fs::read(&tokenizer_path).unwrap());
    assert_eq!(tokenizer.sha256, sha);
    let audit = samples().join("sft/audit");
    let f = loaded(sphragis::sft::store::load_trajectories(&conn, &audit.join("thinking.jsonl"), Some(&tokenizer)));
    loaded(sphragis::sft::store::load_trajectories(&conn, &audit.join("demo__fix-2.traj.json"), None));
    // every re-tokenized length names its tokenizer; none without one
    let (with_length, named): (i64, i64) = conn
        .query_row(
            &format!(
                "select count(reasoning_tokens), count(*) filter (where reasoning_tokenizer_sha256 = '{sha}') \
                 from sft_messages join sft_trajectories using (instance_id) where file_id = {}",
                f.file_id
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(with_length > 0);
    assert_eq!(named, with_length);
    assert_eq!(
        count(
            &conn,
            "select count(*) from sft_messages where reasoning_tokens is null and reasoning_tokenizer_sha256 is not null"
        ),
        0
    );
    // the report's token figures name the tokenizer behind them
    let named: String = conn
        .query_row("select tokenizer_sha256 from sft_thinking_v1 where source = 'llamafactory'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(named, sha);
    let unnamed: Option<String> = conn
        .query_row("select tokenizer_sha256 from sft_thinking_v1 where source = 'mini-swe-agent'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(unnamed, None);
    let options: String =
        conn.query_row("select options from ingest_log where file_id = ?", [f.file_id], |r| r.get(0)).unwrap();
    assert_eq!(options, format!(r#"{{"tokenizer_sha256":"{sha}"}}"#));
}

#[test]
fn same_bytes_whose_ids_collide_are_skipped_not_refused() {
    // the second load's parse fails on ids already loaded; its bytes are then hashed to
    // the end and found to be the first file's: reported as the same input
    let dir = temp_dir("again");
    let first = dir.join("a.jsonl");
    std::fs::copy(samples().join("review/examples.jsonl"), &first).unwrap();
    let second = dir.join("b.jsonl");
    std::fs::copy(&first, &second).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let f = loaded(load(&conn, InputKind::Examples, &first, None, &mut |_| {}));
    match load(&conn, InputKind::Examples, &second, None, &mut |_| {}).unwrap() {
        LoadOutcome::AlreadyLoaded { earlier, .. } => assert_eq!(earlier.file_id, f.file_id),
        other => panic!("{other:?}"),
    }
    assert_eq!(count(&conn, "select count(*) from ingest_log"), 1);
    assert_eq!(count(&conn, "select count(*) from sph_log where command = 'load-skipped'"), 1);
    // other bytes with a colliding id are an error naming both places
    let third = dir.join("c.jsonl");
    let mut text = std::fs::read_to_string(&first).unwrap();
    text.push('\n');
    std::fs::write(&third, text).unwrap();
    let err = load(&conn, InputKind::Examples, &third, None, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("is already loaded (file_id"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Every load writes its rows once, into the database file (`ingest::load_file`): before,
/// a review load wrote every hunk to the write-ahead log at commit and again at the
/// checkpoint on close. 300 examples of 2 kB hunks (600 kB) leave the log as it was, read
/// back exactly, and the checkpoint setting is restored after the load.
#[test]
fn review_load_writes_its_rows_once_not_to_the_wal() {
    let dir = temp_dir("wal");
    let mut text = String::new();
    for i in 0..300 {
        let hunk = format!("line {i}\n").repeat(2000 / 8);
        text.push_str(&format!(
            "{{\"example_id\":\"e{i}\",\"org\":\"o\",\"hunk\":{},\"target\":\"x\\n\",\"comments\":[{{\"comment_id\":\"c\",\"message\":\"use x\"}}]}}\n",
            serde_json::to_string(&hunk).unwrap()
        ));
    }
    let file = dir.join("examples.jsonl");
    std::fs::write(&file, &text).unwrap();
    let db = dir.join("r.duckdb");
    let conn = sphragis::db::open(&db).unwrap();
    let threshold = |conn: &duckdb::Connection| -> String {
        conn.query_row("select current_setting('checkpoint_threshold')", [], |r| r.get(0)).unwrap()
    };
    let before = threshold(&conn);
    let wal = dir.join("r.duckdb.wal");
    let wal_before = std::fs::metadata(&wal).map_or(0, |m| m.len());
    loaded(load(&conn, InputKind::Examples, &file, None, &mut |_| {}));
    let wal_after = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(wal_after <= wal_before + 64 * 1024, "WAL grew from {wal_before} to {wal_after} bytes");
    assert_eq!(threshold(&conn), before);
    let want: i64 = (0..300).map(|i: i64| (format!("line {i}\n").len() * 250) as i64).sum();
    assert_eq!(count(&conn, "select sum(length(hunk)) from review_examples"), want);
    assert_eq!(count(&conn, "select count(*) from review_comments"), 300);
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Review JSON lines are parsed on every core in chunks of 256 lines
/// (`ingest::parallel::parse_lines`): the error a load reports is still the first failing
/// line's — not a later one a faster thread met, nor the reader's invalid UTF-8 further
/// on — nothing is loaded, and a good file arrives in file order (record = line).
#[test]
fn first_bad_review_line_is_reported_whichever_parser_thread_meets_it() {
    let dir = temp_dir("review-order");
    let row = |i: usize| R4R_ROW.replace("\"c1\"", &format!("\"c{i}\""));
    // 1,000 lines (four chunks): no focus markers on line 300, bad JSON on line 900
    let mut lines: Vec<Vec<u8>> = (1..=1000).map(|i| row(i).into_bytes()).collect();
    lines[299] = row(300).replace("<|endfocus|>", "").into_bytes();
    lines[899] = b"{\"comment_id\": \"c900\",".to_vec();
    let write = |name: &str, lines: &[Vec<u8>]| {
        let path = dir.join(name);
        std::fs::write(&path, lines.join(&b'\n')).unwrap();
        path
    };
    for _ in 0..5 {
        let path = write("two-bad.jsonl", &lines);
        let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
        let err = format!("{:#}", load(&conn, InputKind::Review4Repair, &path, None, &mut |_| {}).unwrap_err());
        assert!(err.contains("two-bad.jsonl:300: field `code_snippet`: no <|startfocus|>"), "{err}");
        assert_eq!(count(&conn, "select count(*) from review_examples"), 0);
        assert_eq!(count(&conn, "select count(*) from ingest_log"), 0);
    }
    // invalid UTF-8 on line 950, after the bad JSON of line 900: line 900 is named
    lines[299] = row(300).into_bytes();
    lines[949] = b"{\"comment_id\": \"\xff\"}".to_vec();
    let path = write("utf8.jsonl", &lines);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = format!("{:#}", load(&conn, InputKind::Review4Repair, &path, None, &mut |_| {}).unwrap_err());
    assert!(err.contains("utf8.jsonl:900:"), "{err}");
    // the repeated id of line 700 (as line 20's) is named before the bad JSON of line 900
    lines[699] = row(20).into_bytes();
    let path = write("repeat.jsonl", &lines);
    let err = format!("{:#}", load(&conn, InputKind::Review4Repair, &path, None, &mut |_| {}).unwrap_err());
    assert!(err.contains("repeat.jsonl:700: field `example_id`: \"c20\" repeats the example of record 20"), "{err}");
    // good lines, with blank ones between: every row, record = its line
    let mut good: Vec<Vec<u8>> = Vec::new();
    for i in 1..=1000 {
        good.push(row(i).into_bytes());
        if i % 100 == 0 {
            good.push(Vec::new());
        }
    }
    let path = write("good.jsonl", &good);
    loaded(load(&conn, InputKind::Review4Repair, &path, None, &mut |_| {}));
    assert_eq!(count(&conn, "select count(*) from review_examples"), 1000);
    // c1..c100 on lines 1..100, then one blank line per hundred before
    assert_eq!(
        count(
            &conn,
            "select count(*) from review_examples where record <> cast(substr(example_id, 2) as int) + (cast(substr(example_id, 2) as int) - 1) // 100"
        ),
        0
    );
    assert_eq!(count(&conn, "select max(record) from review_examples"), 1009);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An example id that an earlier file loaded is named on its own line, in file order with
/// the file's other errors: it was found only when the rows were written, after the whole
/// file was read, so a later bad line was reported instead (JSON lines and the array).
#[test]
fn repeat_of_an_earlier_file_is_named_before_a_later_bad_line() {
    let dir = temp_dir("earlier-repeat");
    let row = |i: usize| R4R_ROW.replace("\"c1\"", &format!("\"c{i}\""));
    let first = dir.join("first.jsonl");
    std::fs::write(&first, (1..=50).map(row).collect::<Vec<_>>().join("\n")).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    loaded(load(&conn, InputKind::Review4Repair, &first, None, &mut |_| {}));
    // 601 lines of new ids, but line 600 repeats c17 (record 17 of first.jsonl) and line 601 is cut
    let mut lines: Vec<String> = (1..=601).map(|i| row(1000 + i)).collect();
    lines[599] = row(17);
    lines[600] = "{\"comment_id\": \"c9999\",".into();
    let second = dir.join("second.jsonl");
    std::fs::write(&second, lines.join("\n")).unwrap();
    let want = format!(
        "second.jsonl:600: field `example_id`: \"c17\" is already loaded (file_id 1, {} record 17)",
        first.display()
    );
    let err = format!("{:#}", load(&conn, InputKind::Review4Repair, &second, None, &mut |_| {}).unwrap_err());
    assert!(err.contains(&want), "{err}");
    // the same rows as a JSON array (a whole document, so a cut one is refused before any
    // row): row [599] is the repeat, [600] has no focus markers
    lines[600] = row(9999).replace("<|endfocus|>", "");
    let array = dir.join("second.json");
    std::fs::write(&array, format!("[{}]", lines.join(",\n"))).unwrap();
    let err = format!("{:#}", load(&conn, InputKind::Review4Repair, &array, None, &mut |_| {}).unwrap_err());
    assert!(err.contains("second.json:600: field `example_id`: \"c17\" is already loaded (file_id 1,"), "{err}");
    assert_eq!(count(&conn, "select count(*) from review_examples"), 50);
    assert_eq!(count(&conn, "select count(*) from ingest_log"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file holding only a byte-order mark is empty, and is not called "0 bytes" (it is 3).
#[test]
fn file_of_only_a_byte_order_mark_is_empty_not_zero_bytes() {
    let dir = temp_dir("bom-only");
    let path = with_bom(&dir, "bom.jsonl", b"");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = format!("{:#}", load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap_err());
    assert!(err.contains("bom.jsonl: file is empty (no bytes, or only a byte-order mark)"), "{err}");
    assert_eq!(count(&conn, "select count(*) from ingest_log"), 0);
    let _ = std::fs::remove_dir_all(&dir);
}
