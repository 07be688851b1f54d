//! Column-mapped CSV/TSV traces: any delimited text trace whose columns the
//! user names, in the spirit of libCacheSim's `csv` reader (`-t
//! "time-col=2,obj-id-col=5,obj-size-col=4,has-header=true"`), for the many
//! formats nobody wrote a parser for.
//!
//! The column map is part of the format name, so it works wherever a
//! format is accepted (`--format`, `trace convert`, `bench --trace`) and is
//! recorded in the workload's provenance:
//!
//! ```text
//! --format csv:time=1,op=3,offset=4,size=5,op-read=R,op-write=W,time-unit=us,offset-unit=sector,size-unit=byte,delimiter=tab,header=true
//! ```
//!
//! Keys (comma-separated `key=value`; columns numbered from 1):
//!
//! * required columns: `time` (alias `time-col`), `offset` (`offset-col`,
//!   `lba`, `obj-id-col`), `size` (`size-col`, `obj-size-col`), `op`
//!   (`op-col`); optional `volume` (`volume-col`), else every request is on
//!   volume 0;
//! * `op-read`, `op-write`, `op-trim`: the op column's spelling of each
//!   operation (compared ASCII case-insensitively, at most
//!   [`MAX_TOKEN`] bytes). Without any of them `R`/`read` and `W`/`write`
//!   are recognised; with any of them only the given spellings are. Any other
//!   value is a bad line;
//! * `time-unit`: `s` (default), `ms`, `us`, `ns`; decimals are read exactly
//!   (to the nanosecond);
//! * `offset-unit`, `size-unit`: `byte` (default), `sector` (512 bytes),
//!   `kib`, or a number of bytes (`4096`); integers only;
//! * `delimiter`: `comma` (default), `tab`, `space` (runs of blanks),
//!   `semicolon`, `pipe`, or one punctuation character other than `,`;
//! * `header`: `true` skips the first line (default `false`); a first line
//!   starting with `#` is a comment in every format and counts as that header.
//!
//! Unknown keys, repeated keys, missing required columns, two roles on one
//! column and unknown units are errors naming the key. The format is never
//! auto-detected.

use super::parse::{check_extent, quote, LineParser, Numbered};
use super::TraceRecord;
use crate::units::{Nanos, Op};
use std::fmt;

/// The longest op spelling a column map can hold.
pub const MAX_TOKEN: usize = 23;

/// An op spelling, held inline so that a [`CsvSpec`] (and so a
/// [`TraceFormat`](super::TraceFormat)) stays `Copy`.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Token {
    len: u8,
    bytes: [u8; MAX_TOKEN],
}

impl Token {
    fn new(s: &str) -> Option<Token> {
        if s.is_empty() || s.len() > MAX_TOKEN {
            return None;
        }
        let mut bytes = [0; MAX_TOKEN];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Some(Token { len: s.len() as u8, bytes })
    }

    pub fn as_str(&self) -> &str {
        // Built from a &str, so valid UTF-8.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }

    fn matches(&self, s: &str) -> bool {
        self.as_str().eq_ignore_ascii_case(s)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// The unit of the time column.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    S,
    Ms,
    Us,
    Ns,
}

impl TimeUnit {
    /// Nanoseconds per unit.
    pub fn ns(self) -> u64 {
        match self {
            TimeUnit::S => 1_000_000_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::Us => 1_000,
            TimeUnit::Ns => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Us => "us",
            TimeUnit::Ns => "ns",
        }
    }

    pub fn parse(s: &str) -> Option<TimeUnit> {
        Some(match s.to_ascii_lowercase().as_str() {
            "s" | "sec" | "seconds" => TimeUnit::S,
            "ms" | "msec" => TimeUnit::Ms,
            "us" | "usec" | "µs" => TimeUnit::Us,
            "ns" | "nsec" => TimeUnit::Ns,
            _ => return None,
        })
    }
}

/// How fields are separated.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Delimiter {
    /// One character (`,` `\t` `;` `|` ...); fields are trimmed.
    Char(u8),
    /// Runs of spaces and tabs.
    Whitespace,
}

/// A column map: where each field is (0-based here, 1-based in the text)
/// and its units. See the module documentation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CsvSpec {
    pub time: u16,
    pub offset: u16,
    pub size: u16,
    pub op: u16,
    pub volume: Option<u16>,
    pub time_unit: TimeUnit,
    /// Bytes per unit of the offset column.
    pub offset_unit: u32,
    /// Bytes per unit of the size column.
    pub size_unit: u32,
    pub delimiter: Delimiter,
    pub header: bool,
    pub op_read: Option<Token>,
    pub op_write: Option<Token>,
    pub op_trim: Option<Token>,
}

