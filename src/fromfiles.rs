//! Content-bearing traces built from directory trees (`dedupsim trace
//! from-files`): real files give FAD's notion of a "file" a concrete
//! meaning, and the same tree given twice is Light-Dedup's "Copy" scenario.
//!
//! The rules ([`scan`]; also in `docs/trace-formats.md`):
//!
//! * **Order.** The arguments are taken in the order given. An argument
//!   that is a directory contributes every regular file below it, sorted by
//!   the byte-wise order of the full path (as given, joined with the names
//!   found); an argument that is a regular file contributes itself. The same
//!   tree given twice is scanned twice.
//! * **What is skipped.** Symbolic links are never followed (below an
//!   argument; an argument itself is resolved), and neither they nor other
//!   non-regular entries (FIFOs, sockets, devices) are read; both are only
//!   counted. Empty files are counted and skipped. A directory or file that
//!   cannot be listed or read is reported in [`FromFilesResult::skipped`]
//!   and skipped; a file that fails half-way contributes nothing. Only an
//!   argument that does not exist or cannot be listed is an error.
//! * **Layout.** Each non-empty file is written as ONE write request of
//!   `ceil(len / page_size)` whole pages, its last partial page zero-padded.
//!   Files are laid out back to back from address 0, each starting on a page
//!   boundary, on volume 0.
//! * **Content.** One [`PageHash`] per 4 KiB of each page: the 16
//!   big-endian bytes of xxh3-128 of those 4096 bytes (zero-padded past the
//!   end of the file). With the default 4 KiB pages that is one xxh3-128 per
//!   page; larger pages (a power of two multiple of 4 KiB) are carried as
//!   their 4 KiB pieces, which the trace loader combines back into one
//!   content per page, so two pages get the same content exactly when their
//!   bytes are equal (up to hash collisions).
//! * **Time.** Request `i` (0-based, writes first, then reads) arrives at
//!   `i × inter_arrival` (default 100 µs).
//! * **Read phase.** [`ReadPhase::All`] reads every file once, whole, in
//!   the same order as the writes. [`ReadPhase::Zipf`] issues `N` whole-file
//!   reads of files drawn by a Zipf law of exponent `a` (default 0.8) over
//!   popularity ranks; ranks are given to files by a shuffle of the file
//!   list, and shuffle and draws come from one `Xoshiro256PlusPlus` stream
//!   seeded with the seed, so the same tree and seed give the same trace.
//!   `N` is at most [`MAX_ZIPF_READS`]; read records that memory cannot
//!   hold are an error ([`FromFilesError::Alloc`]), not an abort.
//! * **Totals.** `pages` counts the pages written and `distinct_pages` the
//!   distinct page contents among them; the dedup rate is
//!   `1 - distinct_pages / pages`, as `trace stats` computes it from the
//!   loaded trace.

use crate::content::ZipfSampler;
use crate::trace::{PageHash, TraceHint, TraceRecord, HASH_PAGE};
use crate::units::{Nanos, Op};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use xxhash_rust::xxh3::xxh3_128;

/// Zipf exponent of [`ReadPhase::Zipf`] when none is given.
pub const DEFAULT_ZIPF_A: f64 = 0.8;

/// Most reads of [`ReadPhase::Zipf`]: the request limit of synthetic
/// workloads ([`crate::synth::MAX_REQUESTS`], 2^32 - 1). Each read is a
/// trace record built in memory before the trace is written, so a larger
/// count would exhaust memory (and the read requests `run` could replay)
/// long before it is done.
pub const MAX_ZIPF_READS: u64 = crate::synth::MAX_REQUESTS;

/// Bytes read from a file at a time.
const CHUNK: usize = 1 << 20;

/// What follows the writes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum ReadPhase {
    /// Writes only.
    #[default]
    None,
    /// Every file read once, whole, in write order.
    All,
    /// `reads` whole-file reads of Zipf(`a`)-popular files.
    Zipf { reads: u64, a: f64 },
}

impl FromStr for ReadPhase {
    type Err = String;

