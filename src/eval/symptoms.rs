//! Per-trajectory finish and symptom verdicts of an evaluation run (SPEC §3.5). Every
//! verdict here is a HEURISTIC read from the messages, never an official failure reason;
//! the views name them so.
//!
//! The rules (docs/runs.md "Symptoms" lists their known false positives):
//! * an *edit* is an assistant turn that writes a file: a shell command
//!   [`is_write_command`] accepts (heredoc, `sed -i`, redirection, `tee`, `patch`, ...) or
//!   a structured edit tool ([`EDIT_TOOLS`], unless its `command` is `view`) — the same
//!   reading as `sft_messages.writes`;
//! * *git-history queries*: shell commands [`is_git_history_command`] accepts;
//! * *turns before the first edit*: assistant turns before the first editing turn;
//! * *runaway*: `N` or more assistant turns before any edit (all turns when there is no
//!   edit), [`DEFAULT_RUNAWAY_TURNS`] unless the load says otherwise;
//! * *long repetition*: an assistant text or thinking body of at least 3,000 characters
//!   whose zlib ratio is below 0.1 ([`is_long_repetition`], the seed's rule);
//! * *pass after last edit*: the last observation read as a passing test run
//!   ([`test_result`] after a [`is_test_command`] turn) comes after the last edit (with no
//!   edit, any pass counts) — as `sft_test_runs_heuristic_v1.pass_after_last_write`.

use crate::rules::compress::{DEFAULT_MAX_RATIO, DEFAULT_MIN_CHARS, is_long_repetition};
use crate::sft::heuristics::{TestResult, is_test_command, is_write_command, test_result};
use crate::sft::store::EDIT_TOOLS;
use crate::sft::trajectories::{Role, Trajectory, bash_commands, is_git_history_command};
use serde_json::Value;

/// Default `N` of the runaway heuristic: 30 assistant turns without an edit. Our choice,
/// not the seed's (the seed names the symptom, not a threshold; its base-model successes
/// made their first edit at a median of 10 turns, so 30 is three times that).
pub const DEFAULT_RUNAWAY_TURNS: u32 = 30;

/// How a trajectory ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The agent submitted on its own (`Submitted`, `submitted`).
    Natural,
    /// A step, cost or context budget stopped it (mini-swe-agent `LimitsExceeded`,
    /// SWE-agent `exit_cost` / `exit_context` and `submitted (exit_...)` autosubmissions).
    Limit,
    /// Any other recorded exit status (`RetryError`, `FormatError`, `exit_format`, ...).
    Error,
    /// No exit status recorded and the last assistant turn does not submit: the
    /// conversation was cut off.
    CutOff,
}

impl Finish {
    /// `natural`, `limit`, `error` or `cut_off`, as stored in `eval_trajectories.finish`.
    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Natural => "natural",
            Finish::Limit => "limit",
            Finish::Error => "error",
            Finish::CutOff => "cut_off",
        }
    }
}

/// The finish for a recorded exit status (case-insensitive): a status naming a budget
/// (`limit`, `cost`, `context`, `token`, `step`) is [`Finish::Limit`] — checked first, so
/// SWE-agent's `submitted (exit_cost)` autosubmission is a limit; otherwise one starting
/// with `submitted`, or AutoCodeRover's `APPLICABLE_PATCH` (its best extract status, see
/// [`super::autocoderover`]), is [`Finish::Natural`]; any other is [`Finish::Error`]; none is
/// [`Finish::CutOff`].
pub fn finish_of(exit_status: Option<&str>) -> Finish {
    let Some(status) = exit_status else { return Finish::CutOff };
    let s = status.trim().to_ascii_lowercase();
    if ["limit", "cost", "context", "token", "step"].iter().any(|w| s.contains(w)) {
        Finish::Limit
    } else if s.starts_with("submitted") || s == "applicable_patch" {
        Finish::Natural
    } else {
        Finish::Error
    }
}

/// Tool names that end an episode by submitting: SWE-agent's and swe-smith's `submit`,
/// OpenHands' `finish` (the `submit` rows of `tool_aliases`).
pub const SUBMIT_TOOLS: &[&str] = &["submit", "finish"];

/// mini-swe-agent's submission signal: the first output line of the final command.
pub const MINI_SWE_AGENT_SUBMIT: &str = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/// The finish of trajectory `t` whose file records `exit_status`: [`finish_of`] the status
/// when there is one. Formats that record none (OpenHands, SWE-smith, LLaMA-Factory rows)
/// finished naturally when their last assistant turn submits — a [`SUBMIT_TOOLS`] call or
/// a shell command printing [`MINI_SWE_AGENT_SUBMIT`] — and were cut off otherwise.
pub fn finish(exit_status: Option<&str>, t: &Trajectory) -> Finish {
    if exit_status.is_some() {
        return finish_of(exit_status);
    }
    let submits = t.messages.iter().rev().find(|m| m.role == Role::Assistant).is_some_and(|m| {
        m.tool_calls.iter().any(|c| SUBMIT_TOOLS.contains(&c.name.as_str()))
            || bash_commands(m).iter().any(|c| c.contains(MINI_SWE_AGENT_SUBMIT))
    });
    if submits { Finish::Natural } else { Finish::CutOff }
}

