//! The view registry: versioned report views and table macros from `sql/`, embedded at
//! build time.
//!
//! Each view file `sql/<area>/<name>_v<N>.sql` holds one `select` (dbt style: a header
//! that gives the grain and every column). A writing open creates each view that is
//! missing or not what sphragis created (every view after a migration) as
//! `create or replace view <name>_v<N> as <select>`, a pointer view `<name>` selects
//! from the highest version, and the file's SHA-256 (CRLF → LF) is recorded in
//! `sph_views` with the code that first recorded it. A recorded view whose SQL changed
//! is refused: a released view is never edited, a change of meaning is
//! `<name>_v<N+1>` (SPEC §1 principle 2).
//!
//! A parametrised figure is a DuckDB table macro: its file holds the whole statement
//! `create or replace macro <name>_v<N>(<param> <type>, ...) as table <select>`, run as
//! written, so the formula exists once and a stock DuckDB client calls it as
//! `select * from <name>_v<N>(...)`. Macros are hashed, recorded (kind `macro`) and listed
//! like views, and get a pointer macro `<name>(...)` too. A grid view of a macro's
//! default arguments is a view file `select * from <macro>(<grid>)`.
//!
//! Architecture invariant: views read stored tables and columns only — never an `sph_`
//! function — so the file answers every view from a stock DuckDB client.

use anyhow::{Context, Result, bail};
use duckdb::Connection;
use std::collections::HashMap;

/// The catalogue `sphragis views` prints: every registered view and macro with its
/// version, SHA-256, source file and the code version that registered it.
pub const CATALOGUE: &str = "select name, kind, base_name, version, sha256, source, code_version, registered_at \
     from sph_views order by base_name, version";

/// What an embedded SQL file defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlKind {
    /// A view: the file is one `select`.
    View,
    /// A table macro: the file is one `create or replace macro <name>(...) as table ...`.
    Macro,
}

impl SqlKind {
    /// `view` or `macro`, as recorded in `sph_views.kind` and printed in stamps.
    pub fn as_str(self) -> &'static str {
        match self {
            SqlKind::View => "view",
            SqlKind::Macro => "macro",
        }
    }
}

/// One embedded view or macro file.
#[derive(Debug, Clone, Copy)]
pub struct ViewFile {
    /// Path under the source tree, e.g. `sql/review/refine_removals_v1.sql`.
    pub source: &'static str,
    /// The `select` text (with its header comment), or a macro's `create` statement.
    pub sql: &'static str,
    /// View or table macro.
    pub kind: SqlKind,
}

macro_rules! view {
    ($path:literal) => {
        ViewFile { source: $path, sql: include_str!(concat!("../../", $path)), kind: SqlKind::View }
    };
}

macro_rules! table_macro {
    ($path:literal) => {
        ViewFile { source: $path, sql: include_str!(concat!("../../", $path)), kind: SqlKind::Macro }
    };
}

