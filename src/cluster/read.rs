//! Counting read I/Os (§V-B: "we read 1024 consecutive chunks on disk in
//! one read I/O"; the sequential I/Os of Fig. 4 and Fig. 5).

use super::ReadModel;

/// Read I/Os to fetch `slots` (any order, repeats allowed) from one node;
/// `slots` is sorted and deduplicated in place. With the distinct slots
/// sorted:
///
/// * [`ReadModel::Runs`]: one I/O per run of consecutive slots (`s`,
///   `s + 1`, ...) that the file needs, a run longer than `window` split
///   every `window` chunks. A slot the file does not need ends the run.
/// * [`ReadModel::Window`]: each I/O fetches the `window` consecutive slots
///   starting at the lowest needed slot not yet fetched (slots in between
///   that the file does not need are read too).
pub fn read_ios(slots: &mut Vec<u32>, window: u32, model: ReadModel) -> u64 {
    slots.sort_unstable();
    slots.dedup();
    let w = u64::from(window);
    let mut ios = 0u64;
    let (mut start, mut prev) = (0u64, 0u64); // the current I/O's first and last slot
    for &s in slots.iter() {
        let s = u64::from(s);
        let extends = ios > 0
            && match model {
                ReadModel::Runs => s == prev + 1 && s - start < w,
                ReadModel::Window => s < start + w,
            };
        if !extends {
            ios += 1;
            start = s;
        }
        prev = s;
    }
    ios
}

/// Read I/Os of one file whose chunks are at `locs` = (node, slot): the sum
/// of [`read_ios`] over the nodes it touches. `locs` is reordered.
pub fn file_read_ios(locs: &mut [(u32, u32)], window: u32, model: ReadModel, scratch: &mut Vec<u32>) -> u64 {
    locs.sort_unstable();
    let mut total = 0;
    for group in locs.chunk_by(|a, b| a.0 == b.0) {
        scratch.clear();
        scratch.extend(group.iter().map(|&(_, s)| s));
        total += read_ios(scratch, window, model);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-made examples, window 4. Windows: {0, 3, 9, 12} -> [0,4)
    /// [9,13) = 2 I/Os; {0, 4, 8} -> [0,4) [4,8) [8,12) = 3. Runs: {0, 3,
    /// 9, 12} are four runs; {0..=5} is one run split after 4 chunks.
    #[test]
    fn read_ios_by_hand() {
        use ReadModel::{Runs, Window};
        assert_eq!(read_ios(&mut vec![12, 0, 3, 9], 4, Window), 2);
        assert_eq!(read_ios(&mut vec![0, 4, 8], 4, Window), 3);
        assert_eq!(read_ios(&mut vec![12, 0, 3, 9], 4, Runs), 4);
        assert_eq!(read_ios(&mut vec![5, 1, 2, 0, 3, 4], 4, Runs), 2);
        assert_eq!(read_ios(&mut vec![1, 2, 3, 7, 8], 4, Runs), 2);
        for m in [Runs, Window] {
            assert_eq!(read_ios(&mut vec![5, 5, 5], 4, m), 1);
            assert_eq!(read_ios(&mut vec![], 4, m), 0);
            assert_eq!(read_ios(&mut (0..1024).collect(), 1024, m), 1);
            assert_eq!(read_ios(&mut (0..1025).collect(), 1024, m), 2);
        }
        let mut s = Vec::new();
        // Two nodes: node 0 slots {0, 1}, node 1 slots {7, 100}.
        assert_eq!(file_read_ios(&mut [(1, 100), (0, 1), (1, 7), (0, 0)], 4, Runs, &mut s), 3);
        assert_eq!(file_read_ios(&mut [(1, 5), (0, 1), (1, 7), (0, 0)], 4, Window, &mut s), 2);
        assert_eq!(file_read_ios(&mut [(1, 5), (0, 1), (1, 7), (0, 0)], 4, Runs, &mut s), 3);
    }
}
