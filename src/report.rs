//! Run reports and their exporters (pure functions from results to text).
//!
//! A [`RunReport`] is everything one run measured, stamped with the
//! dedupsim version, config hash and seed, and, for a run under a labelled
//! experiment (`experiment.fad_ssdsim_model`), with that experiment's label
//! (`device_model`: first line of the table, JSON field, last CSV column),
//! so that such results cannot pass for dedupsim's own device model. `--json` writes it whole (full
//! HDR histograms included, base64 V2 encoding); `--csv` writes one flat
//! row per run ([`csv_header`] / [`RunReport::csv_row`]); the table on
//! stdout is [`RunReport::table`], and runs of several policies are
//! compared by [`run_header`] and [`comparison_table`].

use crate::metrics::{Counters, DofStats, LatencyHistogram, LatencySummary};
use crate::sim::RunOutput;
use crate::units::Nanos;
use crate::workload::Provenance;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The dedupsim version stamped into every output.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Headline numbers of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub read: LatencySummary,
    pub write: LatencySummary,
    /// Simulated time from the first issue to the last completion.
    pub duration_s: f64,
    pub iops: f64,
    pub read_mib_s: f64,
    pub write_mib_s: f64,
    /// Mean DOF over read requests (layout actually read), FAD §II-C.
    pub dof_read: f64,
    /// Mean DOF over written files (layout just placed).
    pub dof_write: f64,
    /// Host pages programmed (unique + rewritten): FAD Fig. 16's write volume.
    pub write_volume_pages: u64,
    /// Fraction of host-written pages not programmed (deduplicated).
    pub dedup_rate_achieved: f64,
    /// All flash programs (host + GC + relocation) / host pages written.
    pub write_amplification: f64,
    pub rewrites: u64,
    pub gc_invocations: u64,
    pub erases: u64,
}

/// Host data moved during a run, in MiB.
#[derive(Clone, Copy, Debug, Default)]
pub struct Transferred {
    pub read_mib: f64,
    pub write_mib: f64,
}

impl Summary {
    /// The headline numbers of a run, or of merged runs, from what was
    /// measured: latency histograms, counters, DOF accumulators, the
    /// simulated span in seconds and the host data moved.
    pub fn new(
        read: &LatencyHistogram,
        write: &LatencyHistogram,
        c: &Counters,
        dof: &DofStats,
        span_s: f64,
        moved: Transferred,
    ) -> Summary {
        let per_s = |x: f64| if span_s > 0.0 { x / span_s } else { 0.0 };
        let host_prog = c.programs.host_unique + c.programs.host_rewrite;
        Summary {
            read: read.summary(),
            write: write.summary(),
            duration_s: span_s,
            iops: per_s((c.reads + c.writes + c.trims) as f64),
            read_mib_s: per_s(moved.read_mib),
            write_mib_s: per_s(moved.write_mib),
            dof_read: dof.read_mean(),
            dof_write: dof.write_mean(),
            write_volume_pages: host_prog,
            dedup_rate_achieved: ratio(c.dedup_pages, c.write_pages),
            write_amplification: ratio(host_prog + c.programs.gc + c.programs.relocation, c.write_pages),
            rewrites: c.programs.host_rewrite,
            gc_invocations: c.gc_invocations,
            erases: c.erases,
        }
    }
}

/// Per-chip resource use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChipStats {
    pub busy_us: f64,
    pub wait_us: f64,
    pub utilization: f64,
}

/// Where a run's time went per chip and per channel (a chip is a die on
/// presets with one die per chip, such as `fast24-nvmevirt`); present only
/// when the run asked for it ([`crate::sim::RunOptions::resources`]: the
/// `reproduce fast24` cells). Chip `g` is on channel `g % channels`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceStats {
    /// Per chip: µs busy with reads (sense start to transfer end).
    pub chip_read_busy_us: Vec<f64>,
    /// Per chip: pages sensed.
    pub chip_reads: Vec<u64>,
    /// Per channel: µs of bus time moving read data out.
    pub channel_read_us: Vec<f64>,
    /// Per channel: µs of bus time moving program data in.
    pub channel_write_us: Vec<f64>,
    /// One page's sense (`timing.read`) and transfer, µs.
    pub t_read_us: f64,
    pub t_xfer_us: f64,
}

