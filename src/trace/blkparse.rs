//! blkparse's default text output (blktrace(8), blkparse(1); Linux block
//! layer tracing): one event per line, each request appearing several times
//! as it passes the block layer (queued, merged, dispatched, completed):
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
//!   8,0    3        2     0.000001829   697  G   W 223490 + 8 [kjournald]
//!   8,0    3        4     0.000014170   697  M   W 223498 + 8 [kjournald]
//!   8,0    3       10     0.000036306   697  D   W 223490 + 16 [kjournald]
//!   8,0    1        1     0.003955140     0  C   W 223490 + 16 [0]
//! ```
//!
//! The default format is `%D %2c %8s %5T.%9t %5p %2a %3d` (device
//! `major,minor`, CPU, sequence number, time, pid, action, RWBS) followed,
//! for events that carry a range, by `sector + nsectors` and `[process]`
//! (for `C`, `[error]`).
//!
//! * **Which event is the request.** The format name chooses it:
//!   `blkparse` (= `blkparse:D`, what detection picks) takes the `D` (issued
//!   to the driver) events, the requests the device sees after merging;
//!   `blkparse:Q` the `Q` (queued) events, the requests as the file system
//!   submitted them, before merging; `blkparse:C` the `C` (completed)
//!   events, at their completion times (for traces recorded with
//!   `-a complete` only). Every other event describes the same I/O at
//!   another stage: it is counted, by action, in one warning, never a
//!   request.
//! * **Merges** (`M` back, `F` front) are already included in the `D` event
//!   of the merged request, so under `D` and `C` they are only counted;
//!   under `Q` each merged bio has its own `Q` event, so they are counted
//!   too, and nothing is lost.
//! * **Requeues** (`R`): a request the driver gave back is dispatched again
//!   with a second `D` event for the same device, sector and length. Under
//!   `D` the first dispatch is kept and that re-dispatch is dropped (both
//!   counted in the warning), so a requeued request counts once. Under `Q`
//!   and `C` requeues change nothing (one `Q` and one `C` per request).
//! * TIME UNIT: seconds since the start of the trace with nanosecond
//!   decimals (`%5T.%9t`).
//! * Addresses: `sector` and `nsectors` are in 512-byte sectors. The volume
//!   is the device, `major << 20 | minor` as for FIU (`--volume 8:16`).
//! * RWBS: an optional leading `F` (pre-flush), then the operation: `R`
//!   read, `W` write, `D` discard (read as a trim; `DE` secure erase too),
//!   `F` flush or `N` none (no data: counted, not a request); then flags
//!   `F` (FUA), `A` (read-ahead), `S` (sync), `M` (metadata), `E`, `B`
//!   (barrier, old kernels), which do not change the operation.
//! * Non-I/O events (plugs `P`, unplugs `U`/`UT`, sleeps `S`, messages `m`,
//!   events without a `sector + n` range such as flushes) are counted in the
//!   warning. The per-CPU and total summary blkparse prints at the end
//!   (`CPU0 (8,0):`, `Total (8,0):`, `Reads Queued: ...`, `Throughput
//!   (R/W): ...`, `Events (8,0): N entries`) is recognised and skipped: once
//!   a `CPUn (...)` or `Total (...)` heading is seen, lines that are not
//!   events are summary lines.
//!
//! Detection: the first field is `major,minor` and fields 2 to 6 are
//! numbers and an action, which no other format's line has (FIU's lines,
//! also named `*.blkparse`, start with a plain number).

use super::detect::{is_uint, Line};
use super::parse::{check_extent, quote, LineParser, Numbered};
use super::TraceRecord;
use crate::units::{Nanos, Op, SECTOR};
use std::collections::HashMap;
use std::fmt;

const NAMES: &[&str] = &["device", "cpu", "sequence", "time", "pid", "action", "rwbs", "sector", "+", "nsectors"];

/// The blkparse event that stands for a device request.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BlkEvent {
    /// `D`: issued to the driver (the default).
    Dispatch,
    /// `Q`: queued by the block layer (before merging).
    Queue,
    /// `C`: completed.
    Complete,
}

