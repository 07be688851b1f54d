//! Trace layer tests: every real sample under `/work/shared/traces` (counts
//! and ratios checked against the folders' SOURCE.md), a hand-made inline
//! trace per format, compression round trips, the native writer, and one
//! test per class of bad input.
//!
//! The samples are not part of the repository: when the directory is absent
//! (a fresh clone) the sample test prints a note and passes. Set
//! `DEDUPSIM_TRACES` to point elsewhere.

use dedupsim::trace::{
    content_id_hash, load, load_from_reader, read_records, stats, write_native, write_native_workload, LoadOptions,
    TraceError, TraceFormat, TraceHint, TraceRecord, VolumeSelect,
};
use dedupsim::units::{ContentId, Nanos, Op};
use dedupsim::workload::{Hint, NO_CONTENT};
use std::io::Write;
use std::path::{Path, PathBuf};

fn opts() -> LoadOptions {
    LoadOptions::default()
}

fn load_str(name: &str, text: &str, o: &LoadOptions) -> Result<dedupsim::trace::Loaded, TraceError> {
    load_from_reader(text.as_bytes(), Path::new(name), o)
}

// ---------------------------------------------------------------------------
// Real samples
// ---------------------------------------------------------------------------

fn traces_dir() -> Option<PathBuf> {
    let dir =
        std::env::var_os("DEDUPSIM_TRACES").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/work/shared/traces"));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("note: {} is absent; skipping the real-trace sample checks", dir.display());
        None
    }
}

/// Expected characteristics of one sample file, from its SOURCE.md.
struct Expect {
    file: &'static str,
    format: TraceFormat,
    requests: u64,
    reads: u64,
    /// Byte-exact (avg request, avg read, avg write) KiB of the raw records
    /// (FIU: merged requests), when SOURCE.md gives them.
    avg_kib: Option<(f64, f64, f64)>,
    /// Dedup rate over written 4 KiB pages.
    dedup: Option<f64>,
}

const EXPECT: &[Expect] = &[
    Expect {
        file: "mail-02-sample.blkparse",
        format: TraceFormat::Fiu,
        requests: 94,
        reads: 53, // 56.4 %
        avg_kib: Some((42.55, 28.30, 60.98)),
        dedup: Some(1.0 - 622.0 / 625.0),
    },
    Expect {
        file: "homes-sample.blkparse",
        format: TraceFormat::FiuHomes,
        requests: 553,
        reads: 0,
        avg_kib: Some((7.23, 0.0, 7.23)),
        dedup: Some(1.0 - 829.0 / 1000.0),
    },
    Expect {
        file: "web-vm-sample.blkparse",
        format: TraceFormat::Fiu,
        requests: 193,
        reads: 0,
        avg_kib: Some((20.73, 0.0, 20.73)),
        dedup: Some(1.0 - 845.0 / 1000.0),
    },
    Expect {
        file: "msr-cambridge1-sample_hm_0.csv",
        format: TraceFormat::Msr,
        requests: 1000,
        reads: 508,
        avg_kib: Some((9.46, 11.74, 7.11)),
        dedup: None,
    },
    Expect {
        file: "systor17-additional-sample.csv.gz",
        format: TraceFormat::Systor,
        requests: 999,
        reads: 700, // 70.1 %
        avg_kib: Some((20.23, 25.68, 7.47)),
        dedup: None,
    },
    Expect {
        file: "systor17-traces-sample.csv.gz",
        format: TraceFormat::Systor,
        requests: 999,
        reads: 826, // 82.7 %
        avg_kib: Some((38.24, 42.98, 15.62)),
        dedup: None,
    },
    Expect {
        file: "financial1_head10000.disksim.ascii.gz",
        format: TraceFormat::Ssdsim,
        requests: 10_000,
        reads: 4078,
        avg_kib: Some((5.40, 6.09, 4.92)),
        dedup: None,
    },
    Expect {
        file: "wsrch-small.trace.gz",
        format: TraceFormat::Mqsim,
        requests: 24_783,
        reads: 24_779,
        avg_kib: Some((15.06, 15.06, f64::NAN)),
        dedup: None,
    },
    Expect {
        file: "tpcc-small.trace.gz",
        format: TraceFormat::Mqsim,
        requests: 6999,
        reads: 4381,
        avg_kib: Some((8.33, 8.09, 8.73)),
        dedup: None,
    },
    Expect {
        // libCacheSim's own data/cloudPhysicsIO.csv (bare hex opcodes, s).
        file: "cloudPhysicsIO.csv.zst",
        format: TraceFormat::LibCacheSim,
        requests: 113_872,
        reads: 46_974,
        avg_kib: Some((36.07, 37.37, 35.16)),
        dedup: None,
    },
    Expect {
        file: "2016021612-LUN3_mqsim_derived.txt.gz",
        format: TraceFormat::Mqsim,
        requests: 202_725,
        reads: 193_557,
        avg_kib: Some((6.07, 4.14, 46.87)),
        dedup: None,
    },
];

/// Byte-exact (avg request, avg read, avg write) in KiB.
fn byte_averages(records: &[TraceRecord]) -> (f64, f64, f64) {
    let sum = |f: &dyn Fn(&TraceRecord) -> bool| {
        let v: Vec<u64> = records.iter().filter(|r| f(r)).map(|r| r.size).collect();
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<u64>() as f64 / 1024.0 / v.len() as f64
        }
    };
    (sum(&|_| true), sum(&|r| r.op == Op::Read), sum(&|r| r.op == Op::Write))
}

fn close(got: f64, want: f64, what: &str, file: &str) {
    if want.is_nan() {
        return;
    }
    assert!((got - want).abs() <= 0.006, "{file}: {what} = {got:.4}, SOURCE.md says {want}");
}

