//! Unit tests of the FTL: mapping, relocation, GC and its preference, reference counts.

use super::*;
use crate::config::Config;

fn tiny() -> Config {
    Config::small_for_tests(2, 1, 16, 4)
}

/// Relocation moves a shared copy to another unit: every sharer reads
/// it from the new page, the old page is invalid, the invariants hold.
#[test]
fn lookup_beyond_the_logical_capacity_is_unmapped() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    let (e, _, _) = ftl.program(0, ContentId(1), true).unwrap();
    ftl.map_pinned(Lpn(0), e);
    let cap = ftl.l2p.len() as u32;
    assert!(ftl.lookup(Lpn(0)).is_some());
    assert_eq!(ftl.lookup(Lpn(cap)), None);
    assert_eq!(ftl.lookup(Lpn(u32::MAX)), None);
}

#[test]
fn relocation_moves_a_shared_copy_for_all_sharers() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    let (e, old, _) = ftl.program(0, ContentId(7), true).unwrap();
    ftl.map_pinned(Lpn(0), e);
    for l in 1..4 {
        ftl.pin(e);
        ftl.map_pinned(Lpn(l), e);
    }
    assert_eq!(ftl.entry(e).refs, 4);
    assert_eq!(ftl.geometry().unit_of(old), 0);
    let (from, to, gc) = ftl.relocate(e, 1).unwrap();
    assert_eq!((from, gc), (old, None));
    assert_eq!(ftl.geometry().unit_of(to), 1);
    for l in 0..4 {
        let m = ftl.lookup(Lpn(l)).unwrap();
        assert_eq!(m, e);
        assert_eq!(ftl.entry(m).ppn, to);
        assert_eq!(ftl.entry(m).content, ContentId(7));
    }
    assert_eq!(ftl.entry(e).refs, 4);
    assert_eq!(ftl.find_duplicate(ContentId(7)), Some(e));
    assert_eq!(ftl.live_pages(), 1);
    ftl.check_invariants().unwrap();
    // Overwriting every sharer frees the relocated page, not the old one twice.
    for l in 0..4 {
        ftl.unmap(Lpn(l));
    }
    assert_eq!(ftl.live_pages(), 0);
    ftl.check_invariants().unwrap();
}

/// Relocation and programs share a unit's plane pointer: with two
/// planes per unit, relocations into a unit followed by a program there
/// used to index past the unit's planes (the pointer was not kept
/// reduced). They alternate planes like programs do.
#[test]
fn relocation_and_programs_alternate_a_units_planes() {
    let mut cfg = tiny();
    cfg.geometry.planes_per_die = 2;
    cfg.validate().unwrap();
    let mut ftl = Ftl::new(&cfg.ftl_params());
    let mut planes = Vec::new();
    for k in 0..3u32 {
        let (e, _, _) = ftl.program(0, ContentId(k), true).unwrap();
        ftl.map_pinned(Lpn(k), e);
        let (_, to, _) = ftl.relocate(e, 1).unwrap();
        planes.push(ftl.geometry().plane_of(to));
    }
    let (e, p, _) = ftl.program(1, ContentId(9), true).unwrap();
    ftl.map_pinned(Lpn(9), e);
    planes.push(ftl.geometry().plane_of(p));
    assert_eq!(planes[0], planes[2]);
    assert_ne!(planes[0], planes[1]);
    assert_eq!(planes[1], planes[3]);
    ftl.check_invariants().unwrap();
}

