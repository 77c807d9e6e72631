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
    /// Chunks per parser thread whose records may wait, parsed, for the calling thread
    /// beyond the [`TEXT_CHUNKS_PER_THREAD`] whose text is in flight: room for the parsers
    /// to go on while `each` is slow for a while (DuckDB compresses and writes a full row
    /// group on the appending thread: 0.6 s in a ×100 Review4Repair load, during which
    /// the parsers stood still). Worth it where a chunk's records are much smaller than
    /// its text (review examples keep a few fields of each line); 0 where they are not
    /// (token arrays).
    pub parsed_ahead: usize,
}

/// Chunks cut and not yet parsed (queued or being parsed), per parser thread: bounds the
/// text held in flight to `3 × threads × chunk bytes`. Parsed chunks waiting for `each`
/// (or for an earlier chunk) add their records, up to [`Chunking::parsed_ahead`] chunks
/// per thread more.
const TEXT_CHUNKS_PER_THREAD: usize = 3;

/// The lines of one chunk in one text: `(line number, byte range in text)` each.
struct Lines {
    text: String,
    lines: Vec<(u64, std::ops::Range<usize>)>,
}

/// A chunk: its sequence number, the permits it holds (see [`parse_lines`]) and its lines.
type Chunk = (u64, usize, Lines);

/// A parsed chunk: its sequence number, its records in line order up to the first line
/// that failed, that line's error, and the anomalies the accepted lines held.
struct Parsed<T> {
    seq: u64,
    permits: usize,
    records: Vec<T>,
    error: Option<anyhow::Error>,
    anomalies: Vec<super::anomaly::Recorded>,
}

