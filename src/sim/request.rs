//! The request path: a timed read, a trim, and a write (one file, FAD
//! §III-B: fingerprint, lookup, policy, pin, execute in page order, DOF).
//! See the module doc of [`crate::sim`].

use super::alloc::{Allocator, NO_UNIT};
use super::inflight::PendingOp;
use super::{SimError, Simulation, SMALL_FILE};
use crate::ftl::{EntryId, Ftl, GcPreference};
use crate::metrics::dof;
use crate::policy::{Action, Dup, ExplicitHint, GcHint, PageInfo, PageLayout};
use crate::timing::{OpKind, UnplacedWrite, NO_TAG};
use crate::units::{ContentId, Lpn, Nanos, Op};
use crate::workload::{Hint, Request, Workload, NO_CONTENT};

/// The explicit write hint of one request, as its workload gives it
/// (FAST'24's die-allocation hint; [`crate::policy::ExplicitHint`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RequestHint {
    /// The workload carries no hints at all.
    Absent,
    /// The workload carries hints, none for this request.
    Unhinted,
    /// This request's hint.
    Given(Hint),
}

impl RequestHint {
    /// The hint of request `index` (preconditioning included) of `w`.
    pub fn of(w: &Workload, index: usize) -> RequestHint {
        if w.hints.is_empty() {
            RequestHint::Absent
        } else {
            w.hint_of(index).map_or(RequestHint::Unhinted, RequestHint::Given)
        }
    }
}

impl<'w> Simulation<'w> {
    /// A timed read: one flash read per mapped page, all issued at `t`; its
    /// latency is recorded when its last page is out.
    pub(super) fn read(&mut self, r: &Request, t: Nanos) -> Result<(), SimError> {
        let c = &mut self.metrics.counters;
        c.reads += 1;
        c.read_pages += r.pages as u64;
        let slot = self.open_slot(t, Op::Read, r.lpn, r.pages);
        let mut mapped = 0;
        for l in r.lpn..r.lpn + r.pages {
            let Some(ppn) = self.ftl.page_of(Lpn(l)) else {
                if let Some(m) = self.fad_ssdsim.as_deref_mut() {
                    if m.is_flagged(l) {
                        // The authors' model: a lost duplicate reads physical page 0.
                        m.page0_reads += 1;
                        let (chip, unit) = (m.chip0, m.unit0);
                        self.inflight[slot as usize].remaining += 1;
                        self.timing.submit_read(chip, t, 0, slot);
                        if self.observing_ops {
                            self.observe_op(slot, chip);
                        }
                        self.metrics.counters.flash_reads_host += 1;
                        self.count_unit(unit);
                        mapped += 1;
                        continue;
                    }
                }
                self.check_unmapped(l)?;
                self.metrics.counters.unmapped_read_pages += 1;
                continue;
            };
            if self.opts.check {
                self.check_mapped(l, self.ftl.content_at(Lpn(l)))?;
            }
            let geo = self.ftl.geometry();
            let chip = geo.chip_of(ppn);
            let unit = geo.unit_of(ppn);
            self.inflight[slot as usize].remaining += 1;
            self.timing.submit_read(chip, t, ppn.0, slot);
            if self.observing_ops {
                self.observe_op(slot, chip);
            }
            self.reserve(chip, t, self.t_read_out);
            self.metrics.counters.flash_reads_host += 1;
            self.count_unit(unit);
            mapped += 1;
        }
        let max = self.drain_units();
        if mapped > 0 {
            self.metrics.dof.read_sum += dof(mapped, max, self.units);
            self.metrics.dof.read_count += 1;
        }
        self.apply_completions();
        // Release the processing guard: completes now if nothing was read.
        self.op_done(slot, t);
        Ok(())
    }

    pub(super) fn trim(&mut self, r: &Request) {
        self.metrics.counters.trims += 1;
        self.metrics.counters.trim_pages += r.pages as u64;
        // Pages written before the trim but not placed yet are not mapped
        // when placed (`Ftl::place`: the trim is the later write).
        for l in r.lpn..r.lpn + r.pages {
            self.ftl.unmap(Lpn(l));
            if let Some(m) = self.fad_ssdsim.as_deref_mut() {
                m.set_flag(l, false);
            }
            self.shadow_write(l, None);
        }
    }

