//! Workload profiles and the fitted generator (issue 24 item 2;
//! docs/profiles.md).
//!
//! A **profile** is a workload's locality statistics (`trace::locality`,
//! docs/locality.md) written as a small TOML file by `trace stats --profile
//! FILE`: request sizes, inter-arrival times, read-after-write distances
//! and the duplicates' reuse distances and run lengths as 101 percentiles
//! each, and the shares (reads, sequential writes, overwrites, whole-file
//! re-reads, duplicates, sequential and within-request duplicates) as
//! numbers. [`generate`] makes a workload with those statistics at any
//! size (`trace synth --profile FILE --scale S`, `run --profile FILE`).
//!
//! The generator is a small stochastic model whose knobs are the profile's
//! shares; because the model's pieces interact (a duplicate run is cut by
//! a write that does not continue the address, a reuse distance is counted
//! to the content's *last* write), the knobs are **fitted**: a pilot of up
//! to [`PILOT_REQUESTS`] requests is generated, measured with the very
//! statistics of `trace stats`, and each knob is corrected toward its
//! target, [`FIT_ROUNDS`] times; then the workload is generated with the
//! fitted knobs. Every statistic of the profile is also a knob a user or a
//! reproduction can override (`--profile-set duplicates.dedup_rate=0.4`).
//! What the model can and cannot match, with the tolerances the tests
//! check, is in docs/profiles.md.

use crate::trace::{locality, Dist, Locality};
use crate::units::{ContentId, Nanos, Op};
use crate::workload::{Provenance, Request, Workload};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The profile format's version (`version` key).
pub const VERSION: u32 = 1;
/// Requests of the fitting pilot (fewer when the workload is smaller).
pub const PILOT_REQUESTS: u64 = 100_000;
/// Fitting rounds.
pub const FIT_ROUNDS: u32 = 10;
/// Draws of a duplicate's source before the generator takes the last.
const REDRAWS: u32 = 8;
/// A run's next page continues its source only to content written at
/// most this many pages from the source's (module doc of [`model`]).
const TOGETHER_PAGES: usize = 64;
/// The committed profiles (`profiles/`, docs/profiles.md), by name: usable
/// wherever a profile file is (`--profile NAME`, `profile:NAME` in an
/// experiment's workloads) without the source tree.
pub const BUILTIN: &[(&str, &str)] = &[
    ("fiu-homes", include_str!("../profiles/fiu-homes.toml")),
    ("fiu-mail", include_str!("../profiles/fiu-mail.toml")),
    ("fiu-webvm", include_str!("../profiles/fiu-webvm.toml")),
    ("plan9-blocks", include_str!("../profiles/plan9-blocks.toml")),
    ("recorded-mail", include_str!("../profiles/recorded-mail.toml")),
    ("recorded-srctree", include_str!("../profiles/recorded-srctree.toml")),
    ("recorded-vmimages", include_str!("../profiles/recorded-vmimages.toml")),
    ("replica-homes", include_str!("../profiles/replica-homes.toml")),
    ("replica-mail", include_str!("../profiles/replica-mail.toml")),
    ("replica-webvm", include_str!("../profiles/replica-webvm.toml")),
];

/// Salt of the generator's random stream (distinct from `synth`'s).
const SEED_SALT: u64 = 0x5052_4f46_494c_4531;

#[derive(Debug, Error)]
pub enum ProfileError {
    #[error("cannot read profile {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("profile {path}: {msg}")]
    Parse { path: PathBuf, msg: String },
    #[error("profile {path}: `{key}`: {reason}")]
    Invalid { path: PathBuf, key: String, reason: String },
    #[error("profile override `{0}`: {1}")]
    Override(String, String),
    #[error("{0}")]
    Generate(String),
}

/// A distribution: its mean and its 101 percentiles p0..=p100 (both
/// empty / 0: no values). The generator draws from the percentiles; where
/// a scale knob follows a distribution (run lengths, reuse distances), the
/// draws are scaled until the measured mean is `mean`, so setting the mean
/// sweeps the statistic.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Percentiles {
    pub mean: f64,
    #[serde(rename = "percentiles")]
    pub p: Vec<u64>,
}

impl Percentiles {
    fn of(d: &Dist) -> Percentiles {
        Percentiles { mean: d.mean, p: d.percentiles.clone() }
    }

