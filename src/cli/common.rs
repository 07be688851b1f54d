//! Shared CLI helpers: output, progress bars, workload selection.

use anyhow::{Context, Result};
use clap::Args;
use dedupsim::config::Config;
use dedupsim::content::ContentModel;
use dedupsim::synth::{self, SynthSpec};
use dedupsim::trace::{self, LoadOptions, TraceFormat, VolumeSelect};
use dedupsim::workload::Workload;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Writes to stdout; a closed pipe surfaces as a BrokenPipe error that
/// `main` treats as success.
pub fn out(s: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(s.as_bytes()).and_then(|()| o.flush()).context("writing standard output")?;
    Ok(())
}

/// What an output path would write to, for [`check_outputs`]: the file's
/// identity (device and inode) if it exists, else its absolute path.
/// `None` for an existing file that is not a regular file (`/dev/null`, a
/// FIFO): writing it twice, or writing one an input also names, loses
/// nothing.
#[derive(PartialEq, Eq)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    Path(PathBuf),
}

fn file_id(p: &Path) -> Option<FileId> {
    match std::fs::metadata(p) {
        Ok(m) if !m.is_file() => None,
        #[cfg(unix)]
        Ok(m) => {
            use std::os::unix::fs::MetadataExt;
            Some(FileId::Inode(m.dev(), m.ino()))
        }
        #[cfg(not(unix))]
        Ok(_) => std::fs::canonicalize(p).ok().map(FileId::Path),
        Err(_) => {
            let abs = std::path::absolute(p).ok()?;
            let parent = abs.parent().and_then(|d| std::fs::canonicalize(d).ok());
            Some(FileId::Path(match (parent, abs.file_name()) {
                (Some(d), Some(n)) => d.join(n),
                _ => abs,
            }))
        }
    }
}

/// Refuses, before any work is done, an output file that is also an input
/// (`--json` on the trace would replace it) or that two outputs share (one
/// would silently replace the other). `inputs` and `outputs` are
/// (flag, path) pairs, e.g. `("--trace", path)`. Also refuses an output
/// that could not be written at the end: a directory, or a file in a
/// directory that does not exist.
pub fn check_outputs(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
    let stdout: Vec<&str> = outputs.iter().filter(|(_, p)| p.as_os_str() == "-").map(|(f, _)| *f).collect();
    if stdout.len() > 1 {
        anyhow::bail!("{} all name standard output (-); give files to all but one", stdout.join(" and "));
    }
    for (i, (flag, out)) in outputs.iter().enumerate() {
        if out.as_os_str() == "-" {
            continue; // standard output
        }
        if out.is_dir() {
            anyhow::bail!("{flag} {}: is a directory; give a file name", out.display());
        }
        let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            anyhow::bail!(
                "{flag} {}: directory {} does not exist; create it first or choose another path",
                out.display(),
                dir.display()
            );
        }
        // A read-only file system, a missing permission or a name too
        // long: said now, not after the work.
        dedupsim::output::probe(out).with_context(|| format!("{flag} {}: cannot be written", out.display()))?;
        let Some(id) = file_id(out) else { continue };
        for (in_flag, input) in inputs {
            if file_id(input).as_ref() == Some(&id) {
                anyhow::bail!(
                    "{flag} {}: this file is also an input ({in_flag} {}); writing it would destroy the input, choose another output file",
                    out.display(),
                    input.display()
                );
            }
        }
        for (other_flag, other) in &outputs[..i] {
            if file_id(other).as_ref() == Some(&id) {
                anyhow::bail!(
                    "{other_flag} and {flag} name the same file ({}): one would overwrite the other; give them different files",
                    out.display()
                );
            }
        }
    }
    Ok(())
}

/// Refuses an output inside a scanned input tree (`trace from-files DIR -o
/// DIR/a`): it would be read as input on the next run, or, already there,
/// be left out of the scan and overwritten. Outputs that do not exist yet
/// are placed by their (existing) directory.
pub fn check_outside_trees(trees: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
    let resolve = |p: &Path| -> Option<PathBuf> {
        std::fs::canonicalize(p).ok().or_else(|| {
            let abs = std::path::absolute(p).ok()?;
            let dir = abs.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Some(std::fs::canonicalize(dir).ok()?.join(abs.file_name()?))
        })
    };
    for (flag, out) in outputs {
        let Some(o) = resolve(out) else { continue };
        for (what, tree) in trees {
            let Ok(t) = std::fs::canonicalize(tree) else { continue };
            if t.is_dir() && o.starts_with(&t) {
                anyhow::bail!(
                    "{flag} {}: the output lies inside the {what} {}; it would be scanned as input (or, already there, \
                     left out and overwritten); write it outside the tree",
                    out.display(),
                    tree.display()
                );
            }
        }
    }
    Ok(())
}

