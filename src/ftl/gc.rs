//! Garbage collection: greedy victims per plane, the collection a write
//! triggers, the GC preference (FAD's GC hint, §III-G) and early
//! collections; see the module doc of [`crate::ftl`], "Garbage collection".

use super::{Ftl, FtlError, GcRule};
use crate::units::Ppn;

/// Work done by one GC invocation on one plane, for the timing model.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GcWork {
    pub plane: u32,
    pub moved: u32,
    /// Of the moved pages, those shared by several LPNs (refs > 1).
    pub shared: u32,
    pub erased: u32,
    /// Run on a policy's preferred unit instead of the plane that
    /// triggered it ([`Ftl::set_gc_preference`]), or by an early hint
    /// ([`Ftl::soft_collect`]).
    pub hinted: bool,
}

/// Where a triggered collection may run instead (FAD's GC hint, §III-G):
/// the preferred parallel unit, how far below `gc.min_free_blocks` a
/// triggering plane elsewhere may fall while its collection is deferred,
/// and how far above it the preferred unit's fullest plane may be to take
/// the collection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GcPreference {
    pub unit: u32,
    pub defer: u32,
    pub margin: u32,
}

impl Ftl {
    /// Sets (or clears) the unit where triggered collections are preferred
    /// to run; see the module doc. The simulator sets it from the policy
    /// before each write's programs.
    pub fn set_gc_preference(&mut self, pref: Option<GcPreference>) {
        self.gc_pref = pref.filter(|p| p.unit < self.geo.unit_count());
    }

    /// The collection `plane`'s trigger asks for: on the preferred unit's
    /// fullest plane when the preference applies, else on `plane`.
    pub(super) fn collect_triggered(&mut self, plane: u32) -> Result<Option<GcWork>, FtlError> {
        let free = self.free_blocks(plane);
        let pl = &mut self.planes[plane as usize];
        if pl.served_at > 0 && free >= pl.served_at {
            return Ok(None); // this trigger was served elsewhere already
        }
        if let Some(q) = self.gc_pref.and_then(|pref| self.preferred_plane(plane, pref)) {
            // One victim, best effort: the preferred plane must not turn
            // another plane's trigger into a "device full" error.
            let work = self.collect_until(q, self.free_blocks(q) + 1, true)?;
            if work.erased > 0 {
                self.planes[plane as usize].served_at = free;
                return Ok(Some(GcWork { hinted: true, ..work }));
            }
        }
        self.collect(plane)
    }

    /// The plane a collection triggered by `plane` moves to under `pref`:
    /// the preferred unit's plane with the fewest free blocks (ties: the
    /// first), if `plane` is not in that unit and can wait (at least
    /// `min_free - defer` and 2 free blocks), and that plane has fewer than
    /// `min_free + margin` free blocks and a victim with an invalid page.
    pub(super) fn preferred_plane(&self, plane: u32, pref: GcPreference) -> Option<u32> {
        let planes = self.geo.unit_planes(pref.unit);
        if planes.contains(&plane) {
            return None;
        }
        let free = self.free_blocks(plane);
        if free < self.min_free.saturating_sub(pref.defer).max(2) {
            return None;
        }
        let &q = planes.iter().min_by_key(|&&q| self.planes[q as usize].free.len())?;
        if self.free_blocks(q) >= self.min_free + pref.margin {
            return None;
        }
        match self.pick_victim(q) {
            Some((inv, _)) if inv > 0 => Some(q),
            _ => None,
        }
    }

    /// Greedy GC on a plane below the threshold, by `gc.rule`: victims
    /// until the plane is back at the threshold (an error if a victim has
    /// no invalid page), or one victim per page write (SSDsim 2.1; `None`
    /// when no block has an invalid page: the write proceeds).
    pub(super) fn collect(&mut self, plane: u32) -> Result<Option<GcWork>, FtlError> {
        match self.gc_rule {
            GcRule::UntilThreshold => self.collect_until(plane, self.min_free, false).map(Some),
            GcRule::OnePerWrite => match self.pick_victim(plane) {
                Some((inv, _)) if inv > 0 => {
                    let free = self.free_blocks(plane);
                    self.collect_until(plane, free + 1, true).map(Some)
                }
                _ => Ok(None),
            },
        }
    }

