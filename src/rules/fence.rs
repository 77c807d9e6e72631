//! Suggested-edit and applied-fix detection in review comments.
//!
//! Three selectors answer "does this comment carry a reviewer-written edit?":
//!
//! * [`opens_suggestion_fence`] — the strict rule that refine removes by (SPEC §2.2
//!   rule 3, rule version [`SUGGESTION_RULE`]): after CR/LF normalization, the comment
//!   holds a fenced code block in the CommonMark sense (read by `pulldown-cmark`, so a
//!   fence opens with at most three spaces of indentation, a line indented four spaces
//!   or a tab is an indented code block, and a fence line inside a longer outer fence is
//!   that block's text) that is not inside a blockquote (`> ```suggestion` quotes
//!   someone's suggestion), whose opening line is three or more backticks or three or
//!   more tildes (GitHub renders ````` ````suggestion ````` and `~~~suggestion`), then the
//!   info string `suggestion` or GitLab's range form `suggestion:-N+M`, then only white
//!   space (any Unicode white space).
//! * [`gerrit_has_user_suggestion`] — Gerrit's own test, reported beside the strict
//!   rule and never used to remove: `message.includes("```suggestion\n")` in
//!   `polygerrit-ui/app/utils/comment-util.ts` (`hasUserSuggestion`), a plain
//!   substring test on the raw text, so a GitHub-style `"```suggestion\r\n"` is *not*
//!   found (see `shared/data/review/GERRIT_FACTS.md`).
//! * [`loose_suggestion_fence`] — a looser case-insensitive pattern, also report-only.
//!
//! [`is_fix_applied`] is SPEC §2.2 rule 4: Gerrit's one-click reply after a suggestion
//! is applied (`handleAppliedFix()` in `gr-comment.ts` posts exactly `Fix applied.`).

use regex::Regex;
use std::sync::LazyLock;

/// The 14-character string Gerrit searches for: `USER_SUGGESTION_START_PATTERN`.
pub const GERRIT_SUGGESTION_START: &str = "```suggestion\n";

/// The version of the strict suggestion rule that [`opens_suggestion_fence`] implements,
/// stored with every corpus version (`corpus_versions.suggestion_rule`) so a version's
/// verdicts say which rule made them.
///
/// * `fence-1` (sphragis 0.1): exactly three backticks, `suggestion`, spaces or tabs after.
/// * `fence-2` (issue 10): three or more backticks or tildes, GitLab's
///   `suggestion:-N+M`, any Unicode white space after; blockquotes excluded. Every
///   comment `fence-1` selects, `fence-2` selects too.
/// * `fence-3` (issue 28): the fence is a CommonMark fenced code block. A line indented
///   four spaces or a tab (an indented code block) and a fence line inside an outer,
///   longer fence (that block's text) no longer count; a fence inside a list item
///   (`- ```suggestion`) now does. Apart from list items, every comment `fence-3`
///   selects, `fence-2` selects too.
pub const SUGGESTION_RULE: &str = "fence-3";

/// The text of Gerrit's applied-fix reply (`handleAppliedFix()`), capital F, full stop.
pub const FIX_APPLIED: &str = "Fix applied.";

/// The opening line of a suggestion fence, from its first fence character to the line end.
static OPENING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A(?:`{3,}|~{3,})suggestion(?::-[0-9]+\+[0-9]+)?[\s&&[^\n]]*(?:\n|\z)").expect("opening regex")
});

static LOOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?mi)^[ \t>]*(?:`{3,}|~{3,})[ \t]*suggestion").expect("loose fence regex"));

