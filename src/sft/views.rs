//! Loading tokenized views (SPEC §3.1): JSONL, one training row a line.
//!
//! A view carries token ids and a loss mask in one of the field's conventions:
//! `loss_mask` (0/1, sphragis's own), `assistant_masks` (TRL), or `labels` (Hugging
//! Face: the token id where supervised, -100 elsewhere, unshifted). Pre-shifted labels
//! (torchtune style: `labels[i]` scores `input_ids[i + 1]`) must be declared with
//! `"labels_shifted": true`; undeclared shifted labels are refused, never guessed.
//! Message spans must declare whether `end` is inclusive or exclusive (per line with
//! `span_end`, or for the whole file on the command line); they are stored as
//! `[start, end)`. The full field list is in `docs/formats.md`.
//!
//! Views are kept however broken their contract is (the contract views report it):
//! only an unreadable line (bad JSON, a missing or mistyped field, conventions that
//! contradict each other) stops a load.

use crate::ingest::json::{TextOrNumber, parse_json_ids};
use crate::ingest::{InputError, InputKind};
use anyhow::{Context, Result};
use duckdb::Connection;
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

/// The `-100` of Hugging Face labels: an unsupervised position.
pub const IGNORE_INDEX: i64 = -100;

/// How a file's message spans end, when its lines do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanEnd {
    Inclusive,
    Exclusive,
}

impl SpanEnd {
    /// `"inclusive"` or `"exclusive"`.
    pub fn name(self) -> &'static str {
        match self {
            SpanEnd::Inclusive => "inclusive",
            SpanEnd::Exclusive => "exclusive",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "inclusive" => Some(SpanEnd::Inclusive),
            "exclusive" => Some(SpanEnd::Exclusive),
            _ => None,
        }
    }
}

/// Defaults for lines that do not say, and the tokenizer the views were made with.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// Pool for lines without `pool`.
    pub pool: Option<String>,
    /// Span convention for lines without `span_end`.
    pub span_end: Option<SpanEnd>,
    /// `(vocabulary size including added tokens, tokenizer.json SHA-256)`.
    pub tokenizer: Option<(i32, String)>,
    /// Cut each view's message spans into segments with this tokenizer's added tokens
    /// ([`crate::sft::segments`]), in the load's transaction; `None`: segments unknown.
    pub segments: Option<Arc<crate::sft::segments::Segmenter>>,
}

#[derive(Debug, Deserialize)]
struct RawSpan {
    index: i64,
    role: String,
    start: i64,
    end: i64,
}

#[derive(Debug, Deserialize)]
struct RawLedger {
    #[serde(default)]
    n_tokens: Option<i64>,
    #[serde(default)]
    n_supervised: Option<i64>,
}

mod int_arrays;
mod narrow;
pub mod packing;
mod parquet;
mod writer;
use narrow::{Narrow, NarrowInt};
pub use writer::ViewWriter;

/// The fields that name a view, its instance, its pool and its repository family (the
/// grouping key of the isolation checks): a lone surrogate escape in them
/// is refused ([`crate::ingest::json::parse_json_ids`]).
const ID_FIELDS: &[&str] = &["view_id", "instance_id", "instance_id[*]", "pool", "family"];