    /// Writes one file; `timed = false` for preconditioning (no timing).
    /// A timed write's latency is recorded when its last program completes.
    /// `contents` are the page contents (`r.pages` of them), `hint` the
    /// request's explicit hint.
    pub(super) fn write(
        &mut self,
        index: usize,
        r: &Request,
        contents: &[ContentId],
        hint: RequestHint,
        t: Nanos,
        timed: bool,
    ) -> Result<(), SimError> {
        if r.content == NO_CONTENT || contents.len() != r.pages as usize {
            return Err(SimError::NoContent { index, pages: r.pages });
        }
        let n = r.pages as usize;
        let dedup = self.dedup;
        if timed {
            self.metrics.counters.writes += 1;
            self.metrics.counters.write_pages += n as u64;
        }

        // 1. Fingerprint lookup (FAD write path step 1).
        self.pages.clear();
        if let Some(f) = self.fingerprints.as_deref_mut() {
            f.begin_write();
        }
        // In-file duplicates: small files scan their own earlier pages
        // (cache-resident); large ones use a table of their own contents.
        let small = n <= SMALL_FILE;
        if dedup && !small {
            self.infile.begin(n);
        }
        for (k, &c) in contents.iter().enumerate() {
            // A repeat inside this file is found before the index lookup, so
            // that a content occurring twice in one file is one candidate
            // (one RDLT count, at most one private copy per file: FAD
            // §III-D's intent), whether or not the content is stored already.
            let repeat = if !dedup {
                None
            } else if small {
                contents[..k].iter().position(|&x| x == c).map(|first| first as u32)
            } else {
                self.infile.first_or_insert(c, k as u32)
            };
            let dup = match repeat {
                // The first occurrence of `c` in this file decides; later ones follow it.
                Some(first) => Dup::InFile { first },
                None if !dedup => Dup::None,
                // Another engine answers for the whole write below.
                None if !self.ftl_index => Dup::None,
                None => match self.ftl.find_duplicate(c) {
                    Some(e) => self.existing(e),
                    None => {
                        if let Some(f) = self.fingerprints.as_deref_mut() {
                            f.ftl_index_miss(&self.ftl, c);
                        }
                        Dup::None
                    }
                },
            };
            self.pages.push(PageInfo { lpn: Lpn(r.lpn + k as u32), content: c, dup });
        }
        let engine_path = dedup && !self.ftl_index;
        if engine_path {
            self.engine_lookup(r.stream);
            if self.eio.verdicts.len() != n || self.eio.hashed.len() != n {
                return Err(SimError::BadEngine {
                    engine: self.engine.name().into(),
                    verdicts: self.eio.verdicts.len(),
                    hashed: self.eio.hashed.len(),
                    want: n,
                });
            }
        }

        // 2. The policy decides (with the pages' layout if it asks).
        if self.wants_layout {
            self.page_layout(hint);
        }
        self.actions.clear();
        let hint = self.policy.place(&self.pages, &self.layout, self.units, &mut self.actions);
        if self.actions.len() != n {
            return Err(SimError::BadPlan { policy: self.policy.name().into(), got: self.actions.len(), want: n });
        }

        // 3. Pin existing copies that will be referenced, so that unmapping
        //    this file's old pages cannot free them midway (the authors'
        //    model maps no reference: nothing to pin).
        if self.fad_ssdsim.is_none() {
            for (p, a) in self.pages.iter().zip(&self.actions) {
                if let (Action::Reference, Dup::Existing { entry, .. } | Dup::Waiting { entry, .. }) = (a, p.dup) {
                    self.ftl.pin(entry);
                }
            }
        }

        // The policy's GC hint (FAD §III-G), for the timed replay only.
        let hint = if timed { hint } else { None };
        self.ftl.set_gc_preference(match hint {
            Some(GcHint::Prefer { unit, defer, margin }) => Some(GcPreference { unit, defer, margin }),
            _ => None,
        });

        // 4. Execute in page order.
        self.entry_of.clear();
        self.unit_of_page.clear();
        let slot = if timed { self.open_slot(t, Op::Write, r.lpn, r.pages) } else { NO_TAG };
        // What this write adds to the counters, for the observers.
        let observed = timed && self.observing;
        let before = if observed {
            let c = &self.metrics.counters;
            (c.dedup_pages, c.programs.host_unique + c.programs.host_rewrite)
        } else {
            (0, 0)
        };
        let mut done = t;
        let mut last_h = t;
        let hashed = dedup && timed;
        if hashed {
            if engine_path {
                self.timing.fingerprint_pages(t, &self.eio.hashed, self.engine_fp, &mut self.hash_ready);
            } else {
                self.timing.fingerprint_request(t, n, &mut self.hash_ready);
            }
        }
        self.programmed.clear();
        // This write's id among those whose DOF waits for placements
        // (`allocation = "dynamic"`).
        let file = self.unplaced_files.next_id();
        for k in 0..n {
            let p = self.pages[k];
            let h = if hashed { self.hash_ready[k] } else { t };
            last_h = h;
            // Placed (and mapped) later, when a channel serves it.
            let deferred = self.alloc.dynamic() && timed && matches!(self.actions[k], Action::Program { .. });
            let (e, unit) = match self.actions[k] {
                Action::Reference if self.fad_ssdsim.is_some() => {
                    // The authors' model: the duplicate is left unmapped and
                    // flagged; its reads go to physical page 0.
                    if p.dup == Dup::None {
                        return Err(SimError::BadReference { policy: self.policy.name().into(), page: k });
                    }
                    self.ftl.unmap(p.lpn);
                    let m = self.fad_ssdsim.as_deref_mut().expect("checked by the guard");
                    m.set_flag(p.lpn.0, true);
                    if timed {
                        self.metrics.counters.dedup_pages += 1;
                    }
                    done = done.max(h);
                    // No entry: under the model every reference (a repeat in
                    // the file included) takes this branch, so no later page
                    // looks this one up.
                    (EntryId::MAX, m.unit0)
                }
                Action::Reference => {
                    // GC moves pages only inside their plane, so a copy's
                    // unit stays what the lookup saw.
                    let (e, unit) = match p.dup {
                        Dup::Existing { entry, unit, .. } => (entry, unit),
                        Dup::Waiting { entry, .. } => (entry, NO_UNIT),
                        Dup::InFile { first } => {
                            let e = self.entry_of[first as usize];
                            self.ftl.pin(e);
                            (e, self.unit_of_page[first as usize])
                        }
                        Dup::None => return Err(SimError::BadReference { policy: self.policy.name().into(), page: k }),
                    };
                    if unit == NO_UNIT {
                        // A copy waiting to be placed (`allocation =
                        // "dynamic"`): the LPN is mapped when it is, and
                        // the write's DOF waits for its unit.
                        self.ftl.map_pinned_when_placed(p.lpn, e);
                        self.unplaced_refs.entry(e).or_default().push(file);
                        self.waiting_refs += 1;
                    } else {
                        self.ftl.map_pinned(p.lpn, e);
                    }
                    if timed {
                        self.metrics.counters.dedup_pages += 1;
                    }
                    done = done.max(h);
                    (e, unit)
                }
                Action::Program { .. } if deferred => {
                    // A copy placed when a channel serves it
                    // (`place_unplaced`); indexed now, so that duplicates
                    // reference it meanwhile. The LPN keeps its old
                    // mapping until then.
                    let is_new = p.dup == Dup::None;
                    let e = self.ftl.reserve_for(p.lpn, p.content, dedup && is_new && self.ftl_index)?;
                    let pr = &mut self.metrics.counters.programs;
                    if is_new {
                        pr.host_unique += 1;
                    } else {
                        pr.host_rewrite += 1;
                    }
                    self.inflight[slot as usize].remaining += 1;
                    self.timing.submit_unplaced(UnplacedWrite { at: h, tag: slot, copy: e, write: file });
                    (e, NO_UNIT)
                }
                Action::Program { unit } => {
                    let is_new = p.dup == Dup::None;
                    let index = dedup && is_new && self.ftl_index;
                    let (unit, (e, ppn, gc)) = match self.alloc.programs {
                        Allocator::Static(order) => {
                            let plane = self.ftl.geometry().static_plane(p.lpn.0, order);
                            (
                                self.ftl.geometry().unit_of_plane(plane),
                                self.ftl.program_in_plane(plane, p.content, index)?,
                            )
                        }
                        alloc => {
                            let unit = match alloc {
                                Allocator::LeastLoaded if timed => self.least_loaded_unit(h),
                                Allocator::FadSsdsim => {
                                    self.fad_ssdsim.as_deref_mut().expect("set with the model").draw_unit()
                                }
                                _ if self.wants_layout && !self.ftl.unit_has_room(unit) => self.unit_with_room(unit),
                                _ => unit,
                            };
                            (unit, self.ftl.program(unit, p.content, index)?)
                        }
                    };
                    self.ftl.map_pinned(p.lpn, e);
                    let pr = &mut self.metrics.counters.programs;
                    if !timed {
                        pr.precondition += 1;
                    } else if is_new {
                        pr.host_unique += 1;
                    } else {
                        pr.host_rewrite += 1;
                    }
                    if timed {
                        let chip = self.ftl.geometry().chip_of(ppn);
                        self.inflight[slot as usize].remaining += 1;
                        self.schedule(PendingOp { at: h, chip, kind: OpKind::Program, slot }, t);
                        self.reserve(chip, h, self.t_in_prog);
                    }
                    if let Some(gc) = gc {
                        self.account_gc(gc, h, t, timed);
                    }
                    (e, unit)
                }
            };
            self.entry_of.push(e);
            self.unit_of_page.push(unit);
            if engine_path {
                self.programmed.push(matches!(self.actions[k], Action::Program { .. }));
            }
            // A page waiting for its copy is mapped (and shadowed) then.
            if unit != NO_UNIT {
                self.shadow_write(p.lpn.0, Some(p.content));
            }
        }

        // The engine learns the outcome; its flash work is scheduled.
        if engine_path {
            self.engine.commit(&self.ftl, &self.wpages, &self.entry_of, &self.programmed, &mut self.eio);
            if timed {
                self.schedule_engine_ops(t, slot, hashed);
            }
        }

        // 5. An early-GC hint (`GcHint::Early`), issued with the last page.
        if timed {
            if let Some(GcHint::Early { unit, margin }) = hint {
                if let Some(gc) = self.ftl.soft_collect(unit, margin)? {
                    self.account_gc(gc, last_h, t, true);
                }
            }
            if observed {
                let c = &self.metrics.counters;
                let dup = c.dedup_pages - before.0;
                let programs = c.programs.host_unique + c.programs.host_rewrite - before.1;
                if let Some(s) = self.series.as_deref_mut() {
                    s.write_arrived(t, r.pages, dup, programs);
                }
                if let Some(o) = self.observer.as_mut() {
                    o.pending[slot as usize].dup_pages = dup as u32;
                }
            }
            // Release the processing guard: completes now if nothing is pending.
            self.op_done(slot, done);
        }

        // 6. DOF of the file as just placed (FAD §II-C); under dynamic
        //    allocation once its last page is placed.
        if timed && self.alloc.dynamic() {
            self.unplaced_files.push(&self.unit_of_page[..n]);
            self.count_placed_files();
        } else if timed {
            for k in 0..n {
                self.count_unit(self.unit_of_page[k]);
            }
            let max = self.drain_units();
            self.metrics.dof.write_sum += dof(n as u32, max, self.units);
            self.metrics.dof.write_count += 1;
        }
        Ok(())
    }

