//! Reproductions as declarations: a paper's evaluation written down as
//! data (the workloads, the variants each workload runs, the blocks of its
//! report: figures, the paper's claims with their sections, tables) and
//! served by one generic runner ([`run`]: the cell cache of
//! [`super::execute_in`], `results.csv` / `results.json` of
//! [`super::results`]) and one report writer ([`write_report`]: REPORT.md
//! block by block, plots through one [`Plotter`]).
//!
//! A new reproduction is a function returning a [`Declaration`], one line
//! in [`super::papers::REGISTRY`] and one `reproduce` subcommand; every
//! paper, FAD included, is run by [`super::papers::run`] (= [`run`]). The common shape
//! (every workload runs every variant; a header, the claims, one line plot
//! per figure, notes) is [`Declaration::standard`] (`reproduce smartdedup`,
//! `reproduce fast24`). `reproduce fad` ([`super::fad`]) uses the richer
//! blocks: normalized bar figures with the paper's quantitative claims
//! beside them ([`Bars`], [`Comparison`]), per-workload CDFs ([`Cdfs`]) and
//! a few paper-specific tables ([`Block::Custom`]).

use super::results::{self, ResultRow};
use super::{execute_in, param_applies, ExecOutcome, ExperimentError, Observer, Plan, WorkloadDef};
use crate::config::Config;
use crate::plot;
use crate::report::{RunReport, VERSION};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A number read from a run's report.
#[derive(Copy, Clone)]
pub struct Metric {
    pub name: &'static str,
    /// Axis / column label, with its unit.
    pub label: &'static str,
    pub get: fn(&RunReport) -> f64,
}

impl Metric {
    /// An `engine_stats` entry (0 when absent).
    pub fn engine_stat(r: &RunReport, key: &str) -> f64 {
        r.engine_stats.get(key).copied().unwrap_or(0.0)
    }
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for Metric {
    fn eq(&self, other: &Metric) -> bool {
        self.name == other.name
    }
}

/// One configuration the paper evaluates: a policy with config overrides
/// (any `--set` key, e.g. `engine.smartdedup.memory_mb`), named.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The key figures and claims refer to the variant by.
    pub label: String,
    /// The name tables and plots show (default: the label).
    pub name: String,
    pub policy: String,
    pub params: Vec<(String, String)>,
}

impl Variant {
    pub fn new(label: impl Into<String>, policy: &str, params: &[(&str, String)]) -> Variant {
        let label = label.into();
        Variant {
            name: label.clone(),
            label,
            policy: policy.to_string(),
            params: params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }

    /// The same variant shown as `name`.
    pub fn named(mut self, name: impl Into<String>) -> Variant {
        self.name = name.into();
        self
    }
}

/// A workload of the declaration and the variants it runs.
#[derive(Clone, Debug)]
pub struct Workload {
    pub def: WorkloadDef,
    /// Name shown in tables (default: the label).
    pub name: String,
    pub variants: Vec<Variant>,
    /// Shown in the report's per-workload tables and averages; hidden
    /// workloads (e.g. FAD's gap-decomposition replicas) run cells that
    /// [`Block::Custom`] blocks read.
    pub shown: bool,
}

impl Workload {
    pub fn new(def: WorkloadDef, variants: Vec<Variant>) -> Workload {
        Workload { name: def.label.clone(), def, variants, shown: true }
    }
}

/// A figure: per series, the metric of one variant at each x, drawn as the
/// mean over the workloads, with a table of every workload's value.
pub struct Figure {
    /// File stem under `plots/`.
    pub stem: &'static str,
    pub title: String,
    /// The paper's section / figure it reproduces.
    pub source: &'static str,
    pub x_label: &'static str,
    pub metric: Metric,
    /// (series name, [(x, variant label)]).
    pub series: Vec<(String, Vec<(f64, String)>)>,
    /// The workloads (labels) the figure shows; empty = all.
    pub only: Vec<String>,
}

/// One of the paper's claims in words, with what dedupsim measured for it.
pub struct Claim {
    pub section: &'static str,
    /// The paper's words and numbers.
    pub paper: String,
    /// dedupsim's corresponding measurement, as text.
    pub measure: Box<dyn Fn(&Outcome) -> String + Send + Sync>,
}

/// How a [`Comparison`] aggregates over the shown workloads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stat {
    /// Arithmetic mean of per-workload changes.
    Mean,
    /// The change on one workload (its label).
    On(&'static str),
    /// The largest reduction (most negative change) over workloads.
    MaxReduction,
    /// The largest increase over workloads.
    MaxIncrease,
}

/// A quantitative claim: the change, in percent, of `metric` under variant
/// `subject` relative to variant `reference`, per workload
/// (`x_w / y_w − 1`), summarized over the shown workloads by `stat`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Figure (or section) it belongs to, e.g. "Fig. 8".
    pub figure: &'static str,
    /// What is compared, in words.
    pub what: &'static str,
    pub stat: Stat,
    pub subject: &'static str,
    pub reference: &'static str,
    pub metric: Metric,
    /// The paper's change in percent.
    pub percent: f64,
    /// Where the paper states it.
    pub source: &'static str,
}

