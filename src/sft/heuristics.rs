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
//! * [`test_result`]: the pass/fail summary an observation ends with (the last one wins;
//!   ANSI colour codes are stripped first). The forms recognised, as the tools print them:
//!   - pytest, framed: `=== 3 failed, 43 passed, 3 skipped in 0.33s ===`;
//!   - pytest `-q` / `--quiet`, bare on its own line: `3 passed in 0.02s`, `1 failed,
//!     1 passed in 0.12s`, older `in 0.02 seconds`, long runs `in 123.45s (0:02:03)`;
//!     `no tests ran` gives no result;
//!   - unittest: `Ran 3 tests in 0.001s`, a blank line, then `OK` / `OK (skipped=2)` /
//!     `FAILED (failures=1)`; `NO TESTS RAN` (Python 3.12+) gives no result;
//!   - Django (`manage.py test`, `runtests.py`): unittest's summary; the `System check
//!     identified no issues (0 silenced).` line before it is not a result;
//!   - tox 3: `congratulations :)` (pass), `ERROR:   py311: commands failed` (fail);
//!     tox 4: `congratulations :) (0.59 seconds)` (pass), `evaluation failed :( (8.65
//!     seconds)` (fail), with per-environment lines `py311: OK (...)` / `py39: FAIL code 4
//!     (...)` before them;
//!   - SymPy's `bin/test`: `tests finished: N passed, M failed`.

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
    Regex::new(r"(?m)^=+ (.*\b(passed|failed|error|errors|no tests ran)\b.*) in [0-9.]+s(econds)? .*=+\s*$")
        .expect("pytest regex")
});
/// pytest's bare summary line (`-q`): counts, `in` a duration, nothing else on the line.
static PYTEST_QUIET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^[ \t]*(\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)(?:, \d+ [a-z]+)*) in [0-9.]+ ?s(?:econds)?(?: \(\d+:\d\d:\d\d\))?[ \t]*\r?$",
    )
    .expect("pytest quiet regex")
});
static UNITTEST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^Ran \d+ tests? in [0-9.]+s\s*\n\s*\n?(OK|FAILED)\b").expect("unittest regex"));
/// tox 4's final line on failure (tox 3 prints `ERROR:   <env>: commands failed`).
static TOX_FAILED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*evaluation failed :\(|^ERROR:   \S+: ").expect("tox failed regex"));
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
    for m in PYTEST_QUIET.captures_iter(&text) {
        let summary = &m[1];
        let at = m.get(0).map_or(0, |g| g.start());
        let failed = summary
            .split(", ")
            .any(|part| part.ends_with(" failed") || part.ends_with(" error") || part.ends_with(" errors"));
        if failed {
            note(at, TestResult::Fail);
        } else if summary.split(", ").any(|part| part.ends_with(" passed")) {
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
    if let Some(at) = TOX_FAILED.find_iter(&text).last().map(|m| m.start()) {
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
        for no in
            ["pytest tests/ 2>&1 | tail -5", "python x.py > /dev/null 2>&1", "cat src/x.py", "grep -n 'a > b' x.py"]
        {
            let expected = no.starts_with("grep"); // the quoted '>' is a known false positive
            assert_eq!(is_write_command(no), expected, "{no}");
        }
    }

    #[test]
    fn summaries() {
        let pass = "collected 25 items\n\n......\n\n======================== 22 passed, 3 skipped in 0.35s =========================\n";
        let fail =
            "FAILED t.py::a - x\n=================== 3 failed, 43 passed, 3 skipped in 0.33s ====================\n";
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

    /// Summary forms as pytest, unittest, Django and tox print them (output lines from
    /// their public docs and logs: pytest's getting-started `-q` example, a Django
    /// `manage.py test` run, tox 3 and tox 4 runs in a SWE-bench-style trajectory).
    #[test]
    fn test_result_reads_the_summary_forms_runners_print() {
        // pytest -q: a bare summary line, no `=` frame.
        assert_eq!(
            test_result(
                ".                                                                    [100%]\n1 passed in 0.12s\n"
            ),
            Some(TestResult::Pass)
        );
        assert_eq!(test_result("...\n3 passed in 0.02s"), Some(TestResult::Pass));
        assert_eq!(test_result(".F\n1 failed, 1 passed in 0.12s\n"), Some(TestResult::Fail));
        assert_eq!(test_result("E\n1 error in 0.05s\n"), Some(TestResult::Fail));
        assert_eq!(test_result("2 passed, 1 warning in 0.31s\n"), Some(TestResult::Pass));
        assert_eq!(test_result("5 passed in 0.03 seconds\n"), Some(TestResult::Pass), "pytest < 5.x");
        assert_eq!(test_result("1 failed, 2 passed in 123.45s (0:02:03)\n"), Some(TestResult::Fail));
        assert_eq!(test_result("\x1b[32m3 passed\x1b[0m\x1b[32m in 0.02s\x1b[0m\n"), Some(TestResult::Pass));
        assert_eq!(test_result("no tests ran in 0.01s\n"), None);
        // Not a summary: the words inside a sentence or code.
        assert_eq!(test_result("print('3 passed in 0.02s')\n"), None);
        // unittest
        let ut_fail = "F\n======================================================================\nFAIL: test_one (test_dict.TestUnitTest)\n----------------------------------------------------------------------\nRan 1 test in 0.000s\n\nFAILED (failures=1)\n";
        assert_eq!(test_result(ut_fail), Some(TestResult::Fail));
        assert_eq!(
            test_result(
                "----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK\n"
            ),
            Some(TestResult::Pass)
        );
        assert_eq!(test_result("Ran 0 tests in 0.000s\n\nNO TESTS RAN\n"), None);
        // Django: the system-check line is not a result; the unittest summary is.
        let django = "Creating test database for alias 'default'...\nSystem check identified no issues (0 silenced).\n..s.\n----------------------------------------------------------------------\nRan 419 tests in 233.525s\n\nOK (skipped=2)\nDestroying test database for alias 'default'...\n";
        assert_eq!(test_result(django), Some(TestResult::Pass));
        assert_eq!(test_result("System check identified no issues (0 silenced).\n"), None);
        let django_fail = "System check identified no issues (0 silenced).\nF.\n----------------------------------------------------------------------\nRan 2 tests in 0.004s\n\nFAILED (failures=1, errors=1)\nDestroying test database for alias 'default'...\n";
        assert_eq!(test_result(django_fail), Some(TestResult::Fail));
        // tox 3
        assert_eq!(
            test_result("___ summary ___\n  py311: commands succeeded\n  congratulations :)\n"),
            Some(TestResult::Pass)
        );
        assert_eq!(test_result("___ summary ___\nERROR:   py311: commands failed\n"), Some(TestResult::Fail));
        // tox 4
        assert_eq!(
            test_result("  py311: OK (0.52=setup[0.04]+cmd[0.48] seconds)\n  congratulations :) (0.59 seconds)\n"),
            Some(TestResult::Pass)
        );
        let tox4_fail = "py39: exit 4 (0.45 seconds) /testbed> python -X dev -m pytest -rA tests/test_ext_autodoc_typehints.py pid=324\n  py39: FAIL code 4 (8.11=setup[7.66]+cmd[0.45] seconds)\n  evaluation failed :( (8.65 seconds)\n";
        assert_eq!(test_result(tox4_fail), Some(TestResult::Fail));
        // A pass after a failure: the last summary wins across forms.
        assert_eq!(test_result(&format!("{tox4_fail}3 passed in 0.02s\n")), Some(TestResult::Pass));
    }
}
