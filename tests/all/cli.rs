//! CLI scenarios (the binary run through `crate::support`): the default job, determinism, `--check`,
//! `trace convert`, and one test per class of bad input (clear message, exit
//! code 1, no panic).

use crate::support::predicate;
use crate::support::Command;
use std::io::Write;

fn dedupsim() -> Command {
    Command::cargo_bin("dedupsim").expect("binary builds")
}

const SMALL: &str = "requests=3000,footprint=1GiB,hot=0.4:256MiB";

mod default_job {
    use super::*;

    /// `dedupsim --version` names the crate version and the git commit it
    /// was built from (`-dirty` with uncommitted changes, `unknown` outside
    /// a repository), and CITATION.cff carries the same crate version.
    #[test]
    fn version_names_the_commit() {
        let out = dedupsim().arg("--version").assert().success().get_output().stdout.clone();
        let out = String::from_utf8(out).unwrap();
        let want = format!("dedupsim {} (", env!("CARGO_PKG_VERSION"));
        let commit = out.strip_prefix(&want).and_then(|r| r.strip_suffix(")\n")).unwrap_or_else(|| panic!("{out:?}"));
        let hash = commit.strip_suffix("-dirty").unwrap_or(commit);
        let hex = (4..=40).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit());
        assert!(hex || commit == "unknown", "{out:?}");
        let cff = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/CITATION.cff")).unwrap();
        assert!(cff.lines().any(|l| l == format!("version: {}", env!("CARGO_PKG_VERSION"))), "CITATION.cff version");
    }

    #[test]
    fn run_without_files_compares_policies() {
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "-p", "native,dedup,fad"])
            .assert()
            .success()
            .stdout(predicate::str::contains("native").and(predicate::str::contains("fad")))
            .stdout(predicate::str::contains("DOF rd"));
    }

    /// A workload without reads shows no read latency: n/a, not 0.0
    /// (comparison line and single-policy table).
    #[test]
    fn a_workload_without_reads_says_n_a() {
        let out = dedupsim()
            .args(["run", "--quiet", "--synth", "requests=500,read=0", "-p", "native,dedup"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let out = String::from_utf8(out).unwrap();
        let native = out.lines().find(|l| l.starts_with("native")).unwrap();
        let cols: Vec<&str> = native.split_whitespace().collect();
        assert_eq!(&cols[1..3], &["n/a", "n/a"], "{native}");
        assert_ne!(cols[3], "n/a", "writes have a latency: {native}");
        dedupsim()
            .args(["run", "--quiet", "--synth", "requests=500,read=0", "-p", "native"])
            .assert()
            .success()
            .stdout(predicate::function("a line `read 0 n/a`", |s| {
                s.lines().any(|l| {
                    l.starts_with("read") && l.trim_end() == l && l.split_whitespace().eq(["read", "0", "n/a"])
                })
            }));
    }

    #[test]
    fn a_saturated_hash_engine_is_warned_about() {
        // 10 us between writes of ~4.7 pages, 32 us per page hash: the one
        // engine cannot keep up.
        let fast = "requests=3000,read=0,iat=exp:10us";
        let out =
            dedupsim().args(["run", "--synth", fast, "-p", "native,dedup"]).assert().success().get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("warning: dedup: the hash engine is saturated: busy 100.0% of the replay"), "{err}");
        assert!(!err.contains("warning: native: the hash engine"), "native hashes nothing: {err}");
        // 3000 requests in 30 ms overload the device itself: both runs end
        // long after their last arrival, and say so.
        assert!(err.contains("warning: native: the device fell behind the arrivals"), "{err}");
        assert!(err.contains("warning: dedup: the device fell behind the arrivals"), "{err}");
        // A single run's table carries the hashing line and the warning.
        dedupsim()
            .args(["run", "--quiet", "--synth", fast, "-p", "dedup"])
            .assert()
            .success()
            .stdout(predicate::str::contains("hashing: 13965 pages on 1 engine, busy 100.0% of the replay"))
            .stdout(predicate::str::contains("warning: the hash engine is saturated"));
        // 1 ms apart the engine keeps up: no warning, and none under --quiet.
        let slow = "requests=3000,read=0,iat=exp:1ms";
        let out =
            dedupsim().args(["run", "--synth", slow, "-p", "native,dedup"]).assert().success().get_output().clone();
        assert!(!String::from_utf8(out.stderr).unwrap().contains("warning"));
        let out = dedupsim()
            .args(["run", "-q", "--synth", fast, "-p", "native,dedup"])
            .assert()
            .success()
            .get_output()
            .clone();
        assert!(out.stderr.is_empty());
    }

    #[test]
    fn check_mode_verifies_every_policy() {
        dedupsim()
            .args(["run", "--quiet", "--check", "--check-every", "500", "--synth", SMALL, "-p", "all"])
            .assert()
            .success()
            .stdout(predicate::str::contains("invariants verified"));
    }

    #[test]
    fn same_seed_gives_byte_identical_json() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        for p in [&a, &b] {
            dedupsim()
                .args(["run", "--quiet", "--synth", SMALL, "-p", "dedup,fad", "--json"])
                .arg(p)
                .assert()
                .success();
        }
        let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        assert!(!a.is_empty());
        assert_eq!(a, b, "same inputs and seed must give identical JSON");
        // A different seed changes the results.
        let c = dir.path().join("c.json");
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "-p", "dedup,fad", "--seed", "7", "--json"])
            .arg(&c)
            .assert()
            .success();
        assert_ne!(a, std::fs::read(c).unwrap());
    }

    /// `--set allocation=static:ORDER` runs end to end and changes
    /// native's layout, so its results and the config hash; `config show`
    /// prints it canonically; a bad order is refused before simulating,
    /// naming the key.
    #[test]
    fn static_allocation_from_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let json = |alloc: &str| {
            let p = dir.path().join(format!("{}.json", alloc.replace(':', "-")));
            dedupsim()
                .args(["run", "--quiet", "--synth", SMALL, "-p", "native", "--set"])
                .arg(format!("allocation={alloc}"))
                .arg("--json")
                .arg(&p)
                .assert()
                .success();
            std::fs::read_to_string(p).unwrap()
        };
        let (st, ll, dy) = (json("static:cpwd"), json("least-loaded"), json("dynamic"));
        let summary = |j: &str| j[j.find("\"summary\"").unwrap()..j.find("\"counters\"").unwrap()].to_string();
        assert_ne!(summary(&st), summary(&ll));
        // The report names what the run changed; a default run (`dynamic`
        // is fad-table1's allocation) has no such field.
        assert!(st.contains("\"config_changes\"") && st.contains("static:CPWD"), "the report names the change");
        assert!(ll.contains("\"config_changes\"") && ll.contains("least-loaded"), "the report names the change");
        assert!(!dy.contains("config_changes"));
        dedupsim()
            .args(["config", "show", "--set", "allocation=static:cpwd"])
            .assert()
            .success()
            .stdout(predicate::str::contains("allocation = \"static:CPWD\""));
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "--set", "allocation=static:CPWX"])
            .assert()
            .fails_with(1, &["allocation", "C, W, D and P"]);
        // SSDsim's serve-time allocation: `run` of every policy runs (FAD
        // and the other self-placing policies keep their placement), in
        // the closed loop too, and with a dedup engine that verifies by
        // reading stored copies (a waiting copy is read from the write
        // buffer), invariants checked.
        assert_ne!(summary(&dy), summary(&ll));
        dedupsim().args(["run", "--quiet", "--synth", SMALL, "--set", "allocation=dynamic"]).assert().success();
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "-p", "native,dedup", "--set", "allocation=dynamic"])
            .args(["--queue-depth", "8", "--check"])
            .assert()
            .success();
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "-p", "dedup", "--set", "allocation=dynamic"])
            .args(["--engine", "light-dedup", "--check"])
            .assert()
            .success();
    }

    #[test]
    fn csv_has_a_header_and_one_row_per_policy() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.csv");
        dedupsim().args(["run", "--quiet", "--synth", SMALL, "-p", "native,dedup", "--csv"]).arg(&p).assert().success();
        let text = std::fs::read_to_string(p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("version,config,config_hash,seed"));
    }

    /// A run under the authors' FAD-SSDsim model says so in the table
    /// header, the JSON (`device_model`) and the CSV's last column; a normal
    /// run has none of it.
    #[test]
    fn the_authors_model_is_labelled_in_every_output() {
        let dir = tempfile::tempdir().unwrap();
        let (csv, json) = (dir.path().join("r.csv"), dir.path().join("r.json"));
        let model = ["--set", "experiment.fad_ssdsim_model=true"];
        let out = dedupsim()
            .args(["run", "--quiet", "--check", "--synth", SMALL, "-p", "native,dedup,fad"])
            .args(model)
            .arg("--csv")
            .arg(&csv)
            .arg("--json")
            .arg(&json)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with("*** EXPERIMENT experiment.fad_ssdsim_model") && out.contains("NOT a faithful device"),
            "{out}"
        );
        let mut rd = csv::Reader::from_path(&csv).unwrap();
        assert_eq!(rd.headers().unwrap().iter().next_back(), Some("device_model"));
        let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 3);
        for r in &rows {
            assert_eq!(
                r.iter().next_back(),
                Some("fad-ssdsim-model (authors' simulator, not a faithful device)"),
                "{r:?}"
            );
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let reports = v.as_array().map(|a| a.to_vec()).unwrap_or_else(|| vec![v.clone()]);
        for r in &reports {
            assert!(r["device_model"].as_str().unwrap().contains("NOT a faithful device"), "{r}");
        }
        // Single-policy table too; and nothing of it without the switch.
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "-p", "dedup"])
            .args(model)
            .assert()
            .success()
            .stdout(predicate::str::starts_with("*** EXPERIMENT"));
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "-p", "native,dedup", "--json"])
            .arg(&json)
            .assert()
            .success()
            .stdout(predicate::str::contains("EXPERIMENT").not());
        assert!(!std::fs::read_to_string(&json).unwrap().contains("device_model"));
    }

    #[test]
    fn replica_trace_keeps_its_label_and_dedup_rate() {
        // A Table II replica written as a native trace: `trace synth` reports
        // the replica's own realized (trace-level) dedup rate, not the unused
        // content model's; `trace stats` shows its label and the same rate;
        // Deduplication achieves Table II's 91.0% on the device (the
        // default `--dedup-rate device`), the trace itself repeats more.
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("mail.trace");
        let out = dedupsim().args(["trace", "synth", "--replica", "mail@0.02", "-o"]).arg(&t).assert().success();
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        let rate = err.split("content from the workload, realized dedup ").nth(1).expect(&err);
        let rate: f64 = rate.split('%').next().unwrap().parse().unwrap();
        assert!(rate > 92.0, "trace-level rate {rate}");
        let out = dedupsim()
            .args(["trace", "stats"])
            .arg(&t)
            .assert()
            .success()
            .stdout(predicate::str::contains("written from mail: synthetic (Table II-matched)"));
        let stats = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let line = stats.lines().find(|l| l.starts_with("dedup rate")).expect(&stats);
        let shown: f64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!((shown - rate).abs() < 0.051, "trace stats {shown} vs trace synth {rate}");
        dedupsim().args(["run", "-p", "dedup", "--quiet", "--trace"]).arg(&t).assert().success().stdout(
            predicate::str::contains("dedup 91.0% of written pages")
                .or(predicate::str::contains("dedup 91.1% of written pages")),
        );
    }

    #[test]
    fn files_merged_joins_contiguous_records() {
        // Two contiguous writes and a read (SSDsim ASCII: time devno lsn size op, 1 = read).
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t.ascii");
        std::fs::write(&t, "0 0 0 8 0\n1000 0 8 8 0\n2000 0 100 8 1\n").unwrap();
        let csv = dir.path().join("o.csv");
        let run = |files: &str| {
            let out = dedupsim()
                .args(["run", "-p", "native", "--format", "ssdsim", "--content", "unique", "--files", files, "--csv"])
                .arg(&csv)
                .arg("--trace")
                .arg(&t)
                .assert()
                .success()
                .get_output()
                .clone();
            (std::fs::read_to_string(&csv).unwrap(), String::from_utf8(out.stderr).unwrap())
        };
        let (csv, err) = run("merged");
        assert!(err.contains("3 requests joined into 2 files"), "{err}");
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
        let writes = header.iter().position(|h| *h == "write_count").expect("a write_count column");
        assert_eq!(row[writes], "1", "{csv}");
        let (csv, err) = run("request");
        assert!(!err.contains("joined"), "{err}");
        let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(row[writes], "2", "{csv}");
        dedupsim()
            .args(["run", "--files", "file"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("use `request`"));
        dedupsim()
            .args(["run", "--synth", "requests=100", "--dedup-rate", "trace"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("--dedup-rate applies to Table II replicas only"));
    }

    #[test]
    fn reproduce_refuses_a_foreign_non_empty_output_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        dedupsim()
            .args(["reproduce", "fad", "--quick", "--only", "web1", "--no-plots", "--out"])
            .arg(dir.path())
            .assert()
            .failure()
            .stderr(predicate::str::contains("is not a previous output of dedupsim"));
        assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "mine");
        assert!(!dir.path().join("REPORT.md").exists());
    }

    #[test]
    fn replica_arrivals_follow_the_simulated_device() {
        // mds1 is bus-bound: on the faster ONFI-800 bus the same load (40% of
        // the busiest resource) means faster arrivals, hence a shorter trace.
        let dir = tempfile::tempdir().unwrap();
        let duration = |extra: &[&str]| -> f64 {
            let t = dir.path().join("mds1.trace");
            dedupsim().args(["trace", "synth", "--replica", "mds1@0.002", "-o"]).arg(&t).args(extra).assert().success();
            let out = dedupsim().args(["trace", "stats"]).arg(&t).assert().success().get_output().stdout.clone();
            let text = String::from_utf8(out).unwrap();
            let line = text.lines().find(|l| l.starts_with("duration")).expect("a duration line");
            // `trace stats` prints spans below 1 s in ms or µs.
            let mut w = line.split_whitespace().skip(1);
            let v: f64 = w.next().unwrap().parse().unwrap();
            v * match w.next().unwrap() {
                "s" => 1.0,
                "ms" => 1e-3,
                "µs" => 1e-6,
                u => panic!("unit {u}"),
            }
        };
        let table1 = duration(&[]);
        let onfi = duration(&["--preset", "fad-onfi800"]);
        assert!(onfi < table1 / 5.0, "fad-onfi800 {onfi} s vs fad-table1 {table1} s");
    }

    #[test]
    fn bench_reports_best_median_and_ratio_per_policy() {
        let out = dedupsim()
            .args(["bench", "--requests", "2000", "--repeat", "2", "-p", "native,dedup"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("| policy | best of 2 (s) | median (s) |"), "{text}");
        assert!(text.contains("best × native"), "{text}");
        let native = text.lines().find(|l| l.starts_with("| native |")).expect("a native row");
        assert!(native.trim_end().ends_with("| 1.00 |"), "{native}");
        assert!(text.lines().any(|l| l.starts_with("| dedup |")), "{text}");
    }

    #[test]
    fn config_show_prints_derived_capacity() {
        dedupsim()
            .args(["config", "show"])
            .assert()
            .success()
            .stdout(predicate::str::contains("channels = 8").and(predicate::str::contains("derived")));
    }

    #[test]
    fn closed_pipe_is_not_an_error() {
        // `policies | head -c 1` closes the pipe early; the process still exits 0.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{} policies | head -c 1 >/dev/null", env!("CARGO_BIN_EXE_dedupsim")))
            .status()
            .unwrap();
        assert!(out.success());
    }
}

