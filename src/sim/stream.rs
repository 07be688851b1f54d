//! The streaming interface: one request in, completions out.
//!
//! [`Simulation::run`] replays a whole workload it holds. A streaming
//! simulation ([`Simulation::streaming`]) holds none: the caller submits
//! requests one at a time ([`Simulation::submit`], each with its arrival
//! time and its page contents) and collects completions
//! ([`Simulation::next_completion`], the [`Until::Next`] form of
//! [`Simulation::collect`]; [`Until::Time`] for those due by a time) as
//! the simulation can vouch for them: the one interface of every driver
//! ([`super::submit`]), with the checks of a request from outside.
//! `dedupsim serve` drives the simulated device this way from real clients
//! over NBD; the same calls replay any request source without holding it in
//! memory.
//!
//! # Rules
//!
//! * The device starts empty: no preconditioning.
//! * Arrivals never go back in time: a request's arrival is the later of
//!   the time the caller gives and the *floor*, which is the previous
//!   arrival or the latest completion handed out, whichever is later (the
//!   simulation may have decided events up to that completion, and cannot
//!   take an arrival before them).
//! * A completion is handed out only when it is certain: when no operation
//!   still to simulate could end earlier, and no arrival can come before it
//!   (the floor rule). That is the closed-loop replay's rule
//!   (`replay.mode = "closed-loop"`), and driving a workload through this
//!   interface at queue depth N reproduces that replay exactly (a test).
//! * Idle time between two arrivals is offered to the engine's and the
//!   policy's background work from the previous arrival, whatever was
//!   handed out since ([`super::submit::IdleFrom::LastArrival`]; a replay
//!   opens it at the floor, so a closed-loop replay never has a gap
//!   between its arrivals).
//! * `allocation = "dynamic"`: SSDsim's pre-processing counts a program
//!   per page of every read in the trace, which a stream does not know
//!   ahead: its channel rotation starts at 0 unless the caller announces
//!   the read pages before the first request
//!   ([`Simulation::set_read_pages_ahead`]), and its chip tokens at 0 (no
//!   preconditioning). Waiting writes are placed as completions are
//!   collected ([`Simulation::collect`]).
//! * Fingerprints: a request may carry the fingerprint of each written
//!   page's real bytes ([`StreamRequest::fingerprints`]; `dedupsim serve`
//!   gives its `--hash` of the bytes). Then the engines index those, not
//!   the content ids, so a weak hash makes real collisions: a verifying
//!   engine (Light-Dedup) catches them with its verify read, and a trusting
//!   one (CAFTL, SmartDedup: a cryptographic hash, no verify) would merge
//!   different bytes: each such *false match* is counted
//!   (`engine_false_matches`) and the page is written as unique, so the
//!   simulated mapping stays exact. A stream gives fingerprints for every
//!   write or for none.

use super::submit::IdleFrom;
use super::{RequestHint, SimError, Simulation, Until};
use crate::config::Config;
use crate::engine::Engine;
use crate::ftl::index::dense_limit;
use crate::ftl::Ftl;
use crate::policy::Policy;
use crate::units::{ContentId, Nanos, Op};
use crate::workload::Request;

/// One request of a streaming simulation.
#[derive(Copy, Clone, Debug)]
pub struct StreamRequest<'a> {
    /// The caller's name for the request, handed back with its completion.
    pub tag: u64,
    pub op: Op,
    /// First logical page.
    pub lpn: u32,
    /// Number of pages (>= 1).
    pub pages: u32,
    /// For writes: the content id of each page (`pages` of them); ignored
    /// otherwise. Ids are small integers (the FTL's fingerprint index is a
    /// table indexed by id): intern real fingerprints first.
    pub contents: &'a [ContentId],
    /// The write's explicit hint, if the source carries hints.
    pub hint: RequestHint,
    /// For writes: the fingerprint of each page's bytes (equal bytes, equal
    /// fingerprints: one per content id), or `None` for the content ids
    /// themselves (no collision). Every write of a stream gives them, or
    /// none does.
    pub fingerprints: Option<&'a [u64]>,
    /// The writer stream ([`Request::stream`]): `serve`'s client connection.
    pub stream: u16,
}

