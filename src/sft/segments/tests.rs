//! Tests of the segment cutter: hand-made ids and spans cut into header, block, text and
//! end-of-turn segments.

use super::*;
use std::path::Path;

fn segmenter(file: &str) -> Segmenter {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft").join(file);
    let t = crate::ingest::read::TokenizerFile::read(&path).unwrap();
    Segmenter::new(t.tokenizer, t.sha256)
}

fn span(ordinal: i32, role: &str, start: i64, end: i64) -> Span {
    Span { ordinal, msg_index: ordinal, role: role.into(), start, end }
}

/// `(span ordinal or -1 outside, segment, start, end)`.
fn cut(seg: &Segmenter, ids: &[i64], spans: &[Span]) -> Vec<(i32, String, i64, i64)> {
    let mut cutter = seg.cutter();
    cutter
        .cut(ids, spans)
        .into_iter()
        .map(|g| (g.span.map_or(-1, |k| spans[k].ordinal), g.segment.to_string(), g.start, g.end))
        .collect()
}

/// The conversation of `data-samples/sft/segment_views.jsonl` in
/// `data-samples/sft/chatml_tokenizer.json` (Qwen3's ChatML layout): system, user,
/// an assistant turn with thinking and a tool call, a tool response, an assistant
/// turn with an empty thinking block and the text `Done`, then `<|endoftext|>`.
const TEXT: &str = "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nFix the bug<|im_end|>\n\
    <|im_start|>assistant\n<think>\nI will look\n</think>\n\n<tool_call>\n{\"name\":\"ls\"}\n</tool_call><|im_end|>\n\
    <|im_start|>user\n<tool_response>\na.py\n</tool_response><|im_end|>\n\
    <|im_start|>assistant\n<think>\n\n</think>\n\nDone<|im_end|>\n<|endoftext|>";

const IDS: [i64; 72] = [
    27, 4, 1, 7, 3, 8, 3, 9, 10, 28, 1, // system [0, 11)
    27, 5, 1, 11, 3, 12, 3, 13, 28, 1, // user [11, 21)
    27, 6, 1, 29, 1, 14, 3, 15, 3, 16, 1, 30, 2, 31, 1, 17, 19, 22, 19, 20, 19, 23, 19, 18, 1, 32, 28,
    1, // assistant [21, 49)
    27, 5, 1, 33, 1, 24, 10, 25, 1, 34, 28, 1, // tool [49, 61)
    27, 6, 1, 29, 2, 30, 2, 26, 28, 1,  // assistant [61, 71)
    35, // <|endoftext|>, in no span
];

fn spans() -> Vec<Span> {
    vec![
        span(0, "system", 0, 11),
        span(1, "user", 11, 21),
        span(2, "assistant", 21, 49),
        span(3, "tool", 49, 61),
        span(4, "assistant", 61, 71),
    ]
}

#[test]
fn hand_made_ids_are_the_tokenizers_encoding() {
    let seg = segmenter("chatml_tokenizer.json");
    let encoded = seg.tokenizer.encode(TEXT, false).unwrap();
    let ids: Vec<i64> = encoded.get_ids().iter().map(|i| *i as i64).collect();
    assert_eq!(ids, IDS);
}

#[test]
fn chatml_messages_cut_into_header_blocks_text_and_end_of_turn() {
    let seg = segmenter("chatml_tokenizer.json");
    let s = |o: i32, name: &str, a: i64, b: i64| (o, name.to_string(), a, b);
    assert_eq!(
        cut(&seg, &IDS, &spans()),
        vec![
            s(0, "header", 0, 3),       // <|im_start|> system \n
            s(0, "content", 3, 9),      // You are helpful.
            s(0, "end_of_turn", 9, 11), // <|im_end|> \n
            s(1, "header", 11, 14),
            s(1, "content", 14, 19),
            s(1, "end_of_turn", 19, 21),
            s(2, "header", 21, 24),      // <|im_start|> assistant \n
            s(2, "thinking", 24, 34),    // <think> \n I will look \n </think> \n\n
            s(2, "tool_call", 34, 47),   // <tool_call> \n {"name":"ls"} \n </tool_call>
            s(2, "end_of_turn", 47, 49), // <|im_end|> \n
            s(3, "header", 49, 52),      // <|im_start|> user \n
            s(3, "content", 52, 59),     // <tool_response> \n a.py \n </tool_response>
            s(3, "end_of_turn", 59, 61),
            s(4, "header", 61, 64),
            s(4, "thinking", 64, 68), // <think> \n\n </think> \n\n
            s(4, "text", 68, 69),     // Done
            s(4, "end_of_turn", 69, 71),
            s(-1, "outside", 71, 72), // <|endoftext|>
        ]
    );
    let mut cutter = seg.cutter();
    cutter.cut(&IDS, &spans());
    let rules = cutter.rules();
    assert_eq!(rules["derivation"], "segments-1");
    assert_eq!(rules["turn_delimiters"], serde_json::json!(["<|endoftext|>", "<|im_end|>", "<|im_start|>"]));
    assert_eq!(rules["blocks"][0], serde_json::json!({"open": "<think>", "close": "</think>", "segment": "thinking"}));
    assert_eq!(rules["blocks"].as_array().unwrap().len(), 3); // think, tool_call, tool_response
    assert_eq!(rules["headers_opened_by"], serde_json::json!({"<|im_start|>": 5}));
    assert_eq!(rules["turns_closed_by"], serde_json::json!({"<|im_end|>": 5}));
}

