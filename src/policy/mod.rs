//! Placement and rewrite policies: the policy *decides*, the FTL *executes*.
//!
//! For every host write request (a "file" in FAD's sense: block traces have
//! no file boundaries, so one write request is one file, FAD §III-B) the
//! simulator fingerprints the pages, looks each one up in the FTL's
//! fingerprint index, and hands the policy a [`PageInfo`] per page. The
//! policy returns one [`Action`] per page: reference the existing copy, or
//! program a new copy on a chosen parallel unit (for a duplicate, that is a
//! *rewrite*: a private copy for this file only, other sharers keep the old
//! page, FAD §III-D). The simulator then carries the actions out in page
//! order, charging flash time.
//!
//! Adding a policy: write one file with a type implementing [`Policy`], and
//! add one line to [`REGISTRY`].

mod dedup;
mod diehint;
pub mod fad;
mod fcrc;
mod har;
mod native;
mod reodedup;

pub use dedup::Dedup;
pub use diehint::{DieHint, DieHintParams, HintSource};
pub use fad::{Fad, FadModules, GcHintMode};
pub use fcrc::{Fcrc, FcrcMode, FcrcParams};
pub use har::{Har, HarParams};
pub use native::Native;
pub use reodedup::{LayoutWhen, RelocationAlign, RelocationCost, ReoDedup, ReoDedupParams};

use crate::background::IdleWindow;
use crate::ftl::{EntryId, Ftl};
use crate::registry::{Entry, Registry};
use crate::reodedup::Algorithm;
use crate::units::{ContentId, Lpn, Nanos, Ppn};
use serde::de::DeserializeOwned;
use thiserror::Error;

/// What the fingerprint lookup found for one page of the file being written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dup {
    /// New content (or a policy that does not deduplicate).
    None,
    /// The content already has a physical copy (the index's primary copy).
    Existing {
        entry: EntryId,
        /// Parallel unit (chip by default) holding the copy.
        unit: u32,
        /// Its reference count: FAD's heat H(b) (§III-D).
        refs: u32,
        /// Physical page of the copy (page-group / container identity for
        /// HAR and FCRC: group = ppn / G).
        ppn: Ppn,
    },
    /// Same content as the earlier page `first` of this very file.
    InFile { first: u32 },
    /// The content's copy is written but waits to be placed (`allocation =
    /// "dynamic"`: SSDsim's allocation chooses its plane only when a
    /// channel serves it), so it has no unit or page group yet. The
    /// placement-free policies that see it (`dedup`, `har`, `fcrc`)
    /// reference it like an in-file repeat, whose copy is also being
    /// written now; `fcrc` may rewrite it by its heat as any duplicate.
    Waiting {
        entry: EntryId,
        /// Its reference count: FAD's heat H(b) (§III-D).
        refs: u32,
    },
}

/// One page of a file write, as the policy sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PageInfo {
    pub lpn: Lpn,
    pub content: ContentId,
    pub dup: Dup,
}

/// The policy's decision for one page.
/// Where a written page's logical neighbourhood lives before the write,
/// for placement hints (FAST'24's die-allocation hint, [`DieHint`]): the
/// parallel unit of the page's current copy (an overwrite) and of the
/// logical page before it (an append continues it). Computed by the
/// simulator only for policies whose [`Capabilities::wants_layout`] is
/// true.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PageLayout {
    pub old_unit: Option<u32>,
    pub prev_unit: Option<u32>,
    /// The trace's explicit hint for this write (the same for each of its
    /// pages).
    pub hint: ExplicitHint,
}

/// A write's explicit hint from the trace ([`crate::workload::Hint`]), as
/// a policy sees it in its [`PageLayout`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum ExplicitHint {
    /// The workload carries no explicit hints at all.
    #[default]
    Absent,
    /// The workload carries hints, but this write has none.
    Unhinted,
    /// The write appends to a file whose previous page lives on
    /// `after_unit` now (`None`: that page is not mapped).
    Append { after_unit: Option<u32> },
    /// The write overwrites in place.
    Overwrite,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Map the LPN to the duplicate's copy (only valid when `dup != None`).
    Reference,
    /// Program a new physical copy on parallel unit `unit`.
    Program { unit: u32 },
}

