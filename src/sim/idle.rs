//! Idle and background work: the gaps between arrivals offered to the
//! dedup engine and to the policy, and the work they ask for.

use super::inflight::PendingOp;
use super::{SimError, Simulation};
use crate::engine::IdleWindow;
use crate::timing::{OpKind, NO_TAG};
use crate::units::Nanos;

/// Relocations the simulator executed for a policy.
#[derive(Clone, Debug, Default)]
pub(super) struct RelocationCounts {
    /// Idle windows the policy took.
    pub(super) idle_windows: u64,
    /// Logical pages that followed the relocated copies (their sharers).
    pub(super) lpns: u64,
    /// Relocations skipped: the copy was freed or rewritten, or already on
    /// the target unit.
    pub(super) skipped: u64,
}

impl<'w> Simulation<'w> {
    /// The one idle-time mechanism ([`crate::background`]): offers the gap
    /// after the host arrival at `last` (until the next arrival `next`,
    /// `None` after the last request) to the dedup engine and then to the
    /// policy, each as a window starting at `last` plus its own idle
    /// threshold, if the gap is longer than that threshold. Their flash
    /// operations are queued at their times and compete with host I/O.
    ///
    /// Under `allocation = "dynamic"` the page writes a channel serves
    /// before a window starts are placed first, so the window sees them on
    /// flash (an engine's out-of-line pass remaps only to placed copies, a
    /// relocation plans from their chips); writes still waiting at its
    /// start are still in the controller's write buffer then. Without this
    /// they were placed only when the next request arrived, after the
    /// window: every copy written since the last arrival looked unplaced
    /// to the idle work.
    pub(super) fn offer_idle(&mut self, last: Nanos, next: Option<Nanos>) -> Result<(), SimError> {
        if self.engine_wants_idle() {
            let thr = self.engine.idle_threshold();
            if next.is_none_or(|n| n > last + thr) {
                self.place_before_window(last + thr)?;
                self.run_idle(IdleWindow { start: last + thr, end: next }, last);
            }
        }
        let thr = self.policy_idle;
        if next.is_none_or(|n| n > last + thr) && self.policy.wants_idle() {
            self.place_before_window(last + thr)?;
            self.run_relocations(IdleWindow { start: last + thr, end: next }, last)?;
        }
        Ok(())
    }

    /// Whether the dedup engine (one with its own index) has idle work.
    pub(super) fn engine_wants_idle(&self) -> bool {
        self.dedup && !self.ftl_index && self.engine.wants_idle()
    }

    /// Places the waiting page writes served before `start` (dynamic
    /// allocation only; see [`Self::offer_idle`]).
    fn place_before_window(&mut self, start: Nanos) -> Result<(), SimError> {
        if self.alloc.dynamic() && self.timing.has_unplaced() {
            self.place_unplaced(start)?;
        }
        Ok(())
    }

    /// Offers an idle window to the policy and executes its relocations
    /// ([`Policy::idle`]): the mapping moves now (like an engine's remaps),
    /// the read of the old page reaches its chip at the relocation's time,
    /// the program of the new page when the data is out (read + transfer),
    /// both after `now`, the last arrival. GC the program triggers is
    /// charged like a host program's.
    pub(super) fn run_relocations(&mut self, window: IdleWindow, now: Nanos) -> Result<(), SimError> {
        self.rcount.idle_windows += 1;
        let mut rel = std::mem::take(&mut self.relocations);
        rel.clear();
        self.policy.idle(&self.ftl, window, &mut rel);
        // A flat map has no entries to move (`Capabilities::deduplicates`).
        debug_assert!(rel.is_empty() || !self.ftl.is_flat(), "policy {} relocates on a flat map", self.policy.name());
        for r in &rel {
            let ok = r.unit < self.units
                && self
                    .ftl
                    .entry_live(r.entry)
                    .is_some_and(|e| e.content == r.content && self.ftl.geometry().unit_of(e.ppn) != r.unit);
            if !ok {
                self.rcount.skipped += 1;
                continue;
            }
            self.rcount.lpns += u64::from(self.ftl.entry(r.entry).refs);
            let (old, new, gc) = if r.aligned {
                self.ftl.relocate_to_block(r.entry, r.unit)?
            } else {
                self.ftl.relocate(r.entry, r.unit)?
            };
            let geo = self.ftl.geometry();
            let (from, to) = (geo.chip_of(old), geo.chip_of(new));
            let at = r.at.max(now);
            let out = at + self.t_read_out;
            self.schedule(PendingOp { at, chip: from, kind: OpKind::Read, slot: NO_TAG }, now);
            self.reserve(from, at, self.t_read_out);
            self.schedule(PendingOp { at: out, chip: to, kind: OpKind::Program, slot: NO_TAG }, now);
            self.reserve(to, out, self.t_in_prog);
            let c = &mut self.metrics.counters;
            c.programs.relocation += 1;
            c.flash_reads_relocation += 1;
            if let Some(s) = self.series.as_deref_mut() {
                s.relocated(at);
            }
            if let Some(gc) = gc {
                self.account_gc(gc, out, now, true);
            }
        }
        self.relocations = rel;
        Ok(())
    }

    /// Offers an idle window to the engine and executes its background
    /// work: remaps now (mapping state changes at processing time), flash
    /// operations queued at their times (all after `now`, the last arrival).
    pub(super) fn run_idle(&mut self, window: IdleWindow, now: Nanos) {
        if !self.engine.wants_idle() {
            return;
        }
        self.sync_freed();
        self.ecount.idle_windows += 1;
        let mut bg = std::mem::take(&mut self.bg);
        bg.ops.clear();
        bg.remaps.clear();
        self.engine.idle(&self.ftl, window, &mut bg);
        for r in &bg.remaps {
            let ok = r.from != r.to
                && self.ftl.lookup(r.lpn) == Some(r.from)
                && self.ftl.entry_live(r.to).is_some_and(|to| to.content == self.ftl.entry(r.from).content);
            if ok {
                self.ftl.pin(r.to);
                self.ftl.map_pinned(r.lpn, r.to);
                self.ecount.remaps += 1;
            } else {
                self.ecount.remaps_skipped += 1;
            }
        }
        for &(at, op) in &bg.ops {
            // A read of a copy waiting to be placed: from the write buffer.
            let Some((chip, kind)) = self.engine_op_target(op) else { continue };
            self.ecount.background_ops += 1;
            self.schedule(PendingOp { at: at.max(now), chip, kind, slot: NO_TAG }, now);
        }
        self.bg = bg;
        self.sync_freed();
    }
}
