//! The timing model's parameters: flash and controller timing, the
//! scheduling and write-completion rules, the hash engines.

use crate::units::Nanos;
use serde::{Deserialize, Serialize};

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
    /// Which waiting operation chips and buses serve next.
    pub scheduling: Scheduling,
    /// When a page program counts as done for its write request.
    pub write_completion: WriteCompletion,
    /// SSDsim's shortcut: a read of a physical page that already has a read
    /// waiting on its channel completes 1 us after arriving.
    pub duplicate_read_shortcut: bool,
}

/// What [`Timing::new`](super::Timing::new) needs: the channels and chips,
/// the flash timing, the hash engines and whether GC migrates with
/// copyback. Resolved from a configuration by `Config::timing_params`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingParams {
    /// `geometry.channels`.
    pub channels: u32,
    /// `geometry.chips_per_channel`.
    pub chips_per_channel: u32,
    /// `[timing]`.
    pub timing: TimingConfig,
    /// The hash engines (`dedup.fingerprint`, `dedup.hash_*`).
    pub hash: HashParams,
    /// `gc.copyback`: GC migrations stay inside the plane (no bus transfer).
    pub copyback: bool,
}

/// The hash engines' parameters (`[dedup]`, FAD §IV-A).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HashParams {
    /// Fingerprint computation per written page (`dedup.fingerprint`).
    pub fingerprint: Nanos,
    /// Hash engines working in parallel (`dedup.hash_engines`).
    pub engines: u32,
    /// What one engine takes at a time (`dedup.hash_unit`).
    pub unit: HashUnit,
    /// Whether programs start as pages are hashed (`dedup.hash_overlap`).
    pub overlap: HashOverlap,
}

/// Which waiting operation a chip and a bus serve next (`timing.scheduling`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduling {
    /// Reads before writes and GC, on every chip and bus (SSDsim, MQSim).
    #[default]
    ReadPriority,
    /// First come, first served by arrival at the chip.
    Fcfs,
}

/// When a page program counts as done for its write request
/// (`timing.write_completion`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteCompletion {
    /// When its data is in the chip's page register (transfer in done):
    /// SSDsim 2.1.
    #[default]
    Transfer,
    /// When the program itself ends (transfer in + tPROG): MQSim.
    Program,
}

/// How a write request's pages are spread over the hash engines
/// (`dedup.hash_unit`). With one engine both are the same.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashUnit {
    /// Each page goes to the earliest-free engine on its own: a request's
    /// pages are hashed on several engines in parallel.
    #[default]
    Page,
    /// A request occupies one engine (the earliest free) for
    /// `pages x dedup.fingerprint`, its pages hashed one after another;
    /// requests, not pages, spread over the engines.
    Request,
}

/// When a write request's page programs may be issued relative to its
/// hashing (`dedup.hash_overlap`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashOverlap {
    /// Page k's program is issued when page k's hash is done, so hashing
    /// overlaps the flash work of the request's earlier pages.
    #[default]
    Pipelined,
    /// No program of a request is issued before every page of the request
    /// is hashed (FAD §III's write path places a file only after all its
    /// fingerprints are looked up).
    BeforeFlash,
}
