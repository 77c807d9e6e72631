//! Several trajectories of one instance (issue 27), on
//! `data-samples/sft/shapes/attempts/nebius_attempts.json` (nebius/SWE-agent-trajectories
//! rows, written by hand; its README gives the figures below):
//!
//! | row | instance | target | messages | assistant | commands (shell) |
//! |---|---|---|---|---|---|
//! | 0 | sqlfluff__sqlfluff-2419 | false | 5 | 2 | `ls -F`, submit |
//! | 1 | pyvista__pyvista-4315 | true | 5 | 2 | open, submit |
//! | 2 | sqlfluff__sqlfluff-2419 | false | 7 | 3 | `git log` (history), `python -m pytest`, submit |
//! | 3 | sqlfluff__sqlfluff-2419 | true | 7 | 3 | open, `python -m pytest`, submit |
//!
//! So: 4 trajectories, 2 instances; sqlfluff has attempts 0 (row 0), 1 (row 2), 2 (row 3),
//! one resolved; 24 messages, 10 assistant messages, 10 tool calls, 4 shell commands, one of
//! them a git-history query. `nebius_more_attempts.json` holds a fourth attempt (unresolved,
//! 4 messages: system, user, one assistant `find_file`, its observation).

use sphragis::ingest::LoadOutcome;
use sphragis::sft::store::{load_outcome, load_trajectories};
use std::path::{Path, PathBuf};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/shapes/attempts").join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-attempts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every row of `sql` as text cells (null as "").
fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

/// A view line as `views build` writes it: view id `<pool>:<key>`, six tokens, the family
/// from the key's repository part.
fn view_line(pool: &str, key: &str, mask: &str) -> String {
    let family = key.split('-').next().unwrap();
    format!(
        r#"{{"view_id":"{pool}:{key}","pool":"{pool}","instance_id":"{key}","family":"{family}","input_ids":[1,2,3,4,5,6],"loss_mask":{mask}}}"#
    )
}

fn loaded() -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let outcome = load_trajectories(&conn, &sample("nebius_attempts.json"), None).unwrap();
    assert!(matches!(outcome, LoadOutcome::Loaded(ref f) if f.rows == 4), "{outcome:?}");
    conn
}

