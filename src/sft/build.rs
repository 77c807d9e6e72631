//! `views build`: render loaded trajectories into tokenized views (SPEC §3.1, issue 4).
//!
//! Each trajectory's messages are read back from the database as the OpenAI-style
//! messages Hugging Face's `apply_chat_template` takes (structured tool calls with their
//! arguments as JSON objects; assistant messages carry `reasoning_content`, empty when
//! the source has no thinking text; calls parsed out of the message text stay in the
//! text), rendered with [`render::render_view`](super::render::render_view), and the
//! supervision policy decides which assistant messages keep their loss. Output is view
//! JSONL in sphragis's format (`docs/formats.md`), ready for `load views`.
//!
//! The chat template is the user's input ([`template_source`]). A build is refused,
//! with nothing written, when the template marks no assistant output (no
//! `{% generation %}` block), when a kept assistant message gets no supervised token
//! from it, or when its rendering is not prefix-preserving (spans could not be
//! verified, see [`render`](super::render)).

use super::render::{ChatTemplate, RenderedView, render_view};
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A chat template's text and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSource {
    /// The Jinja source.
    pub text: String,
    /// SHA-256 of the template text (UTF-8 bytes), recorded in every view's `origin`.
    pub sha256: String,
    /// Where it was read: the `--template` file, `<dir>/chat_template.jinja`, or
    /// `<dir>/tokenizer_config.json#chat_template`.
    pub origin: String,
}

/// Finds the chat template the way Hugging Face does for a tokenizer directory.
///
/// `explicit` (the `--template FILE`) wins. Otherwise, beside `tokenizer` (the
/// `tokenizer.json`): `chat_template.jinja` (the layout `transformers` writes since
/// 4.43), else the `chat_template` field of `tokenizer_config.json` — a string, or a
/// list of `{name, template}` of which the one named `default` is used.
///
/// Errors: an unreadable or non-UTF-8 file; a `tokenizer_config.json` that is not JSON
/// or whose `chat_template` is missing, of another type, or a list without `default`;
/// no template found at all (the message says where it looked and to pass
/// `--template`).
pub fn template_source(explicit: Option<&Path>, tokenizer: &Path) -> Result<TemplateSource> {
    let read_text = |path: &Path| -> Result<(String, String)> {
        let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
        let sha = crate::hash::sha256_hex(&bytes);
        let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
        Ok((text, sha))
    };
    if let Some(path) = explicit {
        let (text, sha256) = read_text(path)?;
        return Ok(TemplateSource { text, sha256, origin: path.display().to_string() });
    }
    let dir: PathBuf = tokenizer.parent().map(Path::to_path_buf).unwrap_or_default();
    let jinja = dir.join("chat_template.jinja");
    if jinja.is_file() {
        let (text, sha256) = read_text(&jinja)?;
        return Ok(TemplateSource { text, sha256, origin: jinja.display().to_string() });
    }
    let config = dir.join("tokenizer_config.json");
    if !config.is_file() {
        bail!(
            "no chat template: pass --template FILE, or keep the tokenizer's chat_template.jinja or tokenizer_config.json \
             (with a chat_template) beside {} (neither is in {})",
            tokenizer.display(),
            if dir.as_os_str().is_empty() { ".".to_string() } else { dir.display().to_string() }
        );
    }
    let (text, _) = read_text(&config)?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", config.display()))?;
    let origin = format!("{}#chat_template", config.display());
    let template = match value.get("chat_template") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(named)) => {
            let default = named.iter().find(|t| t.get("name").and_then(Value::as_str) == Some("default"));
            match default.and_then(|t| t.get("template")).and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => bail!(
                    "{origin}: a list of named templates without one named \"default\" ({}); pass --template FILE",
                    named.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect::<Vec<_>>().join(", ")
                ),
            }
        }
        Some(_) => bail!("{origin}: neither a string nor a list of named templates"),
        None => bail!("no chat template: {} has no chat_template; pass --template FILE", config.display()),
    };
    let sha256 = crate::hash::sha256_hex(template.as_bytes());
    Ok(TemplateSource { text: template, sha256, origin })
}

