//! Engine tests through the whole simulator: the generic engine path
//! against the CAFTL fast path, and SmartDedup's published behaviours.

use super::*;
use crate::config::{Config, PreconditionRule};
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
    fn preload(&mut self, content: ContentId, _fingerprint: u64, entry: EntryId) {
        self.primary.entry(content).or_insert(entry);
    }
    fn forget(&mut self, content: ContentId, _fingerprint: u64, entry: EntryId) {
        if self.primary.get(&content) == Some(&entry) {
            self.primary.remove(&content);
        }
    }
}

fn prepared(spec: &str, content: &str) -> Prepared {
    let spec: SynthSpec = spec.parse().unwrap();
    let w = generate(&spec, 7).unwrap();
    let model: ContentModel = content.parse().unwrap();
    prepare(w, &model, 7, &crate::config::PreconditionConfig::with_rule(PreconditionRule::AllReads)).unwrap()
}

/// A hand-made workload as prepared, contents as given, nothing drawn.
fn as_prepared(w: crate::workload::Workload) -> Prepared {
    Prepared {
        workload: w,
        content_model: "test".into(),
        content_dedup_rate: 0.0,
        contents_drawn: true,
        precondition: String::new(),
    }
}

fn run_with(cfg: &Config, p: &Prepared, policy: &str, engine: Box<dyn Engine>) -> RunOutput {
    let pol = crate::policy::build(policy, cfg).unwrap();
    let opts = RunOptions { check: true, check_every: 5_000, resources: false };
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
    build("smartdedup", &cfg.engine_context()).unwrap()
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
    // Pages placed when processed: under the preset's dynamic allocation
    // SmartDedup finds 5,502 duplicates here and CAFTL's FTL index 5,504
    // (0.04% apart; not yet explained: both see the same waiting copies,
    // `engine::is_live_copy`).
    let mut cfg = Config::fad_table1();
    cfg.allocation = crate::config::Allocation::LeastLoaded;
    let p = prepared("requests=5000,read=0,size=inv:8,footprint=64MiB,hot=0.4:16MiB", "zipf:a=0.2,dedup=0.5");
    assert_eq!(p.workload.precondition, 0);
    let caftl = run_with(&cfg, &p, "dedup", Box::new(Caftl));
    let sd = run_with(&cfg, &p, "dedup", smart(&cfg, &[("memory_mb", 64.0.into()), ("warm_start", false.into())]));
    assert_eq!(sd.metrics.counters.dedup_pages, caftl.metrics.counters.dedup_pages);
    assert_eq!(stat(&sd, "engine_evictions"), 0.0);
    assert_eq!(stat(&sd, "sim_engine_meta_programs"), 0.0);
}

/// A small memory store bounds the fingerprints held and finds fewer
/// duplicates in line; group eviction costs less metadata I/O than
/// single-fingerprint LRU (§4.2). The eviction itself is counted by hand
/// in `smartdedup_group_lru_eviction_by_hand`.
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
    // By hand: (262,144 B - 2^10 leaves x 12 B) / 30 B = 8,328.5.
    assert_eq!(cap, 8_328.0);
    assert!(stat(&glru, "engine_peak_memory_fps") <= cap);
    assert!(glru.metrics.counters.dedup_pages < big.metrics.counters.dedup_pages);
    let io = |o: &RunOutput| stat(o, "sim_engine_meta_reads") + stat(o, "sim_engine_meta_programs");
    assert!(io(&glru) < io(&lru), "G-LRU {} vs LRU {}", io(&glru), io(&lru));
}

/// Contents placed by group of a 1-bit prefix (the top bit of the store's
/// fingerprint): 3, 6 and 7 are in group 0; 1, 2 and 4 in group 1.
fn assert_groups_of_a_1_bit_prefix() {
    for (c, g) in [(3, 0), (6, 0), (7, 0), (1, 1), (2, 1), (4, 1)] {
        assert_eq!(super::smartdedup::SmartDedup::fingerprint(c) >> 63, g, "content {c}");
    }
}

/// A store for three fingerprints in two groups: 2 leaves x 12 B + 3 x
/// 30 B = 114 B.
fn three_fingerprints(extra: &[(&'static str, toml::Value)]) -> Vec<(&'static str, toml::Value)> {
    let mut set =
        vec![("memory_mb", (114.0 / 1_048_576.0).into()), ("prefix_bits", 1.into()), ("warm_start", false.into())];
    set.extend(extra.iter().cloned());
    set
}

/// G-LRU eviction (§3.2) counted by hand against single-fingerprint LRU,
/// without out-of-line dedup. A 3-fingerprint store, 1-bit prefix:
/// A1 A2 A3 = contents 3 6 7 (group 0), B1 B2 = 1 2 (group 1); one-page
/// writes at LPNs 0-7: A1 B1 A2 B2 A3 A1 B1 A3.
///
/// G-LRU (group order most recent first):
/// 1-3. A1, B1, A2 fill the store (G0 G1).
/// 4. B2: full, evict the LRU group G1 = {B1}: flash G1 was empty (no
///    read), 1 fingerprint = 1 page programmed. Store {A1 A2 B2} (G1 G0).
/// 5. A3: evict G0 = {A1, A2}: no read, 1 program. Store {B2 A3} (G0 G1).
/// 6. A1: a miss (on flash); inserted without eviction. Store {B2 A3 A1}.
/// 7. B1: a miss; evict G1 = {B2}: flash G1 holds B1 (1 page read), the
///    merged {B1, B2} 1 page programmed. Store {A3 A1 B1}.
/// 8. A3: an in-line hit.
///
/// So 3 evictions of 4 fingerprints, 1 read + 3 programs, 1 hit.
/// LRU (fingerprint order): 4. B2 evicts A1 (1 program); 5. A3 evicts B1
/// (1 program); 6. A1 misses and evicts A2 (G0 holds A1: 1 read, 1
/// program); 7. B1 misses and evicts B2 (G1 holds B1: 1 read, 1 program);
/// 8. A3 hits: 4 evictions of 4 fingerprints, 2 reads + 4 programs.
#[test]
fn smartdedup_group_lru_eviction_by_hand() {
    use crate::units::Op;
    assert_groups_of_a_1_bit_prefix();
    let cfg = Config::fad_table1();
    let order = [3, 1, 6, 2, 7, 3, 1, 7];
    let steps: Vec<_> = order.iter().enumerate().map(|(i, &c)| (Op::Write, i as u32, vec![c])).collect();
    let p = handmade(&steps, 1000);
    for (ev, evictions, reads, programs) in [("g-lru", 3.0, 1.0, 3.0), ("lru", 4.0, 2.0, 4.0)] {
        let out = run_with(
            &cfg,
            &p,
            "dedup",
            smart(&cfg, &three_fingerprints(&[("eviction", ev.into()), ("offline", false.into())])),
        );
        assert_eq!(stat(&out, "engine_capacity_fps"), 3.0);
        assert_eq!(stat(&out, "engine_peak_memory_fps"), 3.0, "{ev}");
        assert_eq!(out.metrics.counters.dedup_pages, 1, "{ev}: only A3's second write hits in line");
        assert_eq!(stat(&out, "engine_evictions"), evictions, "{ev}");
        assert_eq!(stat(&out, "engine_evicted_fps"), 4.0, "{ev}");
        assert_eq!(stat(&out, "engine_evict_meta_reads"), reads, "{ev}");
        assert_eq!(stat(&out, "engine_evict_meta_programs"), programs, "{ev}");
        assert_eq!(stat(&out, "engine_offline_meta_reads"), 0.0, "{ev}");
        assert_eq!(stat(&out, "sim_engine_meta_reads"), reads, "{ev}");
        assert_eq!(stat(&out, "sim_engine_meta_programs"), programs, "{ev}");
    }
}

/// Out-of-line dedup finding a copy on flash, by hand (idle-only pacing,
/// the 3-fingerprint store above): A1 = content 3 (group 0), B1 B2 B3 =
/// 1 2 4 (group 1), one-page writes 1 ms apart.
/// 1-4. A1 at LPN 0, B1, B2, B3 at LPNs 1-3: B3 evicts G0 = {A1} (no read,
///    1 program). Store {B1 B2 B3}; skipped buffer LPNs 0-3.
/// 5. 1 s idle: LPN 0 (A1) is not in memory; G0 on flash is read (1 page)
///    and holds only LPN 0's own copy. LPNs 1-3 find their own copies in
///    memory and G1 has nothing on flash (no reads).
/// 6. A1 at LPN 4: an in-line miss; its insertion evicts G1 = {B1 B2 B3}
///    (no read, 1 program). Store {A1 (LPN 4's copy)}.
/// 7. 5 s idle: LPN 4 (A1) finds its own copy in memory, then reads G0 (1
///    page): LPN 0's copy, live. LPN 4 is remapped to it, LPN 4's copy is
///    freed, and A1 is promoted to memory (pointing at LPN 0's copy).
///
/// So 2 evictions (2 programs, no eviction reads), 2 out-of-line group
/// reads, 1 remap, 1 page saved out of line, 1 promotion, 4 live pages of
/// 5 written; without out-of-line dedup all 5 stay.
#[test]
fn smartdedup_out_of_line_finds_a_copy_on_flash_by_hand() {
    use crate::units::Op;
    assert_groups_of_a_1_bit_prefix();
    let cfg = Config::fad_table1();
    let p = handmade_at(&[
        (0, Op::Write, 0, vec![3]),
        (1_000, Op::Write, 1, vec![1]),
        (2_000, Op::Write, 2, vec![2]),
        (3_000, Op::Write, 3, vec![4]),
        (1_003_000, Op::Write, 4, vec![3]),
        (6_003_000, Op::Read, 4, vec![1]),
    ]);
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &three_fingerprints(&[("pacing", "idle".into())])));
    assert_eq!(out.metrics.counters.dedup_pages, 0, "in-line misses: A1 went to flash");
    assert_eq!(stat(&out, "engine_evictions"), 2.0);
    assert_eq!(stat(&out, "engine_evict_meta_reads"), 0.0);
    assert_eq!(stat(&out, "engine_evict_meta_programs"), 2.0);
    assert_eq!(stat(&out, "engine_offline_meta_reads"), 2.0);
    assert_eq!(stat(&out, "sim_engine_meta_reads"), 2.0);
    assert_eq!(stat(&out, "sim_engine_meta_programs"), 2.0);
    assert_eq!(stat(&out, "engine_offline_pages"), 5.0);
    assert_eq!(stat(&out, "engine_offline_remaps"), 1.0);
    assert_eq!(stat(&out, "engine_offline_dedup_pages"), 1.0);
    assert_eq!(stat(&out, "engine_promotions"), 1.0);
    assert_eq!(stat(&out, "sim_engine_remaps"), 1.0);
    assert_eq!(out.live_pages, 4);
    let off = run_with(&cfg, &p, "dedup", smart(&cfg, &three_fingerprints(&[("offline", false.into())])));
    assert_eq!(stat(&off, "engine_offline_remaps"), 0.0);
    assert_eq!(off.live_pages, 5);
}