#[test]
fn real_samples_match_source_notes() {
    let Some(dir) = traces_dir() else { return };
    let mut checked = 0;
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read traces dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
            .expect("read sample folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && !p.ends_with("SOURCE.md"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no trace file", folder.display());
        for path in files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let loaded = load(&path, &opts()).unwrap_or_else(|e| panic!("{e}"));
            let s = stats(&loaded.workload);
            println!("== {} ({}) ==\n{s}", path.display(), loaded.format);
            for w in &loaded.warnings {
                println!("   warning: {w}");
            }
            assert_eq!(loaded.bad_lines, 0, "{name}");
            assert!(s.requests > 0, "{name}");
            let Some(e) = EXPECT.iter().find(|e| e.file == name) else {
                println!("   (no SOURCE.md expectations recorded for {name})");
                continue;
            };
            assert_eq!(loaded.format, e.format, "{name}: detected format");
            assert_eq!(s.requests, e.requests, "{name}: requests");
            assert_eq!(s.reads, e.reads, "{name}: reads");
            assert_eq!(s.reads + s.writes, s.requests, "{name}");
            assert_eq!(loaded.workload.provenance.source, format!("trace: {} ({})", path.display(), e.format));
            match e.dedup {
                Some(d) => {
                    assert!(loaded.workload.has_content(), "{name}: content");
                    let got = s.dedup_rate.expect("dedup rate");
                    assert!((got - d).abs() < 1e-9, "{name}: dedup {got} vs {d}");
                }
                None => assert!(s.dedup_rate.is_none(), "{name}: no content expected"),
            }
            if let Some((req, rd, wr)) = e.avg_kib {
                let reader = dedupsim::trace::open(&path).unwrap();
                let parsed = read_records(reader, &path, &opts()).unwrap();
                let recs: Vec<TraceRecord> = parsed.records.into_iter().map(|(_, r)| r).collect();
                let (a, b, c) = byte_averages(&recs);
                close(a, req, "avg request KiB", &name);
                close(b, rd, "avg read KiB", &name);
                close(c, wr, "avg write KiB", &name);
            }
            checked += 1;
        }
    }
    println!("checked {checked} sample files against SOURCE.md");
}

#[test]
fn fiu_mail_sample_details() {
    let Some(dir) = traces_dir() else { return };
    let path = dir.join("fiu-iodedup-mail/mail-02-sample.blkparse");
    if !path.exists() {
        eprintln!("note: {} absent", path.display());
        return;
    }
    let l = load(&path, &opts()).unwrap();
    let s = stats(&l.workload);
    // Page-aligned averages equal the byte averages: FIU records are 4 KiB.
    assert!((s.avg_request_kib - 42.55).abs() < 0.006);
    assert!((s.read_ratio - 0.564).abs() < 0.0005);
    assert!((s.duration_s - 0.6).abs() < 0.05, "{}", s.duration_s);
    // Merging off (gap 0 still merges equal timestamps): many more requests.
    let no_merge = LoadOptions { fiu_merge_gap: Nanos::ZERO, ..opts() };
    let l0 = load(&path, &no_merge).unwrap();
    assert!(l0.workload.requests.len() > 94);
    // Volume selection by major:minor.
    let one = LoadOptions { volume: "6:0".parse().unwrap(), ..opts() };
    let l1 = load(&path, &one).unwrap();
    assert!(!l1.workload.requests.is_empty());
    assert_eq!(l.workload.provenance.name, "mail-02-sample");
}

// ---------------------------------------------------------------------------
// Inline traces, one per format (always run)
// ---------------------------------------------------------------------------

/// (arrival ns, op, lpn, pages) of every request.
fn shape(l: &dedupsim::trace::Loaded) -> Vec<(u64, Op, u32, u32)> {
    l.workload.requests.iter().map(|r| (r.arrival.0, r.op, r.lpn, r.pages)).collect()
}

#[test]
fn inline_msr() {
    let text = "\
128166385295514663,hm,0,Write,8192,2048,2833
128166385295524663,hm,0,Read,0,8192,100
128166385295534663,hm,1,Read,4096,4096,100
";
    let l = load_str("hm.csv", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Msr);
    // Disk 0 spans 3 pages (max end 10240), disk 1 starts at page 3.
    assert_eq!(shape(&l), vec![(0, Op::Write, 2, 1), (1_000_000, Op::Read, 0, 2), (2_000_000, Op::Read, 4, 1)]);
    assert_eq!(l.volumes, vec![(0, 0), (1, 3)]);
}

#[test]
fn inline_fiu_and_homes() {
    let a = "d6c75ba46e82326fefa545b57a12e221";
    let b = "34287a8bdde282abe94eebd707fe021f";
    let text = format!(
        "100 7 nfsd 16 8 W 6 0 {a}\n\
         200 7 nfsd 24 8 W 6 0 {b}\n\
         300 7 nfsd 32 8 W 6 0 {a}\n\
         20000400 7 nfsd 40 8 R 6 0 {b}\n"
    );
    let l = load_str("mail.blkparse", &text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Fiu);
    assert_eq!(shape(&l), vec![(0, Op::Write, 2, 3), (20_000_300, Op::Read, 5, 1)]);
    let w = &l.workload;
    assert!(w.has_content());
    assert_eq!(w.content_of(&w.requests[0]), &[ContentId(0), ContentId(1), ContentId(0)]);
    assert_eq!(w.requests[1].content, NO_CONTENT);
    assert_eq!(w.content_space, 2);

    // Homes: 8 sector MD5s per record; two records with the same 8 digests
    // dedup, a different set does not.
    let same = a.repeat(8);
    let other = format!("{}{}", b, a.repeat(7));
    let text = format!(
        "1 9 kjournald 0 8 W 6 0 {same}\n\
         2 9 kjournald 800 8 W 6 0 {same}\n\
         3 9 kjournald 808 8 W 6 16 {other}\n"
    );
    let l = load_str("homes.blkparse", &text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::FiuHomes);
    let s = stats(&l.workload);
    assert_eq!((s.requests, s.pages_written), (3, 3));
    assert_eq!(s.distinct_written, Some(2));
}

#[test]
fn inline_umass() {
    let text = "0,303567,3584,W,0.000000\n1,55590,3072,w,0.000000\n0,303574,3584,R,0.026214,x\n";
    let l = load_str("fin.spc", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Umass);
    let r = &l.workload.requests;
    assert_eq!(r.len(), 3);
    assert_eq!((r[0].lpn, r[0].pages), (303567 * 512 / 4096, 2)); // straddles a page boundary
    assert_eq!(r[2].arrival, Nanos(26_214_000));
    assert_eq!(r[2].op, Op::Read);
}

#[test]
fn inline_systor() {
    let text = "\
Timestamp,Response,IOType,LUN,Offset,Size
1455591804.310701000,0.006475000,R,0,203468398592,32768
1455591804.318699000,0.005276000,W,0,4096,4096
1455591804.314955000,0.011025000,R,0,0,65536
";
    let l = load_str("vdi.csv", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Systor);
    let t: Vec<u64> = l.workload.requests.iter().map(|r| r.arrival.0).collect();
    assert_eq!(t, vec![0, 7_998_000, 7_998_000]); // third clamped
    assert!(l.warnings.iter().any(|w| w.contains("went backwards")));
    assert_eq!(l.workload.requests[0].pages, 8);
}

