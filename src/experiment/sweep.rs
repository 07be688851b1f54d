//! `dedupsim sweep`: user-defined grids (workloads × policies × parameter
//! lists) run like the reproduction, or emitted as one command line per
//! cell for GNU parallel / Slurm job arrays and merged with `sweep collect`.
//!
//! # File format (TOML; example in `docs/examples/sweep.toml`)
//!
//! ```toml
//! name = "rho-sweep"                # optional, default: the file stem
//! base = "fad-table1"               # optional preset or config file (relative to this file)
//! seed = 42                         # optional, overrides the config's seed
//! content = "zipf:a=0.2,dedup=0.5"  # optional, content of pages without content
//! utilization = 0.4                 # optional, load of Table II replicas
//! files = "request"                 # optional: "merged" joins contiguous same-op records (FAD-SSDsim)
//! dedup_rate = "device"             # optional: replicas match Table II's dedup rate on the device or the trace
//!
//! [set]                             # optional overrides for every cell
//! "timing.read" = "25us"
//!
//! [grid]
//! workloads = ["mail@0.05", "synth:requests=100k,read=0.5", "trace:traces/hm_0.csv"]
//! policies = ["dedup", "fad"]       # or ["all"]
//!
//! [grid.set]                        # cartesian product of value lists
//! "policy.fad.rho" = [0.1, 0.2, 0.3]
//! seed = [1, 2]
//! ```
//!
//! A `policy.<name>.*` parameter only applies to policy `<name>` and its
//! `<name>-*` variants, so the `dedup` cells above run once, not three times.
//! Cells that differ only in `seed` are shards of one result row: `collect`
//! (and `sweep FILE`) merge them by merging their latency histograms and
//! summing their counters, never by averaging percentiles.

use super::results::{self, ResultRow};
use super::workload::{WorkloadDef, WorkloadSpec};
use super::{config_with, execute, execute_in, CellRecord, ExecOptions, ExecOutcome, ExperimentError, Observer, Plan};
use crate::config::{Config, ConfigError};
use crate::content::ContentModel;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    base: Option<String>,
    seed: Option<u64>,
    content: Option<String>,
    utilization: Option<f64>,
    files: Option<String>,
    dedup_rate: Option<String>,
    #[serde(default)]
    set: toml::Table,
    grid: GridFile,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    workloads: Vec<String>,
    policies: Vec<String>,
    #[serde(default)]
    set: toml::Table,
}

/// Where the base configuration comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseSource {
    /// The default (`fad-table1`).
    Default,
    Preset(String),
    /// A config file (absolute path).
    File(PathBuf),
}

/// The settings every cell of a sweep shares (also what a `run-cell`
/// command line carries).
#[derive(Clone, Debug, PartialEq)]
pub struct Common {
    pub name: String,
    pub base: BaseSource,
    /// Overrides applied to the base document (`key`, TOML value).
    pub fixed: Vec<(String, String)>,
    pub seed: Option<u64>,
    pub content: ContentModel,
    pub utilization: f64,
    /// What a file is (`files = "request" | "merged"`, default request).
    pub files: crate::workload::FileRule,
    /// Replicas: what Table II's dedup rate is matched on
    /// (`dedup_rate = "device" | "trace"`, default device).
    pub dedup_target: super::replica::DedupTarget,
}

impl Common {
    /// The base config: base document with the fixed overrides, then seed.
    pub fn config(&self) -> Result<Config, ExperimentError> {
        let sets: Vec<String> = self.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let src = match &self.base {
            BaseSource::Default => None,
            BaseSource::Preset(p) => Some(p.clone()),
            BaseSource::File(f) => Some(f.display().to_string()),
        };
        let mut cfg = Config::load(src.as_deref(), &sets)?;
        if let Some(s) = self.seed {
            cfg.seed = s;
        }
        Ok(cfg)
    }

    /// A workload of the sweep; replicas are loaded for the base device.
    fn workload(&self, spec: WorkloadSpec, base: &Config) -> WorkloadDef {
        let mut def = WorkloadDef::new(spec);
        def.content = self.content;
        def.utilization = self.utilization;
        def.device = super::replica::ReplicaDevice::of(base);
        def.files = self.files;
        def.dedup_target = self.dedup_target;
        def
    }
}

