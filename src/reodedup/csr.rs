//! CSR: cosine-similarity based relocating, the greedy algorithm of
//! ReoDedup §IV-A.
//!
//! The paper's steps and how they are carried out here:
//!
//! 1. *Vectorization* (Step 1 of the model): each chunk's 0/1 vector over
//!    the window's files ([`super::Window::chunk_files`], sparse).
//! 2. *Similarity matrix* (Eq. 2) and the greedy (Steps 1-4, 6): "we always
//!    place two chunks with the largest cosine similarity consecutively";
//!    a chunk already with a consecutive chunk on both sides takes no
//!    more, and no link may close a cycle (the result is an order). Pairs
//!    are taken in decreasing similarity over the whole matrix, which is
//!    what reproduces the paper's example (Fig. 6: the relocated order
//!    C5, C2, C1, C4, C3, C6, C7 is this greedy's result up to exchanging
//!    C1 and C2, whose vectors are equal). The sort is the O(n² log n) of
//!    the paper's analysis.
//! 3. Step 5: the new order is kept only if its adjacency similarity
//!    (the sum over consecutive chunks) is larger than the original
//!    order's; otherwise the original order stays (no relocation).
//!
//! Choices the paper leaves open (each deliberate):
//!
//! * **Ties** between equally similar pairs: the pair nearer in the
//!   original order first, then the earlier. With it the greedy keeps the
//!   original order wherever similarity does not distinguish: chunks with
//!   equal vectors (cosine 1) come out as one run in their original order,
//!   so that a layout does not move chunks for nothing.
//! * **Zero similarity** pairs (no common file) are never linked: they add
//!   nothing to the objective, so any order of the unlinked runs has the
//!   same adjacency similarity. Runs are concatenated in the order of their
//!   earliest chunk (original order), each read from its end that comes
//!   first in the original order.
//! * **Sparse evaluation**: cosine 1 holds exactly between equal vectors,
//!   and those pairs come first; the runs they form are built directly
//!   (in original order, the tie rule's result), and then only pairs of run
//!   ends that share a file are candidates (an inner chunk already has two
//!   neighbours). A test checks the result against the dense O(n² log n)
//!   greedy over every pair.

use super::{ChunkId, Layout, LayoutError, Window};
use std::collections::HashMap;

const NONE: u32 = u32::MAX;

/// CSR on a window whose original order is its arrival order
/// ([`super::arrival_order`]). See the module doc.
pub fn csr(files: &[Vec<ChunkId>]) -> Layout {
    let w = Window::new(files);
    let original: Vec<u32> = (0..w.len() as u32).collect();
    run(&w, &original)
}

/// CSR on a window whose chunks are laid out in `original` now (every
/// unique chunk of the window exactly once): Step 5 compares with it, and
/// ties follow it.
pub fn csr_from(files: &[Vec<ChunkId>], original: &[ChunkId]) -> Result<Layout, LayoutError> {
    let w = Window::new(files);
    let original = w.indices_of(original)?;
    Ok(run(&w, &original))
}

fn run(w: &Window, original: &[u32]) -> Layout {
    let greedy = greedy(w, original);
    // Step 5: keep the larger adjacency similarity; equal sums (up to
    // rounding) keep the original order: relocation must gain something.
    if w.adjacency(&greedy) > w.adjacency(original) + 1e-9 {
        w.layout(&greedy, original, false)
    } else {
        w.layout(original, original, true)
    }
}

/// Union-find with path halving.
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}

/// The links of the greedy: each chunk's up to two neighbours.
struct Links {
    nbr: Vec<[u32; 2]>,
    parent: Vec<u32>,
}

impl Links {
    fn new(n: usize) -> Links {
        Links { nbr: vec![[NONE; 2]; n], parent: (0..n as u32).collect() }
    }

    fn degree(&self, x: u32) -> usize {
        self.nbr[x as usize].iter().filter(|&&y| y != NONE).count()
    }

    /// Links `x` and `y` if both have a free side and they are in different
    /// runs (no cycle).
    fn try_link(&mut self, x: u32, y: u32) -> bool {
        if self.degree(x) == 2 || self.degree(y) == 2 {
            return false;
        }
        let (rx, ry) = (find(&mut self.parent, x), find(&mut self.parent, y));
        if rx == ry {
            return false;
        }
        self.parent[rx as usize] = ry;
        for (a, b) in [(x, y), (y, x)] {
            let s = &mut self.nbr[a as usize];
            let free = if s[0] == NONE { 0 } else { 1 };
            s[free] = b;
        }
        true
    }