/// A policy's GC hint (FAD §III-G), part of a write's plan
/// ([`Policy::place`]), followed before the timed write's programs. The policy only names a unit; the FTL runs the collection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GcHint {
    /// Collections triggered by this write's programs (a plane below
    /// `gc.min_free_blocks`) run on `unit` instead when its fullest plane is
    /// less than `margin` blocks above the threshold and has an invalid
    /// page, while the triggering plane is at most `defer` blocks below the
    /// threshold ([`crate::ftl::GcPreference`]). No extra GC.
    Prefer { unit: u32, defer: u32, margin: u32 },
    /// After the write, one extra greedy victim in `unit`'s fullest plane
    /// if it is within `margin` blocks above the threshold
    /// ([`crate::ftl::Ftl::soft_collect`]): early GC, added to the forced GC.
    Early { unit: u32, margin: u32 },
}

/// What a policy is, read once by the simulator when it is built (a
/// policy's answers do not change during a run).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Whether duplicates are looked up at all (false only for `native`
    /// and `die-hint`). Deduplicating policies pay the fingerprint time per
    /// written page. A policy that does not deduplicate runs on a flat
    /// map ([`crate::ftl::Ftl::map_flat`]: no [`crate::ftl::Entry`] per
    /// page), so it cannot relocate copies by entry ([`Policy::idle`]):
    /// such a policy says true.
    pub deduplicates: bool,
    /// Whether the units of this policy's programs are only a cyclic
    /// pointer with no meaning of their own (Native, Deduplication, HAR,
    /// FCRC). The simulator's `allocation` then places each such page
    /// itself (`dynamic`, the default: SSDsim's dynamic allocation when a
    /// channel serves it; `least-loaded`; `static:ORDER`); only `cyclic`
    /// keeps this pointer. Policies whose placement is the point (FAD) say
    /// false.
    pub placement_free: bool,
    /// Whether the policy wants [`PageLayout`]s (the simulator then computes
    /// them for every write and passes them to [`Policy::place`]; else the
    /// layout slice is empty).
    pub wants_layout: bool,
    /// How long the device must have seen no host arrival to count as idle
    /// for this policy's background work ([`Policy::idle`]).
    pub idle_threshold: Nanos,
}

impl Default for Capabilities {
    /// A deduplicating policy that places its own pages, wants no layout,
    /// idle after 10 ms.
    fn default() -> Capabilities {
        Capabilities {
            deduplicates: true,
            placement_free: false,
            wants_layout: false,
            idle_threshold: Nanos::from_ms(10),
        }
    }
}

/// A placement / rewrite policy. See the module doc.
///
/// The policy decides and the simulator executes, as fjall's compaction
/// strategies return a choice that a worker carries out: [`Policy::place`]
/// returns the write's plan (one [`Action`] per page, and the GC hint) and
/// [`Policy::idle`] the relocations of an idle window.
pub trait Policy: Send {
    /// Registry name (e.g. `fad-rpo`).
    fn name(&self) -> &'static str;

    /// What the policy is ([`Capabilities`]), asked once when the
    /// simulation is built. Default: [`Capabilities::default`].
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Decides one file write, its plan: pushes exactly one [`Action`] per
    /// page of `file` onto `out` (cleared by the caller) and returns its GC
    /// hint (FAD §III-G; `None`: no hint; the simulator follows it in the
    /// timed replay only). `layout` holds each page's [`PageLayout`] when
    /// [`Capabilities::wants_layout`], else it is empty. `units` is the
    /// number of parallel units (chips by default).
    fn place(&mut self, file: &[PageInfo], layout: &[PageLayout], units: u32, out: &mut Vec<Action>) -> Option<GcHint>;

    /// Called once when preconditioning is over, before the first timed
    /// request. Statistics ([`Policy::stats`]) count from here on, so they
    /// describe the timed writes only whether or not preconditioning went
    /// through [`Policy::place`] (`precondition.placement = "policy"`);
    /// placement state (pointers, lists, histories) carries over, as the
    /// device's layout does. Default: nothing.
    fn begin_replay(&mut self) {}