mod bad_input {
    use super::*;

    fn fails_with(args: &[&str], needle: &str) {
        dedupsim()
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(needle))
            .stderr(predicate::str::contains("panicked").not());
    }

    #[test]
    fn malformed_trace_line_names_file_and_line() {
        let mut f = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
        writeln!(f, "128166372003061629,hm,0,Read,3154152448,4096,20031").unwrap();
        writeln!(f, "128166372003061630,hm,0,Read,31541524x8,4096,20031").unwrap();
        let path = f.path().to_str().unwrap().to_string();
        fails_with(&["run", "--quiet", "--trace", &path, "--format", "msr"], ":2:");
        // --skip-bad-lines counts instead of failing.
        dedupsim()
            .args(["run", "--trace", &path, "--format", "msr", "--skip-bad-lines", "-p", "native"])
            .assert()
            .success();
    }

    #[test]
    fn empty_trace_says_so() {
        let f = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
        let path = f.path().to_str().unwrap().to_string();
        fails_with(&["run", "--quiet", "--trace", &path, "--format", "msr"], "no requests");
    }

    #[test]
    fn address_beyond_capacity_suggests_wrap() {
        let mut f = tempfile::Builder::new().suffix(".trace").tempfile().unwrap();
        writeln!(f, "# dedupsim-trace v1").unwrap();
        writeln!(f, "0 W 0 4096").unwrap();
        writeln!(f, "1000 W 999999999999 4096").unwrap();
        let path = f.path().to_str().unwrap().to_string();
        fails_with(&["run", "--quiet", "--trace", &path], "--wrap");
        dedupsim().args(["run", "--quiet", "--trace", &path, "--wrap", "-p", "dedup"]).assert().success();
    }

    #[test]
    fn invalid_config_is_rejected_before_simulating() {
        fails_with(&["run", "--quiet", "--set", "geometry.channels=0"], "channels");
        fails_with(&["run", "--quiet", "--set", "over_provisioning=1.0"], "over_provisioning");
        fails_with(&["run", "--quiet", "--set", "geometry.page_size=5000"], "page_size");
        fails_with(&["run", "--quiet", "--set", "gc.min_free_blocks=2048"], "min_free_blocks");
        fails_with(&["run", "--quiet", "--set", "geometry.nonsense=1"], "nonsense");
        fails_with(&["run", "--quiet", "--preset", "no-such-preset"], "fad-table1");
    }

    #[test]
    fn unknown_policy_lists_the_available_ones() {
        fails_with(&["run", "--quiet", "-p", "fadd"], "fad-rpo");
    }

    #[test]
    fn bad_policy_parameter_is_rejected() {
        fails_with(&["run", "--quiet", "-p", "fad", "--set", "policy.fad.rho=2"], "rho");
        fails_with(&["run", "--quiet", "-p", "fad", "--set", "policy.fad.bogus=1"], "bogus");
    }

    #[test]
    fn workload_that_cannot_fit_stops_with_a_message() {
        // A tiny device whose logical space is smaller than the workload's footprint.
        fails_with(
            &["run", "--quiet", "--preset", "tiny", "--synth", "requests=100,footprint=64MiB,hot=0.4:1MiB"],
            "logical pages",
        );
    }

    #[test]
    fn bad_synthetic_spec_names_the_key() {
        fails_with(&["run", "--quiet", "--synth", "requests=10,read=1.5"], "read");
    }

    #[test]
    fn bad_content_model_is_a_usage_error() {
        dedupsim().args(["run", "--content", "zipf:a=-1"]).assert().code(2);
    }
}

