//! `dedupsim serve`: the simulated device as an NBD export (docs/serve.md).

use super::common::{self, ConfigArgs};
use super::observe::SeriesArgs;
use anyhow::{Context, Result};
use clap::Args;
use dedupsim::config::parse_size;
use dedupsim::serve::{self, Clock, Device, HashKind, Listen, Listener, ServeOptions, Shared};
use dedupsim::sim::RunOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    cfg: ConfigArgs,
    /// The placement policy of the served device (one; `dedupsim policies`).
    #[arg(long, short = 'p', default_value = "dedup")]
    policy: String,
    /// Listen on this Unix socket (created; must not exist) instead of TCP.
    #[arg(long, value_name = "PATH", conflicts_with = "listen")]
    unix: Option<PathBuf>,
    /// Listen on this TCP address (loopback by default).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:10809")]
    listen: String,
    /// Export size (e.g. 1GiB; default: the device's logical capacity).
    #[arg(long, value_name = "SIZE")]
    size: Option<String>,
    /// `virtual`: simulated time, as fast as the host runs; `real`: replies
    /// are held until their simulated completion (docs/serve.md).
    #[arg(long, default_value = "virtual", value_name = "virtual|real")]
    clock: String,
    /// Record every request with per-page content as a native trace, to
    /// replay with `run --trace FILE` on every policy.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Write the run's report (as `run --json`) on exit.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the run's CSV row (as `run --csv`) on exit.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Page data kept in memory before spilling to --store.
    #[arg(long, value_name = "SIZE", default_value = "4GiB")]
    store_memory: String,
    /// Directory for the spill file of page data beyond --store-memory
    /// (removed on exit). Without it, writes beyond --store-memory fail (ENOSPC).
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Content hash of a page: xxh3 (XXH3-128, default), sha256, or
    /// tiny:BITS (forces collisions; tests). Pages are also compared byte by byte.
    #[arg(long, default_value = "xxh3", value_name = "NAME")]
    hash: String,
    /// Largest request accepted (the NBD maximum block size).
    #[arg(long, value_name = "SIZE", default_value = "32MiB")]
    max_block: String,
    /// Keep serving after the last client disconnects (until SIGINT or SIGTERM).
    #[arg(long)]
    persist: bool,
    /// Verify FTL invariants while serving (every read checked; full check at
    /// the end and every --check-every requests).
    #[arg(long)]
    check: bool,
    /// With --check: full invariant check interval in requests.
    #[arg(long, requires = "check", value_name = "N")]
    check_every: Option<u64>,
    /// Seconds between status lines on stderr (0: none).
    #[arg(long, default_value_t = 5.0, value_name = "S")]
    status_every: f64,
    /// No status lines.
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    series: SeriesArgs,
}

fn size_arg(flag: &str, v: &str) -> Result<u64> {
    parse_size(v).map_err(|e| anyhow::anyhow!("{flag} {v}: {e}"))
}

fn log(s: &str) {
    eprintln!("serve: {s}");
}