/// Every view and macro, in creation order (one may read those listed before it).
pub const VIEWS: &[ViewFile] = &[
    view!("sql/review/ingest_files_v1.sql"),
    view!("sql/ingest/ingest_anomalies_v1.sql"),
    view!("sql/review/refine_removals_v1.sql"),
    view!("sql/review/refine_removals_v2.sql"),
    view!("sql/review/review_robots_v1.sql"),
    view!("sql/review/suggested_edit_share_v1.sql"),
    view!("sql/review/fence_agreement_v1.sql"),
    view!("sql/review/fence_agreement_v2.sql"),
    view!("sql/review/target_in_comment_v1.sql"),
    view!("sql/review/target_in_comment_v2.sql"),
    view!("sql/review/reconciliation_v1.sql"),
    view!("sql/review/suggested_edit_share_by_half_v1.sql"),
    view!("sql/review/label_audit_v1.sql"),
    view!("sql/review/refine_removed_examples_v1.sql"),
    view!("sql/review/fence_disagreement_examples_v1.sql"),
    view!("sql/review/target_in_comment_examples_v1.sql"),
    view!("sql/splits/split_counts_v1.sql"),
    view!("sql/splits/half_suffix_mix_v1.sql"),
    view!("sql/splits/split_criteria_v1.sql"),
    view!("sql/splits/split_examples_v1.sql"),
    view!("sql/splits/split_example_ids_v1.sql"),
    view!("sql/splits/split_examples_v2.sql"),
    table_macro!("sql/review/version_diff_at_v1.sql"),
    table_macro!("sql/review/example_moves_at_v1.sql"),
    table_macro!("sql/review/version_diff_at_v2.sql"),
    table_macro!("sql/review/example_moves_at_v2.sql"),
    table_macro!("sql/review/report_diff_at_v1.sql"),
    view!("sql/sft/sft_contract_v1.sql"),
    view!("sql/sft/sft_contract_summary_v1.sql"),
    view!("sql/sft/sft_contract_failures_v1.sql"),
    view!("sql/sft/sft_assistant_supervision_v1.sql"),
    view!("sql/sft/sft_trajectory_stats_v1.sql"),
    view!("sql/sft/sft_training_views_v1.sql"),
    view!("sql/sft/sft_tool_call_classes_v1.sql"),
    view!("sql/sft/sft_instances_v1.sql"),
    view!("sql/sft/sft_instances_v2.sql"),
    view!("sql/sft/sft_packs_v1.sql"),
    view!("sql/sft/sft_attempts_v1.sql"),
    view!("sql/sft/sft_instances_v3.sql"),
    view!("sql/sft/sft_trajectory_stats_v2.sql"),
    view!("sql/sft/sft_segment_supervision_v1.sql"),
    view!("sql/sft/sft_segment_patterns_v1.sql"),
    view!("sql/sft/sft_segment_deviations_v1.sql"),
    view!("sql/sft/sft_segment_supervision_v2.sql"),
    view!("sql/sft/sft_segment_patterns_v2.sql"),
    view!("sql/sft/sft_segment_deviations_v2.sql"),
    view!("sql/pools/sft_union_runs_v1.sql"),
    view!("sql/pools/sft_dedup_v1.sql"),
    view!("sql/pools/sft_dedup_v2.sql"),
    view!("sql/pools/sft_dedup_views_v1.sql"),
    view!("sql/pools/sft_recovery_exposure_v1.sql"),
    view!("sql/pools/sft_recovery_exposure_v2.sql"),
    table_macro!("sql/pools/sft_weight_projection_at_v1.sql"),
    view!("sql/pools/sft_weight_projection_v1.sql"),
    view!("sql/pools/sft_context_lengths_v1.sql"),
    view!("sql/pools/sft_context_lengths_v2.sql"),
    view!("sql/pools/sft_dedup_exact_pools_v1.sql"),
    view!("sql/pools/sft_dedup_priority_v1.sql"),
    view!("sql/pools/sft_dedup_priority_v2.sql"),
    view!("sql/pools/sft_membership_v1.sql"),
    view!("sql/pools/sft_membership_v2.sql"),
    view!("sql/pools/sft_recovery_concentration_v1.sql"),
    view!("sql/pools/sft_isolation_v1.sql"),
    view!("sql/pools/sft_isolation_v2.sql"),
    view!("sql/pools/sft_isolation_v3.sql"),
    table_macro!("sql/pools/sft_budget_at_v1.sql"),
    view!("sql/pools/sft_budget_v1.sql"),
    table_macro!("sql/pools/sft_budget_at_v2.sql"),
    view!("sql/pools/sft_budget_v2.sql"),
    view!("sql/pools/sft_outcome_distribution_v1.sql"),
    view!("sql/pools/sft_outcome_distribution_v2.sql"),
    view!("sql/pools/sft_thinking_v1.sql"),
    view!("sql/pools/sft_thinking_v2.sql"),
    view!("sql/pools/sft_supervised_tools_v1.sql"),
    view!("sql/pools/sft_test_runs_heuristic_v1.sql"),
    view!("sql/pools/sft_recovery_windows_heuristic_v1.sql"),
    view!("sql/pools/sft_recovery_windows_heuristic_v2.sql"),
    view!("sql/pools/sft_final_report_v1.sql"),
    view!("sql/pools/sft_expected_failures_heuristic_v1.sql"),
    view!("sql/pools/sft_instance_detail_v1.sql"),
    view!("sql/pools/sft_instance_detail_v2.sql"),
    view!("sql/pools/sft_instance_detail_v3.sql"),
    view!("sql/pools/sft_instance_detail_v4.sql"),
    view!("sql/pools/sft_samples_outcomes_v1.sql"),
    view!("sql/pools/sft_report_only_v1.sql"),
    view!("sql/pools/sft_position_exposure_v1.sql"),
    table_macro!("sql/sft/sft_view_positions_at_v1.sql"),
    table_macro!("sql/pools/sft_truncation_views_at_v1.sql"),
    table_macro!("sql/pools/sft_truncation_at_v1.sql"),
    view!("sql/pools/sft_truncation_v1.sql"),
    view!("sql/pools/sft_truncation_views_v1.sql"),
    view!("sql/pools/sft_truncation_over_v1.sql"),
    view!("sql/eval/eval_instances_v1.sql"),
    view!("sql/eval/eval_runs_v1.sql"),
    view!("sql/eval/eval_run_instance_ids_v1.sql"),
    view!("sql/eval/eval_symptoms_v1.sql"),
    view!("sql/eval/eval_pair_instances_v1.sql"),
    view!("sql/eval/eval_pairs_v1.sql"),
    view!("sql/eval/eval_repeat_instances_v1.sql"),
    view!("sql/eval/eval_repeats_v1.sql"),
    view!("sql/eval/eval_pass_at_k_v1.sql"),
    view!("sql/eval/eval_runs_v2.sql"),
    view!("sql/eval/eval_repeat_instances_v2.sql"),
    view!("sql/eval/eval_repeats_v2.sql"),
    view!("sql/eval/eval_pass_at_k_v2.sql"),
    view!("sql/eval/eval_instances_v2.sql"),
    view!("sql/eval/eval_runs_v3.sql"),
    view!("sql/eval/eval_run_populations_v1.sql"),
    view!("sql/eval/eval_pair_instances_v2.sql"),
    view!("sql/eval/eval_pairs_v2.sql"),
    table_macro!("sql/eval/eval_pair_bootstrap_at_v1.sql"),
    view!("sql/eval/eval_pair_bootstrap_v1.sql"),
    view!("sql/eval/eval_repeat_instances_v3.sql"),
    view!("sql/eval/eval_pass_k_v1.sql"),
    view!("sql/eval/eval_item_analysis_v1.sql"),
    view!("sql/eval/eval_grader_flakes_v1.sql"),
    view!("sql/eval/eval_instance_repos_v1.sql"),
    view!("sql/eval/eval_runs_clustered_v1.sql"),
    view!("sql/eval/eval_pair_clustered_v1.sql"),
    view!("sql/checks/check_ingest_v1.sql"),
    view!("sql/checks/check_review_v1.sql"),
    view!("sql/checks/check_sft_contract_v1.sql"),
    view!("sql/checks/check_sft_pools_v1.sql"),
    view!("sql/checks/check_sft_packs_v1.sql"),
    view!("sql/checks/check_sft_attempts_v1.sql"),
    table_macro!("sql/checks/check_sft_truncation_at_v1.sql"),
    view!("sql/checks/check_eval_v1.sql"),
    table_macro!("sql/checks/check_findings_at_v1.sql"),
    view!("sql/checks/check_findings_v1.sql"),
    view!("sql/checks/check_latest_v1.sql"),
    view!("sql/checks/check_history_v1.sql"),
    view!("sql/checks/check_changes_v1.sql"),
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

    /// The grain key the header declares (`-- Grain key: version, org.`), as column
    /// names in order, e.g. `["version", "org"]`; `None` when the header has no such line.
    pub fn grain_key(&self) -> Option<Vec<&'static str>> {
        let line =
            self.sql.lines().take_while(|l| l.starts_with("--")).find_map(|l| l.strip_prefix("-- Grain key:"))?;
        Some(line.trim().trim_end_matches('.').split(',').map(str::trim).filter(|k| !k.is_empty()).collect())
    }

    /// A macro's parameter list as written, e.g. `weights double[]`, and its parameter
    /// names, e.g. `["weights"]`. `None` for a view, or a macro file that does not
    /// declare `macro <its name>(...)`.
    pub fn macro_parameters(&self) -> Option<(&'static str, Vec<&'static str>)> {
        if self.kind != SqlKind::Macro {
            return None;
        }
        let lower = self.sql.to_ascii_lowercase();
        let head = format!("macro {}(", self.name());
        let start = lower.find(&head)? + head.len();
        let mut depth = 1usize;
        let mut end = None;
        for (i, c) in self.sql[start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(start + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let list = &self.sql[start..end?];
        let names = split_top_level(list).into_iter().filter_map(|p| p.split_whitespace().next()).collect();
        Some((list, names))
    }
}

/// Splits `text` at commas outside brackets and parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    if !text[from..].trim().is_empty() {
        out.push(text[from..].trim());
    }
    out
}