impl ResourceStats {
    fn new(r: &crate::timing::Resources) -> ResourceStats {
        let us = |v: &[crate::units::Nanos]| v.iter().map(|n| n.as_us_f64()).collect();
        ResourceStats {
            chip_read_busy_us: us(&r.chip_read_busy),
            chip_reads: r.chip_reads.clone(),
            channel_read_us: us(&r.channel_read),
            channel_write_us: us(&r.channel_write),
            t_read_us: r.t_read.as_us_f64(),
            t_xfer_us: r.t_xfer.as_us_f64(),
        }
    }
}

/// Block erase-count distribution.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WearStats {
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    pub stddev: f64,
    /// (erase count, number of blocks) for every count that occurs.
    pub histogram: Vec<(u32, u64)>,
}

/// Memory of the mapping structures as a device would hold them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryStats {
    pub mapping_bytes: u64,
    pub fingerprint_index_bytes: u64,
    pub live_pages: u64,
}

/// What the hash engines did (a deduplicating run only): pages hashed,
/// engine time, the time pages waited for an engine, and the busy share
/// of the engines over the replay span.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HashStats {
    pub engines: u32,
    pub pages: u64,
    pub busy_us: f64,
    /// Total time hashed pages waited for an engine (from their write's
    /// arrival to the start of their hash).
    pub wait_us: f64,
    pub mean_wait_us: f64,
    /// `busy_us` over `engines` × the replay span.
    pub utilization: f64,
}

impl HashStats {
    /// From the totals of one run or of merged runs over `span_s` seconds
    /// of replay; `None` when no page was hashed.
    pub fn new(engines: u32, pages: u64, busy_us: f64, wait_us: f64, span_s: f64) -> Option<HashStats> {
        (pages > 0).then(|| HashStats {
            engines,
            pages,
            busy_us,
            wait_us,
            mean_wait_us: wait_us / pages as f64,
            utilization: if span_s > 0.0 { busy_us / 1e6 / (f64::from(engines.max(1)) * span_s) } else { 0.0 },
        })
    }

    /// The warning a saturated hash stage deserves: the engines were busy
    /// most of the replay and pages queued for them far longer than a hash
    /// takes, so write latency measures the hash queue, not the flash.
    pub fn saturation_warning(&self) -> Option<String> {
        let per_page = self.busy_us / self.pages.max(1) as f64;
        (self.utilization >= HASH_SATURATED && self.mean_wait_us > HASH_QUEUE_FACTOR * per_page).then(|| {
            format!(
                "{} saturated: busy {:.1}% of the replay ({} pages x {:.1} us on {} engine{}), \
                 and a page waited {} on average for an engine, so write latency measures the hash queue \
                 more than the flash; more engines (dedup.hash_engines), a faster hash (dedup.fingerprint) or a \
                 slower replay (replay.time_scale) would show the device",
                if self.engines == 1 { "the hash engine is" } else { "the hash engines are" },
                self.utilization * 100.0,
                self.pages,
                per_page,
                self.engines,
                if self.engines == 1 { "" } else { "s" },
                approx_time(self.mean_wait_us)
            )
        })
    }
}

/// A time in microseconds, rounded for reading (`549 us`, `12.3 ms`, `1.86 s`).
fn approx_time(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e4 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{us:.0} us")
    }
}

