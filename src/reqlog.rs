//! The per-request log (`run --request-log FILE`, issue 29 item 1): one CSV
//! row per replayed request, written while the simulation runs.
//!
//! The simulator hands each completed request to a [`RequestSink`]
//! ([`crate::sim::RequestRecord`]); [`with_request_log`] gives it one that
//! only copies the record into a batch and passes full batches to a writer
//! thread, which formats the rows and compresses them (zstd or gzip, by the
//! file name's extension: [`Compression::for_path`]). So the simulation
//! thread pays about a copy per request, memory is bounded by a few
//! batches whatever the run's length, and the rows are the same bytes
//! whatever the threads' timing (one producer, rows in the order the
//! simulator completed them).
//!
//! This module does I/O: it is for the CLI, never for the simulator core.

use crate::sim::{RequestRecord, RequestSink};
use crate::units::Op;
use std::io::{self, Write};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// The columns of the log, in order.
pub const COLUMNS: &[&str] = &[
    "request",
    "op",
    "offset",
    "size",
    "pages",
    "arrival_ns",
    "completion_ns",
    "latency_ns",
    "dup_pages",
    "chips",
    "channels",
    "gc_wait",
];

/// Records per batch handed to the writer thread.
const BATCH: usize = 8192;
/// Batches in flight between the threads (the memory bound: about
/// `(QUEUE + 2) * BATCH` records of 48 bytes).
const QUEUE: usize = 4;

/// How the log is compressed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Zstd,
    Gzip,
}

impl Compression {
    /// By extension: `.zst` zstd, `.gz` gzip, anything else plain text.
    pub fn for_path(path: &Path) -> Compression {
        match path.extension().and_then(|e| e.to_str()) {
            Some("zst") => Compression::Zstd,
            Some("gz") => Compression::Gzip,
            _ => Compression::None,
        }
    }
}

/// Runs `run` with a sink that writes every record it receives to `out`
/// as a CSV row (header first), compressed as `compression` says;
/// `page_size` (bytes) turns pages into the byte offset and size columns.
/// Returns `run`'s result once every row is written and the compressor
/// finished (the caller flushes `out`), or the first write error.
pub fn with_request_log<W: Write + Send, T>(
    out: W,
    compression: Compression,
    page_size: u32,
    run: impl FnOnce(&mut dyn RequestSink) -> T,
) -> io::Result<T> {
    let (tx, rx) = sync_channel::<Vec<RequestRecord>>(QUEUE);
    let (back_tx, back_rx) = sync_channel::<Vec<RequestRecord>>(QUEUE + 2);
    std::thread::scope(|s| {
        let writer = s.spawn(move || -> io::Result<()> {
            match compression {
                Compression::None => write_rows(out, rx, back_tx, page_size).map(drop),
                Compression::Zstd => {
                    let enc = zstd::stream::write::Encoder::new(out, 3)?;
                    write_rows(enc, rx, back_tx, page_size)?.finish().map(drop)
                }
                Compression::Gzip => {
                    let enc = flate2::write::GzEncoder::new(out, flate2::Compression::default());
                    write_rows(enc, rx, back_tx, page_size)?.finish().map(drop)
                }
            }
        });
        let mut sink = BatchSink { batch: Vec::with_capacity(BATCH), tx: Some(tx), back: back_rx };
        let result = run(&mut sink);
        sink.flush();
        drop(sink);
        let written =
            writer.join().unwrap_or_else(|_| Err(io::Error::other("the request log's writer thread panicked")));
        written.map(|()| result)
    })
}

/// The simulation thread's side: records into batches, batches to the
/// writer. If the writer stopped (a write error), records are dropped and
/// the error comes back from the writer thread.
struct BatchSink {
    batch: Vec<RequestRecord>,
    tx: Option<SyncSender<Vec<RequestRecord>>>,
    back: Receiver<Vec<RequestRecord>>,
}

impl BatchSink {
    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let next = self.back.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        if let Some(tx) = &self.tx {
            if tx.send(full).is_err() {
                self.tx = None;
            }
        }
    }
}

impl RequestSink for BatchSink {
    #[inline]
    fn record(&mut self, r: &RequestRecord) {
        self.batch.push(*r);
        if self.batch.len() >= BATCH {
            self.flush();
        }
    }
}

/// The writer thread: the header, then a row per record, batch by batch
/// (emptied batches go back for reuse).
fn write_rows<W: Write>(
    mut out: W,
    rx: Receiver<Vec<RequestRecord>>,
    back: SyncSender<Vec<RequestRecord>>,
    page_size: u32,
) -> io::Result<W> {
    writeln!(out, "{}", COLUMNS.join(","))?;
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH * 64);
    let mut line = [0u8; ROW_MAX];
    for mut batch in rx {
        buf.clear();
        for r in &batch {
            row(&mut buf, &mut line, r, page_size);
        }
        out.write_all(&buf)?;
        batch.clear();
        let _ = back.try_send(batch);
    }
    Ok(out)
}

/// Longest row: 11 numbers of at most 20 digits, their commas, the op.
const ROW_MAX: usize = 11 * 21 + 8;

