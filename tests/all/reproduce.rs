//! `dedupsim reproduce fad` and `dedupsim sweep` (issue #4): the quick
//! reproduction through the library API, the structure of every output file,
//! the relations that hold by construction, cache resume, and the sweep
//! emit-jobs / run-cell / collect round trip with histogram merging.

use dedupsim::config::Config;
use dedupsim::experiment::fad::{self, FadOptions, POLICIES, RHO_KEY};
use dedupsim::experiment::paper::FIG15_RHO;
use dedupsim::experiment::replica::{self, QUICK_SCALE, REPLICA_LABEL, TABLE_II};
use dedupsim::experiment::results::{self, ResultRow};
use dedupsim::experiment::sweep::{self, Sweep};
use dedupsim::experiment::{CellRecord, Silent, WorkloadSpec};
use dedupsim::metrics::LatencyHistogram;
use dedupsim::report::VERSION;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// One quick reproduction shared by the tests of this module (run once).
struct Quick {
    dir: tempfile::TempDir,
    outcome: fad::FadOutcome,
    cfg: Config,
}

fn quick() -> &'static Quick {
    static Q: OnceLock<Quick> = OnceLock::new();
    Q.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config::preset("fad-table1").unwrap();
        let opts = FadOptions {
            scale: QUICK_SCALE,
            command: "dedupsim reproduce fad --quick".into(),
            ..FadOptions::default()
        };
        let outcome = fad::run(&cfg, &opts, dir.path(), 2, &Silent).unwrap();
        Quick { dir, outcome, cfg }
    })
}

fn cells_per_workload() -> usize {
    POLICIES.len() + FIG15_RHO.len() - 1
}

mod quick_reproduction {
    use super::*;

    #[test]
    fn runs_every_cell_of_section_iv() {
        let q = quick();
        assert_eq!(q.outcome.choices.len(), 9);
        assert_eq!(q.outcome.exec.records.len(), 9 * cells_per_workload());
        for c in &q.outcome.choices {
            assert!(matches!(c.def.spec, WorkloadSpec::Replica(_)), "{} is a replica", c.row.name);
        }
        // Every workload ran every policy and every rho of Fig. 15.
        for row in TABLE_II.iter() {
            let recs: Vec<&CellRecord> = q.outcome.exec.records.iter().filter(|r| r.workload == row.key).collect();
            for p in POLICIES {
                assert!(recs.iter().any(|r| r.policy == p && r.params.is_empty()), "{} {p}", row.key);
            }
            for rho in FIG15_RHO {
                let ok = (rho - 0.30f64).abs() < 1e-9
                    || recs.iter().any(|r| r.policy == "fad" && r.param(RHO_KEY) == Some(&format!("{rho}")));
                assert!(ok, "{} rho {rho}", row.key);
            }
        }
    }

