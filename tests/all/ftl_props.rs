//! Property tests: random operation sequences against a reference model.
//!
//! The reference model is a map LPN -> content last written. Every policy
//! replays random writes, whole-file copies, reads and trims on a tiny
//! geometry with the simulator's `--check` mode on: every read must return
//! the content last written to its LPN, and the full FTL invariant check
//! (reference counts = sharers, valid counts, no page programmed twice, GC
//! loses nothing, index consistent) runs after every request. Afterwards
//! the final mapping is compared with the reference model page by page.
//!
//! The workloads are built so that GC matters under deduplication: each
//! case writes about 2,400 pages (nearly 5 times the device's 512 physical
//! pages) over 256 logical pages, with contents drawn from a small shared pool, fresh
//! contents and copies of earlier files at other addresses, so deduplicated
//! pages are shared by many LPNs and GC has to move them. The test counts,
//! per policy, the cases in which GC ran and in which it moved a shared
//! page, and asserts those fractions: a property that never reaches GC
//! would prove little about it.

use crate::common;

use dedupsim::config::{Allocation, Config};
use dedupsim::ftl::Ftl;
use dedupsim::policy;
use dedupsim::sim::{RunOptions, RunOutput, Simulation};
use dedupsim::units::{ContentId, Lpn, Nanos, Op};
use dedupsim::workload::{Hint, Provenance, Request, Workload, NO_CONTENT};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// The `tiny` preset (16 blocks x 8 pages per plane, 25% OP) on 2 x 2
/// chips: 512 physical, 384 logical pages. HAR's epoch is shortened from
/// 65,536 to 64 pages (and its rewrite limit raised) so that it inherits
/// sparse groups and rewrites within a test.
fn tiny_config() -> Config {
    Config::load(
        Some("tiny"),
        &[
            "geometry.chips_per_channel=2".into(),
            "policy.har.epoch_pages=64".into(),
            "policy.har.rewrite_limit=0.2".into(),
        ],
    )
    .expect("tiny preset")
}

/// Logical pages the random workloads address (of 384): the rest is
/// headroom for rewritten copies and uneven placement.
const SPAN: u32 = 256;
/// Contents shared by the whole workload.
const POOL: u32 = 32;

/// Where a written page's content comes from.
#[derive(Clone, Debug)]
enum Src {
    /// One of the `POOL` shared contents.
    Pool(u32),
    /// A content never written before.
    Fresh,
}

#[derive(Clone, Debug)]
enum Cmd {
    /// A file write.
    Write {
        lpn: u32,
        contents: Vec<Src>,
    },
    /// A whole-file copy: writes, at `to`, what the `back`-th latest write
    /// request's pages (modulo the number of writes so far) hold now; pages
    /// without known content get fresh content.
    Copy {
        back: u32,
        to: u32,
    },
    Read {
        lpn: u32,
        pages: u32,
    },
    Trim {
        lpn: u32,
        pages: u32,
    },
}

fn src() -> impl Strategy<Value = Src> {
    prop_oneof![2 => (0..POOL).prop_map(Src::Pool), 3 => Just(Src::Fresh)]
}

fn cmd(span: u32) -> impl Strategy<Value = Cmd> {
    prop_oneof![
        6 => (0..span, prop::collection::vec(src(), 1..17)).prop_map(move |(l, c)| {
            let n = (c.len() as u32).min(span - l);
            Cmd::Write { lpn: l, contents: c[..n as usize].to_vec() }
        }),
        2 => (0u32..64, 0..span).prop_map(|(back, to)| Cmd::Copy { back, to }),
        2 => (0..span, 1u32..17).prop_map(move |(l, n)| Cmd::Read { lpn: l, pages: n.min(span - l) }),
        1 => (0..span, 1u32..5).prop_map(move |(l, n)| Cmd::Trim { lpn: l, pages: n.min(span - l) }),
    ]
}

/// Builds the workload of `cmds` (resolving pool, fresh and copied
/// contents), preconditioned by [`Workload::add_precondition`] with
/// contents distinct from all others, and the reference model.
fn workload(cmds: &[Cmd], span: u32) -> (Workload, HashMap<u32, u32>) {
    workload_spaced(cmds, span, Nanos::from_us(50))
}

