//! FIU IODedup block traces with content hashes (Koller & Rangaswami, "I/O
//! Deduplication", FAST'10 / ACM TOS 2010; FIU SyLab via SNIA IOTTA): the
//! "homes", "mail" and "web-vm" workloads of FAD's Table II.
//!
//! One *4 KiB block* per line, whitespace-separated (blkparse output):
//!
//! ```text
//! ts pid process lba size op major minor digest
//! 89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221
//! ```
//!
//! * TIME UNIT: `ts` is integer nanoseconds.
//! * `lba` and `size` are in 512-byte sectors (records are 8 sectors = 4 KiB);
//!   `op` is `R` or `W`; `major minor` identify the device and become the
//!   volume `major << 20 | minor` (Linux `MKDEV`), e.g. 6:16 = 6291472.
//! * `digest` is the MD5 of the data, in hex. In mail and web-vm it is one
//!   MD5 per 4 KiB block (32 hex digits); in homes ([`TraceFormat::FiuHomes`])
//!   it is one MD5 per 512-byte sector, concatenated (8 × 32 hex digits per
//!   record). Which one a line uses is decided per line by the digest count
//!   (`ceil(size/8)` ⇒ per 4 KiB, `size` ⇒ per sector), so either name parses
//!   both variants. The field may be absent (no content for that record).
//! * The process name may contain spaces: fields are located from the end
//!   of the line.
//!
//! Content: each record's per-4 KiB hash is kept. For homes the 8 sector
//! MD5s of an aligned 4 KiB page are combined into one [`PageHash`] as the
//! MD5 of their concatenated 16-byte digests (in address order). Pages that
//! are only partly covered or unaligned (never the case in the published
//! samples) get MD5 of the tag `dedupsim-partial` followed by, for each piece
//! in address order, its offset in the page, its length, its offset within
//! its digest's chunk (u32 LE each) and the digest, so two such pages are
//! equal only if assembled from the same pieces at the same positions.
//!
//! Merging: because the trace splits every request into 4 KiB records,
//! consecutive records are merged back into one request when they have the
//! same op, pid and device, the next record starts exactly where the pending
//! request ends (ascending contiguous LBA), and it arrives at most
//! `merge_gap` (default 10 ms) after the previous record. Only records
//! adjacent in trace order merge (an interleaved record from another process
//! ends the request). Content hashes are concatenated in address order and
//! the request keeps the first record's time and line number. With this rule
//! the mail-02 sample's 1,000 records become 94 requests (56.4 % reads).
//!
//! [`TraceFormat::FiuHomes`]: super::TraceFormat::FiuHomes

use super::detect::{is_hex, is_rw, is_uint, Line};
use super::parse::{check_extent, chunk_digests_to_pages, quote, Fields, LineParser, Numbered};
use super::{PageHash, TraceRecord};
use crate::units::{Nanos, Op, SECTOR};

const NAMES: &[&str] = &["ts", "pid", "process", "lba", "size", "op", "major", "minor", "digest"];

/// One parsed FIU line (a 4 KiB block, before merging).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiuRecord {
    pub time: Nanos,
    pub pid: u32,
    /// `major << 20 | minor`.
    pub volume: u32,
    /// Start sector.
    pub lba: u64,
    /// Length in sectors.
    pub sectors: u64,
    pub op: Op,
    /// The digests and the number of bytes each covers (4096 or 512).
    pub digests: Option<(u64, Vec<PageHash>)>,
}

