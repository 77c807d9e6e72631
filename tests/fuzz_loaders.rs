//! Fuzzing every loader (issue 15): structured mutations of real sample bytes, one
//! property per input kind ([`InputKind::ALL`]).
//!
//! Each case takes the kind's sample file, applies one to three mutations (truncate
//! anywhere, flip a byte, insert hostile bytes — NUL, invalid UTF-8, a BOM, ANSI
//! escapes, CR/LF —, replace a number with NaN / Infinity / integers beyond i64 and 2^53
//! / deep nesting, put a lone surrogate or other escape in a string, duplicate a key,
//! change every line end to CRLF or CR, add a BOM, empty the file), loads it into a
//! database that already holds the unmutated samples of every other kind, and checks
//! the invariant:
//!
//! - the loader never panics (proptest reports a panic as a failure) and returns within
//!   [`CASE_SECONDS`];
//! - a refused load names the file in its error, and leaves every table exactly as it
//!   was (row count and an order-independent hash of all rows, per table);
//! - an accepted load adds exactly one `ingest_log` row (or is recognised as the same
//!   bytes as before and adds none).
//!
//! `cargo test` runs a short seeded run ([`DEFAULT_CASES`] cases per kind). A long run:
//! `SPHRAGIS_FUZZ_CASES=2000 cargo test --release --test fuzz_loaders -- --nocapture`
//! (`SPHRAGIS_FUZZ_SEED=<n>` picks another seed; the summary lines say how many inputs
//! were accepted and refused).

use duckdb::Connection;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use sphragis::ingest::{InputKind, LoadOutcome};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Cases per kind in `cargo test`.
const DEFAULT_CASES: u32 = 10;
/// The longest one load may take (generous: the test machine is shared).
const CASE_SECONDS: u64 = 60;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples")
}

/// A Review4Repair row (the shape of test_100.json).
const R4R_ROW: &str = r#"{"message":"use the constant","comment_id":"c1","target":"    return LIMIT;\n","code_snippet":"<|startfocus|>\n    return -1;\n<|endfocus|>\n","code_file_name":"a","written_on":"2017-03-07 22:19:27","project_name":"android_","base_patch_number":4}"#;

/// A `gerrit query --format=JSON` change with a rebase, a bot and an inline comment.
const GERRIT_CHANGE: &str = r#"{"project":"operations/puppet","number":416443,"url":"https://gerrit.wikimedia.org/r/416443","owner":{"name":"N","email":"n@example.com","username":"u1"},"comments":[{"timestamp":100,"reviewer":{"username":"u1"},"message":"Uploaded patch set 1."},{"timestamp":250,"reviewer":{"username":"u2"},"message":"Patch Set 1: Code-Review-1\n\nplease rename"},{"timestamp":260,"reviewer":{"username":"jenkins-bot"},"message":"Patch Set 2: Verified+2"}],"patchSets":[{"number":1,"createdOn":100,"kind":"REWORK","comments":[{"file":"a.pp","line":7,"reviewer":{"username":"u2","accountId":1000042},"message":"use a constant"}]},{"number":2,"createdOn":200,"kind":"TRIVIAL_REBASE"}]}
{"type":"stats","rowCount":1}
"#;

