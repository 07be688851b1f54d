//! Decision rules of the `har` and `fcrc` policies on hand-built page
//! sequences, and one checked end-to-end run of each.
//!
//! Pages are described directly as the simulator would describe them
//! ([`PageInfo`] with [`Dup`]); group (container) ids are `ppn / G`.

use crate::common;

use dedupsim::config::Config;
use dedupsim::policy::{self, Action, Dup, Fcrc, FcrcMode, FcrcParams, Har, HarParams, PageInfo, Policy};
use dedupsim::sim::{RunOptions, Simulation};
use dedupsim::units::{ContentId, Lpn, Nanos, Op, Ppn};
use dedupsim::workload::{Provenance, Request, Workload};

const UNITS: u32 = 4;

/// A duplicate of the existing copy at `ppn` (content `c`, `refs` sharers).
fn dup(c: u32, ppn: u32, refs: u32) -> PageInfo {
    PageInfo {
        lpn: Lpn(c),
        content: ContentId(c),
        dup: Dup::Existing { entry: ppn, unit: ppn % UNITS, refs, ppn: Ppn(ppn) },
    }
}

/// A new page (content `c`).
fn new(c: u32) -> PageInfo {
    PageInfo { lpn: Lpn(c), content: ContentId(c), dup: Dup::None }
}

fn news(from: u32, n: u32) -> Vec<PageInfo> {
    (from..from + n).map(new).collect()
}

fn place(p: &mut dyn Policy, file: &[PageInfo]) -> Vec<Action> {
    let mut out = Vec::new();
    p.place(file, &[], UNITS, &mut out);
    assert_eq!(out.len(), file.len(), "one action per page");
    for (a, pg) in out.iter().zip(file) {
        if *a == Action::Reference {
            assert_ne!(pg.dup, Dup::None, "a new page cannot be referenced");
        }
    }
    out
}

fn is_program(a: &Action) -> bool {
    matches!(a, Action::Program { .. })
}

fn stat(p: &dyn Policy, key: &str) -> f64 {
    p.stats().into_iter().find(|(k, _)| *k == key).unwrap_or_else(|| panic!("no stat {key}")).1
}

/// HAR with 8-page groups.
fn har(epoch_pages: u64, rewrite_limit: f64) -> Har {
    let p = HarParams { group_pages: 8, epoch_pages, utilization_threshold: 0.5, rewrite_limit };
    Har::new(p, 64).unwrap()
}

// ---------------------------------------------------------------- HAR

#[test]
fn har_rewrites_a_duplicate_in_an_inherited_sparse_group() {
    let mut h = har(8, 1.0);
    // Epoch 1: group 0 is used by 1 of its 8 pages (sparse), group 1 by 5 (dense).
    let mut f = vec![dup(100, 3, 1)];
    f.extend((0..5).map(|k| dup(110 + k, 8 + k, 1)));
    f.extend(news(0, 2));
    let out = place(&mut h, &f);
    assert!(
        out.iter().zip(&f).all(|(a, p)| is_program(a) == (p.dup == Dup::None)),
        "no history yet: nothing is rewritten"
    );
    assert_eq!(h.epochs(), 1);
    assert_eq!(h.sparse_groups(), vec![0]);

    // Epoch 2: duplicates in group 0 are rewritten, those in group 1 are referenced.
    let out = place(&mut h, &[dup(101, 5, 2), dup(111, 9, 2), new(1000)]);
    assert!(is_program(&out[0]), "sparse group 0: rewrite");
    assert_eq!(out[1], Action::Reference, "dense group 1: reference");
    assert!(is_program(&out[2]));
    assert_eq!(h.rewrites(), 1);
    assert_eq!(stat(&h, "rewrites"), 1.0);
}

#[test]
fn har_group_becomes_sparse_only_at_an_epoch_boundary() {
    let mut h = har(16, 1.0);
    let mut f = vec![dup(100, 0, 1)];
    f.extend(news(0, 3));
    place(&mut h, &f);
    // Group 0 is sparse so far (1 / 8), but the epoch is not over: referenced.
    let out = place(&mut h, &[dup(101, 1, 1), new(10)]);
    assert_eq!(out[0], Action::Reference);
    assert!(!h.is_sparse(0));
    assert_eq!(h.epochs(), 0);
    // Close the epoch (16 pages in all).
    place(&mut h, &news(20, 10));
    assert_eq!(h.epochs(), 1);
    assert!(h.is_sparse(0));
    let out = place(&mut h, &[dup(102, 2, 1)]);
    assert!(is_program(&out[0]), "now inherited sparse: rewrite");
}

