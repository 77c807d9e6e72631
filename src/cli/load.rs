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
        }
    }
}

pub fn run(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    let kind = ReviewKind::from(args.kind);
    for file in &args.files {
        let bar = ui.spinner(format!("loading {}", file.display()));
        let outcome = load(&conn, kind, file, args.org.as_deref(), &mut |n| bar.set_position(n));
        bar.finish_and_clear();
        match outcome? {
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
                "skipped {} {path}: the same bytes were loaded as file_id {} from {} (sha256 {})",
                kind.name(),
                earlier.file_id,
                earlier.path,
                earlier.sha256
            ),
        }
    }
    Ok(())
}
