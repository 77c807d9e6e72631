//! Loads trajectories and evaluator outcomes into the database, one transaction per
//! file, bound in the ingest log (kinds `trajectories` and `outcomes`).
//!
//! Trajectories of any supported format ([`trajectories::read_bytes`]) become rows
//! of `sft_trajectories`, `sft_messages`, `sft_tool_calls` and `sft_commands`; the
//! git-history verdict of each shell command ([`trajectories::is_git_history_command`])
//! is stored as a column. Several trajectories of one instance are kept as attempts
//! ([`attempts`]). A SWE-bench `report.json` becomes a row of `sft_outcomes`.
//! Outcomes enter only through `load outcomes`: no reader looks beside a trajectory for
//! a report, so every stored outcome is an input bound by path and SHA-256. Thinking
//! lengths re-tokenized at load record the tokenizer's SHA-256 beside them
//! (`sft_messages.reasoning_tokenizer_sha256`).

use super::attempts::{self, Attempt};
use super::trajectories::{self, Trajectory};
use super::views::family_of;
use crate::ingest::read::TokenizerFile;
use crate::ingest::{self, InputError, InputKind, LoadOutcome};
use anyhow::{Context, Result};
use duckdb::{Connection, params};
use serde_json::Value;
use std::path::Path;

/// Structured tool calls that edit files (unless their `command` argument is `view`):
/// SWE-agent's, OpenHands' and Anthropic's editors, and Inspect AI's `text_editor`.
pub const EDIT_TOOLS: &[&str] = &[
    "edit",
    "create",
    "insert",
    "append",
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "write_file",
    "text_editor",
];

/// Loads one trajectory file (any supported format; one or many trajectories), read
/// once. With a `tokenizer`, thinking bodies are re-tokenized and its SHA-256 is stored
/// beside each length and in the ingest log's options. A Parquet file (or a folder or
/// glob of shards: [`load_trajectories_all`]) is read row by row, each row as the JSON
/// object DuckDB's `to_json` writes of it.
///
/// Several trajectories of one instance are kept, each as an attempt
/// ([`attempts::number`]: the attempt's key in `sft_trajectories.instance_id`, the
/// instance and attempt beside it).
///
/// Errors: the reader rejects the file (naming row, message and field), a trajectory has
/// no message, or [`attempts::number`] refuses one (the same messages as an attempt loaded
/// from another file); the database is then unchanged.
pub fn load_trajectories(conn: &Connection, path: &Path, tokenizer: Option<&TokenizerFile>) -> Result<LoadOutcome> {
    if crate::ingest::parquet::is_shard_set(path) {
        anyhow::bail!(
            "{}: not a regular file (a directory, pipe or device, or a glob); a folder or glob of Parquet shards \
             loads with load_trajectories_all",
            path.display()
        );
    }
    let mut outcomes = load_trajectories_all(conn, path, tokenizer)?;
    Ok(outcomes.pop().expect("one file, one outcome"))
}

/// [`load_trajectories`] for any argument: a file, or a folder or glob of Parquet shards
/// (every `*.parquet` in name order, in ONE transaction, each shard its own ingest-log
/// entry). Returns one outcome per file.
///
/// Errors: as [`load_trajectories`]; a Parquet row is named by its 1-based row and
/// column ([`crate::ingest::parquet::RowError`]).
pub fn load_trajectories_all(
    conn: &Connection,
    path: &Path,
    tokenizer: Option<&TokenizerFile>,
) -> Result<Vec<LoadOutcome>> {
    let options = tokenizer.map(|t| serde_json::json!({ "tokenizer_sha256": t.sha256 }).to_string());
    if ingest::parquet::is_parquet_arg(path) {
        let files = ingest::parquet::shards(conn, path)?;
        let reader = conn.try_clone()?;
        return ingest::load_read_whole(
            conn,
            InputKind::Trajectories,
            options.as_deref(),
            files.len(),
            |i| ingest::parquet::stage(&files[i]),
            |conn, file_id, file, staged| {
                let path = &file.path;
                let text = staged.json_lines(&reader, path)?;
                if text.is_empty() {
                    anyhow::bail!("{}: no row: a Parquet trajectory file holds one trajectory a row", path.display());
                }
                let read =
                    trajectories::detect_and_read(path, &text).map_err(|e| ingest::parquet::name_rows(path, e))?;
                write_file(conn, path, file_id, read, tokenizer).map_err(|e| ingest::parquet::name_rows(path, e))
            },
        );
    }
    let outcome =
        ingest::load_file(conn, path, InputKind::Trajectories, options.as_deref(), |conn, file_id, input| {
            // an Inspect AI .eval log is a zip: bytes, unzipped in memory; the rest is text
            let bytes = input.read_all()?;
            let read = trajectories::read_bytes(path, &bytes)?;
            write_file(conn, path, file_id, read, tokenizer)
        })?;
    Ok(vec![outcome])
}

