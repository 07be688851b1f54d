//! `die-hint` / `die-hint-dedup`: the die-allocation hint of Jun et al.,
//! "We Ain't Afraid of No File Fragmentation" (FAST'24).
//!
//! A flash SSD assigns written pages to dies in write order, round-robin.
//! When a file grows by appends interleaved with other writes, or is
//! overwritten in place, its logically consecutive pages land on dies in
//! no useful order and a sequential read of the file collides on dies
//! (the paper's "die-level collisions", not request splitting, slow
//! fragmented reads). The paper adds a hint to the NVMe write command so
//! the drive places a page
//!
//! * **append** (the write continues a file): on the die after the die
//!   holding the file's previous page;
//! * **overwrite**: on the die holding the old version;
//!
//! and uses write-order round-robin without a hint.
//!
//! Where the hints come from (docs/policies.md, "die-hint"): a block trace
//! carries no file identity, so the hint is inferred from the mapping at
//! the time of the write: a page whose logical page is mapped is an
//! overwrite (its old copy's unit); otherwise the first page of a write
//! whose preceding logical page is mapped is an append (that page's unit +
//! 1); the following pages of the same write continue from the page before
//! them (+1). Without either, the policy's write-order round-robin pointer
//! places the page. Units are the configuration's parallel units
//! (`alloc_unit`; the `fast24-nvmevirt` preset allocates per die).
//!
//! **Explicit hints** (`hints`, [`HintSource`]): a trace can carry the
//! host's hint per write (native format `hint` column, written by `trace
//! from-files --segment N --hints`): an append names the file's previous
//! page wherever it lies (a fragmented file's next extent is not at
//! `lpn - 1`, so the inferred rule picks another file's page there), and a
//! write without a hint goes in write order, as on the paper's drive. With
//! `hints = "auto"` (default) a trace that carries any hint is placed by
//! its hints alone and any other trace by the inferred rule; `"infer"`
//! ignores a trace's hints; `"trace"` uses the trace's hints only (a trace
//! without hints then gets write order throughout, the hint-less drive).
//!
//! **Unhinted pages** (`unhinted`, [`Unhinted`]): on the paper's drive a
//! page without a hint goes where the drive's write order puts it: the
//! round-robin pointer advances with every page written, hinted or not
//! (`"write-order"`, the `fast24-nvmevirt` preset's setting). The policy's
//! default, `"own-pointer"`, is a pointer of its own that only unhinted
//! pages advance (what dedupsim did before; kept as the default so that
//! `run` on other presets is unchanged).
//!
//! **Allocation units of N pages** (`alloc_pages`, FAST'24 slides Fig. 8(a):
//! NVMe-A/B allocate two 16 KB pages per die): unhinted pages take N in a
//! row per die; an appended page that starts an allocation unit of its file
//! (`lpn % N == 0`) goes to the die after the previous page's, and one
//! inside a unit to the previous page's die (it fills the unit). With
//! N = 1 every append moves on, as above.
//!
//! `die-hint-dedup` deduplicates like `dedup` (a duplicate references its
//! existing copy) and places the new pages with the hints: the paper's
//! drives do not deduplicate, the combination shows the hint under dedup.

use super::{
    params, Action, Capabilities, Cyclic, Dup, ExplicitHint, GcHint, PageInfo, PageLayout, Policy, PolicyContext,
    PolicyError,
};
use serde::Deserialize;

/// Where `die-hint` takes its hints from (`[policy.die-hint] hints`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HintSource {
    /// The trace's explicit hints when it carries any, else inferred.
    #[default]
    Auto,
    /// Inferred from the mapping, whatever the trace carries.
    Infer,
    /// The trace's explicit hints only (none: write order).
    Trace,
}

/// Where an unhinted page goes (`[policy.die-hint] unhinted`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unhinted {
    /// A pointer of the policy's own that only unhinted pages advance.
    #[default]
    OwnPointer,
    /// The drive's write order: the pointer advances with every page
    /// programmed (the paper's drive, issue 28 item 4).
    WriteOrder,
}

