//! One channel: its chips' queues and phases and its bus, run on their
//! own clock (see the module doc of [`crate::timing`]).

use super::dynamic::SlotMemo;
use super::{Scheduling, WriteCompletion, NO_TAG};
use crate::series::BusyByInterval;
use crate::units::Nanos;
use std::collections::{HashMap, VecDeque};

/// Latency of a read served by the duplicate-read shortcut (SSDsim: 1 us).
pub(super) const SHORTCUT: Nanos = Nanos(1_000);

/// "No phase running" for a channel's cached next phase end.
pub(super) const NEVER: Nanos = Nanos(u64::MAX);

/// One operation waiting in a chip's queue.
#[derive(Copy, Clone, Debug)]
pub(super) struct Queued {
    pub(super) arrival: Nanos,
    pub(super) tag: u32,
    /// Physical page of a read (for the duplicate-read shortcut).
    pub(super) ppn: u32,
    /// GC duration, or 0 for a program (writes' queue only).
    pub(super) gc: Nanos,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Idle,
    /// Sensing a read, chip only, until `until`.
    Sense,
    /// Read data in the register, waiting for the bus since `until`.
    Held,
    /// Read data going out over the bus until `until`.
    Out,
    /// A program: data coming in over the bus (which is busy until the
    /// channel's `bus_free`), then programming; the chip is busy until
    /// `until`. One phase, one event: the transfer's end needs no decision
    /// of the chip's, and its completion is reported at the bus grant.
    Program,
    /// GC work, chip only, until `until`.
    Gc,
}

#[derive(Clone, Debug)]
pub(super) struct Chip {
    pub(super) phase: Phase,
    pub(super) until: Nanos,
    /// Tag of the operation in progress.
    pub(super) tag: u32,
    /// Arrival at the chip of the operation in progress.
    pub(super) arrival: Nanos,
    /// Physical page of the read in progress.
    pub(super) ppn: u32,
    pub(super) reads: VecDeque<Queued>,
    /// Programs and GC work, in arrival order.
    pub(super) writes: VecDeque<Queued>,
    /// Global chip number (`chip * channels + channel`), for the rare
    /// per-chip tables kept outside ([`GcWaits`]).
    pub(super) global: u32,
    /// This chip's accounting, kept with its state (one line touched per
    /// decision, no table lookups): busy and wait times
    /// ([`Timing::chip_busy`], [`Timing::chip_wait`]), busy time for
    /// reads (sense start to transfer end) and pages read
    /// ([`Timing::resources`]).
    pub(super) busy: Nanos,
    pub(super) wait: Nanos,
    pub(super) read_busy: Nanos,
    pub(super) pages_read: u64,
    /// Dynamic allocation: the chip's planes hold too much live data to
    /// take another page ([`Timing::set_chip_full`](super::Timing::set_chip_full)), so a channel's
    /// write-slot search passes it over.
    pub(super) full: bool,
}

impl Chip {
    pub(super) fn new() -> Chip {
        Chip {
            phase: Phase::Idle,
            until: Nanos::ZERO,
            tag: NO_TAG,
            arrival: Nanos::ZERO,
            ppn: 0,
            reads: VecDeque::new(),
            writes: VecDeque::new(),
            global: 0,
            busy: Nanos::ZERO,
            wait: Nanos::ZERO,
            read_busy: Nanos::ZERO,
            pages_read: 0,
            full: false,
        }
    }
}

/// One channel: its chips and its bus, with their own clock.
#[derive(Clone, Debug)]
pub(super) struct Channel {
    pub(super) now: Nanos,
    pub(super) bus_free: Nanos,
    pub(super) chips: Vec<Chip>,
    /// Operations waiting in the chips' queues (a fast "nothing to start").
    pub(super) queued: u32,
    /// Chips in `Phase::Held` (a fast "nothing wants the bus").
    pub(super) held: u32,
    /// End of the earliest running timed phase (`Nanos::MAX`-like when none),
    /// cached by `settle`.
    pub(super) next: Nanos,
    /// An arrival waits for its decisions at `now` (only when completions
    /// are reported late: otherwise an arrival is settled at once).
    pub(super) dirty: bool,
    /// With the duplicate-read shortcut: physical pages with a read waiting
    /// on this channel (queued or sensing, data not yet going out), and
    /// how many.
    pub(super) waiting_reads: HashMap<u32, u32>,
    /// Bus time of transfers out (reads) and in (programs)
    /// ([`Timing::resources`]).
    pub(super) bus_read: Nanos,
    pub(super) bus_write: Nanos,
    /// Dynamic allocation (`timing/dynamic.rs`): what the channel's last
    /// write-slot search learnt, void once an operation arrives
    /// ([`SlotMemo`]), and the chip token (the chip tried first). Kept
    /// here, beside `now`, so that a visit of the allocation's rotation
    /// reads one record.
    pub(super) slot: SlotMemo,
    pub(super) token: u32,
}

