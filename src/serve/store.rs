//! The bytes of a served device: every written page kept once per distinct
//! content, so that reads return exactly the bytes last written and the
//! simulated device sees each page's real content identity.
//!
//! * A page's content is identified by a hash of its bytes ([`HashKind`]),
//!   and **verified byte by byte**: two pages with the same hash and
//!   different bytes are different contents (a *collision*, counted). So the
//!   store is always exact, whatever the hash. The simulation gets both:
//!   content ids that stand for byte identity, and each content's
//!   fingerprint ([`PageStore::fingerprint`]) for the engines' indexes, so
//!   a weak hash makes collisions the engines see (docs/serve.md, "Hash
//!   collisions").
//! * Content ids are dense small integers, never reused: the FTL's
//!   fingerprint index is a table indexed by id, and an engine's stale
//!   fingerprint of a freed copy must never match new bytes.
//! * Unique pages live in memory up to a budget (`--store-memory`), then in
//!   a spill file (`--store DIR`); a content no logical page holds any more
//!   frees its bytes. Memory per distinct page beyond its bytes: its
//!   `Content` record (32 B), its hash-table entry and the entry's id list
//!   (one small allocation), plus 4 B per logical page of the export;
//!   BENCHMARKS.md measures the total.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// How a page's content hash is computed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HashKind {
    /// XXH3-128 (the default): non-cryptographic, about 30 GB/s.
    Xxh3,
    /// The first 128 bits of SHA-256 (CAFTL's and SmartDedup's engines
    /// assume a cryptographic fingerprint; their cost model charges
    /// `dedup.fingerprint` per page whichever hash the store uses).
    Sha256,
    /// XXH3-128 truncated to this many bits (1-64): forces real collisions,
    /// for tests.
    Tiny(u8),
}

impl FromStr for HashKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "xxh3" | "xxh3-128" => Ok(HashKind::Xxh3),
            "sha256" => Ok(HashKind::Sha256),
            _ => match s.strip_prefix("tiny:").map(str::parse::<u8>) {
                Some(Ok(b)) if (1..=64).contains(&b) => Ok(HashKind::Tiny(b)),
                _ => Err(format!("unknown hash `{s}`: use xxh3 (default), sha256, or tiny:BITS (1-64, tests)")),
            },
        }
    }
}

impl std::fmt::Display for HashKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HashKind::Xxh3 => write!(f, "xxh3-128"),
            HashKind::Sha256 => write!(f, "sha256 (first 128 bits)"),
            HashKind::Tiny(b) => write!(f, "xxh3 truncated to {b} bits"),
        }
    }
}

impl HashKind {
    pub fn hash(self, data: &[u8]) -> u128 {
        match self {
            HashKind::Xxh3 => xxhash_rust::xxh3::xxh3_128(data),
            HashKind::Sha256 => {
                use sha2::Digest;
                let d = sha2::Sha256::digest(data);
                u128::from_be_bytes(d[..16].try_into().expect("32-byte digest"))
            }
            HashKind::Tiny(b) => xxhash_rust::xxh3::xxh3_128(data) & ((1u128 << b) - 1),
        }
    }
}

/// The hash table's hasher: the key is already a hash, so its low 64 bits
/// are used as they are (mixed once, for the truncated test hashes).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = (v as u64 ^ (v >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Where a content's bytes are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Loc {
    /// Freed: no logical page holds it.
    None,
    Mem(u32),
    Spill(u32),
}

/// One distinct content ever stored.
#[derive(Copy, Clone, Debug)]
struct Content {
    hash: u128,
    /// Logical pages holding it.
    refs: u32,
    loc: Loc,
}

/// Store errors (the server answers `ENOSPC` or `EIO` and says why).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the page store is full: {mem} bytes of --store-memory in use and no --store DIR to spill to; \
         give --store DIR or a larger --store-memory"
    )]
    Full { mem: u64 },
    #[error("spill file {}: {source}", path.display())]
    Spill { path: PathBuf, source: io::Error },
    #[error("too many distinct contents (2^32)")]
    Ids,
}

