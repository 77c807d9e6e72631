//! `load run`: a run's files, each its own transaction bound in the ingest log (kind
//! `run`, options `{"run": NAME}`), written to the `eval_*` tables.

use super::files::{self, RunFile, batch_time};
use super::symptoms::{exit_names_token_limit, finish, verdicts};
use crate::ingest::{self, InputError, InputKind, LoadOutcome};
use anyhow::{Context, Result, bail};
use duckdb::{Connection, OptionalExt, params};
use std::path::{Path, PathBuf};

/// What a run is, as given to `load run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    /// The run's name (`eval_run_specs.run`).
    pub name: String,
    pub model: String,
    pub harness: Option<String>,
    /// The run this one continues or resumes (must be loaded already).
    pub continues: Option<String>,
    /// N of the runaway heuristic ([`super::symptoms::DEFAULT_RUNAWAY_TURNS`] by default).
    pub runaway_turns: u32,
}

/// File name endings a folder is searched for; other files in a folder are listed as
/// skipped (a file named on the command line is always read).
pub const RUN_FILE_ENDINGS: &[&str] = &[".json", ".jsonl", ".traj", ".yaml", ".yml"];

/// The files to load for `paths` (folders walked recursively, sorted by path) and the
/// files of those folders that are not run files (to be reported, never silently lost).
///
/// Errors: a path that does not exist or a folder that cannot be listed.
pub fn expand(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    fn walk(dir: &Path, files: &mut Vec<PathBuf>, skipped: &mut Vec<PathBuf>) -> Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("{}: cannot list the folder", dir.display()))?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .with_context(|| format!("{}: cannot list the folder", dir.display()))?;
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, files, skipped)?;
            } else {
                let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
                if RUN_FILE_ENDINGS.iter().any(|e| name.ends_with(e)) {
                    files.push(path);
                } else {
                    skipped.push(path);
                }
            }
        }
        Ok(())
    }
    for path in paths {
        if path.is_dir() {
            walk(path, &mut files, &mut skipped)?;
        } else if path.exists() {
            files.push(path.clone());
        } else {
            bail!("{}: no such file or folder", path.display());
        }
    }
    Ok((files, skipped))
}

