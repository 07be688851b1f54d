//! Flash array geometry and physical address arithmetic.
//!
//! # Physical page numbering
//!
//! A [`Ppn`] is a flat index, plane-major so that each plane's pages are
//! contiguous (good locality for the per-page tables):
//!
//! ```text
//! chip  g in 0..C*K      channel(g) = g % C, chip-in-channel = g / C
//! plane q = (g * D + die) * P + plane
//! block b = q * B + block-in-plane
//! ppn     = b * Pg + page-in-block
//! ```
//!
//! Chips are numbered channel-fastest so that the round-robin order
//! g = 0, 1, 2, ... is exactly SSDsim's dynamic allocation order
//! (channel -> chip -> die -> plane).
//!
//! # Parallel units
//!
//! Allocation and FAD's counters work on a configurable [`ParallelUnit`].
//! Units are numbered in the same round-robin order (channel fastest), and
//! each unit lists its planes in sub-rotation order, so that striping over
//! units 0, 1, 2, ... while rotating inside each unit visits planes exactly
//! in SSDsim's channel -> chip -> die -> plane order whatever the unit level.

use crate::units::Ppn;
use serde::{Deserialize, Serialize};
use std::fmt;
use strength_reduce::StrengthReducedU32;

/// The unit of parallelism used for allocation striping and for FAD's
/// per-unit counters (FAD §II-C: "the same method can be applied to
/// channels, dies, or planes"). Units are numbered in SSDsim's dynamic
/// allocation order, channel fastest: see [`Geometry`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ParallelUnit {
    Channel,
    #[default]
    Chip,
    Die,
    Plane,
}

/// Flash array shape (FAD Table I by default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeometryConfig {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Flash page size in bytes (a multiple of 4096).
    pub page_size: u32,
    /// How parallel units are numbered (`geometry.unit_order`; default
    /// channel first). Omitted from the serialized form when default.
    #[serde(default, skip_serializing_if = "UnitOrder::is_default")]
    pub unit_order: UnitOrder,
}

/// The order in which parallel units (and the round-robin that stripes
/// over them) visit the chips: `geometry.unit_order`.
///
/// * `channel-first` (default): unit `u` on channel `u mod C`, SSDsim's
///   dynamic allocation order (channel -> chip -> die -> plane);
/// * `chip-first`: the chips of channel 0 first, then channel 1's
///   (chip -> channel -> die -> plane), so units `u` and `u + 1` share a
///   channel. Under it a file on every other unit of the FAST'24 drive
///   still spans all four channels (on half the dies), so a die collision
///   can be told from a channel collision (issue 28 item 1; FAST'24 slides,
///   "Die-level collision": a die serves one request at a time).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnitOrder {
    #[default]
    ChannelFirst,
    ChipFirst,
}

impl UnitOrder {
    pub fn is_default(&self) -> bool {
        *self == UnitOrder::ChannelFirst
    }
}

/// One dimension of the flash array, as a letter of a [`StaticOrder`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `C`: the channel.
    Channel,
    /// `W`: the chip (way) within its channel.
    Chip,
    /// `D`: the die within its chip.
    Die,
    /// `P`: the plane within its die.
    Plane,
}

/// The mixed-radix order of static allocation: the four dimensions, the
/// one that varies fastest with the LPN first. With `order = [X0, X1, X2,
/// X3]`, `X0 = lpn mod |X0|`, `X1 = (lpn / |X0|) mod |X1|`, and so on,
/// exactly SSDsim 2.1's and MQSim's formulas. Written as four letters, MQSim's
/// names (`CWDP`: channel fastest, then chip, die, plane). SSDsim's
/// `static_allocation` modes 0-5 are `WDPC`, `CWDP`, `CPWD`, `CDWP`, `CPDW`
/// and `CDPW` (docs/simulator.md, "Static allocation"). Default `CWDP`: MQSim's
/// default scheme, SSDsim's mode 1, and the order of dedupsim's own
/// round-robin (channel fastest).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct StaticOrder(pub [Dim; 4]);

impl Default for StaticOrder {
    fn default() -> StaticOrder {
        StaticOrder([Dim::Channel, Dim::Chip, Dim::Die, Dim::Plane])
    }
}

impl fmt::Display for StaticOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in self.0 {
            f.write_str(match d {
                Dim::Channel => "C",
                Dim::Chip => "W",
                Dim::Die => "D",
                Dim::Plane => "P",
            })?;
        }
        Ok(())
    }
}