/// The warning a run deserves whose device fell behind the workload's
/// arrivals: requests arrived over `[first_issue, last_arrival]`, and the
/// last completion came more than [`BACKLOG_SHARE`] of that span (and at
/// least [`BACKLOG_MIN_NS`]) after the last arrival. A device that keeps
/// up finishes within about one request's latency of the last arrival; one
/// that does not leaves a backlog it drains only after the workload ends,
/// so the latencies measure that queue (open loop: it grows with the
/// trace, and so does the memory that holds it) more than the device.
/// `None` when it kept up.
pub fn backlog_warning(first_issue: Nanos, last_arrival: Nanos, last_completion: Nanos) -> Option<String> {
    let offered = last_arrival.0.saturating_sub(first_issue.0);
    let drain = last_completion.0.saturating_sub(last_arrival.0);
    (drain >= BACKLOG_MIN_NS && drain as f64 > BACKLOG_SHARE * offered as f64).then(|| {
        format!(
            "the device fell behind the arrivals: the workload offered its requests over {}, and the last \
             completed {} after the last arrived ({:.0}% of that span), so latencies measure the queue of \
             waiting requests more than the device; a slower replay (replay.time_scale above 1) or a closed \
             loop (replay.mode = \"closed-loop\") would show the device",
            approx_time(offered as f64 / 1e3),
            approx_time(drain as f64 / 1e3),
            100.0 * drain as f64 / (offered.max(1)) as f64
        )
    })
}

/// [`backlog_warning`]: the drain, as a share of the span the requests
/// arrived over, from which the device counts as fallen behind ...
pub const BACKLOG_SHARE: f64 = 0.1;
/// ... and at least this long (ns): a short run's last request may
/// simply be slow.
pub const BACKLOG_MIN_NS: u64 = 100_000_000;

/// [`HashStats::saturation_warning`]: the busy share from which the hash
/// engines count as saturated ...
pub const HASH_SATURATED: f64 = 0.9;
/// ... when pages also waited on average more than this many hash times.
pub const HASH_QUEUE_FACTOR: f64 = 10.0;

/// Full latency histograms (HDR, ns, base64 V2 deflate).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Histograms {
    pub read: LatencyHistogram,
    pub write: LatencyHistogram,
}

/// Everything one run measured. See the module doc.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub dedupsim_version: String,
    pub config_name: String,
    pub config_hash: String,
    /// What the configuration changes from its reference preset (dotted
    /// key -> value, TOML syntax; [`crate::config::Config::changes`]), so
    /// a report says which settings produced it; absent when nothing
    /// changed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config_changes: BTreeMap<String, String>,
    /// The preset `config_changes` is relative to; absent with them.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub config_reference: String,
    pub seed: u64,
    /// Set only for a run under a labelled experiment that replaces
    /// dedupsim's device model ([`crate::config::FAD_SSDSIM_MODEL_LABEL`]);
    /// absent from the JSON otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_model: Option<String>,
    pub policy: String,
    pub workload: Provenance,
    /// Content model that assigned page contents ("from the workload
    /// (preconditioning: MODEL)" when the workload brought its own).
    pub content_model: String,
    /// Realized dedup rate of all written contents, preconditioning included
    /// (1 - distinct/pages).
    pub content_dedup_rate: f64,
    /// The preconditioning the run used: rule, placement (`auto`
    /// resolved, and why), order, pages and how many carry the trace's own
    /// contents ([`crate::runner::precondition_description`]); absent for
    /// a run without a replayed workload (`serve`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub precondition: String,
    pub summary: Summary,
    pub counters: Counters,
    pub dof: DofStats,
    pub policy_stats: BTreeMap<String, f64>,
    /// The dedup engine (`dedup.engine`); absent from the JSON for the
    /// default `caftl`, so default runs' output is unchanged.
    #[serde(default = "default_engine", skip_serializing_if = "is_default_engine")]
    pub engine: String,
    /// What the engine counted and the flash work the simulator executed
    /// for it (`engine_*`, `sim_engine_*`); absent when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_stats: BTreeMap<String, f64>,
    pub chips: Vec<ChipStats>,
    pub wear: WearStats,
    pub memory: MemoryStats,
    pub invariant_checks: u64,
    /// The hash engines' load; absent for a run that hashed nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<HashStats>,
    /// What the run's figures should be read with (a saturated hash
    /// stage); absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub histograms: Histograms,
    /// Per-chip and per-channel use; absent unless the run asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceStats>,
}