/// The special tokens Hugging Face passes to every chat template as variables
/// (`apply_chat_template` renders with `**tokenizer.special_tokens_map`): each that the
/// tokenizer sets, by these names.
pub const SPECIAL_TOKEN_KEYS: [&str; 8] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
    "additional_special_tokens",
];

/// The special tokens a tokenizer directory sets, as a chat template sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecialTokens {
    /// Name ([`SPECIAL_TOKEN_KEYS`]) → its text (a list of texts for
    /// `additional_special_tokens`), in that order; a token the files leave unset (absent or
    /// `null`) is not here, and a template reading it gets an undefined value, as in HF.
    pub values: Vec<(String, Value)>,
    /// The files read, in the order read.
    pub sources: Vec<String>,
}

impl SpecialTokens {
    /// The values as one JSON object (recorded in a view's provenance).
    pub fn to_json(&self) -> Value {
        Value::Object(self.values.iter().cloned().collect())
    }
}

/// Reads the special tokens beside `tokenizer` (the `tokenizer.json`) the way
/// `transformers` loads them: `tokenizer_config.json`'s `bos_token`, `eos_token`, ...,
/// then `special_tokens_map.json`, whose values win (`from_pretrained` reads it last). A
/// value is a string or an `AddedToken` object (`{"content": ..., ...}`, its `content`
/// counts); `null` leaves the token unset. Neither file present: no special tokens.
///
/// Errors (file and field named): a file that is not JSON or not an object; a token that
/// is neither a string, `null` nor an object with a string `content`;
/// `additional_special_tokens` that is not a list of such.
pub fn special_tokens(tokenizer: &Path) -> Result<SpecialTokens> {
    let dir: PathBuf = tokenizer.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut values: std::collections::BTreeMap<&str, Option<Value>> = std::collections::BTreeMap::new();
    let mut sources = Vec::new();
    for name in ["tokenizer_config.json", "special_tokens_map.json"] {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).with_context(|| path.display().to_string())?;
        let doc: Value = serde_json::from_slice(&bytes).with_context(|| format!("{}: not JSON", path.display()))?;
        let Some(doc) = doc.as_object() else { bail!("{}: not a JSON object", path.display()) };
        let text_of = |key: &str, v: &Value| -> Result<String> {
            match v {
                Value::String(s) => Ok(s.clone()),
                Value::Object(o) => match o.get("content") {
                    Some(Value::String(s)) => Ok(s.clone()),
                    _ => bail!("{}: field `{key}`: an added token without a string `content`", path.display()),
                },
                _ => bail!("{}: field `{key}`: expected a token (a string or an added token object)", path.display()),
            }
        };
        for key in SPECIAL_TOKEN_KEYS {
            let Some(v) = doc.get(key) else { continue };
            let value = match (key, v) {
                (_, Value::Null) => None,
                ("additional_special_tokens", Value::Array(items)) => Some(Value::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, t)| text_of(&format!("{key}[{i}]"), t).map(Value::String))
                        .collect::<Result<_>>()?,
                )),
                ("additional_special_tokens", _) => {
                    bail!("{}: field `{key}`: expected a list of tokens", path.display())
                }
                _ => Some(Value::String(text_of(key, v)?)),
            };
            values.insert(key, value);
        }
        sources.push(path.display().to_string());
    }
    let values = SPECIAL_TOKEN_KEYS
        .iter()
        .filter_map(|k| values.get(k).cloned().flatten().map(|v| (k.to_string(), v)))
        .collect();
    Ok(SpecialTokens { values, sources })
}

/// Which assistant messages keep their loss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// Every assistant message.
    AllAssistant,
    /// Only the last assistant message (the final report).
    FinalReport,
    /// Assistant messages whose message index (not assistant ordinal) is in `from..=to`;
    /// loss 0 before and after.
    Window { from: i64, to: i64 },
    /// Exactly these message indices (each must be an assistant message).
    Keep(Vec<i64>),
}

