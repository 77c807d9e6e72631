//! Review4Repair (`code/jsons/test_100.json`): Gerrit inline comments with the revised code.
//!
//! Mapping (see `shared/data/review/review4repair/PROVENANCE.md`): one example per row;
//! `example_id` = `comment_id`; `org` = the host prefix of `project_name` without its
//! trailing `_` (`android_` → `android`), which is also the project (the dataset names no
//! other); `hunk` = the lines of `code_snippet` between `<|startfocus|>` and
//! `<|endfocus|>` (with `--org NAME`, every row goes to org NAME and the host becomes the
//! project, so hosts can form registered halves); `target` = `target`; `file_path` = `code_file_name`; `patch_set` =
//! `base_patch_number`; `created_at` = `written_on` (UTC); one comment = `message`
//! (author unknown). The dataset's deletion marker, the literal target `<|del|>` (the
//! reviewer's revision deletes the commented lines), becomes the empty target `""`. Accepts the original JSON array and JSONL (one row per line, as the
//! benchmark's replicated file).

use super::{Sink, timestamp_field};
use crate::ingest::InputError;
use crate::ingest::json;
use crate::ingest::json::parse_json_ids;
use crate::review::model::{Comment, Example};
use serde::Deserialize;
use std::io::{BufRead, Read};
use std::path::Path;

const FOCUS_START: &str = "<|startfocus|>";
const FOCUS_END: &str = "<|endfocus|>";
/// Review4Repair's target for a deleted hunk (425 of the 2,961 rows of `test_100.json`).
pub const DELETED_TARGET: &str = "<|del|>";

/// The target an example gets from a Review4Repair `target`: `""` for the deletion
/// marker [`DELETED_TARGET`] (surrounding white space ignored), the text unchanged otherwise.
pub fn target_of(raw: &str) -> &str {
    if raw.trim() == DELETED_TARGET { "" } else { raw }
}

#[derive(Debug, Deserialize)]
struct Row {
    comment_id: String,
    message: String,
    target: String,
    code_snippet: String,
    code_file_name: String,
    written_on: String,
    project_name: String,
    base_patch_number: i32,
}

/// The fields an example's ids are made of (`example_id` and its comment's id =
/// `comment_id`, `org` and `project` from `project_name`): a lone surrogate escape in
/// them is refused ([`crate::ingest::json::parse_json_ids`]).
const ID_FIELDS: &[&str] = &["comment_id", "project_name"];

/// Reads a JSON array or JSONL file and hands each example to `sink`.
///
/// Errors ([`InputError`]): malformed or truncated JSON, a missing or mistyped field
/// (named with its array index, e.g. `[12].target`), a `code_snippet` without focus
/// markers, a bad `written_on`, an empty file.
pub fn read(
    path: &Path,
    org: Option<&str>,
    mut reader: impl BufRead + Send,
    sink: &mut Sink<'_>,
) -> anyhow::Result<u64> {
    let json::Peeked { container, blank_lines, head } =
        json::peek_container(&mut reader).map_err(|e| InputError::at(path, None, None, format!("cannot read: {e}")))?;
    let mut reader = std::io::Cursor::new(head).chain(reader);
    match container {
        None => Err(InputError::at(path, None, None, "file is empty (no JSON)").into()),
        Some(json::Container::Array) => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| InputError::at(path, None, None, format!("cannot read: {e}")))?;
            let text = json::utf8_document(path, &bytes)?;
            let rows = json::array_rows(path, text).map_err(|mut e| {
                e.line = e.line.map(|l| l + blank_lines);
                e
            })?;
            if rows.is_empty() {
                return Err(InputError::at(path, Some(blank_lines + 1), None, "the JSON array holds no rows").into());
            }
            let count = rows.len() as u64;
            for (i, (line, raw)) in rows.into_iter().enumerate() {
                let line = line + blank_lines;
                let row: Row = parse_json_ids(path, line, raw.get(), ID_FIELDS).map_err(|mut e| {
                    e.field = Some(match e.field.take() {
                        Some(f) => format!("[{i}].{f}"),
                        None => format!("[{i}]"),
                    });
                    e
                })?;
                sink(convert(path, org, line, &format!("[{i}]."), i as i64 + 1, row)?)?;
            }
            Ok(count)
        }
        // JSON lines: parsed on every core, examples handed on in file order
        Some(_) => crate::ingest::parallel::parse_lines(
            path,
            &mut reader,
            blank_lines + 1,
            super::REVIEW4REPAIR_CHUNKING,
            |line, text| Ok(convert(path, org, line, "", line as i64, parse_json_ids(path, line, text, ID_FIELDS)?)?),
            sink,
        ),
    }
}