/// An error and its causes as one line, as `main` prints it.
pub fn error_text(e: &anyhow::Error) -> String {
    super::error_chain(e)
}

pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// A progress bar on stderr that appears only once the work has taken more
/// than a second, and never when stderr is not a terminal or with --quiet.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: bool,
}

impl Progress {
    pub fn new(total: u64, what: &str, quiet: bool) -> Progress {
        let enabled = !quiet && std::io::stderr().is_terminal();
        let bar = enabled.then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:40}] {human_pos}/{human_len} ({elapsed}, eta {eta})")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            b.set_message(what.to_string());
            b
        });
        Progress { bar, start: Instant::now(), shown: false }
    }

    pub fn set(&mut self, pos: u64) {
        if let Some(b) = &self.bar {
            if !self.shown && self.start.elapsed() > Duration::from_secs(1) {
                b.set_draw_target(ProgressDrawTarget::stderr());
                self.shown = true;
            }
            b.set_position(pos);
        }
    }

    pub fn inc(&mut self, d: u64) {
        let pos = self.bar.as_ref().map(|b| b.position()).unwrap_or(0);
        self.set(pos + d);
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// `--max-memory`, for the commands that simulate.
#[derive(Args, Debug, Clone)]
pub struct MemoryArgs {
    /// Refuse to start when the simulations running at once need more than SIZE by estimate
    /// (e.g. 8GiB; `config show` prints one run's). Default: the machine's available memory
    /// (MemAvailable).
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_size, allow_hyphen_values = true)]
    pub max_memory: Option<u64>,
}

fn parse_memory_size(s: &str) -> std::result::Result<u64, String> {
    if s.trim_start().starts_with('-') {
        return Err(format!("`{s}` is negative: a memory size is at least 0, e.g. 8GiB"));
    }
    dedupsim::config::parse_size(s)
}

/// A whole number flag (`--seed`, `-j`): a negative value is said to be
/// one (clap's default read `-5` as an unknown flag).
pub fn parse_unsigned<T: std::str::FromStr + std::fmt::Display + num_max::Max>(
    s: &str,
) -> std::result::Result<T, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("`{s}` is negative: give a whole number from 0 to {}", T::MAX));
    }
    t.parse::<T>().map_err(|_| format!("`{s}` is not a whole number from 0 to {}", T::MAX))
}

/// The largest value of the unsigned types [`parse_unsigned`] reads.
pub mod num_max {
    pub trait Max {
        const MAX: Self;
    }
    impl Max for u64 {
        const MAX: u64 = u64::MAX;
    }
    impl Max for usize {
        const MAX: usize = usize::MAX;
    }
}

