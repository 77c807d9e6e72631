//! Parquet inputs: a file (or a folder or glob of shards, as Hugging Face lays a split
//! out: `data/train-00000-of-00004.parquet` …) read once, hashed, and handed to DuckDB's
//! Parquet reader (`read_parquet`), which decodes it; nothing here decodes Parquet.
//!
//! The single hashed read holds: [`stage`] reads the file once through [`Input`] (the
//! SHA-256 of every byte, computed as it is read) into an anonymous in-memory file
//! ([`Staged`]; on Linux a `memfd`, elsewhere a private temporary file removed on drop),
//! and DuckDB reads that copy, never the path. The bytes DuckDB decodes are the bytes
//! hashed and logged, even if the file changes meanwhile.
//!
//! Parquet has no lines: errors name the row, 1-based in its file, and the column
//! ([`RowError`]: `data.parquet:row 3: column `input_ids`: …`). Loaders reuse their JSON
//! path (a row as the JSON object DuckDB's `to_json` writes) and turn its errors into row
//! errors with [`name_rows`].

use super::log::ReadFile;
use super::walk::{Entry, Skipped, Walk};
use super::{Input, InputError};
pub use crate::db::identifier as ident;
use anyhow::{Context, Result, bail};
use duckdb::Connection;
use duckdb::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch};
use duckdb::arrow::datatypes::{DataType, Int64Type};
use std::fmt;
use std::path::{Path, PathBuf};

/// The four bytes a Parquet file starts (and ends) with.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// Whether a `load` argument names a set of shards: a folder, or a path that does not exist
/// and holds a glob character (`*`, `?`, `[`).
pub fn is_shard_set(arg: &Path) -> bool {
    arg.is_dir() || (!arg.exists() && arg.to_string_lossy().contains(['*', '?', '[']))
}

/// Whether a `load` argument is read as Parquet: a set of shards ([`is_shard_set`]) or a
/// file named `*.parquet` (any case).
pub fn is_parquet_arg(arg: &Path) -> bool {
    is_shard_set(arg) || arg.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// The Parquet files an argument names, in name order: a folder's `*.parquet` files (in
/// its subfolders too, by relative path: `data/train-00000-of-00002.parquet` before
/// `data/train-00001-of-00002.parquet`), a glob's matches (DuckDB's `glob`), or the file.
/// A file reached by two paths is read once ([`super::walk`]); links to folders inside a
/// folder are not followed.
///
/// Errors: a folder or glob with no Parquet file.
pub fn shards(conn: &Connection, arg: &Path) -> Result<Vec<PathBuf>> {
    Ok(shards_and_skipped(conn, arg)?.0)
}

/// [`shards`] and the paths met and not read: links to folders, files reached again by
/// another path ([`super::walk::Skipped`]).
pub fn shards_and_skipped(conn: &Connection, arg: &Path) -> Result<(Vec<PathBuf>, Vec<Skipped>)> {
    let text = arg.to_string_lossy();
    let mut found = Vec::new();
    if !is_shard_set(arg) {
        return Ok((vec![arg.to_path_buf()], Vec::new()));
    }
    let mut walked = Walk::default();
    if arg.is_dir() {
        fn walk(dir: &Path, walked: &mut Walk, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
            for entry in walked.list(dir)?.unwrap_or_default() {
                match entry {
                    Entry::Folder(path) => walk(&path, walked, out)?,
                    Entry::File(path) if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet")) => {
                        out.push(path)
                    }
                    Entry::File(_) => {}
                }
            }
            Ok(())
        }
        walk(arg, &mut walked, &mut found).with_context(|| format!("{}: cannot list the folder", arg.display()))?;
    } else {
        let mut stmt = conn.prepare("select file from glob(?)")?;
        found = stmt
            .query_map([text.as_ref()], |r| r.get::<_, String>(0))?
            .map(|p| p.map(PathBuf::from))
            .collect::<duckdb::Result<_>>()?;
    }
    found.sort();
    // the database's own files (`<db>`, `.wal`, `.tmp/`, `.sealed.duckdb`, ...) are never
    // its input: a glob such as '*' beside the database matched the file it writes to
    if let Some((_, db)) = crate::db::checkpoint::main_database(conn)? {
        let absolute =
            |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| std::path::absolute(p).unwrap_or_default());
        let db = absolute(&db).to_string_lossy().into_owned();
        found.retain(|p| {
            let p = absolute(p);
            let p = p.to_string_lossy();
            p != db && !p.starts_with(&format!("{db}."))
        });
    }
    found.retain(|p| walked.take(p));
    if found.is_empty() {
        bail!("{}: no Parquet file (*.parquet) there", arg.display());
    }
    Ok((found, walked.skipped))
}

