//! libCacheSim's block-trace CSV: the text form of CloudPhysics' VMware
//! vSCSI traces (Waldspurger et al., "Efficient MRC Construction with
//! SHARDS", FAST'15) that libCacheSim ships as `data/cloudPhysicsIO.csv` and
//! reads with `-t "time-col=2,obj-id-col=5,obj-size-col=4,has-header=true"`.
//!
//! One request per line, CSV, usually with a header line (skipped):
//!
//! ```text
//! version,time,op,size,lbn
//! 1,5633898368802,42,512,42932745
//! ```
//!
//! * `version`: the vSCSI record version (1 or 2); ignored.
//! * TIME UNIT: `time` is the vSCSI timestamp, integer microseconds (any
//!   origin; libCacheSim's binary vSCSI reader divides it by 10^6 to get
//!   seconds, its CSV reader keeps it as is).
//! * `op` is the SCSI command's opcode, in decimal or `0x` hex: READ(10)
//!   `0x28` = 40 and WRITE(10) `0x2a` = 42, also their 6-, 12- and 16-byte
//!   variants (READ `0x08`, `0xa8`, `0x88`; WRITE `0x0a`, `0xaa`, `0x8a`).
//!   Any other command is a bad line.
//! * `size` is the transfer length in bytes; `lbn` the logical block number
//!   of the first 512-byte sector (consecutive 512-byte requests have
//!   consecutive `lbn`s).
//! * There is no volume column: every request is on volume 0.

use super::parse::{check_extent, Fields};
use super::TraceRecord;
use crate::units::{Nanos, Op};

const NAMES: &[&str] = &["version", "time", "op", "size", "lbn"];

/// The operation of a SCSI READ or WRITE opcode (6-, 10-, 12- or 16-byte
/// CDB); `None` for every other command.
pub fn scsi_op(opcode: u8) -> Option<Op> {
    match opcode {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        _ => None,
    }
}

/// An opcode written in decimal (`42`) or hex (`0x2a`, `0X2A`).
pub fn parse_opcode(s: &str) -> Option<u8> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16).ok(),
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    }
}

/// Whether `line` is the header line (`version,time,op,size,lbn`).
pub fn is_header(line: &str) -> bool {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    f.len() >= 5 && f[..5].iter().zip(NAMES).all(|(a, b)| a.eq_ignore_ascii_case(b))
}

/// Parses one libCacheSim CSV line; `Ok(None)` for the header.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    if is_header(line) {
        return Ok(None);
    }
    let f = Fields::csv(line, NAMES);
    f.require(5)?;
    f.u64(0)?;
    let us = f.u64(1)?;
    let time = us
        .checked_mul(1000)
        .ok_or_else(|| f.bad(1, &format!("is out of range (at most {} us: 64-bit nanoseconds)", u64::MAX / 1000)))?;
    let op = match parse_opcode(f.str(2)?) {
        Some(code) => scsi_op(code).ok_or_else(|| {
            f.bad(2, &format!("is SCSI opcode {code:#04x}, not a READ (0x28 = 40) or WRITE (0x2a = 42)"))
        })?,
        None => return Err(f.bad(2, "is not a SCSI opcode (decimal, or hex as 0x2a)")),
    };
    let size = f.u64(3)?;
    let offset = f.sectors_as_bytes(4)?;
    check_extent(offset, size)?;
    Ok(Some(TraceRecord { time: Nanos(time), op, offset, size, volume: 0, content: None, hint: None }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cloudphysics_lines() {
        assert!(parse_line("version,time,op,size,lbn").unwrap().is_none());
        let r = parse_line("1,5633898368802,42,512,42932745").unwrap().unwrap();
        assert_eq!(r.time, Nanos(5_633_898_368_802_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Write, 42932745 * 512, 512, 0));
        let r = parse_line("2,7,0x28,6656,8").unwrap().unwrap();
        assert_eq!((r.op, r.offset, r.size), (Op::Read, 4096, 6656));
        assert_eq!(parse_line("1,7,0X2A,4096,0").unwrap().unwrap().op, Op::Write);
        for (code, op) in [(8, Op::Read), (0xa8, Op::Read), (0x88, Op::Read), (0x0a, Op::Write), (0xaa, Op::Write)] {
            assert_eq!(scsi_op(code), Some(op));
        }
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        assert_eq!(
            parse_line("1,7,53,0,0").unwrap_err(),
            "field 3 (op) is SCSI opcode 0x35, not a READ (0x28 = 40) or WRITE (0x2a = 42): \"53\""
        );
        assert!(parse_line("1,7,R,4096,0").unwrap_err().starts_with("field 3 (op) is not a SCSI opcode"));
        assert!(parse_line("1,7,0x2g,4096,0").unwrap_err().starts_with("field 3 (op) is not a SCSI opcode"));
        assert!(parse_line("1,7,256,4096,0").unwrap_err().starts_with("field 3 (op) is not a SCSI opcode"));
        assert!(parse_line("1,7,42,4096").unwrap_err().contains("expected at least 5 fields"));
        assert!(parse_line("1,18446744073709552,42,4096,0").unwrap_err().contains("is out of range (at most"));
        assert!(parse_line("1,7,42,4096,36028797018963968").unwrap_err().contains("field 5 (lbn) is out of range"));
    }
}
