//! Dedup engines: how duplicates are *found* and what finding them costs,
//! beside the placement policy that decides where pages go.
//!
//! A write's pages go to the engine first ([`Engine::lookup`]): for each
//! page it says whether the page is a duplicate and of which live physical
//! copy ([`Verdict`]), whether the page was fingerprinted (it then takes the
//! engine's hash time on the hash engines, [`Engine::hash_time`]), and which
//! flash operations finding it needs ([`EngineIo`]: verify reads of a
//! candidate's page, reads and programs of metadata pages). The policy then
//! decides per page (reference the copy or program a new one), the FTL
//! executes, and the engine learns the outcome ([`Engine::commit`]). Engines
//! that work in the background ([`Engine::idle`]) are offered the device's
//! idle windows ([`crate::background`]) and return flash operations and
//! remaps ([`Background`]) that compete with host I/O on the chips.
//!
//! Every cost an engine charges is a real operation on the simulated chips:
//! the simulator schedules it on the chip of the page (a data page's own
//! chip; a metadata page's chip by [`metadata_chip`]) and counts it
//! separately in the report (`engine_*` statistics). Metadata pages live in
//! a reserved metadata area striped over all chips: they take chip and bus
//! time but no data-area space (docs/engines.md, "Metadata on flash").
//!
//! Engines never mutate the FTL: they see it read-only and return verdicts,
//! operations and remaps, which the simulator executes ("engines find, the
//! FTL executes", like policies).
//!
//! Adding an engine = one file + one [`REGISTRY`] line.

mod caftl;
mod caftl_sampled;
mod dramverify;
pub use crate::fastmap;
pub mod fptable;
pub mod index;
mod lightdedup;
mod smartdedup;

pub use caftl::Caftl;
pub use caftl_sampled::CaftlSampled;
pub use dramverify::{DramVerify, DramVerifyParams, DRAM_FP_BYTES};
pub use lightdedup::{
    Access, Allocator, Hint, Layout, LightDedup, LightDedupParams, Prefetch, Target, Why, BEFORE, ENTRY_BYTES,
    IDEAL_BYTES, INDEX_BYTES,
};
pub use smartdedup::{Eviction, Index, SmartDedup, SmartDedupParams, BTREE_FP_BYTES};

use crate::ftl::{EntryId, Ftl};
use crate::params::unit_keys::{self, UnitKey};
use crate::registry::{Entry, Registry};
use crate::units::{ContentId, Lpn, Nanos, Ppn};
use serde::de::DeserializeOwned;
use thiserror::Error;

/// The default engine: today's CAFTL-like unbounded in-DRAM index.
pub const DEFAULT: &str = "caftl";

/// One page of a write, as the engine sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WritePage {
    pub lpn: Lpn,
    /// The page's bytes, as an identity: equal ids are equal bytes (what a
    /// verify read compares).
    pub content: ContentId,
    /// The page's fingerprint, the key of the engine's index: equal bytes
    /// give equal fingerprints, and different bytes normally different
    /// ones. In a trace replay it is the content id itself (a perfect
    /// hash: no collision); under `dedupsim serve` it is the hash of the
    /// page's real bytes (`--hash`), so a weak hash makes real collisions,
    /// which a verifying engine catches and a trusting one counts as false
    /// matches (docs/serve.md, "Hash collisions").
    pub fingerprint: u64,
    /// A repeat of an earlier page of the same write: the simulator maps it
    /// to that page's copy, and the engine's verdict on it is ignored.
    pub repeat: bool,
}

/// What the engine found for one page.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No duplicate found (or not looked for): the page is new to the engine.
    Unique,
    /// A duplicate of this live copy.
    Duplicate(EntryId),
}

/// A flash operation an engine asks for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FlashOp {
    /// Read of a data page (a verify read, or reading a page to fingerprint
    /// it out of line).
    DataRead(Ppn),
    /// Read of a metadata page (numbered in the engine's metadata area).
    MetaRead(u64),
    /// Program of a metadata page.
    MetaProgram(u64),
}

