//! Inspect AI evaluation logs (UK AISI's `inspect_ai`, `inspect_ai/log/`): every sample
//! of a log is one trajectory.
//!
//! Three shapes are read:
//!
//! * a **`.eval` archive** (a zip; deflate in older logs, zstd in newer): `header.json`
//!   (the log without its samples; `_journal/start.json` while the run is still being
//!   written) and one `samples/<id>_epoch_<n>.json` member per sample, read in the
//!   archive's order. The archive's bytes are read once by the input layer and unzipped
//!   in memory ([`read_eval_archive`]); an error names the member as a path inside the
//!   archive (`run.eval/samples/3_epoch_1.json`, as Python's `zipfile.Path` writes it);
//! * a **`.json` log**: one JSON document, `version`, `eval` {`task`, `config`
//!   {`epochs`}} and `samples` ([`read_log`]); errors name `samples[2].messages[3].role`;
//! * **one sample** as a JSON object (a member taken out of an archive), or JSON lines
//!   of samples ([`InspectSample`], in [`super::FORMATS`]).
//!
//! A sample: `id` (a string or an integer), `epoch` (from 1), `messages`, `scores`,
//! `metadata`, `attachments`. Its messages, by `role`:
//!
//! | `role` | here |
//! |---|---|
//! | `system`, `user` | the same |
//! | `assistant` | assistant: `tool_calls` [{`id`, `function`, `arguments`}] as structured calls; `reasoning` content parts as thinking |
//! | `tool` | tool: `tool_call_id`; tool name `function`, else the call's; empty `content` with an `error` → the error's `message` |
//!
//! `content` is a string or a list of parts: `text` parts are the text, `reasoning`
//! parts the thinking (a `redacted` one gives its `summary`, else nothing: its
//! `reasoning` is the provider's encrypted blob), concatenated in order; any other part
//! (image, audio, video, document, data, tool_use) is refused at its `type`. A string
//! `attachment://<hash>` is replaced by the sample's `attachments[<hash>]`.
//!
//! * **Instance and attempt**: the instance is the sample `id`; every epoch of a sample
//!   is an attempt of it, numbered by its `epoch`, not by its place in the file: epoch
//!   1 is attempt 0, epoch `n` attempt `n − 1` ([`Trajectory::attempt`]; the store keys
//!   them `<id>` and `<id>#<n − 1>`, [`crate::sft::attempts`]). A lone sample too: epoch
//!   2 of `calc__add-1` is `calc__add-1#1`. An `epoch` below 1 is refused.
//! * **Resolved** ([`declared_resolved`]): from `scores`, only when unambiguous.
//! * **Repo**: `metadata.repo` (`owner/name`, as inspect_evals' SWE-bench samples carry it).
//!
//! An evaluation run (`load run`, [`crate::eval::inspect`]) reads the same samples with
//! what it needs beside the trajectory ([`SampleRead`]: the sample's `error` and
//! `limit`, whether it was scored) through [`read_log_samples`] and
//! [`read_eval_samples`]: each log is parsed once, by this module.

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::Value;

use super::access::{Loc, Object, from_value, join, kind};
use super::openai::{call_arguments, link_tool_names};
use super::{Container, Record, TrajectoryFormat};
use crate::ingest::InputError;
use crate::ingest::anomaly::{self, Anomaly, Recorded};
use crate::sft::schema::{Message, Role, SOURCE_INSPECT, ToolCall, Trajectory};

/// Whether `bytes` are a zip archive (its local file header `PK\x03\x04`), as Inspect
/// tells an `.eval` log from a `.json` one.
pub fn is_eval_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

/// Whether a JSON document is an Inspect `.json` log: a number `version` and an `eval`
/// object naming its `task`.
pub fn is_log(v: &Value) -> bool {
    v.get("version").is_some_and(Value::is_number) && v.pointer("/eval/task").is_some_and(Value::is_string)
}

/// One sample of an Inspect log, the format's record: the fields read.
#[derive(Deserialize)]
pub struct InspectSample {
    #[serde(deserialize_with = "sample_id")]
    id: String,
    epoch: u64,
    #[serde(default)]
    messages: Vec<Object<InspectMessage>>,
    scores: Option<HashMap<String, Option<Object<Score>>>>,
    metadata: Option<Value>,
    #[serde(default)]
    attachments: HashMap<String, String>,
    /// The sample's failure (Inspect's `EvalError`): its `message` is read.
    error: Option<Object<ErrorMessage>>,
    /// The limit that stopped the sample (`EvalSampleLimit`): its `type` is read.
    limit: Option<Object<Limit>>,
}

