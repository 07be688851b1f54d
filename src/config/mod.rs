//! Simulator configuration in two stages.
//!
//! A raw, serde-mirrored TOML document (presets in `presets/*.toml`, user
//! files, `--set key=value` overrides) is validated into the resolved
//! [`Config`] below, with derived geometry and units. `Config` composes the
//! lower modules' own parameter types (`geometry::GeometryConfig`,
//! `timing::TimingConfig`, `ftl::GcConfig`, re-exported here) and resolves
//! into what their constructors take (`setup.rs`): the simulator's modules
//! never see `Config` (ARCHITECTURE.md, "Layers").
//!
//! Loading: [`Config::load`] takes a preset name or a file, and `--set
//! key=value` overrides ([`apply_override`]) edit that document before it is
//! laid over its `base` (default `fad-table1`) and resolved. Presets are
//! compiled in with `include_str!`, so the binary needs no data files.
//! [`Config::validate`] runs before anything is simulated, so that a bad
//! value is a clear [`ConfigError`] naming the key instead of a panic or a
//! silently meaningless result deep in a run.

mod allocation;
mod error;
pub mod import;
mod overrides;
pub mod raw;
mod setup;
mod validate;

use crate::params::parse;
pub use crate::params::parse_size;
/// Parses a time string (`"20us"`, `"1.5ms"`, `"1s"`) to integer nanoseconds.
pub use crate::params::parse_time_ns;
/// Parameter tables with units in the value (moved to [`crate::params`]).
pub use crate::params::unit_keys;
pub use allocation::Allocation;
pub use error::ConfigError;
pub use overrides::apply_override;
pub use raw::RawConfig;
pub use setup::{format_bytes, IndexBound, MemoryEstimate};

pub use crate::ftl::{FtlParams, GcConfig, GcRule};
pub use crate::geometry::{Dim, GeometryConfig, ParallelUnit, StaticOrder, UnitOrder};
pub use crate::timing::{HashOverlap, HashParams, HashUnit, Scheduling, TimingConfig, TimingParams, WriteCompletion};
use crate::units::Nanos;
pub use crate::workload::{PreconditionOrder, PreconditionRule};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where untimed preconditioning writes are placed (`precondition.placement`).
///
/// FAD (§IV-A) does not say how its traces' data got onto the device before
/// the replay; SSDsim, which it extends, writes every page a trace reads,
/// round-robin and without deduplication. A deduplicating SSD would have
/// written that data through its engine and its placement, and a trace that
/// hashes the data it reads (FIU) says what the data was: `auto` (the
/// default) writes it so for such a trace, and keeps SSDsim's rule for the
/// others. docs/preconditioning.md.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionPlacement {
    /// Per workload: [`PreconditionPlacement::Policy`] when the trace
    /// carries content for pages it reads before writing them
    /// ([`crate::workload::Workload::past_contents`]: FIU), else
    /// [`PreconditionPlacement::RoundRobin`]. Which one a run used is in
    /// its report (`precondition`).
    #[default]
    Auto,
    /// Plain round-robin over the parallel units, page by page, with no
    /// policy and no deduplication among them (SSDsim's pre-processing):
    /// every policy starts from the same layout. Contents are drawn by the
    /// content model, even for pages whose content the trace shows. What
    /// validation (scripts/validate.sh, SSDsim's imported config) sets.
    RoundRobin,
    /// Through the dedup engine and the policy under test, like a replayed
    /// write (untimed), in `precondition.order`; each page with the content
    /// the trace showed for it when it shows one (a read's hash), else
    /// drawn by the content model.
    Policy,
}

impl PreconditionPlacement {
    /// Name as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            PreconditionPlacement::Auto => "auto",
            PreconditionPlacement::RoundRobin => "round-robin",
            PreconditionPlacement::Policy => "policy",
        }
    }

    /// The placement a run uses: `auto` resolved by whether the
    /// preconditioning writes carry the trace's own contents
    /// (`past_pages` of them, [`crate::workload::Workload::precondition_past_pages`]).
    pub fn resolve(self, past_pages: u64) -> PreconditionPlacement {
        match self {
            PreconditionPlacement::Auto if past_pages > 0 => PreconditionPlacement::Policy,
            PreconditionPlacement::Auto => PreconditionPlacement::RoundRobin,
            p => p,
        }
    }
}

