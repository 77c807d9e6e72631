//! Segment-level mask audit (issue 9): which parts of each rendered message a view trains.
//!
//! A chat template renders each message as a role header (`<|im_start|>assistant\n`), a
//! body and an end of turn (`<|im_end|>` and the newline after it); an assistant body may
//! hold blocks between paired tokens (`<think>…</think>`, `<tool_call>…</tool_call>`)
//! besides its visible text. This module cuts every message span of a view into those
//! segments from the view's own token ids and the tokenizer's added tokens — no token id
//! and no template is written in the code — and stores them as ranges in
//! `sft_view_segments`, in the load transaction of `load views --tokenizer T`. The views
//! `sql/sft/sft_segment_*_v1.sql` intersect the ranges with the supervised runs.
//!
//! # Rules (derivation `segments-1`)
//! Token classes come from the tokenizer: an added token marked `special` is a *turn
//! delimiter* (Qwen3: `<|im_start|>`, `<|im_end|>`, `<|endoftext|>`, ...), unless it is
//! one of a *pair* of added tokens `<X>` / `</X>` (Qwen3: `think`, `tool_call`,
//! `tool_response`), which delimit blocks whether marked special or not. Every other
//! token is decoded once (per distinct id) to tell white space and newlines.
//!
//! Each message span `[start, end)` (clamped to the sequence; an empty or inverted span
//! gets no segment) is cut, in order:
//! - `header`: only when the span opens with a turn delimiter: from the span start
//!   through the first token whose text holds a newline, within the first
//!   [`HEADER_LIMIT`] tokens and before any block token; without such a newline, the
//!   leading run of turn delimiters. (`<|im_start|>assistant\n` is 3 tokens in Qwen3; the
//!   second of two consecutive tool messages, rendered inside one turn, has none.)
//! - `end_of_turn`: in the trailing run of turn delimiters and white-space tokens after
//!   the header, from the first turn delimiter to the span end (`<|im_end|>\n`); none
//!   when that run holds no delimiter (a truncated message, or a tool message whose turn
//!   the next tool message closes).
//! - the body between them: for `assistant` spans, each block from `<X>` through its
//!   matching `</X>` and the white-space tokens right after it (`</think>\n\n` is
//!   template glue) is segment `thinking` for `think` and `X` otherwise (`tool_call`); a
//!   block left open runs to the end of the body; the rest is `text`. For every other
//!   role the body is one `content` segment (a tool response's `<tool_response>` tags
//!   included).
//!
//! Positions covered by no span are one `outside` segment per gap. Overlapping spans
//! (a contract failure) are each cut on their own. Work is O(tokens): one class lookup
//! per position, one decode per distinct token id.

use anyhow::{Context, Result};
use duckdb::Connection;
use duckdb::arrow::array::{
    Array, ArrayRef, Int32Array, Int32Builder, ListArray, RecordBatch, StringArray, StringBuilder,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The version of the rules above, recorded in `sft_segment_files.rules`.
pub const DERIVATION: &str = "segments-1";

/// Tokens a role header may span at most (the same bound as the header read by
/// `sft_assistant_supervision_v1`).
pub const HEADER_LIMIT: usize = 16;

/// Segment names that are not blocks.
pub const HEADER: &str = "header";
pub const TEXT: &str = "text";
pub const CONTENT: &str = "content";
pub const END_OF_TURN: &str = "end_of_turn";
pub const OUTSIDE: &str = "outside";

/// What one token is to the cutter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A special added token outside the block pairs.
    Delimiter,
    /// `<X>` of block pair `b`.
    Open(u16),
    /// `</X>` of block pair `b`.
    Close(u16),
    /// Decodes to white space only (`newline`: it holds `\n`).
    Blank { newline: bool },
    /// Anything else, ids outside the vocabulary included.
    Text { newline: bool },
}

impl Class {
    fn newline(self) -> bool {
        matches!(self, Class::Blank { newline: true } | Class::Text { newline: true })
    }

