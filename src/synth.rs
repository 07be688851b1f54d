//! Seeded synthetic workload generator.
//!
//! A [`SynthSpec`] describes a workload statistically (request count, read
//! ratio, size distribution, address locality, inter-arrival times);
//! [`generate`] turns it into a concrete, page-aligned [`Workload`] whose
//! requests carry no content ([`NO_CONTENT`]). Page contents are assigned
//! separately by [`crate::content::assign_content`], so the same request
//! stream can be replayed under several content models.
//!
//! # Address model
//!
//! Every request independently picks one of three placements:
//!
//! * with probability [`SynthSpec::sequential`] it starts exactly at the end
//!   of the previous request (of any operation), i.e. at `prev.lpn +
//!   prev.pages`; the very first request and a continuation that would cross
//!   the end of the footprint start at page 0 instead (the stream wraps);
//! * with probability [`SynthSpec::hot`] it starts uniformly at random inside
//!   the hot region, pages `[0, hot_pages - pages]`, so the whole request lies
//!   inside the hot region `[0, hot_bytes)`;
//! * otherwise it starts uniformly at random in `[0, footprint_pages - pages]`.
//!
//! A request therefore never crosses the end of the footprint, and the
//! footprint and hot region are truncated to whole pages.
//!
//! # Determinism and speed
//!
//! The generator uses one `Xoshiro256PlusPlus` stream seeded from the run
//! seed (xor a module salt, so that a synthetic workload and a content model
//! driven by the same seed do not consume identical random streams). The same
//! spec and seed always give the same requests. Generation does no
//! per-request allocation: the request vector is reserved once and the size
//! distribution is sampled from a precomputed cumulative table by binary
//! search, so the 1,000,000-request [`SynthSpec::benchmark`] workload takes a
//! few tens of milliseconds in release builds.

use crate::units::{short_f64, Nanos, Op};
use crate::workload::{Provenance, Request, Workload, NO_CONTENT};
use rand::{Rng, SeedableRng};
use rand_distr::Exp1;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Default logical page size in bytes.
pub const DEFAULT_PAGE_SIZE: u32 = 4096;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Largest table-based size distribution ([`SizeDist::InverseN`] maximum or
/// [`SizeDist::Explicit`] entry count): 2^20 entries (4 GiB requests).
pub const MAX_SIZE_TABLE: u32 = 1 << 20;

/// Most requests a synthetic workload may have (`requests=`): 2^32 - 1.
/// Other generated traces (`trace from-files --read-phase zipf:N`) share
/// the limit.
pub const MAX_REQUESTS: u64 = u32::MAX as u64;

/// Longest expected span of synthetic arrivals (requests x mean gap):
/// 2^61 ns, half the replayed span the simulator accepts.
pub const MAX_ARRIVAL_SPAN_NS: f64 = (1u64 << 61) as f64;

/// Salt mixed into the run seed so that the workload generator and the
/// content model never share a random stream ("SYNTHETI" in ASCII).
const SEED_SALT: u64 = 0x5359_4e54_4845_5449;

/// Errors from validating, parsing or generating a synthetic workload.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SynthError {
    /// A field of the spec has an invalid value; `key` names the field (or
    /// the compact-string key that sets it).
    #[error("invalid synthetic workload spec: `{key}` {reason}")]
    Invalid { key: String, reason: String },
    /// A compact spec string could not be parsed.
    #[error("cannot parse synthetic workload spec item `{item}`: {reason}")]
    Parse { item: String, reason: String },
    /// The request vector could not be allocated.
    #[error("cannot allocate memory for {requests} synthetic requests")]
    Alloc { requests: u64 },
}

fn invalid(key: &str, reason: impl Into<String>) -> SynthError {
    SynthError::Invalid { key: key.to_string(), reason: reason.into() }
}

fn parse_err(item: &str, reason: impl Into<String>) -> SynthError {
    SynthError::Parse { item: item.to_string(), reason: reason.into() }
}

/// Request size distribution, in pages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    /// Every request has exactly this many pages.
    Fixed(u32),
    /// Uniform over `min..=max` pages.
    Uniform { min: u32, max: u32 },
    /// `P(n) ∝ 1/n` for `n` in `1..=max` pages: small requests dominate but
    /// large ones carry a sizeable share of the traffic. The mean is
    /// `max / H_max` (H = harmonic number), e.g. 16/H_16 ≈ 4.73 pages.
    InverseN { max: u32 },
    /// Explicit `(pages, weight)` pairs; weights need not sum to 1.
    Explicit(Vec<(u32, f64)>),
}

impl SizeDist {
    /// Largest request size in pages (0 for an empty explicit list).
    pub fn max_pages(&self) -> u32 {
        match self {
            SizeDist::Fixed(n) => *n,
            SizeDist::Uniform { max, .. } => *max,
            SizeDist::InverseN { max } => *max,
            SizeDist::Explicit(v) => v.iter().filter(|(_, w)| *w > 0.0).map(|(p, _)| *p).max().unwrap_or(0),
        }
    }

    /// Mean request size in pages.
    pub fn mean_pages(&self) -> f64 {
        match self {
            SizeDist::Fixed(n) => *n as f64,
            SizeDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            SizeDist::InverseN { max } => {
                let h: f64 = (1..=*max).map(|n| 1.0 / n as f64).sum();
                *max as f64 / h
            }
            SizeDist::Explicit(v) => {
                let tw: f64 = v.iter().map(|(_, w)| *w).sum();
                v.iter().map(|(p, w)| *p as f64 * *w).sum::<f64>() / tw
            }
        }
    }