#[test]
fn har_rewrites_a_content_at_most_once_per_epoch() {
    let mut h = har(8, 1.0);
    let mut f = vec![dup(100, 3, 1)];
    f.extend(news(0, 7));
    place(&mut h, &f);
    assert!(h.is_sparse(0));
    // Epoch 2: content 100 twice in one request, then again in another.
    let out = place(&mut h, &[dup(100, 3, 1), dup(100, 3, 2)]);
    assert!(is_program(&out[0]));
    assert_eq!(out[1], Action::Reference, "same content in the same epoch");
    let out = place(&mut h, &[dup(100, 3, 3)]);
    assert_eq!(out[0], Action::Reference);
    assert_eq!(stat(&h, "repeat_denied"), 2.0);
    // The repeats referenced page 3, so group 0 stays sparse for epoch 3,
    // where content 100 may be rewritten once more.
    place(&mut h, &news(10, 5));
    assert_eq!(h.epochs(), 2);
    assert!(h.is_sparse(0));
    let out = place(&mut h, &[dup(100, 3, 3), dup(100, 3, 4)]);
    assert!(is_program(&out[0]));
    assert_eq!(out[1], Action::Reference);
    assert_eq!(h.rewrites(), 2);
}

#[test]
fn har_rewrite_limit_holds_within_an_epoch() {
    let limit = 0.25;
    let mut h = har(40, limit);
    // Epoch 1: one page used in each of groups 0..8, 32 new pages: all 8
    // groups are sparse and the estimate 8 / 40 <= 0.25 keeps them all.
    let mut f: Vec<PageInfo> = (0..8).map(|g| dup(100 + g, g * 8, 1)).collect();
    f.extend(news(0, 32));
    place(&mut h, &f);
    assert_eq!(h.sparse_groups(), (0..8).collect::<Vec<_>>());
    // Epoch 2: only duplicates in sparse groups, all distinct contents.
    let (mut written, mut rewrites) = (0u64, 0u64);
    for r in 0..9u32 {
        let f: Vec<PageInfo> = (0..4).map(|k| dup(200 + r * 4 + k, (r * 4 + k) % 64, 1)).collect();
        let out = place(&mut h, &f);
        written += 4;
        rewrites += out.iter().filter(|a| is_program(a)).count() as u64;
        assert!(rewrites as f64 <= limit * written as f64, "{rewrites} rewrites after {written} pages");
        assert_eq!(h.epoch_progress(), (written, rewrites));
    }
    assert_eq!(rewrites, 9, "the limit binds exactly: one rewrite per 4 pages");
    assert!(stat(&h, "limit_denied") > 0.0);
}

#[test]
fn har_epoch_end_trims_the_sparse_set_to_the_rewrite_limit() {
    let mut h = har(20, 0.1);
    // Groups 0 (1 page), 1 (2 pages), 2 (3 pages) are sparse: 6 > 0.1 × 20.
    let mut f = vec![dup(100, 0, 1), dup(101, 8, 1), dup(102, 9, 1)];
    f.extend((0..3).map(|k| dup(103 + k, 16 + k, 1)));
    f.extend(news(0, 14));
    place(&mut h, &f);
    assert_eq!(h.sparse_groups(), vec![0], "drop the highest utilization first until <= 2 pages");
    assert_eq!(stat(&h, "trimmed_groups"), 2.0);
}

// ---------------------------------------------------------------- FCRC (fad)

fn fcrc_fad(cap: f64, max_fraction: f64) -> Fcrc {
    let p =
        FcrcParams { mode: FcrcMode::Fad, dedup_cap: cap, max_rewrite_fraction: max_fraction, ..FcrcParams::default() };
    Fcrc::new(p, 64).unwrap()
}

/// Deterministic pseudo-random request stream: mixes of new pages,
/// duplicates with varied refs, and in-file repeats.
fn mixed_stream(seed: u64, requests: usize) -> Vec<Vec<PageInfo>> {
    let mut x = seed;
    let mut rnd = move |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    let mut c = 0u32;
    (0..requests)
        .map(|_| {
            let n = 1 + rnd(12) as usize;
            let mut f: Vec<PageInfo> = Vec::with_capacity(n);
            for k in 0..n {
                c += 1;
                let p = match rnd(10) {
                    0..=2 => new(c),
                    3 if k > 0 => PageInfo { lpn: Lpn(c), content: ContentId(c), dup: Dup::InFile { first: 0 } },
                    _ => dup(c, rnd(4096) as u32, 1 + rnd(20) as u32),
                };
                f.push(p);
            }
            f
        })
        .collect()
}

