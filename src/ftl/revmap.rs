//! The reverse map (physical page -> entry), stored so that its memory
//! follows the blocks that hold live pages, not the device's size.
//!
//! GC needs, for each page of a victim block, the entry that owns it
//! (CAFTL's reverse mapping, Chen et al. FAST'11; see the FTL's module
//! doc). Only a page that holds a live copy has an owner; every other
//! slot is 0. A plain array of one slot per physical page (what this map
//! was until issue 26's memory round) becomes resident as the
//! log-structured writes and wear levelling move over the whole device,
//! even when nearly all of what they wrote has been overwritten since: a
//! trace that writes the device's capacity several times over (the
//! benchmark trace ten times) made all 80 MiB of FAD Table I's map
//! resident, 4 B for each of its 20,971,520 pages, while 2,855,214 pages
//! were live at its end.
//!
//! Here a block's slots live in a *chunk* (`pages_per_block` slots), taken
//! when the block's first slot becomes non-zero and given back when its
//! last one returns to 0 (the block's count of owned slots falls to 0).
//! Chunks come from one zero-initialised array, the most recently freed
//! first, so the resident part is the most chunks ever held at once: the
//! blocks that held a live page at the same time, bounded by the live
//! data, not by what was written. A freed chunk is all zeros (it is freed
//! only when its last owned slot is cleared), so a reused one needs no
//! clearing. The touched part is one dense prefix and may use transparent
//! huge pages.
//!
//! Which chunk a block gets is internal: every owner read is the same as
//! with one slot per page (pinned by `chunks_read_back_as_one_slot_per_page`
//! against a plain array).

use crate::geometry::Geometry;
use crate::units::Ppn;
use strength_reduce::StrengthReducedU32;

/// A block's chunk (`chunk + 1`, 0 = none) and how many of its slots are
/// owned (non-zero).
#[derive(Clone, Copy, Default)]
struct Held {
    chunk: u32,
    owned: u32,
}

/// Physical page -> `entry id + 1` (0 = no live entry). See the module doc.
pub(super) struct ReverseMap {
    /// Each block's chunk and owned-slot count, side by side so that
    /// finding the chunk brings the count into the cache with it.
    held: Vec<Held>,
    /// The chunks' slots, chunk `c` at `c * pages_per_block`.
    slots: Vec<u32>,
    /// Chunks given back, reused last-freed first.
    free: Vec<u32>,
    /// Chunks taken from `slots` so far (the resident prefix).
    fresh: u32,
    pages_per_block: u32,
    div_block: StrengthReducedU32,
}

impl ReverseMap {
    /// An empty map for every page of `geo` (zero-initialised: untouched
    /// parts cost no memory), advised for huge pages (module doc).
    pub(super) fn new(geo: &Geometry) -> ReverseMap {
        let blocks = geo.total_pages / geo.pages_per_block;
        let slots = vec![0; geo.total_pages as usize];
        super::advise_huge_pages(&slots);
        ReverseMap {
            held: vec![Held::default(); blocks as usize],
            slots,
            free: Vec::new(),
            fresh: 0,
            pages_per_block: geo.pages_per_block,
            div_block: StrengthReducedU32::new(geo.pages_per_block),
        }
    }

    /// Where `ppn`'s slot is stored, if its block holds a chunk, and the
    /// block.
    #[inline(always)]
    fn locate(&self, ppn: u32) -> (Option<usize>, usize) {
        let (block, page) = StrengthReducedU32::div_rem(ppn, self.div_block);
        let c = self.held[block as usize].chunk;
        let at = (c != 0).then(|| ((c - 1) * self.pages_per_block + page) as usize);
        (at, block as usize)
    }

    /// Hints the CPU to fetch `ppn`'s slot (no-op for a page that does
    /// not exist or whose block owns nothing).
    #[inline]
    pub(super) fn prefetch(&self, ppn: Ppn) {
        if ppn.0 < self.slots.len() as u32 {
            if let (Some(s), _) = self.locate(ppn.0) {
                crate::prefetch::prefetch(&self.slots[s]);
            }
        }
    }

    /// Hints the CPU to fetch the chunk record of `ppn`'s block, which
    /// [`Self::prefetch`] then reads without waiting.
    #[inline]
    pub(super) fn prefetch_held(&self, ppn: Ppn) {
        let block = StrengthReducedU32::div_rem(ppn.0, self.div_block).0;
        if let Some(h) = self.held.get(block as usize) {
            crate::prefetch::prefetch(h);
        }
    }

    /// The owner of `ppn` (`entry id + 1`, 0 = none).
    #[inline]
    pub(super) fn owner(&self, ppn: Ppn) -> u32 {
        match self.locate(ppn.0) {
            (Some(s), _) => self.slots[s],
            (None, _) => 0,
        }
    }