/// The machine's available memory (Linux: `MemAvailable` of /proc/meminfo).
fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// How many simulations run at once with `-j jobs` (0 or none: every core)
/// when there are `work` of them.
pub fn runs_at_once(jobs: Option<usize>, work: usize) -> usize {
    let threads = match jobs {
        Some(j) if j > 0 => j,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    threads.min(work).max(1)
}

impl MemoryArgs {
    /// Refuses, before anything is allocated, `runs` simulations of `cfg`
    /// at once (with `--check`'s shadow map if `check`) whose estimated
    /// memory ([`Config::memory_estimate`]) exceeds `--max-memory`, or
    /// without it the machine's available memory (no limit where that is
    /// unknown).
    pub fn check(&self, cfg: &Config, runs: usize, check: bool) -> Result<()> {
        use dedupsim::config::format_bytes;
        let (limit, what) = match self.max_memory {
            Some(m) => (m, "--max-memory".to_string()),
            None => match mem_available() {
                Some(m) => (m, "memory available on this machine (MemAvailable)".to_string()),
                None => return Ok(()),
            },
        };
        let m = cfg.memory_estimate();
        let per_run = m.per_run(check);
        let total = per_run.saturating_mul(runs as u64);
        if total <= limit {
            return Ok(());
        }
        let runs_text =
            if runs > 1 { format!("{runs} simulations at once need") } else { "the simulation needs".to_string() };
        let each = if runs > 1 { format!("{} each: ", format_bytes(per_run)) } else { String::new() };
        let shadow =
            if check { format!(", --check shadow map {}", format_bytes(m.check_shadow)) } else { String::new() };
        let fewer = if runs > 1 { ", fewer parallel runs (-j 1)" } else { "" };
        anyhow::bail!(
            "not enough memory: {runs_text} an estimated {} ({each}{}{shadow}) for a device of {} raw, more than the {} of {what}; use a smaller device (geometry.blocks_per_plane, geometry.channels, ...){fewer} or, if the estimate is too cautious, a larger --max-memory",
            format_bytes(total),
            m.breakdown(),
            format_bytes(cfg.raw_bytes()),
            format_bytes(limit),
        )
    }
}

/// Where the workload comes from: a trace file or a synthetic spec.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Trace file (plain, .gz or .zst). Without it, the built-in synthetic workload runs.
    #[arg(long, short = 't')]
    pub trace: Option<PathBuf>,
    #[arg(long, requires = "trace", conflicts_with_all = ["synth", "replica"],
          help = dedupsim::trace::format_help("Trace format (default: auto-detect)"))]
    pub format: Option<TraceFormat>,
    /// Volumes of a multi-volume trace: `all` (each volume on its own disjoint page range), `merge`
    /// (every volume kept, device column ignored: one shared address space, as SSDsim and MQSim
    /// do), or one volume: a number, or major:minor (FIU).
    #[arg(long, requires = "trace", conflicts_with_all = ["synth", "replica"], default_value = "all")]
    pub volume: VolumeSelect,
    /// Fold addresses beyond the device's logical capacity back into it (modulo).
    #[arg(long, requires = "trace", conflicts_with_all = ["synth", "replica"])]
    pub wrap: bool,
    /// Count and skip malformed trace lines instead of stopping at the first.
    #[arg(long, requires = "trace", conflicts_with_all = ["synth", "replica"])]
    pub skip_bad_lines: bool,
    /// Replay at most this many requests (of the trace, the synthetic workload or the replica).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_requests: Option<u64>,
    /// Synthetic replica of a FAD Table II workload: homes, mail, webvm, mds1, stg1, web1, lun0,
    /// lun1, lun2, optionally scaled as NAME@SCALE (e.g. mail@0.05). Labelled "synthetic (Table
    /// II-matched)"; see docs/reproduce.md.
    #[arg(long, conflicts_with_all = ["trace", "synth"], value_name = "NAME")]
    pub replica: Option<String>,
    /// Synthetic workload spec, e.g. "requests=100000,read=0.5,size=inv:16,seq=0.3,hot=0.4:5GiB,footprint=50GiB,iat=exp:100us"
    /// (not with --trace; default: the built-in default-small workload).
    #[arg(long, conflicts_with = "trace")]
    pub synth: Option<String>,
    /// Workload profile (TOML, from `trace stats --profile`, or the name of a committed one,
    /// e.g. fiu-mail, recorded-mail): generate a workload with its locality statistics,
    /// fitted (docs/profiles.md). Not with --trace, --synth or --replica.
    #[arg(long, conflicts_with_all = ["trace", "synth", "replica"], value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// With --profile: requests generated, as a multiple of the profiled trace's (address
    /// ranges scale with it; locality does not).
    #[arg(long, requires = "profile", default_value_t = 1.0, value_parser = parse_scale)]
    pub scale: f64,
    /// With --profile: override one of its numbers, e.g. --profile-set duplicates.dedup_rate=0.4
    /// (repeatable; every share and count of the file is a knob).
    #[arg(long, requires = "profile", value_name = "KEY=VALUE")]
    pub profile_set: Vec<String>,
    /// Content model for pages without content: unique | zipf:a=0.2,dedup=0.5 | zipf:a=0.2,n=0.5 [,copy=P]
    /// (default: zipf:a=0.2,dedup=0.5, FAD's Zipf calibrated to Table II's 50% dedup rate).
    #[arg(long, default_value = "zipf:a=0.2,dedup=0.5")]
    pub content: ContentModel,
    /// What a file (FAD's unit of placement) is: `request` (one trace request) or `merged`
    /// (consecutive same-op, address-contiguous records joined into one request, as FAD's
    /// authors' simulator preprocesses traces).
    #[arg(long, default_value = "request", value_name = "RULE")]
    pub files: dedupsim::workload::FileRule,
    /// With --replica: match Table II's dedup rate on the device (Deduplication achieves it) or
    /// on the trace (the replayed writes repeat content at that rate). Default: device.
    #[arg(long, value_name = "ON")]
    pub dedup_rate: Option<dedupsim::experiment::replica::DedupTarget>,
}