impl BlkEvent {
    pub fn action(self) -> &'static str {
        match self {
            BlkEvent::Dispatch => "D",
            BlkEvent::Queue => "Q",
            BlkEvent::Complete => "C",
        }
    }

    pub fn parse(s: &str) -> Option<BlkEvent> {
        match s {
            "D" | "d" => Some(BlkEvent::Dispatch),
            "Q" | "q" => Some(BlkEvent::Queue),
            "C" | "c" => Some(BlkEvent::Complete),
            _ => None,
        }
    }
}

impl fmt::Display for BlkEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.action())
    }
}

/// The actions blkparse prints, in the order the warning lists them.
const ACTIONS: &[&str] = &["Q", "G", "I", "M", "F", "D", "C", "R", "A", "B", "X", "S", "P", "U", "UT", "T", "m"];

/// Whether `s` is `major,minor`.
fn is_device(s: &str) -> bool {
    s.split_once(',').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && a.bytes().all(|c| c.is_ascii_digit()) && b.bytes().all(|c| c.is_ascii_digit())
    })
}

/// Whether a line has the shape of a blkparse event (for detection).
pub fn is_event_line(line: &str) -> bool {
    let f: Vec<&str> = line.split_whitespace().take(7).collect();
    f.len() == 7
        && is_device(f[0])
        && is_uint(f[1])
        && is_uint(f[2])
        && super::parse::parse_seconds_ns(f[3]).is_some()
        && is_uint(f[4])
        && (1..=2).contains(&f[5].len())
        && f[5].bytes().all(|b| b.is_ascii_alphabetic())
}

/// Detection: a blkparse event line (rank 0: `major,minor` has a comma but
/// the line is not comma-separated).
pub(super) fn is_line(l: &Line) -> bool {
    is_event_line(l.text)
}

/// Whether a non-event line opens blkparse's closing summary.
fn is_summary_heading(line: &str) -> bool {
    let cpu = line
        .strip_prefix("CPU")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()) && r.contains(" (") && r.ends_with(':'));
    cpu || (line.starts_with("Total (") && line.ends_with(':'))
}

/// What an RWBS field says about the data.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rwbs {
    Data(Op),
    /// Flush or `N`: no data moves.
    NoData,
}

/// Parses an RWBS field (see the module documentation).
pub fn parse_rwbs(s: &str) -> Result<Rwbs, String> {
    let b = s.as_bytes();
    if b.is_empty() || !b.iter().all(|c| b"RWDNFASMEB".contains(c)) {
        return Err(format!(
            "field 7 (rwbs) is not an RWBS field (R, W, D, N or F, then flags F, A, S, M): {}",
            quote(s)
        ));
    }
    // The operation is the first R, W, D or N; before it only a pre-flush F.
    match b.iter().position(|c| b"RWDN".contains(c)) {
        Some(i) if b[..i].iter().all(|&c| c == b'F') && i <= 1 => Ok(match b[i] {
            b'R' => Rwbs::Data(Op::Read),
            b'W' => Rwbs::Data(Op::Write),
            b'D' => Rwbs::Data(Op::Trim),
            _ => Rwbs::NoData,
        }),
        None if b[0] == b'F' => Ok(Rwbs::NoData),
        _ => Err(format!("field 7 (rwbs) has its operation out of place: {}", quote(s))),
    }
}

/// The blkparse line parser (stateful: requeues, counts, summary).
pub struct BlkparseParser {
    event: BlkEvent,
    /// Events per action (index into [`ACTIONS`]; unknown actions last).
    counts: [u64; ACTIONS.len() + 1],
    /// Selected events read as requests.
    requests: u64,
    /// Selected events without data or without a range.
    no_data: u64,
    /// Requeued (device, sector, nsectors) awaiting their re-dispatch.
    requeued: HashMap<(u32, u64, u64), u32>,
    redispatches_dropped: u64,
    in_summary: bool,
    summary_lines: u64,
}

