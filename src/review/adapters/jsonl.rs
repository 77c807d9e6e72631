//! sphragis's own review format: JSONL, one built example per line with its comments.
//! Every field, its type and whether it is optional is documented in `docs/formats.md`.
//! Unknown fields are refused (a misspelt `creatd_at` must not pass silently).

use super::{Sink, TextOrNumber, timestamp_field};
use crate::ingest::InputError;
use crate::ingest::json::parse_json_ids;
use crate::review::model::{Comment, Example};
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExample {
    example_id: String,
    org: String,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    change: Option<TextOrNumber>,
    #[serde(default)]
    patch_set: Option<i32>,
    #[serde(default)]
    file_path: Option<String>,
    hunk: String,
    target: String,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    revision_kind: Option<String>,
    #[serde(default)]
    predecessor_id: Option<String>,
    comments: Vec<RawComment>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComment {
    comment_id: TextOrNumber,
    #[serde(default)]
    author_id: Option<TextOrNumber>,
    message: String,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    in_reply_to: Option<TextOrNumber>,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    service_account: Option<bool>,
    /// Structured suggested fixes on the comment (a count, as Gerrit's `fix_suggestions`).
    #[serde(default)]
    fix_suggestions: Option<u16>,
    /// The analyzer that wrote the comment (Gerrit's `robot_id`): a robot comment.
    #[serde(default)]
    robot_id: Option<String>,
}

/// The fields that name an example, what it belongs to and what its comments are: a lone
/// surrogate escape in them is refused ([`crate::ingest::json::parse_json_ids`]).
const ID_FIELDS: &[&str] = &[
    "example_id",
    "org",
    "project",
    "change",
    "predecessor_id",
    "comments[*].comment_id",
    "comments[*].author_id",
    "comments[*].in_reply_to",
];

/// Reads examples from `reader` (the file at `path`) and hands each to `sink`.
///
/// Errors ([`InputError`], naming line and field): malformed or truncated JSON, a
/// missing or mistyped field, an unknown field, invalid UTF-8, an empty `example_id` or
/// `org`, an example with no comment, a bad timestamp, an empty file.
pub fn read(path: &Path, mut reader: impl BufRead + Send, sink: &mut Sink<'_>) -> anyhow::Result<u64> {
    // parsed on every core, examples handed on in file order
    crate::ingest::parallel::parse_lines(
        path,
        &mut reader,
        1,
        super::CHUNKING,
        |line, text| Ok(convert(path, line, parse_json_ids::<RawExample>(path, line, text, ID_FIELDS)?)?),
        sink,
    )
}

fn convert(path: &Path, line: u64, raw: RawExample) -> Result<Example, InputError> {
    let required = |field: &str, value: &str| {
        if value.trim().is_empty() {
            Err(InputError::at(path, Some(line), Some(field), "must not be empty"))
        } else {
            Ok(())
        }
    };
    required("example_id", &raw.example_id)?;
    required("org", &raw.org)?;
    if raw.comments.is_empty() {
        return Err(InputError::at(path, Some(line), Some("comments"), "an example needs at least one comment"));
    }
    if raw.patch_set.is_some_and(|p| p < 1) {
        return Err(InputError::at(path, Some(line), Some("patch_set"), "must be 1 or more"));
    }
    let mut comments: Vec<Comment> = Vec::with_capacity(raw.comments.len());
    for (i, c) in raw.comments.into_iter().enumerate() {
        let comment_id = c.comment_id.into_text();
        required(&format!("comments[{i}].comment_id"), &comment_id)?;
        if let Some(j) = comments.iter().position(|o| o.comment_id == comment_id) {
            return Err(InputError::at(
                path,
                Some(line),
                Some(&format!("comments[{i}].comment_id")),
                format!("{comment_id:?} repeats comments[{j}]"),
            ));
        }
        comments.push(Comment {
            comment_id,
            author_id: c.author_id.map(TextOrNumber::into_text),
            message: c.message,
            created_at: timestamp_field(path, line, &format!("comments[{i}].created_at"), c.created_at.as_deref())?,
            in_reply_to: c.in_reply_to.map(TextOrNumber::into_text),
            tag: c.tag,
            service_account: c.service_account,
            record: line as i64,
            fix_suggestions: Some(c.fix_suggestions.map_or(0, i32::from)),
            robot_id: match c.robot_id {
                Some(id) if id.trim().is_empty() => {
                    return Err(InputError::at(
                        path,
                        Some(line),
                        Some(&format!("comments[{i}].robot_id")),
                        "empty: name the analyzer, or leave robot_id out for a person's comment",
                    ));
                }
                id => id,
            },
        });
    }
    Ok(Example {
        created_at: timestamp_field(path, line, "created_at", raw.created_at.as_deref())?
            .or_else(|| comments.iter().filter_map(|c| c.created_at).min()),
        example_id: raw.example_id,
        org: raw.org,
        project: raw.project,
        change: raw.change.map(TextOrNumber::into_text),
        patch_set: raw.patch_set,
        file_path: raw.file_path,
        hunk: Some(raw.hunk),
        target: Some(raw.target),
        revision_kind: raw.revision_kind,
        predecessor_id: raw.predecessor_id,
        record: line as i64,
        comments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<Vec<Example>, String> {
        let mut out = Vec::new();
        read(Path::new("x.jsonl"), text.as_bytes(), &mut |e| {
            out.push(e);
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    const GOOD: &str = r#"{"example_id":"e1","org":"qt","project":"qt/qtbase","change":12,"patch_set":3,"file_path":"src/a.cpp","hunk":"int x;\r\n","target":"long x;\r\n","comments":[{"comment_id":"c1","author_id":1000,"message":"```suggestion\r\nlong x;\r\n```","created_at":"2021-05-01T10:00:00Z"}]}"#;

    #[test]
    fn reads_a_good_line_with_crlf_and_numbers() {
        let got = run(&format!("{GOOD}\n\n")).unwrap();
        assert_eq!(got.len(), 1);
        let e = &got[0];
        assert_eq!(e.change.as_deref(), Some("12"));
        assert_eq!(e.comments[0].author_id.as_deref(), Some("1000"));
        assert_eq!(e.hunk.as_deref(), Some("int x;\r\n"));
        // example time falls back to its earliest comment
        assert_eq!(e.created_at, Some(1_619_863_200_000_000));
        assert_eq!(e.record, 1);
    }

    #[test]
    fn errors_name_line_and_field() {
        let missing = GOOD.replace(r#""target":"long x;\r\n","#, "");
        let err = run(&format!("{GOOD}\n{missing}\n")).unwrap_err();
        assert!(err.starts_with("x.jsonl:2:") && err.contains("field `target`: missing"), "{err}");

        let mistyped = GOOD.replace(r#""patch_set":3"#, r#""patch_set":"three""#);
        let err = run(&mistyped).unwrap_err();
        assert!(err.starts_with("x.jsonl:1: field `patch_set`: invalid type"), "{err}");

        let nested = GOOD.replace(r#""message":"```suggestion\r\nlong x;\r\n```""#, r#""message":7"#);
        let err = run(&nested).unwrap_err();
        assert!(err.contains("field `comments[0].message`"), "{err}");

        let err = run(&format!("{GOOD}\n{{\"example_id\": \"e2\", \"org\"")).unwrap_err();
        assert!(err.starts_with("x.jsonl:2:") && err.contains("truncated"), "{err}");

        let err = run("not json\n").unwrap_err();
        assert!(err.starts_with("x.jsonl:1: expected a JSON object"), "{err}");
        let err = run("{\"example_id\": \"e\" \"org\": 1}\n").unwrap_err();
        assert!(err.starts_with("x.jsonl:1:") && err.contains("malformed JSON"), "{err}");
        // an array would map onto the fields by position: refused
        let err = run(r#"["e","qt","a","b",null,null,null,null,null,null,null,[["c","m"]]]"#).unwrap_err();
        assert!(err.contains("expected a JSON object"), "{err}");
        // a byte-order mark on line 1 is skipped
        assert_eq!(run(&format!("\u{feff}{GOOD}\n")).unwrap().len(), 1);
        let dup = GOOD.replace(r#"}]}"#, r#"},{"comment_id":"c1","message":"again"}]}"#);
        let err = run(&dup).unwrap_err();
        assert!(err.contains("field `comments[1].comment_id`: \"c1\" repeats comments[0]"), "{err}");
        let negative = GOOD.replace(r#""patch_set":3"#, r#""patch_set":-3"#);
        assert!(run(&negative).unwrap_err().contains("field `patch_set`: must be 1 or more"));

        let unknown = GOOD.replace(r#""org":"qt""#, r#""org":"qt","creatd_at":"x""#);
        let err = run(&unknown).unwrap_err();
        assert!(err.contains("unknown field `creatd_at`"), "{err}");

        let bad_time = GOOD.replace("2021-05-01T10:00:00Z", "yesterday");
        let err = run(&bad_time).unwrap_err();
        assert!(err.contains("field `comments[0].created_at`: not a timestamp"), "{err}");

        let no_comments = r#"{"example_id":"e1","org":"qt","hunk":"a","target":"b","comments":[]}"#;
        assert!(run(no_comments).unwrap_err().contains("field `comments`: an example needs at least one comment"));

        assert!(run("").unwrap_err().contains("file is empty"));
        assert!(run("\n \n").unwrap_err().contains("no records"));
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let mut bytes = format!("{GOOD}\n").into_bytes();
        bytes.extend_from_slice(b"{\"example_id\":\"e\xff\"}\n");
        let err = read(Path::new("x.jsonl"), &bytes[..], &mut |_| Ok(())).unwrap_err().to_string();
        assert!(err.starts_with("x.jsonl:2: invalid UTF-8 at byte 17"), "{err}");
    }
}
