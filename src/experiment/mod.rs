//! Experiments: grids of (workload × policy × parameters) *cells*, run in
//! parallel with a resumable on-disk cache, and the reports built on them.
//!
//! ```text
//! Plan (workloads, cells) --execute()--> CellRecord per cell (<out>/cells/*.json)
//!        |                                      |
//!   declare::Declaration::plan        results::write (results.csv / .json)
//!   (reproduce fad, smartdedup, ...)  declare::write_report (REPORT.md + plots)
//!   sweep::plan (TOML grid)
//! ```
//!
//! * A **cell** is one run: a workload, a policy and the config overrides
//!   that matter to that policy (a `policy.fad.*` override is dropped for
//!   `dedup`, so its cell is shared by every value of the parameter).
//! * Its **cache key** hashes the dedupsim version, the hash of the cell's
//!   effective config (seed included; parameter tables of *other* policies
//!   dropped, so changing `policy.har.*` does not invalidate `fad` cells),
//!   the workload identity (a replica's full
//!   derived spec, a trace's path, size and modification time, the content
//!   model) and the policy name. A finished cell is one JSON file
//!   `<out>/cells/<workload>__<policy>__<key>.json` holding the whole
//!   [`RunReport`] (full HDR histograms); [`execute`] skips cells whose file
//!   exists and parses, so an interrupted run resumes and a re-run with one
//!   changed parameter recomputes only the cells whose key changed.
//! * [`execute`] prepares each workload once (generation, preconditioning,
//!   content), shares it read-only among its cells, runs cells on a rayon
//!   pool of `jobs` threads pulling cells in plan order (cells of one
//!   workload are contiguous, so only about `jobs` prepared workloads are in
//!   memory at once) and drops a workload after its last cell.
//!
//! Results files contain no wall-clock times: the same command gives
//! byte-identical `results.csv` / `results.json`. Timings go to `timing.json`
//! ([`execute_in`]).

pub mod declare;
pub mod fad;
pub mod families;
pub mod fast24;
pub mod gap;
pub mod lightdedup;
pub mod lightdedup_pm;
pub mod paper;
pub mod papers;
pub mod reodedup;
pub mod replica;
pub mod results;
pub mod smartdedup;
pub mod sweep;
pub mod workload;

use crate::config::{apply_override, Config, ConfigError};
use crate::policy;
use crate::report::{RunReport, VERSION};
use crate::runner::{self, Prepared, RunError};
use crate::sim::RunOptions;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use thiserror::Error;
pub use workload::{WorkloadDef, WorkloadSpec, WorkloadSummary};

/// Errors of experiments.
#[derive(Debug, Error)]
pub enum ExperimentError {
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{path}: invalid JSON: {error}")]
    Json { path: PathBuf, error: serde_json::Error },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("workload `{workload}`: {reason}")]
    Workload { workload: String, reason: String },
    #[error("cell {cell}: {source}")]
    Run {
        cell: String,
        #[source]
        source: RunError,
    },
    #[error("policy `{policy}`: {reason}")]
    Policy { policy: String, reason: String },
    #[error("sweep file {path}: {reason}")]
    Sweep { path: String, reason: String },
    #[error("no cell results found in {0} (expected <dir>/cells/*.json or <dir>/*.json)")]
    NoCells(PathBuf),
    #[error("plot {stem}: {reason}")]
    Plot { stem: String, reason: String },
    #[error("{0}")]
    Internal(String),
}

/// A failed output file (written whole or not at all, [`crate::output`]).
impl From<crate::output::OutputError> for ExperimentError {
    fn from(e: crate::output::OutputError) -> Self {
        ExperimentError::Io { path: e.path, error: e.source }
    }
}

/// One cell of a plan.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Index into [`Plan::workloads`].
    pub workload: usize,
    pub policy: String,
    /// Config overrides (`key`, TOML value) relevant to this policy.
    pub params: Vec<(String, String)>,
    /// The resolved config (base + params).
    pub config: Config,
    /// Cache key (16 hex digits).
    pub key: String,
    /// Index of the prepared workload this cell replays (workloads that
    /// differ in seed or geometry are prepared separately).
    slot: usize,
}