fn default_engine() -> String {
    crate::engine::DEFAULT.to_string()
}

fn is_default_engine(e: &str) -> bool {
    e == crate::engine::DEFAULT
}

/// Identity of a run, for stamping the report.
#[derive(Clone, Debug)]
pub struct RunMeta {
    pub config_name: String,
    pub config_hash: String,
    /// [`RunReport::config_changes`].
    pub config_changes: BTreeMap<String, String>,
    /// [`RunReport::config_reference`].
    pub config_reference: String,
    pub seed: u64,
    /// [`RunReport::device_model`].
    pub device_model: Option<String>,
    pub workload: Provenance,
    pub content_model: String,
    pub content_dedup_rate: f64,
    pub page_size: u32,
    /// [`RunReport::precondition`].
    pub precondition: String,
}

impl RunReport {
    /// Builds the report of a finished run.
    pub fn new(meta: RunMeta, out: RunOutput) -> RunReport {
        let m = &out.metrics;
        let c = &m.counters;
        let span = (m.last_completion - m.first_issue).as_secs_f64();
        let mib = |pages: u64| pages as f64 * meta.page_size as f64 / (1024.0 * 1024.0);
        let transferred = Transferred { read_mib: mib(c.read_pages), write_mib: mib(c.write_pages) };
        let summary = Summary::new(&m.read_latency, &m.write_latency, c, &m.dof, span, transferred);
        let chips = out
            .chip_busy
            .iter()
            .zip(&out.chip_wait)
            .map(|(b, w)| ChipStats {
                busy_us: b.as_us_f64(),
                wait_us: w.as_us_f64(),
                utilization: if span > 0.0 { b.as_secs_f64() / span } else { 0.0 },
            })
            .collect();
        let h = &out.hash;
        let hash = HashStats::new(h.engines, h.pages, h.busy.as_us_f64(), h.wait_ns as f64 / 1e3, span);
        let mut warnings: Vec<String> = hash.iter().filter_map(HashStats::saturation_warning).collect();
        warnings.extend(backlog_warning(m.first_issue, m.last_arrival, m.last_completion));
        RunReport {
            dedupsim_version: VERSION.to_string(),
            config_name: meta.config_name,
            config_hash: meta.config_hash,
            config_changes: meta.config_changes,
            config_reference: meta.config_reference,
            seed: meta.seed,
            device_model: meta.device_model,
            policy: out.policy.clone(),
            workload: meta.workload,
            content_model: meta.content_model,
            content_dedup_rate: meta.content_dedup_rate,
            precondition: meta.precondition,
            summary,
            counters: c.clone(),
            dof: m.dof.clone(),
            policy_stats: out.policy_stats.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            engine: out.engine.clone(),
            engine_stats: out.engine_stats.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            chips,
            wear: wear(&out.erase_counts),
            memory: MemoryStats {
                mapping_bytes: out.metadata_bytes.0,
                fingerprint_index_bytes: out.metadata_bytes.1,
                live_pages: out.live_pages,
            },
            invariant_checks: out.invariant_checks,
            hash,
            warnings,
            histograms: Histograms { read: m.read_latency.clone(), write: m.write_latency.clone() },
            resources: out.resources.as_ref().map(ResourceStats::new),
        }
    }

    /// The header line naming what the configuration changed, as `--set`
    /// takes it (`changed from fad-table1: key=value, ...`), if anything.
    pub fn changes_line(&self) -> Option<String> {
        (!self.config_changes.is_empty()).then(|| {
            // A float beyond 1e12 (`1e300`) prints in exponent form, not
            // as hundreds of digits.
            let short = |v: &str| match v.parse::<f64>() {
                Ok(x) if v.contains(['.', 'e', 'E']) && x.abs() >= 1e12 => crate::units::short_f64(x),
                _ => v.to_string(),
            };
            let kv: Vec<String> = self.config_changes.iter().map(|(k, v)| format!("{k}={}", short(v))).collect();
            format!("changed from {}: {}", self.config_reference, kv.join(", "))
        })
    }