impl Comparison {
    /// The statistic in words (`short`: the summary table's wording).
    pub fn stat_text(&self, o: &Outcome, short: bool) -> String {
        match self.stat {
            Stat::Mean if short => "mean".into(),
            Stat::Mean => "mean over workloads".into(),
            Stat::On(w) => format!("on {}", o.name(w)),
            Stat::MaxReduction => "largest reduction".into(),
            Stat::MaxIncrease => "largest increase".into(),
        }
    }
}

/// A grouped bar figure normalized to a reference variant: a table with a
/// row per shown workload (the reference's absolute value, each subject's
/// ratio to it) and their average, the claims of the figure beside ours,
/// and the plot.
pub struct Bars {
    /// "Fig. 8".
    pub number: &'static str,
    /// File stem under `plots/`.
    pub stem: &'static str,
    /// Short title for the plot (the y label says what is normalized).
    pub plot_title: &'static str,
    pub title: String,
    pub y_label: &'static str,
    pub metric: Metric,
    /// Variant labels.
    pub subjects: Vec<&'static str>,
    pub reference: &'static str,
    /// Unit of the reference's absolute value, and its decimals.
    pub unit: &'static str,
    pub digits: usize,
    /// What the table shows, when the generic sentence ("METRIC normalized
    /// to REFERENCE ...") does not say enough.
    pub description: Option<&'static str>,
    /// The paper's claims shown under the table (those whose `figure` is
    /// `number`).
    pub claims: Vec<Comparison>,
}

/// Read-latency CDFs of `variants`, one plot per shown workload (from the
/// full HDR histograms).
pub struct Cdfs {
    /// Plot file stem prefix (`{prefix}{workload}`).
    pub prefix: &'static str,
    pub variants: Vec<&'static str>,
}

/// Writes a bespoke part of a report from the outcome (and may plot).
pub type CustomBlock = Box<dyn Fn(&Outcome, &mut Plotter) -> Result<String, ExperimentError> + Send + Sync>;

/// One part of REPORT.md, in order.
pub enum Block {
    /// The standard header: title, source, command, workloads.
    Header,
    /// Literal markdown.
    Text(String),
    /// The claims in words: § | the paper | dedupsim.
    Claims(Vec<Claim>),
    Lines(Figure),
    Bars(Bars),
    Cdfs(Cdfs),
    /// Every quantitative claim in one table (Figure | claim | statistic |
    /// paper | ours).
    Summary(Vec<Comparison>),
    /// "## Notes" and one paragraph each.
    Notes(Vec<String>),
    Custom(CustomBlock),
}

/// How cells become `results.csv` rows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rows {
    /// Cells that differ only in seed merge into one row
    /// ([`results::merge_records`]).
    MergeSeeds,
    /// One row per cell.
    PerCell,
}

/// The variants a reproduction runs on each workload of a family
/// ([`Declaration::family`]).
#[derive(Clone)]
pub enum FamilyVariants {
    /// The same variants on every workload.
    Fixed(Vec<Variant>),
    /// Variants that depend on the workload (SmartDedup sizes its store to
    /// the workload's distinct pages), computed when it is added.
    PerWorkload(fn(&super::families::Member, &Config) -> Result<Vec<Variant>, ExperimentError>),
}

/// A paper's evaluation as data. See the module doc.
pub struct Declaration {
    /// Subcommand name (`reproduce NAME`) and experiment name.
    pub name: String,
    pub title: String,
    /// The paper and the sections reproduced.
    pub source: String,
    pub workloads: Vec<Workload>,
    /// REPORT.md, block by block.
    pub report: Vec<Block>,
    pub rows: Rows,
    /// Stamped into `timing.json` (default: `{"reproduce": NAME}`).
    pub identity: serde_json::Map<String, serde_json::Value>,
    /// Appended to every plot title in parentheses (empty: nothing).
    pub plot_suffix: String,
    /// Names of workloads the declaration does not run but claims mention
    /// (label, name).
    pub names: Vec<(String, String)>,
    /// The variants a reproduction runs on workload families
    /// ([`super::families`]) and whether those workloads are shown; `None`:
    /// it has no family table that takes the recorded traces
    /// ([`Declaration::add_recorded`]).
    pub family: Option<(FamilyVariants, bool)>,
    /// Cells report per-chip and per-channel use
    /// ([`crate::report::RunReport::resources`]); default off.
    pub resources: bool,
}

