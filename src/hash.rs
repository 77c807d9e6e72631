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
}
