//! `sphragis report <NAME|all>`: run report views and print or export them.

use super::{CliError, FormatArg};
use crate::report::{self, Arguments, REPORTS, Report};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(after_help = report_list())]
pub struct Args {
    /// Report name, or `all`.
    pub name: String,
    /// Keep only rows of this corpus version.
    #[arg(long = "version", value_name = "NAME")]
    pub version: Option<String>,
    /// Output format. `html` writes one self-contained offline HTML file (needs --out FILE):
    /// a header with the database, its inputs and the code version, then per report its
    /// stamp (view or macro, SHA-256, corpus version, arguments), a chart where one helps and
    /// the table, with counts linked to the ids behind them (drill-downs, themselves stamped
    /// views; sealed-window ids never listed).
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    #[command(flatten)]
    pub csv: super::CsvArgs,
    /// Write one file per view or macro (`<name>.<ext>`) and a manifest.json (database,
    /// inputs, code version, options, each file's query and rows) here instead of printing;
    /// with --format html, the HTML file to write.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// weights: recovery weights to project, e.g. `0.5,3` (each a finite number >= 0),
    /// computed by the table macro sft_weight_projection_at_v1 instead of the view's grid.
    #[arg(long, value_name = "W,W,...", value_delimiter = ',', value_parser = parse_weight, help_heading = "Parameters of the parametrised reports")]
    pub weights: Vec<f64>,
    /// budget: gradient accumulation sizes (each >= 1; default 8 when only --steps is
    /// given), computed by the table macro sft_budget_at_v2 instead of the view's grid.
    #[arg(long, value_name = "G,G,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..), help_heading = "Parameters of the parametrised reports")]
    pub grad_accum: Vec<u32>,
    /// budget: fixed optimizer step counts (each >= 1; default 1000 when only
    /// --grad-accum is given).
    #[arg(long, value_name = "S,S,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..), help_heading = "Parameters of the parametrised reports")]
    pub steps: Vec<u32>,
    /// truncation, truncation-views: maximum lengths in tokens (each >= 1), computed by the
    /// table macros sft_truncation_at_v1 / sft_truncation_views_at_v1 instead of the views'
    /// defaults (8192,16384,32768,65536 / 32768).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..), help_heading = "Parameters of the parametrised reports")]
    pub max_length: Vec<u32>,
    /// truncation, truncation-views: the side truncation cuts (right keeps the first N
    /// tokens, left the last N) [default: right].
    #[arg(long, value_enum, help_heading = "Parameters of the parametrised reports")]
    pub side: Option<SideArg>,
    /// eval-bootstrap: resamples of the paired bootstrap (>= 1), computed by the table
    /// macro eval_pair_bootstrap_at_v1 instead of the view's 2000 [default with --seed: 2000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Parameters of the parametrised reports")]
    pub resamples: Option<u32>,
    /// eval-bootstrap: the seed of the paired bootstrap's generator [default with
    /// --resamples: 0].
    #[arg(long, value_name = "N", help_heading = "Parameters of the parametrised reports")]
    pub seed: Option<u32>,
}

/// Output format of `report`: the shared formats plus `html`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Table,
    Csv,
    Json,
    Html,
}

/// The side truncation cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SideArg {
    Right,
    Left,
}

fn parse_weight(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(format!("{text:?} is not a finite number 0 or more")),
    }
}

/// Report groups: one name for several reports.
const GROUPS: &[(&str, &[&str])] = &[
    ("behaviour", &["thinking", "tools", "test-runs", "final-report", "context"]),
    (
        "runs",
        &[
            "eval-runs",
            "eval-populations",
            "eval-symptoms",
            "eval-pairs",
            "eval-bootstrap",
            "eval-clustered",
            "eval-pair-clustered",
            "eval-repeats",
            "eval-pass-at-k",
            "eval-pass-k",
            "eval-items",
            "eval-grader-flakes",
        ],
    ),
];