    /// Policy-specific statistics for the run report (UDF/NUDF counts, WSTL
    /// high-water mark, ...). Keys become `policy.<key>` in CSV output.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// Told once per collection that followed the GC hint of
    /// [`Policy::place`] (ran on the hinted unit), for the policy's
    /// statistics. Default: nothing.
    fn gc_hint_followed(&mut self) {}

    /// Whether the policy has background work for the next idle window
    /// (then the simulator offers it the gap between two host arrivals
    /// longer than [`Capabilities::idle_threshold`], [`crate::background`]).
    /// Asked before every window: the answer follows the policy's state.
    /// Default: never.
    fn wants_idle(&self) -> bool {
        false
    }

    /// Background work for one idle window: relocations of live copies,
    /// each with the time its read reaches the chip (inside the window,
    /// non-decreasing; pace them with [`crate::background::Pacer`]). The
    /// policy sees the FTL read-only; the simulator executes
    /// ([`Relocation`]). Default: nothing.
    fn idle(&mut self, _ftl: &Ftl, _window: IdleWindow, _out: &mut Vec<Relocation>) {}
}

/// Move the live copy `entry` (holding `content`) to parallel unit `unit`
/// (ReoDedup's relocation inside the SSD, [`crate::ftl::Ftl::relocate`]):
/// a read of the old page on its chip reaching it at `at`, then a program
/// of the new page on the target unit's chip when the data is out. Every
/// logical page sharing the copy follows (one entry update). The simulator
/// skips a relocation whose entry no longer holds `content` or already
/// lies in `unit`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Relocation {
    pub entry: EntryId,
    pub content: ContentId,
    pub unit: u32,
    pub at: Nanos,
    /// Program the new page into the target unit's relocation block
    /// ([`crate::ftl::Ftl::relocate_to_block`]: relocated pages only,
    /// filled one erase block after the other) instead of the host write
    /// frontier ([`crate::ftl::Ftl::relocate`]).
    pub aligned: bool,
}

/// The cyclic allocation pointer over parallel units (SSDsim's dynamic
/// round-robin, which FAD's *next* pointer extends, §III-E).
#[derive(Clone, Debug, Default)]
pub struct Cyclic {
    next: u32,
    /// Pages a unit takes in a row (`alloc_pages`; 0 and 1 both mean one).
    run: u32,
    /// Pages the designated unit has taken in this run.
    taken: u32,
}

impl Cyclic {
    /// A pointer that gives each unit `run` pages in a row before moving
    /// on (`alloc_pages`; FAST'24 slides, Fig. 8(a): 2 pages per die).
    pub fn with_run(run: u32) -> Cyclic {
        Cyclic { run, ..Cyclic::default() }
    }
    /// The unit the pointer designates.
    #[inline]
    pub fn peek(&self, units: u32) -> u32 {
        self.next % units
    }
    /// Advances past the designated unit (after `run` pages).
    #[inline]
    pub fn advance(&mut self, units: u32) {
        self.taken += 1;
        if self.taken >= self.run {
            self.taken = 0;
            self.next = (self.next + 1) % units;
        }
    }
    /// Returns the designated unit and advances.
    #[inline]
    pub fn take(&mut self, units: u32) -> u32 {
        let u = self.peek(units);
        self.advance(units);
        u
    }
}

#[cfg(test)]
mod cyclic_tests {
    use super::Cyclic;

    /// `alloc_pages = 2`: each unit takes two pages in a row; 0 and 1 are
    /// one page (the default pointer).
    #[test]
    fn cyclic_gives_each_unit_its_run() {
        let mut c = Cyclic::with_run(2);
        assert_eq!((0..7).map(|_| c.take(3)).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2, 0]);
        let (mut a, mut b) = (Cyclic::default(), Cyclic::with_run(1));
        assert_eq!((0..4).map(|_| (a.take(3), b.take(3))).collect::<Vec<_>>(), [(0, 0), (1, 1), (2, 2), (0, 0)]);
    }
}

/// Errors building a policy.
#[derive(Debug, Error)]
pub enum PolicyError {
    #[error("unknown policy '{name}'; available: {available}")]
    Unknown { name: String, available: String },
    #[error(
        "invalid parameters for policy '{policy}' ([policy.{policy}] / --set policy.{policy}.KEY=VALUE): {reason}"
    )]
    Params { policy: String, reason: String },
}

