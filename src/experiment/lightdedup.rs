//! `reproduce light-dedup`: what a simulator can reproduce of Light-Dedup's
//! evaluation (Qiu et al., USENIX ATC'23), as a [`Declaration`] served by
//! the generic runner.
//!
//! * Hint hit rate with and without trust degrees (§4.3.2: WebVMs 98.6% vs
//!   60.0%).
//! * Duplicate pages by the length of their run of consecutive duplicates
//!   (§3.2, Fig. 8: 30% of WebVMs' duplicate blocks in runs longer than 10).
//! * LMT metadata amplification, entry- vs region-based, fresh and aged
//!   (§5.5, Table 4: aged 19.35× / 9.86× entry vs 6.10× / 3.43× region,
//!   read / write), on §5.5's aging workload.
//! * The write-latency cost of verify reads against the hash time saved
//!   (§5.2-5.3), on the FIU-like replicas.
//!
//! Workloads: FAD's FIU rows as Table II-matched replicas at each trace's
//! own load (the paper replays the FIU traces themselves), a copy (a file
//! written twice, §5.3's Copy) and the aging workload, both built in
//! ([`generate`]). Every variant runs the `dedup` policy (Light-Dedup does
//! not place pages); docs/engines.md has the model and its choices.

use super::declare::{num, Bars, Block, Claim, Declaration, Metric, Outcome, Plotter, Variant, Workload};
use super::paper::WRITE_MEAN;
use super::{families, replica};
use super::{WorkloadDef, WorkloadSpec};
use crate::config::Config;
use crate::engine::{ENTRY_BYTES, IDEAL_BYTES};
use crate::report::RunReport;
use crate::units::{ContentId, Nanos, Op};
use crate::workload::{Provenance, Request, Workload as Trace};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt::Write as _;

/// FIU rows used (FAD's Table II replicas of the paper's FIU traces).
pub const REPLICAS: [&str; 3] = ["homes", "mail", "web-vm"];
/// Built-in workloads (`builtin:NAME`).
pub const WORKLOADS: [&str; 4] =
    ["light-dedup-copy", "light-dedup-aging-1", "light-dedup-aging-2", "light-dedup-aging-3"];

/// Pages of the copied file (256 MiB of 4 KiB pages).
pub const COPY_PAGES: u32 = 65_536;
/// Pages of one copy request (256 KiB) and the time between requests (no
/// queueing: each request finishes before the next).
const COPY_REQUEST: u32 = 64;
const COPY_GAP: Nanos = Nanos(5_000_000);
/// Pages of the aging workload's first file (1 GiB), of one of its write
/// requests (2 MiB, §5.5's record size), and the time between requests.
pub const AGING_PAGES: u32 = 262_144;
const AGING_REQUEST: u32 = 512;
const AGING_GAP: Nanos = Nanos(100_000);
/// Seed of the punched pages' order.
const AGING_SEED: u64 = 5;

/// Builds requests with explicit content ids.
struct Builder {
    requests: Vec<Request>,
    contents: Vec<ContentId>,
    at: Nanos,
    gap: Nanos,
}

impl Builder {
    fn new(gap: Nanos) -> Builder {
        Builder { requests: Vec::new(), contents: Vec::new(), at: Nanos::ZERO, gap }
    }

    fn push(&mut self, op: Op, lpn: u32, pages: u32, content: u32) {
        self.requests.push(Request { arrival: self.at, op, lpn, pages, content, stream: 0 });
        self.at += self.gap;
    }

    /// A write of `ids` at `lpn` (one content id per page).
    fn write(&mut self, lpn: u32, ids: impl Iterator<Item = u32>) {
        let first = self.contents.len() as u32;
        self.contents.extend(ids.map(ContentId));
        let pages = self.contents.len() as u32 - first;
        self.push(Op::Write, lpn, pages, first);
    }

    /// Writes `ids` from `lpn` on in requests of `request` pages.
    fn write_run(&mut self, lpn: u32, ids: std::ops::Range<u32>, request: u32) {
        let mut k = ids.start;
        while k < ids.end {
            let end = (k + request).min(ids.end);
            self.write(lpn + (k - ids.start), k..end);
            k = end;
        }
    }

    fn finish(self, name: &str) -> Trace {
        let mut w = Trace::from_requests(
            Provenance { name: name.to_string(), source: format!("built in (reproduce light-dedup): {name}") },
            self.requests,
        );
        w.content_space = self.contents.iter().map(|c| c.0 + 1).max().unwrap_or(0);
        w.contents = self.contents;
        w
    }
}