/// One sample of an Inspect log, read: its trajectory and what an evaluation run reads
/// beside it.
#[derive(Debug)]
pub struct SampleRead {
    /// The sample as a trajectory: instance the sample `id`, attempt `epoch` − 1.
    pub trajectory: Trajectory,
    /// The sample's `epoch` (from 1).
    pub epoch: u64,
    /// The file that holds the sample, as errors name it: the log, or an archive member
    /// as a path inside the archive (`run.eval/samples/7_epoch_1.json`).
    pub file: PathBuf,
    /// The sample's path in that file: `samples[2]` in a `.json` log, empty for an
    /// archive member (errors name `samples[2].scores`, or `scores`).
    pub at: String,
    /// Whether the sample was scored: `scores` holds at least one entry.
    pub scored: bool,
    /// The sample's `error.message`: the sample failed (its solver or sandbox raised).
    pub error: Option<String>,
    /// The sample's `limit.type` (`message`, `token`, `time`, `working`, `cost`, ...):
    /// that limit stopped it.
    pub limit: Option<String>,
}

/// An Inspect log, read whole: its samples in order.
#[derive(Debug)]
pub struct LogRead {
    /// One per sample (and epoch), in the log's order.
    pub samples: Vec<SampleRead>,
    /// Whether the log is finished: a `.json` log always is; an archive when it holds
    /// `header.json` (a run still being written has only `_journal/start.json`).
    pub finished: bool,
    /// What the log says of its run as a whole ([`log_header`]); `None` for an archive
    /// without `header.json`.
    pub header: Option<LogHeader>,
}

/// What an Inspect log says of its run as a whole: the archive's `header.json`, or the top
/// level of a `.json` log (inspect_ai's `EvalLog` without its samples). A log is written
/// however the run ends: only `status` `success` says every sample ran; a `cancelled`
/// (interrupted) or `error` (the run raised) log holds the samples finished before.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogHeader {
    /// `status`: `started`, `success`, `cancelled` or `error`, as written; `None` when absent.
    pub status: Option<String>,
    /// `eval.dataset.samples`: the dataset's size.
    pub dataset_samples: Option<i64>,
    /// `eval.config.epochs`.
    pub epochs: Option<i64>,
    /// `results.total_samples`: the samples the run was to run, epochs included.
    pub total_samples: Option<i64>,
    /// `results.completed_samples`.
    pub completed_samples: Option<i64>,
    /// `error.message`: why a run with status `error` stopped.
    pub error: Option<String>,
}

/// The [`LogHeader`] of the Inspect log document `v` read from `path` (the archive member
/// `run.eval/header.json`, or the `.json` log). Absent fields and nulls are `None`.
///
/// Errors, naming the field: the header not an object; `status` or `error.message` not a
/// string, `error` not an object; `eval.dataset.samples`, `results.total_samples` or
/// `results.completed_samples` not an integer of 0 or more, `eval.config.epochs` not one of
/// 1 or more. A count written `NaN` or `Infinity` (read as null under the anomaly policy) is
/// refused by [`refuse_replaced_counts`].
pub fn log_header(path: &Path, v: &Value) -> Result<LogHeader> {
    let loc = Loc::file(path);
    if !v.is_object() {
        return Err(loc.err("", format!("invalid type: {}, expected an object (the log's header)", kind(v))));
    }
    if let Some(error) = v.get("error").filter(|e| !e.is_null() && !e.is_object()) {
        return Err(loc.err("error", format!("invalid type: {}, expected an object with a message", kind(error))));
    }
    let at = |keys: &[&str]| keys.iter().try_fold(v, |cur, k| cur.get(k)).filter(|x| !x.is_null());
    let text = |keys: &[&str]| match at(keys) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(loc.err(&keys.join("."), format!("invalid type: {}, expected a string", kind(other)))),
    };
    let count = |keys: &[&str]| match at(keys) {
        None => Ok(None),
        Some(x) => x.as_u64().and_then(|n| i64::try_from(n).ok()).map(Some).ok_or_else(|| {
            loc.err(&keys.join("."), format!("invalid value: {x}, expected a count (an integer of 0 or more)"))
        }),
    };
    let epochs = count(&["eval", "config", "epochs"])?;
    if epochs == Some(0) {
        return Err(loc.err(
            "eval.config.epochs",
            "invalid value: 0, expected 1 or more (Inspect runs every sample once per epoch)",
        ));
    }
    Ok(LogHeader {
        status: text(&["status"])?,
        dataset_samples: count(&["eval", "dataset", "samples"])?,
        epochs,
        total_samples: count(&["results", "total_samples"])?,
        completed_samples: count(&["results", "completed_samples"])?,
        error: text(&["error", "message"])?,
    })
}

