//! Metrics: full latency histograms and event counters, observed by the
//! simulator; exporters in [`crate::report`] are pure functions of them.
//!
//! Latencies are kept as HDR histograms (nanoseconds, 3 significant
//! digits) so that percentiles of merged runs are computed from merged
//! histograms, never by averaging percentiles.

use crate::units::Nanos;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest recordable latency: one hour.
const MAX_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatencyHistogram(Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram(Histogram::new_with_bounds(1, MAX_NS, 3).expect("static bounds are valid"))
    }
}

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl LatencyHistogram {
    #[inline]
    pub fn record(&mut self, latency: Nanos) {
        // Saturate instead of failing: a latency above an hour is recorded as an hour.
        self.0.saturating_record(latency.0.max(1));
    }
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds by construction, so `add` cannot fail.
        let _ = self.0.add(&other.0);
    }
    pub fn count(&self) -> u64 {
        self.0.len()
    }
    pub fn mean(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.0.mean()
        }
    }
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.0.value_at_quantile(q)
        }
    }
    pub fn max(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.0.max()
        }
    }
    /// The value a recorded `ns` reads back as (HDR keeps 3 significant
    /// digits: values map to the top of their bucket).
    pub fn equivalent(&self, ns: u64) -> u64 {
        self.0.highest_equivalent(ns)
    }
    /// The histogram as base64 of HDR's V2 deflate encoding (portable to
    /// HdrHistogram's other implementations).
    pub fn to_base64(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new().serialize(&self.0, &mut buf).expect("serializing into a Vec cannot fail");
        BASE64.encode(&buf)
    }
    pub fn from_base64(s: &str) -> Option<LatencyHistogram> {
        let bytes = BASE64.decode(s).ok()?;
        let mut h: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).ok()?;
        h.auto(true);
        let mut out = LatencyHistogram::default();
        out.0.add(&h).ok()?;
        Some(out)
    }
    /// Summary in microseconds.
    pub fn summary(&self) -> LatencySummary {
        let us = |v: u64| v as f64 / 1000.0;
        LatencySummary {
            count: self.count(),
            mean_us: self.mean() / 1000.0,
            p50_us: us(self.quantile(0.50)),
            p90_us: us(self.quantile(0.90)),
            p99_us: us(self.quantile(0.99)),
            p999_us: us(self.quantile(0.999)),
            p9999_us: us(self.quantile(0.9999)),
            max_us: us(self.max()),
        }
    }
    /// (latency upper bound in ns, cumulative fraction) points for a CDF plot.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let n = self.count();
        if n == 0 {
            return Vec::new();
        }
        let mut acc = 0;
        self.0
            .iter_recorded()
            .map(|v| {
                acc += v.count_at_value();
                (v.value_iterated_to(), acc as f64 / n as f64)
            })
            .collect()
    }
}

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        LatencyHistogram::from_base64(&s).ok_or_else(|| serde::de::Error::custom("invalid HDR histogram"))
    }
}

/// Latency percentiles of one operation type, in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub p9999_us: f64,
    pub max_us: f64,
}

/// Flash page programs by cause. `host_unique + host_rewrite` is the write
/// volume FAD's Fig. 16 compares.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Programs {
    /// New content (or every page, without dedup).
    pub host_unique: u64,
    /// Extra copies of duplicates made by a rewrite policy.
    pub host_rewrite: u64,
    /// Valid pages migrated by GC.
    pub gc: u64,
    /// Untimed preconditioning writes (pages read before written).
    pub precondition: u64,
    /// Live copies moved to another parallel unit at idle time (ReoDedup's
    /// relocation, [`crate::policy::Policy::idle`]); absent from the JSON
    /// when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub relocation: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// Event counters of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub read_pages: u64,
    pub write_pages: u64,
    pub trim_pages: u64,
    /// Read pages that mapped to nothing (trimmed earlier): no flash access.
    pub unmapped_read_pages: u64,
    /// Write pages mapped to an existing copy instead of programmed.
    pub dedup_pages: u64,
    pub flash_reads_host: u64,
    pub flash_reads_gc: u64,
    /// Reads of the old copies of relocated pages; absent from the JSON
    /// when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flash_reads_relocation: u64,
    /// Pages a policy placed on a unit whose plane was too full of live
    /// data ([`crate::ftl::Ftl::unit_has_room`]), programmed on the next
    /// unit with room instead; absent from the JSON when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub placement_redirects: u64,
    pub programs: Programs,
    pub erases: u64,
    pub gc_invocations: u64,
    pub precondition_requests: u64,
}