/// [`workload`] with the commands `spacing` apart.
fn workload_spaced(cmds: &[Cmd], span: u32, spacing: Nanos) -> (Workload, HashMap<u32, u32>) {
    let mut reqs = Vec::new();
    let mut contents = Vec::new();
    // Contents known at generation time (preconditioned pages are not).
    let mut now: HashMap<u32, u32> = HashMap::new();
    let mut files: Vec<(u32, u32)> = Vec::new();
    let mut hints = Vec::new();
    let mut fresh = POOL;
    let mut next_fresh = || {
        fresh += 1;
        fresh - 1
    };
    for (i, c) in cmds.iter().enumerate() {
        let t = Nanos(i as u64 * spacing.0);
        let (lpn, new): (u32, Vec<u32>) = match c {
            Cmd::Write { lpn, contents: cs } => {
                let new = cs
                    .iter()
                    .map(|s| match s {
                        Src::Pool(k) => *k,
                        Src::Fresh => next_fresh(),
                    })
                    .collect();
                (*lpn, new)
            }
            Cmd::Copy { back, to } => {
                if files.is_empty() {
                    continue;
                }
                let (from, pages) = files[files.len() - 1 - *back as usize % files.len()];
                let pages = pages.min(span - to);
                let new = (from..from + pages).map(|l| now.get(&l).copied().unwrap_or_else(&mut next_fresh)).collect();
                (*to, new)
            }
            Cmd::Read { lpn, pages } => {
                reqs.push(Request {
                    arrival: t,
                    op: Op::Read,
                    lpn: *lpn,
                    pages: *pages,
                    content: NO_CONTENT,
                    stream: 0,
                });
                continue;
            }
            Cmd::Trim { lpn, pages } => {
                reqs.push(Request {
                    arrival: t,
                    op: Op::Trim,
                    lpn: *lpn,
                    pages: *pages,
                    content: NO_CONTENT,
                    stream: 0,
                });
                for l in *lpn..lpn + pages {
                    now.remove(&l);
                }
                continue;
            }
        };
        let pages = new.len() as u32;
        // Half the workloads carry explicit die-allocation hints (the
        // `die-hint` policies then follow them instead of inferring).
        if cmds.len() % 2 == 0 {
            match lpn % 3 {
                0 => hints.push((reqs.len() as u32, Hint::Overwrite)),
                1 => hints.push((reqs.len() as u32, Hint::Append { after: (lpn * 7) % span })),
                _ => {}
            }
        }
        reqs.push(Request { arrival: t, op: Op::Write, lpn, pages, content: contents.len() as u32, stream: 0 });
        for (k, &x) in new.iter().enumerate() {
            contents.push(ContentId(x));
            now.insert(lpn + k as u32, x);
        }
        files.push((lpn, pages));
    }
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    w.hints = hints;
    let base = next_fresh();
    common::precondition_with_distinct_contents(&mut w, base);
    let model = reference_model(&w);
    (w, model)
}

/// What every LPN holds after `w`: its requests applied in order
/// (preconditioning first), independently of the simulator.
fn reference_model(w: &Workload) -> HashMap<u32, u32> {
    let mut model = HashMap::new();
    for r in &w.requests {
        match r.op {
            Op::Write => {
                for (k, c) in w.content_of(r).iter().enumerate() {
                    model.insert(r.lpn + k as u32, c.0);
                }
            }
            Op::Trim => {
                for l in r.lpn..r.lpn + r.pages {
                    model.remove(&l);
                }
            }
            Op::Read => {}
        }
    }
    model
}

