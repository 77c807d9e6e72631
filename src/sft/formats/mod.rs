//! Trajectory formats behind one trait (SPEC §3.1 "trajectories").
//!
//! A file is read in two steps, as datatrove separates a reader's container from its
//! record adapter:
//!
//! 1. the **container** is read once: one JSON document ([`Container::Object`]), a JSON
//!    array of rows ([`Container::Array`], each row located by the line it starts on
//!    through [`crate::ingest::json::array_rows`]) or JSON lines ([`Container::Lines`]);
//!    before parsing, [`crate::ingest::anomaly::scan`] rewrites what Python's
//!    `json.dumps` writes and serde_json refuses (lone surrogate escapes, `NaN`), and
//!    the anomalies found are recorded for the load;
//! 2. each record is given to a [`TrajectoryFormat`], the serde struct of the fields the
//!    format reads: [`TrajectoryFormat::detect`] says from the container and the first
//!    record whether the format reads the file, [`Record::deserialize`] reads the record
//!    into the struct (`serde_path_to_error` names a failing field in the source's terms)
//!    and [`TrajectoryFormat::convert`] turns it into the common message schema
//!    ([`crate::sft::schema`]).
//!
//! One file per format: [`mini_swe_agent`], [`swe_agent`], [`atif`], [`inspect`],
//! [`openhands`], [`nebius`], [`swe_smith`], [`llamafactory`], [`sharegpt`], [`swift`];
//! [`FORMATS`] lists them in detection order. Inspect AI logs hold many samples in one
//! document or archive: [`read_bytes`] reads an `.eval` archive, [`detect_and_read`] a
//! `.json` log, before the per-record formats are tried. Shared
//! pieces: [`access`] (error locations, JSON objects only, nested JSON texts),
//! [`openai`] (OpenAI message parts as serde types: role, content, tool calls and their
//! arguments, a whole OpenHands / SWE-agent chat message) and [`text_calls`] (tool calls
//! written in message text).

pub mod access;
pub mod atif;
pub mod inspect;
pub mod llamafactory;
pub mod mini_swe_agent;
pub mod nebius;
pub mod openai;
pub mod openhands;
pub mod sharegpt;
pub mod swe_agent;
pub mod swe_smith;
pub mod swift;
pub mod text_calls;

use std::path::Path;

use anyhow::{Result, bail};
use serde::de::DeserializeOwned;
use serde_json::Value;

use self::access::{Loc, array_values, from_value, kind, parse_json_file, rows_of};
use crate::ingest::anomaly::{self, Anomaly, Recorded};
use crate::sft::schema::Trajectory;

/// How the records of a trajectory file are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// One JSON document, one trajectory (mini-swe-agent, SWE-agent).
    Object,
    /// A JSON array, one trajectory per row (openhands, nebius, swe-smith; LLaMA-Factory
    /// rows as an array).
    Array,
    /// One JSON object a line, one trajectory per non-blank line (LLaMA-Factory).
    Lines,
}

/// One record of a file, as a format converts it.
pub struct Record<'a> {
    /// Where it is: the file, and for rows the 0-based row and the line it starts on.
    pub loc: Loc<'a>,
    /// The record, parsed.
    pub value: &'a Value,
    /// 0-based position among the file's records.
    pub index: usize,
    /// The container the record came from.
    pub container: Container,
    /// The anomalies of the whole text (see [`Record::non_finite`]).
    pub anomalies: &'a [Anomaly],
}

