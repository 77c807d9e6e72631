//! The common message schema every trajectory format converts into (SPEC §3.1): a
//! [`Trajectory`] of [`Message`]s with their [`ToolCall`]s, and the `source` names.
//! See [`crate::sft::trajectories`] for the normalization rules.

use serde::Serialize;
use serde_json::Value;

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
/// `source` of LLaMA-Factory sharegpt rows (`conversations` of `from` / `value`).
pub const SOURCE_SHAREGPT: &str = "llamafactory-sharegpt";
/// `source` of ms-swift agent rows (`tool_call` / `tool_response` roles, per-message `loss`).
pub const SOURCE_MS_SWIFT: &str = "ms-swift";
/// `source` of ATIF trajectories (Harbor's Agent Trajectory Interchange Format).
pub const SOURCE_ATIF: &str = "atif";
/// `source` of Inspect AI log samples (`.eval` archives and `.json` logs).
pub const SOURCE_INSPECT: &str = "inspect-ai";

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
/// One trajectory (one task attempt), normalized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trajectory {
    /// mini-swe-agent: `instance_id`; SWE-agent: the file stem; openhands, nebius,
    /// swe-smith: the row's `instance_id` as given (the ADP extraction appended `_<n>`
    /// to openhands and nebius ids; swe-smith's unique id is in `id`, not used);
    /// LLaMA-Factory: `<file stem>:<row index>`; ATIF: `trajectory_id`, else `session_id`,
    /// else `<file stem>:<record index>`; Inspect AI: the sample `id` (every epoch of a
    /// sample is an attempt of it: [`Trajectory::attempt`]).
    pub instance_id: String,
    /// One of the `SOURCE_*` constants.
    pub source: &'static str,
    /// The file's own evaluator verdict: openhands and swe-smith `resolved`; nebius
    /// `target`; Inspect AI: the sample's `scores` when they agree on a verdict
    /// ([`crate::sft::formats::inspect::declared_resolved`]). `None` when the file has
    /// none (mini-swe-agent, SWE-agent, LLaMA-Factory, ATIF: their outcomes are
    /// evaluator reports, loaded apart).
    pub resolved: Option<bool>,
    /// OpenAI tool schemas (the source's `tools`: openhands list, LLaMA-Factory JSON
    /// string parsed); `None` when absent.
    pub tools: Option<Value>,
    /// The row's own `repo` field (`owner/name`, as SWE-bench task rows carry it) in the
    /// row formats (openhands, nebius, swe-smith); `None` when absent. The family comes
    /// from it before the id's scheme ([`crate::sft::family`]).
    pub repo: Option<String>,
    pub messages: Vec<Message>,
    /// The 0-based attempt at the instance when the source numbers its attempts itself:
    /// Inspect AI's `epoch` − 1 (epoch 1 is attempt 0). `None` (every other format): the
    /// attempts are numbered in order of loading ([`crate::sft::attempts::number`]).
    pub attempt: Option<u32>,
}

impl Message {
    /// An empty message: `text` only, every other field unset.
    pub(crate) fn new(index: usize, role: Role, text: String) -> Message {
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
