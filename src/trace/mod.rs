//! Block I/O traces: the record type every parser produces, format detection,
//! transparent decompression, loading into a [`Workload`](crate::workload::Workload)
//! and trace statistics.
//!
//! Parsers (one module per format: [`msr`], [`fiu`], [`umass`], [`systor`],
//! [`tencent`], [`libcachesim`], [`blkparse`], [`fio`], [`csv`], [`ssdsim`], [`mqsim`], [`native`]) turn a text trace into
//! [`TraceRecord`]s (byte offsets and sizes, nanosecond timestamps, optional
//! per-4 KiB content hashes); each module's documentation states its line
//! layout and time unit. [`load`] then aligns records to pages, maps volumes
//! to disjoint page ranges, rebases time and interns content (see
//! [`build_workload`] for the rules); [`stats()`] summarises a workload in
//! the style of FAD's Table II. Writers: [`write_native`],
//! [`write_native_workload`] and [`write_ssdsim`] (SSDsim ASCII, for
//! replaying a workload on SSDsim or MQSim). `docs/trace-formats.md` summarises all
//! formats.
//!
//! ```no_run
//! use dedupsim::trace::{load, stats, LoadOptions};
//! let loaded = load("mail.blkparse.gz".as_ref(), &LoadOptions::default())?;
//! println!("{}", stats(&loaded.workload));
//! # Ok::<(), dedupsim::trace::TraceError>(())
//! ```

use crate::units::{Nanos, Op};

mod detect;
mod error;
mod format;
mod load;
mod parse;
pub mod spool;
pub mod stream;

pub mod blkparse;
pub mod csv;
pub mod fio;
pub mod fiu;
pub mod input;
pub mod libcachesim;
pub mod locality;
pub mod mqsim;
pub mod msr;
pub mod native;
pub mod open;
pub mod ssdsim;
pub mod stats;
pub mod systor;
pub mod tencent;
pub mod umass;

pub use detect::detect;
pub use error::TraceError;
pub use format::{format_help, Registered, SampleRequest, SampleWriter, TraceFormat, DETECT_LINES, FORMATS};
pub use input::TraceInput;
pub use load::{
    build_workload, detect_file, load, load_from_reader, read_records, trace_name, volume_label, LoadOptions, Loaded,
    ParsedTrace, VolumeSelect,
};
pub use locality::{locality, Dist, Locality};
pub use native::{content_id_hash, write_native, write_native_workload};
pub use open::open;
pub use parse::{pages_covered, parse_seconds_ns, quote, Numbered, HASH_PAGE};
pub use ssdsim::{write_ssdsim, SsdsimWriteError, SsdsimWritten};
pub use stats::{stats, stats_with_page_size, TraceStats};

/// A 128-bit content fingerprint of one 4 KiB page as carried by a trace
/// (FIU's MD5, or xxh3-128 for `trace from-files`).
pub type PageHash = [u8; 16];

/// One host request as read from a trace file, before page alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Arrival time as parsed, converted to nanoseconds (absolute; the
    /// workload builder rebases the first record to 0).
    pub time: Nanos,
    pub op: Op,
    /// Byte offset on the (volume's) address space.
    pub offset: u64,
    /// Length in bytes (> 0).
    pub size: u64,
    /// Volume / disk / LUN number (0 when the format has none).
    pub volume: u32,
    /// The issuing process where the format carries one (blkparse's and
    /// FIU's pid), else 0. With `volume` it names the request's writer
    /// stream ([`crate::workload::Request::stream`]).
    pub process: u32,
    /// One hash per 4 KiB page covered by the request, in address order, when
    /// the trace carries content (FIU IODedup, native format); `None` otherwise.
    /// Page `i` is the 4 KiB page `offset / 4096 + i`, so there are
    /// [`pages_covered`]`(offset, size, 4096)` of them.
    pub content: Option<Vec<PageHash>>,
    /// An explicit write hint (native format only; `None` elsewhere).
    pub hint: Option<TraceHint>,
}

/// A write hint as a trace carries it (the native format's `hint` column):
/// FAST'24's die-allocation hint, in bytes. The loader turns it into a
/// [`crate::workload::Hint`] in logical pages.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TraceHint {
    /// The write continues a file whose previous byte-page starts at byte
    /// offset `after` of the same volume.
    Append { after: u64 },
    /// The write replaces a file's data in place.
    Overwrite,
}
