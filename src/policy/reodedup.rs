//! `reodedup-csr` / `reodedup-atr`: ReoDedup's relocation inside the SSD
//! (Wang et al., "Revisiting Fragmentation for Deduplication in Clustered
//! Primary Storage Systems": §IV-A CSR, §IV-B ATR, §VI "SSD
//! Optimization"). docs/reodedup.md has the design and the measurements.
//!
//! **Write path**: exactly `dedup` (CAFTL-like inline deduplication, new
//! pages on the cyclic pointer; placement-free, so the device's
//! `allocation` (SSDsim's dynamic allocation by default) places them like
//! `dedup`'s). Relocation never rewrites a
//! duplicate: the dedup rate is `dedup`'s.
//!
//! **Window** (the paper's per-node buffer of chunks, §V-A): the last
//! `window` files written (a file is one write request, FAD's rule), each
//! remembered as its (logical page, content) list. When the device is idle
//! the files' pages are resolved to the physical copies they map to now
//! (FTL entries; a page overwritten or trimmed since is left out), the
//! window's layout is computed by CSR or ATR ([`crate::reodedup`]) over
//! those copies, and the window is emptied. Files that leave the window
//! before an idle period (more than `window` writes in a busy stretch) are
//! not laid out (`reo_files_dropped`).
//!
//! **From layout to chips** (§VI: on an SSD "adjacent" must mean "read in
//! parallel", not consecutive addresses; the paper asks for
//! "placement strategies that are friendly to device parallelism" and
//! "deferred execution during low-load periods"): within each run of the
//! layout (chunks linked because they share files), every `U` consecutive
//! chunks — a *stripe* of the layout — must lie on `U` different parallel
//! units (`U` = the configuration's units, chips by default), so a file
//! whose chunks the layout put side by side is read from as many chips as
//! it has pages (up to `U`).
//!
//! **Which copies may move** (§V-A: the paper lays out a node's *buffer*
//! of newly written chunks before persisting them): a copy moves only if
//! every logical page referencing it is a page of the window, i.e. it
//! belongs to the window's files alone (in practice: the copies the
//! window's writes created). A copy that other logical pages share as well
//! (an older copy a window file deduplicated against) stays where it is:
//! moving it would re-arrange those other pages' reads, which the window
//! cannot see (measured in docs/reodedup.md: moving them raised the read
//! DOF of block workloads). `move_shared = true` moves them too.
//!
//! Walking the run, a movable chunk keeps its current unit if no chunk
//! among the `U − 1` before it in the run lies there and no fixed chunk
//! among the `U − 1` after it holds it; only otherwise it is relocated, to
//! the first unit in cyclic order after the previous chunk's unit that is
//! free in the stripe and not the current unit of one of the next `U − 1`
//! chunks (so that it does not displace a chunk that could stay), failing
//! that not held by a fixed chunk ahead, failing that the first free one.
//! Only pages whose unit must change are moved; a conflict between two
//! fixed chunks stays. Between runs the layout has no
//! meaning (they share no file) and nothing is constrained.
//!
//! **Step 5 on chips** (§IV-A Step 5, §VI's cost model): the paper keeps
//! CSR's new order only if it beats the *original* one. Inside an SSD the
//! original layout of the copies is their units, not a sequence (the
//! window's arrival order groups each file's new pages already and would
//! almost always win the similarity comparison, relocating nothing). So
//! the comparison is made on chips: the window's *read rounds* (per file,
//! the most chunks it has on one unit; summed over files) under the
//! current units and under the planned ones; the plan is carried out only
//! if that cost drops. The same check guards ATR (which has no Step 5 in
//! the paper): on an SSD a relocation that does not shorten a read is a
//! pure cost (§VI: write amplification, endurance). The greedy order is
//! [`crate::reodedup::csr_greedy_with`]; the pure [`crate::reodedup::csr`]
//! keeps the paper's similarity Step 5 for callers with a sequential
//! layout.
//!
//! **Relocation** (the simulator executes it, [`super::Relocation`],
//! [`crate::ftl::Ftl::relocate`]): a read of the old page on its chip and a
//! program on a chip of the target unit, background operations that
//! compete with host I/O; every logical page sharing the copy follows (the
//! entry indirection). Relocations are issued in the idle windows the
//! simulator offers after `idle_ms` without a host arrival, one after the
//! other (a single background thread: the next read is issued when the
//! previous page's data is out), paced by [`crate::background::Pacer`]:
//! at most `budget` per `period_ms` (0 = no limit but the window). Planned
//! relocations left when a window ends continue in the next one, each
//! checked again (the copy must still hold the content and still be on
//! another unit); a new layout is computed only when none are left.
//!
//! **GC**: not folded into GC migration. GC moves a page only inside its
//! plane (its unit does not change), so it neither undoes nor performs a
//! relocation; a relocated page's old copy becomes an invalid page like an
//! overwritten one, and the program may trigger a collection, charged as
//! usual.
//!
//! Parameters (`[policy.reodedup-csr]` / `[policy.reodedup-atr]`): `csr`
//! (`rows`, the paper's per-row greedy, or `global`), `atr_file` (`random`,
//! the paper's Step 3, seeded by the layout's number, or `first`), `window`
//! (files, default 128: the paper gives no buffer size), `idle_ms` (1: the
//! paper gives no threshold; SmartDedup's 10 ms never occurs between the
//! Poisson arrivals of the Table II replicas, 1 ms precedes 4-5% of the
//! homes and web-vm arrivals and 31% of mail's, and is about eight page
//! reads with their transfers on `fad-table1`), `budget` (0 = unlimited)
//! per `period_ms` (1000), `move_shared` (false), `iru` (false), `cost`
//! (`rounds`, the paper's Step 5 on chips; or `time`, §VI's cost model:
//! [`RelocationCost`]) with `expected_reads` (1) and `write_weight` (1),
//! `layout` (`relocate`, or `program`: [`LayoutWhen`]) and `align`
//! (`page`, or `block`: [`RelocationAlign`]).
//!
//! **Layout before programming** (`layout = "program"`, §V-A: the paper
//! lays out a node's buffer of new chunks *before* persisting it, so its
//! relocation costs no extra write; issue 28 item 10). The simulator
//! programs each write request when it arrives (a policy cannot hold
//! pages back), so the layout is incremental: at each file the window (the
//! last `window` files, this one included, restricted to the files sharing
//! a chunk with it: files linked to it only through those are left out,
//! which bounds the work per write: on the mail replica at 0.02 the
//! transitive closure took 34 s, these 3.9 s, for read latency within
//! 0.4%) is laid out by CSR or ATR and the stripe rule
//! gives the file's new pages their units around the units of the chunks
//! already on flash, which stay. Step 5 on chips as above: the layout's
//! units are kept only if the file reads in fewer rounds than with the
//! window's arrival order (the original layout); a run that starts with a
//! new page continues the policy's cyclic pointer. The policy then places
//! every new page (not the device's allocator, as for `dedup`) and relocates
//! nothing. Not with `iru` or `align = "block"` (typed errors).
//!
//! **Erase-block alignment** (`align = "block"`, §VI: "relocation
//! granularity aligned to erase-block sizes"): the planned moves are held
//! per target unit and issued only in groups of `pages_per_block ×` the
//! unit's planes (a block's worth per plane: the unit's planes take its
//! pages in turn), each group back to back inside one idle window (not
//! started unless it ends before the next arrival), so host writes do not
//! interleave with a group. Moves short of a group wait for later layouts
//! (`reo_relocations_held`; re-checked when issued: a group whose moves
//! went stale is topped up from its unit's held moves, or held again if it
//! cannot be, so every group issued is whole). The moves are programmed
//! into the target plane's relocation block, a second write frontier that
//! holds relocated pages only ([`crate::ftl::Ftl::relocate_to_block`]), so
//! a group fills exactly one fresh erase block per plane of its unit, which
//! no host write or GC migration shares. Needs one spare block per plane
//! beyond GC's (checked when the policy is built).
//!
//! **IRU** (§IV-C): in the cluster an updated chunk has a new fingerprint
//! and would be routed to another node, away from its file's chunks; IRU
//! writes it back to the old node and leaves a remapping index at the new
//! one. Inside one SSD the corresponding fragmentation is an update
//! programmed on another unit than the copy it replaces, and the
//! corresponding fix is to program it on the old copy's unit (with
//! `iru = true`: the policy then places every new page itself, updates on
//! their old unit, the rest round-robin in write order, instead of the
//! device's allocator). No remapping index is needed: the
//! FTL's logical-to-physical map already redirects the read, and a
//! relocated copy's sharers follow it through the entry indirection in
//! O(1) (`Ftl::relocate`). Off by default, so that the policy's write path
//! is exactly `dedup`'s (FU, the paper's "fragmented update").
//!
//! # Caution
//!
//! With `move_shared = true` a relocated copy shared with logical pages
//! outside the window moves for them too: the layout optimizes the
//! window's files only (as the paper's does). The extra flash writes
//! (`programs.relocation`, each with a read) count in the write
//! amplification and wear, and the relocations hold chips that host
//! requests arriving during them wait for. Most files of a busy workload
//! may leave the window before an idle period reaches them
//! (`reo_files_dropped`).