/// Looks a view up by its versioned name.
pub fn find(name: &str) -> Option<&'static ViewFile> {
    VIEWS.iter().find(|v| v.name() == name)
}

/// What the file holds of the views and macros, read once: three queries, whatever the
/// number of views (a query of `duckdb_views()` renders every view's SQL, so a query per
/// view made every open quadratic in the number of views: about 1 CPU s with 150).
struct Catalog {
    /// `sph_views` rows by name.
    recorded: HashMap<String, Recorded>,
    /// `duckdb_views()`: view name → the SQL DuckDB stores for it.
    views: HashMap<String, String>,
    /// `duckdb_functions()`: table macro name → its definitions, sorted and joined by `\n`.
    macros: HashMap<String, String>,
    /// `duckdb_functions()`: table macro name → its parameter names in order, joined by
    /// `, ` (a macro's definition does not show them: the same body with its parameters
    /// swapped answers other figures).
    parameters: HashMap<String, String>,
    /// Macros stored in this file under the name of a DuckDB function or of a sphragis
    /// rule function (`sph_*`): DuckDB resolves the file's macro first, so it would
    /// replace that function in every view and in refine (`count_star`, `list_sum`,
    /// `sph_dedup_key`, or `duckdb_views` itself), in any case (`GREATEST`): each with the
    /// statement that drops it (schema-qualified and quoted: `drop macro "main"."+"`).
    shadowing: Vec<(String, String)>,
}

