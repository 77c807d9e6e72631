//! Splits, criteria, freezing, `verify --reproduce`, label audit and the sealed window on
//! the bundled OpenStack sample (`data-samples/review/openstack.jsonl`, 15 examples),
//! checked against figures worked out by hand.
//!
//! Windows: pilot < 2022-03-01 <= train < 2022-09-01 <= dev < 2023-01-01 <= test (sealed).
//! Halves: a = openstack/nova; b = openstack/neutron, openstack/neutron-lib; cinder in neither.
//! v3 removes os-831400-a5 (a CRLF ```suggestion fence); the 14 kept examples:
//!   pilot 1; train 10 = half a: 3 x .py + 1 x .rst, half b: 1 x .py, 2 x .rst, 2 x .yaml,
//!   cinder 1 x .py; dev 2; test 1.
//! Suffix mixes: a = {.py 3/4, .rst 1/4}; b = {.py 1/5, .rst 2/5, .yaml 2/5}.
//! TV = 1/2 (|0.75 - 0.2| + |0.25 - 0.4| + |0 - 0.4|) = 1/2 (0.55 + 0.15 + 0.4) = 0.55.
//! Size floor = min(4, 5) = 4. Smaller-half rows: .py min(3,1) = 1, .rst min(1,2) = 1,
//! .yaml 0: .py and .rst tie at 1, by name .py is matched (3 and 1), .rst runner-up (1 and 2).
//! target_in_comment: os-831000-a1's comment holds its target: a 1 of 4, b 0 of 5.

use sphragis::ingest::InputKind;
use sphragis::review::freeze::{
    FreezeOptions, VerifyError, VerifyOptions, freeze, freeze_with, verify_reproduce, verify_reproduce_with,
};
use sphragis::review::load::load;
use sphragis::review::refine::{RefineOptions, Rule, refine};
use sphragis::review::splits;
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/review")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-splits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn opts(version: &str) -> RefineOptions {
    RefineOptions { version: version.into(), base: None, rules: Rule::ALL.to_vec(), min_target_chars: 20 }
}

