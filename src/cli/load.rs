//! `sphragis load <KIND> FILE...`: load input files, one transaction each.

use super::{CliError, Ui};
use crate::ingest::read::TokenizerFile;
use crate::ingest::{Corpus, InputKind, LoadOutcome};
use crate::review::load::load;
use std::path::{Path, PathBuf};

/// Opens the database for a load, after refusing an input path that does not exist (the
/// usage errors, exit 2, come first): nothing is loaded and no new database file is made
/// for it (hostile input D20: `load views nosuch.jsonl` made a new, empty database file,
/// then failed). For `views` and `trajectories`, a folder or quoted glob of Parquet shards
/// (`*`, `?`, `[`) must match Parquet files only, matched here by an in-memory DuckDB as
/// the load will match them, each starting with `PAR1`; `load run`'s first argument is
/// the run's name, not a path. A link to nothing is missing too.
fn open_for(db: &Path, args: &Args) -> Result<crate::db::Database, CliError> {
    let paths = if args.kind == InputKind::Run { args.files.get(1..).unwrap_or(&[]) } else { &args.files[..] };
    let reads_parquet = matches!(args.kind, InputKind::Views | InputKind::Trajectories);
    let refuse =
        |error: anyhow::Error| CliError { error: anyhow::anyhow!("{error:#} (nothing was loaded)"), exit_code: 1 };
    for path in paths {
        use crate::ingest::parquet::{is_parquet_arg, is_shard_set};
        if reads_parquet && (is_shard_set(path) || path.exists() && is_parquet_arg(path)) {
            let probe = duckdb::Connection::open_in_memory().map_err(|e| refuse(e.into()))?;
            crate::ingest::parquet::check_shard_set(&probe, path).map_err(refuse)?;
        } else if !path.exists() {
            return Err(refuse(anyhow::anyhow!("{}: no such file or folder", path.display())));
        }
    }
    Ok(crate::db::open(db)?)
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the files hold.
    #[arg(value_enum)]
    pub kind: InputKind,
    /// Files to load, in order; each is its own transaction. For `run`: the run's NAME
    /// first, then its files or folders (folders are searched for .json, .jsonl, .traj,
    /// .yaml, .yml and Inspect AI .eval files; others found there are listed as not
    /// read). For `views` and
    /// `trajectories`, a .parquet file, or a folder or quoted glob of Parquet shards
    /// (`data/` or 'data/train-*.parquet': every shard in name order, in one
    /// transaction, each logged with its SHA-256), is read too; errors name its row.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The org: for tufano2021 (which names none), instead of gerrit-query's URL host,
    /// for review4repair (all rows into one org, hosts become projects), and required for
    /// gerrit-rest (a REST response does not name its host).
    #[arg(long, help_heading = "Review inputs")]
    pub org: Option<String>,
    /// views: the pool of lines that name none.
    #[arg(long, help_heading = "SFT views and trajectories")]
    pub pool: Option<String>,
    /// views: whether message span ends are inclusive or exclusive, for lines that do not say.
    #[arg(long, value_enum, help_heading = "SFT views and trajectories")]
    pub span_end: Option<SpanEndArg>,
    /// views: the tokenizer.json the views were made with (vocabulary bound for the
    /// contract; its added tokens cut each message into segments for `report segments`);
    /// trajectories: re-tokenize thinking bodies with it. Its SHA-256 is
    /// recorded beside what it computed.
    #[arg(long, help_heading = "SFT views and trajectories")]
    pub tokenizer: Option<PathBuf>,
    /// run: the model evaluated (required for `load run`).
    #[arg(long, help_heading = "Evaluation runs (load run)")]
    pub model: Option<String>,
    /// run: the agent harness and its version, e.g. "mini-swe-agent 1.15.0".
    #[arg(long, help_heading = "Evaluation runs (load run)")]
    pub harness: Option<String>,
    /// run: the loaded run this one continues or resumes (a continued run is never
    /// counted as an independent repeat).
    #[arg(long, value_name = "RUN", help_heading = "Evaluation runs (load run)")]
    pub continues: Option<String>,
    /// run: N of the runaway heuristic — N or more assistant turns before any edit.
    #[arg(long, value_name = "N", default_value_t = crate::eval::symptoms::DEFAULT_RUNAWAY_TURNS,
          value_parser = clap::value_parser!(u32).range(1..), help_heading = "Evaluation runs (load run)")]
    pub runaway_turns: u32,
}

