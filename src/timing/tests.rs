//! Exact tests of the timing model's arithmetic (tR = 20 us, tPROG = 200 us, transfer 102.4 us).

use super::*;
use crate::config::Config;

/// Tiny geometry: 2 channels x 2 chips, tR = 20 us, tPROG = 200 us,
/// tBERS = 1.5 ms, transfer 102.4 us per 4 KiB page.
fn tiny(s: Scheduling, w: WriteCompletion) -> Timing {
    let mut cfg = Config::small_for_tests(2, 2, 16, 4);
    cfg.timing.scheduling = s;
    cfg.timing.write_completion = w;
    Timing::new(&cfg.timing_params())
}

fn rp() -> Timing {
    tiny(Scheduling::ReadPriority, WriteCompletion::Program)
}

const TR: u64 = 20_000;
const TX: u64 = 102_400;
const TP: u64 = 200_000;

/// Runs to the end; completion time of each tag, by tag.
fn run(t: &mut Timing) -> Vec<u64> {
    t.finish();
    let mut out = Vec::new();
    t.take_completions(&mut out);
    out.sort_by_key(|&(tag, _)| tag);
    out.into_iter().map(|(_, d)| d.0).collect()
}

#[test]
fn two_reads_same_chip_serialize() {
    let mut t = rp();
    t.submit(0, Nanos(0), OpKind::Read, 0);
    t.submit(0, Nanos(0), OpKind::Read, 1);
    // The second waits for the whole first (sense + transfer), then its own.
    assert_eq!(run(&mut t), vec![TR + TX, 2 * (TR + TX)]);
    assert_eq!(t.chip_wait()[0], Nanos(TR + TX));
    assert_eq!(t.chip_busy()[0], Nanos(2 * (TR + TX)));
}

#[test]
fn two_reads_same_channel_share_the_bus() {
    let mut t = rp();
    // Chips 0 and 2 are both on channel 0 (channel = chip % 2).
    t.submit(0, Nanos(0), OpKind::Read, 0);
    t.submit(2, Nanos(0), OpKind::Read, 1);
    assert_eq!(run(&mut t), vec![TR + TX, TR + 2 * TX]);
}

/// Per-chip and per-channel accounting (issue 28 item 1): two reads on
/// chips 0 and 2 (channel 0) and a program on chip 1 (channel 1).
#[test]
fn resources_split_time_by_chip_and_channel() {
    let mut t = rp();
    t.submit(0, Nanos(0), OpKind::Read, 0);
    t.submit(2, Nanos(0), OpKind::Read, 1);
    t.submit(1, Nanos(0), OpKind::Program, 2);
    run(&mut t);
    let r = t.resources();
    assert_eq!(r.chip_reads, vec![1, 0, 1, 0]);
    // Chip 2 held its sensed page while chip 0's went over the bus.
    assert_eq!(r.chip_read_busy, vec![Nanos(TR + TX), Nanos(0), Nanos(TR + 2 * TX), Nanos(0)]);
    assert_eq!(r.channel_read, vec![Nanos(2 * TX), Nanos(0)]);
    assert_eq!(r.channel_write, vec![Nanos(0), Nanos(TX)]);
    assert_eq!((r.t_read, r.t_xfer), (Nanos(TR), Nanos(TX)));
}

#[test]
fn two_reads_different_channels_overlap() {
    let mut t = rp();
    t.submit(0, Nanos(0), OpKind::Read, 0);
    t.submit(1, Nanos(0), OpKind::Read, 1);
    assert_eq!(run(&mut t), vec![TR + TX, TR + TX]);
}

