//! FAD: fragmentation-aware data layout for deduplication-based SSDs
//! (Lin et al., `../shared/seeds/000_*.txt`, Section III), and its
//! ablations (Section IV-A).
//!
//! Per file write X (one host write request: block traces carry no file
//! boundaries, §III-B), with `Num(X)` pages and `N_chip` parallel units:
//!
//! 1. **RDLT** (§III-B): a temporary array of `N_chip + 1` counters, the
//!    per-unit count of X's duplicate blocks found by fingerprint lookup,
//!    plus the bottom threshold. Dropped after the file is placed.
//! 2. **Bottom threshold** (§III-C, Eq. 1):
//!    `N_f(X) = ceil(Num(X) / min(Num(X), N_chip))`.
//! 3. **Classification** (§III-C): UDF if every counter `<= N_f`, else NUDF.
//! 4. **Elastic-threshold rewriting** (§III-D, NUDF only): duplicates on
//!    units whose counter exceeds `N_f` are candidates, sorted by heat
//!    `H(b)` = reference count, descending; at most
//!    `N_top(X) = floor(rho * Num(X))` (Eq. 2, rho = 0.30) are rewritten. A
//!    rewrite materializes a private copy for X only (other sharers keep the
//!    old page) on a unit different from the old one.
//! 5. **Read-parallel placement** (§III-E): the cyclic *next* pointer's unit
//!    is accepted if placing the block keeps its counter `<= N_f` (and, for a
//!    rewrite, it is not the old unit); otherwise it is skipped (and, with
//!    the WSTL, appended to it) and the pointer moves on. Accepting a unit
//!    increments its counter and advances the pointer past it.
//! 6. **Write-parallel optimization** (§III-F): before the cyclic order, the
//!    WSTL head is tried under the same RDLT test; success removes it
//!    (backfill), failure moves it to the tail. Backfills do not move the
//!    next pointer (Fig. 7: after J and K are backfilled, L starts at chip 0),
//!    and every skip appends its unit, so a unit skipped k times is listed
//!    k times and owed k backfills (§III-F: the skipped chip "is added to the
//!    end of the list"; §III-G: "chips with more skipped entries").
//! 7. **GC hint** (§III-G): a collection triggered by the GC threshold runs
//!    on the unit with the most WSTL entries when that unit needs one too;
//!    see [`Fad::gc_hint_of`].
//!
//! # Choices where the paper is open (also in `docs/policies.md`)
//!
//! * *Candidate selection* (§III-D): candidates are taken in heat order
//!   (ties: file order) but a candidate is passed over once its unit's
//!   counter has dropped to `N_f` through earlier selections — "the RDLT is
//!   then updated accordingly" — so no unit is emptied below its fair share
//!   while another overloaded unit keeps its excess.
//! * *A content occurring several times in one file* is one block (§III-B:
//!   the RDLT counts duplicate *blocks* on each chip; §III-D: a rewrite is
//!   one private copy for the file): counted once, rewritten at most once
//!   (its first occurrence), later occurrences referenced. A new content's
//!   repeats (`Dup::InFile`) reference its one new copy; a stored content's
//!   repeats reference the copy its first occurrence maps to (the private
//!   copy if it is rewritten): the simulator reports every repeat as
//!   `Dup::InFile`, stored or not. A caller that reported a stored content's
//!   repeat as a second `Dup::Existing` could only reference the stored
//!   copy, so such a content is then not rewritten (see [`Fad::analyze`]).
//! * *WSTL head* (§III-F): only the head is tried per block; a failed head
//!   goes to the tail ("added to the end of the list").
//! * *No acceptable unit* (every unit would exceed `N_f`; unreachable while
//!   every block counts once, kept as a guard): the unit with the smallest
//!   counter, first in cyclic order from the pointer, avoiding the old unit
//!   of a rewrite.
//! * *WSTL cap*: when full, the oldest entry is dropped (§III-G: "the system
//!   can safely drop old WSTL entries").
//! * *Parallel unit*: the configured allocation unit (`alloc_unit`, chip by
//!   default; §II-C: "the same method can be applied to channels, dies, or
//!   planes").
//!
//! # Parameters (`[policy.fad]`, shared by the ablations)
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `rho` | 0.30 | allowable rewrite ratio of Eq. 2 (§III-D) |
//! | `wstl_cap` | 256 | maximum WSTL entries (12 B each, §IV-E) |
//! | `gc_hint` | `"prefer"` | what the GC hint does: `"prefer"` (§III-G: triggered GC runs on the most-skipped unit) or `"early"` (extra early collections there; not §III-G) |
//! | `gc_defer_blocks` | 8 | `prefer`: how far below the GC threshold a plane may fall while its triggered collections run on the preferred unit instead |
//! | `gc_soft_margin` | 8 | blocks above the GC threshold within which the preferred unit's fullest plane takes a triggered collection (`prefer`) or is collected early (`early`) |
//! | `backfill_advances` | false | a WSTL backfill also advances the next pointer (not Fig. 7) |
//! | `wstl_unique` | false | one WSTL entry per unit (not §III-F/G: every skip is recorded) |

