//! Corpus versions and refine (SPEC §2.2).
//!
//! A version is a named, recorded, ordered set of rules applied to the built examples.
//! Refine evaluates every rule function over every comment and example (the SQL in
//! `sql/steps/`), stores the verdicts as plain columns in `refine_comments` and
//! `refine_examples`, and attributes each removed example to the first rule that
//! removes it. It always starts from the built examples, so a re-refine from disk gives
//! the same result; the base version only names what reconciliation compares against.

use anyhow::{Context, Result, bail};
use duckdb::{Connection, OptionalExt, params};
use std::fmt;

/// The refine rules, in the order SPEC §2.2 applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// Comments by service accounts are dropped; an example left with none is removed.
    ServiceAccount,
    /// Comments an analyzer wrote (Gerrit robot comments, `robot_id`) are dropped; an
    /// example left with only robots' comments is removed (issue 28).
    RobotComment,
    /// An example repeating its predecessor on a rebased patch set.
    RebaseSuccessor,
    /// A comment opens a strict suggestion fence (rule version
    /// [`SUGGESTION_RULE`](crate::rules::fence::SUGGESTION_RULE)) or carries a structured
    /// suggested fix (Gerrit's `fix_suggestions`): the target is the reviewer's edit.
    SuggestedEdit,
    /// A comment is Gerrit's one-click `Fix applied.` reply.
    AppliedFix,
    /// Same dedup key as an earlier surviving example.
    Duplicate,
}

impl Rule {
    /// Every rule, in SPEC order.
    pub const ALL: [Rule; 6] = [
        Rule::ServiceAccount,
        Rule::RobotComment,
        Rule::RebaseSuccessor,
        Rule::SuggestedEdit,
        Rule::AppliedFix,
        Rule::Duplicate,
    ];

    /// The name stored in `removed_reason` and accepted on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Rule::ServiceAccount => "service_account",
            Rule::RobotComment => "robot_comment",
            Rule::RebaseSuccessor => "rebase_successor",
            Rule::SuggestedEdit => "suggested_edit",
            Rule::AppliedFix => "applied_fix",
            Rule::Duplicate => "duplicate",
        }
    }

    /// Parses a comma-separated list (`all` alone for every rule); the result is in SPEC
    /// order whatever the order given.
    ///
    /// Errors: an unknown name (every unknown one is named, e.g. `dedup` in `all,dedup`),
    /// `all` combined with other names, or a repeated name.
    pub fn parse_list(text: &str) -> Result<Vec<Rule>> {
        let names: Vec<&str> = text.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        let unknown: Vec<&str> =
            names.iter().copied().filter(|n| *n != "all" && !Rule::ALL.iter().any(|r| r.name() == *n)).collect();
        if !unknown.is_empty() {
            let known: Vec<_> = Rule::ALL.iter().map(|r| r.name()).collect();
            let listed: Vec<String> = unknown.iter().map(|n| format!("{n:?}")).collect();
            bail!(
                "unknown rule{} {}; known rules: {} (or all)",
                if unknown.len() > 1 { "s" } else { "" },
                listed.join(", "),
                known.join(", ")
            );
        }
        if names.contains(&"all") {
            if names.len() > 1 {
                bail!("all names every rule; give it alone or list the rules");
            }
            return Ok(Rule::ALL.to_vec());
        }
        let mut rules = Vec::new();
        for name in names {
            let rule = Rule::ALL.into_iter().find(|r| r.name() == name).expect("checked above");
            if rules.contains(&rule) {
                bail!("rule {name:?} is listed twice");
            }
            rules.push(rule);
        }
        rules.sort();
        Ok(rules)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What to refine.
#[derive(Debug, Clone)]
pub struct RefineOptions {
    /// Name of the new version, e.g. `v3`: letters, digits, `.`, `_`, `-`.
    pub version: String,
    /// The version reconciliation compares against; it must exist.
    pub base: Option<String>,
    /// Rules to apply (any order; applied in SPEC order).
    pub rules: Vec<Rule>,
    /// `target_in_comment` threshold in characters (SPEC default 20).
    pub min_target_chars: u32,
}

/// Counts a refine produced (the views give the breakdowns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefineSummary {
    pub version: String,
    pub built: i64,
    pub removed: i64,
    pub kept: i64,
    /// True when an unfrozen version of the same name was replaced.
    pub replaced: bool,
}