use super::{Action, Capabilities, Cyclic, Dup, GcHint, PageInfo, PageLayout, Policy, PolicyError, Relocation};
use crate::background::{IdleWindow, Pacer};
use crate::ftl::{EntryId, Ftl};
use crate::reodedup::{atr_with, csr_greedy_with, Algorithm, AtrFile, ChunkId, CsrGreedy, Layout};
use crate::units::{ContentId, Lpn, Nanos};
use serde::Deserialize;
use std::collections::{HashMap, HashSet, VecDeque};

/// The unit-bearing parameters and their old bare-number names
/// ([`crate::params::unit_keys`]): `idle = "1ms"` is `idle_ms = 1`.
pub const UNIT_KEYS: &[crate::params::unit_keys::UnitKey] = &[
    crate::params::unit_keys::UnitKey::time(
        "idle",
        "idle_ms",
        crate::background::MAX_BACKGROUND_TIME_NS as u64,
        1e6,
        "ms",
    ),
    crate::params::unit_keys::UnitKey::time(
        "period",
        "period_ms",
        crate::background::MAX_BACKGROUND_TIME_NS as u64,
        1e6,
        "ms",
    ),
];

/// `[policy.reodedup-csr]` / `[policy.reodedup-atr]` parameters. See the
/// module doc.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReoDedupParams {
    /// Files (write requests) in the window laid out at idle time.
    pub window: usize,
    /// Time without a host arrival before relocation may start (ms).
    pub idle_ms: f64,
    /// Relocations per period; 0 = unlimited (the idle window only).
    pub budget: u32,
    /// Pacing period (ms).
    pub period_ms: f64,
    /// Also move copies that logical pages outside the window share (by
    /// default only copies every reference of which comes from the
    /// window's pages move: the paper's buffer of new chunks, §V-A).
    pub move_shared: bool,
    /// IRU (§IV-C) inside the SSD: an update (a new copy of a mapped
    /// logical page) is programmed on the unit of the copy it replaces, as
    /// IRU writes an updated chunk back to its old node; other new pages
    /// go round-robin in write order (the policy then places every page
    /// itself). Default false (FU: the device's allocator places updates
    /// like any page, as for `dedup`).
    pub iru: bool,
    /// CSR's greedy (`reodedup-csr`): `rows`, the paper's per-row greedy
    /// (§IV-A Steps 1-6, default), or `global` (pairs of the whole
    /// similarity matrix in decreasing order). `brute` is refused: windows
    /// are larger than its 10 chunks.
    pub csr: CsrGreedy,
    /// ATR's file choice (`reodedup-atr`, §IV-B Step 3): `random` (default;
    /// seeded by the layout's number, so runs are reproducible) or `first`.
    pub atr_file: AtrFile,
    /// How a layout's relocations are weighed before they are carried out
    /// (§VI: "extending the relocation cost model to account for both read
    /// benefits and write costs"): `rounds` (default: Step 5 on chips, any
    /// drop of the window's read rounds, whatever the number of moves) or
    /// `time` (the saved read time must exceed the moves' flash time,
    /// [`RelocationCost`]).
    pub cost: RelocationCost,
    /// With `cost = "time"`: how often each laid-out file is expected to be
    /// read before it is rewritten (the paper gives no read frequency).
    pub expected_reads: f64,
    /// With `cost = "time"`: weight of a move's flash time against saved
    /// read time (above 1 charges wear and write amplification beyond the
    /// time: §VI's "device durability").
    pub write_weight: f64,
    /// When the window is laid out (§V-A, §VI): `relocate` (default: the
    /// pages are programmed where `dedup` puts them and moved at idle time)
    /// or `program` (each file's new pages are placed by the window's
    /// layout before they are programmed: nothing is relocated).
    pub layout: LayoutWhen,
    /// Granularity of relocations (§VI: "relocation granularity aligned to
    /// erase-block sizes"): `page` (default) or `block` (a target unit's
    /// moves are issued only in whole erase blocks' worth, back to back, each
    /// into fresh blocks holding relocated pages only).
    pub align: RelocationAlign,
}

/// When the window's layout takes effect ([`ReoDedupParams::layout`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayoutWhen {
    /// Programmed by the device's allocator, laid out at idle time by
    /// relocating pages already written (a read and a program per move).
    #[default]
    Relocate,
    /// §V-A: the paper lays out a node's buffer of new chunks *before*
    /// persisting them, so relocation costs no extra write. Inside the SSD
    /// each write request is programmed when it arrives, so the layout is
    /// incremental: at each file, the window (the last `window` files,
    /// this one included) is laid out (CSR or ATR, over the files sharing
    /// a chunk with this one) and the stripe rule places this
    /// file's new pages around the units of the chunks already on flash,
    /// which stay where they are.
    Program,
}

/// Granularity of the relocations ([`ReoDedupParams::align`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RelocationAlign {
    /// Every planned move is issued on its own.
    #[default]
    Page,
    /// §VI: planned moves are held per target unit and issued only in
    /// groups of `pages_per_block × planes of the unit` (one erase block's
    /// worth per plane: the unit's planes take its pages in turn), each
    /// group back to back in one idle window (not started unless it ends
    /// before the next host arrival), into the target planes' relocation
    /// blocks ([`crate::ftl::Ftl::relocate_to_block`]), so a group fills
    /// exactly one fresh erase block per plane with relocated pages only.
    /// A remainder smaller than a group waits for later layouts
    /// (`reo_relocations_held`); each move is re-checked when issued and a
    /// group with stale moves is topped up from its unit's held moves.
    Block,
}

/// The relocation decision's cost model ([`ReoDedupParams::cost`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RelocationCost {
    /// Carry the plan out if the window's read rounds drop at all (Step 5
    /// on chips: the paper's rule, which weighs no write).
    #[default]
    Rounds,
    /// Carry it out only if `saved rounds × expected_reads × t_read >
    /// moves × write_weight × (t_read + t_program)`: each saved round is a
    /// page read (with its transfer) saved at every read of the window's
    /// files, each move costs a page read and a page program on the chips
    /// (with their transfers).
    Time,
}

impl Default for ReoDedupParams {
    fn default() -> Self {
        ReoDedupParams {
            window: 128,
            idle_ms: 1.0,
            budget: 0,
            period_ms: 1000.0,
            move_shared: false,
            iru: false,
            csr: CsrGreedy::Rows,
            atr_file: AtrFile::Random,
            cost: RelocationCost::Rounds,
            expected_reads: 1.0,
            write_weight: 1.0,
            layout: LayoutWhen::Relocate,
            align: RelocationAlign::Page,
        }
    }
}

