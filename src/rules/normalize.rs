//! Per-line whitespace normalization and the `target_in_comment` report rule.
//!
//! SPEC §2.2 ("Not filtered, only reported"): each line trimmed, inner runs of
//! whitespace collapsed to one space, empty lines dropped, lines joined by `\n`.
//! The same normalization builds the default dedup key (normalized hunk plus
//! normalized target, SPEC §2.2 rule 5).

/// Normalizes `text` per line.
///
/// Lines are split on `\r\n`, `\r` and `\n`; in each line every run of Unicode
/// whitespace becomes one space and leading/trailing whitespace is removed; lines left
/// empty are dropped; the rest are joined with `\n` (no trailing newline). Idempotent.
/// Returns the empty string for text with no visible character.
pub fn normalize_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split(['\n', '\r']) {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(first);
        for word in words {
            out.push(' ');
            out.push_str(word);
        }
    }
    out
}

/// The default minimum length, in characters (Unicode scalar values), of a normalized
/// target for `target_in_comment` (SPEC §2.2).
pub const DEFAULT_MIN_TARGET_CHARS: usize = 20;

/// True when the normalized `target` is at least `min_chars` characters long and occurs
/// verbatim inside the normalized `comment` (SPEC §2.2 `target_in_comment`).
///
/// Both sides go through [`normalize_lines`]; length counts Unicode scalar values
/// after normalization. An empty target (a deletion) is never found.
pub fn target_in_comment(target: &str, comment: &str, min_chars: usize) -> bool {
    let target = normalize_lines(target);
    if target.is_empty() || target.chars().count() < min_chars {
        return false;
    }
    normalize_lines(comment).contains(&target)
}

/// The default dedup key text: normalized hunk, a unit separator (U+001F), normalized
/// target. Refine stores its SHA-256, not the text.
pub fn dedup_key(hunk: &str, target: &str) -> String {
    let mut key = normalize_lines(hunk);
    key.push('\u{1f}');
    key.push_str(&normalize_lines(target));
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_cases() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("   \n\t\n", ""),
            ("  a   b  ", "a b"),
            ("a\r\n\r\n  b\tc\r", "a\nb c"),
            ("\tint x =  1;\n\n    return x;\n", "int x = 1;\nreturn x;"),
            ("é\u{00a0}ü", "é ü"), // no-break space is whitespace
            ("a\rb", "a\nb"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize_lines(input), *expected, "on {input:?}");
        }
    }

    #[test]
    fn normalization_is_idempotent() {
        for text in ["  a \r\n b  c\n\n", "x", "\t\ty = f( a ,b );\r\n}\n", "ü  ö\u{2003}ä"] {
            let once = normalize_lines(text);
            assert_eq!(normalize_lines(&once), once);
        }
    }

    #[test]
    fn target_in_comment_cases() {
        let target = "    return INVALID_LIST_SIZE;\n";
        // re-indented paste of the target inside prose
        assert!(target_in_comment(target, "Maybe:\n\treturn   INVALID_LIST_SIZE;\nthanks", 20));
        // CRLF comment
        assert!(target_in_comment(target, "Maybe:\r\n return INVALID_LIST_SIZE;\r\n", 20));
        // not verbatim
        assert!(!target_in_comment(target, "return INVALID_SIZE;", 20));
        // 25 characters after normalization: below a threshold of 26
        assert_eq!(normalize_lines(target).chars().count(), 25);
        assert!(!target_in_comment(target, "return INVALID_LIST_SIZE;", 26));
        assert!(target_in_comment(target, "return INVALID_LIST_SIZE;", 25));
        // short targets never count at the default threshold
        assert!(!target_in_comment("x = 1;", "x = 1;", DEFAULT_MIN_TARGET_CHARS));
        // deletion (empty target)
        assert!(!target_in_comment("", "anything", 0));
        // multi-line target must match across the joined lines
        let two = "a = compute(x);\n\n  b = compute(y);";
        assert!(target_in_comment(two, "like\n a = compute(x);\n b = compute(y);\n", 20));
        assert!(!target_in_comment(two, "a = compute(x); b = compute(y);", 20));
        // characters, not bytes: 10 two-byte chars are 10 characters
        assert!(!target_in_comment("éééééééééé", "éééééééééé", 11));
        assert!(target_in_comment("éééééééééé", "éééééééééé", 10));
    }

    #[test]
    fn dedup_key_ignores_layout() {
        assert_eq!(dedup_key("  a\r\n b", "c "), dedup_key("a\nb\n", "\tc"));
        assert_ne!(dedup_key("a", "b c"), dedup_key("a b", "c"));
    }
}
