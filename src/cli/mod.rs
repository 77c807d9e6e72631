//! The command line: one module per subcommand, each parsing its options and calling
//! the library. Only this layer prints and chooses exit codes: 0 ok, 1 error, 2 usage,
//! 3 verification mismatch (SPEC §4), 4 a check at or above `check --fail-on` failed.

mod check;
mod demo;
mod diff;
mod examples;
mod export;
mod freeze;
pub mod guide;
mod load;
mod refine;
mod report;
mod show;
mod split;
mod sql;
mod verify;
mod views;

use clap::{FromArgMatches, Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Audit ML training corpora in one DuckDB file: every count a versioned SQL view.
#[derive(Debug, Parser)]
#[command(name = "sphragis", version = crate::VERSION_TEXT, about, long_about = None)]
pub struct Cli {
    /// The database file [default: sphragis.duckdb; demo: sphragis-demo.duckdb]. Commands
    /// that write create it; report, views, sql and show only read an existing one. A new
    /// file is a copy of a template kept in ~/.cache/sphragis ($SPHRAGIS_CACHE_DIR; `off`:
    /// none), made once per build; that folder also keeps the fingerprint of each file whose
    /// views were checked, so the next command on the unchanged file skips that check
    /// (docs/reliability.md).
    #[arg(long, global = true, env = "SPHRAGIS_DB")]
    pub db: Option<PathBuf>,
    /// No progress output, even on a terminal.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the database file (or migrate an existing one) and list its schema state;
    /// with --from DIR, build a new database from a Parquet export.
    Init(InitArgs),
    /// Load input files, each in one transaction recorded in the ingest log.
    Load(load::Args),
    /// Refine the built review examples into a named corpus version.
    Refine(refine::Args),
    /// Place a version's kept examples in the registered windows and halves.
    Split(split::SplitArgs),
    /// Freeze a version: write split-criteria-<org>.json and manifest-<org>-<version>.json
    /// per org with a split, record the folder and each file's SHA-256, and make the
    /// version immutable (refused while an org with kept examples has no split, unless
    /// --org or --allow-partial leaves it out).
    Freeze(freeze::FreezeArgs),
    /// Check a frozen version: its frozen files against their recorded SHA-256, then
    /// rebuild it from its input files in a scratch database and compare the files'
    /// manifests and criteria (exit 3 on any difference, naming the file).
    Verify(verify::VerifyArgs),
    /// Show the content of the examples in one split (a sealed split needs --unseal).
    Examples(examples::ExamplesArgs),
    /// Compare two corpus versions: per org removed, resurrected, added, dropped and moved
    /// between splits and halves (reconciled), with --examples every example that moved, or
    /// with --reports the figures of each report view that changed, old and new; stamped with
    /// the table macro version_diff_at_v2 / example_moves_at_v2 / report_diff_at_v1 and its arguments.
    Diff(diff::Args),
    /// The verdict: every check of the default suite (contract, supervision, isolation,
    /// contamination, verification, runs, ingest) with its status, failures first, each with
    /// the query listing its failing rows; recorded in check_runs / check_results. Exit 4
    /// when a result at or above --fail-on fails.
    Check(check::Args),
    /// Print or export report views (table, CSV, JSON, or one offline HTML file with charts
    /// and drill-downs), each stamped with the view or table macro, arguments and query that
    /// produced its rows.
    Report(report::Args),
    /// List the versioned SQL views with their SHA-256; `views build` renders SFT views.
    Views(views::Args),
    /// Run a SQL query with the sph_ functions registered.
    Sql(sql::Args),
    /// Show one SFT view's tokens coloured by loss mask (`show view VIEW_ID`), on a
    /// terminal or as an offline HTML page.
    Show(show::Args),
    /// Write every table as partitioned Parquet with manifest.json (tables, files, SHA-256s,
    /// each view's SQL for DuckDB and Spark); sealed-window rows only with --include-sealed.
    Export(export::Args),
    /// Build a database (default sphragis-demo.duckdb, replaced) from the bundled samples
    /// (review examples, SFT pools, trajectories in published shapes, two evaluation runs),
    /// refine, split, freeze and verify it, print every report, and write the HTML report
    /// beside it (sphragis-demo.html).
    Demo(demo::Args),
}

/// `sphragis init` options.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Build a new database from this Parquet export (`sphragis export`), checking every
    /// file against its manifest's SHA-256.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
}

/// Output format of reports and queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Table,
    Csv,
    Json,
}