/// Parses one FIU line. `homes` only matters for 1-sector records, whose
/// single digest is then taken as a sector digest.
pub fn parse_record(line: &str, homes: bool) -> Result<FiuRecord, String> {
    let raw: Vec<&str> = line.split_whitespace().collect();
    let n = raw.len();
    if n < 8 {
        return Err(format!("expected at least 8 fields ({}), found {n}", NAMES.join(", ")));
    }
    // The op is the 3rd field from the end without a digest, the 4th with
    // one (the process name before it may contain spaces): its place says
    // whether the line has a digest, however malformed.
    let is_op = |s: &str| matches!(s, "R" | "r" | "W" | "w");
    // When neither place holds an op, a long non-numeric last field is
    // still taken as the digest, and the op error below names the op.
    let digest_like = |s: &str| s.len() >= 16 && !all_digits(s);
    let has_digest = if is_op(raw[n - 3]) {
        false
    } else if n >= 9 && (is_op(raw[n - 4]) || digest_like(raw[n - 1])) {
        true
    } else {
        return Err(format!(
            "no op field: expected R or W 3rd from the end (ts pid process lba size op major minor) or \
             4th from the end (... op major minor digest), found {} and {}",
            quote(raw[n - 3]),
            quote(raw[n - 4])
        ));
    };
    let k = n - usize::from(has_digest); // fields up to and including minor (>= 8)
                                         // Normalize to the canonical 9 positions (process name collapsed).
    let mut items: Vec<&str> = vec![raw[0], raw[1], "<process>"];
    items.extend_from_slice(&raw[k - 5..k]);
    if has_digest {
        items.push(raw[n - 1]);
    }
    let f = Fields::from_items(items, NAMES);
    let time = f.u64(0)?;
    let pid = f.u32(1)?;
    let lba = f.u64(3)?;
    let sectors = f.u64(4)?;
    let op = match f.str(5)? {
        "R" | "r" => Op::Read,
        "W" | "w" => Op::Write,
        _ => return Err(f.bad(5, "is not R or W")),
    };
    let major = f.u32(6)?;
    let minor = f.u32(7)?;
    if major >= 1 << 12 {
        return Err(f.bad(6, "is out of range (at most 4095)"));
    }
    if minor >= 1 << 20 {
        return Err(f.bad(7, "is out of range (at most 2^20-1 = 1048575)"));
    }
    let offset = f.sectors_as_bytes(3)?;
    let size = f.sectors_as_bytes(4)?;
    check_extent(offset, size)?;
    if has_digest {
        let d = f.str(8)?;
        if !d.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(f.bad(8, "is a malformed MD5 digest (not hexadecimal)"));
        }
        if d.len() % 32 != 0 {
            return Err(f.bad(
                8,
                &format!(
                    "is a malformed MD5 digest ({} hex digits, not a multiple of 32: one MD5 per 4 KiB or per sector)",
                    d.len()
                ),
            ));
        }
    }
    let digests = if has_digest && sectors > 0 {
        let hex_str = f.str(8)?;
        let count = (hex_str.len() / 32) as u64;
        let per_page = sectors.div_ceil(8);
        let chunk = if homes && count == sectors {
            SECTOR
        } else if count == per_page {
            4096
        } else if count == sectors {
            SECTOR
        } else {
            return Err(format!(
                "field 9 (digest) holds {count} MD5s, expected {per_page} (one per 4 KiB) \
                 or {sectors} (one per sector)"
            ));
        };
        let bytes = hex::decode(hex_str).map_err(|_| f.bad(8, "is a malformed MD5 digest (not hexadecimal)"))?;
        let hashes = bytes
            .chunks_exact(16)
            .map(|c| {
                let mut h = [0u8; 16];
                h.copy_from_slice(c);
                h
            })
            .collect();
        Some((chunk, hashes))
    } else {
        None
    };
    Ok(FiuRecord { time: Nanos(time), pid, volume: (major << 20) | minor, lba, sectors, op, digests })
}

fn all_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

/// A request being assembled from consecutive records.
struct Pending {
    line: u64,
    first: FiuRecord,
    last_time: Nanos,
    end_lba: u64,
}

impl Pending {
    fn accepts(&self, r: &FiuRecord, gap: Nanos) -> bool {
        let p = &self.first;
        let same_content_kind = match (&p.digests, &r.digests) {
            (None, None) => true,
            // The digest grid must stay regular: only whole chunks so far.
            (Some((c1, _)), Some((c2, _))) => c1 == c2 && ((self.end_lba - p.lba) * SECTOR) % c1 == 0,
            _ => false,
        };
        p.op == r.op
            && p.pid == r.pid
            && p.volume == r.volume
            && r.lba == self.end_lba
            && r.time - self.last_time <= gap
            && same_content_kind
    }

    fn absorb(&mut self, r: FiuRecord) {
        self.last_time = r.time;
        self.end_lba += r.sectors;
        if let (Some((_, all)), Some((_, more))) = (&mut self.first.digests, r.digests) {
            all.extend(more);
        }
    }

    fn into_record(self) -> Numbered {
        let f = self.first;
        let offset = f.lba * SECTOR;
        let size = (self.end_lba - f.lba) * SECTOR;
        let content = f.digests.map(|(chunk, d)| chunk_digests_to_pages(offset, size, chunk, &d));
        (
            self.line,
            TraceRecord { time: f.time, op: f.op, offset, size, volume: f.volume, content, hint: None, process: f.pid },
        )
    }
}