    /// `none`, `all`, `zipf:N` or `zipf:N:a=A`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let bad = || format!("read phase {s:?} is not `none`, `all`, `zipf:N` or `zipf:N:a=A` (e.g. zipf:1000:a=0.8)");
        match t.to_ascii_lowercase().as_str() {
            "none" => return Ok(ReadPhase::None),
            "all" => return Ok(ReadPhase::All),
            _ => {}
        }
        let rest = t.strip_prefix("zipf:").ok_or_else(bad)?;
        let (n, a) = match rest.split_once(':') {
            Some((n, a)) => (n, Some(a.strip_prefix("a=").ok_or_else(bad)?)),
            None => (rest, None),
        };
        let reads: u64 = n.trim().parse().map_err(|_| bad())?;
        let a = match a {
            Some(a) => a.trim().parse::<f64>().map_err(|_| bad())?,
            None => DEFAULT_ZIPF_A,
        };
        check_zipf(reads, a).map_err(|e| format!("read phase {s:?}: {e}"))?;
        Ok(ReadPhase::Zipf { reads, a })
    }
}

/// Checks a Zipf read phase: `1..=MAX_ZIPF_READS` reads, a finite exponent
/// `>= 0`.
fn check_zipf(reads: u64, a: f64) -> Result<(), String> {
    if reads == 0 {
        return Err("the number of reads must be at least 1".into());
    }
    if reads > MAX_ZIPF_READS {
        return Err(format!(
            "{reads} reads exceed the limit of {MAX_ZIPF_READS} (2^32 - 1, the request limit of synthetic workloads)"
        ));
    }
    if !(a.is_finite() && a >= 0.0) {
        return Err("the Zipf exponent must be a finite number >= 0".into());
    }
    Ok(())
}

impl fmt::Display for ReadPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadPhase::None => f.write_str("none"),
            ReadPhase::All => f.write_str("all"),
            ReadPhase::Zipf { reads, a } => write!(f, "zipf:{reads}:a={a}"),
        }
    }
}

/// Options of [`scan`].
#[derive(Clone, Debug, PartialEq)]
pub struct FromFilesOptions {
    /// Page size in bytes: a power of two, at least 4096.
    pub page_size: u32,
    /// Time between two consecutive requests.
    pub inter_arrival: Nanos,
    pub read_phase: ReadPhase,
    /// Seed of the Zipf read phase.
    pub seed: u64,
    /// Pages per append: 0 writes each file as one request; `n > 0` writes
    /// it as appends of `n` pages (see [`FromFilesOptions::writers`]).
    pub segment: u64,
    /// With `segment > 0`: files appended at once, their segments
    /// interleaved round-robin (FAST'24's concurrent appenders), each
    /// segment at the next free address, so files fragment.
    pub writers: u32,
    /// With `segment > 0`: each append after a file's first carries an
    /// explicit append hint naming the file's previous page (native format
    /// `hint` column; FAST'24's die-allocation hint).
    pub hints: bool,
}

impl Default for FromFilesOptions {
    fn default() -> Self {
        FromFilesOptions {
            page_size: 4096,
            inter_arrival: Nanos::from_us(100),
            read_phase: ReadPhase::None,
            seed: 0,
            segment: 0,
            writers: 1,
            hints: false,
        }
    }
}

/// Why [`scan`] failed as a whole (per-file problems are [`Skipped`]).
#[derive(Debug, thiserror::Error)]
pub enum FromFilesError {
    #[error("invalid from-files options: {0}")]
    InvalidOptions(String),
    /// An argument does not exist, cannot be listed, or is neither a
    /// regular file nor a directory.
    #[error("{}: {reason}", path.display())]
    Root { path: PathBuf, reason: String },
    #[error("no non-empty regular files found under {0}")]
    NoFiles(String),
    #[error("the files need {pages} pages of {page_size} bytes, beyond the simulator's 2^32-page address space")]
    TooLarge { pages: u64, page_size: u32 },
    /// The read phase's records could not be allocated.
    #[error("cannot allocate memory for the {reads} read requests of --read-phase {phase}")]
    Alloc { reads: u64, phase: ReadPhase },
}

