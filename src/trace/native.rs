//! dedupsim's native trace format: a plain-text, lossless carrier for
//! everything a [`TraceRecord`] holds, so that synthetic workloads, traces
//! built from files and converted third-party traces can be stored, diffed
//! and replayed. Specified in `docs/trace-formats.md`.
//!
//! ```text
//! # dedupsim-trace v1
//! # time_ns op offset_bytes size_bytes [volume [content]]
//! 0 W 0 8192 0 3f4fc2833a17fd2a3dacad7c0e8ca8ad,7
//! 1500 R 4096 4096
//! 2000 T 0 8192 1
//! ```
//!
//! * The first non-blank line must be the header `# dedupsim-trace v1`
//!   (required for auto-detection; a different version is an error). Other
//!   lines starting with `#` and blank lines are comments.
//! * Fields are separated by whitespace. TIME UNIT: `time_ns` is integer
//!   nanoseconds (any origin; the loader rebases to 0). `op` is `R` (read),
//!   `W` (write) or `T` (trim/discard), case-insensitive. `offset_bytes` and
//!   `size_bytes` are bytes (no alignment required).
//! * `volume` (optional, default 0) is a decimal `u32`.
//! * `content` (optional; requires the volume column, which removes any
//!   ambiguity between a volume and a single content id) lists one item per
//!   4 KiB page touched by `[offset, offset+size)`, comma-separated, in
//!   address order, or is `-` for none. An item is a 128-bit content hash
//!   written as exactly 32 hex digits, or a decimal integer `n < 2^64`, which
//!   denotes the 128-bit value `n` (so `7` and `000…007` are the same
//!   content). Decimal ids keep synthetic traces short.

use super::detect::{is_uint, Line};
use super::parse::{check_extent, pages_covered, quote, Fields, LineParser, Numbered, HASH_PAGE, QUOTE_CHARS};
use super::{PageHash, TraceHint, TraceRecord};
use crate::units::{Nanos, Op};
use crate::workload::{Hint, Workload, NO_CONTENT};
use std::io::{self, BufWriter, Write};

/// The header line that starts every native trace.
pub const HEADER: &str = "# dedupsim-trace v1";

/// What every native header starts with, whatever its version.
pub const HEADER_PREFIX: &str = "# dedupsim-trace";

const NAMES: &[&str] = &["time_ns", "op", "offset_bytes", "size_bytes", "volume", "content", "hint"];

/// The 128-bit content hash that decimal content id `id` denotes
/// (big-endian, high 64 bits zero).
pub fn content_id_hash(id: u64) -> PageHash {
    u128::from(id).to_be_bytes()
}

fn parse_item(item: &str) -> Option<PageHash> {
    if item.len() == 32 {
        let mut h = [0u8; 16];
        hex::decode_to_slice(item, &mut h).ok()?;
        Some(h)
    } else if !item.is_empty() && item.bytes().all(|b| b.is_ascii_digit()) {
        item.parse::<u64>().ok().map(content_id_hash)
    } else {
        None
    }
}

/// Parses one native data line.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    let f = Fields::ws(line, NAMES);
    f.require(4)?;
    if f.len() > 7 {
        return Err(format!("expected at most 7 fields ({}), found {}", NAMES.join(", "), f.len()));
    }
    let time = f.u64(0)?;
    let op = match f.str(1)? {
        "R" | "r" => Op::Read,
        "W" | "w" => Op::Write,
        "T" | "t" => Op::Trim,
        _ => return Err(f.bad(1, "is not R, W or T")),
    };
    let offset = f.u64(2)?;
    let size = f.u64(3)?;
    check_extent(offset, size)?;
    let volume = if f.len() >= 5 { f.u32(4)? } else { 0 };
    let content = match f.str(5) {
        Err(_) | Ok("-") => None,
        Ok(list) => {
            let mut hashes = Vec::new();
            for (k, item) in list.split(',').enumerate() {
                let h = parse_item(item).ok_or_else(|| {
                    format!(
                        "field 6 (content) item {} is neither 32 hex digits nor a decimal id: {}",
                        k + 1,
                        quote(item)
                    )
                })?;
                hashes.push(h);
            }
            let want = pages_covered(offset, size, HASH_PAGE);
            if hashes.len() as u64 != want {
                return Err(format!(
                    "field 6 (content) lists {} items but the request touches {want} 4 KiB pages",
                    hashes.len()
                ));
            }
            Some(hashes)
        }
    };
    let hint = match f.str(6) {
        Err(_) | Ok("-") => None,
        Ok(h) => Some(parse_hint(h)?),
    };
    if hint.is_some() && op != Op::Write {
        return Err("field 7 (hint) is given on a request that is not a write (hints apply to writes)".into());
    }
    Ok(Some(TraceRecord { time: Nanos(time), op, offset, size, volume, content, hint, process: 0 }))
}