    #[test]
    fn results_csv_has_one_row_per_cell_with_identity_columns() {
        let q = quick();
        let mut rd = csv::Reader::from_path(q.dir.path().join("results.csv")).unwrap();
        let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header, results::csv_header());
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 9 * cells_per_workload());
        for r in &rows {
            assert_eq!(&r[col("version")], VERSION);
            assert_eq!(r[col("config_hash")].len(), 16);
            assert_eq!(&r[col("seed")], "42");
            assert_eq!(&r[col("workload_source")], REPLICA_LABEL);
            assert_eq!(&r[col("scale")], format!("{QUICK_SCALE}"));
            assert!(r[col("read_mean_us")].parse::<f64>().unwrap() > 0.0);
        }
    }

    #[test]
    fn results_json_rows_carry_every_metric() {
        let q = quick();
        let text = std::fs::read_to_string(q.dir.path().join("results.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let rows = v.as_array().unwrap();
        assert_eq!(rows.len(), 9 * cells_per_workload());
        for r in rows {
            for key in [
                "experiment",
                "workload",
                "workload_source",
                "policy",
                "params",
                "seeds",
                "dedupsim_version",
                "config_hash",
                "summary",
                "counters",
                "dof",
                "policy_stats",
                "chips",
                "wear",
                "memory",
            ] {
                assert!(r.get(key).is_some(), "missing {key}");
            }
            assert_eq!(r["workload_source"], REPLICA_LABEL);
            assert!(r["summary"]["read"]["p999_us"].as_f64().is_some());
        }
        let fad = rows.iter().find(|r| r["policy"] == "fad" && r["params"].as_object().unwrap().is_empty()).unwrap();
        for k in ["rdlt_bytes", "wstl_bytes_high_water"] {
            assert!(fad["policy_stats"][k].as_f64().is_some(), "{k}");
        }
    }

    #[test]
    fn cell_files_hold_full_histograms() {
        let q = quick();
        let cells = results::read_cells(q.dir.path()).unwrap();
        assert_eq!(cells.len(), 9 * cells_per_workload());
        for c in &cells {
            let r = &c.report;
            assert_eq!(r.histograms.read.count(), r.summary.read.count);
            assert_eq!(r.histograms.write.count(), r.summary.write.count);
            assert_eq!(r.dedupsim_version, VERSION);
            assert_eq!(c.key.len(), 16);
            assert_eq!(c.workload_source, REPLICA_LABEL);
        }
    }

    #[test]
    fn report_has_every_figure_the_papers_numbers_and_the_stamp() {
        let q = quick();
        let text = std::fs::read_to_string(&q.outcome.report_path).unwrap();
        for fig in [
            "Fig. 2", "Fig. 3", "Fig. 8", "Fig. 9", "Fig. 10", "Fig. 11", "Fig. 12", "Fig. 13", "Fig. 14", "Fig. 15",
            "Fig. 16",
        ] {
            assert!(text.contains(&format!("### {fig}:")), "{fig}");
        }
        for published in ["-34.1%", "-22.2%", "-15.8%", "+47.7%", "-93.4%", "-44.6%", "-41.3%", "+4.7%", "20.8"] {
            assert!(text.contains(published), "{published}");
        }
        assert!(text.contains("dedupsim reproduce fad --quick"));
        assert!(text.contains(VERSION));
        assert!(text.contains(&q.cfg.config_hash_hex()));
        assert!(text.contains("seed **42**"));
        assert!(text.contains(REPLICA_LABEL));
        for row in TABLE_II.iter() {
            assert!(text.contains(&format!("| {} |", row.name)), "{}", row.name);
        }
        assert!(text.contains("rdlt") || text.contains("RDLT"));
    }

    #[test]
    fn plots_exist_for_every_figure_in_both_formats() {
        let q = quick();
        let dir = q.dir.path().join("plots");
        let mut stems: Vec<String> = [
            "fig02_dof",
            "fig03_read_latency",
            "fig08_read_latency",
            "fig09_write_latency",
            "fig10_dof_variants",
            "fig11_read_latency_variants",
            "fig12_write_latency_variants",
            "fig13_p99_read",
            "fig14_p999_read",
            "fig15_speedup_vs_rho",
            "fig15_speedup_vs_rho_workloads",
            "fig16_write_volume",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        stems.extend(TABLE_II.iter().map(|r| format!("cdf_read_{}", r.key)));
        assert_eq!(q.outcome.plots.len(), 2 * stems.len());
        for s in &stems {
            let svg = std::fs::read_to_string(dir.join(format!("{s}.svg"))).unwrap();
            assert!(svg.contains("<svg"), "{s}.svg");
            assert!(svg.contains(VERSION), "{s}.svg names the version");
            let png = std::fs::read(dir.join(format!("{s}.png"))).unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{s}.png");
        }
    }

    #[test]
    fn timing_is_kept_out_of_the_results() {
        let q = quick();
        let t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(q.dir.path().join("timing.json")).unwrap()).unwrap();
        assert!(t["wall_secs"].as_f64().is_some());
        let csv = std::fs::read_to_string(q.dir.path().join("results.csv")).unwrap();
        assert!(!csv.contains("wall"));
    }
}

mod relations_by_construction {
    use super::*;

    fn get<'a>(recs: &'a [CellRecord], w: &str, p: &str) -> &'a CellRecord {
        recs.iter().find(|r| r.workload == w && r.policy == p && r.params.is_empty()).unwrap()
    }

    #[test]
    fn native_never_deduplicates() {
        for r in quick().outcome.exec.records.iter().filter(|r| r.policy == "native") {
            let c = &r.report.counters;
            assert_eq!(c.dedup_pages, 0, "{}", r.workload);
            assert_eq!(r.report.summary.dedup_rate_achieved, 0.0);
            assert_eq!(c.programs.host_rewrite, 0);
            assert_eq!(c.programs.host_unique, c.write_pages, "every written page is programmed");
        }
    }

    #[test]
    fn deduplicating_policies_deduplicate() {
        for r in quick().outcome.exec.records.iter().filter(|r| r.policy != "native") {
            assert!(r.report.summary.dedup_rate_achieved > 0.0, "{} {}", r.workload, r.policy);
        }
    }

    /// The paper's mechanism, on every workload of the quick reproduction:
    /// deduplication concentrates files on few chips (read DOF above
    /// Native's), FAD's placement undoes part of it (read DOF below
    /// Deduplication's, on average and on most workloads), and read latency
    /// follows on average.
    #[test]
    fn the_papers_mechanism_holds() {
        let recs = &quick().outcome.exec.records;
        let (mut fad_lower, mut n, mut lat_fad, mut lat_dedup) = (0, 0, 0.0, 0.0);
        for row in TABLE_II.iter() {
            let s = |p: &str| &get(recs, row.key, p).report.summary;
            let (native, dedup, fad) = (s("native"), s("dedup"), s("fad"));
            assert!(
                dedup.dof_read > native.dof_read,
                "{}: dedup DOF {} vs native {}",
                row.key,
                dedup.dof_read,
                native.dof_read
            );
            if fad.dof_read < dedup.dof_read {
                fad_lower += 1;
            }
            n += 1;
            lat_fad += fad.read.mean_us / dedup.read.mean_us;
            lat_dedup += dedup.read.mean_us / native.read.mean_us;
        }
        assert!(fad_lower * 3 >= n * 2, "FAD lowers read DOF on {fad_lower} of {n} workloads");
        assert!(lat_fad / (n as f64) < 1.0, "FAD vs Dedup mean read latency ratio {}", lat_fad / n as f64);
        assert!(lat_dedup / (n as f64) > 1.0, "Dedup vs Native mean read latency ratio {}", lat_dedup / n as f64);
    }

    #[test]
    fn dof_is_a_fraction() {
        for r in &quick().outcome.exec.records {
            let s = &r.report.summary;
            assert!((0.0..1.0).contains(&s.dof_read), "{} {} {}", r.workload, r.policy, s.dof_read);
            assert!((0.0..1.0).contains(&s.dof_write), "{} {} {}", r.workload, r.policy, s.dof_write);
        }
    }

    #[test]
    fn fad_write_volume_exceeds_dedup_by_at_most_rho_plus_gc() {
        let recs = &quick().outcome.exec.records;
        for row in TABLE_II.iter() {
            let dedup = get(recs, row.key, "dedup");
            for r in recs.iter().filter(|r| r.workload == row.key && r.policy == "fad") {
                let rho: f64 = r.param(RHO_KEY).map(|v| v.parse().unwrap()).unwrap_or(0.30);
                let written = r.report.counters.write_pages as f64;
                let extra = r.report.summary.write_volume_pages as f64 - dedup.report.summary.write_volume_pages as f64;
                // Rewrites are bounded by floor(rho * Num(X)) per file ...
                assert!(r.report.summary.rewrites as f64 <= rho * written, "{} rho {rho}", row.key);
                // ... and the volume by that plus what GC and reference drops
                // change in the unique programs (1% of the written pages).
                let slack = 0.01 * written + r.report.counters.programs.gc as f64;
                assert!(extra <= rho * written + slack, "{} rho {rho}: extra {extra} written {written}", row.key);
            }
        }
    }

    #[test]
    fn every_policy_replays_the_same_requests() {
        let recs = &quick().outcome.exec.records;
        for row in TABLE_II.iter() {
            let base = &get(recs, row.key, "native").report.counters;
            for r in recs.iter().filter(|r| r.workload == row.key) {
                let c = &r.report.counters;
                assert_eq!(
                    (c.reads, c.writes, c.read_pages, c.write_pages),
                    (base.reads, base.writes, base.read_pages, base.write_pages)
                );
            }
        }
    }

    #[test]
    fn replicas_match_table_ii() {
        let recs = &quick().outcome.exec.records;
        for row in TABLE_II.iter() {
            let s = &get(recs, row.key, "dedup").workload_summary;
            assert_eq!(s.requests, (row.total_ios_k * 1000.0 * QUICK_SCALE).round() as u64);
            let tol = if row.key == "web1" { 0.03 } else { 0.01 }; // web1 has 6,750 requests at this scale
            assert!((s.read_ratio - row.read_ratio).abs() < tol, "{} read ratio {}", row.key, s.read_ratio);
            assert!((s.avg_read_kib / row.avg_read_kb - 1.0).abs() < 0.04, "{} read {}", row.key, s.avg_read_kib);
            assert!((s.avg_request_kib / row.avg_req_kb - 1.0).abs() < 0.04, "{} req {}", row.key, s.avg_request_kib);
            // Matched on the device (the default): Deduplication achieves the
            // row's rate; the trace-level rate is at least as high.
            let achieved = get(recs, row.key, "dedup").report.summary.dedup_rate_achieved;
            assert!((achieved - row.dedup_rate).abs() < 0.01, "{} device dedup {achieved}", row.key);
            assert!(s.dedup_rate > row.dedup_rate - 0.01, "{} trace dedup {}", row.key, s.dedup_rate);
        }
    }
}

