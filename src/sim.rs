//! One simulation: a workload replayed through a policy, the FTL and the
//! timing model, observed by the metrics.
//!
//! A [`Simulation`] owns all of its state (FTL, resources, counters); there
//! is no process-wide state, so runs execute side by side on threads. A run
//! is a pure function of (config, workload, policy): same inputs, identical
//! results.
//!
//! # Request path
//!
//! * **Write** (one "file", FAD §III-B): each page is fingerprinted (one
//!   hash engine, `dedup.fingerprint` per page, FCFS; pages are hashed in
//!   order and each page's flash program is issued when its own hash is
//!   done, so hashing overlaps the flash work of earlier pages), looked up
//!   in the fingerprint index, and described to the policy, which returns an
//!   action per page. References are pinned first, then pages are executed
//!   in order. A page completes when programmed (or, for a reference, when
//!   hashed); the request completes with its last page.
//! * **Read**: every mapped page is read from its chip; the request
//!   completes with its last page. Its DOF is computed from the chips read.
//! * **Trim**: unmaps pages; no flash time.
//! * **GC**: triggered inside allocation; its migrations and erases are
//!   charged to the chip right after the page program that triggered it.

use crate::config::{Config, ReplayConfig};
use crate::ftl::{Ftl, FtlError, GcWork, InvariantViolation};
use crate::metrics::{dof, Metrics};
use crate::policy::{Action, Dup, PageInfo, Policy};
use crate::timing::Timing;
use crate::units::{ContentId, Lpn, Nanos, Op};
use crate::workload::{Request, Workload, NO_CONTENT};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use thiserror::Error;

/// Files up to this many pages find in-file duplicates by scanning.
const SMALL_FILE: usize = 32;

/// How many requests ahead the mapping tables are prefetched.
const PREFETCH_AHEAD: usize = 8;

/// Errors that stop a simulation.
#[derive(Debug, Error)]
pub enum SimError {
    #[error(transparent)]
    Ftl(#[from] FtlError),
    #[error(transparent)]
    Invariant(#[from] InvariantViolation),
    #[error("request {index}: write of {pages} pages carries no content ids (assign a content model first)")]
    NoContent { index: usize, pages: u32 },
    #[error("the workload contains no requests to replay")]
    Empty,
    #[error(
        "the workload addresses {span} logical pages but the device exposes {capacity}; \
         use a larger device (--set geometry.blocks_per_plane=...) or replay with --wrap"
    )]
    TooLarge { span: u64, capacity: u64 },
    #[error("policy '{policy}' returned {got} actions for a {want}-page write")]
    BadPlan {
        policy: String,
        got: usize,
        want: usize,
    },
    #[error("policy '{policy}' asked to reference page {page} which has no duplicate")]
    BadReference { policy: String, page: usize },
}

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Verify the FTL invariants during the run: every read returns the
    /// content last written to its LPN (checked on every read), and the
    /// full structural check runs every `check_every` requests and at the end.
    pub check: bool,
    /// Full-check interval in requests (0 = only at the end).
    pub check_every: u64,
}

/// What a run produced (before report formatting).
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub metrics: Metrics,
    pub policy: String,
    pub policy_stats: Vec<(&'static str, f64)>,
    pub chip_busy: Vec<Nanos>,
    pub chip_wait: Vec<Nanos>,
    pub erase_counts: Vec<u32>,
    /// (mapping bytes, fingerprint index bytes) at the end of the run.
    pub metadata_bytes: (u64, u64),
    pub live_pages: u64,
    pub invariant_checks: u64,
}

/// One simulation. See the module doc.
pub struct Simulation<'w> {
    workload: &'w Workload,
    ftl: Ftl,
    timing: Timing,
    policy: Box<dyn Policy>,
    metrics: Metrics,
    replay: ReplayConfig,
    units: u32,
    /// Whether the policy deduplicates (looks contents up).
    dedup: bool,
    opts: RunOptions,
    // Scratch buffers reused across requests (no per-request allocation).
    pages: Vec<PageInfo>,
    actions: Vec<Action>,
    entry_of: Vec<u32>,
    /// Parallel unit of each page of the current file, as placed.
    unit_of_page: Vec<u32>,
    unit_hits: Vec<u32>,
    touched: Vec<u32>,
    /// In-file duplicate detection: content -> (request stamp, page index).
    infile: Vec<(u32, u32)>,
    stamp: u32,
    /// `--check`: LPN -> content + 1 as last written (0 = unmapped).
    shadow: Vec<u32>,
    checks: u64,
}

