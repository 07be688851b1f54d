//! Runs of pages programmed round-robin over the parallel units in one
//! call: the untimed preconditioning (SSDsim's pre-processing,
//! docs/preconditioning.md), which writes the i-th page on unit
//! i mod units and maps it at once.
//!
//! [`Ftl::program_run`] does, page by page, exactly what
//! [`Ftl::program`] on the counter's unit followed by [`Ftl::map_pinned`]
//! does (same pages, same collections, same tables: a test compares the
//! two on random runs with GC), with the unit counter advanced by a
//! comparison instead of a division per page and, under a flat map, the
//! copy mapped without passing through the pending slot unless its
//! program triggers a collection (which must see it valid to move it).

use super::flat::{FLAT_COPY, PENDING};
use super::{EntryId, Ftl, FtlError, GcWork};
use crate::units::{ContentId, Lpn};

impl Ftl {
    /// Programs `contents[k]` for LPN `lpn + k`, for every `k` in order,
    /// each on unit `*next % units` (then `*next` advances by one,
    /// wrapping), and maps it; `index` as in [`Ftl::program`]. After page
    /// `k` is mapped, `page(k, e, gc)` gets its entry (`FLAT_COPY` under a
    /// flat map) and the collection its program triggered. Stops at the
    /// first error, the pages before it programmed and mapped (and `*next`
    /// advanced past the failed one, as [`Ftl::program`]'s caller did).
    pub fn program_run<F>(
        &mut self,
        next: &mut u32,
        lpn: Lpn,
        contents: &[ContentId],
        index: bool,
        mut page: F,
    ) -> Result<(), FtlError>
    where
        F: FnMut(usize, EntryId, Option<GcWork>),
    {
        let units = self.geo.unit_count();
        let mut unit = *next % units;
        for (k, &c) in contents.iter().enumerate() {
            let l = Lpn(lpn.0 + k as u32);
            let planes = self.geo.unit_planes(unit);
            let ptr = &mut self.unit_ptr[unit as usize];
            let plane = planes[*ptr as usize];
            *ptr = if *ptr as usize + 1 == planes.len() { 0 } else { *ptr + 1 };
            // `*next % units` without a division: one more, back to 0 at
            // `units`, and at the counter's wrap (0 % units = 0).
            *next = next.wrapping_add(1);
            unit = if unit + 1 == units || *next == 0 { 0 } else { unit + 1 };
            if !self.flat {
                let (e, _, gc) = self.program_in_plane(plane, c, index)?;
                self.map_pinned(l, e);
                page(k, e, gc);
                continue;
            }
            // `program_flat` then `map_pending`, the pending slot used only
            // where a collection may move the copy.
            let ppn = self.alloc_page(plane)?;
            self.live_entries += 1;
            let (ppn, gc) = if self.planes[plane as usize].free.len() < self.min_free {
                debug_assert!(self.pending.is_none(), "a flat copy programmed before the last one was mapped");
                self.pending = Some((ppn, c));
                self.p2e.set(ppn, PENDING);
                let gc = self.collect_triggered(plane)?;
                let (moved, _) = self.pending.take().expect("the pending copy stays until mapped");
                (moved, gc)
            } else {
                (ppn, None)
            };
            self.deferred.now(l);
            self.map_page(l, ppn, c);
            page(k, FLAT_COPY, gc);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Entry, GcRule};
    use super::*;
    use crate::config::Config;

    /// Everything of the FTL a later operation or a report can see.
    fn state(f: &Ftl) -> String {
        let geo = f.geometry();
        let pages = geo.planes * geo.blocks_per_plane * geo.pages_per_block;
        let p2e: Vec<u32> = (0..pages).map(|p| f.p2e.owner(crate::units::Ppn(p))).collect();
        let blocks: Vec<String> =
            (0..geo.planes * geo.blocks_per_plane).map(|b| format!("{:?}", f.block_meta(b))).collect();
        let planes: Vec<String> = f
            .planes
            .iter()
            .map(|p| {
                format!(
                    "{} {} {} {} {:?}",
                    p.active,
                    p.written,
                    p.programmed,
                    p.served_at,
                    p.free.iter().collect::<Vec<_>>()
                )
            })
            .collect();
        let entries: Vec<Entry> = f.entries.iter().copied().filter(|e| e.refs > 0).collect();
        format!(
            "l2p {:?}\nentries {:?}\nfree {:?}\np2e {:?}\nindex {:?}\nblocks {:?}\nplanes {:?}\nunit_ptr {:?}\n\
             counts {} {} {}\npending {:?}\ncontents {:?}",
            f.l2p,
            entries,
            f.free_entries,
            p2e,
            f.index,
            blocks,
            planes,
            f.unit_ptr,
            f.live_entries,
            f.indexed,
            f.gc_moved_shared,
            f.pending,
            f.contents,
        )
    }

    /// `program_run` leaves the FTL exactly as `program` on the counter's
    /// unit then `map_pinned`, page by page: the same tables, counts and
    /// collections, the same entries and GC work handed out, the same
    /// counter; on a tiny device where the runs (which overwrite each
    /// other's pages) trigger GC, under both maps and both GC rules, with
    /// and without indexing, fresh and aged, across the counter's wrap
    /// with a unit count that does not divide 2^32.
    #[test]
    fn a_run_programs_and_maps_as_page_by_page() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next_rand = move |m: u32| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % u64::from(m)) as u32
        };
        for flat in [false, true] {
            for rule in [GcRule::OnePerWrite, GcRule::UntilThreshold] {
                for (index, aged) in [(false, 0.0), (true, 0.0), (true, 0.3)] {
                    let mut cfg = Config::small_for_tests(3, 1, 16, 4);
                    cfg.geometry.planes_per_die = 2;
                    cfg.validate().unwrap();
                    // Below what `validate` accepts, for GC to run often.
                    cfg.gc.rule = rule;
                    cfg.gc.min_free_blocks = 3;
                    cfg.precondition.aged = aged;
                    let (mut by_page, mut by_run) = (Ftl::new(&cfg.ftl_params()), Ftl::new(&cfg.ftl_params()));
                    if flat {
                        for f in [&mut by_page, &mut by_run] {
                            f.map_flat();
                            f.keep_contents();
                        }
                    }
                    assert_eq!(by_page.geometry().unit_count(), 3);
                    let span = by_page.logical_pages() / 2;
                    let (mut next_a, mut next_b) = (u32::MAX - 40, u32::MAX - 40);
                    let mut gcs = 0;
                    for run in 0..400 {
                        let pages = 1 + next_rand(12);
                        let lpn = next_rand(span - pages);
                        // Contents repeat, so the index keeps first copies only.
                        let contents: Vec<ContentId> = (0..pages).map(|_| ContentId(next_rand(200))).collect();
                        let mut want = Vec::new();
                        for (k, &c) in contents.iter().enumerate() {
                            let unit = next_a % 3;
                            next_a = next_a.wrapping_add(1);
                            let (e, _, gc) = by_page.program(unit, c, index).unwrap();
                            by_page.map_pinned(Lpn(lpn + k as u32), e);
                            want.push((k, e, gc));
                        }
                        let mut got = Vec::new();
                        by_run
                            .program_run(&mut next_b, Lpn(lpn), &contents, index, |k, e, gc| got.push((k, e, gc)))
                            .unwrap();
                        let at = format!("flat {flat} {rule:?} index {index} aged {aged} run {run}");
                        assert_eq!(got, want, "{at}");
                        assert_eq!(next_b, next_a, "{at}");
                        assert_eq!(state(&by_run), state(&by_page), "{at}");
                        gcs += want.iter().filter(|w| w.2.is_some()).count();
                    }
                    by_run.check_invariants().unwrap();
                    assert!(next_a < u32::MAX - 40, "the counter wrapped");
                    assert!(gcs > 100, "{gcs} collections");
                }
            }
        }
    }
}
