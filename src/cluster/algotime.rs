//! Exp. 4 (§V-C, Fig. 12(a)): the running time of brute-force CSR, greedy
//! CSR and ATR, measured on the real code ([`crate::reodedup`]) on windows
//! of 5 to 12 chunks (the paper's range) and on larger ones. The times are
//! the thread's CPU time (the minimum over repetitions), measurements, not
//! simulation results: they vary from machine to machine and run to run,
//! so they are printed by `cluster --algorithm-time` only, never by the
//! deterministic `--reproduce`.
//!
//! The windows (not given by the paper): `n` chunks in 3 files (Fig. 6's
//! example has 7 chunks in 3 files), each chunk in each file with
//! probability 1/2 (at least one), seeded; a file lists its chunks in
//! chunk order; the original order is chunk order. Brute force runs up to
//! [`crate::reodedup::BRUTE_FORCE_MAX`] chunks (10: 10! = 3.6 million
//! orders; the paper goes to 12).

use crate::reodedup::{self, AtrFile, CsrGreedy, BRUTE_FORCE_MAX};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Duration;

/// A window of `n` chunks in `files` files (module documentation).
pub fn window(n: usize, files: usize, seed: u64) -> Vec<Vec<u64>> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ n as u64);
    let mut out = vec![Vec::new(); files];
    for c in 0..n as u64 {
        let mut any = false;
        for f in out.iter_mut() {
            if rng.gen_bool(0.5) {
                f.push(c);
                any = true;
            }
        }
        if !any {
            out[rng.gen_range(0..files)].push(c);
        }
    }
    out
}

/// One size's CPU times per call (`best`), `None` where
/// the algorithm does not run.
#[derive(Clone, Debug)]
pub struct Row {
    pub n: usize,
    pub brute: Option<Duration>,
    pub greedy: Duration,
    pub atr: Duration,
}

/// Seconds of this thread's CPU time (Linux: `CLOCK_THREAD_CPUTIME_ID`,
/// so time the thread spends descheduled on a busy machine is not
/// counted), else wall-clock seconds since the first call.
fn clock() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime only writes the timespec it is given.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}

/// The CPU time of one call of `f`: the minimum over `reps` repetitions,
/// each repeating `f` until 2 ms of CPU time have passed (the minimum is
/// the estimate least disturbed by other work on the machine).
fn best<F: FnMut()>(reps: usize, mut f: F) -> Duration {
    (0..reps.max(1))
        .map(|_| {
            let t = clock();
            let mut k = 0u32;
            while k == 0 || clock() - t < 0.002 {
                f();
                k += 1;
            }
            Duration::from_secs_f64((clock() - t) / f64::from(k))
        })
        .min()
        .unwrap_or_default()
}

/// Measures every size in `sizes` (`reps` repetitions each).
pub fn measure(sizes: &[usize], reps: usize, seed: u64) -> Vec<Row> {
    sizes
        .iter()
        .map(|&n| {
            let files = window(n, 3, seed);
            let original: Vec<u64> = (0..n as u64).collect();
            let csr = |g| {
                let l = reodedup::csr_with(&files, Some(&original), g).expect("a valid window");
                std::hint::black_box(l);
            };
            let brute = (n <= BRUTE_FORCE_MAX).then(|| best(reps, || csr(CsrGreedy::BruteForce)));
            let greedy = best(reps, || csr(CsrGreedy::Rows));
            let atr = best(reps, || {
                let l = reodedup::atr_with(&files, Some(&original), AtrFile::Random, seed).expect("a valid window");
                std::hint::black_box(l);
            });
            Row { n, brute, greedy, atr }
        })
        .collect()
}

/// The Markdown table of `rows`.
pub fn table(rows: &[Row]) -> String {
    let us = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1e6);
    let mut s = String::from(
        "| chunks | brute-force CSR (µs CPU) | greedy CSR (µs CPU) | ATR (µs CPU) | ATR vs greedy CSR | greedy CSR vs brute force |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let vs = |a: Duration, b: Duration| format!("{:+.1}%", (a.as_secs_f64() / b.as_secs_f64() - 1.0) * 100.0);
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.n,
            r.brute.map_or("-".into(), us),
            us(r.greedy),
            us(r.atr),
            vs(r.atr, r.greedy),
            r.brute.map_or("-".into(), |b| vs(r.greedy, b))
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The windows are what the documentation says: every chunk in at
    /// least one of 3 files, files in chunk order, deterministic in the
    /// seed; the measurement returns a row per size, brute force only up
    /// to its limit.
    #[test]
    fn windows_and_rows() {
        let w = window(12, 3, 5);
        assert_eq!(w, window(12, 3, 5));
        let mut all: Vec<u64> = w.iter().flatten().copied().collect();
        for f in &w {
            assert!(f.windows(2).all(|p| p[0] < p[1]));
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, (0..12).collect::<Vec<u64>>());
        let rows = measure(&[5, 11], 1, 1);
        assert_eq!(rows.iter().map(|r| (r.n, r.brute.is_some())).collect::<Vec<_>>(), [(5, true), (11, false)]);
    }
}
