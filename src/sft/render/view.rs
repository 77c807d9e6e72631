//! One view of a conversation: render it, tokenize it once with offsets, map the
//! generation ranges to the assistant mask and the message boundaries to token spans,
//! verifying each boundary (see "Spans are verified" in the [module doc](super)).

use anyhow::{Context as _, Result, anyhow, bail};

use super::mask::{SpanTokens, assistant_mask, common_prefix_len};
use super::template::ChatTemplate;

/// Token span of one message (`end` exclusive); serialized as a view line's
/// `message_spans` entry (`{"index", "role", "start", "end"}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MessageSpan {
    pub index: usize,
    pub role: String,
    pub start: usize,
    pub end: usize,
}

/// One tokenized SFT view of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedView {
    pub input_ids: Vec<u32>,
    /// 1 where the token is assistant output (trained on), else 0.
    pub assistant_mask: Vec<u8>,
    pub message_spans: Vec<MessageSpan>,
    /// Generation ranges (0-based, in rendering order) where Hugging Face's mask would
    /// leave the range (supervise to the end of the sequence, or stop supervising): their
    /// tokens are marked by overlap instead (see `mask::assistant_mask`). Empty when the
    /// mask is HF's exactly.
    pub hf_fallthrough: Vec<usize>,
}

impl RenderedView {
    /// `labels` as HF trainers build them: the id where supervised, else -100.
    pub fn labels(&self) -> Vec<i64> {
        self.input_ids
            .iter()
            .zip(&self.assistant_mask)
            .map(|(&id, &m)| if m == 1 { i64::from(id) } else { -100 })
            .collect()
    }
}
/// Render one conversation into token ids, assistant mask and message spans.
///
/// The conversation is rendered and tokenized once, with character offsets; the
/// generation ranges and message boundaries are mapped to token positions through
/// those offsets. Each boundary still comes from the rendering of the messages up to
/// it (the definition of a span, and the prefix-preservation check), but that text is
/// not tokenized again when the boundary is a token boundary of the whole encoding:
/// only the short stretch from the last added token before it (see [`SpanTokens`](super::mask::SpanTokens))
/// is, and its tokens must equal the whole encoding's there. Where that does not hold
/// (a boundary inside a token, no added token to start from, a tokenizer with
/// truncation, padding or context-dependent added tokens) the prefix is tokenized
/// whole, as Hugging Face would, so the spans are the same either way.
///
/// Errors: a template or tokenizer failure; a template that is not
/// prefix-preserving for this conversation, a message boundary that is not a
/// token boundary of the whole rendering, or a span that would end before it
/// starts (see "Spans are verified" in the module doc) — no view is returned
/// then.
pub fn render_view(
    template: &ChatTemplate,
    tokenizer: &tokenizers::Tokenizer,
    messages: &[serde_json::Value],
    tools: Option<&serde_json::Value>,
) -> Result<RenderedView> {
    let (values, tools_value) = template.prepare(messages, tools)?;
    let full = template.render_values(&values, &tools_value, false)?;
    // byte offsets: tokenizers' own conversion to character offsets hashes every byte
    let enc =
        tokenizer.encode(full.text.as_str(), false).map_err(|e| anyhow!("tokenizing rendered conversation: {e}"))?;
    let input_ids = enc.get_ids().to_vec();
    let spans_from = SpanTokens::new(tokenizer, &full.text, &input_ids, enc.get_offsets());
    let char_offsets = spans_from.char_offsets();
    let n_chars = spans_from.char_bytes.len() - 1;
    let (assistant_mask, hf_fallthrough) = assistant_mask(&char_offsets, n_chars, &full.generation_char_spans);

    let role_of =
        |m: &serde_json::Value| -> String { m.get("role").and_then(|r| r.as_str()).unwrap_or_default().to_owned() };
    // The token ids of a prefix rendering, when it has to be tokenized whole.
    let prefix_ids = |k: usize, text: &str| -> Result<Vec<u32>> {
        Ok(tokenizer
            .encode_fast(text, false)
            .map_err(|e| anyhow!("tokenizing messages[..={k}]: {e}"))?
            .get_ids()
            .to_vec())
    };
    // Where message k ends when its prefix rendering parts from the whole at byte
    // `common` and goes on with `tail`: the tokens the two renderings share.
    let common_end = |k: usize, common: usize, tail: &str| -> Result<usize> {
        match spans_from.common_tokens(common, tail)? {
            Some(end) => Ok(end),
            None => Ok(common_prefix_len(&prefix_ids(k, &[&full.text[..common], tail].concat())?, &input_ids)),
        }
    };
    let mut message_spans = Vec::with_capacity(messages.len());
    let mut prev = 0usize;
    // Text a tool-to-tool prefix rendering adds after its common part with the full
    // rendering (the turn closing); checked against the run's last message.
    let mut open_tails: Vec<(usize, String)> = Vec::new();
    // Bytes of the full text already matched by a prefix rendering.
    let mut verified = 0usize;
    for (k, m) in messages.iter().enumerate() {
        let role = role_of(m);
        let end = if k + 1 == messages.len() {
            close_tool_run(&mut open_tails, &full.text, k)?;
            input_ids.len()
        } else {
            let prefix = template
                .render_prefix(&values[..=k], &tools_value, &full.text)
                .with_context(|| format!("rendering messages[..={k}]"))?;
            let common = prefix.common;
            if role == "tool" && role_of(&messages[k + 1]) == "tool" {
                if common < verified {
                    return Err(not_prefix_preserving(k, messages.len(), &prefix.tail, &full.text, common));
                }
                let end = common_end(k, common, &prefix.tail)?;
                open_tails.push((k, prefix.tail));
                end
            } else if common < prefix.len
                && common >= verified
                && !prefix.tail_generated
                && full.text.ends_with(&prefix.tail)
            {
                // A closing the template writes after the last message only (Phi-style
                // templates end the conversation with eos_token): the prefix rendering
                // differs from the whole only by text outside every generation block that
                // the whole ends with, so message k ends where the two part, as a
                // tool-to-tool prefix does.
                let end = common_end(k, common, &prefix.tail)?;
                close_tool_run(&mut open_tails, &[&full.text[..common], &prefix.tail].concat(), k)?;
                verified = common;
                end
            } else {
                if common < prefix.len {
                    return Err(not_prefix_preserving(k, messages.len(), &prefix.tail, &full.text, common));
                }
                let text = &full.text[..prefix.len];
                let end = match spans_from.prefix_tokens(prefix.len)? {
                    Some(end) => end,
                    None => {
                        let ids = prefix_ids(k, text)?;
                        if ids.len() > input_ids.len() || ids != input_ids[..ids.len()] {
                            bail!(
                                "message {k} does not end at a token boundary: the tokens of messages[..={k}] are not a \
                                 prefix of the tokens of the whole conversation, so its span cannot be derived exactly"
                            );
                        }
                        ids.len()
                    }
                };
                close_tool_run(&mut open_tails, text, k)?;
                verified = prefix.len;
                end
            }
        };
        if end < prev {
            bail!(
                "message {k} ({role}) would end at token {end}, before it starts at token {prev}; no span is written"
            );
        }
        message_spans.push(MessageSpan { index: k, role, start: prev, end });
        prev = end;
    }
    Ok(RenderedView { input_ids, assistant_mask, message_spans, hf_fallthrough })
}
/// The error for a template whose rendering of `messages[..=k]` is not the start of
/// the rendering of all `n` messages; `at` is the first differing byte, `prefix_tail`
/// the prefix rendering from there.
fn not_prefix_preserving(k: usize, n: usize, prefix_tail: &str, full: &str, at: usize) -> anyhow::Error {
    let excerpt = |s: &str| -> String { s.chars().take(40).collect() };
    let char_at = full[..at].chars().count();
    anyhow!(
        "the chat template is not prefix-preserving: the rendering of messages[..={k}] is not the start of the \
         rendering of all {n} messages (from character {char_at}: {:?} vs {:?}), so message spans cannot be derived \
         from prefix renderings and none are written; use a template that renders each turn the same whatever \
         follows it (for example one that always emits the thinking block)",
        excerpt(prefix_tail),
        excerpt(&full[at..])
    )
}

