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
//! # Files
//!
//! One file per job: `submit` (the one interface every driver uses:
//! submit a request at t, collect completions up to t'), `replay` (the
//! replay driver), `stream` (the streaming interface), `request` (the
//! request path, with `infile` for a large write's in-file duplicates), `alloc`
//! (allocation), `idle` (idle and background work), `engine_io` (the dedup
//! engine bridge), `inflight` (in-flight requests and their completions;
//! future operations wait in the timing model's event queue: FCFS by
//! arrival at the chip), `fad_ssdsim` (the authors'
//! public dedup model, a labelled experiment), `check` (the `--check`
//! shadow), `observe` (the request observer), `output` (the end of a run).

use crate::config::{Allocation, Config, ParallelUnit, ReplayConfig};
use crate::engine::{self, Background, Engine, EngineIo, WritePage};
use crate::ftl::{EntryId, Ftl};
use crate::geometry::Geometry;
use crate::metrics::Metrics;
use crate::policy::{Action, PageInfo, PageLayout, Policy, Relocation};
use crate::series::SeriesRecorder;
use crate::timing::Timing;
use crate::units::{ContentId, Lpn, Nanos};
use crate::workload::Workload;

mod alloc;
mod check;
mod engine_io;
mod error;
mod fad_ssdsim;
mod idle;
mod infile;
mod inflight;
mod observe;
mod output;
mod replay;
mod request;
mod stream;
mod submit;
#[cfg(test)]
mod tests;

use alloc::Allocators;
use engine_io::EngineCounts;
pub use error::SimError;
use fad_ssdsim::FadSsdsimModel;
use idle::RelocationCounts;
use infile::InFile;
use inflight::Inflight;
pub use observe::{RequestRecord, RequestSink};
pub use output::{RunOptions, RunOutput};
use replay::ReplayState;
pub use replay::{ReplayBatch, ReplayPlan};
pub use request::RequestHint;
use stream::Fingerprints;
pub use stream::StreamRequest;
use submit::Clock;
pub use submit::Until;

/// Longest replayed span of simulated time (2^62 ns, about 146 years):
/// leaves room for every queue behind the last arrival without overflow.
const MAX_SPAN_NS: u64 = 1 << 62;

/// Files up to this many pages find in-file duplicates by scanning.
const SMALL_FILE: usize = 32;

/// How many requests ahead the mapping tables are prefetched.
const PREFETCH_AHEAD: usize = 8;

/// Pages per request whose mapping chain is prefetched.
const PREFETCH_PAGES: u32 = 16;

