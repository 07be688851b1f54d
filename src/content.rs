//! Seeded content models: which [`ContentId`] each written page carries.
//!
//! Traces without data (most MSR/FIU traces, all synthetic workloads) get
//! their page contents from a [`ContentModel`] via [`assign_content`]:
//!
//! * [`ContentModel::Unique`]: every page is distinct (no duplicates at all).
//! * [`ContentModel::Zipf`]: page contents are i.i.d. draws from the Zipf
//!   popularity distribution of FAD §IV-A, `P(t_i) = C / t_i^a` with
//!   `C = 1 / Σ_{i=1..N} t_i^{-a}`, over `N` unique contents, optionally mixed
//!   with whole-extent copies (`copy`).
//!
//! # Choosing N
//!
//! FAD §IV-A sets `a = 0.2` and "N is 50% of the total logical pages", which
//! it equates with a 50% deduplication rate. The two are not the same: with
//! `M` i.i.d. draws the expected number of distinct contents is
//! `Σ_i 1 - (1 - p_i)^M`, which for `M = 10^6`, `N = 5·10^5`, `a = 0.2` is
//! about 426,400, a realized dedup rate of about 57.4%, not 50%.
//! [`ZipfN::Fraction`] reproduces the paper's literal setting;
//! [`ZipfN::TargetDedup`] instead solves for the `N` whose *expected*
//! realized dedup rate equals the target (see [`solve_zipf_n`]).
//!
//! Not every target is reachable. More contents mean fewer repeats, but
//! the expected rate with the whole 32-bit id space as `N` is a floor
//! that grows with the exponent and the page count: a skewed law repeats
//! its most popular contents however many there are (on 2,000 pages
//! `a = 2` realizes at least ~96%, `a = 5` ~99.7%, while `a = 0.2` reaches
//! any rate). A target more than [`DEDUP_TOLERANCE`] (0.1 percentage
//! point, and more than one page) below that floor is an error,
//! [`ContentError::Unreachable`], giving the reachable range and the
//! largest exponent that does reach the target (or, when copies alone
//! repeat more pages than the target allows, saying to lower `copy`),
//! instead of a workload with a silently different rate. The other end,
//! `N = 1` (every page the same content, rate `1 - 1/pages`), is always
//! within one page of a target, so it is never an error.
//!
//! Ranks are drawn in O(1) by rejection-inversion ([`ZipfSampler`]) and
//! become dense ids (`rank - 1`, offset past existing ids). A population
//! larger than the pages drawn is renumbered densely in order of first
//! appearance, so the id space never outgrows the written pages.
//!
//! # Copies
//!
//! With `copy = c > 0`, each write request that needs content (except the
//! first) copies, with probability `c`, the contents of an earlier request
//! `S` chosen uniformly among the write requests assigned *by the same
//! [`assign_content`] call* (pre-existing trace contents are never copied).
//! If the request has `L` pages, its first `min(L, len(S))` pages take the
//! first contents of `S` in order; any remaining pages (when `L > len(S)`)
//! are drawn i.i.d. like an uncopied request. Copied pages are always
//! duplicates, so copies add run-length (extent-level) duplication on top of
//! the i.i.d. page-level duplication. In `TargetDedup` mode the calibration
//! accounts for them: the copy structure is decided first, then `N` is solved
//! for the remaining i.i.d. draws so that the *overall* expected dedup rate
//! hits the target (a target below the copies' own rate is unreachable, an
//! error as above). In `Fraction` mode,
//! `N = fraction × (all pages assigned, copies included)`.
//!
//! # Determinism
//!
//! Everything is driven by the seed: the copy structure and the content ids
//! use two non-overlapping `Xoshiro256PlusPlus` streams (the second is the
//! first after a `jump()`), seeded from the seed xor a module salt, so the
//! same workload, model and seed always give identical contents.

use crate::units::{ContentId, Op};
use crate::workload::{Workload, NO_CONTENT};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Salt mixed into the seed so the content model never shares a random
/// stream with the workload generator ("CONTENTS" in ASCII).
const SEED_SALT: u64 = 0x434f_4e54_454e_5453;

/// Zipf exponent used by FAD §IV-A.
pub const FAD_ZIPF_A: f64 = 0.2;

/// Errors from parsing a content model or assigning contents.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ContentError {
    /// A content model string could not be parsed.
    #[error("cannot parse content model `{input}`: {reason}")]
    Parse { input: String, reason: String },
    /// A model parameter is out of range; `key` names it.
    #[error("invalid content model: `{key}` {reason}")]
    Invalid { key: String, reason: String },
    /// The workload has more pages or ids than 32-bit indices can address.
    #[error("content assignment overflow: {0}")]
    Overflow(String),
    /// A `dedup` target the model cannot realize on this workload.
    #[error("{0}")]
    Unreachable(Box<UnreachableDedup>),
}

/// A [`ZipfN::TargetDedup`] rate below every rate the Zipf exponent
/// realizes on the pages drawn, even with the whole id space as `N` (see
/// "Choosing N" in the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct UnreachableDedup {
    /// The model, in its string form.
    pub model: String,
    pub a: f64,
    /// The target rate.
    pub target: f64,
    /// Pages drawn (copies included).
    pub pages: u64,
    /// The largest `N`: the id space left.
    pub max_n: u64,
    /// Expected rate with `N = max_n`: the lowest reachable, the closest
    /// to the target.
    pub lowest: f64,
    /// Expected rate with `N = 1`: the highest reachable (`1 - 1/pages`).
    pub highest: f64,
    /// Share of the pages that copies make duplicates (`copy`).
    pub copied: f64,
    /// The largest exponent whose lowest rate reaches the target, if any.
    pub max_a: Option<f64>,
}

