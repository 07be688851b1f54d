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
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// Flash and controller timing (FAD Table I; bus from SSDsim's parameter file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingConfig {
    /// tR: page read (array to register).
    pub read: Nanos,
    /// tPROG: page program.
    pub program: Nanos,
    /// tBERS: block erase.
    pub erase: Nanos,
    /// Channel transfer time per byte in picoseconds (SSDsim t_RC = t_WC =
    /// 25 ns on an 8-bit bus => 25_000 ps/byte, ~102 us per 4 KiB page).
    pub transfer_ps_per_byte: u64,
    /// Derived: one page over the channel bus.
    pub page_transfer: Nanos,
    /// Which waiting operation chips and buses serve next.
    pub scheduling: Scheduling,
    /// When a page program counts as done for its write request.
    pub write_completion: WriteCompletion,
    /// SSDsim's shortcut: a read of a physical page that already has a read
    /// waiting on its channel completes 1 us after arriving.
    pub duplicate_read_shortcut: bool,
}

/// What [`Timing::new`] needs: the channels and chips, the flash timing,
/// the hash engines and whether GC migrates with copyback. Resolved from a
/// configuration by `Config::timing_params`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingParams {
    /// `geometry.channels`.
    pub channels: u32,
    /// `geometry.chips_per_channel`.
    pub chips_per_channel: u32,
    /// `[timing]`.
    pub timing: TimingConfig,
    /// The hash engines (`dedup.fingerprint`, `dedup.hash_*`).
    pub hash: HashParams,
    /// `gc.copyback`: GC migrations stay inside the plane (no bus transfer).
    pub copyback: bool,
}

/// The hash engines' parameters (`[dedup]`, FAD §IV-A).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HashParams {
    /// Fingerprint computation per written page (`dedup.fingerprint`).
    pub fingerprint: Nanos,
    /// Hash engines working in parallel (`dedup.hash_engines`).
    pub engines: u32,
    /// What one engine takes at a time (`dedup.hash_unit`).
    pub unit: HashUnit,
    /// Whether programs start as pages are hashed (`dedup.hash_overlap`).
    pub overlap: HashOverlap,
}

/// Which waiting operation a chip and a bus serve next (`timing.scheduling`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduling {
    /// Reads before writes and GC, on every chip and bus (SSDsim, MQSim).
    #[default]
    ReadPriority,
    /// First come, first served by arrival at the chip.
    Fcfs,
}

/// When a page program counts as done for its write request
/// (`timing.write_completion`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteCompletion {
    /// When its data is in the chip's page register (transfer in done):
    /// SSDsim 2.1.
    #[default]
    Transfer,
    /// When the program itself ends (transfer in + tPROG): MQSim.
    Program,
}

/// How a write request's pages are spread over the hash engines
/// (`dedup.hash_unit`). With one engine both are the same.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashUnit {
    /// Each page goes to the earliest-free engine on its own: a request's
    /// pages are hashed on several engines in parallel.
    #[default]
    Page,
    /// A request occupies one engine (the earliest free) for
    /// `pages x dedup.fingerprint`, its pages hashed one after another;
    /// requests, not pages, spread over the engines.
    Request,
}

/// When a write request's page programs may be issued relative to its
/// hashing (`dedup.hash_overlap`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashOverlap {
    /// Page k's program is issued when page k's hash is done, so hashing
    /// overlaps the flash work of the request's earlier pages.
    #[default]
    Pipelined,
    /// No program of a request is issued before every page of the request
    /// is hashed (FAD §III's write path places a file only after all its
    /// fingerprints are looked up).
    BeforeFlash,
}

/// Tag of an operation whose completion nobody waits for (GC).
pub const NO_TAG: u32 = u32::MAX;

/// Latency of a read served by the duplicate-read shortcut (SSDsim: 1 us).
const SHORTCUT: Nanos = Nanos(1_000);

/// "No phase running" for a channel's cached next phase end.
const NEVER: Nanos = Nanos(u64::MAX);

/// What a flash operation does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    /// Chip-only GC work of this duration.
    Gc(Nanos),
}