/// Counters of a store.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StoreStats {
    /// Distinct contents ever stored (ids handed out).
    pub contents: u64,
    /// Contents whose bytes are held now (in memory or spilled).
    pub live_contents: u64,
    pub mem_pages: u64,
    pub spill_pages: u64,
    /// Pages whose hash matched a stored content with other bytes.
    pub collisions: u64,
}

/// Pages of `page` bytes per memory chunk.
const CHUNK_PAGES: usize = 256;

/// The page store. See the module doc.
pub struct PageStore {
    page: usize,
    hash: HashKind,
    /// Per logical page: content id + 1 (0: never written or trimmed, reads zeros).
    lpn: Vec<u32>,
    contents: Vec<Content>,
    /// Hash -> content ids with that hash (more than one only on collisions).
    by_hash: HashMap<u128, Vec<u32>, BuildHasherDefault<KeyHasher>>,
    chunks: Vec<Box<[u8]>>,
    mem_slots: u32,
    mem_free: Vec<u32>,
    mem_budget_pages: u64,
    spill_dir: Option<PathBuf>,
    spill: Option<(File, PathBuf)>,
    spill_slots: u32,
    spill_free: Vec<u32>,
    stats: StoreStats,
}

impl PageStore {
    /// A store for `pages` logical pages of `page` bytes, keeping at most
    /// `mem_budget` bytes of page data in memory, spilling into a file in
    /// `spill_dir` beyond that.
    pub fn new(page: usize, pages: u64, hash: HashKind, mem_budget: u64, spill_dir: Option<&Path>) -> PageStore {
        PageStore {
            page,
            hash,
            lpn: vec![0; pages as usize],
            contents: Vec::new(),
            by_hash: HashMap::default(),
            chunks: Vec::new(),
            mem_slots: 0,
            mem_free: Vec::new(),
            mem_budget_pages: mem_budget / page as u64,
            spill_dir: spill_dir.map(Path::to_path_buf),
            spill: None,
            spill_slots: 0,
            spill_free: Vec::new(),
            stats: StoreStats::default(),
        }
    }

    pub fn stats(&self) -> &StoreStats {
        &self.stats
    }

    /// Bytes of memory the store holds (page data and tables; estimate).
    pub fn memory_bytes(&self) -> u64 {
        let data = self.chunks.len() as u64 * (CHUNK_PAGES * self.page) as u64;
        let tables = self.lpn.len() as u64 * 4
            + self.contents.capacity() as u64 * std::mem::size_of::<Content>() as u64
            + self.by_hash.capacity() as u64 * 48;
        data + tables
    }

    fn mem_page(&self, slot: u32) -> &[u8] {
        let (c, i) = (slot as usize / CHUNK_PAGES, slot as usize % CHUNK_PAGES);
        &self.chunks[c][i * self.page..(i + 1) * self.page]
    }

    fn mem_page_mut(&mut self, slot: u32) -> &mut [u8] {
        let (c, i) = (slot as usize / CHUNK_PAGES, slot as usize % CHUNK_PAGES);
        let p = self.page;
        &mut self.chunks[c][i * p..(i + 1) * p]
    }

    fn spill_err(&self, source: io::Error) -> StoreError {
        let path = self.spill.as_ref().map(|s| s.1.clone()).or_else(|| self.spill_dir.clone()).unwrap_or_default();
        StoreError::Spill { path, source }
    }

    /// Copies content `id`'s bytes into `out`.
    fn load(&self, id: u32, out: &mut [u8]) -> Result<(), StoreError> {
        match self.contents[id as usize].loc {
            Loc::Mem(s) => out.copy_from_slice(self.mem_page(s)),
            Loc::Spill(s) => {
                let (f, _) = self.spill.as_ref().expect("a spilled page has a file");
                f.read_exact_at(out, s as u64 * self.page as u64).map_err(|e| self.spill_err(e))?;
            }
            Loc::None => out.fill(0),
        }
        Ok(())
    }

    fn same_bytes(&self, id: u32, data: &[u8], scratch: &mut Vec<u8>) -> Result<bool, StoreError> {
        match self.contents[id as usize].loc {
            Loc::Mem(s) => Ok(self.mem_page(s) == data),
            _ => {
                scratch.resize(self.page, 0);
                self.load(id, scratch)?;
                Ok(scratch[..] == *data)
            }
        }
    }

