//! The configuration's setup layer: what needs the layers below it, the
//! registries and the modules' own parameter types. `Config` resolves into
//! each lower module's parameters here ([`Config::timing_params`],
//! [`Config::ftl_params`], [`Config::policy_setup`],
//! [`Config::engine_context`]); the registries are asked which
//! `[policy.<table>]` tables exist (declared as data in
//! [`crate::policy::REGISTRY`]) and to check the engines' parameters; and
//! the memory estimate adds the FTL's and the engine's tables. The modules
//! below never see `Config` (ARCHITECTURE.md, "Layers").

use super::{Config, ConfigError, FtlParams, HashParams, TimingParams};
use serde::Serialize;

impl Config {
    /// The timing model's parameters ([`crate::timing::Timing::new`]).
    pub fn timing_params(&self) -> TimingParams {
        TimingParams {
            channels: self.geometry.channels,
            chips_per_channel: self.geometry.chips_per_channel,
            timing: self.timing.clone(),
            hash: HashParams {
                fingerprint: self.dedup.fingerprint,
                engines: self.dedup.hash_engines,
                unit: self.dedup.hash_unit,
                overlap: self.dedup.hash_overlap,
            },
            copyback: self.gc.copyback,
        }
    }

    /// The FTL's parameters ([`crate::ftl::Ftl::new`]).
    pub fn ftl_params(&self) -> FtlParams {
        FtlParams {
            geometry: self.geometry.clone(),
            alloc_unit: self.alloc_unit,
            logical_pages: self.logical_pages(),
            aged: self.precondition.aged,
            gc: self.gc.clone(),
        }
    }

    /// What building a policy needs ([`crate::policy::build`]).
    pub fn policy_setup(&self) -> crate::policy::PolicySetup<'_> {
        crate::policy::PolicySetup {
            tables: &self.policy,
            pages_per_block: self.geometry.pages_per_block,
            read_time: self.timing.read + self.timing.page_transfer,
            program_time: self.timing.program + self.timing.page_transfer,
            alloc_pages: self.alloc_pages,
            spare_blocks_over_gc: self.spare_blocks_per_plane().saturating_sub(self.gc_spare_need()),
        }
    }

    /// What building an engine needs ([`crate::engine::build`]).
    pub fn engine_context(&self) -> crate::engine::EngineContext<'_> {
        crate::engine::EngineContext {
            tables: &self.engine,
            page_size: self.geometry.page_size,
            read_time: self.timing.read + self.timing.page_transfer,
            logical_pages: self.logical_pages(),
        }
    }

    /// Checks `dedup.engine` and every `[engine.<name>]` table by building the
    /// engines they name (unknown names and parameters are errors).
    pub(super) fn validate_engines(&self) -> Result<(), ConfigError> {
        let ctx = self.engine_context();
        crate::engine::build(&self.dedup.engine, &ctx)
            .map_err(|e| ConfigError::invalid("dedup.engine", e.to_string()))?;
        for name in self.engine.keys() {
            crate::engine::build(name, &ctx)
                .map_err(|e| ConfigError::invalid(format!("engine.{name}"), e.to_string()))?;
        }
        Ok(())
    }

    /// `config show`'s commented block of every dedup engine's parameters
    /// as this config runs them, defaults filled in (an `[engine.NAME]`
    /// table or `--set engine.NAME.KEY=VALUE` changes them).
    pub(super) fn engine_parameters_shown(&self) -> String {
        let mut s = String::from(
            "\n# ---- dedup engine parameters (defaults filled in; set with [engine.NAME] or \
             --set engine.NAME.KEY=VALUE) ----\n",
        );
        for (name, table) in crate::engine::shown(&self.engine_context()) {
            let running = if name == self.dedup.engine { " (dedup.engine)" } else { "" };
            s.push_str(&format!("# [engine.{name}]{running}\n"));
            match table {
                Ok(t) if t.is_empty() => s.push_str(
                    "#   no parameters: its hash time is dedup.fingerprint, its hash engines dedup.hash_engines\n",
                ),
                Ok(t) => {
                    for line in toml::to_string(&t).unwrap_or_default().lines() {
                        s.push_str(&format!("#   {line}\n"));
                    }
                }
                Err(e) => s.push_str(&format!("#   (invalid: {e})\n")),
            }
        }
        s
    }
}

impl<'a> From<&'a Config> for crate::policy::PolicySetup<'a> {
    /// [`Config::policy_setup`], so that `policy::build(name, &cfg)` reads.
    fn from(cfg: &'a Config) -> Self {
        cfg.policy_setup()
    }
}

/// The `[policy.<table>]` parameter tables the registered policies read,
/// each with the policies that read it, in registry order (e.g. `fad` is
/// read by `fad-rpo`, ..., `fad`; `native` reads none).
///
/// Read from the registry, where each policy declares its table as data
/// (adding a policy stays one file and one `REGISTRY` line; a policy is
/// given only the table it declares, so the declaration cannot be wrong).
/// A table is listed at the registry position of the policy named like it.
pub(super) fn policy_tables() -> Vec<(&'static str, Vec<&'static str>)> {
    use crate::policy::REGISTRY;
    let mut tables = Vec::new();
    for table in REGISTRY.names() {
        let readers: Vec<&'static str> =
            REGISTRY.iter().filter(|e| e.item.table == Some(table)).map(|e| e.name).collect();
        if !readers.is_empty() {
            tables.push((table, readers));
        }
    }
    tables
}

