//! Architecture invariants that would otherwise drift ("tidy" checks, as rust-analyzer
//! keeps them): every input file is read once, through `src/ingest/`.
//!
//! Scans the non-test part of every file under `src/` (everything before its first
//! `#[cfg(test)]`; a `tests.rs` file is all test) for calls that open or read a file by
//! path. Only `src/ingest/` may make them, plus the few reads listed in [`ALLOWED`], each
//! of which is not the read of a loaded input and says why. Also: no two modules use
//! each other (an import circle), and no file under `src/` runs over 800 lines without
//! saying why at its top.

use std::path::{Path, PathBuf};

/// Calls that open or read a file by path.
const FILE_READS: &[&str] = &[
    "File::open",
    "fs::read(",
    "fs::read_to_string(",
    "OpenOptions",
    "from_file(",
    "rusqlite::Connection::open(",
    "rusqlite::Connection::open_with_flags(",
];

/// `(file, text of the line, why it is not an input read)`.
const ALLOWED: &[(&str, &str, &str)] = &[
    ("src/db/checkpoint.rs", "use std::fs::{File, OpenOptions};", "the checkpoint journal's own imports"),
    ("src/db/checkpoint.rs", "File::open(journal)", "the checkpoint journal sphragis wrote beside the database"),
    (
        "src/db/checkpoint.rs",
        "match OpenOptions::new().read(true).write(true).open(file)",
        "the database file's own blocks, saved before a checkpoint and put back after a stopped one",
    ),
    ("src/db/checkpoint.rs", "Err(_) => (File::open(file)", "the database file, read-only where it cannot be written"),
    ("src/db/checkpoint.rs", "File::open(folder)", "the database's folder, to sync a rename in it"),
    ("src/db/verified.rs", "use std::os::unix::fs::OpenOptionsExt;", "the stamp reader's import (below)"),
    (
        "src/db/verified.rs",
        "let written = std::fs::OpenOptions::new()",
        "a new fingerprint stamp written in sphragis's cache folder",
    ),
    (
        "src/db/verified.rs",
        "std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW).open(stamp)",
        "a fingerprint sphragis recorded in its cache folder",
    ),
    (
        "src/review/freeze.rs",
        "std::fs::read_to_string(path)",
        "a criteria file freeze wrote itself (its version, to keep it under a -v<N> name)",
    ),
    (
        "src/review/freeze.rs",
        "std::fs::read(&current)",
        "finishing an interrupted freeze: a criteria file freeze wrote itself, kept under its -v<N> name only \
         when its bytes are the recorded SHA-256",
    ),
    (
        "src/sft/build.rs",
        "std::fs::read(path).with_context(|| path.display().to_string())",
        "`views build` reads the chat template it renders with (its SHA-256 goes into every view's origin)",
    ),
    (
        "src/review/freeze.rs",
        "std::fs::read(&path)",
        "`verify` reads the frozen files a user quotes, to compare them with the freeze record and the rebuild",
    ),
    ("src/db/release.rs", "std::fs::read(root.join(path))", "the release lock check reads sphragis's own SQL files"),
    (
        "src/check/config.rs",
        "std::fs::read(path).with_context",
        "`check --config` reads checks.toml, the command's configuration (its SHA-256 is recorded with the run)",
    ),
    ("src/cli/views.rs", "std::fs::read(&b.tokenizer)", "`views build` reads the tokenizer it renders with"),
    (
        "src/sft/build.rs",
        "std::fs::read(&path).with_context(|| path.display().to_string())",
        "`views build` reads the special tokens beside its tokenizer (tokenizer_config.json, \
         special_tokens_map.json), which HF passes to the template; they go into every view's origin",
    ),
    (
        "src/export/mod.rs",
        "std::fs::File::open(path)",
        "export hashes the Parquet files it wrote; `init --from` checks an export's files against its manifest",
    ),
    ("src/export/mod.rs", "std::fs::read_to_string(&path)", "`init --from` reads an export's manifest.json"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `(file, line number, line)` outside `src/ingest/` that opens or reads a file
/// and is not allowed.
fn unexpected_reads(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if rel.starts_with("src/ingest/") || rel.ends_with("/tests.rs") {
            // a `tests.rs` file is a test module (`#[cfg(test)] mod tests;`)
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate().take_while(|(_, l)| l.trim() != "#[cfg(test)]") {
            let code = line.split("//").next().unwrap_or("");
            if !FILE_READS.iter().any(|call| code.contains(call)) {
                continue;
            }
            if ALLOWED.iter().any(|(f, text, _)| *f == rel && code.contains(text)) {
                continue;
            }
            found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
        }
    }
    found
}

#[test]
fn only_ingest_reads_input_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = unexpected_reads(root);
    assert!(
        found.is_empty(),
        "input files are read only through src/ingest/ (Input, TokenizerFile, hash_file); \
         a loader gets the stream, never a path to reopen. Move these reads there, or add a \
         non-input read to ALLOWED with its reason:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn every_allowed_read_still_exists() {
    // an allow-list entry whose line is gone would silently allow a new read there
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, text, why) in ALLOWED {
        let source = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(source.contains(text), "{file}: no `{text}` any more ({why}): remove it from ALLOWED");
    }
}

#[test]
fn the_check_finds_a_read_outside_ingest() {
    // the scan itself: a copy of the tree with one loader reopening its path is caught
    let dir = std::env::temp_dir().join(format!("sphragis-tidy-{}", std::process::id()));
    let src = dir.join("src/sft");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(dir.join("src/ingest")).unwrap();
    std::fs::write(dir.join("src/ingest/read.rs"), "fn f() { std::fs::File::open(p); }\n").unwrap();
    std::fs::write(
        src.join("pools.rs"),
        "fn load() {\n    // std::fs::read(path) in a comment is fine\n    let raw = std::fs::read(path)?;\n}\n\
         #[cfg(test)]\nmod tests { fn t() { std::fs::read_to_string(p); } }\n",
    )
    .unwrap();
    let found = unexpected_reads(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found, ["src/sft/pools.rs:3: let raw = std::fs::read(path)?;"]);
}

/// The module path of a file under `src/`: `a/b.rs` and `a/b/mod.rs` are `a::b`,
/// `lib.rs` and `main.rs` the crate root (`""`).
fn module_of(rel: &str) -> String {
    let rel = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<&str> = rel.split('/').collect();
    if matches!(parts.last(), Some(&"mod" | &"lib" | &"main")) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file that is compiled outside tests: comments dropped, and nothing from
/// its first `#[cfg(test)]` on. A file named `tests.rs` is a test module: no code.
fn code_of(rel: &str, text: &str) -> String {
    if rel.ends_with("/tests.rs") {
        return String::new();
    }
    text.lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a `use` group names: `a::{b, c::{d, e}}` after `prefix` gives
/// `prefix::a::b`, `prefix::a::c::d`, `prefix::a::c::e`.
fn expand_group(prefix: &str, group: &str, out: &mut Vec<String>) {
    let mut depth = 0;
    let mut start = 0;
    let bytes = group.as_bytes();
    let mut items = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    for item in items {
        let item = item.trim();
        if item.is_empty() || item == "self" {
            continue;
        }
        if let Some(open) = item.find("::{") {
            let inner = item[open + 3..].strip_suffix('}').unwrap_or(&item[open + 3..]);
            expand_group(&format!("{prefix}::{}", &item[..open]), inner, out);
        } else {
            let path = item.split(" as ").next().unwrap().trim().trim_end_matches("::*");
            out.push(format!("{prefix}::{path}"));
        }
    }
}

/// Which module names which: for every file under `src/`, the modules its code names
/// through `crate::…`, `super::…` or `self::…` paths (grouped `use` included), each
/// resolved to the longest module that exists.
fn module_edges(root: &Path) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let path_re = regex::Regex::new(r"\b(crate|super|self)::((?:\w+::)*(?:\w+|\{))").unwrap();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut texts = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root.join("src")).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        texts.push((module_of(&rel), code_of(&rel, &text)));
    }
    let modules: std::collections::BTreeSet<String> = texts.iter().map(|(m, _)| m.clone()).collect();
    let resolve = |path: &str| -> Option<String> {
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| modules.contains(m))
    };
    let mut edges = std::collections::BTreeMap::new();
    for (module, code) in &texts {
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p).to_string();
        let mut named = Vec::new();
        for c in path_re.captures_iter(code) {
            let base = match &c[1] {
                "crate" => String::new(),
                "super" => parent.clone(),
                _ => module.clone(),
            };
            let rest = &c[2];
            if let Some(head) = rest.strip_suffix('{') {
                // a grouped use: the group runs to its matching brace
                let from = c.get(2).unwrap().end();
                let mut depth = 1;
                let end = code[from..]
                    .char_indices()
                    .find(|&(_, ch)| {
                        depth += match ch {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        depth == 0
                    })
                    .map_or(code.len(), |(i, _)| from + i);
                expand_group(&format!("{base}::{}", head.trim_end_matches("::")), &code[from..end], &mut named);
            } else {
                named.push(format!("{base}::{rest}"));
            }
        }
        let set: std::collections::BTreeSet<String> =
            named.iter().filter_map(|p| resolve(p)).filter(|m| m != module).collect();
        edges.insert(module.clone(), set);
    }
    edges
}

