//! `dedupsim cluster`: ReoDedup's clustered primary deduplication
//! (src/cluster, docs/cluster.md).

use super::common;
use anyhow::{Context, Result};
use clap::Args;
use dedupsim::cluster::reproduce::{reproduce, ReproduceOptions};
use dedupsim::cluster::workload::{self, FioSpec};
use dedupsim::cluster::{
    self, Arrival, ClusterConfig, ClusterReport, FileSet, ReadModel, TimeParams, UpdateMode, WriteBatch, WriteMode,
};
use dedupsim::experiment::sweep::shell_quote;
use dedupsim::trace::{self, LoadOptions, TraceFormat};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("out_users").args(["emit_jobs", "reproduce"]).multiple(true)))]
#[command(after_help = "\
Lists (--nodes 8,16,24 --mode all ...) make a grid: every combination runs (--superchunk sizes only \
with the superchunk mode, and --superchunk needs it in --mode), or is written as one command line per cell \
with --emit-jobs. The model \
(routing, write buffer, read I/Os of 1024 consecutive chunk slots, each mode's rule) is in \
docs/cluster.md.")]
pub struct ClusterArgs {
    /// Workload: homes, mail, webvm (replicas of the paper's FIU traces, Tables I-II; knobs as
    /// mail:whole=0.1,run=2) or fio:dedup=D[,files=N][,size=SIZE][,share=S|scope=file|global]
    /// (share: the part of the duplicates repeating another file's page, 0.25 by default).
    #[arg(long, conflicts_with_all = ["trace", "from_files"])]
    workload: Option<String>,
    /// Replica size in 4 KiB pages (homes, mail, webvm only) [default: 262144].
    #[arg(long)]
    pages: Option<u64>,
    /// A trace with content (FIU IODedup, native): each write request is one file.
    #[arg(long, conflicts_with = "from_files")]
    trace: Option<PathBuf>,
    /// Trace format (default: auto-detect).
    #[arg(long, requires = "trace")]
    format: Option<TraceFormat>,
    /// Directory trees, read as `trace from-files` does: each regular file is one file.
    #[arg(long, num_args = 1.., value_name = "DIR")]
    from_files: Vec<PathBuf>,
    /// Storage nodes (list) [default: 8].
    #[arg(long, value_delimiter = ',')]
    nodes: Vec<u32>,
    /// Chunk size, a multiple of 4KiB (list) [default: 4KiB].
    #[arg(long, value_delimiter = ',')]
    chunk: Vec<String>,
    /// With --mode superchunk (or all): superchunk size, bytes with a unit (2MiB) or a number of
    /// chunks (256) (list; default 1MiB).
    #[arg(long, value_delimiter = ',')]
    superchunk: Vec<String>,
    /// Write modes: none, superchunk, rewrite, csr, atr, or all (list) [default: none].
    #[arg(long, value_delimiter = ',')]
    mode: Vec<String>,
    /// Concurrent write threads (list) [default: 4].
    #[arg(long, value_delimiter = ',')]
    threads: Vec<u32>,
    /// Size of a write thread's requests, the unit concurrent writes interleave in: bytes with a
    /// unit (1MiB) or a number of chunks [default: 1MiB].
    #[arg(long)]
    request: Option<String>,
    /// Update mode: normal (fragmented update) or iru [default: normal].
    #[arg(long)]
    update: Option<String>,
    /// Share of files updated after the writes, in [0, 1] [default: 0].
    #[arg(long, allow_negative_numbers = true)]
    update_ratio: Option<f64>,
    /// Share of an updated file's chunks that change, in (0, 1] [default: 0.25].
    #[arg(long, allow_negative_numbers = true)]
    update_span: Option<f64>,
    /// Write buffer of a node, in chunks (relocated by csr/atr when full) [default: 1024].
    #[arg(long)]
    buffer: Option<u32>,
    /// Most consecutive chunk slots one read I/O fetches [default: 1024].
    #[arg(long)]
    window: Option<u32>,
    /// What a read I/O is: runs (a run of consecutive slots the file needs, at most --window long),
    /// window (--window consecutive slots from the first one needed, gaps included) or containers
    /// (aligned units of --window slots) [default: runs].
    #[arg(long)]
    read: Option<String>,
    /// CSR's algorithm (mode csr): rows (the paper's per-row greedy, §IV-A Steps 1-6), global
    /// (pairs of the whole matrix in decreasing similarity) or brute (every order; --buffer 10 at
    /// most) [default: rows].
    #[arg(long)]
    csr: Option<String>,
    /// ATR's choice of a chunk's file (mode atr, §IV-B Step 3): random (seeded by --seed) or first
    /// [default: random].
    #[arg(long)]
    atr_file: Option<String>,
    /// Read I/Os charged per IRU redirect (§V-C Exp. 5) [default: 1].
    #[arg(long)]
    redirect_ios: Option<u32>,
    /// How concurrent writers' requests interleave: poisson (independent seeded arrivals) or
    /// lockstep (round-robin) [default: poisson].
    #[arg(long)]
    arrival: Option<String>,
    /// Read cache of duplicated chunks per node (§V-A), bytes with a unit, 0 for none
    /// [default: 16MiB].
    #[arg(long)]
    read_cache: Option<String>,
    /// Network messages per write request: auto (the paper's per scheme, Exp. 8), chunk, unit or
    /// node [default: auto].
    #[arg(long)]
    write_batch: Option<String>,
    /// Exp. 7: an application's I/O task on node 0's first disk during the timed write phase,
    /// sequential requests of this size (e.g. 1MiB) one at a time, its file from the middle of the
    /// disk; adds its MB/s beside the scheme and alone (HDD model only) [default: none].
    #[arg(long, value_name = "SIZE")]
    io_task: Option<String>,
    /// Reader threads of the timed read phase [default: 4].
    #[arg(long)]
    readers: Option<u32>,
    /// Disks per node (§V-B: two), each an HDD or, with --device ssd, a simulated SSD [default: 2].
    #[arg(long)]
    disks: Option<u32>,
    /// The nodes' device (boxed: the SSD flags would make every command's
    /// argument enum larger).
    #[command(flatten)]
    ssd: Box<SsdArgs>,
    /// Seed of the workload generators and the updates.
    #[arg(long, default_value_t = 42, allow_negative_numbers = true, value_parser = common::parse_unsigned::<u64>)]
    seed: u64,
    /// Write the reports as a JSON array (`-` = standard output, no table).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write one command line per grid cell to FILE (each writing DIR/<cell>.json, DIR = --out).
    #[arg(long, value_name = "FILE")]
    emit_jobs: Option<PathBuf>,
    /// With --emit-jobs: output directory of the cells [default: out/cluster]. With --reproduce:
    /// write the report to DIR/REPORT.md (and its sensitivity plots to DIR/plots/) instead of
    /// standard output.
    #[arg(long, requires = "out_users", value_name = "DIR")]
    out: Option<PathBuf>,
    /// Reproduce the paper's Table I, Table II, Fig. 3, Exp. 1-3, 5, 6, 7 (the I/O side) and 8 (read I/Os and timed
    /// throughput) and the workload families (Markdown on stdout, or DIR/REPORT.md with --out DIR);
    /// with --device ssd the same tables timed on simulated SSDs.
    #[arg(long, conflicts_with_all = ["workload", "trace", "from_files", "emit_jobs", "json"])]
    reproduce: bool,
    /// With --reproduce: the recorded workloads (a directory of *.trace files written by
    /// scripts/record-workloads.sh) as the third workload family.
    #[arg(long, requires = "reproduce", value_name = "DIR")]
    recorded: Option<PathBuf>,
    /// Exp. 4: measure the running time (CPU time) of brute-force CSR, greedy CSR and ATR on the
    /// real code (a measurement, so not part of --reproduce); Markdown on stdout.
    #[arg(long, conflicts_with_all = ["reproduce", "workload", "trace", "from_files", "emit_jobs", "json"])]
    algorithm_time: bool,
    /// Exp. 7's CPU side: the latency of a 100x10 by 10x4 matrix multiplication alone and while
    /// the real CSR/ATR code runs on the same CPU (both threads pinned; a measurement, so not part
    /// of --reproduce); Markdown on stdout.
    #[arg(long, conflicts_with_all = ["reproduce", "algorithm_time", "workload", "trace", "from_files", "emit_jobs", "json"])]
    app_time: bool,
    /// With --reproduce: smaller workloads.
    #[arg(long, requires = "reproduce")]
    quick: bool,
    /// With --reproduce: directory holding the FIU excerpts (fiu-iodedup-*/*.blkparse) for Table II.
    #[arg(long, requires = "reproduce", value_name = "DIR")]
    fiu_dir: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// The superchunk size without --superchunk (1 MiB, §V-B).
const DEFAULT_SUPERCHUNK: &str = "1MiB";
/// A write thread's request size without --request.
const DEFAULT_REQUEST: &str = "1MiB";
/// A replica's size without --pages (1 GiB of 4 KiB pages).
const DEFAULT_PAGES: u64 = 262_144;

impl ClusterArgs {
    /// The grid options given on the command line (they have no clap
    /// defaults, so that `--reproduce`, which runs the paper's own grid,
    /// can refuse them instead of ignoring them; defaults are applied in
    /// [`run`], the rest from [`ClusterConfig::default`]).
    fn given_grid_options(&self) -> Vec<&'static str> {
        let given = [
            ("--pages", self.pages.is_some()),
            ("--nodes", !self.nodes.is_empty()),
            ("--chunk", !self.chunk.is_empty()),
            ("--superchunk", !self.superchunk.is_empty()),
            ("--mode", !self.mode.is_empty()),
            ("--threads", !self.threads.is_empty()),
            ("--request", self.request.is_some()),
            ("--update", self.update.is_some()),
            ("--update-ratio", self.update_ratio.is_some()),
            ("--update-span", self.update_span.is_some()),
            ("--buffer", self.buffer.is_some()),
            ("--window", self.window.is_some()),
            ("--read", self.read.is_some()),
            ("--csr", self.csr.is_some()),
            ("--atr-file", self.atr_file.is_some()),
            ("--redirect-ios", self.redirect_ios.is_some()),
            ("--arrival", self.arrival.is_some()),
            ("--read-cache", self.read_cache.is_some()),
            ("--write-batch", self.write_batch.is_some()),
            ("--readers", self.readers.is_some()),
            ("--disks", self.disks.is_some()),
            ("--io-task", self.io_task.is_some()),
            ("--device", self.ssd.device.is_some()),
            ("--ssd-policy", self.ssd.ssd_policy.is_some()),
            ("--preset", self.ssd.preset.is_some()),
            ("--config", self.ssd.config.is_some()),
            ("--set", !self.ssd.set.is_empty()),
            ("--engine", self.ssd.engine.is_some()),
        ];
        given.iter().filter(|(_, g)| *g).map(|(f, _)| *f).collect()
    }
}

/// `--device` and the simulated SSD's flags (docs/cluster.md, `--device ssd`).
#[derive(Args, Debug)]
struct SsdArgs {
    /// What a node's disk is: hdd (the paper's 7,200 rpm SATA HDD, §V-B) or ssd (dedupsim's own SSD
    /// simulation, configured by --preset/--config/--set/--engine as for `run`) [default: hdd].
    #[arg(long)]
    device: Option<String>,
    /// With --device ssd: the SSD's placement policy (`dedupsim policies`) [default: native].
    #[arg(long, value_name = "NAME")]
    ssd_policy: Option<String>,
    /// With --device ssd: built-in SSD preset (`dedupsim config presets`).
    #[arg(long, conflicts_with = "config")]
    preset: Option<String>,
    /// With --device ssd: SSD configuration file (TOML, as for `run`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// With --device ssd: override an SSD config key, e.g. --set timing.read=25us (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// With --device ssd: the SSD's dedup engine (`dedupsim engines`).
    #[arg(long, value_name = "NAME")]
    engine: Option<String>,
}

/// `list`, or `default` when it is empty.
fn or_default<T: Clone>(list: &[T], default: T) -> Vec<T> {
    if list.is_empty() {
        vec![default]
    } else {
        list.to_vec()
    }
}

/// Parses a superchunk size into chunks.
fn superchunk_chunks(s: &str, chunk: u64) -> Result<u32> {
    let t = s.trim();
    if let Ok(n) = t.parse::<u32>() {
        anyhow::ensure!(n > 0, "--superchunk {s}: at least one chunk");
        return Ok(n);
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        anyhow::bail!(
            "--superchunk {s}: a count of chunks must be at most {} (2^32 - 1); give fewer chunks or bytes (1MiB)",
            u32::MAX
        );
    }
    let bytes = dedupsim::config::parse_size(t).map_err(|e| anyhow::anyhow!("--superchunk {e}"))?;
    anyhow::ensure!(
        bytes / chunk <= u64::from(u32::MAX),
        "--superchunk {s}: {} chunks of {chunk} bytes, more than {} (2^32 - 1); give a smaller size",
        bytes / chunk,
        u32::MAX
    );
    anyhow::ensure!(
        bytes >= chunk && bytes % chunk == 0,
        "--superchunk {s}: not a whole number of {chunk}-byte chunks; give bytes (1MiB) or chunks (256)"
    );
    Ok((bytes / chunk).min(u64::from(u32::MAX)) as u32)
}

fn parse_chunk(s: &str) -> Result<u64> {
    dedupsim::config::parse_size(s.trim()).map_err(|e| anyhow::anyhow!("--chunk {e}"))
}

fn modes(list: &[String]) -> Result<Vec<WriteMode>> {
    let mut out = Vec::new();
    for m in list {
        if m.trim() == "all" {
            out.extend(WriteMode::ALL);
        } else {
            out.push(m.parse()?);
        }
    }
    out.dedup();
    Ok(out)
}

/// A generated workload, parsed and checked (`--pages`) before any work.
enum Generated {
    Replica(workload::Replica),
    Fio(FioSpec),
}

/// The generated workload, or `None` for a trace or directory trees.
fn generated(a: &ClusterArgs) -> Result<Option<Generated>> {
    let name = a.workload.as_deref().unwrap_or("homes");
    let sized_elsewhere = if a.trace.is_some() {
        Some("a trace")
    } else if !a.from_files.is_empty() {
        Some("--from-files")
    } else {
        name.starts_with("fio").then_some("an fio: workload (files=, size=)")
    };
    if let (Some(what), Some(_)) = (sized_elsewhere, a.pages) {
        anyhow::bail!(
            "--pages sizes a replica workload (homes, mail, webvm); {what} has its own size: leave --pages out"
        );
    }
    if a.trace.is_some() || !a.from_files.is_empty() {
        return Ok(None);
    }
    if name.starts_with("fio") {
        return Ok(Some(Generated::Fio(name.parse()?)));
    }
    let r = workload::replica_spec(name)?.ok_or_else(|| cluster::ClusterError::UnknownWorkload(name.to_string()))?;
    workload::check_replica_pages(a.pages.unwrap_or(DEFAULT_PAGES))?;
    Ok(Some(Generated::Replica(r)))
}

fn load(a: &ClusterArgs, generated: Option<Generated>) -> Result<FileSet> {
    match generated {
        Some(Generated::Replica(r)) => {
            return Ok(workload::generate_replica(&r, a.pages.unwrap_or(DEFAULT_PAGES), a.seed))
        }
        Some(Generated::Fio(spec)) => return Ok(spec.generate(a.seed)),
        None => {}
    }
    if let Some(t) = &a.trace {
        let opts = LoadOptions { format: a.format, ..LoadOptions::default() };
        let loaded = trace::load(t, &opts).with_context(|| format!("loading trace {}", t.display()))?;
        return Ok(workload::from_workload(&loaded.workload)?);
    }
    Ok(workload::from_files(&a.from_files)?)
}

/// The workload flags of a job line.
fn workload_flags(a: &ClusterArgs) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(t) = &a.trace {
        v.push("--trace".into());
        v.push(shell_quote(&std::path::absolute(t).unwrap_or(t.clone()).display().to_string()));
        if let Some(f) = a.format {
            v.push("--format".into());
            v.push(f.to_string());
        }
    } else if !a.from_files.is_empty() {
        v.push("--from-files".into());
        for d in &a.from_files {
            v.push(shell_quote(&std::path::absolute(d).unwrap_or(d.clone()).display().to_string()));
        }
    } else {
        let name = a.workload.as_deref().unwrap_or("homes");
        v.push("--workload".into());
        v.push(shell_quote(name));
        if !name.starts_with("fio") {
            v.push("--pages".into());
            v.push(a.pages.unwrap_or(DEFAULT_PAGES).to_string());
        }
    }
    v
}