impl Declaration {
    /// A declaration with the defaults: rows merged over seeds, `timing.json`
    /// stamped `{"reproduce": NAME}`, no plot suffix, no extra names.
    pub fn new(name: &str, title: &str, source: &str, workloads: Vec<Workload>, report: Vec<Block>) -> Declaration {
        let mut identity = serde_json::Map::new();
        identity.insert("reproduce".into(), name.into());
        Declaration {
            name: name.into(),
            title: title.into(),
            source: source.into(),
            workloads,
            report,
            rows: Rows::MergeSeeds,
            identity,
            plot_suffix: String::new(),
            names: Vec::new(),
            family: None,
            resources: false,
        }
    }

    /// Adds the recorded real-content traces in `dir` (family c of
    /// [`super::families`]) with the declaration's family variants, each
    /// replayed on an empty device as it was recorded.
    pub fn add_recorded(&mut self, dir: &std::path::Path, cfg: &Config) -> Result<(), ExperimentError> {
        let Some((family, shown)) = self.family.clone() else {
            return Err(ExperimentError::Workload {
                workload: dir.display().to_string(),
                reason: format!("--recorded: reproduce {} does not run the recorded workloads", self.name),
            });
        };
        for m in super::families::recorded(dir)? {
            let variants = match family {
                FamilyVariants::Fixed(ref v) => v.clone(),
                FamilyVariants::PerWorkload(of) => of(&m, cfg)?,
            };
            let cells = variants
                .into_iter()
                .map(|v| {
                    let mut v = v;
                    v.params.extend(m.set.iter().cloned());
                    v
                })
                .collect();
            self.workloads.push(Workload { shown, ..Workload::new(m.def, cells) });
        }
        Ok(())
    }

    /// The common shape: every workload runs every variant; REPORT.md is
    /// the header, the claims, one [`Figure`] after another and the notes.
    #[allow(clippy::too_many_arguments)]
    pub fn standard(
        name: &str,
        title: &str,
        source: &str,
        workloads: Vec<WorkloadDef>,
        variants: Vec<Variant>,
        figures: Vec<Figure>,
        claims: Vec<Claim>,
        notes: Vec<String>,
    ) -> Declaration {
        let mut report = vec![Block::Header, Block::Claims(claims)];
        report.extend(figures.into_iter().map(Block::Lines));
        if !notes.is_empty() {
            report.push(Block::Notes(notes));
        }
        let workloads = workloads.into_iter().map(|w| Workload::new(w, variants.clone())).collect();
        Declaration::new(name, title, source, workloads, report)
    }

    /// Every variant of every workload (for validation).
    pub fn variants(&self) -> impl Iterator<Item = &Variant> {
        self.workloads.iter().flat_map(|w| &w.variants)
    }

    /// The plan: per workload, its cells in declaration order.
    pub fn plan(&self, base: &Config) -> Result<Plan, ExperimentError> {
        let mut plan = Plan::new(&self.name);
        plan.resources = self.resources;
        for w in &self.workloads {
            let wi = plan.add_workload(w.def.clone())?;
            for v in &w.variants {
                plan.add_cell(wi, &v.policy, &v.params, base)?;
            }
        }
        Ok(plan)
    }
}

/// What a declaration's run produced, addressable by workload and variant
/// label.
pub struct Outcome {
    pub rows: Vec<ResultRow>,
    /// Every cell (plan order), computed or cached.
    pub exec: ExecOutcome,
    /// Shown workload labels in declaration order.
    pub workloads: Vec<String>,
    /// (label, name) of workloads (the declaration's and its extra names).
    workload_names: Vec<(String, String)>,
    /// (label, name) of variants.
    variant_names: Vec<(String, String)>,
    /// (workload label, variant label, row index).
    index: Vec<(String, String, usize)>,
    /// Plot files written (SVG and PNG).
    pub plots: Vec<PathBuf>,
}