mod convert {
    use super::*;
    use std::path::Path;

    fn stats(path: &Path, format: &str) -> serde_json::Value {
        let out = dedupsim()
            .args(["trace", "stats", "--json", "--format", format])
            .arg(path)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    }

    /// The lines run.sh (../shared/peers) accepts: 5 integers separated by
    /// one space, size > 0, op 0 or 1, sectors below 2^32, non-decreasing times.
    fn check_strict_ssdsim(text: &str) -> usize {
        let mut last = 0u64;
        for (i, line) in text.lines().enumerate() {
            let f: Vec<u64> =
                line.split(' ').map(|x| x.parse().unwrap_or_else(|_| panic!("line {i}: {line}"))).collect();
            assert_eq!(f.len(), 5, "line {i}: {line}");
            assert!(f[0] >= last, "line {i}: time goes backwards");
            assert!(f[3] > 0 && f[4] <= 1 && f[2] + f[3] <= u64::from(u32::MAX), "line {i}: {line}");
            last = f[0];
        }
        text.lines().count()
    }

    #[test]
    fn synthetic_trace_converts_and_reloads_as_ssdsim() {
        let dir = tempfile::tempdir().unwrap();
        let native = dir.path().join("s.trace");
        let ascii = dir.path().join("s.ascii");
        dedupsim()
            .args(["trace", "synth", "--synth", "requests=3000,read=0.4,footprint=1GiB,hot=0.4:256MiB", "-o"])
            .arg(&native)
            .assert()
            .success();
        dedupsim()
            .args(["trace", "convert", "--to", "ssdsim", "--volume", "merge", "-o"])
            .arg(&ascii)
            .arg(&native)
            .assert()
            .success()
            .stderr(predicate::str::contains("wrote 3000 requests"));
        assert_eq!(check_strict_ssdsim(&std::fs::read_to_string(&ascii).unwrap()), 3000);
        let (a, b) = (stats(&native, "native"), stats(&ascii, "ssdsim"));
        for key in ["requests", "reads", "writes", "footprint_pages", "pages_written", "avg_read_kib"] {
            assert_eq!(a[key], b[key], "{key}");
        }
        // No temporary file is left beside the output.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// `trace convert` reads the blkparse, fio and column-mapped CSV formats
    /// (detected, or named with their options) and writes SSDsim traces that
    /// load back with the same requests.
    #[test]
    fn new_formats_convert_to_ssdsim() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, &str, Option<&str>, u64); 5] = [
            (
                "sda.blkparse",
                "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n  \
                 8,0    3        2     0.000036306   697  D  WS 223490 + 8 [kjournald]\n  \
                 8,0    1        1     0.003955140     0  C  WS 223490 + 8 [0]\n\
                 CPU0 (8,0):\n Reads Queued:           0,        0KiB\n",
                None,
                1,
            ),
            (
                "sda.blkparse",
                "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n  \
                 8,0    3        2     0.000001000   697  Q   R 8 + 8 [cat]\n",
                Some("blkparse:Q"),
                2,
            ),
            (
                "job.iolog",
                "fio version 3 iolog\n0 /dev/sdb add\n1 /dev/sdb open\n872 /dev/sdb write 0 16384\n\
                 881 /dev/sdb read 0 4096\n900 /dev/sdb close\n",
                None,
                2,
            ),
            ("job_lat.1.log", "1, 183, 0, 4096, 1736704, 0\n2, 95, 1, 8192, 8192, 0\n", None, 2),
            (
                "t.tsv",
                "100\tR\t8\t4096\n250\tW\t16\t8192\n",
                Some("csv:time=1,op=2,offset=3,size=4,time-unit=us,offset-unit=sector,delimiter=tab"),
                2,
            ),
        ];
        for (name, text, format, n) in cases {
            let input = dir.path().join(name);
            std::fs::write(&input, text).unwrap();
            let out = dir.path().join("out.ascii");
            let mut c = dedupsim();
            c.args(["trace", "convert", "--to", "ssdsim", "-o"]).arg(&out).arg(&input);
            if let Some(f) = format {
                c.args(["--format", f]);
            }
            c.assert().success().stderr(predicate::str::contains(format!("wrote {n} requests")));
            assert_eq!(check_strict_ssdsim(&std::fs::read_to_string(&out).unwrap()) as u64, n, "{name} {format:?}");
            assert_eq!(stats(&out, "ssdsim")["requests"], n, "{name} {format:?}");
        }
        // A bad column map is a clear usage error naming the key.
        let input = dir.path().join("t.tsv");
        dedupsim()
            .args(["trace", "stats", "--format", "csv:time=1,op=2,offset=3,size=4,unit=ms"])
            .arg(&input)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("unknown key \"unit\""));
    }

    #[test]
    fn volumes_trims_and_sector_limit() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("v.trace");
        let text = "# dedupsim-trace v1\n0 W 8192 4096 5\n10 W 0 100 2\n20 T 0 4096 2\n30 R 4096 4096 5\n";
        std::fs::write(&t, text).unwrap();
        let out = dir.path().join("v.ascii");
        let convert = |extra: &[&str]| {
            let mut c = dedupsim();
            c.args(["trace", "convert", "--to", "ssdsim", "-o"]).arg(&out).arg(&t).args(extra);
            c
        };
        // merge: every volume at its own address, devno 0; the trim dropped and counted.
        convert(&["--volume", "merge"])
            .assert()
            .success()
            .stderr(predicate::str::contains("2 volumes merged").and(predicate::str::contains("dropped 1 trim")));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 0 16 8 0\n10 0 0 8 0\n30 0 8 8 1\n");
        // all: volume 2 placed after volume 5's 3 pages; one volume: only its requests (times
        // relative to its first request; --sectors keeps the 100-byte write at one sector).
        convert(&[]).assert().success().stderr(predicate::str::contains("2 volumes on disjoint ranges"));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 0 16 8 0\n10 0 24 8 0\n30 0 8 8 1\n");
        convert(&["--volume", "2", "--sectors"]).assert().success();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 0 0 1 0\n");

        // Beyond sector 2^32: a clear error suggesting --wrap, and the old output untouched.
        std::fs::write(&t, "# dedupsim-trace v1\n0 W 0 4096\n1000 R 3000000000000 8192\n").unwrap();
        convert(&[])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("request 2").and(predicate::str::contains("--wrap")));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 0 0 1 0\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no temporary file left");
        convert(&["--wrap"]).assert().success();
        assert_eq!(check_strict_ssdsim(&std::fs::read_to_string(&out).unwrap()), 2);
    }

    #[test]
    fn unwritable_output_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("x.trace");
        std::fs::write(&t, "# dedupsim-trace v1\n0 W 0 4096\n").unwrap();
        dedupsim()
            .args(["trace", "convert", "--to", "ssdsim", "-o"])
            .arg(dir.path().join("no-such-dir").join("x.ascii"))
            .arg(&t)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("no-such-dir"));
    }
}

