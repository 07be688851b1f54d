//! `dedupsim reproduce fad`: FAD's Section IV (Figs. 2-3 and 8-16) as one
//! experiment.
//!
//! Workloads are the nine Table II rows: the real trace when `--traces DIR`
//! holds it (recognized by file name and detected format), otherwise the
//! Table II-matched replica ([`super::replica`]). Per workload the plan runs
//! `native`, `dedup`, `har`, `fcrc`, the three ablations and `fad`, plus
//! `fad` at every ρ of Fig. 15 other than the configured one (0.30 by
//! default). [`write_report`] turns the records into `REPORT.md` (one table
//! per figure, normalized as the paper does, the paper's published numbers
//! beside ours) and plots (`plots/*.svg` and `*.png`).

use super::paper::{self, Claim, Metric, Stat, CLAIMS, FIG15_RHO, FIG15_SPEEDUP};
use super::replica::{self, ReplicaRef, TableRow, TABLE_II};
use super::results::{self, ResultRow};
use super::workload::{WorkloadDef, WorkloadSpec, WorkloadSummary};
use super::{execute_in, CellRecord, ExecOutcome, ExperimentError, Observer, Plan};
use crate::config::Config;
use crate::plot;
use crate::policy::fad::FadParams;
use crate::report::{RunReport, VERSION};
use crate::workload::FileRule;
use std::collections::HashMap;
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
    crate::policy::params::<FadParams>(cfg, "fad")
        .map(|p| p.rho)
        .map_err(|e| ExperimentError::Policy { policy: "fad".into(), reason: e.to_string() })
}

/// Formats ρ as an override value.
fn rho_value(rho: f64) -> String {
    format!("{rho}")
}

