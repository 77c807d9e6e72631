//! Drill-downs of the HTML report: from a count to the ids behind it, in the same file.
//!
//! Each drill-down is a registered view of ids ([`DRILL_DOWNS`]) run through
//! [`run_with`], so every list carries its own stamp and a stock DuckDB client reproduces
//! it; its links ([`DrillLink`]) say which count cells of which report view it explains and
//! how a count's row selects its group of ids. The views never list sealed-window ids
//! (SPEC §1.6) and carry no content (hunk, target, comment text) and no author (§1.7), so a
//! group of review examples may hold fewer ids than its count: the sealed ones are counted,
//! never listed. At most [`super::HtmlOptions::max_ids`] ids are listed per group, with
//! "the first N of M" and the query that lists all of them.

use super::{HtmlOptions, redact, stamp_block};
use crate::report::{Cell, Report, ReportTable, run_with, sql_literal, text};
use KeyFrom::{Column as Col, Value};
use anyhow::{Result, anyhow};
use duckdb::Connection;
use maud::{Markup, html};
use std::collections::{BTreeMap, BTreeSet};

/// Where one key value of a drill-down group comes from.
#[derive(Debug, Clone, Copy)]
pub enum KeyFrom {
    /// The value of this column in the count's row (e.g. `org`).
    Column(&'static str),
    /// A fixed value: what the count's column stands for (e.g. the removal reason
    /// `duplicate` of the column `removed_duplicate`).
    Value(&'static str),
}

/// One kind of count that links to a drill-down: the cells of `column` in the rows of
/// `source_view`. The count's group is the drill-down rows whose `group` columns hold the
/// values [`KeyFrom`] names and, with `only`, whose boolean column `only` is true.
#[derive(Debug, Clone, Copy)]
pub struct DrillLink {
    /// The report view whose counts link here.
    pub source_view: &'static str,
    /// The count column of `source_view`.
    pub column: &'static str,
    /// (column of the drill-down view, where its value comes from in the count's row).
    pub group: &'static [(&'static str, KeyFrom)],
    /// A boolean column of the drill-down view that must be true, e.g. `resolved`.
    pub only: Option<&'static str>,
}

/// A drill-down: a registered view listing ids, and the counts it explains.
#[derive(Debug, Clone, Copy)]
pub struct DrillDown {
    /// The stamped view of ids (run like a report).
    pub report: Report,
    /// The id column listed per group.
    pub id_column: &'static str,
    /// The counts that link here.
    pub links: &'static [DrillLink],
}

const fn link(
    source_view: &'static str,
    column: &'static str,
    group: &'static [(&'static str, KeyFrom)],
    only: Option<&'static str>,
) -> DrillLink {
    DrillLink { source_view, column, group, only }
}

const fn view(name: &'static str, view: &'static str, about: &'static str, by_version: bool) -> Report {
    Report { name, view, about, by_version, macro_name: None }
}

const V: (&str, KeyFrom) = ("version", Col("version"));
const O: (&str, KeyFrom) = ("org", Col("org"));
const VERSION_ORG: &[(&str, KeyFrom)] = &[V, O];
const REMOVALS: &str = "refine_removals_v2";
const FENCES: &str = "fence_agreement_v2";
const TRUNCATION: &str = "sft_truncation_v1";
const TRUNCATION_GROUP: &[(&str, KeyFrom)] =
    &[("max_length", Col("max_length")), ("side", Col("side")), ("pool", Col("pool"))];
const RUNS: &str = "eval_runs_v2";
const RUNS_V3: &str = "eval_runs_v3";
const RUN: &[(&str, KeyFrom)] = &[("run", Col("run"))];
const MODE: &[(&str, KeyFrom)] = &[("mode", Col("mode"))];

