//! Reading a trace in batches as it is replayed, holding none of it.
//!
//! [`super::load`] parses the whole file, then builds one [`Workload`].
//! [`stream`] runs the same parser and the same per-record rules
//! ([`super::build_workload`]'s) on a few thousand records at a time and
//! hands each batch of page-aligned requests (with their contents and
//! hints) to the caller, so that memory does not grow with the trace: what
//! stays is the parser's state, the volume table, and the interned content
//! hashes of a trace that carries them (one entry per distinct content).
//!
//! A volume's logical range starts after the ranges of the volumes before
//! it ([`super::VolumeSelect::All`]), so a trace with several volumes
//! cannot be placed before its end is known. A first pass without a
//! [`Carry`] places the first volume (and, with `merge`, every volume) and
//! says [`StreamEnd::rescan`] when a second one appeared: the caller then
//! reads the file once more with the volume table. A second pass with the
//! first pass's [`StreamEnd::carry`] gives the same requests with the same
//! content ids.
//!
//! Errors are those of [`super::load`], in the same order: a line that does
//! not parse stops the pass at once; a record the rules refuse (beyond the
//! capacity, say) is reported when the file has been read to its end, as
//! [`super::load`] parses everything before it builds.

use super::load::{empty_error, provenance, volume_bases, Builder, RecordReader};
use super::spool::BatchReader;
use super::PageHash;
use super::{LoadOptions, TraceError, TraceFormat, TraceInput};
use crate::workload::{FileJoiner, FileRule, Provenance, Workload};
use std::collections::HashMap;

/// Records parsed per batch.
pub const BATCH_RECORDS: usize = 4096;

/// How many records ahead [`stream`] prefetches the pages-touched bitmap
/// ([`Builder::prefetch_touched`]): a few hundred nanoseconds of
/// [`Builder::add`], about one memory latency.
const TOUCHED_AHEAD: usize = 16;

/// What a second pass needs from the first: each volume's first logical
/// page, and the content hashes already interned (so that ids agree).
#[derive(Clone, Debug, Default)]
pub struct Carry {
    bases: Vec<u64>,
    intern: HashMap<PageHash, u32>,
}

/// The account of one pass.
#[derive(Debug)]
pub struct StreamEnd {
    pub format: TraceFormat,
    pub provenance: Provenance,
    /// Lines skipped because they did not parse (`skip_bad_lines`).
    pub bad_lines: u64,
    /// Those of [`super::Loaded::warnings`].
    pub warnings: Vec<String>,
    /// Each kept volume with its first logical page.
    pub volumes: Vec<(u32, u64)>,
    /// Requests made (with `--files merged`, after merging).
    pub requests: u64,
    /// Records merged away by [`LoadOptions::files`] (`--files merged`).
    pub joined: u64,
    /// Logical pages addressed (`max lpn + pages`).
    pub lpn_span: u64,
    /// Distinct contents interned (content ids are below this).
    pub content_space: u32,
    /// Read requests carrying content hashes (what the pages held).
    pub reads_with_content: u64,
    /// [`Workload::past_contents`] and [`Workload::past_only`], as loading
    /// the trace gives them, if the pass was asked to track them (else
    /// empty): one entry per page whose first access is a read carrying
    /// its content, so bounded by the device's pages, not the trace.
    pub past_contents: Vec<(u32, crate::units::ContentId)>,
    pub past_only: u32,
    /// `Some` when this pass could not place every volume: read the file
    /// again with this carry (module doc).
    pub rescan: Option<Carry>,
    /// For the next pass over the same file.
    pub carry: Carry,
}

