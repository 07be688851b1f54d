//! The FTL's own parameters: what [`Ftl::new`](super::Ftl::new) needs,
//! resolved from a configuration by `Config::ftl_params`.

use crate::geometry::{GeometryConfig, ParallelUnit};
use serde::{Deserialize, Serialize};

/// Everything the FTL is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct FtlParams {
    /// The flash array (`[geometry]`).
    pub geometry: GeometryConfig,
    /// The unit of the allocator's cyclic pointer (`alloc_unit`).
    pub alloc_unit: ParallelUnit,
    /// Host-visible pages (raw pages less `over_provisioning`).
    pub logical_pages: u64,
    /// `precondition.aged`: fraction of every plane's blocks holding stale
    /// data at the start, in [0, 1).
    pub aged: f64,
    /// `[gc]`.
    pub gc: GcConfig,
}

/// Garbage collection and wear levelling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GcConfig {
    /// GC runs in a plane when its free blocks fall below this many.
    pub min_free_blocks: u32,
    /// Migrate valid pages with copyback inside the plane (no bus transfer).
    pub copyback: bool,
    /// Wear levelling: prefer the free block with the lowest erase count,
    /// and break greedy-victim ties toward the least-worn block.
    pub wear_leveling: bool,
    /// How much a plane below the threshold collects.
    pub rule: GcRule,
}

/// How much GC collects in a plane below `gc.min_free_blocks` (`gc.rule`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcRule {
    /// One greedy victim per page write into the plane, skipped when no
    /// block has an invalid page (SSDsim 2.1: `gc hard threshold` checked
    /// after every page write). The threshold may exceed the spare blocks.
    #[default]
    OnePerWrite,
    /// Greedy victims until the plane is back at the threshold; a victim
    /// without invalid pages is a "device full" error.
    UntilThreshold,
}
