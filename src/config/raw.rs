//! The raw stage: serde structs mirroring the TOML file, every field optional.
//!
//! All fields are optional so that a user file (or a preset built on another
//! one) can give just the keys it changes: layers are parsed separately, so a
//! mistake is reported with the right file name and line number, then
//! [`RawConfig::overlay`]ed onto their base and [resolved](RawConfig::resolve)
//! into the typed [`Config`]. `deny_unknown_fields` everywhere turns typos
//! (`chanels = 4`) into errors instead of silently ignored keys.
//!
//! Unit-carrying values ([`RawTime`], [`RawTransfer`], [`RawSize`],
//! [`RawFraction`], [`RawSeed`]) are parsed inside their `Deserialize`
//! impls, so unit mistakes are reported by the TOML parser with the line.

use super::parse;
use super::UnitOrder;
use super::{
    page_transfer_time, Allocation, Config, ConfigError, DedupConfig, ExperimentConfig, GcConfig, GcRule,
    GeometryConfig, HashOverlap, HashUnit, ParallelUnit, PreconditionConfig, PreconditionOrder, PreconditionPlacement,
    PreconditionRule, ReplayConfig, Scheduling, TimingConfig, WriteCompletion,
};
use crate::units::Nanos;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Shared serde visitor body for string-or-integer unit values.
macro_rules! unit_value {
    ($ty:ident, $inner:ty, $expect:literal, int => $from_int:expr, str => $from_str:expr, ser => $to:expr) => {
        unit_value!($ty, $inner, $expect, int => $from_int, str => $from_str);
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let f: fn(&$inner) -> String = $to;
                s.serialize_str(&f(&self.0))
            }
        }
    };
    ($ty:ident, $inner:ty, $expect:literal, int => $from_int:expr, str => $from_str:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if v < 0 {
                            return Err(E::custom(format!("{v} is negative; expected {}", $expect)));
                        }
                        self.visit_u64(v as u64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        let f: fn(u64) -> Result<$inner, String> = $from_int;
                        f(v).map($ty).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!("{v} is a float; expected {}", $expect)))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        let f: fn(&str) -> Result<$inner, String> = $from_str;
                        f(v).map($ty).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

/// A time: `"20us"`, `"1.5ms"`, `"200 us"` or an integer of nanoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawTime(pub Nanos);
unit_value!(RawTime, Nanos,
    "a time such as \"20us\" or \"1.5ms\", or an integer of nanoseconds",
    int => |v| Ok(Nanos(v)),
    str => |s| parse::parse_time_ns(s).map(Nanos),
    ser => |n| parse::format_time_ns(n.0));

/// Channel transfer speed in picoseconds per byte: `"25ns/B"` or `"800MB/s"`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawTransfer(pub u64);
unit_value!(RawTransfer, u64,
    "a transfer speed such as \"25ns/B\" (time per byte) or \"800MB/s\"",
    int => |_| Err("a bare number is ambiguous here: write the time per byte, e.g. \"25ns/B\", or the bus rate, e.g. \"800MB/s\"".into()),
    str => parse::parse_transfer_ps,
    ser => |ps| parse::format_transfer_ps(*ps));

/// A size in bytes: `"4KiB"`, `"16 KiB"` or an integer of bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawSize(pub u64);
unit_value!(RawSize, u64,
    "a size such as \"4KiB\", or an integer of bytes",
    int => Ok,
    str => parse::parse_size,
    ser => |b| parse::format_size(*b));

/// The random seed: a non-negative integer (or a decimal / `0x` hex string
/// for values above the TOML integer range, 2^63 - 1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawSeed(pub u64);
unit_value!(RawSeed, u64,
"a non-negative integer seed",
int => Ok,
str => |s| {
    let t = s.trim();
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| format!("`{s}` is not a seed: expected a non-negative integer"))
});

/// Seeds that fit a TOML integer are written as integers, larger ones as
/// strings (TOML integers are signed 64-bit).
impl Serialize for RawSeed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(self.0) {
            Ok(i) => s.serialize_i64(i),
            Err(_) => s.serialize_str(&self.0.to_string()),
        }
    }
}

/// A fraction: a number (`0.2`) or a percentage string (`"20%"`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RawFraction(pub f64);

