//! ReoDedup's relocation of a node's write buffer (§IV-A CSR, §IV-B ATR,
//! §V-A "when the buffer is full, the node will call the CSR or ATR
//! algorithms"), wrapping [`crate::reodedup`].
//!
//! The window handed to the algorithm is the buffer: every file with a
//! reference to a buffered chunk (a new chunk, or a duplicate of one still
//! buffered), in order of first reference, each as the buffered chunks it
//! references; the *original order* is the buffer's arrival order, so CSR's
//! Step 5 compares the greedy order with the layout the node would write
//! without relocation.

use super::{AtrFile, ClusterError, CsrGreedy, WriteMode};
use crate::reodedup;

/// A layout algorithm: (files of the window, the buffer's arrival order,
/// a seed for ATR's random file choice) to the order in which to store the
/// buffered chunks, or why not.
pub type LayoutFn = fn(&[Vec<u64>], &[u64], u64) -> Result<Vec<u64>, String>;

fn csr(files: &[Vec<u64>], original: &[u64], greedy: CsrGreedy) -> Result<Vec<u64>, String> {
    reodedup::csr_with(files, Some(original), greedy).map(|l| l.order).map_err(|e| e.to_string())
}

fn csr_rows(files: &[Vec<u64>], original: &[u64], _: u64) -> Result<Vec<u64>, String> {
    csr(files, original, CsrGreedy::Rows)
}

fn csr_global(files: &[Vec<u64>], original: &[u64], _: u64) -> Result<Vec<u64>, String> {
    csr(files, original, CsrGreedy::Global)
}

fn csr_brute(files: &[Vec<u64>], original: &[u64], _: u64) -> Result<Vec<u64>, String> {
    csr(files, original, CsrGreedy::BruteForce)
}

fn atr_random(files: &[Vec<u64>], original: &[u64], seed: u64) -> Result<Vec<u64>, String> {
    reodedup::atr_with(files, Some(original), AtrFile::Random, seed).map(|l| l.order).map_err(|e| e.to_string())
}

fn atr_first(files: &[Vec<u64>], original: &[u64], seed: u64) -> Result<Vec<u64>, String> {
    reodedup::atr_with(files, Some(original), AtrFile::First, seed).map(|l| l.order).map_err(|e| e.to_string())
}

/// The layout that relocates a node's buffer under `mode`, if any, with
/// CSR's algorithm `greedy` and ATR's file choice `file`.
pub fn layout_of(mode: WriteMode, greedy: CsrGreedy, file: AtrFile) -> Result<Option<LayoutFn>, ClusterError> {
    Ok(match (mode, greedy, file) {
        (WriteMode::Csr, CsrGreedy::Rows, _) => Some(csr_rows),
        (WriteMode::Csr, CsrGreedy::Global, _) => Some(csr_global),
        (WriteMode::Csr, CsrGreedy::BruteForce, _) => Some(csr_brute),
        (WriteMode::Atr, _, AtrFile::Random) => Some(atr_random),
        (WriteMode::Atr, _, AtrFile::First) => Some(atr_first),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fig. 6's window (File1 = 1 2 3 4, File2 = 1 2 4 5, File3 = 1 2 6 7)
    /// in arrival order: each choice returns the order its algorithm gives
    /// by hand (src/reodedup tests): per-row CSR 3 1 2 4 5 6 7, global CSR
    /// 3 4 2 1 5 6 7, brute force 3 4 5 1 2 6 7, ATR (first file) the
    /// arrival order 1..7; the other modes relocate nothing.
    #[test]
    fn each_choice_runs_its_algorithm() {
        let files = vec![vec![1, 2, 3, 4], vec![1, 2, 4, 5], vec![1, 2, 6, 7]];
        let original: Vec<u64> = (1..=7).collect();
        let run = |m, g, f| layout_of(m, g, f).unwrap().unwrap()(&files, &original, 0).unwrap();
        let (c, a) = (WriteMode::Csr, WriteMode::Atr);
        assert_eq!(run(c, CsrGreedy::Rows, AtrFile::First), vec![3, 1, 2, 4, 5, 6, 7]);
        assert_eq!(run(c, CsrGreedy::Global, AtrFile::First), vec![3, 4, 2, 1, 5, 6, 7]);
        assert_eq!(run(c, CsrGreedy::BruteForce, AtrFile::First), vec![3, 4, 5, 1, 2, 6, 7]);
        assert_eq!(run(a, CsrGreedy::Rows, AtrFile::First), original);
        let mut r = run(a, CsrGreedy::Rows, AtrFile::Random);
        r.sort_unstable();
        assert_eq!(r, original);
        for m in [WriteMode::None, WriteMode::Superchunk, WriteMode::Rewrite] {
            assert!(layout_of(m, CsrGreedy::Rows, AtrFile::Random).unwrap().is_none());
        }
    }
}
