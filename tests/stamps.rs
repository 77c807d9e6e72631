//! Every figure traces to the SQL that produced it: for every report, with and without
//! parameters and filters, the stamp's query — run on the same database file by a plain
//! DuckDB connection that has no sphragis function, view registration or code path —
//! returns exactly the rows sphragis rendered.
//!
//! Before parametrised reports ran their table macros, `report weights --weights` and
//! `report budget --grad-accum/--steps` printed rows of a hidden query under the grid
//! view's stamp; the stamp's SQL then returned other rows, and this test failed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples")
}

/// Builds the demo database once in a fresh folder and returns its path.
fn demo_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-stamps-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .args(["demo", "--quiet", "--samples", samples().to_str().unwrap()])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.join("sphragis-demo.duckdb")
}

fn report_json(db: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .arg("--db")
        .arg(db)
        .arg("report")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `sql` on a plain read-only DuckDB connection (nothing of sphragis registered)
/// and renders the rows the way `report --format json` does.
fn stock_rows(db: &Path, sql: &str) -> serde_json::Value {
    let config = duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap();
    let conn = duckdb::Connection::open_with_flags(db, config).unwrap();
    let no_udf: i64 = conn
        .query_row("select count(*) from duckdb_functions() where function_name like 'sph\\_%' escape '\\'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(no_udf, 0, "the stock connection must not see sphragis functions");
    let table = sphragis::report::query(&conn, sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
    let json: serde_json::Value = serde_json::from_str(&sphragis::report::render_json(&table).unwrap()).unwrap();
    json["rows"].clone()
}

fn check(db: &Path, args: &[&str]) -> serde_json::Value {
    let json = report_json(db, args);
    let query = json["query"].as_str().unwrap_or_else(|| panic!("{args:?}: no query in the stamp: {json}"));
    assert_eq!(stock_rows(db, query), json["rows"], "{args:?}: the stamp's query {query} returns other rows");
    json
}

#[test]
fn every_report_stamp_reruns_in_a_stock_client() {
    let db = demo_db("all");
    for report in sphragis::report::REPORTS {
        let json = check(&db, &[report.name]);
        assert_eq!(json["name"], report.view, "{}", report.name);
        assert_eq!(json["kind"], "view");
        if report.by_version {
            let json = check(&db, &[report.name, "--version", "v2"]);
            assert_eq!(json["filter"], "version = 'v2'");
        }
    }
}

#[test]
fn parametrised_reports_are_stamped_with_their_macro_and_arguments() {
    let db = demo_db("params");
    let json = check(&db, &["weights", "--weights", "0.5,3"]);
    assert_eq!(json["kind"], "macro");
    assert_eq!(json["name"], "sft_weight_projection_at_v1");
    assert_eq!(json["arguments"], "[0.5, 3.0]");
    // The demo's pools (tests/sft_audit_samples.rs): U = 6, |R| = 2.
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0]["weight"].as_f64(), rows[0]["total"].as_f64()), (Some(0.5), Some(7.0)));
    assert_eq!(
        (rows[1]["weight"].as_f64(), rows[1]["total"].as_f64(), rows[1]["region"].as_f64()),
        (Some(3.0), Some(12.0), Some(8.0))
    );

    let json = check(&db, &["budget", "--grad-accum", "2", "--steps", "10,30"]);
    assert_eq!(json["name"], "sft_budget_at_v2");
    assert_eq!(json["arguments"], "[2], [10, 30]");
    let rows = json["rows"].as_array().unwrap();
    // 3 training views at G = 2: ceil(3 / 2) = 2 updates per epoch; 10 and 30 steps make 5 and 15 passes.
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["updates_per_epoch"], 2);
    assert_eq!((rows[0]["passes"].as_f64(), rows[1]["passes"].as_f64()), (Some(5.0), Some(15.0)));

    // Only --steps: G defaults to 8, as the help says.
    let json = check(&db, &["budget", "--steps", "100"]);
    assert_eq!(json["arguments"], "[8], [100]");

    // Truncation: each report's own default lengths unless given; the side as given.
    let json = check(&db, &["truncation", "--side", "left"]);
    assert_eq!(
        (json["name"].as_str(), json["arguments"].as_str()),
        (Some("sft_truncation_at_v1"), Some("[8192, 16384, 32768, 65536], 'left'"))
    );
    let json = check(&db, &["truncation-views", "--max-length", "5"]);
    assert_eq!(
        (json["name"].as_str(), json["arguments"].as_str()),
        (Some("sft_truncation_views_at_v1"), Some("[5], 'right'"))
    );
    // the demo's views are 8 tokens: all 6 are over 5 tokens
    assert_eq!(json["rows"].as_array().unwrap().len(), 6);

    // The grid view equals its macro on the default grid (the formula exists once).
    let grid = report_json(&db, &["weights"]);
    let same = check(&db, &["weights", "--weights", "0,0.25,0.5,1,2,4"]);
    assert_eq!(grid["rows"], same["rows"]);

    // `report all` with parameters: the two parametrised tables name their macros.
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .arg("--db")
        .arg(&db)
        .args(["report", "all", "--weights", "1", "--steps", "7"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("macro sft_weight_projection_at_v1 sha256 ") && text.contains("args ([1.0])"), "{text}");
    assert!(text.contains("macro sft_budget_at_v2 sha256 ") && text.contains("args ([8], [7])"), "{text}");
    assert!(!text.contains("view sft_weight_projection_v1 sha256"), "the grid view's stamp must not label macro rows");
}