/// What building a policy needs from the configuration, resolved by
/// `Config::policy_setup` (the policies never see `Config`).
#[derive(Copy, Clone, Debug)]
pub struct PolicySetup<'a> {
    /// Every `[policy.<table>]` parameter table.
    pub tables: &'a toml::Table,
    /// `geometry.pages_per_block` (HAR's and FCRC's page groups).
    pub pages_per_block: u32,
    /// One flash page read: `timing.read` plus one page over the bus.
    pub read_time: Nanos,
    /// One flash page program: `timing.program` plus one page over the bus.
    pub program_time: Nanos,
    /// `alloc_pages`: pages a unit takes in a row from the cyclic pointer.
    pub alloc_pages: u32,
    /// Spare blocks per plane beyond those GC needs (`Config::gc_spare_need`):
    /// room for a second open block per plane (a relocation block).
    pub spare_blocks_over_gc: u64,
}

/// What a registered policy's constructor gets: the one parameter table it
/// declares in [`REGISTRY`] (so the registry says, as data, which table
/// each policy reads) and the device values policies use.
#[derive(Copy, Clone, Debug)]
pub struct PolicyContext<'a> {
    /// The declared table's name (`fad` for every FAD variant), if any.
    pub table_name: Option<&'static str>,
    /// `[policy.<table_name>]`, if the configuration sets it.
    pub table: Option<&'a toml::Value>,
    /// `geometry.pages_per_block`.
    pub pages_per_block: u32,
    /// `timing.read` plus one page transfer.
    pub read_time: Nanos,
    /// `timing.program` plus one page transfer.
    pub program_time: Nanos,
    /// `alloc_pages` ([`Cyclic::with_run`]).
    pub alloc_pages: u32,
    /// Spare blocks per plane beyond those GC needs ([`PolicySetup`]).
    pub spare_blocks_over_gc: u64,
}

/// Constructor signature of a registered policy.
pub type Builder = fn(&PolicyContext) -> Result<Box<dyn Policy>, PolicyError>;

/// What a policy's [`REGISTRY`] line holds beside its name and description.
#[derive(Copy, Clone, Debug)]
pub struct Registered {
    /// The `[policy.<table>]` it reads (`None`: no parameters).
    pub table: Option<&'static str>,
    pub build: Builder,
}

/// One [`REGISTRY`] line: name, one-line description, the
/// `[policy.<table>]` it reads (`None`: no parameters), constructor.
const fn line(
    name: &'static str,
    about: &'static str,
    table: Option<&'static str>,
    build: Builder,
) -> Entry<Registered> {
    Entry { name, about, item: Registered { table, build } }
}

/// Every policy, one line each ([`line`]), in the order `dedupsim
/// policies` lists them.
pub const REGISTRY: Registry<Registered> = Registry::new("policy", &[
    line("native", "no deduplication, round-robin allocation (FAD's Native)", None, |c| Ok(Box::new(Native::new(c.alloc_pages)))),
    line("dedup", "CAFTL-like inline deduplication, round-robin allocation (FAD's Deduplication)", None, |c| {
        Ok(Box::new(Dedup::new(c.alloc_pages)))
    }),
    line("har", "HAR history-aware rewriting of sparse page groups (Fu et al. TPDS'16, FAD's HAR baseline)", Some("har"), Har::build),
    line(
        "fcrc",
        "FCRC rewriting: dedup-rate cap (mode fad, FAD's baseline) or CNRC budget (mode original, Cao et al. FAST'19)", Some("fcrc"),
        Fcrc::build,
    ),
    line("die-hint", "FAST'24 die-allocation hint (Jun et al.): append -> the die after the previous page's, overwrite -> the old version's die; no dedup", Some("die-hint"), |c| DieHint::build(false, c)),
    line("die-hint-dedup", "die-hint placement of new pages on top of CAFTL-like deduplication", Some("die-hint"), |c| DieHint::build(true, c)),
    line("fad-rpo", "FAD ablation: read-parallel placement only (RDLT skip rule)", Some("fad"), |c| {
        Fad::build("fad-rpo", FadModules { wstl: false, rewrite: false, gc_hint: false }, c)
    }),
    line("fad-rwpo", "FAD ablation: read- and write-parallel placement (+ WSTL backfill)", Some("fad"), |c| {
        Fad::build("fad-rwpo", FadModules { wstl: true, rewrite: false, gc_hint: false }, c)
    }),
    line("fad-rwpo-rewrite", "FAD ablation: + elastic-threshold duplicate rewriting", Some("fad"), |c| {
        Fad::build("fad-rwpo-rewrite", FadModules { wstl: true, rewrite: true, gc_hint: false }, c)
    }),
    line("fad", "FAD, the full system (+ WSTL-guided GC hint), Lin et al. Section III", Some("fad"), |c| {
        Fad::build("fad", FadModules { wstl: true, rewrite: true, gc_hint: true }, c)
    }),
    line("reodedup-csr", "ReoDedup (Wang et al.) CSR relocation at idle time: dedup, then the window's chunks laid out by cosine similarity over chips", Some("reodedup-csr"), |c| ReoDedup::build(Algorithm::Csr, c)),
    line("reodedup-atr", "ReoDedup (Wang et al.) ATR relocation at idle time: dedup, then the window's chunks laid out by the file-chunk adjacency table over chips", Some("reodedup-atr"), |c| ReoDedup::build(Algorithm::Atr, c)),
]);