/// How `--format csv` is written (shared by report, sql, examples and demo).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct CsvArgs {
    /// CSV: keep every cell as the database holds it, for programs. By default CSV is
    /// made safe to open in a spreadsheet: a text cell or header that begins with `=`,
    /// `+`, `-`, `@`, tab or carriage return gets a leading `'` (OWASP CSV injection),
    /// except text that is a plain number such as -3.
    #[arg(long)]
    pub csv_raw: bool,
    /// CSV: start with a UTF-8 byte-order mark, for spreadsheet programs that need one
    /// to read UTF-8.
    #[arg(long)]
    pub csv_bom: bool,
}

impl FormatArg {
    /// The output format, with `csv`'s options.
    ///
    /// Errors (usage, exit 2): `--csv-raw` or `--csv-bom` with a format other than csv,
    /// where they would silently do nothing.
    pub fn with(self, csv: CsvArgs) -> Result<crate::report::Format, CliError> {
        use crate::report::{CsvStyle, Format};
        Ok(match self {
            FormatArg::Csv => Format::Csv(CsvStyle { raw: csv.csv_raw, bom: csv.csv_bom }),
            _ if csv.csv_raw || csv.csv_bom => {
                return Err(CliError {
                    error: anyhow::anyhow!("--csv-raw and --csv-bom apply to --format csv only"),
                    exit_code: 2,
                });
            }
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
        })
    }
}

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct CliError {
    pub error: anyhow::Error,
    pub exit_code: u8,
}

impl From<anyhow::Error> for CliError {
    fn from(error: anyhow::Error) -> Self {
        Self { error, exit_code: 1 }
    }
}

macro_rules! cli_error_from {
    ($($t:ty),*) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                Self { error: e.into(), exit_code: 1 }
            }
        }
    )*};
}
cli_error_from!(duckdb::Error, std::io::Error, serde_json::Error);

/// Writes a line (or, with `outln!(text; no newline)`, text) to stdout and returns the
/// `io::Result`: a closed pipe (`sphragis sql ... | head`) becomes an error that
/// [`main`] turns into a quiet exit 0, never a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// Like [`outln!`] without the newline.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}
pub(crate) use {out, outln};

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if is_broken_pipe(&e.error) {
                return ExitCode::SUCCESS;
            }
            let message = describe(&e.error);
            eprintln!("error: {message}");
            if let Some(hint) = hint(&message) {
                eprintln!("{hint}");
            }
            ExitCode::from(e.exit_code)
        }
    }
}

/// The command line's definition, each subcommand's long help (`sphragis help load`,
/// `load --help`) ending with its examples from the guide ([`guide`]).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let examples = guide::examples();
    let mut cmd = Cli::command();
    let names: Vec<String> = cmd.get_subcommands().map(|c| c.get_name().to_string()).collect();
    for name in names {
        if let Some(text) = guide::help_text(&examples, &name, 6) {
            cmd = cmd.mut_subcommand(name, |c| c.after_long_help(text));
        }
    }
    cmd
}

/// The error and its causes joined by `: ` (as `{:#}` does), leaving out DuckDB's
/// generic C-API code (`Error code 1: Unknown error code`), which repeats no information
/// beyond the message before it.
pub fn describe(e: &anyhow::Error) -> String {
    e.chain()
        .filter(|c| c.downcast_ref::<duckdb::ffi::Error>().is_none())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// A line of advice for errors whose cause is outside sphragis: a full disk.
pub fn hint(message: &str) -> Option<&'static str> {
    message.contains("No space left on device").then_some(
        "hint: the disk is full. A load, refine or freeze is one transaction, so the database keeps what it \
         held before this command (an export removes its unfinished folder); free space and run the command again (a write-ahead log <file>.wal left \
         beside the database is replayed by the next command that writes)",
    )
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<std::io::Error>()).any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Runs one parsed command.
pub fn run(cli: Cli) -> Result<(), CliError> {
    let ui = Ui { progress: !cli.quiet && std::io::stderr().is_terminal(), quiet: cli.quiet };
    if let Command::Demo(args) = cli.command {
        return demo::run(cli.db.unwrap_or_else(|| PathBuf::from("sphragis-demo.duckdb")), args, &ui);
    }
    if let Command::Check(args) = &cli.command
        && args.list
    {
        return check::list();
    }
    let db = cli.db.unwrap_or_else(|| PathBuf::from("sphragis.duckdb"));
    let db = &db;
    // Only init and load create a database file: a misspelt --db for any other writing
    // command must not leave an empty database behind.
    let creates = matches!(cli.command, Command::Init(_) | Command::Load(_));
    if !creates && !db.is_file() && db.as_os_str() != ":memory:" {
        return Err(anyhow::anyhow!(
            "{}: no such database file (create one with `sphragis --db {} init` or `load`)",
            db.display(),
            db.display()
        )
        .into());
    }
    let out = match &cli.command {
        Command::Views(views::Args { action: Some(views::Action::Build(b)), .. }) => Some(b.out.as_path()),
        Command::Report(a) => a.out.as_deref(),
        Command::Show(show::Args { what: show::What::View(a) }) => a.out.as_deref(),
        Command::Export(a) => Some(a.out.as_path()),
        Command::Freeze(a) => Some(a.out.as_path()),
        _ => None,
    };
    if let Some(out) = out {
        refuse_database_as_output(db, out)?;
    }
    match cli.command {
        Command::Init(InitArgs { from: Some(dir) }) => export::import(db, &dir, &ui),
        Command::Init(InitArgs { from: None }) => {
            let conn = crate::db::open(db)?;
            let (n, v) = crate::db::schema_state(&conn)?;
            outln!("{}: {n} migrations applied, {v} views and macros registered", db.display())?;
            Ok(())
        }
        Command::Load(args) => load::run(db, args, &ui),
        Command::Refine(args) => refine::run(db, args),
        Command::Split(args) => split::run(db, args),
        Command::Freeze(args) => freeze::run(db, args),
        Command::Verify(args) => verify::run(db, args),
        Command::Examples(args) => examples::run(db, args),
        Command::Diff(args) => diff::run(db, args),
        Command::Check(args) => check::run(db, args),
        Command::Report(args) => report::run(db, args),
        Command::Views(args) => views::run(db, args, &ui),
        Command::Sql(args) => sql::run(db, args),
        Command::Show(args) => show::run(db, args),
        Command::Export(args) => export::run(db, args, &ui),
        Command::Demo(_) => unreachable!("handled above"),
    }
}

