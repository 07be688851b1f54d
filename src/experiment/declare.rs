//! Reproductions as declarations: a paper's evaluation written down as
//! data (workloads, the variants each workload runs, the figures drawn from
//! them, the paper's claims with their sections) and served by one generic
//! runner ([`run`]: the cell cache of [`super::execute_in`], `results.csv` /
//! `results.json` of [`super::results`]) and one report writer
//! ([`write_report`]: REPORT.md with the claims table, one table and one
//! plot per figure).
//!
//! A new reproduction is a function returning a [`Declaration`] and one
//! `reproduce` subcommand that calls [`run`]; nothing else. `reproduce
//! smartdedup` is the first ([`super::smartdedup`]). `reproduce fad`
//! predates this layer and still has its own report writer
//! ([`super::fad`]); moving it here is open work (docs/reproduce.md).

use super::results::{self, ResultRow};
use super::{execute_in, param_applies, ExperimentError, Observer, Plan, WorkloadDef};
use crate::config::Config;
use crate::report::{RunReport, VERSION};
use std::fmt::Write as _;
use std::path::Path;

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

/// One configuration the paper evaluates: a policy with config overrides
/// (any `--set` key, e.g. `engine.smartdedup.memory_mb`), named.
#[derive(Clone, Debug)]
pub struct Variant {
    pub label: String,
    pub policy: String,
    pub params: Vec<(String, String)>,
}

impl Variant {
    pub fn new(label: impl Into<String>, policy: &str, params: &[(&str, String)]) -> Variant {
        Variant {
            label: label.into(),
            policy: policy.to_string(),
            params: params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }
}

/// A figure: per series, the metric of one variant at each x.
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

/// One of the paper's claims, with what dedupsim measured for it.
pub struct Claim {
    pub section: &'static str,
    /// The paper's words and numbers.
    pub paper: String,
    /// dedupsim's corresponding measurement, as text.
    pub measure: Box<dyn Fn(&Outcome) -> String + Send + Sync>,
}

/// A paper's evaluation as data. See the module doc.
pub struct Declaration {
    /// Subcommand name (`reproduce NAME`) and experiment name.
    pub name: String,
    pub title: String,
    /// The paper and the sections reproduced.
    pub source: String,
    pub workloads: Vec<WorkloadDef>,
    pub variants: Vec<Variant>,
    pub figures: Vec<Figure>,
    pub claims: Vec<Claim>,
    /// Paragraphs on what differs from the paper and why.
    pub notes: Vec<String>,
}

/// The merged result rows of a declaration, addressable by workload and
/// variant label.
pub struct Outcome {
    pub rows: Vec<ResultRow>,
    /// Workload labels in declaration order.
    pub workloads: Vec<String>,
    /// (workload label, variant label, row index).
    index: Vec<(String, String, usize)>,
}

impl Outcome {
    fn new(decl: &Declaration, rows: Vec<ResultRow>) -> Outcome {
        let mut index = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            for v in &decl.variants {
                let applied: Vec<(String, String)> =
                    v.params.iter().filter(|(k, _)| param_applies(k, &v.policy)).cloned().collect();
                if r.policy == v.policy && r.params == applied {
                    index.push((r.workload.clone(), v.label.clone(), i));
                }
            }
        }
        Outcome { rows, workloads: decl.workloads.iter().map(|w| w.label.clone()).collect(), index }
    }

    /// The report of `variant` on `workload`.
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
}

/// Runs a declaration into `out`: cells (cached) into `out/cells/`, merged
/// rows into `results.csv` / `results.json`, REPORT.md and (with `plots`)
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
    let mut plan = Plan::new(&decl.name);
    for w in &decl.workloads {
        let wi = plan.add_workload(w.clone())?;
        for v in &decl.variants {
            plan.add_cell(wi, &v.policy, &v.params, base)?;
        }
    }
    let mut identity = serde_json::Map::new();
    identity.insert("reproduce".into(), decl.name.clone().into());
    let exec = execute_in(&plan, out, jobs, obs, identity)?;
    let rows = results::merge_records(&exec.records);
    results::write(out, &rows)?;
    let outcome = Outcome::new(decl, rows);
    write_report(decl, &outcome, out, command, plots)?;
    Ok(outcome)
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

