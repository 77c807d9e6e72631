//! `sphragis examples`: the content of the examples in one split (a sealed split needs `--unseal`).

use super::{CliError, FormatArg};
use crate::review::splits;
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct ExamplesArgs {
    /// The corpus version.
    #[arg(long = "version", value_name = "NAME")]
    pub version: String,
    /// The org.
    #[arg(long)]
    pub org: String,
    /// The split (window name).
    #[arg(long)]
    pub split: String,
    /// Open a sealed split, reading its content from the companion database
    /// <db>.sealed.duckdb; the use is logged in the database (sph_log).
    #[arg(long)]
    pub unseal: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    #[command(flatten)]
    pub csv: super::CsvArgs,
}

pub fn run(db: &Path, args: ExamplesArgs) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    let table = splits::examples(&conn, &args.version, &args.org, &args.split, args.unseal)?;
    if table.stamp.is_none() {
        eprintln!("unsealed {} {} {}: logged in sph_log", args.version, args.org, args.split);
    }
    super::out!("{}", crate::report::render(&table, args.format.with(args.csv)?)?)?;
    Ok(())
}