    /// A value drawn by inverse transform: a uniform percentile, linearly
    /// interpolated between its two neighbours (a point mass, such as
    /// 8-page requests, stays exact). `empty` when there are no values.
    fn sample<R: Rng>(&self, rng: &mut R, empty: u64) -> u64 {
        let q = &self.p;
        if q.is_empty() {
            return empty;
        }
        let u = rng.gen::<f64>() * 100.0;
        let i = (u as usize).min(99);
        let (a, b) = (q[i] as f64, q[i + 1] as f64);
        (a + (b - a) * (u - i as f64)).round() as u64
    }

    /// The mean of the interpolated distribution [`Percentiles::sample`] draws.
    #[cfg(test)]
    fn drawn_mean(&self) -> f64 {
        if self.p.is_empty() {
            return 0.0;
        }
        self.p.windows(2).map(|w| (w[0] + w[1]) as f64 / 2.0).sum::<f64>() / 100.0
    }

    fn check(&self, key: &str) -> Result<(), (String, String)> {
        let n = self.p.len();
        if !(n == 0 || n == 101) {
            return Err((format!("{key}.percentiles"), format!("{n} values; a distribution has 101 (or none)")));
        }
        if self.p.windows(2).any(|w| w[0] > w[1]) {
            return Err((format!("{key}.percentiles"), "must not decrease".into()));
        }
        if !(self.mean.is_finite() && self.mean >= 0.0) || (n > 0 && self.mean <= 0.0 && self.p[100] > 0) {
            return Err((format!("{key}.mean"), format!("{} is not a positive mean", self.mean)));
        }
        Ok(())
    }
}

/// Where the profile was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The trace (file name) or workload the profile was measured on.
    pub name: String,
    /// Read and write requests measured (trims are not profiled).
    pub requests: u64,
    /// The page size the trace was read at: sizes and addresses are in
    /// these pages.
    pub page_size: u32,
}

/// The content-free statistics (`trace::Shape`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeProfile {
    pub read_share: f64,
    pub sequential_write_share: f64,
    pub overwritten_page_share: f64,
    /// Read pages whose address the trace had not written (preconditioned data).
    pub unwritten_read_page_share: f64,
    pub whole_file_reread_share: f64,
    pub written_distinct_pages: u64,
    pub unwritten_read_distinct_pages: u64,
    pub read_pages: Percentiles,
    pub write_pages: Percentiles,
    pub interarrival_ns: Percentiles,
    pub read_after_write_requests: Percentiles,
}

/// The duplicates' statistics (`trace::DupLocality`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DupProfile {
    /// Duplicate pages over written pages.
    pub dedup_rate: f64,
    pub sequential_share: f64,
    pub within_request_share: f64,
    /// Measured, not a knob: it follows from the others.
    pub shared_by_files_share: f64,
    pub reuse_distance_pages: Percentiles,
    pub run_pages: Percentiles,
}

/// A workload profile (module doc).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub version: u32,
    pub source: Source,
    pub shape: ShapeProfile,
    /// Absent when the workload's writes carry no content: the generated
    /// workload then carries none either (a content model fills it).
    pub duplicates: Option<DupProfile>,
}

impl Profile {
    /// The profile of a measured workload.
    pub fn of(name: &str, page_size: u32, l: &Locality) -> Profile {
        let s = &l.shape;
        Profile {
            version: VERSION,
            source: Source { name: name.to_string(), requests: s.read_pages.count + s.write_pages.count, page_size },
            shape: ShapeProfile {
                read_share: s.read_share,
                sequential_write_share: s.sequential_write_share,
                overwritten_page_share: s.overwritten_page_share,
                unwritten_read_page_share: l.unwritten_read_page_share(),
                whole_file_reread_share: s.whole_file_reread_share,
                written_distinct_pages: s.written_distinct_pages,
                unwritten_read_distinct_pages: s.unwritten_read_distinct_pages,
                read_pages: Percentiles::of(&s.read_pages),
                write_pages: Percentiles::of(&s.write_pages),
                interarrival_ns: Percentiles::of(&s.interarrival_ns),
                read_after_write_requests: Percentiles::of(&s.read_after_write_requests),
            },
            duplicates: l.duplicates.as_ref().map(|d| DupProfile {
                dedup_rate: l.dup_page_share(),
                sequential_share: d.sequential_share,
                within_request_share: d.within_request_share,
                shared_by_files_share: d.shared_by_files_share,
                reuse_distance_pages: Percentiles::of(&d.reuse_distance_pages),
                run_pages: Percentiles::of(&d.run_pages),
            }),
        }
    }

