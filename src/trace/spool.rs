//! A streamed trace parsed once: the first pass's batches kept in a compact
//! binary form for the second pass (issue 26).
//!
//! A streamed replay reads its trace twice ([`super::stream`]): a first
//! pass for what the replay needs before its first request, then the
//! replay. Both passes made the same batches from the same text, so the
//! second parsed every line again. Now the first pass writes each batch it
//! makes ([`Workload::requests`], `contents`, `hints`, exactly as
//! [`super::stream::stream`] hands them over) to an anonymous temporary
//! file ([`tempfile::tempfile`]: in `TMPDIR`, unlinked at once) through
//! [`BatchWriter`], and the second pass reads them back with
//! [`BatchReader`] instead of parsing: the same batches, the same
//! boundaries, the same order, so the replay cannot tell. Memory stays
//! bounded (one batch's bytes each way, written and read with no buffer in
//! between); the disk holds about 11 bytes per request.
//!
//! Nothing here can change a run's result or its errors: every error of
//! the trace is the first pass's, which still parses the text; a temporary
//! file that cannot be made or written only means the second pass parses
//! the text again, as it did before.
//!
//! The form, per batch, every field little-endian and of a fixed width
//! (issue 26, branch `h42`: cheaper to write and to read back than the LEB128
//! varints before it, for about a third more bytes): its length in bytes
//! (4), the counts of requests, contents and hints (4 each); per request a
//! flags byte (op in bits 0-1, bit 2: has a content index, bit 3: has a
//! stream, bit 4: a wide difference, bit 5: wide pages), the arrival's
//! difference from the previous request's (wrapping, so any order
//! round-trips; a trace's is never negative: 4 bytes, 8 if wide), the
//! first page (4), the pages (2, 4 if wide), then the content index (4)
//! and the stream (2) if flagged; each content id (4); each hint's request
//! index (4), its kind (1: 0 overwrite, 1 append) and an append's page
//! (4).

use super::TraceError;
use crate::units::{ContentId, Nanos, Op};
use crate::workload::{Hint, Request, Workload, NO_CONTENT};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const HAS_CONTENT: u8 = 1 << 2;
const HAS_STREAM: u8 = 1 << 3;
/// The arrival's difference takes 8 bytes (else 4).
const WIDE_DELTA: u8 = 1 << 4;
/// The pages take 4 bytes (else 2).
const WIDE_PAGES: u8 = 1 << 5;
/// The most bytes a request takes: flags, an 8-byte difference, the first
/// page, 4-byte pages, a content index and a stream.
const MAX_REQUEST: usize = 1 + 8 + 4 + 4 + 4 + 2;
/// A batch's header: its length in bytes, then the counts of requests,
/// contents and hints (each 4 bytes, little-endian).
const HEADER: usize = 16;

/// Writes a pass's batches to an anonymous temporary file (module doc), or
/// does nothing once that failed.
#[derive(Debug)]
pub struct BatchWriter {
    out: Option<File>,
    buf: Vec<u8>,
    prev: u64,
    requests: u64,
    batches: u64,
}

impl BatchWriter {
    /// A writer on a new temporary file; a disabled one (keeping nothing)
    /// if the file cannot be made.
    pub fn create() -> BatchWriter {
        BatchWriter { out: tempfile::tempfile().ok(), buf: Vec::new(), prev: 0, requests: 0, batches: 0 }
    }

    /// A writer that keeps nothing ([`BatchWriter::finish`] says `None`).
    pub fn disabled() -> BatchWriter {
        BatchWriter { out: None, buf: Vec::new(), prev: 0, requests: 0, batches: 0 }
    }

