//! Render agent trajectories (OpenAI-style chat messages) into SFT training
//! "views": token ids, an assistant loss mask and per-message token spans,
//! reproducing Hugging Face `transformers`'
//! `apply_chat_template(..., tokenize=True, return_dict=True,
//! return_assistant_tokens_mask=True, add_generation_prompt=False)`
//! token for token.
//!
//! # How Hugging Face is emulated
//!
//! * Templates run on [`minijinja`] configured like HF's sandboxed Jinja
//!   environment: `trim_blocks` and `lstrip_blocks` on, no trailing newline
//!   kept, no auto-escaping, lenient undefined values, loop controls
//!   (`break`/`continue`), Python string methods (`startswith`, `split`,
//!   `strip('\n')`, …) through `minijinja-contrib`'s pycompat callback.
//! * `tojson` is replaced by HF's filter, i.e. Python's
//!   `json.dumps(x, ensure_ascii=False, indent=None, separators=None,
//!   sort_keys=False)`: separators `", "` / `": "` (`","` / `": "` with an
//!   indent), non-ASCII kept, no HTML escaping, key insertion order, Python
//!   float `repr`. minijinja's own `tojson` differs on all of these.
//! * `raise_exception(msg)` is provided as a global.
//! * `{% generation %}…{% endgeneration %}` (HF's `AssistantTracker`
//!   extension) is rewritten into a `{% filter %}` block with the same
//!   whitespace modifiers, whose filter wraps the rendered body in two
//!   Unicode noncharacters (U+FDD0 / U+FDD1). After rendering those
//!   sentinels are stripped while the character ranges between them are
//!   recorded — the same `(start_char, end_char)` pairs HF records.
//! * The rendered text is tokenized without special-token insertion
//!   (`add_special_tokens=False`, as `apply_chat_template` does). The mask
//!   follows HF exactly: for each range, `start = char_to_token(start_char)`,
//!   `end = char_to_token(end_char - 1)`; tokens `start..=end` are set to 1
//!   (to the end of the sequence when `end` is `None` or 0; the loop stops at
//!   the first range whose start maps to no token).
//! * Message spans: for message `k`, `end` = token count of the rendering of
//!   `messages[..=k]`, `start` = previous `end`. When message `k` is a tool
//!   message followed by another tool message (the template only closes the
//!   turn after the last one), `end` is the longest common token prefix of
//!   that rendering with the full rendering.
//!
//! # Spans are verified, never assumed
//!
//! Prefix renderings give exact spans only when the template is
//! *prefix-preserving*: rendering `messages[..=k]` must produce the start of
//! the full rendering. Templates that rewrite earlier turns depending on what
//! follows (the stock Qwen3 template drops the `<think>` block of assistant
//! turns before the last user query) are not, and [`render_view`] refuses
//! them with an error naming the message and the first differing character:
//! every `end` is checked to be a prefix of the full text at a token boundary
//! of the full tokenization, and the text a tool-to-tool prefix adds after the
//! common part (the turn closing) must be the text the run's last message ends
//! with.
//! A template that writes a closing once, after the last message (Phi-style
//! templates end with `eos_token`), is not rewriting earlier turns: a prefix
//! rendering that differs from the whole only by text outside every generation
//! block that the whole ends with ends its message where the two part. Spans
//! that would end before they start are refused too.
//!
//! * HF also passes the tokenizer's special tokens (`bos_token`, `eos_token`,
//!   `pad_token`, `unk_token`, … as `tokenizer.special_tokens_map` holds them) to
//!   every template: `views build` reads them beside the tokenizer
//!   ([`crate::sft::build::special_tokens`]) and gives each to the template with
//!   [`ChatTemplate::add_global`]; a token the tokenizer leaves unset stays
//!   undefined, as in HF (printed as empty text; `+` with text is an error).
//! * `strftime_now(format)` is HF's `datetime.now().strftime(format)`: the local
//!   clock when the template is compiled, or the instant
//!   [`ChatTemplate::set_now`] pins (`views build --date`).
//!
//! # Templates are the user's input
//!
//! No template is bundled: as in Hugging Face, the chat template comes with
//! the tokenizer (`tokenizer_config.json`'s `chat_template`) or from a file
//! the user names (see [`crate::sft::build::template_source`]). A template
//! with no `{% generation %}` block marks no assistant output
//! ([`ChatTemplate::marks_assistant_output`]); `views build` refuses it.
//! `data-samples/sft/chatml_training.jinja` is a small ChatML template written
//! for the samples and tests; the Qwen3 training template the reference views
//! were made with is kept as data in the team's shared folder.
//!
//! # Files
//!
//! * [`template`]: the HF-compatible template environment ([`ChatTemplate`]) and the
//!   `{% generation %}` rewrite and sentinels;
//! * [`pyjson`]: Python's `json.dumps`, behind the templates' `tojson`;
//! * [`mask`]: generation character ranges to a token mask, and token counts of
//!   prefixes, through the token offsets of one tokenization;
//! * [`view`]: the assembly of one view ([`render_view`]): rendering, tokenization,
//!   message spans and their verification.