impl WorkloadArgs {
    /// The input files, for [`check_outputs`].
    pub fn inputs(&self) -> Vec<(&'static str, &Path)> {
        let trace = self.trace.iter().map(|t| ("--trace", t.as_path()));
        trace.chain(self.profile.iter().map(|p| ("--profile", p.as_path()))).collect()
    }
}

/// `--scale`: a positive finite multiple.
fn parse_scale(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("`{s}` is not a positive number")),
    }
}

/// Configuration selection shared by commands.
#[derive(Args, Debug, Clone)]
pub struct ConfigArgs {
    /// Built-in preset (fad-table1, fad-onfi800, tiny, fast24-nvmevirt; `dedupsim config presets`).
    #[arg(long, conflicts_with = "config")]
    pub preset: Option<String>,
    /// Configuration file (TOML; `base = "<preset>"` to extend a preset).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a config key, e.g. --set timing.read=25us --set policy.fad.rho=0.2 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    #[arg(long, value_name = "NAME", help = format!(
        "Dedup engine: how duplicates are found and what finding them costs ({}; `dedupsim engines`); same as --set dedup.engine=NAME. Parameters: --set engine.NAME.KEY=VALUE",
        dedupsim::engine::names().join(", ")))]
    pub engine: Option<String>,
    /// Seed for content models and synthetic workloads (overrides the config's).
    #[arg(long, allow_negative_numbers = true, value_parser = parse_unsigned::<u64>)]
    pub seed: Option<u64>,
}

impl ConfigArgs {
    /// The input files, for [`check_outputs`].
    pub fn inputs(&self) -> Vec<(&'static str, &Path)> {
        self.config.iter().map(|c| ("--config", c.as_path())).collect()
    }

    pub fn load(&self) -> Result<Config> {
        let source = match (&self.preset, &self.config) {
            (Some(p), _) => Some(p.clone()),
            (None, Some(f)) => {
                if !f.exists() {
                    anyhow::bail!("config file {} does not exist", f.display());
                }
                Some(f.display().to_string())
            }
            (None, None) => None,
        };
        // A flag and a --set of the same key: one would silently win.
        let set_key = |key: &str| self.set.iter().any(|s| s.split_once('=').is_some_and(|(k, _)| k.trim() == key));
        for (flag, given, key) in
            [("--engine", self.engine.is_some(), "dedup.engine"), ("--seed", self.seed.is_some(), "seed")]
        {
            if given && set_key(key) {
                anyhow::bail!("{flag} and --set {key}=... both set {key}; give only one");
            }
        }
        let mut set = self.set.clone();
        if let Some(e) = &self.engine {
            if !dedupsim::engine::names().contains(&e.as_str()) {
                anyhow::bail!(
                    "--engine {e}: no dedup engine is called `{e}`; engines: {}",
                    dedupsim::engine::names().join(", ")
                );
            }
            set.push(format!("dedup.engine=\"{e}\""));
        }
        let mut cfg = Config::load(source.as_deref(), &set)?;
        if let Some(s) = self.seed {
            cfg.seed = s;
        }
        Ok(cfg)
    }
}

/// Loads the trace or generates the synthetic workload, then applies
/// `--files`.
pub fn load_workload(a: &WorkloadArgs, cfg: &Config, quiet: bool) -> Result<Workload> {
    load_workload_from(a, cfg, quiet, None)
}

/// [`load_workload`], the trace's bytes read from `input` if given (the
/// copy of a trace that could be read only once and was spooled for a
/// streamed run that then needed the held path).
pub fn load_workload_from(
    a: &WorkloadArgs,
    cfg: &Config,
    quiet: bool,
    input: Option<&dedupsim::trace::TraceInput>,
) -> Result<Workload> {
    if a.dedup_rate.is_some() && a.replica.is_none() {
        anyhow::bail!("--dedup-rate applies to Table II replicas only: use it with --replica NAME");
    }
    let mut w = load_records(a, cfg, quiet, input)?;
    let before = w.requests.len();
    let merged = w.apply_file_rule(a.files);
    if !quiet {
        print_files_joined(before as u64, merged);
    }
    Ok(w)
}