impl Policy {
    /// Parses `all`, `final`, `window:I-J` or `keep:I,J,...`.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || anyhow::anyhow!("policy {text:?}: use all, final, window:I-J or keep:I,J,...");
        match text {
            "all" => Ok(Policy::AllAssistant),
            "final" => Ok(Policy::FinalReport),
            _ => {
                if let Some(range) = text.strip_prefix("window:") {
                    let (a, b) = range.split_once('-').ok_or_else(bad)?;
                    let (from, to) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                    if from > to {
                        return Err(bad());
                    }
                    Ok(Policy::Window { from, to })
                } else if let Some(list) = text.strip_prefix("keep:") {
                    let keep =
                        list.split(',').map(|s| s.trim().parse().map_err(|_| bad())).collect::<Result<Vec<i64>>>()?;
                    Ok(Policy::Keep(keep))
                } else {
                    Err(bad())
                }
            }
        }
    }

    /// The kept messages among `assistant` (indices of assistant messages, ascending).
    pub fn keep(&self, assistant: &[i64]) -> Vec<i64> {
        match self {
            Policy::AllAssistant => assistant.to_vec(),
            Policy::FinalReport => assistant.last().copied().into_iter().collect(),
            Policy::Window { from, to } => assistant.iter().copied().filter(|i| i >= from && i <= to).collect(),
            Policy::Keep(list) => list.clone(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Policy::AllAssistant => "all".into(),
            Policy::FinalReport => "final".into(),
            Policy::Window { from, to } => format!("window:{from}-{to}"),
            Policy::Keep(list) => format!("keep:{}", list.iter().map(i64::to_string).collect::<Vec<_>>().join(",")),
        }
    }
}

/// One trajectory as `views build` renders it: its messages in the OpenAI shape the
/// chat templates read, its tool definitions, and the assistant messages its source
/// marks as not trained (`sft_messages.train = false`: LLaMA-Factory `loss_weight` 0,
/// nebius `mask` false), ascending by message index.
type TrajectoryInput = (Vec<Value>, Option<Value>, Vec<i64>);

