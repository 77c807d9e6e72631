//! Evaluation runs side by side (issue 11) on the hand-made runs in `data-samples/runs/`,
//! every figure worked out by hand from the files (data-samples/runs/README.md).
//!
//! Five instances a..e (demo__a-1 .. demo__e-5); R = resolved, U = unresolved:
//!   base        trajectories a..e; per-instance sb-cli reports a R, b U, c U, d U; e has none
//!               → n 4, k 1, no outcome 1.
//!   ft1         trajectories a..e; sb-cli run report resolved a b c, unresolved d, error e;
//!               keyed reports a R (agrees), c U (disagrees: the per-instance report wins)
//!               → a R, b R, c U, d U, e error: n 5, k 2; 2 instances checked twice, 1 agrees;
//!               two batch files (d, e RetryError, then LimitsExceeded): continued, 2 re-runs.
//!   ft2         trajectories a..e; harness summary resolved a b d → c, e implied U: n 5, k 3.
//!   ft2-repeat  same model and harness as ft2; keyed reports a R, b U, c U, d R, e U: n 5, k 2.
//!   ft2-resumed --continues ft2; summary resolved a b c → n 3, k 3; never a repeat.
//! Trajectories (runaway N = 3): fix = cat, sed -i, pytest pass, submit (1 turn before the
//! edit); fix-fail = git log, sed -i, pytest fail, submit; wander = ls, cat, grep and
//! LimitsExceeded (no edit, 3 turns: runaway); loop = one 3,480-char repetitive reply with
//! finish_reason length, no exit status (cut off); late = 3 reads then a heredoc write,
//! FormatError (3 turns before the edit: runaway).
//!   base: a fix, b wander, c fix-fail, d loop, e fix; ft1: a fix, b fix, c fix-fail, d wander,
//!   e wander; ft2: a fix, b fix with git log, c wander, d fix, e late.

mod common;

use sphragis::eval::load::{RunSpec, expand};
use sphragis::ingest::LoadOutcome;
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/runs")
}

/// Every row of `sql` as text cells.
fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<String>> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap();
    table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect()).collect()
}

fn one(conn: &duckdb::Connection, sql: &str) -> Vec<String> {
    let mut all = rows(conn, sql);
    assert_eq!(all.len(), 1, "{sql}");
    all.remove(0)
}

fn float(conn: &duckdb::Connection, sql: &str) -> f64 {
    conn.query_row(sql, [], |r| r.get::<_, f64>(0)).unwrap()
}

fn spec(name: &str, model: &str, continues: Option<&str>) -> RunSpec {
    RunSpec {
        name: name.into(),
        model: model.into(),
        harness: Some("mini-swe-agent 1.15.0".into()),
        continues: continues.map(str::to_string),
        runaway_turns: 3,
    }
}

/// Loads every file under `paths` into the run, whole or not at all; returns the outcomes.
fn load_run(conn: &duckdb::Connection, spec: &RunSpec, paths: &[PathBuf]) -> anyhow::Result<Vec<LoadOutcome>> {
    Ok(sphragis::eval::load::load_paths(conn, spec, paths)?.0)
}

fn sample_db() -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let s = samples();
    load_run(&conn, &spec("base", "base-7b", None), &[s.join("base")]).unwrap();
    load_run(&conn, &spec("ft1", "ft-a", None), &[s.join("ft1")]).unwrap();
    load_run(&conn, &spec("ft2", "ft-b", None), &[s.join("ft2")]).unwrap();
    load_run(&conn, &spec("ft2-repeat", "ft-b", None), &[s.join("ft2-repeat")]).unwrap();
    load_run(&conn, &spec("ft2-resumed", "ft-b", Some("ft2")), &[s.join("ft2-resumed")]).unwrap();
    conn
}

/// Wilson 95% bounds, written out here independently of the view's SQL.
fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z = 1.959963984540054_f64;
    let p = k / n;
    let centre = p + z * z / (2.0 * n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let d = 1.0 + z * z / n;
    (((centre - half) / d).max(0.0), ((centre + half) / d).min(1.0))
}

#[test]
fn sample_runs_resolved_outcomes_and_finishes_by_hand() {
    let conn = sample_db();
    let got = rows(
        &conn,
        "select run, model, batches, continued, instances, trajectories, n, resolved, explicit_outcomes, implied_outcomes, \
         evaluator_errors, no_outcome, outcomes_checked, outcomes_agree, natural_finishes, limit_finishes, error_finishes, \
         cut_off, coalesce(median_turns_before_first_edit::varchar, '-'), rerun_after_retry_error, \
         coalesce(rerun_instances, '-') from eval_runs_v1 order by run",
    );
    let want = [
        "base base-7b 0 false 5 5 4 1 4 0 0 1 0 0 3 1 0 1 1.0 0 -",
        "ft1 ft-a 2 true 5 5 5 2 5 0 1 0 2 1 3 2 0 0 1.0 2 demo__d-4 demo__e-5",
        "ft2 ft-b 0 false 5 5 5 3 3 2 0 0 0 0 3 1 1 0 1.0 0 -",
        "ft2-repeat ft-b 0 false 5 0 5 2 5 0 0 0 0 0 0 0 0 0 - 0 -",
        "ft2-resumed ft-b 0 true 3 0 3 3 3 0 0 0 0 0 0 0 0 0 - 0 -",
    ];
    assert_eq!(got.iter().map(|r| r.join(" ")).collect::<Vec<_>>(), want);
    for (run, k, n) in [("base", 1.0, 4.0), ("ft1", 2.0, 5.0), ("ft2", 3.0, 5.0), ("ft2-resumed", 3.0, 3.0)] {
        let (lo, hi) = wilson(k, n);
        let got_lo = float(&conn, &format!("select wilson_low from eval_runs_v1 where run = '{run}'"));
        let got_hi = float(&conn, &format!("select wilson_high from eval_runs_v1 where run = '{run}'"));
        assert!((got_lo - lo).abs() < 1e-12 && (got_hi - hi).abs() < 1e-12, "{run}: {got_lo} {got_hi} vs {lo} {hi}");
    }
    // 1 of 4: the bounds by hand, z = 1.96: (0.25 + 0.4802 -/+ 1.96*sqrt(0.046875 + 0.0600)) / 1.9604
    let (lo, hi) = wilson(1.0, 4.0);
    assert!((lo - 0.04559).abs() < 1e-4 && (hi - 0.69936).abs() < 1e-4, "{lo} {hi}");
    // the date range known from the batch file names (unix times 1700000000.5, 1700003600.25)
    assert_eq!(
        one(&conn, "select first_batch_at::varchar, last_batch_at::varchar from eval_runs_v1 where run = 'ft1'"),
        ["2023-11-14 22:13:20.5", "2023-11-14 23:13:20.25"]
    );
    // per instance: ft1's c is stated twice and disagrees; the per-instance report counts
    assert_eq!(
        one(
            &conn,
            "select outcome, outcome_basis, outcome_sources, outcome_shapes, sources_agree from eval_instances_v1 \
                    where run = 'ft1' and instance_id = 'demo__c-3'"
        ),
        ["unresolved", "explicit", "2", "sb-cli-run,swebench-report", "false"]
    );
    assert_eq!(
        one(
            &conn,
            "select outcome, outcome_basis, resolved from eval_instances_v1 where run = 'ft2' and instance_id = 'demo__e-5'"
        ),
        ["unresolved", "implied", "false"]
    );
    // a trajectory without an outcome is no outcome, never unresolved
    assert_eq!(
        one(
            &conn,
            "select has_trajectory, coalesce(outcome, '-'), coalesce(resolved::varchar, '-'), finish from eval_instances_v1 \
                    where run = 'base' and instance_id = 'demo__e-5'"
        ),
        ["true", "-", "-", "natural"]
    );
    // batch history: the last status counts, the history is kept in batch order
    assert_eq!(
        one(
            &conn,
            "select batches, last_exit_status, exit_status_history, rerun_after_retry_error from eval_instances_v1 \
                    where run = 'ft1' and instance_id = 'demo__d-4'"
        ),
        ["2", "LimitsExceeded", "RetryError > LimitsExceeded", "true"]
    );
}

