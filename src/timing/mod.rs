//! The timing model: an exact event-driven scheduler per channel.
//!
//! # Model
//!
//! Resources are the flash **chips** (one flash operation at a time: the
//! chip-level serialization that makes dedup fragmentation hurt, FAD §II-A),
//! the **channel buses** (shared by the chips of a channel) and the
//! controller's **hash engines** (fingerprinting, FAD §IV-A).
//!
//! Channels never interact, so each channel is simulated on its own, lazily:
//! operations are [submitted](Timing::submit) in non-decreasing order of
//! their arrival at the chip, and a channel is advanced only when an
//! operation arrives at it (or at the end). Within a channel every decision
//! is made at the exact time it falls due, so the bus is used whenever it is
//! idle and someone needs it: no idle gap is left unfilled, and the result
//! does not depend on the order in which the simulator processed requests.
//!
//! An operation's phases (tX = one page over the bus):
//!
//! | operation | chip | bus |
//! |---|---|---|
//! | read | sense `tR`, then holds the data in its register until the transfer ends | transfer out `tX`, as soon as the bus is granted after the sense |
//! | program | from the transfer's start to the end of `tPROG` | transfer in `tX` |
//! | GC | migrations (copyback `tR+tPROG` each) and erases `tBERS`, back to back | none with copyback (without copyback the transfers are folded into the chip time; see docs/simulator.md) |
//!
//! # Scheduling rule ([`Scheduling`])
//!
//! No operation is preempted once started (no program/erase suspend). When
//! a chip is idle it picks its next operation; when the bus is free it is
//! granted to one waiting chip. Both decisions follow `timing.scheduling`:
//!
//! * **read-priority** (SSDsim and MQSim): an idle chip starts its oldest
//!   waiting *read* if it has one, else its oldest write or GC operation (in
//!   their arrival order); a free bus goes first to a chip holding read data
//!   (oldest sense end first, then lowest chip), then to an idle chip whose
//!   next operation is a program (oldest arrival first). A read that arrives
//!   while a program waits for the bus on its chip is served first, since
//!   the program has not started.
//! * **fcfs**: each chip serves its operations in order of arrival at the
//!   chip; the bus goes to the waiting operation that arrived first.
//!
//! GC work stands in a chip's write queue (reads go before it under
//! read-priority).
//!
//! # Completion ([`WriteCompletion`])
//!
//! A read page completes when its transfer out ends. A program completes
//! when its transfer in ends (`transfer`: SSDsim 2.1's rule, the data is in
//! the chip's page register) or when `tPROG` ends (`program`: MQSim's rule).
//! Completions are reported as `(tag, time)` pairs through
//! [`Timing::take_completions`], possibly long after their submission
//! (a later read can overtake a waiting program).
//!
//! # Events
//!
//! A channel is settled (every decision due at its `now` made) at each
//! arrival and at each event, so that only events remain between calls.
//! An event is a time at which something must be decided: a sense ends
//! (its data wants the bus), a phase ends on a chip with work queued behind
//! it, or the bus frees while a chip waits for it. The other phase ends
//! (a transfer out, a program or GC with nothing queued behind it) decide
//! nothing: their completions were reported at the bus grant that fixed
//! them, and the chip is taken as idle from then on. An arrival in the
//! common cases (a busy chip, or an idle chip with nothing queued) is
//! decided by arithmetic, without a settle (`Channel::arrive`).
//!
//! Under read priority, a chip busy with a phase whose end is fixed (a
//! transfer out, a program, GC) and with a read queued behind it starts
//! that read when the phase ends, whatever arrives meanwhile: a later read
//! queues behind it, and writes and GC wait for reads. So the read's sense
//! is scheduled at once, back to back with the phase (`chain_read`), and
//! the phase's end is no event either (15% fewer settles on the first
//! 200,000 requests of the benchmark trace; BENCHMARKS.md, round 3).
//!
//! [`Timing::report_at_completion`] (the closed-loop replay, which bounds
//! unreported completions by [`Timing::next_event`] and advances to it)
//! keeps one event per phase end instead, reports completions at those
//! events and decides an arrival at the channel's next settle, as the
//! first event-driven version of this model did, so that the closed loop's
//! choices are unchanged.
//!
//! # The event queue ([`EventQueue`])
//!
//! What is still to happen outside the channels waits in one queue owned
//! here: flash operations whose arrival at their chip lies in the future
//! ([`Timing::schedule`] queues them, [`Timing::run_due`] submits them as
//! the caller's clock passes them) and the known completions of
//! outstanding requests ([`Timing::push_completion`]), handed out by
//! [`Timing::step_certain`] once nothing still to simulate can come
//! before them (the closed-loop replay, the streaming interface). The
//! chips' and the bus's own queues are the device's state, not events.
//!
//! # Hash engines ([`Timing::fingerprint_request`])
//!
//! `dedup.hash_engines` engines, each hashing one page in
//! `dedup.fingerprint`, first come first served (earliest-free engine, ties
//! to the lowest). `dedup.hash_unit` says what an engine takes at a time (a
//! page, or a whole request), `dedup.hash_overlap` whether a page's program
//! may start when its own hash is done (pipelined) or only when the whole
//! request is hashed (before-flash). See docs/simulator.md, "Hash engine
//! models".
//!
//! Two 4 KiB reads issued at 0 to one chip complete at `tR+tX` and
//! `2*(tR+tX)`; on two chips of one channel at `tR+tX` and `tR+2*tX`; on two
//! channels both at `tR+tX`.