/// An entry that was skipped because it could not be listed or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// The regular files found by [`list_files`], in trace order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Path and size at listing time, in trace order.
    pub files: Vec<(PathBuf, u64)>,
    /// Directories that could not be listed.
    pub skipped: Vec<Skipped>,
    /// Symbolic links seen (not followed).
    pub symlinks: u64,
    /// FIFOs, sockets and devices seen (not read).
    pub special: u64,
    /// Sum of the listed files' sizes.
    pub bytes: u64,
    /// The arguments, for messages.
    pub roots: Vec<PathBuf>,
}

/// One file written to the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    pub path: PathBuf,
    /// First byte address of the file's write.
    pub offset: u64,
    /// File length in bytes (as read).
    pub bytes: u64,
    /// Pages written (`ceil(bytes / page_size)`).
    pub pages: u64,
    /// The file's extents, `(byte offset, pages)`, in file order: one
    /// unless appends of several writers fragmented it.
    pub extents: Vec<(u64, u64)>,
}

/// A trace built from files, and what went into it.
#[derive(Clone, Debug, PartialEq)]
pub struct FromFilesResult {
    /// Writes (one per file, with content) then reads, in arrival order.
    pub records: Vec<TraceRecord>,
    /// The files written, in trace order.
    pub files: Vec<FileEntry>,
    /// Directories and files that could not be listed or read.
    pub skipped: Vec<Skipped>,
    /// Empty regular files (not written).
    pub empty_files: u64,
    /// Symbolic links seen (not followed).
    pub symlinks: u64,
    /// FIFOs, sockets and devices seen (not read).
    pub special: u64,
    /// Bytes read from the written files.
    pub bytes: u64,
    /// Pages written.
    pub pages: u64,
    /// Distinct page contents among the pages written.
    pub distinct_pages: u64,
    /// Read requests in the read phase (one per extent of each file read).
    pub reads: u64,
    /// Page size the layout uses.
    pub page_size: u32,
}

impl FromFilesResult {
    /// `1 - distinct_pages / pages` (0 with no pages).
    pub fn dedup_rate(&self) -> f64 {
        if self.pages == 0 {
            0.0
        } else {
            1.0 - self.distinct_pages as f64 / self.pages as f64
        }
    }

    /// A one-paragraph human-readable summary.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "files: {} ({} bytes)\npages: {} of {} bytes\ndistinct pages: {}\ndedup rate: {:.2}%\nrequests: {} ({} writes, {} reads)\n",
            self.files.len(),
            self.bytes,
            self.pages,
            self.page_size,
            self.distinct_pages,
            self.dedup_rate() * 100.0,
            self.records.len(),
            self.records.len() as u64 - self.reads,
            self.reads,
        );
        let mut not = Vec::new();
        if self.empty_files > 0 {
            not.push(format!("{} empty files", self.empty_files));
        }
        if self.symlinks > 0 {
            not.push(format!("{} symbolic links", self.symlinks));
        }
        if self.special > 0 {
            not.push(format!("{} special files", self.special));
        }
        if !self.skipped.is_empty() {
            not.push(format!("{} unreadable entries", self.skipped.len()));
        }
        if !not.is_empty() {
            s.push_str(&format!("not written: {}\n", not.join(", ")));
        }
        s
    }
}

impl FromFilesOptions {
    fn validate(&self) -> Result<(), FromFilesError> {
        let ps = self.page_size;
        if !ps.is_power_of_two() || u64::from(ps) < HASH_PAGE {
            return Err(FromFilesError::InvalidOptions(format!(
                "--page-size {ps}: not a power of two of at least 4096 bytes"
            )));
        }
        if ps > crate::units::MAX_PAGE_SIZE {
            return Err(FromFilesError::InvalidOptions(format!(
                "--page-size {ps}: more than 1 MiB, the bound of geometry.page_size too \
                 (flash pages are a few KiB, e.g. 4KiB or 16KiB)"
            )));
        }
        if self.segment > 0 && self.writers == 0 {
            return Err(FromFilesError::InvalidOptions("--writers must be at least 1".into()));
        }
        if self.segment == 0 && (self.writers != 1 || self.hints) {
            return Err(FromFilesError::InvalidOptions(
                "--writers and --hints describe appends: give --segment PAGES too".into(),
            ));
        }
        if let ReadPhase::Zipf { reads, a } = self.read_phase {
            check_zipf(reads, a)
                .map_err(|e| FromFilesError::InvalidOptions(format!("--read-phase {}: {e}", self.read_phase)))?;
        }
        Ok(())
    }
}

