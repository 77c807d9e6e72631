//! Freezing a version and `verify --reproduce` (SPEC §2.4, §1 principle 5, issue 8 §3b).
//!
//! `freeze` writes, per org with a computed split, `split-criteria-<org>.json` (the
//! criteria views' figures) and `manifest-<org>-<version>.json` (sorted example ids per
//! split, one SHA-256 root), records both texts in `frozen_manifests`, the folder in
//! `frozen_versions` and each file's name, SHA-256 and size in `frozen_files`, and marks
//! the version immutable. A criteria file of another version already in the folder is
//! kept as `split-criteria-<org>-<its version>.json` (and that version's record follows
//! it). A kill at any point leaves every committed record true on disk: see
//! [`finish_interrupted`]. An org whose kept examples have no split is never left out silently:
//! freeze refuses unless the orgs to freeze are named (`--org`) or the partial freeze is
//! allowed (`--allow-partial`); either way the orgs left out are recorded in
//! `frozen_exclusions`.
//!
//! `verify --reproduce` checks the files a user quotes, where they live (the recorded
//! folder, or the one given): each must be there with the SHA-256 freeze recorded. It
//! checks every input file the version was built from is still on disk with the same
//! SHA-256, rebuilds the version from those files in a scratch in-memory database
//! (nothing refetched), recomputes its splits, and compares the frozen files' content and
//! the database's copies with the rebuild. Every difference names the file or org it is in.

use super::load::load;
use super::refine::{RefineOptions, Rule, refine};
use super::splits;
use crate::hash::sha256_hex;
use crate::ingest::{Corpus, InputKind};
use anyhow::{Context, Result, bail};
use duckdb::{Connection, OptionalExt, params};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which orgs of a version `freeze` writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FreezeOptions {
    /// Freeze only these orgs; each must have a computed split. Every other org with kept
    /// examples is left out (recorded). Empty: every org with a split, and refuse when an
    /// org with kept examples has none (unless `allow_partial`).
    pub orgs: Vec<String>,
    /// Leave out orgs with kept examples but no computed split (recorded) instead of
    /// refusing the freeze.
    pub allow_partial: bool,
}

/// An org with kept examples that a freeze left out: no manifest or criteria file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub org: String,
    /// Examples of the org the version keeps.
    pub kept_examples: i64,
    /// `no split computed` or `not named with --org`.
    pub reason: &'static str,
}

/// What freeze wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreezeSummary {
    pub version: String,
    /// The folder, as an absolute path (recorded in `frozen_versions`).
    pub folder: PathBuf,
    /// Orgs whose manifest and criteria were written, sorted.
    pub frozen_orgs: Vec<String>,
    /// Orgs with kept examples left out, sorted by org.
    pub left_out: Vec<LeftOut>,
    /// Files written, and criteria files of older versions renamed (from, to).
    pub written: Vec<PathBuf>,
    pub renamed: Vec<(PathBuf, PathBuf)>,
}

/// Freezes every org of `version` that has a split, refusing when an org with kept
/// examples has none: [`freeze_with`] with default options.
pub fn freeze(conn: &Connection, version: &str, out: &Path) -> Result<FreezeSummary> {
    freeze_with(conn, version, out, &FreezeOptions::default())
}

/// The `selection` recorded in `frozen_versions`.
fn selection(opts: &FreezeOptions, left_out: &[LeftOut]) -> &'static str {
    if !opts.orgs.is_empty() {
        "orgs"
    } else if !left_out.is_empty() {
        "allow-partial"
    } else {
        "all"
    }
}