#[test]
fn inline_tencent() {
    let text = "1538323200,0,8,1,1063\n1538323201,16,16,0,1063\n1538323201,8,8,1,7\n";
    let l = load_str("cbs.csv", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Tencent);
    assert_eq!(
        shape(&l),
        vec![
            (0, Op::Write, 0, 1),
            (1_000_000_000, Op::Read, 2, 2),
            (1_000_000_000, Op::Write, 5, 1) // volume 7 after 1063's 4 pages
        ]
    );
    // With the documented header line (as SYSTOR's): skipped, detected or forced.
    let with_header = format!("Timestamp,Offset,Size,IOType,VolumeID\n{text}");
    for format in [None, Some(TraceFormat::Tencent)] {
        let h = load_str("cbs.csv", &with_header, &LoadOptions { format, ..opts() }).unwrap();
        assert_eq!((h.format, shape(&h)), (TraceFormat::Tencent, shape(&l)));
        assert_eq!(h.bad_lines, 0);
    }
}

#[test]
fn inline_libcachesim() {
    // In the shape of libCacheSim's data/cloudPhysicsIO.csv: time in s,
    // SCSI opcode in bare hex as the real file has it (2a write, 28 read),
    // 0x hex and decimal (42 = 0x2a) too, size in bytes, lbn in 512-byte
    // sectors.
    let text = "version,time,op,size,lbn\n\
                1,5633898,2a,4096,0\n\
                1,5633898.242639,28,512,8\n\
                1,5633898.376738,0x28,8192,9\n\
                2,5633899.598946,42,6656,64\n";
    let l = load_str("cloudPhysicsIO.csv", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::LibCacheSim);
    assert_eq!(
        shape(&l),
        vec![
            (0, Op::Write, 0, 1),
            (242_639_000, Op::Read, 1, 1),
            (376_738_000, Op::Read, 1, 3), // bytes 4608..12800
            (1_598_946_000, Op::Write, 8, 2),
        ]
    );
    assert_eq!(l.volumes, vec![(0, 0)]);
    // Without the header, and forced by name or alias.
    let body: String = text.lines().skip(1).map(|x| format!("{x}\n")).collect();
    assert_eq!(shape(&load_str("t.csv", &body, &opts()).unwrap()), shape(&l));
    for name in ["libcachesim", "cloudphysics"] {
        let o = LoadOptions { format: Some(name.parse().unwrap()), ..opts() };
        assert_eq!(shape(&load_str("t.csv", text, &o).unwrap()), shape(&l));
    }
    // Another SCSI command is a bad line that says which.
    let e = load_str("t.csv", &format!("{text}1,5633900,53,0,0\n"), &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:6: field 3 (op) is SCSI opcode 0x35, not a READ (0x28 = 40) or WRITE (0x2a = 42): \"53\""
    );
}

/// blkparse's default output as its man page lays it out (`%D %2c %8s
/// %5T.%9t %5p %2a %3d`, then `sector + nsectors [process]`), written by
/// hand (no block device to trace here): two devices, a merge, a plug and
/// unplug, a requeue, a flush without data, a discard, a message, and the
/// closing per-CPU and total summary.
const BLKPARSE: &str = "\
  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001829   697  G   W 223490 + 8 [kjournald]
  8,0    3        3     0.000002901   697  P   N [kjournald]
  8,0    3        4     0.000004170   697  Q   W 223498 + 8 [kjournald]
  8,0    3        5     0.000005012   697  M   W 223498 + 8 [kjournald]
  8,0    3        6     0.000011350   697  U   N [kjournald] 1
  8,0    3        7     0.000012100   697  I  WS 223490 + 16 [kjournald]
  8,0    3        8     0.000036306   697  D  WS 223490 + 16 [kjournald]
  8,16   1        1     0.001000000  2931  Q  RA 1000 + 16 [cat]
  8,16   1        2     0.001000870  2931  G  RA 1000 + 16 [cat]
  8,16   1        3     0.001001500  2931  I  RA 1000 + 16 [cat]
  8,16   1        4     0.001002100  2931  D  RA 1000 + 16 [cat]
  8,0    0        1     0.001100000     0  R  WS 223490 + 16 [0]
  8,0    0        2     0.001200000     0  D  WS 223490 + 16 [swapper/0]
  8,16   1        5     0.001300000  2931  D  FN [kworker/1:1H]
  8,16   0        0     0.001400000     0  m   N cfq2931S / slice expired t=1
  8,0    1        1     0.003955140     0  C  WS 223490 + 16 [0]
  8,16   1        6     0.004000000     0  C  RA 1000 + 16 [0]
  8,16   2        1     0.010000000  4102  Q   D 5000 + 2048 [fstrim]
  8,16   2        2     0.010000600  4102  D   D 5000 + 2048 [fstrim]
  8,16   2        3     0.010900000     0  C   D 5000 + 2048 [0]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        1,        8KiB
 Reads Requeued:         0\t\t Writes Requeued:         1
 Reads Completed:        0,        0KiB\t Writes Completed:        0,        0KiB
 Read Merges:            0,        0KiB\t Write Merges:            0,        0KiB
 Read depth:             0        \t Write depth:             1
 IO unplugs:             0        \t Timer unplugs:           0
