//! Writes adapter output into `review_examples` and `review_comments` through DuckDB
//! appenders, inside the caller's load transaction.

use super::model::{Example, suffix, timestamp_value};
use anyhow::{Context, Result};
use duckdb::{Appender, Connection, params};

/// Appends examples and their comments for one input file.
pub struct ExampleWriter<'conn> {
    examples: Appender<'conn>,
    comments: Appender<'conn>,
    file_id: i32,
    written: i64,
}

impl<'conn> ExampleWriter<'conn> {
    /// Opens appenders on the review tables; rows carry `file_id`.
    pub fn new(conn: &'conn Connection, file_id: i32) -> Result<Self> {
        Ok(Self {
            examples: conn.appender("review_examples")?,
            comments: conn.appender("review_comments")?,
            file_id,
            written: 0,
        })
    }

    /// Appends one example and its comments.
    pub fn append(&mut self, e: &Example) -> Result<()> {
        self.examples.append_row(params![
            e.example_id,
            e.org,
            e.project,
            e.change,
            e.patch_set,
            e.file_path,
            suffix(e.file_path.as_deref()),
            e.hunk,
            e.target,
            timestamp_value(e.created_at),
            e.revision_kind,
            e.predecessor_id,
            self.file_id,
            e.record,
        ])?;
        for c in &e.comments {
            self.comments.append_row(params![
                c.comment_id,
                e.example_id,
                c.author_id,
                c.message,
                timestamp_value(c.created_at),
                c.in_reply_to,
                c.tag,
                c.service_account,
                self.file_id,
                c.record,
                c.fix_suggestions,
                c.robot_id,
            ])?;
        }
        self.written += 1;
        Ok(())
    }

    /// Flushes both appenders and returns the number of examples written.
    ///
    /// Errors: a constraint fails on flush, for example an example id or
    /// (example id, comment id) pair that is already in the database.
    pub fn finish(mut self) -> Result<i64> {
        self.examples.flush().context("writing examples (an example_id may already be loaded from another file)")?;
        self.comments.flush().context("writing comments (a comment_id may repeat within its example)")?;
        Ok(self.written)
    }
}