/// Issue 12, bad input 1: every output file is written whole or not at all,
/// and a failed write is an error naming the file (exit 1), never a
/// truncated file and exit 0.
mod outputs {
    use super::*;
    use std::path::Path;

    fn fails_naming(cmd: &mut Command, path: &str) {
        cmd.assert()
            .code(1)
            .stderr(predicate::str::contains(format!("writing {path}: ")))
            .stderr(predicate::str::contains("panicked").not());
    }

    /// `/dev/full` accepts the open and fails every write (ENOSPC): each
    /// command that writes a file must report it.
    #[test]
    fn a_full_device_is_an_error_for_every_output() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        let full = "/dev/full";
        let run = ["run", "--quiet", "--synth", "requests=500", "-p", "native"];
        fails_naming(dedupsim().args(run).args(["--json", full]), full);
        fails_naming(dedupsim().args(run).args(["--csv", full]), full);
        fails_naming(dedupsim().args(["trace", "synth", "--synth", "requests=500", "-o", full]), full);
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("x.trace");
        std::fs::write(&t, "# dedupsim-trace v1\n0 W 0 4096\n").unwrap();
        fails_naming(dedupsim().args(["trace", "convert", "--to", "ssdsim", "-o", full]).arg(&t), full);
        let files = dir.path().join("files");
        std::fs::create_dir(&files).unwrap();
        std::fs::write(files.join("a"), vec![7u8; 10_000]).unwrap();
        fails_naming(dedupsim().args(["trace", "from-files", "-q", "-o", full]).arg(&files), full);
        // Writing a special file directly still works when it accepts the bytes.
        dedupsim().args(run).args(["--json", "/dev/null"]).assert().success();
        // Reports on stdout too (a closed pipe is not an error, a full device is).
        let o = std::process::Command::new(crate::support::cargo_bin("dedupsim"))
            .args(["config", "show"])
            .stdout(std::fs::File::create(full).unwrap())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains("writing standard output: "));
    }

    /// A write that fails half-way (here: the file size limit, as on a full
    /// file system) leaves the previous file intact and no temporary file.
    #[cfg(unix)]
    #[test]
    fn a_failed_write_keeps_the_previous_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.json");
        std::fs::write(&out, "\"good\"\n").unwrap();
        // With SIGXFSZ ignored, writes beyond `ulimit -f` (4 KiB; a run's
        // JSON is larger) fail with EFBIG instead of killing the process.
        Command::under_limits("trap '' XFSZ; ulimit -f 8")
            .current_dir(dir.path())
            .args(["run", "--quiet", "--synth", "requests=2000", "-p", "native,dedup", "--json", "out.json"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("writing out.json: "));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "\"good\"\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["out.json"], "no temporary file left");
        // Without the limit the same command replaces it.
        dedupsim()
            .current_dir(dir.path())
            .args(["run", "--quiet", "--synth", "requests=2000", "-p", "native,dedup", "--json", "out.json"])
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(v.as_array().map(Vec::len), Some(2));
    }
}

