//! `sphragis split`, `freeze`, `verify --reproduce` and `examples`.

use super::{CliError, FormatArg};
use crate::review::freeze::{FreezeOptions, VerifyError, VerifyOptions, describe, freeze_with, verify_reproduce_with};
use crate::review::splits;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct SplitArgs {
    /// The corpus version.
    #[arg(long = "version", value_name = "NAME")]
    pub version: String,
    /// Only this org (default: every org of the version with registered halves).
    #[arg(long)]
    pub org: Option<String>,
}

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

pub fn split(db: &Path, args: SplitArgs) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    for (org, n) in splits::compute(&conn, &args.version, args.org.as_deref())? {
        super::outln!("split {} {org}: {n} kept examples placed; see `sphragis report splits --version {}`", args.version, args.version)?;
    }
    Ok(())
}

pub fn freeze(db: &Path, args: FreezeArgs) -> Result<(), CliError> {
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

pub fn verify(db: &Path, args: VerifyArgs) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    match verify_reproduce_with(&conn, &args.version, &VerifyOptions { frozen: args.frozen }) {
        Ok(differences) if differences.is_empty() => {
            super::outln!("clean")?;
            Ok(())
        }
        Ok(differences) => {
            for d in &differences {
                super::outln!("{d}")?;
            }
            Err(CliError {
                error: anyhow::anyhow!("version {} does not reproduce: {} differences", args.version, differences.len()),
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

pub fn examples(db: &Path, args: ExamplesArgs) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    let table = splits::examples(&conn, &args.version, &args.org, &args.split, args.unseal)?;
    if table.stamp.is_none() {
        eprintln!("unsealed {} {} {}: logged in sph_log", args.version, args.org, args.split);
    }
    super::out!("{}", crate::report::render(&table, args.format.with(args.csv)?)?)?;
    Ok(())
}
