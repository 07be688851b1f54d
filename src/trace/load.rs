//! Loading a trace file into a page-aligned [`Workload`].
//!
//! The pipeline is: [`open`](super::open::open) (decompress) → detect the
//! format (unless given) → parse lines into [`TraceRecord`](super::TraceRecord)s
//! ([`read_records`]) → page-align, map volumes, rebase time, intern content
//! and check capacity ([`build_workload`], which documents the rules).

use super::detect::detect;
use super::format::DETECT_LINES;
use super::parse::{
    md5_of, pages_covered, quote, text, LineError, LineParser, LineReader, Numbered, HASH_PAGE, MAX_NATIVE_LINE,
};
use super::{native, open};
use super::{PageHash, TraceError, TraceFormat, TraceHint, TraceRecord};
use crate::units::{ContentId, Nanos, Op};
use crate::workload::{mark_bits, FileRule, Hint, Provenance, Request, Workload, NO_CONTENT};
use md5::{Digest, Md5};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::str::FromStr;

/// How many skipped bad lines are quoted individually in the warnings.
const QUOTED_BAD_LINES: u64 = 10;

/// Which volumes (disks, LUNs, devices) of a multi-volume trace to keep.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum VolumeSelect {
    /// Keep every volume, each mapped to its own disjoint page range.
    #[default]
    All,
    /// Keep only this volume number (FIU: `major << 20 | minor`).
    One(u32),
    /// Keep every volume but ignore the volume number: all volumes share one
    /// address space, as SSDsim 2.1 and MQSim do with the device column.
    Merge,
}

impl FromStr for VolumeSelect {
    type Err = TraceError;

    /// `all`, `merge`, a volume number, or `major:minor` (FIU devices).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let bad = || {
            TraceError::InvalidOptions(format!("volume {} is not `all`, `merge`, a number or `major:minor`", quote(s)))
        };
        if s.eq_ignore_ascii_case("all") {
            return Ok(VolumeSelect::All);
        }
        if s.eq_ignore_ascii_case("merge") {
            return Ok(VolumeSelect::Merge);
        }
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if let Some((maj, min)) = s.split_once(':') {
            if !digits(maj) || !digits(min) {
                return Err(bad());
            }
            match (maj.parse::<u32>(), min.parse::<u32>()) {
                (Ok(maj), Ok(min)) if maj < 1 << 12 && min < 1 << 20 => {
                    return Ok(VolumeSelect::One((maj << 20) | min))
                }
                _ => {
                    return Err(TraceError::InvalidOptions(format!(
                        "volume {}: a FIU major:minor device number has major < 4096 and minor < 1048576",
                        quote(s)
                    )))
                }
            }
        }
        if digits(s) {
            return s.parse().map(VolumeSelect::One).map_err(|_| {
                TraceError::InvalidOptions(format!("volume {} is out of range: at most {}", quote(s), u32::MAX))
            });
        }
        Err(bad())
    }
}

impl fmt::Display for VolumeSelect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VolumeSelect::All => f.write_str("all"),
            VolumeSelect::Merge => f.write_str("merge"),
            VolumeSelect::One(v) => write!(f, "{v}"),
        }
    }
}

/// Options of [`load`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Force a format instead of auto-detecting it.
    pub format: Option<TraceFormat>,
    /// Logical page size in bytes (a power of two, at least 512).
    pub page_size: u32,
    /// Which volumes to keep.
    pub volume: VolumeSelect,
    /// Count and skip unparsable lines instead of failing on the first one.
    pub skip_bad_lines: bool,
    /// Fold page numbers modulo this many pages.
    pub wrap_to_pages: Option<u64>,
    /// Fail on requests ending beyond this many pages.
    pub capacity_pages: Option<u64>,
    /// FIU: largest gap between two 4 KiB records merged into one request.
    pub fiu_merge_gap: Nanos,
    /// Stop after this many requests (after volume selection; FIU: merged).
    pub max_requests: Option<u64>,
    /// Drop content hashes even if the trace has them.
    pub ignore_content: bool,
    /// What a file is (`--files`): [`super::stream`] applies
    /// [`FileRule::Merged`] to its batches as it makes them
    /// ([`crate::workload::FileJoiner`]); [`load`] leaves it to its
    /// caller ([`crate::workload::Workload::apply_file_rule`]).
    pub files: FileRule,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            format: None,
            page_size: 4096,
            volume: VolumeSelect::All,
            skip_bad_lines: false,
            wrap_to_pages: None,
            capacity_pages: None,
            fiu_merge_gap: Nanos::from_ms(10),
            max_requests: None,
            ignore_content: false,
            files: FileRule::Request,
        }
    }
}

impl LoadOptions {
    pub(super) fn validate(&self) -> Result<(), TraceError> {
        let bad = |m: String| Err(TraceError::InvalidOptions(m));
        if !self.page_size.is_power_of_two() || self.page_size < 512 {
            return bad(format!("page size {} is not a power of two of at least 512 bytes", self.page_size));
        }
        if self.wrap_to_pages == Some(0) {
            return bad("wrap range must be at least one page".into());
        }
        if self.capacity_pages == Some(0) {
            return bad("capacity must be at least one page".into());
        }
        if self.max_requests == Some(0) {
            return bad("max_requests must be at least 1".into());
        }
        Ok(())
    }
}

/// A parsed but not yet page-aligned trace.
#[derive(Clone, Debug)]
pub struct ParsedTrace {
    pub format: TraceFormat,
    /// Records in trace order with the line each starts on (zero-length
    /// records and records of unselected volumes are already dropped).
    pub records: Vec<Numbered>,
    /// Lines skipped because they did not parse (`skip_bad_lines`).
    pub bad_lines: u64,
    /// Zero-length requests dropped (each also counted in `warnings`).
    pub zero_length: u64,
    pub warnings: Vec<String>,
    /// Every volume seen, selected or not, in order of first appearance.
    pub volumes: Vec<u32>,
    /// The file's own account of its origin (native traces written by
    /// dedupsim: `NAME: SOURCE`).
    pub description: Option<String>,
}

/// A loaded trace.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub workload: Workload,
    /// Lines skipped because they did not parse (`skip_bad_lines`).
    pub bad_lines: u64,
    pub format: TraceFormat,
    /// Non-fatal observations (clamped timestamps, skipped lines, ...).
    pub warnings: Vec<String>,
    /// Each kept volume with the first logical page of its range (all 0
    /// with [`VolumeSelect::Merge`]).
    pub volumes: Vec<(u32, u64)>,
}

/// Loads a trace file (plain, `.gz` or `.zst`): detection, parsing and
/// [`build_workload`].
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Loaded, TraceError> {
    opts.validate()?;
    let reader = open::open(path)?;
    load_from_reader(reader, path, opts)
}

/// The format of the trace file at `path` as [`load`] detects it, from its
/// first lines only: a missing, unreadable or unrecognized trace is
/// refused before any work (`sweep` checks its `trace:` workloads so).
pub fn detect_file(path: &Path) -> Result<TraceFormat, TraceError> {
    let opts = LoadOptions::default();
    Ok(RecordReader::open(open::open(path)?, path, &opts)?.format)
}

/// Loads a trace from an already opened (decompressed) reader; `path` is
/// only used in messages, provenance and to break the SSDsim/MQSim tie.
pub fn load_from_reader<R: BufRead>(reader: R, path: &Path, opts: &LoadOptions) -> Result<Loaded, TraceError> {
    opts.validate()?;
    let (parsed, records) = parse(reader, path, opts)?;
    build(parsed, records, path, opts)
}

/// A byte-level fast path of a format's parser: it reads a raw line (not
/// trimmed, not checked to be UTF-8) and returns a record only when the
/// format's parser would return the identical record for that line; any
/// other line (blank, comment, malformed, unusual) is `None` and goes to the
/// parser, which then gives the same record or its precise error.
pub(crate) type FastParse = fn(&[u8]) -> Option<TraceRecord>;

/// One kept record in the loader's compact form: 40 bytes where a
/// [`Numbered`] takes 88. Most formats never carry content or hints, and the
/// few records that do keep them in [`Records::extras`], so a trace of a
/// million requests holds half the memory (and causes half the page
/// faults) between parsing and [`build_workload`].
#[derive(Copy, Clone, Debug)]
pub(super) struct Rec {
    pub(super) time: Nanos,
    pub(super) offset: u64,
    pub(super) size: u64,
    /// The line the record starts on.
    pub(super) line: u64,
    /// The record's volume, as an index into [`Records::volumes`].
    pub(super) slot: u32,
    pub(super) op: Op,
    /// Whether the record's content and hint are in [`Records::extras`].
    pub(super) extra: bool,
    /// The record's writer stream: its (volume, process) pair as an index
    /// into [`Records::streams`] (in the struct's padding: still 40 bytes).
    pub(super) stream: u16,
}