#[test]
fn fcrc_fad_keeps_the_overall_dedup_rate_under_the_cap() {
    let cap = 0.30;
    let mut p = fcrc_fad(cap, 1.0);
    let (mut written, mut deduped, mut rewrites) = (0u64, 0u64, 0u64);
    for f in mixed_stream(7, 400) {
        let out = place(&mut p, &f);
        written += f.len() as u64;
        deduped += out.iter().filter(|a| **a == Action::Reference).count() as u64;
        rewrites += out.iter().zip(&f).filter(|(a, pg)| is_program(a) && pg.dup != Dup::None).count() as u64;
        assert!(deduped as f64 <= cap * written as f64 + 1e-9, "{deduped} / {written} exceeds {cap}");
    }
    assert!(rewrites > 0);
    assert!(deduped as f64 > (cap - 0.02) * written as f64, "the cap is a cap, not a ban: {deduped} / {written}");
    assert!((stat(&p, "dedup_rate") - deduped as f64 / written as f64).abs() < 1e-12);
}

#[test]
fn fcrc_fad_per_request_maximum_bounds_rewrites_and_overshoot() {
    let (cap, frac) = (0.30, 0.30);
    let mut p = fcrc_fad(cap, frac);
    let (mut written, mut deduped) = (0u64, 0u64);
    let mut bound_hit = false;
    for f in mixed_stream(11, 400) {
        let n = f.len() as u64;
        let dups = f.iter().filter(|pg| pg.dup != Dup::None).count() as u64;
        let allowed = ((cap * (written + n) as f64 + 1e-9).floor() as u64).saturating_sub(deduped);
        let out = place(&mut p, &f);
        let rewrites = out.iter().zip(&f).filter(|(a, pg)| is_program(a) && pg.dup != Dup::None).count() as u64;
        let max = (frac * n as f64 + 1e-9).floor() as u64;
        assert!(rewrites <= max, "{rewrites} rewrites in a {n}-page request");
        // Exactly the excess over the cap, as far as the maximum allows.
        assert_eq!(rewrites, dups.saturating_sub(allowed).min(max));
        bound_hit |= dups.saturating_sub(allowed) > max;
        written += n;
        deduped += dups - rewrites;
    }
    assert!(bound_hit, "the stream must exercise the per-request maximum");
    assert!(stat(&p, "bounded_requests") > 0.0);
}

#[test]
fn fcrc_fad_cap_overshoot_is_at_most_one_request_when_under_the_maximum() {
    // Requests whose duplicate share is <= cap + fraction never leave a
    // backlog: after every request the rate is back under the cap.
    let (cap, frac) = (0.30, 0.30);
    let mut p = fcrc_fad(cap, frac);
    let (mut written, mut deduped) = (0u64, 0u64);
    for r in 0..200u32 {
        // 10 pages: 6 duplicates, 4 new (60% <= 30% + 30%).
        let mut f: Vec<PageInfo> = (0..6).map(|k| dup(r * 10 + k, r * 10 + k, 1)).collect();
        f.extend(news(100_000 + r * 10, 4));
        let out = place(&mut p, &f);
        written += 10;
        deduped += out.iter().filter(|a| **a == Action::Reference).count() as u64;
        assert!(deduped as f64 <= cap * written as f64 + 1e-9, "request {r}: {deduped} / {written}");
    }
}

#[test]
fn fcrc_fad_rewrites_higher_reference_counts_first() {
    // Cap 0: every duplicate is excess; max = floor(0.4 × 6) = 2 rewrites.
    let mut p = fcrc_fad(0.0, 0.4);
    let f = vec![dup(1, 10, 1), dup(2, 20, 5), dup(3, 30, 3), dup(4, 40, 9), dup(5, 50, 2), new(6)];
    let out = place(&mut p, &f);
    let rewritten: Vec<u32> =
        f.iter().zip(&out).filter(|(pg, a)| is_program(a) && pg.dup != Dup::None).map(|(pg, _)| pg.content.0).collect();
    assert_eq!(rewritten, vec![2, 4], "refs 9 and 5");
    // In-file repeats come after existing copies.
    let mut p = fcrc_fad(0.0, 0.25);
    let f = vec![
        new(7),
        PageInfo { lpn: Lpn(8), content: ContentId(7), dup: Dup::InFile { first: 0 } },
        dup(9, 90, 1),
        new(10),
    ];
    let out = place(&mut p, &f);
    assert!(is_program(&out[2]), "the existing copy (refs 1) outranks the in-file repeat");
    assert_eq!(out[1], Action::Reference);
}

