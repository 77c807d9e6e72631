//! `views build`: render loaded trajectories into tokenized views (SPEC §3.1, issue 4).
//!
//! Each trajectory's messages are read back from the database as the OpenAI-style
//! messages Hugging Face's `apply_chat_template` takes (structured tool calls with their
//! arguments as JSON objects; assistant messages carry `reasoning_content`, empty when
//! the source has no thinking text; calls parsed out of the message text stay in the
//! text), rendered with [`render::render_view`](super::render::render_view), and the
//! supervision policy decides which assistant messages keep their loss. Output is view
//! JSONL in sphragis's format (`docs/formats.md`), ready for `load views`.

use super::render::{ChatTemplate, RenderedView, render_view};
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use serde_json::{Map, Value, json};
use std::io::Write;

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
                    let keep = list.split(',').map(|s| s.trim().parse().map_err(|_| bad())).collect::<Result<Vec<i64>>>()?;
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

/// The messages and tool schemas of one loaded trajectory, as `apply_chat_template`
/// takes them. Errors when the instance has no trajectory or a stored argument is not JSON.
pub fn messages_json(conn: &Connection, instance_id: &str) -> Result<(Vec<Value>, Option<Value>)> {
    let tools: Option<Option<String>> = conn
        .query_row("select tools from sft_trajectories where instance_id = ?", [instance_id], |r| r.get(0))
        .ok();
    let Some(tools) = tools else { bail!("no trajectory {instance_id} is loaded") };
    let tools = tools.map(|t| serde_json::from_str(&t)).transpose()?;
    let mut calls: std::collections::BTreeMap<i64, Vec<Value>> = Default::default();
    let mut stmt = conn.prepare(
        "select msg_index, call_id, name, arguments from sft_tool_calls \
         where instance_id = ? and not from_text order by msg_index, call_index",
    )?;
    for row in stmt.query_map([instance_id], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
    })? {
        let (msg, id, name, arguments) = row?;
        let arguments: Value = serde_json::from_str(&arguments)
            .with_context(|| format!("{instance_id}: message {msg}: tool call arguments are not JSON"))?;
        let mut call = Map::new();
        if let Some(id) = id {
            call.insert("id".into(), json!(id));
        }
        call.insert("type".into(), json!("function"));
        call.insert("function".into(), json!({ "name": name, "arguments": arguments }));
        calls.entry(msg).or_default().push(Value::Object(call));
    }
    let mut stmt = conn.prepare(
        "select msg_index, role, text, reasoning, tool_call_id, tool_name from sft_messages \
         where instance_id = ? order by msg_index",
    )?;
    let mut messages = Vec::new();
    for row in stmt.query_map([instance_id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })? {
        let (index, role, text, reasoning, tool_call_id, tool_name) = row?;
        let mut m = Map::new();
        m.insert("role".into(), json!(role));
        m.insert("content".into(), json!(text));
        if role == "assistant" {
            m.insert("reasoning_content".into(), json!(reasoning.as_deref().unwrap_or("").trim()));
            if let Some(c) = calls.remove(&index) {
                m.insert("tool_calls".into(), Value::Array(c));
            }
        }
        if let Some(id) = tool_call_id {
            m.insert("tool_call_id".into(), json!(id));
        }
        if let Some(name) = tool_name {
            m.insert("name".into(), json!(name));
        }
        messages.push(Value::Object(m));
    }
    Ok((messages, tools))
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
    /// Only these instances (all loaded trajectories when empty).
    pub instances: Vec<String>,
    /// SHA-256 of the tokenizer.json and of the template text, recorded in `origin`.
    pub tokenizer_sha256: String,
    pub template_sha256: String,
}