/// Relocation blocks by hand (issue 28 item 10, §VI: "relocation
/// granularity aligned to erase-block sizes"): a unit of two planes,
/// 4-page blocks. Eight relocations into unit 1, each followed by a host
/// program there, fill exactly one fresh block per plane, one plane after
/// the other: each block holds the four relocated pages in order and
/// nothing else; the host programs keep alternating the unit's planes in
/// their own active blocks as without relocations.
#[test]
fn relocation_blocks_hold_whole_blocks_of_relocated_pages_by_hand() {
    let mut cfg = tiny();
    cfg.geometry.planes_per_die = 2;
    cfg.validate().unwrap();
    let mut ftl = Ftl::new(&cfg.ftl_params());
    let geo = ftl.geometry().clone();
    assert_eq!((geo.unit_planes(1).len(), geo.pages_per_block), (2, 4));
    let mut moved = Vec::new();
    for k in 0..8u32 {
        let (e, _, _) = ftl.program(0, ContentId(k), true).unwrap();
        ftl.map_pinned(Lpn(k), e);
        moved.push(e);
    }
    let active_before: Vec<u32> = geo.unit_planes(1).iter().map(|&q| ftl.planes[q as usize].active).collect();
    let (mut to, mut host) = (Vec::new(), Vec::new());
    for (k, &e) in moved.iter().enumerate() {
        let (_, new, gc) = ftl.relocate_to_block(e, 1).unwrap();
        assert_eq!(gc, None);
        to.push(new);
        let (h, p, _) = ftl.program(1, ContentId(100 + k as u32), true).unwrap();
        ftl.map_pinned(Lpn(100 + k as u32), h);
        host.push(p);
        ftl.check_invariants().unwrap();
    }
    let block = |p: &Ppn| geo.block_of(*p);
    // Four and four: one block per plane, pages 0-3 of each, in order.
    let (a, b) = (block(&to[0]), block(&to[4]));
    assert!(to[..4].iter().all(|p| block(p) == a) && to[4..].iter().all(|p| block(p) == b), "{to:?}");
    assert_ne!(geo.plane_of_block(a), geo.plane_of_block(b));
    for (i, p) in to.iter().enumerate() {
        assert_eq!(p.0 % 4, i as u32 % 4);
        assert_eq!(ftl.entry(moved[i]).ppn, *p);
    }
    for rb in [a, b] {
        // Fresh (not the plane's active block then), full, closed, and
        // holding the relocated copies only.
        assert!(!active_before.contains(&rb));
        assert_eq!(ftl.block_meta(rb).written, 4);
        assert_eq!(ftl.block_meta(rb).valid, 4);
        assert!(host.iter().all(|p| block(p) != rb));
        let owners: Vec<u32> = (rb * 4..rb * 4 + 4).map(|p| ftl.p2e.owner(Ppn(p)) - 1).collect();
        assert!(owners.iter().all(|o| moved.contains(o)), "{owners:?}");
    }
    assert!(geo.unit_planes(1).iter().all(|&q| ftl.reloc.open(q).is_none()), "both blocks are full: closed");
    // The host programs alternate the unit's planes, in the active blocks.
    let planes: Vec<u32> = host.iter().map(|&p| geo.plane_of(p)).collect();
    assert!(planes.windows(2).all(|w| w[0] != w[1]), "{planes:?}");
    assert!(host.iter().all(|p| active_before.contains(&block(p))));
    // The relocated pages left unit 0: its blocks hold no valid page.
    assert_eq!(ftl.plane_valid(geo.unit_planes(0)[0]) + ftl.plane_valid(geo.unit_planes(0)[1]), 0);
}

/// An open relocation block is never a GC victim, however many invalid
/// pages it holds: with two of its pages relocated away again (invalid)
/// and a closed block with one invalid page, greedy GC picks the closed
/// one; once full and closed it is an ordinary victim.
#[test]
fn an_open_relocation_block_is_never_a_victim() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    let mut e = Vec::new();
    for k in 0..4u32 {
        let (x, _, _) = ftl.program(0, ContentId(k), true).unwrap();
        ftl.map_pinned(Lpn(k), x);
        e.push(x);
    }
    // Unit 0's first block is full; one more page closes it (5th page opens the next).
    let (x, _, _) = ftl.program(0, ContentId(4), true).unwrap();
    ftl.map_pinned(Lpn(4), x);
    // Two copies into unit 1's relocation block, then back to unit 0:
    // the relocation block holds two invalid pages and is open.
    for &x in &e[..2] {
        ftl.relocate_to_block(x, 1).unwrap();
    }
    let rb = ftl.reloc.open(1).expect("open after two pages");
    for &x in &e[..2] {
        ftl.relocate(x, 1).unwrap();
    }
    assert_eq!((ftl.block_meta(rb).written, ftl.block_meta(rb).valid), (2, 0));
    // Unit 1's plane: the active block (2 valid pages) and the relocation block.
    // A closed block elsewhere with invalid pages: unit 0's first block
    // (pages 0, 1 moved away).
    assert_eq!(ftl.pick_victim(1), None, "no closed block on plane 1");
    assert_eq!(ftl.pick_victim(0).map(|(inv, _)| inv), Some(2));
    ftl.check_invariants().unwrap();
    // Fill it: two more relocations close it; it becomes a victim with 2 invalid pages.
    for &x in &e[2..4] {
        ftl.relocate_to_block(x, 1).unwrap();
    }
    assert_eq!(ftl.reloc.open(1), None);
    assert_eq!(ftl.pick_victim(1), Some((2, rb)));
    ftl.check_invariants().unwrap();
}