    /// Checks the distribution (errors name the `size` key).
    pub fn validate(&self) -> Result<(), SynthError> {
        match self {
            SizeDist::Fixed(0) => Err(invalid("size", "fixed size must be at least 1 page")),
            SizeDist::Fixed(_) => Ok(()),
            SizeDist::Uniform { min, max } => {
                if *min == 0 {
                    Err(invalid("size", "uniform minimum must be at least 1 page"))
                } else if min > max {
                    Err(invalid("size", format!("uniform minimum {min} exceeds maximum {max}")))
                } else {
                    Ok(())
                }
            }
            SizeDist::InverseN { max } => {
                if *max == 0 {
                    Err(invalid("size", "inverse-n maximum must be at least 1 page"))
                } else if *max > MAX_SIZE_TABLE {
                    Err(invalid("size", format!("inverse-n maximum {max} exceeds the limit of {MAX_SIZE_TABLE} pages")))
                } else {
                    Ok(())
                }
            }
            SizeDist::Explicit(v) => {
                if v.is_empty() {
                    return Err(invalid("size", "explicit size list is empty"));
                }
                if v.len() > MAX_SIZE_TABLE as usize {
                    return Err(invalid("size", format!("explicit size list has more than {MAX_SIZE_TABLE} entries")));
                }
                let mut total = 0.0;
                for &(p, w) in v {
                    if p == 0 {
                        return Err(invalid("size", "explicit sizes must be at least 1 page"));
                    }
                    if !(w.is_finite() && w >= 0.0) {
                        return Err(invalid("size", format!("weight {w} of size {p} must be finite and >= 0")));
                    }
                    total += w;
                }
                if !(total > 0.0 && total.is_finite()) {
                    return Err(invalid("size", "explicit weights must have a positive finite sum"));
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for SizeDist {
    /// Compact form accepted by the `size=` key of [`SynthSpec::from_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeDist::Fixed(n) => write!(f, "fixed:{n}"),
            SizeDist::Uniform { min, max } => write!(f, "uni:{min}-{max}"),
            SizeDist::InverseN { max } => write!(f, "inv:{max}"),
            SizeDist::Explicit(v) => {
                f.write_str("list:")?;
                for (i, (p, w)) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str("/")?;
                    }
                    write!(f, "{p}:{w}")?;
                }
                Ok(())
            }
        }
    }
}

/// Inter-arrival time distribution (times in microseconds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Interarrival {
    /// Poisson arrivals: exponential gaps with this mean.
    Exponential { mean_us: f64 },
    /// Constant gaps.
    Fixed { us: f64 },
    /// Gaps uniform in `[min_us, max_us)`.
    Uniform { min_us: f64, max_us: f64 },
}

impl Interarrival {
    /// Mean gap in microseconds.
    pub fn mean_us(&self) -> f64 {
        match self {
            Interarrival::Exponential { mean_us } => *mean_us,
            Interarrival::Fixed { us } => *us,
            Interarrival::Uniform { min_us, max_us } => (min_us + max_us) / 2.0,
        }
    }

    /// Checks the distribution (errors name the `interarrival` key).
    pub fn validate(&self) -> Result<(), SynthError> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        match self {
            Interarrival::Exponential { mean_us } if !ok(*mean_us) => {
                Err(invalid("interarrival", format!("exponential mean {mean_us} us must be finite and >= 0")))
            }
            Interarrival::Fixed { us } if !ok(*us) => {
                Err(invalid("interarrival", format!("fixed gap {us} us must be finite and >= 0")))
            }
            Interarrival::Uniform { min_us, max_us } => {
                if !ok(*min_us) || !ok(*max_us) {
                    Err(invalid("interarrival", "uniform bounds must be finite and >= 0"))
                } else if min_us > max_us {
                    Err(invalid("interarrival", format!("uniform minimum {min_us} us exceeds maximum {max_us} us")))
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Interarrival {
    /// Compact form accepted by the `iat=` key of [`SynthSpec::from_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Interarrival::Exponential { mean_us } => write!(f, "exp:{mean_us}us"),
            Interarrival::Fixed { us } => write!(f, "fixed:{us}us"),
            Interarrival::Uniform { min_us, max_us } => write!(f, "uni:{min_us}us-{max_us}us"),
        }
    }
}

/// A synthetic workload description. All fields have defaults (those of
/// [`SynthSpec::default`], the [`SynthSpec::default_small`] shape), so a TOML
/// table only needs the fields it changes; unknown fields are rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynthSpec {
    /// Short name, used as the workload's provenance name.
    pub name: String,
    /// Number of requests.
    pub requests: u64,
    /// Probability that a request is a read (otherwise a write).
    pub read_ratio: f64,
    /// Request sizes in pages.
    pub size: SizeDist,
    /// Fraction of requests continuing right after the previous request's end.
    pub sequential: f64,
    /// Fraction of requests placed uniformly inside the hot region.
    pub hot: f64,
    /// Size of the hot region, which starts at byte 0.
    pub hot_bytes: u64,
    /// Size of the addressed space, starting at byte 0.
    pub footprint_bytes: u64,
    /// Logical page size in bytes (a positive multiple of 512).
    pub page_size: u32,
    /// Inter-arrival time distribution.
    pub interarrival: Interarrival,
    /// When set, overrides the run seed passed to [`generate`], pinning the
    /// request stream regardless of the configuration's seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Interleaved writers (`streams=N`, default 1): the generated workload,
    /// contents drawn, is cut into N runs of consecutive requests served
    /// round-robin, each with its own [`Request::stream`]
    /// ([`Workload::interleave_streams`]).
    #[serde(skip_serializing_if = "is_one")]
    pub streams: u16,
}

fn is_one(n: &u16) -> bool {
    *n == 1
}

impl Default for SynthSpec {
    /// The [`SynthSpec::default_small`] shape, named "synthetic".
    fn default() -> Self {
        SynthSpec { name: "synthetic".into(), ..SynthSpec::default_small() }
    }
}

/// Quantities derived from a validated spec.
#[derive(Copy, Clone, Debug)]
struct Derived {
    footprint_pages: u64,
    hot_pages: u64,
}

impl SynthSpec {
    /// The project's benchmark workload: 1,000,000 requests, 50% reads,
    /// sizes 1-16 pages with `P(n) ∝ 1/n`, 30% sequential continuations /
    /// 40% uniform in a 5 GiB hot region / 30% uniform over 50 GiB, and
    /// exponential inter-arrival times with a mean of 100 us. "GB" is read as
    /// GiB (binary), the usual convention for device footprints.
    pub fn benchmark() -> SynthSpec {
        SynthSpec {
            name: "benchmark".into(),
            requests: 1_000_000,
            read_ratio: 0.5,
            size: SizeDist::InverseN { max: 16 },
            sequential: 0.3,
            hot: 0.4,
            hot_bytes: 5 * GIB,
            footprint_bytes: 50 * GIB,
            page_size: DEFAULT_PAGE_SIZE,
            interarrival: Interarrival::Exponential { mean_us: 100.0 },
            seed: None,
            streams: 1,
        }
    }

