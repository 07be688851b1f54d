//! Light-Dedup (Qiu et al., USENIX ATC'23) as a dedup engine inside an SSD
//! controller: a non-cryptographic fingerprint plus a verify read of every
//! candidate (LRBI, §4.2-4.3), trust-degree hints that let a write skip the
//! fingerprint and read its candidate speculatively (§4.3.2), and the
//! Light-Meta-Table (LMT, §4.4) of 32-byte entries whose pages are read and
//! programmed on flash.
//!
//! Light-Dedup is an NVM file system (NOVA on Optane DCPMM). Where the
//! paper is NVM- or file-system-specific or silent, the choices below hold;
//! docs/engines.md has the same table in short.
//!
//! # Identification (§4.2)
//!
//! * The fingerprint is a 64-bit xxHash of the block (§4.4: "8 bytes xxHash");
//!   content ids stand for bytes, so it is a fixed 64-bit mix of the content
//!   id and two different contents never share one by themselves. Its cost
//!   is `hash_us` per page, default 0.31 µs (Table 1: xxHash of a 4 KiB block
//!   takes 309.9 ns), on the controller's hash engines (`dedup.hash_engines`).
//! * The in-DRAM index is the paper's *rhashtable*: fingerprint -> LMT entry,
//!   unbounded, looked up at no cost (§4.1: "in-DRAM hash table indexing is
//!   commonly efficient"; §6: < 1% of the data size in DRAM).
//! * A candidate is verified by reading the stored page (a timed
//!   [`FlashOp::DataRead`] on its chip, gating: the decision waits for it)
//!   and comparing. Equal bytes: a duplicate. Different bytes (a hash
//!   collision): the page is written as a *non-dedup* page with no LMT entry
//!   (§4.2), so later lookups never find it.
//! * Collisions are modelled: a lookup of a content with no stored copy
//!   collides, with probability `collision_probability` (default 0; draws
//!   are a fixed mix of `seed` and a counter, so runs are deterministic),
//!   with a live entry chosen by the same draw; its page is read and
//!   the comparison fails (`engine_failed_verifies`).
//! * Under `dedupsim serve` the index key is the hash of the page's real
//!   bytes ([`WritePage::fingerprint`]), and the comparison is of the real
//!   bytes (their content ids): a weak hash (`--hash tiny:BITS`) makes real
//!   collisions, caught by the verify read (`engine_real_collisions`, also
//!   counted in `engine_failed_verifies`).
//! * Reading the candidate's entry (its block number, §4.4) is a metadata
//!   access (below). The simulator's [`When`] has no "after that operation":
//!   a missed entry read and the verify read are issued at the same time,
//!   so a region miss adds max(meta, data) read time, not their sum.
//!
//! # Hints and trust degrees (§4.3.2)
//!
//! * Every LMT entry has a hint: the entry expected to follow it and a
//!   3-bit trust degree. After each page is deduplicated (or written), the
//!   hint of the stream's previous entry is checked against the page's
//!   entry: correct +1 (at most 7), wrong −2; a hint that falls below 0 is
//!   replaced by the entry actually seen, with trust 4; an entry without a
//!   hint gets one (trust 4). A hint is *followed* only at trust ≥
//!   `threshold` (4) and when the stream's trust is at its maximum
//!   `stream_trust` (7); the stream trust moves with the entries' (+1/−2,
//!   within 0..=`stream_trust`). `trust = false` removes trust degrees: every
//!   hint is followed and a wrong one is replaced at once (the paper's
//!   "removing trust degree", 98.6% vs 60.0% hit rate on WebVMs).
//! * A *stream* is per CPU in the paper ("per-CPU stream trust degree",
//!   §4.3.2: the previous entry and the stream trust are the CPU's). A
//!   block device sees no CPUs; the closest writer identity it has is the
//!   request's stream ([`crate::workload::Request::stream`]: a trace's
//!   (volume, process), `serve`'s client connection, a `streams=N`
//!   workload's writer). `per_stream = true` (default) keeps the previous
//!   entry and the stream trust per stream; `false` keeps one device-wide
//!   stream in arrival order (interleaved writers then break each other's
//!   chains). Hints themselves live in the entries and are shared, as in
//!   the paper. A page that gets no entry (a non-dedup page) ends the chain
//!   (the next page has no prediction).
//!
//! # Prefetch variants (§4.3, Figure 4; `prefetch`)
//!
//! * `sp` (Speculation, the paper's base design and the default): a page
//!   whose prediction is followed skips the fingerprint and the index
//!   ("skip the fingerprint calculations and indexing": `hashed = false`)
//!   and reads the predicted entry's page at the request's arrival
//!   ([`When::Arrival`]) instead of after the hash. If the bytes differ, the
//!   read was wasted (`engine_wasted_speculative_reads`) and the page is
//!   hashed and looked up normally; as above, the wasted read and the
//!   normal path overlap in time instead of following each other.
//! * `pc` (Prefetch-Current): the same read at arrival, but the page is
//!   hashed and looked up anyway; a right prediction saves the verify read
//!   after the hash, not the hash.
//! * `pn` (Prefetch-Next): `sp`, and after each write the block that the
//!   stream's last entry's hint predicts (when it would be followed) is
//!   read behind the write (non-gating), so the stream's next write finds
//!   its first page's candidate already read (`engine_read_ahead`,
//!   `_used`). Within a write every followed page is read at arrival
//!   already (the controller has the whole write), so PN differs from SP
//!   only across writes. The read-ahead is assumed complete by the next
//!   write of the stream. PN+Transition (CBP, a thread-count switch) is a
//!   concurrency control of the host CPUs and is not modelled.
//! * `ibp` (In-Block Prefetch, §4.3.1) loads a block's 64 B cache lines in
//!   parallel; a flash read moves the 4 KiB page at once, so it times as
//!   `none` (LD-w/o-P: no read before the hash).
//!
//! # LMT on flash (§3.3, §4.4)
//!
//! * Entries are 32 B (blocknr, fp, refcnt, hint). `layout = "region"`:
//!   regions are 4 KiB metadata pages of 127 entries plus the 8-byte link
//!   (§4.4); entries are allocated at the lowest free slot of the *Cur
//!   Region*; a full Cur Region is evicted and the next comes from the
//!   *Region Queue*, else a new region is appended. A region is allocatable
//!   when at least 64 of its entries are free (the paper's "no more than
//!   half used, 4 KiB/32 B/2 = 64"); a deletion that leaves exactly 64 free
//!   puts the region back in the queue; regions are never returned.
//!   `layout = "entry"` (NV-Dedup/LO-Dedup, §3.3): 128 entries per page
//!   allocated from a LIFO free list of freed entries, else from the end
//!   (fresh: sequential; aged: scattered).
//! * The reverse map (block -> entry, 8 B per stored block, §4.2) is a
//!   table of 512 entries per metadata page indexed by the FTL's copy id
//!   (the block number of an SSD with a remapping FTL); written when an
//!   entry is created, read and written when it is deleted.
//! * A write-back cache of `region_cache` metadata pages (LMT regions and
//!   reverse-map pages; default 64 pages = 256 KiB of controller DRAM, LRU)
//!   stands for what the NVM's on-DIMM read/write-combining buffers do in
//!   the paper: it is what lets the region layout's locality pay off. An
//!   access to a page not cached reads it ([`FlashOp::MetaRead`]; gating
//!   for the entry a duplicate's decision needs, behind the request for an
//!   allocation's read-modify-write or a deletion) unless the page has
//!   never been programmed; evicting a dirty page programs it
//!   ([`FlashOp::MetaProgram`], behind the request). Metadata pages are
//!   numbered in the engine's metadata area (striped over the chips by
//!   [`super::metadata_chip`]). Dirty pages left in the cache at the end are
//!   not flushed (`engine_dirty_cached`).
//! * Per entry access: a duplicate reads its entry and increments the
//!   refcount (write); a new page allocates an entry (write); a hint update
//!   writes the previous entry. A freed copy (`forget`) clears its entry
//!   (region write) and its reverse-map slot; these operations are issued
//!   behind the next write. A sharer's overwrite or trim that leaves the
//!   copy live (§4.2's reference-count decrement) reads the reverse map's
//!   page and writes the entry's page, also behind the next write
//!   (`engine_refcount_decrements`; the FTL reports each dropped reference,
//!   [`Engine::dereferenced`]).
//! * The in-DRAM rhashtable's size is counted at [`INDEX_BYTES`] per
//!   fingerprint (§6's measurement): `engine_index_bytes` (at the end) and
//!   `engine_index_peak_bytes`.
//! * Metadata amplification (Table 2, Table 4): metadata bytes read and
//!   programmed (4 KiB per page operation) per written page (every page of
//!   every write), over the ideal 40 B (32 B entry + 8 B reverse map, §3.3).
//!   On flash a miss costs a 4 KiB page (128 entries) where Optane's costs a
//!   256 B XPLine (8 entries): absolute amplifications are not comparable
//!   to the paper's, only the ordering of the layouts is.
//!
//! # Other statistics
//!
//! `engine_dup_run_*`: the duplicate pages (found by the engine, in-write
//! repeats included) by the length of the run of consecutive duplicate
//! pages they belong to, a run continuing across writes while each page's
//! LPN follows the previous page's (Fig. 8's "duplication continuousness",
//! over the device's write sequence).
//!
//! `warm_start = true` (default): preconditioned data has LMT entries (the
//! device ran Light-Dedup before), allocated in preload order with hints
//! chained in that order, all on flash, cache cold.