impl Record<'_> {
    /// The reason to refuse a field of this record that needs a number when the text
    /// held `NaN` / `Infinity` there (read as `null`); `path` is inside the record
    /// (`messages[2].loss_weight`), `expected` names the field's type ("a number field").
    pub fn non_finite(&self, path: &str, expected: &str) -> Option<String> {
        let (document, full) = self.anomaly_at(path);
        anomaly::non_finite_at(self.anomalies, document, &full, expected)
    }

    /// Where the text's anomalies locate field `path` of this record: `(document, path)`
    /// ([`Anomaly::document`], [`Anomaly::path`]), which depend on the container.
    fn anomaly_at(&self, path: &str) -> (usize, String) {
        match self.container {
            Container::Object => (0, path.to_string()),
            Container::Array => (0, anomaly::join_field(&format!("[{}]", self.index), path)),
            Container::Lines => (self.index, path.to_string()),
        }
    }

    /// The record read as `T`, a serde struct of the fields the format uses (see
    /// [`access::from_value`]). Errors name the file, the row's line and the field in
    /// the source's terms (`[3].messages[5].role`) with what was expected; a field that
    /// needs a value and held `NaN` / `Infinity` (read as null) is refused with that
    /// reason ("NaN in a text field").
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T> {
        from_value(self.value).map_err(|refusal| {
            let non_finite = refusal.expected().and_then(|e| self.non_finite(&refusal.path, &anomaly::field_words(e)));
            self.loc.err(&refusal.path, non_finite.unwrap_or(refusal.message))
        })
    }

    /// The error for a lone surrogate escape in one of the id fields `ids` of this record
    /// (`instance_id`): stored as U+FFFD, two ids that differ only there would merge.
    pub fn surrogate_in_ids(&self, ids: &[&str]) -> Result<()> {
        for id in ids {
            let (document, full) = self.anomaly_at(id);
            if let Some(a) = anomaly::lone_surrogate_at(self.anomalies, document, &full) {
                return Err(self.loc.line(a.line).err(id, anomaly::surrogate_in_id(&a.detail)));
            }
        }
        Ok(())
    }

    /// The file name without its extension (`a.b.jsonl` → `a.b`), for ids of formats
    /// that name none.
    pub fn file_stem(&self) -> String {
        self.loc.file.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string()
    }
}

/// A trajectory format, implemented by the serde struct of its record (the fields the
/// format reads): how its files are recognized and how one record, read, becomes a
/// [`Trajectory`]. [`Format::of`] puts a format in a list ([`FORMATS`]).
pub trait TrajectoryFormat: DeserializeOwned {
    /// The container its own reader expects (detection may accept others).
    const CONTAINER: Container;
    /// Whether the format reads a file laid out as `container` whose first record is
    /// `first` (a JSON object for the formats here).
    fn detect(container: Container, first: &Value) -> bool;
    /// The record's fields that name what it is (`instance_id`), where a lone surrogate
    /// escape is refused ([`Record::surrogate_in_ids`]); by default none (an id made from
    /// the file name).
    const ID_FIELDS: &'static [&'static str] = &[];
    /// What must hold of a record before its fields are read (mini-swe-agent: a
    /// `trajectory_format` it knows); by default nothing. Errors as [`Record::deserialize`].
    fn precheck(_record: &Record) -> Result<()> {
        Ok(())
    }
    /// The record, read by [`Record::deserialize`], as a trajectory (its `source` one of
    /// the `SOURCE_*` constants); `record` locates it.
    /// Errors name the file, the row's line and the field (an
    /// [`InputError`](crate::ingest::InputError)).
    fn convert(self, record: &Record) -> Result<Trajectory>;
}

/// A [`TrajectoryFormat`] as a value, so that formats can be listed and tried in turn.
#[derive(Clone, Copy)]
pub struct Format {
    /// [`TrajectoryFormat::CONTAINER`].
    pub container: Container,
    detect: fn(Container, &Value) -> bool,
    convert: fn(&Record) -> Result<Trajectory>,
}

impl Format {
    /// The format whose record is `F`.
    pub const fn of<F: TrajectoryFormat>() -> Format {
        Format { container: F::CONTAINER, detect: F::detect, convert: read_record::<F> }
    }

    /// [`TrajectoryFormat::detect`].
    pub fn detect(&self, container: Container, first: &Value) -> bool {
        (self.detect)(container, first)
    }

    /// One record as a trajectory: [`TrajectoryFormat::precheck`], the record read as
    /// `F`, then [`TrajectoryFormat::convert`].
    pub fn convert(&self, record: &Record) -> Result<Trajectory> {
        (self.convert)(record)
    }
}