    /// The runs as one order: by earliest chunk (rank), each from its end
    /// of smaller rank.
    fn order(&self, rank: &[u32], by_rank: &[u32]) -> Vec<u32> {
        let n = self.nbr.len();
        let mut seen = vec![false; n];
        let mut out = Vec::with_capacity(n);
        for &c in by_rank {
            if seen[c as usize] {
                continue;
            }
            let ends: Vec<u32> = match self.nbr[c as usize] {
                [NONE, NONE] => vec![c],
                [a, NONE] | [NONE, a] => vec![c, walk_to_end_from(self, c, a)],
                [a, b] => vec![walk_to_end_from(self, c, a), walk_to_end_from(self, c, b)],
            };
            let start = *ends.iter().min_by_key(|&&e| rank[e as usize]).expect("non-empty");
            let (mut prev, mut cur) = (NONE, start);
            loop {
                seen[cur as usize] = true;
                out.push(cur);
                match self.nbr[cur as usize].iter().copied().find(|&y| y != NONE && y != prev) {
                    Some(y) => (prev, cur) = (cur, y),
                    None => break,
                }
            }
        }
        out
    }
}

/// The end of the run reached from `from` by first stepping to `first`.
fn walk_to_end_from(l: &Links, from: u32, first: u32) -> u32 {
    let (mut prev, mut cur) = (from, first);
    while let Some(y) = l.nbr[cur as usize].iter().copied().find(|&y| y != NONE && y != prev) {
        (prev, cur) = (cur, y);
    }
    cur
}

/// Candidate link: similarity (descending), distance in the original order,
/// then the pair's ranks (ascending).
#[derive(Copy, Clone, Debug)]
struct Edge {
    sim: f64,
    dist: u32,
    lo: u32,
    hi: u32,
    x: u32,
    y: u32,
}

fn edge(rank: &[u32], x: u32, y: u32, sim: f64) -> Edge {
    let (rx, ry) = (rank[x as usize], rank[y as usize]);
    Edge { sim, dist: rx.abs_diff(ry), lo: rx.min(ry), hi: rx.max(ry), x, y }
}

fn sort_edges(edges: &mut [Edge]) {
    edges.sort_by(|a, b| b.sim.total_cmp(&a.sim).then(a.dist.cmp(&b.dist)).then(a.lo.cmp(&b.lo)).then(a.hi.cmp(&b.hi)));
}

/// The rank (position in the original order) of each chunk.
fn ranks(original: &[u32]) -> Vec<u32> {
    let mut rank = vec![0; original.len()];
    for (p, &k) in original.iter().enumerate() {
        rank[k as usize] = p as u32;
    }
    rank
}