impl Outcome {
    fn new(decl: &Declaration, rows: Vec<ResultRow>, exec: ExecOutcome) -> Outcome {
        let mut index = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            for w in decl.workloads.iter().filter(|w| w.def.label == r.workload) {
                for v in &w.variants {
                    let applied: Vec<(String, String)> =
                        v.params.iter().filter(|(k, _)| param_applies(k, &v.policy)).cloned().collect();
                    if r.policy == v.policy && r.params == applied {
                        index.push((r.workload.clone(), v.label.clone(), i));
                    }
                }
            }
        }
        let mut workload_names: Vec<(String, String)> =
            decl.workloads.iter().map(|w| (w.def.label.clone(), w.name.clone())).collect();
        workload_names.extend(decl.names.iter().cloned());
        let variant_names = decl.variants().map(|v| (v.label.clone(), v.name.clone())).collect();
        Outcome {
            rows,
            exec,
            workloads: decl.workloads.iter().filter(|w| w.shown).map(|w| w.def.label.clone()).collect(),
            workload_names,
            variant_names,
            index,
            plots: Vec::new(),
        }
    }

    /// The name shown for a workload label (the label itself when it has
    /// none).
    pub fn name<'a>(&'a self, label: &'a str) -> &'a str {
        self.workload_names.iter().find(|(l, _)| l == label).map_or(label, |(_, n)| n.as_str())
    }

    /// Labels of the workload-family workloads (`fitted:*`, `recorded:*`,
    /// [`super::families`]), shown or hidden, in declaration order.
    pub fn family_labels(&self) -> Vec<String> {
        self.workload_names
            .iter()
            .map(|(l, _)| l)
            .filter(|l| l.starts_with("fitted:") || l.starts_with("recorded:"))
            .cloned()
            .collect()
    }

    /// The name shown for a variant label.
    pub fn variant_name<'a>(&'a self, label: &'a str) -> &'a str {
        self.variant_names.iter().find(|(l, _)| l == label).map_or(label, |(_, n)| n.as_str())
    }

    /// The report of `variant` on `workload`.
    /// Every (workload label, variant label) with a row, in plan order.
    pub fn cells(&self) -> Vec<(String, String)> {
        self.index.iter().map(|(w, v, _)| (w.clone(), v.clone())).collect()
    }

    pub fn report(&self, workload: &str, variant: &str) -> Option<&RunReport> {
        self.index.iter().find(|(w, v, _)| w == workload && v == variant).map(|&(_, _, i)| &self.rows[i].report)
    }

    /// `metric` of `variant` on `workload`.
    pub fn value(&self, workload: &str, variant: &str, metric: Metric) -> Option<f64> {
        self.report(workload, variant).map(metric.get)
    }

    /// Mean of `metric` of `variant` over the workloads that ran it.
    pub fn mean(&self, variant: &str, metric: Metric) -> Option<f64> {
        self.mean_over(&self.workloads, variant, metric)
    }

    /// Mean of `metric` of `variant` over `workloads` (those that ran it).
    pub fn mean_over(&self, workloads: &[String], variant: &str, metric: Metric) -> Option<f64> {
        let v: Vec<f64> = workloads.iter().filter_map(|w| self.value(w, variant, metric)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// `subject / reference` of `metric` on one workload (None if either is
    /// missing, the reference is 0 or the subject not finite).
    pub fn ratio(&self, workload: &str, subject: &str, reference: &str, metric: Metric) -> Option<f64> {
        let (a, b) = (self.report(workload, subject)?, self.report(workload, reference)?);
        let (x, y) = ((metric.get)(a), (metric.get)(b));
        (y > 0.0 && x.is_finite()).then(|| x / y)
    }

    /// A comparison's statistic over the shown workloads, in percent.
    pub fn change(&self, c: &Comparison) -> Option<f64> {
        let changes: Vec<(&str, f64)> = self
            .workloads
            .iter()
            .filter_map(|w| self.ratio(w, c.subject, c.reference, c.metric).map(|x| (w.as_str(), (x - 1.0) * 100.0)))
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

/// Runs a declaration into `out`: cells (cached) into `out/cells/`, rows
/// into `results.csv` / `results.json`, REPORT.md and (with `plots`)
/// `plots/*.svg|png`.
pub fn run(
    decl: &Declaration,
    base: &Config,
    out: &Path,
    jobs: usize,
    obs: &dyn Observer,
    command: &str,
    plots: bool,
) -> Result<Outcome, ExperimentError> {
    let plan = decl.plan(base)?;
    let exec = execute_in(&plan, out, jobs, obs, decl.identity.clone())?;
    let rows = match decl.rows {
        Rows::MergeSeeds => results::merge_records(&exec.records),
        Rows::PerCell => exec.records.iter().map(ResultRow::single).collect(),
    };
    results::write(out, &rows)?;
    let mut outcome = Outcome::new(decl, rows, exec);
    outcome.plots = write_report(decl, &outcome, out, command, plots)?;
    Ok(outcome)
}

/// Writes the plots of one report (SVG and PNG, under `dir`) and remembers
/// the files; does nothing when disabled (`--no-plots`).
pub struct Plotter {
    dir: PathBuf,
    /// Appended to every title in parentheses (empty: nothing).
    suffix: String,
    enabled: bool,
    files: Vec<PathBuf>,
}

impl Plotter {
    pub fn new(dir: PathBuf, suffix: String, enabled: bool) -> Plotter {
        Plotter { dir, suffix, enabled, files: Vec::new() }
    }

    /// Whether plots are written.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn title(&self, title: &str) -> String {
        if self.suffix.is_empty() {
            title.to_string()
        } else {
            format!("{title} ({})", self.suffix)
        }
    }

    fn done(&mut self, stem: &str, r: Result<(), plot::PlotError>) -> Result<(), ExperimentError> {
        r.map_err(|e| ExperimentError::Plot { stem: stem.into(), reason: e.to_string() })?;
        let path = self.dir.join(stem);
        self.files.push(path.with_extension("svg"));
        self.files.push(path.with_extension("png"));
        Ok(())
    }

    /// Grouped bars with a reference line at 1.
    pub fn bars(
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
        let r = plot::grouped_bars_normalized(&self.dir.join(stem), &self.title(title), y, cats, series);
        self.done(stem, r)
    }

    pub fn lines(
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
        let r = plot::lines(&self.dir.join(stem), &self.title(title), x, y, series);
        self.done(stem, r)
    }

    pub fn cdf(
        &mut self,
        stem: &str,
        title: &str,
        series: &[(String, Vec<(f64, f64)>)],
    ) -> Result<(), ExperimentError> {
        if !self.enabled {
            return Ok(());
        }
        let r = plot::cdf(&self.dir.join(stem), &self.title(title), series);
        self.done(stem, r)
    }
}

/// A signed percentage with one decimal ("n/a" when not finite).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.1}%")
    } else {
        "n/a".into()
    }
}