/// Reads the trajectories `ids` (ascending, as `sft_trajectories` orders them) and hands
/// each to `each` with its position in `ids`, in order. One ordered query per table
/// (messages, tool calls, tool definitions), read as a stream: linear in the corpus
/// (a query per instance scanned the tables once per instance) and one trajectory in
/// memory at a time. `filter` restricts the queries to `ids` (`false` when `ids` is
/// every loaded trajectory).
///
/// Errors: a database error, tool call arguments that are not JSON, an instance with no
/// trajectory row; the failing instance gets the error and reading stops. An error
/// `each` returns stops reading and is returned.
fn read_trajectories(
    conn: &Connection,
    ids: &[String],
    filter: bool,
    mut each: impl FnMut(usize, Result<TrajectoryInput>) -> Result<()>,
) -> Result<()> {
    let only =
        if filter { format!(" and instance_id in ({})", vec!["?"; ids.len()].join(", ")) } else { String::new() };
    let params: &[String] = if filter { ids } else { &[] };
    let (calls_conn, tools_conn) = (conn.try_clone()?, conn.try_clone()?);
    let mut stmt = conn.prepare(&format!(
        "select instance_id, msg_index, role, text, reasoning, tool_call_id, tool_name, train from sft_messages \
         where true{only} order by instance_id, msg_index"
    ))?;
    let mut messages = stmt
        .query_map(duckdb::params_from_iter(params), |r| {
            Ok((
                r.get::<_, String>(0)?,
                (
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, Option<bool>>(7)?,
                ),
            ))
        })?
        .peekable();
    let mut stmt = calls_conn.prepare(&format!(
        "select instance_id, msg_index, call_id, name, arguments from sft_tool_calls \
         where not from_text{only} order by instance_id, msg_index, call_index"
    ))?;
    let mut calls = stmt
        .query_map(duckdb::params_from_iter(params), |r| {
            Ok((
                r.get::<_, String>(0)?,
                (r.get::<_, i64>(1)?, r.get::<_, Option<String>>(2)?, r.get::<_, String>(3)?, r.get::<_, String>(4)?),
            ))
        })?
        .peekable();
    let mut stmt = tools_conn
        .prepare(&format!("select instance_id, tools from sft_trajectories where true{only} order by instance_id"))?;
    let mut tools = stmt
        .query_map(duckdb::params_from_iter(params), |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))?
        .peekable();
    for (i, instance_id) in ids.iter().enumerate() {
        let read = (|| -> Result<TrajectoryInput> {
            let Some(tools) = rows_of(&mut tools, instance_id)?.pop() else {
                bail!("no trajectory {instance_id} is loaded")
            };
            let tools = tools.map(|t| serde_json::from_str(&t)).transpose()?;
            let mut calls_of: std::collections::BTreeMap<i64, Vec<Value>> = Default::default();
            for (msg, id, name, arguments) in rows_of(&mut calls, instance_id)? {
                let arguments: Value = serde_json::from_str(&arguments)
                    .with_context(|| format!("{instance_id}: message {msg}: tool call arguments are not JSON"))?;
                let mut call = Map::new();
                if let Some(id) = id {
                    call.insert("id".into(), json!(id));
                }
                call.insert("type".into(), json!("function"));
                call.insert("function".into(), json!({ "name": name, "arguments": arguments }));
                calls_of.entry(msg).or_default().push(Value::Object(call));
            }
            let mut out = Vec::new();
            let mut untrained = Vec::new();
            for (index, role, text, reasoning, tool_call_id, tool_name, train) in rows_of(&mut messages, instance_id)? {
                let mut m = Map::new();
                m.insert("role".into(), json!(role));
                m.insert("content".into(), json!(text));
                if role == "assistant" {
                    m.insert("reasoning_content".into(), json!(reasoning.as_deref().unwrap_or("").trim()));
                    if let Some(c) = calls_of.remove(&index) {
                        m.insert("tool_calls".into(), Value::Array(c));
                    }
                    if train == Some(false) {
                        untrained.push(index);
                    }
                }
                if let Some(id) = tool_call_id {
                    m.insert("tool_call_id".into(), json!(id));
                }
                if let Some(name) = tool_name {
                    m.insert("name".into(), json!(name));
                }
                out.push(Value::Object(m));
            }
            Ok((out, tools, untrained))
        })();
        let failed = read.is_err();
        each(i, read)?;
        if failed {
            break;
        }
    }
    Ok(())
}

/// The next rows of an ordered `(instance_id, row)` stream that belong to
/// `instance_id` (rows of instances before it are passed over).
fn rows_of<T>(
    rows: &mut std::iter::Peekable<impl Iterator<Item = duckdb::Result<(String, T)>>>,
    instance_id: &str,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    loop {
        match rows.peek() {
            Some(Ok((id, _))) if id.as_str() < instance_id => {
                rows.next();
            }
            Some(Ok((id, _))) if id == instance_id => {
                if let Some(Ok((_, row))) = rows.next() {
                    out.push(row);
                }
            }
            Some(Err(_)) => {
                if let Some(Err(e)) = rows.next() {
                    return Err(e.into());
                }
            }
            _ => return Ok(out),
        }
    }
}

/// Number of loaded trajectories (what `views build` would render without `--instance`).
pub fn loaded_trajectories(conn: &Connection) -> Result<u64> {
    Ok(conn.query_row("select count(*) from sft_trajectories", [], |r| r.get::<_, i64>(0))? as u64)
}

/// What a policy does with a message the source marks as not trained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SourceFlags {
    /// Never keep such a message: `all`, `final` and `window:` skip it (and say so);
    /// `keep:` naming it is an error.
    Respect,
    /// Keep it like any assistant message (the source's flag is overridden; recorded in
    /// each view's `origin.source_flags`).
    Ignore,
}

