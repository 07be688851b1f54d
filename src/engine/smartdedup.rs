//! SmartDedup (Yang et al., USENIX ATC'19, §3-4) as a dedup engine: a
//! bounded two-level fingerprint store, in-line deduplication against the
//! in-memory level, out-of-line deduplication against both levels at idle
//! time, adaptive selectivity and the iDedup-style sequence filter.
//!
//! # Fingerprint stores (§3.2)
//!
//! * A fingerprint is a fixed 64-bit mix of the content id (content ids
//!   stand for bytes; MD5's uniformity is what matters here). Its first
//!   `prefix_bits` bits select a *group*, a leaf of the prefix tree. By
//!   default the prefix is sized to the memory budget as the paper sizes
//!   it ([`prefix_bits_for`]: 14 bits at §4's 3 MB, 18 at §3.2's 40 MB,
//!   leaves in proportion to the budget); `prefix_bits` overrides it.
//! * **In-memory store**: per group, a list sorted by fingerprint; at most
//!   `capacity` fingerprints in all, where `capacity = (memory - 2^prefix x
//!   LEAF_BYTES) / FP_BYTES`. The per-entry and per-leaf sizes are derived
//!   from §3.2's figures: 40 MB holds 1.3 M MD5 fingerprints with an 18-bit
//!   index of 2.03 MB ((40 - 2.03) MB / 1.3 M = 29.2 B, rounded to
//!   [`FP_BYTES`] = 30), and the index costs 2.03 MB / 2^18 = 7.7 B per leaf
//!   plus the on-disk group's 4-byte PBN ([`LEAF_BYTES`] = 12). Default
//!   memory 3 MB (§4: "3MB for in-memory fingerprint store"): 98,304
//!   fingerprints.
//! * **On-flash store**: per group, an array sorted by fingerprint in
//!   ceil(n / floor(page size / 32 B)) metadata pages (§3.2: 2^26
//!   fingerprints in 2 GB is 32 B each; a 4 KiB page holds 128, so a
//!   256-entry group is 2 pages, as §3.2 says). Reading a group reads all its pages; writing one back
//!   reads and rewrites them (read-merge-write). These are timed metadata
//!   reads and programs on the chips.
//! * **Eviction** when the memory store is full (`eviction`):
//!   `g-lru` (SmartDedup): the whole least-recently-used group (a group is
//!   used when one of its fingerprints is matched or inserted) goes to
//!   flash with one read-merge-write; `lru`: the single least-recently-used
//!   fingerprint, with a read-merge-write of its group each time; `refcount`
//!   (CAFTL's replacement, §4.2): the fingerprint whose copy has the fewest
//!   references the engine has seen (1 + in-line hits; decrements by
//!   overwrites of sharers are not observed, only the copy's death).
//!   The eviction read-merge-writes are counted apart
//!   (`engine_evict_meta_reads` / `_programs`) from out-of-line dedup's
//!   group reads (`engine_offline_meta_reads`), which every policy pays.
//! * **Index** (`index`): `prefix-tree` (SmartDedup, the default) or
//!   `btree`, §4.2's Dmdedup comparison: fingerprints indexed one by one
//!   in a copy-on-write B-tree at [`BTREE_FP_BYTES`] each (no leaves to
//!   pay, no groups: `lru` or `refcount` eviction). The comparison varies
//!   only the memory, so the B-tree is the memory-resident index and, as
//!   for SmartDedup's in-line dedup, only what it holds is found in line.
//! * **Group lists**: each in-line lookup records the length of the group
//!   list it searches (`engine_list_lookups`, `engine_list_len_sum`,
//!   `engine_list_len_max`; §3.2 reports mean 9, max 63), and
//!   `engine_list_len_full` is the mean non-empty list at the end.
//! * **Promotion**: a fingerprint that out-of-line dedup matches on flash is
//!   promoted to memory alone (§3.2); its flash copy stays until the group
//!   is next written back.
//!
//! # Hybrid deduplication (§3.3)
//!
//! * **In-line**: each page of a write is fingerprinted (`hash_us`, default
//!   16 µs: MD5 of a 4 KB block on the Nexus 5X, §4) and looked up in the
//!   in-memory store only. A hit is deduplicated (the policy may still
//!   rewrite it). A miss is written normally, its fingerprint inserted in
//!   memory (so recent data deduplicates in-line), and the page recorded in
//!   the **skipped buffer** for out-of-line dedup. The buffer holds
//!   `skipped_mb` (default 0.5 MB, §4) at 24 B per entry with a fingerprint
//!   and 8 B without (§3.3: 22 K / 65 K entries in 0.5 MB). It is keyed by
//!   the page's address, as the paper's hash table is by (inode, LBN): a
//!   block device has neither, so the key is the LPN. Writing an LPN again
//!   replaces its entry (the new one goes to the back of the processing
//!   order: first recorded, first processed), or removes it when the new
//!   write is deduplicated in line (`engine_skipped_replaced` counts
//!   both); pages in-line deduplicated against the replaced copy stay on
//!   it. When full, new entries are dropped and counted
//!   (`engine_skipped_overflow`; a block device has no inode numbers to
//!   fall back to, §3.3's overflow mode).
//! * **Out-of-line** runs beside the host I/O (`pacing`, §3.1's
//!   "symbiotic in-line and out-of-line deduplication"; §3.4: out-of-line
//!   dedup "adapts the number of blocks that it processes per period" and
//!   slows when the CPU or disk is fully utilized; §4.1 and §5: CAFTL's
//!   out-of-line dedup "works only when the system is idle and cannot help
//!   much"). `pacing = "symbiotic"` (default): every gap between host
//!   arrivals is offered (no idle threshold); skipped pages are processed
//!   one after another from the arrival on, each starting when the
//!   previous one's own data read, hash and group reads are done (the
//!   rate is what the flash and hash time it uses allow, not a budget),
//!   and none starts at or after the next host arrival; its reads queue on
//!   the chips with the host's (competing with them, as a controller's
//!   background task does). A busy device (short gaps) gets little
//!   out-of-line work, an idle one a lot: the rate follows the resources
//!   the host leaves. `pacing = "idle"` (CAFTL-like, the rule before issue
//!   27): only after `idle_ms` (10 ms) without an arrival, at most
//!   `offline_pages` (256) per `period_s` (1 s); neither number is in the
//!   paper (`crate::background`). Each skipped page
//!   still mapped as recorded is fingerprinted if in-line did not (a timed
//!   data read + the hash), looked up in memory and then in its group on
//!   flash (timed metadata reads); if another live copy with the same
//!   fingerprint exists, the page and every page that in-line deduplicated
//!   against it are remapped to that copy, which frees it. Liveness is
//!   judged on the mapping as the window's earlier remaps leave it (the
//!   simulator executes them after the window), so a copy being freed is
//!   never a target. `engine_offline_dedup_pages` counts the copies freed
//!   (pages saved; the in-line hits among the remapped pages were counted
//!   when written), `engine_offline_remaps` the LPNs remapped.
//!   `drain_at_end` processes what is left after the last request
//!   (untimed for latency).
//!
//! # Adaptive selectivity (§4.4) and the sequence filter (§4.5)
//!
//! * `adaptive = true`: the dedup ratio of the last `window` (150) write
//!   requests is compared with the mean of the past `history` (30)
//!   windows; lower cuts the fraction of requests fingerprinted in-line by
//!   `down` (10%, floor `floor` 30%), higher raises it by `up` (30%, cap
//!   100%). The ratio is in-line hits over the pages fingerprinted in
//!   line (the paper's "observed duplication level"; a page not
//!   fingerprinted is not observed); a window without any leaves the
//!   selectivity alone. Requests not fingerprinted in-line are skipped
//!   pages without a fingerprint. `engine_selectivity_min` is the lowest
//!   selectivity reached. Off by default (§4: "enabled and evaluated only in
//!   Section 4.4").
//! * `threshold` T (iDedup, §4.5: "applies deduplication only to a
//!   physically contiguous sequence of writes that are duplicates"): only
//!   runs of at least T consecutive duplicate pages of a write whose
//!   stored copies are contiguous are deduplicated; shorter runs are
//!   written normally and not left to out-of-line dedup (which would undo
//!   the filter). Copies are contiguous in the sense the extent count
//!   below uses: written one after another (consecutive in the device's
//!   write order, which is what a log-structured flash layout lays out
//!   contiguously; a PPN is not used because striping over chips makes
//!   consecutive writes non-adjacent PPNs). A run of duplicates whose
//!   copies are not contiguous is split where they break. T = 1 is off.
//!   Fragmentation is counted as §4.5
//!   does, in extents: a write's pages form one extent per run of pages
//!   whose copies were written one after another (a freshly programmed run
//!   is one extent; a deduplicated page starts a new one unless its copy
//!   directly follows the previous page's); `engine_extents /
//!   engine_writes` is the extent count relative to writing without dedup
//!   (one extent per write).
//!
//! Not modelled: the page-cache index of the read path (a host-side cache,
//! outside the device), and the reverse index's refcount updates (§3.4:
//! under 0.5% of the write volume).

use super::fastmap::FastMap;
use super::{
    is_live_copy, mix64, params, Background, Engine, EngineContext, EngineError, EngineIo, FlashOp, IdleWindow, Remap,
    Verdict, When, WriteOp, WritePage,
};
use crate::background::{check_time_param, Pacer, MAX_BACKGROUND_TIME_NS, MAX_HASH_TIME_NS};
use crate::ftl::{EntryId, Ftl};
use crate::params::unit_keys::UnitKey;
use crate::units::{short_f64, ContentId, Lpn, Nanos};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};