/// Checks, at the end of a run of tool messages (message `k`, rendered as
/// `rendering`), that every earlier tool-to-tool prefix differed from the full
/// rendering only by text the run's last rendering ends with (the turn closing).
fn close_tool_run(open_tails: &mut Vec<(usize, String)>, rendering: &str, k: usize) -> Result<()> {
    for (j, tail) in open_tails.drain(..) {
        if !rendering.ends_with(&tail) {
            bail!(
                "the chat template is not prefix-preserving: the rendering of messages[..={j}] adds {tail:?} after \
                 its common part with the whole conversation, which is not how the tool run closes at message {k}; \
                 message spans cannot be derived exactly and none are written"
            );
        }
    }
    Ok(())
}

/// Length in bytes of the longest common prefix of `a` and `b`, on a char boundary
/// (the tests' independent check of [`ChatTemplate::render_prefix`]'s `common`).
#[cfg(test)]
pub(super) fn common_prefix_bytes(a: &str, b: &str) -> usize {
    let mut i = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // the first differing byte lies inside the first differing character
    while !a.is_char_boundary(i) {
        i -= 1;
    }
    i
}
#[cfg(test)]
mod tests {
    use super::super::testutil::{load_reference, sample_template, shared_dir, shared_qwen3_training, tiny_tokenizer};
    use super::*;
    use serde_json::json;