/// The number of parser threads: one per core, 1 to 8.
pub fn parser_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8)
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
/// Memory: the text of at most `3 × threads` chunks, and the records of at most
/// `parsed_ahead × threads` more (see [`Chunking`]); a chunk of `k × bytes` of text counts
/// as `k` chunks, so long lines do not multiply what waits.
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
    let threads = parser_threads();
    let text_in_flight = threads * TEXT_CHUNKS_PER_THREAD;
    let in_flight = text_in_flight + threads * chunking.parsed_ahead;
    // never full: at most `text_in_flight` chunks are cut and not yet parsed
    let (work_tx, work_rx) = sync_channel::<Chunk>(text_in_flight);
    let work_rx: Mutex<Receiver<Chunk>> = Mutex::new(work_rx);
    // never full: at most `in_flight` chunks are cut and not yet handed on
    let (done_tx, done_rx) = sync_channel::<Parsed<T>>(in_flight);
    // a chunk is cut only with a permit per `bytes` of its text (one at least, all at
    // most), returned when `each` has had its records: whatever the lines' lengths, the
    // chunks not yet written hold about `in_flight × bytes` of text or records at most ...
    let (permit_tx, permit_rx) = sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        permit_tx.send(()).expect("the receiver is here");
    }
    // ... and a text permit, returned when a parser is done with the chunk's text
    let (text_permit_tx, text_permit_rx) = sync_channel::<()>(text_in_flight);
    for _ in 0..text_in_flight {
        text_permit_tx.send(()).expect("the receiver is here");
    }
    // room for a chunk's text and the line that takes it past `bytes`, as a rule
    let capacity = chunking.bytes.saturating_add(chunking.bytes / 4);
    std::thread::scope(|scope| -> Result<u64> {
        let cutter = scope.spawn(move || -> (Result<u64>, u64) {
            let mut seq = 0u64;
            let new_lines = || Lines { text: String::with_capacity(capacity), lines: Vec::new() };
            let mut lines = new_lines();
            // hands `lines` on and starts the next chunk in their place
            let mut send = |lines: &mut Lines| -> Result<()> {
                let permits = (lines.text.len() / chunking.bytes.max(1)).clamp(1, in_flight);
                for _ in 0..permits {
                    permit_rx.recv().map_err(|_| anyhow::anyhow!("the record writer stopped"))?;
                }
                text_permit_rx.recv().map_err(|_| anyhow::anyhow!("the record parsers stopped"))?;
                let full = std::mem::replace(lines, new_lines());
                work_tx.send((seq, permits, full)).map_err(|_| anyhow::anyhow!("the record parsers stopped"))?;
                seq += 1;
                Ok(())
            };
            let read = super::json::for_each_line_from(path, &mut *reader, first_line, |line, text| {
                let start = lines.text.len();
                lines.text.push_str(text);
                lines.lines.push((line, start..lines.text.len()));
                if lines.lines.len() >= chunking.lines || lines.text.len() >= chunking.bytes {
                    send(&mut lines)?;
                }
                Ok(())
            });
            // the lines before a failing one are parsed first: an error among them comes first
            let sent = if lines.lines.is_empty() { Ok(()) } else { send(&mut lines) };
            (read.and_then(|records| sent.map(|()| records)), seq)
        });
        let work_rx = &work_rx;
        let parse = &parse;
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let text_permit_tx = text_permit_tx.clone();
            scope.spawn(move || {
                loop {
                    let next = work_rx.lock().unwrap_or_else(PoisonError::into_inner).recv();
                    let Ok((seq, permits, lines)) = next else { return };
                    let ((records, error), anomalies) = super::anomaly::collect(|| {
                        let mut records = Vec::with_capacity(lines.lines.len());
                        for (line, range) in &lines.lines {
                            match parse(*line, &lines.text[range.clone()]) {
                                Ok(record) => records.push(record),
                                Err(e) => return (records, Some(e)),
                            }
                        }
                        (records, None)
                    });
                    drop(lines);
                    // the cutter may be gone (it failed, or every chunk is cut)
                    let _ = text_permit_tx.send(());
                    if done_tx.send(Parsed { seq, permits, records, error, anomalies }).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        drop(text_permit_tx);
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
                for _ in 0..chunk.permits {
                    let _ = permit_tx.send(());
                }
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
                Chunking { lines, bytes: 1 << 20, parsed_ahead: 0 },
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

    /// While `each` is held on the first record, the parsers go on until every permit is
    /// taken: `3 × threads` chunks of text and `parsed_ahead × threads` more, and not one
    /// chunk past that; a chunk of three times `bytes` takes three permits. The records
    /// then arrive in file order.
    #[test]
    fn parsers_run_ahead_of_a_held_writer_up_to_their_bound() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let threads = parser_threads();
        let bound = threads * (TEXT_CHUNKS_PER_THREAD + 5);
        // lines of 10 bytes (one permit each) and of 31 bytes (three), in chunks of one line
        for (line_bytes, held) in [(10, bound), (31, bound / 3)] {
            let lines = bound * 4;
            let text: String = (1..=lines).map(|i| format!("{i:0>width$}\n", width = line_bytes - 1)).collect();
            let parsed = AtomicUsize::new(0);
            let mut got = Vec::new();
            let mut held_at = None;
            parse_lines(
                Path::new("n.jsonl"),
                &mut text.as_bytes(),
                1,
                Chunking { lines: 1, bytes: 10, parsed_ahead: 5 },
                |line, _| {
                    parsed.fetch_add(1, Ordering::SeqCst);
                    Ok(line)
                },
                |line| {
                    if line == 1 {
                        // wait for the parsers to take every permit (10 s at most), then
                        // give them time to overrun the bound if they could
                        let start = std::time::Instant::now();
                        while parsed.load(Ordering::SeqCst) < held && start.elapsed().as_secs() < 10 {
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        held_at = Some(parsed.load(Ordering::SeqCst));
                    }
                    got.push(line);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(held_at, Some(held), "lines of {line_bytes} bytes, {threads} threads");
            assert_eq!(got, (1..=lines as u64).collect::<Vec<_>>());
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
                Chunking { lines: 4, bytes: 1 << 20, parsed_ahead: 0 },
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
            Chunking { lines: 4, bytes: 1 << 20, parsed_ahead: 0 },
            |line, _| if bad(line) { anyhow::bail!("line {line} is bad") } else { Ok(line) },
            |line| if line == 50 { anyhow::bail!("each refused {line}") } else { Ok(()) },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "each refused 50");
    }
}