/// Preconditioning: what is on the device before the replay starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreconditionConfig {
    pub rule: PreconditionRule,
    pub placement: PreconditionPlacement,
    /// The order of the preconditioning writes (`precondition.order`).
    pub order: PreconditionOrder,
    /// Fraction of every plane's blocks holding stale data at the start
    /// (an aged device), in [0, 1).
    pub aged: f64,
}

impl PreconditionConfig {
    /// `rule` with the default placement (`auto`) and order, a fresh device.
    pub fn with_rule(rule: PreconditionRule) -> PreconditionConfig {
        PreconditionConfig {
            rule,
            placement: PreconditionPlacement::Auto,
            order: PreconditionOrder::FirstRead,
            aged: 0.0,
        }
    }
}

/// How the trace is replayed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum ReplayConfig {
    /// Issue each request at its trace timestamp multiplied by `time_scale`.
    OpenLoop { time_scale: f64 },
    /// Ignore timestamps; keep `queue_depth` requests outstanding.
    ClosedLoop { queue_depth: u32 },
}

/// The deduplication engine (CAFTL-like, FAD §IV-A).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupConfig {
    /// Fingerprint computation per written page (FAD §IV-A: 32 us).
    pub fingerprint: Nanos,
    /// Number of hash engines working in parallel (FCFS among them).
    pub hash_engines: u32,
    /// What one engine takes at a time: a page (a request's pages spread
    /// over the engines) or a whole request (docs/simulator.md, "Hash
    /// engine models").
    pub hash_unit: HashUnit,
    /// Whether a request's programs start as its pages are hashed
    /// (pipelined) or only once the whole request is hashed.
    pub hash_overlap: HashOverlap,
    /// The dedup engine: how duplicates are found and what finding them
    /// costs (`--engine`; [`crate::engine`]). `caftl` by default.
    pub engine: String,
}

/// Labelled experiments of the reproduction (`[experiment]`): switches that
/// make dedupsim imitate something other than a faithful device. Off by
/// default; a configuration with one on is stamped as such in every report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExperimentConfig {
    /// `experiment.fad_ssdsim_model`: the deduplication model of the FAD
    /// authors' public simulator (FAD-SSDsim), as a labelled experiment, not
    /// a device anyone would build. Under it (see [`crate::sim`],
    /// "The authors' public dedup model"):
    ///
    /// * a page the policy *references* (a deduplicated duplicate) is left
    ///   unmapped (its LPN's old mapping released as on any overwrite) and
    ///   flagged; a read of a flagged, unmapped LPN is charged as a flash
    ///   read of physical page 0 (channel 0, chip 0);
    /// * programs of placement-free policies (Native, Deduplication, HAR,
    ///   FCRC) go to a unit drawn uniformly by a seeded PRNG over channels
    ///   `0 ..= channels - 2` and chips `0 ..= chips_per_channel - 2` of each
    ///   (FAD-SSDsim's `rand() % (channel - 1)`, `rand() % (chip - 1)`):
    ///   7 of FAD Table I's 16 chips. FAD's own placements are kept.
    ///
    /// Needs at least 2 channels and 2 chips per channel (the authors' code
    /// would take a remainder by 0) and `alloc_unit` chip, die or plane.
    pub fad_ssdsim_model: bool,
}

/// What every report of a run under `experiment.fad_ssdsim_model` says
/// (run table header, REPORT.md; JSON `device_model`).
pub const FAD_SSDSIM_MODEL_LABEL: &str = "EXPERIMENT experiment.fad_ssdsim_model: the FAD authors' public simulator's \
     dedup model (FAD-SSDsim: referenced duplicates unmapped and read from physical page 0 = channel 0 chip 0; \
     Native/Dedup/HAR/FCRC programs on random chips of channels 0..C-2, chips 0..K-2), NOT a faithful device";

/// The short value of the `device_model` CSV column / JSON field for
/// such a run (empty for dedupsim's own model).
pub const FAD_SSDSIM_MODEL_TAG: &str = "fad-ssdsim-model (authors' simulator, not a faithful device)";