mod gap {
    use super::*;

    /// `--gap`: every variant runs for Native, Deduplication and FAD, and
    /// the report tabulates each with its change from the baseline.
    #[test]
    fn the_decomposition_runs_every_variant() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config::preset("fad-table1").unwrap();
        let opts =
            FadOptions { scale: 0.01, gap: true, only: vec!["mail".into()], plots: false, ..FadOptions::default() };
        let out = fad::run(&cfg, &opts, dir.path(), 2, &Silent).unwrap();
        let text = std::fs::read_to_string(&out.report_path).unwrap();
        assert!(text.contains("## The gap to the paper, decomposed"), "{text}");
        for v in dedupsim::experiment::gap::variants() {
            let line = text.lines().find(|l| l.starts_with(&format!("| `{}` |", v.key))).expect(&v.key);
            assert!(!line.contains("n/a"), "{line}");
        }
        // The authors' model ran with its switch, on the baseline's arrivals.
        let authors = out.exec.records.iter().find(|r| r.param("experiment.fad_ssdsim_model").is_some()).unwrap();
        assert_eq!(authors.workload, "mail+baseline");
    }
}

mod cache {
    use super::*;

    #[test]
    fn a_second_run_computes_nothing_and_writes_identical_results() {
        let q = quick();
        let before = std::fs::read(q.dir.path().join("results.csv")).unwrap();
        let before_json = std::fs::read(q.dir.path().join("results.json")).unwrap();
        // Same output directory: every cell is found on disk.
        let dir2 = tempfile::tempdir().unwrap();
        copy_dir(&q.dir.path().join("cells"), &dir2.path().join("cells"));
        let opts = FadOptions { scale: QUICK_SCALE, plots: false, ..FadOptions::default() };
        let again = fad::run(&q.cfg, &opts, dir2.path(), 2, &Silent).unwrap();
        assert_eq!(again.exec.computed, 0);
        assert_eq!(again.exec.cached, 9 * cells_per_workload());
        assert!(std::fs::read(dir2.path().join("results.csv")).unwrap() == before, "results.csv differs");
        assert!(std::fs::read(dir2.path().join("results.json")).unwrap() == before_json, "results.json differs");
    }