impl BlkparseParser {
    pub fn new(event: BlkEvent) -> Self {
        BlkparseParser {
            event,
            counts: [0; ACTIONS.len() + 1],
            requests: 0,
            no_data: 0,
            requeued: HashMap::new(),
            redispatches_dropped: 0,
            in_summary: false,
            summary_lines: 0,
        }
    }

    /// Parses one line; `Ok(None)` for events that are not requests and
    /// summary lines.
    pub fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, String> {
        if !is_event_line(line) {
            if self.in_summary || is_summary_heading(line) {
                self.in_summary = true;
                self.summary_lines += 1;
                return Ok(None);
            }
            return Err(self.why_not_event(line));
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let action = f[5];
        let k = ACTIONS.iter().position(|a| *a == action).unwrap_or(ACTIONS.len());
        self.counts[k] += 1;
        let selected = action == self.event.action();
        let requeue = action == "R" && self.event == BlkEvent::Dispatch;
        if !selected && !requeue {
            return Ok(None);
        }
        let (major, minor) = f[0].split_once(',').unwrap_or(("", ""));
        let volume = match (major.parse::<u32>(), minor.parse::<u32>()) {
            (Ok(a), Ok(b)) if a < 1 << 12 && b < 1 << 20 => (a << 20) | b,
            _ => {
                return Err(format!(
                    "field 1 (device) is not major,minor with major < 4096 and minor < 1048576: {}",
                    quote(f[0])
                ))
            }
        };
        let time = super::parse::parse_seconds(f[3]).map_err(|_| {
            format!("field 4 (time) is out of range (at most 18446744073.709551615 s): {}", quote(f[3]))
        })?;
        let rwbs = parse_rwbs(f[6])?;
        // `sector + nsectors`, if the event has a range.
        let range = if f.len() >= 10 && f[8] == "+" {
            let num = |i: usize| {
                if !is_uint(f[i]) {
                    return Err(format!("field {} ({}) is not an integer: {}", i + 1, NAMES[i], quote(f[i])));
                }
                f[i].parse::<u64>().ok().and_then(|v| v.checked_mul(SECTOR)).ok_or_else(|| {
                    format!("field {} ({}) is out of range (64-bit byte addresses): {}", i + 1, NAMES[i], quote(f[i]))
                })
            };
            Some((num(7)?, num(9)?))
        } else {
            None
        };
        // The issuing process: the request's writer stream (with the device).
        let process = f[4]
            .parse::<u32>()
            .map_err(|_| format!("field 5 (pid) is not an integer of at most 4294967295: {}", quote(f[4])))?;
        let (Rwbs::Data(op), Some((offset, size))) = (rwbs, range) else {
            if selected {
                self.no_data += 1;
            }
            return Ok(None);
        };
        check_extent(offset, size)?;
        let key = (volume, offset, size);
        if requeue {
            *self.requeued.entry(key).or_insert(0) += 1;
            return Ok(None);
        }
        if self.event == BlkEvent::Dispatch {
            if let Some(n) = self.requeued.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    self.requeued.remove(&key);
                }
                self.redispatches_dropped += 1;
                return Ok(None);
            }
        }
        self.requests += 1;
        Ok(Some(TraceRecord { time: Nanos(time), op, offset, size, volume, content: None, hint: None, process }))
    }

    /// Why a line is not an event, field by field.
    fn why_not_event(&self, line: &str) -> String {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 7 {
            return format!("expected a blkparse event ({} ...), found {} fields", NAMES[..7].join(" "), f.len());
        }
        let checks: [(usize, bool, &str); 6] = [
            (0, is_device(f[0]), "is not major,minor"),
            (1, is_uint(f[1]), "is not an integer"),
            (2, is_uint(f[2]), "is not an integer"),
            (3, super::parse::parse_seconds_ns(f[3]).is_some(), "is not a number of seconds"),
            (4, is_uint(f[4]), "is not an integer"),
            (5, (1..=2).contains(&f[5].len()) && f[5].bytes().all(|b| b.is_ascii_alphabetic()), "is not an action"),
        ];
        for (i, ok, what) in checks {
            if !ok {
                return format!("field {} ({}) {what}: {}", i + 1, NAMES[i], quote(f[i]));
            }
        }
        format!("not a blkparse event: {}", quote(line))
    }
}

