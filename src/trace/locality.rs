//! Locality statistics of a workload (issue 24 item 1, `trace stats`):
//! where its duplicates are in time and space, and how its reads follow
//! its writes. These decide what the dedup engines and layout policies can
//! gain, so a workload fitted to Table II's rates alone (the replicas) can
//! be told from a real one: docs/locality.md defines each figure.
//!
//! Definitions (all over the timed requests, in arrival order; preconditioning
//! is not part of the trace):
//! - a **file** is a write request (after the workload's file rule:
//!   `--files merged` joins runs first);
//! - the **write clock** counts written pages; a written page is a
//!   **duplicate** when its content was written before (anywhere);
//! - **reuse distance** of a duplicate: pages written since its content was
//!   last written (0: the page just before);
//! - a **duplicate run** is a maximal sequence of duplicate pages that are
//!   consecutive in write order and in logical address (a run continues
//!   into the next write request if it starts at the next address); its
//!   pages are **sequential** when each one's content was last written at
//!   the address after the previous one's (what Light-Dedup's hints
//!   predict, §4.3);
//! - a duplicate is **within-request** when its content was last written
//!   earlier in the same request, else **cross-request**;
//! - **read-after-write distance** of a read page: requests since its
//!   address was last written (reads of addresses the trace never wrote
//!   are counted apart: they read preconditioned data);
//! - a **whole-file re-read** is a read request covering exactly the
//!   extent of an earlier write request.

use crate::units::Op;
use crate::workload::{Workload, NO_CONTENT};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// A distribution of non-negative integers: count, mean, quantiles and
/// counts per power-of-two bucket (`buckets[0]`: the value 0; `buckets[k]`
/// for k >= 1: values in `[2^(k-1), 2^k)`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Dist {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub buckets: Vec<u64>,
    /// The 101 percentiles p0..=p100 (nearest rank), for a workload
    /// profile (`crate::profile`); not part of `trace stats --json`.
    #[serde(skip)]
    pub percentiles: Vec<u64>,
}

impl Dist {
    /// The distribution of `values` (sorted in place).
    pub fn of(values: &mut [u64]) -> Dist {
        if values.is_empty() {
            return Dist::default();
        }
        values.sort_unstable();
        let n = values.len();
        let q = |p: f64| values[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        let mut buckets = Vec::new();
        for &v in values.iter() {
            let k = (u64::BITS - v.leading_zeros()) as usize;
            if buckets.len() <= k {
                buckets.resize(k + 1, 0);
            }
            buckets[k] += 1;
        }
        Dist {
            count: n as u64,
            mean: values.iter().map(|&v| v as f64).sum::<f64>() / n as f64,
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            max: values[n - 1],
            buckets,
            percentiles: (0..=100)
                .map(|p| values[((p as f64 / 100.0 * n as f64).ceil() as usize).clamp(1, n) - 1])
                .collect(),
        }
    }

    /// One line for the table.
    fn summary(&self, unit: &str) -> String {
        if self.count == 0 {
            return "n/a (none)".into();
        }
        format!(
            "mean {:.1}{unit}, p50 {}{unit}, p90 {}{unit}, p99 {}{unit}, max {}{unit} ({} values)",
            self.mean, self.p50, self.p90, self.p99, self.max, self.count
        )
    }
}

/// The content-free part: request sizes and arrivals (any trace).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Shape {
    /// Pages per read request and per write request.
    pub read_pages: Dist,
    pub write_pages: Dist,
    /// Nanoseconds between consecutive arrivals.
    pub interarrival_ns: Dist,
    /// Read pages of addresses written earlier in the trace: requests since
    /// the last write of the address.
    pub read_after_write_requests: Dist,
    /// Read pages of addresses the trace never wrote before the read.
    pub reads_of_unwritten_pages: u64,
    /// Read requests covering exactly an earlier write request's extent,
    /// and their share of read requests.
    pub whole_file_rereads: u64,
    pub whole_file_reread_share: f64,
    /// Read requests among read and write requests (trims not counted).
    pub read_share: f64,
    /// Write requests that start where the previous write request ended.
    pub sequential_write_share: f64,
    /// Written pages whose address the trace wrote before.
    pub overwritten_page_share: f64,
    /// Distinct addresses written, and distinct addresses read while the
    /// trace had not written them (preconditioned data).
    pub written_distinct_pages: u64,
    pub unwritten_read_distinct_pages: u64,
}