/// The content and hint of a record that has either (see [`Rec`]).
#[derive(Debug)]
pub(super) struct Extra {
    pub(super) content: Option<Vec<PageHash>>,
    pub(super) hint: Option<TraceHint>,
}

/// Records in trace order in compact form, with what [`build_workload`]
/// needs to know of all of them before it can place the first: each
/// volume's first line and highest end byte, gathered as records arrive so
/// that building takes one pass.
#[derive(Debug, Default)]
pub(super) struct Records {
    recs: Vec<Rec>,
    /// Content and hints of the records marked `extra`, in trace order.
    extras: Vec<Extra>,
    /// Per slot: (volume, first line, highest `offset + size`), in order of
    /// first appearance.
    volumes: Vec<(u32, u64, u64)>,
    /// The slot of each volume.
    slots: HashMap<u32, u32>,
    /// Per stream id: its (volume, process), in order of first appearance
    /// ([`crate::workload::Request::stream`]; the 65,536th and later
    /// distinct pairs share the last id).
    streams: Vec<(u32, u32)>,
    /// The stream id of each (volume, process).
    stream_ids: HashMap<(u32, u32), u16>,
    /// Records pushed so far (a streaming reader takes `recs` away in
    /// batches: [`RecordReader::take`]).
    pushed: u64,
}

impl Records {
    fn len(&self) -> usize {
        self.recs.len()
    }

    fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Appends a record, as is (no filtering).
    fn push(&mut self, line: u64, r: TraceRecord) {
        let end = r.offset + r.size;
        // Consecutive records are nearly always on one volume, so the map is
        // rarely consulted.
        let slot = match self.recs.last() {
            Some(p) if self.volumes[p.slot as usize].0 == r.volume => p.slot,
            _ => match self.slots.get(&r.volume) {
                Some(&i) => i,
                None => {
                    let i = self.volumes.len() as u32;
                    self.slots.insert(r.volume, i);
                    self.volumes.push((r.volume, line, end));
                    i
                }
            },
        };
        let v = &mut self.volumes[slot as usize];
        v.2 = v.2.max(end);
        self.pushed += 1;
        let extra = r.content.is_some() || r.hint.is_some();
        if extra {
            self.extras.push(Extra { content: r.content, hint: r.hint });
        }
        let key = (r.volume, r.process);
        let stream = match self.recs.last() {
            Some(p) if self.streams[p.stream as usize] == key => p.stream,
            _ => match self.stream_ids.get(&key) {
                Some(&i) => i,
                None => {
                    let i = u16::try_from(self.streams.len()).unwrap_or(u16::MAX);
                    if usize::from(i) == self.streams.len() {
                        self.streams.push(key);
                    }
                    self.stream_ids.insert(key, i);
                    i
                }
            },
        };
        self.recs.push(Rec { time: r.time, offset: r.offset, size: r.size, line, slot, op: r.op, extra, stream });
    }

    /// The records as [`read_records`] returns them.
    fn into_numbered(self) -> Vec<Numbered> {
        let mut extras = self.extras.into_iter();
        self.recs
            .iter()
            .map(|r| {
                let e = if r.extra { extras.next() } else { None };
                let (content, hint) = e.map_or((None, None), |e| (e.content, e.hint));
                let volume = self.volumes[r.slot as usize].0;
                let process = self.streams[r.stream as usize].1;
                (
                    r.line,
                    TraceRecord {
                        time: r.time,
                        op: r.op,
                        offset: r.offset,
                        size: r.size,
                        volume,
                        content,
                        hint,
                        process,
                    },
                )
            })
            .collect()
    }
}

impl From<Vec<Numbered>> for Records {
    fn from(records: Vec<Numbered>) -> Self {
        let mut out = Records { recs: Vec::with_capacity(records.len()), ..Records::default() };
        for (line, r) in records {
            out.push(line, r);
        }
        out
    }
}

/// Per-line driver state of [`read_records`].
struct Driver<'a> {
    parser: Box<dyn LineParser>,
    fast: Option<FastParse>,
    path: &'a Path,
    opts: &'a LoadOptions,
    scratch: Vec<Numbered>,
    out: Records,
    bad: u64,
    zero_len: u64,
    warnings: Vec<String>,
    seen: HashSet<u32>,
    volumes: Vec<u32>,
}

impl Driver<'_> {
    fn full(&self) -> bool {
        self.opts.max_requests.is_some_and(|m| self.out.pushed >= m)
    }

    fn line(&mut self, line_no: u64, text: &str) -> Result<(), TraceError> {
        let s = text.trim();
        if s.is_empty() {
            return Ok(());
        }
        let res =
            if s.starts_with('#') { self.parser.comment(s) } else { self.parser.line(s, line_no, &mut self.scratch) };
        if let Err(reason) = res {
            if !self.opts.skip_bad_lines {
                return Err(TraceError::Parse { path: self.path.to_path_buf(), line: line_no, reason });
            }
            self.bad += 1;
            if self.bad <= QUOTED_BAD_LINES {
                self.warnings.push(format!("{}:{line_no}: skipped: {reason}", self.path.display()));
            }
        }
        self.drain();
        Ok(())
    }

    /// [`line`](Self::line) on a line's raw bytes: through the format's
    /// fast path when it has one that accepts the line, else as text
    /// (invalid UTF-8 replaced).
    fn line_bytes(&mut self, line_no: u64, bytes: &[u8]) -> Result<(), TraceError> {
        if let Some(r) = self.fast.and_then(|f| f(bytes)) {
            self.keep(line_no, r);
            return Ok(());
        }
        self.line(line_no, &text(bytes))
    }

    /// Moves newly parsed records to the output, applying the filters.
    fn drain(&mut self) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for (line, r) in scratch.drain(..) {
            self.keep(line, r);
        }
        self.scratch = scratch;
    }

    /// Adds one parsed record to the output, applying the filters.
    fn keep(&mut self, line: u64, r: TraceRecord) {
        // Consecutive records are nearly always on the last new volume's
        // device: skip the set then.
        if self.volumes.last() != Some(&r.volume) && self.seen.insert(r.volume) {
            self.volumes.push(r.volume);
        }
        if r.size == 0 {
            self.zero_len += 1;
            return;
        }
        if let VolumeSelect::One(v) = self.opts.volume {
            if r.volume != v {
                return;
            }
        }
        if self.full() {
            return;
        }
        self.out.push(line, r);
    }
}

/// Parses a trace into records (format detection, line parsing, FIU
/// merging, volume filtering) without page alignment.
pub fn read_records<R: BufRead>(reader: R, path: &Path, opts: &LoadOptions) -> Result<ParsedTrace, TraceError> {
    let (mut parsed, records) = parse(reader, path, opts)?;
    parsed.records = records.into_numbered();
    Ok(parsed)
}

/// [`read_records`] with the records in compact form, apart from the
/// (then empty) `records` of the [`ParsedTrace`].
fn parse<R: BufRead>(reader: R, path: &Path, opts: &LoadOptions) -> Result<(ParsedTrace, Records), TraceError> {
    let mut rr = RecordReader::open(reader, path, opts)?;
    rr.fill(usize::MAX)?;
    Ok(rr.finish())
}

/// A trace's records parsed as they are read: format detection on
/// [`RecordReader::open`], then [`RecordReader::fill`] parses lines until
/// a number of records wait (or the file ends), and
/// [`RecordReader::finish`] gives the parse's account. [`parse`] reads the
/// whole file at once; [`super::stream`] in batches.
pub(super) struct RecordReader<'a, R> {
    lines: LineReader<R>,
    head: std::vec::IntoIter<(u64, String)>,
    d: Driver<'a>,
    format: TraceFormat,
    eof: bool,
}