fn report_list() -> String {
    let mut s = String::from(
        "Reports (groups: behaviour = thinking, tools, test-runs, final-report, context; \
         runs = eval-runs, eval-populations, eval-symptoms, eval-pairs, eval-bootstrap, eval-clustered, eval-pair-clustered, eval-repeats, eval-pass-at-k, \
         eval-pass-k, eval-items, eval-grader-flakes):\n",
    );
    for r in REPORTS {
        match r.macro_name {
            Some(m) => s.push_str(&format!("  {:<18} {} [{}; parameters: {m}]\n", r.name, r.about, r.view)),
            None => s.push_str(&format!("  {:<18} {} [{}]\n", r.name, r.about, r.view)),
        }
    }
    s
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let format = match args.format {
        ReportFormat::Table => FormatArg::Table.with(args.csv)?,
        ReportFormat::Csv => FormatArg::Csv.with(args.csv)?,
        ReportFormat::Json | ReportFormat::Html => FormatArg::Json.with(args.csv)?,
    };
    if args.format == ReportFormat::Html && args.out.is_none() {
        return Err(CliError {
            error: anyhow::anyhow!("--format html needs --out FILE (the HTML file to write)"),
            exit_code: 2,
        });
    }
    let conn = crate::db::open_read_only(db)?;
    let chosen: Vec<&Report> = if args.name == "all" {
        REPORTS.iter().collect()
    } else if let Some((_, names)) = GROUPS.iter().find(|(g, _)| *g == args.name) {
        names.iter().map(|n| report::find(n)).collect::<anyhow::Result<_>>()?
    } else {
        // a misspelt report name is a usage error (exit 2), listing the names
        vec![report::find(&args.name).map_err(|error| CliError { error, exit_code: 2 })?]
    };
    // --version filters reports with a version column; for a single report without one it
    // would filter nothing, which is a usage error rather than a silent no-op.
    if args.version.is_some() && chosen.iter().all(|r| !r.by_version) {
        return Err(CliError {
            error: anyhow::anyhow!("report {} has no corpus version column: --version does not apply", args.name),
            exit_code: 2,
        });
    }
    // Parameters run the report's table macro; the stamp then names the macro and the
    // arguments (never the grid view whose rows it does not show).
    let weights = (!args.weights.is_empty()).then(|| Arguments::Weights(args.weights.clone()));
    let budget = (!args.grad_accum.is_empty() || !args.steps.is_empty()).then(|| Arguments::Budget {
        grad_accums: if args.grad_accum.is_empty() { vec![8] } else { args.grad_accum.clone() },
        step_counts: if args.steps.is_empty() { vec![1000] } else { args.steps.clone() },
    });
    // truncation parameters: the lengths given, else each report's default lengths
    let truncation_for = |defaults: &[u32]| {
        (!args.max_length.is_empty() || args.side.is_some()).then(|| Arguments::Truncation {
            max_lengths: if args.max_length.is_empty() { defaults.to_vec() } else { args.max_length.clone() },
            side: match args.side {
                Some(SideArg::Left) => report::Side::Left,
                _ => report::Side::Right,
            },
        })
    };
    let bootstrap = (args.resamples.is_some() || args.seed.is_some())
        .then(|| Arguments::Bootstrap { resamples: args.resamples.unwrap_or(2000), seed: args.seed.unwrap_or(0) });
    let truncation = truncation_for(&[8192, 16384, 32768, 65536]);
    let truncation_views = truncation_for(&[32768]);
    for (given, report) in
        [(&weights, "weights"), (&budget, "budget"), (&truncation, "truncation"), (&bootstrap, "eval-bootstrap")]
    {
        if given.is_some()
            && !chosen.iter().any(|r| r.name == report || r.name == "truncation-views" && report == "truncation")
        {
            return Err(CliError {
                error: anyhow::anyhow!(
                    "the {report} parameters apply to `report {report}` (or all), not to {}",
                    args.name
                ),
                exit_code: 2,
            });
        }
    }
    let arguments_of = |r: &Report| match r.name {
        "weights" => weights.as_ref(),
        "budget" => budget.as_ref(),
        "truncation" => truncation.as_ref(),
        "truncation-views" => truncation_views.as_ref(),
        "eval-bootstrap" => bootstrap.as_ref(),
        _ => None,
    };
    let tables = report::run_many(&conn, &chosen, args.version.as_deref(), arguments_of)?;
    let options = serde_json::json!({
        "report": args.name,
        "version": args.version,
        "weights": weights.as_ref().map(|a| a.to_sql()).transpose()?,
        "budget": budget.as_ref().map(|a| a.to_sql()).transpose()?,
        "truncation": truncation.as_ref().map(|a| a.to_sql()).transpose()?,
        "bootstrap": bootstrap.as_ref().map(|a| a.to_sql()).transpose()?,
    });
    let context = match &args.out {
        Some(_) => report::ExportContext::of(&conn, db, options)?,
        None => report::ExportContext::default(),
    };
    if let (ReportFormat::Html, Some(out)) = (args.format, &args.out) {
        write_html(&conn, &tables, args.version.as_deref(), &context, out)?;
        return Ok(());
    }
    print_or_write(&tables, format, args.out.as_deref(), &context)
}

/// Writes the HTML report of `tables` to `out` (see [`report::html::render_html`]) and
/// says so on stdout.
pub fn write_html(
    conn: &duckdb::Connection,
    tables: &[report::ReportTable],
    version: Option<&str>,
    context: &report::ExportContext,
    out: &Path,
) -> Result<(), CliError> {
    let page = report::html::render_html(conn, tables, version, context, &Default::default())?;
    std::fs::write(out, page).map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", out.display()))?;
    super::outln!("wrote {}", out.display())?;
    Ok(())
}

/// Prints the tables (CSV on stdout gets its stamp on stderr, so stdout stays clean CSV)
/// or writes them as files with a manifest (see [`report::write_files`]).
pub fn print_or_write(
    tables: &[report::ReportTable],
    format: report::Format,
    out: Option<&Path>,
    context: &report::ExportContext,
) -> Result<(), CliError> {
    if let Some(dir) = out {
        for path in report::write_files(dir, tables, format, context)? {
            super::outln!("wrote {}", path.display())?;
        }
        return Ok(());
    }
    if matches!(format, report::Format::Csv(_)) && tables.len() > 1 {
        return Err(CliError {
            error: anyhow::anyhow!("{} tables as CSV need --out DIR (one file per view, named after it)", tables.len()),
            exit_code: 2,
        });
    }
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match format {
        report::Format::Json if tables.len() > 1 => {
            let all: Vec<serde_json::Value> = tables.iter().map(report::json_document).collect();
            writeln!(stdout, "{}", serde_json::to_string_pretty(&all)?)?;
        }
        _ => {
            for (i, t) in tables.iter().enumerate() {
                if matches!(format, report::Format::Csv(_)) {
                    eprintln!("# {}", report::stamp(t));
                } else if i > 0 {
                    writeln!(stdout)?;
                }
                write!(stdout, "{}", report::render(t, format)?)?;
                if format == report::Format::Json {
                    writeln!(stdout)?;
                }
            }
        }
    }
    Ok(())
}
