//! Synthetic replicas of the nine FAD workloads, matched to Table II.
//!
//! The full FIU, MSR and VDI traces FAD evaluates are not available offline,
//! so `dedupsim reproduce fad` replays, for each row of Table II, a seeded
//! synthetic workload whose **read ratio, average read size, average request
//! size, number of I/Os and deduplication rate** equal that row. Everything
//! Table II does not state is a documented choice of this module (also in
//! `docs/reproduce.md`):
//!
//! * **Write size** follows from the table: `avg_req = r·read + (1−r)·write`,
//!   so `write = (avg_req − r·read) / (1 − r)`. "KB" is read as KiB.
//! * **Size distributions**: reads and writes each draw whole 4 KiB pages
//!   from a truncated geometric distribution on `1..=128` pages (4 KiB to
//!   512 KiB, the usual largest block-layer request), `P(n) ∝ q^(n−1)`, with
//!   `q` solved so the mean equals the table's size exactly. Small requests
//!   dominate and a tail of large ones carries much of the volume, as in
//!   block traces.
//! * **Footprint**: a third of the bytes the trace requests (reads plus
//!   writes), clamped to `[2 GiB, 32 GiB]`, i.e. at most half of the 64 GiB
//!   the Table I device exposes. The hot region is its first tenth.
//! * **Locality**: writes continue the previous write 30% of the time, land
//!   in the hot region 40% and anywhere in the footprint 30%. Reads re-read a
//!   recently written file whole (one of the last 4,096 write requests, its
//!   exact extent: a file is one write request, FAD §III-B) 30% of the time,
//!   continue the previous read 20%, hit the hot region 20% and land
//!   anywhere 30%. Re-reads have the write size distribution, so the other
//!   reads' mean is set to `(read − 0.3·write) / 0.7` to keep the table's
//!   average read size.
//! * **Files**: every generated request is one *file*. FAD's authors
//!   preprocess a trace by merging consecutive same-op, address-contiguous
//!   records into one file (`--files merged`, [`crate::workload::FileRule`]),
//!   and Table II's sizes are those of the merged files (FIU records are
//!   single 4 KiB blocks, yet Table II's FIU read sizes are 24.5-55.4 KB; the
//!   FIU Mail excerpt's merged read runs average 31.25 KB against Table II's
//!   30.5 KB, `../shared/traces/fiu-iodedup-mail/SOURCE.md`). So no request
//!   continues the address of a request of the same op immediately before it
//!   (such a continuation starts one page later; a re-read picks another
//!   recent file): merging leaves a replica unchanged, and its statistics
//!   are Table II's whichever file rule the run uses.
//! * **Inter-arrival times**: Poisson arrivals whose mean makes the busiest
//!   resource of the run's device [`DEFAULT_UTILIZATION`] (40%) busy on
//!   average: the channel buses (page transfer per page over the channels;
//!   Table I: 102.4 µs per 4 KiB page, 8 channels) or the chips (tR +
//!   transfer per read page, transfer + tPROG per written page, over the
//!   chips; Table I: 16) with every page programmed (Native), or the hash
//!   engines (fingerprint time per written page over the engines; Table I:
//!   one, 32 µs) under deduplication. The device is the experiment's base
//!   configuration ([`ReplicaDevice::of`]: the active preset with its
//!   overrides), so a faster bus or more hash engines bring the arrivals
//!   closer together and the load stays the one asked for. The FAD traces'
//!   durations are unknown and the real traces are far too idle to stress the
//!   device, so a moderately loaded device is the assumption that lets chip
//!   conflicts show as latency without saturating anything.
//! * **Content**: every timed write carries content ids drawn by the Zipf
//!   model of FAD §IV-A (`a = 0.2`), calibrated so the *realized* dedup rate
//!   of the replayed writes equals Table II (Homes 33.3%, Mail 91.0%,
//!   Web-vm 47.3%, the others 50%). The six traces without data (MSR, VDI)
//!   get i.i.d. page contents exactly as the paper does. Homes, Mail and
//!   Web-vm carry real data in the paper, whose duplicates come largely as
//!   whole extents (the same file or mail stored twice), so their replicas
//!   also copy earlier write requests: `copy = 0.85 × dedup rate` of write
//!   requests copy an earlier one, and the i.i.d. part is calibrated so the
//!   overall rate still hits the row.
//! * **Preconditioning**: as for any trace ([`crate::runner::prepare`]):
//!   pages read before they are written are written once, untimed, with
//!   content from the run's content model (default Zipf a = 0.2, 50%).
//!
//! `scale` multiplies the request count and the footprint (hot region
//! included), so a scaled replica keeps the same shape, load and overwrite
//! pattern; `--quick` uses [`QUICK_SCALE`].
//!
//! Replicas are labelled [`REPLICA_LABEL`] in every output.

use crate::content::{try_assign_content, ContentError, ContentModel, ZipfN, FAD_ZIPF_A};
use crate::synth::SizeSampler;
use crate::units::{Nanos, Op};
use crate::workload::{Provenance, Request, Workload, NO_CONTENT};
use rand::{Rng, SeedableRng};
use rand_distr::Exp1;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Provenance source of every replica.
pub const REPLICA_LABEL: &str = "synthetic (Table II-matched)";

/// Default utilization of the busiest resource (see the module doc).
pub const DEFAULT_UTILIZATION: f64 = 0.4;

/// Scale of `--quick` replicas (1/20 of Table II's I/O counts).
pub const QUICK_SCALE: f64 = 0.05;

/// Largest request of the size distributions, in 4 KiB pages (512 KiB).
pub const MAX_REQUEST_PAGES: u32 = 128;

/// Bumped whenever the generator changes what it produces (part of the
/// experiment cache key).
pub const GENERATOR_VERSION: u32 = 2;

const KIB: f64 = 1024.0;
const GIB: u64 = 1 << 30;
const PAGE: u64 = 4096;

/// Salts so that a replica's requests and the contents of its timed writes
/// use distinct random streams of the run seed (preconditioning contents
/// come from `runner::prepare` with the run seed itself).
const REQ_SALT: u64 = 0x5245_504c_4943_4131; // "REPLICA1"
const CONTENT_SALT: u64 = 0x5245_504c_434f_4e54; // "REPLCONT"