/// When a write-path operation reaches its chip.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum When {
    /// At the request's arrival (a speculative read issued before hashing).
    Arrival,
    /// When page `k`'s fingerprint is known.
    Hashed(u32),
}

/// A write-path flash operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WriteOp {
    pub when: When,
    pub op: FlashOp,
    /// The request completes only when this operation has (a read the
    /// dedup decision waits for); otherwise it runs behind the request
    /// (a buffered metadata write-back).
    pub gates: bool,
}

/// What [`Engine::lookup`] and [`Engine::commit`] return for one write.
#[derive(Clone, Debug, Default)]
pub struct EngineIo {
    /// One verdict per page (lookup only).
    pub verdicts: Vec<Verdict>,
    /// Per page: fingerprinted on the write path (takes the hash time).
    pub hashed: Vec<bool>,
    /// Flash operations.
    pub ops: Vec<WriteOp>,
    /// The write's stream ([`crate::workload::Request::stream`]), set by
    /// the simulator before [`Engine::lookup`].
    pub stream: u16,
}

impl EngineIo {
    /// Clears for a write of `pages` pages.
    pub fn reset(&mut self, pages: usize) {
        self.verdicts.clear();
        self.hashed.clear();
        self.ops.clear();
        self.verdicts.reserve(pages);
        self.hashed.reserve(pages);
    }
}

pub use crate::background::IdleWindow;

/// Remap `lpn` from copy `from` to copy `to` (same content): out-of-line
/// deduplication. The simulator skips it if `lpn` no longer maps to `from`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Remap {
    pub lpn: Lpn,
    pub from: EntryId,
    pub to: EntryId,
}

/// Background work returned by [`Engine::idle`].
#[derive(Clone, Debug, Default)]
pub struct Background {
    /// Flash operations with the time each reaches its chip (inside the
    /// window, non-decreasing).
    pub ops: Vec<(Nanos, FlashOp)>,
    /// Remaps, executed in order at the window's start (mapping state
    /// changes at processing time; only timing is deferred).
    pub remaps: Vec<Remap>,
}

/// A dedup engine. See the module doc.
pub trait Engine: Send {
    /// Registry name.
    fn name(&self) -> &'static str;

    /// Whether the engine is the FTL's own fingerprint index (CAFTL): the
    /// simulator then looks contents up in [`Ftl::find_duplicate`] directly
    /// (the same answers as [`Engine::lookup`], without the indirection) and
    /// indexes new copies in the FTL.
    fn uses_ftl_index(&self) -> bool {
        false
    }

    /// Per-page fingerprint time; `None` = `dedup.fingerprint`.
    fn hash_time(&self) -> Option<Nanos> {
        None
    }

    /// Finds the duplicates of one write's pages (`io` was reset).
    fn lookup(&mut self, ftl: &Ftl, pages: &[WritePage], io: &mut EngineIo);

    /// The write was executed: page k maps to `entries[k]`, newly programmed
    /// when `programmed[k]`. May add (non-gating or gating) operations to
    /// `io.ops`.
    fn commit(
        &mut self,
        _ftl: &Ftl,
        _pages: &[WritePage],
        _entries: &[EntryId],
        _programmed: &[bool],
        _io: &mut EngineIo,
    ) {
    }

    /// A copy of `content` (fingerprint `fingerprint`, as in [`WritePage`])
    /// was written before the replay (preconditioning).
    fn preload(&mut self, _content: ContentId, _fingerprint: u64, _entry: EntryId) {}

    /// Copy `entry` of `content` (fingerprint `fingerprint`) was freed (its
    /// last sharer unmapped).
    fn forget(&mut self, _content: ContentId, _fingerprint: u64, _entry: EntryId) {}