impl std::str::FromStr for StaticOrder {
    type Err = String;
    /// Four letters C, W, D, P, each once, in any case.
    fn from_str(s: &str) -> Result<StaticOrder, String> {
        let bad = || {
            format!(
                "static allocation order `{s}` must be the four letters C, W, D and P (channel, way = chip, die, \
                 plane), each once, fastest first, e.g. `CWDP`"
            )
        };
        let mut dims = [Dim::Channel; 4];
        let mut seen = [false; 4];
        let mut n = 0;
        for ch in s.chars() {
            let (d, i) = match ch.to_ascii_uppercase() {
                'C' => (Dim::Channel, 0),
                'W' => (Dim::Chip, 1),
                'D' => (Dim::Die, 2),
                'P' => (Dim::Plane, 3),
                _ => return Err(bad()),
            };
            if n == 4 || seen[i] {
                return Err(bad());
            }
            seen[i] = true;
            dims[n] = d;
            n += 1;
        }
        if n != 4 {
            return Err(bad());
        }
        Ok(StaticOrder(dims))
    }
}

/// Derived geometry with precomputed strides and unit tables: the shape it
/// is built from ([`GeometryConfig`], whose fields read through `Deref`:
/// `geo.channels`) plus what follows from it.
#[derive(Clone, Debug)]
pub struct Geometry {
    shape: GeometryConfig,
    pub chips: u32,
    pub planes: u32,
    pub blocks: u32,
    pub pages_per_plane: u32,
    pub pages_per_chip: u32,
    pub total_pages: u32,
    unit: ParallelUnit,
    // Precomputed-reciprocal divisors: the strides are rarely powers of two
    // (10 planes per die) and address decomposition is on the per-page path.
    div_plane: StrengthReducedU32,
    div_chip: StrengthReducedU32,
    div_block: StrengthReducedU32,
    /// Global plane -> unit id at `unit` level.
    plane_unit: Vec<u32>,
    /// Flattened per-unit plane lists (sub-rotation order).
    unit_planes: Vec<u32>,
    planes_per_unit: u32,
}

impl std::ops::Deref for Geometry {
    type Target = GeometryConfig;

    /// The shape (channels, chips per channel, ..., page size, unit order).
    fn deref(&self) -> &GeometryConfig {
        &self.shape
    }
}

impl Geometry {
    /// Builds the geometry; `unit` is the allocation / FAD parallel unit.
    ///
    /// The caller (config validation) guarantees nonzero dimensions and that
    /// the page count fits in `u32`.
    pub fn new(g: &GeometryConfig, unit: ParallelUnit) -> Geometry {
        let (c, k, d, p) = (g.channels, g.chips_per_channel, g.dies_per_chip, g.planes_per_die);
        let chips = c * k;
        let planes = chips * d * p;
        let pages_per_plane = g.blocks_per_plane * g.pages_per_block;
        let mut geo = Geometry {
            shape: g.clone(),
            chips,
            planes,
            blocks: planes * g.blocks_per_plane,
            pages_per_plane,
            pages_per_chip: pages_per_plane * d * p,
            total_pages: planes * pages_per_plane,
            unit,
            div_plane: StrengthReducedU32::new(pages_per_plane),
            div_chip: StrengthReducedU32::new(pages_per_plane * d * p),
            div_block: StrengthReducedU32::new(g.pages_per_block),
            plane_unit: Vec::new(),
            unit_planes: Vec::new(),
            planes_per_unit: 0,
        };
        geo.build_units();
        geo
    }

    /// Global plane index of (chip, die, plane-in-die).
    pub fn plane_index(&self, chip: u32, die: u32, plane: u32) -> u32 {
        (chip * self.dies_per_chip + die) * self.planes_per_die + plane
    }

    /// The global plane static allocation gives logical page `lpn`
    /// (`allocation = "static:ORDER"`): channel, chip, die and plane are the
    /// digits of `lpn` in the mixed radix of `order`, fastest first (SSDsim
    /// 2.1's `static_allocation` formulas, MQSim's plane allocation schemes).
    pub fn static_plane(&self, lpn: u32, order: StaticOrder) -> u32 {
        let (mut x, mut at) = (lpn, [0u32; 4]);
        for d in order.0 {
            let (n, i) = match d {
                Dim::Channel => (self.channels, 0),
                Dim::Chip => (self.chips_per_channel, 1),
                Dim::Die => (self.dies_per_chip, 2),
                Dim::Plane => (self.planes_per_die, 3),
            };
            at[i] = x % n;
            x /= n;
        }
        let [channel, chip_in_channel, die, plane] = at;
        self.plane_index(chip_in_channel * self.channels + channel, die, plane)
    }