/// Every drill-down of the HTML report. A count links when its drill-down lists at least
/// one id for it; the `(all)` rows of the review views (sums over orgs) do not link, their
/// org rows do.
pub const DRILL_DOWNS: &[DrillDown] = &[
    DrillDown {
        report: view(
            "removed-examples",
            "refine_removed_examples_v1",
            "the example ids behind each removal count (sealed-window examples are counted, never listed)",
            true,
        ),
        id_column: "example_id",
        links: &[
            link(REMOVALS, "removed_service_account", &[V, O, ("reason", Value("service_account"))], None),
            link(REMOVALS, "removed_robot_comment", &[V, O, ("reason", Value("robot_comment"))], None),
            link(REMOVALS, "removed_rebase_successor", &[V, O, ("reason", Value("rebase_successor"))], None),
            link(REMOVALS, "removed_suggested_edit", &[V, O, ("reason", Value("suggested_edit"))], None),
            link(REMOVALS, "removed_applied_fix", &[V, O, ("reason", Value("applied_fix"))], None),
            link(REMOVALS, "removed_duplicate", &[V, O, ("reason", Value("duplicate"))], None),
        ],
    },
    DrillDown {
        report: view(
            "fence-disagreements",
            "fence_disagreement_examples_v1",
            "the example ids where the fence selectors disagree, and the structured-only suggested fixes \
             (sealed-window examples are counted, never listed)",
            true,
        ),
        id_column: "example_id",
        links: &[
            link(FENCES, "strict_not_gerrit", &[V, O, ("disagreement", Value("strict_not_gerrit"))], None),
            link(FENCES, "gerrit_not_strict", &[V, O, ("disagreement", Value("gerrit_not_strict"))], None),
            link(FENCES, "strict_not_loose", &[V, O, ("disagreement", Value("strict_not_loose"))], None),
            link(FENCES, "loose_not_strict", &[V, O, ("disagreement", Value("loose_not_strict"))], None),
            link(FENCES, "structured_only", &[V, O, ("disagreement", Value("structured_only"))], None),
        ],
    },
    DrillDown {
        report: view(
            "target-in-comment-examples",
            "target_in_comment_examples_v1",
            "the example ids whose target a reviewer typed into a comment (ids only; sealed-window examples are \
             counted, never listed)",
            true,
        ),
        id_column: "example_id",
        links: &[
            link("target_in_comment_v2", "target_in_comment", VERSION_ORG, None),
            link("target_in_comment_v2", "target_in_comment_kept", VERSION_ORG, Some("kept")),
        ],
    },
    DrillDown {
        report: view(
            "split-examples",
            "split_example_ids_v1",
            "the example ids of each split and of each registered half's training rows (the sealed window is \
             counted, never listed)",
            true,
        ),
        id_column: "example_id",
        links: &[
            link("split_counts_v1", "examples", &[V, O, ("split", Col("split"))], None),
            link("split_criteria_v1", "train_a", &[V, O, ("half", Value("a"))], Some("is_training")),
            link("split_criteria_v1", "train_b", &[V, O, ("half", Value("b"))], Some("is_training")),
        ],
    },
    DrillDown {
        report: view(
            "contract-failures",
            "sft_contract_failures_v1",
            "the view ids behind each failed contract count",
            false,
        ),
        id_column: "view_id",
        links: &[link(
            "sft_contract_summary_v1",
            "failed",
            &[("pool", Col("pool")), ("check_name", Col("check_name"))],
            None,
        )],
    },
    DrillDown {
        report: view(
            "dedup-views",
            "sft_dedup_views_v1",
            "the training units each dedup mode counts: view ids, and for a union view the instance it unites",
            false,
        ),
        id_column: "unit",
        links: &[
            link("sft_dedup_v2", "views", MODE, None),
            link("sft_recovery_exposure_v2", "recovery_views", MODE, Some("recovery")),
        ],
    },
    DrillDown {
        report: view(
            "truncated-views",
            "sft_truncation_over_v1",
            "the view ids over each maximum length, per pool: all, left all-masked, final report lost",
            false,
        ),
        id_column: "view_id",
        links: &[
            link(TRUNCATION, "views_over", TRUNCATION_GROUP, None),
            link(TRUNCATION, "views_all_masked_after", TRUNCATION_GROUP, Some("all_masked_after")),
            link(TRUNCATION, "final_reports_lost", TRUNCATION_GROUP, Some("final_report_lost")),
        ],
    },
    DrillDown {
        report: view(
            "run-instances",
            "eval_run_instance_ids_v1",
            "the instance ids of each evaluation run, by outcome",
            false,
        ),
        id_column: "instance_id",
        links: &[
            link(RUNS, "instances", RUN, None),
            link(RUNS, "trajectories", RUN, Some("has_trajectory")),
            link(RUNS, "n", RUN, Some("has_outcome")),
            link(RUNS, "resolved", RUN, Some("resolved")),
            link(RUNS, "evaluator_errors", RUN, Some("evaluator_error")),
            link(RUNS, "no_outcome", RUN, Some("no_outcome")),
            // v3 counts the same instances in these columns (eval_instances_v2 keeps v1's
            // instances, resolved, error and no-outcome sets)
            link(RUNS_V3, "instances", RUN, None),
            link(RUNS_V3, "trajectories", RUN, Some("has_trajectory")),
            link(RUNS_V3, "resolved", RUN, Some("resolved")),
            link(RUNS_V3, "evaluator_errors", RUN, Some("evaluator_error")),
            link(RUNS_V3, "no_outcome", RUN, Some("no_outcome")),
        ],
    },
];

