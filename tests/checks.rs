//! `sphragis check` (issue 26): every default check fires on a planted fault with the
//! count worked out by hand, passes where the fault is absent, and says `not-run` (with its
//! reason) when its inputs are absent; the status rule of the SQL equals the Rust one;
//! checks.toml, --baseline, --fail-on, exit codes, JUnit and the history across runs.
//!
//! Planted faults and their counts, by hand:
//! - SFT audit samples (`data-samples/sft/audit/`, figures in tests/sft_audit_samples.rs):
//!   training views A:env, A:fix, C1:fix, C2:fix, B:env supervise 3+3+3+2+2 = 13
//!   positions, 6 distinct: duplicate_supervised_positions fails 13 - 6 = 7 of 13.
//! - Evaluation runs (`data-samples/runs/`, README there): base leaves demo__e-5 without an
//!   outcome (1 of 5); ft1 counts demo__e-5's evaluator error (1 of 5 graded), its two
//!   files disagree on demo__c-3 (1 of the 2 instances stated twice) and re-ran d and e
//!   after a RetryError (2 of 5); ft2's results.json lists a, b, d resolved, so c and e are
//!   implied unresolved (2 of 5); ft1 (2 batches) and ft2-resumed (--continues) are
//!   continued runs.
//! - Review samples (the demo): v2 keeps its suggested edits (refined without the rule).

use sphragis::check::{self, CHECKS, Finding, Status, Truncation, config::Config};
use std::path::{Path, PathBuf};
use std::process::Command;

fn memory() -> sphragis::db::Database {
    sphragis::db::open(Path::new(":memory:")).unwrap()
}

fn findings(conn: &duckdb::Connection) -> Vec<Finding> {
    check::findings(conn, Truncation::default()).unwrap()
}

/// `(status, tested, failing)` of one check and scope, as `"status failing/tested"`.
fn figure(all: &[Finding], check: &str, scope: &str) -> String {
    let f = all.iter().find(|f| f.check_name == check && f.scope == scope).unwrap_or_else(|| {
        panic!("no {check} [{scope}] in {:?}", all.iter().map(|f| (&f.check_name, &f.scope)).collect::<Vec<_>>())
    });
    let n = |x: Option<i64>| x.map_or("-".into(), |x| x.to_string());
    format!("{} {}/{}", f.status.as_str(), n(f.failing), n(f.tested))
}

fn audit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/audit")
}