impl fmt::Display for UnreachableDedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: f64| format!("{:.2}%", x * 100.0);
        write!(
            f,
            "{} cannot realize a {} dedup rate on these {} written pages: with a={} the expected rate is {} even over \
             N = {} contents (the whole id space), so the reachable rates are {} to {} (N = 1); ",
            self.model,
            pct(self.target),
            self.pages,
            self.a,
            pct(self.lowest),
            self.max_n,
            pct(self.lowest),
            pct(self.highest),
        )?;
        match self.max_a {
            // Rounded down: an exponent that does reach the target.
            Some(m) => write!(
                f,
                "a smaller exponent reaches {} (a <= {}; FAD's is a={FAD_ZIPF_A}), or ask for a rate in that range",
                pct(self.target),
                (m * 100.0).floor() / 100.0
            ),
            None if self.copied > 0.0 => write!(
                f,
                "copies alone make {} of the pages duplicates: lower `copy`, or ask for a rate in that range",
                pct(self.copied)
            ),
            None => {
                f.write_str("no exponent reaches it (even a=0 repeats pages at random): `unique` writes no duplicates")
            }
        }
    }
}

/// How the number of unique contents `N` of a Zipf model is chosen.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ZipfN {
    /// FAD's literal setting: `N = ceil(fraction × pages to assign)`.
    Fraction(f64),
    /// Calibrated: `N` such that the expected realized dedup rate
    /// `1 - distinct/pages` equals this target.
    TargetDedup(f64),
}

/// A content model. Parse with [`FromStr`] (`unique`, `zipf:a=0.2,n=0.5`,
/// `zipf:a=0.2,dedup=0.5`, optionally `,copy=0.1`); `Display` prints the
/// same grammar and round-trips. Serde (de)serializes it as that string.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ContentModel {
    /// Every written page gets a fresh id.
    Unique,
    /// FAD §IV-A Zipf popularity with exponent `a` over `N` contents.
    Zipf {
        /// Popularity skew (`a >= 0`; 0 is uniform).
        a: f64,
        n: ZipfN,
        /// Probability that a write request copies an earlier extent.
        copy: f64,
    },
}

impl ContentModel {
    /// FAD §IV-A's setting for traces without data: `a = 0.2`, `N` = 50% of
    /// the written pages, no copies.
    pub fn fad() -> ContentModel {
        ContentModel::Zipf { a: FAD_ZIPF_A, n: ZipfN::Fraction(0.5), copy: 0.0 }
    }

    /// FAD's Zipf (`a = 0.2`) calibrated to Table II's 50% dedup rate,
    /// `zipf:a=0.2,dedup=0.5`: the default of runs and experiments.
    pub fn fad_calibrated() -> ContentModel {
        ContentModel::Zipf { a: FAD_ZIPF_A, n: ZipfN::TargetDedup(0.5), copy: 0.0 }
    }

    /// Checks the parameters; errors name the offending key.
    pub fn validate(&self) -> Result<(), ContentError> {
        let bad = |key: &str, reason: String| ContentError::Invalid { key: key.into(), reason };
        if let ContentModel::Zipf { a, n, copy } = *self {
            if !(a.is_finite() && a >= 0.0) {
                return Err(bad("a", format!("must be a finite number >= 0, got {a}")));
            }
            match n {
                ZipfN::Fraction(f) if !(f.is_finite() && f > 0.0) => {
                    return Err(bad("n", format!("must be a finite fraction > 0, got {f}")))
                }
                ZipfN::TargetDedup(t) if !(t.is_finite() && (0.0..1.0).contains(&t)) => {
                    return Err(bad("dedup", format!("must be in [0, 1), got {t}")))
                }
                _ => {}
            }
            if !(copy.is_finite() && (0.0..=1.0).contains(&copy)) {
                return Err(bad("copy", format!("must be a probability in [0, 1], got {copy}")));
            }
        }
        Ok(())
    }
}

impl Default for ContentModel {
    /// [`ContentModel::fad`].
    fn default() -> Self {
        ContentModel::fad()
    }
}