    fn build_units(&mut self) {
        let (c, k, d, p) = (self.channels, self.chips_per_channel, self.dies_per_chip, self.planes_per_die);
        let n_units = self.unit_count();
        let per_unit = self.planes / n_units;
        let mut unit_planes = vec![0u32; self.planes as usize];
        let mut plane_unit = vec![0u32; self.planes as usize];
        // Enumerate every slot of the SSDsim order: slot s -> (channel, chip, die, plane),
        // channel fastest (`chip-first`: chip, then channel). Slot s belongs to
        // unit s % n_units and is that unit's (s / n_units)-th plane in
        // sub-rotation order.
        for s in 0..self.planes {
            let (ch, chip_in_ch) = match self.unit_order {
                UnitOrder::ChannelFirst => (s % c, (s / c) % k),
                UnitOrder::ChipFirst => ((s / k) % c, s % k),
            };
            let die = (s / (c * k)) % d;
            let pl = s / (c * k * d);
            debug_assert!(pl < p);
            let chip = chip_in_ch * c + ch;
            let q = self.plane_index(chip, die, pl);
            let u = s % n_units;
            let v = s / n_units;
            unit_planes[(u * per_unit + v) as usize] = q;
            plane_unit[q as usize] = u;
        }
        self.unit_planes = unit_planes;
        self.plane_unit = plane_unit;
        self.planes_per_unit = per_unit;
    }

    /// Number of parallel units at the configured level.
    pub fn unit_count(&self) -> u32 {
        match self.unit {
            ParallelUnit::Channel => self.channels,
            ParallelUnit::Chip => self.chips,
            ParallelUnit::Die => self.chips * self.dies_per_chip,
            ParallelUnit::Plane => self.planes,
        }
    }

    /// The configured parallel unit level.
    pub fn unit_level(&self) -> ParallelUnit {
        self.unit
    }

    /// Planes of `unit`, in sub-rotation order.
    #[inline]
    pub fn unit_planes(&self, unit: u32) -> &[u32] {
        let s = (unit * self.planes_per_unit) as usize;
        &self.unit_planes[s..s + self.planes_per_unit as usize]
    }

    #[inline]
    pub fn unit_of_plane(&self, plane: u32) -> u32 {
        self.plane_unit[plane as usize]
    }

    #[inline]
    pub fn unit_of(&self, ppn: Ppn) -> u32 {
        self.plane_unit[(ppn.0 / self.div_plane) as usize]
    }

    #[inline]
    pub fn chip_of(&self, ppn: Ppn) -> u32 {
        ppn.0 / self.div_chip
    }

    #[inline]
    pub fn chip_of_plane(&self, plane: u32) -> u32 {
        plane / (self.dies_per_chip * self.planes_per_die)
    }

    #[inline]
    pub fn channel_of_chip(&self, chip: u32) -> u32 {
        chip % self.channels
    }

    #[inline]
    pub fn plane_of(&self, ppn: Ppn) -> u32 {
        ppn.0 / self.div_plane
    }

    /// Global block index of a page.
    #[inline]
    pub fn block_of(&self, ppn: Ppn) -> u32 {
        ppn.0 / self.div_block
    }