/// Reads `input` once in batches of about [`BATCH_RECORDS`] records,
/// calling `each` with every batch (a [`Workload`] whose `requests`,
/// `contents` and `hints` are those of the batch; hint indices are the
/// batch's). `carry`: from an earlier pass over the same file (module doc).
/// `track_past`: gather [`StreamEnd::past_contents`] (what the trace's
/// reads show of pages not yet written: a bitmap of the pages touched and
/// an entry per page first read with its content).
pub fn stream<E: From<TraceError>>(
    input: &TraceInput,
    opts: &LoadOptions,
    carry: Option<Carry>,
    track_past: bool,
    each: &mut dyn FnMut(&mut Workload) -> Result<(), E>,
) -> Result<StreamEnd, E> {
    opts.validate()?;
    let path = input.path();
    let reader = input.open()?;
    let mut rr = RecordReader::open(reader, path, opts)?;
    let given = carry.is_some();
    let carry = carry.unwrap_or_default();
    let mut b = Builder::new(rr.format(), path, opts, carry.bases);
    b.intern = carry.intern;
    b.track_past = track_past;
    let mut batch = Workload::default();
    // `--files merged`: the records as built, and the request held back
    // until the next record shows whether it continues it.
    let mut joiner = (opts.files == FileRule::Merged).then(|| (FileJoiner::default(), Workload::default()));
    // The first rule a record broke (reported at the end), or a volume
    // that could not be placed: nothing more is built then.
    let mut refused: Option<TraceError> = None;
    let mut unplaced = false;
    loop {
        let more = rr.fill(BATCH_RECORDS)?;
        let (recs, extras) = rr.take();
        if refused.is_none() && !unplaced {
            let mut extras = extras.into_iter();
            for (k, r) in recs.iter().enumerate() {
                if let Some(next) = recs.get(k + TOUCHED_AHEAD) {
                    b.prefetch_touched(next);
                }
                let extra = if r.extra { extras.next() } else { None };
                if b.base(r.slot).is_none() {
                    debug_assert!(!given, "a carry places every volume");
                    unplaced = true;
                    break;
                }
                if let Err(e) = b.add(r, extra) {
                    refused = Some(e);
                    break;
                }
            }
            if refused.is_none() && !unplaced && !b.requests.is_empty() {
                batch.requests.clear();
                batch.contents.clear();
                batch.hints.clear();
                let made = match joiner.as_mut() {
                    Some((_, raw)) => raw,
                    None => &mut batch,
                };
                std::mem::swap(&mut made.requests, &mut b.requests);
                std::mem::swap(&mut made.contents, &mut b.contents);
                std::mem::swap(&mut made.hints, &mut b.hints);
                if let Some((j, raw)) = joiner.as_mut() {
                    j.join(raw, &mut batch);
                    raw.requests.clear();
                    raw.contents.clear();
                    raw.hints.clear();
                }
                if !batch.requests.is_empty() {
                    each(&mut batch)?;
                }
            }
        }
        if !more {
            break;
        }
    }
    // The last request held back, in a batch of its own.
    let mut joined = 0;
    if let Some((mut j, _)) = joiner {
        if refused.is_none() && !unplaced {
            batch.requests.clear();
            batch.contents.clear();
            batch.hints.clear();
            j.flush(&mut batch);
            if !batch.requests.is_empty() {
                each(&mut batch)?;
            }
        }
        joined = j.merged;
    }
    let table = rr.volume_table().to_vec();
    let (mut parsed, _) = rr.finish();
    if table.is_empty() {
        return Err(empty_error(&parsed, path, opts).into());
    }
    if unplaced {
        let bases = volume_bases(&table, path, opts)?;
        let rescan = Some(Carry { bases, intern: HashMap::new() });
        let end = StreamEnd {
            format: parsed.format,
            provenance: provenance(path, parsed.format, parsed.description.take()),
            bad_lines: parsed.bad_lines,
            warnings: Vec::new(),
            volumes: Vec::new(),
            requests: 0,
            joined: 0,
            lpn_span: 0,
            content_space: 0,
            reads_with_content: 0,
            past_contents: Vec::new(),
            past_only: 0,
            rescan,
            carry: Carry::default(),
        };
        return Ok(end);
    }
    if let Some(e) = refused {
        return Err(e.into());
    }
    let made = b.made();
    let reads_with_content = b.reads_with_content;
    // Interned whole before `finish`: it tells which contents a read
    // shows that some write carries (its `past_contents`).
    let mut built = b.finish(&mut parsed.warnings);
    let intern = std::mem::take(&mut built.intern);
    let volumes = table.iter().zip(&built.bases).map(|(&(v, _, _), &b)| (v, b)).collect();
    Ok(StreamEnd {
        format: parsed.format,
        provenance: provenance(path, parsed.format, parsed.description.take()),
        bad_lines: parsed.bad_lines,
        warnings: parsed.warnings,
        volumes,
        requests: made - joined,
        joined,
        lpn_span: built.lpn_span,
        content_space: built.content_space.max(intern.len() as u32),
        reads_with_content,
        past_contents: built.past_contents,
        past_only: built.past_only,
        rescan: None,
        carry: Carry { bases: built.bases, intern },
    })
}