/// Out-of-line dedup at idle time finds, in the on-flash store, the
/// duplicate that in-line dedup missed after its fingerprint was evicted,
/// and remaps the page to the old copy, freeing the new one (on a long
/// trace; the counts are derived by hand in
/// `smartdedup_out_of_line_finds_a_copy_on_flash_by_hand`).
#[test]
fn smartdedup_out_of_line_dedup_remaps_at_idle_time() {
    use crate::units::{Nanos, Op};
    use crate::workload::{Provenance, Request, Workload};
    let cfg = Config::fad_table1();
    // Content 0 at LPN 0, then 3,000 unique pages (evicting it from a tiny
    // memory store), then content 0 again at LPN 5000 after a 1 s gap.
    let mut reqs = vec![Request { arrival: Nanos(0), op: Op::Write, lpn: 0, pages: 1, content: 0, stream: 0 }];
    let mut contents = vec![ContentId(0)];
    for i in 0..3000u32 {
        reqs.push(Request {
            arrival: Nanos::from_us(10 * (i as u64 + 1)),
            op: Op::Write,
            lpn: 1 + i,
            pages: 1,
            content: contents.len() as u32,
            stream: 0,
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
        stream: 0,
    });
    contents.push(ContentId(0));
    reqs.push(Request {
        arrival: last + Nanos::from_ms(2000),
        op: Op::Read,
        lpn: 5000,
        pages: 1,
        content: u32::MAX,
        stream: 0,
    });
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    w.content_space = 3001;
    let p = as_prepared(w);
    let tiny = [("memory_mb", 0.02.into()), ("prefix_bits", 4.into()), ("warm_start", false.into())];
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &tiny));
    assert_eq!(out.metrics.counters.dedup_pages, 0, "in-line must miss: the fingerprint was evicted");
    // 3,002 pages written, one freed by the remap.
    assert_eq!(out.live_pages, 3001);
    // Without out-of-line dedup both copies stay.
    let mut off = tiny.to_vec();
    off.push(("offline", false.into()));
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &off));
    assert_eq!(out.live_pages, 3002);
}

/// Issue 27: one content at LPN 0, 300 other contents (a 28-fingerprint
/// store: its fingerprint goes to flash), the same content at LPN 1, then
/// at LPN 2 (an in-line hit on LPN 1's copy), then 5 s idle. Three pages
/// of one content can save at most two: the in-line hit and one copy
/// freed out of line. Out-of-line dedup used to remap LPN 0 onto LPN 1's
/// copy and then LPNs 1 and 2 onto LPN 0's copy that the first remap was
/// freeing (skipped by the simulator) and counted all three: 1 + 3 = 4.
#[test]
fn smartdedup_counts_each_saved_page_once() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let mut steps = vec![(0, Op::Write, 0, vec![0])];
    for i in 1..=300u32 {
        steps.push((100 * u64::from(i), Op::Write, 100 + i, vec![i]));
    }
    steps.push((30_100, Op::Write, 1, vec![0]));
    steps.push((30_200, Op::Write, 2, vec![0]));
    steps.push((5_030_200, Op::Read, 0, vec![3]));
    let p = handmade_at(&steps);
    assert_eq!(p.workload.precondition, 0);
    // Idle-only pacing: out-of-line dedup runs once, in the 5 s at the end.
    let set = [
        ("memory_mb", 0.001.into()),
        ("prefix_bits", 4.into()),
        ("warm_start", false.into()),
        ("pacing", "idle".into()),
    ];
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &set));
    assert_eq!(stat(&out, "engine_capacity_fps"), 28.0);
    assert_eq!(out.metrics.counters.dedup_pages, 1, "LPN 2 hits LPN 1's copy in line");
    assert_eq!(stat(&out, "engine_offline_dedup_pages"), 1.0, "one more copy freed out of line");
    assert_eq!(stat(&out, "engine_offline_remaps"), 1.0, "LPN 0 onto LPN 1's copy");
    assert_eq!(stat(&out, "sim_engine_remaps"), 1.0);
    assert_eq!(stat(&out, "sim_engine_remaps_skipped"), 0.0);
    // 303 pages written, 301 contents: 301 live copies.
    assert_eq!(out.live_pages, 301);
    let saved = out.metrics.counters.dedup_pages as f64 + stat(&out, "engine_offline_dedup_pages");
    assert_eq!(saved, (out.metrics.counters.write_pages - out.live_pages) as f64);
}

/// Write requests of 10 pages at fresh LPNs, one per ms: `true` = five
/// hot contents (0-4, the same in every such request) and five new ones,
/// `false` = ten new ones.
fn hot_or_new(pattern: &[bool]) -> Prepared {
    use crate::units::Op;
    let mut next = 100u32;
    let steps: Vec<_> = pattern
        .iter()
        .enumerate()
        .map(|(i, &hot)| {
            let mut c: Vec<u32> = if hot { (0..5).collect() } else { Vec::new() };
            while c.len() < 10 {
                c.push(next);
                next += 1;
            }
            (Op::Write, 10 * i as u32, c)
        })
        .collect();
    handmade(&steps, 1000)
}

fn adaptive(cfg: &Config) -> Box<dyn Engine> {
    smart(cfg, &[("adaptive", true.into()), ("window", 10.into()), ("warm_start", false.into())])
}

/// Adaptive selectivity (§4.4) on a stationary workload with one noisy
/// window. Windows of 10 requests, history 30, −10% / +30%. W1 (the hot
/// contents' first writes in request 0): 45 hits / 100 pages = 0.45. W2,
/// W3: 0.50 > mean, selectivity stays 1. W4 holds one request of new
/// contents only: 0.45 < 0.483 → 0.9. W5 fingerprints 9 requests (the
/// first is skipped: credit 0.9): 45 / 90 = 0.50 > 0.475 → 1.0, and
/// stays there (0.50 is above every later mean). So 10 pages unhashed,
/// 5 hits in each of the 197 fingerprinted requests with hot contents
/// after the first. The bug measured W5 over all 100 pages (0.45 <
/// 0.475), cut to 0.8, measured 0.40, and so on down to the floor.
#[test]
fn smartdedup_adaptive_selectivity_recovers_on_a_stationary_workload() {
    let cfg = Config::fad_table1();
    let pattern: Vec<bool> = (0..200).map(|i| i != 35).collect();
    let out = run_with(&cfg, &hot_or_new(&pattern), "dedup", adaptive(&cfg));
    assert_eq!(stat(&out, "engine_selectivity_min"), 0.9);
    assert_eq!(stat(&out, "engine_selectivity"), 1.0);
    assert_eq!(stat(&out, "engine_unhashed_pages"), 10.0);
    assert_eq!(stat(&out, "engine_inline_hits"), 985.0);
    // Off: every page fingerprinted, selectivity 1 throughout.
    let off = run_with(&cfg, &hot_or_new(&pattern), "dedup", smart(&cfg, &[("warm_start", false.into())]));
    assert_eq!(stat(&off, "engine_unhashed_pages"), 0.0);
    assert_eq!(stat(&off, "engine_inline_hits"), 990.0);
}