/// The keys a column map accepts (for messages).
const KEYS: &str = "time, offset, size, op, volume, op-read, op-write, op-trim, time-unit, offset-unit, \
                    size-unit, delimiter, header";

impl CsvSpec {
    /// The layout `bench --parsers` writes and the property tests use:
    /// `time_us,op,lba,bytes,volume` with a header and `R`/`W`.
    pub const EXAMPLE: CsvSpec = CsvSpec {
        time: 0,
        op: 1,
        offset: 2,
        size: 3,
        volume: Some(4),
        time_unit: TimeUnit::Us,
        offset_unit: 512,
        size_unit: 1,
        delimiter: Delimiter::Char(b','),
        header: true,
        op_read: None,
        op_write: None,
        op_trim: None,
    };

    /// Parses a column map (the text after `csv:`).
    pub fn parse(spec: &str) -> Result<CsvSpec, String> {
        let mut cols: [Option<u16>; 5] = [None; 5];
        const ROLES: [&str; 5] = ["time", "offset", "size", "op", "volume"];
        let mut time_unit = None;
        let (mut offset_unit, mut size_unit) = (None, None);
        let mut delimiter = None;
        let mut header = None;
        let mut ops: [Option<Token>; 3] = [None; 3];
        let mut seen: Vec<&str> = Vec::new();
        for item in spec.split(',').map(str::trim) {
            if item.is_empty() {
                continue;
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(format!("{} is not key=value (keys: {KEYS})", quote(item)));
            };
            let (key, value) = (key.trim(), value.trim());
            let canon = match key.to_ascii_lowercase().as_str() {
                "time" | "time-col" => "time",
                "offset" | "offset-col" | "lba" | "obj-id-col" => "offset",
                "size" | "size-col" | "obj-size-col" => "size",
                "op" | "op-col" => "op",
                "volume" | "volume-col" => "volume",
                "op-read" => "op-read",
                "op-write" => "op-write",
                "op-trim" => "op-trim",
                "time-unit" => "time-unit",
                "offset-unit" => "offset-unit",
                "size-unit" => "size-unit",
                "delimiter" => "delimiter",
                "header" | "has-header" => "header",
                _ => return Err(format!("unknown key {} (keys: {KEYS})", quote(key))),
            };
            if seen.contains(&canon) {
                return Err(format!("key `{canon}` given twice"));
            }
            seen.push(canon);
            if let Some(i) = ROLES.iter().position(|r| *r == canon) {
                let n: u16 = match value.parse() {
                    Ok(n) if n >= 1 => n,
                    _ => {
                        return Err(format!(
                            "`{canon}` = {} is not a column number (columns are numbered from 1)",
                            quote(value)
                        ))
                    }
                };
                if let Some(j) = cols.iter().position(|c| *c == Some(n - 1)) {
                    return Err(format!("column {n} is given as both `{}` and `{canon}`", ROLES[j]));
                }
                cols[i] = Some(n - 1);
                continue;
            }
            match canon {
                "op-read" | "op-write" | "op-trim" => {
                    let t = Token::new(value)
                        .ok_or_else(|| format!("`{canon}` = {} must be 1 to {MAX_TOKEN} bytes", quote(value)))?;
                    let i = ["op-read", "op-write", "op-trim"].iter().position(|k| *k == canon).unwrap_or(0);
                    if let Some(j) = ops.iter().position(|o| o.is_some_and(|o| o.matches(value))) {
                        let other = ["op-read", "op-write", "op-trim"][j];
                        return Err(format!("`{canon}` and `{other}` are both {}", quote(value)));
                    }
                    ops[i] = Some(t);
                }
                "time-unit" => {
                    time_unit = Some(
                        TimeUnit::parse(value)
                            .ok_or_else(|| format!("time-unit {} is not a time unit (s, ms, us, ns)", quote(value)))?,
                    )
                }
                "offset-unit" | "size-unit" => {
                    let u = parse_byte_unit(value).ok_or_else(|| {
                        format!(
                            "{canon} {} is not a unit (byte, sector = 512 bytes, kib, or a positive number of bytes)",
                            quote(value)
                        )
                    })?;
                    if canon == "offset-unit" {
                        offset_unit = Some(u);
                    } else {
                        size_unit = Some(u);
                    }
                }
                "delimiter" => {
                    delimiter = Some(match value.to_ascii_lowercase().as_str() {
                        "comma" => Delimiter::Char(b','),
                        "tab" | "\\t" => Delimiter::Char(b'\t'),
                        "space" | "whitespace" => Delimiter::Whitespace,
                        "semicolon" => Delimiter::Char(b';'),
                        "pipe" => Delimiter::Char(b'|'),
                        v if v.len() == 1 && v.as_bytes()[0].is_ascii_punctuation() && v != "=" => {
                            Delimiter::Char(v.as_bytes()[0])
                        }
                        _ => {
                            return Err(format!(
                                "delimiter {} is not comma, tab, space, semicolon, pipe or one punctuation character",
                                quote(value)
                            ))
                        }
                    })
                }
                _ => {
                    header = Some(match value.to_ascii_lowercase().as_str() {
                        "true" | "yes" | "1" => true,
                        "false" | "no" | "0" => false,
                        _ => return Err(format!("header {} is not true or false", quote(value))),
                    })
                }
            }
        }
        let missing: Vec<&str> = ROLES[..4].iter().zip(&cols).filter(|(_, c)| c.is_none()).map(|(r, _)| *r).collect();
        if !missing.is_empty() {
            return Err(format!(
                "missing required column{} {} (give 1-based column numbers, e.g. csv:time=1,op=2,offset=3,size=4)",
                if missing.len() > 1 { "s" } else { "" },
                missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        let col = |i: usize| cols[i].unwrap_or(0);
        Ok(CsvSpec {
            time: col(0),
            offset: col(1),
            size: col(2),
            op: col(3),
            volume: cols[4],
            time_unit: time_unit.unwrap_or(TimeUnit::S),
            offset_unit: offset_unit.unwrap_or(1),
            size_unit: size_unit.unwrap_or(1),
            delimiter: delimiter.unwrap_or(Delimiter::Char(b',')),
            header: header.unwrap_or(false),
            op_read: ops[0],
            op_write: ops[1],
            op_trim: ops[2],
        })
    }

    /// How many fields a line needs.
    fn min_fields(&self) -> usize {
        let m = self.time.max(self.offset).max(self.size).max(self.op).max(self.volume.unwrap_or(0));
        usize::from(m) + 1
    }

    /// The operation spelled `s`, if any.
    pub fn op_of(&self, s: &str) -> Option<Op> {
        if self.op_read.is_none() && self.op_write.is_none() && self.op_trim.is_none() {
            return match s.to_ascii_lowercase().as_str() {
                "r" | "read" => Some(Op::Read),
                "w" | "write" => Some(Op::Write),
                _ => None,
            };
        }
        let is = |t: Option<Token>| t.is_some_and(|t| t.matches(s));
        if is(self.op_read) {
            Some(Op::Read)
        } else if is(self.op_write) {
            Some(Op::Write)
        } else if is(self.op_trim) {
            Some(Op::Trim)
        } else {
            None
        }
    }

    fn ops_known(&self) -> String {
        if self.op_read.is_none() && self.op_write.is_none() && self.op_trim.is_none() {
            return "R/read or W/write (set op-read=, op-write=, op-trim= for other spellings)".into();
        }
        let mut v = Vec::new();
        for (t, what) in [(self.op_read, "read"), (self.op_write, "write"), (self.op_trim, "trim")] {
            if let Some(t) = t {
                v.push(format!("{} ({what})", t.as_str()));
            }
        }
        v.join(", ")
    }
}

fn parse_byte_unit(s: &str) -> Option<u32> {
    match s.to_ascii_lowercase().as_str() {
        "byte" | "bytes" | "b" => Some(1),
        "sector" | "sectors" => Some(512),
        "kib" | "k" | "kb" => Some(1024),
        v => v.parse::<u32>().ok().filter(|&n| n >= 1),
    }
}

fn unit_name(u: u32) -> String {
    match u {
        1 => "byte".into(),
        512 => "sector".into(),
        1024 => "kib".into(),
        n => n.to_string(),
    }
}

impl fmt::Display for CsvSpec {
    /// The canonical column map, which [`CsvSpec::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "time={},offset={},size={},op={}", self.time + 1, self.offset + 1, self.size + 1, self.op + 1)?;
        if let Some(v) = self.volume {
            write!(f, ",volume={}", v + 1)?;
        }
        for (t, k) in [(self.op_read, "op-read"), (self.op_write, "op-write"), (self.op_trim, "op-trim")] {
            if let Some(t) = t {
                write!(f, ",{k}={}", t.as_str())?;
            }
        }
        let delim = match self.delimiter {
            Delimiter::Whitespace => "space".to_string(),
            Delimiter::Char(b',') => "comma".into(),
            Delimiter::Char(b'\t') => "tab".into(),
            Delimiter::Char(b';') => "semicolon".into(),
            Delimiter::Char(b'|') => "pipe".into(),
            Delimiter::Char(c) => (c as char).to_string(),
        };
        write!(
            f,
            ",time-unit={},offset-unit={},size-unit={},delimiter={delim},header={}",
            self.time_unit.name(),
            unit_name(self.offset_unit),
            unit_name(self.size_unit),
            self.header
        )
    }
}

/// Parses a decimal number of `unit_ns`-nanosecond units exactly into
/// nanoseconds (digits past the ninth decimal truncated).
pub(crate) fn scaled_ns(s: &str, unit_ns: u64) -> Result<u64, &'static str> {
    let s = s.trim();
    if s.starts_with('-') && s.len() > 1 {
        return Err("is negative");
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err("is not a number");
    }
    let out_of_range = "is out of range (64-bit nanoseconds, about 584 years)";
    let whole: u64 = if int.is_empty() { 0 } else { int.parse().map_err(|_| out_of_range)? };
    let mut frac9: u64 = 0;
    for i in 0..9 {
        frac9 = frac9 * 10 + frac.as_bytes().get(i).map_or(0, |b| u64::from(b - b'0'));
    }
    let frac_ns = (u128::from(frac9) * u128::from(unit_ns) / 1_000_000_000) as u64;
    whole.checked_mul(unit_ns).and_then(|w| w.checked_add(frac_ns)).ok_or(out_of_range)
}

/// The line parser of one column map.
pub struct CsvParser {
    spec: CsvSpec,
    header_pending: bool,
}

impl CsvParser {
    pub fn new(spec: CsvSpec) -> Self {
        CsvParser { spec, header_pending: spec.header }
    }

