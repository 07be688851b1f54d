//! Allocation: where a program goes when the policy's placement is free
//! (`allocation`: static, least-loaded, SSDsim's dynamic), the round-robin
//! preconditioning, the redirect off a full unit, and the GC a program
//! triggers.
//!
//! Which allocator places what is one value, [`Allocators`], chosen once
//! when the simulation is built; the request path matches on it.

use super::inflight::PendingOp;
use super::stream::Fingerprints;
use super::{SimError, Simulation};
use crate::config::{Allocation, Config, PreconditionPlacement, StaticOrder};
use crate::ftl::{EntryId, GcWork};
use crate::metrics::dof;
use crate::timing::{OpKind, NO_TAG};
use crate::units::{ContentId, Lpn, Nanos};
use crate::workload::{Request, NO_CONTENT};

/// The allocators of a run: one for the programs the policy places (host
/// writes, and preconditioning writes with `placement = "policy"`), one
/// for the preconditioning writes placed without the policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Allocators {
    pub(super) programs: Allocator,
    pub(super) precondition: PreconditionAllocator,
}

/// Where a program the policy placed goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Allocator {
    /// On the unit the policy chose (a policy that places its own pages, or
    /// `allocation = "cyclic"`: a placement-free policy's own pointer); a
    /// layout-driven policy's page is moved off a unit with no room
    /// ([`Simulation::unit_with_room`]).
    Policy,
    /// `allocation = "static:ORDER"` (placement-free policies): each page
    /// in the plane its LPN stripes to, timed or not.
    Static(StaticOrder),
    /// `allocation = "least-loaded"` (placement-free policies): a timed
    /// program on the unit whose chip would be free first
    /// ([`Simulation::least_loaded_unit`]); an untimed one as [`Allocator::Policy`].
    LeastLoaded,
    /// `allocation = "dynamic"`: a timed program waits unplaced in the
    /// timing model until a channel serves it ([`Simulation::place_unplaced`]);
    /// an untimed one as [`Allocator::Policy`].
    Dynamic,
    /// `experiment.fad_ssdsim_model` (placement-free policies): a unit
    /// drawn over the model's seven chips, timed or not.
    FadSsdsim,
}

/// Where a preconditioning write goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum PreconditionAllocator {
    /// Through the policy, as an untimed write (`placement = "policy"`).
    Policy,
    /// Page by page round-robin over the parallel units (SSDsim's
    /// pre-processing).
    RoundRobin,
    /// Round-robin preconditioning under `allocation = "static:ORDER"`:
    /// each page in the plane its LPN stripes to, for every policy.
    Static(StaticOrder),
}

impl Allocators {
    /// The allocators `cfg` selects for a policy whose placement is free
    /// (`placement_free`) or not, with or without the FAD-SSDsim model
    /// (`fad_ssdsim`, which replaces every allocation, `dynamic` included).
    /// `allocation = "dynamic"` is taken as it is for a placement-free
    /// policy: the constructor has refused it where it does not apply.
    /// `past_pages`: preconditioned pages carrying the trace's own
    /// contents, which resolve `precondition.placement = "auto"`.
    pub(super) fn choose(cfg: &Config, placement_free: bool, fad_ssdsim: bool, past_pages: u64) -> Allocators {
        let programs = match cfg.allocation {
            _ if !placement_free => Allocator::Policy,
            _ if fad_ssdsim => Allocator::FadSsdsim,
            Allocation::Dynamic => Allocator::Dynamic,
            Allocation::Static(order) => Allocator::Static(order),
            Allocation::LeastLoaded => Allocator::LeastLoaded,
            Allocation::Cyclic => Allocator::Policy,
        };
        let precondition = match (cfg.precondition.placement.resolve(past_pages), cfg.allocation) {
            (PreconditionPlacement::Policy, _) => PreconditionAllocator::Policy,
            (_, Allocation::Static(order)) => PreconditionAllocator::Static(order),
            (_, _) => PreconditionAllocator::RoundRobin,
        };
        Allocators { programs, precondition }
    }

    /// `allocation = "dynamic"`.
    #[inline]
    pub(super) fn dynamic(self) -> bool {
        self.programs == Allocator::Dynamic
    }
}

/// The unit of a page whose copy is not placed yet.
pub(super) const NO_UNIT: u32 = u32::MAX;

