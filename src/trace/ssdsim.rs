//! SSDsim ASCII traces (Hu et al., SSDsim; the DiskSim-derived format FAD's
//! `xuansek/FAD-SSDsim` replays).
//!
//! One request per line, whitespace-separated:
//!
//! ```text
//! time devno lsn size ope
//! 26214000 0 303574 7 0
//! ```
//!
//! * TIME UNIT: `time` is integer nanoseconds.
//! * `lsn` (start sector) and `size` are in 512-byte sectors; `ope` is `1`
//!   for a read and `0` for a write; the volume is `devno`.
//!
//! The layout and units are identical to MQSim's ([`super::mqsim`]); both
//! share one parser with their own field names.
//!
//! [`write_ssdsim`] writes a page-aligned workload in this format (what
//! `dedupsim trace convert --to ssdsim` produces), in the strict shape both
//! simulators read alike.

use super::detect::{is_uint, Line};
use super::parse::{plain_record, Fields};
use super::TraceRecord;
use crate::units::{Nanos, Op, SECTOR};
use crate::workload::Workload;
use std::io::{self, BufWriter, Write};

const NAMES: &[&str] = &["time", "devno", "lsn", "size", "ope"];

/// Parses one SSDsim line.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    parse_disksim(line, NAMES)
}

/// Parses the shared DiskSim-style ASCII layout `time(ns) device
/// sector(512 B) size(sectors) op(1 = read, 0 = write)`; `names` label the
/// five fields in error messages.
pub(crate) fn parse_disksim(line: &str, names: &'static [&'static str]) -> Result<Option<TraceRecord>, String> {
    if let Some(r) = parse_disksim_fast(line.as_bytes()) {
        return Ok(Some(r));
    }
    let f = Fields::ws(line, names);
    f.require(5)?;
    f.at_most(5)?;
    let time = f.u64(0)?;
    let volume = f.u32(1)?;
    let offset = f.sectors_as_bytes(2)?;
    let size = f.sectors_as_bytes(3)?;
    let op = match f.str(4)? {
        "1" => Op::Read,
        "0" => Op::Write,
        _ => return Err(f.bad(4, "is not 1 (read) or 0 (write)")),
    };
    plain_record(time, op, offset, size, volume).map(Some)
}

/// Digits per field that [`parse_disksim_fast`] reads: any 19-digit number
/// fits a u64.
const MAX_FAST_DIGITS: usize = 19;

/// The common case of [`parse_disksim`], read straight from the line's
/// bytes with no allocation: five fields of ASCII digits separated by
/// spaces or tabs (only blanks may follow), each in range, op exactly `0` or
/// `1`. Anything else (other whitespace, signs, overflow, a bad op) is
/// `None` and goes to the general parser, which then returns the same
/// record or its precise error: this path only accepts lines the general
/// one parses to the identical record.
#[inline]
pub(crate) fn parse_disksim_fast(b: &[u8]) -> Option<TraceRecord> {
    let blank = |c: u8| c == b' ' || c == b'\t';
    let mut v = [0u64; 5];
    let mut i = 0;
    let mut last_len = 0;
    for x in v.iter_mut() {
        while i < b.len() && blank(b[i]) {
            i += 1;
        }
        let start = i;
        // At most 19 digits cannot overflow a u64 (10^19 - 1 < 2^64), so
        // plain arithmetic suffices; a longer field goes to the general
        // parser (which reports overflow, or reads leading zeros).
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if i - start == MAX_FAST_DIGITS {
                return None;
            }
            *x = *x * 10 + u64::from(d);
            i += 1;
        }
        if i == start || b.get(i).is_some_and(|&c| !blank(c)) {
            return None;
        }
        last_len = i - start;
    }
    // Nothing but blanks may follow the five fields (the general parser
    // reports an extra field).
    if b[i..].iter().any(|&c| !blank(c)) {
        return None;
    }
    let op = match (last_len, v[4]) {
        (1, 1) => Op::Read,
        (1, 0) => Op::Write,
        _ => return None,
    };
    let volume = u32::try_from(v[1]).ok()?;
    let offset = v[2].checked_mul(SECTOR)?;
    let size = v[3].checked_mul(SECTOR)?;
    offset.checked_add(size)?;
    Some(TraceRecord { time: Nanos(v[0]), op, offset, size, volume, content: None, hint: None, process: 0 })
}

/// The largest sector address (exclusive end of a request) SSDsim can hold:
/// it keeps `lsn` in 32 bits, so `lsn + size` must stay below 2^32.
pub const MAX_SECTOR_END: u64 = u32::MAX as u64;

/// What [`write_ssdsim`] wrote.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SsdsimWritten {
    /// Lines written (reads + writes).
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    /// Trim requests left out (the format has no trim).
    pub trims_dropped: u64,
}

