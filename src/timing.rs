//! The timing model: per-resource next-free times, FCFS in processing order.
//!
//! # Model
//!
//! Resources are the flash **chips** (one flash operation at a time: the
//! chip-level serialization that makes dedup fragmentation hurt, FAD §II-A),
//! the **channel buses** (shared by the chips of a channel) and the
//! controller's **hash engines** (fingerprinting, FAD §IV-A).
//!
//! Each resource serves its reservations first-come-first-served in the
//! order the simulator issues them (requests in arrival order, a request's
//! pages in address order), non-preemptively and without backfilling idle
//! gaps. Under that discipline a resource is fully described by the time it
//! becomes free, so every operation's start and end is computed exactly with
//! a `max` and an add: no event queue is needed.
//!
//! * Read page on chip `c`, channel `h`, issued at `t`:
//!   sense `[s, s+tR)` with `s = max(t, free[c])`; transfer out
//!   `[x, x+tX)` with `x = max(s+tR, bus[h])`; the chip holds the data in its
//!   register until the transfer ends, so `free[c] = bus[h] = x+tX`.
//! * Program page: transfer in `[x, x+tX)` with `x = max(t, bus[h], free[c])`,
//!   then program `[x+tX, x+tX+tPROG)`; `bus[h] = x+tX`, `free[c] = x+tX+tPROG`.
//! * GC on a chip: valid-page migrations (copyback: tR+tPROG each, no bus;
//!   without copyback a read and a program with both transfers) and erases
//!   (tBERS), back to back from `max(t, free[c])`.
//! * Fingerprint: the earliest-free hash engine, `[max(t, free), +tFP)`.
//!
//! Two 4 KiB reads issued at 0 to one chip complete at `tR+tX` and
//! `2*(tR+tX)`; on two chips of one channel at `tR+tX` and `tR+2*tX`; on two
//! channels both at `tR+tX`.

use crate::config::Config;
use crate::units::Nanos;

/// Resource state and per-chip accounting.
#[derive(Clone, Debug)]
pub struct Timing {
    t_read: Nanos,
    t_prog: Nanos,
    t_erase: Nanos,
    t_xfer: Nanos,
    t_fp: Nanos,
    copyback: bool,
    channels: u32,
    chip_free: Vec<Nanos>,
    bus_free: Vec<Nanos>,
    hash_free: Vec<Nanos>,
    /// Per chip: total time busy (sense/program/erase/transfer holding).
    pub chip_busy: Vec<Nanos>,
    /// Per chip: total time operations waited for the chip to become free.
    pub chip_wait: Vec<Nanos>,
}

impl Timing {
    pub fn new(cfg: &Config) -> Timing {
        let g = &cfg.geometry;
        let chips = (g.channels * g.chips_per_channel) as usize;
        Timing {
            t_read: cfg.timing.read,
            t_prog: cfg.timing.program,
            t_erase: cfg.timing.erase,
            t_xfer: cfg.timing.page_transfer,
            t_fp: cfg.dedup.fingerprint,
            copyback: cfg.gc.copyback,
            channels: g.channels,
            chip_free: vec![Nanos::ZERO; chips],
            bus_free: vec![Nanos::ZERO; g.channels as usize],
            hash_free: vec![Nanos::ZERO; cfg.dedup.hash_engines.max(1) as usize],
            chip_busy: vec![Nanos::ZERO; chips],
            chip_wait: vec![Nanos::ZERO; chips],
        }
    }

    #[inline]
    fn start_on_chip(&mut self, chip: usize, t: Nanos) -> Nanos {
        let free = self.chip_free[chip];
        if free > t {
            self.chip_wait[chip] += free - t;
            free
        } else {
            t
        }
    }

    /// One page read on `chip` issued at `t`; returns its completion time.
    #[inline]
    pub fn read_page(&mut self, chip: u32, t: Nanos) -> Nanos {
        let c = chip as usize;
        let h = (chip % self.channels) as usize;
        let s = self.start_on_chip(c, t);
        let x = (s + self.t_read).max(self.bus_free[h]);
        let done = x + self.t_xfer;
        self.chip_busy[c] += done - s;
        self.chip_free[c] = done;
        self.bus_free[h] = done;
        done
    }

    /// One page program on `chip` issued at `t`; returns its completion time.
    #[inline]
    pub fn program_page(&mut self, chip: u32, t: Nanos) -> Nanos {
        let c = chip as usize;
        let h = (chip % self.channels) as usize;
        let ready = self.start_on_chip(c, t);
        let x = ready.max(self.bus_free[h]);
        let xfer_done = x + self.t_xfer;
        let done = xfer_done + self.t_prog;
        self.bus_free[h] = xfer_done;
        self.chip_busy[c] += done - x;
        self.chip_free[c] = done;
        done
    }

