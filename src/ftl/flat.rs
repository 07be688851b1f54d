//! The flat map: LPN -> PPN directly, for runs that never share a page
//! (see the module doc of [`crate::ftl`], "Flat mapping").
//!
//! The same tables as the shared map, read differently: an L2P slot holds
//! `ppn + 1` instead of `entry + 1`, a reverse-map slot `lpn + 1` instead
//! of `entry + 1` (or [`PENDING`] for the copy programmed and not mapped
//! yet, while a collection its program triggers runs). Every operation
//! does what the shared map does to a copy with one
//! reference, in the same order (allocate, GC, then map and release the old
//! page), so allocation, GC victims and every count are the same; only the
//! entry table is gone. The entry table still holds the copies waiting for
//! a page (`allocation = "dynamic"`, [`Ftl::reserve`]); [`Ftl::place`]
//! frees an entry as it maps its LPN flat.

use super::{EntryId, Ftl, FtlError, GcWork};
use crate::units::{ContentId, Lpn, Ppn};

/// The "entry" [`Ftl::program`] returns under a flat map: the copy just
/// programmed, which has no entry. [`Ftl::map_pinned`] maps it; nothing
/// else accepts it.
pub const FLAT_COPY: EntryId = EntryId::MAX;

/// The reverse-map owner of the copy programmed and not mapped yet (above
/// every `lpn + 1`: logical pages are fewer than physical ones).
pub(super) const PENDING: u32 = u32::MAX;

impl Ftl {
    /// Maps LPNs straight to pages from now on (module doc, "Flat
    /// mapping"): for a run that never maps two LPNs to one copy (no
    /// deduplication, no references, no relocation of entries). Call
    /// before the first write. Afterwards [`Ftl::lookup`] finds no entry;
    /// [`Ftl::page_of`] and [`Ftl::content_at`] answer instead.
    pub fn map_flat(&mut self) {
        debug_assert!(self.live_entries == 0 && self.entries.is_empty(), "map_flat on a used FTL");
        self.flat = true;
    }

    /// Whether LPNs map straight to pages ([`Ftl::map_flat`]).
    #[inline]
    pub fn is_flat(&self) -> bool {
        self.flat
    }

    /// Keeps each LPN's content under a flat map (which otherwise forgets
    /// it), so that [`Ftl::content_at`] answers: for the `--check` shadow
    /// model. Call before the first write; no effect on a shared map,
    /// whose entries hold the contents.
    pub fn keep_contents(&mut self) {
        if self.flat && self.contents.is_empty() {
            self.contents = vec![0; self.logical_pages as usize];
        }
    }

    /// The page an LPN's data is on, if it is mapped (either map).
    #[inline]
    pub fn page_of(&self, lpn: Lpn) -> Option<Ppn> {
        match self.l2p.get(lpn.0 as usize) {
            None | Some(0) => None,
            Some(&m) if self.flat => Some(Ppn(m - 1)),
            Some(&m) => Some(self.entries[(m - 1) as usize].ppn),
        }
    }

    /// The content an LPN maps to, if it is mapped; under a flat map only
    /// if contents are kept ([`Ftl::keep_contents`]), else `None`.
    #[inline]
    pub fn content_at(&self, lpn: Lpn) -> Option<ContentId> {
        if self.flat {
            return match self.contents.get(lpn.0 as usize) {
                None | Some(0) => None,
                Some(&c) => Some(ContentId(c - 1)),
            };
        }
        self.lookup(lpn).map(|e| self.entries[e as usize].content)
    }

    /// [`Ftl::program_in_plane`] under a flat map: `ppn` (allocated in
    /// `plane`) becomes the pending copy, owned by [`PENDING`] until
    /// mapped, so that a collection this program triggers moves it like
    /// any valid page and the shared map's order is kept (GC before the
    /// LPN's old page is released).
    pub(super) fn program_flat(
        &mut self,
        plane: u32,
        ppn: Ppn,
        content: ContentId,
    ) -> Result<(EntryId, Ppn, Option<GcWork>), FtlError> {
        debug_assert!(self.pending.is_none(), "a flat copy programmed before the last one was mapped");
        self.live_entries += 1;
        self.pending = Some((ppn, content));
        // The page's reverse-map slot is written once, when it is mapped
        // (`map_page`), unless this program triggers a collection, which
        // must see the page valid (owned by the pending copy) to move it
        // like any other: `gc_after_program`'s test, with the slot set
        // only on that (rare) path.
        let gc = if self.planes[plane as usize].free.len() < self.min_free {
            self.p2e.set(ppn, PENDING);
            self.collect_triggered(plane)?
        } else {
            None
        };
        Ok((FLAT_COPY, ppn, gc))
    }

