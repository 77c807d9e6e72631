//! Binary-level tests: the real `sphragis` executable on the bundled samples and on
//! small hand-made bad inputs. Every bad input must exit 1 with an error naming file,
//! line and field, and leave the database exactly as it was.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(std::fs::read(path).unwrap());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

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

    /// Copies the openstack sample and the orgs file here, loads them, refines, splits
    /// and freezes v3 into `frozen/`; returns what freeze printed.
    fn frozen_openstack_v3(&self) -> String {
        for f in ["orgs.json", "openstack.jsonl"] {
            std::fs::copy(samples().join(f), self.dir.join(f)).unwrap();
        }
        self.ok(&["load", "orgs", "orgs.json"]);
        self.ok(&["load", "examples", "openstack.jsonl"]);
        self.ok(&["refine", "--version", "v3"]);
        self.ok(&["split", "--version", "v3", "--org", "openstack"]);
        self.ok(&["freeze", "--version", "v3", "--out", "frozen"])
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
            "missing.jsonl:2: field `target`: missing",
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
    let orgs = s.file(
        "orgs.json",
        br#"{"orgs": {"qt": {"windows": [{"name": "a", "start": "2020-01-01", "end": "2019-01-01"}]}}}"#,
    );
    let out = s.run(&["load", "orgs", orgs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("field `orgs.qt.windows[0].end`"));
    assert_eq!(s.fingerprint(), before);
    // a directory, and a missing file
    let out = s.run(&["load", "examples", "."]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(": not a regular file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = s.run(&["load", "examples", "no-such-file.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no-such-file.jsonl: no such file or folder (nothing was loaded)")
    );
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

/// `views build --out t.duckdb` on the database t.duckdb replaced the corpus with view
/// JSONL and said it wrote the views. Every `--out` naming the database file, its
/// companion or a path to them is refused before anything is written.
#[test]
fn output_that_is_the_database_is_refused_and_the_database_kept() {
    let s = Scratch::new("outdb");
    s.frozen_openstack_v3();
    let before = sha256_of(&s.db());
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/chatml_training.jinja");
    let tokenizer = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/chatml_tokenizer.json");
    let (template, tokenizer) = (template.to_str().unwrap(), tokenizer.to_str().unwrap());
    let companion = s.dir.join("t.duckdb.sealed.duckdb");
    assert!(companion.is_file(), "the openstack sample has a sealed example");
    let cases: [(&[&str], &str); 5] = [
        (
            &["views", "build", "--tokenizer", tokenizer, "--template", template, "--pool", "A", "--out", "t.duckdb"],
            "the file",
        ),
        (
            &[
                "views",
                "build",
                "--tokenizer",
                tokenizer,
                "--template",
                template,
                "--pool",
                "A",
                "--out",
                "./sub/../t.duckdb",
            ],
            "the file",
        ),
        (&["report", "splits", "--format", "html", "--out", "t.duckdb"], "the file"),
        (&["report", "splits", "--format", "html", "--out", "t.duckdb.sealed.duckdb"], "the sealed companion"),
        (&["export", "--format", "parquet", "--out", "t.duckdb"], "the file"),
    ];
    std::fs::create_dir_all(s.dir.join("sub")).unwrap();
    let companion_before = sha256_of(&companion);
    for (args, what) in cases {
        let out = s.run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&format!("that is {what} of the database")), "{args:?}: {err}");
        assert!(err.contains("nothing is written"), "{args:?}: {err}");
        assert_eq!(sha256_of(&s.db()), before, "{args:?}");
        assert_eq!(sha256_of(&companion), companion_before, "{args:?}");
    }
    // a hard link to the file or the companion, a log that does not exist yet, the
    // database given as a symbolic link (its target's companion), a link inside a CSV folder
    std::fs::hard_link(s.db(), s.dir.join("hard.duckdb")).unwrap();
    std::fs::hard_link(&companion, s.dir.join("hard-companion")).unwrap();
    std::os::unix::fs::symlink(s.db(), s.dir.join("link.duckdb")).unwrap();
    std::fs::create_dir_all(s.dir.join("csv")).unwrap();
    std::os::unix::fs::symlink(s.db(), s.dir.join("csv/split_counts_v1.csv")).unwrap();
    let html: &[&str] = &["report", "splits", "--format", "html", "--out"];
    let link = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .args(["--db", "link.duckdb"])
            .args(args)
            .current_dir(&s.dir)
            .output()
            .unwrap()
    };
    let outs = [
        (s.run(&[html, &["hard.duckdb"]].concat()), "that is the file of the database"),
        (s.run(&[html, &["hard-companion"]].concat()), "that is the sealed companion of the database"),
        (s.run(&["report", "splits", "--format", "csv", "--out", "t.duckdb.wal"]), "that is the write-ahead log"),
        (
            s.run(&["report", "splits", "--format", "csv", "--out", "t.duckdb.checkpoint-journal"]),
            "that is the checkpoint journal of the database",
        ),
        (
            s.run(&["report", "splits", "--format", "csv", "--out", "t.duckdb.checkpoint-journal.partial"]),
            "that is the checkpoint journal (being written) of the database",
        ),
        (link(&[html, &["t.duckdb.sealed.duckdb"]].concat()), "that is the sealed companion of the database"),
        (
            s.run(&["report", "splits", "--format", "csv", "--out", "csv"]),
            "is a symbolic link; report files are not written through links",
        ),
    ];
    for (out, want) in outs {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(sha256_of(&s.db()), before);
        assert_eq!(sha256_of(&companion), companion_before);
    }
    assert!(!s.dir.join("t.duckdb.wal").exists());
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
    assert!(
        stderr.contains("qt (3 kept examples, no split computed), wikimedia (6 kept examples, no split computed)"),
        "{stderr}"
    );
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
fn option_values_are_validated_by_clap_as_usage_errors() {
    // --policy, --span-end, --weights and --steps are parsed before any file is touched:
    // a bad value exits 2 and names the accepted forms, and no database file appears
    let s = Scratch::new("option-values");
    let tokenizer = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/tokenizer.json");
    let policy = s.run(&[
        "views",
        "build",
        "--tokenizer",
        tokenizer.to_str().unwrap(),
        "--pool",
        "A",
        "--out",
        "v.jsonl",
        "--policy",
        "window:5-2",
    ]);
    let stderr = String::from_utf8_lossy(&policy.stderr);
    assert_eq!(policy.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("invalid value 'window:5-2' for '--policy <POLICY>'"), "{stderr}");
    assert!(stderr.contains("use all, final, window:I-J or keep:I,J,..."), "{stderr}");
    let span = s.run(&["load", "views", "v.jsonl", "--span-end", "half-open"]);
    let stderr = String::from_utf8_lossy(&span.stderr);
    assert_eq!(span.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("[possible values: inclusive, exclusive]"), "{stderr}");
    let weights = s.run(&["report", "weights", "--weights", "0.5,-1"]);
    assert_eq!(weights.status.code(), Some(2), "{}", String::from_utf8_lossy(&weights.stderr));
    let steps = s.run(&["report", "budget", "--steps", "0"]);
    assert_eq!(steps.status.code(), Some(2), "{}", String::from_utf8_lossy(&steps.stderr));
    assert!(!s.db().exists(), "a usage error creates no database file");
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
    assert!(stderr.starts_with("# view refine_removals_v2 sha256 "), "{stderr}");
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
    assert_eq!(json["name"], "fence_agreement_v2");
    assert_eq!(json["kind"], "view");
    assert_eq!(json["filter"], "version = 'v3'");
    assert_eq!(json["query"], "select * from fence_agreement_v2 where version = 'v3' order by all");
    assert_eq!(json["sha256"].as_str().unwrap().len(), 64);

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
        assert_eq!(name, format!("{}.csv", f["name"].as_str().unwrap()));
        assert!(dir.join(name).is_file());
        // an empty file is explained, a non-empty one is not
        assert_eq!(f["rows"] == 0, f["note"].is_string(), "{f}");
    }
    assert!(manifest["code_version"].as_str().unwrap().starts_with("sphragis "));
    assert_eq!(manifest["options"]["report"], "all");
    let inputs = manifest["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 2, "orgs.json and examples.jsonl");
    assert_eq!(inputs[1]["kind"], "examples");
    assert_eq!(inputs[1]["sha256"].as_str().unwrap(), sha256_of(&examples));
    assert_eq!(manifest["not_from_this_export"], serde_json::json!([]));
    // a second export into the same folder names the files it did not write
    s.ok(&["report", "removals", "--format", "csv", "--out", dir.to_str().unwrap()]);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["files"].as_array().unwrap().len(), 1);
    let others = manifest["not_from_this_export"].as_array().unwrap();
    assert_eq!(others.len(), sphragis::report::REPORTS.len() - 1);
    assert!(others.iter().any(|f| f == "fence_agreement_v2.csv"));
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
    let shown =
        s.ok(&["examples", "--version", "v3", "--org", "openstack", "--split", "test", "--unseal", "--format", "csv"]);
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
    let said = s.frozen_openstack_v3();
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
    demo_holds_every_shape_and_both_runs(&s.dir.join("sphragis-demo.duckdb"));
    // From a directory without data-samples/, the embedded copies are used: the same database.
    std::fs::remove_file(s.dir.join("sphragis-demo.duckdb")).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_sphragis")).args(["demo", "--quiet"]).current_dir(&s.dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(s.dir.join("sphragis-demo.duckdb.samples/review/examples.jsonl").is_file());
    assert!(s.dir.join("sphragis-demo.duckdb.samples/sft/shapes/inspect/calc.eval").is_file());
    demo_holds_every_shape_and_both_runs(&s.dir.join("sphragis-demo.duckdb"));
}