impl Catalog {
    fn read(conn: &Connection) -> Result<Self> {
        // The file's macros and which of them shadow a function, in one scan of
        // duckdb_functions() (some 3,000 rows of DuckDB's own functions: each scan costs
        // about 10 ms on every open). Every function here is named by its schema and is a
        // built-in function, not one of DuckDB's own macros (`array_to_string` is one, and
        // calls `len` unqualified), so no macro of the file replaces any of them. DuckDB
        // resolves names in any case: `GREATEST` shadows `greatest`.
        let (mut shadowing, mut macros, mut parameters) = (Vec::new(), HashMap::new(), HashMap::new());
        let mut stmt = conn.prepare(
            "with f as materialized (select function_name, function_type, schema_name, database_name, \
                 macro_definition, parameters from system.main.duckdb_functions()), \
             mine as (select * from f where database_name = system.main.current_database() \
                 and function_type in ('macro', 'table_macro')) \
             select true, function_name, schema_name, function_type from mine \
             where system.main.starts_with(system.main.lower(function_name), 'sph_') \
                 or system.main.lower(function_name) in \
                     (select system.main.lower(function_name) from f where database_name = 'system') \
             group by function_name, schema_name, function_type \
             union all \
             select false, function_name, \
                 system.main.string_agg(macro_definition, '\n' order by macro_definition), \
                 system.main.string_agg(cast(parameters as varchar), ' | ' order by macro_definition) \
             from mine where function_type = 'table_macro' and schema_name = 'main' group by function_name",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let name: String = r.get(1)?;
            if r.get::<_, bool>(0)? {
                let (schema, kind): (String, String) = (r.get(2)?, r.get(3)?);
                let table = if kind == "table_macro" { "table " } else { "" };
                let drop = format!("drop macro {table}{}.{}", super::identifier(&schema), super::identifier(&name));
                shadowing.push((name, drop));
            } else {
                macros.insert(name.clone(), r.get(2)?);
                // `[a, b] | [c]` (a list cast to text, per definition) → `a, b | c`
                let lists: String = r.get(3)?;
                let names: Vec<&str> = lists
                    .split(" | ")
                    .map(|l| l.strip_prefix('[').and_then(|l| l.strip_suffix(']')).unwrap_or(l))
                    .collect();
                parameters.insert(name, names.join(" | "));
            }
        }
        shadowing.sort();
        let mut recorded = HashMap::new();
        let mut stmt =
            conn.prepare("select name, sha256, code_version, stored_sha256 from sph_views").map_err(|e| {
                if e.to_string().contains("sph_views does not exist") {
                    anyhow::anyhow!(
                        "the table sph_views is missing (another client dropped it): it records every view and \
                         macro sphragis created in this file with the SHA-256 of its definition, and without it no \
                         figure can be traced to the view that made it, so sphragis does not open the file. Restore \
                         the file from a copy, or load its inputs again into a new file (`sphragis --db NEW.duckdb \
                         load ...`; they are listed in its table ingest_log, readable with any DuckDB client)"
                    )
                } else {
                    e.into()
                }
            })?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            recorded.insert(
                r.get::<_, String>(0)?,
                Recorded { sha256: r.get(1)?, code_version: r.get(2)?, stored_sha256: r.get(3)? },
            );
        }
        let pairs = |sql: &str| -> Result<HashMap<String, String>> {
            let mut stmt = conn.prepare(sql)?;
            let map = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?;
            Ok(map)
        };
        let views = pairs(
            "select view_name, system.main.string_agg(sql, '\n') from system.main.duckdb_views() \
             where schema_name = 'main' and database_name = system.main.current_database() group by view_name",
        )?;
        Ok(Self { recorded, views, macros, parameters, shadowing })
    }

    /// Refuses a file holding a macro that replaces a function ([`Catalog::shadowing`]).
    fn refuse_shadowing(&self) -> Result<()> {
        if self.shadowing.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = self.shadowing.iter().map(|(name, _)| name.as_str()).collect();
        let drops: Vec<String> = self.shadowing.iter().map(|(_, drop)| format!("`{drop}`")).collect();
        bail!(
            "this file holds a macro named like a DuckDB or sphragis function ({}), created outside sphragis: \
             DuckDB would call it instead of that function in every view and in refine, and the figures \
             would not be what the stamps name. Drop it with a DuckDB client ({}) and run the command again",
            names.join(", "),
            drops.join("; ")
        )
    }

    /// Whether the parameters DuckDB holds for macro `name` are `expected` (names, in
    /// order); true for a view.
    fn parameters_are(&self, kind: SqlKind, name: &str, expected: Option<&[&str]>) -> bool {
        match (kind, expected) {
            (SqlKind::Macro, Some(names)) => self.parameters.get(name).map(String::as_str) == Some(&names.join(", ")),
            _ => true,
        }
    }

    /// The definition DuckDB stores for a view or macro named `name`, if any.
    fn stored(&self, kind: SqlKind, name: &str) -> Option<&str> {
        match kind {
            SqlKind::View => self.views.get(name),
            SqlKind::Macro => self.macros.get(name),
        }
        .map(String::as_str)
    }

    /// SHA-256 of the definition DuckDB stores for `view` in this file (the view's SQL,
    /// or the macro's definitions), `None` when no such view or macro exists.
    fn stored_sha256(&self, view: &ViewFile) -> Option<String> {
        self.stored(view.kind, view.name()).map(|t| crate::hash::sha256_hex(t.as_bytes()))
    }

    /// Whether `view` is recorded with this binary's SHA-256 and DuckDB holds exactly the
    /// definition sphragis created from it. Errors: recorded with another SHA-256 (the
    /// file changed meaning without a new version).
    fn is_current(&self, view: &ViewFile) -> Result<bool> {
        match self.recorded.get(view.name()) {
            Some(r) if r.sha256 != view.sha256() => bail!(changed_message(view, r)),
            Some(r) => Ok(r.stored_sha256.is_some()
                && r.stored_sha256 == self.stored_sha256(view)
                && self.parameters_are(view.kind, view.name(), view.macro_parameters().map(|p| p.1).as_deref())),
            None => Ok(false),
        }
    }
}

