//! Schema migrations: numbered SQL files in `migrations/`, embedded in the binary.
//!
//! Modelled on sqlx's runner (SPEC §1 principle 1): each file is applied once, in
//! order (the pending ones inside one transaction), and recorded in `sph_migrations` with
//! its SHA-256 (CRLF normalized to LF before hashing). On every open the recorded migrations are
//! compared with the embedded ones: an applied migration whose file changed, or one
//! this binary does not know, is an error and nothing is re-run.

use anyhow::{Context, Result, bail};
use duckdb::Connection;

/// One embedded migration file.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Leading number of the file name; applied in increasing order.
    pub version: i32,
    /// The rest of the file name, without `.sql`.
    pub description: &'static str,
    /// File name under `migrations/`.
    pub file: &'static str,
    /// The SQL text.
    pub sql: &'static str,
}

/// Every migration, in order. A test checks that each file in `migrations/` is listed.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "core",
        file: "0001_core.sql",
        sql: include_str!("../../migrations/0001_core.sql"),
    },
    Migration {
        version: 2,
        description: "review",
        file: "0002_review.sql",
        sql: include_str!("../../migrations/0002_review.sql"),
    },
    Migration {
        version: 3,
        description: "splits",
        file: "0003_splits.sql",
        sql: include_str!("../../migrations/0003_splits.sql"),
    },
    Migration {
        version: 4,
        description: "sft",
        file: "0004_sft.sql",
        sql: include_str!("../../migrations/0004_sft.sql"),
    },
    Migration {
        version: 5,
        description: "pools",
        file: "0005_pools.sql",
        sql: include_str!("../../migrations/0005_pools.sql"),
    },
    Migration {
        version: 6,
        description: "input_hashes",
        file: "0006_input_hashes.sql",
        sql: include_str!("../../migrations/0006_input_hashes.sql"),
    },
    Migration {
        version: 7,
        description: "freeze_sealed",
        file: "0007_freeze_sealed.sql",
        sql: include_str!("../../migrations/0007_freeze_sealed.sql"),
    },
    Migration {
        version: 8,
        description: "sql_registry",
        file: "0008_sql_registry.sql",
        sql: include_str!("../../migrations/0008_sql_registry.sql"),
    },
    Migration {
        version: 9,
        description: "outcomes_graded",
        file: "0009_outcomes_graded.sql",
        sql: include_str!("../../migrations/0009_outcomes_graded.sql"),
    },
    Migration {
        version: 10,
        description: "stored_definitions",
        file: "0010_stored_definitions.sql",
        sql: include_str!("../../migrations/0010_stored_definitions.sql"),
    },
    Migration {
        version: 11,
        description: "tool_commands",
        file: "0011_tool_commands.sql",
        sql: include_str!("../../migrations/0011_tool_commands.sql"),
    },
    Migration {
        version: 12,
        description: "review_hosts",
        file: "0012_review_hosts.sql",
        sql: include_str!("../../migrations/0012_review_hosts.sql"),
    },
    Migration {
        version: 13,
        description: "eval_runs",
        file: "0013_eval_runs.sql",
        sql: include_str!("../../migrations/0013_eval_runs.sql"),
    },
    Migration {
        version: 14,
        description: "view_segments",
        file: "0014_view_segments.sql",
        sql: include_str!("../../migrations/0014_view_segments.sql"),
    },
    Migration {
        version: 15,
        description: "ingest_anomalies",
        file: "0015_ingest_anomalies.sql",
        sql: include_str!("../../migrations/0015_ingest_anomalies.sql"),
    },
    Migration {
        version: 16,
        description: "checks",
        file: "0016_checks.sql",
        sql: include_str!("../../migrations/0016_checks.sql"),
    },
    Migration {
        version: 17,
        description: "eval_outcome_classes",
        file: "0017_eval_outcome_classes.sql",
        sql: include_str!("../../migrations/0017_eval_outcome_classes.sql"),
    },
    Migration {
        version: 18,
        description: "robot_comments",
        file: "0018_robot_comments.sql",
        sql: include_str!("../../migrations/0018_robot_comments.sql"),
    },
    Migration {
        version: 19,
        description: "sft_outcome_classes",
        file: "0019_sft_outcome_classes.sql",
        sql: include_str!("../../migrations/0019_sft_outcome_classes.sql"),
    },
    Migration {
        version: 20,
        description: "sft_view_packs",
        file: "0020_sft_view_packs.sql",
        sql: include_str!("../../migrations/0020_sft_view_packs.sql"),
    },
    Migration {
        version: 21,
        description: "trajectory_attempts",
        file: "0021_trajectory_attempts.sql",
        sql: include_str!("../../migrations/0021_trajectory_attempts.sql"),
    },
    Migration {
        version: 22,
        description: "inspect_tool_aliases",
        file: "0022_inspect_tool_aliases.sql",
        sql: include_str!("../../migrations/0022_inspect_tool_aliases.sql"),
    },
    Migration {
        version: 23,
        description: "refine_without_keys",
        file: "0023_refine_without_keys.sql",
        sql: include_str!("../../migrations/0023_refine_without_keys.sql"),
    },
    Migration {
        version: 24,
        description: "review_without_keys",
        file: "0024_review_without_keys.sql",
        sql: include_str!("../../migrations/0024_review_without_keys.sql"),
    },
    Migration {
        version: 25,
        description: "eval_log_headers",
        file: "0025_eval_log_headers.sql",
        sql: include_str!("../../migrations/0025_eval_log_headers.sql"),
    },
];

