//! `dedupsim cluster` (docs/cluster.md): a table, deterministic JSON, job
//! lines, and a clear error (exit code 1, no panic) for each class of bad
//! input.

use crate::support::predicate;
use crate::support::Command;

fn dedupsim() -> Command {
    Command::cargo_bin("dedupsim").expect("binary builds")
}

const SMALL: [&str; 5] = ["cluster", "--quiet", "--workload", "mail", "--pages=4000"];

#[test]
fn a_grid_prints_one_row_per_cell() {
    dedupsim()
        .args(SMALL)
        .args(["--mode", "all", "--nodes", "4,8"])
        .assert()
        .success()
        .stdout(predicate::str::contains("shared by >1 file"))
        .stdout(predicate::function("10 rows", |s| s.lines().filter(|l| l.contains(" 4K ")).count() == 10));
}

/// Exp. 7's I/O task (`--io-task`): in the JSON and the table only when
/// asked, so every other run's output is unchanged; the task is slower
/// beside the write phase than alone.
#[test]
fn io_task_is_reported_only_when_asked() {
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = dedupsim().args(SMALL).args(["--mode", "csr", "--json", "-"]).args(extra).assert().success();
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    };
    assert!(json(&[])[0]["time"].get("io_task").is_none());
    assert!(json(&[])[0]["config"]["time"].get("io_task").is_none());
    let v = json(&["--io-task", "1MiB"]);
    let t = &v[0]["time"]["io_task"];
    let (mb, alone) = (t["mb_s"].as_f64().unwrap(), t["alone_mb_s"].as_f64().unwrap());
    assert!(mb > 0.0 && mb < alone, "{mb} {alone}");
    assert_eq!(v[0]["config"]["time"]["io_task"]["request_bytes"], 1 << 20);
    dedupsim()
        .args(SMALL)
        .args(["--mode", "csr", "--io-task", "1MiB"])
        .assert()
        .success()
        .stdout(predicate::str::contains("alone MB/s"));
}

