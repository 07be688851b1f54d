//! The page-aligned workload the simulator replays.
//!
//! A [`Workload`] is a materialized list of [`Request`]s in arrival order,
//! produced by a trace reader ([`crate::trace`]) or a synthetic generator
//! ([`crate::synth`]). Workloads are plain data, shared read-only between
//! simulations (one per policy), so every policy sees exactly the same
//! requests and the same page contents.

use crate::units::{ContentId, Nanos, Op};
use serde::{Deserialize, Serialize};

/// Sentinel for [`Request::content`]: the request carries no content ids.
pub const NO_CONTENT: u32 = u32::MAX;

/// One page-aligned host request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Arrival time, relative to the start of the workload.
    pub arrival: Nanos,
    pub op: Op,
    /// First logical page.
    pub lpn: u32,
    /// Number of pages (>= 1).
    pub pages: u32,
    /// For writes: index into [`Workload::contents`] of the first page's
    /// content id (the request's pages are consecutive there), or
    /// [`NO_CONTENT`].
    pub content: u32,
}

/// Where a workload came from, printed in every output.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Short name (trace file stem or synthetic workload name).
    pub name: String,
    /// Human-readable origin, e.g. "trace: /path (fiu)" or
    /// "synthetic (Table II-matched)".
    pub source: String,
}

/// A replayable workload.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub provenance: Provenance,
    pub requests: Vec<Request>,
    /// Content ids of written pages, referenced by [`Request::content`].
    pub contents: Vec<ContentId>,
    /// Number of distinct content ids in use (ids are `0..content_space`).
    pub content_space: u32,
    /// Logical pages the workload addresses (`max lpn + pages`).
    pub lpn_span: u64,
    /// The first `precondition` requests are untimed preconditioning writes
    /// added by [`Workload::add_precondition`].
    pub precondition: u32,
}

impl Workload {
    /// Builds a workload with no content from requests; computes the span.
    pub fn from_requests(provenance: Provenance, requests: Vec<Request>) -> Self {
        let lpn_span = requests.iter().map(|r| r.lpn as u64 + r.pages as u64).max().unwrap_or(0);
        Workload { provenance, requests, contents: Vec::new(), content_space: 0, lpn_span, precondition: 0 }
    }

    /// True when every write request carries content ids.
    pub fn has_content(&self) -> bool {
        self.requests.iter().all(|r| r.op != Op::Write || r.content != NO_CONTENT)
    }

    /// Content ids of a write request's pages (empty if it has none).
    pub fn content_of(&self, r: &Request) -> &[ContentId] {
        if r.content == NO_CONTENT {
            &[]
        } else {
            let s = r.content as usize;
            &self.contents[s..s + r.pages as usize]
        }
    }

    /// SSDsim-style preconditioning (as SSDsim's trace pre-processing):
    /// every logical page that is read before it is ever written is written
    /// once, untimed, before the replay starts. The writes are prepended in
    /// order of first read, one write request per read request covering its
    /// never-written pages as maximal contiguous runs, so that such data
    /// lands on flash "as a file", like the data it stands for. Content for
    /// them is drawn by the content model like any other write, before the
    /// replayed writes' content. Idempotent.
    pub fn add_precondition(&mut self) {
        if self.precondition > 0 {
            return;
        }
        let mut seen = vec![0u64; (self.lpn_span as usize).div_ceil(64)];
        let mut pre = Vec::new();
        for r in &self.requests {
            let (a, b) = (r.lpn as usize, r.lpn as usize + r.pages as usize);
            match r.op {
                Op::Write | Op::Trim => {
                    for l in a..b {
                        seen[l / 64] |= 1 << (l % 64);
                    }
                }
                Op::Read => {
                    let mut run: Option<u32> = None;
                    for l in a..=b {
                        let unseen = l < b && seen[l / 64] & (1 << (l % 64)) == 0;
                        match (unseen, run) {
                            (true, None) => run = Some(l as u32),
                            (false, Some(s)) => {
                                pre.push(Request {
                                    arrival: Nanos::ZERO,
                                    op: Op::Write,
                                    lpn: s,
                                    pages: l as u32 - s,
                                    content: NO_CONTENT,
                                });
                                run = None;
                            }
                            _ => {}
                        }
                        if l < b {
                            seen[l / 64] |= 1 << (l % 64);
                        }
                    }
                }
            }
        }
        self.precondition = pre.len() as u32;
        pre.append(&mut self.requests);
        self.requests = pre;
    }

    /// The replayed (timed) requests, after any preconditioning writes.
    pub fn timed(&self) -> &[Request] {
        &self.requests[self.precondition as usize..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: Op, lpn: u32, pages: u32) -> Request {
        Request { arrival: Nanos::ZERO, op, lpn, pages, content: NO_CONTENT }
    }

    #[test]
    fn precondition_covers_reads_before_writes_only() {
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![
                req(Op::Write, 2, 2), // 2,3 written
                req(Op::Read, 0, 6),  // 0,1 and 4,5 unseen
                req(Op::Read, 0, 6),  // all seen now
                req(Op::Read, 10, 1), // unseen
            ],
        );
        w.add_precondition();
        assert_eq!(w.precondition, 3);
        let pre: Vec<(u32, u32)> = w.requests[..3].iter().map(|r| (r.lpn, r.pages)).collect();
        assert_eq!(pre, vec![(0, 2), (4, 2), (10, 1)]);
        assert_eq!(w.timed().len(), 4);
        w.add_precondition();
        assert_eq!(w.requests.len(), 7);
    }
}
