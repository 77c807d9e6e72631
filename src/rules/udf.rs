//! Registration of the rule functions as DuckDB scalar functions.
//!
//! Every function is prefixed `sph_` so it never shadows a DuckDB built-in. They are
//! registered on every connection sphragis opens ([`crate::db::open`]); a stock DuckDB
//! client does not have them, which is why refine also stores their verdicts as plain
//! columns and no view calls them.
//!
//! | function | arguments | returns | rule |
//! |---|---|---|---|
//! | `sph_fence_strict(message)` | VARCHAR | BOOLEAN | [`fence::opens_suggestion_fence`] |
//! | `sph_fence_gerrit(message)` | VARCHAR | BOOLEAN | [`fence::gerrit_has_user_suggestion`] |
//! | `sph_fence_loose(message)` | VARCHAR | BOOLEAN | [`fence::loose_suggestion_fence`] |
//! | `sph_fix_applied(message)` | VARCHAR | BOOLEAN | [`fence::is_fix_applied`] |
//! | `sph_git_history_command(command)` | VARCHAR | BOOLEAN | [`crate::shell::is_git_history_command`] |
//! | `sph_normalize_lines(text)` | VARCHAR | VARCHAR | [`normalize::normalize_lines`] |
//! | `sph_dedup_key(hunk, target)` | VARCHAR, VARCHAR | VARCHAR | [`normalize::dedup_key`] |
//! | `sph_target_in_comment(target, comment, min_chars)` | VARCHAR, VARCHAR, INTEGER | BOOLEAN | [`normalize::target_in_comment`] |
//! | `sph_zlib_ratio(text)` | VARCHAR | DOUBLE | [`compress::zlib_ratio`] (NULL for empty text) |
//!
//! NULL in any argument gives NULL. The adapters never panic: the duckdb crate turns a
//! returned error into a query error.

use super::{compress, fence, normalize};
use duckdb::Connection;
use duckdb::arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int32Array, RecordBatch, StringArray};
use duckdb::arrow::datatypes::DataType;
use duckdb::vscalar::{ArrowFunctionSignature, VArrowScalar};
use std::error::Error;
use std::sync::Arc;

type UdfResult = Result<ArrayRef, Box<dyn Error>>;

fn strings(batch: &RecordBatch, index: usize) -> Result<&StringArray, Box<dyn Error>> {
    batch
        .column(index)
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| format!("argument {} is not VARCHAR", index + 1).into())
}

/// State of a one-argument text predicate: the pure rule function it runs.
#[derive(Clone)]
pub struct TextPredicate(pub fn(&str) -> bool);

impl Default for TextPredicate {
    fn default() -> Self {
        Self(|_| false)
    }
}

/// VARCHAR → BOOLEAN adapter for a [`TextPredicate`].
pub struct PredicateUdf;

impl VArrowScalar for PredicateUdf {
    type State = TextPredicate;

    fn invoke(state: &Self::State, input: RecordBatch) -> UdfResult {
        let text = strings(&input, 0)?;
        let out: BooleanArray = text.iter().map(|v| v.map(state.0)).collect();
        Ok(Arc::new(out))
    }

    fn signatures() -> Vec<ArrowFunctionSignature> {
        vec![ArrowFunctionSignature::exact(vec![DataType::Utf8], DataType::Boolean)]
    }
}

/// `sph_normalize_lines(text) -> VARCHAR`.
pub struct NormalizeLinesUdf;

impl VArrowScalar for NormalizeLinesUdf {
    type State = ();

    fn invoke(_: &(), input: RecordBatch) -> UdfResult {
        let text = strings(&input, 0)?;
        let out: StringArray = text.iter().map(|v| v.map(normalize::normalize_lines)).collect();
        Ok(Arc::new(out))
    }

    fn signatures() -> Vec<ArrowFunctionSignature> {
        vec![ArrowFunctionSignature::exact(vec![DataType::Utf8], DataType::Utf8)]
    }
}

/// `sph_dedup_key(hunk, target) -> VARCHAR`.
pub struct DedupKeyUdf;

impl VArrowScalar for DedupKeyUdf {
    type State = ();

    fn invoke(_: &(), input: RecordBatch) -> UdfResult {
        let hunk = strings(&input, 0)?;
        let target = strings(&input, 1)?;
        let out: StringArray =
            hunk.iter().zip(target.iter()).map(|(h, t)| Some(normalize::dedup_key(h?, t?))).collect();
        Ok(Arc::new(out))
    }

    fn signatures() -> Vec<ArrowFunctionSignature> {
        vec![ArrowFunctionSignature::exact(vec![DataType::Utf8, DataType::Utf8], DataType::Utf8)]
    }
}

/// `sph_target_in_comment(target, comment, min_chars) -> BOOLEAN`.
pub struct TargetInCommentUdf;

impl VArrowScalar for TargetInCommentUdf {
    type State = ();

    fn invoke(_: &(), input: RecordBatch) -> UdfResult {
        let target = strings(&input, 0)?;
        let comment = strings(&input, 1)?;
        let min =
            input.column(2).as_any().downcast_ref::<Int32Array>().ok_or("argument 3 (min_chars) is not INTEGER")?;
        let mut out = Vec::with_capacity(target.len());
        for i in 0..target.len() {
            if target.is_null(i) || comment.is_null(i) || min.is_null(i) {
                out.push(None);
                continue;
            }
            let min_chars = usize::try_from(min.value(i))
                .map_err(|_| format!("min_chars must be 0 or more, got {}", min.value(i)))?;
            out.push(Some(normalize::target_in_comment(target.value(i), comment.value(i), min_chars)));
        }
        Ok(Arc::new(BooleanArray::from(out)))
    }

