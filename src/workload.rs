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

/// Which logical pages are written, untimed, before the replay
/// (`precondition.rule`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionRule {
    /// Every page the trace reads anywhere, even a page it writes before
    /// reading it: SSDsim 2.1's trace pre-processing (`pre_process_page`).
    #[default]
    AllReads,
    /// Only pages read before they are ever written (dedupsim's rule before
    /// SSDsim agreement; MQSim maps such pages on their first read).
    ReadsBeforeWrites,
    /// Nothing: reads of never-written pages cost no flash access.
    None,
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

    /// Preconditioning with the pages-read-before-written rule
    /// ([`PreconditionRule::ReadsBeforeWrites`]); see
    /// [`Workload::add_precondition_with`].
    pub fn add_precondition(&mut self) {
        self.add_precondition_with(PreconditionRule::ReadsBeforeWrites);
    }

    /// Prepends untimed preconditioning writes chosen by `rule`: every
    /// logical page the rule selects is written once before the replay
    /// starts. The writes are prepended in order of first read, one write
    /// request per read request covering its selected pages not yet
    /// preconditioned, as maximal contiguous runs, so that such data
    /// lands on flash "as a file", like the data it stands for. Content for
    /// them is drawn by the content model like any other write, before the
    /// replayed writes' content. Idempotent.
    pub fn add_precondition_with(&mut self, rule: PreconditionRule) {
        if self.precondition > 0 || rule == PreconditionRule::None {
            return;
        }
        // Whether writes and trims count as "seen" (only pages read before
        // they are written are preconditioned) or not (every page read).
        let writes_count = rule == PreconditionRule::ReadsBeforeWrites;
        let mut seen = vec![0u64; (self.lpn_span as usize).div_ceil(64)];
        let mut pre = Vec::new();
        for r in &self.requests {
            let (a, b) = (r.lpn as usize, r.lpn as usize + r.pages as usize);
            match r.op {
                Op::Write | Op::Trim if writes_count => {
                    for l in a..b {
                        seen[l / 64] |= 1 << (l % 64);
                    }
                }
                Op::Write | Op::Trim => {}
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

    #[test]
    fn all_reads_rule_preconditions_every_page_read() {
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![
                req(Op::Write, 2, 2), // written first, still preconditioned when read
                req(Op::Read, 0, 6),
                req(Op::Read, 0, 6), // already preconditioned
                req(Op::Read, 10, 1),
            ],
        );
        w.add_precondition_with(PreconditionRule::AllReads);
        let pre: Vec<(u32, u32)> = w.requests[..w.precondition as usize].iter().map(|r| (r.lpn, r.pages)).collect();
        assert_eq!(pre, vec![(0, 6), (10, 1)]);
        let mut none = Workload::from_requests(Provenance::default(), vec![req(Op::Read, 0, 6)]);
        none.add_precondition_with(PreconditionRule::None);
        assert_eq!(none.precondition, 0);
    }
}