/// Steering every live page to one unit overfills its planes: the FTL
/// must report "device full" instead of looping in GC.
#[test]
fn unfittable_live_data_is_an_error_not_a_loop() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    let mut err = None;
    for l in 0..ftl.logical_pages() {
        match ftl.program(0, ContentId(l), false) {
            Ok((e, _, _)) => ftl.map_pinned(Lpn(l), e),
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let err = err.expect("unit 0 holds 64 pages: 96 live pages cannot fit");
    assert!(matches!(err, FtlError::DeviceFull { plane: 0, .. }), "{err}");
    assert!(err.to_string().contains("device full"));
}

/// SSDsim's one-victim-per-write rule: below the threshold each write
/// reclaims exactly one block (here all-invalid: one erase, nothing
/// moved), and when no block has an invalid page the write proceeds
/// until the plane has no free block at all.
#[test]
fn one_victim_per_write_and_aged_start() {
    let mut cfg = tiny(); // 16 blocks x 4 pages per plane, threshold 2
    cfg.gc.rule = GcRule::OnePerWrite;
    cfg.precondition.aged = 0.5;
    assert_eq!(aged_blocks(0.5, 16), 8);
    let mut ftl = Ftl::new(&cfg.ftl_params());
    // Plane 0: 1 active + 8 aged + 7 free blocks.
    assert_eq!(ftl.free_blocks(0), 7);
    let mut erased = Vec::new();
    for l in 0..40 {
        let (e, _, gc) = ftl.program(0, ContentId(l), false).unwrap();
        ftl.map_pinned(Lpn(l), e);
        if let Some(g) = gc {
            assert_eq!((g.moved, g.erased), (0, 1), "an aged block is erased, nothing moved");
            erased.push(l);
        }
    }
    ftl.check_invariants().unwrap();
    // 40 pages need 10 blocks: the 7 free ones run out, and from the
    // write that leaves 1 free block on, each write erases an aged block.
    assert!(erased.len() >= 3, "{erased:?}");
    assert!(ftl.free_blocks(0) >= 1);
    // Without invalid pages the rule never errors early: fill the plane.
    let mut cfg = tiny();
    cfg.gc.rule = GcRule::OnePerWrite;
    let mut ftl = Ftl::new(&cfg.ftl_params());
    let mut last = Ok(());
    for l in 0..ftl.logical_pages() {
        match ftl.program(0, ContentId(l), false) {
            Ok((e, _, gc)) => {
                assert!(gc.is_none(), "no block has an invalid page");
                ftl.map_pinned(Lpn(l), e);
            }
            Err(e) => {
                last = Err((l, e));
                break;
            }
        }
    }
    let (l, e) = last.expect_err("unit 0 cannot hold every page");
    assert_eq!(l, 64, "all 16 blocks x 4 pages of the plane were used first");
    assert!(matches!(e, FtlError::DeviceFull { plane: 0, .. }));
}

/// A GC preference (FAD's hint, §III-G) moves a triggered collection to
/// the preferred unit's plane when that plane is within the margin
/// above the threshold and the triggering plane can wait; the moved
/// trigger counts as served until its plane loses another free block.
#[test]
fn gc_preference_moves_a_triggered_collection() {
    let mut cfg = tiny(); // 2 units of 1 plane, 16 blocks x 4 pages
    cfg.gc.rule = GcRule::OnePerWrite;
    cfg.gc.min_free_blocks = 6;
    cfg.precondition.aged = 0.5;
    let run = |pref: Option<GcPreference>| {
        let mut ftl = Ftl::new(&cfg.ftl_params());
        assert_eq!((ftl.free_blocks(0), ftl.free_blocks(1)), (7, 7));
        ftl.set_gc_preference(pref);
        let mut gcs = Vec::new();
        for l in 0..14 {
            let (e, _, gc) = ftl.program(0, ContentId(l), false).unwrap();
            ftl.map_pinned(Lpn(l), e);
            if let Some(g) = gc {
                gcs.push((l, g.plane, g.hinted));
            }
        }
        ftl.check_invariants().unwrap();
        (gcs, ftl.free_blocks(0), ftl.free_blocks(1))
    };
    // Without a preference: page 8 opens the block that leaves 5 < 6
    // free blocks, page 12 the next; each collects plane 0 once.
    assert_eq!(run(None), (vec![(8, 0, false), (12, 0, false)], 6, 7));
    // Preferring unit 1 (plane 1: 7 free < 6 + 2): page 8's collection
    // runs on plane 1 and plane 0 (5 >= 6 - 2 free) waits; pages 9-11
    // do not trigger again. At page 12 plane 1 (8 free) is outside the
    // margin, so plane 0 collects itself, and catches up at page 13.
    let pref = GcPreference { unit: 1, defer: 2, margin: 2 };
    assert_eq!(run(Some(pref)), (vec![(8, 1, true), (12, 0, false), (13, 0, false)], 6, 8));
    // A plane that cannot wait (defer 0: 5 < 6 free) collects itself,
    // and a preference for its own unit changes nothing.
    assert_eq!(run(Some(GcPreference { defer: 0, ..pref })), run(None));
    assert_eq!(run(Some(GcPreference { unit: 0, ..pref })), run(None));
}

/// Overwrites force GC; every LPN keeps its content and the invariants hold.
#[test]
fn gc_keeps_every_mapping() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    let n = ftl.logical_pages();
    let mut gcs = 0;
    for round in 0..20u32 {
        for l in (0..n).filter(|l| round == 0 || l % 3 == 0) {
            let (e, _, gc) = ftl.program(l % 2, ContentId(round * 1000 + l), false).unwrap();
            ftl.map_pinned(Lpn(l), e);
            gcs += gc.map_or(0, |g| g.erased);
        }
        ftl.check_invariants().unwrap();
    }
    assert!(gcs > 10, "GC erased only {gcs} blocks");
    for l in 0..n {
        let last = if l % 3 == 0 { 19 * 1000 + l } else { l };
        assert_eq!(ftl.entry(ftl.lookup(Lpn(l)).unwrap()).content, ContentId(last));
    }
}