/// Adaptive selectivity (§4.4) when the duplication level shifts: three
/// windows with hot contents (selectivity 1), eight of new contents only
/// (ratio 0 below every mean: −10% per window down to the 30% floor,
/// W4-W10, while W5-W11 skip 1, 2, ..., 7 of their 10 requests), then
/// three with hot contents again (0.5 above the mean: +30% per window,
/// 0.3 → 0.6 → 0.9 → 1.0, skipping 7, 4 and 1 requests). 40 requests
/// (400 pages) unhashed in all.
#[test]
fn smartdedup_adaptive_selectivity_follows_a_shifting_workload() {
    let cfg = Config::fad_table1();
    let mut pattern = vec![true; 30];
    pattern.extend([false; 80]);
    pattern.extend([true; 40]);
    let out = run_with(&cfg, &hot_or_new(&pattern), "dedup", adaptive(&cfg));
    assert!((stat(&out, "engine_selectivity_min") - 0.3).abs() < 1e-12);
    assert_eq!(stat(&out, "engine_selectivity"), 1.0);
    assert_eq!(stat(&out, "engine_unhashed_pages"), 400.0);
    // Hits: 5 per fingerprinted hot request after the first: 29 in the
    // first phase, 40 - 12 in the last.
    assert_eq!(stat(&out, "engine_inline_hits"), 5.0 * (29.0 + 28.0));
}

/// The skipped buffer is keyed by LPN (§3.3's hash table by inode and
/// LBN): with room for two fingerprinted entries (48 B), LPN 0 written
/// three times and LPN 1 once leave two entries (LPN 0's replaced twice),
/// both processed at idle (`pacing = "idle"`). A FIFO kept LPN 0's first two writes, dropped
/// the next two as overflow, and found both stale at idle.
#[test]
fn smartdedup_skipped_buffer_replaces_an_lpns_entry() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let p = handmade(
        &[(Op::Write, 0, vec![1]), (Op::Write, 0, vec![2]), (Op::Write, 0, vec![3]), (Op::Write, 1, vec![4])],
        1000,
    );
    let set = [("skipped_mb", (48.0 / 1_048_576.0).into()), ("pacing", "idle".into())];
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &set));
    assert_eq!(stat(&out, "engine_skipped_replaced"), 2.0);
    assert_eq!(stat(&out, "engine_skipped_overflow"), 0.0);
    assert_eq!(stat(&out, "engine_offline_pages"), 2.0);
    assert_eq!(stat(&out, "engine_offline_dropped"), 0.0);
    assert_eq!(stat(&out, "engine_skipped_left"), 0.0);
}

/// Skipped-buffer overflow: with room for one fingerprinted entry (24 B),
/// a page at LPN 100 takes it, and content A at LPN 0, 300 other contents
/// (A's fingerprint goes to flash: a 28-fingerprint store) and A again at
/// LPN 1 (an in-line miss) all overflow (302). Out-of-line dedup never
/// sees A: both copies stay (303 live). With the default 0.5 MB, LPN 0's
/// entry finds LPN 1's copy at idle and is remapped (302 live). Idle-only pacing (`pacing = "idle"`).
#[test]
fn smartdedup_skipped_buffer_overflow_loses_out_of_line_dedup() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let mut steps = vec![(Op::Write, 100, vec![1000]), (Op::Write, 0, vec![0])];
    for i in 1..=300u32 {
        steps.push((Op::Write, 100 + i, vec![i]));
    }
    steps.push((Op::Write, 1, vec![0]));
    let p = handmade(&steps, 100);
    let mut set = vec![
        ("memory_mb", 0.001.into()),
        ("prefix_bits", 4.into()),
        ("warm_start", false.into()),
        ("pacing", "idle".into()),
    ];
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &set));
    assert_eq!(out.metrics.counters.dedup_pages, 0);
    assert_eq!(stat(&out, "engine_skipped_overflow"), 0.0);
    assert_eq!(stat(&out, "engine_offline_dedup_pages"), 1.0);
    assert_eq!(out.live_pages, 302);
    set.push(("skipped_mb", (24.0 / 1_048_576.0).into()));
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &set));
    assert_eq!(stat(&out, "engine_skipped_overflow"), 302.0);
    assert_eq!(stat(&out, "engine_offline_pages"), 1.0);
    assert_eq!(stat(&out, "engine_offline_dedup_pages"), 0.0);
    assert_eq!(out.live_pages, 303);
}

/// Reference-count eviction (CAFTL's, §4.2) evicts the fingerprint with
/// the fewest references, LRU the least recently used one. A
/// 28-fingerprint store is filled with contents 0-27, content 0 is hit
/// three times (4 references), then 1-27 once each (2 references), then
/// new content 100 evicts one: refcount evicts content 1 (fewest
/// references, first inserted), LRU content 0 (least recently used). A
/// last write of content 0 or 1 hits or misses accordingly (30 hits
/// before it).
#[test]
fn smartdedup_refcount_eviction_evicts_the_fewest_references() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let trace = |last: u32| {
        let mut steps: Vec<_> = (0..28u32).map(|c| (Op::Write, c, vec![c])).collect();
        for k in 0..3 {
            steps.push((Op::Write, 100 + k, vec![0]));
        }
        for c in 1..28u32 {
            steps.push((Op::Write, 200 + c, vec![c]));
        }
        steps.push((Op::Write, 300, vec![100]));
        steps.push((Op::Write, 400, vec![last]));
        handmade(&steps, 100)
    };
    let hits = |ev: &str, last: u32| {
        let set = [
            ("memory_mb", 0.001.into()),
            ("prefix_bits", 4.into()),
            ("warm_start", false.into()),
            ("offline", false.into()),
            ("eviction", ev.into()),
        ];
        let out = run_with(&cfg, &trace(last), "dedup", smart(&cfg, &set));
        assert_eq!(stat(&out, "engine_capacity_fps"), 28.0);
        assert_eq!(stat(&out, "engine_evicted_fps"), 1.0 + f64::from(u8::from(hits_miss(ev, last))), "{ev} {last}");
        out.metrics.counters.dedup_pages
    };
    // Whether the last write misses (and its insertion evicts again).
    fn hits_miss(ev: &str, last: u32) -> bool {
        (ev == "refcount") == (last == 1)
    }
    assert_eq!(hits("refcount", 0), 31);
    assert_eq!(hits("refcount", 1), 30);
    assert_eq!(hits("lru", 0), 30);
    assert_eq!(hits("lru", 1), 31);
}

/// The extent count (§4.5's fragmentation measure): one extent per run
/// of a write's pages whose copies were written one after another. Copies
/// are written in the order 1 2 3 | 4; [1,2,4,9] is two extents (1 2, then
/// 4 and the new 9 written right after it); [3,5,6] is two (3, then the
/// new 5 6). 1 + 1 + 2 + 2 = 6 extents in 4 writes.
#[test]
fn smartdedup_extents_count_runs_of_contiguous_copies() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let p = handmade(
        &[
            (Op::Write, 0, vec![1, 2, 3]),
            (Op::Write, 10, vec![4]),
            (Op::Write, 20, vec![1, 2, 4, 9]),
            (Op::Write, 30, vec![3, 5, 6]),
        ],
        1000,
    );
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &[]));
    assert_eq!(out.metrics.counters.dedup_pages, 4);
    assert_eq!((stat(&out, "engine_extents"), stat(&out, "engine_writes")), (6.0, 4.0));
}

/// The sharer path of out-of-line dedup, and promotion (§3.2-3.3). A at
/// LPN 0 is processed in an idle window (nothing else holds A) and stays
/// in memory; 300 other contents push it to flash (a 28-fingerprint
/// store); A at LPN 1 misses in line (a new copy, in the skipped buffer)
/// and A at LPN 2 hits that copy (a sharer). With `pacing = "idle"`, at idle LPN 1's entry finds
/// LPN 0's copy on flash: LPNs 1 and 2 are both remapped to it, which
/// frees LPN 1's copy (1 page saved, 2 remaps), and the fingerprint is
/// promoted to memory, so A at LPN 3 hits in line. 304 pages written,
/// 301 contents: 3 saved = 2 in-line hits + 1 copy freed.
#[test]
fn smartdedup_out_of_line_moves_sharers_and_promotes() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let mut steps = vec![(0, Op::Write, 0, vec![0])];
    for i in 1..=300u32 {
        steps.push((100_000 + 100 * u64::from(i), Op::Write, 100 + i, vec![i]));
    }
    steps.push((131_000, Op::Write, 1, vec![0]));
    steps.push((132_000, Op::Write, 2, vec![0]));
    steps.push((5_132_000, Op::Write, 3, vec![0]));
    let p = handmade_at(&steps);
    let set = [
        ("memory_mb", 0.001.into()),
        ("prefix_bits", 4.into()),
        ("warm_start", false.into()),
        ("pacing", "idle".into()),
    ];
    let out = run_with(&cfg, &p, "dedup", smart(&cfg, &set));
    assert_eq!(out.metrics.counters.dedup_pages, 2, "LPN 2 and LPN 3 in line");
    assert_eq!(stat(&out, "engine_offline_remaps"), 2.0);
    assert_eq!(stat(&out, "engine_offline_dedup_pages"), 1.0);
    assert_eq!(stat(&out, "engine_promotions"), 1.0);
    assert_eq!(stat(&out, "sim_engine_remaps"), 2.0);
    assert_eq!(out.live_pages, 301);
}