    /// A readable multi-line table for the terminal.
    pub fn table(&self) -> String {
        let s = &self.summary;
        let c = &self.counters;
        let mut o = String::new();
        if let Some(m) = &self.device_model {
            let _ = writeln!(o, "*** {m} ***");
        }
        let _ = writeln!(
            o,
            "dedupsim {}  policy {}  workload {} [{}]",
            self.dedupsim_version, self.policy, self.workload.name, self.workload.source
        );
        let _ = writeln!(
            o,
            "config {} (hash {})  seed {}  content {}",
            self.config_name,
            self.config_hash,
            self.seed,
            content_description(&self.content_model, self.content_dedup_rate)
        );
        if !self.precondition.is_empty() {
            let _ = writeln!(o, "precondition {}", self.precondition);
        }
        if let Some(line) = self.changes_line() {
            let _ = writeln!(o, "{line}");
        }
        let _ = writeln!(
            o,
            "\n{:<6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "op", "count", "mean(us)", "p50", "p90", "p99", "p99.9", "p99.99", "max"
        );
        for (name, l) in [("read", &s.read), ("write", &s.write)] {
            if l.count == 0 {
                // No such request: no latency (n/a, not 0.0).
                let _ = writeln!(o, "{name:<6} {:>9} {:>10}", 0, "n/a");
                continue;
            }
            let _ = writeln!(
                o,
                "{:<6} {:>9} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                name, l.count, l.mean_us, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.p9999_us, l.max_us
            );
        }
        let _ = writeln!(
            o,
            "\nsimulated {:.3} s, {:.0} IOPS, read {:.1} MiB/s, write {:.1} MiB/s",
            s.duration_s, s.iops, s.read_mib_s, s.write_mib_s
        );
        let _ = writeln!(
            o,
            "DOF read {:.4}  write {:.4}   dedup {:.1}% of written pages   rewrites {}",
            s.dof_read,
            s.dof_write,
            s.dedup_rate_achieved * 100.0,
            s.rewrites
        );
        let _ = writeln!(
            o,
            "flash programs: host {} (unique {}, rewrite {}), gc {}, precondition {}; reads host {}, gc {}; erases {}",
            s.write_volume_pages,
            c.programs.host_unique,
            c.programs.host_rewrite,
            c.programs.gc,
            c.programs.precondition,
            c.flash_reads_host,
            c.flash_reads_gc,
            c.erases
        );
        if c.programs.relocation > 0 {
            let _ = writeln!(
                o,
                "relocation (idle time): {} pages read and programmed on another unit",
                c.programs.relocation
            );
        }
        let _ = writeln!(
            o,
            "write amplification {:.3}, GC invocations {}, erase counts min/mean/max {}/{:.2}/{}",
            s.write_amplification, s.gc_invocations, self.wear.min, self.wear.mean, self.wear.max
        );
        let _ = writeln!(
            o,
            "metadata: mapping {:.1} MiB, fingerprint index {:.1} MiB, {} live pages",
            self.memory.mapping_bytes as f64 / 1048576.0,
            self.memory.fingerprint_index_bytes as f64 / 1048576.0,
            self.memory.live_pages
        );
        if !self.policy_stats.is_empty() {
            let _ = writeln!(o, "policy statistics:");
            o.push_str(&stat_columns(self.policy_stats.iter().map(|(k, v)| (k.as_str(), *v))));
        }
        if !self.engine_stats.is_empty() {
            let (own, sim): (Vec<_>, Vec<_>) = self.engine_stats.iter().partition(|(k, _)| !k.starts_with("sim_"));
            let _ = writeln!(o, "engine {} statistics (JSON engine_stats):", self.engine);
            o.push_str(&stat_columns(own.iter().map(|(k, v)| (k.trim_start_matches("engine_"), **v))));
            if !sim.is_empty() {
                let _ = writeln!(o, "flash work the simulator ran for the engine:");
                o.push_str(&stat_columns(sim.iter().map(|(k, v)| (k.trim_start_matches("sim_engine_"), **v))));
            }
        }
        if let Some(h) = &self.hash {
            let _ = writeln!(
                o,
                "hashing: {} pages on {} engine{}, busy {:.1}% of the replay, mean wait for an engine {}",
                h.pages,
                h.engines,
                if h.engines == 1 { "" } else { "s" },
                h.utilization * 100.0,
                approx_time(h.mean_wait_us)
            );
        }
        for w in &self.warnings {
            let _ = writeln!(o, "warning: {w}");
        }
        if self.invariant_checks > 0 {
            let _ = writeln!(o, "--check: {} full invariant checks passed, every read verified", self.invariant_checks);
        }
        o
    }

