//! Time series of one run: what happened in each interval of simulated
//! time (issue 29 item 2, `run --timeseries INTERVAL`). Like
//! [`crate::metrics`], a pure observer: the simulator reports events with
//! their simulated times, this module counts them per interval, and
//! exporters ([`TimeSeries::write_csv`]) are pure functions of the result.
//!
//! # What goes in which interval
//!
//! Interval `i` covers simulated time `[i·Δ, (i+1)·Δ)` from the first
//! replayed arrival (time 0 of the run's report). Each quantity is
//! attributed where it happens:
//!
//! * requests completed, their bytes and latencies: by **completion**
//!   time, so the per-interval request counts add up to the run's totals;
//! * GC invocations, pages moved, blocks erased: at the time the GC work
//!   reaches its chip (after the program that triggered it);
//! * logical pages written, pages deduplicated, flash programs of the host
//!   and of relocations: at the write's **arrival** (relocations at their
//!   read's), so that write amplification and dedup rate compare work the
//!   same requests caused;
//! * chip busy time, host vs background: when the chip works, each phase
//!   split over the intervals it spans (from [`crate::timing`]);
//! * free blocks: a snapshot of the whole device when the first request
//!   arriving in the interval is processed (the previous interval's value
//!   when none arrives).
//!
//! Only the timed replay is counted: preconditioning (and GC it triggers)
//! is in the run's totals but in no interval.
//!
//! # Memory
//!
//! Counters take about 200 bytes per interval for the whole run. Latency
//! percentiles need a histogram per interval and operation (HDR, 2
//! significant digits: a P99 within 1%, 18 KiB each); an interval's
//! histograms are reduced to their mean and P99 and recycled as soon as no
//! request still in flight can complete in it
//! ([`SeriesRecorder::settle`]), so only the intervals spanned by the
//! requests in flight hold one.

use crate::units::{Nanos, Op};
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::io::{self, Write};
use strength_reduce::StrengthReducedU64;

/// Highest latency a per-interval histogram records (one hour, as
/// [`crate::metrics::LatencyHistogram`]); longer ones saturate.
const MAX_NS: u64 = 3_600_000_000_000;

/// Latency of one operation type in one interval.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct OpStats {
    /// Requests completed in the interval.
    pub requests: u64,
    /// Their pages (logical).
    pub pages: u64,
    /// Sum of their latencies (ns).
    pub latency_sum_ns: u128,
    /// Their 99th percentile latency (ns, HDR with 2 significant digits);
    /// 0 when none completed.
    pub p99_ns: u64,
    /// Their largest latency (ns, exact).
    pub max_ns: u64,
}

impl OpStats {
    /// Mean latency in ns (0 when none completed).
    pub fn mean_ns(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.latency_sum_ns as f64 / self.requests as f64
        }
    }
}

/// Everything one interval counted (module doc: which time each is
/// attributed to).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interval {
    pub read: OpStats,
    pub write: OpStats,
    /// Trims completed (they take no flash time and have no latency).
    pub trims: u64,
    pub gc_invocations: u64,
    /// Valid pages GC migrated.
    pub gc_moved: u64,
    pub erases: u64,
    /// Logical pages of the writes arriving in the interval.
    pub written_pages: u64,
    /// Of those, pages deduplicated (mapped to an existing copy).
    pub dedup_pages: u64,
    /// Flash programs of those writes (new contents and rewrites).
    pub host_programs: u64,
    /// Pages relocated at idle time (a policy's background moves).
    pub relocated: u64,
    /// Free blocks of the device (snapshot; module doc); `None` until the
    /// first snapshot.
    pub free_blocks: Option<u64>,
    /// Chip time spent on requests' operations, summed over chips (ns).
    pub busy_host_ns: u64,
    /// Chip time spent on GC and other background work (ns).
    pub busy_background_ns: u64,
}

