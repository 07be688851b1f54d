//! Copies placed later: SSDsim 2.1's dynamic allocation (`allocation =
//! "dynamic"`) chooses a written page's plane only when a channel serves
//! it, so between processing and service the copy has an entry but no
//! physical page.
//!
//! The entry indirection (module doc of [`crate::ftl`]) is what lets the
//! copy be referenced before it has a page: [`Ftl::reserve`] creates the
//! entry at processing time (indexed, so later duplicates find it), and
//! every LPN that is to map to it, the written LPN and the duplicates of
//! its content, is registered with [`Ftl::map_pinned_when_placed`].
//! [`Ftl::place`] gives the entry its page when the copy is served and then
//! maps those LPNs. Until then each of them keeps its old mapping, as
//! SSDsim's LPN keeps its old page until the new one is written
//! (docs/simulator.md, "Dynamic allocation").
//!
//! Order: every mapping change of an LPN with waiting maps is numbered in
//! the order the writes were processed. A waiting map is applied when its
//! copy is placed only if no later write (or trim) of that LPN has already
//! taken effect; otherwise it is stale and only drops its reference. So an
//! LPN ends up with its last write however the copies' placements and
//! immediate references (to copies already placed) interleave.

use super::{Entry, EntryId, Ftl, FtlError, GcWork};
use crate::fastmap::FastMap;
use crate::units::{ContentId, Lpn, Ppn};
use std::collections::{hash_map, HashMap};

/// The waiting maps (see the module doc). Empty unless dynamic allocation
/// reserves copies. A reserved entry's waiting maps sit in a slab, in the
/// slot its `ppn` names (`u32::MAX - slot`, above every page of the
/// device: [`Ftl::is_unplaced`]), so finding them hashes nothing; the
/// per-LPN state is a hash map keyed with [`FastMap`]'s multiply-fold
/// hasher, probed once per mapping change of a waiting LPN. Both are as
/// large as the backlog of waiting writes, which on a device that falls
/// behind reaches hundreds of thousands (a probe is then a cache miss).
/// A dense per-LPN index instead of the hash map (Round 13b in
/// BENCHMARKS.md) saved 1.7% of the instructions of a dynamic-allocation
/// run but touched 4 bytes for every LPN of the device (writes spread
/// over the whole logical space make every page of the index resident:
/// +52 MB peak RSS on the benchmark trace), so the map stays.
/// Nothing iterates them in an order that reaches a result (the
/// invariant check only counts).
#[derive(Clone, Debug, Default)]
pub(super) struct Deferred {
    /// Per slot: the waiting maps of the reserved entry using it, or a free
    /// slot (`entry` [`Waits::FREE`]), reused with its vector's capacity.
    slots: Vec<Waits>,
    /// Free slots, the last freed first.
    free: Vec<u32>,
    /// Per LPN with waiting maps: how many, and the number of the write
    /// its current mapping reflects (0: one older than every waiting map).
    lpns: FastMap<u32, (u32, u64)>,
    /// Write numbers handed out so far.
    seq: u64,
}

/// The waiting maps of one reserved entry, in processing order: the first
/// inline (most copies have exactly one, the written LPN's), the rest (the
/// duplicates written while it waits) in a vector that allocates only
/// when used.
#[derive(Clone, Debug)]
struct Waits {
    /// The reserved entry ([`Waits::FREE`]: a free slot).
    entry: EntryId,
    /// How many maps wait (the first, then `more`).
    n: u32,
    first: (Lpn, u64),
    more: Vec<(Lpn, u64)>,
}

impl Waits {
    /// The `entry` of a free slot.
    const FREE: EntryId = EntryId::MAX;

    fn iter(&self) -> impl Iterator<Item = &(Lpn, u64)> {
        std::iter::once(&self.first).take(self.n.min(1) as usize).chain(&self.more)
    }
}

impl Deferred {
    /// A mapping change of `lpn` that takes effect now (an immediate map or
    /// an unmap): waiting maps of `lpn` issued before it become stale.
    #[inline]
    pub(super) fn now(&mut self, lpn: Lpn) {
        if self.lpns.is_empty() {
            return;
        }
        if let Some(st) = self.lpns.get_mut(&lpn.0) {
            self.seq += 1;
            st.1 = self.seq;
        }
    }