/// The demo loads every trajectory shape of `data-samples/sft/shapes/` and the runs `base`
/// and `ft2` (issue 27: each shape loaded by the demo). Figures by hand from the samples'
/// READMEs: trajectories and messages per file (sharegpt 7 + 4 messages; ms-swift 8; nebius
/// 5 + 7 + 7 + 5 and a fourth sqlfluff attempt of 4; ATIF 11 and its continuation's 6 new
/// messages; Inspect 12 + 6 in each log, the three
/// runs of `calc__add-1` as attempts 0..2 in load order); base: a resolved, b c d unresolved, e no outcome;
/// ft2: results.json resolves a b d, c and e implied unresolved.
fn demo_holds_every_shape_and_both_runs(db: &Path) {
    let conn = duckdb::Connection::open_with_flags(
        db,
        duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap(),
    )
    .unwrap();
    let per_file: Vec<(String, i64, i64)> = conn
        .prepare(
            "select regexp_extract(l.path, '[^/]+$'), count(*), \
                    sum((select count(*) from sft_messages as m where m.instance_id = t.instance_id)) \
             from sft_trajectories as t join ingest_log as l using (file_id) \
             where l.path like '%/shapes/%' group by 1 order by 1",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want = [
        ("calc.eval", 2, 18),
        ("calc_epochs.json", 2, 18),
        ("nebius_attempts.json", 4, 24),
        ("nebius_more_attempts.json", 1, 4),
        ("sharegpt_agent.jsonl", 2, 11),
        ("swift_agent.jsonl", 1, 8),
        ("trajectory.cont-1.json", 1, 6),
        ("trajectory.json", 1, 11),
    ];
    assert_eq!(per_file, want.map(|(f, t, m)| (f.to_string(), t, m)).to_vec());
    let sqlfluff: (i64, i32) = conn
        .query_row(
            "select count(*), max(attempt) from sft_trajectories where instance = 'sqlfluff__sqlfluff-2419'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(sqlfluff, (4, 3), "four attempts of one instance, numbered 0..3");
    // Inspect: calc.eval's calc__add-1 (loaded first) is attempt 0; calc_epochs.json's
    // epochs 1 and 2 come after it as attempts 1 and 2 (12 and 6 messages)
    let calc: Vec<(String, i32, i64)> = conn
        .prepare(
            "select regexp_extract(l.path, '[^/]+$'), attempt, \
                    (select count(*) from sft_messages as m where m.instance_id = t.instance_id) \
             from sft_trajectories as t join ingest_log as l using (file_id) \
             where instance = 'calc__add-1' order by attempt",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want = [("calc.eval", 0, 12), ("calc_epochs.json", 1, 12), ("calc_epochs.json", 2, 6)];
    assert_eq!(calc, want.map(|(f, a, m)| (f.to_string(), a, m)).to_vec());
    let runs: Vec<(String, i64, i64, i64)> = conn
        .prepare("select run, instances, graded, resolved from eval_runs_v3 order by run")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs, vec![("base".to_string(), 5, 4, 1), ("ft2".to_string(), 5, 5, 3)]);
}

#[test]
fn output_into_a_closed_pipe_exits_quietly() {
    let s = Scratch::new("pipe");
    s.ok(&["init"]);
    for args in [&["sql", "select * from range(200000)"][..], &["views"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .arg("--db")
            .arg(s.db())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away, as `| head` does
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn misspelt_db_leaves_no_empty_database_behind() {
    let s = Scratch::new("misspelt");
    for args in [
        &["refine", "--version", "v1"][..],
        &["split", "--version", "v1"],
        &["freeze", "--version", "v1"],
        &["verify", "--reproduce", "--version", "v1"],
        &["examples", "--version", "v1", "--org", "qt", "--split", "dev"],
        &["report", "removals"],
        &["sql", "select 1"],
    ] {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("no such database file"), "{args:?}");
        assert!(!s.db().exists(), "{args:?} created {}", s.db().display());
    }
}

#[test]
fn unknown_report_name_is_a_usage_error() {
    let s = Scratch::new("unknown-report");
    s.ok(&["init"]);
    let out = s.run(&["report", "removal"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown report \"removal\"; reports: checks, inputs, removals")
    );
}

#[test]
fn sql_errors_carry_duckdb_message_without_generic_code() {
    let s = Scratch::new("sql-error");
    s.ok(&["init"]);
    let out = s.run(&["sql", "select nope from missing_table"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Table with name missing_table does not exist"), "{stderr}");
    assert!(!stderr.contains("Unknown error code"), "{stderr}");
}

/// Issue 8 §4 / issue 9: the chat template is the user's input (`--template`, or the
/// tokenizer's own beside tokenizer.json, as Hugging Face finds it); a template that
/// marks no assistant output, leaves a kept message untrained or is not
/// prefix-preserving is refused with nothing written.
#[test]
fn views_build_takes_the_users_template_and_refuses_templates_that_train_nothing() {
    let s = Scratch::new("views-build");
    let sft = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft");
    s.ok(&["load", "trajectories", sft.join("audit/demo__env-1.traj.json").to_str().unwrap()]);
    let tok_dir = s.dir.join("tok");
    std::fs::create_dir_all(&tok_dir).unwrap();
    let tokenizer = tok_dir.join("tokenizer.json");
    std::fs::copy(sft.join("tokenizer.json"), &tokenizer).unwrap();
    let sample = std::fs::read_to_string(sft.join("chatml_training.jinja")).unwrap();
    let out = s.dir.join("a.jsonl");
    let build = |template: Option<&Path>| {
        let mut args = vec![
            "views",
            "build",
            "--tokenizer",
            tokenizer.to_str().unwrap(),
            "--pool",
            "A",
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(t) = template {
            args.extend(["--template", t.to_str().unwrap()]);
        }
        s.run(&args)
    };
    let refused = |output: Output, want: &str| {
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(want), "{stderr}");
        assert!(!out.exists(), "nothing is written");
        assert!(!s.dir.join("a.jsonl.partial").exists());
    };
    // no template anywhere
    refused(
        build(None),
        "no chat template: pass --template FILE, or keep the tokenizer's chat_template.jinja or tokenizer_config.json",
    );
    // --template FILE
    let file = s.file("sample.jinja", sample.as_bytes());
    let stdout = String::from_utf8(build(Some(&file)).stdout).unwrap();
    assert!(stdout.contains("wrote 1 views"), "{stdout}");
    let view: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(view["keep_msgs"], serde_json::json!([2, 4, 6]));
    assert_eq!(view["origin"]["template_source"], file.to_str().unwrap());
    let from_file = view["origin"]["template_sha256"].clone();
    std::fs::remove_file(&out).unwrap();
    // Hugging Face layout: tokenizer_config.json's chat_template beside the tokenizer gives
    // the same views, the same template SHA-256
    let config = tok_dir.join("tokenizer_config.json");
    std::fs::write(&config, serde_json::json!({"chat_template": &sample, "eos_token": "<|im_end|>"}).to_string())
        .unwrap();
    assert!(build(None).status.success());
    let beside: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(beside["origin"]["template_sha256"], from_file);
    assert_eq!(beside["origin"]["template_source"], format!("{}#chat_template", config.display()));
    assert_eq!(beside["loss_mask"], view["loss_mask"]);
    std::fs::remove_file(&out).unwrap();
    // a config without chat_template
    std::fs::write(&config, r#"{"eos_token": "<|im_end|>"}"#).unwrap();
    refused(build(None), "has no chat_template; pass --template FILE");
    // a template with no {% generation %} block (like the stock chat templates)
    let plain = sample.replace("{%- generation %}", "").replace("{%- endgeneration %}", "");
    let plain = s.file("plain.jinja", plain.as_bytes());
    refused(build(Some(&plain)), "marks no assistant output: it has no {% generation %} block");
    // a generation block that covers the assistant turns after message 2 only
    let (head, rest) = sample.split_once("{%- generation %}").unwrap();
    let (body, tail) = rest.split_once("{%- endgeneration %}").unwrap();
    let later_only = format!(
        "{head}{{%- if loop.index0 > 2 %}}{{%- generation %}}{body}{{%- endgeneration %}}{{%- else %}}{body}{{%- endif %}}{tail}"
    );
    let later_only = s.file("later-only.jinja", later_only.as_bytes());
    refused(build(Some(&later_only)), "demo__env-1: the template marks none of assistant message 2 (tokens");
    // the thinking block of earlier turns dropped (the stock Qwen3 logic): not prefix-preserving
    let drops = sample.replace(
        "{{- '<think>\\n' + (m.reasoning_content or '') + '\\n</think>\\n\\n' + (m.content or '') }}",
        "{%- if loop.last %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{{- m.content }}",
    );
    assert_ne!(drops, sample);
    let drops = s.file("drops.jinja", drops.as_bytes());
    refused(build(Some(&drops)), "the chat template is not prefix-preserving: the rendering of messages[..=2]");
}

/// Hostile input D20: a load naming a file that does not exist made a new, empty database
/// file and then failed. It is refused before the database is opened; for a database that
/// exists, the files before the missing one are not loaded either.
#[test]
fn load_of_a_missing_file_makes_no_database() {
    let s = Scratch::new("load-missing");
    for args in [
        vec!["load", "views", "--pool", "A", "nosuch.jsonl"],
        vec!["load", "run", "base", "--model", "m", "nosuch/"],
        vec!["load", "examples", "nosuch.jsonl"],
    ] {
        let out = s.run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("nosuch") && stderr.contains("no such file or folder"), "{args:?}: {stderr}");
        assert!(!s.db().exists(), "{args:?} made a database file");
    }
    // an existing database: the good file before the missing one is not loaded
    s.ok(&["init"]);
    let good =
        s.file("a.jsonl", b"{\"view_id\":\"v\",\"instance_id\":\"x__y-1\",\"input_ids\":[1,2],\"loss_mask\":[0,1]}\n");
    let out = s.run(&["load", "views", "--pool", "A", good.to_str().unwrap(), "nosuch.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    let count = s.ok(&["sql", "select count(*) as n from sft_views", "--format", "csv"]);
    assert_eq!(count.lines().nth(1), Some("0"), "{count}");
}

/// A quoted glob of Parquet shards that matches nothing or matches files that are not
/// Parquet, a folder without a Parquet file, or a `.parquet` file that is not one, is
/// refused before the database is opened: no empty database file is left.
#[test]
fn load_of_a_glob_matching_nothing_makes_no_database() {
    let s = Scratch::new("load-glob-nothing");
    std::fs::create_dir_all(s.dir.join("empty")).unwrap();
    s.file("empty/notes.txt", b"not a shard");
    // files that are matched but are not Parquet (found by a fresh tester: each left an
    // empty database behind), and a link to nothing in a folder of shards
    for d in ["rows", "fake", "dangling"] {
        std::fs::create_dir_all(s.dir.join(d)).unwrap();
    }
    s.file("rows/a.jsonl", b"{\"view_id\":\"v\"}\n");
    s.file("fake/x.parquet", b"{\"view_id\":\"v\"}\n");
    std::os::unix::fs::symlink(s.dir.join("nowhere.parquet"), s.dir.join("dangling/x.parquet")).unwrap();
    for (args, says) in [
        (vec!["load", "views", "--pool", "A", "nodir/*.parquet"], "nodir/*.parquet: no Parquet file"),
        (vec!["load", "trajectories", "--pool", "A", "train-[0-9].parquet"], "train-[0-9].parquet: no Parquet file"),
        (vec!["load", "views", "--pool", "A", "empty"], "empty: no Parquet file"),
        (vec!["load", "examples", "nodir/*.jsonl"], "nodir/*.jsonl: no such file or folder"),
        (vec!["load", "views", "--pool", "A", "rows/*.jsonl"], "rows/a.jsonl: not a Parquet file"),
        (vec!["load", "trajectories", "fake/x.parquet"], "fake/x.parquet: not a Parquet file"),
        (vec!["load", "views", "--pool", "A", "fake"], "fake/x.parquet: not a Parquet file"),
        (vec!["load", "views", "--pool", "A", "dangling"], "dangling/x.parquet: cannot open"),
    ] {
        let out = s.run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says) && stderr.contains("nothing was loaded"), "{args:?}: {stderr}");
        assert!(!s.db().exists(), "{args:?} made a database file");
    }
}

#[test]
fn verify_with_a_missing_input_exits_3() {
    let s = Scratch::new("verify-missing");
    s.frozen_openstack_v3();
    std::fs::remove_file(s.dir.join("openstack.jsonl")).unwrap();
    let out = s.run(&["verify", "--reproduce", "--version", "v3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("input files are missing") && stderr.contains("openstack.jsonl"), "{stderr}");
}

#[test]
fn sql_command_cannot_attach_the_sealed_companion_or_read_files() {
    let s = Scratch::new("sql-attach");
    s.ok(&["init"]);
    let companion = format!("{}.sealed.duckdb", s.db().display());
    std::fs::write(s.dir.join("x.csv"), "a\n1\n").unwrap();
    for query in [format!("attach '{companion}' as s (read_only)"), "select * from read_csv('x.csv')".to_string()] {
        let out = s.run(&["sql", &query]);
        assert_eq!(out.status.code(), Some(1), "{query}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("disabled by configuration"), "{query}");
    }
    assert_eq!(s.run(&["sql", "set enable_external_access = true"]).status.code(), Some(1));
}

#[test]
fn fifo_input_without_a_writer_is_refused_at_once() {
    let s = Scratch::new("fifo");
    let fifo = s.dir.join("pipe.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let started = std::time::Instant::now();
    let out = s.run(&["load", "examples", fifo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
    // it returned rather than blocking on open (a generous bound, not a timing test)
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn version_filter_on_a_report_without_versions_is_a_usage_error() {
    let s = Scratch::new("version-filter");
    s.ok(&["init"]);
    let out = s.run(&["report", "weights", "--version", "v3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--version does not apply"));
}

/// Issue 9: a message the source marks as not trained (LLaMA-Factory `loss_weight: 0`)
/// is never supervised by a policy unless the user says so: `all` skips it and says so,
/// `keep:` naming it is refused, `--source-flags ignore` keeps it.
#[test]
fn views_build_respects_messages_the_source_marks_untrained() {
    let s = Scratch::new("views-source-flags");
    let sft = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft");
    let part = |ty: &str, v: &str| format!(r#"{{"type": "{ty}", "value": "{v}"}}"#);
    let row = format!(
        r#"{{"messages": [{{"role": "system", "content": [{}]}}, {{"role": "user", "content": [{}]}}, {{"role": "assistant", "content": [{}], "loss_weight": 0.0}}, {{"role": "user", "content": [{}]}}, {{"role": "assistant", "content": [{}]}}]}}"#,
        part("text", "be brief"),
        part("text", "fix it"),
        part("text", "a wrong try"),
        part("text", "no, again"),
        part("text", "the fix"),
    );
    let file = s.file("chat.jsonl", format!("{row}\n").as_bytes());
    s.ok(&["load", "trajectories", file.to_str().unwrap()]);
    let tokenizer = sft.join("tokenizer.json");
    let template = sft.join("chatml_training.jinja");
    let out = s.dir.join("v.jsonl");
    let build = |extra: &[&str]| {
        let mut args = vec![
            "views",
            "build",
            "--tokenizer",
            tokenizer.to_str().unwrap(),
            "--template",
            template.to_str().unwrap(),
            "--pool",
            "A",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        s.run(&args)
    };
    let view = || -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap() };

    let all = build(&["--policy", "all"]);
    let stderr = String::from_utf8_lossy(&all.stderr);
    assert!(all.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 assistant messages in 1 trajectories are marked not trained by their source"),
        "{stderr}"
    );
    assert!(stderr.contains("chat:0 [2]"), "{stderr}");
    let v = view();
    assert_eq!(v["keep_msgs"], serde_json::json!([4]));
    assert_eq!(v["origin"]["source_flags"], "respect");
    assert_eq!(v["origin"]["source_untrained_not_kept"], serde_json::json!([2]));

    let ignore = build(&["--policy", "all", "--source-flags", "ignore"]);
    assert!(ignore.status.success(), "{}", String::from_utf8_lossy(&ignore.stderr));
    assert!(!String::from_utf8_lossy(&ignore.stderr).contains("marked not trained"));
    assert_eq!(view()["keep_msgs"], serde_json::json!([2, 4]));
    assert_eq!(view()["origin"]["source_flags"], "ignore");

    std::fs::remove_file(&out).unwrap();
    let keep = build(&["--policy", "keep:2,4"]);
    let stderr = String::from_utf8_lossy(&keep.stderr);
    assert_eq!(keep.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("keeps message 2, which its source marks as not trained"), "{stderr}");
    assert!(!out.exists(), "nothing is written");
}

/// Issue 9: `views build` on a database without trajectories is an error (not "wrote 0
/// views"), and its hints carry the --db and --tokenizer the user needs.
#[test]
fn views_build_on_a_database_without_trajectories_is_an_error_with_a_full_hint() {
    let s = Scratch::new("views-empty");
    s.ok(&["init"]);
    let tokenizer = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/tokenizer.json");
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/chatml_training.jinja");
    let out = s.dir.join("v.jsonl");
    let args = [
        "views",
        "build",
        "--tokenizer",
        tokenizer.to_str().unwrap(),
        "--template",
        template.to_str().unwrap(),
        "--pool",
        "A",
        "--out",
        out.to_str().unwrap(),
    ];
    let empty = s.run(&args);
    let stderr = String::from_utf8_lossy(&empty.stderr);
    assert_eq!(empty.status.code(), Some(1), "{stderr}");
    let db = s.db();
    assert!(stderr.contains("no trajectories are loaded, so there is nothing to render"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "sphragis --db {} load trajectories FILES... --tokenizer {}",
            db.display(),
            tokenizer.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists());
    let sft = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft");
    s.ok(&["load", "trajectories", sft.join("audit/demo__env-1.traj.json").to_str().unwrap()]);
    let stdout = s.ok(&args);
    assert!(
        stdout.contains(&format!(
            "wrote 1 views to {}; load them with `sphragis --db {} load views {} --tokenizer {}`",
            out.display(),
            db.display(),
            out.display(),
            tokenizer.display()
        )),
        "{stdout}"
    );
}

/// The guide stays true to the command line (issue 30): every `sphragis …` line of the
/// `sh` / `console` blocks of README.md and the task pages parses with the current options,
/// every subcommand has at least one such line, and `sphragis help <command>` ends with them.
#[test]
fn every_guide_example_parses_and_every_command_has_one() {
    let examples = sphragis::cli::guide::examples();
    assert!(examples.len() > 40, "{} examples", examples.len());
    let mut failures = Vec::new();
    for e in &examples {
        let parsed = sphragis::cli::command().try_get_matches_from(&e.words);
        // `sphragis --version` and `--help` are answered by the parser itself
        let answered = |k: clap::error::ErrorKind| {
            matches!(k, clap::error::ErrorKind::DisplayVersion | clap::error::ErrorKind::DisplayHelp)
        };
        if let Err(err) = parsed.map(drop).or_else(|err| if answered(err.kind()) { Ok(()) } else { Err(err) }) {
            failures.push(format!("{}: {}\n    {}", e.page, e.line, err.to_string().lines().next().unwrap_or("")));
        }
    }
    assert!(failures.is_empty(), "guide lines the command line refuses:\n{}", failures.join("\n"));
    let cmd = sphragis::cli::command();
    let missing: Vec<&str> = cmd
        .get_subcommands()
        .map(|c| c.get_name())
        .filter(|name| !examples.iter().any(|e| e.command() == Some(name)))
        .collect();
    assert!(missing.is_empty(), "commands no guide page shows: {missing:?}");
    // the long help ends with them; the short help stays short
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis")).args(["help", "check"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Examples (from the guide"), "{text}");
    assert!(text.contains("sphragis --db sphragis-demo.duckdb check\n      (README.md)"), "{text}");
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis")).args(["check", "-h"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Examples (from the guide"));
}
