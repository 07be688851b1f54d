//! Per-block metadata (write pointer, valid pages, erase count), stored so
//! that the planes' active blocks do not compete for the same cache sets.
//!
//! Every page write reads and updates the metadata of its plane's active
//! block. Stored plane after plane, the planes' stretches are
//! `blocks_per_plane x 8` bytes long (16 KiB in FAD Table I's geometry), a
//! multiple of the caches' set period, and the planes progress at about the
//! same rate (writes are striped over them), so the 160 active blocks'
//! metadata would map to the same few cache sets: measured with
//! `valgrind --tool=callgrind --cache-sim=yes` on the first 200,000
//! requests of the benchmark trace, that one load missed the first-level
//! cache on nearly every page write, 39% of all of the run's read misses
//! (BENCHMARKS.md). Here each plane's stretch is followed by one cache line
//! of padding, so consecutive planes' stretches are shifted by a line
//! against each other and their active blocks spread over the sets. A
//! plane's blocks stay contiguous (GC's victim scan walks them in order).
//! The layout is internal: no result depends on it.

use std::ops::{Index, IndexMut};
use strength_reduce::StrengthReducedU32;

#[derive(Copy, Clone, Debug, Default)]
pub(super) struct BlockMeta {
    /// Pages programmed since the last erase (the write pointer).
    pub(super) written: u16,
    /// Pages still valid.
    pub(super) valid: u16,
    pub(super) erase_count: u32,
}

/// Padding after each plane's stretch: one 64-byte cache line.
const PAD: u32 = (64 / std::mem::size_of::<BlockMeta>()) as u32;

/// The metadata of every block, indexed by global block number. See the
/// module doc.
pub(super) struct BlockTable {
    metas: Vec<BlockMeta>,
    blocks: u32,
    blocks_per_plane: u32,
    div: StrengthReducedU32,
}

impl BlockTable {
    /// `planes x blocks_per_plane` erased blocks.
    pub(super) fn new(planes: u32, blocks_per_plane: u32) -> BlockTable {
        BlockTable {
            metas: vec![BlockMeta::default(); (planes * (blocks_per_plane + PAD)) as usize],
            blocks: planes * blocks_per_plane,
            blocks_per_plane,
            div: StrengthReducedU32::new(blocks_per_plane),
        }
    }

    /// Where block `b`'s metadata is stored.
    #[inline(always)]
    fn at(&self, b: u32) -> usize {
        (b + (b / self.div) * PAD) as usize
    }

    /// Number of blocks.
    pub(super) fn len(&self) -> usize {
        self.blocks as usize
    }

    /// Block `b`'s metadata, if the block exists.
    #[inline]
    pub(super) fn get(&self, b: u32) -> Option<&BlockMeta> {
        if b < self.blocks {
            Some(&self.metas[self.at(b)])
        } else {
            None
        }
    }

    /// The metadata of plane `plane`'s blocks, in block order.
    #[inline]
    pub(super) fn plane(&self, plane: u32) -> &[BlockMeta] {
        let start = (plane * (self.blocks_per_plane + PAD)) as usize;
        &self.metas[start..start + self.blocks_per_plane as usize]
    }

    /// Every block's metadata, in block order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &BlockMeta> + '_ {
        self.metas
            .chunks(self.blocks_per_plane as usize + PAD as usize)
            .flat_map(|c| &c[..self.blocks_per_plane as usize])
    }
}

impl Index<usize> for BlockTable {
    type Output = BlockMeta;
    #[inline]
    fn index(&self, b: usize) -> &BlockMeta {
        assert!(b < self.blocks as usize, "block {b} out of range");
        &self.metas[self.at(b as u32)]
    }
}

impl IndexMut<usize> for BlockTable {
    #[inline]
    fn index_mut(&mut self, b: usize) -> &mut BlockMeta {
        assert!(b < self.blocks as usize, "block {b} out of range");
        let i = self.at(b as u32);
        &mut self.metas[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_own_metadata_in_order() {
        let mut t = BlockTable::new(3, 5);
        assert_eq!(t.len(), 15);
        for b in 0..15 {
            t[b].erase_count = b as u32;
        }
        assert_eq!(t.iter().map(|m| m.erase_count).collect::<Vec<_>>(), (0..15).collect::<Vec<_>>());
        assert_eq!(t.plane(1).iter().map(|m| m.erase_count).collect::<Vec<_>>(), vec![5, 6, 7, 8, 9]);
        assert_eq!(t.get(14).map(|m| m.erase_count), Some(14));
        assert!(t.get(15).is_none());
        // Consecutive planes' stretches are shifted by a cache line.
        assert_eq!(t.at(5) - t.at(0), 5 + PAD as usize);
    }
}
