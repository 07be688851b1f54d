//! `dedupsim cluster --reproduce`: the paper's Table I, Table II, Fig. 3,
//! Exp. 1-3 and Exp. 5-8 on the cluster model, with sweeps of cross-file
//! sharing and of the write buffer and the CSR/ATR variants, as one
//! Markdown report (a pure function of the options and the workloads handed
//! in; the CLI writes it). Each node's disks are the paper's HDDs (§V-B) or,
//! with [`ReproduceOptions::device`], dedupsim's simulated SSDs (§VI,
//! `--device ssd`): the same tables, timed on SSDs.

use super::workload::{from_workload, generate_replica, replicas, sharing, FileSet, FioScope, FioSpec};
use super::{
    run, Arrival, AtrFile, ClusterConfig, ClusterError, ClusterReport, CsrGreedy, Device, UpdateMode, WriteMode,
};
use crate::experiment::families;
use std::fmt::Write as _;
use std::path::Path;

/// Sizes of the reproduction.
#[derive(Clone, Debug, PartialEq)]
pub struct ReproduceOptions {
    /// Pages (4 KiB) per FIU replica.
    pub replica_pages: u64,
    /// Bytes per FIO file (Fig. 3, Exp. 1-2, Exp. 5).
    pub fio_file_bytes: u64,
    /// FIO files of Exp. 1-2 and Exp. 5.
    pub fio_files: u32,
    /// Size of the profile-fitted workloads (family b); `None` skips them.
    pub fitted: Option<families::Size>,
    pub seed: u64,
    /// Where the sensitivity plots go (`plots/` of `--out DIR`); `None`:
    /// no plots (the report on standard output).
    pub plots: Option<std::path::PathBuf>,
    /// Each node's disks: the paper's HDDs (default) or simulated SSDs
    /// (`--device ssd`, [`super::ssd`]).
    pub device: Device,
}

impl ReproduceOptions {
    /// The full reproduction (a few minutes on one core).
    pub fn full() -> Self {
        ReproduceOptions {
            replica_pages: 262_144,
            fio_file_bytes: 16 << 20,
            fio_files: 32,
            fitted: Some(families::Size::FULL),
            seed: 42,
            plots: None,
            device: Device::Hdd,
        }
    }
    /// `--quick`: a sixteenth of the work.
    pub fn quick() -> Self {
        ReproduceOptions {
            replica_pages: 32_768,
            fio_file_bytes: 4 << 20,
            fio_files: 16,
            fitted: Some(families::Size::QUICK),
            seed: 42,
            plots: None,
            device: Device::Hdd,
        }
    }
}

/// Table I of the paper (dedup ratio, 20 nodes, superchunk size in chunks).
pub const TABLE_I_SIZES: [u32; 5] = [1, 4, 16, 64, 256];
pub const TABLE_I: [(&str, [f64; 5]); 3] = [
    ("homes", [1.250, 1.107, 1.072, 1.070, 1.067]),
    ("mail", [2.326, 1.538, 1.266, 1.088, 1.088]),
    ("webvm", [1.136, 1.103, 1.089, 1.088, 1.087]),
];

/// The profile-fitted workloads of family (b) ([`families::FITTED`]), each
/// generated at `size` with `seed`; one file per write request.
pub fn fitted_sets(size: families::Size, seed: u64) -> Result<Vec<FileSet>, ClusterError> {
    families::FITTED
        .iter()
        .map(|name| {
            let bad = |reason: String| ClusterError::Family { workload: format!("fitted:{name}"), reason };
            let p = crate::profile::Profile::load_named(Path::new(name), &[]).map_err(|e| bad(e.to_string()))?;
            let n = (p.source.requests as f64 * size.scale_of(&p)).round().max(1.0) as u64;
            let w = crate::profile::generate(&p, n, seed).map_err(|e| bad(e.to_string()))?;
            let mut f = from_workload(&w)?;
            f.name = format!("fitted:{name}");
            Ok(f)
        })
        .collect()
}

/// The recorded workloads of family (c): every `*.trace` of `dir`
/// ([`families::recorded`]), one file per write request.
pub fn recorded_sets(dir: &Path) -> Result<Vec<FileSet>, ClusterError> {
    let members = families::recorded(dir)
        .map_err(|e| ClusterError::Family { workload: dir.display().to_string(), reason: e.to_string() })?;
    let mut out = Vec::new();
    for m in members {
        let crate::experiment::WorkloadSpec::Trace(path) = &m.def.spec else { continue };
        let loaded = crate::trace::load(path, &crate::trace::LoadOptions::default())?;
        let mut f = from_workload(&loaded.workload)?;
        f.name = format!("recorded:{}", path.file_stem().map_or(String::new(), |s| s.to_string_lossy().into_owned()));
        out.push(f);
    }
    Ok(out)
}