#[test]
fn parameters_of_another_report_or_bad_values_are_usage_errors() {
    let db = demo_db("usage");
    for args in [
        &["removals", "--weights", "1"][..],
        &["weights", "--weights", "-1"],
        &["weights", "--weights", "x"],
        &["budget", "--steps", "0"],
        &["budget", "--grad-accum", "0"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .arg("--db")
            .arg(&db)
            .arg("report")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn macros_are_callable_from_a_stock_client() {
    let db = demo_db("macros");
    // Macros and grid views are stored in the file: a plain connection calls them.
    let rows = stock_rows(&db, "select weight, total from sft_weight_projection_at_v1([2.0]) order by all");
    assert_eq!(rows, serde_json::json!([{"weight": 2.0, "total": 10.0}]));
    let rows = stock_rows(
        &db,
        "select kind, count(*) as n from sph_views where name like '%\\_at\\_v%' escape '\\' group by kind",
    );
    assert_eq!(
        rows,
        serde_json::json!([{"kind": "macro", "n": 14}]),
        "6 SFT macros (budget v1 and v2, truncation, truncation views, weight projection, view positions), the 5 of diff (example moves and version diff, v1 and v2; report diff), the 2 of check (check_sft_truncation_at_v1, check_findings_at_v1) and the paired bootstrap of runs (eval_pair_bootstrap_at_v1)"
    );
    // the verdict from a stock client, at another training length
    let rows = stock_rows(
        &db,
        "select count(*) as n from check_findings_at_v1(8192, 'right') where check_name = 'trains_nothing_after_truncation'",
    );
    assert_eq!(rows, serde_json::json!([{"n": 4}]), "one row per pool with training views: A, B, C1, C2");
    // The pointer macro follows the latest version.
    assert_eq!(
        stock_rows(&db, "select passes from sft_budget_at([8], [100])"),
        stock_rows(&db, "select passes from sft_budget_at_v2([8], [100])")
    );
}

/// `report all` runs its reports on several connections at once (report::run_many): the
/// tables, rows and stamps must be those of running each report alone, in the same order.
#[test]
fn reports_run_in_parallel_give_the_tables_of_one_after_another() {
    let db = demo_db("parallel");
    let conn = sphragis::db::open_read_only(&db).unwrap();
    let reports: Vec<&sphragis::report::Report> = sphragis::report::REPORTS.iter().collect();
    let together = sphragis::report::run_many(&conn, &reports, None, |_| None).unwrap();
    assert_eq!(together.len(), reports.len());
    let mut rows = 0;
    for (report, table) in reports.iter().zip(&together) {
        let alone = sphragis::report::run_with(&conn, report, None, None).unwrap();
        assert_eq!(table.report, alone.report);
        assert_eq!(table.columns, alone.columns, "{}", report.name);
        assert_eq!(table.rows, alone.rows, "{}", report.name);
        assert_eq!(table.stamp.as_ref().map(|s| &s.query), alone.stamp.as_ref().map(|s| &s.query));
        rows += table.rows.len();
    }
    assert!(rows > 100, "the demo's reports hold rows ({rows})");
    // the first failing report is the error, as when they run one after another
    let err = sphragis::report::run_many(&conn, &reports, Some("no-such-version"), |_| None).unwrap_err();
    assert!(err.to_string().contains("version no-such-version does not exist"), "{err}");
}

/// `report all --format json` prints the reports as one array: every double must be the
/// text the report prints alone (it was re-parsed by serde_json, whose default float
/// reading is not exact: 0.09090909090909091 came out as 0.09090909090909093).
#[test]
fn json_of_all_reports_prints_every_double_as_the_report_alone_does() {
    let db = demo_db("json-doubles");
    let run = |args: &[&str]| -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_sphragis")).arg("--db").arg(&db).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let doubles = |text: &str, field: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.trim_start().starts_with(&format!("\"{field}\":")))
            .map(|l| l.trim().to_string())
            .collect()
    };
    let all = run(&["report", "all", "--format", "json"]);
    for (report, field) in [("suggested-share", "training_share"), ("labels", "wilson_high")] {
        let alone = doubles(&run(&["report", report, "--format", "json"]), field);
        assert!(!alone.is_empty(), "{report} prints {field}");
        let together = doubles(&all, field);
        for line in &alone {
            assert!(together.contains(line), "{report}: {line} is not in report all's JSON ({together:?})");
        }
    }
}
