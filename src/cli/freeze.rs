//! `sphragis freeze`: write the criteria and manifest files of a version and make it immutable.

use super::CliError;
use crate::review::freeze::{FreezeOptions, describe, freeze_with};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct FreezeArgs {
    /// The corpus version to freeze.
    #[arg(long = "version", value_name = "NAME")]
    pub version: String,
    /// Folder for split-criteria-<org>.json and manifest-<org>-<version>.json (recorded
    /// in the database: verify finds the files there).
    #[arg(long, default_value = "frozen")]
    pub out: PathBuf,
    /// Freeze only these orgs (repeat or comma-separate); every other org with kept
    /// examples is left out, and recorded as left out.
    #[arg(long = "org", value_name = "ORG", value_delimiter = ',')]
    pub orgs: Vec<String>,
    /// Leave out orgs with kept examples but no computed split (recorded) instead of
    /// refusing the freeze.
    #[arg(long)]
    pub allow_partial: bool,
}

pub fn run(db: &Path, args: FreezeArgs) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    let opts = FreezeOptions { orgs: args.orgs, allow_partial: args.allow_partial };
    let summary = freeze_with(&conn, &args.version, &args.out, &opts)?;
    for (from, to) in &summary.renamed {
        super::outln!("kept {} as {}", from.display(), to.display())?;
    }
    for path in &summary.written {
        super::outln!("wrote {}", path.display())?;
    }
    let frozen = if summary.frozen_orgs.is_empty() {
        "no org has a split: no criteria or manifest written".to_string()
    } else {
        format!("{} org(s) written: {}", summary.frozen_orgs.len(), summary.frozen_orgs.join(", "))
    };
    let left_out = if summary.left_out.is_empty() {
        String::new()
    } else {
        format!("; left out: {}", describe(&summary.left_out))
    };
    super::outln!("froze version {} ({frozen}{left_out})", args.version)?;
    Ok(())
}
