//! The bundled SFT audit samples (`data-samples/sft/audit/`), one of every seed pitfall,
//! checked against figures worked out by hand.
//!
//! Trajectories: `demo__env-1` (the pass comes from adding `PUREMAGIC_SKIP=1`, no file
//! written: the puremagic case), `demo__fix-2` (a heredoc write between the failure and
//! the pass), `broken__lint-3` (unresolved; its failing run is an XFAIL of a deliberately
//! broken input), `thinking:0` (LLaMA-Factory: a 5,800-character repetitive thinking block
//! and a blank placeholder). Views (8 tokens, message i at position i):
//!   A:env {2,4,6}  A:fix {2,4,6}  C1:fix {2,4,6} (an exact copy)  C2:fix {2,4} (a subset
//!   mask)  B:env {4,6} (recovery window, messages 4..6)  C3:lint {6} (report-only).
//! Manifest: train = env, fix; dev = lint; protected family broken__lint.
//!
//! By hand: training views are the five of A, C1, C2, B.
//!   none:  5 views, 2 instances, exposure 3+3+3+2+2 = 13, unique 3+3 = 6, context 40
//!   exact: C1:fix goes: 4 views, exposure 10, context 32
//!   union: env and fix collapse to {2,4,6} each, plus B: 3 views, exposure 8, context 24
//!   recovery region R = {4,6} of env: region exposure none = A:env 2 + B 2 = 4 (share 4/13),
//!   union = 2 + 2 = 4; no new instance or position; weights U = 6 (the repair union), |R| = 2:
//!   total(1) = 8 (= the union mode's exposure), region(1) = 4.
//!   priority(C2) keeps 2 + 3 = 5 of the union's 6 (drops position 6 of fix).
//!   budget on train, G = 8: 3 views (2 union + B), exposure 8, 24 tokens, 1 update/epoch.

use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/audit")
}

