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
}

impl Workload {
    /// Builds a workload with no content from requests; computes the span.
    pub fn from_requests(provenance: Provenance, requests: Vec<Request>) -> Self {
        let lpn_span = requests
            .iter()
            .map(|r| r.lpn as u64 + r.pages as u64)
            .max()
            .unwrap_or(0);
        Workload {
            provenance,
            requests,
            contents: Vec::new(),
            content_space: 0,
            lpn_span,
        }
    }

    /// True when every write request carries content ids.
    pub fn has_content(&self) -> bool {
        self.requests
            .iter()
            .all(|r| r.op != Op::Write || r.content != NO_CONTENT)
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
}