/// Durations and rules shared by every channel.
#[derive(Copy, Clone, Debug)]
pub(super) struct Rules {
    pub(super) t_read: Nanos,
    pub(super) t_prog: Nanos,
    pub(super) t_xfer: Nanos,
    pub(super) scheduling: Scheduling,
    pub(super) completion: WriteCompletion,
    pub(super) shortcut: bool,
    /// Completions are reported when they happen, each at an event of its
    /// own ([`Timing::report_at_completion`]), not when they become known.
    pub(super) late: bool,
}

/// The accounting asked for on top of the chips' own counts (kept in
/// [`Chip`] and [`Channel`]).
#[derive(Clone, Debug)]
pub(super) struct Accounting {
    /// Busy time per interval of simulated time, host and background
    /// ([`Timing::record_busy`]); `None` unless asked for.
    pub(super) series: Option<Box<BusyByInterval>>,
    /// Which requests waited behind GC ([`Timing::track_gc_waits`]).
    pub(super) gc_waits: Option<Box<GcWaits>>,
}

/// Which tagged operations waited on a chip while GC work ran there
/// ([`Timing::track_gc_waits`]): per chip the end of its latest GC phase,
/// and per tag a bit, set when an operation with that tag starts on a chip
/// after arriving before that chip's latest GC phase ended (the chip works
/// one phase at a time, so such an operation waited for the GC phase).
#[derive(Clone, Debug, Default)]
pub(super) struct GcWaits {
    pub(super) gc_end: Vec<Nanos>,
    pub(super) tags: Vec<u64>,
}

impl GcWaits {
    #[cold]
    #[inline(never)]
    fn mark(&mut self, tag: u32) {
        let (w, b) = ((tag / 64) as usize, tag % 64);
        if self.tags.len() <= w {
            self.tags.resize(w + 1, 0);
        }
        self.tags[w] |= 1 << b;
    }

    /// Whether `tag` waited behind GC since the last call for it (clears it).
    pub(super) fn take(&mut self, tag: u32) -> bool {
        let (w, b) = ((tag / 64) as usize, tag % 64);
        self.tags.get_mut(w).is_some_and(|x| {
            let was = *x & (1 << b) != 0;
            *x &= !(1 << b);
            was
        })
    }
}

impl Accounting {
    /// An operation that arrived at chip `c` at `arrival` starts there at
    /// `now`: its wait is charged, and with [`GcWaits`] tracked, a tagged
    /// one that arrived before the chip's latest GC phase ended is marked.
    #[inline(always)]
    fn started(&mut self, c: &mut Chip, arrival: Nanos, now: Nanos, tag: u32) {
        c.wait += now - arrival;
        if let Some(g) = self.gc_waits.as_deref_mut() {
            if arrival < g.gc_end[c.global as usize] && tag != NO_TAG {
                g.mark(tag);
            }
        }
    }

    /// GC work starts on chip `c`, lasting until `until`.
    #[inline(always)]
    fn gc_started(&mut self, c: &Chip, until: Nanos) {
        if let Some(g) = self.gc_waits.as_deref_mut() {
            g.gc_end[c.global as usize] = until;
        }
    }

    /// Chip `c` works for `dur` from `start`; `host`: for a request
    /// (a tagged operation), else background work (GC, relocation, a
    /// dedup engine's own operations).
    #[inline(always)]
    fn charge(&mut self, c: &mut Chip, start: Nanos, dur: Nanos, host: bool) {
        c.busy += dur;
        if self.series.is_some() {
            self.charge_series(start, dur, host);
        }
    }