/// The kind's seed: a file name (outcomes: `<instance>/report.json`, the path names the
/// instance) and the bytes of a real sample the loader accepts.
fn seed(kind: InputKind) -> (&'static str, Vec<u8>) {
    let read = |p: &str| std::fs::read(samples().join(p)).unwrap();
    match kind {
        InputKind::Examples => ("examples.jsonl", read("review/examples.jsonl")),
        InputKind::Review4Repair => {
            ("test_100.json", format!("[{R4R_ROW},\n{}]\n", R4R_ROW.replace("\"c1\"", "\"c2\"")).into_bytes())
        }
        InputKind::Tufano2021 => (
            "test.csv",
            b",comment,before,before_marked,after\n0,\"why \"\"this\"\"?\",a,\"<START> b <END>\",c\n1,why,d,e,f\n"
                .to_vec(),
        ),
        InputKind::GerritQuery => ("query.json", GERRIT_CHANGE.as_bytes().to_vec()),
        InputKind::Orgs => ("orgs.json", read("review/orgs.json")),
        InputKind::Labels => ("labels.jsonl", read("review/labels.jsonl")),
        InputKind::Views => ("views.jsonl", read("sft/views.jsonl")),
        InputKind::Trajectories => ("demo__fix-2.traj.json", read("sft/audit/demo__fix-2.traj.json")),
        InputKind::Outcomes => ("demo__fix-2/report.json", read("sft/audit/logs/demo__fix-2/report.json")),
        InputKind::Pools => ("pools.json", read("sft/audit/pools.json")),
        InputKind::Manifest => ("manifest.json", read("sft/audit/manifest.json")),
        InputKind::Samples => ("samples.sqlite", read("sft/audit/samples.sqlite")),
        InputKind::GerritRest => ("changes.json", read("review/gerrit-rest/changes.json")),
        InputKind::Run => ("demo__a-1.traj.json", read("runs/base/trajs/demo__a-1.traj.json")),
    }
}

/// Loads `path` as `kind` with the library's loader (what `sphragis load` calls).
fn load(kind: InputKind, conn: &Connection, path: &Path) -> anyhow::Result<LoadOutcome> {
    use sphragis::sft;
    match kind {
        InputKind::Views => sft::views::load(conn, path, &Default::default(), &mut |_| {}),
        InputKind::Trajectories => sft::store::load_trajectories(conn, path, None),
        InputKind::Outcomes => sft::store::load_outcome(conn, path),
        InputKind::Pools => sft::pools::load(conn, path),
        InputKind::Manifest => sft::pools::load_manifest(conn, path),
        InputKind::Samples => sft::pools::load_samples(conn, path),
        InputKind::GerritRest => {
            sphragis::review::load::load(conn, InputKind::GerritRest, path, Some("wikimedia"), &mut |_| {})
        }
        InputKind::Run => {
            let spec = sphragis::eval::load::RunSpec {
                name: "fuzz".into(),
                model: "m".into(),
                harness: None,
                continues: None,
                runaway_turns: sphragis::eval::symptoms::DEFAULT_RUNAWAY_TURNS,
            };
            sphragis::eval::load::load_file(conn, &spec, path)
        }
        review => sphragis::review::load::load(conn, review, path, None, &mut |_| {}),
    }
}

