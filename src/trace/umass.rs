//! UMass Trace Repository / Storage Performance Council (SPC) traces
//! (Financial1/2, WebSearch1-3).
//!
//! One request per line, CSV without header:
//!
//! ```text
//! ASU,LBA,Size,Opcode,Timestamp[,optional fields...]
//! 0,20941264,8192,W,0.551706
//! ```
//!
//! * TIME UNIT: `Timestamp` is seconds (decimal) since the start of the trace.
//! * `LBA` is in 512-byte sectors, `Size` in bytes; `Opcode` is `r`/`R`
//!   (read) or `w`/`W` (write); the volume is the ASU (application storage
//!   unit). Fields after the fifth are ignored.

use super::detect::{is_decimal, is_rw, is_uint, Line};
use super::parse::{plain_record, Fields};
use super::TraceRecord;
use crate::units::Op;

const NAMES: &[&str] = &["ASU", "LBA", "Size", "Opcode", "Timestamp"];

/// Parses one UMass/SPC line.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    let f = Fields::csv(line, NAMES);
    f.require(5)?;
    let volume = f.u32(0)?;
    let offset = f.sectors_as_bytes(1)?;
    let size = f.u64(2)?;
    let op = match f.str(3)? {
        "r" | "R" => Op::Read,
        "w" | "W" => Op::Write,
        _ => return Err(f.bad(3, "is not r/R or w/W")),
    };
    let time = f.seconds_as_ns(4)?;
    plain_record(time, op, offset, size, volume).map(Some)
}

/// Detection: at least five fields, three integers, then R/W and a
/// decimal time (rank 25).
pub(super) fn is_line(l: &Line) -> bool {
    let f = &l.fields;
    f.len() >= 5 && f[..3].iter().all(|x| is_uint(x)) && is_rw(f[3]) && is_decimal(f[4])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    #[test]
    fn parses_spc_line() {
        let r = parse_line("1,55596,3072,r,0.078643,extra").unwrap().unwrap();
        assert_eq!(r.time, Nanos(78_643_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Read, 55596 * 512, 3072, 1));
        assert!(parse_line("1,2,3,x,0.1").unwrap_err().contains("field 4 (Opcode)"));
        assert!(parse_line("1,2,3,r,-1").unwrap_err().contains("field 5 (Timestamp)"));
    }
}