/// Circles between modules: at each depth, modules are cut to their first `depth`
/// segments and a use between a module and its own ancestor is left out (a child uses its
/// parent's types); two modules that reach each other are in a circle. Each circle is
/// given as its uses, `a -> b`, sorted.
fn import_circles(root: &Path) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let edges = module_edges(root);
    let depth_max = edges.keys().map(|m| m.split("::").count()).max().unwrap_or(1);
    let mut found = BTreeSet::new();
    let related = |a: &str, b: &str| {
        a.is_empty() || b.is_empty() || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
    };
    for depth in 1..=depth_max {
        let cut = |m: &str| m.split("::").take(depth).collect::<Vec<_>>().join("::");
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, tos) in &edges {
            for to in tos {
                let (a, b) = (cut(from), cut(to));
                if a != b && !related(&a, &b) {
                    graph.entry(a).or_default().insert(b);
                }
            }
        }
        let reach = |start: &str| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![start.to_string()];
            while let Some(m) = stack.pop() {
                for next in graph.get(&m).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        stack.push(next.clone());
                    }
                }
            }
            seen
        };
        for (from, tos) in &graph {
            for to in tos {
                if reach(to).contains(from) {
                    found.insert(format!("{from} -> {to}"));
                }
            }
        }
    }
    found.into_iter().collect()
}

