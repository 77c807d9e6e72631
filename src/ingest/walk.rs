//! Folder walks that end and read each file once: a link to a folder met inside a walked
//! folder is not followed (a `parent -> ..` link would walk for ever, a `latest -> trajs`
//! link would read a run's files twice), each folder is entered once by device and inode,
//! and a file reached by two paths (a link to a file, a hard link, a file named on the
//! command line and found in a folder too) is one file: read by the first path met,
//! the others listed as not read. A folder or file named on the command line is followed
//! even when it is a link.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A path met by a walk and not read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    /// What the path is and why it is not read.
    pub why: String,
}

/// One entry of a walked folder ([`Walk::list`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A subfolder (never reached through a link), to walk.
    Folder(PathBuf),
    /// Anything else: a file, a link to a file, a broken link.
    File(PathBuf),
}

/// The folders entered and the files taken so far, by (device, inode).
#[derive(Debug, Default)]
pub struct Walk {
    folders: HashSet<(u64, u64)>,
    files: HashMap<(u64, u64), PathBuf>,
    /// What was met and not read: links to folders, folders and files met again.
    pub skipped: Vec<Skipped>,
}

impl Walk {
    /// Enters `dir`: its entries sorted by path, or `None` when this folder (by device
    /// and inode) was entered before (listed as not read). Links to folders among the
    /// entries are listed as not read and left out.
    ///
    /// Errors: the folder cannot be listed.
    pub fn list(&mut self, dir: &Path) -> std::io::Result<Option<Vec<Entry>>> {
        let meta = std::fs::metadata(dir)?;
        if !self.folders.insert((meta.dev(), meta.ino())) {
            self.skipped.push(Skipped { path: dir.to_path_buf(), why: "a folder already walked".into() });
            return Ok(None);
        }
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let link = entry.file_type()?.is_symlink();
            if !path.is_dir() {
                entries.push(Entry::File(path));
            } else if link {
                let target = std::fs::read_link(&path).map(|t| t.display().to_string()).unwrap_or_default();
                self.skipped.push(Skipped {
                    path,
                    why: format!("a link to the folder {target}, not followed: name the folder to read it"),
                });
            } else {
                entries.push(Entry::Folder(path));
            }
        }
        entries.sort_by(|a, b| a.path().cmp(b.path()));
        Ok(Some(entries))
    }

    /// Whether to read `file`: false when the same file (device and inode) was taken
    /// before by another path (listed as not read, naming that path). A path that
    /// cannot be examined (a broken link) is taken, for its reader to refuse.
    pub fn take(&mut self, file: &Path) -> bool {
        let Ok(meta) = std::fs::metadata(file) else { return true };
        match self.files.get(&(meta.dev(), meta.ino())) {
            Some(first) => {
                self.skipped.push(Skipped {
                    path: file.to_path_buf(),
                    why: format!("the same file as {}, read once", first.display()),
                });
                false
            }
            None => {
                self.files.insert((meta.dev(), meta.ino()), file.to_path_buf());
                true
            }
        }
    }
}

impl Entry {
    pub fn path(&self) -> &Path {
        match self {
            Entry::Folder(p) | Entry::File(p) => p,
        }
    }
}
