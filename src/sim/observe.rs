//! Per-request observation (issue 29 item 1, `run --request-log`): one
//! [`RequestRecord`] per replayed request, handed to a [`RequestSink`] as
//! the request completes, so a log of any length takes no memory beyond
//! the requests in flight. The core does no I/O: the sink (the CLI's CSV
//! writer) does.
//!
//! Off by default; the request path then pays one predictable branch per
//! flash operation ([`Simulation::observe_requests`]).
//!
//! "Waited behind GC" is the timing model's fact
//! ([`crate::timing::Timing::track_gc_waits`]): one of the request's flash
//! operations arrived at its chip before a GC phase there ended and
//! started after it. Waiting for the channel's bus, or for another
//! request's operations, is not waiting behind GC.
//!
//! [`Simulation::observe_requests`]: super::Simulation::observe_requests

use super::inflight::Inflight;
use super::Simulation;
use crate::series::SeriesRecorder;
use crate::timing::NO_TAG;
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
    /// One of its operations waited on its chip while GC work ran there
    /// (module doc).
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
    /// Chips 0..64 touched (bit per chip); the rest, if the device has
    /// more, in [`Observer`]'s wide bitsets. Channels are derived from the
    /// chips when the request completes ([`Observer::counts`]), so an
    /// operation marks one bit.
    chips: u64,
}

impl Pending {
    pub fn new(lpn: u32, pages: u32) -> Pending {
        Pending { lpn, pages, ..Pending::default() }
    }
}

/// Bits past the first 64 of a per-slot unit set, for devices with more
/// than 64 chips or channels (`words` words per slot; none otherwise).
#[derive(Default)]
struct WideBits {
    bits: Vec<u64>,
    words: usize,
}

impl WideBits {
    fn new(units: u32) -> WideBits {
        WideBits { bits: Vec::new(), words: (units as usize).saturating_sub(64).div_ceil(64) }
    }

    fn clear(&mut self, slot: usize) {
        if self.words > 0 {
            let w = self.words;
            if self.bits.len() < (slot + 1) * w {
                self.bits.resize((slot + 1) * w, 0);
            }
            self.bits[slot * w..(slot + 1) * w].fill(0);
        }
    }

    /// Sets `unit` (>= 64) for `slot`.
    #[cold]
    fn set(&mut self, slot: usize, unit: usize) {
        let u = unit - 64;
        self.bits[slot * self.words + u / 64] |= 1 << (u % 64);
    }

    fn count(&self, slot: usize) -> u32 {
        let w = self.words;
        self.bits.get(slot * w..(slot + 1) * w).map_or(0, |v| v.iter().map(|x| x.count_ones()).sum())
    }
}

/// Marks `unit` in a slot's inline mask, or in the wide bits past 64.
#[inline]
fn mark(inline: &mut u64, wide: &mut WideBits, slot: usize, unit: usize) {
    if unit < 64 {
        *inline |= 1 << unit;
    } else {
        wide.set(slot, unit);
    }
}

/// The request observer's state inside a simulation.
pub(super) struct Observer<'o> {
    pub sink: &'o mut dyn RequestSink,
    /// Per in-flight slot.
    pub pending: Vec<Pending>,
    wide_chips: WideBits,
    /// Per chip, its channel.
    channel_of: Vec<u32>,
    /// Scratch: the channels of one request, a bit each.
    channel_bits: Vec<u64>,
}