/// Applies the kept-message set to a rendered view: assistant spans of messages not
/// kept lose their loss. Returns the final mask.
pub fn apply_keep(view: &RenderedView, keep: &[i64]) -> Vec<u8> {
    let mut mask = view.assistant_mask.clone();
    let n = mask.len();
    for span in &view.message_spans {
        if span.role == "assistant" && !keep.contains(&(span.index as i64)) {
            for m in &mut mask[span.start.min(n)..span.end.min(n)] {
                *m = 0;
            }
        }
    }
    mask
}

/// What to build.
pub struct BuildOptions {
    pub pool: String,
    pub policy: Policy,
    /// Only these trajectories (all loaded trajectories when empty): an instance names
    /// every attempt of it, a key `<instance>#<attempt>` one attempt.
    pub instances: Vec<String>,
    /// SHA-256 of the tokenizer.json and of the template text, recorded in `origin`.
    pub tokenizer_sha256: String,
    pub template_sha256: String,
    /// Where the template was read ([`TemplateSource::origin`]), recorded in `origin`.
    pub template_origin: String,
    /// Whether the source's per-message training flags bind the policy.
    pub source_flags: SourceFlags,
    /// The variables given to the template besides the conversation (special tokens and
    /// the files they came from; the `strftime_now` instant when the template calls it),
    /// recorded in `origin.template_globals`.
    pub template_globals: Value,
}