fn audit() -> sphragis::db::Database {
    let d = dir();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for t in ["demo__env-1.traj.json", "demo__fix-2.traj.json", "broken__lint-3.traj.json", "thinking.jsonl"] {
        sphragis::sft::store::load_trajectories(&conn, &d.join(t), None).unwrap();
    }
    sphragis::sft::views::load(&conn, &d.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    sphragis::sft::pools::load(&conn, &d.join("pools.json")).unwrap();
    sphragis::sft::pools::load_manifest(&conn, &d.join("manifest.json")).unwrap();
    sphragis::sft::pools::load_samples(&conn, &d.join("samples.sqlite")).unwrap();
    for id in ["demo__env-1", "demo__fix-2", "broken__lint-3"] {
        sphragis::sft::store::load_outcome(&conn, &d.join("logs").join(id).join("report.json")).unwrap();
    }
    conn
}

fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

#[test]
fn dedup_exposure_and_budget() {
    let conn = audit();
    assert_eq!(
        rows(
            &conn,
            "select mode, views, instances, exposure, unique_positions, context_tokens from sft_dedup_v1 order by mode"
        ),
        [
            ["exact", "4", "2", "10", "6", "32"],
            ["none", "5", "2", "13", "6", "40"],
            ["union", "3", "2", "8", "6", "24"]
        ]
    );
    assert_eq!(
        rows(
            &conn,
            "select pool, views, exact_copies, remaining, subset_views from sft_dedup_exact_pools_v1 order by pool"
        ),
        [
            ["A", "2", "0", "2", "0"],
            ["B", "1", "0", "1", "1"],
            ["C1", "1", "1", "0", "0"],
            ["C2", "1", "0", "1", "1"],
            ["C3", "1", "0", "1", "0"]
        ]
    );
    assert_eq!(
        rows(
            &conn,
            "select pool, kept_positions, union_positions, dropped_positions, instances_dropping from sft_dedup_priority_v1 order by pool"
        ),
        [["A", "6", "6", "0", "0"], ["C1", "6", "6", "0", "0"], ["C2", "5", "6", "1", "1"]]
    );
    assert_eq!(
        rows(
            &conn,
            "select mode, region_positions, region_exposure, exposure, recovery_views, new_instances, new_positions from sft_recovery_exposure_v1 order by mode"
        ),
        [["none", "2", "4", "13", "1", "0", "0"], ["union", "2", "4", "8", "1", "0", "0"]]
    );
    assert_eq!(
        rows(&conn, "select total::bigint, region::bigint from sft_weight_projection_v1 where weight = 1"),
        [["8", "4"]]
    );
    assert_eq!(
        rows(
            &conn,
            "select views, exposure, context_tokens, updates_per_epoch from sft_budget_v1 where grad_accum = 8 and steps = 100"
        ),
        [["3", "8", "24", "1"]]
    );
    // One scope per column (issue 9): an assistant message is kept when some training view
    // supervises it, counted once however many views do (env: A {2,4,6} and B {4,6} keep
    // 2, 4, 6; fix: A, C1 {2,4,6}, C2 {2,4}); lint has only the report-only C3 view, so
    // no message is kept for training and its supervised token is counted apart;
    // supervised_tokens sums training views only: env 3 + 2, fix 3 + 3 + 2.
    assert_eq!(
        rows(
            &conn,
            "select instance_id, views, report_only_views, supervised_tokens, report_only_supervised_tokens, \
             assistant_messages, assistant_messages_kept, assistant_messages_masked, resolved, resolved_by \
             from sft_instances_v1 order by 1"
        ),
        [
            ["broken__lint-3", "1", "1", "", "1", "3", "0", "3", "false", "evaluator report"],
            ["demo__env-1", "2", "0", "5", "", "3", "3", "0", "true", "evaluator report"],
            ["demo__fix-2", "3", "0", "8", "", "3", "3", "0", "true", "evaluator report"],
            ["thinking:0", "0", "0", "", "", "2", "0", "2", "", ""],
        ]
    );
    // context lengths count every instance with a view (the seed's scope); lint is counted
    // only through its report-only view, and the view says so
    assert_eq!(
        rows(&conn, "select instances, report_only_instances, max from sft_context_lengths_v1"),
        [["3", "1", "8"]]
    );
    assert_eq!(
        rows(&conn, "select view_id, instance_id, tokens, supervised from sft_report_only_v1"),
        [["C3:broken__lint-3", "broken__lint-3", "8", "1"]]
    );
    // exposure per position: env {2: A, 4: A+B, 6: A+B}; fix {2: A+C1+C2, 4: A+C1+C2, 6: A+C1}
    assert_eq!(
        rows(&conn, "select instance_id, position, exposure from sft_position_exposure_v1 order by 1, 2"),
        [
            ["demo__env-1", "2", "1"],
            ["demo__env-1", "4", "2"],
            ["demo__env-1", "6", "2"],
            ["demo__fix-2", "2", "3"],
            ["demo__fix-2", "4", "3"],
            ["demo__fix-2", "6", "2"],
        ]
    );
    assert_eq!(
        rows(&conn, "select family, instances, views, protected from sft_isolation_v1 order by family"),
        // thinking:0 (LLaMA-Factory) names no repository: undetermined, protection unknown
        [
            ["(undetermined)", "1", "0", ""],
            ["broken__lint", "1", "1", "true"],
            ["demo__env", "1", "2", "false"],
            ["demo__fix", "1", "3", "false"],
        ]
    );
}

#[test]
fn behaviour_heuristics() {
    let conn = audit();
    assert_eq!(
        rows(
            &conn,
            "select instance_id, first_write_turn, test_runs, passes, fails, pass_after_last_write from sft_test_runs_heuristic_v1 \
                     where instance_id like 'demo%' order by 1"
        ),
        [["demo__env-1", "", "2", "1", "1", "true"], ["demo__fix-2", "2", "2", "1", "1", "true"]]
    );
    assert_eq!(
        rows(
            &conn,
            "select instance_id, env_changed, writes_between, changed_command_pass from sft_recovery_windows_heuristic_v1 order by 1"
        ),
        [
            ["broken__lint-3", "false", "false", "false"],
            ["demo__env-1", "true", "false", "true"],
            ["demo__fix-2", "false", "true", "false"]
        ]
    );
    assert_eq!(
        rows(&conn, "select view_id, msg_index from sft_expected_failures_heuristic_v1"),
        [["C3:broken__lint-3", "3"]]
    );
    assert_eq!(
        rows(&conn, "select instance_id, status from sft_final_report_v1 order by 1"),
        // lint's final message (6) is supervised only by the report-only C3 view
        [
            ["broken__lint-3", "report-only"],
            ["demo__env-1", "supervised"],
            ["demo__fix-2", "supervised"],
            ["thinking:0", "absent"]
        ]
    );
    assert_eq!(
        rows(&conn, "select source, bodies, blank, chars_max, long_repetition from sft_thinking_v1 order by 1"),
        [["llamafactory", "2", "1", "5800", "1"], ["mini-swe-agent", "0", "0", "", "0"]]
    );
    // every call of the samples is a bash call: one ```bash block in each of the 3 assistant
    // messages of env, fix and lint, and thinking:0's `bash` tool call = 10 calls; the
    // training views keep env's and fix's 3 assistant messages each: 6 supervised
    assert_eq!(
        rows(&conn, "select tool, calls, supervised_calls, bash_share from sft_supervised_tools_v1"),
        [["bash", "10", "6", "1"]]
    );
    // ... and the bash calls are the bash commands `report trajectories` counts
    assert_eq!(rows(&conn, "select sum(bash_commands)::bigint from sft_trajectory_stats_v1"), [["10"]]);
    // outcomes: fail-to-pass nodes 1 (env, resolved; lint, not), 2 (fix, resolved); pass-to-pass 2, 1, 3
    assert_eq!(
        rows(
            &conn,
            "select fail_to_pass, instances, resolved, all_resolved, median_pass_to_pass from sft_outcome_distribution_v1 order by 1"
        ),
        [["1", "2", "1", "2", "2"], ["2", "1", "1", "2", "2"]]
    );
    assert_eq!(
        rows(
            &conn,
            "select finish_reason, instances, successes, median_pass_to_pass from sft_samples_outcomes_v1 order by 1"
        ),
        [["max_steps", "1", "0", "7"], ["natural", "2", "2", "21"]]
    );
}
