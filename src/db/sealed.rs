//! The sealed window's content, kept out of the main file (SPEC §1 principle 6).
//!
//! The content of an example in a sealed test window — its hunk, its target and its
//! comments' messages — lives in a companion database beside the main file,
//! `<db>.sealed.duckdb`, which sphragis attaches (as `sph_sealed`) only to move content
//! there, to compute rule verdicts, and under `examples --unseal` (logged in `sph_log`).
//! The example and comment rows stay in the main file with `hunk` and `target` null and
//! `message` empty, and `sealed_content` lists their ids, so every count, verdict and
//! view still includes them while no client of the main file can read their content.
//!
//! Lifecycle: [`seal`] runs after every load of examples or of an orgs file (examples may
//! arrive before or after the windows that seal them), on every writing open (a load
//! stopped between its commit and its seal is sealed by the next command) and before
//! every refine; a read-only open refuses a file with content left to seal
//! ([`refuse_unsealed`]). It moves
//! the content of every example whose `created_at` falls in a sealed window of its org
//! and is not sealed yet. Sealing is one way: a later orgs file that drops the window
//! leaves the content in the companion. Refine reads content through the temporary views
//! `review_examples_content` / `review_comments_content` ([`with_content`]), which read
//! the companion for sealed rows, and stores only verdicts in the main file.
//! `verify --reproduce` rebuilds from the input files in an in-memory scratch database,
//! which has no companion (nothing there outlives the check), so it needs neither.
//!
//! An in-memory database is never sealed: it has no file a client could open.
//!
//! Limits: DuckDB does not overwrite the blocks an update frees, so content loaded
//! before its sealed window was registered may remain in unused blocks of the main file
//! until they are reused; loading the orgs file first keeps it out from the start (the
//! content then passes through the main file only inside the load, before the seal).

use anyhow::{Context, Result, bail};
use duckdb::Connection;
use std::path::{Path, PathBuf};

/// The schema name the companion is attached under.
pub const SCHEMA: &str = "sph_sealed";

const COMPANION_SQL: &str = include_str!("../../sql/steps/sealed_companion.sql");
const TO_SEAL_SQL: &str = include_str!("../../sql/steps/sealed_to_seal.sql");
const LEAKED_SQL: &str = include_str!("../../sql/steps/sealed_leaked.sql");
const CONTENT_OPEN_SQL: &str = include_str!("../../sql/steps/content_open.sql");
const CONTENT_SEALED_SQL: &str = include_str!("../../sql/steps/content_sealed.sql");

/// The companion of the main file at `db`: `<db>.sealed.duckdb`.
pub fn companion_of(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}.sealed.duckdb", db.display()))
}

/// The companion of the database `conn` is open on; `None` for an in-memory database.
pub fn companion_path(conn: &Connection) -> Result<Option<PathBuf>> {
    Ok(crate::db::checkpoint::main_database(conn)?.map(|(_, file)| companion_of(&file)))
}

/// Attaches `companion` as [`SCHEMA`]; read-only unless `write`.
/// A checkpoint journal left beside it is applied as for the main file
/// ([`crate::db::open_journaled`]). Always as a DuckDB file (`type duckdb`): a file of
/// another kind there (a SQLite database) is refused as not a DuckDB file, where DuckDB
/// would otherwise try to download the extension that reads it.
fn attach(conn: &Connection, companion: &Path, write: bool) -> Result<()> {
    let literal = companion.to_string_lossy().replace('\'', "''");
    let mode = if write { " (type duckdb)" } else { " (type duckdb, read_only)" };
    crate::db::open_journaled(companion, || conn.execute_batch(&format!("attach '{literal}' as {SCHEMA}{mode}")))
        .with_context(|| format!("{}: applying its checkpoint journal", companion.display()))?
        .with_context(|| format!("{}: cannot attach the sealed companion database", companion.display()))
}

fn detach(conn: &Connection) {
    let _ = conn.execute_batch(&format!("detach database if exists {SCHEMA}"));
}

/// Examples whose content is kept in the companion.
pub fn sealed_count(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("select count(*) from sealed_content", [], |r| r.get(0))?)
}

/// Examples whose created_at falls in a sealed window of their org but whose content is
/// still in the main file (what [`seal`] would move).
/// Also counts examples listed as sealed whose content another client wrote back into
/// the main file.
pub fn unsealed_count(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        &format!("select (select count(*) from ({TO_SEAL_SQL})) + (select count(*) from ({LEAKED_SQL}))"),
        [],
        |r| r.get(0),
    )?)
}

