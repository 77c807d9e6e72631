//! The chat-template environment, configured like Hugging Face's sandboxed Jinja
//! environment (see the [module doc](super) for what is emulated), and the rewrite of
//! `{% generation %}` blocks into sentinel-wrapping filters whose ranges are recovered
//! after rendering.

use anyhow::{Context as _, Result, anyhow, bail};
use minijinja::value::{Kwargs, Rest, Serde, Value};
use minijinja::{Environment, Error, ErrorKind};

use super::pyjson::{PyJsonOptions, python_json_dumps};

/// Opening sentinel of a `{% generation %}` block in the raw rendering.
pub(super) const GEN_START: char = '\u{FDD0}';
/// Closing sentinel of a `{% generation %}` block in the raw rendering.
pub(super) const GEN_END: char = '\u{FDD1}';
/// Name of the filter standing in for `{% generation %}`.
const GEN_FILTER: &str = "__sphragis_generation";
const TEMPLATE_NAME: &str = "chat_template";

/// A compiled Hugging Face chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    /// Whether the source has at least one `{% generation %}` block.
    generation_blocks: usize,
    /// The instant `strftime_now` formats ([`ChatTemplate::set_now`]).
    now: chrono::NaiveDateTime,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("generation_blocks", &self.generation_blocks).finish_non_exhaustive()
    }
}

/// Text rendered by a template plus the character ranges (Unicode scalar
/// values, end exclusive) produced inside `{% generation %}` blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedText {
    pub text: String,
    pub generation_char_spans: Vec<(usize, usize)>,
}