/// Errors building a replica.
#[derive(Debug, Error)]
pub enum ReplicaError {
    #[error("unknown Table II workload '{0}'; available: {names}", names = names().join(", "))]
    Unknown(String),
    #[error("invalid replica `{input}`: {reason} (use NAME or NAME@SCALE, e.g. mail or mail@0.05)")]
    Parse { input: String, reason: String },
    #[error("replica content: {0}")]
    Content(#[from] ContentError),
}

/// One row of FAD Table II, plus where the trace comes from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TableRow {
    /// Display name as in the paper ("Web-vm").
    pub name: &'static str,
    /// Short lowercase key ("webvm"), used on the command line.
    pub key: &'static str,
    /// Trace collection.
    pub collection: &'static str,
    pub read_ratio: f64,
    /// "Avg. Read Size", KB (read as KiB).
    pub avg_read_kb: f64,
    /// "Total I/Os (K)".
    pub total_ios_k: f64,
    /// "Avg. Req. Size", KB.
    pub avg_req_kb: f64,
    /// "Dedup. Rate".
    pub dedup_rate: f64,
    /// The paper's trace carries real data (FIU IODedup).
    pub real_content: bool,
    /// Lowercase file-name patterns that identify the real trace: a name
    /// matches when it starts with a `^`-prefixed pattern or contains any
    /// other pattern.
    pub file_patterns: &'static [&'static str],
    /// Trace format the real trace must be detected as.
    pub format: &'static str,
    /// How long the real trace lasts, seconds (for `--utilization known`):
    /// FIU IODedup 3 weeks (11/01/08-11/21/08), MSR Cambridge one week
    /// (from 2007-02-22), SYSTOR'17 VDI one hour (FAD's LUN0-2 are the
    /// hourly files `2016021612-LUN0..2`); sources:
    /// `../shared/traces/*/SOURCE.md`.
    pub duration_s: f64,
}

impl TableRow {
    /// The write size implied by the table: `(avg_req − r·read) / (1 − r)`, KB.
    pub fn avg_write_kb(&self) -> f64 {
        (self.avg_req_kb - self.read_ratio * self.avg_read_kb) / (1.0 - self.read_ratio)
    }

    /// The real trace's average load on `device`: Table II's I/Os over the
    /// trace's duration, times the busiest resource's demand per request
    /// ([`ReplicaDevice::demand_us`]), at most 1. On Table I: FIU rows
    /// 0.01-0.03%, MSR rows 0.002-0.05%, VDI rows 5.5-7.0% (the VDI traces pack
    /// their requests into one hour).
    pub fn known_utilization(&self, device: &ReplicaDevice) -> f64 {
        let (bus, chip, hash) = device.demand_us(self);
        let per_s = self.total_ios_k * 1000.0 / self.duration_s;
        (per_s * bus.max(chip).max(hash) * 1e-6).min(1.0)
    }

    /// Whether a file name (any case) is this row's real trace by name.
    pub fn matches_file_name(&self, file_name: &str) -> bool {
        let n = file_name.to_ascii_lowercase();
        self.file_patterns.iter().any(|p| match p.strip_prefix('^') {
            Some(prefix) => n.starts_with(prefix),
            None => n.contains(p),
        })
    }
}

/// FIU IODedup traces: 3 weeks, 11/01/08-11/21/08 (21 days).
const FIU_DURATION_S: f64 = 21.0 * 86_400.0;
/// MSR Cambridge: one week from 2007-02-22.
const MSR_DURATION_S: f64 = 7.0 * 86_400.0;
/// SYSTOR'17 VDI: one file per hour.
const VDI_DURATION_S: f64 = 3_600.0;

/// FAD Table II ("Trace workload characteristics"), in the paper's order.
pub const TABLE_II: [TableRow; 9] = [
    TableRow {
        name: "Homes",
        key: "homes",
        collection: "FIU IODedup",
        read_ratio: 0.195,
        avg_read_kb: 24.5,
        total_ios_k: 3268.0,
        avg_req_kb: 21.4,
        dedup_rate: 0.333,
        real_content: true,
        file_patterns: &["^homes"],
        format: "fiu",
        duration_s: FIU_DURATION_S,
    },
    TableRow {
        name: "Mail",
        key: "mail",
        collection: "FIU IODedup",
        read_ratio: 0.215,
        avg_read_kb: 30.5,
        total_ios_k: 1478.0,
        avg_req_kb: 52.0,
        dedup_rate: 0.910,
        real_content: true,
        file_patterns: &["^mail", "^cheetah"],
        format: "fiu",
        duration_s: FIU_DURATION_S,
    },
    TableRow {
        name: "Web-vm",
        key: "webvm",
        collection: "FIU IODedup",
        read_ratio: 0.302,
        avg_read_kb: 55.4,
        total_ios_k: 1778.0,
        avg_req_kb: 32.1,
        dedup_rate: 0.473,
        real_content: true,
        file_patterns: &["^webvm", "^web-vm", "^web_vm", "^webmail+online"],
        format: "fiu",
        duration_s: FIU_DURATION_S,
    },
    TableRow {
        name: "mds1",
        key: "mds1",
        collection: "MSR Cambridge",
        read_ratio: 0.929,
        avg_read_kb: 63.5,
        total_ios_k: 1548.0,
        avg_req_kb: 60.1,
        dedup_rate: 0.50,
        real_content: false,
        file_patterns: &["^mds_1", "^mds1", "^mds-1"],
        format: "msr",
        duration_s: MSR_DURATION_S,
    },
    TableRow {
        name: "stg1",
        key: "stg1",
        collection: "MSR Cambridge",
        read_ratio: 0.538,
        avg_read_kb: 91.3,
        total_ios_k: 1698.0,
        avg_req_kb: 52.8,
        dedup_rate: 0.50,
        real_content: false,
        file_patterns: &["^stg_1", "^stg1", "^stg-1"],
        format: "msr",
        duration_s: MSR_DURATION_S,
    },
    TableRow {
        name: "web1",
        key: "web1",
        collection: "MSR Cambridge",
        read_ratio: 0.483,
        avg_read_kb: 61.5,
        total_ios_k: 135.0,
        avg_req_kb: 34.7,
        dedup_rate: 0.50,
        real_content: false,
        file_patterns: &["^web_1", "^web1", "^web-1"],
        format: "msr",
        duration_s: MSR_DURATION_S,
    },
    TableRow {
        name: "LUN0",
        key: "lun0",
        collection: "SYSTOR'17 VDI",
        read_ratio: 0.756,
        avg_read_kb: 35.4,
        total_ios_k: 2317.0,
        avg_req_kb: 33.8,
        dedup_rate: 0.50,
        real_content: false,
        file_patterns: &["lun0"],
        format: "systor",
        duration_s: VDI_DURATION_S,
    },
    TableRow {
        name: "LUN1",
        key: "lun1",
        collection: "SYSTOR'17 VDI",
        read_ratio: 0.811,
        avg_read_kb: 46.1,
        total_ios_k: 1647.0,
        avg_req_kb: 42.6,
        dedup_rate: 0.50,
        real_content: false,
        file_patterns: &["lun1"],
        format: "systor",
        duration_s: VDI_DURATION_S,
    },
    TableRow {
        name: "LUN2",
        key: "lun2",
        collection: "SYSTOR'17 VDI",
        read_ratio: 0.690,
        avg_read_kb: 25.6,
        total_ios_k: 2745.0,
        avg_req_kb: 22.6,
        dedup_rate: 0.50,
        real_content: false,
        file_patterns: &["lun2"],
        format: "systor",
        duration_s: VDI_DURATION_S,
    },
];