    /// Where a new content's bytes go.
    fn place(&mut self, data: &[u8]) -> Result<Loc, StoreError> {
        if let Some(s) = self.mem_free.pop() {
            self.mem_page_mut(s).copy_from_slice(data);
            self.stats.mem_pages += 1;
            return Ok(Loc::Mem(s));
        }
        if u64::from(self.mem_slots) < self.mem_budget_pages {
            let s = self.mem_slots;
            if s as usize / CHUNK_PAGES == self.chunks.len() {
                self.chunks.push(vec![0; CHUNK_PAGES * self.page].into_boxed_slice());
            }
            self.mem_slots += 1;
            self.mem_page_mut(s).copy_from_slice(data);
            self.stats.mem_pages += 1;
            return Ok(Loc::Mem(s));
        }
        let Some(dir) = self.spill_dir.clone() else {
            return Err(StoreError::Full { mem: self.mem_budget_pages * self.page as u64 });
        };
        if self.spill.is_none() {
            let path = dir.join(format!("dedupsim-store-{}.bin", std::process::id()));
            let f = File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|source| StoreError::Spill { path: path.clone(), source })?;
            self.spill = Some((f, path));
        }
        let s = match self.spill_free.pop() {
            Some(s) => s,
            None => {
                self.spill_slots += 1;
                self.spill_slots - 1
            }
        };
        let (f, _) = self.spill.as_ref().expect("opened above");
        f.write_all_at(data, s as u64 * self.page as u64).map_err(|e| self.spill_err(e))?;
        self.stats.spill_pages += 1;
        Ok(Loc::Spill(s))
    }

    /// Drops a reference to content `id`; frees its bytes at zero.
    fn release(&mut self, id: u32) {
        let c = &mut self.contents[id as usize];
        c.refs -= 1;
        if c.refs > 0 {
            return;
        }
        match std::mem::replace(&mut c.loc, Loc::None) {
            Loc::Mem(s) => {
                self.mem_free.push(s);
                self.stats.mem_pages -= 1;
            }
            Loc::Spill(s) => {
                self.spill_free.push(s);
                self.stats.spill_pages -= 1;
            }
            Loc::None => {}
        }
        self.stats.live_contents -= 1;
        let h = c.hash;
        if let Some(ids) = self.by_hash.get_mut(&h) {
            ids.retain(|&x| x != id);
            if ids.is_empty() {
                self.by_hash.remove(&h);
            }
        }
    }

    /// Stores `data` (one page) at logical page `lpn`; returns its content id.
    pub fn write_page(&mut self, lpn: u64, data: &[u8], scratch: &mut Vec<u8>) -> Result<u32, StoreError> {
        let h = self.hash.hash(data);
        let (mut found, mut colliding) = (None, false);
        if let Some(ids) = self.by_hash.get(&h) {
            for &id in ids {
                if self.same_bytes(id, data, scratch)? {
                    found = Some(id);
                    break;
                }
                colliding = true;
            }
        }
        let id = match found {
            Some(id) => id,
            None => {
                if colliding {
                    self.stats.collisions += 1;
                }
                let id = u32::try_from(self.contents.len()).map_err(|_| StoreError::Ids)?;
                let loc = self.place(data)?;
                self.contents.push(Content { hash: h, refs: 0, loc });
                self.by_hash.entry(h).or_default().push(id);
                self.stats.contents += 1;
                self.stats.live_contents += 1;
                id
            }
        };
        self.contents[id as usize].refs += 1;
        let old = std::mem::replace(&mut self.lpn[lpn as usize], id + 1);
        if old != 0 {
            self.release(old - 1);
        }
        Ok(id)
    }

    /// The fingerprint the simulated engines index for content `id`: the
    /// low 64 bits of its hash (all of a `tiny:BITS` hash).
    pub fn fingerprint(&self, id: u32) -> u64 {
        self.contents[id as usize].hash as u64
    }

    /// Copies logical page `lpn`'s bytes into `out` (zeros if never written).
    pub fn read_page(&self, lpn: u64, out: &mut [u8]) -> Result<(), StoreError> {
        match self.lpn[lpn as usize] {
            0 => {
                out.fill(0);
                Ok(())
            }
            id => self.load(id - 1, out),
        }
    }

    /// Forgets logical page `lpn` (it reads zeros).
    pub fn trim_page(&mut self, lpn: u64) {
        let old = std::mem::replace(&mut self.lpn[lpn as usize], 0);
        if old != 0 {
            self.release(old - 1);
        }
    }

    /// Removes the spill file, if any.
    pub fn remove_spill(&mut self) {
        if let Some((_, path)) = self.spill.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for PageStore {
    fn drop(&mut self) {
        self.remove_spill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(b: u8) -> Vec<u8> {
        vec![b; 512]
    }

    #[test]
    fn reads_return_what_was_written_and_duplicates_are_stored_once() {
        let mut s = PageStore::new(512, 16, HashKind::Xxh3, 1 << 20, None);
        let mut scratch = Vec::new();
        let a = s.write_page(0, &page(1), &mut scratch).unwrap();
        let b = s.write_page(5, &page(1), &mut scratch).unwrap();
        let c = s.write_page(6, &page(2), &mut scratch).unwrap();
        assert_eq!((a, b, c), (0, 0, 1));
        assert_eq!(s.stats().mem_pages, 2);
        let mut out = page(9);
        s.read_page(5, &mut out).unwrap();
        assert_eq!(out, page(1));
        s.read_page(3, &mut out).unwrap();
        assert_eq!(out, page(0));
        // Overwrite both holders of content 0: its bytes are freed, and the
        // same bytes written again get a new id (ids are never reused).
        s.write_page(0, &page(2), &mut scratch).unwrap();
        s.trim_page(5);
        assert_eq!(s.stats().live_contents, 1);
        assert_eq!(s.stats().mem_pages, 1);
        assert_eq!(s.write_page(7, &page(1), &mut scratch).unwrap(), 2);
        s.read_page(5, &mut out).unwrap();
        assert_eq!(out, page(0));
    }

    #[test]
    fn collisions_of_a_tiny_hash_keep_bytes_exact() {
        // 1-bit hash: 8 distinct pages must collide.
        let mut s = PageStore::new(512, 16, HashKind::Tiny(1), 1 << 20, None);
        let mut scratch = Vec::new();
        for b in 0..8u8 {
            s.write_page(u64::from(b), &page(b + 1), &mut scratch).unwrap();
        }
        assert_eq!(s.stats().contents, 8);
        assert!(s.stats().collisions >= 6, "{:?}", s.stats());
        let mut out = page(0);
        for b in 0..8u8 {
            s.read_page(u64::from(b), &mut out).unwrap();
            assert_eq!(out, page(b + 1));
        }
        // A true duplicate still finds its content among the colliders.
        assert_eq!(s.write_page(9, &page(3), &mut scratch).unwrap(), 2);
    }

    #[test]
    fn spills_beyond_the_memory_budget_and_refuses_without_a_dir() {
        let dir = std::env::temp_dir().join(format!("dedupsim-store-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = PageStore::new(512, 16, HashKind::Xxh3, 2 * 512, Some(&dir));
        let mut scratch = Vec::new();
        for b in 0..6u8 {
            s.write_page(u64::from(b), &page(b + 1), &mut scratch).unwrap();
        }
        assert_eq!((s.stats().mem_pages, s.stats().spill_pages), (2, 4));
        let mut out = page(0);
        for b in 0..6u8 {
            s.read_page(u64::from(b), &mut out).unwrap();
            assert_eq!(out, page(b + 1));
        }
        // Duplicates of spilled pages are verified from the file.
        assert_eq!(s.write_page(8, &page(6), &mut scratch).unwrap(), 5);
        drop(s);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the spill file is removed");
        std::fs::remove_dir(&dir).unwrap();
        let mut s = PageStore::new(512, 16, HashKind::Xxh3, 512, None);
        s.write_page(0, &page(1), &mut scratch).unwrap();
        let e = s.write_page(1, &page(2), &mut scratch).unwrap_err().to_string();
        assert!(e.contains("give --store DIR"), "{e}");
        assert_eq!(
            "tiny:0".parse::<HashKind>().unwrap_err(),
            "unknown hash `tiny:0`: use xxh3 (default), sha256, or tiny:BITS (1-64, tests)"
        );
    }
}
