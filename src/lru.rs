//! A least-recently-used map with O(1) operations: a hash map from each key
//! to its slot, and the slots in one doubly linked recency list kept in a
//! vector (freed slots reused), so a hit relinks two slots instead of
//! moving a timestamp in an ordered map.
//!
//! Used where a model keeps a cache in LRU order: Light-Dedup's metadata
//! page cache (`engine::lightdedup`), the cluster nodes' read cache
//! (`cluster::timing`). Which key is least recently used is the same as
//! with a counter stamped on every access and the smallest stamp evicted,
//! the form those caches had before (BENCHMARKS.md, "Dedup engines vs
//! `caftl`").

use std::collections::hash_map::{Entry, RandomState};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

/// No slot.
const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Slot<K, V> {
    key: K,
    value: V,
    /// Towards the most recently used.
    prev: u32,
    /// Towards the least recently used.
    next: u32,
}

/// Keys with a value each, in order of their last use ([`LruMap::get_mut`]
/// or [`LruMap::insert`]).
#[derive(Clone, Debug)]
pub struct LruMap<K, V, S = RandomState> {
    index: HashMap<K, u32, S>,
    slots: Vec<Slot<K, V>>,
    free: Vec<u32>,
    /// The most recently used slot.
    head: u32,
    /// The least recently used slot.
    tail: u32,
}

impl<K, V, S: Default> Default for LruMap<K, V, S> {
    fn default() -> Self {
        LruMap { index: HashMap::default(), slots: Vec::new(), free: Vec::new(), head: NIL, tail: NIL }
    }
}

impl<K: Hash + Eq + Copy, V: Copy, S: BuildHasher + Default> LruMap<K, V, S> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether `key` is present (its place in the order unchanged).
    pub fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    /// The value of `key`, which becomes the most recently used.
    #[inline]
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let i = *self.index.get(key)?;
        self.move_to_front(i);
        Some(&mut self.slots[i as usize].value)
    }

    /// Inserts `key` with `value` as the most recently used (replacing the
    /// value if `key` is present). One lookup in the index.
    pub fn insert(&mut self, key: K, value: V) {
        let next = self.free.last().copied().unwrap_or(self.slots.len() as u32);
        let i = match self.index.entry(key) {
            Entry::Occupied(e) => {
                let i = *e.get();
                self.slots[i as usize].value = value;
                self.move_to_front(i);
                return;
            }
            Entry::Vacant(e) => *e.insert(next),
        };
        let slot = Slot { key, value, prev: NIL, next: self.head };
        if self.free.pop().is_some() {
            self.slots[i as usize] = slot;
        } else {
            self.slots.push(slot);
        }
        self.link_front(i);
    }

    /// Removes and returns the least recently used key and its value.
    pub fn pop_lru(&mut self) -> Option<(K, V)> {
        let i = self.tail;
        if i == NIL {
            return None;
        }
        self.unlink(i);
        self.free.push(i);
        let s = &self.slots[i as usize];
        self.index.remove(&s.key);
        Some((s.key, s.value))
    }

    /// The values, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.index.values().map(|&i| &self.slots[i as usize].value)
    }

    #[inline]
    fn move_to_front(&mut self, i: u32) {
        if self.head != i {
            self.unlink(i);
            self.slots[i as usize].next = self.head;
            self.link_front(i);
        }
    }

    /// Makes `i` (whose `next` is the current head) the head.
    #[inline]
    fn link_front(&mut self, i: u32) {
        self.slots[i as usize].prev = NIL;
        match self.head {
            NIL => self.tail = i,
            h => self.slots[h as usize].prev = i,
        }
        self.head = i;
    }

    #[inline]
    fn unlink(&mut self, i: u32) {
        let (prev, next) = (self.slots[i as usize].prev, self.slots[i as usize].next);
        match prev {
            NIL => self.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Against the stamped form it replaces (a counter per access, the
    /// smallest stamp evicted), on a pseudo-random mix of hits, inserts and
    /// evictions: the same keys evicted in the same order.
    #[test]
    fn evicts_as_a_stamped_map_would() {
        let mut lru: LruMap<u64, u32> = LruMap::new();
        let (mut at, mut order, mut stamp) = (HashMap::<u64, u64>::new(), BTreeMap::<u64, u64>::new(), 0u64);
        let mut x = 12345u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 97;
            stamp += 1;
            if let Some(s) = at.insert(key, stamp) {
                order.remove(&s);
            }
            order.insert(stamp, key);
            lru.insert(key, step);
            assert_eq!(lru.get_mut(&key).copied(), Some(step));
            while lru.len() > 40 {
                let (k, _) = lru.pop_lru().unwrap();
                let (_, want) = order.pop_first().unwrap();
                at.remove(&want);
                assert_eq!(k, want, "step {step}");
            }
            assert_eq!(lru.len(), at.len());
        }
    }

    /// By hand: a hit moves a key to the front; the value is kept.
    #[test]
    fn a_hit_moves_the_key_to_the_front() {
        let mut lru: LruMap<u32, char> = LruMap::new();
        for (k, v) in [(1, 'a'), (2, 'b'), (3, 'c')] {
            lru.insert(k, v);
        }
        assert_eq!(lru.get_mut(&1), Some(&mut 'a'));
        assert_eq!(lru.pop_lru(), Some((2, 'b')));
        lru.insert(4, 'd');
        assert_eq!(lru.pop_lru(), Some((3, 'c')));
        assert_eq!(lru.pop_lru(), Some((1, 'a')));
        assert_eq!(lru.pop_lru(), Some((4, 'd')));
        assert_eq!(lru.pop_lru(), None);
        assert!(lru.is_empty());
    }
}