/// Lowercase hex SHA-256 of `sql` after CRLF → LF.
pub fn checksum(sql: &str) -> String {
    crate::hash::sha256_hex(sql.replace("\r\n", "\n").as_bytes())
}

/// Checks, without changing anything, that every migration this binary has is applied
/// unchanged and none other is. Errors say what differs, or that the file holds no
/// sphragis schema at all.
pub fn check_current(conn: &Connection) -> Result<()> {
    let mut stmt = match conn.prepare("select version, sha256 from sph_migrations order by version") {
        Ok(stmt) => stmt,
        // asked only when the read fails: every read-only open comes through here
        Err(e) => {
            let recorded: i64 = conn.query_row(
                "select count(*) from duckdb_tables() where table_name = 'sph_migrations' \
                 and database_name = current_database()",
                [],
                |r| r.get(0),
            )?;
            if recorded == 0 {
                bail!("not a sphragis database: it holds no sph_migrations table (a DuckDB file another tool made?)");
            }
            return Err(e.into());
        }
    };
    let applied: Vec<(i32, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<duckdb::Result<_>>()?;
    let expected: Vec<(i32, String)> = MIGRATIONS.iter().map(|m| (m.version, checksum(m.sql))).collect();
    if applied != expected {
        bail!(
            "the file's schema ({} migrations) is not this sphragis's ({}); run `sphragis init` to migrate it",
            applied.len(),
            expected.len()
        );
    }
    Ok(())
}

/// Applies pending migrations and verifies applied ones.
///
/// Returns the versions applied by this call (empty when the file is up to date).
/// Errors: an applied migration was edited (checksum differs), the file holds a
/// migration this binary does not know (written by a newer sphragis), or a migration's
/// SQL fails (then nothing this call applied is kept).
pub fn apply(conn: &Connection) -> Result<Vec<i32>> {
    // a file another tool made (tables, no sph_migrations) is not migrated in place:
    // sphragis would add its tables among someone else's, or half of them
    let (ours, tables): (i64, i64) = conn.query_row(
        "select count(*) filter (where table_name = 'sph_migrations'), count(*) from duckdb_tables() \
         where database_name = current_database() and not internal",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if ours == 0 && tables > 0 {
        bail!(
            "not a sphragis database: it holds {tables} table(s) but no sph_migrations (made by another tool?); \
             nothing was written to it: pass a new file with --db"
        );
    }
    conn.execute_batch(
        "create table if not exists sph_migrations (
            version      integer primary key,
            description  varchar not null,
            sha256       varchar not null,
            applied_at   timestamp not null default current_timestamp,
            execution_ms bigint not null
        )",
    )?;
    let mut stmt = conn.prepare("select version, description, sha256 from sph_migrations order by version")?;
    let applied: Vec<(i32, String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<duckdb::Result<_>>()?;
    for (version, description, sha) in &applied {
        let Some(known) = MIGRATIONS.iter().find(|m| m.version == *version) else {
            bail!(
                "database has migration {version:04} ({description}) that this sphragis does not know; \
                 it was written by a newer sphragis"
            );
        };
        let now = checksum(known.sql);
        if &now != sha {
            bail!(
                "migration migrations/{} was edited after it was applied to this database \
                 (recorded sha256 {sha}, file has {now}); add a new migration instead",
                known.file
            );
        }
    }
    let pending: Vec<&Migration> = MIGRATIONS.iter().filter(|m| !applied.iter().any(|a| a.0 == m.version)).collect();
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    // Every pending migration in one transaction, in order, each recorded as it is applied:
    // DuckDB commits once (a new file: 20 migrations, one commit), and a migration that
    // fails leaves the file as it was before this call.
    super::in_transaction(conn, || {
        let mut record = conn
            .prepare("insert into sph_migrations (version, description, sha256, execution_ms) values (?, ?, ?, ?)")?;
        for migration in &pending {
            let started = std::time::Instant::now();
            conn.execute_batch(migration.sql)
                .and_then(|_| {
                    record.execute(duckdb::params![
                        migration.version,
                        migration.description,
                        checksum(migration.sql),
                        started.elapsed().as_millis() as i64
                    ])
                })
                .with_context(|| format!("applying migration migrations/{}", migration.file))?;
        }
        Ok(())
    })?;
    Ok(pending.iter().map(|m| m.version).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_on_disk_is_registered_in_order() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        files.sort();
        let registered: Vec<&str> = MIGRATIONS.iter().map(|m| m.file).collect();
        assert_eq!(files, registered);
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "migrations are numbered 1, 2, 3, ... without gaps");
            assert_eq!(m.file, format!("{:04}_{}.sql", m.version, m.description));
        }
    }

    /// The number of primary keys on tables `a` and `b`.
    fn primary_keys(conn: &Connection, a: &str, b: &str) -> i64 {
        conn.query_row(
            "select count(*) from duckdb_constraints() where table_name in (?, ?) and constraint_type = 'PRIMARY KEY'",
            [a, b],
            |r| r.get(0),
        )
        .unwrap()
    }

    /// Every row of tables `a` and `b` as text, `|` between rows.
    fn rows_as_text(conn: &Connection, a: &str, b: &str) -> (String, String) {
        conn.query_row(
            &format!(
                "select (select string_agg(t::varchar, '|') from {a} as t), (select string_agg(t::varchar, '|') from {b} as t)"
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    /// 0024 copies the review tables' rows into tables without primary keys: a file
    /// loaded under 0023 keeps every row and column value, and loses only the keys.
    #[test]
    fn review_tables_lose_their_keys_and_keep_their_rows() {
        let conn = Connection::open_in_memory().unwrap();
        for m in MIGRATIONS.iter().filter(|m| m.version < 24) {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch(
            "insert into review_examples values ('e1', 'qt', 'p', '42', 3, 'a.py', '.py', 'x = 1', 'x = 2',
                 timestamp '2024-01-02 03:04:05', 'REWORK', null, 1, 7);
             insert into review_comments values ('c1', 'e1', '1001', 'use 2', timestamp '2024-01-02 03:04:05',
                 null, 'autogenerated:ci', false, 1, 7, 2, 'lint');",
        )
        .unwrap();
        let keys = |conn: &Connection| primary_keys(conn, "review_examples", "review_comments");
        let rows = |conn: &Connection| rows_as_text(conn, "review_comments", "review_examples");
        assert_eq!(keys(&conn), 2);
        let before = rows(&conn);
        assert!(before.0.contains("'fix_suggestions': 2, 'robot_id': lint"), "{}", before.0);
        conn.execute_batch(MIGRATIONS[23].sql).unwrap();
        assert_eq!(MIGRATIONS[23].version, 24);
        assert_eq!(keys(&conn), 0);
        assert_eq!(rows(&conn), before);
        // NOT NULL stays where the key implied it
        let err = conn
            .execute(
                "insert into review_examples (example_id, org, suffix, file_id, record) values (null, 'o', '', 1, 1)",
                [],
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("NOT NULL"), "{err}");
    }

    /// 0023 copies the refine tables' rows into tables without primary keys: a file
    /// refined under 0022 keeps every row and column value, and loses only the keys.
    #[test]
    fn refine_tables_lose_their_keys_and_keep_their_rows() {
        let conn = Connection::open_in_memory().unwrap();
        for m in MIGRATIONS.iter().filter(|m| m.version < 23) {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch(
            "insert into refine_comments values ('v1', 'e1', 'c1', false, false, true, true, false, false, false, true, false, null);
             insert into refine_examples (version, example_id, org, comments_built, comments_kept, service_comments,
                 rebase_successor, suggested_edit, fence_gerrit, fence_loose, applied_fix, target_in_comment, dedup_key,
                 removed_reason, duplicate_of, resurrected, kept, registration_file_id, registered_windows,
                 registered_halves, window_name, window_sealed, window_training, half)
             values ('v1', 'e1', 'qt', 1, 1, 0, false, true, true, false, false, false, 'k', 'suggested_edit', null,
                     false, false, 3, true, false, 'train', false, true, 'a');",
        )
        .unwrap();
        let keys = |conn: &Connection| primary_keys(conn, "refine_examples", "refine_comments");
        let rows = |conn: &Connection| rows_as_text(conn, "refine_comments", "refine_examples");
        assert_eq!(keys(&conn), 2);
        let before = rows(&conn);
        // the defaults of 0012 filled the columns the insert left out
        assert!(before.1.contains("'structured_suggestion': false, 'host_messages': 0"), "{}", before.1);
        conn.execute_batch(MIGRATIONS[22].sql).unwrap();
        assert_eq!(MIGRATIONS[22].version, 23);
        assert_eq!(keys(&conn), 0);
        assert_eq!(rows(&conn), before);
        // NOT NULL stays where the key implied it
        let err = conn
            .execute("insert into refine_comments (version, example_id, comment_id) values (null, 'e', 'c')", [])
            .unwrap_err()
            .to_string();
        assert!(err.contains("NOT NULL"), "{err}");
    }

    #[test]
    fn applies_once_then_refuses_edits_and_unknown_versions() {
        let conn = Connection::open_in_memory().unwrap();
        let every: Vec<i32> = MIGRATIONS.iter().map(|m| m.version).collect();
        assert_eq!(every, (1..=MIGRATIONS.len() as i32).collect::<Vec<_>>());
        assert_eq!(apply(&conn).unwrap(), every);
        assert!(apply(&conn).unwrap().is_empty());
        conn.execute("update sph_migrations set sha256 = 'abc' where version = 2", []).unwrap();
        let err = apply(&conn).unwrap_err().to_string();
        assert!(err.contains("0002_review.sql was edited"), "{err}");
        conn.execute("update sph_migrations set sha256 = ? where version = 2", [checksum(MIGRATIONS[1].sql)]).unwrap();
        conn.execute(
            "insert into sph_migrations (version, description, sha256, execution_ms) values (99, 'future', 'x', 0)",
            [],
        )
        .unwrap();
        let err = apply(&conn).unwrap_err().to_string();
        assert!(err.contains("migration 0099 (future)"), "{err}");
    }

    #[test]
    fn foreign_database_with_tables_is_refused_and_left_unwritten() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("create table review_examples (x integer); insert into review_examples values (1)").unwrap();
        let err = apply(&conn).unwrap_err().to_string();
        assert_eq!(
            err,
            "not a sphragis database: it holds 1 table(s) but no sph_migrations (made by another tool?); \
             nothing was written to it: pass a new file with --db"
        );
        let tables: Vec<String> = conn
            .prepare("select table_name from duckdb_tables() where not internal order by 1")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(tables, ["review_examples"]);
    }

    #[test]
    fn checksum_ignores_crlf() {
        assert_eq!(checksum("a;\r\nb;\r\n"), checksum("a;\nb;\n"));
        // sha256 of the empty string
        assert_eq!(checksum(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
