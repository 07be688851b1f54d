//! CLI scenarios (assert_cmd): the default job, determinism, `--check`, and
//! one test per class of bad input (clear message, exit code 1, no panic).

use assert_cmd::Command;
use predicates::prelude::*;
use std::io::Write;

fn dedupsim() -> Command {
    Command::cargo_bin("dedupsim").expect("binary builds")
}

const SMALL: &str = "requests=3000,footprint=1GiB,hot=0.4:256MiB";

mod default_job {
    use super::*;

    #[test]
    fn run_without_files_compares_policies() {
        dedupsim()
            .args(["run", "--quiet", "--synth", SMALL, "-p", "native,dedup,fad"])
            .assert()
            .success()
            .stdout(predicate::str::contains("native").and(predicate::str::contains("fad")))
            .stdout(predicate::str::contains("DOF rd"));
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

    #[test]
    fn replica_trace_keeps_its_label_and_dedup_rate() {
        // A Table II replica written as a native trace: `trace synth` reports
        // the replica's own realized dedup rate (not the unused content
        // model's), and `trace stats` shows its label and matches the row.
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("mail.trace");
        dedupsim()
            .args(["trace", "synth", "--replica", "mail@0.02", "-o"])
            .arg(&t)
            .assert()
            .success()
            .stderr(predicate::str::contains("content from the workload, realized dedup 91.0%"));
        dedupsim()
            .args(["trace", "stats"])
            .arg(&t)
            .assert()
            .success()
            .stdout(predicate::str::contains("written from mail: synthetic (Table II-matched)"))
            .stdout(predicate::str::contains("dedup rate          91.0"));
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