Total (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           2,        8KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        2,       16KiB
Throughput (R/W): 0KiB/s / 2KiB/s
Events (8,0): 11 entries
Skips: 0 forward (0 -   0.0%)
";

#[test]
fn inline_blkparse() {
    use dedupsim::trace::blkparse::BlkEvent;
    // Named like the FIU traces, detected by content.
    let l = load_str("sda.blkparse", BLKPARSE, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Blkparse(BlkEvent::Dispatch));
    // D events: device 8,0 first (its range: 223490 + 16 sectors), then 8,16.
    let base = (223490u64 * 512 + 8192).div_ceil(4096) as u32;
    assert_eq!(
        shape(&l),
        vec![
            (0, Op::Write, 27936, 3),               // 223490 s = byte 114426880 = page 27936.25
            (965_794, Op::Read, base + 125, 2),     // 1000 s = byte 512000 = page 125
            (9_964_294, Op::Trim, base + 625, 256), // discard
        ]
    );
    assert_eq!(l.volumes.iter().map(|v| v.0).collect::<Vec<_>>(), vec![8 << 20, (8 << 20) | 16]);
    assert_eq!(
        l.warnings[0],
        "blkparse: 3 D events read as requests; the other events (the same I/O at other stages, or no I/O) were \
         not: Q 4, G 2, I 2, M 1, C 3, R 1, P 1, U 1, m 1; 1 D events carried no data (flush, no range) and were \
         skipped; 1 re-dispatches of requeued requests dropped (each request counted once)"
    );
    // Q events (before merging: 4) and C events, by the format name's option.
    let q = LoadOptions { format: Some("blkparse:Q".parse().unwrap()), ..opts() };
    let lq = load_str("sda.blkparse", BLKPARSE, &q).unwrap();
    assert_eq!(lq.workload.requests.len(), 4);
    assert_eq!(lq.workload.provenance.source, "trace: sda.blkparse (blkparse:Q)");
    let c = LoadOptions { format: Some("blkparse:C".parse().unwrap()), ..opts() };
    assert_eq!(load_str("sda.blkparse", BLKPARSE, &c).unwrap().workload.requests.len(), 3);
    // One device by major:minor.
    let one = LoadOptions { volume: "8:16".parse().unwrap(), ..opts() };
    assert_eq!(load_str("sda.blkparse", BLKPARSE, &one).unwrap().workload.requests.len(), 2);
    // A queue-only trace read for D events says which option reads it.
    let queued: String = BLKPARSE.lines().filter(|l| l.contains(" Q ")).map(|l| format!("{l}\n")).collect();
    let e = load_str("q.blkparse", &queued, &opts()).unwrap_err().to_string();
    assert!(e.contains("contains no requests") && e.contains("try --format blkparse:Q (4 Q events)"), "{e}");
    // A malformed event names its field; a stray line before the summary is an error.
    let e = load_str("x.blkparse", "8,0 3 1 0.5 697 D W 223490 + 8x [k]\n", &opts()).unwrap_err();
    assert_eq!(e.to_string(), "x.blkparse:1: field 10 (nsectors) is not an integer: \"8x\"");
    let e = load_str("x.blkparse", &format!("{}hello\n", &BLKPARSE[..200]), &opts()).unwrap_err();
    assert!(e.to_string().starts_with("x.blkparse:"), "{e}");
}

#[test]
fn blkparse_and_fiu_stay_apart() {
    // An FIU line and a blkparse event in files of the same name.
    let fiu = "89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221\n";
    assert_eq!(load_str("mail.blkparse", fiu, &opts()).unwrap().format, TraceFormat::Fiu);
    let blk = "  8,0    3        8     0.000036306   697  D  WS 223490 + 16 [kjournald]\n";
    assert_eq!(load_str("mail.blkparse", blk, &opts()).unwrap().format.name(), "blkparse");
    // FIU's process names may contain commas; the line still starts with a number.
    let fiu = "89966522969723 4270 a,b 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221\n";
    assert_eq!(load_str("mail.blkparse", fiu, &opts()).unwrap().format, TraceFormat::Fiu);
}

#[test]
fn inline_fio_iolog() {
    use dedupsim::trace::csv::TimeUnit;
    // As fio 3.x's --write_iolog writes it (v3: microseconds since the start).
    let text = "fio version 3 iolog\n\
                0 /dev/nvme0n1 add\n\
                1 /dev/nvme1n1 add\n\
                2 /dev/nvme0n1 open\n\
                3 /dev/nvme1n1 open\n\
                872 /dev/nvme0n1 write 0 16384\n\
                878 /dev/nvme1n1 read 8192 4096\n\
                891 /dev/nvme0n1 trim 16384 8192\n\
                900 /dev/nvme0n1 datasync 0 0\n\
                10001677 /dev/nvme0n1 close\n\
                10001680 /dev/nvme1n1 close\n";
    let l = load_str("job.iolog", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::FioIolog(TimeUnit::Us));
    // Two files, two volumes: nvme1n1's range after nvme0n1's 6 pages.
    assert_eq!(shape(&l), vec![(0, Op::Write, 0, 4), (6_000, Op::Read, 8, 1), (19_000, Op::Trim, 4, 2)]);
    assert_eq!(l.volumes, vec![(0, 0), (1, 6)]);
    assert_eq!(l.warnings, ["fio iolog: 1 sync/datasync actions move no data and were skipped"]);
    let ms = LoadOptions { format: Some("fio-iolog:ms".parse().unwrap()), ..opts() };
    assert_eq!(load_str("job.iolog", text, &ms).unwrap().workload.requests[1].arrival, Nanos(6_000_000));
    // Version 2: no timestamps; a wait sets the time (ms since the start).
    let v2 = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n/dev/sdb wait 20 0\n\
              /dev/sdb read 0 4096\n/dev/sdb close\n";
    let l = load_str("v2.log", v2, &opts()).unwrap();
    assert_eq!(shape(&l), vec![(0, Op::Write, 0, 1), (20_000_000, Op::Read, 0, 1)]);
    // I/O on a file never added.
    let e = load_str("v2.log", "fio version 2 iolog\n/dev/sdb read 0 4096\n", &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "v2.log:2: field 1 (filename) was not added before (a `/dev/sdb add` line must come first): \"/dev/sdb\""
    );
}

#[test]
fn inline_fio_log() {
    // fio --write_lat_log with log_offset=1 (and the priority column of fio 3.x).
    let text = "1, 183, 0, 4096, 1736704, 0\n1, 95, 1, 8192, 8192, 0\n3, 210, 0, 4096, 0, 0\n4, 80, 2, 4096, 4096, 0\n";
    let l = load_str("job_clat.1.log", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::FioLog);
    assert_eq!(
        shape(&l),
        vec![(0, Op::Read, 424, 1), (0, Op::Write, 2, 2), (2_000_000, Op::Read, 0, 1), (3_000_000, Op::Trim, 1, 1)]
    );
    let e =
        load_str("job_clat.1.log", "1, 183, 0, 4096\n", &LoadOptions { format: Some(TraceFormat::FioLog), ..opts() })
            .unwrap_err();
    assert_eq!(
        e.to_string(),
        "job_clat.1.log:1: a fio log entry without an offset (4 fields): write the log with log_offset=1"
    );
}

#[test]
fn inline_csv() {
    let text = "ts\tdev\top\tlba\tbytes\n\
                100\tsda\tR\t8\t4096\n\
                250.5\tsda\tW\t16\t8192\n";
    let f = "csv:time=1,op=3,offset=4,size=5,op-read=R,op-write=W,time-unit=us,offset-unit=sector,size-unit=byte,\
             delimiter=tab,header=true";
    let o = LoadOptions { format: Some(f.parse().unwrap()), ..opts() };
    let l = load_str("t.tsv", text, &o).unwrap();
    assert_eq!(shape(&l), vec![(0, Op::Read, 1, 1), (150_500, Op::Write, 2, 2)]);
    assert!(l.workload.provenance.source.starts_with("trace: t.tsv (csv:time=1,offset=4,size=5,op=3,"));
    // Never detected: the csv format needs its column map.
    assert!(matches!(load_str("t.tsv", text, &opts()), Err(TraceError::Undetected { .. })));
    // A bad line names file, line, field and reason.
    let e = load_str("t.tsv", &format!("{text}300\tsda\tX\t8\t4096\n"), &o).unwrap_err();
    assert_eq!(e.to_string(), "t.tsv:4: field 3 (op) is not R (read), W (write): \"X\"");
    let e = "csv:time=1,op=3,offset=4,size=5,block=2".parse::<TraceFormat>().unwrap_err();
    assert!(e
        .to_string()
        .starts_with("invalid trace format \"csv:time=1,op=3,offset=4,size=5,block=2\": unknown key \"block\""));
}

#[test]
fn inline_ssdsim_and_mqsim() {
    let text = "0 0 303567 7 0\n26214000 0 303574 7 1\n";
    let l = load_str("example.ascii", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Ssdsim);
    // 303567 sectors = byte 155426304 = page 37945.5: 3584 bytes straddle
    // pages 37945-37946; 303574 sectors = page 37946.75, straddling 37946-37947.
    assert_eq!(shape(&l), vec![(0, Op::Write, 37945, 2), (26_214_000, Op::Read, 37946, 2)]);
    let l = load_str("wsrch.trace", "11413000 0 657728 16 1\n11565000 1 8 64 0\n", &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Mqsim);
    assert_eq!(l.workload.requests[1].pages, 8);
}

#[test]
fn inline_native() {
    let text = "\
# dedupsim-trace v1
# a comment
1000 W 0 8192 0 3f4fc2833a17fd2a3dacad7c0e8ca8ad,7
1500 R 4096 4096
2000 T 0 8192
3000 W 8192 4096 0 7
";
    let l = load_str("x.trace", text, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Native);
    let w = &l.workload;
    assert_eq!(
        shape(&l),
        vec![(0, Op::Write, 0, 2), (500, Op::Read, 1, 1), (1000, Op::Trim, 0, 2), (2000, Op::Write, 2, 1)]
    );
    assert_eq!(w.content_of(&w.requests[3]), &[ContentId(1)]);
    assert_eq!(w.content_space, 2);
    let e = load_str("x.trace", "# dedupsim-trace v9\n0 R 0 1\n", &opts()).unwrap_err();
    assert!(e.to_string().contains("x.trace:1: unsupported native trace version"), "{e}");
}

#[test]
fn forced_format_overrides_detection() {
    // A 5-integer line is detected as DiskSim-style; forcing tencent changes
    // the meaning of every column.
    let line = "1 0 8 1 0\n";
    let l = load_str("t.txt", line, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Mqsim);
    let forced = LoadOptions { format: Some(TraceFormat::Ssdsim), ..opts() };
    assert_eq!(load_str("t.txt", line, &forced).unwrap().format, TraceFormat::Ssdsim);
}

// ---------------------------------------------------------------------------
// Compression and the native writer
// ---------------------------------------------------------------------------

const SMALL_NATIVE: &str = "# dedupsim-trace v1\n0 W 0 4096 0 1\n10 R 0 4096\n20 W 4096 8192 0 1,2\n";

#[test]
fn gzip_round_trip_including_multi_member() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.trace.gz");
    let mut bytes = Vec::new();
    // Two concatenated gzip members (as `cat a.gz b.gz` or pigz produce).
    let (first, second) = SMALL_NATIVE.split_at(SMALL_NATIVE.find("10 R").unwrap());
    for part in [first, second] {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(part.as_bytes()).unwrap();
        bytes.extend(enc.finish().unwrap());
    }
    std::fs::write(&path, bytes).unwrap();
    let l = load(&path, &opts()).unwrap();
    assert_eq!(l.workload.requests.len(), 3);
    assert_eq!(l.workload.provenance.name, "small");
    assert_eq!(stats(&l.workload).dedup_rate, Some(1.0 - 2.0 / 3.0));
}