/// The fingerprints a stream gave, per content id (module doc).
#[derive(Clone, Debug, Default)]
pub(super) struct Fingerprints {
    /// Per content id.
    of: Vec<u64>,
    /// For the FTL's own index (CAFTL, which looks up by content): the
    /// content indexed under each fingerprint, and the write that indexed
    /// it (its copy is programmed after the whole write's lookup).
    primary: std::collections::HashMap<u64, (ContentId, u64)>,
    /// The current write, counted from 1.
    write: u64,
    /// Fingerprint matches of different bytes that CAFTL would merge.
    false_matches: u64,
}

impl Fingerprints {
    /// The fingerprint of content `c`: given, or `c` itself.
    #[inline]
    pub(super) fn of(f: Option<&Fingerprints>, c: ContentId) -> u64 {
        match f {
            Some(f) => f.of[c.0 as usize],
            None => u64::from(c.0),
        }
    }

    /// The FTL's index holds no copy of `c`: a copy of other bytes under
    /// the same fingerprint is a false match; otherwise `c`'s copy (about
    /// to be programmed and indexed) becomes the fingerprint's.
    pub(super) fn ftl_index_miss(&mut self, ftl: &Ftl, c: ContentId) {
        let fp = self.of[c.0 as usize];
        match self.primary.get(&fp) {
            Some(&(o, w)) if o != c && (w == self.write || ftl.find_duplicate(o).is_some()) => self.false_matches += 1,
            _ => {
                self.primary.insert(fp, (c, self.write));
            }
        }
    }

    /// A write's lookups begin.
    pub(super) fn begin_write(&mut self) {
        self.write += 1;
    }

    pub(super) fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![("engine_false_matches", self.false_matches as f64)]
    }

    fn record(&mut self, contents: &[ContentId], fps: &[u64]) {
        for (&c, &f) in contents.iter().zip(fps) {
            let i = c.0 as usize;
            if self.of.len() <= i {
                self.of.resize((i + 1).max(self.of.len() * 2), 0);
            }
            self.of[i] = f;
        }
    }
}

/// The stream's own count (its clock is the shared one,
/// [`super::submit`]).
#[derive(Clone, Debug, Default)]
pub(super) struct StreamState {
    /// Writes submitted.
    writes: u64,
}

impl Simulation<'static> {
    /// A simulation fed request by request (module doc), with `policy` and
    /// `engine` on an empty device configured by `cfg`. `cfg.replay` does
    /// not apply: the caller decides arrivals.
    pub fn streaming(
        cfg: &Config,
        policy: Box<dyn Policy>,
        engine: Box<dyn Engine>,
        opts: super::RunOptions,
    ) -> Result<Self, SimError> {
        let mut sim = Self::build(cfg, None, policy, engine, opts)?;
        sim.clock.idle_from = IdleFrom::LastArrival;
        sim.policy.begin_replay();
        Ok(sim)
    }
}

