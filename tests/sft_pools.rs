//! Pool audit views on a hand-made pool set, figures worked out by hand (issue 5).
//!
//! One instance `i1`, 8 tokens, four training views and one report-only view:
//!   A  supervises [2,5) = {2,3,4}        C1 the same line as A (an exact copy)
//!   C2 supervises [2,4) = {2,3}           B (recovery) supervises [3,6) = {3,4,5}
//!   C3 (report-only, instance i2) supervises {0}.
//! none:  4 views, exposure 3+3+2+3 = 11, unique {2,3,4,5} = 4, context 4*8 = 32.
//! exact: A and C1 count once: 3 views, exposure 8, context 24.
//! union: one repair view {2,3,4} + B: 2 views, exposure 3+3 = 6, context 16.
//! Recovery region R = {3,4,5}, |R| = 3. Region exposure: none = A 2 + C1 2 + C2 1 + B 3 = 8;
//! union = 2 + 3 = 5. New positions (R outside the repair union) = {5}: 1. New instances 0.
//! Weights: U = the repair union = 3, |R| = 3, |R ∩ U| = |{3,4}| = 2, |R \ U| = 1:
//! total(1) = 3 + 3 = 6 (= union exposure), region(1) = 2 + 3 = 5 (= union region exposure),
//! total(2) = 9, region(2) = 2 + 6 = 8.
//! Exact per pool: C1 is a copy of A (a < c1 by view_id); C2 {2,3} is a subset of A.
//! priority(C2) keeps {2,3} and drops position 4 against the union; A and C1 drop nothing.
//! Membership: C1 and C2 hold 1 of 4 training views before (0.25), 1 of 2 after (0.5).
//! Concentration: the one recovery view holds all 3 of the pool's supervised tokens.

use std::path::Path;

/// Every row of `sql` as text cells.
fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

fn line(view_id: &str, pool: &str, instance: &str, mask: [u8; 8]) -> String {
    format!(
        r#"{{"view_id":"{view_id}","pool":"{pool}","instance_id":"{instance}","input_ids":[1,2,3,4,5,6,7,8],"loss_mask":{mask:?}}}"#
    )
}

/// Writes `views` (view lines) into `dir` with a pools file giving A the repair role and B
/// the recovery role, and loads both into a new in-memory database.
fn repair_and_recovery(dir: &Path, views: &[String]) -> sphragis::db::Database {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("views.jsonl"), views.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("pools.json"), r#"{"pools": {"A": {"role": "repair"}, "B": {"role": "recovery"}}}"#)
        .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    sphragis::sft::pools::load(&conn, &dir.join("pools.json")).unwrap();
    conn
}