    /// Out of line: the scheduler's hot loop keeps one test for it.
    #[cold]
    #[inline(never)]
    fn charge_series(&mut self, start: Nanos, dur: Nanos, host: bool) {
        if let Some(s) = &mut self.series {
            s.charge(start, dur, host);
        }
    }
}

impl Channel {
    /// The next event: the end of a sense, the end of a phase with work
    /// queued behind it on its chip, or the bus freeing while a chip waits
    /// for it.
    #[inline]
    pub(super) fn next_end(&self) -> Option<Nanos> {
        (self.next != NEVER).then_some(self.next)
    }

    /// Processes every event before `until`. Every decision due at `now`
    /// has been made (a channel is settled at each event and at each
    /// arrival), so only events remain.
    #[inline]
    pub(super) fn advance(&mut self, until: Nanos, r: &Rules, acct: &mut Accounting, done: &mut Vec<(u32, Nanos)>) {
        if !self.dirty && self.next >= until {
            return;
        }
        // One loop per reporting mode, each with its mode's settle inlined.
        if r.late {
            self.advance_in::<true>(until, r, acct, done);
        } else {
            self.advance_in::<false>(until, r, acct, done);
        }
    }

    /// [`Channel::advance`] in one reporting mode (`LATE`: [`Rules::late`]).
    #[inline(never)]
    fn advance_in<const LATE: bool>(
        &mut self,
        until: Nanos,
        r: &Rules,
        acct: &mut Accounting,
        done: &mut Vec<(u32, Nanos)>,
    ) {
        if self.dirty {
            self.settle::<LATE>(r, acct, done);
        }
        while self.next < until {
            self.now = self.next;
            if !LATE && self.sense_end_alone(r, acct, done) {
                continue;
            }
            self.settle::<LATE>(r, acct, done);
        }
    }

    /// The settle of the commonest event, by arithmetic (only when
    /// completions are not reported late): nothing queued, no read data
    /// held, the bus free, and one chip's sense ending at `now`. Then that
    /// sense's end is the only event due (with nothing queued or held, an
    /// event is a sense's end: no phase has work behind it, no chip waits
    /// for the bus), and the full settle would make the chip hold its data
    /// and at once grant it the free bus, the only contender; the other
    /// chips' phases that ended by `now` (no work behind them) it would
    /// mark idle, which changes no decision (an ended phase counts as idle
    /// everywhere: [`Channel::arrive`], the next settle, dynamic
    /// allocation's search), so they are left to the next settle. Returns
    /// false, having changed nothing, when the full settle must decide.
    /// `lazy_events_decide_as_one_event_per_phase` (the timing tests)
    /// compares it with the event-per-phase mode, which never takes it.
    #[inline(always)]
    fn sense_end_alone(&mut self, r: &Rules, acct: &mut Accounting, done: &mut Vec<(u32, Nanos)>) -> bool {
        let now = self.now;
        if self.queued != 0 || self.held != 0 || self.bus_free > now {
            return false;
        }
        let mut ending = None;
        let mut next = NEVER;
        for (i, c) in self.chips.iter().enumerate() {
            if c.phase == Phase::Sense {
                if c.until <= now {
                    if ending.is_some() {
                        return false;
                    }
                    ending = Some(i);
                } else {
                    next = next.min(c.until);
                }
            }
        }
        let Some(i) = ending else { return false };
        let c = &mut self.chips[i];
        self.dirty = false;
        self.bus_free = now + r.t_xfer;
        // Held from `until` (= now).
        if start_read_out(c, self.bus_free, r, acct, &mut self.waiting_reads, &mut self.bus_read) {
            done.push((c.tag, self.bus_free));
        }
        // Nothing queued behind the transfer, no one waiting for the bus:
        // the next event is another chip's sense end, if any.
        self.next = next;
        true
    }

    /// Queues an arriving operation on chip `i` (the general path; the
    /// caller settles the channel at its arrival next).
    #[inline]
    pub(super) fn enqueue(&mut self, i: usize, read: bool, q: Queued) {
        let c = &mut self.chips[i];
        if read {
            c.reads.push_back(q);
        } else {
            c.writes.push_back(q);
        }
        self.queued += 1;
    }