/// A parsed sweep file.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub common: Common,
    pub workloads: Vec<WorkloadSpec>,
    pub policies: Vec<String>,
    /// Parameter dimensions: key and its values (TOML).
    pub grid: Vec<(String, Vec<String>)>,
}

fn value_string(v: &toml::Value) -> String {
    v.to_string()
}

/// Rows of one workload and policy that differ in their parameters but
/// not in their results: the policy does not read a parameter the grid
/// varies (`fad-rpo` never rewrites, so `policy.fad.rho` cannot change
/// it), and the rows repeat one result. One message per such group.
pub fn identical_rows(rows: &[ResultRow]) -> Vec<String> {
    let result = |r: &ResultRow| {
        serde_json::to_string(&(&r.report.summary, &r.report.counters, &r.report.dof, &r.report.histograms))
            .unwrap_or_default()
    };
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    for r in rows {
        let group = (r.workload.as_str(), r.policy.as_str());
        if seen.contains(&group) {
            continue;
        }
        seen.push(group);
        let same: Vec<&ResultRow> = rows.iter().filter(|x| (x.workload.as_str(), x.policy.as_str()) == group).collect();
        if same.len() < 2 || same.iter().any(|x| result(x) != result(r)) {
            continue;
        }
        let keys: Vec<&str> = r
            .params
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| {
                same.iter().any(|x| x.params.iter().find(|(xk, _)| xk == k) != r.params.iter().find(|(rk, _)| rk == k))
            })
            .collect();
        if keys.is_empty() {
            continue;
        }
        out.push(format!(
            "{} on {}: the {} rows that differ in {} have identical results: {} does not read {} here, so the \
             rows repeat one result (leave the policy out of that grid dimension)",
            r.policy,
            r.workload,
            same.len(),
            keys.join(", "),
            r.policy,
            if keys.len() == 1 { "it" } else { "them" }
        ));
    }
    out
}

/// A sweep name becomes the default output directory `out/<name>` (and is
/// stamped into every cell): it must be one plain path component.
fn check_name(name: &str) -> Result<(), String> {
    let plain = !name.trim().is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && !name.chars().any(char::is_control);
    if plain {
        Ok(())
    } else {
        Err(format!(
            "name {} is not a plain directory name (no `/`, `\\` or `..`): it names the output directory \
             out/<name>",
            crate::trace::quote(name)
        ))
    }
}

/// The 1-based line of `text` where `key` is given in table `section`
/// (`"grid.set"`, `"set"`, `"grid"`, or `""` for the top level): a line
/// `key = ...`, `"key" = ...` or `'key' = ...` under that table's header.
/// `None` when the key is written another way (an inline table, a dotted
/// key); the message then names the table and key without a line.
fn key_line(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[').filter(|h| !h.starts_with('[')) {
            current = h.split(']').next().unwrap_or("").split('.').map(str::trim).collect::<Vec<_>>().join(".");
            continue;
        }
        if current != section {
            continue;
        }
        let rest = [format!("\"{key}\""), format!("'{key}'"), key.to_string()]
            .into_iter()
            .find_map(|k| t.strip_prefix(k.as_str()).map(str::to_string));
        if rest.is_some_and(|r| r.trim_start().starts_with('=')) {
            return Some(i + 1);
        }
    }
    None
}

/// The 1-based line of the first `"value"` (a quoted string) in table
/// `section` of `text`, for a bad entry of a list (`policies`).
fn value_line(text: &str, section: &str, value: &str) -> Option<usize> {
    let quoted = [format!("\"{value}\""), format!("'{value}'")];
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[').filter(|h| !h.starts_with('[') && !h.contains(['"', '\''])) {
            current = h.split(']').next().unwrap_or("").trim().to_string();
            continue;
        }
        if current == section && quoted.iter().any(|q| line.contains(q.as_str())) {
            return Some(i + 1);
        }
    }
    None
}

