//! `sphragis check`: the verdict a pipeline gates on (issue 26). Reads every check of
//! `check_findings_at_v1`, applies `--config checks.toml` and `--baseline`, prints the
//! findings failures first (table, JSON or JUnit XML), records the run, and exits 4 when a
//! result at or above `--fail-on` fails.

use super::{CliError, outln};
use crate::check::{self, CHECKS, FailOn, Finding, Status, baseline::Baseline, config::Config};
use std::path::{Path, PathBuf};

/// The exit code of a check run with a result at or above `--fail-on`.
pub const EXIT_FAILED: u8 = 4;

#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 nothing at or above --fail-on failed; 4 something did; 1 an input error \
    (database, checks.toml, baseline); 2 a usage error. `sphragis check --list` lists the checks.")]
pub struct Args {
    /// checks.toml: per check severity, error_if / warn_if, scopes, enabled, tolerance;
    /// [truncation] max_length and side (docs/checks.md).
    #[arg(long, value_name = "FILE", help_heading = "What is judged")]
    pub config: Option<PathBuf>,
    /// Judge each check against a reference instead of its conditions: a corpus version
    /// (review scopes of other versions against the same scope of it) or run:<id>, a
    /// recorded check run (every scope it judged).
    #[arg(long, value_name = "VERSION|run:ID", help_heading = "What is judged")]
    pub baseline: Option<String>,
    /// Only these areas (review, sft, eval, ingest) or checks, comma-separated.
    #[arg(long, value_name = "AREA|CHECK", value_delimiter = ',', help_heading = "What is judged")]
    pub only: Vec<String>,
    /// Review checks of this corpus version only (the other areas are judged as ever); a
    /// version that does not exist is refused (exit 2).
    #[arg(long = "version", value_name = "NAME", help_heading = "What is judged")]
    pub version: Option<String>,
    /// Output: a table (failures first; passes counted, listed with --all), JSON, or
    /// JUnit XML (one test case per check and scope).
    #[arg(long, value_enum, default_value = "table", help_heading = "Output")]
    pub format: Format,
    /// The lowest status that makes the run fail (exit 4): error (status fail) or warn
    /// (status fail or warn).
    #[arg(long, value_enum, default_value = "error", help_heading = "Output")]
    pub fail_on: FailOn,
    /// Do not record the run in check_runs / check_results (opens the file read-only).
    #[arg(long, help_heading = "Output")]
    pub no_record: bool,
    /// Table: list the passing checks too.
    #[arg(long, help_heading = "Output")]
    pub all: bool,
    /// List the checks of the default suite and exit.
    #[arg(long, help_heading = "Output")]
    pub list: bool,
}

/// Output of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Junit,
}

