//! `dedupsim trace ...`: statistics, conversion and synthetic traces.

use super::common::{self, ConfigArgs, WorkloadArgs};
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use dedupsim::content;
use dedupsim::fromfiles::{self, FromFilesOptions, ReadPhase};
use dedupsim::output::{self, OutputError};
use dedupsim::trace::{self, LoadOptions, TraceFormat, VolumeSelect};
use std::path::{Path, PathBuf};

#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Print Table II-style characteristics of a trace.
    Stats(StatsArgs),
    /// Convert any readable trace to SSDsim ASCII (`time_ns devno lsn size op`), to replay the
    /// same requests on SSDsim 2.1 or MQSim (see docs/trace-formats.md).
    Convert(ConvertArgs),
    /// Generate a synthetic trace (native format, with content ids) into a file.
    // The flattened workload flags' texts speak of running; here they write.
    #[command(mut_arg("trace", |a| a.help(
        "Trace file (plain, .gz or .zst) to write out as a native trace with contents drawn for its \
         writes. Without it, the built-in synthetic workload (or --synth / --replica) is written"
    )))]
    #[command(mut_arg("max_requests", |a| a.help(
        "Write at most this many requests (of the trace, the synthetic workload or the replica)"
    )))]
    #[command(mut_arg("engine", |a| a.hide(true)))]
    Synth(SynthArgs),
    /// Build a content-bearing trace from directory trees: each regular file becomes one write
    /// of its pages (xxh3-128 per 4 KiB), files laid out back to back (see docs/trace-formats.md).
    FromFiles(FromFilesArgs),
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Trace file (plain, .gz or .zst).
    file: PathBuf,
    /// Trace format (default: auto-detect).
    #[arg(long)]
    format: Option<TraceFormat>,
    /// Volumes: `all` (disjoint ranges), `merge` (device column ignored, one shared address space)
    /// or one volume (a number, or major:minor).
    #[arg(long, default_value = "all")]
    volume: VolumeSelect,
    /// Count and skip malformed lines.
    #[arg(long)]
    skip_bad_lines: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the trace's workload profile (its locality statistics as TOML) to this file,
    /// for `trace synth --profile` / `run --profile` (docs/profiles.md).
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
}

/// Output formats of `trace convert`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    /// SSDsim / MQSim ASCII: `time_ns devno lsn_sectors size_sectors op` (op 1 = read, 0 = write).
    Ssdsim,
}

/// `trace convert`: what dedupsim would replay, written for another simulator.
#[derive(Args, Debug)]
#[command(after_help = "\
The trace is loaded exactly as `dedupsim run --trace` loads it (FIU records merged, volumes \
mapped, addresses page-aligned at the configured page size, backward timestamps clamped) and \
written one request per line: integers separated by one space, devno 0 (the volumes already \
share one address space: disjoint ranges with --volume all, their own addresses with --volume \
merge), lsn and size in 512-byte sectors, op 1 = read and 0 = write. Times are in ns relative to \
the first request (dedupsim rebases them anyway), non-decreasing. Trims are dropped and counted \
on stderr. Every request must end below sector 2^32 (SSDsim's 32-bit sector numbers): otherwise \
the conversion fails; --wrap folds the addresses into the device. The output is written \
atomically (a temporary file renamed into place) and is not compressed.")]
pub struct ConvertArgs {
    /// Trace file (plain, .gz or .zst), in any format dedupsim reads.
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum)]
    to: ConvertTo,
    /// Output file.
    #[arg(long, short = 'o')]
    out: PathBuf,
    #[arg(long, help = dedupsim::trace::format_help("Input trace format (default: auto-detect)"))]
    format: Option<TraceFormat>,
    /// Volumes: `all` (each on its own disjoint range), `merge` (device column ignored, one shared
    /// address space, as SSDsim and MQSim read it) or one volume (a number, or major:minor).
    #[arg(long, default_value = "all")]
    volume: VolumeSelect,
    /// Fold addresses beyond the device's logical capacity back into it (modulo).
    #[arg(long)]
    wrap: bool,
    /// Count and skip malformed trace lines instead of stopping at the first.
    #[arg(long)]
    skip_bad_lines: bool,
    /// Convert at most this many requests of the trace.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_requests: Option<u64>,
    /// Keep 512-byte sector precision instead of aligning requests to pages (SSDsim and MQSim then
    /// move only the sectors a request names; dedupsim still replays whole pages).
    #[arg(long)]
    sectors: bool,
    /// Device preset (fad-table1, fad-onfi800, tiny, fast24-nvmevirt): its page size aligns the requests, its
    /// logical capacity bounds --wrap.
    #[arg(long, conflicts_with = "config")]
    preset: Option<String>,
    /// Device configuration file (TOML) instead of a preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config key, e.g. --set geometry.page_size=8KiB (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