/// Bytes of one in-memory fingerprint entry (§3.2; see the module doc).
pub const FP_BYTES: u64 = 30;
/// Bytes of one prefix-tree leaf with its on-flash group pointer (§3.2).
pub const LEAF_BYTES: u64 = 12;
/// Bytes of one on-flash fingerprint entry: §3.2's "2^26 [fingerprints]
/// in the worst case ... requires 2GB of disk space" is 32 B each (the
/// 16-byte MD5 and the PBN in a padded record): 128 per 4 KiB page, so a
/// 256-fingerprint group is 2 pages ("one to two 4KB blocks", §3.2).
pub const FLASH_FP_BYTES: u64 = 32;
/// Bytes of one fingerprint in a Dmdedup-style index (`index = "btree"`,
/// the comparison of §4.2): a copy-on-write B-tree keeps each fingerprint
/// as a 16-byte MD5 key with an 8-byte PBN (24 B) in 4 KiB nodes that a
/// B-tree under random insertions fills to ln 2 ≈ 69% on average (Yao,
/// "On random 2-3 trees", 1978): 24 / 0.69 = 34.6 B, and its interior
/// nodes add about one entry per node's fanout (~1%): 35 B. No per-group
/// leaves: the B-tree indexes fingerprints one by one.
pub const BTREE_FP_BYTES: u64 = 35;
/// Skipped-buffer entry with / without its fingerprint (§3.3).
pub const SKIPPED_BYTES_FP: u64 = 24;
pub const SKIPPED_BYTES: u64 = 8;

const MB: f64 = 1024.0 * 1024.0;
const NIL: u32 = u32::MAX;
/// The entry of a tombstone in an on-flash group array (no FTL copy has
/// this id: [`EntryId`]s index the FTL's entry table).
const DEAD: EntryId = u32::MAX;

/// Index of the first entry of the sorted `flash` array whose fingerprint
/// is not below `fp` (`partition_point(|f| f.fp < fp)`), for a group whose
/// fingerprints share their top `bits` bits: the rest are uniform (a
/// mix), so the position is guessed from them and corrected by galloping
/// from the guess (about one cache line touched instead of log2 n).
fn lower_bound(flash: &[FlashFp], fp: u64, bits: u32) -> usize {
    let n = flash.len();
    let below = |f: &FlashFp| f.fp < fp;
    if n < 2 || bits >= 64 {
        return flash.partition_point(below);
    }
    let guess = ((u128::from(fp << bits) * n as u128) >> 64) as usize;
    let mut step = 1;
    if below(&flash[guess]) {
        // The answer is in (guess, n].
        let mut lo = guess + 1;
        loop {
            let hi = lo + step;
            if hi >= n {
                return lo + flash[lo..].partition_point(below);
            }
            if !below(&flash[hi]) {
                return lo + flash[lo..hi].partition_point(below);
            }
            lo = hi + 1;
            step *= 2;
        }
    }
    // The answer is in [0, guess].
    let mut hi = guess;
    loop {
        if hi < step {
            return flash[..hi].partition_point(below);
        }
        let lo = hi - step;
        if below(&flash[lo]) {
            return lo + 1 + flash[lo + 1..hi].partition_point(below);
        }
        hi = lo;
        step *= 2;
    }
}

/// The prefix length the paper pairs with a memory budget of `memory_mb`:
/// 14 bits at 3 MB (§4) and 18 bits at 40 MB (§3.2), i.e. the number of
/// prefix-tree leaves grows in proportion to the budget (both settings
/// give about 5-6 fingerprints per group when the store is full:
/// 98,304 / 2^14 and 1.3 M / 2^18). Rounded to the nearest bit in the log
/// domain, `14 + round(log2(memory_mb / 3))`, within 1..=24: 1 MB → 12,
/// 2 MB → 13, 5 MB → 15, 10 MB → 16, 20 MB → 17, 40 MB → 18.
pub fn prefix_bits_for(memory_mb: f64) -> u32 {
    let b = 14.0 + (memory_mb / 3.0).log2().round();
    if b.is_nan() {
        14
    } else {
        b.clamp(1.0, 24.0) as u32
    }
}

/// The unit-bearing parameters and their old bare-number names
/// ([`crate::params::unit_keys`]): `memory = "3MiB"` is `memory_mb = 3`.
pub const UNIT_KEYS: &[UnitKey] = &[
    UnitKey::size("memory", "memory_mb", MB, "MiB"),
    UnitKey::size("skipped", "skipped_mb", MB, "MiB"),
    UnitKey::time("hash", "hash_us", MAX_HASH_TIME_NS as u64, 1e3, "µs"),
    UnitKey::time("idle", "idle_ms", MAX_BACKGROUND_TIME_NS as u64, 1e6, "ms"),
    UnitKey::time("period", "period_s", MAX_BACKGROUND_TIME_NS as u64, 1e9, "s"),
];

/// When out-of-line dedup runs (`pacing`; module doc, "Out-of-line").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pacing {
    /// The paper's symbiotic scheme (§3.1, §3.4; CAFTL's idle-only
    /// out-of-line dedup is what §4.1 and §5 criticise): in every gap
    /// between host arrivals, paced by the resources it uses (default).
    Symbiotic,
    /// Only after `idle_ms` without a host arrival, at most `offline_pages`
    /// per `period_s` (CAFTL-like; dedupsim's rule before issue 27).
    Idle,
}

/// Fingerprint eviction from the memory store.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Eviction {
    /// Whole least-recently-used group (SmartDedup).
    GLru,
    /// Single least-recently-used fingerprint.
    Lru,
    /// Fewest references (CAFTL's replacement).
    Refcount,
}

/// The in-memory fingerprint index (§3.2 vs the Dmdedup comparison of
/// §4.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Index {
    /// SmartDedup's prefix tree: groups of fingerprints sharing a prefix,
    /// `FP_BYTES` per fingerprint and `LEAF_BYTES` per leaf.
    PrefixTree,
    /// A Dmdedup-style B-tree over individual fingerprints,
    /// [`BTREE_FP_BYTES`] each, no groups (so no `g-lru`).
    Btree,
}

/// `[engine.smartdedup]` parameters; defaults are the paper's evaluation
/// settings (§4) where it gives them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmartDedupParams {
    /// In-memory fingerprint store budget, MB (MiB).
    pub memory_mb: f64,
    /// Prefix bits of the fingerprint index (groups = 2^prefix_bits).
    /// Unset: sized to the memory budget as the paper does
    /// (`prefix_bits_for`).
    pub prefix_bits: Option<u32>,
    /// Skipped-buffer budget, MB.
    pub skipped_mb: f64,
    pub eviction: Eviction,
    /// The in-memory index: `prefix-tree` (SmartDedup, §3.2) or `btree`
    /// (Dmdedup-style, §4.2's comparison).
    pub index: Index,
    /// Keep evicted fingerprints on flash (the two-level store); `false` =
    /// in-line only (evicted fingerprints are lost, no out-of-line dedup).
    pub on_flash: bool,
    /// Out-of-line dedup.
    pub offline: bool,
    /// When it runs: `symbiotic` (default) or `idle`.
    pub pacing: Pacing,
    /// `pacing = "idle"`'s budget: skipped pages per period.
    pub offline_pages: u32,
    pub period_s: f64,
    /// `pacing = "idle"`'s threshold: no host arrival for this long.
    pub idle_ms: f64,
    /// Process the remaining skipped pages after the last request.
    pub drain_at_end: bool,
    /// Fingerprint time per page, µs (MD5 on the Nexus 5X: 16 µs).
    pub hash_us: f64,
    /// Adaptive selectivity (§4.4).
    pub adaptive: bool,
    pub window: u32,
    pub history: u32,
    pub down: f64,
    pub up: f64,
    pub floor: f64,
    /// iDedup sequence threshold (1 = off).
    pub threshold: u32,
    /// Preconditioned data's fingerprints start in the on-flash store (the
    /// device ran SmartDedup before the trace; memory starts cold). `false`:
    /// both stores start empty (§4's experiments on fresh devices).
    pub warm_start: bool,
}

impl Default for SmartDedupParams {
    fn default() -> Self {
        SmartDedupParams {
            memory_mb: 3.0,
            prefix_bits: None,
            skipped_mb: 0.5,
            eviction: Eviction::GLru,
            index: Index::PrefixTree,
            on_flash: true,
            offline: true,
            pacing: Pacing::Symbiotic,
            offline_pages: 256,
            period_s: 1.0,
            idle_ms: 10.0,
            drain_at_end: false,
            hash_us: 16.0,
            adaptive: false,
            window: 150,
            history: 30,
            down: 0.10,
            up: 0.30,
            floor: 0.30,
            threshold: 1,
            warm_start: true,
        }
    }
}

/// One in-memory fingerprint.
#[derive(Copy, Clone, Debug)]
struct Node {
    fp: u64,
    content: ContentId,
    entry: EntryId,
    group: u32,
    /// Per-fingerprint LRU links (`lru`).
    prev: u32,
    next: u32,
    /// References seen (`refcount`).
    refs: u32,
    /// Write order of the copy ([`SmartDedup::commit`]'s extent count).
    seq: u32,
    /// The record was made for a copy just programmed (its `seq` new), so
    /// it cannot be on flash yet: its eviction need not look for it there.
    fresh: bool,
}

/// One on-flash fingerprint.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct FlashFp {
    fp: u64,
    entry: EntryId,
    content: ContentId,
    seq: u32,
}

/// Entries an eviction's tail may hold before it is merged into the main
/// part of the group's array ([`Group::flash`]).
const TAIL_MAX: usize = 32;

/// [`Group::main`] of a group whose on-flash array preloading appended
/// to, unsorted until its first use ([`SmartDedup::sort_flash`]).
const UNSORTED: u32 = u32::MAX;

