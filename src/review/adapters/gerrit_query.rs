//! Gerrit's SSH `gerrit query --format=JSON --comments --patch-sets` output (as in
//! Perceval's Wikimedia test data): one change per line, then a `{"type":"stats"}` line.
//!
//! The output has no hunks or targets, so it maps as far as it goes: one example per
//! patch set that has at least one comment; its comments are the inline comments on
//! that patch set plus the change messages written on it (a message starting
//! `Patch Set N` or `Uploaded patch set N` belongs to N; any other to the newest patch
//! set created at or before it). `hunk` and `target` stay null (such examples are never
//! deduped and never quote a target). `revision_kind` = the patch set's `kind`;
//! `predecessor_id` = the previous patch set's example when the kind is `TRIVIAL_REBASE`
//! or `NO_CODE_CHANGE` (Gerrit's rebase kinds). Authors keep only `username` (or the
//! numeric account id): names and e-mails are dropped on read.
//! `example_id` = `<org>:<change number>:<patch set>`; `org` from the caller, else the
//! second-to-last label of the change URL's host (`gerrit.wikimedia.org` → `wikimedia`).

use super::{PatchSetExample, Sink, TextOrNumber, for_each_line, parse_json};
use crate::ingest::InputError;
use crate::review::model::Comment;
use regex::Regex;
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;
use std::sync::LazyLock;

/// One patch set as the adapter collects it: number, creation time (Unix seconds), kind,
/// and its inline comments.
type PatchSetRow = (i32, Option<i64>, Option<String>, Vec<Comment>);

#[derive(Debug, Deserialize)]
struct Line {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    /// On a `{"type":"stats"}` line: the number of changes in the page.
    #[serde(rename = "rowCount", default)]
    row_count: Option<u64>,
    /// On a `{"type":"error"}` line: Gerrit's message.
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    number: Option<TextOrNumber>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    comments: Vec<Message>,
    #[serde(rename = "patchSets", default)]
    patch_sets: Vec<PatchSet>,
}

#[derive(Debug, Deserialize)]
struct Account {
    #[serde(default)]
    username: Option<String>,
    #[serde(rename = "accountId", alias = "_account_id", default)]
    account_id: Option<i64>,
}

impl Account {
    fn id(&self) -> Option<String> {
        self.username.clone().or_else(|| self.account_id.map(|n| n.to_string()))
    }
}

#[derive(Debug, Deserialize)]
struct Message {
    timestamp: i64,
    reviewer: Account,
    message: String,
    #[serde(default)]
    tag: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PatchSet {
    number: TextOrNumber,
    #[serde(rename = "createdOn", default)]
    created_on: Option<i64>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    comments: Vec<Inline>,
}

#[derive(Debug, Deserialize)]
struct Inline {
    file: String,
    line: Option<i64>,
    reviewer: Account,
    message: String,
}

static PATCH_SET_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:Patch Set|Uploaded patch set) (\d+)").expect("patch set regex"));

/// The org named by a change URL: the second-to-last label of its host.
pub fn org_from_url(url: &str) -> Option<String> {
    let host = url.split("://").nth(1)?.split(['/', ':']).next()?.trim_end_matches('.');
    let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
    (labels.len() >= 2).then(|| labels[labels.len() - 2].to_string())
}

/// The first second of the year 3000: Unix seconds at or past it are refused.
const YEAR_3000: i64 = 32_503_680_000;

/// Unix seconds as microseconds, when they are a time from 1970 up to the year 3000
/// (checked: a wrapped product once stored a wrong date, or one nothing could print).
fn unix_micros(seconds: i64) -> Option<i64> {
    (0..YEAR_3000).contains(&seconds).then(|| seconds.checked_mul(1_000_000)).flatten()
}

/// The refusal of a time [`unix_micros`] does not take.
fn not_a_time(seconds: i64) -> String {
    format!("{seconds} is not a time in Unix seconds from 1970 up to the year 3000 (0 to {})", YEAR_3000 - 1)
}

