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

/// Runs the demo in a fresh directory; returns the directory.
fn demo(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-html-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
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

    // every in-page link resolves to an element id
    let ids: BTreeSet<String> = all(&dom, "[id]").iter().filter_map(|t| attr(t, "id")).collect();
    let links = all(&dom, "a");
    assert!(!links.is_empty());
    for a in &links {
        let href = attr(a, "href").expect("every link has an href");
        let target = href.strip_prefix('#').unwrap_or_else(|| panic!("a link leaves the file: {href}"));
        assert!(ids.contains(target), "#{target} resolves to no element");
    }

    // removal counts link to the ids behind them: never more ids than the count (sealed
    // examples are counted, not listed), at least one
    let drill_links = all(&dom, "a.drill");
    assert!(!drill_links.is_empty(), "no count links to a drill-down");
    for a in &drill_links {
        let count: usize = inner_text(&dom, a).trim().parse().unwrap();
        let target = attr(a, "href").unwrap()[1..].to_string();
        let group =
            dom.get_element_by_id(target.as_str()).and_then(|h| h.get(dom.parser())).and_then(|n| n.as_tag()).unwrap();
        let listed = under(&dom, group, "li").len();
        assert!(listed >= 1 && listed <= count, "{target}: {listed} ids listed for a count of {count}");
    }
    // the ids listed are exactly the unsealed removed examples of the demo
    let listed: BTreeSet<String> =
        all(&dom, "#drill-removed-examples li").iter().map(|li| inner_text(&dom, li)).collect();
    let expected: BTreeSet<String> = strings(
        &conn,
        "select distinct r.example_id from refine_examples as r where r.removed_reason is not null \
         and not r.window_sealed and r.example_id not in (select example_id from sealed_content)",
    )
    .into_iter()
    .collect();
    assert!(!expected.is_empty());
    assert_eq!(listed, expected);

    // every chart is an SVG with marks (rectangles beyond the background, or lines)
    let charts = all(&dom, "figure.chart svg");
    assert!(charts.len() >= 15, "only {} charts", charts.len());
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
    let run = bin()
        .args(["--db", db.to_str().unwrap(), "report", "removals", "--version", "v3", "--format", "html", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
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
    let dir = std::env::temp_dir().join(format!("sphragis-html-contract-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("c.duckdb");
    let views = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft/views.jsonl");
    let run = bin().args(["--db", db.to_str().unwrap(), "-q", "load", "views"]).arg(&views).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let out = dir.join("contract.html");
    let run = bin()
        .args(["--db", db.to_str().unwrap(), "report", "contract", "--format", "html", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
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
