//! The content-aware page-mapping FTL.
//!
//! # Mapping (CAFTL-style indirection)
//!
//! ```text
//! LPN --l2p--> entry --entries[e].ppn--> PPN
//!                ^                         |
//!                +----------p2e------------+   (reverse map, for GC)
//! content --index--> entry                     (fingerprint index, dedup only)
//! ```
//!
//! An *entry* is one live physical copy: its page, its reference count (the
//! number of LPNs mapped to it) and its content. Deduplicated LPNs share an
//! entry, so GC migrating a shared page updates one `entries[e].ppn` and
//! every sharer stays correct (CAFTL's secondary mapping, Chen et al.
//! FAST'11; the design choice the FAD paper leaves open in §II-B).
//! Runs that never share a page (Native) map flat instead: see "Flat
//! mapping" below.
//!
//! Tables are zero-initialised vectors storing `id + 1` (0 = none), so the
//! OS hands out zero pages lazily and untouched parts cost no memory.
//!
//! # Flat mapping (runs that never share a page)
//!
//! A run whose policy does not deduplicate ([`Ftl::map_flat`], Native and
//! `die-hint`) never maps two LPNs to one copy, so the entry indirection
//! buys nothing there; it costs an entry (12 B) per live page and one
//! dependent load per page operation. Such an FTL maps flat
//! (`src/ftl/flat.rs`):
//!
//! ```text
//! LPN --l2p--> PPN          (l2p holds ppn + 1)
//!  ^            |
//!  +----p2e-----+           (the reverse map holds lpn + 1)
//! ```
//!
//! GC migrating a page rewrites its one LPN's slot instead of an entry's
//! `ppn`. Entries exist only for copies waiting for a page (dynamic
//! allocation, [`Ftl::reserve`]) and are freed when placed. Every decision
//! (allocation, GC victims, the counts reported) is the same as through
//! entries: only where the page number is stored differs. A copy's
//! content is not kept unless asked ([`Ftl::keep_contents`], for the
//! `--check` shadow model). The FTL's own shared map is CAFTL's; the
//! flat one is a plain page-mapping FTL (DFTL's page-level table without
//! its cache, Gupta et al. ASPLOS'09), which a non-deduplicating SSD is.
//!
//! # Allocation
//!
//! Pages are programmed into the *active block* of a plane; the plane is
//! chosen inside the requested parallel unit by that unit's rotating
//! sub-pointer (see [`Geometry`]). Which unit gets the page is the policy's
//! decision ([`crate::policy`]). One active block per plane, written
//! sequentially; a full block is replaced by the free block with the lowest
//! erase count (dynamic wear levelling) or the lowest index. Relocations
//! aligned to erase blocks ([`Ftl::relocate_to_block`]) write a second open
//! block per plane that holds relocated pages only (`relocation`).
//!
//! # Garbage collection
//!
//! Greedy, per plane: when a plane's free blocks fall below
//! `gc.min_free_blocks`, the closed block with the most invalid pages
//! (ties: least worn, then lowest index) is the victim; its valid pages move
//! inside the same plane and it is erased, until the plane is back at the
//! threshold (`gc.rule = "until-threshold"`), or one victim per page write
//! into a plane below the threshold (`"one-per-write"`, SSDsim 2.1's rule:
//! `gc hard threshold` checked after every page write, one greedy victim
//! queued). A victim without invalid pages means the plane is full of live
//! data: `until-threshold` GC stops with [`FtlError::DeviceFull`] instead of
//! looping; `one-per-write` skips the collection, and the write fails with
//! `DeviceFull` only when the plane has no free block left.
//!
//! A *GC preference* ([`Ftl::set_gc_preference`], FAD's GC hint, §III-G)
//! changes where a triggered collection runs, never whether one runs: when
//! a plane outside the preferred unit triggers GC, that one collection runs
//! instead on the preferred unit's plane with the fewest free blocks, if
//! that plane has fewer than `min_free_blocks + margin` free blocks and a
//! victim with invalid pages, and the triggering plane still has at least
//! `min_free_blocks - defer` free blocks (and 2), so its own collection can
//! wait for a later trigger. A trigger so moved counts as served: its plane
//! triggers again only once it has lost another free block. So the hint
//! moves collections and never adds any (one per trigger, as without it);
//! the greedy victim rule and in-plane migration are unchanged.
//!
//! An aged start (`precondition.aged`) fills that fraction of every plane's
//! blocks with stale data (written, no valid page) before anything else, so
//! that GC runs on short traces (SSDsim's `aged` flag makes part of every
//! plane invalid in the same spirit).

