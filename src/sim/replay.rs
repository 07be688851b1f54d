//! The replay driver: requests in arrival order, each submitted at its
//! issue time (open loop: its scaled arrival; closed loop: when one of the
//! `queue_depth` slots frees, collecting the earliest certain completion),
//! one request at a time, through the one interface of every driver
//! ([`super::submit`]: `submit_request` / `collect`).
//!
//! Two ways in, one request path:
//!
//! * [`Simulation::run`]: a workload held whole in memory
//!   ([`Simulation::new`]).
//! * [`Simulation::replaying`]: a workload fed in batches as its source
//!   produces them (`run --trace` reads the trace file as it replays it:
//!   [`crate::runner::run_streamed`]), so that memory does not grow with
//!   the trace. What the simulation must know of the whole workload before
//!   the first request (its size, time span, logical span, content id
//!   space, read pages, whether it carries hints) is the [`ReplayPlan`],
//!   which the source's first pass gathers. Preconditioning writes come
//!   first ([`Simulation::replay_precondition`]), then the timed requests
//!   ([`Simulation::replay_batch`]), then [`Simulation::replay_end`].
//!
//! Both ways run the same per-request code (`Simulation::timed_request`,
//! a client of `Simulation::submit_request`, which `Simulation::submit`,
//! the streaming interface of `dedupsim serve`, wraps), so a workload
//! replayed from batches gives the output of the same workload held whole,
//! byte for byte (a test, and `cmp` of `run --json` outputs:
//! docs/streaming.md).

use super::alloc::PreconditionAllocator;
use super::{RequestHint, RunOutput, SimError, Simulation, Until};
use crate::config::{Config, ReplayConfig};
use crate::engine::Engine;
use crate::ftl::Ftl;
use crate::policy::Policy;
use crate::units::{ContentId, Nanos, Op};
use crate::workload::{Request, Workload};

use super::{PREFETCH_AHEAD, PREFETCH_PAGES};

/// What a replay must know of its whole workload before its first request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayPlan {
    /// Timed (replayed) requests: at least one.
    pub timed: u64,
    /// Arrivals of the first and the last timed request (the open-loop
    /// replay's span is checked against the clock's range).
    pub first_arrival: Nanos,
    pub last_arrival: Nanos,
    /// Logical pages addressed (`max lpn + pages`), preconditioning
    /// included.
    pub lpn_span: u64,
    /// Content ids are below this.
    pub content_space: u32,
    /// Pages of the timed reads (`allocation = "dynamic"`: SSDsim's
    /// pre-processing counts a program per page read).
    pub read_pages: u64,
    /// Whether the workload carries explicit write hints
    /// ([`Workload::hints`] not empty).
    pub hinted: bool,
    /// Preconditioned pages carrying the trace's own contents
    /// ([`Workload::precondition_past_pages`]): they resolve
    /// `precondition.placement = "auto"`.
    pub precondition_past_pages: u64,
}

impl ReplayPlan {
    /// The plan of a workload held whole.
    pub fn of(w: &Workload) -> ReplayPlan {
        let timed = w.timed();
        ReplayPlan {
            timed: timed.len() as u64,
            first_arrival: timed.first().map_or(Nanos::ZERO, |r| r.arrival),
            last_arrival: timed.last().map_or(Nanos::ZERO, |r| r.arrival),
            lpn_span: w.lpn_span,
            content_space: w.content_space,
            read_pages: timed.iter().filter(|r| r.op == Op::Read).map(|r| u64::from(r.pages)).sum(),
            hinted: !w.hints.is_empty(),
            precondition_past_pages: w.precondition_past_pages,
        }
    }
}

/// A batch of requests fed to [`Simulation::replay_batch`] (or
/// [`Simulation::replay_precondition`]): every request of `workload`
/// (whose own `precondition` is 0), with its contents and hints.
pub type ReplayBatch = Workload;

/// The replay's counts (its clock is the shared one, [`super::submit`]).
#[derive(Clone, Debug, Default)]
pub(super) struct ReplayState {
    /// Preconditioning writes replayed so far.
    pre: u64,
    /// The timed replay has begun ([`Simulation::begin_timed`]).
    timed: bool,
    /// Arrival of the first timed request.
    base: Nanos,
    /// From the plan: timed requests, and whether hints are carried.
    total: u64,
    hinted: bool,
}

impl<'w> Simulation<'w> {
    /// A simulation replaying a workload described by `plan`, fed in
    /// batches (module doc), with `policy` and `engine` configured by `cfg`.
    pub fn replaying(
        cfg: &Config,
        plan: &ReplayPlan,
        policy: Box<dyn Policy>,
        engine: Box<dyn Engine>,
        opts: super::RunOptions,
    ) -> Result<Self, SimError> {
        let mut sim = Self::build(cfg, Some(plan), policy, engine, opts)?;
        sim.replay_state.total = plan.timed;
        sim.replay_state.hinted = plan.hinted;
        Ok(sim)
    }

