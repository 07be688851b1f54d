//! A trace replayed as it is read (`runner::run_streamed`, docs/streaming.md)
//! gives the report of the same trace loaded whole and prepared
//! (`trace::load`, `runner::prepare_for`, `runner::run_one`), byte for byte.

use dedupsim::config::{Config, ReplayConfig};
use dedupsim::content::ContentModel;
use dedupsim::runner;
use dedupsim::sim::RunOptions;
use dedupsim::trace::{LoadOptions, VolumeSelect};
use dedupsim::workload::{FileRule, PreconditionRule};
use std::path::{Path, PathBuf};

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(name: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("dedupsim-streaming-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    Dir(d)
}

/// The held path's report and the streamed one's, as JSON.
fn both(cfg: &Config, path: &Path, load: &LoadOptions, model: &ContentModel, policy: &str) -> (String, String) {
    let opts = RunOptions { check: true, check_every: 997, resources: false };
    let loaded = dedupsim::trace::load(path, load).unwrap();
    let need = runner::need_content(cfg, &[policy.to_string()]).unwrap();
    let prepared = runner::prepare_for(loaded.workload, model, cfg.seed, &cfg.precondition, need).unwrap();
    let held = runner::run_one(cfg, &prepared, policy, &opts, &mut |_, _| {}).unwrap();
    let mut warnings = Vec::new();
    let streamed = runner::run_streamed(
        cfg,
        path,
        load,
        model,
        policy,
        &opts,
        &mut |s| warnings = s.end.warnings.clone(),
        &mut |_, _| {},
    )
    .unwrap()
    .expect("this trace streams");
    assert_eq!(warnings, loaded.warnings, "the first pass warns as loading does");
    (serde_json::to_string(&held).unwrap(), serde_json::to_string(&streamed).unwrap())
}

fn load_opts(cfg: &Config) -> LoadOptions {
    LoadOptions {
        page_size: cfg.geometry.page_size,
        capacity_pages: Some(cfg.logical_pages()),
        ..LoadOptions::default()
    }
}

/// A synthetic workload written as a native trace, with or without its
/// contents.
fn synth_trace(cfg: &Config, path: &Path, spec: &str, contents: bool) {
    let mut spec: dedupsim::synth::SynthSpec = spec.parse().unwrap();
    spec.page_size = cfg.geometry.page_size;
    let mut w = dedupsim::synth::generate(&spec, 11).unwrap();
    if contents {
        dedupsim::content::try_assign_content(&mut w, &"zipf:a=0.3,dedup=0.4".parse().unwrap(), 11).unwrap();
    }
    let f = std::fs::File::create(path).unwrap();
    dedupsim::trace::write_native_workload(&w, cfg.geometry.page_size, std::io::BufWriter::new(f)).unwrap();
}

#[test]
fn streamed_runs_are_the_held_runs() {
    let d = dir("modes");
    let mut cfg = Config::preset("tiny").unwrap();
    let spec = "requests=12000,read=0.5,footprint=600KiB,hot=0.3:64KiB,size=inv:8,iat=exp:400us";
    let (plain, with) = (d.0.join("plain.trace"), d.0.join("content.trace"));
    synth_trace(&cfg, &plain, spec, false);
    synth_trace(&cfg, &with, spec, true);
    let model = ContentModel::default();
    let load = load_opts(&cfg);
    for path in [&plain, &with] {
        for policy in ["native", "dedup", "fad"] {
            let (h, s) = both(&cfg, path, &load, &model, policy);
            assert!(h == s, "{policy} on {}", path.display());
        }
    }
    // Closed loop, another preconditioning rule, a unique content model.
    cfg.replay = ReplayConfig::ClosedLoop { queue_depth: 4 };
    cfg.precondition.rule = PreconditionRule::ReadsBeforeWrites;
    let (h, s) = both(&cfg, &plain, &load, &"unique".parse().unwrap(), "dedup");
    assert!(h == s, "closed loop");
    // A model that copies earlier writes is left to the held path.
    let copy: ContentModel = "zipf:a=0.2,dedup=0.5,copy=0.2".parse().unwrap();
    let r =
        runner::run_streamed(&cfg, &plain, &load, &copy, "dedup", &RunOptions::default(), &mut |_| {}, &mut |_, _| {});
    assert!(r.unwrap().is_none());
}

#[test]
fn a_trace_with_several_volumes_streams_with_a_third_reading() {
    let d = dir("volumes");
    let cfg = Config::preset("tiny").unwrap();
    let path = d.0.join("v.trace");
    // Two volumes interleaved; volume 7's range starts after volume 3's.
    let mut text = String::from("# dedupsim-trace v1\n");
    for i in 0..3000u64 {
        let (vol, page) = if i % 3 == 0 { (7, i % 40) } else { (3, (i * 7) % 90) };
        let op = if i % 2 == 0 { "W" } else { "R" };
        text.push_str(&format!("{} {op} {} 4096 {vol}\n", i * 300_000, page * 4096));
    }
    std::fs::write(&path, text).unwrap();
    let model = ContentModel::default();
    for volume in [VolumeSelect::All, VolumeSelect::Merge, VolumeSelect::One(7)] {
        let load = LoadOptions { volume, ..load_opts(&cfg) };
        for policy in ["native", "dedup"] {
            let (h, s) = both(&cfg, &path, &load, &model, policy);
            assert!(h == s, "{policy} with --volume {volume}");
        }
    }
}

/// The error a streamed Native run of `path` stops with.
fn streamed_error(cfg: &Config, path: &Path, load: &LoadOptions) -> String {
    let r = runner::run_streamed(
        cfg,
        path,
        load,
        &ContentModel::default(),
        "native",
        &RunOptions::default(),
        &mut |_| {},
        &mut |_, _| {},
    );
    r.unwrap_err().to_string()
}

#[test]
fn a_record_beyond_the_capacity_is_the_loaders_error() {
    let d = dir("errors");
    let cfg = Config::preset("tiny").unwrap();
    let path = d.0.join("e.trace");
    std::fs::write(&path, "# dedupsim-trace v1\n0 W 0 4096\n1 W 99999999 4096\n2 R 0 4096\n").unwrap();
    let load = load_opts(&cfg);
    let held = dedupsim::trace::load(&path, &load).unwrap_err().to_string();
    assert_eq!(streamed_error(&cfg, &path, &load), held);
}

/// A line that does not parse in the trace's second half, several
/// batches in (the passes are parsed on another thread): the streamed run
/// stops with the loader's `file:line: reason`.
#[test]
fn a_bad_line_late_in_the_trace_is_the_loaders_error() {
    let d = dir("late-error");
    let cfg = Config::preset("tiny").unwrap();
    let path = d.0.join("late.ascii");
    let bad = 25_000;
    let text: String = (1..=30_000u64)
        .map(|i| {
            if i == bad {
                format!("{i}000 0 8 eight 1\n")
            } else {
                format!("{i}000 0 {} 8 {}\n", (i % 100) * 8, i % 2)
            }
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    let load = LoadOptions { format: Some(dedupsim::trace::TraceFormat::Ssdsim), ..load_opts(&cfg) };
    let held = dedupsim::trace::load(&path, &load).unwrap_err().to_string();
    assert!(held.starts_with(&format!("{}:{bad}: ", path.display())), "{held}");
    assert_eq!(streamed_error(&cfg, &path, &load), held);
}

/// The CLI's choice of path changes no byte: a small trace streamed (the
/// default for a regular file), with `--stream` (the same), and
/// `--load-whole` give the same JSON; `--stream` with `--load-whole` is a
/// usage error.
#[test]
fn the_cli_paths_give_the_same_report() {
    let d = dir("cli-paths");
    let t = d.0.join("t.trace");
    let bin = crate::support::cargo_bin("dedupsim");
    let ok = |args: &[&str]| {
        let o = std::process::Command::new(&bin).args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    let ts = t.to_str().unwrap();
    ok(&["trace", "synth", "--synth", "requests=3000,read=0.5,footprint=1GiB,hot=0.4:256MiB", "-o", ts]);
    let mut reports = Vec::new();
    for (k, flag) in [None, Some("--stream"), Some("--load-whole")].into_iter().enumerate() {
        let j = d.0.join(format!("r{k}.json"));
        let mut args = vec!["run", "-q", "-p", "native,fad", "--trace", ts, "--json", j.to_str().unwrap()];
        args.extend(flag);
        ok(&args);
        reports.push(std::fs::read(&j).unwrap());
    }
    assert!(reports[0] == reports[1] && reports[1] == reports[2]);
    let o = std::process::Command::new(&bin)
        .args(["run", "-q", "--trace", ts, "--stream", "--load-whole"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 26: the CLI streams a small trace by default, and its errors are
/// the loader's, word for word: `file:line: reason` for a line that does
/// not parse and for a request beyond the device, with nothing (such as the
/// policy running) added, as `--load-whole` reports them.
#[test]
fn the_cli_reports_a_streamed_traces_errors_as_loading_does() {
    let d = dir("cli-errors");
    let bin = crate::support::cargo_bin("dedupsim");
    let bad = d.0.join("bad.ascii");
    let mut text: String = (0..3000).map(|i| format!("{} 0 {} 8 {}\n", i * 1000, i * 8, i % 2)).collect();
    text.push_str("3000000 0 x 8 1\n0 0 0 8 1\n");
    std::fs::write(&bad, text).unwrap();
    let far = d.0.join("far.ascii");
    std::fs::write(&far, "0 0 8 8 1\n1000 0 999999999999 8 1\n").unwrap();
    for t in [&bad, &far] {
        let stderr = |extra: &[&str]| {
            let mut args =
                vec!["run", "-q", "-p", "native,dedup", "--format", "ssdsim", "--trace", t.to_str().unwrap()];
            args.extend(extra);
            let o = std::process::Command::new(&bin).args(&args).output().unwrap();
            assert_eq!(o.status.code(), Some(1), "{args:?}");
            String::from_utf8(o.stderr).unwrap()
        };
        let (streamed, held) = (stderr(&[]), stderr(&["--load-whole"]));
        assert!(held.starts_with(&format!("error: {}:", t.display())), "{held}");
        assert_eq!(streamed, held);
    }
}

/// Issue 26: `--request-log` and `--timeseries` no longer need the trace
/// held: a regular file streams with them (the observers write as the
/// replay goes), and the request log, the series and the report are those
/// of `--load-whole`, byte for byte; a series too long for the trace's
/// span is refused by either path with the same message.
#[test]
fn the_observers_stream_and_write_what_the_held_path_writes() {
    let d = dir("cli-observers");
    let t = d.0.join("t.trace");
    let bin = crate::support::cargo_bin("dedupsim");
    let run = |args: &[&str]| std::process::Command::new(&bin).args(args).output().unwrap();
    let ts = t.to_str().unwrap();
    let o = run(&["trace", "synth", "--synth", "requests=3000,read=0.5,footprint=1GiB,hot=0.4:256MiB", "-o", ts]);
    assert!(o.status.success());
    let mut outputs = Vec::new();
    for (k, flag) in [None, Some("--load-whole")].into_iter().enumerate() {
        let f = |name: &str| d.0.join(format!("{k}.{name}")).to_str().unwrap().to_string();
        let (j, log, series) = (f("json"), f("log.csv"), f("series.csv"));
        let mut args = vec!["run", "-q", "-p", "dedup", "--trace", ts, "--json", &j, "--request-log", &log];
        args.extend(["--timeseries", "10ms", "--timeseries-out", &series]);
        args.extend(flag);
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        outputs.push([&j, &log, &series].map(|p| std::fs::read(p).unwrap()));
    }
    assert_eq!(String::from_utf8_lossy(&outputs[0][1]).lines().count(), 3001, "a row per request");
    for (what, k) in [("report", 0), ("request log", 1), ("time series", 2)] {
        assert!(outputs[0][k] == outputs[1][k], "the {what} differs between the streamed and the held path");
    }
    let refused = |flag: Option<&str>| {
        let series = d.0.join("never.csv");
        let mut args = vec!["run", "-q", "-p", "native", "--trace", ts, "--timeseries", "1ns"];
        args.extend(["--timeseries-out", series.to_str().unwrap()]);
        args.extend(flag);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1));
        assert!(!series.exists());
        String::from_utf8(o.stderr).unwrap()
    };
    let streamed = refused(None);
    assert!(streamed.contains("more than the 1000000 a series may have"), "{streamed}");
    assert_eq!(streamed, refused(Some("--load-whole")));
}

/// Issue 26: a trace that can be read only once (here standard input, a
/// pipe) streams from a copy of its bytes in an anonymous temporary file
/// (`TMPDIR`), and gives the report of the same pipe loaded whole; when
/// the copy cannot be made the run stops with an error that says what to
/// do.
#[test]
fn a_piped_trace_streams_from_a_spooled_copy() {
    use std::io::Write;
    let d = dir("cli-pipe");
    let t = d.0.join("t.trace");
    let bin = crate::support::cargo_bin("dedupsim");
    let ts = t.to_str().unwrap();
    let o = std::process::Command::new(&bin)
        .args(["trace", "synth", "--synth", "requests=3000,read=0.5,footprint=1GiB,hot=0.4:256MiB", "-o", ts])
        .output()
        .unwrap();
    assert!(o.status.success());
    let bytes = std::fs::read(&t).unwrap();
    let piped = |extra: &[&str], tmpdir: &Path| {
        let mut c = std::process::Command::new(&bin);
        c.args(["run", "-q", "-p", "native,dedup", "--trace", "/dev/stdin"]).args(extra).env("TMPDIR", tmpdir);
        let mut child = c
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The whole trace fits no pipe buffer: written as the run reads.
        let mut stdin = child.stdin.take().unwrap();
        let writer = {
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            })
        };
        let o = child.wait_with_output().unwrap();
        writer.join().unwrap();
        o
    };
    let spool_dir = d.0.join("spool");
    std::fs::create_dir_all(&spool_dir).unwrap();
    let mut reports = Vec::new();
    for (k, flag) in [None, Some("--load-whole")].into_iter().enumerate() {
        let j = d.0.join(format!("p{k}.json"));
        let mut args = vec!["--json", j.to_str().unwrap()];
        args.extend(flag);
        let o = piped(&args, &spool_dir);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        reports.push(std::fs::read(&j).unwrap());
    }
    assert!(reports[0] == reports[1], "the piped trace's report differs between the streamed and the held path");
    assert_eq!(std::fs::read_dir(&spool_dir).unwrap().count(), 0, "the copy is anonymous: nothing is left");
    let o = piped(&[], &d.0.join("missing"));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.starts_with("error: /dev/stdin: cannot keep a copy of this trace"), "{err}");
    assert!(err.contains("set TMPDIR to a directory"), "{err}");
}

/// Issue 26: a trace whose writes carry contents only in part (every third
/// write here has none) streams: those writes get contents drawn write by
/// write after the trace's own ids, as preparing the loaded trace draws
/// them; dense, sparse and unique populations, with and without a policy
/// that deduplicates.
#[test]
fn a_trace_with_contents_in_part_streams() {
    let d = dir("partial");
    let cfg = Config::preset("tiny").unwrap();
    let (with, partial) = (d.0.join("content.trace"), d.0.join("partial.trace"));
    synth_trace(&cfg, &with, "requests=9000,read=0.5,footprint=600KiB,hot=0.3:64KiB,size=inv:8,iat=exp:400us", true);
    let mut writes = 0;
    let text: String = std::fs::read_to_string(&with)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let strip = f.get(1) == Some(&"W") && f.len() == 6 && {
                writes += 1;
                writes % 3 == 0
            };
            if strip {
                format!("{}\n", f[..5].join(" "))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(writes > 1000, "{writes} writes");
    std::fs::write(&partial, text).unwrap();
    let load = load_opts(&cfg);
    for model in ["zipf:a=0.2,dedup=0.5", "zipf:a=0.2,dedup=0.05", "unique"] {
        for policy in ["native", "dedup"] {
            let (h, s) = both(&cfg, &partial, &load, &model.parse().unwrap(), policy);
            assert!(h == s, "{policy} with {model}");
            assert!(!h.contains("from the workload"), "contents in part: the model's name, as held");
        }
    }
}

/// A native trace whose reads carry contents (FIU hashes the data it
/// reads): a read of a page not written yet shows what it held (ids from
/// 5000 up, some shared with the writes' ids below 400), so preconditioning
/// writes it with that content under `placement = "auto"` or `"policy"`.
fn fiu_like_trace(path: &Path, n: u64, strip_every: u64) {
    let mut text = String::from("# dedupsim-trace v1\n");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut written = std::collections::HashMap::new();
    let mut writes = 0;
    for i in 0..n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let pages = 1 + (x >> 60) % 4;
        let lpn = (x >> 20) % (150 - pages);
        let ids: Vec<u64> = if (x >> 40) & 1 == 0 {
            writes += 1;
            (0..pages).map(|k| *written.entry(lpn + k).insert_entry((x >> 8) % 400 + k).get()).collect()
        } else {
            (0..pages)
                .map(|k| {
                    written.get(&(lpn + k)).copied().unwrap_or(if (lpn + k) % 5 == 0 {
                        (lpn + k) % 400
                    } else {
                        5000 + (lpn + k) % 300
                    })
                })
                .collect()
        };
        let op = if (x >> 40) & 1 == 0 { "W" } else { "R" };
        let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
        let content = if op == "W" && strip_every > 0 && writes % strip_every == 0 {
            String::new()
        } else {
            format!(" {}", ids.join(","))
        };
        text.push_str(&format!("{} {op} {} {} 0{content}\n", i * 400_000, lpn * 4096, pages * 4096));
    }
    std::fs::write(path, text).unwrap();
}

/// Issue 26: a trace whose reads carry contents streams under
/// `precondition.placement = "auto"` and `"policy"`: its first pass keeps
/// what they show of pages not yet written (one entry per page, bounded
/// by the device), and the preconditioning writes take it, as on the held
/// workload. With writes without contents too and a sparse population
/// (whose id space is known only after the replay's draws) it is left to
/// the held path.
#[test]
fn a_trace_whose_reads_carry_contents_streams() {
    use dedupsim::config::PreconditionPlacement;
    let d = dir("fiu-like");
    let mut cfg = Config::preset("tiny").unwrap();
    let (full, partial) = (d.0.join("fiu.trace"), d.0.join("partial.trace"));
    fiu_like_trace(&full, 6000, 0);
    fiu_like_trace(&partial, 6000, 4);
    let load = load_opts(&cfg);
    let dense: ContentModel = "zipf:a=0.2,dedup=0.5".parse().unwrap();
    for placement in [PreconditionPlacement::Auto, PreconditionPlacement::Policy, PreconditionPlacement::RoundRobin] {
        cfg.precondition.placement = placement;
        for policy in ["native", "dedup", "fad"] {
            for path in [&full, &partial] {
                let (h, s) = both(&cfg, path, &load, &dense, policy);
                assert!(h == s, "{policy} under {placement:?} on {}", path.display());
                if placement != PreconditionPlacement::RoundRobin {
                    assert!(h.contains("with the trace's content"), "the trace's contents are preconditioned: {h}");
                }
            }
        }
    }
    cfg.precondition.placement = PreconditionPlacement::Auto;
    let sparse: ContentModel = "zipf:a=0.2,dedup=0.02".parse().unwrap();
    let (h, s) = both(&cfg, &full, &load, &sparse, "dedup");
    assert!(h == s, "a sparse population whose pages are all preconditioning's");
    let r = runner::run_streamed(
        &cfg,
        &partial,
        &load,
        &sparse,
        "dedup",
        &RunOptions::default(),
        &mut |_| {},
        &mut |_, _| {},
    );
    assert!(r.unwrap().is_none(), "sparse, with writes to draw during the replay: held");
}

/// An SSDsim ASCII trace of `n` one-page requests at scattered addresses,
/// except that each record of `continues` continues the record before it
/// (the same operation, the next address): `--files merged` joins them.
fn mergeable_trace(path: &Path, n: u64, continues: &[u64]) {
    let mut text = String::new();
    let (mut end, mut op) = (0, 0);
    for i in 0..n {
        let (lsn, o) = if continues.contains(&i) { (end, op) } else { ((i * 97 % 5000) * 64, (i / 3) % 2) };
        text.push_str(&format!("{} 0 {lsn} 8 {o}\n", (i + 1) * 1000));
        (end, op) = (lsn + 8, o);
    }
    std::fs::write(path, text).unwrap();
}

/// Issue 26: `--files merged` streams: both passes merge the batches as
/// they make them, the request that ends a batch held back until the next
/// batch's first record shows whether it continues it (the batches are
/// 4,096 records: records 4,095 and 4,096 straddle the first boundary,
/// 8,191 and 8,192 the second, 9,999 is the trace's last). The report and
/// the `--files merged: N requests joined` line are `--load-whole`'s.
#[test]
fn merged_files_stream_across_batch_boundaries() {
    let d = dir("files-merged");
    let t = d.0.join("t.ascii");
    let joins = [4094, 4095, 4096, 4097, 8192, 9999];
    mergeable_trace(&t, 10_000, &joins);
    let bin = crate::support::cargo_bin("dedupsim");
    let mut seen = Vec::new();
    for (k, flag) in [None, Some("--load-whole")].into_iter().enumerate() {
        let j = d.0.join(format!("r{k}.json"));
        let mut args = vec!["run", "-p", "native,fad", "--files", "merged", "--trace", t.to_str().unwrap(), "--json"];
        args.push(j.to_str().unwrap());
        args.extend(flag);
        let o = std::process::Command::new(&bin).args(&args).output().unwrap();
        let stderr = String::from_utf8(o.stderr).unwrap();
        assert!(o.status.success(), "{args:?}: {stderr}");
        let line = stderr.lines().find(|l| l.starts_with("--files merged:")).map(str::to_string);
        seen.push((std::fs::read(&j).unwrap(), line));
    }
    let joined = format!("--files merged: 10000 requests joined into {} files ({} merged away)", 10_000 - 6, 6);
    assert_eq!(seen[1].1.as_deref(), Some(joined.as_str()), "the held path");
    assert_eq!(seen[0].1, seen[1].1, "the joined line");
    assert!(seen[0].0 == seen[1].0, "the streamed report is the held one");

    // The library's streamed run, a trace whose writes and reads carry
    // contents (merged with their requests), against the held workload
    // merged whole.
    let cfg = Config::preset("tiny").unwrap();
    let fiu = d.0.join("fiu.trace");
    fiu_like_trace(&fiu, 6000, 4);
    let model: ContentModel = "zipf:a=0.2,dedup=0.5".parse().unwrap();
    for path in [&fiu, &t] {
        // The ASCII trace's addresses folded onto the tiny device.
        let wrap = Some(cfg.logical_pages());
        let load = LoadOptions { files: FileRule::Merged, wrap_to_pages: wrap, ..load_opts(&cfg) };
        let opts = RunOptions { check: true, check_every: 997, resources: false };
        let mut w = dedupsim::trace::load(path, &load).unwrap().workload;
        let merged = w.apply_file_rule(FileRule::Merged);
        assert!(merged > 0, "{}: requests to merge", path.display());
        for policy in ["native", "dedup"] {
            let need = runner::need_content(&cfg, &[policy.to_string()]).unwrap();
            let prepared = runner::prepare_for(w.clone(), &model, cfg.seed, &cfg.precondition, need).unwrap();
            let held = runner::run_one(&cfg, &prepared, policy, &opts, &mut |_, _| {}).unwrap();
            let mut counted = (0, 0);
            let streamed = runner::run_streamed(
                &cfg,
                path,
                &load,
                &model,
                policy,
                &opts,
                &mut |s| counted = (s.requests, s.end.joined),
                &mut |_, _| {},
            )
            .unwrap()
            .expect("merged files stream");
            assert_eq!(counted, (w.requests.len() as u64, merged), "{}: the first pass's counts", path.display());
            assert!(
                serde_json::to_string(&held).unwrap() == serde_json::to_string(&streamed).unwrap(),
                "{policy} on {}",
                path.display()
            );
        }
    }
}