/// Errors when `out` (a command's `--out`) is the database file, its write-ahead log, its
/// sealed companion or a checkpoint journal of either: writing there would replace the
/// corpus (`views build --out` given the database's name replaced it with JSONL and said
/// it wrote the views). The
/// same file is found however it is reached: by its path after resolving symbolic links
/// (for the database given as a link too, its target's log and companion), by name when
/// it does not exist yet (a log or companion to come), and by device and inode (a hard
/// link).
pub fn refuse_database_as_output(db: &Path, out: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt as _;
    // a path with its folder resolved (the file itself may not exist yet)
    let resolved = |p: &Path| -> Option<PathBuf> {
        if let Ok(c) = p.canonicalize() {
            return Some(c);
        }
        let name = p.file_name()?;
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Some(parent.canonicalize().ok()?.join(name))
    };
    let Some(target) = resolved(out) else { return Ok(()) };
    let target_id = std::fs::metadata(out).ok().map(|m| (m.dev(), m.ino()));
    let mut dbs = vec![db.to_path_buf()];
    if let Ok(real) = db.canonicalize() {
        dbs.push(real);
    }
    for db in &dbs {
        use crate::db::checkpoint::{journal_of, partial_of};
        let companion = crate::db::sealed::companion_of(db);
        let files = [
            (db.clone(), "the file"),
            (crate::db::wal_path(db), "the write-ahead log"),
            (journal_of(db), "the checkpoint journal"),
            (partial_of(&journal_of(db)), "the checkpoint journal (being written)"),
            (journal_of(&companion), "the checkpoint journal of the sealed companion"),
            (partial_of(&journal_of(&companion)), "the checkpoint journal (being written) of the sealed companion"),
            (companion, "the sealed companion"),
        ];
        for (file, kind) in &files {
            let same_path = resolved(file).is_some_and(|f| f == target);
            let same_inode =
                target_id.is_some() && std::fs::metadata(file).ok().map(|m| (m.dev(), m.ino())) == target_id;
            if same_path || same_inode {
                return Err(anyhow::anyhow!(
                    "--out {}: that is {kind} of the database {}; writing there would replace the corpus, so \
                     nothing is written (give another --out)",
                    out.display(),
                    db.display()
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Terminal behaviour: progress only on an interactive stderr; `quiet` drops status lines.
pub struct Ui {
    pub progress: bool,
    pub quiet: bool,
}

impl Ui {
    /// A spinner counting `unit`s (examples, views, trajectories...) when the total is
    /// not known in advance; hidden when not on a terminal.
    pub fn spinner(&self, what: String, unit: &str) -> indicatif::ProgressBar {
        if !self.progress {
            return indicatif::ProgressBar::hidden();
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template(&format!("{{spinner}} {{msg}}: {{pos}} {unit} ({{per_sec}})"))
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.set_message(what);
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    }

    /// A bar counting `unit`s out of a known total, with rate and time left; hidden when
    /// not on a terminal.
    pub fn counter(&self, what: String, unit: &str, total: u64) -> indicatif::ProgressBar {
        if !self.progress {
            return indicatif::ProgressBar::hidden();
        }
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(&format!(
                "{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{per_sec}}, {{eta}} left)"
            ))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(what);
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    }
}