/// `--files merged`'s account on standard error, if it merged anything:
/// `before` requests, `merged` of them merged away.
pub fn print_files_joined(before: u64, merged: u64) {
    if merged > 0 {
        eprintln!("--files merged: {before} requests joined into {} files ({merged} merged away)", before - merged);
    }
}

/// How `--trace` is read for a device configured by `cfg`.
pub fn trace_load_options(a: &WorkloadArgs, cfg: &Config) -> LoadOptions {
    LoadOptions {
        format: a.format,
        page_size: cfg.geometry.page_size,
        volume: a.volume,
        skip_bad_lines: a.skip_bad_lines,
        wrap_to_pages: a.wrap.then(|| cfg.logical_pages()),
        capacity_pages: Some(cfg.logical_pages()),
        max_requests: a.max_requests,
        // A streamed trace merges as it reads; the held path's loader
        // leaves it to `Workload::apply_file_rule` (`load_workload_from`).
        files: a.files,
        ..LoadOptions::default()
    }
}

/// A loaded trace's warnings, on standard error.
pub fn print_load_warnings(warnings: &[String], bad_lines: u64) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
    if bad_lines > 0 {
        eprintln!("warning: skipped {bad_lines} malformed lines");
    }
}

fn load_records(
    a: &WorkloadArgs,
    cfg: &Config,
    quiet: bool,
    input: Option<&dedupsim::trace::TraceInput>,
) -> Result<Workload> {
    match (&a.trace, &a.replica) {
        (Some(path), _) => {
            let opts = trace_load_options(a, cfg);
            let loaded = match input {
                Some(input) => trace::load_from_reader(input.open()?, path, &opts)?,
                None => trace::load(path, &opts)?,
            };
            if !quiet {
                print_load_warnings(&loaded.warnings, loaded.bad_lines);
            }
            Ok(loaded.workload)
        }
        (None, Some(name)) => {
            use dedupsim::experiment::replica::{self, ReplicaRef, ReplicaSpec};
            let r: ReplicaRef = name.parse().context("--replica")?;
            // Arrivals for the device being simulated (the active preset with
            // --config/--set), as `reproduce fad` generates them.
            let device = replica::ReplicaDevice::of(cfg);
            let mut spec = ReplicaSpec::on_device(r.row, r.scale, replica::DEFAULT_UTILIZATION, &device);
            spec.dedup_target = a.dedup_rate.unwrap_or_default();
            if let Some(n) = a.max_requests {
                spec.requests = spec.requests.min(n);
            }
            Ok(replica::generate(&spec, cfg.seed)?)
        }
        (None, None) if a.profile.is_some() => {
            let path = a.profile.as_deref().expect("checked");
            let p = dedupsim::profile::Profile::load_named(path, &a.profile_set)?;
            if p.source.page_size != cfg.geometry.page_size {
                anyhow::bail!(
                    "--profile {}: measured at {}-byte pages, but the device has {}-byte pages; \
                     profile the trace at the device's page size",
                    path.display(),
                    p.source.page_size,
                    cfg.geometry.page_size
                );
            }
            let mut n = (p.source.requests as f64 * a.scale).round().max(1.0) as u64;
            if let Some(m) = a.max_requests {
                n = n.min(m);
            }
            dedupsim::profile::generate(&p, n, cfg.seed).with_context(|| {
                format!("--profile {} at --scale {}", path.display(), dedupsim::units::short_f64(a.scale))
            })
        }
        (None, None) => {
            // The device's page size; a disagreeing `page=` is an error.
            let page_size = cfg.geometry.page_size;
            let mut spec = match &a.synth {
                Some(s) => SynthSpec::parse_for_page_size(s, page_size).context("--synth")?,
                None => SynthSpec { page_size, ..SynthSpec::default_small() },
            };
            if let Some(n) = a.max_requests {
                spec.requests = spec.requests.min(n);
            }
            Ok(synth::generate(&spec, cfg.seed)?)
        }
    }
}

/// How emitted job lines call this program: the running binary's absolute
/// path, shell-quoted, so a job runner (GNU parallel, a Slurm array) runs
/// this very build whatever its PATH; `dedupsim` if the path is unknown.
pub fn self_program() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(dedupsim::experiment::sweep::shell_quote))
        .unwrap_or_else(|| "dedupsim".into())
}