/// One prefix-tree leaf: exactly one 64-byte cache line (aligned, and no
/// flags beside the links: whether it is in the LRU list is read from
/// them, whether its array is sorted from `main`), so touching a group is
/// one cache miss, not two (a speed choice: the simulator touches a group
/// per lookup, per freed copy and per out-of-line item).
#[derive(Clone, Debug, Default)]
#[repr(align(64))]
struct Group {
    /// In-memory fingerprints with their node ids, sorted by fingerprint
    /// (the fingerprint beside the id keeps a lookup's binary search in
    /// one array).
    mem: Vec<(u64, u32)>,
    /// The on-flash array as the simulator keeps it: `flash[..main]`
    /// sorted by fingerprint (once sorted: preloading appends, sets `main`
    /// to [`UNSORTED`] and sorts at the first use), then a short *tail* sorted by
    /// fingerprint alone, where evictions put what they move until the tail
    /// exceeds [`TAIL_MAX`] and is merged into the main part. The group on
    /// flash is the sorted set of both (every write-back is still charged
    /// as a read-merge-write of the whole group); the split only spares
    /// the simulator a pass over ~140 entries per eviction. A freed
    /// copy's entry stays as a tombstone (`entry == DEAD`) until the
    /// group's next write-back drops it, as the device would clean it.
    flash: Vec<FlashFp>,
    /// Length of the sorted main part of `flash` ([`UNSORTED`]: not
    /// sorted yet).
    main: u32,
    /// Tombstones in `flash`: the array on flash holds `flash.len() - dead`
    /// live fingerprints.
    dead: u32,
    /// Group LRU links (`g-lru`), NIL-terminated; a group is in the list
    /// when it has a predecessor or is its head
    /// ([`SmartDedup::group_in_lru`]).
    prev: u32,
    next: u32,
}

impl Group {
    /// Index in `flash` of the first fingerprint of the group's sorted set
    /// (main part and tail together) that is `fp` and satisfies `ok`:
    /// the first in the main part's run of `fp` (sorted), or the least
    /// of the tail's run (sorted by fingerprint only), whichever is less.
    /// `ok` must be pure (it may be asked of more entries than the first
    /// match).
    fn first_match(&self, fp: u64, bits: u32, mut ok: impl FnMut(&FlashFp) -> bool) -> Option<usize> {
        let (main, tail) = self.flash.split_at(self.main as usize);
        let s = lower_bound(main, fp, bits);
        let a = main[s..].iter().take_while(|f| f.fp == fp).position(&mut ok).map(|i| s + i);
        if tail.is_empty() {
            return a;
        }
        let t = lower_bound(tail, fp, bits);
        let b = tail[t..]
            .iter()
            .enumerate()
            .take_while(|(_, f)| f.fp == fp)
            .filter(|(_, f)| ok(f))
            .min_by_key(|(_, f)| **f)
            .map(|(i, _)| main.len() + t + i);
        match (a, b) {
            (Some(i), Some(j)) => Some(if self.flash[j] < self.flash[i] { j } else { i }),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// Adds `m` to the group's on-flash set, unless a live copy of the same
    /// record is there already (a promoted fingerprint evicted again).
    /// `fresh`: `m` was made for a copy just programmed, so it cannot be
    /// there (its write order is new) and is not looked for.
    fn add(&mut self, m: FlashFp, fresh: bool, bits: u32) {
        if !fresh && self.first_match(m.fp, bits, |f| *f == m).is_some() {
            return;
        }
        let main = self.main as usize;
        let at = main + self.flash[main..].partition_point(|f| f.fp <= m.fp);
        self.flash.insert(at, m);
    }

    /// Makes the first live record of `fp` held by copy `entry` a
    /// tombstone; false if there is none.
    fn kill(&mut self, fp: u64, entry: EntryId, bits: u32) -> bool {
        match self.first_match(fp, bits, |f| f.entry == entry) {
            Some(i) => {
                self.flash[i].entry = DEAD;
                self.dead += 1;
                true
            }
            None => false,
        }
    }

    /// Merges the tail into the main part, without the tombstones, once it
    /// holds more than [`TAIL_MAX`] entries (`buf`: the merge's buffer,
    /// swapped with the array's to reuse both).
    fn compact_if_long(&mut self, buf: &mut Vec<FlashFp>) {
        let main = self.main as usize;
        if self.flash.len() - main <= TAIL_MAX {
            return;
        }
        buf.clear();
        buf.reserve(self.flash.len() - self.dead as usize);
        let (head, tail) = self.flash.split_at_mut(main);
        tail.sort_unstable();
        let mut m = tail.iter().copied().filter(|f| f.entry != DEAD).peekable();
        for &f in head.iter().filter(|f| f.entry != DEAD) {
            while let Some(x) = m.next_if(|x| *x < f) {
                buf.push(x);
            }
            buf.push(f);
        }
        buf.extend(m);
        buf.dedup();
        std::mem::swap(&mut self.flash, buf);
        self.main = self.flash.len() as u32;
        self.dead = 0;
    }
}

/// A page written without in-line deduplication.
#[derive(Clone, Debug)]
struct Skipped {
    lpn: Lpn,
    content: ContentId,
    /// Its fingerprint ([`WritePage::fingerprint`], not yet mixed).
    fp: u64,
    entry: EntryId,
    fingerprinted: bool,
}

/// The skipped buffer in processing order: entry `k` (its insertion
/// number) at `items[k - base]`; a replaced entry leaves a hole until the
/// entries before it are processed, and the front is never a hole. The
/// same order as a map by insertion number, with O(1) insertion, removal
/// and front.
#[derive(Clone, Debug, Default)]
struct SkipRing {
    base: u64,
    items: VecDeque<Option<Skipped>>,
    len: usize,
}

impl SkipRing {
    /// Appends entry `k`, the next insertion number.
    fn push(&mut self, k: u64, s: Skipped) {
        debug_assert_eq!(k, self.base + self.items.len() as u64);
        if self.items.is_empty() {
            self.base = k;
        }
        self.items.push_back(Some(s));
        self.len += 1;
    }

    fn get(&self, k: u64) -> Option<&Skipped> {
        let i = k.checked_sub(self.base)?;
        self.items.get(i as usize)?.as_ref()
    }

    fn remove(&mut self, k: u64) -> Option<Skipped> {
        let i = k.checked_sub(self.base)?;
        let s = self.items.get_mut(i as usize)?.take()?;
        self.len -= 1;
        while self.items.front().is_some_and(Option::is_none) {
            self.items.pop_front();
            self.base += 1;
        }
        Some(s)
    }

    /// The first entry in processing order.
    fn first(&self) -> Option<(u64, &Skipped)> {
        self.items.front()?.as_ref().map(|s| (self.base, s))
    }

    /// The entries after the first, in order.
    fn after_first(&self) -> impl Iterator<Item = &Skipped> + '_ {
        self.items.iter().skip(1).flatten()
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Write order of each live copy, indexed by its entry id (ids are dense
/// and reused).
#[derive(Clone, Debug, Default)]
struct SeqOf(Vec<Option<u32>>);

impl SeqOf {
    #[inline]
    fn get(&self, e: EntryId) -> Option<u32> {
        self.0.get(e as usize).copied().flatten()
    }
    fn insert(&mut self, e: EntryId, seq: u32) {
        let i = e as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, None);
        }
        self.0[i] = Some(seq);
    }
    fn remove(&mut self, e: EntryId) {
        if let Some(x) = self.0.get_mut(e as usize) {
            *x = None;
        }
    }
}

/// Intrusive doubly linked LRU list over `u32` ids (head = most recent).
#[derive(Clone, Debug)]
struct LruList {
    head: u32,
    tail: u32,
}

/// Counters reported as `engine_stats`.
#[derive(Clone, Debug, Default)]
struct Stats {
    hashed_pages: u64,
    inline_hits: u64,
    /// Fingerprint matches of different bytes (real collisions under
    /// `dedupsim serve` with a weak hash): a trusting engine would merge
    /// them; counted and written as unique.
    false_matches: u64,
    inline_misses: u64,
    unhashed_pages: u64,
    filtered_pages: u64,
    evictions: u64,
    evicted_fps: u64,
    meta_reads: u64,
    meta_programs: u64,
    /// Of `meta_reads` / `meta_programs`: the evictions' read-merge-writes
    /// (what G-LRU batches), and out-of-line dedup's group reads (which
    /// every eviction policy pays alike).
    evict_meta_reads: u64,
    evict_meta_programs: u64,
    offline_meta_reads: u64,
    /// In-line lookups in the memory store and the lengths of the group
    /// lists they searched (§3.2: "the average length of these lists is
    /// 9 (maximum length is 63)").
    list_lookups: u64,
    list_len_sum: u64,
    list_len_max: u64,
    offline_pages: u64,
    offline_data_reads: u64,
    offline_dedup_pages: u64,
    offline_remaps: u64,
    offline_dropped: u64,
    skipped_overflow: u64,
    skipped_replaced: u64,
    promotions: u64,
    peak_mem_fps: u64,
    /// Lowest selectivity reached (1 without adaptive selectivity).
    min_selectivity: f64,
    extents: u64,
    writes: u64,
}

/// SmartDedup. See the module doc.
pub struct SmartDedup {
    p: SmartDedupParams,
    /// Prefix bits in use (`prefix_bits`, or sized to the budget).
    bits: u32,
    hash: Nanos,
    capacity: u64,
    skipped_bytes: u64,
    per_page: u64,
    /// Data read + transfer, the pacing estimate of one background read.
    t_read: Nanos,
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    mem_count: u64,
    groups: Vec<Group>,
    group_lru: LruList,
    node_lru: LruList,
    by_refs: BTreeSet<(u32, u32)>,
    /// The skipped buffer: entries in processing order (insertion number
    /// -> entry), and each LPN's entry (the paper's hash table indexed by
    /// inode and LBN; here by LPN).
    skipped: SkipRing,
    skipped_of: FastMap<Lpn, u64>,
    skipped_next: u64,
    skipped_used: u64,
    /// LPNs that in-line dedup mapped to a copy still in the skipped buffer.
    sharers: FastMap<EntryId, Vec<Lpn>>,
    pacer: Pacer,
    // Adaptive selectivity.
    selectivity: f64,
    credit: f64,
    win_pages: u64,
    win_dups: u64,
    win_requests: u32,
    past: VecDeque<f64>,
    /// Per page of the current write: verdict before the filter.
    scratch: Vec<Verdict>,
    /// The merge of an eviction's write-back (kept to reuse its buffer).
    merge_buf: Vec<FlashFp>,
    /// An eviction's victims with the records they move to flash (kept
    /// to reuse the buffer).
    evict_buf: Vec<(u32, (FlashFp, bool))>,
    /// Out-of-line dedup's view of the mapping, cleared per idle window
    /// (kept to reuse its tables).
    view: WindowView,
    /// What [`SmartDedup::prefetch_victim`] prefetches next.
    victim_stage: u8,
    /// Out-of-line dedup's per-item buffers (kept to reuse them): the
    /// write-backs an insertion causes, the LPNs mapped to the item's copy.
    idle_ops: Vec<WriteOp>,
    idle_mapped: Vec<Lpn>,
    /// Write order of each live copy (extents), and the counter.
    seq_of: SeqOf,
    seq: u32,
    stats: Stats,
}

impl SmartDedup {
    /// The engine's tables at a full device ([`super::memory_estimate`]):
    /// `2^prefix_bits` groups (allocated up front), the in-memory store at
    /// its capacity (node, group slot, LRU and refcount order), the
    /// skipped buffer, and per logical page an on-flash fingerprint plus
    /// its extent record (a hash-map entry, taken as 16 B).
    pub fn memory_estimate(ctx: &EngineContext) -> u64 {
        let Ok(p) = params::<SmartDedupParams>(ctx, "smartdedup", UNIT_KEYS) else { return 0 };
        if !p.memory_mb.is_finite() || p.memory_mb <= 0.0 || !p.skipped_mb.is_finite() {
            return 0;
        }
        let bits = p.prefix_bits.unwrap_or_else(|| prefix_bits_for(p.memory_mb));
        if !(1..=24).contains(&bits) {
            return 0;
        }
        let groups = 1u64 << bits;
        let (leaves, fp_bytes) = Self::index_costs(p.index, bits);
        let memory = p.memory_mb.max(0.0) * MB;
        let logical = ctx.logical_pages;
        let capacity = if memory > leaves as f64 { ((memory - leaves as f64) / fp_bytes as f64) as u64 } else { 0 };
        let node = std::mem::size_of::<Node>() as u64 + 12 + 48;
        let per_page = std::mem::size_of::<FlashFp>() as u64 + 16;
        (groups * std::mem::size_of::<Group>() as u64)
            .saturating_add(capacity.min(logical).saturating_mul(node))
            .saturating_add((p.skipped_mb.max(0.0) * MB) as u64)
            .saturating_add(logical.saturating_mul(per_page))
    }

    pub fn build(ctx: &EngineContext) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(Self::new(ctx)?))
    }