impl<'a> From<&PolicySetup<'a>> for PolicySetup<'a> {
    fn from(s: &PolicySetup<'a>) -> PolicySetup<'a> {
        *s
    }
}

/// Builds a policy by registry name, giving it its declared table. `setup`
/// is a [`PolicySetup`] or anything that resolves into one (a `&Config`:
/// the configuration layer provides the conversion, this module does not
/// know it).
pub fn build<'a>(name: &str, setup: impl Into<PolicySetup<'a>>) -> Result<Box<dyn Policy>, PolicyError> {
    let setup = setup.into();
    let Some(e) = REGISTRY.get(name) else {
        return Err(PolicyError::Unknown { name: name.to_string(), available: REGISTRY.available() });
    };
    let table_name = e.item.table;
    (e.item.build)(&PolicyContext {
        table_name,
        table: table_name.and_then(|t| setup.tables.get(t)),
        pages_per_block: setup.pages_per_block,
        read_time: setup.read_time,
        program_time: setup.program_time,
        alloc_pages: setup.alloc_pages,
        spare_blocks_over_gc: setup.spare_blocks_over_gc,
    })
}

/// Names of all registered policies, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.names()
}

/// Parses a policy's declared parameter table into `P` (missing table =
/// all defaults). Use `#[serde(default, deny_unknown_fields)]`.
pub fn params<P: DeserializeOwned + Default>(ctx: &PolicyContext) -> Result<P, PolicyError> {
    params_with_units(ctx, &[])
}

/// [`params`] for a table with unit-bearing keys (`idle = "1ms"`), which
/// are first rewritten into their bare-number aliases (`idle_ms`) that `P`
/// reads ([`crate::params::unit_keys`]).
pub fn params_with_units<P: DeserializeOwned + Default>(
    ctx: &PolicyContext,
    units: &[crate::params::unit_keys::UnitKey],
) -> Result<P, PolicyError> {
    let table = ctx.table_name.unwrap_or_default();
    let bad = |reason: String| PolicyError::Params { policy: table.to_string(), reason };
    match ctx.table {
        None => Ok(P::default()),
        Some(v) => crate::params::unit_keys::resolve(v, units)
            .map_err(bad)?
            .try_into()
            .map_err(|e: toml::de::Error| bad(e.to_string())),
    }
}

/// Parses `[policy.<table>]` of `tables` into `P` outside a build (e.g.
/// FAD's ρ for the reproduction's sweep).
pub fn params_in<P: DeserializeOwned + Default>(tables: &toml::Table, table: &'static str) -> Result<P, PolicyError> {
    params(&PolicyContext {
        table_name: Some(table),
        table: tables.get(table),
        pages_per_block: 0,
        read_time: Nanos::ZERO,
        program_time: Nanos::ZERO,
        alloc_pages: 1,
        spare_blocks_over_gc: 0,
    })
}
