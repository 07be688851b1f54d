//! Where a streamed trace's bytes come from, pass after pass.
//!
//! A streamed replay ([`super::stream`]) reads its trace more than once:
//! a first pass for what the replay needs before its first request, then
//! the replay (docs/streaming.md). A regular file is simply opened again.
//! A trace that can be read only once (a pipe, a process substitution such
//! as `<(zcat t.gz)`, a character device) is first read to its end and
//! copied to an anonymous temporary file ([`tempfile::tempfile`]: in `TMPDIR`,
//! unlinked at once, so the system removes it when the run ends, however
//! it ends), and every pass reads the copy: memory stays bounded (a 64 KiB
//! buffer) and the disk holds the trace's bytes as they came (a compressed
//! stream stays compressed). Names in messages and reports are the path
//! the user gave, never the copy's.

use super::load::RecordReader;
use super::{LoadOptions, TraceError};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bytes of a trace, readable once per pass (module doc).
#[derive(Clone, Debug)]
pub struct TraceInput {
    path: PathBuf,
    spool: Option<Arc<Spool>>,
}

/// The anonymous copy of a trace read once.
#[derive(Debug)]
struct Spool {
    file: File,
    bytes: u64,
}

impl TraceInput {
    /// A regular file at `path`, opened again for each pass.
    pub fn file(path: &Path) -> TraceInput {
        TraceInput { path: path.to_path_buf(), spool: None }
    }

    /// `path` read to its end once, its bytes copied to an anonymous
    /// temporary file that every pass reads (module doc). Errors: reading
    /// `path` is [`TraceError::Io`]; creating or writing the copy is
    /// [`TraceError::Spool`], which says where it went and what to do.
    /// Once 1 MiB (`CHECK_HEAD`) is copied, their first lines are read as
    /// `opts` reads a trace: a stream that is no trace (`/dev/zero`,
    /// `/dev/urandom`, which never end) stops there with the load's error
    /// ([`TraceError::LineTooLong`], [`TraceError::Undetected`]) instead
    /// of filling `TMPDIR` forever.
    pub fn spooled(path: &Path, opts: &LoadOptions) -> Result<TraceInput, TraceError> {
        let read_err = |source| TraceError::Io { path: path.to_path_buf(), source };
        let spool_err = |source| TraceError::Spool { path: path.to_path_buf(), dir: std::env::temp_dir(), source };
        let mut from = File::open(path).map_err(read_err)?;
        let mut file = tempfile::tempfile().map_err(spool_err)?;
        let mut buf = vec![0u8; 1 << 16];
        let mut bytes = 0u64;
        let mut checked = false;
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_err(e)),
            };
            file.write_all(&buf[..n]).map_err(spool_err)?;
            bytes += n as u64;
            if !checked && bytes >= CHECK_HEAD {
                checked = true;
                check_head(&file, bytes, path, opts)?;
            }
        }
        file.flush().map_err(spool_err)?;
        Ok(TraceInput { path: path.to_path_buf(), spool: Some(Arc::new(Spool { file, bytes })) })
    }

    /// The trace's path as the user gave it (for messages and reports).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes copied to the temporary file, if the trace was spooled.
    pub fn spooled_bytes(&self) -> Option<u64> {
        self.spool.as_ref().map(|s| s.bytes)
    }

    /// A reader of the trace from its first byte, decompressed
    /// ([`super::open::open`]'s rules); each call reads independently (the
    /// copy is read at positions, not through a shared offset).
    pub fn open(&self) -> Result<Box<dyn BufRead>, TraceError> {
        let Some(spool) = &self.spool else { return super::open::open(&self.path) };
        let reader = BufReader::with_capacity(1 << 16, SpoolReader { spool: Arc::clone(spool), pos: 0 });
        super::open::decompress(reader).map_err(|source| TraceError::Io { path: self.path.clone(), source })
    }
}

/// Bytes of a trace read once that [`TraceInput::spooled`] copies before
/// it checks their first lines.
const CHECK_HEAD: u64 = 1 << 20;