/// Dynamic allocation (SSDsim's serve-time rule): a waiting write goes
/// to the first channel, from the rotating start, whose bus is free
/// and which has an idle chip (from its token); read data waiting for
/// the bus goes first.
#[test]
fn dynamic_allocation_serves_writes_where_a_channel_is_free() {
    let mut t = tiny(Scheduling::ReadPriority, WriteCompletion::Transfer);
    for tag in 0..3 {
        t.submit_unplaced(UnplacedWrite { at: Nanos(0), tag, copy: 0, write: 0 });
    }
    // 2 channels x 2 chips (chip g on channel g % 2): the first write
    // starts the rotation at channel 0, the second at channel 1, both
    // at once; the third finds both buses busy until TX and goes to
    // channel 0's next chip (its token moved past chip 0).
    assert_eq!(t.place_next(Nanos(u64::MAX)).map(|p| (p.write.tag, p.chip, p.at)), Some((0, 0, Nanos(0))));
    assert_eq!(t.place_next(Nanos(u64::MAX)).map(|p| (p.write.tag, p.chip, p.at)), Some((1, 1, Nanos(0))));
    // Nothing before `until` (exclusive): it stays queued.
    assert_eq!(t.place_next(Nanos(TX)), None);
    assert!(t.has_unplaced());
    assert_eq!(t.place_next(Nanos(u64::MAX)).map(|p| (p.write.tag, p.chip, p.at)), Some((2, 2, Nanos(TX))));
    assert_eq!(run(&mut t), vec![TX, TX, 2 * TX]);

    // Read data waiting for the bus goes before a waiting write: on one
    // channel of 2 chips, the read on chip 0 senses until TR, its data
    // then takes the bus, and the write arriving at TR gets it only at
    // TR + TX (on chip 0, where the token points: its read is done).
    let mut t = Timing::new(&Config::small_for_tests(1, 2, 16, 4).timing_params());
    t.submit(0, Nanos(0), OpKind::Read, 0);
    t.submit_unplaced(UnplacedWrite { at: Nanos(TR), tag: 1, copy: 0, write: 0 });
    assert_eq!(t.place_next(Nanos(u64::MAX)).map(|p| (p.write.tag, p.chip, p.at)), Some((1, 0, Nanos(TR + TX))));
    assert_eq!(run(&mut t), vec![TR + TX, TR + 2 * TX]);
    // The same write arriving at 0, during the sense: the bus is free
    // and chip 1 idle, so it goes at once and the read's data waits.
    let mut t = Timing::new(&Config::small_for_tests(1, 2, 16, 4).timing_params());
    t.submit(0, Nanos(0), OpKind::Read, 0);
    t.submit_unplaced(UnplacedWrite { at: Nanos(0), tag: 1, copy: 0, write: 0 });
    assert_eq!(t.place_next(Nanos(u64::MAX)).map(|p| (p.write.tag, p.chip, p.at)), Some((1, 1, Nanos(0))));
    assert_eq!(run(&mut t), vec![2 * TX, TX]);
}

/// Dynamic allocation's rotation and chip tokens, kept as counters that
/// wrap (not divisions): on 3 channels x 2 chips, with the rotation
/// started as if 5 pages had been programmed (channel 5 % 3 = 2 first),
/// writes arriving one at a time on an idle device go to channels 2, 0,
/// 1, 2, 0, ... and on each channel to chips 0, 1, 0, ... (the token
/// moves past the chip chosen and wraps).
#[test]
fn dynamic_allocation_rotates_channels_and_chip_tokens() {
    let mut t = Timing::new(&Config::small_for_tests(3, 2, 16, 4).timing_params());
    t.set_programs_before(5);
    let mut got = Vec::new();
    for k in 0..9u64 {
        // Far enough apart that every chip is idle again.
        let at = Nanos(k * 1_000_000);
        t.submit_unplaced(UnplacedWrite { at, tag: k as u32, copy: 0, write: 0 });
        let p = t.place_next(Nanos(u64::MAX)).expect("an idle device serves at once");
        assert_eq!(p.at, at);
        got.push(p.chip);
    }
    // Chip g is on channel g % 3, its chip g / 3 there.
    let want: Vec<u32> = (0..9u32).map(|k| ((k + 2) % 3) + 3 * ((k / 3) % 2)).collect();
    assert_eq!(got, want);
    assert_eq!(got, [2, 0, 1, 5, 3, 4, 2, 0, 1]);
}