/// Why [`write_ssdsim`] failed.
#[derive(Debug, thiserror::Error)]
pub enum SsdsimWriteError {
    /// A request ends beyond SSDsim's 32-bit sector addresses.
    #[error(
        "request {request} (sectors {lsn}..{end}) ends beyond sector 2^32-1, the largest address \
         SSDsim keeps (32-bit sector numbers, 2 TiB); use --wrap to fold the addresses into the device",
        end = lsn + sectors
    )]
    SectorOverflow {
        /// 1-based index of the request in the workload.
        request: u64,
        lsn: u64,
        sectors: u64,
    },
    /// The page size is not a positive multiple of 512 bytes.
    #[error("page size {0} is not a positive multiple of 512 bytes")]
    PageSize(u32),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes a page-aligned workload as an SSDsim ASCII trace:
/// `time_ns devno lsn size op`, one request per line, integers separated by
/// one space, `devno` 0 (the workload's volumes already share one address
/// space), `lsn` and `size` in 512-byte sectors (`lpn × page_size / 512`,
/// `pages × page_size / 512`), op `1` = read and `0` = write. Times are the
/// workload's arrival times (relative to its first request, non-decreasing).
/// Trims are left out and counted. Every request must end at or below
/// sector 2^32-1 ([`MAX_SECTOR_END`]); the first one that does not is a
/// [`SsdsimWriteError::SectorOverflow`], checked before anything is written.
pub fn write_ssdsim<W: Write>(w: &Workload, page_size: u32, out: W) -> Result<SsdsimWritten, SsdsimWriteError> {
    let ps = u64::from(page_size);
    if ps == 0 || ps % SECTOR != 0 {
        return Err(SsdsimWriteError::PageSize(page_size));
    }
    let k = ps / SECTOR;
    let extent = |lpn: u32, pages: u32| (u64::from(lpn) * k, u64::from(pages) * k);
    for (i, r) in w.requests.iter().enumerate() {
        let (lsn, sectors) = extent(r.lpn, r.pages);
        if r.op != Op::Trim && lsn + sectors > MAX_SECTOR_END {
            return Err(SsdsimWriteError::SectorOverflow { request: i as u64 + 1, lsn, sectors });
        }
    }
    let mut out = BufWriter::new(out);
    let mut n = SsdsimWritten::default();
    for r in &w.requests {
        let op = match r.op {
            Op::Read => {
                n.reads += 1;
                1
            }
            Op::Write => {
                n.writes += 1;
                0
            }
            Op::Trim => {
                n.trims_dropped += 1;
                continue;
            }
        };
        let (lsn, sectors) = extent(r.lpn, r.pages);
        writeln!(out, "{} 0 {lsn} {sectors} {op}", r.arrival.0)?;
    }
    out.flush()?;
    n.requests = n.reads + n.writes;
    Ok(n)
}

/// Detection: the DiskSim-derived line SSDsim and MQSim share, five
/// integers, the last the 0/1 op.
pub(super) fn is_disksim_line(l: &Line) -> bool {
    l.words.len() == 5 && l.words.iter().all(|x| is_uint(x)) && matches!(l.words[4], "0" | "1")
}