    /// Parses one data line.
    pub fn parse_line(&self, line: &str) -> Result<TraceRecord, String> {
        let s = &self.spec;
        let items: Vec<&str> = match s.delimiter {
            Delimiter::Whitespace => line.split_whitespace().collect(),
            Delimiter::Char(c) => line.split(char::from(c)).map(str::trim).collect(),
        };
        let need = s.min_fields();
        if items.len() < need {
            return Err(format!(
                "expected at least {need} fields (time in {}, op in {}, offset in {}, size in {}{}), found {}",
                s.time + 1,
                s.op + 1,
                s.offset + 1,
                s.size + 1,
                s.volume.map_or(String::new(), |v| format!(", volume in {}", v + 1)),
                items.len()
            ));
        }
        let get = |i: u16| items[usize::from(i)];
        let bad = |i: u16, role: &str, what: &str| format!("field {} ({role}) {what}: {}", i + 1, quote(get(i)));
        let time = scaled_ns(get(s.time), s.time_unit.ns()).map_err(|w| bad(s.time, "time", w))?;
        let int = |i: u16, role: &str, unit: u32| -> Result<u64, String> {
            let t = get(i);
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(i, role, "is not an integer"));
            }
            t.parse::<u64>().ok().and_then(|v| v.checked_mul(u64::from(unit))).ok_or_else(|| {
                bad(i, role, &format!("is out of range (64-bit byte addresses in {}s)", unit_name(unit)))
            })
        };
        let offset = int(s.offset, "offset", s.offset_unit)?;
        let size = int(s.size, "size", s.size_unit)?;
        let op = s.op_of(get(s.op)).ok_or_else(|| bad(s.op, "op", &format!("is not {}", s.ops_known())))?;
        let volume = match s.volume {
            Some(v) => {
                let t = get(v);
                t.parse::<u32>()
                    .ok()
                    .filter(|_| t.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| bad(v, "volume", "is not an integer of at most 2^32-1 = 4294967295"))?
            }
            None => 0,
        };
        check_extent(offset, size)?;
        Ok(TraceRecord { time: Nanos(time), op, offset, size, volume, content: None, hint: None, process: 0 })
    }
}