/// Renders the chosen trajectories into view JSONL on `out`, one line per trajectory,
/// in instance order. Trajectories render on one thread per core while this thread
/// reads the next ones and writes finished lines in order; `progress` gets the count
/// of lines written.
///
/// Errors: a template that marks no assistant output (no `{% generation %}` block), an
/// instance that is not loaded, a policy keeping a message that is not an assistant
/// message, a kept assistant message to which the template gives no supervised token,
/// a template that is not prefix-preserving, a template or tokenizer failure (naming
/// the instance), a write error, no trajectory loaded, a `keep:` policy naming a
/// message the source marks as not trained (under [`SourceFlags::Respect`]).
///
/// `progress(done, total)` counts rendered trajectories.
pub fn build(
    conn: &Connection,
    template: &ChatTemplate,
    tokenizer: &tokenizers::Tokenizer,
    options: &BuildOptions,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Built> {
    if !template.marks_assistant_output() {
        bail!(
            "the chat template ({}) marks no assistant output: it has no {{% generation %}} block, so every loss mask \
             would be all zeros and the views would train nothing; use a training template that wraps each assistant \
             turn's output in {{% generation %}}...{{% endgeneration %}}",
            options.template_origin
        );
    }
    // (trajectory key, family, source path, source SHA-256)
    type Source = (String, Option<String>, String, String);
    let instances: Vec<Source> = {
        let mut stmt = conn.prepare(
            "select t.instance_id, t.family, l.path, l.sha256, t.instance from sft_trajectories as t \
             join ingest_log as l using (file_id) order by t.instance_id",
        )?;
        let all: Vec<(Source, String)> = stmt
            .query_map([], |r| Ok(((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?), r.get(4)?)))?
            .collect::<duckdb::Result<Vec<_>>>()?;
        // a wanted id names a trajectory by its key, or every attempt of an instance
        let names = |w: &String, key: &String, instance: &String| w == key || w == instance;
        if options.instances.is_empty() {
            all.into_iter().map(|(a, _)| a).collect()
        } else {
            for w in &options.instances {
                if !all.iter().any(|(a, instance)| names(w, &a.0, instance)) {
                    bail!("no trajectory {w} is loaded");
                }
            }
            all.into_iter()
                .filter(|(a, instance)| options.instances.iter().any(|w| names(w, &a.0, instance)))
                .map(|(a, _)| a)
                .collect()
        }
    };
    // This thread reads the trajectories from the database (one connection) and hands
    // them out; one rendering thread per core takes them as they come (rendering and
    // tokenizing is the slow part); this thread also writes the lines in instance order
    // as they are done. The first error in instance order stops the build.
    if instances.is_empty() {
        bail!("no trajectories are loaded, so there is nothing to render; load them first with `load trajectories`");
    }
    let ids: Vec<String> = instances.iter().map(|a| a.0.clone()).collect();
    type Trajectory = (String, Option<String>, String, String, Vec<Value>, Option<Value>, Vec<i64>);
    type Work = (usize, Result<Trajectory>);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(instances.len().max(1));
    let empty = std::sync::Mutex::new(Vec::<String>::new());
    let skipped = std::sync::Mutex::new(Vec::<(String, Vec<i64>)>::new());
    let fallthrough = std::sync::Mutex::new(Vec::<(String, usize)>::new());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let render_one = |(instance_id, family, path, sha256, messages, tools, untrained): Trajectory| -> Result<Vec<u8>> {
        let view = render_view(template, tokenizer, &messages, tools.as_ref())
            .with_context(|| format!("rendering {instance_id}"))?;
        let assistant: Vec<i64> =
            messages.iter().enumerate().filter(|(_, m)| m["role"] == "assistant").map(|(i, _)| i as i64).collect();
        let mut keep = options.policy.keep(&assistant);
        if let Some(bad) = keep.iter().find(|k| !assistant.contains(k)) {
            bail!("{instance_id}: the policy keeps message {bad}, which is not an assistant message");
        }
        let mut not_kept = Vec::new();
        if options.source_flags == SourceFlags::Respect && !untrained.is_empty() {
            if let (Policy::Keep(_), Some(bad)) = (&options.policy, keep.iter().find(|k| untrained.contains(k))) {
                bail!(
                    "{instance_id}: the policy keeps message {bad}, which its source marks as not trained \
                     (loss_weight 0 or mask false); drop it from keep: or pass --source-flags ignore"
                );
            }
            not_kept = keep.iter().copied().filter(|k| untrained.contains(k)).collect();
            keep.retain(|k| !untrained.contains(k));
            if !not_kept.is_empty() {
                skipped.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.push((instance_id.clone(), not_kept.clone()));
            }
        }
        if keep.is_empty() {
            empty.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.push(instance_id.clone());
        }
        let mask = apply_keep(&view, &keep);
        for span in view.message_spans.iter().filter(|s| keep.contains(&(s.index as i64))) {
            if !mask[span.start..span.end].contains(&1) {
                bail!(
                    "{instance_id}: the template marks none of assistant message {} (tokens {}..{}) as output, so the \
                     kept message would train nothing; check that its {{% generation %}} block covers every assistant turn",
                    span.index,
                    span.start,
                    span.end
                );
            }
        }
        // Defence in depth (the contract's supervised_in_kept_assistant, at build time): a
        // supervised token outside every kept assistant message is never written.
        let mut in_kept = vec![false; mask.len()];
        for s in view.message_spans.iter().filter(|s| keep.contains(&(s.index as i64))) {
            in_kept[s.start.min(mask.len())..s.end.min(mask.len())].fill(true);
        }
        if let Some(t) = (0..mask.len()).find(|&t| mask[t] == 1 && !in_kept[t]) {
            let inside = view.message_spans.iter().find(|s| s.start <= t && t < s.end);
            bail!(
                "{instance_id}: supervised token {t} lies outside every kept assistant message ({}); the template's \
                 generation marks and the tokenizer's offsets disagree, so nothing is written",
                inside
                    .map(|s| format!("it is in message {} ({})", s.index, s.role))
                    .unwrap_or_else(|| "it is in no message".into())
            );
        }
        if !view.hf_fallthrough.is_empty() {
            fallthrough
                .lock()
                .map_err(|_| anyhow::anyhow!("poisoned"))?
                .push((instance_id.clone(), view.hf_fallthrough.len()));
        }
        let supervised = mask.iter().filter(|m| **m == 1).count();
        let mut line = serde_json::to_vec(&ViewLine {
            view_id: format!("{}:{}", options.pool, instance_id),
            pool: &options.pool,
            instance_id: &instance_id,
            family: family.as_deref(),
            input_ids: &view.input_ids,
            loss_mask: &mask,
            message_spans: &view.message_spans,
            span_end: "exclusive",
            keep_msgs: &keep,
            ledger: Ledger { n_tokens: view.input_ids.len(), n_supervised: supervised },
            source_path: &path,
            source_sha256: &sha256,
            origin: json!({
                "builder": crate::RULES_CODE,
                "policy": options.policy.describe(),
                "source_flags": match options.source_flags { SourceFlags::Respect => "respect", SourceFlags::Ignore => "ignore" },
                "source_untrained_not_kept": not_kept,
                "template_sha256": options.template_sha256,
                "template_source": options.template_origin,
                "template_globals": options.template_globals,
                "tokenizer_sha256": options.tokenizer_sha256,
                "mask_rule": if view.hf_fallthrough.is_empty() { json!("hf") } else {
                    json!({ "rule": "hf, overlap where HF leaves the generation range", "generation_ranges": view.hf_fallthrough })
                },
            }),
        })?;
        line.push(b'\n');
        Ok(line)
    };
    let (work_tx, work_rx) = std::sync::mpsc::sync_channel::<Work>(threads * 2);
    let work_rx = std::sync::Mutex::new(work_rx);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, Result<Vec<u8>>)>();
    let total = instances.len();
    let written = std::thread::scope(|scope| -> Result<u64> {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let (work_rx, stop, render_one) = (&work_rx, &stop, &render_one);
            scope.spawn(move || {
                loop {
                    let next = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok((i, read)) = next else { break };
                    let result = if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        Err(anyhow::anyhow!("stopped"))
                    } else {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read.and_then(render_one)))
                            .unwrap_or_else(|_| Err(anyhow::anyhow!("a rendering thread panicked")))
                    };
                    if done_tx.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        // lines done out of order wait in `pending`
        let mut pending = std::collections::BTreeMap::new();
        let mut written = 0u64;
        progress(0, total as u64);
        let mut write_ready = |pending: &mut std::collections::BTreeMap<usize, Result<Vec<u8>>>| -> Result<()> {
            while let Some(line) = pending.remove(&(written as usize)) {
                out.write_all(&line?)?;
                written += 1;
                progress(written, total as u64);
            }
            Ok(())
        };
        let outcome = (|| -> Result<()> {
            read_trajectories(conn, &ids, !options.instances.is_empty(), |i, read| {
                let (instance_id, family, path, sha256) = instances[i].clone();
                let read = read.map(|(m, t, untrained)| (instance_id, family, path, sha256, m, t, untrained));
                work_tx.send((i, read)).map_err(|_| anyhow::anyhow!("the rendering threads stopped"))?;
                while let Ok((i, line)) = done_rx.try_recv() {
                    pending.insert(i, line);
                }
                write_ready(&mut pending)
            })?;
            drop(work_tx);
            for (i, line) in done_rx.iter() {
                pending.insert(i, line);
                write_ready(&mut pending)?;
            }
            Ok(())
        })();
        if outcome.is_err() {
            // the renderers skip what is left and end when the work channel closes
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        outcome?;
        if written as usize != total {
            bail!("{} of {total} views were not rendered", total - written as usize);
        }
        Ok(written)
    })?;
    let mut empty = empty.into_inner().map_err(|_| anyhow::anyhow!("poisoned"))?;
    empty.sort();
    let mut source_untrained = skipped.into_inner().map_err(|_| anyhow::anyhow!("poisoned"))?;
    source_untrained.sort();
    let mut hf_fallthrough = fallthrough.into_inner().map_err(|_| anyhow::anyhow!("poisoned"))?;
    hf_fallthrough.sort();
    Ok(Built { written, unsupervised: empty, source_untrained, hf_fallthrough })
}

/// One line of view JSONL as `views build` writes it (fields in this order; see
/// docs/formats.md, "view JSONL"): serialized straight from the rendered view, so
/// a view's million ids are not first made into JSON values.
#[derive(serde::Serialize)]
struct ViewLine<'a> {
    view_id: String,
    pool: &'a str,
    instance_id: &'a str,
    family: Option<&'a str>,
    input_ids: &'a [u32],
    loss_mask: &'a [u8],
    message_spans: &'a [super::render::MessageSpan],
    span_end: &'static str,
    keep_msgs: &'a [i64],
    ledger: Ledger,
    source_path: &'a str,
    source_sha256: &'a str,
    origin: Value,
}

