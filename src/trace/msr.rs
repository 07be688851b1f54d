//! MSR Cambridge block I/O traces (SNIA IOTTA trace set 388; Narayanan et
//! al., "Write Off-Loading", FAST'08).
//!
//! One request per line, CSV without header (a header line starting with
//! `Timestamp,Hostname` is tolerated and skipped):
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166385295514663,hm,0,Write,9056014336,2048,2833
//! ```
//!
//! * TIME UNIT: `Timestamp` is a Windows FILETIME, i.e. 100 ns ticks since
//!   1601-01-01; it is multiplied by 100 to get nanoseconds.
//! * `Offset` and `Size` are in bytes; `Type` is `Read` or `Write`
//!   (case-insensitive); the volume is `DiskNumber`. `Hostname` and
//!   `ResponseTime` (100 ns ticks) are ignored.

use super::detect::{is_uint, Line};
use super::parse::{plain_record, Fields};
use super::TraceRecord;
use crate::units::Op;

const NAMES: &[&str] = &["Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime"];

/// Parses one MSR line; `Ok(None)` for the optional header.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    let f = Fields::csv(line, NAMES);
    if f.str(0)?.eq_ignore_ascii_case("timestamp") {
        return Ok(None);
    }
    f.require(6)?;
    f.at_most(7)?;
    let ticks = f.u64(0)?;
    let time = ticks.checked_mul(100).ok_or_else(|| {
        f.bad(0, &format!("is out of range (at most {} ticks of 100 ns: 64-bit nanoseconds)", u64::MAX / 100))
    })?;
    let volume = f.u32(2)?;
    let op = match f.str(3)? {
        t if t.eq_ignore_ascii_case("read") => Op::Read,
        t if t.eq_ignore_ascii_case("write") => Op::Write,
        _ => return Err(f.bad(3, "is not Read or Write")),
    };
    let offset = f.u64(4)?;
    let size = f.u64(5)?;
    plain_record(time, op, offset, size, volume).map(Some)
}

/// Detection: MSR's header line (rank 11).
pub(super) fn is_header(l: &Line) -> bool {
    l.field_is(0, "timestamp") && l.field_is(1, "hostname")
}

/// Detection: seven fields, the fourth `Read`/`Write` (rank 20).
pub(super) fn is_line(l: &Line) -> bool {
    l.fields.len() == 7 && is_uint(l.fields[0]) && (l.field_is(3, "read") || l.field_is(3, "write"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    #[test]
    fn parses_sample_line() {
        let r = parse_line("128166385295514663,hm,3,Write,9056014336,2048,2833").unwrap().unwrap();
        assert_eq!(r.time, Nanos(12_816_638_529_551_466_300));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Write, 9056014336, 2048, 3));
        assert!(parse_line("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime").unwrap().is_none());
        let e = parse_line("1,hm,0,Read,0,12x,1").unwrap_err();
        assert_eq!(e, "field 6 (Size) is not an integer: \"12x\"");
        assert!(parse_line("1,hm,0,Flush,0,1,1").unwrap_err().contains("Read or Write"));
    }
}
