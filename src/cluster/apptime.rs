//! Exp. 7's CPU side (§V-C "Application performance degradation", Fig.
//! 12(h)): the computing latency of a matrix multiplication (the paper's
//! shapes, 100×10 by 10×4) run alone and while the real CSR or ATR code
//! ([`crate::reodedup`]) runs beside it **on the same core**. A
//! measurement, not a simulation result (it varies from machine to machine
//! and run to run), so it is printed by `cluster --app-time` only, never by
//! the deterministic `--reproduce`. The I/O side of Exp. 7 is simulated
//! ([`super::timing::IoTask`]).
//!
//! # Method, and every choice the paper leaves open
//!
//! * **The application.** `f64` matrices, 100×10 times 10×4, the naive
//!   triple loop; one "computation" is [`BATCH`] multiplications (a few
//!   milliseconds, so a time slice of the other thread shows in it; the
//!   paper gives no repetition count), timed in wall-clock time
//!   (`Instant`): latency is what the application sees, descheduled time
//!   included.
//! * **The deduplication.** A second thread runs the real relocation
//!   code: [`crate::reodedup::csr_with`] (the per-row greedy, §IV-A) or
//!   [`crate::reodedup::atr_with`] (§IV-B) on a window of [`WINDOW`]
//!   chunks (a full 1,024-chunk write buffer, §V-A) in 3 files
//!   ([`super::algotime::window`]), over and over. Two loads: **all the
//!   time** (the worst case: relocation never stops) and **at a duty
//!   cycle** given by the caller (`cluster --app-time` uses the cluster
//!   model's: one relocation per buffer a node fills, the buffer period
//!   taken from the timed write phase of FIO_20, 8 nodes, ReoDedup-C on
//!   HDDs): after each call the thread sleeps `call × (1/duty − 1)`.
//! * **The same core.** Both threads are pinned to one CPU (the first the
//!   process may run on) with `sched_setaffinity` (Linux). Where pinning
//!   fails the table says so, and the threads run where the scheduler puts
//!   them (on a machine with a free core, apart: then only caches and
//!   memory are shared). Other work on a shared machine runs on that CPU
//!   too; the rounds interleave the loads so drift hits them alike.
//! * **NoDedup** (the paper's baseline) is the multiplication with no
//!   second thread.

use crate::reodedup::{self, AtrFile, CsrGreedy};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Multiplications per timed computation.
pub const BATCH: usize = 1_000;
/// Chunks per relocated window (one full write buffer, §V-A).
pub const WINDOW: usize = 1_024;

/// The paper's shapes: A is 100×10, B is 10×4.
const M: usize = 100;
const K: usize = 10;
const N: usize = 4;

/// `out = a × b` for row-major `a` (M×K) and `b` (K×N).
pub fn matmul(a: &[f64], b: &[f64], out: &mut [f64]) {
    for i in 0..M {
        for j in 0..N {
            let mut s = 0.0;
            for k in 0..K {
                s += a[i * K + k] * b[k * N + j];
            }
            out[i * N + j] = s;
        }
    }
}

/// What runs beside the multiplication.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Load {
    /// Nothing (NoDedup).
    Alone,
    /// CSR (`true`) or ATR (`false`) at a duty cycle in (0, 1] (1: all the
    /// time).
    Relocate { csr: bool, duty: f64 },
}

impl Load {
    pub fn label(&self) -> String {
        match *self {
            Load::Alone => "NoDedup (alone)".into(),
            Load::Relocate { csr, duty } => {
                let who = if csr { "ReoDedup-C (CSR)" } else { "ReoDedup-A (ATR)" };
                if duty >= 1.0 {
                    format!("{who}, all the time")
                } else {
                    format!("{who}, {:.2}% of the time", duty * 100.0)
                }
            }
        }
    }
}

/// One load's measured computations.
#[derive(Clone, Debug)]
pub struct Row {
    pub load: Load,
    /// Wall-clock latency of each computation of [`BATCH`] multiplications.
    pub latencies: Vec<Duration>,
    /// Relocation calls the second thread completed.
    pub calls: u64,
}

impl Row {
    pub fn mean(&self) -> f64 {
        self.latencies.iter().map(Duration::as_secs_f64).sum::<f64>() / self.latencies.len().max(1) as f64
    }

    pub fn median(&self) -> f64 {
        let mut v: Vec<f64> = self.latencies.iter().map(Duration::as_secs_f64).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }
}

/// The result: the rows and whether both threads were pinned to one CPU.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub rows: Vec<Row>,
    /// The CPU both threads ran on, `None` where pinning failed.
    pub cpu: Option<usize>,
}

/// The first CPU the process may run on (Linux), else `None`.
fn first_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the call only
        // writes the set it is given, of the size given.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0 {
            return (0..libc::CPU_SETSIZE as usize).find(|&c| unsafe { libc::CPU_ISSET(c, &set) });
        }
    }
    None
}

/// Pins the calling thread to `cpu`; whether it worked.
fn pin(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: as in `first_cpu`; pid 0 is the calling thread.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(cpu, &mut set) };
        return unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } == 0;
    }
    #[allow(unreachable_code)]
    {
        let _ = cpu;
        false
    }
}

