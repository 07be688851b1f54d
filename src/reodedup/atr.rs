//! ATR: adjacency-table based relocating, ReoDedup §IV-B.
//!
//! The file-chunk adjacency table (FCAT) lists per file of the window its
//! chunks ([`super::Window::file_chunks`]). The heuristic (Steps 3-7):
//! take a chunk never considered (C1), one file it occurs in (File1), and
//! from File1's list another chunk not yet considered (C2) as C1's
//! consecutive chunk; continue from C2 (Step 6: "we choose C2 in Step 3"),
//! until every chunk is placed. Considered chunks are deleted from the
//! lists (here: a cursor per file skips them), so Step 5 costs O(1)
//! amortized and the whole walk O(n·m) at most (the number of chunk-file
//! incidences).
//!
//! Choices the paper leaves open (each deliberate):
//!
//! * **Which chunk starts a chain** (Step 3, "a chunk that has never been
//!   considered"): the first unplaced one in the original order.
//! * **Which file** (Step 3, "randomly choose one file"): the first file of
//!   the window, in window order, holding the current chunk *and* an
//!   unplaced chunk; the paper picks one file at random, and a file whose
//!   chunks are all placed would end the chain for nothing. Deterministic.
//! * **Which chunk of the file** (Step 5, "another chunk"): the file's
//!   first unplaced chunk in file order, so a file is laid out in its own
//!   order (Fig. 7(b): C1, C2 of File1 first).
//! * When no file of the current chunk has an unplaced chunk the chain
//!   ends and the next one starts (Step 3 again).
//!
//! Unlike CSR, the paper's ATR has no Step 5 comparison: its order is
//! always returned ([`super::LayoutStats::kept_original`] is false).

use super::{ChunkId, Layout, LayoutError, Window};

/// ATR on a window whose original order is its arrival order
/// ([`super::arrival_order`]). See the module doc.
pub fn atr(files: &[Vec<ChunkId>]) -> Layout {
    let w = Window::new(files);
    let original: Vec<u32> = (0..w.len() as u32).collect();
    run(&w, &original)
}

/// ATR on a window whose chunks are laid out in `original` now (every
/// unique chunk of the window exactly once): chains start in that order.
pub fn atr_from(files: &[Vec<ChunkId>], original: &[ChunkId]) -> Result<Layout, LayoutError> {
    let w = Window::new(files);
    let original = w.indices_of(original)?;
    Ok(run(&w, &original))
}

fn run(w: &Window, original: &[u32]) -> Layout {
    let n = w.len();
    let mut placed = vec![false; n];
    let mut cursor = vec![0usize; w.file_chunks.len()];
    let mut order = Vec::with_capacity(n);
    for &start in original {
        if placed[start as usize] {
            continue;
        }
        let mut cur = start;
        placed[cur as usize] = true;
        order.push(cur);
        'chain: loop {
            for &f in &w.chunk_files[cur as usize] {
                let list = &w.file_chunks[f as usize];
                let c = &mut cursor[f as usize];
                while *c < list.len() && placed[list[*c] as usize] {
                    *c += 1;
                }
                if let Some(&next) = list.get(*c) {
                    placed[next as usize] = true;
                    order.push(next);
                    cur = next;
                    continue 'chain;
                }
            }
            break;
        }
    }
    w.layout(&order, original, false)
}

#[cfg(test)]
mod tests {
    use super::super::tests::fig6;
    use super::super::{arrival_order, read_ios};
    use super::*;
    use proptest::prelude::*;

    /// Fig. 7: FCAT of File1..File3 (four chunks each); C1 is taken first,
    /// File1 chosen, C2 placed after it; the walk continues through File1
    /// (C3, C4), then File2 (C5), and File3's C6, C7 form the second chain.
    #[test]
    fn fig7_walks_the_adjacency_table() {
        let l = atr(&fig6());
        assert_eq!(&l.order[..2], &[1, 2]);
        assert_eq!(l.order, vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(l.runs, vec![0, 5]);
        assert!(!l.stats.kept_original);
    }

    /// Concurrent writes intermix two files' chunks (§III-A, Fig. 4);
    /// ATR puts each file's chunks back together (Fig. 5).
    #[test]
    fn intermixed_files_are_laid_out_file_by_file() {
        let files = vec![vec![1, 2, 3, 4], vec![5, 6, 7, 4]];
        let mixed = [1, 5, 2, 6, 3, 7, 4];
        let l = atr_from(&files, &mixed).unwrap();
        assert_eq!(l.order, vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(read_ios(&files, &mixed, 2), Ok(8));
        assert_eq!(read_ios(&files, &l.order, 2), Ok(5));
    }

    proptest! {
        #[test]
        fn atr_is_a_permutation(files in prop::collection::vec(prop::collection::vec(0u64..40, 0..12), 0..10)) {
            let l = atr(&files);
            let mut a = l.order.clone();
            let mut b = arrival_order(&files);
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(a, b);
            prop_assert!(l.runs.windows(2).all(|p| p[0] < p[1]));
        }
    }
}