/// The fully resolved, validated configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Preset name or config file the configuration came from.
    pub name: String,
    pub geometry: GeometryConfig,
    /// Fraction of raw capacity hidden from the host (0.20 = 20%).
    pub over_provisioning: f64,
    pub timing: TimingConfig,
    pub gc: GcConfig,
    pub precondition: PreconditionConfig,
    /// Granularity of the allocator's cyclic pointer.
    pub alloc_unit: ParallelUnit,
    /// How placement-free policies' pages are allocated.
    pub allocation: Allocation,
    /// `alloc_pages`: pages a parallel unit takes in a row, in write order,
    /// before the cyclic pointer of `native`, `dedup` and `die-hint` moves
    /// to the next unit (default 1). FAST'24 slides, Fig. 8(a): NVMe-A/B
    /// have 16 KB pages and allocate 2 of them (32 KB) per die.
    pub alloc_pages: u32,
    pub replay: ReplayConfig,
    pub dedup: DedupConfig,
    /// Per-policy parameter tables (`[policy.fad]`, `[policy.har]`, ...),
    /// parsed by each policy into its own typed parameters.
    pub policy: toml::Table,
    /// Per-engine parameter tables (`[engine.smartdedup]`, ...), parsed by
    /// each dedup engine into its own typed parameters.
    pub engine: toml::Table,
    /// Seed for every random choice of a run (content models, synthetic
    /// workloads, the FAD-SSDsim model's placement draws).
    pub seed: u64,
    /// Labelled experiments (`[experiment]`), all off by default.
    #[serde(default)]
    pub experiment: ExperimentConfig,
}

impl Config {
    /// FAD Table I (the default preset, `fad-table1`), built in code.
    pub fn fad_table1() -> Config {
        let transfer_ps_per_byte = 25_000;
        let page_size = 4096;
        Config {
            name: "fad-table1".into(),
            geometry: GeometryConfig {
                channels: 8,
                chips_per_channel: 2,
                dies_per_chip: 1,
                planes_per_die: 10,
                blocks_per_plane: 2048,
                pages_per_block: 64,
                page_size,
                unit_order: UnitOrder::ChannelFirst,
            },
            over_provisioning: 0.20,
            timing: TimingConfig {
                read: Nanos::from_us(20),
                program: Nanos::from_us(200),
                erase: Nanos(1_500_000),
                transfer_ps_per_byte,
                page_transfer: page_transfer_time(page_size, transfer_ps_per_byte),
                scheduling: Scheduling::ReadPriority,
                write_completion: WriteCompletion::Transfer,
                duplicate_read_shortcut: false,
            },
            gc: GcConfig { min_free_blocks: 64, copyback: true, wear_leveling: true, rule: GcRule::OnePerWrite },
            precondition: PreconditionConfig {
                rule: PreconditionRule::AllReads,
                placement: PreconditionPlacement::Auto,
                order: PreconditionOrder::FirstRead,
                aged: 0.0,
            },
            alloc_unit: ParallelUnit::Chip,
            alloc_pages: 1,
            allocation: Allocation::Dynamic,
            replay: ReplayConfig::OpenLoop { time_scale: 1.0 },
            dedup: DedupConfig {
                fingerprint: Nanos::from_us(32),
                hash_engines: 1,
                hash_unit: HashUnit::Page,
                hash_overlap: HashOverlap::Pipelined,
                engine: crate::engine::DEFAULT.to_string(),
            },
            policy: toml::Table::new(),
            engine: toml::Table::new(),
            seed: 42,
            experiment: ExperimentConfig::default(),
        }
    }
}

/// Time to move one page over the channel: `page_size × transfer`, rounded
/// to the nearest nanosecond (saturating, so absurd inputs cannot overflow).
pub fn page_transfer_time(page_size: u32, transfer_ps_per_byte: u64) -> Nanos {
    let ps = u128::from(page_size) * u128::from(transfer_ps_per_byte);
    Nanos(u64::try_from((ps + 500) / 1000).unwrap_or(u64::MAX))
}