/// A built-in workload by name (`None` if unknown).
///
/// * `light-dedup-copy`: §5.3's Copy: [`COPY_PAGES`] unique pages in 256 KiB
///   requests, then the same contents in the same order at other
///   addresses, one request per 5 ms.
/// * `light-dedup-aging-N`: §5.5's aging at 4 KiB pages, phases 1..=N:
///   (1) write [`AGING_PAGES`] unique pages in 2 MiB requests; (2) punch a
///   random half (TRIM), then write one new page (the engine learns of
///   freed copies at its next lookup, so the deletions are charged to this
///   phase); (3) write half as many new unique pages in 2 MiB requests.
///   The aged amplification is phase 3 alone: run N = 3 minus run N = 2.
pub fn generate(name: &str) -> Option<Trace> {
    if name == "light-dedup-copy" {
        let mut b = Builder::new(COPY_GAP);
        b.write_run(0, 0..COPY_PAGES, COPY_REQUEST);
        b.write_run(COPY_PAGES, 0..COPY_PAGES, COPY_REQUEST);
        return Some(b.finish(name));
    }
    let phases: u32 = name.strip_prefix("light-dedup-aging-")?.parse().ok().filter(|p| (1..=3).contains(p))?;
    let n = AGING_PAGES;
    let mut b = Builder::new(AGING_GAP);
    b.write_run(0, 0..n, AGING_REQUEST);
    if phases >= 2 {
        let mut order: Vec<u32> = (0..n).collect();
        order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(AGING_SEED));
        for &lpn in &order[..(n / 2) as usize] {
            b.push(Op::Trim, lpn, 1, crate::workload::NO_CONTENT);
        }
        b.write(2 * n, 2 * n..2 * n + 1);
    }
    if phases >= 3 {
        b.write_run(n, n..n + n / 2, AGING_REQUEST);
    }
    Some(b.finish(name))
}

fn stat(r: &RunReport, key: &str) -> f64 {
    Metric::engine_stat(r, key)
}

/// A `dedup` variant on the light-dedup engine with `engine.light-dedup.*`
/// overrides.
fn ld(label: &str, extra: &[(&str, &str)]) -> Variant {
    let mut params = vec![("dedup.engine".to_string(), "\"light-dedup\"".to_string())];
    params.extend(extra.iter().map(|(k, v)| (format!("engine.light-dedup.{k}"), v.to_string())));
    Variant { params, ..Variant::new(label, "dedup", &[]) }
}

/// The variants run on the replicas and the copy.
fn dedup_variants() -> Vec<Variant> {
    vec![
        Variant::new("caftl", "dedup", &[]).named("caftl (32 µs SHA-1)"),
        // A fair hash baseline (issue 27, item 13): CAFTL's SHA-1 on four
        // pipelined hash engines, each page on the earliest free one.
        Variant::new("caftl-x4", "dedup", &[("dedup.hash_engines", "4".to_string())]).named("caftl, 4 hash engines"),
        // Fast hash + verify with the whole index in DRAM (issue 27, item
        // 13): Light-Dedup's identification without its LMT and hints.
        Variant::new("dram-verify", "dedup", &[("dedup.engine", "\"dram-verify\"".to_string())])
            .named("dram-verify (xxHash + verify, DRAM index)"),
        // CAFTL's sampling (issue 27, item 13): a multi-page write hashes
        // its first page, the others only if that one is a duplicate.
        Variant::new("caftl-sampled", "dedup", &[("dedup.engine", "\"caftl-sampled\"".to_string())])
            .named("caftl-sampled (SHA-1 of the first page, the rest on a hit)"),
        ld("ld", &[]).named("light-dedup"),
        ld("ld-no-trust", &[("trust", "false")]).named("light-dedup, no trust degrees"),
        ld("ld-no-spec", &[("speculative", "false")]).named("light-dedup, speculative = false"),
        ld("ld-cached", &[("region_cache", "4194304")]).named("light-dedup, all metadata cached"),
    ]
}

/// The variants run on the workload families: the hint claims need
/// light-dedup with and without trust degrees, the latency claim caftl.
fn family_variants() -> Vec<Variant> {
    dedup_variants().into_iter().filter(|v| ["caftl", "ld", "ld-no-trust"].contains(&v.label.as_str())).collect()
}

/// The sensitivity sweep: the hint hit rate against the mean duplicate run
/// length (a hint predicts the next page of a run, §4.3), on the profile of
/// the recorded image store (its runs are the longest of the recordings,
/// mean 19.9 pages; docs/recorded.md).
const SWEEP_PROFILE: &str = "recorded-vmimages";
const SWEEP_KEY: &str = "duplicates.run_pages.mean";
const SWEEP_RUNS: [f64; 5] = [2.0, 5.0, 10.0, 20.0, 50.0];

fn sweep_table(o: &Outcome, plotter: &mut Plotter) -> Result<String, super::ExperimentError> {
    let mut md = format!(
        "\n## Hint hit rate against duplicate run length (issue 24 item 5)\n\nThe profile `{SWEEP_PROFILE}` with \
         `{SWEEP_KEY}` set; the other workload families (`fitted:*`, workloads fitted to the committed real \
         profiles: docs/profiles.md) are rows of every table above.\n\n| run length mean asked (pages) | dups in runs \
         > 10 | trust degrees: followed / hit rate | no trust degrees: followed / hit rate |\n|---:|---:|---|---|\n"
    );
    let mut lines = vec![("trust degrees".to_string(), Vec::new()), ("no trust degrees".to_string(), Vec::new())];
    for x in SWEEP_RUNS {
        let w = format!("sweep:{SWEEP_KEY}={x}");
        let cell = |v: &str, i: usize, lines: &mut Vec<(String, Vec<(f64, f64)>)>| {
            o.report(&w, v).map_or("n/a".into(), |r| {
                let followed = stat(r, "engine_hint_followed");
                if followed > 0.0 {
                    lines[i].1.push((x, 100.0 * hit_rate(r)));
                }
                format!("{followed:.0} / {:.1}%", 100.0 * hit_rate(r))
            })
        };
        let runs = o.report(&w, "ld").map(|r| 100.0 * stat(r, "engine_dup_run_frac_over_10"));
        let (a, b) = (cell("ld", 0, &mut lines), cell("ld-no-trust", 1, &mut lines));
        let _ = writeln!(md, "| {x} | {}% | {a} | {b} |", num(runs, 1));
    }
    if lines.iter().all(|(_, p)| p.len() >= 2) {
        plotter.lines(
            "hint_hit_rate_vs_run_length",
            "Hint hit rate vs duplicate run length",
            "duplicate run length mean (pages)",
            "hint hit rate (%)",
            &lines,
        )?;
        md.push_str("\n![sweep](plots/hint_hit_rate_vs_run_length.png)\n");
    }
    Ok(md)
}