/// Byte-wise path order (raw bytes on Unix).
fn path_key(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

/// Lists the regular files under `dirs` in trace order (see the module
/// documentation), without reading them.
pub fn list_files(dirs: &[PathBuf]) -> Result<Listing, FromFilesError> {
    let mut l = Listing { roots: dirs.to_vec(), ..Listing::default() };
    for root in dirs {
        let root_err = |reason: String| FromFilesError::Root { path: root.clone(), reason };
        let meta = fs::metadata(root).map_err(|e| root_err(e.to_string()))?;
        if meta.is_file() {
            l.bytes += meta.len();
            l.files.push((root.clone(), meta.len()));
            continue;
        }
        if !meta.is_dir() {
            return Err(root_err("not a regular file or a directory".into()));
        }
        // Fail early on an argument that cannot be listed at all.
        let first = fs::read_dir(root).map_err(|e| root_err(e.to_string()))?;
        let mut found: Vec<(PathBuf, u64)> = Vec::new();
        let mut pending: Vec<(PathBuf, Option<fs::ReadDir>)> = vec![(root.clone(), Some(first))];
        while let Some((dir, opened)) = pending.pop() {
            let entries = match opened.map_or_else(|| fs::read_dir(&dir), Ok) {
                Ok(e) => e,
                Err(e) => {
                    l.skipped.push(Skipped { path: dir, reason: e.to_string() });
                    continue;
                }
            };
            for entry in entries {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        l.skipped.push(Skipped { path: dir.clone(), reason: e.to_string() });
                        continue;
                    }
                };
                let path = entry.path();
                // `file_type` does not follow symbolic links.
                let ft = match entry.file_type() {
                    Ok(t) => t,
                    Err(e) => {
                        l.skipped.push(Skipped { path, reason: e.to_string() });
                        continue;
                    }
                };
                if ft.is_symlink() {
                    l.symlinks += 1;
                } else if ft.is_dir() {
                    pending.push((path, None));
                } else if ft.is_file() {
                    let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
                    found.push((path, len));
                } else {
                    l.special += 1;
                }
            }
        }
        found.sort_by(|a, b| path_key(&a.0).cmp(path_key(&b.0)));
        l.bytes += found.iter().map(|f| f.1).sum::<u64>();
        l.files.append(&mut found);
    }
    Ok(l)
}