/// One simulation. See the module doc.
pub struct Simulation<'w> {
    /// The workload [`Simulation::run`] replays; `None` for a streaming
    /// simulation ([`Simulation::streaming`]), fed request by request, and
    /// for a replay fed in batches ([`Simulation::replaying`]).
    workload: Option<&'w Workload>,
    /// The arrival clock every driver shares ([`submit`]).
    clock: Clock,
    /// The replay's counts ([`replay`]).
    replay_state: ReplayState,
    /// Content ids are below this, as far as known (sizes the FTL's
    /// fingerprint index: [`Ftl::reserve_index`]).
    content_space: u32,
    /// Tag of the request being processed ([`Inflight::tag`]).
    tag: u64,
    /// The streaming interface's count ([`stream`]).
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
    /// In-file duplicates of a large write ([`infile`]).
    infile: InFile,
    /// `--check`: LPN -> content + 1 as last written (0 = unmapped).
    shadow: Vec<u32>,
    checks: u64,
    /// Per page of the current write: when its program may be issued (its
    /// hash, or the whole request's, is done).
    hash_ready: Vec<Nanos>,
    /// Completions taken from the timing model, to be applied.
    completed: Vec<(u32, Nanos)>,
    inflight: Vec<Inflight>,
    free_slots: Vec<u32>,
    /// Closed loop and streaming: known completions go to the timing
    /// model's event queue ([`Simulation::finish`]), to be handed out by
    /// [`Simulation::collect`]; an open-loop replay's go to its metrics
    /// only.
    hand_out: bool,
    /// Where programs and preconditioning writes go ([`alloc`]), chosen
    /// once here. Under `allocation = "dynamic"` timed page writes wait
    /// unplaced in the timing model until a channel serves them
    /// ([`Timing::place_next`]).
    alloc: Allocators,
    /// Written requests not fully placed yet, oldest first: their pages
    /// and the units of those placed so far (for the write DOF); the id
    /// of the first (ids count the timed writes).
    unplaced_files: alloc::UnplacedFiles,
    /// Per copy waiting to be placed: the writes whose duplicates
    /// reference it, waiting for its unit (their DOF).
    unplaced_refs: crate::fastmap::FastMap<EntryId, Vec<u64>>,
    /// Scratch: the LPNs a placed copy mapped.
    placed_lpns: Vec<Lpn>,
    /// Duplicates that referenced a copy waiting to be placed (reported
    /// as the policy statistic `dynamic_waiting_references`).
    waiting_refs: u64,
    /// The device seen at chip level (its units are the chips, each listing
    /// its planes in SSDsim's rotation, die fastest) and, per chip, the
    /// rotation's pointer, for dynamically placed pages.
    chip_level: Geometry,
    chip_ptr: Vec<u32>,
    /// Dynamic allocation: the chips marked too full of live data to take
    /// a page, and those placed on since that may be
    /// ([`Simulation::refresh_full_chips`]).
    full_chips: Vec<u32>,
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
    /// The policy wants page layouts ([`Capabilities::wants_layout`]).
    wants_layout: bool,
    layout: Vec<PageLayout>,
    /// The policy's idle threshold ([`crate::policy::Capabilities::idle_threshold`]).
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
        // What the policy is, read once.
        let caps = policy.capabilities();
        let wants_layout = caps.wants_layout;
        if wants_layout {
            // Layout-driven placement can pile live data on one unit.
            ftl.track_plane_live();
        }
        let policy_idle_threshold = caps.idle_threshold;
        // `allocation = "dynamic"` applies to every driver and engine; a
        // policy that places its own pages keeps doing so, and the
        // FAD-SSDsim model places the others', as under every allocation
        // ([`Allocators::choose`]).
        let content_space = plan.map_or(0, |p| p.content_space);
        if caps.deduplicates {
            if ftl_index {
                ftl.reserve_index(content_space);
            } else {
                ftl.track_freed();
                if engine.wants_derefs() {
                    ftl.track_derefs();
                }
            }
        } else {
            // No page is ever shared: LPNs map straight to pages (no entry
            // per page; `ftl` module doc, "Flat mapping"). The shadow model
            // of `--check` compares contents, which the flat map then keeps.
            ftl.map_flat();
            if opts.check {
                ftl.keep_contents();
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
        let alloc = Allocators::choose(
            cfg,
            caps.placement_free,
            fad_ssdsim.is_some(),
            plan.map_or(0, |p| p.precondition_past_pages),
        );
        if alloc.dynamic() {
            // Dynamic allocation passes over chips too full of live data
            // (`Simulation::refresh_full_chips`).
            ftl.track_plane_live();
        }
        let shadow = if opts.check { vec![0; ftl.logical_pages() as usize] } else { Vec::new() };
        Ok(Simulation {
            workload: None,
            clock: Clock::default(),
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
            dedup: caps.deduplicates,
            opts,
            pages: Vec::new(),
            actions: Vec::new(),
            entry_of: Vec::new(),
            unit_of_page: Vec::new(),
            unit_hits: vec![0; units as usize],
            touched: Vec::new(),
            infile: InFile::default(),
            shadow,
            checks: 0,
            hash_ready: Vec::new(),
            completed: Vec::new(),
            inflight: Vec::new(),
            free_slots: Vec::new(),
            hand_out: streaming || matches!(cfg.replay, ReplayConfig::ClosedLoop { .. }),
            alloc,
            unplaced_files: alloc::UnplacedFiles::default(),
            unplaced_refs: Default::default(),
            placed_lpns: Vec::new(),
            waiting_refs: 0,
            chip_level: Geometry::new(&cfg.geometry, ParallelUnit::Chip),
            chip_ptr: vec![0; (cfg.geometry.channels * cfg.geometry.chips_per_channel) as usize],
            full_chips: Vec::new(),
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
}