    fn new(ctx: &EngineContext) -> Result<Self, EngineError> {
        let p: SmartDedupParams = params(ctx, "smartdedup", UNIT_KEYS)?;
        let bad = |reason: String| EngineError::Params { engine: "smartdedup".into(), reason };
        if !p.memory_mb.is_finite() || p.memory_mb <= 0.0 {
            return Err(bad(format!("memory_mb = {}: must be a positive number", p.memory_mb)));
        }
        let bits = match p.prefix_bits {
            Some(b) if !(1..=24).contains(&b) => {
                return Err(bad(format!("prefix_bits = {b}: must be 1..=24")));
            }
            Some(b) => b,
            None => prefix_bits_for(p.memory_mb),
        };
        if p.index == Index::Btree && p.eviction == Eviction::GLru {
            return Err(bad(
                "index = \"btree\" indexes fingerprints one by one, it has no groups to evict: use eviction = \"lru\" or \"refcount\"".into(),
            ));
        }
        let (leaves, fp_bytes) = Self::index_costs(p.index, bits);
        let memory = p.memory_mb * MB;
        if memory <= leaves as f64 {
            return Err(bad(format!(
                "memory_mb = {}: must exceed the prefix index ({} leaves x {LEAF_BYTES} B = {:.2} MB; prefix_bits = {bits})",
                p.memory_mb,
                1u64 << bits,
                leaves as f64 / MB
            )));
        }
        if !p.skipped_mb.is_finite() || p.skipped_mb < 0.0 {
            return Err(bad(format!("skipped_mb = {}: must be a non-negative number", short_f64(p.skipped_mb))));
        }
        // Time-like parameters: bounded like `dedup.fingerprint` (the hash)
        // and to an hour (idle threshold, pacing period).
        for (k, v, unit, ns, max) in [
            ("hash_us", p.hash_us, "µs", 1e3, MAX_HASH_TIME_NS),
            ("idle_ms", p.idle_ms, "ms", 1e6, MAX_BACKGROUND_TIME_NS),
            ("period_s", p.period_s, "s", 1e9, MAX_BACKGROUND_TIME_NS),
        ] {
            check_time_param(k, v, unit, ns, max).map_err(bad)?;
        }
        for (k, v) in [("down", p.down), ("up", p.up), ("floor", p.floor)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(bad(format!("{k} = {v}: must be in [0, 1]")));
            }
        }
        if p.threshold == 0 || p.window == 0 || p.history == 0 {
            return Err(bad("threshold, window and history must be at least 1".into()));
        }
        let capacity = ((memory - leaves as f64) / fp_bytes as f64) as u64;
        let groups = 1usize << bits;
        Ok(SmartDedup {
            hash: Nanos((p.hash_us * 1e3).round() as u64),
            capacity,
            bits,
            skipped_bytes: (p.skipped_mb * MB) as u64,
            per_page: (u64::from(ctx.page_size) / FLASH_FP_BYTES).max(1),
            t_read: ctx.read_time,
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            mem_count: 0,
            groups: vec![Group { prev: NIL, next: NIL, ..Group::default() }; groups],
            group_lru: LruList { head: NIL, tail: NIL },
            node_lru: LruList { head: NIL, tail: NIL },
            by_refs: BTreeSet::new(),
            skipped: SkipRing::default(),
            skipped_of: FastMap::default(),
            skipped_next: 0,
            skipped_used: 0,
            sharers: FastMap::default(),
            pacer: Pacer::new(Nanos((p.period_s * 1e9).round() as u64), p.offline_pages),
            selectivity: 1.0,
            credit: 0.0,
            win_pages: 0,
            win_dups: 0,
            win_requests: 0,
            past: VecDeque::new(),
            scratch: Vec::new(),
            merge_buf: Vec::new(),
            evict_buf: Vec::new(),
            view: WindowView::default(),
            victim_stage: 0,
            idle_ops: Vec::new(),
            idle_mapped: Vec::new(),
            seq_of: SeqOf::default(),
            seq: 0,
            stats: Stats { min_selectivity: 1.0, ..Stats::default() },
            p,
        })
    }

    /// Memory of the index's leaves and of one fingerprint under `index`
    /// with `bits` prefix bits: the prefix tree pays [`LEAF_BYTES`] per
    /// leaf and [`FP_BYTES`] per fingerprint; the B-tree pays
    /// [`BTREE_FP_BYTES`] per fingerprint and nothing per group (its
    /// groups here are only the simulator's lookup structure).
    fn index_costs(index: Index, bits: u32) -> (u64, u64) {
        match index {
            Index::PrefixTree => ((1u64 << bits) * LEAF_BYTES, FP_BYTES),
            Index::Btree => (0, BTREE_FP_BYTES),
        }
    }

    /// The in-memory store's capacity in fingerprints.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Mean length of the non-empty group lists now (0 under the B-tree
    /// index or with an empty store).
    fn lists_at_end(&self) -> f64 {
        if self.p.index != Index::PrefixTree {
            return 0.0;
        }
        let nonempty = self.groups.iter().filter(|g| !g.mem.is_empty()).count();
        if nonempty == 0 {
            0.0
        } else {
            self.mem_count as f64 / nonempty as f64
        }
    }

    /// The store's fingerprint of a page fingerprint (content id); its
    /// top `prefix_bits` bits are the group (tests place contents in groups).
    #[inline]
    pub(super) fn fingerprint(f: u64) -> u64 {
        mix64(f ^ 0x5344_4544_5550) // "SDEDUP"
    }

    #[inline]
    fn group_of(&self, fp: u64) -> u32 {
        (fp >> (64 - self.bits)) as u32
    }

    /// Sorts group `g`'s on-flash array if preloading appended to it.
    fn sort_flash(&mut self, g: u32) {
        let gr = &mut self.groups[g as usize];
        if gr.main == UNSORTED {
            gr.flash.sort_unstable();
            gr.main = gr.flash.len() as u32;
        }
    }

    /// Hints the CPU to fetch group `g`'s in-memory list and the parts of
    /// its on-flash array where `fp` would be, in the main part and in the
    /// tail ([`lower_bound`]'s first guess in each; its struct must be
    /// cached to avoid a stall).
    fn prefetch_group(&self, g: u32, fp: u64) {
        let gr = &self.groups[g as usize];
        if let Some(m) = gr.mem.first() {
            crate::prefetch::prefetch(m);
        }
        let n = gr.main as usize;
        let guess = |len: usize| ((u128::from(fp << self.bits) * len as u128) >> 64) as usize;
        if n > 0 && n <= gr.flash.len() {
            crate::prefetch::prefetch(&gr.flash[guess(n).min(n - 1)]);
        }
        if let Some(tail) = gr.flash.get(n..).filter(|t| !t.is_empty()) {
            crate::prefetch::prefetch(&tail[guess(tail.len()).min(tail.len() - 1)]);
        }
    }

    /// Hints the CPU to fetch the FTL records of the on-flash candidates
    /// for `fp` in group `g` (the first entries of its run in the main part
    /// and in the tail), whose liveness out-of-line dedup checks. Searches
    /// the arrays, so it is worth it only once [`Self::prefetch_group`]
    /// fetched them.
    fn prefetch_candidates(&self, ftl: &Ftl, g: u32, fp: u64) {
        let gr = &self.groups[g as usize];
        if gr.main as usize > gr.flash.len() {
            return;
        }
        let (main, tail) = gr.flash.split_at(gr.main as usize);
        for part in [main, tail] {
            let s = lower_bound(part, fp, self.bits);
            if let Some(f) = part.get(s).filter(|f| f.fp == fp && f.entry != DEAD) {
                ftl.prefetch_copy(f.entry);
            }
        }
    }

    /// Live fingerprints in group `g`'s on-flash array (tombstones not
    /// counted: the array's size on flash).
    fn flash_live(&self, g: u32) -> usize {
        let gr = &self.groups[g as usize];
        gr.flash.len() - gr.dead as usize
    }

    /// Metadata pages of a group array of `n` fingerprints.
    fn pages_of(&self, n: usize) -> u64 {
        (n as u64).div_ceil(self.per_page)
    }

    /// Metadata page number of page `i` of group `g`'s array.
    fn meta_page(g: u32, i: u64) -> u64 {
        (u64::from(g) << 20) | i
    }

    // ----- LRU lists -----

    fn group_unlink(&mut self, g: u32) {
        let (prev, next) = (self.groups[g as usize].prev, self.groups[g as usize].next);
        if prev != NIL {
            self.groups[prev as usize].next = next;
        } else {
            self.group_lru.head = next;
        }
        if next != NIL {
            self.groups[next as usize].prev = prev;
        } else {
            self.group_lru.tail = prev;
        }
        let gr = &mut self.groups[g as usize];
        gr.prev = NIL;
        gr.next = NIL;
    }

    /// Whether group `g` is in the group LRU list.
    fn group_in_lru(&self, g: u32) -> bool {
        self.groups[g as usize].prev != NIL || self.group_lru.head == g
    }

    fn group_touch(&mut self, g: u32) {
        if self.group_in_lru(g) {
            self.group_unlink(g);
        }
        let head = self.group_lru.head;
        let gr = &mut self.groups[g as usize];
        gr.next = head;
        gr.prev = NIL;
        if head != NIL {
            self.groups[head as usize].prev = g;
        } else {
            self.group_lru.tail = g;
        }
        self.group_lru.head = g;
    }

    fn node_unlink(&mut self, n: u32) {
        let (prev, next) = (self.nodes[n as usize].prev, self.nodes[n as usize].next);
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else if self.node_lru.head == n {
            self.node_lru.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else if self.node_lru.tail == n {
            self.node_lru.tail = prev;
        }
        self.nodes[n as usize].prev = NIL;
        self.nodes[n as usize].next = NIL;
    }

    fn node_touch(&mut self, n: u32) {
        self.node_unlink(n);
        let head = self.node_lru.head;
        self.nodes[n as usize].next = head;
        if head != NIL {
            self.nodes[head as usize].prev = n;
        } else {
            self.node_lru.tail = n;
        }
        self.node_lru.head = n;
    }

    /// Marks node `n` (in group `g`) used: a hit or an insertion.
    fn touch(&mut self, n: u32, g: u32) {
        match self.p.eviction {
            Eviction::GLru => self.group_touch(g),
            Eviction::Lru => self.node_touch(n),
            Eviction::Refcount => {}
        }
    }

    // ----- memory store -----

    /// The in-memory node holding `fp`, if any.
    fn mem_find(&self, g: u32, fp: u64) -> Option<u32> {
        let mem = &self.groups[g as usize].mem;
        mem.binary_search_by_key(&fp, |&(f, _)| f).ok().map(|i| mem[i].1)
    }

    /// Removes node `n` from memory (not from flash).
    fn mem_remove(&mut self, n: u32) {
        let node = self.nodes[n as usize];
        let g = node.group;
        let mem = &mut self.groups[g as usize].mem;
        if let Ok(i) = mem.binary_search_by_key(&node.fp, |&(f, _)| f) {
            mem.remove(i);
        }
        match self.p.eviction {
            Eviction::GLru => {
                if self.groups[g as usize].mem.is_empty() && self.group_in_lru(g) {
                    self.group_unlink(g);
                }
            }
            Eviction::Lru => self.node_unlink(n),
            Eviction::Refcount => {
                self.by_refs.remove(&(node.refs, n));
            }
        }
        self.free_nodes.push(n);
        self.mem_count -= 1;
    }

    /// Inserts `fp -> entry` in memory (replacing the entry of an existing
    /// node), evicting first if the store is full; eviction write-backs go
    /// to `ops` at `when`. `fresh`: `entry` was just programmed with write
    /// order `seq` (no record of it can be on flash).
    #[allow(clippy::too_many_arguments)]
    fn mem_insert(
        &mut self,
        fp: u64,
        content: ContentId,
        entry: EntryId,
        seq: u32,
        fresh: bool,
        ops: &mut Vec<WriteOp>,
        when: When,
    ) {
        let g = self.group_of(fp);
        if let Some(n) = self.mem_find(g, fp) {
            let node = &mut self.nodes[n as usize];
            node.entry = entry;
            node.content = content;
            node.seq = seq;
            node.fresh = fresh;
            self.touch(n, g);
            return;
        }
        if self.mem_count >= self.capacity {
            while self.mem_count >= self.capacity {
                if !self.evict(ops, when) {
                    return;
                }
            }
        } else {
            self.prefetch_victim();
        }
        let node = Node { fp, content, entry, group: g, prev: NIL, next: NIL, refs: 1, seq, fresh };
        let n = match self.free_nodes.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        let mem = &mut self.groups[g as usize].mem;
        let i = mem.partition_point(|&(f, _)| f < fp);
        mem.insert(i, (fp, n));
        self.mem_count += 1;
        self.stats.peak_mem_fps = self.stats.peak_mem_fps.max(self.mem_count);
        if self.p.eviction == Eviction::Refcount {
            self.by_refs.insert((1, n));
        }
        self.touch(n, g);
    }

    /// Evicts per the policy; false if nothing could be evicted.
    fn evict(&mut self, ops: &mut Vec<WriteOp>, when: When) -> bool {
        // The victims and what moves to flash, in a buffer kept between
        // evictions (one eviction per group-full of insertions).
        let mut moved = std::mem::take(&mut self.evict_buf);
        moved.clear();
        match self.p.eviction {
            Eviction::GLru => {
                let g = self.group_lru.tail;
                if g != NIL {
                    moved.extend(self.groups[g as usize].mem.iter().map(|&(_, n)| (n, self.flash_record(n))));
                }
            }
            Eviction::Lru => {
                if self.node_lru.tail != NIL {
                    moved.push((self.node_lru.tail, self.flash_record(self.node_lru.tail)));
                }
            }
            Eviction::Refcount => {
                if let Some(&(_, n)) = self.by_refs.iter().next() {
                    moved.push((n, self.flash_record(n)));
                }
            }
        }
        let Some(&(first, _)) = moved.first() else {
            self.evict_buf = moved;
            return false;
        };
        let g = self.nodes[first as usize].group;
        self.stats.evictions += 1;
        self.stats.evicted_fps += moved.len() as u64;
        for &(n, _) in &moved {
            self.mem_remove(n);
        }
        if self.p.on_flash {
            // One read-merge-write of the group's on-flash array.
            let before = self.flash_live(g);
            self.stats.evict_meta_reads += self.pages_of(before);
            self.charge_group_read(g, before, ops, when);
            // The group on flash becomes the set of its live fingerprints
            // and the moved ones (a moved fingerprint already there, as a
            // promoted one is, is not added twice). The simulator adds them
            // to the array's tail and merges the tail into the sorted main
            // part, without the tombstones, once it is long
            // ([`Group::flash`]): the same set as merging at every
            // write-back.
            self.sort_flash(g);
            let bits = self.bits;
            let gr = &mut self.groups[g as usize];
            for &(_, (m, fresh)) in &moved {
                gr.add(m, fresh, bits);
            }
            gr.compact_if_long(&mut self.merge_buf);
            let after = self.pages_of(self.flash_live(g));
            self.victim_stage = 0;
            if self.p.eviction == Eviction::GLru && self.group_lru.tail != NIL {
                crate::prefetch::prefetch(&self.groups[self.group_lru.tail as usize]);
            }
            for i in 0..after {
                ops.push(WriteOp { when, op: FlashOp::MetaProgram(Self::meta_page(g, i)), gates: false });
            }
            self.stats.meta_programs += after;
            self.stats.evict_meta_programs += after;
        }
        self.evict_buf = moved;
        true
    }

    /// Node `n`'s record as an eviction writes it to flash, and whether it
    /// was made for a copy just programmed ([`Node::fresh`]).
    fn flash_record(&self, n: u32) -> (FlashFp, bool) {
        let node = &self.nodes[n as usize];
        (FlashFp { fp: node.fp, entry: node.entry, content: node.content, seq: node.seq }, node.fresh)
    }

    /// Hints the CPU to fetch what the next `g-lru` eviction touches, one
    /// stage per insertion that did not evict (its group struct was
    /// prefetched by the eviction before): the group's list and the tail of
    /// its on-flash array, then the victims' nodes. The victim may change
    /// before it is evicted; a wasted hint costs nothing else.
    fn prefetch_victim(&mut self) {
        let t = self.group_lru.tail;
        if self.p.eviction != Eviction::GLru || t == NIL || !self.p.on_flash {
            return;
        }
        let gr = &self.groups[t as usize];
        match self.victim_stage {
            0 => {
                if let Some(m) = gr.mem.first() {
                    crate::prefetch::prefetch(m);
                }
                if let Some(f) = gr.flash.get(gr.main as usize) {
                    crate::prefetch::prefetch(f);
                }
            }
            1 => {
                for &(_, n) in &gr.mem {
                    crate::prefetch::prefetch(&self.nodes[n as usize]);
                }
            }
            _ => return,
        }
        self.victim_stage += 1;
    }

    fn charge_group_read(&mut self, g: u32, len: usize, ops: &mut Vec<WriteOp>, when: When) {
        let pages = self.pages_of(len);
        for i in 0..pages {
            ops.push(WriteOp { when, op: FlashOp::MetaRead(Self::meta_page(g, i)), gates: false });
        }
        self.stats.meta_reads += pages;
    }

    // ----- skipped buffer -----

    fn skip(&mut self, lpn: Lpn, content: ContentId, fp: u64, entry: EntryId, fingerprinted: bool) {
        if !self.p.offline || !self.p.on_flash && fingerprinted {
            // Without out-of-line dedup nothing reads the buffer; without
            // the flash level a fingerprinted miss has nothing to find.
            return;
        }
        let cost = if fingerprinted { SKIPPED_BYTES_FP } else { SKIPPED_BYTES };
        if self.skipped_used + cost > self.skipped_bytes {
            self.stats.skipped_overflow += 1;
            return;
        }
        self.skipped_used += cost;
        let k = self.skipped_next;
        self.skipped_next += 1;
        self.skipped.push(k, Skipped { lpn, content, fp, entry, fingerprinted });
        self.skipped_of.insert(lpn, k);
        self.sharers.entry(entry).or_default();
    }

    /// Drops `lpn`'s skipped-buffer entry, if any and not for copy `now`
    /// (the copy the LPN maps to after this write): the LPN was written
    /// again (§3.3: the entry is replaced by the new one, or goes if the
    /// new write needs no out-of-line dedup). Pages in-line deduplicated
    /// against the old copy stay on it.
    fn unskip(&mut self, lpn: Lpn, now: EntryId) {
        let Some(&k) = self.skipped_of.get(&lpn) else { return };
        if self.skipped.get(k).is_some_and(|s| s.entry == now) {
            return;
        }
        self.skipped_of.remove(&lpn);
        if let Some(s) = self.skipped.remove(k) {
            self.skipped_used -= if s.fingerprinted { SKIPPED_BYTES_FP } else { SKIPPED_BYTES };
            self.sharers.remove(&s.entry);
            self.stats.skipped_replaced += 1;
        }
    }

    /// Whether the next write request is fingerprinted in-line.
    fn selected(&mut self) -> bool {
        if !self.p.adaptive {
            return true;
        }
        self.credit += self.selectivity;
        if self.credit >= 1.0 - 1e-9 {
            self.credit -= 1.0;
            true
        } else {
            false
        }
    }

    /// Adaptive selectivity bookkeeping after a write (§4.4): `hashed`
    /// pages of the write were fingerprinted in line, `dups` of them were
    /// deduplicated. The window's ratio is over fingerprinted pages only:
    /// a page not fingerprinted says nothing about the duplication level
    /// (counting it would make every cut of the selectivity lower the
    /// measured ratio and cut again). A window with no fingerprinted page
    /// measures nothing: the selectivity stays and the history is not fed.
    fn observe(&mut self, hashed: u64, dups: u64) {
        if !self.p.adaptive {
            return;
        }
        self.win_pages += hashed;
        self.win_dups += dups;
        self.win_requests += 1;
        if self.win_requests < self.p.window {
            return;
        }
        if self.win_pages > 0 {
            let ratio = self.win_dups as f64 / self.win_pages as f64;
            if !self.past.is_empty() {
                let mean = self.past.iter().sum::<f64>() / self.past.len() as f64;
                if ratio < mean {
                    self.selectivity = (self.selectivity - self.p.down).max(self.p.floor);
                } else if ratio > mean {
                    self.selectivity = (self.selectivity + self.p.up).min(1.0);
                }
                self.stats.min_selectivity = self.stats.min_selectivity.min(self.selectivity);
            }
            self.past.push_back(ratio);
            if self.past.len() > self.p.history as usize {
                self.past.pop_front();
            }
        }
        self.win_pages = 0;
        self.win_dups = 0;
        self.win_requests = 0;
    }

    /// Another live copy of `fp`/`content` than `not`: memory first, then
    /// the group's flash array (a timed read of its pages). Liveness is
    /// judged on `view`: the FTL as this idle window's remaps leave it.
    #[allow(clippy::too_many_arguments)]
    fn find_other(
        &mut self,
        ftl: &Ftl,
        view: &WindowView,
        fp: u64,
        content: ContentId,
        not: EntryId,
        at: Nanos,
        out: &mut Background,
    ) -> (Option<(EntryId, u32)>, u64) {
        let g = self.group_of(fp);
        if let Some(n) = self.mem_find(g, fp) {
            let node = self.nodes[n as usize];
            if node.entry != not && view.live(ftl, node.entry, node.content) {
                if node.content == content {
                    return (Some((node.entry, node.seq)), 0);
                }
                // A real collision the engine would trust (see `lookup`).
                self.stats.false_matches += 1;
                return (None, 0);
            }
        }
        if !self.p.on_flash || self.flash_live(g) == 0 {
            return (None, 0);
        }
        self.sort_flash(g);
        let pages = self.pages_of(self.flash_live(g));
        for i in 0..pages {
            out.ops.push((at, FlashOp::MetaRead(Self::meta_page(g, i))));
        }
        self.stats.meta_reads += pages;
        self.stats.offline_meta_reads += pages;
        let gr = &self.groups[g as usize];
        let hit = gr
            .first_match(fp, self.bits, |f| f.entry != DEAD && f.entry != not && view.live(ftl, f.entry, f.content))
            .map(|i| gr.flash[i]);
        match hit {
            Some(f) if f.content == content => (Some((f.entry, f.seq)), pages),
            Some(_) => {
                self.stats.false_matches += 1;
                (None, pages)
            }
            None => (None, pages),
        }
    }
}