/// Dedup references keep a page alive; the last release frees it and
/// drops it from the fingerprint index.
#[test]
fn reference_counts_and_index_follow_sharers() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    let (e, _, _) = ftl.program(0, ContentId(7), true).unwrap();
    ftl.map_pinned(Lpn(0), e);
    assert_eq!(ftl.find_duplicate(ContentId(7)), Some(e));
    ftl.pin(e);
    ftl.map_pinned(Lpn(1), e);
    assert_eq!(ftl.entry(e).refs, 2);
    ftl.unmap(Lpn(0));
    assert_eq!(ftl.entry(e).refs, 1);
    assert_eq!(ftl.live_pages(), 1);
    ftl.unmap(Lpn(1));
    assert_eq!(ftl.live_pages(), 0);
    assert_eq!(ftl.find_duplicate(ContentId(7)), None);
    ftl.check_invariants().unwrap();
}

/// A copy reserved before it has a page (`allocation = "dynamic"`): its
/// own LPN and a duplicate's wait for it, keeping their old mappings; the
/// fingerprint index finds it meanwhile; placing it maps both to its page.
/// A waiting map that a later write (an immediate map) or a trim
/// overtook is not applied, only its reference dropped; a copy whose
/// every waiting map is stale is freed once placed. The invariants
/// (waiting maps counted as references) hold at every step.
#[test]
fn a_copy_placed_later_maps_the_lpns_waiting_for_it() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    let plane = ftl.geometry().unit_planes(1)[0];
    // LPNs 0, 1 and 2 hold old copies.
    for l in 0..3 {
        let (e, _, _) = ftl.program(0, ContentId(100 + l), true).unwrap();
        ftl.map_pinned(Lpn(l), e);
    }
    let old0 = ftl.lookup(Lpn(0)).unwrap();
    let e = ftl.reserve(ContentId(7), true).unwrap();
    assert!(!ftl.is_placed(e));
    ftl.map_pinned_when_placed(Lpn(0), e);
    // A duplicate written meanwhile finds the waiting copy and waits too.
    assert_eq!(ftl.find_duplicate(ContentId(7)), Some(e));
    assert_eq!(ftl.entry_live(e), None, "no LPN maps to it yet");
    ftl.pin(e);
    ftl.map_pinned_when_placed(Lpn(1), e);
    // LPN 2 waits too, but is overwritten with a placed copy before `e` is placed.
    ftl.pin(e);
    ftl.map_pinned_when_placed(Lpn(2), e);
    let (other, _, _) = ftl.program(0, ContentId(200), true).unwrap();
    ftl.map_pinned(Lpn(2), other);
    assert_eq!(ftl.lookup(Lpn(0)), Some(old0), "old mapping kept until placed");
    assert_eq!(ftl.entry(e).refs, 3);
    assert_eq!(ftl.live_pages(), 3, "the reserved copy has no page");
    ftl.check_invariants().unwrap();
    let mut mapped = Vec::new();
    let (ppn, gc) = ftl.place(e, plane, &mut mapped).unwrap();
    assert_eq!(gc, None);
    assert_eq!(mapped, [Lpn(0), Lpn(1)]);
    assert_eq!(ftl.geometry().unit_of(ppn), 1);
    for l in [0, 1] {
        let m = ftl.lookup(Lpn(l)).unwrap();
        assert_eq!((m, ftl.entry(m).ppn, ftl.entry(m).content), (e, ppn, ContentId(7)));
    }
    assert_eq!(ftl.lookup(Lpn(2)), Some(other), "the later write stays");
    assert_eq!(ftl.entry(e).refs, 2);
    assert_eq!(ftl.live_pages(), 2, "old copies of LPNs 0 and 1 freed; `e` and `other` live");
    ftl.check_invariants().unwrap();

    // Every waiting map stale (a trim came later): placed, then freed.
    let f = ftl.reserve(ContentId(8), true).unwrap();
    ftl.map_pinned_when_placed(Lpn(5), f);
    ftl.unmap(Lpn(5));
    ftl.check_invariants().unwrap();
    mapped.clear();
    ftl.place(f, plane, &mut mapped).unwrap();
    assert!(mapped.is_empty());
    assert_eq!((ftl.lookup(Lpn(5)), ftl.find_duplicate(ContentId(8))), (None, None));
    assert_eq!(ftl.live_pages(), 2);
    ftl.check_invariants().unwrap();

    // Two waiting maps of one LPN whose copies are placed out of write
    // order: the later write wins; the earlier one is not applied.
    let g = ftl.reserve(ContentId(9), true).unwrap();
    let h = ftl.reserve(ContentId(10), true).unwrap();
    ftl.map_pinned_when_placed(Lpn(6), g);
    ftl.map_pinned_when_placed(Lpn(6), h);
    ftl.pin(g);
    ftl.map_pinned_when_placed(Lpn(7), g);
    ftl.check_invariants().unwrap();
    mapped.clear();
    ftl.place(h, plane, &mut mapped).unwrap();
    ftl.place(g, plane, &mut mapped).unwrap();
    assert_eq!(mapped, [Lpn(6), Lpn(7)]);
    assert_eq!((ftl.lookup(Lpn(6)), ftl.lookup(Lpn(7))), (Some(h), Some(g)));
    assert_eq!(ftl.entry(g).refs, 1);
    ftl.check_invariants().unwrap();
}

