//! fio's logs: the I/O log `--write_iolog` writes (and `--read_iolog`
//! replays), versions 2 and 3, and the per-I/O latency/bandwidth logs
//! (`--write_lat_log`, `--write_bw_log`, ...) when written with
//! `log_offset=1`.
//!
//! # I/O log (`fio-iolog`)
//!
//! ```text
//! fio version 3 iolog
//! 0 /dev/nvme0n1 add
//! 2 /dev/nvme0n1 open
//! 872 /dev/nvme0n1 write 0 16384
//! 881 /dev/nvme0n1 read 16384 4096
//! 10001677 /dev/nvme0n1 close
//! ```
//!
//! * The first line is `fio version 2 iolog` or `fio version 3 iolog`
//!   (version 1, without a header, is not supported by fio either).
//! * File actions `filename add|open|close` (v3: `timestamp filename
//!   action`); I/O `filename action offset length` (v3: `timestamp filename
//!   action offset length`), offset and length in bytes, action `read`,
//!   `write`, `trim`, `sync`, `datasync`, `sync_file_range` or `wait`.
//! * Files become volumes in the order they are added (0, 1, ...); I/O on a
//!   file not added before is an error, as in fio.
//! * TIME UNIT (v3): fio's writer (`log_io_u`) stamps each line with
//!   `utime_since_now` and its replay delays by the differences in
//!   microseconds, so `fio-iolog` reads **microseconds**. fio's own
//!   documentation has called the unit milliseconds; `fio-iolog:ms` reads
//!   logs written to that reading (any of `s`, `ms`, `us`, `ns` may follow
//!   the colon).
//! * v2 has no timestamps: requests arrive at time 0 until a `wait` line,
//!   whose offset is, as current fio replays it, the absolute time in
//!   milliseconds since the start that the following requests wait for.
//!   (v3 `wait` lines are ignored by fio; here they are counted and
//!   skipped.)
//! * `sync`, `datasync` and `sync_file_range` move no data: counted in a
//!   warning and skipped; `open`/`close` are not I/O.
//!
//! # Per-I/O logs (`fio-log`)
//!
//! ```text
//! 1, 183, 0, 4096, 1736704, 0
//! ```
//!
//! `time, value, ddir, bs, offset[, prio[, ...]]` (CSV): TIME UNIT
//! milliseconds since the job started (the time the entry was logged: the
//! completion for latency logs), `value` (the latency or bandwidth; ignored),
//! `ddir` 0 read, 1 write, 2 trim, `bs` and `offset` in bytes. Only logs
//! written with `log_offset=1` carry an offset: a line of four fields is an
//! error saying so. Averaged logs (`log_avg_msec`) are not per-I/O and must
//! not be used. Every request is on volume 0.

use super::csv::{scaled_ns, TimeUnit};
use super::parse::{check_extent, plain_record, quote, Fields, LineParser, Numbered};
use super::TraceRecord;
use crate::units::{Nanos, Op};
use std::collections::HashMap;

const V2: &[&str] = &["filename", "action", "offset", "length"];
const V3: &[&str] = &["timestamp", "filename", "action", "offset", "length"];

/// The I/O log line parser.
pub struct IologParser {
    unit: TimeUnit,
    version: Option<u8>,
    files: HashMap<String, u32>,
    /// v2: the time set by the last `wait`.
    now: u64,
    syncs: u64,
    v3_waits: u64,
    v2_waits: u64,
    records: u64,
}

impl IologParser {
    pub fn new(unit: TimeUnit) -> Self {
        IologParser {
            unit,
            version: None,
            files: HashMap::new(),
            now: 0,
            syncs: 0,
            v3_waits: 0,
            v2_waits: 0,
            records: 0,
        }
    }

