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
    /// Rules to apply: `all`, or a comma list of service_account, robot_comment,
    /// rebase_successor, suggested_edit, applied_fix, duplicate (applied in that order).
    #[arg(long, default_value = "all")]
    pub rules: String,
    /// target_in_comment threshold, in characters of the normalized target.
    #[arg(long, default_value_t = 20)]
    pub min_target_chars: u32,
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let usage = |error: anyhow::Error| CliError { error, exit_code: 2 };
    let rules = Rule::parse_list(&args.rules).map_err(usage)?;
    if rules.is_empty() {
        return Err(usage(anyhow::anyhow!("--rules names no rule; name them, or use all")));
    }
    crate::review::refine::check_version_name(&args.version).map_err(usage)?;
    if let Some(base) = &args.base {
        crate::review::refine::check_version_name(base).map_err(usage)?;
    }
    let conn = crate::db::open(db)?;
    let s = refine(
        &conn,
        &RefineOptions {
            version: args.version,
            base: args.base,
            rules: rules.clone(),
            min_target_chars: args.min_target_chars,
        },
    )?;
    let names: Vec<_> = rules.iter().map(|r| r.name()).collect();
    super::outln!(
        "{} version {}: {} built, {} removed, {} kept (rules: {}); see `sphragis report removals --version {}`",
        if s.replaced { "re-refined" } else { "refined" },
        s.version,
        s.built,
        s.removed,
        s.kept,
        names.join(", "),
        s.version
    )?;
    Ok(())
}
