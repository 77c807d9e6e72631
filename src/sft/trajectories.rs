//! Agent trajectories (SPEC §3.1 "trajectories"): adapters that read six public
//! coding-agent formats into one normalized message schema, plus two rules over the
//! messages — which shell commands a message runs ([`bash_commands`]) and whether a
//! command queries git history ([`is_git_history_command`], SPEC §3.4 "history
//! queries").
//!
//! # Formats (see `shared/data/sft/*/PROVENANCE.md`)
//!
//! | reader | `source` | file | tool calls |
//! |---|---|---|---|
//! | [`read_mini_swe_agent`] | `mini-swe-agent` | one `<id>.traj.json` (format `mini-swe-agent-1`; 2.x: `mini-swe-agent-1.1`) | ```` ```bash ```` blocks in assistant text; 2.x: OpenAI `tool_calls` or ```` ```mswea_bash_command ```` blocks |
//! | [`read_swe_agent_traj`] | `swe-agent` | one SWE-agent `.traj` (its `history`) | OpenAI `tool_calls`, or the text `action` of older files |
//! | [`read_openhands_rows`] | `openhands` | JSON array (SWE-Gym/OpenHands-Sampled-Trajectories rows) | OpenAI `tool_calls`, parallel calls |
//! | [`read_nebius_rows`] | `nebius` | JSON array (nebius/SWE-agent-trajectories rows) | SWE-agent text commands in a fenced block |
//! | [`read_swe_smith_rows`] | `swe-smith` | JSON array (SWE-bench/SWE-smith-trajectories rows) | `<function=NAME><parameter=P>V</parameter></function>` in text |
//! | [`read_llamafactory_jsonl`] | `llamafactory` | JSONL, LLaMA-Factory "v1" typed content parts | `tool_call` parts |
//!
//! [`detect_and_read`] picks the reader from the file's content. Every reader takes the
//! text the input layer read once ([`crate::ingest::Input`]); the path is only a label
//! for errors (and the source of an id when the format names none). No reader opens
//! another file: an evaluator outcome enters only through `load outcomes`.
//!
//! # Normalization
//!
//! * Messages are kept one for one, in file order; [`Message::index`] is the 0-based
//!   position in the source list (the same index message spans use).
//! * Roles are the source's own (`ai` → [`Role::Assistant`]). Observations that a
//!   text-command agent receives as `user` messages (mini-swe-agent, nebius,
//!   swe-smith, older SWE-agent) stay [`Role::User`]: that is how they are rendered
//!   for training.
//! * A tool call written in the text (a bash block, an XML-style function, a SWE-agent
//!   command) becomes a [`ToolCall`] with `from_text = true`; the text stays in
//!   [`Message::text`] unchanged. Structured calls have `from_text = false`.
//! * [`Message::train`] is the source's own supervision verdict: nebius `mask`;
//!   LLaMA-Factory `loss_weight > 1e-6` with its default (1.0 for assistant, else 0.0).
//!   `None` when the format declares nothing (the consumer picks a convention).
//!
//! # Errors
//!
//! Every error is an [`InputError`](crate::ingest::InputError): the file, for row formats
//! the 1-based line where the row starts (in a JSON array too), the field path prefixed
//! with the 0-based row, and what is wrong, e.g.
//! ``data.json:4: field `[3].messages[5].tool_calls[0].function.arguments`: not JSON: EOF
//! while parsing a string at line 1 column 12``.

use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;
use std::sync::LazyLock;

use anyhow::{Result, anyhow, bail};
use regex::Regex;
use serde::Serialize;
use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------

/// `source` of mini-swe-agent trajectories.
pub const SOURCE_MINI_SWE_AGENT: &str = "mini-swe-agent";
/// `source` of SWE-agent `.traj` files.
pub const SOURCE_SWE_AGENT: &str = "swe-agent";
/// `source` of OpenHands rows (SWE-Gym/OpenHands-Sampled-Trajectories).
pub const SOURCE_OPENHANDS: &str = "openhands";
/// `source` of nebius/SWE-agent-trajectories rows.
pub const SOURCE_NEBIUS: &str = "nebius";
/// `source` of SWE-bench/SWE-smith-trajectories rows.
pub const SOURCE_SWE_SMITH: &str = "swe-smith";
/// `source` of LLaMA-Factory v1 JSONL rows.
pub const SOURCE_LLAMAFACTORY: &str = "llamafactory";

/// The role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    /// `"system"`, `"user"`, `"assistant"` or `"tool"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role for a source's role string: `system`, `user`, `assistant` (nebius: `ai`),
    /// `tool`. `None` for anything else.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "system" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" | "ai" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// One tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The call id when the source has one (OpenAI `tool_calls[].id`); text-style calls
    /// have none.
    pub id: Option<String>,
    /// Tool name: `function.name`; `"bash"` for a mini-swe-agent bash block; the
    /// function of a swe-smith `<function=NAME>`; the first word of a SWE-agent text
    /// command (`open`, `edit`, `python`, `rm`, ...).
    pub name: String,
    /// Always a JSON object. Structured calls: the parsed `arguments`. Bash blocks and
    /// SWE-agent text commands: `{"command": "<the command text>"}`. swe-smith XML calls:
    /// one string per `<parameter=P>` (values are never typed: `view_range` stays the
    /// string `"[1, 50]"`).
    pub arguments: Value,
    /// `true` when the call was parsed out of the message text rather than read from a
    /// structured field.
    pub from_text: bool,
}

/// One message, normalized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// 0-based position in the source's message list.
    pub index: usize,
    pub role: Role,
    /// The visible text, verbatim (CRLF and control characters kept). Text parts of a
    /// list-valued `content` are concatenated; `null` content is `""`. nebius: the
    /// system row's `system_prompt` when its `text` is empty.
    pub text: String,
    /// Thinking text when the source keeps it apart from `text`: mini-swe-agent's
    /// `extra.response.choices[0].message.reasoning` (raw, not trimmed; `None` when null
    /// or absent), LLaMA-Factory `reasoning` parts (concatenated). An empty string is
    /// kept as `Some("")` (a blank placeholder, SPEC §3.4).
    pub reasoning: Option<String>,
    /// Tool calls in order (several = parallel calls).
    pub tool_calls: Vec<ToolCall>,
    /// On tool messages: the call answered (`tool_call_id`; SWE-agent `tool_call_ids`,
    /// joined with `,` if there were several).
    pub tool_call_id: Option<String>,
    /// On tool messages: the tool's name (`name`, else looked up from the call with
    /// `tool_call_id` in an earlier message; `None` when neither exists, e.g.
    /// LLaMA-Factory, whose tool messages answer all calls of a turn at once).
    pub tool_name: Option<String>,
    /// mini-swe-agent observations: N of a leading `<returncode>N</returncode>`.
    pub returncode: Option<i32>,
    /// nebius: the row's `mask` (true = the dataset trains on the message).
    pub mask: Option<bool>,
    /// LLaMA-Factory: the message's explicit `loss_weight` (`None` when not set).
    pub loss_weight: Option<f64>,
    /// The source's supervision verdict for the message (see the module docs); `None`
    /// when the format has none.
    pub train: Option<bool>,
}

/// Per-list counts of a SWE-bench `tests_status` entry (numbers of test ids).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TestCounts {
    pub success: usize,
    pub failure: usize,
}

/// The evaluator's verdict from a SWE-bench harness `report.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// `resolved`.
    pub resolved: bool,
    /// `patch_successfully_applied`, when present.
    pub patch_applied: Option<bool>,
    /// False when the report has no `tests_status` (SWE-bench writes none when the patch
    /// was None or did not apply): no test was graded, and the counts below are 0 only
    /// as placeholders — the store writes them as NULL, never as zero results.
    pub graded: bool,
    /// `tests_status.FAIL_TO_PASS`: the declared fail-to-pass tests.
    pub fail_to_pass: TestCounts,
    /// `tests_status.PASS_TO_PASS`.
    pub pass_to_pass: TestCounts,
    /// `tests_status.FAIL_TO_FAIL`, when present.
    pub fail_to_fail: Option<TestCounts>,
    /// `tests_status.PASS_TO_FAIL`, when present.
    pub pass_to_fail: Option<TestCounts>,
}

/// One trajectory (one task attempt), normalized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trajectory {
    /// mini-swe-agent: `instance_id`; SWE-agent: the file stem; openhands, nebius,
    /// swe-smith: the row's `instance_id` as given (the ADP extraction appended `_<n>`
    /// to openhands and nebius ids; swe-smith's unique id is in `id`, not used);
    /// LLaMA-Factory: `<file stem>:<row index>`.
    pub instance_id: String,
    /// One of the `SOURCE_*` constants.
    pub source: &'static str,
    /// The file's own evaluator verdict: openhands and swe-smith `resolved`; nebius
    /// `target`. `None` when the file has none (mini-swe-agent, SWE-agent,
    /// LLaMA-Factory: their outcomes are SWE-bench reports, loaded as `outcomes`).
    pub resolved: Option<bool>,
    /// OpenAI tool schemas (the source's `tools`: openhands list, LLaMA-Factory JSON
    /// string parsed); `None` when absent.
    pub tools: Option<Value>,
    /// The row's own `repo` field (`owner/name`, as SWE-bench task rows carry it) in the
    /// row formats (openhands, nebius, swe-smith); `None` when absent. The family comes
    /// from it before the id's scheme ([`crate::sft::family`]).
    pub repo: Option<String>,
    pub messages: Vec<Message>,
}

impl Message {
    fn new(index: usize, role: Role, text: String) -> Message {
        Message {
            index,
            role,
            text,
            reasoning: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            returncode: None,
            mask: None,
            loss_weight: None,
            train: None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Error locations and JSON field access
// ---------------------------------------------------------------------------------------

/// Where in a file we are: prefixes every error.
#[derive(Clone, Copy)]
struct Loc<'a> {
    file: &'a Path,
    row: Option<usize>,
    line: Option<usize>,
}

impl<'a> Loc<'a> {
    fn file(file: &'a Path) -> Self {
        Loc { file, row: None, line: None }
    }
    fn row(self, row: usize) -> Self {
        Loc { row: Some(row), ..self }
    }
    fn line(self, line: u64) -> Self {
        Loc { line: Some(line as usize), ..self }
    }
    /// An [`InputError`](crate::ingest::InputError) here: the row's line, and the field
    /// prefixed with the row (`[3].messages[5].content`, as review4repair rows are named).
    fn err(&self, field: &str, msg: impl Display) -> anyhow::Error {
        let field = match (self.row, field.is_empty()) {
            (Some(r), true) => Some(format!("[{r}]")),
            (Some(r), false) => Some(format!("[{r}].{field}")),
            (None, true) => None,
            (None, false) => Some(field.to_string()),
        };
        crate::ingest::InputError {
            path: self.file.to_path_buf(),
            line: self.line.map(|l| l as u64),
            field,
            message: msg.to_string(),
        }
        .into()
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn as_object<'v>(loc: &Loc, v: &'v Value, path: &str) -> Result<&'v Map<String, Value>> {
    v.as_object().ok_or_else(|| loc.err(path, format!("expected an object, got {}", kind(v))))
}

/// The value of `key`, `None` when absent or null.
fn get<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn req<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<&'v Value> {
    get(obj, key).ok_or_else(|| loc.err(&join(path, key), "missing"))
}

fn req_str<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<&'v str> {
    let v = req(loc, obj, key, path)?;
    v.as_str().ok_or_else(|| loc.err(&join(path, key), format!("expected a string, got {}", kind(v))))
}

fn opt_str<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<Option<&'v str>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(loc.err(&join(path, key), format!("expected a string, got {}", kind(v)))),
    }
}

fn opt_bool(loc: &Loc, obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<bool>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(loc.err(&join(path, key), format!("expected a boolean, got {}", kind(v)))),
    }
}

fn req_array<'v>(loc: &Loc, obj: &'v Map<String, Value>, key: &str, path: &str) -> Result<&'v Vec<Value>> {
    let v = req(loc, obj, key, path)?;
    v.as_array().ok_or_else(|| loc.err(&join(path, key), format!("expected an array, got {}", kind(v))))
}

fn req_role(loc: &Loc, obj: &Map<String, Value>, path: &str) -> Result<Role> {
    let s = req_str(loc, obj, "role", path)?;
    Role::parse(s).ok_or_else(|| loc.err(&join(path, "role"), format!("unknown role {s:?}")))
}

/// OpenAI-style `content`: a string, null (→ `""`) or a list of `{type: "text", text}`
/// parts (concatenated).
fn openai_content(loc: &Loc, obj: &Map<String, Value>, path: &str) -> Result<String> {
    let p = join(path, "content");
    match get(obj, "content") {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for (k, part) in parts.iter().enumerate() {
                let pp = format!("{p}[{k}]");
                let part = as_object(loc, part, &pp)?;
                let ty = req_str(loc, part, "type", &pp)?;
                if ty != "text" {
                    return Err(loc.err(&join(&pp, "type"), format!("unsupported content part type {ty:?}")));
                }
                text.push_str(req_str(loc, part, "text", &pp)?);
            }
            Ok(text)
        }
        Some(v) => Err(loc.err(&p, format!("expected a string or a list of parts, got {}", kind(v)))),
    }
}

/// Arguments of a structured call: a JSON string holding an object (empty string = `{}`),
/// or an object.
fn call_arguments(loc: &Loc, v: Option<&Value>, path: &str) -> Result<Value> {
    let parsed = match v {
        None => return Ok(Value::Object(Map::new())),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Value::Object(Map::new())),
        Some(Value::String(s)) => {
            serde_json::from_str::<Value>(s).map_err(|e| loc.err(path, format!("not JSON: {e}")))?
        }
        Some(v) => v.clone(),
    };
    if !parsed.is_object() {
        return Err(loc.err(path, format!("expected a JSON object, got {}", kind(&parsed))));
    }
    Ok(parsed)
}