/// Batches in circulation between [`Ahead`]'s reading thread and its
/// caller: the one being replayed and up to `AHEAD_BATCHES - 1` parsed
/// ahead. A fixed pool, whatever the trace's length, so the memory they
/// hold is that of `AHEAD_BATCHES + 2` batches (with [`stream`]'s own two).
pub const AHEAD_BATCHES: usize = 4;

/// Why the parsing thread stopped early.
enum Halt {
    /// The trace's own error, reported to the caller as [`stream`] would.
    Trace(TraceError),
    /// The caller stopped taking batches ([`Ahead`] dropped).
    Stopped,
}

impl From<TraceError> for Halt {
    fn from(e: TraceError) -> Self {
        Halt::Trace(e)
    }
}

/// What the parsing thread returns: the pass's account (`E`: a
/// [`StreamEnd`], or the requests read back by [`Ahead::read_back`]) and
/// the caller's state, with whatever `prepare` gathered in it.
type Joined<S, E> = Result<(E, S), Halt>;

/// [`stream`] on a thread of its own, a few batches ahead of the caller
/// (issue 26: the replay parses its trace on the machine's other core).
///
/// The thread reads the file as [`stream`] does and runs `prepare` (with
/// the caller's state `S`, handed back by [`Ahead::finish`]) on each
/// batch, in order, before handing it over; the caller takes them with
/// [`Ahead::next_batch`] and gives each back with [`Ahead::recycle`]. The
/// batches are a pool of [`AHEAD_BATCHES`]: the thread waits for one to
/// come back before it hands over another, so their buffers are used again
/// and memory stays bounded as with [`stream`]. Same batches, same order,
/// same end, same errors: a line that does not parse is reported by
/// [`Ahead::finish`] after every batch before it has been handed over, as
/// [`stream`] reports it after calling its `each` on them. Dropping an
/// `Ahead` early stops the thread at its next batch and waits for it.
pub struct Ahead<S, E = StreamEnd> {
    rx: Option<std::sync::mpsc::Receiver<Workload>>,
    back: Option<std::sync::mpsc::Sender<Workload>>,
    thread: Option<std::thread::JoinHandle<Joined<S, E>>>,
}

/// The two channels of an [`Ahead`]: batches handed over (bounded) and
/// batches given back, the latter primed with the pool.
type Channels = (
    std::sync::mpsc::SyncSender<Workload>,
    std::sync::mpsc::Receiver<Workload>,
    std::sync::mpsc::Sender<Workload>,
    std::sync::mpsc::Receiver<Workload>,
);

fn channels() -> Channels {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Workload>(AHEAD_BATCHES);
    let (back, spare) = std::sync::mpsc::channel::<Workload>();
    for _ in 0..AHEAD_BATCHES {
        // Cannot fail: `spare` is alive.
        let _ = back.send(Workload::default());
    }
    (tx, rx, back, spare)
}

impl<S: Send + 'static> Ahead<S, u64> {
    /// The batches a first pass kept ([`super::spool`]), read back on a
    /// thread of their own instead of parsing the trace again: the same
    /// batches in the same order as [`Ahead::start`] with that pass's
    /// carry would give; `prepare` and the pool as there. Its account
    /// ([`Ahead::finish`]) is the requests read back.
    pub fn read_back(
        mut spool: BatchReader,
        mut state: S,
        prepare: fn(&mut S, &mut Workload),
    ) -> Result<Ahead<S, u64>, TraceError> {
        let (tx, rx, back, spare) = channels();
        let name = spool.path().to_path_buf();
        let reading = move || {
            loop {
                let mut out = spare.recv().map_err(|_| Halt::Stopped)?;
                if !spool.next_into(&mut out)? {
                    break;
                }
                prepare(&mut state, &mut out);
                tx.send(out).map_err(|_| Halt::Stopped)?;
            }
            Ok((spool.requests(), state))
        };
        let thread = std::thread::Builder::new()
            .name("trace reader".into())
            .spawn(reading)
            .map_err(|source| TraceError::Io { path: name, source })?;
        Ok(Ahead { rx: Some(rx), back: Some(back), thread: Some(thread) })
    }
}