/// What is wrong with one override of a sweep file, without the `--set`
/// wording the config layer uses for command-line overrides, nor a line of
/// the internal document the override was checked in.
fn override_problem(e: ExperimentError) -> String {
    match e {
        ExperimentError::Config(ConfigError::Parse { message, .. }) => message,
        ExperimentError::Config(ConfigError::Override { message, .. }) => message,
        ExperimentError::Config(ConfigError::UnknownKey { key, section, valid, .. }) => {
            format!("unknown key `{key}`; valid keys{section}: {valid}")
        }
        other => other.to_string(),
    }
}

impl Sweep {
    /// Reads and checks a sweep file.
    pub fn load(path: &Path) -> Result<Sweep, ExperimentError> {
        let text =
            crate::params::read_text(path).map_err(|error| ExperimentError::Io { path: path.to_path_buf(), error })?;
        Sweep::parse(&text, path)
    }

    /// Parses sweep text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Sweep, ExperimentError> {
        let bad = |reason: String| ExperimentError::Sweep { path: path.display().to_string(), reason };
        // `sweep file FILE:LINE: ...` where the line is known.
        let bad_at = |line: Option<usize>, reason: String| ExperimentError::Sweep {
            path: match line {
                Some(l) => format!("{}:{l}", path.display()),
                None => path.display().to_string(),
            },
            reason,
        };
        let top = |key: &str| key_line(text, "", key);
        let f: SweepFile = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let abs = |p: &str| -> PathBuf {
            let pb = PathBuf::from(p);
            let joined = if pb.is_relative() { dir.join(pb) } else { pb };
            std::fs::canonicalize(&joined).unwrap_or(joined)
        };
        let base = match f.base.as_deref() {
            None => BaseSource::Default,
            Some(b) if Config::preset_source(b).is_some() => BaseSource::Preset(b.to_string()),
            Some(b) => {
                let p = abs(b);
                if !p.is_file() {
                    return Err(bad_at(
                        top("base"),
                        format!("base `{b}` is neither a preset nor an existing config file"),
                    ));
                }
                BaseSource::File(p)
            }
        };
        let content = match &f.content {
            Some(c) => c.parse().map_err(|e| bad_at(top("content"), format!("content: {e}")))?,
            None => ContentModel::fad_calibrated(),
        };
        let utilization = f.utilization.unwrap_or(super::replica::DEFAULT_UTILIZATION);
        if !(super::replica::MIN_UTILIZATION..=1.0).contains(&utilization) {
            return Err(bad_at(
                top("utilization"),
                format!(
                    "utilization {} must be in [{:e}, 1] (a lower load spreads arrivals beyond the simulated clock)",
                    crate::units::short_f64(utilization),
                    super::replica::MIN_UTILIZATION
                ),
            ));
        }
        let files = match &f.files {
            Some(s) => s.parse().map_err(|e| bad_at(top("files"), format!("files: {e}")))?,
            None => crate::workload::FileRule::Request,
        };
        let dedup_target = match &f.dedup_rate {
            Some(s) => s.parse().map_err(|e| bad_at(top("dedup_rate"), format!("dedup_rate: {e}")))?,
            None => super::replica::DedupTarget::default(),
        };
        let name = f.name.clone().unwrap_or_else(|| {
            path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "sweep".into())
        });
        check_name(&name).map_err(|e| bad_at(top("name"), e))?;
        let fixed: Vec<(String, String)> = f.set.iter().map(|(k, v)| (k.clone(), value_string(v))).collect();
        if f.grid.workloads.is_empty() {
            return Err(bad("[grid] workloads is empty".into()));
        }
        let mut workloads = Vec::new();
        for w in &f.grid.workloads {
            let spec: WorkloadSpec = w
                .parse()
                .map_err(|e: ExperimentError| bad_at(value_line(text, "grid", w), format!("[grid] workloads: {e}")))?;
            let spec = match spec {
                WorkloadSpec::Trace(p) => {
                    let p = abs(&p.display().to_string());
                    // A missing or unreadable trace is named by its line
                    // now, not found after other cells have run.
                    crate::trace::detect_file(&p).map_err(|e| {
                        bad_at(value_line(text, "grid", w), format!("[grid] workloads: workload `{w}`: {e}"))
                    })?;
                    WorkloadSpec::Trace(p)
                }
                other => other,
            };
            workloads.push(spec);
        }
        let mut policies = Vec::new();
        for p in &f.grid.policies {
            if p == "all" {
                policies.extend(crate::policy::names().into_iter().map(String::from));
            } else if crate::policy::names().contains(&p.as_str()) {
                policies.push(p.clone());
            } else {
                return Err(bad_at(
                    value_line(text, "grid", p),
                    format!("unknown policy `{p}`; available: {} (or all)", crate::policy::names().join(", ")),
                ));
            }
        }
        if policies.is_empty() {
            return Err(bad("[grid] policies is empty".into()));
        }
        let mut grid = Vec::new();
        for (k, v) in &f.grid.set {
            let values = match v {
                toml::Value::Array(a) if !a.is_empty() => a.iter().map(value_string).collect(),
                toml::Value::Array(_) => {
                    return Err(bad_at(key_line(text, "grid.set", k), format!("[grid.set] `{k}` is an empty list")))
                }
                other => vec![value_string(other)],
            };
            grid.push((k.clone(), values));
        }
        let sweep = Sweep {
            common: Common { name, base, fixed, seed: f.seed, content, utilization, files, dedup_target },
            workloads,
            policies,
            grid,
        };
        // Validate the config early (unknown keys, bad values), naming the
        // table of the sweep file an override comes from.
        // A policy parameter (`policy.fad.rho`) is read when a policy of
        // the grid reading it is built: build them here too, so that a bad
        // value is named by its line rather than found when planning.
        let check = |base: &Config, table: &str, k: &str, v: &str| -> Result<(), ExperimentError> {
            let line = key_line(text, table, k);
            let cfg = config_with(base, &[(k.to_string(), v.to_string())])
                .map_err(|e| bad_at(line, format!("[{table}] `{k}` = {v}: {}", override_problem(e))))?;
            for p in sweep.policies.iter().filter(|p| k.starts_with("policy.") && super::param_applies(k, p)) {
                crate::policy::build(p, &cfg).map_err(|e| {
                    let e = e.to_string().replace("\nin `", " in `");
                    bad_at(line, format!("[{table}] `{k}` = {v}: policy {p}: {e}"))
                })?;
            }
            Ok(())
        };
        let base = Common { fixed: Vec::new(), ..sweep.common.clone() }.config()?;
        for (k, v) in &sweep.common.fixed {
            check(&base, "set", k, v)?;
        }
        let base = sweep.common.config()?;
        for (k, values) in &sweep.grid {
            for v in values {
                check(&base, "grid.set", k, v)?;
            }
        }
        Ok(sweep)
    }

    /// Every combination of the grid's parameter values, in file order (the
    /// last dimension varies fastest).
    pub fn combinations(&self) -> Vec<Vec<(String, String)>> {
        let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for (k, values) in &self.grid {
            let mut next = Vec::new();
            for prefix in &out {
                for v in values {
                    let mut c = prefix.clone();
                    c.push((k.clone(), v.clone()));
                    next.push(c);
                }
            }
            out = next;
        }
        out
    }

    /// The plan: workloads × policies × combinations (cells equal after
    /// dropping parameters that do not apply are run once).
    pub fn plan(&self) -> Result<Plan, ExperimentError> {
        let base = self.common.config()?;
        let mut plan = Plan::new(&self.common.name);
        let combos = self.combinations();
        for spec in &self.workloads {
            let w = plan.add_workload(self.common.workload(spec.clone(), &base))?;
            for combo in &combos {
                for p in &self.policies {
                    plan.add_cell(w, p, combo, &base)?;
                }
            }
        }
        Ok(plan)
    }

    /// One command line per cell of `plan`, each writing its cell JSON into
    /// `out/cells/` (see [`CellArgs`]).
    pub fn job_lines(&self, plan: &Plan, out: &Path, program: &str) -> Vec<String> {
        plan.cells
            .iter()
            .map(|c| {
                CellArgs {
                    common: self.common.clone(),
                    workload: plan.workloads[c.workload].spec.to_string(),
                    policy: c.policy.clone(),
                    params: c.params.clone(),
                    out: out.to_path_buf(),
                }
                .command_line(program)
            })
            .collect()
    }
}

