//! Tufano et al., "Towards Automating Code Review Activities" (ICSE'21) raw CSV split.
//!
//! Columns: `` (unnamed 0-based row index), `comment`, `before`, `before_marked`, `after`;
//! RFC 4180 quoting with embedded CRLF newlines kept byte for byte (see
//! `shared/data/review/tufano2021/PROVENANCE.md`). Mapping: one example per row;
//! `example_id` = `<org>:<file stem>:<row index>`; `org` from the caller (default
//! `tufano2021`: the file names no host); `hunk` = `before` (the unit is a whole Java
//! method); `target` = `after`; one comment = `comment`; no time, path or author.

use super::Sink;
use crate::ingest::InputError;
use crate::review::model::{Comment, Example};
use std::io::Read;
use std::path::Path;

/// The org used when the caller gives none.
pub const DEFAULT_ORG: &str = "tufano2021";

const COLUMNS: [&str; 5] = ["", "comment", "before", "before_marked", "after"];

/// Reads the CSV and hands each example to `sink`.
///
/// Errors ([`InputError`], naming the line and column): a missing column in the header,
/// a record with the wrong number of fields, invalid UTF-8, an empty row index, an
/// empty file.
pub fn read(path: &Path, org: &str, reader: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<u64> {
    if org.trim().is_empty() {
        return Err(InputError::at(path, None, None, "the org must not be empty").into());
    }
    let reader = QuoteTracker { inner: reader, in_quotes: false };
    let mut csv = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(reader);
    let headers = csv.headers().map_err(|e| csv_error(path, e))?.clone();
    if headers.is_empty() {
        return Err(InputError::at(path, None, None, "file is empty (no header row)").into());
    }
    let mut index = [0usize; 5];
    for (slot, name) in index.iter_mut().zip(COLUMNS) {
        let shown = if name.is_empty() { "(unnamed index)" } else { name };
        if headers.iter().filter(|h| *h == name).count() > 1 {
            return Err(InputError::at(path, Some(1), Some(shown), "column appears twice in the header").into());
        }
        *slot = headers.iter().position(|h| h == name).ok_or_else(|| {
            InputError::at(
                path,
                Some(1),
                Some(if name.is_empty() { "(unnamed index)" } else { name }),
                "missing column in the header",
            )
        })?;
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut record = csv::StringRecord::new();
    let mut count = 0u64;
    let mut last_line = 1;
    while csv.read_record(&mut record).map_err(|e| csv_error(path, e))? {
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let get = |column: usize| record.get(index[column]).unwrap_or("");
        let row_index = get(0).trim();
        if row_index.parse::<u64>().is_err() {
            return Err(InputError::at(
                path,
                Some(line),
                Some("(unnamed index)"),
                format!("{row_index:?} is not a row number"),
            )
            .into());
        }
        last_line = line;
        count += 1;
        let example_id = format!("{org}:{stem}:{row_index}");
        sink(Example {
            example_id: example_id.clone(),
            org: org.to_string(),
            hunk: Some(get(2).to_string()),
            target: Some(get(4).to_string()),
            record: line as i64,
            comments: vec![Comment {
                comment_id: example_id,
                message: get(1).to_string(),
                record: line as i64,
                ..Comment::default()
            }],
            ..Example::default()
        })?;
    }
    if count == 0 {
        return Err(InputError::at(path, None, None, "file has a header but no records").into());
    }
    if csv.get_ref().in_quotes {
        return Err(InputError::at(
            path,
            Some(last_line),
            None,
            "the file ends inside a quoted field: the last record is cut off",
        )
        .into());
    }
    Ok(count)
}

/// Passes bytes through while following RFC 4180 quoting: every `"` toggles the state
/// (an escaped `""` toggles twice), so at the end `in_quotes` says whether the file
/// stopped inside a quoted field — which the csv crate accepts silently.
struct QuoteTracker<R> {
    inner: R,
    in_quotes: bool,
}

impl<R: Read> Read for QuoteTracker<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let quotes = buf[..n].iter().filter(|b| **b == b'"').count();
        if quotes % 2 == 1 {
            self.in_quotes = !self.in_quotes;
        }
        Ok(n)
    }
}

fn csv_error(path: &Path, e: csv::Error) -> InputError {
    let line = e.position().map(|p| p.line());
    let field = match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => {
            let column = COLUMNS.get(err.field()).copied().unwrap_or("?");
            Some(if column.is_empty() { "(unnamed index)".to_string() } else { column.to_string() })
        }
        _ => None,
    };
    let message = match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => format!("invalid UTF-8 at byte {} of the field", err.valid_up_to() + 1),
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("record has {len} fields, the header has {expected_len} (truncated or unbalanced quotes?)")
        }
        _ => e.to_string(),
    };
    InputError { path: path.to_path_buf(), line, field, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(bytes: &[u8]) -> Result<Vec<Example>, String> {
        let mut out = Vec::new();
        read(Path::new("test.csv"), DEFAULT_ORG, bytes, &mut |e| {
            out.push(e);
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    #[test]
    fn keeps_crlf_inside_quoted_fields() {
        let text = b",comment,before,before_marked,after\n0,\"```suggestion\r\nint y;\r\n```\",\"int x;\",\"START int x; END\",\"int y;\"\n1,plain,a,b,c\n";
        let got = run(text).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].example_id, "tufano2021:test:0");
        assert_eq!(got[0].comments[0].message, "```suggestion\r\nint y;\r\n```");
        assert_eq!(got[0].hunk.as_deref(), Some("int x;"));
        assert_eq!(got[0].target.as_deref(), Some("int y;"));
        assert_eq!(got[1].record, 5, "line of the second record, after the 3-line first one");
    }

    #[test]
    fn errors_name_line_and_column() {
        let err = run(b",comment,before,after\n0,a,b,c\n").unwrap_err();
        assert!(err.contains("test.csv:1: field `before_marked`: missing column"), "{err}");
        let err = run(b",comment,before,before_marked,after\n0,a,b,c,d\n1,a,b\n").unwrap_err();
        assert!(err.contains("test.csv:3:") && err.contains("record has 3 fields"), "{err}");
        let err = run(b",comment,before,before_marked,after\n0,a\xff,b,c,d\n").unwrap_err();
        assert!(err.contains("test.csv:2: field `comment`: invalid UTF-8"), "{err}");
        assert!(run(b"").unwrap_err().contains("file is empty"));
        assert!(run(b",comment,before,before_marked,after\n").unwrap_err().contains("no records"));
        // a quote opened and never closed: the file was cut
        let err = run(b",comment,before,before_marked,after\n0,\"a,b,c,d\n").unwrap_err();
        assert!(err.contains("test.csv:2:"), "{err}");
        // cut inside the last field, after an escaped quote: still caught
        let err = run(b",comment,before,before_marked,after\n0,a,b,c,\"int x = \"\"y\"\";\n").unwrap_err();
        assert!(err.contains("test.csv:2: the file ends inside a quoted field"), "{err}");
        let err = run(b",comment,before,before_marked,after\nx,a,b,c,d\n").unwrap_err();
        assert!(err.contains("field `(unnamed index)`: \"x\" is not a row number"), "{err}");
        let err = run(b",comment,before,before_marked,after,after\n0,a,b,c,d,e\n").unwrap_err();
        assert!(err.contains("field `after`: column appears twice"), "{err}");
    }
}
