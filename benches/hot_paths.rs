//! Micro-benchmarks of the simulator's hot structures, swept over sizes:
//! FTL overwrite (map + release + program), fingerprint lookup, GC under
//! steady overwrite, and the timing model. End-to-end speed is measured by
//! `dedupsim bench` (BENCHMARKS.md).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use dedupsim::config::{Config, GeometryConfig};
use dedupsim::ftl::Ftl;
use dedupsim::timing::{OpKind, Timing};
use dedupsim::units::{ContentId, Lpn, Nanos};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// fad-table1 with `blocks_per_plane` blocks (sweeps the table sizes).
fn config(blocks_per_plane: u32) -> Config {
    let mut cfg = Config::fad_table1();
    cfg.geometry = GeometryConfig { blocks_per_plane, ..cfg.geometry };
    cfg
}

fn overwrite(c: &mut Criterion) {
    let mut g = c.benchmark_group("ftl_overwrite");
    for blocks in [256u32, 2048] {
        let cfg = config(blocks);
        let mut ftl = Ftl::new(&cfg.ftl_params());
        let span = ftl.logical_pages() / 2;
        let units = ftl.geometry().unit_count();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut k = 0u32;
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::from_parameter(span), &span, |b, &span| {
            b.iter(|| {
                let lpn = Lpn(rng.gen_range(0..span));
                k = k.wrapping_add(1);
                let (e, _, _) = ftl.program(k % units, ContentId(k), false).expect("fits");
                ftl.map_pinned(lpn, e);
            })
        });
    }
    g.finish();
}

fn lookup(c: &mut Criterion) {
    let mut g = c.benchmark_group("fingerprint_lookup");
    for contents in [10_000u32, 1_000_000] {
        let cfg = config(2048);
        let mut ftl = Ftl::new(&cfg.ftl_params());
        let units = ftl.geometry().unit_count();
        for i in 0..contents {
            let (e, _, _) = ftl.program(i % units, ContentId(i), true).expect("fits");
            ftl.map_pinned(Lpn(i), e);
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::from_parameter(contents), &contents, |b, &n| {
            b.iter(|| black_box(ftl.find_duplicate(ContentId(rng.gen_range(0..2 * n)))))
        });
    }
    g.finish();
}

fn gc_steady_state(c: &mut Criterion) {
    // A small device kept 90% full: most programs eventually trigger GC.
    let mut g = c.benchmark_group("gc_steady_overwrite");
    for blocks in [64u32, 512] {
        let mut cfg = Config::fad_table1();
        cfg.geometry = GeometryConfig {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: blocks,
            pages_per_block: 64,
            page_size: 4096,
            ..cfg.geometry
        };
        cfg.gc.min_free_blocks = 4;
        let mut ftl = Ftl::new(&cfg.ftl_params());
        let span = ftl.logical_pages() * 9 / 10;
        let units = ftl.geometry().unit_count();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut k = 0u32;
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::from_parameter(blocks), &blocks, |b, _| {
            b.iter(|| {
                k = k.wrapping_add(1);
                let (e, _, gc) = ftl.program(k % units, ContentId(k), false).expect("fits");
                ftl.map_pinned(Lpn(rng.gen_range(0..span)), e);
                black_box(gc)
            })
        });
    }
    g.finish();
}

fn timing(c: &mut Criterion) {
    let cfg = Config::fad_table1();
    let mut t = Timing::new(&cfg.timing_params());
    let mut now = 0u64;
    let mut chip = 0u32;
    let mut done = Vec::new();
    c.bench_function("timing_read_page", |b| {
        b.iter(|| {
            // One page read submitted and its channel advanced (the event
            // scheduler's per-operation cost), completions drained.
            now += 1000;
            chip = (chip + 7) % 16;
            t.submit(chip, Nanos(now), OpKind::Read, 0);
            t.take_completions(&mut done);
            black_box(done.len());
            done.clear();
        })
    });
}

criterion_group!(benches, overwrite, lookup, gc_steady_state, timing);
criterion_main!(benches);