#[test]
fn several_attempts_of_one_instance_are_kept_not_refused() {
    let conn = loaded();
    assert_eq!(
        rows(
            &conn,
            "select instance_id, instance, attempt, record, n_messages, declared_resolved from sft_trajectories \
             order by instance, attempt"
        ),
        [
            ["pyvista__pyvista-4315", "pyvista__pyvista-4315", "0", "2", "5", "true"],
            ["sqlfluff__sqlfluff-2419", "sqlfluff__sqlfluff-2419", "0", "1", "5", "false"],
            ["sqlfluff__sqlfluff-2419#1", "sqlfluff__sqlfluff-2419", "1", "3", "7", "false"],
            ["sqlfluff__sqlfluff-2419#2", "sqlfluff__sqlfluff-2419", "2", "4", "7", "true"],
        ]
    );
    // each attempt's messages, calls and commands under its own key
    assert_eq!(
        rows(
            &conn,
            "select instance_id, count(*), count(*) filter (where role = 'assistant') from sft_messages \
             group by all order by 1"
        ),
        [
            ["pyvista__pyvista-4315", "5", "2"],
            ["sqlfluff__sqlfluff-2419", "5", "2"],
            ["sqlfluff__sqlfluff-2419#1", "7", "3"],
            ["sqlfluff__sqlfluff-2419#2", "7", "3"],
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, command, git_history, is_test from sft_commands order by 1, msg_index"),
        [
            ["sqlfluff__sqlfluff-2419", "ls -F", "false", "false"],
            ["sqlfluff__sqlfluff-2419#1", "git log --oneline -3 -- src/sqlfluff/rules/L060.py", "true", "false"],
            ["sqlfluff__sqlfluff-2419#1", "python -m pytest test/rules/std_L060_test.py", "false", "true"],
            ["sqlfluff__sqlfluff-2419#2", "python -m pytest test/rules/std_L060_test.py", "false", "true"],
        ]
    );
    assert_eq!(
        rows(
            &conn,
            "select instance_id, attempt, attempts, resolved, resolved_by, identical_to from sft_attempts_v1 \
             order by instance, attempt"
        ),
        [
            ["pyvista__pyvista-4315", "0", "1", "true", "trajectory", ""],
            ["sqlfluff__sqlfluff-2419", "0", "3", "false", "trajectory", ""],
            ["sqlfluff__sqlfluff-2419#1", "1", "3", "false", "trajectory", ""],
            ["sqlfluff__sqlfluff-2419#2", "2", "3", "true", "trajectory", ""],
        ]
    );
}

#[test]
fn instances_with_several_attempts_are_counted_once() {
    let conn = loaded();
    // sft_instances_v3: one row per instance, its attempts summed
    assert_eq!(
        rows(
            &conn,
            "select instance_id, family, source, trajectories, resolved_trajectories, unresolved_trajectories, resolved, \
             resolved_by, assistant_messages, tool_calls_bash, tool_calls_read, tool_calls_search, tool_calls_submit, \
             views from sft_instances_v3 order by 1"
        ),
        [
            [
                "pyvista__pyvista-4315",
                "pyvista__pyvista",
                "nebius",
                "1",
                "1",
                "0",
                "true",
                "trajectory",
                "2",
                "0",
                "1",
                "0",
                "1",
                "0"
            ],
            [
                "sqlfluff__sqlfluff-2419",
                "sqlfluff__sqlfluff",
                "nebius",
                "3",
                "1",
                "2",
                "true",
                "trajectory",
                "8",
                "4",
                "1",
                "0",
                "3",
                "0"
            ],
        ]
    );
    // the released per-instance table took each later attempt for an instance of its own
    assert_eq!(rows(&conn, "select count(*) from sft_instances_v2"), [["4"]]);
    // per source: trajectories and instances apart
    assert_eq!(
        rows(
            &conn,
            "select source, trajectories, instances, resolved, resolved_instances, messages, assistant_messages, \
             tool_calls, bash_commands, git_history_commands, trajectories_with_git_history, instances_with_git_history \
             from sft_trajectory_stats_v2"
        ),
        [["nebius", "4", "2", "2", "2", "24", "10", "10", "4", "1", "1", "1"]]
    );
    assert_eq!(
        rows(&conn, "select family, instances, trajectories, views, protected from sft_isolation_v3 order by 1"),
        [["pyvista__pyvista", "1", "1", "0", "false"], ["sqlfluff__sqlfluff", "1", "3", "0", "false"]]
    );
    // the per-instance detail over all attempts: the git-history query of attempt 1 and the
    // test runs of attempts 1 and 2 (one fail, one pass)
    assert_eq!(
        rows(
            &conn,
            "select instance_id, git_history_commands, test_runs_heuristic, pass_after_last_write_heuristic, \
             recovery_window_heuristic, final_report from sft_instance_detail_v4 order by 1"
        ),
        [
            ["pyvista__pyvista-4315", "0", "0", "false", "false", "absent"],
            ["sqlfluff__sqlfluff-2419", "1", "2", "true", "false", "absent"],
        ]
    );
}

#[test]
fn an_instance_report_is_not_given_to_one_of_several_attempts() {
    let conn = loaded();
    let dir = scratch("report");
    for (id, resolved) in [("sqlfluff__sqlfluff-2419", false), ("pyvista__pyvista-4315", true)] {
        let (ok, bad) = if resolved { ("[\"t1\"]", "[]") } else { ("[]", "[\"t1\"]") };
        let folder = dir.join(id);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("report.json"),
            format!(
                "{{\"{id}\": {{\"patch_is_None\": false, \"patch_exists\": true, \"patch_successfully_applied\": true, \
                 \"resolved\": {resolved}, \"tests_status\": {{\"FAIL_TO_PASS\": {{\"success\": {ok}, \"failure\": {bad}}}, \
                 \"PASS_TO_PASS\": {{\"success\": [], \"failure\": []}}}}}}}}"
            ),
        )
        .unwrap();
        load_outcome(&conn, &folder.join("report.json")).unwrap();
    }
    // one attempt: the report is the trajectory's; several: each attempt keeps its own flag
    assert_eq!(
        rows(&conn, "select instance_id, resolved, resolved_by from sft_attempts_v1 order by instance, attempt"),
        [
            ["pyvista__pyvista-4315", "true", "evaluator report"],
            ["sqlfluff__sqlfluff-2419", "false", "trajectory"],
            ["sqlfluff__sqlfluff-2419#1", "false", "trajectory"],
            ["sqlfluff__sqlfluff-2419#2", "true", "trajectory"],
        ]
    );
    // the instance's verdict is its report's
    assert_eq!(
        rows(
            &conn,
            "select instance_id, resolved, resolved_by, outcome, resolved_trajectories from sft_instances_v3 order by 1"
        ),
        [
            ["pyvista__pyvista-4315", "true", "evaluator report", "resolved", "1"],
            ["sqlfluff__sqlfluff-2419", "false", "evaluator report", "unresolved", "1"],
        ]
    );
    assert_eq!(
        rows(&conn, "select trajectories, resolved, instances, resolved_instances from sft_trajectory_stats_v2"),
        [["4", "2", "2", "1"]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn attempts_check_reports_failed_attempts() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let check = |conn: &duckdb::Connection| {
        rows(
            conn,
            "select check_name, severity, scope, tested, failing, status, reason, detail \
             from check_findings_at_v1(32768, 'right') where check_name in ('trajectory_attempts', 'identical_attempts') \
             order by check_name",
        )
    };
    let none = "no trajectories loaded (load trajectories FILE)";
    assert_eq!(
        check(&conn),
        [
            ["identical_attempts", "warn", "corpus", "", "", "not-run", none, ""],
            ["trajectory_attempts", "info", "corpus", "", "", "not-run", none, ""],
        ]
    );
    // one attempt each: nothing to tell apart, not run
    let dir = scratch("check");
    let file = dir.join("one_each.json");
    let text = std::fs::read_to_string(sample("nebius_attempts.json")).unwrap();
    let all: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    std::fs::write(&file, serde_json::to_string(&all[..2]).unwrap()).unwrap();
    load_trajectories(&conn, &file, None).unwrap();
    let one = "no instance has several trajectories (one attempt each)";
    assert_eq!(
        check(&conn),
        [
            ["identical_attempts", "warn", "corpus", "", "", "not-run", one, ""],
            ["trajectory_attempts", "info", "corpus", "", "", "not-run", one, ""],
        ]
    );
    let conn = loaded();
    assert_eq!(
        check(&conn),
        [
            ["identical_attempts", "warn", "corpus", "3", "0", "pass", "", ""],
            [
                "trajectory_attempts",
                "info",
                "corpus",
                "3",
                "2",
                "info",
                "",
                "1 instances with several attempts, 3 trajectories: 1 resolved, 2 unresolved, 0 without a verdict"
            ],
        ]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn identical_reload_is_still_skipped_and_a_copy_through_another_file_is_refused() {
    let conn = loaded();
    // the same file again: skipped by the ingest log, nothing written
    let again = load_trajectories(&conn, &sample("nebius_attempts.json"), None).unwrap();
    assert!(matches!(again, LoadOutcome::AlreadyLoaded { .. }), "{again:?}");
    // the same bytes at another path: skipped too
    let dir = scratch("reload");
    let copy = dir.join("copy.json");
    std::fs::copy(sample("nebius_attempts.json"), &copy).unwrap();
    let again = load_trajectories(&conn, &copy, None).unwrap();
    assert!(matches!(again, LoadOutcome::AlreadyLoaded { .. }), "{again:?}");
    assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["4"]]);
    // another file holding one of the loaded trajectories (row 3) besides a new one: the
    // copy would count twice, so the file is refused whole, naming where it was loaded from
    let text = std::fs::read_to_string(sample("nebius_attempts.json")).unwrap();
    let all: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let more: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(sample("nebius_more_attempts.json")).unwrap()).unwrap();
    let subset = dir.join("subset.json");
    std::fs::write(&subset, serde_json::to_string(&[more[0].clone(), all[3].clone()]).unwrap()).unwrap();
    let err = format!("{:#}", load_trajectories(&conn, &subset, None).unwrap_err());
    let earlier = std::fs::canonicalize(sample("nebius_attempts.json")).unwrap();
    assert!(
        err.contains(&format!(
            "subset.json: field `[1].instance_id`: this trajectory of sqlfluff__sqlfluff-2419 is already loaded from {} \
             (row 4, trajectory sqlfluff__sqlfluff-2419#2): the same messages, so it would count twice",
            earlier.display()
        )),
        "{err}"
    );
    assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["4"]]);
    assert_eq!(rows(&conn, "select count(*) from ingest_log"), [["1"]]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn another_file_of_an_instance_adds_attempts_after_the_loaded_ones() {
    let conn = loaded();
    load_trajectories(&conn, &sample("nebius_more_attempts.json"), None).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select instance_id, attempt, attempts, messages, resolved from sft_attempts_v1 \
             where instance = 'sqlfluff__sqlfluff-2419' order by attempt"
        ),
        [
            ["sqlfluff__sqlfluff-2419", "0", "4", "5", "false"],
            ["sqlfluff__sqlfluff-2419#1", "1", "4", "7", "false"],
            ["sqlfluff__sqlfluff-2419#2", "2", "4", "7", "true"],
            ["sqlfluff__sqlfluff-2419#3", "3", "4", "4", "false"],
        ]
    );
    assert_eq!(
        rows(
            &conn,
            "select trajectories, resolved_trajectories, unresolved_trajectories, tool_calls_search, assistant_messages \
             from sft_instances_v3 where instance_id = 'sqlfluff__sqlfluff-2419'"
        ),
        [["4", "1", "3", "1", "9"]]
    );
    assert_eq!(
        rows(&conn, "select tested, failing from check_sft_attempts_v1 where check_name = 'trajectory_attempts'"),
        [["4", "3"]]
    );
}