    /// Parses one line; `Ok(None)` for the header, file actions and
    /// skipped actions.
    pub fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, String> {
        let Some(version) = self.version else {
            self.version = Some(match line.trim() {
                l if l.starts_with("fio version 2 iolog") => 2,
                l if l.starts_with("fio version 3 iolog") => 3,
                _ => {
                    return Err(format!(
                        "expected the header `fio version 2 iolog` or `fio version 3 iolog` (fio no longer \
                         reads version 1 logs), found {}",
                        quote(line)
                    ))
                }
            });
            return Ok(None);
        };
        let items: Vec<&str> = line.split_whitespace().collect();
        let v3 = version == 3;
        let f = Fields::from_items(items, if v3 { V3 } else { V2 });
        let base = usize::from(v3);
        let time = if v3 {
            let t = f.str(0)?;
            Some(scaled_ns(t, self.unit.ns()).map_err(|w| f.bad(0, w))?)
        } else {
            None
        };
        let (file, action) = (f.str(base)?, f.str(base + 1)?);
        match f.len() - base {
            2 => {
                match action {
                    "add" => {
                        let next = self.files.len() as u32;
                        self.files.entry(file.to_string()).or_insert(next);
                    }
                    "open" | "close" => {
                        self.volume(file, &f, base)?;
                    }
                    _ => return Err(f.bad(base + 1, "is not a file action (add, open, close)")),
                }
                return Ok(None);
            }
            4 => {}
            n => {
                return Err(format!(
                    "expected {} fields (file action) or {} (I/O: {}), found {}",
                    base + 2,
                    base + 4,
                    f_names(v3),
                    n + base
                ))
            }
        }
        let op = match action {
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Trim,
            "sync" | "datasync" | "sync_file_range" => {
                self.volume(file, &f, base)?;
                self.syncs += 1;
                return Ok(None);
            }
            "wait" if v3 => {
                self.v3_waits += 1;
                return Ok(None);
            }
            "wait" => {
                let ms = f.u64(base + 2)?;
                let t = ms.checked_mul(1_000_000).ok_or_else(|| f.bad(base + 2, "is out of range (64-bit ns)"))?;
                self.now = self.now.max(t);
                self.v2_waits += 1;
                return Ok(None);
            }
            _ => {
                return Err(f.bad(base + 1, "is not an I/O action (read, write, trim, sync, datasync, wait)"));
            }
        };
        let volume = self.volume(file, &f, base)?;
        let offset = f.u64(base + 2)?;
        let size = f.u64(base + 3)?;
        check_extent(offset, size)?;
        self.records += 1;
        let time = time.unwrap_or(self.now);
        Ok(Some(TraceRecord { time: Nanos(time), op, offset, size, volume, content: None, hint: None, process: 0 }))
    }

    fn volume(&self, file: &str, f: &Fields<'_>, base: usize) -> Result<u32, String> {
        self.files
            .get(file)
            .copied()
            .ok_or_else(|| f.bad(base, &format!("was not added before (a `{file} add` line must come first)")))
    }
}

fn f_names(v3: bool) -> String {
    (if v3 { V3 } else { V2 }).join(" ")
}

