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
//! * **Which file** (Step 3, "randomly choose one file", [`AtrFile`]): by
//!   default as written, uniformly at random (a seeded xoshiro256++ stream,
//!   so a run is reproducible) among the files holding the current chunk
//!   *and* an unplaced chunk (a file whose chunks are all placed would end
//!   the chain for nothing); [`AtrFile::First`] takes the first such file
//!   in window order instead. A draw is made only when there are two files
//!   or more to choose from.
//! * **Which chunk of the file** (Step 5, "another chunk"): the file's
//!   first unplaced chunk in file order, so a file is laid out in its own
//!   order (Fig. 7(b): C1, C2 of File1 first).
//! * When no file of the current chunk has an unplaced chunk the chain
//!   ends and the next one starts (Step 3 again).
//!
//! Unlike CSR, the paper's ATR has no Step 5 comparison: its order is
//! always returned ([`super::LayoutStats::kept_original`] is false).

use super::{AtrFile, ChunkId, Layout, LayoutError, Window};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// ATR (random file choice, seed 0) on a window whose original order is
/// its arrival order ([`super::arrival_order`]). See the module doc.
pub fn atr(files: &[Vec<ChunkId>]) -> Layout {
    atr_with(files, None, AtrFile::Random, 0).expect("the arrival order is a valid original order")
}

/// ATR (random file choice, seed 0) on a window whose chunks are laid out
/// in `original` now (every unique chunk of the window exactly once):
/// chains start in that order.
pub fn atr_from(files: &[Vec<ChunkId>], original: &[ChunkId]) -> Result<Layout, LayoutError> {
    atr_with(files, Some(original), AtrFile::Random, 0)
}

/// ATR choosing files by `file` (`seed` seeds the random choice), from
/// `original` (`None`: the arrival order).
pub fn atr_with(
    files: &[Vec<ChunkId>],
    original: Option<&[ChunkId]>,
    file: AtrFile,
    seed: u64,
) -> Result<Layout, LayoutError> {
    let w = Window::new(files);
    let original = match original {
        Some(o) => w.indices_of(o)?,
        None => (0..w.len() as u32).collect(),
    };
    Ok(run(&w, &original, file, seed))
}

fn run(w: &Window, original: &[u32], choice: AtrFile, seed: u64) -> Layout {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x4154_5246_494c_4553); // "ATRFILES"
    let mut candidates: Vec<u32> = Vec::new();
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
        loop {
            // Step 3: the current chunk's files that still hold an unplaced
            // chunk (cursors skip the placed ones: Step 5 in O(1) amortized).
            candidates.clear();
            for &f in &w.chunk_files[cur as usize] {
                let list = &w.file_chunks[f as usize];
                let c = &mut cursor[f as usize];
                while *c < list.len() && placed[list[*c] as usize] {
                    *c += 1;
                }
                if *c < list.len() {
                    candidates.push(f);
                    if choice == AtrFile::First {
                        break;
                    }
                }
            }
            let f = match candidates.len() {
                0 => break,
                1 => candidates[0],
                k => candidates[rng.gen_range(0..k)],
            };
            // Step 5: the file's first unplaced chunk follows.
            let next = w.file_chunks[f as usize][cursor[f as usize]];
            placed[next as usize] = true;
            order.push(next);
            cur = next;
        }
    }
    w.layout(&order, original, false)
}

#[cfg(test)]
mod tests {
    use super::super::tests::fig6;
    use super::super::{arrival_order, read_ios, ReadModel};
    use super::*;

