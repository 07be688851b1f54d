//! What a run produces: its options and its output, and the end of a run
//! (idle time after the last arrival, queued work, final check).

use super::{SimError, Simulation};
use crate::ftl::Ftl;
use crate::metrics::Metrics;
use crate::series::TimeSeries;
use crate::units::Nanos;

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Verify the FTL invariants during the run: every read returns the
    /// content last written to its LPN (checked on every read), and the
    /// full structural check runs every `check_every` requests and at the end.
    pub check: bool,
    /// Full-check interval in requests (0 = only at the end).
    pub check_every: u64,
    /// Report where the time went per chip and per channel
    /// ([`crate::timing::Resources`], [`crate::report::RunReport::resources`]);
    /// off for `run`, whose output it would change.
    pub resources: bool,
}

/// What a run produced (before report formatting).
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub metrics: Metrics,
    pub policy: String,
    pub policy_stats: Vec<(&'static str, f64)>,
    /// The dedup engine (`dedup.engine`) and what it counted, with the
    /// flash operations the simulator executed for it (empty for `caftl`,
    /// which charges nothing but its hash time).
    pub engine: String,
    pub engine_stats: Vec<(&'static str, f64)>,
    pub chip_busy: Vec<Nanos>,
    pub chip_wait: Vec<Nanos>,
    pub erase_counts: Vec<u32>,
    /// (mapping bytes, fingerprint index bytes) at the end of the run.
    pub metadata_bytes: (u64, u64),
    pub live_pages: u64,
    pub invariant_checks: u64,
    /// The hash engines' load over the timed replay (all zero but
    /// `engines` for a policy that does not deduplicate).
    pub hash: crate::timing::HashLoad,
    /// The time series, if [`Simulation::record_series`] asked for one.
    pub series: Option<TimeSeries>,
    /// Per-chip and per-channel use, if [`RunOptions::resources`].
    pub resources: Option<crate::timing::Resources>,
}

impl<'w> Simulation<'w> {
    /// Ends a run after its last arrival: the idle time after it (from
    /// where the driver's rule opens it, [`super::submit::IdleFrom`]), every
    /// queued operation, the final check, the output.
    pub(super) fn conclude(mut self) -> Result<(RunOutput, Ftl), SimError> {
        // Under dynamic allocation, when an engine or the policy has idle
        // work, the write buffer is flushed to flash first: the last idle
        // window opens when the last waiting write is placed (or at the
        // driver's idle start, if later), so the idle work sees every copy
        // on flash. (Without idle work the order is as before.)
        let mut idle_from = self.clock.idle_start();
        let idle_work = self.engine_wants_idle() || self.policy.wants_idle();
        if self.alloc.dynamic() && idle_work {
            idle_from = idle_from.max(self.place_unplaced(Nanos(u64::MAX))?);
        }
        self.offer_idle(idle_from, None)?;
        if self.alloc.dynamic() {
            self.place_unplaced(Nanos(u64::MAX))?;
            debug_assert!(!self.timing.has_unplaced(), "every waiting write is served in the end");
        }
        self.drain_until(Nanos(u64::MAX));
        self.timing.finish();
        self.apply_completions();
        let busy = self.timing.take_busy();
        let series = self.series.take().map(|s| s.finish(busy));
        if self.opts.check {
            self.check_invariants()?;
        }
        let mut policy_stats = self.policy.stats();
        if let Some(m) = &self.fad_ssdsim {
            policy_stats.push(("fad_ssdsim_page0_reads", m.page0_reads as f64));
        }
        if self.alloc.dynamic() && self.dedup {
            policy_stats.push(("dynamic_waiting_references", self.waiting_refs as f64));
        }
        if self.rcount.idle_windows > 0 {
            let r = &self.rcount;
            policy_stats.extend([
                ("relocated_pages", self.metrics.counters.programs.relocation as f64),
                ("relocated_lpns", r.lpns as f64),
                ("relocations_skipped", r.skipped as f64),
                ("relocation_idle_windows", r.idle_windows as f64),
            ]);
            let blocks = self.ftl.relocation_blocks_opened();
            if blocks > 0 {
                policy_stats.push(("relocation_blocks", blocks as f64));
            }
        }
        let engine_stats = self.engine_stats();
        let out = RunOutput {
            policy: self.policy.name().to_string(),
            policy_stats,
            engine: self.engine.name().to_string(),
            engine_stats,
            chip_busy: self.timing.chip_busy(),
            chip_wait: self.timing.chip_wait(),
            erase_counts: self.ftl.erase_counts().collect(),
            metadata_bytes: self.ftl.metadata_bytes(),
            live_pages: self.ftl.live_pages(),
            invariant_checks: self.checks,
            hash: self.timing.hash_load(),
            metrics: self.metrics,
            series,
            resources: self.opts.resources.then(|| self.timing.resources()),
        };
        Ok((out, self.ftl))
    }
}