/// The mapping as the remaps decided so far in one idle window leave it.
/// The simulator executes remaps only after [`Engine::idle`] returns, so
/// without this view a later item would see a copy an earlier remap is
/// about to free as live (and remap pages onto it: the remap is then
/// skipped and nothing is saved), and would miss the pages an earlier
/// remap moved onto its own copy.
#[derive(Default)]
struct WindowView {
    /// LPNs remapped in this window, to their new copy.
    moved: FastMap<Lpn, EntryId>,
    /// Change of each copy's reference count in this window.
    delta: FastMap<EntryId, i64>,
}

impl WindowView {
    fn lookup(&self, ftl: &Ftl, lpn: Lpn) -> Option<EntryId> {
        self.moved.get(&lpn).copied().or_else(|| ftl.lookup(lpn))
    }

    fn refs(&self, ftl: &Ftl, e: EntryId) -> i64 {
        ftl.entry_live(e).map_or(0, |x| i64::from(x.refs)) + self.delta.get(&e).copied().unwrap_or(0)
    }

    fn live(&self, ftl: &Ftl, e: EntryId, content: ContentId) -> bool {
        is_live_copy(ftl, e, content) && self.refs(ftl, e) > 0
    }

    /// Empties the view for a new window, keeping its tables unless a
    /// long window (a drain) grew them large: clearing costs their size.
    fn clear(&mut self) {
        if self.moved.capacity().max(self.delta.capacity()) > 4096 {
            *self = WindowView::default();
        } else {
            self.moved.clear();
            self.delta.clear();
        }
    }