    /// One flat CSV row matching [`csv_header`] (policy stats are appended
    /// as `key=value` pairs in one column so the header stays fixed; the
    /// last column, `device_model`, is empty unless the run is a labelled
    /// experiment).
    pub fn csv_row(&self) -> Vec<String> {
        let s = &self.summary;
        let f = |x: f64| format!("{x:.6}");
        let mut row = vec![
            self.dedupsim_version.clone(),
            self.config_name.clone(),
            self.config_hash.clone(),
            self.seed.to_string(),
            self.workload.name.clone(),
            self.workload.source.clone(),
            self.policy.clone(),
            self.content_model.clone(),
            f(self.content_dedup_rate),
        ];
        for l in [&s.read, &s.write] {
            row.extend([
                l.count.to_string(),
                f(l.mean_us),
                f(l.p50_us),
                f(l.p90_us),
                f(l.p99_us),
                f(l.p999_us),
                f(l.p9999_us),
                f(l.max_us),
            ]);
        }
        row.extend([
            f(s.duration_s),
            f(s.iops),
            f(s.dof_read),
            f(s.dof_write),
            s.write_volume_pages.to_string(),
            self.counters.programs.host_unique.to_string(),
            s.rewrites.to_string(),
            self.counters.programs.gc.to_string(),
            f(s.dedup_rate_achieved),
            f(s.write_amplification),
            s.gc_invocations.to_string(),
            s.erases.to_string(),
            self.memory.mapping_bytes.to_string(),
            self.memory.fingerprint_index_bytes.to_string(),
            self.policy_stats.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(";"),
            self.device_model_tag().to_string(),
        ]);
        row
    }

    /// The `device_model` CSV value: empty for dedupsim's own model, else
    /// the experiment's short tag.
    pub fn device_model_tag(&self) -> &'static str {
        match self.device_model {
            Some(_) => crate::config::FAD_SSDSIM_MODEL_TAG,
            None => "",
        }
    }
}

/// The header of a comparison of runs of one workload (`run` with several
/// policies), from its first run `r0`: the labelled experiment's line if
/// any, the version, workload (`requests` replayed), config, seed and
/// content model, and what the config changes from its preset.
pub fn run_header(r0: &RunReport, requests: u64) -> String {
    let mut o = String::new();
    if let Some(m) = &r0.device_model {
        let _ = writeln!(o, "*** {m} ***");
    }
    let _ = writeln!(
        o,
        "dedupsim {}  workload {} [{}]  {} requests  config {} (hash {})  seed {}  content {}",
        r0.dedupsim_version,
        r0.workload.name,
        r0.workload.source,
        requests,
        r0.config_name,
        r0.config_hash,
        r0.seed,
        content_description(&r0.content_model, r0.content_dedup_rate)
    );
    if !r0.precondition.is_empty() {
        let _ = writeln!(o, "precondition {}", r0.precondition);
    }
    if let Some(line) = r0.changes_line() {
        let _ = writeln!(o, "{line}");
    }
    o
}