    /// Sets the owner of `ppn`, taking its block a chunk when the block's
    /// first slot becomes owned and giving it back when its last is
    /// cleared.
    #[inline]
    pub(super) fn set(&mut self, ppn: Ppn, owner: u32) {
        let (at, block) = self.locate(ppn.0);
        let s = match at {
            Some(s) => s,
            None if owner == 0 => return,
            None => self.take_chunk(block, ppn.0),
        };
        let old = std::mem::replace(&mut self.slots[s], owner);
        if (old == 0) != (owner == 0) {
            if owner != 0 {
                self.held[block].owned += 1;
            } else {
                self.release_one(block);
            }
        }
    }

    /// Clears the owner of `ppn`, a page that has one (a live copy being
    /// released or moved), giving its block's chunk back if it was the
    /// last. Unlike [`ReverseMap::set`] it does not read the slot: the
    /// slot of an old copy is a random one, and a store that misses the
    /// cache does not stall the way a load does (measured, BENCHMARKS.md
    /// "Streaming").
    #[inline]
    pub(super) fn clear(&mut self, ppn: Ppn) {
        let (at, block) = self.locate(ppn.0);
        let s = at.expect("a page with an owner has a chunk");
        debug_assert_ne!(self.slots[s], 0, "page {} cleared without an owner", ppn.0);
        self.slots[s] = 0;
        self.release_one(block);
    }

    /// `block` owns one slot fewer; the last gives its chunk back.
    #[inline(always)]
    fn release_one(&mut self, block: usize) {
        let h = &mut self.held[block];
        h.owned -= 1;
        if h.owned == 0 {
            self.free.push(h.chunk - 1);
            h.chunk = 0;
        }
    }

    /// Gives `block` a chunk (a freed one if any, all zeros) and returns
    /// `ppn`'s slot in it.
    #[cold]
    fn take_chunk(&mut self, block: usize, ppn: u32) -> usize {
        let c = self.free.pop().unwrap_or_else(|| {
            self.fresh += 1;
            self.fresh - 1
        });
        self.held[block].chunk = c + 1;
        (c * self.pages_per_block + ppn % self.pages_per_block) as usize
    }

    /// Chunks resident so far (the most held at once).
    #[cfg(test)]
    pub(super) fn resident_chunks(&self) -> u32 {
        self.fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GeometryConfig, ParallelUnit};
    use proptest::prelude::*;

    fn geometry() -> Geometry {
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
        Geometry::new(&g, ParallelUnit::Chip)
    }

    proptest! {
        /// Any sequence of sets reads back as a plain array of one slot
        /// per page would, and the chunks held never exceed the blocks
        /// owning a page at once.
        #[test]
        fn chunks_read_back_as_one_slot_per_page(
            ops in proptest::collection::vec((0u32..420, 0u32..4), 1..600),
        ) {
            let geo = geometry();
            prop_assert_eq!(geo.total_pages, 420);
            let mut map = ReverseMap::new(&geo);
            let mut plain = vec![0u32; geo.total_pages as usize];
            let mut most = 0;
            for (k, &(p, o)) in ops.iter().enumerate() {
                // Owners 0 (clear) half the time, so chunks come and go.
                let owner = if o < 2 { 0 } else { k as u32 + 1 };
                if o == 0 && plain[p as usize] != 0 {
                    map.clear(Ppn(p));
                } else {
                    map.set(Ppn(p), owner);
                }
                plain[p as usize] = owner;
                let blocks = plain.chunks(7).filter(|b| b.iter().any(|&x| x != 0)).count() as u32;
                most = most.max(blocks);
                prop_assert_eq!(map.owner(Ppn(p)), owner);
            }
            for p in 0..geo.total_pages {
                prop_assert_eq!(map.owner(Ppn(p)), plain[p as usize], "page {}", p);
            }
            prop_assert!(map.resident_chunks() <= most, "{} chunks for at most {} blocks", map.resident_chunks(), most);
        }
    }

    #[test]
    fn a_block_cleared_gives_its_chunk_to_the_next() {
        let geo = geometry();
        let mut map = ReverseMap::new(&geo);
        // Blocks written one after another, each overwritten (cleared)
        // before the next: one chunk serves them all.
        for b in 0..geo.total_pages / 7 {
            for p in b * 7..b * 7 + 7 {
                map.set(Ppn(p), p + 1);
            }
            for p in b * 7..b * 7 + 7 {
                assert_eq!(map.owner(Ppn(p)), p + 1);
                map.set(Ppn(p), 0);
            }
        }
        assert_eq!(map.resident_chunks(), 1);
        // Pages beyond the device are never prefetched.
        map.prefetch(Ppn(geo.total_pages));
    }
}