impl<'w> Simulation<'w> {
    /// The first unit after `unit` (cyclically) whose next plane has room
    /// ([`Ftl::unit_has_room`]), for a page its policy placed on a unit
    /// too full of live data; `unit` itself when none has (the FTL then
    /// says the device is full). Counted in `placement_redirects`.
    #[cold]
    pub(super) fn unit_with_room(&mut self, unit: u32) -> u32 {
        let found = (1..self.units).map(|k| (unit + k) % self.units).find(|&u| self.ftl.unit_has_room(u));
        if found.is_some() {
            self.metrics.counters.placement_redirects += 1;
        }
        found.unwrap_or(unit)
    }

    /// Adds work arriving at `at` to a chip's load estimate.
    #[inline]
    pub(super) fn reserve(&mut self, chip: u32, at: Nanos, cost: Nanos) {
        if self.alloc.programs == Allocator::LeastLoaded {
            let e = &mut self.est_free[chip as usize];
            *e = (*e).max(at) + cost;
        }
    }

    /// The unit whose chip would be free first for work arriving at `at`;
    /// ties go to the first in cyclic order from the pointer, which then
    /// moves past the chosen unit (SSDsim's chip token).
    ///
    /// The cyclic scan is two plain ranges (`start+1..n`, then `0..start`)
    /// rather than `(start + k) % n` per unit: a division per unit per
    /// written page was half of the request path's time.
    #[inline]
    pub(super) fn least_loaded_unit(&mut self, at: Nanos) -> u32 {
        let n = self.units as usize;
        let start = self.ll_next as usize % n;
        let (est, chips) = (&self.est_free, &self.unit_chip[..n]);
        let free = |u: usize| est[chips[u] as usize];
        // A chip free by `at` has the least possible load (`at`): the first
        // such unit in cyclic order wins, and the scan stops there.
        let (mut best, mut best_t) = (start, free(start));
        'scan: for range in [start + 1..n, 0..start] {
            if best_t <= at {
                break;
            }
            for u in range {
                // Branch-free select: which chip wins is data, not a
                // pattern the branch predictor could learn.
                let e = free(u);
                let lt = e < best_t;
                best = if lt { u } else { best };
                best_t = if lt { e } else { best_t };
                if best_t <= at {
                    break 'scan;
                }
            }
        }
        self.ll_next = if best + 1 == n { 0 } else { best as u32 + 1 };
        best as u32
    }

    /// An untimed preconditioning write placed without the policy: page by
    /// page round-robin over the parallel units (SSDsim's pre-processing:
    /// the i-th page goes to unit i mod units, channel fastest; under
    /// `allocation = "static:ORDER"` each page goes to the plane its LPN
    /// stripes to, as SSDsim's static pre-processing does), one copy
    /// per page (no deduplication among them). Under a deduplicating policy
    /// a content's first copy is indexed, so replayed writes can
    /// deduplicate against it.
    ///
    /// The round-robin write is one FTL call ([`crate::ftl::Ftl::program_run`],
    /// which programs and maps the run's pages in order); what each page
    /// adds here (the engine's preload, GC accounting, the shadow model)
    /// touches nothing the FTL reads, so it follows the run, in page
    /// order, and the program count is added once.
    pub(super) fn precondition_round_robin(
        &mut self,
        index: usize,
        r: &Request,
        contents: &[ContentId],
    ) -> Result<(), SimError> {
        if r.content == NO_CONTENT || contents.len() != r.pages as usize {
            return Err(SimError::NoContent { index, pages: r.pages });
        }
        let indexed = self.dedup && self.ftl_index;
        let preload = self.dedup && !self.ftl_index;
        if let PreconditionAllocator::Static(order) = self.alloc.precondition {
            for (k, &c) in contents.iter().enumerate() {
                let lpn = Lpn(r.lpn + k as u32);
                let plane = self.ftl.geometry().static_plane(lpn.0, order);
                let (e, _, gc) = self.ftl.program_in_plane(plane, c, indexed)?;
                self.ftl.map_pinned(lpn, e);
                self.precondition_page(preload, lpn, c, e, gc);
            }
            return Ok(());
        }
        // The collections the run triggers (rare), accounted after it.
        let mut gcs: Vec<GcWork> = Vec::new();
        let mut done = 0usize;
        let (engine, fingerprints) = (&mut self.engine, self.fingerprints.as_deref());
        let res = self.ftl.program_run(&mut self.precondition_next, Lpn(r.lpn), contents, indexed, |k, e, gc| {
            if preload {
                let c = contents[k];
                engine.preload(c, Fingerprints::of(fingerprints, c), e);
            }
            if let Some(gc) = gc {
                gcs.push(gc);
            }
            done = k + 1;
        });
        self.metrics.counters.programs.precondition += done as u64;
        for gc in gcs {
            self.account_gc(gc, Nanos::ZERO, Nanos::ZERO, false);
        }
        if self.opts.check {
            for (k, &c) in contents[..done].iter().enumerate() {
                self.shadow_write(r.lpn + k as u32, Some(c));
            }
        }
        res.map_err(SimError::from)
    }

    /// What a page of a preconditioning write placed page by page adds
    /// after the FTL mapped it ([`Self::precondition_round_robin`]).
    #[inline]
    fn precondition_page(&mut self, preload: bool, lpn: Lpn, c: ContentId, e: EntryId, gc: Option<GcWork>) {
        if preload {
            self.engine.preload(c, Fingerprints::of(self.fingerprints.as_deref(), c), e);
        }
        self.metrics.counters.programs.precondition += 1;
        if let Some(gc) = gc {
            self.account_gc(gc, Nanos::ZERO, Nanos::ZERO, false);
        }
        self.shadow_write(lpn.0, Some(c));
    }

    /// Places the page writes dynamic allocation serves before `until`
    /// (`allocation = "dynamic"`): each copy goes to the next plane of the
    /// chip the timing model chose (SSDsim's die and plane tokens), may
    /// trigger GC there, and the LPNs waiting for it are mapped then (its
    /// own and its duplicates', unless a later write or trim of the LPN
    /// came first: [`crate::ftl::Ftl::place`]). A write's DOF is counted
    /// once the copies of all its pages are placed (after the batch: the
    /// writes are counted in write order all the same). Returns the latest
    /// instant a write was placed at (zero if none was).
    pub(super) fn place_unplaced(&mut self, until: Nanos) -> Result<Nanos, SimError> {
        let mut latest = Nanos::ZERO;
        // A chip marked full may have room again (overwrites, trims); one
        // that fills in the loop is marked by `placed`.
        self.refresh_full_chips();
        while let Some(placed) = self.timing.place_next(until) {
            latest = latest.max(placed.at);
            self.placed(placed)?;
        }
        self.count_placed_files();
        Ok(latest)
    }

    /// Places the waiting page writes a driver that hands out completions
    /// ([`Simulation::collect`]) can place before deciding its next step:
    /// one at a time, each only if a channel serves it before the
    /// [placement bound](crate::timing::Timing::placement_bound) (the
    /// earliest known completion, queued operation or channel event, and
    /// `until`'s time), recomputed after each placement, since a placed
    /// program brings events of its own. A write due at or after the bound
    /// waits: a request may arrive at a completion handed out there (the
    /// closed loop's next arrival, a client's), and an arrival at an
    /// instant is served before a waiting write that becomes servable at
    /// that instant, as in the open loop ([`Self::submit_request`]).
    pub(super) fn place_due(&mut self, until: crate::timing::Until) -> Result<(), SimError> {
        while self.timing.has_unplaced() {
            self.refresh_full_chips();
            let bound = self.timing.placement_bound(until);
            if self.timing.has_completions() {
                // Completions the channels reported while settling go to
                // the event queue first: they may lower the bound.
                self.apply_completions();
                continue;
            }
            let placed = self.timing.place_next(bound);
            // And those reported on the way to a slot.
            self.apply_completions();
            match placed {
                Some(placed) => self.placed(placed)?,
                None => break,
            }
        }
        self.count_placed_files();
        Ok(())
    }

    /// A waiting page write was placed ([`Simulation::place_unplaced`]); its
    /// write's DOF is counted after the batch ([`Simulation::count_placed_files`]).
    pub(super) fn placed(&mut self, placed: crate::timing::Placed) -> Result<(), SimError> {
        let (page, chip, t) = (placed.write, placed.chip, placed.at);
        if self.observing_ops {
            self.observe_op(page.tag, chip);
        }
        let planes = self.chip_level.unit_planes(chip);
        let k = planes.len();
        // The rotation's plane; when it is too full of live data to take
        // the page, the chip's next plane that is not (the chip has one
        // unless every chip is full: `refresh_full_chips`).
        let mut j = self.chip_ptr[chip as usize] as usize;
        if !self.ftl.plane_has_room(planes[j]) {
            j = self.plane_with_room(chip, j);
        }
        let plane = planes[j];
        self.chip_ptr[chip as usize] = if j + 1 == k { 0 } else { j as u32 + 1 };
        // The LPNs mapped are needed only by the shadow model: without
        // `--check` neither they nor the copy's content are read back.
        self.placed_lpns.clear();
        let content = if self.opts.check { Some(self.ftl.entry(page.copy).content) } else { None };
        let (_, gc) = self.ftl.place(page.copy, plane, &mut self.placed_lpns)?;
        if content.is_some() {
            for k in 0..self.placed_lpns.len() {
                self.shadow_write(self.placed_lpns[k].0, content);
            }
        }
        if let Some(gc) = gc {
            self.account_gc(gc, t, t, true);
        }
        let unit = self.ftl.geometry().unit_of_plane(plane);
        self.unit_placed(page.write, unit);
        // Only duplicates written while a copy waits reference it: most
        // runs never do, and an empty map is not worth hashing the key.
        if !self.unplaced_refs.is_empty() {
            if let Some(files) = self.unplaced_refs.remove(&page.copy) {
                for f in files {
                    self.unit_placed(f, unit);
                }
            }
        }
        self.apply_completions();
        // The chip is full only if the plane just programmed is: ask the
        // others only then (one plane's test per page on the hot path).
        if !self.ftl.plane_has_room(plane) && !self.chip_has_room(chip) {
            self.full_chips.push(chip);
            self.refresh_full_chips();
        }
        Ok(())
    }

    /// The position among `chip`'s planes of the first plane after
    /// position `j` (in rotation order) with room for a page, or `j` if
    /// none has ([`Simulation::placed`]'s rare path).
    #[cold]
    #[inline(never)]
    fn plane_with_room(&self, chip: u32, j: usize) -> usize {
        let planes = self.chip_level.unit_planes(chip);
        let k = planes.len();
        (1..k).map(|d| (j + d) % k).find(|&x| self.ftl.plane_has_room(planes[x])).unwrap_or(j)
    }

    /// Whether some plane of `chip` can take a page without piling more
    /// live data on it than its GC can always collect
    /// ([`Ftl::plane_has_room`]).
    fn chip_has_room(&self, chip: u32) -> bool {
        self.chip_level.unit_planes(chip).iter().any(|&q| self.ftl.plane_has_room(q))
    }

    /// Dynamic allocation: marks in the timing model the chips whose
    /// planes are all too full of live data to take a page
    /// ([`crate::timing::Timing::set_chip_full`]), so that a channel
    /// serves a waiting write on another chip, as the hinted placements
    /// are redirected ([`Simulation::unit_with_room`]). Without it a chip
    /// that channels find idle more often than others (one the engine's
    /// metadata I/O leaves alone, say) takes more than its share of the
    /// pages that stay live, until its GC finds no invalid page and the
    /// run stops with "device full" while the device holds far less live
    /// data than it can. `full_chips` holds the chips placed on since the
    /// last call that may be full and the chips marked full; a chip marked
    /// full is unmarked as soon as its pages are overwritten or trimmed.
    /// While every chip is full none is marked: the FTL then says whether
    /// the page fits. Nothing to do (one test, inlined) while no chip is
    /// full.
    #[inline]
    pub(super) fn refresh_full_chips(&mut self) {
        if !self.full_chips.is_empty() {
            self.mark_full_chips();
        }
    }

    /// [`Simulation::refresh_full_chips`] when some chip may be full.
    #[cold]
    #[inline(never)]
    fn mark_full_chips(&mut self) {
        let mut marked = std::mem::take(&mut self.full_chips);
        marked.sort_unstable();
        marked.dedup();
        marked.retain(|&c| !self.chip_has_room(c));
        let all = marked.len() == self.chip_ptr.len();
        for c in 0..self.chip_ptr.len() as u32 {
            let full = !all && marked.binary_search(&c).is_ok();
            self.timing.set_chip_full(c, full);
        }
        self.full_chips = marked;
    }

    /// A page of write `file` (an id of `unplaced_files`) is on `unit`.
    fn unit_placed(&mut self, file: u64, unit: u32) {
        self.unplaced_files.placed(file, unit);
    }

    /// Counts the write DOF of the oldest writes whose pages are all
    /// placed, in write order. The test is inline (most calls find the
    /// oldest write still waiting), the counting out of line.
    #[inline(always)]
    pub(super) fn count_placed_files(&mut self) {
        if self.unplaced_files.oldest_is_complete() {
            self.count_complete_files();
        }
    }

    /// [`Self::count_placed_files`]'s work, when the oldest write is complete.
    #[inline(never)]
    fn count_complete_files(&mut self) {
        while let Some(units) = self.unplaced_files.oldest_complete() {
            let n = units.len() as u32;
            let max = max_hits(units, &mut self.unit_hits, &mut self.touched);
            self.unplaced_files.pop();
            self.metrics.dof.write_sum += dof(n, max, self.units);
            self.metrics.dof.write_count += 1;
        }
    }

    /// Counts GC work and, when timed, schedules it on its chip at `at`.
    pub(super) fn account_gc(&mut self, gc: GcWork, at: Nanos, now: Nanos, timed: bool) {
        let c = &mut self.metrics.counters;
        c.gc_invocations += 1;
        c.programs.gc += gc.moved as u64;
        c.flash_reads_gc += gc.moved as u64;
        c.erases += gc.erased as u64;
        if gc.hinted {
            self.policy.gc_hint_followed();
        }
        if timed {
            if let Some(s) = self.series.as_deref_mut() {
                s.gc(at, gc.moved, gc.erased);
            }
            let chip = self.ftl.geometry().chip_of_plane(gc.plane);
            let d = self.timing.gc_duration(gc.moved, gc.erased);
            self.schedule(PendingOp { at, chip, kind: OpKind::Gc(d), slot: NO_TAG }, now);
            self.reserve(chip, at, d);
        }
    }
}