impl Cell {
    /// `key=value;key=value` of the params (empty when none).
    pub fn params_string(&self) -> String {
        params_string(&self.params)
    }
}

/// `key=value;key=value`.
pub fn params_string(params: &[(String, String)]) -> String {
    params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(";")
}

/// A grid of cells over workloads.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Experiment name (stamped into records).
    pub name: String,
    pub workloads: Vec<WorkloadDef>,
    pub cells: Vec<Cell>,
    /// Workload identities, parallel to `workloads`.
    identities: Vec<String>,
    /// Prepared-workload slots: (workload, seed, page size, logical pages).
    slots: Vec<(usize, u64, u32, u64)>,
    /// Cells report per-chip and per-channel use ([`RunOptions::resources`]);
    /// a cached cell without them is recomputed.
    pub resources: bool,
}

/// Whether a config override applies to a policy: `policy.<table>.*`
/// applies to the policy named `<table>` and to its variants `<table>-*`
/// (`policy.fad.rho` to `fad`, `fad-rpo`, ...); every other key applies to
/// all policies.
pub fn param_applies(key: &str, policy: &str) -> bool {
    match key.strip_prefix("policy.").and_then(|r| r.split('.').next()) {
        Some(table) => policy == table || policy.strip_prefix(table).is_some_and(|r| r.starts_with('-')),
        None => true,
    }
}

/// `base` with `overrides` (`key`, TOML value) applied, re-validated.
pub fn config_with(base: &Config, overrides: &[(String, String)]) -> Result<Config, ExperimentError> {
    if overrides.is_empty() {
        return Ok(base.clone());
    }
    let mut table: toml::Table =
        toml::from_str(&base.to_toml_string()).map_err(|e| ExperimentError::Internal(e.to_string()))?;
    for (k, v) in overrides {
        apply_override(&mut table, &format!("{k}={v}"))?;
    }
    // A bad value is reported by its key (`timing.read: ...`), not by a
    // line and column of the document built here, which no user sees.
    crate::config::RawConfig::from_table(table.clone(), &format!("{} with overrides", base.name))?;
    let text = toml::to_string(&table).map_err(|e| ExperimentError::Internal(e.to_string()))?;
    let mut cfg = Config::from_toml_str(&text, &base.name)?;
    cfg.name = base.name.clone();
    Ok(cfg)
}

