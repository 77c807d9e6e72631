//! Examples for `sphragis help <command>` and `<command> --help`, taken from the guide
//! (issue 30): the command lines of the `sh` and `console` blocks of README.md and the task
//! pages in `docs/`, embedded at build time, so an example is written once, in the page that
//! teaches it. `tests/cli.rs` parses every one of them with the current command line, so a
//! renamed option fails the build's tests instead of leaving a page wrong.

/// The pages examples are taken from, as `(path, text)`, in the order they are shown.
pub const PAGES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../README.md")),
    ("docs/review.md", include_str!("../../docs/review.md")),
    ("docs/sft.md", include_str!("../../docs/sft.md")),
    ("docs/runs.md", include_str!("../../docs/runs.md")),
    ("docs/checks.md", include_str!("../../docs/checks.md")),
    ("docs/spark.md", include_str!("../../docs/spark.md")),
    ("docs/reliability.md", include_str!("../../docs/reliability.md")),
];

/// One command line of the guide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// The page it is on, e.g. `docs/sft.md`.
    pub page: &'static str,
    /// The line as written (a `$ ` prompt and a trailing `# comment` taken off).
    pub line: String,
    /// Its words as a shell splits them, `sphragis` first.
    pub words: Vec<String>,
}

impl Example {
    /// The subcommand it runs (`load`), past the global options `--db FILE`, `--quiet`.
    pub fn command(&self) -> Option<&str> {
        let mut words = self.words.iter().skip(1);
        while let Some(w) = words.next() {
            match w.as_str() {
                "--db" => {
                    words.next();
                }
                "--quiet" | "-q" => {}
                w if w.starts_with("--db=") => {}
                w => return Some(w),
            }
        }
        None
    }
}

/// Every `sphragis …` command line in the `sh` / `console` blocks of [`PAGES`], in page
/// order. A line a shell cannot split (an open quote) is left out.
pub fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    for (page, text) in PAGES {
        let mut in_block = false;
        for line in text.lines() {
            let trimmed = line.trim_start();
            if let Some(info) = trimmed.strip_prefix("```") {
                in_block = !in_block && matches!(info.trim(), "sh" | "console" | "bash" | "shell");
                continue;
            }
            if !in_block {
                continue;
            }
            let command = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
            if !command.starts_with("sphragis ") {
                continue;
            }
            let command = strip_comment(command).trim_end();
            let Some(mut words) = shlex::split(command) else { continue };
            // the command alone: a redirection or a pipe ends it
            if let Some(end) = words.iter().position(|w| is_shell_operator(w)) {
                words.truncate(end);
            }
            out.push(Example { page, line: command.to_string(), words });
        }
    }
    out
}

/// Whether a word of a split command line is a shell redirection, pipe or list operator.
fn is_shell_operator(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | "&")
        || word.starts_with('>')
        || word.starts_with('<')
        || word.starts_with("2>")
}

/// `line` without a trailing shell comment: from the first ` #` outside quotes.
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && i > 0 && bytes[i - 1].is_ascii_whitespace() => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The examples section of `command`'s long help: at most `max` lines of `examples` (see
/// [`examples`]) that run it, each with its page; `None` when the guide has none.
pub fn help_text(examples: &[Example], command: &str, max: usize) -> Option<String> {
    let all: Vec<&Example> = examples.iter().filter(|e| e.command() == Some(command)).collect();
    if all.is_empty() {
        return None;
    }
    let mut text = String::from("Examples (from the guide; each page shows them in context):\n");
    let mut seen = std::collections::BTreeSet::new();
    for e in all.iter().filter(|e| seen.insert(e.line.clone())).take(max) {
        text.push_str(&format!("  {}\n      ({})\n", e.line, e.page));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_prompts_and_quotes() {
        assert_eq!(strip_comment("sphragis check   # the verdict"), "sphragis check   ");
        assert_eq!(strip_comment("sphragis sql \"select '#' as x\" # c"), "sphragis sql \"select '#' as x\" ");
        assert_eq!(strip_comment("sphragis sql 'a#b'"), "sphragis sql 'a#b'");
        let e = Example {
            page: "x",
            line: String::new(),
            words: ["sphragis", "--db", "a.duckdb", "-q", "load", "views"].map(String::from).to_vec(),
        };
        assert_eq!(e.command(), Some("load"));
    }

    #[test]
    fn the_readme_tour_is_found() {
        let checks: Vec<Example> = examples().into_iter().filter(|e| e.command() == Some("check")).collect();
        assert!(
            checks
                .iter()
                .any(|e| e.page == "README.md" && e.words == ["sphragis", "--db", "sphragis-demo.duckdb", "check"])
        );
    }
}