fn read_record<F: TrajectoryFormat>(record: &Record) -> Result<Trajectory> {
    F::precheck(record)?;
    record.surrogate_in_ids(F::ID_FIELDS)?;
    record.deserialize::<F>()?.convert(record)
}

/// Every format, in the order [`detect_and_read`] tries them.
pub static FORMATS: &[Format] = &[
    Format::of::<mini_swe_agent::MiniSweAgent>(),
    Format::of::<swe_agent::SweAgent>(),
    Format::of::<atif::Atif>(),
    Format::of::<inspect::InspectSample>(),
    Format::of::<nebius::Nebius>(),
    Format::of::<llamafactory::LlamaFactory>(),
    Format::of::<sharegpt::ShareGpt>(),
    Format::of::<swift::MsSwift>(),
    Format::of::<openhands::OpenHands>(),
    Format::of::<swe_smith::SweSmith>(),
];

/// The records of a container.
enum Records<'t> {
    Object(Value),
    Array(Vec<(u64, Value)>),
    /// Non-blank lines with their 1-based line numbers, parsed one at a time.
    Lines(Vec<(u64, &'t str)>),
}

/// The non-blank lines of a JSON-lines text (LF or CRLF), with their 1-based numbers.
fn lines(text: &str) -> Vec<(u64, &str)> {
    text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).map(|(i, l)| (i as u64 + 1, l)).collect()
}

/// Converts every record with `format`, then records the text's anomalies for the load.
fn convert_all(format: &Format, path: &Path, records: &Records, anomalies: &[Anomaly]) -> Result<Vec<Trajectory>> {
    let file = Loc::file(path);
    let out = match records {
        Records::Object(v) => {
            vec![format.convert(&Record { loc: file, value: v, index: 0, container: Container::Object, anomalies })?]
        }
        Records::Array(rows) => rows
            .iter()
            .enumerate()
            .map(|(r, (line, v))| {
                format.convert(&Record {
                    loc: file.row(r).line(*line),
                    value: v,
                    index: r,
                    container: Container::Array,
                    anomalies,
                })
            })
            .collect::<Result<_>>()?,
        Records::Lines(lines) => {
            let mut out = Vec::with_capacity(lines.len());
            for (r, (line, raw)) in lines.iter().enumerate() {
                let loc = file.row(r).line(*line);
                let v = access::parse_record(raw).map_err(|reason| loc.err("", reason))?;
                out.push(format.convert(&Record {
                    loc,
                    value: &v,
                    index: r,
                    container: Container::Lines,
                    anomalies,
                })?);
            }
            out
        }
    };
    record_anomalies(anomalies, matches!(records, Records::Lines(_)));
    Ok(out)
}

/// Records the anomalies of a whole text for the load; in JSON lines, each field is
/// prefixed with its 0-based line record (`[3].messages[0].content`).
fn record_anomalies(anomalies: &[Anomaly], lines_container: bool) {
    anomaly::record(anomalies.iter().map(|a| Recorded {
        line: Some(a.line),
        field: if lines_container {
            anomaly::join_field(&format!("[{}]", a.document), &a.path)
        } else {
            a.path.clone()
        },
        kind: a.kind,
        detail: a.detail.clone(),
        occurrences: a.occurrences,
    }));
}

/// Reads `text` as `F`'s own container ([`TrajectoryFormat::CONTAINER`]) and
/// converts every record: the entry of the per-format `read_*` functions, `F` the format.
pub(crate) fn read_as<F: TrajectoryFormat>(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    let format = &Format::of::<F>();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let scanned = anomaly::scan(text);
    let text = &*scanned.text;
    let records = match format.container {
        Container::Object => Records::Object(parse_json_file(path, text)?),
        Container::Array => {
            if !text.trim_start_matches([' ', '\t', '\r', '\n']).starts_with('[') {
                // not an array: say what it is
                rows_of(&Loc::file(path), &parse_json_file(path, text)?)?;
            }
            Records::Array(array_values(path, text)?)
        }
        Container::Lines => Records::Lines(lines(text)),
    };
    convert_all(format, path, &records, &scanned.anomalies)
}

