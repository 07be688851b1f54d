//! Shared parsing machinery: line reading, field access with precise error
//! messages, the per-format line-parser trait, and content-hash helpers.
//!
//! Parsers never panic on input: every field access is checked and every
//! unit conversion uses checked arithmetic, and failures come back as a
//! human-readable reason (`field 6 (Size) is not an integer: "12x"`) that the
//! driver prefixes with `file:line:`.

use super::{PageHash, TraceRecord};
use crate::units::{Nanos, Op, SECTOR};
use md5::{Digest, Md5};
use std::borrow::Cow;
use std::io::{self, BufRead};

/// Granularity of [`PageHash`]es in [`TraceRecord::content`]: one per 4 KiB page.
pub const HASH_PAGE: u64 = 4096;

/// A record with the 1-based line number it starts on (for error messages).
pub type Numbered = (u64, TraceRecord);

/// A format's line parser. Stateless formats map one line to at most one
/// record; FIU buffers records to merge them into requests.
pub(crate) trait LineParser {
    /// Parses one non-blank, non-comment line (already trimmed), appending
    /// zero or more finished records to `out`.
    fn line(&mut self, line: &str, line_no: u64, out: &mut Vec<Numbered>) -> Result<(), String>;

    /// Sees comment lines (starting with `#`); the native format checks its
    /// version header here.
    fn comment(&mut self, _line: &str) -> Result<(), String> {
        Ok(())
    }

    /// Flushes buffered state at end of input.
    fn finish(&mut self, _out: &mut Vec<Numbered>) {}

    /// What the parser noticed that the user should know (after
    /// [`finish`](Self::finish)).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the file says about its own origin, if the format records it
    /// (the native format's `# NAME: SOURCE` line).
    fn description(&self) -> Option<String> {
        None
    }
}

/// Adapter for formats whose lines are independent.
pub(crate) struct Stateless(pub fn(&str) -> Result<Option<TraceRecord>, String>);

impl LineParser for Stateless {
    fn line(&mut self, line: &str, line_no: u64, out: &mut Vec<Numbered>) -> Result<(), String> {
        if let Some(r) = (self.0)(line)? {
            out.push((line_no, r));
        }
        Ok(())
    }
}

/// The longest line (in bytes, line terminator excluded) the third-party
/// formats may have. Their lines are short (FIU homes, the longest, about
/// 300 bytes), so a longer "line" means the input is not a text trace (a
/// binary file, `/dev/zero`); reading stops with an error instead of
/// buffering it without bound.
pub const MAX_LINE: usize = 64 << 10;

/// The longest line of a native trace: its lines carry one content item
/// (up to 33 bytes) per 4 KiB page, so a 1 GiB line is a ~128 GiB request.
pub const MAX_NATIVE_LINE: usize = 1 << 30;

/// How many characters of a bad field or line a message quotes.
pub const QUOTE_CHARS: usize = 80;

/// `s` in double quotes for a message, cut to `QUOTE_CHARS` characters
/// (then marked with `...` and the full length), so that a huge field never
/// becomes a huge message.
pub fn quote(s: &str) -> String {
    match s.char_indices().nth(QUOTE_CHARS) {
        None => format!("{s:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes)", &s[..cut], s.len()),
    }
}

/// Why [`LineReader::next_line`] failed.
#[derive(Debug)]
pub(crate) enum LineError {
    Io(io::Error),
    /// Line `line` exceeds `limit` bytes.
    TooLong {
        line: u64,
        limit: usize,
    },
}

impl From<io::Error> for LineError {
    fn from(e: io::Error) -> Self {
        LineError::Io(e)
    }
}

/// The UTF-8 byte-order mark some editors put at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads a trace line by line, counting lines. Invalid UTF-8 is replaced
/// (FIU process names are arbitrary bytes) rather than failing the read; a
/// CR before the LF is dropped, and so is a UTF-8 byte-order mark at the
/// start of the input. A line longer than the limit ([`MAX_LINE`] unless
/// [`set_limit`](Self::set_limit) says otherwise) is an error, found
/// after buffering at most the limit plus one read buffer.
pub(crate) struct LineReader<R> {
    reader: R,
    /// A line that did not lie whole in the reader's buffer, copied.
    buf: Vec<u8>,
    /// Bytes of the reader's buffer the line last returned in place
    /// occupies: consumed on the next call, so that the line can borrow them.
    pending: usize,
    line_no: u64,
    limit: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(reader: R) -> Self {
        LineReader { reader, buf: Vec::with_capacity(256), pending: 0, line_no: 0, limit: MAX_LINE }
    }