#[test]
fn json_is_deterministic() {
    let run = || {
        dedupsim()
            .args(SMALL)
            .args(["--mode", "csr,superchunk", "--update", "iru", "--update-ratio", "0.3", "--json", "-"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let a = run();
    assert_eq!(a, run());
    let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(v[0]["read_ios"].as_u64().unwrap() > 0);
    assert!(v[0]["sharing"]["shared_ratio"].as_f64().unwrap() > 0.0);
    // The timed phases (docs/cluster.md, Time) are in the report.
    for key in ["read_mb_s", "write_mb_s", "read_seconds", "write_seconds"] {
        assert!(v[0]["time"][key].as_f64().unwrap() > 0.0, "{key}");
    }
}

#[test]
fn emit_jobs_writes_one_command_per_cell() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs.txt");
    dedupsim()
        .args(SMALL)
        .args(["--mode", "none,superchunk", "--superchunk", "4,16", "--nodes", "8,16", "--emit-jobs"])
        .arg(&jobs)
        .arg("--out")
        .arg(dir.path().join("cells"))
        .assert()
        .success();
    let text = std::fs::read_to_string(&jobs).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    // Job lines call this very binary by its absolute path (issue 30).
    let program = crate::support::cargo_bin("dedupsim").display().to_string();
    let head = format!("{program} cluster --workload mail --pages 4000 --nodes ");
    assert!(lines.iter().all(|l| l.starts_with(&head)), "{text}");
    assert!(lines.iter().all(|l| l.contains(" --csr rows --atr-file random --redirect-ios 1 ")), "{text}");
    // Only a superchunk cell's line has --superchunk, which another mode refuses.
    assert!(lines.iter().all(|l| l.contains("--superchunk") == l.contains("--mode superchunk")), "{text}");
    // Every job line runs as it is.
    for l in &lines {
        let args: Vec<&str> = l.split_whitespace().skip(1).collect();
        dedupsim().args(&args).arg("--quiet").assert().success();
    }
    assert!(dir.path().join("cells/superchunk-n8-c4k-sc4-t4-normal.json").exists());
    assert!(dir.path().join("cells/none-n16-c4k-sc256-t4-normal.json").exists());
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, msg) in [
        (vec!["--nodes", "0"], "invalid --nodes"),
        (vec!["--mode", "fast"], "unknown write mode `fast`"),
        (vec!["--chunk", "6KiB"], "invalid --chunk"),
        (vec!["--chunk", "4KB"], "ambiguous"),
        (vec!["--superchunk", "3KiB", "--mode", "superchunk"], "--superchunk 3KiB"),
        (vec!["--update", "sometimes"], "unknown update mode"),
        (vec!["--update-ratio", "1.5"], "--update-ratio"),
        (vec!["--read", "all"], "unknown read model `all`; use runs, window or containers"),
        (vec!["--csr", "best"], "invalid --csr: unknown CSR algorithm `best`"),
        (vec!["--atr-file", "last"], "invalid --atr-file: unknown ATR file choice `last`"),
        (vec!["--mode", "csr", "--csr", "brute"], "invalid --csr: brute tries every order of a node's buffer"),
        (vec!["--workload", "fio:share=2"], "share 2 is not in [0, 1]"),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--workload", "nope"], "unknown cluster workload `nope`"),
        (vec!["--workload", "fio:dedup=0.5"], "must be a ratio >= 1"),
        (vec!["--workload", "mail:whole=2"], "out of range"),
        (vec!["--trace", "/nonexistent/trace.blkparse"], "/nonexistent/trace.blkparse"),
    ] {
        // --pages sizes the replicas only (an error beside fio: or a trace).
        let sized_elsewhere = args.iter().any(|a| a.starts_with("fio:") || *a == "--trace");
        dedupsim()
            .args(["cluster", "--quiet"])
            .args(if sized_elsewhere { &[][..] } else { &["--pages", "1000"][..] })
            .args(&args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(msg))
            .stderr(predicate::str::contains("panicked").not());
    }
}

/// A generated workload larger than `workload::MAX_PAGES` is refused,
/// naming the flag, the value and the limit, before any work (it used to run
/// out of memory and abort, exit 134, or grow for minutes; an FIO-like
/// files x size beyond 2^64 wrapped past the old check).
#[test]
fn huge_generated_workloads_are_refused_before_any_work() {
    let limit = "more than the limit of 67108864 pages (2^26, 256 GiB)";
    let pages = |w: &str, n: &str| {
        (["--workload", w, "--pages", n].join(" "), format!("invalid --pages: {n} pages: {limit}; use fewer pages"))
    };
    let fio = |spec: &str, what: &str| {
        (
            format!("--workload {spec}"),
            format!("invalid --workload: `{spec}`: {what}: {limit}; use fewer or smaller files"),
        )
    };
    for (args, msg) in [
        pages("homes", "100000000"),
        pages("homes", "4294967296"),
        pages("homes", "18446744073709551615"),
        pages("mail", "100000000"),
        fio("fio:dedup=1.5,files=8192,size=9223372036854775808", "8192 files of 2251799813685248 pages"),
        fio("fio:dedup=1.5,files=17,size=16GiB", "17 files of 4194304 pages"),
        ("--pages 0".to_string(), "invalid --pages: 0 pages; use at least 1".to_string()),
    ] {
        dedupsim()
            .args(["cluster", "--quiet"])
            .args(args.split(' '))
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .fails_with(1, &[&format!("error: {msg}")]);
    }
    // Before job lines are written, too.
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs.txt");
    dedupsim()
        .args(["cluster", "--quiet", "--pages", "67108865", "--emit-jobs"])
        .arg(&jobs)
        .assert()
        .fails_with(1, &["invalid --pages: 67108865 pages: more than the limit"]);
    assert!(!jobs.exists(), "refused before any job line was written");
}

/// An option of another mode is an error, not silently ignored: --quick and
/// --fiu-dir belong to --reproduce and --out to --emit-jobs (usage errors,
/// exit 2), --superchunk to --mode superchunk (exit 1).
#[test]
fn options_of_another_mode_are_errors() {
    let missing = "the following required arguments were not provided";
    let superchunk = "error: --superchunk applies to --mode superchunk only: add superchunk (or all) to --mode, or leave --superchunk out";
    for (args, code, msgs) in [
        (vec!["--quick"], 2, [missing, "--reproduce"]),
        (vec!["--fiu-dir", "/nonexistent"], 2, [missing, "--reproduce"]),
        (vec!["--out", "/nonexistent/cells"], 2, [missing, "--emit-jobs <FILE>"]),
        (vec!["--superchunk", "2MiB"], 1, [superchunk; 2]),
        (vec!["--superchunk", "2MiB", "--mode", "none,csr,atr"], 1, [superchunk; 2]),
        (vec!["--superchunk", "4", "--mode", "rewrite", "--emit-jobs", "/nonexistent/jobs.txt"], 1, [superchunk; 2]),
    ] {
        dedupsim()
            .args(["cluster", "--quiet", "--pages", "1000"])
            .args(&args)
            .assert()
            .fails_with(code, &msgs)
            .stdout(predicate::str::contains("dedup").not());
    }
    // Within their mode they still work.
    for mode in ["superchunk", "all", "none,superchunk"] {
        dedupsim()
            .args(["cluster", "--quiet", "--pages", "1000", "--superchunk", "2MiB,4", "--mode", mode])
            .assert()
            .success();
    }
    // The quick reproduction prints its tables; Fig. 3's lockstep row is
    // computed by hand (4 files of 4 MiB = 1,024 chunks, 1 MiB requests,
    // 3 nodes: a file written alone is one run per node, 3 I/Os;
    // interleaved, each of its 4 requests is a run on every node, 12; 3
    // threads interleave 3 files and write the fourth alone: (3·12 + 3)/4);
    // with 4 MiB requests a file is one request, so threads change nothing.
    // Under independent arrivals one thread is still N I/Os per file.
    // With --out the report goes to DIR/REPORT.md and the two sensitivity
    // plots to DIR/plots/, linked from it.
    let dir = tempfile::tempdir().unwrap();
    let outdir = dir.path().join("rep");
    dedupsim().args(["cluster", "--quiet", "--reproduce", "--quick", "--out"]).arg(&outdir).assert().success();
    let md = std::fs::read_to_string(outdir.join("REPORT.md")).unwrap();
    for stem in ["cluster_sharing", "cluster_buffer"] {
        assert!(outdir.join("plots").join(format!("{stem}.png")).exists(), "{stem}");
        assert!(md.contains(&format!("(plots/{stem}.png)")), "{stem}");
    }
    for row in [
        "| lockstep 1024 KiB | 3.0 | 12.0 | 9.8 | 12.0 | +300.0% |",
        "| lockstep 4096 KiB | 3.0 | 3.0 | 3.0 | 3.0 | +0.0% |",
        "| poisson 4096 KiB | 3.0 | 3.0 | 3.0 | 3.0 | +0.0% |",
        "| 3 | 3.0 |",
        "| 8 | 8.0 |",
        "| 20 | 20.0 |",
    ] {
        assert!(md.contains(row), "{row}\n{md}");
    }
    for h in ["## Sharing sweep", "## Buffer sweep", "## CSR and ATR variants", "## Exp. 8", "## Workload families"] {
        assert!(md.contains(h), "{h}");
    }
    // --json with --emit-jobs, a --fiu-dir without the excerpts, grid
    // options beside --reproduce and --pages beside a workload that has its
    // own size were ignored.
    let empty = tempfile::tempdir().unwrap();
    let reproduce = "--reproduce runs the paper's own workloads and grid";
    let pages = "--pages sizes a replica workload (homes, mail, webvm)";
    for (args, code, msgs) in [
        (vec!["--reproduce", "--quick", "--pages", "1000"], 1, [reproduce, "--pages do(es) not apply"]),
        (
            vec!["--reproduce", "--mode", "csr", "--update-ratio", "0.5"],
            1,
            [reproduce, "--mode, --update-ratio do(es)"],
        ),
        (vec!["--workload", "fio:dedup=2", "--pages", "1000"], 1, [pages, "an fio: workload"]),
        (vec!["--trace", "t.trace", "--pages", "1000"], 1, [pages, "a trace has its own size"]),
        (vec!["--from-files", ".", "--pages", "1000"], 1, [pages, "--from-files has its own size"]),
        (vec!["--json", "x.json", "--emit-jobs", "jobs.txt"], 1, ["--json with --emit-jobs", "leave --json out"]),
        (vec!["--reproduce", "--quick", "--recorded", "."], 1, ["--recorded: no *.trace here"; 2]),
        (vec!["--workload", "mail", "--arrival", "zigzag"], 1, ["--arrival zigzag: unknown arrival model"; 2]),
        (vec!["--workload", "mail", "--write-batch", "all"], 1, ["--write-batch all: unknown batching"; 2]),
        (vec!["--workload", "mail", "--read-cache", "lots"], 1, ["--read-cache"; 2]),
        (vec!["--workload", "mail", "--disks", "0"], 1, ["invalid --disks: a node needs at least one disk"; 2]),
        (vec!["--algorithm-time", "--mode", "csr"], 1, ["--algorithm-time measures", "--mode do(es) not apply"]),
        (vec!["--app-time", "--nodes", "3", "--device", "ssd"], 1, ["--app-time measures", "--nodes, --device do(es)"]),
        (vec!["--workload", "mail", "--io-task", "0"], 1, ["invalid --io-task: the I/O task needs"; 2]),
        (
            vec!["--workload", "mail", "--io-task", "1MiB", "--device", "ssd"],
            1,
            ["invalid --device: the co-running I/O task (Exp. 7) runs on the HDD model only"; 2],
        ),
        (vec!["--reproduce", "--quick", "--io-task", "1MiB"], 1, [reproduce, "--io-task do(es)"]),
        (
            vec!["--reproduce", "--quick", "--fiu-dir", "/nonexistent"],
            1,
            ["--fiu-dir /nonexistent: not a directory"; 2],
        ),
        (
            vec!["--reproduce", "--quick", "--fiu-dir", empty.path().to_str().unwrap()],
            1,
            ["no fiu-iodedup-{homes,mail,webvm}/*.blkparse excerpts"; 2],
        ),
    ] {
        dedupsim().current_dir(empty.path()).args(["cluster", "--quiet"]).args(&args).assert().fails_with(code, &msgs);
    }
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_trace_without_content_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("hm.csv");
    std::fs::write(&t, "128166372003061629,hm,0,Write,0,4096,100\n128166372003061630,hm,0,Write,4096,4096,100\n")
        .unwrap();
    dedupsim()
        .args(["cluster", "--quiet", "--trace"])
        .arg(&t)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("carries no chunk contents"));
}