/// The streams sweep (issue 27 item 12, issue 24 item 5): the Plan 9
/// blocks' profile (real block fingerprints in write order: writes of 4.3
/// pages, duplicate runs of 5.6 on average, so a writer's hint chains cross
/// its writes, where the image store's 442-page writes keep them inside
/// one), its generated workload served as N interleaved
/// writers (`streams=N`: [`crate::workload::Workload::interleave_streams`]),
/// with the prediction state per stream (the paper's per-CPU state,
/// default) and device-wide (`per_stream = false`).
pub const STREAMS: [u16; 5] = [1, 2, 4, 8, 16];
const STREAMS_PROFILE: &str = "plan9-blocks";

/// The label of the streams sweep's workload with `n` writers.
fn streams_label(n: u16) -> String {
    format!("streams:{n}")
}

/// The stream counts on which the prefetch variants also run (Fig. 11:
/// one writer, and more than PN's break-even of 6 threads).
const PREFETCH_STREAMS: [u16; 2] = [1, 16];

/// The prefetch variants of §4.3 (`engine.light-dedup.prefetch`): id,
/// value, name. SP is `ld` itself.
const PREFETCH: [(&str, &str, &str); 4] =
    [("ld-np", "none", "NP (no prefetch)"), ("ld-ibp", "ibp", "IBP"), ("ld-pc", "pc", "PC"), ("ld-pn", "pn", "PN")];

fn prefetch_variants() -> Vec<Variant> {
    let mut v: Vec<Variant> =
        PREFETCH.iter().map(|&(id, p, name)| ld(id, &[("prefetch", &format!("\"{p}\""))]).named(name)).collect();
    v.push(ld("ld", &[]).named("light-dedup"));
    v
}

fn streams_variants(n: u16) -> Vec<Variant> {
    let mut v = vec![ld("ld-one-stream", &[("per_stream", "false")]).named("light-dedup, one device-wide stream")];
    if PREFETCH_STREAMS.contains(&n) {
        v.extend(prefetch_variants());
    } else {
        v.push(ld("ld", &[]).named("light-dedup"));
    }
    v
}

fn streams_table(o: &Outcome, plotter: &mut Plotter) -> Result<String, super::ExperimentError> {
    let mut md = format!(
        "\n## Hint hit rate against the number of writer streams (issue 27 item 12, issue 24 item 5)\n\nThe profile \
         `{STREAMS_PROFILE}` (fitted) served as N interleaved writers (`streams=N`: the \
         generated workload cut into N runs of consecutive requests, served round-robin at the same arrival times, \
         each with its own stream id). Light-Dedup keeps the previous entry and the stream trust per stream (§4.3.2: \
         per CPU; default) or in one device-wide stream (`per_stream = false`).\n\n| streams | per stream: \
         followed / hit rate | per stream: predictions right | one stream: followed / hit rate | one stream: \
         predictions right |\n|---:|---|---:|---|---:|\n"
    );
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = [
        "followed hints right, per-stream state",
        "followed hints right, one device-wide stream",
        "all predictions right, per-stream state",
        "all predictions right, one device-wide stream",
    ]
    .iter()
    .map(|s| (s.to_string(), Vec::new()))
    .collect();
    for n in STREAMS {
        let w = streams_label(n);
        let mut cells = Vec::new();
        for (i, v) in ["ld", "ld-one-stream"].into_iter().enumerate() {
            let Some(r) = o.report(&w, v) else {
                cells.push("n/a | n/a".to_string());
                continue;
            };
            let followed = stat(r, "engine_hint_followed");
            let right = 100.0 * stat(r, "engine_hint_hits") / stat(r, "engine_hint_predictions").max(1.0);
            if followed > 0.0 {
                lines[i].1.push((f64::from(n), 100.0 * hit_rate(r)));
            }
            lines[2 + i].1.push((f64::from(n), right));
            cells.push(format!("{followed:.0} / {:.1}% | {right:.1}%", 100.0 * hit_rate(r)));
        }
        let _ = writeln!(md, "| {n} | {} | {} |", cells[0], cells[1]);
    }
    if lines.iter().all(|(_, p)| p.len() >= 2) {
        plotter.lines(
            "hint_hit_rate_vs_streams",
            "Hint hit rate vs writer streams",
            "interleaved writer streams",
            "right (%)",
            &lines,
        )?;
        md.push_str("\n![streams](plots/hint_hit_rate_vs_streams.png)\n");
    }
    Ok(md)
}

