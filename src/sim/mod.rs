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
//! * **Write** (one "file", FAD §III-B): each page is fingerprinted
//!   ([`Timing::fingerprint_request`]: `dedup.hash_engines` FCFS engines,
//!   `dedup.fingerprint` per page; by default pages are hashed in order,
//!   each on the earliest-free engine, and each page's flash program is
//!   issued when its own hash is done, so hashing overlaps the flash work
//!   of earlier pages; `dedup.hash_unit` and `dedup.hash_overlap` select
//!   the other models), looked up
//!   in the fingerprint index, and described to the policy, which returns an
//!   action per page. References are pinned first, then pages are executed
//!   in order. A page completes when programmed (or, for a reference, when
//!   hashed); the request completes with its last page.
//! * **Read**: every mapped page is read from its chip; the request
//!   completes with its last page. Its DOF is computed from the chips read.
//! * **Trim**: unmaps pages; no flash time.
//! * **GC**: triggered inside allocation; its migrations and erases are
//!   charged to the chip right after the page program that triggered it.
//!
//! # The authors' public dedup model (labelled experiment)
//!
//! `experiment.fad_ssdsim_model = true` replaces two parts of the device
//! model by what the FAD authors' public simulator (FAD-SSDsim, their
//! SSDsim fork) does, so that the reproduction can show what that model
//! does to the paper's comparisons. It is not a device a user would choose,
//! and every report of such a run says so ([`crate::config::FAD_SSDSIM_MODEL_LABEL`]).
//!
//! * **Duplicates are lost.** A page the policy references
//!   ([`Action::Reference`]: a deduplicated duplicate, of an earlier copy or
//!   of an earlier page of the same file) is not mapped: the LPN's old
//!   mapping is released as on any overwrite, the LPN is left unmapped and
//!   flagged. A read of a flagged, unmapped LPN is charged as a flash read
//!   of physical page 0, i.e. chip 0 = channel 0, chip 0 of that channel
//!   (FAD-SSDsim leaves such a page's mapping at 0). A later program of the
//!   LPN maps it again (the stale flag is never consulted for a mapped
//!   LPN); a trim clears the flag. The fingerprint index is dedupsim's: a
//!   content counts as a duplicate while a live copy of it exists.
//!   References take no reference count, so the heat FAD sees is that of
//!   the copy's mapped sharers only.
//! * **Seven chips.** Programs of placement-free policies
//!   ([`Policy::placement_free`]: Native, Deduplication, HAR, FCRC) go to a
//!   unit drawn uniformly by a Xoshiro256++ stream seeded from the run's
//!   seed, over channels `0 ..= C - 2` and chips `0 ..= K - 2` of each
//!   (FAD-SSDsim's `rand() % (channel - 1)`, `rand() % (chip - 1)`): with
//!   FAD Table I's 8 x 2 chips, dedupsim's chips 0..=6 (chip g is channel
//!   g % C, chip g / C of it). At die or plane level the draw is uniform
//!   over the units of those chips. This replaces `allocation`; FAD's own
//!   placements are kept (they are what is evaluated), and so is the
//!   round-robin preconditioning. Writes of any policy that go through
//!   the policy (replayed, or preconditioning with `placement = "policy"`)
//!   follow the model.
//! * **`--check`** still runs every FTL invariant check and verifies every
//!   read of a mapped LPN; reads of flagged LPNs are not content-checked,
//!   since the model loses those pages by design.
//!
//! With the switch off the model costs one predictable branch per
//! referenced or programmed page and nothing on the read path's mapped pages.
//!
//! # FCFS by arrival at the chip
//!
//! A page program reaches its chip when its fingerprint is done, which can
//! be after later requests have arrived. So that every chip serves
//! operations first-come-first-served *by their arrival at the chip* (a read
//! arriving while a write is still hashing is served first), programs and
//! GC work whose arrival lies in the future wait in a FIFO of pending
//! operations, which is drained up to each request's arrival before that
//! request touches the resources. Hash completion times usually never
//! decrease (one FCFS pool of engines), so operations join the FIFO at its
//! back; with `dedup.hash_unit = "request"` on several engines a later
//! request can be hashed first, and its operations are inserted in arrival
//! order (after those arriving at the same time). A write's
//! latency is recorded when its last pending program has been applied.
//! Mapping state changes at processing time; only timing is deferred.

use crate::config::{Allocation, Config, ParallelUnit, PreconditionPlacement, ReplayConfig, StaticOrder};
use crate::engine::{self, Background, Engine, EngineError, EngineIo, FlashOp, IdleWindow, Verdict, When, WritePage};
use crate::ftl::{EntryId, Ftl, FtlError, GcPreference, GcWork, InvariantViolation};
use crate::geometry::Geometry;
use crate::metrics::{dof, Metrics};
use crate::policy::{Action, Dup, ExplicitHint, GcHint, PageInfo, PageLayout, Policy, Relocation};
use crate::series::{SeriesRecorder, TimeSeries};
use crate::timing::{OpKind, Timing, NO_TAG};
use crate::units::{ContentId, Lpn, Nanos, Op, Ppn};
use crate::workload::{Hint, Request, Workload, NO_CONTENT};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use thiserror::Error;

mod observe;
mod replay;
mod stream;
pub use observe::{RequestRecord, RequestSink};
use replay::ReplayState;
pub use replay::{ReplayBatch, ReplayPlan};
use stream::Fingerprints;
pub use stream::StreamRequest;

/// A flash operation whose arrival at its chip lies in the future.
#[derive(Copy, Clone, Debug)]
struct PendingOp {
    at: Nanos,
    chip: u32,
    kind: OpKind,
    /// In-flight request slot the operation belongs to (`NO_TAG` for GC).
    slot: u32,
}

/// A timed request whose completion is not known yet.
#[derive(Copy, Clone, Debug)]
struct Inflight {
    issue: Nanos,
    done: Nanos,
    /// Flash operations not completed yet, plus one while the request is
    /// being processed.
    remaining: u32,
    op: Op,
    /// The request's tag: its index in the replay, or the streaming
    /// caller's ([`StreamRequest::tag`]).
    tag: u64,
}

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

/// Longest replayed span of simulated time (2^62 ns, about 146 years):
/// leaves room for every queue behind the last arrival without overflow.
const MAX_SPAN_NS: u64 = 1 << 62;

/// Files up to this many pages find in-file duplicates by scanning.
const SMALL_FILE: usize = 32;

/// How many requests ahead the mapping tables are prefetched.
const PREFETCH_AHEAD: usize = 8;

/// Pages per request whose mapping chain is prefetched.
const PREFETCH_PAGES: u32 = 16;

/// Salt of the FAD-SSDsim model's placement stream (independent of the
/// content models' streams drawn from the same seed).
const FAD_SSDSIM_SALT: u64 = 0x6661_645f_7373_6473; // "fad_ssds"

/// State of the authors' public dedup model (module doc,
/// `experiment.fad_ssdsim_model`).
struct FadSsdsimModel {
    /// Per LPN, one bit: referenced under the model, so left unmapped.
    flagged: Vec<u64>,
    /// Units placement-free programs are drawn from.
    allowed: Vec<u32>,
    rng: Xoshiro256PlusPlus,
    /// Chip and unit of physical page 0.
    chip0: u32,
    unit0: u32,
    /// Reads charged to physical page 0 (timed).
    page0_reads: u64,
}

impl FadSsdsimModel {
    fn new(cfg: &Config, ftl: &Ftl) -> FadSsdsimModel {
        let geo = ftl.geometry();
        let (c, k) = (geo.channels, geo.chips_per_channel);
        let allowed = (0..geo.unit_count())
            .filter(|&u| {
                let g = geo.chip_of_plane(geo.unit_planes(u)[0]);
                g % c < c - 1 && g / c < k - 1
            })
            .collect();
        FadSsdsimModel {
            flagged: vec![0; (ftl.logical_pages() as usize).div_ceil(64)],
            allowed,
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed ^ FAD_SSDSIM_SALT),
            chip0: geo.chip_of(Ppn(0)),
            unit0: geo.unit_of(Ppn(0)),
            page0_reads: 0,
        }
    }

    #[inline]
    fn is_flagged(&self, lpn: u32) -> bool {
        self.flagged[(lpn / 64) as usize] >> (lpn % 64) & 1 != 0
    }

    #[inline]
    fn set_flag(&mut self, lpn: u32, on: bool) {
        let w = &mut self.flagged[(lpn / 64) as usize];
        let bit = 1u64 << (lpn % 64);
        if on {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }

    /// FAD-SSDsim's `rand() % (channel - 1)`, `rand() % (chip - 1)`.
    #[inline]
    fn draw_unit(&mut self) -> u32 {
        self.allowed[self.rng.gen_range(0..self.allowed.len())]
    }
}

/// Errors that stop a simulation.
#[derive(Debug, Error)]
pub enum SimError {
    /// A batch-fed replay ([`Simulation::replaying`]) got its requests out
    /// of order, or not as many as its plan announced (a trace file that
    /// changed between its two passes).
    #[error("replay: {0}")]
    Order(&'static str),
    #[error(transparent)]
    Ftl(#[from] FtlError),
    #[error(transparent)]
    Invariant(#[from] InvariantViolation),
    #[error("request {index}: write of {pages} pages carries no content ids (assign a content model first)")]
    NoContent { index: usize, pages: u32 },
    #[error(
        "request {index}: a stream gives the fingerprints of every write's pages or of none \
         ({pages} pages, {given} fingerprints)"
    )]
    Fingerprints { index: usize, pages: u32, given: usize },
    #[error("the workload contains no requests to replay")]
    Empty,
    #[error(
        "the workload addresses {span} logical pages but the device exposes {capacity}; \
         use a larger device (--set geometry.blocks_per_plane=...) or a smaller workload (footprint= \
         of a synthetic spec, NAME@SCALE of a replica; `run --trace FILE --wrap` folds a trace)"
    )]
    TooLarge { span: u64, capacity: u64 },
    #[error(
        "the workload spans {span_s:.0} s of simulated time{}, beyond the simulator's clock range of \
         {limit_s:.0} s; {}",
        if *scale == 1.0 { String::new() } else { format!(" (x replay.time_scale {scale})") },
        if *scale == 1.0 { "check the trace's time unit (or a synthetic spec's iat=)" } else { "check the trace's time unit or lower replay.time_scale" }
    )]
    TimeRange { span_s: f64, scale: f64, limit_s: f64 },
    #[error("policy '{policy}' returned {got} actions for a {want}-page write")]
    BadPlan { policy: String, got: usize, want: usize },
    #[error("policy '{policy}' asked to reference page {page} which has no duplicate")]
    BadReference { policy: String, page: usize },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("dedup engine '{engine}' returned {verdicts} verdicts and {hashed} hash flags for a {want}-page write")]
    BadEngine { engine: String, verdicts: usize, hashed: usize, want: usize },
    #[error(
        "allocation = \"dynamic\" (SSDsim's serve-time allocation) does not apply here: {why}; it applies \
         only to policies that neither deduplicate nor place their own pages (native), in the open-loop \
         replay; use allocation = \"least-loaded\" (its approximation at processing time) otherwise"
    )]
    DynamicAllocation { why: &'static str },
}

