//! ReoDedup's relocation algorithms as pure functions (Wang et al.,
//! "Revisiting Fragmentation for Deduplication in Clustered Primary Storage
//! Systems", §IV-A CSR and §IV-B ATR).
//!
//! Input: a window of recent files, each the list of its chunk ids (chunks
//! may be shared between files: that is what deduplication did). Output: a
//! [`Layout`], the order in which the window's unique chunks are to be
//! placed, plus statistics. What "placed in order" means is the caller's:
//! consecutive addresses on a disk (the paper's Ceph/HDD setting), or
//! different parallel units of one stripe inside an SSD (§VI, the
//! `reodedup-*` policies, docs/reodedup.md), or consecutive slots of a
//! container on a cluster node.
//!
//! * [`csr`]: cosine-similarity based relocating, the greedy algorithm of
//!   §IV-A (chunks with the most similar file vectors placed side by side;
//!   the new order is kept only if its adjacency similarity beats the
//!   original order's, Step 5).
//! * [`atr`]: adjacency-table based relocating, §IV-B (walk the
//!   file-chunk adjacency table FCAT, chaining each chunk to an unplaced
//!   chunk of one of its files).
//!
//! The model (§IV-A): chunk `c`'s *vector* has one 0/1 component per file
//! of the window (1 iff `c` occurs in that file). The similarity of two
//! chunks is the cosine of their vectors (Eq. 2); for 0/1 vectors that is
//! `|F(a) ∩ F(b)| / sqrt(|F(a)| · |F(b)|)` with `F(c)` the set of files
//! holding `c`. The *adjacency similarity* of an order is the sum of the
//! similarities of its consecutive chunks ([`adjacency_similarity`]); the
//! paper's benefit of a relocation is the new order's adjacency similarity
//! minus the old one's.
//!
//! The *original order* of a window is the order of first appearance of its
//! chunks when the files are read in window order ([`arrival_order`]): it is
//! the order in which the chunks were written, the layout before any
//! relocation.
//!
//! Costs are measured by [`read_ios`] (the paper's "amount of read I/Os",
//! Fig. 3 and Fig. 10(c)).
//!
//! Everything here is deterministic: no hash-map iteration order reaches a
//! result.

mod atr;
mod csr;

pub use atr::{atr, atr_from};
pub use csr::{csr, csr_from};

use std::collections::HashMap;
use thiserror::Error;

/// A chunk identifier (a content fingerprint, an FTL entry, ...).
pub type ChunkId = u64;

/// An order of the window's unique chunks, as chosen by [`csr`] or [`atr`].
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Every unique chunk of the window exactly once, in placement order.
    pub order: Vec<ChunkId>,
    /// Start offsets in `order` of its *runs*: maximal stretches in which
    /// every chunk shares a file with the chunk before it (what the
    /// algorithm linked; between runs the order carries no information).
    /// `runs[0] == 0` unless `order` is empty; strictly increasing.
    pub runs: Vec<usize>,
    pub stats: LayoutStats,
}

impl Layout {
    /// The runs of `order` as slices.
    pub fn run_slices(&self) -> impl Iterator<Item = &[ChunkId]> + '_ {
        let ends = self.runs.iter().skip(1).copied().chain(std::iter::once(self.order.len()));
        self.runs.iter().zip(ends).map(move |(&s, e)| &self.order[s..e])
    }
}

/// What an algorithm saw and achieved.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayoutStats {
    /// Files in the window.
    pub files: usize,
    /// Unique chunks in the window.
    pub chunks: usize,
    /// Chunks that occur in more than one file of the window (Table II's
    /// ratio is `shared_chunks / chunks`).
    pub shared_chunks: usize,
    /// Adjacency similarity of the original (arrival) order.
    pub similarity_before: f64,
    /// Adjacency similarity of [`Layout::order`].
    pub similarity_after: f64,
    /// CSR Step 5 kept the original order (its adjacency similarity was at
    /// least the greedy order's); always false for ATR.
    pub kept_original: bool,
}

/// Errors of the cost functions.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LayoutError {
    #[error("chunks_per_io must be at least 1")]
    ZeroChunksPerIo,
    #[error("chunk {chunk} of file {file} is not in the layout's order")]
    Missing { file: usize, chunk: ChunkId },
    #[error("chunk {chunk} occurs twice in the layout's order")]
    Repeated { chunk: ChunkId },
    #[error("chunk {chunk} of the original order occurs in no file of the window")]
    Unknown { chunk: ChunkId },
}