/// Writes `out/REPORT.md` (and the plots): claims, then per figure a plot
/// of the mean over the workloads and a table of every workload's value.
pub fn write_report(
    decl: &Declaration,
    o: &Outcome,
    out: &Path,
    command: &str,
    plots: bool,
) -> Result<(), ExperimentError> {
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", decl.title);
    let _ = writeln!(md, "Source: {}.\n", decl.source);
    let _ = writeln!(md, "Produced by `{command}` (dedupsim {VERSION}). Every number below is measured from `results.csv` / `results.json` in this directory; cells are cached in `cells/`.\n");
    let _ = writeln!(md, "Workloads: {}.\n", o.workloads.join(", "));
    let _ = writeln!(md, "## The paper's claims and what dedupsim measures\n");
    let _ = writeln!(md, "| § | the paper | dedupsim |");
    let _ = writeln!(md, "|---|---|---|");
    for c in &decl.claims {
        let _ = writeln!(md, "| {} | {} | {} |", c.section, c.paper, (c.measure)(o));
    }
    for f in &decl.figures {
        let shown: Vec<String> = if f.only.is_empty() { o.workloads.clone() } else { f.only.clone() };
        let _ = writeln!(md, "\n## {} ({})\n", f.title, f.source);
        if plots {
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
                let stem = out.join("plots").join(f.stem);
                std::fs::create_dir_all(out.join("plots"))
                    .map_err(|error| ExperimentError::Io { path: out.join("plots"), error })?;
                let title = format!("{} (mean over workloads)", f.title);
                crate::plot::lines(&stem, &title, f.x_label, f.metric.label, &series)
                    .map_err(|e| ExperimentError::Plot { stem: f.stem.to_string(), reason: e.to_string() })?;
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
    }
    if !decl.notes.is_empty() {
        let _ = writeln!(md, "\n## Notes\n");
        for n in &decl.notes {
            let _ = writeln!(md, "{n}\n");
        }
    }
    crate::output::write_bytes(&out.join("REPORT.md"), md.as_bytes())?;
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
        let decl = Declaration {
            name: "toy".into(),
            title: "Toy".into(),
            source: "nowhere".into(),
            workloads: vec![WorkloadDef::new(spec)],
            variants: vec![Variant::new("plain", "native", &[]), Variant::new("dedup", "dedup", &[])],
            figures: vec![Figure {
                stem: "toy",
                title: "Dedup rate".into(),
                source: "Fig. 0",
                x_label: "x",
                metric,
                series: vec![("s".into(), vec![(0.0, "plain".into()), (1.0, "dedup".into())])],
                only: Vec::new(),
            }],
            claims: vec![Claim {
                section: "§0",
                paper: "dedup finds duplicates".into(),
                measure: Box::new(move |o: &Outcome| format!("{:.3}", o.mean("dedup", metric).unwrap())),
            }],
            notes: vec!["a note".into()],
        };
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
        assert!(dir.path().join("results.csv").exists());
        // A second run takes every cell from the cache and writes the same report.
        let again = run(&decl, &cfg, dir.path(), 1, &Silent, "test", false).unwrap();
        assert_eq!(again.value(w, "dedup", metric), Some(d));
        assert_eq!(std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap(), md);
    }

    /// Every variant of `reproduce smartdedup` is a valid cell (engine
    /// parameters included), and each figure point names a variant.
    #[test]
    fn the_smartdedup_declaration_is_valid() {
        let cfg = Config::fad_table1();
        let decl = crate::experiment::smartdedup::declaration(&cfg, 0.05);
        assert_eq!(decl.workloads.len(), 3);
        let mut plan = Plan::new("t");
        let w = plan.add_workload(decl.workloads[0].clone()).unwrap();
        for v in &decl.variants {
            plan.add_cell(w, &v.policy, &v.params, &cfg).unwrap();
        }
        assert_eq!(plan.cells.len(), decl.variants.len(), "variants must be distinct cells");
        for f in &decl.figures {
            for (_, pts) in &f.series {
                for (_, v) in pts {
                    assert!(decl.variants.iter().any(|x| &x.label == v), "{v}");
                }
            }
        }
    }
}