impl<'de> Deserialize<'de> for RawFraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawFraction;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a fraction such as 0.2 or \"20%\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawFraction, E> {
                Ok(RawFraction(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawFraction, E> {
                Ok(RawFraction(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawFraction, E> {
                Ok(RawFraction(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawFraction, E> {
                parse::parse_fraction(v).map(RawFraction).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for RawFraction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

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

/// `[experiment]`: labelled experiments (see [`ExperimentConfig`]).
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

    /// Resolves a fully merged document into a [`Config`] named `name`
    /// (used unless the document sets `name`), deriving `page_transfer`.
    ///
    /// Only completeness and representability are checked here; the
    /// semantic checks are [`Config::validate`], which loaders run next.
    pub fn resolve(self, name: &str) -> Result<Config, ConfigError> {
        fn need<T>(v: Option<T>, key: &str) -> Result<T, ConfigError> {
            v.ok_or_else(|| ConfigError::Missing { key: key.to_string() })
        }
        let g = self.geometry.unwrap_or_default();
        let t = self.timing.unwrap_or_default();
        let gc = self.gc.unwrap_or_default();
        let r = self.replay.unwrap_or_default();
        let pc = self.precondition.unwrap_or_default();
        let d = self.dedup.unwrap_or_default();
        let x = self.experiment.unwrap_or_default();

        let page_size_bytes = need(g.page_size, "geometry.page_size")?.0;
        let page_size = u32::try_from(page_size_bytes).map_err(|_| ConfigError::Invalid {
            key: "geometry.page_size".into(),
            message: format!(
                "geometry.page_size = {page_size_bytes} bytes: too large; flash pages are a few KiB (e.g. \"4KiB\", \"16KiB\")"
            ),
        })?;
        let transfer_ps_per_byte = need(t.transfer, "timing.transfer")?.0;

        // Both replay parameters are checked when given, even the one the
        // mode does not use, so that a mistake is not silently ignored.
        if r.queue_depth == Some(0) {
            return Err(ConfigError::invalid(
                "replay.queue_depth",
                "replay.queue_depth = 0: closed-loop replay needs at least 1 outstanding request",
            ));
        }
        if let Some(s) = r.time_scale {
            check_time_scale(s)?;
        }
        let replay = match need(r.mode, "replay.mode")? {
            RawReplayMode::OpenLoop => ReplayConfig::OpenLoop { time_scale: need(r.time_scale, "replay.time_scale")? },
            RawReplayMode::ClosedLoop => {
                ReplayConfig::ClosedLoop { queue_depth: need(r.queue_depth, "replay.queue_depth")? }
            }
        };

        let policy = normalize_policy(self.policy.unwrap_or_default())?;
        let engine_params = normalize_engine_tables(self.engine.unwrap_or_default())?;
        let engine = d.engine.clone().unwrap_or_else(|| crate::engine::DEFAULT.to_string());

        Ok(Config {
            name: self.name.unwrap_or_else(|| name.to_string()),
            geometry: GeometryConfig {
                channels: need(g.channels, "geometry.channels")?,
                chips_per_channel: need(g.chips_per_channel, "geometry.chips_per_channel")?,
                dies_per_chip: need(g.dies_per_chip, "geometry.dies_per_chip")?,
                planes_per_die: need(g.planes_per_die, "geometry.planes_per_die")?,
                blocks_per_plane: need(g.blocks_per_plane, "geometry.blocks_per_plane")?,
                pages_per_block: need(g.pages_per_block, "geometry.pages_per_block")?,
                page_size,
                unit_order: g.unit_order.unwrap_or_default(),
            },
            over_provisioning: need(self.over_provisioning, "over_provisioning")?.0,
            timing: TimingConfig {
                read: need(t.read, "timing.read")?.0,
                program: need(t.program, "timing.program")?.0,
                erase: need(t.erase, "timing.erase")?.0,
                transfer_ps_per_byte,
                page_transfer: page_transfer_time(page_size, transfer_ps_per_byte),
                scheduling: need(t.scheduling, "timing.scheduling")?,
                write_completion: need(t.write_completion, "timing.write_completion")?,
                duplicate_read_shortcut: t.duplicate_read_shortcut.unwrap_or(false),
            },
            gc: GcConfig {
                min_free_blocks: need(gc.min_free_blocks, "gc.min_free_blocks")?,
                copyback: need(gc.copyback, "gc.copyback")?,
                wear_leveling: need(gc.wear_leveling, "gc.wear_leveling")?,
                rule: need(gc.rule, "gc.rule")?,
            },
            precondition: PreconditionConfig {
                rule: need(pc.rule, "precondition.rule")?,
                placement: need(pc.placement, "precondition.placement")?,
                order: pc.order.unwrap_or_default(),
                aged: pc.aged.map_or(0.0, |a| a.0),
            },
            alloc_unit: need(self.alloc_unit, "alloc_unit")?,
            allocation: need(self.allocation, "allocation")?,
            alloc_pages: self.alloc_pages.unwrap_or(1),
            replay,
            dedup: DedupConfig {
                fingerprint: need(d.fingerprint, "dedup.fingerprint")?.0,
                hash_engines: need(d.hash_engines, "dedup.hash_engines")?,
                hash_unit: d.hash_unit.unwrap_or_default(),
                hash_overlap: d.hash_overlap.unwrap_or_default(),
                engine,
            },
            policy,
            engine: engine_params,
            seed: need(self.seed, "seed")?.0,
            experiment: ExperimentConfig { fad_ssdsim_model: x.fad_ssdsim_model.unwrap_or(false) },
        })
    }

    /// The fully populated, standalone (`base = "none"`) document of a
    /// resolved config: what `config show` prints and the hash covers.
    pub fn from_config(c: &Config) -> RawConfig {
        let g = &c.geometry;
        let (mode, time_scale, queue_depth) = match c.replay {
            ReplayConfig::OpenLoop { time_scale } => (RawReplayMode::OpenLoop, Some(time_scale), None),
            ReplayConfig::ClosedLoop { queue_depth } => (RawReplayMode::ClosedLoop, None, Some(queue_depth)),
        };
        RawConfig {
            base: Some("none".into()),
            name: Some(c.name.clone()),
            seed: Some(RawSeed(c.seed)),
            over_provisioning: Some(RawFraction(c.over_provisioning)),
            alloc_unit: Some(c.alloc_unit),
            allocation: Some(c.allocation),
            alloc_pages: (c.alloc_pages != 1).then_some(c.alloc_pages),
            geometry: Some(RawGeometry {
                channels: Some(g.channels),
                chips_per_channel: Some(g.chips_per_channel),
                dies_per_chip: Some(g.dies_per_chip),
                planes_per_die: Some(g.planes_per_die),
                blocks_per_plane: Some(g.blocks_per_plane),
                pages_per_block: Some(g.pages_per_block),
                page_size: Some(RawSize(u64::from(g.page_size))),
                unit_order: (!g.unit_order.is_default()).then_some(g.unit_order),
            }),
            timing: Some(RawTiming {
                read: Some(RawTime(c.timing.read)),
                program: Some(RawTime(c.timing.program)),
                erase: Some(RawTime(c.timing.erase)),
                transfer: Some(RawTransfer(c.timing.transfer_ps_per_byte)),
                scheduling: Some(c.timing.scheduling),
                write_completion: Some(c.timing.write_completion),
                duplicate_read_shortcut: c.timing.duplicate_read_shortcut.then_some(true),
            }),
            gc: Some(RawGc {
                min_free_blocks: Some(c.gc.min_free_blocks),
                copyback: Some(c.gc.copyback),
                wear_leveling: Some(c.gc.wear_leveling),
                rule: Some(c.gc.rule),
            }),
            precondition: Some(RawPrecondition {
                rule: Some(c.precondition.rule),
                placement: Some(c.precondition.placement),
                // Written only when set, as `aged`: a configuration that
                // keeps the default keeps its hash.
                order: (c.precondition.order != PreconditionOrder::default()).then_some(c.precondition.order),
                aged: (c.precondition.aged != 0.0).then_some(RawFraction(c.precondition.aged)),
            }),
            replay: Some(RawReplay { mode: Some(mode), time_scale, queue_depth }),
            dedup: Some(RawDedup {
                fingerprint: Some(RawTime(c.dedup.fingerprint)),
                hash_engines: Some(c.dedup.hash_engines),
                hash_unit: (c.dedup.hash_unit != HashUnit::default()).then_some(c.dedup.hash_unit),
                hash_overlap: (c.dedup.hash_overlap != HashOverlap::default()).then_some(c.dedup.hash_overlap),
                engine: (c.dedup.engine != crate::engine::DEFAULT).then(|| c.dedup.engine.clone()),
            }),
            experiment: c.experiment.fad_ssdsim_model.then_some(RawExperiment { fad_ssdsim_model: Some(true) }),
            policy: (!c.policy.is_empty()).then(|| c.policy.clone()),
            engine: (!c.engine.is_empty()).then(|| c.engine.clone()),
        }
    }

    /// Serializes to TOML text in field order. Infallible in practice: every
    /// field is a string, integer, float, bool or table; the error branch
    /// degrades to a TOML comment instead of panicking.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# (config could not be serialized: {e})\n"))
    }
}

/// `replay.time_scale` must be a positive finite factor.
pub(crate) fn check_time_scale(s: f64) -> Result<(), ConfigError> {
    if s.is_finite() && s > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::invalid(
            "replay.time_scale",
            format!(
                "replay.time_scale = {s:?}: must be a positive finite factor (1.0 replays at trace speed, 0.5 twice as fast)"
            ),
        ))
    }
}

/// Why `[policy.<name>]` is not a table any policy reads.
fn unknown_policy_table(name: &str) -> ConfigError {
    let tables = super::setup::policy_tables();
    let list = tables.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ");
    let why = if let Some((t, _)) = tables.iter().find(|(_, readers)| readers.contains(&name)) {
        format!("policy `{name}` takes its parameters from [policy.{t}] (--set policy.{t}.<param>=<value>)")
    } else if crate::policy::names().contains(&name) {
        format!("policy `{name}` has no parameters; the parameter tables are: {list}")
    } else {
        format!(
            "no policy is called `{name}`; the parameter tables are: {list} (policies: {})",
            crate::policy::names().join(", ")
        )
    };
    ConfigError::invalid(format!("policy.{name}"), format!("[policy.{name}]: {why}"))
}

/// Checks that every `[policy.<name>]` entry is a table that some policy
/// reads ([`policy_tables`]: a misspelt table would otherwise be silently
/// ignored) and drops empty ones, so an empty `[policy.fad]` section means
/// the same as no section (the policy's defaults) and hashes the same.
pub(crate) fn normalize_policy(policy: toml::Table) -> Result<toml::Table, ConfigError> {
    normalize_tables("policy", policy, |name| {
        if super::setup::policy_tables().iter().any(|(t, _)| *t == name) {
            Ok(())
        } else {
            Err(unknown_policy_table(name))
        }
    })
}

/// Checks that every `[engine.<name>]` entry names a registered engine and
/// is a table, and drops empty ones (an empty section means the defaults
/// and hashes the same as none). The parameters themselves are checked when
/// [`Config::validate`] builds each named engine.
pub(crate) fn normalize_engine_tables(engine: toml::Table) -> Result<toml::Table, ConfigError> {
    normalize_tables("engine", engine, |name| {
        if crate::engine::names().contains(&name) {
            Ok(())
        } else {
            Err(ConfigError::invalid(
                format!("engine.{name}"),
                format!(
                    "[engine.{name}]: no dedup engine is called `{name}`; engines: {}",
                    crate::engine::names().join(", ")
                ),
            ))
        }
    })
}

/// How deep a `[section.<name>]` parameter table may nest tables and
/// arrays. Parameters are plain values, so this only turns away input like
/// `--set policy.fad.a.b.c.d.e.f.g.h.i=1`: its `config show` would not load
/// back (the TOML parser limits how deep a document may nest), a crash
/// found by the `config` fuzz target (docs/reliability.md).
const MAX_PARAM_NESTING: usize = 8;

/// Levels of tables and arrays in table `t`, itself included.
fn table_nesting(t: &toml::Table) -> usize {
    1 + t.values().map(nesting).max().unwrap_or(0)
}

/// Levels of tables and arrays in `v` (a plain value is 0).
fn nesting(v: &toml::Value) -> usize {
    match v {
        toml::Value::Table(t) => table_nesting(t),
        toml::Value::Array(a) => 1 + a.iter().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

/// The first parameter in `t` (depth first, by key) that is a float other
/// than a finite number, as (dotted key, value).
fn non_finite(t: &toml::Table) -> Option<(String, f64)> {
    fn walk(key: String, v: &toml::Value) -> Option<(String, f64)> {
        match v {
            toml::Value::Float(f) if !f.is_finite() => Some((key, *f)),
            toml::Value::Table(t) => t.iter().find_map(|(k, v)| walk(format!("{key}.{k}"), v)),
            toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| walk(format!("{key}[{i}]"), v)),
            _ => None,
        }
    }
    t.iter().find_map(|(k, v)| walk(k.clone(), v))
}

/// `[section.<name>]` parameter tables: every name must pass `known`, every
/// value must be a table nesting at most [`MAX_PARAM_NESTING`] levels whose
/// numbers are finite (no parameter of a policy or engine can be `nan` or
/// `inf`; a `nan` also made `config show` fail to load back equal, a case
/// the `config` fuzz target found); empty tables are dropped.
fn normalize_tables(
    section: &str,
    tables: toml::Table,
    known: impl Fn(&str) -> Result<(), ConfigError>,
) -> Result<toml::Table, ConfigError> {
    let mut out = toml::Table::new();
    for (name, v) in tables {
        known(&name)?;
        match v {
            toml::Value::Table(t) if t.is_empty() => {}
            toml::Value::Table(t) => {
                let depth = table_nesting(&t);
                if depth > MAX_PARAM_NESTING {
                    return Err(ConfigError::invalid(
                        format!("{section}.{name}"),
                        format!(
                            "[{section}.{name}] nests tables or arrays {depth} levels deep; parameters nest at most \
                             {MAX_PARAM_NESTING} levels (every parameter of a policy or engine is a plain value)"
                        ),
                    ));
                }
                if let Some((key, f)) = non_finite(&t) {
                    return Err(ConfigError::invalid(
                        format!("{section}.{name}.{key}"),
                        format!("[{section}.{name}] {key} = {f}: parameters are finite numbers (not nan or inf)"),
                    ));
                }
                out.insert(name, toml::Value::Table(t));
            }
            other => {
                return Err(ConfigError::invalid(
                    format!("{section}.{name}"),
                    format!(
                        "{section}.{name} = {other}: {section} parameters go in a table, e.g. [{section}.{name}] or --set {section}.{name}.<param>=<value>"
                    ),
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every schema key is accepted by serde, and an unlisted key is not.
    #[test]
    fn schema_matches_structs() {
        for &(section, keys) in SCHEMA {
            for key in keys {
                let text = if section.is_empty() { format!("{key} = 1") } else { format!("[{section}]\n{key} = 1") };
                if let Err(ConfigError::Parse { message, .. }) = RawConfig::parse(&text, "t") {
                    assert!(!message.contains("unknown field"), "{section}.{key}: {message}");
                }
            }
            let text = if section.is_empty() { "bogus = 1".to_string() } else { format!("[{section}]\nbogus = 1") };
            if section != "policy" && section != "engine" {
                assert!(RawConfig::parse(&text, "t").is_err(), "{section}");
            }
        }
        // Every key of a fully populated document is in the schema.
        let full = RawConfig::from_config(&Config::fad_table1());
        let v = toml::Value::try_from(&full).unwrap();
        for (k, v) in v.as_table().unwrap() {
            match v.as_table() {
                Some(t) => {
                    let keys = SCHEMA.iter().find(|(s, _)| s == k).unwrap().1;
                    for kk in t.keys() {
                        assert!(keys.contains(&kk.as_str()), "{k}.{kk}");
                    }
                }
                None => assert!(SCHEMA[0].1.contains(&k.as_str()), "{k}"),
            }
        }
    }

    #[test]
    fn deeply_nested_parameter_tables_are_errors() {
        use crate::config::Config;
        // Found by the `config` fuzz target: such a config loaded, but its
        // `config show` did not load back.
        let deep = format!("policy.fad.{}=1", (0..40).map(|i| format!("k{i}")).collect::<Vec<_>>().join("."));
        let err = Config::from_toml_str_with_overrides("", "t.toml", &[deep]).unwrap_err().to_string();
        assert!(err.contains("nests tables or arrays 40 levels deep"), "{err}");
        let nested_array = format!("[engine.smartdedup]\nx = {}1{}\n", "[".repeat(9), "]".repeat(9));
        let err = Config::from_toml_str(&nested_array, "t.toml").unwrap_err().to_string();
        assert!(err.contains("at most 8 levels"), "{err}");
        // Up to the limit is left to the policy's own parameter check.
        let ok = Config::from_toml_str_with_overrides("", "t.toml", &["policy.fad.a.b.c.d.e.f.g=1".into()]).unwrap();
        let shown = ok.show();
        assert_eq!(Config::from_toml_str(&shown, &ok.name).unwrap(), ok);
    }

    #[test]
    fn non_finite_parameters_are_errors() {
        use crate::config::Config;
        // Found by the `config` fuzz target: `nan` loaded, and its `config
        // show` loaded back unequal (NaN is not equal to itself).
        for (set, msg) in [
            ("policy.fad.rho=nan", "[policy.fad] rho = NaN: parameters are finite numbers"),
            ("policy.har.x.y=-inf", "[policy.har] x.y = -inf: parameters are finite numbers"),
        ] {
            let err = Config::from_toml_str_with_overrides("", "t.toml", &[set.into()]).unwrap_err().to_string();
            assert!(err.contains(msg), "{set}: {err}");
        }
        let err = Config::from_toml_str("[engine.smartdedup]\nx = [1.0, inf]\n", "t.toml").unwrap_err().to_string();
        assert!(err.contains("[engine.smartdedup] x[1] = inf"), "{err}");
        // Finite floats stay (the policy checks their range).
        assert!(Config::from_toml_str_with_overrides("", "t.toml", &["policy.fad.rho=0.3".into()]).is_ok());
    }

    /// The registry's parameter tables, declared as data; each declared
    /// table is the one its policy reads (an unknown key in it is that
    /// policy's error), and a policy without one ignores every table.
    #[test]
    fn policy_tables_are_found_in_the_registry() {
        use crate::policy::{build, PolicyError, REGISTRY};
        let t: Vec<(&str, Vec<&str>)> = super::super::setup::policy_tables();
        let probe = |table: &str| {
            let mut cfg = Config::fad_table1();
            let mut params = toml::Table::new();
            params.insert("dedupsim-probe-not-a-parameter".into(), toml::Value::Boolean(true));
            cfg.policy.insert(table.into(), toml::Value::Table(params));
            cfg
        };
        for e in REGISTRY.iter() {
            let name = e.name;
            match e.item.table {
                Some(table) => assert!(
                    matches!(build(name, &probe(table)), Err(PolicyError::Params { policy, .. }) if policy == table),
                    "{name} does not read [policy.{table}]"
                ),
                None => {
                    for other in REGISTRY.names() {
                        assert!(build(name, &probe(other)).is_ok(), "{name} reads [policy.{other}]");
                    }
                }
            }
        }
        assert_eq!(
            t,
            [
                ("har", vec!["har"]),
                ("fcrc", vec!["fcrc"]),
                ("die-hint", vec!["die-hint", "die-hint-dedup"]),
                ("fad", vec!["fad-rpo", "fad-rwpo", "fad-rwpo-rewrite", "fad"]),
                ("reodedup-csr", vec!["reodedup-csr"]),
                ("reodedup-atr", vec!["reodedup-atr"]),
            ]
        );
        let msg = |n: &str| unknown_policy_table(n).to_string();
        assert!(
            msg("fadd").contains("no policy is called `fadd`")
                && msg("fadd").contains("tables are: har, fcrc, die-hint, fad"),
            "{}",
            msg("fadd")
        );
        assert!(msg("fad-rpo").contains("[policy.fad]"), "{}", msg("fad-rpo"));
        assert!(msg("native").contains("no parameters"), "{}", msg("native"));
    }

    #[test]
    fn overlay_merges_sections_and_policy() {
        let base = RawConfig::parse(
            "seed = 1\n[geometry]\nchannels = 8\npages_per_block = 64\n[policy.fad]\na = 1\nb = 2",
            "base",
        )
        .unwrap();
        let top = RawConfig::parse("name = \"x\"\n[geometry]\nchannels = 4\n[policy.fad]\nb = 3", "top").unwrap();
        let m = top.overlay(base);
        assert_eq!(m.seed, Some(RawSeed(1)));
        let g = m.geometry.unwrap();
        assert_eq!((g.channels, g.pages_per_block), (Some(4), Some(64)));
        let fad = m.policy.unwrap()["fad"].as_table().unwrap().clone();
        assert_eq!(fad["a"].as_integer(), Some(1));
        assert_eq!(fad["b"].as_integer(), Some(3));
        assert_eq!(m.name.as_deref(), Some("x"));
    }
}