    /// Packed for the per-id cache; 0 is "not looked at yet".
    fn pack(self) -> u32 {
        match self {
            Class::Delimiter => 1,
            Class::Blank { newline } => 2 + newline as u32,
            Class::Text { newline } => 4 + newline as u32,
            Class::Open(b) => 0x1_0000 | b as u32,
            Class::Close(b) => 0x2_0000 | b as u32,
        }
    }

    fn unpack(code: u32) -> Class {
        match code {
            1 => Class::Delimiter,
            2 | 3 => Class::Blank { newline: code == 3 },
            4 | 5 => Class::Text { newline: code == 5 },
            c if c & 0x1_0000 != 0 => Class::Open(c as u16),
            c => Class::Close(c as u16),
        }
    }
}

/// A paired block found in the tokenizer.
#[derive(Debug, Clone)]
struct Block {
    /// `X` of `<X>` / `</X>`.
    tag: String,
    /// Its segment name: `thinking` for `think`, else the tag (prefixed `block_` if the
    /// tag is one of the other segment names).
    segment: String,
}

/// The tokenizer-level part of the derivation: the tokenizer, its SHA-256, its turn
/// delimiters and block pairs. Build once per load; [`Segmenter::cutter`] per file.
pub struct Segmenter {
    tokenizer: tokenizers::Tokenizer,
    sha256: String,
    /// Classes of the added tokens that matter: delimiters, opens and closes.
    added: HashMap<u32, Class>,
    blocks: Vec<Block>,
    /// Content of every added token, for the rules record.
    contents: HashMap<u32, String>,
}

impl std::fmt::Debug for Segmenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segmenter").field("sha256", &self.sha256).field("blocks", &self.blocks).finish()
    }
}

impl Segmenter {
    /// Reads the turn delimiters and block pairs from `tokenizer`'s added tokens;
    /// `sha256` is the tokenizer.json's, recorded beside the segments.
    pub fn new(tokenizer: tokenizers::Tokenizer, sha256: String) -> Self {
        let decoder = tokenizer.get_added_tokens_decoder();
        let by_content: HashMap<&str, u32> = decoder.iter().map(|(id, t)| (t.content.as_str(), *id)).collect();
        let mut opens: Vec<(&str, u32, u32)> = by_content
            .iter()
            .filter_map(|(content, id)| {
                let tag = content.strip_prefix('<')?.strip_suffix('>')?;
                let plain = !tag.is_empty() && !tag.contains(['<', '>', '/']);
                let close = by_content.get(format!("</{tag}>").as_str())?;
                plain.then_some((tag, *id, *close))
            })
            .collect();
        opens.sort();
        let mut added = HashMap::new();
        let mut blocks = Vec::new();
        for (b, (tag, open, close)) in opens.into_iter().enumerate() {
            let segment = match tag {
                "think" => "thinking".to_string(),
                HEADER | TEXT | CONTENT | END_OF_TURN | OUTSIDE => format!("block_{tag}"),
                other => other.to_string(),
            };
            added.insert(open, Class::Open(b as u16));
            added.insert(close, Class::Close(b as u16));
            blocks.push(Block { tag: tag.to_string(), segment });
        }
        for (id, token) in &decoder {
            if token.special && !added.contains_key(id) {
                added.insert(*id, Class::Delimiter);
            }
        }
        let contents = decoder.into_iter().map(|(id, t)| (id, t.content)).collect();
        Segmenter { tokenizer, sha256, added, blocks, contents }
    }

    /// The tokenizer.json's SHA-256 given to [`Segmenter::new`].
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// A cutter with an empty per-id cache and zero tallies.
    pub fn cutter(&self) -> Cutter<'_> {
        let mut cache = vec![0u32; self.tokenizer.get_vocab_size(true)];
        for (id, class) in &self.added {
            if let Some(slot) = cache.get_mut(*id as usize) {
                *slot = class.pack();
            }
        }
        Cutter { seg: self, cache, opened: BTreeMap::new(), closed: BTreeMap::new() }
    }

    fn content(&self, id: u32) -> String {
        self.contents.get(&id).cloned().unwrap_or_else(|| format!("id {id}"))
    }
}

/// One message span of a view, as stored in `sft_view_spans` (`[start, end)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub ordinal: i32,
    pub msg_index: i32,
    pub role: String,
    pub start: i64,
    pub end: i64,
}

