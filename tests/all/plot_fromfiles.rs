//! Figures (`dedupsim::plot`) and traces built from directory trees
//! (`dedupsim::fromfiles`, `dedupsim trace from-files`).
//!
//! The sample figures are also left in `target/tmp/plots/` (cargo's
//! `CARGO_TARGET_TMPDIR`) for a person to look at.

use dedupsim::plot::{self, PlotError};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------
// Plots
// ---------------------------------------------------------------------------

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

fn sample_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn bars_data() -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let cats: Vec<String> =
        ["hm_0", "mail", "homes", "webvm", "src1_2", "usr_0", "Avg."].iter().map(|s| s.to_string()).collect();
    let series = vec![
        ("Dedup".to_string(), vec![1.0; 7]),
        ("FAD-r".to_string(), vec![0.91, 0.83, 0.88, 0.95, 0.79, 0.9, 0.877]),
        ("FAD-w".to_string(), vec![0.84, 0.71, 0.8, 0.93, 0.7, 0.86, 0.807]),
        ("FAD".to_string(), vec![0.8, 0.66, 0.76, 0.9, 0.64, 0.82, 0.763]),
    ];
    (cats, series)
}

fn cdf_data() -> Vec<(String, Vec<(f64, f64)>)> {
    let mk = |scale: f64| -> Vec<(f64, f64)> {
        (0..200)
            .map(|i| {
                let f = (i + 1) as f64 / 200.0;
                // Heavy-tailed: 20 us to several ms.
                (20.0 * scale * (1.0 / (1.0 - f * 0.999)).powf(1.4), f)
            })
            .collect()
    };
    vec![("Dedup".to_string(), mk(1.0)), ("FAD".to_string(), mk(0.7))]
}

fn lines_data() -> Vec<(String, Vec<(f64, f64)>)> {
    let rho = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];
    vec![
        ("write".to_string(), rho.iter().map(|&r| (r, 1.0 + r * 0.6 - r * r * 0.5)).collect()),
        ("read".to_string(), rho.iter().map(|&r| (r, 1.0 + r * 0.3)).collect()),
    ]
}

fn check_files(stem: &Path) -> (Vec<u8>, Vec<u8>) {
    let svg = std::fs::read(stem.with_extension("svg")).unwrap();
    let png = std::fs::read(stem.with_extension("png")).unwrap();
    assert!(svg.starts_with(b"<svg"), "{}", String::from_utf8_lossy(&svg[..svg.len().min(80)]));
    assert!(svg.len() > 1000);
    assert!(png.starts_with(PNG_MAGIC));
    assert!(png.len() > 1000);
    (svg, png)
}

/// A named figure writer: draws into the given path stem.
type Figure<'a> = Box<dyn Fn(&Path) -> Result<(), PlotError> + 'a>;

#[test]
fn plots_write_svg_and_png_deterministically() {
    let dir = sample_dir();
    let (cats, series) = bars_data();
    let figs: Vec<(&str, Figure)> = vec![
        ("bars", Box::new(|s: &Path| plot::grouped_bars(s, "Write latency", "Mean latency (µs)", &cats, &series))),
        (
            "bars_normalized",
            Box::new(|s: &Path| {
                plot::grouped_bars_normalized(s, "Normalized write latency", "Normalized latency", &cats, &series)
            }),
        ),
        (
            "bars_many",
            Box::new(|s: &Path| {
                // Every policy on ten workloads: the legend wraps, labels shrink.
                let pols = ["native", "dedup", "har", "fcrc", "fad-rpo", "fad-rwpo", "fad-rwpo-rewrite", "fad"];
                let cats: Vec<String> = (0..10).map(|i| format!("workload-{i}")).chain(["Avg.".to_string()]).collect();
                let series: Vec<(String, Vec<f64>)> = pols
                    .iter()
                    .enumerate()
                    .map(|(j, p)| {
                        (p.to_string(), (0..11).map(|i| 0.5 + ((i * 7 + j * 3) % 10) as f64 / 12.0).collect())
                    })
                    .collect();
                plot::grouped_bars_normalized(
                    s,
                    "Normalized read latency, every policy",
                    "Normalized latency",
                    &cats,
                    &series,
                )
            }),
        ),
        ("cdf", Box::new(|s: &Path| plot::cdf(s, "Write latency CDF", &cdf_data()))),
        ("lines", Box::new(|s: &Path| plot::lines(s, "Speedup vs ρ", "ρ", "Speedup over Dedup", &lines_data()))),
    ];
    for (name, f) in &figs {
        let stem = dir.join(name);
        f(&stem).unwrap();
        let (svg1, png1) = check_files(&stem);
        f(&stem).unwrap();
        let (svg2, png2) = check_files(&stem);
        assert!(svg1 == svg2, "{name}: SVG differs between two identical calls");
        assert!(png1 == png2, "{name}: PNG differs between two identical calls");
        let text = String::from_utf8(svg1).unwrap();
        assert!(text.contains("font-family=\"sans-serif\""), "{name}: no text in the SVG");
    }
    // Legend and category labels are in the SVG as text.
    let text = std::fs::read_to_string(dir.join("bars.svg")).unwrap();
    for word in ["FAD-w", "webvm", "Avg.", "Write latency"] {
        assert!(text.contains(word), "{word} missing from bars.svg");
    }
}

