//! Views over empty tables, computed once per connection (issue 29).
//!
//! DuckDB binds a view's body, and the body of every view it reads, each time a query names
//! it, and binding costs as much over empty tables as over full ones. On a review database
//! 44 of the 58 reports of `report all` read SFT or evaluation views whose tables are
//! empty. On an empty database, the queries of `report all` took 0.98-1.08 s on one
//! connection, and 0.61-0.69 s when the 33 views that two or more of them read were
//! computed first (0.20-0.23 s of it computing them); on the ×10 review database 0.81-0.89
//! s and 0.59-0.62 s with 21 views computed (Python duckdb 2.0.0, docs/benchmarks.md).
//!
//! [`over_empty_tables`] picks, for the queries about to run, the views that at least two
//! of them read (directly, or through views and macros) and whose every base table is
//! empty. [`compute`] keeps each one's rows in a temporary table of its name on one
//! connection, in creation order, so a later one reads the earlier ones' rows. DuckDB
//! resolves an unqualified name in the temporary schema first, inside views and macros
//! too, so the queries then run on that connection read those rows instead of binding
//! the views again (the same mechanism as `check::parts`).
//!
//! The rows are the view's, on the same unchanged database (the queries that read them run
//! in the same process, on a database no other process writes while it is open), in the
//! view's column names and types (`create table ... as` keeps DuckDB's types, a bare
//! `null` column's too); the test `reports_over_empty_corpora_are_those_run_alone` compares
//! every report's cells with the report run alone, on databases of each area. A view whose
//! rows exceed [`MAX_ROWS`] gets no table and answers for itself, as it would without this
//! module. Nothing outside the connection sees the tables, and [`Computed`] drops them when
//! it goes out of scope. (Checking each table's column types against its view's at run time
//! was tried and dropped: `duckdb_columns()` binds every pointer view created with deferred
//! binding, 0.14 s on its first call in a process.)
//!
//! Which names a view reads is found by scanning its SQL ([`references`]) — words outside
//! comments and string literals that name a table or an earlier view or macro — and the
//! test `db::empty::tests::references_are_those_duckdb_parses` holds that scan to the
//! tables and table functions DuckDB's own parser (`json_serialize_sql`) finds in every
//! registered file.

use super::views::{SqlKind, VIEWS};
use anyhow::Result;
use duckdb::Connection;
use std::collections::{BTreeSet, HashMap, HashSet};

/// A view over empty tables that returns more rows than this is left to answer for itself
/// (none of sphragis' views does: over empty tables they return no rows, or one row of
/// zeros per group of a fixed list).
pub const MAX_ROWS: usize = 10_000;

