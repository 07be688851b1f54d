//! libCacheSim's block-trace CSV: the text form of CloudPhysics' VMware
//! vSCSI traces (Waldspurger et al., "Efficient MRC Construction with
//! SHARDS", FAST'15) that libCacheSim ships as `data/cloudPhysicsIO.csv` and
//! reads with `-t "time-col=2,obj-id-col=5,obj-size-col=4,has-header=true"`.
//!
//! One request per line, CSV, usually with a header line (skipped):
//!
//! ```text
//! version,time,op,size,lbn
//! 1,5633898,2a,512,42932745
//! ```
//!
//! * `version`: the vSCSI record version (1 or 2); ignored.
//! * TIME UNIT: `time` is in seconds (any origin), as in libCacheSim's own
//!   `data/cloudPhysicsIO.csv`: integers there (its 113,872 requests span
//!   exactly 7,200 s, the two hours of the SHARDS sample), decimals accepted.
//!   (An earlier reader took microseconds, from a hand-written example; the
//!   real file disproved it.)
//! * `op` is the SCSI command's opcode: READ(10) `0x28` and WRITE(10)
//!   `0x2a`, also their 6-, 12- and 16-byte variants (READ `0x08`, `0xa8`,
//!   `0x88`; WRITE `0x0a`, `0xaa`, `0x8a`). The real file writes it in hex
//!   without a prefix (`2a`, `28`); `0x` hex and decimal (`42`, `40`) are
//!   read too. The three notations cannot disagree: no string is a READ or
//!   WRITE opcode in one and a different READ or WRITE opcode in another
//!   (`8`/`08` is READ(6) in all), so each field is read as the notation in
//!   which it is a READ or WRITE. Any other command is a bad line.
//! * `size` is the transfer length in bytes; `lbn` the logical block number
//!   of the first 512-byte sector (consecutive 512-byte requests have
//!   consecutive `lbn`s).
//! * There is no volume column: every request is on volume 0.

use super::detect::{is_uint, Line};
use super::parse::{plain_record, Fields};
use super::TraceRecord;
use crate::units::Op;

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

/// The READ or WRITE of an opcode field written in bare hex (`2a`, as
/// libCacheSim's sample), `0x` hex (`0x2a`, `0X2A`) or decimal (`42`); see
/// the module doc for why the notations cannot disagree. `Err(Some(code))`
/// for another command (the decimal reading of an all-digit field), `Err(None)`
/// for a field that is no opcode in any notation.
pub fn parse_op(s: &str) -> Result<Op, Option<u8>> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let code = hex_byte(hex).ok_or(None)?;
        return scsi_op(code).ok_or(Some(code));
    }
    let decimal = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) { s.parse::<u8>().ok() } else { None };
    if let Some(op) = decimal.and_then(scsi_op) {
        return Ok(op);
    }
    let bare_hex = hex_byte(s);
    if let Some(op) = bare_hex.and_then(scsi_op) {
        return Ok(op);
    }
    Err(decimal.or(bare_hex))
}

/// One or two hex digits (no sign, unlike `u8::from_str_radix`).
fn hex_byte(s: &str) -> Option<u8> {
    if (1..=2).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        u8::from_str_radix(s, 16).ok()
    } else {
        None
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
    let time = f.seconds_as_ns(1)?;
    let op = match parse_op(f.str(2)?) {
        Ok(op) => op,
        Err(Some(code)) => {
            return Err(f.bad(2, &format!("is SCSI opcode {code:#04x}, not a READ (0x28 = 40) or WRITE (0x2a = 42)")))
        }
        Err(None) => return Err(f.bad(2, "is not a SCSI opcode (hex as 2a or 0x2a, or decimal)")),
    };
    let size = f.u64(3)?;
    let offset = f.sectors_as_bytes(4)?;
    plain_record(time, op, offset, size, 0).map(Some)
}

/// Detection: libCacheSim's header line (rank 13).
pub(super) fn is_header_line(l: &Line) -> bool {
    is_header(l.text)
}

/// Detection: five fields, integers but the third, a SCSI READ/WRITE
/// opcode (rank 23).
pub(super) fn is_line(l: &Line) -> bool {
    let f = &l.fields;
    f.len() == 5 && [0, 1, 3, 4].iter().all(|&i| is_uint(f[i])) && parse_op(f[2]).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    #[test]
    fn parses_cloudphysics_lines() {
        assert!(parse_line("version,time,op,size,lbn").unwrap().is_none());
        // The first line of libCacheSim's data/cloudPhysicsIO.csv.
        let r = parse_line("1,5633898,2a,512,42932745").unwrap().unwrap();
        assert_eq!(r.time, Nanos(5_633_898_000_000_000));
        assert_eq!((r.op, r.offset, r.size, r.volume), (Op::Write, 42932745 * 512, 512, 0));
        assert_eq!(parse_line("1,5633898,28,512,0").unwrap().unwrap().op, Op::Read);
        let r = parse_line("2,7.25,0x28,6656,8").unwrap().unwrap();
        assert_eq!((r.time, r.op, r.offset, r.size), (Nanos(7_250_000_000), Op::Read, 4096, 6656));
        assert_eq!(parse_line("1,7,0X2A,4096,0").unwrap().unwrap().op, Op::Write);
        assert_eq!(parse_line("1,7,2A,4096,0").unwrap().unwrap().op, Op::Write);
        // Decimal opcodes (40 = 0x28, 42 = 0x2a) and the 6-byte READ in every notation.
        assert_eq!(parse_line("1,7,42,4096,0").unwrap().unwrap().op, Op::Write);
        assert_eq!(parse_line("1,7,40,4096,0").unwrap().unwrap().op, Op::Read);
        for s in ["8", "08", "0x08"] {
            assert_eq!(parse_op(s), Ok(Op::Read), "{s}");
        }
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
        assert!(parse_line("1,7,+2a,4096,0").unwrap_err().starts_with("field 3 (op) is not a SCSI opcode"));
        assert_eq!(parse_op("3f"), Err(Some(0x3f)));
        assert!(parse_line("1,7,42,4096").unwrap_err().contains("expected at least 5 fields"));
        assert!(parse_line("1,18446744074,42,4096,0").unwrap_err().contains("is out of range (at most"));
        assert!(parse_line("1,7,42,4096,36028797018963968").unwrap_err().contains("field 5 (lbn) is out of range"));
    }
}
