//! SSDsim 2.1's fully dynamic allocation (`allocation = "dynamic"`): page
//! writes wait unplaced until a channel can serve them.

use super::channel::{Accounting, Channel, Phase, Rules, NEVER};
use super::{OpKind, Timing};
use crate::units::Nanos;

/// A page write waiting to be placed: its arrival, its completion's tag,
/// and the caller's names for the copy to place and the write it belongs
/// to (the simulation's FTL entry and write id), handed back when placed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UnplacedWrite {
    pub at: Nanos,
    pub tag: u32,
    pub copy: u32,
    pub write: u64,
}

/// A page write [`Timing::place_next`] placed: on `chip`, its program
/// submitted at `at`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub write: UnplacedWrite,
    pub chip: u32,
    pub at: Nanos,
}

impl Timing {
    /// Queues a page write whose chip is chosen when a channel serves it
    /// (`allocation = "dynamic"`, SSDsim 2.1's fully dynamic allocation);
    /// [`Timing::place_next`] places it. The one FIFO of waiting writes.
    pub fn submit_unplaced(&mut self, w: UnplacedWrite) {
        self.unplaced.push_back(w);
    }

    /// Starts dynamic allocation's channel rotation as if `programs` pages
    /// had been programmed (SSDsim counts every page its pre-processing
    /// maps, one per page of every read request in the trace).
    pub fn set_programs_before(&mut self, programs: u64) {
        self.start = (programs % u64::from(self.n_channels)) as u32;
    }

    /// Sets dynamic allocation's chip tokens: channel `h` tries chip
    /// `tokens[h]` first (SSDsim's pre-processing leaves each channel's
    /// token at its pages mapped modulo its chips).
    pub fn set_chip_tokens(&mut self, tokens: impl IntoIterator<Item = u32>) {
        for (ch, v) in self.channels.iter_mut().zip(tokens) {
            // Kept below the chips here, once, so that a search does not
            // check it (`search_slot`).
            let k = ch.chips.len() as u32;
            ch.token = if k == 0 { 0 } else { v % k };
        }
        // A found slot names the chip the old token chose.
        for ch in &mut self.channels {
            ch.slot = SlotMemo::UNKNOWN;
        }
    }

    /// Marks `chip` (global number, `chip * channels + channel`) as too
    /// full of live data to take a dynamically placed page (`full`), or
    /// as able to again: a channel's write-slot search passes a full chip
    /// over, as an idle chip with no room would be passed over by a
    /// drive, and places the page on the next chip it can serve. The
    /// caller keeps at least one chip not full, or every waiting write
    /// would wait for ever. Voids the channel's slot memo when the mark
    /// changes (what it learnt assumed the old mark).
    pub fn set_chip_full(&mut self, chip: u32, full: bool) {
        let n = self.n_channels;
        let ch = &mut self.channels[(chip % n) as usize];
        let c = &mut ch.chips[(chip / n) as usize];
        if c.full != full {
            c.full = full;
            ch.slot = SlotMemo::UNKNOWN;
        }
    }

    /// The bound before which a driver that hands out completions
    /// (closed-loop replay, stream) may place waiting writes without
    /// deciding past anything still unknown
    /// ([`Timing::place_next`] is exclusive of it): the earliest queued
    /// event (a known completion, after which the next request may arrive,
    /// or an operation arriving), the channels' next event (completions
    /// not yet known end no earlier), and `until`'s time if bounded.
    pub fn placement_bound(&mut self, until: super::Until) -> Nanos {
        let mut b = self.events.peek().map_or(Nanos(u64::MAX), |(t, _)| t);
        if let Some(e) = self.next_event() {
            b = b.min(e);
        }
        if let super::Until::Time(t) = until {
            b = b.min(t);
        }
        b
    }

