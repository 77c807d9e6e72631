//! The generated documentation stays true to the code (issue 30): `docs/views.md` is
//! generated from the SQL files' header comments (src/db/catalogue.rs) and every registered
//! view carries a header that says what it gives, its grain and its columns.
//! `SPHRAGIS_BLESS=1 cargo test --release --test docs` rewrites a stale docs/views.md.

use std::path::Path;

#[test]
fn docs_views_md_is_generated_from_sql() {
    let want = sphragis::db::catalogue::markdown();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/views.md");
    if std::env::var_os("SPHRAGIS_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "docs/views.md is stale (or missing): run `SPHRAGIS_BLESS=1 cargo test --release --test docs` and commit it"
    );
}

#[test]
fn every_view_has_a_header_with_its_grain_and_columns() {
    for v in sphragis::db::views::VIEWS {
        let header = sphragis::db::catalogue::header(v).join("\n");
        assert!(header.starts_with(v.name()), "{}: the header opens with the view's name", v.source);
        assert!(header.contains("Grain"), "{}: the header states the grain", v.source);
        // two released files (sft_contract_failures_v1, sft_union_runs_v1) name their columns
        // only in their select list; released bytes never change
        if !sphragis::db::catalogue::released(v) {
            assert!(
                header.contains("Columns") || header.contains("column"),
                "{}: the header names the columns",
                v.source
            );
        }
        assert!(!sphragis::db::catalogue::summary(v).trim().is_empty(), "{}: the header says what it gives", v.source);
    }
}

/// The catalogue on a view written for the test's purpose: the summary drops the name, the
/// header keeps its indentation, a released file is one the lock holds with its bytes.
#[test]
fn catalogue_entry_of_a_known_view() {
    let v = sphragis::db::views::find("eval_runs_v3").unwrap();
    assert!(sphragis::db::catalogue::summary(v).starts_with("one row per evaluation run, side by side"));
    let released = sphragis::db::views::find("eval_instances_v1").unwrap();
    assert!(sphragis::db::catalogue::released(released));
    assert!(!sphragis::db::catalogue::released(v));
    let md = sphragis::db::catalogue::markdown();
    assert!(md.contains("### eval_runs_v3\n\nview · `sql/eval/eval_runs_v3.sql` · SHA-256 `"), "the entry");
    assert!(md.contains("\n  graded: resolved + unresolved + empty_patch"), "the header keeps its indentation");
}
