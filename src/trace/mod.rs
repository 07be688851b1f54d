//! Block I/O traces: the record type every parser produces, format detection,
//! transparent decompression, and trace statistics.
//!
//! Parsers turn a text trace into [`TraceRecord`]s (byte offsets and sizes,
//! nanosecond timestamps, optional per-4 KiB content hashes). The
//! [`crate::workload`] module then aligns them to pages and interns content.

use crate::units::{Nanos, Op};

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
    /// One hash per 4 KiB page covered by the request, in address order, when
    /// the trace carries content (FIU IODedup, native format); `None` otherwise.
    pub content: Option<Vec<PageHash>>,
}
