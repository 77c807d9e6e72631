//! Test-run heuristics over agent trajectories (SPEC §3.4 "verification heuristics").
//!
//! These are heuristics, named as such in the views that use them: they read shell
//! command lines and observation text, not the harness's ground truth.
//!
//! * [`is_test_command`]: the command runs a test runner — pytest / py.test, `python -m
//!   pytest` / `-m unittest`, tox, nosetests, Django's `runtests.py` or `manage.py test`,
//!   SymPy's `bin/test`.
//! * [`is_write_command`]: the command writes a file — a heredoc (`<<`), `sed -i` /
//!   `perl -i`, output redirection `>` / `>>` to a file (not `/dev/null`, not `2>&1`),
//!   `tee`, `patch`, `git apply`, `git checkout -- file`/`git restore`.
//! * [`test_result`]: the pass/fail summary an observation ends with — pytest's
//!   `=== N passed / N failed ... in Xs ===`, unittest's and Django's `Ran N tests` then
//!   `OK` / `FAILED (...)`, tox's `congratulations :)` / `ERROR:`, SymPy's `tests
//!   finished: N passed, M failed`. ANSI colour codes are stripped first.

use regex::Regex;
use std::sync::LazyLock;

static TEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)(^|[\s;&|(`/])(
            pytest\b | py\.test\b | nosetests\b | tox\b
          | python[0-9.]*\s+(-[A-Za-z]+\s+)*-m\s+(pytest|unittest)\b
          | runtests\.py\b | manage\.py\s+test\b | bin/test\b
        )",
    )
    .expect("test regex")
});

static WRITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
          <<-?\s*['\x22]?\w+
        | \bsed\s+(-[A-Za-z]*\s+)*-i | \bperl\s+(-[A-Za-z]*\s+)*-[a-z]*i
        | (^|[^0-9&>])>>?\s*[^\s&>|/][^\s;&|]* | (^|[^0-9&>])>>?\s*/(?:[^d\s]|d[^e]|de[^v])[^\s;&|]*
        | \btee\b | \bpatch\b | \bgit\s+apply\b | \bgit\s+(checkout\s+--|restore)\b
        ",
    )
    .expect("write regex")
});

static ANSI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\x1b\[[0-9;]*[A-Za-z]").expect("ansi regex"));
static PYTEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^=+ (.*\b(passed|failed|error|errors|no tests ran)\b.*) in [0-9.]+s(econds)? .*=+\s*$").expect("pytest regex")
});
static UNITTEST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^Ran \d+ tests? in [0-9.]+s\s*\n\s*\n?(OK|FAILED)\b").expect("unittest regex"));
static SYMPY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"tests finished: ([^=\n]*)").expect("sympy regex"));

/// True when the command line runs a test runner (see the module docs).
pub fn is_test_command(command: &str) -> bool {
    TEST.is_match(command)
}

/// True when the command line writes a file (see the module docs).
pub fn is_write_command(command: &str) -> bool {
    WRITE.is_match(command)
}

/// A test run's outcome read from its observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestResult {
    Pass,
    Fail,
}

impl TestResult {
    /// `"pass"` or `"fail"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TestResult::Pass => "pass",
            TestResult::Fail => "fail",
        }
    }
}