/// Reads `buf.len()` bytes or up to end of file; returns how many.
fn read_full(f: &mut fs::File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn hash4k(data: &[u8]) -> PageHash {
    xxh3_128(data).to_be_bytes()
}

/// Reads one file into per-4 KiB hashes (zero-padded to whole `k`-piece
/// pages); returns the hashes and the byte length. `progress` is called
/// with the number of bytes read by each chunk.
fn hash_file(
    path: &Path,
    k: usize,
    zero: &PageHash,
    buf: &mut [u8],
    progress: &mut dyn FnMut(u64),
) -> io::Result<(Vec<PageHash>, u64)> {
    let mut f = fs::File::open(path)?;
    let mut hashes = Vec::new();
    let mut bytes = 0u64;
    loop {
        let n = read_full(&mut f, buf)?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        progress(n as u64);
        let full = n / HASH_PAGE as usize;
        for piece in buf[..full * HASH_PAGE as usize].chunks_exact(HASH_PAGE as usize) {
            hashes.push(hash4k(piece));
        }
        let tail = n % HASH_PAGE as usize;
        if tail > 0 {
            let start = full * HASH_PAGE as usize;
            buf[start + tail..start + HASH_PAGE as usize].fill(0);
            hashes.push(hash4k(&buf[start..start + HASH_PAGE as usize]));
        }
        if n < buf.len() {
            break;
        }
    }
    while hashes.len() % k != 0 {
        hashes.push(*zero);
    }
    Ok((hashes, bytes))
}

/// Lists and reads `dirs` (see the module documentation for the rules).
/// `on_progress` is called with the cumulative number of bytes read so far,
/// about once per MiB; compare it with [`Listing::bytes`] via
/// [`scan_listing`] to show a progress bar.
pub fn scan(
    dirs: &[PathBuf],
    opts: &FromFilesOptions,
    on_progress: &mut dyn FnMut(u64),
) -> Result<FromFilesResult, FromFilesError> {
    opts.validate()?;
    scan_listing(list_files(dirs)?, opts, on_progress)
}

/// [`scan`] of files already listed by [`list_files`].
pub fn scan_listing(
    listing: Listing,
    opts: &FromFilesOptions,
    on_progress: &mut dyn FnMut(u64),
) -> Result<FromFilesResult, FromFilesError> {
    opts.validate()?;
    let ps = u64::from(opts.page_size);
    let k = (ps / HASH_PAGE) as usize;
    let zero = hash4k(&[0u8; HASH_PAGE as usize]);
    let mut buf = vec![0u8; CHUNK.max(ps as usize)];
    let mut done = 0u64;
    let mut res = FromFilesResult {
        records: Vec::with_capacity(listing.files.len()),
        files: Vec::with_capacity(listing.files.len()),
        skipped: listing.skipped,
        empty_files: 0,
        symlinks: listing.symlinks,
        special: listing.special,
        bytes: 0,
        pages: 0,
        distinct_pages: 0,
        reads: 0,
        page_size: opts.page_size,
    };
    let mut distinct: HashSet<u128> = HashSet::new();
    let mut contents: Vec<Vec<PageHash>> = Vec::with_capacity(listing.files.len());
    let iat = opts.inter_arrival.0;
    for (path, _) in listing.files {
        let mut progress = |n: u64| {
            done += n;
            on_progress(done);
        };
        let (hashes, bytes) = match hash_file(&path, k, &zero, &mut buf, &mut progress) {
            Ok(x) => x,
            Err(e) => {
                res.skipped.push(Skipped { path, reason: e.to_string() });
                continue;
            }
        };
        if bytes == 0 {
            res.empty_files += 1;
            continue;
        }
        let pages = bytes.div_ceil(ps);
        debug_assert_eq!(hashes.len() as u64, pages * k as u64);
        if res.pages + pages > 1 << 32 {
            return Err(FromFilesError::TooLarge { pages: res.pages + pages, page_size: opts.page_size });
        }
        for page in hashes.chunks_exact(k) {
            let id = if k == 1 { u128::from_be_bytes(page[0]) } else { xxh3_128(page.concat().as_slice()) };
            distinct.insert(id);
        }
        res.files.push(FileEntry { path, offset: 0, bytes, pages, extents: Vec::new() });
        contents.push(hashes);
        res.bytes += bytes;
        res.pages += pages;
    }
    if res.files.is_empty() {
        let roots: Vec<String> = listing.roots.iter().map(|p| p.display().to_string()).collect();
        return Err(FromFilesError::NoFiles(roots.join(", ")));
    }
    res.distinct_pages = distinct.len() as u64;
    lay_out(&mut res, contents, opts);

    // A file's read: one request per extent, all arriving together. Memory
    // for the records is reserved fallibly (amortized, as `push` grows).
    let phase = opts.read_phase;
    let read = |res: &mut FromFilesResult, i: usize| -> Result<(), FromFilesError> {
        let reads = match phase {
            ReadPhase::Zipf { reads, .. } => reads,
            _ => res.files.len() as u64,
        };
        res.records.try_reserve(res.files[i].extents.len()).map_err(|_| FromFilesError::Alloc { reads, phase })?;
        let time = Nanos((res.records.len() as u64).saturating_mul(iat));
        for &(offset, pages) in &res.files[i].extents {
            res.records.push(TraceRecord {
                time,
                op: Op::Read,
                offset,
                size: pages * ps,
                volume: 0,
                content: None,
                hint: None,
                process: 0,
            });
            res.reads += 1;
        }
        Ok(())
    };
    match opts.read_phase {
        ReadPhase::None => {}
        ReadPhase::All => {
            for i in 0..res.files.len() {
                read(&mut res, i)?;
            }
        }
        ReadPhase::Zipf { reads, a } => {
            let n = res.files.len();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
            // Popularity rank r (1-based) is file `by_rank[r - 1]`.
            let mut by_rank: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                let j = rng.gen_range(0..=i);
                by_rank.swap(i, j);
            }
            // At least one record per read: fail before drawing any.
            res.records.try_reserve(reads as usize).map_err(|_| FromFilesError::Alloc { reads, phase })?;
            let zipf = ZipfSampler::new(n as u64, a);
            for _ in 0..reads {
                let rank = zipf.sample(&mut rng) as usize;
                read(&mut res, by_rank[rank.clamp(1, n) - 1])?;
            }
        }
    }
    Ok(res)
}

