//! [`InputError`]: what is wrong with an input, in the field's terms, and where.

use std::fmt;
use std::path::{Path, PathBuf};

/// An input error that names the file, the line (or record) and the field.
///
/// Display: `<path>:<line>: field `<field>`: <message>`, omitting what is unknown.
/// The message says what was expected in the field's terms (never a Rust or serde type
/// name).
#[derive(Debug, Clone)]
pub struct InputError {
    /// The input file, as given on the command line (a label: the file is read once,
    /// through [`crate::ingest::read::Input`]).
    pub path: PathBuf,
    /// 1-based line (JSONL; the line where a JSON array's row starts; the line of a JSON
    /// document where the parser stopped), or CSV record line.
    pub line: Option<u64>,
    /// Dotted path of the field, e.g. `comments[0].message`.
    pub field: Option<String>,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// An error at `line` (1-based) of `path`, in `field` when known.
    pub fn at(path: &Path, line: Option<u64>, field: Option<&str>, message: impl Into<String>) -> Self {
        Self { path: path.to_path_buf(), line, field: field.map(str::to_string), message: message.into() }
    }
}
