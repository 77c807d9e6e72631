//! Writes adapter output into `review_examples` and `review_comments` through DuckDB
//! appenders, inside the caller's load transaction.

use super::model::{Example, suffix, timestamp_value};
use anyhow::{Context, Result, bail};
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
    ///
    /// Errors: a `comment_id` that repeats within the example (the review tables carry no
    /// primary key since migration 0024: this and the loader's example-id check keep
    /// (example_id, comment_id) unique; every adapter names such a repeat at its field
    /// first, so this error is a last guard), or DuckDB's appender refusing a value.
    pub fn append(&mut self, e: &Example) -> Result<()> {
        if let Some((j, c)) =
            e.comments.iter().enumerate().find(|(j, c)| e.comments[..*j].iter().any(|d| d.comment_id == c.comment_id))
        {
            bail!(
                "example {:?}: comment {:?} (comment {}) repeats an earlier comment of the example",
                e.example_id,
                c.comment_id,
                j + 1
            );
        }
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
    /// Errors: DuckDB refuses a row on flush (a NOT NULL column without a value).
    pub fn finish(mut self) -> Result<i64> {
        self.examples.flush().context("writing examples")?;
        self.comments.flush().context("writing comments")?;
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::model::Comment;

    /// With no primary key on review_comments (migration 0024), the writer itself refuses
    /// a comment id twice in one example; the same id in two examples is two comments.
    #[test]
    fn comment_id_repeated_within_an_example_is_refused() {
        let conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::apply(&conn).unwrap();
        let comment = |id: &str| Comment { comment_id: id.into(), message: "m".into(), ..Default::default() };
        let example = |id: &str, comments: Vec<Comment>| Example {
            example_id: id.into(),
            org: "o".into(),
            comments,
            ..Default::default()
        };
        let mut writer = ExampleWriter::new(&conn, 1).unwrap();
        writer.append(&example("e1", vec![comment("c1"), comment("c2")])).unwrap();
        writer.append(&example("e2", vec![comment("c1")])).unwrap();
        let err = writer.append(&example("e3", vec![comment("c1"), comment("c2"), comment("c1")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "example \"e3\": comment \"c1\" (comment 3) repeats an earlier comment of the example"
        );
        assert_eq!(writer.finish().unwrap(), 2);
        let n: i64 = conn.query_row("select count(*) from review_comments", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 3);
    }
}