#[test]
fn no_module_imports_in_a_circle() {
    // a circle makes two modules one: neither can be read, tested or moved alone
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let circles = import_circles(root);
    assert!(
        circles.is_empty(),
        "modules that use each other (directly or through others); move the shared part \
         down into a module both can use:\n  {}",
        circles.join("\n  ")
    );
}

#[test]
fn the_check_finds_an_import_circle() {
    // the scan itself, on a tree with one circle through a grouped use (a -> b -> c -> a),
    // a child using its parent (allowed) and a circle only in comments and tests (ignored)
    let dir = std::env::temp_dir().join(format!("sphragis-tidy-circles-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src/c")).unwrap();
    std::fs::create_dir_all(dir.join("src/d")).unwrap();
    let files = [
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
        ("src/a.rs", "use crate::{b::{self, f}, hash};\n"),
        ("src/b.rs", "fn g() { crate::c::inner::h(); }\n"),
        ("src/c/mod.rs", "pub mod inner;\n"),
        ("src/c/inner.rs", "use super::super::a;\nuse crate::a::x;\nuse super::Y;\n"),
        ("src/d/mod.rs", "pub mod e;\n// crate::a::x in a comment\n#[cfg(test)]\nmod tests { use crate::a; }\n"),
        ("src/d/e.rs", "use super::Z;\n"),
        ("src/d/tests.rs", "use crate::a;\n"),
    ];
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    let circles = import_circles(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    // at depth 1 the circle of the top modules, at depth 2 the same through c::inner
    assert_eq!(circles, ["a -> b", "b -> c", "b -> c::inner", "c -> a", "c::inner -> a"]);
}

#[test]
fn no_source_file_over_800_lines_without_a_reason() {
    // a long file is cut along its concepts, or says at its top why it is one file
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let lines = text.lines().count();
            let reason = text.lines().take(20).any(|l| l.contains("Over 800 lines"));
            (lines > 800 && !reason).then(|| format!("{}: {lines} lines", file.strip_prefix(root).unwrap().display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "cut these along their concepts, or state at the top (\"Over 800 lines on purpose: ...\") why not:\n  {}",
        long.join("\n  ")
    );
}