/// Quotes a word for POSIX shells (only when needed).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One cell as a self-contained command (`dedupsim sweep run-cell ...`).
#[derive(Clone, Debug, PartialEq)]
pub struct CellArgs {
    pub common: Common,
    /// Workload string (see [`WorkloadSpec`]).
    pub workload: String,
    pub policy: String,
    /// The cell's parameters (`key`, TOML value).
    pub params: Vec<(String, String)>,
    /// Output directory; the cell goes to `out/cells/`.
    pub out: PathBuf,
}

impl CellArgs {
    /// The command line, starting with `program`.
    pub fn command_line(&self, program: &str) -> String {
        let mut a: Vec<String> = vec![program.to_string(), "sweep".into(), "run-cell".into()];
        let mut push = |k: &str, v: String| {
            a.push(k.to_string());
            a.push(shell_quote(&v));
        };
        push("--name", self.common.name.clone());
        match &self.common.base {
            BaseSource::Default => {}
            BaseSource::Preset(p) => push("--preset", p.clone()),
            BaseSource::File(f) => push("--config", f.display().to_string()),
        }
        for (k, v) in &self.common.fixed {
            push("--set", format!("{k}={v}"));
        }
        if let Some(s) = self.common.seed {
            push("--seed", s.to_string());
        }
        push("--content", self.common.content.to_string());
        push("--utilization", self.common.utilization.to_string());
        push("--files", self.common.files.name().to_string());
        push("--dedup-rate", self.common.dedup_target.name().to_string());
        push("--workload", self.workload.clone());
        push("--policy", self.policy.clone());
        for (k, v) in &self.params {
            push("--param", format!("{k}={v}"));
        }
        push("--out", self.out.display().to_string());
        a.join(" ")
    }

