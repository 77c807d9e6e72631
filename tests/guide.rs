//! The guide's walk-throughs run as written (issue 30): every ```console block of the task
//! pages is a session on `data-samples/`. Each page runs top to bottom in a fresh folder in
//! which `data-samples` is the project's samples; a `$ sphragis …` line runs the built
//! binary, and the lines after it are its output (stdout, then stderr) as the page shows it.
//!
//! Matching: a line is equal after trailing white space is taken off, or, when it holds `…`,
//! the text before and after each `…` appears in that order; a line that is only `…` stands
//! for any number of lines. `[exit N]` as the last line of an output says the command exits
//! N (without it, 0).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pages with walk-throughs.
const PAGES: &[&str] = &["docs/review.md", "docs/sft.md", "docs/runs.md", "docs/checks.md"];

/// One `$ ` line of a console block and the output the page shows for it.
#[derive(Debug)]
struct Step {
    line_no: usize,
    command: String,
    expected: Vec<String>,
}

fn steps(text: &str) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut in_console = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            in_console = !in_console && info.trim() == "console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            out.push(Step { line_no: i + 1, command: command.to_string(), expected: Vec::new() });
        } else if let Some(step) = out.last_mut() {
            step.expected.push(line.to_string());
        }
    }
    out
}

/// Whether `line` matches the page's `pattern` (see the module docs).
fn line_matches(pattern: &str, line: &str) -> bool {
    let (pattern, line) = (pattern.trim_end(), line.trim_end());
    if !pattern.contains('…') {
        return pattern == line;
    }
    let parts: Vec<&str> = pattern.split('…').collect();
    let mut rest = line;
    for (k, part) in parts.iter().enumerate() {
        if k == 0 {
            let Some(r) = rest.strip_prefix(part) else { return false };
            rest = r;
        } else if k == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else { return false };
            rest = &rest[at + part.len()..];
        }
    }
    true
}

/// Whether the lines `got` match the `expected` lines (with `…` lines standing for any run).
fn lines_match(expected: &[String], got: &[&str]) -> bool {
    match expected.split_first() {
        None => got.is_empty(),
        Some((first, rest)) if first.trim() == "…" => (0..=got.len()).any(|skip| lines_match(rest, &got[skip..])),
        Some((first, rest)) => !got.is_empty() && line_matches(first, got[0]) && lines_match(rest, &got[1..]),
    }
}

fn run_page(page: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(page)).unwrap();
    let steps = steps(&text);
    assert!(!steps.is_empty(), "{page} has no console block to run");
    let dir: PathBuf =
        std::env::temp_dir().join(format!("sphragis-guide-{}-{}", page.replace(['/', '.'], "-"), std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(root.join("data-samples"), dir.join("data-samples")).unwrap();
    for step in &steps {
        let words = shlex::split(&step.command).unwrap_or_else(|| panic!("{page}:{}: cannot split", step.line_no));
        assert_eq!(words[0], "sphragis", "{page}:{}: a walk-through runs sphragis only", step.line_no);
        let mut expected = step.expected.clone();
        while expected.last().is_some_and(|l| l.trim().is_empty()) {
            expected.pop();
        }
        let want_exit = match expected.last().and_then(|l| l.trim().strip_prefix("[exit ")) {
            Some(n) => {
                let code = n.trim_end_matches(']').parse::<i32>().unwrap();
                expected.pop();
                code
            }
            None => 0,
        };
        let out = Command::new(env!("CARGO_BIN_EXE_sphragis"))
            .args(&words[1..])
            .current_dir(&dir)
            .env_remove("SPHRAGIS_DB")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let got: Vec<&str> = stdout.lines().chain(stderr.lines()).collect();
        assert_eq!(
            out.status.code(),
            Some(want_exit),
            "{page}:{}: `{}` exited {:?}\n{stdout}{stderr}",
            step.line_no,
            step.command,
            out.status.code()
        );
        assert!(
            lines_match(&expected, &got),
            "{page}:{}: `{}` printed what the page does not show.\n--- the page:\n{}\n--- the command:\n{}",
            step.line_no,
            step.command,
            expected.join("\n"),
            got.join("\n")
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn matching_rules() {
    assert!(line_matches("a … c", "a b c"));
    assert!(line_matches("view x sha256 …", "view x sha256 abc"));
    assert!(!line_matches("a … c", "a b d"));
    assert!(line_matches("x  ", "x"));
    let got = ["one", "two", "three", "four"];
    assert!(lines_match(&["one".into(), "…".into(), "four".into()], &got));
    assert!(!lines_match(&["one".into(), "three".into()], &got[..2]));
    assert!(lines_match(&["…".into()], &[]));
    let s = steps("x\n```console\n$ sphragis a\nout\n$ sphragis b\n```\n$ not\n");
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].expected, ["out"]);
    assert!(s[1].expected.is_empty());
}

#[test]
fn review_walkthrough_runs_as_written() {
    run_page("docs/review.md");
}

#[test]
fn sft_walkthrough_runs_as_written() {
    run_page("docs/sft.md");
}

#[test]
fn runs_walkthrough_runs_as_written() {
    run_page("docs/runs.md");
}

#[test]
fn checks_walkthrough_runs_as_written() {
    run_page("docs/checks.md");
}

#[test]
fn every_page_with_a_walkthrough_is_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let rel = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
            let has = std::fs::read_to_string(&path).unwrap().lines().any(|l| l.trim_end() == "```console");
            assert_eq!(
                has,
                PAGES.contains(&rel.as_str()),
                "{rel}: a page with a console block is run here, and only such"
            );
        }
    }
}