#[test]
fn zstd_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.trace.zst");
    let bytes = zstd::stream::encode_all(SMALL_NATIVE.as_bytes(), 3).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let l = load(&path, &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Native);
    assert_eq!(l.workload.requests.len(), 3);
}

#[test]
fn native_writer_reader_round_trip() {
    let records = vec![
        TraceRecord {
            time: Nanos(5),
            op: Op::Write,
            offset: 4096,
            size: 12288,
            volume: 2,
            content: Some(vec![[0x11; 16], content_id_hash(3), [0x11; 16]]),
            hint: Some(TraceHint::Append { after: 0 }),
            process: 0,
        },
        TraceRecord {
            time: Nanos(6),
            op: Op::Read,
            offset: 100,
            size: 5000,
            volume: 0,
            content: None,
            hint: None,
            process: 0,
        },
        TraceRecord {
            time: Nanos(9),
            op: Op::Trim,
            offset: 0,
            size: 4096,
            volume: 1,
            content: None,
            hint: None,
            process: 0,
        },
        TraceRecord {
            time: Nanos(12),
            op: Op::Write,
            offset: 8192,
            size: 4096,
            volume: 0,
            content: None,
            hint: Some(TraceHint::Overwrite),
            process: 0,
        },
    ];
    let mut buf = Vec::new();
    write_native(&records, &mut buf).unwrap();
    let parsed = read_records(&buf[..], Path::new("rt.trace"), &opts()).unwrap();
    assert_eq!(parsed.format, TraceFormat::Native);
    let back: Vec<TraceRecord> = parsed.records.into_iter().map(|(_, r)| r).collect();
    assert_eq!(back, records);

    // Workload writer: reload gives the same requests and content equalities.
    let l = load_str("rt.trace", std::str::from_utf8(&buf).unwrap(), &opts()).unwrap();
    let mut out = Vec::new();
    write_native_workload(&l.workload, 4096, &mut out).unwrap();
    let l2 = load_str("rt2.trace", std::str::from_utf8(&out).unwrap(), &opts()).unwrap();
    assert_eq!(shape(&l2), shape(&l));
    assert_eq!(l2.workload.contents, l.workload.contents);
    assert_eq!(l2.workload.content_space, 2);
    // Hints in pages (volume 2 starts at page 0: first seen), carried through.
    assert_eq!(l.workload.hints, vec![(0, Hint::Append { after: 0 }), (3, Hint::Overwrite)]);
    assert_eq!(l2.workload.hints, l.workload.hints);

    // Larger pages: each id still maps to one content after a reload.
    let big = LoadOptions { page_size: 8192, ..opts() };
    let lb = load_str("rt.trace", std::str::from_utf8(&buf).unwrap(), &big).unwrap();
    let mut out = Vec::new();
    write_native_workload(&lb.workload, 8192, &mut out).unwrap();
    let lb2 = load_str("rt3.trace", std::str::from_utf8(&out).unwrap(), &big).unwrap();
    assert_eq!(lb2.workload.contents, lb.workload.contents);
}