/// Chooses the workloads and builds the plan.
pub fn plan(base: &Config, opts: &FadOptions) -> Result<(Plan, Vec<WorkloadChoice>), ExperimentError> {
    let mut plan = Plan::new("fad");
    let mut choices = Vec::new();
    let only = opts
        .only
        .iter()
        .map(|k| {
            replica::row(k).map(|r| r.key).ok_or_else(|| ExperimentError::Workload {
                workload: k.clone(),
                reason: format!("not a Table II workload; available: {}", replica::names().join(", ")),
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
    let rho0 = base_rho(base)?;
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
        let w = plan.add_workload(def.clone())?;
        for p in POLICIES {
            plan.add_cell(w, p, &[], base)?;
        }
        for rho in FIG15_RHO {
            if (rho - rho0).abs() > 1e-9 {
                plan.add_cell(w, "fad", &[(RHO_KEY.to_string(), rho_value(rho))], base)?;
            }
        }
        if opts.gap && matches!(def.spec, WorkloadSpec::Replica(_)) {
            super::gap::add_cells(&mut plan, base, row, opts.scale)?;
        }
        choices.push(WorkloadChoice { row, def, note });
    }
    Ok((plan, choices))
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
/// `results.json`, `REPORT.md`, plots and `timing.json` into `out`.
pub fn run(
    base: &Config,
    opts: &FadOptions,
    out: &Path,
    jobs: usize,
    obs: &dyn Observer,
) -> Result<FadOutcome, ExperimentError> {
    let (plan, choices) = plan(base, opts)?;
    let mut identity = serde_json::Map::new();
    identity.insert("config_hash".into(), base.config_hash_hex().into());
    identity.insert("seed".into(), base.seed.into());
    identity.insert("command".into(), opts.command.clone().into());
    let exec = execute_in(&plan, out, jobs, obs, identity)?;
    let rows: Vec<ResultRow> = exec.records.iter().map(ResultRow::single).collect();
    results::write(out, &rows)?;
    let (report_path, plots) = write_report(base, opts, &choices, &exec.records, out)?;
    Ok(FadOutcome { exec, choices, report_path, plots })
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

fn metric(r: &RunReport, m: Metric) -> f64 {
    let s = &r.summary;
    match m {
        Metric::ReadMean => s.read.mean_us,
        Metric::WriteMean => s.write.mean_us,
        Metric::ReadP99 => s.read.p99_us,
        Metric::ReadP999 => s.read.p999_us,
        Metric::Dof => s.dof_read,
        Metric::WriteVolume => s.write_volume_pages as f64,
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

/// The records of one reproduction, indexed.
struct Data<'a> {
    rows: Vec<&'static TableRow>,
    cells: HashMap<(String, String, String), &'a CellRecord>,
    summaries: HashMap<String, &'a WorkloadSummary>,
    rho0: f64,
}

impl<'a> Data<'a> {
    fn new(records: &'a [CellRecord], choices: &[WorkloadChoice], rho0: f64) -> Data<'a> {
        let mut cells = HashMap::new();
        let mut summaries = HashMap::new();
        for r in records {
            cells.insert((r.workload.clone(), r.policy.clone(), r.params_string()), r);
            summaries.entry(r.workload.clone()).or_insert(&r.workload_summary);
        }
        Data { rows: choices.iter().map(|c| c.row).collect(), cells, summaries, rho0 }
    }
    fn get(&self, w: &str, policy: &str) -> Option<&'a RunReport> {
        self.cells.get(&(w.to_string(), policy.to_string(), String::new())).map(|r| &r.report)
    }
    fn at_rho(&self, w: &str, rho: f64) -> Option<&'a RunReport> {
        if (rho - self.rho0).abs() < 1e-9 {
            return self.get(w, "fad");
        }
        let p = format!("{RHO_KEY}={}", rho_value(rho));
        self.cells.get(&(w.to_string(), "fad".to_string(), p)).map(|r| &r.report)
    }
    /// subject / reference for one workload (None if missing or reference 0).
    fn ratio(&self, w: &str, subject: &str, reference: &str, m: Metric) -> Option<f64> {
        let (a, b) = (self.get(w, subject)?, self.get(w, reference)?);
        let (x, y) = (metric(a, m), metric(b, m));
        (y > 0.0 && x.is_finite()).then(|| x / y)
    }
    /// The claim's statistic over our workloads, in percent.
    fn claim(&self, c: &Claim) -> Option<f64> {
        let changes: Vec<(&str, f64)> = self
            .rows
            .iter()
            .filter_map(|r| self.ratio(r.key, c.subject, c.reference, c.metric).map(|x| (r.key, (x - 1.0) * 100.0)))
            .collect();
        if changes.is_empty() {
            return None;
        }
        match c.stat {
            Stat::Mean => Some(changes.iter().map(|(_, x)| x).sum::<f64>() / changes.len() as f64),
            Stat::On(w) => changes.iter().find(|(k, _)| *k == w).map(|(_, x)| *x),
            Stat::MaxReduction => changes.iter().map(|(_, x)| *x).reduce(f64::min),
            Stat::MaxIncrease => changes.iter().map(|(_, x)| *x).reduce(f64::max),
        }
    }
}

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.1}%")
    } else {
        "n/a".into()
    }
}

fn num(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "n/a".into(),
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    let f: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    (!f.is_empty()).then(|| f.iter().sum::<f64>() / f.len() as f64)
}

/// Bar-chart series: (name, one value per category).
type BarSeries = Vec<(String, Vec<f64>)>;

/// One normalized figure: a markdown table and the plot series.
struct Figure {
    number: &'static str,
    /// Plot file stem under `plots/`.
    stem: &'static str,
    /// Short title for the plot (the y label says what is normalized).
    plot_title: &'static str,
    title: String,
    y_label: &'static str,
    metric: Metric,
    subjects: Vec<&'static str>,
    reference: &'static str,
    /// Also print the reference's absolute value with this unit.
    unit: &'static str,
    /// What the table shows, when the generic sentence ("METRIC normalized
    /// to REFERENCE ...") does not say enough.
    description: Option<&'static str>,
}

impl Figure {
    /// Writes the figure's section: heading, description, table, the
    /// paper's claims beside ours, and the plot.
    fn emit(&self, o: &mut String, plotter: &mut Plotter, d: &Data) -> Result<(), ExperimentError> {
        let (table, cats, series) = self.render(d);
        let _ = writeln!(o, "### {}: {}\n", self.number, self.title);
        match self.description {
            Some(text) => {
                let _ = writeln!(o, "{text}\n");
            }
            None => {
                let reference = display(self.reference);
                let _ = writeln!(
                    o,
                    "{} normalized to {reference} (first numeric column: {reference}'s absolute value).\n",
                    self.metric.label()
                );
            }
        }
        o.push_str(&table);
        o.push_str(&claims_table(d, &[self.number]));
        plotter.bars(self.stem, &format!("{}: {}", self.number, self.plot_title), self.y_label, &cats, &series)?;
        if plotter.enabled {
            let _ = writeln!(o, "\n![{}](plots/{}.svg)\n", self.number, self.stem);
        } else {
            o.push('\n');
        }
        Ok(())
    }

    /// Markdown table (rows: workloads + Average) and the series.
    fn render(&self, d: &Data) -> (String, Vec<String>, BarSeries) {
        let mut o = String::new();
        let _ = write!(o, "| Workload | {} ({}) |", display(self.reference), self.unit);
        for s in &self.subjects {
            let _ = write!(o, " {} |", display(s));
        }
        o.push('\n');
        o.push_str("|---|---:|");
        for _ in &self.subjects {
            o.push_str("---:|");
        }
        o.push('\n');
        let mut cats = Vec::new();
        let mut cols: Vec<Vec<f64>> = vec![Vec::new(); self.subjects.len()];
        for row in &d.rows {
            let abs = d.get(row.key, self.reference).map(|r| metric(r, self.metric));
            let digits = if self.metric == Metric::Dof {
                4
            } else if self.metric == Metric::WriteVolume {
                0
            } else {
                1
            };
            let _ = write!(o, "| {} | {} |", row.name, num(abs, digits));
            for (i, s) in self.subjects.iter().enumerate() {
                let x = d.ratio(row.key, s, self.reference, self.metric);
                cols[i].push(x.unwrap_or(f64::NAN));
                let _ = write!(o, " {} |", num(x, 3));
            }
            o.push('\n');
            cats.push(row.name.to_string());
        }
        let _ = write!(o, "| **Average** | |");
        for c in &cols {
            let _ = write!(o, " **{}** |", num(mean(c), 3));
        }
        o.push('\n');
        cats.push("Avg.".to_string());
        let series = self
            .subjects
            .iter()
            .zip(cols)
            .map(|(s, mut v)| {
                let m = mean(&v).unwrap_or(0.0);
                v.push(m);
                // Missing values (reference 0) are drawn as 0 and marked n/a in the table.
                let v = v.into_iter().map(|x| if x.is_finite() { x } else { 0.0 }).collect();
                (display(s).to_string(), v)
            })
            .collect();
        (o, cats.clone(), series)
    }
}

fn claims_table(d: &Data, figures: &[&str]) -> String {
    let mut o = String::new();
    let list: Vec<&Claim> = CLAIMS.iter().filter(|c| figures.contains(&c.figure)).collect();
    if list.is_empty() {
        return o;
    }
    o.push_str("\n| Paper's claim | Statistic | Paper | Ours | Ours − paper |\n|---|---|---:|---:|---:|\n");
    for c in list {
        let stat = match c.stat {
            Stat::Mean => "mean over workloads".to_string(),
            Stat::On(w) => format!("on {}", replica::row(w).map(|r| r.name).unwrap_or(w)),
            Stat::MaxReduction => "largest reduction".to_string(),
            Stat::MaxIncrease => "largest increase".to_string(),
        };
        let ours = d.claim(c);
        let _ = writeln!(
            o,
            "| {} ({}) | {} | {} | {} | {} |",
            c.what,
            c.source,
            stat,
            pct(c.percent),
            ours.map(pct).unwrap_or_else(|| "n/a".into()),
            ours.map(|x| format!("{:+.1} pp", x - c.percent)).unwrap_or_else(|| "n/a".into())
        );
    }
    o
}

/// Writes `REPORT.md` and the plots; returns the report path and plot files.
pub fn write_report(
    base: &Config,
    opts: &FadOptions,
    choices: &[WorkloadChoice],
    records: &[CellRecord],
    out: &Path,
) -> Result<(PathBuf, Vec<PathBuf>), ExperimentError> {
    let rho0 = base_rho(base)?;
    let d = Data::new(records, choices, rho0);
    let plot_dir = out.join("plots");
    if opts.plots {
        std::fs::create_dir_all(&plot_dir).map_err(|error| ExperimentError::Io { path: plot_dir.clone(), error })?;
    }
    // Plot titles must fit the figure: a shorter stamp (8 hex digits of the hash).
    let mut short_stamp = format!("dedupsim {VERSION}, cfg {}, seed {}", &base.config_hash_hex()[..8], base.seed);
    if base.experiment.fad_ssdsim_model {
        short_stamp.push_str("; AUTHORS' FAD-SSDsim MODEL");
    }
    let replicas = choices.iter().filter(|c| matches!(c.def.spec, WorkloadSpec::Replica(_))).count();
    let traces = choices.len() - replicas;
    let (kind, short_kind) = match (replicas, traces) {
        (_, 0) => ("synthetic (Table II-matched) replicas".to_string(), "Table II replicas"),
        (0, _) => ("real traces".to_string(), "traces"),
        (r, t) => (
            format!("{r} synthetic (Table II-matched) replicas and {t} real traces (the Source column says which)"),
            "replicas and traces",
        ),
    };
    let mut plotter = Plotter {
        dir: plot_dir.clone(),
        suffix: format!("{short_kind}; {short_stamp}"),
        enabled: opts.plots,
        files: Vec::new(),
    };
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
    let _ = writeln!(
        o,
        "* {} cells (`cells/*.json`, full HDR histograms); all rows in `results.csv` / `results.json`",
        records.len()
    );
    let _ = writeln!(
        o,
        "* Averages are arithmetic means over workloads of per-workload normalized values; \"Ours − paper\" is in percentage points. \
         Differences from the paper are expected: the replicas match Table II's statistics, not the traces themselves, and the \
         simulator is dedupsim, not the authors' SSDsim. See `docs/reproduce.md`.\n"
    );

    // Workloads.
    let _ = writeln!(o, "## Workloads (Table II)\n");
    let _ = writeln!(
        o,
        "Paper / ours. Ours are measured on the replayed requests (`dedupsim trace stats` on the same workload). \
         Two dedup rates (issue 9 item 3): *trace* is the share of replayed written pages whose content occurred \
         before in the workload (Table II's definition: a block whose MD5 was seen before); *device* is what \
         Deduplication achieved on the simulated device, whose fingerprint index forgets a content when its last \
         reference is overwritten. Replicas match Table II on the {} (`--dedup-rate`).\n",
        opts.dedup_target.name()
    );
    let _ = writeln!(
        o,
        "| Workload | Source | Read ratio | Avg. read (KiB) | Total I/Os (K) | Avg. req. (KiB) | Dedup. rate (trace) | Dedup. rate (device) | Avg. write (KiB) | Touched (GiB) | Duration (s) | Precond. pages |"
    );
    let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in choices {
        let r = c.row;
        let s = d.summaries.get(r.key);
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
                d.get(r.key, "dedup").map(|x| format!("{:.1}%", x.summary.dedup_rate_achieved * 100.0))
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

    // Normalized figures.
    let figs = [
        Figure {
            number: "Fig. 2",
            stem: "fig02_dof",
            plot_title: "DOF",
            title: "Normalized fragmentation level (DOF), Native vs Deduplication".into(),
            y_label: "DOF (normalized to Native)",
            metric: Metric::Dof,
            subjects: vec!["dedup"],
            reference: "native",
            unit: "DOF",
            description: None,
        },
        Figure {
            number: "Fig. 3",
            stem: "fig03_read_latency",
            plot_title: "Avg. read latency",
            title: "Normalized average read latency, Native vs Deduplication".into(),
            y_label: "Read latency (normalized to Native)",
            metric: Metric::ReadMean,
            subjects: vec!["dedup"],
            reference: "native",
            unit: "µs",
            description: None,
        },
        Figure {
            number: "Fig. 8",
            stem: "fig08_read_latency",
            plot_title: "Avg. read latency",
            title: "Normalized average read latency".into(),
            y_label: "Read latency (normalized to Dedup.)",
            metric: Metric::ReadMean,
            subjects: END_TO_END.to_vec(),
            reference: "dedup",
            unit: "µs",
            description: None,
        },
        Figure {
            number: "Fig. 9",
            stem: "fig09_write_latency",
            plot_title: "Avg. write latency",
            title: "Normalized average write latency".into(),
            y_label: "Write latency (normalized to Dedup.)",
            metric: Metric::WriteMean,
            subjects: END_TO_END.to_vec(),
            reference: "dedup",
            unit: "µs",
            description: None,
        },
        Figure {
            number: "Fig. 10",
            stem: "fig10_dof_variants",
            plot_title: "DOF of FAD variants",
            title: "Normalized DOF for FAD variants".into(),
            y_label: "DOF (normalized to Dedup.)",
            metric: Metric::Dof,
            subjects: VARIANTS.to_vec(),
            reference: "dedup",
            unit: "DOF",
            description: None,
        },
        Figure {
            number: "Fig. 11",
            stem: "fig11_read_latency_variants",
            plot_title: "Read latency of FAD variants",
            title: "Normalized read latency for FAD variants".into(),
            y_label: "Read latency (normalized to Dedup.)",
            metric: Metric::ReadMean,
            subjects: VARIANTS.to_vec(),
            reference: "dedup",
            unit: "µs",
            description: None,
        },
        Figure {
            number: "Fig. 12",
            stem: "fig12_write_latency_variants",
            plot_title: "Write latency of FAD variants",
            title: "Normalized write latency for FAD variants".into(),
            y_label: "Write latency (normalized to Dedup.)",
            metric: Metric::WriteMean,
            subjects: VARIANTS.to_vec(),
            reference: "dedup",
            unit: "µs",
            description: None,
        },
        Figure {
            number: "Fig. 13",
            stem: "fig13_p99_read",
            plot_title: "P99 read latency",
            title: "P99 read tail latency".into(),
            y_label: "P99 read latency (normalized to Dedup.)",
            metric: Metric::ReadP99,
            subjects: END_TO_END.to_vec(),
            reference: "dedup",
            unit: "µs",
            description: None,
        },
        Figure {
            number: "Fig. 14",
            stem: "fig14_p999_read",
            plot_title: "P99.9 read latency",
            title: "P99.9 read tail latency".into(),
            y_label: "P99.9 read latency (normalized to Dedup.)",
            metric: Metric::ReadP999,
            subjects: END_TO_END.to_vec(),
            reference: "dedup",
            unit: "µs",
            description: None,
        },
    ];
    let section = |n: &str| match n {
        "Fig. 2" | "Fig. 3" => "Motivation (§II-C)",
        "Fig. 8" | "Fig. 9" => "End-to-end (§IV-B)",
        "Fig. 10" | "Fig. 11" | "Fig. 12" => "Ablation (§IV-B)",
        _ => "Tail latency (§IV-C)",
    };
    let mut last_section = "";
    for f in &figs {
        let sec = section(f.number);
        if sec != last_section {
            let _ = writeln!(o, "## {sec}\n");
            last_section = sec;
        }
        f.emit(&mut o, &mut plotter, &d)?;
    }

    // Fig. 15.
    let _ = writeln!(o, "## Sensitivity (§IV-D)\n");
    let _ = writeln!(o, "### Fig. 15: Speedup of FAD over Deduplication versus the rewrite threshold ρ\n");
    let _ = writeln!(
        o,
        "Speedup = mean latency of all requests (reads and writes) under Deduplication / under FAD − 1; the paper does not \
         define its speedup, and this reading is the one consistent with its 20.8% at ρ = 30% next to a 34.1% read-latency \
         reduction. The read-only speedup is given below it.\n"
    );
    let mut lines_series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut avg_overall = Vec::new();
    let mut avg_read = Vec::new();
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
    let speedup = |w: &str, rho: f64, read_only: bool| -> Option<f64> {
        let (dd, ff) = (d.get(w, "dedup")?, d.at_rho(w, rho)?);
        let (a, b) = if read_only {
            (dd.summary.read.mean_us, ff.summary.read.mean_us)
        } else {
            (overall_mean_us(dd), overall_mean_us(ff))
        };
        (b > 0.0).then(|| (a / b - 1.0) * 100.0)
    };
    for read_only in [false, true] {
        if read_only {
            let _ = writeln!(o, "\nRead-latency speedup (mean read latency under Deduplication / under FAD − 1), %:\n");
        }
        header(&mut o);
        let mut per_rho: Vec<Vec<f64>> = vec![Vec::new(); FIG15_RHO.len()];
        for row in &d.rows {
            let _ = write!(o, "| {} |", row.name);
            let mut pts = Vec::new();
            for (i, rho) in FIG15_RHO.iter().enumerate() {
                let s = speedup(row.key, *rho, read_only);
                if let Some(v) = s {
                    per_rho[i].push(v);
                    pts.push((rho * 100.0, v));
                }
                let _ = write!(o, " {} |", num(s, 1));
            }
            o.push('\n');
            if !read_only && !pts.is_empty() {
                lines_series.push((row.name.to_string(), pts));
            }
        }
        let avgs: Vec<Option<f64>> = per_rho.iter().map(|v| mean(v)).collect();
        let _ = write!(o, "| **Average** |");
        for a in &avgs {
            let _ = write!(o, " **{}** |", num(*a, 1));
        }
        o.push('\n');
        if read_only {
            avg_read = avgs;
        } else {
            let _ = write!(o, "| *Paper (average)* |");
            for p in FIG15_SPEEDUP {
                let _ = write!(o, " *{p:.1}* |");
            }
            o.push('\n');
            avg_overall = avgs;
        }
    }
    let points = |avgs: &[Option<f64>]| -> Vec<(f64, f64)> {
        FIG15_RHO.iter().zip(avgs).filter_map(|(r, a)| a.map(|a| (r * 100.0, a))).collect()
    };
    // Two figures, so no two series share a colour: the averages against the
    // paper's, and the nine workloads.
    let mut avg_series: Vec<(String, Vec<(f64, f64)>)> =
        vec![("Paper (average)".into(), FIG15_RHO.iter().zip(FIG15_SPEEDUP).map(|(r, s)| (r * 100.0, s)).collect())];
    for (name, avgs) in [("Ours (average)", &avg_overall), ("Ours (average, reads only)", &avg_read)] {
        let pts = points(avgs);
        if !pts.is_empty() {
            avg_series.push((name.into(), pts));
        }
    }
    if opts.plots {
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
    if let (Some(best), true) = (
        avg_overall.iter().enumerate().filter_map(|(i, a)| a.map(|a| (i, a))).max_by(|a, b| a.1.total_cmp(&b.1)),
        !avg_overall.is_empty(),
    ) {
        let _ = writeln!(
            o,
            "Our best average speedup is at ρ = {:.0}% ({:.1}%); the paper's is at ρ = 30% (20.8%).\n",
            FIG15_RHO[best.0] * 100.0,
            best.1
        );
    }

    // Fig. 16 and cost.
    let _ = writeln!(o, "## Cost (§IV-E)\n");
    let f16 = Figure {
        number: "Fig. 16",
        stem: "fig16_write_volume",
        plot_title: "Write volume",
        title: "Normalized write volume".into(),
        y_label: "Write volume (normalized to Dedup.)",
        metric: Metric::WriteVolume,
        subjects: vec!["dedup", "fcrc", "fad"],
        reference: "dedup",
        unit: "pages",
        description: Some(
            "Host pages programmed (unique + rewritten; GC migrations excluded) normalized to Deduplication (first \
             numeric column: Deduplication's pages).",
        ),
    };
    f16.emit(&mut o, &mut plotter, &d)?;
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
    for row in &d.rows {
        let fad = d.get(row.key, "fad");
        let dd = d.get(row.key, "dedup");
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
            .map(|p| d.get(row.key, p).map(|r| r.summary.gc_invocations.to_string()).unwrap_or_else(|| "n/a".into()))
            .collect();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            row.name,
            num(st("rdlt_bytes"), 0),
            num(st("wstl_high_water"), 0),
            num(st("wstl_bytes_high_water"), 0),
            nudf,
            rew.map(|x| format!("{x:.2}%")).unwrap_or_else(|| "n/a".into()),
            extra.map(|x| format!("{x:+.2}%")).unwrap_or_else(|| "n/a".into()),
            gc.join(" / ")
        );
    }

    // CDFs (plots only).
    let _ = writeln!(o, "\n## Read latency distributions\n");
    if !opts.plots {
        let _ = writeln!(o, "Plots were not written (`--no-plots`); the full HDR histograms are in `cells/*.json`.\n");
    } else {
        let _ = writeln!(
            o,
            "Read latency CDFs per workload (from the full HDR histograms in `cells/*.json`) for Native, Deduplication, \
             HAR, FCRC and FAD.\n"
        );
    }
    for row in d.rows.iter().filter(|_| opts.plots) {
        let series: Vec<(String, Vec<(f64, f64)>)> = ["native", "dedup", "har", "fcrc", "fad"]
            .iter()
            .filter_map(|p| {
                d.get(row.key, p).map(|r| (display(p).to_string(), thin(plot::cdf_points_us(&r.histograms.read), 400)))
            })
            .filter(|(_, pts)| !pts.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let stem = format!("cdf_read_{}", row.key);
        plotter.cdf(&stem, &format!("Read latency: {}", row.name), &series)?;
        let _ = writeln!(o, "![{} read latency CDF](plots/{stem}.svg)\n", row.name);
    }

    // The gap, decomposed (issue 9 items 2 and 9).
    if opts.gap {
        let rows: Vec<&'static TableRow> =
            choices.iter().filter(|c| matches!(c.def.spec, WorkloadSpec::Replica(_))).map(|c| c.row).collect();
        let effects = super::gap::effects(records, &rows);
        let paper = (
            claim_percent("Deduplication vs Native, avg read latency"),
            claim_percent("FAD vs Deduplication, avg read latency"),
        );
        let _ = writeln!(o, "## The gap to the paper, decomposed\n");
        o.push_str(&super::gap::section(&effects, super::gap::scale(opts.scale), paper));
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
    }

    // All claims at a glance.
    let _ = writeln!(o, "## Summary: the paper's numbers beside ours\n");
    let mut summary = String::new();
    summary.push_str("| Figure | Paper's claim | Statistic | Paper | Ours |\n|---|---|---|---:|---:|\n");
    for c in CLAIMS {
        let ours = d.claim(c);
        let stat = match c.stat {
            Stat::Mean => "mean".to_string(),
            Stat::On(w) => format!("on {}", replica::row(w).map(|r| r.name).unwrap_or(w)),
            Stat::MaxReduction => "largest reduction".into(),
            Stat::MaxIncrease => "largest increase".into(),
        };
        let _ = writeln!(
            summary,
            "| {} | {} | {} | {} | {} |",
            c.figure,
            c.what,
            stat,
            pct(c.percent),
            ours.map(pct).unwrap_or_else(|| "n/a".into())
        );
    }
    let avg15: Vec<String> = avg_overall.iter().map(|a| num(*a, 1)).collect();
    let _ = writeln!(
        summary,
        "| Fig. 15 | FAD speedup over Deduplication at ρ = 5..35% | mean | {} | {} |",
        FIG15_SPEEDUP.map(|x| format!("{x:.1}")).join(" / "),
        avg15.join(" / ")
    );
    o.push_str(&summary);
    o.push('\n');

    let path = out.join("REPORT.md");
    crate::output::write_bytes(&path, o.as_bytes())?;
    Ok((path, plotter.files))
}

/// The paper's number for the claim described `what` (see [`CLAIMS`]).
fn claim_percent(what: &str) -> f64 {
    CLAIMS.iter().find(|c| c.what == what).map(|c| c.percent).unwrap_or(f64::NAN)
}

/// Writes the figures of one report (SVG and PNG) and remembers the files.
struct Plotter {
    dir: PathBuf,
    /// Appended to every title: workload kind, version, config hash, seed.
    suffix: String,
    enabled: bool,
    files: Vec<PathBuf>,
}

impl Plotter {
    fn done(&mut self, stem: &str, r: Result<(), plot::PlotError>) -> Result<(), ExperimentError> {
        r.map_err(|e| ExperimentError::Plot { stem: stem.into(), reason: e.to_string() })?;
        let path = self.dir.join(stem);
        self.files.push(path.with_extension("svg"));
        self.files.push(path.with_extension("png"));
        Ok(())
    }

    fn bars(
        &mut self,
        stem: &str,
        title: &str,
        y: &str,
        cats: &[String],
        series: &[(String, Vec<f64>)],
    ) -> Result<(), ExperimentError> {
        if !self.enabled {
            return Ok(());
        }
        let r =
            plot::grouped_bars_normalized(&self.dir.join(stem), &format!("{title} ({})", self.suffix), y, cats, series);
        self.done(stem, r)
    }

    fn lines(
        &mut self,
        stem: &str,
        title: &str,
        x: &str,
        y: &str,
        series: &[(String, Vec<(f64, f64)>)],
    ) -> Result<(), ExperimentError> {
        if !self.enabled {
            return Ok(());
        }
        let r = plot::lines(&self.dir.join(stem), &format!("{title} ({})", self.suffix), x, y, series);
        self.done(stem, r)
    }

    fn cdf(&mut self, stem: &str, title: &str, series: &[(String, Vec<(f64, f64)>)]) -> Result<(), ExperimentError> {
        if !self.enabled {
            return Ok(());
        }
        let r = plot::cdf(&self.dir.join(stem), &format!("{title} ({})", self.suffix), series);
        self.done(stem, r)
    }
}

/// At most about `max` points of a CDF (evenly spaced in rank, first and
/// last kept), so that plot files stay small; the curve is unchanged at
/// plotting resolution.
fn thin(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 2 {
        return points;
    }
    let step = (points.len() - 1) as f64 / (max - 1) as f64;
    (0..max).map(|i| points[((i as f64 * step).round() as usize).min(points.len() - 1)]).collect()
}