/// A number with `digits` decimals ("n/a" when missing or not finite).
pub fn num(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "n/a".into(),
    }
}

/// Mean of the finite values.
pub fn mean(v: &[f64]) -> Option<f64> {
    let f: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    (!f.is_empty()).then(|| f.iter().sum::<f64>() / f.len() as f64)
}

fn fmt_value(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
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

/// Writes `out/REPORT.md` block by block, and the plots; returns the plot
/// files.
pub fn write_report(
    decl: &Declaration,
    o: &Outcome,
    out: &Path,
    command: &str,
    plots: bool,
) -> Result<Vec<PathBuf>, ExperimentError> {
    let plot_dir = out.join("plots");
    if plots {
        std::fs::create_dir_all(&plot_dir).map_err(|error| ExperimentError::Io { path: plot_dir.clone(), error })?;
    }
    let mut plotter = Plotter::new(plot_dir, decl.plot_suffix.clone(), plots);
    let mut md = String::new();
    for b in &decl.report {
        match b {
            Block::Header => header(&mut md, decl, o, command),
            Block::Text(t) => md.push_str(t),
            Block::Claims(claims) => {
                let _ = writeln!(md, "## The paper's claims and what dedupsim measures\n");
                let _ = writeln!(md, "| § | the paper | dedupsim |");
                let _ = writeln!(md, "|---|---|---|");
                for c in claims {
                    let _ = writeln!(md, "| {} | {} | {} |", c.section, c.paper, (c.measure)(o));
                }
            }
            Block::Lines(f) => lines(&mut md, f, o, &mut plotter)?,
            Block::Bars(f) => bars(&mut md, f, o, &mut plotter)?,
            Block::Cdfs(c) => cdfs(&mut md, c, o, &mut plotter)?,
            Block::Summary(list) => {
                md.push_str("| Figure | Paper's claim | Statistic | Paper | Ours |\n|---|---|---|---:|---:|\n");
                for c in list {
                    let ours = o.change(c);
                    let _ = writeln!(
                        md,
                        "| {} | {} | {} | {} | {} |",
                        c.figure,
                        c.what,
                        c.stat_text(o, true),
                        pct(c.percent),
                        ours.map(pct).unwrap_or_else(|| "n/a".into())
                    );
                }
            }
            Block::Notes(notes) => {
                let _ = writeln!(md, "\n## Notes\n");
                for n in notes {
                    let _ = writeln!(md, "{n}\n");
                }
            }
            Block::Custom(f) => md.push_str(&f(o, &mut plotter)?),
        }
    }
    crate::output::write_bytes(&out.join("REPORT.md"), md.as_bytes())?;
    Ok(plotter.files)
}

fn header(md: &mut String, decl: &Declaration, o: &Outcome, command: &str) {
    let _ = writeln!(md, "# {}\n", decl.title);
    let _ = writeln!(md, "Source: {}.\n", decl.source);
    let _ = writeln!(md, "Produced by `{command}` (dedupsim {VERSION}). Every number below is measured from `results.csv` / `results.json` in this directory; cells are cached in `cells/`.\n");
    let _ = writeln!(md, "Workloads: {}.\n", o.workloads.join(", "));
    // A cell whose figures need a caveat (a saturated hash stage) says so
    // up front.
    let warnings = cell_warnings(&o.exec.records);
    if !warnings.is_empty() {
        let lines: Vec<String> = warnings.iter().map(|w| format!("* {w}")).collect();
        let _ = writeln!(md, "**Warnings** (from the runs' reports):\n\n{}\n", lines.join("\n"));
    }
}

/// The cells' run warnings ([`RunReport::warnings`]) as `WORKLOAD, POLICY
/// (PARAMS): WARNING`, each distinct line once, in plan order.
///
/// [`RunReport::warnings`]: crate::report::RunReport::warnings
pub fn cell_warnings(records: &[super::CellRecord]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in records {
        let params = r.params_string();
        let cell = if params.is_empty() { r.policy.clone() } else { format!("{} ({params})", r.policy) };
        for w in &r.report.warnings {
            let line = format!("{}, {cell}: {w}", r.workload);
            if !seen.contains(&line) {
                seen.push(line);
            }
        }
    }
    seen
}

/// A [`Figure`]: the plot of the means, then a table of every workload.
fn lines(md: &mut String, f: &Figure, o: &Outcome, plotter: &mut Plotter) -> Result<(), ExperimentError> {
    let shown: Vec<String> = if f.only.is_empty() { o.workloads.clone() } else { f.only.clone() };
    let _ = writeln!(md, "\n## {} ({})\n", f.title, f.source);
    if plotter.enabled() {
        let series: Vec<(String, Vec<(f64, f64)>)> = f
            .series
            .iter()
            .map(|(name, pts)| {
                let p = pts.iter().filter_map(|(x, v)| o.mean_over(&shown, v, f.metric).map(|y| (*x, y))).collect();
                (name.clone(), p)
            })
            .filter(|(_, p): &(String, Vec<(f64, f64)>)| !p.is_empty())
            .collect();
        if !series.is_empty() {
            let title = format!("{} (mean over workloads)", f.title);
            plotter.lines(f.stem, &title, f.x_label, f.metric.label, &series)?;
            let _ = writeln!(md, "![{}](plots/{}.svg)\n", f.title, f.stem);
        }
    }
    let _ = writeln!(md, "{} by {}:\n", f.metric.label, f.x_label);
    let _ = write!(md, "| series | {} |", f.x_label);
    for w in &shown {
        let _ = write!(md, " {w} |");
    }
    let _ = writeln!(md, " mean |");
    let _ = writeln!(md, "|---|---:|{}---:|", "---:|".repeat(shown.len()));
    for (name, pts) in &f.series {
        for (x, v) in pts {
            let _ = write!(md, "| {name} | {} |", fmt_value(*x));
            for w in &shown {
                let cell = o.value(w, v, f.metric).map_or("–".to_string(), fmt_value);
                let _ = write!(md, " {cell} |");
            }
            let mean = o.mean_over(&shown, v, f.metric).map_or("–".to_string(), fmt_value);
            let _ = writeln!(md, " {mean} |");
        }
    }
    Ok(())
}

/// A [`Bars`] figure: heading, description, table, the paper's claims
/// beside ours, and the plot.
fn bars(md: &mut String, f: &Bars, o: &Outcome, plotter: &mut Plotter) -> Result<(), ExperimentError> {
    let _ = writeln!(md, "### {}: {}\n", f.number, f.title);
    match f.description {
        Some(text) => {
            let _ = writeln!(md, "{text}\n");
        }
        None => {
            let reference = o.variant_name(f.reference);
            let _ = writeln!(
                md,
                "{} normalized to {reference} (first numeric column: {reference}'s absolute value).\n",
                f.metric.label
            );
        }
    }
    // The table: rows = shown workloads + Average.
    let _ = write!(md, "| Workload | {} ({}) |", o.variant_name(f.reference), f.unit);
    for s in &f.subjects {
        let _ = write!(md, " {} |", o.variant_name(s));
    }
    md.push('\n');
    md.push_str("|---|---:|");
    for _ in &f.subjects {
        md.push_str("---:|");
    }
    md.push('\n');
    let mut cats = Vec::new();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); f.subjects.len()];
    for w in &o.workloads {
        let abs = o.value(w, f.reference, f.metric);
        let _ = write!(md, "| {} | {} |", o.name(w), num(abs, f.digits));
        for (i, s) in f.subjects.iter().enumerate() {
            let x = o.ratio(w, s, f.reference, f.metric);
            cols[i].push(x.unwrap_or(f64::NAN));
            let _ = write!(md, " {} |", num(x, 3));
        }
        md.push('\n');
        cats.push(o.name(w).to_string());
    }
    let _ = write!(md, "| **Average** | |");
    for c in &cols {
        let _ = write!(md, " **{}** |", num(mean(c), 3));
    }
    md.push('\n');
    cats.push("Avg.".to_string());
    let series: Vec<(String, Vec<f64>)> = f
        .subjects
        .iter()
        .zip(cols)
        .map(|(s, mut v)| {
            let m = mean(&v).unwrap_or(0.0);
            v.push(m);
            // Missing values (reference 0) are drawn as 0 and marked n/a in the table.
            let v = v.into_iter().map(|x| if x.is_finite() { x } else { 0.0 }).collect();
            (o.variant_name(s).to_string(), v)
        })
        .collect();
    // The paper's claims beside ours.
    let claims: Vec<&Comparison> = f.claims.iter().filter(|c| c.figure == f.number).collect();
    if !claims.is_empty() {
        md.push_str("\n| Paper's claim | Statistic | Paper | Ours | Ours − paper |\n|---|---|---:|---:|---:|\n");
        for c in claims {
            let ours = o.change(c);
            let _ = writeln!(
                md,
                "| {} ({}) | {} | {} | {} | {} |",
                c.what,
                c.source,
                c.stat_text(o, false),
                pct(c.percent),
                ours.map(pct).unwrap_or_else(|| "n/a".into()),
                ours.map(|x| format!("{:+.1} pp", x - c.percent)).unwrap_or_else(|| "n/a".into())
            );
        }
    }
    plotter.bars(f.stem, &format!("{}: {}", f.number, f.plot_title), f.y_label, &cats, &series)?;
    if plotter.enabled() {
        let _ = writeln!(md, "\n![{}](plots/{}.svg)\n", f.number, f.stem);
    } else {
        md.push('\n');
    }
    Ok(())
}