/// The iDedup filter (§4.5): a run of two duplicate pages is deduplicated
/// at threshold 2 and written normally at threshold 3.
#[test]
fn smartdedup_sequence_filter_skips_short_runs() {
    use crate::units::{Nanos, Op};
    use crate::workload::{Provenance, Request, Workload};
    let cfg = Config::fad_table1();
    let reqs = vec![
        Request { arrival: Nanos(0), op: Op::Write, lpn: 0, pages: 4, content: 0, stream: 0 },
        Request { arrival: Nanos::from_ms(1), op: Op::Write, lpn: 10, pages: 4, content: 4, stream: 0 },
    ];
    let contents = [1, 2, 3, 4, 9, 2, 3, 8].map(ContentId).to_vec();
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    w.content_space = 10;
    let p = as_prepared(w);
    let dedup_at = |t: u32| {
        let out = run_with(&cfg, &p, "dedup", smart(&cfg, &[("threshold", (t as i64).into())]));
        (out.metrics.counters.dedup_pages, stat(&out, "engine_filtered_pages"))
    };
    assert_eq!(dedup_at(1), (2, 0.0));
    assert_eq!(dedup_at(2), (2, 0.0));
    assert_eq!(dedup_at(3), (0, 2.0));
}

/// The iDedup filter counts a run only while the stored copies are
/// physically contiguous (§4.5), the notion the extent count uses: copies
/// written one after another. Writes [1,2], [7], [3,4] store copies in
/// the order 1 2 7 3 4. [1,2,3,4] is a run of four duplicates whose copies
/// form two contiguous runs (1 2 | 3 4); [7,3,4] is one contiguous run of
/// three. Threshold 3: only [7,3,4] is deduplicated (3 pages; 4 filtered);
/// every write is one extent (5). Threshold 2: all 7 pages; [1,2,3,4] is
/// two extents (6). Counting the write's run of duplicates regardless of
/// the copies deduplicated all 7 at threshold 3.
#[test]
fn smartdedup_sequence_filter_needs_contiguous_copies() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let p = handmade(
        &[
            (Op::Write, 0, vec![1, 2]),
            (Op::Write, 10, vec![7]),
            (Op::Write, 20, vec![3, 4]),
            (Op::Write, 30, vec![1, 2, 3, 4]),
            (Op::Write, 40, vec![7, 3, 4]),
        ],
        1000,
    );
    let run = |t: i64| {
        let out = run_with(&cfg, &p, "dedup", smart(&cfg, &[("threshold", t.into())]));
        (out.metrics.counters.dedup_pages, stat(&out, "engine_filtered_pages"), stat(&out, "engine_extents"))
    };
    assert_eq!(run(3), (3, 4.0, 5.0));
    assert_eq!(run(2), (7, 0.0, 6.0));
    assert_eq!(run(1), (7, 0.0, 6.0));
    assert_eq!(run(4), (0, 7.0, 5.0));
}

/// §4's evaluation setting: 3 MB with a 14-bit prefix; §3.2's 40 MB with
/// an 18-bit prefix holds "1.3 million fingerprints"; in between and
/// below, leaves in proportion to the budget; `prefix_bits` overrides.
#[test]
fn smartdedup_default_capacity() {
    let cfg = Config::fad_table1();
    let p: SmartDedupParams = params(&cfg.engine_context(), "smartdedup", super::smartdedup::UNIT_KEYS).unwrap();
    assert_eq!((p.memory_mb, p.prefix_bits), (3.0, None));
    let e = build("smartdedup", &cfg.engine_context()).unwrap();
    let get = |e: &dyn Engine, k: &str| e.stats().iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!(get(&*e, "engine_capacity_fps"), 98_304.0);
    assert_eq!(get(&*e, "engine_prefix_bits"), 14.0);
    // (memory, bits, capacity = (memory - 2^bits x 12 B) / 30 B).
    for (mb, bits, cap) in [
        (40.0, 18.0, 1_293_243.0),
        (1.0, 12.0, 33_314.0),
        (2.0, 13.0, 66_628.0),
        (5.0, 15.0, 161_655.0),
        (10.0, 16.0, 323_310.0),
        (20.0, 17.0, 646_621.0),
    ] {
        let e = smart(&cfg, &[("memory_mb", mb.into())]);
        assert_eq!((get(&*e, "engine_prefix_bits"), get(&*e, "engine_capacity_fps")), (bits, cap), "{mb} MB");
    }
    let e = smart(&cfg, &[("memory_mb", 1.0.into()), ("prefix_bits", 14.into())]);
    assert_eq!((get(&*e, "engine_prefix_bits"), get(&*e, "engine_capacity_fps")), (14.0, 28_398.0));
}

/// Bad `engine.smartdedup.*` values are errors naming the key.
#[test]
fn smartdedup_rejects_bad_prefix_and_memory() {
    let cfg = Config::fad_table1();
    let err = |set: &[(&str, toml::Value)]| {
        let mut cfg = cfg.clone();
        let t: toml::Table = set.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        cfg.engine.insert("smartdedup".into(), toml::Value::Table(t));
        build("smartdedup", &cfg.engine_context()).err().expect("must fail").to_string()
    };
    assert!(err(&[("prefix_bits", 0.into())]).contains("prefix_bits = 0"));
    assert!(err(&[("prefix_bits", 25.into())]).contains("prefix_bits = 25"));
    assert!(err(&[("memory_mb", 0.0.into())]).contains("memory_mb = 0"));
    assert!(err(&[("memory_mb", 0.1.into()), ("prefix_bits", 14.into())]).contains("memory_mb = 0.1"));
    assert!(err(&[("prefix_bit", 14.into())]).contains("prefix_bit"));
}

/// §4.2's Dmdedup comparison (issue 27 item 7): the B-tree index pays
/// 35 B per fingerprint and no leaves, so at 1 MB it holds
/// floor(1,048,576 / 35) = 29,959 fingerprints against the prefix tree's
/// floor((1,048,576 - 2^12 x 12) / 30) = 33,314; it has no groups, so
/// G-LRU is refused.
#[test]
fn smartdedup_btree_index_capacity_and_no_groups() {
    let cfg = Config::fad_table1();
    let get = |e: &dyn Engine, k: &str| e.stats().iter().find(|(n, _)| *n == k).unwrap().1;
    let tree = smart(&cfg, &[("memory_mb", 1.0.into())]);
    let btree = smart(&cfg, &[("memory_mb", 1.0.into()), ("index", "btree".into()), ("eviction", "lru".into())]);
    assert_eq!(get(&*tree, "engine_capacity_fps"), 33_314.0);
    assert_eq!(get(&*btree, "engine_capacity_fps"), 29_959.0);
    let mut bad = cfg.clone();
    let t: toml::Table = [("index".to_string(), toml::Value::from("btree"))].into_iter().collect();
    bad.engine.insert("smartdedup".into(), toml::Value::Table(t));
    let err = build("smartdedup", &bad.engine_context()).err().expect("btree with g-lru must fail").to_string();
    assert!(err.contains("btree") && err.contains("eviction"), "{err}");
}

/// Eviction read-merge-writes are counted apart from out-of-line group
/// reads (issue 27 item 7), and the parts add up to the totals; G-LRU
/// moves whole groups per eviction, LRU one fingerprint.
#[test]
fn smartdedup_eviction_io_apart_from_offline_reads() {
    let cfg = Config::fad_table1();
    let p = prepared(
        "requests=8000,read=0,size=inv:8,footprint=256MiB,hot=0.4:64MiB,iat=exp:2000us",
        "zipf:a=0.2,dedup=0.5",
    );
    let small = [("memory_mb", 0.25.into()), ("prefix_bits", 10.into()), ("warm_start", false.into())];
    let glru = run_with(&cfg, &p, "dedup", smart(&cfg, &small));
    let mut lru_set = small.to_vec();
    lru_set.push(("eviction", "lru".into()));
    let lru = run_with(&cfg, &p, "dedup", smart(&cfg, &lru_set));
    // The parts separately, by hand: `smartdedup_group_lru_eviction_by_hand`
    // (eviction reads and programs, no out-of-line reads) and
    // `smartdedup_out_of_line_finds_a_copy_on_flash_by_hand` (both).
    for (name, o) in [("g-lru", &glru), ("lru", &lru)] {
        assert_eq!(
            stat(o, "engine_evict_meta_reads") + stat(o, "engine_offline_meta_reads"),
            stat(o, "engine_meta_reads"),
            "{name}"
        );
        assert_eq!(stat(o, "engine_evict_meta_programs"), stat(o, "engine_meta_programs"), "{name}");
    }
    assert_eq!(stat(&lru, "engine_evicted_fps"), stat(&lru, "engine_evictions"));
    assert!(stat(&glru, "engine_evicted_fps") > 2.0 * stat(&glru, "engine_evictions"));
    let evict_io = |o: &RunOutput| stat(o, "engine_evict_meta_reads") + stat(o, "engine_evict_meta_programs");
    assert!(evict_io(&glru) < evict_io(&lru) / 2.0, "G-LRU {} vs LRU {}", evict_io(&glru), evict_io(&lru));
}