const COMMENTS_SQL: &str = include_str!("../../sql/steps/comments_v2.sql");
const EXAMPLES_SQL: &str = include_str!("../../sql/steps/examples_v2.sql");

/// Checks a version name: letters, digits, `.`, `_` or `-`, not empty, not starting
/// with `-` (every command that names a version, e.g. the `report removals --version -x`
/// that refine suggests, would read it as an option), and not dots alone (`.`, `..`).
///
/// Errors: the name breaks one of those rules.
pub fn check_version_name(name: &str) -> Result<()> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
        bail!("version name {name:?} must be letters, digits, '.', '_' or '-'");
    }
    if name.starts_with('-') {
        bail!("version name {name:?} must not start with '-': commands naming it would read it as an option");
    }
    if name.chars().all(|c| c == '.') {
        bail!("version name {name:?} must hold a letter or digit: '.' and '..' name folders in a path");
    }
    Ok(())
}

/// Refines the built examples into version `opts.version`, in one transaction.
///
/// Errors: an invalid version name, a frozen version of that name, a missing base
/// version, a base built (directly or through its own bases) on the version being refined
/// ([`circle_of_bases`]), no built examples, or a SQL failure; the database is then
/// unchanged.
pub fn refine(conn: &Connection, opts: &RefineOptions) -> Result<RefineSummary> {
    refine_with(conn, opts, crate::db::ROW_GROUP_ROWS)
}

