//! The one way an input file is read: [`Input`], a buffered stream over a read-ahead
//! thread that computes the SHA-256 of every byte as it is read, so the bytes a loader
//! parses are the bytes that are hashed and logged, in one read.
//!
//! A leading UTF-8 byte-order mark is skipped for every loader (it is still hashed: the
//! SHA-256 is of the file's bytes). Loaders get `&mut Input` (a [`BufRead`]) and the
//! path only as a label for errors; they never reopen the path.

use super::InputError;
use sha2::{Digest, Sha256};
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

/// Bytes per chunk read ahead.
pub const CHUNK: usize = 1 << 20;
const QUEUE: usize = 4;

/// A reader that reads `inner` ahead on its own thread, hashing each chunk there, and
/// hands the chunks over through a bounded channel. The loader's parse runs on the
/// calling thread while the read and SHA-256 run on the other core.
///
/// Memory: at most `QUEUE + 2` chunks of [`CHUNK`] bytes in flight; a chunk read through
/// goes back to the thread to be filled again (no allocation and zeroing per chunk).
/// Dropped before the end, the thread stops at its next chunk.
pub struct ReadAhead {
    chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    /// Chunks read through, returned to the thread for reuse.
    spent: std::sync::mpsc::SyncSender<Vec<u8>>,
    current: Vec<u8>,
    pos: usize,
    done: bool,
    thread: Option<std::thread::JoinHandle<(u64, String)>>,
}