/// The flat map by hand (module doc, "Flat mapping"): an LPN's slot
/// names its page, no entry is made, an overwrite frees the old page,
/// contents are known only when kept.
#[test]
fn a_flat_map_maps_pages_without_entries() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    ftl.map_flat();
    let (e, p0, _) = ftl.program(0, ContentId(5), false).unwrap();
    assert_eq!(e, FLAT_COPY);
    ftl.map_pinned(Lpn(3), e);
    assert_eq!(ftl.page_of(Lpn(3)), Some(p0));
    assert_eq!((ftl.lookup(Lpn(3)), ftl.content_at(Lpn(3))), (None, None), "no entry, content not kept");
    assert_eq!(ftl.l2p[3], p0.0 + 1);
    assert_eq!(ftl.p2e.owner(p0), 4, "the page names LPN 3 back");
    let (e, p1, _) = ftl.program(0, ContentId(6), false).unwrap();
    ftl.map_pinned(Lpn(3), e);
    assert_eq!((ftl.page_of(Lpn(3)), ftl.p2e.owner(p0)), (Some(p1), 0), "the old page is free");
    assert_eq!((ftl.live_pages(), ftl.entries.len()), (1, 0));
    assert_eq!(ftl.block_meta(ftl.geometry().block_of(p0)).valid, 1);
    ftl.check_invariants().unwrap();
    ftl.unmap(Lpn(3));
    assert_eq!((ftl.page_of(Lpn(3)), ftl.live_pages()), (None, 0));
    ftl.check_invariants().unwrap();

    let mut ftl = Ftl::new(&tiny().ftl_params());
    ftl.map_flat();
    ftl.keep_contents();
    let (e, _, _) = ftl.program(1, ContentId(9), false).unwrap();
    ftl.map_pinned(Lpn(0), e);
    assert_eq!(ftl.content_at(Lpn(0)), Some(ContentId(9)));
    ftl.unmap(Lpn(0));
    assert_eq!(ftl.content_at(Lpn(0)), None);
    ftl.check_invariants().unwrap();
}