#[test]
fn dedup_exposure_and_weights_by_hand() {
    let dir = std::env::temp_dir().join(format!("sphragis-pools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let views = [
        line("a", "A", "i1", [0, 0, 1, 1, 1, 0, 0, 0]),
        line("c1", "C1", "i1", [0, 0, 1, 1, 1, 0, 0, 0]),
        line("c2", "C2", "i1", [0, 0, 1, 1, 0, 0, 0, 0]),
        line("b", "B", "i1", [0, 0, 0, 1, 1, 1, 0, 0]),
        line("c3", "C3", "i2", [1, 0, 0, 0, 0, 0, 0, 0]),
    ]
    .join("\n");
    std::fs::write(dir.join("views.jsonl"), views + "\n").unwrap();
    std::fs::write(
        dir.join("pools.json"),
        r#"{"pools": {"A": {"role": "repair"}, "C1": {"role": "repair", "label_subset": true},
            "C2": {"role": "repair", "label_subset": true}, "B": {"role": "recovery"}, "C3": {"role": "report"}}}"#,
    )
    .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    sphragis::sft::pools::load(&conn, &dir.join("pools.json")).unwrap();
    let mut stmt = conn
        .prepare(
            "select mode, views, instances, exposure, unique_positions, context_tokens from sft_dedup_v1 order by mode",
        )
        .unwrap();
    let dedup: Vec<(String, i64, i64, i64, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        dedup,
        vec![("exact".into(), 3, 1, 8, 4, 24), ("none".into(), 4, 1, 11, 4, 32), ("union".into(), 2, 1, 6, 4, 16),]
    );
    let mut stmt = conn
        .prepare("select mode, region_positions, region_exposure, exposure, new_instances, new_positions from sft_recovery_exposure_v1 order by mode")
        .unwrap();
    let exposure: Vec<(String, i64, i64, i64, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(exposure, vec![("none".into(), 3, 8, 11, 0, 1), ("union".into(), 3, 5, 6, 0, 1)]);
    let mut stmt = conn
        .prepare("select total::double, region::double, region_in_union, region_outside_union from sft_weight_projection_v1 where weight in (1, 2) order by weight")
        .unwrap();
    let weights: Vec<(f64, f64, i64, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(weights, vec![(6.0, 5.0, 2, 1), (9.0, 8.0, 2, 1)]);
    let rows = |sql: &str| rows(&conn, sql);
    assert_eq!(
        rows("select pool, views, exact_copies, remaining, subset_views from sft_dedup_exact_pools_v1 order by pool"),
        [
            ["A", "1", "0", "1", "0"],
            ["B", "1", "0", "1", "0"],
            ["C1", "1", "1", "0", "0"],
            ["C2", "1", "0", "1", "1"],
            ["C3", "1", "0", "1", "0"]
        ]
    );
    assert_eq!(
        rows(
            "select pool, instances_with_view, kept_positions, union_positions, dropped_positions, instances_dropping from sft_dedup_priority_v1 order by pool"
        ),
        [["A", "1", "3", "3", "0", "0"], ["C1", "1", "3", "3", "0", "0"], ["C2", "1", "2", "3", "1", "1"]]
    );
    assert_eq!(
        rows("select pool, views, share_before, instances, share_after from sft_membership_v1 order by pool"),
        [["C1", "1", "0.25", "1", "0.5"], ["C2", "1", "0.25", "1", "0.5"]]
    );
    assert_eq!(
        rows(
            "select k, views, top_k_supervised, supervised, share from sft_recovery_concentration_v1 where k in (1, 3) order by k"
        ),
        [["1", "1", "3", "3", "1"], ["3", "1", "3", "3", "1"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// The weight projection when the recovery region is not inside the repair union (issue 9):
/// instance i1 has a repair view A on {1,2} and a recovery view B on {2,3}; instance i2 has
/// only a recovery view B on {0,1} (no repair view). U = 2, R = {i1:2, i1:3, i2:0, i2:1},
/// |R| = 4, |R ∩ U| = 1 (i1:2), |R \ U| = 3. A trainer at weight w sees total = 2 + 4w and
/// region = 1 + 4w: at w = 1, 6 and 5 — the union mode's exposure and region exposure —
/// where (1 + w)|R| would claim a region of 8, more than the whole exposure.
#[test]
fn weight_projection_counts_recovery_outside_the_union_once() {
    let dir = std::env::temp_dir().join(format!("sphragis-weights-{}", std::process::id()));
    let conn = repair_and_recovery(
        &dir,
        &[
            line("a1", "A", "i1", [0, 1, 1, 0, 0, 0, 0, 0]),
            line("b1", "B", "i1", [0, 0, 1, 1, 0, 0, 0, 0]),
            line("b2", "B", "i2", [1, 1, 0, 0, 0, 0, 0, 0]),
        ],
    );
    assert_eq!(
        rows(
            &conn,
            "select weight, union_exposure, region_positions, region_in_union, region_outside_union, total, region \
                     from sft_weight_projection_at_v1([0.0, 1.0, 2.0]) order by weight"
        ),
        [
            ["0", "2", "4", "1", "3", "2", "1"],
            ["1", "2", "4", "1", "3", "6", "5"],
            ["2", "2", "4", "1", "3", "10", "9"],
        ]
    );
    // at w = 1 the projection is what the exposure report counts
    assert_eq!(
        rows(
            &conn,
            "select exposure, region_exposure, new_positions from sft_recovery_exposure_v1 where mode = 'union'"
        ),
        [["6", "5", "3"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Isolation, budget and outcomes on two instances, by hand:
/// demo__repo-1 (train): A supervises {2,3,4}, B (recovery) {3,4,5}, 8 tokens each;
/// other__x-2 (dev): A supervises {0,1}. Protected families: other__x.
/// Budget on train: 2 views (one union repair view + B), exposure 3 + 3 = 6, 16 tokens;
/// G = 8: ceil(2/8) = 1 update per epoch, 100 steps = 100 passes; G = 1: 2 updates, 50 passes.
/// Outcomes: demo__repo-1 resolved with 2 fail-to-pass nodes and 3 pass-to-pass passed;
/// other__x-2 unresolved with 1 fail-to-pass node and 1 passed: median pass-to-pass 2.
#[test]
fn isolation_budget_and_outcomes_by_hand() {
    let dir = std::env::temp_dir().join(format!("sphragis-budget-{}", std::process::id()));
    let conn = repair_and_recovery(
        &dir,
        &[
            line("a1", "A", "demo__repo-1", [0, 0, 1, 1, 1, 0, 0, 0]),
            line("b1", "B", "demo__repo-1", [0, 0, 0, 1, 1, 1, 0, 0]),
            line("a2", "A", "other__x-2", [1, 1, 0, 0, 0, 0, 0, 0]),
        ],
    );
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"splits": {"train": ["demo__repo-1"], "dev": ["other__x-2"]}, "protected_families": ["other__x"]}"#,
    )
    .unwrap();
    for (id, resolved, f2p, p2p) in [
        ("demo__repo-1", true, r#"["t1","t2"], "failure": []"#, r#"["p1","p2","p3"]"#),
        ("other__x-2", false, r#"[], "failure": ["t1"]"#, r#"["p1"]"#),
    ] {
        std::fs::create_dir_all(dir.join(id)).unwrap();
        std::fs::write(
            dir.join(id).join("report.json"),
            format!(r#"{{"resolved": {resolved}, "tests_status": {{"FAIL_TO_PASS": {{"success": {f2p}}}, "PASS_TO_PASS": {{"success": {p2p}, "failure": []}}}}}}"#),
        )
        .unwrap();
    }
    sphragis::sft::pools::load_manifest(&conn, &dir.join("manifest.json")).unwrap();
    for id in ["demo__repo-1", "other__x-2"] {
        sphragis::sft::store::load_outcome(&conn, &dir.join(id).join("report.json")).unwrap();
    }
    let rows = |sql: &str| rows(&conn, sql);
    assert_eq!(
        rows("select family, instances, views, protected from sft_isolation_v1 order by family"),
        [["demo__repo", "1", "2", "false"], ["other__x", "1", "1", "true"]]
    );
    assert_eq!(
        rows(
            "select grad_accum, steps, train_instances, views, exposure, context_tokens, updates_per_epoch, passes \
              from sft_budget_v1 where steps = 100 and grad_accum in (1, 8) order by grad_accum"
        ),
        [["1", "100", "1", "2", "6", "16", "2", "50"], ["8", "100", "1", "2", "6", "16", "1", "100"]]
    );
    assert_eq!(
        rows(
            "select fail_to_pass, instances, resolved, all_instances, all_resolved, median_pass_to_pass from sft_outcome_distribution_v1 order by fail_to_pass"
        ),
        [["1", "1", "0", "2", "1", "2"], ["2", "1", "1", "2", "1", "2"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Thinking bodies and supervised tool calls on a hand-made LLaMA-Factory row:
/// message 2 (assistant) thinks "Let me check the test again.\n" x 200 (5,800 characters,
/// compresses far below 0.1: a long-repetition candidate) and calls bash; message 4
/// (assistant) has a blank thinking placeholder and calls `search_dir` (a search tool).
/// Two calls in all (bash, search: half each); one view keeps only message 2: one
/// supervised call, bash, supervised bash share 1.
#[test]
fn thinking_bodies_and_supervised_tools_by_hand() {
    let dir = std::env::temp_dir().join(format!("sphragis-thinking-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let thinking = "Let me check the test again.\\n".repeat(200);
    let row = format!(
        r#"{{"messages": [{{"role": "system", "content": [{{"type": "text", "value": "sys"}}]}},
        {{"role": "user", "content": [{{"type": "text", "value": "fix it"}}]}},
        {{"role": "assistant", "content": [{{"type": "reasoning", "value": "{thinking}"}}, {{"type": "tool_call", "value": "{{\"name\": \"bash\", \"arguments\": {{\"command\": \"ls\"}}}}"}}]}},
        {{"role": "tool", "content": [{{"type": "text", "value": "a.py"}}]}},
        {{"role": "assistant", "content": [{{"type": "reasoning", "value": "  "}}, {{"type": "tool_call", "value": "{{\"name\": \"search_dir\", \"arguments\": {{\"search_term\": \"x\"}}}}"}}]}}],
        "tools": "[]"}}"#
    )
    .replace('\n', " ");
    std::fs::write(dir.join("lf.jsonl"), row + "\n").unwrap();
    std::fs::write(
        dir.join("views.jsonl"),
        "{\"view_id\":\"v\",\"pool\":\"A\",\"instance_id\":\"lf:0\",\"input_ids\":[1,2,3],\"loss_mask\":[0,1,1],\"keep_msgs\":[2]}\n",
    )
    .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &dir.join("lf.jsonl"), None).unwrap();
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    let rows = |sql: &str| rows(&conn, sql);
    assert_eq!(
        rows("select source, assistant_messages, bodies, blank, chars_max, long_repetition from sft_thinking_v1"),
        [["llamafactory", "2", "2", "1", "5800", "1"]]
    );
    assert_eq!(
        rows(
            "select tool, calls, share, supervised_calls, supervised_share, bash_share from sft_supervised_tools_v1 order by tool"
        ),
        [["bash", "1", "0.5", "1", "1", "1"], ["search", "1", "0.5", "0", "0", "1"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

fn mini_traj(id: &str, middle: &str, second: &str) -> String {
    let msg = |role: &str, content: &str| serde_json::json!({"role": role, "content": content});
    serde_json::json!({
        "instance_id": id,
        "trajectory_format": "mini-swe-agent-1",
        "info": {"exit_status": "Submitted", "submission": ""},
        "messages": [
            msg("system", "You are a helpful assistant."),
            msg("user", "Fix the failing test."),
            msg("assistant", "THOUGHT: run the tests\n\n```bash\npytest tests/test_a.py\n```"),
            msg("user", "<returncode>1</returncode>\n<output>\nF\n============================== 1 failed in 0.12s ===============================\n</output>"),
            msg("assistant", &format!("THOUGHT: next\n\n```bash\n{middle}\n```")),
            msg("user", "<returncode>0</returncode>\n<output>\n</output>"),
            msg("assistant", &format!("THOUGHT: again\n\n```bash\n{second}\n```")),
            msg("user", "<returncode>0</returncode>\n<output>\n.\n============================== 1 passed in 0.10s ===============================\n</output>"),
        ]
    })
    .to_string()
}

/// Recovery windows, by hand: in `demo__env-1` the pass comes from the same tests run with
/// an environment variable added and no file written in between (the seed's puremagic
/// case: flagged); in `demo__fix-2` a `sed -i` edit comes between the failure and the
/// same command passing (a code change: not flagged).
#[test]
fn recovery_window_audit_by_hand() {
    let dir = std::env::temp_dir().join(format!("sphragis-windows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("env.traj.json"),
        mini_traj("demo__env-1", "ls tests", "PUREMAGIC_SKIP=1 pytest tests/test_a.py"),
    )
    .unwrap();
    std::fs::write(
        dir.join("fix.traj.json"),
        mini_traj("demo__fix-2", "sed -i 's/a/b/' src/a.py", "pytest tests/test_a.py"),
    )
    .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for f in ["env.traj.json", "fix.traj.json"] {
        sphragis::sft::store::load_trajectories(&conn, &dir.join(f), None).unwrap();
    }
    assert_eq!(
        rows(
            &conn,
            "select instance_id, fail_index, pass_index, same_command, env_changed, runner_changed, narrower_selection, \
             writes_between, changed_command_pass from sft_recovery_windows_heuristic_v1 order by instance_id"
        ),
        [
            ["demo__env-1", "3", "7", "false", "true", "false", "false", "false", "true"],
            ["demo__fix-2", "3", "7", "true", "false", "false", "false", "true", "false"],
        ]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Final-report status and the expected-failure flag, by hand. Three trajectories whose
/// last assistant message is message 6: `demo__a-1` has a repair view keeping it
/// (supervised), `demo__b-2` a repair view keeping only message 2 (masked), `demo__c-3`
/// no training view (absent) but a report-only view; its failing observation (message
/// 3) reports an XFAIL, so that report-only view needs review.
#[test]
fn final_report_status_and_expected_failures_by_hand() {
    let dir = std::env::temp_dir().join(format!("sphragis-final-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for id in ["demo__a-1", "demo__b-2"] {
        std::fs::write(dir.join(format!("{id}.traj.json")), mini_traj(id, "ls", "pytest tests/test_a.py")).unwrap();
    }
    let xfail = mini_traj("demo__c-3", "ls", "pytest tests/test_a.py")
        .replace("F\\n====", "x\\nXFAIL tests/test_a.py::test_broken_fixture - deliberately broken input\\n====");
    std::fs::write(dir.join("demo__c-3.traj.json"), xfail).unwrap();
    // 8 tokens: message i spans [i, i+1); supervised where kept
    let spans: Vec<String> = (0..8)
        .map(|i| {
            let role = if i == 0 {
                "system"
            } else if i % 2 == 0 {
                "assistant"
            } else {
                "user"
            };
            format!(r#"{{"index":{i},"role":"{role}","start":{i},"end":{}}}"#, i + 1)
        })
        .collect();
    let view = |id: &str, pool: &str, inst: &str, keep: &str, mask: &str| {
        format!(
            r#"{{"view_id":"{id}","pool":"{pool}","instance_id":"{inst}","input_ids":[1,2,3,4,5,6,7,8],"loss_mask":{mask},"message_spans":[{}],"span_end":"exclusive","keep_msgs":{keep}}}"#,
            spans.join(",")
        )
    };
    let lines = [
        view("a", "A", "demo__a-1", "[2,4,6]", "[0,0,1,0,1,0,1,0]"),
        view("b", "A", "demo__b-2", "[2]", "[0,0,1,0,0,0,0,0]"),
        view("c", "C3", "demo__c-3", "[6]", "[0,0,0,0,0,0,1,0]"),
    ];
    std::fs::write(dir.join("views.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("pools.json"), r#"{"pools": {"A": {"role": "repair"}, "C3": {"role": "report"}}}"#)
        .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for id in ["demo__a-1", "demo__b-2", "demo__c-3"] {
        sphragis::sft::store::load_trajectories(&conn, &dir.join(format!("{id}.traj.json")), None).unwrap();
    }
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    sphragis::sft::pools::load(&conn, &dir.join("pools.json")).unwrap();
    let rows = |sql: &str| rows(&conn, sql);
    assert_eq!(
        rows("select instance_id, final_message, status from sft_final_report_v1 order by instance_id"),
        // c's final message is supervised only by the report-only C3 view (issue 9: it was
        // called absent)
        [["demo__a-1", "6", "supervised"], ["demo__b-2", "6", "masked"], ["demo__c-3", "6", "report-only"]]
    );
    let flagged =
        rows("select view_id, instance_id, msg_index, status, evidence from sft_expected_failures_heuristic_v1");
    assert_eq!(flagged.len(), 1);
    assert_eq!(flagged[0][..4], ["c", "demo__c-3", "3", "needs review"]);
    assert!(flagged[0][4].contains("XFAIL tests/test_a.py::test_broken_fixture"), "{:?}", flagged[0][4]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A samples database (SQLite, read-only): two natural finishes (one success) and one
/// max_steps failure; medians of the declared test nodes per finish reason.
#[test]
fn samples_database_by_hand() {
    let dir = std::env::temp_dir().join(format!("sphragis-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("samples.sqlite");
    {
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(
            "create table samples (instance_id text, success integer, finish_reason text, fail_to_pass integer, pass_to_pass integer);
             insert into samples values ('a__a-1', 1, 'natural', 2, 10), ('a__a-2', 0, 'natural', 4, 30), ('a__a-3', 0, 'max_steps', 1, 5);",
        )
        .unwrap();
    }
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::pools::load_samples(&conn, &path).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select finish_reason, instances, successes, median_fail_to_pass, median_pass_to_pass from sft_samples_outcomes_v1 order by 1"
        ),
        [["max_steps", "1", "0", "1", "5"], ["natural", "2", "1", "3", "20"]]
    );
    // success must be 0 or 1; an instance may appear once
    for (name, values, expected) in [
        ("two.sqlite", "('b__b-1', 2, 'natural', 1, 1)", "field `samples[1].success`: 2 is not 0 or 1"),
        (
            "dup.sqlite",
            "('c__c-1', 1, 'natural', 1, 1), ('c__c-1', 0, 'natural', 1, 1)",
            "field `samples[2].instance_id`: c__c-1 repeats row 1",
        ),
        (
            "again.sqlite",
            "('a__a-1', 1, 'natural', 1, 1)",
            "field `samples[1].instance_id`: a__a-1 is already loaded from",
        ),
    ] {
        let p = dir.join(name);
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(&format!(
                "create table samples (instance_id text, success integer, finish_reason text, fail_to_pass integer, pass_to_pass integer);
                 insert into samples values {values};"
            ))
            .unwrap();
        let err = sphragis::sft::pools::load_samples(&conn, &p).unwrap_err().to_string();
        assert!(err.contains(expected), "{name}: {err}");
    }
    // hostile input: an empty instance id names no instance (it was stored as '')
    let blank = dir.join("blank.sqlite");
    rusqlite::Connection::open(&blank)
        .unwrap()
        .execute_batch(
            "create table samples (instance_id text, success integer, finish_reason text, fail_to_pass integer, pass_to_pass integer);
             insert into samples values ('d__d-1', 1, 'natural', 1, 1), ('  ', 1, 'natural', 1, 1);",
        )
        .unwrap();
    let err = sphragis::sft::pools::load_samples(&conn, &blank).unwrap_err().to_string();
    assert!(err.contains("field `samples[2].instance_id`: must not be empty"), "{err}");
    assert_eq!(rows(&conn, "select count(*) from sft_samples where instance_id = 'd__d-1'"), [["0"]]);
    // not a samples database: the table is named in the error
    let other = dir.join("other.sqlite");
    rusqlite::Connection::open(&other).unwrap().execute_batch("create table t (x integer);").unwrap();
    let err = sphragis::sft::pools::load_samples(&conn, &other).unwrap_err().to_string();
    assert!(err.contains("field `samples`: not a samples database"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Ungraded outcomes (issue 9): four instances with a view each. i1 resolved (2
/// fail-to-pass nodes, 5 pass-to-pass passed), i2 unresolved (1 fail-to-pass node
/// failed, 7 passed), i3 `patch_successfully_applied: false` and i4 `patch_is_None:
/// true`, both without `tests_status`. Counting the ungraded two as 0 gave a
/// pass-to-pass median of (0 + 5) / 2 = 2.5; over the graded two it is (5 + 7) / 2 = 6.
#[test]
fn outcome_statistics_leave_ungraded_instances_out() {
    let dir = std::env::temp_dir().join(format!("sphragis-ungraded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let views: Vec<String> = ["i1", "i2", "i3", "i4"]
        .iter()
        .map(|i| line(&format!("v{i}"), "A", &format!("a__a-{i}"), [0, 0, 1, 1, 0, 0, 0, 0]))
        .collect();
    std::fs::write(dir.join("views.jsonl"), views.join("\n") + "\n").unwrap();
    let reports = [
        (
            "a__a-i1",
            r#"{"patch_successfully_applied": true, "resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": ["f1","f2"], "failure": []}, "PASS_TO_PASS": {"success": ["p1","p2","p3","p4","p5"], "failure": []}}}"#,
        ),
        (
            "a__a-i2",
            r#"{"patch_successfully_applied": true, "resolved": false, "tests_status": {"FAIL_TO_PASS": {"success": [], "failure": ["f1"]}, "PASS_TO_PASS": {"success": ["p1","p2","p3","p4","p5","p6","p7"], "failure": []}}}"#,
        ),
        (
            "a__a-i3",
            r#"{"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": false, "resolved": false}"#,
        ),
        (
            "a__a-i4",
            r#"{"patch_is_None": true, "patch_exists": false, "patch_successfully_applied": false, "resolved": false}"#,
        ),
    ];
    for (id, text) in reports {
        std::fs::create_dir_all(dir.join(id)).unwrap();
        std::fs::write(dir.join(id).join("report.json"), text).unwrap();
    }
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    for (id, _) in reports {
        sphragis::sft::store::load_outcome(&conn, &dir.join(id).join("report.json")).unwrap();
    }
    let rows = |sql: &str| rows(&conn, sql);
    assert_eq!(
        rows(
            "select graded, fail_to_pass, instances, resolved, all_instances, all_resolved, all_not_graded, median_pass_to_pass \
              from sft_outcome_distribution_v1 order by fail_to_pass nulls last"
        ),
        [
            ["true", "1", "1", "0", "4", "1", "2", "6"],
            ["true", "2", "1", "1", "4", "1", "2", "6"],
            ["false", "", "2", "0", "4", "1", "2", "6"],
        ]
    );
    assert_eq!(
        rows(
            "select instance_id, outcome, resolved, fail_to_pass, pass_to_pass_passed from sft_instances_v1 order by 1"
        ),
        [
            ["a__a-i1", "resolved", "true", "2", "5"],
            ["a__a-i2", "unresolved", "false", "1", "7"],
            ["a__a-i3", "not graded", "false", "", ""],
            ["a__a-i4", "not graded", "false", "", ""],
        ]
    );
    assert_eq!(
        rows("select instance_id, outcome from sft_instance_detail_v1 where outcome = 'not graded' order by 1"),
        [["a__a-i3", "not graded"], ["a__a-i4", "not graded"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Samples database with an ungraded instance (issue 9): a__a-3 has NULL test-node
/// counts. natural: a__a-1 (2, 10), a__a-2 (4, 30) → medians 3 and 20; max_steps: a__a-3
/// ungraded and a__a-4 (1, 5) → not_graded 1, medians 1 and 5 (not 0.5 and 2.5).
#[test]
fn samples_outcomes_count_ungraded_apart() {
    let dir = std::env::temp_dir().join(format!("sphragis-samples-ungraded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("samples.sqlite");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "create table samples (instance_id text, success integer, finish_reason text, fail_to_pass integer, pass_to_pass integer);
             insert into samples values ('a__a-1', 1, 'natural', 2, 10), ('a__a-2', 0, 'natural', 4, 30),
                 ('a__a-3', 0, 'max_steps', null, null), ('a__a-4', 0, 'max_steps', 1, 5);",
        )
        .unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::pools::load_samples(&conn, &path).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select finish_reason, instances, successes, not_graded, median_fail_to_pass, median_pass_to_pass from sft_samples_outcomes_v1 order by 1"
        ),
        [["max_steps", "2", "0", "1", "1", "5"], ["natural", "2", "1", "0", "3", "20"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Issue 9: tool calls are bucketed by their arguments where the tool multiplexes
/// (OpenHands' `str_replace_editor` with `command: "view"` is a read, "str_replace" an
/// edit), and the bash calls are exactly the shell commands sphragis stores, so the bash
/// share and `report trajectories` agree. One OpenHands row, by hand: message 2 makes two
/// parallel calls, a `view` (call 0) then `execute_bash` (call 1); message 4 calls
/// str_replace; message 6 calls `finish`. Classes: read 1, bash 1, edit 1, submit 1.
#[test]
fn tool_calls_are_bucketed_by_arguments_and_bash_agrees_with_stored_commands() {
    let dir = std::env::temp_dir().join(format!("sphragis-tool-classes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let call = |id: &str, name: &str, args: serde_json::Value| serde_json::json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    let row = serde_json::json!([{
        "instance_id": "demo__tools-1",
        "resolved": true,
        "tools": [],
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "look", "tool_calls": [
                call("c1", "str_replace_editor", serde_json::json!({"command": "view", "path": "/r/a.py"})),
                call("c2", "execute_bash", serde_json::json!({"command": "pytest -q"})),
            ]},
            {"role": "tool", "content": "a.py", "tool_call_id": "c1", "name": "str_replace_editor"},
            {"role": "assistant", "content": "edit", "tool_calls": [
                call("c3", "str_replace_editor", serde_json::json!({"command": "str_replace", "path": "/r/a.py", "old_str": "a", "new_str": "b"})),
            ]},
            {"role": "tool", "content": "ok", "tool_call_id": "c3", "name": "str_replace_editor"},
            {"role": "assistant", "content": "done", "tool_calls": [call("c4", "finish", serde_json::json!({}))]},
        ]
    }]);
    std::fs::write(dir.join("oh.json"), row.to_string()).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &dir.join("oh.json"), None).unwrap();
    let rows = |sql: &str| rows(&conn, sql);
    assert_eq!(
        rows("select msg_index, call_index, name, command, tool from sft_tool_call_classes_v1 order by 1, 2"),
        [
            ["2", "0", "str_replace_editor", "view", "read"],
            ["2", "1", "execute_bash", "pytest -q", "bash"],
            ["4", "0", "str_replace_editor", "str_replace", "edit"],
            ["6", "0", "finish", "", "submit"],
        ]
    );
    // the stored shell command points at the call it came from (call 1, not ordinal 0)
    assert_eq!(rows("select msg_index, call_index, command from sft_commands"), [["2", "1", "pytest -q"]]);
    assert_eq!(
        rows(
            "select tool_calls_bash, tool_calls_read, tool_calls_edit, tool_calls_submit, tool_calls_other from sft_instances_v1"
        ),
        [["1", "1", "1", "1", "0"]]
    );
    assert_eq!(
        rows(
            "select (select calls from sft_supervised_tools_v1 where tool = 'bash'), bash_commands from sft_trajectory_stats_v1"
        ),
        [["1", "1"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Issue 9: a protected repository in training is flagged whatever the id scheme. Three
/// SWE-smith rows (ids `<owner>__<repo>.<commit>.<suffix>`, real shape): two of the
/// protected `arrow-py__arrow`, one of `getmoto__moto` whose row names its repo
/// (`repo: "pallets/jinja"` wins over the id); plus a row whose id names no repository:
/// undetermined, protection unknown (null), never counted as unprotected.
#[test]
fn isolation_flags_swe_smith_families_and_never_calls_undetermined_unprotected() {
    let dir = std::env::temp_dir().join(format!("sphragis-isolation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let row = |id: &str, repo: Option<&str>| {
        let mut r = serde_json::json!({"instance_id": id, "resolved": true, "messages": [
            {"role": "system", "content": "sys"}, {"role": "user", "content": "fix"},
            {"role": "assistant", "content": "done\n<function=submit>\n</function>"}]});
        if let Some(repo) = repo {
            r["repo"] = serde_json::json!(repo);
        }
        r
    };
    let rows_json = serde_json::json!([
        row("arrow-py__arrow.1d70d009.lm_rewrite__nuzjfyur", None),
        row("arrow-py__arrow.1d70d009.func_pm_op_change__x2", None),
        row("getmoto__moto.694ce1f4.pr_5072", Some("pallets/jinja")),
        row("task-without-scheme", None),
    ]);
    std::fs::write(dir.join("smith.json"), rows_json.to_string()).unwrap();
    std::fs::write(dir.join("manifest.json"), r#"{"protected_families": ["arrow-py__arrow"]}"#).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::sft::store::load_trajectories(&conn, &dir.join("smith.json"), None).unwrap();
    sphragis::sft::pools::load_manifest(&conn, &dir.join("manifest.json")).unwrap();
    assert_eq!(
        rows(&conn, "select family, instances, protected from sft_isolation_v1 order by family"),
        [["(undetermined)", "1", ""], ["arrow-py__arrow", "2", "true"], ["pallets__jinja", "1", "false"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// An evaluator report that graded a broken environment (`infra_failure: true`, SWE-bench PR
/// #594) is never a model failure (issue 31). Four instances with a view each:
///   i1 resolved (1 fail-to-pass node passed), i2 unresolved (1 node failed),
///   i3 infra failure (`infra_failure_reason` out_of_memory, no tests_status),
///   i4 empty patch (`patch_is_None`, no tests_status).
/// By hand: sft_instances_v2 outcomes resolved / unresolved / infra failure / empty patch,
/// resolved true / false / null / false. Distribution without i3: all_instances 3,
/// all_resolved 1, all_not_graded 1 (i4), all_infra_failures 1; v1 counted i3 among its 4
/// instances. Check outcome_infra_failures: tested 4 reports, failing 1, status warn.
#[test]
fn infra_failure_is_never_unresolved() {
    let dir = std::env::temp_dir().join(format!("sphragis-infra-{}", std::process::id()));
    let views: Vec<String> =
        ["i1", "i2", "i3", "i4"].iter().map(|i| line(&format!("v{i}"), "A", i, [0, 0, 1, 1, 0, 0, 0, 0])).collect();
    let conn = repair_and_recovery(&dir, &views);
    let graded = |resolved: bool| {
        let (ok, bad) = if resolved { ("[\"t1\"]", "[]") } else { ("[]", "[\"t1\"]") };
        format!(
            "\"patch_is_None\": false, \"patch_exists\": true, \"patch_successfully_applied\": true, \"resolved\": {resolved}, \
             \"tests_status\": {{\"FAIL_TO_PASS\": {{\"success\": {ok}, \"failure\": {bad}}}, \"PASS_TO_PASS\": {{\"success\": [], \"failure\": []}}}}"
        )
    };
    let reports = [
        ("i1", graded(true)),
        ("i2", graded(false)),
        (
            "i3",
            "\"patch_is_None\": false, \"patch_exists\": true, \"patch_successfully_applied\": true, \"resolved\": false, \
             \"infra_failure\": true, \"infra_failure_reason\": \"out_of_memory\""
                .to_string(),
        ),
        ("i4", "\"patch_is_None\": true, \"patch_exists\": false, \"patch_successfully_applied\": false, \"resolved\": false".to_string()),
    ];
    for (id, body) in &reports {
        let folder = dir.join(id);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("report.json"), format!("{{\"{id}\": {{{body}}}}}")).unwrap();
        sphragis::sft::store::load_outcome(&conn, &folder.join("report.json")).unwrap();
    }
    assert_eq!(
        rows(&conn, "select instance_id, outcome, resolved, infra_failure_reason from sft_instances_v2 order by 1"),
        [
            ["i1", "resolved", "true", ""],
            ["i2", "unresolved", "false", ""],
            ["i3", "infra failure", "", "out_of_memory"],
            ["i4", "empty patch", "false", ""],
        ]
    );
    // the released v1 read i3 as a model failure: the fault fixed
    assert_eq!(
        rows(&conn, "select resolved, outcome from sft_instances_v1 where instance_id = 'i3'"),
        [["false", "not graded"]]
    );
    assert_eq!(
        rows(
            &conn,
            "select graded, fail_to_pass, instances, resolved, all_instances, all_resolved, all_not_graded, all_infra_failures \
             from sft_outcome_distribution_v2 order by graded, fail_to_pass"
        ),
        [["false", "", "1", "0", "3", "1", "1", "1"], ["true", "1", "2", "1", "3", "1", "1", "1"]]
    );
    assert_eq!(rows(&conn, "select all_instances from sft_outcome_distribution_v1 limit 1"), [["4"]]);
    assert_eq!(
        rows(
            &conn,
            "select tested, failing, status from check_findings_v1 where check_name = 'outcome_infra_failures'"
        ),
        [["4", "1", "warn"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Hostile input: a pools file or split manifest holding one key twice loaded the last
/// value (serde keeps it) with exit 0, and a protected family `""` was stored. Both are
/// refused naming the file, line and field, and the database keeps what it held.
#[test]
fn duplicate_keys_and_empty_names_in_pools_and_manifests_are_refused() {
    let dir = std::env::temp_dir().join(format!("sphragis-pools-dup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let pools = dir.join("pools.json");
    std::fs::write(&pools, "{\"pools\": {\"A\": {\"role\": \"repair\"},\n  \"A\": {\"role\": \"report\"}}}").unwrap();
    let err = format!("{:#}", sphragis::sft::pools::load(&conn, &pools).unwrap_err());
    assert!(err.contains("pools.json:2: field `pools.A`: duplicate key (first on line 1)"), "{err}");
    assert_eq!(rows(&conn, "select count(*) from sft_pool_roles"), [["0"]]);
    let manifest = dir.join("manifest.json");
    for (text, expected) in [
        (
            "{\"splits\": {\"train\": [\"a__a-1\"],\n \"train\": [\"b__b-2\"]}}",
            "manifest.json:2: field `splits.train`: duplicate key (first on line 1)",
        ),
        ("{\"protected_families\": [\"astropy__astropy\", \"\"]}", "field `protected_families[1]`: must not be empty"),
    ] {
        std::fs::write(&manifest, text).unwrap();
        let err = format!("{:#}", sphragis::sft::pools::load_manifest(&conn, &manifest).unwrap_err());
        assert!(err.contains(expected), "{text}: {err}");
    }
    assert_eq!(
        rows(&conn, "select (select count(*) from sft_split_manifest) + (select count(*) from sft_protected_families)"),
        [["0"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}