/// A view line. Unknown fields are allowed (producers add metadata) and kept in
/// `origin` only when given there.
#[derive(Debug, Deserialize)]
struct RawView {
    #[serde(default)]
    view_id: Option<TextOrNumber>,
    #[serde(default)]
    pool: Option<String>,
    instance_id: packing::InstanceIds,
    #[serde(default)]
    family: Option<String>,
    input_ids: Narrow<i32>,
    #[serde(default)]
    loss_mask: Option<Narrow<i8>>,
    #[serde(default)]
    assistant_masks: Option<Narrow<i8>>,
    #[serde(default)]
    labels: Option<Narrow<i32>>,
    #[serde(default)]
    labels_shifted: Option<bool>,
    #[serde(default)]
    message_spans: Option<Vec<RawSpan>>,
    #[serde(default)]
    span_end: Option<String>,
    #[serde(default)]
    keep_msgs: Option<Narrow<i32>>,
    #[serde(default)]
    ledger: Option<RawLedger>,
    #[serde(default)]
    n_tokens: Option<i64>,
    #[serde(default)]
    n_supervised: Option<i64>,
    #[serde(default)]
    source_sha256: Option<String>,
    #[serde(default)]
    source_path: Option<String>,
    #[serde(default)]
    origin: Option<crate::ingest::json::UniqueKeys>,
    // packing metadata (the packing module)
    #[serde(default)]
    seq_lengths: Option<Narrow<i32>>,
    #[serde(default)]
    cu_seqlens: Option<Narrow<i32>>,
    #[serde(default)]
    cu_seq_lens_q: Option<Narrow<i32>>,
    #[serde(default)]
    position_ids: Option<Narrow<i32>>,
    #[serde(default)]
    attention_mask: Option<Narrow<i32>>,
}

/// One parsed view, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub view_id: String,
    pub pool: String,
    pub instance_id: String,
    pub family: Option<String>,
    /// Whether the line gave `family` (else it is the instance id's scheme's).
    pub family_given: bool,
    /// Token ids, each checked to fit 32 bits (the column's type).
    pub input_ids: Vec<i32>,
    /// Mask values as given (or 0/1 from labels), each checked to fit one byte.
    pub loss_mask: Vec<i8>,
    pub mask_source: &'static str,
    pub span_end: Option<SpanEnd>,
    /// `(msg_index, role, start, end_exclusive)` in input order.
    pub spans: Vec<(i64, String, i64, i64)>,
    pub keep_msgs: Option<Vec<i64>>,
    pub claimed_tokens: Option<i64>,
    pub claimed_supervised: Option<i64>,
    pub declared_sha256: Option<String>,
    pub declared_path: Option<String>,
    pub origin: Option<String>,
    pub record: i64,
    /// Where the view sits in its packed row, when it was cut from one (or its row's
    /// spans restart unannounced): [`packing`].
    pub pack: Option<packing::PackUnit>,
}

pub use super::family::family_of;

/// Maximal runs `[start, end)` of positions whose mask value is 1.
pub fn supervised_runs(mask: &[i8]) -> Vec<(i64, i64)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, v) in mask.iter().enumerate() {
        match (*v == 1, start) {
            (true, None) => start = Some(i as i64),
            (false, Some(s)) => {
                runs.push((s, i as i64));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, mask.len() as i64));
    }
    runs
}

