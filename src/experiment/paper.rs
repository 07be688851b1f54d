//! The numbers FAD's text (Lin et al., `../shared/seeds/000_*.txt`,
//! Sections II-C and IV) gives for its evaluation figures, printed beside
//! ours in `REPORT.md`. Percentages are signed changes of the first scheme
//! relative to the second (negative = lower = better for latency).
//!
//! The paper does not say how it averages over workloads; we compare with
//! the arithmetic mean over the nine workloads of the per-workload change
//! (`mean_w (x_w / y_w − 1)`), which is what "reduces ... by X% on average"
//! most naturally means.

use super::declare::{Comparison, Metric, Stat};
use crate::report::RunReport;

/// One published claim: a [`Comparison`] of two schemes (registry names).
pub type Claim = Comparison;

fn read_mean(r: &RunReport) -> f64 {
    r.summary.read.mean_us
}
fn write_mean(r: &RunReport) -> f64 {
    r.summary.write.mean_us
}
fn read_p99(r: &RunReport) -> f64 {
    r.summary.read.p99_us
}
fn read_p999(r: &RunReport) -> f64 {
    r.summary.read.p999_us
}
fn dof(r: &RunReport) -> f64 {
    r.summary.dof_read
}
fn write_volume(r: &RunReport) -> f64 {
    r.summary.write_volume_pages as f64
}

/// Mean read latency (µs).
pub const READ_MEAN: Metric = Metric { name: "read_mean", label: "avg read latency", get: read_mean };
/// Mean write latency (µs).
pub const WRITE_MEAN: Metric = Metric { name: "write_mean", label: "avg write latency", get: write_mean };
/// P99 read latency (µs).
pub const READ_P99: Metric = Metric { name: "read_p99", label: "P99 read latency", get: read_p99 };
/// P99.9 read latency (µs).
pub const READ_P999: Metric = Metric { name: "read_p999", label: "P99.9 read latency", get: read_p999 };
/// Mean DOF over read requests.
pub const DOF: Metric = Metric { name: "dof", label: "DOF", get: dof };
/// Host pages programmed (unique + rewrites).
pub const WRITE_VOLUME: Metric = Metric { name: "write_volume", label: "write volume", get: write_volume };

/// Builds a [`Claim`] from positional fields (keeps the table below short).
#[allow(clippy::too_many_arguments)]
const fn c(
    figure: &'static str,
    what: &'static str,
    stat: Stat,
    subject: &'static str,
    reference: &'static str,
    metric: Metric,
    percent: f64,
    source: &'static str,
) -> Claim {
    Comparison { figure, what, stat, subject, reference, metric, percent, source }
}

