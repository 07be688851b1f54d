//! Running policies on a workload: the glue between workloads, the
//! simulator and reports, used by the CLI and the experiment runner.
//!
//! ```text
//! Workload --prepare()--> Prepared (preconditioning + content) --run_one(policy)--> RunReport
//! ```
//!
//! A [`Prepared`] workload is immutable and shared by every policy's run,
//! so all policies replay identical requests with identical page contents.

use crate::config::{Config, PreconditionConfig, PreconditionOrder, PreconditionPlacement};
use crate::content::{try_assign_content, ContentError, ContentModel};
use crate::policy::{self, PolicyError};
use crate::report::{RunMeta, RunReport};
use crate::series::TimeSeries;
use crate::sim::{RequestSink, RunOptions, SimError, Simulation};
use crate::trace::spool::{BatchReader, BatchWriter};
use crate::trace::stream::{Ahead, Carry, StreamEnd};
use crate::trace::{LoadOptions, TraceError, TraceInput};
use crate::units::{ContentId, Nanos, Op};
use crate::workload::{PreconditionRule, Preconditioner, Provenance, Workload, NO_CONTENT};
use std::path::Path;
use thiserror::Error;

/// Errors of a run.
#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("content model: {0}")]
    Content(#[from] ContentError),
    /// A trace read as it is replayed ([`run_streamed`]).
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A deduplicating policy on a workload prepared without contents
    /// ([`prepare_for`] with `need_content = false`).
    #[error("policy {0} deduplicates, but the workload was prepared without page contents")]
    NoContents(String),
    /// The caller's check of what the first pass of a streamed run
    /// learned refused the run ([`run_streamed_drawing`]'s `scanned`):
    /// its message, whole.
    #[error("{0}")]
    Refused(String),
    /// The run's simulated clock reached its end (2^63 ns and beyond):
    /// times, rates and latencies would be clamped, not measured.
    #[error(
        "policy {policy}: the simulated clock saturated (the run reached {span_s:.0} s, the limit of 64-bit \
         nanoseconds), so its times and latencies would be meaningless; {culprits}"
    )]
    ClockSaturated { policy: String, span_s: f64, culprits: String },
}

/// Simulated spans from this one on count as a saturated clock.
const SATURATED_SPAN_S: f64 = (1u64 << 63) as f64 / 1e9;

/// The time-like settings a saturated run changed, for its error message.
fn time_culprits(cfg: &Config) -> String {
    let time_like = |k: &str| {
        k.starts_with("timing.")
            || k.starts_with("replay.")
            || k == "dedup.fingerprint"
            || ["_us", "_ms", "_s", "_ns", ".hash", ".idle", ".period"].iter().any(|u| k.ends_with(u))
    };
    let changed: Vec<String> = cfg
        .changes()
        .into_iter()
        .filter(|(k, _)| time_like(k))
        .map(|(k, v)| match v.parse::<f64>() {
            Ok(x) => format!("{k} = {}", crate::units::short_f64(x)),
            Err(_) => format!("{k} = {v}"),
        })
        .collect();
    if changed.is_empty() {
        "check the workload's arrival times (the trace's time unit, a synthetic spec's iat=)".to_string()
    } else {
        format!("the time-like settings changed from {}: {}; lower them", cfg.reference_preset(), changed.join(", "))
    }
}

/// A workload ready to replay: preconditioning added, every write has content.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub workload: Workload,
    /// "trace" when the trace carried content, else the model's string form
    /// (the model also fills preconditioning pages of content traces).
    pub content_model: String,
    /// Realized dedup rate of every written page's content, preconditioning
    /// included (what a calibrated content model targets): 1 - distinct/pages.
    pub content_dedup_rate: f64,
    /// Whether writes carry drawn (or the trace's) contents; `false` when
    /// [`prepare_for`] skipped them because no policy of the run reads them.
    pub contents_drawn: bool,
    /// The preconditioning used ([`precondition_of`]), for the report.
    pub precondition: String,
}

