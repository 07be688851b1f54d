//! Full-state invariant checks for the FTL (used by `--check` and tests).

use super::{EntryId, Ftl};
use crate::units::Ppn;
use thiserror::Error;

/// A broken FTL invariant: a simulator bug, never a user error.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("FTL invariant violated: {0}")]
pub struct InvariantViolation(pub String);

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(InvariantViolation(format!($($arg)*)));
        }
    };
}

impl Ftl {
    /// Verifies every structural invariant in O(pages):
    ///
    /// * every mapped LPN points to a live entry whose page points back to it;
    /// * each entry's reference count equals the number of LPNs mapped to it;
    /// * each valid page belongs to exactly one live entry, and each block's
    ///   valid count equals its valid pages;
    /// * no page past a block's write pointer is valid (no page programmed
    ///   twice without an erase);
    /// * each block is exactly one of free (erased), open (a plane's active
    ///   block or relocation block, `relocation`), or closed (full); an
    ///   open relocation block is not full;
    /// * the fingerprint index points only to live entries of that content;
    /// * a copy not placed yet ([`Ftl::reserve`]) is mapped by no LPN, only
    ///   waited for, and its references are those waiting maps.
    ///
    /// Under a flat map ([`Ftl::map_flat`]) an LPN's slot names its page and
    /// the page's reverse-map slot names the LPN back; the only entries are
    /// copies not placed yet; no copy is pending ([`Ftl::program`] without
    /// its [`Ftl::map_pinned`]); nothing is indexed; kept contents
    /// ([`Ftl::keep_contents`]) are set exactly for the mapped LPNs.
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let mut refs = vec![0u32; self.entries.len()];
        if self.flat {
            ensure!(self.pending.is_none(), "a flat copy was programmed and never mapped");
            ensure!(self.indexed == 0, "a flat map indexed {} contents", self.indexed);
            let pages = self.geo.planes * self.geo.pages_per_plane;
            for (lpn, &m) in self.l2p.iter().enumerate() {
                if let Some(&c) = self.contents.get(lpn) {
                    ensure!((c == 0) == (m == 0), "LPN {lpn}'s kept content {c} disagrees with its slot {m}");
                }
                if m == 0 {
                    continue;
                }
                ensure!(m - 1 < pages, "LPN {lpn} maps to page {}, beyond the device", m - 1);
                let owner = self.p2e.owner(Ppn(m - 1));
                ensure!(
                    owner == lpn as u32 + 1,
                    "LPN {lpn} maps to page {} but the page belongs to {}",
                    m - 1,
                    owner as i64 - 1
                );
            }
        }
        for (lpn, &m) in self.l2p.iter().enumerate() {
            if m == 0 || self.flat {
                continue;
            }
            let e = (m - 1) as usize;
            ensure!(e < self.entries.len(), "LPN {lpn} maps to unknown entry {e}");
            ensure!(!self.is_unplaced(self.entries[e].ppn), "LPN {lpn} maps to entry {e}, which has no page yet");
            refs[e] += 1;
        }
        for (e, slot, n) in self.deferred.waiting_on() {
            ensure!((e as usize) < self.entries.len(), "LPNs wait for unknown entry {e}");
            ensure!(
                self.entries[e as usize].ppn == super::deferred::slot_ppn(slot),
                "LPNs wait for entry {e} in slot {slot}, but the entry does not name that slot (placed, or another's)"
            );
            refs[e as usize] += n;
        }
        ensure!(self.deferred.counts_agree(), "the waiting maps per LPN do not add up");
        let mut live = 0u64;
        let mut reserved = 0u64;
        for (e, ent) in self.entries.iter().enumerate() {
            ensure!(
                ent.refs == refs[e],
                "entry {e} has refcount {} but {} LPNs map to it or wait for it",
                ent.refs,
                refs[e]
            );
            if ent.refs > 0 && self.is_unplaced(ent.ppn) {
                reserved += 1;
            } else if ent.refs > 0 {
                ensure!(!self.flat, "entry {e} of a flat map holds placed page {}", ent.ppn.0);
                live += 1;
                ensure!(
                    self.p2e.owner(ent.ppn) == e as u32 + 1,
                    "entry {e} claims page {} but the page belongs to {}",
                    ent.ppn.0,
                    self.p2e.owner(ent.ppn) as i64 - 1
                );
            }
        }
        // A flat map's live copies have no entry: they are the valid pages
        // (each checked against its block's count and its LPN below).
        let copies = if self.flat {
            (0..self.blocks.len() as u32).map(|b| u64::from(self.block_meta(b).valid)).sum()
        } else {
            live
        };
        ensure!(copies == self.live_entries, "live entry count {} != counted {copies}", self.live_entries);
        let free: std::collections::HashSet<EntryId> = self.free_entries.iter().copied().collect();
        ensure!(free.len() == self.free_entries.len(), "an entry id is on the free list twice");
        for &e in &free {
            ensure!(refs[e as usize] == 0, "free entry {e} is still mapped");
        }
        ensure!(
            free.len() as u64 + live + reserved == self.entries.len() as u64,
            "entries leak: {} free + {live} live + {reserved} not placed != {}",
            free.len(),
            self.entries.len()
        );