/// The window indexed by chunk: chunk `k` is the `k`-th unique chunk in
/// arrival order; per chunk the files holding it, per file its distinct
/// chunks (first occurrences, in file order). The FCAT of §IV-B is
/// `file_chunks`; the chunk vectors of §IV-A Step 1 are `chunk_files`
/// (sparse: the indices of the 1 components).
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    pub ids: Vec<ChunkId>,
    pub file_chunks: Vec<Vec<u32>>,
    pub chunk_files: Vec<Vec<u32>>,
}

impl Window {
    pub fn new(files: &[Vec<ChunkId>]) -> Window {
        let mut index: HashMap<ChunkId, u32> = HashMap::new();
        let mut w = Window::default();
        for (f, file) in files.iter().enumerate() {
            let mut list = Vec::with_capacity(file.len());
            for &c in file {
                let k = *index.entry(c).or_insert_with(|| {
                    w.ids.push(c);
                    w.chunk_files.push(Vec::new());
                    (w.ids.len() - 1) as u32
                });
                let cf = &mut w.chunk_files[k as usize];
                // A repeat inside one file: the vector is 0/1, count it once.
                if cf.last() != Some(&(f as u32)) {
                    cf.push(f as u32);
                    list.push(k);
                }
            }
            w.file_chunks.push(list);
        }
        w
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Cosine similarity of chunks `a` and `b` (Eq. 2 on 0/1 vectors).
    pub fn cosine(&self, a: u32, b: u32) -> f64 {
        let (fa, fb) = (&self.chunk_files[a as usize], &self.chunk_files[b as usize]);
        let common = sorted_intersection(fa, fb);
        if common == 0 {
            0.0
        } else {
            common as f64 / ((fa.len() * fb.len()) as f64).sqrt()
        }
    }

    /// Adjacency similarity of an order given as chunk indices.
    pub fn adjacency(&self, order: &[u32]) -> f64 {
        order.windows(2).map(|p| self.cosine(p[0], p[1])).sum()
    }

    /// Run starts of an order given as chunk indices (see [`Layout::runs`]).
    pub fn runs(&self, order: &[u32]) -> Vec<usize> {
        let mut runs = Vec::new();
        for (i, &c) in order.iter().enumerate() {
            if i == 0
                || sorted_intersection(&self.chunk_files[order[i - 1] as usize], &self.chunk_files[c as usize]) == 0
            {
                runs.push(i);
            }
        }
        runs
    }

    pub fn shared(&self) -> usize {
        self.chunk_files.iter().filter(|f| f.len() > 1).count()
    }

    /// The chunk indices of `original`, which must hold every chunk of the
    /// window exactly once.
    pub fn indices_of(&self, original: &[ChunkId]) -> Result<Vec<u32>, LayoutError> {
        let index: HashMap<ChunkId, u32> = self.ids.iter().enumerate().map(|(k, &c)| (c, k as u32)).collect();
        let mut seen = vec![false; self.len()];
        let mut out = Vec::with_capacity(self.len());
        for &c in original {
            let k = *index.get(&c).ok_or(LayoutError::Unknown { chunk: c })?;
            if std::mem::replace(&mut seen[k as usize], true) {
                return Err(LayoutError::Repeated { chunk: c });
            }
            out.push(k);
        }
        if let Some(k) = seen.iter().position(|&s| !s) {
            let file = self.chunk_files[k][0] as usize;
            return Err(LayoutError::Missing { file, chunk: self.ids[k] });
        }
        Ok(out)
    }

    /// The layout of `order` (chunk indices), the window's original order
    /// being `before`.
    pub fn layout(&self, order: &[u32], before: &[u32], kept_original: bool) -> Layout {
        Layout {
            order: order.iter().map(|&k| self.ids[k as usize]).collect(),
            runs: self.runs(order),
            stats: LayoutStats {
                files: self.file_chunks.len(),
                chunks: self.len(),
                shared_chunks: self.shared(),
                similarity_before: self.adjacency(before),
                similarity_after: self.adjacency(order),
                kept_original,
            },
        }
    }
}

/// Size of the intersection of two sorted lists.
fn sorted_intersection(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// The window's unique chunks in order of first appearance (files in
/// window order, chunks in file order): the original layout.
pub fn arrival_order(files: &[Vec<ChunkId>]) -> Vec<ChunkId> {
    Window::new(files).ids
}

/// Cosine similarity of two chunks' file vectors over the window (Eq. 2):
/// `|F(a) ∩ F(b)| / sqrt(|F(a)| · |F(b)|)`; 0 if either occurs in no file.
pub fn cosine(files: &[Vec<ChunkId>], a: ChunkId, b: ChunkId) -> f64 {
    let holds = |c: ChunkId| -> Vec<u32> {
        files.iter().enumerate().filter(|(_, f)| f.contains(&c)).map(|(i, _)| i as u32).collect()
    };
    let (fa, fb) = (holds(a), holds(b));
    let common = sorted_intersection(&fa, &fb);
    if common == 0 {
        0.0
    } else {
        common as f64 / ((fa.len() * fb.len()) as f64).sqrt()
    }
}

/// Adjacency similarity of `order` (§IV-A): the sum over consecutive chunks
/// of their cosine similarity. Chunks of `order` that occur in no file
/// contribute 0.
pub fn adjacency_similarity(files: &[Vec<ChunkId>], order: &[ChunkId]) -> f64 {
    let w = Window::new(files);
    let index: HashMap<ChunkId, u32> = w.ids.iter().enumerate().map(|(k, &c)| (c, k as u32)).collect();
    order
        .windows(2)
        .map(|p| match (index.get(&p[0]), index.get(&p[1])) {
            (Some(&a), Some(&b)) => w.cosine(a, b),
            _ => 0.0,
        })
        .sum()
}

/// Read I/Os to read every file once from chunks laid out in `order`.
///
/// The cost function (the paper's "amount of read I/Os", Fig. 10(c); the
/// container model of §II-C / Fig. 1): position `p` of `order` belongs to
/// the aligned *I/O unit* `⌊p / chunks_per_io⌋` (a container of
/// `chunks_per_io` consecutive chunks, 1024 in §V-B; read whole by one
/// I/O). Reading a file costs one I/O per distinct unit holding at least
/// one of its chunks (a chunk repeated inside the file is read once); the
/// result is the sum over files. Errors if a file's chunk is missing from
/// `order`, `order` repeats a chunk, or `chunks_per_io` is 0.
pub fn read_ios(files: &[Vec<ChunkId>], order: &[ChunkId], chunks_per_io: usize) -> Result<u64, LayoutError> {
    if chunks_per_io == 0 {
        return Err(LayoutError::ZeroChunksPerIo);
    }
    let mut pos: HashMap<ChunkId, usize> = HashMap::with_capacity(order.len());
    for (p, &c) in order.iter().enumerate() {
        if pos.insert(c, p).is_some() {
            return Err(LayoutError::Repeated { chunk: c });
        }
    }
    let mut total = 0u64;
    let mut units = Vec::new();
    for (f, file) in files.iter().enumerate() {
        units.clear();
        for &c in file {
            let p = *pos.get(&c).ok_or(LayoutError::Missing { file: f, chunk: c })?;
            units.push(p / chunks_per_io);
        }
        units.sort_unstable();
        units.dedup();
        total += units.len() as u64;
    }
    Ok(total)
}

/// Which relocation algorithm (the `reodedup-csr` / `reodedup-atr`
/// policies and the cluster model choose by this).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// [`csr`], §IV-A.
    Csr,
    /// [`atr`], §IV-B.
    Atr,
}

impl Algorithm {
    /// Runs the algorithm on a window whose original order is its arrival
    /// order.
    pub fn layout(self, files: &[Vec<ChunkId>]) -> Layout {
        match self {
            Algorithm::Csr => csr(files),
            Algorithm::Atr => atr(files),
        }
    }