/// The group-list statistics (§3.2: mean 9, max 63), hand-counted: k
/// unique single-page writes at distinct pages into an empty store with
/// 2 groups (prefix_bits = 1) and room for all. Each lookup searches the
/// list of the pages before it in its group, so if a pages fall in one
/// group and b = k - a in the other, the lengths sum to a(a-1)/2 +
/// b(b-1)/2 and the longest is max(a, b) - 1; at the end the lists hold a
/// and b (mean k/2).
#[test]
fn smartdedup_group_list_lengths_hand_counted() {
    let cfg = Config::fad_table1();
    let k = 300u64;
    let p = prepared(&format!("requests={k},read=0,size=1,seq=1,hot=0:1MiB,footprint=64MiB"), "unique");
    let o = run_with(
        &cfg,
        &p,
        "dedup",
        smart(&cfg, &[("memory_mb", 1.0.into()), ("prefix_bits", 1.into()), ("warm_start", false.into())]),
    );
    assert_eq!(stat(&o, "engine_list_lookups"), k as f64);
    let (sum, max) = (stat(&o, "engine_list_len_sum") as u64, stat(&o, "engine_list_len_max") as u64);
    let a = (0..=k)
        .find(|&a| a * a.saturating_sub(1) / 2 + (k - a) * (k - a).saturating_sub(1) / 2 == sum && a >= k - a)
        .expect("the lengths must sum to a(a-1)/2 + b(b-1)/2");
    assert_eq!(max, a - 1);
    assert_eq!(stat(&o, "engine_list_len_full"), k as f64 / 2.0);
    assert!(a > k / 3, "a 1-bit prefix of a uniform fingerprint splits {k} pages roughly in half: {a}");
}

// ----- Light-Dedup -----

use super::lightdedup::{HALF, NEW_TRUST, REGION_ENTRIES};

fn light(cfg: &Config, set: &[(&str, toml::Value)]) -> Box<dyn Engine> {
    let mut cfg = cfg.clone();
    let mut t = toml::Table::new();
    for (k, v) in set {
        t.insert(k.to_string(), v.clone());
    }
    cfg.engine.insert("light-dedup".into(), toml::Value::Table(t));
    build("light-dedup", &cfg.engine_context()).unwrap()
}

/// A workload from (op, first LPN, contents or page count) steps, one
/// request every `gap_us`.
fn handmade(steps: &[(crate::units::Op, u32, Vec<u32>)], gap_us: u64) -> Prepared {
    let timed: Vec<_> =
        steps.iter().enumerate().map(|(i, (op, lpn, c))| (gap_us * i as u64, *op, *lpn, c.clone())).collect();
    handmade_at(&timed)
}

/// A workload from (arrival µs, op, first LPN, contents or page count)
/// steps. Nothing is preconditioned.
fn handmade_at(steps: &[(u64, crate::units::Op, u32, Vec<u32>)]) -> Prepared {
    use crate::units::{Nanos, Op};
    use crate::workload::{Provenance, Request, Workload, NO_CONTENT};
    let mut reqs = Vec::new();
    let mut contents = Vec::new();
    let mut space = 0;
    for (at, op, lpn, c) in steps {
        let arrival = Nanos::from_us(*at);
        match op {
            Op::Write => {
                reqs.push(Request {
                    arrival,
                    op: Op::Write,
                    lpn: *lpn,
                    pages: c.len() as u32,
                    content: contents.len() as u32,
                    stream: 0,
                });
                for &x in c {
                    space = space.max(x + 1);
                    contents.push(ContentId(x));
                }
            }
            _ => reqs.push(Request { arrival, op: *op, lpn: *lpn, pages: c[0], content: NO_CONTENT, stream: 0 }),
        }
    }
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    w.content_space = space;
    as_prepared(w)
}

/// With collision probability 1 every page whose content has no stored
/// copy collides with another live entry: a failed verify read, then
/// written as a non-dedup page without an LMT entry (so its content's
/// next copy is not found either). With 0 nothing fails.
#[test]
fn light_dedup_collisions_fail_verification_and_are_written() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let p = handmade(
        &[(Op::Write, 0, vec![1, 2, 3, 4]), (Op::Write, 10, vec![5, 6, 7, 8]), (Op::Write, 20, vec![1, 2, 9, 10])],
        1000,
    );
    let out = run_with(&cfg, &p, "dedup", light(&cfg, &[("collision_probability", 1.0.into())]));
    // The first write finds no stored entry to collide with (its own new
    // entries are not stored yet): 4 entries. Every later page without a
    // stored copy (5-8, then 9, 10) collides: a failed verify read, written
    // without an entry. 1 and 2 are found and verified.
    assert_eq!(stat(&out, "engine_failed_verifies"), 6.0);
    assert_eq!(stat(&out, "engine_nodedup_pages"), 6.0);
    assert_eq!(stat(&out, "engine_new_entries"), 4.0);
    assert_eq!(out.metrics.counters.dedup_pages, 2);
    assert_eq!(out.metrics.counters.programs.host_unique, 10);
    assert_eq!(stat(&out, "sim_engine_data_reads"), 8.0, "6 failed verifies + 2 verifies of duplicates");
    assert_eq!(
        stat(&out, "sim_engine_gating_reads"),
        stat(&out, "sim_engine_data_reads") + stat(&out, "sim_engine_meta_reads")
    );
    // A non-dedup page has no entry: its content's next copy is not found.
    let p2 = handmade(&[(Op::Write, 0, vec![1, 2]), (Op::Write, 10, vec![3]), (Op::Write, 20, vec![3])], 1000);
    let out = run_with(&cfg, &p2, "dedup", light(&cfg, &[("collision_probability", 1.0.into())]));
    assert_eq!(stat(&out, "engine_failed_verifies"), 2.0);
    assert_eq!(out.metrics.counters.dedup_pages, 0);
    let out0 = run_with(&cfg, &p, "dedup", light(&cfg, &[]));
    assert_eq!(stat(&out0, "engine_failed_verifies"), 0.0);
    assert_eq!(out0.metrics.counters.dedup_pages, 2);
    assert_eq!(stat(&out0, "engine_new_entries"), 10.0);
    // A larger run with collisions keeps every FTL invariant (--check).
    let p = prepared("requests=3000,read=0.3,size=inv:8,footprint=32MiB,hot=0.4:8MiB", "zipf:a=0.2,dedup=0.5");
    let out = run_with(&cfg, &p, "dedup", light(&cfg, &[("collision_probability", 0.3.into())]));
    assert!(out.invariant_checks > 0);
    assert!(stat(&out, "engine_failed_verifies") > 100.0);
    assert_eq!(stat(&out, "engine_failed_verifies"), stat(&out, "engine_nodedup_pages"));
}

/// §4.2's deletion logic: an overwrite of one sharer of a block decrements
/// the entry's reference count (a reverse-map read and an entry write);
/// the last sharer's overwrite frees the block and deletes the entry
/// instead. Hand-computed: content 1 at LPN 0 and (a duplicate) LPN 1;
/// LPN 1 overwritten by 2 (a decrement, 1 stays live); LPN 0 overwritten
/// by 3 (1 is freed: a deletion, no decrement); a trim of LPN 5, which
/// shares 4 with LPN 4 (a decrement).
#[test]
fn light_dedup_charges_reference_count_decrements() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let p = handmade(
        &[
            (Op::Write, 0, vec![1, 1]),
            (Op::Write, 1, vec![2]),
            (Op::Write, 0, vec![3]),
            (Op::Write, 4, vec![4, 4]),
            (Op::Trim, 5, vec![1]),
            (Op::Write, 9, vec![5]),
        ],
        1000,
    );
    let out = run_with(&cfg, &p, "dedup", light(&cfg, &[]));
    assert_eq!(stat(&out, "engine_refcount_decrements"), 2.0);
    assert_eq!(stat(&out, "engine_deleted_entries"), 1.0);
    // The in-write repeats (1 at LPN 1, 4 at LPN 5) are the shared pages.
    assert_eq!(out.metrics.counters.programs.host_unique, 5);
    // Entries 2, 3, 4, 5 are live at the end, 40 B each (§6). Never five
    // at once: 1's deletion is applied at the next write's lookup, before
    // 4's entry is made.
    assert_eq!(stat(&out, "engine_index_bytes"), 4.0 * 40.0);
    assert_eq!(stat(&out, "engine_index_peak_bytes"), 4.0 * 40.0);
}

/// With no collisions Light-Dedup finds exactly CAFTL's duplicates
/// (verification only confirms them), with or without speculation.
#[test]
fn light_dedup_without_collisions_finds_what_caftl_finds() {
    let cfg = Config::fad_table1();
    let p = prepared("requests=5000,read=0.3,size=inv:8,footprint=64MiB,hot=0.4:16MiB", "zipf:a=0.2,dedup=0.5");
    let caftl = run_with(&cfg, &p, "dedup", Box::new(Caftl));
    for spec in [true, false] {
        let ld = run_with(&cfg, &p, "dedup", light(&cfg, &[("speculative", spec.into())]));
        assert!(caftl.metrics.counters.dedup_pages > 500);
        assert_eq!(ld.metrics.counters.dedup_pages, caftl.metrics.counters.dedup_pages, "speculative = {spec}");
        assert_eq!(ld.metrics.counters.programs, caftl.metrics.counters.programs, "speculative = {spec}");
        assert_eq!(stat(&ld, "engine_failed_verifies"), 0.0);
        // Every verify read is of a duplicate's candidate or a wasted
        // speculative read: no other page is read, and none twice.
        assert_eq!(
            stat(&ld, "engine_verify_reads"),
            stat(&ld, "engine_dup_pages") + stat(&ld, "engine_wasted_speculative_reads"),
            "speculative = {spec}"
        );
        assert_eq!(stat(&ld, "engine_verify_reads"), stat(&ld, "sim_engine_data_reads"));
    }
}

