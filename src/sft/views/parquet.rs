//! Views from Parquet (as Hugging Face datasets and training pipelines store tokenized
//! rows): one view line a row, the same columns as the JSON-lines fields
//! (`docs/formats.md`, "views").
//!
//! DuckDB decodes the file ([`crate::ingest::parquet`]); each row becomes the same
//! [`RawView`] a JSON line does and goes through the same [`to_view`] (mask conventions,
//! labels, spans, packing) and the same [`write_file`] (repeated ids, batches, segments),
//! so a Parquet load stores what the JSON-lines load of the same rows stores. The integer
//! list columns (`input_ids`, masks, labels, packing boundaries, `keep_msgs`) are read
//! from Arrow without a JSON round trip, in any integer width, each value narrowed to its
//! stored width as the JSON reader narrows it ([`NarrowInt::misfit`]); the other columns
//! are read as the JSON object DuckDB's `to_json` writes of them, through the JSON
//! reader ([`parse_json_ids`]). Errors name the file, the 1-based row and the column.

use super::narrow::{Narrow, NarrowInt};
use super::{ID_FIELDS, RawView, View, ViewOptions, to_view, write_file};
use crate::ingest::json::parse_json_ids;
use crate::ingest::parquet::{IntLists, IntRow, Staged, ident, name_rows, shards, stage};
use crate::ingest::{InputError, InputKind, LoadOutcome};
use anyhow::Result;
use duckdb::Connection;
use duckdb::arrow::array::{Array, AsArray};
use duckdb::arrow::compute::cast;
use duckdb::arrow::datatypes::{DataType, Int64Type};
use std::path::Path;

/// The integer list columns, read from Arrow: `(column, stored as one byte)`.
const LIST_COLUMNS: &[(&str, bool)] = &[
    ("input_ids", false),
    ("loss_mask", true),
    ("assistant_masks", true),
    ("labels", false),
    ("keep_msgs", false),
    ("seq_lengths", false),
    ("cu_seqlens", false),
    ("cu_seq_lens_q", false),
    ("position_ids", false),
    ("attention_mask", false),
];

/// The other columns a view reads, through the JSON reader.
const JSON_COLUMNS: &[&str] = &[
    "view_id",
    "pool",
    "instance_id",
    "family",
    "labels_shifted",
    "message_spans",
    "span_end",
    "ledger",
    "n_tokens",
    "n_supervised",
    "source_sha256",
    "source_path",
    "origin",
];

/// Loads `arg` (a Parquet file, or a folder or glob of shards) in one transaction, each
/// shard read once, hashed and logged (`load_read_whole`).
pub(super) fn load(
    conn: &Connection,
    arg: &Path,
    options: &ViewOptions,
    progress: &mut dyn FnMut(u64),
    recorded: &str,
) -> Result<Vec<LoadOutcome>> {
    let files = shards(conn, arg)?;
    // DuckDB streams the rows on its own connection while this one appends the views
    let reader = conn.try_clone()?;
    crate::ingest::load_read_whole(
        conn,
        InputKind::Views,
        Some(recorded),
        files.len(),
        |i| stage(&files[i]),
        |conn, file_id, file, staged| {
            let path = &file.path;
            write_file(conn, path, file_id, options, &mut *progress, |each| read(&reader, path, &staged, options, each))
                .map_err(|e| name_rows(path, e))
        },
    )
}

/// DuckDB's memory limit while the Parquet views of `arg` load: [`super::LOAD_MEMORY_LIMIT`]
/// (the transaction's storage spills beyond it, as for JSON lines) plus twice the largest
/// shard's size, because DuckDB's Parquet reader holds a whole column chunk in memory
/// while it decodes it (a file written with one row group holds `input_ids` in one chunk:
/// 549 MiB for the 576 MB x4 seed pools, refused under the 300 MB cap).
pub(super) fn memory_limit(conn: &Connection, arg: &Path) -> Result<String> {
    let largest = shards(conn, arg)?.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).max();
    let base: u64 = super::LOAD_MEMORY_LIMIT.trim_end_matches("MB").parse().expect("a limit in MB");
    Ok(format!("{}MB", base + 2 * largest.unwrap_or(0).div_ceil(1_000_000)))
}

/// A list column's values as `T`, each checked to fit (`column[k]` named otherwise).
fn narrow<T: NarrowInt>(path: &Path, row: u64, column: &str, values: &[i64]) -> Result<Vec<T>, InputError> {
    values
        .iter()
        .enumerate()
        .map(|(k, v)| {
            T::try_from(*v).map_err(|_| {
                InputError::at(path, Some(row), Some(&format!("{column}[{k}]")), T::misfit(Some(i128::from(*v))))
            })
        })
        .collect()
}