/// A timed page write waiting for dynamic allocation to place it
/// (`allocation = "dynamic"`).
#[derive(Copy, Clone, Debug)]
struct Unplaced {
    lpn: Lpn,
    content: ContentId,
    /// Trimmed after it was written: unmapped again once placed.
    trimmed: bool,
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
    /// The dedup engine (`dedup.engine`) and what it counted, with the
    /// flash operations the simulator executed for it (empty for `caftl`,
    /// which charges nothing but its hash time).
    pub engine: String,
    pub engine_stats: Vec<(&'static str, f64)>,
    pub chip_busy: Vec<Nanos>,
    pub chip_wait: Vec<Nanos>,
    pub erase_counts: Vec<u32>,
    /// (mapping bytes, fingerprint index bytes) at the end of the run.
    pub metadata_bytes: (u64, u64),
    pub live_pages: u64,
    pub invariant_checks: u64,
    /// The hash engines' load over the timed replay (all zero but
    /// `engines` for a policy that does not deduplicate).
    pub hash: crate::timing::HashLoad,
    /// The time series, if [`Simulation::record_series`] asked for one.
    pub series: Option<TimeSeries>,
}

/// One simulation. See the module doc.
pub struct Simulation<'w> {
    /// The workload [`Simulation::run`] replays; `None` for a streaming
    /// simulation ([`Simulation::streaming`]), fed request by request, and
    /// for a replay fed in batches ([`Simulation::replaying`]).
    workload: Option<&'w Workload>,
    /// The replay's clock ([`replay`]).
    replay_state: ReplayState,
    /// Content ids are below this (sizes the in-file duplicate table).
    content_space: u32,
    /// Tag of the request being processed ([`Inflight::tag`]).
    tag: u64,
    /// The streaming interface's clock and counts ([`stream`]).
    stream: stream::StreamState,
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
    /// Operations arriving at their chip in the future, sorted by arrival.
    pending: VecDeque<PendingOp>,
    /// Per page of the current write: when its program may be issued (its
    /// hash, or the whole request's, is done).
    hash_ready: Vec<Nanos>,
    /// Completions taken from the timing model, to be applied.
    completed: Vec<(u32, Nanos)>,
    inflight: Vec<Inflight>,
    free_slots: Vec<u32>,
    /// Closed loop and streaming: known completions (time, tag) of
    /// outstanding requests.
    completions: BinaryHeap<Reverse<(Nanos, u64)>>,
    closed_loop: bool,
    precondition_placement: PreconditionPlacement,
    /// `allocation = "least-loaded"` applies (the policy's placement is free).
    least_loaded: bool,
    /// `allocation = "static:ORDER"` places the policy's programs (its
    /// placement is free): each page in the plane its LPN stripes to.
    static_order: Option<StaticOrder>,
    /// `allocation = "static:ORDER"`, for the preconditioning writes of
    /// every policy (SSDsim's pre-processing places them so).
    static_precondition: Option<StaticOrder>,
    /// `allocation = "dynamic"`: timed page writes wait unplaced in the
    /// timing model until a channel serves them ([`Timing::place_next`]).
    dynamic: bool,
    /// Those pages, oldest first (the timing model's order).
    unplaced: VecDeque<Unplaced>,
    /// Written requests not fully placed yet, oldest first: their pages
    /// and the units of those placed so far (for the write DOF).
    unplaced_files: VecDeque<(u32, Vec<u32>)>,
    /// The device seen at chip level (its units are the chips, each listing
    /// its planes in SSDsim's rotation, die fastest) and, per chip, the
    /// rotation's pointer, for dynamically placed pages.
    chip_level: Geometry,
    chip_ptr: Vec<u32>,
    /// Per chip: when it would be free of all work issued to it so far, as
    /// if served in order (the least-loaded allocator's load estimate).
    est_free: Vec<Nanos>,
    /// Chip of each parallel unit.
    unit_chip: Vec<u32>,
    /// Least-loaded allocator's tie-break pointer (SSDsim's token).
    ll_next: u32,
    t_read_out: Nanos,
    t_in_prog: Nanos,
    /// Round-robin pointer of preconditioning placement.
    precondition_next: u32,
    /// `experiment.fad_ssdsim_model` (module doc); `None` when off.
    fad_ssdsim: Option<Box<FadSsdsimModel>>,
    /// The model places this policy's programs (it is placement-free).
    fad_ssdsim_places: bool,
    /// The dedup engine ([`crate::engine`]).
    engine: Box<dyn Engine>,
    /// The engine is the FTL's own index (CAFTL): look up inline.
    ftl_index: bool,
    /// Fingerprints of real bytes (`dedupsim serve`), when the stream
    /// gives them; otherwise a page's fingerprint is its content id.
    fingerprints: Option<Box<Fingerprints>>,
    /// Engine scratch: the write's pages, the engine's answers, which
    /// pages were programmed, freed copies, background work.
    wpages: Vec<WritePage>,
    eio: EngineIo,
    programmed: Vec<bool>,
    freed: Vec<(ContentId, EntryId)>,
    bg: Background,
    /// Per-page hash time of the engine.
    engine_fp: Nanos,
    chips: u32,
    ecount: EngineCounts,
    /// The policy wants page layouts ([`Policy::wants_layout`]).
    wants_layout: bool,
    layout: Vec<PageLayout>,
    /// The policy's idle threshold ([`Policy::idle_threshold`]).
    policy_idle: Nanos,
    /// Relocation scratch and counts ([`Policy::idle`]).
    relocations: Vec<Relocation>,
    rcount: RelocationCounts,
    /// `run --request-log`: the request observer ([`observe`]).
    observer: Option<observe::Observer<'w>>,
    /// `run --timeseries`: the time series ([`crate::series`]), and when
    /// to settle it next (`Nanos(u64::MAX)` when off: one compare per
    /// request).
    series: Option<Box<SeriesRecorder>>,
    series_check: Nanos,
    /// Either observer is on (one test per request).
    observing: bool,
    /// The request observer is on (one test per flash operation).
    observing_ops: bool,
    /// Observers: logical pages of the request in each in-flight slot.
    slot_pages: Vec<u32>,
}

/// Relocations the simulator executed for a policy.
#[derive(Clone, Debug, Default)]
struct RelocationCounts {
    /// Idle windows the policy took.
    idle_windows: u64,
    /// Logical pages that followed the relocated copies (their sharers).
    lpns: u64,
    /// Relocations skipped: the copy was freed or rewritten, or already on
    /// the target unit.
    skipped: u64,
}

/// Flash work the simulator executed for a dedup engine.
#[derive(Clone, Debug, Default)]
struct EngineCounts {
    data_reads: u64,
    gating_reads: u64,
    meta_reads: u64,
    meta_programs: u64,
    background_ops: u64,
    remaps: u64,
    remaps_skipped: u64,
    idle_windows: u64,
}

impl<'w> Simulation<'w> {
    pub fn new(
        cfg: &Config,
        workload: &'w Workload,
        policy: Box<dyn Policy>,
        opts: RunOptions,
    ) -> Result<Self, SimError> {
        let engine = engine::build(&cfg.dedup.engine, &cfg.engine_context())?;
        Self::with_engine(cfg, workload, policy, engine, opts)
    }

    /// Like [`Simulation::new`] with a given dedup engine instead of the
    /// one `dedup.engine` names.
    pub fn with_engine(
        cfg: &Config,
        workload: &'w Workload,
        policy: Box<dyn Policy>,
        engine: Box<dyn Engine>,
        opts: RunOptions,
    ) -> Result<Self, SimError> {
        let plan = ReplayPlan::of(workload);
        let mut sim = Self::build(cfg, Some(&plan), policy, engine, opts)?;
        sim.workload = Some(workload);
        Ok(sim)
    }

    /// The one constructor: for a replay of a workload described by `plan`
    /// (held, [`Simulation::new`], or fed in batches,
    /// [`Simulation::replaying`]), or (`None`) for requests streamed in one
    /// by one ([`Simulation::streaming`]).
    fn build(
        cfg: &Config,
        plan: Option<&ReplayPlan>,
        policy: Box<dyn Policy>,
        engine: Box<dyn Engine>,
        opts: RunOptions,
    ) -> Result<Self, SimError> {
        let streaming = plan.is_none();
        let mut ftl = Ftl::new(&cfg.ftl_params());
        let ftl_index = engine.uses_ftl_index();
        let wants_layout = policy.wants_layout();
        if wants_layout {
            // Layout-driven placement can pile live data on one unit.
            ftl.track_plane_live();
        }
        let policy_idle_threshold = policy.idle_threshold();
        if cfg.allocation == Allocation::Dynamic {
            let why = if policy.deduplicates() {
                Some("it deduplicates (a duplicate would reference a copy still waiting to be placed)")
            } else if !policy.placement_free() {
                Some("it places its own pages")
            } else if streaming {
                Some("requests are streamed in one by one (serve), where arrivals depend on completions")
            } else if matches!(cfg.replay, ReplayConfig::ClosedLoop { .. }) {
                Some("the replay is closed-loop")
            } else if cfg.experiment.fad_ssdsim_model {
                Some("the FAD-SSDsim model places the baselines' pages itself")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(SimError::DynamicAllocation { why });
            }
        }
        let content_space = plan.map_or(0, |p| p.content_space);
        if policy.deduplicates() {
            if ftl_index {
                ftl.reserve_index(content_space);
            } else {
                ftl.track_freed();
                if engine.wants_derefs() {
                    ftl.track_derefs();
                }
            }
        }
        if let Some(plan) = plan {
            if plan.timed == 0 {
                return Err(SimError::Empty);
            }
            if plan.lpn_span > ftl.logical_pages() as u64 {
                return Err(SimError::TooLarge { span: plan.lpn_span, capacity: ftl.logical_pages() as u64 });
            }
        }
        // Simulated time must not saturate (latencies would read 0): the
        // replayed span, scaled, must leave ample headroom below 2^64 ns.
        if let (ReplayConfig::OpenLoop { time_scale }, Some(plan)) = (&cfg.replay, plan) {
            let span = (plan.last_arrival - plan.first_arrival).0 as f64 * time_scale;
            if span > MAX_SPAN_NS as f64 {
                return Err(SimError::TimeRange {
                    span_s: span / 1e9,
                    scale: *time_scale,
                    limit_s: MAX_SPAN_NS as f64 / 1e9,
                });
            }
        }
        let units = ftl.geometry().unit_count();
        let fad_ssdsim = cfg.experiment.fad_ssdsim_model.then(|| Box::new(FadSsdsimModel::new(cfg, &ftl)));
        let shadow = if opts.check { vec![0; ftl.logical_pages() as usize] } else { Vec::new() };
        Ok(Simulation {
            workload: None,
            replay_state: ReplayState::default(),
            content_space,
            tag: 0,
            stream: stream::StreamState::default(),
            timing: {
                let mut t = Timing::new(&cfg.timing_params());
                // The closed loop bounds unreported completions by the next event.
                if streaming || matches!(cfg.replay, ReplayConfig::ClosedLoop { .. }) {
                    t.report_at_completion();
                }
                if cfg.allocation == Allocation::Dynamic {
                    // SSDsim's pre-processing counts a program per page of
                    // every read request of the trace.
                    t.set_programs_before(plan.map_or(0, |p| p.read_pages));
                }
                t
            },
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
            pending: VecDeque::new(),
            hash_ready: Vec::new(),
            completed: Vec::new(),
            inflight: Vec::new(),
            free_slots: Vec::new(),
            completions: BinaryHeap::new(),
            closed_loop: streaming || matches!(cfg.replay, ReplayConfig::ClosedLoop { .. }),
            precondition_placement: cfg.precondition.placement,
            least_loaded: cfg.allocation == Allocation::LeastLoaded && policy.placement_free() && fad_ssdsim.is_none(),
            static_order: cfg.allocation.static_order().filter(|_| policy.placement_free() && fad_ssdsim.is_none()),
            static_precondition: cfg.allocation.static_order(),
            dynamic: cfg.allocation == Allocation::Dynamic,
            unplaced: VecDeque::new(),
            unplaced_files: VecDeque::new(),
            chip_level: Geometry::new(&cfg.geometry, ParallelUnit::Chip),
            chip_ptr: vec![0; (cfg.geometry.channels * cfg.geometry.chips_per_channel) as usize],
            fad_ssdsim_places: fad_ssdsim.is_some() && policy.placement_free(),
            fad_ssdsim,
            est_free: vec![Nanos::ZERO; (cfg.geometry.channels * cfg.geometry.chips_per_channel) as usize],
            unit_chip: (0..units).map(|u| ftl.geometry().chip_of_plane(ftl.geometry().unit_planes(u)[0])).collect(),
            ll_next: 0,
            t_read_out: cfg.timing.read + cfg.timing.page_transfer,
            t_in_prog: cfg.timing.page_transfer + cfg.timing.program,
            precondition_next: 0,
            ftl,
            policy,
            engine_fp: engine.hash_time().unwrap_or(cfg.dedup.fingerprint),
            ftl_index,
            fingerprints: None,
            engine,
            wpages: Vec::new(),
            eio: EngineIo::default(),
            programmed: Vec::new(),
            freed: Vec::new(),
            bg: Background::default(),
            chips: cfg.chips(),
            ecount: EngineCounts::default(),
            wants_layout,
            layout: Vec::new(),
            policy_idle: policy_idle_threshold,
            relocations: Vec::new(),
            rcount: RelocationCounts::default(),
            observer: None,
            series: None,
            series_check: Nanos(u64::MAX),
            observing: false,
            observing_ops: false,
            slot_pages: Vec::new(),
        })
    }