/// One group of ids: its anchor and the ids, sorted.
pub(super) struct Group {
    pub anchor: String,
    pub ids: Vec<String>,
}

/// One drill-down as rendered: its stamped table and, per link whose source is in the
/// report, the groups by key values.
pub(super) struct Rendered {
    pub drill: &'static DrillDown,
    pub table: ReportTable,
    /// (index into `drill.links`, key values → group)
    pub groups: Vec<(usize, BTreeMap<Vec<String>, Group>)>,
}

/// Runs every drill-down with a link from a view in `present` (stamp names), with the
/// `version` filter when the drill-down's view is versioned.
///
/// Errors: DuckDB rejects a drill-down query, or its view lacks a column a link names.
pub(super) fn run_drill_downs(
    conn: &Connection,
    present: &BTreeSet<&str>,
    version: Option<&str>,
) -> Result<Vec<Rendered>> {
    let mut out = Vec::new();
    for (d, drill) in DRILL_DOWNS.iter().enumerate() {
        let used: Vec<usize> =
            (0..drill.links.len()).filter(|&l| present.contains(drill.links[l].source_view)).collect();
        if used.is_empty() {
            continue;
        }
        let table = run_with(conn, &drill.report, version.filter(|_| drill.report.by_version), None)?;
        let col = |name: &str| {
            table
                .columns
                .iter()
                .position(|c| c == name)
                .ok_or_else(|| anyhow!("{} has no column {name}", drill.report.view))
        };
        let id = col(drill.id_column)?;
        let mut groups = Vec::new();
        for l in used {
            let link = &drill.links[l];
            let keys: Vec<usize> = link.group.iter().map(|(c, _)| col(c)).collect::<Result<_>>()?;
            let only = link.only.map(col).transpose()?;
            let mut by_key: BTreeMap<Vec<String>, Group> = BTreeMap::new();
            for row in &table.rows {
                let key: Vec<String> = keys.iter().map(|&k| text(&row[k])).collect();
                let fixed = link.group.iter().zip(&key).all(|((_, from), v)| match from {
                    KeyFrom::Value(x) => v == x,
                    KeyFrom::Column(_) => true,
                });
                if !fixed || only.is_some_and(|o| row[o] != Cell::Bool(true)) {
                    continue;
                }
                let n = by_key.len();
                let group =
                    by_key.entry(key).or_insert_with(|| Group { anchor: format!("dd-{d}-{l}-{n}"), ids: Vec::new() });
                group.ids.push(text(&row[id]));
            }
            for group in by_key.values_mut() {
                group.ids.sort();
            }
            groups.push((l, by_key));
        }
        out.push(Rendered { drill, table, groups });
    }
    Ok(out)
}

/// The anchor of the group of ids behind the count in `columns[col]` of `row`, a row of
/// the report view `view`; `None` when no drill-down explains that count or lists no id
/// for it.
pub(super) fn anchor_of(
    drills: &[Rendered],
    view: &str,
    columns: &[String],
    row: &[Cell],
    col: usize,
) -> Option<String> {
    for r in drills {
        for (l, groups) in &r.groups {
            let link = &r.drill.links[*l];
            if link.source_view != view || link.column != columns[col] {
                continue;
            }
            let key: Option<Vec<String>> = link
                .group
                .iter()
                .map(|(_, from)| match from {
                    KeyFrom::Column(c) => columns.iter().position(|x| x == c).map(|i| text(&row[i])),
                    KeyFrom::Value(v) => Some(v.to_string()),
                })
                .collect();
            if let Some(g) = key.and_then(|k| groups.get(&k)) {
                return Some(g.anchor.clone());
            }
        }
    }
    None
}

