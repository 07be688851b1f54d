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
    // The replayed writes' own rate (a trace's rate, not mixed with the
    // preconditioning content); all writes when nothing is replayed.
    let timed_writes = w.timed().iter().any(|r| r.op == Op::Write);
    let content_dedup_rate = if timed_writes {
        crate::content::realized_dedup_rate_of(&w, w.timed())
    } else {
        crate::content::realized_dedup_rate(&w)
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{ContentId, Nanos};
    use crate::workload::{Provenance, Request, NO_CONTENT};

    /// The realized rate a run reports is the replayed writes' own (issue 12
    /// item 6), not mixed with the preconditioning content: here the trace
    /// writes 4 distinct pages (0%), its 200 preconditioned pages repeat.
    #[test]
    fn the_reported_dedup_rate_is_the_traces_own() {
        let read = Request { arrival: Nanos(0), op: Op::Read, lpn: 100, pages: 200, content: NO_CONTENT };
        let write = Request { arrival: Nanos(1000), op: Op::Write, lpn: 0, pages: 4, content: 0 };
        let mut w = Workload::from_requests(Provenance::default(), vec![read, write]);
        w.contents = (0..4).map(ContentId).collect();
        w.content_space = 4;
        let model: ContentModel = "zipf:a=0.2,dedup=0.5".parse().unwrap();
        let p = prepare(w, &model, 42, PreconditionRule::AllReads).unwrap();
        assert_eq!(p.content_dedup_rate, 0.0);
        assert!(crate::content::realized_dedup_rate(&p.workload) > 0.2, "the mixed rate would not be 0");
    }
}
