//! Tables keyed by content id whose memory is bounded by the device, not by
//! the trace: [`ContentTable`].
//!
//! A content id names one content of the workload's population (a drawn
//! model's Zipf rank, a trace's interned fingerprint). How many ids there
//! are grows with the trace: FAD §IV-A sets the population to half the
//! pages a trace writes, so a trace ten times longer has ten times the
//! ids. A plain array of one slot per id (one load per lookup, and the
//! replay's look-ahead can prefetch the slot) is then as large as the
//! trace is long, and a billion-request cloud trace's would not fit in
//! memory, although the FTL's fingerprint index only ever holds the
//! contents with a live copy: at most one per physical page.
//!
//! So a table is a dense array while the ids stay below a limit the owner
//! derives from the device ([`ContentTable::new`]: [`DENSE_IDS_PER_PAGE`]
//! ids per physical page, a dense array no larger than a hash table over
//! every physical page would be), and becomes a hash map of its non-empty
//! slots, for good, the first time an id at or above the limit is stored
//! or reserved. The hash map holds only what the owner keeps non-empty (the
//! index removes a content when its primary copy dies), so its memory
//! follows the live data. Which form a table has never changes what it
//! reads back (pinned by `tables_read_back_the_same_in_either_form`); the
//! dense form is faster (a lookup is one load, and the look-ahead can
//! prefetch it; measured, the hash map's lookups are cache misses no
//! prefetch hides: `-p dedup` on the 1M-request benchmark trace takes
//! about twice the CPU with every table hashed), so every run whose
//! population stays under the limit (FAD Table I: 83,886,080 ids; the
//! benchmark trace ten times over stays under it) keeps
//! it. BENCHMARKS.md, "Streaming", measures both forms.

use crate::fastmap::FastMap;
use crate::prefetch::prefetch;
use crate::units::ContentId;
use std::fmt;

/// Ids per physical page a [`ContentTable`] holds densely: 4, so that a
/// dense table of 4-byte slots takes at most 16 B per physical page, what
/// a hash map of (id, slot) pairs over every physical page takes at its
/// usual load.
pub const DENSE_IDS_PER_PAGE: u64 = 4;

/// The dense limit for a device of `pages` physical pages
/// ([`DENSE_IDS_PER_PAGE`] per page, at most the whole id space).
pub fn dense_limit(pages: u64) -> u32 {
    (pages.saturating_mul(DENSE_IDS_PER_PAGE)).min(u64::from(u32::MAX)) as u32
}

/// The most a dense table of `V` slots reaches on a device of `pages`
/// physical pages: one slot per id below [`dense_limit`] (a table hashed
/// past it holds only its live slots).
pub fn dense_bytes<V>(pages: u64) -> u64 {
    u64::from(dense_limit(pages)).saturating_mul(std::mem::size_of::<V>() as u64)
}

/// A table from content id to a `V`, `V::default()` meaning empty; dense
/// below a limit, a hash map of the non-empty slots beyond (module doc).
#[derive(Clone)]
pub struct ContentTable<V> {
    form: Form<V>,
    limit: u32,
}

#[derive(Clone)]
enum Form<V> {
    Dense(Vec<V>),
    Hashed(FastMap<u32, V>),
}

impl<V: Copy + Default + PartialEq> ContentTable<V> {
    /// An empty table, dense for ids below `limit` (see [`dense_limit`]).
    pub fn new(limit: u32) -> ContentTable<V> {
        ContentTable { form: Form::Dense(Vec::new()), limit }
    }

    /// The slot of `c` (`V::default()` if empty).
    #[inline]
    pub fn get(&self, c: ContentId) -> V {
        match &self.form {
            Form::Dense(v) => v.get(c.0 as usize).copied().unwrap_or_default(),
            Form::Hashed(m) => hashed_get(m, c),
        }
    }

    /// The slot of `c` if the table is dense and has room for it: what the
    /// look-ahead may read without a hash lookup (a hint's input only).
    #[inline]
    pub fn peek(&self, c: ContentId) -> Option<V> {
        match &self.form {
            Form::Dense(v) => v.get(c.0 as usize).copied(),
            Form::Hashed(_) => None,
        }
    }

    /// Hints the CPU to fetch `c`'s slot (dense form only).
    #[inline]
    pub fn prefetch(&self, c: ContentId) {
        if let Form::Dense(v) = &self.form {
            if let Some(s) = v.get(c.0 as usize) {
                prefetch(s);
            }
        }
    }