    /// Runs the cell (or finds it cached) and returns its record.
    pub fn run(&self, obs: &dyn Observer) -> Result<(CellRecord, bool), ExperimentError> {
        let base = self.common.config()?;
        let spec: WorkloadSpec = self.workload.parse()?;
        let mut plan = Plan::new(&self.common.name);
        let w = plan.add_workload(self.common.workload(spec, &base))?;
        plan.add_cell(w, &self.policy, &self.params, &base)?;
        let exec = execute(&plan, &ExecOptions { jobs: 1, cells_dir: self.out.join("cells") }, obs)?;
        let cached = exec.cached == 1;
        let rec = exec.records.into_iter().next().ok_or_else(|| ExperimentError::Internal("no cell".into()))?;
        Ok((rec, cached))
    }
}

/// Runs a sweep into `out`: cells into `out/cells/`, merged rows into
/// `out/results.csv` and `out/results.json`, wall times into
/// `out/timing.json`.
pub fn run(
    sweep: &Sweep,
    out: &Path,
    jobs: usize,
    obs: &dyn Observer,
) -> Result<(ExecOutcome, Vec<ResultRow>), ExperimentError> {
    let plan = sweep.plan()?;
    // Each cell's config hash and seed are in its record already.
    let mut identity = serde_json::Map::new();
    identity.insert("sweep".into(), plan.name.clone().into());
    let exec = execute_in(&plan, out, jobs, obs, identity)?;
    let rows = results::merge_records(&exec.records);
    results::write(out, &rows)?;
    Ok((exec, rows))
}