/// Every pointer: `(pointer name, the highest version of that view or macro)`.
fn pointers() -> Result<Vec<(&'static str, &'static ViewFile)>> {
    let mut latest: Vec<(&str, i32, &ViewFile)> = Vec::new();
    for view in VIEWS {
        let (base, version) =
            view.base_and_version().with_context(|| format!("{} is not named <view>_v<N>.sql", view.source))?;
        match latest.iter_mut().find(|(b, _, _)| *b == base) {
            Some(entry) if entry.1 < version => *entry = (base, version, view),
            Some(_) => {}
            None => latest.push((base, version, view)),
        }
    }
    Ok(latest.into_iter().map(|(base, _, view)| (base, view)).collect())
}

/// The statement that creates pointer `base` over `view`, and the definition DuckDB
/// stores for it (its `sql` for a view, its `macro_definition` for a macro).
fn pointer_definition(base: &str, view: &ViewFile) -> (String, String) {
    let name = view.name();
    match view.macro_parameters() {
        None => (
            format!("create or replace view {base} with (defer_binding) as select * from {name}"),
            format!("CREATE VIEW {base} AS SELECT * FROM {name};"),
        ),
        Some((list, names)) => {
            let args = names.join(", ");
            (
                format!("create or replace macro {base}({list}) as table select * from {name}({args})"),
                format!("SELECT * FROM {name}({args})"),
            )
        }
    }
}