fn to_view(path: &Path, line: u64, mut raw: RawView, options: &ViewOptions) -> Result<Vec<View>, InputError> {
    let err = |field: &str, msg: String| InputError::at(path, Some(line), Some(field), msg);
    let pool = raw
        .pool
        .or_else(|| options.pool.clone())
        .ok_or_else(|| err("pool", "missing: give it on the line or with --pool".into()))?;
    if pool.trim().is_empty() {
        return Err(err("pool", "must not be empty".into()));
    }
    let instance_ids = std::mem::take(&mut raw.instance_id);
    if let Some(i) = instance_ids.ids().iter().position(|id| id.trim().is_empty()) {
        let field = if instance_ids.1 { format!("instance_id[{i}]") } else { "instance_id".into() };
        return Err(err(&field, "must not be empty".into()));
    }
    let instance_id = instance_ids.ids()[0].clone();
    let view_id = raw.view_id.take().map(TextOrNumber::into_text);
    if view_id.as_deref().is_some_and(|id| id.trim().is_empty()) {
        return Err(err("view_id", "must not be empty".into()));
    }
    if raw.family.as_deref().is_some_and(|f| f.trim().is_empty()) {
        return Err(err("family", "must not be empty (leave it out: the instance id's scheme gives it)".into()));
    }
    if let Some(sha) = raw.source_sha256.as_mut() {
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(err("source_sha256", format!("{sha:?} is not a SHA-256 (64 hexadecimal digits)")));
        }
        // ingest_log writes lower case: an upper-case declaration is the same digest
        sha.make_ascii_lowercase();
    }
    // Values are stored as 32-bit integers: refuse what would not fit rather than clamp
    // (the id, mask, label and keep_msgs arrays are refused as they are read, `Narrow`).
    if let Some(spans) = &raw.message_spans {
        for (i, s) in spans.iter().enumerate() {
            for (name, v) in [("index", s.index), ("start", s.start), ("end", s.end)] {
                if i32::try_from(v).is_err() {
                    let field = format!("message_spans[{i}].{name}");
                    return Err(err(&field, <i32 as NarrowInt>::misfit(Some(i128::from(v)))));
                }
            }
        }
    }
    let n = raw.input_ids.values.len();
    // The mask: loss_mask or assistant_masks as given; labels converted; conventions
    // given together must agree.
    let from_labels = |labels: &[i32], shifted: bool| -> Result<Vec<i8>, InputError> {
        let mut mask = vec![0; n];
        for (i, label) in labels.iter().map(|l| i64::from(*l)).enumerate() {
            if label == IGNORE_INDEX {
                continue;
            }
            let target = if shifted { i + 1 } else { i };
            match raw.input_ids.values.get(target).map(|id| i64::from(*id)) {
                Some(id) if id == label => {
                    if target < n {
                        mask[target] = 1;
                    }
                }
                Some(_) if !shifted && raw.input_ids.values.get(i + 1).map(|id| i64::from(*id)) == Some(label) => {
                    return Err(err(
                        "labels",
                        format!(
                            "labels[{i}] equals input_ids[{}]: the labels look pre-shifted (torchtune style); \
                             declare \"labels_shifted\": true",
                            i + 1
                        ),
                    ));
                }
                _ => {
                    return Err(err(
                        "labels",
                        format!("labels[{i}] = {label} is neither -100 nor the token it scores (input_ids[{target}])"),
                    ));
                }
            }
        }
        Ok(mask)
    };
    let shifted = raw.labels_shifted.unwrap_or(false);
    // Every convention the line gives, in order of preference (the first is stored):
    // (field, mask, whether the values are a mask as given rather than derived from
    // labels).
    let mut given: Vec<(&'static str, Vec<i8>, bool)> = Vec::new();
    if let Some(m) = raw.loss_mask {
        given.push(("loss_mask", m.values, true));
    }
    if let Some(m) = raw.assistant_masks {
        given.push(("assistant_masks", m.values, true));
    }
    if let Some(labels) = raw.labels.as_ref().map(|l| &l.values) {
        // A length mismatch is kept for the contract's lengths check: the mask has
        // the labels' length.
        let mut mask = from_labels(&labels[..labels.len().min(n)], shifted)?;
        mask.resize(labels.len(), 0);
        given.push((if shifted { "labels_shifted" } else { "labels" }, mask, false));
    }
    // Conventions given together must agree, every pair: same length, same supervised
    // positions, and the same values where both are masks as given.
    for (a, (first, first_mask, first_raw)) in given.iter().enumerate() {
        for (second, second_mask, second_raw) in &given[a + 1..] {
            let field = if second.starts_with("labels") { "labels" } else { *second };
            if first_mask.len() != second_mask.len() {
                return Err(err(
                    field,
                    format!(
                        "has {} values, {first} has {}: the conventions disagree",
                        second_mask.len(),
                        first_mask.len()
                    ),
                ));
            }
            let differs = |i: &usize| {
                let (x, y) = (first_mask[*i], second_mask[*i]);
                (x == 1) != (y == 1) || (*first_raw && *second_raw && x != y)
            };
            if let Some(i) = (0..first_mask.len()).find(differs) {
                let shown = |raw: bool, v: i8| {
                    if raw {
                        v.to_string()
                    } else if v == 1 {
                        "supervised".into()
                    } else {
                        "-100".into()
                    }
                };
                return Err(err(
                    field,
                    format!(
                        "disagrees with {first} at position {i} ({second} {}, {first} {})",
                        shown(*second_raw, second_mask[i]),
                        shown(*first_raw, first_mask[i])
                    ),
                ));
            }
        }
    }
    let Some((mask_source, loss_mask, _)) = given.into_iter().next() else {
        return Err(err("loss_mask", "missing: give loss_mask, assistant_masks or labels".into()));
    };
    let span_end = match raw.span_end.as_deref() {
        Some(s) => {
            Some(SpanEnd::parse(s).ok_or_else(|| err("span_end", format!("{s:?} is not inclusive or exclusive")))?)
        }
        None => options.span_end,
    };
    let mut spans = Vec::new();
    if let Some(raw_spans) = raw.message_spans {
        let Some(convention) = span_end else {
            return Err(err(
                "span_end",
                "message_spans given without saying whether end is inclusive or exclusive; \
                 add \"span_end\" or pass --span-end"
                    .into(),
            ));
        };
        // A span must be storable as [start, end) in 32 bits, and lie within one length of
        // the ids on either side (-n..=2n): a span nearer than that but outside the ids is
        // kept for contract_spans to fail; one farther out (INT_MAX or INT_MIN used as a
        // sentinel) names no position of this view and would overflow the positions'
        // 32-bit arithmetic in the supervision views, so it is refused here.
        let n_ids = i64::try_from(n).unwrap_or(i64::MAX);
        for (i, s) in raw_spans.into_iter().enumerate() {
            let end = if convention == SpanEnd::Inclusive { s.end + 1 } else { s.end };
            if i32::try_from(end).is_err() {
                return Err(err(
                    &format!("message_spans[{i}].end"),
                    format!("inclusive end {} is exclusive end {end}, which does not fit a 32-bit integer", s.end),
                ));
            }
            for (name, v) in [("start", s.start), ("end", end)] {
                if v < -n_ids || v > 2 * n_ids {
                    let shown = if name == "end" && end != s.end { format!("{v} (exclusive)") } else { v.to_string() };
                    return Err(err(
                        &format!("message_spans[{i}].{name}"),
                        format!(
                            "{shown} is no position of the {n_ids} ids: a span must lie within {}..={} \
                             (one that is outside the ids but nearer is kept and fails contract_spans)",
                            -n_ids,
                            2 * n_ids
                        ),
                    ));
                }
            }
            spans.push((s.index, s.role, s.start, end));
        }
    }
    let ledger = raw.ledger.unwrap_or(RawLedger { n_tokens: None, n_supervised: None });
    let record = line as i64;
    let boundaries = packing::Boundaries {
        seq_lengths: raw.seq_lengths.map(|v| v.values),
        cu_seqlens: raw.cu_seqlens.map(|v| v.values),
        cu_seq_lens_q: raw.cu_seq_lens_q.map(|v| v.values),
        position_ids: raw.position_ids.map(|v| v.values),
        attention_mask: raw.attention_mask.map(|v| v.values),
    };
    let view = View {
        view_id: view_id.unwrap_or_else(|| format!("{pool}:{instance_id}:{record}")),
        family_given: raw.family.is_some(),
        family: raw.family.or_else(|| family_of(&instance_id)),
        pool,
        instance_id,
        // both checked above to fit: input_ids 32 bits, a given mask one byte, a mask
        // from labels is 0/1
        input_ids: raw.input_ids.values,
        loss_mask,
        mask_source,
        span_end,
        spans,
        keep_msgs: raw.keep_msgs.map(|k| k.values.into_iter().map(i64::from).collect()),
        claimed_tokens: ledger.n_tokens.or(raw.n_tokens),
        claimed_supervised: ledger.n_supervised.or(raw.n_supervised),
        declared_sha256: raw.source_sha256,
        declared_path: raw.source_path,
        origin: raw.origin.map(|o| o.0.to_string()),
        record,
        pack: None,
    };
    packing::split(path, line, view, &boundaries, instance_ids)
}