/// True when an exit status says the context window (token budget) ran out: SWE-agent's
/// `exit_context` and `submitted (exit_context)`, or any status naming tokens.
pub fn exit_names_token_limit(exit_status: Option<&str>) -> bool {
    exit_status.is_some_and(|s| {
        let s = s.to_ascii_lowercase();
        s.contains("context") || s.contains("token")
    })
}

/// What the trajectory file records beside its messages: the exit status and how many
/// model responses stopped at their token limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// `info.exit_status` (mini-swe-agent, SWE-agent), a row's `exit_status` (nebius), or
    /// mini-swe-agent 2.x's final `exit` message `extra.exit_status`.
    pub exit_status: Option<String>,
    /// Messages (`messages` or `history`) whose model response has `finish_reason`
    /// `length` (`extra.response.choices[0].finish_reason`, or a message's own
    /// `finish_reason`).
    pub length_finishes: u32,
}

/// Reads [`Recorded`] from one raw trajectory document or row (a HF datasets-server row
/// wrapper `{"row": {...}}` is looked through). Missing fields give `None` / 0.
pub fn recorded(raw: &Value) -> Recorded {
    let raw = raw.get("row").filter(|r| r.is_object()).unwrap_or(raw);
    let messages = raw.get("messages").or_else(|| raw.get("history")).and_then(Value::as_array);
    let exit_message = messages
        .and_then(|m| m.last())
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("exit"))
        .and_then(|m| m.pointer("/extra/exit_status"));
    let exit_status = raw
        .pointer("/info/exit_status")
        .or_else(|| raw.get("exit_status"))
        .or(exit_message)
        .and_then(Value::as_str)
        .map(str::to_string);
    let length_finishes = messages.map_or(0, |ms| {
        ms.iter()
            .filter(|m| {
                m.pointer("/extra/response/choices/0/finish_reason")
                    .or_else(|| m.get("finish_reason"))
                    .and_then(Value::as_str)
                    == Some("length")
            })
            .count() as u32
    });
    Recorded { exit_status, length_finishes }
}

/// The heuristic verdicts of one trajectory (see the module docs for each rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdicts {
    pub assistant_turns: u32,
    /// `None`: no edit at all.
    pub turns_before_first_edit: Option<u32>,
    pub git_history_commands: u32,
    pub long_repetition: bool,
    pub runaway: bool,
    pub pass_after_last_edit: bool,
}

/// True when the assistant message edits a file (shell write or structured edit tool).
fn edits(m: &crate::sft::trajectories::Message) -> bool {
    bash_commands(m).iter().any(|c| is_write_command(c))
        || m.tool_calls.iter().any(|c| {
            EDIT_TOOLS.contains(&c.name.as_str()) && c.arguments.get("command").and_then(Value::as_str) != Some("view")
        })
}