    #[test]
    fn changing_one_policy_parameter_recomputes_only_that_policy() {
        let q = quick();
        let dir2 = tempfile::tempdir().unwrap();
        copy_dir(&q.dir.path().join("cells"), &dir2.path().join("cells"));
        let cfg = Config::load(Some("fad-table1"), &["policy.har.utilization_threshold=0.4".to_string()]).unwrap();
        let opts = FadOptions {
            scale: QUICK_SCALE,
            plots: false,
            only: vec!["web1".into(), "mail".into()],
            ..FadOptions::default()
        };
        let again = fad::run(&cfg, &opts, dir2.path(), 2, &Silent).unwrap();
        assert_eq!(again.exec.computed, 2, "only the two HAR cells");
        assert_eq!(again.exec.cached, 2 * cells_per_workload() - 2);
    }

    #[test]
    fn interrupted_runs_resume() {
        let q = quick();
        let dir2 = tempfile::tempdir().unwrap();
        copy_dir(&q.dir.path().join("cells"), &dir2.path().join("cells"));
        // Lose three cells (as if killed before they finished) and corrupt one.
        let mut files: Vec<_> =
            std::fs::read_dir(dir2.path().join("cells")).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        let web1: Vec<_> = files.iter().filter(|p| p.to_string_lossy().contains("web1__")).collect();
        for p in &web1[..3] {
            std::fs::remove_file(p).unwrap();
        }
        std::fs::write(web1[3], "{ truncated").unwrap();
        let opts = FadOptions { scale: QUICK_SCALE, plots: false, only: vec!["web1".into()], ..FadOptions::default() };
        let again = fad::run(&q.cfg, &opts, dir2.path(), 2, &Silent).unwrap();
        assert_eq!(again.exec.computed, 4);
        assert_eq!(again.exec.cached, cells_per_workload() - 4);
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

mod traces_dir {
    use super::*;
    use dedupsim::experiment::replica::ReplicaSpec;

    #[test]
    fn a_trace_recognized_by_name_and_format_replaces_the_replica() {
        let dir = tempfile::tempdir().unwrap();
        // A native-format trace named like FAD's Mail trace (content kept).
        let spec = ReplicaSpec::new(replica::row("mail").unwrap(), 0.002, replica::DEFAULT_UTILIZATION);
        let w = replica::generate(&spec, 7).unwrap();
        let f = std::fs::File::create(dir.path().join("mail-test.trace")).unwrap();
        dedupsim::trace::write_native_workload(&w, 4096, f).unwrap();
        // A file named like mds1 whose content is not an MSR trace.
        std::fs::write(dir.path().join("mds_1.csv"), "this is not a trace\n").unwrap();
        let cfg = Config::preset("fad-table1").unwrap();
        let opts = FadOptions {
            traces_dir: Some(dir.path().to_path_buf()),
            scale: 0.002,
            only: vec!["mail".into(), "mds1".into()],
            ..FadOptions::default()
        };
        let (_, choices) = fad::plan(&cfg, &opts).unwrap();
        let mail = choices.iter().find(|c| c.row.key == "mail").unwrap();
        assert!(matches!(&mail.def.spec, WorkloadSpec::Trace(p) if p.ends_with("mail-test.trace")));
        assert!(mail.def.source().starts_with("trace: "));
        let mds = choices.iter().find(|c| c.row.key == "mds1").unwrap();
        assert!(matches!(mds.def.spec, WorkloadSpec::Replica(_)));
        assert!(mds.note.as_deref().unwrap_or("").contains("mds_1.csv"));

        let out = tempfile::tempdir().unwrap();
        let o = fad::run(&cfg, &FadOptions { plots: false, ..opts }, out.path(), 2, &Silent).unwrap();
        let rec = o.exec.records.iter().find(|r| r.workload == "mail").unwrap();
        assert!(rec.workload_source.starts_with("trace: "));
        assert_eq!(rec.report.counters.reads + rec.report.counters.writes, w.requests.len() as u64);
        let text = std::fs::read_to_string(o.report_path).unwrap();
        assert!(text.contains("trace: "));
        assert!(text.contains("the replica was used instead"));
    }

    #[test]
    fn traces_are_found_in_subdirectories_like_shared_traces() {
        // The layout of shared/traces: one folder per trace set.
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("fiu-iodedup-mail");
        std::fs::create_dir(&sub).unwrap();
        let spec = ReplicaSpec::new(replica::row("mail").unwrap(), 0.001, replica::DEFAULT_UTILIZATION);
        let w = replica::generate(&spec, 7).unwrap();
        let f = std::fs::File::create(sub.join("mail-02-sample.trace")).unwrap();
        dedupsim::trace::write_native_workload(&w, 4096, f).unwrap();
        // Too deep (four levels below) and hidden folders are not searched.
        let deep = dir.path().join("a/b/c/d");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::copy(sub.join("mail-02-sample.trace"), deep.join("homes.trace")).unwrap();
        let hidden = dir.path().join(".cache");
        std::fs::create_dir(&hidden).unwrap();
        std::fs::copy(sub.join("mail-02-sample.trace"), hidden.join("webvm.trace")).unwrap();

        let found = fad::find_trace(dir.path(), replica::row("mail").unwrap()).unwrap();
        assert_eq!(found.as_deref(), Some(sub.join("mail-02-sample.trace").as_path()));
        assert_eq!(fad::find_trace(dir.path(), replica::row("homes").unwrap()).unwrap(), None);
        assert_eq!(fad::find_trace(dir.path(), replica::row("webvm").unwrap()).unwrap(), None);
        let missing = fad::find_trace(&dir.path().join("nope"), replica::row("mail").unwrap());
        assert!(missing.unwrap_err().contains("cannot read --traces directory"));
    }
}

mod sweeps {
    use super::*;

    const SWEEP: &str = r#"
name = "round-trip"
seed = 5

[set]
"dedup.fingerprint" = "16us"

[grid]
workloads = ["synth:name=tiny,requests=3e3,footprint=256MiB,hot=0.4:32MiB", "web1@0.01"]
policies = ["dedup", "fad"]

[grid.set]
"policy.fad.rho" = [0.1, 0.3]
seed = [1, 2]
"#;

    /// Every example sweep under docs/examples loads and plans (its keys and
    /// values are valid), and the allocation example plans one cell per
    /// workload, policy and allocation.
    #[test]
    fn example_sweeps_plan() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let s = Sweep::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let plan = s.plan().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                if path.ends_with("allocation.toml") {
                    assert_eq!(plan.cells.len(), 3 * 3 * 4);
                }
                n += 1;
            }
        }
        assert!(n >= 2, "{n} example sweeps");
    }

    /// Splits a POSIX shell line as written by `shell_quote` ('...' quoting).
    fn split_shell(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut cur = String::new();
        let mut in_word = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\'' => {
                    in_word = true;
                    for q in chars.by_ref() {
                        if q == '\'' {
                            break;
                        }
                        cur.push(q);
                    }
                }
                '\\' => {
                    in_word = true;
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                ' ' => {
                    if in_word {
                        words.push(std::mem::take(&mut cur));
                        in_word = false;
                    }
                }
                c => {
                    in_word = true;
                    cur.push(c);
                }
            }
        }
        if in_word {
            words.push(cur);
        }
        words
    }

    #[test]
    fn grid_drops_parameters_that_do_not_apply() {
        let s = Sweep::parse(SWEEP, Path::new("round-trip.toml")).unwrap();
        assert_eq!(s.combinations().len(), 4);
        let plan = s.plan().unwrap();
        // Per workload: dedup x 2 seeds + fad x 2 rho x 2 seeds.
        assert_eq!(plan.cells.len(), 2 * (2 + 4));
        assert!(plan.cells.iter().filter(|c| c.policy == "dedup").all(|c| c.params.iter().all(|(k, _)| k == "seed")));
        assert!(plan.cells.iter().all(|c| c.config.dedup.fingerprint.0 == 16_000));
    }

    #[test]
    fn emitted_jobs_run_anywhere_and_collect_merges_histograms() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("round-trip.toml");
        std::fs::write(&file, SWEEP).unwrap();
        let s = Sweep::load(&file).unwrap();
        let plan = s.plan().unwrap();
        let shard_out = dir.path().join("shards");
        let lines = s.job_lines(&plan, &shard_out, "dedupsim");
        assert_eq!(lines.len(), plan.cells.len());
        let bin = crate::support::cargo_bin("dedupsim");
        for line in &lines {
            let words = split_shell(line);
            assert_eq!(words[0], "dedupsim");
            let st = std::process::Command::new(&bin).args(&words[1..]).output().unwrap();
            assert!(st.status.success(), "{line}\n{}", String::from_utf8_lossy(&st.stderr));
        }
        let (n, rows) = sweep::collect(&shard_out).unwrap();
        assert_eq!(n, plan.cells.len());
        // Seeds merged: per workload one dedup row and one fad row per rho.
        assert_eq!(rows.len(), 2 * 3);
        assert!(shard_out.join("results.csv").is_file() && shard_out.join("results.json").is_file());
        let cells = results::read_cells(&shard_out).unwrap();
        for row in &rows {
            assert_eq!(row.seeds, vec![1, 2]);
            let parts: Vec<&CellRecord> = cells.iter().filter(|c| row.cells.contains(&c.key)).collect();
            assert_eq!(parts.len(), 2);
            let mut h = LatencyHistogram::default();
            for p in &parts {
                h.merge(&p.report.histograms.read);
            }
            assert!(row.report.histograms.read == h, "merged, not averaged");
            assert_eq!(row.report.summary.read.p99_us, h.summary().p99_us);
            assert_eq!(
                row.report.counters.write_pages,
                parts.iter().map(|p| p.report.counters.write_pages).sum::<u64>()
            );
        }

        // The same sweep run in-process gives the same rows.
        let direct = dir.path().join("direct");
        let (exec, direct_rows) = sweep::run(&s, &direct, 2, &Silent).unwrap();
        assert_eq!(exec.computed, plan.cells.len());
        let key = |r: &ResultRow| (r.workload_spec.clone(), r.policy.clone(), r.params.clone());
        let by_key: HashMap<_, _> = rows.iter().map(|r| (key(r), r)).collect();
        for r in &direct_rows {
            assert!(by_key[&key(r)].report == r.report, "{:?}", key(r));
        }
        // Collecting a shard directory twice (duplicated cells) changes nothing.
        let dup = dir.path().join("dup/cells");
        std::fs::create_dir_all(&dup).unwrap();
        for e in std::fs::read_dir(shard_out.join("cells")).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, dup.join(p.file_name().unwrap())).unwrap();
            std::fs::copy(&p, dup.join(format!("copy-{}", p.file_name().unwrap().to_string_lossy()))).unwrap();
        }
        let (_, dup_rows) = sweep::collect(&dir.path().join("dup")).unwrap();
        assert_eq!(dup_rows.len(), rows.len());
        for r in &dup_rows {
            assert!(by_key[&key(r)].report == r.report, "{:?}", key(r));
        }
    }

    /// A cell whose hash stage saturates is named with its warning (the
    /// `sweep` command prints these lines on stderr, `reproduce` heads
    /// REPORT.md with them); a cell without one is not.
    #[test]
    fn saturated_cells_are_named_with_their_warning() {
        let text = "name = \"hashload\"\n[grid]\nworkloads = [\"synth:name=w,requests=3000,read=0,iat=exp:10us\"]\n\
                    policies = [\"native\", \"dedup\"]\n[grid.set]\n\"dedup.fingerprint\" = [\"32us\", \"1us\"]\n";
        let s = Sweep::parse(text, Path::new("hashload.toml")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (exec, _) = sweep::run(&s, dir.path(), 1, &Silent).unwrap();
        let w = dedupsim::experiment::declare::cell_warnings(&exec.records);
        let hash: Vec<&String> = w.iter().filter(|l| l.contains("hash engine")).collect();
        assert_eq!(hash.len(), 1, "{w:?}");
        assert!(
            hash[0].starts_with("w, dedup (dedup.fingerprint=\"32us\"): the hash engine is saturated: busy 100.0%"),
            "{w:?}"
        );
        // 3000 requests 10 us apart (30 ms) overload the device itself too:
        // every cell, native included, finishes long after its last arrival.
        let behind = w.iter().filter(|l| l.contains("the device fell behind the arrivals")).count();
        assert_eq!(behind, 4, "{w:?}");
    }

    #[test]
    fn bad_sweep_files_name_the_problem() {
        let e =
            Sweep::parse("[grid]\nworkloads = [\"mail\"]\npolicies = [\"nope\"]\n", Path::new("x.toml")).unwrap_err();
        assert!(e.to_string().contains("unknown policy `nope`"), "{e}");
        let e =
            Sweep::parse("[grid]\nworkloads = [\"nowhere\"]\npolicies = [\"fad\"]\n", Path::new("x.toml")).unwrap_err();
        assert!(e.to_string().contains("nowhere"), "{e}");
        let e = Sweep::parse(
            "[grid]\nworkloads = [\"mail\"]\npolicies = [\"fad\"]\n[grid.set]\n\"geometry.nope\" = [1]\n",
            Path::new("x.toml"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("x.toml:5: [grid.set] `geometry.nope` = 1: unknown key"), "{e}");
    }
}

/// The workload families (issue 24 item 5): every fitted profile and the
/// reuse-distance sweep run Native, Deduplication and FAD, and the report's
/// rows are the cells' numbers.
#[test]
fn the_workload_families_section_reports_the_family_cells() {
    use dedupsim::experiment::families;
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config::preset("fad-table1").unwrap();
    let opts = FadOptions {
        scale: QUICK_SCALE,
        only: vec!["mail".into()],
        families: Some(families::Size { requests: 1_500.0, pages: 60_000.0 }),
        command: "test".into(),
        plots: false,
        ..FadOptions::default()
    };
    let outcome = fad::run(&cfg, &opts, dir.path(), 2, &Silent).unwrap();
    let report = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
    let section = &report[report.find("## Workload families").expect("section")..];
    let read = |label: &str, policy: &str| {
        let r = outcome.exec.records.iter().find(|r| r.workload == label && r.policy == policy);
        r.unwrap_or_else(|| panic!("{label} {policy} ran")).report.summary.read.mean_us
    };
    for name in families::FITTED {
        let label = format!("fitted:{name}");
        let row = section.lines().find(|l| l.contains(&format!("| {label} |"))).expect(&label);
        let (n, d, f) = (read(&label, "native"), read(&label, "dedup"), read(&label, "fad"));
        let cols: Vec<&str> = row.split('|').map(str::trim).collect();
        if n > 0.0 {
            assert_eq!(cols[6], format!("{:+.1}%", (d / n - 1.0) * 100.0), "{row}");
            assert_eq!(cols[7], format!("{:+.1}%", (f / d - 1.0) * 100.0), "{row}");
        } else {
            assert_eq!((cols[6], cols[7]), ("n/a", "n/a"), "{row}");
        }
    }
    // Write-only samples have no reads; the recordings do.
    assert_eq!(read("fitted:fiu-homes", "native"), 0.0);
    assert!(read("fitted:recorded-vmimages", "native") > 0.0);
    // The sweep: five reuse distances, each a row.
    let sweep = section
        .lines()
        .filter(|l| l.starts_with("| ") && l.split('|').nth(1).is_some_and(|c| c.trim().parse::<f64>().is_ok()))
        .count();
    assert_eq!(sweep, 5, "{section}");
    assert!(section.contains("| replicas | mean of 1 Table II replicas |"), "{section}");
}
