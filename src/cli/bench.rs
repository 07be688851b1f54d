//! `dedupsim bench --trace FILE` (end to end on a trace file) and
//! `dedupsim bench --parsers` (each trace format's parser speed).
//!
//! Both time single-threaded work in this process on [`clock`] (the
//! thread's CPU time on Linux, so that time the scheduler gives other
//! processes on a shared machine does not count), in interleaved rounds (so
//! that a slow interval hits every entry alike), and report the best and
//! the median round.

use anyhow::{Context, Result};
use dedupsim::config::Config;
use dedupsim::content::ContentModel;
use dedupsim::runner;
use dedupsim::sim::RunOptions;
use dedupsim::synth::{self, SynthSpec};
use dedupsim::trace::{self, LoadOptions, TraceFormat};
use dedupsim::units::Op;
use dedupsim::workload::Workload;
use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// Seconds of this thread's CPU time (Linux), else of wall-clock time
/// since the first call; see [`clock_name`].
fn clock() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime only writes the timespec it is given.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Seconds of CPU time of every thread of the process (Linux; else
/// [`clock`]): a streamed replay parses on a second thread
/// (`trace::stream::Ahead`), which the end-to-end rounds must count.
fn process_clock() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime only writes the timespec it is given.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    clock()
}

/// What [`clock`] measures, for table headers.
fn clock_name() -> &'static str {
    if cfg!(target_os = "linux") {
        "CPU seconds of the thread"
    } else {
        "wall-clock seconds"
    }
}

/// Best and median of a list of seconds.
fn best_median(t: &[f64]) -> (f64, f64) {
    let mut s = t.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

/// Peak resident memory of this process since the last [`reset_peak_rss`]
/// (Linux: VmHWM), in MiB.
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Resets the peak of [`peak_rss_mib`] to the current resident memory
/// (Linux 4.0 and later: `5` to /proc/self/clear_refs); false if it could
/// not.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// One end-to-end round: the two phases' seconds, the requests replayed,
/// the peak resident memory (MiB) if known.
struct Round {
    phases: [f64; 2],
    /// Wall-clock seconds of the round.
    wall: f64,
    requests: u64,
    peak_mib: Option<f64>,
}

/// What `run --trace FILE --format F -p POLICY` does: streamed (`held` =
/// false: a first pass over the file, then the replay reading it again,
/// [`runner::run_streamed`]) or held (`--load-whole`: load, prepare, replay
/// the held workload). Phases: first pass (held: load + prepare), replay.
fn end_to_end(
    cfg: &Config,
    path: &Path,
    opts: &LoadOptions,
    content: &ContentModel,
    policy: &str,
    held: bool,
) -> Result<Round> {
    let reset = reset_peak_rss();
    let (clock, start) = (process_clock, Instant::now());
    let t0 = clock();
    let ro = RunOptions::default();
    if !held {
        let mut t1 = None;
        let mut requests = 0;
        let streamed = runner::run_streamed(
            cfg,
            path,
            opts,
            content,
            policy,
            &ro,
            &mut |s| {
                t1 = Some(clock());
                requests = s.requests;
            },
            &mut |_, _| {},
        )?;
        if streamed.is_some() {
            let (t1, t2) = (t1.unwrap_or(t0), clock());
            let peak_mib = if reset { peak_rss_mib() } else { None };
            let wall = start.elapsed().as_secs_f64();
            return Ok(Round { phases: [t1 - t0, t2 - t1], wall, requests, peak_mib });
        }
    }
    let loaded = trace::load(path, opts)?;
    let need = runner::need_content(cfg, &[policy.to_string()])?;
    let prepared = runner::prepare_for(loaded.workload, content, cfg.seed, &cfg.precondition, need)?;
    let t1 = clock();
    runner::run_one(cfg, &prepared, policy, &ro, &mut |_, _| {})?;
    let t2 = clock();
    let peak_mib = if reset { peak_rss_mib() } else { None };
    let wall = start.elapsed().as_secs_f64();
    Ok(Round { phases: [t1 - t0, t2 - t1], wall, requests: prepared.workload.timed().len() as u64, peak_mib })
}

/// `bench --trace FILE`: end-to-end time and peak memory per policy, as
/// `run` reads the trace (streamed) and, for comparison, loading it whole
/// first (held), in interleaved rounds.
pub fn trace_file(
    cfg: &Config,
    path: &Path,
    format: Option<TraceFormat>,
    policies: &[String],
    content: &ContentModel,
    rounds: u32,
) -> Result<String> {
    let opts = LoadOptions {
        format,
        page_size: cfg.geometry.page_size,
        capacity_pages: Some(cfg.logical_pages()),
        ..LoadOptions::default()
    };
    let bytes = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?.len();
    let entries: Vec<(&String, bool)> = policies.iter().flat_map(|p| [(p, false), (p, true)]).collect();
    let mut times: Vec<Vec<Round>> = entries.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds.max(1) {
        for (i, &(p, held)) in entries.iter().enumerate() {
            times[i].push(end_to_end(cfg, path, &opts, content, p, held)?);
        }
    }
    let requests = times[0][0].requests;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "end to end on {} ({:.1} MB, {requests} requests), as `run --trace` does it: streamed (first pass: \
         preconditioning and counts; then the replay reading the file again) and held (`--load-whole`: \
         load + prepare, then the replay); {}, and wall-clock seconds, best and median of {} interleaved \
         rounds; peak resident memory (VmHWM, reset before each round) of the best round\n",
        path.display(),
        bytes as f64 / 1e6,
        if cfg!(target_os = "linux") { "CPU seconds of the process (every thread)" } else { clock_name() },
        rounds.max(1)
    );
    let _ = writeln!(
        o,
        "| policy | path | end to end best (s) | median (s) | first pass (s) | replay (s) | requests/s end to end | \
         wall best (s) | wall median (s) | peak (MiB) | MiB per M requests |"
    );
    let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (i, &(p, held)) in entries.iter().enumerate() {
        let total: Vec<f64> = times[i].iter().map(|t| t.phases.iter().sum()).collect();
        let (best, median) = best_median(&total);
        let phase = |k: usize| best_median(&times[i].iter().map(|t| t.phases[k]).collect::<Vec<_>>()).0;
        let best_round = total.iter().position(|&t| t == best).unwrap_or(0);
        let (peak, per_m) = match times[i][best_round].peak_mib {
            Some(m) => (format!("{m:.1}"), format!("{:.1}", m / (requests as f64 / 1e6))),
            None => ("n/a".to_string(), "n/a".to_string()),
        };
        let (wall_best, wall_median) = best_median(&times[i].iter().map(|t| t.wall).collect::<Vec<_>>());
        let _ = writeln!(
            o,
            "| {p} | {} | {best:.3} | {median:.3} | {:.3} | {:.3} | {:.0} | {wall_best:.3} | {wall_median:.3} | {peak} \
             | {per_m} |",
            if held { "held" } else { "streamed" },
            phase(0),
            phase(1),
            requests as f64 / best
        );
    }
    Ok(o)
}