    /// Runs the algorithm on a window whose chunks are currently laid out
    /// in `original` (every chunk of the window exactly once).
    pub fn layout_from(self, files: &[Vec<ChunkId>], original: &[ChunkId]) -> Result<Layout, LayoutError> {
        match self {
            Algorithm::Csr => csr_from(files, original),
            Algorithm::Atr => atr_from(files, original),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Csr => "csr",
            Algorithm::Atr => "atr",
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The paper's Fig. 6/7 example, reconstructed from its numbers: three
    /// files of four chunks, seven unique chunks C1..C7 (ids 1..7) with
    /// vectors C1 = C2 = <1,1,1>, C3 = <1,0,0>, C4 = <1,1,0>, C5 = <0,1,0>,
    /// C6 = C7 = <0,0,1>. These are the vectors the paper's similarities
    /// (cos(C1,C2) = 1, adjacent sums 4 and 4.11) force up to renaming the
    /// files, and Fig. 7's "all three files have four chunks".
    pub fn fig6() -> Vec<Vec<ChunkId>> {
        vec![vec![1, 2, 3, 4], vec![1, 2, 4, 5], vec![1, 2, 6, 7]]
    }

    #[test]
    fn fig6_cosine_of_c1_and_c2_is_one() {
        // Eq. (3): cos(<1,1,1>, <1,1,1>) = 3 / (√3 · √3) = 1.
        assert!((cosine(&fig6(), 1, 2) - 1.0).abs() < 1e-12);
        assert!((cosine(&fig6(), 2, 3) - 1.0 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(cosine(&fig6(), 3, 6), 0.0);
    }

    #[test]
    fn fig6_adjacency_sums_and_benefit() {
        // §IV-A: C1..C7 sums to 1 + 0.58 + 0.71 + 0.71 + 0 + 1 = 4; the
        // relocation C5,C2,C1,C4,C3,C6,C7 to 0.58 + 1 + 0.82 + 0.71 + 0 + 1
        // = 4.11; benefit 0.11 (the paper adds two-decimal values).
        let f = fig6();
        let before = adjacency_similarity(&f, &[1, 2, 3, 4, 5, 6, 7]);
        let after = adjacency_similarity(&f, &[5, 2, 1, 4, 3, 6, 7]);
        assert!((before - 4.0).abs() < 0.01, "{before}");
        assert!((after - 4.11).abs() < 0.01, "{after}");
        assert!((after - before - 0.11).abs() < 0.01, "{}", after - before);
        assert_eq!(arrival_order(&f), vec![1, 2, 3, 4, 5, 6, 7]);
    }

    /// §II-C, Fig. 1: containers of three chunks; version 1 (A..F) is in
    /// CT1, CT2; version 2 (A, B', C, D, E', F') stores B', E', F' in CT3
    /// and needs three containers, version 1 two.
    #[test]
    fn fig1_restores_read_two_and_three_containers() {
        let (a, b, c, d, e, f, b2, e2, f2) = (1, 2, 3, 4, 5, 6, 12, 15, 16);
        let v1 = vec![a, b, c, d, e, f];
        let v2 = vec![a, b2, c, d, e2, f2];
        let order = vec![a, b, c, d, e, f, b2, e2, f2];
        assert_eq!(read_ios(std::slice::from_ref(&v1), &order, 3), Ok(2));
        assert_eq!(read_ios(std::slice::from_ref(&v2), &order, 3), Ok(3));
        assert_eq!(read_ios(&[v1, v2], &order, 3), Ok(5));
    }

    #[test]
    fn read_ios_rejects_bad_input() {
        assert_eq!(read_ios(&[vec![1]], &[1], 0), Err(LayoutError::ZeroChunksPerIo));
        assert_eq!(read_ios(&[vec![1, 2]], &[1], 4), Err(LayoutError::Missing { file: 0, chunk: 2 }));
        assert_eq!(read_ios(&[vec![1]], &[1, 1], 4), Err(LayoutError::Repeated { chunk: 1 }));
        // A chunk repeated inside a file is read once; an empty file costs nothing.
        assert_eq!(read_ios(&[vec![1, 1, 1], vec![]], &[1], 1), Ok(1));
    }

    #[test]
    fn runs_split_where_neighbours_share_no_file() {
        let f = fig6();
        let w = Window::new(&f);
        // C1..C5 share files pairwise; C5 | C6 share none; C6, C7 share File3.
        assert_eq!(w.runs(&[0, 1, 2, 3, 4, 5, 6]), vec![0, 5]);
        let l = w.layout(&[0, 1, 2, 3, 4, 5, 6], &[0, 1, 2, 3, 4, 5, 6], true);
        let runs: Vec<&[ChunkId]> = l.run_slices().collect();
        assert_eq!(runs, vec![&[1, 2, 3, 4, 5][..], &[6, 7][..]]);
    }

    #[test]
    fn repeats_inside_a_file_count_once() {
        let w = Window::new(&[vec![9, 9, 8], vec![8]]);
        assert_eq!(w.ids, vec![9, 8]);
        assert_eq!(w.file_chunks, vec![vec![0, 1], vec![1]]);
        assert_eq!(w.chunk_files, vec![vec![0], vec![0, 1]]);
    }
}
