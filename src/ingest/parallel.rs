//! JSON lines parsed on every core, handed on in file order.
//!
//! A line-per-record loader spends most of its time turning each line into a record
//! (JSON parsing and the record's checks), which needs nothing but the line. Here one
//! thread cuts the input into chunks of lines ([`super::json::for_each_line_from`]:
//! UTF-8, blank lines, an empty file), parser threads turn chunks into records, and the
//! calling thread (which owns the database connection) receives the records in file order.

use anyhow::Result;
use std::io::BufRead;
use std::path::Path;

/// How the input is cut into units of work: a chunk ends after `lines` lines or once it
/// holds `bytes` bytes of line text, whichever comes first. Small enough that a few long
/// lines spread over the cores; large enough that handing a chunk over costs nothing.
#[derive(Debug, Clone, Copy)]
pub struct Chunking {
    /// Lines per chunk at most.
    pub lines: usize,
    /// Bytes of line text per chunk at most (a single longer line is a chunk of its own).
    pub bytes: usize,
}

/// Chunks cut but not yet handed to `each`, per parser thread: bounds the memory held in
/// flight (chunks queued, being parsed, or parsed and waiting for an earlier one) to
/// about `3 × threads × chunk bytes` of text plus their records.
const CHUNKS_IN_FLIGHT_PER_THREAD: usize = 3;

/// Lines of one chunk: `(sequence number, [(line number, text)])`.
type Chunk = (u64, Vec<(u64, String)>);

/// A parsed chunk: its sequence number, its records in line order up to the first line
/// that failed, that line's error, and the anomalies the accepted lines held.
struct Parsed<T> {
    seq: u64,
    records: Vec<T>,
    error: Option<anyhow::Error>,
    anomalies: Vec<super::anomaly::Recorded>,
}