pub fn run(a: ServeArgs) -> Result<()> {
    let cfg = a.cfg.load()?;
    if !dedupsim::policy::names().contains(&a.policy.as_str()) {
        anyhow::bail!("--policy {}: unknown policy; available: {}", a.policy, dedupsim::policy::names().join(", "));
    }
    let clock: Clock = a.clock.parse().map_err(|e| anyhow::anyhow!("--clock: {e}"))?;
    let hash: HashKind = a.hash.parse().map_err(|e| anyhow::anyhow!("--hash: {e}"))?;
    let page = u64::from(cfg.geometry.page_size);
    let capacity = cfg.logical_pages() * page;
    let size = match &a.size {
        None => capacity,
        Some(s) => {
            let v = size_arg("--size", s)?;
            if v == 0 || v % page != 0 || v > capacity {
                anyhow::bail!(
                    "--size {s}: the export must be a positive multiple of the page size ({page} B) and at most \
                     the device's logical capacity ({capacity} B); a larger device: --set geometry.blocks_per_plane=..."
                );
            }
            v
        }
    };
    let max_block = size_arg("--max-block", &a.max_block)?;
    if !(page..=1 << 30).contains(&max_block) {
        anyhow::bail!("--max-block {}: must be between the page size ({page} B) and 1 GiB", a.max_block);
    }
    let store_memory = size_arg("--store-memory", &a.store_memory)?;
    if let Some(d) = &a.store {
        if !d.is_dir() {
            anyhow::bail!("--store {}: not a directory; create it first", d.display());
        }
        // The spill file is made at the first spill, long after start: a
        // directory it cannot be made in is found now instead, by making
        // and removing a file of the same kind (not by its mode bits, which
        // root and read-only mounts ignore or override).
        let probe = d.join(format!("dedupsim-store-probe-{}.bin", std::process::id()));
        match std::fs::File::options().write(true).create_new(true).open(&probe) {
            Ok(_) => std::fs::remove_file(&probe)
                .map_err(|e| anyhow::anyhow!("--store {}: cannot remove {}: {e}", d.display(), probe.display()))?,
            Err(e) => anyhow::bail!("--store {}: the spill file cannot be made there: {e}", d.display()),
        }
    } else if store_memory < page {
        // Not one page fits in memory and there is nowhere to spill: the
        // server would start and then fail every write with ENOSPC.
        anyhow::bail!(
            "--store-memory {}: less than one page ({page} B) of page data in memory and no --store DIR to \
             spill to, so every write would fail; give --store DIR or a --store-memory of at least {page} B",
            a.store_memory
        );
    }
    // `try_from`: a finite number too large for a `Duration` (1e300) is
    // refused here rather than panicking in `from_secs_f64` once listening.
    let status_every = Duration::try_from_secs_f64(a.status_every).map_err(|_| {
        anyhow::anyhow!(
            "--status-every {:?}: must be a number of seconds >= 0 and below 2^64 (0: none)",
            a.status_every
        )
    })?;
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    for (flag, p) in [("--record", &a.record), ("--json", &a.json), ("--csv", &a.csv)] {
        if let Some(p) = p {
            outputs.push((flag, p.as_path()));
        }
    }
    outputs.extend(a.series.outputs());
    common::check_outputs(&a.cfg.inputs(), &outputs)?;
    a.series.check(&outputs)?;
    if let Some(r) = &a.record {
        // `-` is standard output for `--json` and `--csv`; the recording
        // is a file that grows while serving (the report goes to stdout).
        if r.as_os_str() == "-" {
            anyhow::bail!("--record -: the recording cannot go to standard output; give a file name");
        }
        if r.exists() {
            anyhow::bail!("--record {}: exists; the recording never replaces a file, choose another name", r.display());
        }
        // The recording grows in FILE.partial: another server recording to
        // the same FILE, or a file of that name, must not be overwritten.
        let partial = serve::partial_path(r);
        if partial.exists() {
            anyhow::bail!(
                "--record {}: {} exists (another server recording there, or one that was killed); \
                 remove it or choose another name",
                r.display(),
                partial.display()
            );
        }
    }
    let listen = match &a.unix {
        Some(p) => {
            if p.exists() {
                anyhow::bail!("--unix {}: exists; remove it or choose another path", p.display());
            }
            Listen::Unix(p.clone())
        }
        None => Listen::Tcp(a.listen.clone()),
    };
    let opts = ServeOptions {
        policy: a.policy.clone(),
        size,
        clock,
        hash,
        store_memory,
        store_dir: a.store.clone(),
        record: a.record.clone(),
        check: RunOptions { check: a.check, check_every: a.check_every.unwrap_or(0), resources: false },
        series: a.series.timeseries,
    };
    let stop = Arc::new(AtomicBool::new(false));
    serve::stop_on_signals(Arc::clone(&stop)).context("installing the SIGINT/SIGTERM watcher")?;
    let device = Device::new(&cfg, &opts)?;
    let flag = match &listen {
        Listen::Tcp(addr) => format!("--listen {addr}"),
        Listen::Unix(path) => format!("--unix {}", path.display()),
    };
    let listener = Listener::bind(&listen).with_context(|| format!("{flag}: cannot listen there"))?;
    let export = serve::nbd::ExportInfo {
        name: "dedupsim".into(),
        description: format!(
            "dedupsim {} ({}, policy {}, engine {})",
            env!("CARGO_PKG_VERSION"),
            cfg.name,
            a.policy,
            cfg.dedup.engine
        ),
        size,
        min_block: 1,
        preferred_block: serve::nbd::preferred_block(page as u32),
        max_block: max_block as u32,
    };
    let shared = Arc::new(Shared {
        device: Mutex::new(device),
        export,
        clock,
        start: Instant::now(),
        open: AtomicUsize::new(0),
        served: AtomicU64::new(0),
        stop,
    });
    // The line scripts wait for: the server accepts connections from now on.
    eprintln!(
        "serve: listening on {} ({} export, preset {}, policy {}, engine {}, clock {})",
        listener.describe(),
        // KiB below 1 MiB, where MiB said "0 MiB".
        if size >= 1 << 20 { format!("{} MiB", size >> 20) } else { format!("{} KiB", size >> 10) },
        cfg.name,
        a.policy,
        cfg.dedup.engine,
        a.clock
    );
    let every = if a.quiet || a.status_every == 0.0 { Duration::MAX } else { status_every };
    let started = Instant::now();
    let mut status = |d: &Device| {
        let s = d.stats();
        let st = d.store_stats();
        let dedup = if s.pages_written > 0 { 100.0 * (1.0 - st.contents as f64 / s.pages_written as f64) } else { 0.0 };
        eprintln!(
            "serve: {:.0} s: {} requests ({} R, {} W), {} MiB written, dedup {:.1}%, simulated {:.3} s",
            started.elapsed().as_secs_f64(),
            s.requests,
            s.reads,
            s.writes,
            s.bytes_written >> 20,
            dedup.max(0.0),
            d.floor().as_secs_f64()
        );
    };
    serve::accept_loop(&listener, &shared, a.persist, every, &mut status, log);
    drop(listener);
    let outcome = {
        let mut d = shared.lock();
        if let Some(f) = d.failure() {
            log(&format!("the device reported an error while serving: {f}"));
        }
        d.finish(&cfg, &opts).map_err(|e| anyhow::anyhow!(e))?
    };
    let reports = vec![outcome.report];
    super::run::write_outputs(&reports, a.json.as_ref(), a.csv.as_ref())?;
    if let Some(series) = &outcome.series {
        a.series.write(cfg.geometry.page_size, &[(&reports[0], series)])?;
    }
    let s = &outcome.stats;
    let st = &outcome.store;
    let mut o = reports[0].table();
    o.push_str(&format!(
        "\nserve: {} connection(s), {} requests ({} reads, {} writes, {} trims, {} write-zeroes, {} flushes, {} errors); \
         {} pages written ({} read-modify-write), {} distinct contents ({} held: {} in memory, {} spilled), \
         {} hash collisions; store memory {:.1} MiB\n",
        s.connections,
        s.requests,
        s.reads,
        s.writes,
        s.trims,
        s.write_zeroes,
        s.flushes,
        s.errors,
        s.pages_written,
        s.rmw_pages,
        st.contents,
        st.live_contents,
        st.mem_pages,
        st.spill_pages,
        st.collisions,
        outcome.store_memory_bytes as f64 / (1024.0 * 1024.0)
    ));
    if let Some(r) = &a.record {
        o.push_str(&format!("serve: recorded {} (replay: dedupsim run --trace {} -p all)\n", r.display(), r.display()));
    }
    common::out(&o)
}