fn load_audit(conn: &duckdb::Connection) {
    let d = audit_dir();
    for t in ["demo__env-1.traj.json", "demo__fix-2.traj.json", "broken__lint-3.traj.json", "thinking.jsonl"] {
        sphragis::sft::store::load_trajectories(conn, &d.join(t), None).unwrap();
    }
    sphragis::sft::views::load(conn, &d.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    sphragis::sft::pools::load(conn, &d.join("pools.json")).unwrap();
    sphragis::sft::pools::load_manifest(conn, &d.join("manifest.json")).unwrap();
}

fn load_views(conn: &duckdb::Connection, dir: &Path, name: &str, lines: &[String]) {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    sphragis::sft::views::load(conn, &path, &Default::default(), &mut |_| {}).unwrap();
}

/// A view of 8 tokens with message i at position i (as the audit samples), its mask given.
fn view(id: &str, pool: &str, instance: &str, mask: [u8; 8]) -> String {
    let roles = ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"];
    let spans: Vec<String> = roles
        .iter()
        .enumerate()
        .map(|(i, r)| format!(r#"{{"index": {i}, "role": "{r}", "start": {i}, "end": {}}}"#, i + 1))
        .collect();
    format!(
        r#"{{"view_id": "{id}", "pool": "{pool}", "instance_id": "{instance}", "input_ids": [11, 12, 13, 14, 15, 16, 17, 18], "loss_mask": {mask:?}, "message_spans": [{}], "span_end": "exclusive"}}"#,
        spans.join(", ")
    )
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-checks-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn on_an_empty_database_every_check_is_not_run_with_its_reason() {
    let conn = memory();
    let all = findings(&conn);
    let mut names: Vec<&str> = all.iter().map(|f| f.check_name.as_str()).collect();
    names.sort();
    let mut listed: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
    listed.sort();
    assert_eq!(names, listed, "one row per check of the catalogue, each once");
    for f in &all {
        assert_eq!(f.status, Status::NotRun, "{f:?}");
        assert_eq!(f.scope, "corpus", "{f:?}");
        assert!(f.reason.as_deref().is_some_and(|r| !r.is_empty()), "a not-run check says why: {f:?}");
        let info = CHECKS.iter().find(|c| c.name == f.check_name).unwrap();
        assert_eq!(info.area, f.area, "{}", f.check_name);
    }
    let reason = |c: &str| all.iter().find(|f| f.check_name == c).unwrap().reason.clone().unwrap();
    assert_eq!(reason("contract_trains_nothing"), "no SFT views loaded (load views FILE)");
    assert_eq!(reason("instances_without_outcome"), "no evaluation run loaded (load run NAME --model M DIR)");
    assert_eq!(reason("frozen_version_verifies"), "no version frozen (freeze --version V)");
    assert_eq!(reason("ingest_anomalies"), "no input loaded (load KIND FILE)");
}

#[test]
fn sft_audit_samples_duplicate_positions_and_pool_checks_by_hand() {
    let conn = memory();
    load_audit(&conn);
    let all = findings(&conn);
    assert_eq!(figure(&all, "duplicate_supervised_positions", "training pools"), "warn 7/13");
    // every view trains something and its kept messages too
    for (pool, views) in [("A", 2), ("B", 1), ("C1", 1), ("C2", 1), ("C3", 1)] {
        assert_eq!(
            figure(&all, "contract_trains_nothing", &format!("pool={pool}")),
            format!("pass 0/{views}"),
            "{pool}"
        );
    }
    // broken__lint is protected, but its only view is C3's, a report-only pool
    assert_eq!(figure(&all, "protected_family_in_training", "pool=A"), "pass 0/2");
    assert_eq!(figure(&all, "protected_family_in_training", "pool=C3"), "not-run 0/0");
    // one recovery view: the 3 longest hold everything, nothing to judge
    let c = all.iter().find(|f| f.check_name == "recovery_concentration").unwrap();
    assert_eq!(
        (c.status, c.reason.as_deref()),
        (Status::NotRun, Some("1 recovery views: the 3 longest hold everything"))
    );
    // loaded without a tokenizer: the segment checks cannot run and say so
    let s = all.iter().find(|f| f.check_name == "end_of_turn_never_trained" && f.scope == "pool=A").unwrap();
    assert_eq!(s.status, Status::NotRun);
    assert!(s.reason.as_deref().unwrap().starts_with("segments unknown"), "{s:?}");
    // no tokenizer: vocabulary bounds unknown, not passed
    assert_eq!(figure(&all, "contract_vocab", "pool=A"), "not-run 0/0");
}

#[test]
fn planted_sft_faults_fire_with_their_counts() {
    let dir = temp("sft");
    let conn = memory();
    load_views(
        &conn,
        &dir,
        "views.jsonl",
        &[
            // trains nothing: a collator that masked everything
            view("P:all-masked", "P", "x__a-1", [0; 8]),
            view("P:ok", "P", "x__b-2", [0, 0, 1, 0, 1, 0, 1, 0]),
            view("P:ok2", "P", "x__c-3", [0, 0, 1, 0, 1, 0, 1, 0]),
        ],
    );
    // another producer's convention in the same pool: labels with -100
    let labels = r#"{"view_id": "P:labels", "pool": "P", "instance_id": "x__d-4", "input_ids": [11, 12, 13], "labels": [-100, 12, -100]}"#;
    load_views(&conn, &dir, "labels.jsonl", &[labels.to_string()]);
    let manifest = dir.join("manifest.json");
    std::fs::write(&manifest, r#"{"protected_families": ["x__b"]}"#).unwrap();
    sphragis::sft::pools::load_manifest(&conn, &manifest).unwrap();
    let all = findings(&conn);
    assert_eq!(figure(&all, "contract_trains_nothing", "pool=P"), "fail 1/4");
    assert_eq!(figure(&all, "mask_conventions_disagree", "pool=P"), "warn 1/4");
    assert_eq!(figure(&all, "protected_family_in_training", "pool=P"), "fail 1/4");
    // no view is longer than 32,768 tokens: nothing is cut
    assert_eq!(figure(&all, "trains_nothing_after_truncation", "pool=P max_length=32768 side=right"), "pass 0/4");
    // at 4 tokens (right), P:ok and P:ok2 keep position 2 only; at 2 tokens nothing
    // supervised survives in them (P:labels keeps its position 1)
    let cut = check::findings(&conn, Truncation { max_length: 2, side: "right" }).unwrap();
    assert_eq!(figure(&cut, "trains_nothing_after_truncation", "pool=P max_length=2 side=right"), "fail 2/4");
    assert_eq!(figure(&cut, "final_report_lost_after_truncation", "pool=P max_length=2 side=right"), "warn 2/4");
    // left truncation to 2 keeps positions 6, 7: both keep their last supervised position
    let left = check::findings(&conn, Truncation { max_length: 2, side: "left" }).unwrap();
    assert_eq!(figure(&left, "trains_nothing_after_truncation", "pool=P max_length=2 side=left"), "pass 0/4");
    let _ = std::fs::remove_dir_all(&dir);
}

fn runs_db() -> sphragis::db::Database {
    use sphragis::eval::load::{RunSpec, check_spec, expand, load_file};
    let conn = memory();
    let s = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/runs");
    for (name, model, continues) in [
        ("base", "base-7b", None),
        ("ft1", "ft-a", None),
        ("ft2", "ft-b", None),
        ("ft2-repeat", "ft-b", None),
        ("ft2-resumed", "ft-b", Some("ft2")),
    ] {
        let spec = RunSpec {
            name: name.into(),
            model: model.into(),
            harness: Some("mini-swe-agent 1.15.0".into()),
            continues: continues.map(str::to_string),
            runaway_turns: 3,
        };
        check_spec(&conn, &spec).unwrap();
        let (files, _) = expand(&[s.join(name)]).unwrap();
        for f in &files {
            load_file(&conn, &spec, f).unwrap();
        }
    }
    conn
}

#[test]
fn evaluation_run_faults_fire_with_their_counts() {
    let conn = runs_db();
    let all = findings(&conn);
    assert_eq!(figure(&all, "instances_without_outcome", "run=base"), "fail 1/5");
    assert_eq!(figure(&all, "instances_without_outcome", "run=ft1"), "pass 0/5");
    assert_eq!(figure(&all, "evaluator_errors_counted", "run=ft1"), "fail 1/5");
    // base has no run-level report: its rates are graded-only, nothing to judge
    assert_eq!(figure(&all, "evaluator_errors_counted", "run=base"), "not-run -/-");
    assert_eq!(figure(&all, "infra_failures", "run=ft1"), "pass 0/5");
    // ft2 graded e (implied unresolved), ft1 did not (an evaluator error): 1 of the 5
    assert_eq!(figure(&all, "pair_attrition", "run_a=ft1 run_b=ft2"), "warn 1/5");
    assert_eq!(figure(&all, "outcome_sources_disagree", "run=ft1"), "fail 1/2");
    assert_eq!(figure(&all, "outcome_sources_disagree", "run=ft2"), "not-run -/-");
    assert_eq!(figure(&all, "rerun_after_retry_error", "run=ft1"), "warn 2/5");
    assert_eq!(figure(&all, "implied_unresolved", "run=ft2"), "warn 2/5");
    assert_eq!(figure(&all, "implied_unresolved", "run=ft2-repeat"), "pass 0/5");
    assert_eq!(figure(&all, "continued_run", "run=ft2-resumed"), "info 1/1");
    assert_eq!(figure(&all, "continued_run", "run=ft1"), "info 1/1");
    assert_eq!(figure(&all, "continued_run", "run=ft2"), "pass 0/1");
}

/// Loads `files` of `data-samples/review/` (orgs, examples or labels, by name) into `conn`.
fn load_review(conn: &duckdb::Connection, files: &[&str]) {
    use sphragis::ingest::InputKind;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/review");
    for f in files {
        let kind = match *f {
            "orgs.json" => InputKind::Orgs,
            "labels.jsonl" => InputKind::Labels,
            _ => InputKind::Examples,
        };
        sphragis::review::load::load(conn, kind, &dir.join(f), None, &mut |_| {}).unwrap();
    }
}

fn refine_v3(conn: &duckdb::Connection) {
    use sphragis::review::refine::{RefineOptions, Rule, refine};
    let opts = RefineOptions { version: "v3".into(), base: None, rules: Rule::ALL.to_vec(), min_target_chars: 20 };
    refine(conn, &opts).unwrap();
}

/// Writes label-audit items naming examples the samples do not hold and loads them.
fn load_foreign_labels(conn: &duckdb::Connection, dir: &Path) {
    let path = dir.join("foreign-labels.jsonl");
    std::fs::write(
        &path,
        "{\"item_id\": 6, \"example_id\": \"os-999000-z1\", \"rater\": \"A\", \"label\": \"valid\"}\n\
         {\"item_id\": 7, \"example_id\": \"os-999100-z2\", \"rater\": \"C\", \"label\": \"invalid\"}\n",
    )
    .unwrap();
    sphragis::review::load::load(conn, sphragis::ingest::InputKind::Labels, &path, None, &mut |_| {}).unwrap();
}

#[test]
fn label_items_unknown_example_fires_with_its_count() {
    // data-samples/review/labels.jsonl: 13 items (raters A 5, B 5, human 3), every example
    // in openstack.jsonl; two more items name examples no file holds (raters A and C).
    let dir = temp("unknown-labels");
    let reason = |all: &[Finding], check: &str| {
        all.iter().find(|f| f.check_name == check).and_then(|f| f.reason.clone()).unwrap_or_default()
    };
    let conn = memory();
    load_review(&conn, &["labels.jsonl"]);
    let all = findings(&conn);
    assert_eq!(figure(&all, "label_items_unknown_example", "corpus"), "not-run -/-");
    assert_eq!(
        reason(&all, "label_items_unknown_example"),
        "no review example loaded to match the 13 label-audit items with (load examples FILE)"
    );
    load_review(&conn, &["orgs.json", "openstack.jsonl"]);
    refine_v3(&conn);
    let all = findings(&conn);
    assert_eq!(figure(&all, "label_items_unknown_example", "corpus"), "pass 0/13");
    load_foreign_labels(&conn, &dir);
    let all = findings(&conn);
    assert_eq!(figure(&all, "label_items_unknown_example", "corpus"), "warn 2/15");
    let f = all.iter().find(|f| f.check_name == "label_items_unknown_example").unwrap();
    assert_eq!(f.detail.as_deref(), Some("2 of 4 raters"));
    // the drill-down lists the two items, in stock DuckDB SQL
    let listed: Vec<String> = conn
        .prepare(&format!("select example_id from ({})", f.drill_down.as_deref().unwrap()))
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(listed, ["os-999000-z1", "os-999100-z2"]);
    // the valid share of kept examples is untouched by them: rater A 3 of 4 valid (tests/review_splits.rs)
    assert_eq!(figure(&all, "label_audit_valid_share", "version=v3 rater=A"), "pass 1/4");

    // no labels at all, then labels of no kept example: two different reasons
    let conn = memory();
    load_review(&conn, &["orgs.json", "openstack.jsonl"]);
    refine_v3(&conn);
    let all = findings(&conn);
    assert_eq!(reason(&all, "label_audit_valid_share"), "no label-audit item loaded (load labels FILE)");
    assert_eq!(reason(&all, "label_items_unknown_example"), "no label-audit item loaded (load labels FILE)");
    load_foreign_labels(&conn, &dir);
    let all = findings(&conn);
    assert_eq!(figure(&all, "label_audit_valid_share", "version=v3"), "not-run -/-");
    assert_eq!(
        reason(&all, "label_audit_valid_share"),
        "none of the 2 loaded label-audit items is of an example the version keeps"
    );
    assert_eq!(figure(&all, "label_items_unknown_example", "corpus"), "warn 2/2");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_sql_status_rule_is_the_rust_one_on_every_row() {
    for conn in [runs_db(), {
        let c = memory();
        load_audit(&c);
        c
    }] {
        for f in findings(&conn) {
            let mut again = f.clone();
            again.rejudge();
            assert_eq!(again.status, f.status, "{f:?}");
            if let Some(t) = f.tested.filter(|t| *t > 0) {
                let share = f.failing.unwrap() as f64 / t as f64;
                assert_eq!(f.share, Some(share), "{f:?}");
            }
        }
    }
}

#[test]
fn config_changes_severity_conditions_scopes_and_enabled() {
    let conn = runs_db();
    let config = Config::parse(
        "[checks.instances_without_outcome]\nseverity = \"warn\"\n\n[checks.implied_unresolved]\nseverity = \"error\"\n\
         error_if = \"share >= 0.4\"\nscopes = [\"run=ft2\"]\n\n[checks.continued_run]\nenabled = false\n",
        "checks.toml",
    )
    .unwrap();
    let all = config.apply(findings(&conn));
    assert_eq!(figure(&all, "instances_without_outcome", "run=base"), "warn 1/5");
    // 2 of 5 = 0.4 >= 0.4
    assert_eq!(figure(&all, "implied_unresolved", "run=ft2"), "fail 2/5");
    assert!(!all.iter().any(|f| f.check_name == "implied_unresolved" && f.scope != "run=ft2"));
    assert!(!all.iter().any(|f| f.check_name == "continued_run"));
    let stricter =
        Config::parse("[checks.implied_unresolved]\nseverity = \"error\"\nerror_if = \"share > 0.4\"\n", "c").unwrap();
    // 0.4 > 0.4 does not hold: no failure, but the default warn_if (failing > 0) still warns
    assert_eq!(figure(&stricter.apply(findings(&conn)), "implied_unresolved", "run=ft2"), "warn 2/5");
    let quiet = Config::parse("[checks.implied_unresolved]\nwarn_if = \"\"\n", "c").unwrap();
    assert_eq!(figure(&quiet.apply(findings(&conn)), "implied_unresolved", "run=ft2"), "pass 2/5");
}

/// The sphragis binary cargo built for these tests.
fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sphragis"))
}

fn demo(dir: &Path) -> PathBuf {
    let out = bin()
        .current_dir(dir)
        .args(["demo", "--quiet", "--samples"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("verdict (sphragis --db sphragis-demo.duckdb check):"), "the demo ends with the verdict");
    dir.join("sphragis-demo.duckdb")
}

fn check_json(db: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = bin().arg("--db").arg(db).arg("check").args(["--format", "json"]).args(args).output().unwrap();
    let code = out.status.code().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {} {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    (code, json)
}

fn status_of(json: &serde_json::Value, check: &str, scope: &str) -> String {
    let f = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check_name"] == check && f["scope"] == scope)
        .unwrap_or_else(|| panic!("no {check} [{scope}]"));
    format!("{} {}/{}", f["status"].as_str().unwrap(), f["failing"], f["tested"])
}

#[test]
fn demo_database_fails_with_exit_4_and_gates_by_fail_on_only_and_config() {
    let dir = temp("demo");
    let db = demo(&dir);
    let (code, json) = check_json(&db, &[]);
    assert_eq!(code, 4, "the demo's samples plant faults: exit 4");
    assert_eq!(json["failed"], true);
    // v2 was refined without the suggested-edit rule: it keeps them; v3 removes them all
    let kept = |v: &str| {
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["check_name"] == "suggested_edit_kept"
                    && f["scope"].as_str().unwrap().starts_with(&format!("version={v} "))
            })
            .map(|f| f["failing"].as_i64().unwrap_or(0))
            .sum::<i64>()
    };
    assert!(kept("v2") > 0, "v2 keeps suggested edits");
    assert_eq!(kept("v3"), 0, "v3 removes every suggested edit");
    // the demo verified v3 after freezing it: recorded, clean
    assert_eq!(status_of(&json, "frozen_version_verifies", "version=v3"), "pass 0/1");
    // the same figures, for v3 only: the review errors are gone
    let (_, v3) = check_json(&db, &["--version", "v3", "--only", "review"]);
    assert!(
        v3["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["area"] == "review" && f["scope"].as_str().is_none_or(|s| !s.contains("version=v2")))
    );
    // only ingest: nothing fails at error; at warn whatever warns does
    let (code, only) = check_json(&db, &["--only", "ingest"]);
    assert_eq!(code, 0, "{only}");
    // a config that downgrades every failing check to warn: exit 0 at --fail-on error, 4 at warn
    let failing: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "fail")
        .map(|f| f["check_name"].as_str().unwrap().to_string())
        .collect();
    let mut toml = String::new();
    for name in failing.iter().collect::<std::collections::BTreeSet<_>>() {
        toml.push_str(&format!("[checks.{name}]\nseverity = \"warn\"\n\n"));
    }
    let config = dir.join("checks.toml");
    std::fs::write(&config, &toml).unwrap();
    let (code, _) = check_json(&db, &["--config", config.to_str().unwrap()]);
    assert_eq!(code, 0, "{toml}");
    let (code, _) = check_json(&db, &["--config", config.to_str().unwrap(), "--fail-on", "warn"]);
    assert_eq!(code, 4);
    // diff --reports check-changes: the last two runs judged the same statuses (only the
    // gate moved): the table is there, with no row
    let diff = |format: &str| {
        let out = bin()
            .arg("--db")
            .arg(&db)
            .args(["diff", "--version", "v2", "--version", "v3", "--reports", "check-changes", "--format", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let table = diff("table");
    assert!(table.contains("check-changes") && table.contains("check_changes_v1"), "{table}");
    let csv = diff("csv");
    assert_eq!(
        csv.lines().collect::<Vec<_>>(),
        [
            "previous_run_id,latest_run_id,check_name,scope,previous_status,latest_status,previous_failing,latest_failing,\
         previous_tested,latest_tested,change"
        ]
    );
    // an unknown check in checks.toml: exit 1, file and line named
    std::fs::write(&config, "[checks.contract_vocab]\nseverity = \"warn\"\n[checks.nope]\n").unwrap();
    let out = bin().arg("--db").arg(&db).args(["check", "--config"]).arg(&config).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("checks.toml:3: unknown check \"nope\""), "{err}");
    // --only with an unknown name: usage
    let out = bin().arg("--db").arg(&db).args(["check", "--only", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_version_is_refused_not_a_silent_pass() {
    // `check --version V2` (a typo of v2) judged no review check and exited 0: a CI gate passed
    let dir = temp("unknown-version");
    let db = demo(&dir);
    let out = bin().arg("--db").arg(&db).args(["check", "--version", "V2", "--only", "review"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--version V2: version V2 does not exist"), "{stderr}");
    let (code, _) = check_json(&db, &["--version", "v2", "--only", "review"]);
    assert_eq!(code, 4, "the real version still fails its planted review faults");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn baseline_version_judges_v3_against_v2() {
    let dir = temp("baseline");
    let db = demo(&dir);
    let (_, json) = check_json(&db, &["--baseline", "v2", "--version", "v3", "--only", "review"]);
    let compared: Vec<&serde_json::Value> =
        json["findings"].as_array().unwrap().iter().filter(|f| !f["baseline"].is_null()).collect();
    assert!(!compared.is_empty(), "v3's scopes have v2 figures");
    for f in &compared {
        assert!(f["scope"].as_str().unwrap().starts_with("version=v3"), "{f}");
        assert_eq!(f["baseline"]["source"], "version v2");
        // v3 is never worse than v2 on the same scope with the demo samples: suggested
        // edits removed, the rest unchanged
        assert_ne!(f["status"], "fail", "{f}");
    }
    let out = bin().arg("--db").arg(&db).args(["check", "--baseline", "v9"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--baseline v9: no such corpus version"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn history_records_every_result_and_a_fixed_fault_flips_to_pass() {
    let dir = temp("history");
    let db = dir.join("h.duckdb");
    let s = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/runs/base");
    // the base run's trajectories only: no outcome for any instance
    let load = |args: &[&str]| {
        let out = bin().arg("--db").arg(&db).args(["--quiet", "load", "run"]).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    load(&["base", "--model", "base-7b", s.join("trajs").to_str().unwrap()]);
    let (code, first) = check_json(&db, &[]);
    assert_eq!(code, 4);
    assert_eq!(status_of(&first, "instances_without_outcome", "run=base"), "fail 5/5");
    assert_eq!(first["run_id"], 1);
    // the harness's reports for a..d: one instance stays without an outcome
    load(&["base", "--model", "base-7b", s.join("logs").to_str().unwrap()]);
    let (_, second) = check_json(&db, &[]);
    assert_eq!(status_of(&second, "instances_without_outcome", "run=base"), "fail 1/5");
    // configured to tolerate one: the fault counts as fixed
    let config = dir.join("checks.toml");
    std::fs::write(&config, "[checks.instances_without_outcome]\nerror_if = \"> 1\"\n").unwrap();
    let (code, third) = check_json(&db, &["--config", config.to_str().unwrap()]);
    assert_eq!(status_of(&third, "instances_without_outcome", "run=base"), "pass 1/5");
    assert_eq!(
        third["findings"].as_array().unwrap().iter().find(|f| f["check_name"] == "instances_without_outcome").unwrap()
            ["previous_status"],
        "fail"
    );
    assert_eq!(code, 0, "{third}");
    // the history, from a stock client's point of view: plain SQL over the recorded rows
    let conn = sphragis::db::open_read_only(&db).unwrap();
    let row: (i64, i64, Option<i64>, Option<i64>, i64, String) = conn
        .query_row(
            "select runs, first_failing_run_id, last_failing_run_id, last_passing_run_id, flips, statuses \
             from check_history_v1 where check_name = 'instances_without_outcome' and scope = 'run=base'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .unwrap();
    assert_eq!(row, (3, 1, Some(2), Some(3), 1, "fail > fail > pass".to_string()));
    // passes and not-run results are recorded too: every finding of every run
    let counts: (i64, i64) = conn
        .query_row(
            "select count(*) filter (where status = 'pass'), count(*) filter (where status = 'not-run') from check_results where run_id = 3",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(counts.0 > 0 && counts.1 > 0, "{counts:?}");
    let latest: i64 = conn.query_row("select count(distinct run_id) from check_latest_v1", [], |r| r.get(0)).unwrap();
    assert_eq!(latest, 1);
    // what changed since the previous run (runs 2 and 3): the fixed fault, and nothing else
    let changed: Vec<(String, String, String, String, String)> = {
        let mut stmt = conn
            .prepare(
                "select check_name, scope, previous_status, latest_status, change from check_changes_v1                  where change <> 'same' order by all",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        changed,
        [("instances_without_outcome".into(), "run=base".into(), "fail".into(), "pass".into(), "status".into())]
    );
    let pair: (i64, i64) = conn
        .query_row("select min(previous_run_id), min(latest_run_id) from check_changes_v1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(pair, (2, 3));
    drop(conn);
    // --no-record leaves the history as it was
    let (_, fourth) = check_json(&db, &["--no-record"]);
    assert!(fourth["run_id"].is_null());
    let conn = sphragis::db::open_read_only(&db).unwrap();
    let runs: i64 = conn.query_row("select count(*) from check_runs", [], |r| r.get(0)).unwrap();
    assert_eq!(runs, 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn junit_has_one_case_per_finding_a_failure_per_fail_and_a_skip_per_not_run() {
    let dir = temp("junit");
    let db = demo(&dir);
    let (_, json) = check_json(&db, &["--no-record"]);
    let out = bin().arg("--db").arg(&db).args(["check", "--no-record", "--format", "junit"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let xml = String::from_utf8(out.stdout).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let count = |status: &str| findings.iter().filter(|f| f["status"] == status).count();
    // counted with an XML parser (tl), not by our own writer's strings
    let dom = tl::parse(&xml, tl::ParserOptions::default()).unwrap();
    let n = |tag: &str| dom.query_selector(tag).map_or(0, |q| q.count());
    assert_eq!(n("testcase"), findings.len());
    assert_eq!(n("failure"), count("fail"));
    assert_eq!(n("skipped"), count("not-run"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_list_names_every_check() {
    let out = bin().args(["check", "--list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), CHECKS.len());
    for c in CHECKS {
        assert!(text.contains(c.name), "{}", c.name);
    }
}

/// The verdict view's rows, as a report table ordered by every column, on `conn`.
fn verdict_rows(conn: &duckdb::Connection) -> Vec<Vec<sphragis::report::Cell>> {
    sphragis::report::query(conn, "select * from check_findings_v1 order by all", &[]).unwrap().rows
}

/// A review database (refined v3), the SFT audit samples and the evaluation runs: each
/// area's checks with rows that pass, warn, fail and are not run.
fn databases_of_every_area() -> Vec<sphragis::db::Database> {
    let review = memory();
    load_review(&review, &["orgs.json", "openstack.jsonl", "labels.jsonl"]);
    refine_v3(&review);
    let sft = memory();
    load_audit(&sft);
    vec![review, sft, runs_db(), memory()]
}

/// Issue 29: `check` and `report all` compute the verdict view's parts on worker
/// connections and run the view over them (src/check/parts.rs). The rows must be the
/// view's own, run alone with nothing computed beforehand, on databases of every area.
#[test]
fn verdict_in_parts_is_the_view_run_alone() {
    for conn in databases_of_every_area() {
        let alone = verdict_rows(&conn);
        assert!(alone.len() > 40, "{} rows", alone.len());
        let shadows = check::parts::in_parallel(&conn).unwrap();
        assert_eq!(shadows.names(), check::parts::PARTS, "every part computed");
        assert_eq!(verdict_rows(&conn), alone);
        drop(shadows);
        // the report, computed among the other reports, and check's own reading
        let checks = sphragis::report::find("checks").unwrap();
        let inputs = sphragis::report::find("inputs").unwrap();
        let many = sphragis::report::run_many(&conn, &[inputs, checks], None, |_| None).unwrap();
        assert_eq!(many[1].rows, alone);
        assert_eq!(many[0].rows, sphragis::report::run(&conn, inputs, None).unwrap().rows);
        assert_eq!(many[1].stamp.as_ref().unwrap().query, "select * from check_findings_v1 order by all");
        let judged: Vec<(String, String, String)> =
            findings(&conn).into_iter().map(|f| (f.check_name, f.scope, f.status.as_str().to_string())).collect();
        let mut stmt = conn
            .prepare("select check_name, scope, status from check_findings_v1 order by area, check_name, scope")
            .unwrap();
        let plain: Vec<(String, String, String)> =
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
        assert_eq!(judged, plain);
    }
}

/// Issue 29: `report all` and `check` compute the views over empty tables that two or more
/// of their queries read once per worker connection (src/db/empty.rs). On databases of one
/// area (the other areas' tables empty) and an empty one, every report's table must be the
/// report's run alone with nothing computed beforehand, and no temporary table is left.
#[test]
fn reports_over_empty_corpora_are_those_run_alone() {
    let reports: Vec<&sphragis::report::Report> = sphragis::report::REPORTS.iter().collect();
    let roots: Vec<&str> = reports.iter().map(|r| r.view).collect();
    for conn in databases_of_every_area() {
        let computed = sphragis::db::empty::over_empty_tables(&conn, &roots).unwrap();
        assert!(computed.len() >= 10, "views over empty tables: {computed:?}");
        let together = sphragis::report::run_many(&conn, &reports, None, |_| None).unwrap();
        let mut rows = 0;
        for (report, table) in reports.iter().zip(&together) {
            let alone = sphragis::report::run_with(&conn, report, None, None).unwrap();
            assert_eq!(table.columns, alone.columns, "{}", report.name);
            assert_eq!(table.rows, alone.rows, "{}", report.name);
            assert_eq!(table.stamp.as_ref().map(|s| &s.query), alone.stamp.as_ref().map(|s| &s.query));
            rows += table.rows.len();
        }
        assert!(rows > 40, "{rows} rows");
        let left: i64 = conn
            .query_row("select count(*) from duckdb_tables() where database_name = 'temp'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0, "temporary tables left after report all");
    }
}

/// The parts stand for their views inside the verdict view: rows kept under a part's name
/// are what the view reads (so the speed-up is real — DuckDB resolves a temporary table
/// before the file's view, inside views and macros); dropped, the view reads its own again.
/// A part that failed is left to the view.
#[test]
fn parts_shadow_their_views_inside_the_verdict_view() {
    let conn = runs_db();
    let area_count = |area: &str| -> i64 {
        conn.query_row("select count(*) from check_findings_v1 where area = ?", [area], |r| r.get(0)).unwrap()
    };
    let (eval, ingest) = (area_count("eval"), area_count("ingest"));
    assert!(eval > 10 && ingest > 0, "{eval} eval rows, {ingest} ingest rows");
    // the evaluation checks' rows kept under the ingest checks' name: counted twice
    let rows = check::parts::compute(&conn, "check_eval_v1").unwrap();
    let shadows = check::parts::shadow(&conn, vec![("check_ingest_v1", Ok(rows))]);
    assert_eq!(shadows.names(), ["check_ingest_v1"]);
    assert_eq!((area_count("eval"), area_count("ingest")), (2 * eval, 0));
    drop(shadows);
    assert_eq!((area_count("eval"), area_count("ingest")), (eval, ingest));
    let failed = check::parts::shadow(&conn, vec![("check_ingest_v1", Err(anyhow::anyhow!("a part that failed")))]);
    assert!(failed.names().is_empty());
    assert_eq!((area_count("eval"), area_count("ingest")), (eval, ingest));
}

/// The parts are the views the verdict macro unions (bar the truncation macro, which takes
/// the training length): a check view added to the union and not here would be planned by
/// the union again, silently slower.
#[test]
fn parts_are_the_views_the_verdict_unions() {
    let sql = include_str!("../sql/checks/check_findings_at_v1.sql");
    let unioned: Vec<&str> = sql
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("union all ").strip_prefix("select * from "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap())
        .filter(|name| !name.ends_with("_at_v1"))
        .collect();
    let mut parts = check::parts::PARTS.to_vec();
    parts.sort();
    let mut unioned_sorted = unioned.clone();
    unioned_sorted.sort();
    assert_eq!(unioned_sorted, parts, "{unioned:?}");
}

/// A check view that fails (here `check_ingest_v1`: ingest log row counts whose sum
/// overflows) failed `check` and `report checks` with DuckDB's bare conversion error,
/// naming no view (found by a fresh tester). Its part failed alone on its worker, so the
/// error now names it, with the query that shows it by itself.
#[test]
fn failing_check_view_is_named_in_the_verdict_error() {
    let conn = memory();
    for i in 0..4 {
        conn.execute(
            "insert into ingest_log (kind, path, bytes, sha256, rows, loader_version) \
             values ('examples', ?, 1, 'x', 9223372036854775807, 'examples/1')",
            [format!("/in/{i}.jsonl")],
        )
        .unwrap();
    }
    let err = format!("{:#}", check::findings(&conn, Truncation::default()).unwrap_err());
    assert!(
        err.starts_with("the check view check_ingest_v1 failed (`select * from check_ingest_v1` shows it alone): "),
        "{err}"
    );
    let checks = sphragis::report::find("checks").unwrap();
    let err = format!("{:#}", sphragis::report::run_many(&conn, &[checks], None, |_| None).unwrap_err());
    assert!(err.starts_with("the check view check_ingest_v1 failed"), "{err}");
    // the view alone fails the same way: the error is DuckDB's, now with its view's name
    assert!(conn.prepare("select * from check_ingest_v1").and_then(|mut s| s.query([]).map(|_| ())).is_err());
}