/// Keys of the Table II rows, in order.
pub fn names() -> Vec<&'static str> {
    TABLE_II.iter().map(|r| r.key).collect()
}

/// The Table II row for a key or display name (any case; `web-vm`, `mds_1`
/// and `lun0` spellings accepted).
pub fn row(name: &str) -> Option<&'static TableRow> {
    let n: String = name.to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    TABLE_II.iter().find(|r| r.key == n)
}

/// A replica reference: a Table II row and a scale, written `NAME` or
/// `NAME@SCALE` (e.g. `mail`, `mail@0.05`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplicaRef {
    pub row: &'static TableRow,
    pub scale: f64,
}

impl FromStr for ReplicaRef {
    type Err = ReplicaError;
    fn from_str(s: &str) -> Result<Self, ReplicaError> {
        let (name, scale) = match s.trim().split_once('@') {
            Some((n, sc)) => {
                let x: f64 = sc.trim().parse().map_err(|_| ReplicaError::Parse {
                    input: s.to_string(),
                    reason: format!("scale `{sc}` is not a number"),
                })?;
                (n, x)
            }
            None => (s.trim(), 1.0),
        };
        if !(scale.is_finite() && scale > 0.0 && scale <= 1.0) {
            return Err(ReplicaError::Parse {
                input: s.to_string(),
                reason: format!("scale {scale} must be in (0, 1]"),
            });
        }
        let row = row(name).ok_or_else(|| ReplicaError::Unknown(name.to_string()))?;
        Ok(ReplicaRef { row, scale })
    }
}

impl fmt::Display for ReplicaRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale == 1.0 {
            f.write_str(self.row.key)
        } else {
            write!(f, "{}@{}", self.row.key, self.scale)
        }
    }
}

/// Truncated geometric size distribution on `1..=max_pages`:
/// `P(n) ∝ q^(n−1)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeometricSize {
    pub max_pages: u32,
    pub q: f64,
}

impl GeometricSize {
    /// The distribution on `1..=max` with mean `mean` pages (clamped to
    /// the achievable range `[1, (max+1)/2)`), `q` found by bisection.
    pub fn with_mean(mean: f64, max: u32) -> GeometricSize {
        let hi_mean = (max as f64 + 1.0) / 2.0;
        if mean <= 1.0 {
            return GeometricSize { max_pages: max, q: 0.0 };
        }
        let target = mean.min(hi_mean - 1e-9);
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..200 {
            let mid = (lo + hi) / 2.0;
            if (GeometricSize { max_pages: max, q: mid }).mean() < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        GeometricSize { max_pages: max, q: (lo + hi) / 2.0 }
    }

    fn weights(&self) -> Vec<f64> {
        let mut w = Vec::with_capacity(self.max_pages as usize);
        let mut x = 1.0;
        for _ in 0..self.max_pages {
            w.push(x);
            x *= self.q;
        }
        w
    }

    /// A sampler of the distribution.
    fn sampler(&self) -> SizeSampler {
        SizeSampler::table((1..=self.max_pages).collect(), &self.weights())
    }

    /// Mean in pages.
    pub fn mean(&self) -> f64 {
        let w = self.weights();
        let tw: f64 = w.iter().sum();
        w.iter().enumerate().map(|(i, x)| (i + 1) as f64 * x).sum::<f64>() / tw
    }
}

/// Address locality of a replica (fractions of requests of each op).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Locality {
    /// Writes continuing right after the previous write.
    pub write_seq: f64,
    /// Writes placed uniformly in the hot region.
    pub write_hot: f64,
    /// Reads starting at the first page of one of the last
    /// `reread_window` write requests.
    pub read_reread: f64,
    /// Reads continuing right after the previous read.
    pub read_seq: f64,
    /// Reads placed uniformly in the hot region.
    pub read_hot: f64,
    /// How many recent write requests a re-read chooses from.
    pub reread_window: u32,
    /// Hot region size as a fraction of the footprint (it starts at page 0).
    pub hot_fraction: f64,
}

impl Default for Locality {
    fn default() -> Self {
        Locality {
            write_seq: 0.3,
            write_hot: 0.4,
            read_reread: 0.3,
            read_seq: 0.2,
            read_hot: 0.2,
            reread_window: 4096,
            hot_fraction: 0.1,
        }
    }
}

/// Lowest utilization `--utilization` (and a sweep's `utilization`)
/// accepts: below it, a full-scale replica's arrivals span more simulated
/// time than the clock holds.
pub const MIN_UTILIZATION: f64 = 1e-6;

/// The load replicas are generated for (`--utilization`; issue 9 item 2).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Load {
    /// The real trace's own average load: Table II's I/O count over the
    /// trace's duration ([`TableRow::duration_s`]), as a utilization of the
    /// busiest resource of the device ([`TableRow::known_utilization`]).
    Known,
    /// A utilization of the busiest resource, in (0, 1].
    Utilization(f64),
}