/// The first `bytes` of a spool read as a trace's head ([`RecordReader::open`]:
/// line length and format detection, `opts.format` if given): its error if
/// it is no trace. Any other outcome (a compressed stream cut short here)
/// is left to the passes, which read the whole copy.
fn check_head(file: &File, bytes: u64, path: &Path, opts: &LoadOptions) -> Result<(), TraceError> {
    /// The copy's first bytes, read at positions (the copy's own offset is
    /// where the next bytes go).
    struct Head<'a> {
        file: &'a File,
        pos: u64,
        end: u64,
    }
    impl Read for Head<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            use std::os::unix::fs::FileExt;
            let want = buf.len().min(usize::try_from(self.end - self.pos).unwrap_or(usize::MAX));
            let n = self.file.read_at(&mut buf[..want], self.pos)?;
            self.pos += n as u64;
            Ok(n)
        }
    }
    let head = BufReader::with_capacity(1 << 16, Head { file, pos: 0, end: bytes });
    let Ok(reader) = super::open::decompress(head) else { return Ok(()) };
    match RecordReader::open(reader, path, opts) {
        Err(e @ (TraceError::LineTooLong { .. } | TraceError::Undetected { .. })) => Err(e),
        _ => Ok(()),
    }
}

/// Reads a [`Spool`] from the start, at positions of its own.
struct SpoolReader {
    spool: Arc<Spool>,
    pos: u64,
}

impl Read for SpoolReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.spool.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spooled input reads back the bytes it was given, from the start,
    /// for every reader (two at once here), compressed ones decompressed.
    #[test]
    fn a_spool_reads_back_its_bytes_for_every_pass() {
        let dir = tempfile::tempdir().unwrap();
        let text = "0 0 0 8 1\n1000 0 8 8 0\n".repeat(5000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        for (name, bytes) in [("plain", text.clone().into_bytes()), ("gz", gz.finish().unwrap())] {
            let p = dir.path().join(name);
            std::fs::write(&p, &bytes).unwrap();
            let input = TraceInput::spooled(&p, &LoadOptions::default()).unwrap();
            std::fs::remove_file(&p).unwrap();
            assert_eq!(input.spooled_bytes(), Some(bytes.len() as u64));
            assert_eq!(input.path(), p, "named as given");
            let (mut a, mut b) = (input.open().unwrap(), input.open().unwrap());
            let mut first = String::new();
            a.read_line(&mut first).unwrap();
            let mut whole = String::new();
            b.read_to_string(&mut whole).unwrap();
            assert_eq!(whole, text, "{name}");
            a.read_to_string(&mut first).unwrap();
            assert_eq!(first, text, "{name}: a reader's position is its own");
        }
        let missing = TraceInput::spooled(&dir.path().join("missing"), &LoadOptions::default());
        assert!(matches!(missing, Err(TraceError::Io { .. })));
    }

    /// A stream that is no trace stops once its head is copied, with the
    /// error a load gives, instead of being copied to its end (`/dev/zero`
    /// has none); a trace of any length is copied whole.
    #[test]
    fn a_spool_of_no_trace_stops_at_its_head() {
        let dir = tempfile::tempdir().unwrap();
        let zeros = dir.path().join("zeros");
        std::fs::write(&zeros, vec![0u8; 3 << 20]).unwrap();
        let e = TraceInput::spooled(&zeros, &LoadOptions::default()).unwrap_err();
        assert!(matches!(e, TraceError::LineTooLong { line: 1, .. }), "{e}");
        let noise = dir.path().join("noise");
        std::fs::write(&noise, "\u{1}\u{2} x\n".repeat(1 << 20)).unwrap();
        let e = TraceInput::spooled(&noise, &LoadOptions::default()).unwrap_err();
        assert!(matches!(e, TraceError::Undetected { .. }), "{e}");
        let text = dir.path().join("t");
        std::fs::write(&text, "0 0 0 8 1\n1000 0 8 8 0\n".repeat(100_000)).unwrap();
        let input = TraceInput::spooled(&text, &LoadOptions::default()).unwrap();
        assert_eq!(input.spooled_bytes(), Some(std::fs::metadata(&text).unwrap().len()));
    }
}