    /// Hands every replayed request's [`RequestRecord`] to `sink` as it
    /// completes (`run --request-log`; `sim::observe`).
    pub fn observe_requests(&mut self, sink: &'w mut dyn RequestSink) {
        let geo = self.ftl.geometry();
        let channel_of = (0..self.chips).map(|c| geo.channel_of_chip(c)).collect();
        self.observer = Some(observe::Observer::new(sink, channel_of, geo.channels));
        self.observing = true;
        self.observing_ops = true;
    }

    /// Records a time series with intervals of `interval` of simulated
    /// time ([`crate::series`]), returned in [`RunOutput::series`].
    pub fn record_series(&mut self, interval: Nanos) {
        let interval = Nanos(interval.0.max(1));
        let series = SeriesRecorder::new(interval);
        self.series_check = series.next_settle();
        self.series = Some(Box::new(series));
        self.observing = true;
        self.timing.record_busy(interval);
    }

    /// The time series' check at the arrival of a request at `now`: the
    /// free-block snapshot, and the intervals no request can complete in
    /// any more (none before the earliest arrival still in flight) settled.
    #[cold]
    fn settle_series(&mut self, now: Nanos) {
        let floor = self.inflight.iter().filter(|f| f.remaining > 0).map(|f| f.issue).fold(now, Nanos::min);
        let free = self.ftl.free_blocks_total();
        if let Some(s) = self.series.as_deref_mut() {
            s.settle(now, floor, free);
            self.series_check = s.next_settle();
        }
    }

    /// An operation of the request in `slot` (or background work, `NO_TAG`)
    /// reaches `chip` at `at` (the request observer's bookkeeping). Out of
    /// line, so that the request path keeps one test for it.
    #[cold]
    #[inline(never)]
    fn observe_op(&mut self, slot: u32, chip: u32, at: Nanos, kind: OpKind) {
        if let Some(o) = self.observer.as_mut() {
            let cost = match kind {
                OpKind::Read => self.t_read_out,
                OpKind::Program => self.t_in_prog,
                OpKind::Gc(d) => d,
            };
            if slot == NO_TAG {
                o.background(chip, at, cost, matches!(kind, OpKind::Gc(_)));
            } else {
                o.touch(slot, chip, at, cost);
            }
        }
    }

    /// Ends a run after its last arrival at `last_issue`: the idle time
    /// after it, every queued operation, the final check, the output.
    fn conclude(mut self, last_issue: Nanos) -> Result<(RunOutput, Ftl), SimError> {
        self.offer_idle(last_issue, None)?;
        if self.dynamic {
            self.place_unplaced(Nanos(u64::MAX))?;
            debug_assert!(!self.timing.has_unplaced(), "every waiting write is served in the end");
        }
        while !self.pending.is_empty() {
            self.apply_front();
        }
        self.timing.finish();
        self.collect();
        let busy = self.timing.take_busy();
        let series = self.series.take().map(|s| s.finish(busy));
        if self.opts.check {
            self.ftl.check_invariants()?;
            self.checks += 1;
        }
        let mut policy_stats = self.policy.stats();
        if let Some(m) = &self.fad_ssdsim {
            policy_stats.push(("fad_ssdsim_page0_reads", m.page0_reads as f64));
        }
        if self.rcount.idle_windows > 0 {
            let r = &self.rcount;
            policy_stats.extend([
                ("relocated_pages", self.metrics.counters.programs.relocation as f64),
                ("relocated_lpns", r.lpns as f64),
                ("relocations_skipped", r.skipped as f64),
                ("relocation_idle_windows", r.idle_windows as f64),
            ]);
        }
        let engine_stats = self.engine_stats();
        let out = RunOutput {
            policy: self.policy.name().to_string(),
            policy_stats,
            engine: self.engine.name().to_string(),
            engine_stats,
            chip_busy: self.timing.chip_busy().to_vec(),
            chip_wait: self.timing.chip_wait().to_vec(),
            erase_counts: self.ftl.erase_counts().collect(),
            metadata_bytes: self.ftl.metadata_bytes(),
            live_pages: self.ftl.live_pages(),
            invariant_checks: self.checks,
            hash: self.timing.hash_load(),
            metrics: self.metrics,
            series,
        };
        Ok((out, self.ftl))
    }

    /// The earliest known completion `(tag, time)`, taken only once nothing
    /// still to simulate can end earlier, simulating as far as needed;
    /// `None` when nothing is left. The closed-loop replay and the
    /// streaming interface both wait with it.
    fn certain_completion(&mut self) -> Option<(u64, Nanos)> {
        loop {
            let next_op = self.pending.front().map(|o| o.at);
            let next_ev = self.timing.next_event();
            let horizon = match (next_op, next_ev) {
                (Some(a), Some(e)) => Some(a.min(e)),
                (a, e) => a.or(e),
            };
            if let Some(&Reverse((c, tag))) = self.completions.peek() {
                if horizon.is_none_or(|h| c <= h) {
                    self.completions.pop();
                    return Some((tag, c));
                }
            }
            match (next_op, next_ev) {
                (Some(a), Some(e)) if a <= e => self.apply_front(),
                (_, Some(e)) => self.timing.advance_all(e + Nanos(1)),
                (Some(_), None) => self.apply_front(),
                (None, None) => return None,
            }
            self.collect();
        }
    }

    /// Request `tag` completed at `done`.
    #[inline]
    fn finish(&mut self, done: Nanos, tag: u64) {
        self.metrics.last_completion = self.metrics.last_completion.max(done);
        if self.closed_loop {
            self.completions.push(Reverse((done, tag)));
        }
    }

    /// Applies a flash operation now if it has arrived by `now`, else queues
    /// it in arrival order, after operations arriving at the same time
    /// (almost always at the back: see the module doc).
    #[inline]
    fn schedule(&mut self, op: PendingOp, now: Nanos) {
        if self.observing_ops {
            self.observe_op(op.slot, op.chip, op.at, op.kind);
        }
        if op.at <= now {
            self.apply(op);
        } else if self.pending.back().is_none_or(|b| b.at <= op.at) {
            self.pending.push_back(op);
        } else {
            let i = self.pending.partition_point(|o| o.at <= op.at);
            self.pending.insert(i, op);
        }
    }

    fn apply_front(&mut self) {
        if let Some(op) = self.pending.pop_front() {
            self.apply(op);
        }
    }

    #[inline]
    fn drain_until(&mut self, t: Nanos) {
        while self.pending.front().is_some_and(|o| o.at <= t) {
            self.apply_front();
        }
    }

    #[inline]
    fn apply(&mut self, op: PendingOp) {
        self.timing.submit(op.chip, op.at, op.kind, op.slot);
        self.collect();
    }

    /// Applies the completions the timing model reported.
    #[inline]
    fn collect(&mut self) {
        if !self.timing.has_completions() {
            return;
        }
        let mut done = std::mem::take(&mut self.completed);
        self.timing.take_completions(&mut done);
        for &(slot, d) in &done {
            self.op_done(slot, d);
        }
        done.clear();
        self.completed = done;
    }

    /// One part of in-flight request `slot` finished at `d`.
    #[inline(always)]
    fn op_done(&mut self, slot: u32, d: Nanos) {
        let f = &mut self.inflight[slot as usize];
        f.done = f.done.max(d);
        f.remaining -= 1;
        if f.remaining == 0 {
            let f = *f;
            let lat = f.done - f.issue;
            if f.op == Op::Read {
                self.metrics.read_latency.record(lat);
            } else {
                self.metrics.write_latency.record(lat);
            }
            if self.observing {
                self.observe_done(slot, &f);
            }
            self.free_slots.push(slot);
            self.finish(f.done, f.tag);
        }
    }

    /// The completed request in `slot` to the time series and the request
    /// sink.
    #[cold]
    #[inline(never)]
    fn observe_done(&mut self, slot: u32, f: &Inflight) {
        if let Some(s) = self.series.as_deref_mut() {
            s.request(f.op, self.slot_pages[slot as usize], f.issue, f.done);
        }
        if let Some(o) = self.observer.as_mut() {
            let p = o.pending[slot as usize];
            let (chips, channels) = o.counts(slot);
            o.sink.record(&RequestRecord {
                index: f.tag,
                op: f.op,
                lpn: p.lpn,
                pages: p.pages,
                arrival: f.issue,
                completion: f.done,
                dup_pages: p.dup_pages,
                chips,
                channels,
                gc_wait: p.gc_wait,
            });
        }
    }