/// The memory one simulation of a device may need, in bytes, table by
/// table ([`Config::memory_estimate`]): the FTL's tables at their largest,
/// i.e. once every logical page has been written. A simulation allocates
/// them up front (untouched parts stay virtual), so a device too large for
/// the machine is refused before anything is allocated rather than
/// aborting in the allocator. Not counted: the workload (requests and page
/// contents, shared by every run) and a few bytes per chip, channel or unit.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryEstimate {
    /// L2P table: one 4-byte slot per logical page.
    pub l2p: u64,
    /// Mapping entries (one per live physical copy, at most one per logical
    /// page) and their free list. A policy that does not deduplicate maps
    /// flat and keeps entries only for writes waiting to be placed
    /// (`src/ftl/flat.rs`), but the estimate does not know the policy and
    /// counts them anyway: an upper bound for such runs.
    pub entries: u64,
    /// Reverse map: one 4-byte slot per physical page.
    pub reverse_map: u64,
    /// Block metadata and the planes' free-block pools.
    pub blocks: u64,
    /// Fingerprint index of deduplicating policies: one 4-byte slot per
    /// content id, taken as one per logical page; a workload drawing more
    /// ids needs more, up to [`Config::index_bound`].
    pub fingerprint_index: u64,
    /// `run --check`'s shadow map: one 4-byte slot per logical page.
    pub check_shadow: u64,
    /// The dedup engine's own tables (`dedup.engine`; 0 for `caftl`, which
    /// is the fingerprint index above): `engine::memory_estimate`.
    pub engine: u64,
}

impl MemoryEstimate {
    /// Bytes of one simulation, with or without `--check`.
    pub fn per_run(&self, check: bool) -> u64 {
        let base = [self.l2p, self.entries, self.reverse_map, self.blocks, self.fingerprint_index, self.engine]
            .iter()
            .fold(0u64, |a, &b| a.saturating_add(b));
        base.saturating_add(if check { self.check_shadow } else { 0 })
    }

    /// The tables, e.g. `L2P 64.0 MiB, entries 256.0 MiB, ...`.
    pub fn breakdown(&self) -> String {
        let engine =
            if self.engine > 0 { format!(", dedup engine {}", format_bytes(self.engine)) } else { String::new() };
        format!(
            "L2P {}, entries {}, reverse map {}, blocks {}, fingerprint index {}{engine}",
            format_bytes(self.l2p),
            format_bytes(self.entries),
            format_bytes(self.reverse_map),
            format_bytes(self.blocks),
            format_bytes(self.fingerprint_index)
        )
    }
}

/// A byte count for people: `512 B`, `1.5 KiB`, `98.3 GiB`, `1.20 TiB`.
pub fn format_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// The most a deduplicating run's fingerprint index reaches on a device
/// ([`Config::index_bound`]): the index grows with the content ids the
/// workload draws, not with the device, so [`MemoryEstimate`] counts it
/// at one id per logical page; a workload drawing more ids (FAD §IV-A's
/// population grows with the pages written) takes more, up to this bound
/// (docs/streaming.md). The bound is the index's steady size at the limit:
/// while the dense array grows, or turns into a hash map, the old form is
/// held beside the new one for that step.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexBound {
    /// Ids held in a dense array: [`crate::ftl::index::dense_limit`]. Past
    /// it the index becomes a hash map of the live contents.
    pub dense_ids: u32,
    /// The index at the limit (4 B per id).
    pub bytes: u64,
}

impl Config {
    /// The bound of a deduplicating run's fingerprint index ([`IndexBound`]).
    pub fn index_bound(&self) -> IndexBound {
        use crate::ftl::index::{dense_bytes, dense_limit};
        let raw = self.raw_pages();
        IndexBound { dense_ids: dense_limit(raw), bytes: dense_bytes::<u32>(raw) }
    }

    /// What one simulation of this device may need ([`MemoryEstimate`]):
    /// pure arithmetic on the geometry, safe on any validated config however
    /// large (saturating).
    pub fn memory_estimate(&self) -> MemoryEstimate {
        let logical = self.logical_pages();
        let raw = self.raw_pages();
        let slot = 4u64; // u32 page numbers, entry ids and content ids
        let entry = std::mem::size_of::<crate::ftl::Entry>() as u64 + slot;
        // Block metadata (write pointer, valid count, erase count) and one
        // free-pool slot per block.
        let block = 8 + slot;
        MemoryEstimate {
            l2p: logical.saturating_mul(slot),
            entries: logical.saturating_mul(entry),
            reverse_map: raw.saturating_mul(slot),
            blocks: self.blocks().saturating_mul(block),
            fingerprint_index: logical.saturating_mul(slot),
            check_shadow: logical.saturating_mul(slot),
            engine: crate::engine::memory_estimate(&self.dedup.engine, &self.engine_context()),
        }
    }
}