#[test]
fn plots_reject_empty_and_non_finite_input() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("x");
    let (cats, series) = bars_data();
    assert!(matches!(plot::grouped_bars(&stem, "t", "y", &[], &series), Err(PlotError::NoData { .. })));
    assert!(matches!(plot::grouped_bars(&stem, "t", "y", &cats, &[]), Err(PlotError::NoData { .. })));
    let nan = vec![("s".to_string(), vec![f64::NAN; cats.len()])];
    assert!(matches!(plot::grouped_bars(&stem, "t", "y", &cats, &nan), Err(PlotError::BadData { .. })));
    let neg = vec![("s".to_string(), vec![-1.0; cats.len()])];
    assert!(matches!(plot::grouped_bars_normalized(&stem, "t", "y", &cats, &neg), Err(PlotError::BadData { .. })));
    assert!(matches!(plot::cdf(&stem, "t", &[]), Err(PlotError::NoData { .. })));
    let empty = vec![("s".to_string(), vec![])];
    assert!(matches!(plot::cdf(&stem, "t", &empty), Err(PlotError::NoData { .. })));
    let nan_pt = vec![("s".to_string(), vec![(1.0, f64::NAN)])];
    let e = plot::lines(&stem, "t", "x", "y", &nan_pt).unwrap_err();
    assert!(e.to_string().contains(&stem.display().to_string()), "{e}");
    assert!(!stem.with_extension("svg").exists(), "nothing is written on bad input");
    // Degenerate but valid: a single point, a single zero bar.
    plot::lines(&stem, "", "x", "y", &[("one".to_string(), vec![(1.0, 1.0)])]).unwrap();
    plot::grouped_bars(&stem, "", "y", &cats[..1], &[("z".to_string(), vec![0.0])]).unwrap();
    check_files(&stem);
}

#[test]
fn cdf_from_a_latency_histogram() {
    let mut h = dedupsim::metrics::LatencyHistogram::default();
    for us in [30u64, 40, 50, 60, 2_000, 9_000] {
        h.record(dedupsim::units::Nanos::from_us(us));
    }
    let pts = plot::cdf_points_us(&h);
    assert_eq!(pts.last().unwrap().1, 1.0);
    assert!((pts[0].0 - 30.0).abs() < 0.1, "{pts:?}");
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("h");
    plot::cdf(&stem, "hist", &[("h".to_string(), pts)]).unwrap();
    check_files(&stem);
}

// ---------------------------------------------------------------------------
// From files
// ---------------------------------------------------------------------------

use dedupsim::fromfiles::{self, FromFilesError, FromFilesOptions, FromFilesResult, ReadPhase};
use dedupsim::trace::{load, write_native, LoadOptions, TraceRecord};
use dedupsim::units::{Nanos, Op};

const P: usize = 4096;

fn page(b: u8) -> Vec<u8> {
    vec![b; P]
}

