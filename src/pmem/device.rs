//! The DIMMs: loads and persisted stores with their time and the media
//! bytes they cost (Light-Dedup §2.1, Figure 1).
//!
//! * **Address -> DIMM**: `(addr / interleave) % dimms` (FAST'20 §2's
//!   interleaving; 4 KiB as in VANS, MICRO'20: [`PmParams::interleave`]);
//!   each DIMM has its own [`XpBuffer`] and its own
//!   write backlog.
//! * **Loads** ([`PmDevice::load`]): the XPLines a load covers. A
//!   *dependent scan* (`parallel = 1`: one core's loads with the hardware
//!   prefetcher, which "only attempts to prefetch two cache lines ahead",
//!   Light-Dedup §3.2) pays the first line's latency (media or buffer) and
//!   [`PmParams::buffer_read_ns`] for each further line, the DIMM reading
//!   ahead. A *prefetched* load (`parallel = p > 1`: In-Block Prefetch's
//!   one `prefetcht0` per XPLine, §4.3.1, at most `p` outstanding) pays,
//!   per wave of `p` lines, its slowest line's latency. Both add the media
//!   transfer of the lines that missed at [`PmParams::read_bw`]. So a
//!   4 KiB block that misses throughout costs 305 + 15 × 169 + 16 × 256 /
//!   6.6 = 3,461 ns scanned and 2 × 305 + 621 = 1,231 ns prefetched with
//!   12 outstanding (Table 1's content-comparison time: 3,263 ns without
//!   prefetch, 1,234.8 ns with; the tests pin both formulas).
//! * **Stores** ([`PmDevice::store`]): each XPLine goes into the DIMM's
//!   XPBuffer (a partial line that misses costs a media read first, the
//!   read-modify-write). A dirty line evicted from the buffer is written to
//!   the media, occupying the DIMM for `xpline / write_bw`; the DIMM's
//!   backlog is when its media writes will have drained. The CPU goes on
//!   after [`PmParams::write_ns`] (the write-pending queue is persistent)
//!   unless the backlog exceeds what the buffer absorbs (`xpbuffer_lines ×
//!   xpline / write_bw`): then it waits for the excess (Light-Dedup §3.2:
//!   "asynchronous write enables the parallelism between CPU computation
//!   and write I/O"; a sustained stream of stores runs at the media write
//!   bandwidth).
//! * The media reads of a read-modify-write do not delay the store (the
//!   DIMM does them behind the write-pending queue); they are counted.
//! * **Read-write interference** ([`PmParams::shared_media`], Light-Dedup
//!   §5.2): with it on, each written-back XPLine is also booked in the
//!   DIMM's media calendar that the loads' transfers use, at the first gap
//!   at or after its turn in the write backlog; loads then wait for
//!   write-backs booked before them and write-backs for transfers booked
//!   before them (the backlog ends where the last booked write ends). Off,
//!   the two directions do not meet.

use super::params::{PmError, PmParams};
use super::xpbuffer::{Lookup, XpBuffer};
use crate::units::Nanos;

/// What a byte on the device holds (counters are kept per category).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Category {
    /// File data blocks.
    Data,
    /// Dedup metadata (LMT entries, the reverse map).
    Meta,
    /// The file system's own log (NOVA's inode logs).
    Log,
}

impl Category {
    fn index(self) -> usize {
        match self {
            Category::Data => 0,
            Category::Meta => 1,
            Category::Log => 2,
        }
    }
}

/// Media traffic and buffer outcomes (what `ipmctl` reports as media
/// reads and writes, Light-Dedup Tables 2 and 4).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Media bytes read, per [`Category`] (data, meta, log).
    pub media_read: [u64; 3],
    /// Media bytes written, per [`Category`].
    pub media_written: [u64; 3],
    /// XPLine loads that hit / missed the XPBuffer.
    pub load_hits: u64,
    pub load_misses: u64,
    /// XPLine stores that hit / missed the XPBuffer, and of the misses the
    /// partial ones that read the line first.
    pub store_hits: u64,
    pub store_misses: u64,
    pub rmw_reads: u64,
}

impl Counters {
    pub fn read(&self, c: Category) -> u64 {
        self.media_read[c.index()]
    }

    pub fn written(&self, c: Category) -> u64 {
        self.media_written[c.index()]
    }