/// Reads `reader` line by line from line number `first_line` (as
/// [`super::json::for_each_line_from`]), turns every non-blank line into a record with
/// `parse(line_number, text)` on every core, and hands each record to `each` in file order
/// on the calling thread.
///
/// What reading line by line on one thread would report is reported: the error of the
/// first failing line (or of `each`, whichever comes first in file order), also when a
/// parser thread meets a later bad line first or the reader fails further on; and the
/// anomalies (`NaN`, lone surrogates, ...) of the lines handed on, recorded on the calling
/// thread's collector ([`super::anomaly::record`], where the load's transaction writes
/// them; the parser threads' own collectors would be lost). Returns the number of records
/// read.
///
/// Memory: at most `3 × threads` chunks are in flight (see [`Chunking`]).
///
/// Errors: as [`super::json::for_each_line_from`], `parse` or `each`.
pub fn parse_lines<T: Send>(
    path: &Path,
    reader: &mut (dyn BufRead + Send),
    first_line: u64,
    chunking: Chunking,
    parse: impl Fn(u64, &str) -> Result<T> + Sync,
    mut each: impl FnMut(T) -> Result<()>,
) -> Result<u64> {
    use std::sync::mpsc::{Receiver, sync_channel};
    use std::sync::{Mutex, PoisonError};
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let in_flight = threads * CHUNKS_IN_FLIGHT_PER_THREAD;
    let (work_tx, work_rx) = sync_channel::<Chunk>(in_flight);
    let work_rx: Mutex<Receiver<Chunk>> = Mutex::new(work_rx);
    let (done_tx, done_rx) = sync_channel::<Parsed<T>>(in_flight);
    // a chunk is cut only with a permit, returned when `each` has had its records
    let (permit_tx, permit_rx) = sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        permit_tx.send(()).expect("the receiver is here");
    }
    std::thread::scope(|scope| -> Result<u64> {
        let cutter = scope.spawn(move || -> (Result<u64>, u64) {
            let mut seq = 0u64;
            let mut lines: Vec<(u64, String)> = Vec::new();
            let mut bytes = 0usize;
            let mut send = |lines: Vec<(u64, String)>| -> Result<()> {
                permit_rx.recv().map_err(|_| anyhow::anyhow!("the record writer stopped"))?;
                work_tx.send((seq, lines)).map_err(|_| anyhow::anyhow!("the record parsers stopped"))?;
                seq += 1;
                Ok(())
            };
            let read = super::json::for_each_line_from(path, &mut *reader, first_line, |line, text| {
                bytes += text.len();
                lines.push((line, text.to_owned()));
                if lines.len() >= chunking.lines || bytes >= chunking.bytes {
                    bytes = 0;
                    send(std::mem::take(&mut lines))?;
                }
                Ok(())
            });
            // the lines before a failing one are parsed first: an error among them comes first
            let sent = if lines.is_empty() { Ok(()) } else { send(lines) };
            (read.and_then(|records| sent.map(|()| records)), seq)
        });
        let work_rx = &work_rx;
        let parse = &parse;
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            scope.spawn(move || {
                loop {
                    let next = work_rx.lock().unwrap_or_else(PoisonError::into_inner).recv();
                    let Ok((seq, lines)) = next else { return };
                    let ((records, error), anomalies) = super::anomaly::collect(|| {
                        let mut records = Vec::with_capacity(lines.len());
                        for (line, text) in &lines {
                            match parse(*line, text) {
                                Ok(record) => records.push(record),
                                Err(e) => return (records, Some(e)),
                            }
                        }
                        (records, None)
                    });
                    if done_tx.send(Parsed { seq, records, error, anomalies }).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        // chunks in sequence order; the first error (a line's, or `each`'s) stops the load
        let mut waiting: std::collections::BTreeMap<u64, Parsed<T>> = std::collections::BTreeMap::new();
        let mut next = 0u64;
        let mut failed: Option<anyhow::Error> = None;
        'chunks: for chunk in &done_rx {
            waiting.insert(chunk.seq, chunk);
            while let Some(chunk) = waiting.remove(&next) {
                next += 1;
                super::anomaly::record(chunk.anomalies);
                for record in chunk.records {
                    if let Err(e) = each(record) {
                        failed = Some(e);
                        break 'chunks;
                    }
                }
                if let Some(e) = chunk.error {
                    failed = Some(e);
                    break 'chunks;
                }
                let _ = permit_tx.send(());
            }
        }
        // stop the other threads: the cutter waits for a permit or a parser, parsers for
        // the cutter or this receiver
        drop(done_rx);
        drop(permit_tx);
        let (read, chunks) = cutter.join().map_err(|_| anyhow::anyhow!("the line reader panicked"))?;
        match failed {
            Some(e) => Err(e),
            None if read.is_ok() && next != chunks => {
                Err(anyhow::anyhow!("{}: a parser thread stopped after {next} of {chunks} chunks", path.display()))
            }
            None => read,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records in file order whatever the chunking; blank lines skipped, numbered from
    /// `first_line`.
    #[test]
    fn records_arrive_in_file_order_with_their_line_numbers() {
        let text: String = (0..1000).map(|i| if i % 7 == 3 { "\n".to_string() } else { format!("{i}\n") }).collect();
        for lines in [1, 3, 16, 2000] {
            let mut got = Vec::new();
            let n = parse_lines(
                Path::new("n.jsonl"),
                &mut text.as_bytes(),
                5,
                Chunking { lines, bytes: 1 << 20 },
                |line, t| Ok((line, t.trim().parse::<u32>()?)),
                |r| {
                    got.push(r);
                    Ok(())
                },
            )
            .unwrap();
            let want: Vec<(u64, u32)> = (0..1000u32).filter(|i| i % 7 != 3).map(|i| (u64::from(i) + 5, i)).collect();
            assert_eq!(got, want, "chunks of {lines} lines");
            assert_eq!(n, want.len() as u64);
        }
    }

    /// The first bad line in file order is the one reported, and `each` saw exactly the
    /// records before it, however the threads raced; an `each` error before it wins.
    #[test]
    fn first_error_in_file_order_wins() {
        let text: String = (1..=500).map(|i| format!("{i}\n")).collect();
        let bad = |line: u64| line == 123 || line == 400;
        for _ in 0..20 {
            let mut seen = 0u64;
            let err = parse_lines(
                Path::new("n.jsonl"),
                &mut text.as_bytes(),
                1,
                Chunking { lines: 4, bytes: 1 << 20 },
                |line, _| if bad(line) { anyhow::bail!("line {line} is bad") } else { Ok(line) },
                |_| {
                    seen += 1;
                    Ok(())
                },
            )
            .unwrap_err();
            assert_eq!(err.to_string(), "line 123 is bad");
            assert_eq!(seen, 122);
        }
        let err = parse_lines(
            Path::new("n.jsonl"),
            &mut text.as_bytes(),
            1,
            Chunking { lines: 4, bytes: 1 << 20 },
            |line, _| if bad(line) { anyhow::bail!("line {line} is bad") } else { Ok(line) },
            |line| if line == 50 { anyhow::bail!("each refused {line}") } else { Ok(()) },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "each refused 50");
    }
}
