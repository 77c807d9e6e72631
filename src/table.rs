//! A query's result as typed cells, with the stamp of what produced its rows.
//!
//! The layer below reports, checks and `show`: [`query`] runs SQL through Arrow into a
//! [`ReportTable`] of [`Cell`]s; [`crate::report`] binds names to versioned views, stamps
//! the tables it runs and renders them. Kept apart so that the check layer and the mask
//! viewer can query without depending on the report layer that presents them.

use crate::db::views::SqlKind;
use anyhow::{Context, Result, bail};
use duckdb::Connection;

/// One cell of a result, typed enough for JSON; everything else is formatted text.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Text(String),
    /// A list column's value (e.g. `pools`): a JSON array in JSON, `[a, b]` in text.
    List(Vec<Cell>),
    /// A struct value (e.g. a comment `{comment_id, author_id, created_at, message}` of a
    /// split example's `prompt`): its fields in order, a JSON object in JSON; in text,
    /// `text`, as Arrow formats it (`{comment_id: c1, author_id: 7, …}`).
    Struct {
        fields: Vec<(String, Cell)>,
        text: String,
    },
}

/// Where a table's rows came from: the view or table macro, its SHA-256, the arguments
/// and filter it was run with, and the exact SQL that produced the rows. A stock DuckDB
/// client that runs [`Stamp::query`] on the same file gets the same rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamp {
    /// View or table macro.
    pub kind: SqlKind,
    /// The versioned name, e.g. `refine_removals_v1` or `sft_budget_at_v1`.
    pub name: String,
    /// SHA-256 of its SQL file (CRLF → LF), as recorded in `sph_views`.
    pub sha256: String,
    /// A macro's arguments as SQL literals in parameter order, e.g. `[8], [500]`.
    pub arguments: Option<String>,
    /// The row filter applied, e.g. `version = 'v3'`.
    pub filter: Option<String>,
    /// The statement that produced the rows, e.g.
    /// `select * from refine_removals_v1 where version = 'v3' order by all`.
    pub query: String,
}

/// The result of running a report: the rows with their provenance.
///
/// A table built by [`run`] or [`run_with`] carries a [`Stamp`] and its rows are exactly
/// what the stamp's query returned; a table from [`query`] (ad-hoc SQL) has none and
/// cannot be written as a report file.
#[derive(Debug, Clone)]
pub struct ReportTable {
    pub report: String,
    pub about: String,
    /// `None` for ad-hoc queries.
    pub stamp: Option<Stamp>,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// A SQL string literal: `'` doubled.
pub fn sql_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Runs a query with string parameters and collects its result through Arrow, so every
/// DuckDB type renders (nested types, blobs and intervals as Arrow formats them).
///
/// Errors: an empty query, or DuckDB rejects it.
pub fn query(conn: &Connection, sql: &str, params: &[&str]) -> Result<ReportTable> {
    if sql.trim().is_empty() {
        bail!("the query is empty");
    }
    let mut stmt = conn.prepare(sql)?;
    let arrow = stmt.query_arrow(duckdb::params_from_iter(params.iter()))?;
    let schema = arrow.get_schema();
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut rows = Vec::new();
    for batch in arrow {
        for r in 0..batch.num_rows() {
            let row = batch
                .columns()
                .iter()
                .zip(&columns)
                .map(|(array, name)| {
                    cell_at(array.as_ref(), r)
                        .with_context(|| format!("row {}, column {name}: the value cannot be shown", rows.len() + 1))
                })
                .collect::<Result<Vec<_>>>()?;
            rows.push(row);
        }
    }
    Ok(ReportTable { report: String::new(), about: String::new(), stamp: None, columns, rows })
}

/// [`query`] without parameters, with the statement planned once ([`crate::db::run_into_temp`]):
/// the same columns, rows and order. A statement that cannot be the query of a
/// `create table ... as` (a `pragma`, `describe`) is run by [`query`], so its rows, or
/// DuckDB's error for it, are what [`query`] gives; so is one whose columns came back
/// as DuckDB renames duplicate names (`a`, `a_1`: planned twice, a rare cost).
///
/// Errors: as [`query`].
pub fn query_planned_once(conn: &Connection, sql: &str) -> Result<ReportTable> {
    const ROWS: &str = "sphragis_rows";
    if sql.trim().is_empty() || crate::db::run_into_temp(conn, ROWS, sql).is_err() {
        return query(conn, sql, &[]);
    }
    let table = query(conn, &format!("select * from temp.main.{ROWS}"), &[]);
    crate::db::drop_temp(conn, ROWS)?;
    match table {
        // a table cannot have two columns of one name: DuckDB renamed the second `a` to
        // `a_1`, so the names are not the query's; run it as it is to keep them
        Ok(t) if renamed_duplicate(&t.columns) => query(conn, sql, &[]),
        other => other,
    }
}

/// Whether `columns` hold a name `<c>_<digits>` beside a column `<c>`: how DuckDB names a
/// duplicate column when it makes a table of a query with two columns of one name.
fn renamed_duplicate(columns: &[String]) -> bool {
    columns.iter().any(|c| {
        c.rsplit_once('_').is_some_and(|(base, n)| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && columns.iter().any(|o| o == base)
        })
    })
}