    /// The CLI's built-in default job: the benchmark's shape scaled down to
    /// 200,000 requests over a 16 GiB footprint with a 2 GiB hot region.
    /// About 100,000 writes of ~4.7 pages (~1.8 GiB written) replay in well
    /// under a second, and the hot region plus sequential runs produce
    /// plenty of overwrites, so dedup, reference counting and GC are all
    /// exercised.
    pub fn default_small() -> SynthSpec {
        SynthSpec {
            name: "default-small".into(),
            requests: 200_000,
            hot_bytes: 2 * GIB,
            footprint_bytes: 16 * GIB,
            ..SynthSpec::benchmark()
        }
    }

    /// Checks every field; errors name the offending key.
    pub fn validate(&self) -> Result<(), SynthError> {
        self.derive().map(|_| ())
    }

    fn derive(&self) -> Result<Derived, SynthError> {
        let frac = |key: &str, x: f64| {
            if x.is_finite() && (0.0..=1.0).contains(&x) {
                Ok(())
            } else {
                Err(invalid(key, format!("must be a fraction in [0, 1], got {x}")))
            }
        };
        if self.page_size == 0 || self.page_size % 512 != 0 {
            return Err(invalid(
                "page_size",
                format!("must be a positive multiple of 512 bytes, got {}", self.page_size),
            ));
        }
        if self.requests == 0 {
            return Err(invalid("requests", "must be at least 1"));
        }
        if self.streams == 0 {
            return Err(invalid("streams", "must be at least 1"));
        }
        if self.requests > MAX_REQUESTS {
            return Err(invalid("requests", format!("must be at most {MAX_REQUESTS}, got {}", self.requests)));
        }
        frac("read_ratio", self.read_ratio)?;
        frac("sequential", self.sequential)?;
        frac("hot", self.hot)?;
        if self.sequential + self.hot > 1.0 + 1e-9 {
            return Err(invalid(
                "sequential",
                format!("sequential ({}) + hot ({}) must not exceed 1", self.sequential, self.hot),
            ));
        }
        self.size.validate()?;
        self.interarrival.validate()?;
        // The arrivals must fit the simulator's clock with room to spare
        // for the queues behind them (it refuses replayed spans beyond
        // 2^62 ns): the expected span, requests x mean gap, at most 2^61 ns.
        let span_ns = self.requests as f64 * self.interarrival.mean_us() * 1e3;
        if span_ns > MAX_ARRIVAL_SPAN_NS {
            return Err(invalid(
                "interarrival",
                format!(
                    "iat: {} requests x a mean gap of {} us span about {} s of arrivals, beyond the {} s \
                     (2^61 ns, about 73 years) the simulated clock can replay; use a shorter gap or fewer requests",
                    self.requests,
                    short_f64(self.interarrival.mean_us()),
                    short_f64((span_ns / 1e9).round()),
                    (MAX_ARRIVAL_SPAN_NS / 1e9).round()
                ),
            ));
        }
        let page = self.page_size as u64;
        let max_req = self.size.max_pages() as u64;
        let footprint_pages = self.footprint_bytes / page;
        if footprint_pages > u32::MAX as u64 {
            return Err(invalid(
                "footprint_bytes",
                format!(
                    "{} bytes is {} pages, more than the {} addressable pages",
                    self.footprint_bytes,
                    footprint_pages,
                    u32::MAX
                ),
            ));
        }
        if footprint_pages < max_req {
            return Err(invalid(
                "footprint_bytes",
                format!(
                    "{} bytes ({} pages) cannot hold the largest request ({} pages)",
                    self.footprint_bytes, footprint_pages, max_req
                ),
            ));
        }
        let hot_pages = self.hot_bytes / page;
        if self.hot > 0.0 {
            if self.hot_bytes > self.footprint_bytes {
                return Err(invalid(
                    "hot_bytes",
                    format!(
                        "hot region ({} bytes) exceeds the footprint ({} bytes); set both, e.g. hot=0.4:1GiB",
                        self.hot_bytes, self.footprint_bytes
                    ),
                ));
            }
            if hot_pages < max_req {
                return Err(invalid(
                    "hot_bytes",
                    format!(
                        "hot region ({} bytes, {} pages) cannot hold the largest request ({} pages)",
                        self.hot_bytes, hot_pages, max_req
                    ),
                ));
            }
        }
        if self.name.is_empty() {
            return Err(invalid("name", "must not be empty"));
        }
        Ok(Derived { footprint_pages, hot_pages })
    }
}

/// Precomputed request-size sampler.
pub(crate) enum SizeSampler {
    Fixed(u32),
    Uniform(u32, u32),
    /// Sizes and their running weight sums; sampled by binary search.
    Table {
        pages: Vec<u32>,
        cum: Vec<f64>,
    },
}

impl SizeSampler {
    fn new(d: &SizeDist) -> SizeSampler {
        match d {
            SizeDist::Fixed(n) => SizeSampler::Fixed(*n),
            SizeDist::Uniform { min, max } => SizeSampler::Uniform(*min, *max),
            SizeDist::InverseN { max } => {
                let pages: Vec<u32> = (1..=*max).collect();
                let w: Vec<f64> = pages.iter().map(|&n| 1.0 / n as f64).collect();
                SizeSampler::table(pages, &w)
            }
            SizeDist::Explicit(v) => {
                let pages = v.iter().map(|(p, _)| *p).collect();
                let w: Vec<f64> = v.iter().map(|(_, w)| *w).collect();
                SizeSampler::table(pages, &w)
            }
        }
    }

