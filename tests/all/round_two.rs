//! Issue 30, "Hardening, round two": one test per class of defect
//! (docs/reliability.md, "Round two"). Run with `cargo test --release
//! --test all round_two::`.

use crate::support::Command;

fn dedupsim() -> Command {
    Command::cargo_bin("dedupsim").expect("binary builds")
}

const SYNTH: &str = "requests=200,footprint=1MiB,hot=0";

fn fails(args: &[&str], code: i32, needles: &[&str]) {
    dedupsim().args(args).assert().fails_with(code, needles);
}

/// Class A: exit 0 with a wrong, ignored or overflowing input.
mod class_a {
    use super::*;

    /// Every time-like engine and policy parameter is bounded like
    /// `dedup.fingerprint` (hash times) or to an hour (idle thresholds,
    /// periods), naming the key and its unit; huge numbers print short.
    #[test]
    fn time_like_parameters_are_bounded() {
        let run = |extra: &[&str], needles: &[&str]| {
            let mut a = vec!["run", "-q", "-p", "dedup", "--synth", SYNTH];
            a.extend_from_slice(extra);
            fails(&a, 1, needles);
        };
        run(
            &["--engine", "smartdedup", "--set", "engine.smartdedup.hash_us=1e13"],
            &["hash_us = 1e13: more than 1000000 µs (1s)", "is in µs"],
        );
        run(&["--engine", "light-dedup", "--set", "engine.light-dedup.hash_us=1e30"], &["hash_us = 1e30"]);
        run(&["--engine", "smartdedup", "--set", "engine.smartdedup.idle_ms=1e300"], &["idle_ms = 1e300: more than"]);
        run(
            &["--engine", "smartdedup", "--set", "engine.smartdedup.period_s=4000"],
            &["period_s = 4000: more than 3600 s"],
        );
        fails(
            &["run", "-q", "-p", "reodedup-csr", "--synth", SYNTH, "--set", "policy.reodedup-csr.period_ms=1e20"],
            1,
            &["period_ms = 1e20"],
        );
        // Within the bounds, runs go on.
        dedupsim()
            .args(["run", "-q", "-p", "dedup", "--synth", SYNTH, "--engine", "smartdedup"])
            .args(["--set", "engine.smartdedup.hash_us=1e6"])
            .assert()
            .success();
    }

    /// Arrivals beyond the clock are refused at the spec (`iat=`) or the
    /// load (`--utilization`), not blamed on `replay.time_scale`.
    #[test]
    fn arrivals_beyond_the_clock_name_their_cause() {
        let spec = format!("{SYNTH},iat=exp:1e30s");
        fails(&["run", "-q", "-p", "dedup", "--synth", &spec], 1, &["iat: 200 requests x a mean gap of 1e36 us"]);
        let out = dedupsim().args(["run", "-q", "-p", "dedup", "--synth", &spec]).assert().get_output().clone();
        assert!(!String::from_utf8_lossy(&out.stderr).contains("time_scale"));
        fails(&["reproduce", "fad", "--quick", "--utilization", "1e-12"], 2, &["a utilization below 1e-6"]);
    }

