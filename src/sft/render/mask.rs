//! From one tokenization with offsets to token positions: the assistant mask from the
//! generation character ranges (as HF's `return_assistant_tokens_mask` builds it), and
//! the token counts of prefixes of the rendered text ([`SpanTokens`]) that message
//! spans are read from.

use anyhow::{Result, anyhow};

/// Token counts of prefixes of one rendered text, from its single tokenization.
///
/// Hugging Face tokenizers cut the text at added tokens (`<|im_end|>`, `<tool_call>`,
/// …) before anything else, and tokenize the pieces between them independently. So
/// when a prefix of the text and the whole text cut at the same added token `a`, the
/// prefix's tokens are the whole text's tokens up to `a` followed by the tokens of the
/// prefix's text from `a` on — a short stretch, tokenized here instead of the whole
/// prefix. The two cut at the same added token when every added-token match up to
/// `a` lies in text the two share: always for a prefix of the text; for a text that
/// only shares `common` bytes with it (a tool-to-tool prefix), when `a` starts at
/// least one longest added token before `common`.
///
/// That holds when added tokens are matched by content alone (none is `single_word`,
/// `lstrip` or `rstrip`, special tokens are not encoded as text) and the tokenizer
/// neither truncates nor pads; otherwise every method answers `None` (tokenize the
/// prefix whole). Only added tokens matched before normalization serve as `a`.
pub(super) struct SpanTokens<'a> {
    tokenizer: &'a tokenizers::Tokenizer,
    text: &'a str,
    ids: &'a [u32],
    /// Per token, (start, end) in bytes of `text`.
    offsets: &'a [(usize, usize)],
    /// Byte position of each character of `text`, and `text.len()` last.
    pub(super) char_bytes: Vec<usize>,
    /// Added tokens that can start a stretch: id -> content.
    anchors: std::collections::HashMap<u32, String>,
    /// Byte length of the longest added token.
    longest: usize,
    enabled: bool,
}

impl<'a> SpanTokens<'a> {
    pub(super) fn new(
        tokenizer: &'a tokenizers::Tokenizer,
        text: &'a str,
        ids: &'a [u32],
        offsets: &'a [(usize, usize)],
    ) -> Self {
        let added = tokenizer.get_added_tokens_decoder();
        let enabled = tokenizer.get_truncation().is_none()
            && tokenizer.get_padding().is_none()
            && !tokenizer.get_encode_special_tokens()
            && added.values().all(|t| !t.single_word && !t.lstrip && !t.rstrip)
            && ids.len() == offsets.len();
        let longest = added.values().map(|t| t.content.len()).max().unwrap_or(0);
        let anchors = added
            .into_iter()
            .filter(|(_, t)| !t.normalized && !t.content.is_empty())
            .map(|(id, t)| (id, t.content))
            .collect();
        let mut char_bytes: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        char_bytes.push(text.len());
        Self { tokenizer, text, ids, offsets, char_bytes, anchors, longest, enabled }
    }

    /// Byte range in `text` of token `t`.
    fn bytes_of(&self, t: usize) -> Option<(usize, usize)> {
        let (s, e) = self.offsets[t];
        (s <= e && e <= self.text.len()).then_some((s, e))
    }

    /// The tokens' offsets in characters, as `Tokenizer::encode_char_offsets` gives
    /// them: the start is the character holding the start byte; the end the character
    /// holding the end byte, or one past the character holding the last byte at the
    /// end of the text; offsets starting at the end of the text stay as they are.
    pub(super) fn char_offsets(&self) -> Vec<(usize, usize)> {
        let len = self.text.len();
        let char_of = |b: usize| self.char_bytes.partition_point(|&x| x <= b) - 1;
        self.offsets
            .iter()
            .map(|&(s, e)| {
                if s >= len {
                    (s, e)
                } else if e < len {
                    (char_of(s), char_of(e))
                } else {
                    (char_of(s), char_of(e - 1) + 1)
                }
            })
            .collect()
    }

