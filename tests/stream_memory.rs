//! A trace replayed as it is read holds a bounded amount of memory however
//! long the trace (issue 26, docs/streaming.md): the peak of live heap
//! bytes, counted by this binary's global allocator, is the same for a
//! trace eight times longer, where the held path's grows by the loaded
//! workload (tens of bytes per request). Its own binary: the counter sees
//! every allocation of the process, so nothing else may run beside it.

use dedupsim::config::Config;
use dedupsim::content::ContentModel;
use dedupsim::runner;
use dedupsim::sim::RunOptions;
use dedupsim::sim::{RequestRecord, RequestSink};
use dedupsim::trace::{LoadOptions, TraceFormat, TraceInput};
use dedupsim::units::Nanos;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Live heap bytes and their peak since the last [`reset_peak`].
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Taken by each test: the counter sees the whole process, so the tests
/// of this binary run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Peak live heap bytes above the level before `f` ran.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

/// An SSDsim ASCII trace of `n` requests (reads and writes of 1-4 pages
/// over 150 pages of the tiny device, 10 ms apart: a load it serves, so
/// that no backlog of queued operations builds up), from a fixed LCG.
fn write_trace(path: &Path, n: u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let pages = 1 + (x >> 60) % 4;
        let lpn = (x >> 20) % (150 - pages);
        let read = (x >> 40) & 1;
        writeln!(out, "{} 0 {} {} {read}", i * 10_000_000, lpn * 8, pages * 8).unwrap();
    }
    out.flush().unwrap();
}

/// The tiny device, a directory named `tag` holding a trace of `n`
/// requests (`short`) and one eight times longer (`long`), and the load
/// options that read them.
struct Setup {
    cfg: Config,
    dir: std::path::PathBuf,
    short: std::path::PathBuf,
    long: std::path::PathBuf,
    load: LoadOptions,
}

