//! Test helpers shared by the renderer's test modules: the sample template, a tiny
//! word-level tokenizer, and the reference views of the shared data.

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
    for w in [
        "system",
        "user",
        "assistant",
        "sys",
        "hi",
        "yo",
        "ok",
        "\n",
        "\n\n",
        "a",
        "b",
    ] {
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
    assert_eq!(
        crate::hash::sha256_hex(&bytes),
        "4c6e1cdccb191ce13a7af64dacdbf86c22df9d5456f7f14eac9cb8332e41be32"
    );
    ChatTemplate::new(std::str::from_utf8(&bytes).unwrap()).unwrap()
}

pub(super) fn load_reference(line: usize) -> (tokenizers::Tokenizer, serde_json::Value) {
    let dir = shared_dir().join("data");
    let tok_path = dir.join("tokenizers/qwen3/tokenizer.json");
    let views_path = dir.join("sft/reference-views-qwen3/views.jsonl");
    let tok = tokenizers::Tokenizer::from_file(&tok_path)
        .unwrap_or_else(|e| panic!("{}: {e}", tok_path.display()));
    let views = std::fs::read_to_string(&views_path)
        .unwrap_or_else(|e| panic!("{}: {e}", views_path.display()));
    let view: serde_json::Value =
        serde_json::from_str(views.lines().nth(line).unwrap()).unwrap();
    (tok, view)
}
