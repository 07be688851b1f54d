//! Routing chunks and superchunks to nodes, and the arrival order of
//! concurrent writes (§II-A, §III-A).

use serde::Serialize;

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

/// How the write threads' requests interleave at the nodes (`--arrival`,
/// §III-A Fig. 2: "the chunks of each file ... and the chunks from other
/// files are being written concurrently").
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrival {
    /// Round-robin, one request per thread per round (the model before
    /// issue 28 item 9): every request of a thread is followed by one of
    /// each other thread.
    Lockstep,
    /// Independent arrivals (default): each thread's requests form its own
    /// Poisson process of rate 1 (exponential gaps of mean 1, seeded per
    /// thread); the nodes see the requests in time order. A thread can then
    /// send several requests in a row while the others are silent, as
    /// independent clients do. The paper does not say how its threads'
    /// writes interleave; this is the simplest model of independent clients.
    #[default]
    Poisson,
}

impl Arrival {
    pub const ALL: [Arrival; 2] = [Arrival::Lockstep, Arrival::Poisson];

    pub fn name(self) -> &'static str {
        match self {
            Arrival::Lockstep => "lockstep",
            Arrival::Poisson => "poisson",
        }
    }

    pub fn parse(s: &str) -> Option<Arrival> {
        Arrival::ALL.into_iter().find(|a| a.name() == s.trim())
    }
}

/// One write request of a thread: units `start..end` of the arrival order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub thread: u32,
    pub start: usize,
    pub end: usize,
}

/// The arrival order of the units and the requests they came in.
#[derive(Clone, Debug, Default)]
pub struct Arrivals {
    pub units: Vec<Unit>,
    /// In arrival order; their ranges tile `units`.
    pub requests: Vec<Request>,
}

/// Salt of the arrival processes' random streams.
const ARRIVAL_SALT: u64 = 0x4152_5249_5641_4c53; // "ARRIVALS"