use crate::series::BusyByInterval;
use crate::units::Nanos;
use std::collections::{HashMap, VecDeque};

mod channel;
mod dynamic;
mod events;
mod hash;
mod params;
#[cfg(test)]
mod tests;

use channel::{Accounting, Channel, Chip, GcWaits, Queued, Rules, NEVER, SHORTCUT};
pub use dynamic::{Placed, UnplacedWrite};
pub use events::{Event, EventQueue, Until};
pub use hash::HashLoad;
pub use params::{HashOverlap, HashParams, HashUnit, Scheduling, TimingConfig, TimingParams, WriteCompletion};

/// Tag of an operation whose completion nobody waits for (GC).
pub const NO_TAG: u32 = u32::MAX;

/// What a flash operation does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    /// Chip-only GC work of this duration.
    Gc(Nanos),
}

/// What one [`Timing::step_certain`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Request `tag`'s completion at `at` is certain: handed out.
    Completion { tag: u64, at: Nanos },
    /// An operation was submitted, or the channels ran through an event.
    Progressed,
    /// Nothing more is certain before the bound ([`Until::Time`]).
    Reached,
    /// Nothing is left: no completion, no operation, no event.
    Idle,
}

/// Per-chip and per-channel use ([`Timing::resources`]). Chip `g` is on
/// channel `g % channels`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resources {
    /// Per chip: time busy with reads, from a sense's start to the end of
    /// its transfer out (holding the data while the bus is taken counts).
    pub chip_read_busy: Vec<Nanos>,
    /// Per chip: pages sensed.
    pub chip_reads: Vec<u64>,
    /// Per channel: bus time moving read data out.
    pub channel_read: Vec<Nanos>,
    /// Per channel: bus time moving program data in.
    pub channel_write: Vec<Nanos>,
    /// `timing.read` and one page's transfer, which bound the above.
    pub t_read: Nanos,
    pub t_xfer: Nanos,
}

/// Resource state and per-chip accounting. See the module doc.
#[derive(Clone, Debug)]
pub struct Timing {
    rules: Rules,
    t_erase: Nanos,
    t_fp: Nanos,
    hash_unit: HashUnit,
    hash_overlap: HashOverlap,
    copyback: bool,
    channels: Vec<Channel>,
    n_channels: u32,
    /// Per global chip: (channel, chip within the channel), looked up
    /// instead of a division and a remainder per operation.
    loc: Vec<(u32, u32)>,
    hash_free: Vec<Nanos>,
    hash: HashLoad,
    acct: Accounting,
    done: Vec<(u32, Nanos)>,
    /// Reads completed by the duplicate-read shortcut.
    shortcuts: u64,
    /// Future operations and known request completions ([`events`]).
    events: EventQueue,
    /// Page writes not placed yet (`allocation = "dynamic"`), oldest
    /// first ([`Timing::place_next`]).
    unplaced: VecDeque<UnplacedWrite>,
    /// Dynamic allocation's rotating start: the channel tried first, the
    /// writes placed so far (pages programmed, SSDsim's `program_count`)
    /// modulo the channels, kept as such (a division per placement
    /// otherwise).
    start: u32,
}