/// The verdicts of `t`, with the runaway threshold `runaway_n` (assistant turns).
pub fn verdicts(t: &Trajectory, runaway_n: u32) -> Verdicts {
    let mut turns = 0u32;
    let mut first_edit: Option<u32> = None;
    let mut git = 0u32;
    let mut long = false;
    let mut last_edit: Option<usize> = None;
    let mut last_pass: Option<usize> = None;
    let mut pending_test = false;
    for (i, m) in t.messages.iter().enumerate() {
        if m.role == Role::Assistant {
            let commands = bash_commands(m);
            git += commands.iter().filter(|c| is_git_history_command(c)).count() as u32;
            long |= is_long_repetition(&m.text, DEFAULT_MIN_CHARS, DEFAULT_MAX_RATIO)
                || m.reasoning.as_deref().is_some_and(|r| is_long_repetition(r, DEFAULT_MIN_CHARS, DEFAULT_MAX_RATIO));
            if edits(m) {
                first_edit.get_or_insert(turns);
                last_edit = Some(i);
            }
            pending_test = commands.iter().any(|c| is_test_command(c));
            turns += 1;
        } else if pending_test && m.role != Role::System {
            if test_result(&m.text) == Some(TestResult::Pass) {
                last_pass = Some(i);
            }
            pending_test = false;
        }
    }
    Verdicts {
        assistant_turns: turns,
        turns_before_first_edit: first_edit,
        git_history_commands: git,
        long_repetition: long,
        runaway: first_edit.unwrap_or(turns) >= runaway_n,
        pass_after_last_edit: match (last_pass, last_edit) {
            (Some(p), Some(e)) => p > e,
            (Some(_), None) => true,
            (None, _) => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sft::trajectories::read_mini_swe_agent;
    use serde_json::json;

    #[test]
    fn finish_reads_each_harness_exit_status() {
        for (status, finish) in [
            (Some("Submitted"), Finish::Natural),
            (Some("submitted"), Finish::Natural),
            (Some("LimitsExceeded"), Finish::Limit),
            (Some("exit_cost"), Finish::Limit),
            (Some("exit_context"), Finish::Limit),
            (Some("submitted (exit_cost)"), Finish::Limit),
            (Some("RetryError"), Finish::Error),
            (Some("exit_format"), Finish::Error),
            (None, Finish::CutOff),
        ] {
            assert_eq!(finish_of(status), finish, "{status:?}");
        }
        assert!(exit_names_token_limit(Some("submitted (exit_context)")));
        assert!(!exit_names_token_limit(Some("exit_cost")));
    }

    #[test]
    fn recorded_reads_exit_status_and_length_finishes() {
        let raw = json!({"info": {"exit_status": "Submitted"}, "messages": [
            {"role": "assistant", "content": "a", "extra": {"response": {"choices": [{"finish_reason": "length"}]}}},
            {"role": "assistant", "content": "b", "extra": {"response": {"choices": [{"finish_reason": "stop"}]}}}
        ]});
        assert_eq!(recorded(&raw), Recorded { exit_status: Some("Submitted".into()), length_finishes: 1 });
        let v2 = json!({"messages": [{"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded"}}]});
        assert_eq!(recorded(&v2).exit_status.as_deref(), Some("LimitsExceeded"));
        assert_eq!(recorded(&json!({"row": {"exit_status": "submitted"}})).exit_status.as_deref(), Some("submitted"));
        assert_eq!(recorded(&json!({"messages": []})), Recorded::default());
    }

    fn mini(messages: Value) -> Trajectory {
        let doc = json!({"instance_id": "x__y-1", "messages": messages}).to_string();
        read_mini_swe_agent(std::path::Path::new("t.traj.json"), &doc).unwrap()
    }

    fn bash(cmd: &str) -> Value {
        json!({"role": "assistant", "content": format!("THOUGHT\n```bash\n{cmd}\n```")})
    }

    fn obs(text: &str) -> Value {
        json!({"role": "user", "content": format!("<returncode>0</returncode>\n<output>\n{text}\n</output>")})
    }

    #[test]
    fn verdicts_count_turns_before_the_first_edit_and_the_pass_after_it() {
        let t = mini(json!([
            {"role": "system", "content": "s"}, {"role": "user", "content": "task"},
            bash("git log --oneline -3"), obs("abc"),
            bash("cat a.py"), obs("x"),
            bash("sed -i 's/a/b/' a.py"), obs(""),
            bash("python -m pytest -q t.py"), obs("1 passed in 0.01s"),
        ]));
        let v = verdicts(&t, 2);
        assert_eq!(v.assistant_turns, 4);
        assert_eq!(v.turns_before_first_edit, Some(2));
        assert_eq!(v.git_history_commands, 1);
        assert!(v.runaway, "2 turns before the first edit reach N = 2");
        assert!(!verdicts(&t, 3).runaway);
        assert!(v.pass_after_last_edit);
        assert!(!v.long_repetition);
    }

    #[test]
    fn verdicts_no_edit_runs_away_on_all_turns_and_a_pass_before_an_edit_does_not_count() {
        let t = mini(json!([{"role": "user", "content": "task"}, bash("ls"), obs(""), bash("ls -la"), obs("")]));
        let v = verdicts(&t, 2);
        assert_eq!((v.turns_before_first_edit, v.runaway, v.pass_after_last_edit), (None, true, false));
        let t = mini(json!([
            {"role": "user", "content": "task"},
            bash("pytest t.py"), obs("===== 1 passed in 0.1s ====="),
            bash("echo x > a.py"), obs(""),
        ]));
        assert!(!verdicts(&t, 30).pass_after_last_edit);
    }

    #[test]
    fn finish_without_exit_status_is_natural_only_when_the_last_turn_submits() {
        let submitted = mini(
            json!([{"role": "user", "content": "task"}, bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff")]),
        );
        assert_eq!(finish(None, &submitted), Finish::Natural);
        assert_eq!(finish(Some("LimitsExceeded"), &submitted), Finish::Limit, "a recorded status wins");
        let cut = mini(
            json!([{"role": "user", "content": "task"}, bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"), obs(""), bash("ls")]),
        );
        assert_eq!(finish(None, &cut), Finish::CutOff);
    }

    #[test]
    fn verdicts_flag_long_repetitive_assistant_output() {
        let body = "again ".repeat(600);
        let t = mini(json!([{"role": "user", "content": "task"}, {"role": "assistant", "content": body}]));
        assert!(verdicts(&t, 30).long_repetition);
        // the same text in an observation is not model output
        let t = mini(json!([{"role": "user", "content": body}, {"role": "assistant", "content": "ok"}]));
        assert!(!verdicts(&t, 30).long_repetition);
    }
}
