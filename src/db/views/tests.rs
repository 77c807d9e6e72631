//! Tests of the view registry: embedded files, pointers, refusal of changed released SQL.

use super::*;

#[test]
fn every_sql_file_is_registered() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut on_disk = Vec::new();
    for area in std::fs::read_dir(root.join("sql")).unwrap() {
        let area = area.unwrap();
        if area.file_name() == "steps" {
            continue; // statements sphragis runs (refine, splits), embedded where they run
        }
        if !area.file_type().unwrap().is_dir() {
            assert_eq!(area.file_name(), "released.sha256", "sql/ holds one folder per area and the release lock");
            continue;
        }
        for file in std::fs::read_dir(area.path()).unwrap() {
            let file = file.unwrap();
            on_disk.push(format!("sql/{}/{}", area.file_name().to_string_lossy(), file.file_name().to_string_lossy()));
        }
    }
    on_disk.sort();
    let mut registered: Vec<String> = VIEWS.iter().map(|v| v.source.to_string()).collect();
    registered.sort();
    assert_eq!(on_disk, registered);
}

/// Binding is deferred to the first query (see [`register`]): a view whose SQL does not
/// bind against the migrated tables must fail here, not in a user's query.
#[test]
fn every_view_and_pointer_binds_on_a_new_file() {
    let conn = Connection::open_in_memory().unwrap();
    crate::db::prepare(&conn).unwrap();
    let mut bound = 0;
    for view in VIEWS.iter().filter(|v| v.kind == SqlKind::View) {
        conn.execute_batch(&format!("select * from {} limit 0", view.name()))
            .unwrap_or_else(|e| panic!("{} does not bind: {e}", view.source));
        bound += 1;
    }
    for (base, view) in pointers().unwrap().into_iter().filter(|(_, v)| v.kind == SqlKind::View) {
        conn.execute_batch(&format!("select * from {base} limit 0"))
            .unwrap_or_else(|e| panic!("pointer {base} over {} does not bind: {e}", view.name()));
        bound += 1;
    }
    assert!(bound > 100, "{bound} views and pointers");
    // a view that cannot bind is created (binding is deferred) and fails when queried
    conn.execute_batch("create view broken with (defer_binding) as select no_such_column from sph_views").unwrap();
    let err = conn.execute_batch("select * from broken limit 0").unwrap_err().to_string();
    assert!(err.contains("no_such_column"), "{err}");
}

#[test]
fn names_parse() {
    let v = find("refine_removals_v1").unwrap();
    assert_eq!(v.base_and_version(), Some(("refine_removals", 1)));
    assert!(VIEWS.iter().all(|v| v.base_and_version().is_some()));
}

#[test]
fn macro_files_declare_the_macro_named_after_them() {
    let macros: Vec<_> = VIEWS.iter().filter(|v| v.kind == SqlKind::Macro).collect();
    assert!(macros.len() >= 2);
    for m in macros {
        let (list, names) = m.macro_parameters().unwrap_or_else(|| panic!("{} declares no macro", m.source));
        assert!(!names.is_empty() && !list.is_empty(), "{}", m.source);
        assert!(m.name().contains("_at_v"), "{}: a parametrised figure is named <figure>_at_v<N>", m.source);
    }
    let budget = find("sft_budget_at_v1").unwrap();
    assert_eq!(budget.macro_parameters().unwrap().1, ["grad_accums", "step_counts"]);
    assert_eq!(split_top_level("a integer[], b decimal(5, 2), c"), ["a integer[]", "b decimal(5, 2)", "c"]);
}