impl ChatTemplate {
    /// Compile a chat template (Jinja source as found in
    /// `tokenizer_config.json`'s `chat_template` or a `.jinja` file).
    pub fn new(source: &str) -> Result<Self> {
        let (source, generation_blocks) = rewrite_generation_tags(source);
        let mut env = Environment::new();
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .keep_trailing_newline(false)
                .build()
                .map_err(|e| anyhow!("minijinja syntax config: {e}"))?,
        );
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson_filter);
        env.add_filter(GEN_FILTER, |body: String| -> String {
            let mut s = String::with_capacity(body.len() + 6);
            s.push(GEN_START);
            s.push_str(&body);
            s.push(GEN_END);
            s
        });
        env.add_function("raise_exception", |msg: String| -> Result<Value, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_template_owned(TEMPLATE_NAME, source).map_err(|e| anyhow!("chat template does not compile: {e:#}"))?;
        let mut template = Self { env, generation_blocks, now: chrono::Local::now().naive_local() };
        template.set_now(template.now);
        Ok(template)
    }

    /// Pins the instant `strftime_now(format)` formats, so renderings are reproducible
    /// (`views build --date`). Hugging Face's `strftime_now` is Python's
    /// `datetime.now().strftime(format)`, local time, read at every call; a new template
    /// reads the local clock once, when it is compiled. The format's directives are
    /// chrono's, which agree with Python's (glibc's) on the ones chat templates use
    /// (`%d %b %Y`, `%B`, `%A`, `%H:%M`, `%-d`, ...).
    ///
    /// Errors at rendering: a format with a directive chrono does not know.
    pub fn set_now(&mut self, now: chrono::NaiveDateTime) {
        self.now = now;
        self.env
            .add_function("strftime_now", move |format: String| -> Result<String, Error> { strftime(now, &format) });
    }

    /// The instant `strftime_now` formats (recorded in a view's provenance).
    pub fn now(&self) -> chrono::NaiveDateTime {
        self.now
    }

    /// Whether the template marks assistant output for the loss: it has at least one
    /// `{% generation %}` block (Hugging Face's `return_assistant_tokens_mask`
    /// convention). A template without one gives an all-zero mask for every
    /// conversation.
    pub fn marks_assistant_output(&self) -> bool {
        self.generation_blocks > 0
    }

    /// Make `value` visible to the template as a global named `name`
    /// (e.g. `eos_token`).
    pub fn add_global(&mut self, name: &str, value: serde_json::Value) {
        self.env.add_global(name.to_owned(), Value::from(Serde(value)));
    }

    /// Render `messages` (and `tools`) to text, recording the character
    /// ranges produced inside `{% generation %}` blocks.
    ///
    /// Errors: input text holding the reserved sentinels U+FDD0/U+FDD1; a template
    /// error (`raise_exception`, a failing filter); unbalanced generation blocks.
    pub fn render(
        &self,
        messages: &[serde_json::Value],
        tools: Option<&serde_json::Value>,
        add_generation_prompt: bool,
    ) -> Result<RenderedText> {
        let (values, tools_value) = self.prepare(messages, tools)?;
        self.render_values(&values, &tools_value, add_generation_prompt)
    }

    /// Checks the input for the reserved sentinels and converts it to template values
    /// once (messages one value each, so a prefix is a slice of them).
    pub(super) fn prepare(
        &self,
        messages: &[serde_json::Value],
        tools: Option<&serde_json::Value>,
    ) -> Result<(Vec<Value>, Value)> {
        for (i, m) in messages.iter().enumerate() {
            check_no_sentinels(m).with_context(|| format!("messages[{i}]"))?;
        }
        if let Some(t) = tools {
            check_no_sentinels(t).context("tools")?;
        }
        let tools_value = match tools {
            Some(t) if !t.is_null() => Value::from(Serde(t)),
            _ => Value::from(()),
        };
        Ok((messages.iter().map(|m| Value::from(Serde(m))).collect(), tools_value))
    }

    /// [`render`](Self::render) on values from [`prepare`](Self::prepare).
    pub(super) fn render_values(
        &self,
        messages: &[Value],
        tools: &Value,
        add_generation_prompt: bool,
    ) -> Result<RenderedText> {
        let tmpl = self.env.get_template(TEMPLATE_NAME)?;
        let raw = tmpl
            .render(context(messages, tools, add_generation_prompt))
            .map_err(|e| anyhow!("rendering chat template: {e:#}"))?;
        strip_generation_sentinels(&raw)
    }

    /// Renders `messages` (a prefix of those `full` was rendered from) and compares
    /// the text with `full` as it is written, without building it: only the part
    /// from the first difference on is kept. This is what the message spans need
    /// from each prefix rendering (one per message, so building each as a string
    /// made a view's renderings quadratic in memory traffic).
    ///
    /// Errors: as [`render`](Self::render).
    pub(super) fn render_prefix(&self, messages: &[Value], tools: &Value, full: &str) -> Result<PrefixRendering> {
        let tmpl = self.env.get_template(TEMPLATE_NAME)?;
        let mut against = Against {
            full: full.as_bytes(),
            pos: 0,
            diverged: false,
            tail: Vec::new(),
            pending: Vec::new(),
            depth: 0,
            tail_generated: false,
        };
        tmpl.render_captured_to(context(messages, tools, false), &mut against)
            .map_err(|e| anyhow!("rendering chat template: {e:#}"))?;
        against.finish(full)
    }
}

/// Python's `strftime(format)` of `now`, through chrono's directives.
///
/// Errors: a directive chrono does not know (e.g. `%Q`), named with the format.
fn strftime(now: chrono::NaiveDateTime, format: &str) -> Result<String, Error> {
    use chrono::format::{Item, StrftimeItems};
    let items: Vec<Item<'_>> = StrftimeItems::new(format).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return Err(Error::new(ErrorKind::InvalidOperation, format!("strftime_now: unsupported format {format:?}")));
    }
    let mut out = String::new();
    use std::fmt::Write as _;
    write!(out, "{}", now.format_with_items(items.into_iter()))
        .map_err(|_| Error::new(ErrorKind::InvalidOperation, format!("strftime_now: cannot format {format:?}")))?;
    Ok(out)
}

/// The variables a Hugging Face chat template is rendered with (`apply_chat_template`'s
/// `messages`, `tools`, `documents` and `add_generation_prompt`).
fn context(messages: &[Value], tools: &Value, add_generation_prompt: bool) -> Value {
    minijinja::context! {
        messages => Value::from(messages.to_vec()),
        tools => tools.clone(),
        documents => Value::from(()),
        add_generation_prompt => add_generation_prompt,
    }
}

