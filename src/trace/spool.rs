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
//! bounded (a 64 KiB buffer each way and one batch's bytes); the disk
//! holds about 8-12 bytes per request.
//!
//! Nothing here can change a run's result or its errors: every error of
//! the trace is the first pass's, which still parses the text; a temporary
//! file that cannot be made or written only means the second pass parses
//! the text again, as it did before.
//!
//! The form, per batch: its length in bytes (4, little-endian), then
//! LEB128 varints: the counts of requests, contents and hints; per request
//! a flags byte (op in bits 0-1, bit 2: has a content index, bit 3: has a
//! stream), the arrival's difference from the previous request's (wrapping,
//! so any order round-trips; a trace's is never negative), the first page,
//! the pages, then the content index and the stream if flagged; each
//! content id; each hint's request index, its kind (0 overwrite, 1 append)
//! and an append's page.

use super::TraceError;
use crate::units::{ContentId, Nanos, Op};
use crate::workload::{Hint, Request, Workload, NO_CONTENT};
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const HAS_CONTENT: u8 = 1 << 2;
const HAS_STREAM: u8 = 1 << 3;

/// Writes a pass's batches to an anonymous temporary file (module doc), or
/// does nothing once that failed.
#[derive(Debug)]
pub struct BatchWriter {
    out: Option<BufWriter<File>>,
    buf: Vec<u8>,
    prev: u64,
    requests: u64,
}

impl BatchWriter {
    /// A writer on a new temporary file; a disabled one (keeping nothing)
    /// if the file cannot be made.
    pub fn create() -> BatchWriter {
        let out = tempfile::tempfile().ok().map(|f| BufWriter::with_capacity(1 << 16, f));
        BatchWriter { out, buf: Vec::new(), prev: 0, requests: 0 }
    }

    /// A writer that keeps nothing ([`BatchWriter::finish`] says `None`).
    pub fn disabled() -> BatchWriter {
        BatchWriter { out: None, buf: Vec::new(), prev: 0, requests: 0 }
    }

    /// Keeps batch `b` (unchanged; `&mut` to serve as an
    /// [`super::stream::Ahead`] `prepare`). A write error disables the
    /// writer.
    pub fn keep(&mut self, b: &mut Workload) {
        let Some(out) = self.out.as_mut() else { return };
        let buf = &mut self.buf;
        buf.clear();
        buf.extend_from_slice(&[0; 4]);
        put(buf, b.requests.len() as u64);
        put(buf, b.contents.len() as u64);
        put(buf, b.hints.len() as u64);
        let mut prev = self.prev;
        for r in &b.requests {
            let op = match r.op {
                Op::Read => 0,
                Op::Write => 1,
                Op::Trim => 2,
            };
            let has_content = r.content != NO_CONTENT;
            let flags = op | if has_content { HAS_CONTENT } else { 0 } | if r.stream != 0 { HAS_STREAM } else { 0 };
            buf.push(flags);
            put(buf, r.arrival.0.wrapping_sub(prev));
            prev = r.arrival.0;
            put(buf, u64::from(r.lpn));
            put(buf, u64::from(r.pages));
            if has_content {
                put(buf, u64::from(r.content));
            }
            if r.stream != 0 {
                put(buf, u64::from(r.stream));
            }
        }
        for c in &b.contents {
            put(buf, u64::from(c.0));
        }
        for &(i, h) in &b.hints {
            put(buf, u64::from(i));
            match h {
                Hint::Overwrite => buf.push(0),
                Hint::Append { after } => {
                    buf.push(1);
                    put(buf, u64::from(after));
                }
            }
        }
        let Ok(len) = u32::try_from(buf.len() - 4) else {
            self.out = None;
            return;
        };
        buf[..4].copy_from_slice(&len.to_le_bytes());
        if out.write_all(buf).is_err() {
            self.out = None;
            return;
        }
        self.prev = prev;
        self.requests += b.requests.len() as u64;
    }

    /// The batches kept, to be read back from the first; `None` if the
    /// writer was disabled or the file cannot be rewound. `path`: the
    /// trace's, for the reader's errors.
    pub fn finish(self, path: &Path) -> Option<BatchReader> {
        let mut file = self.out?.into_inner().ok()?;
        file.seek(SeekFrom::Start(0)).ok()?;
        Some(BatchReader {
            input: BufReader::with_capacity(1 << 16, file),
            buf: Vec::new(),
            prev: 0,
            requests: 0,
            kept: self.requests,
            path: path.to_path_buf(),
        })
    }
}

/// Reads back the batches a [`BatchWriter`] kept, in order.
#[derive(Debug)]
pub struct BatchReader {
    input: BufReader<File>,
    buf: Vec<u8>,
    prev: u64,
    /// Requests read back so far.
    requests: u64,
    /// Requests kept.
    kept: u64,
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
        if self.input.fill_buf().map_err(|e| bad(&self.path, e))?.is_empty() {
            if self.requests == self.kept {
                return Ok(false);
            }
            return Err(bad(&self.path, io::ErrorKind::UnexpectedEof.into()));
        }
        let mut len = [0u8; 4];
        self.input.read_exact(&mut len).map_err(|e| bad(&self.path, e))?;
        self.buf.resize(u32::from_le_bytes(len) as usize, 0);
        self.input.read_exact(&mut self.buf).map_err(|e| bad(&self.path, e))?;
        let corrupt = |path: &Path| bad(path, io::Error::new(io::ErrorKind::InvalidData, "not what was written"));
        let mut c = Cursor { buf: &self.buf, pos: 0 };
        let decoded = (|| {
            let (n, nc, nh) = (c.get()? as usize, c.get()? as usize, c.get()? as usize);
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
                prev = prev.wrapping_add(c.get()?);
                let lpn = c.get32()?;
                let pages = c.get32()?;
                let content = if flags & HAS_CONTENT != 0 { c.get32()? } else { NO_CONTENT };
                let stream = if flags & HAS_STREAM != 0 { u16::try_from(c.get()?).ok()? } else { 0 };
                b.requests.push(Request { arrival: Nanos(prev), op, lpn, pages, content, stream });
            }
            b.contents.reserve(nc);
            for _ in 0..nc {
                b.contents.push(ContentId(c.get32()?));
            }
            for _ in 0..nh {
                let i = c.get32()?;
                let h = match c.byte()? {
                    0 => Hint::Overwrite,
                    1 => Hint::Append { after: c.get32()? },
                    _ => return None,
                };
                b.hints.push((i, h));
            }
            (c.pos == c.buf.len()).then_some(prev)
        })();
        let Some(prev) = decoded else { return Err(corrupt(&self.path)) };
        self.prev = prev;
        self.requests += b.requests.len() as u64;
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

/// Appends `v` as an LEB128 varint.
#[inline]
fn put(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Reads [`put`]'s varints from a batch's bytes; `None` past its end or on
/// a malformed value.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    #[inline]
    fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline]
    fn get(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    #[inline]
    fn get32(&mut self) -> Option<u32> {
        u32::try_from(self.get()?).ok()
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
            let pages = 1 + (i % 9) as u32;
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
    /// op, content indices, streams, hints, large values, an arrival that
    /// goes back), and the reader ends after the last.
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