impl<'a, R: BufRead> RecordReader<'a, R> {
    /// Detects the format (unless given) from the first lines.
    pub(super) fn open(reader: R, path: &'a Path, opts: &'a LoadOptions) -> Result<Self, TraceError> {
        let line_err = |e| match e {
            LineError::Io(source) => TraceError::Io { path: path.to_path_buf(), source },
            LineError::TooLong { line, limit } => TraceError::LineTooLong { path: path.to_path_buf(), line, limit },
        };
        let mut lines = LineReader::new(reader);
        if opts.format == Some(TraceFormat::Native) {
            lines.set_limit(MAX_NATIVE_LINE);
        }
        let mut head: Vec<(u64, String)> = Vec::new();
        while head.len() < DETECT_LINES {
            match lines.next_line().map_err(line_err)?.map(|(n, t)| (n, t.into_owned())) {
                Some((n, t)) if !t.trim().is_empty() => {
                    // Native lines carry content lists: allow them their length
                    // as soon as the header says what the file is.
                    if head.is_empty() && opts.format.is_none() && t.trim_start().starts_with(native::HEADER_PREFIX) {
                        lines.set_limit(MAX_NATIVE_LINE);
                    }
                    head.push((n, t));
                }
                Some(_) => {}
                None => break,
            }
        }
        let format = match opts.format {
            Some(f) => f,
            None => {
                let texts: Vec<&str> = head.iter().map(|(_, t)| t.as_str()).collect();
                let name = path.file_name().map(|n| n.to_string_lossy());
                match detect(&texts, name.as_deref()) {
                    Some(f) => f,
                    None => {
                        return Err(match head.iter().find(|(_, t)| !t.trim_start().starts_with('#')) {
                            Some((n, t)) => TraceError::Undetected {
                                path: path.to_path_buf(),
                                line: *n,
                                text: quote(t.trim()),
                                known: TraceFormat::names(),
                            },
                            None => TraceError::Empty { path: path.to_path_buf(), detail: String::new() },
                        })
                    }
                }
            }
        };
        let d = Driver {
            // Every format has a registry line (the registry's test checks
            // it); the parser and fast path come from it.
            parser: match format.registered() {
                Some(e) => (e.item.parser)(format, opts),
                None => {
                    return Err(TraceError::UnknownFormat { name: format.to_string(), known: TraceFormat::names() })
                }
            },
            fast: format.registered().and_then(|e| e.item.fast),
            path,
            opts,
            scratch: Vec::new(),
            out: Records::default(),
            bad: 0,
            zero_len: 0,
            warnings: Vec::new(),
            seen: HashSet::new(),
            volumes: Vec::new(),
        };
        Ok(RecordReader { lines, head: head.into_iter(), d, format, eof: false })
    }

    /// Parses lines until at least `want` records wait or the trace ends
    /// (then the parser's last records are added too); `false` once the
    /// trace has ended.
    pub(super) fn fill(&mut self, want: usize) -> Result<bool, TraceError> {
        if self.eof {
            return Ok(false);
        }
        let path = self.d.path;
        let line_err = |e| match e {
            LineError::Io(source) => TraceError::Io { path: path.to_path_buf(), source },
            LineError::TooLong { line, limit } => TraceError::LineTooLong { path: path.to_path_buf(), line, limit },
        };
        while self.d.out.len() < want && !self.d.full() {
            if let Some((n, text)) = self.head.next() {
                self.d.line(n, &text)?;
                continue;
            }
            let Some((n, bytes)) = self.lines.next_bytes().map_err(line_err)? else { break };
            self.d.line_bytes(n, bytes)?;
        }
        if self.d.out.len() >= want && !self.d.full() {
            return Ok(true);
        }
        self.d.parser.finish(&mut self.d.scratch);
        self.d.drain();
        self.eof = true;
        Ok(false)
    }

    pub(super) fn format(&self) -> TraceFormat {
        self.format
    }

    /// The records parsed since the last call, with their extras.
    pub(super) fn take(&mut self) -> (Vec<Rec>, Vec<Extra>) {
        (std::mem::take(&mut self.d.out.recs), std::mem::take(&mut self.d.out.extras))
    }

    /// The volumes seen so far: per slot (volume, first line, highest end byte).
    pub(super) fn volume_table(&self) -> &[(u32, u64, u64)] {
        &self.d.out.volumes
    }

    /// The parse's account (warnings, counts), and the records not taken.
    pub(super) fn finish(self) -> (ParsedTrace, Records) {
        let format = self.format;
        let mut d = self.d;
        let parser_warnings = d.parser.warnings();
        d.warnings.extend(parser_warnings);
        if d.bad > QUOTED_BAD_LINES {
            d.warnings.push(format!("... and {} more bad lines", d.bad - QUOTED_BAD_LINES));
        }
        if d.bad > 0 {
            d.warnings.push(format!("skipped {} bad lines in total", d.bad));
        }
        if d.zero_len > 0 {
            d.warnings.push(format!("ignored {} zero-length requests", d.zero_len));
        }
        let description = d.parser.description();
        let parsed = ParsedTrace {
            format,
            records: Vec::new(),
            bad_lines: d.bad,
            zero_length: d.zero_len,
            warnings: d.warnings,
            volumes: d.volumes,
            description,
        };
        (parsed, d.out)
    }
}

/// A volume number as the user spells it: FIU and blkparse devices as
/// `major:minor` (the number is `major << 20 | minor`), other formats'
/// volumes as numbers.
pub fn volume_label(format: TraceFormat, v: u32) -> String {
    match format {
        TraceFormat::Fiu | TraceFormat::FiuHomes | TraceFormat::Blkparse(_) => {
            format!("{}:{}", v >> 20, v & ((1 << 20) - 1))
        }
        _ => v.to_string(),
    }
}

/// The workload name for a trace path: the file name without compression
/// and format extensions (`hm_0.csv.gz` → `hm_0`).
pub fn trace_name(path: &Path) -> String {
    let mut name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for ext in [".gz", ".zst", ".zstd"] {
        if let Some(s) = name.strip_suffix(ext) {
            name = s.to_string();
        }
    }
    match Path::new(&name).file_stem() {
        Some(s) if !s.is_empty() => s.to_string_lossy().into_owned(),
        _ => name,
    }
}

/// Converts a record's per-4 KiB hashes into one hash per `ps`-byte page
/// (see [`build_workload`]). `None` if the list does not match the
/// record's extent.
fn page_hashes(c: &[PageHash], offset: u64, size: u64, ps: u64) -> Option<Vec<PageHash>> {
    let n4 = pages_covered(offset, size, HASH_PAGE);
    if c.len() as u64 != n4 || n4 == 0 {
        return None;
    }
    if ps == HASH_PAGE {
        return Some(c.to_vec());
    }
    let f4 = offset / HASH_PAGE;
    let first = offset / ps;
    let n = pages_covered(offset, size, ps);
    let mut out = Vec::with_capacity(n as usize);
    if ps > HASH_PAGE {
        let k = ps / HASH_PAGE;
        for p in first..first + n {
            let lo = (p * k).max(f4);
            let hi = ((p + 1) * k).min(f4 + n4);
            let subs = &c[(lo - f4) as usize..(hi - f4) as usize];
            if hi - lo == k {
                let parts: Vec<&[u8]> = subs.iter().map(|h| &h[..]).collect();
                out.push(md5_of(&parts));
            } else {
                let mut h = Md5::new();
                h.update(b"dedupsim-page-partial");
                for (i, s) in (lo..hi).zip(subs) {
                    h.update(((i - p * k) as u32).to_le_bytes());
                    h.update(s);
                }
                out.push(h.finalize().into());
            }
        }
    } else {
        let m = HASH_PAGE / ps;
        for p in first..first + n {
            let q = p / m;
            let h = c.get((q - f4) as usize)?;
            out.push(md5_of(&[b"dedupsim-subpage", &((p % m) as u32).to_le_bytes(), &(ps as u32).to_le_bytes(), h]));
        }
    }
    Some(out)
}

/// A warning when the replay duration suggests the time unit is wrong: the
/// traces FAD uses span hours to days, so more than 60 days, or thousands of
/// requests within a millisecond, usually means a unit was misread (e.g.
/// microseconds parsed as seconds, or a format forced with `--format`).
#[cfg(test)]
fn implausible_duration(requests: &[Request], format: TraceFormat) -> Option<String> {
    let mut c = DurationCheck::default();
    requests.iter().for_each(|r| c.add(r.arrival));
    c.warning(format)
}

/// [`implausible_duration`] fed one arrival at a time.
#[derive(Clone, Debug, Default)]
struct DurationCheck {
    n: u64,
    last: Nanos,
}

impl DurationCheck {
    fn add(&mut self, t: Nanos) {
        self.n += 1;
        self.last = t;
    }

    fn warning(&self, format: TraceFormat) -> Option<String> {
        if self.n == 0 {
            return None;
        }
        let last = self.last;
        let d = last.as_secs_f64();
        if d > 60.0 * 86_400.0 {
            Some(format!(
                "the trace spans {:.0} days as read with the {format} format's time unit; \
                 if that is implausible, check --format (replay with --time-scale to compress it)",
                d / 86_400.0
            ))
        } else if self.n >= 1000 && last < Nanos::from_ms(1) {
            Some(format!(
                "{} requests arrive within {last}, as read with the {format} format's time unit; \
                 if that is implausible, check --format",
                self.n
            ))
        } else {
            None
        }
    }
}

