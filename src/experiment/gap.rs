//! The gap to the paper, decomposed (issue 9 item 9), and the load
//! sensitivity of the replicas (item 2).
//!
//! Each *variant* is the reproduction as it was before issue 9 (the
//! *baseline*: one request per file, Table II's dedup rate on the trace,
//! 40% load, one pipelined 32 µs hash engine, no GC, dedupsim's own dedup
//! model) with exactly one factor changed, run for Native, Deduplication
//! and FAD on every Table II replica at `min(scale, QUICK_SCALE)`. The
//! report tabulates, per variant, the two headline effects (Deduplication
//! vs Native read latency, the paper's +47%; FAD vs Deduplication read
//! latency, −34.1%) as means over the workloads, and their change from the
//! baseline: the share of the distance to the paper that factor accounts
//! for. Load points 5%, 10% and 20% (40% is the baseline) give the load
//! sensitivity. Workload factors (files, load, dedup target) make a variant
//! workload; device factors (hash model, aged start, the authors' model)
//! are config overrides of the cell, with the baseline's arrivals, so
//! only the factor changes.

use super::declare::{self, Workload};
use super::replica::{self, DedupTarget, Load, TableRow};
use super::workload::{WorkloadDef, WorkloadSpec};
use super::CellRecord;
use crate::config::Config;
use crate::workload::FileRule;
use std::collections::HashMap;
use std::fmt::Write as _;

/// The policies each variant runs.
pub const POLICIES: [&str; 3] = ["native", "dedup", "fad"];

/// The baseline's load (the reproduction's default before issue 9).
pub const BASELINE_LOAD: f64 = 0.4;

/// The load sensitivity's points besides the baseline's 40%.
pub const LOAD_POINTS: [f64; 3] = [0.05, 0.1, 0.2];

/// One factor changed from the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// Short key, part of the cells' workload label (`mail+KEY`).
    pub key: String,
    /// What changes, for the report.
    pub what: String,
    /// Issue and item it measures (`9.1` = issue 9 item 1).
    pub item: &'static str,
    pub files: FileRule,
    pub dedup_target: DedupTarget,
    pub load: Load,
    /// Config overrides of the cells.
    pub set: Vec<(String, String)>,
}

impl Variant {
    fn baseline() -> Variant {
        Variant {
            key: "baseline".into(),
            what: "before issue 9: one request per file, dedup rate on the trace, 40% load, one pipelined 32 us hash engine, fresh device".into(),
            item: "-",
            files: FileRule::Request,
            dedup_target: DedupTarget::Trace,
            load: Load::Utilization(BASELINE_LOAD),
            set: Vec::new(),
        }
    }
    fn with(key: &str, what: &str, item: &'static str, f: impl FnOnce(&mut Variant)) -> Variant {
        let mut v = Variant::baseline();
        v.key = key.into();
        v.what = what.into();
        v.item = item;
        f(&mut v);
        v
    }
}

/// Every variant, baseline first, then one per factor, then the load
/// points, then everything the reproduction now does by default together.
pub fn variants() -> Vec<Variant> {
    let set = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    let mut v = vec![
        Variant::baseline(),
        Variant::with("files", "files merged (FAD-SSDsim's preprocessing)", "9.1", |v| v.files = FileRule::Merged),
        Variant::with("load-known", "each trace's own average load", "9.2", |v| v.load = Load::Known),
        Variant::with("dedup-device", "Table II's dedup rate achieved on the device", "9.3", |v| {
            v.dedup_target = DedupTarget::Device
        }),
        Variant::with("hash-free", "hashing costs nothing (dedup.fingerprint = 0)", "9.4", |v| {
            v.set = set("dedup.fingerprint", "\"0us\"")
        }),
        Variant::with(
            "hash-before-flash",
            "a file is hashed whole before its programs (dedup.hash_overlap)",
            "9.4",
            |v| v.set = set("dedup.hash_overlap", "\"before-flash\""),
        ),
        Variant::with("gc-aged", "aged device, GC runs (precondition.aged = 0.968)", "9.5", |v| {
            v.set = set("precondition.aged", "0.968")
        }),
        Variant::with(
            "precondition-policy",
            "preconditioned data written through the dedup engine and the policy, in first-read order \
             (precondition.placement = policy; the replicas show no content for it: drawn, zipf 50%)",
            "24.4",
            |v| v.set = set("precondition.placement", "\"policy\""),
        ),
        Variant::with("authors-model", "the authors' FAD-SSDsim dedup model (labelled experiment)", "9.7", |v| {
            v.set = set("experiment.fad_ssdsim_model", "true")
        }),
    ];
    for u in LOAD_POINTS {
        v.push(Variant::with(&format!("load-{u}"), &format!("{:.0}% load", u * 100.0), "9.2", |v| {
            v.load = Load::Utilization(u)
        }));
    }
    v.push(Variant::with(
        "defaults",
        "the reproduction's defaults now: files merged, own load, dedup rate on the device",
        "9.1-3",
        |v| {
            v.files = FileRule::Merged;
            v.load = Load::Known;
            v.dedup_target = DedupTarget::Device;
        },
    ));
    v
}