/// OpenAI `tool_calls` (`[{id, type, function: {name, arguments}}]`).
fn openai_tool_calls(loc: &Loc, obj: &Map<String, Value>, path: &str) -> Result<Vec<ToolCall>> {
    let Some(v) = get(obj, "tool_calls") else { return Ok(Vec::new()) };
    let p = join(path, "tool_calls");
    let calls = v.as_array().ok_or_else(|| loc.err(&p, format!("expected an array, got {}", kind(v))))?;
    let mut out = Vec::with_capacity(calls.len());
    for (k, c) in calls.iter().enumerate() {
        let cp = format!("{p}[{k}]");
        let c = as_object(loc, c, &cp)?;
        let id = opt_str(loc, c, "id", &cp)?.map(str::to_string);
        let fp = join(&cp, "function");
        let f = as_object(loc, req(loc, c, "function", &cp)?, &fp)?;
        let name = req_str(loc, f, "name", &fp)?.to_string();
        let arguments = call_arguments(loc, get(f, "arguments"), &join(&fp, "arguments"))?;
        out.push(ToolCall { id, name, arguments, from_text: false });
    }
    Ok(out)
}

/// Fill `tool_name` of tool messages from the call their `tool_call_id` answers.
fn link_tool_names(messages: &mut [Message]) {
    let mut names: HashMap<String, String> = HashMap::new();
    for m in messages.iter_mut() {
        for c in &m.tool_calls {
            if let Some(id) = &c.id {
                names.insert(id.clone(), c.name.clone());
            }
        }
        if m.role == Role::Tool
            && m.tool_name.is_none()
            && let Some(id) = &m.tool_call_id
        {
            m.tool_name = names.get(id).cloned();
        }
    }
}

fn parse_json_file(path: &Path, text: &str) -> Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).map_err(|e| anyhow!("{}: not JSON: {e}", path.display()))
}

/// The rows of a JSON array text, each with the line it starts on, parsed.
fn array_values(path: &Path, text: &str) -> Result<Vec<(u64, Value)>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    crate::ingest::json::array_rows(path, text)?
        .into_iter()
        .map(|(line, raw)| {
            let value: Value = serde_json::from_str(raw.get())
                .map_err(|e| crate::ingest::InputError::at(path, Some(line), None, format!("malformed JSON: {e}")))?;
            Ok::<_, anyhow::Error>((line, value))
        })
        .collect()
}

fn rows_of<'v>(loc: &Loc, v: &'v Value) -> Result<&'v Vec<Value>> {
    v.as_array().ok_or_else(|| loc.err("", format!("expected a JSON array of rows, got {}", kind(v))))
}

// ---------------------------------------------------------------------------------------
// Text-style actions
// ---------------------------------------------------------------------------------------

/// mini-swe-agent's `action_regex` default `` ```bash\s*\n(.*?)\n``` `` (DOTALL; agent
/// config of mini-swe-agent 1.x, unchanged in the trajectories' `info.config`), with one
/// tolerance: a `\r` before the closing fence's newline is not part of the body.
static BASH_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```bash\s*\n(.*?)\r?\n```").expect("bash block regex"));

/// The bodies of the ```` ```bash ```` blocks of a text, in order, as mini-swe-agent's
/// regex finds them: `` ```bash\s*\n(.*?)\n``` `` with `.` matching newlines. Bodies
/// are verbatim (mini-swe-agent runs them `.strip()`-ed); inner CRLF is kept. A block
/// whose closing fence follows its opening line directly (```` ```bash\n``` ````) is no
/// match (as in mini-swe-agent); one with a blank body line gives `""`. Every block is
/// returned even when there are several (mini-swe-agent then answers with a format
/// error and runs none).
pub fn bash_blocks(text: &str) -> Vec<&str> {
    BASH_BLOCK.captures_iter(text).map(|c| c.get(1).map_or("", |m| m.as_str())).collect()
}

static XML_FUNCTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)<function=([^>]+)>(.*?)</function>").expect("function regex"));
static XML_PARAMETER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)<parameter=([^>]+)>(.*?)</parameter>").expect("parameter regex"));

/// Tool calls written as `<function=NAME><parameter=P>V</parameter>...</function>`
/// (SWE-agent's / OpenHands' XML function-calling text format used by swe-smith), in
/// order. Each parameter value loses one leading and one trailing line break (`\n` or
/// `\r\n`: the multi-line layout the format prescribes) and is otherwise verbatim; values
/// stay strings. A later duplicate parameter wins. Names and parameter names are
/// trimmed. Calls get `id = None`, `from_text = true`.
pub fn xml_function_calls(text: &str) -> Vec<ToolCall> {
    XML_FUNCTION
        .captures_iter(text)
        .map(|c| {
            let name = c[1].trim().to_string();
            let mut args = Map::new();
            for p in XML_PARAMETER.captures_iter(&c[2]) {
                let mut v = &p[2];
                v = v.strip_prefix("\r\n").or_else(|| v.strip_prefix('\n')).unwrap_or(v);
                v = v.strip_suffix("\r\n").or_else(|| v.strip_suffix('\n')).unwrap_or(v);
                args.insert(p[1].trim().to_string(), Value::String(v.to_string()));
            }
            ToolCall { id: None, name, arguments: Value::Object(args), from_text: true }
        })
        .collect()
}

static FENCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^```(\S*)\s*\n|^```\s*$").expect("fence regex"));

/// The action of a SWE-agent text-format response: the body of the last fenced code
/// block that is not nested in another, as SWE-agent's `ThoughtActionParser` finds it
/// (fence regex `` ^```(\S*)\s*\n|^```\s*$ `` multi-line; a fence with a language or at
/// depth 0 opens, a bare fence inside a block closes). Returned verbatim (with its
/// trailing newline); `None` when there is no complete block.
pub fn swe_agent_text_action(text: &str) -> Option<&str> {
    let mut stack: Vec<regex::Match> = Vec::new();
    let mut last: Option<(usize, usize)> = None;
    for c in FENCE.captures_iter(text) {
        let m = c.get(0).expect("group 0");
        let lang = c.get(1).map(|g| g.as_str());
        if !stack.is_empty() && lang.is_none_or(str::is_empty) {
            let start = stack.pop().expect("non-empty");
            if stack.is_empty() {
                last = Some((start.end(), m.start()));
            }
        } else if lang.is_some() {
            stack.push(m);
        }
    }
    last.map(|(a, b)| &text[a..b.max(a)])
}

/// A SWE-agent text command as a tool call: name = its first word, arguments =
/// `{"command": <the command, trimmed>}`. `None` for a blank command.
pub fn swe_agent_command_call(action: &str) -> Option<ToolCall> {
    let command = action.trim();
    let name = command.split_whitespace().next()?;
    let mut args = Map::new();
    args.insert("command".into(), Value::String(command.to_string()));
    Some(ToolCall { id: None, name: name.to_string(), arguments: Value::Object(args), from_text: true })
}

static RETURNCODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*<returncode>(-?\d+)</returncode>").expect("returncode regex"));

/// N of an observation that starts with `<returncode>N</returncode>` (mini-swe-agent's
/// observation template); `None` otherwise (format errors, the final diff).
pub fn observation_returncode(text: &str) -> Option<i32> {
    RETURNCODE.captures(text).and_then(|c| c[1].parse().ok())
}

// ---------------------------------------------------------------------------------------
// Readers
// ---------------------------------------------------------------------------------------

/// Read one mini-swe-agent trajectory (`trajectory_format` "mini-swe-agent-1": top-level
/// `instance_id`, `messages[*]` {`role`, `content`, `extra`}).
///
/// `trajectory_format` "mini-swe-agent-1.1" (mini-swe-agent 2.x, its docs' "v2 migration
/// guide"): assistant messages carry OpenAI `tool_calls` (tool-calling models) or
/// ```` ```mswea_bash_command ```` blocks (text-based models); observations are `role:
/// "tool"` messages with `tool_call_id` (or `user` messages for text-based models); the
/// last message is `role: "exit"` (the submission), which is not a chat message and is
/// not stored. Any other `trajectory_format` value is an error naming the field.
///
/// * assistant messages: one `bash` [`ToolCall`] per ```` ```bash ```` block
///   ([`bash_blocks`]), `reasoning` = `extra.response.choices[0].message.reasoning`;
/// * user messages: `returncode` from a leading `<returncode>N</returncode>`;
/// * `resolved` is `None`: the trajectory carries no evaluation. Its SWE-bench
///   `report.json` (`<root>/logs/<id>/report.json` in SWE-bench experiment folders) is
///   never read from here: load it with `load outcomes`, so it is logged with its
///   SHA-256 like every input.
///
/// `instance_id` falls back to the file name without `.traj.json` when absent.
pub fn read_mini_swe_agent(path: &Path, text: &str) -> Result<Trajectory> {
    mini_swe_agent_from_value(path, &parse_json_file(path, text)?)
}

/// The `trajectory_format` values [`read_mini_swe_agent`] knows: 1.x files, and 2.x
/// files (`mini-swe-agent-1.1`). Any other value is refused, never guessed.
pub const MINI_SWE_AGENT_FORMATS: &[&str] = &["mini-swe-agent-1", "mini-swe-agent-1.1"];

/// mini-swe-agent 2.x's text-based `action_regex` default: the fence is named
/// `mswea_bash_command` (1.x: `bash`); same shape as [`BASH_BLOCK`].
static MSWEA_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```mswea_bash_command\s*\n(.*?)\r?\n```").expect("mswea block regex"));

fn mini_swe_agent_from_value(path: &Path, v: &Value) -> Result<Trajectory> {
    let loc = Loc::file(path);
    let top = as_object(&loc, v, "")?;
    let v2 = match opt_str(&loc, top, "trajectory_format", "")? {
        None | Some("mini-swe-agent-1") => false,
        Some("mini-swe-agent-1.1") => true,
        Some(other) => {
            return Err(loc.err(
                "trajectory_format",
                format!("unknown value {other:?} (known: {})", MINI_SWE_AGENT_FORMATS.join(", ")),
            ));
        }
    };
    let instance_id = match opt_str(&loc, top, "instance_id", "")? {
        Some(s) => s.to_string(),
        None => {
            let name = path.file_name().and_then(|s| s.to_str()).unwrap_or_default();
            name.strip_suffix(".traj.json").unwrap_or(name).to_string()
        }
    };
    let msgs = req_array(&loc, top, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        // 2.x ends with `{"role": "exit", "content": <submission>, "extra": {exit_status,
        // submission}}`: the harness's record of the exit, never sent to the model.
        if v2 && get(m, "role").and_then(Value::as_str) == Some("exit") {
            if i + 1 != msgs.len() {
                return Err(loc.err(&join(&p, "role"), "an `exit` message before the last message"));
            }
            break;
        }
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        match role {
            Role::Assistant if v2 => {
                // tool-calling models: OpenAI `tool_calls`; text-based models: fenced blocks
                msg.tool_calls = openai_tool_calls(&loc, m, &p)?;
                if msg.tool_calls.is_empty() {
                    msg.tool_calls = MSWEA_BLOCK
                        .captures_iter(&msg.text)
                        .map(|c| bash_call(c.get(1).map_or("", |g| g.as_str())))
                        .collect();
                }
                msg.reasoning = mini_reasoning(&loc, m, &p)?;
            }
            Role::Assistant => {
                msg.tool_calls = bash_blocks(&msg.text).into_iter().map(bash_call).collect();
                msg.reasoning = mini_reasoning(&loc, m, &p)?;
            }
            Role::Tool => {
                msg.tool_call_id = opt_str(&loc, m, "tool_call_id", &p)?.map(str::to_string);
                msg.returncode = observation_returncode(&msg.text);
            }
            Role::User => msg.returncode = observation_returncode(&msg.text),
            _ => {}
        }
        messages.push(msg);
    }
    link_tool_names(&mut messages);
    Ok(Trajectory { instance_id, source: SOURCE_MINI_SWE_AGENT, resolved: None, tools: None, repo: None, messages })
}

fn bash_call(body: &str) -> ToolCall {
    let mut args = Map::new();
    args.insert("command".into(), Value::String(body.to_string()));
    ToolCall { id: None, name: "bash".into(), arguments: Value::Object(args), from_text: true }
}

/// `extra.response.choices[0].message.reasoning`; any missing link → `None`.
fn mini_reasoning(loc: &Loc, m: &Map<String, Value>, path: &str) -> Result<Option<String>> {
    let msg = get(m, "extra")
        .and_then(|e| e.get("response"))
        .and_then(|r| r.get("choices"))
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("message"))
        .and_then(Value::as_object);
    match msg {
        None => Ok(None),
        Some(o) => {
            Ok(opt_str(loc, o, "reasoning", &join(path, "extra.response.choices[0].message"))?.map(str::to_string))
        }
    }
}

/// Read a SWE-bench harness `report.json`: `{resolved, patch_successfully_applied,
/// tests_status: {FAIL_TO_PASS: {success: [ids], failure: [ids]}, PASS_TO_PASS, ...}}`,
/// or the same object nested under its instance id (`{"<id>": {...}}`, the harness's
/// own layout). Counts are numbers of test ids. Errors name the file and field.
pub fn read_swebench_report(path: &Path, text: &str) -> Result<Outcome> {
    swebench_report_from_value(path, &parse_json_file(path, text)?)
}

