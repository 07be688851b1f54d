//! The raw document resolved into a [`Config`] ([`RawConfig::resolve`])
//! and a [`Config`] written back as one ([`RawConfig::from_config`]).

use super::super::{
    page_transfer_time, Config, ConfigError, DedupConfig, ExperimentConfig, GcConfig, GeometryConfig, HashOverlap,
    HashUnit, PreconditionConfig, PreconditionOrder, ReplayConfig, TimingConfig,
};
use super::*;

impl RawConfig {
    /// Resolves a fully merged document into a [`Config`] named `name`
    /// (used unless the document sets `name`), deriving `page_transfer`.
    ///
    /// Only completeness and representability are checked here; the
    /// semantic checks are [`Config::validate`], which loaders run next.
    pub fn resolve(self, name: &str) -> Result<Config, ConfigError> {
        fn need<T>(v: Option<T>, key: &str) -> Result<T, ConfigError> {
            v.ok_or_else(|| ConfigError::Missing { key: key.to_string() })
        }
        let g = self.geometry.unwrap_or_default();
        let t = self.timing.unwrap_or_default();
        let gc = self.gc.unwrap_or_default();
        let r = self.replay.unwrap_or_default();
        let pc = self.precondition.unwrap_or_default();
        let d = self.dedup.unwrap_or_default();
        let x = self.experiment.unwrap_or_default();

        let page_size_bytes = need(g.page_size, "geometry.page_size")?.0;
        let page_size = u32::try_from(page_size_bytes).map_err(|_| ConfigError::Invalid {
            key: "geometry.page_size".into(),
            message: format!(
                "geometry.page_size = {page_size_bytes} bytes: too large; flash pages are a few KiB (e.g. \"4KiB\", \"16KiB\")"
            ),
        })?;
        let transfer_ps_per_byte = need(t.transfer, "timing.transfer")?.0;

        // Both replay parameters are checked when given, even the one the
        // mode does not use, so that a mistake is not silently ignored.
        if r.queue_depth == Some(0) {
            return Err(ConfigError::invalid(
                "replay.queue_depth",
                "replay.queue_depth = 0: closed-loop replay needs at least 1 outstanding request",
            ));
        }
        if let Some(s) = r.time_scale {
            check_time_scale(s)?;
        }
        let replay = match need(r.mode, "replay.mode")? {
            RawReplayMode::OpenLoop => ReplayConfig::OpenLoop { time_scale: need(r.time_scale, "replay.time_scale")? },
            RawReplayMode::ClosedLoop => {
                ReplayConfig::ClosedLoop { queue_depth: need(r.queue_depth, "replay.queue_depth")? }
            }
        };

        let policy = normalize_policy(self.policy.unwrap_or_default())?;
        let engine_params = normalize_engine_tables(self.engine.unwrap_or_default())?;
        let engine = d.engine.clone().unwrap_or_else(|| crate::engine::DEFAULT.to_string());

        Ok(Config {
            name: self.name.unwrap_or_else(|| name.to_string()),
            geometry: GeometryConfig {
                channels: need(g.channels, "geometry.channels")?,
                chips_per_channel: need(g.chips_per_channel, "geometry.chips_per_channel")?,
                dies_per_chip: need(g.dies_per_chip, "geometry.dies_per_chip")?,
                planes_per_die: need(g.planes_per_die, "geometry.planes_per_die")?,
                blocks_per_plane: need(g.blocks_per_plane, "geometry.blocks_per_plane")?,
                pages_per_block: need(g.pages_per_block, "geometry.pages_per_block")?,
                page_size,
                unit_order: g.unit_order.unwrap_or_default(),
            },
            over_provisioning: need(self.over_provisioning, "over_provisioning")?.0,
            timing: TimingConfig {
                read: need(t.read, "timing.read")?.0,
                program: need(t.program, "timing.program")?.0,
                erase: need(t.erase, "timing.erase")?.0,
                transfer_ps_per_byte,
                page_transfer: page_transfer_time(page_size, transfer_ps_per_byte),
                scheduling: need(t.scheduling, "timing.scheduling")?,
                write_completion: need(t.write_completion, "timing.write_completion")?,
                duplicate_read_shortcut: t.duplicate_read_shortcut.unwrap_or(false),
            },
            gc: GcConfig {
                min_free_blocks: need(gc.min_free_blocks, "gc.min_free_blocks")?,
                copyback: need(gc.copyback, "gc.copyback")?,
                wear_leveling: need(gc.wear_leveling, "gc.wear_leveling")?,
                rule: need(gc.rule, "gc.rule")?,
            },
            precondition: PreconditionConfig {
                rule: need(pc.rule, "precondition.rule")?,
                placement: need(pc.placement, "precondition.placement")?,
                order: pc.order.unwrap_or_default(),
                aged: pc.aged.map_or(0.0, |a| a.0),
            },
            alloc_unit: need(self.alloc_unit, "alloc_unit")?,
            allocation: need(self.allocation, "allocation")?,
            alloc_pages: self.alloc_pages.unwrap_or(1),
            replay,
            dedup: DedupConfig {
                fingerprint: need(d.fingerprint, "dedup.fingerprint")?.0,
                hash_engines: need(d.hash_engines, "dedup.hash_engines")?,
                hash_unit: d.hash_unit.unwrap_or_default(),
                hash_overlap: d.hash_overlap.unwrap_or_default(),
                engine,
            },
            policy,
            engine: engine_params,
            seed: need(self.seed, "seed")?.0,
            experiment: ExperimentConfig { fad_ssdsim_model: x.fad_ssdsim_model.unwrap_or(false) },
        })
    }

