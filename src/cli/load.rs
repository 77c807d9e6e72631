//! `sphragis load <KIND> FILE...`: load input files, one transaction each.

use super::{CliError, Ui};
use crate::db::ingest::LoadOutcome;
use crate::review::load::{ReviewKind, load};
use clap::ValueEnum;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the files hold.
    #[arg(value_enum)]
    pub kind: KindArg,
    /// Files to load, in order; each is its own transaction.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The org: for tufano2021 (which names none), instead of gerrit-query's URL host, and
    /// for review4repair (all rows into one org, hosts become projects).
    #[arg(long)]
    pub org: Option<String>,
    /// views: the pool of lines that name none.
    #[arg(long)]
    pub pool: Option<String>,
    /// views: whether message span ends are inclusive or exclusive, for lines that do not say.
    #[arg(long, value_parser = ["inclusive", "exclusive"])]
    pub span_end: Option<String>,
    /// views: the tokenizer.json the views were made with (vocabulary bound for the
    /// contract); trajectories: re-tokenize thinking bodies with it.
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
}

/// Input kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// sphragis review examples, JSONL (docs/formats.md).
    Examples,
    /// Review4Repair test_100.json (JSON array) or its rows as JSONL.
    Review4repair,
    /// Tufano et al. 2021 CSV (comment, before, before_marked, after).
    Tufano2021,
    /// Gerrit `gerrit query --format=JSON` output (change messages, patch sets).
    GerritQuery,
    /// Per-org configuration: service accounts, windows, halves (docs/formats.md).
    Orgs,
    /// Label-audit items, JSONL (docs/formats.md).
    Labels,
    /// SFT views: token ids + loss mask (or HF labels / TRL assistant_masks), JSONL.
    Views,
    /// Agent trajectories: mini-swe-agent .traj.json, SWE-agent .traj, OpenHands / nebius /
    /// SWE-smith rows (JSON arrays), LLaMA-Factory JSONL (format detected from content).
    Trajectories,
    /// SWE-bench report.json evaluator outcomes (one instance per file).
    Outcomes,
    /// SFT pool roles: repair / recovery / report, label subsets (JSON; docs/formats.md).
    Pools,
    /// SFT split manifest and protected families (JSON; docs/formats.md).
    Manifest,
    /// Evaluator samples database (SQLite, opened read-only; docs/formats.md).
    Samples,
}

impl From<KindArg> for ReviewKind {
    fn from(k: KindArg) -> Self {
        match k {
            KindArg::Examples => Self::Examples,
            KindArg::Review4repair => Self::Review4Repair,
            KindArg::Tufano2021 => Self::Tufano2021,
            KindArg::GerritQuery => Self::GerritQuery,
            KindArg::Orgs => Self::Orgs,
            KindArg::Labels => Self::Labels,
            KindArg::Views
            | KindArg::Trajectories
            | KindArg::Outcomes
            | KindArg::Pools
            | KindArg::Manifest
            | KindArg::Samples => {
                unreachable!("SFT kinds load through sft::")
            }
        }
    }
}

pub fn run(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    if args.kind == KindArg::Views {
        return views(db, args, ui);
    }
    if matches!(
        args.kind,
        KindArg::Trajectories | KindArg::Outcomes | KindArg::Pools | KindArg::Manifest | KindArg::Samples
    ) {
        let tokenizer = match (&args.tokenizer, args.kind) {
            (Some(path), KindArg::Trajectories) => Some(
                tokenizers::Tokenizer::from_file(path)
                    .map_err(|e| anyhow::anyhow!("{}: not a tokenizer.json: {e}", path.display()))?,
            ),
            _ => None,
        };
        let conn = crate::db::open(db)?;
        let bar = ui.spinner("loading".into());
        for (n, file) in args.files.iter().enumerate() {
            let (outcome, kind) = match args.kind {
                KindArg::Trajectories => (crate::sft::store::load_trajectories(&conn, file, tokenizer.as_ref()), "trajectories"),
                KindArg::Outcomes => (crate::sft::store::load_outcome(&conn, file), "outcomes"),
                KindArg::Manifest => (crate::sft::pools::load_manifest(&conn, file), "manifest"),
                KindArg::Samples => (crate::sft::pools::load_samples(&conn, file), "samples"),
                _ => (crate::sft::pools::load(&conn, file), "pools"),
            };
            bar.set_position(n as u64 + 1);
            match outcome {
                Ok(o) => {
                    bar.suspend(|| report_outcome(kind, o));
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
    let conn = crate::db::open(db)?;
    let kind = ReviewKind::from(args.kind);
    for file in &args.files {
        let bar = ui.spinner(format!("loading {}", file.display()));
        let outcome = load(&conn, kind, file, args.org.as_deref(), &mut |n| bar.set_position(n));
        bar.finish_and_clear();
        report_outcome(kind.name(), outcome?);
    }
    Ok(())
}

fn views(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    use crate::sft::views::{SpanEnd, ViewOptions, load as load_views, tokenizer_info};
    let tokenizer = args.tokenizer.as_deref().map(tokenizer_info).transpose()?;
    let options = ViewOptions {
        pool: args.pool.clone(),
        span_end: args.span_end.as_deref().map(|s| if s == "inclusive" { SpanEnd::Inclusive } else { SpanEnd::Exclusive }),
        tokenizer,
    };
    let conn = crate::db::open(db)?;
    for file in &args.files {
        let bar = ui.spinner(format!("loading {}", file.display()));
        let outcome = load_views(&conn, file, &options, &mut |n| bar.set_position(n));
        bar.finish_and_clear();
        report_outcome("views", outcome?);
    }
    Ok(())
}

fn report_outcome(kind: &str, outcome: LoadOutcome) {
    match outcome {
        LoadOutcome::Loaded(f) => println!(
            "loaded {} {}: {} rows, {} bytes, sha256 {} (file_id {}){}",
            f.kind,
            f.path,
            f.rows,
            f.bytes,
            f.sha256,
            f.file_id,
            f.same_bytes_as.map_or(String::new(), |e| format!("; the same bytes as file_id {e}, applied again"))
        ),
        LoadOutcome::AlreadyLoaded { earlier, path } => println!(
            "skipped {kind} {path}: the same bytes were loaded as file_id {} from {} (sha256 {}); \
             nothing was written, and options given now were not applied",
            earlier.file_id, earlier.path, earlier.sha256
        ),
    }
}