    /// Flags a subcommand ignored or let another setting contradict.
    #[test]
    fn ignored_or_contradicted_flags_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o");
        let out = out.to_str().unwrap();
        fails(
            &["reproduce", "smartdedup", "--quick", "--engine", "light-dedup", "--out", out],
            1,
            &["--engine light-dedup: reproduce smartdedup sets the dedup engine of every variant itself"],
        );
        fails(
            &["reproduce", "light-dedup", "--quick", "--set", "dedup.engine=\"smartdedup\"", "--out", out],
            1,
            &["reproduce light-dedup sets the dedup engine", "baseline runs caftl"],
        );
        fails(
            &["reproduce", "fad", "--quick", "--aged", "0.5", "--set", "precondition.aged=0.2", "--out", out],
            1,
            &["--aged and --set precondition.aged=... both set precondition.aged"],
        );
        let t = dir.path().join("t").to_str().unwrap().to_string();
        fails(&["trace", "synth", "--engine", "smartdedup", "-o", &t], 1, &["trace synth writes a workload"]);
        assert!(!std::path::Path::new(&t).exists());
        fails(&["bench", "--repeat", "0"], 2, &["'--repeat <REPEAT>'"]);
        fails(&["bench", "--requests", "0"], 2, &["'--requests <REQUESTS>'"]);
        assert!(!std::path::Path::new(out).exists(), "nothing written");
    }

    /// `[engine.caftl]` has no parameters: any key is an error, also from a
    /// sweep's `[grid.set]`.
    #[test]
    fn unknown_caftl_keys_are_errors() {
        fails(
            &["run", "-q", "-p", "dedup", "--synth", SYNTH, "--set", "engine.caftl.memroy_mb=3"],
            1,
            &["caftl has no parameters, but [engine.caftl] holds `memroy_mb`"],
        );
        fails(&["config", "show", "--set", "engine.caftl.x=1"], 1, &["caftl has no parameters"]);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.toml");
        std::fs::write(
            &f,
            "name = \"s\"\n[grid]\nworkloads = [\"synth:requests=100\"]\npolicies = [\"dedup\"]\n[grid.set]\n\"engine.caftl.x\" = [1]\n",
        )
        .unwrap();
        dedupsim()
            .args(["sweep", "-q", "--out"])
            .arg(dir.path().join("out"))
            .arg(&f)
            .assert()
            .fails_with(1, &["caftl has no parameters"]);
    }

    /// An FIO-like workload's dedup ratio must be reachable by its files.
    #[test]
    fn unreachable_fio_dedup_ratios_give_the_range() {
        fails(
            &["cluster", "-q", "--workload", "fio:dedup=20,files=4,size=8KiB,scope=file"],
            1,
            &["a dedup ratio of 20 is out of reach", "expect a ratio of 1.905", "reachable ratios are 1 to 1.020"],
        );
        fails(
            &["cluster", "-q", "--workload", "fio:dedup=1e300,scope=file"],
            1,
            &["a dedup ratio of 1e300", "4096 pages"],
        );
        // With sharing across files (the default) the pool is the whole
        // workload: 8 pages expect 8 / (1 + 7/20) = 5.926.
        fails(
            &["cluster", "-q", "--workload", "fio:dedup=20,files=4,size=8KiB"],
            1,
            &["the workload's 8 pages expect a ratio of 5.926", "reachable ratios are 1 to 1.081"],
        );
    }

    /// Extra fields on MSR, SYSTOR, Tencent and SSDsim/MQSim lines are bad
    /// lines when the format is named, as detection would have it.
    #[test]
    fn extra_fields_are_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(60_000);
        for (fmt, line, n) in [
            ("msr", format!("1,hm,0,Write,0,4096,1,{big}"), 7),
            ("systor", "0.1,0.001,W,1,0,4096,extra".to_string(), 6),
            ("tencent", "1538323200,0,8,1,1,extra".to_string(), 5),
            ("ssdsim", "0 0 0 8 1 extra".to_string(), 5),
            ("mqsim", "0 0 0 8 1 extra".to_string(), 5),
        ] {
            let f = dir.path().join(fmt);
            std::fs::write(&f, format!("{line}\n")).unwrap();
            dedupsim()
                .args(["trace", "stats", "--format", fmt])
                .arg(&f)
                .assert()
                .fails_with(1, &[&format!("expected at most {n} fields"), "is this the right --format?"]);
        }
    }
}

/// Class B: input destroyed, memory beyond its bound, inconsistent outputs.
mod class_b {
    use super::*;

    /// The memory estimate counts the engine's tables: SmartDedup with
    /// 2^24 groups needs over 1 GiB per run beyond the FTL's 467.8 MiB.
    #[test]
    fn the_memory_estimate_counts_engine_tables() {
        fails(
            &[
                "run",
                "-q",
                "-p",
                "dedup,fad",
                "-j",
                "2",
                "--max-memory",
                "1GiB",
                "--synth",
                SYNTH,
                "--engine",
                "smartdedup",
                "--set",
                "engine.smartdedup.prefix_bits=24",
                "--set",
                "engine.smartdedup.memory_mb=200",
            ],
            1,
            &["not enough memory: 2 simulations at once", "dedup engine 1."],
        );
        dedupsim()
            .args([
                "config",
                "show",
                "--set",
                "dedup.engine=\"smartdedup\"",
                "--set",
                "engine.smartdedup.prefix_bits=24",
                "--set",
                "engine.smartdedup.memory_mb=200",
            ])
            .assert()
            .success()
            .stdout(crate::support::predicate::str::contains("dedup engine 1."));
    }