    /// Samples `pages[i]` with probability proportional to `w[i]`.
    pub(crate) fn table(pages: Vec<u32>, w: &[f64]) -> SizeSampler {
        let mut acc = 0.0;
        let cum = w
            .iter()
            .map(|x| {
                acc += x;
                acc
            })
            .collect();
        SizeSampler::Table { pages, cum }
    }

    #[inline]
    pub(crate) fn sample<R: Rng>(&self, rng: &mut R) -> u32 {
        match self {
            SizeSampler::Fixed(n) => *n,
            SizeSampler::Uniform(a, b) => rng.gen_range(*a..=*b),
            SizeSampler::Table { pages, cum } => {
                let total = cum[cum.len() - 1];
                let u = rng.gen::<f64>() * total;
                // First entry whose running sum exceeds u; zero-weight entries
                // (equal running sums) are never chosen.
                let i = cum.partition_point(|&c| c <= u);
                pages[i.min(pages.len() - 1)]
            }
        }
    }
}

/// Precomputed inter-arrival sampler (nanoseconds).
enum GapSampler {
    Exponential(f64),
    Fixed(u64),
    Uniform(f64, f64),
}

impl GapSampler {
    fn new(d: &Interarrival) -> GapSampler {
        match d {
            Interarrival::Exponential { mean_us } => GapSampler::Exponential(mean_us * 1e3),
            Interarrival::Fixed { us } => GapSampler::Fixed((us * 1e3).round() as u64),
            Interarrival::Uniform { min_us, max_us } => GapSampler::Uniform(min_us * 1e3, (max_us - min_us) * 1e3),
        }
    }

    #[inline]
    fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        match self {
            GapSampler::Exponential(mean_ns) => {
                let x: f64 = rng.sample(Exp1);
                (x * mean_ns).round() as u64
            }
            GapSampler::Fixed(ns) => *ns,
            GapSampler::Uniform(min_ns, width_ns) => (min_ns + rng.gen::<f64>() * width_ns).round() as u64,
        }
    }
}

/// Generates the workload described by `spec`.
///
/// `seed` is the run seed (normally [`crate::config::Config::seed`]);
/// [`SynthSpec::seed`], when set, takes precedence. Requests are page-aligned,
/// in arrival order (the first arrives at time 0, then gaps are drawn from
/// the inter-arrival distribution), carry [`NO_CONTENT`], and lie inside the
/// footprint. The provenance is `name = spec.name`, `source = "synthetic
/// (seed N)"` with the seed actually used.
pub fn generate(spec: &SynthSpec, seed: u64) -> Result<Workload, SynthError> {
    let d = spec.derive()?;
    let seed = spec.seed.unwrap_or(seed);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT);
    let sizes = SizeSampler::new(&spec.size);
    let gaps = GapSampler::new(&spec.interarrival);
    let n = usize::try_from(spec.requests).map_err(|_| SynthError::Alloc { requests: spec.requests })?;
    let mut requests: Vec<Request> = Vec::new();
    requests.try_reserve_exact(n).map_err(|_| SynthError::Alloc { requests: spec.requests })?;

    let fp = d.footprint_pages;
    let hot = d.hot_pages;
    let read_ratio = spec.read_ratio;
    let seq_cut = spec.sequential;
    let hot_cut = spec.sequential + spec.hot;
    let mut now: u64 = 0;
    let mut next_seq: u64 = 0;
    for _ in 0..n {
        let op = if rng.gen::<f64>() < read_ratio { Op::Read } else { Op::Write };
        let pages = sizes.sample(&mut rng);
        let len = pages as u64;
        let u: f64 = rng.gen();
        let lpn = if u < seq_cut {
            if next_seq + len <= fp {
                next_seq
            } else {
                0
            }
        } else if u < hot_cut {
            rng.gen_range(0..=hot - len)
        } else {
            rng.gen_range(0..=fp - len)
        };
        next_seq = lpn + len;
        requests.push(Request {
            arrival: Nanos(now),
            op,
            // lpn + len <= fp <= u32::MAX, checked by derive().
            lpn: lpn as u32,
            pages,
            content: NO_CONTENT,
            stream: 0,
        });
        now = now.saturating_add(gaps.sample(&mut rng));
    }

    let mut w = Workload::from_requests(
        Provenance { name: spec.name.clone(), source: format!("synthetic (seed {seed})") },
        requests,
    );
    w.writers = spec.streams;
    Ok(w)
}

