//! A node's disk as dedupsim's own simulated SSD (`cluster --device ssd`,
//! issue 28 item 8; the paper's §VI "SSD Optimization": "SSDs have no
//! mechanical seek cost").
//!
//! The paper's testbed is HDDs (§V-B: "two 1TiB SATA HDDs to store the
//! data"), so [`Device::Hdd`] stays the default; `--device ssd` replaces
//! each of a node's disks by one streaming [`Simulation`] (the `run`
//! configuration from `--preset`/`--config`/`--set`, the placement policy
//! `--ssd-policy`, `native` by default). The striping over a node's disks
//! is the HDD model's ([`super::timing`]): a disk's byte range `[pos, pos +
//! len)` becomes one request for the logical pages `pos / page ..
//! ceil((pos + len) / page)` of that disk's SSD.
//!
//! * **Contents.** Every page a node writes gets a content id never used
//!   before on that SSD, so the SSD's own dedup (if the policy has one)
//!   finds no duplicate: the cluster has deduplicated already (a node
//!   stores each chunk once; Rewrite's copies are the scheme's deliberate
//!   redundancy, which an SSD that deduplicates would silently undo). With
//!   a deduplicating policy the SSD still pays its fingerprinting.
//! * **Queueing.** The timed phases hand a disk its accesses in the order
//!   they are issued, as they do an HDD (first come, first served): the
//!   accesses issued together (one file's I/Os on a node, one flush) go to
//!   the SSD at once and run in parallel inside it (channels, dies); the
//!   next batch arrives no earlier than the last completion handed out
//!   (the streaming interface's floor, `sim/stream.rs`). So an SSD overlaps
//!   the accesses of one batch, not those of two readers' files.
//! * **Clock.** A phase's time 0 is, on every SSD of the cluster, the
//!   latest completion any SSD has handed out ([`SsdDisk::floor`]), so no
//!   SSD's clock goes back between the write and the read phase.
//! * **Pages the timed writes did not write** (the update phase, not
//!   timed) are written, untimed, before the read phase
//!   ([`super::timing::read_phase`]), so every read finds its data.

use super::ClusterError;
use crate::config::Config;
use crate::sim::{RequestHint, RunOptions, Simulation, StreamRequest};
use crate::units::{ContentId, Nanos, Op};
use serde::Serialize;

/// What each of a node's disks is (`--device`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Device {
    /// The paper's testbed (§V-B): a 7,200 rpm SATA HDD ([`super::timing`]).
    #[default]
    Hdd,
    /// dedupsim's own SSD simulation.
    Ssd(Box<SsdDevice>),
}

impl Device {
    pub fn is_hdd(&self) -> bool {
        matches!(self, Device::Hdd)
    }
}

/// The SSD a node's disk is: a resolved `run` configuration and a policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SsdDevice {
    /// Placement policy (`dedupsim policies`).
    pub policy: String,
    pub config: Config,
}

impl SsdDevice {
    /// Logical bytes of one SSD.
    pub fn logical_bytes(&self) -> u64 {
        self.config.logical_pages() * u64::from(self.config.geometry.page_size)
    }
}

/// One simulated SSD serving a disk's accesses.
pub struct SsdDisk {
    sim: Simulation<'static>,
    page: u64,
    /// The next content id (fresh for every page written).
    next_content: u32,
    contents: Vec<ContentId>,
    /// Tags of the current batch.
    tag: u64,
    /// Time with a batch outstanding (batches never overlap), ns.
    pub busy: u64,
    /// The current batch's arrival (SSD clock), if one is open.
    batch_at: Option<Nanos>,
}

impl SsdDisk {
    pub fn new(d: &SsdDevice, node: usize, disk: usize) -> Result<SsdDisk, ClusterError> {
        let err = |reason: String| ClusterError::Device { node, disk, reason };
        let policy = crate::policy::build(&d.policy, &d.config).map_err(|e| err(e.to_string()))?;
        let engine =
            crate::engine::build(&d.config.dedup.engine, &d.config.engine_context()).map_err(|e| err(e.to_string()))?;
        let sim =
            Simulation::streaming(&d.config, policy, engine, RunOptions::default()).map_err(|e| err(e.to_string()))?;
        Ok(SsdDisk {
            sim,
            page: u64::from(d.config.geometry.page_size),
            next_content: 1,
            contents: Vec::new(),
            tag: 0,
            busy: 0,
            batch_at: None,
        })
    }

