//! Helpers shared by the integration tests.

use dedupsim::units::ContentId;
use dedupsim::workload::Workload;

/// Adds SSDsim-style preconditioning to `w` and gives every preconditioning
/// page the content `base + lpn` (distinct per page, and distinct from the
/// workload's own contents when `base` is above them), then recomputes the
/// content id space.
pub fn precondition_with_distinct_contents(w: &mut Workload, base: u32) {
    w.add_precondition();
    for r in w.requests.iter_mut().take(w.precondition as usize) {
        r.content = w.contents.len() as u32;
        for l in r.lpn..r.lpn + r.pages {
            w.contents.push(ContentId(base + l));
        }
    }
    w.content_space = w.contents.iter().map(|c| c.0 + 1).max().unwrap_or(0);
}
