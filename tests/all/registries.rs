//! The registries ([`dedupsim::registry`]): every name is unique in its
//! registry, and every registered policy, engine, trace format and paper
//! can be reached from the command line, in the listing users read.

use crate::support::Command;
use dedupsim::experiment::papers;
use dedupsim::registry::Registry;
use dedupsim::trace::{TraceFormat, FORMATS};
use dedupsim::{engine, policy};

fn dedupsim(args: &[&str]) -> String {
    let out = Command::cargo_bin("dedupsim").expect("binary builds").args(args).assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// No name twice, and no name that is also another entry's alias.
fn unique<T>(r: &Registry<T>) {
    assert_eq!(r.duplicate(), None, "a {} is registered twice", r.kind);
}

#[test]
fn names_are_unique() {
    unique(&policy::REGISTRY);
    unique(&engine::REGISTRY);
    unique(&FORMATS);
    unique(&papers::REGISTRY);
    let mut names: Vec<&str> = FORMATS.names();
    for e in FORMATS.iter() {
        names.extend(e.item.aliases);
    }
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "a trace format name or alias is used twice");
}

/// `dedupsim policies` and `dedupsim engines` list every registered one, in
/// registry order, and each can be built under the default configuration.
#[test]
fn policies_and_engines_are_listed_and_build() {
    for (listing, names) in [("policies", policy::REGISTRY.names()), ("engines", engine::REGISTRY.names())] {
        let out = dedupsim(&[listing]);
        let listed: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().next()).collect();
        assert_eq!(listed, names, "dedupsim {listing}");
    }
    let cfg = dedupsim::config::Config::fad_table1();
    for name in policy::names() {
        let p = policy::build(name, &cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(p.name(), name);
    }
    for name in engine::names() {
        assert_eq!(engine::build(name, &cfg.engine_context()).unwrap().name(), name);
    }
    // `--engine`'s help names every engine (it is written from the registry).
    let help = dedupsim(&["run", "--help"]);
    let engine_help = help.lines().find(|l| l.contains("--engine")).expect("run --help has --engine");
    for name in engine::names() {
        assert!(
            engine_help.contains(&format!("{name},")) || engine_help.contains(&format!("{name};")),
            "{name}: {engine_help}"
        );
    }
}

/// Every trace format: named in `run --help`'s `--format`, its name and
/// aliases parse to it, its full name round-trips, and each variant has its
/// registry line.
#[test]
fn trace_formats_are_listed_and_parse() {
    let help = dedupsim(&["run", "--help"]);
    for e in FORMATS.iter() {
        assert!(help.contains(e.name), "run --help does not name the {} format", e.name);
        assert_eq!(e.item.format.registered().map(|r| r.name), Some(e.name));
        assert_eq!(e.item.format.to_string().parse::<TraceFormat>().unwrap(), e.item.format);
        for alias in e.item.aliases.iter().chain([&e.name]) {
            match e.item.needs_options {
                None => assert_eq!(alias.parse::<TraceFormat>().unwrap(), e.item.format, "{alias}"),
                Some(why) => assert!(alias.parse::<TraceFormat>().unwrap_err().to_string().contains(why)),
            }
            if e.item.options.is_none() {
                let err = format!("{alias}:x").parse::<TraceFormat>().unwrap_err().to_string();
                assert!(err.contains("takes no options"), "{alias}:x: {err}");
            }
        }
    }
}

/// Every paper is a `reproduce` subcommand, and `reproduce` has no
/// subcommand that is not a registered paper.
#[test]
fn papers_are_reproduce_subcommands() {
    let help = dedupsim(&["reproduce", "--help"]);
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .collect();
    assert_eq!(listed, papers::REGISTRY.names());
}
