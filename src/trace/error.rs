//! The error type of the trace layer.
//!
//! Every message names the file (as the caller spelled its path) and, when
//! the problem is tied to one line, the 1-based line number, in the
//! `file:line: reason` shape compilers use, so that a user can jump straight
//! to the offending record.

use std::io;
use std::path::PathBuf;

/// Why a trace could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read (including decompression errors).
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A trace that can be read only once (a pipe) could not be copied to
    /// the temporary file its second pass reads ([`super::TraceInput`]).
    #[error(
        "{}: cannot keep a copy of this trace in a temporary file in {} ({source}): a trace that is not a \
         regular file (a pipe, <(zcat t.gz)) is read once and copied there for the replay's second pass; \
         set TMPDIR to a directory with room for the trace's bytes, give the trace as a regular file, \
         or use --load-whole",
        path.display(),
        dir.display()
    )]
    Spool {
        path: PathBuf,
        dir: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A line could not be parsed (and `skip_bad_lines` is off).
    #[error("{}:{line}: {reason}", path.display())]
    Parse { path: PathBuf, line: u64, reason: String },

    /// A line is longer than the format allows (binary input, no line
    /// breaks): reading stops instead of buffering it.
    #[error(
        "{}:{line}: line longer than {limit} bytes (no line break found); \
         this is not a text trace of a supported format",
        path.display()
    )]
    LineTooLong { path: PathBuf, line: u64, limit: usize },

    /// The trace holds no usable request (after volume selection).
    #[error("{}: contains no requests{detail}", path.display())]
    Empty { path: PathBuf, detail: String },

    /// A format name given by the user is not known.
    #[error("unknown trace format {name:?} (known formats: {known})")]
    UnknownFormat { name: String, known: String },

    /// A format name with options (`blkparse:Q`, `csv:...`) whose options
    /// are wrong.
    #[error("invalid trace format {spec:?}: {reason}")]
    FormatSpec { spec: String, reason: String },

    /// Auto-detection could not recognise the trace's lines (`text` is the
    /// first data line, quoted and cut short).
    #[error(
        "{}:{line}: cannot detect the trace format from {text}; \
         pass the format explicitly (one of: {known})",
        path.display()
    )]
    Undetected { path: PathBuf, line: u64, text: String, known: String },

    /// A request addresses pages beyond the configured device capacity.
    #[error(
        "{}:{line}: request at LPN {lpn} ({pages} pages) ends beyond the device capacity \
         of {capacity} pages; use --wrap to fold the trace's addresses into the device",
        path.display()
    )]
    BeyondCapacity { path: PathBuf, line: u64, lpn: u64, pages: u64, capacity: u64 },

    /// A write's append hint (native column 7) names a page beyond the
    /// configured device capacity.
    #[error(
        "{}:{line}: the append hint names LPN {lpn}, beyond the device capacity of {capacity} pages; \
         use --wrap to fold the trace's addresses into the device",
        path.display()
    )]
    HintBeyondCapacity { path: PathBuf, line: u64, lpn: u64, capacity: u64 },

    /// A request's address does not fit the simulator's 32-bit page numbers
    /// (or a similar hard limit).
    #[error("{}:{line}: {reason}; use --wrap to fold the trace's addresses into a smaller range", path.display())]
    AddressOverflow { path: PathBuf, line: u64, reason: String },

    /// The [`LoadOptions`](super::LoadOptions) are inconsistent.
    #[error("invalid trace load options: {0}")]
    InvalidOptions(String),
}
