//! ReoDedup's relocation of a node's write buffer (§IV-A CSR, §IV-B ATR),
//! wrapping the algorithms of [`crate::reodedup`].

use super::{ClusterError, WriteMode};

/// A layout algorithm: the files (each the sequence of buffered chunk
/// fingerprints it references) to an order of the distinct chunks.
pub type LayoutFn = fn(&[Vec<u64>]) -> Vec<u64>;

/// The layout that relocates a node's buffer under `mode`, if any.
pub fn layout_of(mode: WriteMode) -> Result<Option<LayoutFn>, ClusterError> {
    match mode {
        WriteMode::Csr | WriteMode::Atr => Err(ClusterError::Invalid {
            flag: "--mode",
            reason: format!("`{mode}` needs the ReoDedup algorithms (src/reodedup), not in this build yet"),
        }),
        _ => Ok(None),
    }
}
