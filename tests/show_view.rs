//! `sphragis show view` (issue 13, the token-level loss-mask viewer), run as a binary on
//! views built from `data-samples/` with the sample ChatML tokenizer, on the audit sample
//! views with their pools, and on small views written here. Every expected mask, span and
//! exposure is read independently from `sft_views` / `sft_view_spans` with a stock DuckDB
//! connection, or computed by hand from the sample lines.

mod common;

use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("sphragis-show-view-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.join("t.duckdb")
    }

    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sphragis"));
        c.arg("--db").arg(self.db()).arg("--quiet").args(args).current_dir(&self.dir);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// One JSON value from a query on a plain DuckDB connection (no sphragis code).
    fn json(&self, sql: &str, view_id: &str) -> serde_json::Value {
        let config = duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap();
        let conn = duckdb::Connection::open_with_flags(self.db(), config).unwrap();
        let text: String = conn.query_row(sql, [view_id], |r| r.get(0)).unwrap_or_else(|e| panic!("{sql}: {e}"));
        serde_json::from_str(&text).unwrap()
    }

    /// The 0-based positions whose mask value is 1, from sft_views.
    fn supervised_positions(&self, view_id: &str) -> Vec<i64> {
        let v = self.json(
            "select to_json(list_filter(range(len(loss_mask)), lambda i: loss_mask[i + 1] = 1))::varchar \
             from sft_views where view_id = ?",
            view_id,
        );
        serde_json::from_value(v).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn sft() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft")
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

const INSTANCES: [&str; 3] = ["broken__lint-3", "demo__env-1", "demo__fix-2"];

/// The three sample trajectories rendered with the sample ChatML template and tokenizer
/// into pool A, loaded without --tokenizer (so the tokenizer is recorded only in each
/// view's origin, by `views build`).
fn built(name: &str) -> Scratch {
    let s = Scratch::new(name);
    for instance in INSTANCES {
        s.ok(&["load", "trajectories", path(&sft().join(format!("audit/{instance}.traj.json")))]);
    }
    let tokenizer = sft().join("chatml_tokenizer.json");
    let template = sft().join("chatml_training.jinja");
    s.ok(&[
        "views",
        "build",
        "--tokenizer",
        path(&tokenizer),
        "--template",
        path(&template),
        "--pool",
        "A",
        "--out",
        "v.jsonl",
    ]);
    s.ok(&["load", "views", "v.jsonl"]);
    s
}

/// The audit sample views (ids only, no tokenizer) with their pool roles: A, C1, C2
/// repair, B recovery, C3 report-only.
fn audit(name: &str) -> Scratch {
    let s = Scratch::new(name);
    s.ok(&["load", "views", path(&sft().join("audit/views.jsonl"))]);
    s.ok(&["load", "pools", path(&sft().join("audit/pools.json"))]);
    s
}

/// One token element of the HTML: (classes, data-pos, data-mask, data-exposure, text).
struct Token {
    classes: Vec<String>,
    pos: i64,
    exposure: i64,
    text: String,
    id: Option<String>,
}

fn tokens(html: &str) -> Vec<Token> {
    let re = Regex::new(
        r#"<span class="(sphm-t[^"]*)"(?: id="([^"]*)")? data-pos="(\d+)" data-mask="([^"]*)" data-exposure="(\d+)" title="[^"]*">([^<]*)</span>"#,
    )
    .unwrap();
    re.captures_iter(html)
        .map(|c| Token {
            classes: c[1].split(' ').map(String::from).collect(),
            id: c.get(2).map(|m| m.as_str().to_string()),
            pos: c[3].parse().unwrap(),
            exposure: c[5].parse().unwrap(),
            text: html_unescape(&c[6]),
        })
        .collect()
}

fn html_unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#x27;", "'").replace("&amp;", "&")
}