impl<'w> Simulation<'w> {
    pub fn new(cfg: &Config, workload: &'w Workload, policy: Box<dyn Policy>, opts: RunOptions) -> Result<Self, SimError> {
        let ftl = Ftl::new(cfg);
        if workload.timed().is_empty() {
            return Err(SimError::Empty);
        }
        if workload.lpn_span > ftl.logical_pages() as u64 {
            return Err(SimError::TooLarge {
                span: workload.lpn_span,
                capacity: ftl.logical_pages() as u64,
            });
        }
        let units = ftl.geometry().unit_count();
        let shadow = if opts.check {
            vec![0; ftl.logical_pages() as usize]
        } else {
            Vec::new()
        };
        Ok(Simulation {
            workload,
            timing: Timing::new(cfg),
            metrics: Metrics::default(),
            replay: cfg.replay.clone(),
            units,
            dedup: policy.deduplicates(),
            opts,
            pages: Vec::new(),
            actions: Vec::new(),
            entry_of: Vec::new(),
            unit_of_page: Vec::new(),
            unit_hits: vec![0; units as usize],
            touched: Vec::new(),
            infile: Vec::new(),
            stamp: 0,
            shadow,
            checks: 0,
            ftl,
            policy,
        })
    }

    /// Replays the whole workload. `progress(done, total)` is called every
    /// 65,536 requests (the caller may draw a progress bar).
    pub fn run(self, progress: &mut dyn FnMut(u64, u64)) -> Result<RunOutput, SimError> {
        self.run_keep(progress).map(|(out, _)| out)
    }