fn setup(tag: &str, n: u64) -> Setup {
    let cfg = Config::preset("tiny").unwrap();
    let dir = std::env::temp_dir().join(format!("dedupsim-stream-memory-{tag}{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (short, long) = (dir.join("short.ascii"), dir.join("long.ascii"));
    write_trace(&short, n);
    write_trace(&long, 8 * n);
    let load = LoadOptions {
        format: Some(TraceFormat::Ssdsim),
        page_size: cfg.geometry.page_size,
        capacity_pages: Some(cfg.logical_pages()),
        ..LoadOptions::default()
    };
    Setup { cfg, dir, short, long, load }
}

/// `path` streamed under `policy` with the default content model: the
/// report and its peak live heap.
fn streamed(s: &Setup, path: &Path, policy: &str) -> (dedupsim::report::RunReport, usize) {
    peak_of(|| {
        let (model, opts) = (ContentModel::default(), RunOptions::default());
        runner::run_streamed(&s.cfg, path, &s.load, &model, policy, &opts, &mut |_| {}, &mut |_, _| {})
            .unwrap()
            .expect("a trace without contents streams")
    })
}

/// A request log that counts its records and keeps none.
struct Count(u64);

impl RequestSink for Count {
    fn record(&mut self, _: &RequestRecord) {
        self.0 += 1;
    }
}

#[test]
fn a_streamed_replay_holds_the_same_memory_for_a_longer_trace() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Long enough for the short trace too to fill the reading pipeline
    // (`trace::stream::AHEAD_BATCHES` batches parsed ahead on another
    // thread, each of `BATCH_RECORDS` records): the batches in circulation
    // are then the same for both.
    let n = 40_000;
    let circulating = (dedupsim::trace::stream::AHEAD_BATCHES + 2) * dedupsim::trace::stream::BATCH_RECORDS;
    assert!(n as usize > circulating);
    let setup = setup("", n);
    let Setup { cfg, dir, short, long, load } = &setup;
    let model = ContentModel::default();
    let opts = RunOptions::default();
    let streamed = |path: &Path| streamed(&setup, path, "native");
    let held = |path: &Path| {
        peak_of(|| {
            let w = dedupsim::trace::load(path, load).unwrap().workload;
            let p = runner::prepare_for(w, &model, cfg.seed, &cfg.precondition, false).unwrap();
            runner::run_one(cfg, &p, "native", &opts, &mut |_, _| {}).unwrap()
        })
    };
    // Streamed with the observers of `run --request-log --timeseries`
    // (issue 26): each request's record handed on as it completes, a
    // series whose intervals (100 s: four for the short trace, 32 for the
    // long one) are the output's, not the trace's.
    let observed = |path: &Path| {
        peak_of(|| {
            let mut sink = Count(0);
            let observe = runner::Observe { requests: Some(&mut sink), series: Some(Nanos(100_000_000_000)) };
            let (r, series) = runner::run_streamed_drawing(
                cfg,
                &TraceInput::file(path),
                load,
                &model,
                "native",
                false,
                &opts,
                observe,
                &mut |_| Ok(()),
                &mut |_, _| {},
            )
            .unwrap()
            .expect("a trace without contents streams");
            assert_eq!(sink.0, r.summary.read.count + r.summary.write.count, "a record per request");
            assert!(series.is_some());
            r
        })
    };
    let (s_short, s_short_peak) = streamed(short);
    let (s_long, s_long_peak) = streamed(long);
    // Read from a copy of its bytes in a temporary file, as a trace that
    // can be read only once is (a pipe): the copy is on disk, not in the
    // heap.
    let spooled = |path: &Path| {
        peak_of(|| {
            let input = TraceInput::spooled(path, load).unwrap();
            let (r, _) = runner::run_streamed_drawing(
                cfg,
                &input,
                load,
                &model,
                "native",
                false,
                &opts,
                runner::Observe::default(),
                &mut |_| Ok(()),
                &mut |_, _| {},
            )
            .unwrap()
            .expect("a trace without contents streams");
            r
        })
    };
    let (p_short, p_short_peak) = spooled(short);
    let (p_long, p_long_peak) = spooled(long);
    let (o_short, o_short_peak) = observed(short);
    let (o_long, o_long_peak) = observed(long);
    let (h_short, h_short_peak) = held(short);
    let (h_long, h_long_peak) = held(long);
    std::fs::remove_dir_all(dir).unwrap();
    // The same runs either way.
    let json = |r: &dedupsim::report::RunReport| serde_json::to_string(r).unwrap();
    assert_eq!(json(&s_short), json(&h_short));
    assert_eq!(json(&s_long), json(&h_long));
    assert_eq!(json(&o_short), json(&h_short));
    assert_eq!(json(&p_short), json(&h_short));
    assert_eq!(json(&p_long), json(&h_long));
    assert_eq!(json(&o_long), json(&h_long));
    assert_eq!(s_long.summary.read.count + s_long.summary.write.count, 8 * n);
    // Held: the longer trace's 280,000 more requests are in memory (at
    // least 16 bytes each); streamed: no more than 64 KiB more (batch
    // buffers are sized by the batch, not the trace).
    let extra = 7 * n as usize;
    assert!(
        h_long_peak > h_short_peak + 16 * extra,
        "the meter sees the held workload: {h_short_peak} -> {h_long_peak} bytes"
    );
    assert!(
        s_long_peak <= s_short_peak + (64 << 10),
        "streamed peak grew with the trace: {s_short_peak} -> {s_long_peak} bytes (held: {h_short_peak} -> {h_long_peak})"
    );
    assert!(
        o_long_peak <= o_short_peak + (64 << 10),
        "streamed peak with observers grew with the trace: {o_short_peak} -> {o_long_peak} bytes"
    );
    assert!(
        p_long_peak <= p_short_peak + (64 << 10),
        "streamed peak from a spooled copy grew with the trace: {p_short_peak} -> {p_long_peak} bytes"
    );
    eprintln!("peak heap: spooled {p_short_peak} -> {p_long_peak} B");
    eprintln!("peak heap: observed {o_short_peak} -> {o_long_peak} B");
    eprintln!("peak heap: streamed {s_short_peak} -> {s_long_peak} B, held {h_short_peak} -> {h_long_peak} B");
}

/// With a deduplicating policy the contents are drawn from a model whose
/// population grows with the trace (FAD §IV-A: half the pages written),
/// so tables indexed by content id would grow with it; past the device's
/// dense limit (`dedupsim::ftl::index`: 4 ids per physical page, which
/// both traces here exceed on the tiny device) the fingerprint index
/// holds the live contents only. The peak of a trace eight times longer
/// then grows by the bitmap of ids drawn (1 bit per id: the realized dedup
/// rate) and no more. Same report streamed and held.
#[test]
fn a_streamed_dedup_replay_holds_the_same_memory_for_a_longer_trace() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let setup = setup("dedup-", 40_000);
    let Setup { cfg, dir, short, long, load } = &setup;
    let model = ContentModel::default();
    let opts = RunOptions::default();
    let streamed = |path: &Path| streamed(&setup, path, "dedup");
    let (s_short, s_short_peak) = streamed(short);
    let (s_long, s_long_peak) = streamed(long);
    let w = dedupsim::trace::load(long, load).unwrap().workload;
    let p = runner::prepare_for(w, &model, cfg.seed, &cfg.precondition, true).unwrap();
    let ids = p.workload.content_space as usize;
    let h_long = runner::run_one(cfg, &p, "dedup", &opts, &mut |_, _| {}).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    let json = |r: &dedupsim::report::RunReport| serde_json::to_string(r).unwrap();
    assert_eq!(json(&s_long), json(&h_long));
    assert!(s_short.summary.dedup_rate_achieved > 0.0, "the run deduplicates: {}", s_short.summary.dedup_rate_achieved);
    // 4 B an id would be a dense index's growth; the bitmap is 1 bit.
    assert!(
        s_long_peak <= s_short_peak + (64 << 10) + ids / 8,
        "streamed dedup peak grew with the trace: {s_short_peak} -> {s_long_peak} bytes for {ids} ids"
    );
    let pages = dedupsim::ftl::Ftl::new(&cfg.ftl_params()).geometry().total_pages;
    let limit = dedupsim::ftl::index::dense_limit(u64::from(pages)) as usize;
    assert!(ids > 8 * limit, "{ids} content ids, dense limit {limit}");
    eprintln!("peak heap: streamed dedup {s_short_peak} -> {s_long_peak} B, {ids} content ids");
}
