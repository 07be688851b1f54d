//! FAD's worked examples (Figs. 5-7) and threshold formulas as tests.

use super::*;
use crate::units::{ContentId, Lpn, Ppn};

fn new_page(lpn: u32) -> PageInfo {
    PageInfo { lpn: Lpn(lpn), content: ContentId(1000 + lpn), dup: Dup::None }
}

fn dup_page(lpn: u32, unit: u32, refs: u32) -> PageInfo {
    PageInfo { lpn: Lpn(lpn), content: ContentId(lpn), dup: Dup::Existing { entry: lpn, unit, refs, ppn: Ppn(lpn) } }
}

fn fad(modules: FadModules) -> Fad {
    Fad::new("fad", modules, FadParams::default())
}

const FULL: FadModules = FadModules { wstl: true, rewrite: true, gc_hint: true };
const RPO: FadModules = FadModules { wstl: false, rewrite: false, gc_hint: false };

#[test]
fn thresholds_follow_equations_1_and_2() {
    // §III-C: Num = 5, N_chip = 4 -> N_f = 2.
    assert_eq!(bottom_threshold(5, 4), 2);
    assert_eq!(bottom_threshold(4, 4), 1);
    assert_eq!(bottom_threshold(3, 16), 1);
    assert_eq!(bottom_threshold(33, 16), 3);
    // §III-D: Num = 4, rho = 0.3 -> N_top = 1.
    assert_eq!(top_threshold(4, 0.3), 1);
    assert_eq!(top_threshold(3, 0.3), 0);
    assert_eq!(top_threshold(10, 0.3), 3);
}

/// Fig. 5: LPN1-4 = A (dup, chip 0), C (dup, chip 0), B (dup, chip 1), I
/// (new); N_chip = 4 -> N_f = 1, NUDF, N_top = 1, A rewritten (higher heat).
#[test]
fn figure_5_classification_and_rewrite_choice() {
    let file = [dup_page(1, 0, 5), dup_page(2, 0, 2), dup_page(3, 1, 1), new_page(4)];
    let mut f = fad(FULL);
    let (n_f, kind) = f.analyze(&file, 4);
    assert_eq!(n_f, 1);
    assert_eq!(kind, FragType::Nudf);
    assert_eq!(f.rewrite, vec![true, false, false, false], "A is rewritten");
    // RDLT updated: A's count left chip 0.
    assert_eq!(f.rdlt, vec![1, 1, 0, 0]);
    // Heat decides: with C hotter, C is chosen instead.
    let file = [dup_page(1, 0, 2), dup_page(2, 0, 5), dup_page(3, 1, 1), new_page(4)];
    let mut f = fad(FULL);
    f.analyze(&file, 4);
    assert_eq!(f.rewrite, vec![false, true, false, false]);
    // Without the rewrite module the file is still NUDF but nothing is rewritten.
    let mut f = fad(RPO);
    let (_, kind) = f.analyze(&file, 4);
    assert_eq!(kind, FragType::Nudf);
    assert!(f.rewrite.iter().all(|r| !r));
}

/// A file whose duplicates are spread no more than N_f per chip is UDF.
#[test]
fn udf_when_no_chip_exceeds_the_bottom_threshold() {
    let file = [dup_page(1, 0, 1), dup_page(2, 1, 1), new_page(3), new_page(4)];
    let mut f = fad(FULL);
    let (n_f, kind) = f.analyze(&file, 4);
    assert_eq!((n_f, kind), (1, FragType::Udf));
    let mut out = Vec::new();
    f.place_blocks(&file, 4, n_f, &mut out);
    // New blocks avoid chips 0 and 1 (which hold the duplicates).
    assert_eq!(
        out,
        vec![Action::Reference, Action::Reference, Action::Program { unit: 2 }, Action::Program { unit: 3 }]
    );
}

/// Fig. 6: I, E, B, A with E on chip 1, B on chip 2, A (old chip 0) being
/// rewritten; I goes to chip 0, A skips chips 1 and 2 and lands on chip 3.
#[test]
fn figure_6_read_parallel_placement() {
    let file = [new_page(0), dup_page(1, 1, 1), dup_page(2, 2, 1), dup_page(3, 0, 3)];
    for modules in [RPO, FULL] {
        let mut f = fad(modules);
        // The state Fig. 6 starts from: RDLT [0, 1, 1, 0] (A's count already
        // moved out by the rewrite decision), A marked for rewrite, N_f = 1.
        f.rdlt = vec![0, 1, 1, 0];
        f.rewrite = vec![false, false, false, true];
        f.repeat = vec![false; 4];
        let mut out = Vec::new();
        f.place_blocks(&file, 4, 1, &mut out);
        assert_eq!(
            out,
            vec![Action::Program { unit: 0 }, Action::Reference, Action::Reference, Action::Program { unit: 3 },],
            "{modules:?}"
        );
        assert_eq!(f.rdlt, vec![1, 1, 1, 1]);
        assert_eq!(f.next_unit(4), 0, "pointer advanced past chip 3");
        if modules.wstl {
            assert_eq!(f.wstl().entries().collect::<Vec<_>>(), vec![1, 2], "skipped chips recorded");
        } else {
            assert!(f.wstl().is_empty());
        }
    }
}

