//! Packed training rows (issue 27): `data-samples/sft/packed/views.jsonl` (its README
//! says what each row shows), loaded as one view per packed conversation; every figure
//! below is counted by hand from the rows.

use sphragis::sft::views::{ViewOptions, load};
use std::path::Path;

fn loaded() -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/packed/views.jsonl");
    load(&conn, &file, &ViewOptions::default(), &mut |_| {}).unwrap();
    conn
}

fn rows<T: duckdb::types::FromSql>(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<T>> {
    let mut stmt = conn.prepare(sql).unwrap();
    let mut out = Vec::new();
    let mut rows = stmt.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let n = r.as_ref().column_count();
        out.push((0..n).map(|i| r.get::<_, T>(i).unwrap()).collect());
    }
    out
}

#[test]
fn packed_rows_load_one_view_per_conversation() {
    let conn = loaded();
    let views: Vec<Vec<String>> = rows(
        &conn,
        "select view_id, instance_id, coalesce(family, '-'), input_ids::varchar, loss_mask::varchar
         from sft_views order by view_id",
    );
    let want = [
        // the row kept whole: no packing metadata
        [
            "concat-0",
            "pylint-dev__pylint-7080",
            "pylint-dev__pylint",
            "[1, 50, 2, 51, 1, 52, 2, 53]",
            "[0, 0, 0, 1, 0, 0, 0, 1]",
        ],
        // cu_seqlens [0, 4, 9]
        ["fa-varlen-0#0", "pallets__flask-4045", "pallets__flask", "[1, 40, 2, 41]", "[0, 0, 0, 1]"],
        ["fa-varlen-0#1", "psf__requests-2317", "psf__requests", "[1, 42, 2, 43, 44]", "[0, 0, 0, 1, 1]"],
        // segment ids 1×5, 2×4, then two padding positions kept in no view; the string
        // instance id is repeated on the second conversation
        ["lf-neat-0#0", "astropy__astropy-12907", "astropy__astropy", "[1, 30, 2, 31, 32]", "[0, 0, 0, 1, 1]"],
        ["lf-neat-0#1", "astropy__astropy-12907", "astropy__astropy", "[1, 33, 2, 34]", "[0, 0, 0, 1]"],
        ["plain-0", "pytest-dev__pytest-5103", "pytest-dev__pytest", "[1, 70, 2, 71]", "[0, 0, 0, 1]"],
        // seq_lengths [7, 5], labels converted per conversation
        [
            "trl-pack-0#0",
            "django__django-11099",
            "django__django",
            "[1, 10, 11, 2, 20, 21, 22]",
            "[0, 0, 0, 0, 1, 1, 1]",
        ],
        ["trl-pack-0#1", "sympy__sympy-20590", "sympy__sympy", "[1, 12, 2, 23, 24]", "[0, 0, 0, 1, 1]"],
        // seq_lengths [3, 3] on 7 ids: position 6 is padding
        ["trl-pad-0#0", "pytest-dev__pytest-5227", "pytest-dev__pytest", "[1, 60, 61]", "[0, 1, 1]"],
        ["trl-pad-0#1", "pytest-dev__pytest-7373", "pytest-dev__pytest", "[1, 62, 63]", "[0, 1, 1]"],
    ];
    let want: Vec<Vec<String>> = want.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect();
    assert_eq!(views, want);
    // spans rebased to their conversation, placed by their start
    let spans: Vec<Vec<String>> = rows(
        &conn,
        "select format('{} {} {} [{},{})', view_id, msg_index, role, start_pos, end_pos)
         from sft_view_spans where view_id like 'fa-varlen-0#%' order by view_id, ordinal",
    );
    let spans: Vec<String> = spans.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        spans,
        [
            "fa-varlen-0#0 0 user [0,3)",
            "fa-varlen-0#0 1 assistant [3,4)",
            "fa-varlen-0#1 0 user [0,3)",
            "fa-varlen-0#1 1 assistant [3,5)"
        ]
    );
    let units: Vec<Vec<String>> = rows(
        &conn,
        "select format('{} {} {} [{},{}) {}', view_id, pack_id, pack_index, start_pos, end_pos, instance_declared)
         from sft_view_pack_units order by view_id",
    );
    let units: Vec<String> = units.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        units,
        [
            "fa-varlen-0#0 fa-varlen-0 0 [0,4) true",
            "fa-varlen-0#1 fa-varlen-0 1 [4,9) true",
            "lf-neat-0#0 lf-neat-0 0 [0,5) true",
            "lf-neat-0#1 lf-neat-0 1 [5,9) false",
            "trl-pack-0#0 trl-pack-0 0 [0,7) true",
            "trl-pack-0#1 trl-pack-0 1 [7,12) true",
            "trl-pad-0#0 trl-pad-0 0 [0,3) true",
            "trl-pad-0#1 trl-pad-0 1 [3,6) true",
        ]
    );
}

