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

use super::parse::{check_extent, Fields};
use super::TraceRecord;
use crate::units::{Nanos, Op};

const NAMES: &[&str] = &["time", "devno", "lsn", "size", "ope"];

/// Parses one SSDsim line.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    parse_disksim(line, NAMES)
}

/// Parses the shared DiskSim-style ASCII layout `time(ns) device
/// sector(512 B) size(sectors) op(1 = read, 0 = write)`; `names` label the
/// five fields in error messages.
pub(crate) fn parse_disksim(line: &str, names: &'static [&'static str]) -> Result<Option<TraceRecord>, String> {
    let f = Fields::ws(line, names);
    f.require(5)?;
    let time = f.u64(0)?;
    let volume = f.u32(1)?;
    let offset = f.sectors_as_bytes(2)?;
    let size = f.sectors_as_bytes(3)?;
    let op = match f.str(4)? {
        "1" => Op::Read,
        "0" => Op::Write,
        _ => return Err(f.bad(4, "is not 1 (read) or 0 (write)")),
    };
    check_extent(offset, size)?;
    Ok(Some(TraceRecord { time: Nanos(time), op, offset, size, volume, content: None }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ssdsim_line() {
        let r = parse_line("26214000 1 303574 7 1").unwrap().unwrap();
        assert_eq!(r.time, Nanos(26_214_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Read, 303574 * 512, 3584, 1));
        assert_eq!(parse_line("0 0 1 2 5").unwrap_err(), "field 5 (ope) is not 1 (read) or 0 (write): \"5\"");
    }
}