/// A warning when every arrival time is a whole second (Tencent CBS, or any
/// trace logged at 1 s resolution) and requests pile up on the same second:
/// an open-loop replay then issues each second's requests as one burst.
#[cfg(test)]
fn coarse_timestamps(requests: &[Request]) -> Option<String> {
    let mut c = CoarseCheck::default();
    requests.iter().for_each(|r| c.add(r.arrival));
    c.warning()
}

/// [`coarse_timestamps`] fed one arrival at a time.
#[derive(Clone, Debug, Default)]
struct CoarseCheck {
    n: u64,
    /// An arrival was not a whole second.
    fine: bool,
    prev: Nanos,
    distinct: u64,
    burst: u64,
    run: u64,
}

impl CoarseCheck {
    const SECOND: u64 = 1_000_000_000;

    fn add(&mut self, t: Nanos) {
        if t.0 % Self::SECOND != 0 {
            self.fine = true;
        }
        if self.n == 0 || t != self.prev {
            self.distinct += 1;
            self.run = 0;
        }
        self.n += 1;
        self.prev = t;
        self.run += 1;
        self.burst = self.burst.max(self.run);
    }

    fn warning(&self) -> Option<String> {
        if self.n < 100 || self.fine {
            return None;
        }
        let (n, distinct, burst) = (self.n, self.distinct, self.burst);
        (n >= 2 * distinct).then(|| {
            format!(
                "timestamps have 1 s resolution: {n} requests arrive at {distinct} distinct times (up to {burst} \
                 at once), so an open-loop replay issues each second's requests as one burst; \
                 --set replay.mode=closed-loop ignores the timestamps"
            )
        })
    }
}

/// Aligns parsed records to pages, maps volumes, rebases time, interns
/// content and checks capacity:
///
/// 1. **Volumes.** With [`VolumeSelect::All`] every volume gets its own
///    disjoint range of logical pages, in order of first appearance; a
///    volume's range is as large as its highest byte address rounded up to a
///    page (`ceil(max(offset + size) / page_size)` pages), so a single-volume
///    trace keeps its addresses. [`VolumeSelect::One`] keeps one volume
///    (addresses unchanged) and drops the rest while parsing.
///    [`VolumeSelect::Merge`] keeps every volume at its own addresses, so
///    that all volumes share one address space (SSDsim 2.1 and MQSim ignore
///    the device number the same way).
/// 2. **Time.** Arrival times are rebased so the first request arrives at 0.
///    A timestamp earlier than its predecessor's is clamped to it (the
///    simulator replays in order) and reported as a warning with the count.
/// 3. **Pages.** `lpn = offset / page_size`,
///    `pages = ceil((offset + size) / page_size) - lpn`.
/// 4. **Content.** Write requests carrying hashes get one [`ContentId`] per
///    page, interned densely in order of first appearance (equal hash ⇔
///    equal id). Trace hashes are per 4 KiB page; a 4 KiB page only partly
///    covered by a request keeps its page's hash. With larger pages the
///    sub-page hashes are combined: MD5 of the concatenated hashes when all
///    sub-pages are present, otherwise MD5 of `dedupsim-page-partial`
///    followed by (sub-page index as u32 LE, hash) for each present one.
///    With smaller pages each piece of a 4 KiB page gets
///    MD5(`dedupsim-subpage` ‖ index u32 LE ‖ page size u32 LE ‖ hash).
///    Reads and trims carry no content ids. A read's hashes (FIU hashes
///    the data it reads) are kept for the pages it is the first request
///    to touch: what they held before the trace
///    ([`Workload::past_contents`], for preconditioning), interned with the
///    writes' (a content no write carries gets an id past theirs).
/// 5. **Capacity.** With `wrap_to_pages = W` every page `p` maps to
///    `p mod W` (a request crossing the boundary is split into two requests
///    at the same time, and counted in a warning). With `capacity_pages` a
///    request ending beyond the capacity is an error naming its line and
///    suggesting `--wrap`. Page numbers must fit in 32 bits
///    ([`crate::units::Lpn`]).
pub fn build_workload(mut parsed: ParsedTrace, path: &Path, opts: &LoadOptions) -> Result<Loaded, TraceError> {
    let records = Records::from(std::mem::take(&mut parsed.records));
    build(parsed, records, path, opts)
}

/// [`build_workload`] on compact records (`parsed.records` is ignored).
fn build(parsed: ParsedTrace, records: Records, path: &Path, opts: &LoadOptions) -> Result<Loaded, TraceError> {
    opts.validate()?;
    if records.is_empty() {
        return Err(empty_error(&parsed, path, opts));
    }
    let bases = volume_bases(&records.volumes, path, opts)?;
    let ParsedTrace { format, bad_lines, mut warnings, description, .. } = parsed;
    let mut b = Builder::new(format, path, opts, bases);
    b.track_past = true;
    let mut extras = records.extras.into_iter();
    for r in &records.recs {
        let extra = if r.extra { extras.next() } else { None };
        b.add(r, extra)?;
    }
    let built = b.finish(&mut warnings);
    let workload = Workload {
        provenance: provenance(path, format, description),
        requests: built.requests,
        contents: built.contents,
        content_space: built.content_space,
        lpn_span: built.lpn_span,
        hints: built.hints,
        past_contents: built.past_contents,
        past_only: built.past_only,
        ..Workload::default()
    };
    let volumes = records.volumes.iter().zip(&built.bases).map(|(&(v, _, _), &b)| (v, b)).collect();
    Ok(Loaded { workload, bad_lines, format, warnings, volumes })
}

/// Where a trace's workload came from.
pub(super) fn provenance(path: &Path, format: TraceFormat, description: Option<String>) -> Provenance {
    Provenance {
        name: trace_name(path),
        source: match description {
            Some(d) => format!("trace: {} ({format}), written from {d}", path.display()),
            None => format!("trace: {} ({format})", path.display()),
        },
    }
}

/// The first logical page of each volume (by slot): see [`build_workload`], 1.
pub(super) fn volume_bases(
    volumes: &[(u32, u64, u64)],
    path: &Path,
    opts: &LoadOptions,
) -> Result<Vec<u64>, TraceError> {
    let ps = u64::from(opts.page_size);
    let mut bases: Vec<u64> = Vec::with_capacity(volumes.len());
    let mut next = 0u64;
    let merge = opts.volume == VolumeSelect::Merge;
    for &(v, line, max_end) in volumes {
        bases.push(next);
        if merge {
            continue;
        }
        next = next.checked_add(max_end.div_ceil(ps)).ok_or_else(|| TraceError::AddressOverflow {
            path: path.to_path_buf(),
            line,
            reason: format!("volume {v}'s page range overflows 64 bits"),
        })?;
    }
    Ok(bases)
}

/// The error of a trace with no record to replay.
pub(super) fn empty_error(parsed: &ParsedTrace, path: &Path, opts: &LoadOptions) -> TraceError {
    let ParsedTrace { format, bad_lines, zero_length, warnings, volumes: seen, .. } = parsed;
    let (format, bad_lines, zero_length) = (*format, *bad_lines, *zero_length);
    let pb = || path.to_path_buf();
    {
        let detail = match opts.volume {
            VolumeSelect::One(v) => {
                let list: Vec<String> = seen.iter().take(20).map(|&s| volume_label(format, s)).collect();
                let more = if seen.len() > 20 { format!(" and {} more", seen.len() - 20) } else { String::new() };
                // `--volume major:minor` on a trace that numbers its
                // volumes: say where the number came from.
                let fiu = matches!(format, TraceFormat::Fiu | TraceFormat::FiuHomes | TraceFormat::Blkparse(_));
                let hint = if !fiu && v >= 1 << 20 {
                    format!(
                        "; major:minor ({}:{} = {v}) names FIU devices, {} traces number their volumes",
                        v >> 20,
                        v & ((1 << 20) - 1),
                        format.name()
                    )
                } else {
                    String::new()
                };
                format!(" for volume {} (volumes present: {}{more}){hint}", volume_label(format, v), list.join(", "))
            }
            VolumeSelect::All | VolumeSelect::Merge => {
                let mut why = Vec::new();
                if bad_lines > 0 {
                    why.push(format!("{bad_lines} bad lines skipped"));
                }
                if zero_length > 0 {
                    why.push(format!("{zero_length} zero-length requests ignored"));
                }
                // blkparse says which events it saw (and which option would
                // read them).
                if let TraceFormat::Blkparse(_) = format {
                    why.extend(warnings.iter().cloned());
                }
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", why.join(", "))
                }
            }
        };
        TraceError::Empty { path: pb(), detail }
    }
}

