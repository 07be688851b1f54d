//! `dedupsim config import` on the peers' own FAD Table I configs
//! (`../shared/peers/config`, skipped with a note when absent): the imported
//! configs run exactly as the settings scripts/validate.sh used for its
//! SSDsim-rule and MQSim-rule columns before it imported them, apart from
//! the named fields where the peers' files say otherwise.

use crate::support::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What an imported SSDsim config sets that the old hand-written
/// settings left at dedupsim's defaults: no copyback bit in SSDsim's
/// `advanced command`, `wear leveling` never read by SSDsim (neither
/// matters without GC), and SSDsim's round-robin preconditioning.
const SSDSIM_RULES: &[&str] =
    &["--set", "gc.copyback=false", "--set", "gc.wear_leveling=false", "--set", "precondition.placement=round-robin"];

fn peers_config() -> Option<PathBuf> {
    let dir = std::env::var_os("DEDUPSIM_PEERS_CONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/config"));
    if dir.join("ssdsim-fad-table1.parameters").is_file() && dir.join("mqsim-fad-table1.xml").is_file() {
        Some(dir)
    } else {
        eprintln!("note: {} has no peer configs; skipping the config import comparisons", dir.display());
        None
    }
}

fn import(file: &Path, out: &Path) {
    Command::cargo_bin("dedupsim").unwrap().arg("config").arg("import").arg(file).arg("-o").arg(out).assert().success();
}

/// `run -q -p native WORKLOAD ARGS --json`, the report without its
/// `config_name` (a file path or a preset name).
fn run(dir: &Path, workload: &[&str], args: &[&str]) -> Value {
    let json = dir.join("run.json");
    Command::cargo_bin("dedupsim")
        .unwrap()
        .args(["run", "-q", "-p", "native", "--json"])
        .arg(&json)
        .args(workload)
        .args(args)
        .assert()
        .success();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v[0].as_object_mut().unwrap().remove("config_name");
    v
}

/// `v` without the keys at `paths` (slash-separated, under the first report).
fn without(mut v: Value, paths: &[&str]) -> Value {
    for p in paths {
        let (parent, last) = p.rsplit_once('/').map_or(("", *p), |(a, b)| (a, b));
        let mut node = &mut v[0];
        for k in parent.split('/').filter(|k| !k.is_empty()) {
            node = &mut node[k];
        }
        // A run at the defaults names no changes (no `config_changes`,
        // `config_reference`); any other key must exist.
        let removed = node.as_object_mut().unwrap().remove(last);
        assert!(removed.is_some() || ["config_changes", "config_reference"].contains(p), "no key {p}");
    }
    v
}

/// The workloads compared: a synthetic one, and the validation's first
/// trace converted as scripts/validate.sh converts it, when present.
fn workloads(dir: &Path) -> Vec<Vec<String>> {
    let mut w = vec![vec!["--synth".to_string(), "requests=3000".to_string()]];
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/traces/umass-financial1-head10k/financial1_head10000.disksim.ascii.gz");
    if trace.is_file() {
        let ascii = dir.join("fin.ascii");
        Command::cargo_bin("dedupsim")
            .unwrap()
            .args(["trace", "convert"])
            .arg(&trace)
            .args(["--to", "ssdsim", "--volume", "merge", "--wrap", "-o"])
            .arg(&ascii)
            .assert()
            .success();
        w.push(vec!["--trace".into(), ascii.display().to_string(), "--format".into(), "ssdsim".into()]);
    } else {
        eprintln!("note: {} is absent; comparing on the synthetic workload only", trace.display());
    }
    w
}

/// One column: the import of `peer_file` against validate.sh's former
/// flags `old`. With `old` + `corrections` (the fields where the peer's
/// file says otherwise) the whole report is identical, config hash
/// included; with `old` alone, all but the config identity and the
/// `differ` paths.
fn compare(dir: &Path, peer_file: &Path, old: &[&str], corrections: &[&str], differ: &[&str]) {
    let toml = dir.join("imported.toml");
    import(peer_file, &toml);
    let toml = toml.display().to_string();
    for w in workloads(dir) {
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        let imported = run(dir, &w, &["--config", &toml]);
        let mut fixed = old.to_vec();
        fixed.extend_from_slice(corrections);
        assert_eq!(imported, run(dir, &w, &fixed), "{peer_file:?} on {w:?}: import != {fixed:?}");
        // `precondition` names the placement as set (round-robin) or as
        // `auto` resolved it (round-robin on these content-free traces).
        let mut skip = vec!["config_hash", "config_changes", "config_reference", "precondition"];
        skip.extend_from_slice(differ);
        assert_eq!(
            without(imported, &skip),
            without(run(dir, &w, old), &skip),
            "{peer_file:?} on {w:?}: import != {old:?}"
        );
    }
}

#[test]
fn ssdsim_import_runs_as_validate_sh_ssdsim_dynamic_column() {
    // SSDsim's dynamic allocation is fad-table1's own (issue 25 item 6).
    let Some(peers) = peers_config() else { return };
    let dir = tempfile::tempdir().unwrap();
    compare(dir.path(), &peers.join("ssdsim-fad-table1.parameters"), &[], SSDSIM_RULES, &[]);
}

#[test]
fn ssdsim_static_import_runs_as_validate_sh_static_column() {
    let Some(peers) = peers_config() else { return };
    let dir = tempfile::tempdir().unwrap();
    // validate.sh's edit of SSDsim's file for the static table.
    let text = std::fs::read(peers.join("ssdsim-fad-table1.parameters")).unwrap();
    let text = String::from_utf8_lossy(&text)
        .lines()
        .map(|l| {
            if l.starts_with("allocation=") {
                "allocation=1;".to_string()
            } else if l.starts_with("static_allocation=") {
                "static_allocation=1;".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let file = dir.path().join("static.parameters");
    std::fs::write(&file, text).unwrap();
    compare(dir.path(), &file, &["--set", "allocation=static:CWDP"], SSDSIM_RULES, &[]);
}

#[test]
fn mqsim_import_runs_as_validate_sh_mqsim_column() {
    let Some(peers) = peers_config() else { return };
    let dir = tempfile::tempdir().unwrap();
    // MQSim's file turns preconditioning off: it maps a never-written page
    // on its first read, i.e. only pages read before they are written are
    // on the device (validate.sh's flags kept SSDsim's every-read-page
    // pre-processing: more untimed programs, the same latencies).
    compare(
        dir.path(),
        &peers.join("mqsim-fad-table1.xml"),
        &["--set", "allocation=static:CWDP", "--set", "timing.write_completion=program"],
        &["--set", "precondition.rule=reads-before-writes", "--set", "precondition.placement=round-robin"],
        &["counters/programs/precondition", "counters/precondition_requests"],
    );
}

#[test]
fn import_refuses_to_overwrite_its_input_and_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.parameters");
    std::fs::write(&file, "channel number = 1;\nchip number = 1;\nchip number[0] = 1;\ndie number = two;\n").unwrap();
    Command::cargo_bin("dedupsim").unwrap().arg("config").arg("import").arg(&file).assert().failure().stderr(
        crate::support::predicate::str::contains(format!(
            "{}:4: `die number = two`: expected an integer",
            file.display()
        )),
    );
    Command::cargo_bin("dedupsim")
        .unwrap()
        .arg("config")
        .arg("import")
        .arg(&file)
        .arg("-o")
        .arg(&file)
        .assert()
        .failure()
        .stderr(crate::support::predicate::str::contains("this file is also an input"));
    assert!(std::fs::read_to_string(&file).unwrap().contains("two"), "the input was overwritten");
}