/// §4.3's prefetch variants (Fig. 10, Fig. 11): mean write latency and the
/// speed-up over NP of a writer that waits for each write (1 / latency).
fn prefetch_table(o: &Outcome, _: &mut Plotter) -> Result<String, super::ExperimentError> {
    let mut md = String::from(
        "\n## Prefetch variants (§4.3, Fig. 10-11)\n\nMean write latency (µs) of each variant and, in parentheses, \
         NP's over it (the speed-up of a writer that waits for each write). Paper (Optane, FIO 2 MiB writes of the \
         same data twice and Copy): single-threaded, PN exceeds the other variants by 1.11-2.19× (Fig. 10), SP \
         beats PC (it skips the hash and index), IBP adds 1-52% over NP (§5.2); at ≤ 5 threads PN is 1.03-1.29× \
         SP, at ≥ 6 threads SP is 1.11-1.80× PN (Fig. 11: PN's extra reads contend in the DIMMs' buffers). \
         PN+Transition (CBP) switches by thread count and is not modelled.\n\n| workload | NP | IBP | PC | SP | PN \
         | PN read-ahead used / issued |\n|---|---|---|---|---|---|---|\n",
    );
    let mut rows: Vec<String> = vec!["copy".into()];
    rows.extend(PREFETCH_STREAMS.iter().map(|&n| streams_label(n)));
    for w in &rows {
        let np = o.report(w, "ld-np").map(|r| r.summary.write.mean_us);
        let _ = write!(md, "| {} |", o.name(w));
        for v in ["ld-np", "ld-ibp", "ld-pc", "ld", "ld-pn"] {
            let cell = o.report(w, v).map_or("n/a".into(), |r| {
                let m = r.summary.write.mean_us;
                format!("{m:.1} ({})", np.map_or("n/a".into(), |np| format!("{:.2}×", np / m)))
            });
            let _ = write!(md, " {cell} |");
        }
        let ahead = o.report(w, "ld-pn").map_or("n/a".into(), |r| {
            format!("{:.0} / {:.0}", stat(r, "engine_read_ahead_used"), stat(r, "engine_read_ahead"))
        });
        let _ = writeln!(md, " {ahead} |");
    }
    Ok(md)
}

/// The metadata cache sizes (pages of 4 KiB) the layouts run with on the
/// aging workloads (issue 27, item 11): the cache stands for Optane's
/// on-DIMM buffers and decides the amplification. 8 pages = 32 KiB, the
/// paper's testbed's buffers by capacity (2 DIMMs, §5.1, with an XPBuffer
/// of about 16 KiB each as measured by Yang et al., FAST'20); 64 (the
/// engine's default, 256 KiB) stands for an SSD controller's DRAM; 1,024
/// (4 MiB) holds the aging workload's whole LMT.
pub const AGING_CACHES: [u32; 3] = [8, 64, 1024];

/// The default cache among [`AGING_CACHES`]: its variants keep their plain
/// names (`ld-entry`, `ld-region`).
const DEFAULT_CACHE: u32 = 64;

/// The variant id of `layout` with a cache of `cache` pages.
fn layout_id(layout: &str, cache: u32) -> String {
    if cache == DEFAULT_CACHE {
        format!("ld-{layout}")
    } else {
        format!("ld-{layout}-c{cache}")
    }
}

/// The LMT layouts, run on the aging workloads, at each cache size.
fn layout_variants() -> Vec<Variant> {
    let mut v = Vec::new();
    for cache in AGING_CACHES {
        for l in ["entry", "region"] {
            let name = if cache == DEFAULT_CACHE { l.to_string() } else { format!("{l}, cache {cache}") };
            let layout = format!("\"{l}\"");
            let c = cache.to_string();
            v.push(ld(&layout_id(l, cache), &[("layout", &layout), ("region_cache", &c)]).named(&name));
        }
    }
    v
}

/// Hint hit rate: followed hints that were right.
fn hit_rate(r: &RunReport) -> f64 {
    stat(r, "engine_hint_hit_rate")
}

/// Metadata amplification of the aged phase over the ideal bytes per
/// written page: (read, write), all metadata over 40 B (entry + reverse
/// map, §3.3) or the LMT alone over its 32 B entry.
fn aged_amplification(o: &Outcome, variant: &str, lmt_only: bool) -> Option<(f64, f64)> {
    let (a, b) = (o.report("aging-2", variant)?, o.report("aging-3", variant)?);
    let pages = stat(b, "engine_pages") - stat(a, "engine_pages");
    let bytes = |r: &RunReport, what: &str| {
        let all = stat(r, &format!("engine_meta_region_{what}"));
        let rmap = if lmt_only { stat(r, &format!("engine_meta_rmap_{what}")) } else { 0.0 };
        (all - rmap) * 4096.0
    };
    let ideal = if lmt_only { ENTRY_BYTES } else { IDEAL_BYTES } as f64;
    let amp = |what: &str| (bytes(b, what) - bytes(a, what)) / pages / ideal;
    (pages > 0.0).then(|| (amp("reads"), amp("programs")))
}

/// Fresh amplification (phase 1 alone), read and write.
fn fresh_amplification(o: &Outcome, variant: &str) -> Option<(f64, f64)> {
    let r = o.report("aging-1", variant)?;
    let pages = stat(r, "engine_pages");
    let amp = |what: &str| stat(r, &format!("engine_meta_region_{what}")) * 4096.0 / pages / IDEAL_BYTES as f64;
    (pages > 0.0).then(|| (amp("reads"), amp("programs")))
}