/// A Parquet file's bytes, read once and hashed, in an anonymous file DuckDB opens by
/// [`Staged::source`]. Dropped, the copy is gone.
pub struct Staged {
    /// Keeps the copy open (the memfd lives as long as this handle).
    _file: std::fs::File,
    /// The path DuckDB opens: `/proc/self/fd/<fd>` (Linux) or the temporary file.
    source: String,
    /// The temporary file to remove on drop (not Linux).
    temp: Option<PathBuf>,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(temp) = &self.temp {
            let _ = std::fs::remove_file(temp);
        }
    }
}

#[cfg(target_os = "linux")]
fn anonymous_file() -> Result<(std::fs::File, String, Option<PathBuf>)> {
    use std::os::fd::FromRawFd;
    // SAFETY: a NUL-terminated name and a valid flag; the descriptor returned is owned
    // by the File made from it and by nothing else.
    let fd = unsafe { libc::memfd_create(c"sphragis-parquet".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()).context("cannot make an in-memory file for a Parquet input");
    }
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    Ok((file, format!("/proc/self/fd/{fd}"), None))
}

#[cfg(not(target_os = "linux"))]
fn anonymous_file() -> Result<(std::fs::File, String, Option<PathBuf>)> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = std::env::temp_dir().join(format!("sphragis-parquet-{}-{n}.parquet", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&temp)
        .with_context(|| format!("{}: cannot make a temporary copy of a Parquet input", temp.display()))?;
    let source = temp.to_string_lossy().into_owned();
    Ok((file, source, Some(temp)))
}

/// Errors unless `head` (the first bytes of the file at `path`) starts with the Parquet
/// magic `PAR1`, naming what the file looks like instead.
fn refuse_unless_parquet(path: &Path, head: &[u8]) -> Result<()> {
    if !head.starts_with(MAGIC) {
        let looks = match head.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') | Some(b'[') => " (it looks like JSON: name it .jsonl or .json)",
            _ => "",
        };
        bail!("{}: not a Parquet file: it does not start with PAR1{looks}", path.display());
    }
    Ok(())
}

/// Checks, before anything is opened for writing, that the set of shards `arg` names
/// ([`is_shard_set`]) can be read: it matches a Parquet file ([`shards`], matched by
/// `conn` as the load will match it), and every file it matches opens and starts with
/// `PAR1`. Reads the first 4 bytes of each.
///
/// Errors: those of [`shards`]; a matched file that cannot be opened or read, or that is
/// not a Parquet file (named).
pub fn check_shard_set(conn: &Connection, arg: &Path) -> Result<()> {
    use std::io::Read;
    for path in shards(conn, arg)? {
        let mut head = Vec::with_capacity(MAGIC.len());
        std::fs::File::open(&path)
            .and_then(|f| f.take(MAGIC.len() as u64).read_to_end(&mut head))
            .with_context(|| format!("{}: cannot open", path.display()))?;
        refuse_unless_parquet(&path, &head)?;
    }
    Ok(())
}