/// A sample `id`: a string, or an integer written as its digits.
fn sample_id<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(s) => Ok(s),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        other => Err(de::Error::custom(format!("invalid type: {}, expected a string or an integer", kind(&other)))),
    }
}

/// One `messages` entry (ChatMessageSystem / User / Assistant / Tool).
#[derive(Deserialize)]
struct InspectMessage {
    role: String,
    #[serde(default)]
    content: Value,
    tool_calls: Option<Vec<Object<InspectCall>>>,
    /// A string on tool messages (a list on user messages, not read).
    tool_call_id: Option<Value>,
    function: Option<String>,
    error: Option<Object<ErrorMessage>>,
}

/// One assistant `tool_calls` entry.
#[derive(Deserialize)]
struct InspectCall {
    id: String,
    function: String,
    arguments: Option<Value>,
}

/// An `error` object, of a tool message (its `type` is not read) or of a sample (its
/// `traceback` is not read).
#[derive(Deserialize)]
struct ErrorMessage {
    message: String,
}

/// A sample's `limit` (its `limit` figure is not read).
#[derive(Deserialize)]
struct Limit {
    #[serde(rename = "type")]
    kind: String,
}

/// One `scores` entry: its `value` (`NaN`, Inspect's "unscored", reads as null).
#[derive(Deserialize)]
struct Score {
    #[serde(default)]
    value: Value,
}

/// A score value as a verdict: `true`, `"C"` (Inspect's CORRECT) and the number 1 are
/// resolved; `false`, `"I"` (INCORRECT) and 0 are not; anything else (`"P"` partial,
/// `"N"` no answer, other numbers, lists, dictionaries, unscored) is no verdict.
pub fn score_verdict(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "C" => Some(true),
        Value::String(s) if s == "I" => Some(false),
        Value::Number(n) if n.as_f64() == Some(1.0) => Some(true),
        Value::Number(n) if n.as_f64() == Some(0.0) => Some(false),
        _ => None,
    }
}

/// The sample's declared verdict from its scores' values ([`score_verdict`]): set only
/// when there is at least one score, every score gives a verdict and they agree; `None`
/// otherwise (no scores, a score without a verdict, scorers that disagree).
pub fn declared_resolved<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<bool> {
    let mut verdict = None;
    for v in values {
        let this = score_verdict(v)?;
        if verdict.is_some_and(|was| was != this) {
            return None;
        }
        verdict = Some(this);
    }
    verdict
}

/// The role of an Inspect message `role`.
fn role_of(role: &str) -> Option<Role> {
    match role {
        "system" => Some(Role::System),
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "tool" => Some(Role::Tool),
        _ => None,
    }
}

impl InspectSample {
    /// A text string, `attachment://<hash>` replaced by the attachment. Errors: an
    /// attachment the sample does not hold, at `at`.
    fn resolve(&self, loc: &Loc, at: &str, s: &str) -> Result<String> {
        match s.strip_prefix("attachment://") {
            None => Ok(s.to_string()),
            Some(hash) => self.attachments.get(hash).cloned().ok_or_else(|| {
                loc.err(at, format!("names attachment {hash:?}, which the sample's `attachments` do not hold"))
            }),
        }
    }