/// Name and one-line description of every built-in preset.
const PRESET_LIST: &[(&str, &str)] = &[
    ("fad-table1", "FAD Table I: 8 ch x 2 chips x 10 planes, 80 GiB raw, 20% OP, SSDsim 25 ns/B bus"),
    ("fad-onfi800", "fad-table1 with a modern 800 MB/s ONFI channel (1.25 ns/B)"),
    ("tiny", "2 channels x 1 chip, 16 blocks x 8 pages per plane (1 MiB raw): for tests"),
    ("fast24-nvmevirt", "FAST'24 (Jun et al.) emulated NVMe drive: 4 ch x 2 dies, 32 KB pages, 36/185 us, 800 MB/s"),
];

/// The embedded TOML text of a preset (compiled in: no files needed at run time).
fn preset_text(name: &str) -> Option<&'static str> {
    Some(match name {
        "fad-table1" => include_str!("../../presets/fad-table1.toml"),
        "fad-onfi800" => include_str!("../../presets/fad-onfi800.toml"),
        "tiny" => include_str!("../../presets/tiny.toml"),
        "fast24-nvmevirt" => include_str!("../../presets/fast24-nvmevirt.toml"),
        _ => return None,
    })
}

fn preset_names() -> String {
    PRESET_LIST.iter().map(|(n, d)| format!("{n} ({d})")).collect::<Vec<_>>().join("; ")
}

/// A TOML document to load: its text and where it came from.
struct Doc {
    /// For error messages: `preset `tiny`` or the file path.
    origin: String,
    /// The config name unless the document sets `name`.
    name: String,
    /// Identity for `base` cycle detection.
    id: String,
    /// Directory that relative `base` file paths are resolved against.
    dir: Option<PathBuf>,
    text: String,
}

impl Doc {
    fn preset(name: &str) -> Option<Doc> {
        preset_text(name).map(|text| Doc {
            origin: format!("preset `{name}`"),
            name: name.to_string(),
            id: format!("preset:{name}"),
            dir: None,
            text: text.to_string(),
        })
    }

    fn file(path: &Path) -> Result<Doc, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| ConfigError::Io { path: path.display().to_string(), error })?;
        let id = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(Doc {
            origin: path.display().to_string(),
            name: path.display().to_string(),
            id: format!("file:{}", id.display()),
            dir: path.parent().map(Path::to_path_buf),
            text,
        })
    }

    /// Finds `base = "<name>"` of a document in `dir`: a preset name first,
    /// then a file relative to the including document.
    fn base(name: &str, dir: Option<&Path>, from: &str) -> Result<Doc, ConfigError> {
        if let Some(doc) = Doc::preset(name) {
            return Ok(doc);
        }
        let path = match dir {
            Some(d) if Path::new(name).is_relative() => d.join(name),
            _ => PathBuf::from(name),
        };
        if path.is_file() {
            return Doc::file(&path);
        }
        Err(ConfigError::invalid(
            "base",
            format!(
                "base = \"{name}\" (in {from}): neither a preset nor an existing file; presets: {}; or base = \"none\" for a standalone file",
                preset_names()
            ),
        ))
    }

    /// Parses the document, applies the overrides, lays it over its base
    /// chain, resolves and validates.
    fn load(self, overrides: &[String]) -> Result<Config, ConfigError> {
        let mut top = RawConfig::parse(&self.text, &self.origin)?;
        if !overrides.is_empty() {
            let mut table: toml::Table = toml::from_str(&self.text)
                .map_err(|e| ConfigError::Parse { origin: self.origin.clone(), message: e.to_string() })?;
            for o in overrides {
                apply_override(&mut table, o)?;
            }
            top = RawConfig::from_table(table, &format!("{} with --set overrides", self.origin))?;
        }
        let mut chain = vec![self.origin.clone()];
        let mut seen = vec![self.id.clone()];
        let mut next = top.base.clone();
        let mut dir = self.dir.clone();
        let mut from = self.origin.clone();
        let mut merged = top;
        // The config files read, for naming the one that sets a bad value.
        let mut files: Vec<(String, String)> = Vec::new();
        if self.id.starts_with("file:") {
            files.push((self.origin.clone(), self.text.clone()));
        }
        loop {
            let base = next.as_deref().unwrap_or("fad-table1");
            if base == "none" {
                break;
            }
            let doc = Doc::base(base, dir.as_deref(), &from)?;
            chain.push(doc.origin.clone());
            if seen.contains(&doc.id) {
                return Err(ConfigError::BaseCycle { chain: chain.join(" -> ") });
            }
            seen.push(doc.id.clone());
            let raw = RawConfig::parse(&doc.text, &doc.origin)?;
            if doc.id.starts_with("file:") {
                files.push((doc.origin.clone(), doc.text.clone()));
            }
            next = raw.base.clone();
            dir = doc.dir;
            from = doc.origin;
            merged = merged.overlay(raw);
        }
        let config = merged.resolve(&self.name)?;
        config.validate().map_err(|e| name_the_source(e, overrides, &files))?;
        Ok(config)
    }
}