/// What [`Builder::finish`] leaves.
pub(super) struct Built {
    pub requests: Vec<Request>,
    pub contents: Vec<ContentId>,
    pub hints: Vec<(u32, Hint)>,
    pub content_space: u32,
    /// [`Workload::past_contents`] and [`Workload::past_only`] (empty
    /// unless the builder tracks them: [`Builder::track_past`]).
    pub past_contents: Vec<(u32, ContentId)>,
    pub past_only: u32,
    pub lpn_span: u64,
    pub bases: Vec<u64>,
    /// The content hashes interned (id by hash), for a next pass
    /// ([`super::stream::Carry`]).
    pub intern: HashMap<PageHash, u32>,
}

/// The per-record rules of [`build_workload`] (page alignment, volume
/// ranges, time rebasing, content interning, capacity), one record at a
/// time: the requests it makes wait in [`Builder::requests`] (with their
/// contents and hints) until the caller takes them, so that a streaming
/// reader ([`super::stream`]) can hand them on in batches and hold none.
pub(super) struct Builder<'a> {
    path: &'a Path,
    opts: &'a LoadOptions,
    format: TraceFormat,
    ps: u64,
    shift: u32,
    /// First logical page of each volume slot known so far.
    bases: Vec<u64>,
    t0: Option<Nanos>,
    prev: Nanos,
    backwards: u64,
    max_back: Nanos,
    splits: u64,
    folded: u64,
    mismatched: u64,
    writes_without: u64,
    writes_with: u64,
    /// Records added.
    records: u64,
    pub(super) intern: HashMap<PageHash, u32>,
    span: u64,
    /// Requests made and not taken yet; `content` indexes `contents`, a
    /// hint's request index `requests`.
    pub(super) requests: Vec<Request>,
    pub(super) contents: Vec<ContentId>,
    pub(super) hints: Vec<(u32, Hint)>,
    /// Requests made, taken or not.
    made: u64,
    duration: DurationCheck,
    coarse: CoarseCheck,
    /// Read requests carrying content hashes.
    pub(super) reads_with_content: u64,
    /// Whether to gather [`Workload::past_contents`] (a loaded trace; a
    /// streamed one only counts [`Builder::reads_with_content`]).
    pub(super) track_past: bool,
    /// Pages accessed so far (a bitmap), for the first access of each.
    touched: Vec<u64>,
    /// `(lpn, id)` of pages first accessed by a read with content; an id
    /// with [`PAST_ONLY`] set indexes `read_intern` (a content no write
    /// carried yet).
    past: Vec<(u32, u32)>,
    read_intern: HashMap<PageHash, u32>,
}

/// Marks a provisional id of a content first seen in a read.
const PAST_ONLY: u32 = 1 << 31;

impl<'a> Builder<'a> {
    pub(super) fn new(format: TraceFormat, path: &'a Path, opts: &'a LoadOptions, bases: Vec<u64>) -> Self {
        let ps = u64::from(opts.page_size);
        Builder {
            path,
            opts,
            format,
            ps,
            // The page size is a power of two (validated): divide by shifting.
            shift: ps.trailing_zeros(),
            bases,
            t0: None,
            prev: Nanos::ZERO,
            backwards: 0,
            max_back: Nanos::ZERO,
            splits: 0,
            folded: 0,
            mismatched: 0,
            writes_without: 0,
            writes_with: 0,
            records: 0,
            intern: HashMap::new(),
            span: 0,
            requests: Vec::new(),
            contents: Vec::new(),
            hints: Vec::new(),
            made: 0,
            duration: DurationCheck::default(),
            coarse: CoarseCheck::default(),
            reads_with_content: 0,
            track_past: false,
            touched: Vec::new(),
            past: Vec::new(),
            read_intern: HashMap::new(),
        }
    }

    /// Notes the first access of each page of `l..l + p` (of a request of
    /// `op` whose pages' hashes are `hashes`, if it carries any): a page
    /// first read with a hash gets a [`Workload::past_contents`] entry.
    fn first_access(
        &mut self,
        line: u64,
        op: Op,
        l: u64,
        p: u64,
        hashes: Option<&[PageHash]>,
    ) -> Result<(), TraceError> {
        let end = (l + p) as usize;
        if self.touched.len() < end.div_ceil(64) {
            self.touched.resize(end.div_ceil(64).max(self.touched.len() * 2), 0);
        }
        let Some(h) = hashes.filter(|_| op == Op::Read) else {
            // Nothing to note but the pages touched: a word at a time.
            mark_bits(&mut self.touched, l as usize, end);
            return Ok(());
        };
        for (k, lpn) in (l as usize..end).enumerate() {
            let (w, b) = (lpn / 64, 1u64 << (lpn % 64));
            if self.touched[w] & b != 0 {
                continue;
            }
            self.touched[w] |= b;
            let hash = &h[k];
            let id = match self.intern.get(hash) {
                Some(&id) => id,
                None => {
                    let next = self.read_intern.len() as u32;
                    if next >= PAST_ONLY {
                        return Err(TraceError::Parse {
                            path: self.path.to_path_buf(),
                            line,
                            reason: "more than 2^31 distinct contents read before written".into(),
                        });
                    }
                    *self.read_intern.entry(*hash).or_insert(next) | PAST_ONLY
                }
            };
            self.past.push((lpn as u32, id));
        }
        Ok(())
    }

    /// The base of volume `slot`, if known: every slot's is given, or a
    /// first slot's (0), or any slot's when volumes share one space.
    pub(super) fn base(&mut self, slot: u32) -> Option<u64> {
        if let Some(&b) = self.bases.get(slot as usize) {
            return Some(b);
        }
        if slot as usize == self.bases.len() && (slot == 0 || self.opts.volume == VolumeSelect::Merge) {
            self.bases.push(0);
            return Some(0);
        }
        None
    }

    /// Adds one record (with its content and hint, if it has either).
    #[inline]
    pub(super) fn add(&mut self, r: &Rec, extra: Option<Extra>) -> Result<(), TraceError> {
        match extra {
            // Nearly every record of most formats: no content, no hint,
            // and (without --wrap) one request, so none of the rest.
            None if self.opts.wrap_to_pages.is_none() => self.add_plain(r),
            extra => self.add_any(r, extra),
        }
    }

    /// [`Builder::add`] of a record without content or hint, without
    /// `--wrap`: what [`Builder::add_any`] does then, in the same order.
    fn add_plain(&mut self, r: &Rec) -> Result<(), TraceError> {
        let (t, lpn, pages) = self.place(r)?;
        if r.op == Op::Write {
            self.writes_without += 1;
        }
        self.check_segment(r.line, lpn, pages)?;
        self.push_segment(r, t, lpn, pages, NO_CONTENT, None)
    }

    /// The record's arrival (rebased, clamped), first page and pages.
    /// (This and the next two: `always`, as plain `#[inline]` left them
    /// calls, 60.7 M instructions for 200k records against 39.7 M; issue
    /// 26, BENCHMARKS round 14a.)
    #[inline(always)]
    fn place(&mut self, r: &Rec) -> Result<(Nanos, u64, u64), TraceError> {
        self.records += 1;
        let t0 = *self.t0.get_or_insert(r.time);
        if self.records == 1 {
            self.prev = t0;
        }
        let mut abs = r.time;
        if abs < self.prev {
            self.backwards += 1;
            self.max_back = self.max_back.max(self.prev - abs);
            abs = self.prev;
        }
        self.prev = abs;
        let t = abs - t0;
        let base = self.base(r.slot).expect("the volume's range is known (Builder::base)");
        let pages = pages_covered(r.offset, r.size, self.ps);
        let lpn = base.checked_add(r.offset >> self.shift).ok_or_else(|| TraceError::AddressOverflow {
            path: self.path.to_path_buf(),
            line: r.line,
            reason: "logical page number overflows 64 bits".into(),
        })?;
        Ok((t, lpn, pages))
    }

    /// A request's pages `l..l + p` against the capacity and the 2^32-page
    /// address space.
    #[inline(always)]
    fn check_segment(&self, line: u64, l: u64, p: u64) -> Result<(), TraceError> {
        let end = l + p;
        if let Some(cap) = self.opts.capacity_pages {
            if end > cap {
                return Err(TraceError::BeyondCapacity {
                    path: self.path.to_path_buf(),
                    line,
                    lpn: l,
                    pages: p,
                    capacity: cap,
                });
            }
        }
        if end > 1 << 32 {
            let ps = self.ps;
            return Err(TraceError::AddressOverflow {
                path: self.path.to_path_buf(),
                line,
                reason: format!(
                    "request ends at page {end}, beyond the simulator's 2^32-page address \
                     space ({} TiB with {ps}-byte pages)",
                    (ps << 32) >> 40
                ),
            });
        }
        Ok(())
    }

