//! Freezing a version and `verify --reproduce` (SPEC §2.4, §1 principle 5).
//!
//! `freeze` writes, per org with a computed split, `split-criteria-<org>.json` (the
//! criteria views' figures) and `manifest-<org>-<version>.json` (sorted example ids per
//! split, one SHA-256 root), records both texts in `frozen_manifests`, and marks the
//! version immutable. A criteria file of another version already in the folder is kept
//! as `split-criteria-<org>-<its version>.json`.
//!
//! `verify --reproduce` checks that every input file the version was built from is
//! still on disk with the same SHA-256, rebuilds the version from those files in a
//! scratch in-memory database (nothing refetched), recomputes its splits, and compares
//! manifests and criteria with what freeze recorded.

use super::load::load;
use super::refine::{RefineOptions, Rule, refine};
use super::splits;
use crate::ingest::{Corpus, InputKind};
use anyhow::{Context, Result, bail};
use duckdb::{Connection, params};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What freeze wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreezeSummary {
    pub version: String,
    /// Files written, and criteria files of older versions renamed (from, to).
    pub written: Vec<PathBuf>,
    pub renamed: Vec<(PathBuf, PathBuf)>,
}

/// Freezes `version`, writing criteria and manifest files into `out`.
///
/// Errors (nothing written, version not frozen): the version does not exist or is
/// frozen already; a file cannot be written.
pub fn freeze(conn: &Connection, version: &str, out: &Path) -> Result<FreezeSummary> {
    let state: Option<Option<String>> = conn
        .query_row("select frozen_at::varchar from corpus_versions where version = ?", [version], |r| r.get(0))
        .ok();
    match state {
        None => bail!("version {version} does not exist"),
        Some(Some(at)) => bail!("version {version} is already frozen (at {at})"),
        Some(None) => {}
    }
    let mut stmt = conn.prepare("select org from split_runs where version = ? order by org")?;
    let runs: Vec<String> = stmt.query_map([version], |r| r.get(0))?.collect::<duckdb::Result<_>>()?;
    let last_file_id: i32 =
        conn.query_row("select inputs_up_to from corpus_versions where version = ?", [version], |r| r.get(0))?;
    let mut files = Vec::new();
    for org in &runs {
        let (root, manifest) = splits::manifest(conn, version, org)?;
        let criteria = splits::criteria(conn, version, org)?;
        files.push((
            org.clone(),
            root,
            serde_json::to_string_pretty(&manifest)? + "\n",
            serde_json::to_string_pretty(&criteria)? + "\n",
        ));
    }
    crate::db::in_transaction(conn, || -> Result<FreezeSummary> {
        for (org, root, manifest, criteria) in &files {
            conn.execute(
                "insert into frozen_manifests values (?, ?, ?, ?, ?, ?, current_timestamp)",
                params![version, org, root, manifest, criteria, last_file_id],
            )?;
        }
        conn.execute("update corpus_versions set frozen_at = current_timestamp where version = ?", [version])?;
        conn.execute(
            "insert into sph_log (command, detail) values ('freeze', ?)",
            [format!("{version}: {} orgs, inputs up to file_id {last_file_id}, files in {}", files.len(), out.display())],
        )?;
        let mut summary = FreezeSummary { version: version.to_string(), written: Vec::new(), renamed: Vec::new() };
        if files.is_empty() {
            return Ok(summary);
        }
        std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create directory", out.display()))?;
        for (org, _, manifest, criteria) in &files {
            let current = out.join(format!("split-criteria-{org}.json"));
            if let Some(previous) = version_of(&current)?
                && previous != version
            {
                let kept = out.join(format!("split-criteria-{org}-{previous}.json"));
                std::fs::rename(&current, &kept)
                    .with_context(|| format!("{}: cannot rename to {}", current.display(), kept.display()))?;
                summary.renamed.push((current.clone(), kept));
            }
            std::fs::write(&current, criteria).with_context(|| format!("{}: cannot write", current.display()))?;
            let manifest_path = out.join(format!("manifest-{org}-{version}.json"));
            std::fs::write(&manifest_path, manifest)
                .with_context(|| format!("{}: cannot write", manifest_path.display()))?;
            summary.written.push(current);
            summary.written.push(manifest_path);
        }
        Ok(summary)
    })
}

/// The `version` field of an existing criteria file, `None` when there is no file.
fn version_of(path: &Path) -> Result<Option<String>> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{}: not a criteria file", path.display()))?;
    Ok(value["version"].as_str().map(str::to_string))
}

