//! Every view names its grain key in its header (`-- Grain key: a, b.` or `-- Grain key:
//! none (one row).`), and the key holds: on the demo database, no two rows of a view share
//! it (issue 16, after jaffle-shop's tested grain). Macros are checked through their grid
//! views.

use std::path::{Path, PathBuf};
use std::process::Command;

fn demo_db() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-grain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples");
    let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .args(["demo", "--quiet", "--samples", samples.to_str().unwrap()])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.join("sphragis-demo.duckdb")
}

/// The key columns a header declares: `Some(vec![])` for "none (one row)".
fn grain_key(sql: &str) -> Option<Vec<String>> {
    let line = sql.lines().find_map(|l| l.strip_prefix("-- Grain key:"))?.trim().trim_end_matches('.');
    if line.starts_with("none") {
        return Some(Vec::new());
    }
    Some(line.split(',').map(|c| c.trim().to_string()).collect())
}

#[test]
fn every_view_declares_a_grain_key_that_is_unique_on_the_demo_database() {
    let db = demo_db();
    let conn = sphragis::db::open_read_only(&db).unwrap();
    let mut checked = 0;
    let mut with_rows_to_compare = 0;
    for file in sphragis::db::views::VIEWS {
        let key =
            grain_key(file.sql).unwrap_or_else(|| panic!("{}: no `-- Grain key:` line in its header", file.source));
        if file.kind != sphragis::db::views::SqlKind::View {
            continue;
        }
        let name = Path::new(file.source).file_stem().unwrap().to_str().unwrap();
        let (rows, distinct): (i64, i64) = if key.is_empty() {
            let rows: i64 = conn.query_row(&format!("select count(*) from {name}"), [], |r| r.get(0)).unwrap();
            (rows, rows.min(1))
        } else {
            let cols = key.join(", ");
            conn.query_row(
                &format!(
                    "select (select count(*) from {name}), (select count(*) from (select distinct {cols} from {name}))"
                ),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap_or_else(|e| panic!("{}: grain key ({cols}): {e}", file.source))
        };
        assert_eq!(rows, distinct, "{}: {rows} rows but {distinct} distinct grain keys {key:?}", file.source);
        checked += 1;
        with_rows_to_compare += usize::from(rows >= 2);
    }
    assert!(checked >= 40, "only {checked} views checked");
    // the check means something only where a view has rows to tell apart
    assert!(with_rows_to_compare >= 35, "only {with_rows_to_compare} views have two rows or more on the demo");
    let _ = std::fs::remove_dir_all(db.parent().unwrap());
}

#[test]
fn grain_key_lines_parse() {
    assert_eq!(grain_key("-- x\n-- Grain key: version, org.\n"), Some(vec!["version".to_string(), "org".to_string()]));
    assert_eq!(grain_key("-- Grain key: none (one row).\n"), Some(vec![]));
    assert_eq!(grain_key("-- Grain: one row per org\n"), None);
}
