//! sphragis — an embedded analytical engine for auditing ML training corpora.
//!
//! It loads corpora into one DuckDB file, evaluates the corpus rules with Rust scalar
//! functions, stores their verdicts as plain columns, and exposes every count as a
//! versioned SQL view, so any figure in a report traces back to a view definition, a
//! corpus version and the SHA-256 of the input files. `../shared/SPEC.md` is the product
//! decision; this crate implements the review corpus (SPEC §2) and the SFT corpus (SPEC §3).
//!
//! # Bird's-eye view
//!
//! ```text
//! input files ──ingest::Input (one read, SHA-256 while parsed)──▶ adapters
//!             ──adapters──▶ review_examples / review_comments   (one transaction per file,
//!                            ingest_log: path, bytes, sha256)   bound in the ingest log)
//! orgs.json ───────────────▶ org_service_accounts / org_windows
//! refine ── sph_* functions ─▶ refine_comments / refine_examples (verdicts as columns)
//! sealed-window content ───▶ <db>.sealed.duckdb (attached only for refine and --unseal)
//! split ───────────────────▶ review_splits (windows, halves) ─▶ freeze: criteria + manifests
//!                            (folder, files and SHA-256s, orgs left out: the freeze record)
//! verify --reproduce ──────▶ the frozen files where they live + a rebuild from the logged
//!                            inputs in a scratch database, compared
//! trajectories ─adapters──▶ sft_messages / tool calls / commands (heuristic verdicts stored)
//! views build ─template────▶ view JSONL ─load views─▶ sft_views (lists) + spans + supervised runs
//!                                       (--tokenizer) ─▶ + segments of each span (sft_view_segments)
//! sql/<area>/*_vN.sql ──────▶ versioned views (sha256 in sph_views) ──▶ report: table/CSV/JSON/HTML
//! sql/checks/*_v1.sql ──────▶ check_findings_v1 ──check (checks.toml)──▶ verdict, exit 4; check_results
//! ```
//!
//! # Code map
//!
//! - [`ingest`]: the input layer for both corpora — [`ingest::InputKind`] (the one list
//!   of input kinds: name, loader version, re-load policy), [`ingest::Input`] (the one
//!   way an input is read: a read-ahead stream hashed as it is parsed, BOM skipped),
//!   [`ingest::InputError`] (file, line, field), [`ingest::json`] (JSON lines / array /
//!   document containers, each record located by line), [`ingest::anomaly`] (what
//!   Python's `json.dumps` writes and strict JSON refuses — lone surrogates, `NaN` —
//!   and NUL / control characters: accepted and recorded per file, line and field in
//!   `ingest_anomalies_v1`, or refused with the reason), [`ingest::log`] (transactional,
//!   SHA-256-bound loads recorded in `ingest_log`, with the load's anomalies).
//! - [`db`]: open a database file; [`db::migrations`] (numbered schema files with
//!   checksums), [`db::views`] (the registry of views and table macros),
//!   [`db::release`] (the lock of released SQL), [`db::catalogue`] (docs/views.md,
//!   generated from the SQL files' headers), [`db::sealed`] (the companion database that
//!   holds the content of examples in sealed windows), [`db::spark`] (the generated,
//!   parity-checked Spark SQL of every view).
//! - [`rules`]: the rules as pure functions ([`rules::fence`], [`rules::normalize`],
//!   [`rules::compress`]) and their DuckDB adapters ([`rules::udf`]).
//! - [`review`]: the review corpus — adapters per source format, per-org configuration
//!   (service accounts, windows, halves), refine into corpus versions, splits, freeze and
//!   `verify --reproduce` ([`review::freeze`]), label-audit items, and `diff` between two versions
//!   ([`review::diff`]).
//! - [`report`]: run a versioned view (or a parametrised report's table macro) and render
//!   it as a table, CSV or JSON, stamped with what produced the rows: kind, name,
//!   SHA-256, arguments, filter and the exact query; [`report::html`] writes them all as
//!   one offline HTML file (same stamps, `plotters` SVG charts chosen in
//!   [`report::html::charts`], drill-downs from counts to ids through stamped views listed
//!   in [`report::html::drill`]; `tests/report_html.rs`).
//! - [`shell`]: the shell lexer and the git-history rule over shell command lines (pure
//!   functions; the SFT readers and [`rules::udf`] both use it, neither depends on the other).
//! - [`sft`]: the SFT corpus — the message schema ([`sft::schema`]), one file per
//!   trajectory format behind the trait [`sft::formats::TrajectoryFormat`] (container
//!   read once, then detect, the record deserialized into the format's serde struct,
//!   convert; [`sft::formats`]), the stable entry and the
//!   shell-command rule ([`sft::trajectories`]), SWE-bench reports ([`sft::outcomes`]), the store,
//!   test-run heuristics ([`sft::heuristics`]), the chat-template renderer
//!   ([`sft::render`]) and `views build` ([`sft::build`]), the view loader
//!   ([`sft::views`]), the segment cutter that splits each message span into header,
//!   thinking / tool-call blocks, text, end of turn and content from the tokenizer's
//!   added tokens ([`sft::segments`]), pool roles, split manifest and samples database
//!   ([`sft::pools`]).
//!   The contract checks and the pool audit are views in `sql/sft/` and `sql/pools/`.
//! - [`eval`]: evaluation runs side by side (SPEC §3.5) — `load run` reads a run whole or
//!   not at all ([`eval::load`]): trajectories (through the SFT readers), per-instance and
//!   run-level reports with their outcome classes (infra failures, empty patches, never
//!   run) and batch exit statuses ([`eval::files`]), Inspect AI logs one run per epoch
//!   ([`eval::inspect`]); it stores each trajectory's finish and
//!   heuristic symptoms ([`eval::symptoms`]); the comparisons are views in `sql/eval/`.
//! - [`export`]: every table as partitioned Parquet with `manifest.json` (files,
//!   SHA-256s, each view's SQL in DuckDB and Spark dialects, whether it runs on Spark),
//!   and `init --from` back.
//! - [`show`]: the token-level loss-mask viewer (`show view`) — one SFT view's positions
//!   from the table macro `sft_view_positions_at_v1`, decoded one position at a time with
//!   the view's tokenizer, rendered as ANSI / plain text ([`show::terminal`]) or an HTML
//!   fragment and page ([`show::html`], embedded by the HTML report).
//! - [`check`]: the verdict layer (`sphragis check`): the checks are views in
//!   `sql/checks/` (`check_findings_at_v1` unions them with their default verdicts); the
//!   module reads them, applies `checks.toml` ([`check::config`]) and a baseline
//!   ([`check::baseline`]), records every result in `check_runs` / `check_results`
//!   ([`check::record`]) and writes JUnit XML ([`check::junit`]). It computes no figure.
//! - [`cli`]: one module per subcommand, each a thin layer over the library.
//! - [`hash`]: SHA-256 of byte slices.
//!
//! # Architecture invariants
//!
//! - No SQL outside `sql/` and `migrations/` except one-line bookkeeping statements
//!   (ingest log, version rows, deletes of a version being replaced).
//! - No view calls an `sph_` function: the file answers every view from a stock DuckDB
//!   client with no sphragis code loaded.
//! - A released view file or migration is never edited: a change of meaning is a new
//!   `_v<N+1>` view or a new migration; an edited one is refused on open, and from 0.2.0
//!   `sql/released.sha256` locks them (a test).
//! - A stamp never names SQL that did not produce the rows: report rows come only from
//!   the query recorded in their stamp (`tests/stamps.rs` re-runs every stamp on a plain
//!   DuckDB connection).
//! - Every load is one transaction: an input error leaves the database unchanged.
//! - Every input is read once, through [`ingest`]: loaders get the stream, never a path
//!   to reopen, so the SHA-256 in `ingest_log` is of the bytes parsed; no file other than
//!   a logged input reaches a stored value (`tests/tidy.rs`).
//! - Reports never show example content: only counts, ids of views and files. The sealed
//!   window's content is not in the main file at all: it lives in the companion database,
//!   opened only by refine (to compute verdicts) and `examples --unseal`, logged in
//!   `sph_log` (`tests/sealed.rs` scans every table of the main file for it).

