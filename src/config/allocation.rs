//! `allocation`: where the pages of placement-free policies go.

use crate::geometry::StaticOrder;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where the pages of placement-free policies go (`allocation`).
///
/// In TOML and `--set`: `"cyclic"`, `"least-loaded"`, `"dynamic"`, or
/// `"static"` / `"static:ORDER"` ([`StaticOrder`], e.g. `"static:CPWD"`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Allocation {
    /// The policy's cyclic pointer over the parallel units, in processing
    /// order (static round-robin).
    Cyclic,
    /// The unit whose chip has the least queued work (the earliest time it
    /// would be free of everything already issued to it), ties in cyclic
    /// order from a pointer: SSDsim 2.1's dynamic allocation, which gives a
    /// write to the first idle channel and chip when it is served,
    /// approximated when the page is processed. Only for policies whose
    /// placement is free (Native, Deduplication, HAR, FCRC), never FAD's.
    /// The default before issue 25 item 6; validation (docs/validation.md)
    /// showed its estimate misses SSDsim's write latency near saturation.
    LeastLoaded,
    /// SSDsim 2.1's fully dynamic allocation, at the time it decides: a
    /// written page waits unplaced in one global queue until a channel can
    /// serve it (bus free, no read data waiting for it, a chip idle with
    /// nothing queued, chips tried from the channel's token); the oldest
    /// waiting page then goes to that chip, and the FTL programs it there.
    /// Channels that can serve at the same instant are tried from a
    /// rotating start (the programs so far, modulo the channels), as SSDsim
    /// does. For every placement-free policy (Native, Deduplication, HAR,
    /// FCRC): a copy's FTL entry exists from processing time, so a
    /// duplicate written while it waits references it and is mapped when
    /// it is placed ([`crate::ftl::Ftl::reserve`]). Every driver (open
    /// loop, closed loop, streams) and engine (a verify read of a copy
    /// still waiting is served from the write buffer). The `fad-table1`
    /// default (issue 25 item 6). docs/simulator.md, "Dynamic allocation".
    #[default]
    Dynamic,
    /// Static striping by logical page: a page's channel, chip, die and
    /// plane are digits of its LPN in the mixed radix `order` gives
    /// (SSDsim 2.1's static allocation, `allocation=1`; MQSim's
    /// `Plane_Allocation_Scheme`). Like `least-loaded`, only for
    /// placement-free policies; preconditioning is placed the same way for
    /// every policy (SSDsim's pre-processing does). docs/simulator.md,
    /// "Static allocation".
    Static(StaticOrder),
}

impl Allocation {
    const EXPECTED: &'static str = "`cyclic`, `least-loaded`, `dynamic`, `static` or `static:ORDER` \
        (ORDER: the letters C, W, D, P (channel, way = chip, die, plane) in any order, fastest first, e.g. `static:CPWD`)";

    /// The static striping order, if this is static allocation.
    pub fn static_order(self) -> Option<StaticOrder> {
        match self {
            Allocation::Static(o) => Some(o),
            _ => None,
        }
    }
}

impl fmt::Display for Allocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Allocation::Cyclic => f.write_str("cyclic"),
            Allocation::LeastLoaded => f.write_str("least-loaded"),
            Allocation::Dynamic => f.write_str("dynamic"),
            Allocation::Static(o) => write!(f, "static:{o}"),
        }
    }
}

impl std::str::FromStr for Allocation {
    type Err = String;
    fn from_str(s: &str) -> Result<Allocation, String> {
        match s {
            "cyclic" => Ok(Allocation::Cyclic),
            "least-loaded" => Ok(Allocation::LeastLoaded),
            "dynamic" => Ok(Allocation::Dynamic),
            "static" => Ok(Allocation::Static(StaticOrder::default())),
            _ => match s.strip_prefix("static:") {
                Some(order) => order.parse().map(Allocation::Static),
                None => Err(format!("unknown allocation `{s}`, expected {}", Allocation::EXPECTED)),
            },
        }
    }
}

impl Serialize for Allocation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Allocation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Allocation, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