/// Chip tokens given at or past a channel's chip count place as their
/// remainder: `set_chip_tokens` keeps each below the chips, once, so that
/// the write-slot search need not check it (on 2 channels x 3 chips,
/// tokens 7 and 3 are 1 and 0: channel 0 tries chip 1 first, channel 1
/// chip 0).
#[test]
fn chip_tokens_past_the_chips_place_as_their_remainder() {
    let placed = |tokens: [u32; 2]| {
        let mut t = Timing::new(&Config::small_for_tests(2, 3, 16, 4).timing_params());
        t.set_chip_tokens(tokens);
        let mut got = Vec::new();
        for k in 0..6u64 {
            let at = Nanos(k * 1_000_000);
            t.submit_unplaced(UnplacedWrite { at, tag: k as u32, copy: 0, write: 0 });
            got.push(t.place_next(Nanos(u64::MAX)).expect("an idle device serves at once").chip);
        }
        got
    };
    // Chip g is on channel g % 2, its chip g / 2 there: channel 0 from
    // chip 1, channel 1 from chip 0, alternating channels.
    assert_eq!(placed([1, 0]), [2, 1, 4, 3, 0, 5]);
    assert_eq!(placed([7, 3]), placed([1, 0]));
}

#[test]
fn program_transfers_then_programs() {
    let mut t = rp();
    t.submit(0, Nanos(0), OpKind::Program, 0);
    // Same channel, other chip: waits only for the bus.
    t.submit(2, Nanos(0), OpKind::Program, 1);
    // A read on chip 0 arriving at 1 us must wait for its program.
    t.submit(0, Nanos(1_000), OpKind::Read, 2);
    // The read's data (sensed at TX + TP + TR) goes out at once: chip
    // 2's transfer in ended at 2 TX.
    assert_eq!(run(&mut t), vec![TX + TP, 2 * TX + TP, TX + TP + TR + TX]);
}

/// SSDsim's rule: a write page is done when its data is in the register.
#[test]
fn transfer_completion_reports_the_transfer_end() {
    let mut t = tiny(Scheduling::ReadPriority, WriteCompletion::Transfer);
    t.submit(0, Nanos(0), OpKind::Program, 0);
    t.submit(2, Nanos(0), OpKind::Program, 1);
    assert_eq!(run(&mut t), vec![TX, 2 * TX]);
}

/// The bus is never left idle while a chip holds read data: the same
/// layout reads in the same time whatever order its pages are issued.
#[test]
fn bus_fills_gaps_whatever_the_page_order() {
    // Chip 0 is busy programming until TX + TP; chip 2 is idle. A read
    // of one page on each, issued in both orders.
    let order = |first: u32, second: u32| {
        let mut t = rp();
        t.submit(0, Nanos(0), OpKind::Program, 9);
        t.submit(first, Nanos(1_000), OpKind::Read, first);
        t.submit(second, Nanos(1_000), OpKind::Read, second);
        let v = run(&mut t);
        (v[0], v[1]) // tags 0 and 2, sorted
    };
    let a = order(0, 2);
    let b = order(2, 0);
    assert_eq!(a, b);
    // Chip 2's read senses from 1 us and waits for the bus (chip 0's
    // transfer in holds it until TX); chip 0's read starts after its
    // program.
    assert_eq!(a, (TX + TP + TR + TX, TX + TX));
}

/// A read arriving behind a queued program on a busy chip: under read
/// priority it is served first when the chip frees, under FCFS second.
#[test]
fn read_priority_reorders_a_waiting_program() {
    for (s, want) in [
        // Program A (tag 0) holds chip 0 until TX + TP; the read R (tag
        // 2) senses then, goes out at once; B (tag 1) follows.
        (Scheduling::ReadPriority, vec![TX + TP, TX + TP + TR + TX + TX + TP, TX + TP + TR + TX]),
        // FCFS: B (arrived at 1 us) transfers in at TX + TP and programs
        // until 2 (TX + TP); then R.
        (Scheduling::Fcfs, vec![TX + TP, 2 * (TX + TP), 2 * (TX + TP) + TR + TX]),
    ] {
        let mut t = tiny(s, WriteCompletion::Program);
        t.submit(0, Nanos(0), OpKind::Program, 0);
        t.submit(0, Nanos(1_000), OpKind::Program, 1);
        t.submit(0, Nanos(2_000), OpKind::Read, 2);
        assert_eq!(run(&mut t), want, "{s:?}");
    }
}