impl<S: Send + 'static> Ahead<S> {
    /// Starts reading `input` (the arguments of [`stream`]); `prepare` runs
    /// on the reading thread, with `state`. An error only if the thread
    /// cannot be started.
    pub fn start(
        input: &TraceInput,
        opts: &LoadOptions,
        carry: Option<Carry>,
        track_past: bool,
        mut state: S,
        prepare: fn(&mut S, &mut Workload),
    ) -> Result<Ahead<S>, TraceError> {
        let (tx, rx, back, spare) = channels();
        let (name, input, opts) = (input.path().to_path_buf(), input.clone(), opts.clone());
        let reading = move || {
            let end = stream::<Halt>(&input, &opts, carry, track_past, &mut |b| {
                prepare(&mut state, b);
                let mut out = spare.recv().map_err(|_| Halt::Stopped)?;
                // `stream` clears what it gets back before filling it.
                std::mem::swap(&mut out.requests, &mut b.requests);
                std::mem::swap(&mut out.contents, &mut b.contents);
                std::mem::swap(&mut out.hints, &mut b.hints);
                tx.send(out).map_err(|_| Halt::Stopped)
            })?;
            Ok((end, state))
        };
        let thread = std::thread::Builder::new()
            .name("trace reader".into())
            .spawn(reading)
            .map_err(|source| TraceError::Io { path: name, source })?;
        Ok(Ahead { rx: Some(rx), back: Some(back), thread: Some(thread) })
    }
}

impl<S, E> Ahead<S, E> {
    /// The next batch, `None` after the last one. An error of the trace
    /// comes from [`Ahead::finish`].
    pub fn next_batch(&mut self) -> Option<Workload> {
        self.rx.as_ref().and_then(|rx| rx.recv().ok())
    }

    /// Gives a batch taken with [`Ahead::next_batch`] back for reuse.
    pub fn recycle(&mut self, b: Workload) {
        if let Some(back) = &self.back {
            // The thread may have finished: then the batch is dropped.
            let _ = back.send(b);
        }
    }

    /// The pass's account and the state back, or the trace's error: after
    /// [`Ahead::next_batch`] said `None` (batches not taken yet are read and
    /// dropped first).
    pub fn finish(mut self) -> Result<(E, S), TraceError> {
        while let Some(b) = self.next_batch() {
            self.recycle(b);
        }
        match self.thread.take().map(join) {
            Some(Ok(done)) => Ok(done),
            Some(Err(Halt::Trace(e))) => Err(e),
            // Only closed channels stop the thread, and `self` holds them
            // open; `thread` is taken only here and in `drop`.
            Some(Err(Halt::Stopped)) | None => unreachable!("the trace reader stopped by nobody"),
        }
    }
}