/// [`read_swebench_report`] of an already parsed document.
pub fn swebench_report_from_value(path: &Path, v: &Value) -> Result<Outcome> {
    let loc = Loc::file(path);
    let mut obj = as_object(&loc, v, "")?;
    let mut base = String::new();
    if !obj.contains_key("resolved") && obj.len() == 1 {
        let (k, inner) = obj.iter().next().expect("one key");
        base = k.clone();
        obj = as_object(&loc, inner, &base)?;
    }
    let resolved =
        opt_bool(&loc, obj, "resolved", &base)?.ok_or_else(|| loc.err(&join(&base, "resolved"), "missing"))?;
    let patch_applied = opt_bool(&loc, obj, "patch_successfully_applied", &base)?;
    let tp = join(&base, "tests_status");
    // SWE-bench writes no tests_status when the patch is None or did not apply
    // (grading.get_eval_report): no test ran; the outcome is not graded.
    let empty = serde_json::Map::new();
    let ts = match get(obj, "tests_status") {
        Some(t) => as_object(&loc, t, &tp)?,
        None if !resolved => &empty,
        None => return Err(loc.err(&tp, "missing on a resolved report")),
    };
    let counts = |key: &str| -> Result<Option<TestCounts>> {
        let Some(e) = get(ts, key) else {
            return Ok(if ts.is_empty() { Some(TestCounts::default()) } else { None });
        };
        let ep = join(&tp, key);
        let e = as_object(&loc, e, &ep)?;
        let n = |k: &str| -> Result<usize> {
            match get(e, k) {
                None => Ok(0),
                Some(Value::Array(a)) => Ok(a.len()),
                Some(v) => Err(loc.err(&join(&ep, k), format!("expected an array, got {}", kind(v)))),
            }
        };
        Ok(Some(TestCounts { success: n("success")?, failure: n("failure")? }))
    };
    Ok(Outcome {
        resolved,
        patch_applied,
        graded: get(obj, "tests_status").is_some(),
        fail_to_pass: counts("FAIL_TO_PASS")?.ok_or_else(|| loc.err(&join(&tp, "FAIL_TO_PASS"), "missing"))?,
        pass_to_pass: counts("PASS_TO_PASS")?.ok_or_else(|| loc.err(&join(&tp, "PASS_TO_PASS"), "missing"))?,
        fail_to_fail: counts("FAIL_TO_FAIL")?,
        pass_to_fail: counts("PASS_TO_FAIL")?,
    })
}

/// Read one SWE-agent `.traj` file from its `history` (the chat as sent to the model).
///
/// * `content`: string or list of `{type: "text", text}` parts;
/// * assistant: structured `tool_calls` when present (function-calling files); else
///   the `action` field (older text-command files such as the pydicom run) becomes one
///   text-style call via [`swe_agent_command_call`] (first word = tool name);
/// * tool messages: `tool_call_ids` → `tool_call_id`, name from the call answered.
///
/// `instance_id` is the file stem (the files carry none); `resolved` is `None`
/// (`info.exit_status` "submitted" is not an evaluation). `thought` is part of
/// `content` and is not copied to `reasoning`.
pub fn read_swe_agent_traj(path: &Path, text: &str) -> Result<Trajectory> {
    swe_agent_from_value(path, &parse_json_file(path, text)?)
}

fn swe_agent_from_value(path: &Path, v: &Value) -> Result<Trajectory> {
    let loc = Loc::file(path);
    let top = as_object(&loc, v, "")?;
    let hist = req_array(&loc, top, "history", "")?;
    let mut messages = Vec::with_capacity(hist.len());
    for (i, m) in hist.iter().enumerate() {
        let p = format!("history[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        msg.tool_calls = openai_tool_calls(&loc, m, &p)?;
        if role == Role::Assistant
            && msg.tool_calls.is_empty()
            && let Some(action) = opt_str(&loc, m, "action", &p)?
        {
            msg.tool_calls.extend(swe_agent_command_call(action));
        }
        if let Some(ids) = get(m, "tool_call_ids") {
            let ip = join(&p, "tool_call_ids");
            let ids = ids.as_array().ok_or_else(|| loc.err(&ip, format!("expected an array, got {}", kind(ids))))?;
            let mut out = Vec::new();
            for (k, id) in ids.iter().enumerate() {
                out.push(
                    id.as_str().ok_or_else(|| {
                        loc.err(&format!("{ip}[{k}]"), format!("expected a string, got {}", kind(id)))
                    })?,
                );
            }
            if !out.is_empty() {
                msg.tool_call_id = Some(out.join(","));
            }
        }
        if msg.tool_call_id.is_none() {
            msg.tool_call_id = opt_str(&loc, m, "tool_call_id", &p)?.map(str::to_string);
        }
        messages.push(msg);
    }
    link_tool_names(&mut messages);
    let instance_id = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    Ok(Trajectory { instance_id, source: SOURCE_SWE_AGENT, resolved: None, tools: None, repo: None, messages })
}

/// Reads the text of a JSON array of rows, one trajectory per row, each located by the
/// line it starts on.
fn read_rows(path: &Path, text: &str, row: fn(Loc, &Value) -> Result<Trajectory>) -> Result<Vec<Trajectory>> {
    let loc = Loc::file(path);
    if !text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']).starts_with('[') {
        // not an array: say what it is
        rows_of(&loc, &parse_json_file(path, text)?)?;
    }
    array_values(path, text)?.iter().enumerate().map(|(r, (line, x))| row(loc.row(r).line(*line), x)).collect()
}

/// Read OpenHands rows (a JSON array; SWE-Gym/OpenHands-Sampled-Trajectories as
/// extracted by ADP): row {`instance_id`, `resolved`, `tools`, `messages`}, messages in
/// OpenAI form {`role`, `content` (string/null/parts), `tool_calls`, `tool_call_id`,
/// `name`}. `arguments` JSON strings are parsed (must be objects; `""` = `{}`).
pub fn read_openhands_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    read_rows(path, text, openhands_row)
}

fn openhands_row(loc: Loc, row: &Value) -> Result<Trajectory> {
    let row = as_object(&loc, row, "")?;
    let instance_id = req_str(&loc, row, "instance_id", "")?.to_string();
    let repo = opt_str(&loc, row, "repo", "")?.map(str::to_string);
    let resolved = opt_bool(&loc, row, "resolved", "")?;
    let tools = get(row, "tools").cloned();
    let msgs = req_array(&loc, row, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        msg.tool_calls = openai_tool_calls(&loc, m, &p)?;
        msg.tool_call_id = opt_str(&loc, m, "tool_call_id", &p)?.map(str::to_string);
        if role == Role::Tool {
            msg.tool_name = opt_str(&loc, m, "name", &p)?.map(str::to_string);
        }
        messages.push(msg);
    }
    link_tool_names(&mut messages);
    Ok(Trajectory { instance_id, source: SOURCE_OPENHANDS, resolved, tools, repo, messages })
}

/// Read nebius/SWE-agent-trajectories rows (a JSON array): row {`instance_id`, `target`
/// (resolved), `trajectory`}, `trajectory[*]` {`role` system/user/ai, `text`,
/// `system_prompt` (system row, whose `text` is empty), `mask`}.
///
/// * `mask` → [`Message::mask`] and [`Message::train`];
/// * the system row's text is its `system_prompt` when `text` is empty;
/// * an `ai` message's command is the last top-level fenced block
///   ([`swe_agent_text_action`], SWE-agent's own parser for this format); when there is
///   one and it is not blank it becomes one text-style call named after its first word
///   ([`swe_agent_command_call`]). Messages without such a block get no call.
pub fn read_nebius_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    read_rows(path, text, nebius_row)
}

fn nebius_row(loc: Loc, row: &Value) -> Result<Trajectory> {
    let row = as_object(&loc, row, "")?;
    let instance_id = req_str(&loc, row, "instance_id", "")?.to_string();
    let repo = opt_str(&loc, row, "repo", "")?.map(str::to_string);
    let resolved = opt_bool(&loc, row, "target", "")?;
    let steps = req_array(&loc, row, "trajectory", "")?;
    let mut messages = Vec::with_capacity(steps.len());
    for (i, m) in steps.iter().enumerate() {
        let p = format!("trajectory[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut text = opt_str(&loc, m, "text", &p)?.unwrap_or_default().to_string();
        if role == Role::System && text.is_empty() {
            text = opt_str(&loc, m, "system_prompt", &p)?.unwrap_or_default().to_string();
        }
        let mut msg = Message::new(i, role, text);
        msg.mask = opt_bool(&loc, m, "mask", &p)?;
        msg.train = msg.mask;
        if role == Role::Assistant {
            msg.tool_calls.extend(swe_agent_text_action(&msg.text).and_then(swe_agent_command_call));
        }
        messages.push(msg);
    }
    Ok(Trajectory { instance_id, source: SOURCE_NEBIUS, resolved, tools: None, repo, messages })
}

/// Read SWE-bench/SWE-smith-trajectories rows (a JSON array): row {`instance_id`,
/// `resolved`, `messages` [{`role`, `content`}]}. Assistant tool calls are parsed from
/// the XML-style text ([`xml_function_calls`]).
pub fn read_swe_smith_rows(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    read_rows(path, text, swe_smith_row)
}

fn swe_smith_row(loc: Loc, row: &Value) -> Result<Trajectory> {
    let row = as_object(&loc, row, "")?;
    let instance_id = req_str(&loc, row, "instance_id", "")?.to_string();
    let repo = opt_str(&loc, row, "repo", "")?.map(str::to_string);
    let resolved = opt_bool(&loc, row, "resolved", "")?;
    let msgs = req_array(&loc, row, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, openai_content(&loc, m, &p)?);
        if role == Role::Assistant {
            msg.tool_calls = xml_function_calls(&msg.text);
        }
        messages.push(msg);
    }
    Ok(Trajectory { instance_id, source: SOURCE_SWE_SMITH, resolved, tools: None, repo, messages })
}

/// Read LLaMA-Factory v1 JSONL: one row a line {`messages`, `tools` (JSON string or
/// array of OpenAI function schemas)}; blank lines skipped, LF or CRLF.
/// `messages[*]` {`role`, `content`: [{`type`: "text" | "reasoning" | "tool_call",
/// `value`: string}], `loss_weight`?}; a `tool_call` value is a JSON string
/// `{"name", "arguments"}` (`arguments` an object or a JSON string of one).
///
/// * text parts are concatenated into `text`, reasoning parts into `reasoning`;
/// * `loss_weight` as given; `train` = weight > 1e-6 with LLaMA-Factory's default
///   weight 1.0 for assistant and 0.0 otherwise (`src/llamafactory/v1/core/rendering`);
/// * `instance_id` = `<file stem>:<row index>` (0-based over non-blank lines).
pub fn read_llamafactory_jsonl(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    let mut out = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row_index = out.len();
        let loc = Loc { file: path, row: Some(row_index), line: Some(lineno + 1) };
        let v: Value = serde_json::from_str(line).map_err(|e| loc.err("", format!("not JSON: {e}")))?;
        out.push(llamafactory_row(loc, &v, format!("{stem}:{row_index}"))?);
    }
    Ok(out)
}

fn llamafactory_row(loc: Loc, row: &Value, instance_id: String) -> Result<Trajectory> {
    let row = as_object(&loc, row, "")?;
    let tools = match get(row, "tools") {
        None => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => {
            Some(serde_json::from_str::<Value>(s).map_err(|e| loc.err("tools", format!("not JSON: {e}")))?)
        }
        Some(v) => Some(v.clone()),
    };
    let msgs = req_array(&loc, row, "messages", "")?;
    let mut messages = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let p = format!("messages[{i}]");
        let m = as_object(&loc, m, &p)?;
        let role = req_role(&loc, m, &p)?;
        let mut msg = Message::new(i, role, String::new());
        let cp = join(&p, "content");
        let parts = req_array(&loc, m, "content", &p)?;
        for (k, part) in parts.iter().enumerate() {
            let pp = format!("{cp}[{k}]");
            let part = as_object(&loc, part, &pp)?;
            let ty = req_str(&loc, part, "type", &pp)?;
            let value = req_str(&loc, part, "value", &pp)?;
            match ty {
                "text" => msg.text.push_str(value),
                "reasoning" => msg.reasoning.get_or_insert_with(String::new).push_str(value),
                "tool_call" => {
                    let vp = join(&pp, "value");
                    let call: Value =
                        serde_json::from_str(value).map_err(|e| loc.err(&vp, format!("not JSON: {e}")))?;
                    let call = as_object(&loc, &call, &vp)?;
                    let name = req_str(&loc, call, "name", &vp)?.to_string();
                    let arguments = call_arguments(&loc, get(call, "arguments"), &join(&vp, "arguments"))?;
                    msg.tool_calls.push(ToolCall { id: None, name, arguments, from_text: false });
                }
                other => return Err(loc.err(&join(&pp, "type"), format!("unsupported part type {other:?}"))),
            }
        }
        msg.loss_weight = match get(m, "loss_weight") {
            None => None,
            Some(v) => Some(
                v.as_f64()
                    .ok_or_else(|| loc.err(&join(&p, "loss_weight"), format!("expected a number, got {}", kind(v))))?,
            ),
        };
        let weight = msg.loss_weight.unwrap_or(if role == Role::Assistant { 1.0 } else { 0.0 });
        msg.train = Some(weight > 1e-6);
        messages.push(msg);
    }
    Ok(Trajectory { instance_id, source: SOURCE_LLAMAFACTORY, resolved: None, tools, repo: None, messages })
}

/// A SWE-agent `history`: an array whose first entry (if any) is a chat message with a
/// `role`. An OpenHands event stream (`output.jsonl`: `history` of events with `action` /
/// `observation` / `source`, no `role`) is not one.
fn swe_agent_history(v: &Value) -> bool {
    match v.get("history").and_then(Value::as_array) {
        Some(h) => h.first().is_none_or(|e| e.get("role").is_some()),
        None => false,
    }
}