/// The written requests not fully placed yet (`allocation = "dynamic"`),
/// oldest first, with the units of their pages placed so far (their write
/// DOF is counted once all are placed, in write order). Each request
/// reserves one slot per page in one array of units, filled as its pages
/// are placed, instead of a vector of its own. Both arrays are plain
/// vectors read from a head index (counted requests are dropped in bulk,
/// once they are half of a vector), so that a placement indexes without
/// a ring's wrap-around and a counted request's units are one slice.
#[derive(Debug, Default)]
pub(super) struct UnplacedFiles {
    /// Per request, oldest first from `head`: (pages, slots filled, first
    /// slot as an absolute position in `units`).
    files: Vec<(u32, u32, u64)>,
    /// Index in `files` of the oldest request not counted.
    head: usize,
    /// Id of the oldest request not counted (ids count the timed writes).
    first: u64,
    /// The slots of every request in `files`, in order.
    units: Vec<u32>,
    /// Absolute position of `units[0]`.
    base: u64,
}

impl UnplacedFiles {
    /// The id the next request will get.
    pub(super) fn next_id(&self) -> u64 {
        self.first + (self.files.len() - self.head) as u64
    }

    /// A request whose pages are on `units` ([`NO_UNIT`]: not placed yet).
    /// Its slots are `units` copied as they are, the placed ones then
    /// moved to the front (`placed` fills the rest in order); a request
    /// with none placed yet (every program under dynamic allocation) or
    /// all placed needs no move.
    pub(super) fn push(&mut self, units: &[u32]) {
        if self.head >= 64 && self.head * 2 >= self.files.len() {
            self.compact();
        }
        let n = units.len();
        let before = self.units.len();
        let start = self.base + before as u64;
        let filled = units.iter().filter(|&&u| u != NO_UNIT).count();
        self.units.extend_from_slice(units);
        if filled != 0 && filled != n {
            let slots = &mut self.units[before..];
            let mut f = 0;
            for k in 0..n {
                if slots[k] != NO_UNIT {
                    slots.swap(f, k);
                    f += 1;
                }
            }
        }
        self.files.push((n as u32, filled as u32, start));
    }