/// A planned relocation: copy `entry` of `content` to `unit`.
#[derive(Copy, Clone, Debug)]
struct Planned {
    entry: EntryId,
    content: ContentId,
    unit: u32,
}

#[derive(Clone, Debug, Default)]
struct Stats {
    layouts: u64,
    kept_original: u64,
    chunks: u64,
    shared_chunks: u64,
    similarity_gain: f64,
    rounds_before: u64,
    rounds_after: u64,
    planned: u64,
    issued: u64,
    stale: u64,
    files_dropped: u64,
    rejected_cost: u64,
    /// `layout = "program"`: new pages placed by the layout.
    placed_by_layout: u64,
}

/// The ReoDedup relocation policy. See the module doc.
pub struct ReoDedup {
    name: &'static str,
    algorithm: Algorithm,
    csr: CsrGreedy,
    atr_file: AtrFile,
    window: usize,
    move_shared: bool,
    iru: bool,
    /// With IRU: updates placed on their old copy's unit.
    iru_updates: u64,
    idle: Nanos,
    pacer: Pacer,
    /// Time from issuing a relocation's read to its data being out.
    t_read_out: Nanos,
    /// A page program with its transfer (the `time` cost model).
    t_program: Nanos,
    cost: RelocationCost,
    expected_reads: f64,
    write_weight: f64,
    next: Cyclic,
    files: VecDeque<Vec<(Lpn, ContentId)>>,
    pending: VecDeque<Planned>,
    stats: Stats,
    layout: LayoutWhen,
    align: RelocationAlign,
    /// `align = "block"`: moves planned per target unit, not yet a group.
    held: Vec<VecDeque<Planned>>,
    /// `align = "block"`: whole groups ready to issue, each back to back.
    groups: VecDeque<Vec<Planned>>,
    /// `layout = "program"`: the window's files as chunk (content) lists.
    program_files: VecDeque<Vec<ChunkId>>,
    /// `layout = "program"`: unit of each chunk of the window when it was
    /// placed, with the number of window files holding it.
    program_units: HashMap<ChunkId, (u32, u32)>,
}

impl ReoDedup {
    /// Builds `reodedup-csr` or `reodedup-atr` from its parameter table.
    pub fn build(algorithm: Algorithm, ctx: &super::PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        let name = match algorithm {
            Algorithm::Csr => "reodedup-csr",
            Algorithm::Atr => "reodedup-atr",
        };
        let p: ReoDedupParams = super::params_with_units(ctx, UNIT_KEYS)?;
        if p.align == RelocationAlign::Block && ctx.spare_blocks_over_gc == 0 {
            return Err(PolicyError::Params {
                policy: name.to_string(),
                reason: "align = \"block\" keeps a relocation block open in every plane beside the active block, \
                         and the device has no spare block per plane beyond the 2 GC needs (above \
                         gc.min_free_blocks with gc.rule = \"until-threshold\"): raise over_provisioning or lower \
                         gc.min_free_blocks"
                    .into(),
            });
        }
        let mut r = ReoDedup::new(name, algorithm, &p, ctx.read_time)?;
        r.t_program = ctx.program_time;
        Ok(Box::new(r))
    }