impl Timing {
    pub fn new(p: &TimingParams) -> Timing {
        let g = p;
        let chips = (g.channels * g.chips_per_channel) as usize;
        let rules = Rules {
            t_read: p.timing.read,
            t_prog: p.timing.program,
            t_xfer: p.timing.page_transfer,
            scheduling: p.timing.scheduling,
            completion: p.timing.write_completion,
            shortcut: p.timing.duplicate_read_shortcut,
            late: false,
        };
        let channel = Channel {
            now: Nanos::ZERO,
            bus_free: Nanos::ZERO,
            chips: vec![Chip::new(); g.chips_per_channel as usize],
            queued: 0,
            held: 0,
            next: NEVER,
            dirty: false,
            waiting_reads: HashMap::new(),
            bus_read: Nanos::ZERO,
            bus_write: Nanos::ZERO,
            slot: dynamic::SlotMemo::UNKNOWN,
            token: 0,
        };
        let mut channels = vec![channel; g.channels as usize];
        for (h, ch) in channels.iter_mut().enumerate() {
            for (i, c) in ch.chips.iter_mut().enumerate() {
                c.global = i as u32 * g.channels + h as u32;
            }
        }
        Timing {
            rules,
            t_erase: p.timing.erase,
            t_fp: p.hash.fingerprint,
            hash_unit: p.hash.unit,
            hash_overlap: p.hash.overlap,
            copyback: p.copyback,
            channels,
            n_channels: g.channels,
            loc: (0..chips as u32).map(|c| (c % g.channels, c / g.channels)).collect(),
            hash_free: vec![Nanos::ZERO; p.hash.engines.max(1) as usize],
            hash: HashLoad { engines: p.hash.engines.max(1), ..HashLoad::default() },
            acct: Accounting { series: None, gc_waits: None },
            done: Vec::new(),
            shortcuts: 0,
            events: EventQueue::default(),
            unplaced: VecDeque::new(),
            start: 0,
        }
    }

    /// Reports a read's completion (and a program's under
    /// `write_completion = "program"`) at an event at its time, as the
    /// phase ends, rather than as soon as its bus grant fixes it. For a
    /// caller that uses [`Timing::next_event`] as the bound of every
    /// completion not reported yet and advances to it (closed-loop replay):
    /// the same decisions, reported in the order of time.
    pub fn report_at_completion(&mut self) {
        self.rules.late = true;
    }

    /// Submits the read of physical page `ppn` on `chip` arriving at `at`.
    /// With `timing.duplicate_read_shortcut` (SSDsim 2.1's rule), a read of
    /// a page that already has a read waiting on its channel (arrived, data
    /// not yet going out) completes 1 us after arriving, without flash work.
    #[inline]
    pub fn submit_read(&mut self, chip: u32, at: Nanos, ppn: u32, tag: u32) {
        if self.rules.shortcut {
            let h = self.loc[chip as usize].0 as usize;
            let ch = &mut self.channels[h];
            ch.advance(at, &self.rules, &mut self.acct, &mut self.done);
            if ch.waiting_reads.get(&ppn).is_some_and(|&n| n > 0) {
                self.done.push((tag, at + SHORTCUT));
                self.shortcuts += 1;
                return;
            }
            *ch.waiting_reads.entry(ppn).or_insert(0) += 1;
        }
        self.submit_op(chip, at, OpKind::Read, tag, ppn);
    }

    /// Submits one flash operation on `chip` arriving at `at`. Arrivals must
    /// be submitted in non-decreasing order (per channel). Its completion is
    /// reported later with `tag` (unless `tag` is [`NO_TAG`]).
    #[inline]
    pub fn submit(&mut self, chip: u32, at: Nanos, kind: OpKind, tag: u32) {
        self.submit_op(chip, at, kind, tag, 0);
    }

    /// Submits a flash operation arriving at `at` now if it has arrived by
    /// `now` (returns `true`), else queues it as an event (`events`),
    /// after the operations queued for the same time, until the clock
    /// passes it ([`Timing::run_due`], [`Timing::step_certain`]).
    #[inline]
    pub fn schedule(&mut self, chip: u32, at: Nanos, kind: OpKind, tag: u32, now: Nanos) -> bool {
        if at <= now {
            self.submit(chip, at, kind, tag);
            true
        } else {
            self.events.push_op(at, chip, kind, tag);
            false
        }
    }

