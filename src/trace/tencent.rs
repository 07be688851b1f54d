//! Tencent Cloud Block Storage traces (Zhang et al., "OSCA: An Online-Model
//! Based Cache Allocation Scheme in Cloud Block Storage Systems", ATC'20;
//! SNIA IOTTA "Tencent CBS").
//!
//! One request per line, CSV; the header line the dataset documents (a
//! first field `Timestamp`) is skipped where present:
//!
//! ```text
//! Timestamp,Offset,Size,IOType,VolumeID
//! 1538323200,12345,8,1,1063
//! ```
//!
//! * TIME UNIT: `Timestamp` is Unix time in (integer) seconds; decimals are
//!   accepted. One-second resolution means many requests share an arrival
//!   time.
//! * `Offset` and `Size` are in 512-byte sectors; `IOType` is `0` (read) or
//!   `1` (write); the volume is `VolumeID`.

use super::detect::{is_decimal, is_uint, Line};
use super::parse::{plain_record, Fields};
use super::TraceRecord;
use crate::units::Op;

const NAMES: &[&str] = &["Timestamp", "Offset", "Size", "IOType", "VolumeID"];

/// Parses one Tencent CBS line; `Ok(None)` for the header.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    let f = Fields::csv(line, NAMES);
    if f.str(0)?.eq_ignore_ascii_case("timestamp") {
        return Ok(None);
    }
    f.require(5)?;
    f.at_most(5)?;
    let time = f.seconds_as_ns(0)?;
    let offset = f.sectors_as_bytes(1)?;
    let size = f.sectors_as_bytes(2)?;
    let op = match f.str(3)? {
        "0" => Op::Read,
        "1" => Op::Write,
        _ => return Err(f.bad(3, "is not 0 (read) or 1 (write)")),
    };
    let volume = f.u32(4)?;
    plain_record(time, op, offset, size, volume).map(Some)
}

/// Detection: Tencent's header line (rank 12).
pub(super) fn is_header(l: &Line) -> bool {
    l.field_is(0, "timestamp") && l.field_is(3, "iotype")
}

/// Detection: five fields, a decimal time (the parser reads fractional
/// seconds too) then integers, the fourth the 0/1 op (rank 22, before
/// libCacheSim's five columns: a Tencent size that happens to be an
/// opcode stays Tencent).
pub(super) fn is_line(l: &Line) -> bool {
    let f = &l.fields;
    f.len() == 5 && is_decimal(f[0]) && f[1..].iter().all(|x| is_uint(x)) && matches!(f[3], "0" | "1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    #[test]
    fn parses_cbs_line() {
        let r = parse_line("1538323200,12345,8,1,1063").unwrap().unwrap();
        assert_eq!(r.time, Nanos(1_538_323_200_000_000_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Write, 12345 * 512, 4096, 1063));
        assert!(parse_line("1,2,3,2,4").unwrap_err().contains("field 4 (IOType)"));
        assert!(parse_line("Timestamp,Offset,Size,IOType,VolumeID").unwrap().is_none());
    }
}