// ---------------------------------------------------------------------------
// Compact string form
// ---------------------------------------------------------------------------

/// Keys accepted by [`SynthSpec::from_str`].
const KEYS: &str = "name, requests, read, size, seq, hot, footprint, page, iat, seed, streams";

impl FromStr for SynthSpec {
    type Err = SynthError;

    /// Parses a compact, comma-separated spec such as
    /// `requests=1000,read=0.5,size=inv:16,seq=0.3,hot=0.4:5GiB,footprint=50GiB,iat=exp:100us`.
    ///
    /// Grammar (keys may appear in any order, each at most once; omitted keys
    /// keep the [`SynthSpec::default`] values, or those of a preset given as
    /// the first item):
    ///
    /// ```text
    /// spec      := [preset ","] item ("," item)*  |  preset
    /// preset    := "benchmark" | "small"
    /// item      := key "=" value
    /// name=STR             workload name (no ',' or '=')
    /// requests=COUNT       e.g. 1000, 200_000, 200k, 1M (k=10^3, M=10^6, G=10^9)
    /// read=FRAC            read ratio; FRAC is 0.3 or 30%
    /// size=SIZE            N | fixed:N | uni:MIN-MAX | inv:MAX | list:P:W/P:W/...
    ///                      (pages; inv:MAX is P(n) ∝ 1/n on 1..=MAX)
    /// seq=FRAC             sequential-continuation fraction
    /// hot=FRAC[:BYTES]     hot fraction and optionally the hot region size
    /// footprint=BYTES      addressed space
    /// page=BYTES           page size (default 4KiB); `run` and `trace synth`
    ///                      use the device's (geometry.page_size) and refuse
    ///                      another (SynthSpec::parse_for_page_size);
    ///                      experiments replace it
    /// iat=IAT              exp:TIME | fixed:TIME | TIME | uni:TIME-TIME
    /// seed=U64             pin the seed (overrides the run seed)
    /// streams=N            N interleaved writers (default 1; Light-Dedup's
    ///                      per-stream prediction state)
    /// BYTES := NUMBER [B | K | KiB | M | MiB | G | GiB | T | TiB   (binary)
    ///                     | KB | MB | GB | TB]                      (decimal)
    /// TIME  := NUMBER [ns | us | ms | s]     (no unit: microseconds)
    /// ```
    ///
    /// Byte and time units are case-insensitive; the `requests` suffixes
    /// k, M, G are decimal (10^3, 10^6, 10^9). The result is validated;
    /// every error names the offending item or key.
    fn from_str(s: &str) -> Result<SynthSpec, SynthError> {
        SynthSpec::parse_keys(s).map(|(spec, _)| spec)
    }
}

impl SynthSpec {
    /// Parses `s` ([`SynthSpec::from_str`]) for a device whose logical
    /// pages are `page_size` bytes: the workload takes the device's page
    /// size. A `page=` naming another size is an error naming both (the
    /// page size is the device's, `geometry.page_size`); without `page=`
    /// the default 4 KiB gives way silently.
    pub fn parse_for_page_size(s: &str, page_size: u32) -> Result<SynthSpec, SynthError> {
        let (mut spec, page_given) = SynthSpec::parse_keys(s)?;
        if page_given && spec.page_size != page_size {
            return Err(invalid(
                "page",
                format!(
                    "is {} bytes, but the device's pages are {page_size} bytes (geometry.page_size): a synthetic \
                     workload is laid out in the device's pages; use --set geometry.page_size={} to simulate {}-byte \
                     pages, or leave out page=",
                    spec.page_size, spec.page_size, spec.page_size
                ),
            ));
        }
        spec.page_size = page_size;
        spec.validate()?;
        Ok(spec)
    }