/// One line per run: the numbers FAD's figures compare.
pub fn comparison_table(reports: &[RunReport]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<18} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>11} {:>7} {:>9} {:>7}",
        "policy",
        "read(us)",
        "read p99",
        "write(us)",
        "write p99",
        "DOF rd",
        "DOF wr",
        "write vol",
        "dedup%",
        "rewrites",
        "GC"
    );
    for r in reports {
        let s = &r.summary;
        // A workload without reads (or writes) has no latency to show: n/a, not 0.0.
        let us = |count: u64, v: f64| if count == 0 { "n/a".to_string() } else { format!("{v:.1}") };
        let _ = writeln!(
            o,
            "{:<18} {:>10} {:>10} {:>10} {:>10} {:>8.4} {:>8.4} {:>11} {:>7.1} {:>9} {:>7}",
            r.policy,
            us(s.read.count, s.read.mean_us),
            us(s.read.count, s.read.p99_us),
            us(s.write.count, s.write.mean_us),
            us(s.write.count, s.write.p99_us),
            s.dof_read,
            s.dof_write,
            s.write_volume_pages,
            s.dedup_rate_achieved * 100.0,
            s.rewrites,
            s.gc_invocations
        );
    }
    o
}

/// Column names of [`RunReport::csv_row`].
pub fn csv_header() -> Vec<&'static str> {
    let mut h = vec![
        "version",
        "config",
        "config_hash",
        "seed",
        "workload",
        "workload_source",
        "policy",
        "content_model",
        "content_dedup_rate",
    ];
    h.extend([
        "read_count",
        "read_mean_us",
        "read_p50_us",
        "read_p90_us",
        "read_p99_us",
        "read_p999_us",
        "read_p9999_us",
        "read_max_us",
    ]);
    h.extend([
        "write_count",
        "write_mean_us",
        "write_p50_us",
        "write_p90_us",
        "write_p99_us",
        "write_p999_us",
        "write_p9999_us",
        "write_max_us",
    ]);
    h.extend([
        "duration_s",
        "iops",
        "dof_read",
        "dof_write",
        "write_volume_pages",
        "programs_unique",
        "rewrites",
        "programs_gc",
        "dedup_rate_achieved",
        "write_amplification",
        "gc_invocations",
        "erases",
        "mapping_bytes",
        "index_bytes",
        "policy_stats",
        "device_model",
    ]);
    h
}