    /// A message's `content` at `at` as (text, thinking); see the module docs.
    fn content(&self, loc: &Loc, at: &str, v: &Value) -> Result<(String, Option<String>)> {
        let parts = match v {
            Value::Null => return Ok((String::new(), None)),
            Value::String(s) => return Ok((self.resolve(loc, at, s)?, None)),
            Value::Array(parts) => parts,
            other => {
                return Err(loc.err(at, format!("invalid type: {}, expected a string or a list of parts", kind(other))));
            }
        };
        let (mut text, mut reasoning) = (String::new(), None::<String>);
        for (k, part) in parts.iter().enumerate() {
            let part_at = format!("{at}[{k}]");
            let Some(p) = part.as_object() else {
                return Err(loc.err(&part_at, format!("invalid type: {}, expected an object", kind(part))));
            };
            let string =
                |field: &str| -> Result<Option<String>> {
                    match p.get(field) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::String(s)) => Ok(Some(self.resolve(loc, &join(&part_at, field), s)?)),
                        Some(other) => Err(loc
                            .err(&join(&part_at, field), format!("invalid type: {}, expected a string", kind(other)))),
                    }
                };
            match p.get("type").and_then(Value::as_str) {
                Some("text") => match string("text")? {
                    Some(t) => text.push_str(&t),
                    None => return Err(loc.err(&join(&part_at, "text"), "missing")),
                },
                Some("reasoning") => {
                    let redacted = p.get("redacted").and_then(Value::as_bool).unwrap_or(false);
                    let body = if redacted { string("summary")? } else { string("reasoning")? };
                    if !redacted && body.is_none() {
                        return Err(loc.err(&join(&part_at, "reasoning"), "missing"));
                    }
                    if let Some(body) = body {
                        reasoning.get_or_insert_with(String::new).push_str(&body);
                    }
                }
                Some(other) => {
                    return Err(loc.err(
                        &join(&part_at, "type"),
                        format!("unsupported content part type {other:?} (read: text, reasoning)"),
                    ));
                }
                None => return Err(loc.err(&join(&part_at, "type"), "missing")),
            }
        }
        Ok((text, reasoning))
    }

    /// The sample as a trajectory; `loc` locates it, `prefix` is its path there
    /// (`samples[2]` in a `.json` log, empty elsewhere). Errors: an `epoch` below 1, and
    /// those of the messages, at their field.
    fn trajectory(&self, loc: &Loc, prefix: &str) -> Result<Trajectory> {
        if self.epoch == 0 {
            return Err(loc.err(&join(prefix, "epoch"), "0: Inspect numbers epochs from 1"));
        }
        let mut messages = Vec::with_capacity(self.messages.len());
        for (i, Object(m)) in self.messages.iter().enumerate() {
            let at = join(prefix, &format!("messages[{i}]"));
            let Some(role) = role_of(&m.role) else {
                return Err(loc.err(
                    &join(&at, "role"),
                    format!("unknown role {:?} (Inspect's: system, user, assistant, tool)", m.role),
                ));
            };
            let (mut text, reasoning) = self.content(loc, &join(&at, "content"), &m.content)?;
            let mut msg = Message::new(i, role, String::new());
            msg.reasoning = reasoning;
            match role {
                Role::Assistant => {
                    for (k, Object(call)) in m.tool_calls.iter().flatten().enumerate() {
                        let args_at = format!("{at}.tool_calls[{k}].arguments");
                        let Some(args) = call.arguments.as_ref().filter(|a| !a.is_null()) else {
                            return Err(loc.err(&args_at, "missing"));
                        };
                        let arguments = call_arguments(loc, Some(args), &args_at)?;
                        msg.tool_calls.push(ToolCall {
                            id: Some(call.id.clone()),
                            name: call.function.clone(),
                            arguments,
                            from_text: false,
                        });
                    }
                }
                Role::Tool => {
                    msg.tool_call_id = match &m.tool_call_id {
                        None | Some(Value::Null) => None,
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(other) => {
                            return Err(loc.err(
                                &join(&at, "tool_call_id"),
                                format!("invalid type: {}, expected a string", kind(other)),
                            ));
                        }
                    };
                    msg.tool_name = m.function.clone();
                    if text.is_empty()
                        && let Some(Object(error)) = &m.error
                    {
                        text = error.message.clone();
                    }
                }
                Role::System | Role::User => {}
            }
            msg.text = text;
            messages.push(msg);
        }
        link_tool_names(&mut messages);
        let resolved = self
            .scores
            .as_ref()
            .and_then(|s| declared_resolved(s.values().map(|v| v.as_ref().map_or(&Value::Null, |Object(s)| &s.value))));
        let repo = self
            .metadata
            .as_ref()
            .and_then(|m| m.get("repo"))
            .and_then(Value::as_str)
            .filter(|r| r.contains('/'))
            .map(str::to_string);
        let attempt = u32::try_from(self.epoch - 1)
            .map_err(|_| loc.err(&join(prefix, "epoch"), format!("{}: too large an epoch", self.epoch)))?;
        Ok(Trajectory {
            instance_id: self.id.clone(),
            source: SOURCE_INSPECT,
            resolved,
            tools: None,
            repo,
            messages,
            attempt: Some(attempt),
        })
    }

    /// The sample read for a run: its trajectory ([`Self::trajectory`]) and the fields
    /// beside it; `file` names the file that holds it.
    fn read(self, file: &Path, prefix: &str) -> Result<SampleRead> {
        let trajectory = self.trajectory(&Loc::file(file), prefix)?;
        Ok(SampleRead {
            trajectory,
            epoch: self.epoch,
            file: file.to_path_buf(),
            at: prefix.to_string(),
            scored: self.scores.as_ref().is_some_and(|s| !s.is_empty()),
            error: self.error.map(|Object(e)| e.message),
            limit: self.limit.map(|Object(l)| l.kind),
        })
    }
}