/// The lowercase names `sql` mentions outside `--` and `/* */` comments and `'...'` string
/// literals: bare words, and double-quoted identifiers with `""` read as `"`. A name that
/// is neither a table nor a view is among them too (columns, functions, keywords); callers
/// keep those they know.
pub fn references(sql: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '-' if sql[i..].starts_with("--") => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if sql[i..].starts_with("/*") => {
                chars.next();
                let mut last = ' ';
                for (_, c) in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '\'' | '"' => {
                let mut word = String::new();
                loop {
                    match chars.next() {
                        None => break,
                        Some((_, q)) if q == c => {
                            if chars.peek().is_some_and(|&(_, n)| n == c) {
                                chars.next();
                                word.push(c);
                            } else {
                                break;
                            }
                        }
                        Some((_, other)) => word.push(other),
                    }
                }
                if c == '"' {
                    names.insert(word.to_lowercase());
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, n)) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        end = j + n.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                names.insert(sql[i..end].to_ascii_lowercase());
            }
            c if c.is_ascii_digit() => {
                // a number, or a word that starts with digits: never a name sphragis uses
                while chars.peek().is_some_and(|&(_, n)| n.is_ascii_alphanumeric() || n == '_') {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    names
}

/// What each registered view or macro reads: its index in [`VIEWS`] → the indexes of the
/// earlier views and macros it names, and the base tables (of `tables`) it names.
struct Graph {
    reads: Vec<(Vec<usize>, Vec<String>)>,
    index: HashMap<&'static str, usize>,
}

impl Graph {
    fn new(tables: &HashSet<String>) -> Graph {
        let index: HashMap<&'static str, usize> = VIEWS.iter().enumerate().map(|(i, v)| (v.name(), i)).collect();
        let reads = VIEWS
            .iter()
            .enumerate()
            .map(|(i, view)| {
                let mut earlier = Vec::new();
                let mut base = Vec::new();
                for name in references(view.sql) {
                    match index.get(name.as_str()) {
                        Some(&j) if j < i => earlier.push(j),
                        Some(_) => {}
                        None if tables.contains(&name) => base.push(name),
                        None => {}
                    }
                }
                (earlier, base)
            })
            .collect();
        Graph { reads, index }
    }

    /// `i` and every view or macro it reads, directly or not.
    fn closure(&self, i: usize) -> BTreeSet<usize> {
        let mut seen = BTreeSet::from([i]);
        let mut todo = vec![i];
        while let Some(j) = todo.pop() {
            for &k in &self.reads[j].0 {
                if seen.insert(k) {
                    todo.push(k);
                }
            }
        }
        seen
    }
}

/// The views, in creation order, that at least two of `roots` (names of registered views or
/// macros about to be queried on one connection) read, counting a root as reading itself,
/// and whose base tables — those of the view and of every view and macro it reads — are at
/// least one and all empty in `conn`'s database. Names that are not registered are ignored.
///
/// Cost: one query listing the tables and one telling which are empty.
///
/// Errors: DuckDB fails listing the tables or reading one.
pub fn over_empty_tables(conn: &Connection, roots: &[&str]) -> Result<Vec<&'static str>> {
    let tables: HashSet<String> = {
        let mut stmt = conn.prepare(
            "select table_name from duckdb_tables() where database_name = current_database() and schema_name = 'main'",
        )?;
        stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<duckdb::Result<_>>()?
    };
    let graph = Graph::new(&tables);
    let mut readers = vec![0usize; VIEWS.len()];
    for root in roots {
        if let Some(&i) = graph.index.get(root) {
            for j in graph.closure(i) {
                readers[j] += 1;
            }
        }
    }
    let shared: Vec<(usize, BTreeSet<&str>)> = (0..VIEWS.len())
        .filter(|&i| readers[i] >= 2 && VIEWS[i].kind == SqlKind::View)
        .map(|i| {
            (
                i,
                graph
                    .closure(i)
                    .into_iter()
                    .flat_map(|j| graph.reads[j].1.iter().map(String::as_str))
                    .collect::<BTreeSet<&str>>(),
            )
        })
        .filter(|(_, base)| !base.is_empty())
        .collect();
    let read: BTreeSet<&str> = shared.iter().flat_map(|(_, base)| base.iter().copied()).collect();
    if read.is_empty() {
        return Ok(Vec::new());
    }
    // one row per empty table: its position in `read`
    let read: Vec<&str> = read.into_iter().collect();
    let probes: Vec<String> = read
        .iter()
        .enumerate()
        .map(|(i, t)| format!("select {i} where not exists (select 1 from main.{})", super::identifier(t)))
        .collect();
    let empty: HashSet<&str> = {
        let mut stmt = conn.prepare(&probes.join(" union all "))?;
        let positions = stmt.query_map([], |r| r.get::<_, i64>(0))?.collect::<duckdb::Result<Vec<_>>>()?;
        positions.into_iter().filter_map(|i| read.get(usize::try_from(i).ok()?).copied()).collect()
    };
    Ok(shared
        .into_iter()
        .filter(|(_, base)| base.iter().all(|t| empty.contains(t)))
        .map(|(i, _)| VIEWS[i].name())
        .collect())
}

/// Temporary tables on one connection that stand for views over empty tables; dropped with
/// the value.
pub struct Computed<'c> {
    conn: &'c Connection,
    names: Vec<&'static str>,
}

impl Computed<'_> {
    /// The views now answered from their rows, in creation order.
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }
}

impl Drop for Computed<'_> {
    fn drop(&mut self) {
        for name in self.names.iter().rev() {
            // a drop that fails leaves a temporary table that dies with the connection
            let _ = super::drop_temp(self.conn, name);
        }
    }
}

/// Keeps the rows of each of `views` (from [`over_empty_tables`], in creation order) in a
/// temporary table of its name on `conn`. A view that fails keeps no table and answers for
/// itself (and reports its own error) as it would without this; if any table holds more
/// than [`MAX_ROWS`] rows, none is kept (a later table may have been computed from it).
pub fn compute<'c>(conn: &'c Connection, views: &[&'static str]) -> Computed<'c> {
    let mut computed = Computed { conn, names: Vec::new() };
    for &name in views {
        match super::run_into_temp(conn, name, &format!("select * from main.{name} limit {}", MAX_ROWS + 1)) {
            Ok(()) => computed.names.push(name),
            Err(_) => {
                let _ = super::drop_temp(conn, name);
            }
        }
    }
    if !computed.names.is_empty() && !within_bound(conn, &computed.names).unwrap_or(false) {
        drop(computed);
        return Computed { conn, names: Vec::new() };
    }
    computed
}

/// Whether every `temp.main.<name>` of `names` holds at most [`MAX_ROWS`] rows. One query.
fn within_bound(conn: &Connection, names: &[&str]) -> Result<bool> {
    let counts: Vec<String> =
        names.iter().map(|n| format!("(select count(*) from temp.main.{})", super::identifier(n))).collect();
    let most: i64 = conn.query_row(&format!("select greatest({})", counts.join(", ")), [], |r| r.get(0))?;
    Ok(most <= MAX_ROWS as i64)
}

#[cfg(test)]
mod tests;
