//! CLI definition (clap) and dispatch. Exit codes: 0 success, 1 error
//! (bad input, invalid config, simulation error), 2 usage error (clap).
//! A closed stdout pipe (e.g. `| head`) is not an error.

mod bench;
mod cluster;
mod common;
mod config;
mod experiment;
mod observe;
mod run;
mod serve;
mod trace;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `dedupsim --version`: the crate version and the git commit built from
/// (`-dirty` for uncommitted changes, `unknown` outside a repository; see
/// build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("DEDUPSIM_GIT"), ")");

/// A fast, faithful, trace-driven simulator of deduplicating flash SSDs.
#[derive(Parser, Debug)]
#[command(name = "dedupsim", version = VERSION, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replay a trace (or the built-in synthetic workload) through one or more policies.
    Run(run::RunArgs),
    /// Trace tools: statistics (stats), conversion for SSDsim/MQSim (convert), synthetic traces
    /// (synth), traces from directory trees (from-files).
    #[command(subcommand)]
    Trace(trace::TraceCmd),
    /// Configuration tools.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// List the available policies.
    Policies,
    /// List the available dedup engines (--engine).
    Engines,
    /// Reproduce a paper's evaluation (`reproduce fad`: FAD Section IV, Figs. 2-3 and 8-16).
    #[command(subcommand)]
    Reproduce(experiment::ReproduceCmd),
    /// Run a grid of workloads x policies x parameters from a TOML file, emit it as a job list
    /// (--emit-jobs), or merge job results (`sweep collect DIR`).
    Sweep(experiment::SweepArgs),
    /// Measure simulator speed on the benchmark workload (see BENCHMARKS.md).
    Bench(run::BenchArgs),
    /// Serve the simulated device over NBD, so that real programs drive it with real bytes
    /// (docs/serve.md).
    Serve(serve::ServeArgs),
    /// ReoDedup's clustered deduplication: N nodes, chunks routed by fingerprint, read I/Os per write mode (docs/cluster.md).
    Cluster(cluster::ClusterArgs),
}

#[derive(Subcommand, Debug)]
enum ConfigCmd {
    /// Print the resolved configuration (TOML) with derived capacities.
    Show {
        /// Preset name or config file (default: fad-table1).
        source: Option<String>,
        /// Override a key, e.g. --set geometry.channels=4 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List the built-in presets.
    Presets,
    /// Write a dedupsim config from an SSDsim 2.1 `.parameters` file or an MQSim `ssdconfig.xml`,
    /// listing every field it cannot represent (docs/config-import.md).
    Import(config::ImportArgs),
}

/// The error and its causes, `a: b: c`, leaving out a cause whose text the
/// message already contains (library errors often embed their source).
fn error_chain(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

/// A negative number given to a flag that takes none (`--max-requests -1`,
/// `--timeseries -1us`): clap reads `-1` as a flag and says only
/// "unexpected argument '-1' found", naming neither the flag nor the
/// reason. This error names both; `None` for any other parse error.
fn negative_value_error(e: &clap::Error, args: &[String]) -> Option<clap::Error> {
    use clap::error::ErrorKind;
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let negative =
        |t: &str| t.strip_prefix('-').is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '.'));
    // The subcommand the arguments are for (`trace stats`, `reproduce fad`).
    let mut cmd = <Cli as clap::CommandFactory>::command();
    cmd.build(); // an argument prints (`--max-requests <MAX_REQUESTS>`) once built
    let mut rest = args.iter().skip(1).peekable();
    while let Some(sub) = rest.peek().and_then(|t| cmd.find_subcommand(t.as_str())).cloned() {
        cmd = sub;
        rest.next();
    }
    let rest: Vec<&String> = rest.collect();
    let (flag, value) = rest
        .windows(2)
        .map(|w| (w[0].as_str(), w[1].as_str()))
        .find(|(f, v)| negative(v) && f.starts_with('-') && !f.contains('=') && !negative(f))?;
    let arg = cmd
        .get_arguments()
        .find(|a| match flag.strip_prefix("--") {
            Some(long) => a.get_long() == Some(long),
            None => flag.len() == 2 && a.get_short().is_some_and(|s| flag.ends_with(s)),
        })
        .filter(|a| a.get_action().takes_values())?
        .to_string();
    Some(cmd.error(
        ErrorKind::InvalidValue,
        format!("invalid value '{value}' for '{arg}': `{value}` is negative, and {flag} takes no negative value"),
    ))
}

pub fn main() -> ExitCode {
    // Parsed as given (a path need not be UTF-8); read as text only to
    // explain an error.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let text: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            negative_value_error(&e, &text).unwrap_or(e).exit()
        }
    };
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Bench(a) => run::bench(a),
        Command::Reproduce(c) => experiment::reproduce(c),
        Command::Sweep(a) => experiment::sweep(a),
        Command::Trace(t) => trace::dispatch(t),
        Command::Cluster(a) => cluster::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Config(ConfigCmd::Show { source, set }) => dedupsim::config::Config::load(source.as_deref(), &set)
            .map_err(anyhow::Error::from)
            .and_then(|c| common::out(&c.show())),
        Command::Config(ConfigCmd::Import(a)) => config::import(a),
        Command::Config(ConfigCmd::Presets) => {
            let mut s = String::new();
            for (n, d) in dedupsim::config::Config::presets() {
                s.push_str(&format!("{n:<14} {d}\n"));
            }
            common::out(&s)
        }
        Command::Policies => common::out(&dedupsim::policy::REGISTRY.listing(18)),
        Command::Engines => common::out(&dedupsim::engine::REGISTRY.listing(14)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if common::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            ExitCode::from(1)
        }
    }
}