    /// Drops the counted requests and their units.
    #[cold]
    fn compact(&mut self) {
        let cut = self.files.get(self.head).map_or(self.units.len(), |f| (f.2 - self.base) as usize);
        self.units.drain(..cut);
        self.base += cut as u64;
        self.files.drain(..self.head);
        self.head = 0;
    }

    /// A page of request `file` is on `unit`.
    #[inline]
    pub(super) fn placed(&mut self, file: u64, unit: u32) {
        let f = &mut self.files[self.head + (file - self.first) as usize];
        self.units[(f.2 - self.base) as usize + f.1 as usize] = unit;
        f.1 += 1;
    }

    /// Whether every page of the oldest request is placed.
    #[inline]
    pub(super) fn oldest_is_complete(&self) -> bool {
        self.files.get(self.head).is_some_and(|f| f.1 == f.0)
    }

    /// The units of the oldest request's pages, if all are placed; it is
    /// counted with [`UnplacedFiles::pop`].
    #[inline]
    pub(super) fn oldest_complete(&self) -> Option<&[u32]> {
        let f = self.files.get(self.head).filter(|f| f.1 == f.0)?;
        let start = (f.2 - self.base) as usize;
        Some(&self.units[start..start + f.0 as usize])
    }

    /// Drops the oldest request (its units go with the next compaction).
    #[inline]
    pub(super) fn pop(&mut self) {
        debug_assert!(self.head < self.files.len());
        self.head += 1;
        self.first += 1;
    }
}