/// Fig. 7: WSTL holds chips 1, 2 (with zero blocks of this file): J -> 1,
/// K -> 2 (backfills, removed from the list, pointer unmoved); L finds the
/// list empty, skips 0, 1, 2 (chip 0 holds a duplicate) and lands on 3;
/// 0, 1, 2 are appended to the WSTL.
#[test]
fn figure_7_write_parallel_backfill() {
    let file = [dup_page(0, 0, 1), new_page(1), new_page(2), new_page(3)];
    let mut f = fad(FULL);
    f.set_wstl(&[1, 2]);
    let (n_f, kind) = f.analyze(&file, 4);
    assert_eq!((n_f, kind), (1, FragType::Udf));
    let mut out = Vec::new();
    f.place_blocks(&file, 4, n_f, &mut out);
    assert_eq!(
        out,
        vec![Action::Reference, Action::Program { unit: 1 }, Action::Program { unit: 2 }, Action::Program { unit: 3 },]
    );
    assert_eq!(f.wstl().entries().collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(f.stats.backfills, 2);
    assert_eq!(f.stats.skips, 3);
    // The GC hint prefers the unit with the most WSTL entries (tie: lowest).
    assert_eq!(f.gc_hint_of(), Some(GcHint::Prefer { unit: 0, defer: 8, margin: 8 }));
}

/// A failed WSTL head moves to the tail; placement then follows the pointer.
#[test]
fn failed_wstl_head_goes_to_the_tail() {
    let file = [dup_page(0, 1, 1), new_page(1)];
    let mut f = fad(FULL);
    f.set_wstl(&[1, 3]);
    let (n_f, _) = f.analyze(&file, 4); // N_f = 1, chip 1 full
    let mut out = Vec::new();
    f.place_blocks(&file, 4, n_f, &mut out);
    assert_eq!(out[1], Action::Program { unit: 0 });
    assert_eq!(f.wstl().entries().collect::<Vec<_>>(), vec![3, 1]);
}

/// N_top bounds rewrites, and a unit is not drained below N_f.
#[test]
fn rewrites_are_bounded_by_n_top_and_stop_at_n_f() {
    // 10 pages, 4 chips: N_f = 3. Chip 0 holds 7 duplicates (excess 4),
    // N_top = floor(0.3 * 10) = 3.
    let mut file: Vec<PageInfo> = (0..7).map(|l| dup_page(l, 0, 10 - l)).collect();
    file.extend((7..10).map(new_page));
    let mut f = fad(FULL);
    let (n_f, kind) = f.analyze(&file, 4);
    assert_eq!((n_f, kind), (3, FragType::Nudf));
    let chosen: Vec<usize> = (0..10).filter(|&k| f.rewrite[k]).collect();
    assert_eq!(chosen, vec![0, 1, 2], "the three hottest");
    // 8 pages, 4 chips: N_f = 2; chip 0 holds 3 (excess 1): only one
    // rewrite although N_top = 2.
    let mut file: Vec<PageInfo> = (0..3).map(|l| dup_page(l, 0, 5)).collect();
    file.extend((3..8).map(new_page));
    let mut f = fad(FULL);
    f.analyze(&file, 4);
    assert_eq!(f.rewrite.iter().filter(|&&r| r).count(), 1);
    // Rewritten copies never land on their old unit.
    let mut out = Vec::new();
    let (n_f, _) = f.analyze(&file, 4);
    f.place_blocks(&file, 4, n_f, &mut out);
    assert_ne!(out[0], Action::Program { unit: 0 });
}

/// In-file duplicates are referenced; the content is one block, counted
/// once on its copy's unit.
#[test]
fn in_file_duplicates_reference_the_first_copy() {
    let mut file = vec![new_page(0), new_page(1)];
    file.push(PageInfo { lpn: Lpn(2), content: file[0].content, dup: Dup::InFile { first: 0 } });
    let mut f = fad(FULL);
    let (n_f, _) = f.analyze(&file, 2); // N_f = 2
    let mut out = Vec::new();
    f.place_blocks(&file, 2, n_f, &mut out);
    assert_eq!(out, vec![Action::Program { unit: 0 }, Action::Program { unit: 1 }, Action::Reference]);
    assert_eq!(f.rdlt, vec![1, 1]);
}

/// A stored content `c` (entry `c`, on `unit`) at page `lpn`.
fn stored(lpn: u32, c: u32, unit: u32, refs: u32) -> PageInfo {
    PageInfo { lpn: Lpn(lpn), content: ContentId(c), dup: Dup::Existing { entry: c, unit, refs, ppn: Ppn(c) } }
}

/// A later occurrence of page `first`'s content, as the simulator reports
/// it for a content not yet on flash.
fn again(lpn: u32, file: &[PageInfo], first: u32) -> PageInfo {
    PageInfo { lpn: Lpn(lpn), content: file[first as usize].content, dup: Dup::InFile { first } }
}

/// Issue 9 item 6: a stored content occurring twice in one file is one
/// block. It counts once in the RDLT: [X, X, new, new] on 4 chips with X
/// on chip 0 is UDF (it was NUDF when X counted twice).
#[test]
fn a_stored_content_repeated_in_a_file_counts_once() {
    let file = [stored(0, 7, 0, 3), stored(1, 7, 0, 3), new_page(2), new_page(3)];
    let mut f = fad(FULL);
    let (n_f, kind) = f.analyze(&file, 4);
    assert_eq!((n_f, kind), (1, FragType::Udf));
    assert_eq!(f.rdlt, vec![1, 0, 0, 0]);
    let mut out = Vec::new();
    f.place_blocks(&file, 4, n_f, &mut out);
    assert_eq!(
        out,
        vec![Action::Reference, Action::Reference, Action::Program { unit: 1 }, Action::Program { unit: 2 }]
    );
}

/// Issue 9 item 6: a content is rewritten at most once per file. X (heat
/// 9) and Y (heat 5) occur twice each, W (heat 1) once, all on chip 0; 8
/// pages on 4 chips: N_f = 2, N_top = 2, RDLT chip 0 = 3 (X, Y, W).
/// Before the fix chip 0 counted 5 and both copies of X were rewritten.
#[test]
fn a_content_is_rewritten_at_most_once_per_file() {
    // Repeats reported as later `Existing` pages (the simulator's lookup
    // finds the stored copy for each): they can only reference the stored
    // copy, so X and Y stay shared and W, the one rewritable block, goes.
    let mut file = vec![stored(0, 7, 0, 9), stored(1, 7, 0, 9), stored(2, 8, 0, 5), stored(3, 8, 0, 5)];
    file.push(stored(4, 9, 0, 1));
    file.extend((5..8).map(new_page));
    let mut f = fad(FULL);
    let (n_f, kind) = f.analyze(&file, 4);
    assert_eq!((n_f, kind), (2, FragType::Nudf));
    assert_eq!(f.rewrite, vec![false, false, false, false, true, false, false, false]);
    assert_eq!(f.rdlt, vec![2, 0, 0, 0]);
    assert_eq!(f.stats.repeats_not_rewritten, 2);
    let mut out = Vec::new();
    f.place_blocks(&file, 4, n_f, &mut out);
    assert_eq!(out.iter().filter(|a| matches!(a, Action::Program { .. })).count(), 4);
    assert!(out[..4].iter().all(|a| *a == Action::Reference));
    assert_ne!(out[4], Action::Program { unit: 0 });

    // Repeats reported as in-file duplicates of the first occurrence: the
    // hottest content X is rewritten once (page 0) and its repeat
    // references page 0, i.e. the private copy; chip 0 is then at N_f.
    let mut file = vec![stored(0, 7, 0, 9)];
    file.push(again(1, &file, 0));
    file.push(stored(2, 8, 0, 5));
    file.push(again(3, &file, 2));
    file.push(stored(4, 9, 0, 1));
    file.extend((5..8).map(new_page));
    let mut f = fad(FULL);
    let (n_f, kind) = f.analyze(&file, 4);
    assert_eq!((n_f, kind), (2, FragType::Nudf));
    assert_eq!(f.rewrite, vec![true, false, false, false, false, false, false, false]);
    assert_eq!(f.stats.repeats_not_rewritten, 0);
    let mut out = Vec::new();
    f.place_blocks(&file, 4, n_f, &mut out);
    assert!(matches!(out[0], Action::Program { unit } if unit != 0));
    assert_eq!(out[1..5], [Action::Reference; 4]);
}

/// Random files (stored contents on random chips, repeats in both forms,
/// new contents and their repeats): every content is programmed at most
/// once per file and only at its first occurrence, a rewrite leaves its
/// old chip, no placement pushes a chip above max(N_f, what its stored
/// blocks already put there), and the no-fit fallback never runs.
#[test]
fn random_files_place_each_content_once_within_n_f() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
    for modules in [RPO, FULL, FadModules { wstl: true, rewrite: false, gc_hint: false }] {
        let mut f = fad(modules);
        for _ in 0..2000 {
            let units = rng.gen_range(1..=8u32);
            let n = rng.gen_range(1..=40u32);
            let in_file_form = rng.gen_bool(0.5);
            let mut file: Vec<PageInfo> = Vec::new();
            for k in 0..n {
                let c = rng.gen_range(0..24u32);
                let first = file.iter().position(|p| p.content.0 == c);
                let stored_c = c < 12;
                let dup = match (first, stored_c) {
                    (Some(j), true) if !in_file_form => file[j].dup,
                    (Some(j), _) => Dup::InFile { first: j as u32 },
                    (None, true) => Dup::Existing { entry: c, unit: c % units, refs: 1 + c % 5, ppn: Ppn(c) },
                    (None, false) => Dup::None,
                };
                file.push(PageInfo { lpn: Lpn(k), content: ContentId(c), dup });
            }
            let mut base = vec![0u32; units as usize];
            let mut seen = std::collections::HashSet::new();
            for p in &file {
                if let Dup::Existing { unit, .. } = p.dup {
                    if seen.insert(p.content) {
                        base[unit as usize] += 1;
                    }
                }
            }
            let mut out = Vec::new();
            f.place(&file, &[], units, &mut out);
            assert_eq!(out.len(), file.len());
            let n_f = bottom_threshold(n, units);
            let mut count = base.clone();
            let mut programmed = std::collections::HashSet::new();
            for (k, (p, a)) in file.iter().zip(&out).enumerate() {
                let first = file.iter().position(|q| q.content == p.content).unwrap();
                if let Action::Program { unit } = *a {
                    assert_eq!(first, k, "only a first occurrence is programmed");
                    assert!(programmed.insert(p.content));
                    if let Dup::Existing { unit: old, .. } = p.dup {
                        assert_ne!(unit, old, "a rewrite leaves its old unit");
                        count[old as usize] -= 1;
                    }
                    count[unit as usize] += 1;
                } else {
                    assert_ne!(p.dup, Dup::None);
                }
            }
            for u in 0..units as usize {
                assert!(count[u] <= n_f.max(base[u]), "unit {u}: {count:?} base {base:?} N_f {n_f}");
            }
        }
        assert_eq!(f.stats.fallbacks, 0, "{modules:?}");
    }
}