    /// Forgets what the write-slot searches learnt (tests: a reference
    /// that searches afresh every time).
    #[cfg(test)]
    pub(super) fn forget_slots(&mut self) {
        for ch in &mut self.channels {
            ch.slot = SlotMemo::UNKNOWN;
        }
    }

    /// Whether page writes wait unplaced.
    pub fn has_unplaced(&self) -> bool {
        !self.unplaced.is_empty()
    }

    /// Places the oldest unplaced write if a channel can serve it before
    /// `until` (exclusive: nothing else arrives before then), and submits
    /// its program there; returns it with its chip and time. A channel can
    /// serve a write at the first instant its bus is free, no chip holds
    /// read data for it (reads go first) and a chip is idle with nothing
    /// queued, tried from the channel's token, which then moves past the
    /// chosen chip. Channels able to serve at the same instant are tried
    /// from a rotating start, the writes placed so far modulo the channels
    /// (SSDsim's `process` loop starts at `program_count % channels`).
    #[inline]
    pub fn place_next(&mut self, until: Nanos) -> Option<Placed> {
        // Inline: a call with no write waiting (about one in six on the
        // trace benchmark) costs a test, not the rotation's frame.
        if self.unplaced.is_empty() {
            return None;
        }
        self.place_waiting(until)
    }

    /// [`Timing::place_next`] with a write waiting.
    #[inline(never)]
    fn place_waiting(&mut self, until: Nanos) -> Option<Placed> {
        let &w = self.unplaced.front()?;
        let arrival = w.at;
        let n = self.n_channels;
        let start = self.start as usize;
        // The best slot so far, (`limit`, channel `best`, chip `chip`):
        // only an earlier slot can win, so it bounds the searches after it
        // (`best == n`: none found, `limit` is `until`). Plain values, not
        // an `Option`, kept in registers across the rotation.
        let mut limit = until;
        let (mut best, mut chip) = (n, 0u32);
        let Timing { channels, rules, acct, done, .. } = self;
        // The rotation, channels `start..` then `..start`, each half by an
        // iterator: no channel number to bound-check or wrap per visit.
        let (low, high) = channels.split_at_mut(start);
        'rotation: for (half, first) in [(high, start), (low, 0)] {
            for (j, ch) in half.iter_mut().enumerate() {
                if let Some((t, i)) = write_slot(ch, arrival, limit, rules, acct, done) {
                    (limit, best, chip) = (t, (first + j) as u32, i);
                    if t <= arrival {
                        // No channel serves before the write arrives.
                        break 'rotation;
                    }
                }
            }
        }
        if best == n {
            return None;
        }
        let (t, h, i) = (limit, best, chip);
        self.unplaced.pop_front();
        let ch = &mut self.channels[h as usize];
        let chips = ch.chips.len() as u32;
        ch.token = if i + 1 == chips { 0 } else { i + 1 };
        self.start = if self.start + 1 == n { 0 } else { self.start + 1 };
        let chip = i * n + h;
        self.submit_op(chip, t, OpKind::Program, w.tag, 0);
        Some(Placed { write: w, chip, at: t })
    }
}

/// The first instant in `[from, limit)` at which channel `ch` can serve an
/// unplaced write (see [`Timing::place_next`]), and the chip; answered
/// from the channel's [`SlotMemo`] when it already knows. The memo lives
/// in the [`Channel`], beside its clock: a visit the memo answers reads
/// one channel's record.
#[inline(always)]
fn write_slot(
    ch: &mut Channel,
    from: Nanos,
    limit: Nanos,
    rules: &Rules,
    acct: &mut Accounting,
    done: &mut Vec<(u32, Nanos)>,
) -> Option<(Nanos, u32)> {
    let m = ch.slot;
    let s = from.max(ch.now);
    let mut start = s;
    if m.from <= s && s <= m.to {
        if m.chip != SlotMemo::NONE {
            return (m.to < limit).then_some((m.to, m.chip));
        }
        if m.to >= limit {
            return None;
        }
        start = m.to;
    } else {
        // What is known does not cover `s`: learn afresh from there.
        ch.slot = SlotMemo { from: s, to: s, chip: SlotMemo::NONE };
    }
    let (to, found) = search_slot(ch, start, limit, rules, acct, done);
    ch.slot.to = to;
    ch.slot.chip = found.unwrap_or(SlotMemo::NONE);
    found.map(|i| (to, i))
}

