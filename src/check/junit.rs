//! JUnit XML of a check run (`check --format junit`), written with `quick-junit`: one test
//! suite per area, one test case per check and scope (`<check> [<scope>]`, class name
//! `sphragis.<area>.<check>`), a `<failure>` for every result at or above `--fail-on`, a
//! `<skipped>` for every check that did not run (with its reason), and the figures,
//! detail and drill-down query in the case's system-out. CI servers (GitHub Actions test
//! reporters, GitLab, Jenkins) render it as they render tests.

use super::{FailOn, Finding, Status};
use anyhow::Result;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

/// The report of `findings`, in their order, grouped by area (areas in order of first
/// appearance).
///
/// Errors: the XML cannot be serialized (a bug).
pub fn render(findings: &[Finding], fail_on: FailOn) -> Result<String> {
    let mut report = Report::new("sphragis check");
    let mut areas: Vec<&str> = Vec::new();
    for f in findings {
        if !areas.contains(&f.area.as_str()) {
            areas.push(&f.area);
        }
    }
    for area in areas {
        let mut suite = TestSuite::new(format!("sphragis.{area}"));
        for f in findings.iter().filter(|f| f.area == area) {
            let summary = summary(f);
            let status = if fail_on.fails(f.status) {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(summary.clone());
                s.set_type(format!("{} {}", f.severity.as_str(), f.status.as_str()));
                s
            } else if f.status == Status::NotRun {
                let mut s = TestCaseStatus::skipped();
                s.set_message(f.reason.clone().unwrap_or_else(|| "not run".into()));
                s
            } else {
                TestCaseStatus::success()
            };
            let mut case = TestCase::new(format!("{} [{}]", f.check_name, f.scope), status);
            case.set_classname(format!("sphragis.{area}.{}", f.check_name));
            let mut out = format!("status: {}\nseverity: {}\n{summary}\n", f.status.as_str(), f.severity.as_str());
            for (label, text) in [("reason", &f.reason), ("detail", &f.detail), ("drill-down", &f.drill_down)] {
                if let Some(text) = text {
                    out.push_str(&format!("{label}: {text}\n"));
                }
            }
            case.set_system_out(out);
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    Ok(report.to_string()?)
}

/// `failing 2 of 5 (share 0.4); error_if failing > 0`, or `not run: <reason>`.
pub fn summary(f: &Finding) -> String {
    let (Some(tested), Some(failing)) = (f.tested, f.failing) else {
        return format!("not run: {}", f.reason.as_deref().unwrap_or("nothing to test"));
    };
    let mut s = format!("failing {failing} of {tested}");
    if let Some(share) = f.share {
        s.push_str(&format!(" (share {})", round4(share)));
    }
    let conditions: Vec<String> = [("error_if", &f.error_if), ("warn_if", &f.warn_if)]
        .iter()
        .filter_map(|(k, c)| c.map(|c| format!("{k} {c}")))
        .collect();
    if !conditions.is_empty() {
        s.push_str(&format!("; {}", conditions.join(", ")));
    }
    if let Some(b) = &f.baseline {
        match (b.failing, b.tested, b.share) {
            (Some(bf), Some(bt), Some(bs)) => {
                s.push_str(&format!("; baseline {}: failing {bf} of {bt} (share {})", b.source, round4(bs)))
            }
            _ => s.push_str(&format!("; baseline {}: not run", b.source)),
        }
    }
    s
}

/// `x` rounded to 4 decimals, printed without trailing zeros.
pub fn round4(x: f64) -> String {
    let r = (x * 10_000.0).round() / 10_000.0;
    format!("{r}")
}