/// Under a flat map a copy waiting for its page (dynamic allocation) has
/// an entry only until placed: placing maps its LPN flat and frees the
/// entry for the next reservation; a stale wait (a trim came later)
/// frees the page at once.
#[test]
fn a_flat_map_frees_a_reserved_entry_when_placed() {
    let mut ftl = Ftl::new(&tiny().ftl_params());
    ftl.map_flat();
    ftl.keep_contents();
    let plane = ftl.geometry().unit_planes(1)[0];
    let mut mapped = Vec::new();
    for k in 0..10 {
        let e = ftl.reserve(ContentId(k), false).unwrap();
        ftl.map_pinned_when_placed(Lpn(2), e);
        ftl.check_invariants().unwrap();
        let (ppn, _) = ftl.place(e, plane, &mut mapped).unwrap();
        assert_eq!((ftl.page_of(Lpn(2)), ftl.content_at(Lpn(2))), (Some(ppn), Some(ContentId(k))));
        ftl.check_invariants().unwrap();
    }
    assert_eq!(mapped, [Lpn(2); 10]);
    assert_eq!((ftl.entries.len(), ftl.free_entries.len(), ftl.live_pages()), (1, 1, 1), "one entry, reused");
    let e = ftl.reserve(ContentId(99), false).unwrap();
    ftl.map_pinned_when_placed(Lpn(4), e);
    ftl.unmap(Lpn(4));
    mapped.clear();
    let (ppn, _) = ftl.place(e, plane, &mut mapped).unwrap();
    assert!(mapped.is_empty());
    assert_eq!((ftl.page_of(Lpn(4)), ftl.p2e.owner(ppn), ftl.live_pages()), (None, 0, 1));
    ftl.check_invariants().unwrap();
}

