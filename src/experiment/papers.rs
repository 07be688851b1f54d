//! The reproduced papers, one [`REGISTRY`] line each: `dedupsim reproduce
//! NAME` looks its paper up here, and every paper, FAD included, takes the
//! same road: its [`Declaration`] (the paper's own file:
//! [`super::fad`], [`super::smartdedup`], [`super::fast24`],
//! [`super::lightdedup`], [`super::reodedup`]) run by [`super::declare::run`].
//!
//! Adding a paper: write its file with a function that returns a
//! [`Declaration`] and add one line here; its `reproduce NAME` subcommand
//! (the shared flags, this line's help text) is built from the line.
//! (FAD's published numbers are [`super::paper`], a different thing.)

use super::declare::{self, Declaration, Outcome};
use super::fad::{self, FadOptions};
use super::{ExperimentError, Observer, WorkloadSpec};
use crate::config::Config;
use crate::registry::{Entry, Registry};
use std::path::{Path, PathBuf};

/// What every reproduction is given (the `reproduce` flags they share,
/// and FAD's own).
#[derive(Clone, Debug)]
pub struct PaperOptions {
    /// Workload scale in (0, 1].
    pub scale: f64,
    /// The command line, printed at the top of the report.
    pub command: String,
    /// Write PNG and SVG plots.
    pub plots: bool,
    /// The recorded real-content traces, as a workload family.
    pub recorded: Option<PathBuf>,
    /// `reproduce fad`'s own options (its `scale`, `command`, `plots` and
    /// `recorded` are the fields above; the other papers ignore it).
    pub fad: FadOptions,
}

impl PaperOptions {
    /// The defaults at `scale`.
    pub fn at_scale(scale: f64) -> PaperOptions {
        PaperOptions {
            scale,
            command: String::new(),
            plots: true,
            recorded: None,
            fad: FadOptions { scale, ..FadOptions::default() },
        }
    }
}

/// A paper's evaluation ready to run, and what the CLI says about it.
pub struct Declared {
    pub declaration: Declaration,
    /// Warnings to show the user (e.g. a trace in `--traces` not used).
    pub warnings: Vec<String>,
    /// How the workloads are described after the run ("(9 Table II-matched
    /// replicas, 0 traces)"); `None`: counted as result rows.
    pub workloads: Option<String>,
    /// FAD's workload choices (one per Table II row); empty for the others.
    pub choices: Vec<fad::WorkloadChoice>,
}

impl Declared {
    /// A declaration with nothing more to say.
    pub fn plain(declaration: Declaration) -> Declared {
        Declared { declaration, warnings: Vec::new(), workloads: None, choices: Vec::new() }
    }
}

/// Builds a paper's [`Declared`] evaluation from the base configuration.
pub type Declare = fn(&Config, &PaperOptions) -> Result<Declared, ExperimentError>;

/// What a paper's [`REGISTRY`] line holds beside its name and description.
#[derive(Copy, Clone, Debug)]
pub struct Registered {
    /// The preset it runs on when neither `--preset` nor `--config` is given
    /// (`None`: the default device).
    pub preset: Option<&'static str>,
    /// Its scale without `--quick` or `--scale`.
    pub full_scale: f64,
    /// Its variants set `dedup.engine` themselves (a user's engine would be
    /// ignored by them and replace the CAFTL baseline, so it is refused).
    pub own_engine: bool,
    pub declare: Declare,
    /// What `reproduce NAME --help` says it reproduces (the subcommand's
    /// help, built from this line).
    pub help: &'static str,
}

/// One [`REGISTRY`] line.
const fn line(
    name: &'static str,
    about: &'static str,
    preset: Option<&'static str>,
    full_scale: f64,
    own_engine: bool,
    declare: Declare,
) -> Entry<Registered> {
    Entry { name, about, item: Registered { preset, full_scale, own_engine, declare, help: about } }
}

impl Entry<Registered> {
    /// The line with the longer text `reproduce NAME --help` shows.
    const fn help(mut self, help: &'static str) -> Entry<Registered> {
        self.item.help = help;
        self
    }
}

/// The scale of a declared reproduction without `--quick`.
const DECLARED_SCALE: f64 = 0.2;