    /// The decisions an arrival makes at once, in the common cases where
    /// they are plain arithmetic: nothing else is due at the arrival (every
    /// decision before it was made when it fell due), so the arriving
    /// operation is the only one that can start now. Returns false, having
    /// changed nothing, when the general path (queue, then settle) must
    /// decide. Not when completions are reported late (the caller's test).
    ///
    /// * a read or a program on a chip that is busy (or holds read data):
    ///   it waits in its queue; the chip's phase end becomes an event;
    /// * a read on an idle chip with nothing queued: its sense starts;
    /// * a program on an idle chip with nothing queued: it takes the bus if
    ///   free (no one else can want it: a waiting chip would have had it),
    ///   else waits for it (the bus freeing becomes an event).
    #[inline]
    pub(super) fn arrive(
        &mut self,
        i: usize,
        read: bool,
        q: Queued,
        r: &Rules,
        acct: &mut Accounting,
        done: &mut Vec<(u32, Nanos)>,
    ) -> bool {
        let now = self.now.max(q.arrival);
        self.now = now;
        if self.next <= now || q.gc > Nanos::ZERO {
            return false;
        }
        let c = &mut self.chips[i];
        // A phase that has ended (it had no queued work behind it, so its
        // end was no event) leaves the chip idle.
        let idle = c.phase == Phase::Idle || (c.phase != Phase::Held && c.until <= now);
        if !idle {
            if read {
                c.reads.push_back(q);
            } else {
                c.writes.push_back(q);
            }
            self.queued += 1;
            if read {
                chain_read::<false>(c, r, acct, &mut self.queued);
            }
            if c.phase != Phase::Held {
                self.next = self.next.min(c.until);
            }
            return true;
        }
        if !c.reads.is_empty() || !c.writes.is_empty() {
            return false;
        }
        if read {
            c.phase = Phase::Sense;
            c.until = now + r.t_read;
            c.tag = q.tag;
            c.arrival = q.arrival;
            c.ppn = q.ppn;
            acct.started(c, q.arrival, now, q.tag);
            self.next = self.next.min(c.until);
        } else if self.bus_free <= now {
            acct.started(c, q.arrival, now, q.tag);
            acct.charge(c, now, r.t_xfer + r.t_prog, q.tag != NO_TAG);
            self.bus_write += r.t_xfer;
            self.bus_free = now + r.t_xfer;
            c.phase = Phase::Program;
            c.tag = q.tag;
            c.until = self.bus_free + r.t_prog;
            report_program::<false>(r, q.tag, self.bus_free, c.until, done);
        } else {
            c.phase = Phase::Idle;
            c.writes.push_back(q);
            self.queued += 1;
            self.next = self.next.min(self.bus_free);
        }
        true
    }

    /// Ends the phases due by `now` and makes every decision due at `now`.
    pub(super) fn settle_due(&mut self, r: &Rules, acct: &mut Accounting, done: &mut Vec<(u32, Nanos)>) {
        if r.late {
            self.settle::<true>(r, acct, done);
        } else {
            self.settle::<false>(r, acct, done);
        }
    }