    /// A policy named `name` running `algorithm`; `t_read_out` is a page
    /// read plus its transfer (the page program time of the `time` cost
    /// model is zero until [`ReoDedup::build`] sets it from the device).
    pub fn new(
        name: &'static str,
        algorithm: Algorithm,
        p: &ReoDedupParams,
        t_read_out: Nanos,
    ) -> Result<ReoDedup, PolicyError> {
        let bad = |reason: String| PolicyError::Params { policy: name.to_string(), reason };
        if p.window == 0 {
            return Err(bad("window must be at least 1 file".into()));
        }
        if p.csr == CsrGreedy::BruteForce {
            return Err(bad(format!(
                "csr = \"brute\" enumerates every order of at most {} chunks; a window holds more: use rows or global",
                crate::reodedup::BRUTE_FORCE_MAX
            )));
        }
        if !(p.idle_ms.is_finite() && p.idle_ms > 0.0) {
            return Err(bad(format!("idle_ms must be a positive number of milliseconds, not {}", p.idle_ms)));
        }
        if !(p.period_ms.is_finite() && p.period_ms >= 0.0) {
            return Err(bad(format!("period_ms must be a non-negative number of milliseconds, not {}", p.period_ms)));
        }
        for (k, v) in [("expected_reads", p.expected_reads), ("write_weight", p.write_weight)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(format!("{k} must be a non-negative number, not {v}")));
            }
        }
        if p.layout == LayoutWhen::Program && p.iru {
            return Err(bad(
                "iru = true places updates on their old unit and layout = \"program\" places them by the \
                            layout: set one of them"
                    .into(),
            ));
        }
        if p.layout == LayoutWhen::Program && p.align == RelocationAlign::Block {
            return Err(bad("align = \"block\" groups relocations, and layout = \"program\" relocates nothing: \
                            set one of them"
                .into()));
        }
        for (k, v) in [("idle_ms", p.idle_ms), ("period_ms", p.period_ms)] {
            crate::background::check_time_param(k, v, "ms", 1e6, crate::background::MAX_BACKGROUND_TIME_NS)
                .map_err(bad)?;
        }
        let ms = |x: f64| Nanos((x * 1e6).round() as u64);
        Ok(ReoDedup {
            name,
            algorithm,
            csr: p.csr,
            atr_file: p.atr_file,
            window: p.window,
            move_shared: p.move_shared,
            iru: p.iru,
            iru_updates: 0,
            idle: ms(p.idle_ms),
            pacer: Pacer::new(ms(p.period_ms), p.budget),
            t_read_out,
            t_program: Nanos::ZERO,
            cost: p.cost,
            expected_reads: p.expected_reads,
            write_weight: p.write_weight,
            next: Cyclic::default(),
            files: VecDeque::new(),
            pending: VecDeque::new(),
            stats: Stats::default(),
            layout: p.layout,
            align: p.align,
            held: Vec::new(),
            groups: VecDeque::new(),
            program_files: VecDeque::new(),
            program_units: HashMap::new(),
        })
    }

    /// Lays out the window's files and plans the relocations (module doc).
    fn plan(&mut self, ftl: &Ftl) {
        let files: Vec<Vec<ChunkId>> = self
            .files
            .drain(..)
            .map(|f| {
                f.iter()
                    .filter_map(|&(lpn, content)| {
                        let e = ftl.lookup(lpn)?;
                        (ftl.entry(e).content == content).then_some(u64::from(e))
                    })
                    .collect::<Vec<ChunkId>>()
            })
            .filter(|f| !f.is_empty())
            .collect();
        let layout = match self.algorithm {
            Algorithm::Csr => csr_greedy_with(&files, self.csr),
            Algorithm::Atr => atr_with(&files, None, self.atr_file, self.stats.layouts),
        }
        .expect("a window of resolved copies is a valid original order, and brute is refused");
        let s = &mut self.stats;
        s.layouts += 1;
        s.chunks += layout.stats.chunks as u64;
        s.shared_chunks += layout.stats.shared_chunks as u64;
        s.similarity_gain += layout.stats.similarity_after - layout.stats.similarity_before;
        // Copies referenced only by the window's pages may move; a copy
        // other logical pages share too stays put unless `move_shared`.
        let mut window_refs: HashMap<ChunkId, u32> = HashMap::new();
        for &c in files.iter().flatten() {
            *window_refs.entry(c).or_insert(0) += 1;
        }
        let move_shared = self.move_shared;
        let movable =
            |c: ChunkId| move_shared || window_refs.get(&c).copied().unwrap_or(0) >= ftl.entry(c as EntryId).refs;
        let mut planned = VecDeque::new();
        stripe_targets(&layout, ftl, movable, &mut planned);
        if planned.is_empty() {
            return;
        }
        // Step 5 on chips (§VI): keep the relocation only if the window's
        // files read in fewer rounds.
        let unit_now = |c: ChunkId| ftl.geometry().unit_of(ftl.entry(c as EntryId).ppn);
        let before = read_rounds(&files, unit_now, ftl.geometry().unit_count());
        let moved: HashMap<ChunkId, u32> = planned.iter().map(|p| (u64::from(p.entry), p.unit)).collect();
        let after =
            read_rounds(&files, |c| moved.get(&c).copied().unwrap_or_else(|| unit_now(c)), ftl.geometry().unit_count());
        s.rounds_before += before;
        if after >= before {
            s.kept_original += 1;
            s.rounds_after += before;
            return;
        }
        if self.cost == RelocationCost::Time
            && !worth_moving(
                before - after,
                planned.len() as u64,
                self.expected_reads,
                self.write_weight,
                self.t_read_out,
                self.t_program,
            )
        {
            s.rejected_cost += 1;
            s.rounds_after += before;
            return;
        }
        s.rounds_after += after;
        s.planned += planned.len() as u64;
        match self.align {
            RelocationAlign::Page => self.pending.extend(planned),
            RelocationAlign::Block => self.hold_in_groups(ftl, planned),
        }
    }

    /// `align = "block"`: adds the planned moves to their target unit's
    /// held moves and turns every whole group (an erase block's worth per
    /// plane of the unit) into a group to issue, units in order.
    fn hold_in_groups(&mut self, ftl: &Ftl, planned: VecDeque<Planned>) {
        let geo = ftl.geometry();
        if self.held.is_empty() {
            self.held = vec![VecDeque::new(); geo.unit_count() as usize];
        }
        for p in planned {
            self.held[p.unit as usize].push_back(p);
        }
        for (unit, held) in self.held.iter_mut().enumerate() {
            let group = geo.pages_per_block as usize * geo.unit_planes(unit as u32).len();
            while held.len() >= group {
                self.groups.push_back(held.drain(..group).collect());
            }
        }
    }

    /// `layout = "program"` (§V-A): places the new pages of `file` by the
    /// layout of the window including it (module doc), before they are
    /// programmed; duplicates are referenced.
    fn place_by_layout(&mut self, file: &[PageInfo], units: u32, out: &mut Vec<Action>) {
        let chunk = |p: &PageInfo| u64::from(p.content.0);
        let ids: Vec<ChunkId> = file.iter().map(chunk).collect();
        if self.program_files.len() == self.window {
            let gone = self.program_files.pop_front().expect("a full window");
            self.forget(&gone);
            self.stats.files_dropped += 1;
        }
        let mut fresh: HashMap<ChunkId, Option<u32>> = HashMap::new();
        for p in file {
            match p.dup {
                Dup::None => {
                    fresh.insert(chunk(p), None);
                }
                Dup::Existing { unit, .. } => {
                    self.program_units.entry(chunk(p)).or_insert((unit, 0)).0 = unit;
                }
                Dup::InFile { .. } | Dup::Waiting { .. } => {}
            }
        }
        self.program_files.push_back(ids);
        if !fresh.is_empty() && units >= 2 {
            // The files sharing a chunk with this one (the layout's
            // neighbours of its chunks; files linked to it only through
            // them are left out, which bounds the work per write).
            let n = self.program_files.len();
            let mine: HashSet<ChunkId> =
                self.program_files[n - 1].iter().copied().filter(|c| !fresh.contains_key(c)).collect();
            let linked: Vec<bool> = self
                .program_files
                .iter()
                .enumerate()
                .map(|(i, f)| i == n - 1 || (!mine.is_empty() && f.iter().any(|c| mine.contains(c))))
                .collect();
            let files: Vec<Vec<ChunkId>> =
                self.program_files.iter().zip(&linked).filter(|(_, &l)| l).map(|(f, _)| f.clone()).collect();
            let layout = match self.algorithm {
                Algorithm::Csr => csr_greedy_with(&files, self.csr),
                Algorithm::Atr => atr_with(&files, None, self.atr_file, self.stats.layouts),
            }
            .expect("a window of chunk lists is a valid original order, and brute is refused");
            let s = &mut self.stats;
            s.layouts += 1;
            s.chunks += layout.stats.chunks as u64;
            s.shared_chunks += layout.stats.shared_chunks as u64;
            // Step 5 on chips: the original layout is the arrival order.
            let window = crate::reodedup::Window::new(&files);
            let arrival: Vec<u32> = (0..window.len() as u32).collect();
            let original = window.layout(&arrival, &arrival, true);
            // Runs that start with a new page continue the cyclic pointer,
            // as the device's round-robin would (not unit 0 every file).
            let start = self.next.peek(units);
            for _ in 0..fresh.len() {
                self.next.advance(units);
            }
            let known = &self.program_units;
            let current = |c: ChunkId| if fresh.contains_key(&c) { None } else { known.get(&c).map(|k| k.0) };
            let assign = |l: &Layout| {
                let mut a: HashMap<ChunkId, u32> = HashMap::new();
                stripe_assign(
                    l,
                    units as usize,
                    start,
                    current,
                    |c| fresh.contains_key(&c),
                    |c, u| {
                        a.insert(c, u);
                    },
                );
                a
            };
            let (by_layout, by_arrival) = (assign(&layout), assign(&original));
            let this = std::slice::from_ref(files.last().expect("this file is linked"));
            let rounds = |a: &HashMap<ChunkId, u32>| {
                read_rounds(this, |c| a.get(&c).copied().or_else(|| current(c)).unwrap_or(0), units)
            };
            let (after, before) = (rounds(&by_layout), rounds(&by_arrival));
            s.rounds_before += before;
            let chosen = if after < before {
                s.rounds_after += after;
                by_layout
            } else {
                s.kept_original += 1;
                s.rounds_after += before;
                by_arrival
            };
            for (c, u) in chosen {
                if let Some(slot) = fresh.get_mut(&c) {
                    *slot = Some(u);
                }
            }
        }
        for p in file {
            out.push(match p.dup {
                Dup::None => {
                    let unit = match fresh[&chunk(p)] {
                        Some(u) => {
                            self.stats.placed_by_layout += 1;
                            u
                        }
                        None => self.next.take(units),
                    };
                    self.program_units.entry(chunk(p)).or_insert((unit, 0)).0 = unit;
                    Action::Program { unit }
                }
                _ => Action::Reference,
            });
        }
        let mut seen = self.program_files.back().expect("just pushed").clone();
        seen.sort_unstable();
        seen.dedup();
        for c in seen {
            if let Some(k) = self.program_units.get_mut(&c) {
                k.1 += 1;
            }
        }
    }

    /// A file leaves the `layout = "program"` window: its chunks' counts drop.
    fn forget(&mut self, file: &[ChunkId]) {
        let mut seen = file.to_vec();
        seen.sort_unstable();
        seen.dedup();
        for c in seen {
            if let Some(k) = self.program_units.get_mut(&c) {
                k.1 -= 1;
                if k.1 == 0 {
                    self.program_units.remove(&c);
                }
            }
        }
    }
}

/// The `time` cost model ([`RelocationCost::Time`]): `saved` read rounds,
/// each a page read saved at each of `expected_reads` reads, against
/// `moves` relocations, each a page read and a page program, weighted by
/// `write_weight`. Strictly more saved than spent.
fn worth_moving(
    saved: u64,
    moves: u64,
    expected_reads: f64,
    write_weight: f64,
    t_read: Nanos,
    t_program: Nanos,
) -> bool {
    let benefit = saved as f64 * expected_reads * t_read.0 as f64;
    let cost = moves as f64 * write_weight * (t_read.0 + t_program.0) as f64;
    benefit > cost
}