impl Load {
    /// The utilization for `row` on `device`.
    pub fn for_row(self, row: &TableRow, device: &ReplicaDevice) -> f64 {
        match self {
            Load::Known => row.known_utilization(device),
            Load::Utilization(u) => u,
        }
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Load::Known => f.write_str("known"),
            Load::Utilization(u) => write!(f, "{u}"),
        }
    }
}

impl FromStr for Load {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "known" {
            return Ok(Load::Known);
        }
        match s.parse::<f64>() {
            Ok(u) if (MIN_UTILIZATION..=1.0).contains(&u) => Ok(Load::Utilization(u)),
            Ok(u) if u > 0.0 && u < MIN_UTILIZATION => Err(format!(
                "`{s}`: a utilization below {MIN_UTILIZATION:e} spreads a replica's arrivals over more than \
                 the simulated clock can replay (years between requests); use a utilization in [{MIN_UTILIZATION:e}, 1], e.g. 0.4"
            )),
            _ => Err(format!(
                "`{s}`: use `known` (each trace's own average load) or a utilization of the busiest resource in (0, 1], e.g. 0.4"
            )),
        }
    }
}

/// What Table II's dedup rate is matched on (`--dedup-rate`; issue 9 item 3).
///
/// Table II's rate is a property of the trace: the share of written 4 KiB
/// blocks whose MD5 was seen before (FAD's authors' simulator deduplicates
/// any such block, forever). A device's fingerprint index forgets a content
/// when its last reference dies (an overwrite), so Deduplication achieves
/// less on the device than the trace contains (quick replicas at the trace
/// rate: Homes 17% vs 33.3%, Mail 80% vs 91%).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DedupTarget {
    /// The replayed writes' content repeats at Table II's rate.
    Trace,
    /// The content model is calibrated (by bisection on the trace-level
    /// rate, see [`device_dedup_rate`]) so that Deduplication achieves
    /// Table II's rate on the device; the trace-level rate is then higher.
    /// The default: in FAD's runs every block whose MD5 was seen before was
    /// deduplicated, so Table II's rate is what its devices deduplicated.
    #[default]
    Device,
}

impl DedupTarget {
    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DedupTarget::Trace => "trace",
            DedupTarget::Device => "device",
        }
    }
}

impl FromStr for DedupTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "trace" => Ok(DedupTarget::Trace),
            "device" => Ok(DedupTarget::Device),
            other => Err(format!(
                "unknown dedup-rate target `{other}`: use `trace` (Table II's rate is the trace's) or `device` (Deduplication achieves it on the device)"
            )),
        }
    }
}

/// Everything that determines a replica: derived from a Table II row, a
/// scale and a utilization by [`ReplicaSpec::new`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaSpec {
    /// Table II key ("mail").
    pub name: String,
    pub scale: f64,
    pub requests: u64,
    pub read_ratio: f64,
    /// Size of reads other than re-reads (re-reads read a whole earlier
    /// write, so their sizes follow `write_size`).
    pub read_size: GeometricSize,
    pub write_size: GeometricSize,
    pub footprint_pages: u64,
    pub hot_pages: u64,
    pub locality: Locality,
    /// Mean of the exponential inter-arrival times.
    pub mean_interarrival_us: f64,
    /// Utilization of the busiest resource the mean was chosen for.
    pub utilization: f64,
    /// Content of the timed writes.
    pub content: ContentModel,
    /// What the content model's dedup rate is matched on.
    #[serde(default)]
    pub dedup_target: DedupTarget,
}

/// The device a replica's load is computed for: the per-page times and
/// resource counts of the run's configuration (the active preset with its
/// overrides), so that `--utilization` means the same load on any device.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaDevice {
    /// Channel transfer of one page, µs.
    pub page_transfer_us: f64,
    /// Array read (tR), µs.
    pub read_us: f64,
    /// Page program (tPROG), µs.
    pub program_us: f64,
    /// Fingerprint of one page, µs.
    pub fingerprint_us: f64,
    pub hash_engines: u32,
    pub channels: u32,
    pub chips: u32,
}

impl ReplicaDevice {
    /// The device of a configuration. The hash demand is engine time:
    /// `dedup.fingerprint` per written page over `dedup.hash_engines`, the
    /// same under every hash engine model (`dedup.hash_unit` and
    /// `dedup.hash_overlap` change when a request's programs are issued,
    /// not how long the engines are busy), so those keys do not enter.
    pub fn of(cfg: &crate::config::Config) -> ReplicaDevice {
        ReplicaDevice {
            page_transfer_us: cfg.timing.page_transfer.as_us_f64(),
            read_us: cfg.timing.read.as_us_f64(),
            program_us: cfg.timing.program.as_us_f64(),
            fingerprint_us: cfg.dedup.fingerprint.as_us_f64(),
            hash_engines: cfg.dedup.hash_engines.max(1),
            channels: cfg.geometry.channels.max(1),
            chips: cfg.chips().max(1),
        }
    }

    /// FAD Table I (the `fad-table1` preset).
    pub fn table1() -> ReplicaDevice {
        ReplicaDevice::of(&crate::config::Config::fad_table1())
    }

    /// Per-request resource demand of a row on this device, in µs: (bus,
    /// chip, hash engine), as described in the module doc.
    pub fn demand_us(&self, row: &TableRow) -> (f64, f64, f64) {
        let xfer = self.page_transfer_us;
        let r = row.read_ratio;
        let rp = r * row.avg_read_kb * KIB / PAGE as f64;
        let wp = (1.0 - r) * row.avg_write_kb() * KIB / PAGE as f64;
        let bus = (rp + wp) * xfer / f64::from(self.channels);
        let chip = (rp * (self.read_us + xfer) + wp * (xfer + self.program_us)) / f64::from(self.chips);
        let hash = wp * self.fingerprint_us / f64::from(self.hash_engines);
        (bus, chip, hash)
    }
}

impl Default for ReplicaDevice {
    fn default() -> Self {
        ReplicaDevice::table1()
    }
}

/// Per-request resource demand of a row on the Table I device, in µs:
/// (bus, chip, hash engine), as described in the module doc.
pub fn table1_demand_us(row: &TableRow) -> (f64, f64, f64) {
    ReplicaDevice::table1().demand_us(row)
}