fn table(reports: &[ClusterReport]) -> String {
    let mut s = String::new();
    if let Some(r) = reports.first() {
        let _ = writeln!(
            s,
            "workload: {} ({}), {} files, {} chunks, {} distinct, shared by >1 file {:.1}%",
            r.workload,
            r.source,
            r.files,
            r.sharing.chunks,
            r.sharing.distinct,
            r.sharing.shared_ratio * 100.0
        );
    }
    let task = reports.iter().any(|r| r.time.io_task.is_some());
    let _ = write!(
        s,
        "{:<11} {:>5} {:>6} {:>6} {:>7} {:>7} {:>11} {:>10} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "mode",
        "nodes",
        "chunk",
        "sc",
        "threads",
        "dedup",
        "read I/Os",
        "I/Os/file",
        "rewritten",
        "updated",
        "redirects",
        "read MB/s",
        "write MB/s"
    );
    // Exp. 7's I/O task (`--io-task`): its speed beside the write phase and alone.
    let _ = writeln!(s, "{}", if task { format!(" {:>10} {:>10}", "task MB/s", "alone MB/s") } else { String::new() });
    for r in reports {
        let c = &r.config;
        let sc = if c.mode == WriteMode::Superchunk { c.superchunk_chunks.to_string() } else { "-".into() };
        let _ = write!(
            s,
            "{:<11} {:>5} {:>5}K {:>6} {:>7} {:>7.3} {:>11} {:>10.2} {:>9} {:>9} {:>9} {:>10.1} {:>10.1}",
            c.mode.name(),
            c.nodes,
            c.chunk_bytes / 1024,
            sc,
            c.threads,
            r.dedup_ratio,
            r.read_ios,
            r.read_ios_per_file,
            r.rewritten_chunks,
            r.updated_chunks,
            r.redirects,
            r.time.read_mb_s,
            r.time.write_mb_s
        );
        let _ = match &r.time.io_task {
            Some(t) => writeln!(s, " {:>10.1} {:>10.1}", t.mb_s, t.alone_mb_s),
            None if task => writeln!(s, " {:>10} {:>10}", "-", "-"),
            None => writeln!(s),
        };
    }
    s
}

