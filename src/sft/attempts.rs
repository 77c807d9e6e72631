//! Several trajectories of one instance (issue 27): published trajectory sets (SWE-smith,
//! nebius SWE-agent trajectories, SWE-Gym) hold several attempts at one SWE-bench
//! instance, failed ones included. Each is kept as its own trajectory, numbered by
//! [`number`]; none is refused as a repeat of another.
//!
//! * **Attempt**: 0-based, in order of loading: file order within a file; a later file's
//!   trajectories of an instance already loaded continue after its last attempt. Loading
//!   the same files in the same order numbers them the same way; loading the same bytes
//!   again is skipped whole by the ingest log (`trajectories` kind), as before.
//! * **Declared attempt**: a format that numbers its attempts itself ([`Trajectory::attempt`]:
//!   Inspect AI's epochs, epoch `n` is attempt `n − 1`) keeps its numbers, not its file
//!   order: epochs 1 and 2 of a sample are attempts 0 and 1 wherever they stand in the
//!   log. When an earlier file already loaded attempts of the instance, the file's
//!   declared numbers are kept if all of them come after the last loaded attempt (a lone
//!   epoch-2 sample after epoch 1: attempt 1), else all of them move up by the last
//!   loaded attempt + 1 (a second log of the same task, epochs 1 and 2 after 0 and 1:
//!   attempts 2 and 3), so no two files contend for one number. A declared number that
//!   the file itself holds twice (two samples of one epoch) is refused, naming both rows.
//! * **Key** (`sft_trajectories.instance_id`, which `sft_messages`, `sft_tool_calls`,
//!   `sft_commands` and the views `views build` renders use): the instance itself for
//!   attempt 0, so a corpus with one trajectory per instance reads exactly as before;
//!   `<instance>#<attempt>` for later attempts ([`trajectory_key`]).
//! * **Refused**: a trajectory whose messages equal, message for message (role, text,
//!   thinking text, tool calls), an attempt of its instance already loaded *from another
//!   file*: the same trajectory loaded twice through two files (a copy, a subset, a
//!   re-export) would otherwise count twice. Within one file every row is kept, identical
//!   or not (the publisher's rows, as published); `check_sft_attempts_v1` reports identical
//!   attempts. A key that another trajectory already holds (an instance id that itself
//!   reads `<instance>#<n>`) is refused too, naming both.

use super::schema::Trajectory;
use crate::ingest::InputError;
use anyhow::Result;
use duckdb::{Connection, OptionalExt};
use std::collections::HashMap;
use std::path::Path;

/// Where one trajectory of a load goes: its instance, attempt and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The SWE-bench instance (the reader's `instance_id`).
    pub instance: String,
    /// 0-based attempt at the instance, in order of loading.
    pub attempt: i32,
    /// `sft_trajectories.instance_id`: [`trajectory_key`] of the two.
    pub key: String,
}

/// The trajectory key of attempt `attempt` at `instance`: the instance for attempt 0,
/// else `<instance>#<attempt>` (e.g. `django__django-11099#2`).
pub fn trajectory_key(instance: &str, attempt: i32) -> String {
    if attempt == 0 { instance.to_string() } else { format!("{instance}#{attempt}") }
}