    /// Greedy victim of a plane: (invalid pages, block) of the closed block
    /// (not the active block, not an open relocation block) with the most
    /// invalid pages; ties to the least worn, then lowest index.
    pub(super) fn pick_victim(&self, plane: u32) -> Option<(u32, u32)> {
        let bpp = self.geo.blocks_per_plane;
        let ppb = self.geo.pages_per_block;
        let first = plane * bpp;
        let active = self.planes[plane as usize].active;
        // An open relocation block is written like the active block: never a victim.
        let reloc = self.reloc.open(plane);
        let metas = self.blocks.plane(plane);
        let mut best: Option<(u32, u32)> = None;
        for b in first..first + bpp {
            if b == active || reloc == Some(b) {
                continue;
            }
            let m = &metas[(b - first) as usize];
            if m.written as u32 != ppb {
                continue; // free (erased) block
            }
            let invalid = ppb - m.valid as u32;
            let better = match best {
                None => true,
                Some((bi, bb)) => {
                    invalid > bi
                        || (invalid == bi
                            && self.wear_leveling
                            && m.erase_count < metas[(bb - first) as usize].erase_count)
                }
            };
            if better {
                best = Some((invalid, b));
            }
        }
        best
    }

    /// Greedy GC on one plane until it has `target` free blocks. A `soft`
    /// (best-effort) collection stops without error when the best remaining
    /// victim has no invalid page: migrating a victim can fill the active
    /// block and take a free one, so reclaiming it need not raise the free
    /// count, and the next victim may be fully valid in a plane far from full.
    pub(super) fn collect_until(&mut self, plane: u32, target: u32, soft: bool) -> Result<GcWork, FtlError> {
        let mut work = GcWork { plane, ..GcWork::default() };
        let ppb = self.geo.pages_per_block;
        while (self.planes[plane as usize].free.len()) < target {
            let victim = match self.pick_victim(plane) {
                Some((inv, b)) if inv > 0 => b,
                _ if soft => break,
                _ => return Err(self.full_error(plane)),
            };
            // Migrate valid pages inside the plane.
            let base = victim * ppb;
            for p in base..base + ppb {
                let e = self.p2e.owner(Ppn(p));
                if e == 0 {
                    continue;
                }
                let new = self.alloc_page(plane)?;
                self.p2e.clear(Ppn(p));
                self.p2e.set(new, e);
                work.moved += 1;
                if self.flat {
                    // The page's one LPN (or the pending copy) follows.
                    self.moved_flat(e, new);
                    continue;
                }
                let ent = &mut self.entries[(e - 1) as usize];
                ent.ppn = new;
                work.shared += (ent.refs > 1) as u32;
            }
            let m = &mut self.blocks[victim as usize];
            // Its valid pages were counted again where they moved.
            if let Some(l) = self.plane_live.get_mut(plane as usize) {
                *l -= u32::from(m.valid);
            }
            m.valid = 0;
            m.written = 0;
            m.erase_count += 1;
            let key = if self.wear_leveling { m.erase_count } else { 0 };
            self.planes[plane as usize].free.push(key, victim);
            work.erased += 1;
            self.planes[plane as usize].served_at = 0;
        }
        self.gc_moved_shared += work.shared as u64;
        Ok(work)
    }

    /// Free blocks of a plane.
    pub fn free_blocks(&self, plane: u32) -> u32 {
        self.planes[plane as usize].free.len()
    }

    /// Free blocks of the whole device (a sum over the planes).
    pub fn free_blocks_total(&self) -> u64 {
        self.planes.iter().map(|p| u64::from(p.free.len())).sum()
    }

    /// Early GC (a policy's hint): in the plane of `unit` with the fewest
    /// free blocks, if that is below `min_free_blocks + margin`, reclaims
    /// greedy victims until that plane has one more free block, stopping
    /// early (no error) at a victim without invalid pages. Returns `None`
    /// when no plane qualifies or the first victim would have no invalid page.
    pub fn soft_collect(&mut self, unit: u32, margin: u32) -> Result<Option<GcWork>, FtlError> {
        let Some(&plane) = self.geo.unit_planes(unit).iter().min_by_key(|&&q| self.planes[q as usize].free.len())
        else {
            return Ok(None);
        };
        let free = self.free_blocks(plane);
        if free >= self.min_free + margin || free == 0 {
            return Ok(None);
        }
        match self.pick_victim(plane) {
            Some((inv, _)) if inv > 0 => {
                self.collect_until(plane, free + 1, true).map(|w| Some(GcWork { hinted: true, ..w }))
            }
            _ => Ok(None),
        }
    }
}