/// A ratio of throughputs, as the paper writes them ("1.72×").
fn times(new: f64, old: f64) -> String {
    if old == 0.0 {
        "n/a".into()
    } else {
        format!("{:.2}x", new / old)
    }
}

fn pct(new: f64, old: f64) -> String {
    if old == 0.0 {
        "n/a".into()
    } else {
        format!("{:+.1}%", (new / old - 1.0) * 100.0)
    }
}

/// Draws a sensitivity plot of read I/Os vs Base into `opts.plots` (if
/// set) and links it from the report.
fn plot(
    opts: &ReproduceOptions,
    md: &mut String,
    stem: &str,
    title: &str,
    x: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), ClusterError> {
    let Some(dir) = &opts.plots else { return Ok(()) };
    if series.iter().all(|s| s.1.len() < 2) {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| ClusterError::Plot(format!("{}: {e}", dir.display())))?;
    // In x order (the sweep's last steps may measure nearly equal shares).
    let mut series = series.to_vec();
    for s in &mut series {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    crate::plot::lines(&dir.join(stem), title, x, "read I/Os vs Base (%)", &series)
        .map_err(|e| ClusterError::Plot(e.to_string()))?;
    let _ = writeln!(md, "\n![{stem}](plots/{stem}.png)");
    Ok(())
}

/// Runs the reproduction. `fiu` are the FIU excerpts found (name, files);
/// `progress` is told each step's name.
pub fn reproduce(
    opts: &ReproduceOptions,
    fiu: &[FileSet],
    recorded: &[FileSet],
    progress: &mut dyn FnMut(&str),
) -> Result<String, ClusterError> {
    let mut md = String::new();
    let mut base = ClusterConfig { seed: opts.seed, ..ClusterConfig::default() };
    base.time.device = opts.device.clone();
    if let Device::Ssd(d) = &opts.device {
        let _ = writeln!(
            md,
            "Disks: every node's {} disks are dedupsim's simulated SSD (`--device ssd`: configuration {} with policy \
             {}, {} GiB logical each) instead of the paper's 7,200 rpm HDDs (§V-B); read I/O counts do not depend on \
             the disk, the MB/s columns do. Exp. 6 keeps the HDD model (its one-chunk update path).\n",
            base.time.disks,
            d.config.name,
            d.policy,
            d.logical_bytes() >> 30
        );
    }
    let reps: Vec<FileSet> = replicas().iter().map(|r| generate_replica(r, opts.replica_pages, opts.seed)).collect();

    // Table I.
    progress("Table I");
    let _ = writeln!(
        md,
        "## Table I: dedup ratio vs superchunk size (20 nodes, 4 KiB chunks, 4 write threads, {} pages per replica)\n",
        opts.replica_pages
    );
    let _ = writeln!(md, "| trace | 1 | 4 | 16 | 64 | 256 |\n|---|---|---|---|---|---|");
    for (rep, (key, paper)) in reps.iter().zip(TABLE_I) {
        let w = rep.chunk(4096);
        let mut row = format!("| {key} (measured) |");
        for sc in TABLE_I_SIZES {
            let cfg = ClusterConfig { nodes: 20, mode: WriteMode::Superchunk, superchunk_chunks: sc, ..base.clone() };
            let _ = write!(row, " {:.3} |", run(&w, &cfg)?.dedup_ratio);
        }
        let _ = writeln!(md, "{row}");
        let _ = writeln!(md, "| {key} (paper) |{}", paper.iter().map(|x| format!(" {x:.3} |")).collect::<String>());
    }

    // Table II.
    progress("Table II");
    let _ = writeln!(md, "\n## Table II: chunks that exist in more than one file\n");
    let _ =
        writeln!(md, "| workload | files | chunks | distinct | shared by >1 file | paper |\n|---|---|---|---|---|---|");
    for (rep, r) in reps.iter().zip(replicas()) {
        let s = sharing(&rep.chunk(4096).files);
        let _ = writeln!(
            md,
            "| {} replica | {} | {} | {} | {:.1}% | {:.1}% |",
            r.key,
            rep.files.len(),
            s.chunks,
            s.distinct,
            s.shared_ratio * 100.0,
            r.shared * 100.0
        );
    }
    for f in fiu {
        let s = sharing(&f.chunk(4096).files);
        let _ = writeln!(
            md,
            "| {} (FIU excerpt) | {} | {} | {} | {:.1}% | - |",
            f.name,
            f.files.len(),
            s.chunks,
            s.distinct,
            s.shared_ratio * 100.0
        );
    }

    // Fig. 3.
    progress("Fig. 3");
    let fig3 = FioSpec::new(1.0, 4, opts.fio_file_bytes).generate(opts.seed).chunk(4096);
    let _ = writeln!(
        md,
        "\n## Fig. 3: read I/Os per file vs write threads and nodes (4 FIO files of {} MiB, no duplicates, mode none, independent arrivals)\n",
        opts.fio_file_bytes >> 20
    );
    let fig3_row = |nodes: u32, arrival: Arrival, request: u32| -> Result<(Vec<f64>, String), ClusterError> {
        let mut v = Vec::new();
        for t in 1..=4u32 {
            let cfg = ClusterConfig { nodes, threads: t, arrival, request, ..base.clone() };
            v.push(run(&fig3, &cfg)?.read_ios_per_file);
        }
        let cells: String = v.iter().map(|x| format!(" {x:.1} |")).collect();
        Ok((v.clone(), format!("{cells} {} |", pct(v[3], v[0]))))
    };
    let _ =
        writeln!(md, "| nodes | 1 thread | 2 threads | 3 threads | 4 threads | 1 -> 4 |\n|---|---|---|---|---|---|");
    for nodes in [3u32, 8, 20] {
        let (_, cells) = fig3_row(nodes, Arrival::Poisson, base.request)?;
        let _ = writeln!(md, "| {nodes} |{cells}");
    }
    let _ = writeln!(md, "\nPaper: +96.2% from 1 to 4 threads on 3 nodes.");
    progress("Fig. 3 sensitivity");
    let _ = writeln!(
        md,
        "\n## Fig. 3 sensitivity: 3 nodes, by arrival model and write request size (read I/Os per file)\n"
    );
    let _ = writeln!(
        md,
        "| arrival, request | 1 thread | 2 threads | 3 threads | 4 threads | 1 -> 4 |\n|---|---|---|---|---|---|"
    );
    for arrival in [Arrival::Lockstep, Arrival::Poisson] {
        for kib in [64u32, 256, 1024, 4096] {
            let (_, cells) = fig3_row(3, arrival, kib / 4)?;
            let _ = writeln!(md, "| {} {} KiB |{cells}", arrival.name(), kib);
        }
    }

    // Exp. 1-2.
    progress("Exp. 1-2");
    let _ = writeln!(
        md,
        "\n## Exp. 1-2: dedup ratio and read I/Os per scheme (8 nodes, 4 threads, {} FIO files of {} MiB, share {}, superchunk 1 MiB)\n",
        opts.fio_files,
        opts.fio_file_bytes >> 20,
        super::workload::DEFAULT_SHARE
    );
    let _ = writeln!(
        md,
        "| workload | shared by >1 file | scheme | dedup ratio | read I/Os | vs Base | vs SC | read MB/s | vs Base | vs SC | read MB/s, no cache | vs Base | write MB/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let mut exp: Vec<(String, crate::cluster::ChunkedFiles)> = Vec::new();
    for (label, d) in [("FIO_15", 1.5), ("FIO_20", 2.0), ("FIO_33", 3.3)] {
        let spec = FioSpec::new(d, opts.fio_files, opts.fio_file_bytes);
        exp.push((label.to_string(), spec.generate(opts.seed).chunk(4096)));
    }
    for rep in &reps {
        exp.push((format!("{} replica", rep.name), rep.chunk(4096)));
    }
    for (label, w) in &exp {
        let mut got: Vec<(WriteMode, ClusterReport)> = Vec::new();
        let mut cold: Vec<f64> = Vec::new();
        for mode in WriteMode::ALL {
            progress(&format!("Exp. 1-2 {label} {mode}"));
            got.push((mode, run(w, &ClusterConfig { mode, ..base.clone() })?));
            let no_cache = super::TimeParams { cache_bytes: 0, ..base.time.clone() };
            cold.push(run(w, &ClusterConfig { mode, time: no_cache, ..base.clone() })?.time.read_mb_s);
        }
        let ios = |m: WriteMode| got.iter().find(|g| g.0 == m).map_or(0.0, |g| g.1.read_ios as f64);
        let mbs = |m: WriteMode| got.iter().find(|g| g.0 == m).map_or(0.0, |g| g.1.time.read_mb_s);
        for ((mode, r), cold_mb) in got.iter().zip(&cold) {
            let _ = writeln!(
                md,
                "| {label} | {:.1}% | {mode} | {:.3} | {} | {} | {} | {:.0} | {} | {} | {:.0} | {} | {:.0} |",
                r.sharing.shared_ratio * 100.0,
                r.dedup_ratio,
                r.read_ios,
                pct(r.read_ios as f64, ios(WriteMode::None)),
                pct(r.read_ios as f64, ios(WriteMode::Superchunk)),
                r.time.read_mb_s,
                times(r.time.read_mb_s, mbs(WriteMode::None)),
                times(r.time.read_mb_s, mbs(WriteMode::Superchunk)),
                cold_mb,
                times(*cold_mb, cold[0]),
                r.time.write_mb_s
            );
        }
    }
    let _ = writeln!(
        md,
        "\nPaper (Fig. 10(c)): read I/Os vs Base up to -87.7% (CSR, FIO_15) and -87.2% (ATR, FIO_33); vs SC up to -36.4% (CSR) and -32.1% (ATR), both on DEDIS_HP (not available offline). Paper (Fig. 10(b)): read throughput vs Base up to 7.75x (CSR, FIO_15) and 6.34x (ATR, FIO_33); vs SC up to 1.72x (CSR, FIO_33) and 1.45x (ATR, FIO_33); Rewrite above both. Read and write MB/s: the timed model (docs/cluster.md, Time)."
    );

    // Exp. 8: write throughput.
    progress("Exp. 8");
    let _ = writeln!(
        md,
        "\n## Exp. 8: write throughput (MB/s of file data) and network messages per scheme (as Exp. 1-2)\n"
    );
    let _ = writeln!(
        md,
        "| workload | Base | SC | ReoDedup-C | ReoDedup-A | ReoDedup-C unbatched (`--write-batch chunk`) | messages Base / SC / ReoDedup |\n|---|---|---|---|---|---|---|"
    );
    for (label, w) in exp.iter().take(3) {
        let r = |mode, batch| {
            run(w, &ClusterConfig { mode, time: super::TimeParams { batch, ..base.time.clone() }, ..base.clone() })
        };
        let auto = super::WriteBatch::Auto;
        let (b, sc, c, a) = (
            r(WriteMode::None, auto)?,
            r(WriteMode::Superchunk, auto)?,
            r(WriteMode::Csr, auto)?,
            r(WriteMode::Atr, auto)?,
        );
        let cu = r(WriteMode::Csr, super::WriteBatch::Chunk)?;
        let _ = writeln!(
            md,
            "| {label} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {} / {} / {} |",
            b.time.write_mb_s,
            sc.time.write_mb_s,
            c.time.write_mb_s,
            a.time.write_mb_s,
            cu.time.write_mb_s,
            b.time.write_messages,
            sc.time.write_messages,
            c.time.write_messages
        );
    }
    let _ = writeln!(
        md,
        "\nPaper (Fig. 13): ReoDedup's write throughput well above Base's and close to SC's (write buffers batch a node's chunks into one network I/O; Base sends one chunk per transmission)."
    );

    // Exp. 3.
    progress("Exp. 3");
    let w3 = &exp[1].1; // FIO_20
    let _ = writeln!(md, "\n## Exp. 3: read I/Os and read throughput vs node count (FIO_20 as above)\n");
    let _ = writeln!(md, "| nodes | none | superchunk | rewrite | csr | atr |\n|---|---|---|---|---|---|");
    let mut mb: Vec<Vec<f64>> = Vec::new();
    for nodes in [8u32, 16, 24] {
        let mut row = format!("| {nodes} |");
        let mut v = Vec::new();
        for mode in WriteMode::ALL {
            let r = run(w3, &ClusterConfig { nodes, mode, ..base.clone() })?;
            let _ = write!(row, " {} I/Os, {:.0} MB/s |", r.read_ios, r.time.read_mb_s);
            v.push(r.time.read_mb_s);
        }
        mb.push(v);
        let _ = writeln!(md, "{row}");
    }
    let growth: String = (0..WriteMode::ALL.len()).map(|i| format!(" {} |", pct(mb[2][i], mb[0][i]))).collect();
    let _ = writeln!(md, "| 8 -> 24 (read MB/s) |{growth}");
    let _ = writeln!(
        md,
        "| paper, 8 -> 24 (Fig. 11) | +44.6% | +30.7% | +16.9% | +17.6% | +19.8% |\n\nPaper (Fig. 11): every scheme's read throughput grows with the node count (read parallelism); ReoDedup above Base and SC at every node count."
    );
    // Exp. 3, why (issue 28 item 8): what bounds the read phase as nodes
    // are added, and whether more concurrent readers change it.
    let _ = writeln!(
        md,
        "\nWhat bounds it (FIO_20 as above): disk reads after the read cache, the busiest disk's busy share of the read \
         phase, and read MB/s with {} readers (the default) and with 32 (a reader per file).\n\n| nodes | scheme | disks | \
         read I/Os | disk reads | busiest disk busy | read MB/s, {} readers | read MB/s, 32 readers |\n|---|---|---|---|---|---|---|---|",
        base.time.readers, base.time.readers
    );
    for nodes in [8u32, 16, 24] {
        for mode in [WriteMode::None, WriteMode::Csr] {
            let r = run(w3, &ClusterConfig { nodes, mode, ..base.clone() })?;
            let many = ClusterConfig {
                nodes,
                mode,
                time: crate::cluster::TimeParams { readers: 32, ..base.time.clone() },
                ..base.clone()
            };
            let r32 = run(w3, &many)?;
            let _ = writeln!(
                md,
                "| {nodes} | {} | {} | {} | {} | {:.1}% | {:.0} | {:.0} |",
                mode.name(),
                nodes * base.time.disks,
                r.read_ios,
                r.time.read_disk_ios,
                100.0 * r.time.read_disk_utilization,
                r.time.read_mb_s,
                r32.time.read_mb_s
            );
        }
    }

    // Exp. 5.
    progress("Exp. 5");
    let w = &exp[1].1; // FIO_20
    let _ = writeln!(
        md,
        "\n## Exp. 5: fragmented update (FU) vs IRU, FIO_20 as above, ReoDedup-C, 25% of an updated file's chunks rewritten\n"
    );
    let _ = writeln!(
        md,
        "| update ratio | FU read I/Os | IRU read I/Os | IRU vs FU | IRU in place | IRU remapped | IRU redirects (1 I/O each, in IRU read I/Os) | FU read MB/s | IRU read MB/s | IRU vs FU |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    for ratio in [0.1, 0.2, 0.3, 0.4, 0.5] {
        progress(&format!("Exp. 5 {ratio}"));
        let cfg = |update| ClusterConfig { mode: WriteMode::Csr, update, update_ratio: ratio, ..base.clone() };
        let fu = run(w, &cfg(UpdateMode::Normal))?;
        let iru = run(w, &cfg(UpdateMode::Iru))?;
        let _ = writeln!(
            md,
            "| {:.0}% | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} | {} |",
            ratio * 100.0,
            fu.read_ios,
            iru.read_ios,
            pct(iru.read_ios as f64, fu.read_ios as f64),
            iru.updated_in_place,
            iru.remapped_chunks,
            iru.redirects,
            fu.time.read_mb_s,
            iru.time.read_mb_s,
            pct(iru.time.read_mb_s, fu.time.read_mb_s)
        );
    }
    let _ = writeln!(
        md,
        "\nPaper (Fig. 12(b)-(f)): IRU's read throughput above FU's at every update ratio, up to +86.8% (FIO_20, 20%)."
    );

    // Exp. 6 and 7 (issue 28 item 8).
    let _ = writeln!(
        md,
        "\n## Exp. 6: update latency, FU vs IRU (one 4 KiB chunk on an idle cluster, the testbed's network and HDD model)\n\n\
         | node acknowledges | FU (µs) | IRU (µs) | IRU vs FU |\n|---|---|---|---|"
    );
    for (label, persist) in [
        ("on receipt into its write buffer (the write phase's rule)", false),
        ("after writing the chunk to its disk (a random access)", true),
    ] {
        let fu = super::timing::update_latency_us(&base.time, 4096, false, persist);
        let iru = super::timing::update_latency_us(&base.time, 4096, true, persist);
        let _ = writeln!(md, "| {label} | {fu:.1} | {iru:.1} | {} |", pct(iru, fu));
    }
    let _ = writeln!(
        md,
        "| paper (Fig. 12(g)) | | | +7.6% on average |\n\nIRU sends the chunk to the old node, then the remapping index \
         ({} bytes) to the new node, each acknowledged (§IV-C Steps 1-2); FU sends the chunk to the new node. The extra \
         round trip doubles an update acknowledged from memory and adds about 1% to one that waits for the disk; the \
         paper's +7.6% lies between (its update path also chunks, fingerprints and writes through Ceph, none of it modelled).",
        super::timing::REMAP_INDEX_BYTES
    );
    // Exp. 7 (issue 28): the I/O side, an I/O task co-running on a node's
    // HDD with the write phase (timing::IoTask); the CPU side is a
    // measurement (`cluster --app-time`), kept out of this report.
    progress("Exp. 7");
    let _ = writeln!(
        md,
        "\n## Exp. 7: interference with applications (FIO_20 as above, HDD model)\n\nAn application's I/O task runs on \
         node 0's first disk during the write phase: one request at a time, sequential over its own file in the middle of \
         the disk (512 GiB), queueing first come, first served with the node's flushes (every switch between its file and \
         the store costs a seek and half a turn). Its speed = bytes it transferred within the write phase / the phase's \
         length; NoDedup = the same task alone on the disk over a window of the same length. The disks are the HDD model \
         whatever `--device` says (the paper's testbed).\n\n| task request | scheme | write phase (s) | task requests | \
         task MB/s, NoDedup | task MB/s, beside the scheme | vs NoDedup |\n|---|---|---|---|---|---|---|"
    );
    for req in [64u64 << 10, 1 << 20, 4 << 20] {
        for mode in [WriteMode::None, WriteMode::Superchunk, WriteMode::Csr, WriteMode::Atr] {
            let time = crate::cluster::TimeParams {
                device: Device::Hdd,
                io_task: Some(crate::cluster::IoTask::on_first_disk(req, base.time.disk_bytes)),
                ..base.time.clone()
            };
            let r = run(w, &ClusterConfig { mode, time, ..base.clone() })?;
            let Some(t) = r.time.io_task else { continue };
            let _ = writeln!(
                md,
                "| {} KiB | {} | {:.3} | {} | {:.1} | {:.1} | {} |",
                req >> 10,
                mode.name(),
                t.seconds,
                t.requests,
                t.alone_mb_s,
                t.mb_s,
                pct(t.mb_s, t.alone_mb_s)
            );
        }
    }
    let _ = writeln!(
        md,
        "\nPaper (Fig. 12(h)): the I/O task's speed at most 1.5% lower beside ReoDedup-C/A than under NoDedup; a matrix \
         multiplication's latency (100×10 by 10×4) at most 6% higher. ReoDedup-C and -A flush the same chunks (relocation \
         reorders a buffer in memory before its one sequential write, §V-A), so the disk sees the same work under both. \
         The CPU side is measured on the real code by `dedupsim cluster --app-time` (a measurement, so not in this report; \
         docs/cluster.md gives it)."
    );
    // Sharing sweep (issue 28 item 5).
    progress("sharing sweep");
    let _ = writeln!(
        md,
        "\n## Sharing sweep: read I/Os per scheme vs cross-file sharing (FIO_20: {} files of {} MiB, 8 nodes, 4 threads, buffer 1,024)\n",
        opts.fio_files,
        opts.fio_file_bytes >> 20
    );
    let _ = writeln!(
        md,
        "share = the part of the duplicates that repeat another file's page; shared = Table II's chunks in more than one file. Cells: read I/Os (vs Base); superchunk and rewrite also their dedup ratio (Base's in the first columns).\n"
    );
    let _ = writeln!(
        md,
        "| share | shared by >1 file | Base read I/Os | dedup ratio | superchunk | rewrite | csr | atr |\n|---|---|---|---|---|---|---|---|"
    );
    let scopes = [
        ("0 (scope=file)", FioScope::File),
        ("0.1", FioScope::Share(0.1)),
        ("0.25 (default)", FioScope::Share(0.25)),
        ("0.5", FioScope::Share(0.5)),
        ("0.75", FioScope::Share(0.75)),
        ("1", FioScope::Share(1.0)),
        ("scope=global", FioScope::Global),
    ];
    let schemes = ["superchunk", "rewrite", "csr", "atr"];
    let mut sharing: Vec<(String, Vec<(f64, f64)>)> = schemes.iter().map(|s| (s.to_string(), Vec::new())).collect();
    for (label, scope) in scopes {
        progress(&format!("sharing sweep {label}"));
        let spec = FioSpec { scope, ..FioSpec::new(2.0, opts.fio_files, opts.fio_file_bytes) };
        let w = spec.generate(opts.seed).chunk(4096);
        let r = |mode| run(&w, &ClusterConfig { mode, ..base.clone() });
        let b = r(WriteMode::None)?;
        let cell = |x: &ClusterReport, ratio: bool| {
            let d = if ratio { format!(", {:.3}", x.dedup_ratio) } else { String::new() };
            format!("{} ({}{d})", x.read_ios, pct(x.read_ios as f64, b.read_ios as f64))
        };
        let reports = [r(WriteMode::Superchunk)?, r(WriteMode::Rewrite)?, r(WriteMode::Csr)?, r(WriteMode::Atr)?];
        if b.read_ios > 0 {
            for (series, x) in sharing.iter_mut().zip(&reports) {
                let change = (x.read_ios as f64 / b.read_ios as f64 - 1.0) * 100.0;
                series.1.push((b.sharing.shared_ratio * 100.0, change));
            }
        }
        let _ = writeln!(
            md,
            "| {label} | {:.1}% | {} | {:.3} | {} | {} | {} | {} |",
            b.sharing.shared_ratio * 100.0,
            b.read_ios,
            b.dedup_ratio,
            cell(&reports[0], true),
            cell(&reports[1], true),
            cell(&reports[2], false),
            cell(&reports[3], false)
        );
    }
    plot(
        opts,
        &mut md,
        "cluster_sharing",
        "Read I/Os vs cross-file sharing (FIO_20, 8 nodes)",
        "chunks shared by more than one file (%)",
        &sharing,
    )?;

    // Buffer sweep.
    progress("buffer sweep");
    let w20 = &exp[1].1;
    let b20 = run(w20, &base)?;
    let sc20 = run(w20, &ClusterConfig { mode: WriteMode::Superchunk, ..base.clone() })?;
    let rw20 = run(w20, &ClusterConfig { mode: WriteMode::Rewrite, ..base.clone() })?;
    let _ = writeln!(
        md,
        "\n## Buffer sweep: CSR and ATR read I/Os vs the write buffer they relocate (FIO_20 as in Exp. 1-2)\n"
    );
    let _ = writeln!(
        md,
        "Base, superchunk and rewrite do not depend on the buffer: Base {} read I/Os (dedup ratio {:.3}), superchunk {} ({:.3}), rewrite {} ({:.3}).\n",
        b20.read_ios, b20.dedup_ratio, sc20.read_ios, sc20.dedup_ratio, rw20.read_ios, rw20.dedup_ratio
    );
    let _ = writeln!(md, "| buffer (chunks) | csr | csr vs Base | csr vs SC | atr | atr vs Base | atr vs SC |\n|---|---|---|---|---|---|---|");
    let mut buffers: Vec<(String, Vec<(f64, f64)>)> = vec![("csr".into(), Vec::new()), ("atr".into(), Vec::new())];
    for buffer in [256u32, 512, 1024, 2048, 4096] {
        progress(&format!("buffer sweep {buffer}"));
        let c = run(w20, &ClusterConfig { mode: WriteMode::Csr, buffer, ..base.clone() })?;
        let a = run(w20, &ClusterConfig { mode: WriteMode::Atr, buffer, ..base.clone() })?;
        let (bi, si) = (b20.read_ios as f64, sc20.read_ios as f64);
        if bi > 0.0 {
            buffers[0].1.push((f64::from(buffer), (c.read_ios as f64 / bi - 1.0) * 100.0));
            buffers[1].1.push((f64::from(buffer), (a.read_ios as f64 / bi - 1.0) * 100.0));
        }
        let _ = writeln!(
            md,
            "| {buffer} | {} | {} | {} | {} | {} | {} |",
            c.read_ios,
            pct(c.read_ios as f64, bi),
            pct(c.read_ios as f64, si),
            a.read_ios,
            pct(a.read_ios as f64, bi),
            pct(a.read_ios as f64, si)
        );
    }

    plot(
        opts,
        &mut md,
        "cluster_buffer",
        "Read I/Os vs the relocated write buffer (FIO_20, 8 nodes)",
        "write buffer (chunks)",
        &buffers,
    )?;

    // The algorithms' variants (issue 28 item 6).
    progress("variants");
    let _ = writeln!(
        md,
        "\n## CSR and ATR variants (FIO_20 as in Exp. 1-2): the paper's algorithms as written (rows, random) and the alternatives\n"
    );
    let _ = writeln!(md, "| scheme | variant | read I/Os | vs Base |\n|---|---|---|---|");
    for greedy in [CsrGreedy::Rows, CsrGreedy::Global] {
        let r = run(w20, &ClusterConfig { mode: WriteMode::Csr, csr: greedy, ..base.clone() })?;
        let _ = writeln!(
            md,
            "| csr | {} | {} | {} |",
            greedy.name(),
            r.read_ios,
            pct(r.read_ios as f64, b20.read_ios as f64)
        );
    }
    for file in [AtrFile::Random, AtrFile::First] {
        let r = run(w20, &ClusterConfig { mode: WriteMode::Atr, atr: file, ..base.clone() })?;
        let _ = writeln!(
            md,
            "| atr | {} | {} | {} |",
            file.name(),
            r.read_ios,
            pct(r.read_ios as f64, b20.read_ios as f64)
        );
    }

    // Workload families (issue 24 item 5).
    progress("workload families");
    let mut fam: Vec<(&str, FileSet)> = Vec::new();
    for (label, d) in [("FIO_15", 1.5), ("FIO_20", 2.0), ("FIO_33", 3.3)] {
        let mut f = FioSpec::new(d, opts.fio_files, opts.fio_file_bytes).generate(opts.seed);
        f.name = label.to_string();
        fam.push(("a) FIO-like", f));
    }
    if let Some(size) = opts.fitted {
        fam.extend(fitted_sets(size, opts.seed)?.into_iter().map(|f| ("b) fitted", f)));
    }
    fam.extend(recorded.iter().cloned().map(|f| ("c) recorded", f)));
    let _ = writeln!(
        md,
        "\n## Workload families: the headline claims on FIO-like, profile-fitted and recorded workloads (8 nodes, 4 threads; each write request of a trace is one file)\n"
    );
    let _ = writeln!(
        md,
        "Read I/Os: Base's count, the others vs Base. Read MB/s: Base's, the others as multiples of Base's. {}\n",
        if recorded.is_empty() {
            "Family c) (recorded workloads) needs `--recorded DIR`."
        } else {
            "Family c) from `--recorded`."
        }
    );
    let _ = writeln!(
        md,
        "| family | workload | files | mean chunks per file | shared by >1 file | Base read I/Os | SC | rewrite | CSR | ATR | Base read MB/s | SC | rewrite | CSR | ATR | CSR vs SC |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let _ = writeln!(
        md,
        "| paper | Exp. 1-2 (FIO, DEDIS) | | | 12.6-19.3% (Table II) | | | | up to -87.7% | up to -87.2% | | | above CSR | up to 7.75x | up to 6.34x | up to 1.72x |"
    );
    for (family, f) in &fam {
        progress(&format!("workload families {}", f.name));
        let w = f.chunk(4096);
        let got: Vec<ClusterReport> = WriteMode::ALL
            .iter()
            .map(|&mode| run(&w, &ClusterConfig { mode, ..base.clone() }))
            .collect::<Result<_, _>>()?;
        let b = &got[0];
        let mut row = format!(
            "| {family} | {} | {} | {:.1} | {:.1}% | {} |",
            f.name,
            b.files,
            b.sharing.chunks as f64 / b.files.max(1) as f64,
            b.sharing.shared_ratio * 100.0,
            b.read_ios
        );
        for r in &got[1..] {
            let _ = write!(row, " {} |", pct(r.read_ios as f64, b.read_ios as f64));
        }
        let _ = write!(row, " {:.0} |", b.time.read_mb_s);
        for r in &got[1..] {
            let _ = write!(row, " {} |", times(r.time.read_mb_s, b.time.read_mb_s));
        }
        let _ = writeln!(row, " {} |", times(got[3].time.read_mb_s, got[1].time.read_mb_s));
        md.push_str(&row);
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells of the table row of section `heading` whose first cell is
    /// `first`.
    fn row(md: &str, heading: &str, first: &str) -> Vec<String> {
        let section = md.split("\n## ").find(|s| s.starts_with(heading)).unwrap_or_else(|| panic!("{heading}"));
        let line = section
            .lines()
            .find(|l| l.starts_with(&format!("| {first} |")))
            .unwrap_or_else(|| panic!("{heading}: no row {first}"));
        line.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
    }

    /// A small reproduction checked against numbers computed by hand.
    ///
    /// Fig. 3 (4 files of 2 MiB = 512 chunks without duplicates, 1 MiB
    /// requests, so 2 requests per file, N nodes): a file written alone
    /// lies in one run per node (each node holds ~512/N < 1,024 of its
    /// chunks): N read I/Os. Written by interleaving threads, each request
    /// is its own run on every node: 2N. With 3 threads, files 0-2
    /// interleave (2N) and file 3 is written alone (N): (3·2N + N)/4 =
    /// 1.75N. So 3 nodes: 3, 6, 5.25, 6 (+100%); 8: 8, 16, 14, 16; 20: 20,
    /// 40, 35, 40.
    ///
    /// Rewrite writes each file's chunks on a node as one run (< 1,024
    /// chunks): 4 files x 8 nodes = 32 read I/Os at every sharing level.
    #[test]
    fn a_tiny_reproduction_matches_hand_computed_numbers() {
        let opts = ReproduceOptions {
            replica_pages: 3_000,
            fio_file_bytes: 2 << 20,
            fio_files: 4,
            fitted: None,
            seed: 1,
            plots: None,
            device: Device::Hdd,
        };
        let mut steps = Vec::new();
        let md = reproduce(&opts, &[], &[], &mut |s| steps.push(s.to_string())).unwrap();
        let num = |c: &str| c.split_whitespace().next().unwrap().parse::<f64>().unwrap();
        // Lockstep, 1 MiB requests, 3 nodes: the hand-computed 3, 6, 5.25, 6.
        let r = row(&md, "Fig. 3 sensitivity", "lockstep 1024 KiB");
        for (t, w) in [3.0, 6.0, 5.25, 6.0].iter().enumerate() {
            assert!((num(&r[t + 1]) - w).abs() <= 0.05, "lockstep {} threads: {} vs {w}", t + 1, r[t + 1]);
        }
        assert_eq!(r[5], "+100.0%");
        // Independent arrivals: one thread is unchanged (N I/Os per file);
        // with more threads a file can send requests back to back, so it
        // never costs more than in lockstep (2N).
        for nodes in [3u32, 8, 20] {
            let r = row(&md, "Fig. 3", &nodes.to_string());
            let n = f64::from(nodes);
            assert!((num(&r[1]) - n).abs() <= 0.05, "{nodes} nodes, 1 thread: {}", r[1]);
            for (t, cell) in r.iter().enumerate().take(5).skip(2) {
                let x = num(cell);
                assert!(x >= n - 0.05 && x <= 2.0 * n + 0.05, "{nodes} nodes, {t} threads: {x}");
            }
        }
        for (w, label) in [("FIO_15", "FIO_15"), ("FIO_20", "FIO_20"), ("FIO_33", "FIO_33")] {
            let section = md.split("\n## ").find(|s| s.starts_with("Exp. 1-2")).unwrap();
            let line = section.lines().find(|l| l.starts_with(&format!("| {w} |")) && l.contains("| rewrite |"));
            let cells: Vec<&str> = line.unwrap().trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells[4], "32", "{label}");
        }
        for share in ["0 (scope=file)", "0.25 (default)", "1", "scope=global"] {
            let r = row(&md, "Sharing sweep", share);
            assert!(r[5].starts_with("32 ("), "{share}: {}", r[5]);
        }
        for h in [
            "Table I",
            "Table II",
            "Exp. 3",
            "Exp. 5",
            "Exp. 8",
            "Buffer sweep",
            "CSR and ATR variants",
            "Workload families",
        ] {
            assert!(md.contains(&format!("\n## {h}")), "{h}");
        }
        assert!(steps.len() > 6);
        assert_eq!(reproduce(&opts, &[], &[], &mut |_| {}).unwrap(), md);
    }
}