    /// [`SynthSpec::from_str`], and whether `page=` was given.
    fn parse_keys(s: &str) -> Result<(SynthSpec, bool), SynthError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(parse_err(s, "empty spec"));
        }
        let mut items = s.split(',').map(str::trim).peekable();
        let mut spec = match items.peek().copied() {
            Some("benchmark") => {
                items.next();
                SynthSpec::benchmark()
            }
            Some("small") | Some("default-small") => {
                items.next();
                SynthSpec::default_small()
            }
            _ => SynthSpec::default(),
        };
        let mut seen: Vec<&str> = Vec::new();
        for item in items {
            if item.is_empty() {
                return Err(parse_err(item, "empty item (stray comma?)"));
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(parse_err(
                    item,
                    format!("expected key=value (keys: {KEYS}; presets benchmark, small go first)"),
                ));
            };
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return Err(parse_err(item, format!("key `{key}` given more than once")));
            }
            seen.push(key);
            match key {
                "name" => {
                    if value.is_empty() {
                        return Err(parse_err(item, "name must not be empty"));
                    }
                    spec.name = value.to_string();
                }
                "requests" => spec.requests = parse_count(value).map_err(|e| parse_err(item, e))?,
                "read" => spec.read_ratio = parse_frac(value).map_err(|e| parse_err(item, e))?,
                "seq" => spec.sequential = parse_frac(value).map_err(|e| parse_err(item, e))?,
                "size" => spec.size = parse_size(value).map_err(|e| parse_err(item, e))?,
                "hot" => {
                    let (f, bytes) = match value.split_once(':') {
                        Some((f, b)) => (f, Some(b)),
                        None => (value, None),
                    };
                    spec.hot = parse_frac(f).map_err(|e| parse_err(item, e))?;
                    if let Some(b) = bytes {
                        spec.hot_bytes = parse_bytes(b).map_err(|e| parse_err(item, e))?;
                    }
                }
                "footprint" => spec.footprint_bytes = parse_bytes(value).map_err(|e| parse_err(item, e))?,
                "page" => {
                    let b = parse_bytes(value).map_err(|e| parse_err(item, e))?;
                    spec.page_size =
                        u32::try_from(b).map_err(|_| parse_err(item, "page size does not fit in 32 bits"))?;
                }
                "iat" => spec.interarrival = parse_iat(value).map_err(|e| parse_err(item, e))?,
                "seed" => {
                    spec.seed = Some(
                        value.parse::<u64>().map_err(|_| parse_err(item, "seed must be an unsigned 64-bit integer"))?,
                    )
                }
                "streams" => {
                    spec.streams = value
                        .parse::<u16>()
                        .ok()
                        .filter(|&n| n >= 1)
                        .ok_or_else(|| parse_err(item, "streams must be an integer from 1 to 65535"))?
                }
                _ => return Err(parse_err(item, format!("unknown key `{key}` (keys: {KEYS})"))),
            }
        }
        spec.validate()?;
        Ok((spec, seen.contains(&"page")))
    }
}

impl fmt::Display for SynthSpec {
    /// The compact string form; parses back to an equal spec (provided the
    /// name contains no `,` or `=`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "name={},requests={},read={},size={},seq={},hot={}:{},footprint={},page={},iat={}",
            self.name,
            self.requests,
            self.read_ratio,
            self.size,
            self.sequential,
            self.hot,
            fmt_bytes(self.hot_bytes),
            fmt_bytes(self.footprint_bytes),
            fmt_bytes(self.page_size as u64),
            self.interarrival
        )?;
        if let Some(seed) = self.seed {
            write!(f, ",seed={seed}")?;
        }
        if self.streams != 1 {
            write!(f, ",streams={}", self.streams)?;
        }
        Ok(())
    }
}

/// Exact byte count with the largest binary unit that divides it.
fn fmt_bytes(b: u64) -> String {
    for (unit, name) in [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if b != 0 && b % unit == 0 {
            return format!("{}{}", b / unit, name);
        }
    }
    format!("{b}")
}

/// Splits `s` at the first `-` that is not an exponent sign.
fn split_range(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    (1..b.len()).find(|&i| b[i] == b'-' && !matches!(b[i - 1], b'e' | b'E')).map(|i| (&s[..i], &s[i + 1..]))
}

/// Splits a number from its (alphabetic) unit suffix.
fn split_unit(s: &str) -> (&str, &str) {
    let s = s.trim();
    let i =
        s.char_indices().rev().take_while(|(_, c)| c.is_ascii_alphabetic()).last().map(|(i, _)| i).unwrap_or(s.len());
    (s[..i].trim(), &s[i..])
}

fn parse_f64(s: &str) -> Result<f64, String> {
    let x: f64 = s.replace('_', "").parse().map_err(|_| format!("`{s}` is not a number"))?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("`{s}` is not a finite number"))
    }
}

fn parse_count(s: &str) -> Result<u64, String> {
    let (num, unit) = split_unit(s);
    let mult: u64 = match unit {
        "" => 1,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        _ => return Err(format!("unknown count suffix `{unit}` (use k, M or G)")),
    };
    let n: u64 = num.replace('_', "").parse().map_err(|_| format!("`{s}` is not a non-negative integer count"))?;
    n.checked_mul(mult).ok_or_else(|| format!("`{s}` is too large"))
}

fn parse_frac(s: &str) -> Result<f64, String> {
    let x = match s.strip_suffix('%') {
        Some(p) => parse_f64(p.trim())? / 100.0,
        None => parse_f64(s)?,
    };
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(format!("`{s}` is not a fraction in [0, 1]"))
    }
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let (num, unit) = split_unit(s);
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => KIB,
        "m" | "mib" => MIB,
        "g" | "gib" => GIB,
        "t" | "tib" => TIB,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(format!("unknown byte unit `{unit}` (use B, KiB, MiB, GiB, TiB or KB, MB, GB, TB)")),
    };
    if num.is_empty() {
        return Err(format!("`{s}` has no number"));
    }
    if let Ok(n) = num.replace('_', "").parse::<u64>() {
        return n.checked_mul(mult).ok_or_else(|| format!("`{s}` is too large"));
    }
    let x = parse_f64(num)? * mult as f64;
    if x < 0.0 || x.fract() != 0.0 || x >= u64::MAX as f64 {
        return Err(format!("`{s}` is not a whole, non-negative number of bytes"));
    }
    Ok(x as u64)
}