/// A temporary directory removed on drop (the benchmark's trace files).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `w` as a `format` trace file: its header lines and each request
/// as its registry line's sample writer writes it ([`trace::FORMATS`];
/// `native` with its contents).
fn write_trace(w: &Workload, f: TraceFormat, ps: u32, path: &Path) -> Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    match f.registered().and_then(|e| e.item.sample) {
        None => trace::write_native_workload(w, ps, &mut out)?,
        Some((header, sample)) => {
            out.write_all(header.as_bytes())?;
            let ps = u64::from(ps);
            for r in w.requests.iter().filter(|r| r.op != Op::Trim) {
                let req = trace::SampleRequest {
                    time: r.arrival.0,
                    read: r.op == Op::Read,
                    offset: u64::from(r.lpn) * ps,
                    size: u64::from(r.pages) * ps,
                };
                sample(&mut out, &req)?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// `bench --parsers`: the benchmark workload (`requests` requests, content
/// drawn for the native format's content column) written in every format
/// into a temporary directory, then each loaded with `trace::load` (read,
/// parse, page-align: what `run --trace` does before preparing), best and
/// median of `rounds` interleaved rounds, in MB/s of file and requests/s
/// (and lines/s: FIU has one line per 4 KiB page).
pub fn parsers(cfg: &Config, requests: u64, content: &ContentModel, rounds: u32) -> Result<String> {
    let mut spec = SynthSpec::benchmark();
    spec.requests = requests;
    spec.page_size = cfg.geometry.page_size;
    let mut w = synth::generate(&spec, cfg.seed)?;
    dedupsim::content::try_assign_content(&mut w, content, cfg.seed)?;
    let dir = TempDir(std::env::temp_dir().join(format!("dedupsim-bench-parsers-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).with_context(|| format!("{}", dir.0.display()))?;
    let mut files = Vec::new();
    for f in TraceFormat::all() {
        let path = dir.0.join(format!("bench.{}", f.name()));
        write_trace(&w, f, cfg.geometry.page_size, &path).with_context(|| format!("{}", path.display()))?;
        let bytes = std::fs::metadata(&path)?.len();
        let lines = std::io::BufRead::lines(std::io::BufReader::new(std::fs::File::open(&path)?)).count();
        files.push((f, path, bytes, lines));
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); files.len()];
    let mut loaded_requests = vec![0usize; files.len()];
    for _ in 0..rounds.max(1) {
        for (i, (f, path, _, _)) in files.iter().enumerate() {
            let opts = LoadOptions { format: Some(*f), page_size: cfg.geometry.page_size, ..LoadOptions::default() };
            let t = clock();
            let loaded = trace::load(path, &opts).with_context(|| format!("{}", path.display()))?;
            times[i].push(clock() - t);
            loaded_requests[i] = loaded.workload.requests.len();
        }
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "trace parsers: the benchmark workload ({requests} requests) in each format, `trace::load` \
         (read + parse + page-align, one thread); {}, best and median of {} rounds\n",
        clock_name(),
        rounds.max(1)
    );
    let _ = writeln!(o, "| format | file (MB) | lines | best (s) | median (s) | MB/s | requests/s | lines/s |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (i, (f, _, bytes, lines)) in files.iter().enumerate() {
        let (best, median) = best_median(&times[i]);
        let _ = writeln!(
            o,
            "| {} | {:.1} | {lines} | {best:.3} | {median:.3} | {:.0} | {:.2} M | {:.2} M |",
            if let TraceFormat::Csv(_) = f { "csv (time_us,op,lba,bytes,volume)".to_string() } else { f.to_string() },
            *bytes as f64 / 1e6,
            *bytes as f64 / 1e6 / best,
            loaded_requests[i] as f64 / best / 1e6,
            *lines as f64 / best / 1e6
        );
    }
    Ok(o)
}