/// The window's read cost on chips: per file, the largest number of its
/// chunks on one unit (the rounds of page reads its read takes when all
/// units work in parallel: 1 for a file spread over distinct units), summed
/// over the files.
fn read_rounds(files: &[Vec<ChunkId>], unit: impl Fn(ChunkId) -> u32, units: u32) -> u64 {
    let mut count = vec![0u32; units as usize];
    let mut total = 0;
    for f in files {
        let mut chunks = f.clone();
        chunks.sort_unstable();
        chunks.dedup();
        count.fill(0);
        for &c in &chunks {
            count[unit(c) as usize] += 1;
        }
        total += u64::from(count.iter().copied().max().unwrap_or(0));
    }
    total
}

/// The unit of each chunk of each run under the stripe rule (module doc);
/// pushes the chunks whose unit must change.
fn stripe_targets(layout: &Layout, ftl: &Ftl, movable: impl Fn(ChunkId) -> bool, out: &mut VecDeque<Planned>) {
    let geo = ftl.geometry();
    let unit_now = |c: ChunkId| Some(geo.unit_of(ftl.entry(c as EntryId).ppn));
    stripe_assign(layout, geo.unit_count() as usize, 0, unit_now, movable, |c, unit| {
        let entry = c as EntryId;
        out.push_back(Planned { entry, content: ftl.entry(entry).content, unit });
    });
}

/// The stripe rule over `u` units (module doc): `current` is a chunk's unit
/// now (`None`: not yet programmed, `layout = "program"`, always placed and
/// never fixed); `emit` receives each chunk that must take another unit
/// (or a first one) with that unit. A run's first chunk that must be placed
/// starts the cyclic search at unit `start`.
fn stripe_assign(
    layout: &Layout,
    u: usize,
    start: u32,
    current: impl Fn(ChunkId) -> Option<u32>,
    movable: impl Fn(ChunkId) -> bool,
    mut emit: impl FnMut(ChunkId, u32),
) {
    if u < 2 {
        return;
    }
    let mut placed: Vec<u32> = Vec::new();
    for run in layout.run_slices() {
        let current: Vec<Option<u32>> = run.iter().map(|&c| current(c)).collect();
        let fixed: Vec<bool> = run.iter().zip(&current).map(|(&c, cur)| cur.is_some() && !movable(c)).collect();
        placed.clear();
        for (p, &c) in run.iter().enumerate() {
            let stripe = &placed[p.saturating_sub(u - 1)..p];
            let cur = current[p];
            let next = p + 1..(p + u).min(run.len());
            // Units the fixed chunks ahead in this stripe will keep.
            let held = |x: u32| next.clone().any(|q| fixed[q] && current[q] == Some(x));
            if let Some(cur) = cur.filter(|&cur| fixed[p] || (!stripe.contains(&cur) && !held(cur))) {
                placed.push(cur);
                continue;
            }
            let ahead = &current[next.clone()];
            let from = placed.last().map_or(start as usize, |&l| l as usize + 1);
            let free = (0..u).map(|k| ((from + k) % u) as u32).filter(|x| !stripe.contains(x));
            let unit = free
                .clone()
                .find(|&x| !ahead.contains(&Some(x)))
                .or_else(|| free.clone().find(|&x| !held(x)))
                .or_else(|| free.clone().next())
                .expect("u > stripe");
            if Some(unit) != cur {
                emit(c, unit);
            }
            placed.push(unit);
        }
    }
}