    fn remap(&mut self, lpn: Lpn, from: EntryId, to: EntryId) {
        self.moved.insert(lpn, to);
        *self.delta.entry(from).or_default() -= 1;
        *self.delta.entry(to).or_default() += 1;
    }
}

impl Engine for SmartDedup {
    fn name(&self) -> &'static str {
        "smartdedup"
    }

    fn hash_time(&self) -> Option<Nanos> {
        Some(self.hash)
    }

    fn lookup(&mut self, ftl: &Ftl, pages: &[WritePage], io: &mut EngineIo) {
        let selected = self.selected();
        self.scratch.clear();
        for p in pages {
            if !selected || p.repeat {
                io.hashed.push(selected);
                self.scratch.push(Verdict::Unique);
                continue;
            }
            io.hashed.push(true);
            let fp = Self::fingerprint(p.fingerprint);
            let g = self.group_of(fp);
            if self.p.index == Index::PrefixTree {
                let len = self.groups[g as usize].mem.len() as u64;
                self.stats.list_lookups += 1;
                self.stats.list_len_sum += len;
                self.stats.list_len_max = self.stats.list_len_max.max(len);
            }
            let v = match self.mem_find(g, fp) {
                Some(n) if is_live_copy(ftl, self.nodes[n as usize].entry, self.nodes[n as usize].content) => {
                    if self.nodes[n as usize].content == p.content {
                        Verdict::Duplicate(self.nodes[n as usize].entry)
                    } else {
                        // SmartDedup trusts its SHA-1 (no verify): a real
                        // collision would be merged, corrupting the page.
                        // Counted, and written as unique (docs/serve.md).
                        self.stats.false_matches += 1;
                        Verdict::Unique
                    }
                }
                _ => Verdict::Unique,
            };
            self.scratch.push(v);
        }
        // The iDedup filter: runs of fewer than `threshold` duplicate pages
        // whose copies are physically contiguous are written normally.
        let t = self.p.threshold as usize;
        let mut k = 0;
        while k < self.scratch.len() {
            let Verdict::Duplicate(first) = self.scratch[k] else {
                io.verdicts.push(Verdict::Unique);
                k += 1;
                continue;
            };
            let run = if t <= 1 {
                1
            } else {
                let mut prev = self.seq_of.get(first);
                1 + self.scratch[k + 1..]
                    .iter()
                    .take_while(|v| {
                        let Verdict::Duplicate(e) = v else { return false };
                        let pos = self.seq_of.get(*e);
                        let next = matches!((prev, pos), (Some(a), Some(b)) if b == a.wrapping_add(1));
                        prev = pos;
                        next
                    })
                    .count()
            };
            let keep = run >= t;
            if !keep {
                self.stats.filtered_pages += run as u64;
            }
            for j in k..k + run {
                io.verdicts.push(if keep { self.scratch[j] } else { Verdict::Unique });
            }
            k += run;
        }
    }

    fn commit(&mut self, ftl: &Ftl, pages: &[WritePage], entries: &[EntryId], programmed: &[bool], io: &mut EngineIo) {
        let mut dups = 0;
        // Extents (§4.5's fragmentation measure): a write's pages form one
        // extent per run whose copies were written one after another.
        let mut prev: Option<u32> = None;
        let mut extents = 0u64;
        for (k, p) in pages.iter().enumerate() {
            let pos = if programmed[k] {
                self.seq = self.seq.wrapping_add(1);
                self.seq_of.insert(entries[k], self.seq);
                Some(self.seq)
            } else if p.repeat {
                None
            } else {
                self.seq_of.get(entries[k])
            };
            if pos.is_none() || prev.is_none() || pos != prev.map(|x| x.wrapping_add(1)) {
                extents += 1;
            }
            prev = pos;
        }
        self.stats.extents += extents;
        self.stats.writes += 1;
        for (k, p) in pages.iter().enumerate() {
            let e = entries[k];
            let when = When::Hashed(k as u32);
            if p.repeat {
                continue;
            }
            self.unskip(p.lpn, e);
            let hashed = io.hashed[k];
            match (io.verdicts[k], programmed[k]) {
                (Verdict::Duplicate(d), false) => {
                    dups += 1;
                    self.stats.inline_hits += 1;
                    let fp = Self::fingerprint(p.fingerprint);
                    let g = self.group_of(fp);
                    if let Some(n) = self.mem_find(g, fp) {
                        self.touch(n, g);
                        if self.p.eviction == Eviction::Refcount {
                            let r = self.nodes[n as usize].refs;
                            self.by_refs.remove(&(r, n));
                            self.nodes[n as usize].refs = r + 1;
                            self.by_refs.insert((r + 1, n));
                        }
                    }
                    if let Some(s) = self.sharers.get_mut(&d) {
                        s.push(p.lpn);
                    }
                }
                (Verdict::Duplicate(_), true) => {
                    // A hit the policy rewrote: a second copy on purpose.
                }
                (Verdict::Unique, _) if hashed => {
                    let fp = Self::fingerprint(p.fingerprint);
                    let g = self.group_of(fp);
                    let known = self
                        .mem_find(g, fp)
                        .is_some_and(|n| is_live_copy(ftl, self.nodes[n as usize].entry, p.content));
                    if known {
                        // A filtered duplicate: written again by design.
                        continue;
                    }
                    self.stats.inline_misses += 1;
                    let mut ops = std::mem::take(&mut io.ops);
                    let seq = self.seq_of.get(e).unwrap_or(0);
                    self.mem_insert(fp, p.content, e, seq, programmed[k], &mut ops, when);
                    io.ops = ops;
                    self.skip(p.lpn, p.content, p.fingerprint, e, true);
                }
                (Verdict::Unique, _) => {
                    self.stats.unhashed_pages += 1;
                    self.skip(p.lpn, p.content, p.fingerprint, e, false);
                }
            }
        }
        self.stats.hashed_pages += io.hashed.iter().filter(|&&h| h).count() as u64;
        let fingerprinted = pages.iter().zip(&io.hashed).filter(|(p, &h)| h && !p.repeat).count() as u64;
        self.observe(fingerprinted, dups);
    }

    fn preload(&mut self, content: ContentId, fingerprint: u64, entry: EntryId) {
        self.seq = self.seq.wrapping_add(1);
        self.seq_of.insert(entry, self.seq);
        if self.p.warm_start && self.p.on_flash {
            let fp = Self::fingerprint(fingerprint);
            let g = self.group_of(fp) as usize;
            // Appended; sorted at the group's first use (`sort_flash`), which
            // orders it as inserting each in place would.
            let gr = &mut self.groups[g];
            gr.flash.push(FlashFp { fp, entry, content, seq: self.seq });
            gr.main = UNSORTED;
        }
    }

    fn forget(&mut self, content: ContentId, fingerprint: u64, entry: EntryId) {
        let fp = Self::fingerprint(fingerprint);
        let g = self.group_of(fp);
        if let Some(n) = self.mem_find(g, fp) {
            if self.nodes[n as usize].entry == entry {
                self.mem_remove(n);
            }
        }
        // The flash array's entry becomes a tombstone; the array on flash
        // is cleaned at its next write-back.
        self.sort_flash(g);
        let bits = self.bits;
        self.groups[g as usize].kill(fp, entry, bits);
        self.sharers.remove(&entry);
        self.seq_of.remove(entry);
        let _ = content;
    }

    fn prefetch(&self, _ftl: &Ftl, fingerprint: u64, step: u32) {
        let fp = Self::fingerprint(fingerprint);
        let g = self.group_of(fp);
        match step {
            0 => crate::prefetch::prefetch(&self.groups[g as usize]),
            1 => {
                if let Some(m) = self.groups[g as usize].mem.first() {
                    crate::prefetch::prefetch(m);
                }
            }
            _ => {
                if let Some(n) = self.mem_find(g, fp) {
                    crate::prefetch::prefetch(&self.nodes[n as usize]);
                }
            }
        }
    }

    fn prefetch_forget(&self, fingerprint: u64, step: u32) {
        let fp = Self::fingerprint(fingerprint);
        let g = self.group_of(fp);
        match step {
            0 => crate::prefetch::prefetch(&self.groups[g as usize]),
            _ => self.prefetch_group(g, fp),
        }
    }

    fn wants_idle(&self) -> bool {
        self.p.offline && !self.skipped.is_empty()
    }

    fn idle_threshold(&self) -> Nanos {
        match self.p.pacing {
            // Every gap after a host arrival is offered.
            Pacing::Symbiotic => Nanos::ZERO,
            Pacing::Idle => Nanos((self.p.idle_ms * 1e6).round() as u64),
        }
    }

    fn idle(&mut self, ftl: &Ftl, window: IdleWindow, out: &mut Background) {
        let drain = window.end.is_none() && self.p.drain_at_end;
        let mut view = std::mem::take(&mut self.view);
        view.clear();
        let mut x = window.start;
        while let Some((k, s)) = self.skipped.first() {
            let s = s.clone();
            // A copy still waiting to be placed (`allocation = "dynamic"`)
            // is in the controller's write buffer, not on flash yet: it and
            // everything skipped after it wait for a later window (the
            // buffer is processed in write order).
            if !ftl.is_placed(s.entry) && is_live_copy(ftl, s.entry, s.content) {
                break;
            }
            // The next items' structures fetched while this one runs, one
            // link of each chain per item: three ahead the group, two
            // ahead what the group points to and the FTL's records of the
            // page, one ahead the FTL records of the on-flash candidates
            // (found in the arrays fetched the item before).
            {
                let mut ahead = self.skipped.after_first();
                if let Some(n1) = ahead.next() {
                    let fp1 = Self::fingerprint(n1.fp);
                    self.prefetch_candidates(ftl, self.group_of(fp1), fp1);
                    if let Some(n2) = ahead.next() {
                        let fp2 = Self::fingerprint(n2.fp);
                        self.prefetch_group(self.group_of(fp2), fp2);
                        ftl.prefetch_copy(n2.entry);
                        ftl.prefetch_mapping(n2.lpn.0, 1);
                        if let Some(n3) = ahead.next() {
                            crate::prefetch::prefetch(&self.groups[self.group_of(Self::fingerprint(n3.fp)) as usize]);
                        }
                    }
                }
            }
            let at = if drain {
                x
            } else if self.p.pacing == Pacing::Symbiotic {
                // Back to back, none started once the host arrives again.
                if window.end.is_some_and(|e| x >= e) {
                    break;
                }
                x
            } else {
                match self.pacer.start(x, window.end) {
                    Some(at) => at,
                    None => break,
                }
            };
            self.skipped.remove(k);
            self.skipped_of.remove(&s.lpn);
            self.skipped_used -= if s.fingerprinted { SKIPPED_BYTES_FP } else { SKIPPED_BYTES };
            let sharers = self.sharers.remove(&s.entry).unwrap_or_default();
            let live = view.live(ftl, s.entry, s.content);
            let mut mapped = std::mem::take(&mut self.idle_mapped);
            mapped.clear();
            mapped.extend(std::iter::once(s.lpn).chain(sharers).filter(|&l| view.lookup(ftl, l) == Some(s.entry)));
            mapped.sort_unstable();
            mapped.dedup();
            if !live || mapped.is_empty() {
                self.stats.offline_dropped += 1;
                self.idle_mapped = mapped;
                continue;
            }
            self.stats.offline_pages += 1;
            let mut t = at;
            if !s.fingerprinted {
                out.ops.push((t, FlashOp::DataRead(ftl.entry(s.entry).ppn)));
                self.stats.offline_data_reads += 1;
                t += self.t_read + self.hash;
            }
            let fp = Self::fingerprint(s.fp);
            let (found, pages) = self.find_other(ftl, &view, fp, s.content, s.entry, t, out);
            t += Nanos(self.t_read.0 * pages);
            let mut ops = std::mem::take(&mut self.idle_ops);
            ops.clear();
            match found {
                Some((to, seq)) => {
                    for &lpn in &mapped {
                        out.remaps.push(Remap { lpn, from: s.entry, to });
                        view.remap(lpn, s.entry, to);
                    }
                    self.stats.offline_remaps += mapped.len() as u64;
                    // A page is saved when its copy loses its last
                    // reference; the in-line hits among `mapped` were
                    // counted as saved when they were written.
                    if view.refs(ftl, s.entry) == 0 {
                        self.stats.offline_dedup_pages += 1;
                    }
                    // Pages moved onto a copy still waiting in the buffer
                    // move with it when that copy is processed.
                    if let Some(list) = self.sharers.get_mut(&to) {
                        list.extend_from_slice(&mapped);
                    }
                    if pages > 0 {
                        self.stats.promotions += 1;
                    }
                    self.mem_insert(fp, s.content, to, seq, false, &mut ops, When::Arrival);
                }
                None if !s.fingerprinted => {
                    let seq = self.seq_of.get(s.entry).unwrap_or(0);
                    self.mem_insert(fp, s.content, s.entry, seq, false, &mut ops, When::Arrival)
                }
                None => {}
            }
            // Write-backs an insertion caused run at this item's time.
            out.ops.extend(ops.iter().map(|op| (t, op.op)));
            self.idle_ops = ops;
            self.idle_mapped = mapped;
            x = t.max(at + Nanos(1));
        }
        self.view = view;
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        vec![
            ("engine_capacity_fps", self.capacity as f64),
            ("engine_prefix_bits", f64::from(self.bits)),
            ("engine_peak_memory_fps", s.peak_mem_fps as f64),
            ("engine_hashed_pages", s.hashed_pages as f64),
            ("engine_unhashed_pages", s.unhashed_pages as f64),
            ("engine_inline_hits", s.inline_hits as f64),
            ("engine_false_matches", s.false_matches as f64),
            ("engine_inline_misses", s.inline_misses as f64),
            ("engine_filtered_pages", s.filtered_pages as f64),
            ("engine_evictions", s.evictions as f64),
            ("engine_evicted_fps", s.evicted_fps as f64),
            ("engine_meta_reads", s.meta_reads as f64),
            ("engine_meta_programs", s.meta_programs as f64),
            ("engine_evict_meta_reads", s.evict_meta_reads as f64),
            ("engine_evict_meta_programs", s.evict_meta_programs as f64),
            ("engine_offline_meta_reads", s.offline_meta_reads as f64),
            ("engine_list_lookups", s.list_lookups as f64),
            ("engine_list_len_sum", s.list_len_sum as f64),
            ("engine_list_len_max", s.list_len_max as f64),
            ("engine_list_len_full", self.lists_at_end()),
            ("engine_offline_pages", s.offline_pages as f64),
            ("engine_offline_data_reads", s.offline_data_reads as f64),
            ("engine_offline_dedup_pages", s.offline_dedup_pages as f64),
            ("engine_offline_remaps", s.offline_remaps as f64),
            ("engine_offline_dropped", s.offline_dropped as f64),
            ("engine_skipped_overflow", s.skipped_overflow as f64),
            ("engine_skipped_replaced", s.skipped_replaced as f64),
            ("engine_skipped_left", self.skipped.len() as f64),
            ("engine_promotions", s.promotions as f64),
            ("engine_selectivity", self.selectivity),
            ("engine_selectivity_min", s.min_selectivity),
            ("engine_extents", s.extents as f64),
            ("engine_writes", s.writes as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group's on-flash set kept as a sorted main part plus a tail
    /// behaves as the one sorted array the engine kept before (every
    /// eviction merged its fingerprints in, deduplicated, without the
    /// tombstones): after random additions (some of records already
    /// there, as a promoted fingerprint evicted again is), tombstones and
    /// compactions, the live count and the first match of every query are
    /// those of the reference array.
    #[test]
    fn group_tail_is_the_merged_array() {
        let bits = 4;
        let top = 3u64 << (64 - bits);
        let rec = |i: u64| FlashFp {
            // Few distinct fingerprints: runs of equal ones in both parts.
            fp: top | (mix64(i % 23) >> bits),
            entry: (mix64(i + 7) % 40) as u32,
            content: ContentId((i % 23) as u32),
            seq: (i % 5) as u32,
        };
        let mut g = Group::default();
        let mut buf = Vec::new();
        let mut reference: Vec<FlashFp> = Vec::new();
        let (mut kills, mut dups) = (0, 0);
        for step in 0..3000u64 {
            let r = mix64(step * 31 + 1);
            if r % 3 == 0 && !reference.is_empty() {
                // Free a copy: the first live record of its fingerprint.
                let victim = reference[(r / 3) as usize % reference.len()];
                let want = reference.iter().position(|f| f.fp == victim.fp && f.entry == victim.entry);
                assert_eq!(g.kill(victim.fp, victim.entry, bits), want.is_some());
                reference.remove(want.unwrap());
                kills += 1;
            } else {
                // Evict a record; every fifth is one already there.
                let m = if r % 5 == 1 && !reference.is_empty() {
                    dups += 1;
                    reference[(r / 5) as usize % reference.len()]
                } else {
                    rec(r % 997)
                };
                g.add(m, false, bits);
                g.compact_if_long(&mut buf);
                if let Err(i) = reference.binary_search(&m) {
                    reference.insert(i, m);
                }
            }
            assert_eq!(g.flash.len() - g.dead as usize, reference.len(), "step {step}");
            for q in 0..23u64 {
                let fp = top | (mix64(q) >> bits);
                for not in [40u32, (r % 40) as u32] {
                    let ok = |f: &FlashFp| f.entry != DEAD && f.entry != not;
                    let got = g.first_match(fp, bits, ok).map(|i| g.flash[i]);
                    let want = reference.iter().find(|f| f.fp == fp && ok(f)).copied();
                    assert_eq!(got, want, "step {step} query {q}");
                }
            }
        }
        assert!(kills > 500 && dups > 100, "{kills} kills, {dups} duplicate additions");
    }

    /// A group is one cache line, aligned (what [`Group`]'s layout is
    /// for), and `UNSORTED` marks an array preloading appended to until
    /// its first use sorts it.
    #[test]
    fn a_group_is_one_cache_line() {
        assert_eq!((std::mem::size_of::<Group>(), std::mem::align_of::<Group>()), (64, 64));
        let tables = toml::Table::new();
        let ctx = EngineContext { tables: &tables, page_size: 4096, read_time: Nanos(50_000), logical_pages: 1 << 20 };
        let mut e = SmartDedup::new(&ctx).unwrap();
        let fp = |c: u32| SmartDedup::fingerprint(u64::from(c));
        let g = e.group_of(fp(1));
        let same: Vec<u32> = (2..5000).filter(|&c| e.group_of(fp(c)) == g).take(3).collect();
        for (i, &c) in [1].iter().chain(&same).rev().enumerate() {
            e.preload(ContentId(c), u64::from(c), i as u32);
        }
        assert_eq!(e.groups[g as usize].main, UNSORTED);
        e.sort_flash(g);
        let gr = &e.groups[g as usize];
        assert_eq!(gr.main as usize, gr.flash.len());
        assert!(gr.flash.windows(2).all(|w| w[0] <= w[1]));
    }

    /// The guessed-and-galloped search finds what a binary search finds,
    /// on groups of every size, with runs of equal fingerprints, for keys
    /// present, absent, below and above every entry.
    #[test]
    fn lower_bound_is_the_partition_point() {
        for bits in [1u32, 4, 14, 24] {
            let top = 5u64 % (1 << bits);
            for n in [0usize, 1, 2, 3, 5, 8, 15, 16, 17, 32, 33, 100, 300, 1000] {
                let mut flash: Vec<FlashFp> = (0..n as u64)
                    .map(|i| {
                        // Clustered and repeated fingerprints: a poor guess.
                        let rest = mix64(i / 3) >> (bits + (i % 7) as u32);
                        FlashFp { fp: (top << (64 - bits)) | rest, entry: i as u32, content: ContentId(0), seq: 0 }
                    })
                    .collect();
                flash.sort_unstable();
                let mut keys: Vec<u64> = flash.iter().map(|f| f.fp).collect();
                keys.extend(flash.iter().map(|f| f.fp.wrapping_add(1)));
                keys.extend([top << (64 - bits), (top << (64 - bits)) | ((1u64 << (64 - bits)) - 1)]);
                keys.extend((0..200u64).map(|i| (top << (64 - bits)) | (mix64(i + 999) >> bits)));
                for fp in keys {
                    let want = flash.partition_point(|f| f.fp < fp);
                    assert_eq!(lower_bound(&flash, fp, bits), want, "bits {bits} n {n} fp {fp:x}");
                }
            }
        }
    }
}