/// Exp. 7's CPU side (`cluster --app-time`, `cluster::apptime`): the duty
/// cycle of relocation on a node from the cluster model (one relocation of
/// a 1,024-chunk buffer per buffer the node fills in the timed write phase
/// of FIO_20, 8 nodes, ReoDedup-C, HDDs; the relocation's CPU time measured
/// on the real code), then the multiplication alone and beside CSR/ATR,
/// all the time and at that duty cycle.
fn app_time(seed: u64) -> Result<String> {
    use dedupsim::cluster::apptime::{self, Load};
    let w = FioSpec::new(2.0, 32, 16 << 20).generate(seed).chunk(4096);
    let cfg = ClusterConfig { mode: WriteMode::Csr, seed, ..ClusterConfig::default() };
    let r = cluster::run(&w, &cfg)?;
    let per_node = r.node_chunks.iter().sum::<u64>() as f64 / r.node_chunks.len().max(1) as f64;
    let buffers = (per_node / f64::from(cfg.buffer)).max(1.0);
    let period = r.time.write_seconds / buffers;
    let cpu = cluster::algotime::measure(&[apptime::WINDOW], 5, seed);
    let duty = |d: std::time::Duration| (d.as_secs_f64() / period).min(1.0);
    let (dc, da) = (duty(cpu[0].greedy), duty(cpu[0].atr));
    let loads = [
        Load::Alone,
        Load::Relocate { csr: true, duty: 1.0 },
        Load::Relocate { csr: true, duty: dc },
        Load::Relocate { csr: false, duty: 1.0 },
        Load::Relocate { csr: false, duty: da },
    ];
    let m = std::thread::spawn(move || apptime::measure(&loads, 10, 100, seed))
        .join()
        .map_err(|_| anyhow::anyhow!("the measuring thread failed"))?;
    let mut s = format!(
        "Exp. 7, CPU side. Cluster model (FIO_20, 8 nodes, ReoDedup-C, HDDs): write phase {:.3} s, {:.0} chunk copies per \
         node, so a node relocates a {}-chunk buffer every {:.1} ms; the relocation takes {:.1} µs CPU (CSR) and {:.1} µs \
         (ATR) on the real code: duty cycles {:.2}% and {:.2}%.\n\n",
        r.time.write_seconds,
        per_node,
        cfg.buffer,
        period * 1e3,
        cpu[0].greedy.as_secs_f64() * 1e6,
        cpu[0].atr.as_secs_f64() * 1e6,
        dc * 100.0,
        da * 100.0
    );
    s.push_str(&apptime::table(&m));
    Ok(s)
}