/// The content part: where duplicates are (only when every write carries
/// content).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DupLocality {
    pub duplicate_pages: u64,
    /// Pages written since the duplicate's content was last written.
    pub reuse_distance_pages: Dist,
    /// Lengths of duplicate runs, in pages (module doc).
    pub run_pages: Dist,
    /// Share of duplicate pages in runs of more than 10 pages.
    pub dup_share_in_runs_over_10: f64,
    /// Share of duplicate pages that follow the previous duplicate's source
    /// (the content was last written at the next address): predictable by a
    /// hint.
    pub sequential_share: f64,
    /// Share of duplicate pages whose content was last written by the same
    /// request, and by an earlier one.
    pub within_request_share: f64,
    pub cross_request_share: f64,
    /// Distinct contents written, and the share of them written by more
    /// than one file (write request).
    pub distinct_contents: u64,
    pub shared_by_files_share: f64,
}

/// Both parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Locality {
    pub shape: Shape,
    /// `None` when some write carries no content.
    pub duplicates: Option<DupLocality>,
}

impl Locality {
    /// Read pages whose address the trace had not written, over read pages.
    pub fn unwritten_read_page_share(&self) -> f64 {
        let s = &self.shape;
        share(s.reads_of_unwritten_pages, (s.read_pages.mean * s.read_pages.count as f64).round() as u64)
    }

