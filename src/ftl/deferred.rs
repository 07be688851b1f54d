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
use std::collections::HashMap;

/// The physical page of an entry that has none yet ([`Ftl::reserve`]).
pub const UNPLACED: Ppn = Ppn(u32::MAX);

/// The waiting maps (see the module doc). Empty unless dynamic allocation
/// reserves copies: then one hash-map test per mapping change. Keyed by
/// integers with [`FastMap`]'s multiply-fold hasher; nothing iterates them
/// in an order that reaches a result (the invariant check only counts).
#[derive(Clone, Debug, Default)]
pub(super) struct Deferred {
    /// Per reserved entry: the LPNs to map to it once placed, with their
    /// write numbers, in processing order.
    waiting: FastMap<EntryId, Waits>,
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
    first: (Lpn, u64),
    more: Vec<(Lpn, u64)>,
}

impl Waits {
    fn len(&self) -> usize {
        1 + self.more.len()
    }

    fn iter(&self) -> impl Iterator<Item = &(Lpn, u64)> {
        std::iter::once(&self.first).chain(&self.more)
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
        for v in self.waiting.values() {
            for &(lpn, _) in v.iter() {
                *per_lpn.entry(lpn.0).or_default() += 1;
            }
        }
        per_lpn.len() == self.lpns.len() && per_lpn.iter().all(|(l, &n)| self.lpns.get(l).map(|s| s.0) == Some(n))
    }

    /// The waiting maps to `e`, for the invariant check.
    pub(super) fn waiting_on(&self) -> impl Iterator<Item = (EntryId, u32)> + '_ {
        self.waiting.iter().map(|(&e, v)| (e, v.len() as u32))
    }
}

impl Ftl {
    /// Creates the entry of a new copy of `content` that has no physical
    /// page yet (pinned, refs = 1, like [`Ftl::program`]'s); [`Ftl::place`]
    /// gives it one. When `index` is true and the content has no primary
    /// copy yet, it becomes the fingerprint index's primary at once, so
    /// duplicates written meanwhile reference it.
    pub fn reserve(&mut self, content: ContentId, index: bool) -> EntryId {
        let ent = Entry { ppn: UNPLACED, refs: 1, content };
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
        if index {
            self.index_copy(content, e);
        }
        e
    }

    /// Whether entry `e` has a physical page (not a copy [`Ftl::reserve`]d
    /// and not yet placed).
    #[inline]
    pub fn is_placed(&self, e: EntryId) -> bool {
        self.entries[e as usize].ppn != UNPLACED
    }

    /// Maps `lpn` to the reserved entry `e` once it is placed, consuming a
    /// reference taken with [`Ftl::pin`] (or the reservation's own); until
    /// then `lpn` keeps its mapping.
    pub fn map_pinned_when_placed(&mut self, lpn: Lpn, e: EntryId) {
        debug_assert!(!self.is_placed(e), "entry {e} is placed already: map it now");
        let d = &mut self.deferred;
        d.seq += 1;
        d.lpns.entry(lpn.0).or_insert((0, 0)).0 += 1;
        let w = (lpn, d.seq);
        match d.waiting.entry(e) {
            std::collections::hash_map::Entry::Occupied(mut o) => o.get_mut().more.push(w),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Waits { first: w, more: Vec::new() });
            }
        }
    }

    /// Places the reserved entry `e` on the next page of `plane` and maps
    /// the LPNs waiting for it (the ones no later write has overtaken;
    /// the others only drop their reference), appending those mapped to
    /// `mapped`. Returns the page, and GC work if the plane fell below its
    /// threshold (collected before the maps are applied, as after
    /// [`Ftl::program_in_plane`]).
    pub fn place(&mut self, e: EntryId, plane: u32, mapped: &mut Vec<Lpn>) -> Result<(Ppn, Option<GcWork>), FtlError> {
        debug_assert!(!self.is_placed(e) && self.entries[e as usize].refs > 0, "placing entry {e} twice or dead");
        let ppn = self.alloc_page(plane)?;
        self.entries[e as usize].ppn = ppn;
        self.live_entries += 1;
        self.p2e.set(ppn, e + 1);
        let gc = self.gc_after_program(plane)?;
        let Some(waits) = self.deferred.waiting.remove(&e) else { return Ok((ppn, gc)) };
        for (lpn, s) in std::iter::once(waits.first).chain(waits.more) {
            let st = self.deferred.lpns.get_mut(&lpn.0).expect("a waiting LPN is counted");
            st.0 -= 1;
            let current = s > st.1;
            if current {
                st.1 = s;
            }
            if st.0 == 0 {
                self.deferred.lpns.remove(&lpn.0);
            }
            if current {
                self.remap(lpn, e);
                mapped.push(lpn);
            } else {
                self.release(e);
            }
        }
        Ok((ppn, gc))
    }
}