/// Whether pointer `base` over `view` is what sphragis creates: its stored definition
/// and, for a macro, its parameters.
fn pointer_is_current(catalog: &Catalog, base: &str, view: &ViewFile) -> bool {
    let parameters = view.macro_parameters().map(|p| p.1);
    catalog.stored(view.kind, base) == Some(pointer_definition(base, view).1.as_str())
        && catalog.parameters_are(view.kind, base, parameters.as_deref())
}

/// Checks, without changing anything, that every view of this binary is recorded with
/// its SHA-256, that DuckDB holds the definition sphragis created from it, and that every
/// pointer selects from its highest version. Errors name the first view that is
/// missing or differs.
pub fn check_current(conn: &Connection) -> Result<()> {
    let catalog = Catalog::read(conn)?;
    catalog.refuse_shadowing()?;
    for view in VIEWS {
        if catalog.is_current(view)? {
            continue;
        }
        let expected = view.macro_parameters().map(|p| p.1);
        if !catalog.parameters_are(view.kind, view.name(), expected.as_deref()) {
            bail!(
                "macro {name} in this file was changed outside sphragis: its parameters are ({now}), sphragis \
                 created it from {src} with ({want}). Its rows would not be what the stamp names; run a writing \
                 command (`sphragis --db FILE init`) to re-create the views and macros from this sphragis's files",
                name = view.name(),
                now = catalog.parameters.get(view.name()).map_or("none", String::as_str),
                src = view.source,
                want = expected.unwrap_or_default().join(", "),
            );
        }
        let Some(r) = catalog.recorded.get(view.name()) else {
            bail!(
                "{} {} is not in this file yet; run `sphragis init` (or any writing command) to add it",
                view.kind.as_str(),
                view.name()
            );
        };
        bail!(
            "{kind} {name} in this file was changed outside sphragis: its stored definition is not the \
             one sphragis created from {src} (recorded sha256 {was}, now {now}). Its rows would not be \
             what the stamp names; run a writing command (`sphragis --db FILE init`) to re-create the \
             views and macros from this sphragis's files",
            kind = view.kind.as_str(),
            name = view.name(),
            src = view.source,
            was = r.stored_sha256.as_deref().unwrap_or("(none)"),
            now = catalog.stored_sha256(view).as_deref().unwrap_or("(missing)"),
        );
    }
    for (base, view) in pointers()? {
        if !pointer_is_current(&catalog, base, view) {
            bail!(
                "{kind} {base} in this file was changed outside sphragis: it should select from {name} \
                 ({src}), the highest version. Run a writing command (`sphragis --db FILE init`) to re-create \
                 the views and macros from this sphragis's files",
                kind = view.kind.as_str(),
                name = view.name(),
                src = view.source,
            );
        }
    }
    Ok(())
}