/// For a JSON object no reader took: each format [`detect_and_read`] tried and why it
/// did not match, in the order tried.
fn why_not_object(v: &Value) -> String {
    let swe_agent = match v.get("history") {
        None => "no `history`".to_string(),
        Some(Value::Array(h)) => match h.first() {
            Some(e) if e.get("action").is_some() || e.get("observation").is_some() => format!(
                "`history[0]` has no `role` but {} (an OpenHands event stream, e.g. `output.jsonl`: not a chat; convert it to OpenAI messages)",
                ["action", "observation", "source"].iter().filter(|k| e.get(**k).is_some()).map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ),
            _ => "`history[0]` has no `role`".to_string(),
        },
        Some(h) => format!("`history` is {}, not an array", kind(h)),
    };
    let llamafactory = if v.get("messages").is_some() {
        "`messages` without typed content parts"
    } else {
        "no `messages`"
    };
    format!(
        "mini-swe-agent (no `trajectory_format`, no `messages`+`info`); SWE-agent .traj ({swe_agent}); \
         LLaMA-Factory ({llamafactory}); openhands / nebius / swe-smith (expect a JSON array of rows, got an object)"
    )
}

/// Read any of the six formats, chosen from the content:
///
/// * a JSON object with `trajectory_format` (any value: the reader refuses one it does
///   not know), or with `messages` + `info` → [`read_mini_swe_agent`];
/// * a JSON object whose `history` is an array of messages with `role` →
///   [`read_swe_agent_traj`];
/// * a JSON array whose first row has `trajectory` → nebius; has `messages` whose
///   `content` is a list of `{type, value}` parts → LLaMA-Factory (array form); has
///   `tools` or a message with `tool_calls` → openhands; has `traj_id` or an assistant
///   message containing `<function=` → swe-smith;
/// * otherwise, one JSON object a line whose first row has typed content parts →
///   [`read_llamafactory_jsonl`].
///
/// An empty array gives no trajectories. Anything else is an error naming the file and,
/// for a JSON object (or the first JSON line), each format tried and why it did not match.
pub fn detect_and_read(path: &Path, text: &str) -> Result<Vec<Trajectory>> {
    // the input layer skips a byte-order mark; a text given directly may still hold one
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => {
            // any `trajectory_format` goes to the reader that knows the values, which
            // refuses one it does not know
            let is_mini = o.contains_key("trajectory_format") || (o.contains_key("messages") && o.contains_key("info"));
            let v = Value::Object(o);
            if is_mini {
                return mini_swe_agent_from_value(path, &v).map(|t| vec![t]);
            }
            if swe_agent_history(&v) {
                return swe_agent_from_value(path, &v).map(|t| vec![t]);
            }
            if v.get("messages").is_some_and(has_typed_parts) {
                return read_llamafactory_jsonl(path, text);
            }
            bail!("{}: not a recognized trajectory format; tried {}", path.display(), why_not_object(&v))
        }
        Ok(Value::Array(_)) => {
            let loc = Loc::file(path);
            // the rows again, each with the line it starts on (one linear pass)
            let located = array_values(path, text)?;
            let rows: Vec<&Value> = located.iter().map(|(_, v)| v).collect();
            let at = |r: usize| loc.row(r).line(located[r].0);
            let Some(first) = rows.first() else { return Ok(Vec::new()) };
            let first = first
                .as_object()
                .ok_or_else(|| at(0).err("", format!("expected an object, got {}", kind(first))))?;
            let msgs = first.get("messages").and_then(Value::as_array);
            let row_fn: fn(Loc, &Value) -> Result<Trajectory> = if first.contains_key("trajectory") {
                nebius_row
            } else if first.get("messages").is_some_and(has_typed_parts) {
                let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
                return rows
                    .iter()
                    .enumerate()
                    .map(|(r, row)| llamafactory_row(at(r), row, format!("{stem}:{r}")))
                    .collect();
            } else if first.contains_key("tools")
                || msgs.is_some_and(|ms| ms.iter().any(|m| m.get("tool_calls").is_some_and(|c| !c.is_null())))
            {
                openhands_row
            } else if first.contains_key("traj_id")
                || msgs.is_some_and(|ms| {
                    ms.iter().any(|m| {
                        m.get("role").and_then(Value::as_str) == Some("assistant")
                            && m.get("content").and_then(Value::as_str).is_some_and(|c| c.contains("<function="))
                    })
                })
            {
                swe_smith_row
            } else {
                return Err(at(0).err(
                    "",
                    "not a recognized trajectory row (no `trajectory`, typed content parts, `tools`/`tool_calls`, or `<function=` calls)",
                ))
            };
            rows.iter().enumerate().map(|(r, row)| row_fn(at(r), row)).collect()
        }
        Ok(v) => bail!("{}: not a recognized trajectory format (top-level JSON {})", path.display(), kind(&v)),
        Err(whole_err) => {
            let first = text.lines().find(|l| !l.trim().is_empty());
            let first: Option<Value> = first.and_then(|l| serde_json::from_str(l).ok());
            match first {
                Some(v) if v.get("messages").is_some_and(has_typed_parts) => read_llamafactory_jsonl(path, text),
                Some(v) => bail!(
                    "{}: not a recognized trajectory format (JSON lines; line 1 read as one document); tried {}",
                    path.display(),
                    why_not_object(&v)
                ),
                None => bail!("{}: not JSON: {whole_err}", path.display()),
            }
        }
    }
}

/// Whether a `messages` value uses typed parts `[{type, value}]` (LLaMA-Factory v1).
fn has_typed_parts(messages: &Value) -> bool {
    messages.as_array().is_some_and(|ms| {
        ms.iter().any(|m| {
            m.get("content")
                .and_then(Value::as_array)
                .is_some_and(|parts| parts.iter().any(|p| p.get("type").is_some() && p.get("value").is_some()))
        })
    })
}

// ---------------------------------------------------------------------------------------
// Rule: shell commands of a message
// ---------------------------------------------------------------------------------------

/// Tool names whose calls run a shell command held in the `command` argument (or `cmd`):
///
/// | name | used by |
/// |---|---|
/// | `bash` | SWE-agent function calling, swe-smith, mini-swe-agent blocks (named so here) |
/// | `execute_bash` | OpenHands CodeAct |
/// | `run`, `shell`, `terminal`, `run_command`, `execute_command`, `run_shell_command` | other agent harnesses (names only; no data here) |
pub const BASH_TOOL_NAMES: &[&str] =
    &["bash", "execute_bash", "run", "shell", "terminal", "run_command", "execute_command", "run_shell_command"];

/// Text-style tool names that are *not* shell commands: SWE-agent's interface commands
/// (the `COMMANDS:` list of the system prompts in the pydicom and nebius data: `open`,
/// `goto`, `scroll_down`, `scroll_up`, `create`, `submit`, `search_dir`, `search_file`,
/// `find_file`, `edit`; plus later SWE-agent tools `insert`, `append`, `filemap`) and
/// the non-bash functions of the swe-smith XML format (`str_replace_editor`, `submit`,
/// `finish`). SWE-agent hands every other text command line to bash.
pub const TEXT_INTERFACE_COMMANDS: &[&str] = &[
    "open",
    "goto",
    "scroll_down",
    "scroll_up",
    "create",
    "submit",
    "search_dir",
    "search_file",
    "find_file",
    "edit",
    "insert",
    "append",
    "filemap",
    "str_replace_editor",
    "finish",
];

/// Whether a call runs a shell command: its name is in [`BASH_TOOL_NAMES`], or it is a
/// text-style call (`from_text`) whose name is not in [`TEXT_INTERFACE_COMMANDS`]
/// (a SWE-agent text command such as `python reproduce.py` or `rm x`, which SWE-agent
/// runs in bash).
pub fn is_shell_call(call: &ToolCall) -> bool {
    BASH_TOOL_NAMES.contains(&call.name.as_str())
        || (call.from_text && !TEXT_INTERFACE_COMMANDS.contains(&call.name.as_str()))
}

/// The shell commands a message runs, in call order: the `command` (else `cmd`) string
/// argument of every call for which [`is_shell_call`] holds. Calls without such a
/// string argument are skipped. Any role is accepted (only assistant messages have
/// calls).
pub fn bash_commands(message: &Message) -> Vec<String> {
    shell_calls(message).into_iter().map(|(_, command)| command).collect()
}