    /// Fig. 7's FCAT (File1 = C1 C2 C3 C4, File2 = C1 C2 C4 C5, File3 =
    /// C1 C2 C6 C7) with the chunks stored in reverse (C7 first), the
    /// deterministic file choice, by hand: the chain starts at C7 (first
    /// in the original order); C7 is in File3 only, whose first unplaced
    /// chunk is C1; C1 is in all three files, File1 first: C2, then C3, C4
    /// (File1); C4's File1 is done, File2 gives C5; C5's only file is done:
    /// the chain ends. The next chain starts at C6, whose file is done.
    #[test]
    fn fig7_walks_the_adjacency_table_by_hand() {
        let f = fig6();
        let l = atr_with(&f, Some(&[7, 6, 5, 4, 3, 2, 1]), AtrFile::First, 0).unwrap();
        assert_eq!(l.order, vec![7, 1, 2, 3, 4, 5, 6]);
        // C7-C1 share File3; ...; C5 | C6 share nothing.
        assert_eq!(l.runs, vec![0, 6]);
        assert!(!l.stats.kept_original);
        // From the arrival order with the random choice: every file of C1
        // gives C2 (Fig. 7(b): C1, C2 first); C2's three files give C3
        // (File1), C4 (File2) or C6 (File3), each for some seed.
        let mut third = Vec::new();
        for seed in 0..32 {
            let o = atr_with(&f, None, AtrFile::Random, seed).unwrap().order;
            assert_eq!(o[..2], [1, 2]);
            third.push(o[2]);
        }
        third.sort_unstable();
        third.dedup();
        assert_eq!(third, vec![3, 4, 6]);
    }

    /// Step 3's random file: chunk 1 is in files A = 1 2 and B = 1 3; A
    /// gives 1 2 3 (then 3 starts a new chain), B gives 1 3 2. Each seed is
    /// reproducible; over 64 seeds both files are chosen (each about half
    /// the time); the deterministic choice always takes A.
    #[test]
    fn step3_chooses_the_file_at_random_with_a_seed() {
        let f = vec![vec![1, 2], vec![1, 3]];
        let mut by_a = 0;
        for seed in 0..64 {
            let o = atr_with(&f, None, AtrFile::Random, seed).unwrap().order;
            assert_eq!(atr_with(&f, None, AtrFile::Random, seed).unwrap().order, o);
            match o.as_slice() {
                [1, 2, 3] => by_a += 1,
                [1, 3, 2] => {}
                other => panic!("{other:?}"),
            }
        }
        assert!((16..=48).contains(&by_a), "{by_a} of 64");
        assert_eq!(atr_with(&f, None, AtrFile::First, 5).unwrap().order, vec![1, 2, 3]);
    }

    /// Concurrent writes intermix two files' chunks (§III-A, Fig. 4);
    /// ATR puts each file's chunks back together (Fig. 5): from 1 the chain
    /// runs through file 0 (1 2 3 4), and 4's other file continues it (5 6
    /// 7). Containers of 2: 4 + 4 I/Os before, 2 + 3 after.
    #[test]
    fn intermixed_files_are_laid_out_file_by_file() {
        let files = vec![vec![1, 2, 3, 4], vec![5, 6, 7, 4]];
        let mixed = [1, 5, 2, 6, 3, 7, 4];
        let l = atr_from(&files, &mixed).unwrap();
        assert_eq!(l.order, vec![1, 2, 3, 4, 5, 6, 7]);
        let c = ReadModel::Containers;
        assert_eq!(read_ios(&files, &mixed, 2, c), Ok(8));
        assert_eq!(read_ios(&files, &l.order, 2, c), Ok(5));
    }

    proptest::proptest! {
        #[test]
        fn atr_is_a_permutation(
            files in proptest::collection::vec(proptest::collection::vec(0u64..40, 0..12), 0..10),
            seed in 0u64..100,
        ) {
            for choice in AtrFile::ALL {
                let l = atr_with(&files, None, choice, seed).unwrap();
                let mut a = l.order.clone();
                let mut b = arrival_order(&files);
                a.sort_unstable();
                b.sort_unstable();
                proptest::prop_assert_eq!(a, b);
                proptest::prop_assert!(l.runs.windows(2).all(|p| p[0] < p[1]));
            }
        }
    }
}