impl<'o> Observer<'o> {
    pub fn new(sink: &'o mut dyn RequestSink, channel_of: Vec<u32>, channels: u32) -> Observer<'o> {
        let n = channel_of.len();
        Observer {
            sink,
            pending: Vec::new(),
            wide_chips: WideBits::new(n as u32),
            channel_of,
            channel_bits: vec![0; (channels as usize).div_ceil(64).max(1)],
        }
    }

    /// A request takes `slot`.
    #[inline]
    pub fn open(&mut self, slot: u32, p: Pending) {
        let s = slot as usize;
        if self.pending.len() <= s {
            self.pending.resize(s + 1, Pending::default());
        }
        self.pending[s] = p;
        if self.wide_chips.words > 0 {
            self.wide_chips.clear(s);
        }
    }

    /// An operation of the request in `slot` reaches `chip`.
    #[inline]
    pub fn touch(&mut self, slot: u32, chip: u32) {
        let s = slot as usize;
        mark(&mut self.pending[s].chips, &mut self.wide_chips, s, chip as usize);
    }

    /// (chips, channels) the request in `slot` touched: the chips' bits
    /// counted, and their channels marked in a set and counted (a `u64` on
    /// devices of up to 64 chips and channels, a scratch bitset past that).
    pub fn counts(&mut self, slot: u32) -> (u32, u32) {
        let s = slot as usize;
        let inline = self.pending[s].chips;
        if self.wide_chips.words == 0 && self.channel_bits.len() == 1 {
            // Up to 64 chips and channels: count while marking (no popcount
            // instruction in the baseline x86-64 target).
            let (mut chips, mut channels, mut m, mut bits) = (0, 0, 0u64, inline);
            while bits != 0 {
                let bit = 1 << self.channel_of[bits.trailing_zeros() as usize];
                channels += u32::from(m & bit == 0);
                m |= bit;
                chips += 1;
                bits &= bits - 1;
            }
            return (chips, channels);
        }
        let chips = inline.count_ones() + self.wide_chips.count(s);
        self.channel_bits.fill(0);
        let mut set = |c: usize| {
            let ch = self.channel_of[c] as usize;
            self.channel_bits[ch / 64] |= 1 << (ch % 64);
        };
        let mut bits = inline;
        while bits != 0 {
            set(bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
        let w = self.wide_chips.words;
        for (k, &word) in self.wide_chips.bits.get(s * w..(s + 1) * w).unwrap_or(&[]).iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                set(64 + k * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        (chips, self.channel_bits.iter().map(|x| x.count_ones()).sum())
    }
}

impl<'w> Simulation<'w> {
    /// Hands every replayed request's [`RequestRecord`] to `sink` as it
    /// completes (`run --request-log`; `sim::observe`).
    pub fn observe_requests(&mut self, sink: &'w mut dyn RequestSink) {
        let geo = self.ftl.geometry();
        let channel_of = (0..self.chips).map(|c| geo.channel_of_chip(c)).collect();
        self.observer = Some(Observer::new(sink, channel_of, geo.channels));
        self.timing.track_gc_waits();
        self.observing = true;
        self.observing_ops = true;
    }

    /// Records a time series with intervals of `interval` of simulated
    /// time ([`crate::series`]), returned in [`RunOutput::series`](super::RunOutput::series).
    pub fn record_series(&mut self, interval: Nanos) {
        let interval = Nanos(interval.0.max(1));
        let series = SeriesRecorder::new(interval);
        self.series_check = series.next_settle();
        self.series = Some(Box::new(series));
        self.observing = true;
        self.timing.record_busy(interval);
    }

    /// The time series' check at the arrival of a request at `now`: the
    /// free-block snapshot, and the intervals no request can complete in
    /// any more (none before the earliest arrival still in flight) settled.
    #[cold]
    pub(super) fn settle_series(&mut self, now: Nanos) {
        let floor = self.inflight.iter().filter(|f| f.remaining > 0).map(|f| f.issue).fold(now, Nanos::min);
        let free = self.ftl.free_blocks_total();
        if let Some(s) = self.series.as_deref_mut() {
            s.settle(now, floor, free);
            self.series_check = s.next_settle();
        }
    }

    /// An operation of the request in `slot` (or background work, `NO_TAG`,
    /// which is not recorded) reaches `chip` (the request observer's
    /// bookkeeping): a bit set, inline behind the request path's one test
    /// of `observing_ops`.
    #[inline(always)]
    pub(super) fn observe_op(&mut self, slot: u32, chip: u32) {
        if slot != NO_TAG {
            if let Some(o) = self.observer.as_mut() {
                o.touch(slot, chip);
            }
        }
    }

    /// The completed request in `slot` to the time series and the request
    /// sink.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_done(&mut self, slot: u32, f: &Inflight) {
        if let Some(s) = self.series.as_deref_mut() {
            s.request(f.op, self.slot_pages[slot as usize], f.issue, f.done);
        }
        if let Some(o) = self.observer.as_mut() {
            let p = o.pending[slot as usize];
            let (chips, channels) = o.counts(slot);
            let gc_wait = self.timing.took_gc_wait(slot);
            o.sink.record(&RequestRecord {
                index: f.tag,
                op: f.op,
                lpn: p.lpn,
                pages: p.pages,
                arrival: f.issue,
                completion: f.done,
                dup_pages: p.dup_pages,
                chips,
                channels,
                gc_wait,
            });
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn observe_open(&mut self, slot: u32, lpn: u32, pages: u32) {
        if self.series.is_some() {
            let s = slot as usize;
            if self.slot_pages.len() <= s {
                self.slot_pages.resize(s + 1, 0);
            }
            self.slot_pages[s] = pages;
        }
        if let Some(o) = self.observer.as_mut() {
            o.open(slot, Pending::new(lpn, pages));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Drop0;
    impl RequestSink for Drop0 {
        fn record(&mut self, _: &RequestRecord) {}
    }

    /// Chips and channels are counted once each however often touched,
    /// past the inline 64 too, and a reused slot starts empty.
    #[test]
    fn distinct_units_are_counted_on_wide_devices() {
        let mut sink = Drop0;
        // 200 chips on 100 channels: chip c on channel c / 2.
        let mut o = Observer::new(&mut sink, (0..200).map(|c| c / 2).collect(), 100);
        o.open(1, Pending::default());
        for c in [0, 1, 63, 64, 65, 130, 199, 199, 0] {
            o.touch(1, c);
        }
        // Chips 0, 1, 63, 64, 65, 130, 199; channels 0, 31, 32, 65, 99.
        assert_eq!(o.counts(1), (7, 5));
        o.open(1, Pending::default());
        o.touch(1, 150);
        assert_eq!(o.counts(1), (1, 1));
    }
}