pub mod check;
pub mod cli;
pub mod db;
pub mod eval;
pub mod export;
pub mod hash;
pub mod ingest;
pub mod report;
pub mod review;
pub mod rules;
pub mod sft;
pub mod shell;
pub mod show;
pub mod table;

/// The code that computed stored verdicts and stamped reports: crate version and the git
/// commit it was built from, e.g. `sphragis 0.1.0 (git 3fb3f09a1c2d)`, with `-dirty` when
/// tracked files differed from that commit, or `(git no-git)` for a build outside a git
/// checkout. Stored in `corpus_versions.rules_code`, view builds and report manifests;
/// printed by `sphragis --version`. Set by `build.rs`.
pub const CODE_VERSION: &str = concat!("sphragis ", env!("CARGO_PKG_VERSION"), " (git ", env!("SPHRAGIS_GIT"), ")");

/// [`CODE_VERSION`] without the leading program name, as `sphragis --version` prints it
/// after the name.
pub const VERSION_TEXT: &str = concat!(env!("CARGO_PKG_VERSION"), " (git ", env!("SPHRAGIS_GIT"), ")");

/// The version of the rule code that computed stored verdicts (`corpus_versions.rules_code`):
/// [`CODE_VERSION`].
pub const RULES_CODE: &str = CODE_VERSION;