/// Writes the files' records (see the module doc, "Layout"): each file
/// whole, back to back; or, with `opts.segment`, as appends of that many
/// pages, `opts.writers` files at a time interleaved round-robin, each
/// append at the next free page (so concurrently appended files
/// fragment), with an append hint naming the file's previous page when
/// `opts.hints`.
fn lay_out(res: &mut FromFilesResult, contents: Vec<Vec<PageHash>>, opts: &FromFilesOptions) {
    let ps = u64::from(opts.page_size);
    let k = (ps / HASH_PAGE) as usize;
    let iat = opts.inter_arrival.0;
    let mut next_page = 0u64;
    let mut push = |res: &mut FromFilesResult, f: usize, first: u64, pages: u64, hashes: Vec<PageHash>| {
        let offset = next_page * ps;
        let entry = &mut res.files[f];
        let hint = match entry.extents.last() {
            Some(&(o, p)) if opts.hints => Some(TraceHint::Append { after: o + (p - 1) * ps }),
            _ => None,
        };
        match entry.extents.last_mut() {
            Some((o, p)) if *o + *p * ps == offset => *p += pages,
            _ => entry.extents.push((offset, pages)),
        }
        if first == 0 {
            entry.offset = offset;
        }
        res.records.push(TraceRecord {
            time: Nanos((res.records.len() as u64).saturating_mul(iat)),
            op: Op::Write,
            offset,
            size: pages * ps,
            volume: 0,
            content: Some(hashes),
            hint,
            process: 0,
        });
        next_page += pages;
    };
    if opts.segment == 0 {
        for (f, hashes) in contents.into_iter().enumerate() {
            let pages = res.files[f].pages;
            push(res, f, 0, pages, hashes);
        }
        return;
    }
    let (n, w) = (res.files.len(), opts.writers as usize);
    let mut contents = contents.into_iter();
    for start in (0..n).step_by(w) {
        // This group's files, each with its hashes and the next page to append.
        let mut open: Vec<(usize, Vec<PageHash>, u64)> =
            (start..n.min(start + w)).map(|f| (f, contents.next().unwrap_or_default(), 0)).collect();
        while !open.is_empty() {
            for (f, hashes, at) in open.iter_mut() {
                let pages = opts.segment.min(res.files[*f].pages - *at);
                let piece = hashes[(*at as usize) * k..(*at + pages) as usize * k].to_vec();
                push(res, *f, *at, pages, piece);
                *at += pages;
            }
            open.retain(|(f, _, at)| *at < res.files[*f].pages);
        }
    }
}

