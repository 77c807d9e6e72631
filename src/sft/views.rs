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
use duckdb::arrow::array::{
    ArrayBuilder, ArrayRef, Int8Builder, Int32Builder, Int64Builder, ListBuilder, RecordBatch, StringBuilder,
};
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

/// A JSON array of integers stored narrow (`i32` token ids, `i8` mask values), read
/// without a 64-bit copy: each value is parsed as an integer and pushed as `T`. The first
/// value that is not an integer or does not fit `T` stops the parse there, so the error
/// names the first offending position of the line (`input_ids[1]`), in the field's
/// terms ([`NarrowInt::misfit`]).
#[derive(Debug, Default)]
struct Narrow<T> {
    values: Vec<T>,
}

/// An integer type an id or mask array is stored as, with the thread's reusable buffer for
/// the array being read: reading a long array costs one allocation of its exact size
/// instead of a chain of doublings.
trait NarrowInt: TryFrom<i64> + Copy + 'static {
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R;
    /// Why `value` cannot be stored (`None`: beyond 64 bits, read by serde_json as a float).
    fn misfit(value: Option<i128>) -> String;
}

thread_local! {
    static SCRATCH_I32: std::cell::RefCell<Vec<i32>> = const { std::cell::RefCell::new(Vec::new()) };
    static SCRATCH_I8: std::cell::RefCell<Vec<i8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl NarrowInt for i32 {
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<i32>) -> R) -> R {
        SCRATCH_I32.with(|s| f(&mut s.borrow_mut()))
    }
    fn misfit(value: Option<i128>) -> String {
        let value = value.map_or("a value beyond 64 bits".to_string(), |v| v.to_string());
        format!("{value} does not fit a 32-bit integer")
    }
}

impl NarrowInt for i8 {
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<i8>) -> R) -> R {
        SCRATCH_I8.with(|s| f(&mut s.borrow_mut()))
    }
    fn misfit(value: Option<i128>) -> String {
        // 0/1 and the usual mistakes (-100, 2) fit and are kept for the contract to report
        let value = value.map_or("beyond 64 bits".to_string(), |v| v.to_string());
        format!("mask value {value} is outside -128..127")
    }
}

/// Reads one integer of an id or mask array straight into the array being built as `T`;
/// a value that does not fit is an error in the field's terms ([`NarrowInt::misfit`]), a
/// fraction or any other JSON value a type error (serde's wording).
struct Push<'a, T>(&'a mut Vec<T>);

impl<'de, T: NarrowInt> serde::de::DeserializeSeed<'de> for Push<'_, T> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_i64(self)
    }
}

impl<'de, T: NarrowInt> serde::de::Visitor<'de> for Push<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an integer")
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        let t = T::try_from(v).map_err(|_| E::custom(T::misfit(Some(i128::from(v)))))?;
        self.0.push(t);
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(E::custom(T::misfit(Some(i128::from(v))))),
        }
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // an integer beyond 64 bits comes as a float; a fraction is refused as a type error
        if v.fract() == 0.0 && v.abs() >= 9.223_372_036_854_775e18 {
            Err(E::custom(T::misfit(None)))
        } else {
            Err(E::invalid_type(serde::de::Unexpected::Float(v), &self))
        }
    }
}

impl<'de, T: NarrowInt> Deserialize<'de> for Narrow<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: NarrowInt> serde::de::Visitor<'de> for Visitor<T> {
            type Value = Narrow<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Narrow<T>, A::Error> {
                T::with_scratch(|scratch| {
                    scratch.clear();
                    while seq.next_element_seed(Push(&mut *scratch))?.is_some() {}
                    Ok(Narrow { values: scratch.as_slice().to_vec() })
                })
            }
        }
        deserializer.deserialize_seq(Visitor(std::marker::PhantomData))
    }
}

/// The fields that name a view, its instance, its pool and its repository family (the
/// grouping key of the isolation checks): a lone surrogate escape in them
/// is refused ([`crate::ingest::json::parse_json_ids`]).
const ID_FIELDS: &[&str] = &["view_id", "instance_id", "pool", "family"];

/// A view line. Unknown fields are allowed (producers add metadata) and kept in
/// `origin` only when given there.
#[derive(Debug, Deserialize)]
struct RawView {
    #[serde(default)]
    view_id: Option<TextOrNumber>,
    #[serde(default)]
    pool: Option<String>,
    instance_id: String,
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
}

/// One parsed view, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub view_id: String,
    pub pool: String,
    pub instance_id: String,
    pub family: Option<String>,
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