impl LineParser for BlkparseParser {
    fn line(&mut self, line: &str, line_no: u64, out: &mut Vec<Numbered>) -> Result<(), String> {
        if let Some(r) = self.parse(line)? {
            out.push((line_no, r));
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        let a = self.event.action();
        let mut others = Vec::new();
        for (i, name) in ACTIONS.iter().enumerate() {
            if *name != a && self.counts[i] > 0 {
                others.push(format!("{name} {}", self.counts[i]));
            }
        }
        if self.counts[ACTIONS.len()] > 0 {
            others.push(format!("other {}", self.counts[ACTIONS.len()]));
        }
        let mut w = Vec::new();
        let mut s = format!("blkparse: {} {a} events read as requests", self.requests);
        if !others.is_empty() {
            s.push_str(&format!(
                "; the other events (the same I/O at other stages, or no I/O) were not: {}",
                others.join(", ")
            ));
        }
        if self.no_data > 0 {
            s.push_str(&format!("; {} {a} events carried no data (flush, no range) and were skipped", self.no_data));
        }
        if self.redispatches_dropped > 0 {
            s.push_str(&format!(
                "; {} re-dispatches of requeued requests dropped (each request counted once)",
                self.redispatches_dropped
            ));
        }
        w.push(s);
        if self.requests == 0 {
            let alt: Vec<String> = ["D", "Q", "C"]
                .iter()
                .filter(|x| **x != a)
                .filter_map(|x| {
                    let i = ACTIONS.iter().position(|y| y == x)?;
                    (self.counts[i] > 0).then(|| format!("--format blkparse:{x} ({} {x} events)", self.counts[i]))
                })
                .collect();
            if !alt.is_empty() {
                w.push(format!("no {a} events in the trace: try {}", alt.join(" or ")));
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001829   697  G   W 223490 + 8 [kjournald]
  8,0    3        3     0.000002901   697  P   N [kjournald]
  8,0    3        4     0.000004170   697  Q   W 223498 + 8 [kjournald]
  8,0    3        5     0.000005012   697  M   W 223498 + 8 [kjournald]
  8,0    3        6     0.000011350   697  U   N [kjournald] 1
  8,0    3        7     0.000012100   697  I  WS 223490 + 16 [kjournald]
  8,0    3        8     0.000036306   697  D  WS 223490 + 16 [kjournald]
  8,0    0        1     0.000100000     0  R  WS 223490 + 16 [0]
  8,0    0        2     0.000200000     0  D  WS 223490 + 16 [swapper/0]
  8,0    1        1     0.003955140     0  C  WS 223490 + 16 [0]
  8,16   2        1     0.010000000  1234  Q  RA 1000 + 256 [cat]
  8,16   2        2     0.010000900  1234  D  RA 1000 + 256 [cat]
  8,16   2        3     0.010500000  1234  Q   D 5000 + 2048 [fstrim]
  8,16   2        4     0.010500500  1234  D   D 5000 + 2048 [fstrim]
  8,16   2        5     0.010600000  1234  D  FN [kworker/2:1H]
  8,16   0        0     0.011000000     0  m   N cfq1234 slice expired
  8,16   1        2     0.012000000     0  C  RA 1000 + 256 [0]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           2,        8KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        2,       16KiB
Total (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           2,        8KiB
Throughput (R/W): 0KiB/s / 2KiB/s
Events (8,0): 11 entries
Skips: 0 forward (0 -   0.0%)
";

    fn run(event: BlkEvent) -> (Vec<TraceRecord>, BlkparseParser) {
        let mut p = BlkparseParser::new(event);
        let mut out = Vec::new();
        for (i, l) in SAMPLE.lines().enumerate() {
            p.line(l.trim(), i as u64 + 1, &mut out).unwrap();
        }
        (out.into_iter().map(|(_, r)| r).collect(), p)
    }

    #[test]
    fn dispatches_are_the_requests() {
        let (r, p) = run(BlkEvent::Dispatch);
        let got: Vec<(u64, Op, u64, u64, u32)> =
            r.iter().map(|r| (r.time.0, r.op, r.offset, r.size, r.volume)).collect();
        assert_eq!(
            got,
            vec![
                (36_306, Op::Write, 223490 * 512, 8192, 8 << 20),
                (10_000_900, Op::Read, 1000 * 512, 131072, (8 << 20) | 16),
                (10_500_500, Op::Trim, 5000 * 512, 1 << 20, (8 << 20) | 16),
            ]
        );
        assert_eq!(
            p.warnings(),
            ["blkparse: 3 D events read as requests; the other events (the same I/O at other stages, or no I/O) \
              were not: Q 4, G 1, I 1, M 1, C 2, R 1, P 1, U 1, m 1; 1 D events carried no data (flush, no range) \
              and were skipped; 1 re-dispatches of requeued requests dropped (each request counted once)"]
        );
    }

    #[test]
    fn queue_and_complete_are_selectable() {
        let (q, _) = run(BlkEvent::Queue);
        assert_eq!(q.len(), 4);
        assert_eq!((q[1].offset, q[1].size), (223498 * 512, 4096));
        let (c, _) = run(BlkEvent::Complete);
        let t: Vec<u64> = c.iter().map(|r| r.time.0).collect();
        assert_eq!(t, vec![3_955_140, 12_000_000]);
    }

    #[test]
    fn rwbs_fields() {
        assert_eq!(parse_rwbs("WS"), Ok(Rwbs::Data(Op::Write)));
        assert_eq!(parse_rwbs("FWFS"), Ok(Rwbs::Data(Op::Write)));
        assert_eq!(parse_rwbs("RM"), Ok(Rwbs::Data(Op::Read)));
        assert_eq!(parse_rwbs("DE"), Ok(Rwbs::Data(Op::Trim)));
        assert_eq!(parse_rwbs("F"), Ok(Rwbs::NoData));
        assert_eq!(parse_rwbs("N"), Ok(Rwbs::NoData));
        assert!(parse_rwbs("WX").unwrap_err().starts_with("field 7 (rwbs) is not an RWBS field"));
        assert!(parse_rwbs("SW").unwrap_err().contains("out of place"));
    }

    #[test]
    fn bad_lines_say_which_field() {
        let mut p = BlkparseParser::new(BlkEvent::Dispatch);
        assert_eq!(
            p.parse("8,0 3 1 0.5 697 D W 12x + 8 [a]").unwrap_err(),
            "field 8 (sector) is not an integer: \"12x\""
        );
        assert_eq!(
            p.parse("8,0 3 1 0.5 697 D W 12 + 8x [a]").unwrap_err(),
            "field 10 (nsectors) is not an integer: \"8x\""
        );
        assert_eq!(
            p.parse("8,0 3 1 x 697 D W 12 + 8 [a]").unwrap_err(),
            "field 4 (time) is not a number of seconds: \"x\""
        );
        assert_eq!(
            p.parse("8,0 3 1 0.5 697 D Q 12 + 8 [a]").unwrap_err(),
            "field 7 (rwbs) is not an RWBS field (R, W, D, N or F, then flags F, A, S, M): \"Q\""
        );
        assert!(p.parse("9999,0 3 1 0.5 697 D W 12 + 8 [a]").unwrap_err().starts_with("field 1 (device)"));
        // Before the summary, a stray line is an error; after its heading, skipped.
        assert!(p.parse("Reads Queued: 0, 0KiB").is_err());
        assert_eq!(p.parse("CPU1 (sdb):"), Ok(None));
        assert_eq!(p.parse("Reads Queued: 0, 0KiB"), Ok(None));
    }
}