/// Merges every cell file under `dir` (`dir/cells/*.json` or `dir/*.json`)
/// into `dir/results.csv` and `dir/results.json`.
pub fn collect(dir: &Path) -> Result<(usize, Vec<ResultRow>), ExperimentError> {
    let records = results::read_cells(dir)?;
    let rows = results::merge_records(&records);
    results::write(dir, &rows)?;
    Ok((records.len(), rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: &str = "[grid]\nworkloads = [\"synth:requests=1k\"]\npolicies = [\"dedup\"]\n";

    #[test]
    fn bad_override_keys_name_the_sweep_table() {
        let text = format!("{GRID}[grid.set]\n\"geometry.chanels\" = [2, 4]\n");
        let e = Sweep::parse(&text, Path::new("s.toml")).unwrap_err().to_string();
        assert!(
            e.starts_with("sweep file s.toml:5: [grid.set] `geometry.chanels` = 2: unknown key `geometry.chanels`; valid keys in [geometry]: channels"),
            "{e}"
        );
        assert!(!e.contains("--set"), "{e}");
        let text = format!("[set]\n\"timing.reed\" = \"25us\"\n{GRID}");
        let e = Sweep::parse(&text, Path::new("s.toml")).unwrap_err().to_string();
        assert!(e.starts_with("sweep file s.toml:2: [set] `timing.reed` = \"25us\": unknown key `timing.reed`"), "{e}");
        assert!(!e.contains("--set"), "{e}");
        // A bad value for a valid key names the table as well.
        let text = format!("{GRID}[grid.set]\n\"geometry.channels\" = [2, 0]\n");
        let e = Sweep::parse(&text, Path::new("s.toml")).unwrap_err().to_string();
        assert!(e.starts_with("sweep file s.toml:5: [grid.set] `geometry.channels` = 0: "), "{e}");
        // A bad value is named by the sweep file's line, not by a line and
        // column of the internal document it was checked in (issue 30).
        let text = format!("{GRID}\n[grid.set] # comment\n'timing.read' = [\"20us\",\n \"bogus\"]\n");
        let e = Sweep::parse(&text, Path::new("s.toml")).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "sweep file s.toml:6: [grid.set] `timing.read` = \"bogus\": timing.read: `bogus` is not a time"
            ),
            "{e}"
        );
        assert!(!e.contains("column") && !e.contains("fad-table1"), "{e}");
        // Policy parameters are checked when the file is read, by line.
        let text = format!("{GRID}[set]\npolicy.fad.rho = 0.1\n\"policy.dedup.x\" = 1\n");
        assert!(Sweep::parse(&text, Path::new("s.toml")).is_err());
        let text =
            "[grid]\nworkloads = [\"synth:requests=1k\"]\npolicies = [\"fad\"]\n[set]\n\"policy.fad.rho\" = \"x\"\n";
        let e = Sweep::parse(text, Path::new("s.toml")).unwrap_err().to_string();
        assert!(e.starts_with("sweep file s.toml:5: [set] `policy.fad.rho` = \"x\": policy fad: "), "{e}");
        // A bad list entry or top-level key is named by its line too.
        let text =
            "utilization = 2\n[grid]\nworkloads = [\"synth:requests=1k\"]\npolicies = [\"dedup\",\n  \"fadd\"]\n";
        let e = Sweep::parse(text, Path::new("s.toml")).unwrap_err().to_string();
        assert!(e.starts_with("sweep file s.toml:1: utilization 2 must be in"), "{e}");
        let e = Sweep::parse(&text[16..], Path::new("s.toml")).unwrap_err().to_string();
        assert!(e.starts_with("sweep file s.toml:4: unknown policy `fadd`"), "{e}");
        // Valid grids still parse.
        let text = format!("{GRID}[grid.set]\n\"geometry.channels\" = [2, 4]\nseed = [1, 2]\n");
        assert_eq!(Sweep::parse(&text, Path::new("s.toml")).unwrap().combinations().len(), 4);
    }

    #[test]
    fn names_that_escape_the_output_directory_are_rejected() {
        for name in ["../../x", "a/b", "..", ".", "", "a\\b", "/abs"] {
            let text = format!("name = {name:?}\n{GRID}");
            let e = Sweep::parse(&text, Path::new("s.toml")).unwrap_err().to_string();
            assert!(e.contains("is not a plain directory name"), "{name}: {e}");
        }
        for name in ["rho-sweep", "..x", "a.b", "run 1"] {
            let text = format!("name = {name:?}\n{GRID}");
            assert_eq!(Sweep::parse(&text, Path::new("s.toml")).unwrap().common.name, name);
        }
    }
}
