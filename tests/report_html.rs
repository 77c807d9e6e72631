//! The HTML report (issue 13) on the demo database: `sphragis demo` writes
//! `sphragis-demo.html`, and `report all --format html --out FILE` writes the same kind of
//! file. The file parses as HTML, every report is a section stamped with its view name and
//! the SHA-256 recorded in `sph_views`, every in-page link resolves, every chart has marks,
//! and nothing sealed, no comment text and no e-mail is in it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sphragis"))
}

/// A fresh, empty directory for one test.
fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-html-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `report ARGS --format html --out OUT` on `db` and returns the file's text.
fn report_html(db: &Path, args: &[&str], out: &Path) -> String {
    let run = bin().arg("--db").arg(db).arg("report").args(args).args(["--format", "html", "--out"]).arg(out).output();
    let run = run.unwrap();
    assert!(run.status.success(), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
    std::fs::read_to_string(out).unwrap()
}

/// Runs the demo in a fresh directory; returns the directory.
fn demo(tag: &str) -> PathBuf {
    let dir = fresh_dir(tag);
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples");
    let out =
        bin().args(["demo", "--quiet", "--samples", samples.to_str().unwrap()]).current_dir(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

/// The tags `selector` matches in `dom`: simple selectors (tag, class, id, attribute)
/// separated by spaces for descendants, each step applied under the tags of the last
/// (tl's own descendant combinator is not used), without duplicates, in document order.
fn all<'a>(dom: &'a tl::VDom<'a>, selector: &str) -> Vec<&'a tl::HTMLTag<'a>> {
    let parser = dom.parser();
    let mut steps = selector.split_whitespace();
    let first = steps.next().expect("a selector");
    let mut found: Vec<&tl::HTMLTag> = dom
        .query_selector(first)
        .unwrap_or_else(|| panic!("bad selector {first}"))
        .filter_map(|h| h.get(parser).and_then(|n| n.as_tag()))
        .collect();
    for step in steps {
        let mut next: Vec<&tl::HTMLTag> = Vec::new();
        for tag in &found {
            for t in under(dom, tag, step) {
                if !next.iter().any(|x| std::ptr::eq(*x, t)) {
                    next.push(t);
                }
            }
        }
        found = next;
    }
    found
}

/// The same, under `tag`.
fn under<'a>(dom: &'a tl::VDom<'a>, tag: &'a tl::HTMLTag<'a>, selector: &str) -> Vec<&'a tl::HTMLTag<'a>> {
    let parser = dom.parser();
    tag.query_selector(parser, selector)
        .unwrap_or_else(|| panic!("bad selector {selector}"))
        .filter_map(|h| h.get(parser).and_then(|n| n.as_tag()))
        .collect()
}

fn attr(tag: &tl::HTMLTag, name: &str) -> Option<String> {
    tag.attributes().get(name).flatten().map(|v| v.as_utf8_str().into_owned())
}

fn inner_text(dom: &tl::VDom, tag: &tl::HTMLTag) -> String {
    decode(&tag.inner_text(dom.parser()))
}

/// HTML text with the character references maud writes turned back into characters.
fn decode(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

fn strings(conn: &duckdb::Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

/// One count that links to a drill-down group, as the file shows it.
#[derive(Debug)]
struct Linked {
    /// `source_view.column`, the group's `data-link`
    link: String,
    /// the group's key, `column=value` pairs sorted by column and joined with `;`
    key: String,
    /// the number in the link
    count: i64,
    /// the ids in the group (`data-ids`)
    total: usize,
    /// the ids listed
    ids: BTreeSet<String>,
}

/// Every `a.drill` link with its target group (each link must resolve to one).
fn drill_links(dom: &tl::VDom) -> Vec<Linked> {
    all(dom, "a.drill")
        .iter()
        .map(|a| {
            let target = attr(a, "href").unwrap()[1..].to_string();
            let group = dom
                .get_element_by_id(target.as_str())
                .and_then(|h| h.get(dom.parser()))
                .and_then(|n| n.as_tag())
                .unwrap_or_else(|| panic!("#{target} resolves to no element"));
            let keys: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&decode(&attr(group, "data-key").expect("a group names its key"))).unwrap();
            let mut key: Vec<String> =
                keys.iter().map(|(k, v)| format!("{k}={}", v.as_str().expect("key values are text"))).collect();
            key.sort();
            Linked {
                link: attr(group, "data-link").expect("a group names its link"),
                key: key.join(";"),
                count: inner_text(dom, a).trim().parse().unwrap(),
                total: attr(group, "data-ids").unwrap().parse().unwrap(),
                ids: under(dom, group, "li").iter().map(|li| inner_text(dom, li)).collect(),
            }
        })
        .collect()
}

/// The counts the demo links (`source_view.column`): every removal reason, fence
/// disagreement, target-in-comment, split and half size, dedup and recovery-view count.
const DEMO_LINKS: &[&str] = &[
    "refine_removals_v2.removed_service_account",
    "refine_removals_v2.removed_robot_comment",
    "refine_removals_v2.removed_rebase_successor",
    "refine_removals_v2.removed_suggested_edit",
    "refine_removals_v2.removed_applied_fix",
    "refine_removals_v2.removed_duplicate",
    "fence_agreement_v2.strict_not_gerrit",
    "fence_agreement_v2.gerrit_not_strict",
    "fence_agreement_v2.strict_not_loose",
    "fence_agreement_v2.loose_not_strict",
    "fence_agreement_v2.structured_only",
    "target_in_comment_v2.target_in_comment",
    "target_in_comment_v2.target_in_comment_kept",
    "split_counts_v1.examples",
    "split_criteria_v1.train_a",
    "split_criteria_v1.train_b",
    "sft_dedup_v2.views",
    "sft_recovery_exposure_v2.recovery_views",
];

/// SQL over the tables — not the drill-down views — that returns every id behind the
/// counts of [`DEMO_LINKS`]: columns link, key (as [`Linked::key`] spells it), id, and
/// whether it may be listed (false: in the sealed window, counted only). `review_rows` and
/// `training` are defined in [`expected_groups`].
const DEMO_GROUPS: &[&str] = &[
    "select 'refine_removals_v2.removed_' || removed_reason, \
     'org=' || org || ';reason=' || removed_reason || ';version=' || version, example_id, listed \
     from review_rows where removed_reason is not null",
    // the disagreements of the three fence selectors, and structured fixes without a strict fence
    "select 'fence_agreement_v2.' || d, 'disagreement=' || d || ';org=' || org || ';version=' || version, \
     example_id, listed from review_rows, (values ('strict_not_gerrit'), ('gerrit_not_strict'), \
     ('strict_not_loose'), ('loose_not_strict'), ('structured_only')) as t(d) \
     where case d when 'strict_not_gerrit' then strict and not fence_gerrit \
                  when 'gerrit_not_strict' then fence_gerrit and not strict \
                  when 'strict_not_loose' then strict and not fence_loose \
                  when 'loose_not_strict' then fence_loose and not strict \
                  else structured_suggestion and not strict end",
    // judged (a target, no suggested edit) with the target in a comment; and of those kept
    "select 'target_in_comment_v2.target_in_comment' || c, 'org=' || org || ';version=' || version, \
     example_id, listed from review_rows, (values (''), ('_kept')) as t(c) \
     where coalesce(has_target, true) and not suggested_edit and target_in_comment and (c = '' or kept)",
    "select 'split_counts_v1.examples', 'org=' || org || ';split=' || split || ';version=' || version, \
     example_id, not sealed and example_id not in (select example_id from sealed_content) from review_splits",
    "select 'split_criteria_v1.train_' || half, 'half=' || half || ';org=' || org || ';version=' || version, \
     example_id, not sealed and example_id not in (select example_id from sealed_content) from review_splits \
     where is_training and half in ('a', 'b')",
    // dedup: every training view; one per set of identical lines; one per repair instance
    // (a union view, named by its instance) and every recovery view
    "select 'sft_dedup_v2.views', 'mode=none', view_id, true from training",
    "select 'sft_dedup_v2.views', 'mode=exact', min(view_id), true from training \
     group by instance_id, input_ids, loss_mask",
    "select distinct 'sft_dedup_v2.views', 'mode=union', instance_id, true from training where role = 'repair' \
     union all select 'sft_dedup_v2.views', 'mode=union', view_id, true from training where role = 'recovery'",
    "select 'sft_recovery_exposure_v2.recovery_views', 'mode=' || m, view_id, true \
     from training, (values ('none'), ('union')) as t(m) where role = 'recovery'",
];

/// The ids behind each (link, key) the `queries` return: (ids that may be listed, sealed
/// ids counted).
fn expected_groups(
    conn: &duckdb::Connection,
    queries: &[&str],
) -> std::collections::BTreeMap<(String, String), (BTreeSet<String>, i64)> {
    let with = "with review_rows as (select *, coalesce(fence_strict, suggested_edit) as strict, \
                not window_sealed and example_id not in (select example_id from sealed_content) as listed \
                from refine_examples), \
                training as (select v.*, p.role from sft_views as v join sft_pool_roles as p on p.pool = v.pool \
                and p.role in ('repair', 'recovery')) ";
    let mut out = std::collections::BTreeMap::new();
    for sql in queries {
        let mut stmt = conn.prepare(&format!("{with}{sql}")).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let rows: Vec<(String, String, String, bool)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (link, key, id, listed) in rows {
            let entry: &mut (BTreeSet<String>, i64) = out.entry((link, key)).or_default();
            if listed {
                entry.0.insert(id);
            } else {
                entry.1 += 1;
            }
        }
    }
    out
}

/// The texts of an SVG's elements, trimmed (plotters writes each on its own line).
fn svg_texts(svg: &str) -> BTreeSet<String> {
    regex::Regex::new(r">([^<]*)<").unwrap().captures_iter(svg).map(|c| c[1].trim().to_string()).collect()
}

/// The chart of the report section titled `report`, as SVG text.
fn section_svg(dom: &tl::VDom, report: &str) -> String {
    let section = all(dom, "section.report")
        .into_iter()
        .find(|s| under(dom, s, "h2").iter().any(|h| inner_text(dom, h) == report))
        .unwrap_or_else(|| panic!("no section {report}"));
    let svg = under(dom, section, "svg");
    svg.first().unwrap_or_else(|| panic!("{report}: no chart")).raw().as_utf8_str().into_owned()
}

#[test]
fn demo_writes_an_html_report_with_every_section_stamped_and_nothing_sealed() {
    let dir = demo("demo");
    let path = dir.join("sphragis-demo.html");
    let text = std::fs::read_to_string(&path).expect("demo writes sphragis-demo.html");
    let dom = tl::parse(&text, tl::ParserOptions::default()).expect("the report parses as HTML");
    let decoded = decode(&text);
    let conn = sphragis::db::open_read_only(&dir.join("sphragis-demo.duckdb")).unwrap();

    // offline: nothing is fetched from anywhere
    assert!(all(&dom, "script").iter().all(|t| attr(t, "src").is_none()));
    assert!(all(&dom, "link").is_empty() && all(&dom, "img").is_empty() && all(&dom, "iframe").is_empty());
    // the only URL is SVG's namespace name, which is never fetched
    for (i, _) in text.match_indices("http") {
        let url = &text[i..(i + 30).min(text.len())];
        assert!(url.starts_with("http://www.w3.org/2000/svg"), "a URL in the report: {url}");
    }

    // every report is one section whose stamp names its view and the SHA-256 in sph_views
    let recorded: std::collections::BTreeMap<String, String> = {
        let mut stmt = conn.prepare("select name, sha256 from sph_views").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
    };
    let stamps: Vec<(String, String)> = all(&dom, "section.report table.stamp")
        .iter()
        .map(|t| (attr(t, "data-view").unwrap(), attr(t, "data-sha256").unwrap()))
        .collect();
    assert_eq!(stamps.len(), sphragis::report::REPORTS.len());
    for (report, (view, sha)) in sphragis::report::REPORTS.iter().zip(&stamps) {
        assert_eq!(report.view, view, "section order follows REPORTS");
        assert_eq!(recorded.get(view), Some(sha), "{view}: the stamp's SHA-256 is the one recorded");
        // the stamp text is the same stamp the CSV and JSON carry
        assert!(text.contains(&format!("view {view} sha256 {sha}")), "{view}");
    }
    // the drill-down sections are stamped the same way
    let drills = all(&dom, "section.drill table.stamp");
    assert!(!drills.is_empty());
    for t in drills {
        let view = attr(t, "data-view").unwrap();
        assert_eq!(recorded.get(&view), attr(t, "data-sha256").as_ref(), "{view}");
    }

    // every view family is shown: its newest version (read from the file's own registry,
    // sph_views) is a section, a drill-down, or a row of "other views" with its recorded
    // SHA-256 — exactly one of these
    let newest: std::collections::BTreeMap<String, String> = {
        let mut stmt = conn
            .prepare("select name, sha256 from sph_views qualify version = max(version) over (partition by base_name)")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
    };
    let in_sections: BTreeSet<String> =
        all(&dom, "section table.stamp").iter().filter_map(|t| attr(t, "data-view")).collect();
    let other_rows = all(&dom, "#other-views tr[data-view]");
    let others: std::collections::BTreeMap<String, String> = other_rows
        .iter()
        .map(|tr| (attr(tr, "data-view").unwrap(), inner_text(&dom, under(&dom, tr, "code.sha")[0])))
        .collect();
    assert_eq!(others.len(), other_rows.len(), "one row per family");
    for (name, sha) in &newest {
        match (in_sections.contains(name), others.get(name)) {
            (true, None) => {}
            (false, Some(listed)) => assert_eq!(listed, sha, "{name}: the listed SHA-256 is the recorded one"),
            (shown, listed) => panic!("{name}: in a section {shown}, listed as other {listed:?}"),
        }
    }
    // the families the issue named as missing are listed, each with a query that runs
    for name in ["split_examples_v2", "report_diff_at_v1", "version_diff_at_v2"] {
        assert!(others.contains_key(name), "{name} listed in other views");
    }
    assert!(!others.contains_key("refine_removals_v2"), "a section's view is not listed again");
    assert!(others.keys().all(|n| newest.contains_key(n)), "only newest versions are listed");

    // every in-page link resolves to an element id
    let ids: BTreeSet<String> = all(&dom, "[id]").iter().filter_map(|t| attr(t, "id")).collect();
    let links = all(&dom, "a");
    assert!(!links.is_empty());
    for a in &links {
        let href = attr(a, "href").expect("every link has an href");
        let target = href.strip_prefix('#').unwrap_or_else(|| panic!("a link leaves the file: {href}"));
        assert!(ids.contains(target), "#{target} resolves to no element");
    }

    // every count that links: its group lists at least one id and never more than the
    // count (sealed examples are counted, not listed)
    let links = drill_links(&dom);
    assert!(!links.is_empty(), "no count links to a drill-down");
    // and every group of ids in the file is the target of a count
    let groups: BTreeSet<String> = all(&dom, "div.group").iter().filter_map(|g| attr(g, "id")).collect();
    let targets: BTreeSet<String> =
        all(&dom, "a.drill").iter().map(|a| attr(a, "href").unwrap()[1..].to_string()).collect();
    assert_eq!(groups, targets);
    for l in &links {
        assert!(l.total >= 1 && l.total as i64 <= l.count, "{l:?}");
        assert_eq!(l.ids.len(), l.total.min(200), "{l:?}: the first 200 ids at most are listed");
    }
    // each drill-down group is exactly the ids computed independently from the tables,
    // its count is those ids plus the sealed ones, and every count with an id behind it
    // links (the sealed split and the `(all)` rows do not)
    let expected = expected_groups(&conn, DEMO_GROUPS);
    let found: BTreeSet<(String, String)> = links.iter().map(|l| (l.link.clone(), l.key.clone())).collect();
    let with_ids: BTreeSet<(String, String)> =
        expected.iter().filter(|(_, (ids, _))| !ids.is_empty()).map(|(k, _)| k.clone()).collect();
    let kinds: BTreeSet<&str> = DEMO_LINKS.iter().copied().collect();
    let found_of_kinds: BTreeSet<(String, String)> =
        found.iter().filter(|(link, _)| kinds.contains(link.as_str())).cloned().collect();
    assert_eq!(found_of_kinds, with_ids, "the linked counts are the counts with an id behind them");
    for l in links.iter().filter(|l| kinds.contains(l.link.as_str())) {
        let (ids, sealed) = &expected[&(l.link.clone(), l.key.clone())];
        assert_eq!(&l.ids, ids, "{} {}", l.link, l.key);
        assert_eq!(l.total, ids.len(), "{} {}", l.link, l.key);
        assert_eq!(
            l.count,
            ids.len() as i64 + sealed,
            "{} {}: the count is the listed ids plus the sealed",
            l.link,
            l.key
        );
    }
    // the demo exercises every review and pool drill-down, and the sealed window is
    // counted behind a split count that does not link
    for view in kinds.iter().map(|k| k.split('.').next().unwrap()) {
        assert!(found.iter().any(|(link, _)| link.starts_with(&format!("{view}."))), "no count of {view} links");
    }
    assert!(expected.values().any(|(ids, sealed)| ids.is_empty() && *sealed > 0));
    // the removed examples listed are exactly the unsealed removed examples of the demo
    let listed: BTreeSet<String> =
        all(&dom, "#drill-removed-examples li").iter().map(|li| inner_text(&dom, li)).collect();
    let unsealed: BTreeSet<String> = strings(
        &conn,
        "select distinct r.example_id from refine_examples as r where r.removed_reason is not null \
         and not r.window_sealed and r.example_id not in (select example_id from sealed_content)",
    )
    .into_iter()
    .collect();
    assert!(!unsealed.is_empty());
    assert_eq!(listed, unsealed);

    // every chart is an SVG with marks (rectangles beyond the background, or lines)
    let charts = all(&dom, "figure.chart svg");
    assert!(charts.len() >= 17, "only {} charts", charts.len());
    for svg in &charts {
        let rects = under(&dom, svg, "rect").len();
        let lines =
            under(&dom, svg, "polyline").len() + under(&dom, svg, "circle").len() + under(&dom, svg, "path").len();
        assert!(rects >= 2 || lines >= 1, "a chart without marks: {}", &svg.raw().as_utf8_str()[..200]);
    }
    // the removals chart is a stacked bar chart with the reasons as series
    let removals = all(&dom, "section.report")
        .into_iter()
        .find(|s| under(&dom, s, "h2").iter().any(|h| inner_text(&dom, h) == "removals"))
        .unwrap();
    let svg = under(&dom, removals, "svg");
    let svg = svg.first().expect("removals chart").raw().as_utf8_str().into_owned();
    for reason in ["service_account", "rebase_successor", "suggested_edit", "applied_fix", "duplicate"] {
        assert!(svg.contains(reason), "legend names {reason}");
    }
    // target-in-comment: the four kinds of built example, stacked; truncation: a line per pool
    let tic = section_svg(&dom, "target-in-comment");
    for series in ["target in a comment", "judged, not in a comment", "not judged: suggested edit"] {
        assert!(tic.contains(series), "target-in-comment legend names {series}");
    }
    let truncation = section_svg(&dom, "truncation");
    assert!(truncation.contains("supervised tokens lost"), "{truncation}");
    let pools = strings(&conn, "select distinct pool from sft_views order by pool");
    assert!(pools.len() >= 2);
    for pool in &pools {
        assert!(svg_texts(&truncation).contains(pool), "truncation legend names pool {pool}");
    }

    // no sealed-window id, no comment text (open or sealed), no e-mail
    let sealed = strings(
        &conn,
        "select example_id from sealed_content union select example_id from refine_examples where window_sealed",
    );
    assert!(!sealed.is_empty(), "the demo has a sealed window");
    for id in &sealed {
        assert!(!decoded.contains(id.as_str()), "sealed id {id} in the report");
    }
    let companion = dir.join("sphragis-demo.duckdb.sealed.duckdb");
    conn.execute(&format!("attach '{}' as sealed (read_only)", companion.display()), []).unwrap();
    let comments = strings(
        &conn,
        "select message from review_comments where length(trim(message)) >= 16 \
         union select message from sealed.sealed_comments where length(trim(message)) >= 16",
    );
    assert!(comments.len() >= 5, "{comments:?}");
    for message in &comments {
        assert!(!decoded.contains(message.trim()), "comment text in the report: {message:?}");
    }
    let email = regex::Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}").unwrap();
    assert!(email.find(&decoded).is_none(), "{:?}", email.find(&decoded));

    // header: database, code version, inputs with their SHA-256
    assert!(text.contains(sphragis::CODE_VERSION));
    for sha in strings(&conn, "select sha256 from ingest_log") {
        assert!(text.contains(&sha), "input {sha} not in the header");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_html_of_one_report_and_its_usage_errors() {
    let dir = demo("one");
    let db = dir.join("sphragis-demo.duckdb");
    let out = dir.join("removals.html");
    let text = report_html(&db, &["removals", "--version", "v3"], &out);
    let dom = tl::parse(&text, tl::ParserOptions::default()).unwrap();
    assert_eq!(all(&dom, "section.report").len(), 1);
    assert!(decode(&text).contains("where version = 'v3'"), "the filter is in the stamp");
    // the v3 filter reaches the drill-down: every group is of v3
    let groups = all(&dom, "#drill-removed-examples h4");
    assert!(!groups.is_empty());
    for h in groups {
        let h = inner_text(&dom, h);
        assert!(h.contains("version = v3"), "{h}");
    }
    // html needs a file to write
    let run = bin().args(["--db", db.to_str().unwrap(), "report", "removals", "--format", "html"]).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--out FILE"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Failed contract counts link to the failing view ids (sft_contract_failures_v1), and
/// each failing view gets an entry in the loss-mask section (the call site of the mask
/// viewer), on `data-samples/sft/views.jsonl`, whose bad views each break one rule.
#[test]
fn contract_failure_counts_link_to_the_failing_view_ids() {
    let dir = fresh_dir("contract");
    let db = dir.join("c.duckdb");
    let views = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/views.jsonl");
    let run = bin().args(["--db", db.to_str().unwrap(), "-q", "load", "views"]).arg(&views).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let out = dir.join("contract.html");
    let text = report_html(&db, &["contract"], &out);
    let dom = tl::parse(&text, tl::ParserOptions::default()).unwrap();
    let conn = sphragis::db::open_read_only(&db).unwrap();
    // every (pool, check) with failures: its count links to exactly its failing view ids
    let mut stmt = conn
        .prepare("select pool, check_name, failed from sft_contract_summary_v1 where failed > 0 order by all")
        .unwrap();
    let failed: Vec<(String, String, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().collect::<Result<_, _>>().unwrap();
    assert!(failed.len() >= 3, "{failed:?}");
    let links = all(&dom, "a.drill");
    assert_eq!(links.len(), failed.len());
    for a in links {
        let target = attr(a, "href").unwrap()[1..].to_string();
        let group =
            dom.get_element_by_id(target.as_str()).and_then(|h| h.get(dom.parser())).and_then(|n| n.as_tag()).unwrap();
        let head = inner_text(&dom, under(&dom, group, "h4")[0]);
        let (pool, check, n) = failed
            .iter()
            .find(|(p, c, _)| head.starts_with(&format!("pool = {p}, check_name = {c} ")))
            .unwrap_or_else(|| panic!("{head}"));
        assert_eq!(inner_text(&dom, a).trim(), n.to_string());
        let listed: BTreeSet<String> = under(&dom, group, "li").iter().map(|li| inner_text(&dom, li)).collect();
        let expected: BTreeSet<String> = strings(
            &conn,
            &format!("select view_id from sft_contract_failures_v1 where pool = '{pool}' and check_name = '{check}'"),
        )
        .into_iter()
        .collect();
        assert_eq!(listed, expected, "{pool} {check}");
    }
    // one loss-mask entry per failing view, each naming it
    let failing: BTreeSet<String> =
        strings(&conn, "select distinct view_id from sft_contract_failures_v1").into_iter().collect();
    let entries: BTreeSet<String> =
        all(&dom, "#loss-masks div.mask h3 code").iter().map(|c| inner_text(&dom, c)).collect();
    assert_eq!(entries, failing);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `views.jsonl` with three views of pool L (tokens 9,000, 17,000 and 9) and
/// returns a database with them loaded.
///   long-1: supervised 8,500..8,600 inside its only assistant message 8,400..8,700: right
///           truncation at 8,192 keeps none of it (all masked after) and cuts the final report;
///   long-2: supervised 100..200 inside its assistant message 50..300: kept at every length;
///   short:  9 tokens, never truncated.
fn truncation_db(dir: &Path) -> PathBuf {
    let view = |id: &str, n: usize, span: (usize, usize), supervised: (usize, usize)| {
        let mask: Vec<u8> = (0..n).map(|i| u8::from(i >= supervised.0 && i < supervised.1)).collect();
        serde_json::json!({
            "view_id": id, "pool": "L", "instance_id": format!("demo__{id}"),
            "input_ids": (0..n).map(|i| i % 100 + 1).collect::<Vec<_>>(), "loss_mask": mask,
            "message_spans": [
                {"index": 0, "role": "user", "start": 0, "end": span.0},
                {"index": 1, "role": "assistant", "start": span.0, "end": span.1},
                {"index": 2, "role": "user", "start": span.1, "end": n},
            ],
            "span_end": "exclusive",
        })
        .to_string()
    };
    let lines = [
        view("long-1", 9000, (8400, 8700), (8500, 8600)),
        view("long-2", 17000, (50, 300), (100, 200)),
        view("short", 9, (4, 7), (5, 7)),
    ];
    let file = dir.join("views.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let db = dir.join("t.duckdb");
    let run = bin().args(["--db", db.to_str().unwrap(), "-q", "load", "views"]).arg(&file).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    db
}

/// Truncation counts link to the view ids over each length (sft_truncation_over_v1), and
/// the truncation chart draws the pool's lost share over the lengths.
#[test]
fn truncation_counts_link_to_the_views_over_the_length() {
    let dir = fresh_dir("truncation");
    let db = truncation_db(&dir);
    let out = dir.join("truncation.html");
    let text = report_html(&db, &["truncation"], &out);
    let dom = tl::parse(&text, tl::ParserOptions::default()).unwrap();
    let mut links: Vec<(String, String, i64, Vec<String>)> =
        drill_links(&dom).into_iter().map(|l| (l.link, l.key, l.count, l.ids.into_iter().collect())).collect();
    links.sort();
    let key = |n: u32| format!("max_length={n};pool=L;side=right");
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        links,
        [
            ("sft_truncation_v1.final_reports_lost".to_string(), key(8192), 1, ids(&["long-1"])),
            ("sft_truncation_v1.views_all_masked_after".to_string(), key(8192), 1, ids(&["long-1"])),
            ("sft_truncation_v1.views_over".to_string(), key(16384), 1, ids(&["long-2"])),
            ("sft_truncation_v1.views_over".to_string(), key(8192), 2, ids(&["long-1", "long-2"])),
        ]
    );
    // the drill-down is stamped with its view, and its group names the query listing all
    let stamp = all(&dom, "#drill-truncated-views table.stamp");
    assert_eq!(attr(stamp[0], "data-view").as_deref(), Some("sft_truncation_over_v1"));
    assert!(decode(&text).contains(
        "select view_id from sft_truncation_over_v1 where max_length = '8192' and side = 'right' and pool = 'L' \
         and all_masked_after order by view_id"
    ));
    // the chart: one line for pool L over the four lengths; long-1 loses all 100 of the
    // pool's 202 supervised tokens at 8,192, nothing is lost beyond
    let svg = section_svg(&dom, "truncation");
    assert!(svg_texts(&svg).contains("L") && svg.contains("right truncation"), "{svg}");
    assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
    let conn = sphragis::db::open_read_only(&db).unwrap();
    let lost: f64 =
        conn.query_row("select lost_share from sft_truncation_v1 where max_length = 8192", [], |r| r.get(0)).unwrap();
    assert!((lost - 100.0 / 202.0).abs() < 1e-12, "{lost}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The runs section on the hand-made runs of `data-samples/runs` (worked out in its
/// README): the chart draws every run with its Wilson interval, and each run's counts link
/// to its instance ids.
#[test]
fn runs_section_charts_every_run_and_links_its_instances() {
    let dir = fresh_dir("runs");
    let db = dir.join("r.duckdb");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/runs");
    for (run, model, continues) in [
        ("base", "base-7b", None),
        ("ft1", "ft-a", None),
        ("ft2", "ft-b", None),
        ("ft2-repeat", "ft-b", None),
        ("ft2-resumed", "ft-b", Some("ft2")),
    ] {
        let mut cmd = bin();
        cmd.args(["--db", db.to_str().unwrap(), "-q", "load", "run", run]).arg(samples.join(run)).args([
            "--model",
            model,
            "--harness",
            "mini-swe-agent 1.15.0",
            "--runaway-turns",
            "3",
        ]);
        if let Some(c) = continues {
            cmd.args(["--continues", c]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{run}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = dir.join("runs.html");
    let text = report_html(&db, &["runs"], &out);
    let dom = tl::parse(&text, tl::ParserOptions::default()).unwrap();

    let svg = section_svg(&dom, "eval-runs");
    for run in ["base", "ft1", "ft2", "ft2-repeat", "ft2-resumed"] {
        assert!(svg_texts(&svg).contains(run), "the runs chart names {run}");
    }
    assert!(svg.contains("Wilson 95% interval"));

    let links: std::collections::BTreeMap<(String, String), (i64, Vec<String>)> = drill_links(&dom)
        .into_iter()
        .filter(|l| l.link.starts_with("eval_runs_v3."))
        .map(|l| {
            (
                (l.link["eval_runs_v3.".len()..].to_string(), l.key[4..].to_string()),
                (l.count, l.ids.into_iter().collect()),
            )
        })
        .collect();
    let ids = |v: &str| v.split_whitespace().map(|x| format!("demo__{x}")).collect::<Vec<_>>();
    let all5 = "a-1 b-2 c-3 d-4 e-5";
    let expected = [
        // base: a R, b U, c U, d U, e no outcome
        (("instances", "base"), all5),
        (("trajectories", "base"), all5),
        (("resolved", "base"), "a-1"),
        (("no_outcome", "base"), "e-5"),
        // ft1: a R, b R, c U (the per-instance report wins), d U, e error (left out of graded)
        (("instances", "ft1"), all5),
        (("trajectories", "ft1"), all5),
        (("resolved", "ft1"), "a-1 b-2"),
        (("evaluator_errors", "ft1"), "e-5"),
        // ft2: resolved a b d; c, e implied unresolved
        (("instances", "ft2"), all5),
        (("trajectories", "ft2"), all5),
        (("resolved", "ft2"), "a-1 b-2 d-4"),
        // ft2-repeat: keyed reports only (no trajectory); a R, d R
        (("instances", "ft2-repeat"), all5),
        (("resolved", "ft2-repeat"), "a-1 d-4"),
        // ft2-resumed: resolved a b c, nothing else named
        (("instances", "ft2-resumed"), "a-1 b-2 c-3"),
        (("resolved", "ft2-resumed"), "a-1 b-2 c-3"),
    ];
    let expected: std::collections::BTreeMap<(String, String), (i64, Vec<String>)> = expected
        .iter()
        .map(|((col, run), v)| ((col.to_string(), run.to_string()), (ids(v).len() as i64, ids(v))))
        .collect();
    assert_eq!(links, expected);
    let _ = std::fs::remove_dir_all(&dir);
}
