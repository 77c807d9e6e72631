//! `views build` over several trajectories (issue 12): the renderers run in parallel,
//! the lines come out in instance order, equal to building each instance alone, and
//! a failure in any one instance stops the build with nothing written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("sphragis-views-build-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .arg("--db")
            .arg(self.dir.join("t.duckdb"))
            .arg("--quiet")
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
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

const INSTANCES: [&str; 3] = ["broken__lint-3", "demo__env-1", "demo__fix-2"];

/// A scratch database with the three sample trajectories loaded (in reverse order, so
/// instance order is not load order).
fn loaded(name: &str) -> Scratch {
    let s = Scratch::new(name);
    for instance in INSTANCES.iter().rev() {
        let path = sft().join(format!("audit/{instance}.traj.json"));
        s.ok(&["load", "trajectories", path.to_str().unwrap()]);
    }
    s
}

fn build(s: &Scratch, template: &Path, out: &str, instances: &[&str]) -> Output {
    let tokenizer = sft().join("tokenizer.json");
    let mut args = vec!["views", "build", "--tokenizer", tokenizer.to_str().unwrap(), "--template"];
    args.extend([template.to_str().unwrap(), "--pool", "A", "--out", out]);
    for i in instances {
        args.extend(["--instance", i]);
    }
    s.run(&args)
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn views_of_several_trajectories_come_out_in_instance_order_as_built_alone() {
    let s = loaded("order");
    let template = sft().join("chatml_training.jinja");
    assert!(build(&s, &template, "all.jsonl", &[]).status.success());
    let all = lines(&s.dir.join("all.jsonl"));
    let ids: Vec<&str> = all.iter().map(|v| v["instance_id"].as_str().unwrap()).collect();
    assert_eq!(ids, INSTANCES);
    for (i, instance) in INSTANCES.iter().enumerate() {
        let out = format!("{instance}.jsonl");
        assert!(build(&s, &template, &out, &[instance]).status.success());
        let alone = lines(&s.dir.join(&out));
        assert_eq!(alone.len(), 1);
        assert_eq!(alone[0], all[i], "{instance}");
        // the spans tile the whole view
        let spans = alone[0]["message_spans"].as_array().unwrap();
        assert_eq!(spans[0]["start"], 0);
        assert!(spans.windows(2).all(|w| w[0]["end"] == w[1]["start"]));
        assert_eq!(spans.last().unwrap()["end"], alone[0]["input_ids"].as_array().unwrap().len());
    }
}

#[test]
fn views_build_stops_at_a_failing_trajectory_and_writes_nothing() {
    let s = loaded("fails");
    // the sample template, made to fail on the first message of one instance only
    let sample = std::fs::read_to_string(sft().join("chatml_training.jinja")).unwrap();
    let failing = format!(
        "{{%- if messages|length > 3 and 'ruff' in messages[3].content %}}{{{{ raise_exception('no ruff here') }}}}{{%- endif %}}{sample}"
    );
    let template = s.dir.join("failing.jinja");
    std::fs::write(&template, failing).unwrap();
    let output = build(&s, &template, "out.jsonl", &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("rendering broken__lint-3") && stderr.contains("no ruff here"), "{stderr}");
    assert!(!s.dir.join("out.jsonl").exists(), "nothing is written");
    assert!(!s.dir.join("out.jsonl.partial").exists());
    // the other two still build with it
    let output = build(&s, &template, "out.jsonl", &INSTANCES[1..]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(lines(&s.dir.join("out.jsonl")).len(), 2);
}

#[test]
fn generation_ending_in_untokenized_whitespace_stays_inside_its_message() {
    // The sample tokenizer (WordLevel, Whitespace pre-tokenizer) covers no whitespace, so
    // each generation range of the ChatML template ends on a character no token covers.
    // Hugging Face's return_assistant_tokens_mask then supervises to the END of the
    // sequence (every later user message trained): views built this way failed the
    // contract's supervised_in_kept_assistant at the first user message after an
    // assistant turn, and `views build` said nothing.
    let s = loaded("hf-fallthrough");
    let out = build(&s, &sft().join("chatml_training.jinja"), "v.jsonl", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: 9 generation ranges in 3 views end (or start) on characters no token covers"),
        "{stderr}"
    );
    for view in lines(&s.dir.join("v.jsonl")) {
        let mask: Vec<u64> = view["loss_mask"].as_array().unwrap().iter().map(|m| m.as_u64().unwrap()).collect();
        let spans = view["message_spans"].as_array().unwrap();
        // every supervised position lies inside an assistant message, and every assistant
        // message has some
        for (t, _) in mask.iter().enumerate().filter(|(_, m)| **m == 1) {
            let span = spans
                .iter()
                .find(|s| s["start"].as_u64().unwrap() as usize <= t && t < s["end"].as_u64().unwrap() as usize);
            assert_eq!(
                span.map(|s| s["role"].as_str().unwrap()),
                Some("assistant"),
                "{} position {t}",
                view["view_id"]
            );
        }
        for s in spans.iter().filter(|s| s["role"] == "assistant") {
            let (a, b) = (s["start"].as_u64().unwrap() as usize, s["end"].as_u64().unwrap() as usize);
            assert!(mask[a..b].contains(&1), "{} message {}", view["view_id"], s["index"]);
        }
        assert_eq!(
            view["origin"]["mask_rule"]["generation_ranges"],
            serde_json::json!([0, 1, 2]),
            "{}",
            view["view_id"]
        );
    }
    // loaded, they pass the contract
    let tokenizer = sft().join("tokenizer.json");
    s.ok(&["load", "views", "v.jsonl", "--tokenizer", tokenizer.to_str().unwrap()]);
    let failures = s.ok(&["sql", "select count(*) from sft_contract_failures_v1", "--format", "csv", "--csv-raw"]);
    assert_eq!(failures.lines().nth(1), Some("0"), "{failures}");
}

/// HF's template variables (issue 27): the special tokens beside the tokenizer
/// (tokenizer_config.json) and `strftime_now`, pinned by `--date`, render as the same
/// template with those texts written in; the values used are in each view's origin.
#[test]
fn special_tokens_and_a_pinned_date_render_as_written_out() {
    let s = loaded("globals");
    let sample = std::fs::read_to_string(sft().join("chatml_training.jinja")).unwrap();
    let dir = s.dir.join("tok");
    std::fs::create_dir_all(&dir).unwrap();
    // a word-level ChatML tokenizer: <|im_end|> is one special token, words are unknown
    std::fs::copy(sft().join("chatml_tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    std::fs::write(dir.join("tokenizer_config.json"), r#"{"eos_token": "<|im_end|>", "pad_token": null}"#).unwrap();
    let with_globals = s.dir.join("globals.jinja");
    std::fs::write(
        &with_globals,
        format!("{{{{- 'Date: ' + strftime_now('%d %b %Y') + eos_token + '\\n' }}}}{sample}"),
    )
    .unwrap();
    let written_out = s.dir.join("written.jinja");
    std::fs::write(&written_out, format!("{{{{- 'Date: 04 Jul 2026<|im_end|>\\n' }}}}{sample}")).unwrap();
    let tokenizer = dir.join("tokenizer.json");
    let run = |template: &Path, out: &str, date: &str| {
        let mut args = vec!["views", "build", "--tokenizer", tokenizer.to_str().unwrap(), "--template"];
        args.extend([template.to_str().unwrap(), "--pool", "A", "--out", out, "--instance", "demo__fix-2"]);
        if !date.is_empty() {
            args.extend(["--date", date]);
        }
        let output = s.run(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        lines(&s.dir.join(out)).remove(0)
    };
    let g = run(&with_globals, "g.jsonl", "2026-07-04");
    let w = run(&written_out, "w.jsonl", "");
    assert_eq!(g["input_ids"], w["input_ids"]);
    assert_eq!(g["loss_mask"], w["loss_mask"]);
    assert_eq!(g["message_spans"], w["message_spans"]);
    let globals = &g["origin"]["template_globals"];
    assert_eq!(globals["strftime_now"], "2026-07-04T00:00:00");
    assert_eq!(globals["special_tokens"], serde_json::json!({"eos_token": "<|im_end|>"}));
    assert!(globals["special_tokens_from"][0].as_str().unwrap().ends_with("tokenizer_config.json"));
    // the template that never calls strftime_now records no date
    assert!(w["origin"]["template_globals"].get("strftime_now").is_none());
    // another date is recorded as given; a malformed date is a usage error
    let later = run(&with_globals, "l.jsonl", "2026-12-25");
    assert_eq!(later["origin"]["template_globals"]["strftime_now"], "2026-12-25T00:00:00");
    // without the eos token the template adds text to an undefined value: refused, as HF
    // (jinja2) refuses it, never rendered without it
    std::fs::write(dir.join("tokenizer_config.json"), r#"{"pad_token": "<|endoftext|>"}"#).unwrap();
    let mut args = vec!["views", "build", "--tokenizer", tokenizer.to_str().unwrap(), "--template"];
    args.extend([with_globals.to_str().unwrap(), "--pool", "A", "--out", "u.jsonl", "--instance", "demo__fix-2"]);
    let output = s.run(&args);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!s.dir.join("u.jsonl").exists());
    let output = s.run(&[
        "views",
        "build",
        "--tokenizer",
        tokenizer.to_str().unwrap(),
        "--pool",
        "A",
        "--out",
        "x.jsonl",
        "--date",
        "July 4",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    // chrono alone would read these as year 26 and as one-digit fields
    for bad in ["26-01-01", "2026-1-5", "+2026-01-05", "2026-13-40"] {
        let tok = tokenizer.to_str().unwrap();
        let output = s.run(&["views", "build", "--tokenizer", tok, "--pool", "A", "--out", "x.jsonl", "--date", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}: {}", String::from_utf8_lossy(&output.stderr));
    }
}