mod blocks;
mod bulk;
mod check;
mod deferred;
mod flat;
mod gc;
pub mod index;
mod params;
mod relocation;
mod revmap;

pub use check::InvariantViolation;
pub use flat::FLAT_COPY;
pub use gc::{GcPreference, GcWork};
pub use params::{FtlParams, GcConfig, GcRule};

use crate::geometry::Geometry;
use crate::units::{ContentId, Lpn, Ppn};
use blocks::{BlockMeta, BlockTable};
use deferred::Deferred;
use index::ContentTable;
use relocation::RelocationFrontiers;
use revmap::ReverseMap;
use std::collections::BTreeMap;
use thiserror::Error;

/// Blocks per plane that an aged start (`precondition.aged`, a fraction of
/// each plane) fills with stale data: `round(aged × blocks)`, leaving the
/// active block and one free block.
pub fn aged_blocks(aged: f64, blocks_per_plane: u32) -> u32 {
    let n = (aged * blocks_per_plane as f64).round();
    (n.max(0.0) as u32).min(blocks_per_plane.saturating_sub(2))
}

use crate::prefetch::prefetch;

/// Asks the kernel to back `v`'s buffer with transparent huge pages.
///
/// The L2P table, the mapping entries and the fingerprint index are tens of
/// MiB each and read at random, a cache line per page operation; with 4 KiB
/// pages nearly every such read also misses the TLB, and the page walk
/// delays even the simulator's prefetches. On Linux with THP in `madvise`
/// mode (a common default) this hint gives those tables 2 MiB pages; in
/// `always` mode it changes nothing, in `never` mode or on other systems it
/// is a no-op. Only tables whose touched part is dense are advised: the
/// L2P, the entries and the index, touched nearly everywhere anyway, and
/// the reverse map, whose layout keeps the blocks a run uses in one dense
/// prefix (`revmap`). It never changes a result. Measured in BENCHMARKS.md.
fn advise_huge_pages<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + std::mem::size_of_val(v);
        let lo = start.next_multiple_of(HUGE);
        let hi = end / HUGE * HUGE;
        if hi > lo {
            // SAFETY: madvise on whole pages inside a live allocation we own;
            // MADV_HUGEPAGE only changes how the kernel backs the memory,
            // never its contents. A failure (e.g. THP disabled) is ignored.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Errors the FTL reports instead of looping or panicking.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FtlError {
    #[error(
        "device full: plane {plane} has no invalid page to reclaim ({live} live pages in {blocks} blocks); \
         the workload's live data does not fit the physical capacity: use a larger device or more over-provisioning"
    )]
    DeviceFull { plane: u32, live: u64, blocks: u32 },
    #[error(
        "logical page {lpn} is beyond the logical capacity of {capacity} pages; \
         use a larger device, or replay the trace with --wrap"
    )]
    OutOfRange { lpn: u64, capacity: u64 },
    #[error(
        "{waiting} copies wait to be placed (allocation = \"dynamic\"), more than the page numbers above the device's \
         {pages} pages can name; use a smaller device or another allocation"
    )]
    TooManyWaiting { waiting: u64, pages: u32 },
}

/// One live physical copy (see the module doc).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub ppn: Ppn,
    /// Number of LPNs mapped to this entry (its reference count / heat H(b)).
    pub refs: u32,
    pub content: ContentId,
}

/// Identifier of an [`Entry`].
pub type EntryId = u32;

/// A plane's free (erased) blocks, bucketed by wear key (the erase count
/// with wear levelling, else 0). `pop` takes from the least-worn bucket;
/// within a bucket the most recently freed block comes first (initially the
/// lowest index). A bucket list instead of a binary heap: a pop touches one
/// or two cache lines instead of a dozen (it is on the page-write path).
#[derive(Clone, Debug, Default)]
struct FreePool {
    buckets: BTreeMap<u32, Vec<u32>>,
    len: u32,
}

