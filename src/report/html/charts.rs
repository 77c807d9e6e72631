//! Which chart each report view gets in the HTML report, built from the rows of the
//! section's own stamped table (the context-length histogram also reads the instances
//! table, and says so in its title). Drawing is [`super::plot`]'s.

use super::plot::{Bars, Lines, draw_bars, draw_lines};
use crate::report::{Cell, ReportTable, text};
use anyhow::{Result, anyhow};
use std::collections::{BTreeMap, BTreeSet};

/// The removal reasons in rule order, each a `removed_<reason>` column of
/// `refine_removals_v2` (`refine_removals_v1` has every one but `robot_comment`).
pub(super) const REMOVAL_REASONS: [&str; 6] =
    ["service_account", "robot_comment", "rebase_successor", "suggested_edit", "applied_fix", "duplicate"];

/// Column access on one table for chart building.
struct Rows<'a>(&'a ReportTable);

impl Rows<'_> {
    fn col(&self, name: &str) -> Result<usize> {
        self.0.columns.iter().position(|c| c == name).ok_or_else(|| anyhow!("{} has no column {name}", self.0.report))
    }
    /// The number in `name` per row (NULL → 0).
    fn nums(&self, name: &str) -> Result<Vec<f64>> {
        let i = self.col(name)?;
        Ok(self.0.rows.iter().map(|r| num(&r[i])).collect())
    }
    /// Row labels joined from `names` (e.g. `v3 openstack`).
    fn labels(&self, names: &[&str]) -> Result<Vec<String>> {
        let idx: Vec<usize> = names.iter().map(|n| self.col(n)).collect::<Result<_>>()?;
        Ok(self.0.rows.iter().map(|r| idx.iter().map(|&i| text(&r[i])).collect::<Vec<_>>().join(" ")).collect())
    }
    /// The table without its `org = '(all)'` rows (the sums over orgs, which would dwarf them).
    fn orgs_only(&self) -> Result<ReportTable> {
        let org = self.col("org")?;
        Ok(ReportTable {
            rows: self.0.rows.iter().filter(|r| text(&r[org]) != "(all)").cloned().collect(),
            ..self.0.clone()
        })
    }
    /// Bars over the categories `label_cols` names, one series per `(column, legend name)`.
    fn bars(&self, title: &str, y_desc: &str, label_cols: &[&str], series: &[(&str, &str)]) -> Result<Bars> {
        let series = series.iter().map(|(col, name)| Ok((name.to_string(), self.nums(col)?))).collect::<Result<_>>()?;
        Ok(Bars::new(title, y_desc, self.labels(label_cols)?, series))
    }
    /// The same bars with a Wilson interval per category from `wilson_low` / `wilson_high`.
    fn with_wilson(&self, mut b: Bars) -> Result<Bars> {
        b.intervals = Some(self.nums("wilson_low")?.into_iter().zip(self.nums("wilson_high")?).collect());
        Ok(b.shares())
    }
}

fn num(c: &Cell) -> f64 {
    match c {
        Cell::Int(v) => *v as f64,
        Cell::UInt(v) => *v as f64,
        Cell::Float(v) if v.is_finite() => *v,
        _ => 0.0,
    }
}

