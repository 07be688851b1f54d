//! Workloads of an experiment: Table II replicas, synthetic specs and trace
//! files, with a stable identity for the cell cache.
//!
//! String form (sweep files, `--emit-jobs` command lines):
//!
//! ```text
//! mail | mail@0.05          Table II replica (scale in (0, 1])
//! synth:SPEC                synthetic workload (SynthSpec compact form;
//!                           `page=` is replaced by the device's page size)
//! trace:PATH                trace file (format auto-detected)
//! ```

use super::replica::{self, DedupTarget, ReplicaDevice, ReplicaRef, ReplicaSpec, GENERATOR_VERSION};
use super::ExperimentError;
use crate::config::Config;
use crate::content::ContentModel;
use crate::runner::{self, Prepared};
use crate::synth::{self, SynthSpec};
use crate::trace::{self, LoadOptions};
use crate::units::Op;
use crate::workload::{FileRule, Workload};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Where a workload comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadSpec {
    /// A Table II replica.
    Replica(ReplicaRef),
    /// A synthetic workload.
    Synth(SynthSpec),
    /// A trace file (addresses beyond the device wrap around).
    Trace(PathBuf),
}

impl FromStr for WorkloadSpec {
    type Err = ExperimentError;
    fn from_str(s: &str) -> Result<Self, ExperimentError> {
        let s = s.trim();
        let bad = |reason: String| ExperimentError::Workload { workload: s.to_string(), reason };
        if let Some(rest) = s.strip_prefix("synth:") {
            // Accept `requests=1e5` (a float count) for convenience.
            let items: Vec<String> = rest
                .split(',')
                .map(|item| match item.trim().split_once('=') {
                    Some(("requests", v)) => match v.trim().parse::<f64>() {
                        Ok(x) if x.fract() == 0.0 && x > 0.0 && x < 1e12 => format!("requests={}", x as u64),
                        _ => item.to_string(),
                    },
                    _ => item.to_string(),
                })
                .collect();
            let spec: SynthSpec = items.join(",").parse().map_err(|e| bad(format!("{e}")))?;
            Ok(WorkloadSpec::Synth(spec))
        } else if let Some(rest) = s.strip_prefix("trace:") {
            if rest.is_empty() {
                return Err(bad("no trace path after `trace:`".into()));
            }
            Ok(WorkloadSpec::Trace(PathBuf::from(rest)))
        } else {
            let r: ReplicaRef = s.parse().map_err(|e| bad(format!("{e}")))?;
            Ok(WorkloadSpec::Replica(r))
        }
    }
}

impl fmt::Display for WorkloadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadSpec::Replica(r) => write!(f, "{r}"),
            WorkloadSpec::Synth(s) => write!(f, "synth:{s}"),
            WorkloadSpec::Trace(p) => write!(f, "trace:{}", p.display()),
        }
    }
}

/// A workload of an experiment: its spec, display label and the content
/// model for pages without content.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadDef {
    pub spec: WorkloadSpec,
    /// Short name used in tables, plots and cell file names.
    pub label: String,
    /// Content for writes without content (synthetic workloads, traces
    /// without data, preconditioning).
    pub content: ContentModel,
    /// Replicas: utilization of the busiest resource.
    pub utilization: f64,
    /// Replicas: the device that utilization is computed for (the
    /// experiment's base configuration; default FAD Table I).
    pub device: ReplicaDevice,
    /// What a file is (`--files`): applied to the loaded workload before
    /// preconditioning.
    pub files: FileRule,
    /// Replicas: what Table II's dedup rate is matched on.
    pub dedup_target: DedupTarget,
}

impl WorkloadDef {
    /// A workload with the default content model and utilization; the label
    /// is the replica key, the synthetic spec's name or the trace's stem.
    pub fn new(spec: WorkloadSpec) -> WorkloadDef {
        let label = match &spec {
            WorkloadSpec::Replica(r) => r.row.key.to_string(),
            WorkloadSpec::Synth(s) => s.name.clone(),
            WorkloadSpec::Trace(p) => trace::trace_name(p),
        };
        WorkloadDef {
            spec,
            label,
            content: ContentModel::fad_calibrated(),
            utilization: replica::DEFAULT_UTILIZATION,
            device: ReplicaDevice::table1(),
            files: FileRule::Request,
            dedup_target: DedupTarget::default(),
        }
    }

    /// The replica spec, for replica workloads.
    pub fn replica_spec(&self) -> Option<ReplicaSpec> {
        match &self.spec {
            WorkloadSpec::Replica(r) => {
                let mut s = ReplicaSpec::on_device(r.row, r.scale, self.utilization, &self.device);
                s.dedup_target = self.dedup_target;
                Some(s)
            }
            _ => None,
        }
    }

    /// Scale of a replica (1 for anything else).
    pub fn scale(&self) -> f64 {
        match &self.spec {
            WorkloadSpec::Replica(r) => r.scale,
            _ => 1.0,
        }
    }

    /// Human-readable source: the replica label, "synthetic" or "trace: PATH".
    pub fn source(&self) -> String {
        match &self.spec {
            WorkloadSpec::Replica(_) => replica::REPLICA_LABEL.to_string(),
            WorkloadSpec::Synth(_) => "synthetic".to_string(),
            WorkloadSpec::Trace(p) => format!("trace: {}", p.display()),
        }
    }