impl ReadAhead {
    /// Starts the reading thread on `inner`.
    pub fn spawn<R: Read + Send + 'static>(mut inner: R) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let (spent, reuse) = std::sync::mpsc::sync_channel::<Vec<u8>>(QUEUE + 2);
        let thread = std::thread::spawn(move || {
            let mut hasher = Sha256::new();
            let mut bytes = 0u64;
            loop {
                let mut buf = reuse.try_recv().unwrap_or_default();
                // a reused chunk is already initialized up to its length: only what the
                // last fill left short is zeroed
                buf.resize(CHUNK, 0);
                let mut filled = 0;
                let result = loop {
                    match inner.read(&mut buf[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            filled += n;
                            if filled == buf.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                    break;
                }
                if filled == 0 {
                    break;
                }
                buf.truncate(filled);
                hasher.update(&buf);
                bytes += filled as u64;
                if tx.send(Ok(buf)).is_err() {
                    break;
                }
            }
            (bytes, crate::hash::hex(&hasher.finalize()))
        });
        Self { chunks: rx, spent, current: Vec::new(), pos: 0, done: false, thread: Some(thread) }
    }

    /// Reads whatever is left (so the digest covers the whole input), stops the thread
    /// and returns `(bytes, lowercase hex SHA-256)`. Errors: a read error of the file.
    pub fn finish(mut self) -> io::Result<(u64, String)> {
        while !self.done {
            match self.chunks.recv() {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => self.done = true,
            }
        }
        self.thread
            .take()
            .expect("thread joined once")
            .join()
            .map_err(|_| io::Error::other("the read-ahead thread panicked"))
    }
}

impl BufRead for ReadAhead {
    /// The rest of the current chunk, waiting for the next one when it is read through:
    /// a loader reads the chunk the thread hashed, with no copy in between.
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.current.len() && !self.done {
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    let spent = std::mem::replace(&mut self.current, chunk);
                    // full, or the thread has stopped: the chunk is simply dropped
                    let _ = self.spent.try_send(spent);
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => self.done = true,
            }
        }
        Ok(&self.current[self.pos..])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.current.len());
    }
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = buf.len().min(available.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// One input being read: a [`ReadAhead`] (itself the [`BufRead`]: no second buffer), with
/// the path as a label.
///
/// Made by [`crate::ingest::log::load_file`] for a loader (or by [`Input::from_reader`]
/// in tests); a leading UTF-8 byte-order mark is already consumed.
pub struct Input {
    path: PathBuf,
    reader: ReadAhead,
}

impl Input {
    /// Opens the regular file at `path` for one read.
    ///
    /// Errors: it cannot be opened, or it is not a regular file (a directory, pipe or
    /// device: sphragis binds every input by path and SHA-256).
    pub fn open(path: &Path) -> anyhow::Result<(Input, u64)> {
        use anyhow::Context;
        // Checked before opening too: opening a FIFO that has no writer blocks forever.
        let before = std::fs::metadata(path).with_context(|| format!("{}: cannot open", path.display()))?;
        let file = if before.is_file() {
            std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?
        } else {
            anyhow::bail!(
                "{}: not a regular file (a directory, pipe or device); sphragis binds every input by path and \
                 SHA-256, so save it to a file first",
                path.display()
            );
        };
        let meta = file.metadata().with_context(|| format!("{}: cannot stat", path.display()))?;
        if !meta.is_file() {
            anyhow::bail!(
                "{}: not a regular file (a directory, pipe or device); sphragis binds every input by path and \
                 SHA-256, so save it to a file first",
                path.display()
            );
        }
        let input = Self::from_reader(path, file).with_context(|| format!("{}: cannot read", path.display()))?;
        Ok((input, meta.len()))
    }

    /// An input over any reader, labelled `path` (tests and in-memory inputs).
    ///
    /// Errors: reading the first bytes (to skip a byte-order mark) fails.
    pub fn from_reader<R: Read + Send + 'static>(path: &Path, inner: R) -> io::Result<Input> {
        let mut reader = ReadAhead::spawn(inner);
        let head = reader.fill_buf()?;
        if head.starts_with(super::json::BOM) {
            reader.consume(super::json::BOM.len());
        }
        Ok(Input { path: path.to_path_buf(), reader })
    }

    /// The path, for error messages only.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every byte left (after the byte-order mark), for formats that are one document
    /// (a JSON object or array, an SQLite file).
    ///
    /// Errors: a read error, named with the file.
    pub fn read_all(&mut self) -> Result<Vec<u8>, InputError> {
        let mut bytes = Vec::new();
        self.reader
            .read_to_end(&mut bytes)
            .map_err(|e| InputError::at(&self.path, None, None, format!("cannot read: {e}")))?;
        Ok(bytes)
    }

    /// The whole document as UTF-8 text.
    ///
    /// Errors: a read error, or invalid UTF-8 (naming the line and byte column).
    pub fn read_text(&mut self) -> Result<String, InputError> {
        let bytes = self.read_all()?;
        super::json::utf8_document(&self.path, &bytes)?;
        Ok(String::from_utf8(bytes).expect("checked above"))
    }

    /// Reads whatever is left and returns `(bytes, lowercase hex SHA-256)` of the whole
    /// input, byte-order mark included. Errors: a read error of the file.
    pub fn finish(self) -> io::Result<(u64, String)> {
        self.reader.finish()
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }
    fn consume(&mut self, amount: usize) {
        self.reader.consume(amount)
    }
}

/// `(bytes, SHA-256)` of the file at `path`, read once through a [`ReadAhead`]: how
/// `verify` checks that a logged input is still the same bytes.
///
/// Errors: the file cannot be opened or read.
pub fn hash_file(path: &Path) -> io::Result<(u64, String)> {
    ReadAhead::spawn(std::fs::File::open(path)?).finish()
}

/// A `tokenizer.json` read once: the tokenizer, the SHA-256 of the bytes it was built
/// from, and its path (a label).
pub struct TokenizerFile {
    /// The tokenizer built from the bytes hashed.
    pub tokenizer: tokenizers::Tokenizer,
    /// Lowercase hex SHA-256 of the file's bytes.
    pub sha256: String,
    /// The path it was read from (a label).
    pub path: PathBuf,
}