/// The chart of one report table as inline SVG, or `None` when the view has no chart or
/// no rows. Each chart reads the rows of `t` (its own stamped view); the context-length
/// histogram also reads `sft_instances_v3` (per-instance lengths) when that table is in
/// `all`, and says so in its title.
///
/// Errors: a column the chart needs is missing, or plotters cannot draw.
pub fn chart(t: &ReportTable, all: &[ReportTable]) -> Result<Option<String>> {
    let Some(st) = &t.stamp else { return Ok(None) };
    if t.rows.is_empty() {
        return Ok(None);
    }
    let r = Rows(t);
    let b = match st.name.as_str() {
        "refine_removals_v1" | "refine_removals_v2" => {
            let cols: Vec<(String, &str)> = REMOVAL_REASONS
                .iter()
                .filter(|x| st.name == "refine_removals_v2" || **x != "robot_comment")
                .map(|x| (format!("removed_{x}"), *x))
                .collect();
            let series: Vec<(&str, &str)> = cols.iter().map(|(c, n)| (c.as_str(), *n)).collect();
            let orgs = r.orgs_only()?;
            let title = "Removals by reason per org (first removing rule)";
            Rows(&orgs).bars(title, "examples", &["version", "org"], &series)?.stacked()
        }
        "suggested_edit_share_v1" => r
            .bars(
                "Suggested-edit share per window, beside the training window's share",
                "share of built examples",
                &["version", "org", "window_name"],
                &[("share", "share in the window"), ("training_share", "training window share (reference)")],
            )?
            .shares(),
        "fence_agreement_v1" | "fence_agreement_v2" => r.bars(
            "Fence selectors: strict rule vs Gerrit substring vs loose pattern",
            "examples selected",
            &["version", "org"],
            &[("strict", "strict"), ("gerrit_substring", "gerrit_substring"), ("loose", "loose")],
        )?,
        "target_in_comment_v1" | "target_in_comment_v2" => target_in_comment(t)?,
        "split_counts_v1" => {
            r.bars("Kept examples per split", "examples", &["version", "org", "split"], &[("examples", "examples")])?
        }
        "half_suffix_mix_v1" => suffix_mix(t)?,
        "split_criteria_v1" => {
            let (tv, org) = (r.col("language_mix_ceiling")?, r.col("org")?);
            let note: Vec<String> = t
                .rows
                .iter()
                .map(|row| match &row[tv] {
                    Cell::Float(x) => format!("{} {:.3}", text(&row[org]), x),
                    _ => format!("{} n/a", text(&row[org])),
                })
                .collect();
            r.bars(
                &format!("Training rows per registered half (TV distance: {})", note.join(", ")),
                "training rows",
                &["version", "org"],
                &[("train_a", "half a"), ("train_b", "half b"), ("size_floor", "size floor")],
            )?
        }
        "label_audit_v1" => r.with_wilson(r.bars(
            "Label audit: valid share per rater (Wilson 95% interval)",
            "valid share",
            &["version", "rater", "scope"],
            &[("share", "valid share")],
        )?)?,
        "sft_contract_summary_v1" => r
            .bars(
                "Contract checks: pass / fail per pool and check",
                "views",
                &["pool", "check_name"],
                &[("passed", "passed"), ("failed", "failed"), ("not_checked", "not checked")],
            )?
            .stacked(),
        "sft_dedup_v2" => r.bars(
            "Exposure before and after dedup",
            "supervised positions",
            &["mode"],
            &[("exposure", "exposure"), ("unique_positions", "unique positions")],
        )?,
        "sft_recovery_exposure_v2" => r
            .bars(
                "Recovery-region share of exposure, before and after dedup",
                "share of exposure",
                &["mode"],
                &[("region_share", "region share")],
            )?
            .shares(),
        "sft_membership_v2" => r
            .bars(
                "Labelled pools: share among training views before and after union dedup",
                "share",
                &["pool"],
                &[("share_before", "before"), ("share_after", "after")],
            )?
            .shares(),
        "sft_supervised_tools_v1" => r
            .bars("Supervised tool calls by class", "share of supervised calls", &["tool"], &[("share", "share")])?
            .shares(),
        "sft_thinking_v1" | "sft_thinking_v2" => r.bars(
            "Thinking bodies: re-tokenized length per source",
            "tokens",
            &["source"],
            &[("tokens_p50", "P50"), ("tokens_p90", "P90"), ("tokens_max", "max")],
        )?,
        "eval_runs_v1" | "eval_runs_v2" | "eval_runs_v3" => r.with_wilson(r.bars(
            "Evaluation runs side by side: resolve rate (Wilson 95% interval)",
            "resolve rate",
            &["run"],
            &[("resolve_rate", "resolve rate")],
        )?)?,
        "sft_recovery_concentration_v1" => {
            let points = r.nums("k")?.into_iter().zip(r.nums("share")?).collect();
            return Ok(Some(draw_lines(&Lines {
                title: "Recovery pool: share of supervised tokens in its k longest views".into(),
                x_desc: "k (longest views)".into(),
                y_desc: "share of supervised tokens".into(),
                series: vec![("share".into(), points)],
                vlines: vec![],
                y_max: Some(1.0),
            })?));
        }
        "sft_weight_projection_v1" | "sft_weight_projection_at_v1" => {
            let w = r.nums("weight")?;
            return Ok(Some(draw_lines(&Lines {
                title: "Weight projection: total(w) = U + w|R| and region(w)".into(),
                x_desc: "recovery weight w".into(),
                y_desc: "weighted supervised positions".into(),
                series: vec![
                    ("total".into(), w.iter().copied().zip(r.nums("total")?).collect()),
                    ("region".into(), w.iter().copied().zip(r.nums("region")?).collect()),
                ],
                vlines: vec![],
                y_max: None,
            })?));
        }
        "sft_truncation_v1" | "sft_truncation_at_v1" => return truncation(t).map(Some),
        "sft_context_lengths_v2" => return context_histogram(t, all),
        _ => return Ok(None),
    };
    Ok(Some(draw_bars(&b)?))
}

/// Target-in-comment: per (version, org), the built examples split into the four kinds
/// `target_in_comment_v2` counts: target typed into a comment, judged and not, not judged
/// for a suggested edit, not judged for want of a target (stacked; sums to `examples`).
fn target_in_comment(t: &ReportTable) -> Result<Bars> {
    let orgs = Rows(t).orgs_only()?;
    let r = Rows(&orgs);
    let (typed, judged) = (r.nums("target_in_comment")?, r.nums("judged")?);
    let series = vec![
        ("target in a comment".to_string(), typed.clone()),
        ("judged, not in a comment".to_string(), judged.iter().zip(&typed).map(|(j, k)| j - k).collect()),
        ("not judged: suggested edit".to_string(), r.nums("not_judged_suggested_edit")?),
        ("not judged: no target".to_string(), r.nums("not_judged_no_target")?),
    ];
    let title = "Targets a reviewer typed into a comment (reported, not removed), per org";
    Ok(Bars::new(title, "built examples", r.labels(&["version", "org"])?, series).stacked())
}

