//! Writing loaded views: [`ViewWriter`] buffers views and appends them as Arrow record
//! batches (the views with their ids and masks as list columns, their message spans, their
//! supervised runs), for JSON lines and Parquet alike.

use super::{SpanEnd, View, packing, supervised_runs};
use anyhow::{Context, Result};
use duckdb::Connection;
use duckdb::arrow::array::{
    ArrayBuilder, ArrayRef, Int8Builder, Int32Builder, Int64Builder, ListBuilder, RecordBatch, StringBuilder,
};
use std::sync::Arc;

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
        packing::append(self.conn, self.file_id, &views)?;
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