    /// Stores `x` in `c`'s slot (`V::default()` empties it).
    #[inline]
    pub fn set(&mut self, c: ContentId, x: V) {
        if let Form::Dense(v) = &mut self.form {
            if let Some(s) = v.get_mut(c.0 as usize) {
                *s = x;
                return;
            }
        }
        self.set_beyond(c, x);
    }

    /// [`Self::set`] past the dense array's end, or in a hash map.
    #[cold]
    #[inline(never)]
    fn set_beyond(&mut self, c: ContentId, x: V) {
        if let Form::Dense(v) = &mut self.form {
            if x == V::default() {
                return;
            }
            if c.0 < self.limit {
                let i = c.0 as usize;
                v.resize((i + 1).next_power_of_two().min(self.limit as usize), V::default());
                v[i] = x;
                return;
            }
            self.make_hashed();
        }
        if let Form::Hashed(m) = &mut self.form {
            if x == V::default() {
                m.remove(&c.0);
            } else {
                m.insert(c.0, x);
            }
        }
    }

    /// Stores `x` in `c`'s slot if it is empty; whether it was (one
    /// lookup in either form).
    #[inline]
    pub fn set_if_empty(&mut self, c: ContentId, x: V) -> bool {
        if let Form::Dense(v) = &mut self.form {
            if let Some(s) = v.get_mut(c.0 as usize) {
                let empty = *s == V::default();
                if empty {
                    *s = x;
                }
                return empty;
            }
        }
        self.set_if_empty_beyond(c, x)
    }

    /// [`Self::set_if_empty`] past the dense array's end (an empty slot),
    /// or in a hash map.
    #[cold]
    #[inline(never)]
    fn set_if_empty_beyond(&mut self, c: ContentId, x: V) -> bool {
        if let Form::Hashed(m) = &mut self.form {
            // One lookup: the slot is found and filled together.
            return match m.entry(c.0) {
                std::collections::hash_map::Entry::Occupied(_) => false,
                std::collections::hash_map::Entry::Vacant(v) => {
                    if x != V::default() {
                        v.insert(x);
                    }
                    true
                }
            };
        }
        self.set(c, x);
        true
    }

    /// Empties `c`'s slot if it holds `x`; whether it did (one lookup in
    /// the dense form).
    #[inline]
    pub fn clear_if(&mut self, c: ContentId, x: V) -> bool {
        if x == V::default() {
            return false;
        }
        match &mut self.form {
            Form::Dense(v) => match v.get_mut(c.0 as usize) {
                Some(s) if *s == x => {
                    *s = V::default();
                    true
                }
                _ => false,
            },
            Form::Hashed(m) => hashed_clear_if(m, c, x),
        }
    }

    /// Sizes the table for ids below `contents` up front: a dense table
    /// grows to `contents` slots at once (one allocation, advised for huge
    /// pages) if that is within the limit, else becomes a hash map.
    pub fn reserve(&mut self, contents: u32) {
        let Form::Dense(v) = &mut self.form else { return };
        if contents as usize <= v.len() {
            return;
        }
        if contents <= self.limit {
            let mut grown = vec![V::default(); contents as usize];
            super::advise_huge_pages(&grown);
            grown[..v.len()].copy_from_slice(v);
            *v = grown;
        } else {
            self.make_hashed();
        }
    }

    /// Empties every slot; the table keeps its memory (a dense array its
    /// length, a hash map its capacity).
    pub fn clear(&mut self) {
        match &mut self.form {
            Form::Dense(v) => v.fill(V::default()),
            Form::Hashed(m) => m.clear(),
        }
    }

    /// Whether the table is a hash map (ids reached the limit).
    pub fn is_hashed(&self) -> bool {
        matches!(self.form, Form::Hashed(_))
    }

    /// The non-empty slots, `(id, slot)`, in id order.
    pub fn non_empty(&self) -> Vec<(u32, V)> {
        let mut out: Vec<(u32, V)> = match &self.form {
            Form::Dense(v) => {
                v.iter().enumerate().filter(|(_, &x)| x != V::default()).map(|(c, &x)| (c as u32, x)).collect()
            }
            Form::Hashed(m) => m.iter().map(|(&c, &x)| (c, x)).collect(),
        };
        out.sort_unstable_by_key(|&(c, _)| c);
        out
    }