    /// [`Ftl::map_pinned`] under a flat map: maps `lpn` to the pending copy.
    pub(super) fn map_pending(&mut self, lpn: Lpn, e: EntryId) {
        assert_eq!(e, FLAT_COPY, "a flat map maps only the copy just programmed");
        let (ppn, content) = self.pending.take().expect("a flat copy is mapped once, after its program");
        self.map_page(lpn, ppn, content);
    }

    /// Maps `lpn` to page `ppn` (holding `content`) and releases the page
    /// it mapped to before.
    pub(super) fn map_page(&mut self, lpn: Lpn, ppn: Ppn, content: ContentId) {
        let old = std::mem::replace(&mut self.l2p[lpn.0 as usize], ppn.0 + 1);
        self.p2e.set(ppn, lpn.0 + 1);
        if let Some(c) = self.contents.get_mut(lpn.0 as usize) {
            *c = content.0 + 1;
        }
        if old != 0 {
            self.release_page(Ppn(old - 1));
        }
    }

    /// [`Ftl::unmap`] under a flat map, `old` the LPN's former slot.
    pub(super) fn unmap_flat(&mut self, lpn: Lpn, old: u32) {
        if let Some(c) = self.contents.get_mut(lpn.0 as usize) {
            *c = 0;
        }
        if old != 0 {
            self.release_page(Ppn(old - 1));
        }
    }

    /// Page `ppn` is no longer mapped: what the shared map's release does
    /// when a copy's last reference goes (no index, no freed log: a flat
    /// map has neither).
    fn release_page(&mut self, ppn: Ppn) {
        self.p2e.clear(ppn);
        self.count_released(ppn);
    }

    /// What releasing page `ppn` does besides its reverse-map slot: its
    /// block and plane lose a valid page, the map a live copy.
    fn count_released(&mut self, ppn: Ppn) {
        let b = self.geo.block_of(ppn) as usize;
        // Wrapping: an active block's count excludes its programmed pages.
        self.blocks[b].valid = self.blocks[b].valid.wrapping_sub(1);
        if !self.plane_live.is_empty() {
            self.plane_live[self.geo.plane_of_block(b as u32) as usize] -= 1;
        }
        self.live_entries -= 1;
    }

    /// GC moved the page owned by `owner` (a reverse-map slot of a flat
    /// map) to `new`: the owner follows.
    #[inline]
    pub(super) fn moved_flat(&mut self, owner: u32, new: Ppn) {
        if owner == PENDING {
            if let Some(p) = self.pending.as_mut() {
                p.0 = new;
            }
        } else {
            self.l2p[(owner - 1) as usize] = new.0 + 1;
        }
    }

    /// [`Ftl::place`] under a flat map: the reserved copy `e` gets the next
    /// page of `plane` (collections it triggers run first, as in the
    /// shared map), its waiting LPN is mapped to that page unless a later
    /// write overtook it (then the page is released at once), and the
    /// entry is freed. Without references a reserved copy has exactly one
    /// waiting map, its own LPN's. `slot` is the entry's waiting-maps slot.
    pub(super) fn place_flat(
        &mut self,
        e: EntryId,
        slot: u32,
        plane: u32,
        mapped: &mut Vec<Lpn>,
    ) -> Result<(Ppn, Option<GcWork>), FtlError> {
        let content = self.entries[e as usize].content;
        let ppn = self.alloc_page(plane)?;
        let (_, ppn, gc) = self.program_flat(plane, ppn, content)?;
        let (now, _) = self.pending.take().expect("placed just now");
        let waiting = self.deferred.free_slot(slot);
        debug_assert!(waiting.is_none_or(|(_, n)| n == 1), "a flat copy waited for by several LPNs");
        match waiting {
            Some(((lpn, s), _)) if self.deferred.settle(lpn, s) => {
                self.map_page(lpn, now, content);
                mapped.push(lpn);
            }
            _ => {
                // Never mapped: its slot is set only if a collection it
                // triggered marked it pending, so it is read, not assumed.
                self.p2e.set(now, 0);
                self.count_released(now);
            }
        }
        self.entries[e as usize].refs = 0;
        self.free_entries.push(e);
        Ok((ppn, gc))
    }
}