    /// The earliest time (SSD clock) a new access can arrive.
    pub fn floor(&self) -> u64 {
        self.sim.floor().0
    }

    /// Submits an access of bytes `[pos, pos + len)` arriving at `at` (SSD
    /// clock) to the open batch.
    pub fn submit(&mut self, write: bool, pos: u64, len: u64, at: u64) -> Result<(), String> {
        let first = pos / self.page;
        let end = (pos + len.max(1)).div_ceil(self.page);
        let pages = end - first;
        let capacity = self.sim.logical_pages();
        if end > capacity || pages > u64::from(u32::MAX) {
            return Err(format!(
                "an access to bytes {pos}..{} is past the SSD's {} logical bytes: give the SSD more space \
                 (--set geometry.blocks_per_plane=...) or use more --disks or --nodes",
                pos + len,
                capacity * self.page
            ));
        }
        self.contents.clear();
        if write {
            for _ in 0..pages {
                self.contents.push(ContentId(self.next_content));
                self.next_content = self.next_content.checked_add(1).ok_or("more than 2^32 pages written")?;
            }
        }
        let req = StreamRequest {
            tag: self.tag,
            op: if write { Op::Write } else { Op::Read },
            lpn: first as u32,
            pages: pages as u32,
            contents: &self.contents,
            hint: RequestHint::Absent,
            fingerprints: None,
            stream: 0,
        };
        self.tag += 1;
        let used = self.sim.submit(&req, Nanos(at)).map_err(|e| e.to_string())?;
        self.batch_at = Some(self.batch_at.map_or(used, |b| b.min(used)));
        Ok(())
    }

    /// Completes the open batch: its last completion (SSD clock), or
    /// `None` if nothing was submitted; the error is the simulated
    /// device's (full while placing a waiting write).
    pub fn drain(&mut self) -> Result<Option<u64>, String> {
        let Some(at) = self.batch_at.take() else { return Ok(None) };
        let mut last = at;
        while self.sim.outstanding() > 0 {
            let Some((_, c)) = self.sim.next_completion().map_err(|e| e.to_string())? else { return Ok(None) };
            last = last.max(c);
        }
        self.busy += last.0 - at.0;
        Ok(Some(last.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(policy: &str) -> SsdDevice {
        SsdDevice { policy: policy.into(), config: Config::preset("tiny").unwrap() }
    }

    /// FAD Table I timing (the tiny preset's base): a page read senses for
    /// 20 µs and moves 4,096 B at 25 ns/B (102.4 µs) over its channel; a
    /// write completes when its page is in the chip's register (102.4 µs;
    /// `write_completion = "transfer"`, SSDsim's rule), the 200 µs program
    /// follows. The tiny preset has two channels of one chip each: two
    /// pages written together land on both (the idle chips take them), and are read
    /// back in parallel.
    #[test]
    fn accesses_take_the_ssd_timing() {
        let mut d = SsdDisk::new(&tiny("native"), 0, 0).unwrap();
        d.submit(true, 0, 4096, 0).unwrap();
        assert_eq!(d.drain().unwrap(), Some(102_400));
        let t = 1_000_000;
        d.submit(false, 0, 4096, t).unwrap();
        assert_eq!(d.drain().unwrap(), Some(t + 20_000 + 102_400));
        // Two pages, one request: one on each channel, at once.
        d.submit(true, 4096, 8192, 2 * t).unwrap();
        assert_eq!(d.drain().unwrap(), Some(2 * t + 102_400));
        d.submit(false, 4096, 8192, 3 * t).unwrap();
        assert_eq!(d.drain().unwrap(), Some(3 * t + 20_000 + 102_400));
        // An arrival before the floor waits for it (first come, first served).
        d.submit(false, 0, 4096, 0).unwrap();
        assert_eq!(d.drain().unwrap(), Some(3 * t + 20_000 + 102_400 + 20_000 + 102_400));
        assert_eq!(d.busy, 102_400 + 122_400 + 102_400 + 122_400 + 122_400);
    }

    /// An access past the SSD's logical space is a typed error, not a panic.
    #[test]
    fn an_access_past_the_end_is_refused() {
        let dev = tiny("native");
        let mut d = SsdDisk::new(&dev, 3, 1).unwrap();
        let e = d.submit(false, dev.logical_bytes(), 4096, 0).unwrap_err();
        assert!(e.contains("past the SSD"), "{e}");
        assert_eq!(d.drain().unwrap(), None);
    }
}