    /// Registers a waiting map of `lpn` and returns its write number.
    #[inline]
    fn wait(&mut self, lpn: Lpn) -> u64 {
        self.seq += 1;
        self.lpns.entry(lpn.0).or_insert((0, 0)).0 += 1;
        self.seq
    }

    /// Whether the per-LPN counts agree with the waiting maps (the
    /// invariant check).
    pub(super) fn counts_agree(&self) -> bool {
        let mut per_lpn: HashMap<u32, u32> = HashMap::new();
        for w in self.slots.iter().filter(|w| w.entry != Waits::FREE) {
            for &(lpn, _) in w.iter() {
                *per_lpn.entry(lpn.0).or_default() += 1;
            }
        }
        per_lpn.len() == self.lpns.len() && per_lpn.iter().all(|(l, &n)| self.lpns.get(l).map(|s| s.0) == Some(n))
    }

    /// The reserved entries with their slots and how many maps wait for
    /// each, for the invariant check.
    pub(super) fn waiting_on(&self) -> impl Iterator<Item = (EntryId, u32, u32)> + '_ {
        (self.slots.iter().enumerate()).filter(|(_, w)| w.entry != Waits::FREE).map(|(s, w)| (w.entry, s as u32, w.n))
    }

    /// Settles waiting map `(lpn, s)` (write number `s`) as its copy is
    /// placed: whether it is current (no later mapping change of `lpn` took
    /// effect first; then it is the LPN's latest). One probe of the per-LPN
    /// table for the update and the removal.
    #[inline]
    pub(super) fn settle(&mut self, lpn: Lpn, s: u64) -> bool {
        let hash_map::Entry::Occupied(mut o) = self.lpns.entry(lpn.0) else {
            unreachable!("a waiting LPN is counted");
        };
        let st = o.get_mut();
        st.0 -= 1;
        let current = s > st.1;
        if current {
            st.1 = s;
        }
        if st.0 == 0 {
            o.remove();
        }
        current
    }

    /// Frees slot `slot` of a copy of the flat map (module `flat`) as it is
    /// placed, returning its first waiting map and how many wait (the flat
    /// map has at most one: no references), to be [`settled`](Self::settle).
    pub(super) fn free_slot(&mut self, slot: u32) -> Option<((Lpn, u64), u32)> {
        let w = &mut self.slots[slot as usize];
        w.entry = Waits::FREE;
        let (n, first) = (w.n, w.first);
        w.more.clear();
        self.free.push(slot);
        (n > 0).then_some((first, n))
    }
}

/// The `ppn` of a reserved entry whose waiting maps are in slab slot
/// `slot`.
#[inline]
pub(super) fn slot_ppn(slot: u32) -> Ppn {
    Ppn(u32::MAX - slot)
}

impl Ftl {
    /// Whether `ppn` is not a page but the mark of a copy waiting for one
    /// ([`Ftl::reserve`]): it lies above every physical page.
    #[inline]
    pub fn is_unplaced(&self, ppn: Ppn) -> bool {
        ppn.0 >= self.geo.planes * self.geo.pages_per_plane
    }

    /// Creates the entry of a new copy of `content` that has no physical
    /// page yet (pinned, refs = 1, like [`Ftl::program`]'s); [`Ftl::place`]
    /// gives it one. When `index` is true and the content has no primary
    /// copy yet, it becomes the fingerprint index's primary at once, so
    /// duplicates written meanwhile reference it. Fails when more copies
    /// wait than page numbers remain above the device's pages.
    pub fn reserve(&mut self, content: ContentId, index: bool) -> Result<EntryId, FtlError> {
        self.reserve_slot(content, index).map(|(e, _)| e)
    }

    /// [`Ftl::reserve`] and [`Ftl::map_pinned_when_placed`] of `lpn` in
    /// one call: a written page's new copy, which its own LPN waits for
    /// (the write path's case; it skips finding the fresh entry's slot).
    pub fn reserve_for(&mut self, lpn: Lpn, content: ContentId, index: bool) -> Result<EntryId, FtlError> {
        let (e, slot) = self.reserve_slot(content, index)?;
        let s = self.deferred.wait(lpn);
        let w = &mut self.deferred.slots[slot as usize];
        w.first = (lpn, s);
        w.n = 1;
        Ok(e)
    }

