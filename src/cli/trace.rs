//! `dedupsim trace ...`: statistics and synthetic traces.

use super::common::{self, ConfigArgs, WorkloadArgs};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use dedupsim::content;
use dedupsim::trace::{self, LoadOptions, TraceFormat, VolumeSelect};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Print Table II-style characteristics of a trace.
    Stats(StatsArgs),
    /// Generate a synthetic trace (native format, with content ids) into a file.
    Synth(SynthArgs),
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Trace file (plain, .gz or .zst).
    file: PathBuf,
    /// Trace format (default: auto-detect).
    #[arg(long)]
    format: Option<TraceFormat>,
    /// Volume to keep (number, major:minor, or `all`).
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
        TraceCmd::Synth(a) => {
            let cfg = a.cfg.load()?;
            let mut w = common::load_workload(&a.workload, &cfg, false)?;
            let summary = content::try_assign_content(&mut w, &a.workload.content, cfg.seed)?;
            let f = std::fs::File::create(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
            trace::write_native_workload(&w, cfg.geometry.page_size, f)
                .with_context(|| format!("writing {}", a.out.display()))?;
            eprintln!(
                "wrote {} requests to {} (content {}, realized dedup {:.1}%)",
                w.requests.len(),
                a.out.display(),
                summary.model,
                summary.realized_dedup_rate * 100.0
            );
            Ok(())
        }
    }
}