    /// Keeps batch `b` (unchanged; `&mut` to serve as an
    /// [`super::stream::Ahead`] `prepare`). A write error disables the
    /// writer.
    pub fn keep(&mut self, b: &mut Workload) {
        let Some(out) = self.out.as_mut() else { return };
        let (Ok(n), Ok(nc), Ok(nh)) =
            (u32::try_from(b.requests.len()), u32::try_from(b.contents.len()), u32::try_from(b.hints.len()))
        else {
            self.out = None;
            return;
        };
        let buf = &mut self.buf;
        buf.clear();
        buf.reserve(HEADER + b.requests.len() * MAX_REQUEST + b.contents.len() * 4 + b.hints.len() * 9);
        buf.extend_from_slice(&[0; 4]);
        for count in [n, nc, nh] {
            buf.extend_from_slice(&count.to_le_bytes());
        }
        let mut prev = self.prev;
        for r in &b.requests {
            // One request's bytes gathered in place, then appended at once.
            let mut e = [0u8; MAX_REQUEST];
            let op = match r.op {
                Op::Read => 0,
                Op::Write => 1,
                Op::Trim => 2,
            };
            let delta = r.arrival.0.wrapping_sub(prev);
            prev = r.arrival.0;
            let mut flags = op;
            let mut k = 1;
            if let Ok(d) = u32::try_from(delta) {
                e[k..k + 4].copy_from_slice(&d.to_le_bytes());
                k += 4;
            } else {
                flags |= WIDE_DELTA;
                e[k..k + 8].copy_from_slice(&delta.to_le_bytes());
                k += 8;
            }
            e[k..k + 4].copy_from_slice(&r.lpn.to_le_bytes());
            k += 4;
            if let Ok(p) = u16::try_from(r.pages) {
                e[k..k + 2].copy_from_slice(&p.to_le_bytes());
                k += 2;
            } else {
                flags |= WIDE_PAGES;
                e[k..k + 4].copy_from_slice(&r.pages.to_le_bytes());
                k += 4;
            }
            if r.content != NO_CONTENT {
                flags |= HAS_CONTENT;
                e[k..k + 4].copy_from_slice(&r.content.to_le_bytes());
                k += 4;
            }
            if r.stream != 0 {
                flags |= HAS_STREAM;
                e[k..k + 2].copy_from_slice(&r.stream.to_le_bytes());
                k += 2;
            }
            e[0] = flags;
            buf.extend_from_slice(&e[..k]);
        }
        for c in &b.contents {
            buf.extend_from_slice(&c.0.to_le_bytes());
        }
        for &(i, h) in &b.hints {
            buf.extend_from_slice(&i.to_le_bytes());
            match h {
                Hint::Overwrite => buf.push(0),
                Hint::Append { after } => {
                    buf.push(1);
                    buf.extend_from_slice(&after.to_le_bytes());
                }
            }
        }
        let Ok(len) = u32::try_from(buf.len() - 4) else {
            self.out = None;
            return;
        };
        buf[..4].copy_from_slice(&len.to_le_bytes());
        // A batch is tens of KiB: written as it is, no buffer in between.
        if out.write_all(buf).is_err() {
            self.out = None;
            return;
        }
        self.prev = prev;
        self.requests += b.requests.len() as u64;
        self.batches += 1;
    }

    /// The batches kept, to be read back from the first; `None` if the
    /// writer was disabled or the file cannot be rewound. `path`: the
    /// trace's, for the reader's errors.
    pub fn finish(self, path: &Path) -> Option<BatchReader> {
        let mut file = self.out?;
        file.seek(SeekFrom::Start(0)).ok()?;
        Some(BatchReader {
            input: file,
            buf: Vec::new(),
            prev: 0,
            requests: 0,
            kept: self.requests,
            batches: self.batches,
            path: path.to_path_buf(),
        })
    }
}

/// Reads back the batches a [`BatchWriter`] kept, in order.
#[derive(Debug)]
pub struct BatchReader {
    input: File,
    buf: Vec<u8>,
    prev: u64,
    /// Requests read back so far.
    requests: u64,
    /// Requests kept.
    kept: u64,
    /// Batches kept and not read back yet.
    batches: u64,
    path: PathBuf,
}

