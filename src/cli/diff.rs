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
    #[arg(long, conflicts_with = "reports")]
    pub examples: bool,
    /// Compare report views instead: per version-scoped report (`all`, or names such as
    /// `removals,fences`), the figures that differ, old and new side by side, from the
    /// table macro report_diff_at_v1 keyed on the view's grain key (with --against, `all`
    /// leaves out the reports that cannot be compared across two files, and says so). `all`
    /// (or `check-changes`) adds the checks whose status or figures changed between the last
    /// two recorded `sphragis check` runs of this database (check_changes_v1).
    #[arg(long, value_name = "REPORT,...", value_delimiter = ',', num_args = 0..)]
    pub reports: Option<Vec<String>>,
    /// With --reports: write one file per compared report
    /// (`report_diff_at_v1-diff-<report>.<ext>`; `check_changes_v1.<ext>`) and a
    /// manifest.json here.
    #[arg(long, value_name = "DIR", requires = "reports")]
    pub out: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    #[command(flatten)]
    pub csv: super::CsvArgs,
}

/// The `--reports` name of the check changes between the last two recorded runs.
const CHECK_CHANGES: &str = "check-changes";

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let format = args.format.with(args.csv)?;
    let [a, b] = args.versions.as_slice() else {
        return Err(CliError {
            error: anyhow::anyhow!("give --version twice: the version to compare from, then the one to compare to"),
            exit_code: 2,
        });
    };
    if let Some(names) = &args.reports {
        let all = names.is_empty() || names.iter().any(|n| n == "all");
        let with_checks = all || names.iter().any(|n| n == CHECK_CHANGES);
        let others: Vec<String> = names.iter().filter(|n| *n != CHECK_CHANGES).cloned().collect();
        let mut reports = if others.is_empty() && !all {
            Vec::new()
        } else {
            crate::review::diff::reports_to_compare(&others).map_err(|error| CliError { error, exit_code: 2 })?
        };
        if all && args.against.is_some() {
            // `all` across two files: the reports that cannot be compared so are left out, said
            let left;
            (reports, left) = crate::review::diff::across_files(reports);
            if !left.is_empty() {
                eprintln!("note: --reports all across two files leaves out {}", left.join("; "));
            }
        }
        // one open of the file for the whole command (each open reads its catalogue)
        let conn = crate::db::open_read_only(db)?;
        let mut tables = match &args.against {
            Some(other) => crate::review::diff::diff_reports_files(&conn, db, a, other, b, &reports)?,
            None => crate::review::diff::diff_reports(&conn, a, b, &reports)?,
        };
        if with_checks {
            tables.push(crate::check::record::changes_table(&conn)?);
        }
        let options = serde_json::json!({ "versions": [a, b], "against": args.against, "reports": names });
        let context = crate::report::ExportContext::of(&conn, db, options)?;
        return super::report::print_or_write(&tables, format, args.out.as_deref(), &context);
    }
    let conn = crate::db::open_read_only(db)?;
    let table = match &args.against {
        Some(other) => crate::review::diff::diff_files(&conn, db, a, other, b, args.examples)?,
        None => crate::review::diff::diff(&conn, a, b, args.examples)?,
    };
    super::out!("{}", crate::report::render(&table, format)?)?;
    Ok(())
}
