//! Relocation: moving a live copy to another parallel unit (ReoDedup's
//! relocation inside the SSD, Wang et al. §VI, issue 11), into the host
//! write frontier ([`Ftl::relocate`]) or into a block of relocated pages
//! only ([`Ftl::relocate_to_block`], §VI: "relocation granularity aligned
//! to erase-block sizes", issue 28 item 10).
//!
//! # Relocation blocks
//!
//! Beside its active block (the host write frontier, which GC migration
//! also writes), a plane may have one open *relocation block*, written
//! only by [`Ftl::relocate_to_block`]. It is opened from the plane's free
//! pool (the same wear rule as the active block) by the first relocation
//! into the plane that finds none open, and closed as soon as its last
//! page is written; the next relocation opens a fresh one. A unit's
//! relocations fill its planes' relocation blocks one plane after the
//! other (a per-unit pointer moves to the unit's next plane when a block
//! closes), so `pages_per_block` consecutive relocations into a unit of
//! one plane (or `pages_per_block x planes` into a unit of several) fill
//! exactly one fresh block per plane, whatever host writes arrive in
//! between: no host page and no GC migration lands in a relocation block.
//!
//! An open relocation block is never a GC victim (like the active block);
//! a closed one is an ordinary block. Its write pointer and valid count
//! are kept in its `BlockMeta` directly (not the active block's deferred
//! counts). While one is open the plane holds one block fewer for closed
//! data, which [`Ftl::unit_has_room`] accounts for; the policy asking for
//! relocation blocks checks that the device's spare blocks leave room for
//! it (`reodedup`'s `align = "block"`). Runs that never call
//! [`Ftl::relocate_to_block`] open no relocation block and behave exactly
//! as before it existed.

use super::{EntryId, Ftl, FtlError, GcWork};
use crate::units::Ppn;

/// No block (a plane without an open relocation block).
const NO_BLOCK: u32 = u32::MAX;

/// The planes' relocation blocks (module doc).
#[derive(Clone, Debug, Default)]
pub(super) struct RelocationFrontiers {
    /// Per plane: the open relocation block, or [`NO_BLOCK`]. Empty until
    /// the first relocation into a relocation block.
    block: Vec<u32>,
    /// Per unit: the position, among the unit's planes, of the plane its
    /// relocations fill now.
    next: Vec<u32>,
    /// Relocation blocks opened so far.
    opened: u64,
}

impl RelocationFrontiers {
    /// Plane `plane`'s open relocation block, if any.
    #[inline]
    pub(super) fn open(&self, plane: u32) -> Option<u32> {
        self.block.get(plane as usize).copied().filter(|&b| b != NO_BLOCK)
    }

    /// The position, among `unit`'s planes, of the plane its relocations
    /// fill now (`None` before the first relocation into a relocation block).
    pub(super) fn filling(&self, unit: u32) -> Option<u32> {
        self.next.get(unit as usize).copied()
    }
}

impl Ftl {
    /// Moves live copy `e` to a new physical page in parallel unit `unit`
    /// (ReoDedup's relocation inside the SSD, issue 11), programmed at the
    /// plane's host write frontier (the unit's planes in turn, sharing the
    /// unit's pointer with [`Ftl::program`]), and returns the old and new
    /// physical pages plus GC work if the target plane fell below its
    /// threshold. Every logical page sharing the copy follows at once:
    /// LPNs map to the entry, not to the page, so moving a page shared by
    /// any number of LPNs is one entry update (O(1)). The content, the
    /// reference count and the fingerprint index are unchanged. The caller
    /// charges the timed read of the old page and program of the new one.
    pub fn relocate(&mut self, e: EntryId, unit: u32) -> Result<(Ppn, Ppn, Option<GcWork>), FtlError> {
        debug_assert!(!self.flat, "a flat map has no entries to relocate");
        debug_assert!(self.entries[e as usize].refs > 0, "relocating a free entry");
        let planes = self.geo.unit_planes(unit);
        let ptr = &mut self.unit_ptr[unit as usize];
        let plane = planes[*ptr as usize];
        // The same reduced pointer as `program`'s (which indexes with it).
        *ptr = if *ptr as usize + 1 == planes.len() { 0 } else { *ptr + 1 };
        let new = self.alloc_page(plane)?;
        self.move_copy(e, new, plane)
    }

    /// Relocation blocks opened since the FTL was created (each filled
    /// with relocated pages only, [`Ftl::relocate_to_block`]).
    pub fn relocation_blocks_opened(&self) -> u64 {
        self.reloc.opened
    }

    /// [`Ftl::relocate`] into a relocation block of `unit` (module doc:
    /// the unit's planes are filled one block after the other; host writes
    /// and GC never write there), for relocations aligned to erase blocks
    /// (Wang et al. §VI). The unit's host plane pointer does not move.
    pub fn relocate_to_block(&mut self, e: EntryId, unit: u32) -> Result<(Ppn, Ppn, Option<GcWork>), FtlError> {
        debug_assert!(!self.flat, "a flat map has no entries to relocate");
        debug_assert!(self.entries[e as usize].refs > 0, "relocating a free entry");
        if self.reloc.block.is_empty() {
            self.reloc.block = vec![NO_BLOCK; self.planes.len()];
            self.reloc.next = vec![0; self.geo.unit_count() as usize];
        }
        let planes = self.geo.unit_planes(unit);
        let k = self.reloc.next[unit as usize];
        let plane = planes[k as usize];
        let ppb = self.geo.pages_per_block;
        let b = match self.reloc.open(plane) {
            Some(b) => b,
            None => {
                let Some(b) = self.planes[plane as usize].free.pop() else {
                    return Err(self.full_error(plane));
                };
                debug_assert_eq!(self.blocks[b as usize].written, 0, "a free block is erased");
                self.reloc.block[plane as usize] = b;
                self.reloc.opened += 1;
                b
            }
        };
        let m = &mut self.blocks[b as usize];
        let new = Ppn(b * ppb + u32::from(m.written));
        m.written += 1;
        m.valid += 1;
        if u32::from(m.written) == ppb {
            // Full: closed (an ordinary block from now on); the unit's
            // next relocation goes to its next plane's fresh block.
            self.reloc.block[plane as usize] = NO_BLOCK;
            self.reloc.next[unit as usize] = if k as usize + 1 == planes.len() { 0 } else { k + 1 };
        }
        if let Some(l) = self.plane_live.get_mut(plane as usize) {
            *l += 1;
        }
        self.move_copy(e, new, plane)
    }

    /// Points copy `e` at its new page `new` (in `plane`, already counted
    /// valid there), invalidates its old page, and runs the GC the target
    /// plane's threshold asks for.
    fn move_copy(&mut self, e: EntryId, new: Ppn, plane: u32) -> Result<(Ppn, Ppn, Option<GcWork>), FtlError> {
        let old = self.entries[e as usize].ppn;
        self.p2e.clear(old);
        let b = self.geo.block_of(old) as usize;
        // Wrapping: an active block's count excludes its programmed pages.
        self.blocks[b].valid = self.blocks[b].valid.wrapping_sub(1);
        if !self.plane_live.is_empty() {
            self.plane_live[self.geo.plane_of_block(b as u32) as usize] -= 1;
        }
        self.p2e.set(new, e + 1);
        self.entries[e as usize].ppn = new;
        let gc =
            if self.planes[plane as usize].free.len() < self.min_free { self.collect_triggered(plane)? } else { None };
        Ok((old, new, gc))
    }
}
