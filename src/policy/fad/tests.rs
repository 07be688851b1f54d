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
        f.weight = vec![1; 4];
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
    assert_eq!(f.soft_gc_unit().map(|(u, _)| u), Some(0));
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

/// In-file duplicates are referenced and weigh on the first copy's unit.
#[test]
fn in_file_duplicates_reference_the_first_copy() {
    let mut file = vec![new_page(0), new_page(1)];
    file.push(PageInfo { lpn: Lpn(2), content: file[0].content, dup: Dup::InFile { first: 0 } });
    let mut f = fad(FULL);
    let (n_f, _) = f.analyze(&file, 2); // N_f = 2
    let mut out = Vec::new();
    f.place_blocks(&file, 2, n_f, &mut out);
    assert_eq!(out, vec![Action::Program { unit: 0 }, Action::Program { unit: 1 }, Action::Reference]);
    assert_eq!(f.rdlt, vec![2, 1]);
}