#[test]
fn changed_view_is_refused_with_what_changed_and_what_to_do() {
    let conn = Connection::open_in_memory().unwrap();
    crate::db::prepare(&conn).unwrap();
    let by: String = conn
        .query_row("select code_version from sph_views where name = 'refine_removals_v1'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(by, crate::CODE_VERSION);
    conn.execute(
        "update sph_views set sha256 = 'abc', code_version = 'sphragis 0.0.9 (git 0123456789ab)' where name = 'refine_removals_v1'",
        [],
    )
    .unwrap();
    for err in [register(&conn, false).unwrap_err().to_string(), check_current(&conn).unwrap_err().to_string()] {
        assert!(err.starts_with("view refine_removals_v1 in this database was recorded with sha256 abc"), "{err}");
        assert!(err.contains("by sphragis 0.0.9 (git 0123456789ab)"), "{err}");
        assert!(err.contains("sql/review/refine_removals_v1.sql with sha256"), "{err}");
        assert!(err.contains("open this file with the sphragis that made it"), "{err}");
        assert!(err.contains("load the inputs again into a new database file"), "{err}");
        assert!(!err.contains("unreleased build"), "another release wrote it: {err}");
    }
    // the same release on both sides: no release wrote that sha, and the message says so
    let this_release = crate::CODE_VERSION.split(" (git").next().unwrap().to_owned();
    conn.execute(
        "update sph_views set code_version = ? where name = 'refine_removals_v1'",
        [format!("{this_release} (git fedcba987654)")],
    )
    .unwrap();
    let err = check_current(&conn).unwrap_err().to_string();
    assert!(
        err.ends_with(&format!(
            "Both are {this_release}, whose SQL files do not change: the record was written by an unreleased \
             build or edited by another client."
        )),
        "{err}"
    );
}

/// A file whose catalogue sphragis checked has its fingerprint recorded, and the next
/// open skips the scan ([`crate::db::verified`]); another client's change, checkpointed
/// into the file or left in its write-ahead log, must still be found by the full check,
/// and a refused catalogue is never recorded.
#[test]
fn catalogue_changed_after_a_recorded_fingerprint_is_checked_in_full() {
    let dir = std::env::temp_dir().join(format!("sphragis-fingerprint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.duckdb");
    let file = crate::db::checkpoint::resolved(&path);
    let cache = crate::db::template::cache_dir().expect("HOME or SPHRAGIS_CACHE_DIR names a cache folder");
    // whether the file, as a DuckDB reader holds it, has the fingerprint recorded
    let recorded = || {
        let witness = crate::db::verified::Witness::before_open(&file).unwrap();
        let config = duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap();
        let reader = Connection::open_with_flags(&file, config).unwrap();
        witness.is_current(Some(&cache), &reader)
    };
    drop(crate::db::open(&path).unwrap());
    assert!(recorded(), "a writing command records the fingerprint of the file it checkpointed");
    assert!(crate::db::open_read_only(&path).is_ok());
    assert!(recorded(), "a read-only open leaves the file as it was");
    // checkpointed into the file by the other client's close
    Connection::open(&path)
        .unwrap()
        .execute_batch("create or replace view split_counts_v1 as select 'fake' as org, 999 as n")
        .unwrap();
    assert!(!recorded(), "the other client's checkpoint changed the headers");
    let err = format!("{:#}", crate::db::open_read_only(&path).unwrap_err());
    assert!(err.contains("view split_counts_v1 in this file was changed outside sphragis"), "{err}");
    drop(crate::db::open(&path).unwrap());
    assert!(crate::db::open_read_only(&path).is_ok() && recorded());
    // left in the write-ahead log (no checkpoint at the other client's close)
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "pragma disable_checkpoint_on_shutdown; create or replace view split_counts_v1 as select 'fake' as org, 9 as n",
        )
        .unwrap();
    assert!(crate::db::wal_path(&path).exists(), "the change is in the write-ahead log");
    assert!(!recorded(), "a file with a write-ahead log has no fingerprint");
    let err = format!("{:#}", crate::db::open_read_only(&path).unwrap_err());
    assert!(err.contains("view split_counts_v1 in this file was changed outside sphragis"), "{err}");
    drop(crate::db::open(&path).unwrap());
    assert!(recorded());
    // a writing open that refuses the file records nothing: the next open refuses it too
    Connection::open(&path).unwrap().execute_batch("create macro list_sum(x) as 0").unwrap();
    for _ in 0..2 {
        let err = format!("{:#}", crate::db::open(&path).unwrap_err());
        assert!(err.contains("holds a macro named like a DuckDB or sphragis function (list_sum)"), "{err}");
        assert!(!recorded(), "a refused catalogue is never recorded");
    }
    let err = format!("{:#}", crate::db::open_read_only(&path).unwrap_err());
    assert!(err.contains("(list_sum)"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A new sphragis file `file` in a fresh scratch folder `sphragis-<name>-<pid>` (made by
/// `db::open` and closed): the folder and the file's path.
fn new_file(name: &str, file: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("sphragis-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file);
    drop(crate::db::open(&path).unwrap());
    (dir, path)
}

/// A writing command repairs a view or macro another client changed or dropped, and used
/// to do it without a word (found by a fresh tester: `check` re-created a replaced view and
/// exited 0); `register` now names what it re-created, and the open says so on stderr.
#[test]
fn view_changed_outside_sphragis_is_named_when_a_writing_open_re_creates_it() {
    let (dir, path) = new_file("repaired", "t.duckdb");
    let reopen = || {
        let conn = Connection::open(&path).unwrap();
        crate::db::prepare(&conn).unwrap()
    };
    assert_eq!(reopen(), Vec::<String>::new(), "an intact file: nothing re-created");
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "create or replace view split_counts_v1 as select 'fake' as org, 999 as n; \
             drop macro table sft_budget_at_v1",
        )
        .unwrap();
    assert_eq!(
        reopen(),
        vec![
            "view split_counts_v1 (sql/splits/split_counts_v1.sql)".to_string(),
            "macro sft_budget_at_v1 (sql/pools/sft_budget_at_v1.sql)".to_string()
        ]
    );
    assert_eq!(reopen(), Vec::<String>::new(), "repaired: nothing left to re-create");
    assert!(crate::db::open_read_only(&path).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn view_replaced_outside_sphragis_is_refused_on_read() {
    let (dir, path) = new_file("replaced", "t.duckdb");
    assert!(crate::db::open_read_only(&path).is_ok());
    {
        // another client replaces a view and a macro under the same names
        let stock = Connection::open(&path).unwrap();
        stock.execute_batch("create or replace view split_counts_v1 as select 'fake' as org, 999 as n").unwrap();
    }
    let err = format!("{:#}", crate::db::open_read_only(&path).unwrap_err());
    assert!(err.contains("view split_counts_v1 in this file was changed outside sphragis"), "{err}");
    // a writing open re-creates it from the embedded file, and reads work again
    drop(crate::db::open(&path).unwrap());
    assert!(crate::db::open_read_only(&path).is_ok());
    {
        let stock = Connection::open(&path).unwrap();
        stock
            .execute_batch(
                "create or replace macro sft_budget_at_v1(grad_accums, step_counts) as table select 1 as passes",
            )
            .unwrap();
    }
    let err = format!("{:#}", crate::db::open_read_only(&path).unwrap_err());
    assert!(err.contains("macro sft_budget_at_v1 in this file was changed outside sphragis"), "{err}");
    drop(crate::db::open(&path).unwrap());
    // a pointer view or macro replaced: refused on read, re-created by a writing open
    for (replace, want) in [
        (
            "create or replace view split_counts as select 'fake' as org, 999 as n",
            "view split_counts in this file was changed outside sphragis: it should select from split_counts_v1",
        ),
        (
            "create or replace macro sft_budget_at(grad_accums, step_counts) as table select 1 as passes",
            "macro sft_budget_at in this file was changed outside sphragis: it should select from sft_budget_at_v2",
        ),
    ] {
        Connection::open(&path).unwrap().execute_batch(replace).unwrap();
        let err = format!("{:#}", crate::db::open_read_only(&path).unwrap_err());
        assert!(err.contains(want), "{err}");
        drop(crate::db::open(&path).unwrap());
        let conn = crate::db::open_read_only(&path).unwrap();
        let rows: i64 = conn.query_row("select count(*) from split_counts", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 0, "split_counts reads split_counts_v1 again (no splits in this file)");
    }
    // the same macro body with its parameters swapped: the stored definition is the
    // same text, the figures are not (grad_accums read as step counts)
    let body = |conn: &Connection, name: &str| -> String {
        conn.query_row(
            "select macro_definition from duckdb_functions() where function_name = ? and database_name = current_database()",
            [name],
            |r| r.get(0),
        )
        .unwrap()
    };
    for (name, params, want) in [
        (
            "sft_budget_at_v1",
            "step_counts integer[], grad_accums integer[]",
            "macro sft_budget_at_v1 in this file was changed outside sphragis: its parameters are (step_counts, grad_accums), sphragis created it from sql/pools/sft_budget_at_v1.sql with (grad_accums, step_counts)",
        ),
        ("sft_budget_at", "step_counts, grad_accums", "macro sft_budget_at in this file was changed outside sphragis"),
    ] {
        let stock = Connection::open(&path).unwrap();
        let sql = body(&stock, name);
        stock.execute_batch(&format!("create or replace macro {name}({params}) as table {sql}")).unwrap();
        assert_eq!(body(&stock, name), sql, "same definition text");
        drop(stock);
        let err = format!("{:#}", crate::db::open_read_only(&path).unwrap_err());
        assert!(err.contains(want), "{err}");
        drop(crate::db::open(&path).unwrap());
        assert!(crate::db::open_read_only(&path).is_ok(), "{name} re-created by a writing open");
    }
    // a macro of the file named like a DuckDB or sphragis function replaces it
    // everywhere (count(*) answered 7 per row): refused on read and on write
    for (create, name) in [
        ("create macro list_sum(x) as 0", "list_sum"),
        ("create macro sph_dedup_key(a, b) as 'k'", "sph_dedup_key"),
        // and one that would break the catalogue's own queries if they named it bare
        ("create macro string_agg(a, b) as 7", "string_agg"),
    ] {
        refused_until_dropped(&path, create, name, &format!("drop macro \"main\".\"{name}\""));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `create` (a macro shadowing a function) on the file at `path` with a stock
/// connection, checks that reading and writing opens refuse it naming `name` and
/// giving `drop`, then runs that very statement and checks the file opens again.
fn refused_until_dropped(path: &std::path::Path, create: &str, name: &str, drop: &str) {
    Connection::open(path).unwrap().execute_batch(create).unwrap();
    for err in [
        format!("{:#}", crate::db::open_read_only(path).unwrap_err()),
        format!("{:#}", crate::db::open(path).unwrap_err()),
    ] {
        assert!(
            err.contains(&format!("holds a macro named like a DuckDB or sphragis function ({name})")),
            "{create}: {err}"
        );
        assert!(err.contains(&format!("`{drop}`")), "{err}");
    }
    Connection::open(path).unwrap().execute_batch(drop).unwrap();
    assert!(crate::db::open_read_only(path).is_ok(), "{create}");
}

/// DuckDB resolves function names in any case, so a macro `GREATEST` replaces
/// `greatest` in every view (a trained view read as untrained); and a macro `len`
/// replaced the `len` that DuckDB's own macro `array_to_string` calls, which the check
/// itself used: the check blamed an intact sphragis macro and sent the user in a loop.
/// Both are now refused naming the macro and the way out.
#[test]
fn macro_named_like_a_function_in_another_case_or_used_by_a_builtin_macro_is_refused() {
    let (dir, path) = new_file("shadow-case", "s.duckdb");
    // (the statement the message gives must be the one that drops it: quoted and
    // schema-qualified, or it fails on an operator name or finds the built-in first)
    for (create, name, drop) in [
        ("create macro \"GREATEST\"(a, b) as 0", "GREATEST", "drop macro \"main\".\"GREATEST\""),
        ("create macro \"List_Sum\"(x) as 0", "List_Sum", "drop macro \"main\".\"List_Sum\""),
        ("create macro \"LEN\"(x) as 0", "LEN", "drop macro \"main\".\"LEN\""),
        ("create macro len(a, b) as 5", "len", "drop macro \"main\".\"len\""),
        ("create macro \"SPH_Dedup_Key\"(a, b) as 'k'", "SPH_Dedup_Key", "drop macro \"main\".\"SPH_Dedup_Key\""),
        ("create macro \"+\"(a, b) as 42", "+", "drop macro \"main\".\"+\""),
        (
            "create schema other; create macro other.\"GREATEST\"(a, b) as 0",
            "GREATEST",
            "drop macro \"other\".\"GREATEST\"",
        ),
        ("create macro \"RANGE\"(a) as table select 1", "RANGE", "drop macro table \"main\".\"RANGE\""),
    ] {
        refused_until_dropped(&path, create, name, drop);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn views_call_no_sphragis_function() {
    for v in VIEWS {
        assert!(!v.sql.contains("sph_"), "{} calls an sph_ function", v.source);
    }
}

/// A dropped sph_views used to surface as DuckDB's raw catalog error on every
/// command; now every open names the table, why it matters and the ways out.
#[test]
fn dropped_view_records_are_named_with_the_way_out() {
    let (dir, path) = new_file("dropped-records", "d.duckdb");
    Connection::open(&path).unwrap().execute_batch("drop table sph_views").unwrap();
    for err in [
        format!("{:#}", crate::db::open_read_only(&path).unwrap_err()),
        format!("{:#}", crate::db::open(&path).unwrap_err()),
    ] {
        assert!(err.contains("the table sph_views is missing (another client dropped it)"), "{err}");
        assert!(err.contains("listed in its table ingest_log"), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