impl FreePool {
    fn push(&mut self, key: u32, block: u32) {
        self.buckets.entry(key).or_default().push(block);
        self.len += 1;
    }
    fn pop(&mut self) -> Option<u32> {
        let mut first = self.buckets.first_entry()?;
        let b = first.get_mut().pop();
        if first.get().is_empty() {
            first.remove();
        }
        self.len -= 1;
        b
    }
    fn len(&self) -> u32 {
        self.len
    }
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.buckets.values().flatten().copied()
    }
}

#[derive(Clone, Debug)]
struct Plane {
    free: FreePool,
    /// The block currently being programmed.
    active: u32,
    /// The active block's write pointer, kept here, in the line that names
    /// the block, instead of in its `BlockMeta`: a page write then touches
    /// no block metadata, which the random accesses of the other tables
    /// have usually evicted from the first-level cache by the time the
    /// plane writes again (BENCHMARKS.md). While a block is active its
    /// `BlockMeta` holds the write pointer it had when it became active and
    /// its valid count less the `programmed` pages (modulo 2^16: a release
    /// may take it below 0); both are added in when it is replaced
    /// ([`Ftl::block_meta`] reads the sum).
    written: u32,
    /// Pages programmed into the active block since it became active.
    programmed: u16,
    /// Free blocks the plane had when its GC trigger was served on a
    /// preferred unit instead ([`Ftl::set_gc_preference`]); 0 = none. The
    /// plane does not trigger again until it has fewer; reset when a
    /// collection frees one of its blocks.
    served_at: u32,
}

/// The FTL state. See the module doc.
pub struct Ftl {
    geo: Geometry,
    logical_pages: u32,
    min_free: u32,
    gc_rule: GcRule,
    gc_pref: Option<GcPreference>,
    wear_leveling: bool,
    l2p: Vec<u32>,
    entries: Vec<Entry>,
    free_entries: Vec<EntryId>,
    p2e: ReverseMap,
    /// Fingerprint index: content -> primary entry + 1 (0: none).
    index: ContentTable<u32>,
    blocks: BlockTable,
    planes: Vec<Plane>,
    unit_ptr: Vec<u32>,
    /// Live (valid) pages per plane, kept only when
    /// [`Ftl::track_plane_live`] asked for it (empty otherwise: no cost on
    /// the hot path of the policies that do not need it).
    plane_live: Vec<u32>,
    live_entries: u64,
    indexed: u64,
    /// Pages GC migrated that were shared (refs > 1), over the FTL's life.
    gc_moved_shared: u64,
    /// Whether freed copies are logged in `freed` ([`Ftl::track_freed`]).
    track_freed: bool,
    freed: Vec<(ContentId, EntryId)>,
    /// Whether dropped references that leave a copy live are logged
    /// ([`Ftl::track_derefs`]).
    track_derefs: bool,
    derefs: Vec<(ContentId, EntryId)>,
    /// Maps waiting for copies not placed yet (`allocation = "dynamic"`,
    /// [`deferred`]).
    deferred: Deferred,
    /// The planes' relocation blocks ([`Ftl::relocate_to_block`]; empty,
    /// and no block open, until the first such relocation).
    reloc: RelocationFrontiers,
    /// Whether LPNs map flat to pages ([`Ftl::map_flat`], module doc).
    flat: bool,
    /// Flat map: the copy programmed and not mapped yet (its page, which
    /// GC may move meanwhile, and content), between [`Ftl::program`] and
    /// [`Ftl::map_pinned`] or inside [`Ftl::place`].
    pending: Option<(Ppn, ContentId)>,
    /// Flat map, when kept ([`Ftl::keep_contents`]): each LPN's content + 1
    /// (0 = unmapped). Empty otherwise.
    contents: Vec<u32>,
}