/// Parses the `hint` column: `o` (overwrite) or `a:OFFSET` (append after
/// the page at byte offset OFFSET of the same volume).
fn parse_hint(h: &str) -> Result<TraceHint, String> {
    let bad = || format!("field 7 (hint) is not `-`, `o` or `a:OFFSET` (append after byte OFFSET): {}", quote(h));
    match h {
        "o" | "O" => Ok(TraceHint::Overwrite),
        _ => {
            let off = h.strip_prefix("a:").or_else(|| h.strip_prefix("A:")).ok_or_else(bad)?;
            if off.is_empty() || !off.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            off.parse::<u64>().map(|after| TraceHint::Append { after }).map_err(|_| {
                format!(
                    "field 7 (hint) is out of range: the append offset must be at most 2^64-1 = {} bytes: {}",
                    u64::MAX,
                    quote(h)
                )
            })
        }
    }
}

/// Writes the ` HINT` column of a record that has a hint.
fn write_hint(out: &mut impl Write, h: TraceHint) -> io::Result<()> {
    match h {
        TraceHint::Overwrite => write!(out, " o"),
        TraceHint::Append { after } => write!(out, " a:{after}"),
    }
}

/// Line parser that validates the version header and keeps the
/// provenance line the writer puts after it (`# NAME: SOURCE`, e.g.
/// `# mail: synthetic (Table II-matched)`), so `trace stats` and run reports
/// can say where a native trace came from.
#[derive(Default)]
pub(crate) struct NativeParser {
    /// The header has been seen and no data line yet.
    in_header: bool,
    description: Option<String>,
}

impl LineParser for NativeParser {
    fn line(&mut self, line: &str, line_no: u64, out: &mut Vec<Numbered>) -> Result<(), String> {
        self.in_header = false;
        if let Some(r) = parse_line(line)? {
            out.push((line_no, r));
        }
        Ok(())
    }

    fn comment(&mut self, line: &str) -> Result<(), String> {
        if let Some(rest) = line.strip_prefix(HEADER_PREFIX) {
            let version = rest.trim();
            if version != "v1" {
                return Err(format!("unsupported native trace version {} (this build reads v1)", quote(version)));
            }
            self.in_header = true;
        } else if self.in_header && self.description.is_none() {
            let text = line.trim_start_matches('#').trim();
            if !text.starts_with("time_ns") && !text.is_empty() {
                // A provenance line is short; keep a long one's start only.
                let keep = text.char_indices().nth(4 * QUOTE_CHARS).map_or(text.len(), |(i, _)| i);
                self.description = Some(text[..keep].to_string());
            }
        }
        Ok(())
    }

    fn description(&self) -> Option<String> {
        self.description.clone()
    }
}

fn op_letter(op: Op) -> char {
    match op {
        Op::Read => 'R',
        Op::Write => 'W',
        Op::Trim => 'T',
    }
}