/// Numbers the trajectories `read` from `path` (in file order) as attempts of their
/// instances, after those already loaded in `conn` (a declared attempt as the module docs
/// say); one [`Attempt`] per trajectory, in the same order.
///
/// Errors ([`InputError`] naming the row `[i]` and its `instance_id`): a trajectory equal
/// to an attempt of its instance already loaded from another file (naming that file and
/// row), or a key another trajectory holds.
pub fn number(conn: &Connection, path: &Path, read: &[Trajectory]) -> Result<Vec<Attempt>> {
    let mut loaded_max = conn.prepare("select max(attempt) from sft_trajectories where instance = ?")?;
    // per instance: the last attempt loaded before this file, and the lowest attempt
    // this file declares
    let mut before: HashMap<&str, (Option<i32>, Option<i32>)> = HashMap::new();
    for t in read {
        let entry = match before.entry(t.instance_id.as_str()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((loaded_max.query_row([&t.instance_id], |r| r.get(0))?, None))
            }
        };
        if let Some(declared) = t.attempt {
            let declared = declared as i32;
            entry.1 = Some(entry.1.map_or(declared, |low: i32| low.min(declared)));
        }
    }
    // per instance: the next attempt in order of loading, and whether attempts of it were
    // loaded before this file
    let mut next: HashMap<&str, (i32, bool)> = HashMap::new();
    let mut keys: HashMap<String, usize> = HashMap::new();
    let mut holder = conn.prepare(
        "select t.instance, l.path, t.record from sft_trajectories as t join ingest_log as l using (file_id) \
         where t.instance_id = ?",
    )?;
    let mut out = Vec::with_capacity(read.len());
    for (row, t) in read.iter().enumerate() {
        let field = format!("[{row}].instance_id");
        let (max, lowest_declared) = before[t.instance_id.as_str()];
        let (n, loaded) = next.entry(t.instance_id.as_str()).or_insert((max.map_or(0, |m| m + 1), max.is_some()));
        let loaded = *loaded;
        let attempt = match t.attempt {
            Some(declared) => {
                let keep = max.is_none_or(|m| lowest_declared.is_some_and(|low| low > m));
                let attempt = declared as i32 + if keep { 0 } else { max.map_or(0, |m| m + 1) };
                *n = (*n).max(attempt + 1);
                attempt
            }
            None => {
                *n += 1;
                *n - 1
            }
        };
        if loaded && let Some((key, earlier, record)) = identical_loaded(conn, t)? {
            return Err(InputError::at(
                path,
                None,
                Some(&field),
                format!(
                    "this trajectory of {} is already loaded from {earlier} (row {record}, trajectory {key}): \
                     the same messages, so it would count twice",
                    t.instance_id
                ),
            )
            .into());
        }
        let key = trajectory_key(&t.instance_id, attempt);
        if let Some(other) = keys.get(&key) {
            return Err(InputError::at(
                path,
                None,
                Some(&field),
                format!(
                    "attempt {attempt} of {} would be stored as {key}, which row {other} of this file already takes",
                    t.instance_id
                ),
            )
            .into());
        }
        if let Some((instance, earlier, record)) = holder
            .query_row([&key], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i32>(2)?)))
            .optional()?
        {
            return Err(InputError::at(
                path,
                None,
                Some(&field),
                format!(
                    "attempt {attempt} of {} would be stored as {key}, which a trajectory of {instance} loaded from \
                     {earlier} (row {record}) already holds",
                    t.instance_id
                ),
            )
            .into());
        }
        keys.insert(key.clone(), row);
        out.push(Attempt { instance: t.instance_id.clone(), attempt, key });
    }
    Ok(out)
}

/// The first loaded attempt of `t`'s instance whose messages equal `t`'s (role, text,
/// thinking text, then tool calls by name and arguments), as `(key, path, record)`.
fn identical_loaded(conn: &Connection, t: &Trajectory) -> Result<Option<(String, String, i32)>> {
    let mut attempts = conn.prepare(
        "select t.instance_id, l.path, t.record, t.n_messages from sft_trajectories as t \
         join ingest_log as l using (file_id) where t.instance = ? order by t.attempt",
    )?;
    let loaded = attempts
        .query_map([&t.instance_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<duckdb::Result<Vec<(String, String, i32, i32)>>>()?;
    let mut messages =
        conn.prepare("select role, text, reasoning from sft_messages where instance_id = ? order by msg_index")?;
    let mut calls = conn
        .prepare("select name, arguments from sft_tool_calls where instance_id = ? order by msg_index, call_index")?;
    let own_messages: Vec<(String, String, Option<String>)> =
        t.messages.iter().map(|m| (m.role.as_str().to_string(), m.text.clone(), m.reasoning.clone())).collect();
    let own_calls: Vec<(String, String)> = t
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| (c.name.clone(), c.arguments.to_string())))
        .collect();
    for (key, path, record, n) in loaded {
        if n as usize != t.messages.len() {
            continue;
        }
        let stored = messages
            .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<duckdb::Result<Vec<(String, String, Option<String>)>>>()?;
        if stored != own_messages {
            continue;
        }
        let stored = calls
            .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<duckdb::Result<Vec<(String, String)>>>()?;
        if stored == own_calls {
            return Ok(Some((key, path, record)));
        }
    }
    Ok(None)
}