#[test]
fn html_colours_exactly_the_supervised_positions_of_a_built_view() {
    let s = built("html");
    let tokenizer = sft().join("chatml_tokenizer.json");
    let re = Regex::new(r#"<details class="sphm-msg[^"]*" data-role="([^"]*)" data-msg="(\d+)""#).unwrap();
    for view_id in ["A:demo__env-1", "A:broken__lint-3"] {
        let html = s.ok(&["show", "view", view_id, "--format", "html", "--tokenizer", path(&tokenizer)]);
        let toks = tokens(&html);
        let n_ids = s.json("select n_ids::varchar from sft_views where view_id = ?", view_id);
        assert_eq!(toks.len() as u64, n_ids.as_u64().unwrap(), "one element per position");
        assert!(toks.iter().enumerate().all(|(i, t)| t.pos == i as i64), "positions in order, none merged");
        let coloured: Vec<i64> =
            toks.iter().filter(|t| t.classes.iter().any(|c| c == "sphm-sup")).map(|t| t.pos).collect();
        let expected = s.supervised_positions(view_id);
        assert!(!expected.is_empty());
        assert_eq!(coloured, expected, "{view_id}: coloured positions = mask 1 positions");
        // the tokens read back as the rendering: the chat template's markers, per position
        assert_eq!(toks[0].text, "<|im_start|>");
        assert!(toks.iter().any(|t| t.text == "<think>" && t.classes.iter().any(|c| c == "sphm-sup")));
        // one section per message span, with its role and index, in order
        let spans = s.json(
            "select to_json(list({'msg': msg_index, 'role': role} order by ordinal))::varchar from sft_view_spans where view_id = ?",
            view_id,
        );
        let shown: Vec<serde_json::Value> = re
            .captures_iter(&html)
            .map(|c| serde_json::json!({"msg": c[2].parse::<i64>().unwrap(), "role": &c[1]}))
            .collect();
        assert_eq!(serde_json::Value::Array(shown), spans);
        assert!(
            html.contains("data-role=\"assistant\" data-msg=\"2\" data-kept=\"kept\""),
            "kept assistant messages are marked"
        );
        assert!(html.contains("passes every contract check"));
        assert!(html.contains("macro sft_view_positions_at_v1 sha256 "), "stamped with the macro the rows came from");
        assert!(
            html.starts_with("<!DOCTYPE html>") && !html.contains("<script") && !html.contains("http"),
            "offline page"
        );
    }
}

#[test]
fn a_view_that_records_its_tokenizer_needs_that_tokenizer_or_ids() {
    let s = built("tokenizer");
    let sha = s.json(
        "select to_json(origin::json->>'tokenizer_sha256')::varchar from sft_views where view_id = ?",
        "A:demo__env-1",
    );
    let sha = sha.as_str().unwrap();
    // none given: an error naming the SHA-256 and the two ways out
    let out = s.run(&["show", "view", "A:demo__env-1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(sha) && stderr.contains("--tokenizer FILE") && stderr.contains("--ids"), "{stderr}");
    // another tokenizer: refused, naming both
    let other = sft().join("tokenizer.json");
    let out = s.run(&["show", "view", "A:demo__env-1", "--tokenizer", path(&other)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(sha) && stderr.contains("tokenizer.json has sha256"), "{stderr}");
    // --ids: the token ids, said so
    let text = s.ok(&["show", "view", "A:demo__env-1", "--ids", "--format", "text"]);
    assert!(text.contains("token ids shown"), "{text}");
}

/// `(styled text, SGR parameters)` of every styled token after the first message header,
/// and the plain text left around them.
fn ansi_tokens(out: &str) -> (Vec<(String, String)>, String) {
    let body = &out[out.find("\u{1b}[2m──").expect("a message header")..];
    let header = Regex::new("\u{1b}\\[2m── [^\n]*──\u{1b}\\[0m").unwrap();
    let body = header.replace_all(body, "");
    let styled = Regex::new("\u{1b}\\[([0-9;]*)m([^\u{1b}]*)\u{1b}\\[0m").unwrap();
    let tokens = styled.captures_iter(&body).map(|c| (c[2].to_string(), c[1].to_string())).collect();
    (tokens, styled.replace_all(&body, "").into_owned())
}

#[test]
fn ansi_colours_exactly_the_supervised_tokens() {
    let s = audit("ansi");
    // A:demo__env-1: ids 11..=18, mask [0,0,1,0,1,0,1,0]; B:demo__env-1 (recovery)
    // supervises positions 4 and 6, so they have exposure 2 (A and B) and lie in the
    // recovery region; position 2 has exposure 1.
    let out = s.ok(&["show", "view", "A:demo__env-1", "--format", "ansi"]);
    let (styled, plain) = ansi_tokens(&out);
    let supervised: Vec<&str> =
        styled.iter().filter(|(_, p)| p.split(';').any(|x| x == "42")).map(|(t, _)| t.trim()).collect();
    assert_eq!(supervised, ["13", "15", "17"]);
    assert_eq!(supervised.len(), s.supervised_positions("A:demo__env-1").len());
    // exposure 2 is bold, the recovery region underlined; nothing unsupervised is styled
    assert_eq!(
        styled.iter().map(|(t, p)| (t.trim(), p.as_str())).collect::<Vec<_>>(),
        [("13", "30;42"), ("15", "1;30;42;4"), ("17", "1;30;42;4")]
    );
    let unstyled: Vec<&str> = plain.split_whitespace().collect();
    assert_eq!(unstyled, ["11", "12", "14", "16", "18"]);
    // not a terminal and no --format: plain text, the runs bracketed, no escape at all
    let text = s.ok(&["show", "view", "A:demo__env-1"]);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("⟦13⟧") && text.contains("⟦15⟧") && text.contains("no colours"), "{text}");
    // an explicit --format ansi wins over NO_COLOR (no-color.org: arguments override it)
    let forced = s.run_env(&["show", "view", "A:demo__env-1", "--format", "ansi"], &[("NO_COLOR", "1")]);
    assert!(String::from_utf8_lossy(&forced.stdout).contains("\u{1b}[30;42m13\u{1b}[0m"));
}

#[test]
fn html_shows_exposure_and_recovery_region_per_position() {
    let s = audit("exposure");
    let html = s.ok(&["show", "view", "A:demo__env-1", "--format", "html"]);
    let toks = tokens(&html);
    let exposure: Vec<i64> = toks.iter().map(|t| t.exposure).collect();
    assert_eq!(exposure, [0, 0, 1, 0, 2, 0, 2, 0]);
    let recovery: Vec<i64> = toks.iter().filter(|t| t.classes.iter().any(|c| c == "sphm-rec")).map(|t| t.pos).collect();
    assert_eq!(recovery, [4, 6]);
    let x2: Vec<i64> = toks.iter().filter(|t| t.classes.iter().any(|c| c == "sphm-x2")).map(|t| t.pos).collect();
    assert_eq!(x2, [4, 6]);
    assert!(html.contains("recovery region"), "the legend names the region when a recovery pool is loaded");
}

#[test]
fn first_offending_position_of_a_failed_contract_check_is_highlighted() {
    let s = Scratch::new("offending");
    // position 1 is supervised inside the user message: supervised_in_kept_assistant
    // fails there; the ledger claims 3 supervised (there are 2): ledger fails, no position
    let line = serde_json::json!({
        "view_id": "bad:1", "pool": "A", "instance_id": "i1",
        "input_ids": [5, 6, 7, 8], "loss_mask": [0, 1, 0, 1],
        "message_spans": [{"index": 0, "role": "user", "start": 0, "end": 2}, {"index": 1, "role": "assistant", "start": 2, "end": 4}],
        "span_end": "exclusive", "keep_msgs": null, "ledger": {"n_tokens": 4, "n_supervised": 3}
    });
    std::fs::write(s.dir.join("bad.jsonl"), format!("{line}\n")).unwrap();
    s.ok(&["load", "views", "bad.jsonl"]);
    let html = s.ok(&["show", "view", "bad:1", "--format", "html"]);
    let toks = tokens(&html);
    let bad: Vec<(i64, Option<String>)> =
        toks.iter().filter(|t| t.classes.iter().any(|c| c == "sphm-bad")).map(|t| (t.pos, t.id.clone())).collect();
    assert_eq!(bad.len(), 1, "{html}");
    assert_eq!(bad[0].0, 1);
    let anchor = bad[0].1.clone().expect("the first offending position has an id");
    assert!(
        html.contains(&format!("first offending position <a href=\"#{anchor}\">1</a> (supervised_in_kept_assistant)")),
        "{html}"
    );
    assert!(html.contains("fails 2 contract check(s)") && html.contains("<code>ledger</code>"), "{html}");
    // the supervised colour stays exact on a failing view too
    let coloured: Vec<i64> = toks.iter().filter(|t| t.classes.iter().any(|c| c == "sphm-sup")).map(|t| t.pos).collect();
    assert_eq!(coloured, [1, 3]);
    // on a terminal: named, and painted white on red
    let out = s.ok(&["show", "view", "bad:1", "--format", "ansi"]);
    assert!(out.contains("first offending position: 1 (supervised_in_kept_assistant)"), "{out}");
    let (styled, _) = ansi_tokens(&out);
    assert_eq!(
        styled.iter().map(|(t, p)| (t.trim(), p.as_str())).collect::<Vec<_>>(),
        [("6", "97;41"), ("8", "30;42")]
    );
}

#[test]
fn show_view_of_an_unknown_id_fails_naming_it_and_how_to_list_ids() {
    let s = audit("unknown");
    let out = s.run(&["show", "view", "demo__env-1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no SFT view has view_id 'demo__env-1'"), "{stderr}");
    assert!(stderr.contains("A:demo__env-1, B:demo__env-1"), "near ids are named: {stderr}");
    assert!(stderr.contains("select view_id, pool, instance_id from sft_views"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn show_view_writes_an_html_file_for_out_html() {
    let s = audit("out");
    let stdout = s.ok(&["show", "view", "C3:broken__lint-3", "--out", "m.html"]);
    assert!(stdout.contains("m.html"), "{stdout}");
    let html = std::fs::read_to_string(s.dir.join("m.html")).unwrap();
    assert!(html.contains("<section class=\"sphm\""), "an .html --out means the HTML page");
    assert_eq!(tokens(&html).len(), 8);
}

#[test]
#[ignore = "reads the Qwen3 reference views and tokenizer in ../shared/data"]
fn real_byte_level_views_show_one_element_per_position_and_their_own_supervised_count() {
    let data = common::shared().join("data");
    let s = Scratch::new("qwen3");
    let tokenizer = data.join("tokenizers/qwen3/tokenizer.json");
    let views = data.join("sft/reference-views-qwen3/views.jsonl");
    s.ok(&["load", "views", path(&views), "--pool", "A", "--span-end", "exclusive", "--tokenizer", path(&tokenizer)]);
    // the producer's own counts (transformers' apply_chat_template, see PROVENANCE.md)
    let expected: Vec<(String, u64, u64)> = std::fs::read_to_string(&views)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["instance_id"].as_str().unwrap().to_string(),
                v["n_tokens"].as_u64().unwrap(),
                v["n_supervised"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(expected.len(), 2);
    for (instance, n_tokens, n_supervised) in expected {
        let view_id = s.json("select to_json(view_id)::varchar from sft_views where instance_id = ?", &instance);
        let view_id = view_id.as_str().unwrap();
        // the view records its tokenizer (given at load), so it decodes with that file
        let html = s.ok(&["show", "view", view_id, "--format", "html", "--tokenizer", path(&tokenizer)]);
        let toks = tokens(&html);
        assert_eq!(toks.len() as u64, n_tokens, "{view_id}: one element per position, byte pieces never merged");
        let coloured = toks.iter().filter(|t| t.classes.iter().any(|c| c == "sphm-sup")).count() as u64;
        assert_eq!(coloured, n_supervised, "{view_id}");
        // decoded with the recorded tokenizer: the first position is Qwen3's turn opener
        assert_eq!(toks[0].text, "<|im_start|>");
    }
}