/// Renders the chosen trajectories into view JSONL on `out`, one line per trajectory,
/// in instance order.
///
/// Errors: an instance that is not loaded, a policy keeping a message that is not an
/// assistant message, a template or tokenizer failure (naming the instance), a write
/// error.
pub fn build(
    conn: &Connection,
    template: &ChatTemplate,
    tokenizer: &tokenizers::Tokenizer,
    options: &BuildOptions,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64),
) -> Result<Built> {
    let instances: Vec<(String, Option<String>, String, String)> = {
        let mut stmt = conn.prepare(
            "select t.instance_id, t.family, l.path, l.sha256 from sft_trajectories as t \
             join ingest_log as l using (file_id) order by t.instance_id",
        )?;
        let all = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<duckdb::Result<Vec<_>>>()?;
        if options.instances.is_empty() {
            all
        } else {
            for wanted in &options.instances {
                if !all.iter().any(|a| &a.0 == wanted) {
                    bail!("no trajectory {wanted} is loaded");
                }
            }
            all.into_iter().filter(|a| options.instances.contains(&a.0)).collect()
        }
    };
    // Read every trajectory first (one connection, one thread), then render on as many
    // threads as there are cores: rendering (template, tokenizer, per-message prefix
    // tokenizations for the spans) is the slow part. Output keeps instance order.
    let mut work = Vec::with_capacity(instances.len());
    for (instance_id, family, path, sha256) in instances {
        let (messages, tools) = messages_json(conn, &instance_id)?;
        work.push((instance_id, family, path, sha256, messages, tools));
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(work.len().max(1));
    let done = std::sync::atomic::AtomicU64::new(0);
    let empty = std::sync::Mutex::new(Vec::<String>::new());
    let render_one = |(instance_id, family, path, sha256, messages, tools): &(String, Option<String>, String, String, Vec<Value>, Option<Value>)| -> Result<Value> {
        let view = render_view(template, tokenizer, messages, tools.as_ref())
            .with_context(|| format!("rendering {instance_id}"))?;
        let assistant: Vec<i64> =
            messages.iter().enumerate().filter(|(_, m)| m["role"] == "assistant").map(|(i, _)| i as i64).collect();
        let keep = options.policy.keep(&assistant);
        if let Some(bad) = keep.iter().find(|k| !assistant.contains(k)) {
            bail!("{instance_id}: the policy keeps message {bad}, which is not an assistant message");
        }
        if keep.is_empty() {
            empty.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.push(instance_id.clone());
        }
        let mask = apply_keep(&view, &keep);
        let supervised = mask.iter().filter(|m| **m == 1).count();
        let spans: Vec<Value> = view
            .message_spans
            .iter()
            .map(|s| json!({"index": s.index, "role": s.role, "start": s.start, "end": s.end}))
            .collect();
        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(json!({
            "view_id": format!("{}:{}", options.pool, instance_id),
            "pool": options.pool,
            "instance_id": instance_id,
            "family": family,
            "input_ids": view.input_ids,
            "loss_mask": mask,
            "message_spans": spans,
            "span_end": "exclusive",
            "keep_msgs": keep,
            "ledger": { "n_tokens": view.input_ids.len(), "n_supervised": supervised },
            "source_path": path,
            "source_sha256": sha256,
            "origin": {
                "builder": crate::RULES_CODE,
                "policy": options.policy.describe(),
                "template_sha256": options.template_sha256,
                "tokenizer_sha256": options.tokenizer_sha256,
            },
        }))
    };
    let chunk = work.len().div_ceil(threads).max(1);
    let results: Vec<Result<Value>> = std::thread::scope(|scope| {
        let handles: Vec<_> = work
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().map(render_one).collect::<Vec<_>>()))
            .collect();
        loop {
            progress(done.load(std::sync::atomic::Ordering::Relaxed));
            if handles.iter().all(|h| h.is_finished()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|_| vec![Err(anyhow::anyhow!("a rendering thread panicked"))])).collect()
    });
    let mut written = 0;
    for line in results {
        serde_json::to_writer(&mut *out, &line?)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    progress(written);
    let mut empty = empty.into_inner().map_err(|_| anyhow::anyhow!("poisoned"))?;
    empty.sort();
    Ok(Built { written, unsupervised: empty })
}

/// What [`build`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// Views written.
    pub written: u64,
    /// Instances whose view keeps no message under the policy (no supervised token).
    pub unsupervised: Vec<String>,
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
}
