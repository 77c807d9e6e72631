//! `sphragis refine`.

use super::CliError;
use crate::review::refine::{RefineOptions, Rule, refine};
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Name of the new corpus version, e.g. v3.
    #[arg(long = "version", value_name = "NAME")]
    pub version: String,
    /// The version it is reconciled against (must exist).
    #[arg(long)]
    pub base: Option<String>,
    /// Rules to apply: `all`, or a comma list of service_account, rebase_successor,
    /// suggested_edit, applied_fix, duplicate (applied in that order).
    #[arg(long, default_value = "all")]
    pub rules: String,
    /// target_in_comment threshold, in characters of the normalized target.
    #[arg(long, default_value_t = 20)]
    pub min_target_chars: u32,
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let conn = crate::db::open(db)?;
    let rules = Rule::parse_list(&args.rules)?;
    let s = refine(
        &conn,
        &RefineOptions { version: args.version, base: args.base, rules: rules.clone(), min_target_chars: args.min_target_chars },
    )?;
    let names: Vec<_> = rules.iter().map(|r| r.name()).collect();
    println!(
        "{} version {}: {} built, {} removed, {} kept (rules: {}); see `sphragis report removals --version {}`",
        if s.replaced { "re-refined" } else { "refined" },
        s.version,
        s.built,
        s.removed,
        s.kept,
        names.join(", "),
        s.version
    );
    Ok(())
}