/// SSDsim's duplicate-read shortcut: a second read of a page whose
/// first read has not started its transfer out completes 1 us after
/// arriving; once the first read's data is going out, a new read of the
/// page goes to the flash again. Off, every read goes to the flash.
#[test]
fn duplicate_read_shortcut() {
    let mut cfg = Config::small_for_tests(2, 2, 16, 4);
    cfg.timing.duplicate_read_shortcut = true;
    let mut t = Timing::new(&cfg.timing_params());
    t.submit_read(0, Nanos(0), 7, 0);
    t.submit_read(0, Nanos(5_000), 7, 1); // first still sensing
    t.submit_read(0, Nanos(TR + 1_000), 7, 2); // first's data going out
    assert_eq!(run(&mut t), vec![TR + TX, 6_000, 2 * (TR + TX)]);
    assert_eq!(t.shortcut_reads(), 1);
    let mut t = rp();
    t.submit_read(0, Nanos(0), 7, 0);
    t.submit_read(0, Nanos(5_000), 7, 1);
    assert_eq!(run(&mut t), vec![TR + TX, 2 * (TR + TX)]);
    assert_eq!(t.shortcut_reads(), 0);
}

/// The lazy events (a phase end with nothing queued behind it is no
/// event, an arrival is decided at once) make the same decisions as
/// one event per phase end with arrivals decided at the next settle
/// ([`Timing::report_at_completion`]): random operation sequences on
/// random small channels give the same completions, busy and wait
/// times under both.
#[test]
fn lazy_events_decide_as_one_event_per_phase() {
    use rand::{Rng, SeedableRng};
    for seed in 0..2_000u64 {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let (chans, chips) = (rng.gen_range(1..3), rng.gen_range(1..4));
        let mut cfg = Config::small_for_tests(chans, chips, 16, 4);
        cfg.timing.scheduling = if rng.gen_bool(0.5) { Scheduling::ReadPriority } else { Scheduling::Fcfs };
        cfg.timing.write_completion =
            if rng.gen_bool(0.5) { WriteCompletion::Transfer } else { WriteCompletion::Program };
        cfg.timing.duplicate_read_shortcut = rng.gen_bool(0.3);
        let mut lazy = Timing::new(&cfg.timing_params());
        let mut each = Timing::new(&cfg.timing_params());
        each.report_at_completion();
        let gap = [0u64, 1_000, 20_000, 100_000, 300_000][rng.gen_range(0..5)];
        let mut t = 0;
        for i in 0..rng.gen_range(1..200u32) {
            if rng.gen_bool(0.6) {
                t += rng.gen_range(0..=gap);
            }
            let chip = rng.gen_range(0..chans * chips);
            let tag = if rng.gen_bool(0.1) { NO_TAG } else { i };
            for m in [&mut lazy, &mut each] {
                match i % 9 {
                    0..=3 => m.submit_read(chip, Nanos(t), i % 4, tag),
                    4..=7 => m.submit(chip, Nanos(t), OpKind::Program, tag),
                    _ => m.submit(chip, Nanos(t), OpKind::Gc(Nanos(u64::from(i) * 7_919)), NO_TAG),
                }
            }
        }
        let all = |m: &mut Timing| {
            m.finish();
            let mut out = Vec::new();
            m.take_completions(&mut out);
            out.sort_unstable();
            out
        };
        assert_eq!(all(&mut lazy), all(&mut each), "seed {seed}");
        assert_eq!(lazy.chip_busy(), each.chip_busy(), "seed {seed}");
        assert_eq!(lazy.chip_wait(), each.chip_wait(), "seed {seed}");
        assert_eq!(lazy.shortcut_reads(), each.shortcut_reads(), "seed {seed}");
    }
}

#[test]
fn gc_charges_the_chip() {
    let mut t = rp();
    let d = t.gc_duration(3, 1);
    assert_eq!(d, Nanos(3 * (TR + TP) + 1_500_000));
    t.submit(1, Nanos(1_000), OpKind::Gc(d), NO_TAG);
    t.submit(1, Nanos(2_000), OpKind::Read, 0);
    assert_eq!(run(&mut t), vec![1_000 + d.0 + TR + TX]);
}