/// [`Cdfs`]: one read-latency CDF plot per shown workload (nothing without
/// plots).
fn cdfs(md: &mut String, c: &Cdfs, o: &Outcome, plotter: &mut Plotter) -> Result<(), ExperimentError> {
    if !plotter.enabled() {
        return Ok(());
    }
    for w in &o.workloads {
        let series: Vec<(String, Vec<(f64, f64)>)> = c
            .variants
            .iter()
            .filter_map(|v| {
                o.report(w, v)
                    .map(|r| (o.variant_name(v).to_string(), thin(plot::cdf_points_us(&r.histograms.read), 400)))
            })
            .filter(|(_, pts)| !pts.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let stem = format!("{}{w}", c.prefix);
        plotter.cdf(&stem, &format!("Read latency: {}", o.name(w)), &series)?;
        let _ = writeln!(md, "![{} read latency CDF](plots/{stem}.svg)\n", o.name(w));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Silent, WorkloadSpec};

    fn dedup_rate(r: &RunReport) -> f64 {
        r.summary.dedup_rate_achieved
    }

    /// A toy declaration runs through the generic runner: its cells are
    /// cached, its claims see the measured rows, its report holds a table
    /// row per series point and workload.
    #[test]
    fn a_declaration_runs_and_reports() {
        let spec: WorkloadSpec = "synth:requests=3000,read=0.3,footprint=32MiB,hot=0.4:8MiB".parse().unwrap();
        let metric = Metric { name: "dedup", label: "dedup rate", get: dedup_rate };
        let decl = Declaration::standard(
            "toy",
            "Toy",
            "nowhere",
            vec![WorkloadDef::new(spec)],
            vec![
                Variant::new("plain", "native", &[]),
                Variant::new("dedup", "dedup", &[]),
                // 2 ms per page hash: the engine cannot keep up.
                Variant::new("slow-hash", "dedup", &[("dedup.fingerprint", "\"2ms\"".to_string())]),
            ],
            vec![Figure {
                stem: "toy",
                title: "Dedup rate".into(),
                source: "Fig. 0",
                x_label: "x",
                metric,
                series: vec![("s".into(), vec![(0.0, "plain".into()), (1.0, "dedup".into())])],
                only: Vec::new(),
            }],
            vec![Claim {
                section: "§0",
                paper: "dedup finds duplicates".into(),
                measure: Box::new(move |o: &Outcome| format!("{:.3}", o.mean("dedup", metric).unwrap())),
            }],
            vec!["a note".into()],
        );
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config::fad_table1();
        let o = run(&decl, &cfg, dir.path(), 1, &Silent, "test", false).unwrap();
        let w = &o.workloads[0];
        assert_eq!(o.value(w, "plain", metric), Some(0.0));
        let d = o.value(w, "dedup", metric).unwrap();
        assert!(d > 0.1, "{d}");
        let md = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
        assert!(md.contains(&format!("| §0 | dedup finds duplicates | {d:.3} |")), "{md}");
        assert!(md.contains("| s | 1.00 |"), "{md}");
        assert!(md.contains("a note"));
        // Saturated hash stages head the report (this toy workload's writes
        // outrun even the default 32 us hash); native hashes nothing.
        assert!(md.contains("**Warnings** (from the runs' reports):"), "{md}");
        let warning = |cell: &str| {
            md.lines().any(|l| l.starts_with(&format!("* synthetic, {cell}: the hash engine is saturated")))
        };
        assert!(warning("dedup (dedup.fingerprint=\"2ms\")"), "{md}");
        assert!(!warning("native"), "{md}");
        assert!(dir.path().join("results.csv").exists());
        // A second run takes every cell from the cache and writes the same report.
        let again = run(&decl, &cfg, dir.path(), 1, &Silent, "test", false).unwrap();
        assert_eq!(again.value(w, "dedup", metric), Some(d));
        assert_eq!(std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap(), md);
    }

    /// Hidden workloads run but stay out of the tables and statistics; a
    /// [`Bars`] figure normalizes to its reference and puts its claims'
    /// statistic beside the paper's; [`Stat`]s aggregate per workload.
    #[test]
    fn bars_and_comparisons_cover_the_shown_workloads() {
        let mk = |spec: &str, label: &str| {
            let mut d = WorkloadDef::new(spec.parse::<WorkloadSpec>().unwrap());
            d.label = label.into();
            d
        };
        let variants = vec![Variant::new("plain", "native", &[]).named("Plain"), Variant::new("dedup", "dedup", &[])];
        let a = Workload::new(mk("synth:requests=2000,read=0.5,footprint=16MiB,hot=0.4:4MiB", "a"), variants.clone());
        let b = Workload::new(mk("synth:requests=2000,read=0.3,footprint=32MiB,hot=0.4:8MiB", "b"), variants.clone());
        let hidden = Workload {
            shown: false,
            ..Workload::new(mk("synth:requests=500,footprint=16MiB,hot=0.4:4MiB", "h"), variants)
        };
        let wv = Metric { name: "wv", label: "write volume", get: |r: &RunReport| r.summary.write_volume_pages as f64 };
        let claim = |stat| Comparison {
            figure: "Fig. 1",
            what: "dedup vs plain",
            stat,
            subject: "dedup",
            reference: "plain",
            metric: wv,
            percent: -10.0,
            source: "§1",
        };
        let claims = vec![claim(Stat::Mean), claim(Stat::On("b")), claim(Stat::MaxReduction)];
        let mut decl = Declaration::standard("t", "T", "s", Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        decl.workloads = vec![a, b, hidden];
        decl.report = vec![
            Block::Bars(Bars {
                number: "Fig. 1",
                stem: "f1",
                plot_title: "wv",
                title: "Write volume".into(),
                y_label: "normalized",
                metric: wv,
                subjects: vec!["dedup"],
                reference: "plain",
                unit: "pages",
                digits: 0,
                description: None,
                claims: claims.clone(),
            }),
            Block::Summary(claims.clone()),
        ];
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config::fad_table1();
        let o = run(&decl, &cfg, dir.path(), 2, &Silent, "test", false).unwrap();
        assert_eq!(o.workloads, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(o.exec.records.len(), 6, "the hidden workload's cells run too");
        assert!(o.report("h", "dedup").is_some());
        let change = |w: &str| (o.ratio(w, "dedup", "plain", wv).unwrap() - 1.0) * 100.0;
        let (ca, cb) = (change("a"), change("b"));
        assert!(ca < 0.0 && cb < 0.0, "dedup writes fewer pages: {ca} {cb}");
        assert_eq!(o.change(&claims[0]), Some((ca + cb) / 2.0));
        assert_eq!(o.change(&claims[1]), Some(cb));
        assert_eq!(o.change(&claims[2]), Some(ca.min(cb)));
        let md = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
        assert!(md.contains("| Workload | Plain (pages) | dedup |"), "{md}");
        assert!(!md.contains("| h |"), "hidden workload shown: {md}");
        assert!(md.contains(&format!("| dedup vs plain (§1) | on b | -10.0% | {} |", pct(cb))), "{md}");
        assert!(
            md.contains(&format!("| Fig. 1 | dedup vs plain | mean | -10.0% | {} |", pct((ca + cb) / 2.0))),
            "{md}"
        );
    }

    /// Every variant of `reproduce smartdedup` is a valid cell (engine
    /// parameters included), and each figure point names a variant.
    #[test]
    fn the_smartdedup_declaration_is_valid() {
        let cfg = Config::fad_table1();
        let decl = crate::experiment::smartdedup::declaration(&cfg, 0.05);
        // The three replicas, the FIO-like workload the metadata-writes
        // claim reads and the workload families (hidden).
        let families = crate::experiment::families::FITTED.len() + 4;
        assert_eq!(decl.workloads.len(), 4 + families);
        assert_eq!(decl.workloads.iter().filter(|w| w.shown).count(), 3);
        let plan = decl.plan(&cfg).unwrap();
        assert_eq!(plan.cells.len(), decl.variants().count(), "variants must be distinct cells");
        for b in &decl.report {
            if let Block::Lines(f) = b {
                for (_, pts) in &f.series {
                    for (_, v) in pts {
                        let shown =
                            decl.workloads.iter().filter(|w| f.only.is_empty() || f.only.contains(&w.def.label));
                        assert!(
                            shown.clone().count() == 3
                                && shown.clone().all(|w| w.variants.iter().any(|x| &x.label == v)),
                            "{v}"
                        );
                    }
                }
            }
        }
    }
}
