//! `sphragis split`: place a version's kept examples in the registered windows and halves.

use super::CliError;
use crate::review::splits;
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct SplitArgs {
    /// The corpus version.
    #[arg(long = "version", value_name = "NAME")]
    pub version: String,
    /// Only this org (default: every org of the version with registered halves).
    #[arg(long)]
    pub org: Option<String>,
}

pub fn run(db: &Path, args: SplitArgs) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    for (org, n) in splits::compute(&conn, &args.version, args.org.as_deref())? {
        super::outln!(
            "split {} {org}: {n} kept examples placed; see `sphragis report splits --version {}`",
            args.version,
            args.version
        )?;
    }
    Ok(())
}