        let ppb = self.geo.pages_per_block;
        let mut is_free = vec![false; self.blocks.len()];
        for (q, pl) in self.planes.iter().enumerate() {
            let mut n = 0;
            for b in pl.free.iter() {
                let b = b as usize;
                n += 1;
                ensure!(!is_free[b], "block {b} is free twice");
                ensure!(self.geo.plane_of_block(b as u32) == q as u32, "block {b} on plane {q}'s free list");
                is_free[b] = true;
            }
            ensure!(n == pl.free.len(), "plane {q}'s free pool counts {} blocks, holds {n}", pl.free.len());
            ensure!(!is_free[pl.active as usize], "active block {} is also free", pl.active);
        }
        let mut open = vec![false; self.blocks.len()];
        for (q, pl) in self.planes.iter().enumerate() {
            open[pl.active as usize] = true;
            if let Some(b) = self.reloc.open(q as u32) {
                ensure!(self.geo.plane_of_block(b) == q as u32, "relocation block {b} open on plane {q}");
                ensure!(!is_free[b as usize], "relocation block {b} is also free");
                ensure!(b != pl.active, "block {b} is both plane {q}'s active and relocation block");
                ensure!(
                    u32::from(self.blocks[b as usize].written) < ppb,
                    "relocation block {b} is full but still open"
                );
                open[b as usize] = true;
            }
        }
        // A unit fills one plane's relocation block at a time.
        for unit in 0..self.geo.unit_count() {
            let planes = self.geo.unit_planes(unit);
            let filling = self.reloc.filling(unit).map(|k| planes[k as usize]);
            for &q in planes {
                ensure!(
                    self.reloc.open(q).is_none() || filling == Some(q),
                    "plane {q} has a relocation block open, but unit {unit} fills plane {filling:?}"
                );
            }
        }
        for (b, &free) in is_free.iter().enumerate() {
            let m = self.block_meta(b as u32);
            let base = b as u32 * ppb;
            let mut valid = 0u32;
            for p in base..base + ppb {
                let e = self.p2e.owner(Ppn(p));
                if e == 0 {
                    continue;
                }
                ensure!(p - base < m.written as u32, "page {p} is valid past block {b}'s write pointer {}", m.written);
                if self.flat {
                    let slot = self.l2p.get((e - 1) as usize).copied();
                    ensure!(slot == Some(p + 1), "page {p} belongs to LPN {}, which maps to {slot:?} - 1", e - 1);
                    valid += 1;
                    continue;
                }
                let ent = &self.entries[(e - 1) as usize];
                ensure!(
                    ent.ppn.0 == p && ent.refs > 0,
                    "page {p} belongs to entry {} which is elsewhere or dead",
                    e - 1
                );
                valid += 1;
            }
            ensure!(valid == m.valid as u32, "block {b} counts {} valid pages, has {valid}", m.valid);
            if free {
                ensure!(m.written == 0, "free block {b} is not erased");
            } else if !open[b] {
                ensure!(m.written as u32 == ppb, "closed block {b} is not full ({} of {ppb} pages written)", m.written);
            }
        }
        for (plane, &live) in self.plane_live.iter().enumerate() {
            let want = self.plane_valid(plane as u32) as u32;
            ensure!(live == want, "plane {plane} counts {live} live pages, has {want}");
        }
        for (c, m) in self.index.non_empty() {
            let ent = &self.entries[(m - 1) as usize];
            ensure!(
                ent.refs > 0 && ent.content.0 == c,
                "index entry for content {c} points to a dead or different entry"
            );
        }
        Ok(())
    }
}