    /// Where the current write's pages and their logical predecessors live
    /// now ([`crate::policy::PageLayout`]), for the policy's `place`.
    pub(super) fn page_layout(&mut self, hint: RequestHint) {
        self.layout.clear();
        let unit = |ftl: &Ftl, lpn: u32| ftl.page_of(Lpn(lpn)).map(|p| ftl.geometry().unit_of(p));
        let hint = match hint {
            RequestHint::Absent => ExplicitHint::Absent,
            RequestHint::Unhinted => ExplicitHint::Unhinted,
            RequestHint::Given(Hint::Overwrite) => ExplicitHint::Overwrite,
            RequestHint::Given(Hint::Append { after }) => ExplicitHint::Append { after_unit: unit(&self.ftl, after) },
        };
        for p in &self.pages {
            let old_unit = unit(&self.ftl, p.lpn.0);
            let prev_unit = p.lpn.0.checked_sub(1).and_then(|l| unit(&self.ftl, l));
            self.layout.push(PageLayout { old_unit, prev_unit, hint });
        }
    }

    #[inline]
    pub(super) fn count_unit(&mut self, unit: u32) {
        let c = &mut self.unit_hits[unit as usize];
        if *c == 0 {
            self.touched.push(unit);
        }
        *c += 1;
    }

    /// Resets the per-unit hit counters touched by the last request and
    /// returns the maximum count seen.
    #[inline]
    pub(super) fn drain_units(&mut self) -> u32 {
        let mut max = 0;
        for &u in &self.touched {
            max = max.max(self.unit_hits[u as usize]);
            self.unit_hits[u as usize] = 0;
        }
        self.touched.clear();
        max
    }
}
