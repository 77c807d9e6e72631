//! SFT views and their contract checks (SPEC §3.2): the hand-made views in
//! `data-samples/sft/views.jsonl` (each bad view breaks exactly one rule, named in its
//! `origin.note`; loaded with `data-samples/sft/tokenizer.json` for the vocabulary
//! bound) and the two Hugging Face reference views in the shared data.

use sphragis::ingest::read::TokenizerFile;
use sphragis::sft::views::{SpanEnd, ViewOptions, load};

/// Vocabulary size and SHA-256 of a tokenizer.json, as `load views --tokenizer` records them.
fn tokenizer_info(path: &std::path::Path) -> anyhow::Result<(i32, String)> {
    let t = TokenizerFile::read(path)?;
    Ok((t.vocab_size(), t.sha256))
}
use std::collections::BTreeMap;
use std::path::Path;

fn failures(conn: &duckdb::Connection) -> BTreeMap<String, Vec<(String, Option<i64>)>> {
    let mut stmt = conn.prepare("select view_id, check_name, position from sft_contract_failures_v1").unwrap();
    let mut out: BTreeMap<String, Vec<(String, Option<i64>)>> = BTreeMap::new();
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<i64>>(2)?))).unwrap() {
        let (view, check, position) = row.unwrap();
        out.entry(view).or_default().push((check, position));
    }
    out
}

#[test]
fn each_bad_view_fails_exactly_its_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = ViewOptions { tokenizer: Some(tokenizer_info(&dir.join("tokenizer.json")).unwrap()), ..ViewOptions::default() };
    load(&conn, &dir.join("views.jsonl"), &options, &mut |_| {}).unwrap();
    let got = failures(&conn);
    let expected: BTreeMap<String, Vec<(String, Option<i64>)>> = [
        ("b-all-masked", "supervised_in_kept_assistant", Some(0)),
        ("b-shifted", "supervised_in_kept_assistant", Some(7)),
        ("b-span-off-by-one", "spans", Some(3)),
        ("b-system-token", "supervised_in_kept_assistant", Some(0)),
        ("b-ledger", "ledger", None),
        ("b-vocab", "vocab", Some(4)),
        ("b-mask-value", "mask_values", Some(5)),
        ("b-keep-user", "keep_msgs_assistant", None),
        // the two views of one instance disagree: both fail, neither is presumed right
        ("b-other-tokens-a", "same_tokens", Some(3)),
        ("b-other-tokens-b", "same_tokens", Some(3)),
        ("b-lengths", "lengths", Some(8)),
    ]
    .into_iter()
    .map(|(v, c, p)| (v.to_string(), vec![(c.to_string(), p)]))
    .collect();
    assert_eq!(got, expected);
    // the good view passes every check that can be made; declared_sha256 cannot
    let mut stmt = conn
        .prepare("select check_name, passed from sft_contract_v1 where view_id = 'a-good' order by check_name")
        .unwrap();
    let checks: Vec<(String, Option<bool>)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(checks.len(), 9);
    for (check, passed) in checks {
        let expected = if check == "declared_sha256" { None } else { Some(true) };
        assert_eq!(passed, expected, "{check}");
    }
}

#[test]
fn the_reference_views_load_and_keep_the_contract() {
    let shared = std::env::var_os("SPHRAGIS_SHARED")
        .map(Into::into)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let views = shared.join("data/sft/reference-views-qwen3/views.jsonl");
    let tokenizer = shared.join("data/tokenizers/qwen3/tokenizer.json");
    if !views.exists() {
        assert!(std::env::var_os("CI").is_none(), "shared data missing under {}", shared.display());
        eprintln!("skipping: {} not found", views.display());
        return;
    }
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = ViewOptions {
        pool: Some("ref".into()),
        span_end: Some(SpanEnd::Exclusive),
        tokenizer: Some(tokenizer_info(&tokenizer).unwrap()),
    };
    load(&conn, &views, &options, &mut |_| {}).unwrap();
    assert!(failures(&conn).is_empty());
    let mut stmt = conn
        .prepare("select instance_id, n_ids, len(list_filter(loss_mask, lambda x: x = 1)), vocab_size, mask_source from sft_views order by n_ids")
        .unwrap();
    let rows: Vec<(String, i64, i64, i64, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        rows,
        vec![
            ("python__mypy-15976_0".into(), 14685, 2978, 151669, "assistant_masks".into()),
            ("pytest-dev__pytest-7432".into(), 21385, 7388, 151669, "assistant_masks".into()),
        ]
    );
}