    /// Slots the table holds in memory: the dense array's length, or the
    /// hash map's capacity.
    pub fn slots_held(&self) -> usize {
        match &self.form {
            Form::Dense(v) => v.len(),
            Form::Hashed(m) => m.capacity(),
        }
    }

    fn make_hashed(&mut self) {
        if let Form::Dense(v) = &self.form {
            let m = v.iter().enumerate().filter(|(_, &x)| x != V::default()).map(|(c, &x)| (c as u32, x)).collect();
            self.form = Form::Hashed(m);
        }
    }
}

/// [`ContentTable::get`] in a hash map (kept out of the dense path).
#[cold]
#[inline(never)]
fn hashed_get<V: Copy + Default>(m: &FastMap<u32, V>, c: ContentId) -> V {
    m.get(&c.0).copied().unwrap_or_default()
}

/// [`ContentTable::clear_if`] in a hash map (kept out of the dense path).
#[cold]
#[inline(never)]
fn hashed_clear_if<V: Copy + PartialEq>(m: &mut FastMap<u32, V>, c: ContentId, x: V) -> bool {
    match m.get(&c.0) {
        Some(&s) if s == x => {
            m.remove(&c.0);
            true
        }
        _ => false,
    }
}

/// The non-empty slots in id order, whatever the form (so that two tables
/// that read back the same print the same).
impl<V: Copy + Default + PartialEq + fmt::Debug> fmt::Debug for ContentTable<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.non_empty()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Both forms against a plain map, through every operation; the
        /// small limit makes most runs switch form part-way.
        #[test]
        fn tables_read_back_the_same_in_either_form(
            ops in prop::collection::vec((0u32..64, 0u32..4, 0u8..6), 1..200),
            limit in 1u32..80,
        ) {
            let mut t = ContentTable::<u32>::new(limit);
            let mut want = std::collections::BTreeMap::new();
            for (c, x, kind) in ops {
                match kind {
                    0 => t.reserve(c),
                    1 => {
                        t.clear();
                        want.clear();
                    }
                    2 => {
                        let empty = !want.contains_key(&c);
                        prop_assert_eq!(t.set_if_empty(ContentId(c), x), empty);
                        if empty && x != 0 { want.insert(c, x); }
                    }
                    3 => {
                        let holds = x != 0 && want.get(&c) == Some(&x);
                        prop_assert_eq!(t.clear_if(ContentId(c), x), holds);
                        if holds { want.remove(&c); }
                    }
                    _ => {
                        t.set(ContentId(c), x);
                        if x == 0 { want.remove(&c); } else { want.insert(c, x); }
                    }
                }
                for c in 0..64 {
                    prop_assert_eq!(t.get(ContentId(c)), want.get(&c).copied().unwrap_or(0));
                }
            }
            prop_assert_eq!(t.non_empty(), want.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn an_id_at_the_limit_makes_the_table_a_hash_map_of_its_live_slots() {
        let mut t = ContentTable::<u32>::new(8);
        for c in 0..8 {
            t.set(ContentId(c), c + 1);
        }
        assert!(!t.is_hashed());
        assert_eq!(t.slots_held(), 8);
        t.set(ContentId(1_000_000), 7);
        assert!(t.is_hashed());
        // Emptied slots leave the map: it holds what is live, not what was
        // ever stored.
        for c in (0..8).chain([1_000_000]) {
            t.set(ContentId(c), 0);
        }
        for c in 0..100_000u32 {
            t.set(ContentId(c * 7), 1);
            t.set(ContentId(c * 7), 0);
        }
        assert!(t.slots_held() < 64, "{} slots held for no live content", t.slots_held());
        assert_eq!(t.get(ContentId(3)), 0);
    }

    #[test]
    fn reserving_past_the_limit_hashes_and_within_it_stays_dense() {
        let mut t = ContentTable::<(u32, u32)>::new(100);
        t.reserve(100);
        assert!(!t.is_hashed());
        assert_eq!(t.slots_held(), 100);
        t.set(ContentId(5), (1, 2));
        t.reserve(101);
        assert!(t.is_hashed());
        assert_eq!(t.get(ContentId(5)), (1, 2));
        assert_eq!(dense_limit(20_971_520), 83_886_080);
        assert_eq!(dense_limit(u64::MAX), u32::MAX);
    }
}