/// Searches channel `ch` from `from` for the first instant before `limit`
/// at which it can serve an unplaced write; returns that instant and the
/// chip, or, if none, an instant `>= limit` before which there is none
/// ([`Nanos`]`::MAX`: none until an operation arrives). Runs the channel's
/// events up to the instant found, which is safe: nothing arrives on the
/// channel before `limit`.
#[inline(always)]
fn search_slot(
    ch: &mut Channel,
    from: Nanos,
    limit: Nanos,
    rules: &Rules,
    acct: &mut Accounting,
    done: &mut Vec<(u32, Nanos)>,
) -> (Nanos, Option<u32>) {
    let k = ch.chips.len();
    // Tokens stay below the chips: `set_chip_tokens` and `place_waiting`
    // keep them there.
    let token = ch.token as usize;
    debug_assert!(token < k || k == 0);
    // `from` is at least the channel's clock (`write_slot`'s `s` or a memo
    // ending after it).
    debug_assert!(from >= ch.now);
    let mut t = from;
    while t < limit {
        // No slot while the bus is busy, and the bus never frees
        // earlier than it says (it is only ever taken when free, until
        // a later time): go straight to that instant, deciding what is
        // due on the way in one step instead of one per event.
        if ch.bus_free > t {
            t = ch.bus_free;
            continue;
        }
        // Every decision due by `t` made, those at `t` included.
        ch.advance(t + Nanos(1), rules, acct, done);
        if ch.bus_free <= t && ch.held == 0 {
            let mut i = token;
            for _ in 0..k {
                let c = &ch.chips[i];
                let idle = c.phase == Phase::Idle || (c.phase != Phase::Held && c.until <= t);
                if idle && c.reads.is_empty() && c.writes.is_empty() && !c.full {
                    return (t, Some(i as u32));
                }
                i += 1;
                if i == k {
                    i = 0;
                }
            }
        }
        // The next instant the answer can change: an event, the bus
        // freeing, a phase ending.
        let mut next = ch.next;
        if ch.bus_free > t {
            next = next.min(ch.bus_free);
        }
        for c in &ch.chips {
            if !matches!(c.phase, Phase::Idle | Phase::Held) && c.until > t {
                next = next.min(c.until);
            }
        }
        if next == NEVER {
            return (Nanos(u64::MAX), None);
        }
        t = next.max(t + Nanos(1));
    }
    (t, None)
}

/// What a channel's last write-slot search learnt ([`Timing::place_next`]),
/// valid until an operation arrives on the channel (which voids it):
/// searched from any instant in `[from, to]`, the channel has no slot
/// before `to`, and has one at `to` on chip `chip` unless that is
/// [`SlotMemo::NONE`]. Without arrivals a channel's state only evolves by
/// its own events, so the answer is fixed: a search from the next waiting
/// write's arrival resumes at `to` instead of walking the channel's
/// events again, and a channel busy past the best slot found so far is
/// skipped in one comparison. Only speed: every placement is the one the
/// full search makes (the events a search runs are those it ran before).
#[derive(Copy, Clone, Debug)]
pub(super) struct SlotMemo {
    from: Nanos,
    to: Nanos,
    chip: u32,
}

impl SlotMemo {
    /// No chip found.
    const NONE: u32 = u32::MAX;
    /// Nothing known.
    pub(super) const UNKNOWN: SlotMemo = SlotMemo { from: Nanos(u64::MAX), to: Nanos(0), chip: SlotMemo::NONE };
}