    /// The last token before `before` that is an added token starting at or before
    /// byte `limit` (its text checked against the added token's content).
    fn anchor(&self, before: usize, limit: usize) -> Option<usize> {
        (0..before).rev().find(|&t| {
            self.anchors.get(&self.ids[t]).is_some_and(|content| {
                self.bytes_of(t).is_some_and(|(s, e)| s <= limit && self.text.get(s..e) == Some(content.as_str()))
            })
        })
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| anyhow!("tokenizing part of the rendered conversation: {e}"))?
            .get_ids()
            .to_vec())
    }

    /// The token count of `text[..len]` (`len` in bytes), when it can be read from the
    /// whole encoding: `len` falls between two tokens, and the stretch from the last
    /// added token before it tokenizes to the same tokens as there. `None` otherwise.
    pub(super) fn prefix_tokens(&self, len: usize) -> Result<Option<usize>> {
        if !self.enabled {
            return Ok(None);
        }
        if !self.text.is_char_boundary(len) {
            return Ok(None);
        }
        let t = self.offsets.partition_point(|o| o.1 <= len);
        if t < self.offsets.len() && self.offsets[t].0 < len {
            return Ok(None); // inside a token
        }
        let Some(a) = self.anchor(t, len) else { return Ok(None) };
        let Some((start, _)) = self.bytes_of(a) else { return Ok(None) };
        let stretch = self.encode(&self.text[start..len])?;
        Ok((stretch == self.ids[a..t]).then_some(t))
    }

    /// The length of the common token prefix of `other`'s tokenization and the whole
    /// encoding, where `other` is `text[..common]` followed by `tail`; `None` when no
    /// added token starts early enough to tokenize from.
    pub(super) fn common_tokens(&self, common: usize, tail: &str) -> Result<Option<usize>> {
        if !self.enabled {
            return Ok(None);
        }
        let Some(limit) = common.checked_sub(self.longest) else { return Ok(None) };
        let before = self.offsets.partition_point(|&(s, _)| s <= limit);
        let Some(a) = self.anchor(before, limit) else { return Ok(None) };
        let Some((start, _)) = self.bytes_of(a) else { return Ok(None) };
        let stretch = self.encode(&[&self.text[start..common], tail].concat())?;
        if stretch.first() != Some(&self.ids[a]) {
            return Ok(None);
        }
        Ok(Some(a + common_prefix_len(&stretch, &self.ids[a..])))
    }
}

/// HF's mask construction from generation character ranges and per-token
/// character offsets (see module doc), with its two fall-throughs closed.
///
/// Hugging Face (`apply_chat_template(..., return_assistant_tokens_mask=True)`) maps a
/// generation range's first character and last character to tokens with
/// `char_to_token`; when the last character is covered by no token (whitespace a
/// `Whitespace`/`WordLevel` pre-tokenizer drops, or an end token of 0) it marks every
/// token to the END of the sequence, and when the first character is covered by none
/// it stops marking altogether (later generations stay unsupervised). Both train on
/// what the template did not mark. Where both characters map to tokens this function
/// gives HF's mask exactly; for a range where either does not, it marks the tokens that
/// overlap the range (character offsets `s < end` and `e > start`) instead, and returns
/// that range's index in the second list, so `views build` can say so and record it.
pub(super) fn assistant_mask(
    offsets: &[(usize, usize)],
    n_chars: usize,
    spans: &[(usize, usize)],
) -> (Vec<u8>, Vec<usize>) {
    // char_to_token: first token whose offsets contain the char.
    let mut char_to_token: Vec<Option<usize>> = vec![None; n_chars];
    for (t, &(s, e)) in offsets.iter().enumerate() {
        for slot in char_to_token.iter_mut().take(e.min(n_chars)).skip(s) {
            if slot.is_none() {
                *slot = Some(t);
            }
        }
    }
    let lookup = |c: isize| -> Option<usize> {
        if c < 0 {
            return None;
        }
        char_to_token.get(c as usize).copied().flatten()
    };
    let n = offsets.len();
    let mut mask = vec![0u8; n];
    let mut fallthrough = Vec::new();
    for (i, &(start_char, end_char)) in spans.iter().enumerate() {
        let hf = match (lookup(start_char as isize), lookup(end_char as isize - 1)) {
            (Some(start), Some(end)) if end != 0 => Some((start, end + 1)),
            _ => None,
        };
        match hf {
            Some((start, end)) => {
                for m in mask.iter_mut().take(end).skip(start) {
                    *m = 1;
                }
            }
            None => {
                fallthrough.push(i);
                for (m, &(s, e)) in mask.iter_mut().zip(offsets) {
                    if s < end_char && e > start_char && e > s {
                        *m = 1;
                    }
                }
            }
        }
    }
    (mask, fallthrough)
}