/// Parses a time interval: a number and a unit, `ns`, `us` (or `µs`), `ms`
/// or `s`, e.g. `100us` or `1.5ms`; rounded to whole nanoseconds.
pub fn parse_interval(s: &str) -> Result<Nanos, String> {
    let t = s.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = (&t[..end], t[end..].trim());
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(format!("{s:?} is not a time interval: write e.g. 100us (units: ns, us, ms, s)")),
    };
    let v: f64 = num.parse().map_err(|_| format!("{s:?} is not a time interval: write e.g. 100us"))?;
    let ns = (v * scale).round();
    if !(0.0..=1e18).contains(&ns) {
        return Err(format!("{s:?}: out of range"));
    }
    Ok(Nanos(ns as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_phase_parses() {
        assert_eq!("none".parse::<ReadPhase>().unwrap(), ReadPhase::None);
        assert_eq!("ALL".parse::<ReadPhase>().unwrap(), ReadPhase::All);
        assert_eq!("zipf:10".parse::<ReadPhase>().unwrap(), ReadPhase::Zipf { reads: 10, a: 0.8 });
        assert_eq!("zipf:5:a=1.2".parse::<ReadPhase>().unwrap(), ReadPhase::Zipf { reads: 5, a: 1.2 });
        for bad in ["zipf", "zipf:0", "zipf:x", "zipf:3:b=1", "zipf:3:a=-1", "some"] {
            assert!(bad.parse::<ReadPhase>().is_err(), "{bad}");
        }
        let z = ReadPhase::Zipf { reads: 5, a: 1.2 };
        assert_eq!(z.to_string().parse::<ReadPhase>().unwrap(), z);
    }

    /// A Zipf read phase holds at most [`MAX_ZIPF_READS`] reads (it used to
    /// abort in the allocator): parsing and hand-built options both say so,
    /// naming the value and the limit.
    #[test]
    fn zipf_reads_are_bounded() {
        let max = format!("zipf:{MAX_ZIPF_READS}");
        assert_eq!(max.parse::<ReadPhase>().unwrap(), ReadPhase::Zipf { reads: MAX_ZIPF_READS, a: 0.8 });
        let e = "zipf:99999999999".parse::<ReadPhase>().unwrap_err();
        assert!(e.contains("99999999999 reads exceed the limit of 4294967295"), "{e}");
        assert!(format!("zipf:{}:a=1", MAX_ZIPF_READS + 1).parse::<ReadPhase>().is_err());
        let opts = FromFilesOptions {
            read_phase: ReadPhase::Zipf { reads: MAX_ZIPF_READS + 1, a: 0.8 },
            ..FromFilesOptions::default()
        };
        let e = opts.validate().unwrap_err().to_string();
        assert!(e.contains("--read-phase zipf:4294967296:a=0.8") && e.contains("limit of 4294967295"), "{e}");
    }

    #[test]
    fn intervals_parse() {
        assert_eq!(parse_interval("100us").unwrap(), Nanos(100_000));
        assert_eq!(parse_interval("1.5ms").unwrap(), Nanos(1_500_000));
        assert_eq!(parse_interval("0ns").unwrap(), Nanos(0));
        assert_eq!(parse_interval("2 s").unwrap(), Nanos(2_000_000_000));
        assert!(parse_interval("100").is_err());
        assert!(parse_interval("-1us").is_err());
        assert!(parse_interval("1e3us").is_err());
    }

    #[test]
    fn options_are_validated() {
        let bad = FromFilesOptions { page_size: 2048, ..FromFilesOptions::default() };
        let e = bad.validate().unwrap_err();
        assert!(e.to_string().contains("--page-size 2048: not a power of two"), "{e}");
        assert!(matches!(bad.validate(), Err(FromFilesError::InvalidOptions(_))));
        let bad = FromFilesOptions { page_size: 12288, ..FromFilesOptions::default() };
        assert!(bad.validate().is_err());
        assert!(FromFilesOptions { page_size: 16384, ..FromFilesOptions::default() }.validate().is_ok());
    }

    #[test]
    fn pages_are_hashed_and_padded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut data = vec![7u8; 4096];
        data.extend_from_slice(b"tail");
        fs::write(&p, &data).unwrap();
        let zero = hash4k(&[0; 4096]);
        let mut buf = vec![0u8; 8192];
        let mut seen = 0;
        let (h, n) = hash_file(&p, 1, &zero, &mut buf, &mut |b| seen += b).unwrap();
        assert_eq!((n, seen), (4100, 4100));
        let mut tail = b"tail".to_vec();
        tail.resize(4096, 0);
        assert_eq!(h, vec![hash4k(&[7; 4096]), hash4k(&tail)]);
        // 16 KiB pages: padded with zero pieces to a whole page.
        let (h, _) = hash_file(&p, 4, &zero, &mut buf, &mut |_| {}).unwrap();
        assert_eq!(h.len(), 4);
        assert_eq!((h[2], h[3]), (zero, zero));
    }
}