use super::{Action, Cyclic, Dup, GcHint, PageInfo, PageLayout, Policy, PolicyError};
use crate::ftl::EntryId;
use serde::Deserialize;
use std::collections::VecDeque;

/// FAD's parameters, from `[policy.fad]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FadParams {
    /// rho: allowable rewrite ratio (§III-D, Eq. 2).
    pub rho: f64,
    /// Maximum number of WSTL entries; the oldest is dropped beyond it.
    pub wstl_cap: usize,
    /// What the GC hint does (§III-G; see [`Fad::gc_hint_of`]).
    pub gc_hint: GcHintMode,
    /// `prefer`: a plane outside the preferred unit may be this many blocks
    /// below the GC threshold while its triggered collections run on the
    /// preferred unit instead; further down it collects itself.
    pub gc_defer_blocks: u32,
    /// How close above the GC threshold (in blocks) the preferred unit's
    /// fullest plane must be to take a triggered collection (`prefer`) or
    /// to be collected early (`early`).
    pub gc_soft_margin: u32,
    /// A WSTL backfill also advances the next pointer one step (the
    /// backfill takes the pointer's turn). Default false: Fig. 7 (§III-F).
    pub backfill_advances: bool,
    /// A unit already in the WSTL is not appended again (one entry per
    /// unit). Default false: every skip is recorded (§III-E, §III-F; §III-G
    /// ranks chips by their number of entries).
    pub wstl_unique: bool,
}

impl Default for FadParams {
    fn default() -> Self {
        FadParams {
            rho: 0.30,
            wstl_cap: 256,
            gc_hint: GcHintMode::Prefer,
            gc_defer_blocks: 8,
            gc_soft_margin: 8,
            backfill_advances: false,
            wstl_unique: false,
        }
    }
}

/// What FAD's GC hint does (`[policy.fad] gc_hint`).
#[derive(Copy, Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GcHintMode {
    /// §III-G: "GC is triggered when the number of free flash blocks falls
    /// below a threshold. The process first scans WSTL to prefer chips with
    /// more skipped entries": a triggered collection runs on the unit with
    /// the most WSTL entries when that unit needs one too ([`GcHint::Prefer`]).
    #[default]
    Prefer,
    /// The earlier reading, kept to measure: after each write, one extra
    /// greedy victim on that unit when its fullest plane is within
    /// `gc_soft_margin` blocks above the threshold ([`GcHint::Early`]). It
    /// adds GC work instead of moving it.
    Early,
}
/// Which of FAD's modules are on (the ablations of §IV-A).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FadModules {
    /// WSTL backfill (write-parallel optimization, §III-F).
    pub wstl: bool,
    /// Elastic-threshold duplicate rewriting (§III-D).
    pub rewrite: bool,
    /// WSTL-guided GC chip preference (§III-G).
    pub gc_hint: bool,
}

/// Fragmentation type of a file (§III-C).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FragType {
    /// Uniformly distributed: no unit holds more than `N_f` duplicates.
    Udf,
    /// Non-uniformly distributed: some unit holds more than `N_f`.
    Nudf,
}

