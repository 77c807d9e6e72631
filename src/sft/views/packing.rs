//! Packed rows (issue 27): one training row holding several conversations.
//!
//! Producers pack conversations into one row to fill the context and say where each
//! starts in one of four ways, all read here:
//!
//! - `seq_lengths`: the length of each packed conversation, in row order (TRL's
//!   `pack_dataset`); they may sum to less than the row, the rest being padding;
//! - `cu_seqlens` (or `cu_seq_lens_q`, Transformers' flash-attention name): cumulative
//!   starts `[0, a, a+b, …, end]` (flash-attention's varlen convention); positions from
//!   `end` on are padding;
//! - `position_ids`: restart at 0 where a conversation starts (TRL's padding-free
//!   collator; Transformers cuts the row where `position_ids == 0`);
//! - `attention_mask` holding segment ids `1,1,…,2,2,…` (LLaMA-Factory `neat_packing`),
//!   0 for padding. An `attention_mask` of only 0 and 1 is an ordinary mask, not packing.
//!
//! Boundaries given two ways must agree, or the load stops naming file, line and field
//! (conventions that contradict each other, as with masks). A row whose boundaries name
//! two or more conversations becomes one [`View`] per conversation, `<view_id>#<index>`,
//! its ids, mask and message spans cut at the boundaries (spans rebased to the
//! conversation, placed by their start); padding is kept in no view and counted. The
//! row's `instance_id` may be an array naming each conversation's instance; a string
//! names the first only, and every conversation then carries it (what the producer
//! declared), with `instance_declared = false` for the rest, which the pack checks report.
//! A row with no boundaries whose message spans restart at index 0 is kept whole and
//! recorded too: its conversations attended to each other.

use super::View;
use crate::ingest::InputError;
use std::path::Path;

/// The boundary fields of a row, as read (each array already narrowed to 32 bits).
#[derive(Debug, Default)]
pub struct Boundaries {
    pub seq_lengths: Option<Vec<i32>>,
    pub cu_seqlens: Option<Vec<i32>>,
    pub cu_seq_lens_q: Option<Vec<i32>>,
    pub position_ids: Option<Vec<i32>>,
    pub attention_mask: Option<Vec<i32>>,
}

/// What a row's packing metadata and spans say, at the row's grain (`sft_view_packs`).
#[derive(Debug, Clone, PartialEq)]
pub struct Pack {
    pub pack_id: String,
    /// The field the boundaries were read from (the first given, in the order of
    /// [`Boundaries`]); `None`: the row gives none.
    pub boundary_source: Option<&'static str>,
    pub n_units: i32,
    pub n_positions: i32,
    pub n_padding: i32,
    pub padding_supervised: i32,
    pub instances_declared: i32,
    pub span_restarts: i32,
    pub spans_crossing: i32,
    pub spans_unplaced: i32,
    /// Conversations after the first whose first span is not message 0 (a boundary
    /// inside a conversation, as "wrapped" packing cuts).
    pub spans_continuing: i32,
    pub position_jumps: i32,
    pub claimed_tokens: Option<i64>,
    pub claimed_supervised: Option<i64>,
    pub record: i64,
}

/// Where a view cut from a packed row sits in it (`sft_view_pack_units`); the first unit also
/// carries the row's [`Pack`].
#[derive(Debug, Clone, PartialEq)]
pub struct PackUnit {
    pub pack_id: String,
    pub index: i32,
    pub start: i32,
    pub end: i32,
    pub instance_declared: bool,
    pub pack: Option<Box<Pack>>,
}

/// The conversations of a row: `[start, end)` ranges in row order, covering `0..covered`
/// without gaps except padding inside (attention_mask 0); positions in no range are
/// padding.
type Units = Vec<(usize, usize)>;