/// Errors when examples in a sealed window still have their content in the main file `db`:
/// a load that committed was stopped before [`seal`] moved it (sealing runs in its own
/// transactions after the load's), or another client wrote such examples. A read-only
/// open cannot move it, and whatever it printed would come from a file whose sealed
/// window is readable; every writing open seals it (see `db::open`).
pub fn refuse_unsealed(conn: &Connection, db: &Path) -> Result<()> {
    let n = unsealed_count(conn)?;
    if n == 0 {
        return Ok(());
    }
    let (examples, have) = if n == 1 { ("example", "has its") } else { ("examples", "have their") };
    let shown = db.display().to_string();
    let quoted = if shown.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
        format!("'{}'", shown.replace('\'', r"'\''"))
    } else {
        shown.clone()
    };
    let companion = companion_of(db);
    let way_out = if sealed_count(conn)? > 0 && !companion.is_file() {
        format!(
            "its sealed companion {} is missing too, so it cannot be moved: restore the companion beside the file, \
             then run any writing command (for example `sphragis --db {quoted} init`)",
            companion.display()
        )
    } else {
        format!("any writing command moves it, for example `sphragis --db {quoted} init`")
    };
    bail!(
        "{shown}: {n} {examples} in sealed windows still {have} content in this file (a load stopped after \
         its commit but before it moved that content to the sealed companion, sealing failed, or another client \
         wrote those rows); {way_out}"
    );
}

/// Moves the content of every example in a sealed window, not sealed yet, into the
/// companion, and returns how many examples it moved (0 for an in-memory database).
///
/// Two transactions, because DuckDB writes one database per transaction: the content is
/// first written to the companion (where it has no copy yet: a copy there is never
/// replaced), then cleared from the
/// main file and listed in `sealed_content`; a failure between them leaves the content
/// in both, and the next call finishes the move.
///
/// Errors: content is already sealed but the companion is missing (a new one would hold
/// only part of it); the companion cannot be created or attached, or a write fails.
pub fn seal(conn: &Connection) -> Result<u64> {
    if unsealed_count(conn)? == 0 {
        return Ok(0);
    }
    // content written back for examples already sealed: blanked again, the companion's
    // copy kept (it is the content)
    let blanked = crate::db::in_transaction(conn, || -> Result<u64> {
        crate::db::run_into_temp(conn, "sph_leaked", LEAKED_SQL)?;
        let n = blank_in_main(conn, "temp.main.sph_leaked")?;
        crate::db::drop_temp(conn, "sph_leaked")?;
        Ok(n)
    })?;
    if unsealed_count(conn)? == 0 {
        return Ok(blanked);
    }
    let Some(companion) = companion_path(conn)? else { return Ok(0) };
    // A fresh companion beside a file that already sealed content would split it in two.
    require_companion(conn, &companion)?;
    attach(conn, &companion, true)?;
    let moved = move_content(conn, &companion).and_then(|n| {
        // DuckDB does not checkpoint at detach on sphragis's connections: the companion's
        // write-ahead log reaches its file here, through the journal
        crate::db::checkpoint::guarded(conn, SCHEMA, &companion, || {
            conn.execute_batch(&format!("checkpoint {SCHEMA}"))?;
            Ok(n)
        })
    });
    let _ = crate::db::drop_temp(conn, "sph_to_seal");
    detach(conn);
    Ok(moved? + blanked)
}

fn move_content(conn: &Connection, companion: &Path) -> Result<u64> {
    conn.execute_batch(COMPANION_SQL).context("creating the sealed companion's tables")?;
    crate::db::run_into_temp(conn, "sph_to_seal", TO_SEAL_SQL)?;
    crate::db::in_transaction(conn, || -> Result<()> {
        conn.execute(
            // the companion's copy, once there, is the content: a row the main file holds
            // for an example the companion already has (a move stopped between its two
            // transactions: the same content; or another client's edit, or blanks) never
            // replaces it
            "insert or ignore into sph_sealed.sealed_examples \
             select e.example_id, e.hunk, e.target from review_examples as e join temp.main.sph_to_seal using (example_id)",
            [],
        )?;
        conn.execute(
            "insert or ignore into sph_sealed.sealed_comments \
             select c.example_id, c.comment_id, c.message from review_comments as c join temp.main.sph_to_seal using (example_id)",
            [],
        )?;
        Ok(())
    })
    .with_context(|| format!("{}: writing sealed content", companion.display()))?;
    crate::db::in_transaction(conn, || -> Result<u64> {
        let n = blank_in_main(conn, "temp.main.sph_to_seal")?;
        conn.execute(
            "insert into sealed_content select example_id, org, window_name, current_timestamp from temp.main.sph_to_seal",
            [],
        )?;
        crate::db::log(
            conn,
            "seal",
            &format!("content of {n} examples in sealed windows moved to {}", companion.display()),
        )?;
        Ok(n)
    })
}

/// Blanks in the main file the content (hunk, target, comment messages) of the examples
/// whose ids the table `ids` lists; returns how many examples it blanked.
fn blank_in_main(conn: &Connection, ids: &str) -> Result<u64> {
    let n = conn.execute(
        &format!(
            "update review_examples set hunk = null, target = null where example_id in (select example_id from {ids})"
        ),
        [],
    )?;
    conn.execute(
        &format!("update review_comments set message = '' where example_id in (select example_id from {ids})"),
        [],
    )?;
    Ok(n as u64)
}