// ---------------------------------------------------------------------------
// Bad input, one test per class
// ---------------------------------------------------------------------------

#[test]
fn malformed_field_names_file_line_and_field() {
    let text = "128166385295514663,hm,0,Write,0,2048,1\n128166385295514700,hm,0,Read,0,12x,1\n";
    let e = load_str("trace.csv", text, &opts()).unwrap_err();
    assert!(matches!(e, TraceError::Parse { line: 2, .. }));
    assert_eq!(e.to_string(), "trace.csv:2: field 6 (Size) is not an integer: \"12x\"");
    // With skip_bad_lines the line is counted and reported instead.
    let skip = LoadOptions { skip_bad_lines: true, ..opts() };
    let l = load_str("trace.csv", text, &skip).unwrap();
    assert_eq!((l.bad_lines, l.workload.requests.len()), (1, 1));
    assert!(l.warnings[0].starts_with("trace.csv:2: skipped: field 6 (Size)"));
}

#[test]
fn input_without_newlines_stops_at_the_line_limit() {
    // A 1 MiB "line": an error naming the file and line after 64 KiB, in any format.
    let long = format!("0,{}\n", "7".repeat(1 << 20));
    for format in [None, Some(TraceFormat::Msr), Some(TraceFormat::Tencent)] {
        let o = LoadOptions { format, skip_bad_lines: true, ..opts() };
        let e = load_str("long.csv", &long, &o).unwrap_err();
        assert!(matches!(e, TraceError::LineTooLong { line: 1, limit: 65536, .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "long.csv:1: line longer than 65536 bytes (no line break found); \
             this is not a text trace of a supported format"
        );
    }
    // An endless input without newlines (`trace stats /dev/zero`) ends the same way.
    let zeros = std::io::BufReader::new(std::io::Read::take(std::io::repeat(0), u64::MAX));
    let e = load_from_reader(zeros, Path::new("/dev/zero"), &opts()).unwrap_err();
    assert!(matches!(e, TraceError::LineTooLong { line: 1, .. }), "{e:?}");
    // Native lines carry content lists and may be longer: 20,000 items (~80 MB request).
    let items: Vec<String> = (0..20_000).map(|i| format!("{:032x}", i + 1)).collect();
    let text = format!("# dedupsim-trace v1\n0 W 0 {} 0 {}\n", 20_000 * 4096, items.join(","));
    assert!(text.len() > 600_000);
    let l = load_str("big.trace", &text, &opts()).unwrap();
    assert_eq!(l.workload.requests[0].pages, 20_000);
    let forced = LoadOptions { format: Some(TraceFormat::Native), ..opts() };
    assert!(load_str("big.trace", &text, &forced).is_ok());
}

#[test]
fn bad_fields_are_quoted_short() {
    // A 60 KB bad field (the most a line may hold) gives a short message, and
    // ten skipped ones short warnings.
    let field = "9".repeat(10) + &"x".repeat(60_000);
    let line = format!("128166385295514663,hm,0,Write,0,{field},1\n");
    let e = load_str("t.csv", &line, &LoadOptions { format: Some(TraceFormat::Msr), ..opts() }).unwrap_err();
    let msg = e.to_string();
    assert!(msg.len() < 200, "{} bytes", msg.len());
    assert!(msg.starts_with("t.csv:1: field 6 (Size) is not an integer: \"9999999999xxx"), "{msg}");
    assert!(msg.ends_with("... (60010 bytes)"), "{msg}");
    let text = format!("128166385295514663,hm,0,Write,0,4096,1\n{}", line.repeat(12));
    let skip = LoadOptions { skip_bad_lines: true, ..opts() };
    let l = load_str("t.csv", &text, &skip).unwrap();
    assert_eq!(l.bad_lines, 12);
    assert!(l.warnings.iter().all(|w| w.len() < 200), "{:?}", l.warnings);
    // The undetectable first line is quoted short as well.
    let e = load_str("odd.txt", &"z".repeat(50_000), &opts()).unwrap_err();
    assert!(matches!(e, TraceError::Undetected { line: 1, .. }), "{e:?}");
    assert!(e.to_string().len() < 300, "{e}");
}

#[test]
fn byte_order_mark_does_not_defeat_detection() {
    let text = "\u{feff}128166385295514663,hm,0,Write,0,4096,1\n128166385295514700,hm,0,Read,0,4096,1\n";
    let l = load_str("bom.csv", text, &opts()).unwrap();
    assert_eq!((l.format, l.workload.requests.len()), (TraceFormat::Msr, 2));
    let l = load_str("bom.trace", "\u{feff}# dedupsim-trace v1\n0 W 0 4096\n", &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Native);
}

#[test]
fn overflowing_numbers_say_out_of_range_with_the_limit() {
    let e = load_str("t.csv", "99999999999,12345,8,1,1063\n", &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:1: field 1 (Timestamp) is out of range (at most 18446744073.709551615 s: \
         64-bit nanoseconds, about 584 years): \"99999999999\""
    );
    let e = load_str("t.spc", "0,20941264,8192,W,1e300\n", &opts()).unwrap_err();
    assert!(e.to_string().starts_with("t.spc:1: field 5 (Timestamp) is out of range (at most 18446744073"), "{e}");
    let e = load_str("t.csv", "999999999999999999999,hm,0,Read,0,4096,1\n", &opts()).unwrap_err();
    assert!(e.to_string().contains("field 1 (Timestamp) is out of range (at most 2^64-1"), "{e}");
    let e = load_str("t.csv", "999999999999999999,hm,0,Read,0,4096,1\n", &opts()).unwrap_err();
    assert!(e.to_string().contains("is out of range (at most 184467440737095516 ticks of 100 ns"), "{e}");
}

#[test]
fn fiu_digests_malformed_or_missing_are_reported_as_such() {
    const A: &str = "d6c75ba46e82326fefa545b57a12e221";
    // A short MD5 is a malformed digest (was: "field 5 (size) is not an integer").
    let text = format!("1 7 nfsd 16 8 W 6 0 {A}\n2 7 nfsd 24 8 W 6 0 {}\n", &A[..20]);
    let e = load_str("mail.blkparse", &text, &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "mail.blkparse:2: field 9 (digest) is a malformed MD5 digest (20 hex digits, not a multiple \
             of 32: one MD5 per 4 KiB or per sector): \"{}\"",
            &A[..20]
        )
    );
    // Writes without a digest: counted in the warnings, and stats say how many.
    let text = format!("1 7 nfsd 16 8 W 6 0 {A}\n2 7 nfsd 800 8 W 6 0\n3 7 nfsd 900 8 R 6 0\n");
    let l = load_str("mail.blkparse", &text, &opts()).unwrap();
    assert!(l.warnings.contains(&"1 of 2 FIU write records carry no MD5 digest (the first at line 2)".to_string()));
    assert!(l.warnings.iter().any(|w| w.starts_with("1 of 2 write requests carry no content hashes")));
    let st = stats(&l.workload);
    assert_eq!((st.dedup_rate, st.writes_without_content), (None, 1));
    assert!(st.to_string().contains("n/a (1 of 2 write requests carry no content)"), "{st}");
    let l = load_str("mail.blkparse", "2 7 nfsd 800 8 W 6 0\n", &opts()).unwrap();
    assert_eq!(l.format, TraceFormat::Fiu);
    assert!(l.warnings[0].starts_with("none of the 1 FIU write records carries an MD5 digest"), "{:?}", l.warnings);
}

#[test]
fn empty_trace_is_an_error() {
    for text in ["", "\n\n", "# dedupsim-trace v1\n# nothing\n"] {
        let e = load_str("empty.trace", text, &opts()).unwrap_err();
        assert!(matches!(e, TraceError::Empty { .. }), "{e:?}");
        assert_eq!(e.to_string(), "empty.trace: contains no requests");
    }
    // Only bad lines, skipped: still empty, with the count.
    let skip = LoadOptions { skip_bad_lines: true, format: Some(TraceFormat::Msr), ..opts() };
    let e = load_str("bad.csv", "x\ny\n", &skip).unwrap_err();
    assert!(e.to_string().contains("contains no requests (2 bad lines skipped)"), "{e}");
    // Only zero-length requests: says so instead of a bare "no requests".
    let ssd = LoadOptions { format: Some(TraceFormat::Ssdsim), skip_bad_lines: true, ..opts() };
    let e = load_str("zero.ascii", "0 0 100 0 0\n1 0 8 0 1\nx\n", &ssd).unwrap_err();
    assert_eq!(e.to_string(), "zero.ascii: contains no requests (1 bad lines skipped, 2 zero-length requests ignored)");
}

#[test]
fn address_beyond_capacity_suggests_wrap() {
    let text = "# dedupsim-trace v1\n0 W 0 4096\n1 W 40960 8192\n";
    let cap = LoadOptions { capacity_pages: Some(8), ..opts() };
    let e = load_str("big.trace", text, &cap).unwrap_err();
    assert!(matches!(e, TraceError::BeyondCapacity { line: 3, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.starts_with("big.trace:3: request at LPN 10 (2 pages)"), "{msg}");
    assert!(msg.contains("--wrap"), "{msg}");
    let wrapped = LoadOptions { wrap_to_pages: Some(8), ..cap };
    let l = load_str("big.trace", text, &wrapped).unwrap();
    assert_eq!(shape(&l)[1], (1, Op::Write, 2, 2));
    // Beyond the 32-bit page space even without a capacity.
    let e = load_str("huge.trace", "0 R 17592186044416 4096\n", &opts()).unwrap_err();
    assert!(matches!(e, TraceError::AddressOverflow { line: 1, .. }), "{e:?}");
    assert!(e.to_string().contains("--wrap"));
}

#[test]
fn append_hint_beyond_capacity_is_an_error() {
    // The write is in range, its hint is not (a panic in the FTL's look-up
    // before; found by a hostile-input hunt).
    let text = "# dedupsim-trace v1\n0 W 0 8192 0 - a:1099511627776\n";
    let cap = LoadOptions { capacity_pages: Some(192), ..opts() };
    let e = load_str("far.trace", text, &cap).unwrap_err();
    assert!(matches!(e, TraceError::HintBeyondCapacity { line: 2, lpn: 268435456, capacity: 192, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.starts_with("far.trace:2: the append hint names LPN 268435456, beyond the device capacity of 192 pages"),
        "{msg}"
    );
    assert!(msg.contains("--wrap"), "{msg}");
    // Folded with --wrap like the request itself.
    let wrapped = LoadOptions { wrap_to_pages: Some(192), ..cap };
    let l = load_str("far.trace", text, &wrapped).unwrap();
    assert_eq!(l.workload.hints, vec![(0, Hint::Append { after: 268435456 % 192 })]);
}

#[test]
fn unknown_format_lists_formats() {
    let e = "blktrace2".parse::<TraceFormat>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown trace format \"blktrace2\" (known formats: msr, fiu, fiu-homes, umass, \
         systor, tencent, libcachesim, ssdsim, mqsim, blkparse, fio-iolog, fio-log, csv, native)"
    );
    let e = load_str("odd.txt", "\nhello there\n", &opts()).unwrap_err();
    assert!(matches!(e, TraceError::Undetected { line: 2, .. }), "{e:?}");
    assert!(e.to_string().contains("odd.txt:2: cannot detect the trace format"));
    assert!(e.to_string().contains("msr, fiu"));
}

#[test]
fn missing_file_is_an_io_error_with_path() {
    let e = load(Path::new("/nonexistent/dir/t.csv"), &opts()).unwrap_err();
    assert!(matches!(e, TraceError::Io { .. }));
    assert!(e.to_string().starts_with("/nonexistent/dir/t.csv: "), "{e}");
}

#[test]
fn bad_options_and_volume_select() {
    let bad = LoadOptions { page_size: 3000, ..opts() };
    assert!(matches!(load_str("x", SMALL_NATIVE, &bad), Err(TraceError::InvalidOptions(_))));
    let one = LoadOptions { volume: VolumeSelect::One(4), ..opts() };
    let e = load_str("x", SMALL_NATIVE, &one).unwrap_err();
    assert!(e.to_string().contains("no requests for volume 4 (volumes present: 0)"), "{e}");
}

// ---------------------------------------------------------------------------
// Arbitrary input never panics
// ---------------------------------------------------------------------------

mod arbitrary_input {
    use super::*;
    use proptest::prelude::*;

    /// A field value: usually small and plausible, sometimes at the edges
    /// (0, u32/u64 limits, negative, fractional, not a number).
    fn num() -> impl Strategy<Value = String> {
        prop_oneof![
            8 => (0u64..5_000_000).prop_map(|n| n.to_string()),
            1 => prop::sample::select(vec![
                "0", "4294967295", "4294967296", "18446744073709551615", "18446744073709551616", "-1", "1.5", "1e3",
                "", "x",
            ])
            .prop_map(str::to_string),
        ]
    }

    fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::sample::select(items.to_vec()).prop_map(str::to_string)
    }

    fn md5() -> impl Strategy<Value = String> {
        prop_oneof![8 => "[0-9a-f]{32}", 1 => "[0-9a-g]{0,40}"]
    }

    /// One line shaped like `format`'s records (fields drawn from [`num`]),
    /// or, one time in eight, a line of random tokens.
    fn line(format: TraceFormat) -> BoxedStrategy<String> {
        let shaped: BoxedStrategy<String> = match format {
            TraceFormat::Msr => (num(), num(), pick(&["Read", "Write", "Flush"]), num(), num(), num())
                .prop_map(|(t, v, op, o, z, r)| format!("{t},hm,{v},{op},{o},{z},{r}"))
                .boxed(),
            TraceFormat::Fiu => (num(), num(), num(), num(), pick(&["W", "R", "X"]), md5())
                .prop_map(|(t, pid, lba, z, op, h)| format!("{t} {pid} nfsd {lba} {z} {op} 6 0 {h}"))
                .boxed(),
            TraceFormat::FiuHomes => (num(), num(), num(), pick(&["W", "R"]), prop::collection::vec(md5(), 0..9))
                .prop_map(|(t, pid, lba, op, h)| format!("{t} {pid} kjournald {lba} 8 {op} 6 0 {}", h.concat()))
                .boxed(),
            TraceFormat::Umass => (num(), num(), num(), pick(&["r", "w", "R", "W", "q"]), num())
                .prop_map(|(a, l, z, op, t)| format!("{a},{l},{z},{op},{t}.{a}"))
                .boxed(),
            TraceFormat::Systor => (num(), num(), pick(&["R", "W", "r", "w", "Z"]), num(), num(), num())
                .prop_map(|(t, r, op, lun, o, z)| format!("{t}.000001,{r},{op},{lun},{o},{z}"))
                .boxed(),
            TraceFormat::Tencent => (num(), num(), num(), pick(&["0", "1", "2"]), num())
                .prop_map(|(t, o, z, op, v)| format!("{t},{o},{z},{op},{v}"))
                .boxed(),
            TraceFormat::LibCacheSim => {
                (num(), num(), pick(&["40", "42", "0x28", "0x2A", "28", "2a", "53", "0x2g"]), num(), num())
                    .prop_map(|(v, t, op, z, l)| format!("{v},{t},{op},{z},{l}"))
                    .boxed()
            }
            TraceFormat::Ssdsim | TraceFormat::Mqsim => (num(), num(), num(), num(), pick(&["0", "1", "2"]))
                .prop_map(|(t, d, l, z, op)| format!("{t} {d} {l} {z} {op}"))
                .boxed(),
            TraceFormat::Blkparse(_) => (
                num(),
                num(),
                pick(&["Q", "D", "C", "M", "R", "P", "m", "UT", "1"]),
                pick(&["W", "R", "WS", "FWFS", "D", "N", "FN", "RA", "X"]),
                num(),
                num(),
            )
                .prop_map(|(seq, t, a, rwbs, s, n)| {
                    format!("  8,{seq}   3 {seq} {t}.000001 697 {a} {rwbs} {s} + {n} [k]")
                })
                .boxed(),
            TraceFormat::FioIolog(_) => (
                num(),
                pick(&["/dev/sdb", "/dev/sdc"]),
                pick(&["read", "write", "trim", "sync", "wait", "add", "open", "close", "erase"]),
                num(),
                num(),
            )
                .prop_map(|(t, f, a, o, z)| match a.as_str() {
                    "add" | "open" | "close" => format!("{t} {f} {a}"),
                    _ => format!("{t} {f} {a} {o} {z}"),
                })
                .boxed(),
            TraceFormat::FioLog => (num(), num(), pick(&["0", "1", "2", "3"]), num(), num())
                .prop_map(|(t, v, d, b, o)| format!("{t}, {v}, {d}, {b}, {o}, 0"))
                .boxed(),
            TraceFormat::Csv(_) => (num(), pick(&["R", "W", "r", "read", "T"]), num(), num(), num())
                .prop_map(|(t, op, o, z, v)| format!("{t},{op},{o},{z},{v}"))
                .boxed(),
            TraceFormat::Native => (num(), pick(&["R", "W", "T", "w", "Q"]), num(), num(), num())
                .prop_map(|(t, op, o, z, v)| format!("{t} {op} {o} {z} {v}"))
                .boxed(),
        };
        let junk = prop::collection::vec(prop_oneof![num(), pick(&["R", "W", "#", ",", "md5", "\u{e9}"])], 0..8)
            .prop_map(|t| t.join(" "));
        prop_oneof![7 => shaped, 1 => junk].boxed()
    }

    fn trace() -> impl Strategy<Value = (TraceFormat, String)> {
        prop::sample::select(TraceFormat::all().collect::<Vec<_>>()).prop_flat_map(|f| {
            prop::collection::vec(line(f), 0..30).prop_map(move |lines| {
                let mut text = match f {
                    TraceFormat::Native => "# dedupsim-trace v1\n".to_string(),
                    TraceFormat::FioIolog(_) => "fio version 3 iolog\n0 /dev/sdb add\n".to_string(),
                    TraceFormat::Csv(_) => "time_us,op,lba,bytes,volume\n".to_string(),
                    _ => String::new(),
                };
                text.push_str(&lines.join("\n"));
                (f, text)
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]

        /// Whatever the text, loading returns a workload or an error that
        /// names the file; it never panics, whether the format is forced or
        /// detected, in strict or skipping mode, with or without `--wrap`.
        #[test]
        fn loading_arbitrary_traces_returns_ok_or_a_named_error(
            (f, text) in trace(),
            forced in any::<bool>(),
            skip in any::<bool>(),
            wrap in prop::option::of(1u64..1_000_000),
        ) {
            let o = LoadOptions { format: forced.then_some(f), skip_bad_lines: skip, wrap_to_pages: wrap, ..opts() };
            match load_str("fuzz.trace", &text, &o) {
                Ok(l) => {
                    prop_assert!(!l.workload.requests.is_empty());
                    if let Some(w) = wrap {
                        prop_assert!(l.workload.requests.iter().all(|r| u64::from(r.lpn) + u64::from(r.pages) <= w));
                    }
                }
                Err(e) => {
                    let msg = e.to_string();
                    prop_assert!(msg.contains("fuzz.trace"), "error does not name the file: {msg}");
                }
            }
        }
    }
}
