//! SHA-256 helpers: hex digests of byte slices and of everything a reader yields.

use sha2::{Digest, Sha256};
use std::io::{self, Read};

/// Lowercase hex SHA-256 of `bytes` (64 characters).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A reader that hashes and counts every byte it passes through, so a loader binds
/// its input to a SHA-256 in the same single pass that parses it.
pub struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> HashingReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        Self { inner, hasher: Sha256::new(), bytes: 0 }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// Reads whatever is left (so the digest covers the whole input) and returns
    /// `(bytes, lowercase hex SHA-256)`.
    pub fn finish(mut self) -> io::Result<(u64, String)> {
        io::copy(&mut self.inner, &mut WriteHasher(&mut self.hasher, &mut self.bytes))?;
        Ok((self.bytes, hex(&self.hasher.finalize())))
    }
}

struct WriteHasher<'a>(&'a mut Sha256, &'a mut u64);

impl io::Write for WriteHasher<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        *self.1 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// A reader that reads `inner` ahead on its own thread, hashing each chunk there, and
/// hands the chunks over through a bounded channel. The loader's parse runs on the
/// calling thread while the read and SHA-256 run on the other core.
///
/// Memory: at most `QUEUE + 2` chunks of [`CHUNK`] bytes in flight.
pub struct ReadAhead {
    chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
    done: bool,
    thread: Option<std::thread::JoinHandle<(u64, String)>>,
}

/// Bytes per chunk read ahead.
pub const CHUNK: usize = 1 << 20;
const QUEUE: usize = 4;

impl ReadAhead {
    /// Starts the reading thread on `inner`.
    pub fn spawn<R: Read + Send + 'static>(mut inner: R) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let thread = std::thread::spawn(move || {
            let mut hasher = Sha256::new();
            let mut bytes = 0u64;
            loop {
                let mut buf = vec![0u8; CHUNK];
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
            (bytes, hex(&hasher.finalize()))
        });
        Self { chunks: rx, current: Vec::new(), pos: 0, done: false, thread: Some(thread) }
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

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            if self.done {
                return Ok(0);
            }
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    self.current = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => self.done = true,
            }
        }
        let n = buf.len().min(self.current.len() - self.pos);
        buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // FIPS 180-2 test vector
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let mut reader = HashingReader::new(&b"abcdef"[..]);
        let mut first = [0u8; 3];
        reader.read_exact(&mut first).unwrap();
        assert_eq!(reader.bytes_read(), 3);
        let (bytes, digest) = reader.finish().unwrap();
        assert_eq!(bytes, 6);
        assert_eq!(digest, sha256_hex(b"abcdef"));
    }

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
}
