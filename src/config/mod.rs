//! Simulator configuration in two stages.
//!
//! A raw, serde-mirrored TOML document (presets in `presets/*.toml`, user
//! files, `--set key=value` overrides) is validated into the resolved
//! [`Config`] below, with derived geometry and units. Simulator constructors
//! take `&Config`, never positional argument lists.

use crate::units::Nanos;
use serde::{Deserialize, Serialize};

/// The unit of parallelism used for allocation striping and for FAD's
/// per-unit counters (FAD §II-C: "the same method can be applied to
/// channels, dies, or planes"). Units are numbered in SSDsim's dynamic
/// allocation order, channel fastest: see [`crate::geometry::Geometry`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ParallelUnit {
    Channel,
    #[default]
    Chip,
    Die,
    Plane,
}

/// Flash array shape (FAD Table I by default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeometryConfig {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Flash page size in bytes (a multiple of 4096).
    pub page_size: u32,
}

/// Flash and controller timing (FAD Table I; bus from SSDsim's parameter file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingConfig {
    /// tR: page read (array to register).
    pub read: Nanos,
    /// tPROG: page program.
    pub program: Nanos,
    /// tBERS: block erase.
    pub erase: Nanos,
    /// Channel transfer time per byte in picoseconds (SSDsim t_RC = t_WC =
    /// 25 ns on an 8-bit bus => 25_000 ps/byte, ~102 us per 4 KiB page).
    pub transfer_ps_per_byte: u64,
    /// Derived: one page over the channel bus.
    pub page_transfer: Nanos,
}

/// Garbage collection and wear levelling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GcConfig {
    /// GC runs in a plane when its free blocks fall below this many.
    pub min_free_blocks: u32,
    /// Migrate valid pages with copyback inside the plane (no bus transfer).
    pub copyback: bool,
    /// Wear levelling: prefer the free block with the lowest erase count,
    /// and break greedy-victim ties toward the least-worn block.
    pub wear_leveling: bool,
}

/// How the trace is replayed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum ReplayConfig {
    /// Issue each request at its trace timestamp multiplied by `time_scale`.
    OpenLoop { time_scale: f64 },
    /// Ignore timestamps; keep `queue_depth` requests outstanding.
    ClosedLoop { queue_depth: u32 },
}

/// The deduplication engine (CAFTL-like, FAD §IV-A).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupConfig {
    /// Fingerprint computation per written page (FAD §IV-A: 32 us).
    pub fingerprint: Nanos,
    /// Number of hash engines working in parallel (FCFS among them).
    pub hash_engines: u32,
}

/// The fully resolved, validated configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Preset name or config file the configuration came from.
    pub name: String,
    pub geometry: GeometryConfig,
    /// Fraction of raw capacity hidden from the host (0.20 = 20%).
    pub over_provisioning: f64,
    pub timing: TimingConfig,
    pub gc: GcConfig,
    /// Granularity of the allocator's cyclic pointer.
    pub alloc_unit: ParallelUnit,
    pub replay: ReplayConfig,
    pub dedup: DedupConfig,
    /// Per-policy parameter tables (`[policy.fad]`, `[policy.har]`, ...),
    /// parsed by each policy into its own typed parameters.
    pub policy: toml::Table,
    /// Seed for every random choice of a run (content models, synthetic workloads).
    pub seed: u64,
}

impl Config {
    /// FAD Table I (the default preset, `fad-table1`), built in code.
    pub fn fad_table1() -> Config {
        let transfer_ps_per_byte = 25_000;
        let page_size = 4096;
        Config {
            name: "fad-table1".into(),
            geometry: GeometryConfig {
                channels: 8,
                chips_per_channel: 2,
                dies_per_chip: 1,
                planes_per_die: 10,
                blocks_per_plane: 2048,
                pages_per_block: 64,
                page_size,
            },
            over_provisioning: 0.20,
            timing: TimingConfig {
                read: Nanos::from_us(20),
                program: Nanos::from_us(200),
                erase: Nanos(1_500_000),
                transfer_ps_per_byte,
                page_transfer: Nanos(page_size as u64 * transfer_ps_per_byte / 1000),
            },
            gc: GcConfig {
                min_free_blocks: 64,
                copyback: true,
                wear_leveling: true,
            },
            alloc_unit: ParallelUnit::Chip,
            replay: ReplayConfig::OpenLoop { time_scale: 1.0 },
            dedup: DedupConfig {
                fingerprint: Nanos::from_us(32),
                hash_engines: 1,
            },
            policy: toml::Table::new(),
            seed: 42,
        }
    }
}