impl fmt::Display for ContentModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContentModel::Unique => f.write_str("unique"),
            ContentModel::Zipf { a, n, copy } => {
                write!(f, "zipf:a={a}")?;
                match n {
                    ZipfN::Fraction(x) => write!(f, ",n={x}")?,
                    ZipfN::TargetDedup(x) => write!(f, ",dedup={x}")?,
                }
                if *copy != 0.0 {
                    write!(f, ",copy={copy}")?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for ContentModel {
    type Err = ContentError;

    /// Grammar (case-sensitive keys, any order):
    ///
    /// ```text
    /// unique
    /// zipf                      FAD §IV-A: a=0.2, n=0.5
    /// zipf:KEY=VAL(,KEY=VAL)*   a=F (default 0.2), one of n=F (default 0.5)
    ///                           or dedup=F, and copy=F (default 0)
    /// ```
    fn from_str(s: &str) -> Result<ContentModel, ContentError> {
        let input = s.trim();
        let perr = |reason: String| ContentError::Parse { input: input.to_string(), reason };
        let (kind, rest) = match input.split_once(':') {
            Some((k, r)) => (k.trim(), Some(r)),
            None => (input, None),
        };
        let model = match kind {
            "unique" => {
                if rest.is_some() {
                    return Err(perr("`unique` takes no parameters (copies need a zipf model)".into()));
                }
                ContentModel::Unique
            }
            "zipf" => {
                let mut a = None;
                let mut n = None;
                let mut copy = None;
                for item in rest.into_iter().flat_map(|r| r.split(',')) {
                    let item = item.trim();
                    let Some((k, v)) = item.split_once('=') else {
                        return Err(perr(format!("expected key=value, got `{item}` (keys: a, n, dedup, copy)")));
                    };
                    let (k, v) = (k.trim(), v.trim());
                    let x: f64 = v.parse().map_err(|_| perr(format!("`{k}`: `{v}` is not a number")))?;
                    let slot = match k {
                        "a" => &mut a,
                        "copy" => &mut copy,
                        "n" | "dedup" => {
                            if n.is_some() {
                                return Err(perr("give at most one of `n` and `dedup`, once".into()));
                            }
                            n = Some(if k == "n" { ZipfN::Fraction(x) } else { ZipfN::TargetDedup(x) });
                            continue;
                        }
                        _ => return Err(perr(format!("unknown key `{k}` (keys: a, n, dedup, copy)"))),
                    };
                    if slot.is_some() {
                        return Err(perr(format!("key `{k}` given more than once")));
                    }
                    *slot = Some(x);
                }
                ContentModel::Zipf {
                    a: a.unwrap_or(FAD_ZIPF_A),
                    n: n.unwrap_or(ZipfN::Fraction(0.5)),
                    copy: copy.unwrap_or(0.0),
                }
            }
            _ => {
                return Err(perr(format!(
                    "unknown model `{kind}` (use unique, zipf:a=0.2,n=0.5 or zipf:a=0.2,dedup=0.5)"
                )))
            }
        };
        model.validate()?;
        Ok(model)
    }
}

impl Serialize for ContentModel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ContentModel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What [`assign_content`] did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContentSummary {
    /// Pages that received a content id in this call (copies included).
    pub pages_drawn: u64,
    /// Distinct ids among those pages.
    pub distinct: u64,
    /// `1 - distinct / pages_drawn` (0 when nothing was drawn).
    pub realized_dedup_rate: f64,
    /// Population size: `N` for Zipf, `pages_drawn` for unique.
    pub n_used: u64,
    /// How much `content_space` grew: new ids are `old content_space ..
    /// old content_space + ids_added`. Equals `n_used`, except for a Zipf
    /// population larger than the pages drawn, where only the `distinct`
    /// ranks actually drawn get (dense) ids.
    pub ids_added: u64,
    /// Pages copied from earlier extents (`copy`); included in `pages_drawn`.
    pub copied_pages: u64,
    /// Write requests that copy an earlier one (`copy`), and those of them
    /// copied whole (the source at least as long: no page drawn).
    #[serde(default)]
    pub copied_requests: u64,
    #[serde(default)]
    pub copied_whole: u64,
    /// The model, in its string form.
    pub model: String,
    /// Set when [`assign_content`] could not assign anything (invalid model,
    /// unreachable `dedup` target or 32-bit overflow); the workload is then
    /// left unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ContentSummary {
    /// The summary of a call that drew no page.
    fn nothing_drawn(model: &ContentModel) -> ContentSummary {
        ContentSummary {
            pages_drawn: 0,
            distinct: 0,
            realized_dedup_rate: 0.0,
            n_used: 0,
            ids_added: 0,
            copied_pages: 0,
            copied_requests: 0,
            copied_whole: 0,
            model: model.to_string(),
            error: None,
        }
    }
}

/// Assigns content ids to every write request without content, in request
/// order; see [`try_assign_content`], which this wraps.
///
/// This never panics: if the model is invalid (only possible for a model
/// built by hand; parsing validates), its `dedup` target is unreachable on
/// this workload, or the workload would overflow the 32-bit page or id
/// space, the workload is left unchanged and the returned summary has
/// `error` set and zero pages drawn.
pub fn assign_content(w: &mut Workload, model: &ContentModel, seed: u64) -> ContentSummary {
    match try_assign_content(w, model, seed) {
        Ok(s) => s,
        Err(e) => ContentSummary { error: Some(e.to_string()), ..ContentSummary::nothing_drawn(model) },
    }
}

/// Assigns content ids to every [`Op::Write`] request whose `content` is
/// [`NO_CONTENT`], in request order: the request's pages get consecutive
/// entries appended to `w.contents` and `r.content` is set to the first.
/// Requests that already carry content (real-trace data) are untouched; the
/// new ids start at the current `w.content_space`, so they never collide
/// with existing ids, and `w.content_space` grows by `ids_added`.
///
/// Ids are dense: Zipf rank `r` (1 = most popular) becomes
/// `ContentId(content_space + r - 1)`, and `content_space` grows by `N`.
/// When `N` exceeds the number of pages drawn (e.g. `n=100`, or a small
/// dedup target), most ranks are never drawn; the drawn ranks are then
/// renumbered densely in order of first appearance and `content_space`
/// grows only by their count, so the id space (which the simulator indexes
/// with flat vectors) never outgrows the pages written. Sampling is O(1) per page
/// (rejection-inversion, [`ZipfSampler`]); calibrating `N` costs a few
/// milliseconds regardless of the page count.
///
/// A [`ZipfN::TargetDedup`] target the model cannot realize on these
/// pages is an error, [`ContentError::Unreachable`] (module documentation,
/// "Choosing N"). On error the workload is unchanged.
pub fn try_assign_content(w: &mut Workload, model: &ContentModel, seed: u64) -> Result<ContentSummary, ContentError> {
    model.validate()?;
    let targets: Vec<usize> = w
        .requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.op == Op::Write && r.content == NO_CONTENT && r.pages > 0)
        .map(|(i, _)| i)
        .collect();
    let total: u64 = targets.iter().map(|&i| w.requests[i].pages as u64).sum();
    let base = w.content_space as u64;
    let id_room = u32::MAX as u64 - base;
    // Request::content indices must stay below NO_CONTENT (u32::MAX).
    if w.contents.len() as u64 + total > u32::MAX as u64 {
        return Err(ContentError::Overflow(format!(
            "{} existing + {} new content entries exceed the 32-bit index space",
            w.contents.len(),
            total
        )));
    }
    check_id_room(model, total, id_room)?;

    if total == 0 {
        // Nothing to draw: leave the id space alone.
        return Ok(ContentSummary::nothing_drawn(model));
    }

    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT);
    let mut id_rng = rng.clone();
    id_rng.jump();

    // 1. Copy structure: plan[k] = index (into targets) of the copied
    // request, or u32::MAX for an i.i.d. request.
    let copy = match model {
        ContentModel::Zipf { copy, .. } => *copy,
        ContentModel::Unique => 0.0,
    };
    let mut plan: Vec<u32> = Vec::new();
    let mut copied: u64 = 0;
    let (mut copied_requests, mut copied_whole) = (0u64, 0u64);
    if copy > 0.0 {
        plan.reserve_exact(targets.len());
        for k in 0..targets.len() {
            if k > 0 && rng.gen::<f64>() < copy {
                let src = rng.gen_range(0..k);
                let (len, src_len) = (w.requests[targets[k]].pages, w.requests[targets[src]].pages);
                let l = len.min(src_len);
                copied += l as u64;
                copied_requests += 1;
                copied_whole += u64::from(src_len >= len);
                plan.push(src as u32);
            } else {
                plan.push(u32::MAX);
            }
        }
    }

    // 2. Size of the id space.
    let n = population(model, total, copied, id_room)?;

    // 3. Draw.
    let zipf = match *model {
        ContentModel::Zipf { a, .. } => Some(ZipfSampler::new(n, a)),
        ContentModel::Unique => None,
    };
    w.contents
        .try_reserve_exact(total as usize)
        .map_err(|_| ContentError::Overflow(format!("cannot allocate {total} content ids")))?;
    // Dense: rank r is id base + r - 1. Sparse (N > pages): ids hold r - 1
    // until the renumbering below (N <= id_room keeps r - 1 within u32).
    let dense = n <= total;
    let offset = if dense { base } else { 0 };
    let mut next_unique = base;
    let mut draw = |rng: &mut Xoshiro256PlusPlus| -> ContentId {
        match &zipf {
            Some(z) => {
                let rank = z.sample(rng);
                ContentId((offset + rank - 1) as u32)
            }
            None => {
                let id = ContentId(next_unique as u32);
                next_unique += 1;
                id
            }
        }
    };
    for (k, &ri) in targets.iter().enumerate() {
        let start = w.contents.len();
        let len = w.requests[ri].pages as usize;
        let mut done = 0;
        if let Some(&src) = plan.get(k) {
            if src != u32::MAX {
                let s = &w.requests[targets[src as usize]];
                let (s_start, s_len) = (s.content as usize, s.pages as usize);
                done = len.min(s_len);
                w.contents.extend_from_within(s_start..s_start + done);
            }
        }
        for _ in done..len {
            let id = draw(&mut id_rng);
            w.contents.push(id);
        }
        w.requests[ri].content = start as u32;
    }
    let first_new = w.contents.len() - total as usize;
    let (distinct, ids_added) = if dense {
        let new = &w.contents[first_new..];
        (count_distinct(new.iter().map(|c| c.0 as u64 - base), n), n)
    } else {
        // Renumber the drawn ranks densely in order of first appearance.
        let mut map: HashMap<u32, u32> = HashMap::new();
        for c in &mut w.contents[first_new..] {
            let next = map.len() as u32;
            let id = *map.entry(c.0).or_insert(next);
            *c = ContentId(base as u32 + id);
        }
        (map.len() as u64, map.len() as u64)
    };
    w.content_space = (base + ids_added) as u32;

    Ok(ContentSummary {
        pages_drawn: total,
        distinct,
        realized_dedup_rate: dedup_rate(distinct, total),
        n_used: n,
        ids_added,
        copied_pages: copied,
        copied_requests,
        copied_whole,
        model: model.to_string(),
        error: None,
    })
}