#[test]
fn sample_runs_symptoms_are_heuristics_k_of_n_by_hand() {
    let conn = sample_db();
    let got = rows(
        &conn,
        "select run, symptom, basis, k, n, coalesce(instances, '-') from eval_symptoms_v1 order by run, symptom",
    );
    let want = [
        "base git_history_query heuristic 1 5 demo__c-3",
        "base long_repetitive_output heuristic 1 5 demo__d-4",
        "base no_edit heuristic 2 5 demo__b-2 demo__d-4",
        "base pass_after_last_edit heuristic 2 5 demo__a-1 demo__e-5",
        "base runaway_before_edit heuristic 1 5 demo__b-2",
        "base stopped_at_step_or_cost_limit heuristic 1 5 demo__b-2",
        "base truncated_at_token_limit heuristic 1 5 demo__d-4",
        "ft1 git_history_query heuristic 1 5 demo__c-3",
        "ft1 long_repetitive_output heuristic 0 5 -",
        "ft1 no_edit heuristic 2 5 demo__d-4 demo__e-5",
        "ft1 pass_after_last_edit heuristic 2 5 demo__a-1 demo__b-2",
        "ft1 runaway_before_edit heuristic 2 5 demo__d-4 demo__e-5",
        "ft1 stopped_at_step_or_cost_limit heuristic 2 5 demo__d-4 demo__e-5",
        "ft1 truncated_at_token_limit heuristic 0 5 -",
        "ft2 git_history_query heuristic 1 5 demo__b-2",
        "ft2 long_repetitive_output heuristic 0 5 -",
        "ft2 no_edit heuristic 1 5 demo__c-3",
        "ft2 pass_after_last_edit heuristic 3 5 demo__a-1 demo__b-2 demo__d-4",
        "ft2 runaway_before_edit heuristic 2 5 demo__c-3 demo__e-5",
        "ft2 stopped_at_step_or_cost_limit heuristic 1 5 demo__c-3",
        "ft2 truncated_at_token_limit heuristic 0 5 -",
    ];
    assert_eq!(got.iter().map(|r| r.join(" ")).collect::<Vec<_>>(), want);
    assert_eq!(
        one(&conn, "select rule from eval_symptoms_v1 where run = 'ft2' and symptom = 'runaway_before_edit'"),
        [">= 3 assistant turns before any edit"]
    );
    let (lo, hi) = wilson(0.0, 5.0);
    assert_eq!(lo, 0.0);
    let got = float(&conn, "select wilson_high from eval_symptoms_v1 where run = 'ft1' and symptom = 'no_edit'");
    assert!((got - wilson(2.0, 5.0).1).abs() < 1e-12);
    let got = float(
        &conn,
        "select wilson_low from eval_symptoms_v1 where run = 'ft1' and symptom = 'truncated_at_token_limit'",
    );
    assert!(got == 0.0 && got.is_sign_positive(), "clamped at 0, never below: {got}");
    assert!(
        (float(
            &conn,
            "select wilson_high from eval_symptoms_v1 where run = 'ft1' and symptom = 'truncated_at_token_limit'"
        ) - hi)
            .abs()
            < 1e-12
    );
    // ft2's late edit: 3 turns before the first edit
    assert_eq!(
        one(
            &conn,
            "select finish, exit_status, turns_before_first_edit, runaway from eval_trajectories where run = 'ft2' and instance_id = 'demo__e-5'"
        ),
        ["error", "FormatError", "3", "true"]
    );
}

#[test]
fn sample_runs_pairs_with_exact_mcnemar_by_hand() {
    let conn = sample_db();
    let got = rows(
        &conn,
        "select run_a, run_b, shared, both_resolved, only_a, only_b, neither, discordant from eval_pairs_v1 order by run_a, run_b",
    );
    let want = [
        "base ft1 4 1 0 1 2 1",
        "base ft2 4 1 0 2 1 2",
        "base ft2-repeat 4 1 0 1 2 1",
        "base ft2-resumed 3 1 0 2 0 2",
        "ft1 ft2 5 2 0 1 2 1",
        "ft1 ft2-repeat 5 1 1 1 2 2",
        "ft1 ft2-resumed 3 2 0 1 0 1",
        "ft2 ft2-repeat 5 2 1 0 2 1",
        "ft2 ft2-resumed 3 2 0 1 0 1",
        "ft2-repeat ft2-resumed 3 1 0 2 0 2",
    ];
    assert_eq!(got.iter().map(|r| r.join(" ")).collect::<Vec<_>>(), want);
    // base vs ft2: b = 0, c = 2: p = 2 * C(2,0) / 2^2 = 0.5; ft1 vs ft2-repeat: b = c = 1:
    // 2 * (C(2,0) + C(2,1)) / 4 = 1.5 -> 1; base vs ft1: d = 1: 2 * 1/2 = 1
    for (a, b, p) in [("base", "ft2", 0.5), ("ft1", "ft2-repeat", 1.0), ("base", "ft1", 1.0)] {
        let got = float(&conn, &format!("select mcnemar_p from eval_pairs_v1 where run_a = '{a}' and run_b = '{b}'"));
        assert!((got - p).abs() < 1e-12, "{a} {b}: {got}");
    }
    assert_eq!(
        rows(&conn, "select instance_id, cell from eval_pair_instances_v1 where run_a = 'base' and run_b = 'ft2' order by instance_id")
            .iter()
            .map(|r| r.join(" "))
            .collect::<Vec<_>>(),
        ["demo__a-1 both", "demo__b-2 only_b", "demo__c-3 neither", "demo__d-4 only_b"]
    );
}

#[test]
fn sample_runs_repeats_and_pass_at_k_by_hand() {
    let conn = sample_db();
    // ft2 and ft2-repeat only: ft2-resumed continues ft2, ft1 has two batches
    assert_eq!(
        one(
            &conn,
            "select model, runs, n_runs, instances, flips, always_resolved, never_resolved from eval_repeats_v1"
        ),
        ["ft-b", "ft2 ft2-repeat", "2", "5", "1", "2", "2"]
    );
    // rates 3/5 and 2/5: mean 0.5, sample sd sqrt((0.1^2 + 0.1^2) / 1) = 0.1414...
    let mean = float(&conn, "select mean_resolve_rate from eval_repeats_v1");
    let sd = float(&conn, "select sd_resolve_rate from eval_repeats_v1");
    assert!((mean - 0.5).abs() < 1e-12 && (sd - 0.02_f64.sqrt()).abs() < 1e-12, "{mean} {sd}");
    assert_eq!(
        rows(&conn, "select instance_id, runs, resolved_by, flips from eval_repeat_instances_v1 order by instance_id")
            .iter()
            .map(|r| r.join(" "))
            .collect::<Vec<_>>(),
        [
            "demo__a-1 2 2 false",
            "demo__b-2 2 1 true",
            "demo__c-3 2 0 false",
            "demo__d-4 2 2 false",
            "demo__e-5 2 0 false"
        ]
    );
    // c = 2, 1, 0, 2, 0 of n = 2: pass@1 = mean(c/n) = (1 + .5 + 0 + 1 + 0) / 5 = 0.5;
    // pass@2 = mean(1 - C(n-c, 2) / C(2, 2)) = (1 + 1 + 0 + 1 + 0) / 5 = 0.6
    for (k, want) in [(1, 0.5), (2, 0.6)] {
        let got = float(&conn, &format!("select pass_at_k from eval_pass_at_k_v1 where k = {k}"));
        assert!((got - want).abs() < 1e-12, "pass@{k} = {got}");
    }
}