/// Issue 12, bad input 4: mistakes that used to be silently accepted.
mod silent_mistakes {
    use super::*;

    fn fails_with(cmd: &mut Command, code: i32, needles: &[&str]) {
        cmd.assert().fails_with(code, needles);
    }

    #[test]
    fn unknown_policy_table_lists_the_known_ones() {
        let known = "the parameter tables are: har, fcrc, die-hint, fad";
        fails_with(dedupsim().args(["run", "-q", "--set", "policy.fadd.rho=0.2"]), 1, &["[policy.fadd]", known]);
        fails_with(dedupsim().args(["config", "show", "--set", "policy.fadd.rho=0.2"]), 1, &["[policy.fadd]"]);
        // An ablation's name: its parameters are FAD's.
        fails_with(dedupsim().args(["config", "show", "--set", "policy.fad-rpo.rho=0.2"]), 1, &["[policy.fad]"]);
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("c.toml");
        std::fs::write(&cfg, "base = \"tiny\"\n[policy.fadd]\nrho = 0.2\n").unwrap();
        fails_with(dedupsim().args(["run", "-q", "--config"]).arg(&cfg), 1, &["[policy.fadd]", known]);
        // Known tables still load.
        std::fs::write(&cfg, "base = \"tiny\"\n[policy.fad]\nrho = 0.2\n").unwrap();
        dedupsim().args(["config", "show"]).arg(&cfg).assert().success();
    }