/// Length of the longest common prefix of two token sequences.
pub(super) fn common_prefix_len(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
#[cfg(test)]
mod tests {
    use super::super::testutil::{load_reference, sample_template, tiny_tokenizer};
    use super::super::view::{common_prefix_bytes, render_view};
    use super::*;
    use serde_json::json;

    /// Checks [`SpanTokens`] against whole-prefix tokenization at every character
    /// boundary of `text`. A prefix count must be given wherever the prefix ends
    /// between two tokens, tokenized whole is the start of the whole encoding and an
    /// added token ends within it, and be that count. A common-prefix count for the prefix
    /// followed by `tail` must be the common token prefix of that text tokenized whole,
    /// and be given wherever an added token starts one longest added token before the
    /// divergence. Returns how many of each it gave.
    fn check_span_tokens(tok: &tokenizers::Tokenizer, text: &str, tail: &str) -> (usize, usize) {
        let enc = tok.encode(text, false).unwrap();
        let ids = enc.get_ids();
        let spans = SpanTokens::new(tok, text, ids, enc.get_offsets());
        assert_eq!(spans.char_offsets(), tok.encode_char_offsets(text, false).unwrap().get_offsets());
        let added: Vec<usize> = (0..ids.len()).filter(|&t| spans.anchors.contains_key(&ids[t])).collect();
        let first_end = added.first().map_or(usize::MAX, |&t| spans.bytes_of(t).unwrap().1);
        let first_start = added.first().map_or(usize::MAX, |&t| spans.bytes_of(t).unwrap().0);
        let (mut prefixes, mut commons) = (0, 0);
        for (len, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let whole = tok.encode_fast(&text[..len], false).unwrap().get_ids().to_vec();
            let starts_whole = whole.len() <= ids.len() && whole == ids[..whole.len()];
            match spans.prefix_tokens(len).unwrap() {
                Some(t) => {
                    assert_eq!(whole, ids[..t], "prefix of {len} bytes: {:?}", &text[..len]);
                    prefixes += 1;
                }
                None => {
                    // (a prefix ending inside a token may still tokenize to the start of the
                    // whole encoding, e.g. both as [UNK]: then the prefix is tokenized whole)
                    let boundary = enc.get_offsets().iter().all(|&(s, e)| e <= len || s >= len);
                    assert!(
                        !(starts_whole && boundary && len >= first_end),
                        "prefix of {len} bytes missed: {:?}",
                        &text[..len]
                    )
                }
            }
            let other = format!("{}{tail}", &text[..len]);
            let common = common_prefix_bytes(&other, text);
            match spans.common_tokens(common, &other[common..]).unwrap() {
                Some(n) => {
                    let whole = tok.encode_fast(other.as_str(), false).unwrap().get_ids().to_vec();
                    assert_eq!(n, common_prefix_len(&whole, ids), "{other:?}");
                    commons += 1;
                }
                None => assert!(common < first_start.saturating_add(spans.longest), "{other:?} missed"),
            }
        }
        (prefixes, commons)
    }

    #[test]
    fn mask_falls_through_nowhere_when_a_range_ends_on_uncovered_whitespace() {
        // tokens "a" (chars 0..1), "b" (2..3), "c" (4..5), "d" (6..7): the spaces between
        // them belong to no token. A generation over chars 2..4 ("b ") ends on an
        // uncovered space: HF would mark tokens 1..end (b, c, d); the overlap rule marks b.
        let offsets = [(0, 1), (2, 3), (4, 5), (6, 7)];
        let (mask, fallthrough) = assistant_mask(&offsets, 7, &[(2, 4)]);
        assert_eq!((mask, fallthrough), (vec![0, 1, 0, 0], vec![0]));
        // a range starting on an uncovered space (" c", chars 3..5): HF stops marking
        // (this and every later range); overlap marks c, and the later range is kept
        let (mask, fallthrough) = assistant_mask(&offsets, 7, &[(3, 5), (6, 7)]);
        assert_eq!((mask, fallthrough), (vec![0, 0, 1, 1], vec![0]));
        // both ends covered: HF's rule exactly, nothing reported
        let (mask, fallthrough) = assistant_mask(&offsets, 7, &[(2, 5)]);
        assert_eq!((mask, fallthrough), (vec![0, 1, 1, 0], vec![]));
    }

    #[test]
    fn span_tokens_agree_with_whole_prefix_tokenization() {
        let tok = tiny_tokenizer();
        let msgs = vec![
            json!({"role": "user", "content": "hi\n\nok é😀 \u{FDEF}"}),
            json!({"role": "assistant", "content": "yo", "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}),
            json!({"role": "tool", "content": "a"}),
            json!({"role": "tool", "content": "b b"}),
            json!({"role": "assistant", "content": "ok"}),
        ];
        let text = sample_template().render(&msgs, None, false).unwrap().text;
        let (prefixes, commons) = check_span_tokens(&tok, &text, "</tool_response><|im_end|>\n");
        // 314 bytes, 308 characters, 81 tokens, the first "<|im_start|>": every token
        // boundary but the start (81 of 82) is read from the offsets, and the tool-run
        // count is given at every one of the 309 positions but the first 16 (the longest
        // added token, "</tool_response>")
        assert_eq!(
            (text.len(), text.chars().count(), tok.encode_fast(text.as_str(), false).unwrap().len()),
            (314, 308, 81)
        );
        assert_eq!((prefixes, commons), (81, 309 - 16));
        // and the spans of render_view are the ones whole-prefix tokenization gives
        let view = render_view(&sample_template(), &tok, &msgs, None).unwrap();
        for span in &view.message_spans[..2] {
            let prefix = sample_template().render(&msgs[..=span.index], None, false).unwrap().text;
            assert_eq!(span.end, tok.encode_fast(prefix.as_str(), false).unwrap().len(), "{span:?}");
        }
    }
    /// The same check on real text: the first 3,000 characters of the reference view
    /// of pytest-dev__pytest-7432 (system prompt, task, first turns) with the Qwen3 tokenizer.
    #[test]
    #[ignore = "needs the shared data (../shared)"]
    fn span_tokens_agree_with_whole_prefix_tokenization_on_qwen3() {
        let (tok, reference) = load_reference(1);
        let ids: Vec<u32> = serde_json::from_value(reference["input_ids"].clone()).unwrap();
        let text = tok.decode(&ids, false).unwrap();
        let text: String = text.chars().take(3000).collect();
        let (prefixes, commons) = check_span_tokens(&tok, &text, "\n</tool_response><|im_end|>\n");
        assert!(prefixes > 100 && commons > 100, "{prefixes} {commons}");
    }
}
