//! The purpose-built reader of a view line's integer arrays (issue 29): `input_ids`, the
//! masks, `labels`, `keep_msgs` and the packing boundaries, millions of values a file.
//!
//! One structural pass over the line ([`lift`]) walks the top-level object: keys and
//! other strings are skipped with `memchr`, nested values by their brackets, and the
//! value of each integer-array field (the [`FIELDS`]) is read by [`read_array`] straight
//! from its bytes. serde_json then reads the rest: the line with those arrays replaced by
//! `[]` (a few hundred bytes where the line is megabytes).
//!
//! The pass accepts only what it can prove: an array of plain decimal integers (`-`?
//! then `0` or a non-zero digit and at most 17 more digits, RFC 8259 §6) that fit the
//! field's width, separated by commas, with JSON white space (space, tab, LF, CR) between
//! tokens; keys without escapes, each integer-array field once; and none of the anomalies
//! the ingest policy records ([`crate::ingest::anomaly`]: an `\u`, `\b` or `\f` escape in
//! any string, `N` or `I` outside one). Anything else — a fraction, an exponent, `-0`
//! (serde_json reads it as the float -0.0), a leading zero, a value that does not fit, a
//! duplicated field, malformed JSON anywhere — gives `None`, and the caller reads the
//! whole line as before (`parse_json_ids`: the anomaly scan, serde_json, and for a failing
//! line the re-parse that names the field). When serde_json refuses the reduced line,
//! the caller reads the original line that way too. So every error and its message are
//! exactly serde_json's as before; the differential tests (`tests`) hold that every line,
//! generated, mutated or from the samples, gives the same views or the same error, and
//! records the same anomalies, either way.

use super::narrow::NarrowInt;
use std::borrow::Cow;

/// The integer-array fields of a view line and their stored width (as `RawView` reads
/// them: `Narrow<i32>` or `Narrow<i8>`).
pub(super) const FIELDS: [(&str, Width); 10] = [
    ("input_ids", Width::I32),
    ("loss_mask", Width::I8),
    ("assistant_masks", Width::I8),
    ("labels", Width::I32),
    ("keep_msgs", Width::I32),
    ("seq_lengths", Width::I32),
    ("cu_seqlens", Width::I32),
    ("cu_seq_lens_q", Width::I32),
    ("position_ids", Width::I32),
    ("attention_mask", Width::I32),
];

/// The stored width of an integer-array field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Width {
    I32,
    I8,
}

/// The values of one integer-array field, in its width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Values {
    I32(Vec<i32>),
    I8(Vec<i8>),
}

/// A view line with its integer arrays lifted out: `text` is the line with each of them
/// replaced by `[]` (borrowed when the line has none), `arrays[k]` the values of
/// `FIELDS[k]` when the line gave that field as an array.
#[derive(Debug)]
pub(super) struct Lifted<'t> {
    pub(super) text: Cow<'t, str>,
    pub(super) arrays: [Option<Values>; FIELDS.len()],
}

