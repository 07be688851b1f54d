//! The engine bridge: the dedup engine's lookups, the flash operations it
//! asks for, the copies freed since it last looked, and its statistics.

use super::inflight::PendingOp;
use super::stream::Fingerprints;
use super::Simulation;
use crate::engine::{self, FlashOp, Verdict, When, WritePage};
use crate::ftl::EntryId;
use crate::policy::Dup;
use crate::timing::{OpKind, NO_TAG};
use crate::units::Nanos;

/// Flash work the simulator executed for a dedup engine.
#[derive(Clone, Debug, Default)]
pub(super) struct EngineCounts {
    pub(super) data_reads: u64,
    pub(super) gating_reads: u64,
    pub(super) meta_reads: u64,
    pub(super) meta_programs: u64,
    /// Data reads of copies waiting to be placed, served from the write
    /// buffer ([`Simulation::engine_op_target`]).
    pub(super) buffer_reads: u64,
    pub(super) background_ops: u64,
    pub(super) remaps: u64,
    pub(super) remaps_skipped: u64,
    pub(super) idle_windows: u64,
}

impl<'w> Simulation<'w> {
    /// Applies the references dropped and the copies freed since the last
    /// call to the engine.
    pub(super) fn sync_freed(&mut self) {
        if self.ftl.has_derefs() {
            self.ftl.take_derefs(&mut self.freed);
            let fps = self.fingerprints.as_deref();
            for &(c, e) in &self.freed {
                self.engine.dereferenced(c, Fingerprints::of(fps, c), e);
            }
            self.freed.clear();
        }
        if self.ftl.has_freed() {
            self.ftl.take_freed(&mut self.freed);
            let fps = self.fingerprints.as_deref();
            if self.freed.len() > 1 {
                for step in 0..2 {
                    for &(c, _) in &self.freed {
                        self.engine.prefetch_forget(Fingerprints::of(fps, c), step);
                    }
                }
            }
            for &(c, e) in &self.freed {
                self.engine.forget(c, Fingerprints::of(fps, c), e);
            }
            self.freed.clear();
        }
    }

    /// Lets the engine prefetch what looking up an upcoming write's pages
    /// will touch ([`crate::engine::Engine::prefetch`], `step` 0-2). Only
    /// when fingerprints are the content ids themselves (a workload
    /// replay): speed only, no state changes.
    pub(super) fn engine_prefetch(&self, contents: &[crate::units::ContentId], step: u32) {
        if self.fingerprints.is_some() {
            return;
        }
        for &c in contents.iter().take(super::PREFETCH_PAGES as usize) {
            self.engine.prefetch(&self.ftl, u64::from(c.0), step);
        }
    }

    /// Asks the engine about the current write's pages (`self.pages`, with
    /// in-file repeats already found) and fills in their duplicates.
    pub(super) fn engine_lookup(&mut self, stream: u16) {
        self.sync_freed();
        self.wpages.clear();
        let fps = self.fingerprints.as_deref();
        self.wpages.extend(self.pages.iter().map(|p| WritePage {
            lpn: p.lpn,
            content: p.content,
            fingerprint: Fingerprints::of(fps, p.content),
            repeat: matches!(p.dup, Dup::InFile { .. }),
        }));
        self.eio.reset(self.pages.len());
        self.eio.stream = stream;
        self.engine.lookup(&self.ftl, &self.wpages, &mut self.eio);
        for k in 0..self.pages.len().min(self.eio.verdicts.len()) {
            if let (Verdict::Duplicate(e), Dup::None) = (self.eio.verdicts[k], self.pages[k].dup) {
                // A copy waiting to be placed counts: `existing` makes it
                // `Dup::Waiting`.
                if self.ftl.entry_held(e).is_some() {
                    self.pages[k].dup = self.existing(e);
                }
            }
        }
    }

    /// A page's duplicate: the live copy `e` as the policy sees it.
    #[inline]
    pub(super) fn existing(&self, e: EntryId) -> Dup {
        let ent = self.ftl.entry(e);
        if self.ftl.is_unplaced(ent.ppn) {
            // Reserved for a write that dynamic allocation has not placed yet.
            return Dup::Waiting { entry: e, refs: ent.refs };
        }
        Dup::Existing { entry: e, unit: self.ftl.geometry().unit_of(ent.ppn), refs: ent.refs, ppn: ent.ppn }
    }

