//! The purpose-built reader for JSON arrays of integers on the SFT load path (issue 29):
//! token ids, loss masks, labels and position lists, millions of values a view.
//!
//! It accepts only what it can prove is a JSON array of integers that fit the target
//! type: `[`, then zero or more integers separated by commas, then `]`, with JSON white
//! space (space, tab, LF, CR) anywhere between tokens, an integer being `-`? then `0` or a
//! non-zero digit and more digits (RFC 8259 §6, no fraction, no exponent). Every other
//! byte sequence — a fraction, an exponent, a leading zero or `+`, a value that does not
//! fit, a string, a nested array, a trailing comma, anything after the `]` — returns
//! `None`, and the caller hands the text to serde_json, so values and error messages are
//! exactly serde_json's. The differential tests (`tests` below, and the view-line tests
//! of `sft::views`, which read whole lines both ways) hold that whatever this reader
//! accepts, serde_json reads as the same values, and that a view line gives the same view
//! or the same error either way.

/// An integer type an array is read into (`i32` token ids, `i8` mask values).
pub trait ArrayInt: Copy {
    /// The value as `Self`, `None` when it does not fit.
    fn from_i64(v: i64) -> Option<Self>;
}

impl ArrayInt for i32 {
    fn from_i64(v: i64) -> Option<i32> {
        i32::try_from(v).ok()
    }
}

impl ArrayInt for i8 {
    fn from_i64(v: i64) -> Option<i8> {
        i8::try_from(v).ok()
    }
}

impl ArrayInt for i64 {
    fn from_i64(v: i64) -> Option<i64> {
        Some(v)
    }
}

/// Reads `text` (the whole text of one JSON value) as an array of integers that fit `T`,
/// appending them to `out` (cleared first); `false` when the text is anything else, with
/// `out` in an unspecified state.
pub fn read_into<T: ArrayInt>(text: &str, out: &mut Vec<T>) -> bool {
    out.clear();
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return false;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return skip_ws(b, i + 1) == b.len();
    }
    loop {
        let Some((v, next)) = integer(b, i) else { return false };
        let Some(v) = T::from_i64(v) else { return false };
        out.push(v);
        i = skip_ws(b, next);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => return skip_ws(b, i + 1) == b.len(),
            _ => return false,
        }
    }
}

