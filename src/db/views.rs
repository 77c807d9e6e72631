//! The view registry: versioned report views from `sql/`, embedded at build time.
//!
//! Each file `sql/<area>/<name>_v<N>.sql` holds one `select` (dbt style: a header that
//! gives the grain and every column). On open, every view is (re)created as
//! `create or replace view <name>_v<N> as <select>`, a pointer view `<name>` selects
//! from the highest version, and the file's SHA-256 (CRLF → LF) is recorded in
//! `sph_views`. A recorded view whose SQL changed is refused: a released view is never
//! edited, a change of meaning is `<name>_v<N+1>` (SPEC §1 principle 2).
//!
//! Architecture invariant: views read stored tables and columns only — never an `sph_`
//! function — so the file answers every view from a stock DuckDB client.

use anyhow::{Context, Result, bail};
use duckdb::Connection;

/// One embedded view file.
#[derive(Debug, Clone, Copy)]
pub struct ViewFile {
    /// Path under the source tree, e.g. `sql/review/refine_removals_v1.sql`.
    pub source: &'static str,
    /// The `select` text (with its header comment).
    pub sql: &'static str,
}

macro_rules! view {
    ($path:literal) => {
        ViewFile { source: $path, sql: include_str!(concat!("../../", $path)) }
    };
}

/// Every view, in creation order (a view may read views listed before it).
pub const VIEWS: &[ViewFile] = &[
    view!("sql/review/ingest_files_v1.sql"),
    view!("sql/review/refine_removals_v1.sql"),
    view!("sql/review/suggested_edit_share_v1.sql"),
    view!("sql/review/fence_agreement_v1.sql"),
    view!("sql/review/target_in_comment_v1.sql"),
    view!("sql/review/reconciliation_v1.sql"),
    view!("sql/review/suggested_edit_share_by_half_v1.sql"),
    view!("sql/review/label_audit_v1.sql"),
    view!("sql/splits/split_counts_v1.sql"),
    view!("sql/splits/half_suffix_mix_v1.sql"),
    view!("sql/splits/split_criteria_v1.sql"),
    view!("sql/sft/sft_contract_v1.sql"),
    view!("sql/sft/sft_contract_summary_v1.sql"),
    view!("sql/sft/sft_contract_failures_v1.sql"),
    view!("sql/sft/sft_assistant_supervision_v1.sql"),
    view!("sql/sft/sft_trajectory_stats_v1.sql"),
    view!("sql/sft/sft_instances_v1.sql"),
    view!("sql/pools/sft_union_runs_v1.sql"),
    view!("sql/pools/sft_dedup_v1.sql"),
    view!("sql/pools/sft_recovery_exposure_v1.sql"),
    view!("sql/pools/sft_weight_projection_v1.sql"),
    view!("sql/pools/sft_context_lengths_v1.sql"),
    view!("sql/pools/sft_dedup_exact_pools_v1.sql"),
    view!("sql/pools/sft_dedup_priority_v1.sql"),
    view!("sql/pools/sft_membership_v1.sql"),
    view!("sql/pools/sft_recovery_concentration_v1.sql"),
    view!("sql/pools/sft_isolation_v1.sql"),
    view!("sql/pools/sft_budget_v1.sql"),
    view!("sql/pools/sft_outcome_distribution_v1.sql"),
    view!("sql/pools/sft_thinking_v1.sql"),
    view!("sql/pools/sft_supervised_tools_v1.sql"),
    view!("sql/pools/sft_test_runs_heuristic_v1.sql"),
    view!("sql/pools/sft_recovery_windows_heuristic_v1.sql"),
    view!("sql/pools/sft_final_report_v1.sql"),
    view!("sql/pools/sft_expected_failures_heuristic_v1.sql"),
    view!("sql/pools/sft_instance_detail_v1.sql"),
    view!("sql/pools/sft_samples_outcomes_v1.sql"),
    view!("sql/pools/sft_report_only_v1.sql"),
    view!("sql/pools/sft_position_exposure_v1.sql"),
];