/// How a rendering of a prefix of the messages compares with the rendering of all of
/// them (generation sentinels removed from both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PrefixRendering {
    /// Length of the prefix rendering, in bytes.
    pub len: usize,
    /// Bytes it shares with the full rendering from the start, on a character boundary.
    pub common: usize,
    /// The prefix rendering from byte `common` on.
    pub tail: String,
    /// Whether part of `tail` was written inside a generation block (assistant output):
    /// then the tail is never a closing the template adds after the last message.
    pub tail_generated: bool,
}

/// An `io::Write` sink that strips the generation sentinels from what a template
/// writes and compares the rest with the full rendering, keeping only what follows
/// the first difference.
struct Against<'a> {
    full: &'a [u8],
    /// Bytes matched so far.
    pos: usize,
    diverged: bool,
    /// What was written after the first difference.
    tail: Vec<u8>,
    /// The start of a sentinel cut by the end of a write (1 or 2 bytes).
    pending: Vec<u8>,
    depth: usize,
    /// Text after the first difference was written inside a generation block, or a
    /// block opened there.
    tail_generated: bool,
}

impl Against<'_> {
    fn emit(&mut self, seg: &[u8]) {
        if self.diverged {
            self.tail_generated |= self.depth > 0 && !seg.is_empty();
            self.tail.extend_from_slice(seg);
            return;
        }
        let rest = &self.full[self.pos..];
        if rest.starts_with(seg) {
            self.pos += seg.len();
            return;
        }
        let n = seg.iter().zip(rest).take_while(|(a, b)| a == b).count();
        self.pos += n;
        if n < seg.len() {
            self.diverged = true;
            self.tail_generated |= self.depth > 0;
            self.tail.extend_from_slice(&seg[n..]);
        }
    }

    fn process(&mut self, data: &[u8]) -> std::io::Result<()> {
        let start = GEN_START.encode_utf8(&mut [0; 3]).as_bytes().to_vec();
        let end = GEN_END.encode_utf8(&mut [0; 3]).as_bytes().to_vec();
        let mut copied = 0;
        for at in memchr::memchr_iter(0xEF, data) {
            if at < copied {
                continue;
            }
            let rest = &data[at..];
            if rest.len() < 3 && (start.starts_with(rest) || end.starts_with(rest)) {
                self.emit(&data[copied..at]);
                self.pending.extend_from_slice(rest);
                return Ok(());
            }
            let is_start = rest.starts_with(&start);
            if !is_start && !rest.starts_with(&end) {
                continue;
            }
            self.emit(&data[copied..at]);
            copied = at + 3;
            if is_start {
                self.tail_generated |= self.diverged;
                self.depth += 1;
            } else {
                self.depth =
                    self.depth.checked_sub(1).ok_or_else(|| std::io::Error::other("unbalanced {% endgeneration %} (or the template writes U+FDD0/U+FDD1 itself: they are reserved for generation marks)"))?;
            }
        }
        self.emit(&data[copied..]);
        Ok(())
    }

    fn finish(mut self, full: &str) -> Result<PrefixRendering> {
        let pending = std::mem::take(&mut self.pending);
        self.emit(&pending);
        if self.depth != 0 {
            bail!(
                "unterminated {{% generation %}} block (or the template writes U+FDD0/U+FDD1 itself: they are reserved for generation marks)"
            );
        }
        // the first differing byte lies inside the first differing character
        let mut common = self.pos;
        while !full.is_char_boundary(common) {
            common -= 1;
        }
        let mut tail = full.as_bytes()[common..self.pos].to_vec();
        tail.extend_from_slice(&self.tail);
        let tail = String::from_utf8(tail).map_err(|e| anyhow!("chat template wrote text that is not UTF-8: {e}"))?;
        Ok(PrefixRendering { len: common + tail.len(), common, tail, tail_generated: self.tail_generated })
    }
}

impl std::io::Write for Against<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            self.process(buf)?;
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(buf);
            self.process(&joined)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