use super::fastmap::FastLru;
use super::fptable::FpTable;
use super::{
    is_live_copy, mix64, params, Engine, EngineContext, EngineError, EngineIo, FlashOp, Verdict, When, WriteOp,
    WritePage,
};
use crate::ftl::{EntryId, Ftl};
use crate::params::unit_keys::UnitKey;
use crate::units::{ContentId, Nanos, Ppn};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Bytes of one LMT entry (§4.4).
pub const ENTRY_BYTES: u64 = 32;
/// Bytes of one reverse-map entry (§4.2).
pub const RMAP_BYTES: u64 = 8;
/// The ideal metadata bytes per written block (§3.3).
pub const IDEAL_BYTES: u64 = ENTRY_BYTES + RMAP_BYTES;

/// DRAM per fingerprint in the rhashtable index: §6 measured 1.26 GiB for
/// 128 GiB of unique 4 KiB blocks (40.3 B each; 40.6-41.4 B at 25-75%
/// duplicates).
pub const INDEX_BYTES: u64 = 40;
/// Entries per region: 4 KiB minus the 8-byte link, in 32-byte entries.
pub const REGION_ENTRIES: u32 = 127;
/// Free entries that make a region allocatable (§4.4: 4 KiB/32 B/2).
pub const HALF: u32 = 64;
/// Entries per metadata page in the entry-based layout (no links).
pub const PAGE_ENTRIES: u32 = 128;
/// Reverse-map entries per metadata page.
pub const RMAP_PER_PAGE: u64 = 512;
/// Trust degree of a new hint.
pub const NEW_TRUST: u8 = 4;
/// Maximum trust degree (3 bits).
pub const MAX_TRUST: u8 = 7;

const NIL: u32 = u32::MAX;
/// Metadata page numbers: LMT pages from 0, reverse-map pages from here.
const RMAP_BASE: u64 = 1 << 40;

/// [`Access::page`] of the deletions and decrements applied before a
/// write's first page.
pub const BEFORE: u32 = u32::MAX;

/// What an [`Access`] touches: a stored block, an LMT entry (its byte
/// offset in the LMT, [`LightDedup::entry_offset`]) or a reverse-map slot
/// (its byte offset in the reverse map: 8 B per block, §4.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Data(Ppn),
    Entry(u64),
    Rmap(u64),
}

/// Why the engine made an [`Access`] (the decision it charges).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// The candidate found by fingerprint: its entry, then its block (§4.2).
    Verify,
    /// A followed hint's entry and block, read before the hash (§4.3.2).
    Speculative,
    /// PN's read of the next write's predicted entry and block.
    ReadAhead,
    /// The duplicate's reference count + 1.
    Refcount,
    /// A new entry.
    Alloc,
    /// The stream's previous entry's hint.
    Hint,
    /// A new block's reverse-map slot.
    Rmap,
    /// A freed block's entry and reverse-map slot.
    Delete,
    /// A shared block's reference count − 1 (located by the reverse map).
    Deref,
}

/// One data or metadata access of the engine, in the order it makes them,
/// recorded for a byte-addressed medium ([`LightDedup::record_accesses`]):
/// the persistent-memory write path (`crate::nvmfs`) charges these
/// instead of [`EngineIo::ops`], which count whole flash pages.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The write's page it belongs to, or [`BEFORE`].
    pub page: u32,
    pub target: Target,
    pub write: bool,
    /// The page's decision waits for it (a read).
    pub gates: bool,
    pub when: When,
    pub why: Why,
}

/// The unit-bearing parameters and their old bare-number names
/// ([`crate::params::unit_keys`]): `hash = "0.31us"` is `hash_us = 0.31`.
pub const UNIT_KEYS: &[UnitKey] = &[
    UnitKey::time("hash", "hash_us", crate::background::MAX_HASH_TIME_NS as u64, 1e3, "µs"),
    UnitKey::time("index_lookup", "index_lookup_us", crate::background::MAX_HASH_TIME_NS as u64, 1e3, "µs"),
];

/// The LMT layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Light-Dedup's region-based layout (§4.4).
    Region,
    /// Free-list entry allocation (NV-Dedup, LO-Dedup; §3.3).
    Entry,
}

