//! The input layer, for both corpora: everything that reads an input file.
//!
//! - [`kind`]: [`InputKind`], the one list of input kinds (ingest-log name, loader
//!   version, re-load policy, corpus).
//! - [`read`]: [`Input`], the one way an input is read — a buffered stream over a
//!   read-ahead thread that computes the SHA-256 while the loader parses, with a leading
//!   UTF-8 byte-order mark skipped; [`read::TokenizerFile`], a tokenizer read once with
//!   its SHA-256; [`read::hash_file`] for `verify`.
//! - [`error`]: [`InputError`], naming file, line and field in the field's terms.
//! - [`json`]: the containers (JSON lines, JSON array, one document), each record
//!   located by line (linearly), UTF-8 decoding, and [`json::TextOrNumber`].
//! - [`parallel`]: JSON lines parsed on every core and handed on in file order, with the
//!   first failing line and the anomalies reported as one thread would (views, review
//!   JSONL).
//! - [`anomaly`]: the ingest anomaly policy — lone surrogate escapes, `NaN` /
//!   `Infinity`, NUL and control characters that real producers write: accepted,
//!   recorded per file, line and field (`ingest_anomalies_v1`), or refused with the reason.
//! - [`parquet`]: Parquet inputs (a file, a folder or glob of shards) read once and
//!   hashed into an in-memory copy that DuckDB's `read_parquet` decodes; row-numbered
//!   errors ([`parquet::RowError`]).
//! - [`unique_keys`]: JSON values whose objects name each key once (the trajectory
//!   readers refuse `{"role": "user", "role": "assistant"}` instead of keeping the last).
//! - [`walk`]: folder walks that end and read a file once (links to folders not
//!   followed, a file reached by two paths read once), for `load run` and Parquet folders.
//! - [`log`]: [`log::load_file`], the transactional, SHA-256-bound load recorded in
//!   `ingest_log`. It lives here, not in `db/`, because it is what opens an input file.
//!
//! A loader receives `&mut Input` and the path only as a label for its errors; no code
//! outside this module opens an input file (`tests/tidy.rs` enforces it).

pub mod anomaly;
pub mod error;
pub mod json;
pub mod kind;
pub mod log;
pub mod parallel;
pub mod parquet;
pub mod read;
pub mod unique_keys;
pub mod walk;

pub use error::InputError;
pub use kind::{Corpus, InputKind, Reload};
pub use log::{
    LoadOutcome, LoadedFile, ReadFile, earlier_load, find_loaded, load_file, load_files_whole, load_read_whole,
};
pub use read::Input;