impl BatchReader {
    /// Reads the next batch into `b` (its requests, contents and hints
    /// replaced; its other fields untouched): `false` after the last one.
    /// An error if the file cannot be read or does not hold what was
    /// written ([`TraceError::Io`] naming the trace).
    pub fn next_into(&mut self, b: &mut Workload) -> Result<bool, TraceError> {
        let bad = |path: &Path, source: io::Error| TraceError::Io {
            path: path.to_path_buf(),
            source: io::Error::new(
                source.kind(),
                format!("reading back its parsed records from a temporary file: {source}"),
            ),
        };
        if self.batches == 0 {
            if self.requests == self.kept {
                return Ok(false);
            }
            return Err(bad(&self.path, io::ErrorKind::UnexpectedEof.into()));
        }
        // Read straight into the batch's buffer: its length, then the rest.
        let mut len = [0u8; 4];
        self.input.read_exact(&mut len).map_err(|e| bad(&self.path, e))?;
        self.buf.resize(u32::from_le_bytes(len) as usize, 0);
        self.input.read_exact(&mut self.buf).map_err(|e| bad(&self.path, e))?;
        let corrupt = |path: &Path| bad(path, io::Error::new(io::ErrorKind::InvalidData, "not what was written"));
        let mut c = Cursor { buf: &self.buf, pos: 0 };
        let decoded = (|| {
            let (n, nc, nh) = (c.u32()? as usize, c.u32()? as usize, c.u32()? as usize);
            // Each entry takes at least a byte: a corrupt count cannot
            // make a huge allocation.
            if n.max(nc).max(nh) > c.buf.len() {
                return None;
            }
            b.requests.clear();
            b.contents.clear();
            b.hints.clear();
            b.requests.reserve(n);
            let mut prev = self.prev;
            for _ in 0..n {
                let flags = c.byte()?;
                let op = match flags & 3 {
                    0 => Op::Read,
                    1 => Op::Write,
                    2 => Op::Trim,
                    _ => return None,
                };
                let delta = if flags & WIDE_DELTA != 0 { c.u64()? } else { u64::from(c.u32()?) };
                prev = prev.wrapping_add(delta);
                let lpn = c.u32()?;
                let pages = if flags & WIDE_PAGES != 0 { c.u32()? } else { u32::from(c.u16()?) };
                let content = if flags & HAS_CONTENT != 0 { c.u32()? } else { NO_CONTENT };
                let stream = if flags & HAS_STREAM != 0 { c.u16()? } else { 0 };
                b.requests.push(Request { arrival: Nanos(prev), op, lpn, pages, content, stream });
            }
            b.contents.reserve(nc);
            for _ in 0..nc {
                b.contents.push(ContentId(c.u32()?));
            }
            for _ in 0..nh {
                let i = c.u32()?;
                let h = match c.byte()? {
                    0 => Hint::Overwrite,
                    1 => Hint::Append { after: c.u32()? },
                    _ => return None,
                };
                b.hints.push((i, h));
            }
            (c.pos == c.buf.len()).then_some(prev)
        })();
        let Some(prev) = decoded else { return Err(corrupt(&self.path)) };
        self.prev = prev;
        self.requests += b.requests.len() as u64;
        self.batches -= 1;
        Ok(true)
    }

    /// Requests read back so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// The trace's path (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads a batch's fixed-width little-endian fields; `None` past its end.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    #[inline]
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let b = self.buf.get(self.pos..self.pos + N)?;
        self.pos += N;
        b.try_into().ok()
    }

    #[inline]
    fn byte(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }

    #[inline]
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }

    #[inline]
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }

    #[inline]
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(seed: u64) -> Workload {
        let mut w = Workload::default();
        let mut t = seed * 1_000_000;
        for i in 0..300u64 {
            t += (i * 7919 + seed) % 5000;
            let op = [Op::Read, Op::Write, Op::Trim][(i % 3) as usize];
            let content = if op == Op::Write && i % 2 == 1 { w.contents.len() as u32 } else { NO_CONTENT };
            // Request 11 (a trim) has more pages than 2 bytes hold.
            let pages = if i == 11 { 70_000 } else { 1 + (i % 9) as u32 };
            if content != NO_CONTENT {
                w.contents.extend((0..pages).map(|k| ContentId((i as u32 * 31 + k) % 1000 + (1 << 30))));
            }
            let lpn = if i == 5 { u32::MAX - 8 } else { (i * 104_729 % 3_000_000) as u32 };
            let stream = if i % 4 == 0 { (i % 70_000) as u16 } else { 0 };
            // One arrival out of order: the form keeps any order.
            let arrival = if i == 7 { Nanos(3) } else { Nanos(t) };
            w.requests.push(Request { arrival, op, lpn, pages, content, stream });
        }
        w.hints = vec![(2, Hint::Overwrite), (10, Hint::Append { after: u32::MAX }), (299, Hint::Append { after: 0 })];
        w
    }

    /// Batches read back are those kept, field for field, in order (every
    /// op, content indices, streams, hints, large values, wide pages, an
    /// arrival that goes back: a wide difference), and the reader ends
    /// after the last.
    #[test]
    fn batches_read_back_as_kept() {
        let kept: Vec<Workload> = (0..5).map(batch).collect();
        let mut w = BatchWriter::create();
        for b in &kept {
            w.keep(&mut b.clone());
        }
        let mut r = w.finish(Path::new("t.trace")).expect("TMPDIR is writable");
        let mut got = Workload::default();
        for (k, b) in kept.iter().enumerate() {
            assert!(r.next_into(&mut got).unwrap());
            // Not `assert_eq!`: a failure would print 300 requests twice.
            assert!(got.requests == b.requests, "batch {k}: requests");
            assert!(got.contents == b.contents, "batch {k}: contents");
            assert_eq!(got.hints, b.hints, "batch {k}");
        }
        assert!(!r.next_into(&mut got).unwrap());
        assert_eq!(r.requests(), 5 * 300);
    }

    /// A disabled writer keeps nothing, so the caller parses again.
    #[test]
    fn a_disabled_writer_gives_no_reader() {
        let mut w = BatchWriter::disabled();
        w.keep(&mut batch(0));
        assert!(w.finish(Path::new("t.trace")).is_none());
    }
}