/// The content model string of a workload prepared without contents.
pub const CONTENTS_NOT_DRAWN: &str = "none (not drawn: no policy of this run deduplicates)";

/// Whether any of `policies` reads page contents (deduplicates). Only
/// `native` does not; unknown names are an error.
pub fn need_content(cfg: &Config, policies: &[String]) -> Result<bool, RunError> {
    for p in policies {
        if policy::build(p, cfg)?.capabilities().deduplicates {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Adds preconditioning by `pre.rule` (in `pre.order`) and assigns content
/// to every write that has none, with `model` and `seed` (deterministic).
pub fn prepare(w: Workload, model: &ContentModel, seed: u64, pre: &PreconditionConfig) -> Result<Prepared, RunError> {
    prepare_for(w, model, seed, pre, true)
}

/// [`prepare`], skipping the content model when `need_content` is false
/// (see [`need_content`]) and the workload carries no content of its own.
///
/// Drawing Zipf content ids for every written page (and counting the
/// realized rate) costs about as much as parsing a text trace, and a policy
/// that does not deduplicate never looks at them: every write then points
/// at one shared run of placeholder ids (`ContentId(0)`), the report says
/// [`CONTENTS_NOT_DRAWN`] with a 0% rate, and [`run_one`] refuses a
/// deduplicating policy on such a workload. Every simulated result of a
/// non-deduplicating policy is the same either way.
///
/// Unless `pre.placement` is round-robin, preconditioned pages whose
/// content the trace shows (a read's hash of a page not yet written) get
/// that content ([`Workload::apply_past_contents`]); with `auto` that
/// makes the run place them through the policy (docs/preconditioning.md).
pub fn prepare_for(
    mut w: Workload,
    model: &ContentModel,
    seed: u64,
    pre: &PreconditionConfig,
    need_content: bool,
) -> Result<Prepared, RunError> {
    let rule = pre.rule;
    let any_content = w.requests.iter().any(|r| r.op == Op::Write && r.content != NO_CONTENT);
    let past = !w.past_contents.is_empty() && pre.placement != PreconditionPlacement::RoundRobin;
    if !need_content && !any_content && !past {
        w.add_precondition_in(rule, pre.order);
        w.interleave_writers();
        let longest = w.requests.iter().filter(|r| r.op == Op::Write).map(|r| r.pages).max().unwrap_or(0);
        w.contents = vec![ContentId(0); longest as usize];
        w.content_space = u32::from(longest > 0);
        for r in w.requests.iter_mut().filter(|r| r.op == Op::Write) {
            r.content = 0;
        }
        let precondition = precondition_of(pre, &w);
        return Ok(Prepared {
            workload: w,
            content_model: CONTENTS_NOT_DRAWN.to_string(),
            content_dedup_rate: 0.0,
            contents_drawn: false,
            precondition,
        });
    }
    let had_content = w.requests.iter().any(|r| r.op == Op::Write) && w.has_content();
    w.add_precondition_in(rule, pre.order);
    let drawn_from = w.content_space;
    try_assign_content(&mut w, model, seed)?;
    if past {
        w.apply_past_contents(drawn_from);
    }
    w.interleave_writers();
    let content_model =
        if had_content { format!("from the workload (preconditioning: {model})") } else { model.to_string() };
    // The replayed writes' own rate (a trace's rate, not mixed with the
    // preconditioning content); all writes when nothing is replayed.
    let timed_writes = w.timed().iter().any(|r| r.op == Op::Write);
    let content_dedup_rate = if timed_writes {
        crate::content::realized_dedup_rate_of(&w, w.timed())
    } else {
        crate::content::realized_dedup_rate(&w)
    };
    let precondition = precondition_of(pre, &w);
    Ok(Prepared { workload: w, content_model, content_dedup_rate, contents_drawn: true, precondition })
}

/// Which preconditioning a run of `w` (prepared) uses under `pre`, for its
/// report: the rule, the placement (`auto` resolved, and why), the order
/// and how many preconditioned pages carry the trace's own contents.
pub fn precondition_of(pre: &PreconditionConfig, w: &Workload) -> String {
    let pages: u64 = w.requests[..w.precondition as usize].iter().map(|r| u64::from(r.pages)).sum();
    precondition_description(pre, pages, w.precondition_past_pages)
}

/// [`precondition_of`] from the preconditioned pages and those of them
/// carrying the trace's own contents.
pub fn precondition_description(pre: &PreconditionConfig, pages: u64, past: u64) -> String {
    if pre.rule == PreconditionRule::None {
        return "none".to_string();
    }
    let placement = pre.placement.resolve(past);
    let why = match pre.placement {
        PreconditionPlacement::Auto if past > 0 => {
            " (auto: the trace shows the content of pages it reads before writing them)"
        }
        PreconditionPlacement::Auto => " (auto: the trace shows no content for pages it reads before writing them)",
        _ => "",
    };
    let order = if placement == PreconditionPlacement::Policy || pre.order != PreconditionOrder::FirstRead {
        format!(", {} order", pre.order.name())
    } else {
        String::new()
    };
    let contents = if past > 0 { format!(", {past} with the trace's content") } else { String::new() };
    format!("{} {}{why}{order}: {pages} pages{contents}", pre.rule.name(), placement.name())
}

/// Replays `prepared` through policy `policy` and builds its report.
pub fn run_one(
    cfg: &Config,
    prepared: &Prepared,
    policy: &str,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RunReport, RunError> {
    run_observed(cfg, prepared, policy, opts, Observe::default(), progress).map(|(r, _)| r)
}

/// What a run observes besides its report (issue 29): every request as it
/// completes, and a time series.
#[derive(Default)]
pub struct Observe<'a> {
    /// `run --request-log`: receives each replayed request's record.
    pub requests: Option<&'a mut dyn RequestSink>,
    /// `run --timeseries`: the interval of simulated time.
    pub series: Option<Nanos>,
}

/// [`run_one`] with observers: also returns the time series if `observe`
/// asked for one. The report is the same as [`run_one`]'s.
pub fn run_observed(
    cfg: &Config,
    prepared: &Prepared,
    policy: &str,
    opts: &RunOptions,
    observe: Observe,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(RunReport, Option<TimeSeries>), RunError> {
    let p = policy::build(policy, cfg)?;
    if p.capabilities().deduplicates && !prepared.contents_drawn {
        return Err(RunError::NoContents(policy.to_string()));
    }
    let mut sim = Simulation::new(cfg, &prepared.workload, p, opts.clone())?;
    if let Some(sink) = observe.requests {
        sim.observe_requests(sink);
    }
    if let Some(interval) = observe.series {
        sim.record_series(interval);
    }
    let mut out = sim.run(progress)?;
    let series = out.series.take();
    let mut meta = run_meta(
        cfg,
        prepared.workload.provenance.clone(),
        prepared.content_model.clone(),
        prepared.content_dedup_rate,
    );
    meta.precondition = prepared.precondition.clone();
    Ok((report_of(cfg, policy, meta, out)?, series))
}

/// A run's report, refused when its clock saturated.
fn report_of(cfg: &Config, policy: &str, meta: RunMeta, out: crate::sim::RunOutput) -> Result<RunReport, RunError> {
    let report = RunReport::new(meta, out);
    if report.summary.duration_s >= SATURATED_SPAN_S {
        return Err(RunError::ClockSaturated {
            policy: policy.to_string(),
            span_s: report.summary.duration_s,
            culprits: time_culprits(cfg),
        });
    }
    Ok(report)
}

/// What a report says of a run's configuration and workload besides what
/// the simulation measured.
pub fn run_meta(cfg: &Config, workload: Provenance, content_model: String, content_dedup_rate: f64) -> RunMeta {
    let changes = cfg.changes();
    RunMeta {
        config_name: cfg.name.clone(),
        config_hash: cfg.config_hash_hex(),
        config_changes: changes.clone(),
        config_reference: if changes.is_empty() { String::new() } else { cfg.reference_preset().to_string() },
        seed: cfg.seed,
        device_model: cfg.experiment_label().map(str::to_string),
        workload,
        content_model,
        content_dedup_rate,
        page_size: cfg.geometry.page_size,
        precondition: String::new(),
    }
}

/// What the first pass of [`run_streamed`] learned of a trace.
#[derive(Debug)]
pub struct Scanned<'a> {
    /// The pass's account: warnings, bad lines, volumes, provenance.
    pub end: &'a StreamEnd,
    /// Requests to replay, and preconditioning writes.
    pub requests: u64,
    pub precondition: u64,
    /// The first and the last request's arrival (`None`: no request), as
    /// the held workload's first and last timed request have them.
    pub arrivals: Option<(Nanos, Nanos)>,
}

/// The first pass's counts (docs/streaming.md).
struct Scan {
    pre: Preconditioner,
    timed: u64,
    first: Option<Nanos>,
    last: Nanos,
    read_pages: u64,
    hinted: bool,
    writes: u64,
    /// Writes carrying the trace's contents, and the pages of the others.
    writes_with: u64,
    pages_without: u64,
    longest_write: u32,
}

impl Scan {
    fn visit(&mut self, batch: &Workload) {
        self.hinted |= !batch.hints.is_empty();
        self.pre.visit_all(&batch.requests);
        for r in &batch.requests {
            self.timed += 1;
            self.first.get_or_insert(r.arrival);
            self.last = r.arrival;
            match r.op {
                Op::Read => self.read_pages += u64::from(r.pages),
                Op::Write => {
                    self.writes += 1;
                    self.longest_write = self.longest_write.max(r.pages);
                    if r.content == NO_CONTENT {
                        self.pages_without += u64::from(r.pages);
                    } else {
                        self.writes_with += 1;
                    }
                }
                Op::Trim => {}
            }
        }
    }
}

/// Distinct content ids among pages counted (a growable bitmap).
#[derive(Default)]
struct Distinct {
    bits: Vec<u64>,
    pages: u64,
    distinct: u64,
}

impl Distinct {
    fn add(&mut self, ids: &[ContentId]) {
        for c in ids {
            let (w, b) = (c.0 as usize / 64, 1u64 << (c.0 % 64));
            if self.bits.len() <= w {
                self.bits.resize((w + 1).max(self.bits.len() * 2), 0);
            }
            if self.bits[w] & b == 0 {
                self.bits[w] |= b;
                self.distinct += 1;
            }
        }
        self.pages += ids.len() as u64;
    }

    fn rate(&self) -> f64 {
        if self.pages == 0 {
            0.0
        } else {
            1.0 - self.distinct as f64 / self.pages as f64
        }
    }
}

/// Gives the writes of a streamed batch their contents, as [`prepare_for`]
/// does on the held workload, and counts the realized dedup rate of the
/// timed writes: on the thread that parses the second pass
/// ([`run_streamed_drawing`]).
struct Filler {
    /// Contents are drawn (else every write gets `zeros`).
    drawn: bool,
    zeros: Vec<ContentId>,
    drawer: Option<crate::content::ContentDrawer>,
    /// The timed writes' contents.
    rate: Distinct,
}

impl Filler {
    /// Gives every write of `b` its contents.
    fn fill(&mut self, b: &mut Workload) {
        if !self.drawn {
            b.contents.clear();
            b.contents.extend_from_slice(&self.zeros);
            for r in b.requests.iter_mut().filter(|r| r.op == Op::Write) {
                r.content = 0;
            }
        } else if let Some(d) = self.drawer.as_mut() {
            for r in b.requests.iter_mut().filter(|r| r.op == Op::Write && r.content == NO_CONTENT) {
                r.content = b.contents.len() as u32;
                d.draw(r.pages, &mut b.contents);
            }
        }
    }

    /// [`Filler::fill`] on a batch of timed requests, counting their
    /// contents.
    fn timed(&mut self, b: &mut Workload) {
        self.fill(b);
        if self.drawn {
            for r in b.requests.iter().filter(|r| r.op == Op::Write) {
                self.rate.add(b.content_of(r));
            }
        }
    }
}

/// A streamed run's second pass: the first pass's batches read back, or
/// the trace parsed again.
enum Second {
    ReadBack(Ahead<Filler, u64>),
    Parsed(Ahead<Filler>),
}

impl Second {
    fn next_batch(&mut self) -> Option<Workload> {
        match self {
            Second::ReadBack(a) => a.next_batch(),
            Second::Parsed(a) => a.next_batch(),
        }
    }

    fn recycle(&mut self, b: Workload) {
        match self {
            Second::ReadBack(a) => a.recycle(b),
            Second::Parsed(a) => a.recycle(b),
        }
    }

    /// The requests the pass made, and the filler back.
    fn finish(self) -> Result<(u64, Filler), crate::trace::TraceError> {
        match self {
            Second::ReadBack(a) => a.finish(),
            Second::Parsed(a) => a.finish().map(|(end, f)| (end.requests, f)),
        }
    }
}

/// `run --trace FILE -p POLICY` without holding the trace (a run of several
/// policies calls [`run_streamed_drawing`] once per policy): the file is
/// read twice, in batches ([`crate::trace::stream`]). The first pass
/// gathers what the replay must know before its first request (the
/// preconditioning writes by `rule`: a bitmap of pages seen and the writes
/// chosen; the counts and spans of [`crate::sim::ReplayPlan`]; the content
/// hashes of a trace that carries them); the second replays each batch as
/// it is read ([`Simulation::replaying`]), drawing contents with `model`
/// write by write. The report is the one [`prepare_for`] and [`run_one`]
/// give on the loaded trace, byte for byte. `scanned` sees the first
/// pass's account (warnings) before the replay starts.
///
/// A trace whose writes carry contents only in part streams too: the
/// others get contents drawn write by write, after the trace's own ids,
/// in the order [`prepare_for`] draws them.
///
/// `Ok(None)`: this trace or model needs the held path (a content model
/// that copies earlier writes, a trace whose reads show contents under a
/// placement that is not round-robin); nothing was run. docs/streaming.md
/// lists what streams.
#[allow(clippy::too_many_arguments)]
pub fn run_streamed(
    cfg: &Config,
    path: &Path,
    load: &LoadOptions,
    model: &ContentModel,
    policy: &str,
    opts: &RunOptions,
    scanned: &mut dyn FnMut(&Scanned<'_>),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<RunReport>, RunError> {
    let need = policy::build(policy, cfg)?.capabilities().deduplicates;
    let mut scanned = |s: &Scanned<'_>| {
        scanned(s);
        Ok(())
    };
    let input = TraceInput::file(path);
    let run =
        run_streamed_drawing(cfg, &input, load, model, policy, need, opts, Observe::default(), &mut scanned, progress);
    run.map(|done| done.map(|(report, _)| report))
}

/// [`run_streamed`] drawing contents when `need_content` (whether any
/// policy of the run deduplicates, [`need_content`]: a run of several
/// policies draws them for every policy, as [`prepare_for`] does on the
/// workload they share), with observers ([`run_observed`]'s: the request
/// log and the time series are written as the replay goes, so they stream
/// too) and a `scanned` that may refuse the run once the first pass is
/// read (an `Err` stops it before the replay: a time series too long for
/// the trace's span, say). Returns the report and the time series.
#[allow(clippy::too_many_arguments)]
pub fn run_streamed_drawing(
    cfg: &Config,
    input: &TraceInput,
    load: &LoadOptions,
    model: &ContentModel,
    policy: &str,
    need_content: bool,
    opts: &RunOptions,
    observe: Observe<'_>,
    scanned: &mut dyn FnMut(&Scanned<'_>) -> Result<(), RunError>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<(RunReport, Option<TimeSeries>)>, RunError> {
    let seed = cfg.seed;
    let p = policy::build(policy, cfg)?;
    let need = need_content || p.capabilities().deduplicates;
    if crate::content::ContentDrawer::new(model, seed, 0, 0)?.is_none() {
        return Ok(None);
    }
    // Pass 1 (twice for a trace with several volumes on their own ranges).
    let new_scan = || Scan {
        pre: Preconditioner::new(cfg.precondition.rule, 0),
        timed: 0,
        first: None,
        last: Nanos::ZERO,
        read_pages: 0,
        hinted: false,
        writes: 0,
        writes_with: 0,
        pages_without: 0,
        longest_write: 0,
    };
    // What the trace's reads show of pages not yet written is kept (a page
    // bitmap and an entry per page first read with its content: bounded by
    // the device) when preconditioning may write it ([`prepare_for`]).
    let track_past = cfg.precondition.placement != PreconditionPlacement::RoundRobin;
    // Parsed on another thread ([`Ahead`]), which also keeps the batches
    // for the second pass ([`crate::trace::spool`]: the text is parsed
    // once), scanned on this one.
    let first_pass = |carry: Option<Carry>| -> Result<(Scan, StreamEnd, Option<BatchReader>), RunError> {
        let mut scan = new_scan();
        let mut ahead = Ahead::start(input, load, carry, track_past, BatchWriter::create(), BatchWriter::keep)?;
        while let Some(b) = ahead.next_batch() {
            scan.visit(&b);
            ahead.recycle(b);
        }
        let (end, kept) = ahead.finish()?;
        // A pass that could not place every volume made no batches to keep.
        let kept = if end.rescan.is_some() { None } else { kept.finish(input.path()) };
        Ok((scan, end, kept))
    };
    let (mut scan, mut end, mut kept) = first_pass(None)?;
    if let Some(carry) = end.rescan.take() {
        (scan, end, kept) = first_pass(Some(carry))?;
    }
    let Scan { pre, timed, first, last, read_pages, hinted, writes, writes_with, pages_without, longest_write } = scan;
    // Reads that show what their pages held: the preconditioning writes
    // take those contents ([`prepare_for`]).
    let past = track_past && !end.past_contents.is_empty();
    let mut pre = Workload { requests: pre.finish_in(cfg.precondition.order), ..Workload::default() };

    // What prepare_for decides on the whole workload; its error is
    // reported after the first pass's account, as the held path reports
    // the loader's warnings before preparing.
    let drawn = need || writes_with > 0 || past;
    let pre_pages: u64 = pre.requests.iter().map(|r| u64::from(r.pages)).sum();
    let decided = (|| -> Result<_, RunError> {
        if !drawn {
            let longest = pre.requests.iter().map(|r| r.pages).max().unwrap_or(0).max(longest_write);
            return Ok((u32::from(longest > 0), CONTENTS_NOT_DRAWN.to_string(), longest, None));
        }
        let had_content = writes > 0 && writes_with == writes;
        let total = pre_pages + pages_without;
        let d = crate::content::ContentDrawer::new(model, seed, end.content_space, total)?
            .expect("a model without copies draws write by write");
        let space = if total == 0 { end.content_space } else { d.space_bound() };
        let name =
            if had_content { format!("from the workload (preconditioning: {model})") } else { model.to_string() };
        Ok((space, name, 0, Some(d)))
    })();
    // The contents the trace's reads show get ids after the content space
    // the model's draws leave, which a sparse population knows only once
    // every page is drawn: before the replay only if the trace's writes
    // all carry their own (the held path otherwise).
    if past && pages_without > 0 && matches!(&decided, Ok((.., Some(d))) if d.sparse()) {
        return Ok(None);
    }
    let arrivals = first.map(|f| (f, last));
    scanned(&Scanned { end: &end, requests: timed, precondition: pre.requests.len() as u64, arrivals })?;
    let (content_space, content_model, longest, drawer) = decided?;
    let mut filler = Filler { drawn, zeros: vec![ContentId(0); longest as usize], drawer, rate: Distinct::default() };

    if need && !drawn {
        return Err(RunError::NoContents(policy.to_string()));
    }
    filler.fill(&mut pre);
    // The preconditioning writes' pages whose content the trace showed
    // take it ([`Workload::apply_past_contents`], as on the held
    // workload), after the content space the draws leave.
    let (mut content_space, mut past_pages) = (content_space, 0);
    if past {
        let Some(d) = filler.drawer.as_ref() else { unreachable!("contents are drawn when the past is kept") };
        pre.precondition = pre.requests.len() as u32;
        pre.content_space = d.space_drawn();
        pre.past_contents = std::mem::take(&mut end.past_contents);
        pre.past_only = end.past_only;
        past_pages = pre.apply_past_contents(end.content_space);
        if past_pages > 0 {
            content_space = pre.content_space;
        }
        pre.precondition = 0;
        pre.past_contents = Vec::new();
    }
    let plan = crate::sim::ReplayPlan {
        timed,
        first_arrival: first.unwrap_or(Nanos::ZERO),
        last_arrival: last,
        lpn_span: end.lpn_span,
        content_space,
        read_pages,
        hinted,
        precondition_past_pages: past_pages,
    };
    // Pass 2 begins: read back from what the first pass kept (or, if it
    // could keep nothing, parsed again), and given its contents, on another
    // thread ([`Ahead`]: the same batches in the same order), which reads
    // its first batches while the device is built and preconditioned.
    let mut ahead = match kept {
        Some(kept) => Second::ReadBack(Ahead::read_back(kept, filler, Filler::timed)?),
        None => {
            let carry = std::mem::take(&mut end.carry);
            Second::Parsed(Ahead::start(input, load, Some(carry), false, filler, Filler::timed)?)
        }
    };
    let mut sim = Simulation::replaying(
        cfg,
        &plan,
        p,
        crate::engine::build(&cfg.dedup.engine, &cfg.engine_context()).map_err(SimError::from)?,
        opts.clone(),
    )?;
    if let Some(sink) = observe.requests {
        sim.observe_requests(sink);
    }
    if let Some(interval) = observe.series {
        sim.record_series(interval);
    }
    let mut pre_rate = Distinct::default();
    if drawn {
        for r in &pre.requests {
            pre_rate.add(pre.content_of(r));
        }
    }
    sim.replay_precondition(&pre)?;
    drop(pre);
    // The replay.
    while let Some(b) = ahead.next_batch() {
        sim.replay_batch(&b, progress)?;
        ahead.recycle(b);
    }
    let (requests, Filler { rate: timed_rate, .. }) = ahead.finish()?;
    if requests != timed {
        return Err(SimError::Order("the trace changed between its two passes").into());
    }
    let mut out = sim.replay_end(progress)?;
    let series = out.series.take();
    let rate = if !drawn {
        0.0
    } else if timed_rate.pages > 0 {
        timed_rate.rate()
    } else {
        pre_rate.rate()
    };
    let mut meta = run_meta(cfg, end.provenance.clone(), content_model, rate);
    meta.precondition = precondition_description(&cfg.precondition, pre_pages, past_pages);
    Ok(Some((report_of(cfg, policy, meta, out)?, series)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{ContentId, Nanos};
    use crate::workload::{Provenance, Request, NO_CONTENT};

    /// A saturated clock's error names the time-like settings the run
    /// changed (issue 30).
    #[test]
    fn a_saturated_clock_names_the_changed_time_settings() {
        let cfg = Config::load(Some("tiny"), &["engine.smartdedup.idle_ms=5e5".into(), "timing.read=\"1ms\"".into()])
            .unwrap();
        let c = time_culprits(&cfg);
        assert!(c.contains("engine.smartdedup.idle_ms = 500000") && c.contains("timing.read"), "{c}");
        assert!(time_culprits(&Config::fad_table1()).contains("arrival times"));
    }

    /// The realized rate a run reports is the replayed writes' own (issue 12
    /// item 6), not mixed with the preconditioning content: here the trace
    /// writes 4 distinct pages (0%), its 200 preconditioned pages repeat.
    #[test]
    fn the_reported_dedup_rate_is_the_traces_own() {
        let read = Request { arrival: Nanos(0), op: Op::Read, lpn: 100, pages: 200, content: NO_CONTENT, stream: 0 };
        let write = Request { arrival: Nanos(1000), op: Op::Write, lpn: 0, pages: 4, content: 0, stream: 0 };
        let mut w = Workload::from_requests(Provenance::default(), vec![read, write]);
        w.contents = (0..4).map(ContentId).collect();
        w.content_space = 4;
        let model: ContentModel = "zipf:a=0.2,dedup=0.5".parse().unwrap();
        let p = prepare(w, &model, 42, &PreconditionConfig::with_rule(PreconditionRule::AllReads)).unwrap();
        assert_eq!(p.content_dedup_rate, 0.0);
        assert!(crate::content::realized_dedup_rate(&p.workload) > 0.2, "the mixed rate would not be 0");
    }

    /// Without contents Native simulates exactly the same (only the
    /// workload's content description differs), and a deduplicating policy
    /// refuses such a workload.
    #[test]
    fn native_runs_the_same_without_contents() {
        let cfg = Config::preset("fad-table1").unwrap();
        let mut spec = crate::synth::SynthSpec::default_small();
        spec.requests = 3000;
        let w = crate::synth::generate(&spec, 7).unwrap();
        let model = ContentModel::default();
        let rule = PreconditionConfig::with_rule(PreconditionRule::AllReads);
        let with = prepare_for(w.clone(), &model, 7, &rule, true).unwrap();
        let without = prepare_for(w, &model, 7, &rule, false).unwrap();
        assert!(!without.contents_drawn && without.workload.contents.len() <= 16);
        let opts = RunOptions::default();
        let a = run_one(&cfg, &with, "native", &opts, &mut |_, _| {}).unwrap();
        let mut b = run_one(&cfg, &without, "native", &opts, &mut |_, _| {}).unwrap();
        assert_eq!((b.content_model.as_str(), b.content_dedup_rate), (CONTENTS_NOT_DRAWN, 0.0));
        (b.content_model, b.content_dedup_rate) = (a.content_model.clone(), a.content_dedup_rate);
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
        assert!(matches!(run_one(&cfg, &without, "dedup", &opts, &mut |_, _| {}), Err(RunError::NoContents(_))));
        assert!(need_content(&cfg, &["native".into(), "fad".into()]).unwrap());
        assert!(!need_content(&cfg, &["native".into()]).unwrap());
    }
}

#[cfg(test)]
mod streams_tests {
    use crate::synth::{generate, SynthSpec};

    /// `streams=N` parses, prints back, and the prepared workload (contents
    /// drawn, then interleaved) has N writers taking turns; 0 is refused.
    #[test]
    fn streams_make_interleaved_writers() {
        let spec: SynthSpec = "requests=1000,read=0,streams=4".parse().unwrap();
        assert_eq!(spec.streams, 4);
        assert!(spec.to_string().ends_with(",streams=4"), "{spec}");
        assert_eq!(spec.to_string().parse::<SynthSpec>().unwrap(), spec);
        let w = generate(&spec, 1).unwrap();
        let cfg = crate::config::Config::fad_table1();
        let p = crate::runner::prepare(w, &"zipf:dedup=0.4".parse().unwrap(), 1, &cfg.precondition).unwrap();
        let timed = &p.workload.requests[p.workload.precondition as usize..];
        let streams: Vec<u16> = timed.iter().take(8).map(|r| r.stream).collect();
        assert_eq!(streams, vec![0, 1, 2, 3, 0, 1, 2, 3]);
        assert!("requests=10,streams=0".parse::<SynthSpec>().is_err());
        let one: SynthSpec = "requests=10".parse().unwrap();
        assert!(!one.to_string().contains("streams"));
    }
}
