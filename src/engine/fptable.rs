//! A flat open-addressing table from 64-bit fingerprints to 32-bit values:
//! Light-Dedup's in-DRAM fingerprint index (§4.1).
//!
//! Keys are already uniform 64-bit mixes, so a key's home bucket is its top
//! bits (no hashing), and key and value sit side by side in one 16-byte
//! bucket: a lookup touches one cache line where a standard hash map
//! touches its control bytes and then its buckets. Linear probing, at most
//! 3/4 full, deletion by backward shift (no tombstones). The table's size
//! is a simulator artefact: the engine reports the index's DRAM at the
//! paper's 40 B per fingerprint, not this layout's.

/// One bucket: a key and its value; empty when `value == EMPTY`.
#[derive(Copy, Clone, Debug)]
struct Bucket {
    key: u64,
    value: u32,
}

const EMPTY: u32 = u32::MAX;
const MIN_BITS: u32 = 4;

/// The table. See the module doc. Values must be below `u32::MAX`.
#[derive(Clone, Debug)]
pub struct FpTable {
    buckets: Vec<Bucket>,
    /// log2 of the bucket count.
    bits: u32,
    len: usize,
}

impl Default for FpTable {
    fn default() -> Self {
        FpTable { buckets: vec![Bucket { key: 0, value: EMPTY }; 1 << MIN_BITS], bits: MIN_BITS, len: 0 }
    }
}

impl FpTable {
    #[inline]
    fn mask(&self) -> usize {
        (1usize << self.bits) - 1
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (key >> (64 - self.bits)) as usize
    }

    /// The bucket holding `key`, if any.
    #[inline]
    fn find(&self, key: u64) -> Option<usize> {
        let mask = self.mask();
        let mut i = self.home(key);
        loop {
            let b = &self.buckets[i];
            if b.value == EMPTY {
                return None;
            }
            if b.key == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Number of keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.find(key).map(|i| self.buckets[i].value)
    }

    pub fn contains_key(&self, key: u64) -> bool {
        self.find(key).is_some()
    }

    /// Sets `key`'s value, returning the previous one.
    pub fn insert(&mut self, key: u64, value: u32) -> Option<u32> {
        debug_assert!(value != EMPTY);
        if let Some(i) = self.find(key) {
            return Some(std::mem::replace(&mut self.buckets[i].value, value));
        }
        if (self.len + 1) * 4 > self.buckets.len() * 3 {
            self.grow();
        }
        let mask = self.mask();
        let mut i = self.home(key);
        while self.buckets[i].value != EMPTY {
            i = (i + 1) & mask;
        }
        self.buckets[i] = Bucket { key, value };
        self.len += 1;
        None
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let mut hole = self.find(key)?;
        let value = self.buckets[hole].value;
        let mask = self.mask();
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let b = self.buckets[j];
            if b.value == EMPTY {
                break;
            }
            // `b` may fill the hole unless its home lies cyclically in
            // (hole, j]: moving it before its home would lose it.
            let h = self.home(b.key);
            let stays = if hole <= j { hole < h && h <= j } else { hole < h || h <= j };
            if !stays {
                self.buckets[hole] = b;
                hole = j;
            }
        }
        self.buckets[hole].value = EMPTY;
        self.len -= 1;
        Some(value)
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        self.bits += 1;
        self.buckets = vec![Bucket { key: 0, value: EMPTY }; 1 << self.bits];
        let mask = self.mask();
        for b in old.into_iter().filter(|b| b.value != EMPTY) {
            let mut i = self.home(b.key);
            while self.buckets[i].value != EMPTY {
                i = (i + 1) & mask;
            }
            self.buckets[i] = b;
        }
    }

    /// Hints the CPU to fetch `key`'s home bucket (a later [`FpTable::get`]
    /// then finds it in cache).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        crate::prefetch::prefetch(&self.buckets[self.home(key)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mix64;
    use std::collections::HashMap;

    /// Random inserts, overwrites and removals, with keys crowded into few
    /// homes (long probe runs that wrap around the end), agree with a
    /// standard map at every step.
    #[test]
    fn agrees_with_a_hash_map() {
        for crowd in [0u32, 52, 60] {
            let mut t = FpTable::default();
            let mut m: HashMap<u64, u32> = HashMap::new();
            for i in 0..20_000u64 {
                let r = mix64(i ^ u64::from(crowd) << 40);
                // Keys from a small pool, their top bits cleared by `crowd`.
                let key = mix64(r % 3000) >> crowd | (r % 2) << 63;
                match r % 5 {
                    0 | 1 => assert_eq!(t.remove(key), m.remove(&key), "remove {key:x}"),
                    _ => assert_eq!(t.insert(key, (r >> 40) as u32), m.insert(key, (r >> 40) as u32)),
                }
                assert_eq!(t.len(), m.len());
                let probe = mix64(r) % 3000;
                let k2 = mix64(probe) >> crowd;
                assert_eq!(t.get(k2), m.get(&k2).copied());
            }
            for (&k, &v) in &m {
                assert_eq!(t.get(k), Some(v));
            }
        }
    }
}