/// The size `N` of the id space `model` draws `total` pages from, `copied`
/// of them copies, with `id_room` ids left ([`try_assign_content`]).
/// Whether `total` pages drawn with `model` fit the `id_room` content ids
/// left (a held workload and a streamed one check alike).
fn check_id_room(model: &ContentModel, total: u64, id_room: u64) -> Result<(), ContentError> {
    if matches!(model, ContentModel::Unique) && total > id_room {
        return Err(ContentError::Overflow(format!(
            "{total} unique pages do not fit the {id_room} remaining content ids"
        )));
    }
    if id_room == 0 && total > 0 {
        return Err(ContentError::Overflow("no content ids left".into()));
    }
    Ok(())
}

fn population(model: &ContentModel, total: u64, copied: u64, id_room: u64) -> Result<u64, ContentError> {
    let iid = total - copied;
    Ok(match *model {
        ContentModel::Unique => total,
        ContentModel::Zipf { n: ZipfN::Fraction(f), .. } => ((f * total as f64).ceil().max(1.0) as u64).min(id_room),
        ContentModel::Zipf { a, n: ZipfN::TargetDedup(t), .. } => {
            if iid == 0 {
                1
            } else {
                let target = (1.0 - t) * total as f64;
                let n = solve_zipf_n(iid, a, target, id_room);
                if n == id_room {
                    // Clamped at the top (or just solved there): is the
                    // target within reach at all?
                    check_reachable(model, iid, total, copied, target, id_room)?;
                }
                n
            }
        }
    })
}