/// The cell at row `r` of an Arrow column: booleans, integers (DuckDB's HUGEINT sums,
/// carried as scale-0 decimals, when they fit in 64 bits), floats and strings typed;
/// lists (DuckDB `LIST`, e.g. `pools`) as [`Cell::List`] of their elements; structs as
/// [`Cell::Struct`] of their fields; every other type (timestamps, decimals, blobs,
/// intervals) as the text Arrow formats.
fn cell_at(array: &dyn duckdb::arrow::array::Array, r: usize) -> Result<Cell> {
    use duckdb::arrow::array::AsArray;
    use duckdb::arrow::datatypes::{
        DataType, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
        UInt16Type, UInt32Type, UInt64Type,
    };
    if array.is_null(r) || *array.data_type() == DataType::Null {
        return Ok(Cell::Null);
    }
    Ok(match array.data_type() {
        DataType::Boolean => Cell::Bool(array.as_boolean().value(r)),
        DataType::Int8 => Cell::Int(array.as_primitive::<Int8Type>().value(r).into()),
        DataType::Int16 => Cell::Int(array.as_primitive::<Int16Type>().value(r).into()),
        DataType::Int32 => Cell::Int(array.as_primitive::<Int32Type>().value(r).into()),
        DataType::Int64 => Cell::Int(array.as_primitive::<Int64Type>().value(r)),
        DataType::UInt8 => Cell::UInt(array.as_primitive::<UInt8Type>().value(r).into()),
        DataType::UInt16 => Cell::UInt(array.as_primitive::<UInt16Type>().value(r).into()),
        DataType::UInt32 => Cell::UInt(array.as_primitive::<UInt32Type>().value(r).into()),
        DataType::UInt64 => Cell::UInt(array.as_primitive::<UInt64Type>().value(r)),
        DataType::Float32 => Cell::Float(array.as_primitive::<Float32Type>().value(r).into()),
        DataType::Float64 => Cell::Float(array.as_primitive::<Float64Type>().value(r)),
        DataType::Utf8 => Cell::Text(array.as_string::<i32>().value(r).to_string()),
        DataType::LargeUtf8 => Cell::Text(array.as_string::<i64>().value(r).to_string()),
        DataType::Utf8View => Cell::Text(array.as_string_view().value(r).to_string()),
        DataType::Decimal128(_, 0) => {
            let v = array.as_primitive::<Decimal128Type>().value(r);
            i64::try_from(v).map_or_else(|_| Cell::Text(v.to_string()), Cell::Int)
        }
        DataType::List(_) => {
            let items = array.as_list::<i32>().value(r);
            Cell::List((0..items.len()).map(|i| cell_at(items.as_ref(), i)).collect::<Result<_>>()?)
        }
        DataType::LargeList(_) => {
            let items = array.as_list::<i64>().value(r);
            Cell::List((0..items.len()).map(|i| cell_at(items.as_ref(), i)).collect::<Result<_>>()?)
        }
        DataType::Struct(_) => {
            let s = array.as_struct();
            let fields = s
                .column_names()
                .into_iter()
                .zip(s.columns())
                .map(|(name, column)| Ok((name.to_string(), cell_at(column.as_ref(), r)?)))
                .collect::<Result<_>>()?;
            Cell::Struct { fields, text: formatted(array, r)? }
        }
        DataType::Timestamp(unit, None) => {
            use duckdb::arrow::datatypes::{
                TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
                TimestampSecondType,
            };
            use duckdb::arrow::temporal_conversions::as_datetime;
            let at = match unit {
                TimeUnit::Second => {
                    as_datetime::<TimestampSecondType>(array.as_primitive::<TimestampSecondType>().value(r))
                }
                TimeUnit::Millisecond => {
                    as_datetime::<TimestampMillisecondType>(array.as_primitive::<TimestampMillisecondType>().value(r))
                }
                TimeUnit::Microsecond => {
                    as_datetime::<TimestampMicrosecondType>(array.as_primitive::<TimestampMicrosecondType>().value(r))
                }
                TimeUnit::Nanosecond => {
                    as_datetime::<TimestampNanosecondType>(array.as_primitive::<TimestampNanosecondType>().value(r))
                }
            };
            match at {
                Some(at) => Cell::Text(iso_timestamp(at)),
                None => Cell::Text(formatted(array, r)?),
            }
        }
        _ => Cell::Text(formatted(array, r)?),
    })
}