impl LineParser for CsvParser {
    /// A `#` line before any data is the header `header=true` skips, so a
    /// header written as a comment does not make the first record vanish.
    fn comment(&mut self, _line: &str) -> Result<(), String> {
        self.header_pending = false;
        Ok(())
    }

    fn line(&mut self, line: &str, line_no: u64, out: &mut Vec<Numbered>) -> Result<(), String> {
        if self.header_pending {
            self.header_pending = false;
            return Ok(());
        }
        out.push((line_no, self.parse_line(line)?));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parses_and_round_trips() {
        let s = CsvSpec::parse(
            "time=1,op=3,offset=4,size=5,op-read=R,op-write=W,time-unit=us,offset-unit=sector,\
             size-unit=byte,delimiter=tab,header=true",
        )
        .unwrap();
        assert_eq!((s.time, s.op, s.offset, s.size, s.volume), (0, 2, 3, 4, None));
        assert_eq!((s.time_unit, s.offset_unit, s.size_unit), (TimeUnit::Us, 512, 1));
        assert_eq!((s.delimiter, s.header), (Delimiter::Char(b'\t'), true));
        assert_eq!(CsvSpec::parse(&s.to_string()).unwrap(), s);
        assert_eq!(CsvSpec::parse(&CsvSpec::EXAMPLE.to_string()).unwrap(), CsvSpec::EXAMPLE);
        // libCacheSim's key names.
        let l = CsvSpec::parse("time-col=2,obj-id-col=5,obj-size-col=4,op-col=3,has-header=true").unwrap();
        assert_eq!((l.time, l.offset, l.size, l.op, l.header), (1, 4, 3, 2, true));
    }

    #[test]
    fn bad_specs_say_why() {
        let e = |s: &str| CsvSpec::parse(s).unwrap_err();
        assert!(e("time=1,op=2,offset=3,size=4,colour=red").starts_with("unknown key \"colour\" (keys: time, "));
        assert_eq!(
            e("time=1,size=4"),
            "missing required columns `offset`, `op` (give 1-based column numbers, e.g. \
             csv:time=1,op=2,offset=3,size=4)"
        );
        assert!(e("time=0,op=2,offset=3,size=4").contains("numbered from 1"));
        assert_eq!(e("time=1,op=1,offset=3,size=4"), "column 1 is given as both `time` and `op`");
        assert!(e("time=1,op=2,offset=3,size=4,time-unit=hours").contains("is not a time unit (s, ms, us, ns)"));
        assert!(e("time=1,op=2,offset=3,size=4,size-unit=furlong").contains("size-unit \"furlong\" is not a unit"));
        assert!(e("time=1,op=2,offset=3,size=4,size-unit=0").contains("is not a unit"));
        assert!(e("time=1,time=2").contains("`time` given twice"));
        assert!(e("time").contains("is not key=value"));
        assert!(e("time=1,op=2,offset=3,size=4,delimiter=x").contains("delimiter \"x\""));
        assert!(e("time=1,op=2,offset=3,size=4,op-read=R,op-write=r").contains("are both"));
    }

    #[test]
    fn lines_parse_with_units() {
        let s = CsvSpec::parse("time=1,op=3,offset=4,size=5,op-read=Rd,op-write=Wr,op-trim=Tr,time-unit=ms,offset-unit=sector,delimiter=tab")
            .unwrap();
        let p = CsvParser::new(s);
        let r = p.parse_line("1.5\tx\tWr\t8\t4096").unwrap();
        assert_eq!((r.time, r.op, r.offset, r.size), (Nanos(1_500_000), Op::Write, 4096, 4096));
        assert_eq!(p.parse_line("0\tx\ttr\t0\t512").unwrap().op, Op::Trim);
        assert_eq!(
            p.parse_line("0\tx\tR\t0\t512").unwrap_err(),
            "field 3 (op) is not Rd (read), Wr (write), Tr (trim): \"R\""
        );
        assert!(p.parse_line("0\tx\tRd\t0").unwrap_err().starts_with("expected at least 5 fields (time in 1"));
        assert_eq!(p.parse_line("a\tx\tRd\t0\t1").unwrap_err(), "field 1 (time) is not a number: \"a\"");
        assert_eq!(p.parse_line("-1\tx\tRd\t0\t1").unwrap_err(), "field 1 (time) is negative: \"-1\"");
        assert!(p
            .parse_line("0\tx\tRd\t36028797018963968\t1")
            .unwrap_err()
            .contains("field 4 (offset) is out of range"));
        let w = CsvSpec::parse("time=1,op=2,offset=3,size=4,volume=5,delimiter=space,time-unit=ns").unwrap();
        let r = CsvParser::new(w).parse_line("7   read  100 200  3").unwrap();
        assert_eq!((r.time, r.op, r.offset, r.size, r.volume), (Nanos(7), Op::Read, 100, 200, 3));
        assert_eq!(scaled_ns("2.5", 1_000), Ok(2_500));
        assert_eq!(scaled_ns("18446744073709551615", 1), Ok(u64::MAX));
        assert!(scaled_ns("18446744073709551615", 10).is_err());
    }
}