pub mod mask;
pub mod pyjson;
pub mod template;
pub mod view;

pub use pyjson::{PyJsonOptions, python_float_repr, python_json_dumps};
pub use template::{ChatTemplate, RenderedText};
pub use view::{MessageSpan, RenderedView, render_view};

/// Test helpers shared by the renderer's test modules: the sample template, a tiny
/// word-level tokenizer, and the reference views of the shared data.
#[cfg(test)]
mod testutil {
    use super::template::ChatTemplate;
    use serde_json::json;

    /// The sample ChatML training template of `data-samples/` (written for sphragis).
    pub(super) fn sample_template() -> ChatTemplate {
        ChatTemplate::new(include_str!("../../../data-samples/sft/chatml_training.jinja")).unwrap()
    }
    /// Word-level tokenizer that splits on the ChatML specials, newlines and
    /// everything else char by char; enough to test mask/span bookkeeping.
    pub(super) fn tiny_tokenizer() -> tokenizers::Tokenizer {
        let specials = [
            "<|im_start|>",
            "<|im_end|>",
            "<think>",
            "</think>",
            "<tool_call>",
            "</tool_call>",
            "<tool_response>",
            "</tool_response>",
        ];
        let mut vocab = serde_json::Map::new();
        let mut id = 0u32;
        let mut add = |t: String, vocab: &mut serde_json::Map<String, serde_json::Value>| {
            if !vocab.contains_key(&t) {
                vocab.insert(t, json!(id));
                id += 1;
            }
        };
        add("[UNK]".into(), &mut vocab);
        for w in ["system", "user", "assistant", "sys", "hi", "yo", "ok", "\n", "\n\n", "a", "b"] {
            add(w.into(), &mut vocab);
        }
        for c in (0x20u8..0x7f).map(|b| (b as char).to_string()) {
            add(c, &mut vocab);
        }
        let n = vocab.len();
        let added: Vec<serde_json::Value> = specials
            .iter()
            .enumerate()
            .map(|(i, s)| {
                json!({"id": n + i, "content": s, "single_word": false, "lstrip": false,
                                 "rstrip": false, "normalized": false, "special": true})
            })
            .collect();
        for (i, s) in specials.iter().enumerate() {
            vocab.insert((*s).into(), json!(n + i));
        }
        let spec = json!({
            "version": "1.0",
            "truncation": null, "padding": null,
            "added_tokens": added,
            "normalizer": null,
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\n+|[a-z]+|."},
                              "behavior": "Isolated", "invert": false},
            "post_processor": null, "decoder": null,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
        });
        tokenizers::Tokenizer::from_bytes(serde_json::to_vec(&spec).unwrap()).unwrap()
    }

    // -----------------------------------------------------------------------
    // Reference views (HF transformers 5.24.0 + tokenizers 0.23.3).
    //
    // The data is read from the team's shared folder, located by the env var
    // SPHRAGIS_SHARED (default ../shared beside the repository): the Qwen3 tokenizer
    // and TRL's Qwen3 training template (data/tokenizers/qwen3/, see its PROVENANCE.md),
    // the reference at data/sft/reference-views-qwen3/views.jsonl and the two source
    // trajectories named in its PROVENANCE.md. The tests are #[ignore]d (CI runs them
    // with --include-ignored) and fail when the data is missing.
    // -----------------------------------------------------------------------

    pub(super) fn shared_dir() -> std::path::PathBuf {
        std::env::var_os("SPHRAGIS_SHARED")
            .map(Into::into)
            .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
    }

    /// TRL's Qwen3 training template, as kept in the shared data (SHA-256 checked:
    /// the revision that reproduces the reference views).
    pub(super) fn shared_qwen3_training() -> ChatTemplate {
        let path = shared_dir().join("data/tokenizers/qwen3/qwen3_training.jinja");
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(crate::hash::sha256_hex(&bytes), "4c6e1cdccb191ce13a7af64dacdbf86c22df9d5456f7f14eac9cb8332e41be32");
        ChatTemplate::new(std::str::from_utf8(&bytes).unwrap()).unwrap()
    }

    pub(super) fn load_reference(line: usize) -> (tokenizers::Tokenizer, serde_json::Value) {
        let dir = shared_dir().join("data");
        let tok_path = dir.join("tokenizers/qwen3/tokenizer.json");
        let views_path = dir.join("sft/reference-views-qwen3/views.jsonl");
        let tok = tokenizers::Tokenizer::from_file(&tok_path).unwrap_or_else(|e| panic!("{}: {e}", tok_path.display()));
        let views = std::fs::read_to_string(&views_path).unwrap_or_else(|e| panic!("{}: {e}", views_path.display()));
        let view: serde_json::Value = serde_json::from_str(views.lines().nth(line).unwrap()).unwrap();
        (tok, view)
    }
}