    /// `--max-memory` (default: the machine's available memory) is checked
    /// by every reproduction, the declared ones too, against its largest
    /// cell with the engine's tables counted, and by `sweep run-cell`,
    /// before anything is written.
    #[test]
    fn every_reproduction_checks_its_memory() {
        let dir = tempfile::tempdir().unwrap();
        for (name, limit, needles) in [
            // 779.8 MiB: the group lists keep each fingerprint beside its
            // node id (12 B per in-memory fingerprint, was 4 B: + 9.9 MiB
            // at the 40 MB cell's 1,293,243 fingerprints), each group
            // records where its on-flash array's eviction tail starts
            // (`Group` 8 B larger: + 2.0 MiB for its 2^18 groups), and a
            // group is one 64-byte cache line (its two flags folded into
            // its links and `main`: 72 -> 64 B, - 2.0 MiB).
            ("smartdedup", "1GiB", &["not enough memory", "dedup engine 779.8 MiB", "1.0 GiB of --max-memory"][..]),
            ("light-dedup", "1GiB", &["not enough memory", "dedup engine 1.0 GiB"]),
            ("reodedup", "100MiB", &["not enough memory", "467.8 MiB each"]),
            ("fast24", "10MiB", &["not enough memory", "12.4 MiB each"]),
        ] {
            let out = dir.path().join(name);
            dedupsim()
                .args(["reproduce", name, "--quick", "-q", "-j", "2", "--max-memory", limit, "--out"])
                .arg(&out)
                .assert()
                .fails_with(1, needles);
            assert!(!out.exists(), "{name}: {} was created", out.display());
        }
        fails(&["reproduce", "fast24", "--max-memory", "-1GiB"], 2, &["`-1GiB` is negative"]);
        // One cell of a job array likewise.
        let out = dir.path().join("cell");
        dedupsim()
            .args(["sweep", "run-cell", "--name", "s", "--workload", "synth:requests=100", "--policy", "dedup"])
            .args(["--max-memory", "100MiB", "--out"])
            .arg(&out)
            .assert()
            .fails_with(1, &["not enough memory: the simulation needs an estimated 467.8 MiB"]);
        assert!(!out.join("cells").exists());
    }

    /// Outputs that could not be written at the end are refused before
    /// the work: a name too long for the file system, a read-only
    /// directory (when not root), an output inside a `cluster
    /// --from-files` tree.
    #[test]
    fn unwritable_outputs_are_refused_before_the_work() {
        let dir = tempfile::tempdir().unwrap();
        let long = dir.path().join(format!("{}.json", "a".repeat(300)));
        fails(
            &["run", "-q", "-p", "native", "--synth", SYNTH, "--json", long.to_str().unwrap()],
            1,
            &["--json", "cannot be written", "File name too long"],
        );
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        std::fs::write(tree.join("f"), vec![7u8; 8192]).unwrap();
        let inside = tree.join("out.json");
        fails(
            &["cluster", "-q", "--from-files", tree.to_str().unwrap(), "--json", inside.to_str().unwrap()],
            1,
            &["the output lies inside the --from-files tree"],
        );
        assert!(!inside.exists());
    }

