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
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// What an event is, by origin.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Request `tag` (the caller's) completes at the event's time.
    Completion { tag: u64 },
    /// A flash operation arrives at `chip` at the event's time; its
    /// completion is reported with `tag` ([`super::NO_TAG`]: nobody waits).
    Op { chip: u32, kind: OpKind, tag: u32 },
}

/// One queued event with its key.
#[derive(Copy, Clone, Debug)]
struct Entry {
    at: Nanos,
    /// 0 for a completion, 1 for an operation (module doc).
    origin: u8,
    /// Same time and origin: a completion's tag, an operation's
    /// submission number.
    order: u64,
    event: Event,
}

impl Entry {
    #[inline]
    fn key(&self) -> (Nanos, u8, u64) {
        (self.at, self.origin, self.order)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// The event queue (module doc): a binary heap keyed by (time, origin,
/// order). Keys are unique, so the order events come out in does not
/// depend on the order they went in, beyond the submission numbers.
#[derive(Clone, Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    /// Operations submitted so far (their `order`).
    seq: u64,
    /// Operations queued (the rest are completions).
    ops: usize,
    /// Scratch: completions set aside while looking for an operation.
    aside: Vec<Entry>,
}

impl EventQueue {
    /// Queues a flash operation arriving at `chip` at `at`, after the
    /// operations already queued for the same time.
    #[inline]
    pub fn push_op(&mut self, at: Nanos, chip: u32, kind: OpKind, tag: u32) {
        let order = self.seq;
        self.seq += 1;
        self.ops += 1;
        self.heap.push(Reverse(Entry { at, origin: 1, order, event: Event::Op { chip, kind, tag } }));
    }

    /// Queues request `tag`'s completion at `at`.
    #[inline]
    pub fn push_completion(&mut self, at: Nanos, tag: u64) {
        self.heap.push(Reverse(Entry { at, origin: 0, order: tag, event: Event::Completion { tag } }));
    }

    /// The earliest event, if any.
    #[inline]
    pub fn peek(&self) -> Option<(Nanos, Event)> {
        self.heap.peek().map(|Reverse(e)| (e.at, e.event))
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        let Reverse(e) = self.heap.pop()?;
        if matches!(e.event, Event::Op { .. }) {
            self.ops -= 1;
        }
        Some((e.at, e.event))
    }

    /// Removes and returns the earliest operation arriving by `t`
    /// (inclusive), leaving completions queued: `(at, chip, kind, tag)`.
    #[inline]
    pub fn pop_op_until(&mut self, t: Nanos) -> Option<(Nanos, u32, OpKind, u32)> {
        if self.ops == 0 {
            return None;
        }
        let mut found = None;
        while let Some(Reverse(e)) = self.heap.peek() {
            if e.at > t {
                break;
            }
            let Reverse(e) = self.heap.pop().expect("just peeked");
            match e.event {
                Event::Op { chip, kind, tag } => {
                    self.ops -= 1;
                    found = Some((e.at, chip, kind, tag));
                    break;
                }
                Event::Completion { .. } => self.aside.push(e),
            }
        }
        // Completions go back with their keys: their order is unchanged.
        while let Some(e) = self.aside.pop() {
            self.heap.push(Reverse(e));
        }
        found
    }

    /// Operations queued.
    #[inline]
    pub fn ops(&self) -> usize {
        self.ops
    }

    /// Events queued.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