/// One stacked bar per (version, org, half), one series per suffix: the half's suffix mix.
fn suffix_mix(t: &ReportTable) -> Result<Bars> {
    let r = Rows(t);
    let (v, o, h, s, share) = (r.col("version")?, r.col("org")?, r.col("half")?, r.col("suffix")?, r.col("share")?);
    let mut cats: Vec<String> = Vec::new();
    let mut suffixes: BTreeSet<String> = BTreeSet::new();
    let mut values: BTreeMap<(String, String), f64> = BTreeMap::new();
    for row in &t.rows {
        let cat = format!("{} {} half {}", text(&row[v]), text(&row[o]), text(&row[h]));
        if !cats.contains(&cat) {
            cats.push(cat.clone());
        }
        let suffix = match text(&row[s]) {
            x if x.is_empty() => "(none)".to_string(),
            x => x,
        };
        suffixes.insert(suffix.clone());
        *values.entry((cat, suffix)).or_default() += num(&row[share]);
    }
    let series = suffixes
        .iter()
        .map(|x| {
            (x.clone(), cats.iter().map(|c| values.get(&(c.clone(), x.clone())).copied().unwrap_or(0.0)).collect())
        })
        .collect();
    let title = "Suffix mix of each registered half's training rows";
    Ok(Bars::new(title, "share of the half's training rows", cats, series).stacked().shares())
}

/// Truncation survival: per pool, the share of its supervised tokens truncation loses at
/// each maximum length (a line per pool over the lengths of the table), with the side.
fn truncation(t: &ReportTable) -> Result<String> {
    let r = Rows(t);
    let (pool, length, share, side) = (r.col("pool")?, r.col("max_length")?, r.col("lost_share")?, r.col("side")?);
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in &t.rows {
        series.entry(text(&row[pool])).or_default().push((num(&row[length]), num(&row[share])));
    }
    for points in series.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let sides: BTreeSet<String> = t.rows.iter().map(|row| text(&row[side])).collect();
    draw_lines(&Lines {
        title: format!(
            "Truncation: share of each pool's supervised tokens lost ({} truncation)",
            sides.into_iter().collect::<Vec<_>>().join(", ")
        ),
        x_desc: "maximum length (tokens)".into(),
        y_desc: "supervised tokens lost (share)".into(),
        series: series.into_iter().collect(),
        vlines: vec![],
        y_max: Some(1.0),
    })
}

/// The context-length histogram: per-instance lengths from `sft_instances_v3.tokens` (the
/// instance's longest view, the same lengths `sft_context_lengths_v2` summarises), binned
/// in 16 equal bins, with the P50 / P90 of `t` and the 32,768-token line. Without the
/// instances table in the report, P50 / P90 / max as bars beside the 32,768 line.
fn context_histogram(t: &ReportTable, all: &[ReportTable]) -> Result<Option<String>> {
    let r = Rows(t);
    let (p50, p90) = (r.nums("p50")?[0], r.nums("p90")?[0]);
    let instances =
        all.iter().find(|x| x.stamp.as_ref().is_some_and(|s| s.name == "sft_instances_v3") && !x.rows.is_empty());
    let Some(instances) = instances else {
        let mut b = r.bars(
            "Context length per instance: P50, P90, max",
            "tokens",
            &[],
            &[("p50", "P50"), ("p90", "P90"), ("max", "max")],
        )?;
        b.categories = vec!["instances".into()];
        b.reference = Some(("32,768 tokens".into(), 32768.0));
        return Ok(Some(draw_bars(&b)?));
    };
    let lengths = Rows(instances).nums("tokens")?;
    let max = lengths.iter().copied().fold(0.0, f64::max).max(32768.0);
    let bins = 16usize;
    let step = (max / bins as f64).ceil().max(1.0);
    let mut counts = vec![0.0; bins];
    for l in &lengths {
        counts[((l / step) as usize).min(bins - 1)] += 1.0;
    }
    // a histogram is a line over bin edges here: (bin start, count) steps
    let mut points = Vec::new();
    for (i, c) in counts.iter().enumerate() {
        points.push((i as f64 * step, *c));
        points.push(((i + 1) as f64 * step, *c));
    }
    Ok(Some(draw_lines(&Lines {
        title: format!("Context length per instance ({} instances; sft_instances_v3.tokens)", lengths.len()),
        x_desc: "tokens (longest view of the instance)".into(),
        y_desc: "instances per bin".into(),
        series: vec![("instances".into(), points)],
        vlines: vec![(format!("P50 {p50:.0}"), p50), (format!("P90 {p90:.0}"), p90), ("32,768".into(), 32768.0)],
        y_max: None,
    })?))
}