#[test]
fn pack_faults_by_hand() {
    let conn = loaded();
    let packs: Vec<Vec<String>> = rows(
        &conn,
        "select format('{} {} {} units={} pos={} pad={} padsup={} inst={}/{} restarts={} sup={} claim={} | {} {} {} {}',
                       pack_id, pool, coalesce(boundary_source, 'none'), n_units, n_positions, n_padding,
                       padding_supervised, instances_declared, distinct_instances, span_restarts, supervised,
                       coalesce(claimed_supervised::varchar, '-'), attention_crosses, instances_unattributed,
                       off_turns, coalesce(ledger_differs::varchar, '-'))
         from sft_packs_v1 order by pack_id",
    );
    let packs: Vec<String> = packs.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        packs,
        [
            "concat-0 B none units=1 pos=8 pad=0 padsup=0 inst=1/1 restarts=1 sup=2 claim=- | true false false -",
            "fa-varlen-0 A cu_seqlens units=2 pos=9 pad=0 padsup=0 inst=2/2 restarts=0 sup=3 claim=4 | false false false true",
            "lf-neat-0 A attention_mask units=2 pos=11 pad=2 padsup=0 inst=1/1 restarts=0 sup=3 claim=- | false true false -",
            "trl-pack-0 A seq_lengths units=2 pos=12 pad=0 padsup=0 inst=2/2 restarts=0 sup=5 claim=- | false false false -",
            "trl-pad-0 B seq_lengths units=2 pos=7 pad=1 padsup=1 inst=2/2 restarts=0 sup=5 claim=- | false false false -",
        ]
    );
    let checks: Vec<Vec<String>> = rows(
        &conn,
        "select format('{} {} {} {} {}', check_name, scope, coalesce(tested::varchar, '-'),
                       coalesce(failing::varchar, '-'), status)
         from check_findings_at_v1(null, 'left') where check_name like 'pack_%' order by check_name, scope",
    );
    let checks: Vec<String> = checks.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        checks,
        [
            // pool A: one row has spans (fa-varlen-0); pool B: concat-0 and plain-0
            "pack_attention_crosses pool=A 1 0 pass",
            "pack_attention_crosses pool=B 2 1 fail",
            "pack_boundaries_off_turns pool=A 3 0 pass",
            "pack_boundaries_off_turns pool=B 1 0 pass",
            "pack_instances_unattributed pool=A 3 1 fail",
            "pack_instances_unattributed pool=B 1 0 pass",
            // fa-varlen-0 claims 4 supervised positions; it has 3
            "pack_ledger pool=A 1 1 fail",
            "pack_ledger pool=B 0 0 not-run",
            "pack_padding_supervised pool=A 3 0 pass",
            "pack_padding_supervised pool=B 1 1 fail",
            "pack_supervision_crosses pool=A 3 0 pass",
            "pack_supervision_crosses pool=B 1 0 pass",
        ]
    );
    // the repeated instance also fails the contract: one instance, two token sequences
    let same: i64 = conn
        .query_row(
            "select count(*) from sft_contract_failures_v1 where check_name = 'same_tokens' and view_id like 'lf-neat-0#%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(same, 2);
}