/// Every reproduced paper, in the order `reproduce --help` lists them.
pub const REGISTRY: Registry<Registered> = Registry::new(
    "paper",
    &[
        line("fad", "FAD (Lin et al.) Section IV", None, 1.0, false, declare_fad).help(
            "FAD (Lin et al.) Section IV: Figs. 2-3 and 8-16 on the nine Table II workloads, with \
             results.csv/json, REPORT.md and plots (see docs/reproduce.md)",
        ),
        line("smartdedup", "SmartDedup (Yang et al., ATC'19) §4.2 and §4.5", None, DECLARED_SCALE, true, |cfg, o| {
            with_recorded(super::smartdedup::declaration(cfg, o.scale), cfg, o)
        })
        .help(
            "SmartDedup (Yang et al., ATC'19) §4.2 and §4.5: dedup ratio vs memory for G-LRU / LRU / \
             refcount eviction, the two-level store's gain, the iDedup filter (docs/engines.md)",
        ),
        line(
            "fast24",
            "FAST'24 (Jun et al.) die-allocation hint",
            Some("fast24-nvmevirt"),
            DECLARED_SCALE,
            false,
            |cfg, o| with_recorded(super::fast24::declaration(), cfg, o),
        )
        .help(
            "FAST'24 (Jun et al.): die-level collisions of fragmented and overwritten files and the \
             die-allocation hint, on the fast24-nvmevirt preset (default) (docs/policies.md)",
        ),
        line("light-dedup", "Light-Dedup (Qiu et al., ATC'23)", None, DECLARED_SCALE, true, |cfg, o| {
            with_recorded(super::lightdedup::declaration(cfg, o.scale), cfg, o)
        })
        .help(
            "Light-Dedup (Qiu et al., ATC'23): hint hit rate with and without trust degrees, \
             duplicate-run lengths, LMT metadata amplification (entry vs region, fresh and aged), \
             verify reads vs hash time (docs/engines.md)",
        ),
        line(
            "reodedup",
            "ReoDedup's relocation inside the SSD (Wang et al.)",
            None,
            DECLARED_SCALE,
            false,
            |cfg, o| with_recorded(super::reodedup::declaration(cfg, o.scale), cfg, o),
        )
        .help(
            "ReoDedup's relocation inside the SSD (reodedup-csr, reodedup-atr) vs Deduplication, HAR, \
             FCRC and FAD on the nine Table II replicas: read latency, DOF, dedup rate, extra writes \
             (docs/reodedup.md)",
        ),
    ],
);

/// A declared reproduction with `--recorded`'s workloads added.
fn with_recorded(mut d: Declaration, cfg: &Config, o: &PaperOptions) -> Result<Declared, ExperimentError> {
    if let Some(dir) = &o.recorded {
        d.add_recorded(dir, cfg)?;
    }
    Ok(Declared::plain(d))
}

/// FAD: its Table II workloads chosen (real traces in `--traces`, else
/// replicas), the declaration of [`fad::declaration`].
pub(super) fn declare_fad(cfg: &Config, o: &PaperOptions) -> Result<Declared, ExperimentError> {
    let opts = FadOptions {
        scale: o.scale,
        command: o.command.clone(),
        plots: o.plots,
        recorded: o.recorded.clone(),
        ..o.fad.clone()
    };
    let (declaration, choices) = fad::declaration(cfg, &opts)?;
    let warnings = choices.iter().filter_map(|c| c.note.as_ref().map(|n| format!("{}: {n}", c.row.name))).collect();
    let replicas = choices.iter().filter(|c| matches!(c.def.spec, WorkloadSpec::Replica(_))).count();
    let workloads = Some(format!(
        "{} workloads ({} Table II-matched replicas, {} traces)",
        choices.len(),
        replicas,
        choices.len() - replicas
    ));
    Ok(Declared { declaration, warnings, workloads, choices })
}

/// Runs `declared` (resuming from `out/cells`) and writes `results.csv`,
/// `results.json`, `REPORT.md`, plots and `timing.json` into `out`.
pub fn run(
    declared: &Declared,
    base: &Config,
    opts: &PaperOptions,
    out: &Path,
    jobs: usize,
    obs: &dyn Observer,
) -> Result<Outcome, ExperimentError> {
    declare::run(&declared.declaration, base, out, jobs, obs, &opts.command, opts.plots)
}

#[cfg(test)]
mod tests {
    use super::REGISTRY;

    /// Every paper's declaration is named after its registry line (the
    /// output directory, `timing.json` and the report say that name).
    #[test]
    fn declarations_carry_their_registry_names() {
        let cfg = Config::fad_table1();
        assert_eq!(REGISTRY.duplicate(), None);
        for e in REGISTRY.iter() {
            let o = super::PaperOptions::at_scale(0.01);
            let cfg = match e.item.preset {
                Some(p) => Config::preset(p).unwrap(),
                None => cfg.clone(),
            };
            let d = (e.item.declare)(&cfg, &o).unwrap();
            assert_eq!(d.declaration.name, e.name);
        }
    }
    use crate::config::Config;
}