fn to_view(path: &Path, line: u64, raw: RawView, options: &ViewOptions) -> Result<View, InputError> {
    let err = |field: &str, msg: String| InputError::at(path, Some(line), Some(field), msg);
    let pool = raw
        .pool
        .or_else(|| options.pool.clone())
        .ok_or_else(|| err("pool", "missing: give it on the line or with --pool".into()))?;
    if pool.trim().is_empty() {
        return Err(err("pool", "must not be empty".into()));
    }
    if raw.instance_id.trim().is_empty() {
        return Err(err("instance_id", "must not be empty".into()));
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
        for s in raw_spans {
            let end = if convention == SpanEnd::Inclusive { s.end + 1 } else { s.end };
            spans.push((s.index, s.role, s.start, end));
        }
    }
    let ledger = raw.ledger.unwrap_or(RawLedger { n_tokens: None, n_supervised: None });
    let record = line as i64;
    Ok(View {
        view_id: raw
            .view_id
            .map(TextOrNumber::into_text)
            .unwrap_or_else(|| format!("{pool}:{}:{record}", raw.instance_id)),
        family: raw.family.or_else(|| family_of(&raw.instance_id)),
        pool,
        instance_id: raw.instance_id,
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
    })
}

/// Buffers views and writes them as Arrow record batches through the appender: the views
/// with their ids and masks as list columns, their message spans, their supervised runs.
/// Call [`ViewWriter::finish`].
pub struct ViewWriter<'conn> {
    conn: &'conn Connection,
    file_id: i32,
    tokenizer: Option<(i32, String)>,
    pending: Vec<View>,
    pending_positions: usize,
    written: i64,
}

/// Token positions per Arrow batch (about 5 bytes each buffered, as many again in the
/// batch): bounds memory to some 40 MB whatever the file's size, while each append
/// carries enough rows that its fixed cost does not count.
const BATCH_POSITIONS: usize = 1 << 22;

impl<'conn> ViewWriter<'conn> {
    /// A writer for views of ingest file `file_id`.
    pub fn new(conn: &'conn Connection, file_id: i32, tokenizer: Option<(i32, String)>) -> Self {
        Self { conn, file_id, tokenizer, pending: Vec::new(), pending_positions: 0, written: 0 }
    }