    /// Submits every queued operation arriving by `t` (inclusive), in
    /// their order (`events`); whether there was one.
    #[inline]
    pub fn run_due(&mut self, t: Nanos) -> bool {
        let mut any = false;
        while let Some((at, chip, kind, tag)) = self.events.pop_op_until(t) {
            self.submit(chip, at, kind, tag);
            any = true;
        }
        any
    }

    /// Queues request `tag`'s completion at `at`, to be handed out by
    /// [`Timing::step_certain`] once certain.
    #[inline]
    pub fn push_completion(&mut self, at: Nanos, tag: u64) {
        self.events.push_completion(at, tag);
    }

    /// One step towards the earliest certain completion: hands out the
    /// earliest queued completion if nothing still to simulate (a queued
    /// operation, a channel's next event) can happen before it; else
    /// submits the earliest queued operation if it comes no later than
    /// the channels' next event, or runs the channels through that event.
    /// `until` bounds it ([`Until`]): with [`Until::Time`]`(t)` a
    /// completion after `t` is not handed out and nothing at or after `t`
    /// is simulated ([`Step::Reached`]).
    /// After a [`Step::Progressed`] the caller takes the completions the
    /// step reported ([`Timing::take_completions`]): they may queue more.
    pub fn step_certain(&mut self, until: Until) -> Step {
        // Compiled once per form, so the unbounded one (the closed loop's
        // hot path) tests no bound.
        match until {
            Until::Next => self.step::<false>(Nanos::ZERO),
            Until::Time(t) => self.step::<true>(t),
        }
    }

    /// [`Timing::step_certain`], bounded by `t` if `BOUNDED`.
    #[inline(always)]
    fn step<const BOUNDED: bool>(&mut self, t: Nanos) -> Step {
        let next_ev = self.next_event();
        match self.events.peek() {
            Some((c, Event::Completion { tag })) if next_ev.is_none_or(|e| c <= e) => {
                if BOUNDED && c > t {
                    return Step::Reached;
                }
                self.events.pop();
                Step::Completion { tag, at: c }
            }
            Some((a, Event::Op { chip, kind, tag })) if next_ev.is_none_or(|e| a <= e) => {
                if BOUNDED && a >= t {
                    return Step::Reached;
                }
                self.events.pop();
                self.submit(chip, a, kind, tag);
                Step::Progressed
            }
            _ => match next_ev {
                Some(e) if BOUNDED && e >= t => Step::Reached,
                Some(e) => {
                    self.advance_all(e + Nanos(1));
                    Step::Progressed
                }
                None => Step::Idle,
            },
        }
    }

    #[inline]
    pub(super) fn submit_op(&mut self, chip: u32, at: Nanos, kind: OpKind, tag: u32, ppn: u32) {
        let (h, local) = self.loc[chip as usize];
        let ch = &mut self.channels[h as usize];
        // New work on the channel: what a write-slot search learnt is void.
        ch.slot = dynamic::SlotMemo::UNKNOWN;
        ch.advance(at, &self.rules, &mut self.acct, &mut self.done);
        let q = match kind {
            OpKind::Read | OpKind::Program => Queued { arrival: at, tag, ppn, gc: Nanos::ZERO },
            OpKind::Gc(d) => Queued { arrival: at, tag, ppn, gc: d.max(Nanos(1)) },
        };
        let read = kind == OpKind::Read;
        if !self.rules.late && ch.arrive(local as usize, read, q, &self.rules, &mut self.acct, &mut self.done) {
            return;
        }
        ch.now = ch.now.max(at);
        ch.enqueue(local as usize, read, q);
        if self.rules.late {
            // Decided at the next settle, as the event-per-phase model did.
            ch.dirty = true;
        } else {
            ch.settle_due(&self.rules, &mut self.acct, &mut self.done);
        }
    }

    /// Chip time of GC work: `moved` valid-page migrations and `erases`
    /// block erases, back to back. With copyback a migration is tR + tPROG
    /// inside the chip; without, its two bus transfers are added to the
    /// chip's time (the bus itself is not reserved: a simplification,
    /// documented in docs/simulator.md).
    pub fn gc_duration(&self, moved: u32, erases: u32) -> Nanos {
        let per = if self.copyback {
            self.rules.t_read.0 + self.rules.t_prog.0
        } else {
            self.rules.t_read.0 + self.rules.t_prog.0 + 2 * self.rules.t_xfer.0
        };
        Nanos(per * moved as u64 + self.t_erase.0 * erases as u64)
    }

