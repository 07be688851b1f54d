//! [`Config::validate`]: every check a configuration passes before anything
//! is simulated; each error names the key, its value, why it is wrong and
//! how to fix it.

use super::{page_transfer_time, raw, Config, ConfigError, ParallelUnit, ReplayConfig};
use crate::params::parse;
use crate::units::Nanos;

impl Config {
    /// Checks that the configuration can be simulated. Loaders call it; code
    /// that builds or edits a `Config` by hand should call it before use.
    ///
    /// Every error names the offending key, its value, why it is wrong and
    /// how to fix it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, msg: String| Err(ConfigError::invalid(key, msg));
        let g = &self.geometry;
        for (key, v, what) in [
            ("geometry.channels", g.channels, "channel"),
            ("geometry.chips_per_channel", g.chips_per_channel, "chip per channel"),
            ("geometry.dies_per_chip", g.dies_per_chip, "die per chip"),
            ("geometry.planes_per_die", g.planes_per_die, "plane per die"),
            ("geometry.blocks_per_plane", g.blocks_per_plane, "block per plane"),
            ("geometry.pages_per_block", g.pages_per_block, "page per block"),
        ] {
            if v == 0 {
                return bad(key, format!("{key} = 0: must be at least 1 (the array needs at least one {what})"));
            }
        }
        if g.page_size == 0 || g.page_size % 4096 != 0 {
            return bad(
                "geometry.page_size",
                format!(
                    "geometry.page_size = {} bytes: must be a positive multiple of 4096, because host pages and content fingerprints are 4 KiB; use e.g. \"4KiB\" or \"16KiB\"",
                    g.page_size
                ),
            );
        }
        if g.page_size > crate::units::MAX_PAGE_SIZE {
            return bad(
                "geometry.page_size",
                format!(
                    "geometry.page_size = {}: more than 1MiB; flash pages are a few KiB (e.g. \"4KiB\", \"16KiB\")",
                    parse::format_size(g.page_size.into())
                ),
            );
        }
        let raw =
            [g.channels, g.chips_per_channel, g.dies_per_chip, g.planes_per_die, g.blocks_per_plane, g.pages_per_block]
                .iter()
                .fold(1u128, |acc, &v| acc * u128::from(v));
        if raw > u128::from(u32::MAX) {
            return bad(
                "geometry",
                format!(
                    "geometry: {raw} raw pages exceed the 4294967295 (2^32 - 1) that fit the simulator's u32 page numbers and counts; reduce geometry.blocks_per_plane or the number of planes/chips, or use larger pages (geometry.page_size)"
                ),
            );
        }

        if self.alloc_pages == 0 || self.alloc_pages > self.geometry.pages_per_block {
            return bad(
                "alloc_pages",
                format!(
                    "alloc_pages = {}: must be from 1 to geometry.pages_per_block ({}), the pages a unit takes in a row before allocation moves on (e.g. 2: two 16 KB pages per die)",
                    self.alloc_pages, self.geometry.pages_per_block
                ),
            );
        }

        let op = self.over_provisioning;
        if op >= 1.0 {
            return bad(
                "over_provisioning",
                format!("over_provisioning = {op:?}: must be below 100%, the host would see no capacity; typical values are 0.07 to 0.28 (\"7%\" to \"28%\")"),
            );
        }
        if op.is_nan() || op < 0.0 {
            return bad(
                "over_provisioning",
                format!("over_provisioning = {op:?}: must be a fraction in [0, 1), e.g. 0.2 or \"20%\""),
            );
        }
        if self.logical_pages() == 0 {
            return bad(
                "over_provisioning",
                format!("over_provisioning = {op:?}: leaves the host no logical page of the {raw} raw pages; lower it or enlarge the geometry"),
            );
        }

        let gc = &self.gc;
        let m = gc.min_free_blocks;
        if m == 0 {
            return bad(
                "gc.min_free_blocks",
                "gc.min_free_blocks = 0: garbage collection would never run and writes would stall once a plane is full; use at least 1".into(),
            );
        }
        if m >= g.blocks_per_plane {
            return bad(
                "gc.min_free_blocks",
                format!(
                    "gc.min_free_blocks = {m}: must be below geometry.blocks_per_plane = {}, or GC would run forever without reaching its threshold",
                    g.blocks_per_plane
                ),
            );
        }
        let spare = self.spare_blocks_per_plane();
        let need = self.gc_spare_need();
        if need > spare {
            let fix = if spare >= 3 {
                format!("set gc.min_free_blocks <= {} or raise over_provisioning", spare - 2)
            } else {
                "raise over_provisioning (or blocks_per_plane)".to_string()
            };
            return bad(
                "gc.min_free_blocks",
                format!(
                    "gc.min_free_blocks = {m}: over_provisioning = {op:?} leaves {spare} spare blocks per plane, and GC needs at least 2 spare blocks above its threshold to free space; {fix}"
                ),
            );
        }