impl LineParser for IologParser {
    fn line(&mut self, line: &str, line_no: u64, out: &mut Vec<Numbered>) -> Result<(), String> {
        if let Some(r) = self.parse(line)? {
            out.push((line_no, r));
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.syncs > 0 {
            w.push(format!("fio iolog: {} sync/datasync actions move no data and were skipped", self.syncs));
        }
        if self.v3_waits > 0 {
            w.push(format!(
                "fio iolog: {} wait actions in a version 3 log skipped (fio ignores them too)",
                self.v3_waits
            ));
        }
        if self.version == Some(2) && self.records > 0 {
            w.push(format!(
                "fio iolog version 2 has no timestamps: requests arrive at the times of the {} wait actions \
                 before them (0 before the first); --set replay.mode=closed-loop ignores the times",
                self.v2_waits
            ));
        }
        w
    }
}

const LOG: &[&str] = &["time", "value", "ddir", "bs", "offset", "prio"];

/// Parses one line of a fio per-I/O log written with `log_offset=1`.
pub fn parse_log_line(line: &str) -> Result<Option<TraceRecord>, String> {
    let f = Fields::csv(line, LOG);
    if f.len() == 4 {
        return Err("a fio log entry without an offset (4 fields): write the log with log_offset=1".into());
    }
    f.require(5)?;
    let time = scaled_ns(f.str(0)?, 1_000_000).map_err(|w| f.bad(0, w))?;
    f.str(1)?;
    let op = match f.str(2)? {
        "0" => Op::Read,
        "1" => Op::Write,
        "2" => Op::Trim,
        _ => return Err(f.bad(2, "is not 0 (read), 1 (write) or 2 (trim)")),
    };
    let size = f.u64(3)?;
    let offset = f.u64(4)?;
    plain_record(time, op, offset, size, 0).map(Some)
}

/// Detection: a fio log line (rank 24, after Tencent's and libCacheSim's
/// five columns).
pub(super) fn is_log(l: &super::detect::Line) -> bool {
    is_log_line(&l.fields)
}

/// Whether a comma-separated line looks like a fio log entry (for
/// detection): four to seven integer fields, the third a data direction.
pub fn is_log_line(f: &[&str]) -> bool {
    (4..=7).contains(&f.len()) && f.iter().all(|x| super::detect::is_uint(x)) && matches!(f[2], "0" | "1" | "2")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    fn run(unit: TimeUnit, text: &str) -> Result<(Vec<TraceRecord>, Vec<String>), String> {
        let mut p = IologParser::new(unit);
        let mut out = Vec::new();
        for (i, l) in text.lines().enumerate() {
            p.line(l.trim(), i as u64 + 1, &mut out)?;
        }
        Ok((out.into_iter().map(|(_, r)| r).collect(), p.warnings()))
    }

    #[test]
    fn version_3_with_two_files() {
        let text = "fio version 3 iolog\n0 /dev/sdb add\n1 /dev/sdc add\n2 /dev/sdb open\n872 /dev/sdb write 0 16384\n\
                    881 /dev/sdc read 4096 4096\n900 /dev/sdb trim 8192 8192\n901 /dev/sdb sync 0 0\n\
                    950 /dev/sdb close\n";
        let (r, w) = run(TimeUnit::Us, text).unwrap();
        let got: Vec<(u64, Op, u64, u64, u32)> =
            r.iter().map(|r| (r.time.0, r.op, r.offset, r.size, r.volume)).collect();
        assert_eq!(
            got,
            vec![
                (872_000, Op::Write, 0, 16384, 0),
                (881_000, Op::Read, 4096, 4096, 1),
                (900_000, Op::Trim, 8192, 8192, 0)
            ]
        );
        assert_eq!(w, ["fio iolog: 1 sync/datasync actions move no data and were skipped"]);
        let (r, _) = run(TimeUnit::Ms, text).unwrap();
        assert_eq!(r[0].time, Nanos(872_000_000));
    }

    #[test]
    fn version_2_waits_set_the_time() {
        let text = "fio version 2 iolog\nf add\nf open\nf write 0 4096\nf wait 5 0\nf read 0 4096\nf close\n";
        let (r, w) = run(TimeUnit::Us, text).unwrap();
        let t: Vec<u64> = r.iter().map(|r| r.time.0).collect();
        assert_eq!(t, vec![0, 5_000_000]);
        assert!(w[0].contains("version 2 has no timestamps"), "{w:?}");
    }

    #[test]
    fn bad_lines_say_why() {
        let e = |t: &str| run(TimeUnit::Us, t).unwrap_err();
        assert!(e("f add\n").starts_with("expected the header `fio version 2 iolog`"));
        assert_eq!(
            e("fio version 2 iolog\ng read 0 4096\n"),
            "field 1 (filename) was not added before (a `g add` line must come first): \"g\""
        );
        assert_eq!(
            e("fio version 2 iolog\nf add\nf erase 0 1\n"),
            "field 2 (action) is not an I/O action (read, write, trim, sync, datasync, wait): \"erase\""
        );
        assert_eq!(e("fio version 3 iolog\nx f add\n"), "field 1 (timestamp) is not a number: \"x\"");
        assert!(e("fio version 3 iolog\n1 f add\n2 f read 0\n").starts_with("expected 3 fields (file action) or 5"));
        assert_eq!(e("fio version 3 iolog\n1 f add\n2 f read 0 4k\n"), "field 5 (length) is not an integer: \"4k\"");
    }

    #[test]
    fn per_io_logs() {
        let r = parse_log_line("1, 183, 0, 4096, 1736704, 0").unwrap().unwrap();
        assert_eq!((r.time, r.op, r.size, r.offset), (Nanos(1_000_000), Op::Read, 4096, 1736704));
        assert_eq!(parse_log_line("2, 9, 2, 8192, 0").unwrap().unwrap().op, Op::Trim);
        assert!(parse_log_line("1, 183, 0, 4096").unwrap_err().contains("log_offset=1"));
        assert_eq!(
            parse_log_line("1, 183, 3, 4096, 0").unwrap_err(),
            "field 3 (ddir) is not 0 (read), 1 (write) or 2 (trim): \"3\""
        );
        assert!(is_log_line(&["1", "183", "1", "4096", "0", "0"]));
        assert!(!is_log_line(&["1", "183", "5", "4096", "0"]));
    }
}