/// Issue 9 item 6: `policy.*` statistics count the timed writes only. The
/// simulator calls `begin_replay` after preconditioning; the pointer and
/// the WSTL carry over, the counters restart.
#[test]
fn statistics_restart_at_the_replay() {
    let file = [dup_page(0, 0, 1), new_page(1), new_page(2), new_page(3)];
    let mut f = fad(FULL);
    let mut out = Vec::new();
    f.place(&file, &[], 4, &mut out); // a preconditioning write
    assert_eq!(f.wstl().entries().collect::<Vec<_>>(), vec![0]);
    let before = f.next_unit(4);
    f.begin_replay();
    let stat = |f: &Fad, k: &str| f.stats().iter().find(|(n, _)| *n == k).unwrap().1;
    for k in ["files", "udf", "nudf", "rewrites", "skips", "wstl_backfills", "wstl_dropped", "fallbacks"] {
        assert_eq!(stat(&f, k), 0.0, "{k}");
    }
    assert_eq!(stat(&f, "wstl_high_water"), 1.0);
    assert_eq!(f.next_unit(4), before);
    assert_eq!(f.wstl().len(), 1);
    out.clear();
    f.place(&file, &[], 4, &mut out); // the first timed write
    assert_eq!(stat(&f, "files"), 1.0);
    assert_eq!(stat(&f, "udf"), 1.0);
}