/// A tree with known content (4 KiB pages X = all 1s, Y = all 2s):
///
/// | path (trace order)    | content            | pages |
/// |-----------------------|--------------------|-------|
/// | Z                     | "hello"            | 1     |
/// | a.bin                 | X Y                | 2     |
/// | b_copy.bin            | X Y (copy of a)    | 2     |
/// | c_repeat.bin          | X X "abc"          | 3     |
/// | empty                 | (empty: skipped)   | 0     |
/// | sub-x                 | 4096 zero bytes    | 1     |
/// | sub/d.txt             | "hello"            | 1     |
/// | sub/deeper/e          | Y + 100 × 0x02     | 2     |
///
/// plus two symbolic links (to a file and to a directory), never followed.
/// 12 pages, 6 distinct: "hello"+pad, X, Y, "abc"+pad, zeros, 100×2+pad.
/// `sub-x` comes before `sub/...` because '-' < '/' byte-wise.
fn make_tree(root: &Path) {
    let w = |rel: &str, data: &[u8]| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    };
    let xy = [page(1), page(2)].concat();
    w("a.bin", &xy);
    w("b_copy.bin", &xy);
    w("c_repeat.bin", &[page(1), page(1), b"abc".to_vec()].concat());
    w("empty", b"");
    w("sub/d.txt", b"hello");
    w("sub/deeper/e", &[page(2), vec![2u8; 100]].concat());
    w("sub-x", &page(0));
    w("Z", b"hello");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("a.bin", root.join("link")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("dirlink")).unwrap();
    }
}

const ORDER: [&str; 7] = ["Z", "a.bin", "b_copy.bin", "c_repeat.bin", "sub-x", "sub/d.txt", "sub/deeper/e"];
const PAGES: [u64; 7] = [1, 2, 2, 3, 1, 1, 2];

fn scan_tree(root: &Path, opts: &FromFilesOptions) -> FromFilesResult {
    let mut last = 0;
    let res = fromfiles::scan(&[root.to_path_buf()], opts, &mut |b| {
        assert!(b >= last, "progress is cumulative");
        last = b;
    })
    .unwrap();
    assert_eq!(last, res.bytes, "progress reaches the bytes read");
    res
}

fn hash_of(data: &[u8]) -> [u8; 16] {
    let mut d = data.to_vec();
    d.resize(P, 0);
    xxhash_rust::xxh3::xxh3_128(&d).to_be_bytes()
}

#[test]
fn from_files_lays_out_files_and_counts_dedup_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let res = scan_tree(&root, &FromFilesOptions::default());

    let names: Vec<String> =
        res.files.iter().map(|f| f.path.strip_prefix(&root).unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ORDER);
    assert_eq!(res.records.len(), 7);
    assert_eq!(res.pages, 12);
    assert_eq!(res.distinct_pages, 6);
    assert_eq!(res.dedup_rate(), 0.5);
    assert_eq!(res.bytes, 5 + 2 * 8192 + 8195 + 4096 + 5 + 4196);
    assert_eq!((res.empty_files, res.symlinks, res.special, res.reads), (1, 2, 0, 0));
    assert!(res.skipped.is_empty(), "{:?}", res.skipped);

    // Back to back, page-aligned, one write each, 100 us apart.
    let mut offset = 0;
    for (i, (r, pages)) in res.records.iter().zip(PAGES).enumerate() {
        assert_eq!(r.op, Op::Write);
        assert_eq!((r.offset, r.size, r.volume), (offset, pages * P as u64, 0), "record {i}");
        assert_eq!(r.time, Nanos(i as u64 * 100_000));
        assert_eq!(r.content.as_ref().unwrap().len() as u64, pages);
        assert_eq!(res.files[i].offset, offset);
        offset += pages * P as u64;
    }
    // Content: xxh3-128 of each zero-padded page.
    let c = |i: usize| res.records[i].content.clone().unwrap();
    assert_eq!(c(0), vec![hash_of(b"hello")]);
    assert_eq!(c(1), vec![hash_of(&page(1)), hash_of(&page(2))]);
    assert_eq!(c(1), c(2));
    assert_eq!(c(3), vec![hash_of(&page(1)), hash_of(&page(1)), hash_of(b"abc")]);
    assert_eq!(c(4), vec![hash_of(&[])]);
    assert_eq!(c(5), c(0));
    assert_eq!(c(6), vec![hash_of(&page(2)), hash_of(&[2u8; 100])]);

    // Deterministic: a second scan gives the same records.
    assert_eq!(scan_tree(&root, &FromFilesOptions::default()).records, res.records);
    // The same tree twice: Light-Dedup's "Copy" scenario.
    let twice = fromfiles::scan(&[root.clone(), root.clone()], &FromFilesOptions::default(), &mut |_| {}).unwrap();
    assert_eq!((twice.records.len(), twice.pages, twice.distinct_pages), (14, 24, 6));
    assert_eq!(twice.dedup_rate(), 0.75);
}