    /// Adds a view; writes a batch when full.
    pub fn append(&mut self, view: View) -> Result<()> {
        self.pending_positions += view.input_ids.len() + view.loss_mask.len();
        self.pending.push(view);
        if self.pending_positions >= BATCH_POSITIONS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let views = std::mem::take(&mut self.pending);
        self.pending_positions = 0;
        let mut strings: [StringBuilder; 11] = Default::default();
        let mut ints: [Int32Builder; 5] = Default::default();
        let mut bigs: [Int64Builder; 2] = Default::default();
        let n_ids: usize = views.iter().map(|v| v.input_ids.len()).sum();
        let n_mask: usize = views.iter().map(|v| v.loss_mask.len()).sum();
        let mut ids = ListBuilder::new(Int32Builder::with_capacity(n_ids));
        let mut masks = ListBuilder::new(Int8Builder::with_capacity(n_mask));
        let mut keep: ListBuilder<Int32Builder> = ListBuilder::new(Int32Builder::new());
        for v in &views {
            strings[0].append_value(&v.view_id);
            strings[1].append_value(&v.pool);
            strings[2].append_value(&v.instance_id);
            strings[3].append_option(v.family.as_deref());
            ints[0].append_value(v.input_ids.len() as i32);
            ints[1].append_value(v.loss_mask.len() as i32);
            ids.values().append_slice(&v.input_ids);
            ids.append(true);
            masks.values().append_slice(&v.loss_mask);
            masks.append(true);
            strings[4].append_value(v.mask_source);
            strings[5].append_option(v.span_end.map(SpanEnd::name));
            match &v.keep_msgs {
                Some(k) => {
                    keep.values().extend(k.iter().map(|x| Some(to_i32(*x))));
                    keep.append(true);
                }
                None => keep.append(false),
            }
            bigs[0].append_option(v.claimed_tokens);
            bigs[1].append_option(v.claimed_supervised);
            ints[2].append_option(self.tokenizer.as_ref().map(|t| t.0));
            strings[6].append_option(self.tokenizer.as_ref().map(|t| t.1.as_str()));
            strings[7].append_option(v.declared_sha256.as_deref());
            strings[8].append_option(v.declared_path.as_deref());
            strings[9].append_option(v.origin.as_deref());
            ints[3].append_value(self.file_id);
            ints[4].append_value(v.record as i32);
        }
        let [view_id, pool, instance, family, mask_source, span_end, tok_sha, declared_sha, declared_path, origin, _] =
            strings.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
        let [n_ids, n_mask, vocab, file_id, record] = ints.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
        let [claimed_tokens, claimed_supervised] = bigs.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
        let batch = RecordBatch::try_from_iter(vec![
            ("view_id", view_id),
            ("pool", pool),
            ("instance_id", instance),
            ("family", family),
            ("n_ids", n_ids),
            ("n_mask", n_mask),
            ("input_ids", Arc::new(ids.finish()) as ArrayRef),
            ("loss_mask", Arc::new(masks.finish()) as ArrayRef),
            ("mask_source", mask_source),
            ("span_end", span_end),
            ("keep_msgs", Arc::new(keep.finish()) as ArrayRef),
            ("claimed_tokens", claimed_tokens),
            ("claimed_supervised", claimed_supervised),
            ("vocab_size", vocab),
            ("tokenizer_sha256", tok_sha),
            ("declared_sha256", declared_sha),
            ("declared_path", declared_path),
            ("origin", origin),
            ("file_id", file_id),
            ("record", record),
        ])?;
        let mut appender = self.conn.appender("sft_views")?;
        appender.append_record_batch(batch).context("writing views (a view_id may already be loaded)")?;
        appender.flush().context("writing views (a view_id may already be loaded)")?;
        // spans and runs: one batch each
        let (mut span_view, mut span_ordinal, mut span_index) =
            (StringBuilder::new(), Int32Builder::new(), Int32Builder::new());
        let (mut span_role, mut span_start, mut span_end) =
            (StringBuilder::new(), Int32Builder::new(), Int32Builder::new());
        let (mut run_view, mut run_start, mut run_end) =
            (StringBuilder::new(), Int32Builder::new(), Int32Builder::new());
        for v in &views {
            for (ordinal, (index, role, start, end)) in v.spans.iter().enumerate() {
                span_view.append_value(&v.view_id);
                span_ordinal.append_value(ordinal as i32);
                span_index.append_value(to_i32(*index));
                span_role.append_value(role);
                span_start.append_value(to_i32(*start));
                span_end.append_value(to_i32(*end));
            }
            for (start, end) in supervised_runs(&v.loss_mask) {
                run_view.append_value(&v.view_id);
                run_start.append_value(start as i32);
                run_end.append_value(end as i32);
            }
        }
        if !span_view.is_empty() {
            let batch = RecordBatch::try_from_iter(vec![
                ("view_id", Arc::new(span_view.finish()) as ArrayRef),
                ("ordinal", Arc::new(span_ordinal.finish()) as ArrayRef),
                ("msg_index", Arc::new(span_index.finish()) as ArrayRef),
                ("role", Arc::new(span_role.finish()) as ArrayRef),
                ("start_pos", Arc::new(span_start.finish()) as ArrayRef),
                ("end_pos", Arc::new(span_end.finish()) as ArrayRef),
            ])?;
            let mut spans = self.conn.appender("sft_view_spans")?;
            spans.append_record_batch(batch)?;
            spans.flush()?;
        }
        if !run_view.is_empty() {
            let batch = RecordBatch::try_from_iter(vec![
                ("view_id", Arc::new(run_view.finish()) as ArrayRef),
                ("run_start", Arc::new(run_start.finish()) as ArrayRef),
                ("run_end", Arc::new(run_end.finish()) as ArrayRef),
            ])?;
            let mut runs = self.conn.appender("sft_view_runs")?;
            runs.append_record_batch(batch)?;
            runs.flush()?;
        }
        self.written += views.len() as i64;
        Ok(())
    }

    /// Writes what is buffered and returns the number of views written.
    pub fn finish(mut self) -> Result<i64> {
        self.flush()?;
        Ok(self.written)
    }
}