fn load_line(line: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("sphragis-packed-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("v.jsonl");
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let options = ViewOptions { pool: Some("A".into()), ..ViewOptions::default() };
    let out = match load(&conn, &file, &options, &mut |_| {}) {
        Ok(_) => "loaded".to_string(),
        Err(e) => format!("{e:#}"),
    };
    let left: i64 = conn.query_row("select count(*) from sft_views", [], |r| r.get(0)).unwrap();
    let packs: i64 = conn.query_row("select count(*) from sft_view_packs", [], |r| r.get(0)).unwrap();
    if out != "loaded" {
        assert_eq!((left, packs), (0, 0), "a refused load leaves nothing");
    }
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Packing metadata that contradicts itself or the ids stops the load, naming file, line
/// and field, like mask conventions that disagree.
#[test]
fn packing_metadata_that_disagrees_is_a_load_error() {
    let row = |fields: &str| {
        format!(r#"{{"instance_id":"a__b-1","input_ids":[1,2,3,4,5],"loss_mask":[0,1,0,1,1],{fields}}}"#)
    };
    let cases = [
        (row(r#""seq_lengths":[2,3],"position_ids":[0,1,2,0,1]"#), "v.jsonl:1: field `position_ids`: names the conversations [0,3) [3,5), seq_lengths names [0,2) [2,5)"),
        (row(r#""seq_lengths":[2,4]"#), "v.jsonl:1: field `seq_lengths`: sums to 6, past the row's 5 input_ids"),
        (row(r#""cu_seqlens":[1,5]"#), "field `cu_seqlens`: cu_seqlens starts at 1, not 0"),
        (row(r#""cu_seq_lens_q":[0,3,3]"#), "field `cu_seq_lens_q`: cu_seq_lens_q[2] = 3 does not exceed cu_seq_lens_q[1] = 3"),
        (row(r#""attention_mask":[1,1,2,2,1]"#), "field `attention_mask`: attention_mask[4]: segment 1 appears again"),
        (row(r#""position_ids":[1,2,3,4,5]"#), "field `position_ids`: position_ids[0] = 1"),
        (row(r#""seq_lengths":[2,3],"cu_seqlens":[0,2,4]"#), "field `cu_seqlens`: names the conversations [0,2) [2,4), seq_lengths names [0,2) [2,5)"),
        (
            r#"{"instance_id":["a__b-1","c__d-2","e__f-3"],"input_ids":[1,2,3,4,5],"loss_mask":[0,1,0,1,1],"seq_lengths":[2,3]}"#.to_string(),
            "field `instance_id`: names 3 instances; the row has 2 conversations by seq_lengths",
        ),
        (
            r#"{"instance_id":["a__b-1","c__d-2"],"input_ids":[1,2,3],"loss_mask":[0,1,1]}"#.to_string(),
            "field `instance_id`: names 2 instances; the row has no packing metadata",
        ),
        (r#"{"instance_id":[],"input_ids":[1],"loss_mask":[1]}"#.to_string(), "an empty array names no instance"),
        (r#"{"instance_id":["a__b-1",""],"input_ids":[1,2],"loss_mask":[1,1],"seq_lengths":[1,1]}"#.to_string(), "field `instance_id[1]`: must not be empty"),
        // both cumulative fields are compared
        (row(r#""cu_seqlens":[0,2,5],"cu_seq_lens_q":[0,3,5]"#), "field `cu_seq_lens_q`: names the conversations [0,3) [3,5), cu_seqlens names [0,2) [2,5)"),
        // a packed row's mask must cover its ids to be cut
        (r#"{"instance_id":"a__b-1","input_ids":[1,2,3,4,5],"loss_mask":[0,1,0,1,1,1],"seq_lengths":[2,3]}"#.to_string(), "field `loss_mask`: has 6 values, input_ids has 5"),
        (r#"{"instance_id":"a__b-1","input_ids":[1,2,3],"labels":[-100,2],"seq_lengths":[1,2]}"#.to_string(), "field `labels`: has 2 values, input_ids has 3"),
        (row(r#""position_ids":[0,1,-1,0,1]"#), "field `position_ids`: position_ids[2] = -1"),
        // an array of one names one conversation, not two
        (r#"{"instance_id":["a__b-1"],"input_ids":[1,2,3,4,5],"loss_mask":[0,1,0,1,1],"seq_lengths":[2,3]}"#.to_string(), "field `instance_id`: names 1 instance; the row has 2 conversations by seq_lengths"),
        // a row cut into views takes its own id: a plain view may not reuse it, either order
        (format!("{}\n{}", row(r#""view_id":"x","seq_lengths":[2,3]"#), row(r#""view_id":"x""#)), "v.jsonl:2: field `view_id`: \"x\" is already used by the view at"),
        (format!("{}\n{}", row(r#""view_id":"x""#), row(r#""view_id":"x","seq_lengths":[2,3]"#)), "v.jsonl:2: field `view_id`: \"x\" is already used by the view at"),
    ];
    for (line, want) in cases {
        let got = load_line(&line);
        assert!(got.contains(want), "{line}\n  got: {got}\n want: {want}");
    }
    // agreeing metadata loads; position_ids over padding agree with the shorter seq_lengths
    assert_eq!(load_line(&row(r#""seq_lengths":[2,2],"position_ids":[0,1,0,1,2]"#)), "loaded");
    // an ordinary 0/1 attention mask is not packing
    assert_eq!(load_line(&row(r#""attention_mask":[1,1,1,1,0]"#)), "loaded");
}

/// Faults a hostile read found, each by hand: the boundary field that knows padding wins,
/// padding after one conversation is cut off and checked, the first position of a later
/// conversation supervised, a boundary inside a conversation, a span outside every
/// conversation kept for the contract.
#[test]
fn padding_first_positions_and_stray_spans_of_packed_rows() {
    let dir = std::env::temp_dir().join(format!("sphragis-packed-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("v.jsonl");
    let spans = |s: &str| format!(r#""span_end":"exclusive","message_spans":[{s}]"#);
    let lines = [
        // attention_mask knows position 4 is padding; position_ids (restarting at 4) agree on
        // the conversations before it
        r#"{"view_id":"am","instance_id":["a__b-1","a__b-2"],"input_ids":[1,2,3,4,5],"loss_mask":[0,1,0,1,1],"attention_mask":[1,1,2,2,0],"position_ids":[0,1,0,1,0]}"#.to_string(),
        // one conversation and two positions of padding, both supervised
        r#"{"view_id":"one","instance_id":"c__d-1","input_ids":[1,2,3,4,5],"loss_mask":[0,1,0,1,1],"seq_lengths":[3]}"#.to_string(),
        // conversation 1 opens supervised: its first target is scored from conversation 0
        r#"{"view_id":"first","instance_id":["e__f-1","e__f-2"],"input_ids":[1,2,3,4,5],"loss_mask":[0,1,1,1,1],"seq_lengths":[2,3]}"#.to_string(),
        // messages numbered through the boundary: conversation 1 opens with message 2
        format!(
            r#"{{"view_id":"wrap","instance_id":["g__h-1","g__h-2"],"input_ids":[1,2,3,4,5,6],"loss_mask":[0,1,0,1,0,1],"seq_lengths":[2,4],{}}}"#,
            spans(r#"{"index":0,"role":"user","start":0,"end":1},{"index":1,"role":"assistant","start":1,"end":2},{"index":2,"role":"user","start":2,"end":3},{"index":3,"role":"assistant","start":3,"end":6}"#)
        ),
        // a span starting before 0: kept in conversation 0, where the contract fails it
        format!(
            r#"{{"view_id":"neg","instance_id":["i__j-1","i__j-2"],"input_ids":[1,2,3,4],"loss_mask":[0,1,0,1],"seq_lengths":[2,2],{}}}"#,
            spans(r#"{"index":0,"role":"user","start":-1,"end":1},{"index":1,"role":"assistant","start":1,"end":2},{"index":0,"role":"user","start":2,"end":3},{"index":1,"role":"assistant","start":3,"end":4}"#)
        ),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load(&conn, &file, &ViewOptions { pool: Some("P".into()), ..ViewOptions::default() }, &mut |_| {}).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let views: Vec<Vec<String>> =
        rows(&conn, "select format('{} {} {}', view_id, input_ids, loss_mask) from sft_views order by view_id");
    let views: Vec<String> = views.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        views,
        [
            "am#0 [1, 2] [0, 1]",
            "am#1 [3, 4] [0, 1]",
            "first#0 [1, 2] [0, 1]",
            "first#1 [3, 4, 5] [1, 1, 1]",
            "neg#0 [1, 2] [0, 1]",
            "neg#1 [3, 4] [0, 1]",
            // the padding is in no view
            "one#0 [1, 2, 3] [0, 1, 0]",
            "wrap#0 [1, 2] [0, 1]",
            "wrap#1 [3, 4, 5, 6] [0, 1, 0, 1]",
        ]
    );
    let packs: Vec<Vec<String>> = rows(
        &conn,
        "select format('{} {} units={} pad={} padsup={} unplaced={} continuing={} first={} sup={} off={}', pack_id,
                       boundary_source, n_units, n_padding, padding_supervised, spans_unplaced, spans_continuing,
                       first_supervised, supervised, off_turns)
         from sft_packs_v1 order by pack_id",
    );
    let packs: Vec<String> = packs.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        packs,
        [
            "am attention_mask units=2 pad=1 padsup=1 unplaced=0 continuing=0 first=0 sup=3 off=false",
            "first seq_lengths units=2 pad=0 padsup=0 unplaced=0 continuing=0 first=1 sup=4 off=false",
            "neg seq_lengths units=2 pad=0 padsup=0 unplaced=1 continuing=0 first=0 sup=2 off=true",
            "one seq_lengths units=1 pad=2 padsup=2 unplaced=0 continuing=0 first=0 sup=3 off=false",
            "wrap seq_lengths units=2 pad=0 padsup=0 unplaced=0 continuing=1 first=0 sup=3 off=true",
        ]
    );
    let failing: Vec<Vec<String>> = rows(
        &conn,
        "select format('{} {}/{}', check_name, failing, tested) from check_findings_at_v1(null, 'left')
         where check_name like 'pack_%' and status in ('fail', 'warn') order by check_name",
    );
    let failing: Vec<String> = failing.into_iter().map(|mut r| r.remove(0)).collect();
    assert_eq!(
        failing,
        ["pack_boundaries_off_turns 2/5", "pack_padding_supervised 2/5", "pack_supervision_crosses 1/5"]
    );
    // the span before 0 fails the contract on the conversation that keeps it
    let spans_failing: Vec<Vec<String>> =
        rows(&conn, "select view_id from sft_contract_failures_v1 where check_name = 'spans' order by view_id");
    assert_eq!(spans_failing, [["neg#0".to_string()]]);
}