/// Parses a duration into microseconds.
fn parse_time_us(s: &str) -> Result<f64, String> {
    let (num, unit) = split_unit(s);
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "us" => 1.0,
        "ns" => 1e-3,
        "ms" => 1e3,
        "s" => 1e6,
        _ => return Err(format!("unknown time unit `{unit}` (use ns, us, ms or s)")),
    };
    if num.is_empty() {
        return Err(format!("`{s}` has no number"));
    }
    let x = parse_f64(num)? * scale;
    if x >= 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(format!("`{s}` is not a non-negative duration"))
    }
}

fn parse_pages(s: &str) -> Result<u32, String> {
    s.trim().replace('_', "").parse::<u32>().map_err(|_| format!("`{s}` is not a page count"))
}

fn parse_size(s: &str) -> Result<SizeDist, String> {
    let (kind, arg) = match s.split_once(':') {
        Some((k, a)) => (k.trim(), a.trim()),
        None => ("fixed", s),
    };
    match kind {
        "fixed" => Ok(SizeDist::Fixed(parse_pages(arg)?)),
        "uni" | "uniform" => {
            let (a, b) = split_range(arg).ok_or_else(|| format!("uniform sizes need MIN-MAX, got `{arg}`"))?;
            Ok(SizeDist::Uniform { min: parse_pages(a)?, max: parse_pages(b)? })
        }
        "inv" => Ok(SizeDist::InverseN { max: parse_pages(arg)? }),
        "list" => {
            let mut v = Vec::new();
            for pair in arg.split('/') {
                let (p, w) =
                    pair.split_once(':').ok_or_else(|| format!("list entries are PAGES:WEIGHT, got `{pair}`"))?;
                v.push((parse_pages(p)?, parse_f64(w.trim())?));
            }
            Ok(SizeDist::Explicit(v))
        }
        _ => Err(format!("unknown size distribution `{kind}` (use N, fixed:N, uni:MIN-MAX, inv:MAX, list:P:W/...)")),
    }
}