/// Checks `spec` against the database before any file is read: a run already loaded must
/// have the same model, harness, continued run and runaway N; a continued run must be
/// loaded already and differ from this one.
pub fn check_spec(conn: &Connection, spec: &RunSpec) -> Result<()> {
    if spec.name.trim().is_empty() {
        bail!("a run needs a name");
    }
    if let Some(other) = &spec.continues {
        if other == &spec.name {
            bail!("run {} cannot continue itself", spec.name);
        }
        let known: i64 = conn.query_row("select count(*) from eval_run_specs where run = ?", [other], |r| r.get(0))?;
        if known == 0 {
            bail!("run {} continues {other}, which is not loaded: load {other} first", spec.name);
        }
    }
    let was: Option<(String, Option<String>, Option<String>, i32)> = conn
        .query_row("select model, harness, continues, runaway_n from eval_run_specs where run = ?", [&spec.name], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()?;
    if let Some((model, harness, continues, n)) = was {
        let now = (spec.model.clone(), spec.harness.clone(), spec.continues.clone(), spec.runaway_turns as i32);
        if (model.clone(), harness.clone(), continues.clone(), n) != now {
            bail!(
                "run {} is loaded with model {model:?}, harness {harness:?}, continues {continues:?}, runaway turns {n}; \
                 this load says model {:?}, harness {:?}, continues {:?}, runaway turns {}: use another run name",
                spec.name,
                now.0,
                now.1,
                now.2,
                now.3
            );
        }
    }
    Ok(())
}

/// Loads one file into the run `spec` (one transaction; the run's row is written with its
/// first file). Errors name the file (and line and field where the reader can): a file
/// already loaded into another run, a trajectory of an instance the run already has, or
/// any reader error; the database is then unchanged.
pub fn load_file(conn: &Connection, spec: &RunSpec, path: &Path) -> Result<LoadOutcome> {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let other: Option<String> = conn
        .query_row(
            "select json_extract_string(options, '$.run') from ingest_log where kind = 'run' and path = ? \
             and json_extract_string(options, '$.run') <> ? limit 1",
            params![absolute.to_string_lossy(), spec.name],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(other) = other {
        bail!("{}: already loaded into run {other}; a file belongs to one run", path.display());
    }
    let options = serde_json::json!({ "run": spec.name }).to_string();
    ingest::load_file(conn, path, InputKind::Run, Some(&options), |conn, file_id, input| {
        let text = input.read_text()?;
        let read = files::read(path, &text)?;
        conn.execute(
            "insert into eval_run_specs (run, model, harness, continues, runaway_n) values (?, ?, ?, ?, ?) on conflict do nothing",
            params![spec.name, spec.model, spec.harness, spec.continues, spec.runaway_turns as i32],
        )?;
        store(conn, spec, file_id, path, read).with_context(|| path.display().to_string())
    })
}

fn store(conn: &Connection, spec: &RunSpec, file_id: i32, path: &Path, read: RunFile) -> Result<i64> {
    let run = spec.name.as_str();
    match read {
        RunFile::InstanceReport { shape, instance_id, status } => {
            conn.execute(
                "insert into eval_outcomes values (?, ?, ?, ?, ?)",
                params![run, instance_id, status.as_str(), shape, file_id],
            )?;
            Ok(1)
        }
        RunFile::Listing { shape, outcomes } => {
            conn.execute("insert into eval_listings values (?, ?, ?)", params![run, file_id, shape])?;
            let mut app = conn.appender("eval_outcomes")?;
            for (id, status) in &outcomes {
                app.append_row(params![run, id, status.as_str(), shape, file_id])?;
            }
            app.flush()?;
            Ok(outcomes.len() as i64)
        }
        RunFile::ExitStatuses { statuses } => {
            let batch = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let time = batch_time(&batch);
            let mut app = conn.appender("eval_exit_statuses")?;
            for (id, status) in &statuses {
                app.append_row(params![run, batch, time, id, status, file_id])?;
            }
            app.flush()?;
            Ok(statuses.len() as i64)
        }
        RunFile::Trajectories(read) => {
            let mut earlier = conn.prepare(
                "select l.path from eval_trajectories as t join ingest_log as l using (file_id) where t.run = ? and t.instance_id = ?",
            )?;
            let mut seen = std::collections::HashMap::new();
            for (row, (t, _)) in read.iter().enumerate() {
                let field = format!("[{row}]");
                if let Some(first) = seen.insert(t.instance_id.clone(), row) {
                    return Err(InputError::at(
                        path,
                        None,
                        Some(&field),
                        format!("instance {} repeats row {first}", t.instance_id),
                    )
                    .into());
                }
                if let Some(p) = earlier.query_row(params![run, t.instance_id], |r| r.get::<_, String>(0)).optional()? {
                    return Err(InputError::at(
                        path,
                        None,
                        Some(&field),
                        format!("run {run} already has a trajectory of {} from {p}", t.instance_id),
                    )
                    .into());
                }
            }
            let mut app = conn.appender("eval_trajectories")?;
            let mut declared = Vec::new();
            for (row, (t, rec)) in read.iter().enumerate() {
                let v = verdicts(t, spec.runaway_turns);
                let exit = rec.exit_status.as_deref();
                app.append_row(params![
                    run,
                    t.instance_id,
                    t.source,
                    exit,
                    finish(exit, t).as_str(),
                    v.assistant_turns as i32,
                    v.turns_before_first_edit.map(|n| n as i32),
                    v.git_history_commands as i32,
                    v.long_repetition,
                    rec.length_finishes as i32,
                    rec.length_finishes > 0 || exit_names_token_limit(exit),
                    v.runaway,
                    v.pass_after_last_edit,
                    t.resolved,
                    file_id,
                    row as i32 + 1
                ])?;
                if let Some(r) = t.resolved {
                    declared.push((t.instance_id.clone(), if r { "resolved" } else { "unresolved" }));
                }
            }
            app.flush()?;
            let mut app = conn.appender("eval_outcomes")?;
            for (id, status) in declared {
                app.append_row(params![run, id, status, "trajectory", file_id])?;
            }
            app.flush()?;
            Ok(read.len() as i64)
        }
    }
}