/// Stores `read`, the trajectories of the file `path` (or of a Parquet file's rows), under
/// `file_id`. Returns the number stored.
///
/// Errors: a trajectory without messages, or [`attempts::number`] refuses one.
fn write_file(
    conn: &Connection,
    path: &Path,
    file_id: i32,
    read: Vec<Trajectory>,
    tokenizer: Option<&TokenizerFile>,
) -> Result<i64> {
    for (row, t) in read.iter().enumerate() {
        if t.instance_id.trim().is_empty() {
            return Err(InputError::at(path, None, Some(&format!("[{row}].instance_id")), "must not be empty").into());
        }
        if t.messages.is_empty() {
            return Err(InputError::at(
                path,
                None,
                Some(&format!("[{row}]")),
                format!("trajectory {} has no message", t.instance_id),
            )
            .into());
        }
    }
    let attempts = attempts::number(conn, path, &read)?;
    store(conn, file_id, &read, &attempts, tokenizer).with_context(|| path.display().to_string())
}

fn store(
    conn: &Connection,
    file_id: i32,
    read: &[Trajectory],
    attempts: &[Attempt],
    tokenizer: Option<&TokenizerFile>,
) -> Result<i64> {
    use crate::rules::compress::{DEFAULT_MAX_RATIO, DEFAULT_MIN_CHARS, is_long_repetition, zlib_ratio};
    let mut trajectories = conn.appender("sft_trajectories")?;
    let mut messages = conn.appender("sft_messages")?;
    let mut calls = conn.appender("sft_tool_calls")?;
    let mut commands = conn.appender("sft_commands")?;
    use super::heuristics::{is_test_command, is_write_command, test_result};
    for (row, (t, at)) in read.iter().zip(attempts).enumerate() {
        let key = &at.key;
        let tools = t.tools.as_ref().map(Value::to_string);
        // Heuristic verdicts per message: does an assistant message run tests or write a
        // file, and what does the observation after a test run say.
        let mut runs_test = vec![false; t.messages.len()];
        let mut writes = vec![false; t.messages.len()];
        let mut result: Vec<Option<&'static str>> = vec![None; t.messages.len()];
        let mut pending_test = false;
        for (i, m) in t.messages.iter().enumerate() {
            if m.role == trajectories::Role::Assistant {
                let commands = trajectories::bash_commands(m);
                runs_test[i] = commands.iter().any(|c| is_test_command(c));
                writes[i] = commands.iter().any(|c| is_write_command(c))
                    || m.tool_calls.iter().any(|c| {
                        EDIT_TOOLS.contains(&c.name.as_str())
                            && c.arguments.get("command").and_then(Value::as_str) != Some("view")
                    });
                pending_test = runs_test[i];
            } else if pending_test && m.role != trajectories::Role::System {
                result[i] = test_result(&m.text).map(|r| r.as_str());
                pending_test = false;
            }
        }
        trajectories.append_row(params![
            key,
            t.source,
            t.repo.as_deref().and_then(super::family::family_from_repo).or_else(|| family_of(&t.instance_id)),
            tools,
            t.resolved,
            t.messages.len() as i32,
            file_id,
            row as i32 + 1,
            at.instance,
            at.attempt
        ])?;
        for m in &t.messages {
            messages.append_row(params![
                key,
                m.index as i32,
                m.role.as_str(),
                m.text,
                m.reasoning,
                m.reasoning.as_ref().map(|r| r.chars().count() as i64),
                match (tokenizer, &m.reasoning) {
                    (Some(t), Some(r)) => Some(
                        t.tokenizer
                            .encode(r.as_str(), false)
                            .map_err(|e| anyhow::anyhow!("tokenizing thinking text: {e}"))?
                            .len() as i64,
                    ),
                    _ => None,
                },
                m.reasoning.as_deref().and_then(zlib_ratio),
                m.reasoning.as_deref().map(|r| is_long_repetition(r, DEFAULT_MIN_CHARS, DEFAULT_MAX_RATIO)),
                runs_test[m.index],
                writes[m.index],
                result[m.index],
                m.tool_call_id,
                m.tool_name,
                m.returncode,
                m.mask,
                m.loss_weight,
                m.train,
                match (tokenizer, &m.reasoning) {
                    (Some(t), Some(_)) => Some(t.sha256.as_str()),
                    _ => None,
                }
            ])?;
            for (k, c) in m.tool_calls.iter().enumerate() {
                calls.append_row(params![
                    key,
                    m.index as i32,
                    k as i32,
                    c.id,
                    c.name,
                    c.arguments.to_string(),
                    c.from_text
                ])?;
            }
            if m.role == trajectories::Role::Assistant {
                // call_index is the index of the tool call the command comes from (so
                // sft_tool_call_classes_v1 can tell shell calls apart), not an ordinal
                // among commands.
                for (k, command) in trajectories::shell_calls(m) {
                    let command = &command;
                    commands.append_row(params![
                        key,
                        m.index as i32,
                        k as i32,
                        command,
                        trajectories::is_git_history_command(command),
                        is_test_command(command),
                        is_write_command(command)
                    ])?;
                }
            }
        }
    }
    trajectories.flush().context("writing trajectories")?;
    messages.flush()?;
    calls.flush()?;
    commands.flush()?;
    Ok(read.len() as i64)
}