/// Streams FIU lines and merges per-block records into requests (see the
/// module documentation for the rule).
pub struct FiuParser {
    merge_gap: Nanos,
    homes: bool,
    pending: Option<Pending>,
    /// Write records with and without a digest, and the first line of one
    /// without.
    writes_with_digest: u64,
    writes_without_digest: u64,
    first_without: Option<u64>,
}

impl FiuParser {
    /// `merge_gap`: the largest time between two records of one request.
    pub fn new(merge_gap: Nanos, homes: bool) -> Self {
        FiuParser {
            merge_gap,
            homes,
            pending: None,
            writes_with_digest: 0,
            writes_without_digest: 0,
            first_without: None,
        }
    }

    /// Adds a record read at `line`; returns the request it completes, if any.
    pub fn push(&mut self, line: u64, r: FiuRecord) -> Option<Numbered> {
        // The merged request must stay addressable: cap the sum of sectors.
        let fits = |p: &Pending| {
            (p.end_lba - p.first.lba)
                .checked_add(r.sectors)
                .and_then(|s| s.checked_mul(SECTOR))
                .and_then(|s| s.checked_add(p.first.lba * SECTOR))
                .is_some()
        };
        match &mut self.pending {
            Some(p) if p.accepts(&r, self.merge_gap) && fits(p) => {
                p.absorb(r);
                None
            }
            slot => {
                let end_lba = r.lba + r.sectors;
                let next = Pending { line, last_time: r.time, end_lba, first: r };
                slot.replace(next).map(Pending::into_record)
            }
        }
    }

    /// Returns the last pending request.
    pub fn flush(&mut self) -> Option<Numbered> {
        self.pending.take().map(Pending::into_record)
    }
}

impl LineParser for FiuParser {
    fn line(&mut self, line: &str, line_no: u64, out: &mut Vec<Numbered>) -> Result<(), String> {
        let r = parse_record(line, self.homes)?;
        if r.op == Op::Write && r.sectors > 0 {
            if r.digests.is_some() {
                self.writes_with_digest += 1;
            } else {
                self.writes_without_digest += 1;
                self.first_without.get_or_insert(line_no);
            }
        }
        out.extend(self.push(line_no, r));
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<Numbered>) {
        out.extend(self.flush());
    }

    fn warnings(&self) -> Vec<String> {
        let (with, without) = (self.writes_with_digest, self.writes_without_digest);
        match self.first_without {
            Some(line) if with == 0 => vec![format!(
                "none of the {without} FIU write records carries an MD5 digest (from line {line} on): \
                 the trace has no content"
            )],
            Some(line) => vec![format!(
                "{without} of {} FIU write records carry no MD5 digest (the first at line {line})",
                with + without
            )],
            None => Vec::new(),
        }
    }
}

/// Detection: `ts pid process... lba size op major minor [digest]` with
/// nine or more words; the process name may contain spaces, so the shape
/// is anchored on the end of the line. (A malformed digest still makes an
/// FIU line: the parser says what is wrong with it.)
fn is_long_line(w: &[&str]) -> bool {
    let n = w.len();
    n >= 9 && is_uint(w[0]) && is_rw(w[n - 4]) && is_uint(w[n - 3]) && is_uint(w[n - 2])
}

/// Detection: an FIU homes line, one digest per 512 B sector of a
/// multi-sector record (rank 30).
pub(super) fn is_homes_line(l: &Line) -> bool {
    let (w, n) = (&l.words, l.words.len());
    if !is_long_line(w) {
        return false;
    }
    let sectors: usize = w[n - 5].parse().unwrap_or(0);
    let digests = if is_hex(w[n - 1]) { w[n - 1].len() / 32 } else { 0 };
    sectors > 1 && digests == sectors
}

