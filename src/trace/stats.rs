//! Workload characteristics in the style of FAD's Table II.
//!
//! Computed on the page-aligned [`Workload`], so sizes are whole pages: a
//! 2 KiB trace request counts as one 4 KiB page. (Byte-exact averages of the
//! raw trace are available from [`super::read_records`].) Ratios and averages
//! are over requests (by count), as in the SOURCE notes of the samples and
//! in FAD's table. Preconditioning writes ([`Workload::add_precondition`])
//! are not part of the trace and are excluded.

use crate::units::Op;
use crate::workload::{Hint, Workload, NO_CONTENT};
use serde::Serialize;
use std::fmt;

/// Characteristics of a workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStats {
    /// Workload name (provenance).
    pub name: String,
    /// Where the workload came from (provenance), e.g. a native trace
    /// written from a Table II replica says so.
    pub source: String,
    /// Page size the workload was aligned to, in bytes.
    pub page_size: u32,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    /// reads / (reads + writes), by count (0 if there are neither).
    pub read_ratio: f64,
    /// Mean size of reads and writes (trims excluded), KiB.
    pub avg_request_kib: f64,
    pub avg_read_kib: f64,
    pub avg_write_kib: f64,
    /// Distinct pages read or written.
    pub footprint_pages: u64,
    /// The footprint in GiB.
    pub footprint_gib: f64,
    /// Last arrival minus first arrival, seconds.
    pub duration_s: f64,
    /// Pages written (sum over write requests).
    pub pages_written: u64,
    /// Distinct content ids among written pages, when every write has content.
    pub distinct_written: Option<u64>,
    /// 1 - distinct_written / pages_written, when every write has content.
    pub dedup_rate: Option<f64>,
    /// Write requests without content ids (the dedup rate is n/a when this
    /// is not 0).
    pub writes_without_content: u64,
    /// Writes with an explicit append / overwrite hint (native format
    /// column 7; [`crate::workload::Hint`]).
    pub append_hints: u64,
    pub overwrite_hints: u64,
}

/// Statistics of a workload with 4 KiB pages.
pub fn stats(w: &Workload) -> TraceStats {
    stats_with_page_size(w, 4096)
}

/// Statistics of a workload aligned to `page_size`-byte pages.
pub fn stats_with_page_size(w: &Workload, page_size: u32) -> TraceStats {
    let kib_per_page = f64::from(page_size) / 1024.0;
    let (mut reads, mut writes, mut trims) = (0u64, 0u64, 0u64);
    let (mut read_pages, mut write_pages) = (0u64, 0u64);
    let mut extents: Vec<(u32, u32)> = Vec::with_capacity(w.requests.len());
    let (mut t_min, mut t_max) = (u64::MAX, 0u64);
    let timed = w.timed();
    for r in timed {
        match r.op {
            Op::Read => {
                reads += 1;
                read_pages += u64::from(r.pages);
            }
            Op::Write => {
                writes += 1;
                write_pages += u64::from(r.pages);
            }
            Op::Trim => {
                trims += 1;
                continue;
            }
        }
        extents.push((r.lpn, r.pages));
        t_min = t_min.min(r.arrival.0);
        t_max = t_max.max(r.arrival.0);
    }
    let footprint_pages = footprint(&mut extents);
    let avg = |pages: u64, n: u64| {
        if n == 0 {
            0.0
        } else {
            pages as f64 * kib_per_page / n as f64
        }
    };
    let rw = reads + writes;
    let writes_without_content = timed.iter().filter(|r| r.op == Op::Write && r.content == NO_CONTENT).count() as u64;
    let (distinct_written, dedup_rate) = if write_pages > 0 && writes_without_content == 0 {
        let d = distinct_written(w);
        (Some(d), Some(1.0 - d as f64 / write_pages as f64))
    } else {
        (None, None)
    };
    TraceStats {
        name: w.provenance.name.clone(),
        source: w.provenance.source.clone(),
        page_size,
        requests: timed.len() as u64,
        reads,
        writes,
        trims,
        read_ratio: if rw == 0 { 0.0 } else { reads as f64 / rw as f64 },
        avg_request_kib: avg(read_pages + write_pages, rw),
        avg_read_kib: avg(read_pages, reads),
        avg_write_kib: avg(write_pages, writes),
        footprint_pages,
        footprint_gib: footprint_pages as f64 * f64::from(page_size) / (1u64 << 30) as f64,
        duration_s: if t_min == u64::MAX { 0.0 } else { (t_max - t_min) as f64 / 1e9 },
        pages_written: write_pages,
        distinct_written,
        dedup_rate,
        writes_without_content,
        append_hints: w.hints.iter().filter(|(_, h)| matches!(h, Hint::Append { .. })).count() as u64,
        overwrite_hints: w.hints.iter().filter(|(_, h)| *h == Hint::Overwrite).count() as u64,
    }
}

/// Size of the union of page extents: sort by start and sweep, O(n log n)
/// time and no memory proportional to the address space (traces span TBs).
fn footprint(extents: &mut [(u32, u32)]) -> u64 {
    extents.sort_unstable();
    let mut total = 0u64;
    let mut covered_to = 0u64; // end of the union so far
    for &(lpn, pages) in extents.iter() {
        let (s, e) = (u64::from(lpn), u64::from(lpn) + u64::from(pages));
        if e > covered_to {
            total += e - s.max(covered_to);
            covered_to = e;
        }
    }
    total
}