fn round_trip(records: &[TraceRecord], page_size: u32) -> dedupsim::workload::Workload {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("files.trace");
    write_native(records, std::fs::File::create(&path).unwrap()).unwrap();
    let opts = LoadOptions { page_size, ..LoadOptions::default() };
    load(&path, &opts).unwrap().workload
}

#[test]
fn from_files_trace_loads_back_with_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let res = scan_tree(&root, &FromFilesOptions::default());
    let w = round_trip(&res.records, 4096);
    assert!(w.has_content());
    assert_eq!(w.requests.len(), 7);
    assert_eq!(u64::from(w.content_space), res.distinct_pages);
    assert_eq!(w.lpn_span, 12);
    let st = dedupsim::trace::stats(&w);
    assert_eq!(st.dedup_rate, Some(0.5));
    let ids = |i: usize| w.content_of(&w.requests[i]).to_vec();
    assert_eq!(ids(0), ids(5));
    assert_eq!(ids(1), ids(2));
    assert_eq!(ids(3)[0], ids(3)[1]);
    let lpns: Vec<(u32, u32)> = w.requests.iter().map(|r| (r.lpn, r.pages)).collect();
    assert_eq!(lpns, vec![(0, 1), (1, 2), (3, 2), (5, 3), (8, 1), (9, 1), (10, 2)]);
}

#[test]
fn from_files_with_larger_pages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let opts = FromFilesOptions { page_size: 8192, ..FromFilesOptions::default() };
    let res = scan_tree(&root, &opts);
    // 8 KiB pages: [hello,0] [X,Y] [X,Y] [X,X] [abc,0] [0,0] [hello,0] [Y,p100]
    assert_eq!(res.pages, 8);
    assert_eq!(res.distinct_pages, 6);
    assert_eq!(res.dedup_rate(), 0.25);
    let sizes: Vec<u64> = res.records.iter().map(|r| r.size).collect();
    assert_eq!(sizes, vec![8192, 8192, 8192, 16384, 8192, 8192, 8192]);
    // The loader at 8 KiB pages sees the same equalities.
    let w = round_trip(&res.records, 8192);
    assert_eq!(w.content_space, 6);
    assert_eq!(w.lpn_span, 8);
}

#[test]
fn from_files_read_phases() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let all = FromFilesOptions {
        read_phase: ReadPhase::All,
        inter_arrival: Nanos::from_us(10),
        ..FromFilesOptions::default()
    };
    let res = scan_tree(&root, &all);
    assert_eq!((res.records.len(), res.reads), (14, 7));
    for i in 0..7 {
        let (w, r) = (&res.records[i], &res.records[7 + i]);
        assert_eq!(r.op, Op::Read);
        assert_eq!((r.offset, r.size, &r.content), (w.offset, w.size, &None));
        assert_eq!(r.time, Nanos((7 + i) as u64 * 10_000));
    }

    let zipf = |seed| FromFilesOptions {
        read_phase: ReadPhase::Zipf { reads: 50, a: 0.8 },
        seed,
        ..FromFilesOptions::default()
    };
    let z1 = scan_tree(&root, &zipf(1));
    assert_eq!((z1.records.len(), z1.reads), (57, 50));
    let extents: Vec<(u64, u64)> = z1.records[..7].iter().map(|r| (r.offset, r.size)).collect();
    for r in &z1.records[7..] {
        assert_eq!(r.op, Op::Read);
        assert!(extents.contains(&(r.offset, r.size)), "read of a whole file");
    }
    assert_eq!(scan_tree(&root, &zipf(1)).records, z1.records, "same seed, same trace");
    assert_ne!(scan_tree(&root, &zipf(2)).records, z1.records, "another seed, other reads");
    // Zipf with a = 0.8 over 7 files: the most popular file gets the most reads.
    let mut counts = std::collections::HashMap::new();
    for r in &z1.records[7..] {
        *counts.entry(r.offset).or_insert(0) += 1;
    }
    assert!(*counts.values().max().unwrap() > 50 / 7);
    // Reads load back as reads without content.
    let w = round_trip(&z1.records, 4096);
    assert_eq!(w.requests.iter().filter(|r| r.op == Op::Read).count(), 50);
}

