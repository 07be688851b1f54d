//! Hand-computed costs of the PM write path (module doc; the device's own
//! formulas are pinned in `pmem::device`'s tests).

use super::*;
use crate::config::Config;

fn fs(scheme: Scheme, costs: FsCosts) -> NvmFs {
    NvmFs::new(scheme, PmParams::optane_light_dedup(), costs, &Config::fad_table1().ftl_params()).unwrap()
}

/// One 4 KiB block on NOVA: its own work (85 ns), the block's 16 XPLines
/// stored (94 ns, the XPBuffer absorbing them), then the log entry and the
/// tail (94 ns each).
#[test]
fn a_nova_block_write_costs_its_stores() {
    let mut f = fs(Scheme::Nova, FsCosts::default());
    f.write(0, &[ContentId(1)], 0).unwrap();
    assert_eq!(f.now(), Nanos(85 + 94 + 94 + 94));
    let c = f.device().counters();
    assert_eq!((c.store_misses, c.rmw_reads), (16 + 2, 2));
}

/// The same block written twice, in two syscalls. The second is a
/// duplicate: Light-Dedup (IBP) hashes and looks it up (310 + 100), reads
/// the entry (an XPBuffer hit, 169) and the stored block (16 hits, two
/// waves of 12 outstanding: 2 × 169), compares (60), stores the reference
/// count and the hint (94 each) and the log (2 × 94). NV-Dedup replaces the
/// block read and the comparison by an MD5 (8,900) and keeps no hint. With
/// MD5 at 100 ns NV-Dedup would win: the order comes from the costs.
#[test]
fn light_dedup_beats_nv_dedup_on_a_duplicate_only_by_the_modelled_costs() {
    let second = |scheme, costs| {
        let mut f = fs(scheme, costs);
        f.write(0, &[ContentId(7)], 0).unwrap();
        let t = f.now();
        f.write(1, &[ContentId(7)], 0).unwrap();
        (t, f.now() - t, f)
    };
    let (first, ld, f) = second(Scheme::LightDedup(Prefetch::Ibp), FsCosts::default());
    // First write: fs, hash + index, data, entry allocation, reverse map, log.
    assert_eq!(first, Nanos(85 + 310 + 100 + 94 + 94 + 94 + 94 + 94));
    assert_eq!(ld, Nanos(85 + 310 + 100 + 169 + 2 * 169 + 60 + 94 + 94 + 2 * 94));
    assert_eq!(f.engine().unwrap().stat("engine_dup_pages"), Some(1.0));
    let (_, nv, _) = second(Scheme::NvDedup, FsCosts::default());
    assert_eq!(nv, Nanos(85 + 310 + 100 + 169 + 8_900 + 94 + 2 * 94));
    assert!(ld < nv);
    let cheap = FsCosts { md5_ns: 100, ..FsCosts::default() };
    let (_, ld2, _) = second(Scheme::LightDedup(Prefetch::Ibp), cheap.clone());
    let (_, nv2, _) = second(Scheme::NvDedup, cheap);
    assert_eq!(nv2, Nanos(85 + 310 + 100 + 169 + 100 + 94 + 2 * 94));
    assert!(nv2 < ld2, "NV-Dedup {nv2} vs Light-Dedup {ld2}");
}

/// Without In-Block Prefetch the stored block is scanned line after line:
/// 169 ns for the first (a buffer hit) and each further line.
#[test]
fn without_prefetch_the_verify_read_is_a_dependent_scan() {
    let mut f = fs(Scheme::LightDedup(Prefetch::None), FsCosts::default());
    f.write(0, &[ContentId(7)], 0).unwrap();
    let t = f.now();
    f.write(1, &[ContentId(7)], 0).unwrap();
    assert_eq!(f.now() - t, Nanos(85 + 310 + 100 + 169 + 16 * 169 + 60 + 94 + 94 + 2 * 94));
}

/// Content 7 stored once; then two threads each write a duplicate of it
/// at the same time (thread 0 simulated first). Returns each thread's
/// time for its block.
fn two_threads_write_a_duplicate(scheme: Scheme, costs: FsCosts) -> (Nanos, Nanos) {
    let mut f = fs(scheme, costs);
    f.write(0, &[ContentId(7)], 0).unwrap();
    let t = f.now();
    f.threads(2);
    f.set_concurrency(2);
    for th in 0..2u16 {
        f.switch_to(usize::from(th));
        f.write_block(1 + u32::from(th), ContentId(7), th, true, true).unwrap();
    }
    (f.thread_now(0) - t, f.thread_now(1) - t)
}

/// One global index lock (`IndexLock::Global`), NV-Dedup, two threads
/// writing a duplicate at once. Thread 0 takes the lock after its own
/// work and the weak hash (85 + 310), holds it for the lookup (100), the
/// entry read (169) and the MD5 (8,900), so it is free at 9,564; then the
/// reference count and the log (94 + 2 × 94): 9,846, as alone. Thread 1
/// reaches the lock at 395, waits until 9,564 (9,169 ns), holds it for
/// 100 + 169 + 8,900 and stores: 9,564 + 9,169 + 282 = 19,015. With the
/// paper's rhashtable (`Rcu`, the default) nobody waits: thread 1 ends
/// within the device's own contention of thread 0.
#[test]
fn a_global_index_lock_serialises_nv_dedups_md5_by_hand() {
    let global = FsCosts { index_lock: IndexLock::Global, ..FsCosts::default() };
    assert_eq!(two_threads_write_a_duplicate(Scheme::NvDedup, global), (Nanos(9_846), Nanos(19_015)));
    let (a, b) = two_threads_write_a_duplicate(Scheme::NvDedup, FsCosts::default());
    assert_eq!(a, Nanos(9_846));
    assert!(b < Nanos(9_846 + 1_000), "{b}");
}

/// Two threads on one core (`cores = 1`): every computation of thread 0
/// takes twice as long, the device's loads and stores do not:
/// 2 × (85 + 310 + 100 + 8,900) + 169 + 94 + 2 × 94 = 19,241 ns. On two
/// cores (or the paper's 16) it is 9,846 ns, as alone.
#[test]
fn more_threads_than_cores_time_share_the_cpu_by_hand() {
    for (cores, want) in [(1, 19_241), (2, 9_846), (16, 9_846)] {
        let costs = FsCosts { cores, ..FsCosts::default() };
        assert_eq!(two_threads_write_a_duplicate(Scheme::NvDedup, costs).0, Nanos(want), "{cores} cores");
    }
}