    /// [`Channel::settle_due`] in one reporting mode (`LATE`:
    /// [`Rules::late`], a constant here so that each mode's tests fold
    /// away).
    #[inline(always)]
    fn settle<const LATE: bool>(&mut self, r: &Rules, acct: &mut Accounting, done: &mut Vec<(u32, Nanos)>) {
        let now = self.now;
        self.dirty = false;
        // One pass suffices: phase ends (1) only make chips held or idle;
        // starts (2) only need idle chips; a bus grant (3) needs held or
        // idle chips and leaves the bus busy; and no phase lasts 0 ns, so
        // nothing decided now ends now. (1) and (2) concern one chip each,
        // so they share a loop; (3) and the next event (4) share another.
        for c in self.chips.iter_mut() {
            // 1. A phase ended by now. Only a sense's end is a decision (its
            //    data wants the bus); the others' completions were reported
            //    when they started (unless reported late), so they end here
            //    lazily, at the next settle.
            if c.until <= now && !matches!(c.phase, Phase::Idle | Phase::Held) {
                if c.phase == Phase::Sense {
                    c.phase = Phase::Held;
                    self.held += 1;
                    continue;
                }
                if LATE && c.tag != NO_TAG {
                    report_end(r, c.phase, c.tag, c.until, done);
                }
                c.phase = Phase::Idle;
            }
            // 2. An idle chip starts chip-only work (a read's sense, GC).
            if c.phase != Phase::Idle || self.queued == 0 {
                continue;
            }
            let take_read = match (c.reads.front(), c.writes.front()) {
                (Some(_), None) => true,
                (Some(rd), Some(wr)) => r.scheduling == Scheduling::ReadPriority || rd.arrival < wr.arrival,
                _ => false,
            };
            if take_read {
                let q = c.reads.pop_front().unwrap_or(Queued { arrival: now, tag: NO_TAG, ppn: 0, gc: Nanos::ZERO });
                self.queued -= 1;
                acct.started(c, q.arrival, now, q.tag);
                c.phase = Phase::Sense;
                c.until = now + r.t_read;
                c.tag = q.tag;
                c.arrival = q.arrival;
                c.ppn = q.ppn;
            } else if let Some(q) = c.writes.front().copied().filter(|q| q.gc > Nanos::ZERO) {
                c.writes.pop_front();
                self.queued -= 1;
                c.wait += now - q.arrival;
                acct.charge(c, now, q.gc, false);
                acct.gc_started(c, now + q.gc);
                c.phase = Phase::Gc;
                c.until = now + q.gc;
                c.tag = NO_TAG;
            }
        }
        // 3. The bus, if free, goes to one waiting chip: (class, time,
        //    chip), class 0 = read data out, 1 = program in. 4. The next
        //    event, without the granted chip (added after the grant).
        let bus_free = self.bus_free <= now;
        let mut best: Option<(u8, Nanos, usize)> = None;
        let mut next = NEVER;
        let mut waiters = 0u32;
        for (i, c) in self.chips.iter_mut().enumerate() {
            let cand = match c.phase {
                Phase::Sense => {
                    next = next.min(c.until);
                    continue;
                }
                Phase::Out | Phase::Program | Phase::Gc => {
                    chain_read::<LATE>(c, r, acct, &mut self.queued);
                    if LATE || c.phase == Phase::Sense || !c.reads.is_empty() || !c.writes.is_empty() {
                        next = next.min(c.until);
                    }
                    continue;
                }
                // A held read's age: its sense end under read priority,
                // its arrival under FCFS.
                Phase::Held => (0u8, if r.scheduling == Scheduling::Fcfs { c.arrival } else { c.until }),
                Phase::Idle => match c.writes.front() {
                    Some(q) if q.gc == Nanos::ZERO => (1u8, q.arrival),
                    _ => continue,
                },
            };
            waiters += 1;
            if bus_free {
                let key = match r.scheduling {
                    Scheduling::ReadPriority => (cand.0, cand.1, i),
                    Scheduling::Fcfs => (0, cand.1, i),
                };
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        if let Some((_, _, i)) = best {
            waiters -= 1;
            let c = &mut self.chips[i];
            self.bus_free = now + r.t_xfer;
            if c.phase == Phase::Held {
                // Held since `until`.
                self.held -= 1;
                // Untagged reads (a dedup engine's background or metadata
                // reads) report nothing.
                if start_read_out(c, self.bus_free, r, acct, &mut self.waiting_reads, &mut self.bus_read) && !LATE {
                    done.push((c.tag, self.bus_free));
                }
            } else {
                let q = c.writes.pop_front().unwrap_or(Queued { arrival: now, tag: NO_TAG, ppn: 0, gc: Nanos::ZERO });
                self.queued -= 1;
                acct.started(c, q.arrival, now, q.tag);
                acct.charge(c, now, r.t_xfer + r.t_prog, q.tag != NO_TAG);
                self.bus_write += r.t_xfer;
                c.phase = Phase::Program;
                c.tag = q.tag;
                c.until = self.bus_free + r.t_prog;
                report_program::<LATE>(r, q.tag, self.bus_free, c.until, done);
            }
            chain_read::<LATE>(c, r, acct, &mut self.queued);
            if LATE || c.phase == Phase::Sense || !c.reads.is_empty() || !c.writes.is_empty() {
                next = next.min(c.until);
            }
        }
        // The bus freeing is an event only if a chip waits for it (when
        // completions are reported late: if anything is queued or held).
        let waiting = if LATE { self.queued > 0 || self.held > 0 } else { waiters > 0 };
        if waiting && self.bus_free > now {
            next = next.min(self.bus_free);
        }
        self.next = next;
    }
}

/// Starts a busy chip's next read now, back to back with the phase it is
/// in, when that is already decided (module doc, "Events"): under read
/// priority, a chip ending a phase whose end is fixed (a transfer out, a
/// program, GC) starts its oldest queued read then, whatever arrives
/// meanwhile (a later read queues behind it, writes and GC wait for
/// reads), so the read's sense is scheduled at once, from the phase's end,
/// and that end is no event. A read taken from the queue leaves the
/// channel's `queued` count, and its wait (arrival to the phase's end) is
/// added to the chip's. Not when completions are reported late (`LATE`):
/// that mode keeps one event per phase end.
#[inline(always)]
fn chain_read<const LATE: bool>(c: &mut Chip, r: &Rules, acct: &mut Accounting, queued: &mut u32) {
    if LATE || r.scheduling != Scheduling::ReadPriority || !matches!(c.phase, Phase::Out | Phase::Program | Phase::Gc) {
        return;
    }
    let Some(q) = c.reads.pop_front() else { return };
    *queued -= 1;
    let start = c.until;
    acct.started(c, q.arrival, start, q.tag);
    c.phase = Phase::Sense;
    c.until = start + r.t_read;
    c.tag = q.tag;
    c.arrival = q.arrival;
    c.ppn = q.ppn;
}

/// Puts chip `c`'s sensed read data on the bus, which frees at `bus_free`
/// (the transfer's end): the chip is busy from its sense's start to then,
/// counted a page read, and its page leaves the reads waiting for the
/// shortcut. Returns whether the read is tagged (a completion to report).
#[inline(always)]
fn start_read_out(
    c: &mut Chip,
    bus_free: Nanos,
    r: &Rules,
    acct: &mut Accounting,
    waiting_reads: &mut HashMap<u32, u32>,
    bus_read: &mut Nanos,
) -> bool {
    let start = c.until - r.t_read;
    let host = c.tag != NO_TAG;
    acct.charge(c, start, bus_free - start, host);
    c.read_busy += bus_free - start;
    c.pages_read += 1;
    *bus_read += r.t_xfer;
    c.phase = Phase::Out;
    if r.shortcut {
        if let Some(n) = waiting_reads.get_mut(&c.ppn) {
            *n -= 1;
            if *n == 0 {
                waiting_reads.remove(&c.ppn);
            }
        }
    }
    c.until = bus_free;
    host
}

/// Reports a program's completion when its bus grant fixes it: the
/// transfer's end (`transfer`) or, unless reported late (`LATE`), the
/// program's (`program`).
#[inline(always)]
fn report_program<const LATE: bool>(
    r: &Rules,
    tag: u32,
    transfer_end: Nanos,
    program_end: Nanos,
    done: &mut Vec<(u32, Nanos)>,
) {
    if tag != NO_TAG {
        if r.completion == WriteCompletion::Transfer {
            done.push((tag, transfer_end));
        } else if !LATE {
            done.push((tag, program_end));
        }
    }
}

/// Whether the end of `phase` is a completion reported late
/// ([`Timing::report_at_completion`]).
#[inline]
fn reports_end(r: &Rules, phase: Phase) -> bool {
    match phase {
        Phase::Out => true,
        Phase::Program => r.completion == WriteCompletion::Program,
        _ => false,
    }
}

/// Reports the completion that ends at `at` with `phase`, if it is one
/// reported late.
#[inline]
fn report_end(r: &Rules, phase: Phase, tag: u32, at: Nanos, done: &mut Vec<(u32, Nanos)>) {
    if reports_end(r, phase) {
        done.push((tag, at));
    }
}