/// The cache key of a run.
pub fn cell_key(config_hash: &str, workload_identity: &str, policy: &str) -> String {
    let text = format!("dedupsim {VERSION}\nconfig {config_hash}\nworkload {workload_identity}\npolicy {policy}\n");
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

impl Plan {
    pub fn new(name: &str) -> Plan {
        Plan { name: name.to_string(), ..Plan::default() }
    }

    /// Adds a workload (or finds an identical one); returns its index.
    pub fn add_workload(&mut self, def: WorkloadDef) -> Result<usize, ExperimentError> {
        let id = def.identity()?;
        if let Some(i) = self.identities.iter().position(|x| *x == id) {
            return Ok(i);
        }
        self.workloads.push(def);
        self.identities.push(id);
        Ok(self.workloads.len() - 1)
    }

    /// Adds the cell (workload, policy, overrides of `base`); overrides that
    /// do not apply to the policy are dropped, and a cell equal to an
    /// existing one (same key) is not added twice. Returns the cell's index.
    pub fn add_cell(
        &mut self,
        workload: usize,
        policy: &str,
        overrides: &[(String, String)],
        base: &Config,
    ) -> Result<usize, ExperimentError> {
        let params: Vec<(String, String)> =
            overrides.iter().filter(|(k, _)| param_applies(k, policy)).cloned().collect();
        let mut config = config_with(base, &params)?;
        // Parameter tables of other policies cannot change this run: drop
        // them, so the config hash (and the cache key) of a `dedup` cell does
        // not change when, say, `policy.fad.rho` does.
        config.policy.retain(|table, _| param_applies(&format!("policy.{table}.x"), policy));
        // Fail before any work if the policy or its parameters are invalid.
        policy::build(policy, &config)
            .map_err(|e| ExperimentError::Policy { policy: policy.to_string(), reason: e.to_string() })?;
        let key = cell_key(&config.config_hash_hex(), &self.identities[workload], policy);
        if let Some(i) = self.cells.iter().position(|c| c.key == key) {
            return Ok(i);
        }
        let slot_id = (workload, config.seed, config.geometry.page_size, config.logical_pages());
        let slot = match self.slots.iter().position(|s| *s == slot_id) {
            Some(s) => s,
            None => {
                self.slots.push(slot_id);
                self.slots.len() - 1
            }
        };
        self.cells.push(Cell { workload, policy: policy.to_string(), params, config, key, slot });
        Ok(self.cells.len() - 1)
    }

    /// The identity string of workload `i`.
    pub fn identity(&self, i: usize) -> &str {
        &self.identities[i]
    }

    /// File name of a cell's JSON under `cells/`.
    pub fn cell_file(&self, c: &Cell) -> String {
        format!("{}__{}__{}.json", sanitize(&self.workloads[c.workload].label), sanitize(&c.policy), c.key)
    }
}

/// File-name-safe version of a label.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

/// Everything stored for one finished cell (`cells/*.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// The cache key.
    pub key: String,
    pub experiment: String,
    /// Workload label, spec string and source.
    pub workload: String,
    pub workload_spec: String,
    pub workload_source: String,
    pub policy: String,
    /// Overrides applied for this cell (`key`, TOML value).
    pub params: Vec<(String, String)>,
    pub scale: f64,
    pub workload_summary: WorkloadSummary,
    /// The run (version, config hash and seed inside).
    pub report: RunReport,
}

impl CellRecord {
    pub fn params_string(&self) -> String {
        params_string(&self.params)
    }

    /// The value of an override, if set.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Reads a cell file.
    pub fn read(path: &Path) -> Result<CellRecord, ExperimentError> {
        let text =
            std::fs::read_to_string(path).map_err(|error| ExperimentError::Io { path: path.to_path_buf(), error })?;
        serde_json::from_str(&text).map_err(|error| ExperimentError::Json { path: path.to_path_buf(), error })
    }

    /// Writes the cell file atomically (temporary file, then rename), so an
    /// interrupted run never leaves a half-written cell behind. Returns the
    /// record as read back from the written text: JSON float parsing is not
    /// guaranteed to round-trip every last bit, so fresh and cached cells
    /// both go through it and give byte-identical results files.
    pub fn write(&self, path: &Path) -> Result<CellRecord, ExperimentError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| ExperimentError::Internal(e.to_string()))? + "\n";
        crate::output::write_bytes(path, text.as_bytes())?;
        serde_json::from_str(&text).map_err(|error| ExperimentError::Json { path: path.to_path_buf(), error })
    }
}

/// What [`execute`] reports while it works (called from worker threads).
pub trait Observer: Sync {
    /// More work (in replayed requests) became known.
    fn add_total(&self, _requests: u64) {}
    /// Requests replayed since the last call.
    fn advance(&self, _requests: u64) {}
    /// A cell finished (`cached`: found on disk) after `secs` of wall time.
    fn cell_done(&self, _record: &CellRecord, _cached: bool, _secs: f64) {}
    /// A workload was prepared.
    fn prepared(&self, _label: &str, _secs: f64) {}
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// Options of [`execute`].
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// Worker threads (0 = all cores).
    pub jobs: usize,
    /// Directory of the cell files (created if missing).
    pub cells_dir: PathBuf,
}

/// Wall-clock timing of one computed cell or preparation.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    pub what: String,
    pub secs: f64,
}