fn times(x: Option<(f64, f64)>) -> String {
    x.map_or("n/a".into(), |(r, w)| format!("{r:.2}× / {w:.2}×"))
}

/// Duplicate-run buckets (engine stat suffix, heading).
const RUNS: [(&str, &str); 5] =
    [("1", "1"), ("2_4", "2-4"), ("5_10", "5-10"), ("11_100", "11-100"), ("over_100", ">100")];

fn hints_table(o: &Outcome, _: &mut Plotter) -> Result<String, super::ExperimentError> {
    let mut md = String::from(
        "\n## Hint hit rate (§4.3.2)\n\nFollowed hints that were right (the paper's \"hit rate of CBP\"), with trust \
         degrees (default) and without (`engine.light-dedup.trust = false`); \"all predictions\" counts every hint, \
         followed or not.\n\n| workload | trust degrees: followed / hit rate | no trust degrees: followed / hit rate | \
         all predictions right |\n|---|---|---|---|\n",
    );
    for w in &o.workloads {
        let cell = |v: &str| {
            o.report(w, v).map_or("n/a".into(), |r| {
                format!("{:.0} / {:.1}%", stat(r, "engine_hint_followed"), 100.0 * stat(r, "engine_hint_hit_rate"))
            })
        };
        let all = o
            .report(w, "ld")
            .map(|r| 100.0 * stat(r, "engine_hint_hits") / stat(r, "engine_hint_predictions").max(1.0));
        let _ = writeln!(md, "| {} | {} | {} | {}% |", o.name(w), cell("ld"), cell("ld-no-trust"), num(all, 1));
    }
    Ok(md)
}

fn runs_table(o: &Outcome, _: &mut Plotter) -> Result<String, super::ExperimentError> {
    let mut md = String::from(
        "\n## Duplicate pages by run length (§3.2, Fig. 8)\n\nDuplicate pages found by the engine, by the length of \
         their run of consecutive duplicate pages (a run continues across writes while LPNs are contiguous).\n\n\
         | workload | dup pages |",
    );
    for (_, h) in RUNS {
        let _ = write!(md, " {h} |");
    }
    md.push_str(" in runs > 10 |\n|---|---:|");
    md.push_str(&"---:|".repeat(RUNS.len() + 1));
    md.push('\n');
    for w in &o.workloads {
        let Some(r) = o.report(w, "ld") else { continue };
        let v: Vec<f64> = RUNS.iter().map(|(k, _)| stat(r, &format!("engine_dup_run_pages_{k}"))).collect();
        let total: f64 = v.iter().sum();
        let _ = write!(md, "| {} | {total:.0} |", o.name(w));
        for x in v {
            let _ = write!(md, " {:.1}% |", 100.0 * x / total.max(1.0));
        }
        let _ = writeln!(md, " {:.1}% |", 100.0 * stat(r, "engine_dup_run_frac_over_10"));
    }
    Ok(md)
}

fn amplification_table(o: &Outcome, _: &mut Plotter) -> Result<String, super::ExperimentError> {
    let mut md = String::from(
        "\n## LMT metadata amplification (§5.5, Table 4)\n\nMetadata pages read / programmed × 4 KiB per written \
         page, over the ideal 40 B, on the aging workload (`builtin:light-dedup-aging-N`). Fresh: phase 1. Aged: \
         phase 3 alone (the run of phases 1-3 minus the run of phases 1-2). \"LMT only\" leaves out the reverse \
         map (`engine_meta_rmap_*`) and is over the entry's 32 B. Fresh reads are 0 by construction on flash: a \
         new region page is written in the controller's cache and never read back. The paper's fresh 2.91× reads \
         are Optane's own: most likely the read-modify-write of the 256 B XPLines that 32 B and 8 B writes touch, \
         and the DIMM's prefetching (§3.3 names the latter); a persistent-memory model would show them.\n\n| layout | cache | fresh read / write | aged read / write | aged, LMT only: read / \
         write |\n|---|---:|---|---|---|\n",
    );
    for cache in AGING_CACHES {
        for l in ["entry", "region"] {
            let v = &layout_id(l, cache);
            let _ = writeln!(
                md,
                "| {l} | {cache} | {} | {} | {} |",
                times(fresh_amplification(o, v)),
                times(aged_amplification(o, v, false)),
                times(aged_amplification(o, v, true))
            );
        }
    }
    md.push_str(
        "\nThe cache (pages of 4 KiB) stands for Optane's on-DIMM buffers and decides the result. 8 pages \
         (32 KiB) is the paper's testbed's buffer capacity (two DIMMs, §5.1, about 16 KiB of XPBuffer each, as \
         Yang et al. measured at FAST'20): as many entries as 32 KiB of XPLines, but in 4 KiB units (128 \
         neighbouring entries a page against 8 a 256 B line), so it keeps more neighbours and fewer scattered \
         entries than the paper's buffer: no size is that buffer, hence the sweep. Where all metadata amplifies \
         but the LMT alone does not, the reverse map (8 B per block, indexed by block, §4.2) is what the aged \
         file system scatters. 64 (default) is \
         an SSD controller's DRAM; 1,024 holds the whole LMT.\n",
    );
    Ok(md)
}