    /// Everything the prepared workload depends on except the config: the
    /// spec in full (a replica's derived parameters, a trace's size and
    /// modification time) and the content model. Part of the cache key.
    pub fn identity(&self) -> Result<String, ExperimentError> {
        let body = match &self.spec {
            WorkloadSpec::Replica(_) => {
                let spec = self.replica_spec().expect("replica");
                format!(
                    "replica v{GENERATOR_VERSION} {}",
                    serde_json::to_string(&spec).map_err(|e| ExperimentError::Internal(e.to_string()))?
                )
            }
            WorkloadSpec::Synth(s) => format!("synth {s}"),
            WorkloadSpec::Trace(p) => {
                let meta = std::fs::metadata(p).map_err(|error| ExperimentError::Io { path: p.clone(), error })?;
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                format!("trace {} size={} mtime={}", canon.display(), meta.len(), mtime)
            }
        };
        let files = match self.files {
            FileRule::Request => String::new(),
            other => format!("; files {}", other.name()),
        };
        Ok(format!("{body}; content {}{files}", self.content))
    }

    /// Loads or generates the workload (no preconditioning yet).
    pub fn load(&self, cfg: &Config) -> Result<Workload, ExperimentError> {
        let bad = |reason: String| ExperimentError::Workload { workload: self.spec.to_string(), reason };
        let mut w = match &self.spec {
            WorkloadSpec::Replica(_) => {
                let spec = self.replica_spec().expect("replica");
                replica::generate(&spec, cfg.seed).map_err(|e| bad(e.to_string()))
            }
            WorkloadSpec::Synth(s) => {
                let mut s = s.clone();
                s.page_size = cfg.geometry.page_size;
                synth::generate(&s, cfg.seed).map_err(|e| bad(e.to_string()))
            }
            WorkloadSpec::Trace(p) => load_trace(p, cfg).map_err(|e| bad(e.to_string())),
        }?;
        w.apply_file_rule(self.files);
        Ok(w)
    }

    /// Loads and prepares (preconditioning + content) the workload.
    pub fn prepare(&self, cfg: &Config) -> Result<(Prepared, WorkloadSummary), ExperimentError> {
        let w = self.load(cfg)?;
        let prepared = runner::prepare(w, &self.content, cfg.seed, cfg.precondition.rule)
            .map_err(|e| ExperimentError::Workload { workload: self.spec.to_string(), reason: e.to_string() })?;
        let summary = WorkloadSummary::of(self, &prepared, cfg.geometry.page_size);
        Ok((prepared, summary))
    }
}

/// Loads a trace for an experiment: format auto-detected, every volume,
/// addresses folded into the device's logical capacity.
pub fn load_trace(path: &Path, cfg: &Config) -> Result<Workload, trace::TraceError> {
    let opts = LoadOptions {
        page_size: cfg.geometry.page_size,
        wrap_to_pages: Some(cfg.logical_pages()),
        capacity_pages: Some(cfg.logical_pages()),
        ..LoadOptions::default()
    };
    Ok(trace::load(path, &opts)?.workload)
}

/// Table II-style characteristics of a prepared workload (its replayed
/// requests), stored with every cell so reports can compare with the paper.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSummary {
    pub label: String,
    pub spec: String,
    pub source: String,
    pub requests: u64,
    pub read_ratio: f64,
    pub avg_read_kib: f64,
    pub avg_write_kib: f64,
    pub avg_request_kib: f64,
    /// Realized dedup rate of the replayed writes (preconditioning excluded;
    /// a workload without replayed writes reports the rate of all written
    /// contents, i.e. of its preconditioning).
    pub dedup_rate: f64,
    pub footprint_gib: f64,
    pub duration_s: f64,
    /// Pages written / read by the replayed requests.
    pub pages_written: u64,
    pub pages_read: u64,
    /// Untimed preconditioning write requests and their pages.
    pub precondition_requests: u64,
    pub precondition_pages: u64,
    pub content_model: String,
    /// Replicas: the generator's parameters in one line.
    pub replica: Option<String>,
}

impl WorkloadSummary {
    fn of(def: &WorkloadDef, p: &Prepared, page_size: u32) -> WorkloadSummary {
        let w = &p.workload;
        let st = trace::stats_with_page_size(w, page_size);
        let pre = &w.requests[..w.precondition as usize];
        let pages_read = w.timed().iter().filter(|r| r.op == Op::Read).map(|r| r.pages as u64).sum();
        WorkloadSummary {
            label: def.label.clone(),
            spec: def.spec.to_string(),
            source: def.source(),
            requests: st.requests,
            read_ratio: st.read_ratio,
            avg_read_kib: st.avg_read_kib,
            avg_write_kib: st.avg_write_kib,
            avg_request_kib: st.avg_request_kib,
            // Over the replayed writes only, as `trace stats` (see the field's doc).
            dedup_rate: st.dedup_rate.unwrap_or(p.content_dedup_rate),
            footprint_gib: st.footprint_gib,
            duration_s: st.duration_s,
            pages_written: st.pages_written,
            pages_read,
            precondition_requests: pre.len() as u64,
            precondition_pages: pre.iter().map(|r| r.pages as u64).sum(),
            content_model: p.content_model.clone(),
            replica: def.replica_spec().map(|s| s.describe()),
        }
    }
}
