//! The event queue: what is still to happen, in time order (issue 25
//! item 3).
//!
//! One queue, owned by the timing model, holds every future event the
//! simulation knows of (as nexosim's scheduler: keyed by time and origin,
//! same-time order kept):
//!
//! * **operations** ([`Event::Op`]): flash operations whose arrival at
//!   their chip lies in the future (a page program waiting for its
//!   fingerprint, GC charged after it, a dedup engine's or a relocation's
//!   reads and programs). They reach their chip's queue in the channel
//!   model ([`super::channel`]) when the simulation's clock passes their
//!   arrival, so that every chip serves operations first come first served
//!   *by their arrival at the chip* (docs/simulator.md, "Request path").
//!   Same-time operations keep their submission order.
//! * **completions** ([`Event::Completion`]): requests whose completion
//!   time is known, waiting to be handed to the caller once it is certain
//!   ([`super::Timing::step_certain`]): the closed-loop replay issues its
//!   next request then, and a stream (`dedupsim serve`) replies then.
//!   Same-time completions come out in tag order (the request order).
//!
//! At one instant a completion comes before an operation: an operation
//! arriving at `t` cannot end at `t`, so the completion is certain first.
//!
//! The per-chip and per-channel service queues are not events: they are
//! the device's resources (the channel model's state), and stay in
//! [`super::channel`].

use super::OpKind;
use crate::units::Nanos;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// How far [`super::Timing::step_certain`] (and the simulation's
/// `collect`) may go for the next certain completion.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Until {
    /// The next completion, simulating as far as needed.
    Next,
    /// A completion at or before this time only, simulating only what
    /// lies before it (operations arriving, events falling due earlier),
    /// so that a request arriving at this time afterwards meets the device
    /// as if nothing had been collected.
    Time(Nanos),
}

/// What an event is, by origin.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Request `tag` (the caller's) completes at the event's time.
    Completion { tag: u64 },
    /// A flash operation arrives at `chip` at the event's time; its
    /// completion is reported with `tag` ([`super::NO_TAG`]: nobody waits).
    Op { chip: u32, kind: OpKind, tag: u32 },
}

/// The event queue (module doc), in two lanes read as one: operations,
/// which arrive almost always in time order (a sorted deque, appended at
/// the back but for the rare earlier one, inserted after those of its
/// time), and completions, which become known in any order (a binary heap
/// keyed by time and tag). Its front is the earlier of the two lanes'
/// fronts, a completion first at one instant, so events come out in
/// (time, origin, order) order, as from one heap with that key, at a
/// deque's cost on the hot path.
#[derive(Clone, Debug, Default)]
pub struct EventQueue {
    /// Operations `(at, chip, kind, tag)`, sorted by `at`, same-time ones
    /// in submission order.
    ops: VecDeque<(Nanos, u32, OpKind, u32)>,
    /// Completions `(at, tag)`.
    completions: BinaryHeap<Reverse<(Nanos, u64)>>,
}

impl EventQueue {
    /// Queues a flash operation arriving at `chip` at `at`, after the
    /// operations already queued for the same time.
    #[inline]
    pub fn push_op(&mut self, at: Nanos, chip: u32, kind: OpKind, tag: u32) {
        let op = (at, chip, kind, tag);
        if self.ops.back().is_none_or(|b| b.0 <= at) {
            self.ops.push_back(op);
        } else {
            let i = self.ops.partition_point(|o| o.0 <= at);
            self.ops.insert(i, op);
        }
    }

    /// Queues request `tag`'s completion at `at`.
    #[inline]
    pub fn push_completion(&mut self, at: Nanos, tag: u64) {
        self.completions.push(Reverse((at, tag)));
    }

    /// Whether the earliest event is a completion (module doc).
    #[inline]
    fn completion_first(&self) -> Option<bool> {
        match (self.completions.peek(), self.ops.front()) {
            (Some(Reverse((c, _))), Some(o)) => Some(*c <= o.0),
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (None, None) => None,
        }
    }

    /// The earliest event, if any.
    #[inline]
    pub fn peek(&self) -> Option<(Nanos, Event)> {
        if self.completion_first()? {
            self.completions.peek().map(|&Reverse((at, tag))| (at, Event::Completion { tag }))
        } else {
            self.ops.front().map(|&(at, chip, kind, tag)| (at, Event::Op { chip, kind, tag }))
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        if self.completion_first()? {
            self.completions.pop().map(|Reverse((at, tag))| (at, Event::Completion { tag }))
        } else {
            self.ops.pop_front().map(|(at, chip, kind, tag)| (at, Event::Op { chip, kind, tag }))
        }
    }

    /// Removes and returns the earliest operation arriving by `t`
    /// (inclusive), leaving completions queued: `(at, chip, kind, tag)`.
    #[inline]
    pub fn pop_op_until(&mut self, t: Nanos) -> Option<(Nanos, u32, OpKind, u32)> {
        if self.ops.front().is_some_and(|o| o.0 <= t) {
            self.ops.pop_front()
        } else {
            None
        }
    }

    /// Operations queued.
    #[inline]
    pub fn ops(&self) -> usize {
        self.ops.len()
    }

    /// Events queued.
    pub fn len(&self) -> usize {
        self.ops.len() + self.completions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.completions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_operations_keep_submission_order_and_completions_come_first() {
        let mut q = EventQueue::default();
        q.push_op(Nanos(20), 0, OpKind::Program, 1);
        q.push_op(Nanos(10), 3, OpKind::Program, 2);
        q.push_op(Nanos(20), 1, OpKind::Read, 3);
        q.push_completion(Nanos(20), 9);
        q.push_completion(Nanos(20), 4);
        q.push_op(Nanos(10), 2, OpKind::Gc(Nanos(5)), 4);
        assert_eq!(q.len(), 6);
        assert_eq!(q.ops(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Nanos(10), Event::Op { chip: 3, kind: OpKind::Program, tag: 2 }),
                (Nanos(10), Event::Op { chip: 2, kind: OpKind::Gc(Nanos(5)), tag: 4 }),
                (Nanos(20), Event::Completion { tag: 4 }),
                (Nanos(20), Event::Completion { tag: 9 }),
                (Nanos(20), Event::Op { chip: 0, kind: OpKind::Program, tag: 1 }),
                (Nanos(20), Event::Op { chip: 1, kind: OpKind::Read, tag: 3 }),
            ]
        );
        assert!(q.is_empty());
        assert_eq!(q.ops(), 0);
    }

    #[test]
    fn operations_are_taken_past_earlier_completions_which_stay() {
        let mut q = EventQueue::default();
        q.push_completion(Nanos(5), 7);
        q.push_completion(Nanos(6), 8);
        q.push_op(Nanos(8), 1, OpKind::Program, 0);
        q.push_op(Nanos(30), 2, OpKind::Program, 1);
        assert_eq!(q.pop_op_until(Nanos(10)), Some((Nanos(8), 1, OpKind::Program, 0)));
        assert_eq!(q.pop_op_until(Nanos(10)), None);
        assert_eq!(q.ops(), 1);
        assert_eq!(q.pop(), Some((Nanos(5), Event::Completion { tag: 7 })));
        assert_eq!(q.pop(), Some((Nanos(6), Event::Completion { tag: 8 })));
        assert_eq!(q.pop_op_until(Nanos(u64::MAX)), Some((Nanos(30), 2, OpKind::Program, 1)));
        assert!(q.is_empty());
    }
}