/// [`bash_commands`] with the index of the call each command comes from (0-based in
/// [`Message::tool_calls`]): `(call_index, command)`, in call order.
pub fn shell_calls(message: &Message) -> Vec<(usize, String)> {
    message
        .tool_calls
        .iter()
        .enumerate()
        .filter(|(_, c)| is_shell_call(c))
        .filter_map(|(k, c)| {
            let a = c.arguments.as_object()?;
            a.get("command").or_else(|| a.get("cmd")).and_then(Value::as_str).map(|s| (k, s.to_string()))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Rule: git history queries (SPEC §3.4)
// ---------------------------------------------------------------------------------------

/// git subcommands that query history (SPEC §3.4 "history queries").
pub const GIT_HISTORY_SUBCOMMANDS: &[&str] = &["log", "show", "blame", "rev-list", "reflog"];

/// Whether a shell command line runs `git log`, `git show`, `git blame`, `git rev-list`
/// or `git reflog` (SPEC §3.4) anywhere.
///
/// The line is split like a shell would into simple commands: at `;`, `&&`, `||`, `|`,
/// `&`, newlines and parentheses; quotes and backslashes are honoured; heredoc bodies
/// and `#` comments are skipped; command substitutions `$(…)` and `` `…` `` (also inside
/// double quotes), process substitutions `<(…)`, and the script of `bash|sh|zsh|dash -c
/// '…'` are split recursively (they do run). In each simple command, leading `VAR=x`
/// assignments, the keywords `if then else elif do while until ! {`, and wrappers
/// `sudo env time command exec nohup nice timeout stdbuf xargs` (with their options) are
/// skipped; the command must then be `git` (any path ending in `/git`) and, after
/// git's global options (`-C dir`, `-c k=v`, `--git-dir x`, `--work-tree x`,
/// `--namespace x`, `--no-pager`, `-P`, ...), the subcommand one of
/// [`GIT_HISTORY_SUBCOMMANDS`].
///
/// Decisions: a `git log` that is only mentioned — inside a quoted argument (`echo "git
/// log"`, `grep "git show"`), in a heredoc body, in a comment, or in a Python string —
/// is **not** a run and gives `false`; `echo "$(git log -1)"` runs it and gives `true`.
/// `git stash show`, `git diff`, `git status`, `git shortlog`, aliases and `git help
/// log` give `false`.
pub fn is_git_history_command(command: &str) -> bool {
    git_history_at_depth(command, 0)
}

const MAX_SHELL_DEPTH: usize = 8;

fn git_history_at_depth(command: &str, depth: usize) -> bool {
    if depth > MAX_SHELL_DEPTH {
        return false;
    }
    shell_simple_commands(command, depth).iter().any(|words| runs_git_history(words, depth))
}

/// Words that may precede the command of a simple command.
const SHELL_KEYWORDS: &[&str] = &["!", "{", "if", "then", "else", "elif", "do", "while", "until"];

/// Command wrappers: (name, options that take a separate value, positional arguments
/// before the wrapped command).
const WRAPPERS: &[(&str, &[&str], usize)] = &[
    ("sudo", &["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-T"], 0),
    ("env", &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"], 0),
    ("time", &["-f", "-o", "--format", "--output"], 0),
    ("command", &[], 0),
    ("exec", &["-a"], 0),
    ("nohup", &[], 0),
    ("nice", &["-n", "--adjustment"], 0),
    ("timeout", &["-s", "--signal", "-k", "--kill-after"], 1),
    ("stdbuf", &["-i", "-o", "-e"], 0),
    (
        "xargs",
        &["-I", "-n", "-L", "-P", "-d", "-E", "-s", "-a", "--delimiter", "--max-args", "--max-procs", "--arg-file"],
        0,
    ),
];

const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash"];

/// git global options that take the next word as their value.
const GIT_VALUE_OPTIONS: &[&str] =
    &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds"];

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else { return false };
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn runs_git_history(words: &[String], depth: usize) -> bool {
    let mut i = 0;
    loop {
        let Some(w) = words.get(i) else { return false };
        if is_assignment(w) || SHELL_KEYWORDS.contains(&w.as_str()) {
            i += 1;
            continue;
        }
        if let Some((name, value_opts, positional)) = WRAPPERS.iter().find(|(n, ..)| *n == basename(w)) {
            i += 1;
            while let Some(o) = words.get(i) {
                if o == "--" {
                    i += 1;
                    break;
                }
                if o.starts_with('-') && o.len() > 1 {
                    i += if value_opts.contains(&o.as_str()) { 2 } else { 1 };
                } else if *name == "env" && is_assignment(o) {
                    i += 1;
                } else {
                    break;
                }
            }
            i += positional;
            continue;
        }
        break;
    }
    let cmd = basename(&words[i]);
    if SHELLS.contains(&cmd) {
        let mut j = i + 1;
        while let Some(o) = words.get(j) {
            if o.starts_with('-') && !o.starts_with("--") && o[1..].contains('c') {
                return words.get(j + 1).is_some_and(|script| git_history_at_depth(script, depth + 1));
            }
            if o == "-o" || o == "+o" || o == "-O" || o == "+O" {
                j += 2;
            } else if o.starts_with('-') || o.starts_with('+') {
                j += 1;
            } else {
                return false;
            }
        }
        return false;
    }
    if cmd != "git" {
        return false;
    }
    let mut j = i + 1;
    while let Some(o) = words.get(j) {
        if GIT_VALUE_OPTIONS.contains(&o.as_str()) {
            j += 2;
        } else if o.starts_with('-') {
            j += 1;
        } else {
            return GIT_HISTORY_SUBCOMMANDS.contains(&o.as_str());
        }
    }
    false
}

/// Split a shell command line into simple commands (lists of words, quotes removed).
/// Commands inside substitutions come out as commands of their own (order is not
/// meaningful).
fn shell_simple_commands(src: &str, depth: usize) -> Vec<Vec<String>> {
    let chars: Vec<char> = src.chars().collect();
    let mut lx = ShellLexer { depth, ..ShellLexer::default() };
    lx.run(&chars);
    lx.out
}

#[derive(Default)]
struct ShellLexer {
    depth: usize,
    out: Vec<Vec<String>>,
    words: Vec<String>,
    word: Option<String>,
    /// The next word is a redirection target (dropped).
    skip_target: bool,
    /// The next word is a heredoc delimiter; `Some(strip_tabs)` for `<<` / `<<-`.
    heredoc_next: Option<bool>,
    /// Heredocs whose bodies start after the current line: (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
}

impl ShellLexer {
    fn push(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }
    fn push_str(&mut self, s: &[char]) {
        self.word.get_or_insert_with(String::new).extend(s.iter());
    }
    fn end_word(&mut self) {
        if let Some(w) = self.word.take() {
            if let Some(strip) = self.heredoc_next.take() {
                self.heredocs.push((w, strip));
            } else if self.skip_target {
                self.skip_target = false;
            } else {
                self.words.push(w);
            }
        }
    }
    fn end_command(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            self.out.push(std::mem::take(&mut self.words));
        }
        self.skip_target = false;
        self.heredoc_next = None;
    }
    /// Split `inner` recursively and add its commands.
    fn nested(&mut self, inner: &[char]) {
        if self.depth < MAX_SHELL_DEPTH {
            let mut lx = ShellLexer { depth: self.depth + 1, ..ShellLexer::default() };
            lx.run(inner);
            self.out.append(&mut lx.out);
        }
    }
    /// `c[open] == '('`: a command/process substitution body up to the matching `)`.
    /// Returns the index after it.
    fn substitution(&mut self, c: &[char], start: usize, open: usize) -> usize {
        let close = matching_paren(c, open);
        self.nested(&c[open + 1..close.min(c.len())]);
        self.push_str(&c[start..(close + 1).min(c.len())]);
        close + 1
    }
    fn backtick(&mut self, c: &[char], open: usize) -> usize {
        let mut j = open + 1;
        while j < c.len() && c[j] != '`' {
            j += if c[j] == '\\' { 2 } else { 1 };
        }
        let close = j.min(c.len());
        self.nested(&c[open + 1..close]);
        self.push_str(&c[open..(close + 1).min(c.len())]);
        close + 1
    }
    fn skip_heredoc_bodies(&mut self, c: &[char], mut i: usize) -> usize {
        for (delim, strip) in std::mem::take(&mut self.heredocs) {
            while i < c.len() {
                let end = c[i..].iter().position(|&ch| ch == '\n').map_or(c.len(), |p| i + p);
                let mut line: String = c[i..end].iter().collect();
                if line.ends_with('\r') {
                    line.pop();
                }
                let line = if strip { line.trim_start_matches('\t') } else { line.as_str() };
                let done = line == delim;
                i = end + 1;
                if done {
                    break;
                }
            }
        }
        i.min(c.len())
    }
    fn run(&mut self, c: &[char]) {
        let n = c.len();
        let mut i = 0;
        while i < n {
            let ch = c[i];
            let next = c.get(i + 1).copied();
            match ch {
                '\\' => {
                    match next {
                        Some('\n') => {}
                        Some(x) => self.push(x),
                        None => self.push('\\'),
                    }
                    i += 2;
                }
                '\'' => {
                    let end = c[i + 1..].iter().position(|&x| x == '\'').map_or(n, |p| i + 1 + p);
                    self.push_str(&c[i + 1..end]);
                    i = end + 1;
                }
                '"' => {
                    self.word.get_or_insert_with(String::new);
                    i += 1;
                    while i < n && c[i] != '"' {
                        if c[i] == '\\' && i + 1 < n {
                            match c[i + 1] {
                                '$' | '`' | '"' | '\\' => self.push(c[i + 1]),
                                '\n' => {}
                                x => {
                                    self.push('\\');
                                    self.push(x);
                                }
                            }
                            i += 2;
                        } else if c[i] == '$' && c.get(i + 1) == Some(&'(') {
                            i = self.substitution(c, i, i + 1);
                        } else if c[i] == '`' {
                            i = self.backtick(c, i);
                        } else {
                            self.push(c[i]);
                            i += 1;
                        }
                    }
                    i += 1;
                }
                '$' if next == Some('(') => i = self.substitution(c, i, i + 1),
                '`' => i = self.backtick(c, i),
                '#' if self.word.is_none() => {
                    while i < n && c[i] != '\n' {
                        i += 1;
                    }
                }
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    i += 1;
                }
                '\n' => {
                    self.end_command();
                    i = self.skip_heredoc_bodies(c, i + 1);
                }
                ';' | '(' | ')' => {
                    self.end_command();
                    i += 1;
                }
                '&' if next == Some('>') => {
                    self.end_word();
                    i += 2;
                    if c.get(i) == Some(&'>') {
                        i += 1;
                    }
                    self.skip_target = true;
                }
                '&' | '|' => {
                    self.end_command();
                    i += if next == Some(ch) || (ch == '|' && next == Some('&')) { 2 } else { 1 };
                }
                '<' | '>' => {
                    // A word of digits right before is a file descriptor, not an argument.
                    if self.word.as_deref().is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())) {
                        self.word = None;
                    } else {
                        self.end_word();
                    }
                    if next == Some('(') {
                        i = self.substitution(c, i, i + 1);
                        self.end_word();
                    } else if ch == '<' && next == Some('<') {
                        if c.get(i + 2) == Some(&'<') {
                            i += 3;
                            self.skip_target = true;
                        } else {
                            let strip = c.get(i + 2) == Some(&'-');
                            i += if strip { 3 } else { 2 };
                            self.heredoc_next = Some(strip);
                        }
                    } else {
                        i += 1;
                        if matches!(c.get(i), Some('>' | '&' | '|')) {
                            i += 1;
                        }
                        self.skip_target = true;
                    }
                }
                _ => {
                    self.push(ch);
                    i += 1;
                }
            }
        }
        self.end_command();
    }
}

