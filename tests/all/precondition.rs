//! Preconditioning with the trace's own contents (issue 24 item 4,
//! docs/preconditioning.md): a trace that hashes the data it reads (FIU)
//! says what its pages held before it began; under `precondition.placement
//! = "auto"` (the default) or `"policy"` that data is written through the
//! dedup engine and the policy, so duplicates among it share physical
//! pages, and later writes of the same content deduplicate against it.
//! Under `"round-robin"` (SSDsim's rule) every page gets its own copy of a
//! content the content model draws.

use dedupsim::config::{Config, PreconditionPlacement};
use dedupsim::content::ContentModel;
use dedupsim::runner;
use dedupsim::sim::{RunOptions, Simulation};
use dedupsim::trace::{LoadOptions, TraceFormat};
use dedupsim::units::Lpn;
use std::path::Path;

const A: &str = "0123456789abcdef0123456789abcdef";
const B: &str = "fedcba9876543210fedcba9876543210";

/// FIU records (one 4 KiB page each, pids apart so none merge): pages 0,
/// 1 and 3 are read holding content A, page 2 holding B, all before any
/// write; then page 10 is written with A and read (SSDsim's all-reads rule
/// preconditions it too, with a drawn content: the trace does not show
/// what it held before).
fn trace() -> String {
    let mut t = String::new();
    for (k, (lba, op, h)) in
        [(0, 'R', A), (8, 'R', A), (16, 'R', B), (24, 'R', A), (80, 'W', A), (0, 'R', A), (80, 'R', A)]
            .iter()
            .enumerate()
    {
        t.push_str(&format!("{} {} proc {lba} 8 {op} 6 0 {h}\n", 1_000_000 + k as u64 * 20_000_000, 100 + k));
    }
    t
}

fn prepared(placement: PreconditionPlacement) -> (Config, runner::Prepared) {
    let mut cfg = Config::preset("fad-table1").unwrap();
    cfg.precondition.placement = placement;
    let load = LoadOptions { format: Some(TraceFormat::Fiu), ..LoadOptions::default() };
    let loaded = dedupsim::trace::load_from_reader(trace().as_bytes(), Path::new("pre.blkparse"), &load).unwrap();
    let p = runner::prepare(loaded.workload, &ContentModel::default(), cfg.seed, &cfg.precondition).unwrap();
    (cfg, p)
}

/// The physical entries of logical pages 0..4 after a dedup run.
fn entries(cfg: &Config, p: &runner::Prepared) -> Vec<u32> {
    let policy = dedupsim::policy::build("dedup", cfg).unwrap();
    let sim = Simulation::new(cfg, &p.workload, policy, RunOptions::default()).unwrap();
    let (_, ftl) = sim.run_keep(&mut |_, _| {}).unwrap();
    (0..4).map(|l| ftl.lookup(Lpn(l)).expect("preconditioned")).collect()
}

#[test]
fn duplicates_read_before_written_share_pages_under_the_content_rule() {
    for placement in [PreconditionPlacement::Auto, PreconditionPlacement::Policy] {
        let (cfg, p) = prepared(placement);
        assert_eq!(p.workload.precondition_past_pages, 4, "{placement:?}");
        assert!(
            p.precondition.contains("policy") && p.precondition.contains("4 with the trace's content"),
            "{}",
            p.precondition
        );
        let e = entries(&cfg, &p);
        assert!(e[0] == e[1] && e[1] == e[3] && e[2] != e[0], "{placement:?}: {e:?}");
        let r = runner::run_one(&cfg, &p, "dedup", &RunOptions::default(), &mut |_, _| {}).unwrap();
        // Three contents preconditioned (A, B, page 10's drawn one); the
        // timed write of A finds A.
        assert_eq!(r.counters.programs.precondition, 3, "{placement:?}");
        assert_eq!(r.counters.programs.host_unique, 0, "{placement:?}");
        assert_eq!(r.precondition, p.precondition);
        // Native places the same data without deduplicating it.
        let n = runner::run_one(&cfg, &p, "native", &RunOptions::default(), &mut |_, _| {}).unwrap();
        assert_eq!((n.counters.programs.precondition, n.counters.programs.host_unique), (5, 1));
    }
}

#[test]
fn round_robin_keeps_ssdsims_rule() {
    let (cfg, p) = prepared(PreconditionPlacement::RoundRobin);
    assert_eq!(p.workload.precondition_past_pages, 0);
    assert!(p.precondition.starts_with("all-reads round-robin: 5 pages"), "{}", p.precondition);
    let e = entries(&cfg, &p);
    assert!(e.iter().enumerate().all(|(i, x)| !e[..i].contains(x)), "one copy per page: {e:?}");
    let r = runner::run_one(&cfg, &p, "dedup", &RunOptions::default(), &mut |_, _| {}).unwrap();
    // Drawn contents: the timed write of A finds nothing to share.
    assert_eq!((r.counters.programs.precondition, r.counters.programs.host_unique), (5, 1));
}

/// A content-free trace resolves `auto` to round-robin: the report says so.
#[test]
fn auto_is_round_robin_without_the_traces_contents() {
    let cfg = Config::preset("fad-table1").unwrap();
    let load = LoadOptions { format: Some(TraceFormat::Fiu), ignore_content: true, ..LoadOptions::default() };
    let loaded = dedupsim::trace::load_from_reader(trace().as_bytes(), Path::new("pre.blkparse"), &load).unwrap();
    let p = runner::prepare(loaded.workload, &ContentModel::default(), cfg.seed, &cfg.precondition).unwrap();
    assert!(
        p.precondition.starts_with("all-reads round-robin (auto: the trace shows no content"),
        "{}",
        p.precondition
    );
    let e = entries(&cfg, &p);
    assert!(e.iter().enumerate().all(|(i, x)| !e[..i].contains(x)), "{e:?}");
}

/// A streamed replay of such a trace gives the held report whatever the
/// placement (issue 26: its first pass keeps what the reads show of pages
/// not yet written): with `auto` the preconditioned pages take the
/// trace's contents, with round-robin they do not.
#[test]
fn a_trace_showing_past_contents_streams() {
    let dir = std::env::temp_dir().join(format!("dedupsim-precondition-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pre.blkparse");
    std::fs::write(&path, trace()).unwrap();
    let load = LoadOptions { format: Some(TraceFormat::Fiu), ..LoadOptions::default() };
    let model = ContentModel::default();
    let stream = |cfg: &Config| {
        runner::run_streamed(cfg, &path, &load, &model, "dedup", &RunOptions::default(), &mut |_| {}, &mut |_, _| {})
            .unwrap()
    };
    for (placement, past) in [(PreconditionPlacement::Auto, true), (PreconditionPlacement::RoundRobin, false)] {
        let (cfg, _) = prepared(placement);
        let streamed = stream(&cfg).expect("streams");
        let loaded = dedupsim::trace::load(&path, &load).unwrap();
        let p = runner::prepare(loaded.workload, &model, cfg.seed, &cfg.precondition).unwrap();
        let held = runner::run_one(&cfg, &p, "dedup", &RunOptions::default(), &mut |_, _| {}).unwrap();
        assert_eq!(serde_json::to_string(&held).unwrap(), serde_json::to_string(&streamed).unwrap(), "{placement:?}");
        assert_eq!(streamed.precondition.contains("with the trace's content"), past, "{}", streamed.precondition);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