/// Loads orgs + openstack (+ labels) from `dir` copies into `db`, refines v3 and splits it.
fn build(db: &Path, dir: &Path) -> sphragis::db::Database {
    for f in ["orgs.json", "openstack.jsonl", "labels.jsonl"] {
        std::fs::copy(samples().join(f), dir.join(f)).unwrap();
    }
    let conn = sphragis::db::open(db).unwrap();
    load(&conn, InputKind::Orgs, &dir.join("orgs.json"), None, &mut |_| {}).unwrap();
    load(&conn, InputKind::Examples, &dir.join("openstack.jsonl"), None, &mut |_| {}).unwrap();
    load(&conn, InputKind::Labels, &dir.join("labels.jsonl"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v3")).unwrap();
    splits::compute(&conn, "v3", Some("openstack")).unwrap();
    conn
}

#[test]
fn criteria_by_hand() {
    let dir = scratch("criteria");
    let conn = build(Path::new(":memory:"), &dir);
    let c = splits::criteria(&conn, "v3", "openstack").unwrap();
    assert_eq!(c["splits"], serde_json::json!({"pilot": 1, "train": 10, "dev": 2, "test": 1}));
    assert_eq!(c["halves"]["a"]["train"], 4);
    assert_eq!(c["halves"]["b"]["train"], 5);
    assert_eq!(c["size_floor"], 4);
    let tv = c["language_mix_ceiling"].as_f64().unwrap();
    assert!((tv - 0.55).abs() < 1e-12, "{tv}");
    assert_eq!(c["matched_suffix"], serde_json::json!({"suffix": ".py", "rows_a": 3, "rows_b": 1}));
    assert_eq!(c["runner_up"], serde_json::json!({"suffix": ".rst", "rows_a": 1, "rows_b": 2}));
    assert_eq!(c["halves"]["a"]["suffix_mix"][".py"]["share"], 0.75);
    assert_eq!(c["halves"]["b"]["suffix_mix"][".yaml"]["rows"], 2);
    assert_eq!(c["halves"]["a"]["target_in_comment"], serde_json::json!({"k": 1, "n": 4}));
    assert_eq!(c["halves"]["b"]["target_in_comment"], serde_json::json!({"k": 0, "n": 5}));
    // cinder is in the train split but in neither half
    let (half, split): (Option<String>, String) = conn
        .query_row("select half, split from review_splits where example_id = 'os-833000-c1'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((half, split.as_str()), (None, "train"));
    let (sealed, rule): (bool, String) = conn
        .query_row("select sealed, rule from review_splits where example_id = 'os-835000-t1'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(sealed);
    assert_eq!(rule, "created_at in [2023-01-01 00:00:00, 2024-01-01 00:00:00)");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn label_audit_shares_and_wilson_intervals() {
    let dir = scratch("labels");
    let conn = build(Path::new(":memory:"), &dir);
    let row = |rater: &str, scope: &str| -> (i64, i64, f64, f64, f64) {
        conn.query_row(
            "select n, valid, share, wilson_low, wilson_high from label_audit_v1 \
             where version = 'v3' and rater = ? and scope = ?",
            [rater, scope],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap()
    };
    // rater A: items 1 2 4 5 valid, 3 invalid; v3 drops item 2's example (suggested edit).
    // Wilson 95% for 4 of 5 is [0.3755, 0.9638] (e.g. Newcombe 1998, Table I method 3).
    let (n, valid, share, low, high) = row("A", "all scored");
    assert_eq!((n, valid), (5, 4));
    assert!((share - 0.8).abs() < 1e-12);
    assert!((low - 0.375535).abs() < 1e-6 && (high - 0.963776).abs() < 1e-6, "{low} {high}");
    let (n, valid, ..) = row("A", "kept by version");
    assert_eq!((n, valid), (4, 3));
    let (n, valid, ..) = row("human", "suggested edit");
    assert_eq!((n, valid), (1, 1));
    // the human's 'Invalid' (capital I) counts as invalid: 2 of 3
    let (n, valid, ..) = row("human", "all scored");
    assert_eq!((n, valid), (3, 2));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn freeze_then_verify_clean_then_tampered() {
    let dir = scratch("freeze");
    let db = dir.join("f.duckdb");
    let conn = build(&db, &dir);
    let out = dir.join("frozen");
    let summary = freeze(&conn, "v3", &out).unwrap();
    assert_eq!(summary.written.len(), 2);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest-openstack-v3.json")).unwrap()).unwrap();
    // root = SHA-256 over "<split>\t<id>\n" sorted: recompute independently here
    let mut lines: Vec<String> = Vec::new();
    for (split, ids) in manifest["splits"].as_object().unwrap() {
        for id in ids.as_array().unwrap() {
            lines.push(format!("{split}\t{}\n", id.as_str().unwrap()));
        }
    }
    lines.sort();
    assert_eq!(lines.len(), 14);
    assert_eq!(manifest["root_sha256"], sphragis::hash::sha256_hex(lines.concat().as_bytes()));
    assert!(verify_reproduce(&conn, "v3").unwrap().is_empty(), "a fresh freeze reproduces clean");
    // frozen: no refine, no split
    assert!(refine(&conn, &opts("v3")).unwrap_err().to_string().contains("frozen"));
    assert!(splits::compute(&conn, "v3", None).unwrap_err().to_string().contains("frozen"));

    // change one byte of an input: verify names the file
    let path = dir.join("openstack.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.iter().position(|b| *b == b'Z').unwrap();
    bytes[at] = b'z';
    std::fs::write(&path, &bytes).unwrap();
    let err = verify_reproduce(&conn, "v3").unwrap_err();
    assert!(matches!(err.downcast_ref::<VerifyError>(), Some(VerifyError::Changed(_))));
    assert!(err.to_string().contains("openstack.jsonl (file_id 2, examples): sha256 was"), "{err}");
    std::fs::remove_file(&path).unwrap();
    let err = verify_reproduce(&conn, "v3").unwrap_err();
    assert!(matches!(err.downcast_ref::<VerifyError>(), Some(VerifyError::Missing(_))), "{err}");
    drop(conn);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_moved_example_is_named() {
    let dir = scratch("moved");
    let conn = build(Path::new(":memory:"), &dir);
    freeze(&conn, "v3", &dir.join("frozen")).unwrap();
    // Tamper with the recorded manifest: pretend os-834000-d1 was frozen in train.
    conn.execute(
        "update frozen_manifests set manifest_json = replace(manifest_json, '\"os-831300-a4\"', \
         '\"os-831300-a4\",\n      \"os-834000-d1\"') where version = 'v3'",
        [],
    )
    .unwrap();
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    assert!(diffs.iter().any(|d| d == "openstack: example os-834000-d1 moved from train to dev"), "{diffs:?}");
    assert!(diffs.iter().any(|d| d.contains("the frozen manifest's root")), "{diffs:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn refusals_and_a_version_is_a_snapshot_of_its_registration() {
    let dir = scratch("refuse");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(&conn, InputKind::Examples, &samples().join("openstack.jsonl"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v3")).unwrap();
    let err = splits::compute(&conn, "v3", Some("openstack")).unwrap_err().to_string();
    assert!(err.contains("org openstack had no registration when version v3 was refined"), "{err}");
    let err = splits::compute(&conn, "v3", None).unwrap_err().to_string();
    assert!(err.contains("no org of version v3 has registered halves"), "{err}");
    // windows but no halves
    let no_halves = dir.join("orgs-no-halves.json");
    std::fs::write(&no_halves, r#"{"orgs": {"openstack": {"windows": [{"name": "train", "start": "2022-01-01", "end": "2023-01-01", "training": true}]}}}"#).unwrap();
    load(&conn, InputKind::Orgs, &no_halves, None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v4")).unwrap();
    let err = splits::compute(&conn, "v4", Some("openstack")).unwrap_err().to_string();
    assert!(err.contains("had no registered halves a and b when version v4 was refined"), "{err}");
    // registered: the split works, and the version keeps its registration
    load(&conn, InputKind::Orgs, &samples().join("orgs.json"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v5")).unwrap();
    splits::compute(&conn, "v5", Some("openstack")).unwrap();
    let before = splits::criteria(&conn, "v5", "openstack").unwrap();
    let err = refine(&conn, &opts("v5")).unwrap_err().to_string();
    assert!(err.contains("has computed splits"), "{err}");
    let changed = dir.join("orgs-changed.json");
    std::fs::write(
        &changed,
        std::fs::read_to_string(samples().join("orgs.json")).unwrap().replace("2022-09-01", "2022-05-01"),
    )
    .unwrap();
    load(&conn, InputKind::Orgs, &changed, None, &mut |_| {}).unwrap();
    splits::compute(&conn, "v5", Some("openstack")).unwrap();
    assert_eq!(splits::criteria(&conn, "v5", "openstack").unwrap(), before, "a later orgs file moves nothing in v5");
    // a new version takes the new registration: train now ends 2022-05-01
    refine(&conn, &opts("v6")).unwrap();
    splits::compute(&conn, "v6", Some("openstack")).unwrap();
    let after = splits::criteria(&conn, "v6", "openstack").unwrap();
    assert_ne!(after["splits"], before["splits"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn freezing_a_newer_version_keeps_the_older_criteria_file() {
    let dir = scratch("versions");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    refine(&conn, &opts("v4")).unwrap();
    splits::compute(&conn, "v4", Some("openstack")).unwrap();
    let summary = freeze(&conn, "v4", &out).unwrap();
    assert_eq!(
        summary.renamed,
        vec![(out.join("split-criteria-openstack.json"), out.join("split-criteria-openstack-v3.json"))]
    );
    let old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("split-criteria-openstack-v3.json")).unwrap()).unwrap();
    let new: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("split-criteria-openstack.json")).unwrap()).unwrap();
    assert_eq!((old["version"].as_str(), new["version"].as_str()), (Some("v3"), Some("v4")));
    std::fs::remove_dir_all(dir).unwrap();
}

/// The files freeze wrote into `out` for openstack v3.
fn frozen_paths(out: &Path) -> (PathBuf, PathBuf) {
    (out.join("manifest-openstack-v3.json"), out.join("split-criteria-openstack.json"))
}

#[test]
fn verify_detects_manifest_edited_on_disk() {
    let dir = scratch("manifest-on-disk");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    let (manifest_path, _) = frozen_paths(&out);
    // Move os-834000-d1 from dev to train in the file a user would quote; the database's
    // copy is untouched.
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    let dev = manifest["splits"]["dev"].as_array_mut().unwrap();
    let at = dev.iter().position(|id| id == "os-834000-d1").unwrap();
    dev.remove(at);
    manifest["splits"]["train"].as_array_mut().unwrap().push("os-834000-d1".into());
    let before = sphragis::hash::sha256_hex(&std::fs::read(&manifest_path).unwrap());
    let text = serde_json::to_string_pretty(&manifest).unwrap() + "\n";
    std::fs::write(&manifest_path, &text).unwrap();
    let now = sphragis::hash::sha256_hex(text.as_bytes());
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    let file = manifest_path.display().to_string();
    assert_eq!(diffs.len(), 3, "{diffs:#?}");
    assert_eq!(diffs[0], format!("frozen file {file}: sha256 is {now}, freeze recorded {before}"));
    assert_eq!(diffs[1], format!("{file}: example os-834000-d1 moved from train to dev"));
    assert!(diffs[2].starts_with(&format!("{file}: the frozen manifest's root")), "{diffs:#?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_detects_criteria_edited_on_disk() {
    let dir = scratch("criteria-on-disk");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    let (_, criteria_path) = frozen_paths(&out);
    let text = std::fs::read_to_string(&criteria_path).unwrap();
    assert!(text.contains("\"size_floor\": 4,"), "{text}");
    std::fs::write(&criteria_path, text.replace("\"size_floor\": 4,", "\"size_floor\": 5,")).unwrap();
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    let file = criteria_path.display().to_string();
    assert_eq!(diffs.len(), 2, "{diffs:#?}");
    assert!(diffs[0].starts_with(&format!("frozen file {file}: sha256 is ")), "{diffs:#?}");
    assert_eq!(diffs[1], format!("{file}: criteria size_floor: frozen 5 → reproduced 4"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_detects_missing_frozen_file() {
    let dir = scratch("missing-frozen");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    let (manifest_path, _) = frozen_paths(&out);
    std::fs::remove_file(&manifest_path).unwrap();
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    assert_eq!(
        diffs,
        vec![format!(
            "frozen file {} is missing (the manifest of openstack in v3; looked for manifest-openstack-v3.json)",
            manifest_path.display()
        )]
    );
    // Missing frozen files are a mismatch even when an input changed too: all named at once.
    let input = dir.join("openstack.jsonl");
    let text = std::fs::read_to_string(&input).unwrap().replacen("chatty", "Chatty", 1);
    std::fs::write(&input, text).unwrap();
    let err = verify_reproduce(&conn, "v3").unwrap_err();
    let Some(VerifyError::Changed(lines)) = err.downcast_ref::<VerifyError>() else { panic!("{err}") };
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].starts_with("input file changed: ") && lines[0].contains("openstack.jsonl (file_id 2, examples)"));
    assert!(lines[1].contains("manifest-openstack-v3.json is missing"), "{lines:#?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_finds_older_criteria_under_its_kept_name() {
    let dir = scratch("older-criteria");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    refine(&conn, &opts("v4")).unwrap();
    splits::compute(&conn, "v4", Some("openstack")).unwrap();
    freeze(&conn, "v4", &out).unwrap();
    let kept = out.join("split-criteria-openstack-v3.json");
    assert!(kept.is_file());
    assert_eq!(verify_reproduce(&conn, "v3").unwrap(), Vec::<String>::new());
    assert_eq!(verify_reproduce(&conn, "v4").unwrap(), Vec::<String>::new());
    // A record that still names the old name (renamed from another spelling of the
    // folder) is found under the kept name too.
    conn.execute("update frozen_files set file_name = 'split-criteria-openstack.json' where version = 'v3' and role = 'criteria'", [])
        .unwrap();
    assert_eq!(verify_reproduce(&conn, "v3").unwrap(), Vec::<String>::new());
    conn.execute("update frozen_files set file_name = 'split-criteria-openstack-v3.json' where version = 'v3' and role = 'criteria'", [])
        .unwrap();
    // An edit of the older version's kept file is named by its kept name.
    let text = std::fs::read_to_string(&kept).unwrap();
    std::fs::write(&kept, text.replace("\"size_floor\": 4,", "\"size_floor\": 3,")).unwrap();
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    assert!(diffs.contains(&format!("{}: criteria size_floor: frozen 3 → reproduced 4", kept.display())), "{diffs:#?}");
    // Gone: the newer version's file under the plain name is not taken for it.
    std::fs::remove_file(&kept).unwrap();
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    assert_eq!(diffs.len(), 1, "{diffs:#?}");
    assert!(diffs[0].contains("is missing (the criteria of openstack in v3"), "{diffs:#?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_reads_the_folder_given_with_frozen() {
    let dir = scratch("frozen-dir");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    let recorded: String =
        conn.query_row("select folder from frozen_versions where version = 'v3'", [], |r| r.get(0)).unwrap();
    assert_eq!(Path::new(&recorded), out);
    let moved = dir.join("published");
    std::fs::rename(&out, &moved).unwrap();
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    assert_eq!(diffs.len(), 2, "both files are missing from the recorded folder: {diffs:#?}");
    let given = VerifyOptions { frozen: Some(moved.clone()) };
    assert_eq!(verify_reproduce_with(&conn, "v3", &given).unwrap(), Vec::<String>::new());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn freeze_refuses_orgs_without_split() {
    let dir = scratch("partial");
    let conn = build(Path::new(":memory:"), &dir);
    load(&conn, InputKind::Examples, &samples().join("examples.jsonl"), None, &mut |_| {}).unwrap();
    refine(&conn, &opts("v4")).unwrap();
    splits::compute(&conn, "v4", Some("openstack")).unwrap();
    let out = dir.join("frozen");
    // v4 keeps wikimedia 5 and qt 3 (tests/review_samples.rs) beside openstack's 14.
    let err = freeze(&conn, "v4", &out).unwrap_err().to_string();
    assert!(
        err.contains("qt (3 kept examples, no split computed), wikimedia (5 kept examples, no split computed)"),
        "{err}"
    );
    assert!(err.contains("--org") && err.contains("--allow-partial"), "{err}");
    let frozen_at: Option<String> = conn
        .query_row("select frozen_at::varchar from corpus_versions where version = 'v4'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(frozen_at, None, "a refused freeze freezes nothing");
    assert!(!out.exists(), "a refused freeze writes nothing");
    let exclusions = |version: &str| -> Vec<(String, i64, String)> {
        let mut stmt = conn
            .prepare("select org, kept_examples, reason from frozen_exclusions where version = ? order by org")
            .unwrap();
        stmt.query_map([version], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    let selection = |version: &str| -> String {
        conn.query_row("select selection from frozen_versions where version = ?", [version], |r| r.get(0)).unwrap()
    };
    // Named with --org: the others are left out, recorded.
    let named = FreezeOptions { orgs: vec!["openstack".into()], allow_partial: false };
    let summary = freeze_with(&conn, "v4", &out, &named).unwrap();
    assert_eq!(summary.frozen_orgs, vec!["openstack".to_string()]);
    assert_eq!(summary.written.len(), 2);
    let no_split = |org: &str, n: i64| (org.to_string(), n, "no split computed".to_string());
    assert_eq!(exclusions("v4"), vec![no_split("qt", 3), no_split("wikimedia", 5)]);
    assert_eq!(selection("v4"), "orgs");
    // --allow-partial: the same orgs left out, recorded as such.
    refine(&conn, &opts("v5")).unwrap();
    splits::compute(&conn, "v5", Some("openstack")).unwrap();
    let partial = FreezeOptions { orgs: vec![], allow_partial: true };
    let summary = freeze_with(&conn, "v5", &dir.join("frozen5"), &partial).unwrap();
    assert_eq!(summary.left_out.len(), 2);
    assert_eq!(exclusions("v5"), vec![no_split("qt", 3), no_split("wikimedia", 5)]);
    assert_eq!(selection("v5"), "allow-partial");
    // Every org split, one named: the rest left out as not named.
    refine(&conn, &opts("v6")).unwrap();
    splits::compute(&conn, "v6", None).unwrap();
    let err = freeze_with(
        &conn,
        "v6",
        &dir.join("frozen6"),
        &FreezeOptions { orgs: vec!["gerrit".into()], allow_partial: false },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("version v6 keeps no examples of org gerrit"), "{err}");
    freeze_with(&conn, "v6", &dir.join("frozen6"), &FreezeOptions { orgs: vec!["qt".into()], allow_partial: false })
        .unwrap();
    let not_named = |org: &str, n: i64| (org.to_string(), n, "not named with --org".to_string());
    assert_eq!(exclusions("v6"), vec![not_named("openstack", 14), not_named("wikimedia", 5)]);
    // Every org split and none named: nothing left out.
    refine(&conn, &opts("v7")).unwrap();
    splits::compute(&conn, "v7", None).unwrap();
    let summary = freeze(&conn, "v7", &dir.join("frozen7")).unwrap();
    assert_eq!(summary.frozen_orgs, vec!["openstack".to_string(), "qt".into(), "wikimedia".into()]);
    assert!(exclusions("v7").is_empty());
    assert_eq!(selection("v7"), "all");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_of_a_version_frozen_before_the_folder_was_recorded_needs_frozen_dir() {
    let dir = scratch("legacy");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    // As a database frozen before migration 0007: no folder, file records only from its backfill.
    conn.execute_batch("delete from frozen_versions; delete from frozen_files").unwrap();
    let m7 = sphragis::db::migrations::MIGRATIONS.iter().find(|m| m.version == 7).unwrap();
    let backfill: Vec<&str> = m7.sql.split(';').filter(|s| s.contains("insert into frozen_files")).collect();
    assert_eq!(backfill.len(), 2);
    for statement in backfill {
        conn.execute_batch(statement).unwrap();
    }
    let err = verify_reproduce(&conn, "v3").unwrap_err().to_string();
    assert!(
        err.contains("frozen before sphragis recorded the folder of its files; pass that folder with --frozen DIR"),
        "{err}"
    );
    // The backfilled SHA-256s are those of the files freeze wrote.
    let given = VerifyOptions { frozen: Some(out.clone()) };
    assert_eq!(verify_reproduce_with(&conn, "v3", &given).unwrap(), Vec::<String>::new());
    let (manifest_path, _) = frozen_paths(&out);
    let sha: String = conn
        .query_row("select sha256 from frozen_files where version = 'v3' and role = 'manifest'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sha, sphragis::hash::sha256_hex(&std::fs::read(&manifest_path).unwrap()));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_names_a_suggestion_rule_change_before_its_differences() {
    let dir = scratch("rule-change");
    let conn = build(Path::new(":memory:"), &dir);
    let out = dir.join("frozen");
    freeze(&conn, "v3", &out).unwrap();
    // as if v3 had been refined and frozen by a sphragis with the older rule, and the
    // criteria file then differs from what this sphragis rebuilds
    conn.execute("update corpus_versions set suggestion_rule = 'fence-1' where version = 'v3'", []).unwrap();
    let (_, criteria_path) = frozen_paths(&out);
    let text = std::fs::read_to_string(&criteria_path).unwrap();
    std::fs::write(&criteria_path, text.replace("\"size_floor\": 4,", "\"size_floor\": 5,")).unwrap();
    let diffs = verify_reproduce(&conn, "v3").unwrap();
    assert_eq!(diffs.len(), 3, "{diffs:#?}");
    assert!(
        diffs[0].starts_with(
            "suggestion rule: version v3 was refined with fence-1, this sphragis rebuilds it with fence-3"
        ),
        "{diffs:#?}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