/// Freezes `version`, writing criteria and manifest files into `out`.
///
/// Errors (nothing written, version not frozen): the version does not exist or is
/// frozen already; an org with kept examples has no computed split and neither
/// `opts.orgs` nor `opts.allow_partial` leaves it out explicitly (the message lists
/// every such org with its kept examples); an org named in `opts.orgs` has no split;
/// a file cannot be written.
pub fn freeze_with(conn: &Connection, version: &str, out: &Path, opts: &FreezeOptions) -> Result<FreezeSummary> {
    finish_interrupted(conn)?;
    let state: Option<Option<String>> = conn
        .query_row("select frozen_at::varchar from corpus_versions where version = ?", [version], |r| r.get(0))
        .optional()?;
    match state {
        None => bail!("version {version} does not exist"),
        Some(Some(at)) => bail!("version {version} is already frozen (at {at})"),
        Some(None) => {}
    }
    let mut stmt = conn.prepare("select org from split_runs where version = ? order by org")?;
    let runs: Vec<String> = stmt.query_map([version], |r| r.get(0))?.collect::<duckdb::Result<_>>()?;
    let mut stmt =
        conn.prepare("select org, count(*) from refine_examples where version = ? and kept group by org order by org")?;
    let kept: Vec<(String, i64)> =
        stmt.query_map([version], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?;
    let mut named: Vec<String> = opts.orgs.iter().map(|o| o.trim().to_string()).filter(|o| !o.is_empty()).collect();
    named.sort();
    named.dedup();
    if !opts.orgs.is_empty() && named.is_empty() {
        bail!("--org names no org");
    }
    for org in &named {
        if !runs.contains(org) {
            if kept.iter().any(|(o, _)| o == org) {
                bail!(
                    "org {org} has no split in version {version}; compute it with `sphragis split --version {version} --org {org}`"
                );
            }
            bail!("version {version} keeps no examples of org {org} and has no split for it");
        }
    }
    let frozen_orgs: Vec<String> = if named.is_empty() { runs.clone() } else { named.clone() };
    let left_out: Vec<LeftOut> = kept
        .iter()
        .filter(|(org, _)| !frozen_orgs.contains(org))
        .map(|(org, n)| LeftOut {
            org: org.clone(),
            kept_examples: *n,
            reason: if runs.contains(org) { "not named with --org" } else { "no split computed" },
        })
        .collect();
    if named.is_empty() && !left_out.is_empty() && !opts.allow_partial {
        bail!(
            "version {version} keeps examples in {} without a split: {}; compute their splits \
             (`sphragis split --version {version}`), name the orgs to freeze with --org, or leave them out \
             with --allow-partial (recorded in the freeze record)",
            if left_out.len() == 1 { "an org" } else { "orgs" },
            describe(&left_out)
        );
    }
    let folder = std::path::absolute(out).with_context(|| format!("{}: not a usable folder", out.display()))?;
    let last_file_id: i32 =
        conn.query_row("select inputs_up_to from corpus_versions where version = ?", [version], |r| r.get(0))?;
    let mut files = Vec::new();
    for org in &frozen_orgs {
        let (root, manifest) = splits::manifest(conn, version, org)?;
        let criteria = splits::criteria(conn, version, org)?;
        files.push((
            org.clone(),
            root,
            serde_json::to_string_pretty(&manifest)? + "\n",
            serde_json::to_string_pretty(&criteria)? + "\n",
        ));
    }
    crate::db::in_transaction(conn, || -> Result<(FreezeSummary, AfterCommit)> {
        for (org, root, manifest, criteria) in &files {
            conn.execute(
                "insert into frozen_manifests values (?, ?, ?, ?, ?, ?, current_timestamp)",
                params![version, org, root, manifest, criteria, last_file_id],
            )?;
            for (role, name, text) in [
                ("manifest", format!("manifest-{org}-{version}.json"), manifest),
                ("criteria", format!("split-criteria-{org}.json"), criteria),
            ] {
                conn.execute(
                    "insert into frozen_files values (?, ?, ?, ?, ?, ?)",
                    params![version, org, role, name, sha256_hex(text.as_bytes()), text.len() as i64],
                )?;
            }
        }
        for l in &left_out {
            conn.execute(
                "insert into frozen_exclusions values (?, ?, ?, ?)",
                params![version, l.org, l.kept_examples, l.reason],
            )?;
        }
        conn.execute(
            "insert into frozen_versions values (?, ?, ?, current_timestamp)",
            params![version, folder.to_string_lossy().into_owned(), selection(opts, &left_out)],
        )?;
        conn.execute("update corpus_versions set frozen_at = current_timestamp where version = ?", [version])?;
        let mut detail = format!(
            "{version}: {} orgs, inputs up to file_id {last_file_id}, files in {}",
            files.len(),
            folder.display()
        );
        if !left_out.is_empty() {
            detail.push_str(&format!("; left out: {}", describe(&left_out)));
        }
        crate::db::log(conn, "freeze", &detail)?;
        let mut summary = FreezeSummary {
            version: version.to_string(),
            folder: folder.clone(),
            frozen_orgs: frozen_orgs.clone(),
            left_out: left_out.clone(),
            written: Vec::new(),
            renamed: Vec::new(),
        };
        if files.is_empty() {
            return Ok((summary, AfterCommit::default()));
        }
        // Crash safety (kill -9 at any point): before the commit, nothing is written
        // under a name a reader or a record uses — the new criteria and manifest files
        // are staged as hidden pending files; after it, an older version's criteria
        // file is copied to its kept name (its record was moved there inside this
        // transaction), then the staged files are renamed into place. A freeze killed
        // after its commit is finished by the next freeze or verify
        // (`finish_interrupted`); one killed before leaves only hidden staged files that
        // no record names (removed by that same step).
        std::fs::create_dir_all(&folder).with_context(|| format!("{}: cannot create directory", folder.display()))?;
        let mut after_commit = AfterCommit::default();
        for (org, _, manifest, criteria) in &files {
            let current = folder.join(criteria_name(org));
            if let Some(previous) = version_of(&current)?
                && previous != version
            {
                let kept_name = format!("split-criteria-{org}-{previous}.json");
                let kept = folder.join(&kept_name);
                // The older version's record follows its file when it was frozen into this folder.
                conn.execute(
                    "update frozen_files set file_name = ? where version = ? and org = ? and role = 'criteria' \
                     and version in (select version from frozen_versions where folder = ?)",
                    params![kept_name, previous, org, folder.to_string_lossy().into_owned()],
                )?;
                after_commit.keep.push((current.clone(), kept.clone()));
                summary.renamed.push((current.clone(), kept));
            }
            let manifest_path = folder.join(manifest_name(org, version));
            for (text, target) in [(criteria, &current), (manifest, &manifest_path)] {
                let staged = folder.join(pending_name(&file_name(target), version));
                std::fs::write(&staged, text).with_context(|| format!("{}: cannot write", staged.display()))?;
                after_commit.stage.push((staged, target.clone()));
            }
            summary.written.push(current);
            summary.written.push(manifest_path);
        }
        crate::db::crash_point("freeze:before-commit");
        Ok((summary, after_commit))
    })
    .and_then(|(summary, after_commit)| {
        crate::db::crash_point("freeze:after-commit");
        let finish = |e: anyhow::Error| {
            e.context(format!(
                "version {version} is frozen; `sphragis verify --reproduce --version {version}` finishes writing its files"
            ))
        };
        for (current, kept) in &after_commit.keep {
            copy_into_place(current, kept, version).map_err(finish)?;
        }
        for (staged, target) in &after_commit.stage {
            std::fs::rename(staged, target)
                .with_context(|| format!("{}: cannot rename to {}", staged.display(), target.display()))
                .map_err(finish)?;
        }
        Ok(summary)
    })
}

/// What a freeze does with its files once its transaction has committed.
#[derive(Default)]
struct AfterCommit {
    /// Older versions' criteria files to copy to their kept names (from, to).
    keep: Vec<(PathBuf, PathBuf)>,
    /// Staged files to rename into place (staged, target).
    stage: Vec<(PathBuf, PathBuf)>,
}

/// `split-criteria-<org>.json`: the name of an org's current criteria file.
fn criteria_name(org: &str) -> String {
    format!("split-criteria-{org}.json")
}

/// `manifest-<org>-<version>.json`.
fn manifest_name(org: &str, version: &str) -> String {
    format!("manifest-{org}-{version}.json")
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The hidden name a file of `version`'s freeze is staged under until the freeze commits
/// (`.split-criteria-<org>.json.<version>.pending`, `.manifest-<org>-<version>.json.<version>.pending`),
/// or a copy is written under before it is renamed to its name.
fn pending_name(name: &str, version: &str) -> String {
    format!(".{name}.{version}.pending")
}

/// Copies `from` to `to` through a hidden file renamed into place, so that `to` is never
/// seen half-written (`version` names the freeze doing it, in the hidden name).
fn copy_into_place(from: &Path, to: &Path, version: &str) -> Result<()> {
    let staged = to.with_file_name(pending_name(&file_name(to), version));
    std::fs::copy(from, &staged).with_context(|| format!("{}: cannot copy to {}", from.display(), staged.display()))?;
    std::fs::rename(&staged, to).with_context(|| format!("{}: cannot rename to {}", staged.display(), to.display()))?;
    Ok(())
}

/// Finishes freezes interrupted between their commit and the writing of their files (a
/// kill -9, a full disk), in the recorded folder of every frozen version: first, an older
/// version's criteria file whose record names its kept name but which is still only the
/// current `split-criteria-<org>.json` (same SHA-256) is copied to the kept name; then a
/// staged file of a frozen version whose content is the one recorded is renamed into
/// place, and any other staged file (a freeze killed before its commit, a copy cut
/// short) is removed. Returns the files written into place.
///
/// Errors: a folder cannot be read or a file cannot be copied, renamed or removed.
pub fn finish_interrupted(conn: &Connection) -> Result<Vec<PathBuf>> {
    let mut stmt = conn.prepare(
        "select f.version, f.org, f.role, f.file_name, f.sha256, v.folder from frozen_files f \
         join frozen_versions v using (version)",
    )?;
    let recorded: Vec<Recorded> = stmt
        .query_map([], |r| {
            Ok(Recorded {
                version: r.get(0)?,
                org: r.get(1)?,
                role: r.get(2)?,
                file_name: r.get(3)?,
                sha256: r.get(4)?,
                folder: r.get(5)?,
            })
        })?
        .collect::<duckdb::Result<_>>()?;
    let mut finished = Vec::new();
    let mut folders: Vec<&str> = recorded.iter().map(|r| r.folder.as_str()).collect();
    folders.sort();
    folders.dedup();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else { continue };
        let entries: Vec<PathBuf> = entries.map(|e| e.map(|e| e.path())).collect::<std::io::Result<_>>()?;
        let dir = Path::new(folder);
        for r in recorded.iter().filter(|r| r.folder == folder && r.role == "criteria") {
            let (kept, current) = (dir.join(&r.file_name), dir.join(criteria_name(&r.org)));
            if r.file_name != criteria_name(&r.org)
                && !kept.exists()
                && std::fs::read(&current).is_ok_and(|b| sha256_hex(&b) == r.sha256)
            {
                copy_into_place(&current, &kept, &r.version)?;
                finished.push(kept);
            }
        }
        for path in entries {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            if !(name.starts_with('.') && name.ends_with(".pending")) {
                continue;
            }
            let owner = recorded.iter().find(|r| r.folder == folder && r.staged_name() == name);
            match owner {
                Some(r) if std::fs::read(&path).is_ok_and(|b| sha256_hex(&b) == r.sha256) => {
                    let target = dir.join(&r.file_name);
                    std::fs::rename(&path, &target)
                        .with_context(|| format!("{}: cannot rename to {}", path.display(), target.display()))?;
                    finished.push(target);
                }
                _ => std::fs::remove_file(&path).with_context(|| format!("{}: cannot remove", path.display()))?,
            }
        }
    }
    Ok(finished)
}

/// A `frozen_files` row with its version's folder.
struct Recorded {
    version: String,
    org: String,
    role: String,
    file_name: String,
    sha256: String,
    folder: String,
}

impl Recorded {
    /// The hidden name the file was staged under by its freeze.
    fn staged_name(&self) -> String {
        let name =
            if self.role == "criteria" { criteria_name(&self.org) } else { manifest_name(&self.org, &self.version) };
        pending_name(&name, &self.version)
    }
}

/// `org (n kept examples, reason), ...` for messages.
pub fn describe(left_out: &[LeftOut]) -> String {
    left_out
        .iter()
        .map(|l| format!("{} ({} kept examples, {})", l.org, l.kept_examples, l.reason))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `version` field of an existing criteria file, `None` when there is no file.
fn version_of(path: &Path) -> Result<Option<String>> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not a criteria file", path.display()))?;
    Ok(value["version"].as_str().map(str::to_string))
}

/// Why a reproduction could not run or did not match.
#[derive(Debug)]
pub enum VerifyError {
    /// An input file is gone and nothing else differs: the version cannot be rebuilt.
    Missing(Vec<String>),
    /// A verification mismatch that stops the rebuild: input files changed since they
    /// were loaded (with any input gone and any frozen file found missing or different
    /// from its freeze record). Each line names the file.
    Changed(Vec<String>),
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::Missing(lines) => write!(f, "input files are missing:\n  {}", lines.join("\n  ")),
            VerifyError::Changed(lines) => write!(f, "verification mismatch:\n  {}", lines.join("\n  ")),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Where `verify --reproduce` looks for the frozen files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyOptions {
    /// The folder holding the frozen files; `None`: the folder recorded at freeze.
    pub frozen: Option<PathBuf>,
}

/// [`verify_reproduce_with`] on the folder recorded at freeze.
pub fn verify_reproduce(conn: &Connection, version: &str) -> Result<Vec<String>> {
    verify_reproduce_with(conn, version, &VerifyOptions::default())
}

/// [`verify_reproduce_with`], then the outcome recorded in `verifications` (read by the
/// check `frozen_version_verifies`): clean, or the number of differences and the first.
/// An input changed or gone ([`VerifyError`]) is recorded as a difference too; any other
/// error (the version is not frozen, a rebuild failing) records nothing.
///
/// Errors: as [`verify_reproduce_with`], and the record cannot be written.
pub fn verify_and_record(conn: &Connection, version: &str, opts: &VerifyOptions) -> Result<Vec<String>> {
    let outcome = verify_reproduce_with(conn, version, opts);
    let differences: Vec<String> = match &outcome {
        Ok(d) => d.clone(),
        Err(e) => match e.downcast_ref::<VerifyError>() {
            Some(VerifyError::Changed(lines) | VerifyError::Missing(lines)) => lines.clone(),
            None => return outcome,
        },
    };
    let now = chrono::Utc::now().naive_utc().format("%Y-%m-%d %H:%M:%S%.6f").to_string();
    conn.execute(
        "insert into verifications values (?, ?::timestamp, ?, ?, ?, ?)",
        duckdb::params![
            version,
            now,
            crate::CODE_VERSION,
            differences.is_empty(),
            differences.len().max(usize::from(outcome.is_err())) as i64,
            differences.first()
        ],
    )?;
    outcome
}

/// One frozen file as found on disk: where, and its parsed content when it is JSON.
struct OnDisk {
    path: PathBuf,
    value: Option<Value>,
}

/// Finds one frozen file in `folder` and checks its bytes against the freeze record.
/// Pushes a line naming the file onto `differences` when it is missing, differs from the
/// recorded SHA-256 or is not JSON; returns the file when it is there.
///
/// A criteria file is looked up under its recorded name, then under
/// `split-criteria-<org>-<version>.json` (the name it gets when a newer version is frozen
/// into the folder), then `split-criteria-<org>.json`: the candidate with the recorded
/// bytes wins, else the first whose `version` is this version, else the one under the
/// recorded name; none of these is a missing file.
fn find_frozen(
    folder: &Path,
    version: &str,
    org: &str,
    role: &str,
    recorded: &(String, String),
    differences: &mut Vec<String>,
) -> Result<Option<OnDisk>> {
    let (name, sha) = recorded;
    let mut candidates = vec![name.clone()];
    if role == "criteria" {
        for other in [format!("split-criteria-{org}-{version}.json"), format!("split-criteria-{org}.json")] {
            if !candidates.contains(&other) {
                candidates.push(other);
            }
        }
    }
    // The file with the recorded bytes; else the first of this version; else the file
    // under the recorded name (what a user quoting that name would read).
    type Read = Option<(PathBuf, Vec<u8>)>;
    let (mut by_version, mut by_name, mut exact): (Read, Read, Read) = (None, None, None);
    for candidate in &candidates {
        let path = folder.join(candidate);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("{}: cannot read", path.display())),
        };
        if &sha256_hex(&bytes) == sha {
            exact = Some((path, bytes));
            break;
        }
        let of_version = serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v["version"].as_str() == Some(version));
        if of_version && by_version.is_none() {
            by_version = Some((path.clone(), bytes.clone()));
        }
        if candidate == name && by_name.is_none() {
            by_name = Some((path, bytes));
        }
    }
    let found = exact.or(by_version).or(by_name);
    let Some((path, bytes)) = found else {
        differences.push(format!(
            "frozen file {} is missing (the {role} of {org} in {version}; looked for {})",
            folder.join(name).display(),
            candidates.join(", ")
        ));
        return Ok(None);
    };
    let now = sha256_hex(&bytes);
    if &now != sha {
        differences.push(format!("frozen file {}: sha256 is {now}, freeze recorded {sha}", path.display()));
    }
    let value = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            differences.push(format!("frozen file {}: not JSON ({e})", path.display()));
            None
        }
    };
    Ok(Some(OnDisk { path, value }))
}

