//! Running policies on a workload: the glue between workloads, the
//! simulator and reports, used by the CLI and the experiment runner.
//!
//! ```text
//! Workload --prepare()--> Prepared (preconditioning + content) --run_one(policy)--> RunReport
//! ```
//!
//! A [`Prepared`] workload is immutable and shared by every policy's run,
//! so all policies replay identical requests with identical page contents.

use crate::config::Config;
use crate::content::{try_assign_content, ContentError, ContentModel};
use crate::policy::{self, PolicyError};
use crate::report::{RunMeta, RunReport};
use crate::sim::{RunOptions, SimError, Simulation};
use crate::units::Op;
use crate::workload::{PreconditionRule, Workload};
use thiserror::Error;

/// Errors of a run.
#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("content model: {0}")]
    Content(#[from] ContentError),
}

/// A workload ready to replay: preconditioning added, every write has content.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub workload: Workload,
    /// "trace" when the trace carried content, else the model's string form
    /// (the model also fills preconditioning pages of content traces).
    pub content_model: String,
    /// Realized dedup rate of every written page's content, preconditioning
    /// included (what a calibrated content model targets): 1 - distinct/pages.
    pub content_dedup_rate: f64,
}

/// Adds preconditioning by `rule` and assigns content to every write that
/// has none, with `model` and `seed` (deterministic).
pub fn prepare(mut w: Workload, model: &ContentModel, seed: u64, rule: PreconditionRule) -> Result<Prepared, RunError> {
    let had_content = w.requests.iter().any(|r| r.op == Op::Write) && w.has_content();
    w.add_precondition_with(rule);
    try_assign_content(&mut w, model, seed)?;
    let content_model =
        if had_content { format!("from the workload (preconditioning: {model})") } else { model.to_string() };
    let content_dedup_rate = crate::content::realized_dedup_rate(&w);
    Ok(Prepared { workload: w, content_model, content_dedup_rate })
}

/// Replays `prepared` through policy `policy` and builds its report.
pub fn run_one(
    cfg: &Config,
    prepared: &Prepared,
    policy: &str,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RunReport, RunError> {
    let p = policy::build(policy, cfg)?;
    let sim = Simulation::new(cfg, &prepared.workload, p, opts.clone())?;
    let out = sim.run(progress)?;
    let meta = RunMeta {
        config_name: cfg.name.clone(),
        config_hash: cfg.config_hash_hex(),
        seed: cfg.seed,
        device_model: cfg.experiment_label().map(str::to_string),
        workload: prepared.workload.provenance.clone(),
        content_model: prepared.content_model.clone(),
        content_dedup_rate: prepared.content_dedup_rate,
        page_size: cfg.geometry.page_size,
    };
    Ok(RunReport::new(meta, out))
}