/// One operation waiting in a chip's queue.
#[derive(Copy, Clone, Debug)]
struct Queued {
    arrival: Nanos,
    tag: u32,
    /// Physical page of a read (for the duplicate-read shortcut).
    ppn: u32,
    /// GC duration, or 0 for a program (writes' queue only).
    gc: Nanos,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
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
struct Chip {
    phase: Phase,
    until: Nanos,
    /// Tag of the operation in progress.
    tag: u32,
    /// Arrival at the chip of the operation in progress.
    arrival: Nanos,
    /// Physical page of the read in progress.
    ppn: u32,
    reads: VecDeque<Queued>,
    /// Programs and GC work, in arrival order.
    writes: VecDeque<Queued>,
}

impl Chip {
    fn new() -> Chip {
        Chip {
            phase: Phase::Idle,
            until: Nanos::ZERO,
            tag: NO_TAG,
            arrival: Nanos::ZERO,
            ppn: 0,
            reads: VecDeque::new(),
            writes: VecDeque::new(),
        }
    }
}

/// One channel: its chips and its bus, with their own clock.
#[derive(Clone, Debug)]
struct Channel {
    now: Nanos,
    bus_free: Nanos,
    chips: Vec<Chip>,
    /// Operations waiting in the chips' queues (a fast "nothing to start").
    queued: u32,
    /// Chips in `Phase::Held` (a fast "nothing wants the bus").
    held: u32,
    /// End of the earliest running timed phase (`Nanos::MAX`-like when none),
    /// cached by `settle`.
    next: Nanos,
    /// An arrival waits for its decisions at `now` (only when completions
    /// are reported late: otherwise an arrival is settled at once).
    dirty: bool,
    /// With the duplicate-read shortcut: physical pages with a read waiting
    /// on this channel (queued or sensing, data not yet going out), and
    /// how many.
    waiting_reads: HashMap<u32, u32>,
}

/// Durations and rules shared by every channel.
#[derive(Copy, Clone, Debug)]
struct Rules {
    t_read: Nanos,
    t_prog: Nanos,
    t_xfer: Nanos,
    scheduling: Scheduling,
    completion: WriteCompletion,
    shortcut: bool,
    /// Completions are reported when they happen, each at an event of its
    /// own ([`Timing::report_at_completion`]), not when they become known.
    late: bool,
}

/// Per-chip accounting, indexed by global chip number.
#[derive(Clone, Debug)]
struct Accounting {
    busy: Vec<Nanos>,
    wait: Vec<Nanos>,
    /// Busy time per interval of simulated time, host and background
    /// ([`Timing::record_busy`]); `None` unless asked for.
    series: Option<Box<BusyByInterval>>,
}

impl Accounting {
    /// Chip `chip` works for `dur` from `start`; `host`: for a request
    /// (a tagged operation), else background work (GC, relocation, a
    /// dedup engine's own operations).
    #[inline]
    fn charge(&mut self, chip: usize, start: Nanos, dur: Nanos, host: bool) {
        self.busy[chip] += dur;
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
    /// Page writes not placed yet (`allocation = "dynamic"`): (arrival,
    /// tag), oldest first ([`Timing::place_next`]).
    unplaced: VecDeque<(Nanos, u32)>,
    /// Per channel: dynamic allocation's chip token (the chip tried first).
    token: Vec<u32>,
    /// Writes placed so far by dynamic allocation (its rotating start).
    placed: u64,
}

/// The hash engines' load over a run (`dedup.hash_engines`,
/// `dedup.fingerprint`): pages hashed, engine time spent hashing, and the
/// time pages waited for an engine (from the write's arrival to the start
/// of the page's hash, so pages of one request queue behind each other).
/// The run report turns it into a utilization and warns when the engines
/// are saturated (docs/reliability.md, item 6).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HashLoad {
    pub engines: u32,
    pub pages: u64,
    pub busy: Nanos,
    /// Total wait in nanoseconds (a sum over pages of waits that may each
    /// approach the clock's range: 128 bits cannot overflow).
    pub wait_ns: u128,
}

impl HashLoad {
    /// A page of a write arriving at `t` hashed from `start` for `t_fp`.
    #[inline]
    fn count(&mut self, t: Nanos, start: Nanos, t_fp: Nanos) {
        self.pages += 1;
        self.busy += t_fp;
        self.wait_ns += u128::from((start - t).0);
    }
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
        };
        Timing {
            rules,
            t_erase: p.timing.erase,
            t_fp: p.hash.fingerprint,
            hash_unit: p.hash.unit,
            hash_overlap: p.hash.overlap,
            copyback: p.copyback,
            channels: vec![channel; g.channels as usize],
            n_channels: g.channels,
            loc: (0..chips as u32).map(|c| (c % g.channels, c / g.channels)).collect(),
            hash_free: vec![Nanos::ZERO; p.hash.engines.max(1) as usize],
            hash: HashLoad { engines: p.hash.engines.max(1), ..HashLoad::default() },
            acct: Accounting { busy: vec![Nanos::ZERO; chips], wait: vec![Nanos::ZERO; chips], series: None },
            done: Vec::new(),
            shortcuts: 0,
            unplaced: VecDeque::new(),
            token: vec![0; g.channels as usize],
            placed: 0,
        }
    }

    /// Queues a page write arriving at `at` whose chip is chosen when a
    /// channel serves it (`allocation = "dynamic"`, SSDsim 2.1's fully
    /// dynamic allocation); [`Timing::place_next`] places it.
    pub fn submit_unplaced(&mut self, at: Nanos, tag: u32) {
        self.unplaced.push_back((at, tag));
    }

    /// Starts dynamic allocation's channel rotation as if `programs` pages
    /// had been programmed (SSDsim counts every page its pre-processing
    /// maps, one per page of every read request in the trace).
    pub fn set_programs_before(&mut self, programs: u64) {
        self.placed = programs;
    }

    /// Sets dynamic allocation's chip tokens: channel `h` tries chip
    /// `tokens[h]` first (SSDsim's pre-processing leaves each channel's
    /// token at its pages mapped modulo its chips).
    pub fn set_chip_tokens(&mut self, tokens: impl IntoIterator<Item = u32>) {
        for (t, v) in self.token.iter_mut().zip(tokens) {
            *t = v;
        }
    }

    /// Whether page writes wait unplaced.
    pub fn has_unplaced(&self) -> bool {
        !self.unplaced.is_empty()
    }

    /// Places the oldest unplaced write if a channel can serve it before
    /// `until` (exclusive: nothing else arrives before then), and submits
    /// its program there; returns its tag, chip and time. A channel can
    /// serve a write at the first instant its bus is free, no chip holds
    /// read data for it (reads go first) and a chip is idle with nothing
    /// queued, tried from the channel's token, which then moves past the
    /// chosen chip. Channels able to serve at the same instant are tried
    /// from a rotating start, the writes placed so far modulo the channels
    /// (SSDsim's `process` loop starts at `program_count % channels`).
    pub fn place_next(&mut self, until: Nanos) -> Option<(u32, u32, Nanos)> {
        let &(arrival, tag) = self.unplaced.front()?;
        let n = self.n_channels;
        let start = (self.placed % u64::from(n)) as u32;
        let mut best: Option<(Nanos, u32, usize)> = None;
        for k in 0..n {
            let h = (start + k) % n;
            // Only an earlier slot than the best so far can win.
            let limit = best.map_or(until, |b| b.0);
            if let Some((t, i)) = self.write_slot(h, arrival, limit) {
                best = Some((t, h, i));
            }
        }
        let (t, h, i) = best?;
        self.unplaced.pop_front();
        let chips = self.channels[h as usize].chips.len();
        self.token[h as usize] = ((i + 1) % chips) as u32;
        self.placed += 1;
        let chip = i as u32 * n + h;
        self.submit_op(chip, t, OpKind::Program, tag, 0);
        Some((tag, chip, t))
    }

    /// The first instant in `[from, limit)` at which channel `h` can serve
    /// an unplaced write (see [`Timing::place_next`]), and the chip. Runs
    /// the channel's events up to that instant, which is safe: nothing
    /// arrives on the channel before `limit`.
    fn write_slot(&mut self, h: u32, from: Nanos, limit: Nanos) -> Option<(Nanos, usize)> {
        let n = self.n_channels;
        let token = self.token[h as usize] as usize;
        let ch = &mut self.channels[h as usize];
        let mut t = from.max(ch.now);
        while t < limit {
            // Every decision due by `t` made, those at `t` included.
            ch.advance(t + Nanos(1), h, n, &self.rules, &mut self.acct, &mut self.done);
            if ch.bus_free <= t && ch.held == 0 {
                let k = ch.chips.len();
                for j in 0..k {
                    let i = (token + j) % k;
                    let c = &ch.chips[i];
                    let idle = c.phase == Phase::Idle || (c.phase != Phase::Held && c.until <= t);
                    if idle && c.reads.is_empty() && c.writes.is_empty() {
                        return Some((t, i));
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
                return None;
            }
            t = next.max(t + Nanos(1));
        }
        None
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
            ch.advance(at, h as u32, self.n_channels, &self.rules, &mut self.acct, &mut self.done);
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

    #[inline]
    fn submit_op(&mut self, chip: u32, at: Nanos, kind: OpKind, tag: u32, ppn: u32) {
        let (h, local) = self.loc[chip as usize];
        let ch = &mut self.channels[h as usize];
        ch.advance(at, h, self.n_channels, &self.rules, &mut self.acct, &mut self.done);
        let q = match kind {
            OpKind::Read | OpKind::Program => Queued { arrival: at, tag, ppn, gc: Nanos::ZERO },
            OpKind::Gc(d) => Queued { arrival: at, tag, ppn, gc: d.max(Nanos(1)) },
        };
        let (n, read) = (self.n_channels, kind == OpKind::Read);
        if !self.rules.late && ch.arrive(local as usize, read, q, h, n, &self.rules, &mut self.acct, &mut self.done) {
            return;
        }
        ch.now = ch.now.max(at);
        ch.enqueue(local as usize, read, q);
        if self.rules.late {
            // Decided at the next settle, as the event-per-phase model did.
            ch.dirty = true;
        } else {
            ch.settle_due(h, n, &self.rules, &mut self.acct, &mut self.done);
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
        for (h, ch) in self.channels.iter_mut().enumerate() {
            ch.advance(t, h as u32, self.n_channels, &self.rules, &mut self.acct, &mut self.done);
        }
    }

    /// Earliest time at which any channel has something to do, if any.
    pub fn next_event(&mut self) -> Option<Nanos> {
        let mut best: Option<Nanos> = None;
        for (h, ch) in self.channels.iter_mut().enumerate() {
            if ch.dirty {
                ch.settle_due(h as u32, self.n_channels, &self.rules, &mut self.acct, &mut self.done);
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

    /// Completions since the last call: `(tag, time)`, not sorted.
    #[inline]
    pub fn take_completions(&mut self, out: &mut Vec<(u32, Nanos)>) {
        out.append(&mut self.done);
    }

    /// Whether completions are waiting to be taken.
    #[inline]
    pub fn has_completions(&self) -> bool {
        !self.done.is_empty()
    }

    /// The earliest-free hash engine; ties to the lowest index
    /// (deterministic).
    #[inline]
    fn free_engine(&self) -> usize {
        let mut best = 0;
        for i in 1..self.hash_free.len() {
            if self.hash_free[i] < self.hash_free[best] {
                best = i;
            }
        }
        best
    }

    /// Fingerprint of one page arriving at `t` on the earliest-free engine;
    /// returns when the hash is known.
    #[inline]
    pub fn fingerprint(&mut self, t: Nanos) -> Nanos {
        let e = self.free_engine();
        let start = t.max(self.hash_free[e]);
        let done = start + self.t_fp;
        self.hash_free[e] = done;
        self.hash.count(t, start, self.t_fp);
        done
    }

    /// What the hash engines did so far (see [`HashLoad`]).
    pub fn hash_load(&self) -> HashLoad {
        self.hash
    }

    /// Fingerprints a write request of `pages` pages arriving at `t`
    /// (`dedup.hash_unit`, `dedup.hash_overlap`) and sets `ready[k]` to the
    /// time page k's program may be issued, which is also when page k
    /// completes if it is a duplicate:
    ///
    /// * `page` unit: each page on the earliest-free engine, in page order;
    ///   `request` unit: the whole request on the earliest-free engine,
    ///   page k hashed at `start + (k+1) x fingerprint`.
    /// * `pipelined`: page k is ready when its own hash is done;
    ///   `before-flash`: every page is ready when the request's last hash
    ///   is done.
    ///
    /// With the `page` unit, ready times never decrease from one call to
    /// the next (the engines' earliest free time only grows); with the
    /// `request` unit and several engines a later request can be ready
    /// before an earlier one.
    pub fn fingerprint_request(&mut self, t: Nanos, pages: usize, ready: &mut Vec<Nanos>) {
        self.hash_pages(t, pages, |_| true, self.t_fp, ready);
    }

    /// Like [`Timing::fingerprint_request`] for a dedup engine
    /// ([`crate::engine`]) that hashes a page in `t_fp` and only the pages
    /// with `hashed[k]` (the others are ready at `t` and take no engine
    /// time), under the same `hash_unit` / `hash_overlap` models.
    pub fn fingerprint_pages(&mut self, t: Nanos, hashed: &[bool], t_fp: Nanos, ready: &mut Vec<Nanos>) {
        self.hash_pages(t, hashed.len(), |k| hashed[k], t_fp, ready);
    }

    /// The hash engine models of both entry points: `pages` pages of which
    /// those with `hashed(k)` take `t_fp` each.
    #[inline]
    fn hash_pages(
        &mut self,
        t: Nanos,
        pages: usize,
        hashed: impl Fn(usize) -> bool,
        t_fp: Nanos,
        ready: &mut Vec<Nanos>,
    ) {
        ready.clear();
        match self.hash_unit {
            HashUnit::Page => {
                for k in 0..pages {
                    if hashed(k) {
                        let e = self.free_engine();
                        let start = t.max(self.hash_free[e]);
                        let done = start + t_fp;
                        self.hash_free[e] = done;
                        self.hash.count(t, start, t_fp);
                        ready.push(done);
                    } else {
                        ready.push(t);
                    }
                }
            }
            HashUnit::Request => {
                if !(0..pages).any(&hashed) {
                    ready.resize(pages, t);
                    return;
                }
                let e = self.free_engine();
                let mut done = t.max(self.hash_free[e]);
                for k in 0..pages {
                    if hashed(k) {
                        self.hash.count(t, done, t_fp);
                        done += t_fp;
                        ready.push(done);
                    } else {
                        ready.push(t);
                    }
                }
                self.hash_free[e] = done;
            }
        }
        if self.hash_overlap == HashOverlap::BeforeFlash {
            let last = ready.iter().copied().max().unwrap_or(t);
            ready.fill(last);
        }
    }

    /// Per chip: total time busy (sense/program/erase/transfer/holding data).
    pub fn chip_busy(&self) -> &[Nanos] {
        &self.acct.busy
    }

    /// Also charges every chip's busy time to intervals of `interval` of
    /// simulated time, host and background apart (`run --timeseries`).
    pub fn record_busy(&mut self, interval: Nanos) {
        self.acct.series = Some(Box::new(BusyByInterval::new(interval)));
    }

    /// The busy time per interval, if [`Timing::record_busy`] asked for it.
    pub fn take_busy(&mut self) -> Option<BusyByInterval> {
        self.acct.series.take().map(|b| *b)
    }

    /// Per chip: total time operations waited between arriving at the chip
    /// and starting.
    pub fn chip_wait(&self) -> &[Nanos] {
        &self.acct.wait
    }

    /// Reads completed by the duplicate-read shortcut.
    pub fn shortcut_reads(&self) -> u64 {
        self.shortcuts
    }
}

impl Channel {
    /// The next event: the end of a sense, the end of a phase with work
    /// queued behind it on its chip, or the bus freeing while a chip waits
    /// for it.
    #[inline]
    fn next_end(&self) -> Option<Nanos> {
        (self.next != NEVER).then_some(self.next)
    }

    /// Processes every event before `until`. Every decision due at `now`
    /// has been made (a channel is settled at each event and at each
    /// arrival), so only events remain.
    #[inline]
    fn advance(
        &mut self,
        until: Nanos,
        h: u32,
        n: u32,
        r: &Rules,
        acct: &mut Accounting,
        done: &mut Vec<(u32, Nanos)>,
    ) {
        if self.dirty {
            self.settle_due(h, n, r, acct, done);
        }
        while self.next < until {
            self.now = self.next;
            self.settle_due(h, n, r, acct, done);
        }
    }

    /// Queues an arriving operation on chip `i` (the general path; the
    /// caller settles the channel at its arrival next).
    #[inline]
    fn enqueue(&mut self, i: usize, read: bool, q: Queued) {
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
    /// decide.
    ///
    /// * a read or a program on a chip that is busy (or holds read data):
    ///   it waits in its queue; the chip's phase end becomes an event;
    /// * a read on an idle chip with nothing queued: its sense starts;
    /// * a program on an idle chip with nothing queued: it takes the bus if
    ///   free (no one else can want it: a waiting chip would have had it),
    ///   else waits for it (the bus freeing becomes an event).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &mut self,
        i: usize,
        read: bool,
        q: Queued,
        h: u32,
        n: u32,
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
                chain_read(c, r, &mut acct.wait[(i as u32 * n + h) as usize], &mut self.queued);
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
            acct.wait[(i as u32 * n + h) as usize] += now - q.arrival;
            self.next = self.next.min(c.until);
        } else if self.bus_free <= now {
            let chip = (i as u32 * n + h) as usize;
            acct.wait[chip] += now - q.arrival;
            acct.charge(chip, now, r.t_xfer + r.t_prog, q.tag != NO_TAG);
            self.bus_free = now + r.t_xfer;
            c.phase = Phase::Program;
            c.tag = q.tag;
            c.until = self.bus_free + r.t_prog;
            report_program(r, q.tag, self.bus_free, c.until, done);
        } else {
            c.phase = Phase::Idle;
            c.writes.push_back(q);
            self.queued += 1;
            self.next = self.next.min(self.bus_free);
        }
        true
    }

    /// Ends the phases due by `now` and makes every decision due at `now`.
    fn settle_due(&mut self, h: u32, n: u32, r: &Rules, acct: &mut Accounting, done: &mut Vec<(u32, Nanos)>) {
        let now = self.now;
        self.dirty = false;
        // One pass suffices: phase ends (1) only make chips held or idle;
        // starts (2) only need idle chips; a bus grant (3) needs held or
        // idle chips and leaves the bus busy; and no phase lasts 0 ns, so
        // nothing decided now ends now. (1) and (2) concern one chip each,
        // so they share a loop; (3) and the next event (4) share another.
        for (i, c) in self.chips.iter_mut().enumerate() {
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
                if r.late && c.tag != NO_TAG {
                    report_end(r, c.phase, c.tag, c.until, done);
                }
                c.phase = Phase::Idle;
            }
            // 2. An idle chip starts chip-only work (a read's sense, GC).
            if c.phase != Phase::Idle || self.queued == 0 {
                continue;
            }
            let chip = (i as u32 * n + h) as usize;
            let take_read = match (c.reads.front(), c.writes.front()) {
                (Some(_), None) => true,
                (Some(rd), Some(wr)) => r.scheduling == Scheduling::ReadPriority || rd.arrival < wr.arrival,
                _ => false,
            };
            if take_read {
                let q = c.reads.pop_front().unwrap_or(Queued { arrival: now, tag: NO_TAG, ppn: 0, gc: Nanos::ZERO });
                self.queued -= 1;
                acct.wait[chip] += now - q.arrival;
                c.phase = Phase::Sense;
                c.until = now + r.t_read;
                c.tag = q.tag;
                c.arrival = q.arrival;
                c.ppn = q.ppn;
            } else if let Some(q) = c.writes.front().copied().filter(|q| q.gc > Nanos::ZERO) {
                c.writes.pop_front();
                self.queued -= 1;
                acct.wait[chip] += now - q.arrival;
                acct.charge(chip, now, q.gc, false);
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
                    chain_read(c, r, &mut acct.wait[(i as u32 * n + h) as usize], &mut self.queued);
                    if r.late || c.phase == Phase::Sense || !c.reads.is_empty() || !c.writes.is_empty() {
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
            let chip = (i as u32 * n + h) as usize;
            self.bus_free = now + r.t_xfer;
            if c.phase == Phase::Held {
                // Held since `until`; busy from sense start to transfer end.
                let start = c.until - r.t_read;
                acct.charge(chip, start, self.bus_free - start, c.tag != NO_TAG);
                c.phase = Phase::Out;
                self.held -= 1;
                if r.shortcut {
                    if let Some(n) = self.waiting_reads.get_mut(&c.ppn) {
                        *n -= 1;
                        if *n == 0 {
                            self.waiting_reads.remove(&c.ppn);
                        }
                    }
                }
                // Untagged reads (a dedup engine's background or metadata
                // reads) report nothing.
                if c.tag != NO_TAG && !r.late {
                    done.push((c.tag, self.bus_free));
                }
                c.until = self.bus_free;
            } else {
                let q = c.writes.pop_front().unwrap_or(Queued { arrival: now, tag: NO_TAG, ppn: 0, gc: Nanos::ZERO });
                self.queued -= 1;
                acct.wait[chip] += now - q.arrival;
                acct.charge(chip, now, r.t_xfer + r.t_prog, q.tag != NO_TAG);
                c.phase = Phase::Program;
                c.tag = q.tag;
                c.until = self.bus_free + r.t_prog;
                report_program(r, q.tag, self.bus_free, c.until, done);
            }
            chain_read(c, r, &mut acct.wait[chip], &mut self.queued);
            if r.late || c.phase == Phase::Sense || !c.reads.is_empty() || !c.writes.is_empty() {
                next = next.min(c.until);
            }
        }
        // The bus freeing is an event only if a chip waits for it (when
        // completions are reported late: if anything is queued or held).
        let waiting = if r.late { self.queued > 0 || self.held > 0 } else { waiters > 0 };
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
/// added to `wait`. Not when completions are reported late: that mode
/// keeps one event per phase end.
#[inline]
fn chain_read(c: &mut Chip, r: &Rules, wait: &mut Nanos, queued: &mut u32) {
    if r.late || r.scheduling != Scheduling::ReadPriority || !matches!(c.phase, Phase::Out | Phase::Program | Phase::Gc)
    {
        return;
    }
    let Some(q) = c.reads.pop_front() else { return };
    *queued -= 1;
    let start = c.until;
    *wait += start - q.arrival;
    c.phase = Phase::Sense;
    c.until = start + r.t_read;
    c.tag = q.tag;
    c.arrival = q.arrival;
    c.ppn = q.ppn;
}

/// Reports a program's completion when its bus grant fixes it: the
/// transfer's end (`transfer`) or, unless reported late, the program's
/// (`program`).
#[inline]
fn report_program(r: &Rules, tag: u32, transfer_end: Nanos, program_end: Nanos, done: &mut Vec<(u32, Nanos)>) {
    if tag != NO_TAG {
        if r.completion == WriteCompletion::Transfer {
            done.push((tag, transfer_end));
        } else if !r.late {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// Tiny geometry: 2 channels x 2 chips, tR = 20 us, tPROG = 200 us,
    /// tBERS = 1.5 ms, transfer 102.4 us per 4 KiB page.
    fn tiny(s: Scheduling, w: WriteCompletion) -> Timing {
        let mut cfg = Config::small_for_tests(2, 2, 16, 4);
        cfg.timing.scheduling = s;
        cfg.timing.write_completion = w;
        Timing::new(&cfg.timing_params())
    }

    fn rp() -> Timing {
        tiny(Scheduling::ReadPriority, WriteCompletion::Program)
    }

    const TR: u64 = 20_000;
    const TX: u64 = 102_400;
    const TP: u64 = 200_000;

    /// Runs to the end; completion time of each tag, by tag.
    fn run(t: &mut Timing) -> Vec<u64> {
        t.finish();
        let mut out = Vec::new();
        t.take_completions(&mut out);
        out.sort_by_key(|&(tag, _)| tag);
        out.into_iter().map(|(_, d)| d.0).collect()
    }

    #[test]
    fn two_reads_same_chip_serialize() {
        let mut t = rp();
        t.submit(0, Nanos(0), OpKind::Read, 0);
        t.submit(0, Nanos(0), OpKind::Read, 1);
        // The second waits for the whole first (sense + transfer), then its own.
        assert_eq!(run(&mut t), vec![TR + TX, 2 * (TR + TX)]);
        assert_eq!(t.chip_wait()[0], Nanos(TR + TX));
        assert_eq!(t.chip_busy()[0], Nanos(2 * (TR + TX)));
    }

    #[test]
    fn two_reads_same_channel_share_the_bus() {
        let mut t = rp();
        // Chips 0 and 2 are both on channel 0 (channel = chip % 2).
        t.submit(0, Nanos(0), OpKind::Read, 0);
        t.submit(2, Nanos(0), OpKind::Read, 1);
        assert_eq!(run(&mut t), vec![TR + TX, TR + 2 * TX]);
    }

    #[test]
    fn two_reads_different_channels_overlap() {
        let mut t = rp();
        t.submit(0, Nanos(0), OpKind::Read, 0);
        t.submit(1, Nanos(0), OpKind::Read, 1);
        assert_eq!(run(&mut t), vec![TR + TX, TR + TX]);
    }

    /// Dynamic allocation (SSDsim's serve-time rule): a waiting write goes
    /// to the first channel, from the rotating start, whose bus is free
    /// and which has an idle chip (from its token); read data waiting for
    /// the bus goes first.
    #[test]
    fn dynamic_allocation_serves_writes_where_a_channel_is_free() {
        let mut t = tiny(Scheduling::ReadPriority, WriteCompletion::Transfer);
        for tag in 0..3 {
            t.submit_unplaced(Nanos(0), tag);
        }
        // 2 channels x 2 chips (chip g on channel g % 2): the first write
        // starts the rotation at channel 0, the second at channel 1, both
        // at once; the third finds both buses busy until TX and goes to
        // channel 0's next chip (its token moved past chip 0).
        assert_eq!(t.place_next(Nanos(u64::MAX)), Some((0, 0, Nanos(0))));
        assert_eq!(t.place_next(Nanos(u64::MAX)), Some((1, 1, Nanos(0))));
        // Nothing before `until` (exclusive): it stays queued.
        assert_eq!(t.place_next(Nanos(TX)), None);
        assert!(t.has_unplaced());
        assert_eq!(t.place_next(Nanos(u64::MAX)), Some((2, 2, Nanos(TX))));
        assert_eq!(run(&mut t), vec![TX, TX, 2 * TX]);

        // Read data waiting for the bus goes before a waiting write: on one
        // channel of 2 chips, the read on chip 0 senses until TR, its data
        // then takes the bus, and the write arriving at TR gets it only at
        // TR + TX (on chip 0, where the token points: its read is done).
        let mut t = Timing::new(&Config::small_for_tests(1, 2, 16, 4).timing_params());
        t.submit(0, Nanos(0), OpKind::Read, 0);
        t.submit_unplaced(Nanos(TR), 1);
        assert_eq!(t.place_next(Nanos(u64::MAX)), Some((1, 0, Nanos(TR + TX))));
        assert_eq!(run(&mut t), vec![TR + TX, TR + 2 * TX]);
        // The same write arriving at 0, during the sense: the bus is free
        // and chip 1 idle, so it goes at once and the read's data waits.
        let mut t = Timing::new(&Config::small_for_tests(1, 2, 16, 4).timing_params());
        t.submit(0, Nanos(0), OpKind::Read, 0);
        t.submit_unplaced(Nanos(0), 1);
        assert_eq!(t.place_next(Nanos(u64::MAX)), Some((1, 1, Nanos(0))));
        assert_eq!(run(&mut t), vec![2 * TX, TX]);
    }

    #[test]
    fn program_transfers_then_programs() {
        let mut t = rp();
        t.submit(0, Nanos(0), OpKind::Program, 0);
        // Same channel, other chip: waits only for the bus.
        t.submit(2, Nanos(0), OpKind::Program, 1);
        // A read on chip 0 arriving at 1 us must wait for its program.
        t.submit(0, Nanos(1_000), OpKind::Read, 2);
        // The read's data (sensed at TX + TP + TR) goes out at once: chip
        // 2's transfer in ended at 2 TX.
        assert_eq!(run(&mut t), vec![TX + TP, 2 * TX + TP, TX + TP + TR + TX]);
    }

    /// SSDsim's rule: a write page is done when its data is in the register.
    #[test]
    fn transfer_completion_reports_the_transfer_end() {
        let mut t = tiny(Scheduling::ReadPriority, WriteCompletion::Transfer);
        t.submit(0, Nanos(0), OpKind::Program, 0);
        t.submit(2, Nanos(0), OpKind::Program, 1);
        assert_eq!(run(&mut t), vec![TX, 2 * TX]);
    }

    /// The bus is never left idle while a chip holds read data: the same
    /// layout reads in the same time whatever order its pages are issued.
    #[test]
    fn bus_fills_gaps_whatever_the_page_order() {
        // Chip 0 is busy programming until TX + TP; chip 2 is idle. A read
        // of one page on each, issued in both orders.
        let order = |first: u32, second: u32| {
            let mut t = rp();
            t.submit(0, Nanos(0), OpKind::Program, 9);
            t.submit(first, Nanos(1_000), OpKind::Read, first);
            t.submit(second, Nanos(1_000), OpKind::Read, second);
            let v = run(&mut t);
            (v[0], v[1]) // tags 0 and 2, sorted
        };
        let a = order(0, 2);
        let b = order(2, 0);
        assert_eq!(a, b);
        // Chip 2's read senses from 1 us and waits for the bus (chip 0's
        // transfer in holds it until TX); chip 0's read starts after its
        // program.
        assert_eq!(a, (TX + TP + TR + TX, TX + TX));
    }

    /// A read arriving behind a queued program on a busy chip: under read
    /// priority it is served first when the chip frees, under FCFS second.
    #[test]
    fn read_priority_reorders_a_waiting_program() {
        for (s, want) in [
            // Program A (tag 0) holds chip 0 until TX + TP; the read R (tag
            // 2) senses then, goes out at once; B (tag 1) follows.
            (Scheduling::ReadPriority, vec![TX + TP, TX + TP + TR + TX + TX + TP, TX + TP + TR + TX]),
            // FCFS: B (arrived at 1 us) transfers in at TX + TP and programs
            // until 2 (TX + TP); then R.
            (Scheduling::Fcfs, vec![TX + TP, 2 * (TX + TP), 2 * (TX + TP) + TR + TX]),
        ] {
            let mut t = tiny(s, WriteCompletion::Program);
            t.submit(0, Nanos(0), OpKind::Program, 0);
            t.submit(0, Nanos(1_000), OpKind::Program, 1);
            t.submit(0, Nanos(2_000), OpKind::Read, 2);
            assert_eq!(run(&mut t), want, "{s:?}");
        }
    }

    /// SSDsim's duplicate-read shortcut: a second read of a page whose
    /// first read has not started its transfer out completes 1 us after
    /// arriving; once the first read's data is going out, a new read of the
    /// page goes to the flash again. Off, every read goes to the flash.
    #[test]
    fn duplicate_read_shortcut() {
        let mut cfg = Config::small_for_tests(2, 2, 16, 4);
        cfg.timing.duplicate_read_shortcut = true;
        let mut t = Timing::new(&cfg.timing_params());
        t.submit_read(0, Nanos(0), 7, 0);
        t.submit_read(0, Nanos(5_000), 7, 1); // first still sensing
        t.submit_read(0, Nanos(TR + 1_000), 7, 2); // first's data going out
        assert_eq!(run(&mut t), vec![TR + TX, 6_000, 2 * (TR + TX)]);
        assert_eq!(t.shortcut_reads(), 1);
        let mut t = rp();
        t.submit_read(0, Nanos(0), 7, 0);
        t.submit_read(0, Nanos(5_000), 7, 1);
        assert_eq!(run(&mut t), vec![TR + TX, 2 * (TR + TX)]);
        assert_eq!(t.shortcut_reads(), 0);
    }

    /// The lazy events (a phase end with nothing queued behind it is no
    /// event, an arrival is decided at once) make the same decisions as
    /// one event per phase end with arrivals decided at the next settle
    /// ([`Timing::report_at_completion`]): random operation sequences on
    /// random small channels give the same completions, busy and wait
    /// times under both.
    #[test]
    fn lazy_events_decide_as_one_event_per_phase() {
        use rand::{Rng, SeedableRng};
        for seed in 0..2_000u64 {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let (chans, chips) = (rng.gen_range(1..3), rng.gen_range(1..4));
            let mut cfg = Config::small_for_tests(chans, chips, 16, 4);
            cfg.timing.scheduling = if rng.gen_bool(0.5) { Scheduling::ReadPriority } else { Scheduling::Fcfs };
            cfg.timing.write_completion =
                if rng.gen_bool(0.5) { WriteCompletion::Transfer } else { WriteCompletion::Program };
            cfg.timing.duplicate_read_shortcut = rng.gen_bool(0.3);
            let mut lazy = Timing::new(&cfg.timing_params());
            let mut each = Timing::new(&cfg.timing_params());
            each.report_at_completion();
            let gap = [0u64, 1_000, 20_000, 100_000, 300_000][rng.gen_range(0..5)];
            let mut t = 0;
            for i in 0..rng.gen_range(1..200u32) {
                if rng.gen_bool(0.6) {
                    t += rng.gen_range(0..=gap);
                }
                let chip = rng.gen_range(0..chans * chips);
                let tag = if rng.gen_bool(0.1) { NO_TAG } else { i };
                for m in [&mut lazy, &mut each] {
                    match i % 9 {
                        0..=3 => m.submit_read(chip, Nanos(t), i % 4, tag),
                        4..=7 => m.submit(chip, Nanos(t), OpKind::Program, tag),
                        _ => m.submit(chip, Nanos(t), OpKind::Gc(Nanos(u64::from(i) * 7_919)), NO_TAG),
                    }
                }
            }
            let all = |m: &mut Timing| {
                m.finish();
                let mut out = Vec::new();
                m.take_completions(&mut out);
                out.sort_unstable();
                out
            };
            assert_eq!(all(&mut lazy), all(&mut each), "seed {seed}");
            assert_eq!(lazy.chip_busy(), each.chip_busy(), "seed {seed}");
            assert_eq!(lazy.chip_wait(), each.chip_wait(), "seed {seed}");
            assert_eq!(lazy.shortcut_reads(), each.shortcut_reads(), "seed {seed}");
        }
    }

    #[test]
    fn gc_charges_the_chip() {
        let mut t = rp();
        let d = t.gc_duration(3, 1);
        assert_eq!(d, Nanos(3 * (TR + TP) + 1_500_000));
        t.submit(1, Nanos(1_000), OpKind::Gc(d), NO_TAG);
        t.submit(1, Nanos(2_000), OpKind::Read, 0);
        assert_eq!(run(&mut t), vec![1_000 + d.0 + TR + TX]);
    }

    #[test]
    fn fingerprint_engine_is_fcfs() {
        let mut t = rp();
        assert_eq!(t.fingerprint(Nanos(0)), Nanos(32_000));
        assert_eq!(t.fingerprint(Nanos(0)), Nanos(64_000));
        assert_eq!(t.fingerprint(Nanos(100_000)), Nanos(132_000));
    }

    /// Every hash model on a 4-page request A at 0 then a 1-page request B
    /// at 10 us, with 1 and 2 engines (32 us per page): when each page may
    /// be programmed.
    #[test]
    fn hash_models_on_a_four_page_write() {
        const FP: u64 = 32_000;
        use HashOverlap::{BeforeFlash, Pipelined};
        use HashUnit::{Page, Request};
        let cases = [
            // One engine: the unit does not matter; before-flash holds A's
            // pages until its last hash.
            (Page, Pipelined, 1, [FP, 2 * FP, 3 * FP, 4 * FP], 5 * FP),
            (Request, Pipelined, 1, [FP, 2 * FP, 3 * FP, 4 * FP], 5 * FP),
            (Page, BeforeFlash, 1, [4 * FP; 4], 5 * FP),
            (Request, BeforeFlash, 1, [4 * FP; 4], 5 * FP),
            // Two engines, page unit: A's pages in pairs; B waits for them.
            (Page, Pipelined, 2, [FP, FP, 2 * FP, 2 * FP], 3 * FP),
            (Page, BeforeFlash, 2, [2 * FP; 4], 3 * FP),
            // Request unit: A holds engine 0 for 4 FP; B uses engine 1 at
            // once and is ready before A.
            (Request, Pipelined, 2, [FP, 2 * FP, 3 * FP, 4 * FP], 10_000 + FP),
            (Request, BeforeFlash, 2, [4 * FP; 4], 10_000 + FP),
        ];
        for (unit, overlap, engines, a, b) in cases {
            let mut cfg = Config::small_for_tests(2, 2, 16, 4);
            cfg.dedup.hash_unit = unit;
            cfg.dedup.hash_overlap = overlap;
            cfg.dedup.hash_engines = engines;
            let mut t = Timing::new(&cfg.timing_params());
            let mut ready = Vec::new();
            t.fingerprint_request(Nanos(0), 4, &mut ready);
            assert_eq!(ready, a.map(Nanos), "{unit:?} {overlap:?} {engines} engines");
            t.fingerprint_request(Nanos(10_000), 1, &mut ready);
            assert_eq!(ready, [Nanos(b)], "{unit:?} {overlap:?} {engines} engines");
            // The load: 5 pages of FP; each page waited from its request's
            // arrival to its hash's start (the overlap model does not
            // change when hashes start).
            let wait = match (unit, engines) {
                // A's pages start at 0, FP, 2 FP, 3 FP; B at 4 FP.
                (_, 1) => 6 * FP + (4 * FP - 10_000),
                // A's pairs at 0 and FP; B at 2 FP.
                (Page, _) => 2 * FP + (2 * FP - 10_000),
                // A on one engine as above; B on the other at once.
                (Request, _) => 6 * FP,
            };
            let load = HashLoad { engines, pages: 5, busy: Nanos(5 * FP), wait_ns: u128::from(wait) };
            assert_eq!(t.hash_load(), load, "{unit:?} {overlap:?} {engines} engines");
        }
    }
}