    /// The fully populated, standalone (`base = "none"`) document of a
    /// resolved config: what `config show` prints and the hash covers.
    pub fn from_config(c: &Config) -> RawConfig {
        let g = &c.geometry;
        let (mode, time_scale, queue_depth) = match c.replay {
            ReplayConfig::OpenLoop { time_scale } => (RawReplayMode::OpenLoop, Some(time_scale), None),
            ReplayConfig::ClosedLoop { queue_depth } => (RawReplayMode::ClosedLoop, None, Some(queue_depth)),
        };
        RawConfig {
            base: Some("none".into()),
            name: Some(c.name.clone()),
            seed: Some(RawSeed(c.seed)),
            over_provisioning: Some(RawFraction(c.over_provisioning)),
            alloc_unit: Some(c.alloc_unit),
            allocation: Some(c.allocation),
            alloc_pages: (c.alloc_pages != 1).then_some(c.alloc_pages),
            geometry: Some(RawGeometry {
                channels: Some(g.channels),
                chips_per_channel: Some(g.chips_per_channel),
                dies_per_chip: Some(g.dies_per_chip),
                planes_per_die: Some(g.planes_per_die),
                blocks_per_plane: Some(g.blocks_per_plane),
                pages_per_block: Some(g.pages_per_block),
                page_size: Some(RawSize(u64::from(g.page_size))),
                unit_order: (!g.unit_order.is_default()).then_some(g.unit_order),
            }),
            timing: Some(RawTiming {
                read: Some(RawTime(c.timing.read)),
                program: Some(RawTime(c.timing.program)),
                erase: Some(RawTime(c.timing.erase)),
                transfer: Some(RawTransfer(c.timing.transfer_ps_per_byte)),
                scheduling: Some(c.timing.scheduling),
                write_completion: Some(c.timing.write_completion),
                duplicate_read_shortcut: c.timing.duplicate_read_shortcut.then_some(true),
            }),
            gc: Some(RawGc {
                min_free_blocks: Some(c.gc.min_free_blocks),
                copyback: Some(c.gc.copyback),
                wear_leveling: Some(c.gc.wear_leveling),
                rule: Some(c.gc.rule),
            }),
            precondition: Some(RawPrecondition {
                rule: Some(c.precondition.rule),
                placement: Some(c.precondition.placement),
                // Written only when set, as `aged`: a configuration that
                // keeps the default keeps its hash.
                order: (c.precondition.order != PreconditionOrder::default()).then_some(c.precondition.order),
                aged: (c.precondition.aged != 0.0).then_some(RawFraction(c.precondition.aged)),
            }),
            replay: Some(RawReplay { mode: Some(mode), time_scale, queue_depth }),
            dedup: Some(RawDedup {
                fingerprint: Some(RawTime(c.dedup.fingerprint)),
                hash_engines: Some(c.dedup.hash_engines),
                hash_unit: (c.dedup.hash_unit != HashUnit::default()).then_some(c.dedup.hash_unit),
                hash_overlap: (c.dedup.hash_overlap != HashOverlap::default()).then_some(c.dedup.hash_overlap),
                engine: (c.dedup.engine != crate::engine::DEFAULT).then(|| c.dedup.engine.clone()),
            }),
            experiment: c.experiment.fad_ssdsim_model.then_some(RawExperiment { fad_ssdsim_model: Some(true) }),
            policy: (!c.policy.is_empty()).then(|| c.policy.clone()),
            engine: (!c.engine.is_empty()).then(|| c.engine.clone()),
        }
    }
}