/// [`try_assign_content`]'s draws one write at a time, for a model without
/// copies (`copy = 0`), so that a streamed replay draws each write's
/// contents as it replays it: the same ids, in the same order, as
/// [`try_assign_content`] gives the same pages held in one workload (a
/// test). Sparse populations (`N` above the pages drawn) are renumbered in
/// order of first appearance as they are drawn, which is the order
/// [`try_assign_content`] renumbers them in.
#[derive(Clone, Debug)]
pub struct ContentDrawer {
    zipf: Option<ZipfSampler>,
    rng: Xoshiro256PlusPlus,
    base: u64,
    /// Ids are `base + rank - 1` (`N` at most the pages drawn).
    dense: bool,
    next_unique: u64,
    /// Sparse: rank - 1 -> dense id - base.
    renumber: HashMap<u32, u32>,
    n: u64,
    total: u64,
}

impl ContentDrawer {
    /// For `total` pages drawn by `model` with `seed`, after the ids below
    /// `base`; `None` when the model copies (`copy > 0`: the copies need
    /// every earlier write's contents).
    pub fn new(model: &ContentModel, seed: u64, base: u32, total: u64) -> Result<Option<ContentDrawer>, ContentError> {
        model.validate()?;
        if matches!(model, ContentModel::Zipf { copy, .. } if *copy > 0.0) {
            return Ok(None);
        }
        let base = u64::from(base);
        let id_room = u32::MAX as u64 - base;
        check_id_room(model, total, id_room)?;
        let n = if total == 0 { 0 } else { population(model, total, 0, id_room)? };
        let zipf = match *model {
            ContentModel::Zipf { a, .. } if total > 0 => Some(ZipfSampler::new(n, a)),
            _ => None,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT);
        rng.jump();
        Ok(Some(ContentDrawer {
            zipf,
            rng,
            base,
            dense: n <= total,
            next_unique: base,
            renumber: HashMap::new(),
            n,
            total,
        }))
    }

    /// Appends the contents of a write of `pages` pages to `out`.
    pub fn draw(&mut self, pages: u32, out: &mut Vec<ContentId>) {
        for _ in 0..pages {
            let id = match &self.zipf {
                Some(z) => {
                    let r = z.sample(&mut self.rng) - 1;
                    if self.dense {
                        self.base + r
                    } else {
                        let next = self.renumber.len() as u32;
                        self.base + u64::from(*self.renumber.entry(r as u32).or_insert(next))
                    }
                }
                None => {
                    self.next_unique += 1;
                    self.next_unique - 1
                }
            };
            out.push(ContentId(id as u32));
        }
    }

    /// Content ids drawn are below this: `base + N`, or `base + pages` for
    /// a sparse population.
    pub fn space_bound(&self) -> u32 {
        (self.base + self.n.min(self.total)) as u32
    }

    /// The content id space after the draws so far, as
    /// [`try_assign_content`] leaves [`crate::workload::Workload::content_space`]
    /// once every page is drawn: `base + N` (known before the first
    /// draw), or, for a sparse population ([`ContentDrawer::sparse`]),
    /// `base` + the distinct contents drawn so far (final only once every
    /// page is drawn).
    pub fn space_drawn(&self) -> u32 {
        if self.total == 0 {
            self.base as u32
        } else if self.dense {
            (self.base + self.n) as u32
        } else {
            (self.base + self.renumber.len() as u64) as u32
        }
    }

    /// Whether the population is sparse (`N` above the pages drawn): ids
    /// are renumbered as they are drawn, so [`ContentDrawer::space_drawn`]
    /// grows until the last draw.
    pub fn sparse(&self) -> bool {
        !self.dense
    }
}

/// How far (in dedup rate) the expected rate with the whole id space may
/// fall short of a `dedup` target before [`try_assign_content`] calls the
/// target unreachable: 0.1 percentage point, the precision reports print.
/// A target within one page of the pages drawn is always accepted.
pub const DEDUP_TOLERANCE: f64 = 0.001;