impl Interval {
    /// (host programs + GC moves + relocations) / logical pages written,
    /// the run report's write amplification over this interval; 0 when
    /// nothing was written.
    pub fn write_amplification(&self) -> f64 {
        ratio(self.host_programs + self.gc_moved + self.relocated, self.written_pages)
    }
    /// Deduplicated / written pages; 0 when nothing was written.
    pub fn dedup_rate(&self) -> f64 {
        ratio(self.dedup_pages, self.written_pages)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// A run's time series: one [`Interval`] per `interval` of simulated time,
/// from 0 to the last event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeSeries {
    pub interval: Nanos,
    pub intervals: Vec<Interval>,
}

/// The columns of [`TimeSeries::write_csv`], in order.
pub const CSV_COLUMNS: &[&str] = &[
    "policy",
    "interval",
    "start_s",
    "end_s",
    "read_iops",
    "write_iops",
    "read_mb_s",
    "write_mb_s",
    "read_mean_us",
    "read_p99_us",
    "read_max_us",
    "write_mean_us",
    "write_p99_us",
    "write_max_us",
    "reads",
    "writes",
    "trims",
    "gc_invocations",
    "gc_pages_moved",
    "erases",
    "written_pages",
    "dedup_pages",
    "host_programs",
    "relocated_pages",
    "write_amplification",
    "dedup_rate",
    "free_blocks",
    "host_busy_s",
    "background_busy_s",
];

impl TimeSeries {
    /// Writes the header line of [`TimeSeries::write_csv`].
    pub fn write_csv_header(w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "{}", CSV_COLUMNS.join(","))
    }

    /// Writes one CSV row per interval (no header), labelled `policy`;
    /// `page_size` in bytes converts pages to MB/s (decimal MB). Free
    /// blocks are carried forward into intervals without a snapshot (empty
    /// before the first one). Numbers print with fixed precision, so the
    /// same series gives the same bytes.
    pub fn write_csv(&self, policy: &str, page_size: u32, w: &mut dyn Write) -> io::Result<()> {
        let secs = self.interval.as_secs_f64();
        let mut free: Option<u64> = None;
        for (i, iv) in self.intervals.iter().enumerate() {
            free = iv.free_blocks.or(free);
            let start = i as f64 * secs;
            let mb = |pages: u64| pages as f64 * f64::from(page_size) / 1e6 / secs;
            let us = |ns: f64| ns / 1000.0;
            writeln!(
                w,
                "{policy},{i},{start:.9},{:.9},{:.3},{:.3},{:.6},{:.6},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{},{},{},{},{},{:.6},{:.6},{},{:.9},{:.9}",
                start + secs,
                iv.read.requests as f64 / secs,
                iv.write.requests as f64 / secs,
                mb(iv.read.pages),
                mb(iv.write.pages),
                us(iv.read.mean_ns()),
                us(iv.read.p99_ns as f64),
                us(iv.read.max_ns as f64),
                us(iv.write.mean_ns()),
                us(iv.write.p99_ns as f64),
                us(iv.write.max_ns as f64),
                iv.read.requests,
                iv.write.requests,
                iv.trims,
                iv.gc_invocations,
                iv.gc_moved,
                iv.erases,
                iv.written_pages,
                iv.dedup_pages,
                iv.host_programs,
                iv.relocated,
                iv.write_amplification(),
                iv.dedup_rate(),
                free.map_or(String::new(), |f| f.to_string()),
                iv.busy_host_ns as f64 / 1e9,
                iv.busy_background_ns as f64 / 1e9,
            )?;
        }
        Ok(())
    }
}

/// Chip busy time per interval, host and background, as the timing model
/// charges it ([`crate::timing::Timing::record_busy`]).
#[derive(Clone, Debug)]
pub struct BusyByInterval {
    interval: u64,
    /// `interval` as a divisor without a division instruction (charged
    /// several times per request).
    div: StrengthReducedU64,
    /// Per interval: (host ns, background ns).
    pub busy: Vec<(u64, u64)>,
    /// The interval charged last and its bounds: phases are far shorter
    /// than intervals, so most charges fall in it (no division).
    cur: usize,
    lo: u64,
    hi: u64,
}

impl BusyByInterval {
    pub fn new(interval: Nanos) -> BusyByInterval {
        let interval = interval.0.max(1);
        BusyByInterval {
            interval,
            div: StrengthReducedU64::new(interval),
            busy: vec![(0, 0)],
            cur: 0,
            lo: 0,
            hi: interval,
        }
    }

    /// Charges `dur` of chip time starting at `start`, split over the
    /// intervals it spans.
    #[inline]
    pub fn charge(&mut self, start: Nanos, dur: Nanos, host: bool) {
        let (mut t, end) = (start.0, start.0.saturating_add(dur.0));
        if t >= self.lo && end <= self.hi {
            let b = &mut self.busy[self.cur];
            if host {
                b.0 += end - t;
            } else {
                b.1 += end - t;
            }
            return;
        }
        while t < end {
            let i = (t / self.div) as usize;
            let stop = end.min((i as u64 + 1).saturating_mul(self.interval));
            if self.busy.len() <= i {
                self.busy.resize(i + 1, (0, 0));
            }
            let b = &mut self.busy[i];
            if host {
                b.0 += stop - t;
            } else {
                b.1 += stop - t;
            }
            let lo = i as u64 * self.interval;
            (self.cur, self.lo, self.hi) = (i, lo, lo.saturating_add(self.interval));
            t = stop;
        }
    }
}