/// Detection: an FIU line, with a digest or without (eight words) (rank 31).
pub(super) fn is_line(l: &Line) -> bool {
    let w = &l.words;
    is_long_line(w) || (w.len() == 8 && is_uint(w[0]) && is_rw(w[5]) && is_uint(w[3]) && is_uint(w[4]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<Numbered> {
        let mut p = FiuParser::new(Nanos::from_ms(10), false);
        let mut out = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            p.line(l, i as u64 + 1, &mut out).unwrap();
        }
        p.finish(&mut out);
        out
    }

    const A: &str = "d6c75ba46e82326fefa545b57a12e221";
    const B: &str = "34287a8bdde282abe94eebd707fe021f";

    #[test]
    fn merges_contiguous_blocks() {
        let l1 = format!("1000 7 nfsd 16 8 W 6 0 {A}");
        let l2 = format!("2000 7 nfsd 24 8 W 6 0 {B}");
        let l3 = format!("3000 8 nfsd 32 8 W 6 0 {B}"); // other pid
        let l4 = format!("20000000 8 nfsd 40 8 W 6 0 {B}"); // > 10 ms later
        let out = run(&[&l1, &l2, &l3, &l4]);
        assert_eq!(out.len(), 3);
        let (line, r) = &out[0];
        assert_eq!((*line, r.offset, r.size, r.op), (1, 8192, 8192, Op::Write));
        let c = r.content.as_ref().unwrap();
        assert_eq!(hex::encode(c[0]), A);
        assert_eq!(hex::encode(c[1]), B);
        assert_eq!(out[1].0, 3);
        assert_eq!(out[2].0, 4);
    }

    #[test]
    fn process_name_with_spaces_and_volume() {
        let r = parse_record(&format!("5 9 my proc 8 8 R 6 16 {A}"), false).unwrap();
        assert_eq!((r.volume, r.lba, r.op), ((6 << 20) | 16, 8, Op::Read));
        let r = parse_record("5 9 proc 8 8 R 6 16", false).unwrap();
        assert!(r.digests.is_none());
    }

    #[test]
    fn homes_digests_per_sector() {
        let d = A.repeat(8);
        let r = parse_record(&format!("5 9 k 8 8 W 6 0 {d}"), true).unwrap();
        let (chunk, h) = r.digests.unwrap();
        assert_eq!((chunk, h.len()), (512, 8));
        let bad = parse_record(&format!("5 9 k 8 8 W 6 0 {}", A.repeat(3)), false);
        assert!(bad.unwrap_err().contains("holds 3 MD5s"));
        let e = parse_record(&format!("5 9 k 8 8 X 6 0 {A}"), false).unwrap_err();
        assert_eq!(e, "field 6 (op) is not R or W: \"X\"");
    }

    #[test]
    fn malformed_digests_are_named_as_such() {
        let e = parse_record(&format!("5 9 k 8 8 W 6 0 {}", &A[..31]), false).unwrap_err();
        assert_eq!(
            e,
            format!(
                "field 9 (digest) is a malformed MD5 digest (31 hex digits, not a multiple of 32: \
                 one MD5 per 4 KiB or per sector): \"{}\"",
                &A[..31]
            )
        );
        let e = parse_record(&format!("5 9 k 8 8 W 6 0 {}zz", &A[..30]), false).unwrap_err();
        assert!(e.starts_with("field 9 (digest) is a malformed MD5 digest (not hexadecimal)"), "{e}");
        let e = parse_record("5 9 k 8 8 W 6 0 abc", false).unwrap_err();
        assert!(e.starts_with("field 9 (digest) is a malformed MD5 digest (3 hex digits"), "{e}");
        // A bad op before a digest-like field is named; otherwise both places are quoted.
        let e = parse_record(&format!("5 9 k 8 8 X 6 0 {}", &A[..31]), false).unwrap_err();
        assert_eq!(e, "field 6 (op) is not R or W: \"X\"");
        let e = parse_record("5 9 k 8 8 X 6 0 12", false).unwrap_err();
        assert!(e.starts_with("no op field: expected R or W 3rd from the end"), "{e}");
        assert!(e.ends_with("found \"6\" and \"X\""), "{e}");
        let e = parse_record("5 9 k 8 8 X 6 0", false).unwrap_err();
        assert!(e.ends_with("found \"X\" and \"8\""), "{e}");
    }

    #[test]
    fn writes_without_digests_are_counted() {
        let mut p = FiuParser::new(Nanos::from_ms(10), false);
        let mut out = Vec::new();
        p.line(&format!("1 7 nfsd 16 8 W 6 0 {A}"), 1, &mut out).unwrap();
        p.line("2 7 nfsd 800 8 W 6 0", 2, &mut out).unwrap();
        p.line("3 7 nfsd 900 8 R 6 0", 3, &mut out).unwrap();
        assert_eq!(p.warnings(), ["1 of 2 FIU write records carry no MD5 digest (the first at line 2)"]);
        let mut p = FiuParser::new(Nanos::from_ms(10), false);
        p.line("2 7 nfsd 800 8 W 6 0", 4, &mut out).unwrap();
        assert_eq!(
            p.warnings(),
            ["none of the 1 FIU write records carries an MD5 digest (from line 4 on): the trace has no content"]
        );
    }
}
