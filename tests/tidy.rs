//! Architecture invariants that would otherwise drift ("tidy" checks, as rust-analyzer
//! keeps them): every input file is read once, through `src/ingest/`.
//!
//! Scans the non-test part of every file under `src/` (everything before its first
//! `#[cfg(test)]`) for calls that open or read a file by path. Only `src/ingest/` may
//! make them, plus the few reads listed in [`ALLOWED`], each of which is not the read of
//! a loaded input and says why.

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
    ("src/db/mod.rs", "std::fs::File::open(path)", "the database file's header, to refuse a non-DuckDB file"),
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
        if rel.starts_with("src/ingest/") {
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