/// The two latency histograms of an interval not yet settled.
struct Open {
    read: Histogram<u32>,
    write: Histogram<u32>,
}

/// Builds a [`TimeSeries`] while a simulation runs (module doc). The
/// simulator calls [`SeriesRecorder::settle`] when time passes
/// [`SeriesRecorder::next_settle`].
pub struct SeriesRecorder {
    interval: u64,
    div: StrengthReducedU64,
    intervals: Vec<Interval>,
    /// Histograms of intervals `settled..`, in order (`None`: nothing
    /// recorded yet).
    open: VecDeque<Option<Open>>,
    /// Intervals before this one are final.
    settled: usize,
    spare: Vec<Open>,
    next_settle: Nanos,
}

impl SeriesRecorder {
    pub fn new(interval: Nanos) -> SeriesRecorder {
        SeriesRecorder {
            interval: interval.0.max(1),
            div: StrengthReducedU64::new(interval.0.max(1)),
            intervals: Vec::new(),
            open: VecDeque::new(),
            settled: 0,
            spare: Vec::new(),
            // The first arrival takes the first snapshot.
            next_settle: Nanos::ZERO,
        }
    }

    pub fn interval(&self) -> Nanos {
        Nanos(self.interval)
    }

    #[inline]
    fn index(&self, t: Nanos) -> usize {
        (t.0 / self.div) as usize
    }

    #[inline]
    fn at(&mut self, t: Nanos) -> &mut Interval {
        let i = self.index(t);
        self.interval_mut(i)
    }

    /// Interval `i`, created (empty) if the series has not reached it.
    #[inline]
    fn interval_mut(&mut self, i: usize) -> &mut Interval {
        if self.intervals.len() <= i {
            self.intervals.resize(i + 1, Interval::default());
        }
        &mut self.intervals[i]
    }

    /// A request of `pages` pages arrived at `arrival` and completed at
    /// `done`.
    pub fn request(&mut self, op: Op, pages: u32, arrival: Nanos, done: Nanos) {
        let lat = done - arrival;
        let i = self.index(done);
        let iv = self.interval_mut(i);
        let s = match op {
            Op::Read => &mut iv.read,
            Op::Write => &mut iv.write,
            Op::Trim => {
                iv.trims += 1;
                return;
            }
        };
        s.requests += 1;
        s.pages += u64::from(pages);
        s.latency_sum_ns += u128::from(lat.0);
        s.max_ns = s.max_ns.max(lat.0);
        // A completion in a settled interval cannot happen (the simulator
        // settles only below every possible completion); record it in the
        // counts only, rather than reopen a histogram.
        let Some(k) = i.checked_sub(self.settled) else {
            debug_assert!(false, "completion at {done:?} in a settled interval");
            return;
        };
        if self.open.len() <= k {
            self.open.resize_with(k + 1, || None);
        }
        let spare = &mut self.spare;
        let h = self.open[k].get_or_insert_with(|| {
            spare.pop().unwrap_or_else(|| {
                let h = || Histogram::new_with_bounds(1, MAX_NS, 2).expect("static bounds are valid");
                Open { read: h(), write: h() }
            })
        });
        let h = if op == Op::Read { &mut h.read } else { &mut h.write };
        h.saturating_record(lat.0.clamp(1, MAX_NS));
    }

    /// A write arriving at `t`: `pages` logical pages, `dedup` of them
    /// deduplicated, `programs` flash programs.
    pub fn write_arrived(&mut self, t: Nanos, pages: u32, dedup: u64, programs: u64) {
        let iv = self.at(t);
        iv.written_pages += u64::from(pages);
        iv.dedup_pages += dedup;
        iv.host_programs += programs;
    }

    /// GC work reaching its chip at `at`.
    pub fn gc(&mut self, at: Nanos, moved: u32, erased: u32) {
        let iv = self.at(at);
        iv.gc_invocations += 1;
        iv.gc_moved += u64::from(moved);
        iv.erases += u64::from(erased);
    }

    /// A page relocated at idle time, its read reaching the chip at `at`.
    pub fn relocated(&mut self, at: Nanos) {
        self.at(at).relocated += 1;
    }

    /// When the simulator should call [`SeriesRecorder::settle`] next.
    #[inline]
    pub fn next_settle(&self) -> Nanos {
        self.next_settle
    }