/// Reads the views of the staged Parquet file `path` and hands each to `each`, in row
/// order. Returns the number of rows read.
///
/// Errors ([`InputError`] at the row, turned into a row error by the caller): a column
/// of the wrong type (a list column that is not a list of integers, a text column that
/// is not text), a null value in a list, a value that does not fit, no `input_ids`, and
/// everything [`to_view`] refuses; a file without rows.
fn read(
    conn: &Connection,
    path: &Path,
    staged: &Staged,
    options: &ViewOptions,
    each: &mut dyn FnMut(View) -> Result<()>,
) -> Result<u64> {
    let columns = staged.columns(conn, path)?;
    let type_of = |name: &str| columns.iter().find(|(c, _)| c == name).map(|(_, t)| t.clone());
    // the JSON part: the text columns the file has, and an empty input_ids (filled from
    // Arrow) so that the JSON reader's required field is there
    let mut fields: Vec<String> = JSON_COLUMNS
        .iter()
        .filter_map(|c| type_of(c).map(|t| (c, t)))
        .map(|(c, t)| Ok(format!("{} := {}", ident(c), staged.text_expr(conn, path, c, &t)?)))
        .collect::<Result<_>>()?;
    fields.push("input_ids := []::integer[]".into());
    let lists: Vec<(&str, bool, String)> =
        LIST_COLUMNS.iter().filter_map(|(c, byte)| type_of(c).map(|t| (*c, *byte, t))).collect();
    let mut select = format!("select file_row_number, to_json(struct_pack({}))", fields.join(", "));
    for (c, _, _) in &lists {
        select.push_str(&format!(", {}", ident(c)));
    }
    select.push_str(&format!(" from {}", staged.source()));
    let mut rows = 0u64;
    staged.batches(conn, path, &select, |batch| {
        // (DuckDB hands BIGINT and VARCHAR over as these types; cast in case a version
        // hands them over as another Arrow type of the same values)
        let numbers = cast(batch.column(0), &DataType::Int64)?;
        let numbers = numbers.as_primitive::<Int64Type>();
        let texts = cast(batch.column(1), &DataType::Utf8)?;
        let texts = texts.as_string::<i32>();
        let arrays: Vec<_> = lists
            .iter()
            .enumerate()
            .map(|(k, (_, _, t))| {
                let array = batch.column(2 + k);
                (array, IntLists::of(array, t))
            })
            .collect();
        for i in 0..batch.num_rows() {
            let row = numbers.value(i) as u64 + 1;
            let mut raw: RawView = parse_json_ids(path, row, texts.value(i), ID_FIELDS)?;
            let err = |field: &str, msg: String| InputError::at(path, Some(row), Some(field), msg);
            let mut input_ids = None;
            for ((column, byte, _), (array, read)) in lists.iter().zip(&arrays) {
                let values = match read {
                    // (a column DuckDB typed NULL holds no value in any row)
                    Err(why) if array.data_type() != &DataType::Null && array.is_valid(i) => {
                        return Err(err(column, why.clone()).into());
                    }
                    Err(_) => continue,
                    Ok(read) => match read.row(i) {
                        IntRow::Null => continue,
                        IntRow::Values(Err(k)) => {
                            return Err(err(&format!("{column}[{k}]"), "null; expected an integer".into()).into());
                        }
                        IntRow::Values(Ok(values)) => values,
                        IntRow::Beyond(k, v) => {
                            let misfit = if *byte { i8::misfit(Some(v.into())) } else { i32::misfit(Some(v.into())) };
                            return Err(err(&format!("{column}[{k}]"), misfit).into());
                        }
                    },
                };
                if *byte {
                    let mask = Some(Narrow { values: narrow::<i8>(path, row, column, values)? });
                    match *column {
                        "loss_mask" => raw.loss_mask = mask,
                        _ => raw.assistant_masks = mask,
                    }
                } else {
                    let ints = Narrow { values: narrow::<i32>(path, row, column, values)? };
                    match *column {
                        "input_ids" => input_ids = Some(ints),
                        "labels" => raw.labels = Some(ints),
                        "keep_msgs" => raw.keep_msgs = Some(ints),
                        "seq_lengths" => raw.seq_lengths = Some(ints),
                        "cu_seqlens" => raw.cu_seqlens = Some(ints),
                        "cu_seq_lens_q" => raw.cu_seq_lens_q = Some(ints),
                        "position_ids" => raw.position_ids = Some(ints),
                        _ => raw.attention_mask = Some(ints),
                    }
                }
            }
            raw.input_ids = match input_ids {
                Some(ids) => ids,
                None if lists.iter().any(|(c, _, _)| *c == "input_ids") => {
                    return Err(err("input_ids", "null; a view needs its token ids".into()).into());
                }
                None => {
                    let names: Vec<&str> = columns.iter().map(|(c, _)| c.as_str()).collect();
                    return Err(err(
                        "input_ids",
                        format!("missing: the file has no such column (its columns: {})", names.join(", ")),
                    )
                    .into());
                }
            };
            for view in to_view(path, row, raw, options)? {
                each(view)?;
            }
            rows += 1;
        }
        Ok(())
    })?;
    if rows == 0 {
        anyhow::bail!("{}: no row: a Parquet view file holds one view a row", path.display());
    }
    Ok(rows)
}