    /// The profile as TOML, with a header naming the format.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).expect("a profile serializes");
        format!(
            "# dedupsim workload profile (docs/profiles.md): `trace synth --profile FILE` or\n\
             # `run --profile FILE` generates a workload with these statistics.\n{body}"
        )
    }

    /// Reads a profile from a file or, when no file `spec` exists and it
    /// names one, a built-in profile ([`BUILTIN`]), applying `overrides`.
    pub fn load_named(spec: &Path, overrides: &[String]) -> Result<Profile, ProfileError> {
        if !spec.exists() {
            if let Some((_, text)) = BUILTIN.iter().find(|(name, _)| spec.as_os_str() == *name) {
                return Profile::parse(text, spec, overrides);
            }
            if spec.extension().is_none() && spec.components().count() == 1 {
                let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
                return Err(ProfileError::Io {
                    path: spec.into(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("no such file nor built-in profile; built-in: {}", names.join(", ")),
                    ),
                });
            }
        }
        Profile::load(spec, overrides)
    }

    /// Reads a profile, applying `overrides` (`KEY=VALUE`, a dotted key of
    /// a number in the file) before checking it.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Profile, ProfileError> {
        let text = crate::params::read_text(path).map_err(|source| ProfileError::Io { path: path.into(), source })?;
        Profile::parse(&text, path, overrides)
    }

    /// [`Profile::load`] on text already read; `path` names it in errors.
    pub fn parse(text: &str, path: &Path, overrides: &[String]) -> Result<Profile, ProfileError> {
        let parse = |msg: String| ProfileError::Parse { path: path.into(), msg };
        let mut doc: toml::Value = toml::from_str(text).map_err(|e| parse(e.to_string()))?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        let p: Profile = doc.try_into().map_err(|e: toml::de::Error| parse(e.to_string()))?;
        p.validate().map_err(|(key, reason)| ProfileError::Invalid { path: path.into(), key, reason })?;
        Ok(p)
    }

    fn validate(&self) -> Result<(), (String, String)> {
        if self.version != VERSION {
            return Err(("version".into(), format!("{}; this dedupsim reads version {VERSION}", self.version)));
        }
        let s = &self.shape;
        let mut shares = vec![
            ("shape.read_share", s.read_share),
            ("shape.sequential_write_share", s.sequential_write_share),
            ("shape.overwritten_page_share", s.overwritten_page_share),
            ("shape.unwritten_read_page_share", s.unwritten_read_page_share),
            ("shape.whole_file_reread_share", s.whole_file_reread_share),
        ];
        if let Some(d) = &self.duplicates {
            shares.extend([
                ("duplicates.dedup_rate", d.dedup_rate),
                ("duplicates.sequential_share", d.sequential_share),
                ("duplicates.within_request_share", d.within_request_share),
                ("duplicates.shared_by_files_share", d.shared_by_files_share),
            ]);
            d.reuse_distance_pages.check("duplicates.reuse_distance_pages")?;
            d.run_pages.check("duplicates.run_pages")?;
            if d.dedup_rate > 0.0 && d.run_pages.p.is_empty() {
                return Err(("duplicates.run_pages".into(), "empty, but the dedup rate is above 0".into()));
            }
        }
        for (k, v) in shares {
            if !(0.0..=1.0).contains(&v) {
                return Err((k.into(), format!("{v} is not a share between 0 and 1")));
            }
        }
        for (k, q) in [
            ("shape.read_pages", &s.read_pages),
            ("shape.write_pages", &s.write_pages),
            ("shape.interarrival_ns", &s.interarrival_ns),
            ("shape.read_after_write_requests", &s.read_after_write_requests),
        ] {
            q.check(k)?;
        }
        for (k, q, share) in [
            ("shape.read_pages", &s.read_pages, s.read_share),
            ("shape.write_pages", &s.write_pages, 1.0 - s.read_share),
        ] {
            if share > 0.0 && (q.p.is_empty() || q.p[0] == 0) {
                return Err((k.into(), "requests need at least 1 page".into()));
            }
        }
        if s.read_share < 1.0 && s.written_distinct_pages == 0 {
            return Err(("shape.written_distinct_pages".into(), "0, but the profile writes".into()));
        }
        Ok(())
    }
}