/// Reads the Parquet file at `path` once (SHA-256 as it is read) into a [`Staged`] copy;
/// returns the file's record (path, bytes, SHA-256) and the copy.
///
/// Errors: the file cannot be opened or read, or does not start with the Parquet magic
/// `PAR1` (named, with what it looks like instead).
pub fn stage(path: &Path) -> Result<(ReadFile, Staged)> {
    use std::io::BufRead;
    let (mut input, _) = Input::open(path)?;
    let head = input.fill_buf().with_context(|| format!("{}: cannot read", path.display()))?;
    refuse_unless_parquet(path, head)?;
    let (mut file, source, temp) = anonymous_file()?;
    std::io::copy(&mut input, &mut file).with_context(|| format!("{}: cannot read", path.display()))?;
    let (bytes, sha256) = input.finish().map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
    let read = ReadFile { path: path.to_path_buf(), bytes, sha256 };
    Ok((read, Staged { _file: file, source, temp }))
}

impl Staged {
    /// `read_parquet('<copy>', file_row_number = true)`: the table of the copy's rows,
    /// with DuckDB's 0-based `file_row_number`.
    pub fn source(&self) -> String {
        format!("read_parquet('{}', file_row_number = true)", self.source.replace('\'', "''"))
    }

    /// The file's columns as `(name, DuckDB type)`, in file order (`file_row_number` not
    /// included). Errors: DuckDB cannot read the file's schema (its message, with `path`).
    pub fn columns(&self, conn: &Connection, path: &Path) -> Result<Vec<(String, String)>> {
        let sql = format!("describe select * exclude (file_row_number) from {}", self.source());
        let mut stmt =
            conn.prepare(&sql).with_context(|| format!("{}: not a readable Parquet file", path.display()))?;
        let columns = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .and_then(|rows| rows.collect::<duckdb::Result<Vec<_>>>())
            .with_context(|| format!("{}: not a readable Parquet file", path.display()))?;
        Ok(columns)
    }

    /// The SQL expression that reads column `name` (of DuckDB type `duckdb_type`) as
    /// text for `to_json`: the column itself, or for a BLOB column (a string written as
    /// BYTE_ARRAY without the UTF8 annotation, as older Spark, Hive and Arrow writers do)
    /// its bytes decoded as UTF-8. `to_json` writes a BLOB as `\xNN` escape text, which
    /// was stored in place of the string.
    ///
    /// Errors ([`RowError`]): a BLOB value that is not UTF-8 (its row and column); a
    /// nested type holding BLOB (the column).
    pub fn text_expr(&self, conn: &Connection, path: &Path, name: &str, duckdb_type: &str) -> Result<String> {
        let column = ident(name);
        if duckdb_type == "BLOB" {
            let sql = format!(
                "select min(file_row_number) from {} where {column} is not null and try(decode({column})) is null",
                self.source()
            );
            let bad: Option<i64> = conn
                .query_row(&sql, [], |r| r.get(0))
                .with_context(|| format!("{}: cannot read its rows", path.display()))?;
            if let Some(row) = bad {
                return Err(RowError {
                    path: path.to_path_buf(),
                    row: Some(row as u64 + 1),
                    column: Some(name.to_string()),
                    message: "is BLOB (bytes, not a string) and its value is not UTF-8".into(),
                }
                .into());
            }
            return Ok(format!("decode({column})"));
        }
        if duckdb_type.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|w| w == "BLOB") {
            return Err(RowError {
                path: path.to_path_buf(),
                row: None,
                column: Some(name.to_string()),
                message: format!("is {duckdb_type}: it holds BLOB values (bytes), not strings"),
            }
            .into());
        }
        Ok(column)
    }

    /// Every row as one JSON object a line, in file order, as DuckDB's `to_json` writes
    /// a row (a list as an array, a struct as an object, a null as `null`): what a JSON
    /// lines loader reads, line N being row N.
    ///
    /// Errors: DuckDB cannot read the file (its message, with `path`).
    pub fn json_lines(&self, conn: &Connection, path: &Path) -> Result<String> {
        let columns = self.columns(conn, path)?;
        if columns.is_empty() {
            bail!("{}: the Parquet file has no column", path.display());
        }
        let fields: Vec<String> = columns
            .iter()
            .map(|(name, t)| Ok(format!("{} := {}", ident(name), self.text_expr(conn, path, name, t)?)))
            .collect::<Result<_>>()?;
        let sql = format!(
            "select to_json(struct_pack({})) from {} order by file_row_number",
            fields.join(", "),
            self.source()
        );
        let mut stmt = conn.prepare(&sql).with_context(|| format!("{}: cannot read its rows", path.display()))?;
        let mut text = String::new();
        let mut rows = stmt.query([]).with_context(|| format!("{}: cannot read its rows", path.display()))?;
        while let Some(row) = rows.next().with_context(|| format!("{}: cannot read its rows", path.display()))? {
            let line: String = row.get(0)?;
            text.push_str(&line);
            text.push('\n');
        }
        Ok(text)
    }

    /// Runs `select` (a query over [`Staged::source`]) and hands each Arrow batch of its
    /// result to `each`, in the order DuckDB returns them. DuckDB streams the result on its
    /// own connection (a clone of `conn`) on another thread, two batches ahead, so that
    /// decoding overlaps with what `each` does (the loader's appends on its connection).
    ///
    /// Errors: DuckDB fails (its message, with `path`), or `each` does (the reading
    /// thread then stops at its next batch).
    pub fn batches(
        &self,
        conn: &Connection,
        path: &Path,
        select: &str,
        mut each: impl FnMut(&RecordBatch) -> Result<()>,
    ) -> Result<()> {
        let reader = conn.try_clone()?;
        let unreadable = || format!("{}: cannot read its rows", path.display());
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<RecordBatch>>(2);
            scope.spawn(move || {
                let run = || -> Result<()> {
                    let mut stmt = reader.prepare(select)?;
                    for batch in stmt.stream_arrow([])? {
                        // the receiver is gone when `each` failed: stop
                        if tx.send(batch.map_err(anyhow::Error::from)).is_err() {
                            break;
                        }
                    }
                    Ok(())
                };
                if let Err(e) = run() {
                    let _ = tx.send(Err(e));
                }
            });
            for batch in rx {
                each(&batch.with_context(unreadable)?)?;
            }
            Ok(())
        })
    }
}