/// Parameters of `die-hint` and `die-hint-dedup` (`[policy.die-hint]`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DieHintParams {
    pub hints: HintSource,
    pub unhinted: Unhinted,
}

/// The die-allocation hint policy. See the module doc.
pub struct DieHint {
    dedup: bool,
    source: HintSource,
    unhinted_rule: Unhinted,
    /// `alloc_pages`.
    run: u32,
    next: Cyclic,
    /// Pages programmed so far (the write order of `Unhinted::WriteOrder`).
    written: u64,
    appends: u64,
    overwrites: u64,
    unhinted: u64,
}

impl DieHint {
    pub fn new(dedup: bool) -> DieHint {
        DieHint::with_source(dedup, HintSource::Auto)
    }

    pub fn with_source(dedup: bool, source: HintSource) -> DieHint {
        DieHint::with_params(dedup, &DieHintParams { hints: source, ..DieHintParams::default() }, 1)
    }

    /// From `[policy.die-hint]` and `alloc_pages`.
    pub fn with_params(dedup: bool, p: &DieHintParams, alloc_pages: u32) -> DieHint {
        let run = alloc_pages.max(1);
        DieHint {
            dedup,
            source: p.hints,
            unhinted_rule: p.unhinted,
            run,
            next: Cyclic::with_run(run),
            written: 0,
            appends: 0,
            overwrites: 0,
            unhinted: 0,
        }
    }

    /// Builds from `[policy.die-hint]` (both policies read it).
    pub fn build(dedup: bool, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        let p: DieHintParams = params(ctx)?;
        Ok(Box::new(DieHint::with_params(dedup, &p, ctx.alloc_pages)))
    }

    /// The hint a page gets: the unit of an overwrite's old copy (first)
    /// or of the page an append continues, taken from the trace's explicit
    /// hint or inferred from the mapping ([`HintSource`]); `prev` is the
    /// unit of this write's previous page as placed.
    fn hint(&self, k: usize, l: &PageLayout, prev: Option<u32>) -> (Option<u32>, Option<u32>) {
        let explicit = match (self.source, l.hint) {
            (HintSource::Infer, _) | (HintSource::Auto, ExplicitHint::Absent) => None,
            (_, h) => Some(h),
        };
        match explicit {
            None => (l.old_unit, if k == 0 { l.prev_unit } else { prev }),
            Some(ExplicitHint::Overwrite) => (l.old_unit, None),
            Some(ExplicitHint::Append { after_unit }) => (None, if k == 0 { after_unit } else { prev }),
            Some(ExplicitHint::Absent | ExplicitHint::Unhinted) => (None, None),
        }
    }
}

impl Policy for DieHint {
    fn name(&self) -> &'static str {
        if self.dedup {
            "die-hint-dedup"
        } else {
            "die-hint"
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { deduplicates: self.dedup, wants_layout: true, ..Capabilities::default() }
    }

    fn begin_replay(&mut self) {
        self.appends = 0;
        self.overwrites = 0;
        self.unhinted = 0;
    }