/// A file of `n` pages (contents 0..n) written in 8-page requests at
/// address 0, then the same contents again at address 10,000: a copy.
fn copied_file(n: u32) -> Vec<(crate::units::Op, u32, Vec<u32>)> {
    let mut steps = Vec::new();
    for base in [0u32, 10_000] {
        for k in (0..n).step_by(8) {
            steps.push((crate::units::Op::Write, base + k, (k..k + 8).collect::<Vec<_>>()));
        }
    }
    steps
}

/// Writing a file and then the same contents again in order (a copy):
/// the hints set while writing the file predict the copy, become trusted,
/// and the copy's pages skip the hash and read their candidates at
/// arrival, which lowers the write latency against `speculative = false`.
#[test]
fn light_dedup_sequential_copy_trusts_hints_and_speculates() {
    let cfg = Config::fad_table1();
    let n = 2000u32;
    let p = handmade(&copied_file(n), 2000);
    let spec = run_with(&cfg, &p, "dedup", light(&cfg, &[]));
    let nospec = run_with(&cfg, &p, "dedup", light(&cfg, &[("speculative", false.into())]));
    assert_eq!(spec.metrics.counters.dedup_pages, u64::from(n));
    assert_eq!(nospec.metrics.counters.dedup_pages, u64::from(n));
    // Counted by hand (§4.3.2's stream trust, 3 bits, followed at 7):
    // writing the file predicts nothing (each page's predecessor has no
    // hint yet, so the hint is set, not checked); the copy's first page
    // finds the file's last page without a hint either; pages 1..n-1 each
    // check their predecessor's hint and find it right: n - 1 predictions,
    // n - 1 hits. The stream trust after copy page k is min(k, 7), so
    // page k follows its hint from k = 8 on: n - 8 pages.
    let followed = stat(&spec, "engine_hint_followed");
    assert_eq!(followed, f64::from(n - 8));
    assert_eq!(stat(&spec, "engine_hint_predictions"), f64::from(n - 1));
    assert_eq!(stat(&spec, "engine_hint_hits"), f64::from(n - 1));
    assert_eq!(stat(&spec, "engine_speculative_reads"), followed);
    assert_eq!(stat(&spec, "engine_skipped_hash_pages"), followed);
    assert_eq!(stat(&nospec, "engine_speculative_reads"), 0.0);
    assert_eq!(stat(&nospec, "engine_skipped_hash_pages"), 0.0);
    // One run of n duplicate pages.
    assert_eq!(stat(&spec, "engine_dup_run_pages_over_100"), f64::from(n));
    assert_eq!(stat(&spec, "engine_dup_run_frac_over_10"), 1.0);
    let (a, b) = (spec.metrics.write_latency.mean(), nospec.metrics.write_latency.mean());
    assert!(a < b, "speculative {a} ns vs not {b} ns");
}

/// A file of two LMT regions (2 x 127 = 254 pages, contents 0..254)
/// written one page per request, then the same contents one page per
/// request at address 10,000 (a copy), with `change` (if any) replacing
/// the copy's page at that index by a content never seen before.
fn copied_by_page(change: Option<u32>) -> Prepared {
    let n = 2 * REGION_ENTRIES;
    let mut steps = Vec::new();
    for k in 0..n {
        steps.push((crate::units::Op::Write, k, vec![k]));
    }
    for k in 0..n {
        let c = if change == Some(k) { 1_000_000 } else { k };
        steps.push((crate::units::Op::Write, 10_000 + k, vec![c]));
    }
    handmade(&steps, 2000)
}

/// The metadata cache on a copy, counted by hand (§4.4's regions, the LRU
/// write-back cache of `region_cache` pages that stands for the DIMM's
/// buffers). Each file page k allocates slot k (a write of region k/127,
/// A0 or A1), sets slot k-1's hint (a write of region (k-1)/127) and, at
/// commit, writes copy k's reverse-map slot (page R0). Each copy page
/// reads its candidate's entry, increments its refcount and updates its
/// predecessor's hint: regions A0 and A1 only.
///
/// * `region_cache = 3`: A0, R0 and A1 all fit; nothing is ever evicted,
///   so nothing is programmed and nothing read (pages never programmed
///   are not read on a miss): 0 reads, 0 programs.
/// * `region_cache = 2`, file page 127: A1 (new) evicts A0 (program 1);
///   the hint of slot 126 misses A0 (read 1), evicting R0 (program 2);
///   the commit misses R0 (read 2), evicting A1 (program 3). Page 128:
///   A1 misses (read 3), evicting A0 (program 4); then A1 and R0 stay
///   until the copy. Copy page 0: slot 0's entry misses A0 (read 4),
///   evicting A1 (program 5); the hint of slot 253 misses A1 (read 5),
///   evicting R0 (program 6). From then on A0 and A1 are cached: 5 reads
///   (1 of R0), 6 programs (2 of R0).
#[test]
fn light_dedup_copy_metadata_cache_by_hand() {
    let cfg = Config::fad_table1();
    let p = copied_by_page(None);
    for (cache, reads, rmap_reads, programs, rmap_programs) in [(3i64, 0.0, 0.0, 0.0, 0.0), (2, 5.0, 1.0, 6.0, 2.0)] {
        let out = run_with(&cfg, &p, "dedup", light(&cfg, &[("region_cache", cache.into())]));
        assert_eq!(out.metrics.counters.dedup_pages, u64::from(2 * REGION_ENTRIES), "cache {cache}");
        assert_eq!(stat(&out, "engine_meta_region_reads"), reads, "cache {cache}");
        assert_eq!(stat(&out, "engine_meta_rmap_reads"), rmap_reads, "cache {cache}");
        assert_eq!(stat(&out, "engine_meta_region_programs"), programs, "cache {cache}");
        assert_eq!(stat(&out, "engine_meta_rmap_programs"), rmap_programs, "cache {cache}");
    }
}

/// The hints on a copy, counted by hand (§4.3.2: entry trust 4 on a new
/// hint, followed at `threshold` 4 when the stream trust is at its
/// maximum 7; +1 right, −2 wrong). An exact copy of n = 254 pages: pages
/// 1..n-1 each predict right (n-1 predictions and hits); the stream trust
/// reaches 7 after copy page 7, so pages 8..n-1 follow (n-8 = 246), all
/// right. With copy page m = 100 replaced by a new content: page m
/// follows its (wrong) hint, a wasted speculative read; the stream trust
/// drops to 5; page m+1 follows a new entry that has no hint (no
/// prediction); pages m+2 and m+3 predict right but are not followed
/// (trust 5, then 6); from m+4 on they follow again. Followed: (m - 7) +
/// (n - m - 4) = n - 11 = 243, of them right n - 12 = 242 (hit rate
/// 242/243); predictions n - 2 = 252, right n - 3 = 251.
#[test]
fn light_dedup_copy_hints_by_hand() {
    let cfg = Config::fad_table1();
    let n = f64::from(2 * REGION_ENTRIES);
    let exact = run_with(&cfg, &copied_by_page(None), "dedup", light(&cfg, &[]));
    let changed = run_with(&cfg, &copied_by_page(Some(100)), "dedup", light(&cfg, &[]));
    for (out, followed, right, predictions, hits, wasted) in
        [(&exact, n - 8.0, n - 8.0, n - 1.0, n - 1.0, 0.0), (&changed, n - 11.0, n - 12.0, n - 2.0, n - 3.0, 1.0)]
    {
        assert_eq!(stat(out, "engine_hint_followed"), followed);
        assert_eq!(stat(out, "engine_hint_hit_rate"), right / followed);
        assert_eq!(stat(out, "engine_hint_predictions"), predictions);
        assert_eq!(stat(out, "engine_hint_hits"), hits);
        assert_eq!(stat(out, "engine_wasted_speculative_reads"), wasted);
    }
    assert_eq!(changed.metrics.counters.dedup_pages as f64, n - 1.0);
}