/// For a JSON object no format took: each format tried and why it did not match, in
/// the order tried.
fn why_not_object(v: &Value) -> String {
    let swe_agent = match v.get("history") {
        None => "no `history`".to_string(),
        Some(Value::Array(h)) => match h.first() {
            Some(e) if e.get("action").is_some() || e.get("observation").is_some() => format!(
                "`history[0]` has no `role` but {} (an OpenHands event stream, e.g. `output.jsonl`: not a chat; convert it to OpenAI messages)",
                ["action", "observation", "source"]
                    .iter()
                    .filter(|k| e.get(**k).is_some())
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => "`history[0]` has no `role`".to_string(),
        },
        Some(h) => format!("`history` is {}, not an array", kind(h)),
    };
    let llamafactory =
        if v.get("messages").is_some() { "`messages` without typed content parts" } else { "no `messages`" };
    let sharegpt = match v.get("conversations") {
        None => "no `conversations`".to_string(),
        Some(c) => format!("`conversations` is {}, not a list", kind(c)),
    };
    format!(
        "mini-swe-agent (no `trajectory_format`, no `messages`+`info`); SWE-agent .traj ({swe_agent}); \
         LLaMA-Factory ({llamafactory}); LLaMA-Factory sharegpt ({sharegpt}); ms-swift (no message with role \
         `tool_call` / `tool_response` or a `loss`); nebius (no `trajectory`); openhands (no `tools`, \
         `tool_calls` or non-native calls, or SWE-smith's `traj_id`); swe-smith (no `traj_id` and no assistant \
         `<function=` call); ATIF (no `schema_version` \"ATIF-v1.x\"); Inspect AI (no log `version` + \
         `eval.task`, no sample `id` + `epoch` + `input` + `messages`)"
    )
}

/// Reads a trajectory file's bytes as the input layer read them (a leading byte-order
/// mark already skipped): an Inspect AI `.eval` archive (a zip, [`inspect::is_eval_archive`])
/// is unzipped in memory ([`inspect::read_eval_archive`]); anything else must be UTF-8
/// text and is read by [`detect_and_read`].
///
/// Errors: invalid UTF-8 (naming the line and byte column), and those of the readers.
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Result<Vec<Trajectory>> {
    if inspect::is_eval_archive(bytes) {
        return inspect::read_eval_archive(path, bytes);
    }
    detect_and_read(path, crate::ingest::json::utf8_document(path, bytes)?)
}

/// Reads `text` as an Inspect AI `.json` log ([`inspect::read_log_samples`]) under the
/// anomaly policy (`NaN` scores, lone surrogates: recorded as [`detect_and_read`] records
/// them), for a reader that needs more of each sample than its trajectory (`load run`).
/// `None` when `text` is not one JSON document that [`inspect::is_log`] accepts.
///
/// Errors: those of [`inspect::read_log_samples`].
pub fn read_inspect_log(path: &Path, text: &str) -> Result<Option<inspect::LogRead>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let scanned = anomaly::scan(text);
    match serde_json::from_str::<Value>(&scanned.text) {
        Ok(v) if inspect::is_log(&v) => {
            inspect::refuse_replaced_counts(path, &scanned.anomalies)?;
            let read = inspect::read_log_samples(path, &v)?;
            record_anomalies(&scanned.anomalies, false);
            Ok(Some(read))
        }
        _ => Ok(None),
    }
}

/// The first format of [`FORMATS`] that reads `container` starting with `first`.
fn detect(container: Container, first: &Value) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.detect(container, first))
}