impl TokenizerFile {
    /// Reads and parses `path` (one read; the SHA-256 is of the bytes parsed).
    ///
    /// Errors: the file cannot be read, or is not a tokenizer the `tokenizers` crate loads.
    pub fn read(path: &Path) -> anyhow::Result<TokenizerFile> {
        let (mut input, _) = Input::open(path)?;
        let bytes = input.read_all()?;
        let (_, sha256) = input.finish().map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
        // the byte-order mark, if any, was consumed: serde_json refuses one
        let tokenizer = tokenizers::Tokenizer::from_bytes(&bytes)
            .map_err(|e| anyhow::anyhow!("{}: not a tokenizer.json: {e}", path.display()))?;
        Ok(TokenizerFile { tokenizer, sha256, path: path.to_path_buf() })
    }

    /// Vocabulary size including added tokens.
    pub fn vocab_size(&self) -> i32 {
        self.tokenizer.get_vocab_size(true) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256_hex;

    #[test]
    fn read_ahead_hashes_everything_once() {
        // three and a half chunks, partly consumed before finish
        let data: Vec<u8> = (0..(CHUNK * 7 / 2)).map(|i| (i % 251) as u8).collect();
        let mut reader = ReadAhead::spawn(std::io::Cursor::new(data.clone()));
        let mut head = vec![0u8; CHUNK + 10];
        reader.read_exact(&mut head).unwrap();
        assert_eq!(head, data[..CHUNK + 10]);
        assert_eq!(reader.finish().unwrap(), (data.len() as u64, sha256_hex(&data)));
        let mut all = Vec::new();
        let mut reader = ReadAhead::spawn(std::io::Cursor::new(data.clone()));
        reader.read_to_end(&mut all).unwrap();
        assert_eq!(all, data);
        assert_eq!(reader.finish().unwrap().1, sha256_hex(&data));
        let empty = ReadAhead::spawn(std::io::Cursor::new(Vec::new()));
        assert_eq!(empty.finish().unwrap(), (0, sha256_hex(b"")));
    }

    /// Lines read through the chunks' own buffer (no second buffer since round 8 of issue
    /// 29) come out whole where a line spans two or three chunks.
    #[test]
    fn read_ahead_lines_spanning_chunks_are_whole() {
        let mut data = Vec::new();
        let mut want = Vec::new();
        for i in 0..40usize {
            // lengths from a few bytes to over two chunks
            let len = [3, CHUNK / 3, CHUNK - 1, CHUNK + 7, 2 * CHUNK + 5][i % 5] + i;
            let line: Vec<u8> = (0..len).map(|j| b'a' + ((i + j) % 26) as u8).collect();
            data.extend_from_slice(&line);
            data.push(b'\n');
            want.push(line);
        }
        let mut reader = ReadAhead::spawn(std::io::Cursor::new(data.clone()));
        let mut got = Vec::new();
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).unwrap() > 0 {
            assert_eq!(line.pop(), Some(b'\n'));
            got.push(std::mem::take(&mut line));
        }
        assert_eq!(got.len(), want.len());
        assert!(got == want, "a line spanning chunks came out changed");
        assert_eq!(reader.finish().unwrap(), (data.len() as u64, sha256_hex(&data)));
    }

    #[test]
    fn input_skips_a_bom_but_hashes_it() {
        let bytes = b"\xef\xbb\xbf{\"a\": 1}\n".to_vec();
        let mut input = Input::from_reader(Path::new("x.json"), std::io::Cursor::new(bytes.clone())).unwrap();
        assert_eq!(input.read_text().unwrap(), "{\"a\": 1}\n");
        assert_eq!(input.finish().unwrap(), (bytes.len() as u64, sha256_hex(&bytes)));
        // a BOM later in the file is content, not skipped
        let mut input = Input::from_reader(Path::new("x"), std::io::Cursor::new(b"a\xef\xbb\xbf".to_vec())).unwrap();
        assert_eq!(input.read_all().unwrap(), b"a\xef\xbb\xbf");
    }

    #[test]
    fn read_text_names_the_line_of_invalid_utf8() {
        let mut input =
            Input::from_reader(Path::new("x.json"), std::io::Cursor::new(b"{\n\"a\": \"\xff\"}".to_vec())).unwrap();
        let err = input.read_text().unwrap_err().to_string();
        assert_eq!(err, "x.json:2: invalid UTF-8 at byte 7 of the line");
    }
}
