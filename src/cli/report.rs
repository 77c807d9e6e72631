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
}

fn report_list() -> String {
    let mut s = String::from("Reports:\n");
    for r in REPORTS {
        s.push_str(&format!("  {:<18} {} [{}]\n", r.name, r.about, r.view));
    }
    s
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let conn = crate::db::open_read_only(db)?;
    let chosen: Vec<&Report> =
        if args.name == "all" { REPORTS.iter().collect() } else { vec![report::find(&args.name)?] };
    let mut tables = Vec::new();
    for r in chosen {
        tables.push(report::run(&conn, r, args.version.as_deref())?);
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
