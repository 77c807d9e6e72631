//! Agent trajectories (SPEC §3.1 "trajectories"): the public coding-agent formats
//! read into one normalized message schema, plus two rules over the messages — which
//! shell commands a message runs ([`bash_commands`]) and whether a command queries git
//! history ([`is_git_history_command`], SPEC §3.4 "history queries").
//!
//! This module is the stable entry: the schema lives in [`crate::sft::schema`], each
//! format in [`crate::sft::formats`] (one file per format behind
//! [`TrajectoryFormat`]), SWE-bench reports in [`crate::sft::outcomes`] and the shell
//! lexer in [`crate::shell`]; their items are re-exported here under their old paths.
//!
//! # Formats (see `shared/data/sft/*/PROVENANCE.md`)
//!
//! | reader | `source` | file | tool calls |
//! |---|---|---|---|
//! | [`read_mini_swe_agent`] | `mini-swe-agent` | one `<id>.traj.json` (format `mini-swe-agent-1`; 2.x: `mini-swe-agent-1.1`) | ```` ```bash ```` blocks in assistant text; 2.x: OpenAI `tool_calls` or ```` ```mswea_bash_command ```` blocks |
//! | [`read_swe_agent_traj`] | `swe-agent` | one SWE-agent `.traj` (its `history`) | OpenAI `tool_calls`, or the text `action` of older files |
//! | [`read_openhands_rows`] | `openhands` | rows (SWE-Gym/OpenHands-Sampled-Trajectories) | OpenAI `tool_calls`, parallel calls; non-native: `<function=NAME>` text |
//! | [`read_nebius_rows`] | `nebius` | rows (nebius/SWE-agent-trajectories) | SWE-agent text commands in a fenced block |
//! | [`read_swe_smith_rows`] | `swe-smith` | rows (SWE-bench/SWE-smith-trajectories, any split; `messages` may be a JSON string) | OpenAI `tool_calls` (tool), `<function=NAME>` text (xml), the last fenced block (ticks) |
//! | [`read_llamafactory_jsonl`] | `llamafactory` | JSONL, LLaMA-Factory "v1" typed content parts | `tool_call` parts |
//! | [`read_sharegpt`] | `llamafactory-sharegpt` | JSONL or JSON array, LLaMA-Factory sharegpt `conversations` | `function_call` turns |
//! | [`read_ms_swift`] | `ms-swift` | JSONL or JSON array, ms-swift agent `messages` (per-message `loss` kept as the training flag) | `tool_call` messages |
//! | [`read_atif`] | `atif` | ATIF v1.x (Harbor, NeMo, fast-agent): one document, JSONL or JSON array; `is_copied_context` steps not loaded | agent steps' `tool_calls`, answered by `observation.results` |
//! | [`read_eval_archive`], [`read_inspect_log`] | `inspect-ai` | Inspect AI `.eval` archive or `.json` log (or one sample): one trajectory per sample (and epoch) | assistant `tool_calls` |
//!
//! Row formats are read from a JSON array, JSON lines or one object.
//! [`detect_and_read`] picks the format from the file's content ([`crate::sft::formats::FORMATS`]). Every reader takes the
//! text the input layer read once ([`crate::ingest::Input`]); the path is only a label
//! for errors (and the source of an id when the format names none). No reader opens
//! another file: an evaluator outcome enters only through `load outcomes`.
//!
//! # Normalization
//!
//! * Messages are kept one for one, in file order; [`Message::index`] is the 0-based
//!   position in the source list (the same index message spans use). ATIF is a list of
//!   steps: a step gives its message, then one tool message per observation result, and
//!   a step copied from an earlier trajectory (`is_copied_context`) gives none; indexes
//!   run over the messages kept.
//! * Roles are the source's own (`ai` → [`Role::Assistant`]). Observations that a
//!   text-command agent receives as `user` messages (mini-swe-agent, nebius,
//!   swe-smith, older SWE-agent) stay [`Role::User`]: that is how they are rendered
//!   for training.
//! * A tool call written in the text (a bash block, an XML-style function, a SWE-agent
//!   command) becomes a [`ToolCall`] with `from_text = true`; the text stays in
//!   [`Message::text`] unchanged. Structured calls have `from_text = false`.
//! * [`Message::train`] is the source's own supervision verdict: nebius `mask`; ms-swift
//!   `loss`; ATIF `llm_call_count: 0` (a deterministic dispatch) → false;
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

//!
//! Text that Python's `json.dumps` writes and strict JSON refuses (lone surrogate
//! escapes, `NaN`), and NUL / control characters in tool output, follow the ingest
//! anomaly policy ([`crate::ingest::anomaly`]): accepted and recorded in
//! `ingest_anomalies_v1`, or refused with the reason.

use serde_json::Value;

pub use super::formats::atif::read_atif;
pub use super::formats::inspect::{read_eval_archive, read_log as read_inspect_log};
pub use super::formats::llamafactory::read_llamafactory_jsonl;
pub use super::formats::mini_swe_agent::{MINI_SWE_AGENT_FORMATS, read_mini_swe_agent};
pub use super::formats::nebius::read_nebius_rows;
pub use super::formats::openhands::read_openhands_rows;
pub use super::formats::sharegpt::read_sharegpt;
pub use super::formats::swe_agent::read_swe_agent_traj;
pub use super::formats::swe_smith::read_swe_smith_rows;
pub use super::formats::swift::read_ms_swift;
pub use super::formats::text_calls::{
    bash_blocks, observation_returncode, swe_agent_command_call, swe_agent_text_action, xml_function_calls,
};
pub use super::formats::{TrajectoryFormat, detect_and_read, read_bytes};
pub use super::outcomes::{Outcome, Report, TestCounts, looks_like_report, read_report, read_swebench_report};
pub use super::schema::{
    Message, Role, SOURCE_ATIF, SOURCE_INSPECT, SOURCE_LLAMAFACTORY, SOURCE_MINI_SWE_AGENT, SOURCE_MS_SWIFT,
    SOURCE_NEBIUS, SOURCE_OPENHANDS, SOURCE_SHAREGPT, SOURCE_SWE_AGENT, SOURCE_SWE_SMITH, ToolCall, Trajectory,
};
pub use crate::shell::{GIT_HISTORY_SUBCOMMANDS, is_git_history_command};

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

#[cfg(test)]
mod tests;