/// [`read_into`] into a new vector.
pub fn read<T: ArrayInt>(text: &str) -> Option<Vec<T>> {
    let mut out = Vec::new();
    read_into(text, &mut out).then_some(out)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(c) = b.get(i) {
        if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

/// One JSON integer at `i` and the index after it: `None` for anything else (a fraction
/// or exponent after the digits, a leading zero, beyond 18 digits — those go to
/// serde_json, which reads every 64-bit value exactly).
fn integer(b: &[u8], mut i: usize) -> Option<(i64, usize)> {
    let negative = b.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        v = v * 10 + i64::from(c - b'0');
        i += 1;
        if i - start > 18 {
            return None;
        }
    }
    let digits = i - start;
    // serde_json reads `-0` as the float -0.0, which an integer field refuses: hand it on
    if digits == 0 || (digits > 1 && b[start] == b'0') || (negative && v == 0) {
        return None;
    }
    // a fraction or an exponent makes it a JSON number that is not an integer here
    if matches!(b.get(i), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some((if negative { -v } else { v }, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// serde_json's reading of `text` as integers fitting `T`, `None` when it refuses or a
    /// value does not fit.
    fn serde<T: ArrayInt>(text: &str) -> Option<Vec<T>> {
        let values: Vec<i64> = serde_json::from_str(text).ok()?;
        values.into_iter().map(T::from_i64).collect()
    }

    #[test]
    fn plain_arrays_are_read() {
        assert_eq!(read::<i32>("[1,2,3]"), Some(vec![1, 2, 3]));
        assert_eq!(read::<i32>(" [ 151644 , 872,\n\t198 ]\r\n"), Some(vec![151644, 872, 198]));
        assert_eq!(read::<i32>("[]"), Some(vec![]));
        assert_eq!(read::<i32>("[ ]"), Some(vec![]));
        assert_eq!(read::<i32>("[-100,0]"), Some(vec![-100, 0]));
        assert_eq!(read::<i32>("[2147483647,-2147483648]"), Some(vec![i32::MAX, i32::MIN]));
        assert_eq!(read::<i8>("[0,1,1,0,127,-128]"), Some(vec![0, 1, 1, 0, 127, -128]));
    }

    /// Everything not provably a plain integer array goes to serde_json.
    #[test]
    fn anything_else_is_handed_on() {
        for text in [
            "[2147483648]",
            "[-2147483649]",
            "[1.0]",
            "[1e2]",
            "[1E2]",
            "[01]",
            "[+1]",
            "[-]",
            // serde_json reads it as the float -0.0 (found by the view-line differential test)
            "[-0]",
            "[-00]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[\"1\"]",
            "[[1]]",
            "[null]",
            "[true]",
            "[1]x",
            "[1][2]",
            "1",
            "",
            "[",
            "[1",
            "{}",
            "[1\u{a0}]",
            "[1\u{c}]",
            "[9223372036854775807]",
            "[1234567890123456789]",
        ] {
            assert_eq!(read::<i32>(text), None, "{text:?}");
        }
        assert_eq!(read::<i8>("[128]"), None);
        assert_eq!(read::<i8>("[-129]"), None);
        assert_eq!(serde::<i32>("[-0]"), None, "serde_json refuses -0 as an integer too");
        // 18 digits still read exactly as i64
        assert_eq!(read::<i64>("[-999999999999999999]"), Some(vec![-999_999_999_999_999_999]));
    }

    /// An array of `n` values from `values`, with JSON white space of the given kinds
    /// around every token.
    fn array_text(values: &[i64], ws: &[&str]) -> String {
        let mut s = String::from(ws[0]);
        s.push('[');
        for (k, v) in values.iter().enumerate() {
            if k > 0 {
                s.push_str(ws[(k * 3) % ws.len()]);
                s.push(',');
            }
            s.push_str(ws[(k * 7 + 1) % ws.len()]);
            s.push_str(&v.to_string());
        }
        s.push_str(ws[values.len() % ws.len()]);
        s.push(']');
        s.push_str(ws[(values.len() + 1) % ws.len()]);
        s
    }

    fn edge_value() -> impl Strategy<Value = i64> {
        prop_oneof![
            -200i64..200,
            Just(i64::from(i32::MAX)),
            Just(i64::from(i32::MIN)),
            Just(i64::from(i32::MAX) + 1),
            Just(i64::from(i32::MIN) - 1),
            Just(127),
            Just(128),
            Just(-128),
            Just(-129),
            any::<i32>().prop_map(i64::from),
            any::<i64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha, ..ProptestConfig::default() })]

        /// Generated arrays: the reader gives serde_json's values, or hands on exactly
        /// when serde_json refuses or a value does not fit.
        #[test]
        fn generated_arrays_read_as_serde_json_reads_them(
            values in proptest::collection::vec(edge_value(), 0..40),
            ws in proptest::collection::vec(prop_oneof![Just(""), Just(" "), Just("\n"), Just("\t"), Just("\r\n"), Just("  ")], 1..5),
        ) {
            let ws: Vec<&str> = ws.into_iter().collect();
            let text = array_text(&values, &ws);
            prop_assert_eq!(read::<i32>(&text), serde::<i32>(&text), "{:?}", text);
            prop_assert_eq!(read::<i8>(&text), serde::<i8>(&text), "{:?}", text);
        }

        /// Mutated arrays (a byte replaced, inserted or removed): whatever the reader
        /// accepts, serde_json reads as the same values.
        #[test]
        fn mutated_arrays_never_disagree_with_serde_json(
            values in proptest::collection::vec(-300i64..300, 0..12),
            edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0u8..3, proptest::sample::select(b"0123456789-+.eE,[] \t\n\r\"xa{}".to_vec())), 1..4),
        ) {
            let mut bytes = array_text(&values, &[""]).into_bytes();
            for (at, op, byte) in edits {
                let k = at.index(bytes.len() + 1);
                match op {
                    0 if k < bytes.len() => bytes[k] = byte,
                    1 => bytes.insert(k, byte),
                    _ if k < bytes.len() => { bytes.remove(k); }
                    _ => bytes.push(byte),
                }
            }
            let text = String::from_utf8(bytes).expect("ASCII edits");
            if let Some(v) = read::<i32>(&text) {
                prop_assert_eq!(Some(v), serde::<i32>(&text), "{:?}", text);
            }
            if let Some(v) = read::<i8>(&text) {
                prop_assert_eq!(Some(v), serde::<i8>(&text), "{:?}", text);
            }
        }
    }
}