#[test]
fn from_files_errors_and_unreadable_entries() {
    let dir = tempfile::tempdir().unwrap();
    let o = FromFilesOptions::default();
    let missing = dir.path().join("missing");
    let e = fromfiles::scan(std::slice::from_ref(&missing), &o, &mut |_| {}).unwrap_err();
    assert!(matches!(e, FromFilesError::Root { .. }) && e.to_string().contains("missing"), "{e}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("zero"), b"").unwrap();
    let e = fromfiles::scan(&[empty], &o, &mut |_| {}).unwrap_err();
    assert!(matches!(e, FromFilesError::NoFiles(_)), "{e}");
    let bad = FromFilesOptions { page_size: 1000, ..o.clone() };
    assert!(matches!(fromfiles::scan(&[dir.path().into()], &bad, &mut |_| {}), Err(FromFilesError::InvalidOptions(_))));

    // Unreadable file and directory: reported and skipped, not fatal. Root
    // (as in many containers) can read mode-000 files, so this part only
    // checks what it can.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let t = dir.path().join("perm");
        std::fs::create_dir_all(t.join("closed")).unwrap();
        std::fs::write(t.join("closed/inside"), b"x").unwrap();
        std::fs::write(t.join("ok"), b"ok").unwrap();
        std::fs::write(t.join("secret"), b"s").unwrap();
        std::fs::set_permissions(t.join("secret"), std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::set_permissions(t.join("closed"), std::fs::Permissions::from_mode(0o000)).unwrap();
        let res = fromfiles::scan(std::slice::from_ref(&t), &o, &mut |_| {}).unwrap();
        if std::fs::File::open(t.join("secret")).is_ok() {
            eprintln!("note: running with permission to read mode-000 files (root); unreadable-file check skipped");
            assert_eq!(res.files.len(), 3);
        } else {
            let skipped: Vec<&Path> = res.skipped.iter().map(|s| s.path.as_path()).collect();
            assert_eq!(skipped, vec![t.join("closed").as_path(), t.join("secret").as_path()]);
            assert_eq!(res.files.len(), 1);
            assert_eq!(res.files[0].path, t.join("ok"));
        }
        std::fs::set_permissions(t.join("closed"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn from_files_cli_writes_a_replayable_trace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let out = dir.path().join("files.trace");
    let assert = crate::support::Command::cargo_bin("dedupsim")
        .unwrap()
        .args(["trace", "from-files"])
        .arg(&root)
        .arg("-o")
        .arg(&out)
        .args(["--read-phase", "all", "--inter-arrival", "50us", "--quiet"])
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    for line in ["files: 7", "pages: 12 of 4096 bytes", "distinct pages: 6", "dedup rate: 50.00%", "7 reads"] {
        assert!(stdout.contains(line), "{line:?} missing from:\n{stdout}");
    }
    let loaded = load(&out, &LoadOptions::default()).unwrap();
    assert_eq!(loaded.workload.requests.len(), 14);
    assert_eq!(loaded.workload.requests[1].arrival, Nanos(50_000));
    assert_eq!(loaded.workload.content_space, 6);
    crate::support::Command::cargo_bin("dedupsim")
        .unwrap()
        .args(["run", "--preset", "tiny", "--policy", "dedup", "--quiet", "--trace"])
        .arg(&out)
        .assert()
        .success();
    // An output inside the scanned tree is refused (issue 30): new, or an
    // existing file of the tree (which the scan would have left out and
    // overwritten).
    let inside = root.join("self.trace");
    for existing in [false, true] {
        if existing {
            std::fs::write(&inside, b"data").unwrap();
        }
        crate::support::Command::cargo_bin("dedupsim")
            .unwrap()
            .args(["trace", "from-files", "-q", "-o"])
            .arg(&inside)
            .arg(&root)
            .assert()
            .fails_with(1, &["the output lies inside the scanned path"]);
        assert_eq!(std::fs::read(&inside).ok(), existing.then(|| b"data".to_vec()));
    }
    std::fs::remove_file(&inside).unwrap();
    crate::support::Command::cargo_bin("dedupsim")
        .unwrap()
        .args(["trace", "from-files", "--read-phase", "zipf:0", "-o"])
        .arg(&out)
        .arg(&root)
        .assert()
        .failure();
}

/// `--segment 1 --writers 2 --hints`: files appended a page at a time, two
/// at once, each append at the next free address; every append after a
/// file's first names the file's previous page; a file's read is one
/// request per extent, all at the file's read time. The trace loads with
/// the hints in pages and writes back identically.
#[test]
fn from_files_appends_interleave_files_and_carry_hints() {
    use dedupsim::trace::TraceHint;
    use dedupsim::workload::Hint;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let opts = FromFilesOptions {
        segment: 1,
        writers: 2,
        hints: true,
        read_phase: ReadPhase::All,
        ..FromFilesOptions::default()
    };
    let res = scan_tree(&root, &opts);
    // Pairs (Z, a.bin), (b_copy, c_repeat), (sub-x, sub/d.txt), (e): pages
    // 1+2, 2+3, 1+1, 2 -> 12 one-page writes.
    let writes: Vec<&TraceRecord> = res.records.iter().filter(|r| r.op == Op::Write).collect();
    assert_eq!(writes.len(), 12);
    let got: Vec<(u64, Option<TraceHint>)> = writes.iter().map(|r| (r.offset / P as u64, r.hint)).collect();
    let a = |p: u64| Some(TraceHint::Append { after: p * P as u64 });
    #[rustfmt::skip]
    let want = vec![
        (0, None), (1, None), (2, a(1)),          // Z@0, a@1, a@2 (after 1)
        (3, None), (4, None), (5, a(3)), (6, a(4)), (7, a(6)), // b@3,5; c@4,6,7
        (8, None), (9, None),                     // sub-x@8, d@9
        (10, None), (11, a(10)),                  // e@10,11
    ];
    assert_eq!(got, want);
    assert_eq!(res.files[3].extents, vec![(4 * P as u64, 1), (6 * P as u64, 2)], "c_repeat: two extents");
    assert_eq!(res.files[1].extents, vec![(P as u64, 2)], "a.bin: contiguous");
    // Reads: one per extent, a file's extents at one time.
    let reads: Vec<&TraceRecord> = res.records.iter().filter(|r| r.op == Op::Read).collect();
    assert_eq!(reads.len() as u64, res.reads);
    let c: Vec<(u64, u64, Nanos)> = reads
        .iter()
        .filter(|r| r.offset == 4 * P as u64 || r.offset == 6 * P as u64)
        .map(|r| (r.offset, r.size, r.time))
        .collect();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].2, c[1].2);
    assert!(res.summary().contains(&format!("({} writes, {} reads)", 12, res.reads)), "{}", res.summary());

    let path = dir.path().join("h.trace");
    write_native(&res.records, std::fs::File::create(&path).unwrap()).unwrap();
    let l = load(&path, &LoadOptions::default()).unwrap();
    let hinted: Vec<(u32, Hint)> = l.workload.hints.clone();
    assert_eq!(hinted.len(), 5);
    assert_eq!(hinted[0], (2, Hint::Append { after: 1 }));
    let st = dedupsim::trace::stats(&l.workload);
    assert_eq!((st.append_hints, st.overwrite_hints), (5, 0));
    assert!(st.to_string().contains("write hints         5 append, 0 overwrite"), "{st}");

    // Options that need --segment, and --writers 0, are errors.
    for bad in [
        FromFilesOptions { writers: 2, ..FromFilesOptions::default() },
        FromFilesOptions { hints: true, ..FromFilesOptions::default() },
        FromFilesOptions { segment: 1, writers: 0, ..FromFilesOptions::default() },
    ] {
        let e = fromfiles::scan(std::slice::from_ref(&root), &bad, &mut |_| {}).unwrap_err();
        assert!(matches!(e, FromFilesError::InvalidOptions(_)), "{e}");
    }
}