/// Which prefetch variant of §4.3 runs (`prefetch`); Figure 4's time
/// sequences translated to the controller (module doc, "Prefetch
/// variants").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prefetch {
    /// No speculative prefetch (the paper's LD-w/o-P, "NP"): every page is
    /// hashed and looked up, its candidate read after that.
    None,
    /// In-Block Prefetch (§4.3.1): loads a block's cache lines in parallel.
    /// A flash page read already moves the whole 4 KiB block at once, so on
    /// the SSD it times exactly as `none`.
    Ibp,
    /// Prefetch-Current (§4.3.2, Fig. 4b): a followed hint's block is read
    /// at arrival, while the page is still hashed and looked up.
    Pc,
    /// Speculation (§4.3.2, Fig. 4c; the paper's chosen base, default): a
    /// followed hint's block is read at arrival and the hash and index
    /// lookup are skipped.
    Sp,
    /// Prefetch-Next (§4.3.2, Fig. 4d): SP, and after each write the block
    /// its stream's last hint predicts for the stream's *next* write is read
    /// ahead (behind the write), so that write's first page finds it read.
    Pn,
}

impl Prefetch {
    /// Name as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Prefetch::None => "none",
            Prefetch::Ibp => "ibp",
            Prefetch::Pc => "pc",
            Prefetch::Sp => "sp",
            Prefetch::Pn => "pn",
        }
    }

    /// Whether a followed hint's block is read before the page's hash.
    fn reads_ahead(self) -> bool {
        matches!(self, Prefetch::Pc | Prefetch::Sp | Prefetch::Pn)
    }

    /// Whether a right read-ahead skips the hash and the index lookup.
    fn skips_hash(self) -> bool {
        matches!(self, Prefetch::Sp | Prefetch::Pn)
    }
}

/// `[engine.light-dedup]` parameters.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LightDedupParams {
    /// xxHash time per page, µs (Table 1: 309.9 ns for 4 KiB).
    pub hash_us: f64,
    /// rhashtable lookup time per fingerprinted page, µs. Not in the paper
    /// (§4.1 only says in-DRAM hash indexing "usually achieves constant
    /// access time"); 0.1 µs stands for two dependent DRAM misses (the
    /// bucket, then the chained object). Pages whose hash a followed hint
    /// skips skip the lookup too (§4.3).
    pub index_lookup_us: f64,
    /// Probability that a lookup of a content with no stored copy matches
    /// another entry's fingerprint (a collision the verify read catches).
    pub collision_probability: f64,
    /// Seed of the collision draws.
    pub seed: u64,
    /// Trust degrees on (§4.3.2); off = follow every hint.
    pub trust: bool,
    /// Trust degree at which a hint is followed.
    pub threshold: u8,
    /// Maximum (and required) stream trust.
    pub stream_trust: u8,
    /// Followed hints read the candidate at arrival and skip the hash;
    /// `false` is `prefetch = "none"` (kept for old configurations).
    pub speculative: bool,
    /// The prefetch variant (§4.3.2): `sp` (default), `pc`, `pn`, `ibp`,
    /// `none`.
    pub prefetch: Prefetch,
    /// Prediction state (previous entry, stream trust) per writer stream
    /// ([`crate::workload::Request::stream`]), as the paper keeps it per
    /// CPU; `false`: one device-wide stream in arrival order.
    pub per_stream: bool,
    pub layout: Layout,
    /// Metadata pages cached in controller DRAM (write-back, LRU).
    pub region_cache: u32,
    /// Preconditioned data starts with LMT entries.
    pub warm_start: bool,
}

impl Default for LightDedupParams {
    fn default() -> Self {
        LightDedupParams {
            hash_us: 0.31,
            index_lookup_us: 0.1,
            collision_probability: 0.0,
            seed: 0,
            trust: true,
            threshold: NEW_TRUST,
            stream_trust: MAX_TRUST,
            speculative: true,
            prefetch: Prefetch::Sp,
            per_stream: true,
            layout: Layout::Region,
            region_cache: 64,
            warm_start: true,
        }
    }
}

/// A hint: the entry expected next and its trust degree (§4.4: 61 + 3 bits).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    pub next: u32,
    pub trust: u8,
}

impl Hint {
    pub const NONE: Hint = Hint { next: NIL, trust: 0 };

    pub fn is_some(&self) -> bool {
        self.next != NIL
    }

    /// Whether the hint is followed (trust degrees on).
    pub fn trusted(&self, threshold: u8) -> bool {
        self.is_some() && self.trust >= threshold
    }

    /// Checks the hint against the entry actually seen (`None`: a page
    /// without entry) and updates it; returns whether it predicted right
    /// (`None` if there was no hint). Without trust degrees a wrong hint
    /// is replaced at once.
    pub fn update(&mut self, actual: Option<u32>, trust: bool) -> Option<bool> {
        let actual = actual.unwrap_or(NIL);
        if !self.is_some() {
            if actual != NIL {
                *self = Hint { next: actual, trust: NEW_TRUST };
            }
            return None;
        }
        if self.next == actual {
            self.trust = (self.trust + 1).min(MAX_TRUST);
            return Some(true);
        }
        if !trust || self.trust < 2 {
            // Below 0 (or no trust degrees): replaced by what was seen.
            *self = if actual == NIL { Hint::NONE } else { Hint { next: actual, trust: NEW_TRUST } };
        } else {
            self.trust -= 2;
        }
        Some(false)
    }
}

/// One LMT entry.
#[derive(Copy, Clone, Debug)]
struct Slot {
    content: ContentId,
    /// Its index key (the mixed fingerprint of its bytes).
    fp: u64,
    /// The FTL copy (blocknr); NIL while free or not yet bound.
    entry: EntryId,
    used: bool,
    hint: Hint,
}

const FREE_SLOT: Slot = Slot { content: ContentId(0), fp: 0, entry: NIL, used: false, hint: Hint::NONE };

/// One region of the region-based layout.
#[derive(Copy, Clone, Debug, Default)]
struct Region {
    /// Bit i: entry i used.
    bits: u128,
    used: u32,
    queued: bool,
}

/// LMT entry allocation (§4.4 and the entry-based baseline).
#[derive(Clone, Debug)]
pub struct Allocator {
    layout: Layout,
    regions: Vec<Region>,
    cur: Option<u32>,
    queue: VecDeque<u32>,
    free: Vec<u32>,
    high: u32,
}

impl Allocator {
    pub fn new(layout: Layout) -> Self {
        Allocator { layout, regions: Vec::new(), cur: None, queue: VecDeque::new(), free: Vec::new(), high: 0 }
    }

    /// Entries per metadata page.
    pub fn per_page(&self) -> u32 {
        match self.layout {
            Layout::Region => REGION_ENTRIES,
            Layout::Entry => PAGE_ENTRIES,
        }
    }

    /// The metadata page of entry `slot`.
    pub fn page_of(&self, slot: u32) -> u64 {
        u64::from(slot / self.per_page())
    }