/// What [`execute`] did.
#[derive(Clone, Debug)]
pub struct ExecOutcome {
    /// One record per cell, in plan order.
    pub records: Vec<CellRecord>,
    pub computed: usize,
    pub cached: usize,
    /// Wall-clock times of preparations and computed cells.
    pub timings: Vec<Timing>,
    pub wall_secs: f64,
}

/// A prepared workload shared by the cells of one slot.
struct Slot {
    prepared: Mutex<Option<Arc<(Prepared, WorkloadSummary)>>>,
    remaining: AtomicUsize,
}

/// Runs every cell of `plan` that is not already in `opts.cells_dir`.
pub fn execute(plan: &Plan, opts: &ExecOptions, obs: &dyn Observer) -> Result<ExecOutcome, ExperimentError> {
    let start = Instant::now();
    let dir = &opts.cells_dir;
    std::fs::create_dir_all(dir).map_err(|error| ExperimentError::Io { path: dir.clone(), error })?;
    let mut records: Vec<Option<CellRecord>> = vec![None; plan.cells.len()];
    let mut pending = Vec::new();
    for (i, c) in plan.cells.iter().enumerate() {
        let path = dir.join(plan.cell_file(c));
        match CellRecord::read(&path) {
            Ok(r) if r.key == c.key && (!plan.resources || r.report.resources.is_some()) => records[i] = Some(r),
            _ => pending.push(i),
        }
    }
    let cached = plan.cells.len() - pending.len();
    for r in records.iter().flatten() {
        obs.cell_done(r, true, 0.0);
    }
    // Cells of a slot contiguous, slots in order of first appearance.
    pending.sort_by_key(|&i| (plan.cells[i].slot, i));
    let slots: Vec<Slot> = (0..plan.slots.len())
        .map(|s| Slot {
            prepared: Mutex::new(None),
            remaining: AtomicUsize::new(pending.iter().filter(|&&i| plan.cells[i].slot == s).count()),
        })
        .collect();
    let mut known_total = 0u64;
    let mut counted = vec![false; plan.slots.len()];
    for &i in &pending {
        let c = &plan.cells[i];
        if let Some(n) = estimate_requests(&plan.workloads[c.workload]) {
            known_total += n;
            counted[c.slot] = true;
        }
    }
    obs.add_total(known_total);

    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<ExperimentError>> = Mutex::new(None);
    let done: Mutex<Vec<(usize, CellRecord)>> = Mutex::new(Vec::new());
    let timings: Mutex<Vec<Timing>> = Mutex::new(Vec::new());
    let jobs = if opts.jobs == 0 { rayon::current_num_threads().max(1) } else { opts.jobs };
    let workers = jobs.min(pending.len()).max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .map_err(|e| ExperimentError::Internal(e.to_string()))?;

    let opts_run = RunOptions { resources: plan.resources, ..RunOptions::default() };
    let work = |ci: usize| -> Result<(), ExperimentError> {
        let c = &plan.cells[ci];
        let def = &plan.workloads[c.workload];
        let slot = &slots[c.slot];
        let shared = {
            let mut guard = slot.prepared.lock().map_err(|_| ExperimentError::Internal("poisoned lock".into()))?;
            if guard.is_none() {
                let t = Instant::now();
                let p = def.prepare(&c.config)?;
                let secs = t.elapsed().as_secs_f64();
                obs.prepared(&def.label, secs);
                if let Ok(mut tm) = timings.lock() {
                    tm.push(Timing { what: format!("prepare {}", def.label), secs });
                }
                if !counted[c.slot] {
                    let n = slot.remaining.load(Ordering::SeqCst) as u64 * p.0.workload.timed().len() as u64;
                    obs.add_total(n);
                }
                *guard = Some(Arc::new(p));
            }
            guard.as_ref().expect("prepared").clone()
        };
        let t = Instant::now();
        let mut last = 0u64;
        let mut cb = |d: u64, _total: u64| {
            obs.advance(d.saturating_sub(last));
            last = d;
        };
        let result = runner::run_one(&c.config, &shared.0, &c.policy, &opts_run, &mut cb);
        let report = result.map_err(|source| ExperimentError::Run {
            cell: format!("{} / {} {}", def.label, c.policy, c.params_string()),
            source,
        })?;
        let n = shared.0.workload.timed().len() as u64;
        obs.advance(n.saturating_sub(last));
        let secs = t.elapsed().as_secs_f64();
        let record = CellRecord {
            key: c.key.clone(),
            experiment: plan.name.clone(),
            workload: def.label.clone(),
            workload_spec: def.spec.to_string(),
            workload_source: def.source(),
            policy: c.policy.clone(),
            params: c.params.clone(),
            scale: def.scale(),
            workload_summary: shared.1.clone(),
            report,
        };
        drop(shared);
        if slot.remaining.fetch_sub(1, Ordering::SeqCst) == 1 {
            if let Ok(mut g) = slot.prepared.lock() {
                *g = None;
            }
        }
        let record = record.write(&dir.join(plan.cell_file(c)))?;
        obs.cell_done(&record, false, secs);
        if let Ok(mut tm) = timings.lock() {
            tm.push(Timing { what: format!("{} {} {}", def.label, c.policy, c.params_string()), secs });
        }
        if let Ok(mut d) = done.lock() {
            d.push((ci, record));
        }
        Ok(())
    };

    pool.scope(|s| {
        for _ in 0..workers {
            s.spawn(|_| loop {
                if failed.load(Ordering::SeqCst) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::SeqCst);
                let Some(&ci) = pending.get(k) else { break };
                if let Err(e) = work(ci) {
                    failed.store(true, Ordering::SeqCst);
                    if let Ok(mut fe) = first_error.lock() {
                        fe.get_or_insert(e);
                    }
                    break;
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let computed = pending.len();
    for (i, r) in done.into_inner().map_err(|_| ExperimentError::Internal("poisoned lock".into()))? {
        records[i] = Some(r);
    }
    let records: Vec<CellRecord> = records.into_iter().map(|r| r.expect("every cell ran")).collect();
    let mut timings = timings.into_inner().unwrap_or_default();
    timings.sort_by(|a, b| a.what.cmp(&b.what));
    Ok(ExecOutcome { records, computed, cached, timings, wall_secs: start.elapsed().as_secs_f64() })
}

/// Runs `plan` with its cells in `out/cells/` (resuming from those already
/// there) and writes `out/timing.json`: the wall-clock times of the run,
/// which stay out of the results files so that those are reproducible.
/// `identity` (e.g. config hash, seed, command) is stamped into it too.
pub fn execute_in(
    plan: &Plan,
    out: &Path,
    jobs: usize,
    obs: &dyn Observer,
    identity: serde_json::Map<String, serde_json::Value>,
) -> Result<ExecOutcome, ExperimentError> {
    std::fs::create_dir_all(out).map_err(|error| ExperimentError::Io { path: out.to_path_buf(), error })?;
    let exec = execute(plan, &ExecOptions { jobs, cells_dir: out.join("cells") }, obs)?;
    let mut timing = identity;
    timing.insert("dedupsim_version".into(), VERSION.into());
    timing.insert("wall_secs".into(), exec.wall_secs.into());
    timing.insert("cells_computed".into(), exec.computed.into());
    timing.insert("cells_cached".into(), exec.cached.into());
    timing.insert("timings".into(), serde_json::to_value(&exec.timings).unwrap_or_default());
    let path = out.join("timing.json");
    let text = serde_json::to_string_pretty(&timing).map_err(|e| ExperimentError::Internal(e.to_string()))?;
    crate::output::write_bytes(&path, (text + "\n").as_bytes())?;
    Ok(exec)
}

/// Requests a workload replays, when known without loading it.
fn estimate_requests(def: &WorkloadDef) -> Option<u64> {
    match &def.spec {
        WorkloadSpec::Replica(_) => def.replica_spec().map(|s| s.requests),
        WorkloadSpec::Synth(s) => Some(s.requests),
        WorkloadSpec::Trace(_) | WorkloadSpec::Builtin(_) | WorkloadSpec::Profile(_) => None,
    }
}
