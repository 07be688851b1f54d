//! A fingerprint index held wholly in DRAM: fingerprint -> the primary
//! copy of its content (the first copy written as new, CAFTL's rule),
//! forgotten when that copy is freed. Shared by the engines that keep one
//! (`dram-verify`, `caftl-sampled`); DRAM is counted at Light-Dedup §6's
//! measured 40 B per fingerprint.

use super::fastmap::FastMap;
use super::{is_live_copy, EngineIo, Verdict, WritePage};
use crate::ftl::{EntryId, Ftl};
use crate::units::ContentId;

/// DRAM per indexed fingerprint (Light-Dedup §6: 40 B per entry).
pub const DRAM_FP_BYTES: u64 = 40;

/// The index. See the module doc.
#[derive(Clone, Debug, Default)]
pub struct PrimaryIndex {
    /// Fingerprint -> (primary copy, its content).
    map: FastMap<u64, (EntryId, ContentId)>,
    peak: u64,
}

impl PrimaryIndex {
    /// Indexes `entry` (of `content`) under `fp`, unless `fp` already has a
    /// primary.
    pub fn insert(&mut self, fp: u64, entry: EntryId, content: ContentId) {
        self.map.entry(fp).or_insert((entry, content));
        self.peak = self.peak.max(self.map.len() as u64);
    }

    /// The primary copy indexed under `fp`, if it is still live with the
    /// content it was indexed with.
    pub fn live(&self, ftl: &Ftl, fp: u64) -> Option<(EntryId, ContentId)> {
        self.map.get(&fp).copied().filter(|&(e, c)| is_live_copy(ftl, e, c))
    }

    /// Copy `entry` of `content` was freed: forgotten if it is `fp`'s primary.
    pub fn forget(&mut self, fp: u64, entry: EntryId, content: ContentId) {
        if self.map.get(&fp) == Some(&(entry, content)) {
            self.map.remove(&fp);
        }
    }

    /// After a write ([`super::Engine::commit`]): indexes every page that
    /// was fingerprinted, found unique and programmed (a repeat inside the
    /// write follows its first page).
    pub fn commit(&mut self, pages: &[WritePage], entries: &[EntryId], programmed: &[bool], io: &EngineIo) {
        for (k, p) in pages.iter().enumerate() {
            if programmed[k] && io.hashed[k] && !p.repeat && io.verdicts[k] == Verdict::Unique {
                self.insert(p.fingerprint, entries[k], p.content);
            }
        }
    }

    /// DRAM now and at its peak, bytes.
    pub fn bytes(&self) -> (u64, u64) {
        (self.map.len() as u64 * DRAM_FP_BYTES, self.peak * DRAM_FP_BYTES)
    }
}