impl TrajectoryFormat for InspectSample {
    const CONTAINER: Container = Container::Object;
    const ID_FIELDS: &'static [&'static str] = &["id"];

    fn convert(self, record: &Record) -> Result<Trajectory> {
        self.trajectory(&record.loc, "")
    }

    /// A first record with `id`, a number `epoch`, `input` and a `messages` list (an
    /// Inspect `EvalSample`).
    fn detect(_container: Container, first: &Value) -> bool {
        first.get("id").is_some()
            && first.get("epoch").is_some_and(Value::is_number)
            && first.get("input").is_some()
            && first.get("messages").is_some_and(Value::is_array)
    }
}

/// One sample value of the file `file`, at `prefix` there (serde's refusal named at its
/// field).
fn sample(file: &Path, prefix: &str, v: &Value) -> Result<SampleRead> {
    let s: InspectSample = from_value(v).map_err(|r| Loc::file(file).err(&join(prefix, &r.path), r.message))?;
    s.read(file, prefix)
}

/// The header fields [`log_header`] reads as counts, as anomaly paths.
const HEADER_COUNTS: [&str; 4] =
    ["eval.dataset.samples", "eval.config.epochs", "results.total_samples", "results.completed_samples"];

/// Refuses a header count that the anomaly policy replaced (`NaN`, `Infinity`: strict JSON
/// has neither, and the parse reads them as null), named at its field, instead of keeping it
/// as "not stated". `anomalies` are those of the document the header was read from.
///
/// Errors: such a count.
pub fn refuse_replaced_counts(path: &Path, anomalies: &[Anomaly]) -> Result<()> {
    match anomalies.iter().find(|a| a.document == 0 && HEADER_COUNTS.contains(&a.path.as_str())) {
        Some(a) => Err(Loc::file(path)
            .err(&a.path, format!("invalid value: {}, expected a count (an integer of 0 or more)", a.detail))),
        None => Ok(()),
    }
}

/// The trajectories of a log read whole.
fn trajectories(log: LogRead) -> Vec<Trajectory> {
    log.samples.into_iter().map(|s| s.trajectory).collect()
}

/// The samples of an Inspect `.json` log `v` ([`is_log`]) as trajectories, one per
/// sample in order ([`read_log_samples`]).
pub fn read_log(path: &Path, v: &Value) -> Result<Vec<Trajectory>> {
    Ok(trajectories(read_log_samples(path, v)?))
}

/// The samples of an Inspect `.json` log `v` ([`is_log`]), one per sample in order.
/// Errors: no `samples` (a log written with `log_samples` off), a sample refused at its
/// field (`samples[2].messages[3].role`), or a header field of the wrong type
/// ([`log_header`]).
pub fn read_log_samples(path: &Path, v: &Value) -> Result<LogRead> {
    let loc = Loc::file(path);
    let samples = match v.get("samples") {
        Some(Value::Array(samples)) => samples,
        None | Some(Value::Null) => {
            return Err(loc.err("samples", "missing: the log holds no samples (written with log_samples off?)"));
        }
        Some(other) => return Err(loc.err("samples", format!("invalid type: {}, expected an array", kind(other)))),
    };
    let header = log_header(path, v)?;
    let samples: Result<Vec<_>> =
        samples.iter().enumerate().map(|(i, s)| sample(path, &format!("samples[{i}]"), s)).collect();
    Ok(LogRead { samples: samples?, finished: true, header: Some(header) })
}