    #[test]
    fn an_output_on_the_input_trace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t.trace");
        dedupsim().args(["trace", "synth", "--synth", "requests=200", "-o"]).arg(&t).assert().success();
        let before = std::fs::read(&t).unwrap();
        for flag in ["--json", "--csv"] {
            fails_with(
                dedupsim().args(["run", "-q", "-p", "native", "--trace"]).arg(&t).arg(flag).arg(&t),
                1,
                &[flag, "also an input (--trace"],
            );
        }
        // Another spelling of the same file, and a hard link to it.
        let other = dir.path().join(".").join("t.trace");
        fails_with(dedupsim().args(["run", "-q", "--trace"]).arg(&t).arg("--json").arg(&other), 1, &["also an input"]);
        let link = dir.path().join("link.trace");
        std::fs::hard_link(&t, &link).unwrap();
        fails_with(dedupsim().args(["run", "-q", "--trace"]).arg(&t).arg("--csv").arg(&link), 1, &["also an input"]);
        // trace synth and trace convert onto their input.
        fails_with(dedupsim().args(["trace", "synth", "--trace"]).arg(&t).arg("-o").arg(&t), 1, &["also an input"]);
        fails_with(
            dedupsim().args(["trace", "convert", "--to", "ssdsim"]).arg(&t).arg("-o").arg(&t),
            1,
            &["also an input (trace file"],
        );
        assert_eq!(std::fs::read(&t).unwrap(), before, "the trace is untouched");
    }

    #[test]
    fn json_and_csv_at_the_same_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        fails_with(
            dedupsim()
                .args(["run", "-q", "-p", "native", "--synth", "requests=100", "--json"])
                .arg(&p)
                .arg("--csv")
                .arg(&p),
            1,
            &["--json and --csv name the same file"],
        );
        assert!(!p.exists(), "refused before anything ran");
        // Special files may be named twice.
        dedupsim()
            .args(["run", "-q", "-p", "native", "--synth", "requests=100", "--json", "/dev/null", "--csv", "/dev/null"])
            .assert()
            .success();
    }

    #[test]
    fn synth_with_trace_and_check_every_without_check_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t.trace");
        std::fs::write(&t, "# dedupsim-trace v1\n0 W 0 4096\n").unwrap();
        fails_with(
            dedupsim().args(["run", "-q", "--synth", "requests=100", "--trace"]).arg(&t),
            2,
            &["'--synth <SYNTH>' cannot be used with '--trace <TRACE>'"],
        );
        fails_with(dedupsim().args(["run", "-q", "--synth", "requests=100", "--check-every", "10"]), 2, &["--check"]);
        dedupsim()
            .args(["run", "-q", "-p", "native", "--synth", "requests=100", "--check", "--check-every", "10"])
            .assert()
            .success();
    }

    /// Found by a hostile-input hunt (sixth stop): options that only a trace
    /// file uses, given without one, were ignored.
    #[test]
    fn trace_only_options_need_a_trace() {
        for (opt, val) in
            [("--wrap", None), ("--skip-bad-lines", None), ("--format", Some("msr")), ("--volume", Some("7"))]
        {
            for source in [&["--synth", "requests=100"][..], &["--replica", "mail@0.001"], &[]] {
                let mut cmd = dedupsim();
                cmd.args(["run", "-q", "-p", "native", "--preset", "tiny"]).args(source).arg(opt);
                if let Some(v) = val {
                    cmd.arg(v);
                }
                let needle = if source.is_empty() { "--trace <TRACE>".to_string() } else { opt.to_string() };
                fails_with(&mut cmd, 2, &[&needle]);
            }
        }
        // The device-too-small message no longer offers --wrap to a synthetic workload.
        let a = dedupsim()
            .args(["run", "-q", "-p", "native", "--preset", "tiny", "--synth", "requests=100"])
            .assert()
            .code(1);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains("or a smaller workload (footprint= of a synthetic spec"), "{err}");
        assert!(!err.contains("or replay with --wrap"), "{err}");
    }

    #[test]
    fn a_flag_and_a_set_of_the_same_key_conflict() {
        let synth = ["run", "-q", "-p", "dedup", "--synth", "requests=100"];
        fails_with(
            dedupsim().args(synth).args(["--engine", "smartdedup", "--set", "dedup.engine=\"light-dedup\""]),
            1,
            &["--engine and --set dedup.engine=... both set dedup.engine; give only one"],
        );
        fails_with(
            dedupsim().args(synth).args(["--seed", "3", "--set", " seed = 4"]),
            1,
            &["--seed and --set seed=..."],
        );
        dedupsim().args(synth).args(["--engine", "smartdedup", "--set", "seed=4"]).assert().success();
    }

    #[test]
    fn many_jobs_start_no_more_threads_than_runs() {
        // `-j 100000` spawned 100,000 threads for one run (a hang).
        dedupsim()
            .args(["run", "-q", "-p", "native", "--synth", "requests=100", "-j", "100000"])
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .success();
    }

    #[test]
    fn unwritable_outputs_are_refused_before_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/dir/out.json");
        fails_with(
            dedupsim().args(["run", "-q", "-p", "native", "--synth", "requests=100", "--json"]).arg(&missing),
            1,
            &["--json", "does not exist; create it first"],
        );
        fails_with(
            dedupsim().args(["run", "-q", "-p", "native", "--synth", "requests=100", "--csv"]).arg(dir.path()),
            1,
            &["is a directory; give a file name"],
        );
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        fails_with(
            dedupsim().args(["reproduce", "fad", "--quick", "--out"]).arg(&file),
            1,
            &["is a file, not a directory"],
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"x");
    }

    #[test]
    fn a_policy_named_twice_is_refused() {
        fails_with(
            dedupsim().args(["run", "-q", "-p", "native,native"]),
            1,
            &["-p native,native: policy 'native' is named twice"],
        );
        fails_with(
            dedupsim().args(["run", "-q", "-p", "all,fad"]),
            1,
            &["policy 'fad' is named twice (`all` names every policy)"],
        );
        fails_with(dedupsim().args(["bench", "-p", "fad", "-p", "dedup,fad"]), 1, &["policy 'fad' is named twice"]);
    }

    #[test]
    fn a_bad_config_value_names_its_file_or_set() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "base = \"tiny\"\n[geometry]\nchannels = 0\n").unwrap();
        let child = dir.path().join("child.toml");
        std::fs::write(&child, "base = \"bad.toml\"\nseed = 1\n").unwrap();
        let named = format!("{}: geometry.channels = 0: must be at least 1", bad.display());
        fails_with(dedupsim().args(["config", "show"]).arg(&bad), 1, &[&named]);
        fails_with(dedupsim().args(["run", "-q", "--config"]).arg(&bad), 1, &[&named]);
        // Set in the base file of the file given: that base is named.
        fails_with(dedupsim().args(["run", "-q", "--config"]).arg(&child), 1, &[&named]);
        // A --set of the key wins over the file: the file is not blamed.
        fails_with(
            dedupsim().args(["run", "-q", "--set", "geometry.channels=0", "--config"]).arg(&bad),
            1,
            &["error: geometry.channels = 0: must be at least 1"],
        );
    }

    #[test]
    fn messages_name_the_real_problem() {
        fails_with(dedupsim().args(["run", "-q", "--max-requests", "0"]), 2, &["'--max-requests <MAX_REQUESTS>'"]);
        fails_with(dedupsim().args(["config", "show", "/dev/null"]), 1, &["exists but is not a regular file"]);
        let dir = tempfile::tempdir().unwrap();
        fails_with(
            dedupsim().args(["run", "-q", "--config"]).arg(dir.path()),
            1,
            &["exists but is not a regular file"],
        );
    }
}

