//! The hash engines (`dedup.hash_engines`, `dedup.fingerprint`,
//! `dedup.hash_unit`, `dedup.hash_overlap`): see the module doc of
//! [`crate::timing`], "Hash engines".

use super::{HashOverlap, HashUnit, Timing};
use crate::units::Nanos;

/// The hash engines' load over a run (`dedup.hash_engines`,
/// `dedup.fingerprint`): pages hashed, engine time spent hashing, and the
/// time pages waited for an engine (from the write's arrival to the start
/// of the page's hash, so pages of one request queue behind each other).
/// The run report turns it into a utilization and warns when the engines
/// are saturated (docs/reliability.md, item 6).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HashLoad {
    pub engines: u32,
    pub pages: u64,
    pub busy: Nanos,
    /// Total wait in nanoseconds (a sum over pages of waits that may each
    /// approach the clock's range: 128 bits cannot overflow).
    pub wait_ns: u128,
}

impl HashLoad {
    /// A page of a write arriving at `t` hashed from `start` for `t_fp`.
    #[inline]
    fn count(&mut self, t: Nanos, start: Nanos, t_fp: Nanos) {
        self.pages += 1;
        self.busy += t_fp;
        self.wait_ns += u128::from((start - t).0);
    }
}

impl Timing {
    /// The earliest-free hash engine; ties to the lowest index
    /// (deterministic).
    #[inline]
    fn free_engine(&self) -> usize {
        let mut best = 0;
        for i in 1..self.hash_free.len() {
            if self.hash_free[i] < self.hash_free[best] {
                best = i;
            }
        }
        best
    }

    /// Fingerprint of one page arriving at `t` on the earliest-free engine;
    /// returns when the hash is known.
    #[inline]
    pub fn fingerprint(&mut self, t: Nanos) -> Nanos {
        let e = self.free_engine();
        let start = t.max(self.hash_free[e]);
        let done = start + self.t_fp;
        self.hash_free[e] = done;
        self.hash.count(t, start, self.t_fp);
        done
    }

    /// What the hash engines did so far (see [`HashLoad`]).
    pub fn hash_load(&self) -> HashLoad {
        self.hash
    }

    /// Fingerprints a write request of `pages` pages arriving at `t`
    /// (`dedup.hash_unit`, `dedup.hash_overlap`) and sets `ready[k]` to the
    /// time page k's program may be issued, which is also when page k
    /// completes if it is a duplicate:
    ///
    /// * `page` unit: each page on the earliest-free engine, in page order;
    ///   `request` unit: the whole request on the earliest-free engine,
    ///   page k hashed at `start + (k+1) x fingerprint`.
    /// * `pipelined`: page k is ready when its own hash is done;
    ///   `before-flash`: every page is ready when the request's last hash
    ///   is done.
    ///
    /// With the `page` unit, ready times never decrease from one call to
    /// the next (the engines' earliest free time only grows); with the
    /// `request` unit and several engines a later request can be ready
    /// before an earlier one.
    pub fn fingerprint_request(&mut self, t: Nanos, pages: usize, ready: &mut Vec<Nanos>) {
        self.hash_pages(t, pages, |_| true, self.t_fp, ready);
    }

    /// Like [`Timing::fingerprint_request`] for a dedup engine
    /// ([`crate::engine`]) that hashes a page in `t_fp` and only the pages
    /// with `hashed[k]` (the others are ready at `t` and take no engine
    /// time), under the same `hash_unit` / `hash_overlap` models.
    pub fn fingerprint_pages(&mut self, t: Nanos, hashed: &[bool], t_fp: Nanos, ready: &mut Vec<Nanos>) {
        self.hash_pages(t, hashed.len(), |k| hashed[k], t_fp, ready);
    }

    /// The hash engine models of both entry points: `pages` pages of which
    /// those with `hashed(k)` take `t_fp` each.
    #[inline]
    fn hash_pages(
        &mut self,
        t: Nanos,
        pages: usize,
        hashed: impl Fn(usize) -> bool,
        t_fp: Nanos,
        ready: &mut Vec<Nanos>,
    ) {
        ready.clear();
        match self.hash_unit {
            HashUnit::Page => {
                for k in 0..pages {
                    if hashed(k) {
                        let e = self.free_engine();
                        let start = t.max(self.hash_free[e]);
                        let done = start + t_fp;
                        self.hash_free[e] = done;
                        self.hash.count(t, start, t_fp);
                        ready.push(done);
                    } else {
                        ready.push(t);
                    }
                }
            }
            HashUnit::Request => {
                if !(0..pages).any(&hashed) {
                    ready.resize(pages, t);
                    return;
                }
                let e = self.free_engine();
                let mut done = t.max(self.hash_free[e]);
                for k in 0..pages {
                    if hashed(k) {
                        self.hash.count(t, done, t_fp);
                        done += t_fp;
                        ready.push(done);
                    } else {
                        ready.push(t);
                    }
                }
                self.hash_free[e] = done;
            }
        }
        if self.hash_overlap == HashOverlap::BeforeFlash {
            let last = ready.iter().copied().max().unwrap_or(t);
            ready.fill(last);
        }
    }
}
