//! `sphragis export --format parquet --out DIR [--tables T,...] [--include-sealed]`: the
//! database's tables as partitioned Parquet with `manifest.json` (see [`crate::export`]);
//! `sphragis init --from DIR` is the way back.

use super::{CliError, Ui, outln};
use crate::export::{ExportOptions, export, log_sealed_export};
use std::path::{Path, PathBuf};

/// Export file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Apache Parquet, ZSTD, hive-partitioned on version / org / pool columns.
    Parquet,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// File format of the export.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: ExportFormat,
    /// The folder to write (created; refused when it exists and is not empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Only these tables (comma-separated or repeated) [default: every table but sph_ bookkeeping].
    #[arg(long, value_delimiter = ',')]
    pub tables: Option<Vec<String>>,
    /// Also export the rows of sealed-window examples (ids and verdicts; their content is in
    /// the sealed companion, which export never reads). Logged in the database (sph_log).
    #[arg(long)]
    pub include_sealed: bool,
}

pub fn run(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    let ExportFormat::Parquet = args.format;
    let (writer, reader);
    let conn: &duckdb::Connection = if args.include_sealed {
        writer = crate::db::open(db)?;
        log_sealed_export(&writer, &args.out)?;
        &writer
    } else {
        reader = crate::db::open_read_only(db)?;
        &reader
    };
    let opts = ExportOptions { out: args.out.clone(), tables: args.tables, include_sealed: args.include_sealed };
    let bar = ui.spinner(format!("exporting to {}", args.out.display()), "tables");
    let manifest = export(conn, &opts);
    bar.finish_and_clear();
    let manifest = manifest?;
    if ui.quiet {
        return Ok(());
    }
    let rows: i64 = manifest.tables.iter().map(|t| t.rows).sum();
    let files: usize = manifest.tables.iter().map(|t| t.files.len()).sum();
    let portable = manifest.views.iter().filter(|v| v.spark_portable).count();
    outln!(
        "{}: {} tables, {rows} rows in {files} Parquet files; {} views and macros ({portable} portable to Spark SQL); manifest.json",
        args.out.display(),
        manifest.tables.len(),
        manifest.views.len()
    )?;
    if manifest.sealed.sealed_examples > 0 {
        if manifest.sealed.rows_included {
            outln!(
                "sealed window: rows of {} sealed examples included (no content); logged in sph_log",
                manifest.sealed.sealed_examples
            )?;
        } else {
            let left: i64 = manifest.sealed.rows_left_out.values().sum();
            outln!(
                "sealed window: {left} rows of {} sealed examples left out (--include-sealed exports them, without content)",
                manifest.sealed.sealed_examples
            )?;
        }
    }
    Ok(())
}

/// `sphragis init --from DIR`: builds the new database `db` from an export.
pub fn import(db: &Path, dir: &Path, ui: &Ui) -> Result<(), CliError> {
    let summary = crate::export::import(db, dir)?;
    if !ui.quiet {
        let rows: i64 = summary.tables.iter().map(|(_, n)| n).sum();
        outln!(
            "{}: built from {}: {} tables, {rows} rows, every file's sha256 checked",
            db.display(),
            dir.display(),
            summary.tables.len()
        )?;
        if !summary.not_in_export.is_empty() {
            outln!("not in the export (left empty): {}", summary.not_in_export.join(", "))?;
        }
    }
    Ok(())
}