/// The greedy order (Steps 1-4, 6), sparse evaluation (module doc).
fn greedy(w: &Window, original: &[u32]) -> Vec<u32> {
    let n = w.len();
    let rank = ranks(original);
    let mut links = Links::new(n);
    // Equal vectors (cosine 1): one run each, in original order.
    let mut group_of: HashMap<&[u32], u32> = HashMap::new();
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut group = vec![0u32; n];
    for &k in original {
        let g = *group_of.entry(&w.chunk_files[k as usize]).or_insert_with(|| {
            members.push(Vec::new());
            (members.len() - 1) as u32
        });
        members[g as usize].push(k);
        group[k as usize] = g;
    }
    for m in &members {
        for p in m.windows(2) {
            links.try_link(p[0], p[1]);
        }
    }
    // Pairs of groups that share a file.
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut stamp = vec![NONE; members.len()];
    let mut in_file: Vec<u32> = Vec::new();
    for (f, list) in w.file_chunks.iter().enumerate() {
        in_file.clear();
        for &k in list {
            let g = group[k as usize];
            if stamp[g as usize] != f as u32 {
                stamp[g as usize] = f as u32;
                in_file.push(g);
            }
        }
        for (i, &a) in in_file.iter().enumerate() {
            for &b in &in_file[i + 1..] {
                pairs.push((a.min(b), a.max(b)));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let ends = |g: u32| -> Vec<u32> {
        let m = &members[g as usize];
        if m.len() == 1 {
            vec![m[0]]
        } else {
            vec![m[0], m[m.len() - 1]]
        }
    };
    let mut edges = Vec::new();
    for &(a, b) in &pairs {
        let sim = w.cosine(members[a as usize][0], members[b as usize][0]);
        for x in ends(a) {
            for y in ends(b) {
                edges.push(edge(&rank, x, y, sim));
            }
        }
    }
    sort_edges(&mut edges);
    for e in &edges {
        links.try_link(e.x, e.y);
    }
    links.order(&rank, original)
}

#[cfg(test)]
mod tests {
    use super::super::tests::fig6;
    use super::super::{adjacency_similarity, arrival_order, read_ios};
    use super::*;
    use proptest::prelude::*;

    /// The dense greedy of §IV-A over every pair of chunks (O(n² log n)),
    /// same tie rule, zero-similarity pairs not linked: the reference the
    /// sparse evaluation must equal.
    fn dense(w: &Window, original: &[u32]) -> Vec<u32> {
        let n = w.len() as u32;
        let rank = ranks(original);
        let mut edges = Vec::new();
        for x in 0..n {
            for y in x + 1..n {
                let sim = w.cosine(x, y);
                if sim > 0.0 {
                    edges.push(edge(&rank, x, y, sim));
                }
            }
        }
        sort_edges(&mut edges);
        let mut links = Links::new(n as usize);
        for e in &edges {
            links.try_link(e.x, e.y);
        }
        links.order(&rank, original)
    }

    #[test]
    fn fig6_greedy_finds_the_papers_relocation() {
        let f = fig6();
        let l = csr(&f);
        // The paper's C5,C2,C1,C4,C3,C6,C7 read from its other end, with
        // the equal chunks C1 and C2 exchanged: C2-C4 and C1-C4 tie at
        // 0.82 and C2 is nearer C4 in the original order.
        assert_eq!(l.order, vec![3, 4, 2, 1, 5, 6, 7]);
        assert!(!l.stats.kept_original);
        assert!((l.stats.similarity_after - adjacency_similarity(&f, &[5, 2, 1, 4, 3, 6, 7])).abs() < 1e-12);
        assert!((l.stats.similarity_before - adjacency_similarity(&f, &[1, 2, 3, 4, 5, 6, 7])).abs() < 1e-12);
        assert_eq!(l.runs, vec![0, 5]);
        assert_eq!((l.stats.files, l.stats.chunks, l.stats.shared_chunks), (3, 7, 3));
    }

    #[test]
    fn step5_keeps_the_original_order_when_it_is_as_good() {
        // Two files without common chunks: the arrival order is optimal.
        let f = vec![vec![1, 2, 3], vec![4, 5]];
        let l = csr(&f);
        assert!(l.stats.kept_original);
        assert_eq!(l.order, vec![1, 2, 3, 4, 5]);
        // Given an interleaved original (concurrent writes, §III-A), the
        // greedy groups each file's chunks and wins.
        let l = csr_from(&f, &[1, 4, 2, 5, 3]).unwrap();
        assert!(!l.stats.kept_original);
        assert_eq!(l.order, vec![1, 2, 3, 4, 5]);
        assert_eq!(read_ios(&f, &[1, 4, 2, 5, 3], 2), Ok(5));
        assert_eq!(read_ios(&f, &l.order, 2), Ok(4));
    }

    #[test]
    fn csr_from_checks_the_original_order() {
        let f = vec![vec![1, 2], vec![2, 3]];
        assert_eq!(csr_from(&f, &[1, 2]), Err(LayoutError::Missing { file: 1, chunk: 3 }));
        assert_eq!(csr_from(&f, &[1, 2, 3, 9]), Err(LayoutError::Unknown { chunk: 9 }));
        assert_eq!(csr_from(&f, &[1, 2, 2, 3]), Err(LayoutError::Repeated { chunk: 2 }));
        assert!(csr_from(&f, &[3, 2, 1]).is_ok());
    }

    #[test]
    fn empty_and_single_windows() {
        let l = csr(&[]);
        assert!(l.order.is_empty() && l.runs.is_empty());
        let l = csr(&[vec![7]]);
        assert_eq!((l.order, l.runs), (vec![7], vec![0]));
    }

    fn window() -> impl Strategy<Value = Vec<Vec<ChunkId>>> {
        prop::collection::vec(prop::collection::vec(0u64..40, 0..12), 0..10)
    }

    proptest! {
        #[test]
        fn sparse_greedy_equals_the_dense_greedy(files in window(), seed in 0u64..1000) {
            let w = Window::new(&files);
            // Some permutation of the chunks as the original order.
            let mut original: Vec<u32> = (0..w.len() as u32).collect();
            let mut s = seed;
            for i in (1..original.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                original.swap(i, (s >> 33) as usize % (i + 1));
            }
            prop_assert_eq!(greedy(&w, &original), dense(&w, &original));
        }

        #[test]
        fn csr_is_a_permutation_never_worse_than_the_original(files in window()) {
            let l = csr(&files);
            let mut a = l.order.clone();
            let mut b = arrival_order(&files);
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(a, b);
            prop_assert!(l.stats.similarity_after >= l.stats.similarity_before - 1e-9);
            prop_assert!(l.runs.windows(2).all(|p| p[0] < p[1]));
        }
    }
}
