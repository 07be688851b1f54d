//! Engine tests through the whole simulator: the generic engine path
//! against the CAFTL fast path, and SmartDedup's published behaviours.

use super::*;
use crate::config::PreconditionRule;
use crate::content::ContentModel;
use crate::runner::{prepare, Prepared};
use crate::sim::{RunOptions, RunOutput, Simulation};
use crate::synth::{generate, SynthSpec};
use std::collections::HashMap;

/// An unbounded engine outside the FTL with CAFTL's exact rules: the first
/// copy of a content written as new is its primary; the primary is
/// forgotten when freed (another live copy does not take its place).
#[derive(Default)]
struct Oracle {
    primary: HashMap<ContentId, EntryId>,
}

impl Engine for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }
    fn lookup(&mut self, _ftl: &Ftl, pages: &[WritePage], io: &mut EngineIo) {
        for p in pages {
            io.hashed.push(true);
            io.verdicts.push(self.primary.get(&p.content).map_or(Verdict::Unique, |&e| Verdict::Duplicate(e)));
        }
    }
    fn commit(&mut self, _: &Ftl, pages: &[WritePage], entries: &[EntryId], programmed: &[bool], io: &mut EngineIo) {
        for (k, p) in pages.iter().enumerate() {
            if programmed[k] && !p.repeat && io.verdicts[k] == Verdict::Unique {
                self.primary.entry(p.content).or_insert(entries[k]);
            }
        }
    }
    fn preload(&mut self, content: ContentId, entry: EntryId) {
        self.primary.entry(content).or_insert(entry);
    }
    fn forget(&mut self, content: ContentId, entry: EntryId) {
        if self.primary.get(&content) == Some(&entry) {
            self.primary.remove(&content);
        }
    }
}

fn prepared(spec: &str, content: &str) -> Prepared {
    let spec: SynthSpec = spec.parse().unwrap();
    let w = generate(&spec, 7).unwrap();
    let model: ContentModel = content.parse().unwrap();
    prepare(w, &model, 7, PreconditionRule::AllReads).unwrap()
}

fn run_with(cfg: &Config, p: &Prepared, policy: &str, engine: Box<dyn Engine>) -> RunOutput {
    let pol = crate::policy::build(policy, cfg).unwrap();
    let opts = RunOptions { check: true, check_every: 5_000 };
    Simulation::with_engine(cfg, &p.workload, pol, engine, opts).unwrap().run(&mut |_, _| {}).unwrap()
}

fn stat(out: &RunOutput, key: &str) -> f64 {
    out.engine_stats.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no stat {key}"))
}

fn smart(cfg: &Config, set: &[(&str, toml::Value)]) -> Box<dyn Engine> {
    let mut cfg = cfg.clone();
    let mut t = toml::Table::new();
    for (k, v) in set {
        t.insert(k.to_string(), v.clone());
    }
    cfg.engine.insert("smartdedup".into(), toml::Value::Table(t));
    build_named("smartdedup", &cfg).unwrap()
}

/// The generic engine path (lookup, commit, forget, preload) gives the
/// same run as the CAFTL fast path when the engine follows CAFTL's rules:
/// every latency, counter and DOF, for a dedup policy and for FAD.
#[test]
fn the_engine_path_reproduces_caftl_exactly() {
    let cfg = Config::fad_table1();
    let p = prepared("requests=6000,read=0.4,size=inv:8,footprint=64MiB,hot=0.4:16MiB", "zipf:a=0.2,dedup=0.5");
    for policy in ["dedup", "fad"] {
        let fast = run_with(&cfg, &p, policy, Box::new(Caftl));
        let generic = run_with(&cfg, &p, policy, Box::<Oracle>::default());
        assert!(fast.metrics.counters.dedup_pages > 500, "{policy}: the workload must deduplicate");
        assert_eq!(fast.metrics.counters, generic.metrics.counters, "{policy}");
        assert_eq!(fast.metrics.read_latency.to_base64(), generic.metrics.read_latency.to_base64(), "{policy}");
        assert_eq!(fast.metrics.write_latency.to_base64(), generic.metrics.write_latency.to_base64(), "{policy}");
        assert_eq!(fast.metrics.dof, generic.metrics.dof, "{policy}");
        assert_eq!(fast.chip_busy, generic.chip_busy, "{policy}");
    }
}

/// With memory for every fingerprint and cold stores, SmartDedup's in-line
/// dedup finds what CAFTL finds among the replayed writes (no
/// preconditioning here: nothing is read before it is written).
#[test]
fn smartdedup_with_ample_memory_finds_every_duplicate_in_line() {
    let cfg = Config::fad_table1();
    let p = prepared("requests=5000,read=0,size=inv:8,footprint=64MiB,hot=0.4:16MiB", "zipf:a=0.2,dedup=0.5");
    assert_eq!(p.workload.precondition, 0);
    let caftl = run_with(&cfg, &p, "dedup", Box::new(Caftl));
    let sd = run_with(&cfg, &p, "dedup", smart(&cfg, &[("memory_mb", 64.0.into()), ("warm_start", false.into())]));
    assert_eq!(sd.metrics.counters.dedup_pages, caftl.metrics.counters.dedup_pages);
    assert_eq!(stat(&sd, "engine_evictions"), 0.0);
    assert_eq!(stat(&sd, "sim_engine_meta_programs"), 0.0);
}

