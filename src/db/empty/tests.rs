use super::*;

/// The registered view or macro file named `name`.
fn file(name: &str) -> &'static crate::db::views::ViewFile {
    crate::db::views::find(name).expect("a registered view")
}

/// A migrated in-memory database with every view and macro registered.
fn prepared() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    crate::db::prepare(&conn).unwrap();
    conn
}

/// The names DuckDB's own parser finds read in `sql` (one statement): every base table
/// and every function (table functions and macros among them) its JSON tree names.
fn parsed_references(conn: &Connection, sql: &str) -> BTreeSet<String> {
    let json: String = conn.query_row("select json_serialize_sql(?)", [sql], |r| r.get(0)).unwrap();
    let tree: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(tree["error"], false, "DuckDB cannot parse {sql}: {}", tree["error_message"]);
    let mut names = BTreeSet::new();
    let mut todo = vec![&tree];
    while let Some(node) = todo.pop() {
        match node {
            serde_json::Value::Object(map) => {
                if map.get("type").and_then(|t| t.as_str()) == Some("BASE_TABLE") {
                    names.insert(map["table_name"].as_str().unwrap().to_lowercase());
                }
                if let Some(f) = map.get("function_name").and_then(|f| f.as_str()) {
                    names.insert(f.to_lowercase());
                }
                todo.extend(map.values());
            }
            serde_json::Value::Array(items) => todo.extend(items),
            _ => {}
        }
    }
    names
}

/// The scan that decides which views a view reads finds, in every registered file, exactly
/// the tables, views and macros DuckDB's parser finds there: none missed (a view shadowed
/// while a table it reads is full) and none invented (a comment or string naming a view).
#[test]
fn references_are_those_duckdb_parses() {
    let conn = prepared();
    let tables: HashSet<String> = {
        let mut stmt = conn.prepare("select table_name from duckdb_tables() where schema_name = 'main'").unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(|r| r.unwrap()).collect()
    };
    let known = |name: &String| tables.contains(name) || VIEWS.iter().any(|v| v.name() == name);
    let mut compared = 0;
    for view in VIEWS {
        let select = match view.kind {
            SqlKind::View => view.sql,
            SqlKind::Macro => {
                let at = view.sql.to_ascii_lowercase().find(" as table").expect("a table macro");
                &view.sql[at + " as table".len()..]
            }
        };
        let scanned: BTreeSet<String> = references(select).into_iter().filter(known).collect();
        let parsed: BTreeSet<String> =
            parsed_references(&conn, select).into_iter().filter(|n| known(n) && n != view.name()).collect();
        assert_eq!(scanned, parsed, "{}", view.source);
        assert!(view.sql.contains("--"), "{} has a header comment the scan must skip", view.source);
        compared += 1;
    }
    assert_eq!(compared, VIEWS.len());
}

#[test]
fn references_skip_comments_and_strings_and_read_quoted_names() {
    let sql = "-- reads old_view_v1\nselect 'review_examples' as s, \"Odd \"\"Name\"\"\" /* sft_views */ \
               from eval_runs_v3 join x2y on 1 -- trailing review_comments\n where 3rd = 'it''s sft_pools'";
    let names: Vec<String> = references(sql).into_iter().collect();
    assert_eq!(names, ["as", "eval_runs_v3", "from", "join", "odd \"name\"", "on", "s", "select", "where", "x2y"]);
}