    /// Tiny 3-message conversation with the sample template and a hand-built
    /// word-level tokenizer: checks mask and spans logic.
    #[test]
    fn mask_and_spans_on_tiny_conversation() {
        let tok = tiny_tokenizer();
        let t = sample_template();
        assert!(t.marks_assistant_output());
        let msgs = vec![
            json!({"role": "system", "content": "sys"}),
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": "yo"}),
        ];
        let text = t.render(&msgs, None, false).unwrap();
        assert_eq!(
            text.text,
            "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nyo<|im_end|>\n"
        );
        let view = render_view(&t, &tok, &msgs, None).unwrap();
        let pieces: Vec<String> = view.input_ids.iter().map(|&id| tok.id_to_token(id).unwrap()).collect();
        // system: <|im_start|> system \n sys <|im_end|> \n  => 6 tokens
        assert_eq!(view.message_spans[0], MessageSpan { index: 0, role: "system".into(), start: 0, end: 6 });
        assert_eq!(view.message_spans[1], MessageSpan { index: 1, role: "user".into(), start: 6, end: 12 });
        assert_eq!(view.message_spans[2].start, 12);
        assert_eq!(view.message_spans[2].end, view.input_ids.len());
        // Header (<|im_start|> assistant \n) unsupervised, rest supervised.
        let a = &view.assistant_mask[12..];
        assert_eq!(&a[..3], &[0, 0, 0], "{pieces:?}");
        assert!(a[3..].iter().all(|&m| m == 1), "{pieces:?} {a:?}");
        assert!(view.assistant_mask[..12].iter().all(|&m| m == 0));
        assert_eq!(pieces[15], "<think>");
        assert_eq!(pieces.last().unwrap(), "\n");
        let labels = view.labels();
        assert_eq!(labels[14], -100);
        assert_eq!(labels[15], i64::from(view.input_ids[15]));
    }

