//! The view catalogue, `docs/views.md`, generated from the SQL files themselves (issue 30):
//! every registered view and table macro with its header comment (what it counts, its
//! grain, its columns), its SHA-256 and whether the release lock holds it, so the catalogue
//! cannot drift from the SQL. `tests/docs.rs` fails when the file is stale and rewrites it
//! with `SPHRAGIS_BLESS=1`.

use super::views::{SqlKind, VIEWS, ViewFile};

/// The release lock, `sql/released.sha256` (`<sha256>  <path>` per line).
const RELEASED: &str = include_str!("../../sql/released.sha256");

/// The header comment of a SQL file: its leading `--` lines with the `-- ` taken off (a
/// macro's `create` line ends it as any other statement does).
pub fn header(view: &ViewFile) -> Vec<&'static str> {
    view.sql
        .lines()
        .take_while(|l| l.starts_with("--"))
        .map(|l| l.strip_prefix("-- ").or_else(|| l.strip_prefix("--")).unwrap_or(l))
        .collect()
}

/// What the file's header says first: its first line after the `name:` or `name(args):`
/// that opens it (the whole first line when it has none).
pub fn summary(view: &ViewFile) -> String {
    let first = header(view).first().copied().unwrap_or("");
    let text = match first.split_once(": ") {
        Some((name, rest)) if name.starts_with(view.name()) => rest,
        _ => first,
    };
    text.replace('|', "\\|")
}

/// Whether `view`'s file is in the release lock with its current bytes.
pub fn released(view: &ViewFile) -> bool {
    let sha = view.sha256();
    RELEASED.lines().any(|l| l.split_once("  ").is_some_and(|(hex, path)| path == view.source && hex == sha))
}

/// `docs/views.md`: an index (name, kind, released, what it counts) by folder of `sql/`, then
/// each file's header comment, SHA-256 and path, in registration order.
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("# View catalogue\n\n");
    out.push_str(
        "Every view and table macro sphragis registers, generated from the header comments of the \
         files in `sql/` (src/db/catalogue.rs; `SPHRAGIS_BLESS=1 cargo test --release --test docs` \
         rewrites this file, and the test fails when it is stale). *Released* means the file is in \
         `sql/released.sha256` with these bytes: it never changes again (a change of meaning is a \
         new `_v<N+1>`). *Spark* is what the parity check proved on the demo export \
         (src/db/spark_views.json, docs/spark.md): `portable` when the view's Spark SQL gave \
         the same rows, `no` with the reason below, `not checked` when the table was \
         generated from other SQL.\n\n",
    );
    out.push_str(&format!("{} views and macros.\n\n", VIEWS.len()));
    let folder = |v: &ViewFile| v.source.split('/').nth(1).unwrap_or("").to_string();
    let mut folders: Vec<String> = Vec::new();
    for v in VIEWS {
        let f = folder(v);
        if !folders.contains(&f) {
            folders.push(f);
        }
    }
    for f in &folders {
        out.push_str(&format!(
            "## sql/{f}/\n\n| name | kind | released | Spark | what it gives |\n|---|---|---|---|---|\n"
        ));
        for v in VIEWS.iter().filter(|v| folder(v) == *f) {
            out.push_str(&format!(
                "| [`{name}`](#{name}) | {kind} | {released} | {spark} | {summary} |\n",
                name = v.name(),
                kind = kind(v),
                released = if released(v) { "yes" } else { "no" },
                spark = spark_word(&spark(v)),
                summary = summary(v)
            ));
        }
        out.push('\n');
    }
    for v in VIEWS {
        out.push_str(&format!("### {}\n\n", v.name()));
        out.push_str(&format!(
            "{} · `{}` · SHA-256 `{}` · {}\n\n",
            kind(v),
            v.source,
            v.sha256(),
            if released(v) { "released" } else { "not released yet" }
        ));
        out.push_str("```text\n");
        for line in header(v) {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push_str("```\n\n");
        let spark = spark(v);
        match (spark_word(&spark), &spark.reason) {
            ("portable", _) => out.push_str("Spark: portable (the same rows on Spark as on DuckDB).\n\n"),
            (word, reason) => out.push_str(&format!(
                "Spark: {word}: {}\n\n",
                reason.as_deref().unwrap_or("no Spark SQL recorded").replace('\n', " ")
            )),
        }
    }
    out
}

/// The view's entry in the generated Spark table, for the SQL this binary holds.
fn spark(v: &ViewFile) -> super::spark::SparkSql {
    super::spark::lookup(v.name(), &v.sha256(), v.kind)
}

/// `portable`, `no` or `not checked` (a table generated from other SQL, or none).
fn spark_word(s: &super::spark::SparkSql) -> &'static str {
    match &s.reason {
        None if s.portable => "portable",
        Some(r) if r.starts_with("not checked") => "not checked",
        _ => "no",
    }
}

fn kind(v: &ViewFile) -> &'static str {
    match v.kind {
        SqlKind::View => "view",
        SqlKind::Macro => "table macro",
    }
}