    /// Duplicate pages over written pages (0 without content).
    pub fn dup_page_share(&self) -> f64 {
        let s = &self.shape;
        let written = (s.write_pages.mean * s.write_pages.count as f64).round() as u64;
        share(self.duplicates.as_ref().map_or(0, |d| d.duplicate_pages), written)
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The locality statistics of `w` (module doc).
pub fn locality(w: &Workload) -> Locality {
    let timed = w.timed();
    let with_content = timed.iter().all(|r| r.op != Op::Write || r.content != NO_CONTENT);
    let (mut read_pages, mut write_pages, mut gaps, mut raw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut unwritten = 0u64;
    let (mut reads, mut rereads) = (0u64, 0u64);
    let (mut writes, mut sequential_writes, mut prev_write_end) = (0u64, 0u64, None::<u32>);
    let (mut written_pages, mut overwritten) = (0u64, 0u64);
    let mut unwritten_read: HashSet<u32> = HashSet::new();
    // Address -> index of the request that last wrote it.
    let mut last_write: HashMap<u32, u64> = HashMap::new();
    let mut extents: HashSet<(u32, u32)> = HashSet::new();
    // Content -> (write clock after its last write, address of that write,
    // request that wrote it, first file that wrote it, written by several files).
    let space = if with_content {
        w.contents.iter().map(|c| c.0 as usize + 1).max().unwrap_or(0).max(w.content_space as usize)
    } else {
        0
    };
    const NEVER: u64 = u64::MAX;
    let mut last_clock = vec![NEVER; space];
    let mut last_lpn = vec![0u32; space];
    let mut last_req = vec![0u64; space];
    let mut first_file = vec![u64::MAX; space];
    let mut multi = vec![false; space];
    let (mut clock, mut dups, mut within, mut sequential) = (0u64, 0u64, 0u64, 0u64);
    let mut distances = Vec::new();
    let mut runs = Vec::new();
    // The run in progress: its length, the address its next page must have,
    // and the source address the next page's content must come from to be
    // sequential.
    let (mut run, mut run_next_lpn, mut run_next_src) = (0u64, u32::MAX, None::<u32>);
    let mut prev_arrival = None;
    for (k, r) in timed.iter().enumerate() {
        let k = k as u64;
        if let Some(p) = prev_arrival {
            gaps.push(r.arrival.0.saturating_sub(p));
        }
        prev_arrival = Some(r.arrival.0);
        match r.op {
            Op::Trim => continue,
            Op::Read => {
                reads += 1;
                read_pages.push(u64::from(r.pages));
                if extents.contains(&(r.lpn, r.pages)) {
                    rereads += 1;
                }
                for l in r.lpn..r.lpn + r.pages {
                    match last_write.get(&l) {
                        Some(&wk) => raw.push(k - wk),
                        None => {
                            unwritten += 1;
                            unwritten_read.insert(l);
                        }
                    }
                }
            }
            Op::Write => {
                write_pages.push(u64::from(r.pages));
                writes += 1;
                if prev_write_end == Some(r.lpn) {
                    sequential_writes += 1;
                }
                prev_write_end = r.lpn.checked_add(r.pages);
                extents.insert((r.lpn, r.pages));
                written_pages += u64::from(r.pages);
                for l in r.lpn..r.lpn + r.pages {
                    if last_write.insert(l, k).is_some() {
                        overwritten += 1;
                    }
                }
                if !with_content {
                    continue;
                }
                if r.lpn != run_next_lpn && run > 0 {
                    runs.push(run);
                    run = 0;
                }
                for (i, c) in w.content_of(r).iter().enumerate() {
                    let c = c.0 as usize;
                    let lpn = r.lpn + i as u32;
                    if last_clock[c] != NEVER {
                        dups += 1;
                        distances.push(clock - last_clock[c]);
                        if last_req[c] == k {
                            within += 1;
                        }
                        if run > 0 && run_next_src == Some(last_lpn[c]) {
                            sequential += 1;
                        }
                        run += 1;
                        run_next_src = last_lpn[c].checked_add(1);
                    } else if run > 0 {
                        runs.push(run);
                        run = 0;
                    }
                    run_next_lpn = lpn.wrapping_add(1);
                    if first_file[c] == u64::MAX {
                        first_file[c] = k;
                    } else if first_file[c] != k {
                        multi[c] = true;
                    }
                    clock += 1;
                    last_clock[c] = clock;
                    last_lpn[c] = lpn;
                    last_req[c] = k;
                }
            }
        }
    }
    if run > 0 {
        runs.push(run);
    }
    let shape = Shape {
        read_pages: Dist::of(&mut read_pages),
        write_pages: Dist::of(&mut write_pages),
        interarrival_ns: Dist::of(&mut gaps),
        read_after_write_requests: Dist::of(&mut raw),
        reads_of_unwritten_pages: unwritten,
        whole_file_rereads: rereads,
        whole_file_reread_share: share(rereads, reads),
        read_share: share(reads, reads + writes),
        sequential_write_share: share(sequential_writes, writes.saturating_sub(1)),
        overwritten_page_share: share(overwritten, written_pages),
        written_distinct_pages: last_write.len() as u64,
        unwritten_read_distinct_pages: unwritten_read.len() as u64,
    };
    let duplicates = with_content.then(|| {
        let in_long: u64 = runs.iter().filter(|&&n| n > 10).sum();
        let distinct = first_file.iter().filter(|&&f| f != u64::MAX).count() as u64;
        DupLocality {
            duplicate_pages: dups,
            reuse_distance_pages: Dist::of(&mut distances),
            run_pages: Dist::of(&mut runs),
            dup_share_in_runs_over_10: share(in_long, dups),
            sequential_share: share(sequential, dups),
            within_request_share: share(within, dups),
            cross_request_share: share(dups - within, dups),
            distinct_contents: distinct,
            shared_by_files_share: share(multi.iter().filter(|&&m| m).count() as u64, distinct),
        }
    });
    Locality { shape, duplicates }
}

impl fmt::Display for Locality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: f64| format!("{:.2} %", x * 100.0);
        let s = &self.shape;
        let mut rows: Vec<(&str, String)> = vec![
            ("read size", s.read_pages.summary(" pages")),
            ("write size", s.write_pages.summary(" pages")),
            ("inter-arrival", s.interarrival_ns.summary(" ns")),
            ("read-after-write distance", s.read_after_write_requests.summary(" requests")),
            ("read requests", pct(s.read_share)),
            ("sequential writes", pct(s.sequential_write_share)),
            ("overwritten pages", pct(s.overwritten_page_share)),
            ("distinct pages written", s.written_distinct_pages.to_string()),
            ("reads of unwritten pages", s.reads_of_unwritten_pages.to_string()),
            ("distinct unwritten pages read", s.unwritten_read_distinct_pages.to_string()),
            (
                "whole-file re-reads",
                format!("{} ({} of read requests)", s.whole_file_rereads, pct(s.whole_file_reread_share)),
            ),
        ];
        match &self.duplicates {
            Some(d) => rows.extend([
                ("duplicate pages", d.duplicate_pages.to_string()),
                ("dup reuse distance", d.reuse_distance_pages.summary(" pages")),
                ("dup run length", d.run_pages.summary(" pages")),
                ("dups in runs > 10 pages", pct(d.dup_share_in_runs_over_10)),
                ("dups sequential to the last", pct(d.sequential_share)),
                (
                    "dups within / across requests",
                    format!("{} / {}", pct(d.within_request_share), pct(d.cross_request_share)),
                ),
                (
                    "contents shared by files",
                    format!("{} of {} distinct", pct(d.shared_by_files_share), d.distinct_contents),
                ),
            ]),
            None => rows.push(("duplicate locality", "n/a (some writes carry no content)".into())),
        }
        for (k, v) in rows {
            writeln!(f, "{k:<30} {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{ContentId, Nanos};
    use crate::workload::{Provenance, Request};

    fn w(reqs: &[(Op, u32, &[u32])]) -> Workload {
        let mut contents = Vec::new();
        let requests = reqs
            .iter()
            .enumerate()
            .map(|(k, &(op, lpn, c))| {
                let content = if op == Op::Write {
                    contents.extend(c.iter().map(|&x| ContentId(x)));
                    (contents.len() - c.len()) as u32
                } else {
                    NO_CONTENT
                };
                let pages = if op == Op::Write { c.len() as u32 } else { c[0] };
                Request { arrival: Nanos(k as u64 * 10), op, lpn, pages, content, stream: 0 }
            })
            .collect();
        let mut w = Workload::from_requests(Provenance { name: "t".into(), source: "test".into() }, requests);
        w.content_space = contents.iter().map(|c| c.0 + 1).max().unwrap_or(0);
        w.contents = contents;
        w
    }

    /// A hand-computed case: a file written, copied elsewhere whole (a run
    /// of 3 sequential cross-request duplicates), then a file with an
    /// in-request duplicate, then reads.
    #[test]
    fn a_copied_file_gives_a_sequential_run() {
        let l = locality(&w(&[
            (Op::Write, 0, &[1, 2, 3]),
            (Op::Write, 10, &[1, 2, 3]),
            (Op::Write, 20, &[7, 7]),
            (Op::Read, 10, &[3]),
            (Op::Read, 11, &[1]),
            (Op::Read, 50, &[1]),
        ]));
        let d = l.duplicates.unwrap();
        assert_eq!(d.duplicate_pages, 4);
        // Copies: 2 pages written after each original (distance 2); the
        // second 7 right after the first (0).
        assert_eq!((d.reuse_distance_pages.p50, d.reuse_distance_pages.max), (2, 2));
        assert_eq!(d.reuse_distance_pages.count, 4);
        assert_eq!(d.run_pages.count, 2, "runs {:?}", d.run_pages);
        assert_eq!(d.run_pages.max, 3);
        // Pages 2 and 3 of the copy follow their sources; the second 7 does
        // not (its source is LPN 20, not the run's next).
        assert!((d.sequential_share - 0.5).abs() < 1e-12);
        assert!((d.within_request_share - 0.25).abs() < 1e-12);
        assert_eq!(d.distinct_contents, 4);
        assert!((d.shared_by_files_share - 0.75).abs() < 1e-12, "1, 2, 3 in two files; 7 in one");
        let s = &l.shape;
        assert_eq!(s.whole_file_rereads, 1, "the read of 10+3 re-reads the copy");
        assert_eq!(s.reads_of_unwritten_pages, 1);
        // Read at request 3 of pages written by request 1: 2; request 4 of page 11: 3.
        assert_eq!(s.read_after_write_requests.count, 4);
        assert_eq!((s.read_after_write_requests.p50, s.read_after_write_requests.max), (2, 3));
        assert_eq!(s.interarrival_ns.p50, 10);
    }

    #[test]
    fn a_trace_without_content_has_shape_only() {
        let mut t = w(&[(Op::Write, 0, &[1, 2]), (Op::Read, 0, &[2])]);
        t.requests[0].content = NO_CONTENT;
        let l = locality(&t);
        assert!(l.duplicates.is_none());
        assert_eq!(l.shape.whole_file_rereads, 1);
        assert!(l.to_string().contains("n/a (some writes carry no content)"));
    }

    #[test]
    fn dist_quantiles_and_buckets() {
        let d = Dist::of(&mut (1..=100).collect::<Vec<u64>>());
        assert_eq!((d.p50, d.p90, d.p99, d.max), (50, 90, 99, 100));
        assert_eq!(d.buckets.iter().sum::<u64>(), 100);
        assert_eq!(d.buckets[1], 1, "the value 1");
        assert_eq!(d.buckets[7], 100 - 63, "64..=100");
        assert_eq!(Dist::of(&mut [0, 0, 5]).buckets, vec![2, 0, 0, 1]);
    }
}