impl ReplicaSpec {
    /// The replica of `row` at `scale` for a busiest-resource utilization
    /// of the Table I device ([`ReplicaSpec::on_device`] for another).
    pub fn new(row: &TableRow, scale: f64, utilization: f64) -> ReplicaSpec {
        ReplicaSpec::on_device(row, scale, utilization, &ReplicaDevice::table1())
    }

    /// The replica of `row` at `scale` whose Poisson arrivals keep the
    /// busiest resource of `device` busy `utilization` of the time.
    pub fn on_device(row: &TableRow, scale: f64, utilization: f64, device: &ReplicaDevice) -> ReplicaSpec {
        let requests = ((row.total_ios_k * 1000.0 * scale).round() as u64).max(1);
        let read_pages = row.avg_read_kb * KIB / PAGE as f64;
        let write_pages = row.avg_write_kb() * KIB / PAGE as f64;
        let locality = Locality::default();
        // Re-reads read whole files (mean = the write size), so the other
        // reads' mean is chosen to keep the overall read mean at the table's.
        let f = locality.read_reread;
        let other_read_pages = ((read_pages - f * write_pages) / (1.0 - f)).max(1.0);
        // Footprint: a third of the requested volume, in [2, 32] GiB, scaled.
        let volume = row.total_ios_k * 1000.0 * row.avg_req_kb * KIB;
        let full = (volume / 3.0).clamp(2.0 * GIB as f64, 32.0 * GIB as f64);
        let footprint_pages = ((full * scale / PAGE as f64) as u64).max(4 * MAX_REQUEST_PAGES as u64);
        let hot_pages = ((footprint_pages as f64 * locality.hot_fraction) as u64).max(MAX_REQUEST_PAGES as u64);
        let (bus, chip, hash) = device.demand_us(row);
        let mean_interarrival_us = bus.max(chip).max(hash) / utilization;
        let copy = if row.real_content { (0.85 * row.dedup_rate * 100.0).round() / 100.0 } else { 0.0 };
        ReplicaSpec {
            name: row.key.to_string(),
            scale,
            requests,
            read_ratio: row.read_ratio,
            read_size: GeometricSize::with_mean(other_read_pages, MAX_REQUEST_PAGES),
            write_size: GeometricSize::with_mean(write_pages, MAX_REQUEST_PAGES),
            footprint_pages,
            hot_pages,
            locality,
            mean_interarrival_us,
            utilization,
            content: ContentModel::Zipf { a: FAD_ZIPF_A, n: ZipfN::TargetDedup(row.dedup_rate), copy },
            dedup_target: DedupTarget::default(),
        }
    }

    /// One line describing the replica (for reports).
    pub fn describe(&self) -> String {
        format!(
            "{} requests, read {:.1}%, sizes (geometric, pages): non-re-read reads mean {:.2}, writes mean {:.2}, \
             footprint {:.2} GiB (hot {:.2} GiB), Poisson arrivals mean {:.1} us, content {} (dedup rate matched on the {})",
            self.requests,
            self.read_ratio * 100.0,
            self.read_size.mean(),
            self.write_size.mean(),
            self.footprint_pages as f64 * PAGE as f64 / GIB as f64,
            self.hot_pages as f64 * PAGE as f64 / GIB as f64,
            self.mean_interarrival_us,
            self.content,
            self.dedup_target.name()
        )
    }
}

/// Where a generated read or write of `len` pages drawn at `lpn` starts:
/// `lpn`, unless the request just before it has the same op and ends at
/// `lpn` (the two would be one file under [`crate::workload::FileRule::Merged`]),
/// in which case one page later (or at 0 past the footprint). A replica is a
/// sequence of *files*: Table II's sizes and counts are those of FAD's
/// merged files (see the module doc), so merging must not change them.
fn file_start(prev: Option<(Op, u64)>, op: Op, lpn: u64, len: u64, fp: u64) -> u64 {
    if prev != Some((op, lpn)) {
        lpn
    } else if lpn + 1 + len <= fp {
        lpn + 1
    } else {
        0
    }
}