/// `KEY=VALUE` on a number of the document (module doc).
fn apply_override(doc: &mut toml::Value, o: &str) -> Result<(), ProfileError> {
    let bad = |why: &str| ProfileError::Override(o.to_string(), why.to_string());
    let (key, value) = o.split_once('=').ok_or_else(|| bad("expected KEY=VALUE"))?;
    let mut slot = &mut *doc;
    for part in key.trim().split('.') {
        slot = slot.get_mut(part).ok_or_else(|| bad("no such key in the profile (docs/profiles.md lists them)"))?;
    }
    let value = value.trim();
    *slot = match slot {
        toml::Value::Float(_) => {
            toml::Value::Float(value.parse().map_err(|_| bad(&format!("`{value}` is not a number")))?)
        }
        toml::Value::Integer(_) => {
            toml::Value::Integer(value.parse().map_err(|_| bad(&format!("`{value}` is not a whole number")))?)
        }
        _ => return Err(bad("only numbers (shares, counts) can be set; a distribution cannot")),
    };
    Ok(())
}

/// The generator's knobs: probabilities of the model's choices, started
/// at the profile's shares and fitted (module doc).
#[derive(Clone, Copy, Debug)]
struct Knobs {
    /// A write continues the previous write's address.
    sequential: f64,
    /// A write that does not continue goes to an earlier write's address.
    overwrite: f64,
    /// A read reads never-written (preconditioned) data.
    cold: f64,
    /// A read of written data reads an earlier write's exact extent.
    whole: f64,
    /// A unique page starts a duplicate run.
    run_start: f64,
    /// A run's next page copies the content after the previous source.
    continue_source: f64,
    /// A run's page copies an earlier page of the same request.
    within: f64,
    /// Multiplies drawn run lengths (runs that a non-continuing write
    /// cuts, or that join across a continuing one, move the mean).
    run_scale: f64,
    /// Multiplies drawn reuse distances.
    reuse_scale: f64,
}

/// Statistics the knobs are fitted to.
const FITTED: usize = 9;

/// What the fitting compares: measured against target, per knob.
fn measured(l: &Locality) -> [f64; FITTED] {
    let s = &l.shape;
    let d = l.duplicates.clone().unwrap_or_default();
    [
        s.sequential_write_share,
        s.overwritten_page_share,
        l.unwritten_read_page_share(),
        s.whole_file_reread_share,
        l.dup_page_share(),
        d.sequential_share,
        d.within_request_share,
        d.run_pages.mean,
        d.reuse_distance_pages.mean,
    ]
}

fn targets(p: &Profile) -> [f64; FITTED] {
    let s = &p.shape;
    let d = p.duplicates.clone().unwrap_or_default();
    [
        s.sequential_write_share,
        s.overwritten_page_share,
        s.unwritten_read_page_share,
        s.whole_file_reread_share,
        d.dedup_rate,
        d.sequential_share,
        d.within_request_share,
        d.run_pages.mean,
        d.reuse_distance_pages.mean,
    ]
}

impl Knobs {
    fn start(p: &Profile) -> Knobs {
        let t = targets(p);
        let mean_run = t[7].max(1.0);
        let r = t[4];
        // Unique gaps of mean m (1 - r) / r between runs of mean m.
        let run_start = if r >= 1.0 { 1.0 } else { (r / (mean_run * (1.0 - r))).min(1.0) };
        Knobs {
            sequential: t[0],
            overwrite: t[1],
            cold: t[2],
            whole: t[3],
            run_start,
            continue_source: t[5],
            within: t[6],
            run_scale: 1.0,
            reuse_scale: 1.0,
        }
    }

    fn get_mut(&mut self, i: usize) -> &mut f64 {
        match i {
            0 => &mut self.sequential,
            1 => &mut self.overwrite,
            2 => &mut self.cold,
            3 => &mut self.whole,
            4 => &mut self.run_start,
            5 => &mut self.continue_source,
            6 => &mut self.within,
            7 => &mut self.run_scale,
            _ => &mut self.reuse_scale,
        }
    }

