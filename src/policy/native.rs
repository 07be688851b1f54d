//! `native`: the SSD without deduplication (FAD §IV-A, "Native").
//!
//! Every page is programmed; pages go to parallel units in cyclic order
//! (SSDsim's dynamic allocation). No fingerprinting cost.

use super::{Action, Cyclic, PageInfo, Policy};

#[derive(Default)]
pub struct Native {
    next: Cyclic,
}

impl Policy for Native {
    fn name(&self) -> &'static str {
        "native"
    }
    fn deduplicates(&self) -> bool {
        false
    }
    fn place(&mut self, file: &[PageInfo], units: u32, out: &mut Vec<Action>) {
        out.extend(file.iter().map(|_| Action::Program { unit: self.next.take(units) }));
    }
}
