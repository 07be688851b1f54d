//! In-file duplicates of a large write: which earlier page of the same
//! request holds the same content (FAD §III-D: a content occurring twice in
//! one file is one candidate, so the request path finds a repeat before it
//! looks the content up in the fingerprint index).
//!
//! A request of up to [`super::SMALL_FILE`] pages scans its own earlier
//! pages; a larger one uses [`InFile`], a table local to the request: its
//! size follows the largest request written, not the workload's content
//! ids, so it stays a few cache lines for ordinary requests and costs no
//! memory per id drawn. (It replaced a table indexed by content id, 8 B
//! per id of the whole workload, up to 640 MiB on FAD Table I, for an
//! answer that never outlives one request.)

use crate::units::ContentId;

/// Content id -> the first page of the current request holding it: open
/// addressing with linear probing, at least twice as many slots as the
/// request has pages (so a probe always ends), each slot stamped with the
/// request it belongs to, so that starting a request clears nothing.
#[derive(Debug, Default)]
pub(super) struct InFile {
    slots: Vec<Slot>,
    /// The current request's stamp; 0 marks a slot never used.
    stamp: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    stamp: u32,
    content: u32,
    first: u32,
}

/// Fewest slots kept: a large request has more than `SMALL_FILE` pages.
const MIN_SLOTS: usize = 64;

impl InFile {
    /// Starts a request of `pages` pages: every slot empty.
    pub(super) fn begin(&mut self, pages: usize) {
        let want = pages.saturating_mul(2).next_power_of_two().max(MIN_SLOTS);
        if self.slots.len() < want {
            self.slots = vec![Slot::default(); want];
            self.stamp = 0;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped: slots stamped long ago would read as current.
            self.slots.fill(Slot::default());
            self.stamp = 1;
        }
    }

    /// The first page of this request holding `c`; `None`, recording page
    /// `k` as its first, if no earlier page does. At most `pages` (of
    /// [`InFile::begin`]) contents per request.
    #[inline]
    pub(super) fn first_or_insert(&mut self, c: ContentId, k: u32) -> Option<u32> {
        let mask = self.slots.len() - 1;
        // Fibonacci hashing: the product's high half, so consecutive ids
        // spread over the table.
        let mut i = ((u64::from(c.0).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 32) as usize & mask;
        loop {
            let s = &mut self.slots[i];
            if s.stamp != self.stamp {
                *s = Slot { stamp: self.stamp, content: c.0, first: k };
                return None;
            }
            if s.content == c.0 {
                return Some(s.first);
            }
            i = (i + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the request path's scan of small files answers.
    fn scanned(contents: &[u32]) -> Vec<Option<u32>> {
        (0..contents.len()).map(|k| contents[..k].iter().position(|&x| x == contents[k]).map(|p| p as u32)).collect()
    }

    fn tabled(t: &mut InFile, contents: &[u32]) -> Vec<Option<u32>> {
        t.begin(contents.len());
        contents.iter().enumerate().map(|(k, &c)| t.first_or_insert(ContentId(c), k as u32)).collect()
    }

    proptest! {
        /// Request after request through one table (stamps, growth,
        /// collisions from a narrow id range): the same first pages as a
        /// scan.
        #[test]
        fn finds_the_first_page_as_a_scan_does(
            requests in prop::collection::vec(
                (prop::collection::vec(0u32..200, 1..300), any::<bool>()), 1..12),
        ) {
            let mut t = InFile::default();
            for (contents, spread) in requests {
                // Ids far apart as well as close together.
                let contents: Vec<u32> =
                    contents.iter().map(|&c| if spread { c.wrapping_mul(0x0100_0193) } else { c }).collect();
                prop_assert_eq!(tabled(&mut t, &contents), scanned(&contents));
            }
        }
    }

    #[test]
    fn a_wrapped_stamp_forgets_every_earlier_request() {
        let mut t = InFile::default();
        assert_eq!(tabled(&mut t, &[5, 6, 5]), vec![None, None, Some(0)]);
        // The next request would take stamp 0, which marks empty slots.
        t.stamp = u32::MAX;
        assert_eq!(tabled(&mut t, &[6, 5]), vec![None, None]);
        assert_eq!(t.stamp, 1);
        assert_eq!(tabled(&mut t, &[5, 7, 5, 6]), vec![None, None, Some(0), None]);
    }

    #[test]
    fn the_table_follows_the_largest_request() {
        let mut t = InFile::default();
        t.begin(40);
        assert_eq!(t.slots.len(), 128);
        t.begin(3);
        assert_eq!(t.slots.len(), 128);
        let contents: Vec<u32> = (0..1000).map(|k| k % 700).collect();
        assert_eq!(tabled(&mut t, &contents), scanned(&contents));
        assert_eq!(t.slots.len(), 2048);
    }
}