/// Detection: a DiskSim line in a file named `*.ascii` (SSDsim's and
/// DiskSim's convention, compressed or not) or containing "ssdsim"
/// (rank 32; otherwise the line is MQSim's, rank 33). No content can tell
/// the two apart; the choice only changes the reported name.
pub(super) fn is_line(l: &Line) -> bool {
    let stem = l.file_name.trim_end_matches(".gz").trim_end_matches(".zst").trim_end_matches(".zstd");
    is_disksim_line(l) && (stem.ends_with(".ascii") || l.file_name.contains("ssdsim"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;
    use crate::workload::{Request, NO_CONTENT};

    /// The byte-level fast path accepts only lines the general parser reads
    /// to the identical record, and leaves every other line (and so every
    /// error message) to it.
    /// [`parse_disksim`] without its fast path.
    fn general(line: &str) -> Result<TraceRecord, String> {
        let f = Fields::ws(line, NAMES);
        f.require(5)?;
        f.at_most(5)?;
        let (time, volume) = (f.u64(0)?, f.u32(1)?);
        let (offset, size) = (f.sectors_as_bytes(2)?, f.sectors_as_bytes(3)?);
        let op = match f.str(4)? {
            "1" => Op::Read,
            "0" => Op::Write,
            _ => return Err(f.bad(4, "is not 1 (read) or 0 (write)")),
        };
        plain_record(time, op, offset, size, volume)
    }

    proptest::proptest! {
        /// On random lines of digits and blanks (fields of up to 21 digits,
        /// most short; the op field 0, 1, 2 or random digits): the fast
        /// path reads every line of five fields of at most 19 digits that
        /// the general parser reads, to the same record, and declines every
        /// line that it does not read to that record.
        #[test]
        fn fast_path_agrees_with_the_general_parser_on_random_lines(
            fields in proptest::collection::vec(
                (proptest::prop_oneof!["[0-9]{1,6}", "[0-9]{0,21}"], "[ \t]{1,2}"),
                4..7,
            ),
            lead in "[ \t]{0,2}",
            op in proptest::option::of(0u8..3),
        ) {
            let mut line = lead;
            let mut plain = fields.len() == 5;
            for (k, (digits, blank)) in fields.iter().enumerate() {
                let field = match op.filter(|_| k == 4) {
                    Some(o) => o.to_string(),
                    None => digits.clone(),
                };
                plain &= (1..=MAX_FAST_DIGITS).contains(&field.len());
                line.push_str(&field);
                line.push_str(blank);
            }
            let fast = parse_disksim_fast(line.as_bytes());
            match general(&line) {
                Ok(r) if plain => proptest::prop_assert_eq!(fast, Some(r), "{:?}", line),
                Ok(r) => proptest::prop_assert!(fast.is_none() || fast == Some(r), "{:?}", line),
                Err(_) => proptest::prop_assert!(fast.is_none(), "{:?}", line),
            }
        }
    }

    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let accepted =
            ["0 0 0 8 1", "26214000 0 303574 7 0", "1\t2  3\t\t4 0 \t", "007 0 0 1 1", "9999999999999999999 0 0 8 1"];
        for line in accepted {
            let fast = parse_disksim_fast(line.as_bytes()).expect(line);
            assert_eq!(Ok(fast.clone()), general(line), "{line}");
            assert_eq!(parse_line(line), Ok(Some(fast)));
        }
        let declined = [
            "0 0 0 8",
            "0 0 0 8 2",
            "0 0 0 8 01",
            "0 0 0 8 1x",
            "+1 0 0 8 1",
            "0 4294967296 0 8 1",
            "18446744073709551616 0 0 8 1",
            "00000000000000000001 0 0 8 1",
            "0 0 36028797018963968 8 1",
            "0 0 36028797018963967 1 1",
            "0\u{a0}0 0 8 1",
            "0 0 0 8 1\u{b}",
            "1\t2  3\t\t4 0 extra fields",
        ];
        for line in declined {
            assert!(parse_disksim_fast(line.as_bytes()).is_none(), "{line}");
            assert_eq!(parse_line(line), general(line).map(Some), "{line}");
        }
    }

    fn workload(reqs: &[(u64, Op, u32, u32)]) -> Workload {
        let requests = reqs
            .iter()
            .map(|&(t, op, lpn, pages)| Request { arrival: Nanos(t), op, lpn, pages, content: NO_CONTENT, stream: 0 })
            .collect();
        Workload { requests, ..Workload::default() }
    }

    #[test]
    fn writes_strict_lines_and_drops_trims() {
        let w = workload(&[(0, Op::Write, 3, 2), (1500, Op::Trim, 0, 1), (2000, Op::Read, 0, 1)]);
        let mut buf = Vec::new();
        let n = write_ssdsim(&w, 4096, &mut buf).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), "0 0 24 16 0\n2000 0 0 8 1\n");
        assert_eq!(n, SsdsimWritten { requests: 2, reads: 1, writes: 1, trims_dropped: 1 });
        // Read back: the same extents.
        let r = parse_line("0 0 24 16 0").unwrap().unwrap();
        assert_eq!((r.offset, r.size, r.op), (3 * 4096, 2 * 4096, Op::Write));
    }

    #[test]
    fn sector_addresses_must_fit_32_bits() {
        // 4 KiB pages: page 2^29 - 2 ends at sector 2^32 - 8; page 2^29 - 1 ends at 2^32, one too far.
        let last_ok = workload(&[(0, Op::Read, (1 << 29) - 2, 1)]);
        assert!(write_ssdsim(&last_ok, 4096, Vec::new()).is_ok());
        let w = workload(&[(0, Op::Write, 0, 1), (5, Op::Read, (1 << 29) - 1, 1)]);
        let mut buf = Vec::new();
        let e = write_ssdsim(&w, 4096, &mut buf).unwrap_err();
        assert!(matches!(e, SsdsimWriteError::SectorOverflow { request: 2, lsn: 4294967288, sectors: 8 }), "{e:?}");
        assert!(e.to_string().contains("--wrap"), "{e}");
        assert!(buf.is_empty(), "nothing written on error");
        assert!(matches!(write_ssdsim(&w, 1000, Vec::new()), Err(SsdsimWriteError::PageSize(1000))));
        // 512-byte pages keep sector precision.
        let mut buf = Vec::new();
        write_ssdsim(&workload(&[(7, Op::Write, 303574, 7)]), 512, &mut buf).unwrap();
        assert_eq!(buf, b"7 0 303574 7 0\n");
    }

    #[test]
    fn parses_ssdsim_line() {
        let r = parse_line("26214000 1 303574 7 1").unwrap().unwrap();
        assert_eq!(r.time, Nanos(26_214_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Read, 303574 * 512, 3584, 1));
        assert_eq!(parse_line("0 0 1 2 5").unwrap_err(), "field 5 (ope) is not 1 (read) or 0 (write): \"5\"");
    }
}
