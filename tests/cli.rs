//! Binary-level tests: the real `sphragis` executable on the bundled samples and on
//! small hand-made bad inputs. Every bad input must exit 1 with an error naming file,
//! line and field, and leave the database exactly as it was.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("sphragis-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.join("t.duckdb")
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .arg("--db")
            .arg(self.db())
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// Every row of every table sphragis writes, as CSV text: equal fingerprints mean
    /// the database content did not change (sph_log aside, which records skips).
    fn fingerprint(&self) -> String {
        let tables = [
            "ingest_log",
            "review_examples",
            "review_comments",
            "org_config",
            "org_service_accounts",
            "org_windows",
            "corpus_versions",
            "refine_examples",
            "refine_comments",
        ];
        tables
            .iter()
            .map(|t| self.ok(&["sql", &format!("select * from {t} order by all"), "--format", "csv"]))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/review")
}

const GOOD: &str = r#"{"example_id":"x1","org":"qt","hunk":"a\n","target":"b\n","created_at":"2023-02-01T00:00:00Z","comments":[{"comment_id":"c1","message":"please"}]}"#;

#[test]
fn bad_inputs_name_file_line_field_and_change_nothing() {
    let s = Scratch::new("bad");
    let examples = samples().join("examples.jsonl");
    s.ok(&["load", "examples", examples.to_str().unwrap()]);
    s.ok(&["refine", "--version", "v1"]);
    let before = s.fingerprint();
    let line2 = |second: &[u8]| {
        let mut bytes = format!("{GOOD}\n").into_bytes();
        bytes.extend_from_slice(second);
        bytes
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("malformed.jsonl", line2(b"{\"example_id\": \"x2\" \"org\": \"qt\"}\n"), "malformed.jsonl:2: malformed JSON"),
        (
            "missing.jsonl",
            line2(GOOD.replace("x1", "x2").replace(r#""target":"b\n","#, "").as_bytes()),
            "missing.jsonl:2: missing field `target`",
        ),
        (
            "mistyped.jsonl",
            line2(GOOD.replace("x1", "x2").replace(r#""hunk":"a\n""#, r#""hunk":42"#).as_bytes()),
            "mistyped.jsonl:2: field `hunk`: invalid type: integer `42`, expected a string",
        ),
        ("utf8.jsonl", line2(b"{\"example_id\":\"x\xc3\x28\"}\n"), "utf8.jsonl:2: invalid UTF-8 at byte 17"),
        ("empty.jsonl", Vec::new(), "empty.jsonl: file is empty"),
        ("truncated.jsonl", line2(&GOOD.as_bytes()[..60]), "truncated record"),
        (
            "collides.jsonl",
            line2(GOOD.replace("x1", "wm-901234-2-a").as_bytes()),
            "collides.jsonl:2: field `example_id`: \"wm-901234-2-a\" is already loaded (file_id 1,",
        ),
        (
            "repeats.jsonl",
            line2(GOOD.as_bytes()),
            "repeats.jsonl:2: field `example_id`: \"x1\" repeats the example of record 1",
        ),
        ("array.jsonl", line2(b"[\"x2\", \"qt\"]\n"), "array.jsonl:2: expected a JSON object"),
        (
            "badtime.jsonl",
            line2(GOOD.replace("x1", "x2").replace("2023-02-01T00:00:00Z", "01/02/2023").as_bytes()),
            "badtime.jsonl:2: field `created_at`: not a timestamp",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = s.file(name, &bytes);
        let out = s.run(&["load", "examples", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(expected), "{name}: expected {expected:?} in {err:?}");
        assert_eq!(s.fingerprint(), before, "{name} changed the database");
    }
    // a bad CSV and a bad orgs file too
    let csv = s.file("t.csv", b",comment,before,before_marked,after\n0,ok,a,b,c\n1,short\n");
    let out = s.run(&["load", "tufano2021", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("t.csv:3:"), "{}", String::from_utf8_lossy(&out.stderr));
    let orgs = s.file("orgs.json", br#"{"orgs": {"qt": {"windows": [{"name": "a", "start": "2020-01-01", "end": "2019-01-01"}]}}}"#);
    let out = s.run(&["load", "orgs", orgs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("field `orgs.qt.windows[0].end`"));
    assert_eq!(s.fingerprint(), before);
    // a directory, and a missing file
    let out = s.run(&["load", "examples", "."]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(": not a regular file"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = s.run(&["load", "examples", "no-such-file.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-file.jsonl: cannot open"));
}

#[test]
fn same_bytes_twice_are_reported_not_doubled() {
    let s = Scratch::new("twice");
    let examples = samples().join("examples.jsonl");
    let first = s.ok(&["load", "examples", examples.to_str().unwrap()]);
    assert!(first.starts_with("loaded examples"), "{first}");
    let before = s.fingerprint();
    // the same bytes under another name are still the same input
    let copy = s.file("copy.jsonl", &std::fs::read(&examples).unwrap());
    let second = s.ok(&["load", "examples", copy.to_str().unwrap()]);
    assert!(second.starts_with("skipped examples") && second.contains("file_id 1"), "{second}");
    assert_eq!(s.fingerprint(), before);
    let n = s.ok(&["sql", "select count(*) as n from sph_log where command = 'load-skipped'", "--format", "csv"]);
    assert_eq!(n, "n\r\n1\r\n");
}

#[test]
fn an_earlier_orgs_file_can_be_applied_again() {
    let s = Scratch::new("orgs-again");
    let a = s.file("a.json", br#"{"orgs": {"qt": {"service_accounts": ["bot-a"]}}}"#);
    let b = s.file("b.json", br#"{"orgs": {"qt": {"service_accounts": ["bot-b"]}}}"#);
    s.ok(&["load", "orgs", a.to_str().unwrap()]);
    s.ok(&["load", "orgs", b.to_str().unwrap()]);
    let again = s.ok(&["load", "orgs", a.to_str().unwrap()]);
    assert!(again.contains("the same bytes as file_id 1, applied again"), "{again}");
    let accounts = s.ok(&["sql", "select account_id from org_service_accounts", "--format", "csv"]);
    assert_eq!(accounts, "account_id\r\nbot-a\r\n");
}

#[test]
fn a_database_path_that_is_not_a_database_is_refused() {
    let s = Scratch::new("notdb");
    let json = s.file("o.json", br#"{"orgs": {}}"#);
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .args(["--db", json.to_str().unwrap(), "load", "orgs", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a DuckDB database file"));
    assert_eq!(std::fs::read(&json).unwrap(), br#"{"orgs": {}}"#);
}

#[test]
fn usage_errors_exit_2_and_frozen_versions_refuse_refine() {
    let s = Scratch::new("usage");
    assert_eq!(s.run(&["report"]).status.code(), Some(2));
    assert_eq!(s.run(&["load", "nonsense", "x"]).status.code(), Some(2));
    let examples = samples().join("examples.jsonl");
    s.ok(&["load", "examples", examples.to_str().unwrap()]);
    s.ok(&["refine", "--version", "v1"]);
    let out = s.run(&["freeze", "--version", "v1"]);
    assert_eq!(out.status.code(), Some(1), "orgs without a split are not left out silently");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // no orgs file: jenkins-bot is no service account, so wikimedia keeps wm-901400 too
    // (12 built - 1 rebase - 4 suggested - 1 applied fix = 6); qt keeps 3 (tests/review_samples.rs)
    assert!(stderr.contains("qt (3 kept examples, no split computed), wikimedia (6 kept examples, no split computed)"), "{stderr}");
    let said = s.ok(&["freeze", "--version", "v1", "--allow-partial"]);
    assert_eq!(said.lines().count(), 1, "one status line: {said}");
    assert!(said.contains("left out: qt (3 kept examples, no split computed), wikimedia (6 kept"), "{said}");
    let out = s.run(&["refine", "--version", "v1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("frozen"));
    let out = s.run(&["refine", "--version", "v2", "--base", "v0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("base version v0 does not exist"));
    let out = s.run(&["report", "nope"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown report \"nope\""));
}

#[test]
fn reports_as_csv_json_and_files_name_their_view() {
    let s = Scratch::new("report");
    let examples = samples().join("examples.jsonl");
    let orgs = samples().join("orgs.json");
    s.ok(&["load", "orgs", orgs.to_str().unwrap()]);
    s.ok(&["load", "examples", examples.to_str().unwrap()]);
    s.ok(&["refine", "--version", "v3"]);

    let out = s.run(&["report", "removals", "--format", "csv"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("# view refine_removals_v1 sha256 "), "{stderr}");
    let mut reader = csv::Reader::from_reader(&out.stdout[..]);
    let headers = reader.headers().unwrap().clone();
    assert_eq!(&headers[0], "version");
    assert_eq!(&headers[1], "org");
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let all = rows.iter().find(|r| &r[1] == "(all)").unwrap();
    let kept = headers.iter().position(|h| h == "kept").unwrap();
    assert_eq!(&all[kept], "8");

    let json: serde_json::Value =
        serde_json::from_str(&s.ok(&["report", "fences", "--version", "v3", "--format", "json"])).unwrap();
    assert_eq!(json["view"], "fence_agreement_v1");
    assert_eq!(json["view_sha256"].as_str().unwrap().len(), 64);

    let table = s.ok(&["report", "all"]);
    for view in sphragis::report::REPORTS.iter().map(|r| r.view) {
        assert!(table.contains(&format!("view {view} sha256 ")), "table output names {view}");
    }

    let dir = s.dir.join("out");
    s.ok(&["report", "all", "--format", "csv", "--out", dir.to_str().unwrap()]);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    assert_eq!(files.len(), sphragis::report::REPORTS.len());
    for f in files {
        let name = f["file"].as_str().unwrap();
        assert_eq!(name, format!("{}.csv", f["view"].as_str().unwrap()));
        assert!(dir.join(name).is_file());
    }
}

#[test]
fn sealed_split_needs_unseal_and_verify_exits_3_on_a_changed_input() {
    let s = Scratch::new("sealed");
    for f in ["orgs.json", "openstack.jsonl"] {
        std::fs::copy(samples().join(f), s.dir.join(f)).unwrap();
    }
    s.ok(&["load", "orgs", "orgs.json"]);
    s.ok(&["load", "examples", "openstack.jsonl"]);
    s.ok(&["refine", "--version", "v3"]);
    let out = s.run(&["split", "--version", "v3", "--org", "wikimedia"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("version v3 has no examples of org wikimedia"));
    s.ok(&["split", "--version", "v3", "--org", "openstack"]);
    let out = s.run(&["examples", "--version", "v3", "--org", "openstack", "--split", "test"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("opens only with --unseal"));
    let shown = s.ok(&["examples", "--version", "v3", "--org", "openstack", "--split", "test", "--unseal", "--format", "csv"]);
    assert!(shown.contains("os-835000-t1") && shown.contains("VERSION = '2.8'"), "{shown}");
    let log = s.ok(&["sql", "select count(*) as n from sph_log where command = 'unseal'", "--format", "csv"]);
    assert_eq!(log, "n\r\n1\r\n");
    // an open split needs no flag and logs nothing
    s.ok(&["examples", "--version", "v3", "--org", "openstack", "--split", "dev"]);
    s.ok(&["freeze", "--version", "v3", "--out", "frozen"]);
    assert_eq!(s.ok(&["verify", "--reproduce", "--version", "v3"]), "clean\n");
    let path = s.dir.join("openstack.jsonl");
    let text = std::fs::read_to_string(&path).unwrap().replacen("chatty", "Chatty", 1);
    std::fs::write(&path, text).unwrap();
    let out = s.run(&["verify", "--reproduce", "--version", "v3"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("openstack.jsonl (file_id 2, examples): sha256 was"));
    assert_eq!(s.run(&["verify", "--version", "v3"]).status.code(), Some(2), "--reproduce is required");
}

#[test]
fn verify_exits_3_naming_a_frozen_file_edited_on_disk() {
    let s = Scratch::new("frozen-on-disk");
    for f in ["orgs.json", "openstack.jsonl"] {
        std::fs::copy(samples().join(f), s.dir.join(f)).unwrap();
    }
    s.ok(&["load", "orgs", "orgs.json"]);
    s.ok(&["load", "examples", "openstack.jsonl"]);
    s.ok(&["refine", "--version", "v3"]);
    s.ok(&["split", "--version", "v3", "--org", "openstack"]);
    let said = s.ok(&["freeze", "--version", "v3", "--out", "frozen"]);
    assert!(said.ends_with("froze version v3 (1 org(s) written: openstack)\n"), "{said}");
    assert_eq!(s.ok(&["verify", "--reproduce", "--version", "v3"]), "clean\n");
    // The criteria file a user quotes says size floor 5; the rebuild says 4.
    let criteria = s.dir.join("frozen/split-criteria-openstack.json");
    let text = std::fs::read_to_string(&criteria).unwrap();
    std::fs::write(&criteria, text.replace("\"size_floor\": 4,", "\"size_floor\": 5,")).unwrap();
    let out = s.run(&["verify", "--reproduce", "--version", "v3"]);
    assert_eq!(out.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("split-criteria-openstack.json: criteria size_floor: frozen 5 → reproduced 4"), "{stdout}");
    assert!(stdout.contains("split-criteria-openstack.json: sha256 is "), "{stdout}");
    std::fs::write(&criteria, text).unwrap();
    // Published elsewhere: the recorded folder no longer has the files, --frozen names it.
    std::fs::rename(s.dir.join("frozen"), s.dir.join("published")).unwrap();
    let out = s.run(&["verify", "--reproduce", "--version", "v3"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("manifest-openstack-v3.json is missing"));
    assert_eq!(s.ok(&["verify", "--reproduce", "--version", "v3", "--frozen", "published"]), "clean\n");
}

#[test]
fn views_command_lists_versions_and_hashes() {
    let s = Scratch::new("views");
    // read-only commands never create a database
    let out = s.run(&["views"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such database file"));
    assert!(!s.db().exists());
    s.ok(&["init"]);
    let out = s.ok(&["views"]);
    for v in sphragis::db::views::VIEWS {
        assert!(out.contains(v.name()), "{out}");
        assert!(out.contains(&v.sha256()[..16]), "{out}");
    }
}

#[test]
fn demo_builds_and_prints_every_report() {
    let s = Scratch::new("demo");
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .args(["demo", "--samples", samples().parent().unwrap().to_str().unwrap()])
        .current_dir(&s.dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    for view in sphragis::report::REPORTS.iter().map(|r| r.view) {
        assert!(stdout.contains(&format!("view {view} sha256")), "{view}");
    }
    assert!(s.dir.join("sphragis-demo.duckdb").is_file());
    // From a directory without data-samples/, the embedded copies are used.
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis")).args(["demo", "--quiet"]).current_dir(&s.dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(s.dir.join("sphragis-demo.duckdb.samples/review/examples.jsonl").is_file());
}