/// Generates the replica with run seed `seed`: requests (see the module
/// doc) and the content of every write. Deterministic.
pub fn generate(spec: &ReplicaSpec, seed: u64) -> Result<Workload, ReplicaError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ REQ_SALT);
    let reads = spec.read_size.sampler();
    let writes = spec.write_size.sampler();
    let loc = &spec.locality;
    let fp = spec.footprint_pages;
    let hot = spec.hot_pages.min(fp);
    let window = loc.reread_window.max(1) as usize;
    let mut recent: Vec<(u32, u32)> = Vec::with_capacity(window);
    let mut recent_next = 0usize;
    let mut requests = Vec::with_capacity(spec.requests as usize);
    let (mut next_read, mut next_write) = (0u64, 0u64);
    let mean_ns = spec.mean_interarrival_us * 1e3;
    let mut now = 0u64;
    let uniform = |rng: &mut Xoshiro256PlusPlus, span: u64, len: u64| rng.gen_range(0..=span.max(len) - len);
    // The previous request (op, end page): a request of the same op that
    // starts where it ended would be the same file under `--files merged`.
    let mut prev: Option<(Op, u64)> = None;
    let continues = |prev: Option<(Op, u64)>, op: Op, lpn: u64| prev == Some((op, lpn));
    for _ in 0..spec.requests {
        let is_read = rng.gen::<f64>() < spec.read_ratio;
        let u: f64 = rng.gen();
        let (op, pages, lpn) = if is_read && u < loc.read_reread && !recent.is_empty() {
            // Re-read a recently written file, whole (another one if this one
            // would continue the read just before it).
            let mut pick = recent[rng.gen_range(0..recent.len())];
            for _ in 0..4 {
                if !continues(prev, Op::Read, pick.0 as u64) {
                    break;
                }
                pick = recent[rng.gen_range(0..recent.len())];
            }
            let (lpn, len) = pick;
            next_read = lpn as u64 + len as u64;
            (Op::Read, len as u64, lpn as u64)
        } else if is_read {
            let len = reads.sample(&mut rng) as u64;
            let lpn = if u < loc.read_reread + loc.read_seq {
                if next_read + len <= fp {
                    next_read
                } else {
                    0
                }
            } else if u < loc.read_reread + loc.read_seq + loc.read_hot {
                uniform(&mut rng, hot, len)
            } else {
                uniform(&mut rng, fp, len)
            };
            let lpn = file_start(prev, Op::Read, lpn, len, fp);
            next_read = lpn + len;
            (Op::Read, len, lpn)
        } else {
            let len = writes.sample(&mut rng) as u64;
            let lpn = if u < loc.write_seq {
                if next_write + len <= fp {
                    next_write
                } else {
                    0
                }
            } else if u < loc.write_seq + loc.write_hot {
                uniform(&mut rng, hot, len)
            } else {
                uniform(&mut rng, fp, len)
            };
            let lpn = file_start(prev, Op::Write, lpn, len, fp);
            next_write = lpn + len;
            if recent.len() < window {
                recent.push((lpn as u32, len as u32));
            } else {
                recent[recent_next] = (lpn as u32, len as u32);
                recent_next = (recent_next + 1) % window;
            }
            (Op::Write, len, lpn)
        };
        prev = Some((op, lpn + pages));
        requests.push(Request {
            arrival: Nanos(now),
            op,
            lpn: lpn as u32,
            pages: pages as u32,
            content: NO_CONTENT,
            stream: 0,
        });
        let x: f64 = rng.sample(Exp1);
        now = now.saturating_add((x * mean_ns).round() as u64);
    }
    let mut w =
        Workload::from_requests(Provenance { name: spec.name.clone(), source: REPLICA_LABEL.to_string() }, requests);
    match (spec.dedup_target, spec.content) {
        (DedupTarget::Device, ContentModel::Zipf { a, n: ZipfN::TargetDedup(target), copy }) => {
            let assign = |t: f64| -> Result<(Workload, f64), ReplicaError> {
                let mut x = w.clone();
                try_assign_content(
                    &mut x,
                    &ContentModel::Zipf { a, n: ZipfN::TargetDedup(t), copy },
                    seed ^ CONTENT_SALT,
                )?;
                let rate = device_dedup_rate(&x);
                Ok((x, rate))
            };
            // The device rate grows with the trace rate (same seed: coupled
            // draws); bisect on the trace rate, keep the closest.
            let (mut lo, mut hi) = (target, MAX_TRACE_DEDUP);
            let mut best = assign(lo)?;
            if best.1 < target {
                let top = assign(hi)?;
                if top.1 <= target {
                    best = top;
                } else {
                    for _ in 0..CALIBRATION_STEPS {
                        let mid = (lo + hi) / 2.0;
                        let got = assign(mid)?;
                        let better = (got.1 - target).abs() < (best.1 - target).abs();
                        if got.1 < target {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                        if better {
                            best = got;
                        }
                    }
                }
            }
            Ok(best.0)
        }
        _ => {
            try_assign_content(&mut w, &spec.content, seed ^ CONTENT_SALT)?;
            Ok(w)
        }
    }
}

/// Highest trace-level rate the device calibration tries.
const MAX_TRACE_DEDUP: f64 = 0.995;

/// Bisection steps of the device calibration (the trace rate to within
/// `(0.995 − target) / 2^8`).
const CALIBRATION_STEPS: u32 = 8;

/// The dedup rate Deduplication achieves on the device for the replayed
/// writes of `w` (before preconditioning is added, or with it: untimed
/// requests are skipped): the share of written pages whose content is
/// stored when the write is looked up, i.e. held by a live logical page
/// (each content has one physical copy under Deduplication, freed with its
/// last reference), or repeated earlier in the same request. A request's
/// pages are all looked up before any of them is remapped, as the
/// simulator does (`sim::Simulation::write`). Exact for Deduplication as
/// long as preconditioning contents are disjoint from the replayed ones
/// (they are: their own id space) and no GC policy drops pages (GC moves
/// pages, never forgets them).
pub fn device_dedup_rate(w: &Workload) -> f64 {
    let mut refs = vec![0u32; w.content_space as usize];
    let mut held = vec![u32::MAX; w.lpn_span as usize];
    let mut seen_in_file: Vec<u32> = Vec::new();
    let (mut pages, mut dups) = (0u64, 0u64);
    for r in w.timed() {
        if r.op == Op::Trim {
            for l in r.lpn..r.lpn + r.pages {
                let old = std::mem::replace(&mut held[l as usize], u32::MAX);
                if old != u32::MAX {
                    refs[old as usize] -= 1;
                }
            }
            continue;
        }
        if r.op != Op::Write || r.content == NO_CONTENT {
            continue;
        }
        let contents = w.content_of(r);
        // A new content counts as stored from its first occurrence in the
        // file on (its repeats are duplicates); undone before remapping.
        seen_in_file.clear();
        for &c in contents {
            pages += 1;
            if refs[c.0 as usize] > 0 {
                dups += 1;
            } else {
                refs[c.0 as usize] += 1;
                seen_in_file.push(c.0);
            }
        }
        for &c in &seen_in_file {
            refs[c as usize] -= 1;
        }
        for (k, &c) in contents.iter().enumerate() {
            let l = (r.lpn + k as u32) as usize;
            let old = std::mem::replace(&mut held[l], c.0);
            refs[c.0 as usize] += 1;
            if old != u32::MAX {
                refs[old as usize] -= 1;
            }
        }
    }
    if pages == 0 {
        0.0
    } else {
        dups as f64 / pages as f64
    }
}