fn latency_table(o: &Outcome, _: &mut Plotter) -> Result<String, super::ExperimentError> {
    let mut md =
        String::from("\n## Write latency: verify reads vs hash time (§5.2-5.3), mean / p99 µs\n\n| workload |");
    let vs = ["caftl", "caftl-x4", "caftl-sampled", "dram-verify", "ld", "ld-no-spec", "ld-cached"];
    for v in vs {
        let _ = write!(md, " {} |", o.variant_name(v));
    }
    md.push_str(" light-dedup hashed / skipped pages |\n|---|");
    md.push_str(&"---|".repeat(vs.len() + 1));
    md.push('\n');
    for w in &o.workloads {
        let _ = write!(md, "| {} |", o.name(w));
        for v in vs {
            let cell = o
                .report(w, v)
                .map_or("n/a".into(), |r| format!("{:.1} / {:.1}", r.summary.write.mean_us, r.summary.write.p99_us));
            let _ = write!(md, " {cell} |");
        }
        let hs = o.report(w, "ld").map_or("n/a".into(), |r| {
            format!("{:.0} / {:.0}", stat(r, "engine_hashed_pages"), stat(r, "engine_skipped_hash_pages"))
        });
        let _ = writeln!(md, " {hs} |");
    }
    Ok(md)
}