/// The SQL that lists every id of one group, e.g.
/// `select example_id from split_example_ids_v1 where version = 'v3' and ... order by example_id`.
fn group_query(drill: &DrillDown, link: &DrillLink, key: &[String]) -> String {
    let mut conditions: Vec<String> =
        link.group.iter().zip(key).map(|((c, _), v)| format!("{c} = {}", sql_literal(v))).collect();
    conditions.extend(link.only.map(str::to_string));
    format!(
        "select {id} from {view} where {} order by {id}",
        conditions.join(" and "),
        id = drill.id_column,
        view = drill.report.view
    )
}

/// The section of one drill-down: its stamp, then per link the groups of ids that a count
/// in the file links to (anchors in `linked`), each an anchor target with its key, "the
/// first N of M" when capped, and the query for all.
pub(super) fn drill_section(r: &Rendered, linked: &BTreeSet<String>, opts: &HtmlOptions) -> Markup {
    let d = r.drill;
    html! {
        section.drill id={ "drill-" (d.report.name) } {
            h3 { (d.report.name) }
            p.about { (d.report.about) }
            (stamp_block(&r.table))
            @if r.table.rows.is_empty() { p.empty { "No rows: nothing to list." } }
            @for (l, groups) in &r.groups {
                @let link = &d.links[*l];
                @let shown: Vec<_> = groups.iter().filter(|(_, g)| linked.contains(&g.anchor)).collect();
                @if !shown.is_empty() {
                    p.link { "Behind the counts " code { (link.column) } " of " code { (link.source_view) } ":" }
                }
                @for (key, g) in shown {
                    @let keys = serde_json::Value::Object(
                        link.group.iter().zip(key).map(|((c, _), v)| (c.to_string(), v.clone().into())).collect());
                    div.group id=(g.anchor) data-link={ (link.source_view) "." (link.column) } data-key=(keys.to_string())
                        data-only=[link.only] data-ids=(g.ids.len()) {
                        h4 {
                            @for (i, (c, _)) in link.group.iter().enumerate() {
                                @if i > 0 { ", " }
                                (c) " = " code { (key[i]) }
                            }
                            @if let Some(o) = link.only { ", " (o) }
                            " — " (g.ids.len()) " " (d.id_column) "s"
                        }
                        @if g.ids.len() > opts.max_ids {
                            p.cap { "The first " (opts.max_ids) " of " (g.ids.len()) "; all of them: "
                                code.query { (group_query(d, link, key)) } }
                        } @else {
                            p.query { "Query: " code.query { (group_query(d, link, key)) } }
                        }
                        ul.ids { @for id in g.ids.iter().take(opts.max_ids) { li { code { (redact(id)) } } } }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every link's group columns and `only` are named in its drill-down view's SQL, its
    /// source view is registered, and no two links share a (source view, column).
    #[test]
    fn links_name_columns_their_views_declare() {
        let mut seen = BTreeSet::new();
        for d in DRILL_DOWNS {
            let file = crate::db::views::find(d.report.view).expect("registered");
            for link in d.links {
                assert!(seen.insert((link.source_view, link.column)), "{} {}", link.source_view, link.column);
                crate::db::views::find(link.source_view).expect("the source view is registered");
                for c in link.group.iter().map(|(c, _)| *c).chain(link.only).chain([d.id_column]) {
                    assert!(file.sql.contains(c), "{}: no column {c}", d.report.view);
                }
            }
        }
    }

    #[test]
    fn group_query_names_every_key_and_the_filter() {
        let d = &DRILL_DOWNS.iter().find(|d| d.report.name == "run-instances").unwrap();
        let link = d.links.iter().find(|l| l.column == "resolved").unwrap();
        assert_eq!(
            group_query(d, link, &["it's".to_string()]),
            "select instance_id from eval_run_instance_ids_v1 where run = 'it''s' and resolved order by instance_id"
        );
    }
}