/// Runs `name` over `w` with `--check` (full check after every request)
/// and compares the final mapping with `model`.
fn run_checked(cfg: &Config, name: &str, w: &Workload, model: &HashMap<u32, u32>) -> Result<(RunOutput, Ftl), String> {
    let p = policy::build(name, cfg).map_err(|e| format!("{name}: {e}"))?;
    let opts = RunOptions { check: true, check_every: 1, resources: false };
    let sim = Simulation::new(cfg, w, p, opts).map_err(|e| format!("{name}: {e}"))?;
    let (out, ftl) = sim.run_keep(&mut |_, _| {}).map_err(|e| format!("{name}: {e}"))?;
    // One full check after every replayed request, one at the end.
    if out.invariant_checks != (w.requests.len() - w.precondition as usize) as u64 + 1 {
        return Err(format!("{name}: only {} invariant checks", out.invariant_checks));
    }
    check_final(&ftl, model).map_err(|e| format!("{name}: {e}"))?;
    Ok((out, ftl))
}

fn check_final(ftl: &Ftl, model: &HashMap<u32, u32>) -> Result<(), String> {
    for l in 0..ftl.logical_pages() {
        let got = ftl.content_at(Lpn(l)).map(|c| c.0);
        if got != model.get(&l).copied() {
            return Err(format!("LPN {l}: FTL has {got:?}, model {:?}", model.get(&l)));
        }
    }
    Ok(())
}

/// The policies that rewrite duplicates (private copies).
const REWRITING: [&str; 4] = ["har", "fcrc", "fad-rwpo-rewrite", "fad"];

/// Per-policy counts over the property's cases.
#[derive(Clone, Copy, Debug, Default)]
struct GcCases {
    cases: u64,
    /// Cases in which GC ran.
    gc: u64,
    /// Cases in which GC moved at least one page.
    moved: u64,
    /// Cases in which GC moved at least one shared page.
    shared: u64,
    /// Cases in which the policy rewrote a duplicate (its `rewrites` stat).
    rewrote: u64,
    /// Pages moved and shared pages moved, over all cases.
    moved_pages: u64,
    shared_pages: u64,
}