/// §5.5's aging pattern: write a lot, delete half at random, write as much
/// new data again. The region-based LMT reuses half-free regions
/// sequentially; the entry-based free list scatters new entries over the
/// table: more metadata pages read and programmed per written block.
#[test]
fn light_dedup_region_layout_amplifies_less_when_aged() {
    use crate::units::Op;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let cfg = Config::fad_table1();
    let n = 32_768u32;
    let mut steps = Vec::new();
    for k in (0..n).step_by(32) {
        steps.push((Op::Write, k, (k..k + 32).collect::<Vec<_>>()));
    }
    let mut order: Vec<u32> = (0..n).collect();
    order.shuffle(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5));
    for &l in &order[..n as usize / 2] {
        steps.push((Op::Trim, l, vec![1]));
    }
    for k in (0..n / 2).step_by(32) {
        steps.push((Op::Write, n + k, (n + k..n + k + 32).collect::<Vec<_>>()));
    }
    let p = handmade(&steps, 500);
    let region = run_with(&cfg, &p, "dedup", light(&cfg, &[]));
    let entry = run_with(&cfg, &p, "dedup", light(&cfg, &[("layout", "entry".into())]));
    for out in [&region, &entry] {
        assert_eq!(stat(out, "engine_deleted_entries"), f64::from(n / 2));
        assert_eq!(stat(out, "engine_live_entries"), f64::from(n));
    }
    let amp = |o: &RunOutput, k: &str| stat(o, k);
    for k in ["engine_meta_read_amplification", "engine_meta_write_amplification"] {
        assert!(amp(&region, k) < amp(&entry, k), "{k}: region {} vs entry {}", amp(&region, k), amp(&entry, k));
    }
}

#[test]
fn light_dedup_trust_degree_arithmetic() {
    let mut h = Hint::NONE;
    // No hint: none predicted; the entry seen becomes the hint, trust 4.
    assert_eq!(h.update(Some(10), true), None);
    assert_eq!(h, Hint { next: 10, trust: NEW_TRUST });
    assert!(h.trusted(4) && !h.trusted(5));
    // +1 on a correct prediction, capped at 7 (3 bits).
    for want in [5, 6, 7, 7] {
        assert_eq!(h.update(Some(10), true), Some(true));
        assert_eq!(h.trust, want);
    }
    // −2 on a wrong one: 7 -> 5 -> 3 (no longer followed at 4) -> 1.
    for want in [5, 3, 1] {
        assert_eq!(h.update(Some(11), true), Some(false));
        assert_eq!((h.next, h.trust), (10, want));
    }
    assert!(!h.trusted(4));
    // Below 0: replaced by the entry seen, trust 4.
    assert_eq!(h.update(Some(11), true), Some(false));
    assert_eq!(h, Hint { next: 11, trust: NEW_TRUST });
    // A page without an entry ends the chain once the hint drops below 0.
    let mut h = Hint { next: 3, trust: 1 };
    assert_eq!(h.update(None, true), Some(false));
    assert_eq!(h, Hint::NONE);
    // Without trust degrees a wrong hint is replaced at once.
    let mut h = Hint { next: 3, trust: 7 };
    assert_eq!(h.update(Some(4), false), Some(false));
    assert_eq!(h, Hint { next: 4, trust: NEW_TRUST });
}

#[test]
fn light_dedup_region_allocation_rules() {
    let mut a = Allocator::new(Layout::Region);
    // Entries are allocated sequentially in the Cur Region, then a new one.
    let first: Vec<u32> = (0..REGION_ENTRIES + 1).map(|_| a.alloc()).collect();
    assert_eq!(first, (0..REGION_ENTRIES + 1).collect::<Vec<_>>());
    assert_eq!((a.regions(), a.cur()), (2, Some(1)));
    // Freeing entries of full region 0: allocatable only when exactly 64
    // (half) are free, then queued once.
    for s in 0..HALF - 1 {
        a.free(s);
        assert_eq!(a.queued(), 0, "{} free", s + 1);
    }
    a.free(HALF - 1);
    assert_eq!((a.queued(), a.used_in(0)), (1, REGION_ENTRIES - HALF));
    a.free(HALF); // more free: not queued twice
    assert_eq!(a.queued(), 1);
    // Region 1 (the Cur Region) is filled first; then the queue's region 0
    // is reused from its lowest free entry before any new region.
    for _ in 0..REGION_ENTRIES - 1 {
        a.alloc();
    }
    assert_eq!(a.used_in(1), REGION_ENTRIES);
    assert_eq!(a.alloc(), 0);
    assert_eq!((a.cur(), a.queued(), a.regions()), (Some(0), 0, 2));
    assert_eq!(a.alloc(), 1);
    // Deleting in the Cur Region does not queue it.
    for s in HALF + 1..HALF + 4 {
        a.free(s);
    }
    assert_eq!(a.queued(), 0);
    // Entry-based: a LIFO free list, then the end of the table.
    let mut e = Allocator::new(Layout::Entry);
    for _ in 0..10 {
        e.alloc();
    }
    e.free(3);
    e.free(7);
    assert_eq!((e.alloc(), e.alloc(), e.alloc()), (7, 3, 10));
    assert_eq!(e.page_of(130), 1);
}

/// An engine that answers for fewer pages than the write has is an error
/// naming it, not a panic.
#[test]
fn a_short_engine_answer_is_an_error() {
    struct Mute;
    impl Engine for Mute {
        fn name(&self) -> &'static str {
            "mute"
        }
        fn lookup(&mut self, _: &Ftl, _: &[WritePage], _: &mut EngineIo) {}
    }
    let cfg = Config::fad_table1();
    let p = prepared("requests=200,read=0,footprint=64MiB,hot=0.4:16MiB", "zipf:a=0.2,dedup=0.5");
    let pol = crate::policy::build("dedup", &cfg).unwrap();
    let sim = Simulation::with_engine(&cfg, &p.workload, pol, Box::new(Mute), RunOptions::default()).unwrap();
    let e = sim.run(&mut |_, _| {}).expect_err("must fail").to_string();
    assert!(e.contains("dedup engine 'mute' returned 0 verdicts"), "{e}");
}

/// The rhashtable lookup is charged after the hash, per fingerprinted page
/// (issue 27, item 10): its time adds to the engine's hash time, and a
/// write of unique pages takes that much longer per page on one engine.
#[test]
fn light_dedup_charges_the_index_lookup() {
    use crate::units::{Nanos, Op};
    let cfg = Config::fad_table1();
    let e0 = light(&cfg, &[("index_lookup_us", 0.0.into())]);
    let e1 = light(&cfg, &[("index_lookup", "2us".into())]);
    assert_eq!(e1.hash_time().unwrap(), e0.hash_time().unwrap() + Nanos::from_us(2));
    assert_eq!(light(&cfg, &[]).hash_time().unwrap(), Nanos(310 + 100), "defaults: 0.31 + 0.1 µs");
    let p = handmade(&[(Op::Write, 0, vec![1, 2, 3, 4])], 1000);
    let lat = |e| run_with(&cfg, &p, "dedup", e).metrics.write_latency.mean();
    let (a, b) = (lat(e0), lat(e1));
    assert!(b - a >= 2.0 - 1e-9, "one write of 4 unique pages: {a} -> {b} µs");
}

// ----- caftl-sampled -----

/// `caftl-sampled` (issue 27 item 13), counted by hand. Writes:
/// 1. [1,2,3,4]: sample 1 new, so 2-4 go unhashed and unindexed;
/// 2. [1,2,3,4] elsewhere: sample 1 found, so 2-4 are hashed, not found
///    (never indexed), and indexed now: 1 duplicate;
/// 3. [9,2,3,4]: sample 9 new, 2-4 unhashed: 0 duplicates (CAFTL: 3);
/// 4. [2,3,4,5]: sample 2 found, 3 and 4 found, 5 new: 3 duplicates;
/// 5. [4], one page: hashed, found: 1.
///
/// So 5 duplicates against CAFTL's 4 + 3 + 3 + 1 = 11; 6 pages unhashed
/// (writes 1 and 3); indexed 1, 2, 3, 4, 9, 5: 6 x 40 B.
#[test]
fn caftl_sampled_fingerprints_a_request_only_after_its_sample() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let steps = vec![
        (Op::Write, 0, vec![1, 2, 3, 4]),
        (Op::Write, 100, vec![1, 2, 3, 4]),
        (Op::Write, 200, vec![9, 2, 3, 4]),
        (Op::Write, 300, vec![2, 3, 4, 5]),
        (Op::Write, 400, vec![4]),
    ];
    let p = handmade(&steps, 2000);
    let out = run_with(&cfg, &p, "dedup", build("caftl-sampled", &cfg.engine_context()).unwrap());
    assert_eq!(out.metrics.counters.dedup_pages, 5);
    assert_eq!(stat(&out, "engine_unhashed_pages"), 6.0);
    assert_eq!(stat(&out, "engine_index_bytes"), 6.0 * 40.0);
    let caftl = run_with(&cfg, &p, "dedup", Box::new(Caftl));
    assert_eq!(caftl.metrics.counters.dedup_pages, 11);
    // Only hashed pages take the hash engines: 17 - 6 = 11 pages of 32 µs.
    assert_eq!(out.hash.pages, 11);
    assert_eq!(caftl.hash.pages, 17);
    assert_eq!(out.hash.busy.0, cfg.dedup.fingerprint.0 * 11);
}

/// Its name in `[engine.caftl-sampled]` takes no keys, as caftl's.
#[test]
fn caftl_sampled_has_no_parameters() {
    let mut cfg = Config::fad_table1();
    let mut t = toml::Table::new();
    t.insert("sampling".into(), toml::Value::Boolean(true));
    cfg.engine.insert("caftl-sampled".into(), toml::Value::Table(t));
    let e = build("caftl-sampled", &cfg.engine_context()).err().expect("a key is refused").to_string();
    assert!(e.contains("caftl-sampled has no parameters") && e.contains("`sampling`"), "{e}");
}

// ----- dram-verify -----

