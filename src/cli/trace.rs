//! `dedupsim trace ...`: statistics and synthetic traces.

use super::common::{self, ConfigArgs, WorkloadArgs};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use dedupsim::content;
use dedupsim::fromfiles::{self, FromFilesOptions, ReadPhase};
use dedupsim::trace::{self, LoadOptions, TraceFormat, VolumeSelect};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Print Table II-style characteristics of a trace.
    Stats(StatsArgs),
    /// Generate a synthetic trace (native format, with content ids) into a file.
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
    /// (N whole-file reads of Zipf-popular files, a = 0.8 by default).
    #[arg(long, default_value = "none")]
    read_phase: ReadPhase,
    /// Seed of the Zipf read phase.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Page size in bytes (a power of two, at least 4096); files start on page boundaries.
    #[arg(long, default_value_t = 4096)]
    page_size: u32,
    /// Time between consecutive requests, e.g. 100us, 1ms.
    #[arg(long, default_value = "100us", value_parser = fromfiles::parse_interval)]
    inter_arrival: dedupsim::units::Nanos,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

fn from_files(a: FromFilesArgs) -> Result<()> {
    let opts = FromFilesOptions {
        page_size: a.page_size,
        inter_arrival: a.inter_arrival,
        read_phase: a.read_phase,
        seed: a.seed,
    };
    let mut listing = fromfiles::list_files(&a.dirs)?;
    // A previous output inside a scanned tree is not part of the data.
    if let Ok(out) = std::fs::canonicalize(&a.out) {
        listing.files.retain(|(p, len)| {
            let same = p.file_name() == out.file_name() && std::fs::canonicalize(p).is_ok_and(|c| c == out);
            if same {
                listing.bytes -= len;
            }
            !same
        });
    }
    let mut progress = common::Progress::new(listing.bytes, "scanning (bytes)", a.quiet);
    let res = fromfiles::scan_listing(listing, &opts, &mut |done| progress.set(done));
    progress.finish();
    let res = res?;
    for s in &res.skipped {
        eprintln!("warning: skipped {s}");
    }
    let f = std::fs::File::create(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    trace::write_native(&res.records, f).with_context(|| format!("writing {}", a.out.display()))?;
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
            let loaded = trace::load(&a.file, &opts)?;
            let st = trace::stats(&loaded.workload);
            if a.json {
                common::out(&(serde_json::to_string_pretty(&st)? + "\n"))
            } else {
                let mut s = format!("{} ({})\n", a.file.display(), loaded.format);
                s.push_str(&st.to_string());
                if loaded.bad_lines > 0 {
                    s.push_str(&format!("skipped malformed lines: {}\n", loaded.bad_lines));
                }
                common::out(&s)
            }
        }
        TraceCmd::FromFiles(a) => from_files(a),
        TraceCmd::Synth(a) => {
            let cfg = a.cfg.load()?;
            let mut w = common::load_workload(&a.workload, &cfg, false)?;
            let summary = content::try_assign_content(&mut w, &a.workload.content, cfg.seed)?;
            let f = std::fs::File::create(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
            trace::write_native_workload(&w, cfg.geometry.page_size, f)
                .with_context(|| format!("writing {}", a.out.display()))?;
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
            Ok(())
        }
    }
}