/// Errors with [`ContentError::Unreachable`] when even `N = max_n`
/// contents give fewer than `target` expected distinct contents among the
/// `iid` draws (less the tolerance): the target rate is below every rate
/// the model's exponent realizes on these `total` pages. The other end
/// (`N = 1`, rate `1 - 1/total`) is always within one page of a target.
fn check_reachable(
    model: &ContentModel,
    iid: u64,
    total: u64,
    copied: u64,
    target: f64,
    max_n: u64,
) -> Result<(), ContentError> {
    let ContentModel::Zipf { a, n: ZipfN::TargetDedup(t), .. } = *model else { return Ok(()) };
    let slack = (DEDUP_TOLERANCE * total as f64).max(1.0);
    let reaches = |a: f64| expected_distinct(max_n, iid, a) >= target - slack;
    let most = expected_distinct(max_n, iid, a);
    if most >= target - slack {
        return Ok(());
    }
    // The expectation falls as the exponent grows: bisect for the largest
    // exponent that still reaches the target.
    let max_a = reaches(0.0).then(|| {
        let (mut lo, mut hi) = (0.0, a);
        for _ in 0..30 {
            let mid = (lo + hi) / 2.0;
            if reaches(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    });
    Err(ContentError::Unreachable(Box::new(UnreachableDedup {
        model: model.to_string(),
        a,
        target: t,
        pages: total,
        max_n,
        lowest: 1.0 - most / total as f64,
        highest: dedup_rate(1, total),
        copied: copied as f64 / total as f64,
        max_a,
    })))
}

fn dedup_rate(distinct: u64, pages: u64) -> f64 {
    if pages == 0 {
        0.0
    } else {
        1.0 - distinct as f64 / pages as f64
    }
}

/// Number of distinct values in `ids`, all below `bound`, with a bitmap.
fn count_distinct(ids: impl Iterator<Item = u64>, bound: u64) -> u64 {
    let mut bits = vec![0u64; bound.div_ceil(64) as usize];
    let mut distinct = 0;
    for id in ids {
        let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
        if bits[word] & bit == 0 {
            bits[word] |= bit;
            distinct += 1;
        }
    }
    distinct
}

/// Realized dedup rate of a workload's write stream: `1 - distinct/pages`
/// over every written page that carries content (0 for no such pages).
pub fn realized_dedup_rate(w: &Workload) -> f64 {
    realized_dedup_rate_of(w, &w.requests)
}

/// [`realized_dedup_rate`] over the writes among `requests` (requests of
/// `w`, e.g. [`Workload::timed`]: the trace's own rate, without its
/// preconditioning).
pub fn realized_dedup_rate_of(w: &Workload, requests: &[crate::workload::Request]) -> f64 {
    let writes = || requests.iter().filter(|r| r.op == Op::Write && r.content != NO_CONTENT);
    let mut pages = 0u64;
    let mut bound = w.content_space as u64;
    for r in writes() {
        for c in w.content_of(r) {
            pages += 1;
            bound = bound.max(c.0 as u64 + 1);
        }
    }
    let distinct = count_distinct(writes().flat_map(|r| w.content_of(r).iter().map(|c| c.0 as u64)), bound);
    dedup_rate(distinct, pages)
}

// ---------------------------------------------------------------------------
// Sampling
// ---------------------------------------------------------------------------

/// O(1) sampler of the FAD §IV-A Zipf distribution `P(k) ∝ k^{-a}`,
/// `k` in `1..=n`, by rejection-inversion (W. Hörmann and G. Derflinger,
/// "Rejection-inversion to generate variates from monotone discrete
/// distributions", ACM TOMACS 6(3), 1996; the formulation of Apache Commons
/// RNG's `RejectionInversionZipfSampler`).
///
/// Each attempt inverts the integral of the continuous hat `h(x) = x^{-a}`
/// and is accepted immediately for most ranks, so a sample costs about one
/// `ln_1p` and one `exp` (~3× cheaper than `rand_distr::Zipf`, which needs
/// three `powf` per attempt). Works for every `a >= 0` (including `a = 1`
/// and the uniform `a = 0`) and `n` up to 2^32.
#[derive(Copy, Clone, Debug)]
pub struct ZipfSampler {
    n: f64,
    a: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl ZipfSampler {
    /// Sampler over ranks `1..=n` (`n` is raised to 1) with exponent `a`
    /// (non-finite or negative `a` is treated as 0; [`ContentModel::validate`]
    /// rejects those before they get here).
    pub fn new(n: u64, a: f64) -> ZipfSampler {
        let a = if a.is_finite() && a > 0.0 { a } else { 0.0 };
        let mut z = ZipfSampler { n: n.max(1) as f64, a, h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in `1..=n` (1 is the most popular).
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        loop {
            let u = self.h_integral_n + rng.gen::<f64>() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// `H(x) = ((x^{1-a}) - 1) / (1 - a)`, or `ln x` for `a = 1`.
    #[inline]
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.a) * lx) * lx
    }

    /// The hat `h(x) = x^{-a}`.
    #[inline]
    fn h(&self, x: f64) -> f64 {
        (-self.a * x.ln()).exp()
    }

    /// Inverse of [`Self::h_integral`].
    #[inline]
    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.a)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// `ln(1 + x) / x`, continuous at 0.
#[inline]
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1) / x`, continuous at 0.
#[inline]
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

// ---------------------------------------------------------------------------
// Calibration
// ---------------------------------------------------------------------------

/// Terms summed exactly before switching to Euler–Maclaurin.
const EXACT_HEAD: u64 = 4096;
/// Simpson intervals (even) for the tail integral in log space.
const SIMPSON_STEPS: usize = 2048;

/// `Σ_{i=1..n} f(i)` for a smooth, slowly varying `f`: exact for the first
/// [`EXACT_HEAD`] terms, then the Euler–Maclaurin formula
/// `Σ_{i=K..n} f(i) ≈ ∫_K^n f + (f(K) + f(n))/2` with the integral computed
/// by Simpson's rule after substituting `x = e^t`. For the Zipf summands used
/// here `|f'(x)| <= a/x`, so the neglected terms are below 1e-5 in absolute
/// terms, and the Simpson error is ~1e-11 relative.
fn smooth_sum(n: u64, f: impl Fn(f64) -> f64) -> f64 {
    if n <= 2 * EXACT_HEAD {
        return (1..=n).map(|i| f(i as f64)).sum();
    }
    let head: f64 = (1..EXACT_HEAD).map(|i| f(i as f64)).sum();
    let (lo, hi) = ((EXACT_HEAD as f64).ln(), (n as f64).ln());
    let h = (hi - lo) / SIMPSON_STEPS as f64;
    let g = |t: f64| {
        let x = t.exp();
        f(x) * x
    };
    let mut acc = g(lo) + g(hi);
    for j in 1..SIMPSON_STEPS {
        let wj = if j % 2 == 1 { 4.0 } else { 2.0 };
        acc += wj * g(lo + j as f64 * h);
    }
    head + acc * h / 3.0 + 0.5 * (f(EXACT_HEAD as f64) + f(n as f64))
}

/// Expected number of distinct contents among `draws` i.i.d. draws from the
/// FAD §IV-A Zipf distribution with exponent `a` over `n` contents:
/// `Σ_{i=1..n} 1 - (1 - p_i)^draws`, `p_i = i^{-a} / Σ_j j^{-a}`.
/// Runs in O(1) for large `n` (an exact head plus an Euler–Maclaurin tail);
/// a few hundred microseconds.
pub fn expected_distinct(n: u64, draws: u64, a: f64) -> f64 {
    if n == 0 || draws == 0 {
        return 0.0;
    }
    let c = 1.0 / smooth_sum(n, |x| x.powf(-a));
    let m = draws as f64;
    smooth_sum(n, |x| {
        let p = c * x.powf(-a);
        // 1 - (1-p)^m, accurate for tiny p.
        -(m * (-p).ln_1p()).exp_m1()
    })
}

/// Expected realized dedup rate `1 - E[distinct]/draws` of `draws` i.i.d.
/// Zipf(`a`, `n`) draws (FAD §IV-A).
pub fn expected_dedup_rate(n: u64, draws: u64, a: f64) -> f64 {
    if draws == 0 {
        return 0.0;
    }
    1.0 - expected_distinct(n, draws, a) / draws as f64
}

/// The `N` in `1..=max_n` whose expected number of distinct contents among
/// `draws` i.i.d. Zipf(`a`, `N`) draws is closest to `target_distinct`.
///
/// The expectation grows monotonically with `N`, so this is a bisection on
/// integers (~32 evaluations of [`expected_distinct`]); targets beyond
/// reach clamp to `1` or `max_n` without a word: [`try_assign_content`]
/// checks a clamp at `max_n` and reports an unreachable target as
/// [`ContentError::Unreachable`].
pub fn solve_zipf_n(draws: u64, a: f64, target_distinct: f64, max_n: u64) -> u64 {
    let max_n = max_n.max(1);
    let e = |n: u64| expected_distinct(n, draws, a);
    if e(max_n) <= target_distinct {
        return max_n;
    }
    // Invariant: e(lo) < target <= e(hi).
    let (mut lo, mut hi) = (1u64, max_n);
    if e(lo) >= target_distinct {
        return 1;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if e(mid) >= target_distinct {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    if (e(hi) - target_distinct).abs() <= (target_distinct - e(lo)).abs() {
        hi
    } else {
        lo
    }
}

/// The `N` whose expected realized dedup rate over `draws` i.i.d. Zipf(`a`)
/// draws equals `target_dedup` (clamped to the 32-bit id space, silently:
/// see [`solve_zipf_n`]).
pub fn calibrate_zipf_n(draws: u64, a: f64, target_dedup: f64) -> u64 {
    solve_zipf_n(draws, a, (1.0 - target_dedup) * draws as f64, u32::MAX as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`ContentDrawer`] draws [`try_assign_content`]'s ids in its order,
    /// and once every page is drawn [`ContentDrawer::space_drawn`] is the
    /// content space it leaves (the base here: 7 ids the workload's own
    /// writes carry): dense, sparse and unique populations.
    #[test]
    fn the_drawer_draws_try_assign_contents_ids_and_space() {
        use crate::units::Nanos;
        use crate::workload::{Request, Workload};
        for (model, sparse) in [("zipf:a=0.2,dedup=0.5", false), ("zipf:a=0.2,dedup=0.02", true), ("unique", false)] {
            let model: ContentModel = model.parse().unwrap();
            let mut w = Workload { contents: (0..7).map(ContentId).collect(), content_space: 7, ..Workload::default() };
            let write =
                |lpn, pages, content| Request { arrival: Nanos::ZERO, op: Op::Write, lpn, pages, content, stream: 0 };
            w.requests.push(write(0, 7, 0));
            for i in 0..300u32 {
                w.requests.push(write(i * 8, 1 + i % 5, NO_CONTENT));
            }
            let total: u64 = w.requests[1..].iter().map(|r| u64::from(r.pages)).sum();
            try_assign_content(&mut w, &model, 5).unwrap();
            let mut d = ContentDrawer::new(&model, 5, 7, total).unwrap().expect("no copies");
            assert_eq!(d.sparse(), sparse, "{model}");
            let mut drawn = Vec::new();
            for r in &w.requests[1..] {
                d.draw(r.pages, &mut drawn);
            }
            assert_eq!(drawn, w.contents[7..], "{model}");
            assert_eq!(d.space_drawn(), w.content_space, "{model}");
            assert!(d.space_drawn() <= d.space_bound());
        }
    }

    fn exact_distinct(n: u64, draws: u64, a: f64) -> f64 {
        let h: f64 = (1..=n).map(|i| (i as f64).powf(-a)).sum();
        (1..=n)
            .map(|i| {
                let p = (i as f64).powf(-a) / h;
                -(draws as f64 * (-p).ln_1p()).exp_m1()
            })
            .sum()
    }

    #[test]
    fn smooth_sum_matches_exact() {
        for &(n, draws, a) in &[
            (20_000u64, 30_000u64, 0.2),
            (500_000, 1_000_000, 0.2),
            (300_000, 100_000, 0.9),
            (1_000_000, 10_000_000, 1.0),
            (100_000, 50_000, 0.0),
        ] {
            let exact = exact_distinct(n, draws, a);
            let approx = expected_distinct(n, draws, a);
            assert!(((approx - exact) / exact).abs() < 1e-8, "n={n} draws={draws} a={a}: {approx} vs {exact}");
        }
        // The FAD §IV-A observation: N = 50% of 1M pages gives ~57.4% dedup.
        let d = expected_dedup_rate(500_000, 1_000_000, 0.2);
        assert!((d - 0.57359).abs() < 1e-4, "{d}");
    }

    #[test]
    fn calibration_hits_target_in_expectation() {
        for &(m, t) in &[(1_000_000u64, 0.5), (10_000_000, 0.5), (1000, 0.2), (50_000, 0.9)] {
            let n = calibrate_zipf_n(m, 0.2, t);
            let d = expected_dedup_rate(n, m, 0.2);
            assert!((d - t).abs() < 1e-3, "m={m} t={t}: n={n} gives {d}");
        }
        // dedup 0 needs an unbounded N: clamps to the id space.
        assert_eq!(calibrate_zipf_n(1000, 0.2, 0.0), u32::MAX as u64);
    }

    #[test]
    fn zipf_sampler_follows_fad_distribution() {
        // Rejection-inversion against P(i) = C/i^a, chi-square style, for
        // exponents below, at and above 1 and the uniform case.
        for &(n, a) in &[(50u64, 0.8), (40, 0.0), (30, 1.0), (20, 2.5), (1000, 0.2)] {
            let z = ZipfSampler::new(n, a);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
            let draws = 400_000;
            let mut counts = vec![0u64; n as usize + 1];
            for _ in 0..draws {
                let k = z.sample(&mut rng);
                assert!((1..=n).contains(&k));
                counts[k as usize] += 1;
            }
            let h: f64 = (1..=n).map(|i| (i as f64).powf(-a)).sum();
            let mut chi2 = 0.0;
            for (i, &c) in counts.iter().enumerate().skip(1) {
                let e = draws as f64 * (i as f64).powf(-a) / h;
                chi2 += (c as f64 - e).powi(2) / e;
            }
            // dof = n - 1; mean n-1, sd sqrt(2(n-1)): allow 5 sd.
            let dof = (n - 1) as f64;
            assert!(chi2 < dof + 5.0 * (2.0 * dof).sqrt(), "n={n} a={a}: chi2 {chi2}");
        }
        // n = 1 always gives rank 1.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        assert!((0..100).all(|_| ZipfSampler::new(1, 0.2).sample(&mut rng) == 1));
    }

    #[test]
    fn parse_display_round_trip() {
        for s in
            ["unique", "zipf:a=0.2,n=0.5", "zipf:a=0.2,dedup=0.5", "zipf:a=1.1,dedup=0.25,copy=0.1", "zipf:a=0,n=2"]
        {
            let m: ContentModel = s.parse().unwrap();
            assert_eq!(m.to_string(), s);
        }
        assert_eq!("zipf".parse::<ContentModel>(), Ok(ContentModel::fad()));
        assert_eq!(
            " zipf:copy=0.3 ".parse::<ContentModel>().unwrap(),
            ContentModel::Zipf { a: 0.2, n: ZipfN::Fraction(0.5), copy: 0.3 }
        );
    }

    #[test]
    fn bad_models_are_rejected() {
        for (s, needle) in [
            ("zipf:a=-1,n=0.5", "`a`"),
            ("zipf:a=0.2,n=0", "`n`"),
            ("zipf:a=0.2,dedup=1", "`dedup`"),
            ("zipf:a=0.2,dedup=0.5,copy=2", "`copy`"),
            ("zipf:a=0.2,n=0.5,dedup=0.5", "at most one"),
            ("zipf:a=0.2,a=0.3", "more than once"),
            ("zipf:b=1", "unknown key `b`"),
            ("zipf:a=x", "not a number"),
            ("zipf:a", "key=value"),
            ("unique:copy=0.1", "no parameters"),
            ("poisson", "unknown model"),
            ("", "unknown model"),
            ("zipf:a=NaN", "`a`"),
            ("zipf:a=inf", "`a`"),
        ] {
            let e = s.parse::<ContentModel>().unwrap_err().to_string();
            assert!(e.contains(needle), "{s}: {e}");
        }
    }

    #[test]
    fn serde_as_string() {
        #[derive(Serialize, Deserialize)]
        struct T {
            m: ContentModel,
        }
        let t: T = toml::from_str("m = \"zipf:a=0.2,dedup=0.5\"").unwrap();
        assert_eq!(t.m.to_string(), "zipf:a=0.2,dedup=0.5");
        assert_eq!(toml::to_string(&t).unwrap().trim(), "m = \"zipf:a=0.2,dedup=0.5\"");
        assert!(toml::from_str::<T>("m = \"zipf:a=-3\"").is_err());
    }
}