fn fiu_excerpts(dir: &Path) -> Result<Vec<FileSet>> {
    anyhow::ensure!(dir.is_dir(), "--fiu-dir {}: not a directory", dir.display());
    let mut out = Vec::new();
    for sub in ["fiu-iodedup-homes", "fiu-iodedup-mail", "fiu-iodedup-webvm"] {
        let d = dir.join(sub);
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "blkparse"))
            .collect();
        files.sort();
        for f in files {
            let loaded =
                trace::load(&f, &LoadOptions::default()).with_context(|| format!("loading {}", f.display()))?;
            out.push(workload::from_workload(&loaded.workload)?);
        }
    }
    // A wrong directory would otherwise reproduce Table II without the excerpts, silently.
    anyhow::ensure!(
        !out.is_empty(),
        "--fiu-dir {}: no fiu-iodedup-{{homes,mail,webvm}}/*.blkparse excerpts in it (e.g. ../shared/traces)",
        dir.display()
    );
    Ok(out)
}

pub fn run(a: ClusterArgs) -> Result<()> {
    if a.algorithm_time {
        let given = a.given_grid_options();
        anyhow::ensure!(
            given.is_empty(),
            "--algorithm-time measures the algorithms on their own windows: {} do(es) not apply; leave them out",
            given.join(", ")
        );
        let sizes = [5usize, 6, 7, 8, 9, 10, 11, 12, 64, 256, 1024];
        let rows = cluster::algotime::measure(&sizes, 15, a.seed);
        return common::out(&cluster::algotime::table(&rows));
    }
    if a.app_time {
        let given = a.given_grid_options();
        anyhow::ensure!(
            given.is_empty(),
            "--app-time measures on its own workload (FIO_20, 8 nodes, HDDs): {} do(es) not apply; leave them out",
            given.join(", ")
        );
        return common::out(&app_time(a.seed)?);
    }
    if a.reproduce {
        // The disks (`--device ssd` and the SSD's flags) apply: the same
        // tables, timed on SSDs.
        let disk = ["--device", "--ssd-policy", "--preset", "--config", "--set", "--engine"];
        let given: Vec<&str> = a.given_grid_options().into_iter().filter(|f| !disk.contains(f)).collect();
        anyhow::ensure!(
            given.is_empty(),
            "--reproduce runs the paper's own workloads and grid: {} do(es) not apply; leave them out",
            given.join(", ")
        );
        let mut opts = if a.quick { ReproduceOptions::quick() } else { ReproduceOptions::full() };
        opts.seed = a.seed;
        opts.plots = a.out.as_ref().map(|o| o.join("plots"));
        opts.device = device(&a)?;
        let fiu = match &a.fiu_dir {
            Some(d) => fiu_excerpts(d)?,
            None => Vec::new(),
        };
        // Progress is for a person watching: on a terminal only, as every
        // other command's progress bar.
        let progress = !a.quiet && std::io::stderr().is_terminal();
        let what = "cluster --reproduce";
        if let Some(out) = &a.out {
            super::experiment::check_out_dir(out, what)?;
            super::experiment::begin(out, what)?;
        }
        let recorded = match &a.recorded {
            Some(d) => cluster::reproduce::recorded_sets(d)?,
            None => Vec::new(),
        };
        let md = reproduce(&opts, &fiu, &recorded, &mut |step| {
            if progress {
                eprintln!("{step}");
            }
        })?;
        return match &a.out {
            None => common::out(&md),
            Some(out) => {
                let report = out.join("REPORT.md");
                dedupsim::output::write_bytes(&report, md.as_bytes())?;
                super::experiment::mark_complete(out, what)?;
                if !a.quiet {
                    eprintln!("wrote {}", report.display());
                }
                Ok(())
            }
        };
    }
    anyhow::ensure!(
        a.json.is_none() || a.emit_jobs.is_none(),
        "--json with --emit-jobs: the job lines write one JSON file per cell (into --out); leave --json out"
    );
    let generated = generated(&a)?;
    let base = ClusterConfig::default();
    let update: UpdateMode = a.update.as_deref().map_or(Ok(base.update), str::parse)?;
    let read: ReadModel = a.read.as_deref().map_or(Ok(base.read), cluster::parse_read)?;
    let csr = a.csr.as_deref().map_or(Ok(base.csr), cluster::parse_csr)?;
    let atr = a.atr_file.as_deref().map_or(Ok(base.atr), cluster::parse_atr_file)?;
    let arrival = match a.arrival.as_deref() {
        None => base.arrival,
        Some(s) => Arrival::parse(s)
            .ok_or_else(|| anyhow::anyhow!("--arrival {s}: unknown arrival model; use poisson or lockstep"))?,
    };
    let batch = match a.write_batch.as_deref() {
        None => base.time.batch,
        Some(s) => WriteBatch::parse(s)
            .ok_or_else(|| anyhow::anyhow!("--write-batch {s}: unknown batching; use auto, chunk, unit or node"))?,
    };
    let cache_bytes = match a.read_cache.as_deref() {
        None => base.time.cache_bytes,
        Some(s) => dedupsim::config::parse_size(s.trim()).map_err(|e| anyhow::anyhow!("--read-cache {e}"))?,
    };
    let io_task = match a.io_task.as_deref() {
        None => None,
        Some(s) => {
            let bytes = dedupsim::config::parse_size(s.trim()).map_err(|e| anyhow::anyhow!("--io-task {e}"))?;
            Some(cluster::IoTask::on_first_disk(bytes, base.time.disk_bytes))
        }
    };
    let time = TimeParams {
        io_task,
        cache_bytes,
        batch,
        readers: a.readers.unwrap_or(base.time.readers),
        disks: a.disks.unwrap_or(base.time.disks),
        device: device(&a)?,
        ..base.time.clone()
    };
    let modes = modes(&or_default(&a.mode, base.mode.name().to_string()))?;
    anyhow::ensure!(
        a.superchunk.is_empty() || modes.contains(&WriteMode::Superchunk),
        "--superchunk applies to --mode superchunk only: add superchunk (or all) to --mode, or leave --superchunk out"
    );
    // Outputs checked before any work (an input, a read-only file system,
    // a name too long): `-` is standard output.
    let mut inputs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(c) = &a.ssd.config {
        inputs.push(("--config", c.as_path()));
    }
    if let Some(t) = &a.trace {
        inputs.push(("--trace", t.as_path()));
    }
    let mut outputs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(j) = a.json.as_deref().filter(|p| p.as_os_str() != "-") {
        // Job lines write into --out/cells, created here as before.
        if let Some(dir) = j.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        outputs.push(("--json", j));
    }
    if let Some(j) = &a.emit_jobs {
        outputs.push(("--emit-jobs", j.as_path()));
    }
    common::check_outputs(&inputs, &outputs)?;
    let trees: Vec<(&str, &std::path::Path)> =
        a.from_files.iter().map(|d| ("--from-files tree", d.as_path())).collect();
    common::check_outside_trees(&trees, &outputs)?;
    let superchunks = if a.superchunk.is_empty() { vec![DEFAULT_SUPERCHUNK.to_string()] } else { a.superchunk.clone() };
    let chunks: Vec<u64> = if a.chunk.is_empty() {
        vec![base.chunk_bytes]
    } else {
        a.chunk.iter().map(|c| parse_chunk(c)).collect::<Result<_>>()?
    };
    let request_size = a.request.as_deref().unwrap_or(DEFAULT_REQUEST);
    for &chunk_bytes in &chunks {
        ClusterConfig { chunk_bytes, ..ClusterConfig::default() }.validate()?;
    }
    // Every cell, validated before any work.
    let mut cells: Vec<ClusterConfig> = Vec::new();
    for &chunk_bytes in &chunks {
        for &nodes in &or_default(&a.nodes, base.nodes) {
            for &threads in &or_default(&a.threads, base.threads) {
                for &mode in &modes {
                    // Another mode ignores the superchunk size (its job line has none).
                    let scs: Vec<u32> = if mode == WriteMode::Superchunk {
                        superchunks.iter().map(|s| superchunk_chunks(s, chunk_bytes)).collect::<Result<_>>()?
                    } else {
                        vec![superchunk_chunks(DEFAULT_SUPERCHUNK, chunk_bytes).unwrap_or(1)]
                    };
                    let request = superchunk_chunks(request_size, chunk_bytes)
                        .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("--superchunk", "--request")))?;
                    for superchunk_chunks in scs {
                        let cfg = ClusterConfig {
                            nodes,
                            chunk_bytes,
                            superchunk_chunks,
                            mode,
                            update,
                            update_ratio: a.update_ratio.unwrap_or(base.update_ratio),
                            update_span: a.update_span.unwrap_or(base.update_span),
                            threads,
                            request,
                            buffer: a.buffer.unwrap_or(base.buffer),
                            window: a.window.unwrap_or(base.window),
                            read,
                            csr,
                            atr,
                            redirect_ios: a.redirect_ios.unwrap_or(base.redirect_ios),
                            arrival,
                            time: time.clone(),
                            seed: a.seed,
                        };
                        cfg.validate()?;
                        cells.push(cfg);
                    }
                }
            }
        }
    }
    if let Some(jobs) = &a.emit_jobs {
        let mut lines = Vec::new();
        let program = super::common::self_program();
        let wl = workload_flags(&a).join(" ");
        let out_dir = a.out.clone().unwrap_or_else(|| PathBuf::from("out/cluster"));
        let out = std::path::absolute(&out_dir).unwrap_or(out_dir);
        let dev = device_flags(&a);
        let iot = a.io_task.as_deref().map_or(String::new(), |s| format!(" --io-task {}", shell_quote(s)));
        for c in &cells {
            let name = format!(
                "{}-n{}-c{}k-sc{}-t{}-{}",
                c.mode.name(),
                c.nodes,
                c.chunk_bytes / 1024,
                c.superchunk_chunks,
                c.threads,
                c.update.name()
            );
            let sc = if c.mode == WriteMode::Superchunk {
                format!(" --superchunk {}", c.superchunk_chunks)
            } else {
                String::new()
            };
            lines.push(format!(
                "{program} cluster {wl} --nodes {} --chunk {}KiB{sc} --mode {} --threads {} --request {} --update {} --update-ratio {} --update-span {} --buffer {} --window {} --read {} --csr {} --atr-file {} --redirect-ios {} --arrival {} --read-cache {} --write-batch {} --readers {} --disks {}{dev}{iot} --seed {} --json {}",
                c.nodes,
                c.chunk_bytes / 1024,
                c.mode.name(),
                c.threads,
                c.request,
                c.update.name(),
                c.update_ratio,
                c.update_span,
                c.buffer,
                c.window,
                c.read.name(),
                c.csr.name(),
                c.atr.name(),
                c.redirect_ios,
                c.arrival.name(),
                c.time.cache_bytes,
                c.time.batch.name(),
                c.time.readers,
                c.time.disks,
                c.seed,
                shell_quote(&out.join(format!("{name}.json")).display().to_string())
            ));
        }
        dedupsim::output::write_bytes(jobs, (lines.join("\n") + "\n").as_bytes())?;
        eprintln!("wrote {} job lines to {} (outputs in {})", lines.len(), jobs.display(), out.display());
        return Ok(());
    }
    let files = load(&a, generated)?;
    let mut reports = Vec::with_capacity(cells.len());
    for &chunk_bytes in &chunks {
        let w = files.chunk(chunk_bytes);
        for c in cells.iter().filter(|c| c.chunk_bytes == chunk_bytes) {
            if !a.quiet && cells.len() > 1 && std::io::stderr().is_terminal() {
                eprintln!("running {} on {} nodes ...", c.mode, c.nodes);
            }
            reports.push(cluster::run(&w, c)?);
        }
    }
    let json = serde_json::to_string_pretty(&reports).context("serializing the reports")? + "\n";
    match &a.json {
        Some(p) if p.as_os_str() == "-" => common::out(&json),
        Some(p) => {
            dedupsim::output::write_bytes(p, json.as_bytes())?;
            common::out(&table(&reports))
        }
        None => common::out(&table(&reports)),
    }
}

