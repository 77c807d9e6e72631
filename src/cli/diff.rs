//! `sphragis diff --version A --version B`: what changed between two corpus versions.

use super::{CliError, FormatArg};
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The two versions, from and to: `--version v2 --version v3`.
    #[arg(long = "version", value_name = "NAME", num_args = 1, required = true)]
    pub versions: Vec<String>,
    /// Compare the first version in this database with the second version in FILE (a
    /// database made from other inputs); both files are only read.
    #[arg(long, value_name = "FILE")]
    pub against: Option<std::path::PathBuf>,
    /// List every example that moved (verdict, split or half) instead of the per-org counts.
    #[arg(long)]
    pub examples: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    #[command(flatten)]
    pub csv: super::CsvArgs,
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let format = args.format.with(args.csv)?;
    let [a, b] = args.versions.as_slice() else {
        return Err(CliError {
            error: anyhow::anyhow!("give --version twice: the version to compare from, then the one to compare to"),
            exit_code: 2,
        });
    };
    let table = match &args.against {
        Some(other) => crate::review::diff::diff_files(db, a, other, b, args.examples)?,
        None => crate::review::diff::diff(&crate::db::open_read_only(db)?, a, b, args.examples)?,
    };
    super::out!("{}", crate::report::render(&table, format)?)?;
    Ok(())
}