/// On a new database every corpus is empty: the views two or more reports read are picked,
/// each over at least one table, none of them a macro, in creation order.
#[test]
fn views_read_by_two_reports_over_empty_tables_are_picked() {
    let conn = prepared();
    let roots: Vec<&str> = crate::report::REPORTS.iter().map(|r| r.view).collect();
    let picked = over_empty_tables(&conn, &roots).unwrap();
    for name in ["sft_contract_v1", "eval_runs_v3", "eval_instances_v2", "fence_agreement_v2"] {
        assert!(picked.contains(&name), "{name} not in {picked:?}");
    }
    // a view only one report reads (sft_dedup_v2 is its report's own view, read by no other)
    assert!(!picked.contains(&"sft_dedup_v2"), "{picked:?}");
    let positions: Vec<usize> = picked.iter().map(|n| VIEWS.iter().position(|v| v.name() == *n).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{picked:?}");
    assert!(picked.iter().all(|n| file(n).kind == SqlKind::View));
    // one root alone shares nothing
    assert_eq!(over_empty_tables(&conn, &["eval_runs_v3"]).unwrap(), Vec::<&str>::new());
}

/// A row in any table a view reads keeps the view out: here one evaluation run.
#[test]
fn views_over_a_filled_table_are_not_picked() {
    let conn = prepared();
    let roots: Vec<&str> = crate::report::REPORTS.iter().map(|r| r.view).collect();
    let before = over_empty_tables(&conn, &roots).unwrap();
    assert!(before.contains(&"eval_runs_v3"));
    assert!(references(file("eval_runs_v3").sql).contains("eval_run_specs"));
    conn.execute_batch("insert into eval_run_specs (run, model, runaway_n) values ('r1', 'm', 5)").unwrap();
    let after = over_empty_tables(&conn, &roots).unwrap();
    for name in ["eval_runs_v3", "eval_repeat_instances_v2", "eval_pairs_v2"] {
        assert!(before.contains(&name) && !after.contains(&name), "{name}: {before:?} then {after:?}");
    }
    // views that read no run specification stay picked
    assert!(after.contains(&"eval_instances_v2") && after.contains(&"sft_contract_v1"), "{after:?}");
}

/// The computed tables are what a query of the view then reads: a row put into one shows
/// in the view's report on that connection, and in no other connection; dropping the value
/// drops the tables.
#[test]
fn computed_views_are_read_in_place_of_the_views() {
    let conn = prepared();
    let picked = over_empty_tables(&conn, &["eval_pass_k_v1", "check_eval_v1"]).unwrap();
    assert!(picked.contains(&"eval_runs_v3"), "{picked:?}");
    let count = |c: &Connection| -> i64 { c.query_row("select count(*) from eval_runs_v3", [], |r| r.get(0)).unwrap() };
    {
        let computed = compute(&conn, &picked);
        assert_eq!(computed.names(), picked.as_slice());
        conn.execute_batch("insert into temp.main.eval_runs_v3 (run) values ('only here')").unwrap();
        assert_eq!(count(&conn), 1);
        assert_eq!(count(&conn.try_clone().unwrap()), 0);
    }
    assert_eq!(count(&conn), 0);
    let left: i64 =
        conn.query_row("select count(*) from duckdb_tables() where database_name = 'temp'", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0);
}

/// Computed tables keep the view's column names and types (a bare `null` column too), and
/// tables holding more than [`MAX_ROWS`] rows are refused, and then none is kept.
#[test]
fn computed_tables_keep_their_views_columns_within_the_bound() {
    let conn = prepared();
    let picked = over_empty_tables(&conn, &["eval_pass_k_v1", "check_eval_v1"]).unwrap();
    assert!(picked.len() >= 2, "{picked:?}");
    let computed = compute(&conn, &picked);
    assert_eq!(computed.names(), picked.as_slice());
    let columns = |database: &str, name: &str| -> Vec<(String, String)> {
        let mut stmt = conn
            .prepare(
                "select column_name, data_type from duckdb_columns() where database_name = ? \
                 and schema_name = 'main' and table_name = ? order by column_index",
            )
            .unwrap();
        stmt.query_map(duckdb::params![database, name], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let main: String = conn.query_row("select current_database()", [], |r| r.get(0)).unwrap();
    for name in computed.names() {
        let view = columns(&main, name);
        assert!(!view.is_empty(), "{name}");
        assert_eq!(columns("temp", name), view, "{name}");
    }
    conn.execute_batch("create view null_column_v as select null as nothing, 1 as one from sph_views where false")
        .unwrap();
    crate::db::run_into_temp(&conn, "null_column_v", "select * from main.null_column_v").unwrap();
    assert_eq!(columns("temp", "null_column_v"), columns(&main, "null_column_v"));
    assert_eq!(columns("temp", "null_column_v")[0].1, "\"NULL\"");
    assert!(within_bound(&conn, computed.names()).unwrap());
    let name = computed.names()[0];
    let first = &columns("temp", name)[0].0;
    conn.execute_batch(&format!("insert into temp.main.{name} ({first}) select null from range({})", MAX_ROWS + 1))
        .unwrap();
    assert!(!within_bound(&conn, computed.names()).unwrap());
    drop(computed);
    conn.execute_batch(&format!(
        "create temporary table big as select * from range({}); create view big_v as select * from big",
        MAX_ROWS + 1
    ))
    .unwrap();
    // a view of more rows than the bound keeps no table, and neither does any other
    let kept = compute(&conn, &["eval_runs_v3", "big_v"]);
    assert!(kept.names().is_empty(), "{:?}", kept.names());
    let mut stmt =
        conn.prepare("select table_name from duckdb_tables() where database_name = 'temp' order by 1").unwrap();
    let left: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(left, ["big", "null_column_v"]);
}