/// The device flags of a job line (none for the default HDD).
fn device_flags(a: &ClusterArgs) -> String {
    let mut f = String::new();
    if a.ssd.device.as_deref().map(str::trim) != Some("ssd") {
        return f;
    }
    f.push_str(" --device ssd");
    let mut add = |flag: &str, v: &str| {
        let _ = write!(f, " {flag} {}", shell_quote(v));
    };
    if let Some(p) = &a.ssd.ssd_policy {
        add("--ssd-policy", p);
    }
    if let Some(p) = &a.ssd.preset {
        add("--preset", p);
    }
    if let Some(c) = &a.ssd.config {
        add("--config", &std::path::absolute(c).unwrap_or_else(|_| c.clone()).display().to_string());
    }
    for kv in &a.ssd.set {
        add("--set", kv);
    }
    if let Some(e) = &a.ssd.engine {
        add("--engine", e);
    }
    f
}

/// `--device` and, for `ssd`, the SSD's configuration and policy (loaded as
/// `run` loads them); the SSD flags without `--device ssd` are refused.
fn device(a: &ClusterArgs) -> Result<cluster::Device> {
    let ssd_flags = [
        ("--ssd-policy", a.ssd.ssd_policy.is_some()),
        ("--preset", a.ssd.preset.is_some()),
        ("--config", a.ssd.config.is_some()),
        ("--set", !a.ssd.set.is_empty()),
        ("--engine", a.ssd.engine.is_some()),
    ];
    match a.ssd.device.as_deref().map(str::trim) {
        None | Some("hdd") => {
            if let Some((flag, _)) = ssd_flags.iter().find(|(_, given)| *given) {
                anyhow::bail!("{flag} configures the simulated SSD: add --device ssd, or leave {flag} out");
            }
            Ok(cluster::Device::Hdd)
        }
        Some("ssd") => {
            let args = common::ConfigArgs {
                preset: a.ssd.preset.clone(),
                config: a.ssd.config.clone(),
                set: a.ssd.set.clone(),
                engine: a.ssd.engine.clone(),
                seed: None,
            };
            let config = args.load()?;
            let policy = a.ssd.ssd_policy.clone().unwrap_or_else(|| "native".to_string());
            if !dedupsim::policy::names().contains(&policy.as_str()) {
                anyhow::bail!(
                    "--ssd-policy {policy}: unknown policy; available: {}",
                    dedupsim::policy::names().join(", ")
                );
            }
            Ok(cluster::Device::Ssd(Box::new(cluster::SsdDevice { policy, config })))
        }
        Some(other) => anyhow::bail!("--device {other}: unknown device; use hdd or ssd"),
    }
}