    /// A sweep's `trace:` workload that is missing or not a trace is named
    /// by its line before any cell runs.
    #[test]
    fn sweep_traces_are_checked_before_any_cell_runs() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage.bin");
        std::fs::write(&garbage, [0xffu8, 0xfe, 0x00, 0x13, 0x80, b'\n'].repeat(50)).unwrap();
        for (trace, needle) in
            [("nope.csv", "nope.csv: No such file"), ("garbage.bin", "cannot detect the trace format")]
        {
            let f = dir.path().join("s.toml");
            std::fs::write(
                &f,
                format!(
                    "name = \"s\"\n[grid]\nworkloads = [\"synth:requests=100\",\n  \"trace:{trace}\"]\npolicies = [\"native\"]\n"
                ),
            )
            .unwrap();
            let out = dir.path().join("out");
            let line = format!("{}:4: [grid] workloads: workload `trace:{trace}`: ", f.display());
            dedupsim().args(["sweep", "-q", "--out"]).arg(&out).arg(&f).assert().fails_with(1, &[&line, needle]);
            assert!(!out.exists(), "no cell ran");
        }
    }

    /// A sweep file, a profile or a peer config that never ends
    /// (`/dev/zero`) is refused once past 64 MiB, not read until the memory
    /// runs out.
    #[test]
    fn parameter_files_that_never_end_are_refused() {
        if !std::path::Path::new("/dev/zero").exists() {
            return;
        }
        let too_big = "more than 64 MiB, far more than a parameter file holds";
        for (args, named) in [
            (&["sweep", "/dev/zero"][..], "/dev/zero: "),
            (&["run", "-q", "--profile", "/dev/zero"], "cannot read profile /dev/zero: "),
            (&["config", "import", "/dev/zero"], "cannot read /dev/zero: "),
        ] {
            Command::under_limits("ulimit -v 4194304")
                .args(args)
                .timeout(std::time::Duration::from_secs(60))
                .assert()
                .fails_with(1, &[named, too_big]);
        }
    }

    /// An output directory is one experiment's consistent set: another
    /// experiment's directory is refused (also by `sweep collect`), and a
    /// run that did not finish is said so by the next one.
    #[test]
    fn output_directories_hold_one_consistent_set() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.toml");
        std::fs::write(&f, "name = \"s\"\n[grid]\nworkloads = [\"synth:requests=100\"]\npolicies = [\"native\"]\n")
            .unwrap();
        let out = dir.path().join("out");
        dedupsim().args(["sweep", "-q", "--out"]).arg(&out).arg(&f).assert().success();
        let marker = std::fs::read_to_string(out.join(".dedupsim-output")).unwrap();
        assert_eq!(marker, "output of: sweep s\ncomplete: yes\n");
        // Another experiment's output directory.
        for args in [&["reproduce", "fad", "--quick", "--out"][..], &["reproduce", "reodedup", "--quick", "--out"]] {
            dedupsim()
                .args(args)
                .arg(&out)
                .assert()
                .fails_with(1, &["holds the output of `sweep s`", "would mix two experiments'"]);
        }
        std::fs::write(out.join(".dedupsim-output"), "output of: reproduce fad\ncomplete: yes\n").unwrap();
        dedupsim()
            .args(["sweep", "collect"])
            .arg(&out)
            .assert()
            .fails_with(1, &["holds the output of `reproduce fad`, not of a sweep's job lines"]);
        // A run stopped half-way (SIGTERM) leaves the marker incomplete.
        std::fs::write(out.join(".dedupsim-output"), "output of: sweep s\ncomplete: no\n").unwrap();
        let a = dedupsim().args(["sweep", "--out"]).arg(&out).arg(&f).assert().success();
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(err.contains("the previous `sweep s` run into it did not finish"), "{err}");
        assert!(std::fs::read_to_string(out.join(".dedupsim-output")).unwrap().ends_with("complete: yes\n"));
    }
}

/// Class C: misleading messages.
mod class_c {
    use super::*;

    /// Negative numbers are values, rejected with a message about them
    /// (clap said "unexpected argument '-1' found").
    #[test]
    fn negative_numbers_are_values_with_clear_errors() {
        fails(&["run", "-q", "--time-scale", "-1"], 1, &["replay.time_scale = -1.0: must be a positive finite factor"]);
        fails(&["run", "-q", "--seed", "-5"], 2, &["`-5` is negative: give a whole number from 0 to"]);
        fails(&["run", "-q", "--max-memory", "-1GiB"], 2, &["`-1GiB` is negative: a memory size is at least 0"]);
        fails(&["run", "-q", "-j", "-2"], 2, &["`-2` is negative"]);
        fails(&["reproduce", "fad", "--quick", "--aged", "-1"], 1, &["precondition.aged = -1.0"]);
        fails(&["reproduce", "fad", "--quick", "--scale", "-1"], 1, &["--scale -1 must be in (0, 1]"]);
        fails(&["cluster", "-q", "--update-ratio", "-1"], 1, &["--update-ratio: -1 is not in [0, 1]"]);
        for args in [&["run", "-q", "--seed", "-5"][..], &["reproduce", "fad", "--aged", "-1"]] {
            let a = dedupsim().args(args).assert();
            assert!(!String::from_utf8_lossy(&a.get_output().stderr).contains("unexpected argument"));
        }
    }