// ---------------------------------------------------------------- FCRC (original)

fn fcrc_original(window: u32, target: f64) -> Fcrc {
    let p = FcrcParams {
        mode: FcrcMode::Original,
        group_pages: 8,
        window_pages: window,
        target_reduction: target,
        ..FcrcParams::default()
    };
    Fcrc::new(p, 64).unwrap()
}

#[test]
fn fcrc_original_rewrites_lowest_cnrc_groups_first_within_budget() {
    // δ = 0.25: one rewrite allowed per 3 unique pages.
    let mut p = fcrc_original(32, 0.25);
    // Segment 1 (32 pages): 12 unique; groups 2, 3, 4, 5 referenced 1, 2,
    // 3, 5 times; group 0 referenced 9 times.
    let mut f = news(0, 12);
    f.push(dup(100, 16, 1));
    f.extend((0..2).map(|k| dup(101 + k, 24 + k, 1)));
    f.extend((0..3).map(|k| dup(103 + k, 32 + k, 1)));
    f.extend((0..5).map(|k| dup(106 + k, 40 + k, 1)));
    f.extend((0..9).map(|k| dup(120 + k, k % 8, 1)));
    let out = place(&mut p, &f);
    assert!(
        out.iter().zip(&f).all(|(a, pg)| is_program(a) == (pg.dup == Dup::None)),
        "no threshold before the first segment"
    );
    // Window budget floor(12 / 3) = 4: CNRC 1 + 2 = 3 < 4, + 3 = 6 >= 4: T = 4.
    assert_eq!(p.threshold(), 4);

    // Request 2: group 10 once (CNRC 1), groups 11..=13 twice (CNRC 2),
    // group 0 once more (CNRC 10 >= T). Run budget: 4 rewrites.
    let mut f = vec![dup(200, 80, 1)];
    for g in 11..=13u32 {
        f.push(dup(200 + g * 2, g * 8, 1));
        f.push(dup(201 + g * 2, g * 8 + 1, 1));
    }
    f.push(dup(300, 5, 1));
    let out = place(&mut p, &f);
    assert_eq!(p.cnrc(0), 10);
    assert_eq!(p.cnrc(12), 2);
    let rewritten: Vec<usize> = (0..f.len()).filter(|&k| is_program(&out[k])).collect();
    // Lowest CNRC first (group 10), then ties at CNRC 2 by group id.
    assert_eq!(rewritten, vec![0, 1, 2, 3], "budget: 12 unique pages × δ / (1 − δ) = 4");
    assert_eq!(out[7], Action::Reference, "group 0 is above the threshold");
    assert_eq!(stat(&p, "rewrites"), 4.0);
}

#[test]
fn fcrc_original_respects_the_targeted_ratio_reduction() {
    let target = 0.10;
    let mut p = fcrc_original(64, target);
    let (mut unique, mut rewrites, mut seen) = (0u64, 0u64, 0u64);
    for f in mixed_stream(3, 600) {
        let out = place(&mut p, &f);
        unique += f.iter().filter(|pg| pg.dup == Dup::None).count() as u64;
        seen += f.len() as u64;
        for (a, pg) in out.iter().zip(&f) {
            if is_program(a) && pg.dup != Dup::None {
                assert!(matches!(pg.dup, Dup::Existing { .. }), "in-file repeats are never rewritten");
                rewrites += 1;
            }
        }
        // Ratio W / (U + R) >= (1 − δ) × W / U  <=>  R <= δ / (1 − δ) × U.
        assert!(
            rewrites as f64 <= target / (1.0 - target) * unique as f64 + 1e-9,
            "{rewrites} rewrites for {unique} unique pages"
        );
    }
    assert!(seen > 0 && rewrites > 0, "the stream must produce rewrites");
}

// ---------------------------------------------------------------- end to end

fn tiny_config() -> Config {
    // The `tiny` preset (16 blocks x 8 pages per plane, 25% OP) on 2 x 2
    // chips, pages placed as processed (`least-loaded`): under the preset's
    // `dynamic` allocation this workload's duplicates reference copies
    // still waiting to be placed and the device never needs GC, which
    // these tests want to run beside the rewrites (the dynamic runs below
    // check the invariants and the rewrites only).
    Config::load(Some("tiny"), &["geometry.chips_per_channel=2".into(), "allocation=\"least-loaded\"".into()])
        .expect("tiny preset")
}