impl ViewFile {
    /// The versioned view name: the file stem, e.g. `refine_removals_v1`.
    pub fn name(&self) -> &'static str {
        let file = self.source.rsplit('/').next().unwrap_or(self.source);
        file.strip_suffix(".sql").unwrap_or(file)
    }

    /// `(pointer name, version)`, e.g. `("refine_removals", 1)`; `None` when the file
    /// name does not end in `_v<N>`.
    pub fn base_and_version(&self) -> Option<(&'static str, i32)> {
        let name = self.name();
        let (base, version) = name.rsplit_once("_v")?;
        Some((base, version.parse().ok()?))
    }

    /// SHA-256 of the SQL text after CRLF → LF.
    pub fn sha256(&self) -> String {
        super::migrations::checksum(self.sql)
    }
}

/// Looks a view up by its versioned name.
pub fn find(name: &str) -> Option<&'static ViewFile> {
    VIEWS.iter().find(|v| v.name() == name)
}

/// Checks, without changing anything, that every view of this binary is recorded with
/// its SHA-256. Errors name the first view that is missing or differs.
pub fn check_current(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare("select sha256 from sph_views where name = ?")?;
    for view in VIEWS {
        let recorded: Option<String> = stmt.query_row([view.name()], |r| r.get(0)).ok();
        match recorded {
            Some(sha) if sha == view.sha256() => {}
            Some(_) => bail!("view {} in this file differs from this sphragis's {}", view.name(), view.source),
            None => bail!("view {} is not in this file yet; run `sphragis init` to add it", view.name()),
        }
    }
    Ok(())
}

/// Creates every view and pointer view and records new ones in `sph_views`.
///
/// Errors: a view recorded in the database has a different SHA-256 than the embedded
/// file (its meaning changed without a new version), or DuckDB rejects the SQL.
pub fn register(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare("select sha256 from sph_views where name = ?")?;
    let mut latest: Vec<(&str, i32, &str)> = Vec::new();
    for view in VIEWS {
        let name = view.name();
        let (base, version) = view
            .base_and_version()
            .with_context(|| format!("{} is not named <view>_v<N>.sql", view.source))?;
        let sha = view.sha256();
        let recorded: Option<String> = stmt.query_row([name], |r| r.get(0)).ok();
        if let Some(recorded) = &recorded
            && recorded != &sha
        {
            bail!(
                "view {name} in this database was recorded with sha256 {recorded}, but {} now has {sha}; \
                 a change of meaning needs a new file {base}_v{}.sql",
                view.source,
                version + 1
            );
        }
        conn.execute_batch(&format!("create or replace view {name} as\n{}", view.sql))
            .with_context(|| format!("creating view {name} from {}", view.source))?;
        if recorded.is_none() {
            conn.execute(
                "insert into sph_views (name, base_name, version, sha256, source) values (?, ?, ?, ?, ?)",
                duckdb::params![name, base, version, sha, view.source],
            )?;
        }
        match latest.iter_mut().find(|(b, _, _)| *b == base) {
            Some(entry) if entry.1 < version => *entry = (base, version, name),
            Some(_) => {}
            None => latest.push((base, version, name)),
        }
    }
    for (base, _, name) in latest {
        conn.execute_batch(&format!("create or replace view {base} as select * from {name}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sql_file_is_registered() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut on_disk = Vec::new();
        for area in std::fs::read_dir(root.join("sql")).unwrap() {
            let area = area.unwrap();
            if area.file_name() == "steps" {
                continue; // statements sphragis runs (refine, splits), embedded where they run
            }
            for file in std::fs::read_dir(area.path()).unwrap() {
                let file = file.unwrap();
                on_disk.push(format!("sql/{}/{}", area.file_name().to_string_lossy(), file.file_name().to_string_lossy()));
            }
        }
        on_disk.sort();
        let mut registered: Vec<String> = VIEWS.iter().map(|v| v.source.to_string()).collect();
        registered.sort();
        assert_eq!(on_disk, registered);
    }

    #[test]
    fn names_parse() {
        let v = find("refine_removals_v1").unwrap();
        assert_eq!(v.base_and_version(), Some(("refine_removals", 1)));
        assert!(VIEWS.iter().all(|v| v.base_and_version().is_some()));
    }

    #[test]
    fn views_call_no_sphragis_function() {
        for v in VIEWS {
            assert!(!v.sql.contains("sph_"), "{} calls an sph_ function", v.source);
        }
    }
}