        let aged = self.precondition.aged;
        if !(aged.is_finite() && (0.0..1.0).contains(&aged)) {
            return bad(
                "precondition.aged",
                format!(
                    "precondition.aged = {aged:?}: a fraction of every plane's blocks in [0, 1), e.g. 0.5 or \"50%\""
                ),
            );
        }

        const MAX_OP: Nanos = Nanos(1_000_000_000);
        /// Engines are scanned for the earliest free one on every hashed
        /// page; a bound keeps that scan (and its table) small.
        const MAX_HASH_ENGINES: u32 = 1024;
        let t = &self.timing;
        for (key, v) in [("timing.read", t.read), ("timing.program", t.program), ("timing.erase", t.erase)] {
            if v == Nanos::ZERO {
                return bad(
                    key,
                    format!("{key} = 0: flash operations take time; use the chip's datasheet value, e.g. \"20us\""),
                );
            }
            if v > MAX_OP {
                return bad(key, format!("{key} = {}: more than 1 s is not a flash latency; check the unit (\"20us\", \"1.5ms\"; bare integers are nanoseconds)", parse::format_time_ns(v.0)));
            }
        }
        if t.transfer_ps_per_byte == 0 {
            return bad(
                "timing.transfer",
                "timing.transfer = 0: the channel bus needs a speed, e.g. \"25ns/B\" or \"800MB/s\"".into(),
            );
        }
        let derived = page_transfer_time(g.page_size, t.transfer_ps_per_byte);
        if derived > MAX_OP {
            return bad(
                "timing.transfer",
                format!(
                    "timing.transfer = {}: one page would take {} on the bus, more than 1 s; check the unit (\"25ns/B\", \"800MB/s\")",
                    parse::format_transfer_ps(t.transfer_ps_per_byte),
                    parse::format_time_ns(derived.0)
                ),
            );
        }
        if t.page_transfer != derived {
            return bad(
                "timing.page_transfer",
                format!(
                    "timing.page_transfer = {}: is derived and must equal geometry.page_size x timing.transfer = {}; call Config::refresh_derived() after editing a Config",
                    parse::format_time_ns(t.page_transfer.0),
                    parse::format_time_ns(derived.0)
                ),
            );
        }

        let d = &self.dedup;
        if d.hash_engines == 0 {
            return bad(
                "dedup.hash_engines",
                "dedup.hash_engines = 0: deduplication needs at least 1 hash engine".into(),
            );
        }
        if d.hash_engines > MAX_HASH_ENGINES {
            return bad(
                "dedup.hash_engines",
                format!(
                    "dedup.hash_engines = {}: more than {MAX_HASH_ENGINES} engines is not a controller \
                     (each is modelled on its own); for hashing that never waits use dedup.fingerprint = \"0ns\"",
                    d.hash_engines
                ),
            );
        }
        if d.fingerprint > MAX_OP {
            return bad(
                "dedup.fingerprint",
                format!(
                    "dedup.fingerprint = {}: more than 1 s per page; check the unit (e.g. \"32us\")",
                    parse::format_time_ns(d.fingerprint.0)
                ),
            );
        }

        match self.replay {
            ReplayConfig::OpenLoop { time_scale } => {
                raw::check_time_scale(time_scale)?;
                if time_scale > 1e6 {
                    return bad("replay.time_scale", format!("replay.time_scale = {time_scale:?}: above 1e6, simulated times would overflow; use a smaller factor"));
                }
            }
            ReplayConfig::ClosedLoop { queue_depth: 0 } => {
                return bad(
                    "replay.queue_depth",
                    "replay.queue_depth = 0: closed-loop replay needs at least 1 outstanding request".into(),
                );
            }
            ReplayConfig::ClosedLoop { .. } => {}
        }
        if self.experiment.fad_ssdsim_model {
            if g.channels < 2 || g.chips_per_channel < 2 {
                return bad(
                    "experiment.fad_ssdsim_model",
                    format!(
                        "experiment.fad_ssdsim_model = true needs geometry.channels >= 2 and geometry.chips_per_channel >= 2 \
                         (the authors' model draws rand() % (channels - 1) and rand() % (chips - 1)); got {} x {}",
                        g.channels, g.chips_per_channel
                    ),
                );
            }
            if self.alloc_unit == ParallelUnit::Channel {
                return bad(
                    "experiment.fad_ssdsim_model",
                    "experiment.fad_ssdsim_model = true draws a chip, which a channel-level unit cannot express; \
                     use alloc_unit = \"chip\" (or die, plane)"
                        .into(),
                );
            }
        }
        raw::normalize_policy(self.policy.clone())?;
        raw::normalize_engine_tables(self.engine.clone())?;
        self.validate_engines()?;
        Ok(())
    }
}