/// Read any of the formats, chosen from the content by [`FORMATS`] in order:
///
/// * an Inspect AI `.json` log (a JSON object with a number `version` and `eval.task`):
///   its `samples` ([`inspect::read_log`]);
/// * a JSON object with `trajectory_format` (any value: the reader refuses one it does
///   not know), or with `messages` + `info` → mini-swe-agent;
/// * a JSON object whose `history` is an array of messages with `role` → SWE-agent;
/// * any record with a `schema_version` starting `ATIF-` → ATIF; with `id`, a number
///   `epoch`, `input` and `messages` → one Inspect AI sample;
/// * a JSON array whose first row has `trajectory` → nebius; has `messages` whose
///   `content` is a list of `{type, value}` parts → LLaMA-Factory (array form); has
///   `conversations` of `{from, value}` → LLaMA-Factory sharegpt; has a message with role
///   `tool_call` / `tool_response` or a `loss` → ms-swift; has no
///   `traj_id` and `tools`, a message with `tool_calls` or a user message starting
///   `EXECUTION RESULT of [` → openhands; has `traj_id` or an assistant message containing
///   `<function=` → swe-smith;
/// * otherwise, JSON lines (as `datasets.to_json` writes rows) whose first row one of the
///   row formats reads, in the same order (a single object is one line, or one row when
///   it spans several lines).
///
/// An empty array gives no trajectories. Anything else is an error naming the file and,
/// for a JSON object (or the first JSON line), each format tried and why it did not
/// match. Lone surrogate escapes, `NaN`, NUL and control characters follow the policy of
/// [`crate::ingest::anomaly`].
pub fn detect_and_read(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    // the input layer skips a byte-order mark; a text given directly may still hold one
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let scanned = anomaly::scan(text);
    let text = &*scanned.text;
    let anomalies = &scanned.anomalies;
    let whole = crate::ingest::unique_keys::from_str(text);
    if let Err(e) = &whole
        && crate::ingest::unique_keys::is_repeated_key(e)
    {
        return Err(crate::ingest::InputError::at(path, Some(e.line() as u64), None, e.to_string()).into());
    }
    match whole {
        Ok(v) if inspect::is_log(&v) => {
            let read = inspect::read_log(path, &v)?;
            record_anomalies(anomalies, false);
            Ok(read)
        }
        Ok(v @ Value::Object(_)) => match detect(Container::Object, &v) {
            // a row format given one object: the object is one JSON line, or one row
            // written over several lines (a pretty-printed row)
            Some(f) if f.container != Container::Object => {
                let lines = lines(text);
                if lines.len() == 1 {
                    convert_all(f, path, &Records::Lines(lines), anomalies)
                } else {
                    convert_all(f, path, &Records::Object(v), anomalies)
                }
            }
            Some(f) => convert_all(f, path, &Records::Object(v), anomalies),
            None => bail!("{}: not a recognized trajectory format; tried {}", path.display(), why_not_object(&v)),
        },
        Ok(Value::Array(_)) => {
            // the rows again, each with the line it starts on (one linear pass)
            let rows = array_values(path, text)?;
            let Some((line, first)) = rows.first() else { return Ok(Vec::new()) };
            let at = Loc::file(path).row(0).line(*line);
            if !first.is_object() {
                return Err(at.err("", format!("expected an object, got {}", kind(first))));
            }
            match detect(Container::Array, first) {
                Some(f) => convert_all(f, path, &Records::Array(rows), anomalies),
                None => Err(at.err(
                    "",
                    "not a recognized trajectory row (no `trajectory`, typed content parts, sharegpt `conversations`, ms-swift roles, `tools`/`tool_calls`, `traj_id`, or `<function=` calls)",
                )),
            }
        }
        Ok(v) => bail!("{}: not a recognized trajectory format (top-level JSON {})", path.display(), kind(&v)),
        Err(whole_err) => {
            let lines = lines(text);
            let first: Option<Value> = lines.first().and_then(|(_, l)| serde_json::from_str(l).ok());
            match first {
                Some(v) => match detect(Container::Lines, &v) {
                    Some(f) => convert_all(f, path, &Records::Lines(lines), anomalies),
                    None => bail!(
                        "{}: not a recognized trajectory format (JSON lines; line 1 read as one document); tried {}",
                        path.display(),
                        why_not_object(&v)
                    ),
                },
                None => bail!("{}: not JSON: {whole_err}", path.display()),
            }
        }
    }
}