    fn place(&mut self, file: &[PageInfo], layout: &[PageLayout], units: u32, out: &mut Vec<Action>) -> Option<GcHint> {
        // Unit of the file's previous page as placed (or referenced).
        let mut prev: Option<u32> = None;
        for (k, p) in file.iter().enumerate() {
            let l = layout.get(k).copied().unwrap_or_default();
            match p.dup {
                Dup::Existing { unit, .. } if self.dedup => {
                    out.push(Action::Reference);
                    prev = Some(unit);
                    continue;
                }
                Dup::Waiting { .. } if self.dedup => {
                    out.push(Action::Reference);
                    continue;
                }
                Dup::InFile { first } if self.dedup => {
                    out.push(Action::Reference);
                    prev = match out.get(first as usize) {
                        Some(Action::Program { unit }) => Some(*unit),
                        _ => prev,
                    };
                    continue;
                }
                _ => {}
            }
            let (old, from) = self.hint(k, &l, prev);
            let unit = if let Some(u) = old {
                self.overwrites += 1;
                u % units
            } else if let Some(u) = from {
                self.appends += 1;
                // A page inside its file's allocation unit fills the
                // previous page's die; one that starts a unit moves on.
                if p.lpn.0 % self.run == 0 {
                    (u + 1) % units
                } else {
                    u % units
                }
            } else {
                self.unhinted += 1;
                match self.unhinted_rule {
                    Unhinted::OwnPointer => self.next.take(units),
                    Unhinted::WriteOrder => ((self.written / u64::from(self.run)) % u64::from(units)) as u32,
                }
            };
            self.written += 1;
            out.push(Action::Program { unit });
            prev = Some(unit);
        }
        None
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("hint_append_pages", self.appends as f64),
            ("hint_overwrite_pages", self.overwrites as f64),
            ("hint_none_pages", self.unhinted as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{ContentId, Lpn};

    fn page(lpn: u32) -> PageInfo {
        PageInfo { lpn: Lpn(lpn), content: ContentId(lpn), dup: Dup::None }
    }

    fn units_of(out: &[Action]) -> Vec<u32> {
        out.iter()
            .map(|a| match a {
                Action::Program { unit } => *unit,
                Action::Reference => u32::MAX,
            })
            .collect()
    }

    /// Unhinted pages in the drive's write order (every page written
    /// advances it) or by the policy's own pointer; allocation units of 2
    /// pages: an append inside its file's unit (odd LPN) fills the previous
    /// page's die, one starting a unit moves on. Issue 28 items 2 and 4.
    #[test]
    fn write_order_and_two_page_units() {
        let place = |p: &mut DieHint, lpn: u32, prev: Option<u32>| {
            let mut out = Vec::new();
            p.place(&[page(lpn)], &[PageLayout { prev_unit: prev, ..Default::default() }], 8, &mut out);
            units_of(&out)[0]
        };
        for (rule, last) in [(Unhinted::WriteOrder, 2), (Unhinted::OwnPointer, 1)] {
            let mut p = DieHint::with_params(false, &DieHintParams { unhinted: rule, ..Default::default() }, 2);
            let got = [
                place(&mut p, 100, None),
                place(&mut p, 300, None),
                place(&mut p, 7, Some(5)),
                place(&mut p, 8, Some(5)),
                place(&mut p, 500, None),
            ];
            assert_eq!(got, [0, 0, 5, 6, last], "{rule:?}");
        }
    }

    /// An append continues on the die after the previous page's; an
    /// overwrite goes to the old version's die; otherwise write order.
    #[test]
    fn hints_place_appends_after_and_overwrites_in_place() {
        let mut p = DieHint::new(false);
        let mut out = Vec::new();
        // No hint for the first page: write-order round-robin from die 0;
        // the next pages of the write continue from it (appends).
        p.place(&[page(0), page(1), page(2)], &[PageLayout::default(); 3], 8, &mut out);
        assert_eq!(units_of(&out), [0, 1, 2]);
        // Append after a page on die 6: dies 7, 0, 1.
        out.clear();
        let layout = [
            PageLayout { old_unit: None, prev_unit: Some(6), ..Default::default() },
            PageLayout::default(),
            PageLayout::default(),
        ];
        p.place(&[page(10), page(11), page(12)], &layout, 8, &mut out);
        assert_eq!(units_of(&out), [7, 0, 1]);
        // Overwrite of pages on dies 5 and 2; the third page appends after 2.
        out.clear();
        let layout = [
            PageLayout { old_unit: Some(5), prev_unit: None, ..Default::default() },
            PageLayout { old_unit: Some(2), prev_unit: Some(5), ..Default::default() },
            PageLayout::default(),
        ];
        p.place(&[page(20), page(21), page(22)], &layout, 8, &mut out);
        assert_eq!(units_of(&out), [5, 2, 3]);
        let s = p.stats();
        assert_eq!(s, vec![("hint_append_pages", 6.0), ("hint_overwrite_pages", 2.0), ("hint_none_pages", 1.0)]);
    }
}
