//! The `--check` shadow ([`super::RunOptions::check`]): per LPN, the content
//! last written to it, against which every read is verified; and the FTL's
//! full structural check ([`crate::ftl::Ftl::check_invariants`]), run every
//! `check_every` requests and at the end. Off, each hook costs one test of
//! `opts.check`.
//!
//! Under the FAD-SSDsim model (`fad_ssdsim`) reads of flagged LPNs are not
//! content-checked: the model loses those pages by design.

use super::{SimError, Simulation};
use crate::ftl::InvariantViolation;
use crate::units::ContentId;

impl Simulation<'_> {
    /// LPN `l` now holds `content` (`None`: unmapped, by a trim).
    #[inline]
    pub(super) fn shadow_write(&mut self, l: u32, content: Option<ContentId>) {
        if self.opts.check {
            self.shadow[l as usize] = content.map_or(0, |c| c.0 + 1);
        }
    }

    /// A read found LPN `l` unmapped: an error if it was written since its
    /// last trim (a lost mapping).
    #[inline]
    pub(super) fn check_unmapped(&self, l: u32) -> Result<(), SimError> {
        if self.opts.check && self.shadow[l as usize] != 0 {
            return Err(InvariantViolation(format!(
                "LPN {l} was last written with content {} but is not mapped",
                self.shadow[l as usize] - 1
            ))
            .into());
        }
        Ok(())
    }

    /// Under `--check` (the caller tests it, sparing the lookup otherwise):
    /// a read of mapped LPN `l` found `content` (`None`: the FTL does not
    /// know it): an error if another was last written.
    #[inline]
    pub(super) fn check_mapped(&self, l: u32, content: Option<ContentId>) -> Result<(), SimError> {
        if content.map(|c| c.0 + 1) != Some(self.shadow[l as usize]) {
            return Err(InvariantViolation(format!(
                "LPN {l} reads content {} but {} was last written",
                content.map_or(-1, |c| i64::from(c.0)),
                self.shadow[l as usize] as i64 - 1
            ))
            .into());
        }
        Ok(())
    }

    /// The FTL's full structural check, counted.
    pub(super) fn check_invariants(&mut self) -> Result<(), SimError> {
        self.ftl.check_invariants()?;
        self.checks += 1;
        Ok(())
    }
}