/// What `sph_views` recorded for one name.
struct Recorded {
    sha256: String,
    code_version: Option<String>,
    stored_sha256: Option<String>,
}

/// The refusal for a database whose recorded view differs from this binary's file: which
/// view, which code recorded it, and the two ways out.
fn changed_message(view: &ViewFile, was: &Recorded) -> String {
    let (base, version) = view.base_and_version().unwrap_or((view.name(), 0));
    // "sphragis 0.2.0" of "sphragis 0.2.0 (git ...)": a released file never changes
    // within a release, so the same release on both sides means no release wrote that record
    let release = |code: &str| code.split(" (git").next().unwrap_or(code).to_owned();
    let same_release = was.code_version.as_deref().map(release) == Some(release(crate::CODE_VERSION));
    let why = if same_release {
        format!(
            " Both are {}, whose SQL files do not change: the record was written by an unreleased build or \
             edited by another client.",
            release(crate::CODE_VERSION)
        )
    } else {
        String::new()
    };
    format!(
        "{kind} {name} in this database was recorded with sha256 {old} by {by}, but this sphragis ({code}) \
         has {src} with sha256 {new}: the {kind} changed meaning without a new version. Either open this \
         file with the sphragis that made it, or load the inputs again into a new database file with this \
         one (`sphragis --db NEW.duckdb load ...`, listed by `sphragis report inputs`). (A change of \
         meaning belongs in a new file {base}_v{next}.sql.){why}",
        kind = view.kind.as_str(),
        name = view.name(),
        old = was.sha256,
        by = was.code_version.as_deref().unwrap_or("an earlier sphragis"),
        code = crate::CODE_VERSION,
        src = view.source,
        new = view.sha256(),
        next = version + 1,
    )
}

