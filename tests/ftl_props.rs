//! Property tests: random operation sequences against a reference model.
//!
//! The reference model is a map LPN -> content last written. Every policy
//! replays random writes (with heavy duplication), reads and trims on a
//! tiny geometry where GC runs constantly, with the simulator's `--check`
//! mode on: every read must return the content last written to its LPN,
//! and the full FTL invariant check (reference counts = sharers, valid
//! counts, no page programmed twice, GC loses nothing, index consistent)
//! runs after every request. Afterwards the final mapping is compared with
//! the reference model page by page.

mod common;

use dedupsim::config::Config;
use dedupsim::ftl::Ftl;
use dedupsim::policy;
use dedupsim::sim::{RunOptions, Simulation};
use dedupsim::units::{ContentId, Lpn, Nanos, Op};
use dedupsim::workload::{Provenance, Request, Workload, NO_CONTENT};
use proptest::prelude::*;
use std::collections::HashMap;

fn tiny_config() -> Config {
    // The `tiny` preset (16 blocks x 8 pages per plane, 25% OP) on 2 x 2 chips.
    Config::load(Some("tiny"), &["geometry.chips_per_channel=2".into()]).expect("tiny preset")
}

#[derive(Clone, Debug)]
enum Cmd {
    Write { lpn: u32, contents: Vec<u32> },
    Read { lpn: u32, pages: u32 },
    Trim { lpn: u32, pages: u32 },
}

fn cmd(span: u32) -> impl Strategy<Value = Cmd> {
    prop_oneof![
        5 => (0..span, prop::collection::vec(0u32..24, 1..9)).prop_map(move |(l, c)| {
            let n = (c.len() as u32).min(span - l);
            Cmd::Write { lpn: l, contents: c[..n as usize].to_vec() }
        }),
        3 => (0..span, 1u32..9).prop_map(move |(l, n)| Cmd::Read { lpn: l, pages: n.min(span - l) }),
        1 => (0..span, 1u32..5).prop_map(move |(l, n)| Cmd::Trim { lpn: l, pages: n.min(span - l) }),
    ]
}

fn workload(cmds: &[Cmd]) -> (Workload, HashMap<u32, u32>) {
    let mut reqs = Vec::new();
    let mut contents = Vec::new();
    let mut model: HashMap<u32, u32> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for (i, c) in cmds.iter().enumerate() {
        let t = Nanos(i as u64 * 50_000);
        match c {
            Cmd::Write { lpn, contents: cs } => {
                reqs.push(Request {
                    arrival: t,
                    op: Op::Write,
                    lpn: *lpn,
                    pages: cs.len() as u32,
                    content: contents.len() as u32,
                });
                for (k, &x) in cs.iter().enumerate() {
                    contents.push(ContentId(x));
                    model.insert(lpn + k as u32, x);
                    seen.insert(lpn + k as u32);
                }
            }
            Cmd::Read { lpn, pages } => {
                reqs.push(Request { arrival: t, op: Op::Read, lpn: *lpn, pages: *pages, content: NO_CONTENT });
                for l in *lpn..lpn + pages {
                    // Preconditioning writes unseen pages with content 100 + lpn.
                    if seen.insert(l) {
                        model.insert(l, 100 + l);
                    }
                }
            }
            Cmd::Trim { lpn, pages } => {
                reqs.push(Request { arrival: t, op: Op::Trim, lpn: *lpn, pages: *pages, content: NO_CONTENT });
                for l in *lpn..lpn + pages {
                    model.remove(&l);
                    seen.insert(l);
                }
            }
        }
    }
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    // Preconditioning pages get contents 100 + lpn (distinct from written ones).
    common::precondition_with_distinct_contents(&mut w, 100);
    (w, model)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_preserves_contents_across_gc(cmds in prop::collection::vec(cmd(200), 1..400)) {
        let cfg = tiny_config();
        let (w, model) = workload(&cmds);
        for name in policy::names() {
            let p = policy::build(name, &cfg).unwrap();
            let opts = RunOptions { check: true, check_every: 1 };
            let sim = Simulation::new(&cfg, &w, p, opts).unwrap();
            let (out, ftl) = sim.run_keep(&mut |_, _| {}).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
            prop_assert!(out.invariant_checks >= 1);
            check_final(&ftl, &model).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        }
    }
}

fn check_final(ftl: &Ftl, model: &HashMap<u32, u32>) -> Result<(), String> {
    for l in 0..ftl.logical_pages() {
        let got = ftl.lookup(Lpn(l)).map(|e| ftl.entry(e).content.0);
        if got != model.get(&l).copied() {
            return Err(format!("LPN {l}: FTL has {got:?}, model {:?}", model.get(&l)));
        }
    }
    Ok(())
}

/// GC must actually run in these tests, or they prove little.
#[test]
fn the_tiny_geometry_exercises_gc() {
    let cfg = tiny_config();
    // Hot pages (0..40) overwritten constantly, interleaved with cold pages
    // (40..200) written once: victims hold live cold data that must move.
    let cmds: Vec<Cmd> = (0..600u32)
        .map(|i| {
            let lpn = if i % 4 == 0 && i / 4 < 80 { 40 + 2 * (i / 4) } else { (i * 7) % 40 };
            Cmd::Write { lpn, contents: vec![i % 1000 + 1000, i % 997 + 3000] }
        })
        .collect();
    let (w, model) = workload(&cmds);
    for name in policy::names() {
        let p = policy::build(name, &cfg).unwrap();
        let sim = Simulation::new(&cfg, &w, p, RunOptions { check: true, check_every: 1 }).unwrap();
        let (out, ftl) = sim.run_keep(&mut |_, _| {}).unwrap();
        assert!(
            out.metrics.counters.gc_invocations > 10,
            "{name}: GC ran {} times",
            out.metrics.counters.gc_invocations
        );
        assert!(out.metrics.counters.programs.gc > 0, "{name}: GC moved no page");
        check_final(&ftl, &model).unwrap();
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
    let mut ftl = Ftl::new(&cfg);
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