/// "00" to "99", two bytes each.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `v` in decimal so that it ends at `row[..end]` and returns where
/// it starts. A row is built from its end backwards, so every number is
/// written in place with no digit count and the row is one copy into the
/// output (BENCHMARKS.md, "Per-request log and time series").
#[inline(always)]
fn put_back(row: &mut [u8; ROW_MAX], end: usize, v: u64) -> usize {
    let (mut v, mut i) = (v, end);
    while v >= 10_000 {
        let r = (v % 10_000) as u32;
        v /= 10_000;
        let (hi, lo) = ((r / 100) as usize * 2, (r % 100) as usize * 2);
        row[i - 2..i].copy_from_slice(&PAIRS[lo..lo + 2]);
        row[i - 4..i - 2].copy_from_slice(&PAIRS[hi..hi + 2]);
        i -= 4;
    }
    let mut v = v as u32;
    if v >= 100 {
        let lo = (v % 100) as usize * 2;
        v /= 100;
        row[i - 2..i].copy_from_slice(&PAIRS[lo..lo + 2]);
        i -= 2;
    }
    if v >= 10 {
        let r = v as usize * 2;
        row[i - 2..i].copy_from_slice(&PAIRS[r..r + 2]);
        i - 2
    } else {
        row[i - 1] = b'0' + v as u8;
        i - 1
    }
}

/// Appends one CSV row, built in `line` (scratch: every byte copied out
/// is written first).
#[inline]
fn row(buf: &mut Vec<u8>, line: &mut [u8; ROW_MAX], r: &RequestRecord, page_size: u32) {
    let ps = u64::from(page_size);
    let op: &[u8] = match r.op {
        Op::Read => b",read,",
        Op::Write => b",write,",
        Op::Trim => b",trim,",
    };
    line[ROW_MAX - 1] = b'\n';
    line[ROW_MAX - 2] = if r.gc_wait { b'1' } else { b'0' };
    let mut at = ROW_MAX - 2;
    // The columns after the op, last first.
    for v in [
        u64::from(r.channels),
        u64::from(r.chips),
        u64::from(r.dup_pages),
        r.latency().0,
        r.completion.0,
        r.arrival.0,
        u64::from(r.pages),
        u64::from(r.pages) * ps,
    ] {
        at -= 1;
        line[at] = b',';
        at = put_back(line, at, v);
    }
    at -= 1;
    line[at] = b',';
    at = put_back(line, at, u64::from(r.lpn) * ps);
    at -= op.len();
    line[at..at + op.len()].copy_from_slice(op);
    at = put_back(line, at, r.index);
    buf.extend_from_slice(&line[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    fn rec(index: u64) -> RequestRecord {
        RequestRecord {
            index,
            op: Op::Write,
            lpn: 3,
            pages: 2,
            arrival: Nanos(100),
            completion: Nanos(350),
            dup_pages: 1,
            chips: 1,
            channels: 1,
            gc_wait: index % 2 == 1,
        }
    }

    #[test]
    fn rows_are_written_in_order_with_a_header() {
        let mut out = Vec::new();
        let n = with_request_log(&mut out, Compression::None, 4096, |s| {
            for i in 0..(BATCH as u64 * 3 + 5) {
                s.record(&rec(i));
            }
            7
        })
        .unwrap();
        assert_eq!(n, 7);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(lines.len(), 1 + BATCH * 3 + 5);
        assert_eq!(lines[1], "0,write,12288,8192,2,100,350,250,1,1,1,0");
        assert!(lines.last().unwrap().starts_with(&format!("{},", BATCH * 3 + 4)));
    }

    /// Every digit count and every pair boundary formats as `to_string`.
    #[test]
    fn numbers_format_as_decimal() {
        let mut line = [0u8; ROW_MAX];
        let mut cases = vec![0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1];
        cases.extend((1..20).flat_map(|k| [10u64.pow(k) - 1, 10u64.pow(k), 10u64.pow(k) + 7]));
        cases.extend([123_456_789_012, 5_000_000_000_000_000_000, 98_765]);
        for v in cases {
            let start = put_back(&mut line, 30, v);
            assert_eq!(std::str::from_utf8(&line[start..30]).unwrap(), v.to_string(), "{v}");
        }
    }

    #[test]
    fn the_longest_row_fits() {
        let mut buf = Vec::new();
        let r = RequestRecord {
            op: Op::Trim,
            lpn: u32::MAX,
            pages: u32::MAX,
            completion: Nanos(u64::MAX),
            ..rec(u64::MAX)
        };
        row(&mut buf, &mut [0; ROW_MAX], &r, u32::MAX);
        assert!(buf.len() <= ROW_MAX);
        let want = format!("{},trim,{},", u64::MAX, u64::from(u32::MAX) * u64::from(u32::MAX));
        assert!(String::from_utf8(buf).unwrap().starts_with(&want));
    }

    #[test]
    fn compressed_logs_decompress_to_the_plain_log() {
        let fill = |c: Compression| {
            let mut out = Vec::new();
            with_request_log(&mut out, c, 512, |s| (0..100).for_each(|i| s.record(&rec(i)))).unwrap();
            out
        };
        let plain = fill(Compression::None);
        let zst = zstd::decode_all(&fill(Compression::Zstd)[..]).unwrap();
        let mut gz = Vec::new();
        io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&fill(Compression::Gzip)[..]), &mut gz).unwrap();
        assert_eq!(zst, plain);
        assert_eq!(gz, plain);
        assert_eq!(Compression::for_path(Path::new("a/log.csv.zst")), Compression::Zstd);
        assert_eq!(Compression::for_path(Path::new("log.gz")), Compression::Gzip);
        assert_eq!(Compression::for_path(Path::new("log.csv")), Compression::None);
    }

    #[test]
    fn a_write_error_is_returned() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let e = with_request_log(Full, Compression::None, 512, |s| (0..100_000).for_each(|i| s.record(&rec(i))))
            .unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}