    #[test]
    fn consecutive_tool_messages_end_after_tool_response() {
        let tok = tiny_tokenizer();
        let t = sample_template();
        let msgs = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": {"x": 1}}},
                {"type": "function", "function": {"name": "f", "arguments": {"x": 2}}}]}),
            json!({"role": "tool", "content": "a"}),
            json!({"role": "tool", "content": "b"}),
            json!({"role": "user", "content": "ok"}),
        ];
        let view = render_view(&t, &tok, &msgs, None).unwrap();
        let spans = &view.message_spans;
        for w in spans.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert_eq!(spans.last().unwrap().end, view.input_ids.len());
        let last_of_first_tool = tok.id_to_token(view.input_ids[spans[2].end - 1]).unwrap();
        assert_eq!(last_of_first_tool, "</tool_response>");
    }
    /// Phi-style templates write eos_token once, after the last message: every prefix
    /// rendering ends with it where the whole continues, which is a closing, not a
    /// template that rewrites earlier turns; the spans end where the renderings part.
    #[test]
    fn closing_after_the_last_message_only_is_not_a_refusal() {
        let closes_once = "{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' }}\
            {%- if m.role == 'assistant' %}{%- generation %}{{- m.content + '<|im_end|>\\n' }}{%- endgeneration %}\
            {%- else %}{{- m.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}{{- '<tool_call>' }}";
        let t = ChatTemplate::new(closes_once).unwrap();
        let msgs = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": "yo"}),
            json!({"role": "user", "content": "ok"}),
            json!({"role": "assistant", "content": "a"}),
        ];
        let view = render_view(&t, &tiny_tokenizer(), &msgs, None).unwrap();
        let pieces: Vec<String> = view.input_ids.iter().map(|&id| tiny_tokenizer().id_to_token(id).unwrap()).collect();
        // each turn: <|im_start|> role \n text <|im_end|> \n = 6 tokens; the closing is the 25th
        assert_eq!(pieces.len(), 25, "{pieces:?}");
        let spans: Vec<(usize, usize)> = view.message_spans.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(spans, vec![(0, 6), (6, 12), (12, 18), (18, 25)]);
        assert_eq!(pieces[24], "<tool_call>");
        // the mask: each assistant's text, <|im_end|> and newline
        let supervised: Vec<usize> = (0..25).filter(|i| view.assistant_mask[*i] == 1).collect();
        assert_eq!(supervised, vec![9, 10, 11, 21, 22, 23]);
    }

    /// The thinking block for the last assistant turn only (the refusal tests below).
    const DROPS_THINKING: &str = "{%- for m in messages %}{%- if m.role == 'assistant' %}{{- '<|im_start|>assistant\\n' }}\
            {%- generation %}{%- if loop.last %}{{- '<think>\\n' + m.reasoning_content + '\\n</think>\\n\\n' }}{%- endif %}\
            {{- m.content + '<|im_end|>\\n' }}{%- endgeneration %}\
            {%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}";

    /// A template that writes the thinking block of the last assistant turn only is
    /// refused even when the last turn repeats an earlier one word for word, so that the
    /// prefix rendering's extra text is also how the whole ends: that text is assistant
    /// output, never a closing.
    #[test]
    fn rewritten_turn_that_matches_the_last_is_still_refused() {
        let t = ChatTemplate::new(DROPS_THINKING).unwrap();
        let msgs = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": "yo", "reasoning_content": "b"}),
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": "yo", "reasoning_content": "b"}),
        ];
        let err = render_view(&t, &tiny_tokenizer(), &msgs, None).unwrap_err().to_string();
        assert!(err.contains("not prefix-preserving: the rendering of messages[..=1]"), "{err}");
    }

    /// Like the stock Qwen3 template: the thinking block is written for the last
    /// assistant turn only, so an earlier turn renders differently once more follows.
    #[test]
    fn non_prefix_preserving_template_is_refused() {
        let t = ChatTemplate::new(DROPS_THINKING).unwrap();
        let msgs = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": "yo", "reasoning_content": "b"}),
            json!({"role": "user", "content": "ok"}),
            json!({"role": "assistant", "content": "a", "reasoning_content": "b"}),
        ];
        let err = render_view(&t, &tiny_tokenizer(), &msgs, None).unwrap_err().to_string();
        assert!(
            err.contains("not prefix-preserving: the rendering of messages[..=1] is not the start of the rendering of all 4 messages"),
            "{err}"
        );
        // the first difference: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" is 52 characters
        assert!(err.contains("from character 52: \"<think>"), "{err}");
        // the same conversation through the sample template (thinking always written) renders
        let view = render_view(&sample_template(), &tiny_tokenizer(), &msgs, None).unwrap();
        for w in view.message_spans.windows(2) {
            assert!(w[0].start <= w[0].end && w[0].end == w[1].start, "{:?}", view.message_spans);
        }
    }

    #[test]
    fn tool_run_that_does_not_close_as_its_prefixes_do_is_refused() {
        // a contrived template: a rendering ending on a tool message closes the turn
        // with "<|im_end|>\n" when it has 2 messages, else with "</tool_response>\n";
        // so the text messages[..=1] adds after its common part with the whole
        // conversation is not the run's closing, and where message 1 ends is unknown
        let odd = "{%- for m in messages %}{%- if m.role == 'tool' %}{{- '<tool_response>' + m.content }}\
            {%- if loop.last and messages|length == 2 %}{{- '<|im_end|>\\n' }}\
            {%- elif loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '</tool_response>\\n' }}{%- endif %}\
            {%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}";
        let t = ChatTemplate::new(odd).unwrap();
        let msgs = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "tool", "content": "a"}),
            json!({"role": "tool", "content": "b"}),
            json!({"role": "user", "content": "ok"}),
        ];
        let err = render_view(&t, &tiny_tokenizer(), &msgs, None).unwrap_err().to_string();
        // (the common part runs to the "<" that "<|im_end|>" and "<tool_response>" share)
        assert!(err.contains("not prefix-preserving: the rendering of messages[..=1] adds \"|im_end|>\\n\""), "{err}");
    }
    #[test]
    fn message_ending_inside_a_token_is_refused() {
        // message 0 renders "hi\n", message 1 "\nyo\n": the whole text has the token
        // "\n\n" across the boundary, so no token count ends message 0
        let t = ChatTemplate::new("{% for m in messages %}{{ m.content }}\n{% endfor %}").unwrap();
        let msgs = vec![json!({"role": "user", "content": "hi"}), json!({"role": "assistant", "content": "\nyo"})];
        let err = render_view(&t, &tiny_tokenizer(), &msgs, None).unwrap_err().to_string();
        assert!(err.contains("message 0 does not end at a token boundary"), "{err}");
    }
    fn check_against_reference(view: &RenderedView, reference: &serde_json::Value, tok: &tokenizers::Tokenizer) {
        let ref_ids: Vec<u32> = serde_json::from_value(reference["input_ids"].clone()).unwrap();
        let ref_mask: Vec<u8> = serde_json::from_value(reference["assistant_masks"].clone()).unwrap();
        let ref_labels: Vec<i64> = serde_json::from_value(reference["labels"].clone()).unwrap();
        if let Some(i) = (0..ref_ids.len().max(view.input_ids.len())).find(|&i| ref_ids.get(i) != view.input_ids.get(i))
        {
            let ctx = |ids: &[u32]| tok.decode(&ids[i.saturating_sub(5)..(i + 5).min(ids.len())], false).unwrap();
            panic!(
                "first id difference at token {i}: ours {:?} ({:?}) vs reference {:?} ({:?})",
                view.input_ids.get(i),
                ctx(&view.input_ids),
                ref_ids.get(i),
                ctx(&ref_ids)
            );
        }
        if let Some(i) = (0..ref_mask.len()).find(|&i| ref_mask[i] != view.assistant_mask[i]) {
            panic!(
                "first mask difference at token {i} ({:?}): ours {} vs reference {}",
                tok.decode(&ref_ids[i..=i], false).unwrap(),
                view.assistant_mask[i],
                ref_mask[i]
            );
        }
        assert_eq!(view.labels(), ref_labels);
        let ref_spans: Vec<MessageSpan> = reference["message_spans"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| MessageSpan {
                index: s["index"].as_u64().unwrap() as usize,
                role: s["role"].as_str().unwrap().to_owned(),
                start: s["start"].as_u64().unwrap() as usize,
                end: s["end"].as_u64().unwrap() as usize,
            })
            .collect();
        assert_eq!(view.message_spans, ref_spans);
        assert_eq!(view.input_ids.len() as u64, reference["n_tokens"].as_u64().unwrap());
        let supervised = view.assistant_mask.iter().filter(|&&m| m == 1).count() as u64;
        assert_eq!(supervised, reference["n_supervised"].as_u64().unwrap());
    }

    /// The stock Qwen3 chat template of the shared tokenizer_config.json: no
    /// generation block, and it drops `<think>` of turns before the last user query.
    #[test]
    #[ignore = "needs the shared data (../shared)"]
    fn stock_qwen3_template_marks_nothing_and_is_not_prefix_preserving() {
        let (tok, _) = load_reference(0);
        let path = shared_dir().join("data/tokenizers/qwen3/tokenizer_config.json");
        let config: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let stock = ChatTemplate::new(config["chat_template"].as_str().unwrap()).unwrap();
        assert!(!stock.marks_assistant_output());
        let msgs = vec![
            json!({"role": "user", "content": "Fix the bug."}),
            json!({"role": "assistant", "content": "Looking.", "reasoning_content": "Read the file first."}),
            json!({"role": "user", "content": "Done?"}),
            json!({"role": "assistant", "content": "Yes.", "reasoning_content": "Tests pass."}),
        ];
        let err = render_view(&stock, &tok, &msgs, None).unwrap_err().to_string();
        assert!(err.contains("not prefix-preserving: the rendering of messages[..=1]"), "{err}");
        // TRL's training variant renders the same conversation with verified spans
        let view = render_view(&shared_qwen3_training(), &tok, &msgs, None).unwrap();
        assert_eq!(view.message_spans.last().unwrap().end, view.input_ids.len());
    }
    #[test]
    #[ignore = "needs the shared data (../shared)"]
    fn reference_swe_gym_row0() {
        let (tok, reference) = load_reference(0);
        let raw = std::fs::read_to_string(shared_dir().join("data/sft/swe-gym-openhands-trajectories/sample_raw.json"))
            .unwrap();
        let rows: serde_json::Value = serde_json::from_str(&raw).unwrap();
        let row = &rows[0];
        assert_eq!(reference["instance_id"], row["instance_id"]);
        let messages: Vec<serde_json::Value> = row["messages"]
            .as_array()
            .unwrap()
            .iter()
            .cloned()
            .map(|mut m| {
                if let Some(calls) = m.get_mut("tool_calls").and_then(|c| c.as_array_mut()) {
                    for call in calls {
                        let args = &mut call["function"]["arguments"];
                        if let Some(s) = args.as_str() {
                            *args = serde_json::from_str(s).unwrap();
                        }
                    }
                }
                m
            })
            .collect();
        let view = render_view(&shared_qwen3_training(), &tok, &messages, Some(&row["tools"])).unwrap();
        check_against_reference(&view, &reference, &tok);
        assert_eq!(view.input_ids.len(), 14685);
        assert_eq!(view.assistant_mask.iter().filter(|&&m| m == 1).count(), 2978);
    }

    #[test]
    #[ignore = "needs the shared data (../shared)"]
    fn reference_gemini_pytest_7432() {
        let (tok, reference) = load_reference(1);
        let raw = std::fs::read_to_string(shared_dir().join(
            "data/sft/mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-7432/pytest-dev__pytest-7432.traj.json",
        ))
        .unwrap();
        let traj: serde_json::Value = serde_json::from_str(&raw).unwrap();
        let messages: Vec<serde_json::Value> = traj["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let mut out = serde_json::Map::new();
                out.insert("role".into(), m["role"].clone());
                out.insert("content".into(), m["content"].clone());
                if m["role"] == "assistant" {
                    let reasoning = m
                        .pointer("/extra/response/choices/0/message/reasoning")
                        .and_then(|r| r.as_str())
                        .unwrap_or("")
                        .trim();
                    out.insert("reasoning_content".into(), json!(reasoning));
                }
                serde_json::Value::Object(out)
            })
            .collect();
        let view = render_view(&shared_qwen3_training(), &tok, &messages, None).unwrap();
        check_against_reference(&view, &reference, &tok);
        assert_eq!(view.input_ids.len(), 21385);
        assert_eq!(view.assistant_mask.iter().filter(|&&m| m == 1).count(), 7388);
    }
}