fn dynamic(cfg: &Config) -> Config {
    let mut cfg = cfg.clone();
    cfg.allocation = dedupsim::config::Allocation::Dynamic;
    cfg
}

/// Writes with heavily repeated contents scattered over the LPN space,
/// and reads of already written pages.
fn tiny_workload() -> Workload {
    let mut reqs = Vec::new();
    let mut contents = Vec::new();
    for i in 0..900u32 {
        let t = Nanos(i as u64 * 50_000);
        let lpn = (i * 37) % 180;
        if i % 4 == 3 && i > 40 {
            reqs.push(Request {
                arrival: t,
                op: Op::Read,
                lpn: (i * 11) % 120,
                pages: 4,
                content: u32::MAX,
                stream: 0,
            });
            continue;
        }
        let n = 2 + i % 4;
        reqs.push(Request { arrival: t, op: Op::Write, lpn, pages: n, content: contents.len() as u32, stream: 0 });
        for k in 0..n {
            contents.push(ContentId((i * 5 + k * 3) % 150));
        }
    }
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = contents;
    // Preconditioning pages get contents 1000 + lpn (distinct from written ones).
    common::precondition_with_distinct_contents(&mut w, 1000);
    w
}

fn run_checked(name: &str, cfg: &Config) -> dedupsim::sim::RunOutput {
    let w = tiny_workload();
    let p = policy::build(name, cfg).unwrap();
    let sim = Simulation::new(cfg, &w, p, RunOptions { check: true, check_every: 1, resources: false }).unwrap();
    let out = sim.run(&mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(out.invariant_checks > 100);
    // Rewrites add physical copies: the tiny device must garbage-collect
    // (plain dedup may not need to).
    if name != "dedup" && cfg.allocation != dedupsim::config::Allocation::Dynamic {
        assert!(out.metrics.counters.gc_invocations > 0, "{name}: the tiny device should run GC");
    }
    out
}

fn policy_stat(out: &dedupsim::sim::RunOutput, key: &str) -> f64 {
    out.policy_stats.iter().find(|(k, _)| *k == key).unwrap().1
}

#[test]
fn har_end_to_end_checked_run_rewrites() {
    let mut cfg = tiny_config();
    cfg.policy = toml::from_str("[har]\nepoch_pages = 64\nrewrite_limit = 0.2").unwrap();
    let out = run_checked("har", &cfg);
    assert_eq!(out.policy, "har");
    let rw = out.metrics.counters.programs.host_rewrite;
    assert!(rw > 0, "HAR rewrote nothing");
    assert_eq!(
        policy_stat(&out, "rewrites") as u64,
        rw,
        "every rewrite is a host rewrite program (no preconditioning dups)"
    );
    assert!(policy_stat(&out, "epochs") >= 10.0);
    assert!(out.metrics.counters.dedup_pages > 0);
    let out = run_checked("har", &dynamic(&cfg));
    assert!(out.metrics.counters.programs.host_rewrite > 0, "HAR rewrote nothing (dynamic)");
}

#[test]
fn fcrc_end_to_end_checked_runs_rewrite_in_both_modes() {
    let mut cfg = tiny_config();
    let out = run_checked("fcrc", &cfg);
    assert!(out.metrics.counters.programs.host_rewrite > 0, "fcrc (fad) rewrote nothing");
    assert!(policy_stat(&out, "rewrites") > 0.0);
    let dedup = run_checked("dedup", &cfg);
    assert!(out.metrics.counters.dedup_pages < dedup.metrics.counters.dedup_pages);

    cfg.policy = toml::from_str("[fcrc]\nmode = \"original\"\nwindow_pages = 64\ntarget_reduction = 0.5").unwrap();
    let out = run_checked("fcrc", &cfg);
    assert!(out.metrics.counters.programs.host_rewrite > 0, "fcrc (original) rewrote nothing");
    assert!(policy_stat(&out, "segments") > 10.0);
    let out = run_checked("fcrc", &dynamic(&cfg));
    assert!(out.metrics.counters.programs.host_rewrite > 0, "fcrc (original) rewrote nothing (dynamic)");
}

#[test]
fn unknown_parameters_are_rejected() {
    let mut cfg = tiny_config();
    cfg.policy = toml::from_str("[har]\nepoch = 5").unwrap();
    assert!(policy::build("har", &cfg).is_err());
    cfg.policy = toml::from_str("[fcrc]\nmode = \"capping\"").unwrap();
    assert!(policy::build("fcrc", &cfg).is_err());
}