/// One segment range `[start, end)`: of `spans[span]`, or outside every span (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment<'s> {
    pub span: Option<usize>,
    pub segment: &'s str,
    pub start: i64,
    pub end: i64,
}

/// Cuts views with one [`Segmenter`]: caches each token id's class (decoded once) and
/// tallies which tokens opened headers and closed turns.
pub struct Cutter<'s> {
    seg: &'s Segmenter,
    cache: Vec<u32>,
    opened: BTreeMap<u32, u64>,
    closed: BTreeMap<u32, u64>,
}

impl<'s> Cutter<'s> {
    fn class(&mut self, id: i64) -> Class {
        let Ok(id) = u32::try_from(id) else { return Class::Text { newline: false } };
        let Some(slot) = self.cache.get(id as usize) else { return Class::Text { newline: false } };
        if *slot != 0 {
            return Class::unpack(*slot);
        }
        let class = match self.seg.tokenizer.id_to_token(id) {
            None => Class::Text { newline: false },
            Some(_) => match self.seg.tokenizer.decode(&[id], false) {
                Ok(text) if !text.is_empty() && text.trim().is_empty() => Class::Blank { newline: text.contains('\n') },
                Ok(text) => Class::Text { newline: text.contains('\n') },
                Err(_) => Class::Text { newline: false },
            },
        };
        self.cache[id as usize] = class.pack();
        class
    }