/// Reads the query output and hands each patch-set example to `sink`.
///
/// Errors ([`InputError`]): malformed JSON, a mistyped field, a change without `number`
/// or patch sets, a non-numeric or non-positive patch set number, a timestamp that is
/// not Unix seconds, no org (neither given nor derivable from `url`), Gerrit's own
/// `{"type":"error"}` line, changes after the last `{"type":"stats"}` line (the output
/// was cut off) or a `rowCount` that disagrees with the changes before it, a file with
/// no change.
pub fn read(path: &Path, org: Option<&str>, reader: impl BufRead, sink: &mut Sink<'_>) -> anyhow::Result<u64> {
    if org.is_some_and(|o| o.trim().is_empty()) {
        return Err(InputError::at(path, None, None, "the org must not be empty").into());
    }
    let mut examples = 0u64;
    let (mut changes, mut in_page, mut last_line) = (0u64, 0u64, 0u64);
    for_each_line(path, reader, |line, text| {
        last_line = line;
        if text.trim() == super::gerrit_rest::XSSI_PREFIX {
            return Err(InputError::at(
                path,
                Some(line),
                None,
                "Gerrit's REST guard line )]}': this is a REST response, not SSH query output; load it as gerrit-rest",
            )
            .into());
        }
        let change: Line = parse_json(path, line, text)?;
        let err = |field: &str, msg: &str| InputError::at(path, Some(line), Some(field), msg);
        match change.kind.as_deref() {
            Some("stats") => {
                if let Some(n) = change.row_count
                    && n != in_page
                {
                    return Err(err("rowCount", &format!("says {n} changes, the page before it has {in_page}")).into());
                }
                in_page = 0;
                return Ok(());
            }
            Some("error") => {
                let message = change.message.as_deref().unwrap_or("(no message)");
                return Err(
                    InputError::at(path, Some(line), None, format!("Gerrit reported an error: {message}")).into()
                );
            }
            _ => {}
        }
        changes += 1;
        in_page += 1;
        let number = change.number.ok_or_else(|| err("number", "missing change number"))?.into_text();
        if number.trim().is_empty() {
            return Err(err("number", "must not be empty").into());
        }
        for (k, m) in change.comments.iter().enumerate() {
            unix_micros(m.timestamp)
                .ok_or_else(|| err(&format!("comments[{k}].timestamp"), &not_a_time(m.timestamp)))?;
        }
        for (i, ps) in change.patch_sets.iter().enumerate() {
            if let Some(t) = ps.created_on {
                unix_micros(t).ok_or_else(|| err(&format!("patchSets[{i}].createdOn"), &not_a_time(t)))?;
            }
        }
        let org = match org {
            Some(o) => o.to_string(),
            None => change
                .url
                .as_deref()
                .and_then(org_from_url)
                .ok_or_else(|| err("url", "cannot derive the org from the change URL; pass --org"))?,
        };
        if change.patch_sets.is_empty() {
            return Err(err("patchSets", "a change needs at least one patch set").into());
        }
        let mut sets: Vec<PatchSetRow> = Vec::new();
        for (i, ps) in change.patch_sets.iter().enumerate() {
            let n: i32 = ps
                .number
                .clone()
                .into_text()
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| err(&format!("patchSets[{i}].number"), "not a patch set number (1 or more)"))?;
            let mut comments = Vec::new();
            for (k, c) in ps.comments.iter().enumerate() {
                let at = c.line.map_or(String::new(), |l| format!(":{l}"));
                comments.push(Comment {
                    comment_id: format!("ps{n}-inline{k}"),
                    author_id: c.reviewer.id(),
                    message: c.message.clone(),
                    // the query output gives inline comments no time: the patch set's
                    created_at: ps.created_on.and_then(unix_micros),
                    tag: Some(format!("inline:{}{at}", c.file)),
                    record: line as i64,
                    ..Comment::default()
                });
            }
            sets.push((n, ps.created_on, ps.kind.clone(), comments));
        }
        sets.sort_by_key(|s| s.0);
        for (k, m) in change.comments.iter().enumerate() {
            let named: Option<i32> = PATCH_SET_PREFIX.captures(&m.message).and_then(|c| c[1].parse().ok());
            let slot = match named.and_then(|n| sets.iter().position(|s| s.0 == n)) {
                Some(i) => i,
                None => sets.iter().rposition(|s| s.1.is_some_and(|t| t <= m.timestamp)).unwrap_or(0),
            };
            sets[slot].3.push(Comment {
                comment_id: format!("msg{k}"),
                author_id: m.reviewer.id(),
                message: m.message.clone(),
                created_at: unix_micros(m.timestamp),
                tag: m.tag.clone(),
                record: line as i64,
                ..Comment::default()
            });
        }
        let ids: Vec<i32> = sets.iter().map(|s| s.0).collect();
        for (n, _created, kind, comments) in sets {
            if comments.is_empty() {
                continue;
            }
            examples += 1;
            let set = PatchSetExample {
                org: &org,
                project: change.project.clone(),
                change: &number,
                number: n,
                kind,
                record: line,
            };
            sink(set.example(ids.iter().copied(), comments))?;
        }
        Ok(())
    })?;
    if changes == 0 {
        return Err(InputError::at(path, None, None, "the file holds no change").into());
    }
    if in_page > 0 {
        return Err(InputError::at(
            path,
            Some(last_line),
            None,
            format!("no {{\"type\":\"stats\"}} line after the last {in_page} changes: the query output is cut off"),
        )
        .into());
    }
    Ok(examples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::model::Example;

    const CHANGE: &str = r#"{"project":"operations/puppet","number":416443,"url":"https://gerrit.wikimedia.org/r/416443","owner":{"name":"Gehel","email":"g@example.com","username":"gehel"},"comments":[{"timestamp":100,"reviewer":{"name":"Gehel","email":"g@example.com","username":"gehel"},"message":"Uploaded patch set 1."},{"timestamp":250,"reviewer":{"name":"Gehel","username":"gehel"},"message":"Patch Set 2: Patch Set 1 was rebased"},{"timestamp":260,"reviewer":{"name":"jenkins-bot","email":"","username":"jenkins-bot"},"message":"Patch Set 2: Verified+2\n\nMain test build succeeded."},{"timestamp":300,"reviewer":{"name":"Gehel","username":"gehel"},"message":"Change has been successfully merged by Gehel"}],"patchSets":[{"number":1,"createdOn":100,"kind":"REWORK"},{"number":2,"createdOn":200,"kind":"TRIVIAL_REBASE","comments":[{"file":"/COMMIT_MSG","line":7,"reviewer":{"name":"M","email":"m@example.com","username":"maurelio"},"message":"lowercase"}]}]}"#;

    const STATS: &str = r#"{"type":"stats","rowCount":1,"moreChanges":false}"#;

    #[test]
    fn gerrit_query_names_a_rest_response_for_what_it_is() {
        let mut sink = |_: Example| Ok(());
        let err = read(Path::new("r.json"), None, ")]}'\n[{\"_number\": 1}]\n".as_bytes(), &mut sink)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("r.json:1:") && err.contains("load it as gerrit-rest"), "{err}");
    }

    #[test]
    fn maps_patch_sets_to_examples() {
        let text = format!("{CHANGE}\n{STATS}\n");
        let mut out = Vec::new();
        let n = read(Path::new("g"), None, text.as_bytes(), &mut |e| {
            out.push(e);
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 2);
        let (ps1, ps2) = (&out[0], &out[1]);
        assert_eq!(ps1.example_id, "wikimedia:416443:1");
        assert_eq!(ps1.comments.len(), 1);
        assert_eq!(ps1.revision_kind.as_deref(), Some("REWORK"));
        assert_eq!(ps1.predecessor_id, None);
        assert_eq!(ps2.predecessor_id.as_deref(), Some("wikimedia:416443:1"));
        // inline + "Patch Set 2" x2 + the unprefixed merge message (newest patch set by time)
        assert_eq!(ps2.comments.len(), 4);
        assert_eq!(ps2.created_at, Some(200_000_000));
        let authors: Vec<_> = ps2.comments.iter().map(|c| c.author_id.as_deref().unwrap()).collect();
        assert_eq!(authors, ["maurelio", "gehel", "jenkins-bot", "gehel"]);
        let debug = format!("{out:?}");
        assert!(!debug.contains("example.com"), "e-mails are dropped");
        // display names are dropped from authors (a message text may still mention one)
        assert!(out.iter().flat_map(|e| &e.comments).all(|c| c.author_id.as_deref() != Some("Gehel")));
    }

    #[test]
    fn org_from_host() {
        assert_eq!(org_from_url("https://gerrit.wikimedia.org/r/416443").as_deref(), Some("wikimedia"));
        assert_eq!(org_from_url("https://review.opendev.org:443/c/1").as_deref(), Some("opendev"));
        assert_eq!(org_from_url("nonsense"), None);
        assert_eq!(org_from_url("https://gerrit.wikimedia.org./r/1").as_deref(), Some("wikimedia"));
    }

    #[test]
    fn errors_name_line_and_field() {
        let bad = CHANGE.replace(r#""number":416443,"#, "");
        let err = read(Path::new("g"), None, format!("{CHANGE}\n{bad}\n{STATS}\n").as_bytes(), &mut |_| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("g:2: field `number`"), "{err}");
        let bad = CHANGE.replace(r#""timestamp":250"#, r#""timestamp":"late""#);
        let err = read(Path::new("g"), None, bad.as_bytes(), &mut |_| Ok(())).unwrap_err().to_string();
        assert!(err.contains("field `comments[1].timestamp`"), "{err}");
        let run = |text: String| read(Path::new("g"), None, text.as_bytes(), &mut |_| Ok(())).unwrap_err().to_string();
        let err = run(format!("{CHANGE}\n"));
        assert!(err.contains("g:1: no {\"type\":\"stats\"} line after the last 1 changes"), "{err}");
        let err = run(format!("{CHANGE}\n{{\"type\":\"stats\",\"rowCount\":2}}\n"));
        assert!(err.contains("g:2: field `rowCount`: says 2 changes, the page before it has 1"), "{err}");
        let err = run("{\"type\":\"stats\",\"rowCount\":0}\n".to_string());
        assert!(err.contains("the file holds no change"), "{err}");
        let err = run("{\"type\":\"error\",\"message\":\"permission denied\"}\n".to_string());
        assert!(err.contains("g:1: Gerrit reported an error: permission denied"), "{err}");
        let err =
            run(format!("{}\n{STATS}\n", CHANGE.replace(r#""timestamp":100,"#, r#""timestamp":1520071568000000,"#)));
        assert!(err.contains("field `comments[0].timestamp`: 1520071568000000 is not a time in Unix seconds"), "{err}");
    }

    /// Hostile input D6: `createdOn` was multiplied into microseconds unchecked, so a
    /// large or negative value stored a wrapped date (or one nothing could print) and
    /// moved the example across windows. Each is refused naming line and field; the
    /// last second before the year 3000 is read exactly.
    #[test]
    fn epoch_seconds_out_of_range_are_refused_not_wrapped() {
        let run = |text: String| {
            let mut got = Vec::new();
            read(Path::new("g.json"), None, text.as_bytes(), &mut |e: Example| {
                got.push(e);
                Ok(())
            })
            .map(|_| got)
            .map_err(|e| e.to_string())
        };
        for v in ["-99999999999999", "99999999999999999", "9223372036854775807", "9223372036854", "-1", "32503680000"] {
            let err =
                run(format!("{}\n{STATS}\n", CHANGE.replace(r#""createdOn":200"#, &format!(r#""createdOn":{v}"#))))
                    .unwrap_err();
            assert_eq!(
                err,
                format!(
                    "g.json:1: field `patchSets[1].createdOn`: {v} is not a time in Unix seconds from 1970 up to the \
                     year 3000 (0 to 32503679999)"
                )
            );
            let err =
                run(format!("{}\n{STATS}\n", CHANGE.replace(r#""timestamp":260"#, &format!(r#""timestamp":{v}"#))))
                    .unwrap_err();
            assert!(err.starts_with(&format!("g.json:1: field `comments[2].timestamp`: {v} is not a time")), "{err}");
        }
        let got =
            run(format!("{}\n{STATS}\n", CHANGE.replace(r#""createdOn":200"#, r#""createdOn":32503679999"#))).unwrap();
        let inline = got.iter().flat_map(|e| &e.comments).find(|c| c.comment_id == "ps2-inline0").unwrap();
        assert_eq!(inline.created_at, Some(32_503_679_999_000_000));
    }
}