    /// Like [`Simulation::run`], also returning the final FTL state (tests).
    pub fn run_keep(mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<(RunOutput, Ftl), SimError> {
        let w = self.workload;
        let pre = w.precondition as usize;
        for (i, r) in w.requests[..pre].iter().enumerate() {
            self.write(i, r, Nanos::ZERO, false)?;
            self.metrics.counters.precondition_requests += 1;
        }
        let timed = &w.requests[pre..];
        let total = timed.len() as u64;
        let mut outstanding: BinaryHeap<Reverse<Nanos>> = BinaryHeap::new();
        let mut last_issue = Nanos::ZERO;
        let base = timed[0].arrival;
        for (k, r) in timed.iter().enumerate() {
            // Overlap the next requests' mapping-table misses with this one.
            if let Some(n) = timed.get(k + PREFETCH_AHEAD) {
                self.ftl.prefetch_mapping(n.lpn);
            }
            if let Some(n) = timed.get(k + PREFETCH_AHEAD / 2) {
                self.ftl.prefetch_entry(n.lpn);
                if n.op == Op::Write && self.dedup {
                    for &c in w.content_of(n).iter().take(16) {
                        self.ftl.prefetch_index(c);
                    }
                }
            }
            let issue = match self.replay {
                ReplayConfig::OpenLoop { time_scale } => {
                    let rel = (r.arrival - base).0;
                    let t = if time_scale == 1.0 {
                        Nanos(rel)
                    } else {
                        Nanos((rel as f64 * time_scale) as u64)
                    };
                    t.max(last_issue)
                }
                ReplayConfig::ClosedLoop { queue_depth } => {
                    if outstanding.len() as u32 >= queue_depth {
                        let Reverse(t) = outstanding.pop().expect("queue is full");
                        t.max(last_issue)
                    } else {
                        last_issue
                    }
                }
            };
            last_issue = issue;
            if k == 0 {
                self.metrics.first_issue = issue;
            }
            let done = match r.op {
                Op::Read => {
                    let d = self.read(r, issue)?;
                    self.metrics.read_latency.record(d - issue);
                    d
                }
                Op::Write => {
                    let d = self.write(pre + k, r, issue, true)?;
                    self.metrics.write_latency.record(d - issue);
                    d
                }
                Op::Trim => {
                    self.trim(r);
                    issue
                }
            };
            if let ReplayConfig::ClosedLoop { .. } = self.replay {
                outstanding.push(Reverse(done));
            }
            self.metrics.last_completion = self.metrics.last_completion.max(done);
            if self.opts.check && self.opts.check_every > 0 && (k as u64 + 1) % self.opts.check_every == 0 {
                self.ftl.check_invariants()?;
                self.checks += 1;
            }
            if k % 65_536 == 65_535 {
                progress(k as u64 + 1, total);
            }
        }
        progress(total, total);
        if self.opts.check {
            self.ftl.check_invariants()?;
            self.checks += 1;
        }
        let out = RunOutput {
            policy: self.policy.name().to_string(),
            policy_stats: self.policy.stats(),
            chip_busy: self.timing.chip_busy.clone(),
            chip_wait: self.timing.chip_wait.clone(),
            erase_counts: self.ftl.erase_counts().collect(),
            metadata_bytes: self.ftl.metadata_bytes(),
            live_pages: self.ftl.live_pages(),
            invariant_checks: self.checks,
            metrics: self.metrics,
        };
        Ok((out, self.ftl))
    }

    #[inline]
    fn count_unit(&mut self, unit: u32) {
        let c = &mut self.unit_hits[unit as usize];
        if *c == 0 {
            self.touched.push(unit);
        }
        *c += 1;
    }

    /// Resets the per-unit hit counters touched by the last request and
    /// returns the maximum count seen.
    #[inline]
    fn drain_units(&mut self) -> u32 {
        let mut max = 0;
        for &u in &self.touched {
            max = max.max(self.unit_hits[u as usize]);
            self.unit_hits[u as usize] = 0;
        }
        self.touched.clear();
        max
    }

    fn read(&mut self, r: &Request, t: Nanos) -> Result<Nanos, SimError> {
        let c = &mut self.metrics.counters;
        c.reads += 1;
        c.read_pages += r.pages as u64;
        let mut done = t;
        let mut mapped = 0;
        for l in r.lpn..r.lpn + r.pages {
            let Some(e) = self.ftl.lookup(Lpn(l)) else {
                self.metrics.counters.unmapped_read_pages += 1;
                continue;
            };
            let ent = *self.ftl.entry(e);
            if self.opts.check && self.shadow[l as usize] != ent.content.0 + 1 {
                return Err(InvariantViolation(format!(
                    "LPN {l} reads content {} but {} was last written",
                    ent.content.0,
                    self.shadow[l as usize] as i64 - 1
                ))
                .into());
            }
            let geo = self.ftl.geometry();
            let chip = geo.chip_of(ent.ppn);
            let unit = geo.unit_of(ent.ppn);
            done = done.max(self.timing.read_page(chip, t));
            self.metrics.counters.flash_reads_host += 1;
            self.count_unit(unit);
            mapped += 1;
        }
        let max = self.drain_units();
        if mapped > 0 {
            self.metrics.dof.read_sum += dof(mapped, max, self.units);
            self.metrics.dof.read_count += 1;
        }
        Ok(done)
    }

    fn trim(&mut self, r: &Request) {
        self.metrics.counters.trims += 1;
        self.metrics.counters.trim_pages += r.pages as u64;
        for l in r.lpn..r.lpn + r.pages {
            self.ftl.unmap(Lpn(l));
            if self.opts.check {
                self.shadow[l as usize] = 0;
            }
        }
    }

    /// Writes one file; `timed = false` for preconditioning.
    fn write(&mut self, index: usize, r: &Request, t: Nanos, timed: bool) -> Result<Nanos, SimError> {
        if r.content == NO_CONTENT {
            return Err(SimError::NoContent { index, pages: r.pages });
        }
        let contents: &[ContentId] = self.workload.content_of(r);
        let n = r.pages as usize;
        let dedup = self.dedup;
        if timed {
            self.metrics.counters.writes += 1;
            self.metrics.counters.write_pages += n as u64;
        }

        // 1. Fingerprint lookup (FAD write path step 1).
        self.pages.clear();
        // In-file duplicates: small files scan their own earlier pages
        // (cache-resident); large ones use a stamped content-indexed table.
        let small = n <= SMALL_FILE;
        if dedup && !small {
            self.stamp = self.stamp.wrapping_add(1);
            if self.infile.len() < self.workload.content_space as usize {
                self.infile.resize(self.workload.content_space as usize, (0, 0));
            }
        }
        for (k, &c) in contents.iter().enumerate() {
            let dup = if !dedup {
                Dup::None
            } else if let Some(e) = self.ftl.find_duplicate(c) {
                let ent = self.ftl.entry(e);
                Dup::Existing {
                    entry: e,
                    unit: self.ftl.geometry().unit_of(ent.ppn),
                    refs: ent.refs,
                    ppn: ent.ppn,
                }
            } else if small {
                match contents[..k].iter().position(|&x| x == c) {
                    // The first occurrence of `c` in this file is the one that is programmed.
                    Some(first) => Dup::InFile { first: first as u32 },
                    None => Dup::None,
                }
            } else {
                let slot = &mut self.infile[c.0 as usize];
                if slot.0 == self.stamp {
                    Dup::InFile { first: slot.1 }
                } else {
                    *slot = (self.stamp, k as u32);
                    Dup::None
                }
            };
            self.pages.push(PageInfo {
                lpn: Lpn(r.lpn + k as u32),
                content: c,
                dup,
            });
        }

        // 2. The policy decides.
        self.actions.clear();
        self.policy.place(&self.pages, self.units, &mut self.actions);
        if self.actions.len() != n {
            return Err(SimError::BadPlan {
                policy: self.policy.name().into(),
                got: self.actions.len(),
                want: n,
            });
        }

        // 3. Pin existing copies that will be referenced, so that unmapping
        //    this file's old pages cannot free them midway.
        for (p, a) in self.pages.iter().zip(&self.actions) {
            if let (Action::Reference, Dup::Existing { entry, .. }) = (a, p.dup) {
                self.ftl.pin(entry);
            }
        }

        // 4. Execute in page order.
        self.entry_of.clear();
        self.unit_of_page.clear();
        let mut done = t;
        for k in 0..n {
            let p = self.pages[k];
            let h = if dedup && timed { self.timing.fingerprint(t) } else { t };
            let (e, unit) = match self.actions[k] {
                Action::Reference => {
                    // GC moves pages only inside their plane, so a copy's
                    // unit stays what the lookup saw.
                    let (e, unit) = match p.dup {
                        Dup::Existing { entry, unit, .. } => (entry, unit),
                        Dup::InFile { first } => {
                            let e = self.entry_of[first as usize];
                            self.ftl.pin(e);
                            (e, self.unit_of_page[first as usize])
                        }
                        Dup::None => {
                            return Err(SimError::BadReference {
                                policy: self.policy.name().into(),
                                page: k,
                            })
                        }
                    };
                    self.ftl.map_pinned(p.lpn, e);
                    if timed {
                        self.metrics.counters.dedup_pages += 1;
                    }
                    done = done.max(h);
                    (e, unit)
                }
                Action::Program { unit } => {
                    let is_new = p.dup == Dup::None;
                    let (e, ppn, gc) = self.ftl.program(unit, p.content, dedup && is_new)?;
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
                        done = done.max(self.timing.program_page(chip, h));
                    }
                    if let Some(gc) = gc {
                        self.account_gc(gc, h, timed);
                    }
                    (e, unit)
                }
            };
            self.entry_of.push(e);
            self.unit_of_page.push(unit);
            if self.opts.check {
                self.shadow[p.lpn.0 as usize] = p.content.0 + 1;
            }
        }

        // 5. The policy's early-GC hint (FAD §III-G).
        if timed {
            if let Some((unit, margin)) = self.policy.soft_gc() {
                if let Some(gc) = self.ftl.soft_collect(unit, margin)? {
                    self.account_gc(gc, t, true);
                }
            }
        }

        // 6. DOF of the file as just placed (FAD §II-C).
        if timed {
            for k in 0..n {
                self.count_unit(self.unit_of_page[k]);
            }
            let max = self.drain_units();
            self.metrics.dof.write_sum += dof(n as u32, max, self.units);
            self.metrics.dof.write_count += 1;
        }
        Ok(done)
    }

    fn account_gc(&mut self, gc: GcWork, t: Nanos, timed: bool) {
        let c = &mut self.metrics.counters;
        c.gc_invocations += 1;
        c.programs.gc += gc.moved as u64;
        c.flash_reads_gc += gc.moved as u64;
        c.erases += gc.erased as u64;
        if timed {
            let chip = self.ftl.geometry().chip_of_plane(gc.plane);
            self.timing.gc(chip, t, gc.moved, gc.erased);
        }
    }
}