/// Index of the `)` matching `c[open] == '('`, honouring quotes, backslashes, backticks
/// and nesting; `c.len()` when unclosed.
fn matching_paren(c: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < c.len() {
        match c[i] {
            '\\' => i += 1,
            '\'' => {
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '`' => {
                i += 1;
                while i < c.len() && c[i] != '`' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    c.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    // The readers take the text the input layer read; these read a test file first.
    fn text(path: &Path) -> Result<String> {
        std::fs::read_to_string(path).map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))
    }
    fn read_mini_swe_agent(p: &Path) -> Result<Trajectory> {
        super::read_mini_swe_agent(p, &text(p)?)
    }
    fn read_swe_agent_traj(p: &Path) -> Result<Trajectory> {
        super::read_swe_agent_traj(p, &text(p)?)
    }
    fn read_openhands_rows(p: &Path) -> Result<Vec<Trajectory>> {
        super::read_openhands_rows(p, &text(p)?)
    }
    fn read_nebius_rows(p: &Path) -> Result<Vec<Trajectory>> {
        super::read_nebius_rows(p, &text(p)?)
    }
    fn read_swe_smith_rows(p: &Path) -> Result<Vec<Trajectory>> {
        super::read_swe_smith_rows(p, &text(p)?)
    }
    fn read_llamafactory_jsonl(p: &Path) -> Result<Vec<Trajectory>> {
        super::read_llamafactory_jsonl(p, &text(p)?)
    }
    fn detect_and_read(p: &Path) -> Result<Vec<Trajectory>> {
        super::detect_and_read(p, &text(p)?)
    }
    fn read_swebench_report(p: &Path) -> Result<Outcome> {
        super::read_swebench_report(p, &text(p)?)
    }

    /// The shared data folder: `SPHRAGIS_SHARED`, default `../shared` beside the repository.
    fn shared() -> PathBuf {
        std::env::var_os("SPHRAGIS_SHARED")
            .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"), PathBuf::from)
    }

    fn sft(rel: &str) -> PathBuf {
        shared().join("data/sft").join(rel)
    }

    fn count_role(t: &Trajectory, role: Role) -> usize {
        t.messages.iter().filter(|m| m.role == role).count()
    }

    fn call_names(t: &Trajectory) -> Vec<&str> {
        t.messages.iter().flat_map(|m| m.tool_calls.iter().map(|c| c.name.as_str())).collect()
    }

    fn name_counts(t: &Trajectory) -> BTreeMap<&str, usize> {
        let mut m = BTreeMap::new();
        for n in call_names(t) {
            *m.entry(n).or_insert(0) += 1;
        }
        m
    }

    fn git_history_count(t: &Trajectory) -> usize {
        t.messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .flat_map(bash_commands)
            .filter(|c| is_git_history_command(c))
            .count()
    }

    fn temp_file(name: &str, content: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("traj-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, content).unwrap();
        p
    }

    // ---------------------------------------------------------------- mini-swe-agent

    fn read_all_mini() -> Vec<Trajectory> {
        let root = sft("mini-swe-agent-gemini3pro/trajs");
        let mut ids: Vec<String> =
            std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        ids.sort();
        ids.iter().map(|id| read_mini_swe_agent(&root.join(id).join(format!("{id}.traj.json"))).unwrap()).collect()
    }

    /// The SWE-bench report of a mini-swe-agent instance, read explicitly (as `load
    /// outcomes` does): the trajectory reader never looks for it.
    fn mini_report(instance_id: &str) -> Outcome {
        read_swebench_report(&sft("mini-swe-agent-gemini3pro/logs").join(instance_id).join("report.json")).unwrap()
    }

    #[test]
    fn mini_swe_agent_totals() {
        let ts = read_all_mini();
        assert_eq!(ts.len(), 43);
        assert!(ts.iter().all(|t| t.source == SOURCE_MINI_SWE_AGENT && t.resolved.is_none()));
        let reports: Vec<Outcome> = ts.iter().map(|t| mini_report(&t.instance_id)).collect();
        assert_eq!(reports.iter().filter(|o| o.resolved).count(), 24);
        assert_eq!(reports.iter().filter(|o| !o.resolved).count(), 19);
        let msgs: Vec<&Message> = ts.iter().flat_map(|t| &t.messages).collect();
        assert_eq!(msgs.len(), 3612);
        let asst: Vec<&&Message> = msgs.iter().filter(|m| m.role == Role::Assistant).collect();
        assert_eq!(asst.len(), 1763);
        assert_eq!(msgs.iter().filter(|m| m.role == Role::User).count(), 1806);
        assert_eq!(msgs.iter().filter(|m| m.role == Role::System).count(), 43);
        let calls: usize = asst.iter().map(|m| m.tool_calls.len()).sum();
        assert_eq!(calls, 1829);
        assert!(asst.iter().flat_map(|m| &m.tool_calls).all(|c| c.name == "bash" && c.from_text && c.id.is_none()));
        // Every call's command is a bash command of the message.
        assert_eq!(asst.iter().map(|m| bash_commands(m).len()).sum::<usize>(), 1829);
        // Reasoning: present on 49 of 1763 assistant turns, longest 1,202 characters.
        let reasoning: Vec<&str> = asst.iter().filter_map(|m| m.reasoning.as_deref()).collect();
        assert_eq!(reasoning.len(), 49);
        assert!(reasoning.iter().all(|r| !r.trim().is_empty()));
        assert_eq!(reasoning.iter().map(|r| r.chars().count()).max(), Some(1202));
        // Observations: 1,671 start with <returncode>; every final message is the diff.
        assert_eq!(msgs.iter().filter(|m| m.returncode.is_some()).count(), 1671);
        assert!(ts.iter().all(|t| t.messages.last().unwrap().text.starts_with("diff --git")));
        // History queries: 4 commands in 3 instances.
        let per: BTreeMap<&str, usize> =
            ts.iter().map(|t| (t.instance_id.as_str(), git_history_count(t))).filter(|(_, n)| *n > 0).collect();
        assert_eq!(
            per,
            BTreeMap::from([("django__django-13513", 1), ("django__django-14122", 1), ("sympy__sympy-13031", 2)])
        );
        // The four commands themselves.
        let cmds: Vec<String> = ts
            .iter()
            .flat_map(|t| t.messages.iter().flat_map(bash_commands))
            .filter(|c| is_git_history_command(c))
            .collect();
        assert_eq!(
            cmds,
            [
                "git log -n 1 django/views/debug.py",
                "git show 0ddb4ebf",
                "git log -n 5 sympy/matrices/common.py",
                "git show 2dff3502e99437c7b25720afb4f9bf7700329672"
            ]
        );
    }

    #[test]
    fn mini_swe_agent_matches_index_tsv() {
        let index = std::fs::read_to_string(sft("mini-swe-agent-gemini3pro/index.tsv")).unwrap();
        let mut lines = index.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let by_id: HashMap<String, Trajectory> =
            read_all_mini().into_iter().map(|t| (t.instance_id.clone(), t)).collect();
        let mut rows = 0;
        let mut nonzero_total = 0;
        for line in lines {
            let f: Vec<&str> = line.split('\t').collect();
            let id = f[col("instance_id")];
            let num = |c: &str| f[col(c)].parse::<usize>().unwrap();
            let t = by_id.get(id).unwrap_or_else(|| panic!("{id} not read"));
            let asst: Vec<&Message> = t.messages.iter().filter(|m| m.role == Role::Assistant).collect();
            assert_eq!(mini_report(id).resolved, f[col("resolved")] == "True", "{id} resolved");
            assert_eq!(t.messages.len(), num("messages"), "{id} messages");
            assert_eq!(asst.len(), num("assistant_turns"), "{id} assistant_turns");
            assert_eq!(
                asst.iter().map(|m| m.tool_calls.len()).sum::<usize>(),
                num("bash_code_blocks"),
                "{id} bash_code_blocks"
            );
            assert_eq!(git_history_count(t), num("git_history_commands"), "{id} git_history_commands");
            let nonzero = t.messages.iter().filter(|m| m.returncode.is_some_and(|r| r != 0)).count();
            assert_eq!(nonzero, num("nonzero_returncodes"), "{id} nonzero_returncodes");
            let max_reasoning = asst.iter().filter_map(|m| m.reasoning.as_ref()).map(|r| r.chars().count()).max();
            assert_eq!(max_reasoning.unwrap_or(0), num("max_reasoning_chars"), "{id} max_reasoning_chars");
            nonzero_total += nonzero;
            rows += 1;
        }
        assert_eq!(rows, 43);
        assert_eq!(nonzero_total, 158);
    }

    #[test]
    fn swebench_reports() {
        let logs = sft("mini-swe-agent-gemini3pro/logs");
        let o = read_swebench_report(&logs.join("django__django-13513/report.json")).unwrap();
        assert_eq!(
            o,
            Outcome {
                resolved: false,
                patch_applied: Some(true),
                graded: true,
                fail_to_pass: TestCounts { success: 0, failure: 1 },
                pass_to_pass: TestCounts { success: 83, failure: 0 },
                fail_to_fail: Some(TestCounts::default()),
                pass_to_fail: Some(TestCounts::default()),
            }
        );
        let o = read_swebench_report(&logs.join("astropy__astropy-13977/report.json")).unwrap();
        assert_eq!(
            (o.fail_to_pass, o.pass_to_pass),
            (TestCounts { success: 12, failure: 8 }, TestCounts { success: 318, failure: 4 })
        );
        // Over the 43: resolved ⇔ every F2P and P2P test passed.
        let ts = read_all_mini();
        let reports: Vec<Outcome> = ts.iter().map(|t| mini_report(&t.instance_id)).collect();
        for (t, o) in ts.iter().zip(&reports) {
            let all_pass = o.fail_to_pass.failure == 0 && o.pass_to_pass.failure == 0 && o.fail_to_pass.success > 0;
            assert_eq!(o.resolved, all_pass, "{}", t.instance_id);
        }
        let f2p: usize = reports.iter().map(|o| o.fail_to_pass.success).sum();
        let f2p_fail: usize = reports.iter().map(|o| o.fail_to_pass.failure).sum();
        assert_eq!((f2p, f2p_fail), (43, 51));
        // The harness's nested layout {"<id>": {...}} reads the same.
        let nested = temp_file(
            "nested_report.json",
            r#"{"x__y-1": {"resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": ["a", "b"], "failure": []}, "PASS_TO_PASS": {"success": ["c"], "failure": ["d"]}}}}"#,
        );
        let o = read_swebench_report(&nested).unwrap();
        assert!(o.resolved && o.patch_applied.is_none() && o.fail_to_fail.is_none());
        assert_eq!((o.fail_to_pass.success, o.pass_to_pass.failure), (2, 1));
    }

    #[test]
    fn mini_swe_agent_reader_never_reads_the_report_beside_it() {
        // In the SWE-bench folder layout, with logs/<id>/report.json present (resolved),
        // the trajectory's `resolved` stays unknown: the outcome is an input of its own.
        let id = "pytest-dev__pytest-7432";
        assert!(mini_report(id).resolved);
        let t = read_mini_swe_agent(&sft(&format!("mini-swe-agent-gemini3pro/trajs/{id}/{id}.traj.json"))).unwrap();
        assert_eq!((t.resolved, t.messages.len()), (None, 72));
    }

    // ---------------------------------------------------------------- SWE-agent

    #[test]
    fn swe_agent_function_calling_simple() {
        let t =
            read_swe_agent_traj(&sft("swe-agent/trajectories/demonstrations/function_calling_simple.traj")).unwrap();
        assert_eq!((t.instance_id.as_str(), t.source, t.resolved), ("function_calling_simple", SOURCE_SWE_AGENT, None));
        assert_eq!(t.messages.len(), 12);
        assert_eq!([Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| count_role(&t, r)), [1, 1, 5, 5]);
        assert_eq!(call_names(&t), ["find_file", "open", "edit", "bash", "submit"]);
        assert!(
            t.messages
                .iter()
                .flat_map(|m| &m.tool_calls)
                .all(|c| !c.from_text && c.id.as_deref().is_some_and(|i| i.starts_with("call_")))
        );
        let tool_names: Vec<_> =
            t.messages.iter().filter(|m| m.role == Role::Tool).map(|m| m.tool_name.as_deref().unwrap()).collect();
        assert_eq!(tool_names, ["find_file", "open", "edit", "bash", "submit"]);
        assert_eq!(t.messages[3].tool_call_id.as_deref(), Some("call_PbWErNIge3YTrli3fiVvmIid"));
        assert_eq!(t.messages[2].tool_calls[0].arguments, serde_json::json!({"file_name": "missing_colon.py"}));
        assert_eq!(t.messages[10].tool_calls[0].arguments, serde_json::json!({}));
        let cmds: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
        assert_eq!(cmds, ["python tests/missing_colon.py"]);
        assert!(t.messages[11].text.starts_with("\r\ndiff --git"));
    }

    #[test]
    fn swe_agent_marshmallow_replay() {
        let t = read_swe_agent_traj(&sft(
            "swe-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source/marshmallow-code__marshmallow-1867.traj",
        ))
        .unwrap();
        assert_eq!(t.instance_id, "marshmallow-code__marshmallow-1867");
        assert_eq!(t.messages.len(), 28);
        assert_eq!([Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| count_role(&t, r)), [1, 1, 13, 13]);
        assert_eq!(
            name_counts(&t),
            BTreeMap::from([
                ("bash", 6),
                ("create", 1),
                ("edit", 1),
                ("find_file", 1),
                ("insert", 1),
                ("open", 2),
                ("submit", 1)
            ])
        );
        let cmds: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
        assert_eq!(
            cmds,
            [
                "ls -F",
                "pip install -e .[dev]",
                "python reproduce.py",
                "ls -F",
                "python reproduce.py",
                "rm reproduce.py"
            ]
        );
        assert!(
            t.messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .all(|m| m.tool_name.is_some() && m.tool_call_id.is_some())
        );
        assert!(t.messages.iter().any(|m| m.text.contains('\u{8}')), "backspaces from pip spinners are kept");
        assert!(t.messages[27].text.contains("diff --git a/src/marshmallow/fields.py"));
    }

    #[test]
    fn swe_agent_pydicom_text_commands() {
        let p = sft(
            "swe-agent/tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
        );
        let t = read_swe_agent_traj(&p).unwrap();
        assert_eq!(t.instance_id, "pydicom__pydicom-1458");
        assert_eq!(t.messages.len(), 26);
        assert_eq!([Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| count_role(&t, r)), [1, 13, 12, 0]);
        assert_eq!(
            call_names(&t),
            ["create", "edit", "python", "find_file", "open", "edit", "edit", "edit", "edit", "python", "rm", "submit"]
        );
        assert!(t.messages.iter().flat_map(|m| &m.tool_calls).all(|c| c.from_text && c.id.is_none()));
        assert_eq!(
            t.messages[11].tool_calls[0].arguments,
            serde_json::json!({"command": "open pydicom/pixel_data_handlers/numpy_handler.py 293"})
        );
        let cmds: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
        assert_eq!(cmds, ["python reproduce_bug.py", "python reproduce_bug.py", "rm reproduce_bug.py"]);
        // SWE-agent's fenced-block parser recovers the recorded `action` from the text.
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let mut checked = 0;
        for (m, h) in t.messages.iter().zip(raw["history"].as_array().unwrap()) {
            if m.role == Role::Assistant {
                assert_eq!(swe_agent_text_action(&m.text), h["action"].as_str(), "history[{}]", m.index);
                checked += 1;
            }
        }
        assert_eq!(checked, 12);
    }

    // ---------------------------------------------------------------- ADP row samples

    #[test]
    fn openhands_rows() {
        let ts = read_openhands_rows(&sft("swe-gym-openhands-trajectories/sample_raw.json")).unwrap();
        assert_eq!(ts.len(), 5);
        assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), 188);
        assert_eq!(ts.iter().map(|t| t.messages.len()).collect::<Vec<_>>(), [41, 23, 26, 37, 61]);
        assert!(ts.iter().all(|t| t.resolved == Some(true) && t.source == SOURCE_OPENHANDS));
        assert_eq!(ts[0].instance_id, "python__mypy-15976_0");
        for t in &ts {
            let names: Vec<&str> = t
                .tools
                .as_ref()
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["function"]["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["execute_bash", "finish", "str_replace_editor"]);
            // Every tool message answers an earlier call and carries its name.
            let mut ids = HashMap::new();
            for m in &t.messages {
                for c in &m.tool_calls {
                    ids.insert(c.id.clone().unwrap(), c.name.clone());
                }
                if m.role == Role::Tool {
                    assert_eq!(
                        ids.get(m.tool_call_id.as_ref().unwrap()),
                        m.tool_name.as_ref(),
                        "{} [{}]",
                        t.instance_id,
                        m.index
                    );
                }
            }
            assert!(t.messages.iter().all(|m| m.reasoning.is_none() && m.train.is_none()));
        }
        // Parallel calls: rows 0 and 2 only.
        let parallel: Vec<Vec<(usize, usize)>> = ts
            .iter()
            .map(|t| {
                t.messages.iter().filter(|m| m.tool_calls.len() > 1).map(|m| (m.index, m.tool_calls.len())).collect()
            })
            .collect();
        assert_eq!(parallel, [vec![(16, 2), (19, 2), (22, 2), (25, 4)], vec![], vec![(8, 2)], vec![], vec![]]);
        // Calls by tool, per row.
        let counts: Vec<BTreeMap<&str, usize>> = ts.iter().map(name_counts).collect();
        assert_eq!(counts[0], BTreeMap::from([("execute_bash", 5), ("finish", 1), ("str_replace_editor", 15)]));
        assert_eq!(counts[4], BTreeMap::from([("execute_bash", 7), ("str_replace_editor", 22)]));
        assert_eq!(ts.iter().map(|t| call_names(t).len()).sum::<usize>(), 87);
        assert_eq!(ts.iter().map(|t| count_role(t, Role::Tool)).sum::<usize>(), 82);
        let bash: usize = ts.iter().flat_map(|t| &t.messages).map(|m| bash_commands(m).len()).sum();
        assert_eq!(bash, 22);
        // "The agent itself never runs pytest in these 5 rows."
        assert!(!ts.iter().flat_map(|t| &t.messages).flat_map(bash_commands).any(|c| c.contains("pytest")));
        // A tool error followed by a corrected call.
        assert!(
            ts[0].messages[3]
                .text
                .contains("The `view_range` parameter is not allowed when `path` points to a directory")
        );
        assert_eq!(ts[0].messages[2].tool_calls[0].arguments["view_range"], serde_json::json!([0, -1]));
    }

    #[test]
    fn nebius_rows() {
        let ts = read_nebius_rows(&sft("nebius-swe-agent-trajectories/sample_raw.json")).unwrap();
        assert_eq!(ts.len(), 5);
        assert_eq!(ts.iter().map(|t| t.messages.len()).collect::<Vec<_>>(), [13, 29, 11, 17, 33]);
        assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), 103);
        assert!(ts.iter().all(|t| t.resolved == Some(true) && t.source == SOURCE_NEBIUS));
        assert_eq!(ts[1].instance_id, "tempoCollaboration__OQuPy-74_55");
        let all: Vec<&Message> = ts.iter().flat_map(|t| &t.messages).collect();
        // mask true on every ai row, false elsewhere; train follows mask.
        assert!(all.iter().all(|m| m.mask == Some(m.role == Role::Assistant) && m.train == m.mask));
        assert_eq!(all.iter().filter(|m| m.role == Role::Assistant).count(), 49);
        // The system row's text is its system_prompt.
        assert!(ts.iter().all(|t| t.messages[0].role == Role::System
            && t.messages[0].text.starts_with("SETTING: You are an autonomous programmer")));
        // Every ai message carries exactly one recognizable command; each run ends with submit.
        assert!(
            all.iter()
                .filter(|m| m.role == Role::Assistant)
                .all(|m| m.tool_calls.len() == 1 && m.tool_calls[0].from_text)
        );
        assert!(ts.iter().all(|t| call_names(t).last() == Some(&"submit")));
        assert_eq!(call_names(&ts[0]), ["ls", "find_file", "open", "edit", "python", "submit"]);
        assert_eq!(
            name_counts(&ts[1]),
            BTreeMap::from([
                ("create", 1),
                ("edit", 4),
                ("find_file", 1),
                ("open", 1),
                ("python", 4),
                ("rm", 2),
                ("submit", 1)
            ])
        );
        assert_eq!(
            ts[0].messages[8].tool_calls[0].arguments["command"],
            "edit 5:5\nimport plumbum.cli as cli\nend_of_edit"
        );
        let shell: Vec<String> = ts[4].messages.iter().flat_map(bash_commands).collect();
        assert_eq!(shell.len(), 5);
        assert_eq!(shell[0], "treon path1 path2 --threads=2");
        // OQuPy: a fix that fails twice (tracebacks) before the script passes.
        let tracebacks = ts[1].messages.iter().filter(|m| m.role == Role::User && m.text.contains("Traceback")).count();
        assert!(tracebacks >= 2, "{tracebacks}");
    }

    #[test]
    fn swe_smith_rows() {
        let ts = read_swe_smith_rows(&sft("swe-smith-trajectories/sample_raw.json")).unwrap();
        assert_eq!(ts.len(), 5);
        assert_eq!(ts.iter().map(|t| t.messages.len()).collect::<Vec<_>>(), [31, 47, 37, 45, 77]);
        assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), 237);
        assert!(ts.iter().all(|t| t.resolved == Some(true) && t.source == SOURCE_SWE_SMITH));
        assert_eq!(ts[0].instance_id, "arrow-py__arrow.1d70d009.lm_rewrite__nuzjfyur");
        // One call per assistant message.
        assert!(
            ts.iter().flat_map(|t| &t.messages).filter(|m| m.role == Role::Assistant).all(|m| m.tool_calls.len() == 1)
        );
        let totals = ts.iter().fold(BTreeMap::new(), |mut acc, t| {
            for (k, v) in name_counts(t) {
                *acc.entry(k).or_insert(0) += v;
            }
            acc
        });
        assert_eq!(totals, BTreeMap::from([("bash", 44), ("str_replace_editor", 63), ("submit", 9)]));
        // submit twice in 4 of 5 rows.
        let submits: Vec<usize> = ts.iter().map(|t| name_counts(t).get("submit").copied().unwrap_or(0)).collect();
        assert_eq!(submits, [2, 2, 2, 1, 2]);
        // Observations start with "OBSERVATION:", except the answer to the final submit
        // in 4 rows ("Your command ran successfully and did not produce any output.") and
        // one getmoto observation spelled "Observation:".
        let odd: Vec<(usize, usize)> = ts
            .iter()
            .enumerate()
            .flat_map(|(r, t)| {
                t.messages[2..]
                    .iter()
                    .filter(|m| m.role == Role::User && !m.text.starts_with("OBSERVATION:"))
                    .map(move |m| (r, m.index))
            })
            .collect();
        assert_eq!(odd, [(0, 29), (1, 45), (2, 35), (4, 3), (4, 75)]);
        assert!(ts[4].messages[3].text.starts_with("Observation: /testbed/docs/conf.py"));
        // Only the getmoto row runs pytest.
        let pytest: Vec<&str> = ts
            .iter()
            .filter(|t| t.messages.iter().flat_map(bash_commands).any(|c| c.contains("pytest")))
            .map(|t| t.instance_id.as_str())
            .collect();
        assert_eq!(pytest, ["getmoto__moto.694ce1f4.pr_6055"]);
        let first = &ts[0].messages[2].tool_calls[0];
        assert_eq!(
            first.arguments,
            serde_json::json!({"command": r#"find /testbed -type f -name "*.py" | grep -v "__pycache__" | sort"#})
        );
        assert_eq!(
            ts[0].messages[4].tool_calls[0].arguments,
            serde_json::json!({"command": "view", "path": "/testbed/arrow/arrow.py"})
        );
    }

    #[test]
    fn llamafactory_rows() {
        let ts = read_llamafactory_jsonl(&sft("llamafactory-demo/reason_tool_use_demo_50.jsonl")).unwrap();
        assert_eq!(ts.len(), 50);
        assert_eq!(ts[0].instance_id, "reason_tool_use_demo_50:0");
        assert_eq!(ts[49].instance_id, "reason_tool_use_demo_50:49");
        let all: Vec<&Message> = ts.iter().flat_map(|t| &t.messages).collect();
        assert_eq!(all.len(), 274);
        let roles =
            [Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| all.iter().filter(|m| m.role == r).count());
        assert_eq!(roles, [50, 70, 112, 42]);
        let reasoning: Vec<&str> = all.iter().filter_map(|m| m.reasoning.as_deref()).collect();
        assert_eq!(reasoning.len(), 112);
        assert!(all.iter().filter(|m| m.reasoning.is_some()).all(|m| m.role == Role::Assistant));
        let long: Vec<usize> = reasoning.iter().map(|r| r.chars().count()).filter(|&n| n >= 3000).collect();
        assert_eq!(long, [3395]);
        assert_eq!(all.iter().map(|m| m.tool_calls.len()).sum::<usize>(), 68);
        assert!(all.iter().flat_map(|m| &m.tool_calls).all(|c| !c.from_text && c.arguments.is_object()));
        // 221 text parts: one per message that has one (every non-assistant message, 59 assistant).
        assert_eq!(all.iter().filter(|m| !m.text.is_empty()).count(), 221);
        // No loss_weight in this file; LLaMA-Factory's default supervises assistant only.
        assert!(all.iter().all(|m| m.loss_weight.is_none() && m.train == Some(m.role == Role::Assistant)));
        assert!(ts.iter().all(|t| t.tools.as_ref().is_some_and(Value::is_array)));
        assert_eq!(ts[0].tools.as_ref().unwrap()[0]["function"]["name"], "get_device_asset_by_identifier");
        assert!(all.iter().all(|m| bash_commands(m).is_empty()));
    }

    #[test]
    fn llamafactory_loss_weight_and_errors() {
        let p = temp_file(
            "lf.jsonl",
            concat!(
                r#"{"messages": [{"role": "user", "content": [{"type": "text", "value": "hi"}], "loss_weight": 0.5}, {"role": "assistant", "content": [{"type": "reasoning", "value": ""}, {"type": "text", "value": "a"}], "loss_weight": 0.0}]}"#,
                "\r\n\r\n",
                r#"{"messages": [{"role": "assistant", "content": [{"type": "tool_call", "value": "{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}"}]}]}"#,
                "\n"
            ),
        );
        let ts = read_llamafactory_jsonl(&p).unwrap();
        assert_eq!(ts.len(), 2);
        assert_eq!(ts[1].instance_id, "lf:1");
        let m = &ts[0].messages;
        assert_eq!((m[0].loss_weight, m[0].train), (Some(0.5), Some(true)));
        assert_eq!((m[1].loss_weight, m[1].train, m[1].reasoning.as_deref()), (Some(0.0), Some(false), Some("")));
        assert_eq!(ts[1].messages[0].tool_calls[0].arguments, serde_json::json!({"x": 1}));

        let bad = temp_file(
            "lf_bad.jsonl",
            concat!(
                r#"{"messages": []}"#,
                "\n\n",
                r#"{"messages": [{"role": "user", "content": []}, {"role": "assistant", "content": [{"type": "tool_call", "value": "{\"name\": \"f\", "}]}]}"#,
                "\n"
            ),
        );
        let e = read_llamafactory_jsonl(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}:3: field `[1].messages[1].content[0].value`: not JSON: ", bad.display())),
            "{e}"
        );
        let bad = temp_file(
            "lf_bad2.jsonl",
            r#"{"messages": [{"role": "user", "content": [{"type": "image", "value": "x"}]}]}"#,
        );
        let e = read_llamafactory_jsonl(&bad).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("{}:1: field `[0].messages[0].content[0].type`: unsupported part type \"image\"", bad.display())
        );
    }

    // ---------------------------------------------------------------- detection, errors

    #[test]
    fn detect_and_read_every_format() {
        let cases: &[(&str, &str, usize, usize)] = &[
            (
                "mini-swe-agent-gemini3pro/trajs/django__django-14122/django__django-14122.traj.json",
                SOURCE_MINI_SWE_AGENT,
                1,
                80,
            ),
            ("swe-agent/trajectories/demonstrations/function_calling_simple.traj", SOURCE_SWE_AGENT, 1, 12),
            ("swe-gym-openhands-trajectories/sample_raw.json", SOURCE_OPENHANDS, 5, 188),
            ("nebius-swe-agent-trajectories/sample_raw.json", SOURCE_NEBIUS, 5, 103),
            ("swe-smith-trajectories/sample_raw.json", SOURCE_SWE_SMITH, 5, 237),
            ("llamafactory-demo/reason_tool_use_demo_50.jsonl", SOURCE_LLAMAFACTORY, 50, 274),
        ];
        for &(rel, source, n, msgs) in cases {
            let ts = detect_and_read(&sft(rel)).unwrap();
            assert_eq!(ts.len(), n, "{rel}");
            assert!(ts.iter().all(|t| t.source == source), "{rel}");
            assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), msgs, "{rel}");
        }
        // the trajectory alone: no outcome (its report.json is loaded as `outcomes`)
        let t = &detect_and_read(&sft(cases[0].0)).unwrap()[0];
        assert_eq!(t.resolved, None);
        assert_eq!(detect_and_read(&temp_file("empty.json", "[]")).unwrap().len(), 0);
        let e = detect_and_read(&temp_file("other.json", r#"{"a": 1}"#)).unwrap_err().to_string();
        assert!(e.contains("other.json: not a recognized trajectory format"), "{e}");
        let e = detect_and_read(&temp_file("garbage.json", "{not json")).unwrap_err().to_string();
        assert!(e.contains("garbage.json: not JSON: "), "{e}");
    }

    #[test]
    fn errors_name_file_row_and_field() {
        let p = temp_file(
            "oh_bad.json",
            r#"[{"instance_id": "a", "messages": []}, {"instance_id": "b", "messages": [{"role": "user", "content": "x"},
               {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{\"a\": "}}]}]}]"#,
        );
        let e = read_openhands_rows(&p).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}:1: field `[1].messages[1].tool_calls[0].function.arguments`: not JSON: ", p.display())),
            "{e}"
        );
        let p = temp_file("oh_bad2.json", r#"[{"instance_id": "a", "messages": [{"role": "robot", "content": "x"}]}]"#);
        let e = read_openhands_rows(&p).unwrap_err().to_string();
        assert_eq!(e, format!("{}:1: field `[0].messages[0].role`: unknown role \"robot\"", p.display()));
        let p = temp_file(
            "oh_bad3.json",
            r#"[{"instance_id": "a", "messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}]}]"#,
        );
        let e = read_openhands_rows(&p).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}:1: field `[0].messages[0].tool_calls[0].function.arguments`: expected a JSON object, got an array",
                p.display()
            )
        );
        let p = temp_file(
            "neb_bad.json",
            r#"[{"instance_id": "a", "target": true, "trajectory": [{"role": "ai", "text": 5}]}]"#,
        );
        let e = read_nebius_rows(&p).unwrap_err().to_string();
        assert_eq!(e, format!("{}:1: field `[0].trajectory[0].text`: expected a string, got a number", p.display()));
        let p = temp_file("smith_bad.json", r#"[{"resolved": true, "messages": []}]"#);
        let e = read_swe_smith_rows(&p).unwrap_err().to_string();
        assert_eq!(e, format!("{}:1: field `[0].instance_id`: missing", p.display()));
        let p = temp_file("x.traj.json", r#"{"instance_id": "x", "messages": [{"role": "assistant", "content": 3}]}"#);
        let e = read_mini_swe_agent(&p).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("{}: field `messages[0].content`: expected a string or a list of parts, got a number", p.display())
        );
        let p = temp_file("h.traj", r#"{"history": [{"role": "tool", "content": "x", "tool_call_ids": [1]}]}"#);
        let e = read_swe_agent_traj(&p).unwrap_err().to_string();
        assert_eq!(e, format!("{}: field `history[0].tool_call_ids[0]`: expected a string, got a number", p.display()));
        let e = read_nebius_rows(Path::new("/nonexistent/file.json")).unwrap_err();
        assert!(format!("{e:#}").starts_with("/nonexistent/file.json: cannot read"), "{e:#}");
    }

    #[test]
    fn array_row_errors_name_their_line() {
        // rows one a line after a blank line; the third row (line 4) has a bad role
        let row = |id: &str, role: &str| {
            format!(r#"{{"instance_id": "{id}", "tools": [], "messages": [{{"role": "{role}", "content": "x"}}]}}"#)
        };
        let text = format!("\n[{},\n{},\n{}]\n", row("a", "user"), row("b", "user"), row("c", "robot"));
        let e = super::detect_and_read(Path::new("rows.json"), &text).unwrap_err().to_string();
        assert_eq!(e, "rows.json:4: field `[2].messages[0].role`: unknown role \"robot\"");
        // and a byte-order mark in front changes nothing
        let e = super::detect_and_read(Path::new("rows.json"), &format!("\u{feff}{text}")).unwrap_err().to_string();
        assert!(e.starts_with("rows.json:4: "), "{e}");
    }

    // ---------------------------------------------------------------- parsers

    #[test]
    fn bash_block_parser() {
        assert_eq!(bash_blocks("THOUGHT: x\n\n```bash\nls -la\n```"), ["ls -la"]);
        // CRLF: the \r before the closing fence is not part of the body; inner CRLF kept.
        assert_eq!(bash_blocks("THOUGHT\r\n```bash\r\ncd a\r\nls\r\n```\r\n"), ["cd a\r\nls"]);
        // Two blocks in one message: both (mini-swe-agent would reject the turn).
        assert_eq!(bash_blocks("```bash\necho 1\n```\ntext\n```bash\necho 2\n```"), ["echo 1", "echo 2"]);
        // Empty blocks: a blank body line matches with "", a bare open/close does not.
        assert_eq!(bash_blocks("```bash\n\n```"), [""]);
        assert!(bash_blocks("```bash\n```").is_empty());
        // Other languages and unclosed blocks are not actions.
        assert!(bash_blocks("```python\nprint(1)\n```\n```bash\nls").is_empty());
        // Multi-line heredoc body stays whole; an inner ``` not at a line start does not close.
        assert_eq!(bash_blocks("```bash\ncat <<'EOF' > a.md\nx ``` y\nEOF\n```"), ["cat <<'EOF' > a.md\nx ``` y\nEOF"]);
        // Lazy: a closing fence ends the first block.
        assert_eq!(bash_blocks("```bash   \nls\n```\n```"), ["ls"]);
    }

    #[test]
    fn xml_function_parser() {
        let calls = xml_function_calls(
            "Reasoning.\n\n<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>/a.py</parameter>\n<parameter=old_str>\n    x = 1\n</parameter>\n<parameter=new_str>\n    x = 2\n\n</parameter>\n</function>",
        );
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "str_replace_editor");
        assert!(calls[0].from_text && calls[0].id.is_none());
        assert_eq!(
            calls[0].arguments,
            serde_json::json!({"command": "str_replace", "path": "/a.py", "old_str": "    x = 1", "new_str": "    x = 2\n"})
        );
        // CRLF layout: one \r\n stripped at each end.
        let calls =
            xml_function_calls("<function=bash>\r\n<parameter=command>\r\nls -la\r\n</parameter>\r\n</function>");
        assert_eq!(calls[0].arguments, serde_json::json!({"command": "ls -la"}));
        // No parameters, empty value, two calls in one message.
        let calls = xml_function_calls(
            "<function=submit>\n</function> and <function=bash><parameter=command></parameter></function>",
        );
        assert_eq!(calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["submit", "bash"]);
        assert_eq!(calls[0].arguments, serde_json::json!({}));
        assert_eq!(calls[1].arguments, serde_json::json!({"command": ""}));
        assert_eq!(
            bash_commands(&Message { tool_calls: calls, ..Message::new(0, Role::Assistant, String::new()) }),
            [""]
        );
        // Unclosed function: no call.
        assert!(xml_function_calls("<function=bash><parameter=command>ls</parameter>").is_empty());
    }

    #[test]
    fn swe_agent_action_parser() {
        assert_eq!(swe_agent_text_action("Let's look.\n```\nls -F\n```"), Some("ls -F\n"));
        // The last top-level block wins; a block with a language opens one.
        assert_eq!(swe_agent_text_action("```python\nx\n```\nthen\n```\nsubmit\n```\n"), Some("submit\n"));
        // A nested fenced block stays inside the action.
        assert_eq!(
            swe_agent_text_action("t\n```\nedit 1:1\n```python\nx\n```\nend_of_edit\n```"),
            Some("edit 1:1\n```python\nx\n```\nend_of_edit\n")
        );
        assert_eq!(swe_agent_text_action("no block"), None);
        assert_eq!(swe_agent_text_action("```\nunclosed"), None);
        let c = swe_agent_command_call("edit 5:5\nimport x\nend_of_edit\n").unwrap();
        assert_eq!(
            (c.name.as_str(), c.arguments["command"].as_str()),
            ("edit", Some("edit 5:5\nimport x\nend_of_edit"))
        );
        assert!(swe_agent_command_call(" \n").is_none());
        assert!(is_shell_call(&swe_agent_command_call("python x.py").unwrap()));
        assert!(!is_shell_call(&swe_agent_command_call("open x.py 10").unwrap()));
        assert!(!is_shell_call(&ToolCall {
            id: None,
            name: "python".into(),
            arguments: serde_json::json!({}),
            from_text: false
        }));
    }

    #[test]
    fn returncodes() {
        assert_eq!(observation_returncode("<returncode>0</returncode>\n<output>\n</output>"), Some(0));
        assert_eq!(observation_returncode("<returncode>-9</returncode>"), Some(-9));
        assert_eq!(observation_returncode("Please always provide EXACTLY ONE action"), None);
        assert_eq!(observation_returncode("out\n<returncode>1</returncode>"), None);
    }

    // ---------------------------------------------------------------- git history rule

    #[test]
    fn git_history_on_every_format() {
        // History queries outside mini-swe-agent: none in these samples.
        let files = [
            "swe-agent/trajectories/demonstrations/function_calling_simple.traj",
            "swe-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source/marshmallow-code__marshmallow-1867.traj",
            "swe-agent/tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
            "swe-gym-openhands-trajectories/sample_raw.json",
            "nebius-swe-agent-trajectories/sample_raw.json",
            "swe-smith-trajectories/sample_raw.json",
            "llamafactory-demo/reason_tool_use_demo_50.jsonl",
        ];
        let mut texts = 0;
        for rel in files {
            let ts = detect_and_read(&sft(rel)).unwrap();
            assert_eq!(ts.iter().map(git_history_count).sum::<usize>(), 0, "{rel}");
            // The splitter survives arbitrary text (observations, diffs, prompts).
            for m in ts.iter().flat_map(|t| &t.messages) {
                let _ = is_git_history_command(&m.text);
                texts += 1;
            }
        }
        assert_eq!(texts, 12 + 28 + 26 + 188 + 103 + 237 + 274);
        for t in read_all_mini() {
            for m in &t.messages {
                let _ = is_git_history_command(&m.text);
            }
        }
    }

    #[test]
    fn git_history_true() {
        for c in [
            "git log",
            "git log -n 1 django/views/debug.py",
            "git show 0ddb4ebf",
            "git blame -L 10,20 a.py",
            "git rev-list --count HEAD",
            "git reflog",
            "cd /testbed && git log --oneline | head -5",
            "cd x; git show HEAD:a.py > /tmp/a.py",
            "git -C /testbed log -1",
            "git --no-pager show HEAD",
            "git -c core.pager=cat log -3",
            "git --git-dir=/r/.git --work-tree /r blame f",
            "GIT_PAGER=cat git log",
            "/usr/bin/git log",
            "sudo -u me git log",
            "timeout 10 git log",
            "ls || git log",
            "git status && git log -p -1 -- a.py",
            "echo \"$(git log -1 --format=%H)\"",
            "x=`git rev-list HEAD | wc -l`",
            "diff <(git show HEAD:a) a",
            "bash -c 'cd r && git log'",
            "for c in a b; do git show $c; done",
            "if git log -1; then echo y; fi",
            "cat <<'EOF' > f.txt\ngit log\nEOF\ngit log -1",
            "git log>out.txt",
            "git log 2>&1 | head",
            "(cd r && git blame x)",
            "cd r\r\ngit log -1\r\n",
        ] {
            assert!(is_git_history_command(c), "expected true: {c:?}");
        }
    }

    #[test]
    fn git_history_false() {
        for c in [
            "git diff",
            "git status",
            "git diff django/views/debug.py",
            "git checkout a.py",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
            "echo 'git log'",
            "echo \"run git log to see\"",
            "grep -rn \"git show\" docs/",
            "git stash show",
            "git shortlog -s",
            "git help log",
            "# git log\nls",
            "cat <<'EOF' > script.sh\ngit log -1\nEOF",
            "cat <<-EOF > s.sh\n\tgit blame x\n\tEOF\necho done",
            "python -c \"import subprocess; subprocess.run(['git', 'log'])\"",
            "legit log",
            "git-log",
            "git",
            "",
            "ls -la # then git show",
            "git commit -m 'git log'",
            "git -C log status",
        ] {
            assert!(!is_git_history_command(c), "expected false: {c:?}");
        }
    }

    /// mini-swe-agent 2.x, tool-calling model: three tool calls answered by `tool`
    /// messages, one of them a test run, then the `exit` record (shape of its docs'
    /// output-files page and v2 migration guide; written for this test).
    const MINI_V2_TOOLCALLS: &str = r#"{
  "info": {"mini_version": "2.0.0", "exit_status": "Submitted", "submission": "diff --git a/x.py b/x.py"},
  "messages": [
    {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
    {"role": "user", "content": "Please solve this issue: x() returns None"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"cat x.py\"}"}}],
     "extra": {"response": {"choices": [{"message": {"reasoning": "read first"}}]}}},
    {"role": "tool", "tool_call_id": "call_1", "content": "<returncode>0</returncode>\n<output>def x(): pass</output>"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"sed -i 's/pass/return 1/' x.py\"}"}},
      {"id": "call_3", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"python -m pytest -q tests\"}"}}]},
    {"role": "tool", "tool_call_id": "call_2", "content": "<returncode>0</returncode>\n<output></output>"},
    {"role": "tool", "tool_call_id": "call_3", "content": "<returncode>0</returncode>\n<output>3 passed in 0.02s</output>"},
    {"role": "exit", "content": "diff --git a/x.py b/x.py", "extra": {"exit_status": "Submitted", "submission": "diff --git a/x.py b/x.py"}}
  ],
  "trajectory_format": "mini-swe-agent-1.1",
  "instance_id": "demo__x-1"
}"#;

    #[test]
    fn mini_swe_agent_2_tool_calls_and_exit_message_load() {
        let p = temp_file("v2_toolcalls.traj.json", MINI_V2_TOOLCALLS);
        let ts = detect_and_read(&p).unwrap();
        assert_eq!(ts.len(), 1);
        let t = &ts[0];
        assert_eq!((t.instance_id.as_str(), t.source), ("demo__x-1", SOURCE_MINI_SWE_AGENT));
        // 7 chat messages; the exit record is not one
        let roles: Vec<&str> = t.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "tool", "tool"]);
        let calls: Vec<(Option<&str>, &str)> =
            t.messages.iter().flat_map(|m| &m.tool_calls).map(|c| (c.id.as_deref(), c.name.as_str())).collect();
        assert_eq!(calls, [(Some("call_1"), "bash"), (Some("call_2"), "bash"), (Some("call_3"), "bash")]);
        let commands: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
        assert_eq!(commands, ["cat x.py", "sed -i 's/pass/return 1/' x.py", "python -m pytest -q tests"]);
        assert_eq!(commands.iter().filter(|c| crate::sft::heuristics::is_test_command(c)).count(), 1);
        assert_eq!(t.messages[3].tool_call_id.as_deref(), Some("call_1"));
        assert_eq!(t.messages[6].tool_name.as_deref(), Some("bash"));
        assert_eq!(t.messages[6].returncode, Some(0));
        assert_eq!(t.messages[2].reasoning.as_deref(), Some("read first"));
    }

    #[test]
    fn mini_swe_agent_2_text_based_fence_is_mswea_bash_command() {
        let text = r#"{"trajectory_format": "mini-swe-agent-1.1", "instance_id": "demo__x-2", "info": {},
          "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```mswea_bash_command\nls -la\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>x.py</output>"},
            {"role": "assistant", "content": "```bash\necho example-in-prose\n```\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
            {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}}]}"#;
        let t = &detect_and_read(&temp_file("v2_text.traj.json", text)).unwrap()[0];
        let commands: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
        // the 2.x fence only: a ```bash block is an example in prose there
        assert_eq!(commands, ["ls -la", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]);
        assert_eq!(t.messages.len(), 5);
        assert_eq!(t.messages[3].returncode, Some(0));
    }

    #[test]
    fn mini_swe_agent_reader_refuses_unknown_trajectory_format() {
        let text = r#"{"trajectory_format": "mini-swe-agent-3", "messages": [], "info": {}}"#;
        let p = temp_file("v3.traj.json", text);
        let e = detect_and_read(&p).unwrap_err().to_string();
        assert!(e.contains("trajectory_format"), "{e}");
        assert!(e.contains(r#"unknown value "mini-swe-agent-3" (known: mini-swe-agent-1, mini-swe-agent-1.1)"#), "{e}");
        let e = read_mini_swe_agent(&p).unwrap_err().to_string();
        assert!(e.contains("unknown value"), "{e}");
        // a format that is not mini-swe-agent's at all is refused too, not guessed
        let p = temp_file("other.traj.json", r#"{"trajectory_format": "other-agent-9", "history": []}"#);
        assert!(detect_and_read(&p).unwrap_err().to_string().contains(r#"unknown value "other-agent-9""#));
        // an exit message anywhere but last
        let text = r#"{"trajectory_format": "mini-swe-agent-1.1", "messages": [{"role": "exit", "content": ""}, {"role": "user", "content": "x"}]}"#;
        let e = detect_and_read(&temp_file("exit_mid.traj.json", text)).unwrap_err().to_string();
        assert!(e.contains("messages[0].role") && e.contains("before the last message"), "{e}");
        // 1.x files know no exit role
        let text = r#"{"trajectory_format": "mini-swe-agent-1", "messages": [{"role": "exit", "content": ""}]}"#;
        assert!(detect_and_read(&temp_file("exit_v1.traj.json", text)).is_err());
    }

    #[test]
    fn format_detection_names_every_format_tried() {
        // one line of an OpenHands output.jsonl: an event stream, not a chat
        let line = r#"{"instance_id": "demo__x-3", "history": [{"id": 0, "source": "agent", "action": "system", "message": "You are OpenHands agent"}, {"id": 1, "source": "user", "action": "message", "message": "fix it"}], "test_result": {}}"#;
        let e = detect_and_read(&temp_file("output.jsonl", line)).unwrap_err().to_string();
        assert!(!e.contains("history[0].role: missing"), "{e}");
        for tried in ["mini-swe-agent (no `trajectory_format`", "SWE-agent .traj (`history[0]` has no `role` but `action`, `source`", "OpenHands event stream", "LLaMA-Factory (no `messages`)", "openhands / nebius / swe-smith"] {
            assert!(e.contains(tried), "{tried} in {e}");
        }
        // two lines: read as JSON lines, the same account from line 1
        let e = detect_and_read(&temp_file("output2.jsonl", &format!("{line}\n{line}\n"))).unwrap_err().to_string();
        assert!(e.contains("JSON lines") && e.contains("OpenHands event stream"), "{e}");
        // a SWE-agent history still reads
        let ok = r#"{"history": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}"#;
        assert_eq!(detect_and_read(&temp_file("x.traj", ok)).unwrap()[0].messages.len(), 2);
    }
}