#[test]
fn identical_attempts_in_one_file_are_kept_and_reported() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let dir = scratch("identical");
    let text = std::fs::read_to_string(sample("nebius_attempts.json")).unwrap();
    let all: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    // the pyvista row twice, as a publisher may ship it, and one sqlfluff attempt
    let file = dir.join("twice.json");
    std::fs::write(&file, serde_json::to_string(&[all[1].clone(), all[0].clone(), all[1].clone()]).unwrap()).unwrap();
    load_trajectories(&conn, &file, None).unwrap();
    assert_eq!(
        rows(&conn, "select instance_id, attempt, identical_to from sft_attempts_v1 order by instance, attempt"),
        [
            ["pyvista__pyvista-4315", "0", ""],
            ["pyvista__pyvista-4315#1", "1", "pyvista__pyvista-4315"],
            ["sqlfluff__sqlfluff-2419", "0", ""],
        ]
    );
    assert_eq!(
        rows(&conn, "select check_name, tested, failing, detail from check_sft_attempts_v1 order by 1"),
        [
            ["identical_attempts", "2", "1", "the same messages as an earlier attempt of the instance: counted twice"],
            [
                "trajectory_attempts",
                "2",
                "0",
                "1 instances with several attempts, 2 trajectories: 2 resolved, 0 unresolved, 0 without a verdict"
            ],
        ]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_key_another_trajectory_holds_is_refused_naming_both() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let dir = scratch("key");
    let text = std::fs::read_to_string(sample("nebius_attempts.json")).unwrap();
    let mut all: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    // an instance id that reads as attempt 1 of another instance, then that instance twice
    all[1]["instance_id"] = "sqlfluff__sqlfluff-2419#1".into();
    let file = dir.join("clash.json");
    std::fs::write(&file, serde_json::to_string(&all).unwrap()).unwrap();
    let err = format!("{:#}", load_trajectories(&conn, &file, None).unwrap_err());
    assert!(
        err.contains(
            "clash.json: field `[2].instance_id`: attempt 1 of sqlfluff__sqlfluff-2419 would be stored as \
             sqlfluff__sqlfluff-2419#1, which row 1 of this file already takes"
        ),
        "{err}"
    );
    assert_eq!(rows(&conn, "select count(*) from sft_trajectories"), [["0"]]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn views_of_attempts_count_under_their_instance() {
    // views as `views build` writes them: instance_id is the attempt's key
    let conn = loaded();
    let dir = scratch("views");
    let lines = [
        view_line("A", "sqlfluff__sqlfluff-2419", "[0,0,1,1,0,0]"),
        view_line("A", "sqlfluff__sqlfluff-2419#1", "[0,0,1,1,1,0]"),
        view_line("A", "sqlfluff__sqlfluff-2419#2", "[0,0,0,1,1,1]"),
        view_line("A", "pyvista__pyvista-4315", "[0,1,0,0,0,0]"),
    ];
    std::fs::write(dir.join("views.jsonl"), lines.join("\n") + "\n").unwrap();
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    std::fs::write(dir.join("pools.json"), r#"{"pools": {"A": {"role": "repair", "label_subset": true}}}"#).unwrap();
    sphragis::sft::pools::load(&conn, &dir.join("pools.json")).unwrap();
    // supervised 2 + 3 + 3 over the three attempts: distinct trajectories, their tokens count
    assert_eq!(
        rows(&conn, "select instance_id, views, tokens, supervised_tokens from sft_instances_v3 order by 1"),
        [["pyvista__pyvista-4315", "1", "6", "1"], ["sqlfluff__sqlfluff-2419", "3", "6", "8"]]
    );
    assert_eq!(
        rows(&conn, "select family, instances, trajectories, views, training_views from sft_isolation_v3 order by 1"),
        [["pyvista__pyvista", "1", "1", "1", "1"], ["sqlfluff__sqlfluff", "1", "3", "3", "3"]]
    );
    // dedup: each attempt keeps its positions (2 + 3 + 3 + 1 = 9, none shared within a
    // trajectory), instances counted once, trajectories apart
    let dedup = [
        ["exact", "4", "2", "9", "9", "24", "4"],
        ["none", "4", "2", "9", "9", "24", "4"],
        ["union", "4", "2", "9", "9", "24", "4"],
    ];
    assert_eq!(
        rows(
            &conn,
            "select mode, views, instances, exposure, unique_positions, context_tokens, trajectories from sft_dedup_v2 \
             order by mode"
        ),
        dedup
    );
    assert_eq!(rows(&conn, "select distinct instances from sft_dedup_v1"), [["4"]]);
    assert_eq!(
        rows(&conn, "select instances, report_only_instances, p50, max from sft_context_lengths_v2"),
        [["2", "0", "6", "6"]]
    );
    assert_eq!(rows(&conn, "select instances from sft_context_lengths_v1"), [["4"]]);
    // membership: the pool's four trajectories of two instances, all of the training views
    assert_eq!(
        rows(&conn, "select pool, views, instances, trajectories, share_before, share_after from sft_membership_v2"),
        [["A", "4", "2", "4", "1", "1"]]
    );
    // budget on the train split, which names the instance: its three attempts' views count
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"splits": {"train": ["sqlfluff__sqlfluff-2419"], "dev": ["pyvista__pyvista-4315"]}}"#,
    )
    .unwrap();
    sphragis::sft::pools::load_manifest(&conn, &dir.join("manifest.json")).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select train_instances, views, exposure, context_tokens, updates_per_epoch from sft_budget_v2 \
             where grad_accum = 8 and steps = 100"
        ),
        [["1", "3", "8", "18", "1"]]
    );
    // the released budget kept attempt 0 only
    assert_eq!(
        rows(&conn, "select views, exposure from sft_budget_v1 where grad_accum = 8 and steps = 100"),
        [["1", "2"]]
    );
    // the released isolation view counted each attempt as an instance
    assert_eq!(rows(&conn, "select instances from sft_isolation_v2 where family = 'sqlfluff__sqlfluff'"), [["3"]]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn dedup_priority_and_recovery_exposure_count_instances_once() {
    // attempts 0 and 1 of sqlfluff in repair pools A and C, attempt 2 and pyvista in the
    // recovery pool B; positions belong to one trajectory, instances are counted once
    let conn = loaded();
    let dir = scratch("priority");
    let lines = [
        view_line("A", "sqlfluff__sqlfluff-2419", "[0,0,1,1,0,0]"),
        view_line("A", "sqlfluff__sqlfluff-2419#1", "[0,0,1,1,1,0]"),
        view_line("C", "sqlfluff__sqlfluff-2419", "[0,0,0,0,0,1]"),
        view_line("C", "sqlfluff__sqlfluff-2419#1", "[0,0,0,0,1,1]"),
        view_line("B", "sqlfluff__sqlfluff-2419#2", "[0,0,0,1,1,1]"),
        view_line("B", "pyvista__pyvista-4315", "[0,1,0,0,0,0]"),
    ];
    std::fs::write(dir.join("views.jsonl"), lines.join("\n") + "\n").unwrap();
    sphragis::sft::views::load(&conn, &dir.join("views.jsonl"), &Default::default(), &mut |_| {}).unwrap();
    std::fs::write(
        dir.join("pools.json"),
        r#"{"pools": {"A": {"role": "repair"}, "C": {"role": "repair"}, "B": {"role": "recovery"}}}"#,
    )
    .unwrap();
    sphragis::sft::pools::load(&conn, &dir.join("pools.json")).unwrap();
    // union per repair trajectory: attempt 0 {2,3,5} = 3, attempt 1 {2,3,4,5} = 4: 7.
    // A keeps 2 + 3 (both attempts lose a position), C keeps 1 + 2.
    assert_eq!(
        rows(
            &conn,
            "select pool, instances_with_view, trajectories_with_view, kept_positions, union_positions, \
             dropped_positions, instances_dropping, trajectories_dropping from sft_dedup_priority_v2 order by pool"
        ),
        [["A", "1", "2", "5", "7", "2", "1", "2"], ["C", "1", "2", "3", "7", "4", "1", "2"]]
    );
    // the released view counted the two attempts as two instances
    assert_eq!(
        rows(&conn, "select pool, instances_with_view, instances_dropping from sft_dedup_priority_v1 order by pool"),
        [["A", "2", "2"], ["C", "2", "2"]]
    );
    // recovery region: attempt 2 {3,4,5} and pyvista {1} = 4 positions, no repair view of the
    // same trajectories. none: 2+3+1+2 repair + 3+1 recovery = 12 over 6 views; union: 3 + 4
    // + 4 = 11 over 2 union views + 2 recovery views. New: pyvista only (sqlfluff has repair
    // views, of other attempts); new trajectories: attempt 2 and pyvista.
    assert_eq!(
        rows(
            &conn,
            "select mode, region_positions, region_exposure, exposure, recovery_views, recovery_file_share, \
             new_instances, new_trajectories, new_positions from sft_recovery_exposure_v2 order by mode"
        ),
        [
            ["none", "4", "4", "12", "2", "0.3333333333333333", "1", "2", "4"],
            ["union", "4", "4", "11", "2", "0.5", "1", "2", "4"]
        ]
    );
    assert_eq!(rows(&conn, "select distinct new_instances from sft_recovery_exposure_v1"), [["2"]]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn database_made_before_attempts_opens_and_migrates() {
    let dir = scratch("migrate");
    let path = dir.join("old.duckdb");
    {
        // the schema as migrations 0001..0020 left it, with one trajectory loaded
        let conn = duckdb::Connection::open(&path).unwrap();
        conn.execute_batch(
            "create table sph_migrations (version integer primary key, description varchar not null, \
             sha256 varchar not null, applied_at timestamp not null default current_timestamp, \
             execution_ms bigint not null)",
        )
        .unwrap();
        for m in sphragis::db::migrations::MIGRATIONS.iter().filter(|m| m.version <= 20) {
            conn.execute_batch(m.sql).unwrap();
            conn.execute(
                "insert into sph_migrations (version, description, sha256, execution_ms) values (?, ?, ?, 0)",
                duckdb::params![m.version, m.description, sphragis::db::migrations::checksum(m.sql)],
            )
            .unwrap();
        }
        conn.execute_batch(
            "insert into ingest_log (file_id, kind, path, bytes, sha256, rows, loader_version) \
                 values (nextval('ingest_file_id'), 'trajectories', '/data/old.json', 10, 'ab', 1, 'trajectories/3');
             insert into sft_trajectories values ('sqlfluff__sqlfluff-2419', 'nebius', 'sqlfluff__sqlfluff', null, false, 2, 1, 1);
             insert into sft_messages (instance_id, msg_index, role, text) values
                 ('sqlfluff__sqlfluff-2419', 0, 'user', 'fix L060'),
                 ('sqlfluff__sqlfluff-2419', 1, 'assistant', 'done');",
        )
        .unwrap();
    }
    let conn = sphragis::db::open(&path).unwrap();
    assert_eq!(
        rows(&conn, "select instance_id, instance, attempt from sft_trajectories"),
        [["sqlfluff__sqlfluff-2419", "sqlfluff__sqlfluff-2419", "0"]]
    );
    // the sample's three sqlfluff rows follow the migrated attempt 0
    load_trajectories(&conn, &sample("nebius_attempts.json"), None).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select instance_id, attempt, record from sft_trajectories where instance = 'sqlfluff__sqlfluff-2419' \
             order by attempt"
        ),
        [
            ["sqlfluff__sqlfluff-2419", "0", "1"],
            ["sqlfluff__sqlfluff-2419#1", "1", "1"],
            ["sqlfluff__sqlfluff-2419#2", "2", "3"],
            ["sqlfluff__sqlfluff-2419#3", "3", "4"],
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, trajectories, resolved_trajectories from sft_instances_v3 order by 1"),
        [["pyvista__pyvista-4315", "1", "1"], ["sqlfluff__sqlfluff-2419", "4", "1"]]
    );
    drop(conn);
    std::fs::remove_dir_all(dir).unwrap();
}