fn convert(a: ConvertArgs) -> Result<()> {
    let ConvertTo::Ssdsim = a.to;
    let mut inputs = vec![("trace file", a.file.as_path())];
    inputs.extend(a.config.iter().map(|c| ("--config", c.as_path())));
    common::check_outputs(&inputs, &[("-o", &a.out)])?;
    let cfg = ConfigArgs { preset: a.preset, config: a.config, set: a.set, engine: None, seed: None }.load()?;
    let page_size = if a.sectors { 512 } else { cfg.geometry.page_size };
    let per_page = u64::from(cfg.geometry.page_size / page_size);
    let opts = LoadOptions {
        format: a.format,
        page_size,
        volume: a.volume,
        skip_bad_lines: a.skip_bad_lines,
        wrap_to_pages: a.wrap.then(|| cfg.logical_pages() * per_page),
        max_requests: a.max_requests,
        ignore_content: true,
        ..LoadOptions::default()
    };
    let loaded = trace::load(&a.file, &opts)?;
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    if loaded.workload.requests.iter().all(|r| r.op == dedupsim::units::Op::Trim) {
        anyhow::bail!("{}: no read or write requests to convert (only trims)", a.file.display());
    }
    let n = output::write_file_with(&a.out, |w| {
        trace::write_ssdsim(&loaded.workload, page_size, w).map_err(|e| match e {
            trace::SsdsimWriteError::Io(e) => OutputError::new(&a.out, e).into(),
            e => anyhow::Error::from(e),
        })
    })
    .with_context(|| format!("converting {}", a.file.display()))?;
    let volumes = match a.volume {
        VolumeSelect::All if loaded.volumes.len() > 1 => {
            format!(", {} volumes on disjoint ranges", loaded.volumes.len())
        }
        VolumeSelect::Merge if loaded.volumes.len() > 1 => format!(", {} volumes merged", loaded.volumes.len()),
        _ => String::new(),
    };
    eprintln!(
        "wrote {} requests ({} reads, {} writes{volumes}) from {} ({}) to {} as SSDsim ASCII",
        n.requests,
        n.reads,
        n.writes,
        a.file.display(),
        loaded.format,
        a.out.display()
    );
    if n.trims_dropped > 0 {
        eprintln!("dropped {} trim requests (SSDsim ASCII has no trim)", n.trims_dropped);
    }
    if !loaded.workload.hints.is_empty() {
        eprintln!("dropped {} write hints (SSDsim ASCII has no hint field)", loaded.workload.hints.len());
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct SynthArgs {
    #[command(flatten)]
    cfg: ConfigArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Output file (native dedupsim trace format; .gz / .zst not compressed here).
    #[arg(long, short = 'o')]
    out: PathBuf,
}

#[derive(Args, Debug)]
pub struct FromFilesArgs {
    /// Directories (or files) to scan, in this order; each directory's files in byte-wise path
    /// order. Symbolic links below them are not followed.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Output file (native dedupsim trace format).
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// Reads after the writes: none, all (every file once, in write order), or zipf:N[:a=A]
    /// (N whole-file reads of Zipf-popular files, a = 0.8 by default; N <= 2^32 - 1).
    #[arg(long, default_value = "none")]
    read_phase: ReadPhase,
    /// Seed of the Zipf read phase.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = common::parse_unsigned::<u64>)]
    seed: u64,
    /// Page size (a power of two, at least 4096), bytes or with a unit (16KiB); files start on
    /// page boundaries.
    #[arg(long, default_value = "4096", value_parser = parse_page_size)]
    page_size: u32,
    /// Time between consecutive requests, e.g. 100us, 1ms.
    #[arg(long, default_value = "100us", value_parser = fromfiles::parse_interval)]
    inter_arrival: dedupsim::units::Nanos,
    /// Write each file as appends of PAGES pages (0: one write per file) (FAST'24's
    /// append-built files).
    #[arg(long, default_value_t = 0, value_name = "PAGES")]
    segment: u64,
    /// With --segment: files appended at once, their appends interleaved round-robin, each
    /// at the next free address (so the files fragment).
    #[arg(long, default_value_t = 1, value_name = "N")]
    writers: u32,
    /// With --segment: every append after a file's first carries an explicit append hint
    /// naming the file's previous page (native `hint` column; read by die-hint).
    #[arg(long)]
    hints: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// `--page-size`: a size as everywhere else (`16KiB`, `4096`).
fn parse_page_size(s: &str) -> std::result::Result<u32, String> {
    let b = dedupsim::config::parse_size(s)?;
    u32::try_from(b).map_err(|_| format!("`{s}` is {b} bytes, more than a page can be (at most 2^32 - 1 bytes)"))
}

fn from_files(a: FromFilesArgs) -> Result<()> {
    let inputs: Vec<(&str, &Path)> = a.dirs.iter().map(|d| ("scanned path", d.as_path())).collect();
    common::check_outputs(&inputs, &[("-o", &a.out)])?;
    let opts = FromFilesOptions {
        page_size: a.page_size,
        inter_arrival: a.inter_arrival,
        read_phase: a.read_phase,
        seed: a.seed,
        segment: a.segment,
        writers: a.writers,
        hints: a.hints,
    };
    common::check_outside_trees(&inputs, &[("-o", &a.out)])?;
    let listing = fromfiles::list_files(&a.dirs)?;
    let mut progress = common::Progress::new(listing.bytes, "scanning (bytes)", a.quiet);
    let res = fromfiles::scan_listing(listing, &opts, &mut |done| progress.set(done));
    progress.finish();
    let res = res?;
    for s in &res.skipped {
        eprintln!("warning: skipped {s}");
    }
    output::write_file(&a.out, |w| trace::write_native(&res.records, w))?;
    common::out(&format!("wrote {} requests to {}\n{}", res.records.len(), a.out.display(), res.summary()))
}

pub fn dispatch(cmd: TraceCmd) -> Result<()> {
    match cmd {
        TraceCmd::Stats(a) => {
            let opts = LoadOptions {
                format: a.format,
                volume: a.volume,
                skip_bad_lines: a.skip_bad_lines,
                ..LoadOptions::default()
            };
            if let Some(p) = &a.profile {
                common::check_outputs(&[("trace", a.file.as_path())], &[("--profile", p)])?;
            }
            let loaded = trace::load(&a.file, &opts)?;
            // The same load warnings `run` prints (clamped timestamps, dropped
            // zero-length requests, writes without content, ...).
            for w in &loaded.warnings {
                eprintln!("warning: {w}");
            }
            let st = trace::stats(&loaded.workload);
            let locality = trace::locality(&loaded.workload);
            if let Some(p) = &a.profile {
                let name =
                    a.file.file_name().map_or_else(|| a.file.display().to_string(), |n| n.to_string_lossy().into());
                let profile = dedupsim::profile::Profile::of(&name, opts.page_size, &locality);
                output::write_file(p, |f| std::io::Write::write_all(f, profile.to_toml().as_bytes()))?;
                eprintln!("wrote the profile of {} to {}", a.file.display(), p.display());
            }
            if a.json {
                #[derive(serde::Serialize)]
                struct WithLocality<'a> {
                    #[serde(flatten)]
                    stats: &'a trace::TraceStats,
                    locality: &'a trace::Locality,
                }
                let j = WithLocality { stats: &st, locality: &locality };
                common::out(&(serde_json::to_string_pretty(&j)? + "\n"))
            } else {
                let mut s = format!("{} ({})\n", a.file.display(), loaded.format);
                s.push_str(&st.to_string());
                s.push_str("locality (docs/locality.md):\n");
                s.push_str(&locality.to_string());
                if loaded.bad_lines > 0 {
                    s.push_str(&format!("skipped malformed lines: {}\n", loaded.bad_lines));
                }
                common::out(&s)
            }
        }
        TraceCmd::FromFiles(a) => from_files(a),
        TraceCmd::Convert(a) => convert(a),
        TraceCmd::Synth(a) => {
            if let Some(e) = &a.cfg.engine {
                anyhow::bail!(
                    "--engine {e}: trace synth writes a workload, which no dedup engine touches; leave --engine out \
                     (give it to `run` when replaying the trace)"
                );
            }
            let cfg = a.cfg.load()?;
            common::check_outputs(&[a.workload.inputs(), a.cfg.inputs()].concat(), &[("-o", &a.out)])?;
            let mut w = common::load_workload(&a.workload, &cfg, false)?;
            if w.writers > 1 {
                anyhow::bail!(
                    "streams={}: the native trace format has no stream column, so trace synth cannot write \
                     interleaved writers; give streams=N to `run --synth` or `run --profile` instead",
                    w.writers
                );
            }
            let summary = content::try_assign_content(&mut w, &a.workload.content, cfg.seed)?;
            output::write_file(&a.out, |f| trace::write_native_workload(&w, cfg.geometry.page_size, f))?;
            // The realized rate over every written page: replicas and traces
            // bring their own contents, which the model above leaves alone.
            let content = if summary.pages_drawn == 0 {
                "content from the workload".to_string()
            } else {
                format!("content {} on {} pages", summary.model, summary.pages_drawn)
            };
            let dedup = match trace::stats(&w).dedup_rate {
                Some(d) => format!("realized dedup {:.1}%", d * 100.0),
                None => "no content".to_string(),
            };
            eprintln!("wrote {} requests to {} ({content}, {dedup})", w.requests.len(), a.out.display());
            if let Some(path) = &a.workload.profile {
                let p = dedupsim::profile::Profile::load_named(path, &a.workload.profile_set)?;
                let rows = dedupsim::profile::fit_report(&p, &trace::locality(&w));
                eprint!("fit to {} (docs/profiles.md):\n{}", path.display(), dedupsim::profile::fit_table(&rows));
            }
            Ok(())
        }
    }
}
