//! Hash maps for tables keyed by integers on the per-page path: the dedup
//! engines' (fingerprints, copy ids, LPNs, metadata page numbers) and the
//! FTL's waiting maps of dynamic allocation (entry ids, LPNs).
//!
//! The standard `HashMap` hashes with SipHash-1-3, which resists
//! hash-flooding by a chosen key set; these keys come from the simulation
//! itself (fingerprints are already 64-bit mixes, ids and page numbers are
//! dense), so a single multiply-fold is enough and is several times
//! cheaper on the per-page path (BENCHMARKS.md, "Dedup engines vs
//! `caftl`"). No user iterates these maps in an order that reaches its
//! results, so the hasher changes speed only.

use crate::lru::LruMap;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FoldHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FoldHasher>>;
/// A `HashSet` with [`FoldHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FoldHasher>>;
/// An [`LruMap`] with [`FoldHasher`].
pub type FastLru<K, V> = LruMap<K, V, BuildHasherDefault<FoldHasher>>;

/// Folded 64×64→128-bit multiply of the integer key by an odd constant
/// (the high and low halves xored: every key bit reaches the low bits the
/// table indexes by and the high bits it tags with).
#[derive(Copy, Clone, Debug, Default)]
pub struct FoldHasher(u64);

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl FoldHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        let p = u128::from(self.0 ^ x) * u128::from(K);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }
}

impl Hasher for FoldHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn h(x: u64) -> u64 {
        BuildHasherDefault::<FoldHasher>::default().hash_one(x)
    }

    #[test]
    fn dense_keys_spread_over_low_and_high_bits() {
        // 4096 consecutive keys in 256 buckets by the low 8 bits and by
        // the top 7 bits (hashbrown's tag): no bucket empty or crowded.
        let mut low = [0u32; 256];
        let mut high = [0u32; 128];
        for k in 0..4096u64 {
            low[(h(k) & 255) as usize] += 1;
            high[(h(k) >> 57) as usize] += 1;
        }
        assert!(low.iter().all(|&n| (4..=40).contains(&n)), "{low:?}");
        assert!(high.iter().all(|&n| (8..=80).contains(&n)), "{high:?}");
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m: FastMap<u64, u32> = FastMap::default();
        for k in 0..10_000u64 {
            m.insert(k << 40, k as u32);
        }
        assert_eq!(m.len(), 10_000);
        assert!((0..10_000u64).all(|k| m.get(&(k << 40)) == Some(&(k as u32))));
        assert_eq!(m.get(&1), None);
    }
}