/// Runs `load` beside `computations` timed computations on this thread.
fn one(load: Load, computations: usize, cpu: Option<usize>, seed: u64, a: &[f64], b: &[f64]) -> Row {
    let stop = Arc::new(AtomicBool::new(false));
    let helper = match load {
        Load::Alone => None,
        Load::Relocate { csr, duty } => {
            let stop = Arc::clone(&stop);
            Some(std::thread::spawn(move || {
                if let Some(c) = cpu {
                    pin(c);
                }
                let files = super::algotime::window(WINDOW, 3, seed);
                let original: Vec<u64> = (0..WINDOW as u64).collect();
                let mut calls = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let l = if csr {
                        reodedup::csr_with(&files, Some(&original), CsrGreedy::Rows)
                    } else {
                        reodedup::atr_with(&files, Some(&original), AtrFile::Random, seed)
                    };
                    std::hint::black_box(l.ok());
                    calls += 1;
                    if duty < 1.0 {
                        let rest = t.elapsed().as_secs_f64() * (1.0 / duty - 1.0);
                        // Sleep in slices so a stop is seen soon.
                        let until = Instant::now() + Duration::from_secs_f64(rest);
                        while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(5)));
                        }
                    }
                }
                calls
            }))
        }
    };
    // Let the helper start (and be pinned) before timing.
    if helper.is_some() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut out = vec![0.0; M * N];
    let mut latencies = Vec::with_capacity(computations);
    for _ in 0..computations {
        let t = Instant::now();
        for _ in 0..BATCH {
            matmul(std::hint::black_box(a), std::hint::black_box(b), &mut out);
            std::hint::black_box(&out);
        }
        latencies.push(t.elapsed());
    }
    stop.store(true, Ordering::Relaxed);
    let calls = helper.map_or(0, |h| h.join().unwrap_or(0));
    Row { load, latencies, calls }
}

/// Measures every load in `loads`, `rounds` times `computations`
/// computations each, the loads interleaved round by round, on one CPU
/// (this thread is pinned for the duration: call it from a thread of its
/// own, as the CLI's main thread is).
pub fn measure(loads: &[Load], rounds: usize, computations: usize, seed: u64) -> Measurement {
    let cpu = first_cpu().filter(|&c| pin(c));
    let a: Vec<f64> = (0..M * K).map(|i| (i % 7) as f64 * 0.5 + 1.0).collect();
    let b: Vec<f64> = (0..K * N).map(|i| (i % 5) as f64 * 0.25 - 0.5).collect();
    let mut rows: Vec<Row> = loads.iter().map(|&load| Row { load, latencies: Vec::new(), calls: 0 }).collect();
    for _ in 0..rounds.max(1) {
        for r in rows.iter_mut() {
            let got = one(r.load, computations, cpu, seed, &a, &b);
            r.latencies.extend(got.latencies);
            r.calls += got.calls;
        }
    }
    Measurement { rows, cpu }
}

/// The Markdown table of `m` (latencies in µs; changes vs the first row,
/// which should be [`Load::Alone`]).
pub fn table(m: &Measurement) -> String {
    let mut s = match m.cpu {
        Some(c) => format!("Both threads pinned to CPU {c} (`sched_setaffinity`).\n\n"),
        None => "Pinning failed: the threads ran where the scheduler put them.\n\n".into(),
    };
    s.push_str(&format!(
        "| beside the multiplication ({BATCH} × 100×10 by 10×4) | computations | mean latency (µs) | vs NoDedup | median (µs) | vs NoDedup | relocation calls |\n|---|---|---|---|---|---|---|\n"
    ));
    let (m0, d0) = m.rows.first().map_or((0.0, 0.0), |r| (r.mean(), r.median()));
    let vs = |x: f64, y: f64| if y > 0.0 { format!("{:+.1}%", (x / y - 1.0) * 100.0) } else { "n/a".into() };
    for r in &m.rows {
        s.push_str(&format!(
            "| {} | {} | {:.1} | {} | {:.1} | {} | {} |\n",
            r.load.label(),
            r.latencies.len(),
            r.mean() * 1e6,
            vs(r.mean(), m0),
            r.median() * 1e6,
            vs(r.median(), d0),
            r.calls
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multiplication by hand on a 2×… corner: with A = all ones and
    /// B[k][j] = j, every out[i][j] = 10·j; with A[i][k] = i, B = ones,
    /// out[i][j] = 10·i.
    #[test]
    fn matmul_by_hand() {
        let a = vec![1.0; M * K];
        let b: Vec<f64> = (0..K * N).map(|i| (i % N) as f64).collect();
        let mut out = vec![0.0; M * N];
        matmul(&a, &b, &mut out);
        assert!(out.chunks(N).all(|r| r == [0.0, 10.0, 20.0, 30.0]));
        let a: Vec<f64> = (0..M * K).map(|i| (i / K) as f64).collect();
        matmul(&a, &vec![1.0; K * N], &mut out);
        assert_eq!(out[99 * N + 3], 990.0);
        assert_eq!(out[7 * N], 70.0);
    }

    /// A measurement returns a row per load with the computations asked,
    /// and the relocating thread did run beside the multiplication.
    #[test]
    fn rows_per_load() {
        let loads = [Load::Alone, Load::Relocate { csr: false, duty: 1.0 }];
        let m = std::thread::spawn(move || measure(&loads, 2, 3, 1)).join().unwrap();
        assert_eq!(m.rows.iter().map(|r| r.latencies.len()).collect::<Vec<_>>(), [6, 6]);
        assert_eq!(m.rows[0].calls, 0);
        assert!(m.rows[1].calls > 0);
        assert!(table(&m).contains("ReoDedup-A (ATR), all the time"));
    }
}