    /// Replays the whole workload. `progress(done, total)` is called every
    /// 65,536 requests (the caller may draw a progress bar).
    pub fn run(self, progress: &mut dyn FnMut(u64, u64)) -> Result<RunOutput, SimError> {
        self.run_keep(progress).map(|(out, _)| out)
    }

    /// Like [`Simulation::run`], also returning the final FTL state (tests).
    pub fn run_keep(mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<(RunOutput, Ftl), SimError> {
        let w = self.workload.ok_or(SimError::Empty)?;
        let pre = w.precondition as usize;
        self.replay_state.total = w.timed().len() as u64;
        self.replay_state.hinted = !w.hints.is_empty();
        self.precondition_requests(w, &w.requests[..pre])?;
        self.timed_requests(w, pre, progress)?;
        self.end_keep_replay(progress)
    }

    /// Preconditioning writes, all of `batch`'s requests, before any timed
    /// request (module doc).
    pub fn replay_precondition(&mut self, batch: &ReplayBatch) -> Result<(), SimError> {
        if self.replay_state.timed {
            return Err(SimError::Order("preconditioning writes after the timed replay began"));
        }
        self.precondition_requests(batch, &batch.requests)
    }

    /// The next timed requests: all of `batch`'s, in order.
    pub fn replay_batch(&mut self, batch: &ReplayBatch, progress: &mut dyn FnMut(u64, u64)) -> Result<(), SimError> {
        if self.clock.submitted + batch.requests.len() as u64 > self.replay_state.total {
            return Err(SimError::Order("more timed requests than the replay plan announced"));
        }
        self.timed_requests(batch, 0, progress)
    }

    /// Ends a batch-fed replay: the idle time after the last arrival, every
    /// queued operation, the final check; the run's output.
    pub fn replay_end(self, progress: &mut dyn FnMut(u64, u64)) -> Result<RunOutput, SimError> {
        if self.clock.submitted != self.replay_state.total {
            return Err(SimError::Order("fewer timed requests than the replay plan announced"));
        }
        self.end_keep_replay(progress).map(|(out, _)| out)
    }

    fn end_keep_replay(self, progress: &mut dyn FnMut(u64, u64)) -> Result<(RunOutput, Ftl), SimError> {
        if self.clock.submitted == 0 {
            return Err(SimError::Empty);
        }
        let total = self.replay_state.total;
        let out = self.conclude()?;
        progress(total, total);
        Ok(out)
    }

    /// Preconditioning writes `reqs` (requests of `w`, for their contents).
    fn precondition_requests(&mut self, w: &Workload, reqs: &[Request]) -> Result<(), SimError> {
        let hint = if self.replay_state.hinted { RequestHint::Unhinted } else { RequestHint::Absent };
        let by_policy = self.alloc.precondition == PreconditionAllocator::Policy;
        for (i, r) in reqs.iter().enumerate() {
            let index = self.replay_state.pre as usize;
            if by_policy {
                self.prefetch_ahead(w, reqs, i);
                self.write(index, r, w.content_of(r), hint, Nanos::ZERO, false)?;
            } else {
                self.prefetch_precondition(w, reqs, i);
                self.precondition_round_robin(index, r, w.content_of(r))?;
            }
            self.metrics.counters.precondition_requests += 1;
            self.replay_state.pre += 1;
        }
        Ok(())
    }

    /// [`Self::prefetch_ahead`] for preconditioning writes placed without
    /// the policy ([`Self::precondition_round_robin`]), which only map
    /// pages never mapped before (each page is preconditioned once): their
    /// L2P slots, and where a content is indexed, its index slot (FTL) or
    /// the engine's; no old copy to release, so none of its links. Hints
    /// only: no effect on any result.
    #[inline]
    fn prefetch_precondition(&self, w: &Workload, reqs: &[Request], k: usize) {
        if let Some(n) = reqs.get(k + PREFETCH_AHEAD) {
            self.ftl.prefetch_mapping(n.lpn, n.pages.min(PREFETCH_PAGES));
            if self.dedup && !self.ftl_index {
                self.engine_prefetch(w.content_of(n), 0);
            }
        }
        if !self.dedup {
            return;
        }
        if let Some(n) = reqs.get(k + PREFETCH_AHEAD / 2) {
            self.prefetch_index_step(w.content_of(n));
        }
        if let Some(n) = reqs.get(k + PREFETCH_AHEAD / 4) {
            if !self.ftl_index {
                self.engine_prefetch(w.content_of(n), 2);
            }
        }
    }

    /// The timed replay begins: policy statistics count from here, and
    /// dynamic allocation's chip tokens are where preconditioning left them.
    fn begin_timed(&mut self) {
        self.replay_state.timed = true;
        // Policy statistics count the timed writes only.
        self.policy.begin_replay();
        if self.alloc.dynamic() {
            // Each channel's chip token where SSDsim's pre-processing leaves
            // it: its pages modulo its chips. Round-robin preconditioning put
            // page i on unit i mod units.
            let geo = self.ftl.geometry();
            let (n, units) = (u64::from(self.precondition_next), u64::from(self.units));
            let mut per_channel = vec![0u64; geo.channels as usize];
            for u in 0..self.units {
                let pages = n / units + u64::from(u64::from(u) < n % units);
                per_channel[geo.channel_of_chip(self.unit_chip[u as usize]) as usize] += pages;
            }
            let chips = u64::from(geo.chips_per_channel);
            self.timing.set_chip_tokens(per_channel.into_iter().map(|p| (p % chips) as u32));
        }
    }

    /// The timed requests of `w` from index `from` on.
    fn timed_requests(
        &mut self,
        w: &Workload,
        from: usize,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), SimError> {
        if !self.replay_state.timed {
            self.begin_timed();
        }
        let reqs = &w.requests[from..];
        for (j, r) in reqs.iter().enumerate() {
            self.prefetch_ahead(w, reqs, j);
            let hint = if self.replay_state.hinted {
                w.hint_of(from + j).map_or(RequestHint::Unhinted, RequestHint::Given)
            } else {
                RequestHint::Absent
            };
            self.timed_request(r, w.content_of(r), hint)?;
            let k = self.clock.submitted;
            if k % 65_536 == 0 {
                progress(k, self.replay_state.total);
            }
        }
        Ok(())
    }

    /// The middle step of a deduplicating write's prefetch, for `contents`
    /// half the look-ahead away: the engine's index slot (step 1), or the
    /// FTL's fingerprint index when it keeps one.
    #[inline]
    fn prefetch_index_step(&self, contents: &[ContentId]) {
        if !self.ftl_index {
            self.engine_prefetch(contents, 1);
        } else {
            for &c in contents.iter().take(PREFETCH_PAGES as usize) {
                self.ftl.prefetch_index(c);
            }
        }
    }

    /// Overlaps the mapping-table misses of the requests after `reqs[k]`
    /// with `reqs[k]`'s work: each distance prefetches one more link of
    /// their dependent chains (L2P slot, then entry and index slot, then
    /// reverse map, block metadata and the duplicate's entry). Hints only:
    /// no effect on any result.
    #[inline]
    fn prefetch_ahead(&self, w: &Workload, reqs: &[Request], k: usize) {
        if let Some(n) = reqs.get(k + PREFETCH_AHEAD) {
            self.ftl.prefetch_mapping(n.lpn, n.pages.min(PREFETCH_PAGES));
            if n.op == Op::Write && self.dedup && !self.ftl_index {
                self.engine_prefetch(w.content_of(n), 0);
            }
        }
        if let Some(n) = reqs.get(k + PREFETCH_AHEAD / 2) {
            self.ftl.prefetch_entry(n.lpn, n.pages.min(PREFETCH_PAGES), n.op != Op::Read);
            if n.op == Op::Write && self.dedup {
                self.prefetch_index_step(w.content_of(n));
            }
        }
        if let Some(n) = reqs.get(k + PREFETCH_AHEAD / 4) {
            if n.op != Op::Read {
                self.ftl.prefetch_release(n.lpn, n.pages.min(PREFETCH_PAGES));
            }
            if n.op == Op::Write && self.dedup {
                if !self.ftl_index {
                    self.engine_prefetch(w.content_of(n), 2);
                } else {
                    for &c in w.content_of(n).iter().take(PREFETCH_PAGES as usize) {
                        self.ftl.prefetch_duplicate(c);
                    }
                }
            }
        }
    }

    /// One timed request, submitted at the time its replay mode gives
    /// ([`super::submit`]): open loop, its trace time rebased to the first
    /// request's and scaled (raised to the floor, the previous arrival);
    /// closed loop, once fewer than `queue_depth` requests are outstanding,
    /// collecting the earliest certain completion while they are not (the
    /// floor, where it arrives, is then the latest completion collected).
    fn timed_request(&mut self, r: &Request, contents: &[ContentId], hint: RequestHint) -> Result<(), SimError> {
        let k = self.clock.submitted;
        let at = match self.replay {
            ReplayConfig::OpenLoop { time_scale } => {
                if k == 0 {
                    self.replay_state.base = r.arrival;
                }
                let rel = (r.arrival - self.replay_state.base).0;
                if time_scale == 1.0 {
                    Nanos(rel)
                } else {
                    Nanos((rel as f64 * time_scale) as u64)
                }
            }
            ReplayConfig::ClosedLoop { queue_depth } => {
                // A slot frees at the earliest completion.
                while self.outstanding() >= u64::from(queue_depth) && self.collect(Until::Next)?.is_some() {}
                Nanos::ZERO
            }
        };
        let index = (self.replay_state.pre + k) as usize;
        self.submit_request(r, contents, hint, k, index, at)?;
        Ok(())
    }
}