/// Per table (sph_log aside, which records skips): name, row count and the sum of the
/// rows' hashes — equal fingerprints mean equal content, whatever the row order.
fn fingerprint(conn: &Connection) -> Vec<(String, i64, String)> {
    let mut stmt = conn
        .prepare(
            "select table_name from information_schema.tables where table_type = 'BASE TABLE' \
             and table_name <> 'sph_log' order by 1",
        )
        .unwrap();
    let tables: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert!(tables.len() > 20, "{} tables", tables.len());
    tables
        .into_iter()
        .map(|t| {
            let (n, h) = conn
                .query_row(&format!("select count(*), coalesce(sum(hash(x)), 0)::varchar from \"{t}\" as x"), [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap();
            (t, n, h)
        })
        .collect()
}

fn ingest_rows(conn: &Connection) -> i64 {
    conn.query_row("select count(*) from ingest_log", [], |r| r.get(0)).unwrap()
}

/// One structured change to the bytes of an input.
#[derive(Debug, Clone)]
enum Mutation {
    /// Cut the file at a position.
    Truncate(Index),
    /// XOR one byte with a non-zero mask.
    Flip(Index, u8),
    /// Insert raw bytes anywhere.
    Insert(Index, &'static [u8]),
    /// Replace a JSON number (after `:`, `[` or `,`) with another literal.
    Number(Index, &'static str),
    /// Put an escape (or raw text) at the start of a JSON string value.
    StringStart(Index, &'static str),
    /// Repeat the first key of an object with another value.
    DuplicateKey(Index),
    /// Replace a JSON number with arrays nested this deep.
    Nest(Index, usize),
    /// Replace every `\n` with this.
    LineEnds(&'static str),
    /// Put a UTF-8 byte-order mark in front (a second one when there is one).
    Bom,
    /// Empty the file.
    Empty,
}

const RAW: &[&[u8]] = &[
    b"\0",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\xbd",
    b"\xef\xbb\xbf",
    b"\x1b[31m",
    b"\x08",
    b"\r",
    b"\n",
    b"\r\n",
    b"}",
    b"]",
    b",",
    b"\"",
    b"\\",
    b"{\"a\":",
];
const NUMBERS: &[&str] = &[
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "9007199254740993",
    "123456789012345678901234567890",
    "1.5",
    "-0",
    "-1",
    "0",
    "null",
    "\"7\"",
    "true",
];
const ESCAPES: &[&str] = &[
    r"\ud83d",
    r"\udc00",
    r"\ud83d\ude00",
    r"\u0000",
    r"\u001b[31m",
    r"\b",
    r"\x41",
    r"\u12",
    "=HYPERLINK(1)",
    "\u{202e}",
    "\u{feff}",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), 1..=255u8).prop_map(|(i, m)| Mutation::Flip(i, m)),
        (any::<Index>(), proptest::sample::select(RAW)).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<Index>(), proptest::sample::select(NUMBERS)).prop_map(|(i, n)| Mutation::Number(i, n)),
        (any::<Index>(), proptest::sample::select(ESCAPES)).prop_map(|(i, e)| Mutation::StringStart(i, e)),
        any::<Index>().prop_map(Mutation::DuplicateKey),
        (any::<Index>(), proptest::sample::select(&[64usize, 129, 2000, 100_000][..]))
            .prop_map(|(i, d)| Mutation::Nest(i, d)),
        proptest::sample::select(&["\r\n", "\r", "\n\n"][..]).prop_map(Mutation::LineEnds),
        Just(Mutation::Bom),
        Just(Mutation::Empty),
    ]
}

/// The byte ranges of `re`'s first group in `bytes`.
fn spans(bytes: &[u8], re: &str) -> Vec<(usize, usize)> {
    let re = regex::bytes::Regex::new(re).unwrap();
    re.captures_iter(bytes).filter_map(|c| c.get(1)).map(|m| (m.start(), m.end())).collect()
}

fn splice(bytes: &mut Vec<u8>, (start, end): (usize, usize), with: &[u8]) {
    bytes.splice(start..end, with.iter().copied());
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    const NUMBER: &str = r"[:\[,]\s*(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)";
    let pick = |spans: Vec<(usize, usize)>, i: &Index| (!spans.is_empty()).then(|| spans[i.index(spans.len())]);
    match m {
        Mutation::Truncate(i) => bytes.truncate(i.index(bytes.len() + 1)),
        Mutation::Flip(i, mask) if !bytes.is_empty() => {
            let at = i.index(bytes.len());
            bytes[at] ^= mask;
        }
        Mutation::Flip(..) => {}
        Mutation::Insert(i, raw) => splice(bytes, (i.index(bytes.len() + 1), i.index(bytes.len() + 1)), raw),
        Mutation::Number(i, n) => {
            if let Some(span) = pick(spans(bytes, NUMBER), i) {
                splice(bytes, span, n.as_bytes());
            }
        }
        Mutation::StringStart(i, e) => {
            if let Some((_, end)) = pick(spans(bytes, r#"(:\s*")"#), i) {
                splice(bytes, (end, end), e.as_bytes());
            }
        }
        Mutation::DuplicateKey(i) => {
            if let Some((start, end)) = pick(spans(bytes, r#"\{\s*("(?:[^"\\]|\\.)*")\s*:"#), i) {
                let key = bytes[start..end].to_vec();
                let mut dup = key;
                dup.extend_from_slice(b": \"dup\", ");
                splice(bytes, (start, start), &dup);
            }
        }
        Mutation::Nest(i, depth) => {
            if let Some(span) = pick(spans(bytes, NUMBER), i) {
                let nested = "[".repeat(*depth) + &"]".repeat(*depth);
                splice(bytes, span, nested.as_bytes());
            }
        }
        Mutation::LineEnds(end) => {
            let text: Vec<u8> = bytes.split(|b| *b == b'\n').collect::<Vec<_>>().join(end.as_bytes());
            *bytes = text;
        }
        Mutation::Bom => splice(bytes, (0, 0), b"\xef\xbb\xbf"),
        Mutation::Empty => bytes.clear(),
    }
}

fn cases() -> u32 {
    std::env::var("SPHRAGIS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES)
}

fn runner() -> TestRunner {
    let seed: u64 = std::env::var("SPHRAGIS_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config { cases: cases(), failure_persistence: None, max_shrink_iters: 64, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key))
}

/// A database holding the unmutated sample of every other kind (each must load), so a
/// refused load is checked against a populated file and a mutant of `kind` that is still
/// valid is accepted rather than refused as a repeat of its own sample.
fn database_with_other_samples(kind: InputKind, dir: &Path) -> sphragis::db::Database {
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    for other in InputKind::ALL.into_iter().filter(|k| *k != kind) {
        let (name, bytes) = seed(other);
        let path = dir.join("seed").join(other.name()).join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        match load(other, &conn, &path) {
            Ok(LoadOutcome::Loaded(f)) => assert!(f.rows > 0, "{other}: the sample loaded no rows"),
            other_outcome => panic!("{other}: the unmutated sample does not load: {other_outcome:?}"),
        }
    }
    conn
}

/// Loads `bytes` as `kind` at `path` and checks the invariant; returns whether the load
/// was accepted.
fn check(kind: InputKind, conn: &Connection, path: &Path, bytes: &[u8]) -> Result<bool, TestCaseError> {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
    let before = fingerprint(conn);
    let logged = ingest_rows(conn);
    let started = Instant::now();
    let outcome = load(kind, conn, path);
    let took = started.elapsed();
    prop_assert!(took < Duration::from_secs(CASE_SECONDS), "{kind}: a load took {took:?}");
    let accepted = match outcome {
        Ok(LoadOutcome::Loaded(f)) => {
            prop_assert_eq!(
                ingest_rows(conn),
                logged + 1,
                "{}: accepted, but the ingest log did not grow by one",
                kind
            );
            prop_assert_eq!(f.bytes, bytes.len() as i64);
            true
        }
        Ok(LoadOutcome::AlreadyLoaded { .. }) => {
            prop_assert_eq!(fingerprint(conn), before, "{}: a skipped duplicate changed the database", kind);
            true
        }
        Err(e) => {
            let message = format!("{e:#}");
            let name = path.file_name().unwrap().to_string_lossy();
            prop_assert!(message.contains(name.as_ref()), "{}: the error does not name the file: {}", kind, message);
            prop_assert_eq!(fingerprint(conn), before, "{}: a refused load changed the database: {}", kind, message);
            false
        }
    };
    std::fs::remove_file(path).unwrap();
    Ok(accepted)
}

/// Runs the property for one kind and prints how many mutants were accepted.
fn fuzz(kind: InputKind) {
    let dir = std::env::temp_dir().join(format!("sphragis-fuzz-{}-{}", kind.name(), std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let conn = database_with_other_samples(kind, &dir);
    let (name, seed_bytes) = seed(kind);
    let case = std::cell::Cell::new(0u32);
    let accepted = std::cell::Cell::new(0u32);
    let result = runner().run(&proptest::collection::vec(mutation(), 1..=3), |mutations| {
        let mut bytes = seed_bytes.clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        case.set(case.get() + 1);
        // a fresh folder per case: outcomes name their instance by it
        let path = dir.join(format!("case-{}", case.get())).join(name);
        if check(kind, &conn, &path, &bytes)? {
            accepted.set(accepted.get() + 1);
        }
        Ok(())
    });
    eprintln!(
        "fuzz {kind}: {} inputs, {} accepted, {} refused cleanly",
        case.get(),
        accepted.get(),
        case.get() - accepted.get()
    );
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        panic!("{kind}: {e}");
    }
}

macro_rules! fuzz_kinds {
    ($($test:ident => $kind:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                fuzz(InputKind::$kind);
            }
        )*

        /// Every input kind has its property.
        #[test]
        fn every_input_kind_is_fuzzed() {
            let fuzzed = [$(InputKind::$kind),*];
            for kind in InputKind::ALL {
                assert!(fuzzed.contains(&kind), "{kind} has no fuzz property");
            }
        }
    };
}

fuzz_kinds! {
    fuzz_examples => Examples,
    fuzz_review4repair => Review4Repair,
    fuzz_tufano2021 => Tufano2021,
    fuzz_gerrit_query => GerritQuery,
    fuzz_orgs => Orgs,
    fuzz_labels => Labels,
    fuzz_views => Views,
    fuzz_trajectories => Trajectories,
    fuzz_outcomes => Outcomes,
    fuzz_pools => Pools,
    fuzz_manifest => Manifest,
    fuzz_samples => Samples,
    fuzz_gerrit_rest => GerritRest,
    fuzz_run => Run,
}

/// A directory or a FIFO given as an input file: refused at once, naming the path,
/// for every kind (opening a FIFO without a writer would block forever).
#[test]
fn directory_or_fifo_as_input_is_refused_for_every_kind() {
    let dir = std::env::temp_dir().join(format!("sphragis-fuzz-special-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a-directory")).unwrap();
    let fifo = dir.join("a-fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let before = fingerprint(&conn);
    for kind in InputKind::ALL {
        for special in [dir.join("a-directory"), fifo.clone()] {
            let started = Instant::now();
            let err = format!("{:#}", load(kind, &conn, &special).unwrap_err());
            assert!(started.elapsed() < Duration::from_secs(10), "{kind}: {}", special.display());
            assert!(
                err.contains(&special.display().to_string()) && err.contains("not a regular file"),
                "{kind}: {err}"
            );
        }
    }
    assert_eq!(fingerprint(&conn), before);
    std::fs::remove_dir_all(dir).unwrap();
}

/// What real producers write, decided (issue 15). SWE-bench observations hold NUL,
/// ANSI colour escapes and backspaces: accepted, and the bytes kept as they were.
#[test]
fn trajectory_observation_keeps_nul_ansi_and_backspace() {
    let dir = std::env::temp_dir().join(format!("sphragis-fuzz-controls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_, bytes) = seed(InputKind::Trajectories);
    let mut t: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let observation = "\u{0}NUL \u{1b}[31mred\u{1b}[0m \u{8}bs";
    t["messages"][1]["content"] = observation.into();
    let path = dir.join("controls.traj.json");
    std::fs::write(&path, serde_json::to_vec(&t).unwrap()).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    assert!(matches!(load(InputKind::Trajectories, &conn, &path).unwrap(), LoadOutcome::Loaded(_)));
    let stored: String = conn.query_row("select text from sft_messages where msg_index = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, observation);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Decided (issue 15, `src/ingest/anomaly.rs`): Python's `json.dumps` writes a lone
/// surrogate escape (`"\ud83d"`, a broken emoji) and `NaN` / `Infinity` for floats that
/// are not finite. Python's `json.loads` reads both, so sphragis does too: a lone
/// surrogate is stored as U+FFFD with its escape recorded in `ingest_anomalies_v1`; a
/// `NaN` in a field the loader reads as a number is refused in the field's terms ("NaN in
/// an integer field"), naming file, line and field, and nothing is written.
#[test]
fn python_lone_surrogate_is_accepted_and_nan_in_an_integer_field_refused() {
    let dir = std::env::temp_dir().join(format!("sphragis-fuzz-python-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let examples = String::from_utf8(seed(InputKind::Examples).1).unwrap();
    let second_line_surrogate = examples.replacen("\"message\": \"", "\"message\": \"\\ud83d", 2).replacen(
        "\"message\": \"\\ud83d",
        "\"message\": \"",
        1,
    );
    let trajectory = String::from_utf8(seed(InputKind::Trajectories).1).unwrap();
    let surrogate_trajectory = trajectory.replacen("\"content\": \"", "\"content\": \"\\ud83d ", 1);
    for (kind, name, text) in [
        (InputKind::Examples, "surrogate.jsonl", second_line_surrogate),
        (InputKind::Trajectories, "surrogate.traj.json", surrogate_trajectory),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        assert!(matches!(load(kind, &conn, &path).unwrap(), LoadOutcome::Loaded(_)), "{kind}");
    }
    let recorded: Vec<(i64, String)> = conn
        .prepare("select line, kind from ingest_anomalies_v1 order by file_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert_eq!(recorded[0], (2, "lone_surrogate".to_string()), "the example's surrogate is on line 2");
    assert_eq!(recorded[1].1, "lone_surrogate");
    let before = fingerprint(&conn);
    let views = String::from_utf8(seed(InputKind::Views).1).unwrap();
    let nan_view = views.replacen("\"input_ids\": [1", "\"input_ids\": [NaN", 1);
    let path = dir.join("nan.jsonl");
    std::fs::write(&path, nan_view).unwrap();
    let err = format!("{:#}", load(InputKind::Views, &conn, &path).unwrap_err());
    assert!(err.contains("nan.jsonl:1: field `input_ids[0]`: NaN in an integer field"), "{err}");
    assert_eq!(fingerprint(&conn), before);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Fuzz finding (labels, `LineEnds("\n\n")`): the same label items in other bytes (blank
/// lines between them) were refused by a primary-key error that named neither file nor
/// line. Now the repeat is named by file, line and field, in a file and across files.
#[test]
fn labels_repeated_item_names_file_line_and_field() {
    let dir = std::env::temp_dir().join(format!("sphragis-fuzz-labels-repeat-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let conn = sphragis::db::open(Path::new(":memory:")).unwrap();
    let text = String::from_utf8(seed(InputKind::Labels).1).unwrap();
    let first = dir.join("labels.jsonl");
    std::fs::write(&first, &text).unwrap();
    assert!(matches!(load(InputKind::Labels, &conn, &first).unwrap(), LoadOutcome::Loaded(_)));
    let before = fingerprint(&conn);
    let spaced = dir.join("spaced.jsonl");
    std::fs::write(&spaced, text.replace('\n', "\n\n")).unwrap();
    let err = format!("{:#}", load(InputKind::Labels, &conn, &spaced).unwrap_err());
    let item = text.lines().next().unwrap();
    let id: serde_json::Value = serde_json::from_str(item).unwrap();
    let expected = format!(
        "spaced.jsonl:1: field `item_id`: item {} of rater {} is already loaded from {}",
        id["item_id"].to_string().trim_matches('"'),
        id["rater"].as_str().unwrap(),
        std::fs::canonicalize(&first).unwrap().display()
    );
    assert!(err.contains(&expected), "{err}\nexpected: {expected}");
    assert_eq!(fingerprint(&conn), before);
    let twice = dir.join("twice.jsonl");
    let line = r#"{"item_id": 999, "example_id": "os-831000-a1", "rater": "Z", "label": "valid"}"#;
    std::fs::write(&twice, format!("{line}\n{line}\n")).unwrap();
    let err = format!("{:#}", load(InputKind::Labels, &conn, &twice).unwrap_err());
    assert!(err.contains("twice.jsonl:2: field `item_id`:") && err.contains("repeats line 1"), "{err}");
    assert_eq!(fingerprint(&conn), before);
    // hostile input D11: an empty item or example id names nothing (it was stored as '')
    let blank = dir.join("blank.jsonl");
    for (bad, field) in [
        (r#"{"item_id": " ", "example_id": "os-831000-a1", "rater": "Z", "label": "valid"}"#, "item_id"),
        (r#"{"item_id": 998, "example_id": "", "rater": "Z", "label": "valid"}"#, "example_id"),
    ] {
        std::fs::write(&blank, format!("{line}\n{bad}\n")).unwrap();
        let err = format!("{:#}", load(InputKind::Labels, &conn, &blank).unwrap_err());
        assert!(err.contains(&format!("blank.jsonl:2: field `{field}`: must not be empty")), "{err}");
        assert_eq!(fingerprint(&conn), before);
    }
    std::fs::remove_dir_all(dir).unwrap();
}