/// Replaces every `\r\n` and every lone `\r` with `\n`.
///
/// Borrowed when the text has no `\r` (the common case), owned otherwise.
pub fn normalize_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\r') {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// The strict suggested-edit rule (SPEC §2.2 rule 3), rule version [`SUGGESTION_RULE`].
///
/// True when, after [`normalize_newlines`], the comment parsed as CommonMark (no
/// extensions) holds a fenced code block outside every blockquote whose opening line —
/// from its first fence character to the line end — is a fence of three or more
/// backticks or three or more tildes, the info string `suggestion` in lower case or
/// GitLab's `suggestion:-N+M` (N lines above, M below, both decimal), and optional
/// trailing white space — any Unicode `White_Space` character (no-break space,
/// ideographic space, ...; a CR became a line end) — nothing else.
///
/// So `"```suggestion\r\n"` (GitHub's storage), ````` ````suggestion ````` (a
/// suggestion that itself holds a fence), `~~~suggestion`, `"```suggestion:-0+2"`, a
/// fence indented up to three spaces and one inside a list item are found. Not found: a
/// line indented four spaces or a tab (an indented code block, CommonMark §4.4), a
/// ```` ```suggestion ```` line inside an outer ```` ```` ```` fence (its text, §4.5), prose on
/// the same line, a blockquote (`"> ```suggestion"`), `"``` suggestion"`,
/// `"```suggestions"`, `"```Suggestion"`, a mixed fence (`"``~suggestion"`) and a
/// malformed range (`"```suggestion:+2"`). An empty suggestion (the fence immediately
/// closed, or never closed) still counts: it asks to delete the lines.
pub fn opens_suggestion_fence(comment: &str) -> bool {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    if !comment.contains("suggestion") {
        return false;
    }
    let text = normalize_newlines(comment);
    let mut quotes = 0usize;
    for (event, range) in Parser::new(&text).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_)) => quotes += 1,
            Event::End(TagEnd::BlockQuote(_)) => quotes = quotes.saturating_sub(1),
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_)))
                if quotes == 0 && OPENING.is_match(&text[range.start..]) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Gerrit's own selector: the raw message contains [`GERRIT_SUGGESTION_START`].
///
/// No newline normalization, no anchoring, case-sensitive — true to
/// `hasUserSuggestion` in Gerrit's `comment-util.ts`. It therefore misses CRLF fences
/// and accepts a fence with prose before it on the same line or with four backticks.
pub fn gerrit_has_user_suggestion(comment: &str) -> bool {
    comment.contains(GERRIT_SUGGESTION_START)
}

/// A looser, case-insensitive fence pattern, reported beside the strict rule.
///
/// After [`normalize_newlines`]: a line that starts (after spaces, tabs or blockquote
/// markers `>`) with three or more backticks or tildes, optional spaces or tabs, then
/// `suggestion` in any case; anything may follow on the line. Every comment the strict
/// rule selects, this selects too (a strict fence inside a list item, `- ```suggestion`,
/// is selected by the strict rule itself); a quoted suggestion, an indented code block
/// and a fence line inside another fence are selected here only.
pub fn loose_suggestion_fence(comment: &str) -> bool {
    LOOSE.is_match(&normalize_newlines(comment)) || opens_suggestion_fence(comment)
}