/// `check --list`: the checks of the default suite, one a line (area, name, what it
/// finds, the view that computes it); needs no database.
pub fn list() -> Result<(), CliError> {
    for c in CHECKS {
        outln!("{:<8} {:<38} {} [{}]", c.area, c.name, c.about, c.view)?;
    }
    Ok(())
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    for name in &args.only {
        if !check::AREAS.contains(&name.as_str()) && !CHECKS.iter().any(|c| c.name == name) {
            return Err(CliError {
                error: anyhow::anyhow!(
                    "--only {name}: not an area (review, sft, eval, ingest) nor a check (sphragis check --list)"
                ),
                exit_code: 2,
            });
        }
    }
    let config = match &args.config {
        Some(path) => Config::read(path)?,
        None => Config::default(),
    };
    let baseline = args.baseline.as_deref().map(Baseline::parse).transpose()?;
    let (conn, not_recorded) = open(db, args.no_record)?;
    if let Some(v) = args.version.as_deref() {
        // a version that does not exist would judge no review check at all: never a silent pass
        let known: i64 = conn.query_row("select count(*) from corpus_versions where version = ?", [v], |r| r.get(0))?;
        if known == 0 {
            return Err(CliError {
                error: anyhow::anyhow!(
                    "--version {v}: version {v} does not exist; `sphragis sql \"select version from corpus_versions\"` lists them"
                ),
                exit_code: 2,
            });
        }
    }
    let outcome = judge(&conn, &config, baseline.as_ref(), &args.only, args.version.as_deref())?;
    let mut findings = outcome;
    let previous = check::record::latest_statuses(&conn)?;
    let run_id = match (&not_recorded, &conn) {
        (None, Conn::Write(w)) => Some(check::record::record(
            w,
            &findings,
            &check::record::RunOptions {
                config_sha256: config.sha256.as_deref(),
                options: serde_json::json!({
                    "max_length": config.truncation.max_length,
                    "side": config.truncation.side,
                    "only": args.only,
                    "version": args.version,
                    "baseline": args.baseline,
                    "fail_on": args.fail_on.as_str(),
                }),
                fail_on: args.fail_on,
            },
        )?),
        _ => None,
    };
    check::sort_for_print(&mut findings);
    let failed = findings.iter().any(|f| args.fail_on.fails(f.status));
    match args.format {
        Format::Table => print_table(db, &findings, &previous, args.all, args.fail_on)?,
        Format::Json => {
            let rows: Vec<serde_json::Value> = findings
                .iter()
                .map(|f| {
                    let mut v = serde_json::to_value(f).unwrap_or_default();
                    let was = previous.get(&(f.check_name.clone(), f.scope.clone())).map(|s| s.as_str());
                    v["previous_status"] = serde_json::json!(was);
                    v
                })
                .collect();
            let [fail, warn, not_run, info, pass] = check::tally(&findings);
            let doc = serde_json::json!({
                "database": db.display().to_string(),
                "code_version": crate::CODE_VERSION,
                "run_id": run_id,
                "fail_on": args.fail_on.as_str(),
                "failed": failed,
                "counts": {"fail": fail, "warn": warn, "not-run": not_run, "info": info, "pass": pass},
                "findings": rows,
            });
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Junit => outln!("{}", check::junit::render(&findings, args.fail_on)?)?,
    }
    match (not_recorded, run_id) {
        (Some(why), _) => eprintln!("not recorded: {why}"),
        (None, Some(id)) if args.format == Format::Table => eprintln!("recorded as check run {id} (check_history_v1)"),
        _ => {}
    }
    if failed {
        return Err(CliError {
            error: anyhow::anyhow!(
                "{} check result{} at or above --fail-on {}",
                findings.iter().filter(|f| args.fail_on.fails(f.status)).count(),
                if findings.iter().filter(|f| args.fail_on.fails(f.status)).count() == 1 { "" } else { "s" },
                args.fail_on.as_str()
            ),
            exit_code: EXIT_FAILED,
        });
    }
    Ok(())
}

/// The checks of `conn` judged under `config`, `baseline`, `--only` and `--version`, in
/// the view's order. Shared by `check` and `demo`.
pub fn judge(
    conn: &duckdb::Connection,
    config: &Config,
    baseline: Option<&Baseline>,
    only: &[String],
    version: Option<&str>,
) -> anyhow::Result<Vec<Finding>> {
    let mut findings = config.apply(check::findings(conn, config.truncation)?);
    if let Some(b) = baseline {
        check::baseline::apply(conn, &mut findings, b, |c| config.tolerance(c))?;
    }
    findings.retain(|f| {
        (only.is_empty() || only.iter().any(|o| *o == f.area || *o == f.check_name))
            && version.is_none_or(|v| f.version().is_none_or(|fv| fv == v))
    });
    Ok(findings)
}

/// The demo's last step: the default checks on the demo database, recorded, printed as
/// `check` prints them (the demo itself exits 0; `sphragis check` on its database exits 4,
/// since its samples plant faults).
pub(super) fn demo_verdict(db: &Path, conn: &crate::db::Database) -> Result<(), CliError> {
    let mut findings = judge(conn, &Config::default(), None, &[], None)?;
    let previous = check::record::latest_statuses(conn)?;
    let options = serde_json::json!({"max_length": 32768, "side": "right", "fail_on": "error", "demo": true});
    check::record::record(
        conn,
        &findings,
        &check::record::RunOptions { config_sha256: None, options, fail_on: FailOn::Error },
    )?;
    check::sort_for_print(&mut findings);
    outln!("\nverdict (sphragis --db {} check):", db.display())?;
    print_table(db, &findings, &previous, false, FailOn::Error)
}

/// A connection that can record, or one that can only read.
enum Conn {
    Write(crate::db::Database),
    Read(duckdb::Connection),
}

impl std::ops::Deref for Conn {
    type Target = duckdb::Connection;
    fn deref(&self) -> &duckdb::Connection {
        match self {
            Conn::Write(w) => w,
            Conn::Read(r) => r,
        }
    }
}

/// Opens `db` to record, or read-only with `--no-record` or when it cannot be written
/// (then the reason comes back, and is printed).
fn open(db: &Path, no_record: bool) -> anyhow::Result<(Conn, Option<String>)> {
    if no_record {
        return Ok((Conn::Read(crate::db::open_read_only(db)?), Some("--no-record".into())));
    }
    match crate::db::open(db) {
        Ok(w) => Ok((Conn::Write(w), None)),
        Err(write_error) => match crate::db::open_read_only(db) {
            Ok(r) => Ok((
                Conn::Read(r),
                Some(format!(
                    "{} cannot be written ({}); opened read-only",
                    db.display(),
                    crate::cli::describe(&write_error)
                )),
            )),
            Err(_) => Err(write_error),
        },
    }
}

/// The table: every result but passes (all with `all`), failures first, then the
/// drill-down of each failure and warning, then the counts.
fn print_table(
    db: &Path,
    findings: &[Finding],
    previous: &std::collections::HashMap<(String, String), Status>,
    all: bool,
    fail_on: FailOn,
) -> Result<(), CliError> {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(["status", "severity", "check", "scope", "failing", "tested", "share", "condition / reason"]);
    // not-run results of one check with one reason are one row, their scopes listed
    let mut shown: Vec<(&Finding, Vec<&str>)> = Vec::new();
    for f in findings.iter().filter(|f| all || f.status != Status::Pass) {
        match shown.last_mut() {
            Some((g, scopes))
                if f.status == Status::NotRun
                    && g.status == Status::NotRun
                    && g.check_name == f.check_name
                    && g.reason == f.reason =>
            {
                scopes.push(&f.scope)
            }
            _ => shown.push((f, vec![&f.scope])),
        }
    }
    for (f, scopes) in &shown {
        let was = previous.get(&(f.check_name.clone(), f.scope.clone())).filter(|s| **s != f.status);
        let mut note = match (f.status, &f.reason) {
            (Status::NotRun, Some(r)) => r.clone(),
            _ => {
                let mut n = check::junit::summary(f);
                if let Some(i) = n.find("; ") {
                    n = n[i + 2..].to_string();
                } else {
                    n.clear();
                }
                for extra in [&f.detail, &f.reason].into_iter().flatten() {
                    n = if n.is_empty() { extra.clone() } else { format!("{n}; {extra}") };
                }
                n
            }
        };
        if let Some(was) = was {
            note = format!("{note} (was {})", was.as_str());
        }
        let num = |x: Option<i64>| x.map_or("-".to_string(), |x| x.to_string());
        t.add_row([
            f.status.as_str().to_string(),
            f.severity.as_str().to_string(),
            f.check_name.clone(),
            scopes.join(", "),
            num(f.failing),
            num(f.tested),
            f.share.map_or("-".to_string(), check::junit::round4),
            note,
        ]);
    }
    for i in 4..7 {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    if !shown.is_empty() {
        outln!("{t}")?;
    }
    let gating: Vec<&Finding> = findings.iter().filter(|f| matches!(f.status, Status::Fail | Status::Warn)).collect();
    if !gating.is_empty() {
        outln!("drill-downs (the rows behind each failure and warning):")?;
        for f in gating {
            if let Some(q) = &f.drill_down {
                outln!("  {} [{}]: {}", f.check_name, f.scope, drill_down_command(db, q))?;
            }
        }
    }
    let [fail, warn, not_run, info, pass] = check::tally(findings);
    let failed = findings.iter().filter(|f| fail_on.fails(f.status)).count();
    outln!(
        "checks: {fail} fail, {warn} warn, {not_run} not-run, {info} info, {pass} pass{} — {}",
        if all || pass == 0 { "" } else { " (passes listed with --all)" },
        if failed > 0 {
            format!("{failed} at or above --fail-on {}: exit {EXIT_FAILED}", fail_on.as_str())
        } else {
            format!("nothing at or above --fail-on {}", fail_on.as_str())
        }
    )?;
    Ok(())
}

/// The shell command that lists a drill-down's rows: `sphragis --db DB sql QUERY`, the
/// database path and the query quoted for a POSIX shell (single quotes where needed), so a
/// name in the query holding `$(...)`, backquotes or quotes is text, never run, in a shell
/// the line is pasted into. A NUL byte, which no shell word can hold, is shown as `\0`.
fn drill_down_command(db: &Path, query: &str) -> String {
    let quote = |word: &str| {
        let word = word.replace('\0', "\\0");
        shlex::try_quote(&word).map(|q| q.into_owned()).unwrap_or(word)
    };
    format!("sphragis --db {} sql {}", quote(&db.to_string_lossy()), quote(query))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fault kind: a printed command that runs what a name holds. The drill-down of a run
    /// named `x"$(id)"` was printed inside double quotes with `"` escaped, and a shell the
    /// line was pasted into ran `id` (found by a fresh tester). The words are now quoted
    /// for the shell: `sh` reads them back as exactly the path and the query.
    #[test]
    fn drill_down_command_quotes_what_a_shell_would_run() {
        let db = Path::new("runs $(x).duckdb");
        let query = "select * from eval_log_headers where run = 'x\"$(id)\"`id`' and 'o''b' <> '\\'";
        let line = drill_down_command(db, query);
        let prefix = "sphragis --db ";
        assert!(line.starts_with(prefix), "{line}");
        // the shell's own reading of the words: printf prints each between brackets
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '[%s]' {}", &line[prefix.len()..]))
            .output()
            .unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        assert_eq!(printed, format!("[{}][sql][{query}]", db.display()));
    }
}