    /// Makes the request of record `r` on pages `l..l + p` (checked by
    /// [`Builder::check_segment`]), arriving at `t`, with `content` (an
    /// index into `contents`) and the hashes its pages showed if a read.
    #[inline(always)]
    fn push_segment(
        &mut self,
        r: &Rec,
        t: Nanos,
        l: u64,
        p: u64,
        content: u32,
        read: Option<&[PageHash]>,
    ) -> Result<(), TraceError> {
        if self.track_past {
            self.first_access(r.line, r.op, l, p, read)?;
        }
        self.span = self.span.max(l + p);
        self.duration.add(t);
        self.coarse.add(t);
        self.made += 1;
        self.requests.push(Request { arrival: t, op: r.op, lpn: l as u32, pages: p as u32, content, stream: r.stream });
        Ok(())
    }

    /// [`Builder::add`] of any record.
    fn add_any(&mut self, r: &Rec, extra: Option<Extra>) -> Result<(), TraceError> {
        let (opts, ps, shift) = (self.opts, self.ps, self.shift);
        let path = self.path;
        let pb = || path.to_path_buf();
        let line = r.line;
        let (content, hint) = extra.map_or((None, None), |e| (e.content, e.hint));
        let (t, lpn, pages) = self.place(r)?;
        let base = self.base(r.slot).expect("the volume's range is known (Builder::base)");
        let hashes = match (&content, r.op) {
            (Some(c), Op::Write) if !opts.ignore_content => {
                let h = page_hashes(c, r.offset, r.size, ps);
                if h.is_none() {
                    self.mismatched += 1;
                }
                h
            }
            _ => None,
        };
        // A read's hashes say what its pages held (before the trace, for a
        // page no earlier request touched): kept for preconditioning only.
        let read_hashes = match (&content, r.op) {
            (Some(c), Op::Read) if !opts.ignore_content => page_hashes(c, r.offset, r.size, ps),
            _ => None,
        };
        if read_hashes.is_some() {
            self.reads_with_content += 1;
        }
        if r.op == Op::Write {
            if hashes.is_some() {
                self.writes_with += 1;
            } else {
                self.writes_without += 1;
            }
        }
        // Up to two segments (lpn, pages, first hash index).
        let mut segs = [(lpn, pages, 0usize), (0, 0, 0)];
        let mut nsegs = 1;
        if let Some(w) = opts.wrap_to_pages {
            if pages > w {
                return Err(TraceError::Parse {
                    path: pb(),
                    line,
                    reason: format!("request of {pages} pages is larger than the --wrap range of {w} pages"),
                });
            }
            let l = lpn % w;
            if l != lpn {
                self.folded += 1;
            }
            if l + pages > w {
                let head = w - l;
                segs = [(l, head, 0), (0, pages - head, head as usize)];
                nsegs = 2;
                self.splits += 1;
            } else {
                segs[0].0 = l;
            }
        }
        if let Some(h) = hint {
            let hint = match h {
                TraceHint::Overwrite => Hint::Overwrite,
                TraceHint::Append { after } => {
                    // --wrap folds the hint's page as it folds requests,
                    // before the 2^32-page limit applies (with --wrap,
                    // advising --wrap would be no help).
                    let a = base
                        .checked_add(after >> shift)
                        .map(|a| opts.wrap_to_pages.map_or(a, |w| a % w))
                        .filter(|&a| a < 1 << 32)
                        .ok_or_else(|| TraceError::AddressOverflow {
                            path: pb(),
                            line,
                            reason: "the append hint's page lies beyond the 2^32-page address space".into(),
                        })?;
                    if let Some(cap) = opts.capacity_pages.filter(|&cap| a >= cap) {
                        return Err(TraceError::HintBeyondCapacity { path: pb(), line, lpn: a, capacity: cap });
                    }
                    Hint::Append { after: a as u32 }
                }
            };
            self.hints.push((self.requests.len() as u32, hint));
        }
        for &(l, p, h0) in &segs[..nsegs] {
            self.check_segment(line, l, p)?;
            let content = match &hashes {
                Some(h) => {
                    let start = self.contents.len();
                    if start + p as usize >= NO_CONTENT as usize {
                        return Err(TraceError::Parse {
                            path: pb(),
                            line,
                            reason: "more than 2^32-1 written pages with content; load a \
                                     prefix of the trace (max_requests)"
                                .into(),
                        });
                    }
                    for hash in &h[h0..h0 + p as usize] {
                        let next_id = self.intern.len() as u32;
                        let id = *self.intern.entry(*hash).or_insert(next_id);
                        self.contents.push(ContentId(id));
                    }
                    start as u32
                }
                None => NO_CONTENT,
            };
            let h = read_hashes.as_deref().map(|h| &h[h0..h0 + p as usize]);
            self.push_segment(r, t, l, p, content, h)?;
        }
        Ok(())
    }

    /// Ends the build: its warnings appended to `warnings`; what it made
    /// and was not taken.
    pub(super) fn finish(self, warnings: &mut Vec<String>) -> Built {
        let opts = self.opts;
        let (backwards, max_backs, folded, splits) = (self.backwards, self.max_back, self.folded, self.splits);
        let max_back = max_backs;
        let (mismatched, writes_with, writes_without) = (self.mismatched, self.writes_with, self.writes_without);
        let records_len = self.records;
        if backwards > 0 {
            warnings.push(format!(
                "{backwards} timestamps went backwards (by up to {max_back}); \
                 clamped to the previous request's time"
            ));
        }
        if let (Some(w), true) = (opts.wrap_to_pages, folded > 0) {
            warnings.push(format!(
                "{folded} of {} requests started beyond the --wrap range of {w} pages and were folded \
                 into it (page p -> p mod {w})",
                records_len
            ));
        }
        if splits > 0 {
            warnings.push(format!("{splits} requests crossed the --wrap boundary and were split in two"));
        }
        if mismatched > 0 {
            warnings.push(format!(
                "{mismatched} write requests had a content list not matching their size; \
                 their content was dropped"
            ));
        }
        if writes_with > 0 && writes_without > 0 {
            warnings.push(format!(
                "{writes_without} of {} write requests carry no content hashes; \
                 the workload is treated as content-less",
                writes_with + writes_without
            ));
        }

        if let Some(w) = self.duration.warning(self.format) {
            warnings.push(w);
        }
        if let Some(w) = self.coarse.warning() {
            warnings.push(w);
        }
        // A content first seen in a read is a write's if a later write
        // carried it, else it gets an id past the writes' (in order of
        // first appearance).
        let space = self.intern.len() as u32;
        let mut only = vec![u32::MAX; self.read_intern.len()];
        let mut past_only = 0u32;
        let mut by_id: Vec<(&PageHash, u32)> = self.read_intern.iter().map(|(h, &k)| (h, k)).collect();
        by_id.sort_by_key(|&(_, k)| k);
        for (h, k) in by_id {
            only[k as usize] = match self.intern.get(h) {
                Some(&id) => id,
                None => {
                    past_only += 1;
                    space + past_only - 1
                }
            };
        }
        let mut past_contents: Vec<(u32, ContentId)> = self
            .past
            .iter()
            .map(|&(l, id)| (l, ContentId(if id & PAST_ONLY != 0 { only[(id & !PAST_ONLY) as usize] } else { id })))
            .collect();
        past_contents.sort_unstable_by_key(|&(l, _)| l);
        Built {
            requests: self.requests,
            contents: self.contents,
            hints: self.hints,
            content_space: space,
            past_contents,
            past_only,
            lpn_span: self.span,
            bases: self.bases,
            intern: self.intern,
        }
    }

    /// Hints the CPU to fetch the word of the pages-touched bitmap that
    /// [`Builder::add`] will mark for `r` (its first page), when
    /// [`Builder::track_past`] keeps one: the bitmap spans the trace's
    /// pages, far larger than the caches, and its words are reached at
    /// random (issue 26 round 12c: a miss per record, 7% of a streamed
    /// run's samples). Only speed: a word not there yet, a volume not
    /// placed yet, is simply not fetched.
    #[inline]
    pub(super) fn prefetch_touched(&self, r: &Rec) {
        if !self.track_past {
            return;
        }
        let Some(&base) = self.bases.get(r.slot as usize) else { return };
        let mut lpn = base.wrapping_add(r.offset >> self.shift);
        if let Some(w) = self.opts.wrap_to_pages.filter(|&w| w > 0) {
            lpn %= w;
        }
        if let Some(word) = usize::try_from(lpn / 64).ok().and_then(|i| self.touched.get(i)) {
            crate::prefetch::prefetch(word);
        }
    }

