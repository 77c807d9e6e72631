//! `load run`: a run's files, loaded whole or not at all — every file is read and checked
//! first, then all are written in ONE transaction bound in the ingest log (kind `run`,
//! options `{"run": NAME}`, one row per file) — into the `eval_*` tables. An Inspect AI
//! log's epochs after the first go to runs of their own ([`super::inspect::epoch_run`]),
//! its file still bound to `NAME` in the ingest log.

use super::autocoderover::{self as acr, Role as AcrRole};
use super::files::{self, RunFile, Status, batch_time, known_run_file};
use super::symptoms::{exit_names_token_limit, finish, verdicts};
use crate::ingest::{self, InputError, InputKind, LoadOutcome, ReadFile};
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
pub const RUN_FILE_ENDINGS: &[&str] = &[".json", ".jsonl", ".traj", ".yaml", ".yml", ".eval"];

/// A file or folder of a run's paths that is not read, and why.
pub use crate::ingest::walk::Skipped;

/// The files to load for `paths` (folders walked recursively, sorted by path) and the
/// paths met that are not read: not a run file by its ending, a known run-level file
/// that holds no outcome ([`files::KNOWN_RUN_FILES`]), a link to a folder (not followed),
/// or a file met again by another path (a link, a hard link: one file, read once) — to be
/// reported, never silently lost. A file named on the command line is always read (once).
///
/// Errors: a path that does not exist or a folder that cannot be listed.
pub fn expand(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<Skipped>)> {
    use crate::ingest::walk::{Entry, Walk};
    let mut files = Vec::new();
    let mut walked = Walk::default();
    fn walk(dir: &Path, files: &mut Vec<PathBuf>, walked: &mut Walk) -> Result<()> {
        let Some(entries) = walked.list(dir).with_context(|| format!("{}: cannot list the folder", dir.display()))?
        else {
            return Ok(());
        };
        let lower = |p: &Path| p.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        // an AutoCodeRover task folder: its files by name, the last conversation round only
        let task_folder = acr::is_task_folder(dir);
        let last_round = entries
            .iter()
            .filter_map(|e| match acr::role_of(&lower(e.path())) {
                AcrRole::Conversation(n) if task_folder => Some(n),
                _ => None,
            })
            .max();
        let mut skip = |path: PathBuf, why: &str| walked.skipped.push(Skipped { path, why: why.to_string() });
        let mut read = Vec::new();
        for entry in entries {
            let path = match entry {
                Entry::Folder(path) => {
                    read.push((path, true));
                    continue;
                }
                Entry::File(path) => path,
            };
            let name = lower(&path);
            if task_folder {
                match acr::role_of(&name) {
                    AcrRole::Meta | AcrRole::ExtractStatus | AcrRole::Report => {
                        read.push((path, false));
                        continue;
                    }
                    AcrRole::Conversation(n) if Some(n) == last_round => {
                        read.push((path, false));
                        continue;
                    }
                    AcrRole::Conversation(_) => {
                        skip(path, acr::EARLIER_ROUND);
                        continue;
                    }
                    AcrRole::Internal(why) => {
                        skip(path, why);
                        continue;
                    }
                    AcrRole::Other => {}
                }
            }
            if let Some(why) = known_run_file(&path) {
                skip(path, why);
            } else if RUN_FILE_ENDINGS.iter().any(|e| name.ends_with(e)) {
                read.push((path, false));
            } else {
                skip(path, "not a run file");
            }
        }
        for (path, folder) in read {
            if folder {
                walk(&path, files, walked)?;
            } else if walked.take(&path) {
                files.push(path);
            }
        }
        Ok(())
    }
    for path in paths {
        if path.is_dir() {
            walk(path, &mut files, &mut walked)?;
        } else if path.exists() {
            if walked.take(path) {
                files.push(path.clone());
            }
        } else {
            bail!("{}: no such file or folder", path.display());
        }
    }
    Ok((files, walked.skipped))
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

/// Loads one file into the run `spec`: [`load_run`] of that file alone.
pub fn load_file(conn: &Connection, spec: &RunSpec, path: &Path) -> Result<LoadOutcome> {
    let mut outcomes = load_run(conn, spec, &[path.to_path_buf()])?;
    Ok(outcomes.remove(0))
}

/// What a run file holds, read and checked, in the rows it writes: a trajectory file is
/// kept as its verdicts (never as messages), every other file as read.
enum Rows {
    /// Per-instance reports, run-level reports and batch exit statuses, as read.
    Outcomes(RunFile),
    /// A file read for what it says of another (AutoCodeRover's `meta.json` and
    /// `extract_status.json`): recorded in the ingest log, no row of its own.
    Companion,
    /// A trajectory file's rows, and what an Inspect log says of its run as a whole.
    Trajectories(Vec<TrajectoryRow>, Option<crate::sft::formats::inspect::LogHeader>),
}

/// One `eval_trajectories` row (and its declared outcome).
struct TrajectoryRow {
    /// The run the row goes to: the load's, or an Inspect epoch's ([`super::inspect::epoch_run`]).
    run: String,
    instance_id: String,
    source: &'static str,
    exit_status: Option<String>,
    finish: &'static str,
    verdicts: super::symptoms::Verdicts,
    length_finishes: u32,
    token_limit: bool,
    declared_resolved: Option<bool>,
    /// The outcome the file states of the instance (shape `trajectory`) and its reason.
    outcome: Option<(Status, Option<String>)>,
}

/// The files and folders `paths` ([`expand`]ed) loaded into the run `spec` after
/// [`check_spec`]: the outcomes of [`load_run`], and the paths met and not read. This is
/// `load run` on a database already open (the CLI expands the paths before it opens the
/// database, so that a run with no file makes none).
///
/// Errors: those of [`check_spec`], [`expand`] and [`load_run`]; the database is then
/// unchanged.
pub fn load_paths(conn: &Connection, spec: &RunSpec, paths: &[PathBuf]) -> Result<(Vec<LoadOutcome>, Vec<Skipped>)> {
    check_spec(conn, spec)?;
    let (files, skipped) = expand(paths)?;
    Ok((load_run(conn, spec, &files)?, skipped))
}

/// Loads the files `paths` into the run `spec`, whole or not at all: every file is read,
/// hashed and parsed first (a trajectory reduced to its verdicts), the run's trajectories
/// are checked to name each instance once, and only then is everything written in one
/// transaction ([`ingest::load_files_whole`]). A file already loaded into this run (same
/// bytes, same path) is skipped as [`LoadOutcome::AlreadyLoaded`]. Returns one outcome
/// per file, in order.
///
/// Errors name the file (and line and field where the reader can): a file already loaded
/// into another run; a file that cannot be read or that its reader refuses; a trajectory
/// of an instance that another file of this load, or the run already loaded, has. The
/// database is then unchanged: nothing of any file is written.
pub fn load_run(conn: &Connection, spec: &RunSpec, paths: &[PathBuf]) -> Result<Vec<LoadOutcome>> {
    let mut files: Vec<ReadFile> = Vec::with_capacity(paths.len());
    let mut reads: Vec<Option<Rows>> = Vec::with_capacity(paths.len());
    let mut seen: std::collections::HashMap<(String, String), (PathBuf, usize)> = std::collections::HashMap::new();
    let mut earlier = conn.prepare(
        "select l.path from eval_trajectories as t join ingest_log as l using (file_id) where t.run = ? and t.instance_id = ?",
    )?;
    let mut tasks = acr_tasks(paths)?;
    for path in paths {
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
        let (file, read) = match tasks.take(path) {
            Some(companion) => (companion, Rows::Companion),
            None => {
                // the bytes are dropped once parsed: a trajectory is kept as its verdicts
                let (file, bytes) = ReadFile::read_bytes(path)?;
                let read = match tasks.of(path)? {
                    Some(task) => prepare_acr(spec, path, crate::ingest::json::utf8_document(path, &bytes)?, task)?,
                    None => prepare(spec, path, &bytes)?,
                };
                if let Rows::Trajectories(rows, _) = &read {
                    check_epoch_runs(conn, spec, path, rows)?;
                }
                (file, read)
            }
        };
        let same_bytes_here =
            ingest::earlier_load(conn, InputKind::Run, &file.sha256, &absolute.to_string_lossy())?.is_some();
        if let (Rows::Trajectories(rows, _), false) = (&read, same_bytes_here) {
            for (row, t) in rows.iter().enumerate() {
                let field = format!("[{row}]");
                if let Some((other, first)) = seen.insert((t.run.clone(), t.instance_id.clone()), (path.clone(), row)) {
                    let message = if other == *path {
                        format!("instance {} repeats row {first}", t.instance_id)
                    } else {
                        format!(
                            "instance {} has a trajectory in {} too (a run has one per instance)",
                            t.instance_id,
                            other.display()
                        )
                    };
                    return Err(InputError::at(path, None, Some(&field), message).into());
                }
                let run = t.run.as_str();
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
        }
        files.push(file);
        reads.push(Some(read));
    }
    let options = serde_json::json!({ "run": spec.name }).to_string();
    ingest::load_files_whole(conn, InputKind::Run, Some(&options), &files, |conn, file_id, i| {
        let path = &files[i].path;
        conn.execute(
            "insert into eval_run_specs (run, model, harness, continues, runaway_n) values (?, ?, ?, ?, ?) on conflict do nothing",
            params![spec.name, spec.model, spec.harness, spec.continues, spec.runaway_turns as i32],
        )?;
        let read = reads[i].take().expect("each file is written once");
        store(conn, spec, file_id, path, read).with_context(|| path.display().to_string())
    })
}

/// Reads one run file (its bytes) into the rows it writes (a trajectory reduced to its
/// verdicts with the run's runaway N; an Inspect sample in its epoch's run).
fn prepare(spec: &RunSpec, path: &Path, bytes: &[u8]) -> Result<Rows> {
    Ok(match files::read_bytes(path, bytes)? {
        RunFile::Trajectories(read) => Rows::Trajectories(
            read.into_iter().map(|(t, rec)| trajectory_row(spec, t, rec.exit_status, rec.length_finishes)).collect(),
            None,
        ),
        RunFile::Inspect(log) => {
            let header = log.header.clone();
            Rows::Trajectories(
                super::inspect::run_samples(path, &spec.name, log)?
                    .into_iter()
                    .map(|s| TrajectoryRow {
                        run: s.run,
                        outcome: s.outcome,
                        ..trajectory_row(spec, s.trajectory, s.exit_status, 0)
                    })
                    .collect(),
                header,
            )
        }
        other => Rows::Outcomes(other),
    })
}

/// Checks the runs other than `spec`'s that `rows` of `path` go to (an Inspect log's later
/// epochs) as [`check_spec`] checks a run: each loaded already must have the load's model,
/// harness and runaway N. Errors: that, or `--continues` given with such rows (a run
/// continues one run; each epoch would need its own).
fn check_epoch_runs(conn: &Connection, spec: &RunSpec, path: &Path, rows: &[TrajectoryRow]) -> Result<()> {
    let runs: std::collections::BTreeSet<&str> =
        rows.iter().map(|t| t.run.as_str()).filter(|r| *r != spec.name).collect();
    if let (Some(first), Some(continued)) = (runs.first(), &spec.continues) {
        bail!(
            "{}: the log runs several epochs, each loaded as a run of its own ({}, {first}, ...); --continues \
             {continued} names one run: load the log without --continues",
            path.display(),
            spec.name
        );
    }
    for run in runs {
        check_spec(conn, &RunSpec { name: run.to_string(), ..spec.clone() })
            .with_context(|| format!("{}: epochs after the first go to run {run}", path.display()))?;
    }
    Ok(())
}

/// A trajectory reduced to its `eval_trajectories` row.
fn trajectory_row(
    spec: &RunSpec,
    t: crate::sft::schema::Trajectory,
    exit_status: Option<String>,
    length_finishes: u32,
) -> TrajectoryRow {
    let exit = exit_status.as_deref();
    TrajectoryRow {
        run: spec.name.clone(),
        outcome: t.resolved.map(|r| (if r { Status::Resolved } else { Status::Unresolved }, None)),
        finish: finish(exit, &t).as_str(),
        verdicts: verdicts(&t, spec.runaway_turns),
        length_finishes,
        token_limit: length_finishes > 0 || exit_names_token_limit(exit),
        declared_resolved: t.resolved,
        instance_id: t.instance_id,
        source: t.source,
        exit_status,
    }
}

/// What an AutoCodeRover task folder of this load says of its attempt, from its
/// `meta.json` (the instance) and `extract_status.json` (the exit status).
struct AcrTask {
    instance_id: String,
    exit_status: Option<String>,
}

/// The AutoCodeRover task folders of a load: each folder's `meta.json` and
/// `extract_status.json`, read once before the other files (their records are handed to
/// the load by [`AcrTasks::take`]).
struct AcrTasks {
    tasks: std::collections::HashMap<PathBuf, AcrTask>,
    companions: std::collections::HashMap<PathBuf, ReadFile>,
}

impl AcrTasks {
    /// The record of a companion file already read (`meta.json`, `extract_status.json`).
    fn take(&mut self, path: &Path) -> Option<ReadFile> {
        self.companions.remove(path)
    }

    /// The task of the folder holding `path`, when that folder is a task folder. Errors: a
    /// conversation or report of a task folder whose `meta.json` is not in the load.
    fn of(&self, path: &Path) -> Result<Option<&AcrTask>> {
        let Some(dir) = path.parent().filter(|d| acr::is_task_folder(d)) else { return Ok(None) };
        let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        if !matches!(acr::role_of(&name), AcrRole::Conversation(_) | AcrRole::Report) {
            return Ok(None);
        }
        match self.tasks.get(dir) {
            Some(task) => Ok(Some(task)),
            None if !dir.join("meta.json").exists() => bail!(
                "{}: the AutoCodeRover task folder {} has no meta.json, which names the instance of its files",
                path.display(),
                dir.display()
            ),
            None => bail!(
                "{}: an AutoCodeRover task folder names its instance in meta.json: load the folder, or name {} too",
                path.display(),
                dir.join("meta.json").display()
            ),
        }
    }
}

/// Reads the `meta.json` and `extract_status.json` of every AutoCodeRover task folder
/// among `paths`. Errors name the file and field ([`acr::read_meta`],
/// [`acr::read_extract_status`]).
fn acr_tasks(paths: &[PathBuf]) -> Result<AcrTasks> {
    let mut tasks = std::collections::HashMap::new();
    let mut companions = std::collections::HashMap::new();
    let mut statuses = std::collections::HashMap::new();
    for path in paths {
        let Some(dir) = path.parent().filter(|d| acr::is_task_folder(d)) else { continue };
        let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        let role = acr::role_of(&name);
        if !matches!(role, AcrRole::Meta | AcrRole::ExtractStatus) {
            continue;
        }
        let (file, text) = ReadFile::read(path)?;
        if role == AcrRole::Meta {
            let instance_id = acr::read_meta(path, &text)?;
            tasks.insert(dir.to_path_buf(), AcrTask { instance_id, exit_status: None });
        } else {
            statuses.insert(dir.to_path_buf(), acr::read_extract_status(path, &text)?);
        }
        companions.insert(path.clone(), file);
    }
    for (dir, status) in statuses {
        if let Some(task) = tasks.get_mut(&dir) {
            task.exit_status = Some(status);
        }
    }
    Ok(AcrTasks { tasks, companions })
}

/// A conversation or report of an AutoCodeRover task folder: the trajectory of the
/// instance `meta.json` names, or the harness verdict of that instance (a flat report is
/// named by it; a report keyed by id must name it).
fn prepare_acr(spec: &RunSpec, path: &Path, text: &str, task: &AcrTask) -> Result<Rows> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if acr::role_of(&name) == AcrRole::Report {
        let filed = Some((task.instance_id.as_str(), "the task folder's meta.json"));
        let report = crate::sft::outcomes::read_report_filed(path, text, filed)?;
        return Ok(Rows::Outcomes(files::instance_report(path, report)?));
    }
    let t = acr::read_conversation(path, text, &task.instance_id)?;
    Ok(Rows::Trajectories(vec![trajectory_row(spec, t, task.exit_status.clone(), 0)], None))
}

fn store(conn: &Connection, spec: &RunSpec, file_id: i32, path: &Path, read: Rows) -> Result<i64> {
    let run = spec.name.as_str();
    let read = match read {
        Rows::Outcomes(read) => read,
        Rows::Companion => return Ok(0),
        Rows::Trajectories(rows, header) => {
            // an Inspect log's later epochs: runs of their own, with this load's spec
            let runs: std::collections::BTreeSet<&str> = rows.iter().map(|t| t.run.as_str()).collect();
            if let Some(h) = &header {
                // the log's header judges each run its samples went to, and the load's
                for each in runs.iter().copied().chain(std::iter::once(run)).collect::<std::collections::BTreeSet<_>>()
                {
                    conn.execute(
                        "insert into eval_log_headers values (?, ?, ?, ?, ?, ?, ?, ?)",
                        params![
                            each,
                            file_id,
                            h.status,
                            h.dataset_samples,
                            h.epochs,
                            h.total_samples,
                            h.completed_samples,
                            h.error
                        ],
                    )?;
                }
            }
            for other in runs.into_iter().filter(|r| *r != run) {
                conn.execute(
                    "insert into eval_run_specs (run, model, harness, continues, runaway_n) values (?, ?, ?, ?, ?) \
                     on conflict do nothing",
                    params![other, spec.model, spec.harness, spec.continues, spec.runaway_turns as i32],
                )?;
            }
            let mut app = conn.appender("eval_trajectories")?;
            for (row, t) in rows.iter().enumerate() {
                let v = &t.verdicts;
                app.append_row(params![
                    t.run,
                    t.instance_id,
                    t.source,
                    t.exit_status,
                    t.finish,
                    v.assistant_turns as i32,
                    v.turns_before_first_edit.map(|n| n as i32),
                    v.git_history_commands as i32,
                    v.long_repetition,
                    t.length_finishes as i32,
                    t.token_limit,
                    v.runaway,
                    v.pass_after_last_edit,
                    t.declared_resolved,
                    file_id,
                    row as i32 + 1
                ])?;
            }
            app.flush()?;
            let mut app = conn.appender("eval_outcomes")?;
            for t in &rows {
                if let Some((status, _)) = &t.outcome {
                    app.append_row(params![t.run, t.instance_id, status.as_str(), "trajectory", file_id])?;
                }
            }
            app.flush()?;
            let mut app = conn.appender("eval_outcome_notes")?;
            for t in &rows {
                if let Some((_, Some(reason))) = &t.outcome {
                    app.append_row(params![t.run, t.instance_id, file_id, reason, false])?;
                }
            }
            app.flush()?;
            return Ok(rows.len() as i64);
        }
    };
    match read {
        RunFile::InstanceReport { shape, instance_id, status, reason } => {
            conn.execute(
                "insert into eval_outcomes values (?, ?, ?, ?, ?)",
                params![run, instance_id, status.as_str(), shape, file_id],
            )?;
            if reason.is_some() {
                conn.execute(
                    "insert into eval_outcome_notes values (?, ?, ?, ?, false)",
                    params![run, instance_id, file_id, reason],
                )?;
            }
            Ok(1)
        }
        RunFile::Listing { shape, outcomes, reported } => {
            let per_instance = reported.as_ref().is_none_or(|r| r.per_instance);
            // eval_listings holds reports that list ids (an unlisted instance is implied);
            // a count-only report lists none: it is kept in eval_run_reports alone
            if per_instance {
                conn.execute("insert into eval_listings values (?, ?, ?)", params![run, file_id, shape])?;
            }
            if let Some(r) = &reported {
                let c = |name: &str| r.counts.get(name).copied();
                conn.execute(
                    "insert into eval_run_reports values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    params![
                        run,
                        file_id,
                        shape,
                        r.schema_version,
                        per_instance,
                        c("total"),
                        c("submitted"),
                        c("completed"),
                        c("resolved"),
                        c("unresolved"),
                        c("empty_patch"),
                        c("error"),
                        c("failed"),
                        c("infra_failure"),
                        c("ambiguous_failure"),
                        c("pending"),
                        c("incomplete")
                    ],
                )?;
            }
            let mut app = conn.appender("eval_outcomes")?;
            for l in &outcomes {
                app.append_row(params![run, l.instance_id, l.status.as_str(), shape, file_id])?;
            }
            app.flush()?;
            let mut app = conn.appender("eval_outcome_notes")?;
            for l in outcomes.iter().filter(|l| l.reason.is_some() || l.ambiguous) {
                app.append_row(params![run, l.instance_id, file_id, l.reason, l.ambiguous])?;
            }
            app.flush()?;
            // rows: the instances listed; a count-only report writes its one row of figures
            let rows = if per_instance { outcomes.len() } else { 1 };
            Ok(rows as i64)
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
        RunFile::Trajectories(_) | RunFile::Inspect(_) => bail!("a trajectory file is written as its rows"),
    }
}
