//! Routing chunks and superchunks to nodes, and the arrival order of
//! concurrent writes (§II-A, §III-A).

/// The SplitMix64 finalizer: a bijective 64-bit mix, so fingerprints that
/// are small integers (interned content ids, synthetic counters) spread
/// evenly over the nodes.
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Salt of the min-hash, so a superchunk's representative is not the value
/// that routes its minimum chunk.
const MINHASH_SALT: u64 = 0x4d49_4e48_4153_4821; // "MINHASH!"

/// The node of a fingerprint: `mix64(fp) mod nodes` (stateless routing, \[5\]).
pub fn node_of(fp: u64, nodes: u32) -> u32 {
    (mix64(fp) % u64::from(nodes)) as u32
}

/// A superchunk's representative: the minimum of the salted mix of its
/// chunks' fingerprints (a min-hash). Identical superchunks share it, and
/// two superchunks share it with probability equal to their Jaccard
/// similarity (Broder), which is what makes \[5\]'s superchunk routing keep
/// similar data together.
pub fn representative(chunks: &[u64]) -> u64 {
    chunks.iter().map(|&f| mix64(f ^ MINHASH_SALT)).min().unwrap_or(0)
}

/// One routed unit: chunks `start..start + len` of file `file`, all sent to
/// `node` together.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    pub file: u32,
    pub start: u32,
    pub len: u32,
    pub node: u32,
}

/// The units of one file: one per chunk (`superchunk = None`) or one per
/// superchunk of up to `superchunk` chunks, routed by its representative.
pub fn file_units(file: u32, chunks: &[u64], nodes: u32, superchunk: Option<u32>, out: &mut Vec<Unit>) {
    match superchunk {
        None => {
            for (i, &fp) in chunks.iter().enumerate() {
                out.push(Unit { file, start: i as u32, len: 1, node: node_of(fp, nodes) });
            }
        }
        Some(sc) => {
            for (k, part) in chunks.chunks(sc as usize).enumerate() {
                let node = node_of(representative(part), nodes);
                out.push(Unit { file, start: k as u32 * sc, len: part.len() as u32, node });
            }
        }
    }
}

/// The arrival order of `threads` concurrent write threads: thread `t`
/// writes files `t, t + threads, ...` in turn, each file as write requests
/// of up to `request` chunks (a request never spans two files; a superchunk
/// is never split, so a request holds at least one whole unit). Every
/// round, each thread that still has work sends its next request
/// (round-robin, thread order); the units of a request arrive together.
pub fn interleave(files: &[Vec<u64>], nodes: u32, superchunk: Option<u32>, threads: u32, request: u32) -> Vec<Unit> {
    let threads = threads.max(1) as usize;
    let request = request.max(1);
    let mut per_thread: Vec<Vec<Unit>> = vec![Vec::new(); threads.min(files.len().max(1))];
    let n = per_thread.len();
    for (i, f) in files.iter().enumerate() {
        file_units(i as u32, f, nodes, superchunk, &mut per_thread[i % n]);
    }
    let total: usize = per_thread.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    let mut pos = vec![0usize; n];
    while out.len() < total {
        for t in 0..n {
            let units = &per_thread[t];
            let Some(first) = units.get(pos[t]) else { continue };
            let (file, mut sent) = (first.file, 0u32);
            while let Some(u) = units.get(pos[t]) {
                if u.file != file || (sent > 0 && sent + u.len > request) {
                    break;
                }
                out.push(*u);
                sent += u.len;
                pos[t] += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_is_deterministic_and_spread() {
        let mut counts = [0u32; 8];
        for fp in 0..80_000u64 {
            let n = node_of(fp, 8);
            assert_eq!(n, node_of(fp, 8));
            counts[n as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
    }

    #[test]
    fn identical_superchunks_share_a_representative() {
        let a = [5u64, 9, 13, 2];
        let mut b = a;
        b.reverse();
        assert_eq!(representative(&a), representative(&b));
        assert_ne!(representative(&a), representative(&[100, 101, 102, 103]));
    }

    #[test]
    fn threads_interleave_round_robin() {
        let files = vec![vec![1, 2, 3], vec![4, 5], vec![6]];
        let at = |v: Vec<Unit>| v.iter().map(|u| (u.file, u.start)).collect::<Vec<_>>();
        // Thread 0: file 0 then file 2; thread 1: file 1.
        assert_eq!(at(interleave(&files, 3, None, 2, 1)), [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (2, 0)]);
        // Requests of two chunks, never across files.
        assert_eq!(at(interleave(&files, 3, None, 2, 2)), [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (2, 0)]);
        assert_eq!(at(interleave(&files, 3, None, 1, 1)), [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0)]);
        let sc = interleave(&files, 3, Some(2), 1, 1);
        assert_eq!(
            sc.iter().map(|u| (u.file, u.start, u.len)).collect::<Vec<_>>(),
            [(0, 0, 2), (0, 2, 1), (1, 0, 2), (2, 0, 1)]
        );
    }
}