impl Simulation<'_> {
    /// SSDsim's pre-processing count for `allocation = "dynamic"`: a
    /// stream that knows the read pages of the whole request source ahead
    /// (a trace) starts dynamic allocation's channel rotation as a replay
    /// of that trace does ([`super::ReplayPlan::read_pages`]). Without it
    /// (`dedupsim serve`: no trace) the rotation starts at 0, as do the
    /// chip tokens (a stream is not preconditioned). Only before the first
    /// request; no effect under other allocations.
    pub fn set_read_pages_ahead(&mut self, pages: u64) -> Result<(), SimError> {
        if self.clock.submitted > 0 {
            return Err(SimError::Order("read pages ahead set after the first request"));
        }
        if self.alloc.dynamic() {
            self.timing.set_programs_before(pages);
        }
        Ok(())
    }

    /// Logical pages of the simulated device.
    pub fn logical_pages(&self) -> u64 {
        self.ftl.logical_pages() as u64
    }

    /// Submits one request arriving at `at` (raised to [`Self::floor`]);
    /// returns the arrival used. Its completion comes out of
    /// [`Self::next_completion`] (or [`Self::collect`]). Checks the request
    /// (range, contents, fingerprints), then takes the step every driver
    /// takes (`submit_request`).
    pub fn submit(&mut self, req: &StreamRequest<'_>, at: Nanos) -> Result<Nanos, SimError> {
        let end = u64::from(req.lpn) + u64::from(req.pages);
        if req.pages == 0 || end > self.ftl.logical_pages() as u64 {
            return Err(SimError::TooLarge { span: end, capacity: self.ftl.logical_pages() as u64 });
        }
        if req.op == Op::Write {
            if req.contents.len() != req.pages as usize {
                return Err(SimError::NoContent { index: self.clock.submitted as usize, pages: req.pages });
            }
            let index = self.clock.submitted as usize;
            match (req.fingerprints, self.fingerprints.as_deref_mut()) {
                (Some(f), Some(have)) if f.len() == req.contents.len() => have.record(req.contents, f),
                (Some(f), None) if f.len() == req.contents.len() && self.stream.writes == 0 => {
                    let mut have = Fingerprints::default();
                    have.record(req.contents, f);
                    self.fingerprints = Some(Box::new(have));
                }
                (None, None) => {}
                (f, _) => {
                    let given = f.map_or(0, <[u64]>::len);
                    return Err(SimError::Fingerprints { index, pages: req.pages, given });
                }
            }
            self.stream.writes += 1;
            let space = req.contents.iter().map(|c| c.0 + 1).max().unwrap_or(0);
            if space > self.content_space {
                // Grown geometrically: the FTL's index copies itself to
                // grow. The guess stops at the dense limit: only an id
                // past it makes the index a hash map (`ftl::index`).
                let limit = dense_limit(u64::from(self.ftl.geometry().total_pages));
                self.content_space = space.max(self.content_space.saturating_mul(2).max(1024).min(limit));
                if self.dedup && self.ftl_index {
                    self.ftl.reserve_index(self.content_space);
                }
            }
        }
        let at = at.max(self.clock.floor);
        // `content` only has to differ from NO_CONTENT: the ids come along.
        let r = Request { arrival: at, op: req.op, lpn: req.lpn, pages: req.pages, content: 0, stream: req.stream };
        let index = self.clock.submitted as usize;
        self.submit_request(&r, req.contents, req.hint, req.tag, index, at)
    }

    /// The outstanding request that completes first, `(tag, completion)`,
    /// once that is certain (module doc), simulating as far as needed;
    /// `None` when nothing is outstanding: `collect(Until::Next)`.
    pub fn next_completion(&mut self) -> Result<Option<(u64, Nanos)>, SimError> {
        self.collect(Until::Next)
    }

    /// Ends the stream: the idle time after the last arrival, every queued
    /// operation, the final check; the run's output. Completions not
    /// collected are still counted in the output's latencies.
    pub fn end(self) -> Result<super::RunOutput, SimError> {
        self.end_keep().map(|(out, _)| out)
    }

    /// Like [`Self::end`], also returning the final FTL state.
    pub fn end_keep(self) -> Result<(super::RunOutput, Ftl), SimError> {
        if self.clock.submitted == 0 {
            return Err(SimError::Empty);
        }
        self.conclude()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Allocation, Config, ReplayConfig};
    use crate::sim::RunOptions;
    use crate::synth::{generate, SynthSpec};
    use crate::units::ContentId;

    /// Drives `w` through the streaming interface the way the closed-loop
    /// replay issues it: request k arrives once fewer than `depth` are
    /// outstanding, at the latest completion handed out so far.
    /// Request `k` of `w` as the stream takes it.
    fn as_stream<'a>(w: &'a crate::workload::Workload, k: usize, r: &Request) -> StreamRequest<'a> {
        StreamRequest {
            fingerprints: None,
            tag: k as u64,
            op: r.op,
            lpn: r.lpn,
            pages: r.pages,
            contents: w.content_of(r),
            hint: RequestHint::Absent,
            stream: 0,
        }
    }

    fn stream_closed_loop(cfg: &Config, w: &crate::workload::Workload, policy: &str, depth: u64) -> String {
        let p = crate::policy::build(policy, cfg).unwrap();
        let e = crate::engine::build(&cfg.dedup.engine, &cfg.engine_context()).unwrap();
        let mut sim =
            Simulation::streaming(cfg, p, e, RunOptions { check: true, check_every: 500, resources: false }).unwrap();
        // SSDsim's pre-processing count, as the replay's plan gives it.
        sim.set_read_pages_ahead(crate::sim::ReplayPlan::of(w).read_pages).unwrap();
        let mut now = Nanos::ZERO;
        for (k, r) in w.timed().iter().enumerate() {
            while sim.outstanding() >= depth {
                let (_, c) = sim.next_completion().unwrap().expect("outstanding requests complete");
                now = now.max(c);
            }
            let req = as_stream(w, k, r);
            sim.submit(&req, now).unwrap();
        }
        let out = sim.end().unwrap();
        format!("{:?} {:?} {:?}", out.metrics, out.chip_busy, out.erase_counts)
    }

    fn batch(cfg: &Config, w: &crate::workload::Workload, policy: &str) -> String {
        let p = crate::policy::build(policy, cfg).unwrap();
        let opts = RunOptions { check: true, check_every: 500, resources: false };
        let out = Simulation::new(cfg, w, p, opts).unwrap().run(&mut |_, _| {}).unwrap();
        format!("{:?} {:?} {:?}", out.metrics, out.chip_busy, out.erase_counts)
    }

    #[test]
    fn streaming_at_depth_n_is_the_closed_loop_replay() {
        let mut cfg = Config::preset("tiny").unwrap();
        let mut spec: SynthSpec = "requests=3000,read=0.4,footprint=512KiB,hot=0.4:128KiB,size=inv:8".parse().unwrap();
        spec.page_size = cfg.geometry.page_size;
        let mut w = generate(&spec, 7).unwrap();
        crate::content::try_assign_content(&mut w, &"zipf:dedup=0.4".parse().unwrap(), 7).unwrap();
        for allocation in [cfg.allocation, Allocation::Dynamic] {
            cfg.allocation = allocation;
            for depth in [1u32, 4, 32] {
                cfg.replay = ReplayConfig::ClosedLoop { queue_depth: depth };
                for policy in ["native", "dedup", "fad"] {
                    assert_eq!(
                        stream_closed_loop(&cfg, &w, policy, u64::from(depth)),
                        batch(&cfg, &w, policy),
                        "{policy} at depth {depth} under {allocation:?}"
                    );
                }
            }
        }
    }

    /// Streams `w` at its own arrival times; with `by_time`, collects
    /// before each arrival every completion certain by then. Returns the
    /// output and every completion handed out, sorted.
    fn stream_at_arrivals(
        cfg: &Config,
        w: &crate::workload::Workload,
        policy: &str,
        by_time: bool,
    ) -> (String, Vec<(u64, Nanos)>) {
        let p = crate::policy::build(policy, cfg).unwrap();
        let e = crate::engine::build(&cfg.dedup.engine, &cfg.engine_context()).unwrap();
        let mut sim =
            Simulation::streaming(cfg, p, e, RunOptions { check: true, check_every: 500, resources: false }).unwrap();
        let mut done = Vec::new();
        for (k, r) in w.timed().iter().enumerate() {
            if by_time && k == w.timed().len() / 2 {
                // Some completions were certain by their successors' arrivals.
                assert!(!done.is_empty(), "collected before the end");
            }
            if by_time {
                while let Some((tag, c)) = sim.collect(Until::Time(r.arrival)).unwrap() {
                    assert!(c <= r.arrival, "request {tag} handed out at {c:?}, after the bound {:?}", r.arrival);
                    assert!(
                        done.last().is_none_or(|&(_, l)| l <= c),
                        "{policy}: completions in time order: {tag} at {c:?} after {:?}",
                        done.last()
                    );
                    done.push((tag, c));
                }
                assert!(sim.floor() <= r.arrival);
            }
            let req = as_stream(w, k, r);
            assert_eq!(sim.submit(&req, r.arrival).unwrap(), r.arrival);
        }
        while let Some(c) = sim.collect(Until::Next).unwrap() {
            done.push(c);
        }
        assert_eq!(sim.outstanding(), 0);
        done.sort();
        let out = sim.end().unwrap();
        (format!("{:?} {:?} {:?}", out.metrics, out.chip_busy, out.erase_counts), done)
    }

    #[test]
    fn collecting_by_time_changes_nothing() {
        let mut cfg = Config::preset("tiny").unwrap();
        let mut spec: SynthSpec =
            "requests=3000,read=0.4,footprint=512KiB,hot=0.4:128KiB,size=inv:8,iat=exp:300us".parse().unwrap();
        spec.page_size = cfg.geometry.page_size;
        let mut w = generate(&spec, 9).unwrap();
        crate::content::try_assign_content(&mut w, &"zipf:dedup=0.4".parse().unwrap(), 9).unwrap();
        for allocation in [cfg.allocation, Allocation::Dynamic] {
            cfg.allocation = allocation;
            for policy in ["native", "dedup", "fad"] {
                let (lazy, all) = stream_at_arrivals(&cfg, &w, policy, false);
                let (timed, by_time) = stream_at_arrivals(&cfg, &w, policy, true);
                assert_eq!(lazy, timed, "{policy} under {allocation:?}");
                assert_eq!(all.len(), w.timed().len());
                assert_eq!(all, by_time, "{policy} under {allocation:?}: the same completions");
            }
        }
    }

    #[test]
    fn submit_checks_its_request() {
        let cfg = Config::preset("tiny").unwrap();
        let p = crate::policy::build("dedup", &cfg).unwrap();
        let e = crate::engine::build(&cfg.dedup.engine, &cfg.engine_context()).unwrap();
        let mut sim = Simulation::streaming(&cfg, p, e, RunOptions::default()).unwrap();
        let pages = sim.logical_pages() as u32;
        let req = |lpn, n, contents| StreamRequest {
            fingerprints: None,
            tag: 0,
            op: Op::Write,
            lpn,
            pages: n,
            contents,
            hint: RequestHint::Absent,
            stream: 0,
        };
        let two = [ContentId(5), ContentId(5)];
        assert!(matches!(sim.submit(&req(pages - 1, 2, &two), Nanos(0)), Err(SimError::TooLarge { .. })));
        assert!(matches!(sim.submit(&req(0, 2, &two[..1]), Nanos(0)), Err(SimError::NoContent { .. })));
        assert_eq!(sim.submit(&req(0, 2, &two), Nanos(10)).unwrap(), Nanos(10));
        // In-file duplicate: one program, one reference.
        let (tag, done) = sim.next_completion().unwrap().unwrap();
        assert_eq!(tag, 0);
        assert!(done > Nanos(10));
        // An arrival before the floor is raised to it.
        assert_eq!(sim.submit(&req(2, 2, &two), Nanos(0)).unwrap(), done);
        assert!(sim.next_completion().unwrap().is_some());
        assert_eq!(sim.next_completion().unwrap(), None);
        let out = sim.end().unwrap();
        assert_eq!(out.metrics.counters.dedup_pages, 3);
        assert_eq!(out.metrics.counters.programs.host_unique, 1);
    }

    /// The stream sizes the fingerprint index by the ids it has seen,
    /// doubling its guess, but the guess stops at the device's dense limit
    /// (`ftl::index`): ids just under the limit keep the index dense, and
    /// only an id past it makes it a hash map.
    #[test]
    fn ids_under_the_dense_limit_keep_the_index_dense() {
        let cfg = Config::small_for_tests(2, 2, 64, 16);
        let limit = dense_limit(u64::from(Ftl::new(&cfg.ftl_params()).geometry().total_pages));
        assert!(limit >= 4 * 1024, "the guess doubles below the limit");
        let p = crate::policy::build("dedup", &cfg).unwrap();
        let e = crate::engine::build(&cfg.dedup.engine, &cfg.engine_context()).unwrap();
        let mut sim =
            Simulation::streaming(&cfg, p, e, RunOptions { check: true, check_every: 1, resources: false }).unwrap();
        fn write(lpn: u32, c: &ContentId) -> StreamRequest<'_> {
            StreamRequest {
                fingerprints: None,
                tag: u64::from(lpn),
                op: Op::Write,
                lpn,
                pages: 1,
                contents: std::slice::from_ref(c),
                hint: RequestHint::Absent,
                stream: 0,
            }
        }
        // Ids that double the guess past the limit, all below it; then one
        // past it, twice.
        let ids = [limit / 4, limit / 2, limit - 1, 3, limit + 5, limit + 5].map(ContentId);
        for (k, c) in ids.iter().enumerate() {
            if k == 4 {
                assert!(!sim.ftl.index_hashed(), "ids below the limit {limit}");
            }
            sim.submit(&write(k as u32, c), Nanos::from_us(10 * k as u64)).unwrap();
        }
        assert!(sim.ftl.index_hashed());
        let out = sim.end().unwrap();
        assert_eq!(out.metrics.counters.dedup_pages, 1, "the second write of id {} deduplicates", limit + 5);
    }
}