pub fn run(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    let run_options = args.model.is_some() || args.harness.is_some() || args.continues.is_some();
    if args.kind == InputKind::Run {
        return eval_run(db, args, ui);
    } else if run_options {
        return Err(CliError {
            error: anyhow::anyhow!("--model, --harness and --continues apply to `load run`"),
            exit_code: 2,
        });
    }
    if args.kind == InputKind::Views {
        return views(db, args, ui);
    }
    if args.kind.corpus() == Corpus::Sft {
        let tokenizer = match (&args.tokenizer, args.kind) {
            (Some(path), InputKind::Trajectories) => Some(TokenizerFile::read(path)?),
            _ => None,
        };
        let conn = open_for(db, &args)?;
        let bar = ui.counter("loading".into(), "files", args.files.len() as u64);
        for (n, file) in args.files.iter().enumerate() {
            let outcome = match args.kind {
                InputKind::Trajectories => crate::sft::store::load_trajectories_all(&conn, file, tokenizer.as_ref()),
                InputKind::Outcomes => crate::sft::store::load_outcome(&conn, file).map(|o| vec![o]),
                InputKind::Manifest => crate::sft::pools::load_manifest(&conn, file).map(|o| vec![o]),
                InputKind::Samples => crate::sft::pools::load_samples(&conn, file).map(|o| vec![o]),
                InputKind::Pools => crate::sft::pools::load(&conn, file).map(|o| vec![o]),
                other => unreachable!("{other} is not an SFT kind loaded here"),
            };
            bar.set_position(n as u64 + 1);
            match outcome {
                Ok(outcomes) => {
                    for o in outcomes {
                        bar.suspend(|| report_outcome(args.kind, o))?;
                    }
                    if args.kind == InputKind::Trajectories {
                        bar.suspend(|| report_not_read(&conn, file))?;
                    }
                }
                Err(e) => {
                    bar.finish_and_clear();
                    return Err(e.into());
                }
            }
        }
        bar.finish_and_clear();
        return Ok(());
    }
    let conn = open_for(db, &args)?;
    for file in &args.files {
        let bar = ui.spinner(format!("loading {}", file.display()), args.kind.record_noun());
        let outcome = load(&conn, args.kind, file, args.org.as_deref(), &mut |n| bar.set_position(n));
        bar.finish_and_clear();
        report_outcome(args.kind, outcome?)?;
    }
    Ok(())
}

/// `load run NAME --model M [--harness H] [--continues RUN] FILES/DIRS...`
fn eval_run(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    use crate::eval::load::{RunSpec, check_spec, expand, load_run};
    let usage = |m: &str| CliError { error: anyhow::anyhow!("{m}"), exit_code: 2 };
    let (name, paths) = args.files.split_first().expect("clap requires one");
    if paths.is_empty() {
        return Err(usage("load run NAME needs files or folders after the name"));
    }
    let Some(model) = args.model.clone() else { return Err(usage("load run needs --model")) };
    if model.trim().is_empty() {
        return Err(usage("--model must not be empty"));
    }
    let spec = RunSpec {
        name: name.to_string_lossy().into_owned(),
        model,
        harness: args.harness.clone(),
        continues: args.continues.clone(),
        runaway_turns: args.runaway_turns,
    };
    let (files, skipped) = expand(paths)?;
    if files.is_empty() {
        return Err(usage("no run file (.json, .jsonl, .traj, .yaml, .yml, .eval) in the paths given"));
    }
    let conn = open_for(db, &args)?;
    check_spec(&conn, &spec)?;
    let bar = ui.spinner(format!("loading run {} ({} files, whole or not at all)", spec.name, files.len()), "files");
    let outcomes = load_run(&conn, &spec, &files);
    bar.finish_and_clear();
    for outcome in outcomes? {
        report_outcome(InputKind::Run, outcome)?;
    }
    for s in &skipped {
        super::outln!("not read: {} ({})", s.path.display(), s.why)?;
    }
    Ok(())
}

fn views(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    use crate::sft::views::{SpanEnd, ViewOptions, load_all as load_views};
    let (tokenizer, segments) = match args.tokenizer.as_deref() {
        Some(path) => {
            let t = TokenizerFile::read(path)?;
            let vocab = (t.vocab_size(), t.sha256.clone());
            (Some(vocab), Some(std::sync::Arc::new(crate::sft::segments::Segmenter::new(t.tokenizer, t.sha256))))
        }
        None => (None, None),
    };
    let options = ViewOptions {
        pool: args.pool.clone(),
        span_end: args.span_end.map(|s| match s {
            SpanEndArg::Inclusive => SpanEnd::Inclusive,
            SpanEndArg::Exclusive => SpanEnd::Exclusive,
        }),
        tokenizer,
        segments,
    };
    let conn = open_for(db, &args)?;
    for file in &args.files {
        let bar = ui.spinner(format!("loading {}", file.display()), InputKind::Views.record_noun());
        let outcomes = load_views(&conn, file, &options, &mut |n| bar.set_position(n));
        bar.finish_and_clear();
        for outcome in outcomes? {
            report_outcome(InputKind::Views, outcome)?;
        }
        report_not_read(&conn, file)?;
    }
    Ok(())
}

/// Lists the paths of a Parquet folder `arg` that were met and not read: links to
/// folders (not followed) and files reached again by another path (read once).
fn report_not_read(conn: &duckdb::Connection, arg: &Path) -> Result<(), CliError> {
    if arg.is_dir() {
        for s in crate::ingest::parquet::shards_and_skipped(conn, arg)?.1 {
            super::outln!("not read: {} ({})", s.path.display(), s.why)?;
        }
    }
    Ok(())
}

fn report_outcome(kind: InputKind, outcome: LoadOutcome) -> std::io::Result<()> {
    match outcome {
        LoadOutcome::Loaded(f) => super::outln!(
            "loaded {} {}: {} row{}, {} bytes, sha256 {} (file_id {}){}",
            f.kind,
            f.path,
            f.rows,
            if f.rows == 1 { "" } else { "s" },
            f.bytes,
            f.sha256,
            f.file_id,
            f.same_bytes_as.map_or(String::new(), |e| format!("; the same bytes as file_id {e}, applied again"))
        ),
        LoadOutcome::AlreadyLoaded { earlier, path } => super::outln!(
            "skipped {kind} {path}: the same bytes were loaded as file_id {} from {} (sha256 {}); \
             nothing was written, and options given now were not applied",
            earlier.file_id,
            earlier.path,
            earlier.sha256
        ),
    }
}

/// `--span-end`: whether a message span's end position is part of the message.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SpanEndArg {
    /// `end` is the last position of the message.
    Inclusive,
    /// `end` is one past the last position (Python slice convention).
    Exclusive,
}