/// The most pages of one request on one unit (the `max` of [`dof`]):
/// `units` counted in `hits` (all zero before and after), the units hit
/// listed in `touched` meanwhile. One page is one hit without counting.
#[inline]
fn max_hits(units: &[u32], hits: &mut [u32], touched: &mut Vec<u32>) -> u32 {
    debug_assert!(touched.is_empty(), "units counted outside a request");
    if units.len() == 1 {
        return 1;
    }
    for &u in units {
        let c = &mut hits[u as usize];
        if *c == 0 {
            touched.push(u);
        }
        *c += 1;
    }
    let mut max = 0;
    for &u in touched.iter() {
        max = max.max(hits[u as usize]);
        hits[u as usize] = 0;
    }
    touched.clear();
    max
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The unplaced writes against a trivial reference (per write, the
    /// units of its pages placed so far, in a queue): random writes of one
    /// to six pages, some placed at once, the rest placed later in random
    /// order across writes; each complete oldest write is counted in write
    /// order with the units of exactly its pages and their most pages on
    /// one unit, through many compactions. A slot written to the wrong
    /// write, a compaction that dropped a live write's units, or a max
    /// miscounted fails here.
    #[test]
    fn unplaced_writes_are_counted_in_order_with_their_units() {
        let mut seed = 0x853c_49e6_748f_ea9b_u64;
        let mut next = |m: u32| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % u64::from(m)) as u32
        };
        let mut files = UnplacedFiles::default();
        let (mut hits, mut touched) = (vec![0u32; 8], Vec::new());
        // Reference: per write (oldest first) its pages and units placed.
        let mut want: VecDeque<(u64, u32, Vec<u32>)> = VecDeque::new();
        let mut waiting: Vec<u64> = Vec::new();
        let (mut counted, mut multi) = (0u64, 0);
        for step in 0..5000u32 {
            if waiting.is_empty() || next(3) == 0 {
                let id = files.next_id();
                let n = 1 + next(6);
                let mut now = Vec::new();
                for _ in 0..n {
                    if next(3) == 0 {
                        now.push(next(8));
                    }
                }
                let mut units = now.clone();
                units.resize(n as usize, NO_UNIT);
                // Placed and unplaced pages interleaved, as a write's are.
                for i in (1..units.len()).rev() {
                    units.swap(i, next(i as u32 + 1) as usize);
                }
                files.push(&units);
                waiting.extend(std::iter::repeat_n(id, (n as usize) - now.len()));
                want.push_back((id, n, now));
            } else {
                let id = waiting.swap_remove(next(waiting.len() as u32) as usize);
                let unit = next(8);
                files.placed(id, unit);
                let w = want.iter_mut().find(|w| w.0 == id).expect("a waiting write is listed");
                w.2.push(unit);
            }
            while let Some(units) = files.oldest_complete() {
                let (id, n, mut placed) = want.pop_front().expect("a counted write is listed");
                assert_eq!(placed.len(), n as usize, "step {step}: write {id} counted before its last page");
                let mut got = units.to_vec();
                let max = max_hits(units, &mut hits, &mut touched);
                got.sort_unstable();
                placed.sort_unstable();
                assert_eq!(got, placed, "step {step}: write {id}'s units");
                let want_max = (0..8).map(|u| placed.iter().filter(|&&x| x == u).count() as u32).max().unwrap();
                assert_eq!(max, want_max, "step {step}: write {id}");
                assert!(hits.iter().all(|&h| h == 0) && touched.is_empty());
                multi += usize::from(max > 1);
                files.pop();
                counted += 1;
            }
            assert!(want.front().is_none_or(|w| w.2.len() < w.1 as usize), "step {step}: a complete write not counted");
        }
        assert!(counted > 500 && multi > 100, "{counted} writes counted, {multi} with a unit hit twice");
    }
}
