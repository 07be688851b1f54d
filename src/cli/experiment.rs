//! `dedupsim reproduce fad` and `dedupsim sweep ...`: thin wrappers over
//! [`dedupsim::experiment`] with one overall progress bar.

use super::common::{self, ConfigArgs, MemoryArgs};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use dedupsim::experiment::fad::FadOptions;
use dedupsim::experiment::papers::{self, PaperOptions};
use dedupsim::experiment::replica::{DedupTarget, Load, DEFAULT_UTILIZATION, QUICK_SCALE};
use dedupsim::experiment::sweep::{self, BaseSource, CellArgs, Common, Sweep};
use dedupsim::experiment::{CellRecord, Observer};
use dedupsim::workload::FileRule;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `reproduce NAME`: one subcommand per paper of [`papers::REGISTRY`],
/// built from its line (name, help text), so adding a paper adds no code
/// here. Every paper takes [`DeclaredArgs`]; FAD, whose Table II workloads
/// have their own flags, takes [`FadArgs`].
#[derive(Debug)]
pub enum ReproduceCmd {
    Fad(FadArgs),
    Paper(&'static str, DeclaredArgs),
}

/// The paper whose subcommand takes [`FadArgs`] instead of [`DeclaredArgs`].
const FAD: &str = "fad";

impl clap::FromArgMatches for ReproduceCmd {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = m.subcommand() else {
            return Err(clap::Error::raw(clap::error::ErrorKind::MissingSubcommand, "reproduce needs a paper\n"));
        };
        let Some(e) = papers::REGISTRY.iter().find(|e| e.name == name) else {
            let msg = format!("no paper `{name}`; {}\n", papers::REGISTRY.available());
            return Err(clap::Error::raw(clap::error::ErrorKind::InvalidSubcommand, msg));
        };
        Ok(if e.name == FAD {
            ReproduceCmd::Fad(FadArgs::from_arg_matches(sub)?)
        } else {
            ReproduceCmd::Paper(e.name, DeclaredArgs::from_arg_matches(sub)?)
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Subcommand for ReproduceCmd {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        papers::REGISTRY.iter().fold(cmd, |cmd, e| {
            let sub = clap::Command::new(e.name);
            let sub = if e.name == FAD { FadArgs::augment_args(sub) } else { DeclaredArgs::augment_args(sub) };
            // After the flags: their struct's doc comment is not the help.
            cmd.subcommand(sub.about(e.item.help).long_about(None))
        })
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        papers::REGISTRY.iter().any(|e| e.name == name)
    }
}

/// Options of a declared reproduction (`reproduce smartdedup`).
#[derive(Args, Debug)]
pub struct DeclaredArgs {
    /// Output directory (default: out/<name>, or out/<name>-quick with --quick).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Scaled-down workloads (scale 0.05, the quick preview).
    #[arg(long)]
    quick: bool,
    /// Workload scale in (0, 1] (overrides --quick's 0.05; default 0.2).
    #[arg(long, allow_negative_numbers = true)]
    scale: Option<f64>,
    /// Skip the PNG/SVG plots.
    #[arg(long)]
    no_plots: bool,
    /// Parallel cells (default: all cores).
    #[arg(long, short = 'j', allow_negative_numbers = true, value_parser = common::parse_unsigned::<usize>)]
    jobs: Option<usize>,
    #[command(flatten)]
    cfg: ConfigArgs,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    memory: MemoryArgs,
    /// The recorded real-content traces (`scripts/record-workloads.sh --out DIR`) as a workload
    /// family (light-dedup, reodedup, smartdedup; docs/recorded.md).
    #[arg(long, value_name = "DIR")]
    recorded: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct FadArgs {
    /// Directory holding real FAD traces (homes*, mail*/cheetah*, webvm*, mds_1*, stg_1*,
    /// web_1*, *LUN0*, *LUN1*, *LUN2*); missing ones are replaced by Table II-matched replicas.
    #[arg(long, value_name = "DIR")]
    traces: Option<PathBuf>,
    /// Output directory (default: out/fad, or out/fad-quick with --quick).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Scaled-down replicas (1/20 of Table II's I/O counts): seconds on two cores (gap
    /// decomposition off unless --gap).
    #[arg(long)]
    quick: bool,
    /// Replica scale in (0, 1] (overrides --quick's 0.05).
    #[arg(long, allow_negative_numbers = true)]
    scale: Option<f64>,
    /// Load of the replicas: `known` (each trace's own average load: Table II's I/Os over the
    /// trace's duration) or a utilization of the busiest device resource in (0, 1], e.g. 0.4.
    #[arg(long, default_value = "known", value_name = "LOAD", allow_negative_numbers = true)]
    utilization: Load,
    /// Also run the gap decomposition and the load sensitivity (at most --quick's scale; on by
    /// default without --quick).
    #[arg(long, overrides_with = "no_gap")]
    gap: bool,
    /// Skip the gap decomposition and the load sensitivity.
    #[arg(long)]
    no_gap: bool,
    /// Skip the workload families (the headline claims on workloads fitted to real and recorded
    /// profiles, and the reuse-distance sensitivity; docs/reproduce.md).
    #[arg(long)]
    no_families: bool,
    /// The recorded real-content traces (`scripts/record-workloads.sh --out DIR`): the
    /// workload families' third family.
    #[arg(long, value_name = "DIR", conflicts_with = "no_families")]
    recorded: Option<PathBuf>,
    /// What a file is: `merged` (consecutive same-op, address-contiguous records are one file, as
    /// FAD's authors' simulator preprocesses traces) or `request` (one trace request per file).
    #[arg(long, default_value = "merged", value_name = "RULE")]
    files: FileRule,
    /// What the replicas match Table II's dedup rate on: `device` (Deduplication achieves it on
    /// the device: every block seen before was deduplicated in FAD's runs) or `trace` (the
    /// replayed writes repeat content at that rate; the device forgets overwritten contents).
    #[arg(long, default_value = "device", value_name = "ON")]
    dedup_rate: DedupTarget,
    /// Only these Table II workloads (comma-separated keys, e.g. mail,mds1).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Aged start: this fraction of every plane's blocks holds stale data, so
    /// that GC (and FAD's GC hint, §III-G) runs; same as --set precondition.aged=X.
    #[arg(long, value_name = "FRACTION", allow_negative_numbers = true)]
    aged: Option<f64>,
    /// Skip the PNG/SVG plots.
    #[arg(long)]
    no_plots: bool,
    /// Parallel cells (default: all cores).
    #[arg(long, short = 'j', allow_negative_numbers = true, value_parser = common::parse_unsigned::<usize>)]
    jobs: Option<usize>,
    #[command(flatten)]
    cfg: ConfigArgs,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    memory: MemoryArgs,
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    cmd: Option<SweepCmd>,
    /// Sweep file (TOML grid: workloads x policies x parameter lists; see docs/reproduce.md).
    #[arg(required = true, value_name = "FILE.toml")]
    file: Option<PathBuf>,
    /// Output directory (default: out/<sweep name>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Do not run: write one command line per cell into FILE (for GNU parallel or a Slurm job
    /// array); each writes its cell into <out>/cells/, then run `dedupsim sweep collect <out>`.
    #[arg(long, value_name = "FILE")]
    emit_jobs: Option<PathBuf>,
    /// Parallel cells (default: all cores).
    #[arg(long, short = 'j', allow_negative_numbers = true, value_parser = common::parse_unsigned::<usize>)]
    jobs: Option<usize>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    memory: MemoryArgs,
}

#[derive(Subcommand, Debug)]
enum SweepCmd {
    /// Merge the cell files of DIR (DIR/cells/*.json) into DIR/results.csv and results.json
    /// (cells differing only in seed are merged: histograms merged, counters summed).
    Collect {
        /// Directory the cells were written to.
        dir: PathBuf,
    },
    /// Run one cell (the command lines written by --emit-jobs).
    RunCell(Box<RunCellArgs>),
}

#[derive(Args, Debug)]
struct RunCellArgs {
    /// Experiment (sweep) name.
    #[arg(long)]
    name: String,
    /// Base preset.
    #[arg(long, conflicts_with = "config")]
    preset: Option<String>,
    /// Base config file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override applied to the base document (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed (overrides the config's).
    #[arg(long, allow_negative_numbers = true, value_parser = common::parse_unsigned::<u64>)]
    seed: Option<u64>,
    /// Content model for pages without content.
    #[arg(long, default_value = "zipf:a=0.2,dedup=0.5")]
    content: dedupsim::content::ContentModel,
    /// Load of Table II replicas.
    #[arg(long, default_value_t = DEFAULT_UTILIZATION)]
    utilization: f64,
    /// What a file is: request or merged.
    #[arg(long, default_value = "request", value_name = "RULE")]
    files: FileRule,
    /// Replicas: Table II's dedup rate on the device or the trace.
    #[arg(long, default_value = "device", value_name = "ON")]
    dedup_rate: DedupTarget,
    /// Workload: NAME[@SCALE] (Table II replica), synth:SPEC or trace:PATH.
    #[arg(long)]
    workload: String,
    /// Policy.
    #[arg(long)]
    policy: String,
    /// The cell's parameter (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    param: Vec<String>,
    /// Output directory (the cell goes to <out>/cells/).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    memory: MemoryArgs,
}

fn kv(s: &str, flag: &str) -> Result<(String, String)> {
    let (k, v) = s.split_once('=').with_context(|| format!("{flag} `{s}` is not KEY=VALUE"))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

/// The command line as typed, for the report header.
fn command_line() -> String {
    let mut words = vec!["dedupsim".to_string()];
    words.extend(std::env::args().skip(1).map(|a| sweep::shell_quote(&a)));
    words.join(" ")
}

/// One overall progress bar (replayed requests of all cells) on stderr,
/// shown after a second on a terminal, never with --quiet.
struct Bar {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: Mutex<bool>,
}

impl Bar {
    fn new(quiet: bool) -> Bar {
        let enabled = !quiet && std::io::stderr().is_terminal();
        let bar = enabled.then(|| {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
            b.set_style(
                ProgressStyle::with_template("{msg:26!} [{bar:30}] {percent:>3}% (eta {eta})")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            b
        });
        Bar { bar, start: Instant::now(), shown: Mutex::new(false) }
    }

    fn show(&self) {
        if let (Some(b), Ok(mut shown)) = (&self.bar, self.shown.lock()) {
            if !*shown && self.start.elapsed() > Duration::from_secs(1) {
                b.set_draw_target(ProgressDrawTarget::stderr());
                *shown = true;
            }
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Observer for Bar {
    fn add_total(&self, requests: u64) {
        if let Some(b) = &self.bar {
            b.inc_length(requests);
        }
    }
    fn advance(&self, requests: u64) {
        if let Some(b) = &self.bar {
            b.inc(requests);
            self.show();
        }
    }
    fn cell_done(&self, r: &CellRecord, cached: bool, _secs: f64) {
        if !cached {
            if let Some(b) = &self.bar {
                b.set_message(format!("{} {}", r.workload, r.policy));
            }
        }
    }
    fn prepared(&self, label: &str, _secs: f64) {
        if let Some(b) = &self.bar {
            b.set_message(format!("prepared {label}"));
        }
    }
}

/// `reproduce NAME`: every paper of [`papers::REGISTRY`] takes the same
/// road ([`reproduce_paper`]); FAD's arm only turns its own flags into its
/// options.
pub fn reproduce(cmd: ReproduceCmd) -> Result<()> {
    match cmd {
        ReproduceCmd::Fad(a) => reproduce_fad(a),
        ReproduceCmd::Paper(name, a) => reproduce_paper(name, a, FadOptions::default()),
    }
}

/// `reproduce fad`: its flags as [`FadOptions`] and the shared ones.
fn reproduce_fad(mut a: FadArgs) -> Result<()> {
    if let Some(aged) = a.aged {
        if a.cfg.set.iter().any(|s| s.split_once('=').is_some_and(|(k, _)| k.trim() == "precondition.aged")) {
            anyhow::bail!("--aged and --set precondition.aged=... both set precondition.aged; give only one");
        }
        a.cfg.set.push(format!("precondition.aged={aged}"));
    }
    let fad = FadOptions {
        traces_dir: a.traces,
        load: a.utilization,
        gap: a.gap || (!a.quick && !a.no_gap),
        files: a.files,
        dedup_target: a.dedup_rate,
        only: a.only,
        families: (!a.no_families).then_some(if a.quick {
            dedupsim::experiment::families::Size::QUICK
        } else {
            dedupsim::experiment::families::Size::FULL
        }),
        ..FadOptions::default()
    };
    let shared = DeclaredArgs {
        out: a.out,
        quick: a.quick,
        scale: a.scale,
        no_plots: a.no_plots,
        jobs: a.jobs,
        cfg: a.cfg,
        quiet: a.quiet,
        memory: a.memory,
        recorded: a.recorded,
    };
    reproduce_paper(FAD, shared, fad)
}

/// Reproduces the paper `name` of [`papers::REGISTRY`]: its configuration
/// (its default preset unless one is given), scale and output directory,
/// its declaration, the memory check on its largest cell, the run, and a
/// summary on stderr.
fn reproduce_paper(name: &str, mut a: DeclaredArgs, fad: FadOptions) -> Result<()> {
    let paper = papers::REGISTRY
        .get(name)
        .with_context(|| format!("reproduce {name}: no such paper; papers: {}", papers::REGISTRY.available()))?;
    if let Some(preset) = paper.item.preset {
        if a.cfg.preset.is_none() && a.cfg.config.is_none() {
            a.cfg.preset = Some(preset.into());
        }
    }
    let cfg = a.cfg.load()?;
    // The engine reproductions compare their engine's own variants with a
    // CAFTL baseline; each variant sets dedup.engine itself, so another
    // engine would be ignored by the variants and replace the baseline.
    if paper.item.own_engine && cfg.dedup.engine != dedupsim::engine::DEFAULT {
        let how = if a.cfg.engine.is_some() { "--engine" } else { "dedup.engine (--set or --config)" };
        anyhow::bail!(
            "{how} {}: reproduce {name} sets the dedup engine of every variant itself (its baseline runs {}); \
             leave the engine out (its parameters: --set engine.{name}.KEY=VALUE)",
            cfg.dedup.engine,
            dedupsim::engine::DEFAULT
        );
    }
    let scale = a.scale.unwrap_or(if a.quick { QUICK_SCALE } else { paper.item.full_scale });
    if !(scale > 0.0 && scale <= 1.0) {
        anyhow::bail!("--scale {scale} must be in (0, 1]");
    }
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(if a.quick { format!("out/{name}-quick") } else { format!("out/{name}") }));
    let what = format!("reproduce {name}");
    check_out_dir(&out, &what)?;
    let opts = PaperOptions { scale, command: command_line(), plots: !a.no_plots, recorded: a.recorded.clone(), fad };
    let declared = (paper.item.declare)(&cfg, &opts)?;
    // Cells vary the engine and its tables (SmartDedup's memory budget,
    // prefix bits): the largest cell's estimate counts, as for a sweep.
    let plan = declared.declaration.plan(&cfg)?;
    if let Some(big) = plan.cells.iter().max_by_key(|c| c.config.memory_estimate().per_run(false)) {
        a.memory.check(&big.config, common::runs_at_once(a.jobs, plan.cells.len()), false)?;
    }
    begin(&out, &what)?;
    let bar = Bar::new(a.quiet);
    let result = papers::run(&declared, &cfg, &opts, &out, a.jobs.unwrap_or(0), &bar);
    bar.finish();
    let outcome = result?;
    mark_complete(&out, &what)?;
    if a.quiet {
        return Ok(());
    }
    match &declared.workloads {
        Some(workloads) => {
            let mut o = String::new();
            for w in &declared.warnings {
                let _ = writeln!(o, "warning: {w}");
            }
            let _ = writeln!(o, "{} on {workloads}", cells_summary(&outcome.exec));
            let _ = writeln!(
                o,
                "wrote {}, {}, {} and {} plot files into {}",
                out.join("REPORT.md").display(),
                out.join("results.csv").display(),
                out.join("results.json").display(),
                outcome.plots.len(),
                out.display()
            );
            eprint!("{o}");
        }
        None => eprintln!(
            "{}; {} result rows on {} workloads; wrote {} and results.csv / results.json",
            cells_summary(&outcome.exec),
            outcome.rows.len(),
            outcome.workloads.len(),
            out.join("REPORT.md").display()
        ),
    }
    Ok(())
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    match a.cmd {
        Some(SweepCmd::Collect { dir }) => {
            // Only a sweep's cells merge: a reproduction's directory holds
            // another experiment's cells.
            let owner = read_marker(&dir).map(|(o, _)| o);
            if let Some(o) = owner.as_deref().filter(|o| !o.starts_with("sweep ")) {
                anyhow::bail!(
                    "sweep collect {}: the directory holds the output of `{o}`, not of a sweep's job lines; \
                     collect the --out directory of `sweep FILE --emit-jobs`",
                    dir.display()
                );
            }
            let (n, rows) = sweep::collect(&dir)?;
            if let Some(o) = &owner {
                mark_complete(&dir, o)?;
            }
            if !a.quiet {
                eprintln!(
                    "merged {n} cells into {} rows: {} and {}",
                    rows.len(),
                    dir.join("results.csv").display(),
                    dir.join("results.json").display()
                );
                for w in sweep::identical_rows(&rows) {
                    eprintln!("warning: {w}");
                }
            }
            common::out(&rows_table(&rows))
        }
        Some(SweepCmd::RunCell(c)) => {
            let base = match (&c.preset, &c.config) {
                (Some(p), _) => BaseSource::Preset(p.clone()),
                (None, Some(f)) => BaseSource::File(f.clone()),
                (None, None) => BaseSource::Default,
            };
            let fixed = c.set.iter().map(|s| kv(s, "--set")).collect::<Result<Vec<_>>>()?;
            let params = c.param.iter().map(|s| kv(s, "--param")).collect::<Result<Vec<_>>>()?;
            let param_keys: Vec<String> = params.iter().map(|(k, _)| k.clone()).collect();
            let args = CellArgs {
                common: Common {
                    name: c.name.clone(),
                    base,
                    fixed,
                    seed: c.seed,
                    content: c.content,
                    utilization: c.utilization,
                    files: c.files,
                    dedup_target: c.dedup_rate,
                },
                workload: c.workload.clone(),
                policy: c.policy.clone(),
                params,
                out: c.out.clone(),
            };
            // The cell's device, checked like every other command's before
            // any work (a config that does not load is reported by the run
            // below, which names --param for the cell's parameters).
            if let Ok(cfg) = args.common.config().and_then(|b| dedupsim::experiment::config_with(&b, &args.params)) {
                c.memory.check(&cfg, 1, false)?;
            }
            // The library applies a cell's parameters as overrides: an
            // error about one names --param, the flag that gave it.
            let (rec, cached) = args.run(&dedupsim::experiment::Silent).map_err(|e| {
                let msg = common::error_text(&anyhow::Error::from(e));
                match param_keys.iter().find(|k| msg.starts_with(&format!("--set {k}="))) {
                    Some(_) => anyhow::anyhow!("{}", msg.replacen("--set", "--param", 1)),
                    None => anyhow::anyhow!("{msg}"),
                }
            })?;
            eprintln!(
                "{} {} {}: {} (key {})",
                rec.workload,
                rec.policy,
                rec.params_string(),
                if cached { "cached" } else { "done" },
                rec.key
            );
            Ok(())
        }
        None => {
            let file = a.file.context("a sweep file is required")?;
            let s = Sweep::load(&file)?;
            let out = a.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&s.common.name));
            let what = format!("sweep {}", s.common.name);
            check_out_dir(&out, &what)?;
            if let Some(jobs_file) = &a.emit_jobs {
                common::check_outputs(&[("sweep file", &file)], &[("--emit-jobs", jobs_file)])?;
                let plan = s.plan()?;
                let out_abs = std::path::absolute(&out).unwrap_or(out.clone());
                let program = common::self_program();
                let lines = s.job_lines(&plan, &out_abs, &program);
                begin(&out, &what)?;
                dedupsim::output::write_bytes(jobs_file, (lines.join("\n") + "\n").as_bytes())?;
                eprintln!(
                    "wrote {} job lines to {}; run them (e.g. `parallel < {}`), then `{program} sweep collect {}`",
                    lines.len(),
                    jobs_file.display(),
                    sweep::shell_quote(&jobs_file.display().to_string()),
                    sweep::shell_quote(&out_abs.display().to_string())
                );
                return Ok(());
            }
            // Cells may vary the geometry: the largest device counts.
            let plan = s.plan()?;
            if let Some(big) = plan.cells.iter().max_by_key(|c| c.config.memory_estimate().per_run(false)) {
                a.memory.check(&big.config, common::runs_at_once(a.jobs, plan.cells.len()), false)?;
            }
            begin(&out, &what)?;
            let bar = Bar::new(a.quiet);
            let result = sweep::run(&s, &out, a.jobs.unwrap_or(0), &bar);
            bar.finish();
            let (exec, rows) = result?;
            mark_complete(&out, &what)?;
            if !a.quiet {
                eprintln!(
                    "{}; {} result rows in {} and {}",
                    cells_summary(&exec),
                    rows.len(),
                    out.join("results.csv").display(),
                    out.join("results.json").display()
                );
                for w in dedupsim::experiment::declare::cell_warnings(&exec.records) {
                    eprintln!("warning: {w}");
                }
                for w in sweep::identical_rows(&rows) {
                    eprintln!("warning: {w}");
                }
            }
            common::out(&rows_table(&rows))
        }
    }
}

/// A compact table of merged rows for the terminal.
fn rows_table(rows: &[dedupsim::experiment::results::ResultRow]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<16} {:<18} {:<26} {:>6} {:>10} {:>10} {:>10} {:>8} {:>11}",
        "workload", "policy", "params", "seeds", "read(us)", "read p99", "write(us)", "DOF rd", "write vol"
    );
    for r in rows {
        let s = &r.report.summary;
        let _ = writeln!(
            o,
            "{:<16} {:<18} {:<26} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>8.4} {:>11}",
            r.workload,
            r.policy,
            dedupsim::experiment::params_string(&r.params),
            r.seeds.len(),
            s.read.mean_us,
            s.read.p99_us,
            s.write.mean_us,
            s.dof_read,
            s.write_volume_pages
        );
    }
    o
}

/// Refuses an `--out` that is a file, a dangling symbolic link, or a
/// non-empty directory that is not a previous output of dedupsim: writing
/// reports, plots and cells into someone's unrelated directory would mix
/// them with its files and overwrite same-named ones. A previous output of
/// another experiment (its [`MARKER`] names it) is refused too, and one
/// whose run did not finish is said so.
pub(super) fn check_out_dir(out: &std::path::Path, what: &str) -> Result<()> {
    if std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink()) && !out.exists() {
        anyhow::bail!(
            "--out {}: is a symbolic link to {}, which does not exist; create the directory it names or choose another",
            out.display(),
            std::fs::read_link(out).map(|t| t.display().to_string()).unwrap_or_else(|_| "?".into())
        );
    }
    if out.exists() && !out.is_dir() {
        anyhow::bail!("--out {}: is a file, not a directory; give a new or empty directory", out.display());
    }
    if let Ok(mut entries) = std::fs::read_dir(out) {
        if entries.next().is_some() {
            let ours = ["cells", "results.csv", "timing.json", MARKER].iter().any(|m| out.join(m).exists());
            if !ours {
                anyhow::bail!(
                    "--out {}: the directory is not empty and is not a previous output of dedupsim \
                     (no cells/, results.csv or timing.json); choose an empty or new directory",
                    out.display()
                );
            }
        }
    }
    if let Some((owner, complete)) = read_marker(out) {
        if owner != what {
            anyhow::bail!(
                "--out {}: holds the output of `{owner}`; writing `{what}` there would mix two experiments' \
                 results, reports and plots; choose another directory",
                out.display()
            );
        }
        if !complete {
            eprintln!(
                "warning: --out {}: the previous `{owner}` run into it did not finish (stopped or failed), so its \
                 files were not one consistent set; this run rewrites them",
                out.display()
            );
        }
    }
    Ok(())
}

/// Marks `out` as `what`'s output, incomplete until [`mark_complete`]:
/// called just before the work starts (after every check).
pub(super) fn begin(out: &std::path::Path, what: &str) -> Result<()> {
    write_marker(out, what, false)
}

/// The file that says which experiment an output directory holds and
/// whether its run finished: `output of: WHAT` and `complete: yes|no`.
const MARKER: &str = ".dedupsim-output";

fn read_marker(out: &std::path::Path) -> Option<(String, bool)> {
    let text = std::fs::read_to_string(out.join(MARKER)).ok()?;
    let field = |k: &str| text.lines().find_map(|l| l.strip_prefix(k)).map(|v| v.trim().to_string());
    Some((field("output of:")?, field("complete:").as_deref() == Some("yes")))
}

fn write_marker(out: &std::path::Path, what: &str, complete: bool) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("--out {}: creating the directory", out.display()))?;
    let text = format!("output of: {what}\ncomplete: {}\n", if complete { "yes" } else { "no" });
    dedupsim::output::write_bytes(&out.join(MARKER), text.as_bytes())?;
    Ok(())
}

/// Marks `out` as one consistent set of `what`'s outputs.
pub(super) fn mark_complete(out: &std::path::Path, what: &str) -> Result<()> {
    write_marker(out, what, true)
}

/// The one summary every reproduction and sweep ends with: how many cells,
/// how many were computed now and how many were reused from the output
/// directory's cache (a resumed or repeated run), and the wall time.
fn cells_summary(exec: &dedupsim::experiment::ExecOutcome) -> String {
    format!(
        "{} cells ({} computed, {} reused from the cell cache of --out) in {:.1} s",
        exec.records.len(),
        exec.computed,
        exec.cached,
        exec.wall_secs
    )
}
