//! In-flight bookkeeping: the requests in flight (their slots) and the
//! completions the timing model reports. Future flash operations and the
//! known request completions wait in the timing model's event queue
//! ([`crate::timing::EventQueue`]), from which [`Simulation::collect`]
//! hands the completions out. A slot stays here, not in the event queue:
//! it has no time until its last part ends, when its completion does
//! enter the queue ([`Simulation::finish`]); until then it is a count only
//! the request path moves, read only by the metrics and the observers
//! (ARCHITECTURE.md, code map).
//!
//! # FCFS by arrival at the chip
//!
//! A page program reaches its chip when its fingerprint is done, which can
//! be after later requests have arrived. So that every chip serves
//! operations first-come-first-served *by their arrival at the chip* (a read
//! arriving while a write is still hashing is served first), programs and
//! GC work whose arrival lies in the future wait in the event queue as
//! operations, which are submitted up to each request's arrival before that
//! request touches the resources ([`crate::timing::Timing::run_due`]).
//! Same-time operations keep their submission order (with
//! `dedup.hash_unit = "request"` on several engines a later request can be
//! hashed first: the queue orders by arrival, then submission). A write's
//! latency is recorded when its last program has completed.
//! Mapping state changes at processing time; only timing is deferred.

use super::Simulation;
use crate::timing::OpKind;
use crate::units::{Nanos, Op};

/// A flash operation to submit, arriving at its chip at `at` (now or in
/// the future: [`Simulation::schedule`]).
#[derive(Copy, Clone, Debug)]
pub(super) struct PendingOp {
    pub(super) at: Nanos,
    pub(super) chip: u32,
    pub(super) kind: OpKind,
    /// In-flight request slot the operation belongs to (`NO_TAG` for GC).
    pub(super) slot: u32,
}

/// A timed request whose completion is not known yet.
#[derive(Copy, Clone, Debug)]
pub(super) struct Inflight {
    pub(super) issue: Nanos,
    pub(super) done: Nanos,
    /// Flash operations not completed yet, plus one while the request is
    /// being processed.
    pub(super) remaining: u32,
    pub(super) op: Op,
    /// The request's tag: its index in the replay, or the streaming
    /// caller's ([`StreamRequest::tag`]).
    pub(super) tag: u64,
}

impl<'w> Simulation<'w> {
    /// Request `tag` completed at `done`.
    #[inline]
    pub(super) fn finish(&mut self, done: Nanos, tag: u64) {
        self.metrics.last_completion = self.metrics.last_completion.max(done);
        if self.hand_out {
            self.timing.push_completion(done, tag);
        }
    }

    /// Submits a flash operation now if it has arrived by `now`, else
    /// queues it in the timing model's event queue, after operations
    /// arriving at the same time.
    #[inline]
    pub(super) fn schedule(&mut self, op: PendingOp, now: Nanos) {
        if self.observing_ops {
            self.observe_op(op.slot, op.chip);
        }
        if self.timing.schedule(op.chip, op.at, op.kind, op.slot, now) {
            self.apply_completions();
        }
    }

    /// Submits the queued operations arriving by `t` and, if there were
    /// any, applies the completions reported.
    #[inline]
    pub(super) fn drain_until(&mut self, t: Nanos) {
        if self.timing.run_due(t) {
            self.apply_completions();
        }
    }

    /// Applies the completions the timing model reported. The test is
    /// inline at every call (a placement calls this whether or not its
    /// channel reported anything), the work out of line.
    #[inline(always)]
    pub(super) fn apply_completions(&mut self) {
        if self.timing.has_completions() {
            self.apply_reported();
        }
    }

    /// [`Self::apply_completions`]'s work, when there is some.
    #[inline(never)]
    fn apply_reported(&mut self) {
        let mut done = std::mem::take(&mut self.completed);
        self.timing.take_completions(&mut done);
        for &(slot, d) in &done {
            self.op_done(slot, d);
        }
        done.clear();
        self.completed = done;
    }

    /// One part of in-flight request `slot` finished at `d`.
    #[inline(always)]
    pub(super) fn op_done(&mut self, slot: u32, d: Nanos) {
        let f = &mut self.inflight[slot as usize];
        f.done = f.done.max(d);
        f.remaining -= 1;
        if f.remaining == 0 {
            let f = *f;
            let lat = f.done - f.issue;
            if f.op == Op::Read {
                self.metrics.read_latency.record(lat);
            } else {
                self.metrics.write_latency.record(lat);
            }
            if self.observing {
                self.observe_done(slot, &f);
            }
            self.free_slots.push(slot);
            self.finish(f.done, f.tag);
        }
    }

    pub(super) fn open_slot(&mut self, issue: Nanos, op: Op, lpn: u32, pages: u32) -> u32 {
        let f = Inflight { issue, done: issue, remaining: 1, op, tag: self.tag };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.inflight[s as usize] = f;
                s
            }
            None => {
                self.inflight.push(f);
                (self.inflight.len() - 1) as u32
            }
        };
        if self.observing {
            self.observe_open(slot, lpn, pages);
        }
        slot
    }
}