/// All claims, in figure order.
pub const CLAIMS: &[Claim] = &[
    c("Fig. 2", "Deduplication vs Native, DOF", Stat::Mean, "dedup", "native", DOF, 47.7, "§II-C"),
    c("Fig. 2", "Deduplication vs Native, DOF on mds1", Stat::On("mds1"), "dedup", "native", DOF, 76.0, "§II-C"),
    c("Fig. 3", "Deduplication vs Native, avg read latency", Stat::Mean, "dedup", "native", READ_MEAN, 47.0, "§II-C"),
    c(
        "Fig. 3",
        "Deduplication vs Native, avg read latency on mds1 (largest)",
        Stat::On("mds1"),
        "dedup",
        "native",
        READ_MEAN,
        75.6,
        "§II-C",
    ),
    c(
        "Fig. 8",
        "FAD vs Deduplication, avg read latency",
        Stat::Mean,
        "fad",
        "dedup",
        READ_MEAN,
        -34.1,
        "Abstract, §IV-B",
    ),
    c("Fig. 8", "FAD vs HAR, avg read latency", Stat::Mean, "fad", "har", READ_MEAN, -22.2, "Abstract, §IV-B"),
    c("Fig. 8", "FAD vs FCRC, avg read latency", Stat::Mean, "fad", "fcrc", READ_MEAN, -15.8, "Abstract, §IV-B"),
    c("Fig. 9", "FAD vs Deduplication, avg write latency", Stat::Mean, "fad", "dedup", WRITE_MEAN, 0.1, "§IV-B"),
    c("Fig. 9", "FAD vs HAR, avg write latency", Stat::Mean, "fad", "har", WRITE_MEAN, -0.6, "§IV-B"),
    c("Fig. 9", "FAD vs FCRC, avg write latency", Stat::Mean, "fad", "fcrc", WRITE_MEAN, -93.4, "§IV-B"),
    c("Fig. 10", "FAD-RPO vs Deduplication, DOF", Stat::Mean, "fad-rpo", "dedup", DOF, -23.0, "§IV-B"),
    c(
        "Fig. 10",
        "FAD-RPO vs Deduplication, DOF (largest reduction)",
        Stat::MaxReduction,
        "fad-rpo",
        "dedup",
        DOF,
        -38.0,
        "§IV-B",
    ),
    c(
        "Fig. 10",
        "FAD-RWPO-Rewrite vs Deduplication, DOF",
        Stat::Mean,
        "fad-rwpo-rewrite",
        "dedup",
        DOF,
        -30.0,
        "§IV-B",
    ),
    c(
        "Fig. 10",
        "FAD-RWPO-Rewrite vs Deduplication, DOF (largest reduction)",
        Stat::MaxReduction,
        "fad-rwpo-rewrite",
        "dedup",
        DOF,
        -48.0,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RPO vs Deduplication, avg read latency",
        Stat::Mean,
        "fad-rpo",
        "dedup",
        READ_MEAN,
        -23.1,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RPO vs Deduplication, avg read latency on Mail (largest)",
        Stat::On("mail"),
        "fad-rpo",
        "dedup",
        READ_MEAN,
        -35.0,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RWPO-Rewrite vs Deduplication, avg read latency",
        Stat::Mean,
        "fad-rwpo-rewrite",
        "dedup",
        READ_MEAN,
        -34.1,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RWPO-Rewrite vs Deduplication, avg read latency on mds1 (largest)",
        Stat::On("mds1"),
        "fad-rwpo-rewrite",
        "dedup",
        READ_MEAN,
        -44.9,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RWPO vs FAD-RPO, avg read latency (\"no additional improvement\")",
        Stat::Mean,
        "fad-rwpo",
        "fad-rpo",
        READ_MEAN,
        0.0,
        "§IV-B",
    ),
    c(
        "Fig. 12",
        "FAD-RPO vs Deduplication, avg write latency",
        Stat::Mean,
        "fad-rpo",
        "dedup",
        WRITE_MEAN,
        8.9,
        "§IV-B",
    ),
    c(
        "Fig. 12",
        "FAD-RWPO vs FAD-RPO, avg write latency",
        Stat::Mean,
        "fad-rwpo",
        "fad-rpo",
        WRITE_MEAN,
        -11.0,
        "§IV-B",
    ),
    c("Fig. 13", "FAD vs Deduplication, P99 read latency", Stat::Mean, "fad", "dedup", READ_P99, -10.0, "§IV-C"),
    c("Fig. 13", "FAD vs HAR, P99 read latency", Stat::Mean, "fad", "har", READ_P99, -25.4, "§IV-C"),
    c("Fig. 13", "FAD vs FCRC, P99 read latency", Stat::Mean, "fad", "fcrc", READ_P99, -44.6, "§IV-C"),
    c("Fig. 14", "FAD vs Deduplication, P99.9 read latency", Stat::Mean, "fad", "dedup", READ_P999, -41.3, "§IV-C"),
    c("Fig. 14", "FAD vs HAR, P99.9 read latency", Stat::Mean, "fad", "har", READ_P999, -36.0, "§IV-C"),
    c("Fig. 14", "FAD vs FCRC, P99.9 read latency", Stat::Mean, "fad", "fcrc", READ_P999, -23.6, "§IV-C"),
    c("Fig. 16", "FAD vs Deduplication, write volume", Stat::Mean, "fad", "dedup", WRITE_VOLUME, 4.7, "§IV-D, §IV-E"),
    c(
        "Fig. 16",
        "FAD vs Deduplication, write volume (largest increase)",
        Stat::MaxIncrease,
        "fad",
        "dedup",
        WRITE_VOLUME,
        7.7,
        "§IV-E",
    ),
    c("Fig. 16", "FAD vs FCRC, write volume", Stat::Mean, "fad", "fcrc", WRITE_VOLUME, -7.8, "§IV-E"),
];

/// Fig. 15: the rewrite thresholds ρ and the published average speedups of
/// FAD over Deduplication (§IV-D), in percent.
pub const FIG15_RHO: [f64; 7] = [0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35];
pub const FIG15_SPEEDUP: [f64; 7] = [12.8, 14.2, 16.0, 18.1, 20.1, 20.8, 20.2];

/// §IV-E: one RDLT on a 16-chip SSD, bytes; one WSTL node, bytes.
pub const RDLT_BYTES: f64 = 64.0;
pub const WSTL_NODE_BYTES: f64 = 12.0;
