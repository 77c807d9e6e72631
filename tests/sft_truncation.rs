//! Truncation survival (issue 9, SPEC §3.4) on hand-made views, figures worked out by hand.
//!
//! View `a` (pool A, 12 tokens): spans system [0,2), user [2,4), assistant 2 [4,7),
//! user [7,8), assistant 4 [8,12); supervised {5,6} in message 2 and {9,10,11} in message 4.
//! View `b` (pool B, recovery, 12 tokens, same spans): supervised {9,10,11} only.
//! View `c` (pool A, 6 tokens): user [0,2), assistant 1 [2,6), supervised {3,4,5}.
//! Pool A supervises 5 + 3 = 8 positions, pool B 3.
//!
//! Right, N = 10 (keeps [0,10)): a keeps {5,6,9}, loses {10,11} = 2; message 4 is cut at 10;
//!   its final report is lost. b keeps {9}, loses 2, message 4 cut, final lost. c is not over.
//! Right, N = 8 (keeps [0,8)): a keeps {5,6}, loses 3, message 4 dropped whole (it starts at
//!   8); b keeps nothing: all-masked after truncation, loses 3, message 4 dropped.
//! Left, N = 6 (keeps [6,12)): a loses {5} = 1, message 2 [4,7) is cut at 6, the final report
//!   survives; b loses nothing; c (6 tokens) is not over.

use std::path::Path;

fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

fn spans(list: &[(u32, &str, u32, u32)]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|(i, role, s, e)| format!(r#"{{"index":{i},"role":"{role}","start":{s},"end":{e}}}"#))
        .collect();
    format!("[{}]", items.join(","))
}

fn db() -> sphragis::db::Database {
    let dir = std::env::temp_dir().join(format!("sphragis-truncation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let long = spans(&[
        (0, "system", 0, 2),
        (1, "user", 2, 4),
        (2, "assistant", 4, 7),
        (3, "user", 7, 8),
        (4, "assistant", 8, 12),
    ]);
    let short = spans(&[(0, "user", 0, 2), (1, "assistant", 2, 6)]);
    let ids12 = "[1,2,3,4,5,6,7,8,9,10,11,12]";
    let views = [
        format!(
            r#"{{"view_id":"a","pool":"A","instance_id":"i1","input_ids":{ids12},"loss_mask":[0,0,0,0,0,1,1,0,0,1,1,1],"message_spans":{long},"span_end":"exclusive"}}"#
        ),
        format!(
            r#"{{"view_id":"b","pool":"B","instance_id":"i1","input_ids":{ids12},"loss_mask":[0,0,0,0,0,0,0,0,0,1,1,1],"message_spans":{long},"span_end":"exclusive"}}"#
        ),
        format!(
            r#"{{"view_id":"c","pool":"A","instance_id":"i2","input_ids":[1,2,3,4,5,6],"loss_mask":[0,0,0,1,1,1],"message_spans":{short},"span_end":"exclusive"}}"#
        ),
    ];
    std::fs::write(dir.join("views.jsonl"), views.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("pools.json"), r#"{"pools": {"A": {"role": "repair"}, "B": {"role": "recovery"}}}"#)
        .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    sphragis::sft::pools::load(&conn, &dir.join("pools.json")).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    conn
}

#[test]
fn truncation_counts_lost_supervision_cut_messages_and_all_masked_views() {
    let conn = db();
    let cols = "max_length, side, pool, views, views_over, supervised, supervised_lost, lost_share, \
                views_all_masked_after, trained_messages_cut, trained_messages_dropped, final_reports_lost";
    assert_eq!(
        rows(&conn, &format!("select {cols} from sft_truncation_at_v1([8, 10], 'right') order by max_length, pool")),
        [
            ["8", "right", "A", "2", "1", "8", "3", "0.375", "0", "0", "1", "1"],
            ["8", "right", "B", "1", "1", "3", "3", "1", "1", "0", "1", "1"],
            ["10", "right", "A", "2", "1", "8", "2", "0.25", "0", "1", "0", "1"],
            ["10", "right", "B", "1", "1", "3", "2", "0.6666666666666666", "0", "1", "0", "1"],
        ]
    );
    assert_eq!(
        rows(&conn, &format!("select {cols} from sft_truncation_at_v1([6], 'left') order by pool")),
        [
            ["6", "left", "A", "2", "1", "8", "1", "0.125", "0", "1", "0", "0"],
            ["6", "left", "B", "1", "1", "3", "0", "0", "0", "0", "0", "0"],
        ]
    );
    assert_eq!(
        rows(
            &conn,
            "select view_id, kept_from, kept_to, supervised, supervised_kept, all_masked_after, trained_messages_dropped, final_report_lost \
                     from sft_truncation_views_at_v1([8], 'right') order by view_id"
        ),
        [["a", "0", "8", "5", "2", "false", "1", "true"], ["b", "0", "8", "3", "0", "true", "1", "true"]]
    );
    let err = conn
        .prepare("select * from sft_truncation_at_v1([8], 'middle')")
        .and_then(|mut s| s.query([]).map(|_| ()))
        .unwrap_err();
    assert!(err.to_string().contains("side must be 'right' or 'left', not middle"), "{err}");
    // the grid view: every pool at 8k/16k/32k/64k, nothing over on these short views
    assert_eq!(rows(&conn, "select count(*), sum(views_over) from sft_truncation_v1"), [["8", "0"]]);
}
