//! `sphragis sql "<query>"`: ad-hoc SQL with the sph_ functions registered.

use super::{CliError, FormatArg};
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The query; its result is printed.
    pub query: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    #[command(flatten)]
    pub csv: super::CsvArgs,
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let format = args.format.with(args.csv)?;
    let conn = crate::db::open_for_queries(db)?;
    let table = crate::report::query(&conn, &args.query, &[])?;
    super::out!("{}", crate::report::render(&table, format)?)?;
    if args.format == FormatArg::Json {
        super::outln!()?;
    }
    Ok(())
}