/// Rebuilds frozen `version` from its input files in a scratch database and returns
/// every difference (empty: clean): frozen files missing from the folder (the recorded
/// one, or `opts.frozen`) or whose bytes differ from the SHA-256 freeze recorded, and
/// every example or criterion in which the files on disk, or the database's copies of
/// them, differ from the rebuild. Each line names the file (frozen files) or the org
/// (database copies).
///
/// Errors: the version is not frozen with splits; the folder is neither recorded (a
/// version frozen before sphragis recorded it) nor given; [`VerifyError::Changed`] when
/// an input file changed since it was loaded (its lines, then every frozen-file line
/// found so far: the rebuild cannot run); [`VerifyError::Missing`] when input files are
/// gone and nothing else differs; a load or refine failing in the scratch database.
pub fn verify_reproduce_with(conn: &Connection, version: &str, opts: &VerifyOptions) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "select org, manifest_json, criteria_json, last_file_id from frozen_manifests where version = ? order by org",
    )?;
    let frozen: Vec<(String, String, String, i32)> = stmt
        .query_map([version], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<duckdb::Result<_>>()?;
    if frozen.is_empty() {
        bail!("version {version} has no frozen splits to reproduce; compute splits and freeze it first");
    }
    finish_interrupted(conn)?;
    let recorded_folder: Option<String> =
        conn.query_row("select folder from frozen_versions where version = ?", [version], |r| r.get(0)).optional()?;
    let folder = match (&opts.frozen, recorded_folder) {
        (Some(dir), _) => dir.clone(),
        (None, Some(dir)) => PathBuf::from(dir),
        (None, None) => bail!(
            "version {version} was frozen before sphragis recorded the folder of its files; \
             pass that folder with --frozen DIR"
        ),
    };
    let mut stmt = conn.prepare("select org, role, file_name, sha256 from frozen_files where version = ?")?;
    let records: BTreeMap<(String, String), (String, String)> = stmt
        .query_map([version], |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?))))?
        .collect::<duckdb::Result<_>>()?;
    // The frozen files first: a missing or edited file is a mismatch whatever the inputs say.
    let (mut file_differences, mut copy_differences) = (Vec::new(), Vec::new());
    let mut on_disk: BTreeMap<(String, &str), OnDisk> = BTreeMap::new();
    for (org, manifest_json, criteria_json, _) in &frozen {
        for (role, text) in [("manifest", manifest_json), ("criteria", criteria_json)] {
            let recorded = match records.get(&(org.clone(), role.to_string())) {
                Some(r) => r.clone(),
                None => {
                    let name = if role == "manifest" {
                        format!("manifest-{org}-{version}.json")
                    } else {
                        format!("split-criteria-{org}.json")
                    };
                    (name, sha256_hex(text.as_bytes()))
                }
            };
            if sha256_hex(text.as_bytes()) != recorded.1 {
                copy_differences.push(format!(
                    "{org}: the database's copy of {} no longer has the SHA-256 freeze recorded",
                    recorded.0
                ));
            }
            if let Some(file) = find_frozen(&folder, version, org, role, &recorded, &mut file_differences)? {
                on_disk.insert((org.clone(), role), file);
            }
        }
    }
    let (rules, min_chars): (String, i32) = conn.query_row(
        "select array_to_string(rules, ','), min_target_chars from corpus_versions where version = ?",
        [version],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let last = frozen[0].3;
    let mut stmt = conn
        .prepare("select file_id, kind, path, sha256, options from ingest_log where file_id <= ? order by file_id")?;
    // Only the review corpus's inputs rebuild a review version (SFT files are not needed).
    let inputs: Vec<(i32, String, String, String, Option<String>)> = stmt
        .query_map([last], |r| {
            Ok((
                r.get::<_, i32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
            ))
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
    // Without its inputs the version cannot be rebuilt: report what is known and stop.
    let frozen_differ = !file_differences.is_empty() || !copy_differences.is_empty();
    if !changed.is_empty() || (!missing.is_empty() && frozen_differ) {
        let mut lines: Vec<String> = changed.into_iter().map(|l| format!("input file changed: {l}")).collect();
        lines.extend(missing.into_iter().map(|l| format!("input file missing: {l}")));
        lines.extend(file_differences);
        lines.extend(copy_differences);
        return Err(VerifyError::Changed(lines).into());
    }
    if !missing.is_empty() {
        return Err(VerifyError::Missing(missing).into());
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
    let mut differences = file_differences;
    differences.append(&mut copy_differences);
    for (org, manifest_json, criteria_json, _) in &frozen {
        splits::compute(&scratch, version, Some(org))?;
        let (_, manifest) = splits::manifest(&scratch, version, org)?;
        let criteria = splits::criteria(&scratch, version, org)?;
        // The files on disk, then the database's copies, each against the rebuild.
        for role in ["manifest", "criteria"] {
            let Some(OnDisk { path, value: Some(value) }) = on_disk.get(&(org.clone(), role)) else { continue };
            let label = path.display().to_string();
            differences.extend(match role {
                "manifest" => compare_manifest(&label, version, org, value, &manifest),
                _ => compare_criteria(&label, value, &criteria),
            });
        }
        differences.extend(compare_membership(org, &serde_json::from_str(manifest_json)?, &manifest));
        differences.extend(compare_criteria(org, &serde_json::from_str(criteria_json)?, &criteria));
    }
    // A version refined under an older suggestion rule is rebuilt with this code's rule:
    // say so first, so a difference it causes is not taken for a changed input.
    let rule: Option<String> =
        conn.query_row("select suggestion_rule from corpus_versions where version = ?", [version], |r| r.get(0))?;
    let current = crate::rules::fence::SUGGESTION_RULE;
    if !differences.is_empty() && rule.as_deref() != Some(current) {
        differences.insert(
            0,
            format!(
                "suggestion rule: version {version} was refined with {}, this sphragis rebuilds it with {current} \
                 (differences below may come from the rule change)",
                rule.as_deref().unwrap_or("(unrecorded)")
            ),
        );
    }
    Ok(differences)
}

/// A frozen manifest file against the rebuild: its version and org, then membership.
fn compare_manifest(label: &str, version: &str, org: &str, frozen: &Value, reproduced: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (key, want) in [("version", version), ("org", org)] {
        if frozen[key].as_str() != Some(want) {
            out.push(format!("{label}: {key} is {}, expected {want:?}", frozen[key]));
        }
    }
    out.extend(compare_membership(label, frozen, reproduced));
    out
}

/// Every criterion (flattened path) whose frozen and reproduced values differ.
fn compare_criteria(label: &str, frozen: &Value, reproduced: &Value) -> Vec<String> {
    let (before, after) = (splits::flatten(frozen), splits::flatten(reproduced));
    let mut out = Vec::new();
    for key in before.keys().chain(after.keys().filter(|k| !before.contains_key(*k))) {
        let (b, a) = (before.get(key), after.get(key));
        if b != a {
            let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "(absent)".into());
            out.push(format!("{label}: criteria {key}: frozen {} → reproduced {}", show(b), show(a)));
        }
    }
    out
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
fn compare_membership(label: &str, frozen: &Value, reproduced: &Value) -> Vec<String> {
    let (before, after) = (membership(frozen), membership(reproduced));
    let mut out = Vec::new();
    for (id, split) in &before {
        match after.get(id) {
            Some(now) if now == split => {}
            Some(now) => out.push(format!("{label}: example {id} moved from {split} to {now}")),
            None => out.push(format!("{label}: example {id} was in {split}, is no longer kept")),
        }
    }
    for (id, split) in &after {
        if !before.contains_key(id) {
            out.push(format!("{label}: example {id} is now in {split}, was not in the frozen manifest"));
        }
    }
    // The frozen file's root must still match its own id lists (an edited record shows here).
    let recomputed = root_of(&before);
    if frozen["root_sha256"].as_str() != Some(recomputed.as_str()) {
        out.push(format!(
            "{label}: the frozen manifest's root {} does not match its ids (they hash to {recomputed})",
            frozen["root_sha256"]
        ));
    }
    if frozen["root_sha256"] != reproduced["root_sha256"] {
        out.push(format!(
            "{label}: manifest root frozen {} → reproduced {}",
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