/// A small memory store bounds the fingerprints held, evicts to flash
/// (timed metadata programs) and finds fewer duplicates in line; group
/// eviction costs less metadata I/O than single-fingerprint LRU (§4.2).
#[test]
fn smartdedup_memory_bound_evicts_to_flash() {
    let cfg = Config::fad_table1();
    let p = prepared("requests=8000,read=0,size=inv:8,footprint=256MiB,hot=0.4:64MiB", "zipf:a=0.2,dedup=0.5");
    let small = [("memory_mb", 0.25.into()), ("prefix_bits", 10.into()), ("warm_start", false.into())];
    let big = run_with(&cfg, &p, "dedup", smart(&cfg, &[("memory_mb", 64.0.into()), ("warm_start", false.into())]));
    let glru = run_with(&cfg, &p, "dedup", smart(&cfg, &small));
    let mut lru_set = small.to_vec();
    lru_set.push(("eviction", "lru".into()));
    let lru = run_with(&cfg, &p, "dedup", smart(&cfg, &lru_set));
    let cap = stat(&glru, "engine_capacity_fps");
    assert_eq!(cap, ((0.25 * 1048576.0 - 1024.0 * 12.0) / 30.0_f64).floor());
    assert!(stat(&glru, "engine_peak_memory_fps") <= cap);
    assert!(stat(&glru, "engine_evictions") > 0.0);
    assert!(stat(&glru, "sim_engine_meta_programs") > 0.0);
    assert!(glru.metrics.counters.dedup_pages < big.metrics.counters.dedup_pages);
    let io = |o: &RunOutput| stat(o, "sim_engine_meta_reads") + stat(o, "sim_engine_meta_programs");
    assert!(io(&glru) < io(&lru), "G-LRU {} vs LRU {}", io(&glru), io(&lru));
}

/// Out-of-line dedup at idle time finds, in the on-flash store, the
/// duplicate that in-line dedup missed after its fingerprint was evicted,
/// and remaps the page to the old copy, freeing the new one.
#[test]
fn smartdedup_out_of_line_dedup_remaps_at_idle_time() {
    use crate::units::{Nanos, Op};
    use crate::workload::{Provenance, Request, Workload};
    let cfg = Config::fad_table1();
    // Content 0 at LPN 0, then 3,000 unique pages (evicting it from a tiny
    // memory store), then content 0 again at LPN 5000 after a 1 s gap.
    let mut reqs = vec![Request { arrival: Nanos(0), op: Op::Write, lpn: 0, pages: 1, content: 0 }];
    let mut contents = vec![ContentId(0)];
    for i in 0..3000u32 {
        reqs.push(Request {
            arrival: Nanos::from_us(10 * (i as u64 + 1)),
            op: Op::Write,
            lpn: 1 + i,
            pages: 1,
            content: contents.len() as u32,
        });
        contents.push(ContentId(1 + i));
    }
    let last = reqs.last().unwrap().arrival;
    reqs.push(Request {
        arrival: last + Nanos::from_ms(1000),
        op: Op::Write,
        lpn: 5000,
        pages: 1,
        content: contents.len() as u32,
    });
    contents.push(ContentId(0));
    reqs.push(Request { arrival: last + Nanos::from_ms(2000), op: Op::Read, lpn: 5000, pages: 1, content: u32::MAX });
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    w.content_space = 3001;
    let p = Prepared { workload: w, content_model: "test".into(), content_dedup_rate: 0.0 };
    let tiny = [("memory_mb", 0.02.into()), ("prefix_bits", 4.into()), ("warm_start", false.into())];
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &tiny));
    assert_eq!(out.metrics.counters.dedup_pages, 0, "in-line must miss: the fingerprint was evicted");
    assert!(stat(&out, "engine_offline_dedup_pages") >= 1.0);
    assert!(stat(&out, "sim_engine_remaps") >= 1.0);
    assert!(stat(&out, "sim_engine_meta_reads") >= 1.0);
    // 3,002 pages written, one freed by the remap.
    assert_eq!(out.live_pages, 3001);
    // Without out-of-line dedup both copies stay.
    let mut off = tiny.to_vec();
    off.push(("offline", false.into()));
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &off));
    assert_eq!(out.live_pages, 3002);
}

/// The iDedup filter (§4.5): a run of two duplicate pages is deduplicated
/// at threshold 2 and written normally at threshold 3.
#[test]
fn smartdedup_sequence_filter_skips_short_runs() {
    use crate::units::{Nanos, Op};
    use crate::workload::{Provenance, Request, Workload};
    let cfg = Config::fad_table1();
    let reqs = vec![
        Request { arrival: Nanos(0), op: Op::Write, lpn: 0, pages: 4, content: 0 },
        Request { arrival: Nanos::from_ms(1), op: Op::Write, lpn: 10, pages: 4, content: 4 },
    ];
    let contents = [1, 2, 3, 4, 9, 2, 3, 8].map(ContentId).to_vec();
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    w.content_space = 10;
    let p = Prepared { workload: w, content_model: "test".into(), content_dedup_rate: 0.0 };
    let dedup_at = |t: u32| {
        let out = run_with(&cfg, &p, "dedup", smart(&cfg, &[("threshold", (t as i64).into())]));
        (out.metrics.counters.dedup_pages, stat(&out, "engine_filtered_pages"))
    };
    assert_eq!(dedup_at(1), (2, 0.0));
    assert_eq!(dedup_at(2), (2, 0.0));
    assert_eq!(dedup_at(3), (0, 2.0));
}

/// §3.2's evaluation setting: 3 MB with a 14-bit prefix.
#[test]
fn smartdedup_default_capacity() {
    let cfg = Config::fad_table1();
    let p: SmartDedupParams = params(&cfg, "smartdedup").unwrap();
    assert_eq!((p.memory_mb, p.prefix_bits), (3.0, 14));
    let e = build_named("smartdedup", &cfg).unwrap();
    let cap = e.stats().iter().find(|(k, _)| *k == "engine_capacity_fps").unwrap().1;
    assert_eq!(cap, 98_304.0);
}