impl Ftl {
    pub fn new(cfg: &FtlParams) -> Ftl {
        let geo = Geometry::new(&cfg.geometry, cfg.alloc_unit);
        let logical_pages = cfg.logical_pages as u32;
        let bpp = geo.blocks_per_plane;
        let mut blocks = BlockTable::new(geo.planes, bpp);
        let aged = aged_blocks(cfg.aged, bpp);
        let planes = (0..geo.planes)
            .map(|q| {
                let first = q * bpp;
                // Block `first` starts active; the rest are free (lowest index popped first).
                let mut free = FreePool::default();
                for b in (first + 1..first + bpp).rev() {
                    free.push(0, b);
                }
                // An aged start: the first free blocks hold stale data
                // (written, no valid page): GC reclaims them by erasing.
                for _ in 0..aged {
                    if let Some(b) = free.pop() {
                        blocks[b as usize].written = geo.pages_per_block as u16;
                    }
                }
                Plane {
                    free,
                    active: first,
                    written: u32::from(blocks[first as usize].written),
                    programmed: 0,
                    served_at: 0,
                }
            })
            .collect();
        // The tables read at random on every page get huge pages (see
        // `advise_huge_pages`), before their first touch. Every live entry
        // is mapped by at least one LPN, so entries hardly ever outnumber
        // logical pages: their capacity is reserved once (untouched capacity
        // costs address space, not memory, and the table never pays a
        // doubling copy); if the address space is refused the table simply
        // grows on demand.
        let l2p = vec![0; logical_pages as usize];
        advise_huge_pages(&l2p);
        let mut entries: Vec<Entry> = Vec::new();
        if entries.try_reserve_exact(logical_pages as usize + 1024).is_ok() {
            advise_huge_pages(entries.spare_capacity_mut());
        }
        Ftl {
            logical_pages,
            min_free: cfg.gc.min_free_blocks,
            gc_rule: cfg.gc.rule,
            gc_pref: None,
            wear_leveling: cfg.gc.wear_leveling,
            l2p,
            entries,
            free_entries: Vec::new(),
            p2e: ReverseMap::new(&geo),
            index: ContentTable::new(index::dense_limit(u64::from(geo.total_pages))),
            blocks,
            planes,
            unit_ptr: vec![0; geo.unit_count() as usize],
            plane_live: Vec::new(),
            live_entries: 0,
            indexed: 0,
            gc_moved_shared: 0,
            track_freed: false,
            freed: Vec::new(),
            track_derefs: false,
            derefs: Vec::new(),
            deferred: Deferred::default(),
            reloc: RelocationFrontiers::default(),
            flat: false,
            pending: None,
            contents: Vec::new(),
            geo,
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// Pages the host can address.
    pub fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    /// Checks an LPN range against the logical capacity.
    pub fn check_range(&self, lpn: u64, pages: u32) -> Result<(), FtlError> {
        let end = lpn + pages as u64;
        if end > self.logical_pages as u64 {
            return Err(FtlError::OutOfRange { lpn: end - 1, capacity: self.logical_pages as u64 });
        }
        Ok(())
    }

    /// Hints the CPU to fetch the L2P slots of `lpn .. lpn + pages` (no
    /// effect on state). The simulator calls the `prefetch_*` hints a few
    /// requests ahead, one stage of the dependent chain L2P slot -> entry ->
    /// (reverse map, block metadata, index slot) per distance, so that the
    /// misses of upcoming requests overlap with this one's work.
    #[inline]
    pub fn prefetch_mapping(&self, lpn: u32, pages: u32) {
        let (a, b) = (lpn as usize, (lpn as usize + pages.max(1) as usize - 1));
        if let Some(slot) = self.l2p.get(a) {
            prefetch(slot);
        }
        // A request's slots are contiguous: 16 per cache line.
        if b / 16 != a / 16 {
            if let Some(slot) = self.l2p.get(b) {
                prefetch(slot);
            }
        }
    }

    /// Hints the CPU to fetch the entries the pages `lpn .. lpn + pages`
    /// currently map to (call after [`Ftl::prefetch_mapping`] had time to
    /// bring the L2P slots in); `write`: the request overwrites them.
    #[inline]
    pub fn prefetch_entry(&self, lpn: u32, pages: u32, write: bool) {
        let Some(slots) = self.l2p.get(lpn as usize..lpn as usize + pages as usize) else { return };
        if self.flat {
            // No entry: the slots name the pages. A read needs nothing
            // more; an overwrite's release touches the block metadata and
            // the reverse map, whose slot is found through the block's
            // chunk record: that record now, the slot one stage later
            // (`prefetch_release`).
            if write {
                for &m in slots {
                    if m != 0 {
                        let ppn = Ppn(m - 1);
                        self.p2e.prefetch_held(ppn);
                        if let Some(b) = self.blocks.get(self.geo.block_of(ppn)) {
                            prefetch(b);
                        }
                    }
                }
            }
            return;
        }
        for &m in slots {
            if let Some(e) = self.entries.get(m.wrapping_sub(1) as usize) {
                prefetch(e);
            }
        }
    }

    /// Hints the CPU to fetch what overwriting `lpn .. lpn + pages` will
    /// touch when it releases the old copies: reverse-map slot, block
    /// metadata and fingerprint-index slot (call after
    /// [`Ftl::prefetch_entry`]).
    #[inline]
    pub fn prefetch_release(&self, lpn: u32, pages: u32) {
        let Some(slots) = self.l2p.get(lpn as usize..lpn as usize + pages as usize) else { return };
        if self.flat {
            // The reverse-map slots, their chunk records fetched one stage
            // earlier by `prefetch_entry`.
            for &m in slots {
                if m != 0 {
                    self.p2e.prefetch(Ppn(m - 1));
                }
            }
            return;
        }
        for &m in slots {
            if let Some(e) = self.entries.get(m.wrapping_sub(1) as usize) {
                if e.refs == 1 {
                    self.prefetch_page(e.ppn);
                    self.index.prefetch(e.content);
                }
            }
        }
    }

    /// Hints the CPU to fetch what releasing page `ppn` touches: its
    /// reverse-map slot and its block's metadata.
    #[inline]
    fn prefetch_page(&self, ppn: Ppn) {
        self.p2e.prefetch(ppn);
        if let Some(b) = self.blocks.get(self.geo.block_of(ppn)) {
            prefetch(b);
        }
    }

    /// Hints the CPU to fetch the fingerprint-index slot of `content`.
    #[inline]
    pub fn prefetch_index(&self, content: ContentId) {
        self.index.prefetch(content);
    }

    /// Hints the CPU to fetch the entry of `content`'s primary copy (call
    /// after [`Ftl::prefetch_index`] had time to bring the index slot in).
    #[inline]
    pub fn prefetch_duplicate(&self, content: ContentId) {
        if let Some(e) = self.index.peek(content) {
            if let Some(ent) = self.entries.get(e.wrapping_sub(1) as usize) {
                prefetch(ent);
            }
        }
    }

    /// Hints the CPU to fetch copy `e`'s entry (a dedup engine's candidate,
    /// about to be checked with [`Ftl::entry_live`]).
    #[inline]
    pub fn prefetch_copy(&self, e: EntryId) {
        if let Some(ent) = self.entries.get(e as usize) {
            prefetch(ent);
        }
    }

    /// Sizes the fingerprint index for content ids below `contents` up
    /// front (it still grows on demand beyond), so that it is one
    /// huge-page-advised allocation instead of a series of doublings; past
    /// the device's dense limit it becomes a hash map of the indexed
    /// contents ([`index::ContentTable`]).
    pub fn reserve_index(&mut self, contents: u32) {
        self.index.reserve(contents);
    }

    /// Whether the fingerprint index is a hash map (the content ids
    /// reached the device's dense limit, [`index::dense_limit`]).
    pub fn index_hashed(&self) -> bool {
        self.index.is_hashed()
    }

    /// The entry an LPN maps to, if any. A flat map ([`Ftl::map_flat`])
    /// maps no LPN to an entry: `None` always; ask [`Ftl::page_of`] and
    /// [`Ftl::content_at`] there.
    #[inline]
    pub fn lookup(&self, lpn: Lpn) -> Option<EntryId> {
        if self.flat {
            return None;
        }
        // Beyond the logical capacity nothing is mapped (an explicit hint
        // may name such a page; the loaders refuse it, this is the backstop).
        match self.l2p.get(lpn.0 as usize) {
            None | Some(0) => None,
            Some(&e) => Some(e - 1),
        }
    }

    #[inline]
    pub fn entry(&self, e: EntryId) -> &Entry {
        &self.entries[e as usize]
    }

    /// The entry `e` if it is held: a live copy ([`Ftl::entry_live`]) or a
    /// copy still waiting for its page ([`Ftl::reserve`], whose `ppn` is
    /// [`Ftl::is_unplaced`]). Without dynamic allocation the same as `entry_live`.
    #[inline]
    pub fn entry_held(&self, e: EntryId) -> Option<&Entry> {
        self.entries.get(e as usize).filter(|ent| ent.refs > 0)
    }

    /// The entry `e` if it is a live copy (some LPN maps to it; not a copy
    /// still waiting for its page, [`Ftl::reserve`]).
    #[inline]
    pub fn entry_live(&self, e: EntryId) -> Option<&Entry> {
        self.entries.get(e as usize).filter(|ent| ent.refs > 0 && !self.is_unplaced(ent.ppn))
    }

    /// Starts logging every freed copy (content, entry), for a dedup engine
    /// that must forget its fingerprints ([`Ftl::take_freed`]).
    pub fn track_freed(&mut self) {
        self.track_freed = true;
    }

    /// The copies freed since the last call, in order.
    pub fn take_freed(&mut self, out: &mut Vec<(ContentId, EntryId)>) {
        out.append(&mut self.freed);
    }

    /// Starts logging every dropped reference that leaves its copy live
    /// (content, entry): an LPN overwritten or trimmed away from a shared
    /// copy, for an engine that keeps reference counts of its own
    /// ([`Ftl::take_derefs`]). The last reference's drop is a free instead.
    pub fn track_derefs(&mut self) {
        self.track_derefs = true;
    }

    /// The dropped references since the last call, in order.
    pub fn take_derefs(&mut self, out: &mut Vec<(ContentId, EntryId)>) {
        out.append(&mut self.derefs);
    }

    /// Whether dropped references are waiting in the log.
    #[inline]
    pub fn has_derefs(&self) -> bool {
        !self.derefs.is_empty()
    }

    /// Whether freed copies are waiting in the log.
    #[inline]
    pub fn has_freed(&self) -> bool {
        !self.freed.is_empty()
    }

    /// The primary copy of `content` in the fingerprint index, if any.
    #[inline]
    pub fn find_duplicate(&self, content: ContentId) -> Option<EntryId> {
        match self.index.get(content) {
            0 => None,
            e => Some(e - 1),
        }
    }

    /// Adds a reference to `e` without mapping it yet (pins it so that
    /// unmapping other LPNs of the same request cannot free it).
    #[inline]
    pub fn pin(&mut self, e: EntryId) {
        self.entries[e as usize].refs += 1;
    }

    /// Maps `lpn` to `e`, consuming a reference taken with [`Ftl::pin`], and
    /// drops the LPN's previous mapping.
    #[inline]
    pub fn map_pinned(&mut self, lpn: Lpn, e: EntryId) {
        self.deferred.now(lpn);
        if self.flat {
            self.map_pending(lpn, e);
            return;
        }
        debug_assert!(self.is_placed(e), "entry {e} has no page yet: map it when placed");
        self.remap(lpn, e);
    }

    /// [`Ftl::map_pinned`] without the bookkeeping of waiting maps.
    #[inline]
    fn remap(&mut self, lpn: Lpn, e: EntryId) {
        let old = std::mem::replace(&mut self.l2p[lpn.0 as usize], e + 1);
        if old != 0 {
            self.release(old - 1);
        }
    }

    /// Removes the LPN's mapping (TRIM / overwrite).
    pub fn unmap(&mut self, lpn: Lpn) {
        self.deferred.now(lpn);
        let old = std::mem::replace(&mut self.l2p[lpn.0 as usize], 0);
        if self.flat {
            self.unmap_flat(lpn, old);
        } else if old != 0 {
            self.release(old - 1);
        }
    }

    #[inline]
    fn release(&mut self, e: EntryId) {
        let ent = &mut self.entries[e as usize];
        ent.refs -= 1;
        if ent.refs > 0 && self.track_derefs {
            self.derefs.push((ent.content, e));
        }
        if ent.refs == 0 {
            let ent = *ent;
            debug_assert!(!self.is_unplaced(ent.ppn), "entry {e} freed before it was placed");
            self.p2e.clear(ent.ppn);
            let b = self.geo.block_of(ent.ppn) as usize;
            // Wrapping: an active block's count excludes its programmed pages.
            self.blocks[b].valid = self.blocks[b].valid.wrapping_sub(1);
            if !self.plane_live.is_empty() {
                self.plane_live[self.geo.plane_of_block(b as u32) as usize] -= 1;
            }
            if self.index.clear_if(ent.content, e + 1) {
                self.indexed -= 1;
            }
            self.free_entries.push(e);
            self.live_entries -= 1;
            if self.track_freed {
                self.freed.push((ent.content, e));
            }
        }
    }

    /// Programs a new physical copy of `content` in `unit` and returns its
    /// (pinned, refs = 1) entry; map it with [`Ftl::map_pinned`] (a flat
    /// map returns [`FLAT_COPY`] instead: map it before the next
    /// program). When
    /// `index` is true and the content has no primary copy yet, the new copy
    /// becomes the fingerprint index's primary. Also returns GC work if the
    /// plane fell below its free-block threshold.
    pub fn program(
        &mut self,
        unit: u32,
        content: ContentId,
        index: bool,
    ) -> Result<(EntryId, Ppn, Option<GcWork>), FtlError> {
        let planes = self.geo.unit_planes(unit);
        let ptr = &mut self.unit_ptr[unit as usize];
        let plane = planes[*ptr as usize];
        // Kept reduced (no division per page): the plane sequence of a
        // counter taken modulo the unit's plane count.
        *ptr = if *ptr as usize + 1 == planes.len() { 0 } else { *ptr + 1 };
        self.program_in_plane(plane, content, index)
    }

    /// Like [`Ftl::program`], in global plane `plane` chosen by the caller
    /// (static allocation, `allocation = "static:ORDER"`); the unit's plane
    /// pointer does not move.
    #[inline]
    pub fn program_in_plane(
        &mut self,
        plane: u32,
        content: ContentId,
        index: bool,
    ) -> Result<(EntryId, Ppn, Option<GcWork>), FtlError> {
        let ppn = self.alloc_page(plane)?;
        if self.flat {
            return self.program_flat(plane, ppn, content);
        }
        let e = match self.free_entries.pop() {
            Some(e) => {
                self.entries[e as usize] = Entry { ppn, refs: 1, content };
                e
            }
            None => {
                self.entries.push(Entry { ppn, refs: 1, content });
                (self.entries.len() - 1) as u32
            }
        };
        self.live_entries += 1;
        self.p2e.set(ppn, e + 1);
        if index {
            self.index_copy(content, e);
        }
        let gc = self.gc_after_program(plane)?;
        Ok((e, ppn, gc))
    }

    /// Makes `e` the fingerprint index's primary copy of `content` if it
    /// has none.
    #[inline]
    fn index_copy(&mut self, content: ContentId, e: EntryId) {
        if self.index.set_if_empty(content, e + 1) {
            self.indexed += 1;
        }
    }

    /// The GC a page programmed into `plane` triggers, if its free blocks
    /// fell below the threshold.
    #[inline]
    fn gc_after_program(&mut self, plane: u32) -> Result<Option<GcWork>, FtlError> {
        if (self.planes[plane as usize].free.len()) < self.min_free {
            self.collect_triggered(plane)
        } else {
            Ok(None)
        }
    }

    /// Keeps a live-page count per plane from now on (counted from the
    /// blocks' valid pages), so that [`Ftl::unit_has_room`] is O(1).
    /// A device that holds no live entry (the simulator asks before
    /// preconditioning) has every count at zero, found without visiting
    /// its blocks.
    pub fn track_plane_live(&mut self) {
        let planes = self.planes.len() as u32;
        self.plane_live = if self.live_entries == 0 {
            vec![0; planes as usize]
        } else {
            (0..planes).map(|p| self.plane_valid(p) as u32).collect()
        };
    }

    /// Whether the plane that the next page programmed on `unit` goes to
    /// holds few enough live pages that its GC can always reclaim space:
    /// at most `(blocks_per_plane - gc.min_free_blocks - 1) x
    /// pages_per_block` (one block fewer while the plane has a relocation
    /// block open, [`Ftl::relocate_to_block`]), so that its closed blocks keep at least a block's
    /// worth of invalid pages when it collects. A placement that piles
    /// live data on one unit (hints) is redirected by the simulator when
    /// this is false, as a drive allocates elsewhere when the hinted die
    /// is full. Always true unless [`Ftl::track_plane_live`] was called.
    pub fn unit_has_room(&self, unit: u32) -> bool {
        self.plane_has_room(self.geo.unit_planes(unit)[self.unit_ptr[unit as usize] as usize])
    }

    /// Whether plane `plane` holds few enough live pages that its GC can
    /// always reclaim space ([`Ftl::unit_has_room`]'s rule for one plane;
    /// dynamic allocation asks it of the planes of the chip a channel
    /// serves). Always true unless [`Ftl::track_plane_live`] was called.
    #[inline]
    pub fn plane_has_room(&self, plane: u32) -> bool {
        if self.plane_live.is_empty() {
            return true;
        }
        let bpp = self.geo.blocks_per_plane;
        // The active block, and the relocation block when one is open.
        let open = 1 + u32::from(self.reloc.open(plane).is_some());
        let limit = bpp.saturating_sub(self.min_free + open) * self.geo.pages_per_block;
        self.plane_live[plane as usize] < limit
    }

    /// Takes the next page of the plane's active block (opening a new block
    /// when it is full) and marks it valid.
    #[inline]
    fn alloc_page(&mut self, plane: u32) -> Result<Ppn, FtlError> {
        let ppb = self.geo.pages_per_block;
        let pl = &mut self.planes[plane as usize];
        if pl.written == ppb {
            match pl.free.pop() {
                Some(nb) => {
                    // The full block's counts go back to its metadata.
                    let old = &mut self.blocks[pl.active as usize];
                    old.written = ppb as u16;
                    old.valid = old.valid.wrapping_add(pl.programmed);
                    pl.active = nb;
                    pl.written = u32::from(self.blocks[nb as usize].written);
                    pl.programmed = 0;
                }
                None => {
                    return Err(self.full_error(plane));
                }
            }
        }
        let (b, w) = (pl.active, pl.written);
        pl.written = w + 1;
        pl.programmed += 1;
        let ppn = Ppn(b * ppb + w);
        if let Some(l) = self.plane_live.get_mut(plane as usize) {
            *l += 1;
        }
        Ok(ppn)
    }

    /// Block `b`'s metadata with its plane's counts of an active block
    /// added in (see `Plane::written`).
    fn block_meta(&self, b: u32) -> BlockMeta {
        let mut m = self.blocks[b as usize];
        let pl = &self.planes[self.geo.plane_of_block(b) as usize];
        if pl.active == b {
            m.written = pl.written as u16;
            m.valid = m.valid.wrapping_add(pl.programmed);
        }
        m
    }

    /// Valid pages in plane `plane`'s blocks.
    fn plane_valid(&self, plane: u32) -> u64 {
        let first = plane * self.geo.blocks_per_plane;
        (first..first + self.geo.blocks_per_plane).map(|b| u64::from(self.block_meta(b).valid)).sum()
    }

    fn full_error(&self, plane: u32) -> FtlError {
        let bpp = self.geo.blocks_per_plane;
        let live = self.plane_valid(plane);
        FtlError::DeviceFull { plane, live, blocks: bpp }
    }

    /// Live physical copies (valid pages).
    pub fn live_pages(&self) -> u64 {
        self.live_entries
    }

    /// Pages GC has migrated that were shared by several LPNs (reference
    /// count above 1 when moved), since the FTL was created.
    pub fn gc_moved_shared(&self) -> u64 {
        self.gc_moved_shared
    }

    /// Fingerprint-index entries (contents with a primary copy).
    pub fn indexed_contents(&self) -> u64 {
        self.indexed
    }

    /// Bytes the mapping structures would take on a device: 4 B per L2P
    /// entry in use, 12 B per live copy (PPN, refcount, content slot), and
    /// 16 + 4 B per fingerprint-index entry (128-bit fingerprint + entry).
    /// A model of CAFTL's tables on the device, the same under a flat map
    /// ([`Ftl::map_flat`]: what the simulator stores is not what it reports).
    pub fn metadata_bytes(&self) -> (u64, u64) {
        let mapping = self.logical_pages as u64 * 4 + self.live_entries * 12;
        let index = self.indexed * 20;
        (mapping, index)
    }

    /// Erase count of every block (for the wear distribution).
    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().map(|b| b.erase_count)
    }
}

#[cfg(test)]
mod tests;