/// The label of a variant's cells.
pub fn label(row: &TableRow, v: &Variant) -> String {
    format!("{}+{}", row.key, v.key)
}

/// The label of the workload a variant's cells run on: variants that
/// differ only in config overrides share the first such variant's workload
/// (the plan adds a workload once per identity).
fn workload_label(row: &TableRow, v: &Variant, all: &[Variant]) -> String {
    let first =
        all.iter().find(|o| o.files == v.files && o.dedup_target == v.dedup_target && o.load == v.load).unwrap_or(v);
    label(row, first)
}

/// The scale the variants run at.
pub fn scale(main_scale: f64) -> f64 {
    main_scale.min(replica::QUICK_SCALE)
}

/// Every variant's workload for `row`, hidden from the report's tables,
/// running the gap policies with the variant's overrides.
pub fn workloads(base: &Config, row: &'static TableRow, main_scale: f64) -> Vec<Workload> {
    let device = replica::ReplicaDevice::of(base);
    variants()
        .into_iter()
        .map(|v| {
            let mut def =
                WorkloadDef::new(WorkloadSpec::Replica(replica::ReplicaRef { row, scale: scale(main_scale) }));
            def.label = label(row, &v);
            def.device = device;
            def.utilization = v.load.for_row(row, &device);
            def.files = v.files;
            def.dedup_target = v.dedup_target;
            let set: Vec<(&str, String)> = v.set.iter().map(|(k, x)| (k.as_str(), x.clone())).collect();
            let cells = POLICIES.iter().map(|p| declare::Variant::new(*p, p, &set)).collect();
            Workload { shown: false, ..Workload::new(def, cells) }
        })
        .collect()
}

/// Per variant: the mean over workloads of (Dedup vs Native, FAD vs Dedup)
/// read-latency change, and the number of workloads measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Effects {
    pub dedup_vs_native: f64,
    pub fad_vs_dedup: f64,
    pub workloads: usize,
}