    /// Hints the CPU to fetch what [`Engine::forget`] of this copy will
    /// touch: the simulator calls it for every copy freed in one batch at
    /// `step` 0, then 1, before forgetting them, so their cache misses
    /// overlap. Speed only: it must not change any state or result.
    fn prefetch_forget(&self, _fingerprint: u64, _step: u32) {}

    /// Hints the CPU to fetch what looking up `fingerprint` will touch: the
    /// simulator calls it for the pages of upcoming writes, at `step` 0, 1
    /// and 2, each a few requests closer to the write than the previous,
    /// so step k may read what step k - 1 fetched. Speed only: it must not
    /// change any state or result.
    fn prefetch(&self, _ftl: &Ftl, _fingerprint: u64, _step: u32) {}

    /// Whether the engine keeps reference counts of its own and must see
    /// every dropped reference that leaves a copy live ([`Engine::dereferenced`]).
    fn wants_derefs(&self) -> bool {
        false
    }

    /// An LPN stopped referencing copy `entry` of `content` (overwritten or
    /// trimmed), and the copy is still live (other sharers). Called before
    /// the next lookup, with the frees ([`Engine::forget`]).
    fn dereferenced(&mut self, _content: ContentId, _fingerprint: u64, _entry: EntryId) {}

    /// Whether the engine works at idle time (then the simulator offers it
    /// idle windows of at least [`Engine::idle_threshold`]).
    fn wants_idle(&self) -> bool {
        false
    }

    /// How long the device must have seen no host arrival to count as idle.
    fn idle_threshold(&self) -> Nanos {
        Nanos::from_ms(10)
    }

    /// Background work for one idle window.
    fn idle(&mut self, _ftl: &Ftl, _window: IdleWindow, _out: &mut Background) {}

    /// Statistics for the report (`engine_stats`), including the counts of
    /// the operations it charged.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Errors building an engine.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("unknown dedup engine '{name}'; available: {available}")]
    Unknown { name: String, available: String },
    #[error("invalid parameters for dedup engine '{engine}' ([engine.{engine}] / --set engine.{engine}.KEY=VALUE): {reason}")]
    Params { engine: String, reason: String },
}

/// What building an engine needs from the configuration, resolved by
/// `Config::engine_context` (the engines never see `Config`).
#[derive(Copy, Clone, Debug)]
pub struct EngineContext<'a> {
    /// Every `[engine.<name>]` parameter table; an engine reads the one
    /// named after it.
    pub tables: &'a toml::Table,
    /// `geometry.page_size` (fingerprints per metadata page).
    pub page_size: u32,
    /// One flash page read: `timing.read` plus one page over the bus.
    pub read_time: Nanos,
    /// Host-visible pages (the memory estimate at a full device).
    pub logical_pages: u64,
}

pub type Builder = fn(&EngineContext) -> Result<Box<dyn Engine>, EngineError>;

/// An engine's parameter table as `config show` prints it: every parameter
/// with its value in `cfg` (defaults filled in), unit-bearing names where
/// the value is exact ([`shown_params`]).
pub type Shown = fn(&EngineContext) -> Result<toml::Table, EngineError>;

/// What an engine allocates at most beside the FTL (bytes, saturating):
/// its tables when every logical page holds a distinct content; 0 for
/// parameters that do not validate (validation reports them).
pub type MemoryEstimate = fn(&EngineContext) -> u64;

/// What an engine's [`REGISTRY`] line holds beside its name and description.
#[derive(Copy, Clone, Debug)]
pub struct Registered {
    pub build: Builder,
    /// Its parameters as `config show` prints them.
    pub shown: Shown,
    /// Its tables at a full device (`Config::memory_estimate`).
    pub memory: MemoryEstimate,
}

/// One [`REGISTRY`] line: name, description, constructor, shown
/// parameters, memory estimate.
const fn line(
    name: &'static str,
    about: &'static str,
    build: Builder,
    shown: Shown,
    memory: MemoryEstimate,
) -> Entry<Registered> {
    Entry { name, about, item: Registered { build, shown, memory } }
}