fn check_no_sentinels(v: &serde_json::Value) -> Result<()> {
    match v {
        serde_json::Value::String(s) if s.contains([GEN_START, GEN_END]) => {
            bail!("input text contains U+FDD0/U+FDD1, reserved for generation markers");
        }
        serde_json::Value::Array(a) => a.iter().try_for_each(check_no_sentinels)?,
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                check_no_sentinels(&serde_json::Value::String(k.clone()))?;
                check_no_sentinels(v)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Remove generation sentinels, returning the clean text and the char ranges
/// they delimited. Nested blocks count once (outermost range).
///
/// Errors: an `{% endgeneration %}` without its opening, or an unclosed block.
fn strip_generation_sentinels(raw: &str) -> Result<RenderedText> {
    let mut text = String::with_capacity(raw.len());
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut open_at = 0usize;
    let mut n_chars = 0usize;
    let bytes = raw.as_bytes();
    let mut copied = 0usize;
    // both sentinels are EF B7 9x in UTF-8; any other EF-led character is copied on
    for at in memchr::memchr_iter(0xEF, bytes) {
        let is_start = bytes[at..].starts_with(GEN_START.encode_utf8(&mut [0; 3]).as_bytes());
        let is_end = !is_start && bytes[at..].starts_with(GEN_END.encode_utf8(&mut [0; 3]).as_bytes());
        if !is_start && !is_end {
            continue;
        }
        let segment = &raw[copied..at];
        text.push_str(segment);
        n_chars += segment.chars().count();
        copied = at + GEN_START.len_utf8();
        if is_start {
            if depth == 0 {
                open_at = n_chars;
            }
            depth += 1;
        } else {
            depth = depth.checked_sub(1).ok_or_else(|| anyhow!("unbalanced {{% endgeneration %}} (or the template writes U+FDD0/U+FDD1 itself: they are reserved for generation marks)"))?;
            if depth == 0 {
                spans.push((open_at, n_chars));
            }
        }
    }
    text.push_str(&raw[copied..]);
    if depth != 0 {
        bail!(
            "unterminated {{% generation %}} block (or the template writes U+FDD0/U+FDD1 itself: they are reserved for generation marks)"
        );
    }
    Ok(RenderedText { text, generation_char_spans: spans })
}

/// Rewrite `{% generation %}` / `{% endgeneration %}` (any `-`/`+`
/// whitespace modifiers) into `{% filter GEN_FILTER %}` / `{% endfilter %}`,
/// leaving comments untouched. Also returns how many `{% generation %}` tags it
/// rewrote.
fn rewrite_generation_tags(src: &str) -> (String, usize) {
    let mut out = String::with_capacity(src.len() + 64);
    let mut opened = 0;
    let mut rest = src;
    while let Some(pos) = rest.find('{') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        if rest.starts_with("{#") {
            let end = rest.find("#}").map_or(rest.len(), |e| e + 2);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if let Some((len, replacement)) = match_generation_tag(rest) {
            if replacement.contains(GEN_FILTER) {
                opened += 1;
            }
            out.push_str(&replacement);
            rest = &rest[len..];
            continue;
        }
        out.push('{');
        rest = &rest[1..];
    }
    out.push_str(rest);
    (out, opened)
}

/// If `s` starts with a generation tag, its byte length and replacement.
fn match_generation_tag(s: &str) -> Option<(usize, String)> {
    let body = s.strip_prefix("{%")?;
    let close = body.find("%}")?;
    let inner = &body[..close];
    let (lmod, inner) = match inner.chars().next() {
        Some(c @ ('-' | '+')) => (c.to_string(), &inner[1..]),
        _ => (String::new(), inner),
    };
    let (inner, rmod) = match inner.chars().last() {
        Some(c @ ('-' | '+')) => (&inner[..inner.len() - 1], c.to_string()),
        _ => (inner, String::new()),
    };
    let replacement = match inner.trim() {
        "generation" => format!("{{%{lmod} filter {GEN_FILTER} {rmod}%}}"),
        "endgeneration" => format!("{{%{lmod} endfilter {rmod}%}}"),
        _ => return None,
    };
    Some((2 + close + 2, replacement))
}

/// HF's `tojson(x, ensure_ascii=False, indent=None, separators=None,
/// sort_keys=False)`; positional arguments follow that order.
fn tojson_filter(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let bad = |msg: String| Error::new(ErrorKind::InvalidOperation, msg);
    let mut opts = PyJsonOptions::default();
    let names = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if args.len() > names.len() {
        return Err(bad("tojson takes at most 4 positional arguments".into()));
    }
    let mut given: Vec<(&str, Value)> = names.iter().copied().zip(args.iter().cloned()).collect();
    for name in names {
        if let Some(v) = kwargs.get::<Option<Value>>(name)? {
            given.push((name, v));
        }
    }
    kwargs.assert_all_used()?;
    for (name, v) in given {
        if v.is_none() || v.is_undefined() {
            continue;
        }
        match name {
            "ensure_ascii" => opts.ensure_ascii = v.is_true(),
            "sort_keys" => opts.sort_keys = v.is_true(),
            "indent" => {
                opts.indent = Some(if let Some(s) = v.as_str() {
                    s.to_owned()
                } else {
                    let n = i64::try_from(v.clone()).map_err(|_| bad(format!("tojson: bad indent {v}")))?;
                    " ".repeat(n.max(0) as usize)
                })
            }
            "separators" => {
                let parts: Vec<String> = v
                    .try_iter()?
                    .map(|p| p.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or_else(|| bad("tojson: separators must be strings".into()))?;
                let [i, k]: [String; 2] =
                    parts.try_into().map_err(|_| bad("tojson: separators must be a pair".into()))?;
                opts.separators = Some((i, k));
            }
            _ => unreachable!(),
        }
    }
    if value.is_undefined() {
        return Err(bad("tojson: value is undefined".into()));
    }
    let json = serde_json::to_value(&value).map_err(|e| bad(format!("tojson: value is not JSON-serializable: {e}")))?;
    Ok(Value::from(python_json_dumps(&json, &opts)))
}
#[cfg(test)]
mod tests {
    use super::super::testutil::{sample_template, tiny_tokenizer};
    use super::super::view::render_view;
    use super::*;
    use serde_json::json;

    /// The generation sentinels in the input would be read as generation marks; the
    /// refusal names the message (or the tools) that holds one.
    #[test]
    fn input_holding_a_generation_sentinel_is_refused_naming_where() {
        let t = sample_template();
        let msgs =
            vec![json!({"role": "user", "content": "hi"}), json!({"role": "assistant", "content": "a\u{fdd0}b"})];
        let err = format!("{:#}", t.render(&msgs, None, false).unwrap_err());
        assert_eq!(err, "messages[1]: input text contains U+FDD0/U+FDD1, reserved for generation markers");
        let tools = json!([{"type": "function", "function": {"name": "f\u{fdd1}"}}]);
        let err = format!("{:#}", t.render(&msgs[..1], Some(&tools), false).unwrap_err());
        assert_eq!(err, "tools: input text contains U+FDD0/U+FDD1, reserved for generation markers");
    }

    /// `render_prefix` against the independent method it replaced: render the prefix
    /// whole, strip the markers, compare the two strings.
    #[test]
    fn prefix_rendering_compared_as_written_equals_comparing_whole_renderings() {
        let t = sample_template();
        let msgs = vec![
            json!({"role": "system", "content": "sys"}),
            json!({"role": "user", "content": "h\u{e9}llo"}),
            json!({"role": "assistant", "content": "yo", "reasoning_content": "r"}),
            json!({"role": "user", "content": "ok"}),
        ];
        let (values, tools) = t.prepare(&msgs, None).unwrap();
        let full = t.render_values(&values, &tools, false).unwrap().text;
        for k in 0..msgs.len() {
            let whole = t.render_values(&values[..=k], &tools, false).unwrap().text;
            let got = t.render_prefix(&values[..=k], &tools, &full).unwrap();
            let common = super::super::view::common_prefix_bytes(&whole, &full);
            assert_eq!(
                got,
                PrefixRendering { len: whole.len(), common, tail: whole[common..].to_owned(), tail_generated: false },
                "k={k}"
            );
        }
        // the sample template is prefix-preserving: every prefix is the start of the whole
        let first = t.render_prefix(&values[..1], &tools, &full).unwrap();
        // "<|im_start|>" 12 + "system\n" 7 + "sys" 3 + "<|im_end|>" 10 + "\n" 1 = 33 bytes
        assert_eq!((first.len, first.common, first.tail.as_str()), (33, 33, ""));
    }

    /// A difference inside a multi-byte character is reported from the character's
    /// first byte, with the character in the tail; a sentinel cut between two writes is
    /// still removed.
    #[test]
    fn prefix_rendering_splits_on_characters_and_joins_cut_sentinels() {
        use std::io::Write as _;
        let full = "ab\u{e9}c"; // é is C3 A9
        let mut w = Against {
            full: full.as_bytes(),
            pos: 0,
            diverged: false,
            tail: vec![],
            pending: vec![],
            depth: 0,
            tail_generated: false,
        };
        let start = GEN_START.to_string();
        let end = GEN_END.to_string();
        w.write_all(b"a").unwrap();
        w.write_all(&start.as_bytes()[..2]).unwrap(); // sentinel cut after 2 of its 3 bytes
        w.write_all(&start.as_bytes()[2..]).unwrap();
        w.write_all("b\u{e8}".as_bytes()).unwrap(); // è is C3 A8: differs in its second byte
        w.write_all(end.as_bytes()).unwrap();
        let got = w.finish(full).unwrap();
        // the differing character was written inside the generation block
        assert_eq!(got, PrefixRendering { len: 4, common: 2, tail: "\u{e8}".into(), tail_generated: true });
        let mut w = Against {
            full: full.as_bytes(),
            pos: 0,
            diverged: false,
            tail: vec![],
            pending: vec![],
            depth: 0,
            tail_generated: false,
        };
        w.write_all(start.as_bytes()).unwrap();
        w.write_all(b"ab").unwrap();
        let err = w.finish(full).unwrap_err().to_string();
        assert!(err.contains("unterminated {% generation %} block"), "{err}");
    }

    fn render_text(src: &str, ctx_messages: serde_json::Value) -> String {
        let t = ChatTemplate::new(src).unwrap();
        let msgs: Vec<serde_json::Value> = ctx_messages.as_array().unwrap().clone();
        t.render(&msgs, None, false).unwrap().text
    }
    #[test]
    fn tojson_filter_in_template() {
        let src = "{% for m in messages %}{{ m | tojson }}|{{ m | tojson(indent=2) }}|{{ m | tojson(separators=(',', ':'), sort_keys=true) }}{% endfor %}";
        let out = render_text(src, json!([{"role": "user", "content": "ü <b>&"}]));
        assert_eq!(
            out,
            "{\"role\": \"user\", \"content\": \"ü <b>&\"}|{\n  \"role\": \"user\",\n  \"content\": \"ü <b>&\"\n}|{\"content\":\"ü <b>&\",\"role\":\"user\"}"
        );
    }

    /// HF's template variables besides the conversation: a special token given as a
    /// global renders where a Zephyr-style template writes it; one left unset is
    /// undefined (empty when printed, an error when added to text, as jinja2's default
    /// `Undefined`); `strftime_now` formats the pinned instant (a Llama-3.1-style date).
    #[test]
    fn special_tokens_undefined_and_strftime_now() {
        let zephyr = "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}{{ eos_token }}\n{% endfor %}";
        let mut t = ChatTemplate::new(zephyr).unwrap();
        let msgs = [json!({"role": "user", "content": "hi"}), json!({"role": "assistant", "content": "yo"})];
        assert_eq!(t.render(&msgs, None, false).unwrap().text, "<|user|>\nhi\n<|assistant|>\nyo\n");
        t.add_global("eos_token", json!("</s>"));
        assert_eq!(t.render(&msgs, None, false).unwrap().text, "<|user|>\nhi</s>\n<|assistant|>\nyo</s>\n");
        let added = ChatTemplate::new("{{ messages[0].content + eos_token }}").unwrap();
        assert!(added.render(&msgs, None, false).is_err(), "text + undefined is an error, as in jinja2");
        let mut dated =
            ChatTemplate::new("Today Date: {{ strftime_now('%d %b %Y') }} ({{ strftime_now('%-d %B') }})").unwrap();
        dated.set_now(chrono::NaiveDate::from_ymd_opt(2026, 7, 4).unwrap().and_hms_opt(0, 0, 0).unwrap());
        assert_eq!(dated.render(&[], None, false).unwrap().text, "Today Date: 04 Jul 2026 (4 July)");
        let bad = ChatTemplate::new("{{ strftime_now('%Q') }}").unwrap();
        let err = format!("{:#}", bad.render(&[], None, false).unwrap_err());
        assert!(err.contains("strftime_now: unsupported format"), "{err}");
    }

    #[test]
    fn raise_exception_and_string_methods() {
        let t = ChatTemplate::new("{{ raise_exception('nope') }}").unwrap();
        let err = t.render(&[], None, false).unwrap_err();
        assert!(format!("{err:#}").contains("nope"), "{err:#}");
        let out = render_text(
            "{% for m in messages %}{{ m.content.split('</think>')[-1].lstrip('\\n') }}|{{ m.content.startswith('<think>') }}|{{ '\\n\\nx\\n'.strip('\\n') }}{% endfor %}",
            json!([{"role": "assistant", "content": "<think>r</think>\n\nanswer"}]),
        );
        assert_eq!(out, "answer|True|x");
    }

    /// Expected values produced with Python Jinja2 3.1.6 (trim_blocks,
    /// lstrip_blocks) and a `{% generation %}` extension built like HF's.
    #[test]
    fn generation_tags_keep_jinja2_whitespace_semantics() {
        for (src, text, spans) in [
            (
                "{#- keep {% generation %} here -#}\nA\n   {%- generation %}\n   X\n   {%- endgeneration %}\nB",
                "A   XB",
                vec![(1, 5)],
            ),
            ("A\n   {%- generation %}\n   X\n   {% endgeneration -%}\n   B", "A   X\nB", vec![(1, 6)]),
            ("A\n   {% generation %}\n   X\n   {% endgeneration %}\n   B", "A\n   X\n   B", vec![(2, 7)]),
            ("A\n   {%+ generation %}\n   X\n   {% endgeneration +%}\n   B", "A\n      X\n\n   B", vec![(5, 10)]),
            ("{% generation %}{% endgeneration %}é{%generation-%} ü {%-endgeneration%}", "éü", vec![(0, 0), (1, 2)]),
        ] {
            let r = ChatTemplate::new(src).unwrap().render(&[], None, false).unwrap();
            assert_eq!(r.text, text, "{src:?}");
            assert_eq!(r.generation_char_spans, spans, "{src:?}");
        }
    }

    #[test]
    fn sentinels_are_stripped_and_other_characters_with_their_lead_byte_kept() {
        // U+FDEF and U+FF03 start with the same UTF-8 byte (EF) as the sentinels
        let raw = format!("a\u{FDEF}{GEN_START}b\u{FF03}{GEN_START}c{GEN_END}{GEN_END}d{GEN_START}{GEN_END}");
        let r = strip_generation_sentinels(&raw).unwrap();
        assert_eq!(r.text, "a\u{FDEF}b\u{FF03}cd");
        assert_eq!(r.generation_char_spans, vec![(2, 5), (6, 6)]);
        assert!(strip_generation_sentinels(&format!("a{GEN_END}")).unwrap_err().to_string().contains("unbalanced"));
        assert!(strip_generation_sentinels(&format!("{GEN_START}a")).unwrap_err().to_string().contains("unterminated"));
    }

    #[test]
    fn python_style_printing_of_constants() {
        // Jinja2 prints Python reprs: True / None, and undefined as "".
        let out = render_text("{{ true }}|{{ none }}|{{ missing }}|{{ messages[0].nope }}", json!([{}]));
        assert_eq!(out, "True|None||");
    }
    #[test]
    fn template_without_generation_block_marks_no_assistant_output() {
        let plain =
            "{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}";
        assert!(!ChatTemplate::new(plain).unwrap().marks_assistant_output());
        // a generation tag inside a comment marks nothing either
        let commented = format!("{{# {{% generation %}} #}}{plain}");
        assert!(!ChatTemplate::new(&commented).unwrap().marks_assistant_output());
        assert!(sample_template().marks_assistant_output());
        // what such a template gives: an all-zero mask
        let msgs = vec![json!({"role": "user", "content": "hi"}), json!({"role": "assistant", "content": "yo"})];
        let view = render_view(&ChatTemplate::new(plain).unwrap(), &tiny_tokenizer(), &msgs, None).unwrap();
        assert!(view.assistant_mask.iter().all(|&m| m == 0));
    }
}