/// Loads a view file (JSON lines, or one Parquet file) in one transaction, bound in the
/// ingest log (kind `views`). `progress` gets the number of views written so far. A
/// folder or glob of Parquet shards is [`load_all`]'s.
///
/// Errors: as [`read`], or a view_id already loaded; the database is then unchanged.
pub fn load(
    conn: &Connection,
    path: &Path,
    options: &ViewOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<crate::ingest::LoadOutcome> {
    if crate::ingest::parquet::is_shard_set(path) {
        anyhow::bail!(
            "{}: not a regular file (a directory, pipe or device, or a glob); a folder or glob of Parquet shards \
             loads with load_all",
            path.display()
        );
    }
    let mut outcomes = load_all(conn, path, options, progress)?;
    Ok(outcomes.pop().expect("one file, one outcome"))
}

/// Loads the views of `path` in ONE transaction: a JSON-lines file, a Parquet file, or a
/// folder or glob of Parquet shards (every `*.parquet` in name order; each shard is its
/// own ingest-log entry, with its SHA-256). Returns one outcome per file.
///
/// Errors: as [`read`] (a Parquet row named by its row, [`crate::ingest::parquet`]), or
/// a view_id already loaded; the database is then unchanged.
pub fn load_all(
    conn: &Connection,
    path: &Path,
    options: &ViewOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<crate::ingest::LoadOutcome>> {
    let recorded = serde_json::json!({
        "pool": options.pool,
        "span_end": options.span_end.map(SpanEnd::name),
        "tokenizer_sha256": options.tokenizer.as_ref().map(|t| &t.1),
    })
    .to_string();
    // (The commit writes the lists once, into the file, not first to the write-ahead log:
    // crate::ingest::load_file.) A view file is fewer rows than one DuckDB row group, so DuckDB would keep the
    // whole transaction in memory until commit (about 10 bytes a position: 1.8 GB for 145 M
    // positions). Capped at LOAD_MEMORY_LIMIT, it spills its transaction storage to its
    // temporary directory (`<file>.tmp/`) instead: the load's peak stays about the same
    // as the file grows (measured 600 MB for 36 M positions and 640 MB for 145 M, against
    // 700 MB and 1.8 GB uncapped, and faster at the larger size).
    check_spill_folder(conn, path)?;
    let limit = if crate::ingest::parquet::is_parquet_arg(path) {
        parquet::memory_limit(conn, path)?
    } else {
        LOAD_MEMORY_LIMIT.to_string()
    };
    conn.execute_batch(&format!("set memory_limit = '{limit}'"))?;
    let outcome = if crate::ingest::parquet::is_parquet_arg(path) {
        parquet::load(conn, path, options, progress, &recorded)
    } else {
        load_views(conn, path, options, progress, &recorded).map(|o| vec![o])
    };
    let reset = conn.execute_batch("reset memory_limit");
    let outcome = outcome?;
    reset?;
    Ok(outcome)
}

/// DuckDB's memory limit while a view file loads (see [`load`]); the default (80% of
/// the machine's memory) is restored after it.
pub const LOAD_MEMORY_LIMIT: &str = "300MB";

/// Checks that DuckDB can make its spill folder for a view load into a database file
/// (its `temp_directory`: `<file>.tmp` beside the file) before the load starts, so a
/// folder that cannot be made is an error naming the input and the folder before any
/// work (DuckDB would only fail at commit, with its own message). The folder itself is
/// not touched (DuckDB removes it when the database closes only if it made it): a
/// missing folder's parent must take a new file, an existing name must be a folder.
fn check_spill_folder(conn: &Connection, input: &Path) -> Result<()> {
    let setting: String = conn.query_row("select current_setting('temp_directory')", [], |r| r.get(0))?;
    let db: Option<String> =
        conn.query_row("select path from duckdb_databases() where database_name = current_database()", [], |r| {
            r.get(0)
        })?;
    // an in-memory database (verify's scratch) spills to `.tmp` in the working folder
    // only if it must; that is left to DuckDB
    if setting.is_empty() || db.is_none_or(|d| d.is_empty() || d == ":memory:") {
        return Ok(());
    }
    let folder = std::path::PathBuf::from(&setting);
    let refuse = |why: String| {
        anyhow::anyhow!(
            "{}: cannot load: DuckDB's spill folder {} cannot be made ({why}); a view load caps DuckDB's memory at \
             {LOAD_MEMORY_LIMIT} and writes the rest of its transaction there until the commit, so the folder \
             beside the database file must be writable (nothing was loaded)",
            input.display(),
            folder.display()
        )
    };
    // (a dangling symbolic link does not "exist" but is in the way all the same)
    if std::fs::symlink_metadata(&folder).is_ok() {
        return if folder.is_dir() {
            Ok(())
        } else {
            Err(refuse("a file or a broken link of that name is in the way".into()))
        };
    }
    let parent = folder.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let probe = parent.join(format!(".sphragis-spill-probe-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(|e| refuse(format!("{}: {e}", parent.display())))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn load_views(
    conn: &Connection,
    path: &Path,
    options: &ViewOptions,
    progress: &mut dyn FnMut(u64),
    recorded: &str,
) -> Result<crate::ingest::LoadOutcome> {
    crate::ingest::load_file(conn, path, InputKind::Views, Some(recorded), |conn, file_id, reader| {
        // Stages on their own threads: read + SHA-256 (the input's read-ahead), cutting
        // lines into chunks, JSON parsing on every core, then (this thread, which owns the
        // connection) the views in file order: repeated ids, Arrow batches, appends.
        write_file(conn, path, file_id, options, progress, |each| read(path, &mut *reader, options, each))
    })
}

/// Writes the views of one input file (`file_id`) that `source` hands over, in file
/// order: a view_id used before (in the database, or earlier in the file) stops the load
/// naming both places; then the tokenizer's declared SHA-256, the Arrow batches, the
/// segments. Returns the number of views written. Shared by JSON lines and Parquet.
fn write_file(
    conn: &Connection,
    path: &Path,
    file_id: i32,
    options: &ViewOptions,
    progress: &mut dyn FnMut(u64),
    source: impl FnOnce(&mut dyn FnMut(View) -> Result<()>) -> Result<u64>,
) -> Result<i64> {
    let mut writer = ViewWriter::new(conn, file_id, options.tokenizer.clone());
    // view_ids already in the database, with their file: a repeat is named, not left
    // to a constraint error.
    let mut known: std::collections::HashMap<String, String> = {
        let mut stmt = conn.prepare(
            "select v.view_id, format('{}:{}', l.path, v.record) from sft_views as v join ingest_log as l using (file_id)",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?
    };
    // the ids of rows cut into views name their pack: taken too
    {
        let mut stmt = conn.prepare(
            "select p.pack_id, format('{}:{}', l.path, p.record) from sft_view_packs as p \
             join ingest_log as l using (file_id)",
        )?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
            let (id, place) = row?;
            known.insert(id, place);
        }
    }
    let mut seen = 0u64;
    source(&mut |view: View| -> Result<()> {
        let place = format!("{}:{}", path.display(), view.record);
        // a row cut into views takes its own id too (sft_view_packs.pack_id), once
        let pack_id = view.pack.as_ref().filter(|u| u.pack.is_some() && packing::is_cut(u));
        let ids = pack_id.map(|u| u.pack_id.clone()).into_iter().chain([view.view_id.clone()]);
        for id in ids {
            let Some(earlier) = known.insert(id.clone(), place.clone()) else { continue };
            return Err(InputError::at(
                path,
                Some(view.record as u64),
                Some("view_id"),
                format!(
                    "{:?} is already used by the view at {earlier}{}",
                    id,
                    if id.contains('\u{fffd}') {
                        " (U+FFFD also stands for a lone surrogate escape such as \\ud83d in a view_id loaded \
                         before such ids were refused)"
                    } else {
                        ""
                    }
                ),
            )
            .into());
        }
        if let Some(segmenter) = &options.segments {
            crate::sft::segments::check_declared_tokenizer(path, view.record, view.origin.as_deref(), segmenter)?;
        }
        writer.append(view)?;
        seen += 1;
        if seen.is_multiple_of(64) {
            progress(seen);
        }
        Ok(())
    })?;
    let rows = writer.finish().with_context(|| path.display().to_string())?;
    if let Some(segmenter) = &options.segments {
        crate::sft::segments::derive_file(conn, path, file_id, segmenter)?;
    }
    progress(rows as u64);
    Ok(rows)
}

/// Parsing chunks of at most 16 lines or 8 MB of line text: small enough to spread a few
/// long views (hundreds of kB each) over the cores. A view's arrays take about the memory
/// its text does, so none is parsed ahead of the writer.
const CHUNKING: crate::ingest::parallel::Chunking =
    crate::ingest::parallel::Chunking { lines: 16, bytes: 8 << 20, parsed_ahead: 0 };

/// Reads view lines from `reader` and hands each view to `each`, in file order, on the
/// calling thread; the JSON parsing is spread over every core
/// ([`crate::ingest::parallel::parse_lines`], which reports what reading line by line
/// would: the first failing line, and the anomalies of the lines before it). Returns the
/// number of records read.
///
/// Errors ([`InputError`] naming line and field): malformed JSON, a missing or mistyped
/// field, no pool, no mask of any convention, labels that are neither -100 nor their
/// token (or look pre-shifted without `labels_shifted`), conventions that disagree,
/// spans without a declared end convention, an empty file.
pub fn read(
    path: &Path,
    reader: &mut (dyn BufRead + Send),
    options: &ViewOptions,
    mut each: impl FnMut(View) -> Result<()>,
) -> Result<u64> {
    crate::ingest::parallel::parse_lines(
        path,
        reader,
        1,
        CHUNKING,
        |line, text| Ok(to_view(path, line, parse_raw(path, line, text)?, options)?),
        |views| views.into_iter().try_for_each(&mut each),
    )
}

/// Reads one view line: its integer arrays by the purpose-built reader and the rest by
/// serde_json when the line is provably plain ([`int_arrays`]); otherwise, or when
/// serde_json refuses the rest, the whole line as every JSON line is read
/// ([`parse_json_ids`]: the anomaly policy, and errors naming the field), so values,
/// errors and recorded anomalies are the same either way.
fn parse_raw(path: &Path, line: u64, text: &str) -> Result<RawView, InputError> {
    if let Some(lifted) = int_arrays::lift(text)
        && let Ok(mut raw) = serde_json::from_str::<RawView>(&lifted.text)
    {
        for (k, values) in lifted.arrays.into_iter().enumerate() {
            let Some(values) = values else { continue };
            let (name, _) = int_arrays::FIELDS[k];
            match (name, values) {
                ("input_ids", int_arrays::Values::I32(v)) => raw.input_ids = Narrow { values: v },
                ("loss_mask", int_arrays::Values::I8(v)) => raw.loss_mask = Some(Narrow { values: v }),
                ("assistant_masks", int_arrays::Values::I8(v)) => raw.assistant_masks = Some(Narrow { values: v }),
                ("labels", int_arrays::Values::I32(v)) => raw.labels = Some(Narrow { values: v }),
                ("keep_msgs", int_arrays::Values::I32(v)) => raw.keep_msgs = Some(Narrow { values: v }),
                ("seq_lengths", int_arrays::Values::I32(v)) => raw.seq_lengths = Some(Narrow { values: v }),
                ("cu_seqlens", int_arrays::Values::I32(v)) => raw.cu_seqlens = Some(Narrow { values: v }),
                ("cu_seq_lens_q", int_arrays::Values::I32(v)) => raw.cu_seq_lens_q = Some(Narrow { values: v }),
                ("position_ids", int_arrays::Values::I32(v)) => raw.position_ids = Some(Narrow { values: v }),
                ("attention_mask", int_arrays::Values::I32(v)) => raw.attention_mask = Some(Narrow { values: v }),
                (name, _) => unreachable!("int_arrays::FIELDS names {name} with a width RawView does not read"),
            }
        }
        return Ok(raw);
    }
    parse_json_ids(path, line, text, ID_FIELDS)
}

#[cfg(test)]
mod tests;