/// `gc_wait`, by hand (chip 0 on channel 0, chip 1 on channel 1):
/// GC on chip 1 from 1 us to 1 us + d. A read arriving on chip 1 during
/// it (tag 0) waits behind it; a program arriving during it (tag 1)
/// starts after tag 0's transfer and waited behind it too; a read on chip 0
/// at the same time (tag 2) did not; a read on chip 1 after the GC
/// ended (tag 3) did not, and neither did a read that waited on chip 1
/// only for tag 0's read (tag 4, arriving after the GC ended, while tag
/// 0 was sensing). Flags are cleared when read; untracked, none is set.
#[test]
fn gc_waits_are_marked_by_hand() {
    for tracked in [true, false] {
        let mut t = rp();
        if tracked {
            t.track_gc_waits();
        }
        let d = t.gc_duration(1, 1);
        let end = 1_000 + d.0;
        t.submit(1, Nanos(1_000), OpKind::Gc(d), NO_TAG);
        t.submit(0, Nanos(2_000), OpKind::Read, 2);
        t.submit(1, Nanos(2_000), OpKind::Read, 0);
        t.submit(1, Nanos(3_000), OpKind::Program, 1);
        t.submit(1, Nanos(end + 1), OpKind::Read, 4);
        t.submit(1, Nanos(end + 10 * (TR + TX + TP)), OpKind::Read, 3);
        let done = run(&mut t);
        // Tag 0 starts sensing when the GC ends; tag 4 reads after it.
        assert_eq!(done[0], end + TR + TX);
        assert_eq!(done[4], end + 2 * (TR + TX));
        let want = if tracked { [true, true, false, false, false] } else { [false; 5] };
        for (tag, w) in want.into_iter().enumerate() {
            assert_eq!(t.took_gc_wait(tag as u32), w, "tag {tag}, tracked {tracked}");
            assert!(!t.took_gc_wait(tag as u32), "tag {tag}: cleared once read");
        }
    }
}

#[test]
fn fingerprint_engine_is_fcfs() {
    let mut t = rp();
    assert_eq!(t.fingerprint(Nanos(0)), Nanos(32_000));
    assert_eq!(t.fingerprint(Nanos(0)), Nanos(64_000));
    assert_eq!(t.fingerprint(Nanos(100_000)), Nanos(132_000));
}

/// Every hash model on a 4-page request A at 0 then a 1-page request B
/// at 10 us, with 1 and 2 engines (32 us per page): when each page may
/// be programmed.
#[test]
fn hash_models_on_a_four_page_write() {
    const FP: u64 = 32_000;
    use HashOverlap::{BeforeFlash, Pipelined};
    use HashUnit::{Page, Request};
    let cases = [
        // One engine: the unit does not matter; before-flash holds A's
        // pages until its last hash.
        (Page, Pipelined, 1, [FP, 2 * FP, 3 * FP, 4 * FP], 5 * FP),
        (Request, Pipelined, 1, [FP, 2 * FP, 3 * FP, 4 * FP], 5 * FP),
        (Page, BeforeFlash, 1, [4 * FP; 4], 5 * FP),
        (Request, BeforeFlash, 1, [4 * FP; 4], 5 * FP),
        // Two engines, page unit: A's pages in pairs; B waits for them.
        (Page, Pipelined, 2, [FP, FP, 2 * FP, 2 * FP], 3 * FP),
        (Page, BeforeFlash, 2, [2 * FP; 4], 3 * FP),
        // Request unit: A holds engine 0 for 4 FP; B uses engine 1 at
        // once and is ready before A.
        (Request, Pipelined, 2, [FP, 2 * FP, 3 * FP, 4 * FP], 10_000 + FP),
        (Request, BeforeFlash, 2, [4 * FP; 4], 10_000 + FP),
    ];
    for (unit, overlap, engines, a, b) in cases {
        let mut cfg = Config::small_for_tests(2, 2, 16, 4);
        cfg.dedup.hash_unit = unit;
        cfg.dedup.hash_overlap = overlap;
        cfg.dedup.hash_engines = engines;
        let mut t = Timing::new(&cfg.timing_params());
        let mut ready = Vec::new();
        t.fingerprint_request(Nanos(0), 4, &mut ready);
        assert_eq!(ready, a.map(Nanos), "{unit:?} {overlap:?} {engines} engines");
        t.fingerprint_request(Nanos(10_000), 1, &mut ready);
        assert_eq!(ready, [Nanos(b)], "{unit:?} {overlap:?} {engines} engines");
        // The load: 5 pages of FP; each page waited from its request's
        // arrival to its hash's start (the overlap model does not
        // change when hashes start).
        let wait = match (unit, engines) {
            // A's pages start at 0, FP, 2 FP, 3 FP; B at 4 FP.
            (_, 1) => 6 * FP + (4 * FP - 10_000),
            // A's pairs at 0 and FP; B at 2 FP.
            (Page, _) => 2 * FP + (2 * FP - 10_000),
            // A on one engine as above; B on the other at once.
            (Request, _) => 6 * FP,
        };
        let load = HashLoad { engines, pages: 5, busy: Nanos(5 * FP), wait_ns: u128::from(wait) };
        assert_eq!(t.hash_load(), load, "{unit:?} {overlap:?} {engines} engines");
    }
}