/// Why a reproduction could not run or did not match.
#[derive(Debug)]
pub enum VerifyError {
    /// An input file is gone: the version cannot be rebuilt.
    Missing(Vec<String>),
    /// Input files changed since they were loaded (a verification mismatch).
    Changed(Vec<String>),
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::Missing(lines) => write!(f, "input files are missing:\n  {}", lines.join("\n  ")),
            VerifyError::Changed(lines) => write!(f, "input files changed since they were loaded:\n  {}", lines.join("\n  ")),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Rebuilds frozen `version` from its input files in a scratch database and returns
/// every difference from the frozen manifests and criteria (empty: clean).
///
/// Errors: the version is not frozen with splits; [`VerifyError::Missing`] or
/// [`VerifyError::Changed`] for input files; a load or refine failing in the scratch
/// database.
pub fn verify_reproduce(conn: &Connection, version: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "select org, manifest_json, criteria_json, last_file_id from frozen_manifests where version = ? order by org",
    )?;
    let frozen: Vec<(String, String, String, i32)> =
        stmt.query_map([version], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<duckdb::Result<_>>()?;
    if frozen.is_empty() {
        bail!("version {version} has no frozen splits to reproduce; compute splits and freeze it first");
    }
    let (rules, min_chars): (String, i32) = conn.query_row(
        "select array_to_string(rules, ','), min_target_chars from corpus_versions where version = ?",
        [version],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let last = frozen[0].3;
    let mut stmt = conn.prepare(
        "select file_id, kind, path, sha256, options from ingest_log where file_id <= ? order by file_id",
    )?;
    // Only the review corpus's inputs rebuild a review version (SFT files are not needed).
    let inputs: Vec<(i32, String, String, String, Option<String>)> = stmt
        .query_map([last], |r| {
            Ok((r.get::<_, i32>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get::<_, Option<String>>(4)?))
        })?
        .collect::<duckdb::Result<Vec<_>>>()?
        .into_iter()
        .filter(|(_, kind, ..)| InputKind::from_name(kind).is_some_and(|k| k.corpus() == Corpus::Review))
        .collect();
    let (mut missing, mut changed) = (Vec::new(), Vec::new());
    for (file_id, kind, path, sha, _) in &inputs {
        match crate::ingest::read::hash_file(Path::new(path)) {
            Err(e) => missing.push(format!("{path} (file_id {file_id}, {kind}): {e}")),
            Ok((_, now)) => {
                if &now != sha {
                    changed.push(format!("{path} (file_id {file_id}, {kind}): sha256 was {sha}, is now {now}"));
                }
            }
        }
    }
    if !missing.is_empty() {
        return Err(VerifyError::Missing(missing).into());
    }
    if !changed.is_empty() {
        return Err(VerifyError::Changed(changed).into());
    }
    let scratch = crate::db::open(Path::new(":memory:"))?;
    for (_, kind, path, _, options) in &inputs {
        let kind = InputKind::from_name(kind).with_context(|| format!("{path}: unknown loader kind {kind}"))?;
        let org = options
            .as_deref()
            .and_then(|o| serde_json::from_str::<Value>(o).ok())
            .and_then(|v| v["org"].as_str().map(str::to_string));
        load(&scratch, kind, Path::new(path), org.as_deref(), &mut |_| {})
            .with_context(|| format!("reloading {path} in the scratch database"))?;
    }
    refine(
        &scratch,
        &RefineOptions {
            version: version.to_string(),
            base: None,
            rules: Rule::parse_list(&rules)?,
            min_target_chars: min_chars as u32,
        },
    )?;
    let mut differences = Vec::new();
    for (org, manifest_json, criteria_json, _) in &frozen {
        splits::compute(&scratch, version, Some(org))?;
        let (_, manifest) = splits::manifest(&scratch, version, org)?;
        let criteria = splits::criteria(&scratch, version, org)?;
        let was: Value = serde_json::from_str(manifest_json)?;
        differences.extend(compare_membership(org, &was, &manifest));
        let was: Value = serde_json::from_str(criteria_json)?;
        let (before, after) = (splits::flatten(&was), splits::flatten(&criteria));
        for key in before.keys().chain(after.keys().filter(|k| !before.contains_key(*k))) {
            let (b, a) = (before.get(key), after.get(key));
            if b != a {
                let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "(absent)".into());
                differences.push(format!("{org}: criteria {key}: frozen {} → reproduced {}", show(b), show(a)));
            }
        }
    }
    Ok(differences)
}

fn membership(manifest: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(splits) = manifest["splits"].as_object() {
        for (split, ids) in splits {
            for id in ids.as_array().into_iter().flatten().filter_map(Value::as_str) {
                out.insert(id.to_string(), split.clone());
            }
        }
    }
    out
}

/// Example ids that moved between splits, appeared or disappeared.
fn compare_membership(org: &str, frozen: &Value, reproduced: &Value) -> Vec<String> {
    let (before, after) = (membership(frozen), membership(reproduced));
    let mut out = Vec::new();
    for (id, split) in &before {
        match after.get(id) {
            Some(now) if now == split => {}
            Some(now) => out.push(format!("{org}: example {id} moved from {split} to {now}")),
            None => out.push(format!("{org}: example {id} was in {split}, is no longer kept")),
        }
    }
    for (id, split) in &after {
        if !before.contains_key(id) {
            out.push(format!("{org}: example {id} is now in {split}, was not in the frozen manifest"));
        }
    }
    // The frozen file's root must still match its own id lists (an edited record shows here).
    let recomputed = root_of(&before);
    if frozen["root_sha256"].as_str() != Some(recomputed.as_str()) {
        out.push(format!(
            "{org}: the frozen manifest's root {} does not match its ids (they hash to {recomputed})",
            frozen["root_sha256"]
        ));
    }
    if frozen["root_sha256"] != reproduced["root_sha256"] {
        out.push(format!(
            "{org}: manifest root frozen {} → reproduced {}",
            frozen["root_sha256"], reproduced["root_sha256"]
        ));
    }
    out
}

/// SHA-256 over `<split>\t<example_id>\n` lines sorted by split, then id.
fn root_of(membership: &BTreeMap<String, String>) -> String {
    let mut lines: Vec<(&String, &String)> = membership.iter().map(|(id, split)| (split, id)).collect();
    lines.sort();
    let text: String = lines.iter().map(|(split, id)| format!("{split}\t{id}\n")).collect();
    crate::hash::sha256_hex(text.as_bytes())
}