    /// Cuts a view: every span of `spans` into segments (see the module docs), and the
    /// positions outside every span into `outside` segments. `ids` are the view's token
    /// ids. Segments come sorted by start, then span; the ranges of one span tile it.
    pub fn cut(&mut self, ids: &[i64], spans: &[Span]) -> Vec<Segment<'s>> {
        let n = ids.len() as i64;
        let mut out = Vec::new();
        let mut covered = Vec::new();
        for (k, span) in spans.iter().enumerate() {
            let (s, e) = (span.start.clamp(0, n), span.end.clamp(0, n));
            if s < e {
                covered.push((s, e));
                self.cut_span(ids, k, span.role == "assistant", s as usize, e as usize, &mut out);
            }
        }
        covered.sort_unstable();
        let mut at = 0;
        for (s, e) in covered {
            if s > at {
                out.push(Segment { span: None, segment: OUTSIDE, start: at, end: s });
            }
            at = at.max(e);
        }
        if at < n {
            out.push(Segment { span: None, segment: OUTSIDE, start: at, end: n });
        }
        out.sort_by_key(|g| (g.start, g.span));
        out
    }

    fn cut_span(&mut self, ids: &[i64], k: usize, assistant: bool, s: usize, e: usize, out: &mut Vec<Segment<'s>>) {
        let mut push = |segment: &'s str, a: usize, b: usize| {
            if a >= b {
                return;
            }
            match out.last_mut() {
                Some(last) if last.span == Some(k) && last.segment == segment && last.end == a as i64 => {
                    last.end = b as i64
                }
                _ => out.push(Segment { span: Some(k), segment, start: a as i64, end: b as i64 }),
            }
        };
        // header
        let mut h = s;
        if self.class(ids[s]) == Class::Delimiter {
            let limit = e.min(s + HEADER_LIMIT);
            let mut through = None;
            for (i, id) in ids.iter().enumerate().take(limit).skip(s) {
                match self.class(*id) {
                    Class::Open(_) | Class::Close(_) => break,
                    c if c.newline() => {
                        through = Some(i + 1);
                        break;
                    }
                    _ => {}
                }
            }
            h = match through {
                Some(end) => end,
                None => {
                    let mut j = s;
                    while j < e && self.class(ids[j]) == Class::Delimiter {
                        j += 1;
                    }
                    j
                }
            };
            *self.opened.entry(ids[s] as u32).or_default() += 1;
        }
        // end of turn: the first delimiter of the trailing run of delimiters and blanks
        let mut eot = e;
        let mut j = e;
        while j > h {
            match self.class(ids[j - 1]) {
                Class::Delimiter => eot = j - 1,
                Class::Blank { .. } => {}
                _ => break,
            }
            j -= 1;
        }
        if eot < e {
            *self.closed.entry(ids[eot] as u32).or_default() += 1;
        }
        push(HEADER, s, h);
        if assistant {
            let seg = self.seg;
            let (mut i, mut text_from) = (h, h);
            while i < eot {
                let Class::Open(b) = self.class(ids[i]) else {
                    i += 1;
                    continue;
                };
                push(TEXT, text_from, i);
                let mut depth = 0usize;
                let mut end = eot;
                for (j, id) in ids.iter().enumerate().take(eot).skip(i) {
                    match self.class(*id) {
                        Class::Open(x) if x == b => depth += 1,
                        Class::Close(x) if x == b => {
                            depth -= 1;
                            if depth == 0 {
                                end = j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                while end < eot && matches!(self.class(ids[end]), Class::Blank { .. }) {
                    end += 1;
                }
                push(&seg.blocks[b as usize].segment, i, end);
                (i, text_from) = (end, end);
            }
            push(TEXT, text_from, eot);
        } else {
            push(CONTENT, h, eot);
        }
        push(END_OF_TURN, eot, e);
    }

    /// The rules record: derivation, the tokenizer's delimiters and blocks, and the
    /// tokens that opened headers and closed turns in what was cut, with counts.
    pub fn rules(&self) -> serde_json::Value {
        let mut delimiters: Vec<String> = self
            .seg
            .added
            .iter()
            .filter(|(_, c)| **c == Class::Delimiter)
            .map(|(id, _)| self.seg.content(*id))
            .collect();
        delimiters.sort();
        let tally = |m: &BTreeMap<u32, u64>| -> serde_json::Map<String, serde_json::Value> {
            m.iter().map(|(id, n)| (self.seg.content(*id), serde_json::json!(n))).collect()
        };
        serde_json::json!({
            "derivation": DERIVATION,
            "header_limit": HEADER_LIMIT,
            "turn_delimiters": delimiters,
            "blocks": self.seg.blocks.iter().map(|b| serde_json::json!({"open": format!("<{}>", b.tag), "close": format!("</{}>", b.tag), "segment": b.segment})).collect::<Vec<_>>(),
            "headers_opened_by": tally(&self.opened),
            "turns_closed_by": tally(&self.closed),
        })
    }
}

/// What [`derive_file`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedFile {
    pub views: i64,
    pub segments: i64,
}

/// Segment rows per appended Arrow batch.
const BATCH: usize = 65_536;

/// Refuses a view that declares another tokenizer than `segmenter`'s
/// (`origin.tokenizer_sha256`, as `views build` writes it): its segments would be cut
/// with another tokenizer's tokens. `origin` is the view's origin as JSON text; `line`
/// its line in `path`. The load calls it for each view in file order, so this error comes
/// before any error of a later line; [`derive_file`] checks the stored views again.
pub fn check_declared_tokenizer(
    path: &std::path::Path,
    line: i64,
    origin: Option<&str>,
    segmenter: &Segmenter,
) -> Result<(), crate::ingest::InputError> {
    let declared = origin.and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok()).and_then(|o| {
        match o.get("tokenizer_sha256")? {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    });
    match declared {
        // (hex digits in either case name the same hash)
        Some(declared) if !declared.eq_ignore_ascii_case(&segmenter.sha256) => {
            Err(mismatch(path, line, &declared, segmenter))
        }
        _ => Ok(()),
    }
}

/// The error for a view made with tokenizer `declared` loaded with `segmenter`.
fn mismatch(path: &std::path::Path, line: i64, declared: &str, segmenter: &Segmenter) -> crate::ingest::InputError {
    crate::ingest::InputError::at(
        path,
        Some(line as u64),
        Some("origin.tokenizer_sha256"),
        format!(
            "the view was made with tokenizer {declared}, --tokenizer is {}: its segments would be cut with another \
             tokenizer's tokens; give the tokenizer the views were made with",
            segmenter.sha256
        ),
    )
}

/// Derives the segments of every view of ingest file `file_id` read from `path`
/// (already written to `sft_views` / `sft_view_spans` on `conn`, in the caller's
/// transaction), appends them to `sft_view_segments` and records the file, tokenizer and
/// rules in `sft_segment_files`.
///
/// Errors: a view declares another tokenizer than the segmenter's
/// (`origin.tokenizer_sha256`, as `views build` writes it: its segments would be cut with
/// the wrong tokens; an [`InputError`](crate::ingest::InputError) naming the line); a
/// DuckDB error reading the views or writing the segments.
pub fn derive_file(
    conn: &Connection,
    path: &std::path::Path,
    file_id: i32,
    segmenter: &Segmenter,
) -> Result<DerivedFile> {
    {
        use duckdb::OptionalExt;
        let other: Option<(i64, String)> = conn
            .query_row(
                "select record, declared from (select record, json_extract_string(origin, '$.tokenizer_sha256') as declared                  from sft_views where file_id = ? and json_valid(origin)) where lower(declared) <> lower(?) order by record limit 1",
                duckdb::params![file_id, segmenter.sha256],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((line, declared)) = other {
            return Err(mismatch(path, line, &declared, segmenter).into());
        }
    }
    let mut spans: HashMap<String, Vec<Span>> = HashMap::new();
    {
        let mut stmt = conn.prepare(
            "select s.view_id, s.ordinal, s.msg_index, s.role, s.start_pos, s.end_pos from sft_view_spans as s \
             join sft_views as v using (view_id) where v.file_id = ? order by s.view_id, s.ordinal",
        )?;
        let rows = stmt.query_map([file_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Span { ordinal: r.get(1)?, msg_index: r.get(2)?, role: r.get(3)?, start: r.get(4)?, end: r.get(5)? },
            ))
        })?;
        for row in rows {
            let (view, span) = row?;
            spans.entry(view).or_default().push(span);
        }
    }
    let mut cutter = segmenter.cutter();
    let mut writer = SegmentWriter::new(conn)?;
    let (mut views, mut segments) = (0i64, 0i64);
    let mut stmt = conn.prepare("select view_id, input_ids from sft_views where file_id = ? order by view_id")?;
    let none = Vec::new();
    for batch in stmt.query_arrow([file_id])? {
        let ids_of = batch.column(0).as_any().downcast_ref::<StringArray>().context("view_id is not text")?;
        let lists = batch.column(1).as_any().downcast_ref::<ListArray>().context("input_ids is not a list")?;
        for row in 0..batch.num_rows() {
            let view_id = ids_of.value(row);
            let values = lists.value(row);
            let values = values.as_any().downcast_ref::<Int32Array>().context("input_ids is not a list of integers")?;
            let ids: Vec<i64> = values.values().iter().map(|v| *v as i64).collect();
            let view_spans = spans.get(view_id).unwrap_or(&none);
            for g in cutter.cut(&ids, view_spans) {
                writer.push(view_id, g.span.map(|k| &view_spans[k]), g.segment, g.start, g.end)?;
                segments += 1;
            }
            views += 1;
        }
    }
    writer.finish()?;
    conn.execute(
        "insert into sft_segment_files (file_id, tokenizer_sha256, rules, views, segments) values (?, ?, ?, ?, ?)",
        duckdb::params![file_id, segmenter.sha256, cutter.rules().to_string(), views, segments],
    )?;
    Ok(DerivedFile { views, segments })
}