/// The commented lines of a Review4Repair `code_snippet`: the text between the focus
/// markers, without the newline that follows `<|startfocus|>`. `None` when a marker is
/// missing or the end comes before the start.
pub fn focused_hunk(snippet: &str) -> Option<&str> {
    // the memchr crate's search: std's `str::find` took 1% of a ×100 load's CPU
    let find = |text: &str, marker: &str| memchr::memmem::find(text.as_bytes(), marker.as_bytes());
    let start = find(snippet, FOCUS_START)? + FOCUS_START.len();
    let end = start + find(&snippet[start..], FOCUS_END)?;
    let body = &snippet[start..end];
    Some(body.strip_prefix("\r\n").or_else(|| body.strip_prefix('\n')).unwrap_or(body))
}

fn convert(
    path: &Path,
    org: Option<&str>,
    line: u64,
    prefix: &str,
    record: i64,
    row: Row,
) -> Result<Example, InputError> {
    let hunk = focused_hunk(&row.code_snippet).ok_or_else(|| {
        InputError::at(
            path,
            Some(line),
            Some(&format!("{prefix}code_snippet")),
            "no <|startfocus|> ... <|endfocus|> region",
        )
    })?;
    if row.comment_id.trim().is_empty() {
        return Err(InputError::at(path, Some(line), Some(&format!("{prefix}comment_id")), "must not be empty"));
    }
    let host = row.project_name.trim_end_matches('_').to_string();
    if host.is_empty() {
        return Err(InputError::at(path, Some(line), Some(&format!("{prefix}project_name")), "must name a host"));
    }
    let org = org.map_or_else(|| host.clone(), str::to_string);
    let created_at = timestamp_field(path, line, &format!("{prefix}written_on"), Some(&row.written_on))?;
    Ok(Example {
        example_id: row.comment_id.clone(),
        project: Some(host),
        org,
        change: None,
        patch_set: Some(row.base_patch_number),
        file_path: Some(row.code_file_name),
        hunk: Some(hunk.to_string()),
        target: Some(target_of(&row.target).to_string()),
        created_at,
        revision_kind: None,
        predecessor_id: None,
        record,
        comments: vec![Comment {
            comment_id: row.comment_id,
            author_id: None,
            message: row.message,
            created_at,
            in_reply_to: None,
            tag: None,
            service_account: None,
            record,
            fix_suggestions: None,
            robot_id: None,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"status":"update","message":"use the constant","comment_id":"0153d955_343a7abc","target":"    return LIMIT;\n","code_snippet":"  if (x) {\n<|startfocus|>\n    return -1;\n<|endfocus|>\n  }","code_file_name":"android_4059","written_on":"2017-03-07 22:19:27","project_name":"android_","base_patch_number":4,"tokenized_target":["a"]}"#;

    fn run(text: &str) -> Result<Vec<Example>, String> {
        let mut out = Vec::new();
        read(Path::new("r.json"), None, text.as_bytes(), &mut |e| {
            out.push(e);
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    #[test]
    fn array_and_jsonl_give_the_same_examples() {
        let array = run(&format!("[{ROW}, {}]", ROW.replace("0153d955_343a7abc", "second"))).unwrap();
        let lines = run(&format!("{ROW}\n{}\n", ROW.replace("0153d955_343a7abc", "second"))).unwrap();
        assert_eq!(array.len(), 2);
        assert_eq!(array, lines);
        let e = &array[0];
        assert_eq!(e.org, "android");
        assert_eq!(e.hunk.as_deref(), Some("    return -1;\n"));
        assert_eq!(e.created_at, Some(1_488_925_167_000_000));
        assert_eq!(e.comments[0].message, "use the constant");
        assert_eq!(array[1].record, 2);
    }

    #[test]
    fn errors_name_the_row_and_field() {
        let err = run(&format!("[{ROW}, {}]", ROW.replace(r#""target":"    return LIMIT;\n","#, ""))).unwrap_err();
        assert!(err.contains("r.json:1: field `[1].target`: missing"), "{err}");
        let err = run(&format!("[{ROW}, {}]", ROW.replace(r#""base_patch_number":4"#, r#""base_patch_number":"4""#)))
            .unwrap_err();
        assert!(err.contains("field `[1].base_patch_number`"), "{err}");
        let err = run(&format!("[{ROW}, {ROW}")).unwrap_err();
        assert!(err.contains("truncated"), "{err}");
        let err = run(&ROW.replace("<|endfocus|>", "")).unwrap_err();
        assert!(err.contains("r.json:1: field `code_snippet`: no <|startfocus|>"), "{err}");
        assert!(run("  \n").unwrap_err().contains("file is empty"));
        assert!(run("[]").unwrap_err().contains("holds no rows"));
    }

    #[test]
    fn lone_surrogate_in_a_review4repair_id_is_refused() {
        // `comment_id` is the example's id, `project_name` its org and project: two rows
        // whose ids differ only in a lone surrogate would have been one example
        let high = ROW.replace("0153d955_343a7abc", r"0153d955\ud83d");
        let low = ROW.replace("0153d955_343a7abc", r"0153d955\udc00");
        let err = run(&format!("[{ROW},\n{high},\n{low}]")).unwrap_err();
        assert!(err.contains(r"r.json:2: field `[1].comment_id`: \ud83d is a lone surrogate escape"), "{err}");
        let err = run(&format!("{ROW}\n{low}\n")).unwrap_err();
        assert!(err.contains(r"r.json:2: field `comment_id`: \udc00 is a lone surrogate escape"), "{err}");
        let err = run(&ROW.replace(r#""project_name":"android_""#, r#""project_name":"and\ud83droid_""#)).unwrap_err();
        assert!(err.contains(r"r.json:1: field `project_name`: \ud83d is a lone surrogate escape"), "{err}");
        // in the message it is accepted (stored as U+FFFD and recorded by the load)
        let fine = run(&ROW.replace("use the constant", r"use the constant \ud83d")).unwrap();
        assert_eq!(fine[0].comments[0].message, "use the constant \u{fffd}");
    }

    #[test]
    fn review4repair_array_with_a_bom_is_read() {
        // saved by an editor that writes a byte-order mark: still a JSON array
        let array = run(&format!("\u{feff}[{ROW},\n {}]", ROW.replace("0153d955_343a7abc", "second"))).unwrap();
        assert_eq!(array.len(), 2);
        assert_eq!(array[0].example_id, "0153d955_343a7abc");
        let lines = run(&format!("\u{feff}{ROW}\n")).unwrap();
        assert_eq!(lines.len(), 1);
    }

    #[test]
    fn array_rows_name_their_line_after_leading_blank_lines() {
        let bad = ROW.replace(r#""base_patch_number":4"#, r#""base_patch_number":"4""#);
        let err = run(&format!("\n\n[{ROW},\n{ROW},\n{bad}]")).unwrap_err();
        assert!(err.starts_with("r.json:5: field `[2].base_patch_number`"), "{err}");
        let err = run(&format!("\n\n{ROW}\n{bad}\n")).unwrap_err();
        assert!(err.starts_with("r.json:4: field `base_patch_number`"), "{err}");
    }

    /// Blank space before the first record longer than the reader's buffer (found by a
    /// fresh tester: with 70,000 spaces the 64 KB buffer of the time was dropped and the
    /// error named a column counted from the cut): the same error, at the record's true
    /// column, whatever the buffer size; a byte-order mark after the spaces is refused.
    #[test]
    fn blank_space_longer_than_the_buffer_keeps_the_true_column() {
        let bad = ROW.replace(r#""base_patch_number":4"#, r#""base_patch_number":"4""#);
        // serde_json names the column of the offending value's last byte: the closing quote
        let column = 70_000 + bad.find(r#""4""#).unwrap() + 3;
        let message = |text: &str, capacity: usize| {
            let reader = std::io::BufReader::with_capacity(capacity, std::io::Cursor::new(text.as_bytes().to_vec()));
            read(Path::new("r.json"), None, reader, &mut |_| Ok(()))
                .map(|n| n.to_string())
                .unwrap_or_else(|e| e.to_string())
        };
        // serde_json names a truncated array at its last byte
        let truncated = 70_000 + 1 + ROW.len();
        let cases =
            [(format!("{}{bad}\n", " ".repeat(70_000)), column), (format!("{}[{ROW}", " ".repeat(70_000)), truncated)];
        for (text, column) in cases {
            let want = message(&text, 1 << 20);
            assert!(want.contains(&format!("column {column})")), "{want}");
            for capacity in [16, 1 << 16] {
                assert_eq!(message(&text, capacity), want, "buffer of {capacity}");
            }
        }
        let bom_after_spaces = format!("{}\u{feff}{ROW}\n", " ".repeat(70_000));
        for capacity in [16, 1 << 16, 1 << 20] {
            let err = message(&bom_after_spaces, capacity);
            assert!(err.contains("r.json:1: a byte-order mark (U+FEFF) follows blank space"), "{capacity}: {err}");
        }
        assert_eq!(message(&format!("\n\n{}{ROW}\n", " ".repeat(70_000)), 16), "1");
    }

    #[test]
    fn review4repair_deletion_marker_is_the_empty_target() {
        let deleted = ROW.replace(r#""target":"    return LIMIT;\n""#, r#""target":"<|del|>""#);
        let kept = run(&format!("[{ROW}, {}]", deleted.replace("0153d955_343a7abc", "second"))).unwrap();
        assert_eq!(kept[0].target.as_deref(), Some("    return LIMIT;\n"));
        assert_eq!(kept[1].target.as_deref(), Some(""));
        assert_eq!(target_of(" <|del|>\n"), "");
        // the marker inside other text is text
        assert_eq!(target_of("x = '<|del|>'"), "x = '<|del|>'");
    }

    #[test]
    fn focus_region() {
        assert_eq!(focused_hunk("a\n<|startfocus|>\nb\nc\n<|endfocus|>\nd"), Some("b\nc\n"));
        assert_eq!(focused_hunk("<|startfocus|>b<|endfocus|>"), Some("b"));
        assert_eq!(focused_hunk("<|endfocus|>x<|startfocus|>"), None);
        assert_eq!(focused_hunk("no markers"), None);
    }
}
