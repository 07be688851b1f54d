//! The raw stage: serde structs mirroring the TOML file, every field optional.
//!
//! All fields are optional so that a user file (or a preset built on another
//! one) can give just the keys it changes: layers are parsed separately, so a
//! mistake is reported with the right file name and line number, then
//! [`RawConfig::overlay`]ed onto their base and [resolved](RawConfig::resolve)
//! into the typed [`Config`](super::Config). `deny_unknown_fields` everywhere turns typos
//! (`chanels = 4`) into errors instead of silently ignored keys.
//!
//! Unit-carrying values ([`RawTime`], [`RawTransfer`], [`RawSize`],
//! [`RawFraction`], [`RawSeed`]) are parsed inside their `Deserialize`
//! impls, so unit mistakes are reported by the TOML parser with the line.

//!
//! One file per concern: `values.rs` the unit-carrying values, this file
//! the sections and the document with its overlay, `resolve.rs` the
//! raw -> [`Config`](super::Config) resolution and back, `tables.rs` the checks of the
//! `[policy.X]` / `[engine.X]` parameter tables.

use super::UnitOrder;
use super::{
    Allocation, ConfigError, GcRule, HashOverlap, HashUnit, ParallelUnit, PreconditionOrder, PreconditionPlacement,
    PreconditionRule, Scheduling, WriteCompletion,
};
use serde::{Deserialize, Serialize};

mod resolve;
mod tables;
#[cfg(test)]
mod tests;
mod values;

pub(crate) use tables::{check_time_scale, normalize_engine_tables, normalize_policy};
pub use values::{RawFraction, RawSeed, RawSize, RawTime, RawTransfer};

/// `[geometry]`: the flash array shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGeometry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chips_per_channel: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dies_per_chip: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planes_per_die: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_plane: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages_per_block: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<RawSize>,
    /// Omitted from canonical output when default (configurations that do
    /// not set it keep their hashes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_order: Option<UnitOrder>,
}

/// `[timing]`: flash operation latencies and the channel bus speed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTiming {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<RawTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<RawTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub erase: Option<RawTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer: Option<RawTransfer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<Scheduling>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_completion: Option<WriteCompletion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_read_shortcut: Option<bool>,
}

/// `[gc]`: garbage collection and wear levelling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_free_blocks: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copyback: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wear_leveling: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<GcRule>,
}

/// `[precondition]`: the device's state before the replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPrecondition {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<PreconditionRule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PreconditionPlacement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<PreconditionOrder>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aged: Option<RawFraction>,
}

/// `replay.mode`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RawReplayMode {
    OpenLoop,
    ClosedLoop,
}

/// `[replay]`: both modes' parameters may be present (a preset can carry a
/// queue depth for `--set replay.mode=closed-loop`); `mode` picks which one
/// is used.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReplay {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<RawReplayMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
}

/// `[dedup]`: the fingerprinting engine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDedup {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<RawTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_engines: Option<u32>,
    /// Optional, default `page`; omitted from the canonical form when
    /// default, so configs without it keep their hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_unit: Option<HashUnit>,
    /// Optional, default `pipelined`; omitted when default, like `hash_unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_overlap: Option<HashOverlap>,
    /// Optional, default `caftl`: the dedup engine (`crate::engine`);
    /// omitted when default, like `hash_unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

/// `[experiment]`: labelled experiments (see `ExperimentConfig`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fad_ssdsim_model: Option<bool>,
}

/// One TOML document (preset, user file or `config show` output).
///
/// Field order is the canonical output order: top-level scalars first, as
/// TOML requires them before any `[section]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// The preset name (or TOML file, relative to this file) this document
    /// extends; `"none"` makes it standalone. Default `"fad-table1"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Display name of the configuration; not inherited from the base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<RawSeed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_provisioning: Option<RawFraction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_unit: Option<ParallelUnit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<Allocation>,
    /// Omitted from canonical output when 1 (configurations that do not
    /// set it keep their hashes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_pages: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geometry: Option<RawGeometry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<RawTiming>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc: Option<RawGc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precondition: Option<RawPrecondition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<RawReplay>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedup: Option<RawDedup>,
    /// `[experiment]`: omitted from canonical output while every switch is
    /// off, so configurations without experiments keep their hashes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experiment: Option<RawExperiment>,
    /// `[policy.<name>]` parameter tables, passed through to the policies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<toml::Table>,
    /// `[engine.<name>]` parameter tables, passed through to the dedup
    /// engines (`crate::engine`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<toml::Table>,
}

/// Keys accepted at the top level and in each section (the `--set` schema).
///
/// Kept in sync with the structs above by a unit test.
pub const SCHEMA: &[(&str, &[&str])] = &[
    ("", &["base", "name", "seed", "over_provisioning", "alloc_unit", "allocation", "alloc_pages"]),
    (
        "geometry",
        &[
            "channels",
            "chips_per_channel",
            "dies_per_chip",
            "planes_per_die",
            "blocks_per_plane",
            "pages_per_block",
            "page_size",
            "unit_order",
        ],
    ),
    ("timing", &["read", "program", "erase", "transfer", "scheduling", "write_completion", "duplicate_read_shortcut"]),
    ("gc", &["min_free_blocks", "copyback", "wear_leveling", "rule"]),
    ("precondition", &["rule", "placement", "order", "aged"]),
    ("replay", &["mode", "time_scale", "queue_depth"]),
    ("dedup", &["fingerprint", "hash_engines", "hash_unit", "hash_overlap", "engine"]),
    ("experiment", &["fad_ssdsim_model"]),
    ("policy", &[]),
    ("engine", &[]),
];