/// Checks, before a load, that content can be sealed: errors when this database already
/// sealed content but its companion is not on disk, or when the file at the companion's
/// path cannot be attached, is not a sealed companion (its tables are not the ones
/// `sql/steps/sealed_companion.sql` makes: a damaged file, another tool's, a look-alike),
/// or lacks the content of an example this database lists as sealed (another database's
/// companion). Found here, nothing is loaded; found by [`seal`] after the load committed,
/// the load's sealed-window content would stay in the main file.
pub fn check_companion(conn: &Connection) -> Result<()> {
    let Some(companion) = companion_path(conn)? else { return Ok(()) };
    require_companion(conn, &companion)?;
    if !companion.is_file() {
        return Ok(());
    }
    attach(conn, &companion, false).map_err(|e| anyhow::anyhow!("{e:#}; nothing was loaded"))?;
    let checked = companion_tables(conn).and_then(|tables| {
        if tables != expected_tables()? {
            bail!(
                "{}: not a sealed companion database (its tables are not those sphragis makes; made by another \
                 tool?): move it away or restore the companion; nothing was loaded",
                companion.display()
            );
        }
        match lacking(conn)? {
            (0, _) => Ok(()),
            (n, first) => bail!(
                "{}: the sealed companion database lacks the content of {n} sealed example{} (first {}); \
                 restore the companion that was made with this database; nothing was loaded",
                companion.display(),
                if n == 1 { "" } else { "s" },
                first.unwrap_or_default()
            ),
        }
    });
    detach(conn);
    checked
}

/// The tables of the attached companion as DuckDB states them, `(name, sql)` by name.
fn companion_tables(conn: &Connection) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(&format!(
        "select table_name, sql from duckdb_tables() where database_name = '{SCHEMA}' order by table_name"
    ))?;
    Ok(stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?)
}

/// The tables a new companion gets ([`COMPANION_SQL`] on an empty in-memory database),
/// as [`companion_tables`] states them.
fn expected_tables() -> Result<Vec<(String, String)>> {
    let scratch = Connection::open_in_memory()?;
    scratch.execute_batch(&format!("attach ':memory:' as {SCHEMA}; {COMPANION_SQL}"))?;
    companion_tables(&scratch)
}

/// Sealed examples whose content the attached companion lacks: their count and the
/// first id.
fn lacking(conn: &Connection) -> Result<(i64, Option<String>)> {
    Ok(conn.query_row(
        "select count(*), min(example_id) from sealed_content \
         where example_id not in (select example_id from sph_sealed.sealed_examples)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// Errors when content is sealed but `companion` is not on disk.
fn require_companion(conn: &Connection, companion: &Path) -> Result<()> {
    let sealed = sealed_count(conn)?;
    if sealed > 0 && !companion.is_file() {
        let plural = if sealed == 1 { "" } else { "s" };
        if companion.is_dir() {
            bail!(
                "{}: a folder stands where the sealed companion database file belongs; the file holds the content \
                 of the {sealed} sealed example{plural} (move the folder away and restore the file)",
                companion.display()
            );
        }
        bail!(
            "{}: the sealed companion database is missing; it holds the content of the {sealed} sealed \
             example{plural} (restore it beside the database file)",
            companion.display()
        );
    }
    Ok(())
}

/// Runs `work` with the temporary views `review_examples_content` and
/// `review_comments_content` defined on `conn`: with the sealed examples' content read
/// from the companion when `include_sealed` (and any is sealed), else the main tables as
/// they are. The views and the companion are gone when it returns.
///
/// Errors: `include_sealed`, content is sealed and the companion is missing or lacks the
/// content of a sealed example (it names the file); whatever `work` returns.
pub fn with_content<T>(conn: &Connection, include_sealed: bool, work: impl FnOnce() -> Result<T>) -> Result<T> {
    let attached = if include_sealed && sealed_count(conn)? > 0 {
        let Some(companion) = companion_path(conn)? else {
            bail!("this database lists sealed content but has no file beside which a companion could be")
        };
        require_companion(conn, &companion)?;
        attach(conn, &companion, false)?;
        // Every sealed example's content must be there, or verdicts would be computed on nothing.
        let lacking: (i64, Option<String>) = match lacking(conn) {
            Ok(row) => row,
            Err(e) => {
                detach(conn);
                return Err(e.context(format!("{}: not a sealed companion database", companion.display())));
            }
        };
        if let (n @ 1.., first) = lacking {
            detach(conn);
            bail!(
                "{}: the sealed companion database lacks the content of {n} sealed example{} (first {}); \
                 restore the companion that was made with this database",
                companion.display(),
                if n == 1 { "" } else { "s" },
                first.unwrap_or_default()
            );
        }
        true
    } else {
        false
    };
    let result = conn
        .execute_batch(if attached { CONTENT_SEALED_SQL } else { CONTENT_OPEN_SQL })
        .context("defining the content views")
        .and_then(|_| work());
    let _ = conn.execute_batch(
        "drop view if exists temp.main.review_examples_content; drop view if exists temp.main.review_comments_content",
    );
    if attached {
        detach(conn);
    }
    result
}
