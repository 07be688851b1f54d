//! A persistent-memory device: Intel Optane DC Persistent Memory Modules
//! (DCPMM) in App Direct mode, the medium Light-Dedup was built for
//! (Qiu et al., ATC'23, §2.1 "five common I/O features", Figure 1).
//!
//! What the model has, one concept per file:
//!
//! * `params`: the device's numbers and the preset that fixes them
//!   ([`PmParams::optane_light_dedup`]), each with the source it comes
//!   from: the Light-Dedup paper's own setup where it states it (§4.3.1:
//!   256 B XPLine; §5.1: one DIMM per file system, non-interleaved), else
//!   Yang et al., "An Empirical Guide to the Behavior and Use of Scalable
//!   Persistent Memory", FAST'20 (figure named per field; values checked
//!   against the authors' data behind the graphs, `NVSL/OptaneStudy`;
//!   the interleave granularity, which that data does not state, from the
//!   same group's VANS model, MICRO'20).
//! * `xpbuffer`: the on-DIMM buffer (XPBuffer) of 256 B XPLines, one per
//!   DIMM: read buffer and write-combining buffer in one LRU (§2.1 "I/O with
//!   buffers"; Yang et al. §3 do not separate them either).
//! * `device`: the DIMMs behind their interleaving, with the time a load
//!   or a persisted store takes and the media bytes read and written
//!   (what `ipmctl` counts in Light-Dedup's Tables 2 and 4).
//!
//! Time is the caller's: every operation takes the time it is issued and
//! returns when it completes ([`crate::units::Nanos`]); the device keeps
//! only its buffers, each DIMM's write backlog, a calendar of its media
//! transfers and its counters. Several CPUs may issue, each at its own
//! time: their loads share each DIMM's read bandwidth through the calendar,
//! and with [`PmParams::shared_media`] the write-backs share it too
//! (Light-Dedup §5.2's read-write interference).

mod device;
mod params;
mod xpbuffer;

pub use device::{Category, Counters, PmDevice};
pub use params::{PmError, PmParams};
pub use xpbuffer::{Lookup, XpBuffer};