/// `Some` field-by-field overlay: `top`'s keys win.
macro_rules! overlay_fields {
    ($top:expr, $base:expr, $ty:ident { $($f:ident),* $(,)? }) => {{
        let (t, b) = ($top, $base);
        $ty { $($f: t.$f.or(b.$f)),* }
    }};
}

fn overlay_section<T, F: FnOnce(T, T) -> T>(top: Option<T>, base: Option<T>, f: F) -> Option<T> {
    match (top, base) {
        (Some(t), Some(b)) => Some(f(t, b)),
        (t, b) => t.or(b),
    }
}

/// Deep merge of TOML tables: nested tables merge, anything else is replaced.
pub(crate) fn merge_tables(base: &mut toml::Table, top: toml::Table) {
    for (k, v) in top {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => merge_tables(b, t),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

impl RawConfig {
    /// Parses one TOML document; errors carry `origin` (a file name or
    /// preset) and toml's line/column report.
    pub fn parse(text: &str, origin: &str) -> Result<RawConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse { origin: origin.to_string(), message: e.to_string() })
    }

    /// Converts an already-parsed TOML table (e.g. after `--set` overrides).
    /// Such errors have no line to show, so the key path toml reports on a
    /// second line (`in `timing.read``) is moved to the front.
    pub fn from_table(table: toml::Table, origin: &str) -> Result<RawConfig, ConfigError> {
        toml::Value::Table(table).try_into().map_err(|e: toml::de::Error| {
            let m = e.to_string();
            let m = m.trim_end();
            let message = match m.rsplit_once("\nin `") {
                Some((msg, key)) => format!("{}: {msg}", key.trim_end_matches('`')),
                None => m.to_string(),
            };
            ConfigError::Parse { origin: origin.to_string(), message }
        })
    }

    /// Lays `self` over `base`: every key `self` sets wins, the rest comes
    /// from `base`. `name` is not inherited (a derived file is not its base);
    /// `base` is kept from `self` (the chain is resolved by the loader).
    pub fn overlay(self, base: RawConfig) -> RawConfig {
        let merge = |top: Option<toml::Table>, base: Option<toml::Table>| match (top, base) {
            (Some(t), Some(mut b)) => {
                merge_tables(&mut b, t);
                Some(b)
            }
            (t, b) => t.or(b),
        };
        let policy = merge(self.policy, base.policy);
        let engine = merge(self.engine, base.engine);
        RawConfig {
            base: self.base,
            name: self.name,
            seed: self.seed.or(base.seed),
            over_provisioning: self.over_provisioning.or(base.over_provisioning),
            alloc_unit: self.alloc_unit.or(base.alloc_unit),
            allocation: self.allocation.or(base.allocation),
            alloc_pages: self.alloc_pages.or(base.alloc_pages),
            geometry: overlay_section(self.geometry, base.geometry, |t, b| {
                overlay_fields!(
                    t,
                    b,
                    RawGeometry {
                        channels,
                        chips_per_channel,
                        dies_per_chip,
                        planes_per_die,
                        blocks_per_plane,
                        pages_per_block,
                        page_size,
                        unit_order,
                    }
                )
            }),
            timing: overlay_section(self.timing, base.timing, |t, b| {
                overlay_fields!(
                    t,
                    b,
                    RawTiming { read, program, erase, transfer, scheduling, write_completion, duplicate_read_shortcut }
                )
            }),
            gc: overlay_section(self.gc, base.gc, |t, b| {
                overlay_fields!(t, b, RawGc { min_free_blocks, copyback, wear_leveling, rule })
            }),
            precondition: overlay_section(self.precondition, base.precondition, |t, b| {
                overlay_fields!(t, b, RawPrecondition { rule, placement, order, aged })
            }),
            replay: overlay_section(self.replay, base.replay, |t, b| {
                overlay_fields!(t, b, RawReplay { mode, time_scale, queue_depth })
            }),
            dedup: overlay_section(self.dedup, base.dedup, |t, b| {
                overlay_fields!(t, b, RawDedup { fingerprint, hash_engines, hash_unit, hash_overlap, engine })
            }),
            experiment: overlay_section(self.experiment, base.experiment, |t, b| {
                overlay_fields!(t, b, RawExperiment { fad_ssdsim_model })
            }),
            policy,
            engine,
        }
    }

    /// Serializes to TOML text in field order. Infallible in practice: every
    /// field is a string, integer, float, bool or table; the error branch
    /// degrades to a TOML comment instead of panicking.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# (config could not be serialized: {e})\n"))
    }
}
