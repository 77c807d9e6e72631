//! Input adapters: each turns one source format into [`Example`]s.
//!
//! | kind | format | module |
//! |---|---|---|
//! | `examples` | sphragis's own JSONL (docs/formats.md) | [`jsonl`] |
//! | `review4repair` | Review4Repair `test_100.json` (JSON array or JSONL) | [`review4repair`] |
//! | `tufano2021` | Tufano et al. 2021 CSV (`comment,before,before_marked,after`) | [`tufano`] |
//! | `gerrit-query` | Gerrit SSH `gerrit query --format=JSON` output | [`gerrit_query`] |
//! | `gerrit-rest` | Gerrit REST `GET /changes/?q=...` and `GET /changes/{id}/comments` responses | [`gerrit_rest`] |
//!
//! Every adapter streams: it reads the [`Input`](crate::ingest::Input) the load gives it
//! (hashed as it is read) and hands each example to a sink, so memory does not grow with
//! the file (review4repair's JSON array and gerrit-rest's responses are the exceptions:
//! each is one document). The JSON
//! containers and text helpers are [`crate::ingest::json`]'s. Errors are [`InputError`]s
//! naming file, line and field.

pub mod gerrit_query;
pub mod gerrit_rest;
pub mod jsonl;
pub mod review4repair;
pub mod tufano;

use crate::ingest::InputError;
pub use crate::ingest::json::{TextOrNumber, for_each_line, parse_json};
use crate::review::model::Example;
use std::path::Path;

/// Receives each example an adapter builds.
pub type Sink<'a> = dyn FnMut(Example) -> anyhow::Result<()> + 'a;

/// Parses an optional timestamp field into microseconds, naming the field on error.
pub fn timestamp_field(path: &Path, line: u64, field: &str, text: Option<&str>) -> Result<Option<i64>, InputError> {
    text.map(|t| crate::review::model::parse_timestamp(t).map_err(|m| InputError::at(path, Some(line), Some(field), m)))
        .transpose()
}