impl Counters {
    /// Adds another run's counters (merging independent runs).
    pub fn add(&mut self, o: &Counters) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.trims += o.trims;
        self.read_pages += o.read_pages;
        self.write_pages += o.write_pages;
        self.trim_pages += o.trim_pages;
        self.unmapped_read_pages += o.unmapped_read_pages;
        self.dedup_pages += o.dedup_pages;
        self.flash_reads_host += o.flash_reads_host;
        self.flash_reads_gc += o.flash_reads_gc;
        self.flash_reads_relocation += o.flash_reads_relocation;
        self.placement_redirects += o.placement_redirects;
        self.programs.host_unique += o.programs.host_unique;
        self.programs.host_rewrite += o.programs.host_rewrite;
        self.programs.gc += o.programs.gc;
        self.programs.precondition += o.programs.precondition;
        self.programs.relocation += o.programs.relocation;
        self.erases += o.erases;
        self.gc_invocations += o.gc_invocations;
        self.precondition_requests += o.precondition_requests;
    }
}

/// Degree of fragmentation (FAD §II-C) accumulators.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DofStats {
    pub read_sum: f64,
    pub read_count: u64,
    pub write_sum: f64,
    pub write_count: u64,
}

impl DofStats {
    /// Adds another run's accumulators (merging independent runs).
    pub fn add(&mut self, o: &DofStats) {
        self.read_sum += o.read_sum;
        self.read_count += o.read_count;
        self.write_sum += o.write_sum;
        self.write_count += o.write_count;
    }

    pub fn read_mean(&self) -> f64 {
        mean(self.read_sum, self.read_count)
    }
    pub fn write_mean(&self) -> f64 {
        mean(self.write_sum, self.write_count)
    }
}

fn mean(sum: f64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// DOF of one file or read request from its per-unit page counts
/// (FAD §II-C): r = max_i p_i, P = Num/r, P* = Num/ceil(Num/N_chip),
/// DOF = 1 - P/P*. Returns 0 for an empty request.
#[inline]
pub fn dof(num: u32, max_per_unit: u32, units: u32) -> f64 {
    if num == 0 || max_per_unit == 0 {
        return 0.0;
    }
    let r_star = num.div_ceil(units);
    // P/P* = (num/r) / (num/r*) = r*/r
    1.0 - r_star as f64 / max_per_unit as f64
}

/// Everything a run observes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub read_latency: LatencyHistogram,
    pub write_latency: LatencyHistogram,
    pub counters: Counters,
    pub dof: DofStats,
    /// First issue time and last completion time of timed requests.
    pub first_issue: Nanos,
    pub last_completion: Nanos,
    /// Arrival of the last timed request (with `first_issue`, the span the
    /// workload offered its requests over; [`crate::report::backlog_warning`]).
    pub last_arrival: Nanos,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dof_paper_examples() {
        // FAD §II-C: five pages as [2,1,1,1] on four chips -> 0.
        assert_eq!(dof(5, 2, 4), 0.0);
        // All five on one chip: r = 5, P = 1, P* = 2.5 -> 0.6.
        assert!((dof(5, 5, 4) - 0.6).abs() < 1e-12);
        assert_eq!(dof(1, 1, 16), 0.0);
        assert_eq!(dof(0, 0, 16), 0.0);
    }

    #[test]
    fn histogram_round_trip_and_merge() {
        let mut a = LatencyHistogram::default();
        let mut b = LatencyHistogram::default();
        for i in 1..=1000u64 {
            a.record(Nanos(i * 1000));
            b.record(Nanos(i * 2000));
        }
        let back = LatencyHistogram::from_base64(&a.to_base64()).unwrap();
        assert_eq!(back, a);
        a.merge(&b);
        assert_eq!(a.count(), 2000);
        // Median of the union {1..1000} U {2,4,..,2000} (us) is about 667 us.
        let p50 = a.quantile(0.5) as f64 / 1000.0;
        assert!((p50 - 667.0).abs() < 2.0, "{p50}");
    }
}