#[test]
fn values_beyond_32_bits_repeated_ids_and_negative_ids() {
    let dir = std::env::temp_dir().join(format!("sphragis-views-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = ViewOptions { pool: Some("P".into()), ..ViewOptions::default() };
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let big = write("big.jsonl", "{\"instance_id\":\"x\",\"input_ids\":[1,2147483648],\"loss_mask\":[0,1]}\n");
    let err = load(&conn, &big, &options, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("big.jsonl:1: field `input_ids[1]`: 2147483648 does not fit a 32-bit integer"), "{err}");
    let wide = write("wide.jsonl", "{\"instance_id\":\"x\",\"input_ids\":[1,2],\"loss_mask\":[0,300]}\n");
    let err = load(&conn, &wide, &options, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("wide.jsonl:1: field `loss_mask[1]`: mask value 300 is outside -128..127"), "{err}");
    let repeated = write(
        "repeated.jsonl",
        "{\"view_id\":\"v\",\"instance_id\":\"x\",\"input_ids\":[1],\"loss_mask\":[0]}\n{\"view_id\":\"v\",\"instance_id\":\"y\",\"input_ids\":[1],\"loss_mask\":[0]}\n",
    );
    let err = load(&conn, &repeated, &options, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("repeated.jsonl:2: field `view_id`: \"v\" is already used by the view at"), "{err}");
    let n: i64 = conn.query_row("select count(*) from sft_views", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0, "nothing of a failed load is kept");
    // without a tokenizer the vocabulary bound is unknown, but a negative id still fails
    let negative = write("negative.jsonl", "{\"view_id\":\"n\",\"instance_id\":\"x\",\"input_ids\":[5,-1],\"loss_mask\":[0,1]}\n");
    load(&conn, &negative, &options, &mut |_| {}).unwrap();
    let (passed, position): (Option<bool>, Option<i64>) = conn
        .query_row("select passed, position from sft_contract_v1 where view_id = 'n' and check_name = 'vocab'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((passed, position), (Some(false), Some(1)));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn outcomes_are_bound_to_their_folder_and_unapplied_patches_load() {
    use sphragis::ingest::LoadOutcome;
    use sphragis::sft::store::load_outcome;
    let dir = std::env::temp_dir().join(format!("sphragis-outcomes-{}", std::process::id()));
    let report = r#"{"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": true, "resolved": true,
        "tests_status": {"FAIL_TO_PASS": {"success": ["t1", "t2"], "failure": []}, "PASS_TO_PASS": {"success": ["t3"], "failure": ["t4"]}}}"#;
    let unapplied = r#"{"patch_is_None": true, "patch_exists": false, "patch_successfully_applied": false, "resolved": false}"#;
    for (id, text) in [("a__a-1", report), ("a__a-2", report), ("a__a-3", unapplied)] {
        std::fs::create_dir_all(dir.join(id)).unwrap();
        std::fs::write(dir.join(id).join("report.json"), text).unwrap();
    }
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for id in ["a__a-1", "a__a-2", "a__a-3"] {
        let outcome = load_outcome(&conn, &dir.join(id).join("report.json")).unwrap();
        assert!(matches!(outcome, LoadOutcome::Loaded(_)), "{id}: byte-identical reports of two instances both load");
    }
    let again = load_outcome(&conn, &dir.join("a__a-1").join("report.json")).unwrap();
    assert!(matches!(again, LoadOutcome::AlreadyLoaded { .. }), "the same report at the same path is skipped");
    let mut stmt = conn
        .prepare("select instance_id, resolved, fail_to_pass_success, pass_to_pass_failure from sft_outcomes order by instance_id")
        .unwrap();
    let rows: Vec<(String, bool, i64, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        rows,
        vec![("a__a-1".into(), true, 2, 1), ("a__a-2".into(), true, 2, 1), ("a__a-3".into(), false, 0, 0)]
    );
    std::fs::remove_dir_all(dir).unwrap();
}