/// A column of integer lists (any integer width), widened to 64 bits per batch so that
/// each row can be narrowed by its reader with the position of a value that does not fit.
pub struct IntLists {
    offsets: Vec<usize>,
    nulls: Option<duckdb::arrow::buffer::NullBuffer>,
    values: Int64Array,
    /// The values as stored when they are unsigned 64-bit (`UBIGINT[]`): one above
    /// `i64::MAX` is null in `values` and read here, to be named, not called null.
    unsigned: Option<duckdb::arrow::array::UInt64Array>,
}

/// One row of an [`IntLists`] column.
pub enum IntRow<'a> {
    /// The row's list is null.
    Null,
    /// The list's values; `Err(k)`: its value at position `k` is null.
    Values(Result<&'a [i64], usize>),
    /// The list's value at position `k` is an unsigned value above `i64::MAX`.
    Beyond(usize, u64),
}

impl IntLists {
    /// The column `array` read as lists of integers.
    ///
    /// Errors (the reason, in the field's terms): the column is not a list, or its
    /// values are not integers (`VARCHAR[]`, `DOUBLE[]`, `BOOLEAN[]`).
    pub fn of(array: &ArrayRef, duckdb_type: &str) -> Result<IntLists, String> {
        let refuse = || format!("is {duckdb_type}, not a list of integers");
        let (offsets, values): (Vec<usize>, ArrayRef) = match array.data_type() {
            DataType::List(_) => {
                let list = array.as_list::<i32>();
                (list.offsets().iter().map(|o| *o as usize).collect(), list.values().clone())
            }
            DataType::LargeList(_) => {
                let list = array.as_list::<i64>();
                (list.offsets().iter().map(|o| *o as usize).collect(), list.values().clone())
            }
            _ => return Err(refuse()),
        };
        if !values.data_type().is_integer() && values.data_type() != &DataType::Null {
            return Err(refuse());
        }
        let unsigned = (values.data_type() == &DataType::UInt64)
            .then(|| values.as_primitive::<duckdb::arrow::datatypes::UInt64Type>().clone());
        let values =
            duckdb::arrow::compute::cast(&values, &DataType::Int64).map_err(|e| format!("{}: {e}", refuse()))?;
        Ok(IntLists {
            offsets,
            nulls: array.nulls().cloned(),
            values: values.as_primitive::<Int64Type>().clone(),
            unsigned,
        })
    }