/// Every engine, one line each ([`line`]), in the order `dedupsim engines`
/// lists them.
pub const REGISTRY: Registry<Registered> = Registry::new(
    "dedup engine",
    &[
        line(
            "caftl",
            "unbounded in-DRAM fingerprint index, free lookup, fixed hash time (CAFTL-like; FAD's model)",
            Caftl::build,
            |_| Ok(toml::Table::new()),
            // The FTL's own index, counted with the FTL.
            |_| 0,
        ),
        line(
            "caftl-sampled",
            "CAFTL with sampling hashing (SmartDedup §4): a multi-page write is fingerprinted only if its first page is a duplicate",
            CaftlSampled::build,
            |_| Ok(toml::Table::new()),
            CaftlSampled::memory_estimate,
        ),
        line(
            "smartdedup",
            "SmartDedup (Yang et al. ATC'19): bounded two-level fingerprint store, in-line + out-of-line dedup",
            SmartDedup::build,
            |cfg| shown_params::<SmartDedupParams>(cfg, "smartdedup", smartdedup::UNIT_KEYS),
            SmartDedup::memory_estimate,
        ),
        line(
            "light-dedup",
            "Light-Dedup (Qiu et al. ATC'23): xxHash + verify reads, trust-degree hints with speculative reads, region-based LMT on flash",
            LightDedup::build,
            |cfg| shown_params::<LightDedupParams>(cfg, "light-dedup", lightdedup::UNIT_KEYS),
            LightDedup::memory_estimate,
        ),
        line(
            "dram-verify",
            "fast hash (xxHash) + verify read, fingerprint index wholly in DRAM: Light-Dedup's identification without its LMT or hints (issue 27 baseline)",
            DramVerify::build,
            |cfg| shown_params::<DramVerifyParams>(cfg, "dram-verify", dramverify::UNIT_KEYS),
            DramVerify::memory_estimate,
        ),
    ],
);

/// The parameters engine `name` runs with under `cfg` (its table read
/// into `P`, so every default is filled in), as a TOML table with the
/// unit-bearing names ([`unit_keys::present`]). An unset optional
/// parameter (`prefix_bits`) is left out.
pub fn shown_params<P: DeserializeOwned + Default + serde::Serialize>(
    ctx: &EngineContext,
    name: &str,
    units: &[UnitKey],
) -> Result<toml::Table, EngineError> {
    let p: P = params(ctx, name, units)?;
    let mut t = toml::Table::try_from(&p)
        .map_err(|e| EngineError::Params { engine: name.to_string(), reason: e.to_string() })?;
    unit_keys::present(&mut t, units);
    Ok(t)
}

/// Every engine's parameters under `cfg`, in registry order
/// ([`Shown`]): what `config show` lists.
pub fn shown(ctx: &EngineContext) -> Vec<(&'static str, Result<toml::Table, EngineError>)> {
    REGISTRY.iter().map(|e| (e.name, (e.item.shown)(ctx))).collect()
}

/// Builds an engine by registry name (`dedup.engine`).
pub fn build(name: &str, ctx: &EngineContext) -> Result<Box<dyn Engine>, EngineError> {
    match REGISTRY.get(name) {
        Some(e) => (e.item.build)(ctx),
        None => Err(EngineError::Unknown { name: name.to_string(), available: REGISTRY.available() }),
    }
}

/// What the engine `name` allocates at most beside the FTL (bytes,
/// saturating): its tables when every logical page holds a distinct
/// content ([`Registered::memory`]). Part of `Config::memory_estimate`;
/// 0 for `caftl` (the FTL's index, counted there), for an unknown name and
/// for parameters that do not validate (validation reports them).
pub fn memory_estimate(name: &str, ctx: &EngineContext) -> u64 {
    REGISTRY.get(name).map_or(0, |e| (e.item.memory)(ctx))
}

