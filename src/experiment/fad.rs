//! `dedupsim reproduce fad`: FAD's Section IV (Figs. 2-3 and 8-16) as one
//! experiment.
//!
//! Workloads are the nine Table II rows: the real trace when `--traces DIR`
//! holds it (recognized by file name and detected format), otherwise the
//! Table II-matched replica ([`super::replica`]). Per workload the plan runs
//! `native`, `dedup`, `har`, `fcrc`, the three ablations and `fad`, plus
//! `fad` at every ρ of Fig. 15 other than the configured one (0.30 by
//! default). The evaluation is a [`Declaration`] ([`declaration`]) served by
//! the generic runner and report writer of [`super::declare`]: `REPORT.md`
//! holds one table per figure, normalized as the paper does, the paper's
//! published numbers beside ours, and plots (`plots/*.svg` and `*.png`);
//! the Table II, Fig. 15, cost and gap tables are this file's custom
//! blocks.

use super::declare::{mean, num, Bars, Block, Cdfs, Declaration, Metric, Outcome, Plotter, Rows, Variant, Workload};
use super::families::{self, Member};
use super::paper::{
    self, CLAIMS, DOF, FIG15_RHO, FIG15_SPEEDUP, READ_MEAN, READ_P99, READ_P999, WRITE_MEAN, WRITE_VOLUME,
};
use super::replica::{self, ReplicaRef, TableRow, TABLE_II};
use super::workload::{WorkloadDef, WorkloadSpec};
use super::{ExecOutcome, ExperimentError, Observer, Plan};
use crate::config::Config;
use crate::policy::fad::FadParams;
use crate::report::{RunReport, VERSION};
use crate::workload::FileRule;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The end-to-end schemes (Figs. 8-9, 13-14), in the paper's order.
pub const END_TO_END: [&str; 4] = ["dedup", "har", "fcrc", "fad"];
/// Deduplication and the FAD variants, the schemes of the ablation figures
/// (Figs. 10-12).
pub const VARIANTS: [&str; 5] = ["dedup", "fad-rpo", "fad-rwpo", "fad-rwpo-rewrite", "fad"];
/// Every policy of the plan, in order.
pub const POLICIES: [&str; 8] = ["native", "dedup", "har", "fcrc", "fad-rpo", "fad-rwpo", "fad-rwpo-rewrite", "fad"];
/// The override key of FAD's ρ.
pub const RHO_KEY: &str = "policy.fad.rho";

/// Options of the reproduction.
#[derive(Clone, Debug)]
pub struct FadOptions {
    /// Directory that may hold the real traces.
    pub traces_dir: Option<PathBuf>,
    /// Replica scale (1 = Table II's I/O counts; `--quick` uses
    /// [`replica::QUICK_SCALE`]).
    pub scale: f64,
    /// Replica load: each trace's own average load (`known`, the default:
    /// issue 9 item 2) or a utilization of the busiest resource.
    pub load: replica::Load,
    /// Also run the gap decomposition and the load sensitivity
    /// ([`super::gap`], at most [`replica::QUICK_SCALE`]).
    pub gap: bool,
    /// What a file is. Default [`FileRule::Merged`]: FAD does not say, its
    /// authors' simulator merges contiguous same-op records (issue 9 item 1;
    /// no effect on replicas, which are generated as files).
    pub files: FileRule,
    /// What Table II's dedup rate is matched on (default: the device's
    /// rate under Deduplication; issue 9 item 3).
    pub dedup_target: replica::DedupTarget,
    /// Table II keys to run (empty = all nine).
    pub only: Vec<String>,
    /// The command line, printed at the top of the report.
    pub command: String,
    /// Write PNG and SVG plots.
    pub plots: bool,
    /// Also run the headline claims on the workload families
    /// ([`super::families`]) at this size (`None`: off).
    pub families: Option<families::Size>,
    /// With `families`: the recorded real-content traces (family c).
    pub recorded: Option<PathBuf>,
}

impl Default for FadOptions {
    fn default() -> Self {
        FadOptions {
            traces_dir: None,
            scale: 1.0,
            load: replica::Load::Known,
            gap: false,
            files: FileRule::Merged,
            dedup_target: replica::DedupTarget::default(),
            only: Vec::new(),
            command: "dedupsim reproduce fad".into(),
            plots: true,
            families: None,
            recorded: None,
        }
    }
}

/// The workload chosen for one Table II row.
#[derive(Clone, Debug)]
pub struct WorkloadChoice {
    pub row: &'static TableRow,
    pub def: WorkloadDef,
    /// Why a trace in `--traces` was not used, if one matched by name.
    pub note: Option<String>,
}

/// How deep [`find_trace`] looks below `--traces`: the directory itself and
/// three levels of subdirectories (enough for `shared/traces/<set>/<file>`).
const TRACE_SEARCH_DEPTH: usize = 3;