/// The declaration at replica `scale`, for the base device `base`.
pub fn declaration(base: &Config, scale: f64) -> Declaration {
    let mut workloads: Vec<Workload> =
        replica::at_own_load(&REPLICAS, scale, base).into_iter().map(|d| Workload::new(d, dedup_variants())).collect();
    let builtin = |name: &str| {
        let mut def = WorkloadDef::new(WorkloadSpec::Builtin(name.into()));
        def.label = name.trim_start_matches("light-dedup-").to_string();
        def
    };
    let mut copy = dedup_variants();
    copy.extend(prefetch_variants().into_iter().filter(|v| v.label != "ld"));
    workloads.push(Workload::new(builtin("light-dedup-copy"), copy));
    // Workload families (issue 24 item 5): the fitted real profiles and the
    // run-length sweep, as shown workloads of every table.
    let size = families::Size::for_scale(scale);
    let fitted = families::fitted(size).expect("the built-in profiles load (tested in tests/all/profiles.rs)");
    let sweep_profile = crate::profile::Profile::load_named(std::path::Path::new(SWEEP_PROFILE), &[])
        .expect("the built-in profiles load (tested in tests/all/profiles.rs)");
    let sweep = families::sweep(SWEEP_PROFILE, size.scale_of(&sweep_profile), SWEEP_KEY, &SWEEP_RUNS);
    for m in fitted.into_iter().chain(sweep) {
        workloads.push(Workload::new(m.def, family_variants()));
    }
    let streams_profile = crate::profile::Profile::load_named(std::path::Path::new(STREAMS_PROFILE), &[])
        .expect("the built-in profiles load (tested in tests/all/profiles.rs)");
    let streams_scale = size.scale_of(&streams_profile);
    for n in STREAMS {
        let r = super::workload::ProfileRef {
            path: STREAMS_PROFILE.into(),
            scale: streams_scale,
            sets: Vec::new(),
            streams: Some(n),
        };
        let mut def = WorkloadDef::new(WorkloadSpec::Profile(r));
        def.label = streams_label(n);
        workloads.push(Workload { shown: false, ..Workload::new(def, streams_variants(n)) });
    }
    for p in 1..=3 {
        let w = Workload::new(builtin(&format!("light-dedup-aging-{p}")), layout_variants());
        workloads.push(Workload { shown: false, ..w });
    }
    let hit = Metric { name: "hint_hit_rate", label: "hint hit rate", get: hit_rate };
    let claims = vec![
        Claim {
            section: "§4.3.2",
            paper: "WebVMs: trust degrees raise the hint hit rate from 60.0% to 98.6%".into(),
            measure: Box::new(move |o: &Outcome| {
                let per: Vec<String> = o
                    .workloads
                    .iter()
                    .map(|w| {
                        let pct = |v| o.value(w, v, hit).map_or("n/a".into(), |x| format!("{:.1}%", 100.0 * x));
                        format!("{}: {} → {}", o.name(w), pct("ld-no-trust"), pct("ld"))
                    })
                    .collect();
                format!("without → with trust: {}", per.join(", "))
            }),
        },
        Claim {
            section: "§3.2, Fig. 8",
            paper: "WebVMs: 30% of duplicate blocks are in runs longer than 10".into(),
            measure: Box::new(|o: &Outcome| {
                let per: Vec<String> = o
                    .workloads
                    .iter()
                    .filter_map(|w| {
                        o.report(w, "ld")
                            .map(|r| format!("{}: {:.1}%", o.name(w), 100.0 * stat(r, "engine_dup_run_frac_over_10")))
                    })
                    .collect();
                per.join(", ")
            }),
        },
        Claim {
            section: "§5.5, Table 4",
            paper: "aged: entry-based 19.35× / 9.86×, region-based 6.10× / 3.43× metadata amplification (read / write)"
                .into(),
            measure: Box::new(|o: &Outcome| {
                format!(
                    "aged, all metadata: entry {}, region {}; LMT alone: entry {}, region {}",
                    times(aged_amplification(o, "ld-entry", false)),
                    times(aged_amplification(o, "ld-region", false)),
                    times(aged_amplification(o, "ld-entry", true)),
                    times(aged_amplification(o, "ld-region", true))
                )
            }),
        },
        Claim {
            section: "§5.2-5.3",
            paper: "a fast non-cryptographic hash plus verification reads beats a cryptographic hash".into(),
            measure: Box::new(|o: &Outcome| {
                let per: Vec<String> = o
                    .workloads
                    .iter()
                    .map(|w| {
                        let r = |v| o.ratio(w, v, "caftl", WRITE_MEAN).map_or("n/a".into(), |x| format!("{x:.2}×"));
                        format!(
                            "{}: {} ({} all metadata cached; dram-verify {})",
                            o.name(w),
                            r("ld"),
                            r("ld-cached"),
                            r("dram-verify")
                        )
                    })
                    .collect();
                format!("mean write latency, light-dedup / caftl: {}", per.join(", "))
            }),
        },
    ];
    let notes = vec![
        "The paper replays the FIU traces (md5 per block) on an Optane-based NOVA; dedupsim uses FAD's FIU rows as Table II-matched replicas at each trace's own load, whose contents are drawn per page from a Zipf model. Consecutive duplicates in a replica are rarely copies of consecutively *stored* blocks, which is what a hint predicts, so hints are followed rarely and duplicate runs are short; the copy workload shows the other extreme (every hint right).".into(),
        "Amplification magnitudes cannot match: a metadata miss costs a 4 KiB flash page here and a 256 B XPLine on Optane, and a fresh sequential table is nearly free on flash. The ordering (region-based below entry-based when aged, equal when fresh) is what carries over. docs/engines.md has the model.".into(),
    ];
    let mut report = vec![Block::Header, Block::Claims(claims)];
    report.push(Block::Custom(Box::new(hints_table)));
    report.push(Block::Custom(Box::new(runs_table)));
    report.push(Block::Custom(Box::new(amplification_table)));
    report.push(Block::Custom(Box::new(latency_table)));
    report.push(Block::Custom(Box::new(sweep_table)));
    report.push(Block::Custom(Box::new(streams_table)));
    report.push(Block::Custom(Box::new(prefetch_table)));
    let (blocks, ssd_read) = (base.ftl_params(), base.engine_context().read_time);
    report.push(Block::Custom(Box::new(move |_: &Outcome, _: &mut Plotter| {
        super::lightdedup_pm::section(scale, &blocks, ssd_read)
    })));
    report.push(Block::Text("\n".into()));
    report.push(Block::Bars(Bars {
        number: "§5.2",
        stem: "write_latency",
        plot_title: "Mean write latency",
        title: "Mean write latency normalized to caftl".into(),
        y_label: "write latency (normalized to caftl)",
        metric: WRITE_MEAN,
        subjects: vec!["ld", "ld-no-spec", "ld-cached"],
        reference: "caftl",
        unit: "µs",
        digits: 1,
        description: None,
        claims: Vec::new(),
    }));
    report.push(Block::Notes(notes));
    let mut decl = Declaration::new(
        "light-dedup",
        "Light-Dedup (Qiu et al., USENIX ATC'23): hints, metadata layout and verification",
        "J. Qiu et al., \"Light-Dedup: A Light-weight Inline Deduplication Framework for Non-Volatile Memory File Systems\", USENIX ATC'23, §3.2, §4.3-4.4, §5.2-5.5",
        workloads,
        report,
    );
    decl.family = Some((super::declare::FamilyVariants::Fixed(family_variants()), true));
    decl
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy writes the same contents twice; aging phase 2 punches half
    /// of phase 1 and phase 3 adds half as many new pages.
    #[test]
    fn the_built_in_workloads_are_the_papers() {
        let c = generate("light-dedup-copy").unwrap();
        let pages: u32 = c.requests.iter().map(|r| r.pages).sum();
        assert_eq!(pages, 2 * COPY_PAGES);
        assert_eq!(c.content_space, COPY_PAGES);
        assert!(c.has_content());
        let a = generate("light-dedup-aging-3").unwrap();
        let trims = a.requests.iter().filter(|r| r.op == Op::Trim).count() as u32;
        assert_eq!(trims, AGING_PAGES / 2);
        let written: u32 = a.requests.iter().filter(|r| r.op == Op::Write).map(|r| r.pages).sum();
        assert_eq!(written, AGING_PAGES + 1 + AGING_PAGES / 2);
        let distinct: std::collections::HashSet<u32> = a.contents.iter().map(|c| c.0).collect();
        assert_eq!(distinct.len() as u32, written, "every aging page is unique");
        assert!(generate("light-dedup-aging-4").is_none());
        assert!(generate("light-dedup-nope").is_none());
    }

    /// Every variant is a valid, distinct cell.
    #[test]
    fn the_declaration_is_valid() {
        let cfg = Config::fad_table1();
        let decl = declaration(&cfg, 0.05);
        let plan = decl.plan(&cfg).unwrap();
        assert_eq!(plan.cells.len(), decl.variants().count());
        // Three replicas, the copy, seven fitted profiles, five sweep points.
        assert_eq!(decl.workloads.iter().filter(|w| w.shown).count(), 4 + 7 + 5);
    }

    /// The run-length sweep (issue 24 item 5): each row is its cells'
    /// engine statistics.
    #[test]
    fn the_sweep_rows_are_the_cells_numbers() {
        let cfg = Config::fad_table1();
        let mut decl = declaration(&cfg, 0.05);
        decl.workloads.retain(|w| w.def.label.starts_with("sweep:"));
        assert_eq!(decl.workloads.len(), SWEEP_RUNS.len());
        decl.workloads.truncate(2);
        let dir = tempfile::tempdir().unwrap();
        let o = super::super::declare::run(&decl, &cfg, dir.path(), 2, &super::super::Silent, "t", false).unwrap();
        let md = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
        for x in &SWEEP_RUNS[..2] {
            let w = format!("sweep:{SWEEP_KEY}={x}");
            let (ld, nt) = (o.report(&w, "ld").unwrap(), o.report(&w, "ld-no-trust").unwrap());
            assert!(stat(nt, "engine_hint_followed") > 0.0, "{w}: the image store's runs give hints");
            let row = format!(
                "| {x} | {:.1}% | {:.0} / {:.1}% | {:.0} / {:.1}% |",
                100.0 * stat(ld, "engine_dup_run_frac_over_10"),
                stat(ld, "engine_hint_followed"),
                100.0 * hit_rate(ld),
                stat(nt, "engine_hint_followed"),
                100.0 * hit_rate(nt)
            );
            assert!(md.contains(&row), "{row} in\n{md}");
        }
    }

    /// The streams sweep (issue 27 item 12): four interleaved writers of
    /// the fitted Plan 9 blocks each keep their hint chains with per-stream
    /// state and break each other's in one device-wide stream (more than
    /// 10 points more of the predictions right, more hints followed); the
    /// table row is the cells' numbers.
    #[test]
    fn the_streams_rows_are_the_cells_numbers() {
        let cfg = Config::fad_table1();
        let mut decl = declaration(&cfg, 0.05);
        decl.workloads.retain(|w| w.def.label == streams_label(4));
        assert_eq!(decl.workloads.len(), 1);
        let dir = tempfile::tempdir().unwrap();
        let o = super::super::declare::run(&decl, &cfg, dir.path(), 2, &super::super::Silent, "t", false).unwrap();
        let md = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
        let w = streams_label(4);
        let (per, one) = (o.report(&w, "ld").unwrap(), o.report(&w, "ld-one-stream").unwrap());
        assert_eq!(stat(per, "engine_streams"), 4.0);
        assert_eq!(stat(one, "engine_streams"), 1.0);
        let right = |r: &RunReport| stat(r, "engine_hint_hits") / stat(r, "engine_hint_predictions").max(1.0);
        assert!(
            right(per) > right(one) + 0.1 && stat(per, "engine_hint_followed") > stat(one, "engine_hint_followed"),
            "per stream {:.3} vs one stream {:.3} of predictions right",
            right(per),
            right(one)
        );
        let cell = |r: &RunReport| {
            format!(
                "{:.0} / {:.1}% | {:.1}%",
                stat(r, "engine_hint_followed"),
                100.0 * hit_rate(r),
                100.0 * stat(r, "engine_hint_hits") / stat(r, "engine_hint_predictions").max(1.0)
            )
        };
        let row = format!("| 4 | {} | {} |", cell(per), cell(one));
        assert!(md.contains(&row), "{row} in\n{md}");
    }

    /// The copy workload through the generic runner, counted by hand as
    /// in `engine_tests::light_dedup_copy_hints_by_hand` (which also has a
    /// copy with a wrong hint): copy pages 1..n-1 each predict right (n - 1
    /// predictions), the stream trust reaches 7 after copy page 7, so
    /// pages 8..n-1 follow (n - 8); every duplicate is in one long run,
    /// and skipping the 32 µs hash of 64 pages per request makes writes
    /// faster than CAFTL's; the report holds each table.
    #[test]
    fn the_copy_runs_end_to_end() {
        let cfg = Config::fad_table1();
        let mut decl = declaration(&cfg, 0.05);
        decl.workloads.retain(|w| w.def.label == "copy");
        let dir = tempfile::tempdir().unwrap();
        let o = super::super::declare::run(&decl, &cfg, dir.path(), 2, &super::super::Silent, "t", false).unwrap();
        let ld = o.report("copy", "ld").unwrap();
        let n = COPY_PAGES as f64;
        assert_eq!(stat(ld, "engine_hint_predictions"), n - 1.0);
        assert_eq!(stat(ld, "engine_hint_hits"), n - 1.0);
        assert_eq!(stat(ld, "engine_hint_followed"), n - 8.0);
        assert_eq!(stat(ld, "engine_hint_hit_rate"), 1.0);
        assert_eq!(stat(ld, "engine_dup_run_frac_over_10"), 1.0);
        assert_eq!(stat(ld, "engine_dup_run_pages_over_100"), COPY_PAGES as f64);
        assert!(o.ratio("copy", "ld", "caftl", WRITE_MEAN).unwrap() < 1.0);
        let md = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
        for heading in ["## Hint hit rate", "## Duplicate pages by run length", "## LMT metadata", "## Write latency"] {
            assert!(md.contains(heading), "{heading}");
        }
        assert!(md.contains("| copy | 65536 | 0.0% | 0.0% | 0.0% | 0.0% | 100.0% | 100.0% |"), "{md}");
    }
}