    /// One fitting step: each knob moves by the ratio target / measured
    /// (a knob whose statistic is 0 where the target is not starts from a
    /// small probability).
    fn correct(&mut self, target: &[f64; FITTED], got: &[f64; FITTED]) {
        for i in 0..FITTED {
            // Probabilities stay in [0, 1]; the run-length scale in [1/8, 8].
            let (lo, hi) = if i >= 7 { (0.125, 8.0) } else { (0.0, 1.0) };
            let k = self.get_mut(i);
            *k = if target[i] <= 0.0 {
                0.0
            } else if got[i] <= 0.0 {
                (*k * 2.0).max(0.01)
            } else {
                // Damped: a pilot is noisy (heavy-tailed runs).
                *k * (target[i] / got[i]).sqrt()
            }
            .clamp(lo, hi);
        }
    }
}

/// The generated workload's size: `requests` read and write requests, and
/// address ranges scaled with it.
struct Size {
    requests: u64,
    written: u64,
    cold: u64,
}

impl Size {
    fn of(p: &Profile, requests: u64) -> Size {
        let f = requests as f64 / p.source.requests.max(1) as f64;
        let scale = |n: u64| (n as f64 * f).ceil() as u64;
        let s = &p.shape;
        let gaps = ((1.0 - s.read_share) * (1.0 - s.sequential_write_share) * requests as f64).ceil() as u64;
        let max_write = s.write_pages.p.last().copied().unwrap_or(1);
        let max_read = s.read_pages.p.last().copied().unwrap_or(1);
        Size {
            requests,
            // 2% headroom: drawn sizes fluctuate, and a range too small
            // would wrap into overwrites the profile does not have.
            // And a page between fresh writes that would otherwise
            // continue each other ([`model`]).
            written: (scale(s.written_distinct_pages) + scale(s.written_distinct_pages) / 50 + gaps)
                .max(2 * max_write)
                .max(1),
            cold: if s.unwritten_read_page_share > 0.0 {
                scale(s.unwritten_read_distinct_pages).max(max_read)
            } else {
                0
            },
        }
    }
}

/// A workload of `requests` read and write requests with the statistics of
/// `p`, fitted first (module doc); deterministic in `seed`.
pub fn generate(p: &Profile, requests: u64, seed: u64) -> Result<Workload, ProfileError> {
    let knobs = fit(p, requests, seed)?.0;
    let mut w = model(p, &Size::of(p, requests), knobs, seed)?;
    w.provenance = Provenance {
        name: format!("profile:{}", p.source.name),
        source: format!("fitted to the profile of {} (seed {seed})", p.source.name),
    };
    Ok(w)
}

/// One statistic of a generated workload against its profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitRow {
    pub statistic: &'static str,
    pub target: f64,
    pub got: f64,
    /// Allowed difference: absolute for shares, relative for means.
    pub tolerance: f64,
    pub relative: bool,
}

impl FitRow {
    pub fn ok(&self) -> bool {
        let diff = (self.got - self.target).abs();
        if self.relative {
            diff <= self.tolerance * self.target.abs()
        } else {
            diff <= self.tolerance
        }
    }
}

/// How close a generated workload's statistics `l` are to the profile's,
/// with the tolerances docs/profiles.md states (what the tests check on
/// every committed profile, at 20,000 requests or more).
pub fn fit_report(p: &Profile, l: &Locality) -> Vec<FitRow> {
    let s = &l.shape;
    let t = &p.shape;
    let row = |statistic, target, got, tolerance, relative| FitRow { statistic, target, got, tolerance, relative };
    let mut rows = vec![
        row("read share", t.read_share, s.read_share, 0.03, false),
        row("sequential write share", t.sequential_write_share, s.sequential_write_share, 0.05, false),
        row("overwritten page share", t.overwritten_page_share, s.overwritten_page_share, 0.05, false),
        row("write size mean (pages)", t.write_pages.mean, s.write_pages.mean, 0.10, true),
        row("inter-arrival mean (ns)", t.interarrival_ns.mean, s.interarrival_ns.mean, 0.10, true),
    ];
    if t.read_share > 0.0 {
        rows.extend([
            row("read size mean (pages)", t.read_pages.mean, s.read_pages.mean, 0.10, true),
            row("unwritten read share", t.unwritten_read_page_share, l.unwritten_read_page_share(), 0.05, false),
            row("whole-file re-read share", t.whole_file_reread_share, s.whole_file_reread_share, 0.05, false),
        ]);
    }
    if let (Some(d), Some(g)) = (&p.duplicates, &l.duplicates) {
        rows.extend([
            row("dedup rate", d.dedup_rate, l.dup_page_share(), 0.03, false),
            row("dups sequential to the last", d.sequential_share, g.sequential_share, 0.10, false),
            row("dups within a request", d.within_request_share, g.within_request_share, 0.10, false),
            row("dup run length mean (pages)", d.run_pages.mean, g.run_pages.mean, 0.30, true),
            row(
                "dup reuse distance mean (pages)",
                d.reuse_distance_pages.mean,
                g.reuse_distance_pages.mean,
                0.30,
                true,
            ),
        ]);
    }
    rows
}

