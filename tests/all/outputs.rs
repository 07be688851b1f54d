//! `run --request-log`, `--timeseries` and `--plot` (issue 29 items 1 and
//! 2, docs/outputs.md): the files' columns, one row per request, latencies
//! that add up, series whose sums are the run's totals, refused flag
//! combinations, byte-identical reruns, and reports the observers leave
//! unchanged.

use crate::support::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn dedupsim() -> Command {
    Command::cargo_bin("dedupsim").expect("binary builds")
}

/// A small device (`tiny`, 2 chips of 512 blocks of 8 pages: 32 MiB raw)
/// and a workload over most of its logical space, so that GC migrates
/// pages during the replay (and not during preconditioning).
const DEVICE: [&str; 4] = ["--preset", "tiny", "--set", "geometry.blocks_per_plane=512"];
const GC_HEAVY: &str = "requests=4000,read=0.3,footprint=20MiB,hot=0.4:8MiB,iat=exp:2000us";

fn run(dir: &Path, policies: &str, extra: &[&str]) -> Vec<Value> {
    let json = dir.join("report.json");
    dedupsim()
        .args(["run", "-q", "--synth", GC_HEAVY, "-p", policies])
        .args(DEVICE)
        .arg("--json")
        .arg(&json)
        .args(extra)
        .assert()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v.as_array().unwrap().clone()
}

/// A CSV file as its header and rows of fields.
fn csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect::<Vec<_>>();
    let rows = lines.map(|l| l.split(',').map(String::from).collect::<Vec<_>>()).collect::<Vec<_>>();
    for r in &rows {
        assert_eq!(r.len(), header.len(), "a row of {} has {} fields", path.display(), r.len());
    }
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{v} is not a count"))
}

mod request_log {
    use super::*;

    /// One row per replayed request, each request once; latency =
    /// completion - arrival; the per-op counts and latency sums are the
    /// report's; duplicate pages add up to the report's.
    #[test]
    fn one_row_per_request_with_consistent_times() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("requests.csv");
        let reports = run(dir.path(), "dedup", &["--request-log", log.to_str().unwrap()]);
        let c = &reports[0]["counters"];
        let (header, rows) = csv(&log);
        assert_eq!(
            header.join(","),
            "request,op,offset,size,pages,arrival_ns,completion_ns,latency_ns,dup_pages,chips,channels,gc_wait"
        );
        let n = u(&c["reads"]) + u(&c["writes"]) + u(&c["trims"]);
        assert_eq!(rows.len() as u64, n, "rows = requests");
        let num = |r: &Vec<String>, name: &str| -> u64 { r[col(&header, name)].parse().unwrap() };
        let mut seen = vec![false; rows.len()];
        let mut by_op: BTreeMap<String, (u64, u64, f64)> = BTreeMap::new();
        let mut dup = 0;
        for r in &rows {
            let i = num(r, "request") as usize;
            assert!(!seen[i], "request {i} logged twice");
            seen[i] = true;
            let (a, c, l) = (num(r, "arrival_ns"), num(r, "completion_ns"), num(r, "latency_ns"));
            assert_eq!(c - a, l, "latency = completion - arrival: {r:?}");
            assert_eq!(num(r, "size"), num(r, "pages") * 4096);
            assert_eq!(num(r, "offset") % 4096, 0);
            assert!(num(r, "channels") <= num(r, "chips") && num(r, "chips") <= 2, "{r:?}");
            assert!(num(r, "dup_pages") <= num(r, "pages"));
            let e = by_op.entry(r[1].clone()).or_default();
            e.0 += 1;
            e.1 += num(r, "pages");
            e.2 += l as f64;
            dup += num(r, "dup_pages");
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(by_op["read"].0, u(&c["reads"]));
        assert_eq!(by_op["write"].0, u(&c["writes"]));
        assert_eq!(by_op["read"].1, u(&c["read_pages"]));
        assert_eq!(by_op["write"].1, u(&c["write_pages"]));
        assert_eq!(dup, u(&c["dedup_pages"]));
        // The report's mean is the HDR histogram's (3 significant digits).
        for (op, key) in [("read", "read"), ("write", "write")] {
            let mean_us = by_op[op].2 / by_op[op].0 as f64 / 1000.0;
            let want = reports[0]["summary"][key]["mean_us"].as_f64().unwrap();
            assert!((mean_us / want - 1.0).abs() < 0.002, "{op}: log mean {mean_us} us, report {want} us");
        }
    }