/// Derives the segments of every loaded view file that has none yet (loaded without
/// `--tokenizer`), all in one transaction: `sphragis views segments --tokenizer T`. The
/// views of those files that have no vocabulary size get the tokenizer's (added tokens
/// included) and its SHA-256 (`sft_views.vocab_size`, `tokenizer_sha256`), so the
/// contract's vocabulary check runs on them instead of saying "not checked".
/// Returns `(file_id, path, what was written)` per file, in file order; empty when every
/// view file already has segments.
///
/// Errors (nothing is written): no view is loaded; a view of such a file was loaded with another tokenizer
/// (`sft_views.tokenizer_sha256`) or declares one (`origin.tokenizer_sha256`), named by
/// file and line; a DuckDB error.
pub fn derive_missing(conn: &Connection, segmenter: &Segmenter) -> Result<Vec<(i32, String, DerivedFile)>> {
    let views: i64 = conn.query_row("select count(*) from sft_views", [], |r| r.get(0))?;
    if views == 0 {
        anyhow::bail!(
            "no views are loaded: load them with `sphragis load views FILE --tokenizer T`, which cuts their segments"
        );
    }
    let files: Vec<(i32, String)> = {
        let mut stmt = conn.prepare(
            "select l.file_id, l.path from ingest_log as l \
             where l.file_id in (select file_id from sft_views) \
               and l.file_id not in (select file_id from sft_segment_files) order by l.file_id",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?
    };
    conn.execute_batch("begin transaction")?;
    let result = (|| -> Result<Vec<(i32, String, DerivedFile)>> {
        let mut done = Vec::new();
        for (file_id, path) in files {
            use duckdb::OptionalExt;
            let other: Option<(i64, String)> = conn
                .query_row(
                    "select record, tokenizer_sha256 from sft_views where file_id = ? and tokenizer_sha256 <> ? \
                     order by record limit 1",
                    duckdb::params![file_id, segmenter.sha256],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((line, loaded)) = other {
                return Err(crate::ingest::InputError::at(
                    std::path::Path::new(&path),
                    Some(line as u64),
                    Some("tokenizer"),
                    format!(
                        "the view was loaded with tokenizer {loaded}, --tokenizer is {}: its segments would be cut \
                         with another tokenizer's tokens",
                        segmenter.sha256
                    ),
                )
                .into());
            }
            let derived = derive_file(conn, std::path::Path::new(&path), file_id, segmenter)?;
            // the checks that needed the tokenizer run now: the vocabulary bound (the
            // contract's `vocab`) of views loaded without one, with the tokenizer recorded
            conn.execute(
                "update sft_views set vocab_size = ?, tokenizer_sha256 = ? where file_id = ? and vocab_size is null",
                duckdb::params![segmenter.tokenizer.get_vocab_size(true) as i64, segmenter.sha256, file_id],
            )?;
            done.push((file_id, path, derived));
        }
        Ok(done)
    })();
    match result {
        Ok(done) => {
            conn.execute_batch("commit")?;
            Ok(done)
        }
        Err(e) => {
            let _ = conn.execute_batch("rollback");
            Err(e)
        }
    }
}

/// Buffers segment rows into Arrow batches for the appender.
struct SegmentWriter<'c> {
    conn: &'c Connection,
    strings: [StringBuilder; 3],
    ints: [Int32Builder; 4],
    rows: usize,
}

impl<'c> SegmentWriter<'c> {
    fn new(conn: &'c Connection) -> Result<Self> {
        Ok(Self { conn, strings: Default::default(), ints: Default::default(), rows: 0 })
    }

    fn push(&mut self, view_id: &str, span: Option<&Span>, segment: &str, start: i64, end: i64) -> Result<()> {
        self.strings[0].append_value(view_id);
        self.ints[0].append_option(span.map(|s| s.ordinal));
        self.ints[1].append_option(span.map(|s| s.msg_index));
        self.strings[1].append_option(span.map(|s| s.role.as_str()));
        self.strings[2].append_value(segment);
        // positions are clamped to the sequence, whose length fits an i32
        self.ints[2].append_value(start as i32);
        self.ints[3].append_value(end as i32);
        self.rows += 1;
        if self.rows >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let [view_id, role, segment] = self.strings.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
        let [ordinal, msg_index, start, end] = self.ints.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
        let batch = RecordBatch::try_from_iter(vec![
            ("view_id", view_id),
            ("ordinal", ordinal),
            ("msg_index", msg_index),
            ("role", role),
            ("segment", segment),
            ("start_pos", start),
            ("end_pos", end),
        ])?;
        let mut appender = self.conn.appender("sft_view_segments")?;
        appender.append_record_batch(batch).context("writing view segments")?;
        appender.flush().context("writing view segments")?;
        self.rows = 0;
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.flush()
    }
}

#[cfg(test)]
mod tests;
