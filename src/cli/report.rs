//! `sphragis report <NAME|all>`: run report views and print or export them.

use super::{CliError, FormatArg};
use crate::report::{self, REPORTS, Report};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(after_help = report_list())]
pub struct Args {
    /// Report name, or `all`.
    pub name: String,
    /// Keep only rows of this corpus version.
    #[arg(long = "version", value_name = "NAME")]
    pub version: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// Write one file per view (`<view>.<ext>`) and a manifest.json here instead of printing.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// weights: recovery weights to project (comma list) instead of the view's grid.
    #[arg(long, value_name = "W,W,...")]
    pub weights: Option<String>,
    /// budget: gradient accumulation size (with --steps; default 8).
    #[arg(long, value_name = "G")]
    pub grad_accum: Option<u32>,
    /// budget: a fixed optimizer step count (with --grad-accum; default 1000).
    #[arg(long, value_name = "S")]
    pub steps: Option<u32>,
}

/// Report groups: one name for several reports.
const GROUPS: &[(&str, &[&str])] = &[("behaviour", &["thinking", "tools", "test-runs", "final-report", "context"])];

const WEIGHTS_SQL: &str = include_str!("../../sql/steps/weights_custom.sql");
const BUDGET_SQL: &str = include_str!("../../sql/steps/budget_custom.sql");

fn report_list() -> String {
    let mut s = String::from("Reports (groups: behaviour = thinking, tools, test-runs, final-report, context):\n");
    for r in REPORTS {
        s.push_str(&format!("  {:<18} {} [{}]\n", r.name, r.about, r.view));
    }
    s
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let conn = crate::db::open_read_only(db)?;
    let chosen: Vec<&Report> = if args.name == "all" {
        REPORTS.iter().collect()
    } else if let Some((_, names)) = GROUPS.iter().find(|(g, _)| *g == args.name) {
        names.iter().map(|n| report::find(n)).collect::<anyhow::Result<_>>()?
    } else {
        vec![report::find(&args.name)?]
    };
    if let Some(w) = &args.weights
        && w.split(',').any(|x| x.trim().parse::<f64>().map_or(true, |v| !v.is_finite() || v < 0.0))
    {
        return Err(CliError {
            error: anyhow::anyhow!("--weights {w:?}: give finite numbers, 0 or more, separated by commas"),
            exit_code: 2,
        });
    }
    if args.steps == Some(0) {
        return Err(CliError { error: anyhow::anyhow!("--steps must be 1 or more"), exit_code: 2 });
    }
    if args.grad_accum == Some(0) {
        return Err(CliError { error: anyhow::anyhow!("--grad-accum must be 1 or more"), exit_code: 2 });
    }
    let mut tables = Vec::new();
    for r in chosen {
        let mut table = report::run(&conn, r, args.version.as_deref())?;
        // Command-line parameters recompute a grid view's rows from its own base numbers.
        if r.name == "weights" && let Some(w) = &args.weights {
            let custom = report::query(&conn, WEIGHTS_SQL, &[w.as_str()])?;
            table.columns = custom.columns;
            table.rows = custom.rows;
            table.about = format!("{} (weights {w})", table.about);
        }
        if r.name == "budget" && (args.grad_accum.is_some() || args.steps.is_some()) {
            let (g, s) = (args.grad_accum.unwrap_or(8).to_string(), args.steps.unwrap_or(1000).to_string());
            let custom = report::query(&conn, BUDGET_SQL, &[g.as_str(), s.as_str()])?;
            table.columns = custom.columns;
            table.rows = custom.rows;
            table.about = format!("{} (G {g}, {s} steps)", table.about);
        }
        tables.push(table);
    }
    print_or_write(&tables, args.format, args.out.as_deref())
}

/// Prints the tables (CSV on stdout gets its view stamp on stderr, so stdout stays
/// clean CSV) or writes them as files.
pub fn print_or_write(tables: &[report::ReportTable], format: FormatArg, out: Option<&Path>) -> Result<(), CliError> {
    if let Some(dir) = out {
        for path in report::write_files(dir, tables, format.into())? {
            println!("wrote {}", path.display());
        }
        return Ok(());
    }
    if format == FormatArg::Csv && tables.len() > 1 {
        return Err(CliError {
            error: anyhow::anyhow!("{} tables as CSV need --out DIR (one file per view, named after it)", tables.len()),
            exit_code: 2,
        });
    }
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match format {
        FormatArg::Json if tables.len() > 1 => {
            let all: Vec<serde_json::Value> = tables
                .iter()
                .map(|t| serde_json::from_str(&report::render_json(t)?).map_err(anyhow::Error::from))
                .collect::<anyhow::Result<_>>()?;
            writeln!(stdout, "{}", serde_json::to_string_pretty(&all)?)?;
        }
        _ => {
            for (i, t) in tables.iter().enumerate() {
                if format == FormatArg::Csv {
                    eprintln!("# {}", report::stamp(t));
                } else if i > 0 {
                    writeln!(stdout)?;
                }
                write!(stdout, "{}", report::render(t, format.into())?)?;
                if format == FormatArg::Json {
                    writeln!(stdout)?;
                }
            }
        }
    }
    Ok(())
}