    /// GC queued on a chip marks the requests behind it; a run without GC
    /// marks none.
    #[test]
    fn gc_waits_are_marked_only_where_gc_runs() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("gc.csv");
        let reports = run(dir.path(), "native", &["--request-log", log.to_str().unwrap()]);
        assert!(u(&reports[0]["counters"]["programs"]["gc"]) > 0, "the workload must move pages in GC");
        let (header, rows) = csv(&log);
        let waited = rows.iter().filter(|r| r[col(&header, "gc_wait")] == "1").count();
        assert!(waited > 0 && waited < rows.len(), "{waited} of {} requests waited behind GC", rows.len());
        // The same workload on the default (large) device: no GC at all.
        dedupsim()
            .args(["run", "-q", "--synth", GC_HEAVY, "-p", "native", "--request-log", log.to_str().unwrap()])
            .assert()
            .success();
        let (header, rows) = csv(&log);
        assert!(rows.iter().all(|r| r[col(&header, "gc_wait")] == "0"));
    }

    /// `.zst` and `.gz` logs decompress to the plain log, and a rerun writes
    /// the same bytes.
    #[test]
    fn compressed_logs_and_reruns_are_identical() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        for name in ["a.csv", "b.csv", "c.csv.zst", "d.csv.gz"] {
            run(dir.path(), "fad", &["--request-log", p(name).to_str().unwrap()]);
        }
        let plain = std::fs::read(p("a.csv")).unwrap();
        assert!(plain.len() > 10_000);
        assert_eq!(std::fs::read(p("b.csv")).unwrap(), plain, "rerun differs");
        let zst = zstd::decode_all(&std::fs::read(p("c.csv.zst")).unwrap()[..]).unwrap();
        assert_eq!(zst, plain);
        let mut gz = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&std::fs::read(p("d.csv.gz")).unwrap()[..]),
            &mut gz,
        )
        .unwrap();
        assert_eq!(gz, plain);
    }
}

mod timeseries {
    use super::*;

    /// Per policy, the intervals' requests, pages, GC, erases, writes,
    /// duplicates and programs add up to the run's totals, and the busy
    /// times to the chips' busy time.
    #[test]
    fn sums_are_the_runs_totals() {
        let dir = tempfile::tempdir().unwrap();
        let ts = dir.path().join("ts.csv");
        let reports =
            run(dir.path(), "native,dedup", &["--timeseries", "100ms", "--timeseries-out", ts.to_str().unwrap()]);
        let (header, rows) = csv(&ts);
        for c in [
            "read_iops",
            "write_mb_s",
            "read_p99_us",
            "write_mean_us",
            "gc_invocations",
            "gc_pages_moved",
            "erases",
            "write_amplification",
            "dedup_rate",
            "free_blocks",
            "host_busy_s",
            "background_busy_s",
        ] {
            col(&header, c);
        }
        for r in &reports {
            let policy = r["policy"].as_str().unwrap();
            let mine: Vec<&Vec<String>> = rows.iter().filter(|row| row[0] == policy).collect();
            assert!(mine.len() >= 60, "{policy}: {} intervals for a 8 s run", mine.len());
            let sum =
                |name: &str| -> u64 { mine.iter().map(|row| row[col(&header, name)].parse::<u64>().unwrap()).sum() };
            let c = &r["counters"];
            assert_eq!(sum("reads"), u(&c["reads"]), "{policy} reads");
            assert_eq!(sum("writes"), u(&c["writes"]), "{policy} writes");
            assert_eq!(sum("gc_invocations"), u(&c["gc_invocations"]), "{policy} gc");
            assert_eq!(sum("gc_pages_moved"), u(&c["programs"]["gc"]), "{policy} moved");
            assert_eq!(sum("erases"), u(&c["erases"]), "{policy} erases");
            assert_eq!(sum("written_pages"), u(&c["write_pages"]), "{policy} written");
            assert_eq!(sum("dedup_pages"), u(&c["dedup_pages"]), "{policy} dedup");
            let host = u(&c["programs"]["host_unique"]) + u(&c["programs"]["host_rewrite"]);
            assert_eq!(sum("host_programs"), host, "{policy} programs");
            assert!(u(&c["erases"]) > 0);
            let busy: f64 = mine
                .iter()
                .map(|row| {
                    row[col(&header, "host_busy_s")].parse::<f64>().unwrap()
                        + row[col(&header, "background_busy_s")].parse::<f64>().unwrap()
                })
                .sum();
            let chips: f64 = r["chips"].as_array().unwrap().iter().map(|c| c["busy_us"].as_f64().unwrap() / 1e6).sum();
            assert!(
                (busy - chips).abs() < 1e-6 * mine.len() as f64 + 1e-9,
                "{policy}: busy {busy} s vs chips {chips} s"
            );
            // IOPS is requests per interval second.
            let k = mine.iter().position(|row| row[col(&header, "writes")] != "0").unwrap();
            let w: f64 = mine[k][col(&header, "writes")].parse().unwrap();
            assert_eq!(mine[k][col(&header, "write_iops")], format!("{:.3}", w / 0.1));
        }
        // The series is byte-identical on a rerun.
        let again = dir.path().join("again.csv");
        run(dir.path(), "native,dedup", &["--timeseries", "100ms", "--timeseries-out", again.to_str().unwrap()]);
        assert_eq!(std::fs::read(&ts).unwrap(), std::fs::read(&again).unwrap());
    }