/// Issue 9 item 6, WSTL choices (§III-E/F). Default: a backfill leaves the
/// next pointer alone (Fig. 7) and a unit skipped twice is listed twice.
/// `backfill_advances` and `wstl_unique` are the alternatives.
#[test]
fn wstl_pointer_and_repeated_skips() {
    // Fig. 7 again, checking the pointer: J and K are backfills.
    let file = [dup_page(0, 0, 1), new_page(1), new_page(2), new_page(3)];
    let mut f = fad(FULL);
    f.set_wstl(&[1, 2]);
    let mut out = Vec::new();
    f.place(&file, &[], 4, &mut out);
    assert_eq!(out[3], Action::Program { unit: 3 });
    assert_eq!(f.wstl().entries().collect::<Vec<_>>(), vec![0, 1, 2], "L started at chip 0");
    assert_eq!(f.next_unit(4), 0);
    // With backfill_advances the backfills move the pointer to chip 2: L
    // skips only chip 2 (it holds K) and lands on chip 3.
    let params = FadParams { backfill_advances: true, ..FadParams::default() };
    let mut f = Fad::new("fad", FULL, params);
    f.set_wstl(&[1, 2]);
    out.clear();
    f.place(&file, &[], 4, &mut out);
    assert_eq!(
        out,
        vec![Action::Reference, Action::Program { unit: 1 }, Action::Program { unit: 2 }, Action::Program { unit: 3 }]
    );
    assert_eq!(f.wstl().entries().collect::<Vec<_>>(), vec![2]);
    assert_eq!(f.next_unit(4), 0);

    // Two files [duplicate on chip 0, new] on 2 chips (N_f = 1): each new
    // block skips chip 0. Recorded twice by default, once with wstl_unique.
    let file = [dup_page(0, 0, 1), new_page(1)];
    for (unique, want) in [(false, vec![0, 0]), (true, vec![0])] {
        let params = FadParams { wstl_unique: unique, ..FadParams::default() };
        let mut f = Fad::new("fad", FULL, params);
        for _ in 0..2 {
            out.clear();
            f.place(&file, &[], 2, &mut out);
            assert_eq!(out[1], Action::Program { unit: 1 });
        }
        assert_eq!(f.wstl().entries().collect::<Vec<_>>(), want, "wstl_unique = {unique}");
        assert_eq!(f.gc_hint_of(), Some(GcHint::Prefer { unit: 0, defer: 8, margin: 8 }));
    }
}

