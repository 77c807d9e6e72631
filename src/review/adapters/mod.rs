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

/// How the JSON-lines adapters cut their input for the parser threads
/// ([`crate::ingest::parallel`]): review rows are a few kB, so chunks of up to 256 lines or 1 MB.
/// An example holds about what its line does, so no chunk is parsed ahead of the writer.
pub const CHUNKING: crate::ingest::parallel::Chunking =
    crate::ingest::parallel::Chunking { lines: 256, bytes: 1 << 20, parsed_ahead: 0 };

/// [`CHUNKING`] for Review4Repair rows. An example keeps an eighth of its line or less (the
/// focused hunk, the target, the comment; not the snippet's context nor the token lists),
/// so up to 64 chunks per parser thread may wait parsed (about 16 MB of examples on two
/// cores) while DuckDB compresses a row group on the writing thread (measured in
/// docs/benchmarks.md, issue 29 round 12).
pub const REVIEW4REPAIR_CHUNKING: crate::ingest::parallel::Chunking =
    crate::ingest::parallel::Chunking { parsed_ahead: 64, ..CHUNKING };

/// Receives each example an adapter builds.
pub type Sink<'a> = dyn FnMut(Example) -> anyhow::Result<()> + 'a;

/// Parses an optional timestamp field into microseconds, naming the field on error.
pub fn timestamp_field(path: &Path, line: u64, field: &str, text: Option<&str>) -> Result<Option<i64>, InputError> {
    text.map(|t| crate::review::model::parse_timestamp(t).map_err(|m| InputError::at(path, Some(line), Some(field), m)))
        .transpose()
}

/// One Gerrit patch set's example, as both Gerrit loaders build it: id
/// `<org>:<change>:<patch set>`, created at its earliest comment, and — for a
/// `TRIVIAL_REBASE`/`NO_CODE_CHANGE` revision kind — the predecessor id of the latest earlier
/// patch set among `earlier` (the change's patch-set numbers). `record` is the 1-based line of
/// the change in its file.
pub struct PatchSetExample<'a> {
    /// Organisation name the loader was given.
    pub org: &'a str,
    /// Gerrit project.
    pub project: Option<String>,
    /// Change number, as text.
    pub change: &'a str,
    /// Patch-set number.
    pub number: i32,
    /// Gerrit's revision kind, if the source records it.
    pub kind: Option<String>,
    /// 1-based line of the change in its file.
    pub record: u64,
}

impl PatchSetExample<'_> {
    /// The example of this patch set with its `comments`; `earlier` yields every patch-set
    /// number of the change (those not below this one are ignored).
    pub fn example(self, earlier: impl Iterator<Item = i32>, comments: Vec<crate::review::model::Comment>) -> Example {
        let PatchSetExample { org, project, change, number, kind, record } = self;
        let rebase = matches!(kind.as_deref(), Some("TRIVIAL_REBASE" | "NO_CODE_CHANGE"));
        let previous = earlier.filter(|p| *p < number).max();
        Example {
            example_id: format!("{org}:{change}:{number}"),
            org: org.to_string(),
            project,
            change: Some(change.to_string()),
            patch_set: Some(number),
            created_at: comments.iter().filter_map(|c| c.created_at).min(),
            revision_kind: kind,
            predecessor_id: if rebase { previous.map(|p| format!("{org}:{change}:{p}")) } else { None },
            record: record as i64,
            comments,
            ..Example::default()
        }
    }
}
