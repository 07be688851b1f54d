//! In-flight bookkeeping: the requests in flight (their slots), the FIFO
//! of flash operations whose arrival at their chip lies in the future, and
//! the completions the timing model reports.
//!
//! # FCFS by arrival at the chip
//!
//! A page program reaches its chip when its fingerprint is done, which can
//! be after later requests have arrived. So that every chip serves
//! operations first-come-first-served *by their arrival at the chip* (a read
//! arriving while a write is still hashing is served first), programs and
//! GC work whose arrival lies in the future wait in a FIFO of pending
//! operations, which is drained up to each request's arrival before that
//! request touches the resources. Hash completion times usually never
//! decrease (one FCFS pool of engines), so operations join the FIFO at its
//! back; with `dedup.hash_unit = "request"` on several engines a later
//! request can be hashed first, and its operations are inserted in arrival
//! order (after those arriving at the same time). A write's
//! latency is recorded when its last pending program has been applied.
//! Mapping state changes at processing time; only timing is deferred.

use super::Simulation;
use crate::timing::OpKind;
use crate::units::{Nanos, Op};
use std::cmp::Reverse;

/// A flash operation whose arrival at its chip lies in the future.
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
    /// The earliest known completion `(tag, time)`, taken only once nothing
    /// still to simulate can end earlier, simulating as far as needed;
    /// `None` when nothing is left. The closed-loop replay and the
    /// streaming interface both wait with it.
    pub(super) fn certain_completion(&mut self) -> Option<(u64, Nanos)> {
        loop {
            let next_op = self.pending.front().map(|o| o.at);
            let next_ev = self.timing.next_event();
            let horizon = match (next_op, next_ev) {
                (Some(a), Some(e)) => Some(a.min(e)),
                (a, e) => a.or(e),
            };
            if let Some(&Reverse((c, tag))) = self.completions.peek() {
                if horizon.is_none_or(|h| c <= h) {
                    self.completions.pop();
                    return Some((tag, c));
                }
            }
            match (next_op, next_ev) {
                (Some(a), Some(e)) if a <= e => self.apply_front(),
                (_, Some(e)) => self.timing.advance_all(e + Nanos(1)),
                (Some(_), None) => self.apply_front(),
                (None, None) => return None,
            }
            self.collect();
        }
    }

    /// Request `tag` completed at `done`.
    #[inline]
    pub(super) fn finish(&mut self, done: Nanos, tag: u64) {
        self.metrics.last_completion = self.metrics.last_completion.max(done);
        if self.closed_loop {
            self.completions.push(Reverse((done, tag)));
        }
    }

    /// Applies a flash operation now if it has arrived by `now`, else queues
    /// it in arrival order, after operations arriving at the same time
    /// (almost always at the back: see the module doc).
    #[inline]
    pub(super) fn schedule(&mut self, op: PendingOp, now: Nanos) {
        if self.observing_ops {
            self.observe_op(op.slot, op.chip, op.at, op.kind);
        }
        if op.at <= now {
            self.apply(op);
        } else if self.pending.back().is_none_or(|b| b.at <= op.at) {
            self.pending.push_back(op);
        } else {
            let i = self.pending.partition_point(|o| o.at <= op.at);
            self.pending.insert(i, op);
        }
    }

    pub(super) fn apply_front(&mut self) {
        if let Some(op) = self.pending.pop_front() {
            self.apply(op);
        }
    }

    #[inline]
    pub(super) fn drain_until(&mut self, t: Nanos) {
        while self.pending.front().is_some_and(|o| o.at <= t) {
            self.apply_front();
        }
    }

    #[inline]
    pub(super) fn apply(&mut self, op: PendingOp) {
        self.timing.submit(op.chip, op.at, op.kind, op.slot);
        self.collect();
    }

    /// Applies the completions the timing model reported.
    #[inline]
    pub(super) fn collect(&mut self) {
        if !self.timing.has_completions() {
            return;
        }
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
