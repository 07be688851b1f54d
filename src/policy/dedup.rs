//! `dedup`: inline deduplication without layout awareness (FAD §IV-A,
//! "Deduplication", CAFTL-like, Chen et al. FAST'11).
//!
//! Every written page is fingerprinted (32 us by default); a duplicate is
//! mapped to the existing copy, a new page is programmed on the next unit of
//! the cyclic pointer. This is the layout that fragments files (FAD §II-C).

use super::{Action, Capabilities, Cyclic, Dup, GcHint, PageInfo, PageLayout, Policy};

#[derive(Default)]
pub struct Dedup {
    next: Cyclic,
}

impl Dedup {
    /// Each unit takes `alloc_pages` pages in a row ([`Cyclic::with_run`]).
    pub fn new(alloc_pages: u32) -> Dedup {
        Dedup { next: Cyclic::with_run(alloc_pages) }
    }
}

impl Policy for Dedup {
    fn name(&self) -> &'static str {
        "dedup"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { placement_free: true, ..Capabilities::default() }
    }
    fn place(&mut self, file: &[PageInfo], _: &[PageLayout], units: u32, out: &mut Vec<Action>) -> Option<GcHint> {
        out.extend(file.iter().map(|p| match p.dup {
            Dup::None => Action::Program { unit: self.next.take(units) },
            _ => Action::Reference,
        }));
        None
    }
}