    fn signatures() -> Vec<ArrowFunctionSignature> {
        vec![ArrowFunctionSignature::exact(vec![DataType::Utf8, DataType::Utf8, DataType::Int32], DataType::Boolean)]
    }
}

/// `sph_zlib_ratio(text) -> DOUBLE`.
pub struct ZlibRatioUdf;

impl VArrowScalar for ZlibRatioUdf {
    type State = ();

    fn invoke(_: &(), input: RecordBatch) -> UdfResult {
        let text = strings(&input, 0)?;
        let out: Float64Array = text.iter().map(|v| v.and_then(compress::zlib_ratio)).collect();
        Ok(Arc::new(out))
    }

    fn signatures() -> Vec<ArrowFunctionSignature> {
        vec![ArrowFunctionSignature::exact(vec![DataType::Utf8], DataType::Float64)]
    }
}

/// A pure rule over one text: true when the rule holds.
pub type Predicate = fn(&str) -> bool;

/// The one-argument predicates, by SQL name.
pub const PREDICATES: &[(&str, Predicate)] = &[
    ("sph_fence_strict", fence::opens_suggestion_fence),
    ("sph_fence_gerrit", fence::gerrit_has_user_suggestion),
    ("sph_fence_loose", fence::loose_suggestion_fence),
    ("sph_fix_applied", fence::is_fix_applied),
    ("sph_git_history_command", crate::shell::is_git_history_command),
];

/// Registers every `sph_` function on `conn`.
///
/// Errors: DuckDB refuses a registration (for example a name already taken on this
/// connection).
pub fn register_all(conn: &Connection) -> duckdb::Result<()> {
    for (name, rule) in PREDICATES {
        conn.register_scalar_function_with_state::<PredicateUdf>(name, &TextPredicate(*rule))?;
    }
    conn.register_scalar_function::<NormalizeLinesUdf>("sph_normalize_lines")?;
    conn.register_scalar_function::<DedupKeyUdf>("sph_dedup_key")?;
    conn.register_scalar_function::<TargetInCommentUdf>("sph_target_in_comment")?;
    conn.register_scalar_function::<ZlibRatioUdf>("sph_zlib_ratio")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        register_all(&conn).unwrap();
        conn
    }

    #[test]
    fn predicates_in_sql_agree_with_rust() {
        let conn = conn();
        let got: (bool, bool, bool, bool) = conn
            .query_row(
                "select sph_fence_strict(m), sph_fence_gerrit(m), sph_fence_loose(m), sph_fix_applied(m) \
                 from (select concat('```suggestion', chr(13), chr(10), 'x', chr(13), chr(10), '```') as m)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(got, (true, false, true, false));
        let fixed: bool = conn.query_row("select sph_fix_applied('  Fix applied.  ')", [], |r| r.get(0)).unwrap();
        assert!(fixed);
    }

    #[test]
    #[allow(clippy::type_complexity)] // one tuple per selected column, read once
    fn null_in_null_out() {
        let conn = conn();
        let row: (Option<bool>, Option<String>, Option<bool>, Option<f64>, Option<String>) = conn
            .query_row(
                "select sph_fence_strict(null), sph_normalize_lines(null), \
                 sph_target_in_comment(null, 'x', 20), sph_zlib_ratio(null), sph_dedup_key('a', null)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .unwrap();
        assert_eq!(row, (None, None, None, None, None));
        let empty: Option<f64> = conn.query_row("select sph_zlib_ratio('')", [], |r| r.get(0)).unwrap();
        assert_eq!(empty, None);
    }

    #[test]
    fn mixed_null_rows_in_one_chunk() {
        let conn = conn();
        let mut stmt = conn
            .prepare(
                "select sph_fence_strict(m) from (values ('```suggestion\nx\n```'), (null), ('plain')) t(m) \
                 order by m nulls last",
            )
            .unwrap();
        let got: Vec<Option<bool>> = stmt.query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
        // '`' sorts before 'p'
        assert_eq!(got, vec![Some(true), Some(false), None]);
    }

    #[test]
    fn target_in_comment_and_normalize_in_sql() {
        let conn = conn();
        let (hit, norm, ratio): (bool, String, f64) = conn
            .query_row(
                "select sph_target_in_comment('  return INVALID_LIST_SIZE;', 'try: return  INVALID_LIST_SIZE; ok', 20), \
                 sph_normalize_lines(concat(' a  b ', chr(13), chr(10), chr(13), chr(10), 'c')), \
                 sph_zlib_ratio(repeat('a', 3000))",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert!(hit);
        assert_eq!(norm, "a b\nc");
        assert!((ratio - 27.0 / 3000.0).abs() < 1e-12);
        let err = conn.query_row("select sph_target_in_comment('a', 'b', -1)", [], |r| r.get::<_, bool>(0));
        assert!(err.unwrap_err().to_string().contains("min_chars"), "negative threshold is an error");
    }
}