    /// `--plot` draws the figures; the report is the plain run's.
    #[test]
    fn plots_are_drawn_and_reports_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let plots = dir.path().join("plots");
        let log = dir.path().join("log.csv.zst");
        let observed = run(
            dir.path(),
            "fad",
            &["--timeseries", "250ms", "--plot", plots.to_str().unwrap(), "--request-log", log.to_str().unwrap()],
        );
        for f in ["latency-over-time", "throughput-over-time", "gc-over-time", "waf-over-time", "latency-cdf"] {
            for ext in ["svg", "png"] {
                let p = plots.join(format!("{f}.{ext}"));
                assert!(std::fs::metadata(&p).map(|m| m.len() > 1000).unwrap_or(false), "{} missing", p.display());
            }
        }
        let plain = run(dir.path(), "fad", &[]);
        assert_eq!(observed, plain, "observers changed the report");
    }
}

mod refused {
    use super::*;

    /// Bad combinations are refused before any work: no report written.
    #[test]
    fn bad_flag_combinations_are_refused_before_simulating() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let log = dir.path().join("log.csv");
        let cases: &[(&[&str], &str)] = &[
            (&["-p", "native,dedup", "--request-log", log.to_str().unwrap()], "one run, but 2 policies"),
            (&["-p", "all", "--request-log", log.to_str().unwrap()], "choose one with -p POLICY"),
            (&["-p", "native", "--timeseries", "10ms"], "--timeseries-out FILE and/or --plot DIR"),
            (&["-p", "native", "--timeseries", "0ms", "--plot", "x"], "must be positive"),
            (&["-p", "native", "--timeseries", "10", "--plot", "x"], "no unit"),
            (
                &["-p", "native", "--timeseries", "1ns", "--timeseries-out", log.to_str().unwrap()],
                "choose a longer interval",
            ),
            (&["-p", "native", "--request-log", "/nonexistent/dir/log.csv"], "--request-log /nonexistent/dir/log.csv"),
            (&["-p", "native", "--timeseries", "1s", "--timeseries-out", "/nonexistent/t.csv"], "--timeseries-out"),
            (&["-p", "native", "--timeseries", "1s", "--plot", "/proc/no/such"], "--plot /proc/no/such"),
        ];
        for (args, needle) in cases {
            let out = dedupsim()
                .args(["run", "-q", "--synth", "requests=3000"])
                .arg("--json")
                .arg(&json)
                .args(*args)
                .assert()
                .failure()
                .get_output()
                .stderr
                .clone();
            let err = String::from_utf8_lossy(&out);
            assert!(err.contains(needle), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            assert!(!json.exists() && !log.exists(), "{args:?}: output written");
        }
        // A refused output leaves no --plot directory behind, and --plot
        // cannot be another output's path.
        let plots = dir.path().join("plots");
        let p = plots.to_str().unwrap();
        for (args, needle) in [
            (vec!["--plot", p, "--csv", "/nonexistent/dir/r.csv"], "--csv /nonexistent/dir/r.csv"),
            (vec!["--plot", p, "--timeseries-out", p], "--plot"),
        ] {
            let out = dedupsim()
                .args(["run", "-q", "-p", "native", "--synth", "requests=100", "--timeseries", "1s"])
                .args(&args)
                .assert()
                .code(1)
                .get_output()
                .stderr
                .clone();
            let err = String::from_utf8_lossy(&out);
            assert!(err.contains(needle), "{args:?}: {err}");
            assert!(!plots.exists(), "{args:?}: --plot directory created: {err}");
        }
        let same = format!("{}/./plots", dir.path().display());
        dedupsim()
            .args(["run", "-q", "-p", "native", "--synth", "requests=100", "--timeseries", "1s", "--plot", p])
            .args(["--json", &same])
            .assert()
            .code(1)
            .stderr(crate::support::predicate::str::contains("is also --json"));
        assert!(!plots.exists());
        // Usage errors: the companions of --timeseries alone.
        dedupsim().args(["run", "-q", "--timeseries-out", "t.csv"]).assert().code(2);
        dedupsim().args(["run", "-q", "--plot", "d"]).assert().code(2);
        // A request log over its input trace is refused.
        let trace = dir.path().join("t.csv");
        std::fs::write(&trace, "0,hm_0,0,Write,0,4096,100\n").unwrap();
        let err = dedupsim()
            .args(["run", "-q", "-p", "native", "--trace"])
            .arg(&trace)
            .arg("--request-log")
            .arg(&trace)
            .assert()
            .failure()
            .get_output()
            .stderr
            .clone();
        assert!(String::from_utf8_lossy(&err).contains("also an input"), "{}", String::from_utf8_lossy(&err));
        assert_eq!(std::fs::read_to_string(&trace).unwrap(), "0,hm_0,0,Write,0,4096,100\n");
    }
}