/// A value that cannot be simulated ([`ConfigError::Invalid`]), its message
/// led by the config file (of `files`, the top one first) that sets the
/// key. A value given by a `--set` (the command line the user just typed),
/// of a preset, or a limit spanning several keys keeps the bare message.
fn name_the_source(e: ConfigError, overrides: &[String], files: &[(String, String)]) -> ConfigError {
    let ConfigError::Invalid { key, message } = e else { return e };
    if overrides.iter().any(|o| o.split_once('=').is_some_and(|(k, _)| k.trim() == key)) {
        return ConfigError::Invalid { key, message };
    }
    let sets_key = |text: &str| {
        let Ok(table) = toml::from_str::<toml::Table>(text) else { return false };
        let mut parts = key.split('.');
        let mut value = parts.next().and_then(|first| table.get(first));
        for part in parts {
            value = value.and_then(|v| v.get(part));
        }
        value.is_some()
    };
    match files.iter().find(|(_, text)| sets_key(text)) {
        Some((origin, _)) => ConfigError::Invalid { message: format!("{origin}: {message}"), key },
        None => ConfigError::Invalid { key, message },
    }
}

impl Config {
    /// A built-in preset by name (see [`Config::presets`]).
    pub fn preset(name: &str) -> Result<Config, ConfigError> {
        Doc::preset(name)
            .ok_or_else(|| ConfigError::UnknownPreset { name: name.to_string(), presets: preset_names() })?
            .load(&[])
    }