    /// Plane that owns a global block.
    #[inline]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_plane
    }

    /// First page of a global block.
    #[inline]
    pub fn first_page(&self, block: u32) -> Ppn {
        Ppn(block * self.pages_per_block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn geo(unit: ParallelUnit) -> Geometry {
        Geometry::new(&Config::fad_table1().geometry, unit)
    }

    /// `unit_order = "chip-first"` numbers units chip fastest: on 4
    /// channels x 2 chips, units 0, 2, 4, 6 are chip 0 of channels 0-3
    /// (channel first: channels 0, 2, 0, 2). Issue 28 item 1.
    #[test]
    fn chip_first_numbering_spreads_every_other_unit_over_all_channels() {
        let mut cfg = Config::fad_table1().geometry;
        (cfg.channels, cfg.chips_per_channel, cfg.dies_per_chip, cfg.planes_per_die) = (4, 2, 1, 1);
        let channel = |g: &Geometry, u: u32| g.channel_of_chip(g.chip_of_plane(g.unit_planes(u)[0]));
        let first = Geometry::new(&cfg, ParallelUnit::Die);
        assert_eq!((0..8).map(|u| channel(&first, u)).collect::<Vec<_>>(), [0, 1, 2, 3, 0, 1, 2, 3]);
        cfg.unit_order = UnitOrder::ChipFirst;
        let chip = Geometry::new(&cfg, ParallelUnit::Die);
        assert_eq!((0..8).map(|u| channel(&chip, u)).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!([0, 2, 4, 6].map(|u| chip.chip_of_plane(chip.unit_planes(u)[0])), [0, 1, 2, 3]);
    }

    #[test]
    fn table1_sizes() {
        let g = geo(ParallelUnit::Chip);
        assert_eq!(g.chips, 16);
        assert_eq!(g.planes, 160);
        assert_eq!(g.total_pages as u64 * 4096, 80 * 1024 * 1024 * 1024);
    }

    /// Static allocation is SSDsim 2.1's static formulas (`static_allocation`
    /// 0-5, written out here as SSDsim states them) and MQSim's lettered
    /// schemes, on a geometry whose four dimensions all differ.
    #[test]
    fn static_plane_matches_ssdsims_static_modes() {
        let cfg = crate::config::GeometryConfig {
            channels: 3,
            chips_per_channel: 2,
            dies_per_chip: 4,
            planes_per_die: 5,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_size: 4096,
            unit_order: Default::default(),
        };
        let g = Geometry::new(&cfg, ParallelUnit::Chip);
        let (c, w, d, p) = (3, 2, 4, 5);
        // (channel, chip in channel, die, plane) of each SSDsim mode.
        type Formula = fn(u32, u32, u32, u32, u32) -> (u32, u32, u32, u32);
        let modes: [(&str, Formula); 6] = [
            ("WDPC", |l, c, w, d, p| ((l / (p * d * w)) % c, l % w, (l / w) % d, (l / (d * w)) % p)),
            ("CWDP", |l, c, w, d, p| (l % c, (l / c) % w, (l / (w * c)) % d, (l / (d * w * c)) % p)),
            ("CPWD", |l, c, w, d, p| (l % c, (l / (p * c)) % w, (l / (p * w * c)) % d, (l / c) % p)),
            ("CDWP", |l, c, w, d, p| (l % c, (l / (d * c)) % w, (l / c) % d, (l / (d * w * c)) % p)),
            ("CPDW", |l, c, w, d, p| (l % c, (l / (p * d * c)) % w, (l / (p * c)) % d, (l / c) % p)),
            ("CDPW", |l, c, w, d, p| (l % c, (l / (p * d * c)) % w, (l / c) % d, (l / (d * c)) % p)),
        ];
        for (name, f) in modes {
            let order: StaticOrder = name.parse().unwrap();
            let mut hit = vec![0u32; g.planes as usize];
            for lpn in 0..3 * g.planes {
                let (ch, chip, die, pl) = f(lpn, c, w, d, p);
                let want = g.plane_index(chip * c + ch, die, pl);
                assert_eq!(g.static_plane(lpn, order), want, "{name}, LPN {lpn}");
                hit[want as usize] += 1;
            }
            assert!(hit.iter().all(|&n| n == 3), "{name}: every plane thrice");
        }
        // Lower case is accepted and printed canonically.
        assert_eq!("cpwd".parse::<StaticOrder>().unwrap().to_string(), "CPWD");
    }

    /// Striping over units while rotating inside each unit visits planes in
    /// SSDsim's channel -> chip -> die -> plane order at every unit level.
    #[test]
    fn every_unit_level_reproduces_ssdsim_order() {
        let cfg = crate::config::GeometryConfig {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_size: 4096,
            unit_order: Default::default(),
        };
        let reference: Vec<u32> = {
            let g = Geometry::new(&cfg, ParallelUnit::Plane);
            (0..g.planes)
                .map(|s| {
                    let (ch, chip, die, pl) = (s % 2, (s / 2) % 2, (s / 4) % 2, s / 8);
                    g.plane_index(chip * 2 + ch, die, pl)
                })
                .collect()
        };
        for unit in [ParallelUnit::Channel, ParallelUnit::Chip, ParallelUnit::Die, ParallelUnit::Plane] {
            let g = Geometry::new(&cfg, unit);
            let n = g.unit_count();
            let mut sub = vec![0usize; n as usize];
            let order: Vec<u32> = (0..g.planes)
                .map(|k| {
                    let u = k % n;
                    let planes = g.unit_planes(u);
                    let q = planes[sub[u as usize] % planes.len()];
                    sub[u as usize] += 1;
                    assert_eq!(g.unit_of_plane(q), u);
                    q
                })
                .collect();
            assert_eq!(order, reference, "unit level {unit:?}");
        }
    }

    #[test]
    fn address_decomposition() {
        let g = geo(ParallelUnit::Chip);
        let q = g.plane_index(5, 0, 3);
        let block = q * g.blocks_per_plane + 7;
        let ppn = Ppn(g.first_page(block).0 + 9);
        assert_eq!(g.chip_of(ppn), 5);
        assert_eq!(g.plane_of(ppn), q);
        assert_eq!(g.block_of(ppn), block);
        assert_eq!(g.channel_of_chip(5), 5);
        assert_eq!(g.channel_of_chip(9), 1);
        assert_eq!(g.unit_of(ppn), 5);
    }
}