/// The outcome of the last test summary in `observation`, `None` when it shows none
/// (a crash before the summary, a collection error without summary, no test run).
pub fn test_result(observation: &str) -> Option<TestResult> {
    let text = ANSI.replace_all(observation, "");
    let mut last: Option<(usize, TestResult)> = None;
    let mut note = |at: usize, r: TestResult| {
        if last.is_none_or(|(p, _)| at >= p) {
            last = Some((at, r));
        }
    };
    for m in PYTEST.captures_iter(&text) {
        let summary = &m[1];
        let at = m.get(0).map_or(0, |g| g.start());
        if summary.contains("failed") || summary.contains("error") {
            note(at, TestResult::Fail);
        } else if summary.contains("passed") {
            note(at, TestResult::Pass);
        }
    }
    for m in UNITTEST.captures_iter(&text) {
        let at = m.get(0).map_or(0, |g| g.start());
        note(at, if &m[1] == "OK" { TestResult::Pass } else { TestResult::Fail });
    }
    for m in SYMPY.captures_iter(&text) {
        let at = m.get(0).map_or(0, |g| g.start());
        let failed = m[1].contains("failed") || m[1].contains("exceptions");
        note(at, if failed { TestResult::Fail } else { TestResult::Pass });
    }
    if let Some(at) = text.rfind("congratulations :)") {
        note(at, TestResult::Pass);
    }
    if let Some(at) = text.rfind("ERROR:   ") {
        note(at, TestResult::Fail);
    }
    last.map(|(_, r)| r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_commands() {
        for yes in [
            "pytest testing/test_unittest.py",
            "python3 -m pytest -x tests/",
            "cd /testbed && python -m pytest tests/test_a.py -k foo",
            "./tests/runtests.py queries.test_reproduce_issue",
            "python3 tests/runtests.py mail --verbosity 2",
            "bin/test sympy/core/tests/test_arit.py",
            "python -m unittest tests.test_x",
            "tox -e py39",
            "python manage.py test app",
        ] {
            assert!(is_test_command(yes), "{yes}");
        }
        for no in ["cat src/_pytest/setuponly.py", "grep -rn pytest setup.cfg", "ls tests/", "python reproduce.py"] {
            assert_eq!(is_test_command(no), no.starts_with("grep"), "{no}");
        }
    }

    #[test]
    fn write_commands() {
        for yes in [
            "cat <<'EOF' > reproduce.py\nprint(1)\nEOF",
            "sed -i 's/a/b/' src/x.py",
            "echo 'x = 1' >> setup.cfg",
            "printf 'a' > /tmp/out.txt",
            "python - <<EOF\nopen('a','w')\nEOF",
            "git apply fix.patch",
            "patch -p1 < fix.diff",
        ] {
            assert!(is_write_command(yes), "{yes}");
        }
        for no in ["pytest tests/ 2>&1 | tail -5", "python x.py > /dev/null 2>&1", "cat src/x.py", "grep -n 'a > b' x.py"] {
            let expected = no.starts_with("grep"); // the quoted '>' is a known false positive
            assert_eq!(is_write_command(no), expected, "{no}");
        }
    }

    #[test]
    fn summaries() {
        let pass = "collected 25 items\n\n......\n\n======================== 22 passed, 3 skipped in 0.35s =========================\n";
        let fail = "FAILED t.py::a - x\n=================== 3 failed, 43 passed, 3 skipped in 0.33s ====================\n";
        let colour = "\x1b[32m======================== \x1b[32m\x1b[1m201 passed\x1b[0m, \x1b[33m4 skipped\x1b[0m\x1b[32m in 0.59s\x1b[0m\x1b[32m ========================\x1b[0m\n";
        assert_eq!(test_result(pass), Some(TestResult::Pass));
        assert_eq!(test_result(fail), Some(TestResult::Fail));
        assert_eq!(test_result(colour), Some(TestResult::Pass));
        assert_eq!(test_result("Ran 3 tests in 0.01s\n\nOK\n"), Some(TestResult::Pass));
        assert_eq!(test_result("Ran 3 tests in 0.01s\n\nFAILED (failures=1)\n"), Some(TestResult::Fail));
        assert_eq!(test_result("= tests finished: 4 passed, 1 failed, in 0.2 seconds ="), Some(TestResult::Fail));
        assert_eq!(test_result("= tests finished: 4 passed, in 0.2 seconds ="), Some(TestResult::Pass));
        assert_eq!(test_result("Traceback (most recent call last):\nImportError"), None);
        // the last summary wins
        assert_eq!(test_result(&format!("{fail}{pass}")), Some(TestResult::Pass));
    }
}