#[test]
fn every_policy_preserves_contents_across_gc() {
    let cfg = tiny_config();
    let names = policy::names();
    let stats = RefCell::new(vec![GcCases::default(); names.len()]);
    let config = ProptestConfig { cases: 48, source_file: Some(file!()), ..ProptestConfig::default() };
    let mut runner = TestRunner::new(config);
    let strategy = prop::collection::vec(cmd(SPAN), 300..500);
    let written = Cell::new(0u64);
    let result = runner.run(&strategy, |cmds| {
        let (w, model) = workload(&cmds, SPAN);
        let replayed = &w.requests[w.precondition as usize..];
        let pages: u64 = replayed.iter().filter(|r| r.op == Op::Write).map(|r| r.pages as u64).sum();
        let mut case = Vec::with_capacity(names.len());
        for name in &names {
            let (out, ftl) = run_checked(&cfg, name, &w, &model).map_err(TestCaseError::fail)?;
            let c = &out.metrics.counters;
            let rewrites = out.policy_stats.iter().find(|(k, _)| *k == "rewrites").map_or(0.0, |s| s.1);
            case.push((c.gc_invocations, c.programs.gc, ftl.gc_moved_shared(), rewrites > 0.0));
        }
        // Only passing cases are counted (a failing case fails the test).
        written.set(written.get() + pages);
        for (s, &(gc, moved, shared, rewrote)) in stats.borrow_mut().iter_mut().zip(&case) {
            s.cases += 1;
            s.gc += (gc > 0) as u64;
            s.moved += (moved > 0) as u64;
            s.shared += (shared > 0) as u64;
            s.rewrote += rewrote as u64;
            s.moved_pages += moved;
            s.shared_pages += shared;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let stats = stats.into_inner();
    println!("host writes: {} pages per case on average", written.get() / stats[0].cases.max(1));
    for (name, s) in names.iter().zip(&stats) {
        println!(
            "{name:>17}: GC ran in {}/{} cases, moved pages in {}, moved shared pages in {} ({} of {} moved pages \
             shared); rewrites in {}",
            s.gc, s.cases, s.moved, s.shared, s.shared_pages, s.moved_pages, s.rewrote
        );
    }
    // GC runs and moves pages in at least 3/4 of the cases under every
    // policy, moves shared pages in at least half of them under every
    // deduplicating policy, and the rewriting policies rewrite in at least
    // half of them (measured: all cases, for every policy).
    for (name, s) in names.iter().zip(&stats) {
        assert!(s.cases > 0);
        assert!(4 * s.gc >= 3 * s.cases, "{name}: GC ran in only {} of {} cases", s.gc, s.cases);
        assert!(4 * s.moved >= 3 * s.cases, "{name}: GC moved pages in only {} of {} cases", s.moved, s.cases);
        if policy::build(name, &cfg).unwrap().capabilities().deduplicates {
            assert!(2 * s.shared >= s.cases, "{name}: GC moved shared pages in only {} of {} cases", s.shared, s.cases);
        } else {
            assert_eq!(s.shared_pages, 0, "{name} shares no page");
        }
        if REWRITING.contains(name) {
            assert!(2 * s.rewrote >= s.cases, "{name}: rewrote in only {} of {} cases", s.rewrote, s.cases);
        }
    }
}

/// `allocation = "dynamic"` (SSDsim's serve-time allocation) under every
/// placement-free policy: random workloads arriving 10 us apart, so that
/// writes wait to be placed while later requests arrive, and duplicates
/// reference copies still waiting (the FTL's reserved entries, mapped when
/// placed). Every read returns the content last mapped (the old one while
/// the new copy waits), the full check (waiting maps counted as
/// references) passes after every request, and the final mapping equals
/// the model. In at least half the cases a duplicate referenced a waiting
/// copy under each deduplicating policy (measured: all of them).
#[test]
fn dynamic_allocation_preserves_contents_for_every_placement_free_policy() {
    let mut cfg = tiny_config();
    cfg.allocation = Allocation::Dynamic;
    let names = ["native", "dedup", "har", "fcrc"];
    let waited = RefCell::new([0u64; 4]);
    let cases = Cell::new(0u64);
    let config = ProptestConfig { cases: 24, source_file: Some(file!()), ..ProptestConfig::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&prop::collection::vec(cmd(SPAN), 300..500), |cmds| {
        let (w, model) = workload_spaced(&cmds, SPAN, Nanos::from_us(10));
        let mut case = [0u64; 4];
        for (k, name) in names.iter().enumerate() {
            let (out, _) = run_checked(&cfg, name, &w, &model).map_err(TestCaseError::fail)?;
            let stat = out.policy_stats.iter().find(|s| s.0 == "dynamic_waiting_references");
            case[k] = stat.map_or(0.0, |s| s.1) as u64;
        }
        cases.set(cases.get() + 1);
        for (n, c) in waited.borrow_mut().iter_mut().zip(case) {
            *n += (c > 0) as u64;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let waited = waited.into_inner();
    println!("cases with references to waiting copies of {}: {names:?} {waited:?}", cases.get());
    assert_eq!(waited[0], 0, "native references nothing");
    for (name, &n) in names.iter().zip(&waited).skip(1) {
        assert!(2 * n >= cases.get(), "{name}: waiting copies referenced in only {n} of {} cases", cases.get());
    }
}

/// GC with live cold data to move, without duplicate content (every
/// policy places pages like `native` here).
#[test]
fn the_tiny_geometry_exercises_gc() {
    let cfg = tiny_config();
    // Hot pages (0..40) overwritten constantly, interleaved with cold pages
    // (40..200) written once: victims hold live cold data that must move.
    let cmds: Vec<Cmd> = (0..600u32)
        .map(|i| {
            let lpn = if i % 4 == 0 && i / 4 < 80 { 40 + 2 * (i / 4) } else { (i * 7) % 40 };
            Cmd::Write { lpn, contents: vec![Src::Fresh, Src::Fresh] }
        })
        .collect();
    let (w, model) = workload(&cmds, 384);
    for name in policy::names() {
        let (out, _) = run_checked(&cfg, name, &w, &model).unwrap();
        assert!(
            out.metrics.counters.gc_invocations > 10,
            "{name}: GC ran {} times",
            out.metrics.counters.gc_invocations
        );
        assert!(out.metrics.counters.programs.gc > 0, "{name}: GC moved no page");
    }
}

/// Soft GC (FAD's early-GC hint) on a plane far from full: its victim's 7
/// valid pages fill the active block, which takes a free block, so the
/// erase gains none; the next victim is fully valid. Soft GC must stop
/// there (it used to report "device full" with 55 live pages in 128). The
/// shared page it moves is counted.
#[test]
fn soft_gc_stops_at_a_fully_valid_victim() {
    let cfg = Config::load(Some("tiny"), &[]).expect("tiny preset");
    let mut ftl = Ftl::new(&cfg.ftl_params());
    assert_eq!(ftl.geometry().unit_planes(0), &[0]);
    let write = |ftl: &mut Ftl, lpn: u32, content: u32| {
        let (e, _, gc) = ftl.program(0, ContentId(content), true).unwrap();
        assert_eq!(gc, None);
        ftl.map_pinned(Lpn(lpn), e);
    };
    // Blocks 0..5 full, block 6 (active) holds 7 pages, 9 free blocks.
    for l in 0..55 {
        write(&mut ftl, l, l);
    }
    // LPN 100 shares LPN 1's page (in block 0).
    let e = ftl.find_duplicate(ContentId(1)).unwrap();
    ftl.pin(e);
    ftl.map_pinned(Lpn(100), e);
    // Block 6 fills; block 0 holds the plane's only invalid page.
    write(&mut ftl, 0, 1000);
    assert_eq!(ftl.free_blocks(0), 9);
    let gc = ftl.soft_collect(0, 8).unwrap().expect("9 free blocks < 2 + 8: soft GC runs");
    assert_eq!((gc.moved, gc.shared, gc.erased), (7, 1, 1));
    assert_eq!(ftl.free_blocks(0), 9);
    assert_eq!(ftl.gc_moved_shared(), 1);
    ftl.check_invariants().unwrap();
    let mut model: HashMap<u32, u32> = (1..55).map(|l| (l, l)).collect();
    model.insert(0, 1000);
    model.insert(100, 1);
    check_final(&ftl, &model).unwrap();
}

/// A fixed workload on the `tiny` preset (2 planes of 16 x 8 pages, 192
/// logical pages) in which GC must move shared pages: 18 files of 4 pages
/// (2 contents from a pool of 8, 2 fresh), each copied at once to another
/// address, spread over 400 hot 2-page overwrites of fresh contents, so
/// that nearly every block holds a shared page. Under `dedup`, `fad` and
/// every other deduplicating policy GC moves shared pages, every check
/// passes, and every written LPN reads back its content (the final read is
/// checked by `--check`, then the final mapping page by page).
#[test]
fn gc_moves_shared_pages_on_the_tiny_preset() {
    let cfg = Config::load(Some("tiny"), &[]).expect("tiny preset");
    let (hot, files) = (32, 18);
    let mut cmds = Vec::new();
    for i in 0..400u32 {
        if i % 12 == 0 && i / 12 < files {
            let (f, lpn) = (i / 12, hot + 8 * (i / 12));
            let contents = vec![Src::Pool(f % 8), Src::Fresh, Src::Pool((f + 3) % 8), Src::Fresh];
            cmds.push(Cmd::Write { lpn, contents });
            cmds.push(Cmd::Copy { back: 0, to: lpn + 4 });
        }
        cmds.push(Cmd::Write { lpn: (i * 5) % (hot - 1), contents: vec![Src::Fresh, Src::Fresh] });
    }
    cmds.push(Cmd::Read { lpn: 0, pages: hot + 8 * files });
    let (w, model) = workload(&cmds, cfg.logical_pages() as u32);
    assert_eq!(w.precondition, 0, "every page read was written");
    assert_eq!(model.len() as u32, hot + 8 * files);
    for name in policy::names() {
        let (out, ftl) = run_checked(&cfg, name, &w, &model).unwrap();
        let c = &out.metrics.counters;
        println!(
            "{name:>17}: {} GC runs moved {} pages, {} shared",
            c.gc_invocations,
            c.programs.gc,
            ftl.gc_moved_shared()
        );
        assert!(c.gc_invocations > 10, "{name}: GC ran {} times", c.gc_invocations);
        assert!(c.programs.gc > 0, "{name}: GC moved no page");
        // Measured: 68 to 151 shared pages moved under every deduplicating policy.
        if policy::build(name, &cfg).unwrap().capabilities().deduplicates {
            assert!(ftl.gc_moved_shared() > 0, "{name}: GC moved no shared page");
        } else {
            assert_eq!(ftl.gc_moved_shared(), 0, "{name} shares no page");
        }
    }
}

/// Every dedup engine (`--engine`) under random operation sequences: the
/// engines keep indexes of their own (SmartDedup's bounded two-level
/// store with out-of-line dedup at idle time, Light-Dedup's hints and
/// on-flash LMT, verify reads), which the FTL's check does not see, so a
/// stale engine entry (one naming a copy GC moved or a trim freed, an
/// entry id reused for other content) shows only as a wrong read or a
/// wrong final mapping. Each case runs every engine under `dedup`, `fad`
/// and `reodedup-csr` (idle-time relocations), with the full check after
/// every request and the final mapping compared with the model.
/// SmartDedup runs with a store of a few fingerprints and a short idle
/// threshold, so that it evicts to flash and dedups out of line within a
/// case; the requests are 300 us apart in half the cases (idle windows
/// open) and 20 us in the others (writes wait for their hashes and, under
/// dynamic allocation, to be placed).
#[test]
fn every_engine_preserves_contents_across_gc() {
    let engines = dedupsim::engine::names();
    let configs: Vec<(String, Config)> = engines
        .iter()
        .flat_map(|&e| {
            ["dynamic", "least-loaded"].into_iter().map(move |alloc| {
                let cfg = Config::load(
                    Some("tiny"),
                    &[
                        "geometry.chips_per_channel=2".into(),
                        format!("dedup.engine=\"{e}\""),
                        format!("allocation=\"{alloc}\""),
                        "engine.smartdedup.memory=\"300B\"".into(),
                        "engine.smartdedup.prefix_bits=2".into(),
                        "engine.smartdedup.idle=\"100us\"".into(),
                        "engine.smartdedup.pacing=\"idle\"".into(),
                        "policy.reodedup-csr.idle=\"100us\"".into(),
                    ],
                )
                .expect("tiny preset with an engine");
                (format!("{e}/{alloc}"), cfg)
            })
        })
        .collect();
    let policies = ["dedup", "fad", "reodedup-csr"];
    let hits = RefCell::new(vec![0u64; configs.len()]);
    let cases = Cell::new(0u64);
    let config = ProptestConfig { cases: 24, source_file: Some(file!()), ..ProptestConfig::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&prop::collection::vec(cmd(SPAN), 300..500), |cmds| {
        let spacing = if cmds.len() % 2 == 0 { Nanos::from_us(300) } else { Nanos::from_us(20) };
        let (w, model) = workload_spaced(&cmds, SPAN, spacing);
        let mut case = vec![0u64; configs.len()];
        for (k, (label, cfg)) in configs.iter().enumerate() {
            for name in policies {
                let (out, _) =
                    run_checked(cfg, name, &w, &model).map_err(|e| TestCaseError::fail(format!("{label}: {e}")))?;
                case[k] += (out.metrics.counters.gc_invocations > 0 && out.metrics.counters.dedup_pages > 0) as u64;
            }
        }
        cases.set(cases.get() + 1);
        for (n, c) in hits.borrow_mut().iter_mut().zip(case) {
            *n += c;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // GC ran and duplicates were found in every run (measured), so the
    // engines' indexes met moved and freed copies.
    let hits = hits.into_inner();
    for ((label, _), &n) in configs.iter().zip(&hits) {
        println!("{label:>26}: GC and dedup hits in {n} of {} runs", cases.get() * policies.len() as u64);
        assert!(2 * n >= cases.get() * policies.len() as u64, "{label}: GC with dedup hits in only {n} runs");
    }
}
