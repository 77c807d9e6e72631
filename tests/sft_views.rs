//! SFT views and their contract checks (SPEC §3.2): the hand-made views in
//! `data-samples/sft/views.jsonl` (each bad view breaks exactly one rule, named in its
//! `origin.note`) and the two Hugging Face reference views in the shared data.

use sphragis::sft::views::{SpanEnd, ViewOptions, load, tokenizer_info};
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
        ("b-other-tokens", "same_tokens", Some(3)),
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