/// Writes reports as CSV (header + one row each).
pub fn write_csv<W: std::io::Write>(reports: &[RunReport], w: W) -> csv::Result<()> {
    let mut wr = csv::Writer::from_writer(w);
    wr.write_record(csv_header())?;
    for r in reports {
        wr.write_record(r.csv_row())?;
    }
    wr.flush()?;
    Ok(())
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn wear(counts: &[u32]) -> WearStats {
    let mut hist: BTreeMap<u32, u64> = BTreeMap::new();
    for &c in counts {
        *hist.entry(c).or_default() += 1;
    }
    WearStats::from_histogram(&hist)
}

impl WearStats {
    /// Statistics of an erase-count histogram (erase count -> blocks).
    pub fn from_histogram(hist: &BTreeMap<u32, u64>) -> WearStats {
        let n: u64 = hist.values().sum();
        if n == 0 {
            return WearStats::default();
        }
        let mean = hist.iter().map(|(&c, &k)| c as f64 * k as f64).sum::<f64>() / n as f64;
        let var = hist.iter().map(|(&c, &k)| k as f64 * (c as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        WearStats {
            min: *hist.keys().next().unwrap_or(&0),
            max: *hist.keys().next_back().unwrap_or(&0),
            mean,
            stddev: var.sqrt(),
            histogram: hist.iter().map(|(&c, &k)| (c, k)).collect(),
        }
    }
}

/// The content model and the realized dedup rate, as the run headers
/// print them. A calibrated model's `dedup=` is the expected rate over
/// every page it draws, preconditioning included, while the realized rate
/// shown is the replayed writes' own (`runner::Prepared`): the two differ
/// whenever preconditioning writes pages, so the header says which is which.
pub fn content_description(model: &str, realized: f64) -> String {
    let target = model
        .strip_prefix("zipf:")
        .and_then(|p| p.split(',').find_map(|kv| kv.strip_prefix("dedup=")))
        .filter(|_| !model.starts_with("from the workload"));
    match target {
        Some(t) => format!(
            "{model} (realized dedup {:.1}% of the replayed writes; dedup={t} is the expected rate over every \
             page drawn, preconditioning included)",
            realized * 100.0
        ),
        None => format!("{model} (realized dedup {:.1}%)", realized * 100.0),
    }
}

/// A statistic as a person reads it: a whole number as one (`31798`), a
/// fraction to four significant digits (`0.02286`, `58.06`), a tiny one
/// in exponent form. The JSON keeps the exact values.
fn stat_value(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

/// Statistics in aligned columns, two per line (`name   value`), instead
/// of one line of `name=value` pairs.
fn stat_columns<'a>(stats: impl Iterator<Item = (&'a str, f64)>) -> String {
    let cells: Vec<(String, String)> = stats.map(|(k, v)| (k.to_string(), stat_value(v))).collect();
    let name_w = cells.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let value_w = cells.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let mut out = String::new();
    for pair in cells.chunks(2) {
        let line: Vec<String> = pair.iter().map(|(k, v)| format!("{k:<name_w$} {v:>value_w$}")).collect();
        out.push_str("  ");
        out.push_str(line.join("    ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_needs_a_long_drain_after_the_last_arrival() {
        let s = |x: f64| Nanos((x * 1e9) as u64);
        // Arrivals over 10 s from t = 1 s; 0.5 s of drain is 5%: kept up.
        assert_eq!(backlog_warning(s(1.0), s(11.0), s(11.5)), None);
        // Exactly 10% is not above it.
        assert_eq!(backlog_warning(s(1.0), s(11.0), s(12.0)), None);
        // 2 s of drain: 20% of the 10 s offered.
        let w = backlog_warning(s(1.0), s(11.0), s(13.0)).unwrap();
        assert!(w.contains("over 10.00 s") && w.contains("completed 2.00 s after") && w.contains("(20% of"), "{w}");
        // 90 ms after 0.5 s of arrivals is 18%, but shorter than 100 ms.
        assert_eq!(backlog_warning(s(0.0), s(0.5), s(0.59)), None);
        assert!(backlog_warning(s(0.0), s(0.5), s(0.6)).is_some());
    }

    #[test]
    fn hash_saturation_needs_a_busy_engine_and_a_queue() {
        // 1000 pages of 32 us over 40 ms on one engine: 80% busy.
        let h = HashStats::new(1, 1000, 32_000.0, 500_000.0, 0.04).unwrap();
        assert!((h.utilization - 0.8).abs() < 1e-12 && h.mean_wait_us == 500.0);
        assert_eq!(h.saturation_warning(), None, "80% busy is not saturated");
        // Busy 100% of 32 ms with a 320 us mean wait: 10 hash times, not more.
        let h = HashStats::new(1, 1000, 32_000.0, 320_000.0, 0.032).unwrap();
        assert_eq!(h.saturation_warning(), None, "a short queue is not saturated");
        // A queue of 1.5 s: saturated; two engines share the span.
        let h = HashStats::new(2, 1000, 64_000.0, 1.5e9, 0.032).unwrap();
        assert_eq!(h.utilization, 1.0);
        let w = h.saturation_warning().unwrap();
        assert!(
            w.starts_with(
                "the hash engines are saturated: busy 100.0% of the replay (1000 pages x 64.0 us on 2 engines), \
                 and a page waited 1.50 s on average"
            ),
            "{w}"
        );
        assert_eq!(HashStats::new(1, 0, 0.0, 0.0, 1.0), None, "nothing hashed");
        assert_eq!(
            (approx_time(549.4), approx_time(12_345.0), approx_time(1_857_837.0)),
            ("549 us".into(), "12.3 ms".into(), "1.86 s".into())
        );
    }
}