#[test]
fn portable_v2_run_views_give_the_rows_of_v1() {
    // eval_runs_v2 rounds the batch times with round_even before the cast (Spark truncates a
    // double cast to bigint, DuckDB rounds it); the other v2s read it instead of
    // eval_runs_v1, and eval_pass_at_k_v2 unnests its steps instead of reading range() in
    // FROM: the same rows, on every sample run (ft1 has two batch files).
    let conn = sample_db();
    for (v1, v2, count) in [
        ("eval_runs_v1", "eval_runs_v2", 5),
        ("eval_repeat_instances_v1", "eval_repeat_instances_v2", 5),
        ("eval_repeats_v1", "eval_repeats_v2", 1),
        ("eval_pass_at_k_v1", "eval_pass_at_k_v2", 2),
    ] {
        let mut old = rows(&conn, &format!("select * from {v1}"));
        let mut new = rows(&conn, &format!("select * from {v2}"));
        old.sort();
        new.sort();
        assert_eq!(old.len(), count, "{v1}: {old:?}");
        assert_eq!(old, new, "{v1} and {v2} differ");
    }
}

#[test]
fn double_cast_to_bigint_rounds_batch_times_half_to_even_in_v1_and_v2() {
    // The fault: v1 casts a double (seconds * 1e6) to bigint, which DuckDB rounds and Spark
    // truncates. 1763506501.7698025 s is 1763506501769802.5 us as a double (half to even:
    // ...802; round() would give ...803) and 1763506501.7698028 s is ...802.75 (rounded
    // ...803; truncated ...802). v2 rounds with round_even first: the same timestamps as v1.
    let dir = std::env::temp_dir().join(format!("sphragis-eval-half-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (time, id) in [("1763506501.7698025", "demo__a-1"), ("1763506501.7698028", "demo__b-2")] {
        let body = format!("instances_by_exit_status:\n  Submitted:\n  - {id}\n");
        std::fs::write(dir.join(format!("exit_statuses_{time}.yaml")), body).unwrap();
    }
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load_run(&conn, &spec("half", "m", None), std::slice::from_ref(&dir)).unwrap();
    for view in ["eval_runs_v1", "eval_runs_v2"] {
        assert_eq!(
            one(&conn, &format!("select first_batch_at::varchar, last_batch_at::varchar from {view}")),
            ["2025-11-18 22:55:01.769802", "2025-11-18 22:55:01.769803"],
            "{view}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn load_run_bad_file_names_file_line_and_field_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("sphragis-eval-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("exit_statuses_1.0.yaml");
    std::fs::write(&bad, "instances_by_exit_status:\n  Submitted:\n  - a__a-1\n  RetryError:\n  - a__a-1\n").unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = format!("{:#}", load_run(&conn, &spec("r", "m", None), std::slice::from_ref(&bad)).unwrap_err());
    assert!(err.contains("exit_statuses_1.0.yaml") && err.contains("instances_by_exit_status.RetryError"), "{err}");
    assert!(err.contains("a__a-1 is also listed under Submitted"), "{err}");
    for table in ["eval_run_specs", "eval_exit_statuses", "ingest_log"] {
        assert_eq!(one(&conn, &format!("select count(*) from {table}")), ["0"], "{table}");
    }
    // an sb-cli report whose count contradicts its list
    let report = dir.join("report-bad.json");
    std::fs::write(&report, r#"{"resolved_instances": 2, "resolved_ids": ["a__a-1"]}"#).unwrap();
    let err = format!("{:#}", load_run(&conn, &spec("r", "m", None), &[report]).unwrap_err());
    assert!(err.contains("report-bad.json") && err.contains("resolved_instances"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn load_run_refuses_a_file_of_another_run_a_second_trajectory_and_a_changed_spec() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let base = samples().join("base");
    let traj = base.join("trajs/demo__a-1.traj.json");
    load_run(&conn, &spec("one", "m", None), std::slice::from_ref(&traj)).unwrap();
    // the same file again into the same run: skipped, nothing written
    let again = load_run(&conn, &spec("one", "m", None), std::slice::from_ref(&traj)).unwrap();
    assert!(matches!(again[0], LoadOutcome::AlreadyLoaded { .. }));
    // the same file into another run
    let err = load_run(&conn, &spec("two", "m", None), &[traj]).unwrap_err().to_string();
    assert!(err.contains("already loaded into run one"), "{err}");
    // another trajectory of the same instance into the same run (ft2's e has other bytes than base's e)
    load_run(&conn, &spec("one", "m", None), &[base.join("trajs/demo__e-5.traj.json")]).unwrap();
    let err = format!(
        "{:#}",
        load_run(&conn, &spec("one", "m", None), &[samples().join("ft2/trajs/demo__e-5.traj.json")]).unwrap_err()
    );
    assert!(err.contains("run one already has a trajectory of demo__e-5"), "{err}");
    let err = load_run(&conn, &spec("one", "other-model", None), &[]).unwrap_err().to_string();
    assert!(err.contains("run one is loaded with model \"m\""), "{err}");
    let err = load_run(&conn, &spec("three", "m", Some("nope")), &[]).unwrap_err().to_string();
    assert!(err.contains("continues nope, which is not loaded"), "{err}");
    assert_eq!(one(&conn, "select count(*) from eval_trajectories"), ["2"]);
}

#[test]
fn cli_load_run_needs_a_model_and_report_runs_writes_every_view() {
    let dir = std::env::temp_dir().join(format!("sphragis-eval-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("r.duckdb");
    let bin = env!("CARGO_BIN_EXE_sphragis");
    let run = |args: &[&str]| std::process::Command::new(bin).arg("--db").arg(&db).args(args).output().unwrap();
    let out = run(&["load", "run", "base", samples().join("base").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("load run needs --model"));
    let out = run(&["load", "trajectories", "x.json", "--model", "m"]);
    assert_eq!(out.status.code(), Some(2));
    // hostile input D11: an empty model was stored as the run's model
    for empty in ["", "  "] {
        let out = run(&["load", "run", "base", samples().join("base").to_str().unwrap(), "--model", empty]);
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--model must not be empty"));
    }
    let out = run(&[
        "load",
        "run",
        "base",
        samples().join("base").to_str().unwrap(),
        "--model",
        "base-7b",
        "--runaway-turns",
        "3",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().filter(|l| l.starts_with("loaded run ")).count(), 9, "{stdout}");
    let out_dir = dir.join("out");
    let out = run(&["report", "runs", "--format", "csv", "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for view in [
        "eval_runs_v3",
        "eval_run_populations_v1",
        "eval_symptoms_v1",
        "eval_pairs_v2",
        "eval_repeats_v2",
        "eval_pass_at_k_v2",
    ] {
        assert!(out_dir.join(format!("{view}.csv")).exists(), "{view}");
    }
    let runs = std::fs::read_to_string(out_dir.join("eval_runs_v3.csv")).unwrap();
    assert!(runs.lines().nth(1).unwrap().starts_with("base,base-7b,,,0,,,false,5,5,4,1,0.25,"), "{runs}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The real run (../shared/data/sft/mini-swe-agent-gemini3pro): 371 of 500 from the sb-cli
/// run report; the 43 per-instance report.json agree with it; four batch files make the
/// run continued, and 15 instances ran again after a RetryError.
#[test]
#[ignore = "needs ../shared/data"]
fn real_gemini_run_371_of_500_and_the_43_reports_agree() {
    let root = common::shared().join("data/sft/mini-swe-agent-gemini3pro");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let s = RunSpec {
        name: "gemini3pro".into(),
        model: "gemini-3-pro-preview".into(),
        harness: Some("mini-swe-agent 1.15.0".into()),
        continues: None,
        runaway_turns: sphragis::eval::symptoms::DEFAULT_RUNAWAY_TURNS,
    };
    load_run(&conn, &s, std::slice::from_ref(&root)).unwrap();
    assert_eq!(
        one(
            &conn,
            "select instances, trajectories, n, resolved, outcomes_checked, outcomes_agree, batches, continued, \
                    natural_finishes, rerun_after_retry_error from eval_runs_v1"
        ),
        ["500", "43", "500", "371", "43", "43", "4", "true", "43", "15"]
    );
    assert_eq!(
        one(&conn, "select count(*) filter (where resolved) from eval_instances_v1 where has_trajectory"),
        ["24"]
    );
    let reruns = one(&conn, "select rerun_instances from eval_runs_v1")[0].clone();
    for id in ["django__django-14631", "pallets__flask-5014", "django__django-16485", "django__django-15957"] {
        assert!(reruns.contains(id), "{reruns}");
    }
    assert_eq!(
        one(&conn, "select k, instances from eval_symptoms_v1 where symptom = 'git_history_query'"),
        ["3", "django__django-13513 django__django-14122 sympy__sympy-13031"]
    );
}

/// The outcome order of eval_instances_v1 (per-instance report, then run-level list, then
/// the trajectory's own flag), on rows written directly: the view alone is under test.
#[test]
fn eval_instances_prefers_instance_reports_then_lists_then_trajectory_flags() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    conn.execute_batch(
        "insert into eval_run_specs (run, model, runaway_n) values ('r', 'm', 30);
         insert into eval_outcomes values
           ('r', 'x', 'unresolved', 'trajectory', 1), ('r', 'x', 'resolved', 'sb-cli-run', 2),
           ('r', 'y', 'resolved', 'trajectory', 1), ('r', 'y', 'error', 'sb-cli-run', 2), ('r', 'y', 'unresolved', 'swebench-report', 3),
           ('r', 'z', 'resolved', 'trajectory', 4);",
    )
    .unwrap();
    assert_eq!(
        rows(
            &conn,
            "select instance_id, outcome, outcome_sources, sources_agree from eval_instances_v1 order by instance_id"
        )
        .iter()
        .map(|r| r.join(" "))
        .collect::<Vec<_>>(),
        ["x resolved 2 false", "y unresolved 3 false", "z resolved 1 "]
    );
}

/// Trajectories of every other real format in one run: SWE-agent `.traj` (exit status
/// `submitted`), nebius rows (`exit_status`, `target` as the declared outcome), OpenHands
/// rows (no exit status: `finish` calls end 4 of 5; MONAI-3715_4 ends on an edit: cut off),
/// SWE-smith rows (no exit status; all 5 end on `<function=submit>`).
#[test]
#[ignore = "needs ../shared/data"]
fn real_other_formats_finish_and_declared_outcomes() {
    let sft = common::shared().join("data/sft");
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let paths = [
        sft.join("swe-agent/tests/test_data/trajectories"),
        sft.join("nebius-swe-agent-trajectories/sample_raw.json"),
        sft.join("swe-gym-openhands-trajectories/sample_raw.json"),
        sft.join("swe-smith-trajectories/sample_raw.json"),
    ];
    load_run(&conn, &spec("other", "mixed", None), &paths).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select source, finish, count(*), count(*) filter (where declared_resolved) from eval_trajectories \
                     group by all order by all"
        )
        .iter()
        .map(|r| r.join(" "))
        .collect::<Vec<_>>(),
        [
            "nebius natural 5 5",
            "openhands cut_off 1 1",
            "openhands natural 4 4",
            "swe-agent natural 1 0",
            "swe-smith natural 5 5"
        ]
    );
    assert_eq!(
        one(
            &conn,
            "select trajectories, n, resolved, explicit_outcomes, no_outcome, natural_finishes, cut_off from eval_runs_v1"
        ),
        ["16", "15", "15", "15", "1", "15", "1"]
    );
}

/// ft3 (data-samples/runs/ft3): a SWE-bench harness run report, schema version 2, with
/// every outcome class, as `make_run_report` writes it since SWE-bench PR #594 (infra and
/// ambiguous failures additive: still in unresolved_ids), a report.json with
/// `infra_failure`, trajectories a..e (base's), and two run-level files skipped by name.
///   a resolved; b unresolved; c infra failure (out_of_memory; its report.json agrees);
///   d unresolved, ambiguous (tests_timed_out); e empty patch; f evaluator error; g never run.
/// By hand: graded a b d e = 4, resolved 1 → 1/4; attempted = graded + c + f = 6 → 1/6;
/// excluded: error 1, infra 1, not run 1; the harness's own figure 1 of total 7.
fn ft3_db() -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load_run(&conn, &spec("ft3", "ft-c", None), &[samples().join("ft3")]).unwrap();
    conn
}

#[test]
fn harness_run_report_v2_every_outcome_class_by_hand() {
    let conn = ft3_db();
    assert_eq!(
        rows(
            &conn,
            "select instance_id, outcome, graded, attempted, coalesce(excluded, '-'), ambiguous_failure, \
                    coalesce(failure_reason, '-'), in_run_report, has_trajectory, outcome_sources \
             from eval_instances_v2 order by instance_id"
        )
        .iter()
        .map(|r| r.join(" "))
        .collect::<Vec<_>>(),
        [
            "demo__a-1 resolved true true - false - true true 1",
            "demo__b-2 unresolved true true - false - true true 1",
            "demo__c-3 infra_failure false true infra_failure false out_of_memory true true 2",
            "demo__d-4 unresolved true true - true tests_timed_out true true 1",
            "demo__e-5 empty_patch true true - false - true true 1",
            "demo__f-6 error false true error false - true false 1",
            "demo__g-7 not_run false false not_run false - true false 1",
        ]
    );
    assert_eq!(
        one(
            &conn,
            "select instances, trajectories, graded, resolved, resolve_rate, attempted, \
                    unresolved, empty_patch, evaluator_errors, infra_failures, not_run, no_outcome, ambiguous_failures, \
                    run_status, outcomes_checked, outcomes_agree, reported_by, reported_per_instance, reported_total, \
                    reported_submitted, reported_resolved from eval_runs_v3"
        ),
        [
            "7",
            "5",
            "4",
            "1",
            "0.25",
            "6",
            "2",
            "1",
            "1",
            "1",
            "1",
            "0",
            "1",
            "completed_with_gaps",
            "1",
            "1",
            "swebench-run-report",
            "true",
            "7",
            "6",
            "1"
        ]
    );
    assert!((float(&conn, "select reported_rate from eval_runs_v3") - 1.0 / 7.0).abs() < 1e-15);
    assert!((float(&conn, "select resolve_rate_attempted from eval_runs_v3") - 1.0 / 6.0).abs() < 1e-15);
    for (col, k, n) in [("", 1.0, 4.0), ("_attempted", 1.0, 6.0)] {
        let (lo, hi) = wilson(k, n);
        let got_lo = float(&conn, &format!("select wilson_low{col} from eval_runs_v3"));
        let got_hi = float(&conn, &format!("select wilson_high{col} from eval_runs_v3"));
        assert!((got_lo - lo).abs() < 1e-12 && (got_hi - hi).abs() < 1e-12, "{col}: {got_lo} {got_hi} vs {lo} {hi}");
    }
    // every population named; the trajectories (a..e) are not the run report's 7
    assert_eq!(
        rows(
            &conn,
            "select population, instances, graded, resolved, attempted, evaluator_errors, infra_failures, not_run, \
                    counts_only, same_as_named from eval_run_populations_v1"
        )
        .iter()
        .map(|r| r.join(" "))
        .collect::<Vec<_>>(),
        [
            "named 7 4 1 6 1 1 1 false true",
            "run_report 7 4 1 6 1 1 1 false true",
            "trajectories 5 4 1 5 0 1 0 false false"
        ]
    );
    // the run-level files that hold no outcome were skipped, by name, and listed
    let (_, skipped) = expand(&[samples().join("ft3")]).unwrap();
    let names: Vec<String> =
        skipped.iter().map(|s| format!("{} ({})", s.path.file_name().unwrap().to_string_lossy(), s.why)).collect();
    assert_eq!(
        names,
        [
            "metadata.yaml (the submission's metadata (SWE-bench experiments))",
            "results_summary.json (a summary derived from the per-instance reports)"
        ]
    );
}

#[test]
fn infra_failures_and_ungraded_instances_are_checks_of_the_run() {
    let conn = ft3_db();
    let all = sphragis::check::findings(&conn, sphragis::check::Truncation::default()).unwrap();
    let figure = |name: &str| {
        let f = all.iter().find(|f| f.check_name == name && f.scope == "run=ft3").unwrap_or_else(|| panic!("{name}"));
        let n = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
        format!("{} {}/{}", f.status.as_str(), n(f.failing), n(f.tested))
    };
    assert_eq!(figure("instances_without_outcome"), "pass 0/7");
    // c (infra), f (error) and g (never run) are in the report's total of 7
    assert_eq!(figure("evaluator_errors_counted"), "fail 3/7");
    assert_eq!(figure("infra_failures"), "warn 1/6");
    assert_eq!(figure("implied_unresolved"), "pass 0/4");
    assert_eq!(figure("outcome_sources_disagree"), "pass 0/1");
    // f and g have no trajectory: the run report and the trajectories differ
    assert_eq!(figure("populations_differ"), "info 1/1");
    let lone = all.iter().find(|f| f.check_name == "pair_attrition").unwrap();
    assert_eq!((lone.status.as_str(), lone.scope.as_str()), ("not-run", "corpus"));
}

/// sb-cli#27: a report with counts and no ids states run-level figures; the per-instance
/// figures of the run are not run, never guessed.
#[test]
fn count_only_report_is_run_level_figures_and_per_instance_checks_not_run() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let (files, skipped) = expand(&[samples().join("ft3-counts")]).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(skipped.len(), 1, "the .response.json beside the report");
    load_run(&conn, &spec("ft3-counts", "ft-c", None), &[samples().join("ft3-counts")]).unwrap();
    assert_eq!(
        one(
            &conn,
            "select instances, graded, run_status, reported_by, reported_per_instance, reported_total, reported_submitted, \
                    reported_resolved from eval_runs_v3"
        ),
        ["0", "0", "counts_only", "sb-cli-counts", "false", "7", "6", "1"]
    );
    // no graded instance: no rate and no interval (DuckDB's greatest/least skip a NULL, so an
    // unguarded bound would read 0..1)
    assert_eq!(
        one(
            &conn,
            "select coalesce(resolve_rate::varchar, '-'), coalesce(wilson_low::varchar, '-'), \
                    coalesce(wilson_high::varchar, '-'), coalesce(wilson_low_attempted::varchar, '-') from eval_runs_v3"
        ),
        ["-", "-", "-", "-"]
    );
    assert_eq!(
        one(
            &conn,
            "select population, instances, coalesce(graded::varchar, '-'), resolved, counts_only from eval_run_populations_v1"
        ),
        ["run_report", "7", "-", "1", "true"]
    );
    assert!((float(&conn, "select resolve_rate_population from eval_run_populations_v1") - 1.0 / 7.0).abs() < 1e-15);
    let all = sphragis::check::findings(&conn, sphragis::check::Truncation::default()).unwrap();
    for name in ["instances_without_outcome", "evaluator_errors_counted", "infra_failures", "implied_unresolved"] {
        let f = all.iter().find(|f| f.check_name == name).unwrap();
        assert_eq!(f.status.as_str(), "not-run", "{name}");
        assert!(f.reason.as_deref().unwrap().contains("counts only (sb-cli#27)"), "{name}: {:?}", f.reason);
    }
}

/// A run folder loads whole or not at all: a published run's per-instance reports come
/// before a file sphragis cannot read; nothing of the run may be written.
#[test]
fn half_loaded_run_is_refused_before_anything_is_written() {
    let dir = std::env::temp_dir().join(format!("sphragis-eval-half-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for id in ["demo__a-1", "demo__b-2"] {
        std::fs::create_dir_all(dir.join("logs").join(id)).unwrap();
        std::fs::copy(
            samples().join("base/logs").join(id).join("report.json"),
            dir.join("logs").join(id).join("report.json"),
        )
        .unwrap();
    }
    // sorted after logs/: a file that is no run file shape sphragis knows
    std::fs::write(dir.join("zz_notes.json"), r#"{"comment": "what the run did"}"#).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = format!("{:#}", load_run(&conn, &spec("half", "m", None), std::slice::from_ref(&dir)).unwrap_err());
    assert!(err.contains("zz_notes.json"), "{err}");
    for table in ["eval_run_specs", "eval_outcomes", "eval_listings", "ingest_log"] {
        assert_eq!(one(&conn, &format!("select count(*) from {table}")), ["0"], "{table}");
    }
    // two trajectories of one instance in two files of one load: refused, naming both
    std::fs::remove_file(dir.join("zz_notes.json")).unwrap();
    std::fs::create_dir_all(dir.join("trajs")).unwrap();
    std::fs::copy(samples().join("base/trajs/demo__e-5.traj.json"), dir.join("trajs/e-first.traj.json")).unwrap();
    std::fs::copy(samples().join("ft2/trajs/demo__e-5.traj.json"), dir.join("trajs/e-second.traj.json")).unwrap();
    let err = format!("{:#}", load_run(&conn, &spec("half", "m", None), std::slice::from_ref(&dir)).unwrap_err());
    assert!(
        err.contains("e-second.traj.json") && err.contains("has a trajectory in") && err.contains("e-first"),
        "{err}"
    );
    assert_eq!(one(&conn, "select count(*) from ingest_log"), ["0"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pairs on the instances both runs graded, with the attrition stated (ft1 against ft3):
///   ft1 graded a R, b R, c U, d U (e: evaluator error); ft3 graded a R, b U, d U, e U (empty
///   patch). Shared a, b, d: both a, only ft1 b, neither d; graded in ft1 only c, in ft3 only e;
///   graded in neither f, g. Discordant 1: McNemar p = min(1, 2 * C(1,0) / 2) = 1; one pair:
///   Holm p = p; tied. Attrition 2 of the 5 either graded: warn (share > 0.1).
#[test]
fn pairs_compare_graded_instances_only_and_state_the_attrition() {
    let conn = ft3_db();
    load_run(&conn, &spec("ft1", "ft-a", None), &[samples().join("ft1")]).unwrap();
    assert_eq!(
        one(
            &conn,
            "select run_a, run_b, shared, both_resolved, only_a, only_b, neither, graded_in_a_only, graded_in_b_only, \
                    graded_in_neither, discordant, mcnemar_p, pairs_compared, holm_p, verdict from eval_pairs_v2"
        ),
        ["ft1", "ft3", "3", "1", "1", "0", "1", "1", "1", "2", "1", "1", "1", "1", "tied"]
    );
    assert!((float(&conn, "select difference from eval_pairs_v2") - (2.0 / 3.0 - 1.0 / 3.0)).abs() < 1e-15);
    let text = one(&conn, "select verdict_text from eval_pairs_v2")[0].clone();
    assert!(text.contains("the ranking is not decisive evidence") && text.contains("1 graded in ft1 only"), "{text}");
    let all = sphragis::check::findings(&conn, sphragis::check::Truncation::default()).unwrap();
    let f = all.iter().find(|f| f.check_name == "pair_attrition").unwrap();
    assert_eq!(
        (f.scope.as_str(), f.status.as_str(), f.failing, f.tested),
        ("run_a=ft1 run_b=ft3", "warn", Some(2), Some(5))
    );
}

/// Holm's step-down adjustment across three pairs and the verdicts, on rows written
/// directly (10 instances; X resolves all, Y only i01, Z all but i10):
///   X,Y: only X 9 → p = 2 / 2^9; X,Z: only X 1 → p = 1; Y,Z: only Z 8 → p = 2 / 2^8.
///   Sorted: X,Y (3p = 6/512), Y,Z (max(6/512, 2 * 2/256) = 4/256), X,Z (1).
///   X better than Y, Z better than Y (Holm p < 0.05), X and Z tied.
#[test]
fn holm_adjusted_p_values_and_verdicts_by_hand() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let mut sql = String::from(
        "insert into eval_run_specs (run, model, runaway_n) values ('X', 'm', 30), ('Y', 'm', 30), ('Z', 'm', 30);",
    );
    for i in 1..=10 {
        let id = format!("i{i:02}");
        let y = if i == 1 { "resolved" } else { "unresolved" };
        let z = if i == 10 { "unresolved" } else { "resolved" };
        sql.push_str(&format!(
            "insert into eval_outcomes values ('X', '{id}', 'resolved', 'sb-cli-instance', 1), ('Y', '{id}', '{y}', 'sb-cli-instance', 2), ('Z', '{id}', '{z}', 'sb-cli-instance', 3);"
        ));
    }
    conn.execute_batch(&sql).unwrap();
    let got: Vec<(String, String, f64, f64, String)> = {
        let mut stmt = conn
            .prepare("select run_a, run_b, mcnemar_p, holm_p, verdict from eval_pairs_v2 order by run_a, run_b")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let want = [
        ("X", "Y", 2.0 / 512.0, 6.0 / 512.0, "a_better"),
        ("X", "Z", 1.0, 1.0, "tied"),
        ("Y", "Z", 2.0 / 256.0, 4.0 / 256.0, "b_better"),
    ];
    assert_eq!(got.len(), 3);
    for ((a, b, p, h, v), (wa, wb, wp, wh, wv)) in got.iter().zip(want) {
        assert_eq!((a.as_str(), b.as_str(), v.as_str()), (wa, wb, wv));
        assert!((p - wp).abs() < 1e-12 && (h - wh).abs() < 1e-12, "{a},{b}: p {p} holm {h} vs {wp} {wh}");
    }
    let text = one(&conn, "select verdict_text from eval_pairs_v2 where run_a = 'Y'")[0].clone();
    assert!(text.starts_with("Z better than Y: 9 vs 1 resolved of 10 shared"), "{text}");
}

/// The same instance graded twice with different verdicts (a re-grade file beside the
/// first report): a grader flake, kept apart and checked.
#[test]
fn grader_flake_two_reports_of_one_instance_disagree() {
    let dir = std::env::temp_dir().join(format!("sphragis-eval-flake-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (folder, resolved) in [("logs", true), ("regrade", false)] {
        std::fs::create_dir_all(dir.join(folder).join("demo__a-1")).unwrap();
        std::fs::write(
            dir.join(folder).join("demo__a-1/report.json"),
            format!(r#"{{"demo__a-1": {{"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": true, "resolved": {resolved}, "tests_status": {{"FAIL_TO_PASS": {{"success": [], "failure": []}}, "PASS_TO_PASS": {{"success": [], "failure": []}}}}}}}}"#),
        )
        .unwrap();
    }
    std::fs::create_dir_all(dir.join("logs/demo__b-2")).unwrap();
    std::fs::copy(samples().join("base/logs/demo__b-2/report.json"), dir.join("logs/demo__b-2/report.json")).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load_run(&conn, &spec("flaky", "m", None), std::slice::from_ref(&dir)).unwrap();
    assert_eq!(
        one(&conn, "select instance_id, reports, classes, resolved_in, not_resolved_in from eval_grader_flakes_v1"),
        ["demo__a-1", "2", "resolved > unresolved", "1", "1"]
    );
    let all = sphragis::check::findings(&conn, sphragis::check::Truncation::default()).unwrap();
    let f = all.iter().find(|f| f.check_name == "grader_flakes").unwrap();
    assert_eq!((f.status.as_str(), f.failing, f.tested), ("fail", Some(1), Some(1)));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// pass@k, pass^k, consistency and item analysis on rows written directly: three runs of one
/// model (X, Y, Z), ten instances; resolved by c runs: i01 3, i02 1, i03 3, i04 1, i05 3,
/// i06 1, i07 2, i08 1, i09 2, i10 0.
///   pass@1 = pass^1 = 17/30; pass^2 = (3 * 1 + 2 * C(2,2)/C(3,2)) / 10 = (3 + 2/3) / 10;
///   pass^3 = 3/10; pass@3 = 9/10 (only i10 never); consistent (c = 0 or 3): 4 of 10.
///   Items: i01 i03 i05 solved by all, i10 by none, the other six discriminate.
/// The paired bootstrap (X vs Y, 200 resamples, seed 3) is redrawn here with the generator
/// the macro documents (MurmurHash3's fmix32 over k * 2654435761 mod 2^32).
#[test]
fn pass_hat_k_consistency_items_and_bootstrap_by_hand() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let mut sql = String::from(
        "insert into eval_run_specs (run, model, runaway_n) values ('X', 'm', 30), ('Y', 'm', 30), ('Z', 'm', 30);",
    );
    let resolved = |run: &str, i: u32| match run {
        "X" => i % 2 == 1,
        "Y" => [1, 3, 5].contains(&i),
        _ => i != 10,
    };
    for i in 1..=10 {
        for (file, run) in [(1, "X"), (2, "Y"), (3, "Z")] {
            let st = if resolved(run, i) { "resolved" } else { "unresolved" };
            sql.push_str(&format!(
                "insert into eval_outcomes values ('{run}', 'i{i:02}', '{st}', 'sb-cli-instance', {file});"
            ));
        }
    }
    conn.execute_batch(&sql).unwrap();
    let got: Vec<(i64, f64, f64, i64, f64)> = {
        let mut stmt = conn
            .prepare(
                "select k, pass_at_k, pass_hat_k, consistent_instances, consistency from eval_pass_k_v1 order by k",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    // pass@2: 1 - C(3-c, 2)/C(3, 2) is 1 for c >= 2, 1 - 1/3 for c = 1, 0 for c = 0
    let want =
        [(1, 17.0 / 30.0, 17.0 / 30.0), (2, (5.0 + 4.0 * 2.0 / 3.0) / 10.0, (3.0 + 2.0 / 3.0) / 10.0), (3, 0.9, 0.3)];
    assert_eq!(got.len(), 3);
    for ((k, at, hat, consistent, share), (wk, wat, what)) in got.iter().zip(want) {
        assert_eq!((*k, *consistent), (wk, 4));
        assert!((share - 0.4).abs() < 1e-15);
        assert!(
            (at - wat).abs() < 1e-12 && (hat - what).abs() < 1e-12,
            "k {k}: pass@k {at} vs {wat}, pass^k {hat} vs {what}"
        );
    }
    assert_eq!(
        rows(&conn, "select item, count(*), string_agg(instance_id, ' ' order by instance_id) from eval_item_analysis_v1 group by item order by item")
            .iter()
            .map(|r| r.join(" "))
            .collect::<Vec<_>>(),
        [
            "discriminating 6 i02 i04 i06 i07 i08 i09",
            "solved_by_all 3 i01 i03 i05",
            "solved_by_none 1 i10"
        ]
    );
    // the bootstrap, redrawn
    let d: Vec<f64> =
        (1..=10).map(|i| f64::from(u8::from(resolved("X", i))) - f64::from(u8::from(resolved("Y", i)))).collect();
    let n = d.len() as u64;
    let pick = |k: u64| {
        let mut h = k.wrapping_mul(2654435761) % (1 << 32);
        h ^= h >> 16;
        h = h * 0x85eb_ca6b % (1 << 32);
        h ^= h >> 13;
        h = h * 0xc2b2_ae35 % (1 << 32);
        h ^= h >> 16;
        ((h * n) >> 32) as usize
    };
    let mut means: Vec<f64> =
        (0..200u64).map(|b| (0..n).map(|t| d[pick(3 + b * n + t)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    let quantile = |p: f64| {
        let h = (means.len() - 1) as f64 * p;
        let (lo, hi) = (h.floor() as usize, (h.floor() as usize + 1).min(means.len() - 1));
        means[lo] + (h - h.floor()) * (means[hi] - means[lo])
    };
    let (lo, hi): (f64, f64) = conn
        .query_row(
            "select ci_low, ci_high from eval_pair_bootstrap_at_v1(200, 3) where run_a = 'X' and run_b = 'Y'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!((lo - quantile(0.025)).abs() < 1e-12 && (hi - quantile(0.975)).abs() < 1e-12, "{lo} {hi}");
    assert!(
        (float(&conn, "select difference from eval_pair_bootstrap_at_v1(200, 3) where run_a = 'X' and run_b = 'Y'")
            - 0.2)
            .abs()
            < 1e-15
    );
}

/// A run folder holds byte-identical files at several paths (base's reports of b, c and d
/// say the same): loading the folder again skips every file, it never loads the later
/// copies again as new files (duplicate outcome rows, checks that change).
#[test]
fn reloading_a_run_with_byte_identical_reports_skips_every_file() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let first = load_run(&conn, &spec("base", "base-7b", None), &[samples().join("base")]).unwrap();
    assert!(first.iter().all(|o| matches!(o, LoadOutcome::Loaded(_))));
    let count = |t: &str| one(&conn, &format!("select count(*) from {t}"))[0].clone();
    let (files, outcomes) = (count("ingest_log"), count("eval_outcomes"));
    assert_eq!((files.as_str(), outcomes.as_str()), ("9", "4"));
    let again = load_run(&conn, &spec("base", "base-7b", None), &[samples().join("base")]).unwrap();
    assert_eq!(again.len(), 9);
    assert!(again.iter().all(|o| matches!(o, LoadOutcome::AlreadyLoaded { .. })), "{again:?}");
    assert_eq!((count("ingest_log"), count("eval_outcomes")), (files, outcomes));
}

/// The same fault on the one-file-per-transaction path: `load outcomes` of byte-identical
/// report.json files at several paths, twice: the second run skips each file.
#[test]
fn reloading_byte_identical_outcomes_skips_every_file() {
    let dir = std::env::temp_dir().join(format!("sphragis-eval-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("o.duckdb");
    let logs = samples().join("base/logs");
    let reports: Vec<PathBuf> =
        ["demo__b-2", "demo__c-3", "demo__d-4"].iter().map(|id| logs.join(id).join("report.json")).collect();
    for _ in 0..2 {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .arg("--db")
            .arg(&db)
            .args(["--quiet", "load", "outcomes"])
            .args(&reports)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let conn = sphragis::db::open_read_only(&db).unwrap();
    assert_eq!(one(&conn, "select count(*) from ingest_log"), ["3"]);
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An AutoCodeRover results folder (data-samples/runs/acr, figures in its README) loads
/// whole with one command: the task folders' files by name, the last conversation round as
/// the trajectory, `meta.json` naming the instance (the folder's name carries a time stamp),
/// `extract_status.json` the finish, and the harness's `report.json` the outcome. Before,
/// the first `agent_proxy_*.json` was refused ("expected an object, got an array").
#[test]
fn autocoderover_folder_loads_whole_by_hand() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let acr = samples().join("acr");
    let (files, skipped) = expand(std::slice::from_ref(&acr)).unwrap();
    let names = |paths: Vec<&Path>| -> Vec<String> {
        let mut n: Vec<String> =
            paths.iter().map(|p| p.strip_prefix(&acr).unwrap().to_string_lossy().into_owned()).collect();
        n.sort();
        n
    };
    let a = "applicable_patch/demo__a-1_2024-06-20_10-00-00/";
    let b = "no_patch/demo__b-2_2024-06-20_10-05-00/";
    assert_eq!(
        names(files.iter().map(PathBuf::as_path).collect()),
        [
            format!("{a}conversation_round_1.json"),
            format!("{a}extract_status.json"),
            format!("{a}meta.json"),
            format!("{a}report.json"),
            format!("{b}conversation_round_0.json"),
            format!("{b}extract_status.json"),
            format!("{b}meta.json"),
        ]
    );
    let why: std::collections::BTreeMap<String, &str> = skipped
        .iter()
        .map(|s| (s.path.strip_prefix(&acr).unwrap().to_string_lossy().into_owned(), s.why.as_str()))
        .collect();
    assert_eq!(why.len(), 5, "{why:?}");
    assert!(why[&format!("{a}conversation_round_0.json")].contains("earlier round"));
    assert!(why[&format!("{a}agent_proxy_0.json")].contains("proxy"));
    assert!(why[&format!("{a}cost.json")].contains("cost"));
    assert_eq!(why[&format!("{a}extracted_patch_1.diff")], "not a run file");
    assert!(why["predictions_for_swebench.json"].contains("predictions"));

    let spec = RunSpec { harness: Some("autocoderover".into()), ..spec("acr", "gpt-4o", None) };
    let outcomes = sphragis::eval::load::load_run(&conn, &spec, &files).unwrap();
    assert_eq!(outcomes.len(), 7);
    assert_eq!(
        rows(
            &conn,
            "select instance_id, source, exit_status, finish, assistant_turns from eval_trajectories order by 1"
        ),
        [
            ["demo__a-1", "autocoderover", "APPLICABLE_PATCH", "natural", "2"],
            ["demo__b-2", "autocoderover", "NO_PATCH", "error", "1"]
        ]
    );
    assert_eq!(
        rows(&conn, "select instance_id, status, shape from eval_outcomes order by 1"),
        [["demo__a-1", "resolved", "swebench-report"]]
    );
    assert_eq!(one(&conn, "select count(*) from ingest_log where kind = 'run'"), ["7"]);

    // a conversation named without its meta.json is refused before anything is written
    let fresh = sphragis::db::open(Path::new(":memory:")).unwrap();
    let alone = acr.join(b).join("conversation_round_0.json");
    let e = sphragis::eval::load::load_run(&fresh, &spec, &[alone]).unwrap_err().to_string();
    assert!(e.contains("names its instance in meta.json"), "{e}");
    assert_eq!(one(&fresh, "select count(*) from ingest_log"), ["0"]);

    // a task folder whose meta.json is lost: its files are refused for what they are (its
    // agent_proxy file was read as a trajectory and refused as "expected an object" before)
    let lost = std::env::temp_dir().join(format!("sphragis-acr-lost-{}", std::process::id()));
    let task = lost.join("demo__a-1_2024-06-20_10-00-00");
    std::fs::create_dir_all(&task).unwrap();
    for f in ["conversation_round_1.json", "agent_proxy_0.json", "extract_status.json"] {
        std::fs::copy(acr.join(a).join(f), task.join(f)).unwrap();
    }
    let (files, _) = expand(std::slice::from_ref(&lost)).unwrap();
    let e = sphragis::eval::load::load_run(&fresh, &spec, &files).unwrap_err().to_string();
    assert!(e.contains("has no meta.json, which names the instance"), "{e}");
    assert_eq!(one(&fresh, "select count(*) from ingest_log"), ["0"]);
    std::fs::remove_dir_all(lost).unwrap();
}

/// Repo-clustered intervals by hand: one run, five graded instances in two repositories,
/// o__r-1..3 resolved and p__q-1..2 unresolved. n = 5, p = 0.6; S(o__r) = 3 (1 - 0.6) = 1.2,
/// S(p__q) = 2 (0 - 0.6) = -1.2; se_clustered = sqrt(2 / 1 * (1.44 + 1.44)) / 5 = 2.4 / 5 =
/// 0.48; se_iid = sqrt(0.6 * 0.4 / 4) = sqrt(0.06); design effect 0.2304 / 0.06 = 3.84; the
/// interval 0.6 -/+ 1.96 * 0.48 clamps to [0, 1]. A second run resolving p__q-1 only: d = a - b
/// = +1, +1, +1, -1, 0, D = 0.4; S(o__r) = 3 (1 - 0.4) = 1.8, S(p__q) = (-1 - 0.4) + (0 - 0.4)
/// = -1.8; se = sqrt(2 * 6.48) / 5 = 3.6 / 5 = 0.72.
#[test]
fn repo_clustered_intervals_by_hand() {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let dir = std::env::temp_dir().join(format!("sphragis-clustered-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.json");
    std::fs::write(&a, r#"{"resolved_ids": ["o__r-1", "o__r-2", "o__r-3"], "unresolved_ids": ["p__q-1", "p__q-2"]}"#)
        .unwrap();
    let b = dir.join("b.json");
    std::fs::write(&b, r#"{"resolved_ids": ["p__q-1"], "unresolved_ids": ["o__r-1", "o__r-2", "o__r-3", "p__q-2"]}"#)
        .unwrap();
    load_run(&conn, &spec("a", "m", None), &[a]).unwrap();
    load_run(&conn, &spec("b", "m", None), &[b]).unwrap();
    let r = one(
        &conn,
        "select graded, repos, resolve_rate, se_clustered, ci_low, ci_high from eval_runs_clustered_v1 where run = 'a'",
    );
    assert_eq!(r[..2], ["5", "2"]);
    assert!((float(&conn, "select se_clustered from eval_runs_clustered_v1 where run = 'a'") - 0.48).abs() < 1e-12);
    assert!((float(&conn, "select design_effect from eval_runs_clustered_v1 where run = 'a'") - 3.84).abs() < 1e-9);
    assert_eq!(rows(&conn, "select ci_low, ci_high from eval_runs_clustered_v1 where run = 'a'"), [["0", "1"]]);
    assert!((float(&conn, "select difference from eval_pair_clustered_v1") - 0.4).abs() < 1e-12);
    assert!((float(&conn, "select se_clustered from eval_pair_clustered_v1") - 0.72).abs() < 1e-12);
    // the family rule of ids, in SQL: SWE-smith, SWE-bench with a sample suffix, no scheme
    let c = dir.join("c.json");
    std::fs::write(
        &c,
        r#"{"resolved_ids": [], "unresolved_ids": ["owner__repo.js.abcdef1.func_pm_op__x-3", "python__mypy-15976_0", "inst7"]}"#,
    )
    .unwrap();
    load_run(&conn, &spec("c", "m", None), &[c]).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select instance_id, repo, repo_known from eval_instance_repos_v1 \
             where instance_id not like 'o__r%' order by 1"
        ),
        [
            ["inst7", "inst7", "false"],
            ["owner__repo.js.abcdef1.func_pm_op__x-3", "owner__repo.js", "true"],
            ["p__q-1", "p__q", "true"],
            ["p__q-2", "p__q", "true"],
            ["python__mypy-15976_0", "python__mypy", "true"],
        ]
    );
    assert_eq!(one(&conn, "select unknown_repos from eval_runs_clustered_v1 where run = 'c'"), ["1"]);
    // every instance its own repository: no clustering, design effect 1 (c: 3 instances, 3
    // repositories, none resolved: se 0, so none); one repository: no interval at all
    // (DuckDB's greatest / least would have given [0, 1] from a null bound)
    let d = dir.join("d.json");
    std::fs::write(&d, r#"{"resolved_ids": ["x__y-1"], "unresolved_ids": ["u__v-1", "w__z-1"]}"#).unwrap();
    load_run(&conn, &spec("d", "m", None), &[d]).unwrap();
    assert!((float(&conn, "select design_effect from eval_runs_clustered_v1 where run = 'd'") - 1.0).abs() < 1e-12);
    let e = dir.join("e.json");
    std::fs::write(&e, r#"{"resolved_ids": ["o__r-1"], "unresolved_ids": ["o__r-2"]}"#).unwrap();
    load_run(&conn, &spec("e", "m", None), &[e]).unwrap();
    assert_eq!(
        rows(
            &conn,
            "select repos, se_clustered, ci_low, ci_high, design_effect from eval_runs_clustered_v1 where run = 'e'"
        ),
        [["1", "", "", "", ""]]
    );
    assert_eq!(
        rows(
            &conn,
            "select shared, repos, ci_low, ci_high, excludes_zero from eval_pair_clustered_v1 where run_a = 'a' and run_b = 'e'"
        ),
        [["2", "1", "", "", ""]]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-runs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `expand(paths)` on another thread, given 30 s (a walk that loops never answers).
fn expand_in_time(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let paths = paths.to_vec();
    std::thread::spawn(move || {
        let _ = tx.send(expand(&paths).map_err(|e| format!("{e:#}")));
    });
    let (files, skipped) = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the walk ended").unwrap();
    (files, skipped.iter().map(|s| format!("{} ({})", s.path.display(), s.why)).collect())
}

#[test]
fn symlink_loop_in_run_folder_terminates() {
    // a run folder with a link to its parent and one to its grandparent (outside the run)
    let dir = scratch("loop");
    let a = dir.join("loop/a");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::copy(samples().join("base/trajs/demo__a-1.traj.json"), a.join("demo__a-1.traj.json")).unwrap();
    std::os::unix::fs::symlink("..", a.join("up")).unwrap();
    std::os::unix::fs::symlink("../..", a.join("up2")).unwrap();
    let (files, skipped) = expand_in_time(&[dir.join("loop")]);
    assert_eq!(files, [a.join("demo__a-1.traj.json")]);
    assert_eq!(
        skipped,
        [
            format!("{} (a link to the folder .., not followed: name the folder to read it)", a.join("up").display()),
            format!(
                "{} (a link to the folder ../.., not followed: name the folder to read it)",
                a.join("up2").display()
            ),
        ]
    );
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    load_run(&conn, &spec("r1", "m", None), &[dir.join("loop")]).unwrap();
    assert_eq!(one(&conn, "select count(*) from eval_trajectories"), ["1"]);
    // the folder a link names, named on the command line, is read
    let (files, _) = expand_in_time(&[a.join("up")]);
    assert_eq!(files, [a.join("up/a/demo__a-1.traj.json")]);
}

#[test]
fn two_paths_to_one_file_are_one_file() {
    // a `latest -> trajs` link, a hard link to the trajectory, and the trajectory named
    // on the command line beside its folder: one file, one trajectory, not two
    let dir = scratch("two-paths");
    let rl = dir.join("rl");
    std::fs::create_dir_all(rl.join("trajs")).unwrap();
    let traj = rl.join("trajs/demo__a-1.traj.json");
    std::fs::copy(samples().join("base/trajs/demo__a-1.traj.json"), &traj).unwrap();
    std::os::unix::fs::symlink("trajs", rl.join("latest")).unwrap();
    std::fs::hard_link(&traj, rl.join("trajs/copy.traj.json")).unwrap();
    let paths = [rl.clone(), traj.clone()];
    let (files, skipped) = expand_in_time(&paths);
    assert_eq!(files, [rl.join("trajs/copy.traj.json")]);
    let first = rl.join("trajs/copy.traj.json");
    assert_eq!(
        skipped,
        [
            format!(
                "{} (a link to the folder trajs, not followed: name the folder to read it)",
                rl.join("latest").display()
            ),
            format!("{} (the same file as {}, read once)", traj.display(), first.display()),
            format!("{} (the same file as {}, read once)", traj.display(), first.display()),
        ]
    );
    // loaded: one trajectory of demo__a-1 (was refused: "has a trajectory in rl/latest/... too")
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let out = load_run(&conn, &spec("r1", "m", None), &paths).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(one(&conn, "select count(*), min(instance_id) from eval_trajectories"), ["1", "demo__a-1"]);
}
