//! Label-audit items (SPEC §2.1, §2.3): a rater's verdict on one example.
//!
//! JSONL, one item per line: `{"item_id": "17", "example_id": "...", "rater": "A",
//! "label": "valid"}`; `label` is `valid` or `invalid` (any case). `label_audit_v1`
//! turns them into valid shares with Wilson intervals.

use super::adapters::{TextOrNumber, for_each_line, parse_json};
use crate::ingest::InputError;
use anyhow::{Context, Result};
use duckdb::{Connection, params};
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawItem {
    item_id: TextOrNumber,
    example_id: String,
    rater: String,
    label: String,
}

/// Reads label items and appends them to `label_items` (inside the caller's
/// transaction). Returns the number of items.
///
/// Errors ([`InputError`] naming line and field): malformed JSON, missing or unknown
/// fields, a label other than valid/invalid, an empty item id, example id or rater; an
/// (item, rater) pair repeated in the file or already loaded from another file (naming
/// its line).
pub fn read(conn: &Connection, file_id: i32, path: &Path, reader: impl BufRead) -> Result<i64> {
    let mut appender = conn.appender("label_items")?;
    let mut n = 0i64;
    // (item, rater) pairs seen in this file, and those already loaded (read once: one
    // query per item made a file of thousands of items take seconds), so a repeat is
    // named with its line instead of surfacing as a key violation on flush
    let mut seen: std::collections::HashMap<(String, String), u64> = std::collections::HashMap::new();
    let loaded: std::collections::HashMap<(String, String), String> = conn
        .prepare("select l.item_id, l.rater, f.path from label_items as l join ingest_log as f using (file_id)")?
        .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?
        .collect::<duckdb::Result<_>>()?;
    for_each_line(path, reader, |line, text| {
        let raw: RawItem = parse_json(path, line, text)?;
        let key = (raw.item_id.clone().into_text(), raw.rater.clone());
        for (field, value) in [("item_id", &key.0), ("example_id", &raw.example_id)] {
            if value.trim().is_empty() {
                return Err(InputError::at(path, Some(line), Some(field), "must not be empty").into());
            }
        }
        if let Some(first) = seen.insert(key.clone(), line) {
            return Err(InputError::at(
                path,
                Some(line),
                Some("item_id"),
                format!("item {} of rater {} repeats line {first}", key.0, key.1),
            )
            .into());
        }
        if let Some(earlier) = loaded.get(&key) {
            return Err(InputError::at(
                path,
                Some(line),
                Some("item_id"),
                format!("item {} of rater {} is already loaded from {earlier}", key.0, key.1),
            )
            .into());
        }
        let valid = match raw.label.trim().to_ascii_lowercase().as_str() {
            "valid" => true,
            "invalid" => false,
            other => {
                return Err(InputError::at(
                    path,
                    Some(line),
                    Some("label"),
                    format!("{other:?} is not valid or invalid"),
                )
                .into());
            }
        };
        if raw.rater.trim().is_empty() {
            return Err(InputError::at(path, Some(line), Some("rater"), "must not be empty").into());
        }
        appender.append_row(params![
            raw.item_id.into_text(),
            raw.example_id,
            raw.rater,
            raw.label,
            valid,
            file_id,
            line as i64
        ])?;
        n += 1;
        Ok(())
    })?;
    appender.flush().with_context(|| format!("{}: writing label items", path.display()))?;
    Ok(n)
}
