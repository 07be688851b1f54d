//! MQSim ASCII traces (Tavakkol et al., "MQSim", FAST'18; `CMU-SAFARI/MQSim`
//! `traces/*.trace`), the DiskSim ASCII layout.
//!
//! One request per line, whitespace-separated:
//!
//! ```text
//! arrival_time device lba size type
//! 11413000 0 657728 16 1
//! ```
//!
//! * TIME UNIT: `arrival_time` is integer nanoseconds (MQSim's simulation
//!   clock unit).
//! * `lba` (start sector) and `size` are in 512-byte sectors; `type` is `1`
//!   for a read and `0` for a write; the volume is `device`.
//!
//! Checked against the bundled samples (`wsrch-small.trace`,
//! `tpcc-small.trace`): sizes are mostly multiples of 8 sectors (4 KiB) and
//! average 15 KiB and 8.3 KiB only if read as sectors; timestamps are
//! multiples of 1 µs spanning 60 s and 0.14 s, plausible only as
//! nanoseconds. The layout is identical to SSDsim's ([`super::ssdsim`]).

use super::ssdsim::parse_disksim;
use super::TraceRecord;

const NAMES: &[&str] = &["arrival_time", "device", "lba", "size", "type"];

/// Parses one MQSim line.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    parse_disksim(line, NAMES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Nanos, Op};

    #[test]
    fn parses_mqsim_line() {
        let r = parse_line("938513000 4 264719034 16 0").unwrap().unwrap();
        assert_eq!(r.time, Nanos(938_513_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Write, 264719034 * 512, 8192, 4));
        assert!(parse_line("1 2 3 4").unwrap_err().contains("arrival_time, device"));
    }
}