/// The text Arrow formats of row `r`. A value Arrow cannot format (a timestamp beyond
/// chrono's range) is an error: Arrow's default writes `ERROR: Cast error: …` as the
/// cell's text, which was printed as data with exit 0.
fn formatted(array: &dyn duckdb::arrow::array::Array, r: usize) -> Result<String> {
    use duckdb::arrow::util::display::{ArrayFormatter, FormatOptions};
    Ok(ArrayFormatter::try_new(array, &FormatOptions::default().with_display_error(false))?.value(r).try_to_string()?)
}

/// A timestamp without time zone in ISO 8601 form, the way Python's
/// `datetime.isoformat()` writes it (so a stock DuckDB client's value compares as text):
/// no fraction when it is a whole second, six digits when it is whole microseconds, nine
/// otherwise. Arrow's own formatter picks 3, 6 or 9 digits, so `.100000` came out as `.100`.
fn iso_timestamp(at: chrono::NaiveDateTime) -> String {
    use chrono::Timelike;
    let nanos = at.nanosecond();
    let format = match nanos {
        0 => "%Y-%m-%dT%H:%M:%S",
        n if n % 1000 == 0 => "%Y-%m-%dT%H:%M:%S%.6f",
        _ => "%Y-%m-%dT%H:%M:%S%.9f",
    };
    at.format(format).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::text;

    /// Hostile input D6: a timestamp Arrow cannot format came back as the text
    /// `ERROR: Cast error: …` inside the result, printed as data with exit 0. It is an
    /// error naming the row and column; a value beside it is not printed as if all went well.
    #[test]
    fn cell_that_cannot_be_shown_is_an_error_not_data() {
        let conn = Connection::open_in_memory().unwrap();
        let err = query(&conn, "select 1 as n, make_timestamp(9223372036854000000::bigint) as created_at", &[])
            .map(|t| format!("{:?}", t.rows))
            .unwrap_err();
        let text = format!("{err:#}");
        assert!(text.starts_with("row 1, column created_at: the value cannot be shown: "), "{text}");
        assert!(!text.contains("ERROR:"), "{text}");
        let t = query(&conn, "select make_timestamp(1700000000000000::bigint) as t", &[]).unwrap();
        assert_eq!(text_of(&t), ["2023-11-14T22:13:20"]);
    }

    fn text_of(t: &ReportTable) -> Vec<String> {
        t.rows[0].iter().map(text).collect()
    }

    /// The fault behind a red CI: Arrow wrote `.100000` as `.100`, so a stamp's timestamp
    /// differed from the one a stock client reads 1 time in 1,000. Expected values are
    /// Python's `datetime(...).isoformat()` of each instant.
    #[test]
    fn timestamp_precision_is_isoformat_not_arrow_auto() {
        let conn = Connection::open_in_memory().unwrap();
        let t = query(
            &conn,
            "select timestamp '2026-12-03 14:19:54.100000' as milli, timestamp '2026-12-03 14:19:54' as whole, \
             timestamp '2026-12-03 14:19:54.000010' as micro, timestamp '1969-12-31 23:59:59.5' as before_epoch, \
             timestamp_ns '2026-12-03 14:19:54.123456789' as nano, timestamp_ms '2026-12-03 14:19:54.120' as ms",
            &[],
        )
        .unwrap();
        let texts: Vec<String> = t.rows[0].iter().map(text).collect();
        assert_eq!(
            texts,
            [
                "2026-12-03T14:19:54.100000",
                "2026-12-03T14:19:54",
                "2026-12-03T14:19:54.000010",
                "1969-12-31T23:59:59.500000",
                "2026-12-03T14:19:54.123456789",
                "2026-12-03T14:19:54.120000"
            ]
        );
    }

    /// Issue 29: reports run through one plan ([`query_planned_once`]) must return what the
    /// prepared query returns — columns, types as shown, rows and their order (here 10,000
    /// rows sorted descending, so an order lost in the temporary table shows), nested and
    /// null values — and leave no temporary table behind.
    #[test]
    fn a_query_planned_once_returns_what_the_prepared_query_returns() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "create table t as select i, 'r' || i as label, case when i % 7 = 0 then null else [i, i + 1] end as pair, \
             i / 3 as third from range(10000) r(i)",
        )
        .unwrap();
        let sql = "select third, label, pair, i::double / 8 as eighth from t order by i desc";
        let (once, prepared) = (query_planned_once(&conn, sql).unwrap(), query(&conn, sql, &[]).unwrap());
        assert_eq!(once.columns, ["third", "label", "pair", "eighth"]);
        assert_eq!(once.columns, prepared.columns);
        assert_eq!(once.rows, prepared.rows);
        assert_eq!(once.rows.len(), 10_000);
        assert_eq!(once.rows[0][1], Cell::Text("r9999".into()));
        assert_eq!(once.rows[9999][2], Cell::Null);
        assert_eq!(once.rows[9998][2], Cell::List(vec![Cell::Int(1), Cell::Int(2)]));
        let left: i64 =
            conn.query_row("select count(*) from duckdb_tables() where temporary", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0, "the temporary table is dropped");
    }

    /// What cannot be the query of a `create table ... as` runs as [`query`] runs it: a
    /// pragma's rows, duplicate column names kept, DuckDB's own error for a bad query.
    #[test]
    fn a_statement_that_is_not_a_plain_query_runs_as_prepared() {
        let conn = Connection::open_in_memory().unwrap();
        let dup = query_planned_once(&conn, "select 1 as a, 2 as a").unwrap();
        assert_eq!(dup.columns, ["a", "a"]);
        assert_eq!(dup.rows, [[Cell::Int(1), Cell::Int(2)]]);
        let (three, named) =
            (query_planned_once(&conn, "select 1 as a, 2 as a, 3 as a").unwrap(), "select 1 as a, 2 as a_1");
        assert_eq!(three.columns, ["a", "a", "a"]);
        assert_eq!(query_planned_once(&conn, named).unwrap().columns, ["a", "a_1"]);
        assert!(renamed_duplicate(&["a".into(), "a_1".into()]) && !renamed_duplicate(&["a_1".into(), "b".into()]));
        let version = query_planned_once(&conn, "pragma version").unwrap();
        assert_eq!(version.rows, query(&conn, "pragma version", &[]).unwrap().rows);
        let once = query_planned_once(&conn, "select * from no_such_table").unwrap_err().to_string();
        let prepared = query(&conn, "select * from no_such_table", &[]).unwrap_err().to_string();
        assert_eq!(once, prepared);
        assert!(once.contains("no_such_table"), "{once}");
    }
}
