//! `caftl-sampled`: CAFTL with sampling hashing (issue 27 item 13, a fair
//! SSD baseline). SmartDedup §4 describes CAFTL's in-line technique (Chen
//! et al., FAST'11, which is not among ../shared/seeds): "Sampling hashing
//! fingerprints only one data block in a request that has multiple blocks
//! to reduce overhead."
//!
//! The rule, as we read that sentence (the choices are ours, and are in
//! docs/engines.md):
//! * A write of one page is fingerprinted as under `caftl`.
//! * A write of several pages fingerprints its **first** page, the sample.
//!   If the sample is a duplicate of a stored copy, every other page is
//!   fingerprinted and looked up too; if not, the other pages are written
//!   as new without a fingerprint, so they are not indexed and later
//!   copies of them are not found. (CAFTL picks the sample by content; we
//!   take the first page, which is the same for whole-file duplicates.)
//! * Fingerprints take `dedup.fingerprint` on `dedup.hash_engines`, as
//!   `caftl`'s. Simplification: the other pages' hashes are scheduled on
//!   the engines with the sample's, not after it, so with several engines
//!   a duplicate request's hashing is as fast as under `caftl`.
//! * The index is `caftl`'s rule held by the engine (the FTL's own index
//!   holds every new page, so it cannot leave pages out): every
//!   fingerprinted content's first copy written as new, in DRAM, free to
//!   look up, forgotten when the copy is freed; counted at 40 B a
//!   fingerprint (`engine_index_bytes`).
//!
//! `engine_unhashed_pages` counts the pages sampling left unfingerprinted.

use super::index::{PrimaryIndex, DRAM_FP_BYTES};
use super::{Engine, EngineContext, EngineError, EngineIo, Verdict, WritePage};
use crate::ftl::{EntryId, Ftl};
use crate::units::ContentId;

/// The engine. See the module doc.
#[derive(Default)]
pub struct CaftlSampled {
    index: PrimaryIndex,
    unhashed: u64,
}

impl CaftlSampled {
    /// No parameters of its own: any key of `[engine.caftl-sampled]` is an
    /// error (its costs are `dedup.fingerprint` and `dedup.hash_engines`).
    pub fn build(ctx: &EngineContext) -> Result<Box<dyn Engine>, EngineError> {
        super::no_params(ctx, "caftl-sampled")?;
        Ok(Box::<CaftlSampled>::default())
    }

    /// The index at a full device: every logical page a distinct content.
    pub fn memory_estimate(ctx: &EngineContext) -> u64 {
        ctx.logical_pages.saturating_mul(DRAM_FP_BYTES)
    }
}

impl Engine for CaftlSampled {
    fn name(&self) -> &'static str {
        "caftl-sampled"
    }

    fn lookup(&mut self, ftl: &Ftl, pages: &[WritePage], io: &mut EngineIo) {
        let find = |p: &WritePage| match self.index.live(ftl, p.fingerprint) {
            Some((e, c)) if c == p.content => Verdict::Duplicate(e),
            _ => Verdict::Unique,
        };
        let Some(sample) = pages.first() else { return };
        let sampled = find(sample);
        // One page, or a duplicate sample: every page is fingerprinted.
        let all = pages.len() == 1 || sampled != Verdict::Unique;
        io.hashed.push(true);
        io.verdicts.push(sampled);
        for p in &pages[1..] {
            io.hashed.push(all);
            io.verdicts.push(if all && !p.repeat { find(p) } else { Verdict::Unique });
        }
        if !all {
            self.unhashed += pages.len() as u64 - 1;
        }
    }

    fn commit(&mut self, _: &Ftl, pages: &[WritePage], entries: &[EntryId], programmed: &[bool], io: &mut EngineIo) {
        self.index.commit(pages, entries, programmed, io);
    }

    fn preload(&mut self, content: ContentId, fingerprint: u64, entry: EntryId) {
        self.index.insert(fingerprint, entry, content);
    }

    fn forget(&mut self, content: ContentId, fingerprint: u64, entry: EntryId) {
        self.index.forget(fingerprint, entry, content);
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let (bytes, peak) = self.index.bytes();
        vec![
            ("engine_unhashed_pages", self.unhashed as f64),
            ("engine_index_bytes", bytes as f64),
            ("engine_index_peak_bytes", peak as f64),
        ]
    }
}