    /// A negative number to any flag that takes none (not only those with
    /// their own parser) names the flag, not "unexpected argument '-1'".
    #[test]
    fn a_negative_number_to_any_flag_names_the_flag() {
        let neg = "is negative, and";
        fails(&["run", "-q", "--max-requests", "-1"], 2, &["'--max-requests <MAX_REQUESTS>'", neg]);
        fails(&["run", "-q", "--check", "--check-every", "-5"], 2, &["'--check-every <N>'", "`-5`", neg]);
        fails(&["run", "-q", "--timeseries", "-1us", "--timeseries-out", "x.csv"], 2, &["'--timeseries <INTERVAL>'"]);
        fails(
            &["trace", "convert", "t", "--to", "ssdsim", "-o", "x", "--max-requests", "-3"],
            2,
            &["--max-requests", neg],
        );
        fails(&["trace", "from-files", "d", "-o", "x", "--inter-arrival", "-1us"], 2, &["'--inter-arrival", neg]);
        fails(&["cluster", "-q", "--nodes", "-1"], 2, &["'--nodes <NODES>'", neg]);
        fails(&["serve", "--status-every", "-5"], 2, &["'--status-every", neg]);
        for args in [&["run", "-q", "--queue-depth", "-1"][..], &["cluster", "--read-cache", "-1"]] {
            let a = dedupsim().args(args).assert().code(2);
            assert!(!String::from_utf8_lossy(&a.get_output().stderr).contains("unexpected argument"));
        }
        // A stray negative number after a flag that takes no value stays clap's error.
        fails(&["run", "-q", "-1"], 2, &["unexpected argument '-1' found"]);
    }

    /// Values of flags whose errors came from deeper down name the flag.
    #[test]
    fn deeper_errors_name_their_flag() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o").display().to_string();
        fails(&["reproduce", "fad", "-q", "--only", "nope", "--out", &out], 1, &["--only: not a Table II workload"]);
        let none = dir.path().join("none").display().to_string();
        fails(&["reproduce", "light-dedup", "-q", "--recorded", &none, "--out", &out], 1, &["--recorded: cannot list"]);
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        std::fs::write(tree.join("f"), b"x").unwrap();
        let t = tree.display().to_string();
        let o = dir.path().join("o.trace").display().to_string();
        fails(
            &["trace", "from-files", "-q", &t, "-o", &o, "--page-size", "0"],
            1,
            &["--page-size 0: not a power of two"],
        );
        assert!(!dir.path().join("o.trace").exists());
    }

    /// Messages that named the wrong problem or the wrong flag.
    #[test]
    fn messages_name_the_real_problem() {
        let dir = tempfile::tempdir().unwrap();
        // An append offset of 2^64: out of range, not a malformed hint.
        let t = dir.path().join("h.native");
        std::fs::write(&t, "# dedupsim-trace v1\n0 W 0 4096 0 - o\n1000 W 4096 4096 0 - a:18446744073709551616\n")
            .unwrap();
        dedupsim()
            .args(["trace", "stats"])
            .arg(&t)
            .assert()
            .fails_with(1, &["field 7 (hint) is out of range: the append offset must be at most 2^64-1"]);
        // With --wrap, an append hint beyond 2^32 pages folds like its request.
        let t = dir.path().join("w.native");
        std::fs::write(&t, "# dedupsim-trace v1\n0 W 0 4096 0 -\n1000 W 4096 4096 0 - a:100000000000000000\n").unwrap();
        let a =
            dedupsim().args(["run", "-q", "-p", "die-hint", "--preset", "tiny", "--wrap", "--trace"]).arg(&t).assert();
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(!err.contains("use --wrap"), "{err}");
        // `sweep run-cell --param` errors name --param.
        dedupsim()
            .args(["sweep", "run-cell", "--name", "x", "--workload", "synth:requests=100", "--policy", "fad"])
            .args(["--param", "geometry.chanels=3", "--out"])
            .arg(dir.path().join("rc"))
            .assert()
            .fails_with(1, &["--param geometry.chanels=3: unknown key"]);
        // A superchunk count beyond 2^32 - 1 is out of range, not "not a whole number of chunks".
        fails(
            &["cluster", "-q", "--mode", "superchunk", "--superchunk", "18446744073709551615"],
            1,
            &["a count of chunks must be at most 4294967295"],
        );
        // A dangling symbolic link as --out.
        #[cfg(unix)]
        {
            let l = dir.path().join("link");
            std::os::unix::fs::symlink(dir.path().join("nowhere"), &l).unwrap();
            fails(
                &["reproduce", "fad", "--quick", "--out", l.to_str().unwrap()],
                1,
                &["is a symbolic link to", "which does not exist"],
            );
        }
        // Huge numbers print short in errors and "changed from" lines.
        let a = dedupsim()
            .args(["run", "-p", "dedup", "--synth", SYNTH, "--set", "policy.fad.rho=1e300"])
            .assert()
            .success();
        assert!(String::from_utf8_lossy(&a.get_output().stdout).contains("policy.fad.rho=1e300"));
    }
}