    /// Runs every channel up to (not including) `t`.
    pub fn advance_all(&mut self, t: Nanos) {
        for ch in self.channels.iter_mut() {
            ch.advance(t, &self.rules, &mut self.acct, &mut self.done);
        }
    }

    /// Earliest time at which any channel has something to do, if any.
    pub fn next_event(&mut self) -> Option<Nanos> {
        let mut best: Option<Nanos> = None;
        for ch in self.channels.iter_mut() {
            if ch.dirty {
                ch.settle_due(&self.rules, &mut self.acct, &mut self.done);
            }
            if let Some(t) = ch.next_end() {
                best = Some(best.map_or(t, |b: Nanos| b.min(t)));
            }
        }
        best
    }

    /// Runs everything to completion.
    pub fn finish(&mut self) {
        self.advance_all(Nanos(u64::MAX));
    }

    /// Completions since the last call: `(tag, time)`, not sorted,
    /// appended to `out` (an empty `out` trades buffers instead of copying).
    #[inline]
    pub fn take_completions(&mut self, out: &mut Vec<(u32, Nanos)>) {
        if out.is_empty() {
            std::mem::swap(out, &mut self.done);
        } else {
            out.append(&mut self.done);
        }
    }

    /// Whether completions are waiting to be taken.
    #[inline]
    pub fn has_completions(&self) -> bool {
        !self.done.is_empty()
    }

    /// Per chip: total time busy (sense/program/erase/transfer/holding data).
    pub fn chip_busy(&self) -> Vec<Nanos> {
        self.per_chip(|c| c.busy)
    }

    /// Chips in global order ([`Resources`]: chip `g` is chip `g /
    /// channels` of channel `g % channels`).
    fn chips(&self) -> impl Iterator<Item = &Chip> {
        let n = self.channels.len();
        let per = self.channels.first().map_or(0, |c| c.chips.len());
        (0..n * per).map(move |g| &self.channels[g % n].chips[g / n])
    }

    /// One value per chip, in global order.
    fn per_chip<T>(&self, f: impl Fn(&Chip) -> T) -> Vec<T> {
        self.chips().map(f).collect()
    }

    /// Also charges every chip's busy time to intervals of `interval` of
    /// simulated time, host and background apart (`run --timeseries`).
    pub fn record_busy(&mut self, interval: Nanos) {
        self.acct.series = Some(Box::new(BusyByInterval::new(interval)));
    }

    /// Also marks each tagged operation that waited on its chip while GC
    /// work ran there (it arrived before a GC phase on the chip ended, and
    /// started after it): read back per tag with [`Timing::took_gc_wait`]
    /// (`run --request-log`'s `gc_wait` column).
    pub fn track_gc_waits(&mut self) {
        let chips = self.chips().count();
        self.acct.gc_waits = Some(Box::new(GcWaits { gc_end: vec![Nanos::ZERO; chips], tags: Vec::new() }));
    }

    /// Whether an operation tagged `tag` waited behind GC since the last
    /// call for `tag` (which clears it); `false` unless
    /// [`Timing::track_gc_waits`] was asked for.
    pub fn took_gc_wait(&mut self, tag: u32) -> bool {
        self.acct.gc_waits.as_deref_mut().is_some_and(|g| g.take(tag))
    }

    /// The busy time per interval, if [`Timing::record_busy`] asked for it.
    pub fn take_busy(&mut self) -> Option<BusyByInterval> {
        self.acct.series.take().map(|b| *b)
    }

    /// Where the time went, per chip and per channel (issue 28 item 1: a
    /// die collision told from a channel collision).
    pub fn resources(&self) -> Resources {
        Resources {
            chip_read_busy: self.per_chip(|c| c.read_busy),
            chip_reads: self.per_chip(|c| c.pages_read),
            channel_read: self.channels.iter().map(|c| c.bus_read).collect(),
            channel_write: self.channels.iter().map(|c| c.bus_write).collect(),
            t_read: self.rules.t_read,
            t_xfer: self.rules.t_xfer,
        }
    }

    /// Per chip: total time operations waited between arriving at the chip
    /// and starting.
    pub fn chip_wait(&self) -> Vec<Nanos> {
        self.per_chip(|c| c.wait)
    }

    /// Reads completed by the duplicate-read shortcut.
    pub fn shortcut_reads(&self) -> u64 {
        self.shortcuts
    }
}