    /// Names and one-line descriptions of the built-in presets.
    pub fn presets() -> &'static [(&'static str, &'static str)] {
        PRESET_LIST
    }

    /// The embedded TOML source of a preset, for `config show --raw` or
    /// for copying into a user file.
    pub fn preset_source(name: &str) -> Option<&'static str> {
        preset_text(name)
    }

    /// Loads a TOML file laid over its `base` (default `fad-table1`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        Doc::file(path.as_ref())?.load(&[])
    }

    /// Loads TOML text as if it were a file called `name` (relative `base`
    /// paths resolve against the current directory).
    pub fn from_toml_str(text: &str, name: &str) -> Result<Config, ConfigError> {
        Config::from_toml_str_with_overrides(text, name, &[])
    }

    /// [`Config::from_toml_str`] with `--set` overrides applied to the text
    /// before its base is laid under it, as [`Config::load`] does for a file.
    pub fn from_toml_str_with_overrides(text: &str, name: &str, overrides: &[String]) -> Result<Config, ConfigError> {
        Doc {
            origin: name.to_string(),
            name: name.to_string(),
            id: format!("text:{name}"),
            dir: None,
            text: text.to_string(),
        }
        .load(overrides)
    }

    /// The CLI entry point: `preset_or_file` names an existing file (a file
    /// wins over a preset of the same name) or a preset; `None` is
    /// `fad-table1`. `overrides` are `key=value` strings applied in order to
    /// that document before its base is applied (see [`apply_override`]).
    pub fn load(preset_or_file: Option<&str>, overrides: &[String]) -> Result<Config, ConfigError> {
        let doc = match preset_or_file {
            None => Doc::preset("fad-table1"),
            Some(s) if Path::new(s).is_file() => Some(Doc::file(Path::new(s))?),
            Some(s) => match Doc::preset(s) {
                None if Path::new(s).exists() => return Err(ConfigError::NotAFile { name: s.to_string() }),
                d => d,
            },
        };
        doc.ok_or_else(|| ConfigError::UnknownPreset {
            name: preset_or_file.unwrap_or_default().to_string(),
            presets: preset_names(),
        })?
        .load(overrides)
    }

    /// Recomputes the derived fields (`timing.page_transfer`) after a
    /// config was edited in code.
    pub fn refresh_derived(&mut self) {
        self.timing.page_transfer = page_transfer_time(self.geometry.page_size, self.timing.transfer_ps_per_byte);
    }

    /// The loud label of a labelled experiment this configuration runs
    /// (`None` for dedupsim's own model): see [`FAD_SSDSIM_MODEL_LABEL`].
    pub fn experiment_label(&self) -> Option<&'static str> {
        self.experiment.fad_ssdsim_model.then_some(FAD_SSDSIM_MODEL_LABEL)
    }

    /// Chips in the array (channels × chips per channel; saturating).
    pub fn chips(&self) -> u32 {
        self.geometry.channels.saturating_mul(self.geometry.chips_per_channel)
    }

    /// Dies in the array.
    pub fn dies(&self) -> u32 {
        self.chips().saturating_mul(self.geometry.dies_per_chip)
    }

    /// Planes in the array.
    pub fn planes(&self) -> u32 {
        self.dies().saturating_mul(self.geometry.planes_per_die)
    }

    /// Erase blocks in the array.
    pub fn blocks(&self) -> u64 {
        u64::from(self.planes()).saturating_mul(self.geometry.blocks_per_plane.into())
    }

    /// Physical pages in the array (at most `u32::MAX` once validated, so page
    /// numbers and page counts both fit `u32`).
    pub fn raw_pages(&self) -> u64 {
        self.blocks().saturating_mul(self.geometry.pages_per_block.into())
    }

    /// Pages visible to the host: `floor(raw_pages × (1 − over_provisioning))`.
    ///
    /// A product within 1e-6 of an integer is taken as that integer, so that
    /// binary rounding of decimal fractions (0.2, 0.1) never loses a page.
    pub fn logical_pages(&self) -> u64 {
        let op = self.over_provisioning;
        if !(0.0..1.0).contains(&op) {
            return 0;
        }
        let x = self.raw_pages() as f64 * (1.0 - op);
        let r = x.round();
        (if (x - r).abs() < 1e-6 { r } else { x.floor() }) as u64
    }

    /// Raw capacity in bytes.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_pages().saturating_mul(self.geometry.page_size.into())
    }

    /// Host-visible capacity in bytes.
    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages().saturating_mul(self.geometry.page_size.into())
    }

    /// Whole blocks per plane not backing host capacity (the spare area GC
    /// works with): `(raw_pages − logical_pages) / pages_per_block / planes`.
    pub fn spare_blocks_per_plane(&self) -> u64 {
        let per = u64::from(self.geometry.pages_per_block).saturating_mul(self.planes().into());
        (self.raw_pages() - self.logical_pages()).checked_div(per).unwrap_or(0)
    }

    /// Spare blocks per plane GC needs ([`Config::validate`] refuses fewer):
    /// 2 above `gc.min_free_blocks` with `until-threshold`, 2 with
    /// `one-per-write`, which may start above the spare blocks (SSDsim's
    /// `gc hard threshold = 0.30` with 20% over-provisioning): GC then
    /// simply runs on every write once the plane is that full.
    pub fn gc_spare_need(&self) -> u64 {
        if self.gc.rule == GcRule::UntilThreshold {
            u64::from(self.gc.min_free_blocks) + 2
        } else {
            2
        }
    }

    /// Stable 64-bit hash (xxh3) of the canonical TOML serialization,
    /// without `name`: two configs that simulate the same hash the same,
    /// whatever they are called or which files and overrides produced them.
    /// Print it as 16 hex digits ([`Config::config_hash_hex`]).
    pub fn config_hash(&self) -> u64 {
        let mut raw = RawConfig::from_config(self);
        raw.name = None;
        xxhash_rust::xxh3::xxh3_64(raw.to_toml_string().as_bytes())
    }

    /// [`Config::config_hash`] as 16 lowercase hex digits.
    pub fn config_hash_hex(&self) -> String {
        format!("{:016x}", self.config_hash())
    }

    /// The preset [`Config::changes`] compares with: the one this
    /// configuration is named after, else `fad-table1` (the default base).
    pub fn reference_preset(&self) -> &str {
        if Config::presets().iter().any(|(n, _)| *n == self.name) {
            &self.name
        } else {
            "fad-table1"
        }
    }

    /// What this configuration changes from its [reference
    /// preset](Config::reference_preset), as `--set` would write it: every
    /// key (dotted) whose value differs, with this configuration's value in
    /// TOML syntax (`(unset)` for a key only the preset has). `base`,
    /// `name` and `seed` are left out: reports carry the name and the seed
    /// on their own. Stamped on run reports for provenance.
    pub fn changes(&self) -> BTreeMap<String, String> {
        match Config::preset(self.reference_preset()) {
            Ok(base) => self.changes_from(&base),
            Err(_) => Default::default(),
        }
    }

    /// [`Config::changes`] against any configuration.
    pub fn changes_from(&self, base: &Config) -> BTreeMap<String, String> {
        fn flatten(prefix: &str, t: &toml::Table, out: &mut BTreeMap<String, String>) {
            for (k, v) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                match v {
                    toml::Value::Table(t) => flatten(&key, t, out),
                    v => {
                        out.insert(key, v.to_string());
                    }
                }
            }
        }
        let table = |c: &Config| {
            let mut raw = RawConfig::from_config(c);
            raw.name = None;
            raw.base = None;
            raw.seed = None;
            let mut out = BTreeMap::new();
            if let Ok(t) = raw.to_toml_string().parse::<toml::Table>() {
                flatten("", &t, &mut out);
            }
            out
        };
        let (mine, theirs) = (table(self), table(base));
        let mut changes: BTreeMap<String, String> =
            mine.iter().filter(|(k, v)| theirs.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
        for k in theirs.keys().filter(|k| !mine.contains_key(*k)) {
            changes.insert(k.clone(), "(unset)".to_string());
        }
        changes
    }

    /// The resolved config as a standalone TOML document (`base = "none"`,
    /// every key given): loading it back yields an equal `Config`.
    pub fn to_toml_string(&self) -> String {
        RawConfig::from_config(self).to_toml_string()
    }

    /// `dedupsim config show`: the resolved TOML followed by a commented
    /// block of derived values (still valid TOML).
    pub fn show(&self) -> String {
        const GIB: f64 = (1u64 << 30) as f64;
        let g = &self.geometry;
        let mut s = self.to_toml_string();
        s.push('\n');
        s.push_str("# ---- derived values (not keys: computed from the above) ----\n");
        let mut line = |k: &str, v: String| s.push_str(&format!("# {k:<22} {v}\n"));
        line("config hash", self.config_hash_hex());
        line("chips", format!("{} ({} channels x {})", self.chips(), g.channels, g.chips_per_channel));
        line("dies", self.dies().to_string());
        line("planes", self.planes().to_string());
        line("blocks", format!("{} ({} per plane)", self.blocks(), g.blocks_per_plane));
        line("raw capacity", format!("{:.3} GiB ({} pages)", self.raw_bytes() as f64 / GIB, self.raw_pages()));
        line(
            "logical capacity",
            format!("{:.3} GiB ({} pages)", self.logical_bytes() as f64 / GIB, self.logical_pages()),
        );
        line(
            "spare blocks per plane",
            format!("{} (gc.min_free_blocks = {})", self.spare_blocks_per_plane(), self.gc.min_free_blocks),
        );
        let m = self.memory_estimate();
        line(
            "memory per run",
            format!(
                "{} ({}; --check adds {})",
                format_bytes(m.per_run(false)),
                m.breakdown(),
                format_bytes(m.check_shadow)
            ),
        );
        let b = self.index_bound();
        line(
            "index bound",
            format!(
                "deduplicating runs: the fingerprint index takes 4 B per content id drawn (counted above at one id per logical page), dense up to {} ids ({}), then a hash map of the live contents",
                b.dense_ids,
                format_bytes(b.bytes)
            ),
        );
        line(
            "page transfer",
            format!(
                "{} ({} at {})",
                parse::format_time_ns(self.timing.page_transfer.0),
                parse::format_size(g.page_size.into()),
                parse::format_transfer_ps(self.timing.transfer_ps_per_byte)
            ),
        );
        s.push_str(&self.engine_parameters_shown());
        s
    }
}