fn write_item(out: &mut impl Write, h: &PageHash) -> io::Result<()> {
    if h[..8].iter().all(|&b| b == 0) {
        let mut low = [0u8; 8];
        low.copy_from_slice(&h[8..]);
        write!(out, "{}", u64::from_be_bytes(low))
    } else {
        write!(out, "{}", hex::encode(h))
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Writes records as a native trace (header included). Hashes whose high
/// 64 bits are zero are written as decimal ids. Fails with `InvalidInput`
/// (before writing the offending line) if a record's content does not have
/// one hash per 4 KiB page touched or its extent overflows, so the output
/// always reads back.
pub fn write_native<'a, I, W>(records: I, out: W) -> io::Result<()>
where
    I: IntoIterator<Item = &'a TraceRecord>,
    W: Write,
{
    let mut out = BufWriter::new(out);
    writeln!(out, "{HEADER}")?;
    writeln!(out, "# time_ns op offset_bytes size_bytes [volume [content]]")?;
    for (i, r) in records.into_iter().enumerate() {
        check_extent(r.offset, r.size).map_err(|e| invalid(format!("record {i}: {e}")))?;
        write!(out, "{} {} {} {}", r.time.0, op_letter(r.op), r.offset, r.size)?;
        match &r.content {
            Some(c) => {
                let want = pages_covered(r.offset, r.size, HASH_PAGE);
                if c.len() as u64 != want || c.is_empty() {
                    return Err(invalid(format!("record {i}: {} content hashes for {want} 4 KiB pages", c.len())));
                }
                write!(out, " {} ", r.volume)?;
                for (k, h) in c.iter().enumerate() {
                    if k > 0 {
                        out.write_all(b",")?;
                    }
                    write_item(&mut out, h)?;
                }
            }
            None if r.volume != 0 || r.hint.is_some() => {
                write!(out, " {}", r.volume)?;
                if r.hint.is_some() {
                    write!(out, " -")?;
                }
            }
            None => {}
        }
        if let Some(h) = r.hint {
            if r.op != Op::Write {
                return Err(invalid(format!("record {i}: a hint on a request that is not a write")));
            }
            write_hint(&mut out, h)?;
        }
        writeln!(out)?;
    }
    out.flush()
}

/// Writes a page-aligned [`Workload`] as a native trace, e.g. to save a
/// synthetic workload. Requests become byte ranges `lpn * page_size`,
/// `pages * page_size` on volume 0, and write content ids are written as
/// decimal ids. With `page_size` = 4096 reloading at 4 KiB pages gives back
/// the same requests and the same content equalities (ids are re-interned in
/// order of first appearance). For larger pages each 4 KiB sub-page of a
/// page with id `c` gets the 128-bit value `(c + 1) << 64 | sub-page index`,
/// so reloading at the same page size again yields one content per id.
/// Content requires `page_size` to be a multiple of 4096 (`InvalidInput`
/// otherwise).
pub fn write_native_workload<W: Write>(w: &Workload, page_size: u32, out: W) -> io::Result<()> {
    let ps = u64::from(page_size);
    if ps == 0 {
        return Err(invalid("page size must be positive".into()));
    }
    let with_content = w.requests.iter().any(|r| r.content != NO_CONTENT);
    if with_content && ps % HASH_PAGE != 0 {
        return Err(invalid(format!("page size {page_size} is not a multiple of 4096; content cannot be written")));
    }
    let k = ps / HASH_PAGE;
    let mut out = BufWriter::new(out);
    writeln!(out, "{HEADER}")?;
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    writeln!(out, "# {}: {}", one_line(&w.provenance.name), one_line(&w.provenance.source))?;
    writeln!(out, "# time_ns op offset_bytes size_bytes [volume [content]]")?;
    for (i, r) in w.requests.iter().enumerate() {
        let offset = u64::from(r.lpn) * ps;
        let size = u64::from(r.pages) * ps;
        write!(out, "{} {} {} {}", r.arrival.0, op_letter(r.op), offset, size)?;
        if r.content != NO_CONTENT {
            let start = r.content as usize;
            let ids = w
                .contents
                .get(start..start + r.pages as usize)
                .ok_or_else(|| invalid("request content index out of range".into()))?;
            out.write_all(b" 0 ")?;
            for (j, id) in ids.iter().enumerate() {
                for sub in 0..k {
                    if j > 0 || sub > 0 {
                        out.write_all(b",")?;
                    }
                    if k == 1 {
                        write!(out, "{}", id.0)?;
                    } else {
                        let v = (u128::from(id.0) + 1) << 64 | u128::from(sub);
                        write!(out, "{}", hex::encode(v.to_be_bytes()))?;
                    }
                }
            }
        }
        if let Some(h) = w.hint_of(i) {
            if r.content == NO_CONTENT {
                out.write_all(b" 0 -")?;
            }
            let h = match h {
                Hint::Overwrite => TraceHint::Overwrite,
                Hint::Append { after } => TraceHint::Append { after: u64::from(after) * ps },
            };
            write_hint(&mut out, h)?;
        }
        writeln!(out)?;
    }
    out.flush()
}

/// Detection without the header: `time op offset size [volume [hashes]]`
/// with the op R/W/T (rank 34).
pub(super) fn is_line(l: &Line) -> bool {
    let w = &l.words;
    (4..=6).contains(&w.len())
        && is_uint(w[0])
        && matches!(w[1], "R" | "W" | "T" | "r" | "w" | "t")
        && is_uint(w[2])
        && is_uint(w[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `hint` column: `-`, `o`, `a:OFFSET`; only on writes; a bad one
    /// names the field.
    #[test]
    fn parses_hints() {
        let r = parse_line("5 W 0 4096 0 - a:8192").unwrap().unwrap();
        assert_eq!(r.hint, Some(TraceHint::Append { after: 8192 }));
        let r = parse_line("5 W 0 4096 0 7 o").unwrap().unwrap();
        assert_eq!(r.hint, Some(TraceHint::Overwrite));
        assert_eq!(parse_line("5 W 0 4096 0 7 -").unwrap().unwrap().hint, None);
        for (line, want) in [
            ("5 R 0 4096 0 - o", "not a write"),
            ("5 W 0 4096 0 - a:", "field 7 (hint)"),
            ("5 W 0 4096 0 - a:-3", "field 7 (hint)"),
            ("5 W 0 4096 0 - x", "field 7 (hint)"),
            ("5 W 0 4096 0 - a:99999999999999999999999", "field 7 (hint)"),
            ("5 W 0 4096 0 - o extra", "at most 7 fields"),
        ] {
            let e = parse_line(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn parses_native_lines() {
        let h = "3f4fc2833a17fd2a3dacad7c0e8ca8ad";
        let r = parse_line(&format!("5 W 0 8192 2 {h},7")).unwrap().unwrap();
        assert_eq!((r.op, r.volume), (Op::Write, 2));
        let c = r.content.unwrap();
        assert_eq!(hex::encode(c[0]), h);
        assert_eq!(c[1], content_id_hash(7));
        let r = parse_line("5 t 4096 4096").unwrap().unwrap();
        assert_eq!((r.op, r.volume, r.content), (Op::Trim, 0, None));
        assert!(parse_line("5 W 0 8192 0 1").unwrap_err().contains("touches 2"));
        assert!(parse_line("5 W 0 4096 0 xyz").unwrap_err().contains("item 1"));
        assert!(parse_line("5 X 0 4096").unwrap_err().contains("field 2 (op)"));
        let mut p = NativeParser::default();
        assert!(p.comment("# dedupsim-trace v2").is_err());
        assert!(p.comment("# dedupsim-trace v1").is_ok());
        p.comment("# mail: synthetic (Table II-matched)").unwrap();
        p.comment("# time_ns op offset_bytes size_bytes [volume [content]]").unwrap();
        p.comment("# a later remark").unwrap();
        assert_eq!(p.description().as_deref(), Some("mail: synthetic (Table II-matched)"));
    }

    #[test]
    fn writer_round_trips() {
        let recs = vec![
            TraceRecord {
                time: Nanos(10),
                op: Op::Write,
                offset: 512,
                size: 4096,
                volume: 3,
                content: Some(vec![[0xab; 16], content_id_hash(42)]),
                hint: None,
                process: 0,
            },
            TraceRecord {
                time: Nanos(20),
                op: Op::Read,
                offset: 0,
                size: 1,
                volume: 0,
                content: None,
                hint: None,
                process: 0,
            },
        ];
        let mut buf = Vec::new();
        write_native(&recs, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.starts_with(HEADER));
        let back: Vec<TraceRecord> =
            text.lines().filter(|l| !l.starts_with('#')).map(|l| parse_line(l).unwrap().unwrap()).collect();
        assert_eq!(back, recs);
        let bad = TraceRecord { content: Some(vec![]), ..recs[1].clone() };
        assert!(write_native([&bad], Vec::new()).is_err());
    }
}