    /// The difference `self - earlier` (counters only grow).
    pub fn since(&self, earlier: &Counters) -> Counters {
        let sub3 = |a: [u64; 3], b: [u64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        Counters {
            media_read: sub3(self.media_read, earlier.media_read),
            media_written: sub3(self.media_written, earlier.media_written),
            load_hits: self.load_hits - earlier.load_hits,
            load_misses: self.load_misses - earlier.load_misses,
            store_hits: self.store_hits - earlier.store_hits,
            store_misses: self.store_misses - earlier.store_misses,
            rmw_reads: self.rmw_reads - earlier.rmw_reads,
        }
    }
}

/// A resource's busy intervals, sorted and disjoint: a use of `len` ready
/// at `t` takes the first gap at or after `t` that holds it. Only the
/// latest [`Calendar::KEEP`] intervals are kept (older ones ended before
/// any CPU's clock can go back to them).
#[derive(Clone, Debug, Default)]
struct Calendar {
    busy: std::collections::VecDeque<(u64, u64)>,
}

impl Calendar {
    const KEEP: usize = 1024;

    /// Books `len` ns from the first gap at or after `t`; returns its end.
    fn book(&mut self, t: Nanos, len: u64) -> Nanos {
        let mut start = t.0;
        // The first interval that ends after `t` (ends are sorted too).
        let mut i = self.busy.partition_point(|&(_, e)| e <= start);
        while i < self.busy.len() {
            let (s, e) = self.busy[i];
            if start + len <= s {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        if len > 0 {
            self.busy.insert(i, (start, start + len));
            if self.busy.len() > Self::KEEP {
                self.busy.pop_front();
            }
        }
        Nanos(start + len)
    }
}

/// The persistent-memory device. See the module doc.
#[derive(Clone, Debug)]
pub struct PmDevice {
    p: PmParams,
    buffers: Vec<XpBuffer>,
    /// Per DIMM: when its media writes will have drained.
    backlog: Vec<Nanos>,
    /// Per DIMM: its media read transfers, as busy intervals (the read
    /// bandwidth is shared by every CPU loading from the DIMM), and with
    /// [`PmParams::shared_media`] its media writes too.
    reads: Vec<Calendar>,
    counters: Counters,
}

impl PmDevice {
    pub fn new(p: PmParams) -> Result<PmDevice, PmError> {
        p.validate()?;
        Ok(PmDevice {
            buffers: (0..p.dimms).map(|_| XpBuffer::new(p.xpbuffer_lines)).collect(),
            backlog: vec![Nanos::ZERO; p.dimms as usize],
            reads: vec![Calendar::default(); p.dimms as usize],
            counters: Counters::default(),
            p,
        })
    }

    pub fn params(&self) -> &PmParams {
        &self.p
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    fn dimm(&self, addr: u64) -> usize {
        ((addr / self.p.interleave) % u64::from(self.p.dimms)) as usize
    }

    fn lines(&self, addr: u64, len: u64) -> std::ops::Range<u64> {
        let x = u64::from(self.p.xpline);
        addr / x..(addr + len).div_ceil(x)
    }

    /// A load of `len` bytes at `addr` issued at `now`, with at most
    /// `parallel` XPLines outstanding (1: a dependent scan). Returns when
    /// the last byte has arrived. The media bytes it reads cross the DIMM's
    /// read bandwidth after its access latency, in the first gap between the
    /// other loads' transfers on that DIMM (a calendar of busy intervals: CPUs loading at
    /// once share it, and a load issued at an earlier time than one already
    /// booked still goes first if it fits; a lone CPU's loads rarely
    /// overlap).
    pub fn load(&mut self, addr: u64, len: u64, now: Nanos, parallel: u32, category: Category) -> Nanos {
        if len == 0 {
            return now;
        }
        let x = u64::from(self.p.xpline);
        let parallel = parallel.max(1) as usize;
        let mut total = 0u64;
        let mut wave = 0u64;
        let mut in_wave = 0usize;
        let mut missed = 0u64;
        for (i, line) in self.lines(addr, len).enumerate() {
            let d = self.dimm(line * x);
            let (found, evicted) = self.buffers[d].access(line, false, category);
            if let Some(c) = evicted {
                self.write_back(d, c, now);
            }
            let lat = match found {
                Lookup::Hit => {
                    self.counters.load_hits += 1;
                    self.p.buffer_read_ns
                }
                Lookup::Miss => {
                    self.counters.load_misses += 1;
                    self.counters.media_read[category.index()] += x;
                    missed += 1;
                    self.p.media_read_ns
                }
            };
            if parallel == 1 {
                total += if i == 0 { lat } else { self.p.buffer_read_ns };
            } else {
                wave = wave.max(lat);
                in_wave += 1;
                if in_wave == parallel {
                    total += wave;
                    wave = 0;
                    in_wave = 0;
                }
            }
        }
        total += wave;
        if missed == 0 {
            return now + Nanos(total);
        }
        let d = self.dimm(addr);
        self.reads[d].book(now + Nanos(total), PmParams::transfer(missed * x, self.p.read_bw))
    }

    /// A persisted store of `len` bytes at `addr` issued at `now` (stores,
    /// cache-line write-backs, fence). Returns when the CPU may go on.
    pub fn store(&mut self, addr: u64, len: u64, now: Nanos, category: Category) -> Nanos {
        if len == 0 {
            return now;
        }
        let x = u64::from(self.p.xpline);
        let end = addr + len;
        let mut dimms_touched = Vec::with_capacity(2);
        for line in self.lines(addr, len) {
            let d = self.dimm(line * x);
            let full = addr <= line * x && end >= (line + 1) * x;
            let (found, evicted) = self.buffers[d].access(line, true, category);
            match found {
                Lookup::Hit => self.counters.store_hits += 1,
                Lookup::Miss => {
                    self.counters.store_misses += 1;
                    if !full {
                        self.counters.rmw_reads += 1;
                        self.counters.media_read[category.index()] += x;
                    }
                }
            }
            if let Some(c) = evicted {
                self.write_back(d, c, now);
            }
            if !dimms_touched.contains(&d) {
                dimms_touched.push(d);
            }
        }
        let slack = PmParams::transfer(u64::from(self.p.xpbuffer_lines) * x, self.p.write_bw);
        let mut done = now + Nanos(self.p.write_ns);
        for d in dimms_touched {
            let stall = Nanos(self.backlog[d].0.saturating_sub(slack));
            done = done.max(stall);
        }
        done
    }

    /// One dirty XPLine of `category` goes from DIMM `d`'s buffer to its media.
    fn write_back(&mut self, d: usize, category: Category, now: Nanos) {
        let x = u64::from(self.p.xpline);
        self.counters.media_written[category.index()] += x;
        let start = self.backlog[d].max(now);
        let len = PmParams::transfer(x, self.p.write_bw);
        self.backlog[d] = if self.p.shared_media { self.reads[d].book(start, len) } else { start + Nanos(len) };
    }

    /// Writes every buffered dirty line to the media (counted; an unmount).
    pub fn flush(&mut self, now: Nanos) {
        for d in 0..self.buffers.len() {
            for c in self.buffers[d].flush() {
                self.write_back(d, c, now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> PmDevice {
        PmDevice::new(PmParams::optane_light_dedup()).unwrap()
    }

    /// One 4 KiB block missing throughout: a dependent scan pays 305 ns,
    /// then 169 ns per further XPLine, plus 16 × 256 B at 6.6 B/ns (621 ns);
    /// prefetched with 12 outstanding, two waves of 305 ns plus the same
    /// transfer.
    #[test]
    fn a_verify_read_costs_the_hand_computed_time() {
        let mut d = dev();
        let t = d.load(1 << 20, 4096, Nanos(1000), 1, Category::Data);
        assert_eq!(t, Nanos(1000 + 305 + 15 * 169 + 621));
        assert_eq!(d.counters().read(Category::Data), 4096);
        let mut d = dev();
        let t = d.load(1 << 20, 4096, Nanos(0), 12, Category::Data);
        assert_eq!(t, Nanos(2 * 305 + 621));
        // Read again at once: all 16 lines are in the 64-line XPBuffer, no
        // media read, no transfer.
        let t2 = d.load(1 << 20, 4096, Nanos(0), 12, Category::Data);
        assert_eq!(t2, Nanos(2 * 169));
        assert_eq!(d.counters().read(Category::Data), 4096);
        assert_eq!((d.counters().load_hits, d.counters().load_misses), (16, 16));
    }

    /// Two CPUs missing at once share the DIMM's read bandwidth: the second
    /// block's transfer (621 ns) waits for the first's; a load issued
    /// earlier in time than one already booked fills the gap before it.
    #[test]
    fn concurrent_loads_share_the_read_bandwidth() {
        let mut d = dev();
        let a = d.load(1 << 20, 4096, Nanos(0), 12, Category::Data);
        assert_eq!(a, Nanos(2 * 305 + 621));
        let b = d.load(2 << 20, 4096, Nanos(0), 12, Category::Data);
        assert_eq!(b, Nanos(2 * 305 + 2 * 621));
        // Booked far ahead, then one issued at 0: it goes first.
        let mut d = dev();
        let late = d.load(1 << 20, 4096, Nanos(10_000), 12, Category::Data);
        assert_eq!(late, Nanos(10_000 + 2 * 305 + 621));
        let early = d.load(2 << 20, 4096, Nanos(0), 12, Category::Data);
        assert_eq!(early, Nanos(2 * 305 + 621));
    }

    /// A 4 KiB store is 16 whole XPLines: no read-modify-write, 94 ns to
    /// the CPU while the buffer absorbs the backlog; the 65th line evicts
    /// the first dirty one, a 256 B media write of 111 ns (256 / 2.3).
    #[test]
    fn a_block_store_is_sixteen_xplines_at_the_write_bandwidth() {
        let mut d = dev();
        for b in 0..4u64 {
            let t = d.store(b * 4096, 4096, Nanos(0), Category::Data);
            assert_eq!(t, Nanos(94));
        }
        assert_eq!(d.counters().store_misses, 64);
        assert_eq!(d.counters().rmw_reads, 0);
        assert_eq!(d.counters().written(Category::Data), 0);
        d.store(4 * 4096, 4096, Nanos(0), Category::Data);
        assert_eq!(d.counters().written(Category::Data), 16 * 256);
        assert_eq!(d.backlog[0], Nanos(16 * 111));
        // A sustained stream: once the backlog exceeds the buffer's 16 KiB
        // (7,123 ns at 2.3 B/ns) the CPU waits for the excess.
        for b in 5..12u64 {
            d.store(b * 4096, 4096, Nanos(0), Category::Data);
        }
        assert_eq!(d.backlog[0], Nanos(8 * 16 * 111));
        let t = d.store(12 * 4096, 4096, Nanos(0), Category::Data);
        assert_eq!(t, Nanos(9 * 16 * 111 - 7123));
    }

    /// A 32 B metadata store that misses reads its XPLine first (the
    /// read-modify-write); the next entry in the same line hits.
    #[test]
    fn a_partial_store_miss_reads_the_line_and_a_buffer_hit_does_not() {
        let mut d = dev();
        d.store(1 << 30, 32, Nanos(0), Category::Meta);
        assert_eq!((d.counters().rmw_reads, d.counters().read(Category::Meta)), (1, 256));
        d.store((1 << 30) + 32, 32, Nanos(0), Category::Meta);
        assert_eq!((d.counters().store_hits, d.counters().read(Category::Meta)), (1, 256));
        d.flush(Nanos(0));
        assert_eq!(d.counters().written(Category::Meta), 256);
    }

    /// §5.2's read-write interference, by hand. Five 4 KiB stores at 0
    /// fill the 64-line buffer and write 16 dirty lines back: the media is
    /// busy [0, 1,776) (16 × 111 ns). A 4 KiB load at 0 misses 16 lines,
    /// which write 16 more dirty lines back, [1,776, 3,552); its transfer
    /// (ready at 2 × 305 = 610, 621 ns long) then waits for them: 3,552 +
    /// 621 = 4,173 ns, against 1,231 ns with separate read and write paths.
    #[test]
    fn with_shared_media_a_load_waits_for_write_backs() {
        for (shared, done, backlog) in [(false, 2 * 305 + 621, 32 * 111), (true, 32 * 111 + 621, 32 * 111)] {
            let mut d = PmDevice::new(PmParams { shared_media: shared, ..PmParams::optane_light_dedup() }).unwrap();
            for b in 0..5u64 {
                d.store(b * 4096, 4096, Nanos(0), Category::Data);
            }
            assert_eq!(d.backlog[0], Nanos(16 * 111), "shared = {shared}");
            let t = d.load(1 << 20, 4096, Nanos(0), 12, Category::Data);
            assert_eq!((t, d.backlog[0]), (Nanos(done), Nanos(backlog)), "shared = {shared}");
        }
    }

    /// And a write-back waits for a transfer booked before it, filling the
    /// gap ahead of it. A 16-line buffer: a 4 KiB load at 0 (transfer
    /// [610, 1,231)), then two 4 KiB stores at 0; the second evicts the
    /// first's 16 dirty lines (the load's lines are clean and left
    /// silently). Five 111 ns write-backs fit in [0, 555), the sixth would
    /// overlap the transfer, so the other eleven go from 1,231: the backlog
    /// ends at 1,231 + 11 × 111 = 2,452 ns, against 16 × 111 = 1,776.
    #[test]
    fn with_shared_media_a_write_back_waits_for_a_transfer() {
        for (shared, backlog) in [(false, 16 * 111), (true, 1231 + 11 * 111)] {
            let p = PmParams { shared_media: shared, xpbuffer_lines: 16, ..PmParams::optane_light_dedup() };
            let mut d = PmDevice::new(p).unwrap();
            assert_eq!(d.load(1 << 20, 4096, Nanos(0), 12, Category::Data), Nanos(1231));
            d.store(0, 4096, Nanos(0), Category::Data);
            d.store(4096, 4096, Nanos(0), Category::Data);
            assert_eq!(d.counters().written(Category::Data), 16 * 256);
            assert_eq!(d.backlog[0], Nanos(backlog), "shared = {shared}");
        }
    }

    #[test]
    fn interleaving_spreads_4k_chunks_over_the_dimms() {
        let mut p = PmParams::optane_light_dedup();
        p.dimms = 2;
        let d = PmDevice::new(p).unwrap();
        assert_eq!((d.dimm(0), d.dimm(4095), d.dimm(4096), d.dimm(8192)), (0, 0, 1, 0));
    }
}