/// The row's conversations: the field they were read from, the ranges, the position jumps.
type Found = (&'static str, Units, i32);

fn from_lengths(lengths: &[i32], n: usize, field: &str) -> Result<Units, String> {
    let mut units = Vec::with_capacity(lengths.len());
    let mut at = 0usize;
    for (i, l) in lengths.iter().enumerate() {
        if *l <= 0 {
            return Err(format!("{field}[{i}] = {l}: a packed conversation has at least one position"));
        }
        units.push((at, at + *l as usize));
        at += *l as usize;
    }
    if at > n {
        return Err(format!("sums to {at}, past the row's {n} input_ids"));
    }
    Ok(units)
}

fn from_cumulative(cu: &[i32], n: usize, field: &str) -> Result<Units, String> {
    if cu.first() != Some(&0) {
        return Err(format!("{field} starts at {}, not 0", cu.first().map_or("nothing".into(), |v| v.to_string())));
    }
    let mut units = Vec::with_capacity(cu.len());
    for (i, pair) in cu.windows(2).enumerate() {
        if pair[1] <= pair[0] {
            return Err(format!("{field}[{}] = {} does not exceed {field}[{i}] = {}", i + 1, pair[1], pair[0]));
        }
        units.push((pair[0] as usize, pair[1] as usize));
    }
    if let Some((_, end)) = units.last()
        && *end > n
    {
        return Err(format!("ends at {end}, past the row's {n} input_ids"));
    }
    Ok(units)
}

/// Transformers' rule: a conversation starts wherever `position_ids` is 0. Also returns
/// the positions that neither restart nor follow the one before by one.
fn from_positions(positions: &[i32], n: usize) -> Result<(Units, i32), String> {
    if positions.len() != n {
        return Err(format!("has {} values, input_ids has {n}", positions.len()));
    }
    if let Some(first) = positions.first()
        && *first != 0
    {
        return Err(format!("position_ids[0] = {first}: a row's first conversation starts at position 0"));
    }
    let mut starts: Vec<usize> = Vec::new();
    let mut jumps = 0;
    for (i, p) in positions.iter().enumerate() {
        if *p < 0 {
            return Err(format!("position_ids[{i}] = {p}: positions are 0 or more"));
        }
        if *p == 0 {
            starts.push(i);
        } else if i > 0 && *p != positions[i - 1].wrapping_add(1) {
            jumps += 1;
        }
    }
    let units = starts.iter().enumerate().map(|(k, s)| (*s, starts.get(k + 1).copied().unwrap_or(n))).collect();
    Ok((units, jumps))
}

/// LLaMA-Factory's segment ids: each maximal run of one id ≥ 1 is a conversation, 0 is
/// padding; an id seen again after another is refused (segments are contiguous).
fn from_segments(mask: &[i32], n: usize) -> Result<Units, String> {
    if mask.len() != n {
        return Err(format!("has {} values, input_ids has {n}", mask.len()));
    }
    let mut units: Units = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut current: Option<(i32, usize)> = None;
    for (i, v) in mask.iter().enumerate() {
        if *v < 0 {
            return Err(format!("attention_mask[{i}] = {v}: segment ids are 0 (padding) or from 1"));
        }
        if current.map(|c| c.0) == Some(*v) {
            continue;
        }
        if let Some((id, start)) = current.take()
            && id > 0
        {
            units.push((start, i));
        }
        if *v > 0 && !seen.insert(*v) {
            return Err(format!("attention_mask[{i}]: segment {v} appears again after another segment"));
        }
        current = Some((*v, i));
    }
    if let Some((id, start)) = current
        && id > 0
    {
        units.push((start, n));
    }
    Ok(units)
}

/// Whether an attention mask carries segment ids rather than 0/1.
fn is_segment_ids(mask: &[i32]) -> bool {
    mask.iter().any(|v| *v > 1 || *v < 0)
}

/// The row's conversations from every boundary field given, checked to agree; with the
/// field read first and the position jumps. `None`: no boundary field.
fn units_of(b: &Boundaries, n: usize) -> Result<Option<Found>, (&'static str, String)> {
    // the fields that can tell padding first: the first given is the boundary source
    let mut found: Vec<(&'static str, Units)> = Vec::new();
    let mut jumps = 0;
    if let Some(l) = &b.seq_lengths {
        found.push(("seq_lengths", from_lengths(l, n, "seq_lengths").map_err(|e| ("seq_lengths", e))?));
    }
    for (field, cu) in [("cu_seqlens", &b.cu_seqlens), ("cu_seq_lens_q", &b.cu_seq_lens_q)] {
        if let Some(cu) = cu {
            found.push((field, from_cumulative(cu, n, field).map_err(|e| (field, e))?));
        }
    }
    if let Some(m) = b.attention_mask.as_ref().filter(|m| is_segment_ids(m)) {
        found.push(("attention_mask", from_segments(m, n).map_err(|e| ("attention_mask", e))?));
    }
    if let Some(p) = &b.position_ids {
        let (units, j) = from_positions(p, n).map_err(|e| ("position_ids", e))?;
        jumps = j;
        found.push(("position_ids", units));
    }
    let Some((first, units)) = found.first() else {
        return Ok(None);
    };
    for (field, other) in &found[1..] {
        let (a, b) = if *field == "position_ids" || *first == "position_ids" {
            // position_ids cannot tell padding: compared on the conversations the other
            // field names
            let covered = if *first == "position_ids" { other } else { units }.last().map_or(0, |u| u.1);
            (clip(units, covered), clip(other, covered))
        } else {
            (units.clone(), other.clone())
        };
        if a != b {
            return Err((field, disagreement(first, &a, &b)));
        }
    }
    Ok(Some((first, units.clone(), jumps)))
}

fn clip(units: &Units, covered: usize) -> Units {
    units.iter().filter(|u| u.0 < covered).map(|u| (u.0, u.1.min(covered))).collect()
}

fn disagreement(first: &str, a: &Units, b: &Units) -> String {
    let show = |u: &Units| u.iter().map(|(s, e)| format!("[{s},{e})")).collect::<Vec<_>>().join(" ");
    format!("names the conversations {}, {first} names {}: the packing metadata disagree", show(b), show(a))
}

/// Cuts a row into its packed conversations (see the module doc). `instance_ids`: what
/// the row's `instance_id` gave (one for a string). Returns the row whole (with a
/// [`PackUnit`] only when its spans restart unannounced) when it packs one conversation.
///
/// Errors name file, line and field: boundaries that contradict the ids' length or each
/// other, an `instance_id` array whose length is not the number of conversations.
pub fn split(
    path: &Path,
    line: u64,
    mut view: View,
    boundaries: &Boundaries,
    instance_ids: InstanceIds,
) -> Result<Vec<View>, InputError> {
    let listed = instance_ids.1;
    let instance_ids = instance_ids.0;
    let err = |field: &str, msg: String| InputError::at(path, Some(line), Some(field), msg);
    let n = view.input_ids.len();
    let found = units_of(boundaries, n).map_err(|(field, e)| err(field, e))?;
    let (source, units, jumps) = match found {
        Some((source, units, jumps)) => (Some(source), units, jumps),
        None => (None, vec![(0, n)], 0),
    };
    // boundaries that name no conversation (`"seq_lengths": []`) for a row with ids: there
    // is no conversation to keep the row's ids, mask and spans in
    if units.is_empty() && n > 0 {
        let field = source.unwrap_or("input_ids");
        return Err(err(field, format!("names no conversation, but the row has {n} input_ids: give each packed one")));
    }
    if listed && instance_ids.len() != units.len() {
        let how = source.map_or(
            "no packing metadata (seq_lengths, cu_seqlens, position_ids or attention_mask segment ids)".to_string(),
            |s| format!("{} conversations by {s}", units.len()),
        );
        return Err(err(
            "instance_id",
            format!(
                "names {} instance{}; the row has {how}: give one instance id per packed conversation",
                instance_ids.len(),
                if instance_ids.len() == 1 { "" } else { "s" }
            ),
        ));
    }
    let unit_of = |pos: i64| units.iter().position(|(s, e)| pos >= *s as i64 && pos < *e as i64);
    // a span whose index restarts at 0 (after a higher one) where no conversation starts
    let mut restarts = 0;
    let mut last_index: Option<i64> = None;
    for (index, _, start, _) in &view.spans {
        if *index == 0 && last_index.is_some_and(|l| l > 0) && !units.iter().any(|(s, _)| *s as i64 == *start) {
            restarts += 1;
        }
        last_index = Some(*index);
    }
    let covered: usize = units.iter().map(|(s, e)| e - s).sum();
    let cut = units.len() > 1 || covered < n;
    if cut && view.loss_mask.len() != n {
        let field = if view.mask_source.starts_with("labels") { "labels" } else { view.mask_source };
        return Err(err(
            field,
            format!(
                "has {} values, input_ids has {n}: a packed row is cut at its boundaries, so its mask must cover its ids",
                view.loss_mask.len()
            ),
        ));
    }
    // positions in no conversation (none without packing metadata: the hot path pays nothing)
    let padding_supervised = if covered == n {
        0
    } else {
        let mut gaps = Vec::new();
        let mut at = 0;
        for (s, e) in &units {
            gaps.push((at, *s));
            at = *e;
        }
        gaps.push((at, n));
        let mask = &view.loss_mask;
        gaps.iter()
            .map(|(s, e)| mask[(*s).min(mask.len())..(*e).min(mask.len())].iter().filter(|v| **v == 1).count())
            .sum()
    };
    let mut pack = Pack {
        pack_id: view.view_id.clone(),
        boundary_source: source,
        n_units: units.len() as i32,
        n_positions: n as i32,
        n_padding: (n - covered) as i32,
        padding_supervised: padding_supervised as i32,
        instances_declared: instance_ids.len() as i32,
        span_restarts: restarts,
        spans_crossing: 0,
        spans_unplaced: 0,
        spans_continuing: 0,
        position_jumps: jumps,
        claimed_tokens: view.claimed_tokens,
        claimed_supervised: view.claimed_supervised,
        record: view.record,
    };
    if !cut {
        let first = instance_ids.into_iter().next();
        if let Some(id) = first {
            view.instance_id = id;
        }
        if restarts > 0 || jumps > 0 {
            view.pack = Some(PackUnit {
                pack_id: view.view_id.clone(),
                index: 0,
                start: 0,
                end: n as i32,
                instance_declared: true,
                pack: Some(Box::new(pack)),
            });
        }
        return Ok(vec![view]);
    }
    let mut spans: Vec<Vec<(i64, String, i64, i64)>> = vec![Vec::new(); units.len()];
    for (index, role, start, end) in std::mem::take(&mut view.spans) {
        // a span outside every conversation (in padding, before 0, past the ids) is kept
        // in the conversation before it (the first for a negative start), where the
        // contract's spans check fails it, and counted
        let u = unit_of(start).unwrap_or_else(|| {
            pack.spans_unplaced += 1;
            units.iter().rposition(|(s, _)| (*s as i64) <= start).unwrap_or(0)
        });
        let (s, e) = units[u];
        if unit_of(start).is_some() && end > e as i64 {
            pack.spans_crossing += 1;
        }
        spans[u].push((index, role, start - s as i64, end - s as i64));
    }
    pack.spans_continuing =
        spans.iter().skip(1).filter(|unit_spans| unit_spans.first().is_some_and(|sp| sp.0 != 0)).count() as i32;
    let row_id = view.view_id.clone();
    let mut pack = Some(Box::new(pack));
    let mut out = Vec::with_capacity(units.len());
    for (k, ((s, e), unit_spans)) in units.iter().zip(spans).enumerate() {
        let declared = listed || k == 0;
        let instance_id = if listed { instance_ids[k].clone() } else { view.instance_id.clone() };
        let family = if view.family_given { view.family.clone() } else { crate::sft::family::family_of(&instance_id) };
        let m_end = (*e).min(view.loss_mask.len());
        out.push(View {
            view_id: format!("{row_id}#{k}"),
            pool: view.pool.clone(),
            instance_id,
            family,
            family_given: view.family_given,
            input_ids: view.input_ids[*s..*e].to_vec(),
            loss_mask: if *s < m_end { view.loss_mask[*s..m_end].to_vec() } else { Vec::new() },
            mask_source: view.mask_source,
            span_end: view.span_end,
            spans: unit_spans,
            keep_msgs: view.keep_msgs.clone(),
            // the ledger is the row's: kept on the pack (sft_view_packs), checked there
            claimed_tokens: None,
            claimed_supervised: None,
            declared_sha256: view.declared_sha256.clone(),
            declared_path: view.declared_path.clone(),
            origin: view.origin.clone(),
            record: view.record,
            pack: Some(PackUnit {
                pack_id: row_id.clone(),
                index: k as i32,
                start: *s as i32,
                end: *e as i32,
                instance_declared: declared,
                pack: pack.take(),
            }),
        });
    }
    Ok(out)
}

/// A view line's `instance_id`: a string, or an array of strings naming each packed
/// conversation's instance in row order.
#[derive(Debug, Default)]
pub struct InstanceIds(pub Vec<String>, pub bool);

impl InstanceIds {
    /// The ids, at least one (an empty array is refused as it is read).
    pub fn ids(&self) -> &[String] {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for InstanceIds {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = InstanceIds;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string, or an array of strings (one per packed conversation)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<InstanceIds, E> {
                Ok(InstanceIds(vec![v.to_string()], false))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<InstanceIds, A::Error> {
                let mut ids = Vec::new();
                while let Some(id) = seq.next_element::<String>()? {
                    ids.push(id);
                }
                if ids.is_empty() {
                    return Err(serde::de::Error::custom("an empty array names no instance"));
                }
                Ok(InstanceIds(ids, true))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// Appends the pack rows of `views` (the [`PackUnit`]s of views cut from packed rows)
/// to `sft_view_packs` and `sft_view_pack_units`, in the load's transaction.
pub fn append(conn: &duckdb::Connection, file_id: i32, views: &[View]) -> anyhow::Result<()> {
    use duckdb::arrow::array::{
        ArrayBuilder, ArrayRef, BooleanBuilder, Int32Builder, Int64Builder, RecordBatch, StringBuilder,
    };
    use std::sync::Arc;
    let units: Vec<(&str, &PackUnit)> =
        views.iter().filter_map(|v| v.pack.as_ref().map(|p| (v.view_id.as_str(), p))).collect();
    if units.is_empty() {
        return Ok(());
    }
    let (mut pack_id, mut source) = (StringBuilder::new(), StringBuilder::new());
    let mut ints: [Int32Builder; 11] = Default::default();
    let mut bigs: [Int64Builder; 2] = Default::default();
    let (mut unit_view, mut unit_pack) = (StringBuilder::new(), StringBuilder::new());
    let mut unit_ints: [Int32Builder; 3] = Default::default();
    let mut declared = BooleanBuilder::new();
    for (view_id, unit) in &units {
        if let Some(p) = &unit.pack {
            pack_id.append_value(&p.pack_id);
            source.append_option(p.boundary_source);
            let values = [
                p.n_units,
                p.n_positions,
                p.n_padding,
                p.padding_supervised,
                p.instances_declared,
                p.span_restarts,
                p.spans_crossing,
                p.spans_unplaced,
                p.spans_continuing,
                p.position_jumps,
                p.record as i32,
            ];
            for (b, v) in ints.iter_mut().zip(values) {
                b.append_value(v);
            }
            bigs[0].append_option(p.claimed_tokens);
            bigs[1].append_option(p.claimed_supervised);
        }
        if is_cut(unit) {
            unit_view.append_value(view_id);
            unit_pack.append_value(&unit.pack_id);
            for (b, v) in unit_ints.iter_mut().zip([unit.index, unit.start, unit.end]) {
                b.append_value(v);
            }
            declared.append_value(unit.instance_declared);
        }
    }
    let n_packs = pack_id.len();
    let [
        n_units,
        n_positions,
        n_padding,
        padding_supervised,
        instances,
        restarts,
        crossing,
        unplaced,
        continuing,
        jumps,
        record,
    ] = ints.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
    let [claimed_tokens, claimed_supervised] = bigs.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
    let file_ids: ArrayRef = Arc::new(duckdb::arrow::array::Int32Array::from(vec![file_id; n_packs]));
    let batch = RecordBatch::try_from_iter(vec![
        ("pack_id", Arc::new(pack_id.finish()) as ArrayRef),
        ("boundary_source", Arc::new(source.finish()) as ArrayRef),
        ("n_units", n_units),
        ("n_positions", n_positions),
        ("n_padding", n_padding),
        ("padding_supervised", padding_supervised),
        ("instances_declared", instances),
        ("span_restarts", restarts),
        ("spans_crossing", crossing),
        ("spans_unplaced", unplaced),
        ("spans_continuing", continuing),
        ("position_jumps", jumps),
        ("claimed_tokens", claimed_tokens),
        ("claimed_supervised", claimed_supervised),
        ("file_id", file_ids),
        ("record", record),
    ])?;
    let mut appender = conn.appender("sft_view_packs")?;
    appender.append_record_batch(batch)?;
    appender.flush()?;
    if !unit_view.is_empty() {
        let [index, start, end] = unit_ints.each_mut().map(|b| Arc::new(b.finish()) as ArrayRef);
        let batch = RecordBatch::try_from_iter(vec![
            ("view_id", Arc::new(unit_view.finish()) as ArrayRef),
            ("pack_id", Arc::new(unit_pack.finish()) as ArrayRef),
            ("pack_index", index),
            ("start_pos", start),
            ("end_pos", end),
            ("instance_declared", Arc::new(declared.finish()) as ArrayRef),
        ])?;
        let mut appender = conn.appender("sft_view_pack_units")?;
        appender.append_record_batch(batch)?;
        appender.flush()?;
    }
    Ok(())
}

/// Whether the unit is a view cut from a packed row (a row kept whole for its
/// unannounced restarts or position jumps has a pack row but no unit row).
pub fn is_cut(unit: &PackUnit) -> bool {
    unit.pack.as_ref().is_none_or(|p| p.n_units > 1 || p.n_padding > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the integer-array reader's differential tests (issue 29): a row whose
    /// boundaries name no conversation panicked placing its message spans.
    #[test]
    fn empty_boundaries_are_refused_not_a_panic() {
        let line = r#"{"instance_id":"x","input_ids":[5,6,7,8],"loss_mask":[0,1,1,0],"seq_lengths":[],
            "message_spans":[{"index":0,"role":"user","start":0,"end":4}],"span_end":"exclusive"}"#;
        let raw = crate::ingest::json::parse_json(Path::new("v.jsonl"), 3, &line.replace('\n', "")).unwrap();
        let options = super::super::ViewOptions { pool: Some("A".into()), ..Default::default() };
        let err = super::super::to_view(Path::new("v.jsonl"), 3, raw, &options).unwrap_err().to_string();
        assert_eq!(
            err,
            "v.jsonl:3: field `seq_lengths`: names no conversation, but the row has 4 input_ids: give each packed one"
        );
    }

    #[test]
    fn boundaries_from_each_convention() {
        assert_eq!(from_lengths(&[3, 2], 6, "seq_lengths").unwrap(), vec![(0, 3), (3, 5)]);
        assert!(from_lengths(&[3, 4], 6, "seq_lengths").unwrap_err().contains("sums to 7, past the row's 6"));
        assert_eq!(from_cumulative(&[0, 3, 5], 5, "cu_seqlens").unwrap(), vec![(0, 3), (3, 5)]);
        assert!(
            from_cumulative(&[0, 3, 3], 5, "cu_seqlens").unwrap_err().contains("cu_seqlens[2] = 3 does not exceed")
        );
        assert_eq!(from_positions(&[0, 1, 2, 0, 1], 5).unwrap(), (vec![(0, 3), (3, 5)], 0));
        assert_eq!(from_positions(&[0, 1, 5, 0, 1], 5).unwrap().1, 1);
        assert_eq!(from_segments(&[1, 1, 2, 2, 0], 5).unwrap(), vec![(0, 2), (2, 4)]);
        assert!(from_segments(&[1, 2, 1], 3).unwrap_err().contains("segment 1 appears again"));
        assert!(!is_segment_ids(&[1, 1, 0]));
    }
}
