//! zlib repetition ratio: a static long-repetition heuristic (SPEC §3.4).
//!
//! A body of text that compresses to less than a tenth of its size is mostly
//! repetition. The seed audit flags thinking bodies of at least 3,000 characters with
//! `len(zlib.compress(body)) / len(body) < 0.1`; this module computes the same ratio
//! with zlib's default level (6), as Python's `zlib.compress` does.

use flate2::{Compression, write::ZlibEncoder};
use std::io::Write;

/// Default minimum body length (characters) for a long-repetition candidate.
pub const DEFAULT_MIN_CHARS: usize = 3_000;
/// Default ratio below which a body is a long-repetition candidate.
pub const DEFAULT_MAX_RATIO: f64 = 0.1;

/// zlib-compressed size divided by raw size, both in bytes of UTF-8.
///
/// Uses zlib format (2-byte header, Adler-32 trailer) at level 6, so it equals
/// `len(zlib.compress(text.encode())) / len(text.encode())` in Python. Returns `None`
/// for empty text (the ratio is undefined).
pub fn zlib_ratio(text: &str) -> Option<f64> {
    if text.is_empty() {
        return None;
    }
    let mut encoder = ZlibEncoder::new(Vec::with_capacity(text.len() / 4 + 16), Compression::new(6));
    // Writing to a Vec cannot fail.
    encoder.write_all(text.as_bytes()).ok()?;
    let compressed = encoder.finish().ok()?;
    Some(compressed.len() as f64 / text.len() as f64)
}

/// True when `text` has at least `min_chars` characters and [`zlib_ratio`] is below
/// `max_ratio` (SPEC §3.4 static long-repetition candidate).
pub fn is_long_repetition(text: &str, min_chars: usize, max_ratio: f64) -> bool {
    text.chars().count() >= min_chars && zlib_ratio(text).is_some_and(|r| r < max_ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_of_known_inputs() {
        assert_eq!(zlib_ratio(""), None);
        // Python: len(zlib.compress(b"a")) == 9
        assert_eq!(zlib_ratio("a"), Some(9.0));
        // Python: len(zlib.compress(b"a" * 3000)) == 27 (miniz_oxide gives another size: zlib itself is linked)
        let ratio = zlib_ratio(&"a".repeat(3000)).unwrap();
        assert!((ratio - 27.0 / 3000.0).abs() < 1e-12, "{ratio}");
    }

    #[test]
    fn repetition_candidates() {
        let repeated = "Let me check the test again.\n".repeat(200);
        assert!(repeated.chars().count() >= DEFAULT_MIN_CHARS);
        assert!(is_long_repetition(&repeated, DEFAULT_MIN_CHARS, DEFAULT_MAX_RATIO));
        // short text never counts, however repetitive
        assert!(!is_long_repetition(&"ab".repeat(100), DEFAULT_MIN_CHARS, DEFAULT_MAX_RATIO));
        // varied text of the same length does not compress below 0.1
        // pseudo-random letters (a 64-bit LCG): about 0.6 after compression
        let mut state = 7u64;
        let varied: String = (0..3000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                char::from(b'a' + ((state >> 33) % 26) as u8)
            })
            .collect();
        assert!(!is_long_repetition(&varied, DEFAULT_MIN_CHARS, DEFAULT_MAX_RATIO));
    }
}