impl fmt::Display for Config {
    /// Same as [`Config::show`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.show())
    }
}

#[cfg(test)]
impl Config {
    /// A small valid device for unit tests: `channels` x `chips` chips of one
    /// die and one plane each, `blocks` x `pages` per plane, 25%
    /// over-provisioning and a GC threshold of 2 free blocks.
    pub(crate) fn small_for_tests(channels: u32, chips: u32, blocks: u32, pages: u32) -> Config {
        let mut cfg = Config::fad_table1();
        cfg.geometry = GeometryConfig {
            channels,
            chips_per_channel: chips,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: blocks,
            pages_per_block: pages,
            page_size: 4096,
            unit_order: Default::default(),
        };
        cfg.over_provisioning = 0.25;
        cfg.gc.min_free_blocks = 2;
        // The unit tests' hand-computed timings place a page when its
        // request is processed; the tests of SSDsim's dynamic allocation
        // (the preset's default) set it themselves.
        cfg.allocation = Allocation::LeastLoaded;
        cfg.validate().expect("a valid small device");
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_loads_and_is_listed() {
        for (name, _) in Config::presets() {
            let c = Config::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&c.name, name);
            assert!(preset_text(name).is_some());
        }
    }

    #[test]
    fn fad_table1_matches_preset() {
        assert_eq!(Config::preset("fad-table1").unwrap(), Config::fad_table1());
        Config::fad_table1().validate().unwrap();
    }