impl Policy for ReoDedup {
    fn name(&self) -> &'static str {
        self.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            placement_free: !self.iru && self.layout == LayoutWhen::Relocate,
            wants_layout: self.iru,
            idle_threshold: self.idle,
            ..Capabilities::default()
        }
    }

    fn place(&mut self, file: &[PageInfo], layout: &[PageLayout], units: u32, out: &mut Vec<Action>) -> Option<GcHint> {
        if self.layout == LayoutWhen::Program {
            self.place_by_layout(file, units, out);
            return None;
        }
        for (i, p) in file.iter().enumerate() {
            out.push(match p.dup {
                Dup::None => match layout.get(i).and_then(|l| l.old_unit).filter(|_| self.iru) {
                    Some(unit) => {
                        self.iru_updates += 1;
                        Action::Program { unit }
                    }
                    None => Action::Program { unit: self.next.take(units) },
                },
                _ => Action::Reference,
            });
        }
        if self.files.len() == self.window {
            self.files.pop_front();
            self.stats.files_dropped += 1;
        }
        self.files.push_back(file.iter().map(|p| (p.lpn, p.content)).collect());
        None
    }

    fn begin_replay(&mut self) {
        self.files.clear();
        self.pending.clear();
        self.held.clear();
        self.groups.clear();
        self.program_files.clear();
        self.program_units.clear();
        self.stats = Stats::default();
        self.iru_updates = 0;
    }

    fn wants_idle(&self) -> bool {
        !self.files.is_empty() || !self.pending.is_empty() || !self.groups.is_empty()
    }

    fn idle(&mut self, ftl: &Ftl, window: IdleWindow, out: &mut Vec<Relocation>) {
        let mut x = window.start;
        // `align = "block"`: copies moved by this window's relocations (the
        // FTL executes them after this call, so `ftl` still shows them at
        // their old page; a second move of one would be skipped or doubled).
        let mut moved: HashSet<EntryId> = HashSet::new();
        loop {
            if self.align == RelocationAlign::Block {
                if self.groups.is_empty() {
                    if self.files.is_empty() {
                        break;
                    }
                    self.plan(ftl);
                    continue;
                }
                let valid = |p: &Planned, moved: &HashSet<EntryId>| {
                    !moved.contains(&p.entry)
                        && ftl
                            .entry_live(p.entry)
                            .is_some_and(|e| e.content == p.content && ftl.geometry().unit_of(e.ppn) != p.unit)
                };
                // The group's moves still to make, topped up from its
                // unit's held moves for those gone stale, so that the group
                // fills its relocation blocks exactly (`Ftl::relocate_to_block`).
                let queued = self.groups.pop_front().expect("not empty");
                let (size, unit) = (queued.len(), queued[0].unit);
                let mut group: Vec<Planned> = Vec::with_capacity(size);
                let mut in_group: HashSet<EntryId> = HashSet::with_capacity(size);
                let mut stale = 0;
                let held = &mut self.held[unit as usize];
                let mut more = queued.into_iter();
                while group.len() < size {
                    let Some(p) = more.next().or_else(|| held.pop_front()) else { break };
                    if valid(&p, &moved) && in_group.insert(p.entry) {
                        group.push(p);
                    } else {
                        stale += 1;
                    }
                }
                self.stats.stale += stale;
                if group.len() < size {
                    // Short of a group: held again, in order, for later layouts.
                    for p in group.into_iter().rev() {
                        held.push_front(p);
                    }
                    continue;
                }
                // A group goes back to back in this window or waits.
                if window.end.is_some_and(|end| x + Nanos(size as u64 * self.t_read_out.0) > end) {
                    self.groups.push_front(group);
                    break;
                }
                let mut group = group.into_iter();
                while let Some(p) = group.next() {
                    let Some(at) = self.pacer.start(x, window.end) else {
                        // The budget is spent: the rest waits for a later
                        // window (and fills the same relocation blocks then).
                        self.groups.push_front(std::iter::once(p).chain(group).collect());
                        return;
                    };
                    moved.insert(p.entry);
                    out.push(Relocation { entry: p.entry, content: p.content, unit: p.unit, at, aligned: true });
                    self.stats.issued += 1;
                    x = at + self.t_read_out;
                }
                continue;
            }
            if self.pending.is_empty() {
                if self.files.is_empty() {
                    break;
                }
                self.plan(ftl);
                continue;
            }
            let p = self.pending[0];
            let valid = ftl
                .entry_live(p.entry)
                .is_some_and(|e| e.content == p.content && ftl.geometry().unit_of(e.ppn) != p.unit);
            if !valid {
                self.pending.pop_front();
                self.stats.stale += 1;
                continue;
            }
            let Some(at) = self.pacer.start(x, window.end) else { break };
            self.pending.pop_front();
            out.push(Relocation { entry: p.entry, content: p.content, unit: p.unit, at, aligned: false });
            self.stats.issued += 1;
            x = at + self.t_read_out;
        }
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        let mut v = vec![
            ("reo_layouts", s.layouts as f64),
            ("reo_layouts_kept_original", s.kept_original as f64),
            ("reo_window_chunks", s.chunks as f64),
            ("reo_shared_chunks", s.shared_chunks as f64),
            ("reo_similarity_gain", s.similarity_gain),
            ("reo_read_rounds_before", s.rounds_before as f64),
            ("reo_read_rounds_after", s.rounds_after as f64),
            ("reo_relocations_planned", s.planned as f64),
            ("reo_relocations_issued", s.issued as f64),
            ("reo_relocations_stale", s.stale as f64),
            ("reo_relocations_left", self.pending.len() as f64),
            ("reo_files_dropped", s.files_dropped as f64),
        ];
        if self.cost == RelocationCost::Time {
            v.push(("reo_layouts_rejected_cost", s.rejected_cost as f64));
        }
        if self.align == RelocationAlign::Block {
            let held: usize =
                self.held.iter().map(VecDeque::len).sum::<usize>() + self.groups.iter().map(Vec::len).sum::<usize>();
            v.push(("reo_relocations_held", held as f64));
        }
        if self.layout == LayoutWhen::Program {
            v.push(("reo_pages_placed_by_layout", s.placed_by_layout as f64));
        }
        if self.iru {
            v.push(("reo_iru_updates", self.iru_updates as f64));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::reodedup::LayoutStats;

    #[test]
    fn bad_parameters_are_clear_errors() {
        let t = Nanos(1);
        let p = ReoDedupParams { window: 0, ..ReoDedupParams::default() };
        let e = ReoDedup::new("reodedup-csr", Algorithm::Csr, &p, t).err().unwrap().to_string();
        assert!(e.contains("window must be at least 1") && e.contains("[policy.reodedup-csr]"), "{e}");
        let p = ReoDedupParams { idle_ms: 0.0, ..ReoDedupParams::default() };
        let e = ReoDedup::new("reodedup-atr", Algorithm::Atr, &p, t).err().unwrap().to_string();
        assert!(e.contains("idle_ms"), "{e}");
        let mut cfg = Config::fad_table1();
        let mut tab = toml::Table::new();
        tab.insert("windw".into(), toml::Value::Integer(3));
        cfg.policy.insert("reodedup-atr".into(), toml::Value::Table(tab));
        let e = super::super::build("reodedup-atr", &cfg).err().unwrap().to_string();
        assert!(e.contains("windw"), "{e}");
        assert!(super::super::build("reodedup-csr", &cfg).is_ok());
        // `align = "block"` needs a spare block per plane beyond GC's: the
        // small device has 4 spare blocks per plane; `until-threshold` with
        // 2 free blocks needs all 4, `one-per-write` needs 2.
        let mut cfg = Config::small_for_tests(2, 2, 16, 2);
        assert_eq!(cfg.spare_blocks_per_plane(), 4);
        let mut tab = toml::Table::new();
        tab.insert("align".into(), toml::Value::String("block".into()));
        cfg.policy.insert("reodedup-csr".into(), toml::Value::Table(tab));
        assert!(super::super::build("reodedup-csr", &cfg).is_ok());
        cfg.gc.rule = crate::ftl::GcRule::UntilThreshold;
        cfg.validate().unwrap();
        let e = super::super::build("reodedup-csr", &cfg).err().unwrap().to_string();
        assert!(e.contains("relocation block") && e.contains("over_provisioning"), "{e}");
        assert!(super::super::build("reodedup-atr", &cfg).is_ok(), "align = \"page\" needs no extra block");
    }

    /// A run of four chunks on units 0, 0, 1, 2 of four: only the second
    /// moves, to unit 3 (the first unit after unit 0 that is free in the
    /// stripe and not held by the chunks ahead); the others stay.
    #[test]
    fn the_stripe_rule_moves_only_conflicting_chunks() {
        let mut ftl = Ftl::new(&Config::small_for_tests(2, 2, 16, 8).ftl_params());
        assert_eq!(ftl.geometry().unit_count(), 4);
        let mut order = Vec::new();
        for (k, unit) in [0, 0, 1, 2].into_iter().enumerate() {
            let (e, _, _) = ftl.program(unit, ContentId(k as u32), true).unwrap();
            ftl.map_pinned(Lpn(k as u32), e);
            order.push(u64::from(e));
        }
        let layout = Layout { order: order.clone(), runs: vec![0], stats: LayoutStats::default() };
        let mut out = VecDeque::new();
        let planned =
            |out: &VecDeque<Planned>| -> Vec<(u64, u32)> { out.iter().map(|p| (u64::from(p.entry), p.unit)).collect() };
        stripe_targets(&layout, &ftl, |_| true, &mut out);
        assert_eq!(planned(&out), vec![(order[1], 3)]);
        // The second chunk may not move (shared outside the window): the
        // first moves out of its way instead, to a unit no chunk ahead holds.
        out.clear();
        stripe_targets(&layout, &ftl, |c| c != order[1], &mut out);
        assert_eq!(planned(&out), vec![(order[0], 3)]);
        // Neither may move: the conflict stays.
        out.clear();
        stripe_targets(&layout, &ftl, |c| c != order[0] && c != order[1], &mut out);
        assert!(out.is_empty());
        // Two runs: the rule applies inside each run only.
        let layout = Layout { order: order.clone(), runs: vec![0, 1], stats: LayoutStats::default() };
        out.clear();
        stripe_targets(&layout, &ftl, |_| true, &mut out);
        assert!(out.is_empty());
    }

    /// The `time` cost model by hand, on the window of
    /// [`an_idle_window_relocates_the_window_by_hand`]: the plan saves 2
    /// read rounds with 2 moves. Reads take 1 µs, programs 9 µs: the moves
    /// cost 2 × (1 + 9) = 20 µs, the saving is 2 × 1 µs per read of the
    /// window, so it pays from 11 expected reads (10 only breaks even) and,
    /// at twice the write weight, from 21. `rounds` ignores the cost.
    #[test]
    fn the_time_cost_model_weighs_moves_against_saved_reads() {
        let issued = |cost: RelocationCost, expected_reads: f64, write_weight: f64| {
            let p = ReoDedupParams { window: 2, cost, expected_reads, write_weight, ..ReoDedupParams::default() };
            let mut r = ReoDedup::new("reodedup-test", Algorithm::Csr, &p, Nanos(1_000)).unwrap();
            r.t_program = Nanos(9_000);
            let mut ftl = Ftl::new(&Config::small_for_tests(2, 2, 16, 8).ftl_params());
            for (lpn, unit) in [(0u32, 0u32), (1, 0), (2, 1), (3, 1)] {
                let (e, _, _) = ftl.program(unit, ContentId(lpn), true).unwrap();
                ftl.map_pinned(Lpn(lpn), e);
            }
            let page = |l: u32| PageInfo { lpn: Lpn(l), content: ContentId(l), dup: Dup::None };
            let mut out = Vec::new();
            for file in [vec![page(0), page(1)], vec![page(2), page(3)]] {
                r.place(&file, &[], 4, &mut out);
            }
            let mut rel = Vec::new();
            r.idle(&ftl, IdleWindow { start: Nanos(0), end: Some(Nanos(1_000_000)) }, &mut rel);
            let rejected = r.stats().into_iter().find(|(n, _)| *n == "reo_layouts_rejected_cost").map(|(_, v)| v);
            (rel.len(), rejected)
        };
        assert_eq!(issued(RelocationCost::Rounds, 1.0, 1.0), (2, None));
        assert_eq!(issued(RelocationCost::Time, 1.0, 1.0), (0, Some(1.0)));
        assert_eq!(issued(RelocationCost::Time, 10.0, 1.0), (0, Some(1.0)));
        assert_eq!(issued(RelocationCost::Time, 11.0, 1.0), (2, Some(0.0)));
        assert_eq!(issued(RelocationCost::Time, 20.0, 2.0), (0, Some(1.0)));
        assert_eq!(issued(RelocationCost::Time, 21.0, 2.0), (2, Some(0.0)));
        let p = ReoDedupParams { expected_reads: -1.0, ..ReoDedupParams::default() };
        let e = ReoDedup::new("reodedup-csr", Algorithm::Csr, &p, Nanos(1)).err().unwrap().to_string();
        assert!(e.contains("expected_reads must be a non-negative number"), "{e}");
    }

    /// The window slides and an idle window lays out what it holds, by
    /// hand, on an FTL holding the window's pages (4 units). Window 2: a
    /// first file (page 9) is dropped. File A = pages 0, 1, both on unit 0;
    /// file B = pages 2, 3, both on unit 1. The layout's runs are A and B
    /// (they share no file). In A the second chunk conflicts with the first
    /// on unit 0 and moves to unit 1 (the first unit after 0 that is free
    /// in its stripe); in B the second moves from unit 1 to unit 2. Read
    /// rounds 2 + 2 before, 1 + 1 after: the plan is kept, and the idle
    /// window issues both relocations one read-out (1 µs here) apart. For
    /// both algorithms (each file's chunks are linked first either way).
    #[test]
    fn an_idle_window_relocates_the_window_by_hand() {
        for alg in [Algorithm::Csr, Algorithm::Atr] {
            let p = ReoDedupParams { window: 2, ..ReoDedupParams::default() };
            let mut r = ReoDedup::new("reodedup-test", alg, &p, Nanos(1_000)).unwrap();
            let mut ftl = Ftl::new(&Config::small_for_tests(2, 2, 16, 8).ftl_params());
            let mut entries = Vec::new();
            for (lpn, unit) in [(0u32, 0u32), (1, 0), (2, 1), (3, 1)] {
                let (e, _, _) = ftl.program(unit, ContentId(lpn), true).unwrap();
                ftl.map_pinned(Lpn(lpn), e);
                entries.push(e);
            }
            let mut out = Vec::new();
            let page = |l: u32| PageInfo { lpn: Lpn(l), content: ContentId(l), dup: Dup::None };
            for file in [vec![page(9)], vec![page(0), page(1)], vec![page(2), page(3)]] {
                r.place(&file, &[], 4, &mut out);
            }
            assert_eq!((r.files.len(), r.stats.files_dropped), (2, 1));
            let mut rel = Vec::new();
            r.idle(&ftl, IdleWindow { start: Nanos(0), end: Some(Nanos(1_000_000)) }, &mut rel);
            let got: Vec<(EntryId, u32, u32, u64)> =
                rel.iter().map(|x| (x.entry, x.content.0, x.unit, x.at.0)).collect();
            assert_eq!(got, vec![(entries[1], 1, 1, 0), (entries[3], 3, 2, 1_000)], "{alg:?}");
            let stat = |k: &str| r.stats().into_iter().find(|(n, _)| *n == k).map(|(_, v)| v);
            assert_eq!(stat("reo_read_rounds_before"), Some(4.0));
            assert_eq!(stat("reo_read_rounds_after"), Some(2.0));
            assert_eq!(stat("reo_relocations_issued"), Some(2.0));
            assert_eq!(stat("reo_layouts"), Some(1.0));
            assert!(!r.wants_idle());
        }
        let brute = ReoDedupParams { csr: CsrGreedy::BruteForce, ..ReoDedupParams::default() };
        let e = ReoDedup::new("reodedup-csr", Algorithm::Csr, &brute, Nanos(1)).err().unwrap().to_string();
        assert!(e.contains("csr = \"brute\""), "{e}");
    }

    /// IRU: an update goes to its old copy's unit, a new page round-robin,
    /// a duplicate is referenced; without IRU the policy is placement-free
    /// (`dedup`'s allocator) and asks for no layout.
    #[test]
    fn iru_programs_updates_on_their_old_unit() {
        let fu = ReoDedup::new("reodedup-csr", Algorithm::Csr, &ReoDedupParams::default(), Nanos(1)).unwrap();
        let caps = fu.capabilities();
        assert!(caps.placement_free && !caps.wants_layout);
        let p = ReoDedupParams { iru: true, ..ReoDedupParams::default() };
        let mut r = ReoDedup::new("reodedup-csr", Algorithm::Csr, &p, Nanos(1)).unwrap();
        let caps = r.capabilities();
        assert!(!caps.placement_free && caps.wants_layout);
        let page = |l: u32, dup: Dup| PageInfo { lpn: Lpn(l), content: ContentId(l), dup };
        let pages = [page(0, Dup::None), page(1, Dup::None), page(2, Dup::None), page(3, Dup::InFile { first: 0 })];
        let layout = [
            PageLayout { old_unit: Some(5), prev_unit: None, ..Default::default() },
            PageLayout { old_unit: None, prev_unit: Some(5), ..Default::default() },
            PageLayout { old_unit: Some(9), prev_unit: None, ..Default::default() },
            PageLayout { old_unit: Some(2), prev_unit: None, ..Default::default() },
        ];
        let mut out = Vec::new();
        r.place(&pages, &layout, 16, &mut out);
        assert_eq!(out[0], Action::Program { unit: 5 });
        assert!(matches!(out[1], Action::Program { .. }));
        assert_eq!(out[2], Action::Program { unit: 9 });
        assert_eq!(out[3], Action::Reference);
        assert!(r.stats().contains(&("reo_iru_updates", 2.0)));
        assert!(!fu.stats().iter().any(|(k, _)| *k == "reo_iru_updates"));
    }

    /// `align = "block"` by hand on 4 units of one plane with 2-page
    /// blocks (a group is 2 moves to one unit). Files A = pages 0, 1 and
    /// B = pages 2, 3 on units 0, 0 and 1, 1 plan one move to unit 1 and
    /// one to unit 2 (as in [`an_idle_window_relocates_the_window_by_hand`]):
    /// with `page` both go at once; with `block` neither (2 held). Files
    /// C = 4, 5 (unit 0) and D = 6, 7 (unit 1) add a second move to each
    /// unit: the two groups go, unit 1's first, each back to back; a window
    /// ending at 2.5 µs has room for one group (two 1 µs read-outs), the
    /// other waits for the next window.
    #[test]
    fn block_alignment_issues_whole_groups_by_hand() {
        let setup = |align: RelocationAlign| {
            let p = ReoDedupParams { window: 2, align, ..ReoDedupParams::default() };
            let r = ReoDedup::new("reodedup-test", Algorithm::Csr, &p, Nanos(1_000)).unwrap();
            let mut ftl = Ftl::new(&Config::small_for_tests(2, 2, 16, 2).ftl_params());
            let mut entries = Vec::new();
            for (lpn, unit) in [(0u32, 0u32), (1, 0), (2, 1), (3, 1), (4, 0), (5, 0), (6, 1), (7, 1)] {
                let (e, _, _) = ftl.program(unit, ContentId(lpn), true).unwrap();
                ftl.map_pinned(Lpn(lpn), e);
                entries.push(e);
            }
            (r, ftl, entries)
        };
        let page = |l: u32| PageInfo { lpn: Lpn(l), content: ContentId(l), dup: Dup::None };
        let mut out = Vec::new();
        let moved = |rel: &[Relocation]| -> Vec<(EntryId, u32, u64)> {
            rel.iter().map(|x| (x.entry, x.unit, x.at.0)).collect()
        };
        let open = IdleWindow { start: Nanos(0), end: Some(Nanos(1_000_000)) };
        let (mut r, ftl, e) = setup(RelocationAlign::Page);
        for file in [vec![page(0), page(1)], vec![page(2), page(3)]] {
            r.place(&file, &[], 4, &mut out);
        }
        let mut rel = Vec::new();
        r.idle(&ftl, open, &mut rel);
        assert_eq!(moved(&rel), vec![(e[1], 1, 0), (e[3], 2, 1_000)]);
        let (mut r, ftl, e) = setup(RelocationAlign::Block);
        for file in [vec![page(0), page(1)], vec![page(2), page(3)]] {
            r.place(&file, &[], 4, &mut out);
        }
        rel.clear();
        r.idle(&ftl, open, &mut rel);
        assert!(rel.is_empty());
        assert!(r.stats().contains(&("reo_relocations_held", 2.0)));
        assert!(!r.wants_idle());
        for file in [vec![page(4), page(5)], vec![page(6), page(7)]] {
            r.place(&file, &[], 4, &mut out);
        }
        r.idle(&ftl, IdleWindow { start: Nanos(0), end: Some(Nanos(2_500)) }, &mut rel);
        assert_eq!(moved(&rel), vec![(e[1], 1, 0), (e[5], 1, 1_000)]);
        assert!(r.wants_idle());
        rel.clear();
        r.idle(&ftl, IdleWindow { start: Nanos(10_000), end: Some(Nanos(12_000)) }, &mut rel);
        assert_eq!(moved(&rel), vec![(e[3], 2, 10_000), (e[7], 2, 11_000)]);
        assert!(r.stats().contains(&("reo_relocations_held", 0.0)));
        assert!(r.stats().contains(&("reo_relocations_issued", 4.0)));
    }

    /// `align = "block"`: a group whose move went stale is topped up from
    /// its unit's held moves, and one that cannot be is held again, so
    /// every group issued is whole (it fills its relocation blocks
    /// exactly, `Ftl::relocate_to_block`). 4 units of one plane, 2-page
    /// blocks (groups of 2). Files A, C, E (pages 0-1, 4-5, 8-9, all on
    /// unit 0) each plan one move to unit 1: group [1, 5], 9 held. A window
    /// too short for a group issues nothing; page 5 is then trimmed (its
    /// move stale), and the next window issues [1, 9]. Files G, H (10-11,
    /// 12-13) make group [11, 13] in a window too short for it; 13 is
    /// trimmed, nothing is left to top the group up: 11 is held again,
    /// nothing issued.
    #[test]
    fn block_alignment_tops_up_groups_with_stale_moves_by_hand() {
        let p = ReoDedupParams { window: 4, align: RelocationAlign::Block, ..ReoDedupParams::default() };
        let mut r = ReoDedup::new("reodedup-test", Algorithm::Csr, &p, Nanos(1_000)).unwrap();
        let mut ftl = Ftl::new(&Config::small_for_tests(2, 2, 16, 2).ftl_params());
        let mut e = HashMap::new();
        for lpn in [0u32, 1, 4, 5, 8, 9, 10, 11, 12, 13] {
            let (x, _, _) = ftl.program(0, ContentId(lpn), true).unwrap();
            ftl.map_pinned(Lpn(lpn), x);
            e.insert(lpn, x);
        }
        let page = |l: u32| PageInfo { lpn: Lpn(l), content: ContentId(l), dup: Dup::None };
        let mut out = Vec::new();
        for f in [0, 4, 8] {
            r.place(&[page(f), page(f + 1)], &[], 4, &mut out);
        }
        let mut rel = Vec::new();
        r.idle(&ftl, IdleWindow { start: Nanos(0), end: Some(Nanos(1_500)) }, &mut rel);
        assert!(rel.is_empty());
        assert!(r.stats().contains(&("reo_relocations_held", 3.0)));
        ftl.unmap(Lpn(5));
        r.idle(&ftl, IdleWindow { start: Nanos(0), end: None }, &mut rel);
        let moved: Vec<(EntryId, u32, bool)> = rel.iter().map(|x| (x.entry, x.unit, x.aligned)).collect();
        assert_eq!(moved, vec![(e[&1], 1, true), (e[&9], 1, true)]);
        assert!(r.stats().contains(&("reo_relocations_stale", 1.0)));
        assert!(r.stats().contains(&("reo_relocations_held", 0.0)));
        for f in [10, 12] {
            r.place(&[page(f), page(f + 1)], &[], 4, &mut out);
        }
        r.idle(&ftl, IdleWindow { start: Nanos(0), end: Some(Nanos(1_500)) }, &mut rel);
        assert!(r.stats().contains(&("reo_relocations_held", 2.0)));
        ftl.unmap(Lpn(13));
        rel.clear();
        r.idle(&ftl, IdleWindow { start: Nanos(0), end: None }, &mut rel);
        assert!(rel.is_empty());
        assert!(r.stats().contains(&("reo_relocations_stale", 2.0)));
        assert!(r.stats().contains(&("reo_relocations_held", 1.0)));
        assert!(r.stats().contains(&("reo_relocations_issued", 2.0)));
    }

    /// `layout = "program"` by hand (4 units): a file of a duplicate X on
    /// unit 0 and two new pages. The layout (one run X, N1, N2) places the
    /// new pages on units 1 and 2, so the file reads in one round and
    /// nothing is left to relocate (no idle work, no extra write). With
    /// the default `relocate` the policy is placement-free (the device's
    /// allocator places the pages) and lays the file out at idle time.
    /// A second file sharing N2 (now on unit 2) with two new pages: the
    /// window (both files, one run A: X N1 N2, B: N2 M1 M2 in arrival order)
    /// places M1, M2 after N2's unit, on 3 and 0 (unit 0 is free again:
    /// the stripe of M2 is N1, N2, M1 on 1, 2, 3).
    #[test]
    fn program_layout_places_new_pages_by_hand() {
        let p = ReoDedupParams { window: 2, layout: LayoutWhen::Program, ..ReoDedupParams::default() };
        let mut r = ReoDedup::new("reodedup-test", Algorithm::Csr, &p, Nanos(1)).unwrap();
        let caps = r.capabilities();
        assert!(!caps.placement_free);
        let x = Dup::Existing { entry: 7, unit: 0, refs: 1, ppn: crate::units::Ppn(0) };
        let pg = |l: u32, c: u32, dup: Dup| PageInfo { lpn: Lpn(l), content: ContentId(c), dup };
        let mut out = Vec::new();
        r.place(&[pg(0, 100, x), pg(1, 101, Dup::None), pg(2, 102, Dup::None)], &[], 4, &mut out);
        assert_eq!(out, vec![Action::Reference, Action::Program { unit: 1 }, Action::Program { unit: 2 }]);
        assert!(!r.wants_idle());
        let n2 = Dup::Existing { entry: 9, unit: 2, refs: 1, ppn: crate::units::Ppn(0) };
        out.clear();
        r.place(&[pg(3, 102, n2), pg(4, 103, Dup::None), pg(5, 104, Dup::None)], &[], 4, &mut out);
        assert_eq!(out, vec![Action::Reference, Action::Program { unit: 3 }, Action::Program { unit: 0 }]);
        assert!(r.stats().contains(&("reo_pages_placed_by_layout", 4.0)));
        assert!(!r.wants_idle());
        let relocate = ReoDedupParams { window: 2, ..ReoDedupParams::default() };
        let mut r = ReoDedup::new("reodedup-test", Algorithm::Csr, &relocate, Nanos(1)).unwrap();
        assert!(r.capabilities().placement_free);
        r.place(&[pg(0, 100, x), pg(1, 101, Dup::None), pg(2, 102, Dup::None)], &[], 4, &mut out);
        assert!(r.wants_idle());
        for bad in [
            ReoDedupParams { layout: LayoutWhen::Program, iru: true, ..ReoDedupParams::default() },
            ReoDedupParams { layout: LayoutWhen::Program, align: RelocationAlign::Block, ..ReoDedupParams::default() },
        ] {
            let e = ReoDedup::new("reodedup-csr", Algorithm::Csr, &bad, Nanos(1)).err().unwrap().to_string();
            assert!(e.contains("layout = \"program\"") && e.contains("set one of them"), "{e}");
        }
    }
}
