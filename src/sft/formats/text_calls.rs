//! Tool calls written in message text, as the harnesses that write them parse them:
//! mini-swe-agent ```` ```bash ```` blocks, SWE-agent's fenced text commands, the
//! `<function=NAME>` XML calls of swe-smith, and mini-swe-agent's `<returncode>`.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::sft::schema::ToolCall;

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

/// A text-style `bash` call running `body`: `{"command": body}`.
pub(crate) fn bash_call(body: &str) -> ToolCall {
    let mut args = Map::new();
    args.insert("command".into(), Value::String(body.to_string()));
    ToolCall { id: None, name: "bash".into(), arguments: Value::Object(args), from_text: true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sft::schema::{Message, Role};
    use crate::sft::trajectories::{bash_commands, is_shell_call};

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
}
