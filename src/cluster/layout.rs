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

use super::{ClusterError, WriteMode};
use crate::reodedup;

/// A layout algorithm: (files of the window, the buffer's arrival order) to
/// the order in which to store the buffered chunks, or why not.
pub type LayoutFn = fn(&[Vec<u64>], &[u64]) -> Result<Vec<u64>, String>;

fn csr(files: &[Vec<u64>], original: &[u64]) -> Result<Vec<u64>, String> {
    reodedup::csr_from(files, original).map(|l| l.order).map_err(|e| e.to_string())
}

fn atr(files: &[Vec<u64>], original: &[u64]) -> Result<Vec<u64>, String> {
    reodedup::atr_from(files, original).map(|l| l.order).map_err(|e| e.to_string())
}

/// The layout that relocates a node's buffer under `mode`, if any.
pub fn layout_of(mode: WriteMode) -> Result<Option<LayoutFn>, ClusterError> {
    Ok(match mode {
        WriteMode::Csr => Some(csr),
        WriteMode::Atr => Some(atr),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Fig. 6 window of the paper: both algorithms return a
    /// permutation of the buffer.
    #[test]
    fn the_algorithms_return_a_permutation() {
        let files = vec![vec![1, 2, 3, 4], vec![1, 2, 5], vec![1, 6, 7]];
        let original: Vec<u64> = vec![1, 2, 3, 4, 5, 6, 7];
        for m in [WriteMode::Csr, WriteMode::Atr] {
            let f = layout_of(m).unwrap().unwrap();
            let mut got = f(&files, &original).unwrap();
            got.sort_unstable();
            assert_eq!(got, original, "{m}");
        }
    }
}