    /// Garbage collection work on `chip` issued at `t`: `moved` valid-page
    /// migrations and `erases` block erases. Returns when the chip is free.
    pub fn gc(&mut self, chip: u32, t: Nanos, moved: u32, erases: u32) -> Nanos {
        let c = chip as usize;
        let mut now = self.start_on_chip(c, t);
        let begin = now;
        if self.copyback {
            now += Nanos((self.t_read.0 + self.t_prog.0) * moved as u64);
        } else {
            let h = (chip % self.channels) as usize;
            for _ in 0..moved {
                // Read out over the bus, then write back in.
                let x = (now + self.t_read).max(self.bus_free[h]);
                let out = x + self.t_xfer;
                let x2 = out.max(self.bus_free[h]);
                let inn = x2 + self.t_xfer;
                self.bus_free[h] = inn;
                now = inn + self.t_prog;
            }
        }
        now += Nanos(self.t_erase.0 * erases as u64);
        self.chip_busy[c] += now - begin;
        self.chip_free[c] = now;
        now
    }

    /// Fingerprint of one page arriving at `t`; returns when the hash is known.
    #[inline]
    pub fn fingerprint(&mut self, t: Nanos) -> Nanos {
        // Earliest-free engine; ties to the lowest index (deterministic).
        let mut best = 0;
        for i in 1..self.hash_free.len() {
            if self.hash_free[i] < self.hash_free[best] {
                best = i;
            }
        }
        let done = t.max(self.hash_free[best]) + self.t_fp;
        self.hash_free[best] = done;
        done
    }

    /// Latest time any chip is busy until (the makespan of flash work).
    pub fn horizon(&self) -> Nanos {
        self.chip_free.iter().copied().max().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// Tiny geometry: 2 channels x 2 chips, tR = 20 us, tPROG = 200 us,
    /// tBERS = 1.5 ms, transfer 102.4 us per 4 KiB page.
    fn tiny() -> Timing {
        Timing::new(&Config::small_for_tests(2, 2, 16, 4))
    }

    const TR: u64 = 20_000;
    const TX: u64 = 102_400;
    const TP: u64 = 200_000;

    #[test]
    fn two_reads_same_chip_serialize() {
        let mut t = tiny();
        assert_eq!(t.read_page(0, Nanos(0)), Nanos(TR + TX));
        // The second waits for the whole first (sense + transfer), then its own.
        assert_eq!(t.read_page(0, Nanos(0)), Nanos(2 * (TR + TX)));
        assert_eq!(t.chip_wait[0], Nanos(TR + TX));
    }

    #[test]
    fn two_reads_same_channel_share_the_bus() {
        let mut t = tiny();
        // Chips 0 and 2 are both on channel 0 (channel = chip % 2).
        assert_eq!(t.read_page(0, Nanos(0)), Nanos(TR + TX));
        assert_eq!(t.read_page(2, Nanos(0)), Nanos(TR + 2 * TX));
    }

    #[test]
    fn two_reads_different_channels_overlap() {
        let mut t = tiny();
        assert_eq!(t.read_page(0, Nanos(0)), Nanos(TR + TX));
        assert_eq!(t.read_page(1, Nanos(0)), Nanos(TR + TX));
    }

    #[test]
    fn program_transfers_then_programs() {
        let mut t = tiny();
        assert_eq!(t.program_page(0, Nanos(0)), Nanos(TX + TP));
        // Same channel, other chip: waits only for the bus.
        assert_eq!(t.program_page(2, Nanos(0)), Nanos(2 * TX + TP));
        // Read on chip 0 must wait for its program.
        assert_eq!(t.read_page(0, Nanos(0)), Nanos(TX + TP + TR + TX));
    }

    #[test]
    fn gc_charges_the_chip() {
        let mut t = tiny();
        let done = t.gc(1, Nanos(1_000), 3, 1);
        assert_eq!(done, Nanos(1_000 + 3 * (TR + TP) + 1_500_000));
        assert_eq!(t.read_page(1, Nanos(0)), done + Nanos(TR + TX));
    }

    #[test]
    fn fingerprint_engine_is_fcfs() {
        let mut t = tiny();
        assert_eq!(t.fingerprint(Nanos(0)), Nanos(32_000));
        assert_eq!(t.fingerprint(Nanos(0)), Nanos(64_000));
        assert_eq!(t.fingerprint(Nanos(100_000)), Nanos(132_000));
    }
}