    /// Regions (metadata pages) ever allocated.
    pub fn regions(&self) -> u64 {
        match self.layout {
            Layout::Region => self.regions.len() as u64,
            Layout::Entry => u64::from(self.high.div_ceil(PAGE_ENTRIES)),
        }
    }

    /// Regions waiting in the Region Queue.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The current region.
    pub fn cur(&self) -> Option<u32> {
        self.cur
    }

    /// Used entries of region `r`.
    pub fn used_in(&self, r: u32) -> u32 {
        self.regions.get(r as usize).map_or(0, |g| g.used)
    }

    /// Allocates an entry.
    pub fn alloc(&mut self) -> u32 {
        match self.layout {
            Layout::Entry => self.free.pop().unwrap_or_else(|| {
                self.high += 1;
                self.high - 1
            }),
            Layout::Region => loop {
                if let Some(c) = self.cur {
                    let g = &mut self.regions[c as usize];
                    if g.used < REGION_ENTRIES {
                        let i = (!g.bits).trailing_zeros();
                        g.bits |= 1u128 << i;
                        g.used += 1;
                        return c * REGION_ENTRIES + i;
                    }
                    // Full: evict the Cur Region.
                    self.cur = None;
                }
                let next = match self.queue.pop_front() {
                    Some(r) => {
                        self.regions[r as usize].queued = false;
                        r
                    }
                    None => {
                        self.regions.push(Region::default());
                        (self.regions.len() - 1) as u32
                    }
                };
                self.cur = Some(next);
            },
        }
    }

    /// Frees entry `slot`.
    pub fn free(&mut self, slot: u32) {
        match self.layout {
            Layout::Entry => self.free.push(slot),
            Layout::Region => {
                let r = slot / REGION_ENTRIES;
                let g = &mut self.regions[r as usize];
                let bit = 1u128 << (slot % REGION_ENTRIES);
                debug_assert!(g.bits & bit != 0);
                g.bits &= !bit;
                g.used -= 1;
                if REGION_ENTRIES - g.used == HALF && !g.queued && self.cur != Some(r) {
                    g.queued = true;
                    self.queue.push_back(r);
                }
            }
        }
    }
}

/// Each FTL copy's LMT entry, indexed by the copy's id (ids are dense and
/// reused: a vector, not a hash map).
#[derive(Clone, Debug, Default)]
struct EntrySlots {
    slot: Vec<u32>,
    len: usize,
}

impl EntrySlots {
    #[inline]
    fn get(&self, e: &EntryId) -> Option<&u32> {
        self.slot.get(*e as usize).filter(|&&s| s != NIL)
    }

    /// Binds copy `e` to entry `s`, returning its previous entry.
    fn insert(&mut self, e: EntryId, s: u32) -> Option<u32> {
        let i = e as usize;
        if i >= self.slot.len() {
            self.slot.resize(i + 1, NIL);
        }
        let old = std::mem::replace(&mut self.slot[i], s);
        if old == NIL {
            self.len += 1;
            None
        } else {
            Some(old)
        }
    }