    /// Sets the longest line accepted from now on.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// Whether a line body (terminator excluded, a trailing CR not counted)
    /// exceeds `limit`.
    fn too_long(body: &[u8], limit: usize) -> bool {
        body.len() - usize::from(body.last() == Some(&b'\r')) > limit
    }

    /// Reads up to and including the next LF (or to end of input) into
    /// `buf`, failing once the line exceeds the limit. Returns whether
    /// anything was read.
    fn read_bounded(&mut self) -> Result<bool, LineError> {
        self.buf.clear();
        loop {
            let chunk = fill(&mut self.reader)?;
            if chunk.is_empty() {
                return Ok(!self.buf.is_empty());
            }
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            self.buf.extend_from_slice(&chunk[..take]);
            self.reader.consume(take);
            // The terminator (LF or CR LF) does not count against the limit.
            let body = if done { &self.buf[..self.buf.len() - 1] } else { &self.buf[..] };
            if Self::too_long(body, self.limit) {
                return Err(LineError::TooLong { line: self.line_no + 1, limit: self.limit });
            }
            if done {
                return Ok(true);
            }
        }
    }

    /// The next line's bytes (terminator, trailing CRs and a leading
    /// byte-order mark removed) and its 1-based number, or `None` at end of
    /// input. A line that lies whole in the reader's buffer (nearly every
    /// line) is returned in place, without a copy; it is consumed on the
    /// next call.
    pub fn next_bytes(&mut self) -> Result<Option<(u64, &[u8])>, LineError> {
        self.reader.consume(std::mem::take(&mut self.pending));
        // Where the line ends if it lies whole in the buffer, and whether it
        // is too long then. (The reader is often a `dyn BufRead`: each call
        // costs, so the buffer is looked at once here and once to lend it.)
        let in_place = loop {
            match self.reader.fill_buf() {
                Ok(chunk) => break memchr::memchr(b'\n', chunk).map(|i| (i, Self::too_long(&chunk[..i], self.limit))),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let mut line: &[u8] = match in_place {
            Some((_, true)) => return Err(LineError::TooLong { line: self.line_no + 1, limit: self.limit }),
            Some((i, false)) => {
                self.pending = i + 1;
                self.line_no += 1;
                &self.reader.fill_buf()?[..i]
            }
            None => {
                if !self.read_bounded()? {
                    return Ok(None);
                }
                self.line_no += 1;
                &self.buf
            }
        };
        while let Some((b'\n' | b'\r', rest)) = line.split_last() {
            line = rest;
        }
        if self.line_no == 1 {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        Ok(Some((self.line_no, line)))
    }

    /// [`next_bytes`](Self::next_bytes) as text: a valid UTF-8 line is used
    /// in place; only a line with invalid bytes is copied, with replacement
    /// characters.
    pub fn next_line(&mut self) -> Result<Option<(u64, Cow<'_, str>)>, LineError> {
        Ok(self.next_bytes()?.map(|(n, b)| (n, text(b))))
    }
}

/// A line's bytes as text, invalid UTF-8 replaced. Valid lines (nearly all)
/// are checked with `str::from_utf8`, several times faster than
/// `String::from_utf8_lossy`'s chunk iterator on valid input.
pub(crate) fn text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The reader's buffer, refilled if empty (retrying interrupted reads).
fn fill<R: BufRead>(reader: &mut R) -> io::Result<&[u8]> {
    loop {
        match reader.fill_buf() {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    reader.fill_buf()
}

/// The fields of one line plus their names, for error messages.
pub(crate) struct Fields<'a> {
    items: Vec<&'a str>,
    names: &'static [&'static str],
}

impl<'a> Fields<'a> {
    /// Splits a CSV line at commas (no quoting: none of the supported CSV
    /// formats quote fields) and trims each field.
    pub fn csv(line: &'a str, names: &'static [&'static str]) -> Self {
        Fields { items: line.split(',').map(str::trim).collect(), names }
    }

    /// Splits a line at runs of whitespace.
    pub fn ws(line: &'a str, names: &'static [&'static str]) -> Self {
        Fields { items: line.split_whitespace().collect(), names }
    }

    /// Fields already split by the caller.
    pub fn from_items(items: Vec<&'a str>, names: &'static [&'static str]) -> Self {
        Fields { items, names }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Fails unless there are at least `min` fields.
    pub fn require(&self, min: usize) -> Result<(), String> {
        if self.items.len() >= min {
            Ok(())
        } else {
            Err(format!("expected at least {min} fields ({}), found {}", self.names.join(", "), self.items.len()))
        }
    }

    /// Fails when there are more than `max` fields: a field the format
    /// does not have would otherwise be dropped without a word.
    pub fn at_most(&self, max: usize) -> Result<(), String> {
        if self.items.len() <= max {
            Ok(())
        } else {
            Err(format!(
                "expected at most {max} fields ({}), found {}: field {} is {}; is this the right --format?",
                self.names.join(", "),
                self.items.len(),
                max + 1,
                quote(self.items[max])
            ))
        }
    }

    fn name(&self, i: usize) -> &'static str {
        self.names.get(i).copied().unwrap_or("extra")
    }

    /// A reason string for field `i` (0-based; printed 1-based).
    pub fn bad(&self, i: usize, what: &str) -> String {
        format!("field {} ({}) {what}: {}", i + 1, self.name(i), quote(self.items.get(i).copied().unwrap_or("")))
    }

    pub fn str(&self, i: usize) -> Result<&'a str, String> {
        self.items.get(i).copied().ok_or_else(|| format!("missing field {} ({})", i + 1, self.name(i)))
    }

    pub fn u64(&self, i: usize) -> Result<u64, String> {
        let s = self.str(i)?;
        if !s.bytes().all(|b| b.is_ascii_digit()) || s.is_empty() {
            return Err(self.bad(i, "is not an integer"));
        }
        s.parse::<u64>().map_err(|_| self.bad(i, "is out of range (at most 2^64-1 = 18446744073709551615)"))
    }

    pub fn u32(&self, i: usize) -> Result<u32, String> {
        u32::try_from(self.u64(i)?).map_err(|_| self.bad(i, "is out of range (at most 2^32-1 = 4294967295)"))
    }

    /// An integer count of 512-byte sectors, converted to bytes.
    pub fn sectors_as_bytes(&self, i: usize) -> Result<u64, String> {
        self.u64(i)?.checked_mul(SECTOR).ok_or_else(|| {
            self.bad(i, &format!("is out of range (at most {} sectors: 64-bit byte addresses)", u64::MAX / SECTOR))
        })
    }

    /// A non-negative decimal number of seconds, converted to nanoseconds.
    pub fn seconds_as_ns(&self, i: usize) -> Result<u64, String> {
        parse_seconds(self.str(i)?).map_err(|e| {
            self.bad(
                i,
                match e {
                    SecondsError::NotANumber => "is not a number of seconds",
                    SecondsError::Negative => "is negative",
                    SecondsError::OutOfRange => {
                        "is out of range (at most 18446744073.709551615 s: 64-bit nanoseconds, about 584 years)"
                    }
                },
            )
        })
    }
}

/// Why a number of seconds did not parse.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SecondsError {
    NotANumber,
    Negative,
    /// More nanoseconds than a `u64` holds.
    OutOfRange,
}

/// Parses a decimal number of seconds exactly into nanoseconds (digits past
/// the ninth decimal are truncated). Going through `f64` would lose ~200 ns
/// at Unix-epoch magnitudes, so plain decimals are parsed digit by digit;
/// only exponent notation falls back to `f64`. `None` for anything but a
/// non-negative number of at most 2^64-1 ns.
pub fn parse_seconds_ns(s: &str) -> Option<u64> {
    parse_seconds(s).ok()
}

/// [`parse_seconds_ns`] saying why it failed.
pub(crate) fn parse_seconds(s: &str) -> Result<u64, SecondsError> {
    use SecondsError::*;
    let s = s.trim();
    if s.is_empty() {
        return Err(NotANumber);
    }
    if let Some(rest) = s.strip_prefix('-') {
        return Err(if parse_seconds(rest) == Err(NotANumber) { NotANumber } else { Negative });
    }
    if s.contains(['e', 'E']) {
        let v: f64 = s.parse().map_err(|_| NotANumber)?;
        if !v.is_finite() || v < 0.0 {
            return Err(NotANumber);
        }
        let ns = (v * 1e9).round();
        return if ns < u64::MAX as f64 { Ok(ns as u64) } else { Err(OutOfRange) };
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(NotANumber);
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NotANumber);
    }
    let whole: u64 = if int.is_empty() { 0 } else { int.parse().map_err(|_| OutOfRange)? };
    let mut frac_ns: u64 = 0;
    for i in 0..9 {
        let d = frac.as_bytes().get(i).map_or(0, |b| u64::from(b - b'0'));
        frac_ns = frac_ns * 10 + d;
    }
    whole.checked_mul(1_000_000_000).and_then(|w| w.checked_add(frac_ns)).ok_or(OutOfRange)
}

/// Checks that `offset + size` fits in 64 bits (the loader relies on it).
pub(crate) fn check_extent(offset: u64, size: u64) -> Result<(), String> {
    offset
        .checked_add(size)
        .map(|_| ())
        .ok_or_else(|| format!("offset {offset} + size {size} overflows a 64-bit byte address"))
}

/// A record without content or hint, after checking that its extent fits
/// a 64-bit byte address: the common tail of the line parsers.
#[inline]
pub(crate) fn plain_record(time: u64, op: Op, offset: u64, size: u64, volume: u32) -> Result<TraceRecord, String> {
    check_extent(offset, size)?;
    Ok(TraceRecord { time: Nanos(time), op, offset, size, volume, content: None, hint: None, process: 0 })
}

/// Number of `page`-byte pages the byte range `[offset, offset+size)`
/// touches (0 for an empty range). The caller guarantees no overflow.
/// Page sizes are powers of two in practice (the loader validates it):
/// those divide by shifting, since the loader calls this per request.
#[inline]
pub fn pages_covered(offset: u64, size: u64, page: u64) -> u64 {
    if size == 0 {
        0
    } else if page.is_power_of_two() {
        let shift = page.trailing_zeros();
        ((offset + size - 1) >> shift) - (offset >> shift) + 1
    } else {
        (offset + size - 1) / page - offset / page + 1
    }
}

/// MD5 of the concatenation of `parts`.
pub(crate) fn md5_of(parts: &[&[u8]]) -> PageHash {
    let mut h = Md5::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// Converts digests of consecutive `chunk`-byte pieces of the request
/// `[offset, offset+size)` (piece `i` starts at `offset + i*chunk`; the last
/// may be clipped by the request end) into one hash per 4 KiB page covered.
///
/// Rules, chosen so that the common cases keep the trace's own digest:
/// * a page that is exactly one piece (4 KiB digests, aligned): that digest;
/// * a page exactly tiled by whole pieces (FIU homes: 8 sector digests):
///   MD5 of the concatenated digests in address order;
/// * anything else (unaligned or partial coverage): MD5 of the tag
///   `dedupsim-partial` followed by, per piece in address order, its offset in
///   the page, its length and its offset within its chunk (u32 LE each) and
///   its digest. Two pages then compare equal only if they were assembled
///   from the same pieces at the same positions.
pub(crate) fn chunk_digests_to_pages(offset: u64, size: u64, chunk: u64, digests: &[PageHash]) -> Vec<PageHash> {
    let end = offset + size;
    let n = pages_covered(offset, size, HASH_PAGE);
    let first = offset / HASH_PAGE;
    let mut out = Vec::with_capacity(n as usize);
    for p in first..first + n {
        let (ps, pe) = (p * HASH_PAGE, (p + 1) * HASH_PAGE);
        // Pieces overlapping [ps, pe).
        let lo = ps.max(offset);
        let hi = pe.min(end);
        let i0 = (lo - offset) / chunk;
        let i1 = (hi - 1 - offset) / chunk;
        let mut pieces = Vec::new();
        for i in i0..=i1 {
            let Some(d) = digests.get(i as usize) else {
                break;
            };
            let cs = offset + i * chunk;
            let ce = (cs + chunk).min(end);
            let (s, e) = (cs.max(ps), ce.min(pe));
            pieces.push((s, e, cs, cs + chunk, d));
        }
        let whole = |&(s, e, cs, ce, _): &(u64, u64, u64, u64, &PageHash)| s == cs && e == ce;
        let tiles = !pieces.is_empty()
            && pieces.iter().all(whole)
            && pieces.first().map(|x| x.0) == Some(ps)
            && pieces.last().map(|x| x.1) == Some(pe);
        let hash = if tiles && pieces.len() == 1 {
            *pieces[0].4
        } else if tiles {
            let parts: Vec<&[u8]> = pieces.iter().map(|x| &x.4[..]).collect();
            md5_of(&parts)
        } else {
            let mut h = Md5::new();
            h.update(b"dedupsim-partial");
            for &(s, e, cs, _, d) in &pieces {
                h.update(((s - ps) as u32).to_le_bytes());
                h.update(((e - s) as u32).to_le_bytes());
                h.update(((s - cs) as u32).to_le_bytes());
                h.update(d);
            }
            h.finalize().into()
        };
        out.push(hash);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_parse_exactly() {
        assert_eq!(parse_seconds_ns("1455591804.310701000"), Some(1_455_591_804_310_701_000));
        assert_eq!(parse_seconds_ns("0.5"), Some(500_000_000));
        assert_eq!(parse_seconds_ns(".25"), Some(250_000_000));
        assert_eq!(parse_seconds_ns("3"), Some(3_000_000_000));
        assert_eq!(parse_seconds_ns("1.0000000019"), Some(1_000_000_001));
        assert_eq!(parse_seconds_ns("1e-3"), Some(1_000_000));
        assert_eq!(parse_seconds_ns("-1"), None);
        assert_eq!(parse_seconds_ns("1.2.3"), None);
        assert_eq!(parse_seconds_ns("."), None);
        assert_eq!(parse_seconds_ns("abc"), None);
        assert_eq!(parse_seconds_ns("99999999999999999999"), None);
        assert_eq!(parse_seconds_ns("18446744073.709551615"), Some(u64::MAX));
        assert_eq!(parse_seconds("18446744073.709551616"), Err(SecondsError::OutOfRange));
        assert_eq!(parse_seconds("99999999999"), Err(SecondsError::OutOfRange));
        assert_eq!(parse_seconds("1e300"), Err(SecondsError::OutOfRange));
        assert_eq!(parse_seconds("-1.5"), Err(SecondsError::Negative));
        assert_eq!(parse_seconds("-x"), Err(SecondsError::NotANumber));
        assert_eq!(parse_seconds("1e"), Err(SecondsError::NotANumber));
    }

    #[test]
    fn overflowing_numbers_say_out_of_range_with_the_limit() {
        let f = Fields::csv("99999999999,1e300,-2,18446744073709551616,4294967296,36028797018963968", &["A"; 6]);
        let e = f.seconds_as_ns(0).unwrap_err();
        assert_eq!(
            e,
            "field 1 (A) is out of range (at most 18446744073.709551615 s: 64-bit nanoseconds, \
             about 584 years): \"99999999999\""
        );
        assert!(f.seconds_as_ns(1).unwrap_err().starts_with("field 2 (A) is out of range (at most 18446744073"));
        assert!(f.seconds_as_ns(2).unwrap_err().starts_with("field 3 (A) is negative"));
        assert!(f.u64(3).unwrap_err().starts_with("field 4 (A) is out of range (at most 2^64-1"));
        assert!(f.u32(4).unwrap_err().starts_with("field 5 (A) is out of range (at most 2^32-1"));
        assert!(f
            .sectors_as_bytes(5)
            .unwrap_err()
            .starts_with("field 6 (A) is out of range (at most 36028797018963967 sectors"));
    }

    #[test]
    fn field_errors_name_field() {
        let f = Fields::csv("1,2,x", &["A", "B", "C"]);
        assert_eq!(f.u64(2).unwrap_err(), "field 3 (C) is not an integer: \"x\"");
        assert!(f.str(5).unwrap_err().contains("missing field 6"));
        assert!(f.require(4).unwrap_err().contains("found 3"));
    }

    fn read_all(input: &[u8], limit: usize) -> Result<Vec<String>, LineError> {
        let mut r = LineReader::new(input);
        r.set_limit(limit);
        let mut out = Vec::new();
        while let Some((_, t)) = r.next_line()? {
            out.push(t.into_owned());
        }
        Ok(out)
    }

    #[test]
    fn line_length_is_bounded() {
        // Exactly at the limit, with LF, CR LF or end of input: accepted.
        assert_eq!(read_all(b"abcd\nefgh\r\nijkl", 4).unwrap(), ["abcd", "efgh", "ijkl"]);
        // One byte over: an error naming the line, wherever the break is.
        for input in [&b"abcd\nabcde\n"[..], b"abcd\nabcde", b"abcd\nabcde\r\n"] {
            match read_all(input, 4) {
                Err(LineError::TooLong { line: 2, limit: 4 }) => {}
                other => panic!("{other:?}"),
            }
        }
        // No newline at all: stops after about the limit, not at the end.
        let zeros = std::io::Read::take(std::io::repeat(0), 1 << 40);
        let mut r = LineReader::new(std::io::BufReader::new(zeros));
        assert!(matches!(r.next_line(), Err(LineError::TooLong { line: 1, limit: MAX_LINE })));
        assert!(r.buf.len() <= MAX_LINE + (64 << 10), "buffered {} bytes", r.buf.len());
    }

    #[test]
    fn byte_order_mark_is_stripped_from_the_first_line_only() {
        let lines = read_all(b"\xEF\xBB\xBFa,b\n\xEF\xBB\xBFc\n", MAX_LINE).unwrap();
        assert_eq!(lines[0], "a,b");
        assert_eq!(lines[1], "\u{feff}c");
    }

    #[test]
    fn quotes_are_short() {
        assert_eq!(quote("12x"), "\"12x\"");
        let long = "x".repeat(20_000_000);
        let q = quote(&long);
        assert!(q.len() < 120 && q.ends_with("... (20000000 bytes)"), "{q}");
        let f = Fields::csv(&long, &["A"]);
        assert!(f.u64(0).unwrap_err().len() < 150);
    }

    #[test]
    fn pages_covered_counts() {
        assert_eq!(pages_covered(0, 4096, 4096), 1);
        assert_eq!(pages_covered(512, 4096, 4096), 2);
        assert_eq!(pages_covered(4095, 2, 4096), 2);
        assert_eq!(pages_covered(7, 0, 4096), 0);
        // Not a power of two: the division path.
        assert_eq!(pages_covered(0, 6000, 3000), 2);
        assert_eq!(pages_covered(2999, 2, 3000), 2);
    }

    #[test]
    fn chunk_rules() {
        let a = [1u8; 16];
        let b = [2u8; 16];
        // Aligned 4 KiB digests are kept as they are.
        assert_eq!(chunk_digests_to_pages(8192, 8192, 4096, &[a, b]), vec![a, b]);
        // Eight sector digests tiling a page: MD5 of the concatenation.
        let d = [a; 8];
        let want = md5_of(&d.iter().map(|x| &x[..]).collect::<Vec<_>>());
        assert_eq!(chunk_digests_to_pages(0, 4096, 512, &d), vec![want]);
        // Unaligned 4 KiB chunk straddles two pages: two distinct partial hashes.
        let v = chunk_digests_to_pages(2048, 4096, 4096, &[a]);
        assert_eq!(v.len(), 2);
        assert_ne!(v[0], v[1]);
        assert_ne!(v[0], a);
    }
}