    /// [`Ftl::reserve`], returning the entry and its slot.
    #[inline]
    fn reserve_slot(&mut self, content: ContentId, index: bool) -> Result<(EntryId, u32), FtlError> {
        let d = &mut self.deferred;
        let slot = match d.free.pop() {
            Some(s) => s,
            None => {
                let s = d.slots.len() as u32;
                let pages = self.geo.planes * self.geo.pages_per_plane;
                if s > u32::MAX - pages {
                    return Err(FtlError::TooManyWaiting { waiting: u64::from(s), pages });
                }
                d.slots.push(Waits { entry: Waits::FREE, n: 0, first: (Lpn(0), 0), more: Vec::new() });
                s
            }
        };
        let ent = Entry { ppn: slot_ppn(slot), refs: 1, content };
        let e = match self.free_entries.pop() {
            Some(e) => {
                self.entries[e as usize] = ent;
                e
            }
            None => {
                self.entries.push(ent);
                (self.entries.len() - 1) as u32
            }
        };
        let w = &mut self.deferred.slots[slot as usize];
        w.entry = e;
        w.n = 0;
        w.more.clear();
        if index {
            self.index_copy(content, e);
        }
        Ok((e, slot))
    }

    /// Whether entry `e` has a physical page (not a copy [`Ftl::reserve`]d
    /// and not yet placed).
    #[inline]
    pub fn is_placed(&self, e: EntryId) -> bool {
        !self.is_unplaced(self.entries[e as usize].ppn)
    }

    /// Maps `lpn` to the reserved entry `e` once it is placed, consuming a
    /// reference taken with [`Ftl::pin`] (or the reservation's own); until
    /// then `lpn` keeps its mapping.
    pub fn map_pinned_when_placed(&mut self, lpn: Lpn, e: EntryId) {
        debug_assert!(!self.is_placed(e), "entry {e} is placed already: map it now");
        let slot = u32::MAX - self.entries[e as usize].ppn.0;
        let s = self.deferred.wait(lpn);
        let w = &mut self.deferred.slots[slot as usize];
        if w.n == 0 {
            w.first = (lpn, s);
        } else {
            w.more.push((lpn, s));
        }
        w.n += 1;
    }