fn parse_iat(s: &str) -> Result<Interarrival, String> {
    let (kind, arg) = match s.split_once(':') {
        Some((k, a)) => (k.trim(), a.trim()),
        None => ("fixed", s),
    };
    match kind {
        "exp" => Ok(Interarrival::Exponential { mean_us: parse_time_us(arg)? }),
        "fixed" => Ok(Interarrival::Fixed { us: parse_time_us(arg)? }),
        "uni" | "uniform" => {
            let (a, b) = split_range(arg).ok_or_else(|| format!("uniform gaps need MIN-MAX, got `{arg}`"))?;
            Ok(Interarrival::Uniform { min_us: parse_time_us(a)?, max_us: parse_time_us(b)? })
        }
        _ => Err(format!("unknown inter-arrival distribution `{kind}` (use exp:T, fixed:T, uni:T1-T2)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_bytes("5GiB"), Ok(5 * GIB));
        assert_eq!(parse_bytes("5 gib"), Ok(5 * GIB));
        assert_eq!(parse_bytes("4K"), Ok(4096));
        assert_eq!(parse_bytes("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_bytes("1.5KiB"), Ok(1536));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("1.3B").is_err());
        assert!(parse_bytes("GiB").is_err());
        assert!(parse_bytes("5 parsecs").is_err());
        assert!(parse_bytes("-5GiB").is_err());
        assert_eq!(parse_time_us("100us"), Ok(100.0));
        assert_eq!(parse_time_us("100"), Ok(100.0));
        assert_eq!(parse_time_us("2ms"), Ok(2000.0));
        assert_eq!(parse_time_us("500ns"), Ok(0.5));
        assert!(parse_time_us("-1us").is_err());
        assert_eq!(parse_count("200k"), Ok(200_000));
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("99999999999999999999").is_err());
        assert_eq!(parse_frac("30%"), Ok(0.3));
        assert!(parse_frac("1.2").is_err());
        assert_eq!(split_range("1e-3ms-2ms"), Some(("1e-3ms", "2ms")));
    }

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_size("4"), Ok(SizeDist::Fixed(4)));
        assert_eq!(parse_size("inv:16"), Ok(SizeDist::InverseN { max: 16 }));
        assert_eq!(parse_size("uni:2-8"), Ok(SizeDist::Uniform { min: 2, max: 8 }));
        assert_eq!(parse_size("list:1:0.5/8:0.5"), Ok(SizeDist::Explicit(vec![(1, 0.5), (8, 0.5)])));
        assert!(parse_size("zipf:3").is_err());
        assert!(parse_size("list:1").is_err());
    }

    #[test]
    fn inverse_n_sampler_matches_distribution() {
        let s = SizeSampler::new(&SizeDist::InverseN { max: 16 });
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut counts = [0u32; 17];
        let n = 400_000;
        for _ in 0..n {
            counts[s.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        let h: f64 = (1..=16).map(|i| 1.0 / i as f64).sum();
        for (i, &c) in counts.iter().enumerate().skip(1) {
            let p = 1.0 / (i as f64 * h);
            let got = c as f64 / n as f64;
            assert!((got - p).abs() < 0.005, "size {i}: {got} vs {p}");
        }
    }

    #[test]
    fn explicit_zero_weight_never_drawn() {
        let s = SizeSampler::new(&SizeDist::Explicit(vec![(1, 1.0), (2, 0.0), (3, 1.0)]));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        assert!((0..10_000).all(|_| s.sample(&mut rng) != 2));
    }

    #[test]
    fn presets_validate() {
        SynthSpec::benchmark().validate().unwrap();
        SynthSpec::default_small().validate().unwrap();
        SynthSpec::default().validate().unwrap();
        assert!((SizeDist::InverseN { max: 16 }.mean_pages() - 4.7328).abs() < 1e-3);
    }

    #[test]
    fn validation_names_keys() {
        let key_of = |s: SynthSpec| match s.validate() {
            Err(SynthError::Invalid { key, .. }) => key,
            other => panic!("expected an Invalid error, got {other:?}"),
        };
        let b = SynthSpec::benchmark;
        assert_eq!(key_of(SynthSpec { read_ratio: 1.5, ..b() }), "read_ratio");
        assert_eq!(key_of(SynthSpec { read_ratio: f64::NAN, ..b() }), "read_ratio");
        assert_eq!(key_of(SynthSpec { sequential: 0.7, ..b() }), "sequential");
        assert_eq!(key_of(SynthSpec { size: SizeDist::Fixed(0), ..b() }), "size");
        assert_eq!(key_of(SynthSpec { requests: 0, ..b() }), "requests");
        assert_eq!(key_of(SynthSpec { footprint_bytes: 4096, ..b() }), "footprint_bytes");
        assert_eq!(key_of(SynthSpec { hot_bytes: 60 * GIB, ..b() }), "hot_bytes");
        assert_eq!(key_of(SynthSpec { page_size: 1000, ..b() }), "page_size");
        assert_eq!(
            key_of(SynthSpec { interarrival: Interarrival::Uniform { min_us: 5.0, max_us: 1.0 }, ..b() }),
            "interarrival"
        );
        // hot = 0 makes the hot region irrelevant.
        SynthSpec { hot: 0.0, hot_bytes: 0, ..b() }.validate().unwrap();
    }

    #[test]
    fn display_round_trips() {
        for spec in [
            SynthSpec::benchmark(),
            SynthSpec::default_small(),
            SynthSpec {
                size: SizeDist::Explicit(vec![(1, 0.25), (8, 0.75)]),
                interarrival: Interarrival::Uniform { min_us: 0.5, max_us: 20.0 },
                seed: Some(9),
                footprint_bytes: 123 * 4096,
                hot: 0.0,
                ..SynthSpec::benchmark()
            },
        ] {
            let s = spec.to_string();
            assert_eq!(s.parse::<SynthSpec>().unwrap(), spec, "{s}");
        }
    }

    /// `page=` is the device's page size: `run` and `trace synth` refuse
    /// another (naming both and `--set geometry.page_size`) instead of
    /// replacing it without a word; without `page=` the device's applies.
    #[test]
    fn page_must_match_the_device() {
        let spec = "requests=3,size=fixed:1,page=16KiB,footprint=1MiB,hot=0";
        let e = SynthSpec::parse_for_page_size(spec, 4096).unwrap_err();
        let SynthError::Invalid { key, reason } = &e else { panic!("{e:?}") };
        assert_eq!(key, "page");
        for needle in ["16384 bytes", "4096 bytes (geometry.page_size)", "--set geometry.page_size=16384"] {
            assert!(reason.contains(needle), "{needle:?} missing from {e}");
        }
        assert_eq!(SynthSpec::parse_for_page_size(spec, 16384).unwrap().page_size, 16384);
        // Without `page=` (or with the device's) the device's page size is taken.
        let plain = "requests=3,size=fixed:1,footprint=1MiB,hot=0";
        assert_eq!(SynthSpec::parse_for_page_size(plain, 16384).unwrap().page_size, 16384);
        assert_eq!(SynthSpec::parse_for_page_size("requests=3,page=4096", 4096).unwrap().page_size, 4096);
        // And the spec is validated at that size: 1 MiB is 64 pages of 16 KiB.
        let e = SynthSpec::parse_for_page_size("size=fixed:128,footprint=1MiB,hot=0", 16384).unwrap_err();
        assert!(matches!(&e, SynthError::Invalid { key, .. } if key == "footprint_bytes"), "{e:?}");
        // FromStr still takes `page=` as written.
        assert_eq!(spec.parse::<SynthSpec>().unwrap().page_size, 16384);
    }

    #[test]
    fn toml_round_trips() {
        let spec = SynthSpec::benchmark();
        let text = toml::to_string(&spec).unwrap();
        let back: SynthSpec = toml::from_str(&text).unwrap();
        assert_eq!(back, spec);
        let partial: SynthSpec = toml::from_str("requests = 10\nread_ratio = 0.25").unwrap();
        assert_eq!(partial.requests, 10);
        assert_eq!(partial.size, SynthSpec::default().size);
        assert!(toml::from_str::<SynthSpec>("reqests = 10").is_err());
    }
}