/// Every regular file below `dir` up to [`TRACE_SEARCH_DEPTH`] levels of
/// subdirectories, skipping hidden entries and unreadable subdirectories.
fn files_below(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read --traces directory {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    let mut stack: Vec<(PathBuf, usize)> = Vec::new();
    let mut visit = |entries: std::fs::ReadDir, depth: usize, stack: &mut Vec<(PathBuf, usize)>| {
        for e in entries.filter_map(Result::ok) {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let p = e.path();
            if p.is_file() {
                files.push(p);
            } else if p.is_dir() && depth < TRACE_SEARCH_DEPTH {
                stack.push((p, depth + 1));
            }
        }
    };
    visit(entries, 0, &mut stack);
    while let Some((d, depth)) = stack.pop() {
        if let Ok(entries) = std::fs::read_dir(&d) {
            visit(entries, depth, &mut stack);
        }
    }
    Ok(files)
}

/// Finds the real trace of `row` in `dir` or its subdirectories (three
/// levels down): the first file (by path) that matches the row's name
/// patterns and whose first lines are detected as the row's format (or
/// dedupsim's native format). `Err` says why nothing was used: the
/// directory cannot be read, or a name match was rejected.
pub fn find_trace(dir: &Path, row: &TableRow) -> Result<Option<PathBuf>, String> {
    find_trace_in(&files_below(dir)?, row)
}

/// [`find_trace`] over an already listed directory tree.
fn find_trace_in(files: &[PathBuf], row: &TableRow) -> Result<Option<PathBuf>, String> {
    let mut candidates: Vec<&PathBuf> =
        files.iter().filter(|p| p.file_name().is_some_and(|n| row.matches_file_name(&n.to_string_lossy()))).collect();
    candidates.sort();
    let mut rejected = Vec::new();
    for p in candidates {
        match detect_format(p) {
            Some(f) if f.starts_with(row.format) || f == "native" => return Ok(Some(p.clone())),
            Some(f) => rejected.push(format!("{} (detected {f}, expected {})", p.display(), row.format)),
            None => rejected.push(format!("{} (format not recognized)", p.display())),
        }
    }
    if rejected.is_empty() {
        Ok(None)
    } else {
        Err(format!("ignored {}", rejected.join("; ")))
    }
}

fn detect_format(p: &Path) -> Option<String> {
    use std::io::BufRead;
    let reader = crate::trace::open(p).ok()?;
    let lines: Vec<String> = reader.lines().take(crate::trace::DETECT_LINES).map_while(Result::ok).collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
    crate::trace::detect(&refs, name.as_deref()).map(|f| f.to_string())
}

/// FAD's ρ in `cfg` (`[policy.fad] rho`, default 0.30).
pub fn base_rho(cfg: &Config) -> Result<f64, ExperimentError> {
    crate::policy::params_in::<FadParams>(&cfg.policy, "fad")
        .map(|p| p.rho)
        .map_err(|e| ExperimentError::Policy { policy: "fad".into(), reason: e.to_string() })
}

/// Formats ρ as an override value.
fn rho_value(rho: f64) -> String {
    format!("{rho}")
}

/// The variant label of `fad` at ρ (the configured ρ is plain `fad`).
fn rho_label(rho: f64, rho0: f64) -> String {
    if (rho - rho0).abs() < 1e-9 {
        "fad".into()
    } else {
        format!("fad@rho={}", rho_value(rho))
    }
}

/// Chooses the workloads (the real trace or the replica of each Table II
/// row).
fn choose(base: &Config, opts: &FadOptions) -> Result<Vec<WorkloadChoice>, ExperimentError> {
    let only = opts
        .only
        .iter()
        .map(|k| {
            replica::row(k).map(|r| r.key).ok_or_else(|| ExperimentError::Workload {
                workload: k.clone(),
                reason: format!("--only: not a Table II workload; available: {}", replica::names().join(", ")),
            })
        })
        .collect::<Result<Vec<&str>, _>>()?;
    // The --traces tree is listed once for all rows.
    let listing = match &opts.traces_dir {
        Some(dir) if !dir.is_dir() => {
            return Err(ExperimentError::Workload {
                workload: dir.display().to_string(),
                reason: "--traces is not a directory".into(),
            })
        }
        Some(dir) => Some(files_below(dir)),
        None => None,
    };
    let mut choices = Vec::new();
    for row in TABLE_II.iter() {
        if !only.is_empty() && !only.contains(&row.key) {
            continue;
        }
        let found = match &listing {
            Some(files) => files.as_ref().map_err(String::clone).and_then(|f| find_trace_in(f, row)),
            None => Ok(None),
        };
        let (found, note) = match found {
            Ok(p) => (p, None),
            Err(e) => (None, Some(e)),
        };
        let mut def = match found {
            Some(p) => WorkloadDef::new(WorkloadSpec::Trace(p)),
            None => WorkloadDef::new(WorkloadSpec::Replica(ReplicaRef { row, scale: opts.scale })),
        };
        def.label = row.key.to_string();
        def.device = replica::ReplicaDevice::of(base);
        def.utilization = opts.load.for_row(row, &def.device);
        def.files = opts.files;
        def.dedup_target = opts.dedup_target;
        choices.push(WorkloadChoice { row, def, note });
    }
    Ok(choices)
}

/// The reproduction as a [`Declaration`], and the workload chosen for each
/// Table II row.
pub fn declaration(base: &Config, opts: &FadOptions) -> Result<(Declaration, Vec<WorkloadChoice>), ExperimentError> {
    let choices = choose(base, opts)?;
    let rho0 = base_rho(base)?;
    let mut variants: Vec<Variant> = POLICIES.iter().map(|p| Variant::new(*p, p, &[]).named(display(p))).collect();
    for rho in FIG15_RHO {
        if (rho - rho0).abs() > 1e-9 {
            variants.push(Variant::new(rho_label(rho, rho0), "fad", &[(RHO_KEY, rho_value(rho))]));
        }
    }
    let mut workloads = Vec::new();
    for c in &choices {
        workloads.push(Workload { name: c.row.name.to_string(), ..Workload::new(c.def.clone(), variants.clone()) });
        if opts.gap && matches!(c.def.spec, WorkloadSpec::Replica(_)) {
            workloads.extend(super::gap::workloads(base, c.row, opts.scale));
        }
    }
    let fam = match opts.families {
        Some(size) => {
            let mut m = families::fitted(size)?;
            if let Some(dir) = &opts.recorded {
                m.extend(families::recorded(dir)?);
            }
            let p = crate::profile::Profile::load_named(Path::new(SWEEP_PROFILE), &[])
                .map_err(|e| ExperimentError::Workload { workload: SWEEP_PROFILE.into(), reason: e.to_string() })?;
            let sweep = families::sweep(SWEEP_PROFILE, size.scale_of(&p), SWEEP_KEY, &SWEEP_REUSE);
            workloads.extend(families::workloads(&m, &FAMILY_POLICIES));
            workloads.extend(families::workloads(&sweep, &FAMILY_POLICIES));
            Some((m, sweep))
        }
        None => None,
    };
    let mut identity = serde_json::Map::new();
    identity.insert("config_hash".into(), base.config_hash_hex().into());
    identity.insert("seed".into(), base.seed.into());
    identity.insert("command".into(), opts.command.clone().into());
    // Plot titles must fit the figure: a shorter stamp (8 hex digits of the hash).
    let mut short_stamp = format!("dedupsim {VERSION}, cfg {}, seed {}", &base.config_hash_hex()[..8], base.seed);
    if base.experiment.fad_ssdsim_model {
        short_stamp.push_str("; AUTHORS' FAD-SSDsim MODEL");
    }
    let replicas = choices.iter().filter(|c| matches!(c.def.spec, WorkloadSpec::Replica(_))).count();
    let short_kind = match (replicas, choices.len() - replicas) {
        (_, 0) => "Table II replicas",
        (0, _) => "traces",
        _ => "replicas and traces",
    };
    let decl = Declaration {
        rows: Rows::PerCell,
        identity,
        plot_suffix: format!("{short_kind}; {short_stamp}"),
        names: TABLE_II.iter().map(|r| (r.key.to_string(), r.name.to_string())).collect(),
        ..Declaration::new(
            "fad",
            "FAD Section IV reproduced with dedupsim",
            "Lin et al., FAD, Section IV",
            workloads,
            report(base, opts, &choices, rho0, fam),
        )
    };
    Ok((decl, choices))
}

/// Chooses the workloads and builds the plan.
pub fn plan(base: &Config, opts: &FadOptions) -> Result<(Plan, Vec<WorkloadChoice>), ExperimentError> {
    let (decl, choices) = declaration(base, opts)?;
    Ok((decl.plan(base)?, choices))
}

/// What [`run`] produced.
#[derive(Debug)]
pub struct FadOutcome {
    pub exec: ExecOutcome,
    pub choices: Vec<WorkloadChoice>,
    pub report_path: PathBuf,
    /// Plot files written (SVG and PNG).
    pub plots: Vec<PathBuf>,
}

/// Plans, runs (resuming from `out/cells`), and writes `results.csv`,
/// `results.json`, `REPORT.md`, plots and `timing.json` into `out`: the
/// road of every paper ([`super::papers`]), for callers holding
/// [`FadOptions`].
pub fn run(
    base: &Config,
    opts: &FadOptions,
    out: &Path,
    jobs: usize,
    obs: &dyn Observer,
) -> Result<FadOutcome, ExperimentError> {
    let p = super::papers::PaperOptions {
        scale: opts.scale,
        command: opts.command.clone(),
        plots: opts.plots,
        recorded: opts.recorded.clone(),
        fad: opts.clone(),
    };
    let declared = super::papers::declare_fad(base, &p)?;
    let o = super::papers::run(&declared, base, &p, out, jobs, obs)?;
    Ok(FadOutcome { exec: o.exec, choices: declared.choices, report_path: out.join("REPORT.md"), plots: o.plots })
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

/// Display name of a policy, as in the paper.
pub fn display(policy: &str) -> &str {
    match policy {
        "native" => "Native",
        "dedup" => "Deduplication",
        "har" => "HAR",
        "fcrc" => "FCRC",
        "fad" => "FAD",
        "fad-rpo" => "FAD-RPO",
        "fad-rwpo" => "FAD-RWPO",
        "fad-rwpo-rewrite" => "FAD-RWPO-Rewrite",
        other => other,
    }
}

/// Mean latency over all requests (reads and writes, by count): the
/// quantity Fig. 15's speedup is computed from.
fn overall_mean_us(r: &RunReport) -> f64 {
    let (rd, wr) = (&r.summary.read, &r.summary.write);
    let n = rd.count + wr.count;
    if n == 0 {
        0.0
    } else {
        (rd.mean_us * rd.count as f64 + wr.mean_us * wr.count as f64) / n as f64
    }
}

/// A normalized figure with the paper's claims of that figure beside ours.
#[allow(clippy::too_many_arguments)]
fn bars(
    number: &'static str,
    stem: &'static str,
    plot_title: &'static str,
    title: &str,
    y_label: &'static str,
    metric: Metric,
    subjects: &[&'static str],
    reference: &'static str,
    unit: &'static str,
) -> Block {
    let digits = if metric == DOF {
        4
    } else if metric == WRITE_VOLUME {
        0
    } else {
        1
    };
    Block::Bars(Bars {
        number,
        stem,
        plot_title,
        title: title.into(),
        y_label,
        metric,
        subjects: subjects.to_vec(),
        reference,
        unit,
        digits,
        description: None,
        claims: CLAIMS.to_vec(),
    })
}

/// REPORT.md's blocks.
fn report(
    base: &Config,
    opts: &FadOptions,
    choices: &[WorkloadChoice],
    rho0: f64,
    fam: Option<(Vec<Member>, Vec<Member>)>,
) -> Vec<Block> {
    let text = |s: &str| Block::Text(s.to_string());
    let mut r = vec![header(base, opts, choices, rho0), table_ii(opts, choices)];
    r.push(text("## Motivation (§II-C)\n\n"));
    r.push(bars(
        "Fig. 2",
        "fig02_dof",
        "DOF",
        "Normalized fragmentation level (DOF), Native vs Deduplication",
        "DOF (normalized to Native)",
        DOF,
        &["dedup"],
        "native",
        "DOF",
    ));
    r.push(bars(
        "Fig. 3",
        "fig03_read_latency",
        "Avg. read latency",
        "Normalized average read latency, Native vs Deduplication",
        "Read latency (normalized to Native)",
        READ_MEAN,
        &["dedup"],
        "native",
        "µs",
    ));
    r.push(text("## End-to-end (§IV-B)\n\n"));
    r.push(bars(
        "Fig. 8",
        "fig08_read_latency",
        "Avg. read latency",
        "Normalized average read latency",
        "Read latency (normalized to Dedup.)",
        READ_MEAN,
        &END_TO_END,
        "dedup",
        "µs",
    ));
    r.push(bars(
        "Fig. 9",
        "fig09_write_latency",
        "Avg. write latency",
        "Normalized average write latency",
        "Write latency (normalized to Dedup.)",
        WRITE_MEAN,
        &END_TO_END,
        "dedup",
        "µs",
    ));
    r.push(text("## Ablation (§IV-B)\n\n"));
    r.push(bars(
        "Fig. 10",
        "fig10_dof_variants",
        "DOF of FAD variants",
        "Normalized DOF for FAD variants",
        "DOF (normalized to Dedup.)",
        DOF,
        &VARIANTS,
        "dedup",
        "DOF",
    ));
    r.push(bars(
        "Fig. 11",
        "fig11_read_latency_variants",
        "Read latency of FAD variants",
        "Normalized read latency for FAD variants",
        "Read latency (normalized to Dedup.)",
        READ_MEAN,
        &VARIANTS,
        "dedup",
        "µs",
    ));
    r.push(bars(
        "Fig. 12",
        "fig12_write_latency_variants",
        "Write latency of FAD variants",
        "Normalized write latency for FAD variants",
        "Write latency (normalized to Dedup.)",
        WRITE_MEAN,
        &VARIANTS,
        "dedup",
        "µs",
    ));
    r.push(text("## Tail latency (§IV-C)\n\n"));
    r.push(bars(
        "Fig. 13",
        "fig13_p99_read",
        "P99 read latency",
        "P99 read tail latency",
        "P99 read latency (normalized to Dedup.)",
        READ_P99,
        &END_TO_END,
        "dedup",
        "µs",
    ));
    r.push(bars(
        "Fig. 14",
        "fig14_p999_read",
        "P99.9 read latency",
        "P99.9 read tail latency",
        "P99.9 read latency (normalized to Dedup.)",
        READ_P999,
        &END_TO_END,
        "dedup",
        "µs",
    ));
    r.push(text("## Sensitivity (§IV-D)\n\n"));
    r.push(fig15(rho0, opts.plots));
    r.push(text("## Cost (§IV-E)\n\n"));
    let mut f16 = bars(
        "Fig. 16",
        "fig16_write_volume",
        "Write volume",
        "Normalized write volume",
        "Write volume (normalized to Dedup.)",
        WRITE_VOLUME,
        &["dedup", "fcrc", "fad"],
        "dedup",
        "pages",
    );
    if let Block::Bars(b) = &mut f16 {
        b.description = Some(
            "Host pages programmed (unique + rewritten; GC migrations excluded) normalized to Deduplication (first \
             numeric column: Deduplication's pages).",
        );
    }
    r.push(f16);
    r.push(cost());
    r.push(text("\n## Read latency distributions\n\n"));
    r.push(text(if opts.plots {
        "Read latency CDFs per workload (from the full HDR histograms in `cells/*.json`) for Native, Deduplication, \
         HAR, FCRC and FAD.\n\n"
    } else {
        "Plots were not written (`--no-plots`); the full HDR histograms are in `cells/*.json`.\n\n"
    }));
    r.push(Block::Cdfs(Cdfs { prefix: "cdf_read_", variants: vec!["native", "dedup", "har", "fcrc", "fad"] }));
    if opts.gap {
        r.push(gap(opts, choices));
    }
    if let Some((members, sweep)) = fam {
        let rows = choices.iter().map(|c| c.row).collect();
        r.push(families_block(members, sweep, rows, opts.plots));
    }
    r.push(text("## Summary: the paper's numbers beside ours\n\n"));
    r.push(Block::Summary(CLAIMS.to_vec()));
    r.push(Block::Custom(Box::new(move |o: &Outcome, _: &mut Plotter| {
        let avg15: Vec<String> = fig15_averages(o, rho0, false).iter().map(|a| num(*a, 1)).collect();
        Ok(format!(
            "| Fig. 15 | FAD speedup over Deduplication at ρ = 5..35% | mean | {} | {} |\n\n",
            FIG15_SPEEDUP.map(|x| format!("{x:.1}")).join(" / "),
            avg15.join(" / ")
        ))
    })));
    r
}

/// The run's setting: command, version, config, workloads, files,
/// policies, cells.
fn header(base: &Config, opts: &FadOptions, choices: &[WorkloadChoice], rho0: f64) -> Block {
    let mut o = String::new();
    let _ = writeln!(o, "# FAD Section IV reproduced with dedupsim\n");
    if let Some(label) = base.experiment_label() {
        let _ = writeln!(
            o,
            "> **{label}.** These numbers show what the authors' simulator's model does, not what a \
             deduplicating SSD does. See `docs/reproduce.md`, \"The authors' public dedup model (labelled experiment)\".\n"
        );
    }
    let _ = writeln!(o, "Produced by:\n\n```\n{}\n```\n", opts.command);
    let _ = writeln!(
        o,
        "* dedupsim **{VERSION}**, config `{}` (hash `{}`; each run's effective config hash, without the parameter \
         tables of other policies, is in `results.csv`), seed **{}**",
        base.name,
        base.config_hash_hex(),
        base.seed
    );
    let replicas = choices.iter().filter(|c| matches!(c.def.spec, WorkloadSpec::Replica(_))).count();
    let traces = choices.len() - replicas;
    let kind = match (replicas, traces) {
        (_, 0) => "synthetic (Table II-matched) replicas".to_string(),
        (0, _) => "real traces".to_string(),
        (r, t) => {
            format!("{r} synthetic (Table II-matched) replicas and {t} real traces (the Source column says which)")
        }
    };
    let scale_note = if opts.scale == 1.0 {
        "full size (Table II I/O counts)".to_string()
    } else {
        format!("scale {} of Table II's I/O counts and footprints", opts.scale)
    };
    if replicas > 0 {
        let load = match opts.load {
            replica::Load::Known => "each trace's own average load (Table II's I/Os over the trace's duration: FIU 3 weeks, MSR 1 week, VDI 1 hour), busiest resource 0.002-7.0% utilized (per row in the replica parameters below)".to_string(),
            replica::Load::Utilization(u) => format!("busiest resource {:.0}% utilized", u * 100.0),
        };
        let _ = writeln!(o, "* Workloads: {kind}; replicas at {scale_note}, load: {load}");
    } else {
        let _ = writeln!(o, "* Workloads: {kind}");
    }
    let _ = writeln!(
        o,
        "* Files: `{}` ({})",
        opts.files.name(),
        match opts.files {
            FileRule::Merged => "consecutive same-op, address-contiguous records are one file, as FAD's authors' simulator preprocesses traces; replicas are generated as files, so this changes real traces only",
            FileRule::Request => "one trace request is one file",
        }
    );
    let _ = writeln!(
        o,
        "* Policies: {}; Fig. 15 sweeps ρ over {} (default ρ = {rho0})",
        POLICIES.map(display).join(", "),
        FIG15_RHO.map(|r| format!("{:.0}%", r * 100.0)).join(", ")
    );
    Block::Custom(Box::new(move |out: &Outcome, _: &mut Plotter| {
        let mut o = o.clone();
        let _ = writeln!(
            o,
            "* {} cells (`cells/*.json`, full HDR histograms); all rows in `results.csv` / `results.json`",
            out.exec.records.len()
        );
        let _ = writeln!(
            o,
            "* Averages are arithmetic means over workloads of per-workload normalized values; \"Ours − paper\" is in percentage points. \
             Differences from the paper are expected: the replicas match Table II's statistics, not the traces themselves, and the \
             simulator is dedupsim, not the authors' SSDsim. See `docs/reproduce.md`.\n"
        );
        Ok(o)
    }))
}

/// Table II, the paper's statistics beside the replayed workloads'.
fn table_ii(opts: &FadOptions, choices: &[WorkloadChoice]) -> Block {
    let choices = choices.to_vec();
    let target = opts.dedup_target.name();
    Block::Custom(Box::new(move |out: &Outcome, _: &mut Plotter| {
        let mut o = String::new();
        let _ = writeln!(o, "## Workloads (Table II)\n");
        let _ = writeln!(
            o,
            "Paper / ours. Ours are measured on the replayed requests (`dedupsim trace stats` on the same workload). \
             Two dedup rates (issue 9 item 3): *trace* is the share of replayed written pages whose content occurred \
             before in the workload (Table II's definition: a block whose MD5 was seen before); *device* is what \
             Deduplication achieved on the simulated device, whose fingerprint index forgets a content when its last \
             reference is overwritten. Replicas match Table II on the {target} (`--dedup-rate`).\n"
        );
        let _ = writeln!(
            o,
            "| Workload | Source | Read ratio | Avg. read (KiB) | Total I/Os (K) | Avg. req. (KiB) | Dedup. rate (trace) | Dedup. rate (device) | Avg. write (KiB) | Touched (GiB) | Duration (s) | Precond. pages |"
        );
        let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for c in &choices {
            let r = c.row;
            let s = out.exec.records.iter().find(|x| x.workload == r.key).map(|x| &x.workload_summary);
            let f = |paper: String, ours: Option<String>| format!("{paper} / {}", ours.unwrap_or_else(|| "n/a".into()));
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.name,
                c.def.source(),
                f(format!("{:.1}%", r.read_ratio * 100.0), s.map(|s| format!("{:.1}%", s.read_ratio * 100.0))),
                f(format!("{:.1}", r.avg_read_kb), s.map(|s| format!("{:.1}", s.avg_read_kib))),
                f(format!("{:.0}", r.total_ios_k), s.map(|s| format!("{:.1}", s.requests as f64 / 1000.0))),
                f(format!("{:.1}", r.avg_req_kb), s.map(|s| format!("{:.1}", s.avg_request_kib))),
                f(format!("{:.1}%", r.dedup_rate * 100.0), s.map(|s| format!("{:.1}%", s.dedup_rate * 100.0))),
                f(
                    format!("{:.1}%", r.dedup_rate * 100.0),
                    out.report(r.key, "dedup").map(|x| format!("{:.1}%", x.summary.dedup_rate_achieved * 100.0))
                ),
                f(format!("{:.1}", r.avg_write_kb()), s.map(|s| format!("{:.1}", s.avg_write_kib))),
                num(s.map(|s| s.footprint_gib), 2),
                num(s.map(|s| s.duration_s), 1),
                s.map(|s| s.precondition_pages.to_string()).unwrap_or_else(|| "n/a".into()),
            );
        }
        let notes: Vec<String> = choices
            .iter()
            .filter_map(|c| c.note.as_ref().map(|n| format!("* {}: {n}; the replica was used instead.", c.row.name)))
            .collect();
        if !notes.is_empty() {
            let _ = writeln!(o, "\n{}", notes.join("\n"));
        }
        let specs: Vec<String> = choices
            .iter()
            .filter_map(|c| c.def.replica_spec().map(|s| format!("* {}: {}", c.row.name, s.describe())))
            .collect();
        if !specs.is_empty() {
            let _ = writeln!(o, "\nReplica parameters (see `src/experiment/replica.rs`):\n\n{}", specs.join("\n"));
        }
        o.push('\n');
        Ok(o)
    }))
}

/// Fig. 15's speedup of FAD over Deduplication on workload `w` at ρ, in
/// percent: of the mean latency of all requests, or of reads only.
fn speedup(o: &Outcome, w: &str, rho: f64, rho0: f64, read_only: bool) -> Option<f64> {
    let (dd, ff) = (o.report(w, "dedup")?, o.report(w, &rho_label(rho, rho0))?);
    let (a, b) = if read_only {
        (dd.summary.read.mean_us, ff.summary.read.mean_us)
    } else {
        (overall_mean_us(dd), overall_mean_us(ff))
    };
    (b > 0.0).then(|| (a / b - 1.0) * 100.0)
}

/// Fig. 15's average speedup over the workloads, per ρ.
fn fig15_averages(o: &Outcome, rho0: f64, read_only: bool) -> Vec<Option<f64>> {
    FIG15_RHO
        .iter()
        .map(|rho| {
            let v: Vec<f64> = o.workloads.iter().filter_map(|w| speedup(o, w, *rho, rho0, read_only)).collect();
            mean(&v)
        })
        .collect()
}

/// Fig. 15: tables (all requests; reads only) and two plots.
fn fig15(rho0: f64, plots: bool) -> Block {
    Block::Custom(Box::new(move |d: &Outcome, plotter: &mut Plotter| {
        let mut o = String::new();
        let _ = writeln!(o, "### Fig. 15: Speedup of FAD over Deduplication versus the rewrite threshold ρ\n");
        let _ = writeln!(
            o,
            "Speedup = mean latency of all requests (reads and writes) under Deduplication / under FAD − 1; the paper does not \
             define its speedup, and this reading is the one consistent with its 20.8% at ρ = 30% next to a 34.1% read-latency \
             reduction. The read-only speedup is given below it.\n"
        );
        let mut lines_series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        let header = |o: &mut String| {
            let _ = write!(o, "| Workload |");
            for r in FIG15_RHO {
                let _ = write!(o, " ρ={:.0}% |", r * 100.0);
            }
            o.push_str("\n|---|");
            for _ in FIG15_RHO {
                o.push_str("---:|");
            }
            o.push('\n');
        };
        for read_only in [false, true] {
            if read_only {
                let _ =
                    writeln!(o, "\nRead-latency speedup (mean read latency under Deduplication / under FAD − 1), %:\n");
            }
            header(&mut o);
            for w in &d.workloads {
                let _ = write!(o, "| {} |", d.name(w));
                let mut pts = Vec::new();
                for rho in FIG15_RHO {
                    let s = speedup(d, w, rho, rho0, read_only);
                    if let Some(v) = s {
                        pts.push((rho * 100.0, v));
                    }
                    let _ = write!(o, " {} |", num(s, 1));
                }
                o.push('\n');
                if !read_only && !pts.is_empty() {
                    lines_series.push((d.name(w).to_string(), pts));
                }
            }
            let _ = write!(o, "| **Average** |");
            for a in fig15_averages(d, rho0, read_only) {
                let _ = write!(o, " **{}** |", num(a, 1));
            }
            o.push('\n');
            if !read_only {
                let _ = write!(o, "| *Paper (average)* |");
                for p in FIG15_SPEEDUP {
                    let _ = write!(o, " *{p:.1}* |");
                }
                o.push('\n');
            }
        }
        let avg_overall = fig15_averages(d, rho0, false);
        let avg_read = fig15_averages(d, rho0, true);
        let points = |avgs: &[Option<f64>]| -> Vec<(f64, f64)> {
            FIG15_RHO.iter().zip(avgs).filter_map(|(r, a)| a.map(|a| (r * 100.0, a))).collect()
        };
        // Two figures, so no two series share a colour: the averages against the
        // paper's, and the nine workloads.
        let mut avg_series: Vec<(String, Vec<(f64, f64)>)> = vec![(
            "Paper (average)".into(),
            FIG15_RHO.iter().zip(FIG15_SPEEDUP).map(|(r, s)| (r * 100.0, s)).collect(),
        )];
        for (name, avgs) in [("Ours (average)", &avg_overall), ("Ours (average, reads only)", &avg_read)] {
            let pts = points(avgs);
            if !pts.is_empty() {
                avg_series.push((name.into(), pts));
            }
        }
        if plots {
            for (stem, title, series) in [
                ("fig15_speedup_vs_rho", "Fig. 15 (average)", &avg_series),
                ("fig15_speedup_vs_rho_workloads", "Fig. 15 per workload", &lines_series),
            ] {
                if series.is_empty() {
                    continue;
                }
                plotter.lines(stem, title, "Rewrite threshold ρ (%)", "FAD speedup over Dedup. (%)", series)?;
                let _ = writeln!(o, "\n![Fig. 15](plots/{stem}.svg)\n");
            }
        }
        if let Some(best) =
            avg_overall.iter().enumerate().filter_map(|(i, a)| a.map(|a| (i, a))).max_by(|a, b| a.1.total_cmp(&b.1))
        {
            let _ = writeln!(
                o,
                "Our best average speedup is at ρ = {:.0}% ({:.1}%); the paper's is at ρ = 30% (20.8%).\n",
                FIG15_RHO[best.0] * 100.0,
                best.1
            );
        }
        Ok(o)
    }))
}

/// §IV-E: FAD's metadata and rewrite activity.
fn cost() -> Block {
    Block::Custom(Box::new(|d: &Outcome, _: &mut Plotter| {
        let mut o = String::new();
        let _ = writeln!(o, "\n### FAD metadata and rewrite activity\n");
        let _ = writeln!(
            o,
            "RDLT: one temporary array of N_chip + 1 4-byte counters per file write (paper: ≈ {} B on 16 chips). WSTL: 12 B per \
             node (paper: {} B); high-water mark of the list. Rewrites as a share of written pages; the bound is ρ plus GC effects.\n",
            paper::RDLT_BYTES,
            paper::WSTL_NODE_BYTES
        );
        let _ = writeln!(
            o,
            "| Workload | RDLT (B) | WSTL high water (entries) | WSTL (B) | NUDF files | Rewrites / written pages | FAD − Dedup. write volume / written pages | GC invocations (Native / Dedup. / FCRC / FAD) |"
        );
        let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---|");
        for w in &d.workloads {
            let fad = d.report(w, "fad");
            let dd = d.report(w, "dedup");
            let st = |k: &str| fad.and_then(|r| r.policy_stats.get(k).copied());
            let written = fad.map(|r| r.counters.write_pages as f64).unwrap_or(0.0);
            let nudf = match (st("nudf"), st("files")) {
                (Some(n), Some(f)) if f > 0.0 => format!("{:.1}%", n / f * 100.0),
                _ => "n/a".into(),
            };
            let rew = fad.filter(|_| written > 0.0).map(|r| r.summary.rewrites as f64 / written * 100.0);
            let extra = match (fad, dd) {
                (Some(f), Some(x)) if written > 0.0 => {
                    Some((f.summary.write_volume_pages as f64 - x.summary.write_volume_pages as f64) / written * 100.0)
                }
                _ => None,
            };
            let gc: Vec<String> = ["native", "dedup", "fcrc", "fad"]
                .iter()
                .map(|p| d.report(w, p).map(|r| r.summary.gc_invocations.to_string()).unwrap_or_else(|| "n/a".into()))
                .collect();
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                d.name(w),
                num(st("rdlt_bytes"), 0),
                num(st("wstl_high_water"), 0),
                num(st("wstl_bytes_high_water"), 0),
                nudf,
                rew.map(|x| format!("{x:.2}%")).unwrap_or_else(|| "n/a".into()),
                extra.map(|x| format!("{x:+.2}%")).unwrap_or_else(|| "n/a".into()),
                gc.join(" / ")
            );
        }
        Ok(o)
    }))
}

/// The gap to the paper, decomposed (issue 9 items 2 and 9).
fn gap(opts: &FadOptions, choices: &[WorkloadChoice]) -> Block {
    let rows: Vec<&'static TableRow> =
        choices.iter().filter(|c| matches!(c.def.spec, WorkloadSpec::Replica(_))).map(|c| c.row).collect();
    let scale = opts.scale;
    Block::Custom(Box::new(move |d: &Outcome, plotter: &mut Plotter| {
        let mut o = String::new();
        let effects = super::gap::effects(&d.exec.records, &rows);
        let paper = (
            claim_percent("Deduplication vs Native, avg read latency"),
            claim_percent("FAD vs Deduplication, avg read latency"),
        );
        let _ = writeln!(o, "## The gap to the paper, decomposed\n");
        o.push_str(&super::gap::section(&effects, super::gap::scale(scale), paper));
        let (cats, series) = super::gap::bars(&effects, paper);
        if cats.len() > 1 {
            plotter.bars(
                "gap_decomposition",
                "Read latency per factor (authors' model omitted)",
                "mean read latency ratio",
                &cats,
                &series,
            )?;
            let _ = writeln!(o, "![gap](plots/gap_decomposition.png)\n");
        }
        let lines = super::gap::load_lines(&effects);
        if lines.iter().all(|(_, p)| p.len() >= 2) {
            plotter.lines(
                "load_sensitivity",
                "Effects vs load",
                "utilization of the busiest resource (%)",
                "change (%)",
                &lines,
            )?;
            let _ = writeln!(
                o,
                "Load sensitivity (baseline settings at 5%, 10%, 20% and 40% load): ![load](plots/load_sensitivity.png)\n"
            );
        }
        Ok(o)
    }))
}

/// The policies of the family cells.
const FAMILY_POLICIES: [&str; 3] = ["native", "dedup", "fad"];
/// The sensitivity sweep: FAD's read gain against the duplicate reuse
/// distance (the locality statistic that decides where a duplicate's copy
/// lies), on the profile of the recorded image store (the recorded
/// workload on which deduplication fragments reads, docs/recorded.md).
const SWEEP_PROFILE: &str = "recorded-vmimages";
const SWEEP_KEY: &str = "duplicates.reuse_distance_pages.mean";
const SWEEP_REUSE: [f64; 5] = [500.0, 2_000.0, 8_000.0, 18_000.0, 36_000.0];

/// "Workload families" (issue 24 item 5): the headline claims (Fig. 3 and
/// Fig. 8-9's Dedup vs Native and FAD vs Dedup) on the replicas, on
/// workloads fitted to real profiles and on the recorded workloads, and
/// their sensitivity to the duplicate reuse distance.
fn families_block(members: Vec<Member>, sweep: Vec<Member>, rows: Vec<&'static TableRow>, plots: bool) -> Block {
    Block::Custom(Box::new(move |o: &Outcome, plotter: &mut Plotter| {
        let idx = families::index(&o.exec.records);
        let pct = |x: Option<f64>| x.map(|x| format!("{:+.1}%", x * 100.0)).unwrap_or_else(|| "n/a".into());
        let paper = (
            claim_percent("Deduplication vs Native, avg read latency"),
            claim_percent("FAD vs Deduplication, avg read latency"),
            claim_percent("FAD vs Deduplication, avg write latency"),
        );
        let mut s = String::new();
        let _ = writeln!(
            s,
            "## Workload families (issue 24 item 5)\n\nThe headline claims on (a) the Table II replicas above, (b) \
             workloads fitted to the committed profiles of real traces and of the recorded real-content workloads \
             (`profile:NAME`, docs/profiles.md), (c) the recorded workloads themselves when `--recorded DIR` \
             names their traces (`scripts/record-workloads.sh`, docs/recorded.md; replayed on an empty device). \
             (b) and (c) were fitted to nothing the paper claims. Changes are of mean latencies; \"n/a\": no \
             reads (the FIU homes and web-vm samples and the Plan 9 blocks are write-only).\n"
        );
        let _ = writeln!(
            s,
            "| family | workload | requests | read share | dedup rate | Dedup vs Native read | FAD vs Dedup read | \
             FAD vs Dedup write | read DOF Native / Dedup / FAD |\n|---|---|---:|---:|---:|---:|---:|---:|---|"
        );
        let _ = writeln!(
            s,
            "| paper | FAD §II-C, §IV-B | | | | {:+.1}% | {:+.1}% | {:+.1}% | |",
            paper.0, paper.1, paper.2
        );
        // (a): means of the per-workload changes over the replicas.
        let mut acc = [(0.0, 0usize); 3];
        for row in &rows {
            let get = |p: &str| idx.get(&(row.key.to_string(), p.to_string(), String::new()));
            if let (Some(n), Some(d), Some(f)) = (get("native"), get("dedup"), get("fad")) {
                for (i, c) in [
                    families::change(d.read_mean_us, n.read_mean_us),
                    families::change(f.read_mean_us, d.read_mean_us),
                    families::change(f.write_mean_us, d.write_mean_us),
                ]
                .into_iter()
                .enumerate()
                {
                    if let Some(c) = c {
                        acc[i].0 += c;
                        acc[i].1 += 1;
                    }
                }
            }
        }
        let mean = |(sum, n): (f64, usize)| (n > 0).then(|| sum / n as f64);
        let _ = writeln!(
            s,
            "| replicas | mean of {} Table II replicas | | | | {} | {} | {} | |",
            rows.len(),
            pct(mean(acc[0])),
            pct(mean(acc[1])),
            pct(mean(acc[2]))
        );
        let mut holds = Vec::new();
        for m in &members {
            let (Some(n), Some(d), Some(f)) =
                (families::get(&idx, m, "native"), families::get(&idx, m, "dedup"), families::get(&idx, m, "fad"))
            else {
                let _ = writeln!(s, "| {} | {} | not run | | | | | | |", m.family, m.label());
                continue;
            };
            let dn = families::change(d.read_mean_us, n.read_mean_us);
            let fd = families::change(f.read_mean_us, d.read_mean_us);
            if let (Some(dn), Some(fd)) = (dn, fd) {
                holds.push(format!(
                    "{}: {}, {}",
                    m.label(),
                    verdict(dn, "Dedup", "Native"),
                    verdict(fd, "FAD", "Dedup")
                ));
            }
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.1}% | {:.1}% | {} | {} | {} | {:.3} / {:.3} / {:.3} |",
                m.family,
                m.label(),
                n.requests,
                n.read_ratio * 100.0,
                d.dedup_rate * 100.0,
                pct(dn),
                pct(fd),
                pct(families::change(f.write_mean_us, d.write_mean_us)),
                n.dof_read,
                d.dof_read,
                f.dof_read
            );
        }
        if !holds.is_empty() {
            let _ = writeln!(s, "\nOn the workloads with reads (within ±1%: no effect): {}.\n", holds.join("; "));
        }
        // The sensitivity sweep.
        let mut lines = vec![("Dedup vs Native".to_string(), Vec::new()), ("FAD vs Dedup".to_string(), Vec::new())];
        let _ = writeln!(
            s,
            "Sensitivity: the profile `{SWEEP_PROFILE}` with `{SWEEP_KEY}` set (the mean distance, in pages \
             written, from a duplicate back to its copy), read latency change:\n\n| reuse distance mean (pages) | \
             dedup rate | Dedup vs Native read | FAD vs Dedup read | read DOF Dedup / FAD |\n|---:|---:|---:|---:|---|"
        );
        for (m, x) in sweep.iter().zip(SWEEP_REUSE) {
            let (Some(n), Some(d), Some(f)) =
                (families::get(&idx, m, "native"), families::get(&idx, m, "dedup"), families::get(&idx, m, "fad"))
            else {
                continue;
            };
            let dn = families::change(d.read_mean_us, n.read_mean_us);
            let fd = families::change(f.read_mean_us, d.read_mean_us);
            if let Some(v) = dn {
                lines[0].1.push((x, v * 100.0));
            }
            if let Some(v) = fd {
                lines[1].1.push((x, v * 100.0));
            }
            let _ = writeln!(
                s,
                "| {x:.0} | {:.1}% | {} | {} | {:.3} / {:.3} |",
                d.dedup_rate * 100.0,
                pct(dn),
                pct(fd),
                d.dof_read,
                f.dof_read
            );
        }
        if plots && lines.iter().all(|(_, p)| p.len() >= 2) {
            plotter.lines(
                "families_reuse_sensitivity",
                "Read latency change vs duplicate reuse distance",
                "duplicate reuse distance mean (pages)",
                "read latency change (%)",
                &lines,
            )?;
            let _ = writeln!(s, "\n![sensitivity](plots/families_reuse_sensitivity.png)\n");
        } else {
            s.push('\n');
        }
        Ok(s)
    }))
}

/// "A slower than B" / "faster" / "no effect" for a mean latency change
/// `c` of `a` against `b` (within ±1%: no effect).
fn verdict(c: f64, a: &str, b: &str) -> String {
    if c > 0.01 {
        format!("{a} slower than {b}")
    } else if c < -0.01 {
        format!("{a} faster than {b}")
    } else {
        format!("{a} vs {b} no effect")
    }
}

/// The paper's number for the claim described `what` (see [`CLAIMS`]).
fn claim_percent(what: &str) -> f64 {
    CLAIMS.iter().find(|c| c.what == what).map(|c| c.percent).unwrap_or(f64::NAN)
}