    /// Places the reserved entry `e` on the next page of `plane` and maps
    /// the LPNs waiting for it (the ones no later write has overtaken;
    /// the others only drop their reference), appending those mapped to
    /// `mapped`. Returns the page, and GC work if the plane fell below its
    /// threshold (collected before the maps are applied, as after
    /// [`Ftl::program_in_plane`]).
    pub fn place(&mut self, e: EntryId, plane: u32, mapped: &mut Vec<Lpn>) -> Result<(Ppn, Option<GcWork>), FtlError> {
        debug_assert!(!self.is_placed(e) && self.entries[e as usize].refs > 0, "placing entry {e} twice or dead");
        let slot = u32::MAX - self.entries[e as usize].ppn.0;
        if self.flat {
            return self.place_flat(e, slot, plane, mapped);
        }
        let ppn = self.alloc_page(plane)?;
        self.entries[e as usize].ppn = ppn;
        self.live_entries += 1;
        self.p2e.set(ppn, e + 1);
        let gc = self.gc_after_program(plane)?;
        let w = &mut self.deferred.slots[slot as usize];
        w.entry = Waits::FREE;
        let (n, first) = (w.n, w.first);
        // The vector stays with the slot, its capacity reused.
        let mut more = std::mem::take(&mut w.more);
        self.deferred.free.push(slot);
        for (lpn, s) in std::iter::once(first).take(n.min(1) as usize).chain(more.drain(..)) {
            if self.deferred.settle(lpn, s) {
                self.remap(lpn, e);
                mapped.push(lpn);
            } else {
                self.release(e);
            }
        }
        self.deferred.slots[slot as usize].more = more;
        Ok((ppn, gc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::ftl::GcRule;

    /// A copy waiting in the reference: its entry, content and waiting
    /// (LPN, write number)s.
    type WaitingCopy = (EntryId, ContentId, Vec<(Lpn, u64)>);

    /// The waiting maps against a trivial reference (each LPN reads the
    /// latest write, in processing order, that has taken effect), on a
    /// shared and a flat map: random reserved copies with one or several
    /// waiting LPNs (duplicates), immediate maps, trims and placements out
    /// of order, on few LPNs so that waits on one LPN pile up and
    /// overtake each other, under GC. Every LPN's content is compared
    /// after each step, the invariants (per-LPN counts included) every few
    /// steps. A per-LPN state that forgot a later write (or kept one past
    /// its last wait, or mixed two LPNs up) fails here.
    #[test]
    fn waiting_maps_settle_as_the_latest_write_in_processing_order() {
        for flat in [false, true] {
            let mut cfg = Config::small_for_tests(2, 1, 16, 4);
            cfg.gc.rule = GcRule::UntilThreshold;
            cfg.gc.min_free_blocks = 3;
            let mut ftl = Ftl::new(&cfg.ftl_params());
            if flat {
                ftl.map_flat();
                ftl.keep_contents();
            }
            let lpns = 12u32;
            let planes = ftl.geometry().planes;
            let mut seed = 0x2545_f491_4f6c_dd1d_u64;
            let mut next = |m: u32| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                ((seed >> 33) % u64::from(m)) as u32
            };
            // Reference: per LPN the (write number, content) of the latest
            // write in effect; per waiting copy its content and its
            // waiting (LPN, write number)s.
            let mut want: Vec<(u64, Option<ContentId>)> = vec![(0, None); lpns as usize];
            let mut waiting: Vec<WaitingCopy> = Vec::new();
            let (mut write, mut stale, mut applied) = (0u64, 0, 0);
            for step in 0..4000u32 {
                let lpn = Lpn(next(lpns));
                let c = ContentId(step);
                match next(12) {
                    0..=2 => {
                        let (e, _, _) = ftl.program(next(2), c, false).unwrap();
                        ftl.map_pinned(lpn, e);
                        write += 1;
                        want[lpn.0 as usize] = (write, Some(c));
                    }
                    3..=5 => {
                        // Both ways of reserving a copy its LPN waits for.
                        let e = if step % 2 == 0 {
                            ftl.reserve_for(lpn, c, false).unwrap()
                        } else {
                            let e = ftl.reserve(c, false).unwrap();
                            ftl.map_pinned_when_placed(lpn, e);
                            e
                        };
                        write += 1;
                        waiting.push((e, c, vec![(lpn, write)]));
                    }
                    // A duplicate waits for a copy still waiting (the shared map only).
                    6 if !flat && !waiting.is_empty() => {
                        let w = next(waiting.len() as u32) as usize;
                        ftl.pin(waiting[w].0);
                        ftl.map_pinned_when_placed(lpn, waiting[w].0);
                        write += 1;
                        waiting[w].2.push((lpn, write));
                    }
                    7..=9 if !waiting.is_empty() => {
                        let (e, c, maps) = waiting.swap_remove(next(waiting.len() as u32) as usize);
                        let mut mapped = Vec::new();
                        ftl.place(e, next(planes), &mut mapped).unwrap();
                        let mut expect = Vec::new();
                        for (l, s) in maps {
                            let slot = &mut want[l.0 as usize];
                            if s > slot.0 {
                                *slot = (s, Some(c));
                                expect.push(l);
                                applied += 1;
                            } else {
                                stale += 1;
                            }
                        }
                        assert_eq!(mapped, expect, "flat {flat} step {step}");
                    }
                    _ => {
                        ftl.unmap(lpn);
                        write += 1;
                        want[lpn.0 as usize] = (write, None);
                    }
                }
                for l in 0..lpns {
                    assert_eq!(ftl.content_at(Lpn(l)), want[l as usize].1, "flat {flat} step {step}: LPN {l}");
                }
                if step % 50 == 0 {
                    ftl.check_invariants().unwrap_or_else(|e| panic!("flat {flat} step {step}: {e}"));
                }
            }
            assert!(stale > 100 && applied > 200, "flat {flat}: {stale} stale, {applied} applied waiting maps");
            ftl.check_invariants().unwrap();
        }
    }
}