    fn open_slot(&mut self, issue: Nanos, op: Op, lpn: u32, pages: u32) -> u32 {
        let f = Inflight { issue, done: issue, remaining: 1, op, tag: self.tag };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.inflight[s as usize] = f;
                s
            }
            None => {
                self.inflight.push(f);
                (self.inflight.len() - 1) as u32
            }
        };
        if self.observing {
            self.observe_open(slot, lpn, pages);
        }
        slot
    }

    #[cold]
    #[inline(never)]
    fn observe_open(&mut self, slot: u32, lpn: u32, pages: u32) {
        if self.series.is_some() {
            let s = slot as usize;
            if self.slot_pages.len() <= s {
                self.slot_pages.resize(s + 1, 0);
            }
            self.slot_pages[s] = pages;
        }
        if let Some(o) = self.observer.as_mut() {
            o.open(slot, observe::Pending::new(lpn, pages));
        }
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

    /// A timed read: one flash read per mapped page, all issued at `t`; its
    /// latency is recorded when its last page is out.
    fn read(&mut self, r: &Request, t: Nanos) -> Result<(), SimError> {
        let c = &mut self.metrics.counters;
        c.reads += 1;
        c.read_pages += r.pages as u64;
        let slot = self.open_slot(t, Op::Read, r.lpn, r.pages);
        let mut mapped = 0;
        for l in r.lpn..r.lpn + r.pages {
            let Some(e) = self.ftl.lookup(Lpn(l)) else {
                if let Some(m) = self.fad_ssdsim.as_deref_mut() {
                    if m.is_flagged(l) {
                        // The authors' model: a lost duplicate reads physical page 0.
                        m.page0_reads += 1;
                        let (chip, unit) = (m.chip0, m.unit0);
                        self.inflight[slot as usize].remaining += 1;
                        self.timing.submit_read(chip, t, 0, slot);
                        if self.observing_ops {
                            self.observe_op(slot, chip, t, OpKind::Read);
                        }
                        self.metrics.counters.flash_reads_host += 1;
                        self.count_unit(unit);
                        mapped += 1;
                        continue;
                    }
                }
                if self.opts.check && self.shadow[l as usize] != 0 {
                    return Err(InvariantViolation(format!(
                        "LPN {l} was last written with content {} but is not mapped",
                        self.shadow[l as usize] - 1
                    ))
                    .into());
                }
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
            self.inflight[slot as usize].remaining += 1;
            self.timing.submit_read(chip, t, ent.ppn.0, slot);
            if self.observing_ops {
                self.observe_op(slot, chip, t, OpKind::Read);
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
        self.collect();
        // Release the processing guard: completes now if nothing was read.
        self.op_done(slot, t);
        Ok(())
    }

    fn trim(&mut self, r: &Request) {
        self.metrics.counters.trims += 1;
        self.metrics.counters.trim_pages += r.pages as u64;
        // Pages written before the trim but not placed yet are unmapped
        // again when placed.
        for u in self.unplaced.iter_mut().filter(|u| (r.lpn..r.lpn + r.pages).contains(&u.lpn.0)) {
            u.trimmed = true;
        }
        for l in r.lpn..r.lpn + r.pages {
            self.ftl.unmap(Lpn(l));
            if let Some(m) = self.fad_ssdsim.as_deref_mut() {
                m.set_flag(l, false);
            }
            if self.opts.check {
                self.shadow[l as usize] = 0;
            }
        }
    }

    /// Writes one file; `timed = false` for preconditioning (no timing).
    /// A timed write's latency is recorded when its last program completes.
    /// `contents` are the page contents (`r.pages` of them), `hint` the
    /// request's explicit hint.
    fn write(
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
        // (cache-resident); large ones use a stamped content-indexed table.
        let small = n <= SMALL_FILE;
        if dedup && !small {
            self.stamp = self.stamp.wrapping_add(1);
            if self.infile.len() < self.content_space as usize {
                self.infile.resize(self.content_space as usize, (0, 0));
            }
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
                let slot = &mut self.infile[c.0 as usize];
                if slot.0 == self.stamp {
                    Some(slot.1)
                } else {
                    *slot = (self.stamp, k as u32);
                    None
                }
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
            self.engine_lookup();
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
        self.policy.place(&self.pages, self.units, &mut self.actions);
        if self.actions.len() != n {
            return Err(SimError::BadPlan { policy: self.policy.name().into(), got: self.actions.len(), want: n });
        }

        // 3. Pin existing copies that will be referenced, so that unmapping
        //    this file's old pages cannot free them midway (the authors'
        //    model maps no reference: nothing to pin).
        if self.fad_ssdsim.is_none() {
            for (p, a) in self.pages.iter().zip(&self.actions) {
                if let (Action::Reference, Dup::Existing { entry, .. }) = (a, p.dup) {
                    self.ftl.pin(entry);
                }
            }
        }

        // The policy's GC hint (FAD §III-G), for the timed replay only.
        let hint = if timed { self.policy.gc_hint() } else { None };
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
        for k in 0..n {
            let p = self.pages[k];
            let h = if hashed { self.hash_ready[k] } else { t };
            last_h = h;
            // Placed (and mapped) later, when a channel serves it.
            let deferred = self.dynamic && timed && matches!(self.actions[k], Action::Program { .. });
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
                        Dup::InFile { first } => {
                            let e = self.entry_of[first as usize];
                            self.ftl.pin(e);
                            (e, self.unit_of_page[first as usize])
                        }
                        Dup::None => return Err(SimError::BadReference { policy: self.policy.name().into(), page: k }),
                    };
                    self.ftl.map_pinned(p.lpn, e);
                    if timed {
                        self.metrics.counters.dedup_pages += 1;
                    }
                    done = done.max(h);
                    (e, unit)
                }
                Action::Program { .. } if deferred => {
                    // Placed when a channel serves it (`place_unplaced`).
                    self.metrics.counters.programs.host_unique += 1;
                    self.inflight[slot as usize].remaining += 1;
                    self.timing.submit_unplaced(h, slot);
                    self.unplaced.push_back(Unplaced { lpn: p.lpn, content: p.content, trimmed: false });
                    (EntryId::MAX, u32::MAX)
                }
                Action::Program { unit } => {
                    let is_new = p.dup == Dup::None;
                    let index = dedup && is_new && self.ftl_index;
                    let (unit, (e, ppn, gc)) = if let Some(order) = self.static_order {
                        let plane = self.ftl.geometry().static_plane(p.lpn.0, order);
                        (self.ftl.geometry().unit_of_plane(plane), self.ftl.program_in_plane(plane, p.content, index)?)
                    } else {
                        let unit = if self.least_loaded && timed {
                            self.least_loaded_unit(h)
                        } else if self.fad_ssdsim_places {
                            self.fad_ssdsim.as_deref_mut().expect("set with the model").draw_unit()
                        } else if self.wants_layout && !self.ftl.unit_has_room(unit) {
                            self.unit_with_room(unit)
                        } else {
                            unit
                        };
                        (unit, self.ftl.program(unit, p.content, index)?)
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
            if self.opts.check && !deferred {
                self.shadow[p.lpn.0 as usize] = p.content.0 + 1;
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
        if timed && self.dynamic {
            self.unplaced_files.push_back((n as u32, Vec::with_capacity(n)));
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

    /// The first unit after `unit` (cyclically) whose next plane has room
    /// ([`Ftl::unit_has_room`]), for a page its policy placed on a unit
    /// too full of live data; `unit` itself when none has (the FTL then
    /// says the device is full). Counted in `placement_redirects`.
    #[cold]
    fn unit_with_room(&mut self, unit: u32) -> u32 {
        let found = (1..self.units).map(|k| (unit + k) % self.units).find(|&u| self.ftl.unit_has_room(u));
        if found.is_some() {
            self.metrics.counters.placement_redirects += 1;
        }
        found.unwrap_or(unit)
    }

    /// Tells the policy where the current write's pages and their logical
    /// predecessors live now ([`crate::policy::PageLayout`]).
    fn page_layout(&mut self, hint: RequestHint) {
        self.layout.clear();
        let unit = |ftl: &Ftl, lpn: u32| ftl.lookup(Lpn(lpn)).map(|e| ftl.geometry().unit_of(ftl.entry(e).ppn));
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
        self.policy.layout(&self.layout);
    }

    /// Applies the references dropped and the copies freed since the last
    /// call to the engine.
    fn sync_freed(&mut self) {
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
            for &(c, e) in &self.freed {
                self.engine.forget(c, Fingerprints::of(fps, c), e);
            }
            self.freed.clear();
        }
    }

    /// Asks the engine about the current write's pages (`self.pages`, with
    /// in-file repeats already found) and fills in their duplicates.
    fn engine_lookup(&mut self) {
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
        self.engine.lookup(&self.ftl, &self.wpages, &mut self.eio);
        for k in 0..self.pages.len().min(self.eio.verdicts.len()) {
            if let (Verdict::Duplicate(e), Dup::None) = (self.eio.verdicts[k], self.pages[k].dup) {
                if self.ftl.entry_live(e).is_some() {
                    self.pages[k].dup = self.existing(e);
                }
            }
        }
    }

    /// A page's duplicate: the live copy `e` as the policy sees it.
    #[inline]
    fn existing(&self, e: EntryId) -> Dup {
        let ent = self.ftl.entry(e);
        Dup::Existing { entry: e, unit: self.ftl.geometry().unit_of(ent.ppn), refs: ent.refs, ppn: ent.ppn }
    }

    /// The chip of an engine's flash operation and the operation kind.
    fn engine_op_target(&mut self, op: FlashOp) -> (u32, OpKind) {
        match op {
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
        }
    }

    /// Schedules the current write's engine operations: each reaches its
    /// chip at the request's arrival or when its page is hashed; gating
    /// ones hold the request (`slot`) until they complete.
    fn schedule_engine_ops(&mut self, t: Nanos, slot: u32, hashed: bool) {
        let ops = std::mem::take(&mut self.eio.ops);
        for o in &ops {
            let at = match o.when {
                When::Arrival => t,
                When::Hashed(k) if hashed => self.hash_ready.get(k as usize).copied().unwrap_or(t),
                When::Hashed(_) => t,
            };
            let (chip, kind) = self.engine_op_target(o.op);
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

    /// The one idle-time mechanism ([`crate::background`]): offers the gap
    /// after the host arrival at `last` (until the next arrival `next`,
    /// `None` after the last request) to the dedup engine and then to the
    /// policy, each as a window starting at `last` plus its own idle
    /// threshold, if the gap is longer than that threshold. Their flash
    /// operations are queued at their times and compete with host I/O.
    fn offer_idle(&mut self, last: Nanos, next: Option<Nanos>) -> Result<(), SimError> {
        if self.dedup && !self.ftl_index {
            let thr = self.engine.idle_threshold();
            if next.is_none_or(|n| n > last + thr) {
                self.run_idle(IdleWindow { start: last + thr, end: next }, last);
            }
        }
        let thr = self.policy_idle;
        if next.is_none_or(|n| n > last + thr) && self.policy.wants_idle() {
            self.run_relocations(IdleWindow { start: last + thr, end: next }, last)?;
        }
        Ok(())
    }

    /// Offers an idle window to the policy and executes its relocations
    /// ([`Policy::idle`]): the mapping moves now (like an engine's remaps),
    /// the read of the old page reaches its chip at the relocation's time,
    /// the program of the new page when the data is out (read + transfer),
    /// both after `now`, the last arrival. GC the program triggers is
    /// charged like a host program's.
    fn run_relocations(&mut self, window: IdleWindow, now: Nanos) -> Result<(), SimError> {
        self.rcount.idle_windows += 1;
        let mut rel = std::mem::take(&mut self.relocations);
        rel.clear();
        self.policy.idle(&self.ftl, window, &mut rel);
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
            let (old, new, gc) = self.ftl.relocate(r.entry, r.unit)?;
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
    fn run_idle(&mut self, window: IdleWindow, now: Nanos) {
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
            let (chip, kind) = self.engine_op_target(op);
            self.ecount.background_ops += 1;
            self.schedule(PendingOp { at: at.max(now), chip, kind, slot: NO_TAG }, now);
        }
        self.bg = bg;
        self.sync_freed();
    }

    /// The engine's statistics plus the flash work executed for it.
    fn engine_stats(&self) -> Vec<(&'static str, f64)> {
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
        v
    }

    /// Adds work arriving at `at` to a chip's load estimate.
    #[inline]
    fn reserve(&mut self, chip: u32, at: Nanos, cost: Nanos) {
        if self.least_loaded {
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
    fn least_loaded_unit(&mut self, at: Nanos) -> u32 {
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
    fn precondition_round_robin(&mut self, index: usize, r: &Request, contents: &[ContentId]) -> Result<(), SimError> {
        if r.content == NO_CONTENT || contents.len() != r.pages as usize {
            return Err(SimError::NoContent { index, pages: r.pages });
        }
        for (k, &c) in contents.iter().enumerate() {
            let lpn = Lpn(r.lpn + k as u32);
            let index = self.dedup && self.ftl_index;
            let (e, _, gc) = if let Some(order) = self.static_precondition {
                self.ftl.program_in_plane(self.ftl.geometry().static_plane(lpn.0, order), c, index)?
            } else {
                let unit = self.precondition_next % self.units;
                self.precondition_next = self.precondition_next.wrapping_add(1);
                self.ftl.program(unit, c, index)?
            };
            self.ftl.map_pinned(lpn, e);
            if self.dedup && !self.ftl_index {
                self.engine.preload(c, Fingerprints::of(self.fingerprints.as_deref(), c), e);
            }
            self.metrics.counters.programs.precondition += 1;
            if let Some(gc) = gc {
                self.account_gc(gc, Nanos::ZERO, Nanos::ZERO, false);
            }
            if self.opts.check {
                self.shadow[lpn.0 as usize] = c.0 + 1;
            }
        }
        Ok(())
    }

    /// Places the page writes dynamic allocation serves before `until`
    /// (`allocation = "dynamic"`): each goes to the next plane of the chip
    /// the timing model chose (SSDsim's die and plane tokens), is mapped
    /// (and unmapped again if trimmed meanwhile), may trigger GC there, and
    /// completes its file's write DOF when it is the file's last page.
    fn place_unplaced(&mut self, until: Nanos) -> Result<(), SimError> {
        while let Some((tag, chip, t)) = self.timing.place_next(until) {
            if self.observing_ops {
                self.observe_op(tag, chip, t, OpKind::Program);
            }
            let page = self.unplaced.pop_front().expect("one page per unplaced write");
            let planes = self.chip_level.unit_planes(chip);
            let ptr = &mut self.chip_ptr[chip as usize];
            let plane = planes[*ptr as usize];
            *ptr = (*ptr + 1) % planes.len() as u32;
            let (e, _, gc) = self.ftl.program_in_plane(plane, page.content, false)?;
            self.ftl.map_pinned(page.lpn, e);
            if page.trimmed {
                self.ftl.unmap(page.lpn);
            }
            if self.opts.check {
                self.shadow[page.lpn.0 as usize] = if page.trimmed { 0 } else { page.content.0 + 1 };
            }
            if let Some(gc) = gc {
                self.account_gc(gc, t, t, true);
            }
            let unit = self.ftl.geometry().unit_of_plane(plane);
            let file = self.unplaced_files.front_mut().expect("a file per unplaced page");
            file.1.push(unit);
            if file.1.len() == file.0 as usize {
                let (n, units) = self.unplaced_files.pop_front().expect("just seen");
                for u in units {
                    self.count_unit(u);
                }
                let max = self.drain_units();
                self.metrics.dof.write_sum += dof(n, max, self.units);
                self.metrics.dof.write_count += 1;
            }
            self.collect();
        }
        Ok(())
    }

    /// Counts GC work and, when timed, schedules it on its chip at `at`.
    fn account_gc(&mut self, gc: GcWork, at: Nanos, now: Nanos, timed: bool) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy;
    use crate::units::ContentId;
    use crate::workload::Provenance;

    /// One channel, one chip: every operation contends for the same chip.
    /// Writes complete when programmed (MQSim's rule) unless a test says otherwise.
    fn one_chip() -> Config {
        let mut cfg = Config::small_for_tests(1, 1, 16, 8);
        cfg.timing.write_completion = crate::timing::WriteCompletion::Program;
        cfg
    }

    fn req(at_us: u64, op: Op, lpn: u32, content: u32) -> Request {
        Request { arrival: Nanos::from_us(at_us), op, lpn, pages: 1, content }
    }

    fn latencies(policy: &str, reqs: Vec<Request>, contents: Vec<u32>) -> (LatencySummary2, LatencySummary2) {
        latencies_with(one_chip(), policy, reqs, contents)
    }

    fn latencies_with(
        cfg: Config,
        policy: &str,
        reqs: Vec<Request>,
        contents: Vec<u32>,
    ) -> (LatencySummary2, LatencySummary2) {
        let mut w = Workload::from_requests(Provenance::default(), reqs);
        w.contents = contents.into_iter().map(ContentId).collect();
        w.add_precondition();
        for r in w.requests.iter_mut().take(w.precondition as usize) {
            r.content = w.contents.len() as u32;
            w.contents.extend((r.lpn..r.lpn + r.pages).map(|l| ContentId(900 + l)));
        }
        w.content_space = 1000;
        let p = policy::build(policy, &cfg).unwrap();
        let out = Simulation::new(&cfg, &w, p, RunOptions::default()).unwrap().run(&mut |_, _| {}).unwrap();
        let m = out.metrics;
        ((m.read_latency.max(), m.read_latency.count()), (m.write_latency.max(), m.write_latency.count()))
    }

    /// (max latency as the histogram reports it, count).
    type LatencySummary2 = (u64, u64);

    /// What an exact latency reads back as from a histogram.
    fn hist(ns: u64) -> u64 {
        crate::metrics::LatencyHistogram::default().equivalent(ns)
    }

    const TR: u64 = 20_000;
    const TX: u64 = 102_400;
    const TP: u64 = 200_000;
    const FP: u64 = 32_000;

    /// A dedup write hashes for 32 us before its program reaches the chip; a
    /// read arriving at 10 us reaches the chip first and is served first.
    #[test]
    fn chips_serve_operations_in_order_of_arrival() {
        let reqs = vec![req(0, Op::Write, 0, 0), req(10, Op::Read, 1, NO_CONTENT)];
        let (read, write) = latencies("dedup", reqs.clone(), vec![5]);
        assert_eq!(read, (hist(TR + TX), 1), "the read does not wait for the still-hashing write");
        // The program arrives at 32 us, waits for the read (done at 10 + TR + TX).
        assert_eq!(write, (hist(10_000 + TR + TX + TX + TP), 1));
        // Without hashing (native) the program arrives at 0 and the read waits for it.
        let (read, write) = latencies("native", reqs, vec![5]);
        assert_eq!(write, (hist(TX + TP), 1));
        assert_eq!(read, (hist(TX + TP - 10_000 + TR + TX), 1));
    }

    /// Read priority on a real request stream: a write's second page waits
    /// on the chip behind the first's program; a read arriving meanwhile is
    /// served before it, and completes at the figure the rule predicts.
    /// Under FCFS it waits for both programs. With SSDsim's write rule
    /// (transfer), the write completes when its last page is in the
    /// register.
    #[test]
    fn read_priority_serves_a_read_before_a_queued_program() {
        let w = |lpn| Request { arrival: Nanos(0), op: Op::Write, lpn, pages: 2, content: 0 };
        let reqs = vec![w(0), req(1, Op::Read, 5, NO_CONTENT)];
        let mut cfg = one_chip();
        let (read, write) = latencies_with(cfg.clone(), "native", reqs.clone(), vec![5, 6]);
        // Page 0: transfer [0, TX), program until TX + TP. The read (at
        // 1 us, LPN 5 preconditioned on the one chip) then senses and goes
        // out; page 1 follows.
        assert_eq!(read, (hist(TX + TP + TR + TX - 1_000), 1));
        assert_eq!(write, (hist(TX + TP + TR + TX + TX + TP), 1));
        cfg.timing.scheduling = crate::timing::Scheduling::Fcfs;
        let (read, write) = latencies_with(cfg.clone(), "native", reqs.clone(), vec![5, 6]);
        assert_eq!(write, (hist(2 * (TX + TP)), 1));
        assert_eq!(read, (hist(2 * (TX + TP) + TR + TX - 1_000), 1));
        cfg.timing.scheduling = crate::timing::Scheduling::ReadPriority;
        cfg.timing.write_completion = crate::timing::WriteCompletion::Transfer;
        let (read, write) = latencies_with(cfg, "native", reqs, vec![5, 6]);
        assert_eq!(read, (hist(TX + TP + TR + TX - 1_000), 1));
        assert_eq!(write, (hist(TX + TP + TR + TX + TX), 1));
    }

    /// `allocation`: a read holds chip 0 when a one-page write arrives.
    /// The cyclic pointer still sends the write to chip 0, behind the read;
    /// least-loaded sends it to the idle chip 1, where only the bus is
    /// shared (its transfer goes first: the read is still sensing).
    #[test]
    fn least_loaded_allocation_avoids_a_busy_chip() {
        let reqs = vec![req(0, Op::Read, 5, NO_CONTENT), req(1, Op::Write, 0, 0)];
        let mut cfg = Config::small_for_tests(1, 2, 16, 8);
        cfg.allocation = crate::config::Allocation::Cyclic;
        let (read, write) = latencies_with(cfg.clone(), "native", reqs.clone(), vec![7]);
        assert_eq!(read, (hist(TR + TX), 1));
        assert_eq!(write, (hist(TR + 2 * TX - 1_000), 1));
        cfg.allocation = crate::config::Allocation::LeastLoaded;
        let (read, write) = latencies_with(cfg, "native", reqs, vec![7]);
        assert_eq!(write, (hist(TX), 1));
        assert_eq!(read, (hist(1_000 + 2 * TX), 1));
    }

    /// `allocation = "static:ORDER"`: every page a placement-free policy
    /// programs, and every preconditioning page whatever the policy, lands
    /// in the plane its LPN stripes to; FAD, which places its own pages,
    /// is not striped.
    #[test]
    fn static_allocation_places_every_page_by_its_lpn() {
        use crate::config::{Allocation, StaticOrder};
        let mut cfg = Config::small_for_tests(2, 2, 16, 8);
        cfg.geometry.dies_per_chip = 2;
        cfg.geometry.planes_per_die = 3;
        let order: StaticOrder = "PDCW".parse().unwrap();
        cfg.allocation = Allocation::Static(order);
        // Reads of never-written pages (preconditioned) and writes of
        // contiguous and scattered pages, with duplicate contents.
        let mut reqs = Vec::new();
        let mut contents = Vec::new();
        for i in 0..60u32 {
            let lpn = (i * 37) % 200;
            if i % 3 == 0 {
                reqs.push(req(u64::from(i) * 50, Op::Read, lpn, NO_CONTENT));
            } else {
                reqs.push(Request { content: contents.len() as u32, ..req(u64::from(i) * 50, Op::Write, lpn, 0) });
                contents.push(ContentId(i % 7));
            }
        }
        for name in ["native", "dedup", "fad"] {
            let mut w = Workload::from_requests(Provenance::default(), reqs.clone());
            w.contents = contents.clone();
            w.add_precondition();
            for r in w.requests.iter_mut().take(w.precondition as usize) {
                r.content = w.contents.len() as u32;
                w.contents.push(ContentId(900 + r.lpn));
            }
            w.content_space = 1000;
            let opts = RunOptions { check: true, check_every: 1 };
            let sim = Simulation::new(&cfg, &w, policy::build(name, &cfg).unwrap(), opts).unwrap();
            let (_, ftl) = sim.run_keep(&mut |_, _| {}).unwrap();
            let geo = ftl.geometry();
            let (mut striped, mut other) = (0, 0);
            for r in &w.requests {
                let Some(e) = ftl.lookup(Lpn(r.lpn)) else { continue };
                let at = geo.plane_of(ftl.entry(e).ppn);
                let want = geo.static_plane(r.lpn, order);
                if name == "native" {
                    assert_eq!(at, want, "{name}: LPN {} in plane {at}, not {want}", r.lpn);
                }
                if at == want {
                    striped += 1;
                } else {
                    other += 1;
                }
            }
            match name {
                // A duplicate maps to the copy of the LPN that wrote it first.
                "dedup" => assert!(striped > 0 && other > 0, "{name}: {striped} striped, {other} elsewhere"),
                "fad" => assert!(other > 0, "FAD places its own pages"),
                _ => {}
            }
        }
    }

    /// `allocation = "dynamic"` (SSDsim's serve-time allocation): native's
    /// writes are placed when a channel serves them. Every invariant holds
    /// under `--check` (checked after every request) with overwrites, GC,
    /// trims and reads of pages still waiting to be placed, and every write
    /// gets its DOF once placed. A write that arrives at the same instant
    /// as a large read, one request before it, is served before the read
    /// arrives (SSDsim decides after each arrival). Deduplicating policies
    /// and the closed loop are refused.
    #[test]
    fn dynamic_allocation_places_writes_when_served() {
        use crate::config::Allocation;
        let mut cfg = Config::small_for_tests(2, 2, 16, 8);
        cfg.allocation = Allocation::Dynamic;
        // Bursts of writes over a small space (GC), reads and trims between.
        let mut reqs = Vec::new();
        let mut contents = Vec::new();
        let mut writes = 0;
        for i in 0..1500u32 {
            let at = u64::from(i / 4) * 150;
            let lpn = (i * 7) % 120;
            match i % 9 {
                0 | 4 => reqs.push(req(at, Op::Read, lpn, NO_CONTENT)),
                7 => reqs.push(Request { op: Op::Trim, ..req(at, Op::Read, lpn, NO_CONTENT) }),
                _ => {
                    reqs.push(Request { content: contents.len() as u32, ..req(at, Op::Write, lpn, 0) });
                    contents.push(ContentId(i));
                    writes += 1;
                }
            }
        }
        let mut w = Workload::from_requests(Provenance::default(), reqs);
        w.contents = contents;
        w.add_precondition();
        for r in w.requests.iter_mut().take(w.precondition as usize) {
            r.content = w.contents.len() as u32;
            w.contents.extend((r.lpn..r.lpn + r.pages).map(|l| ContentId(5000 + l)));
        }
        w.content_space = 10_000;
        let opts = RunOptions { check: true, check_every: 1 };
        let sim = Simulation::new(&cfg, &w, policy::build("native", &cfg).unwrap(), opts).unwrap();
        let (out, _) = sim.run_keep(&mut |_, _| {}).unwrap();
        let m = &out.metrics;
        assert_eq!(m.write_latency.count(), writes);
        assert_eq!(m.dof.write_count, writes);
        assert!(m.counters.gc_invocations > 0, "the small device collects garbage");

        // A one-page write, then a 16-page read at the same instant: the
        // write is served first, its latency one transfer.
        let big = Request { arrival: Nanos(0), op: Op::Read, lpn: 40, pages: 16, content: NO_CONTENT };
        let reqs = vec![req(0, Op::Write, 0, 0), big];
        let (_, write) = latencies_with(cfg.clone(), "native", reqs.clone(), vec![5]);
        assert_eq!(write, (hist(TX), 1));
        // The read first: the write waits for a chip.
        let (_, write) = latencies_with(cfg.clone(), "native", vec![big, req(0, Op::Write, 0, 0)], vec![5]);
        assert!(write.0 > hist(TX), "{write:?}");

        let w = Workload::from_requests(Provenance::default(), reqs);
        for (name, c) in [
            ("dedup", cfg.clone()),
            ("fad", cfg.clone()),
            ("native", {
                let mut c = cfg.clone();
                c.replay = ReplayConfig::ClosedLoop { queue_depth: 4 };
                c
            }),
        ] {
            let err = Simulation::new(&c, &w, policy::build(name, &c).unwrap(), RunOptions::default()).err();
            assert!(matches!(err, Some(SimError::DynamicAllocation { .. })), "{name}: {err:?}");
        }
    }

    /// `--check` reports a read of an LPN that was written but is not
    /// mapped (an FTL that lost a mapping), instead of counting it as an
    /// unmapped read.
    #[test]
    fn check_reports_a_lost_mapping() {
        let cfg = one_chip();
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![req(0, Op::Write, 3, 0), req(1_000, Op::Read, 3, NO_CONTENT)],
        );
        w.contents = vec![ContentId(5)];
        w.content_space = 10;
        let opts = RunOptions { check: true, check_every: 0 };
        let mut sim = Simulation::new(&cfg, &w, policy::build("native", &cfg).unwrap(), opts).unwrap();
        sim.write(0, &w.requests[0], w.content_of(&w.requests[0]), RequestHint::Absent, Nanos(0), true).unwrap();
        sim.ftl.unmap(Lpn(3)); // the FTL "loses" the mapping
        let err = sim.read(&w.requests[1], Nanos(1_000)).unwrap_err().to_string();
        assert!(err.contains("LPN 3") && err.contains("not mapped"), "{err}");
        // Never-written LPNs are plain unmapped reads.
        let r = Request { arrival: Nanos(2_000), op: Op::Read, lpn: 4, pages: 1, content: NO_CONTENT };
        sim.read(&r, Nanos(2_000)).unwrap();
        assert_eq!(sim.metrics.counters.unmapped_read_pages, 1);
    }

    /// Policy statistics count timed writes only, also when preconditioning
    /// goes through the policy: FAD's `files` equals the timed writes.
    #[test]
    fn policy_stats_count_the_timed_writes_only() {
        for placement in [PreconditionPlacement::RoundRobin, PreconditionPlacement::Policy] {
            let mut cfg = one_chip();
            cfg.precondition.placement = placement;
            let reqs = vec![
                req(0, Op::Read, 0, NO_CONTENT),
                req(1, Op::Read, 4, NO_CONTENT),
                req(2, Op::Write, 1, 0),
                req(3, Op::Write, 2, 1),
            ];
            let mut w = Workload::from_requests(Provenance::default(), reqs);
            w.contents = vec![ContentId(5), ContentId(6)];
            w.add_precondition();
            for r in w.requests.iter_mut().take(w.precondition as usize) {
                r.content = w.contents.len() as u32;
                w.contents.push(ContentId(900 + r.lpn));
            }
            w.content_space = 1000;
            assert_eq!(w.precondition, 2);
            let p = policy::build("fad", &cfg).unwrap();
            let out = Simulation::new(&cfg, &w, p, RunOptions::default()).unwrap().run(&mut |_, _| {}).unwrap();
            let files = out.policy_stats.iter().find(|(k, _)| *k == "files").map(|(_, v)| *v);
            assert_eq!(files, Some(2.0), "{placement:?}");
        }
    }

    /// FAD's GC hint (§III-G) under an aged start: every file [X, new]
    /// skips unit 0 (it holds X), so the WSTL lists unit 0 and every new
    /// page goes to unit 1. Plane 1's four GC triggers are collected on
    /// plane 0 (the preferred unit, within `gc_soft_margin` of the
    /// threshold) under `fad`, on plane 1 itself under `fad-rwpo-rewrite`:
    /// as many collections, moved off the chip the writes keep busy, so the
    /// writes no longer wait for erases.
    #[test]
    fn fad_gc_hint_moves_collections_to_the_skipped_unit() {
        let mut cfg = Config::small_for_tests(2, 1, 16, 4);
        cfg.timing.write_completion = crate::timing::WriteCompletion::Program;
        cfg.gc.min_free_blocks = 6;
        cfg.precondition.aged = 0.5; // 8 stale blocks, 7 free per plane
        let mut reqs = vec![Request { arrival: Nanos::ZERO, op: Op::Write, lpn: 0, pages: 1, content: 0 }];
        let mut contents = vec![ContentId(1)];
        for i in 1..=24u32 {
            let content = contents.len() as u32;
            contents.extend([ContentId(1), ContentId(100 + i)]);
            reqs.push(Request {
                arrival: Nanos::from_us(1000 * i as u64),
                op: Op::Write,
                lpn: 2 * i - 1,
                pages: 2,
                content,
            });
        }
        let mut w = Workload::from_requests(Provenance::default(), reqs);
        w.contents = contents;
        w.content_space = 1000;
        let run = |policy: &str| {
            let p = policy::build(policy, &cfg).unwrap();
            let opts = RunOptions { check: true, ..RunOptions::default() };
            let out = Simulation::new(&cfg, &w, p, opts).unwrap().run(&mut |_, _| {}).unwrap();
            let per_plane: Vec<u32> = out.erase_counts.chunks(16).map(|c| c.iter().sum()).collect();
            let hinted = out.policy_stats.iter().find(|(k, _)| *k == "gc_hinted").map(|(_, v)| *v);
            (out.metrics.counters.gc_invocations, per_plane, hinted, out.metrics.write_latency.max())
        };
        let (gc, erased, hinted, fad_max) = run("fad");
        assert_eq!((gc, erased, hinted), (4, vec![4, 0], Some(4.0)), "fad");
        let (gc, erased, hinted, base_max) = run("fad-rwpo-rewrite");
        assert_eq!((gc, erased, hinted), (4, vec![0, 4], Some(0.0)), "fad-rwpo-rewrite");
        // A write behind an erase (1.5 ms) in the baseline; none under fad.
        assert!(fad_max < 500_000 && base_max > 1_000_000, "fad {fad_max} ns, fad-rwpo-rewrite {base_max} ns");
    }

    /// Records what the simulator tells the policy; references every duplicate.
    struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<Vec<Dup>>>>);
    impl Policy for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn place(&mut self, file: &[PageInfo], _units: u32, out: &mut Vec<Action>) {
            self.0.lock().unwrap().push(file.iter().map(|p| p.dup).collect());
            out.extend(file.iter().map(|p| {
                if p.dup == Dup::None {
                    Action::Program { unit: 0 }
                } else {
                    Action::Reference
                }
            }));
        }
    }

    /// A content that occurs twice in one file is one candidate: its second
    /// occurrence is an in-file repeat of the first, whether the content is
    /// new or already stored (issue 9 item 6), in small files (scanned) and
    /// large ones (stamped table) alike.
    #[test]
    fn a_repeat_inside_a_file_follows_its_first_occurrence() {
        let cfg = one_chip();
        for pages in [3u32, super::SMALL_FILE as u32 + 3] {
            // File 1 stores content 7; file 2 holds 7 twice and 8 twice.
            let mut c2: Vec<u32> = (100..100 + pages - 3).collect();
            c2.extend([7, 8, 7, 8]);
            c2.truncate(pages as usize + 1);
            let n2 = c2.len() as u32;
            let reqs = vec![
                Request { arrival: Nanos::from_us(0), op: Op::Write, lpn: 0, pages: 1, content: 0 },
                Request { arrival: Nanos::from_us(1000), op: Op::Write, lpn: 10, pages: n2, content: 1 },
            ];
            let mut w = Workload::from_requests(Provenance::default(), reqs);
            w.contents = std::iter::once(7).chain(c2.iter().copied()).map(ContentId).collect();
            w.content_space = 1000;
            let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let p = Box::new(Recorder(seen.clone()));
            Simulation::new(&cfg, &w, p, RunOptions::default()).unwrap().run(&mut |_, _| {}).unwrap();
            let seen = seen.lock().unwrap();
            let file = &seen[1];
            let k7 = c2.iter().position(|&c| c == 7).unwrap();
            let k8 = c2.iter().position(|&c| c == 8).unwrap();
            assert!(matches!(file[k7], Dup::Existing { .. }), "{pages}: first 7 is the stored copy");
            assert_eq!(file[k8], Dup::None, "{pages}: first 8 is new");
            assert_eq!(file[k7 + 2], Dup::InFile { first: k7 as u32 }, "{pages}: stored content repeated");
            assert_eq!(file[k8 + 2], Dup::InFile { first: k8 as u32 }, "{pages}: new content repeated");
        }
    }

    /// A replay whose scaled span would saturate simulated time is refused
    /// with a clear error instead of reporting latencies of 0.
    #[test]
    fn a_span_beyond_the_clock_is_an_error() {
        let mut cfg = one_chip();
        let w = Workload::from_requests(
            Provenance::default(),
            vec![
                req(0, Op::Read, 1, NO_CONTENT),
                Request { arrival: Nanos(1 << 61), ..req(0, Op::Read, 1, NO_CONTENT) },
            ],
        );
        assert!(Simulation::new(&cfg, &w, policy::build("native", &cfg).unwrap(), RunOptions::default()).is_ok());
        cfg.replay = ReplayConfig::OpenLoop { time_scale: 4.0 };
        let err = Simulation::new(&cfg, &w, policy::build("native", &cfg).unwrap(), RunOptions::default())
            .err()
            .expect("span x 4 is beyond 2^62 ns")
            .to_string();
        assert!(err.contains("clock range") && err.contains("time_scale 4"), "{err}");
    }

    /// A workload from (op, lpn, contents) requests 1 ms apart; the first
    /// `pre` requests are untimed preconditioning writes.
    fn workload(pre: u32, reqs: &[(Op, u32, Vec<u32>)]) -> Workload {
        let mut contents = Vec::new();
        let requests = reqs
            .iter()
            .enumerate()
            .map(|(i, (op, lpn, cs))| {
                let content = if cs.is_empty() { NO_CONTENT } else { contents.len() as u32 };
                contents.extend(cs.iter().map(|&c| ContentId(c)));
                let pages = if cs.is_empty() { 1 } else { cs.len() as u32 };
                Request { arrival: Nanos::from_us(1_000 * i as u64), op: *op, lpn: *lpn, pages, content }
            })
            .collect();
        let mut w = Workload::from_requests(Provenance::default(), requests);
        w.contents = contents;
        w.content_space = 1000;
        w.precondition = pre;
        w
    }

    fn fad_ssdsim(mut cfg: Config) -> Config {
        cfg.experiment.fad_ssdsim_model = true;
        cfg.validate().unwrap();
        cfg
    }

    /// The authors' model: a referenced duplicate is left unmapped and its
    /// read goes to physical page 0, chip 0, not to the copy's chip. LPNs
    /// 0..8 are preconditioned round-robin (LPN i on chip i of 4 x 2 chips);
    /// LPN 20 is written with LPN 7's content (deduplicated), then read.
    #[test]
    fn fad_ssdsim_model_reads_a_referenced_duplicate_from_chip_0() {
        let mut w = workload(
            1,
            &[
                (Op::Write, 0, (900..908).collect()),
                (Op::Read, 0, vec![]),
                (Op::Write, 20, vec![907]),
                (Op::Read, 20, vec![]),
            ],
        );
        w.requests[1].pages = 8; // read LPNs 0..8: one read on every chip
        let base = Config::small_for_tests(4, 2, 16, 8);
        let run = |cfg: &Config| {
            let p = policy::build("dedup", cfg).unwrap();
            let opts = RunOptions { check: true, check_every: 1 };
            Simulation::new(cfg, &w, p, opts).unwrap().run_keep(&mut |_, _| {}).unwrap()
        };
        // Off: LPN 20 maps to LPN 7's copy on chip 7, which serves its read.
        let (off, ftl) = run(&base);
        assert_eq!(ftl.lookup(Lpn(20)), ftl.lookup(Lpn(7)));
        assert_eq!(off.metrics.read_latency.max(), hist(2 * TX + TR), "8 reads share 4 buses");
        assert!(!off.policy_stats.iter().any(|(k, _)| *k == "fad_ssdsim_page0_reads"));
        // On: LPN 20 is unmapped; its read (alone on the device) moves from
        // chip 7 to chip 0.
        let cfg = fad_ssdsim(base);
        let (out, ftl) = run(&cfg);
        assert_eq!(ftl.lookup(Lpn(20)), None);
        let one_read = TR + TX;
        for g in 0..8 {
            let delta = out.chip_busy[g].0 as i64 - off.chip_busy[g].0 as i64;
            let want = match g {
                0 => one_read as i64,
                7 => -(one_read as i64),
                _ => 0,
            };
            assert_eq!(delta, want, "chip {g}");
        }
        assert_eq!(out.metrics.counters.dedup_pages, 1);
        assert_eq!(out.metrics.counters.unmapped_read_pages, 0);
        assert_eq!(out.metrics.counters.flash_reads_host, 9);
        let page0 = out.policy_stats.iter().find(|(k, _)| *k == "fad_ssdsim_page0_reads").map(|(_, v)| *v);
        assert_eq!(page0, Some(1.0));
        assert_eq!(out.metrics.read_latency.count(), 2);
        assert!(out.invariant_checks > 0, "--check ran and skipped the flagged LPN");
    }

    /// Chips the authors' model allows on `cfg` (channel < C - 1, chip < K - 1).
    fn allowed_chip(cfg: &Config, g: u32) -> bool {
        let (c, k) = (cfg.geometry.channels, cfg.geometry.chips_per_channel);
        g % c < c - 1 && g / c < k - 1
    }

    /// Chips holding the final copies of LPNs 0..n.
    fn chips_used(cfg: &Config, policy: &str, w: &Workload, n: u32) -> Vec<u32> {
        let p = policy::build(policy, cfg).unwrap();
        let opts = RunOptions { check: true, check_every: 0 };
        let (_, ftl) = Simulation::new(cfg, w, p, opts).unwrap().run_keep(&mut |_, _| {}).unwrap();
        let mut used = vec![0u32; cfg.chips() as usize];
        for l in 0..n {
            if let Some(e) = ftl.lookup(Lpn(l)) {
                used[ftl.geometry().chip_of(ftl.entry(e).ppn) as usize] += 1;
            }
        }
        used
    }

    /// The authors' model: unique programs of Deduplication and Native land
    /// on the 7 allowed chips of 8 x 2 (chips 0..=6: channels 0..=6, chip 0
    /// of each), every one of them used; FAD keeps its own placement (it
    /// uses the other chips too). Off, Native spreads over all 16 chips.
    #[test]
    fn fad_ssdsim_model_programs_only_the_allowed_chips() {
        // 100 four-page writes; every third content repeats an earlier one.
        let reqs: Vec<(Op, u32, Vec<u32>)> = (0..100u32)
            .map(|i| {
                (
                    Op::Write,
                    4 * i,
                    (0..4).map(|j| if (4 * i + j) % 3 == 2 { 4 * i + j - 2 } else { 4 * i + j }).collect(),
                )
            })
            .collect();
        let w = workload(0, &reqs);
        let base = Config::small_for_tests(8, 2, 16, 8);
        let cfg = fad_ssdsim(base.clone());
        for policy in ["native", "dedup", "har", "fcrc"] {
            let used = chips_used(&cfg, policy, &w, 400);
            for (g, &n) in used.iter().enumerate() {
                assert_eq!(n > 0, allowed_chip(&cfg, g as u32), "{policy}: chip {g} holds {n} pages: {used:?}");
            }
        }
        let used = chips_used(&base, "native", &w, 400);
        assert!(used.iter().all(|&n| n > 0), "off: {used:?}");
        let used = chips_used(&cfg, "fad", &w, 400);
        assert!((0..16).any(|g| used[g] > 0 && !allowed_chip(&cfg, g as u32)), "fad: {used:?}");
    }

    /// The model's draws come from the run's seed: same seed, same layout;
    /// another seed, another layout.
    #[test]
    fn fad_ssdsim_model_placement_follows_the_seed() {
        let reqs: Vec<(Op, u32, Vec<u32>)> = (0..50u32).map(|i| (Op::Write, 2 * i, vec![2 * i, 2 * i + 1])).collect();
        let w = workload(0, &reqs);
        let cfg = fad_ssdsim(Config::small_for_tests(8, 2, 16, 8));
        let layout = |cfg: &Config| {
            let p = policy::build("native", cfg).unwrap();
            let (_, ftl) =
                Simulation::new(cfg, &w, p, RunOptions::default()).unwrap().run_keep(&mut |_, _| {}).unwrap();
            (0..100).map(|l| ftl.entry(ftl.lookup(Lpn(l)).unwrap()).ppn).collect::<Vec<_>>()
        };
        assert_eq!(layout(&cfg), layout(&cfg));
        let mut other = cfg.clone();
        other.seed += 1;
        assert_ne!(layout(&cfg), layout(&other));
    }

    /// A trim clears the model's flag: the trimmed duplicate reads nothing.
    #[test]
    fn fad_ssdsim_model_trim_forgets_a_lost_duplicate() {
        let w = workload(
            0,
            &[(Op::Write, 0, vec![5]), (Op::Write, 1, vec![5]), (Op::Trim, 1, vec![]), (Op::Read, 1, vec![])],
        );
        let cfg = fad_ssdsim(Config::small_for_tests(2, 2, 16, 8));
        let p = policy::build("dedup", &cfg).unwrap();
        let opts = RunOptions { check: true, check_every: 1 };
        let out = Simulation::new(&cfg, &w, p, opts).unwrap().run(&mut |_, _| {}).unwrap();
        assert_eq!(out.metrics.counters.unmapped_read_pages, 1);
        assert_eq!(out.metrics.counters.flash_reads_host, 0);
    }

    /// A fully deduplicated write completes when hashed; no flash program.
    #[test]
    fn duplicate_write_completes_after_hashing() {
        let reqs = vec![req(0, Op::Write, 0, 0), req(1000, Op::Write, 1, 1)];
        let (_, write) = latencies("dedup", reqs, vec![5, 5]);
        // First: hash + transfer + program; second: hash only.
        assert_eq!(write, (hist(FP + TX + TP), 2));
    }

    /// The hash models on one 4-page dedup write of new data, 1 and 2
    /// engines (SSDsim's write completion: transfer end). On 4 channels
    /// (one chip each) the pages never wait for flash: the write ends with
    /// its last hash + tX, so only the engine unit matters. On 1 channel
    /// of 4 chips the bus serializes the 4 transfers: pipelined hashing
    /// hides behind them (first hash + 4 tX), before-flash does not.
    #[test]
    fn hash_models_time_a_four_page_write() {
        use crate::config::HashOverlap::{BeforeFlash, Pipelined};
        use crate::config::HashUnit::{Page, Request as Whole};
        let write = vec![Request { arrival: Nanos(0), op: Op::Write, lpn: 0, pages: 4, content: 0 }];
        let cases = [
            // (unit, overlap, engines, 4 channels, 1 channel of 4 chips)
            (Page, Pipelined, 1, 4 * FP + TX, FP + 4 * TX),
            (Page, Pipelined, 2, 2 * FP + TX, FP + 4 * TX),
            (Page, BeforeFlash, 1, 4 * FP + TX, 4 * FP + 4 * TX),
            (Page, BeforeFlash, 2, 2 * FP + TX, 2 * FP + 4 * TX),
            (Whole, Pipelined, 1, 4 * FP + TX, FP + 4 * TX),
            (Whole, Pipelined, 2, 4 * FP + TX, FP + 4 * TX),
            (Whole, BeforeFlash, 1, 4 * FP + TX, 4 * FP + 4 * TX),
            (Whole, BeforeFlash, 2, 4 * FP + TX, 4 * FP + 4 * TX),
        ];
        for (unit, overlap, engines, wide, narrow) in cases {
            for (channels, chips, want) in [(4, 1, wide), (1, 4, narrow)] {
                let mut cfg = Config::small_for_tests(channels, chips, 16, 8);
                cfg.dedup.hash_unit = unit;
                cfg.dedup.hash_overlap = overlap;
                cfg.dedup.hash_engines = engines;
                let (_, w) = latencies_with(cfg, "dedup", write.clone(), vec![1, 2, 3, 4]);
                assert_eq!(w, (hist(want), 1), "{unit:?} {overlap:?} {engines} engines, {channels}x{chips}");
            }
        }
    }

    /// Request-granularity hashing on 2 engines with a slow hash (200 us
    /// per page): a 1-page write B at 10 us is hashed on the second engine
    /// at once (ready at 210 us), before the 4-page A on the first (200,
    /// 400, 600, 800 us), so its program joins the pending operations ahead
    /// of A's later pages (applied at the back, it would reach its channel
    /// only after 800 us). One channel of 4 chips, least-loaded placement
    /// (A's pages on chips 0-3; B on chip 0, behind A0's program, whose
    /// load estimate ends first). Page granularity hashes A in pairs (200,
    /// 200, 400, 400) and B after them (600): B goes last.
    #[test]
    fn request_hashing_lets_a_small_write_overtake() {
        use crate::config::HashUnit;
        const FP2: u64 = 200_000;
        let reqs = vec![
            Request { arrival: Nanos(0), op: Op::Write, lpn: 0, pages: 4, content: 0 },
            Request { arrival: Nanos(10_000), op: Op::Write, lpn: 8, pages: 1, content: 4 },
        ];
        let run = |unit| {
            let mut cfg = Config::small_for_tests(1, 4, 16, 8);
            cfg.dedup.fingerprint = Nanos(FP2);
            cfg.dedup.hash_engines = 2;
            cfg.dedup.hash_unit = unit;
            let mut w = Workload::from_requests(Provenance::default(), reqs.clone());
            w.contents = (1..=5).map(ContentId).collect();
            w.content_space = 10;
            let p = policy::build("dedup", &cfg).unwrap();
            let out = Simulation::new(&cfg, &w, p, RunOptions::default()).unwrap().run(&mut |_, _| {}).unwrap();
            let m = out.metrics;
            (hist(m.write_latency.quantile(0.0)), m.write_latency.max(), m.last_completion)
        };
        // Bus: A0 [FP2, FP2+TX), A1 (at 2 FP2), B when chip 0's program
        // ends (FP2 + TX + TP), then A2 (3 FP2) and A3 (4 FP2).
        assert_eq!(run(HashUnit::Request), (hist(FP2 + 2 * TX + TP - 10_000), hist(4 * FP2 + TX), Nanos(4 * FP2 + TX)));
        // A's 4 transfers back to back from FP2, then B (ready at 3 FP2).
        assert_eq!(run(HashUnit::Page), (hist(FP2 + 4 * TX), hist(FP2 + 5 * TX - 10_000), Nanos(FP2 + 5 * TX)));
    }

    /// Closed loop with depth 1 issues each request when the previous ends.
    #[test]
    fn closed_loop_waits_for_completions() {
        let mut cfg = one_chip();
        cfg.replay = ReplayConfig::ClosedLoop { queue_depth: 1 };
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![req(0, Op::Write, 0, 0), req(0, Op::Write, 1, 1), req(0, Op::Read, 0, NO_CONTENT)],
        );
        w.contents = vec![ContentId(1), ContentId(2)];
        w.content_space = 3;
        let p = policy::build("dedup", &cfg).unwrap();
        let out = Simulation::new(&cfg, &w, p, RunOptions::default()).unwrap().run(&mut |_, _| {}).unwrap();
        let m = out.metrics;
        // Each request runs alone: no queueing at all.
        assert_eq!(m.write_latency.max(), hist(FP + TX + TP));
        assert_eq!(m.read_latency.max(), hist(TR + TX));
        assert_eq!(m.last_completion, Nanos(2 * (FP + TX + TP) + TR + TX));
    }

    /// ReoDedup's relocation at idle time (issue 11): four 4-page files,
    /// each three new pages plus a duplicate of a preconditioned page, 1 ms
    /// apart with a 0.5 ms idle threshold. The policy relocates the
    /// duplicates that share a chip with their file's new pages; every read
    /// still returns its content (`--check`), the FTL invariants hold after
    /// every request, the dedup rate is `dedup`'s, and the files read more
    /// in parallel. A policy without idle work sees no window at all.
    #[test]
    fn reodedup_relocates_at_idle_time_and_keeps_the_invariants() {
        use crate::policy::{ReoDedup, ReoDedupParams};
        use crate::reodedup::Algorithm;
        let cfg = Config::small_for_tests(2, 2, 16, 8);
        let mut reqs: Vec<(Op, u32, Vec<u32>)> = vec![(Op::Write, 100, vec![50, 51, 52, 53])];
        for (f, dup) in [50, 51, 52, 53].into_iter().enumerate() {
            let f = f as u32;
            reqs.push((Op::Write, 10 * f, vec![1 + 3 * f, 2 + 3 * f, 3 + 3 * f, dup]));
        }
        for f in 0..4 {
            reqs.push((Op::Read, 10 * f, vec![]));
        }
        reqs.push((Op::Read, 100, vec![]));
        let mut w = workload(1, &reqs);
        for r in w.requests.iter_mut().filter(|r| r.op == Op::Read) {
            r.pages = 4;
        }
        let opts = RunOptions { check: true, check_every: 1 };
        let run = |p: Box<dyn Policy>| Simulation::new(&cfg, &w, p, opts.clone()).unwrap().run_keep(&mut |_, _| {});
        let (base, _) = run(policy::build("dedup", &cfg).unwrap()).unwrap();
        assert_eq!(base.metrics.counters.programs.relocation, 0);
        assert!(base.policy_stats.is_empty());
        let params = ReoDedupParams { idle_ms: 0.5, ..ReoDedupParams::default() };
        let tr = cfg.timing.read + cfg.timing.page_transfer;
        for alg in [Algorithm::Csr, Algorithm::Atr] {
            let p = ReoDedup::new("reodedup-test", alg, &params, tr).unwrap();
            let (out, ftl) = run(Box::new(p)).unwrap();
            let c = &out.metrics.counters;
            let stat = |k: &str| out.policy_stats.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
            assert!(c.programs.relocation > 0, "{alg:?}: {:?}", out.policy_stats);
            assert_eq!(c.flash_reads_relocation, c.programs.relocation);
            assert_eq!(stat("relocated_pages"), Some(c.programs.relocation as f64));
            assert_eq!(c.dedup_pages, base.metrics.counters.dedup_pages, "{alg:?}: relocation keeps the dedup rate");
            assert_eq!(c.programs.host_unique, base.metrics.counters.programs.host_unique);
            assert!(out.invariant_checks > 1);
            // Each file's four pages now lie on four different chips.
            for f in 0..4u32 {
                let mut units: Vec<u32> = (0..4)
                    .map(|k| ftl.geometry().unit_of(ftl.entry(ftl.lookup(Lpn(10 * f + k)).unwrap()).ppn))
                    .collect();
                units.sort_unstable();
                units.dedup();
                assert_eq!(units.len(), 4, "{alg:?}: file {f}");
            }
            assert!(out.metrics.dof.read_sum <= base.metrics.dof.read_sum, "{alg:?}");
        }
    }
}