/// [`fit_report`] as a table.
pub fn fit_table(rows: &[FitRow]) -> String {
    let mut out = format!("{:<34} {:>14} {:>14} {:>10}\n", "statistic", "profile", "generated", "within");
    for r in rows {
        let tol = if r.relative { format!("±{:.0}%", r.tolerance * 100.0) } else { format!("±{}", r.tolerance) };
        let mark = if r.ok() { "" } else { " (outside)" };
        out.push_str(&format!("{:<34} {:>14.4} {:>14.4} {:>10}{mark}\n", r.statistic, r.target, r.got, tol));
    }
    out
}

/// The fitted knobs, and the pilot's measured statistics of each round.
fn fit(p: &Profile, requests: u64, seed: u64) -> Result<(Knobs, Vec<[f64; FITTED]>), ProfileError> {
    let target = targets(p);
    let mut knobs = Knobs::start(p);
    let pilot = Size::of(p, requests.min(PILOT_REQUESTS));
    let mut rounds = Vec::new();
    for _ in 0..FIT_ROUNDS {
        let got = measured(&locality(&model(p, &pilot, knobs, seed)?));
        knobs.correct(&target, &got);
        rounds.push(got);
    }
    Ok((knobs, rounds))
}

/// One address written in a write request (for reads to find).
#[derive(Clone, Copy)]
struct Extent {
    request: u64,
    lpn: u32,
    pages: u32,
}

const NONE: u32 = u32::MAX;