/// The flat map decides exactly as the shared one: the same random
/// programs, waiting copies placed out of order, overwrites and trims on
/// two FTLs, one of each, under heavy GC (both rules): every program and
/// placement returns the same page and GC work, every LPN ends on the
/// same page, and both pass the invariant check throughout. A flat map
/// that lost a page GC moved (the pending copy's included) fails here.
#[test]
fn the_flat_map_places_and_collects_as_the_shared_map() {
    for rule in [GcRule::OnePerWrite, GcRule::UntilThreshold] {
        let mut cfg = tiny();
        cfg.gc.rule = rule;
        cfg.gc.min_free_blocks = 3;
        let mut shared = Ftl::new(&cfg.ftl_params());
        let mut flat = Ftl::new(&cfg.ftl_params());
        flat.map_flat();
        flat.keep_contents();
        let n = shared.logical_pages() / 2;
        let planes = shared.geometry().planes;
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |m: u32| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % u64::from(m)) as u32
        };
        let mut waiting: Vec<(EntryId, EntryId)> = Vec::new();
        let (mut gcs, mut moved) = (0, 0);
        for step in 0..3000u32 {
            let lpn = Lpn(next(n));
            match next(10) {
                0..=4 => {
                    let unit = next(2);
                    let (a, pa, ga) = shared.program(unit, ContentId(step), false).unwrap();
                    let (b, pb, gb) = flat.program(unit, ContentId(step), false).unwrap();
                    assert_eq!((pa, ga), (pb, gb), "step {step}");
                    shared.map_pinned(lpn, a);
                    flat.map_pinned(lpn, b);
                    gcs += ga.map_or(0, |g| g.erased);
                    moved += ga.map_or(0, |g| g.moved);
                }
                5 | 6 => {
                    let (a, b) = (
                        shared.reserve(ContentId(step), false).unwrap(),
                        flat.reserve(ContentId(step), false).unwrap(),
                    );
                    shared.map_pinned_when_placed(lpn, a);
                    flat.map_pinned_when_placed(lpn, b);
                    waiting.push((a, b));
                }
                7 | 8 if !waiting.is_empty() => {
                    let (a, b) = waiting.swap_remove(next(waiting.len() as u32) as usize);
                    let plane = next(planes);
                    let (mut ma, mut mb) = (Vec::new(), Vec::new());
                    let ra = shared.place(a, plane, &mut ma).unwrap();
                    let rb = flat.place(b, plane, &mut mb).unwrap();
                    assert_eq!((ra, ma), (rb, mb), "step {step}");
                    gcs += ra.1.map_or(0, |g| g.erased);
                    moved += ra.1.map_or(0, |g| g.moved);
                }
                _ => {
                    shared.unmap(lpn);
                    flat.unmap(lpn);
                }
            }
            if step % 100 == 0 {
                shared.check_invariants().unwrap();
                flat.check_invariants().unwrap_or_else(|e| panic!("{rule:?} step {step}: {e}"));
            }
        }
        for l in 0..shared.logical_pages() {
            let want = shared.lookup(Lpn(l)).map(|e| (shared.entry(e).ppn, shared.entry(e).content));
            assert_eq!(flat.page_of(Lpn(l)).zip(flat.content_at(Lpn(l))), want, "{rule:?}: LPN {l}");
        }
        assert_eq!(shared.live_pages(), flat.live_pages());
        assert!(
            flat.entries.len() <= waiting.len() + 64,
            "{} entries for {} waiting",
            flat.entries.len(),
            waiting.len()
        );
        assert!(gcs > 50 && moved > 50, "{rule:?}: GC erased {gcs} blocks, moved {moved} pages");
        flat.check_invariants().unwrap();
    }
}

/// The reverse map's memory follows the blocks holding live pages, not the
/// blocks ever written (issue 26): overwriting a few LPNs until every
/// block of the device has been erased several times holds no more chunks
/// than there are live pages (plus the one copy being placed), under the
/// shared and the flat map.
#[test]
fn the_reverse_map_holds_chunks_for_live_blocks_only() {
    for flat in [false, true] {
        let mut ftl = Ftl::new(&Config::small_for_tests(2, 1, 32, 8).ftl_params());
        if flat {
            ftl.map_flat();
        }
        let blocks = ftl.erase_counts().count() as u32;
        let live = 6u32;
        for round in 0..(10 * blocks * 8 / live) {
            for l in 0..live {
                let (e, _, _) = ftl.program(l % 2, ContentId(round * live + l), false).unwrap();
                ftl.map_pinned(Lpn(l), e);
            }
        }
        ftl.check_invariants().unwrap();
        assert!(ftl.erase_counts().all(|c| c >= 2), "every block erased at least twice (flat: {flat})");
        let held = ftl.p2e.resident_chunks();
        assert!(held <= live + 1, "{held} chunks held for {live} live pages on {blocks} blocks (flat: {flat})");
    }
}

/// The fingerprint index holds the contents with a live primary copy, not
/// every content ever written: 6 LPNs overwritten with a new content each
/// time, 40 times the device's dense limit of ids (`index::dense_limit`),
/// leave a hash map of a few slots.
#[test]
fn the_index_holds_live_contents_only_past_the_dense_limit() {
    let mut ftl = Ftl::new(&Config::small_for_tests(2, 1, 32, 8).ftl_params());
    let limit = index::dense_limit(u64::from(ftl.geometry().total_pages));
    let live = 6u32;
    let stride = 40 * limit / 3000;
    for round in 0..3000 / live {
        for l in 0..live {
            let c = ContentId((round * live + l) * stride);
            let (e, _, _) = ftl.program(l % 2, c, true).unwrap();
            ftl.map_pinned(Lpn(l), e);
        }
    }
    ftl.check_invariants().unwrap();
    assert!(ftl.index_hashed());
    assert_eq!(ftl.indexed_contents(), u64::from(live));
    let held = ftl.index.slots_held();
    assert!(held <= 16, "{held} index slots held for {live} live contents");
    let last = ContentId((3000 / live * live - 1) * stride);
    assert!(ftl.find_duplicate(last).is_some() && ftl.find_duplicate(ContentId(stride)).is_none());
}