/// Distinct content ids among written pages, with a bitset over the dense
/// id space.
fn distinct_written(w: &Workload) -> u64 {
    let space = w.contents.iter().map(|c| c.0 as usize + 1).max().unwrap_or(0).max(w.content_space as usize);
    let mut bits = vec![0u64; space.div_ceil(64)];
    let mut distinct = 0u64;
    for r in w.timed() {
        if r.op != Op::Write || r.content == NO_CONTENT {
            continue;
        }
        for c in w.content_of(r) {
            let (word, bit) = (c.0 as usize / 64, 1u64 << (c.0 % 64));
            if bits[word] & bit == 0 {
                bits[word] |= bit;
                distinct += 1;
            }
        }
    }
    distinct
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: f64| format!("{:.2} %", x * 100.0);
        let mut rows: Vec<(&str, String)> = vec![
            ("workload", self.name.clone()),
            ("source", self.source.clone()),
            ("requests", self.requests.to_string()),
            ("  reads", self.reads.to_string()),
            ("  writes", self.writes.to_string()),
        ];
        if self.trims > 0 {
            rows.push(("  trims", self.trims.to_string()));
        }
        rows.extend([
            ("read ratio (count)", pct(self.read_ratio)),
            ("avg request size", format!("{:.2} KiB", self.avg_request_kib)),
            // A trace without reads (or writes) has no average: n/a, as `run` says.
            ("avg read size", if self.reads > 0 { format!("{:.2} KiB", self.avg_read_kib) } else { "n/a".into() }),
            ("avg write size", if self.writes > 0 { format!("{:.2} KiB", self.avg_write_kib) } else { "n/a".into() }),
            (
                "footprint",
                format!("{} pages of {} B ({:.3} GiB)", self.footprint_pages, self.page_size, self.footprint_gib),
            ),
            ("duration", short_duration(self.duration_s)),
            ("pages written", self.pages_written.to_string()),
        ]);
        match (self.dedup_rate, self.distinct_written) {
            (Some(rate), Some(d)) => rows.push(("dedup rate", format!("{} ({d} distinct contents)", pct(rate)))),
            _ if self.writes_without_content > 0 && self.writes_without_content < self.writes => rows.push((
                "dedup rate",
                format!("n/a ({} of {} write requests carry no content)", self.writes_without_content, self.writes),
            )),
            _ => rows.push(("dedup rate", "n/a (no content)".into())),
        }
        if self.append_hints + self.overwrite_hints > 0 {
            rows.push(("write hints", format!("{} append, {} overwrite", self.append_hints, self.overwrite_hints)));
        }
        let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (k, v) in rows {
            writeln!(f, "{k:<width$}  {v}")?;
        }
        Ok(())
    }
}

/// A duration in the unit that shows it: `2.000 s`, `300.000 µs` (not
/// `0.000 s`), `1.500 ms`.
fn short_duration(s: f64) -> String {
    if s == 0.0 || s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.3} µs", s * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{ContentId, Nanos};
    use crate::workload::{Provenance, Request};

    fn req(arrival: u64, op: Op, lpn: u32, pages: u32, content: u32) -> Request {
        Request { arrival: Nanos(arrival), op, lpn, pages, content, stream: 0 }
    }

    #[test]
    fn counts_ratios_footprint_dedup() {
        let w = Workload {
            provenance: Provenance::default(),
            requests: vec![
                req(0, Op::Write, 0, 2, 0),
                req(1_000_000_000, Op::Write, 1, 2, 2),
                req(2_000_000_000, Op::Read, 10, 1, NO_CONTENT),
                req(3_000_000_000, Op::Trim, 50, 5, NO_CONTENT),
            ],
            contents: vec![ContentId(0), ContentId(1), ContentId(1), ContentId(0)],
            content_space: 2,
            lpn_span: 55,
            ..Workload::default()
        };
        let s = stats(&w);
        assert_eq!((s.requests, s.reads, s.writes, s.trims), (4, 1, 2, 1));
        assert!((s.read_ratio - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.footprint_pages, 4);
        assert_eq!(s.avg_write_kib, 8.0);
        assert_eq!(s.avg_request_kib, 20.0 / 3.0);
        assert_eq!(s.duration_s, 2.0);
        assert_eq!(s.dedup_rate, Some(0.5));
        let text = s.to_string();
        assert!(
            text.lines().any(|l| l.starts_with("dedup rate ") && l.ends_with("50.00 % (2 distinct contents)")),
            "{text}"
        );
    }

    #[test]
    fn partly_missing_content_is_counted() {
        let w = Workload {
            requests: vec![
                req(0, Op::Write, 0, 1, 0),
                req(1, Op::Write, 1, 1, NO_CONTENT),
                req(2, Op::Read, 0, 1, NO_CONTENT),
            ],
            contents: vec![ContentId(0)],
            content_space: 1,
            lpn_span: 2,
            ..Workload::default()
        };
        let s = stats(&w);
        assert_eq!((s.dedup_rate, s.writes_without_content), (None, 1));
        assert!(s.to_string().contains("dedup rate          n/a (1 of 2 write requests carry no content)"), "{s}");
        let none = Workload { requests: vec![req(0, Op::Write, 0, 1, NO_CONTENT)], lpn_span: 1, ..Workload::default() };
        assert!(stats(&none).to_string().contains("n/a (no content)"));
    }

    #[test]
    fn footprint_merges_overlaps() {
        let mut e = vec![(10, 5), (0, 3), (12, 10), (2, 1), (30, 1)];
        assert_eq!(footprint(&mut e), 3 + 12 + 1);
    }
}
