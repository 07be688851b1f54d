//! SYSTOR'17 enterprise VDI traces (Lee et al., "Understanding storage
//! traffic characteristics on enterprise virtual desktop infrastructure",
//! SYSTOR'17; SNIA IOTTA "Systor '17"), one file per LUN and hour.
//!
//! CSV with a header line, one request per line:
//!
//! ```text
//! Timestamp,Response,IOType,LUN,Offset,Size
//! 1455591804.310701000,0.006475000,R,0,203468398592,32768
//! ```
//!
//! * TIME UNIT: `Timestamp` is Unix time in seconds with nanosecond
//!   resolution (parsed exactly, not through `f64`). `Response` (seconds) is
//!   ignored.
//! * `Offset` and `Size` are in bytes; `IOType` is `R` or `W` (`Read` /
//!   `Write` also accepted); the volume is the `LUN`.
//! * Rows are not strictly time-ordered in the published files (they look
//!   sorted by completion); the loader clamps backward steps and reports them.

use super::detect::{is_decimal, is_rw, is_uint, Line};
use super::parse::{plain_record, Fields};
use super::TraceRecord;
use crate::units::Op;

const NAMES: &[&str] = &["Timestamp", "Response", "IOType", "LUN", "Offset", "Size"];

/// Parses one SYSTOR'17 line; `Ok(None)` for the header.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    let f = Fields::csv(line, NAMES);
    if f.str(0)?.eq_ignore_ascii_case("timestamp") {
        return Ok(None);
    }
    f.require(6)?;
    f.at_most(6)?;
    let time = f.seconds_as_ns(0)?;
    let op = match f.str(2)? {
        t if t.eq_ignore_ascii_case("r") || t.eq_ignore_ascii_case("read") => Op::Read,
        t if t.eq_ignore_ascii_case("w") || t.eq_ignore_ascii_case("write") => Op::Write,
        _ => return Err(f.bad(2, "is not R or W")),
    };
    let volume = f.u32(3)?;
    let offset = f.u64(4)?;
    let size = f.u64(5)?;
    plain_record(time, op, offset, size, volume).map(Some)
}

/// Detection: SYSTOR's header line (rank 10).
pub(super) fn is_header(l: &Line) -> bool {
    l.field_is(0, "timestamp") && l.field_is(2, "iotype")
}

/// Detection: six fields, a decimal time, the third R/W, the fifth an
/// integer (rank 21).
pub(super) fn is_line(l: &Line) -> bool {
    let f = &l.fields;
    f.len() == 6 && is_decimal(f[0]) && is_rw(f[2]) && is_uint(f[4])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    #[test]
    fn parses_vdi_line() {
        let r = parse_line("1455591804.310701000,0.006475000,W,2,203468398592,32768").unwrap().unwrap();
        assert_eq!(r.time, Nanos(1_455_591_804_310_701_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Write, 203468398592, 32768, 2));
        assert!(parse_line("Timestamp,Response,IOType,LUN,Offset,Size").unwrap().is_none());
        assert!(parse_line("1.0,0.1,R,0,5").unwrap_err().contains("expected at least 6"));
    }
}