/// `v` as a 32-bit integer, clamped (values are checked to fit at parse; a span end
/// made exclusive may be one past the largest).
fn to_i32(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

/// Loads a view file in one transaction, bound in the ingest log (kind `views`).
/// `progress` gets the number of views written so far.
///
/// Errors: as [`read`], or a view_id already loaded; the database is then unchanged.
pub fn load(
    conn: &Connection,
    path: &Path,
    options: &ViewOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<crate::ingest::LoadOutcome> {
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
    conn.execute_batch(&format!("set memory_limit = '{LOAD_MEMORY_LIMIT}'"))?;
    let outcome = load_views(conn, path, options, progress, &recorded);
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
        let mut writer = ViewWriter::new(conn, file_id, options.tokenizer.clone());
        // view_ids already in the database, with their file: a repeat is named, not left
        // to a constraint error.
        let mut known: std::collections::HashMap<String, String> = {
            let mut stmt = conn.prepare(
                "select v.view_id, format('{}:{}', l.path, v.record) from sft_views as v join ingest_log as l using (file_id)",
            )?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?
        };
        // Stages on their own threads: read + SHA-256 (the input's read-ahead), cutting
        // lines into chunks, JSON parsing on every core, then (this thread, which owns the
        // connection) the views in file order: repeated ids, Arrow batches, appends.
        let mut seen = 0u64;
        read(path, &mut *reader, options, |view| {
            let place = format!("{}:{}", path.display(), view.record);
            if let Some(earlier) = known.insert(view.view_id.clone(), place) {
                return Err(InputError::at(
                    path,
                    Some(view.record as u64),
                    Some("view_id"),
                    format!(
                        "{:?} is already used by the view at {earlier}{}",
                        view.view_id,
                        if view.view_id.contains('\u{fffd}') {
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
    })
}

/// Parsing chunks of at most 16 lines or 8 MB of line text: small enough to spread a few
/// long views (hundreds of kB each) over the cores.
const CHUNKING: crate::ingest::parallel::Chunking = crate::ingest::parallel::Chunking { lines: 16, bytes: 8 << 20 };

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
    each: impl FnMut(View) -> Result<()>,
) -> Result<u64> {
    crate::ingest::parallel::parse_lines(
        path,
        reader,
        1,
        CHUNKING,
        |line, text| Ok(to_view(path, line, parse_json_ids::<RawView>(path, line, text, ID_FIELDS)?, options)?),
        each,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str, options: &ViewOptions) -> Result<View, String> {
        let raw: RawView = parse_json_ids(Path::new("v.jsonl"), 1, line, ID_FIELDS).map_err(|e| e.to_string())?;
        to_view(Path::new("v.jsonl"), 1, raw, options).map_err(|e| e.to_string())
    }

    fn pool(p: &str) -> ViewOptions {
        ViewOptions { pool: Some(p.into()), ..ViewOptions::default() }
    }

    #[test]
    fn conventions_give_the_same_mask() {
        let own = parse(r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"loss_mask":[0,1,1,0]}"#, &pool("A")).unwrap();
        let trl =
            parse(r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"assistant_masks":[0,1,1,0]}"#, &pool("A")).unwrap();
        let hf =
            parse(r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"labels":[-100,6,7,-100]}"#, &pool("A")).unwrap();
        let shifted = parse(
            r#"{"instance_id":"a__b-1","input_ids":[5,6,7,8],"labels":[6,7,-100,-100],"labels_shifted":true}"#,
            &pool("A"),
        )
        .unwrap();
        for v in [&trl, &hf, &shifted] {
            assert_eq!(v.loss_mask, own.loss_mask);
        }
        assert_eq!((own.mask_source, hf.mask_source, shifted.mask_source), ("loss_mask", "labels", "labels_shifted"));
        assert_eq!(own.family.as_deref(), Some("a__b"));
        assert_eq!(own.view_id, "A:a__b-1:1");
    }

    #[test]
    fn shifted_labels_must_be_declared_and_conventions_must_agree() {
        let err =
            parse(r#"{"instance_id":"x","input_ids":[5,6,7,8],"labels":[6,7,-100,-100]}"#, &pool("A")).unwrap_err();
        assert!(err.contains("field `labels`: labels[0] equals input_ids[1]: the labels look pre-shifted"), "{err}");
        let err = parse(r#"{"instance_id":"x","input_ids":[5,6],"labels":[-100,9]}"#, &pool("A")).unwrap_err();
        assert!(err.contains("labels[1] = 9 is neither -100 nor the token"), "{err}");
        let err = parse(
            r#"{"instance_id":"x","input_ids":[5,6,7],"assistant_masks":[0,1,1],"labels":[-100,6,-100]}"#,
            &pool("A"),
        )
        .unwrap_err();
        assert!(err.contains("disagrees with assistant_masks at position 2"), "{err}");
        let err = parse(r#"{"instance_id":"x","input_ids":[5]}"#, &pool("A")).unwrap_err();
        assert!(err.contains("field `loss_mask`: missing"), "{err}");
        let err = parse(r#"{"instance_id":"x","input_ids":[5],"loss_mask":[1]}"#, &ViewOptions::default()).unwrap_err();
        assert!(err.contains("field `pool`: missing"), "{err}");
    }

    /// docs/formats.md: several conventions on one line must agree — every pair, the
    /// error naming file, line and the field that disagrees.
    #[test]
    fn mask_conventions_that_disagree_are_a_load_error_for_every_pair() {
        let line = |fields: &str| format!(r#"{{"instance_id":"x","input_ids":[5,6,7,8],{fields}}}"#);
        let cases = [
            (
                r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,0,0]"#,
                "v.jsonl:1: field `assistant_masks`: disagrees with loss_mask at position 2 (assistant_masks 0, loss_mask 1)",
            ),
            (
                r#""loss_mask":[0,1,1,0],"labels":[-100,6,-100,-100]"#,
                "v.jsonl:1: field `labels`: disagrees with loss_mask at position 2 (labels -100, loss_mask 1)",
            ),
            (
                r#""assistant_masks":[0,1,1,0],"labels":[5,6,7,-100]"#,
                "v.jsonl:1: field `labels`: disagrees with assistant_masks at position 0 (labels supervised, assistant_masks 0)",
            ),
            // all three: loss_mask and labels agree, assistant_masks does not
            (
                r#""loss_mask":[0,1,1,0],"assistant_masks":[1,1,1,0],"labels":[-100,6,7,-100]"#,
                "v.jsonl:1: field `assistant_masks`: disagrees with loss_mask at position 0",
            ),
            // only assistant_masks and labels, disagreeing
            (
                r#""assistant_masks":[0,0,1,1],"labels":[-100,6,7,-100]"#,
                "v.jsonl:1: field `labels`: disagrees with assistant_masks at position 1",
            ),
            // shifted labels count as labels
            (
                r#""loss_mask":[0,1,1,0],"labels":[6,-100,-100,-100],"labels_shifted":true"#,
                "v.jsonl:1: field `labels`: disagrees with loss_mask at position 2 (labels_shifted -100, loss_mask 1)",
            ),
            // lengths disagree
            (
                r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,1]"#,
                "v.jsonl:1: field `assistant_masks`: has 3 values, loss_mask has 4: the conventions disagree",
            ),
            // the same supervised positions, other values: both masks are taken as given
            (
                r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,1,2]"#,
                "v.jsonl:1: field `assistant_masks`: disagrees with loss_mask at position 3 (assistant_masks 2, loss_mask 0)",
            ),
        ];
        for (fields, want) in cases {
            let err = parse(&line(fields), &pool("A")).unwrap_err();
            assert!(err.contains(want), "{fields}: {err}");
        }
        // agreeing conventions load, the first given is stored
        let all =
            parse(&line(r#""loss_mask":[0,1,1,0],"assistant_masks":[0,1,1,0],"labels":[-100,6,7,-100]"#), &pool("A"))
                .unwrap();
        assert_eq!((all.mask_source, all.loss_mask), ("loss_mask", vec![0, 1, 1, 0]));
        let two = parse(&line(r#""assistant_masks":[0,1,1,0],"labels":[-100,6,7,-100]"#), &pool("A")).unwrap();
        assert_eq!(two.mask_source, "assistant_masks");
    }

    #[test]
    fn span_ends_are_declared_never_guessed() {
        let line = r#"{"instance_id":"x","input_ids":[1,2,3,4],"loss_mask":[0,0,1,1],
            "message_spans":[{"index":0,"role":"user","start":0,"end":1},{"index":1,"role":"assistant","start":2,"end":3}]}"#;
        let err = parse(line, &pool("A")).unwrap_err();
        assert!(err.contains("field `span_end`"), "{err}");
        let inclusive = parse(line, &ViewOptions { span_end: Some(SpanEnd::Inclusive), ..pool("A") }).unwrap();
        assert_eq!(inclusive.spans[1], (1, "assistant".to_string(), 2, 4));
        let exclusive =
            parse(&line.replace("\"loss_mask\"", "\"span_end\":\"exclusive\",\"loss_mask\""), &pool("A")).unwrap();
        assert_eq!(exclusive.spans[1], (1, "assistant".to_string(), 2, 3));
    }

    #[test]
    fn runs_and_families() {
        assert_eq!(supervised_runs(&[0, 1, 1, 0, 1, 2, 1]), vec![(1, 3), (4, 5), (6, 7)]);
        assert_eq!(supervised_runs(&[]), vec![]);
    }
}