/// The arrival order of `threads` concurrent write threads: thread `t`
/// writes files `t, t + threads, ...` in turn, each file as write requests
/// of up to `request` chunks (a request never spans two files; a superchunk
/// is never split, so a request holds at least one whole unit). Under
/// [`Arrival::Lockstep`], every round each thread that still has work sends
/// its next request (round-robin, thread order); under
/// [`Arrival::Poisson`], the next request is that of the thread whose
/// arrival clock is earliest (ties: lower thread), each clock advancing by
/// an exponential gap drawn from the thread's own stream (`seed`). The
/// units of a request arrive together.
pub fn interleave(
    files: &[Vec<u64>],
    nodes: u32,
    superchunk: Option<u32>,
    threads: u32,
    request: u32,
    arrival: Arrival,
    seed: u64,
) -> Arrivals {
    use rand::{Rng, SeedableRng};
    let threads = threads.max(1) as usize;
    let request = request.max(1);
    let mut per_thread: Vec<Vec<Unit>> = vec![Vec::new(); threads.min(files.len().max(1))];
    let n = per_thread.len();
    for (i, f) in files.iter().enumerate() {
        file_units(i as u32, f, nodes, superchunk, &mut per_thread[i % n]);
    }
    let total: usize = per_thread.iter().map(Vec::len).sum();
    let mut out = Arrivals { units: Vec::with_capacity(total), requests: Vec::new() };
    let mut pos = vec![0usize; n];
    // Sends thread t's next request; false when it has none.
    let send = |t: usize, out: &mut Arrivals, pos: &mut [usize]| -> bool {
        let units = &per_thread[t];
        let Some(first) = units.get(pos[t]) else { return false };
        let (file, mut sent) = (first.file, 0u32);
        let start = out.units.len();
        while let Some(u) = units.get(pos[t]) {
            if u.file != file || (sent > 0 && sent + u.len > request) {
                break;
            }
            out.units.push(*u);
            sent += u.len;
            pos[t] += 1;
        }
        out.requests.push(Request { thread: t as u32, start, end: out.units.len() });
        true
    };
    match arrival {
        Arrival::Lockstep => {
            while out.units.len() < total {
                for t in 0..n {
                    send(t, &mut out, &mut pos);
                }
            }
        }
        Arrival::Poisson => {
            let mut rngs: Vec<rand_xoshiro::Xoshiro256PlusPlus> = (0..n)
                .map(|t| rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(mix64(seed ^ ARRIVAL_SALT ^ t as u64)))
                .collect();
            let mut gap = |t: usize| -> f64 { -(1.0 - rngs[t].gen::<f64>()).ln() };
            let mut clock: Vec<f64> = (0..n).map(&mut gap).collect();
            while out.units.len() < total {
                // The earliest clock among threads with work left.
                let t = (0..n)
                    .filter(|&t| pos[t] < per_thread[t].len())
                    .min_by(|&a, &b| clock[a].total_cmp(&clock[b]).then(a.cmp(&b)))
                    .expect("units left, so a thread has work");
                send(t, &mut out, &mut pos);
                clock[t] += gap(t);
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
        let at = |v: Arrivals| v.units.iter().map(|u| (u.file, u.start)).collect::<Vec<_>>();
        let interleave = |f: &[Vec<u64>], n, sc, t, r| interleave(f, n, sc, t, r, Arrival::Lockstep, 0);
        // Thread 0: file 0 then file 2; thread 1: file 1.
        assert_eq!(at(interleave(&files, 3, None, 2, 1)), [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (2, 0)]);
        // Requests of two chunks, never across files.
        assert_eq!(at(interleave(&files, 3, None, 2, 2)), [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (2, 0)]);
        assert_eq!(at(interleave(&files, 3, None, 1, 1)), [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0)]);
        let sc = interleave(&files, 3, Some(2), 1, 1);
        assert_eq!(
            sc.units.iter().map(|u| (u.file, u.start, u.len)).collect::<Vec<_>>(),
            [(0, 0, 2), (0, 2, 1), (1, 0, 2), (2, 0, 1)]
        );
        // Request boundaries: lockstep, two-chunk requests.
        let r = interleave(&files, 3, None, 2, 2);
        let reqs: Vec<(u32, usize, usize)> = r.requests.iter().map(|q| (q.thread, q.start, q.end)).collect();
        assert_eq!(reqs, [(0, 0, 2), (1, 2, 4), (0, 4, 5), (0, 5, 6)]);
    }

    /// Independent arrivals: every unit arrives once, each thread's units
    /// in its own order, the same seed gives the same order, and a thread
    /// sends several requests in a row (which lockstep never does with two
    /// busy threads).
    #[test]
    fn poisson_arrivals_keep_each_thread_in_order() {
        let files: Vec<Vec<u64>> = (0..4).map(|f| (0..64).map(|c| f * 1000 + c).collect()).collect();
        let a = interleave(&files, 3, None, 2, 4, Arrival::Poisson, 7);
        assert_eq!(a.units.len(), 256);
        assert_eq!(a.units, interleave(&files, 3, None, 2, 4, Arrival::Poisson, 7).units);
        assert_ne!(a.units, interleave(&files, 3, None, 2, 4, Arrival::Poisson, 8).units);
        for t in 0..2u32 {
            let mine: Vec<(u32, u32)> = a.units.iter().filter(|u| u.file % 2 == t).map(|u| (u.file, u.start)).collect();
            let mut sorted = mine.clone();
            sorted.sort_unstable();
            assert_eq!(mine, sorted, "thread {t} in order");
        }
        let repeats = a.requests.windows(2).filter(|w| w[0].thread == w[1].thread).count();
        assert!(repeats > 5, "{repeats} back-to-back requests of one thread");
        let l = interleave(&files, 3, None, 2, 4, Arrival::Lockstep, 7);
        assert_eq!(l.requests.windows(2).filter(|w| w[0].thread == w[1].thread).count(), 0);
    }
}
