//! Counting read I/Os (§V-B: "we read 1024 consecutive chunks on disk in
//! one read I/O").

/// Read I/Os to fetch `slots` (any order, repeats allowed) from one node:
/// the distinct slots sorted; each I/O fetches the `window` consecutive
/// slots starting at the lowest slot not yet fetched. `slots` is sorted and
/// deduplicated in place.
pub fn read_ios(slots: &mut Vec<u32>, window: u32) -> u64 {
    slots.sort_unstable();
    slots.dedup();
    let mut ios = 0u64;
    let mut covered_until = 0u64; // exclusive end of the last I/O
    for &s in slots.iter() {
        let s = u64::from(s);
        if ios == 0 || s >= covered_until {
            ios += 1;
            covered_until = s + u64::from(window);
        }
    }
    ios
}

/// Read I/Os of one file whose chunks are at `locs` = (node, slot): the sum
/// of [`read_ios`] over the nodes it touches. `locs` is reordered.
pub fn file_read_ios(locs: &mut [(u32, u32)], window: u32, scratch: &mut Vec<u32>) -> u64 {
    locs.sort_unstable();
    let mut total = 0;
    for group in locs.chunk_by(|a, b| a.0 == b.0) {
        scratch.clear();
        scratch.extend(group.iter().map(|&(_, s)| s));
        total += read_ios(scratch, window);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made example: window 4.
    /// slots 0 1 2 3 | 4 .. 9 | 10 11 -> I/Os [0,4) [9,13) -> 2 I/Os for
    /// {0, 3, 9, 12}; {0, 4, 8} -> [0,4) [4,8) [8,12) -> 3.
    #[test]
    fn windows_of_consecutive_slots() {
        assert_eq!(read_ios(&mut vec![12, 0, 3, 9], 4), 2);
        assert_eq!(read_ios(&mut vec![0, 4, 8], 4), 3);
        assert_eq!(read_ios(&mut vec![5, 5, 5], 4), 1);
        assert_eq!(read_ios(&mut vec![], 4), 0);
        assert_eq!(read_ios(&mut (0..1024).collect(), 1024), 1);
        assert_eq!(read_ios(&mut (0..1025).collect(), 1024), 2);
        let mut s = Vec::new();
        // Two nodes: node 0 slots {0, 1}, node 1 slots {7, 100}.
        assert_eq!(file_read_ios(&mut [(1, 100), (0, 1), (1, 7), (0, 0)], 4, &mut s), 3);
    }
}