    /// The chip of an engine's flash operation and the operation kind;
    /// `None` for a read of a copy waiting to be placed (`allocation =
    /// "dynamic"`: its `ppn` is no page, [`crate::ftl::Ftl::is_unplaced`]), served from the controller's
    /// write buffer, where its data is until a channel programs it: no
    /// flash operation, done when issued (docs/simulator.md, "Dynamic
    /// allocation"). Decided when the engine asks, at processing time.
    pub(super) fn engine_op_target(&mut self, op: FlashOp) -> Option<(u32, OpKind)> {
        Some(match op {
            FlashOp::DataRead(ppn) if self.ftl.is_unplaced(ppn) => {
                self.ecount.buffer_reads += 1;
                return None;
            }
            FlashOp::DataRead(ppn) => {
                self.ecount.data_reads += 1;
                (self.ftl.geometry().chip_of(ppn), OpKind::Read)
            }
            FlashOp::MetaRead(m) => {
                self.ecount.meta_reads += 1;
                (engine::metadata_chip(m, self.chips), OpKind::Read)
            }
            FlashOp::MetaProgram(m) => {
                self.ecount.meta_programs += 1;
                (engine::metadata_chip(m, self.chips), OpKind::Program)
            }
        })
    }

    /// Schedules the current write's engine operations: each reaches its
    /// chip at the request's arrival or when its page is hashed; gating
    /// ones hold the request (`slot`) until they complete.
    pub(super) fn schedule_engine_ops(&mut self, t: Nanos, slot: u32, hashed: bool) {
        let ops = std::mem::take(&mut self.eio.ops);
        for o in &ops {
            let at = match o.when {
                When::Arrival => t,
                When::Hashed(k) if hashed => self.hash_ready.get(k as usize).copied().unwrap_or(t),
                When::Hashed(_) => t,
            };
            let Some((chip, kind)) = self.engine_op_target(o.op) else {
                // From the write buffer: a gating read holds the write
                // until its issue time only.
                if o.gates {
                    let f = &mut self.inflight[slot as usize];
                    f.done = f.done.max(at);
                }
                continue;
            };
            let tag = if o.gates {
                self.ecount.gating_reads += u64::from(kind == OpKind::Read);
                self.inflight[slot as usize].remaining += 1;
                slot
            } else {
                NO_TAG
            };
            self.schedule(PendingOp { at, chip, kind, slot: tag }, t);
            let cost = if kind == OpKind::Read { self.t_read_out } else { self.t_in_prog };
            self.reserve(chip, at, cost);
        }
        self.eio.ops = ops;
    }

    /// The engine's statistics plus the flash work executed for it.
    pub(super) fn engine_stats(&self) -> Vec<(&'static str, f64)> {
        if !self.dedup {
            return Vec::new();
        }
        if self.ftl_index {
            // CAFTL has no statistics of its own; fed real fingerprints, the
            // matches of different bytes it would have merged.
            return self.fingerprints.as_deref().map_or_else(Vec::new, |f| f.stats());
        }
        let c = &self.ecount;
        let mut v = self.engine.stats();
        v.extend([
            ("sim_engine_data_reads", c.data_reads as f64),
            ("sim_engine_gating_reads", c.gating_reads as f64),
            ("sim_engine_meta_reads", c.meta_reads as f64),
            ("sim_engine_meta_programs", c.meta_programs as f64),
            ("sim_engine_background_ops", c.background_ops as f64),
            ("sim_engine_remaps", c.remaps as f64),
            ("sim_engine_remaps_skipped", c.remaps_skipped as f64),
            ("sim_engine_idle_windows", c.idle_windows as f64),
        ]);
        if self.alloc.dynamic() {
            // Only where it can be nonzero (outputs of other runs unchanged).
            v.push(("sim_engine_buffer_reads", c.buffer_reads as f64));
        }
        v
    }
}
