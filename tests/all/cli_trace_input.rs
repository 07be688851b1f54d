//! `dedupsim trace stats` and `run` on bad or unusual trace input (issue
//! 12): a clear message naming the file and line, exit code 1, no panic,
//! no unbounded memory, and the load warnings on stderr.

use crate::support::predicate;
use crate::support::Command;

fn dedupsim() -> Command {
    Command::cargo_bin("dedupsim").expect("binary builds")
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn stats_on_dev_zero_stops_with_a_line_error() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    dedupsim()
        .args(["trace", "stats", "/dev/zero"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("/dev/zero:1: line longer than 65536 bytes (no line break found)"))
        .stderr(predicate::str::contains("panicked").not());
}

/// `run` streams a trace that can be read only once from a copy; a
/// character device that never ends and is no trace stops at its head
/// (it was copied to TMPDIR forever).
#[test]
fn run_on_endless_devices_stops_with_a_line_error() {
    for (dev, needle) in [
        ("/dev/zero", "/dev/zero:1: line longer than 65536 bytes (no line break found)"),
        ("/dev/urandom", "/dev/urandom:1: cannot detect the trace format"),
    ] {
        if !std::path::Path::new(dev).exists() {
            continue;
        }
        dedupsim()
            .args(["run", "-q", "-p", "native", "--trace", dev])
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .fails_with(1, &[needle]);
    }
}

/// A trace whose file name is not UTF-8 is opened as named (the command
/// line is parsed as given, not as lossy text).
#[test]
fn a_file_name_that_is_not_utf8_is_read() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(std::ffi::OsStr::from_bytes(b"t\xff.ascii"));
    std::fs::write(&path, "0 0 0 8 0\n1000 0 8 8 1\n").unwrap();
    dedupsim().args(["run", "-q", "-p", "native", "--format", "ssdsim", "--trace"]).arg(&path).assert().success();
}

#[test]
fn stats_prints_the_load_warnings() {
    let dir = tempfile::tempdir().unwrap();
    // Backwards timestamp, zero-length request, a write without a digest.
    const A: &str = "d6c75ba46e82326fefa545b57a12e221";
    let text = format!(
        "2000 7 nfsd 16 8 W 6 0 {A}\n1000 7 nfsd 800 8 W 6 0\n3000 8 nfsd 900 0 R 6 0\n4000 9 nfsd 64 8 R 6 0 {A}\n"
    );
    let t = write(&dir, "mail.blkparse", &text);
    dedupsim()
        .args(["trace", "stats"])
        .arg(&t)
        .assert()
        .success()
        .stderr(predicate::str::contains("warning: 1 timestamps went backwards"))
        .stderr(predicate::str::contains("warning: ignored 1 zero-length requests"))
        .stderr(predicate::str::contains("warning: 1 of 2 FIU write records carry no MD5 digest"))
        .stdout(predicate::str::contains("n/a (1 of 2 write requests carry no content)"));
}

#[test]
fn fiu_volume_is_printed_back_as_major_minor() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(&dir, "mail.blkparse", "1 7 nfsd 16 8 W 6 0 d6c75ba46e82326fefa545b57a12e221\n");
    dedupsim()
        .args(["trace", "stats", "--volume", "1:2"])
        .arg(&t)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("contains no requests for volume 1:2 (volumes present: 6:0)"));
}

#[test]
fn run_warns_how_many_requests_wrap_folds() {
    let dir = tempfile::tempdir().unwrap();
    // The tiny preset's logical capacity is far below 1 TiB.
    let t = write(&dir, "far.trace", "# dedupsim-trace v1\n0 W 0 4096\n1000 W 1099511627776 4096\n");
    dedupsim()
        .args(["run", "--preset", "tiny", "-p", "native", "--wrap", "--trace"])
        .arg(&t)
        .assert()
        .success()
        .stderr(predicate::str::contains("1 of 2 requests started beyond the --wrap range of"));
}

#[test]
fn libcachesim_csv_is_detected_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let text = "version,time,op,size,lbn\n1,1000,42,8192,0\n1,2000,40,4096,8\n1,3000,0x2a,4096,16\n";
    let t = write(&dir, "cloudPhysicsIO.csv", text);
    dedupsim()
        .args(["trace", "stats"])
        .arg(&t)
        .assert()
        .success()
        .stdout(predicate::str::contains("(libcachesim)"))
        .stdout(predicate::function("a line `  writes <spaces>2`", |s| {
            s.lines().any(|l| l.strip_prefix("  writes ").is_some_and(|r| r.trim_start_matches(' ') == "2"))
        }));
    dedupsim()
        .args(["run", "--quiet", "--preset", "tiny", "-p", "native", "--format", "libcachesim", "--trace"])
        .arg(&t)
        .assert()
        .success();
}

/// `trace stats` prints the locality figures (docs/locality.md) and puts
/// them in its JSON: a hand-computed trace, a file written and copied
/// whole (one sequential run of 3 cross-request duplicates), then read back.
#[test]
fn stats_prints_the_locality_figures() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("copy.trace");
    std::fs::write(
        &t,
        "# dedupsim-trace v1\n\
         0 W 0 12288 0 11,12,13\n\
         1000 W 40960 12288 0 11,12,13\n\
         2000 R 40960 12288 0\n\
         3000 R 409600 4096 0\n",
    )
    .unwrap();
    let o = dedupsim().args(["trace", "stats"]).arg(&t).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(o).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    for want in
        ["dups in runs > 10 pages 0.00 %", "dups sequential to the last 66.67 %", "whole-file re-reads 1 (50.00 %"]
    {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    let o = dedupsim().args(["trace", "stats", "--json"]).arg(&t).assert().success().get_output().stdout.clone();
    let j: serde_json::Value = serde_json::from_slice(&o).unwrap();
    let d = &j["locality"]["duplicates"];
    assert_eq!(d["duplicate_pages"], 3);
    assert_eq!(d["run_pages"]["max"], 3);
    assert_eq!(d["reuse_distance_pages"]["p50"], 2);
    assert_eq!(d["shared_by_files_share"], 1.0);
    assert_eq!(j["locality"]["shape"]["reads_of_unwritten_pages"], 1);
    assert_eq!(j["dedup_rate"], 0.5, "the Table II figures stay at the top level");
}