    /// Requests made so far, taken or not.
    pub(super) fn made(&self) -> u64 {
        self.made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_str(text: &str, opts: &LoadOptions) -> Result<Loaded, TraceError> {
        load_from_reader(text.as_bytes(), Path::new("t.trace"), opts)
    }

    /// A read's hashes give the pages it is the first to touch their
    /// content before the trace: a written content keeps the write's id, a
    /// content only read gets an id past the writes' (which do not change).
    #[test]
    fn reads_show_what_pages_held_before_the_trace() {
        let (a, b, c) = ("a".repeat(32), "b".repeat(32), "c".repeat(32));
        let text = format!(
            "1 1 p 0 8 W 6 0 {c}\n2 2 p 8 8 R 6 0 {b}\n3 3 p 0 8 R 6 0 {c}\n4 4 p 16 8 R 6 0 {a}\n\
             5 5 p 24 8 W 6 0 {a}\n6 6 p 40 8 R 6 0 {b}\n7 7 p 8 8 R 6 0 {a}\n"
        );
        let opts = LoadOptions { format: Some(TraceFormat::Fiu), ..LoadOptions::default() };
        let w = load_from_reader(text.as_bytes(), Path::new("t.blkparse"), &opts).unwrap().workload;
        // Writes: c = 0, a = 1 (as without reads); b only read: 2.
        assert_eq!(w.contents, vec![ContentId(0), ContentId(1)]);
        assert_eq!(w.content_space, 2);
        // Page 0 was written first; page 1's first read is b, page 2's a,
        // page 5's b (page 1's second read is not its first access).
        assert_eq!(w.past_contents, vec![(1, ContentId(2)), (2, ContentId(1)), (5, ContentId(2))]);
        assert_eq!(w.past_only, 1);
        let none = LoadOptions { ignore_content: true, ..opts };
        let w = load_from_reader(text.as_bytes(), Path::new("t.blkparse"), &none).unwrap().workload;
        assert!(w.past_contents.is_empty());
    }

    /// A request's stream is its (volume, process) in order of first
    /// appearance: FIU's pid (here 4, 9, 4 again, then 4 on volume 7:1) and
    /// blkparse's pid; a format with neither gives every request stream 0
    /// of its volume.
    #[test]
    fn streams_are_volume_and_process() {
        let d = "d".repeat(32);
        let text = format!("1 4 p 0 8 W 6 0 {d}\n2 9 q 64 8 W 6 0 {d}\n3 4 p 128 8 W 6 0 {d}\n4 4 p 0 8 W 7 1 {d}\n");
        let opts = LoadOptions { format: Some(TraceFormat::Fiu), ..LoadOptions::default() };
        let w = load_from_reader(text.as_bytes(), Path::new("t.fiu"), &opts).unwrap().workload;
        let streams: Vec<u16> = w.requests.iter().map(|r| r.stream).collect();
        assert_eq!(streams, vec![0, 1, 0, 2]);
        let text = "8,0 0 1 0.000001 77 Q W 0 + 8 [a]\n8,0 1 2 0.000002 78 Q W 64 + 8 [b]\n\
                    8,0 0 3 0.000003 77 Q W 128 + 8 [a]\n";
        let opts = LoadOptions {
            format: Some(TraceFormat::Blkparse(crate::trace::blkparse::BlkEvent::Queue)),
            ..LoadOptions::default()
        };
        let w = load_from_reader(text.as_bytes(), Path::new("t.blkparse"), &opts).unwrap().workload;
        let streams: Vec<u16> = w.requests.iter().map(|r| r.stream).collect();
        assert_eq!(streams, vec![0, 1, 0]);
        let l = load_str("# dedupsim-trace v1\n0 W 8192 4096 5\n1 W 0 100 2\n2 W 0 4096 5\n", &LoadOptions::default());
        let streams: Vec<u16> = l.unwrap().workload.requests.iter().map(|r| r.stream).collect();
        assert_eq!(streams, vec![0, 1, 0]);
    }

    #[test]
    fn volumes_get_disjoint_ranges() {
        let text = "# dedupsim-trace v1\n0 W 8192 4096 5\n1 W 0 100 2\n2 R 4096 4096 5\n";
        let l = load_str(text, &LoadOptions::default()).unwrap();
        let r = &l.workload.requests;
        // Volume 5 first (3 pages: max end 12288), then volume 2 at page 3.
        assert_eq!(l.volumes, vec![(5, 0), (2, 3)]);
        assert_eq!((r[0].lpn, r[1].lpn, r[2].lpn), (2, 3, 1));
        assert_eq!(l.workload.lpn_span, 4);
        let one = LoadOptions { volume: VolumeSelect::One(2), ..LoadOptions::default() };
        let l = load_str(text, &one).unwrap();
        assert_eq!(l.workload.requests.len(), 1);
        assert_eq!(l.workload.requests[0].lpn, 0);
        let none = LoadOptions { volume: VolumeSelect::One(9), ..LoadOptions::default() };
        let e = load_str(text, &none).unwrap_err().to_string();
        assert!(e.contains("no requests for volume 9 (volumes present: 5, 2)"), "{e}");
    }

    #[test]
    fn merged_volumes_share_one_address_space() {
        let text = "# dedupsim-trace v1\n0 W 8192 4096 5\n1 W 0 100 2\n2 R 4096 4096 5\n3 R 8192 8192 2\n";
        let merge = LoadOptions { volume: VolumeSelect::Merge, ..LoadOptions::default() };
        let l = load_str(text, &merge).unwrap();
        let r = &l.workload.requests;
        // Every volume kept, each at its own addresses: the device column is ignored.
        assert_eq!(l.volumes, vec![(5, 0), (2, 0)]);
        let got: Vec<(u32, u32)> = r.iter().map(|q| (q.lpn, q.pages)).collect();
        assert_eq!(got, vec![(2, 1), (0, 1), (1, 1), (2, 2)]);
        assert_eq!(l.workload.lpn_span, 4);
        // The same records on one volume load identically, but for the
        // streams: merging keeps each volume's (docs/trace-formats.md).
        let flat = "# dedupsim-trace v1\n0 W 8192 4096\n1 W 0 100\n2 R 4096 4096\n3 R 8192 8192\n";
        let flat = load_str(flat, &LoadOptions::default()).unwrap().workload.requests;
        let one_stream: Vec<Request> = r.iter().map(|q| Request { stream: 0, ..*q }).collect();
        assert_eq!(flat, one_stream);
        assert_eq!(r.iter().map(|q| q.stream).collect::<Vec<_>>(), vec![0, 1, 0, 1]);
        assert_eq!("merge".parse::<VolumeSelect>().unwrap(), VolumeSelect::Merge);
        assert_eq!(VolumeSelect::Merge.to_string(), "merge");
    }

    #[test]
    fn time_rebased_and_clamped() {
        let text = "# dedupsim-trace v1\n1000 R 0 4096\n900 R 0 4096\n3000 R 0 4096\n";
        let l = load_str(text, &LoadOptions::default()).unwrap();
        let t: Vec<u64> = l.workload.requests.iter().map(|r| r.arrival.0).collect();
        assert_eq!(t, vec![0, 0, 2000]);
        assert!(l.warnings.iter().any(|w| w.starts_with("1 timestamps went backwards")));
    }

    #[test]
    fn implausible_durations_are_warned_about() {
        let req =
            |t: u64| Request { arrival: Nanos(t), op: Op::Read, lpn: 0, pages: 1, content: NO_CONTENT, stream: 0 };
        let long: Vec<Request> = vec![req(0), req(100 * 86_400 * 1_000_000_000)];
        assert!(implausible_duration(&long, TraceFormat::Msr).unwrap().contains("100 days"));
        let burst: Vec<Request> = (0..2000).map(req).collect();
        assert!(implausible_duration(&burst, TraceFormat::Msr).unwrap().contains("2000 requests"));
        let fine: Vec<Request> = (0..2000).map(|i| req(i * 1_000_000)).collect();
        assert_eq!(implausible_duration(&fine, TraceFormat::Msr), None);
    }

    #[test]
    fn whole_second_bursts_are_warned_about() {
        let req =
            |t: u64| Request { arrival: Nanos(t), op: Op::Read, lpn: 0, pages: 1, content: NO_CONTENT, stream: 0 };
        let s = 1_000_000_000;
        let bursty: Vec<Request> = (0..300).map(|i| req(i / 50 * s)).collect();
        assert_eq!(
            coarse_timestamps(&bursty).unwrap(),
            "timestamps have 1 s resolution: 300 requests arrive at 6 distinct times (up to 50 at once), so an \
             open-loop replay issues each second's requests as one burst; --set replay.mode=closed-loop ignores \
             the timestamps"
        );
        let sparse: Vec<Request> = (0..300).map(|i| req(i * s)).collect();
        assert_eq!(coarse_timestamps(&sparse), None);
        let fine: Vec<Request> = (0..300).map(|i| req(i / 50 * s + i)).collect();
        assert_eq!(coarse_timestamps(&fine), None);
        // Through the loader: a Tencent trace at one-second resolution.
        let text: String = (0..200).map(|i| format!("{},{},8,1,1\n", 1538323200 + i / 100, i * 8)).collect();
        let l = load_from_reader(text.as_bytes(), Path::new("cbs.csv"), &LoadOptions::default()).unwrap();
        assert!(l.warnings.iter().any(|w| w.contains("200 requests arrive at 2 distinct times (up to 100")));
    }

    #[test]
    fn alignment_and_wrap() {
        let text = "# dedupsim-trace v1\n0 W 4000 200 0 1,2\n0 W 40960 8192 0 3,4\n";
        let l = load_str(text, &LoadOptions::default()).unwrap();
        let r = &l.workload.requests;
        assert_eq!((r[0].lpn, r[0].pages), (0, 2));
        assert_eq!(l.workload.content_space, 4);
        let wrap = LoadOptions { wrap_to_pages: Some(11), ..LoadOptions::default() };
        let l = load_str(text, &wrap).unwrap();
        let r = &l.workload.requests;
        assert_eq!(r.len(), 3);
        assert_eq!((r[1].lpn, r[1].pages, r[2].lpn, r[2].pages), (10, 1, 0, 1));
        let c: Vec<u32> = l.workload.contents.iter().map(|c| c.0).collect();
        assert_eq!(c, vec![0, 1, 2, 3]);
        assert_eq!(l.workload.content_of(&r[2]), &[ContentId(3)]);
        assert_eq!(l.warnings, ["1 requests crossed the --wrap boundary and were split in two"]);
        // Requests starting beyond the range are folded, and counted.
        let text = "# dedupsim-trace v1\n0 W 0 4096\n1 W 49152 4096\n2 W 90112 8192\n";
        let l = load_str(text, &wrap).unwrap();
        let got: Vec<(u32, u32)> = l.workload.requests.iter().map(|r| (r.lpn, r.pages)).collect();
        assert_eq!(got, [(0, 1), (1, 1), (0, 2)]);
        assert_eq!(
            l.warnings,
            ["2 of 3 requests started beyond the --wrap range of 11 pages and were folded into it \
              (page p -> p mod 11)"]
        );
    }

    #[test]
    fn fiu_volumes_are_named_major_minor() {
        let d = "d6c75ba46e82326fefa545b57a12e221";
        let text = format!("1 7 nfsd 16 8 W 6 0 {d}\n2 7 nfsd 16 8 W 6 16 {d}\n");
        let one = LoadOptions { volume: "1:2".parse().unwrap(), ..LoadOptions::default() };
        let e = load_from_reader(text.as_bytes(), Path::new("mail.blkparse"), &one).unwrap_err().to_string();
        assert_eq!(e, "mail.blkparse: contains no requests for volume 1:2 (volumes present: 6:0, 6:16)");
        assert_eq!(volume_label(TraceFormat::Msr, (1 << 20) | 2), "1048578");
        // major:minor on a trace with numbered volumes says where the number came from.
        let text = "# dedupsim-trace v1\n0 W 0 4096 0\n";
        let e = load_from_reader(text.as_bytes(), Path::new("t.trace"), &one).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.trace: contains no requests for volume 1048578 (volumes present: 0); \
             major:minor (1:2 = 1048578) names FIU devices, native traces number their volumes"
        );
    }