    /// Time has reached `now` (a request arriving, processed), with
    /// `free_blocks` free blocks on the device, and no request still in
    /// flight or yet to come can complete before `floor` (`floor <= now`):
    /// takes the interval's free-block snapshot and settles every interval
    /// that ends by `floor`.
    pub fn settle(&mut self, now: Nanos, floor: Nanos, free_blocks: u64) {
        let iv = self.at(now);
        if iv.free_blocks.is_none() {
            iv.free_blocks = Some(free_blocks);
        }
        self.settle_below(floor);
        // Next snapshot at the next interval's start; if requests still in
        // flight hold intervals open, try again one interval later.
        let next_start = (now.0 / self.interval + 1).saturating_mul(self.interval);
        self.next_settle = Nanos(next_start);
    }

    /// Settles every interval ending at or before `floor`.
    fn settle_below(&mut self, floor: Nanos) {
        // Intervals beyond the last one counted hold nothing yet.
        let upto = ((floor.0 / self.interval) as usize).min(self.intervals.len());
        while self.settled < upto {
            if let Some(Some(mut h)) = self.open.pop_front() {
                let iv = &mut self.intervals[self.settled];
                // A bucket's top can lie above the largest value in it.
                let p99 =
                    |h: &Histogram<u32>, max: u64| if h.is_empty() { 0 } else { h.value_at_quantile(0.99).min(max) };
                iv.read.p99_ns = p99(&h.read, iv.read.max_ns);
                iv.write.p99_ns = p99(&h.write, iv.write.max_ns);
                h.read.reset();
                h.write.reset();
                self.spare.push(h);
            }
            self.settled += 1;
        }
    }

    /// The finished series: every interval settled, with the chip busy
    /// times of the timing model.
    pub fn finish(mut self, busy: Option<BusyByInterval>) -> TimeSeries {
        if let Some(b) = &busy {
            if self.intervals.len() < b.busy.len() {
                self.intervals.resize(b.busy.len(), Interval::default());
            }
        }
        self.settle_below(Nanos(u64::MAX));
        if let Some(b) = busy {
            for (iv, &(h, g)) in self.intervals.iter_mut().zip(&b.busy) {
                iv.busy_host_ns = h;
                iv.busy_background_ns = g;
            }
        }
        TimeSeries { interval: Nanos(self.interval), intervals: self.intervals }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_land_in_their_completion_interval() {
        let mut s = SeriesRecorder::new(Nanos(1000));
        s.request(Op::Read, 2, Nanos(100), Nanos(900));
        s.request(Op::Read, 1, Nanos(900), Nanos(1500));
        s.request(Op::Write, 4, Nanos(1200), Nanos(1300));
        s.request(Op::Trim, 4, Nanos(2500), Nanos(2500));
        s.settle(Nanos(2500), Nanos(1000), 7);
        let t = s.finish(None);
        assert_eq!(t.intervals.len(), 3);
        assert_eq!((t.intervals[0].read.requests, t.intervals[0].read.pages), (1, 2));
        assert_eq!(t.intervals[1].read.requests, 1);
        assert_eq!(t.intervals[1].write.requests, 1);
        assert_eq!(t.intervals[1].write.max_ns, 100);
        assert_eq!(t.intervals[0].read.p99_ns, 800);
        // A P99 never exceeds the interval's largest latency.
        assert!(t.intervals[1].write.p99_ns <= t.intervals[1].write.max_ns);
        assert_eq!(t.intervals[2].trims, 1);
        assert_eq!(t.intervals[2].free_blocks, Some(7));
    }

    #[test]
    fn busy_time_is_split_over_intervals() {
        let mut b = BusyByInterval::new(Nanos(100));
        b.charge(Nanos(50), Nanos(200), false);
        b.charge(Nanos(0), Nanos(10), true);
        assert_eq!(b.busy, vec![(10, 50), (0, 100), (0, 50)]);
        // Inside the interval charged last, and back in an earlier one.
        b.charge(Nanos(20), Nanos(5), true);
        b.charge(Nanos(5), Nanos(3), false);
        assert_eq!(b.busy, vec![(15, 53), (0, 100), (0, 50)]);
    }

    #[test]
    fn ratios_are_zero_without_writes() {
        let iv = Interval { gc_moved: 5, ..Interval::default() };
        assert_eq!(iv.write_amplification(), 0.0);
        let iv = Interval { written_pages: 4, host_programs: 2, gc_moved: 2, dedup_pages: 2, ..Interval::default() };
        assert_eq!((iv.write_amplification(), iv.dedup_rate()), (1.0, 0.5));
    }
}
