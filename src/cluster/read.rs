//! Counting read I/Os (§V-B: "we read 1024 consecutive chunks on disk in
//! one read I/O"; the sequential I/Os of Fig. 4 and Fig. 5), with the
//! project's one read-I/O model, [`crate::reodedup::count_ios`].

use super::ReadModel;

/// Read I/Os to fetch `slots` (any order, repeats allowed) from one node
/// under `model` with I/Os of at most `window` slots (see
/// [`crate::reodedup::ReadModel`]); `slots` is sorted and deduplicated in
/// place.
pub fn read_ios(slots: &mut Vec<u64>, window: u32, model: ReadModel) -> u64 {
    crate::reodedup::count_ios(slots, u64::from(window), model)
}

/// Read I/Os of one file whose chunks are at `locs` = (node, slot): the sum
/// of [`read_ios`] over the nodes it touches. `locs` is reordered.
pub fn file_read_ios(locs: &mut [(u32, u32)], window: u32, model: ReadModel, scratch: &mut Vec<u64>) -> u64 {
    locs.sort_unstable();
    let mut total = 0;
    for group in locs.chunk_by(|a, b| a.0 == b.0) {
        scratch.clear();
        scratch.extend(group.iter().map(|&(_, s)| u64::from(s)));
        total += read_ios(scratch, window, model);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes, window 4: node 0 slots {0, 1}, node 1 slots {5, 7}.
    /// Runs: 1 + 2 = 3; one window [5, 9) on node 1: 1 + 1 = 2; containers
    /// [0,4) and [4,8): 1 + 1 = 2; node 1 slots {3, 100}: 1 + 2 = 3 in any
    /// model.
    #[test]
    fn file_read_ios_by_hand() {
        use ReadModel::{Containers, Runs, Window};
        let mut s = Vec::new();
        assert_eq!(file_read_ios(&mut [(1, 5), (0, 1), (1, 7), (0, 0)], 4, Runs, &mut s), 3);
        assert_eq!(file_read_ios(&mut [(1, 5), (0, 1), (1, 7), (0, 0)], 4, Window, &mut s), 2);
        assert_eq!(file_read_ios(&mut [(1, 5), (0, 1), (1, 7), (0, 0)], 4, Containers, &mut s), 2);
        for m in ReadModel::ALL {
            assert_eq!(file_read_ios(&mut [(1, 100), (0, 1), (1, 3), (0, 0)], 4, m, &mut s), 3, "{m:?}");
        }
    }
}