#[test]
fn from_files_trees_are_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let a = vec![7u8; 3 * 4096];
    std::fs::write(dir.path().join("a"), &a).unwrap();
    std::fs::write(dir.path().join("b"), &a).unwrap();
    dedupsim()
        .args(["cluster", "--quiet", "--json", "-", "--from-files"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("\"files\": 2"))
        .stdout(predicate::str::contains("\"dedup_ratio\": 6.0"));
}

/// `cluster --quiet --workload WORKLOAD --mode MODES EXTRA --json -`, parsed.
fn cluster_json(workload: &str, modes: &str, extra: &[&str]) -> serde_json::Value {
    let out = dedupsim()
        .args(["cluster", "--quiet", "--workload", workload, "--mode", modes])
        .args(extra)
        .args(["--json", "-"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// `--device ssd` (issue 28 item 8): each node's disks are simulated SSDs;
/// the same inputs give byte-identical JSON, the device is in it, and the
/// timed read phase differs from the HDD's while the layout (read I/Os)
/// does not.
#[test]
fn ssd_device_is_deterministic_and_changes_only_time() {
    let run = |extra: &[&str]| cluster_json("fio:dedup=2,files=4,size=1MiB", "none,csr", extra);
    let ssd = ["--device", "ssd", "--preset", "tiny", "--set", "geometry.blocks_per_plane=64"];
    let a = run(&ssd);
    assert_eq!(a, run(&ssd));
    let hdd = run(&[]);
    for i in 0..2 {
        assert_eq!(a[i]["read_ios"], hdd[i]["read_ios"]);
        assert_eq!(a[i]["time"]["read_disk_ios"], hdd[i]["time"]["read_disk_ios"]);
        assert_ne!(a[i]["time"]["read_mb_s"], hdd[i]["time"]["read_mb_s"], "{i}");
        assert_eq!(a[i]["config"]["time"]["device"]["ssd"]["policy"], "native");
        assert!(hdd[i]["config"]["time"].get("device").is_none());
    }
}

/// The SSD flags without `--device ssd`, an unknown device or policy, and
/// a store larger than the SSD: clear errors naming the flag.
#[test]
fn ssd_device_refuses_bad_input() {
    let cases: [(&[&str], &str); 4] = [
        (&["--set", "timing.read=25us"], "--set configures the simulated SSD: add --device ssd"),
        (&["--device", "tape"], "--device tape: unknown device; use hdd or ssd"),
        (&["--device", "ssd", "--ssd-policy", "nope"], "--ssd-policy nope: unknown policy"),
        (&["--device", "ssd", "--preset", "tiny", "--disks", "1"], "--device ssd: node "),
    ];
    for (args, msg) in cases {
        dedupsim()
            .args(["cluster", "--quiet", "--workload", "fio:dedup=2,files=8,size=4MiB", "--nodes", "2"])
            .args(args)
            .assert()
            .fails_with(1, &[msg]);
    }
}

/// `--reproduce --device ssd`: the reproduction's tables timed on simulated
/// SSDs. Read I/O counts do not depend on the disk (Fig. 3's lockstep row
/// is the HDD report's); Exp. 1-2's FIO_20 CSR row reads at the MB/s that
/// `cluster --workload fio:dedup=2,files=16,size=4MiB --mode csr --device
/// ssd` measures for the same cell (the quick reproduction's FIO files),
/// which is not the HDD's.
#[test]
fn reproduce_on_ssds_gives_the_cells_ssd_numbers() {
    let md = |extra: &[&str]| -> String {
        let out = dedupsim()
            .args(["cluster", "--quiet", "--reproduce", "--quick"])
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    let ssd = md(&["--device", "ssd"]);
    assert!(ssd.starts_with("Disks: every node's 2 disks are dedupsim's simulated SSD"), "{ssd}");
    assert!(ssd.contains("| lockstep 1024 KiB | 3.0 | 12.0 | 9.8 | 12.0 | +300.0% |"), "{ssd}");
    let csr_row = |md: &str| -> Vec<String> {
        let section = md.split("\n## ").find(|s| s.starts_with("Exp. 1-2")).expect("Exp. 1-2");
        let line = section.lines().find(|l| l.starts_with("| FIO_20 |") && l.contains("| csr |")).expect("row");
        line.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
    };
    let cell = |extra: &[&str]| cluster_json("fio:dedup=2,files=16,size=4MiB", "csr", extra)[0].clone();
    let (row, one) = (csr_row(&ssd), cell(&["--device", "ssd"]));
    let mb_s = one["time"]["read_mb_s"].as_f64().unwrap();
    assert_eq!(row[4], one["read_ios"].to_string());
    assert_eq!(row[7], format!("{mb_s:.0}"), "{row:?}");
    let hdd = cell(&[]);
    assert_eq!(hdd["read_ios"], one["read_ios"]);
    assert!(hdd["time"]["read_mb_s"].as_f64().unwrap() < mb_s / 2.0, "{hdd} vs {mb_s}");
    // The SSD flags configure the disks; grid options stay refused.
    dedupsim()
        .args(["cluster", "--quiet", "--reproduce", "--quick", "--device", "ssd", "--nodes", "4"])
        .assert()
        .fails_with(1, &["--reproduce runs the paper's own workloads and grid", "--nodes do(es) not apply"]);
}