/// Issue 12, bad input 3: a valid but huge device is refused with the
/// estimate before anything is allocated, instead of aborting in the
/// allocator (exit 134).
mod memory {
    use super::*;

    /// MemAvailable in bytes, if known.
    fn mem_available() -> Option<u64> {
        let s = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib: u64 = s.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    #[test]
    fn a_huge_device_is_refused_with_the_estimate() {
        let huge = ["--set", "geometry.blocks_per_plane=409600"];
        // 16 TB raw: valid, and config show prints what a run would need.
        dedupsim()
            .args(["config", "show"])
            .args(huge)
            .assert()
            .success()
            .stdout(predicate::str::contains("# memory per run         91.4 GiB (L2P 12.5 GiB"));
        // Refused against --max-memory, naming the estimate, for every command that simulates.
        let refused = |cmd: &mut Command| {
            cmd.assert()
                .code(1)
                .stderr(predicate::str::contains("not enough memory").and(predicate::str::contains("91.4 GiB")))
                .stderr(predicate::str::contains("--max-memory"));
        };
        refused(dedupsim().args(["run", "-q", "-p", "native", "--max-memory", "64GiB"]).args(huge));
        refused(dedupsim().args(["bench", "--requests", "10", "--max-memory", "64GiB"]).args(huge));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        refused(
            dedupsim()
                .args(["reproduce", "fad", "--quick", "-q", "--only", "mail", "--max-memory", "64GiB", "--out"])
                .arg(&out)
                .args(huge),
        );
        assert!(!out.exists(), "refused before writing anything");
        let sweep = dir.path().join("s.toml");
        std::fs::write(
            &sweep,
            "name = \"big\"\n[grid]\nworkloads = [\"synth:requests=10\"]\npolicies = [\"native\"]\n[grid.set]\n\"geometry.blocks_per_plane\" = [128, 409600]\n",
        )
        .unwrap();
        refused(dedupsim().args(["sweep", "--max-memory", "64GiB", "-q", "--out"]).arg(&out).arg(&sweep));
        // Without --max-memory the limit is the machine's available memory.
        if mem_available().is_some_and(|m| m < 90 << 30) {
            dedupsim()
                .args(["run", "-q", "-p", "native"])
                .args(huge)
                .assert()
                .code(1)
                .stderr(predicate::str::contains("MemAvailable").and(predicate::str::contains("91.4 GiB")));
        }
    }

    #[test]
    fn the_limit_counts_parallel_runs_and_check() {
        let run = ["run", "-q", "--synth", "requests=100"];
        // FAD Table I: 467.8 MiB per run, 531.8 MiB with --check's shadow map.
        dedupsim().args(run).args(["-p", "native", "--max-memory", "500MiB"]).assert().success();
        dedupsim()
            .args(run)
            .args(["-p", "native", "--check", "--max-memory", "500MiB"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("--check shadow map 64.0 MiB"));
        dedupsim()
            .args(run)
            .args(["-p", "native,dedup", "-j", "2", "--max-memory", "500MiB"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("2 simulations at once").and(predicate::str::contains("-j 1")));
        dedupsim().args(run).args(["-p", "native,dedup", "-j", "1", "--max-memory", "500MiB"]).assert().success();
        dedupsim().args(run).args(["--max-memory", "lots"]).assert().code(2);
    }
}
