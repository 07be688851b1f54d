//! The numbers FAD's text (Lin et al., `../shared/seeds/000_*.txt`,
//! Sections II-C and IV) gives for its evaluation figures, printed beside
//! ours in `REPORT.md`. Percentages are signed changes of the first scheme
//! relative to the second (negative = lower = better for latency).
//!
//! The paper does not say how it averages over workloads; we compare with
//! the arithmetic mean over the nine workloads of the per-workload change
//! (`mean_w (x_w / y_w − 1)`), which is what "reduces ... by X% on average"
//! most naturally means.

/// One published claim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Claim {
    /// Figure (or section) it belongs to, e.g. "Fig. 8".
    pub figure: &'static str,
    /// What is compared, in words.
    pub what: &'static str,
    /// Which statistic: the average over workloads, a named workload's
    /// value, or the largest reduction or increase over workloads.
    pub stat: Stat,
    /// The subject scheme (registry name) and the reference scheme.
    pub subject: &'static str,
    pub reference: &'static str,
    /// The metric compared.
    pub metric: Metric,
    /// Published change in percent.
    pub percent: f64,
    /// Where the paper states it.
    pub source: &'static str,
}

/// How a claim aggregates over workloads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stat {
    /// Arithmetic mean of per-workload changes.
    Mean,
    /// The change on one workload (Table II key).
    On(&'static str),
    /// The largest reduction (most negative change) over workloads.
    MaxReduction,
    /// The largest increase over workloads.
    MaxIncrease,
}

/// A per-run metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    ReadMean,
    WriteMean,
    ReadP99,
    ReadP999,
    /// Mean DOF over read requests.
    Dof,
    /// Host pages programmed (unique + rewrites).
    WriteVolume,
}

impl Metric {
    pub fn label(self) -> &'static str {
        match self {
            Metric::ReadMean => "avg read latency",
            Metric::WriteMean => "avg write latency",
            Metric::ReadP99 => "P99 read latency",
            Metric::ReadP999 => "P99.9 read latency",
            Metric::Dof => "DOF",
            Metric::WriteVolume => "write volume",
        }
    }
}

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
    Claim { figure, what, stat, subject, reference, metric, percent, source }
}

