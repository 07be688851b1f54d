//! The reverse map (physical page -> entry), laid out so that the part a
//! run touches is dense.
//!
//! GC needs, for each page of a victim block, the entry that owns it
//! (CAFTL's reverse mapping, Chen et al. FAST'11; see the FTL's module
//! doc). The map has one slot per physical page, but a run touches only
//! the blocks it has programmed, and each plane takes its free blocks in
//! increasing index order at first (the least-worn bucket pops the lowest
//! index; [`super::Ftl`]'s free pool). Indexed by [`Ppn`], whose numbering
//! is plane-major, those touched blocks would sit at the start of each
//! plane's 512 KiB stretch (FAD Table I geometry: 2048 blocks of 64 pages
//! per plane), a few 4 KiB pages in each of 160 stretches: too sparse for
//! huge pages, so every random access (the old copy's slot on each
//! overwrite) also misses the TLB.
//!
//! Here the slots are stored block-in-plane major instead:
//!
//! ```text
//! slot(ppn) = ((block_in_plane * planes) + plane) * pages_per_block + page_in_block
//! ```
//!
//! so the `k`-th block of every plane lies in one contiguous stretch, the
//! blocks the planes have used so far form one dense prefix, and that
//! prefix can use transparent huge pages without making the untouched rest
//! resident. A block's pages stay contiguous (GC's migration loop walks
//! them in order). The layout is internal: every result is the same as
//! with the plain `ppn` index.

use crate::geometry::Geometry;
use crate::units::Ppn;
use strength_reduce::StrengthReducedU32;

/// Physical page -> `entry id + 1` (0 = no live entry). See the module doc.
pub(super) struct ReverseMap {
    slots: Vec<u32>,
    /// Slots per block-in-plane stretch: `planes * pages_per_block`.
    stride: u32,
    pages_per_block: u32,
    div_plane: StrengthReducedU32,
    div_block: StrengthReducedU32,
}

impl ReverseMap {
    /// A zeroed map for every page of `geo` (zero-initialised: untouched
    /// parts cost no memory), advised for huge pages (module doc).
    pub(super) fn new(geo: &Geometry) -> ReverseMap {
        let slots = vec![0; geo.total_pages as usize];
        super::advise_huge_pages(&slots);
        ReverseMap {
            slots,
            stride: geo.planes * geo.pages_per_block,
            pages_per_block: geo.pages_per_block,
            div_plane: StrengthReducedU32::new(geo.pages_per_plane),
            div_block: StrengthReducedU32::new(geo.pages_per_block),
        }
    }

    /// Where `ppn`'s slot is stored.
    #[inline(always)]
    fn slot(&self, ppn: u32) -> usize {
        let (plane, in_plane) = StrengthReducedU32::div_rem(ppn, self.div_plane);
        let (block, page) = StrengthReducedU32::div_rem(in_plane, self.div_block);
        (block * self.stride + plane * self.pages_per_block + page) as usize
    }

    /// `ppn`'s slot, if the page exists.
    #[inline]
    pub(super) fn get(&self, ppn: Ppn) -> Option<&u32> {
        if (ppn.0 as usize) < self.slots.len() {
            Some(&self.slots[self.slot(ppn.0)])
        } else {
            None
        }
    }

    /// The owner of `ppn` (`entry id + 1`, 0 = none).
    #[inline]
    pub(super) fn owner(&self, ppn: Ppn) -> u32 {
        self.slots[self.slot(ppn.0)]
    }

    /// Sets the owner of `ppn`.
    #[inline]
    pub(super) fn set(&mut self, ppn: Ppn, owner: u32) {
        let s = self.slot(ppn.0);
        self.slots[s] = owner;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GeometryConfig, ParallelUnit};

    #[test]
    fn every_page_has_its_own_slot_and_a_block_is_contiguous() {
        let g = GeometryConfig {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die: 3,
            blocks_per_plane: 5,
            pages_per_block: 7,
            page_size: 4096,
            unit_order: Default::default(),
        };
        let geo = Geometry::new(&g, ParallelUnit::Chip);
        let map = ReverseMap::new(&geo);
        let mut seen = vec![false; geo.total_pages as usize];
        for p in 0..geo.total_pages {
            let s = map.slot(p);
            assert!(!seen[s], "slot {s} used twice");
            seen[s] = true;
            if p % geo.pages_per_block != 0 {
                assert_eq!(s, map.slot(p - 1) + 1, "page {p} does not follow its predecessor in its block");
            }
        }
        // The first block of every plane lies in the first stretch.
        for q in 0..geo.planes {
            assert!(map.slot(q * geo.pages_per_plane) < (geo.planes * geo.pages_per_block) as usize);
        }
        assert!(map.get(Ppn(geo.total_pages)).is_none());
    }
}
