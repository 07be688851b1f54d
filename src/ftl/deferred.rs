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
        Ok(e)
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
        let d = &mut self.deferred;
        d.seq += 1;
        d.lpns.entry(lpn.0).or_insert((0, 0)).0 += 1;
        let w = &mut d.slots[slot as usize];
        if w.n == 0 {
            w.first = (lpn, d.seq);
        } else {
            w.more.push((lpn, d.seq));
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
