//! The verdict view in parts (issue 29): `check_findings_at_v1` unions eight check views,
//! and DuckDB binds and optimizes that union on one thread — on a review database about
//! two thirds of what `sphragis check` costs, and the longest report of `report all`.
//! Its parts are cheaper alone than together (0.55 s for the eight one by one, 0.92 s for
//! the union, on the ×10 review benchmark), and independent, so [`in_parallel`] runs them
//! on worker connections and keeps each part's rows in a temporary table named as its
//! view on the connection that then runs the verdict view as written: DuckDB resolves an
//! unqualified name in the temporary schema first, inside views and table macros too, so
//! the union reads the rows computed a moment before instead of planning each view again.
//!
//! The rows are those of the view run alone (the parts are its own views, run on the same
//! unchanged database); a part that fails, or whose rows hold a type without a plain
//! DuckDB counterpart here, is left to the view, which then computes it (and reports its
//! error) as it always did. Nothing outside this process sees the temporary tables, and
//! [`Shadows`] drops them when it goes out of scope.

use anyhow::{Result, bail};
use duckdb::Connection;
use duckdb::arrow::datatypes::{DataType, SchemaRef};
use duckdb::arrow::record_batch::RecordBatch;

/// The verdict view `sphragis check` and `report checks` read.
pub const VERDICT_VIEW: &str = "check_findings_v1";

/// The check views `check_findings_at_v1` unions, the costliest first (workers take them in
/// this order); the truncation checks are a table macro of the training length and are
/// left to the union. A view listed here that the union does not read costs time, not
/// correctness; one the union reads and this list lacks is computed by the union.
pub const PARTS: [&str; 7] = [
    "check_eval_v1",
    "check_review_v1",
    "check_sft_pools_v1",
    "check_sft_contract_v1",
    "check_sft_packs_v1",
    "check_sft_attempts_v1",
    "check_ingest_v1",
];

/// One part's rows: the Arrow schema and record batches of `select * from <part>`.
pub type Rows = (SchemaRef, Vec<RecordBatch>);

/// The rows of the check view `part`, run on `conn` through one plan
/// ([`crate::db::run_into_temp`]: a prepared statement would be planned twice).
///
/// Errors: DuckDB fails running the view.
pub fn compute(conn: &Connection, part: &str) -> Result<Rows> {
    const ROWS: &str = "sphragis_part";
    crate::db::run_into_temp(conn, ROWS, &format!("select * from main.{part}"))?;
    let rows = (|| -> Result<Rows> {
        let mut stmt = conn.prepare(&format!("select * from temp.main.{ROWS}"))?;
        let arrow = stmt.query_arrow([])?;
        let schema = arrow.get_schema();
        Ok((schema, arrow.collect()))
    })();
    crate::db::drop_temp(conn, ROWS)?;
    rows
}

/// Temporary tables on one connection that stand for check views of the same name; dropped
/// with the value.
pub struct Shadows<'c> {
    conn: &'c Connection,
    names: Vec<&'static str>,
    failed: Vec<&'static str>,
}

impl Shadows<'_> {
    /// The views now answered from their computed rows, in [`PARTS`] order.
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// `error`, the verdict view's, naming the check views that failed alone: DuckDB's
    /// message (a conversion error, say) names no view, and the user's next step is to run
    /// that view by itself. `error` as it is when every part ran.
    pub fn explain(&self, error: anyhow::Error) -> anyhow::Error {
        match self.failed.as_slice() {
            [] => error,
            failed => {
                let names = failed.join(", ");
                error.context(format!(
                    "the check view{} {names} failed (`select * from {}` shows it alone)",
                    if failed.len() == 1 { "" } else { "s" },
                    failed[0]
                ))
            }
        }
    }
}

impl Drop for Shadows<'_> {
    fn drop(&mut self) {
        for name in &self.names {
            // a drop that fails leaves a temporary table that dies with the connection
            let _ = crate::db::drop_temp(self.conn, name);
        }
    }
}

/// Keeps each computed part's rows in a temporary table of the part's name on `conn`. A
/// part whose computation failed, or whose rows hold a column type without a plain DuckDB
/// counterpart here (the check views return text and integers), gets no table: the view
/// answers for it (and a failed part is named by [`Shadows::explain`]).
pub fn shadow<'c>(conn: &'c Connection, computed: Vec<(&'static str, Result<Rows>)>) -> Shadows<'c> {
    let mut shadows = Shadows { conn, names: Vec::new(), failed: Vec::new() };
    for (name, rows) in computed {
        let Ok((schema, batches)) = rows else {
            shadows.failed.push(name);
            continue;
        };
        if keep(conn, name, &schema, batches).is_ok() {
            shadows.names.push(name);
        } else {
            let _ = crate::db::drop_temp(conn, name);
        }
    }
    shadows
}

/// Makes `temp.main.<name>` with `schema`'s columns and appends `batches` to it.
fn keep(conn: &Connection, name: &str, schema: &SchemaRef, batches: Vec<RecordBatch>) -> Result<()> {
    let mut columns = Vec::new();
    for field in schema.fields() {
        let Some(ty) = duckdb_type(field.data_type()) else {
            bail!("column {} of {name}: no plain DuckDB type for {}", field.name(), field.data_type());
        };
        columns.push(format!("{} {ty}", crate::db::identifier(field.name())));
    }
    conn.execute_batch(&format!("create or replace temporary table {name} ({})", columns.join(", ")))?;
    let mut appender = conn.appender_to_catalog_and_db(name, "temp", "main")?;
    for batch in batches {
        appender.append_record_batch(batch)?;
    }
    appender.flush()?;
    Ok(())
}

/// The DuckDB type an Arrow column of the check views came from.
fn duckdb_type(ty: &DataType) -> Option<&'static str> {
    Some(match ty {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "varchar",
        DataType::Int64 => "bigint",
        DataType::Int32 => "integer",
        DataType::Float64 => "double",
        DataType::Boolean => "boolean",
        _ => return None,
    })
}

/// Computes every part of [`PARTS`] on worker connections ([`crate::db::on_workers`]) and
/// keeps their rows on `conn` ([`shadow`]). Run the verdict view on `conn` while the
/// returned value lives.
///
/// Errors: a worker connection cannot be made (a part that fails is left to the view).
pub fn in_parallel(conn: &Connection) -> Result<Shadows<'_>> {
    let computed = crate::db::on_workers(conn, PARTS.len(), |worker, i| compute(worker, PARTS[i]))?;
    Ok(shadow(conn, PARTS.into_iter().zip(computed).collect()))
}