    #[test]
    fn large_and_small_pages_combine_content() {
        // Two 8 KiB pages with identical halves; one partially covered.
        let text = "# dedupsim-trace v1\n0 W 0 8192 0 1,2\n1 W 8192 8192 0 1,2\n2 W 16384 4096 0 1\n";
        let big = LoadOptions { page_size: 8192, ..LoadOptions::default() };
        let w = load_str(text, &big).unwrap().workload;
        let c: Vec<u32> = w.contents.iter().map(|c| c.0).collect();
        assert_eq!(c, vec![0, 0, 1]);
        let small = LoadOptions { page_size: 2048, ..LoadOptions::default() };
        let w = load_str(text, &small).unwrap().workload;
        let c: Vec<u32> = w.contents.iter().map(|c| c.0).collect();
        assert_eq!(c, vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
    }

    /// [`Builder::add`]'s short path for a record without content, hint or
    /// `--wrap` ([`Builder::add_plain`]) does what the general one
    /// ([`Builder::add_any`]) does: the same requests, counts, bitmap,
    /// span and warnings (times going back, writes without contents among
    /// writes with, whole-second arrivals), and the same error at the same
    /// record, on random records, some with contents (the general path in
    /// both builders).
    #[test]
    fn a_plain_record_takes_the_short_path_to_the_same_result() {
        let path = Path::new("t.trace");
        let run = |whole_seconds: bool, capacity: Option<u64>, plain_path: bool| {
            let opts = LoadOptions { capacity_pages: capacity, ..LoadOptions::default() };
            let mut b = Builder::new(TraceFormat::Native, path, &opts, vec![0]);
            b.track_past = true;
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let mut next = move |m: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % m
            };
            let mut t = 5_000_000_000u64;
            let mut out = Ok(());
            for line in 1..=3000u64 {
                // Now and then a step back in time.
                t = if next(20) == 0 { t.saturating_sub(next(10_000_000)) } else { t + next(10_000_000) };
                let time = if whole_seconds { Nanos(t / 1_000_000_000 * 1_000_000_000) } else { Nanos(t) };
                let op = [Op::Read, Op::Write, Op::Trim][next(3) as usize];
                let (offset, size) = (next(1 << 30), 1 + next(64 << 10));
                let content = (op == Op::Write && next(4) == 0)
                    .then(|| vec![[line as u8; 16]; pages_covered(offset, size, HASH_PAGE) as usize]);
                let stream = next(3) as u16;
                let r = Rec { time, offset, size, line, slot: 0, op, extra: content.is_some(), stream };
                let extra = content.map(|c| Extra { content: Some(c), hint: None });
                let added = if plain_path { b.add(&r, extra) } else { b.add_any(&r, extra) };
                if let Err(e) = added {
                    out = Err(e.to_string());
                    break;
                }
            }
            let (made, reads) = (b.made(), b.reads_with_content);
            let touched = b.touched.clone();
            let mut warnings = Vec::new();
            let built = b.finish(&mut warnings);
            (out, made, reads, touched, warnings, built.requests, built.contents, built.lpn_span, built.content_space)
        };
        // The capacity: a request now and then (about one in 900) ends
        // beyond it.
        for (whole_seconds, capacity) in [(false, None), (true, None), (false, Some((1 << 18) - 300))] {
            let short = run(whole_seconds, capacity, true);
            let general = run(whole_seconds, capacity, false);
            assert!(short == general, "whole seconds {whole_seconds}, capacity {capacity:?}");
            assert_eq!(short.0.is_err(), capacity.is_some(), "{:?}", short.0);
            assert!(short.1 > 100, "requests made: {}", short.1);
            if capacity.is_none() {
                assert_eq!(short.4.len(), 2, "warnings to compare: {:?}", short.4);
            }
        }
    }

    #[test]
    fn trace_names() {
        assert_eq!(trace_name(Path::new("/x/hm_0.csv.gz")), "hm_0");
        assert_eq!(trace_name(Path::new("mail.blkparse")), "mail");
        assert_eq!(trace_name(Path::new("noext")), "noext");
    }

    #[test]
    fn volume_select_parses() {
        assert_eq!("all".parse::<VolumeSelect>().unwrap(), VolumeSelect::All);
        assert_eq!("3".parse::<VolumeSelect>().unwrap(), VolumeSelect::One(3));
        assert_eq!("6:16".parse::<VolumeSelect>().unwrap(), VolumeSelect::One((6 << 20) | 16));
        assert!("x".parse::<VolumeSelect>().is_err());
        // Numbers out of range say so (before: "is not ... a number").
        let e = "4294967296".parse::<VolumeSelect>().unwrap_err().to_string();
        assert!(e.contains("out of range: at most 4294967295"), "{e}");
        assert_eq!("4294967295".parse::<VolumeSelect>().unwrap(), VolumeSelect::One(u32::MAX));
        let e = "4096:0".parse::<VolumeSelect>().unwrap_err().to_string();
        assert!(e.contains("major < 4096 and minor < 1048576"), "{e}");
        let e = "1:x".parse::<VolumeSelect>().unwrap_err().to_string();
        assert!(e.contains("is not `all`, `merge`, a number or `major:minor`"), "{e}");
    }
}