#[cfg(test)]
mod slot_memo {
    use super::*;
    use proptest::prelude::*;

    /// One step of a random schedule: an operation arriving (0 read,
    /// 1 program, 2 GC, 3 a waiting write) `dt` after the previous step on
    /// `chip`, then placing the waiting writes served before `dt + reach`.
    fn step() -> impl Strategy<Value = (u8, u32, u64, u64)> {
        (0u8..4, 0u32..12, 0u64..150_000, 0u64..400_000)
    }

    /// Completions reported so far, in the order reported.
    fn drain(t: &mut Timing) -> Vec<(u32, Nanos)> {
        let mut out = Vec::new();
        t.take_completions(&mut out);
        out
    }

    proptest! {
        /// What a channel's write-slot search remembers only saves work:
        /// placing with the memo gives the placements, and the
        /// completions in the order they are reported at each step (a
        /// search runs the same events), of searching afresh every time,
        /// on 2 channels x 2 chips, 3 x 3 and 4 x 1, the rotation started
        /// anywhere.
        #[test]
        fn memo_places_as_a_fresh_search(
            steps in proptest::collection::vec(step(), 1..120),
            geo in 0usize..3,
            before in 0u64..12,
        ) {
            let (channels, chips) = [(2, 2), (3, 3), (4, 1)][geo];
            let new = || {
                let mut t = Timing::new(&Config::small_for_tests(channels, chips, 16, 4).timing_params());
                t.set_programs_before(before);
                t
            };
            let (mut a, mut b) = (new(), new());
            let mut now = 0u64;
            for (tag, &(kind, chip, dt, reach)) in steps.iter().enumerate() {
                now += dt;
                let (at, tag) = (Nanos(now), tag as u32);
                let chip = chip % (channels * chips);
                for t in [&mut a, &mut b] {
                    match kind {
                        0 => t.submit(chip, at, OpKind::Read, tag),
                        1 => t.submit(chip, at, OpKind::Program, tag),
                        2 => t.submit(chip, at, OpKind::Gc(Nanos(300_000)), NO_TAG),
                        _ => t.submit_unplaced(UnplacedWrite { at, tag, copy: 0, write: 0 }),
                    }
                }
                prop_assert_eq!(drain(&mut a), drain(&mut b));
                loop {
                    b.forget_slots();
                    let (pa, pb) = (a.place_next(Nanos(now + reach)), b.place_next(Nanos(now + reach)));
                    prop_assert_eq!(pa, pb);
                    prop_assert_eq!(drain(&mut a), drain(&mut b));
                    if pa.is_none() {
                        break;
                    }
                }
            }
            loop {
                b.forget_slots();
                let (pa, pb) = (a.place_next(Nanos(u64::MAX)), b.place_next(Nanos(u64::MAX)));
                prop_assert_eq!(pa, pb);
                prop_assert_eq!(drain(&mut a), drain(&mut b));
                if pa.is_none() {
                    break;
                }
            }
            prop_assert_eq!(run(&mut a), run(&mut b));
        }
    }
}
