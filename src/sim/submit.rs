//! The one interface every driver uses: **submit a request at time t,
//! collect completions up to time t'** (issue 25 item 3).
//!
//! * [`Simulation::submit_request`] (the step [`Simulation::submit`]
//!   wraps with the checks of a request from outside): the request arrives
//!   at the later of `t` and the *floor* (the previous arrival, or the
//!   latest completion handed out if later: the simulation may have
//!   decided events up to it), after the idle time before it was offered
//!   to background work, and goes down the request path once.
//! * [`Simulation::collect`]: the next completion, once it is certain (no
//!   operation still to simulate could end earlier): with
//!   [`Until::Next`] simulating as far as needed (the closed loop's wait
//!   for a free slot, `serve`'s wait for a client's reply), with
//!   [`Until::Time`] only if it comes at or before `t'`, simulating only
//!   what lies before `t'` (so that a request submitted at `t'` afterwards
//!   meets the same device state). A completion handed out raises the
//!   floor.
//!
//! The three drivers are small loops above that pair, one request at a
//! time: the open-loop replay submits each request at its scaled trace
//! time and never collects (its arrivals do not depend on completions,
//! which go to the metrics only); the closed-loop replay collects
//! ([`Until::Next`]) while `queue_depth` requests are outstanding and
//! submits at the floor ([`super::replay`]); a stream (`dedupsim serve`,
//! [`super::stream`]) submits at its clients' times and collects as they
//! wait for replies.
//!
//! # Idle time: the driver's rule ([`IdleFrom`])
//!
//! The gap before an arrival is offered to the engine's and the policy's
//! background work from a point the driver chooses when the simulation is
//! built: a replay from the floor (open loop: the previous arrival, since
//! it hands out no completion; closed loop: the floor, where its next
//! request arrives, so it never has a gap), a stream from the previous
//! arrival whatever was handed out since (docs/simulator.md, "Drivers").
//! The same point opens the idle time after the last arrival at the end.

use super::{RequestHint, RequestRecord, SimError, Simulation};
use crate::timing::Step;
pub use crate::timing::Until;
use crate::units::{ContentId, Nanos, Op};
use crate::workload::Request;

/// Where the idle time before an arrival starts (module doc), chosen when
/// the simulation is built.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) enum IdleFrom {
    /// From the floor: the previous arrival or the latest completion
    /// handed out, whichever is later (the replay).
    #[default]
    Floor,
    /// From the previous arrival, whatever was handed out since (a
    /// stream: its arrival times come from its clients).
    LastArrival,
}

/// The arrival clock and counts shared by every driver.
#[derive(Clone, Debug, Default)]
pub(super) struct Clock {
    /// The driver's idle rule.
    pub(super) idle_from: IdleFrom,
    /// No arrival may come before this (module doc).
    pub(super) floor: Nanos,
    /// The last arrival.
    pub(super) last: Nanos,
    /// Requests submitted, and those whose completion was handed out.
    pub(super) submitted: u64,
    pub(super) completed: u64,
}

impl Clock {
    /// Where the idle time after the last arrival starts ([`IdleFrom`]).
    #[inline]
    pub(super) fn idle_start(&self) -> Nanos {
        match self.idle_from {
            IdleFrom::Floor => self.floor,
            IdleFrom::LastArrival => self.last,
        }
    }
}

impl Simulation<'_> {
    /// Requests submitted whose completion has not been handed out.
    pub fn outstanding(&self) -> u64 {
        self.clock.submitted - self.clock.completed
    }

    /// The earliest time the next request can arrive (module doc).
    pub fn floor(&self) -> Nanos {
        self.clock.floor
    }

    /// The next completion `(tag, completion)` once it is certain, up to
    /// `until` (module doc); `None` when nothing is outstanding, or (with
    /// [`Until::Time`]) when no completion is certain by then. A
    /// simulation hands out completions only when built to (closed-loop
    /// replay, stream); an open-loop replay's go to its metrics only.
    ///
    /// Under `allocation = "dynamic"` the page writes waiting to be placed
    /// are placed first, one at a time, as far as they are due before
    /// anything still unknown (`place_due`): a waiting write's
    /// completion is unknown until it is placed, so it is placed before
    /// any later completion is vouched for. The error is a placement's
    /// (the device full).
    pub fn collect(&mut self, until: Until) -> Result<Option<(u64, Nanos)>, SimError> {
        loop {
            if self.alloc.dynamic() {
                self.place_due(until)?;
            }
            match self.timing.step_certain(until) {
                Step::Completion { tag, at } => {
                    self.clock.completed += 1;
                    self.clock.floor = self.clock.floor.max(at);
                    return Ok(Some((tag, at)));
                }
                Step::Progressed => self.apply_completions(),
                Step::Reached | Step::Idle => return Ok(None),
            }
        }
    }

    /// Submits request `r` (its page contents and hint; `tag` is handed
    /// back with its completion, `index` names it in errors) arriving at
    /// `at`, raised to the floor; returns the arrival used. The one
    /// request step of every driver (module doc).
    pub(super) fn submit_request(
        &mut self,
        r: &Request,
        contents: &[ContentId],
        hint: RequestHint,
        tag: u64,
        index: usize,
        at: Nanos,
    ) -> Result<Nanos, SimError> {
        let at = at.max(self.clock.floor);
        let first = self.clock.submitted == 0;
        if first {
            self.metrics.first_issue = at;
        } else {
            self.offer_idle(self.clock.idle_start(), Some(at))?;
        }
        // SSDsim decides after each arrival, so a write that arrived at
        // this same instant, one request earlier, is served before this
        // request arrives (dynamic allocation's order).
        let same_instant = !first && self.clock.last == at;
        self.clock.last = at;
        self.metrics.last_arrival = at;
        self.clock.floor = at;
        self.clock.submitted += 1;
        let nth = self.clock.submitted;
        self.arrive(tag, nth, index, r, contents, hint, at, same_instant)?;
        Ok(at)
    }

    /// Request `r` (tag `tag`, the `nth` submitted; `index` names it in
    /// errors) arrives at `issue`, after the idle time before it was
    /// offered ([`Self::submit_request`]): down the request path once.
    /// `same_instant`: the previous request arrived at the same time
    /// (dynamic allocation's order).
    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &mut self,
        tag: u64,
        nth: u64,
        index: usize,
        r: &Request,
        contents: &[ContentId],
        hint: RequestHint,
        issue: Nanos,
        same_instant: bool,
    ) -> Result<(), SimError> {
        if self.alloc.dynamic() {
            self.place_unplaced(if same_instant { issue + Nanos(1) } else { issue })?;
        }
        self.drain_until(issue);
        if issue >= self.series_check {
            self.settle_series(issue);
        }
        self.tag = tag;
        match r.op {
            Op::Read => self.read(r, issue)?,
            Op::Write => self.write(index, r, contents, hint, issue, true)?,
            Op::Trim => {
                self.trim(r);
                self.finish(issue, tag);
                if let Some(s) = self.series.as_deref_mut() {
                    s.request(Op::Trim, r.pages, issue, issue);
                }
                if let Some(o) = self.observer.as_mut() {
                    o.sink.record(&RequestRecord {
                        index: tag,
                        op: Op::Trim,
                        lpn: r.lpn,
                        pages: r.pages,
                        arrival: issue,
                        completion: issue,
                        dup_pages: 0,
                        chips: 0,
                        channels: 0,
                        gc_wait: false,
                    });
                }
            }
        }
        if self.opts.check && self.opts.check_every > 0 && nth % self.opts.check_every == 0 {
            self.check_invariants()?;
        }
        Ok(())
    }
}