/// Bottom threshold N_f(X) (§III-C, Eq. 1).
pub fn bottom_threshold(num: u32, units: u32) -> u32 {
    num.div_ceil(num.min(units).max(1))
}

/// Top threshold N_top(X) (§III-D, Eq. 2).
pub fn top_threshold(num: u32, rho: f64) -> u32 {
    (rho * num as f64 + 1e-9).floor() as u32
}

/// Classifies a file from its RDLT counters (§III-C).
pub fn classify(rdlt: &[u32], n_f: u32) -> FragType {
    if rdlt.iter().any(|&c| c > n_f) {
        FragType::Nudf
    } else {
        FragType::Udf
    }
}

/// Write Skip Tracking List (§III-B): units skipped by read-oriented
/// placement, backfilled first by later writes.
#[derive(Clone, Debug, Default)]
pub struct Wstl {
    list: VecDeque<u32>,
    /// Entries per unit (for the GC hint).
    per_unit: Vec<u32>,
    cap: usize,
    /// One entry per unit: a unit already listed is not appended again.
    unique: bool,
    /// Highest length reached.
    pub high_water: usize,
    /// Entries dropped because the list was full.
    pub dropped: u64,
}

impl Wstl {
    pub fn with_cap(cap: usize) -> Wstl {
        Wstl { cap, ..Wstl::default() }
    }
    /// One entry per unit at most (`wstl_unique`).
    pub fn unique(mut self, unique: bool) -> Wstl {
        self.unique = unique;
        self
    }
    /// Appends a skipped unit; drops the oldest entry when full. With
    /// `unique`, a unit already listed is left where it is.
    pub fn push(&mut self, unit: u32) {
        if self.unique && self.per_unit.get(unit as usize).is_some_and(|&n| n > 0) {
            return;
        }
        if self.cap == 0 {
            self.dropped += 1;
            return;
        }
        if self.list.len() == self.cap {
            self.pop();
            self.dropped += 1;
        }
        self.list.push_back(unit);
        if self.per_unit.len() <= unit as usize {
            self.per_unit.resize(unit as usize + 1, 0);
        }
        self.per_unit[unit as usize] += 1;
        self.high_water = self.high_water.max(self.list.len());
    }
    /// Removes and returns the head.
    pub fn pop(&mut self) -> Option<u32> {
        let u = self.list.pop_front()?;
        self.per_unit[u as usize] -= 1;
        Some(u)
    }
    /// The unit with the most entries (ties: lowest index), if any.
    pub fn most_skipped(&self) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        for (u, &n) in self.per_unit.iter().enumerate() {
            if n > 0 && best.is_none_or(|(_, bn)| n > bn) {
                best = Some((u as u32, n));
            }
        }
        best.map(|(u, _)| u)
    }
    pub fn entries(&self) -> impl Iterator<Item = u32> + '_ {
        self.list.iter().copied()
    }
    pub fn len(&self) -> usize {
        self.list.len()
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Per-run counters reported in `policy.*` stats.
#[derive(Clone, Debug, Default)]
struct FadStats {
    files: u64,
    udf: u64,
    nudf: u64,
    rewrites: u64,
    skips: u64,
    backfills: u64,
    fallbacks: u64,
    repeats_not_rewritten: u64,
    gc_hinted: u64,
}

/// The FAD policy family. See the module doc.
pub struct Fad {
    name: &'static str,
    modules: FadModules,
    params: FadParams,
    next: Cyclic,
    wstl: Wstl,
    stats: FadStats,
    // Scratch, reused per file.
    rdlt: Vec<u32>,
    rewrite: Vec<bool>,
    /// Later occurrences of a content already met in the file (referenced).
    repeat: Vec<bool>,
    /// First occurrences whose repeats come as `Dup::Existing` (not
    /// rewritable: the repeats could not follow a private copy).
    fixed: Vec<bool>,
    /// (entry, page) of the file's stored copies, sorted.
    by_entry: Vec<(EntryId, u32)>,
    cands: Vec<usize>,
}

impl Fad {
    pub fn new(name: &'static str, modules: FadModules, params: FadParams) -> Fad {
        Fad {
            name,
            modules,
            wstl: Wstl::with_cap(params.wstl_cap).unique(params.wstl_unique),
            params,
            next: Cyclic::default(),
            stats: FadStats::default(),
            rdlt: Vec::new(),
            rewrite: Vec::new(),
            repeat: Vec::new(),
            fixed: Vec::new(),
            by_entry: Vec::new(),
            cands: Vec::new(),
        }
    }

    /// Builds a registered variant; parameters come from `[policy.fad]`.
    pub fn build(
        name: &'static str,
        modules: FadModules,
        ctx: &super::PolicyContext,
    ) -> Result<Box<dyn Policy>, PolicyError> {
        let params: FadParams = super::params(ctx)?;
        if !(0.0..=1.0).contains(&params.rho) {
            return Err(PolicyError::Params {
                policy: "fad".into(),
                reason: format!("rho = {} must be within [0, 1]", params.rho),
            });
        }
        Ok(Box::new(Fad::new(name, modules, params)))
    }

    pub fn wstl(&self) -> &Wstl {
        &self.wstl
    }

    /// The next pointer's unit (for tests).
    pub fn next_unit(&self, units: u32) -> u32 {
        self.next.peek(units)
    }

    /// Sets the WSTL contents (for the paper's worked examples).
    pub fn set_wstl(&mut self, units: &[u32]) {
        while self.wstl.pop().is_some() {}
        for &u in units {
            self.wstl.push(u);
        }
    }

    /// The GC hint (§III-G), read from the WSTL after the current file is
    /// placed. What §III-G says, and what we chose where it is open:
    ///
    /// * *When*: "GC is triggered when the number of free flash blocks
    ///   falls below a threshold" — the hint adds no trigger of its own and
    ///   no collection: it changes where a triggered one runs (`prefer`).
    /// * *Which chip*: "first scans WSTL to prefer chips with more skipped
    ///   entries when possible, using the list only as a scheduling hint":
    ///   the unit with the most WSTL entries (ties: the lowest index). Open:
    ///   what "when possible" means. Ours: that unit's fullest plane is
    ///   less than `gc_soft_margin` blocks above the threshold (under
    ///   SSDsim's one-victim-per-write rule a plane is back at the threshold
    ///   after each collection, so "below it" would hardly ever hold) and
    ///   has a victim with an invalid page, and the plane that triggered is
    ///   no more than `gc_defer_blocks` below the threshold (so its own
    ///   collection can wait for a later trigger); otherwise the triggering
    ///   plane is collected, as without the hint. One collection either
    ///   way: the hint moves GC, it adds none. Which plane of the chip:
    ///   open; the one with the fewest free blocks.
    /// * *Victim and migration*: greedy, valid pages stay in the plane
    ///   ("written back within the same chip"), as in every policy.
    /// * *"Finally, WSTL is updated for subsequent GC decisions"*: open. The
    ///   WSTL is write-placement debt; GC does not repay it, so GC leaves
    ///   the list alone and later decisions see it as later writes leave it
    ///   (skips append, backfills remove).
    /// * *Why* (§III-G: "If all chips perform GC simultaneously, foreground
    ///   I/O requests may be delayed"): a skipped chip received fewer of the
    ///   recent writes; moving collections there spreads GC away from the
    ///   chips the writes keep busy. Not stated: idle-time GC (no idle
    ///   trigger is described for FAD).
    ///
    /// `None` when the hint is off (the ablations) or the WSTL is empty.
    pub fn gc_hint_of(&self) -> Option<GcHint> {
        if !self.modules.gc_hint {
            return None;
        }
        let unit = self.wstl.most_skipped()?;
        Some(match self.params.gc_hint {
            GcHintMode::Prefer => {
                GcHint::Prefer { unit, defer: self.params.gc_defer_blocks, margin: self.params.gc_soft_margin }
            }
            GcHintMode::Early => GcHint::Early { unit, margin: self.params.gc_soft_margin },
        })
    }

    /// Steps 1-4: builds the RDLT from `file`, classifies it and, for NUDF
    /// files with rewriting on, selects the duplicates to rewrite (marked
    /// in `self.rewrite`; their counts leave the RDLT). Returns (N_f, type).
    ///
    /// The RDLT counts stored *blocks*: a content that occurs several times
    /// in the file is one block, counted once, on the unit of its copy, and
    /// rewritten at most once (at its first occurrence); its later
    /// occurrences are referenced. A later occurrence the simulator reports
    /// as [`Dup::InFile`] follows the first one (the private copy if that is
    /// rewritten); one reported as a second [`Dup::Existing`] can only
    /// reference the stored copy, so a content repeated that way is not a
    /// rewrite candidate (counted in `repeats_not_rewritten`).
    pub fn analyze(&mut self, file: &[PageInfo], units: u32) -> (u32, FragType) {
        let n = file.len();
        self.rdlt.clear();
        self.rdlt.resize(units as usize, 0);
        self.rewrite.clear();
        self.rewrite.resize(n, false);
        self.repeat.clear();
        self.repeat.resize(n, false);
        self.fixed.clear();
        self.fixed.resize(n, false);
        // Stored copies, grouped by entry: the first occurrence of each
        // counts, later ones are repeats.
        self.by_entry.clear();
        for (k, p) in file.iter().enumerate() {
            match p.dup {
                Dup::Existing { entry, .. } => self.by_entry.push((entry, k as u32)),
                // A copy waiting to be placed has no unit to count or
                // rewrite from: referenced, like a repeat.
                Dup::InFile { .. } | Dup::Waiting { .. } => self.repeat[k] = true,
                Dup::None => {}
            }
        }
        self.by_entry.sort_unstable();
        let mut i = 0;
        while i < self.by_entry.len() {
            let (entry, first) = self.by_entry[i];
            let mut j = i + 1;
            while j < self.by_entry.len() && self.by_entry[j].0 == entry {
                self.repeat[self.by_entry[j].1 as usize] = true;
                self.fixed[first as usize] = true;
                j += 1;
            }
            if let Dup::Existing { unit, .. } = file[first as usize].dup {
                self.rdlt[unit as usize] += 1;
            }
            i = j;
        }
        let n_f = bottom_threshold(n as u32, units);
        let kind = classify(&self.rdlt, n_f);
        if kind == FragType::Nudf && self.modules.rewrite {
            let n_top = top_threshold(n as u32, self.params.rho) as usize;
            self.cands.clear();
            for (k, p) in file.iter().enumerate() {
                if let Dup::Existing { unit, .. } = p.dup {
                    if !self.repeat[k] && self.rdlt[unit as usize] > n_f {
                        if self.fixed[k] {
                            self.stats.repeats_not_rewritten += 1;
                        } else {
                            self.cands.push(k);
                        }
                    }
                }
            }
            // Heat H(b) = reference count, descending; stable = file order on ties.
            let heat = |k: &usize| match file[*k].dup {
                Dup::Existing { refs, .. } => refs,
                _ => 0,
            };
            self.cands.sort_by_key(|k| std::cmp::Reverse(heat(k)));
            let mut chosen = 0;
            for &k in &self.cands {
                if chosen == n_top {
                    break;
                }
                let Dup::Existing { unit, .. } = file[k].dup else { continue };
                if self.rdlt[unit as usize] > n_f {
                    self.rdlt[unit as usize] -= 1;
                    self.rewrite[k] = true;
                    chosen += 1;
                }
            }
        }
        (n_f, kind)
    }

    /// Steps 5-6: places the file's new and rewritten blocks, given the
    /// RDLT and rewrite set computed by [`Fad::analyze`]. Repeats of a
    /// content are referenced.
    pub fn place_blocks(&mut self, file: &[PageInfo], units: u32, n_f: u32, out: &mut Vec<Action>) {
        for (k, p) in file.iter().enumerate() {
            let old = match p.dup {
                _ if self.repeat[k] => {
                    out.push(Action::Reference);
                    continue;
                }
                Dup::Existing { unit, .. } if self.rewrite[k] => Some(unit),
                Dup::None => None,
                _ => {
                    out.push(Action::Reference);
                    continue;
                }
            };
            let unit = self.choose_unit(units, n_f, old);
            self.rdlt[unit as usize] += 1;
            out.push(Action::Program { unit });
        }
    }

    fn fits(&self, u: u32, n_f: u32, old: Option<u32>) -> bool {
        self.rdlt[u as usize] < n_f && old != Some(u)
    }

    fn choose_unit(&mut self, units: u32, n_f: u32, old: Option<u32>) -> u32 {
        // Write-parallel optimization: try the WSTL head first (§III-F).
        if self.modules.wstl {
            if let Some(h) = self.wstl.pop() {
                if h < units && self.fits(h, n_f, old) {
                    self.stats.backfills += 1;
                    if self.params.backfill_advances {
                        self.next.advance(units);
                    }
                    return h;
                }
                self.wstl.push(h);
            }
        }
        // Read-parallel placement: cyclic pointer, skipping units that would
        // exceed N_f (§III-E).
        for _ in 0..units {
            let u = self.next.take(units);
            if self.fits(u, n_f, old) {
                return u;
            }
            self.stats.skips += 1;
            if self.modules.wstl {
                self.wstl.push(u);
            }
        }
        // No unit fits. Unreachable while every block counts once (the
        // RDLT then holds fewer than Num(X) <= N_f * min(Num(X), N_chip)
        // blocks, and a rewrite's old unit keeps >= N_f): kept as a guard,
        // counted in `fallbacks`. Least-loaded unit, first from the
        // pointer, avoiding the old unit of a rewrite.
        self.stats.fallbacks += 1;
        let start = self.next.peek(units);
        let mut best: Option<u32> = None;
        for i in 0..units {
            let u = (start + i) % units;
            if old == Some(u) && units > 1 {
                continue;
            }
            if best.is_none_or(|b| self.rdlt[u as usize] < self.rdlt[b as usize]) {
                best = Some(u);
            }
        }
        best.unwrap_or(start)
    }
}

impl Policy for Fad {
    fn name(&self) -> &'static str {
        self.name
    }

    fn place(&mut self, file: &[PageInfo], _: &[PageLayout], units: u32, out: &mut Vec<Action>) -> Option<GcHint> {
        let (n_f, kind) = self.analyze(file, units);
        self.stats.files += 1;
        match kind {
            FragType::Udf => self.stats.udf += 1,
            FragType::Nudf => self.stats.nudf += 1,
        }
        self.stats.rewrites += self.rewrite.iter().filter(|&&r| r).count() as u64;
        self.place_blocks(file, units, n_f, out);
        self.gc_hint_of()
    }

    fn gc_hint_followed(&mut self) {
        self.stats.gc_hinted += 1;
    }

    /// Statistics restart for the timed replay; the pointer and the WSTL
    /// (with its entries) carry over, and the high-water mark restarts at
    /// the list's current length.
    fn begin_replay(&mut self) {
        self.stats = FadStats::default();
        self.wstl.high_water = self.wstl.len();
        self.wstl.dropped = 0;
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        vec![
            ("files", s.files as f64),
            ("udf", s.udf as f64),
            ("nudf", s.nudf as f64),
            ("rewrites", s.rewrites as f64),
            ("skips", s.skips as f64),
            ("wstl_backfills", s.backfills as f64),
            ("wstl_high_water", self.wstl.high_water as f64),
            ("wstl_dropped", self.wstl.dropped as f64),
            ("wstl_bytes_high_water", (self.wstl.high_water * 12) as f64),
            ("rdlt_bytes", ((self.rdlt.len() + 1) * 4) as f64),
            ("fallbacks", s.fallbacks as f64),
            ("repeats_not_rewritten", s.repeats_not_rewritten as f64),
            ("gc_hinted", s.gc_hinted as f64),
        ]
    }
}

#[cfg(test)]
mod tests;
