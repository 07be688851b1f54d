//! `run`'s per-request and over-time outputs (issue 29, docs/outputs.md):
//! `--request-log FILE` (one CSV row per request, [`dedupsim::reqlog`]),
//! `--timeseries INTERVAL` with `--timeseries-out FILE` (one CSV row per
//! interval and policy, [`dedupsim::series`]) and `--plot DIR` (figures of
//! the series and the latency CDFs, [`dedupsim::plot`]).

use super::common::Progress;
use anyhow::{Context, Result};
use clap::Args;
use dedupsim::config::{Config, ReplayConfig};
use dedupsim::output::{self, OutputError};
use dedupsim::plot;
use dedupsim::report::RunReport;
use dedupsim::reqlog::{self, Compression};
use dedupsim::runner::{self, Observe, Prepared};
use dedupsim::series::TimeSeries;
use dedupsim::sim::RunOptions;
use dedupsim::units::Nanos;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Most intervals a time series may have (its counters stay in memory,
/// about 200 bytes each).
pub const MAX_INTERVALS: u64 = 1_000_000;

#[derive(Args, Debug, Default)]
pub struct ObserveArgs {
    /// Write one CSV row per replayed request to FILE, as requests complete (arrival,
    /// completion, latency, op, offset, size, duplicate pages, chips, channels, GC wait); one
    /// policy only; `.zst` / `.gz` compress. See docs/outputs.md.
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<PathBuf>,
    #[command(flatten)]
    pub series: SeriesArgs,
}

/// The time series flags, shared by `run` and `serve`.
#[derive(Args, Debug, Default)]
pub struct SeriesArgs {
    /// Record a time series with one row per INTERVAL of simulated time (e.g. `10ms`, `1s`):
    /// IOPS, MB/s, mean and P99 latency by op, GC, erases, write amplification, dedup rate,
    /// free blocks, busy time. Needs --timeseries-out or --plot.
    #[arg(long, value_name = "INTERVAL", value_parser = parse_interval)]
    pub timeseries: Option<Nanos>,
    /// With --timeseries: the CSV file of the series (every policy's rows).
    #[arg(long, value_name = "FILE", requires = "timeseries")]
    pub timeseries_out: Option<PathBuf>,
    /// With --timeseries: draw the series and the latency CDFs into DIR (SVG and PNG,
    /// created if missing).
    #[arg(long, value_name = "DIR", requires = "timeseries")]
    pub plot: Option<PathBuf>,
}

impl SeriesArgs {
    /// The output file, for the common checks (inputs, duplicates, writable).
    pub fn outputs(&self) -> Vec<(&'static str, &Path)> {
        self.timeseries_out.as_deref().map(|p| ("--timeseries-out", p)).into_iter().collect()
    }

    /// Flag combinations and the plot directory, before any work: after
    /// the common checks of the run's `outputs` (which the plot directory,
    /// created here, must not be), so a failing one leaves no directory.
    pub fn check(&self, outputs: &[(&str, &Path)]) -> Result<()> {
        if self.timeseries.is_some() && self.timeseries_out.is_none() && self.plot.is_none() {
            anyhow::bail!("--timeseries INTERVAL needs somewhere to go: --timeseries-out FILE and/or --plot DIR");
        }
        if let Some(dir) = &self.plot {
            if dir.exists() && !dir.is_dir() {
                anyhow::bail!("--plot {}: not a directory; give a directory for the figures", dir.display());
            }
            if let Some((flag, _)) = outputs.iter().find(|(_, p)| same_path(p, dir)) {
                anyhow::bail!("--plot {} is also {flag}: give the figures a directory of their own", dir.display());
            }
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--plot {}: cannot create the directory", dir.display()))?;
            output::probe(&dir.join("latency-cdf.png"))
                .with_context(|| format!("--plot {}: figures cannot be written there", dir.display()))?;
        }
        Ok(())
    }

    /// Writes the series of `runs` to --timeseries-out and draws them into
    /// --plot.
    pub fn write(&self, page_size: u32, runs: &[(&RunReport, &TimeSeries)]) -> Result<()> {
        if let Some(path) = &self.timeseries_out {
            output::write_file(path, |w| {
                TimeSeries::write_csv_header(w)?;
                for (r, s) in runs {
                    s.write_csv(&r.policy, page_size, w)?;
                }
                Ok(())
            })?;
        }
        if let Some(dir) = &self.plot {
            plot_series(dir, runs)?;
        }
        Ok(())
    }
}

/// Whether `a` and `b` name one path: the same absolute path (`./x` is
/// `x`), or, for paths that exist, the same file.
fn same_path(a: &Path, b: &Path) -> bool {
    let abs = |p: &Path| std::path::absolute(p).ok();
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    a == b || abs(a).is_some_and(|x| abs(b) == Some(x)) || real(a).is_some_and(|x| real(b) == Some(x))
}

fn parse_interval(s: &str) -> Result<Nanos, String> {
    let ns = dedupsim::config::parse_time_ns(s)?;
    if ns == 0 {
        return Err(format!("`{s}`: the interval must be positive"));
    }
    Ok(Nanos(ns))
}

impl ObserveArgs {
    pub fn any(&self) -> bool {
        self.request_log.is_some() || self.series.timeseries.is_some()
    }

    /// The output files, for the common checks (inputs, duplicates, writable).
    pub fn outputs(&self) -> Vec<(&'static str, &Path)> {
        let mut o: Vec<(&'static str, &Path)> =
            self.request_log.as_deref().map(|p| ("--request-log", p)).into_iter().collect();
        o.extend(self.series.outputs());
        o
    }

    /// Flag combinations and the plot directory, before any work.
    pub fn check(&self, policies: &[String], outputs: &[(&str, &Path)]) -> Result<()> {
        if self.request_log.is_some() && policies.len() != 1 {
            anyhow::bail!(
                "--request-log logs the requests of one run, but {} policies are selected ({}); choose one with -p POLICY",
                policies.len(),
                policies.join(", ")
            );
        }
        self.series.check(outputs)
    }

    /// The series' length, once the workload is known: an open-loop replay
    /// spans its arrivals (scaled), and more than [`MAX_INTERVALS`]
    /// intervals is refused before simulating.
    pub fn check_span(&self, cfg: &Config, prepared: &Prepared) -> Result<()> {
        let timed = prepared.workload.timed();
        self.check_arrivals(cfg, timed.first().zip(timed.last()).map(|(f, l)| (f.arrival, l.arrival)))
    }

    /// [`ObserveArgs::check_span`] from the first and the last timed
    /// arrival (a streamed run's first pass counts them).
    pub fn check_arrivals(&self, cfg: &Config, arrivals: Option<(Nanos, Nanos)>) -> Result<()> {
        let (Some(iv), ReplayConfig::OpenLoop { time_scale }) = (self.series.timeseries, &cfg.replay) else {
            return Ok(());
        };
        let Some((first, last)) = arrivals else { return Ok(()) };
        let span = (last - first).0 as f64 * time_scale;
        let n = span / iv.0 as f64;
        if n > MAX_INTERVALS as f64 {
            anyhow::bail!(
                "--timeseries {}: the replay's arrivals span {:.3} s, {:.0} intervals, more than the {} a series \
                 may have; choose a longer interval (at least {:.3} s)",
                fmt_interval(iv),
                span / 1e9,
                n,
                MAX_INTERVALS,
                span / 1e9 / MAX_INTERVALS as f64
            );
        }
        Ok(())
    }

    /// Runs `policies` with the requested observers and writes their
    /// outputs; returns the reports (the same as a plain run's).
    pub fn run(
        &self,
        cfg: &Config,
        prepared: &Prepared,
        policies: &[String],
        opts: &RunOptions,
        jobs: Option<usize>,
        quiet: bool,
    ) -> Result<Vec<RunReport>> {
        let runs: Vec<(RunReport, Option<TimeSeries>)> = match &self.request_log {
            Some(path) => vec![self.run_logged(path, cfg, prepared, &policies[0], opts, quiet)?],
            None => super::run::run_policies_with(cfg, prepared, policies, opts, self.series.timeseries, jobs, quiet)?,
        };
        let series: Vec<(&RunReport, &TimeSeries)> =
            runs.iter().filter_map(|(r, s)| s.as_ref().map(|s| (r, s))).collect();
        self.series.write(cfg.geometry.page_size, &series)?;
        Ok(runs.into_iter().map(|(r, _)| r).collect())
    }

    /// One policy's run with its request log written as it goes (the file
    /// whole or not at all: a failed run leaves no log).
    fn run_logged(
        &self,
        path: &Path,
        cfg: &Config,
        prepared: &Prepared,
        policy: &str,
        opts: &RunOptions,
        quiet: bool,
    ) -> Result<(RunReport, Option<TimeSeries>)> {
        let total = prepared.workload.timed().len() as u64;
        let bar = Mutex::new(Progress::new(total, "simulating", quiet));
        let compression = Compression::for_path(path);
        let result = output::write_file_with(path, |file| -> Result<_> {
            let run = reqlog::with_request_log(file, compression, cfg.geometry.page_size, |sink| {
                let mut cb = |done: u64, _: u64| {
                    if let Ok(mut b) = bar.lock() {
                        b.set(done);
                    }
                };
                let observe = Observe { requests: Some(sink), series: self.series.timeseries };
                runner::run_observed(cfg, prepared, policy, opts, observe, &mut cb)
            })
            .map_err(|e| OutputError::new(path, e))?;
            run.with_context(|| format!("policy {policy}"))
        });
        if let Ok(b) = bar.lock() {
            b.finish();
        }
        result
    }
}

/// `10ms`-style text of an interval, for messages.
fn fmt_interval(iv: Nanos) -> String {
    let ns = iv.0;
    if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// The `--plot` figures ([`FIGURES`]) of every run's series, each policy a
/// set of lines; x is the middle of each interval in seconds.
fn plot_series(dir: &Path, runs: &[(&RunReport, &TimeSeries)]) -> Result<()> {
    let one = runs.len() == 1;
    let name = |r: &RunReport, what: &str| if one { what.to_string() } else { format!("{} {what}", r.policy) };
    let secs = |s: &TimeSeries, i: usize| (i as f64 + 0.5) * s.interval.as_secs_f64();
    let mut latency = Vec::new();
    let mut throughput = Vec::new();
    let mut gc = Vec::new();
    let mut waf = Vec::new();
    let mut cdf = Vec::new();
    for &(r, s) in runs {
        let iv = s.interval.as_secs_f64();
        for (what, read) in [("read", true), ("write", false)] {
            let op = |k: usize| if read { &s.intervals[k].read } else { &s.intervals[k].write };
            let done: Vec<usize> = (0..s.intervals.len()).filter(|&k| op(k).requests > 0).collect();
            if done.is_empty() {
                continue;
            }
            latency.push((
                name(r, &format!("{what} mean")),
                done.iter().map(|&k| (secs(s, k), op(k).mean_ns() / 1e3)).collect(),
            ));
            latency.push((
                name(r, &format!("{what} P99")),
                done.iter().map(|&k| (secs(s, k), op(k).p99_ns as f64 / 1e3)).collect(),
            ));
            throughput.push((
                name(r, &format!("{what} IOPS")),
                (0..s.intervals.len()).map(|k| (secs(s, k), op(k).requests as f64 / iv)).collect(),
            ));
        }
        // Pages moved are in the write amplification figure: they are
        // about a block's pages per erase, two orders above these.
        gc.push((
            name(r, "GC invocations/s"),
            s.intervals.iter().enumerate().map(|(k, i)| (secs(s, k), i.gc_invocations as f64 / iv)).collect(),
        ));
        gc.push((
            name(r, "erases/s"),
            s.intervals.iter().enumerate().map(|(k, i)| (secs(s, k), i.erases as f64 / iv)).collect(),
        ));
        let w: Vec<(f64, f64)> = s
            .intervals
            .iter()
            .enumerate()
            .filter(|(_, i)| i.written_pages > 0)
            .map(|(k, i)| (secs(s, k), i.write_amplification()))
            .collect();
        if !w.is_empty() {
            waf.push((name(r, "write amplification"), w));
        }
        for (what, h) in [("read", &r.histograms.read), ("write", &r.histograms.write)] {
            if h.count() > 0 {
                cdf.push((name(r, what), plot::cdf_points_us(h)));
            }
        }
    }
    let x = "Simulated time (s)";
    let stem = |f: &str| dir.join(f);
    if !latency.is_empty() {
        plot::lines_log_latency(
            &stem("latency-over-time"),
            "Latency over time (mean and P99 per interval)",
            x,
            &latency,
        )?;
        plot::lines(&stem("throughput-over-time"), "Requests completed per second", x, "IOPS", &throughput)?;
        plot::cdf(&stem("latency-cdf"), "Latency CDF (whole run)", &cdf)?;
    }
    plot::lines(&stem("gc-over-time"), "Garbage collection over time", x, "per second", &gc)?;
    if !waf.is_empty() {
        plot::lines(
            &stem("waf-over-time"),
            "Write amplification over time (per interval)",
            x,
            "flash programs / page written",
            &waf,
        )?;
    }
    Ok(())
}
