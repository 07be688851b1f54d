//! The authors' public dedup model (labelled experiment).
//!
//! `experiment.fad_ssdsim_model = true` replaces two parts of the device
//! model by what the FAD authors' public simulator (FAD-SSDsim, their
//! SSDsim fork) does, so that the reproduction can show what that model
//! does to the paper's comparisons. It is not a device a user would choose,
//! and every report of such a run says so ([`crate::config::FAD_SSDSIM_MODEL_LABEL`]).
//!
//! * **Duplicates are lost.** A page the policy references
//!   ([`Action::Reference`](crate::policy::Action::Reference): a deduplicated duplicate, of an earlier copy or
//!   of an earlier page of the same file) is not mapped: the LPN's old
//!   mapping is released as on any overwrite, the LPN is left unmapped and
//!   flagged. A read of a flagged, unmapped LPN is charged as a flash read
//!   of physical page 0, i.e. chip 0 = channel 0, chip 0 of that channel
//!   (FAD-SSDsim leaves such a page's mapping at 0). A later program of the
//!   LPN maps it again (the stale flag is never consulted for a mapped
//!   LPN); a trim clears the flag. The fingerprint index is dedupsim's: a
//!   content counts as a duplicate while a live copy of it exists.
//!   References take no reference count, so the heat FAD sees is that of
//!   the copy's mapped sharers only.
//! * **Seven chips.** Programs of placement-free policies
//!   ([`Capabilities::placement_free`](crate::policy::Capabilities::placement_free): Native, Deduplication, HAR, FCRC) go to a
//!   unit drawn uniformly by a Xoshiro256++ stream seeded from the run's
//!   seed, over channels `0 ..= C - 2` and chips `0 ..= K - 2` of each
//!   (FAD-SSDsim's `rand() % (channel - 1)`, `rand() % (chip - 1)`): with
//!   FAD Table I's 8 x 2 chips, dedupsim's chips 0..=6 (chip g is channel
//!   g % C, chip g / C of it). At die or plane level the draw is uniform
//!   over the units of those chips. This replaces `allocation`; FAD's own
//!   placements are kept (they are what is evaluated), and so is the
//!   round-robin preconditioning. Writes of any policy that go through
//!   the policy (replayed, or preconditioning with `placement = "policy"`)
//!   follow the model.
//! * **`--check`** still runs every FTL invariant check and verifies every
//!   read of a mapped LPN; reads of flagged LPNs are not content-checked,
//!   since the model loses those pages by design.
//!
//! With the switch off the model costs one predictable branch per
//! referenced or programmed page and nothing on the read path's mapped pages.

use crate::config::Config;
use crate::ftl::Ftl;
use crate::units::Ppn;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Salt of the FAD-SSDsim model's placement stream (independent of the
/// content models' streams drawn from the same seed).
const FAD_SSDSIM_SALT: u64 = 0x6661_645f_7373_6473; // "fad_ssds"

/// State of the authors' public dedup model (module doc,
/// `experiment.fad_ssdsim_model`).
pub(super) struct FadSsdsimModel {
    /// Per LPN, one bit: referenced under the model, so left unmapped.
    pub(super) flagged: Vec<u64>,
    /// Units placement-free programs are drawn from.
    pub(super) allowed: Vec<u32>,
    pub(super) rng: Xoshiro256PlusPlus,
    /// Chip and unit of physical page 0.
    pub(super) chip0: u32,
    pub(super) unit0: u32,
    /// Reads charged to physical page 0 (timed).
    pub(super) page0_reads: u64,
}

impl FadSsdsimModel {
    pub(super) fn new(cfg: &Config, ftl: &Ftl) -> FadSsdsimModel {
        let geo = ftl.geometry();
        let (c, k) = (geo.channels, geo.chips_per_channel);
        let allowed = (0..geo.unit_count())
            .filter(|&u| {
                let g = geo.chip_of_plane(geo.unit_planes(u)[0]);
                g % c < c - 1 && g / c < k - 1
            })
            .collect();
        FadSsdsimModel {
            flagged: vec![0; (ftl.logical_pages() as usize).div_ceil(64)],
            allowed,
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed ^ FAD_SSDSIM_SALT),
            chip0: geo.chip_of(Ppn(0)),
            unit0: geo.unit_of(Ppn(0)),
            page0_reads: 0,
        }
    }

    #[inline]
    pub(super) fn is_flagged(&self, lpn: u32) -> bool {
        self.flagged[(lpn / 64) as usize] >> (lpn % 64) & 1 != 0
    }

    #[inline]
    pub(super) fn set_flag(&mut self, lpn: u32, on: bool) {
        let w = &mut self.flagged[(lpn / 64) as usize];
        let bit = 1u64 << (lpn % 64);
        if on {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }

    /// FAD-SSDsim's `rand() % (channel - 1)`, `rand() % (chip - 1)`.
    #[inline]
    pub(super) fn draw_unit(&mut self) -> u32 {
        self.allowed[self.rng.gen_range(0..self.allowed.len())]
    }
}