/// The Table II rows `keys` as replica workloads at `scale`, each at its
/// trace's own load ([`Load::Known`]) on the base device `base` (unknown
/// keys are skipped: callers pass constants).
pub fn at_own_load(keys: &[&str], scale: f64, base: &crate::config::Config) -> Vec<super::WorkloadDef> {
    let device = ReplicaDevice::of(base);
    keys.iter()
        .filter_map(|k| row(k))
        .map(|row| {
            let mut def = super::WorkloadDef::new(super::WorkloadSpec::Replica(ReplicaRef { row, scale }));
            def.device = device;
            def.utilization = Load::Known.for_row(row, &def.device);
            def
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24 item 6 (docs/engines.md, docs/reproduce.md): the replicas
    /// of homes, mail and web-vm copy earlier write requests. The copy plan
    /// (which requests copy which) is drawn before the population is sized,
    /// so drawing again on the replica's own writes with its seed and model
    /// finds the replica's plan, whatever rate the calibration settled on.
    /// `cargo test --release --lib replica_copy_shares -- --nocapture`
    /// prints the measured shares at `--quick`'s scale.
    #[test]
    fn replica_copy_shares() {
        for key in ["homes", "mail", "webvm"] {
            let r = row(key).unwrap();
            let spec = ReplicaSpec::new(r, QUICK_SCALE, DEFAULT_UTILIZATION);
            let ContentModel::Zipf { copy, .. } = spec.content else { panic!("{key}: a Zipf model") };
            let mut bare = generate(&spec, 42).unwrap();
            for q in bare.requests.iter_mut() {
                q.content = NO_CONTENT;
            }
            (bare.contents, bare.content_space) = (Vec::new(), 0);
            let writes = bare.requests.iter().filter(|q| q.op == Op::Write).count() as f64;
            let s = try_assign_content(&mut bare, &spec.content, 42 ^ CONTENT_SALT).unwrap();
            let share = s.copied_requests as f64 / writes;
            println!(
                "{key}: copy = {copy}: {:.1}% of {writes} write requests copy an earlier one ({:.1}% of them whole), \
                 {:.1}% of written pages copied",
                share * 100.0,
                s.copied_whole as f64 / s.copied_requests.max(1) as f64 * 100.0,
                s.copied_pages as f64 / s.pages_drawn as f64 * 100.0
            );
            assert!((share - copy).abs() < 0.02, "{key}: {share} vs copy = {copy}");
        }
    }

    /// Issue 9 item 3: `device_dedup_rate` is exactly what Deduplication
    /// achieves in the simulator, and the device calibration makes it
    /// Table II's rate (the trace's own rate is then higher).
    #[test]
    fn device_calibration_makes_deduplication_achieve_table_ii() {
        use crate::config::{Allocation, Config};
        // `device_dedup_rate` models a copy forgotten when its last LPN is
        // rewritten, which is exact when pages are placed as processed.
        // Under the preset's dynamic allocation a copy waiting to be placed
        // keeps the references of its stale waiting maps until it is placed
        // (src/ftl/deferred.rs), so a duplicate written meanwhile may still
        // find it: the achieved rate is then at least the model's, and close.
        let mut cfg = Config::fad_table1();
        cfg.allocation = Allocation::LeastLoaded;
        let dynamic = Config::fad_table1();
        assert_eq!(dynamic.allocation, Allocation::Dynamic);
        for key in ["homes", "mail"] {
            let r = row(key).unwrap();
            let mut spec = ReplicaSpec::new(r, 0.004, DEFAULT_UTILIZATION);
            assert_eq!(spec.dedup_target, DedupTarget::Device, "the default");
            let device = generate(&spec, 42).unwrap();
            spec.dedup_target = DedupTarget::Trace;
            let trace = generate(&spec, 42).unwrap();
            assert_eq!(device.requests.len(), trace.requests.len());
            let at_trace_rate = device_dedup_rate(&trace);
            let calibrated = device_dedup_rate(&device);
            assert!(at_trace_rate < r.dedup_rate - 0.03, "{key}: the device forgets ({at_trace_rate})");
            assert!((calibrated - r.dedup_rate).abs() < 0.01, "{key}: calibrated {calibrated}");
            let trace_level = crate::content::realized_dedup_rate(&device);
            assert!(trace_level > r.dedup_rate + 0.02, "{key}: trace-level {trace_level}");
            for w in [trace, device] {
                let want = device_dedup_rate(&w);
                let prepared = crate::runner::prepare(
                    w,
                    &ContentModel::fad_calibrated(),
                    cfg.seed,
                    &crate::config::PreconditionConfig::with_rule(crate::workload::PreconditionRule::AllReads),
                )
                .unwrap();
                let rep =
                    crate::runner::run_one(&cfg, &prepared, "dedup", &Default::default(), &mut |_, _| {}).unwrap();
                assert!(
                    (rep.summary.dedup_rate_achieved - want).abs() < 1e-9,
                    "{key}: {} vs {want}",
                    rep.summary.dedup_rate_achieved
                );
                let rep =
                    crate::runner::run_one(&dynamic, &prepared, "dedup", &Default::default(), &mut |_, _| {}).unwrap();
                let got = rep.summary.dedup_rate_achieved;
                assert!(got >= want - 1e-9 && got - want < 1e-3, "{key}, dynamic: {got} vs {want}");
            }
        }
    }

    /// The known loads (docs/reproduce.md quotes them).
    #[test]
    fn known_loads_follow_the_trace_durations() {
        let t1 = ReplicaDevice::table1();
        let u = |k: &str| row(k).unwrap().known_utilization(&t1);
        // mds1: 1,548 K I/Os in a week at 192 us of bus per request.
        assert!((u("mds1") - 1_548_000.0 / 604_800.0 * 192.0e-6).abs() < 2e-6, "{}", u("mds1"));
        for k in ["homes", "mail", "webvm", "mds1", "stg1", "web1"] {
            assert!(u(k) < 0.001, "{k}: {}", u(k));
        }
        for k in ["lun0", "lun1", "lun2"] {
            assert!(u(k) > 0.04 && u(k) < 0.08, "{k}: {}", u(k));
        }
        assert_eq!("known".parse::<Load>(), Ok(Load::Known));
        assert_eq!("0.4".parse::<Load>(), Ok(Load::Utilization(0.4)));
        assert!("0".parse::<Load>().is_err() && "1.5".parse::<Load>().is_err() && "x".parse::<Load>().is_err());
    }

    #[test]
    fn merging_files_leaves_a_replica_unchanged() {
        for key in ["mail", "mds1", "stg1"] {
            let spec = ReplicaSpec::new(row(key).unwrap(), 0.005, DEFAULT_UTILIZATION);
            let mut w = generate(&spec, 7).unwrap();
            let before = w.requests.len();
            let merged = w.apply_file_rule(crate::workload::FileRule::Merged);
            assert!(merged * 1000 <= before as u64, "{key}: {merged} of {before} requests merged");
        }
    }

    #[test]
    fn geometric_mean_is_solved() {
        for m in [1.0, 1.99, 3.9, 6.125, 14.47, 22.8] {
            let g = GeometricSize::with_mean(m, MAX_REQUEST_PAGES);
            assert!((g.mean() - m).abs() < 1e-6, "{m}: {}", g.mean());
        }
    }

    #[test]
    fn write_sizes_follow_from_the_table() {
        let mail = row("Mail").unwrap();
        assert!((mail.avg_write_kb() - 57.89).abs() < 0.01);
        let stg = row("stg_1").unwrap();
        assert!((stg.avg_write_kb() - 7.97).abs() < 0.01);
        assert!(TABLE_II.iter().all(|r| r.avg_write_kb() >= 4.0));
    }

    #[test]
    fn names_and_refs() {
        assert_eq!(row("Web-vm").unwrap().key, "webvm");
        assert_eq!(row("LUN2").unwrap().key, "lun2");
        let r: ReplicaRef = "mail@0.05".parse().unwrap();
        assert_eq!((r.row.key, r.scale), ("mail", 0.05));
        assert_eq!(r.to_string(), "mail@0.05");
        assert!("nope".parse::<ReplicaRef>().is_err());
        assert!("mail@2".parse::<ReplicaRef>().is_err());
        assert!(row("homes").unwrap().matches_file_name("homes-110108-112108.1.blkparse"));
        assert!(row("mail").unwrap().matches_file_name("cheetah.cs.fiu.edu-110108-113008.1.blkparse"));
        assert!(!row("mail").unwrap().matches_file_name("webmail+online.cs.fiu.edu-110108.blkparse"));
        assert!(row("webvm").unwrap().matches_file_name("webmail+online.cs.fiu.edu-110108.blkparse"));
        assert!(row("lun0").unwrap().matches_file_name("2016021612-LUN0.csv"));
        assert!(row("mds1").unwrap().matches_file_name("mds_1.csv.gz"));
    }

    #[test]
    fn replica_matches_its_row() {
        let row = row("web1").unwrap();
        let mut spec = ReplicaSpec::new(row, 1.0, DEFAULT_UTILIZATION);
        spec.dedup_target = DedupTarget::Trace;
        let w = generate(&spec, 42).unwrap();
        let s = crate::trace::stats(&w);
        assert_eq!(s.requests, 135_000);
        assert!((s.read_ratio - row.read_ratio).abs() < 0.005, "{}", s.read_ratio);
        assert!((s.avg_read_kib / row.avg_read_kb - 1.0).abs() < 0.02, "{}", s.avg_read_kib);
        assert!((s.avg_request_kib / row.avg_req_kb - 1.0).abs() < 0.02, "{}", s.avg_request_kib);
        assert!((s.dedup_rate.unwrap() - row.dedup_rate).abs() < 0.01, "{:?}", s.dedup_rate);
        assert_eq!(w.provenance.source, REPLICA_LABEL);
        assert_eq!(generate(&spec, 42).unwrap().requests, w.requests);
    }

    /// Issue 9 item 6: the arrivals follow the run's device. On Table I the
    /// spec is what it always was; on `fad-onfi800` (a 20x faster bus) the
    /// bus-bound rows arrive faster, so the busiest resource of *that*
    /// device is 40% busy, and the hash-bound Mail is unchanged; two hash
    /// engines halve Mail's demand.
    #[test]
    fn arrivals_follow_the_device() {
        use crate::config::Config;
        let t1 = ReplicaDevice::of(&Config::fad_table1());
        assert_eq!(t1, ReplicaDevice::table1());
        let mds1 = row("mds1").unwrap();
        let mail = row("mail").unwrap();
        let iat = |r: &TableRow, d: &ReplicaDevice| ReplicaSpec::on_device(r, 1.0, 0.4, d).mean_interarrival_us;
        assert_eq!(ReplicaSpec::new(mds1, 1.0, 0.4), ReplicaSpec::on_device(mds1, 1.0, 0.4, &t1));
        assert!((iat(mds1, &t1) - 480.8).abs() < 0.1, "{}", iat(mds1, &t1)); // docs/reproduce.md
        let onfi = ReplicaDevice::of(&Config::load(Some("fad-onfi800"), &[]).unwrap());
        assert!((onfi.page_transfer_us - 5.12).abs() < 1e-9);
        let (bus, chip, hash) = onfi.demand_us(mds1);
        assert!(chip > bus && chip > hash, "mds1 is chip-bound on ONFI 800");
        assert!((iat(mds1, &onfi) - chip / 0.4).abs() < 1e-9);
        assert!(iat(mds1, &onfi) < 0.8 * iat(mds1, &t1));
        assert_eq!(iat(mail, &onfi), iat(mail, &t1), "Mail is hash-bound on both");
        let two = ReplicaDevice { hash_engines: 2, ..t1 };
        assert!(iat(mail, &two) < iat(mail, &t1));
        // The generated arrivals have that mean.
        let spec = ReplicaSpec::on_device(row("web1").unwrap(), 0.2, 0.4, &onfi);
        let w = generate(&spec, 3).unwrap();
        let span = w.requests.last().unwrap().arrival.0 as f64 / 1e3;
        let mean = span / (w.requests.len() - 1) as f64;
        assert!((mean / spec.mean_interarrival_us - 1.0).abs() < 0.05, "{mean} vs {}", spec.mean_interarrival_us);
    }

    /// `reproduce fad` and sweeps load their replicas for the base config.
    #[test]
    fn experiments_load_replicas_for_their_base_config() {
        use crate::config::Config;
        use crate::experiment::fad::{plan, FadOptions};
        let opts = FadOptions {
            only: vec!["stg1".into()],
            load: Load::Utilization(DEFAULT_UTILIZATION),
            ..FadOptions::default()
        };
        let stg1 = row("stg1").unwrap();
        for preset in ["fad-table1", "fad-onfi800"] {
            let cfg = Config::load(Some(preset), &[]).unwrap();
            let want = ReplicaSpec::on_device(stg1, 1.0, DEFAULT_UTILIZATION, &ReplicaDevice::of(&cfg));
            let (_, choices) = plan(&cfg, &opts).unwrap();
            assert_eq!(choices[0].def.replica_spec().unwrap(), want, "{preset}");
            let text = format!("base = \"{preset}\"\n[grid]\nworkloads = [\"stg1\"]\npolicies = [\"dedup\"]\n");
            let sweep = crate::experiment::sweep::Sweep::parse(&text, std::path::Path::new("s.toml")).unwrap();
            assert_eq!(sweep.plan().unwrap().workloads[0].replica_spec().unwrap(), want, "sweep on {preset}");
        }
    }
}