    #[test]
    fn the_index_is_bounded_where_it_turns_hashed() {
        let c = Config::fad_table1();
        let b = c.index_bound();
        // The limit the FTL's index takes from the geometry it is built
        // with: 4 ids per physical page.
        let g = crate::geometry::Geometry::new(&c.geometry, crate::geometry::ParallelUnit::Chip);
        assert_eq!(b.dense_ids, crate::ftl::index::dense_limit(u64::from(g.total_pages)));
        // FAD Table I: 20,971,520 physical pages.
        assert_eq!(b.dense_ids, 83_886_080);
        assert_eq!(b.bytes, 4 * 83_886_080);
        assert!(c.show().contains("dense up to 83886080 ids (320.0 MiB)"), "{}", c.show());
    }

    #[test]
    fn memory_estimate_counts_the_ftl_tables() {
        let c = Config::fad_table1();
        let m = c.memory_estimate();
        let (logical, raw) = (c.logical_pages(), c.raw_pages());
        assert_eq!((m.l2p, m.reverse_map, m.fingerprint_index), (4 * logical, 4 * raw, 4 * logical));
        assert_eq!(m.entries, 16 * logical);
        assert_eq!(m.blocks, 12 * c.blocks());
        assert_eq!(m.per_run(true) - m.per_run(false), 4 * logical);
        // FAD Table I: 64 GiB logical, 80 GiB raw.
        assert_eq!(format_bytes(m.per_run(false)), "467.8 MiB");
        assert!(c.show().contains("# memory per run"));
        // Engine tables count (issue 30): SmartDedup's 2^24 groups alone
        // are 1 GiB; the default caftl adds nothing.
        assert_eq!(m.engine, 0);
        let sd = Config::load(
            None,
            &[
                "dedup.engine=\"smartdedup\"".into(),
                "engine.smartdedup.prefix_bits=24".into(),
                "engine.smartdedup.memory_mb=200".into(),
            ],
        )
        .unwrap();
        let e = sd.memory_estimate();
        assert!(e.engine > 1 << 30, "{}", e.breakdown());
        assert!(e.breakdown().contains("dedup engine"));
        let ld = Config::load(None, &["dedup.engine=\"light-dedup\"".into()]).unwrap();
        assert!(ld.memory_estimate().engine >= 16 * logical);
        // 16 TB raw (blocks_per_plane = 409600) is valid, and needs ~92 GiB.
        let mut big = c.clone();
        big.geometry.blocks_per_plane = 409_600;
        big.validate().unwrap();
        assert!(big.memory_estimate().per_run(false) > 90 << 30);
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
    }

    #[test]
    fn page_transfer_rounds() {
        assert_eq!(page_transfer_time(4096, 25_000), Nanos(102_400));
        assert_eq!(page_transfer_time(4096, 1_250), Nanos(5_120));
        assert_eq!(page_transfer_time(4096, 1), Nanos(4));
        assert_eq!(page_transfer_time(u32::MAX, u64::MAX), Nanos(u64::MAX));
    }
}
