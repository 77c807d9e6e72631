//! Issue 10: the review corpus against what review hosts really write — the versioned
//! suggestion rule and what a rule change moves, examples without a target, criteria
//! computed on no information. Small inputs written here; figures worked out by hand.

mod common;

use duckdb::Connection;
use sphragis::ingest::InputKind;
use sphragis::review::load::load;
use sphragis::review::refine::{RefineOptions, Rule, refine};
use sphragis::review::splits;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-hosts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/review")
}

fn opts(version: &str, base: Option<&str>) -> RefineOptions {
    RefineOptions {
        version: version.into(),
        base: base.map(String::from),
        rules: Rule::ALL.to_vec(),
        min_target_chars: 20,
    }
}

/// One example line of sphragis's own format with one comment.
fn example(id: &str, created: &str, message: &str, target: &str) -> String {
    serde_json::json!({
        "example_id": id, "org": "gh", "project": "p", "file_path": "a.rs",
        "hunk": format!("let {id} = 0;\n"), "target": target, "created_at": created,
        "comments": [{"comment_id": format!("{id}-c"), "author_id": "7", "message": message}],
    })
    .to_string()
}

fn ints(conn: &Connection, sql: &str) -> Vec<i64> {
    let mut stmt = conn.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_row([], |r| (0..n).map(|i| r.get::<_, i64>(i)).collect::<Result<Vec<_>, _>>()).unwrap()
}