/// [`refine`], running the rule statements in 2,048-row tasks
/// ([`crate::db::fine_grained_tasks`]) when fewer than `fine_below` examples are built:
/// refine's rule functions then use every core on a corpus smaller than one DuckDB row
/// group (on the ×10 review benchmark the two statements took 0.16 s instead of 0.20 s).
fn refine_with(conn: &Connection, opts: &RefineOptions, fine_below: i64) -> Result<RefineSummary> {
    let name = &opts.version;
    check_version_name(name)?;
    if opts.base.as_deref() == Some(name.as_str()) {
        bail!("version {name} cannot be its own base");
    }
    let frozen: Option<Option<String>> = conn
        .query_row("select frozen_at::varchar from corpus_versions where version = ?", [name], |r| r.get(0))
        .optional()?;
    if let Some(Some(at)) = &frozen {
        bail!("version {name} was frozen at {at} and cannot be refined again; refine a new version");
    }
    if frozen.is_some() {
        let rule: Option<String> =
            conn.query_row("select suggestion_rule from corpus_versions where version = ?", [name], |r| r.get(0))?;
        let current = crate::rules::fence::SUGGESTION_RULE;
        if rule.as_deref() != Some(current) {
            bail!(
                "version {name} was refined with suggestion rule {}; this sphragis applies {current}: \
                 refine a new version (e.g. --version {name}-{current} --base {name}) so reconciliation shows what the new rule moves",
                rule.as_deref().unwrap_or("(unrecorded)")
            );
        }
        let frozen_on_it: Option<String> = conn
            .query_row(
                "select version from corpus_versions where base_version = ? and frozen_at is not null limit 1",
                [name],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(other) = frozen_on_it {
            bail!(
                "version {name} is the base of frozen version {other}; refining it again would change {other}'s reconciliation"
            );
        }
        let splits: i64 = conn.query_row("select count(*) from split_runs where version = ?", [name], |r| r.get(0))?;
        if splits > 0 {
            bail!("version {name} has computed splits; refine a new version instead of changing it under them");
        }
    }
    if let Some(base) = &opts.base {
        let exists: i64 =
            conn.query_row("select count(*) from corpus_versions where version = ?", [base], |r| r.get(0))?;
        if exists == 0 {
            bail!("base version {base} does not exist; refine it first");
        }
        if let Some(chain) = circle_of_bases(conn, name, base)? {
            bail!(
                "version {name} cannot be refined on base {base}: {base} is built on {name} ({}), so the bases \
                 would go round in a circle and no version would reconcile with its base; choose another base \
                 (or none)",
                chain.join(" on ")
            );
        }
    }
    if opts.rules.is_empty() {
        bail!("no rules given; name them, or use all");
    }
    let built: i64 = conn.query_row("select count(*) from review_examples", [], |r| r.get(0))?;
    if built == 0 {
        bail!("no review examples are loaded; run `sphragis load` first");
    }
    let on = |rule: Rule| opts.rules.contains(&rule);
    let rules: Vec<String> = opts.rules.iter().map(|r| r.name().to_string()).collect();
    // Rule names come from the enum, never from input: safe to inline as a list literal.
    let rule_list = format!("[{}]::varchar[]", rules.iter().map(|r| format!("'{r}'")).collect::<Vec<_>>().join(", "));
    // Verdicts need the content of sealed examples too (counts include them): seal what is
    // pending, then read content through views that reach into the companion.
    crate::db::sealed::seal(conn)?;
    crate::db::sealed::with_content(conn, true, || {
        let _tasks = if built < fine_below { Some(crate::db::fine_grained_tasks(conn)?) } else { None };
        crate::db::in_transaction(conn, || -> Result<RefineSummary> {
            conn.execute("delete from refine_comments where version = ?", [name])?;
            conn.execute("delete from refine_examples where version = ?", [name])?;
            conn.execute("delete from corpus_versions where version = ?", [name])?;
            conn.execute(
            &format!(
                "insert into corpus_versions (version, base_version, rules, min_target_chars, rules_code, inputs_up_to, created_at, suggestion_rule) \
                 values (?, ?, {rule_list}, ?, ?, (select coalesce(max(file_id), 0) from ingest_log), current_timestamp, ?)"
            ),
            params![name, opts.base, opts.min_target_chars, crate::RULES_CODE, crate::rules::fence::SUGGESTION_RULE],
        )?;
            conn.execute(
                COMMENTS_SQL,
                params![name, opts.min_target_chars, on(Rule::ServiceAccount), on(Rule::RobotComment)],
            )
            .context("refine step sql/steps/comments_v2.sql")?;
            conn.execute(
                EXAMPLES_SQL,
                params![
                    name,
                    on(Rule::ServiceAccount),
                    on(Rule::RobotComment),
                    on(Rule::RebaseSuccessor),
                    on(Rule::SuggestedEdit),
                    on(Rule::AppliedFix),
                    on(Rule::Duplicate)
                ],
            )
            .context("refine step sql/steps/examples_v2.sql")?;
            let (removed, kept): (i64, i64) = conn.query_row(
            "select count(*) filter (where not kept), count(*) filter (where kept) from refine_examples where version = ?",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
            crate::db::log(
                conn,
                "refine",
                &format!("{name} rules {} base {}", rules.join(","), opts.base.as_deref().unwrap_or("-")),
            )?;
            Ok(RefineSummary { version: name.clone(), built, removed, kept, replaced: frozen.is_some() })
        })
    })
}

/// The chain of bases from `base` back to `version`, when `base` is built on `version`
/// directly or through its own bases (`["v4", "v3"]`: v4 is refined on v3); `None` when
/// the chain ends without meeting it. Refining `version` on `base` would then close a
/// circle (v3 on v4, v4 on v3): each version's reconciliation is computed against a base
/// that was itself refined from it, and none reconciles. A circle already in the file
/// that does not pass through `version` ends the walk.
///
/// Errors: DuckDB fails reading `corpus_versions`.
pub fn circle_of_bases(conn: &Connection, version: &str, base: &str) -> Result<Option<Vec<String>>> {
    let mut chain = vec![base.to_string()];
    loop {
        let last = chain.last().expect("the chain starts with the base");
        let next: Option<String> = conn
            .query_row("select base_version from corpus_versions where version = ?", [last], |r| r.get(0))
            .optional()?
            .flatten();
        match next {
            Some(next) if next == version => {
                chain.push(next);
                return Ok(Some(chain));
            }
            Some(next) if !chain.contains(&next) => chain.push(next),
            _ => return Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version named `-x` was accepted, and the `--version -x` every later command needs
    /// (refine prints `sphragis report removals --version -x`) is a usage error (found by a
    /// fresh tester).
    #[test]
    fn version_name_starting_with_a_dash_is_refused() {
        let err = check_version_name("-x").unwrap_err().to_string();
        assert!(err.contains("must not start with '-'"), "{err}");
        assert!(check_version_name("v3-fix").is_ok() && check_version_name("v3.1_b").is_ok());
        assert!(check_version_name("v 3").unwrap_err().to_string().contains("letters, digits"));
        assert!(check_version_name("").is_err());
    }

    /// `.` and `..` passed the character rule; as a path component they name folders.
    #[test]
    fn version_name_of_dots_alone_is_refused() {
        for name in [".", "..", "..."] {
            let err = check_version_name(name).unwrap_err().to_string();
            assert!(err.contains("must hold a letter or digit"), "{name}: {err}");
        }
        assert!(check_version_name(".v3").is_ok() && check_version_name("v3..1").is_ok());
    }

    /// Refine runs its rule statements in 2,048-row tasks on a corpus smaller than a DuckDB
    /// row group (`db::fine_grained_tasks`). On a corpus of several such tasks, with twins
    /// of every example spread over all of them (the duplicate rule's window functions
    /// partition across task boundaries), every verdict and reason must be the one the
    /// statements give run by row group, on one thread.
    #[test]
    fn fine_grained_tasks_give_the_verdicts_of_row_group_tasks() {
        use crate::ingest::InputKind;
        let conn = Connection::open_in_memory().unwrap();
        crate::db::prepare(&conn).unwrap();
        let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/review");
        crate::review::load::load(&conn, InputKind::Orgs, &samples.join("orgs.json"), None, &mut |_| {}).unwrap();
        let lines = std::fs::read_to_string(samples.join("examples.jsonl")).unwrap();
        let mut copies = String::new();
        for copy in 0..400 {
            for line in lines.lines().filter(|l| !l.trim().is_empty()) {
                let mut example: serde_json::Value = serde_json::from_str(line).unwrap();
                let id = format!("{}-{copy}", example["example_id"].as_str().unwrap());
                example["example_id"] = id.into();
                for comment in example["comments"].as_array_mut().unwrap() {
                    let id = format!("{}-{copy}", comment["comment_id"].as_str().unwrap());
                    comment["comment_id"] = id.into();
                }
                copies.push_str(&example.to_string());
                copies.push('\n');
            }
        }
        let file = std::env::temp_dir().join(format!("sphragis-fine-tasks-{}.jsonl", std::process::id()));
        std::fs::write(&file, copies).unwrap();
        let loaded = crate::review::load::load(&conn, InputKind::Examples, &file, None, &mut |_| {});
        std::fs::remove_file(&file).unwrap();
        loaded.unwrap();
        let options = |version: &str| RefineOptions {
            version: version.into(),
            base: None,
            rules: Rule::ALL.to_vec(),
            min_target_chars: 20,
        };
        let split = refine_with(&conn, &options("split"), i64::MAX).unwrap();
        let whole = refine_with(&conn, &options("whole"), 0).unwrap();
        assert!(split.built > 3 * 2048, "{} examples", split.built);
        assert_eq!((split.built, split.removed, split.kept), (whole.built, whole.removed, whole.kept));
        assert!(split.removed > split.built / 2, "twins removed: {split:?}");
        for table in ["refine_examples", "refine_comments"] {
            let differ: i64 = conn
                .query_row(
                    &format!(
                        "select count(*) from (
                             (select * exclude (version) from {table} where version = 'split'
                              except all select * exclude (version) from {table} where version = 'whole')
                             union all
                             (select * exclude (version) from {table} where version = 'whole'
                              except all select * exclude (version) from {table} where version = 'split'))"
                    ),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let rows: i64 = conn
                .query_row(&format!("select count(*) from {table} where version = 'split'"), [], |r| r.get(0))
                .unwrap();
            assert_eq!(differ, 0, "{table}: {differ} of {rows} rows differ");
            assert!(rows >= split.built, "{table}: {rows} rows");
        }
    }

    #[test]
    fn rule_lists() {
        assert_eq!(Rule::parse_list("all").unwrap(), Rule::ALL.to_vec());
        assert_eq!(
            Rule::parse_list("duplicate, service_account").unwrap(),
            vec![Rule::ServiceAccount, Rule::Duplicate]
        );
        assert!(Rule::parse_list("suggested_edits").unwrap_err().to_string().contains("unknown rule"));
        assert!(Rule::parse_list("duplicate,duplicate").unwrap_err().to_string().contains("twice"));
    }

    #[test]
    fn rule_list_names_the_unknown_rule_not_all() {
        let err = Rule::parse_list("all,dedup").unwrap_err().to_string();
        assert!(err.starts_with("unknown rule \"dedup\";"), "{err}");
        let err = Rule::parse_list("dedup, fences ,duplicate").unwrap_err().to_string();
        assert!(err.starts_with("unknown rules \"dedup\", \"fences\";"), "{err}");
        let err = Rule::parse_list("all,duplicate").unwrap_err().to_string();
        assert!(err.contains("give it alone"), "{err}");
        assert_eq!(Rule::parse_list(" all ").unwrap(), Rule::ALL.to_vec());
    }
}