/// SPEC §2.2 rule 4: the whole comment is `Fix applied.` once surrounding whitespace
/// (spaces, tabs, CR, LF) is trimmed. Extra text before or after makes it false.
pub fn is_fix_applied(comment: &str) -> bool {
    comment.trim() == FIX_APPLIED
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (comment, strict, gerrit substring, loose)
    const CASES: &[(&str, bool, bool, bool)] = &[
        ("```suggestion\nfoo();\n```", true, true, true),
        // GitHub stores CRLF: strict normalizes and finds it, Gerrit's substring does not.
        ("```suggestion\r\nfoo();\r\n```", true, false, true),
        // lone CR line endings (old Mac style)
        ("```suggestion\rfoo();\r```", true, false, true),
        // four spaces or a tab: an indented code block (CommonMark §4.4), not a fence
        ("    ```suggestion\n    foo();\n    ```", false, true, true),
        ("\t```suggestion  \nfoo();\n```", false, false, true),
        ("   ```suggestion  \nfoo();\n```", true, false, true),
        ("Use the constant here:\n```suggestion\nreturn LIMIT;\n```", true, true, true),
        // empty suggestion: delete these lines
        ("```suggestion\n```", true, true, true),
        // fence at end of text with no newline after it
        ("see below\n```suggestion", true, false, true),
        // prose before the fence on the same line
        ("try this ```suggestion\nfoo();\n```", false, true, false),
        ("``` suggestion\nfoo();\n```", false, false, true),
        // four backticks: GitHub renders it (fence-2); Gerrit's substring is inside it
        ("````suggestion\nfoo();\n````", true, true, true),
        ("~~~suggestion\nfoo();\n~~~", true, false, true),
        ("```suggestion:-0+2\nfoo();\n```", true, false, true),
        ("> ```suggestion\n> foo();\n> ```", false, true, true),
        ("```java\nfoo();\n```", false, false, false),
        ("use ```Optional``` here", false, false, false),
        ("```Suggestion\nfoo();\n```", false, false, true),
        ("```SUGGESTION\r\nfoo();\r\n```", false, false, true),
        ("```suggestions\nfoo();\n```", false, false, true),
        ("```suggestion java\nfoo();\n```", false, false, true),
        ("no fence at all", false, false, false),
        ("", false, false, false),
        ("ünïcödé → ```suggestion\nfoo\n```", false, true, false),
        ("ünïcödé\n```suggestion\nfoo\n```", true, true, true),
    ];

    #[test]
    fn selectors_on_edge_cases() {
        for (comment, strict, gerrit, loose) in CASES {
            assert_eq!(opens_suggestion_fence(comment), *strict, "strict on {comment:?}");
            assert_eq!(gerrit_has_user_suggestion(comment), *gerrit, "gerrit on {comment:?}");
            assert_eq!(loose_suggestion_fence(comment), *loose, "loose on {comment:?}");
        }
    }

    /// One suggestion whose body is `body`, opened by `open`, closed by `close`, with `nl`
    /// line ends, after a line of prose.
    fn suggestion(open: &str, body: &str, close: &str, nl: &str) -> String {
        format!("Please use this:{nl}{open}{nl}{body}{nl}{close}{nl}")
    }

    #[test]
    fn strict_fence_of_three_or_more_backticks() {
        // GitHub: a suggestion that itself holds a ``` fence is opened with four backticks
        let body = "```rust\nlet x = 1;\n```";
        for nl in ["\n", "\r\n"] {
            assert!(opens_suggestion_fence(&suggestion("````suggestion", body, "````", nl)), "{nl:?}");
            assert!(opens_suggestion_fence(&suggestion("`````suggestion", "x", "`````", nl)), "{nl:?}");
            assert!(opens_suggestion_fence(&suggestion("```suggestion", "x", "```", nl)), "{nl:?}");
            assert!(!opens_suggestion_fence(&suggestion("``suggestion", "x", "``", nl)), "two backticks: {nl:?}");
        }
        // Gerrit's substring sees the four-backtick fence (its last three backticks) only with LF
        assert!(gerrit_has_user_suggestion(&suggestion("````suggestion", body, "````", "\n")));
        assert!(!gerrit_has_user_suggestion(&suggestion("````suggestion", body, "````", "\r\n")));
    }

    #[test]
    fn strict_fence_of_three_or_more_tildes() {
        for nl in ["\n", "\r\n", "\r"] {
            assert!(opens_suggestion_fence(&suggestion("~~~suggestion", "x", "~~~", nl)), "{nl:?}");
            assert!(opens_suggestion_fence(&suggestion("~~~~suggestion", "~~~\nx\n~~~", "~~~~", nl)), "{nl:?}");
            assert!(!opens_suggestion_fence(&suggestion("~~suggestion", "x", "~~", nl)), "two tildes: {nl:?}");
            assert!(!opens_suggestion_fence(&suggestion("``~suggestion", "x", "``~", nl)), "mixed: {nl:?}");
            assert!(loose_suggestion_fence(&suggestion("~~~suggestion", "x", "~~~", nl)), "{nl:?}");
            assert!(!gerrit_has_user_suggestion(&suggestion("~~~suggestion", "x", "~~~", nl)), "{nl:?}");
        }
    }

    #[test]
    fn strict_fence_indented() {
        assert!(opens_suggestion_fence("  ```suggestion\n  x\n  ```"));
        assert!(opens_suggestion_fence("   ~~~suggestion\r\n   x\r\n   ~~~"));
        // indentation is spaces or tabs; a no-break space before the fence is text
        assert!(!opens_suggestion_fence("\u{a0}```suggestion\nx\n```"));
    }

    /// The fault of issue 28: a reviewer's plain prose with an indented code block was
    /// removed as a suggested edit. CommonMark §4.4: four spaces (or a tab, which counts
    /// as four) make an indented code block, whose text is literal; §4.5: a fence opens
    /// with at most three spaces of indentation.
    #[test]
    fn indented_code_is_not_a_fence() {
        for comment in [
            "    ```suggestion\n    x\n    ```",
            "    ~~~suggestion\r\n    x\r\n    ~~~",
            "\t````suggestion\nx\n````",
            " \t```suggestion\nx\n```",
            "Quoting the docs:\n\n    ```suggestion\n    return x;\n    ```\n",
            // an indented block cannot interrupt a paragraph: this is the paragraph's text
            "See below\n    ```suggestion\n    x",
        ] {
            assert!(!opens_suggestion_fence(comment), "{comment:?}");
            assert!(loose_suggestion_fence(comment), "the loose selector shows it: {comment:?}");
        }
        // the same suggestion with three spaces is a fence
        assert!(opens_suggestion_fence("   ```suggestion\n   x\n   ```"));
        // inside a list item, the indentation is counted from the item's content
        assert!(opens_suggestion_fence("1. Rename it:\n\n    ```suggestion\n    x\n    ```"));
        assert!(opens_suggestion_fence("- ```suggestion\n  x\n  ```"));
    }

    /// CommonMark §4.5: inside a fenced block, a line of fewer fence characters (or of the
    /// other fence character) does not close it, so a ```` ```suggestion ```` line inside an
    /// outer ```` ```` ```` or `~~~` fence is that block's text, not a suggestion.
    #[test]
    fn nested_fence_is_text() {
        for comment in [
            "````\n```suggestion\nx\n```\n````",
            "~~~markdown\n```suggestion\nx\n```\n~~~",
            "Write it like this:\n`````md\n````suggestion\nx\n````\n`````\n",
            // an unclosed outer fence runs to the end of the comment
            "```\nexample:\n```suggestion",
        ] {
            assert!(!opens_suggestion_fence(comment), "{comment:?}");
            assert!(loose_suggestion_fence(comment), "{comment:?}");
        }
        // after the outer fence closes, a suggestion fence is one again
        assert!(opens_suggestion_fence("````\n```suggestion\n```\n````\n```suggestion\ny\n```"));
        // a suggestion that holds a fence (GitHub's four-backtick form) is a suggestion
        assert!(opens_suggestion_fence("````suggestion\n```rust\nlet x = 1;\n```\n````"));
        // a closing line needs at least as many fence characters: ``` does not close ````
        assert!(!opens_suggestion_fence("````\n```\n```suggestion\n````"));
    }

    #[test]
    fn strict_fence_gitlab_line_range() {
        for open in ["```suggestion:-0+0", "```suggestion:-0+2", "```suggestion:-12+3", "~~~suggestion:-1+1"] {
            assert!(opens_suggestion_fence(&suggestion(open, "x", "```", "\n")), "{open}");
            assert!(opens_suggestion_fence(&suggestion(open, "x", "```", "\r\n")), "{open} CRLF");
        }
        for open in
            ["```suggestion:+2", "```suggestion:-0", "```suggestion:-a+2", "```suggestion:", "```suggestion:-0+2x"]
        {
            assert!(!opens_suggestion_fence(&suggestion(open, "x", "```", "\n")), "{open}");
        }
    }

    #[test]
    fn strict_fence_trailing_unicode_whitespace() {
        // CR (GitHub's CRLF), no-break space, ideographic space, em space, tab, NEL
        for tail in ["\r", " \r", "\u{a0}", "\u{3000}", "\u{2003}", "\t \u{a0}", "\u{85}"] {
            let comment = format!("```suggestion{tail}\nx\n```");
            assert!(opens_suggestion_fence(&comment), "{comment:?}");
            assert!(opens_suggestion_fence(&format!("```suggestion:-0+1{tail}\nx\n```")), "{tail:?}");
        }
        // a visible character after the white space is not a suggestion fence
        assert!(!opens_suggestion_fence("```suggestion\u{a0}x\nx\n```"));
        // Gerrit's substring needs the LF right after the word
        assert!(!gerrit_has_user_suggestion("```suggestion\u{a0}\nx\n```"));
    }

    #[test]
    fn strict_fence_in_blockquote_is_not_a_suggestion() {
        for quoted in
            ["> ```suggestion\n> x\n> ```", ">```suggestion\nx", "> > ~~~suggestion\r\n> > x", "  > ````suggestion\nx"]
        {
            assert!(!opens_suggestion_fence(quoted), "{quoted:?}");
            assert!(loose_suggestion_fence(quoted), "the loose selector shows it: {quoted:?}");
        }
        // the reply quotes the suggestion and makes one of its own: that one counts
        assert!(opens_suggestion_fence("> ```suggestion\n> x\n> ```\nbetter:\n```suggestion\ny\n```"));
    }

    #[test]
    fn fix_applied_whole_message_only() {
        assert!(is_fix_applied("Fix applied."));
        assert!(is_fix_applied("  Fix applied.\r\n"));
        assert!(is_fix_applied("\n\tFix applied. \n"));
        assert!(!is_fix_applied("Fix applied. Thanks!"));
        assert!(!is_fix_applied("Thanks. Fix applied."));
        assert!(!is_fix_applied("fix applied."));
        assert!(!is_fix_applied("Fix applied"));
        assert!(!is_fix_applied("> Fix applied.\n\nPlease fix."));
        assert!(!is_fix_applied(""));
    }

    #[test]
    fn newline_normalization() {
        assert_eq!(normalize_newlines("a\r\nb\rc\n"), "a\nb\nc\n");
        assert!(matches!(normalize_newlines("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