/// A view line's `ledger`: its token count and supervised-token count.
#[derive(serde::Serialize)]
struct Ledger {
    n_tokens: usize,
    n_supervised: usize,
}

/// What [`build`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// Views written.
    pub written: u64,
    /// Instances whose view keeps no message under the policy (no supervised token).
    pub unsupervised: Vec<String>,
    /// Assistant messages the policy would have kept but the source marks as not trained
    /// (skipped under [`SourceFlags::Respect`]), per instance, by message index.
    pub source_untrained: Vec<(String, Vec<i64>)>,
    /// Instances with generation ranges where Hugging Face's
    /// `return_assistant_tokens_mask` would supervise past the range (to the end of the
    /// sequence) or stop supervising, with the count of such ranges: their tokens were
    /// marked by overlap instead, recorded in each view's `origin.mask_rule`.
    pub hf_fallthrough: Vec<(String, usize)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        let assistant = [2, 4, 6, 8];
        assert_eq!(Policy::parse("all").unwrap().keep(&assistant), vec![2, 4, 6, 8]);
        assert_eq!(Policy::parse("final").unwrap().keep(&assistant), vec![8]);
        assert_eq!(Policy::parse("window:3-6").unwrap().keep(&assistant), vec![4, 6]);
        assert_eq!(Policy::parse("keep:2,8").unwrap().keep(&assistant), vec![2, 8]);
        assert!(Policy::parse("window:6-3").is_err());
        assert!(Policy::parse("some").unwrap_err().to_string().contains("use all, final"));
    }

    /// The special tokens as `from_pretrained` sets them: tokenizer_config.json (strings and
    /// AddedToken objects; `null` unsets), then special_tokens_map.json, whose values win.
    #[test]
    fn special_tokens_beside_the_tokenizer() {
        let dir = std::env::temp_dir().join(format!("sphragis-special-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let tokenizer = dir.join("tokenizer.json");
        assert_eq!(special_tokens(&tokenizer).unwrap(), SpecialTokens::default(), "no file: no special token");
        std::fs::write(
            dir.join("tokenizer_config.json"),
            r#"{"bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false}, "eos_token": "</s>",
                "pad_token": null, "unk_token": "<unk>", "model_max_length": 4096}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("special_tokens_map.json"),
            r#"{"eos_token": {"content": "<|end|>"}, "additional_special_tokens": ["<|user|>", {"content": "<|assistant|>"}]}"#,
        )
        .unwrap();
        let got = special_tokens(&tokenizer).unwrap();
        assert_eq!(
            got.to_json(),
            json!({"bos_token": "<s>", "eos_token": "<|end|>", "unk_token": "<unk>",
                   "additional_special_tokens": ["<|user|>", "<|assistant|>"]})
        );
        assert_eq!(
            got.values.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["bos_token", "eos_token", "unk_token", "additional_special_tokens"]
        );
        assert_eq!(got.sources.len(), 2);
        std::fs::write(dir.join("special_tokens_map.json"), r#"{"eos_token": 7}"#).unwrap();
        let err = special_tokens(&tokenizer).unwrap_err().to_string();
        assert!(err.contains("special_tokens_map.json: field `eos_token`: expected a token"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