/// Waits for the reading thread; its panic is the caller's.
fn join<S, E>(h: std::thread::JoinHandle<Joined<S, E>>) -> Joined<S, E> {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

impl<S, E> Drop for Ahead<S, E> {
    fn drop(&mut self) {
        // Both channels closed: the thread stops at its next send or wait.
        (self.rx, self.back) = (None, None);
        if let Some(h) = self.thread.take() {
            // An early stop: the thread's end or error is not wanted.
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;
    use std::io::Write;
    use std::path::Path;

    /// An SSDsim ASCII trace of `n` one-page writes, line `bad` (1-based)
    /// unparsable.
    fn trace(n: u64, bad: Option<u64>) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for i in 1..=n {
            if Some(i) == bad {
                writeln!(f, "{i}000 0 x 8 0").unwrap();
            } else {
                writeln!(f, "{i}000 0 {} 8 0", (i % 97) * 8).unwrap();
            }
        }
        f.flush().unwrap();
        f
    }

    fn opts() -> LoadOptions {
        LoadOptions { format: Some(TraceFormat::Ssdsim), ..LoadOptions::default() }
    }

    /// Each batch's (first lpn, arrival, requests), and the end's request
    /// count or the error's message.
    type Seen = (Vec<(u32, Nanos, usize)>, Result<u64, String>);

    fn summary(b: &Workload) -> (u32, Nanos, usize) {
        (b.requests[0].lpn, b.requests[0].arrival, b.requests.len())
    }

    fn by_stream(path: &Path) -> Seen {
        let mut seen = Vec::new();
        let end = stream::<TraceError>(&TraceInput::file(path), &opts(), None, false, &mut |b| {
            seen.push(summary(b));
            Ok(())
        });
        (seen, end.map(|e| e.requests).map_err(|e| e.to_string()))
    }

    fn by_ahead(path: &Path) -> Seen {
        let mut seen = Vec::new();
        let mut ahead = Ahead::start(&TraceInput::file(path), &opts(), None, false, 0usize, |n, _| *n += 1).unwrap();
        while let Some(b) = ahead.next_batch() {
            seen.push(summary(&b));
            ahead.recycle(b);
        }
        let end = ahead.finish().map(|(e, prepared)| {
            assert_eq!(prepared, seen.len(), "`prepare` ran once per batch, on the batches handed over");
            e.requests
        });
        (seen, end.map_err(|e| e.to_string()))
    }

    /// The batches of [`Ahead`] are [`stream`]'s, in order, and so is its
    /// end: with a line that does not parse in the second half, every batch
    /// before it, then the same `file:line: reason` error.
    #[test]
    fn ahead_hands_over_streams_batches_and_errors() {
        let n = 10 * BATCH_RECORDS as u64 + 5;
        let good = trace(n, None);
        let (batches, end) = by_ahead(good.path());
        assert_eq!(batches.len(), 11);
        assert_eq!(end, Ok(n));
        assert_eq!((batches, end), by_stream(good.path()));
        let line = 7 * BATCH_RECORDS as u64 + 100;
        let bad = trace(n, Some(line));
        let (batches, end) = by_ahead(bad.path());
        assert_eq!(batches.len(), 7, "the batches before the bad line's");
        let msg = end.as_ref().unwrap_err();
        assert!(msg.starts_with(&format!("{}:{line}: ", bad.path().display())), "{msg}");
        assert_eq!((batches, end), by_stream(bad.path()));
    }

    /// What a first pass keeps ([`crate::trace::spool`]) is read back by
    /// [`Ahead::read_back`] as the very batches the pass made, request for
    /// request and in the same boundaries, with `prepare` run on each, and
    /// without the trace: the file is gone before the second pass begins.
    #[test]
    fn read_back_gives_the_first_pass_batches_without_the_file() {
        let n = 5 * BATCH_RECORDS as u64 + 17;
        let f = trace(n, None);
        let path = f.path().to_path_buf();
        let input = TraceInput::file(&path);
        let writer = super::super::spool::BatchWriter::create();
        let mut ahead =
            Ahead::start(&input, &opts(), None, false, writer, super::super::spool::BatchWriter::keep).unwrap();
        let mut first = Vec::new();
        while let Some(b) = ahead.next_batch() {
            first.push(b.requests.clone());
            ahead.recycle(b);
        }
        let (end, writer) = ahead.finish().unwrap();
        assert_eq!(end.requests, n);
        let kept = writer.finish(&path).expect("TMPDIR is writable");
        drop(f);
        assert!(!path.exists());
        let mut again = Ahead::read_back(kept, 0usize, |k, _| *k += 1).unwrap();
        let mut second = Vec::new();
        while let Some(b) = again.next_batch() {
            second.push(b.requests.clone());
            again.recycle(b);
        }
        let (requests, prepared) = again.finish().unwrap();
        assert_eq!((requests, prepared), (n, first.len()));
        assert_eq!(first.len(), 6);
        assert!(first == second, "the same batches");
    }

    /// A caller that stops early (an error of its own) drops the `Ahead`:
    /// its thread stops and is waited for, whether it was blocked handing
    /// over a batch or waiting for one to come back.
    #[test]
    fn dropping_ahead_stops_its_thread() {
        let f = trace(20 * BATCH_RECORDS as u64, None);
        for taken in [0, 1, AHEAD_BATCHES + 1] {
            let mut ahead = Ahead::start(&TraceInput::file(f.path()), &opts(), None, false, (), |_, _| {}).unwrap();
            for _ in 0..taken {
                let b = ahead.next_batch().unwrap();
                ahead.recycle(b);
            }
            drop(ahead);
        }
        // `finish` before the end reads the rest.
        let mut ahead = Ahead::start(&TraceInput::file(f.path()), &opts(), None, false, (), |_, _| {}).unwrap();
        let _kept = ahead.next_batch().unwrap();
        assert_eq!(ahead.finish().unwrap().0.requests, 20 * BATCH_RECORDS as u64);
    }
}