/// Names of all registered engines, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.names()
}

/// Parses an engine's parameter table `[engine.<name>]` into `P` (missing
/// table = all defaults). Use `#[serde(default, deny_unknown_fields)]`.
/// Unit-bearing keys (`memory = "3MiB"`) are first rewritten into their
/// bare-number aliases (`memory_mb`), which `P` reads
/// ([`crate::params::unit_keys`]).
pub fn params<P: DeserializeOwned + Default>(
    ctx: &EngineContext,
    name: &str,
    units: &[UnitKey],
) -> Result<P, EngineError> {
    let bad = |reason: String| EngineError::Params { engine: name.to_string(), reason };
    match ctx.tables.get(name) {
        None => Ok(P::default()),
        Some(v) => {
            unit_keys::resolve(v, units).map_err(bad)?.try_into().map_err(|e: toml::de::Error| bad(e.to_string()))
        }
    }
}

/// The chip holding metadata page `page`: the metadata area is striped over
/// all chips by a fixed mix of the page number (so consecutive pages of one
/// structure spread like data does).
pub fn metadata_chip(page: u64, chips: u32) -> u32 {
    (mix64(page) % u64::from(chips.max(1))) as u32
}

/// SplitMix64's finalizer: a fixed bijective mix of 64 bits, used for
/// fingerprints of content ids and metadata placement.
#[inline]
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Checks that an engine without parameters (`caftl`, `caftl-sampled`)
/// was given none: any key of `[engine.NAME]` is an error, which says
/// where its costs are set instead.
pub fn no_params(ctx: &EngineContext, name: &str) -> Result<(), EngineError> {
    let keys: Vec<String> = match ctx.tables.get(name) {
        None => Vec::new(),
        Some(toml::Value::Table(t)) => t.keys().map(|k| format!("`{k}`")).collect(),
        Some(v) => vec![format!("a {} value instead of a table", v.type_str())],
    };
    if keys.is_empty() {
        return Ok(());
    }
    Err(EngineError::Params {
        engine: name.into(),
        reason: format!(
            "{name} has no parameters, but [engine.{name}] holds {}; its hash time is dedup.fingerprint \
             and its hash engines dedup.hash_engines",
            keys.join(", ")
        ),
    })
}

/// Whether `e` is a live copy of `content` (engines validate what they
/// remember against the FTL: a stored copy may have been freed since).
/// A copy waiting to be placed (`allocation = "dynamic"`,
/// [`Ftl::entry_held`]) is live: a duplicate of it is referenced, and a
/// read of it (its `ppn` is no page: [`crate::ftl::Ftl::is_unplaced`]) is served from the
/// controller's write buffer by the simulator (docs/simulator.md,
/// "Dynamic allocation").
#[inline]
pub fn is_live_copy(ftl: &Ftl, e: EntryId, content: ContentId) -> bool {
    ftl.entry_held(e).is_some_and(|ent| ent.content == content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn registry_builds_every_engine_with_defaults() {
        let cfg = Config::fad_table1();
        for name in names() {
            let e = build(name, &cfg.engine_context()).unwrap();
            assert_eq!(e.name(), name);
        }
        assert!(matches!(build("nope", &cfg.engine_context()), Err(EngineError::Unknown { .. })));
    }

    #[test]
    fn unknown_engine_parameters_are_errors() {
        let mut cfg = Config::fad_table1();
        let mut t = toml::Table::new();
        t.insert("memroy_mb".into(), toml::Value::Float(3.0));
        cfg.engine.insert("smartdedup".into(), toml::Value::Table(t));
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("memroy_mb"), "{e}");
    }

    #[test]
    fn metadata_pages_spread_over_the_chips() {
        let mut seen = [0u32; 16];
        for p in 0..1600 {
            seen[metadata_chip(p, 16) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 60), "{seen:?}");
    }
}

#[cfg(test)]
mod engine_tests;