/// Four examples: a three-backtick suggestion (fence-1 onwards), a four-backtick one
/// with CRLF (fence-2 onwards), a GitLab range (fence-2 onwards), a plain comment.
fn four_examples(dir: &Path) -> sphragis::db::Database {
    let lines = [
        example("e1", "2024-01-01T00:00:00Z", "```suggestion\nlet e1 = 1;\n```", "let e1 = 1;\n"),
        example("e2", "2024-01-02T00:00:00Z", "````suggestion\r\n```\r\nx\r\n```\r\n````", "let e2 = 2;\n"),
        example("e3", "2024-01-03T00:00:00Z", "```suggestion:-0+1\nlet e3 = 3;\n```", "let e3 = 3;\n"),
        example("e4", "2024-01-04T00:00:00Z", "why zero?", "let e4 = 4;\n"),
    ];
    let path = dir.join("gh.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap();
    conn
}

#[test]
fn suggestion_rule_version_is_recorded_and_a_rule_change_is_a_new_version() {
    let dir = scratch("rule-version");
    let conn = four_examples(&dir);
    refine(&conn, &opts("old", None)).unwrap();
    let rule: String =
        conn.query_row("select suggestion_rule from corpus_versions where version = 'old'", [], |r| r.get(0)).unwrap();
    assert_eq!(rule, sphragis::rules::fence::SUGGESTION_RULE);
    assert_eq!(rule, "fence-3");
    // e1, e2, e3 are suggested edits under fence-3
    assert_eq!(
        ints(&conn, "select removed_suggested_edit, kept from refine_removals_v1 where version = 'old' and org = 'gh'"),
        vec![3, 1]
    );

    // make `old` what sphragis 0.1 (fence-1) stored: only e1's three-backtick fence counted
    conn.execute_batch(
        "update corpus_versions set suggestion_rule = 'fence-1' where version = 'old';
         update refine_examples set suggested_edit = false, fence_strict = null, removed_reason = null, kept = true
          where version = 'old' and example_id in ('e2', 'e3');",
    )
    .unwrap();
    // re-refining it under fence-3 would change its figures in place: refused
    let err = refine(&conn, &opts("old", None)).unwrap_err().to_string();
    assert!(err.contains("refined with suggestion rule fence-1") && err.contains("applies fence-3"), "{err}");
    // a new version beside it, reconciled against it: the rule change moves e2 and e3
    refine(&conn, &opts("new", Some("old"))).unwrap();
    let cols = "base_kept, removed, removed_by_new_rules, removed_by_changed_rules, resurrected, added, kept";
    assert_eq!(
        ints(&conn, &format!("select {cols} from reconciliation_v1 where version = 'new' and org = 'gh'")),
        vec![3, 2, 0, 2, 0, 0, 1]
    );
    let (reconciles, from, to): (bool, String, String) = conn
        .query_row(
            "select reconciles, suggestion_rule_base, suggestion_rule from reconciliation_v1 where version = 'new'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((reconciles, from.as_str(), to.as_str()), (true, "fence-1", "fence-3"));
    std::fs::remove_dir_all(dir).unwrap();
}

/// Issue 28 end to end: under fence-3 (CommonMark fences) a reviewer's prose holding an
/// indented code block or a suggestion fence quoted inside an outer fence is kept; a
/// version refined under fence-2 removed both, and the new version beside it resurrects
/// them as changed-rule resurrections, so reconciliation still balances.
#[test]
fn indented_code_and_nested_fences_are_kept_and_a_fence_2_version_reconciles() {
    let dir = scratch("fence-3");
    let lines = [
        example(
            "e1",
            "2024-01-01T00:00:00Z",
            "Compare with the old code:\n\n    ```suggestion\n    let e1 = 1;\n    ```",
            "let e1 = 1;\n",
        ),
        example(
            "e2",
            "2024-01-02T00:00:00Z",
            "To suggest, write:\n````\n```suggestion\nnew line\n```\n````",
            "let e2 = 2;\n",
        ),
        example("e3", "2024-01-03T00:00:00Z", "```suggestion\nlet e3 = 3;\n```", "let e3 = 3;\n"),
        example("e4", "2024-01-04T00:00:00Z", "why zero?", "let e4 = 4;\n"),
    ];
    let path = dir.join("gh.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap();
    refine(&conn, &opts("old", None)).unwrap();
    // only e3 is a suggested edit; e1 and e2 are kept, and the loose selector still shows them
    assert_eq!(
        ints(&conn, "select removed_suggested_edit, kept from refine_removals_v1 where version = 'old' and org = 'gh'"),
        vec![1, 3]
    );
    assert_eq!(
        ints(
            &conn,
            "select count(*) filter (where fence_strict), count(*) filter (where fence_loose) \
             from refine_examples where version = 'old'"
        ),
        vec![1, 3]
    );
    // make `old` what fence-2 stored: e1 and e2 removed as suggested edits
    conn.execute_batch(
        "update corpus_versions set suggestion_rule = 'fence-2' where version = 'old';
         update refine_examples set suggested_edit = true, fence_strict = true, removed_reason = 'suggested_edit', kept = false
          where version = 'old' and example_id in ('e1', 'e2');",
    )
    .unwrap();
    let err = refine(&conn, &opts("old", None)).unwrap_err().to_string();
    assert!(err.contains("refined with suggestion rule fence-2") && err.contains("applies fence-3"), "{err}");
    refine(&conn, &opts("new", Some("old"))).unwrap();
    let cols = "base_kept, removed, resurrected, resurrected_by_changed_rules, added, kept";
    assert_eq!(
        ints(&conn, &format!("select {cols} from reconciliation_v1 where version = 'new' and org = 'gh'")),
        vec![1, 0, 2, 2, 0, 3]
    );
    let reconciles: bool =
        conn.query_row("select reconciles from reconciliation_v1 where version = 'new'", [], |r| r.get(0)).unwrap();
    assert!(reconciles);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn fences_report_counts_structured_suggestions_apart() {
    let dir = scratch("structured");
    let mut lines: Vec<String> = Vec::new();
    // s1: a structured fix only; s2: a structured fix and a fence; s3: a blockquoted fence
    for (id, message, fixes) in [
        ("s1", "see the fix", 1),
        ("s2", "```suggestion\nlet s2 = 1;\n```", 2),
        ("s3", "> ```suggestion\n> x\n> ```", 0),
    ] {
        let mut v: serde_json::Value =
            serde_json::from_str(&example(id, "2024-01-01T00:00:00Z", message, "t\n")).unwrap();
        if fixes > 0 {
            v["comments"][0]["fix_suggestions"] = fixes.into();
        }
        lines.push(v.to_string());
    }
    let path = dir.join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v1", None)).unwrap();
    let cols =
        "examples, suggested_edit, strict, structured, structured_only, gerrit_substring, loose, loose_not_strict";
    assert_eq!(
        ints(&conn, &format!("select {cols} from fence_agreement_v1 where version = 'v1' and org = 'gh'")),
        vec![3, 2, 1, 2, 1, 2, 2, 1]
    );
    assert_eq!(
        ints(&conn, "select removed_suggested_edit, kept from refine_removals_v1 where version = 'v1' and org = 'gh'"),
        vec![2, 1]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn target_in_comment_does_not_judge_examples_without_a_target() {
    // Gerrit query output holds no code: its examples have no target
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let dir = scratch("no-target");
    let change = serde_json::json!({
        "project": "p", "number": 7, "url": "https://gerrit.example.org/7",
        "patchSets": [{"number": 1, "createdOn": 1700000000, "kind": "REWORK",
                       "comments": [{"file": "a.py", "line": 3, "reviewer": {"username": "ann"}, "message": "nit"}]}],
        "comments": [],
    });
    let path = dir.join("q.json");
    std::fs::write(&path, format!("{change}\n{{\"type\":\"stats\",\"rowCount\":1}}\n")).unwrap();
    load(&conn, InputKind::GerritQuery, &path, None, &mut |_| {}).unwrap();
    load(&conn, InputKind::Examples, &samples().join("examples.jsonl"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v1", None)).unwrap();
    let q = |org: &str| {
        ints(
            &conn,
            &format!(
                "select examples, not_judged_no_target, not_judged_suggested_edit, judged, target_in_comment \
                 from target_in_comment_v1 where version = 'v1' and org = '{org}'"
            ),
        )
    };
    assert_eq!(q("example"), vec![1, 1, 0, 0, 0]);
    let share: Option<f64> = conn
        .query_row("select share from target_in_comment_v1 where version = 'v1' and org = 'example'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(share, None, "no judged example: no share, not 0");
    // the samples' figures stand (tests/review_samples.rs target_in_comment_counts):
    // wikimedia 12 built, all with a target, 4 suggested edits, 8 judged, 3 quoted
    assert_eq!(q("wikimedia"), vec![12, 0, 4, 8, 3]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn criteria_flag_a_mix_computed_on_no_suffix() {
    let dir = scratch("no-suffix");
    std::fs::copy(samples().join("orgs.json"), dir.join("orgs.json")).unwrap();
    // the openstack samples with file names that carry no suffix (as Review4Repair's ids)
    let text = std::fs::read_to_string(samples().join("openstack.jsonl")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["file_path"] = format!("file_{i}").into();
            v.to_string()
        })
        .collect();
    std::fs::write(dir.join("bare.jsonl"), lines.join("\n") + "\n").unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(&conn, InputKind::Orgs, &dir.join("orgs.json"), None, &mut |_| {}).unwrap();
    load(&conn, InputKind::Examples, &samples().join("openstack.jsonl"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("with", None)).unwrap();
    splits::compute(&conn, "with", Some("openstack")).unwrap();
    let c = splits::criteria(&conn, "with", "openstack").unwrap();
    assert_eq!(c["no_information"], serde_json::json!([]), "suffixes, times, a suggested edit and targets: all there");

    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(&conn, InputKind::Orgs, &dir.join("orgs.json"), None, &mut |_| {}).unwrap();
    load(&conn, InputKind::Examples, &dir.join("bare.jsonl"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("bare", None)).unwrap();
    splits::compute(&conn, "bare", Some("openstack")).unwrap();
    let c = splits::criteria(&conn, "bare", "openstack").unwrap();
    assert_eq!(c["language_mix_ceiling"], 0.0);
    assert_eq!(c["matched_suffix"]["suffix"], "");
    assert_eq!(c["no_information"], serde_json::json!(["suffix"]));
    std::fs::remove_dir_all(dir).unwrap();
}

/// Loads the hand-written Gerrit REST sample (`data-samples/review/gerrit-rest/`, see its
/// PROVENANCE.md) as org `demo` and refines it with every rule.
fn gerrit_rest_sample(dir: &Path, bom: bool) -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for name in ["changes.json", "4711-comments.json"] {
        let mut bytes = if bom { b"\xef\xbb\xbf".to_vec() } else { Vec::new() };
        bytes.extend(std::fs::read(samples().join("gerrit-rest").join(name)).unwrap());
        std::fs::write(dir.join(name), bytes).unwrap();
        load(&conn, InputKind::GerritRest, &dir.join(name), Some("demo"), &mut |_| {}).unwrap();
    }
    refine(&conn, &opts("v1", None)).unwrap();
    conn
}

#[test]
fn gerrit_rest_fix_suggestions_service_users_and_host_messages() {
    let dir = scratch("rest");
    let conn = gerrit_rest_sample(&dir, false);
    // 7 examples: patch sets 1, 2, 3 of change 4711 (change messages) and threads c1, c3,
    // c4, c5 (inline comments). Patch set 1 holds only Gerrit's "Uploaded patch set 1."
    // and thread c4 only the SERVICE_USER's comment: service_account. Patch set 3 is a
    // TRIVIAL_REBASE: rebase_successor. c1 (fix_suggestions) and c3 (~~~suggestion):
    // suggested_edit. Kept: patch set 2 (bo's message) and c5 (a quoted fence).
    let cols = "built, removed_service_account, removed_rebase_successor, removed_suggested_edit, removed_applied_fix, \
                removed_duplicate, kept, service_comments, service_comments_dropped, host_messages, host_messages_dropped";
    assert_eq!(
        ints(&conn, &format!("select {cols} from refine_removals_v1 where version = 'v1' and org = 'demo'")),
        vec![7, 2, 1, 2, 0, 0, 2, 2, 2, 3, 3]
    );
    // fences: structured c1 apart from fenced c3; c5's quoted fence is Gerrit's and loose only
    let cols = "suggested_edit, strict, structured, structured_only, gerrit_substring, loose, strict_not_gerrit, \
                gerrit_not_strict, loose_not_strict";
    assert_eq!(
        ints(&conn, &format!("select {cols} from fence_agreement_v1 where version = 'v1' and org = 'demo'")),
        vec![2, 1, 1, 1, 1, 2, 1, 1, 1]
    );
    let kept: Vec<String> = conn
        .prepare("select example_id from refine_examples where version = 'v1' and kept order by 1")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(kept, ["demo:4711:2", "demo:4711:3:c5"]);
    // no target in a REST response: nothing judged for target_in_comment
    assert_eq!(
        ints(
            &conn,
            "select not_judged_no_target, judged from target_in_comment_v1 where version = 'v1' and org = 'demo'"
        ),
        vec![7, 0]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gerrit_rest_accepts_a_utf8_bom() {
    let dir = scratch("rest-bom");
    let conn = gerrit_rest_sample(&dir, true);
    assert_eq!(
        ints(&conn, "select count(*), count(*) filter (where kept) from refine_examples where version = 'v1'"),
        vec![7, 2]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn examples_show_the_prompt_comments_and_a_real_json_stamp() {
    let dir = scratch("examples");
    let db = dir.join("x.duckdb");
    let conn = sphragis::db::open(&db).unwrap();
    load(&conn, InputKind::Orgs, &samples().join("orgs.json"), None, &mut |_| {}).unwrap();
    load(&conn, InputKind::Examples, &samples().join("openstack.jsonl"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v3", None)).unwrap();
    splits::compute(&conn, "v3", Some("openstack")).unwrap();
    let table = splits::examples(&conn, "v3", "openstack", "pilot", false).unwrap();
    let json: serde_json::Value = serde_json::from_str(&sphragis::report::render_json(&table).unwrap()).unwrap();
    assert_eq!(json["kind"], "view");
    assert_eq!(json["name"], "split_examples_v2");
    assert_eq!(json["filter"], "version = 'v3' and org = 'openstack' and split = 'pilot'");
    // the one pilot example (tests/review_splits.rs criteria_by_hand: pilot 1) and its comment
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["example_id"], "os-830001-p1");
    assert_eq!(rows[0]["comments"], 1);
    // the prompt is a list column: a JSON array of the kept comments
    let prompt = rows[0]["prompt"].as_array().unwrap();
    assert_eq!(prompt.len(), 1);
    assert!(prompt[0].to_string().contains("This is too chatty for info level."), "{prompt:?}");
    // the sealed window needs --unseal
    let err = splits::examples(&conn, "v3", "openstack", "test", false).unwrap_err().to_string();
    assert!(err.contains("opens only with --unseal"), "{err}");
    drop(conn);
    // the stamp's query answers the same in a stock DuckDB connection (no sphragis functions)
    let stock = Connection::open(&db).unwrap();
    let n: i64 = stock
        .query_row(&format!("select count(*) from ({})", json["query"].as_str().unwrap()), [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Two database files in `dir` for `diff --against`: `this.duckdb`, examples e1 (a
/// suggested edit) and e4 refined as v3 with every rule; `other.duckdb`, the same
/// examples and e5, refined as v3 without the suggestion rule.
fn files_to_compare(dir: &Path) -> (PathBuf, PathBuf) {
    let this = dir.join("this.duckdb");
    {
        let conn = sphragis::db::open(&this).unwrap();
        let path = dir.join("gh.jsonl");
        let lines = [
            example("e1", "2024-01-01T00:00:00Z", "```suggestion\nlet e1 = 1;\n```", "let e1 = 1;\n"),
            example("e4", "2024-01-04T00:00:00Z", "why zero?", "let e4 = 4;\n"),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap();
        refine(&conn, &opts("v3", None)).unwrap();
    }
    let other = dir.join("other.duckdb");
    {
        let conn = sphragis::db::open(&other).unwrap();
        let path = dir.join("gh2.jsonl");
        let lines = [
            example("e1", "2024-01-01T00:00:00Z", "```suggestion\nlet e1 = 1;\n```", "let e1 = 1;\n"),
            example("e4", "2024-01-04T00:00:00Z", "why zero?", "let e4 = 4;\n"),
            example("e5", "2024-01-05T00:00:00Z", "and here?", "let e5 = 5;\n"),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap();
        let rules = vec![Rule::ServiceAccount, Rule::RebaseSuccessor, Rule::Duplicate];
        refine(&conn, &RefineOptions { rules, ..opts("v3", None) }).unwrap();
    }
    (this, other)
}

#[test]
fn diff_against_another_database_file() {
    let dir = scratch("diff-files");
    let (this, other) = files_to_compare(&dir);
    let conn = sphragis::db::open_read_only(&this).unwrap();
    // v3 here keeps e4 (e1 is a suggested edit); v3 there keeps e1, e4, e5:
    // 1 - 0 removed + 1 resurrected (e1) + 1 added (e5) = 3
    let table = sphragis::review::diff::diff_files(&conn, &this, "v3", &other, "v3", false).unwrap();
    let json: serde_json::Value = serde_json::from_str(&sphragis::report::render_json(&table).unwrap()).unwrap();
    let all = json["rows"].as_array().unwrap().iter().find(|r| r["org"] == "(all)").unwrap().clone();
    let got: Vec<i64> = ["kept_a", "kept_b", "removed", "resurrected", "added", "dropped"]
        .iter()
        .map(|k| all[*k].as_i64().unwrap())
        .collect();
    assert_eq!(got, vec![1, 3, 0, 1, 1, 0]);
    assert_eq!(all["reconciles"], true);
    assert_eq!(json["arguments"], "'this:v3', 'other:v3'");
    let err = sphragis::review::diff::diff_files(&conn, &this, "v3", &other, "v9", false).unwrap_err().to_string();
    assert!(err.contains("version v9 does not exist in this file"), "{err}");
    // the report views across the two files: removals (all) kept 1 -> 3, the suggested
    // edit e1 no longer removed (1 -> 0), built 2 -> 3
    let removals = sphragis::review::diff::reports_to_compare(&["removals".to_string()]).unwrap();
    let tables = sphragis::review::diff::diff_reports_files(&conn, &this, "v3", &other, "v3", &removals).unwrap();
    let json: serde_json::Value = serde_json::from_str(&sphragis::report::render_json(&tables[0]).unwrap()).unwrap();
    let pair = |figure: &str| {
        let r = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["row_key"] == "org=(all)" && r["figure"] == figure)
            .unwrap();
        (r["value_a"].as_str().unwrap().to_string(), r["value_b"].as_str().unwrap().to_string())
    };
    assert_eq!(pair("kept"), ("1".into(), "3".into()));
    assert_eq!(pair("built"), ("2".into(), "3".into()));
    assert_eq!(pair("removed_suggested_edit"), ("1".into(), "0".into()));
    assert_eq!(json["arguments"], "'refine_removals_v2', ['org'], 'this:v3', 'other:v3'");
    // reports over tables that are not per version cannot be compared across files
    let labels = sphragis::review::diff::reports_to_compare(&["labels".to_string()]).unwrap();
    let err =
        sphragis::review::diff::diff_reports_files(&conn, &this, "v3", &other, "v3", &labels).unwrap_err().to_string();
    assert!(err.contains("report labels cannot be compared across two files"), "{err}");
    // `--reports all` across two files leaves those out and says which (it failed on
    // reconciliation, which the user never named: found by a fresh tester)
    let all = sphragis::review::diff::reports_to_compare(&[]).unwrap();
    let (kept, left) = sphragis::review::diff::across_files(all.clone());
    let left_names: Vec<&str> = left.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(left_names, ["reconciliation", "criteria", "labels"]);
    assert_eq!(kept.len(), all.len() - 3);
    let tables = sphragis::review::diff::diff_reports_files(&conn, &this, "v3", &other, "v3", &kept).unwrap();
    assert_eq!(tables.len(), kept.len());
    drop(conn);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Fault kind: a database's lock released by a second open of it in one process.
/// `diff --against` opened and closed the compared files beside the connection that held
/// the first one (found with strace): closing any descriptor of a file releases every
/// POSIX lock the process holds on it, DuckDB's included, so a writer could get in while
/// diff still read. The file compared with itself (by its path, or a hard link) is now read
/// through the one connection, and comparing with another file leaves the lock held.
#[test]
fn diff_against_the_same_file_keeps_the_lock() {
    let dir = scratch("diff-same");
    let (this, other) = files_to_compare(&dir);
    let link = dir.join("link.duckdb");
    std::fs::hard_link(&this, &link).unwrap();
    let conn = sphragis::db::open_read_only(&this).unwrap();
    assert!(!common::write_lock_is_free(&this), "DuckDB holds its lock");
    let removals = sphragis::review::diff::reports_to_compare(&["removals".to_string()]).unwrap();
    for against in [&this, &link, &other] {
        let table = sphragis::review::diff::diff_files(&conn, &this, "v3", against, "v3", false).unwrap();
        let json: serde_json::Value = serde_json::from_str(&sphragis::report::render_json(&table).unwrap()).unwrap();
        let all = json["rows"].as_array().unwrap().iter().find(|r| r["org"] == "(all)").unwrap().clone();
        // v3 against itself: 1 kept on both sides, nothing moved; against the other file as above
        let kept_b = if against == &other { 3 } else { 1 };
        assert_eq!((all["kept_a"].as_i64(), all["kept_b"].as_i64()), (Some(1), Some(kept_b)), "{against:?}");
        assert_eq!(all["reconciles"], true);
        sphragis::review::diff::diff_reports_files(&conn, &this, "v3", against, "v3", &removals).unwrap();
        assert!(!common::write_lock_is_free(&this), "diff --against {against:?} released the lock on this file");
    }
    drop(conn);
    assert!(common::write_lock_is_free(&this), "the probe sees a free lock");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Issue 28: Gerrit robot comments (`GET /changes/{id}/robotcomments`, the sample's
/// `4711-robotcomments.json`: r1 and r2 by pyflakes, r1 with a structured fix, r3 by
/// spellcheck; no account carries SERVICE_USER) are never a reviewer's. With the
/// `robot_comment` rule the three robot-only threads are removed under their own reason;
/// without it they are kept, and `robot_comments_kept` fails; r1's fix is never a
/// suggested edit either way.
#[test]
fn robot_comments_are_dropped_counted_apart_and_never_suggested_edits() {
    let dir = scratch("robots");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for name in ["changes.json", "4711-comments.json", "4711-robotcomments.json"] {
        load(&conn, InputKind::GerritRest, &samples().join("gerrit-rest").join(name), Some("demo"), &mut |_| {})
            .unwrap();
    }
    refine(&conn, &opts("v1", None)).unwrap();
    let mut without = opts("v0", None);
    without.rules.retain(|r| *r != Rule::RobotComment);
    refine(&conn, &without).unwrap();
    // v1: the 7 examples of the comments sample (see the test above) and the 3 robot threads
    let cols = "built, removed_service_account, removed_robot_comment, removed_rebase_successor, \
                removed_suggested_edit, kept, service_comments, service_comments_dropped, robot_comments, \
                robot_comments_dropped, comments";
    assert_eq!(
        ints(&conn, &format!("select {cols} from refine_removals_v2 where version = 'v1' and org = 'demo'")),
        vec![10, 2, 3, 1, 2, 2, 2, 2, 3, 3, 14]
    );
    // v0: the robot threads are kept, r1's structured fix does not make a suggested edit
    assert_eq!(
        ints(&conn, &format!("select {cols} from refine_removals_v2 where version = 'v0' and org = 'demo'")),
        vec![10, 2, 0, 1, 2, 5, 2, 2, 3, 0, 14]
    );
    let share: f64 = conn
        .query_row("select robot_share from refine_removals_v2 where version = 'v1' and org = 'demo'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(share, 3.0 / 14.0);
    // fence figures: only c1's structured fix, as before the robot comments were loaded
    assert_eq!(
        ints(&conn, "select structured, structured_only from fence_agreement_v2 where version = 'v0' and org = 'demo'"),
        vec![1, 1]
    );
    // the analyzers, from the loaded comments: (comments, examples, with a fix, fixes, org's comments)
    let robots: Vec<(String, i64, i64, i64, i64, i64)> = conn
        .prepare(
            "select robot_id, comments, examples, with_fix_suggestions, fix_suggestions, org_comments \
             from review_robots_v1 where org = 'demo' order by robot_id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(robots, [("pyflakes".to_string(), 2, 2, 1, 1, 14), ("spellcheck".to_string(), 1, 1, 0, 0, 14)]);
    // the check: v0 keeps 3 examples whose prompt is a robot's (of 5 kept); v1 passes
    let verdict = |scope: &str| -> (String, i64, i64) {
        conn.query_row(
            "select status, failing, tested from check_findings_v1 where check_name = 'robot_comments_kept' and scope = ?",
            [scope],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    assert_eq!(verdict("version=v0 org=demo"), ("fail".to_string(), 3, 5));
    assert_eq!(verdict("version=v1 org=demo"), ("pass".to_string(), 0, 2));
    std::fs::remove_dir_all(dir).unwrap();
}

/// A circle of bases (noticed in a hostile review): v3 refined on v4 while v4 was refined
/// on v3 was accepted, and reconciliation was false on every row with nothing saying
/// why. Refining a version on a base built on it, directly or through other bases, is
/// refused with the chain, and the file is unchanged; a base off the chain is accepted.
#[test]
fn circular_bases_are_refused_with_the_chain() {
    let dir = scratch("circle");
    let conn = four_examples(&dir);
    refine(&conn, &opts("v3", None)).unwrap();
    refine(&conn, &opts("v4", Some("v3"))).unwrap();
    refine(&conn, &opts("v5", Some("v4"))).unwrap();
    let bases = |conn: &Connection| -> Vec<(String, Option<String>)> {
        let mut stmt = conn.prepare("select version, base_version from corpus_versions order by version").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    };
    let before = bases(&conn);
    let direct = refine(&conn, &opts("v3", Some("v4"))).unwrap_err().to_string();
    assert!(direct.contains("version v3 cannot be refined on base v4: v4 is built on v3 (v4 on v3)"), "{direct}");
    let through = refine(&conn, &opts("v3", Some("v5"))).unwrap_err().to_string();
    assert!(through.contains("v5 is built on v3 (v5 on v4 on v3)"), "{through}");
    assert_eq!(bases(&conn), before, "a refused refine changes nothing");
    assert_eq!(sphragis::review::refine::circle_of_bases(&conn, "v5", "v3").unwrap(), None);
    refine(&conn, &opts("v4", Some("v3"))).unwrap();
    refine(&conn, &opts("v6", Some("v5"))).unwrap();
    assert_eq!(bases(&conn).len(), 4);
}
