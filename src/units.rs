//! Units in types: simulated time, logical/physical page numbers, content ids.
//!
//! All simulated time is integer nanoseconds ([`Nanos`]); the simulator never
//! reads the wall clock. Page numbers are `u32`: 2^32 pages of 4 KiB is 16 TiB,
//! far beyond any preset, and halves the mapping tables' memory.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Simulated time or duration in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const fn from_us(us: u64) -> Self {
        Nanos(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        Nanos(ms * 1_000_000)
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    #[inline]
    pub fn max(self, other: Nanos) -> Nanos {
        if self.0 >= other.0 {
            self
        } else {
            other
        }
    }
}

impl Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 + rhs.0)
    }
}
impl AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 += rhs.0;
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
}
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1_000_000_000 {
            write!(f, "{:.3} s", self.as_secs_f64())
        } else if self.0 >= 1_000_000 {
            write!(f, "{:.3} ms", self.0 as f64 / 1e6)
        } else {
            write!(f, "{:.3} us", self.as_us_f64())
        }
    }
}

/// Logical page number: the host address divided by the page size.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Lpn(pub u32);

/// Physical page number: a flat index over (chip, die, plane, block, page);
/// see [`crate::geometry::Geometry`] for the layout.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Ppn(pub u32);

/// Interned identity of one page's content (4 KiB).
///
/// Two pages with equal `ContentId` are byte-identical for deduplication.
/// Ids are dense small integers: synthetic content models draw them directly,
/// trace readers intern real hashes (MD5, xxh3) into them, which lets the
/// fingerprint index be a flat vector instead of a hash map.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContentId(pub u32);

/// Host operation type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// Discard / TRIM: unmaps the pages (drops references).
    Trim,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        })
    }
}

/// Bytes in one sector (512 B), the address unit of most block traces.
pub const SECTOR: u64 = 512;

/// A number as a person would write it in a message: plain up to 15
/// digits, else in exponent form (`1e300`, not 301 digits; `1e-12`).
pub fn short_f64(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e12).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The largest flash page the simulator accepts (1 MiB): flash pages are a
/// few KiB, and one bound serves `geometry.page_size` and every page-size
/// flag (`trace from-files --page-size`).
pub const MAX_PAGE_SIZE: u32 = 1 << 20;
