//! Suggested-edit and applied-fix detection in review comments.
//!
//! Three selectors answer "does this comment carry a reviewer-written edit?":
//!
//! * [`opens_suggestion_fence`] — the strict rule that refine removes by (SPEC §2.2
//!   rule 3): some line of the comment, after CR/LF normalization, is exactly a
//!   ```` ```suggestion ```` fence, with only spaces/tabs before it and only whitespace
//!   after it.
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

/// The text of Gerrit's applied-fix reply (`handleAppliedFix()`), capital F, full stop.
pub const FIX_APPLIED: &str = "Fix applied.";

static STRICT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t]*```suggestion[ \t]*$").expect("strict fence regex"));

static LOOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?mi)^[ \t]*`{3,}[ \t]*suggestion").expect("loose fence regex"));

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

/// The strict suggested-edit rule (SPEC §2.2 rule 3).
///
/// True when, after [`normalize_newlines`], some line consists of optional spaces or
/// tabs, exactly three backticks, the word `suggestion` in lower case, and optional
/// trailing spaces or tabs — nothing else. So `"```suggestion\r\n"` (GitHub's storage)
/// and an indented fence are found; prose on the same line, `"``` suggestion"`,
/// four backticks, `"```suggestions"` and `"```Suggestion"` are not. An empty suggestion
/// (the fence immediately closed) still counts: it asks to delete the lines.
pub fn opens_suggestion_fence(comment: &str) -> bool {
    STRICT.is_match(&normalize_newlines(comment))
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
/// After [`normalize_newlines`]: a line that starts (after spaces or tabs) with three or
/// more backticks, optional spaces or tabs, then `suggestion` in any case; anything may
/// follow on the line.
pub fn loose_suggestion_fence(comment: &str) -> bool {
    LOOSE.is_match(&normalize_newlines(comment))
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
        ("    ```suggestion\n    foo();\n    ```", true, true, true),
        ("\t```suggestion  \nfoo();\n```", true, false, true),
        ("Use the constant here:\n```suggestion\nreturn LIMIT;\n```", true, true, true),
        // empty suggestion: delete these lines
        ("```suggestion\n```", true, true, true),
        // fence at end of text with no newline after it
        ("see below\n```suggestion", true, false, true),
        // prose before the fence on the same line
        ("try this ```suggestion\nfoo();\n```", false, true, false),
        ("``` suggestion\nfoo();\n```", false, false, true),
        ("````suggestion\nfoo();\n````", false, true, true),
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
