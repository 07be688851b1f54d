//! Workload specs that ask for the impossible (issue 12's bad input): a
//! `--read-phase` too large to build, a `--content` dedup target the Zipf
//! exponent cannot realize, a `--synth` `page=` that disagrees with the
//! device. Each is a clear error (never an abort or a silently different
//! workload), and the nearby valid specs still work.

use crate::support::predicate;
use crate::support::Command;

fn dedupsim() -> Command {
    Command::cargo_bin("dedupsim").expect("binary builds")
}

/// Fails with `code`, every needle on stderr, no panic or allocator abort.
fn fails_with(cmd: &mut Command, code: i32, needles: &[&str]) -> String {
    let mut a = cmd
        .assert()
        .code(code)
        .stderr(predicate::str::contains("panicked").not())
        .stderr(predicate::str::contains("memory allocation").not());
    for n in needles {
        a = a.stderr(predicate::str::contains(*n));
    }
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// `trace from-files d1 -o o.trace --read-phase zipf:99999999999` aborted
/// (exit 134, "memory allocation of 7247757312 bytes failed"): the count
/// is bounded by the synthetic request limit (2^32 - 1, a usage error),
/// and a count within it that memory cannot hold is an error, not an abort.
#[test]
fn a_huge_zipf_read_phase_is_refused_with_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d1 = dir.path().join("d1");
    std::fs::create_dir(&d1).unwrap();
    std::fs::write(d1.join("a"), "hello\n").unwrap();
    std::fs::write(d1.join("b"), "world\n").unwrap();
    let out = dir.path().join("o.trace");
    for n in ["99999999999", "4294967296"] {
        fails_with(
            dedupsim()
                .args(["trace", "from-files"])
                .arg(&d1)
                .arg("-o")
                .arg(&out)
                .arg("--read-phase")
                .arg(format!("zipf:{n}")),
            2,
            &["--read-phase", &format!("zipf:{n}"), "exceed the limit of 4294967295"],
        );
    }
    // 10^8 reads (about 7 GB of records) under a 2 GiB address-space limit.
    fails_with(
        Command::under_limits("ulimit -v 2097152")
            .current_dir(dir.path())
            .args("trace from-files -q d1 -o o.trace --read-phase zipf:100000000".split(' ')),
        1,
        &["cannot allocate memory for the 100000000 read requests of --read-phase zipf:100000000:a=0.8"],
    );
    assert!(!out.exists(), "nothing written");
    dedupsim()
        .args(["trace", "from-files", "-q"])
        .arg(&d1)
        .arg("-o")
        .arg(&out)
        .args(["--read-phase", "zipf:1000"])
        .assert()
        .success()
        .stdout(predicate::str::contains("requests: 1002 (2 writes, 1000 reads)"));
}

const TINY: &str = "requests=2000,footprint=600KiB,hot=0.4:100KiB,size=fixed:1";

/// `--content zipf:a=2,dedup=0.5` realized ~96% without a word (a=5:
/// 99.8%, a=50: 100%): an exponent that skewed repeats pages more often
/// than the target even over the whole id space. Now an error with the
/// reachable range and the largest exponent that reaches the target, which
/// does (`run` and `trace synth`).
#[test]
fn an_unreachable_dedup_target_is_an_error_with_the_reachable_range() {
    let run = |content: &str| {
        let mut c = dedupsim();
        c.args(["run", "-q", "--preset", "tiny", "-p", "dedup", "--synth", TINY, "--content", content]);
        c
    };
    let mut max_a = String::new();
    for a in ["2", "5", "50"] {
        let stderr = fails_with(
            &mut run(&format!("zipf:a={a},dedup=0.5")),
            1,
            &[&format!("zipf:a={a},dedup=0.5 cannot realize a 50.00% dedup rate"), "reachable rates are"],
        );
        let hint = stderr.split("(a <= ").nth(1).and_then(|s| s.split(';').next()).expect(&stderr);
        max_a = hint.to_string();
    }
    run(&format!("zipf:a={max_a},dedup=0.5")).assert().success();
    run("zipf:a=0.2,dedup=0.5").assert().success();
    let dir = tempfile::tempdir().unwrap();
    fails_with(
        dedupsim()
            .args(["trace", "synth", "--preset", "tiny", "--synth", TINY, "--content", "zipf:a=2,dedup=0.5", "-o"])
            .arg(dir.path().join("t.trace")),
        1,
        &["cannot realize a 50.00% dedup rate", "a smaller exponent reaches 50.00%"],
    );
    assert!(!dir.path().join("t.trace").exists());
}

/// `trace synth --synth "...,page=16KiB"` wrote 4 KiB requests: the spec's
/// page size was replaced by the device's without a word. A `page=` that
/// disagrees is an error naming both sizes and the `--set` that
/// simulates the asked one; with that `--set` the requests are 16 KiB.
#[test]
fn a_synth_page_size_other_than_the_devices_is_an_error() {
    let spec = "requests=3,size=fixed:1,page=16KiB,footprint=1MiB,hot=0";
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p16.trace");
    let needles =
        ["--synth", "`page` is 16384 bytes", "4096 bytes (geometry.page_size)", "--set geometry.page_size=16384"];
    fails_with(dedupsim().args(["trace", "synth", "--synth", spec, "-o"]).arg(&out), 1, &needles);
    fails_with(dedupsim().args(["run", "-q", "-p", "native", "--synth", spec]), 1, &needles);
    assert!(!out.exists());
    dedupsim()
        .args(["trace", "synth", "--set", "geometry.page_size=16384", "--synth", spec, "-o"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let sizes: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).map(|l| l.split(' ').nth(3).unwrap()).collect();
    assert_eq!(sizes, ["16384"; 3]);
    // Without `page=` the device's page size is used, as before.
    dedupsim()
        .args([
            "trace",
            "synth",
            "--set",
            "geometry.page_size=16384",
            "--synth",
            "requests=3,size=fixed:1,footprint=1MiB,hot=0",
        ])
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
}