/// All claims, in figure order.
pub const CLAIMS: &[Claim] = &[
    c("Fig. 2", "Deduplication vs Native, DOF", Stat::Mean, "dedup", "native", Metric::Dof, 47.7, "§II-C"),
    c(
        "Fig. 2",
        "Deduplication vs Native, DOF on mds1",
        Stat::On("mds1"),
        "dedup",
        "native",
        Metric::Dof,
        76.0,
        "§II-C",
    ),
    c(
        "Fig. 3",
        "Deduplication vs Native, avg read latency",
        Stat::Mean,
        "dedup",
        "native",
        Metric::ReadMean,
        47.0,
        "§II-C",
    ),
    c(
        "Fig. 3",
        "Deduplication vs Native, avg read latency on mds1 (largest)",
        Stat::On("mds1"),
        "dedup",
        "native",
        Metric::ReadMean,
        75.6,
        "§II-C",
    ),
    c(
        "Fig. 8",
        "FAD vs Deduplication, avg read latency",
        Stat::Mean,
        "fad",
        "dedup",
        Metric::ReadMean,
        -34.1,
        "Abstract, §IV-B",
    ),
    c("Fig. 8", "FAD vs HAR, avg read latency", Stat::Mean, "fad", "har", Metric::ReadMean, -22.2, "Abstract, §IV-B"),
    c("Fig. 8", "FAD vs FCRC, avg read latency", Stat::Mean, "fad", "fcrc", Metric::ReadMean, -15.8, "Abstract, §IV-B"),
    c("Fig. 9", "FAD vs Deduplication, avg write latency", Stat::Mean, "fad", "dedup", Metric::WriteMean, 0.1, "§IV-B"),
    c("Fig. 9", "FAD vs HAR, avg write latency", Stat::Mean, "fad", "har", Metric::WriteMean, -0.6, "§IV-B"),
    c("Fig. 9", "FAD vs FCRC, avg write latency", Stat::Mean, "fad", "fcrc", Metric::WriteMean, -93.4, "§IV-B"),
    c("Fig. 10", "FAD-RPO vs Deduplication, DOF", Stat::Mean, "fad-rpo", "dedup", Metric::Dof, -23.0, "§IV-B"),
    c(
        "Fig. 10",
        "FAD-RPO vs Deduplication, DOF (largest reduction)",
        Stat::MaxReduction,
        "fad-rpo",
        "dedup",
        Metric::Dof,
        -38.0,
        "§IV-B",
    ),
    c(
        "Fig. 10",
        "FAD-RWPO-Rewrite vs Deduplication, DOF",
        Stat::Mean,
        "fad-rwpo-rewrite",
        "dedup",
        Metric::Dof,
        -30.0,
        "§IV-B",
    ),
    c(
        "Fig. 10",
        "FAD-RWPO-Rewrite vs Deduplication, DOF (largest reduction)",
        Stat::MaxReduction,
        "fad-rwpo-rewrite",
        "dedup",
        Metric::Dof,
        -48.0,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RPO vs Deduplication, avg read latency",
        Stat::Mean,
        "fad-rpo",
        "dedup",
        Metric::ReadMean,
        -23.1,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RPO vs Deduplication, avg read latency on Mail (largest)",
        Stat::On("mail"),
        "fad-rpo",
        "dedup",
        Metric::ReadMean,
        -35.0,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RWPO-Rewrite vs Deduplication, avg read latency",
        Stat::Mean,
        "fad-rwpo-rewrite",
        "dedup",
        Metric::ReadMean,
        -34.1,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RWPO-Rewrite vs Deduplication, avg read latency on mds1 (largest)",
        Stat::On("mds1"),
        "fad-rwpo-rewrite",
        "dedup",
        Metric::ReadMean,
        -44.9,
        "§IV-B",
    ),
    c(
        "Fig. 11",
        "FAD-RWPO vs FAD-RPO, avg read latency (\"no additional improvement\")",
        Stat::Mean,
        "fad-rwpo",
        "fad-rpo",
        Metric::ReadMean,
        0.0,
        "§IV-B",
    ),
    c(
        "Fig. 12",
        "FAD-RPO vs Deduplication, avg write latency",
        Stat::Mean,
        "fad-rpo",
        "dedup",
        Metric::WriteMean,
        8.9,
        "§IV-B",
    ),
    c(
        "Fig. 12",
        "FAD-RWPO vs FAD-RPO, avg write latency",
        Stat::Mean,
        "fad-rwpo",
        "fad-rpo",
        Metric::WriteMean,
        -11.0,
        "§IV-B",
    ),
    c("Fig. 13", "FAD vs Deduplication, P99 read latency", Stat::Mean, "fad", "dedup", Metric::ReadP99, -10.0, "§IV-C"),
    c("Fig. 13", "FAD vs HAR, P99 read latency", Stat::Mean, "fad", "har", Metric::ReadP99, -25.4, "§IV-C"),
    c("Fig. 13", "FAD vs FCRC, P99 read latency", Stat::Mean, "fad", "fcrc", Metric::ReadP99, -44.6, "§IV-C"),
    c(
        "Fig. 14",
        "FAD vs Deduplication, P99.9 read latency",
        Stat::Mean,
        "fad",
        "dedup",
        Metric::ReadP999,
        -41.3,
        "§IV-C",
    ),
    c("Fig. 14", "FAD vs HAR, P99.9 read latency", Stat::Mean, "fad", "har", Metric::ReadP999, -36.0, "§IV-C"),
    c("Fig. 14", "FAD vs FCRC, P99.9 read latency", Stat::Mean, "fad", "fcrc", Metric::ReadP999, -23.6, "§IV-C"),
    c(
        "Fig. 16",
        "FAD vs Deduplication, write volume",
        Stat::Mean,
        "fad",
        "dedup",
        Metric::WriteVolume,
        4.7,
        "§IV-D, §IV-E",
    ),
    c(
        "Fig. 16",
        "FAD vs Deduplication, write volume (largest increase)",
        Stat::MaxIncrease,
        "fad",
        "dedup",
        Metric::WriteVolume,
        7.7,
        "§IV-E",
    ),
    c("Fig. 16", "FAD vs FCRC, write volume", Stat::Mean, "fad", "fcrc", Metric::WriteVolume, -7.8, "§IV-E"),
];

/// Fig. 15: the rewrite thresholds ρ and the published average speedups of
/// FAD over Deduplication (§IV-D), in percent.
pub const FIG15_RHO: [f64; 7] = [0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35];
pub const FIG15_SPEEDUP: [f64; 7] = [12.8, 14.2, 16.0, 18.1, 20.1, 20.8, 20.2];

/// §IV-E: one RDLT on a 16-chip SSD, bytes; one WSTL node, bytes.
pub const RDLT_BYTES: f64 = 64.0;
pub const WSTL_NODE_BYTES: f64 = 12.0;