/// The structural pass of the module docs over one view line: `None` when the line is
/// not provably a JSON object whose integer-array fields are plain integer arrays
/// without any anomaly of the ingest policy (the caller then reads it as before).
pub(super) fn lift(text: &str) -> Option<Lifted<'_>> {
    let b = text.as_bytes();
    let mut arrays: [Option<Values>; FIELDS.len()] = Default::default();
    let mut out: Option<String> = None;
    let mut copied = 0usize;
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(Lifted { text: Cow::Borrowed(text), arrays });
    }
    loop {
        // a key: no escape (an escaped key could spell a field's name; serde_json reads it)
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let end = i + 1 + memchr::memchr2(b'"', b'\\', &b[i + 1..])?;
        if b[end] == b'\\' {
            return None;
        }
        let key = &b[i + 1..end];
        i = skip_ws(b, end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let field = FIELDS.iter().position(|(name, _)| name.as_bytes() == key);
        match field {
            Some(k) if b.get(i) == Some(&b'[') => {
                if arrays[k].is_some() {
                    return None; // a duplicated field: serde_json's error
                }
                let (values, after) = match FIELDS[k].1 {
                    Width::I32 => read_scratch::<i32>(&b[i..]).map(|(v, n)| (Values::I32(v), n))?,
                    Width::I8 => read_scratch::<i8>(&b[i..]).map(|(v, n)| (Values::I8(v), n))?,
                };
                arrays[k] = Some(values);
                let o = out.get_or_insert_with(|| String::with_capacity(1024));
                o.push_str(&text[copied..i]);
                o.push_str("[]");
                copied = i + after;
                i = copied;
            }
            _ => i = skip_value(b, i)?,
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    // what follows the object is serde_json's to judge: white space, or an error (and the
    // line is then read as before)
    let text = match out {
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(text),
    };
    Some(Lifted { text, arrays })
}

/// [`read_array`] through the thread's reusable buffer of `T`, then copied into a vector
/// of the array's exact size.
fn read_scratch<T: NarrowInt>(b: &[u8]) -> Option<(Vec<T>, usize)> {
    T::with_scratch(|scratch| {
        scratch.clear();
        let n = read_array(b, scratch)?;
        Some((scratch.as_slice().to_vec(), n))
    })
}

/// Reads the JSON array of integers at the start of `b` (`[` first) into `out`, each
/// value as `T`, and returns the number of bytes it took (through its `]`). `None` for
/// anything it cannot prove (module docs): a value that is not a plain decimal integer
/// or does not fit `T`, anything but white space, `,` or `]` after a value, a trailing
/// comma, the end of `b` before `]`.
pub(super) fn read_array<T: NarrowInt>(b: &[u8], out: &mut Vec<T>) -> Option<usize> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut i = skip_ws(b, 1);
    if b.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        let negative = b.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let start = i;
        let mut v: i64 = 0;
        while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d < 10) {
            // beyond 18 digits: serde_json reads those exactly or as a float
            if i - start == 18 {
                return None;
            }
            v = v * 10 + i64::from(d);
            i += 1;
        }
        let digits = i - start;
        // no digit, a leading zero, and `-0` (serde_json's float -0.0, which an integer
        // field refuses)
        if digits == 0 || (digits > 1 && b[start] == b'0') || (negative && v == 0) {
            return None;
        }
        let v = T::try_from(if negative { -v } else { v }).ok()?;
        out.push(v);
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The index after JSON white space (space, tab, LF, CR) from `i`.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The index after the string whose opening quote is at `i`; `None` at an escape that
/// may be an anomaly, or without a closing quote.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', &b[j..])?;
        if b[j] == b'"' {
            return Some(j + 1);
        }
        let letter = *b.get(j + 1)?;
        if crate::ingest::anomaly::escape_may_be_anomaly(letter) {
            return None;
        }
        j += 2;
    }
}

/// The index after the JSON value that starts at `i` (a string, a container by its
/// brackets, or a scalar up to the next `,`, `}`, `]` or white space), not checked
/// beyond that (serde_json reads it); `None` at a possible anomaly, brackets that do not
/// pair, or the end of the line inside the value.
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    let mut open: Vec<u8> = Vec::new();
    loop {
        let c = *b.get(i)?;
        match c {
            b'"' => i = skip_string(b, i)?,
            b'{' | b'[' => {
                open.push(c);
                i += 1;
            }
            b'}' | b']' if open.is_empty() => return Some(i),
            b'}' | b']' => {
                let want = if c == b'}' { b'{' } else { b'[' };
                if open.pop() != Some(want) {
                    return None;
                }
                i += 1;
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if open.is_empty() => return Some(i),
            c if crate::ingest::anomaly::non_finite_lead(c) => return None,
            _ => i += 1,
        }
        if open.is_empty() && matches!(c, b'"' | b'}' | b']') {
            return Some(i);
        }
    }
}

#[cfg(test)]
mod tests;