/// Reads member `index` of `zip` as UTF-8 text. Errors name `label` (the member as a
/// path inside the archive).
fn member_text(zip: &mut zip::ZipArchive<Cursor<&[u8]>>, index: usize, label: &Path) -> Result<String> {
    let unreadable = |e: &dyn std::fmt::Display| InputError::at(label, None, None, format!("cannot unzip: {e}"));
    let mut file = zip.by_index(index).map_err(|e| unreadable(&e))?;
    let mut bytes = Vec::with_capacity(file.size() as usize);
    file.read_to_end(&mut bytes).map_err(|e| unreadable(&e))?;
    Ok(crate::ingest::json::utf8_document(label, &bytes)?.to_string())
}

/// A member's text parsed under the anomaly policy ([`anomaly::scan`]). Errors: not JSON.
fn member_json(text: &str, label: &Path) -> Result<(Value, Vec<Anomaly>)> {
    let scanned = anomaly::scan(text);
    let value = crate::ingest::unique_keys::from_str(&scanned.text).map_err(|e| {
        let reason =
            if crate::ingest::unique_keys::is_repeated_key(&e) { e.to_string() } else { format!("not JSON: {e}") };
        InputError::at(label, Some(e.line() as u64), None, reason)
    })?;
    Ok((value, scanned.anomalies))
}

/// The samples of an Inspect `.eval` archive (`bytes`, read once by the input layer) as
/// trajectories, one per `samples/*.json` member in the archive's order
/// ([`read_eval_samples`]).
pub fn read_eval_archive(path: &Path, bytes: &[u8]) -> Result<Vec<Trajectory>> {
    Ok(trajectories(read_eval_samples(path, bytes)?))
}

/// The samples of an Inspect `.eval` archive (`bytes`, read once by the input layer),
/// one per `samples/*.json` member in the archive's order; whether it holds
/// `header.json` ([`LogRead::finished`]) and what that says of the run ([`log_header`]).
///
/// Errors: not a zip the `zip` crate reads; no sample member (a log written with
/// `log_samples` off, or before any sample finished); a member that is not UTF-8 JSON,
/// a sample refused at its field or a header field of the wrong type ([`log_header`]) —
/// each named as `run.eval/<member>`; an archive holding two members of one name.
pub fn read_eval_samples(path: &Path, bytes: &[u8]) -> Result<LogRead> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| InputError::at(path, None, None, format!("not a readable .eval archive (zip): {e}")))?;
    if zip.has_duplicate_names() {
        // the zip crate keeps the last member of a name: which copy the writer meant (a
        // header saying cancelled, then one saying success) is unknowable
        return Err(InputError::at(
            path,
            None,
            None,
            "the archive holds two members of one name (its central directory repeats a name): which one the \
             log means is unknowable",
        )
        .into());
    }
    let label = |member: &str| PathBuf::from(format!("{}/{member}", path.display()));
    let mut finished = false;
    let mut header = None;
    let mut samples = Vec::new();
    for index in 0..zip.len() {
        let name = match zip.name_for_index(index) {
            Some(Ok(name)) => name.into_owned(),
            Some(Err(e)) => return Err(InputError::at(path, None, None, format!("cannot unzip: {e}")).into()),
            None => continue,
        };
        if name == "header.json" {
            let at = label(&name);
            finished = true;
            let text = member_text(&mut zip, index, &at)?;
            let (value, anomalies) = member_json(&text, &at)?;
            refuse_replaced_counts(&at, &anomalies)?;
            header = Some(log_header(&at, &value)?);
            continue;
        }
        if !(name.starts_with("samples/") && name.ends_with(".json")) {
            continue;
        }
        let at = label(&name);
        let text = member_text(&mut zip, index, &at)?;
        let (value, anomalies) = member_json(&text, &at)?;
        samples.push((name, value, anomalies));
    }
    if samples.is_empty() {
        return Err(InputError::at(
            path,
            None,
            None,
            "no sample in the archive (no samples/*.json: written with log_samples off, or before any sample finished)",
        )
        .into());
    }
    let mut out = Vec::with_capacity(samples.len());
    for (name, value, anomalies) in &samples {
        out.push(sample(&label(name), "", value)?);
        anomaly::record(anomalies.iter().map(|a| Recorded {
            line: Some(a.line),
            field: format!("{name}:{}", a.path),
            kind: a.kind,
            detail: a.detail.clone(),
            occurrences: a.occurrences,
        }));
    }
    Ok(LogRead { samples: out, finished, header })
}