/// Computes [`Effects`] per variant key from the records.
pub fn effects(records: &[CellRecord], rows: &[&'static TableRow]) -> Vec<(Variant, Option<Effects>)> {
    let mut read: HashMap<(&str, &str, String), f64> = HashMap::new();
    for r in records {
        read.insert((r.workload.as_str(), r.policy.as_str(), r.params_string()), r.report.summary.read.mean_us);
    }
    let all = variants();
    all.iter()
        .map(|v| {
            let v = v.clone();
            let params = super::params_string(&v.set);
            let (mut a, mut b, mut n) = (0.0, 0.0, 0usize);
            for row in rows {
                let l = workload_label(row, &v, &all);
                // A variant identical to the main run's workload (e.g.
                // `defaults` under --quick) ran as the main workload's cells.
                let get = |p: &str| {
                    read.get(&(l.as_str(), p, params.clone()))
                        .or_else(|| read.get(&(row.key, p, params.clone())).filter(|_| v.key == "defaults"))
                        .copied()
                        .filter(|x| *x > 0.0)
                };
                if let (Some(nat), Some(ded), Some(fad)) = (get("native"), get("dedup"), get("fad")) {
                    a += ded / nat - 1.0;
                    b += fad / ded - 1.0;
                    n += 1;
                }
            }
            let e =
                (n > 0).then(|| Effects { dedup_vs_native: a / n as f64, fad_vs_dedup: b / n as f64, workloads: n });
            (v, e)
        })
        .collect()
}

/// The report section (markdown) for [`effects`]; `paper` = (Dedup vs
/// Native, FAD vs Dedup) in percent.
pub fn section(effects: &[(Variant, Option<Effects>)], scale: f64, paper: (f64, f64)) -> String {
    let mut o = String::new();
    let pct = |x: f64| format!("{:+.1}%", x * 100.0);
    let pp = |x: f64| format!("{:+.1} pp", x * 100.0);
    let base = effects.iter().find(|(v, _)| v.key == "baseline").and_then(|(_, e)| e.clone());
    let _ = writeln!(
        o,
        "Each row is the reproduction before issue 9 (the *baseline*) with one factor changed, run for Native, \
         Deduplication and FAD on every replica at scale {scale} (`src/experiment/gap.rs`). Device factors (hash, GC, \
         the authors' model) keep the baseline's arrivals. Effects are means over the workloads of the per-workload \
         read-latency change; \"Δ\" is the change from the baseline in percentage points, i.e. how far that factor \
         alone moves our figure towards (or away from) the paper's: Deduplication vs Native {:+.1}%, FAD vs \
         Deduplication {:+.1}%. Factors do not add up: they interact. The authors' model's means are dominated by \
         the workloads on which chip 0 saturates (docs/reproduce.md).\n",
        paper.0, paper.1
    );
    let _ = writeln!(o, "| Variant | Issue item | What changes | Dedup vs Native | Δ | FAD vs Dedup | Δ | Workloads |");
    let _ = writeln!(o, "|---|---|---|---:|---:|---:|---:|---:|");
    for (v, e) in effects {
        match (e, &base) {
            (Some(e), Some(b)) => {
                let _ = writeln!(
                    o,
                    "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
                    v.key,
                    v.item,
                    v.what,
                    pct(e.dedup_vs_native),
                    pp(e.dedup_vs_native - b.dedup_vs_native),
                    pct(e.fad_vs_dedup),
                    pp(e.fad_vs_dedup - b.fad_vs_dedup),
                    e.workloads
                );
            }
            _ => {
                let _ = writeln!(o, "| `{}` | {} | {} | n/a | | n/a | | 0 |", v.key, v.item, v.what);
            }
        }
    }
    let _ =
        writeln!(o, "| paper | | FAD §II-D (Fig. 3), §IV-B (Fig. 8) | {:+.1}% | | {:+.1}% | | 9 |\n", paper.0, paper.1);
    o
}

/// Bar data for the decomposition plot: categories (variant keys) and two
/// series (Dedup / Native, FAD / Dedup mean read latency, as ratios drawn
/// from 1.0); the paper last. The authors' model is left out: its
/// Deduplication/Native ratio (tens) would flatten every other bar; the
/// table has it.
pub fn bars(effects: &[(Variant, Option<Effects>)], paper: (f64, f64)) -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let mut cats = Vec::new();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (v, e) in effects.iter().filter(|(v, _)| v.key != "authors-model") {
        if let Some(e) = e {
            cats.push(v.key.clone());
            a.push(1.0 + e.dedup_vs_native);
            b.push(1.0 + e.fad_vs_dedup);
        }
    }
    cats.push("paper".into());
    a.push(1.0 + paper.0 / 100.0);
    b.push(1.0 + paper.1 / 100.0);
    (cats, vec![("Dedup / Native read latency".into(), a), ("FAD / Dedup read latency".into(), b)])
}

/// Line data for the load sensitivity: (utilization, effect in percent)
/// for the baseline's 40% and [`LOAD_POINTS`].
pub fn load_lines(effects: &[(Variant, Option<Effects>)]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut pts: Vec<(f64, &Effects)> = Vec::new();
    for (v, e) in effects {
        let Some(e) = e else { continue };
        match (v.key.as_str(), v.load) {
            ("baseline", _) => pts.push((BASELINE_LOAD, e)),
            (k, Load::Utilization(u)) if k.starts_with("load-") => pts.push((u, e)),
            _ => {}
        }
    }
    pts.sort_by(|x, y| x.0.total_cmp(&y.0));
    vec![
        (
            "Dedup vs Native read latency (%)".into(),
            pts.iter().map(|(u, e)| (u * 100.0, e.dedup_vs_native * 100.0)).collect(),
        ),
        (
            "FAD vs Dedup read latency (%)".into(),
            pts.iter().map(|(u, e)| (u * 100.0, e.fad_vs_dedup * 100.0)).collect(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_changes_one_factor_of_the_baseline() {
        let b = Variant::baseline();
        let vs = variants();
        assert_eq!(vs[0], b);
        let mut keys: Vec<&str> = vs.iter().map(|v| v.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), vs.len(), "unique keys");
        for v in vs.iter().skip(1).filter(|v| v.key != "defaults") {
            let changed = [v.files != b.files, v.dedup_target != b.dedup_target, v.load != b.load, v.set != b.set];
            assert_eq!(changed.iter().filter(|c| **c).count(), 1, "{}", v.key);
        }
    }
}