/// Creates the views, macros and pointers that are missing or not what sphragis
/// created, and records new ones in `sph_views`. With `recreate_all` (a migration
/// changed the tables this call), every view and macro is re-created. A file that is up
/// to date costs three queries.
///
/// Views and pointers are created `with (defer_binding)`: DuckDB parses each one and
/// binds it when a query first reads it, instead of binding every view (and, for a view
/// over views, all of those again) at creation — about 0.9 s on every new file. The
/// definition DuckDB stores is the same either way, so files made before keep their
/// records; the test `every_view_and_pointer_binds_on_a_new_file` binds them all.
///
/// Returns what was re-created because another client had changed or dropped it: each
/// view or macro sphragis had recorded whose definition in the file was no longer the one
/// it created (`view split_counts_v1 (sql/splits/split_counts_v1.sql)`), in registry
/// order, for the caller to say so (a writing command repairs such a file; a read-only
/// one refuses it, [`check_current`]).
///
/// Errors: a view recorded in the database has a different SHA-256 than the embedded
/// file (its meaning changed without a new version), or DuckDB rejects the SQL.
pub fn register(conn: &Connection, recreate_all: bool) -> Result<Vec<String>> {
    let before = Catalog::read(conn)?;
    before.refuse_shadowing()?;
    let mut views = Vec::new();
    let mut repaired = Vec::new();
    for view in VIEWS {
        let current = before.is_current(view)?;
        if !current && before.recorded.get(view.name()).is_some_and(|r| r.stored_sha256.is_some()) {
            repaired.push(format!("{} {} ({})", view.kind.as_str(), view.name(), view.source));
        }
        if recreate_all || !current {
            views.push(view);
        }
    }
    let pointers: Vec<_> = pointers()?
        .into_iter()
        .filter(|(base, view)| recreate_all || !pointer_is_current(&before, base, view))
        .collect();
    if views.is_empty() && pointers.is_empty() {
        return Ok(repaired);
    }
    // One transaction: the views, macros, pointers and their records land together or not
    // at all, and DuckDB commits the catalogue once.
    super::in_transaction(conn, || create_stale(conn, &before, &views, &pointers))?;
    Ok(repaired)
}

/// [`register`]'s work inside its transaction: creates `views` (in registry order) and
/// `pointers`, then records the views' stored definitions.
fn create_stale(
    conn: &Connection,
    before: &Catalog,
    views: &[&ViewFile],
    pointers: &[(&str, &ViewFile)],
) -> Result<()> {
    for view in views {
        let name = view.name();
        match view.kind {
            SqlKind::View => conn
                .execute_batch(&format!("create or replace view {name} with (defer_binding) as\n{}", view.sql))
                .with_context(|| format!("creating view {name} from {}", view.source))?,
            SqlKind::Macro => {
                view.macro_parameters().with_context(|| {
                    format!("{} does not declare `create or replace macro {name}(...)`", view.source)
                })?;
                conn.execute_batch(view.sql).with_context(|| format!("creating macro {name} from {}", view.source))?
            }
        }
    }
    for (base, view) in pointers {
        let (create, _) = pointer_definition(base, view);
        conn.execute_batch(&create).with_context(|| format!("creating {base} over {}", view.name()))?;
    }
    if views.is_empty() {
        return Ok(());
    }
    // What DuckDB stored for the views just created, read once for all of them.
    let after = Catalog::read(conn)?;
    let mut update = conn.prepare("update sph_views set stored_sha256 = ? where name = ?")?;
    // the new records in one statement (a new file: some 150 rows, one round trip)
    let mut rows: Vec<Box<dyn duckdb::ToSql>> = Vec::new();
    for view in views {
        let name = view.name();
        let stored = after.stored_sha256(view);
        if before.recorded.contains_key(name) {
            update.execute(duckdb::params![stored, name])?;
        } else {
            let (base, version) =
                view.base_and_version().with_context(|| format!("{} is not named <view>_v<N>.sql", view.source))?;
            rows.push(Box::new(name));
            rows.push(Box::new(base));
            rows.push(Box::new(version));
            rows.push(Box::new(view.sha256()));
            rows.push(Box::new(view.source));
            rows.push(Box::new(view.kind.as_str()));
            rows.push(Box::new(crate::CODE_VERSION));
            rows.push(Box::new(stored));
        }
    }
    if !rows.is_empty() {
        let tuples = vec!["(?, ?, ?, ?, ?, ?, ?, ?)"; rows.len() / 8].join(", ");
        conn.execute(
            &format!(
                "insert into sph_views (name, base_name, version, sha256, source, kind, code_version, stored_sha256) \
                 values {tuples}"
            ),
            duckdb::params_from_iter(rows.iter()),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