/// Qwen3 renders consecutive tool messages inside one user turn: the first has a
/// header and no end of turn, the second no header and the end of turn.
#[test]
fn consecutive_tool_messages_share_one_turn() {
    let seg = segmenter("chatml_tokenizer.json");
    // <|im_start|> user \n <tool_response> \n a \n </tool_response> | \n <tool_response> \n py \n </tool_response> <|im_end|> \n
    let ids = [27, 5, 1, 33, 1, 24, 1, 34, 1, 33, 1, 25, 1, 34, 28, 1];
    let spans = [span(0, "tool", 0, 8), span(1, "tool", 8, 16)];
    let got: Vec<_> = cut(&seg, &ids, &spans).into_iter().map(|(o, n, a, b)| format!("{o} {n} {a}..{b}")).collect();
    assert_eq!(got, ["0 header 0..3", "0 content 3..8", "1 content 8..14", "1 end_of_turn 14..16"]);
}

#[test]
fn unclosed_blocks_broken_spans_and_gaps() {
    let seg = segmenter("chatml_tokenizer.json");
    // an assistant turn cut off inside its thinking block: no end of turn, the
    // block runs to the span end
    let ids = [27, 6, 1, 29, 1, 14, 3, 15];
    let got = cut(&seg, &ids, &[span(0, "assistant", 0, 8)]);
    assert_eq!(got, vec![(0, "header".into(), 0, 3), (0, "thinking".into(), 3, 8)]);
    // a stray </think> is text; text before a block stays text; whitespace before
    // the end of turn is text, not end of turn
    let ids = [27, 6, 1, 26, 30, 26, 1, 31, 23, 32, 1, 28, 1];
    let got = cut(&seg, &ids, &[span(0, "assistant", 0, 13)]);
    assert_eq!(
        got,
        vec![
            (0, "header".into(), 0, 3),
            (0, "text".into(), 3, 7),
            (0, "tool_call".into(), 7, 11),
            (0, "end_of_turn".into(), 11, 13)
        ]
    );
    // spans past the end are clamped, empty and inverted spans get nothing,
    // uncovered positions are outside; overlapping spans are each cut
    let ids = [27, 5, 1, 26, 28, 1, 26, 26];
    let spans = [span(0, "user", 0, 6), span(1, "user", 5, 3), span(2, "assistant", 7, 99), span(3, "user", 4, 6)];
    let got = cut(&seg, &ids, &spans);
    assert_eq!(
        got,
        vec![
            (0, "header".into(), 0, 3),
            (0, "content".into(), 3, 4),
            (0, "end_of_turn".into(), 4, 6),
            // any turn delimiter opening a span starts a header, even <|im_end|>: a
            // misplaced span is the contract's to report
            (3, "header".into(), 4, 6),
            (-1, "outside".into(), 6, 7),
            (2, "text".into(), 7, 8),
        ]
    );
    // no spans: everything is outside; no ids: nothing
    assert_eq!(cut(&seg, &ids, &[]), vec![(-1, "outside".into(), 0, 8)]);
    assert!(cut(&seg, &[], &spans).is_empty());
    // ids outside the vocabulary (a contract failure) are plain text
    let got = cut(&seg, &[27, 6, 1, 9999, -5, 28, 1], &[span(0, "assistant", 0, 7)]);
    assert_eq!(got, vec![(0, "header".into(), 0, 3), (0, "text".into(), 3, 5), (0, "end_of_turn".into(), 5, 7)]);
}

/// A header with no newline within the limit is the leading run of delimiters.
#[test]
fn header_without_newline_is_the_leading_delimiters() {
    let seg = segmenter("chatml_tokenizer.json");
    let mut ids = vec![27, 35, 6];
    ids.extend([26; 20]);
    ids.extend([28, 1]);
    let got = cut(&seg, &ids, &[span(0, "assistant", 0, ids.len() as i64)]);
    assert_eq!(got, vec![(0, "header".into(), 0, 2), (0, "text".into(), 2, 23), (0, "end_of_turn".into(), 23, 25)]);
}

/// A tokenizer with no added tokens (the 20-token WordLevel sample) tells no header,
/// block or end of turn: each span is one text or content segment, and the rules
/// record says no delimiter was found.
#[test]
fn tokenizer_without_added_tokens_gives_whole_spans() {
    let seg = segmenter("tokenizer.json");
    let got = cut(&seg, &[1, 2, 3, 4, 5], &[span(0, "user", 0, 2), span(1, "assistant", 2, 5)]);
    assert_eq!(got, vec![(0, "content".into(), 0, 2), (1, "text".into(), 2, 5)]);
    let cutter = seg.cutter();
    assert_eq!(cutter.rules()["turn_delimiters"], serde_json::json!([]));
    assert_eq!(cutter.rules()["blocks"], serde_json::json!([]));
}
