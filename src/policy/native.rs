//! `native`: the SSD without deduplication (FAD §IV-A, "Native").
//!
//! Every page is programmed; the policy's placement is free, so the
//! simulator's `allocation` decides its unit: SSDsim's dynamic allocation
//! when a channel serves it (`"dynamic"`, the `fad-table1` default), the
//! least-loaded unit when it is processed (`"least-loaded"`), static
//! striping, or the cyclic pointer (`"cyclic"`). No fingerprinting cost.

use super::{Action, Capabilities, Cyclic, GcHint, PageInfo, PageLayout, Policy};

#[derive(Default)]
pub struct Native {
    next: Cyclic,
}

impl Native {
    /// Each unit takes `alloc_pages` pages in a row ([`Cyclic::with_run`]).
    pub fn new(alloc_pages: u32) -> Native {
        Native { next: Cyclic::with_run(alloc_pages) }
    }
}

impl Policy for Native {
    fn name(&self) -> &'static str {
        "native"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { deduplicates: false, placement_free: true, ..Capabilities::default() }
    }
    fn place(&mut self, file: &[PageInfo], _: &[PageLayout], units: u32, out: &mut Vec<Action>) -> Option<GcHint> {
        out.extend(file.iter().map(|_| Action::Program { unit: self.next.take(units) }));
        None
    }
}