    /// Row `i` (0-based in the batch).
    pub fn row(&self, i: usize) -> IntRow<'_> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return IntRow::Null;
        }
        let (start, end) = (self.offsets[i], self.offsets[i + 1]);
        if self.values.null_count() > 0
            && let Some(k) = (start..end).find(|k| self.values.is_null(*k))
        {
            // (the cast to 64 bits made a UBIGINT above i64::MAX null)
            if let Some(u) = self.unsigned.as_ref().filter(|u| u.is_valid(k)) {
                return IntRow::Beyond(k - start, u.value(k));
            }
            return IntRow::Values(Err(k - start));
        }
        IntRow::Values(Ok(&self.values.values()[start..end]))
    }
}

/// An error in a Parquet row: file, 1-based row, column (or a dotted path inside it).
///
/// Display: `<path>:row <row>: column `<column>`: <message>`, omitting what is unknown.
#[derive(Debug, Clone)]
pub struct RowError {
    pub path: PathBuf,
    /// 1-based row in its file.
    pub row: Option<u64>,
    /// The column, or a path inside it (`messages[2].role`).
    pub column: Option<String>,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(row) = self.row {
            write!(f, ":row {row}")?;
        }
        if let Some(column) = &self.column {
            write!(f, ": column `{column}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for RowError {}

/// Turns an [`InputError`] about the Parquet file `path` that a JSON-lines path raised
/// (line N being row N; a field `[k]…` naming the 0-based row k) into a [`RowError`]; any
/// other error is returned as it is.
pub fn name_rows(path: &Path, err: anyhow::Error) -> anyhow::Error {
    let e = match err.downcast::<InputError>() {
        Ok(e) if e.path == path => e,
        Ok(e) => return e.into(),
        Err(err) => return err,
    };
    // a leading `[k]` is the 0-based row (the trajectory formats' prefix)
    let (indexed, rest) = match e.field.as_deref().and_then(|f| f.strip_prefix('[')).and_then(|f| f.split_once(']')) {
        Some((k, rest)) if k.parse::<u64>().is_ok() => (k.parse::<u64>().ok(), Some(rest.trim_start_matches('.'))),
        _ => (None, None),
    };
    let row = e.line.or(indexed.map(|k| k + 1));
    let column = match rest {
        Some("") => None,
        Some(rest) => Some(rest.to_string()),
        None => e.field.clone(),
    };
    RowError { path: e.path, row, column, message: e.message }.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_errors_name_row_and_column() {
        let path = Path::new("d.parquet");
        let line = InputError::at(path, Some(3), Some("input_ids[2]"), "7000000000 does not fit a 32-bit integer");
        assert_eq!(
            name_rows(path, line.into()).to_string(),
            "d.parquet:row 3: column `input_ids[2]`: 7000000000 does not fit a 32-bit integer"
        );
        let indexed = InputError::at(path, Some(4), Some("[3].messages[1].role"), "missing");
        assert_eq!(name_rows(path, indexed.into()).to_string(), "d.parquet:row 4: column `messages[1].role`: missing");
        let whole = InputError::at(path, None, Some("[0]"), "trajectory x has no message");
        assert_eq!(name_rows(path, whole.into()).to_string(), "d.parquet:row 1: trajectory x has no message");
        // another file's error is left as it is
        let other = InputError::at(Path::new("e.jsonl"), Some(1), None, "x");
        assert_eq!(name_rows(path, other.into()).to_string(), "e.jsonl:1: x");
    }
}
