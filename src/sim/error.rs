//! Errors that stop a simulation.

use crate::engine::EngineError;
use crate::ftl::{FtlError, InvariantViolation};
use thiserror::Error;

/// Errors that stop a simulation.
#[derive(Debug, Error)]
pub enum SimError {
    /// A batch-fed replay ([`Simulation::replaying`](super::Simulation::replaying)) got its requests out
    /// of order, or not as many as its plan announced (a trace file that
    /// changed between its two passes).
    #[error("replay: {0}")]
    Order(&'static str),
    #[error(transparent)]
    Ftl(#[from] FtlError),
    #[error(transparent)]
    Invariant(#[from] InvariantViolation),
    #[error("request {index}: write of {pages} pages carries no content ids (assign a content model first)")]
    NoContent { index: usize, pages: u32 },
    #[error(
        "request {index}: a stream gives the fingerprints of every write's pages or of none \
         ({pages} pages, {given} fingerprints)"
    )]
    Fingerprints { index: usize, pages: u32, given: usize },
    #[error("the workload contains no requests to replay")]
    Empty,
    #[error(
        "the workload addresses {span} logical pages but the device exposes {capacity}; \
         use a larger device (--set geometry.blocks_per_plane=...) or a smaller workload (footprint= \
         of a synthetic spec, NAME@SCALE of a replica; `run --trace FILE --wrap` folds a trace)"
    )]
    TooLarge { span: u64, capacity: u64 },
    #[error(
        "the workload spans {span_s:.0} s of simulated time{}, beyond the simulator's clock range of \
         {limit_s:.0} s; {}",
        if *scale == 1.0 { String::new() } else { format!(" (x replay.time_scale {scale})") },
        if *scale == 1.0 { "check the trace's time unit (or a synthetic spec's iat=)" } else { "check the trace's time unit or lower replay.time_scale" }
    )]
    TimeRange { span_s: f64, scale: f64, limit_s: f64 },
    #[error("policy '{policy}' returned {got} actions for a {want}-page write")]
    BadPlan { policy: String, got: usize, want: usize },
    #[error("policy '{policy}' asked to reference page {page} which has no duplicate")]
    BadReference { policy: String, page: usize },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("dedup engine '{engine}' returned {verdicts} verdicts and {hashed} hash flags for a {want}-page write")]
    BadEngine { engine: String, verdicts: usize, hashed: usize, want: usize },
}