/// The generator proper (module doc): one pass with fixed knobs.
fn model(p: &Profile, size: &Size, k: Knobs, seed: u64) -> Result<Workload, ProfileError> {
    let s = &p.shape;
    let too_big = || ProfileError::Generate(format!("{} requests give more than 2^32 pages", size.requests));
    let span = size.written.checked_add(size.cold).filter(|&n| n < u64::from(u32::MAX)).ok_or_else(too_big)?;
    let written_range = size.written as u32;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT);
    let dup = p.duplicates.as_ref();
    let mut requests = Vec::with_capacity(size.requests as usize);
    let mut contents: Vec<ContentId> = Vec::new();
    // Address -> content written there last; write order -> (content, address).
    let mut at: Vec<u32> = vec![NONE; written_range as usize];
    let mut history: Vec<(u32, u32)> = Vec::new();
    // Content -> its last write's index in `history`.
    let mut last_at: Vec<u32> = Vec::new();
    let mut extents: Vec<Extent> = Vec::new();
    let (mut next_content, mut now, mut fresh, mut prev_end) = (0u32, 0u64, 0u32, None::<u32>);
    // The run's last source: its address and its page in `history`.
    let (mut run_left, mut prev_src, mut prev_idx, mut after_run) = (0u64, NONE, 0usize, false);
    for i in 0..size.requests {
        if i > 0 {
            now = now.saturating_add(s.interarrival_ns.sample(&mut rng, 0));
        }
        let read = rng.gen::<f64>() < s.read_share;
        if read {
            let mut pages = s.read_pages.sample(&mut rng, 1).max(1).min(span) as u32;
            let lpn = if size.cold > 0 && (extents.is_empty() || rng.gen::<f64>() < k.cold) {
                // Never-written (preconditioned) data, above the written range.
                pages = pages.min(size.cold as u32);
                written_range + rng.gen_range(0..=(size.cold - u64::from(pages))) as u32
            } else if extents.is_empty() {
                // Nothing written yet and no cold range: the range's start.
                pages = pages.min(written_range);
                0
            } else {
                // The write `d` requests back (the latest at or before it).
                let d = s.read_after_write_requests.sample(&mut rng, 1);
                let at_or_before = i.saturating_sub(d);
                let e = extents[extents.partition_point(|e| e.request <= at_or_before).max(1) - 1];
                // A whole-file re-read: a write of the drawn size near
                // there (so that re-reads keep the read sizes).
                let n = extents.partition_point(|x| x.request <= at_or_before).max(1);
                let same = extents[n.saturating_sub(64)..n].iter().rev().find(|x| x.pages == pages);
                if let Some(x) = same.filter(|_| rng.gen::<f64>() < k.whole) {
                    x.lpn
                } else {
                    let start = e.lpn + rng.gen_range(0..e.pages);
                    pages = pages.min(written_range - start);
                    start
                }
            };
            requests.push(Request {
                arrival: Nanos(now),
                op: Op::Read,
                lpn,
                pages,
                content: crate::workload::NO_CONTENT,
                stream: 0,
            });
            continue;
        }
        let pages = s.write_pages.sample(&mut rng, 1).clamp(1, u64::from(written_range)) as u32;
        let fits = |l: u32| u64::from(l) + u64::from(pages) <= u64::from(written_range);
        let continues = matches!(prev_end, Some(e) if fits(e)) && rng.gen::<f64>() < k.sequential;
        if !continues {
            // The address breaks any run: the next may start at once.
            after_run = false;
        }
        let lpn = match prev_end {
            Some(e) if continues => e,
            _ if !extents.is_empty() && rng.gen::<f64>() < k.overwrite => {
                let e = extents[rng.gen_range(0..extents.len())];
                e.lpn.min(written_range - pages)
            }
            _ => {
                // Fresh space, a page apart from the last write when it
                // would continue it (this write does not); wrapping around
                // overwrites.
                if prev_end == Some(fresh) {
                    fresh += 1;
                }
                if !fits(fresh) {
                    fresh = 0;
                }
                fresh
            }
        };
        prev_end = Some(lpn + pages);
        fresh = fresh.max(lpn + pages);
        let first = contents.len();
        let content_index = u32::try_from(first).map_err(|_| too_big())?;
        if let Some(d) = dup {
            for j in 0..pages {
                let lpn_j = lpn + j;
                // A run ends on a unique page: two runs side by side would
                // be measured as one.
                if run_left == 0 && !after_run && rng.gen::<f64>() < k.run_start {
                    run_left = ((d.run_pages.sample(&mut rng, 1) as f64 * k.run_scale).round() as u64).max(1);
                    prev_src = NONE;
                }
                after_run = false;
                let mut c = NONE;
                if run_left > 0 {
                    let next = prev_src.wrapping_add(1);
                    // (Not into this request's own pages: that would be a
                    // within-request copy, the next branch's choice.)
                    let own = (lpn..lpn_j).contains(&next);
                    // And only to content written together with the
                    // previous source (a file's next page), not to whatever
                    // an unrelated write left at the next address.
                    let together = |n: u32| {
                        let c = at[n as usize];
                        c != NONE && (last_at[c as usize] as usize).abs_diff(prev_idx) <= TOGETHER_PAGES
                    };
                    if prev_src != NONE
                        && next < written_range
                        && !own
                        && together(next)
                        && rng.gen::<f64>() < k.continue_source
                    {
                        c = at[next as usize];
                        prev_src = next;
                        prev_idx = last_at[c as usize] as usize;
                    } else if j > 0 && rng.gen::<f64>() < k.within {
                        let src = lpn + rng.gen_range(0..j);
                        c = at[src as usize];
                        prev_src = src;
                        prev_idx = history.len() - (lpn_j - src) as usize;
                    } else {
                        // A copy from an earlier request: at least `j`
                        // pages back; a distance beyond the history falls
                        // on a uniform earlier page.
                        let before = history.len() - j as usize;
                        // A drawn page whose content was written again
                        // later, or already by this request, would be
                        // measured at another distance (or as within the
                        // request): draw again, a few times.
                        for _ in 0..REDRAWS {
                            if before == 0 {
                                break;
                            }
                            let drawn =
                                (d.reuse_distance_pages.sample(&mut rng, 0) as f64 * k.reuse_scale).round() as usize;
                            // (A distance shorter than the request so far
                            // counts from the request's start instead.)
                            let back = drawn.checked_sub(j as usize).unwrap_or(drawn);
                            let idx = if back < before { before - 1 - back } else { rng.gen_range(0..before) };
                            let (hc, hl) = history[idx];
                            c = hc;
                            prev_src = hl;
                            prev_idx = idx;
                            if last_at[hc as usize] as usize == idx {
                                break;
                            }
                        }
                    }
                    run_left = if c == NONE { 0 } else { run_left - 1 };
                    after_run = run_left == 0;
                }
                if c == NONE {
                    c = next_content;
                    next_content = next_content.checked_add(1).ok_or_else(too_big)?;
                }
                contents.push(ContentId(c));
                if c as usize == last_at.len() {
                    last_at.push(0);
                }
                last_at[c as usize] = history.len() as u32;
                history.push((c, lpn_j));
                at[lpn_j as usize] = c;
            }
        }
        extents.push(Extent { request: i, lpn, pages });
        let content = if dup.is_some() { content_index } else { crate::workload::NO_CONTENT };
        requests.push(Request { arrival: Nanos(now), op: Op::Write, lpn, pages, content, stream: 0 });
    }
    // The drawn gaps' mean follows the percentiles, whose top percent a
    // heavy tail decides: scale the arrivals to the profile's mean.
    let last = requests.last().map_or(0, |r: &Request| r.arrival.0);
    if requests.len() > 1 && last > 0 && s.interarrival_ns.mean > 0.0 {
        let f = s.interarrival_ns.mean * (requests.len() - 1) as f64 / last as f64;
        for r in &mut requests {
            r.arrival = Nanos((r.arrival.0 as f64 * f).round() as u64);
        }
    }
    let mut w = Workload::from_requests(Provenance::default(), requests);
    w.contents = contents;
    w.content_space = next_content;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_sample_a_point_mass_exactly() {
        let q = Percentiles { mean: 8.0, p: vec![8; 101] };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        assert!((0..1000).all(|_| q.sample(&mut rng, 0) == 8));
        assert_eq!(Percentiles::default().sample(&mut rng, 3), 3);
        let q = Percentiles { mean: 50.0, p: (0..=100).collect() };
        let m: f64 = (0..20000).map(|_| q.sample(&mut rng, 0) as f64).sum::<f64>() / 20000.0;
        assert!((m - 50.0).abs() < 1.0, "mean {m}");
        assert!((q.drawn_mean() - 50.0).abs() < 1e-9);
    }

    /// Prints the fitting rounds of a profile file: `PROFILE=... cargo test
    /// --release --lib profile::tests::fit_rounds -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn fit_rounds() {
        let path = std::env::var("PROFILE").expect("PROFILE=file");
        let p = Profile::load(Path::new(&path), &[]).unwrap();
        let n = std::env::var("REQUESTS").map_or(p.source.requests, |n| n.parse().unwrap());
        let (k, rounds) = fit(&p, n, 1).unwrap();
        eprintln!("target {:?}", targets(&p));
        for r in rounds {
            eprintln!("got    {r:?}");
        }
        eprintln!("{k:?}");
    }

    #[test]
    fn overrides_set_numbers_and_refuse_the_rest() {
        let p = Profile {
            version: VERSION,
            source: Source { name: "t".into(), requests: 10, page_size: 4096 },
            shape: ShapeProfile {
                write_pages: Percentiles { mean: 1.0, p: vec![1; 101] },
                read_pages: Percentiles { mean: 2.0, p: vec![2; 101] },
                written_distinct_pages: 10,
                ..Default::default()
            },
            duplicates: None,
        };
        let text = p.to_toml();
        let path = Path::new("p.toml");
        let q = Profile::parse(&text, path, &["shape.read_share=0.25".into()]).unwrap();
        assert_eq!(q.shape.read_share, 0.25);
        let err = |o: &str| Profile::parse(&text, path, &[o.into()]).unwrap_err().to_string();
        assert!(err("shape.nope=1").contains("no such key"));
        assert!(err("shape.read_share=x").contains("not a number"));
        assert!(err("shape.write_pages=3").contains("distribution cannot"));
        assert!(err("shape.read_share=2").contains("`shape.read_share`: 2 is not a share"));
        assert!(err("shape.read_pages.mean=-1").contains("shape.read_pages.mean"));
        assert!(Profile::parse("version = 2", path, &[]).unwrap_err().to_string().contains("p.toml"));
    }
}