/// Loads one SWE-bench `report.json`, read once. The instance is the report's single
/// top-level key when it is nested (`{"<id>": {...}}`), else the name of the folder
/// holding the file (`logs/<id>/report.json`). This is the only way an outcome enters
/// the database.
///
/// Errors: not a report, strictly ([`trajectories::read_report`]: file, line, field),
/// an outcome already loaded for the instance.
pub fn load_outcome(conn: &Connection, path: &Path) -> Result<LoadOutcome> {
    ingest::load_file(conn, path, InputKind::Outcomes, None, |conn, file_id, input| {
        let text = input.read_text()?;
        let report = trajectories::read_report(path, &text)?;
        let instance_id = report.instance_id.ok_or_else(|| {
            InputError::at(path, None, None, "cannot name the instance: put the report in logs/<id>/")
        })?;
        let outcome = report.outcome;
        // Ungraded (no tests_status) is stored as NULL counts, never as 0 results.
        let graded = |n: usize| outcome.graded.then_some(n as i32);
        conn.execute(
            "insert into sft_outcomes values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            params![
                instance_id,
                outcome.resolved,
                graded(outcome.fail_to_pass.success),
                graded(outcome.fail_to_pass.failure),
                graded(outcome.pass_to_pass.success),
                graded(outcome.pass_to_pass.failure),
                file_id,
                outcome.infra_failure,
                outcome.infra_failure_reason,
                outcome.patch_is_none
            ],
        )
        .with_context(|| format!("{}: an outcome for {instance_id} is already loaded", path.display()))?;
        Ok(1)
    })
}