/// `dram-verify` (issue 27 item 13), counted by hand on a copy: n unique
/// pages, then the same contents at other addresses. The file's pages are
/// indexed (n fingerprints x 40 B); each copy page finds its fingerprint
/// and reads the candidate before deduplicating (n gating data reads), and
/// its copy is not indexed (the first copy stays the primary).
#[test]
fn dram_verify_reads_each_candidate_once() {
    let cfg = Config::fad_table1();
    let n = 2000u32;
    let p = handmade(&copied_file(n), 2000);
    let out = run_with(&cfg, &p, "dedup", build("dram-verify", &cfg.engine_context()).unwrap());
    assert_eq!(out.metrics.counters.dedup_pages, u64::from(n));
    assert_eq!(stat(&out, "engine_verify_reads"), f64::from(n));
    assert_eq!(stat(&out, "sim_engine_data_reads"), f64::from(n));
    assert_eq!(stat(&out, "engine_failed_verifies"), 0.0);
    assert_eq!(stat(&out, "engine_index_bytes"), f64::from(n) * 40.0);
    assert_eq!(stat(&out, "sim_engine_meta_reads") + stat(&out, "sim_engine_meta_programs"), 0.0);
    // The same duplicates as CAFTL's index.
    let caftl = run_with(&cfg, &p, "dedup", Box::new(Caftl));
    assert_eq!(caftl.metrics.counters.dedup_pages, out.metrics.counters.dedup_pages);
}

/// Two files written by one writer, then copied by two writers whose
/// one-page writes alternate (stream 1 copies file A, stream 2 file B):
/// §4.3.2 keeps the previous entry and the stream trust per CPU. Counted by
/// hand: per stream, as in the single copy above, n - 1 predictions, all
/// right, and n - 8 followed (the stream trust reaches 7 at page 8). With
/// one device-wide stream (`per_stream = false`) each page is checked
/// against the other file's previous page: 2n - 1 predictions (the first
/// copy page checks file B's last page, which has no hint yet), none right.
#[test]
fn light_dedup_keeps_prediction_state_per_stream() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let n = 200u32;
    let mut steps: Vec<(Op, u32, Vec<u32>)> = Vec::new();
    for k in (0..2 * n).step_by(8) {
        steps.push((Op::Write, k, (k..k + 8).collect()));
    }
    for k in 0..n {
        steps.push((Op::Write, 10_000 + k, vec![k]));
        steps.push((Op::Write, 20_000 + k, vec![n + k]));
    }
    let mut p = handmade(&steps, 2000);
    let originals = (2 * n / 8) as usize;
    for (i, r) in p.workload.requests.iter_mut().enumerate().skip(originals) {
        r.stream = 1 + ((i - originals) % 2) as u16;
    }
    let per = run_with(&cfg, &p, "dedup", light(&cfg, &[]));
    let one = run_with(&cfg, &p, "dedup", light(&cfg, &[("per_stream", false.into())]));
    for out in [&per, &one] {
        assert_eq!(out.metrics.counters.dedup_pages, u64::from(2 * n));
    }
    assert_eq!(stat(&per, "engine_hint_predictions"), f64::from(2 * (n - 1)));
    assert_eq!(stat(&per, "engine_hint_hits"), f64::from(2 * (n - 1)));
    assert_eq!(stat(&per, "engine_hint_followed"), f64::from(2 * (n - 8)));
    assert_eq!(stat(&per, "engine_wasted_speculative_reads"), 0.0);
    assert_eq!(stat(&per, "engine_streams"), 3.0);
    assert_eq!(stat(&one, "engine_hint_predictions"), f64::from(2 * n - 1));
    assert_eq!(stat(&one, "engine_hint_hits"), 0.0);
    assert_eq!(stat(&one, "engine_hint_followed"), 0.0);
    assert_eq!(stat(&one, "engine_streams"), 1.0);
}

/// §4.3.2's variants on the copy above, one page per write: SP reads a
/// followed hint's block at arrival and skips the hash; PC reads it at
/// arrival but hashes every page; PN also reads the next write's block
/// behind each write, so most writes find their candidate read already
/// (every read-ahead but the last write's is used) and are faster than
/// SP's; IBP times as no prefetch on flash (a page read is whole).
#[test]
fn light_dedup_prefetch_variants() {
    let cfg = Config::fad_table1();
    let n = 400u32;
    let mut steps = Vec::new();
    for base in [0u32, 10_000] {
        for k in 0..n {
            steps.push((crate::units::Op::Write, base + k, vec![k]));
        }
    }
    let p = handmade(&steps, 2000);
    let run = |v: &str| run_with(&cfg, &p, "dedup", light(&cfg, &[("prefetch", v.into())]));
    let (sp, pc, pn, ibp, none) = (run("sp"), run("pc"), run("pn"), run("ibp"), run("none"));
    for out in [&sp, &pc, &pn, &ibp, &none] {
        assert_eq!(out.metrics.counters.dedup_pages, u64::from(n));
        assert_eq!(stat(out, "engine_hint_followed"), f64::from(n - 8));
    }
    assert_eq!(stat(&sp, "engine_speculative_reads"), f64::from(n - 8));
    assert_eq!(stat(&sp, "engine_skipped_hash_pages"), f64::from(n - 8));
    assert_eq!(stat(&pc, "engine_speculative_reads"), f64::from(n - 8));
    assert_eq!(stat(&pc, "engine_skipped_hash_pages"), 0.0);
    let (ahead, used) = (stat(&pn, "engine_read_ahead"), stat(&pn, "engine_read_ahead_used"));
    assert_eq!(used + 1.0, ahead);
    assert!(used > f64::from(n / 2), "{used} of {ahead} read-aheads used");
    assert_eq!(stat(&pn, "engine_skipped_hash_pages"), f64::from(n - 8));
    for out in [&ibp, &none] {
        assert_eq!(stat(out, "engine_speculative_reads"), 0.0);
        assert_eq!(stat(out, "engine_skipped_hash_pages"), 0.0);
    }
    assert_eq!(ibp.metrics.write_latency.mean(), none.metrics.write_latency.mean());
    let mean = |o: &RunOutput| o.metrics.write_latency.mean();
    assert!(mean(&pn) < mean(&sp), "pn {} vs sp {}", mean(&pn), mean(&sp));
    assert!(mean(&sp) < mean(&none), "sp {} vs none {}", mean(&sp), mean(&none));
}

/// §3.1/§3.4's symbiotic out-of-line dedup against idle-only pacing: one
/// write per millisecond (never 10 ms idle, so idle-only pacing never runs
/// while they arrive): 50 unique pages, content A at LPN 0, 3,000 unique
/// pages (A's fingerprint goes to flash), A again at LPN 5000, then 5 s
/// idle. The skipped buffer holds 43 entries (0.001 MiB at 24 B).
/// Symbiotic: each gap processes the pages skipped so far, the buffer
/// never fills, and LPN 5000's copy is freed onto LPN 0's (found in its
/// group on flash). Idle-only: the buffer fills with the first 43 pages and
/// overflows while the host writes, both A entries are dropped, both
/// copies stay.
#[test]
fn smartdedup_symbiotic_out_of_line_runs_between_host_writes() {
    use crate::units::Op;
    let cfg = Config::fad_table1();
    let mut steps = Vec::new();
    for i in 1..=3050u32 {
        steps.push((1000 * u64::from(i), Op::Write, i, vec![i]));
        if i == 50 {
            steps.push((50_500, Op::Write, 0, vec![0]));
        }
    }
    steps.push((3_051_000, Op::Write, 5000, vec![0]));
    steps.push((8_051_000, Op::Read, 5000, vec![1]));
    let p = handmade_at(&steps);
    let set = |pacing: &str| {
        let v: Vec<(&str, toml::Value)> = vec![
            ("memory_mb", 0.02.into()),
            ("prefix_bits", 4.into()),
            ("warm_start", false.into()),
            ("skipped_mb", 0.001.into()),
            ("pacing", pacing.into()),
        ];
        smart(&cfg, &v)
    };
    let sym = run_with(&cfg, &p, "dedup", set("symbiotic"));
    let idle = run_with(&cfg, &p, "dedup", set("idle"));
    for out in [&sym, &idle] {
        assert_eq!(out.metrics.counters.dedup_pages, 0, "in-line misses: the fingerprint went to flash");
    }
    assert_eq!(stat(&sym, "engine_skipped_overflow"), 0.0);
    assert_eq!(stat(&sym, "engine_offline_dedup_pages"), 1.0);
    assert_eq!(sym.live_pages, 3051);
    assert_eq!(stat(&idle, "engine_skipped_overflow"), 3052.0 - 43.0);
    assert_eq!(stat(&idle, "engine_offline_dedup_pages"), 0.0);
    assert_eq!(idle.live_pages, 3052);
    // The default is the paper's scheme.
    let default = run_with(
        &cfg,
        &p,
        "dedup",
        smart(
            &cfg,
            &[
                ("memory_mb", 0.02.into()),
                ("prefix_bits", 4.into()),
                ("warm_start", false.into()),
                ("skipped_mb", 0.001.into()),
            ],
        ),
    );
    assert_eq!(stat(&default, "engine_offline_dedup_pages"), 1.0);
}