    fn remove(&mut self, e: &EntryId) {
        if let Some(x) = self.slot.get_mut(*e as usize) {
            if *x != NIL {
                *x = NIL;
                self.len -= 1;
            }
        }
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// A set of metadata page numbers as two bitmaps: LMT pages are dense from
/// 0, reverse-map pages dense from [`RMAP_BASE`]. A bit per page instead
/// of a hash set entry keeps the "ever programmed?" test of a cache miss
/// in a few cache lines (a speed choice; the same answers).
#[derive(Clone, Debug, Default)]
struct PageBits {
    lmt: Vec<u64>,
    rmap: Vec<u64>,
}

impl PageBits {
    fn split(&self, page: u64) -> (bool, usize) {
        if page >= RMAP_BASE {
            (true, (page - RMAP_BASE) as usize)
        } else {
            (false, page as usize)
        }
    }

    fn contains(&self, page: u64) -> bool {
        let (rmap, i) = self.split(page);
        let words = if rmap { &self.rmap } else { &self.lmt };
        words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    fn insert(&mut self, page: u64) {
        let (rmap, i) = self.split(page);
        let words = if rmap { &mut self.rmap } else { &mut self.lmt };
        if words.len() <= i / 64 {
            words.resize(i / 64 + 1, 0);
        }
        words[i / 64] |= 1 << (i % 64);
    }
}

/// Write-back LRU cache of metadata pages.
#[derive(Clone, Debug)]
struct MetaCache {
    cap: usize,
    /// Cached pages in LRU order, and whether each is dirty.
    pages: FastLru<u64, bool>,
    /// Pages ever programmed (or holding preloaded entries).
    on_flash: PageBits,
    reads: u64,
    programs: u64,
    /// Of which reverse-map pages.
    rmap_reads: u64,
    rmap_programs: u64,
}

impl MetaCache {
    fn new(cap: usize) -> Self {
        MetaCache {
            cap,
            pages: FastLru::default(),
            on_flash: PageBits::default(),
            reads: 0,
            programs: 0,
            rmap_reads: 0,
            rmap_programs: 0,
        }
    }

    /// Accesses `page`, adding the flash operations a miss and an eviction
    /// cost to `ops`.
    fn access(&mut self, page: u64, write: bool, gates: bool, when: When, ops: &mut Vec<WriteOp>) {
        if let Some(dirty) = self.pages.get_mut(&page) {
            *dirty |= write;
            return;
        }
        if self.on_flash.contains(page) {
            self.reads += 1;
            self.rmap_reads += u64::from(page >= RMAP_BASE);
            ops.push(WriteOp { when, op: FlashOp::MetaRead(page), gates });
        }
        self.pages.insert(page, write);
        while self.pages.len() > self.cap {
            let Some((victim, dirty)) = self.pages.pop_lru() else { break };
            if dirty {
                self.programs += 1;
                self.rmap_programs += u64::from(victim >= RMAP_BASE);
                self.on_flash.insert(victim);
                ops.push(WriteOp { when, op: FlashOp::MetaProgram(victim), gates: false });
            }
        }
    }

    fn dirty(&self) -> usize {
        self.pages.values().filter(|&&d| d).count()
    }
}

/// Counters reported as `engine_stats`.
#[derive(Clone, Debug, Default)]
struct Stats {
    pages: u64,
    hashed_pages: u64,
    skipped_hash: u64,
    predictions: u64,
    hint_hits: u64,
    followed: u64,
    followed_hits: u64,
    speculative_reads: u64,
    wasted_speculative: u64,
    verify_reads: u64,
    failed_verifies: u64,
    /// Failed verifies of an index hit: real fingerprint collisions (only
    /// with real bytes, `dedupsim serve`; a trace's ids never collide).
    real_collisions: u64,
    nodedup_pages: u64,
    dup_pages: u64,
    new_entries: u64,
    deleted_entries: u64,
    /// Reference-count decrements of a live shared block (§4.2).
    refcount_decrements: u64,
    /// Most fingerprints the in-DRAM index held at once.
    peak_index: u64,
    /// Duplicate pages by run length: 1, 2-4, 5-10, 11-100, > 100.
    runs: [u64; 5],
    /// PN: blocks read ahead behind a write, and of them used by the
    /// stream's next write.
    ahead_reads: u64,
    ahead_used: u64,
}

/// One writer stream's prediction state (§4.3.2: per CPU).
#[derive(Copy, Clone, Debug, Default)]
struct Stream {
    /// The stream's previous entry.
    last: Option<u32>,
    /// Its stream trust degree.
    trust: u8,
    /// PN: the entry whose block was read ahead for the stream's next write.
    ahead: Option<u32>,
}

/// Light-Dedup. See the module doc.
pub struct LightDedup {
    p: LightDedupParams,
    hash: Nanos,
    slots: Vec<Slot>,
    /// The in-DRAM fingerprint index (§4.1's rhashtable): fingerprint ->
    /// LMT entry.
    index: FpTable,
    /// Each FTL copy's LMT entry (the reverse map's content, §4.2).
    entry_slot: EntrySlots,
    alloc: Allocator,
    cache: MetaCache,
    /// Per writer stream (one when `per_stream` is off), grown on demand.
    streams: Vec<Stream>,
    /// The stream of the write being looked up.
    cur: usize,
    /// The effective prefetch variant (`speculative = false`: none).
    prefetch: Prefetch,
    draws: u64,
    /// Copies freed since the last lookup (applied with the FTL in view).
    freed: Vec<(ContentId, EntryId)>,
    /// References dropped from live copies, applied at the next lookup.
    derefs: Vec<(ContentId, EntryId)>,
    /// Per page of the current write: its entry (new ones bound in commit).
    cur_slots: Vec<Option<u32>>,
    new_slot: Vec<bool>,
    /// The open run of duplicate pages: length and the next LPN expected.
    run: u64,
    run_next: u32,
    stats: Stats,
    /// Every data and metadata access in order, with its byte address, when
    /// a byte-addressed medium charges them ([`LightDedup::record_accesses`]);
    /// `None` on the SSD.
    log: Option<Vec<Access>>,
    /// The page of the current write the accesses belong to ([`BEFORE`]:
    /// the deletions applied before its first page).
    log_page: u32,
}

impl LightDedup {
    pub fn build(ctx: &EngineContext) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(Self::new(params(ctx, "light-dedup", UNIT_KEYS)?)?))
    }

    /// The engine's tables at a full device ([`super::memory_estimate`]):
    /// per logical page an LMT slot and its two hash-map entries
    /// (fingerprint -> slot, copy -> slot; 16 B each with their share of
    /// the table).
    pub fn memory_estimate(ctx: &EngineContext) -> u64 {
        let per_page = std::mem::size_of::<Slot>() as u64 + 2 * 16;
        ctx.logical_pages.saturating_mul(per_page)
    }

    pub fn new(p: LightDedupParams) -> Result<Self, EngineError> {
        let bad = |reason: String| EngineError::Params { engine: "light-dedup".into(), reason };
        crate::background::check_time_param("hash_us", p.hash_us, "µs", 1e3, crate::background::MAX_HASH_TIME_NS)
            .map_err(bad)?;
        crate::background::check_time_param(
            "index_lookup_us",
            p.index_lookup_us,
            "µs",
            1e3,
            crate::background::MAX_HASH_TIME_NS,
        )
        .map_err(bad)?;
        if !(0.0..=1.0).contains(&p.collision_probability) {
            return Err(bad(format!("collision_probability = {}: must be in [0, 1]", p.collision_probability)));
        }
        if p.threshold > MAX_TRUST || !(1..=MAX_TRUST).contains(&p.stream_trust) {
            return Err(bad(format!(
                "threshold = {}, stream_trust = {}: must be in 0..=7 and 1..=7 (3-bit trust degrees)",
                p.threshold, p.stream_trust
            )));
        }
        if p.region_cache == 0 {
            return Err(bad("region_cache must be at least 1 page".into()));
        }
        if !p.speculative && p.prefetch.reads_ahead() && p.prefetch != Prefetch::Sp {
            return Err(bad(format!(
                "speculative = false (no prefetch) contradicts prefetch = \"{}\"; set only prefetch",
                p.prefetch.name()
            )));
        }
        Ok(LightDedup {
            // The lookup follows the hash on the same CPU: one serial cost.
            hash: Nanos((p.hash_us * 1e3).round() as u64 + (p.index_lookup_us * 1e3).round() as u64),
            slots: Vec::new(),
            index: FpTable::default(),
            entry_slot: EntrySlots::default(),
            alloc: Allocator::new(p.layout),
            cache: MetaCache::new(p.region_cache as usize),
            streams: vec![Stream::default()],
            cur: 0,
            prefetch: if p.speculative { p.prefetch } else { Prefetch::None },
            draws: 0,
            freed: Vec::new(),
            derefs: Vec::new(),
            cur_slots: Vec::new(),
            new_slot: Vec::new(),
            run: 0,
            run_next: u32::MAX,
            stats: Stats::default(),
            log: None,
            log_page: BEFORE,
            p,
        })
    }

    /// Records every access from now on for a byte-addressed medium
    /// ([`Access`]): the persistent-memory write path charges them itself.
    /// The SSD path leaves it off: its costs are the flash operations in
    /// [`EngineIo::ops`] alone, unchanged.
    pub fn record_accesses(&mut self) {
        self.log = Some(Vec::new());
    }

    /// Moves the accesses recorded since the last call into `out`.
    pub fn take_accesses(&mut self, out: &mut Vec<Access>) {
        if let Some(l) = &mut self.log {
            out.append(l);
        }
    }

    /// The entry's byte offset in the LMT: its page, then 32 B per entry
    /// (a region's 8-byte link follows its 127 entries, §4.4).
    pub fn entry_offset(&self, slot: u32) -> u64 {
        self.alloc.page_of(slot) * 4096 + u64::from(slot % self.alloc.per_page()) * ENTRY_BYTES
    }

    /// Blocks read ahead (PN) that the stream's next write used.
    /// Switches the prefetch variant from the next page on (CBP's
    /// *Transition*, §4.3: PN below the thread threshold, SP at or above
    /// it; [`crate::nvmfs`] decides).
    pub fn set_prefetch(&mut self, p: Prefetch) {
        self.prefetch = p;
    }

    pub fn read_ahead_used(&self) -> u64 {
        self.stats.ahead_used
    }

    /// The engine's statistics by name (what [`Engine::stats`] reports).
    pub fn stat(&self, name: &str) -> Option<f64> {
        self.stats().into_iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    fn log(&mut self, target: Target, write: bool, gates: bool, when: When, why: Why) {
        if let Some(l) = &mut self.log {
            l.push(Access { page: self.log_page, target, write, gates, when, why });
        }
    }

    /// An access to LMT entry `slot` (its metadata page through the cache).
    fn entry_access(&mut self, slot: u32, write: bool, gates: bool, when: When, why: Why, ops: &mut Vec<WriteOp>) {
        self.cache.access(self.lmt_page(slot), write, gates, when, ops);
        if self.log.is_some() {
            let at = self.entry_offset(slot);
            self.log(Target::Entry(at), write, gates, when, why);
        }
    }

    /// An access to copy `e`'s reverse-map slot.
    fn rmap_access(&mut self, e: EntryId, write: bool, gates: bool, when: When, why: Why, ops: &mut Vec<WriteOp>) {
        self.cache.access(Self::rmap_page(e), write, gates, when, ops);
        self.log(Target::Rmap(u64::from(e) * RMAP_BYTES), write, gates, when, why);
    }

    /// A read of the stored block at `ppn` (a verify or speculative read).
    fn data_read(&mut self, ppn: Ppn, when: When, gates: bool, why: Why, ops: &mut Vec<WriteOp>) {
        ops.push(WriteOp { when, op: FlashOp::DataRead(ppn), gates });
        self.log(Target::Data(ppn), false, gates, when, why);
    }

    #[inline]
    fn fingerprint(f: u64) -> u64 {
        mix64(f ^ 0x7878_4841_5348) // "xxHASH"
    }

    fn lmt_page(&self, slot: u32) -> u64 {
        self.alloc.page_of(slot)
    }

    fn rmap_page(e: EntryId) -> u64 {
        RMAP_BASE + u64::from(e) / RMAP_PER_PAGE
    }

    /// A new LMT entry for `content`, indexed under `fp` (already mixed).
    fn new_slot(&mut self, content: ContentId, fp: u64) -> u32 {
        let s = self.alloc.alloc();
        if self.slots.len() <= s as usize {
            self.slots.resize(s as usize + 1, FREE_SLOT);
        }
        self.slots[s as usize] = Slot { content, fp, entry: NIL, used: true, hint: Hint::NONE };
        self.index.insert(fp, s);
        self.stats.peak_index = self.stats.peak_index.max(self.index.len() as u64);
        self.stats.new_entries += 1;
        s
    }

    fn delete_slot(&mut self, s: u32, ops: &mut Vec<WriteOp>) {
        let slot = self.slots[s as usize];
        let fp = slot.fp;
        if self.index.get(fp) == Some(s) {
            self.index.remove(fp);
        }
        if slot.entry != NIL && self.entry_slot.get(&slot.entry) == Some(&s) {
            self.entry_slot.remove(&slot.entry);
            self.rmap_access(slot.entry, true, false, When::Arrival, Why::Delete, ops);
        }
        self.entry_access(s, true, false, When::Arrival, Why::Delete, ops);
        self.slots[s as usize] = FREE_SLOT;
        self.alloc.free(s);
        self.stats.deleted_entries += 1;
    }

    /// The live FTL copy behind entry `s`, if any.
    fn live(&self, ftl: &Ftl, s: u32) -> Option<EntryId> {
        let slot = self.slots.get(s as usize)?;
        (slot.used && slot.entry != NIL && is_live_copy(ftl, slot.entry, slot.content)).then_some(slot.entry)
    }

    /// A deterministic uniform draw in [0, 1).
    fn draw(&mut self) -> f64 {
        self.draws += 1;
        (mix64(self.p.seed ^ mix64(self.draws)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A live entry other than for `content`, chosen by a draw.
    fn collision_victim(&mut self, ftl: &Ftl, content: ContentId) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let n = self.slots.len();
        let start = (self.draw() * n as f64) as usize % n;
        (0..n.min(4096))
            .map(|i| ((start + i) % n) as u32)
            .find(|&s| self.slots[s as usize].content != content && self.live(ftl, s).is_some())
    }

    /// Checks the stream's previous hint against `cur` and moves on.
    fn advance(&mut self, cur: Option<u32>, ops: &mut Vec<WriteOp>, when: When) {
        if let Some(l) = self.streams[self.cur].last {
            let before = self.slots[l as usize].hint;
            let mut h = before;
            let was_followed = self.followed(&h);
            let outcome = h.update(cur, self.p.trust);
            if let Some(ok) = outcome {
                self.stats.predictions += 1;
                let st = &mut self.streams[self.cur];
                if ok {
                    self.stats.hint_hits += 1;
                    st.trust = (st.trust + 1).min(self.p.stream_trust);
                } else {
                    st.trust = st.trust.saturating_sub(2);
                }
                if was_followed {
                    self.stats.followed += 1;
                    self.stats.followed_hits += u64::from(ok);
                }
            }
            if h != before {
                self.slots[l as usize].hint = h;
                self.entry_access(l, true, false, when, Why::Hint, ops);
            }
        }
        self.streams[self.cur].last = cur;
    }

    /// PN (§4.3.2, Fig. 4d): reads the block the stream's last hint
    /// predicts for its next write, behind this write of `n` pages, when
    /// the hint would be followed.
    fn read_ahead(&mut self, ftl: &Ftl, n: usize, ops: &mut Vec<WriteOp>) {
        let Some(l) = self.streams[self.cur].last else { return };
        let h = self.slots[l as usize].hint;
        if !h.is_some() || !self.followed(&h) {
            return;
        }
        let Some(e) = self.live(ftl, h.next) else { return };
        let when = When::Hashed(n as u32 - 1);
        self.log_page = n as u32 - 1;
        self.entry_access(h.next, false, false, when, Why::ReadAhead, ops);
        self.data_read(ftl.entry(e).ppn, when, false, Why::ReadAhead, ops);
        self.stats.speculative_reads += 1;
        self.stats.verify_reads += 1;
        self.stats.ahead_reads += 1;
        self.streams[self.cur].ahead = Some(h.next);
    }

    fn followed(&self, h: &Hint) -> bool {
        if !self.p.trust {
            return h.is_some();
        }
        h.trusted(self.p.threshold) && self.streams[self.cur].trust >= self.p.stream_trust
    }

    /// Records page k's duplicate status in the run-length histogram.
    fn run_step(&mut self, lpn: u32, dup: bool) {
        if self.run > 0 && (!dup || lpn != self.run_next) {
            self.close_run();
        }
        if dup {
            self.run += 1;
            self.run_next = lpn.wrapping_add(1);
        }
    }

    fn close_run(&mut self) {
        let b = Self::bucket(self.run);
        self.stats.runs[b] += self.run;
        self.run = 0;
    }

    fn bucket(len: u64) -> usize {
        match len {
            0..=1 => 0,
            2..=4 => 1,
            5..=10 => 2,
            11..=100 => 3,
            _ => 4,
        }
    }

    /// §4.2's deletion logic for a block that stays shared: the reverse
    /// table locates the entry (a read of its page), and the entry's
    /// reference count is decremented (a write of the entry's page). A
    /// block without entry (a non-dedup block) is freed directly.
    fn apply_derefs(&mut self, ops: &mut Vec<WriteOp>) {
        self.prefetch_bound(&self.derefs);
        for i in 0..self.derefs.len() {
            let (c, e) = self.derefs[i];
            let Some(&s) = self.entry_slot.get(&e) else { continue };
            let slot = self.slots[s as usize];
            if !slot.used || slot.entry != e || slot.content != c {
                continue;
            }
            self.rmap_access(e, false, false, When::Arrival, Why::Deref, ops);
            self.entry_access(s, true, false, When::Arrival, Why::Deref, ops);
            self.stats.refcount_decrements += 1;
        }
        self.derefs.clear();
    }

    /// Prefetches each listed copy's entry binding, then the LMT slot it
    /// names, so that the cache misses of a request's decrements and
    /// deletions overlap instead of following one another (a speed
    /// choice; nothing is decided here).
    fn prefetch_bound(&self, list: &[(ContentId, EntryId)]) {
        if list.len() < 2 {
            return;
        }
        for &(_, e) in list {
            if let Some(x) = self.entry_slot.slot.get(e as usize) {
                crate::prefetch::prefetch(x);
            }
        }
        for &(_, e) in list {
            if let Some(x) = self.entry_slot.get(&e).and_then(|&s| self.slots.get(s as usize)) {
                crate::prefetch::prefetch(x);
            }
        }
    }

    fn apply_freed(&mut self, ftl: &Ftl, ops: &mut Vec<WriteOp>) {
        let freed = std::mem::take(&mut self.freed);
        self.prefetch_bound(&freed);
        for &(c, e) in &freed {
            if is_live_copy(ftl, e, c) {
                // The copy id was reused for the same content since.
                continue;
            }
            if let Some(&s) = self.entry_slot.get(&e) {
                if self.slots[s as usize].content == c {
                    self.delete_slot(s, ops);
                }
            }
        }
        self.freed = freed;
        self.freed.clear();
    }
}

impl Engine for LightDedup {
    fn name(&self) -> &'static str {
        "light-dedup"
    }

    fn hash_time(&self) -> Option<Nanos> {
        Some(self.hash)
    }

    fn lookup(&mut self, ftl: &Ftl, pages: &[WritePage], io: &mut EngineIo) {
        let mut ops = std::mem::take(&mut io.ops);
        self.log_page = BEFORE;
        self.apply_derefs(&mut ops);
        self.apply_freed(ftl, &mut ops);
        self.cur_slots.clear();
        self.new_slot.clear();
        self.cur = if self.p.per_stream { usize::from(io.stream) } else { 0 };
        if self.cur >= self.streams.len() {
            self.streams.resize(self.cur + 1, Stream::default());
        }
        // PN: the block read ahead for this write's first page, if any.
        let mut ahead = self.streams[self.cur].ahead.take();
        for (k, p) in pages.iter().enumerate() {
            self.log_page = k as u32;
            self.stats.pages += 1;
            let at_hash = When::Hashed(k as u32);
            if p.repeat {
                // Mapped to an earlier page of this write by the simulator.
                let first = pages[..k].iter().position(|q| q.content == p.content && !q.repeat);
                let cur = first.and_then(|f| self.cur_slots[f]);
                io.hashed.push(true);
                io.verdicts.push(Verdict::Unique);
                self.stats.hashed_pages += 1;
                self.cur_slots.push(cur);
                self.new_slot.push(false);
                self.advance(cur, &mut ops, at_hash);
                self.run_step(p.lpn.0, true);
                continue;
            }
            // 1. The stream's prediction.
            let hint = self.streams[self.cur].last.map_or(Hint::NONE, |l| self.slots[l as usize].hint);
            let mut found: Option<(u32, EntryId)> = None;
            let mut hashed = true;
            let read_ahead = if k == 0 { ahead.take() } else { None };
            if self.prefetch.reads_ahead() && hint.is_some() && self.followed(&hint) {
                let s = hint.next;
                if let Some(e) = self.live(ftl, s) {
                    if read_ahead == Some(s) {
                        // PN: read behind the stream's previous write.
                        self.stats.ahead_used += 1;
                    } else {
                        self.stats.speculative_reads += 1;
                        self.stats.verify_reads += 1;
                        self.entry_access(s, false, true, When::Arrival, Why::Speculative, &mut ops);
                        self.data_read(ftl.entry(e).ppn, When::Arrival, true, Why::Speculative, &mut ops);
                    }
                    if self.slots[s as usize].content == p.content {
                        found = Some((s, e));
                        hashed = !self.prefetch.skips_hash();
                    } else {
                        self.stats.wasted_speculative += 1;
                    }
                } else if read_ahead.is_some() {
                    self.stats.wasted_speculative += 1;
                }
            } else if read_ahead.is_some() {
                self.stats.wasted_speculative += 1;
            }
            // 2. Fingerprint, index, verify.
            let mut nodedup = false;
            let fp = Self::fingerprint(p.fingerprint);
            if found.is_none() {
                match self.index.get(fp) {
                    Some(s) if self.live(ftl, s).is_some() => {
                        let e = self.slots[s as usize].entry;
                        self.stats.verify_reads += 1;
                        self.entry_access(s, false, true, at_hash, Why::Verify, &mut ops);
                        self.data_read(ftl.entry(e).ppn, at_hash, true, Why::Verify, &mut ops);
                        if self.slots[s as usize].content == p.content {
                            found = Some((s, e));
                        } else {
                            // The verify read compared the bytes: a real
                            // fingerprint collision (`serve` with a weak
                            // hash), written without deduplication (§3.2).
                            self.stats.failed_verifies += 1;
                            self.stats.real_collisions += 1;
                            nodedup = true;
                        }
                    }
                    _ => {
                        if self.p.collision_probability > 0.0 && self.draw() < self.p.collision_probability {
                            if let Some(v) = self.collision_victim(ftl, p.content) {
                                let e = self.slots[v as usize].entry;
                                self.stats.verify_reads += 1;
                                self.stats.failed_verifies += 1;
                                self.entry_access(v, false, true, at_hash, Why::Verify, &mut ops);
                                self.data_read(ftl.entry(e).ppn, at_hash, true, Why::Verify, &mut ops);
                                nodedup = true;
                            }
                        }
                    }
                }
            }
            if hashed {
                self.stats.hashed_pages += 1;
            } else {
                self.stats.skipped_hash += 1;
            }
            io.hashed.push(hashed);
            // 3. The outcome and the entry it touches.
            let cur = match found {
                Some((s, e)) => {
                    // refcnt + 1 in the entry just read.
                    self.entry_access(s, true, false, at_hash, Why::Refcount, &mut ops);
                    io.verdicts.push(Verdict::Duplicate(e));
                    self.stats.dup_pages += 1;
                    self.new_slot.push(false);
                    Some(s)
                }
                None if nodedup => {
                    io.verdicts.push(Verdict::Unique);
                    self.stats.nodedup_pages += 1;
                    self.new_slot.push(false);
                    None
                }
                None => {
                    // A stale index entry (its copy died unseen) is dropped.
                    if let Some(old) = self.index.get(fp) {
                        self.delete_slot(old, &mut ops);
                    }
                    let s = self.new_slot(p.content, fp);
                    self.entry_access(s, true, false, at_hash, Why::Alloc, &mut ops);
                    io.verdicts.push(Verdict::Unique);
                    self.new_slot.push(true);
                    Some(s)
                }
            };
            self.cur_slots.push(cur);
            self.advance(cur, &mut ops, at_hash);
            self.run_step(p.lpn.0, found.is_some());
        }
        if ahead.is_some() {
            // Read ahead for a first page that was an in-write repeat.
            self.stats.wasted_speculative += 1;
        }
        if self.prefetch == Prefetch::Pn && !pages.is_empty() {
            self.read_ahead(ftl, pages.len(), &mut ops);
        }
        io.ops = ops;
    }

    fn commit(&mut self, _ftl: &Ftl, pages: &[WritePage], entries: &[EntryId], programmed: &[bool], io: &mut EngineIo) {
        let mut ops = std::mem::take(&mut io.ops);
        for k in 0..pages.len() {
            self.log_page = k as u32;
            if !self.new_slot[k] {
                continue;
            }
            let Some(s) = self.cur_slots[k] else { continue };
            debug_assert!(programmed[k]);
            let e = entries[k];
            if let Some(old) = self.entry_slot.insert(e, s) {
                // The FTL reused a dead copy's id before its death reached us.
                if old != s && self.slots[old as usize].used && self.slots[old as usize].entry == e {
                    self.slots[old as usize].entry = NIL;
                    self.delete_slot(old, &mut ops);
                    self.entry_slot.insert(e, s);
                }
            }
            self.slots[s as usize].entry = e;
            self.log_page = k as u32;
            self.rmap_access(e, true, false, When::Hashed(k as u32), Why::Rmap, &mut ops);
        }
        io.ops = ops;
    }

    fn preload(&mut self, content: ContentId, fingerprint: u64, entry: EntryId) {
        let fp = Self::fingerprint(fingerprint);
        if !self.p.warm_start || self.index.contains_key(fp) {
            return;
        }
        let s = self.new_slot(content, fp);
        self.slots[s as usize].entry = entry;
        self.entry_slot.insert(entry, s);
        self.cache.on_flash.insert(self.lmt_page(s));
        self.cache.on_flash.insert(Self::rmap_page(entry));
        if let Some(l) = self.streams[0].last {
            self.slots[l as usize].hint = Hint { next: s, trust: NEW_TRUST };
        }
        self.streams[0].last = Some(s);
        self.stats.new_entries -= 1;
    }

    fn prefetch(&self, ftl: &Ftl, fingerprint: u64, step: u32) {
        let fp = Self::fingerprint(fingerprint);
        match step {
            0 => self.index.prefetch(fp),
            1 => {
                if let Some(s) = self.index.get(fp) {
                    if let Some(slot) = self.slots.get(s as usize) {
                        crate::prefetch::prefetch(slot);
                    }
                }
            }
            _ => {
                if let Some(slot) = self.index.get(fp).and_then(|s| self.slots.get(s as usize)) {
                    if slot.entry != NIL {
                        ftl.prefetch_copy(slot.entry);
                    }
                }
            }
        }
    }

    fn wants_derefs(&self) -> bool {
        true
    }

    fn dereferenced(&mut self, content: ContentId, _fingerprint: u64, entry: EntryId) {
        self.derefs.push((content, entry));
    }

    fn forget(&mut self, content: ContentId, _fingerprint: u64, entry: EntryId) {
        self.freed.push((content, entry));
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        let mut runs = s.runs;
        if self.run > 0 {
            runs[Self::bucket(self.run)] += self.run;
        }
        let dup_run_pages: u64 = runs.iter().sum();
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let page = 4096.0;
        let read_b = ratio(self.cache.reads, s.pages) * page;
        let write_b = ratio(self.cache.programs, s.pages) * page;
        vec![
            ("engine_pages", s.pages as f64),
            ("engine_hashed_pages", s.hashed_pages as f64),
            ("engine_skipped_hash_pages", s.skipped_hash as f64),
            ("engine_dup_pages", s.dup_pages as f64),
            ("engine_nodedup_pages", s.nodedup_pages as f64),
            ("engine_hint_predictions", s.predictions as f64),
            ("engine_hint_hits", s.hint_hits as f64),
            ("engine_hint_misses", (s.predictions - s.hint_hits) as f64),
            ("engine_hint_followed", s.followed as f64),
            ("engine_hint_followed_hits", s.followed_hits as f64),
            ("engine_hint_hit_rate", ratio(s.followed_hits, s.followed)),
            ("engine_speculative_reads", s.speculative_reads as f64),
            ("engine_wasted_speculative_reads", s.wasted_speculative as f64),
            ("engine_read_ahead", s.ahead_reads as f64),
            ("engine_read_ahead_used", s.ahead_used as f64),
            ("engine_streams", self.streams.len() as f64),
            ("engine_verify_reads", s.verify_reads as f64),
            ("engine_failed_verifies", s.failed_verifies as f64),
            ("engine_real_collisions", s.real_collisions as f64),
            ("engine_new_entries", s.new_entries as f64),
            ("engine_deleted_entries", s.deleted_entries as f64),
            ("engine_refcount_decrements", s.refcount_decrements as f64),
            ("engine_index_bytes", (self.index.len() as u64 * INDEX_BYTES) as f64),
            ("engine_index_peak_bytes", (s.peak_index * INDEX_BYTES) as f64),
            ("engine_live_entries", self.entry_slot.len() as f64),
            ("engine_regions", self.alloc.regions() as f64),
            ("engine_region_queue", self.alloc.queued() as f64),
            ("engine_meta_region_reads", self.cache.reads as f64),
            ("engine_meta_region_programs", self.cache.programs as f64),
            ("engine_meta_rmap_reads", self.cache.rmap_reads as f64),
            ("engine_meta_rmap_programs", self.cache.rmap_programs as f64),
            ("engine_dirty_cached", self.cache.dirty() as f64),
            ("engine_meta_read_bytes_per_block", read_b),
            ("engine_meta_write_bytes_per_block", write_b),
            ("engine_meta_read_amplification", read_b / IDEAL_BYTES as f64),
            ("engine_meta_write_amplification", write_b / IDEAL_BYTES as f64),
            ("engine_dup_run_pages_1", runs[0] as f64),
            ("engine_dup_run_pages_2_4", runs[1] as f64),
            ("engine_dup_run_pages_5_10", runs[2] as f64),
            ("engine_dup_run_pages_11_100", runs[3] as f64),
            ("engine_dup_run_pages_over_100", runs[4] as f64),
            ("engine_dup_run_frac_over_10", ratio(runs[3] + runs[4], dup_run_pages)),
        ]
    }
}