/// Class D: one set of conventions.
mod class_d {
    use super::*;

    /// `-` means standard output for every output flag (`run --json -`
    /// wrote a file named `-`); two outputs cannot both take it.
    #[test]
    fn a_dash_is_standard_output() {
        let dir = tempfile::tempdir().unwrap();
        let a = dedupsim()
            .current_dir(dir.path())
            .args(["run", "-q", "-p", "native", "--synth", "requests=100", "--json", "-"])
            .assert()
            .success();
        let out = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        assert!(out.starts_with("[\n") && out.contains("\"dedupsim_version\""), "{out}");
        assert!(!dir.path().join("-").exists());
        fails(
            &["run", "-q", "-p", "native", "--synth", "requests=100", "--json", "-", "--csv", "-"],
            1,
            &["--json and --csv all name standard output"],
        );
    }

    /// Sizes take units everywhere (`trace from-files --page-size 16KiB`);
    /// `trace stats` says n/a for a missing average and shows short spans
    /// in their unit.
    #[test]
    fn units_and_stats_conventions() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("t");
        std::fs::create_dir(&tree).unwrap();
        std::fs::write(tree.join("f"), vec![1u8; 20000]).unwrap();
        let out = dir.path().join("o.native");
        dedupsim()
            .args(["trace", "from-files", "-q", "--page-size", "16KiB", "-o"])
            .arg(&out)
            .arg(&tree)
            .assert()
            .success();
        // The same bound as geometry.page_size (1 MiB), not 2^32 - 1.
        let big = dedupsim()
            .args(["trace", "from-files", "-q", "--page-size", "2MiB", "-o"])
            .arg(dir.path().join("big.native"))
            .arg(&tree)
            .assert()
            .failure();
        let e = String::from_utf8_lossy(&big.get_output().stderr).to_string();
        assert!(e.contains("more than 1 MiB, the bound of geometry.page_size"), "{e}");
        let w = dir.path().join("w.native");
        std::fs::write(&w, "# dedupsim-trace v1\n0 W 0 4096 0\n300000 W 4096 4096 0\n").unwrap();
        let a = dedupsim().args(["trace", "stats"]).arg(&w).assert().success();
        let s = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        assert!(s.contains("avg read size       n/a") && s.contains("duration            300.000 µs"), "{s}");
    }

    /// Engine and policy parameters take sizes and times with units under
    /// unit-bearing names (`memory = "6MiB"`, `hash = "8us"`), the old
    /// bare-number names stay as aliases with the same results, both
    /// together or a value without a unit are errors, and the new times
    /// have the aliases' bounds. `config show` lists every engine's
    /// parameters with their defaults.
    #[test]
    fn engine_keys_take_units_and_keep_their_old_names() {
        let json = |sets: &[&str]| {
            let mut a = vec!["run", "-q", "-p", "dedup", "--synth", SYNTH, "--engine", "smartdedup", "--json", "-"];
            for s in sets {
                a.extend_from_slice(&["--set", s]);
            }
            let out = dedupsim().args(&a).assert().success().get_output().stdout.clone();
            let mut v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            let run = v[0].as_object_mut().unwrap();
            // The spelling of the keys differs, nothing else.
            run.remove("config_hash");
            run.remove("config_changes");
            serde_json::Value::Object(run.clone())
        };
        let new = json(&[
            "engine.smartdedup.memory=6MiB",
            "engine.smartdedup.hash=8us",
            "engine.smartdedup.idle=5ms",
            "engine.smartdedup.period=500ms",
            "engine.smartdedup.skipped=256KiB",
        ]);
        let old = json(&[
            "engine.smartdedup.memory_mb=6",
            "engine.smartdedup.hash_us=8",
            "engine.smartdedup.idle_ms=5",
            "engine.smartdedup.period_s=0.5",
            "engine.smartdedup.skipped_mb=0.25",
        ]);
        assert!(new["engine_stats"].is_object() || new["engine_stats"].is_array(), "{new}");
        assert_eq!(new, old);
        // The hash time reaches the simulation: 8 us differs from 16 us.
        assert_ne!(new, json(&["engine.smartdedup.hash=16us"]));
        let run = |extra: &[&str], needles: &[&str]| {
            let mut a = vec!["run", "-q", "-p", "dedup", "--synth", SYNTH];
            a.extend_from_slice(extra);
            fails(&a, 1, needles);
        };
        run(
            &[
                "--engine",
                "smartdedup",
                "--set",
                "engine.smartdedup.memory=3MiB",
                "--set",
                "engine.smartdedup.memory_mb=3",
            ],
            &["both `memory` and `memory_mb` (its old name, in MiB) are given; give only one"],
        );
        run(
            &["--engine", "smartdedup", "--set", "engine.smartdedup.hash=16"],
            &["hash = 16: give a unit, e.g. hash = \"16us\" (or the old key hash_us = 16, in µs)"],
        );
        run(&["--engine", "light-dedup", "--set", "engine.light-dedup.hash=2s"], &["hash = \"2s\": more than 1s"]);
        run(&["--engine", "smartdedup", "--set", "engine.smartdedup.period=2h"], &["unknown time unit `h`"]);
        run(&["--engine", "smartdedup", "--set", "engine.smartdedup.memory=3MB"], &["ambiguous"]);
        fails(
            &["run", "-q", "-p", "reodedup-csr", "--synth", SYNTH, "--set", "policy.reodedup-csr.idle=5000s"],
            1,
            &["idle = \"5000s\": more than 3600s"],
        );
        dedupsim()
            .args(["run", "-q", "-p", "reodedup-csr", "--synth", SYNTH, "--set", "policy.reodedup-csr.idle=2ms"])
            .assert()
            .success();
        let show = dedupsim()
            .args(["config", "show", "--set", "engine.light-dedup.hash_us=0.5"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let show = String::from_utf8_lossy(&show).to_string();
        for needle in [
            "# [engine.caftl] (dedup.engine)",
            "# [engine.smartdedup]\n",
            "#   memory = \"3MiB\"",
            "#   hash = \"16us\"",
            "#   period = \"1s\"",
            "# [engine.light-dedup]\n",
            "#   hash = \"500ns\"",
        ] {
            assert!(show.contains(needle), "{needle} not in {show}");
        }
    }

    /// Output conventions: `cluster --reproduce --out DIR` writes
    /// DIR/REPORT.md (it printed to stdout and ignored --out) and prints no
    /// progress when stderr is not a terminal; every reproduction and
    /// sweep ends with one summary saying how many cells were reused;
    /// engine statistics are columns, not one line of 40 raw floats; the
    /// run header says why `dedup=` and the realized rate differ; a sweep
    /// warns about rows a policy's ignored parameter repeats.
    #[test]
    fn output_conventions() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cl");
        let a = dedupsim().args(["cluster", "--reproduce", "--quick", "--out"]).arg(&out).assert().success();
        let (o, e) = (&a.get_output().stdout, String::from_utf8_lossy(&a.get_output().stderr).to_string());
        assert!(o.is_empty(), "stdout: {}", String::from_utf8_lossy(o));
        assert_eq!(e.trim(), format!("wrote {}", out.join("REPORT.md").display()));
        assert!(std::fs::read_to_string(out.join("REPORT.md")).unwrap().contains("Table I"));
        assert!(std::fs::read_to_string(out.join(".dedupsim-output")).unwrap().ends_with("complete: yes\n"));
        // Without --out: Markdown on stdout, still no progress off a terminal.
        let a = dedupsim().args(["cluster", "--reproduce", "--quick"]).assert().success();
        assert!(a.get_output().stderr.is_empty(), "{}", String::from_utf8_lossy(&a.get_output().stderr));
        // One summary, saying what a resumed run reused.
        let out = dir.path().join("f24");
        let run = || {
            let a =
                dedupsim().args(["reproduce", "fast24", "--quick", "--no-plots", "--out"]).arg(&out).assert().success();
            String::from_utf8_lossy(&a.get_output().stderr).to_string()
        };
        let first = run();
        let n = first.split(" cells (").next().and_then(|l| l.rsplit('\n').next()).unwrap().trim().to_string();
        assert!(first.contains(&format!("{n} cells ({n} computed, 0 reused from the cell cache of --out)")), "{first}");
        let again = run();
        assert!(again.contains(&format!("{n} cells (0 computed, {n} reused from the cell cache of --out)")), "{again}");
        assert!(again.contains("result rows on"), "{again}");
        // Engine statistics in columns; the header explains the two rates.
        let a = dedupsim().args(["run", "-p", "dedup", "--synth", SYNTH, "--engine", "light-dedup"]).assert().success();
        let t = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        assert!(t.contains("engine light-dedup statistics (JSON engine_stats):"), "{t}");
        assert!(t.contains("flash work the simulator ran for the engine:"), "{t}");
        let block: Vec<&str> = t.lines().filter(|l| l.starts_with("  ")).collect();
        assert!(block.len() >= 10 && block.iter().all(|l| l.len() <= 100), "{t}");
        assert!(!t.contains("engine_dup_pages="), "{t}");
        assert!(t.contains("of the replayed writes; dedup=0.5 is the expected rate over every page drawn, preconditioning included"), "{t}");
        // A grid dimension a policy does not read is warned about.
        let f = dir.path().join("rho.toml");
        std::fs::write(
            &f,
            "name = \"rho\"\n[grid]\nworkloads = [\"synth:requests=300\"]\npolicies = [\"fad-rpo\"]\n[grid.set]\n\"policy.fad.rho\" = [0.1, 0.3]\n",
        )
        .unwrap();
        let a = dedupsim().args(["sweep", "--out"]).arg(dir.path().join("rho")).arg(&f).assert().success();
        let e = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(
            e.contains("warning: fad-rpo on synth")
                && e.contains("the 2 rows that differ in policy.fad.rho have identical results"),
            "{e}"
        );
    }

    /// Help texts that were wrong or copied.
    #[test]
    fn help_texts_say_what_the_command_does() {
        let help = |args: &[&str]| {
            String::from_utf8_lossy(&dedupsim().args(args).assert().success().get_output().stdout).to_string()
        };
        let t = help(&["--help"]);
        assert!(t.contains("(convert)") && t.contains("(from-files)"), "{t}");
        assert!(!help(&["reproduce", "fast24", "--help"]).contains("Table II"));
        assert!(!help(&["reproduce", "fad", "--help"]).contains("about a minute"));
        assert!(help(&["reproduce", "--help"]).contains("Light-Dedup (Qiu et al."));
        // trace synth writes; it does not run or replay, and takes no engine.
        let synth = help(&["trace", "synth", "--help"]);
        assert!(!synth.contains("workload runs") && !synth.contains("Replay at most"), "{synth}");
        assert!(synth.contains("Write at most") && !synth.contains("--engine"), "{synth}");
        assert!(help(&["run", "--help"]).contains("Replay at most"));
    }
}
