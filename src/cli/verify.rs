//! `sphragis verify --reproduce`: a frozen version against its files and its inputs (exit 3 on a
//! difference: a mismatch is a result, not an error).

use super::CliError;
use crate::review::freeze::{VerifyError, VerifyOptions, verify_and_record};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Rebuild from the input files on disk in a scratch database and compare.
    #[arg(long, required = true)]
    pub reproduce: bool,
    /// The frozen version to check.
    #[arg(long = "version", value_name = "NAME")]
    pub version: String,
    /// The folder holding the version's frozen files [default: the folder freeze wrote,
    /// as recorded in the database].
    #[arg(long, value_name = "DIR")]
    pub frozen: Option<PathBuf>,
}

pub fn run(db: &Path, args: VerifyArgs) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    match verify_and_record(&conn, &args.version, &VerifyOptions { frozen: args.frozen }) {
        Ok(differences) if differences.is_empty() => {
            super::outln!("clean")?;
            Ok(())
        }
        Ok(differences) => {
            for d in &differences {
                super::outln!("{d}")?;
            }
            Err(CliError {
                error: anyhow::anyhow!(
                    "version {} does not reproduce: {} differences",
                    args.version,
                    differences.len()
                ),
                exit_code: 3,
            })
        }
        Err(e) => {
            let code = match e.downcast_ref::<VerifyError>() {
                // an input changed or is gone: the frozen version does not reproduce
                Some(VerifyError::Changed(_) | VerifyError::Missing(_)) => 3,
                _ => 1,
            };
            Err(CliError { error: e, exit_code: code })
        }
    }
}