/// The WSTL options are `[policy.fad]` keys, off by default.
#[test]
fn wstl_options_are_parameters() {
    let cfg = crate::config::Config::load(
        Some("fad-table1"),
        &["policy.fad.backfill_advances=true".to_string(), "policy.fad.wstl_unique=true".to_string()],
    )
    .unwrap();
    let p: FadParams = crate::policy::params_in(&cfg.policy, "fad").unwrap();
    assert!(p.backfill_advances && p.wstl_unique);
    assert_eq!(
        FadParams::default(),
        crate::policy::params_in(&crate::config::Config::fad_table1().policy, "fad").unwrap()
    );
    assert!(!FadParams::default().backfill_advances && !FadParams::default().wstl_unique);
}

/// The GC hint (§III-G) names the most-skipped unit; `gc_hint` chooses
/// what the simulator does with it, and the ablations give none.
#[test]
fn gc_hint_modes_are_parameters() {
    let cfg = crate::config::Config::load(
        Some("fad-table1"),
        &["policy.fad.gc_hint=early".to_string(), "policy.fad.gc_soft_margin=3".to_string()],
    )
    .unwrap();
    let p: FadParams = crate::policy::params_in(&cfg.policy, "fad").unwrap();
    assert_eq!((p.gc_hint, p.gc_defer_blocks), (GcHintMode::Early, 8));
    // Two files [duplicate on chip 0, new] on 2 chips: chip 0 skipped twice.
    let file = [dup_page(0, 0, 1), new_page(1)];
    let mut out = Vec::new();
    let mut early = Fad::new("fad", FULL, p);
    let mut prefer = fad(FULL);
    let mut ablation = fad(FadModules { gc_hint: false, ..FULL });
    assert_eq!(prefer.gc_hint_of(), None, "empty WSTL: no hint");
    for f in [&mut early, &mut prefer, &mut ablation] {
        for _ in 0..2 {
            out.clear();
            f.place(&file, &[], 2, &mut out);
        }
        assert_eq!(f.wstl().entries().collect::<Vec<_>>(), vec![0, 0]);
    }
    assert_eq!(early.gc_hint_of(), Some(GcHint::Early { unit: 0, margin: 3 }));
    assert_eq!(prefer.gc_hint_of(), Some(GcHint::Prefer { unit: 0, defer: 8, margin: 8 }));
    assert_eq!(ablation.gc_hint_of(), None);
    if let Ok(c) = crate::config::Config::load(Some("fad-table1"), &["policy.fad.gc_hint=idle".to_string()]) {
        assert!(crate::policy::params_in::<FadParams>(&c.policy, "fad").is_err(), "unknown gc_hint mode accepted");
    }
}
