//! Per-request observation (issue 29 item 1, `run --request-log`): one
//! [`RequestRecord`] per replayed request, handed to a [`RequestSink`] as
//! the request completes, so a log of any length takes no memory beyond
//! the requests in flight. The core does no I/O: the sink (the CLI's CSV
//! writer) does.
//!
//! Off by default; the request path then pays one predictable branch per
//! flash operation ([`Simulation::observe_requests`]).
//!
//! "Waited behind GC" is an estimate kept beside the timing model, not a
//! fact it reports: per chip, the time it would be free if its operations
//! ran in the order they reached it (each one's chip time added, as the
//! least-loaded allocator estimates load), and the end of the last GC work
//! in that order. An operation of the request reaching a chip before that
//! GC end marks the request. The exact scheduler may serve the chip in
//! another order (reads before queued GC under read priority), so the flag
//! can be wrong both ways for a read; it never flags a request on a chip
//! that had no GC queued ahead of it.
//!
//! [`Simulation::observe_requests`]: super::Simulation::observe_requests

use crate::units::{Nanos, Op};

/// One replayed request, as completed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    /// Index of the request among the replayed (timed) requests.
    pub index: u64,
    pub op: Op,
    /// First logical page (page-aligned, as simulated).
    pub lpn: u32,
    pub pages: u32,
    /// When it was issued (simulated time since the first replayed arrival).
    pub arrival: Nanos,
    /// When its last page completed (`arrival` for a trim, or a read of
    /// unmapped pages only).
    pub completion: Nanos,
    /// Pages of a write mapped to an existing copy instead of programmed.
    pub dup_pages: u32,
    /// Distinct chips and channels its flash operations touched.
    pub chips: u32,
    pub channels: u32,
    /// One of its operations reached a chip while GC queued there ahead of
    /// it was estimated to run (module doc).
    pub gc_wait: bool,
}

impl RequestRecord {
    pub fn latency(&self) -> Nanos {
        self.completion - self.arrival
    }
}

/// Receives every replayed request once, when it completes (in completion
/// processing order, which is deterministic but not arrival order).
pub trait RequestSink: Send {
    fn record(&mut self, r: &RequestRecord);
}

/// What a request in flight carries for its record.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Pending {
    pub lpn: u32,
    pub pages: u32,
    pub dup_pages: u32,
    pub gc_wait: bool,
}

/// The request observer's state inside a simulation.
pub(super) struct Observer<'o> {
    pub sink: &'o mut dyn RequestSink,
    /// Per in-flight slot.
    pub pending: Vec<Pending>,
    /// Per slot, a bitset of the chips touched (`words` words each) and
    /// one of the channels (`cwords` words each).
    chips: Vec<u64>,
    words: usize,
    channels: Vec<u64>,
    cwords: usize,
    /// Chip -> channel.
    channel_of: Vec<u32>,
    /// Per chip: estimated free time, and estimated end of the last GC.
    free_at: Vec<Nanos>,
    gc_end: Vec<Nanos>,
}

impl<'o> Observer<'o> {
    pub fn new(sink: &'o mut dyn RequestSink, channel_of: Vec<u32>, channels: u32) -> Observer<'o> {
        let n = channel_of.len();
        Observer {
            sink,
            pending: Vec::new(),
            chips: Vec::new(),
            words: n.div_ceil(64).max(1),
            channels: Vec::new(),
            cwords: (channels as usize).div_ceil(64).max(1),
            channel_of,
            free_at: vec![Nanos::ZERO; n],
            gc_end: vec![Nanos::ZERO; n],
        }
    }

    /// A request takes `slot`.
    pub fn open(&mut self, slot: u32, p: Pending) {
        let s = slot as usize;
        if self.pending.len() <= s {
            self.pending.resize(s + 1, Pending::default());
            self.chips.resize((s + 1) * self.words, 0);
            self.channels.resize((s + 1) * self.cwords, 0);
        }
        self.pending[s] = p;
        self.chips[s * self.words..(s + 1) * self.words].fill(0);
        self.channels[s * self.cwords..(s + 1) * self.cwords].fill(0);
    }

    /// An operation of the request in `slot` reaches `chip` at `at`,
    /// taking `cost` of chip time.
    pub fn touch(&mut self, slot: u32, chip: u32, at: Nanos, cost: Nanos) {
        let c = chip as usize;
        if at < self.gc_end[c] {
            self.pending[slot as usize].gc_wait = true;
        }
        self.free_at[c] = self.free_at[c].max(at) + cost;
        self.chips[slot as usize * self.words + c / 64] |= 1 << (c % 64);
        let ch = self.channel_of[c] as usize;
        self.channels[slot as usize * self.cwords + ch / 64] |= 1 << (ch % 64);
    }

    /// Background work (not a request's) reaches `chip` at `at`; `gc`:
    /// it is GC work.
    pub fn background(&mut self, chip: u32, at: Nanos, cost: Nanos, gc: bool) {
        let c = chip as usize;
        self.free_at[c] = self.free_at[c].max(at) + cost;
        if gc {
            self.gc_end[c] = self.free_at[c];
        }
    }

    /// (chips, channels) the request in `slot` touched.
    pub fn counts(&self, slot: u32) -> (u32, u32) {
        let (s, w, cw) = (slot as usize, self.words, self.cwords);
        let ones = |v: &[u64]| v.iter().map(|x| x.count_ones()).sum();
        (ones(&self.chips[s * w..(s + 1) * w]), ones(&self.channels[s * cw..(s + 1) * cw]))
    }
}
