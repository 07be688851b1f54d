//! Reading a trace in batches as it is replayed, holding none of it.
//!
//! [`super::load`] parses the whole file, then builds one [`Workload`].
//! [`stream`] runs the same parser and the same per-record rules
//! ([`super::build_workload`]'s) on a few thousand records at a time and
//! hands each batch of page-aligned requests (with their contents and
//! hints) to the caller, so that memory does not grow with the trace: what
//! stays is the parser's state, the volume table, and the interned content
//! hashes of a trace that carries them (one entry per distinct content).
//!
//! A volume's logical range starts after the ranges of the volumes before
//! it ([`super::VolumeSelect::All`]), so a trace with several volumes
//! cannot be placed before its end is known. A first pass without a
//! [`Carry`] places the first volume (and, with `merge`, every volume) and
//! says [`StreamEnd::rescan`] when a second one appeared: the caller then
//! reads the file once more with the volume table. A second pass with the
//! first pass's [`StreamEnd::carry`] gives the same requests with the same
//! content ids.
//!
//! Errors are those of [`super::load`], in the same order: a line that does
//! not parse stops the pass at once; a record the rules refuse (beyond the
//! capacity, say) is reported when the file has been read to its end, as
//! [`super::load`] parses everything before it builds.

use super::load::{empty_error, provenance, volume_bases, Builder, RecordReader};
use super::PageHash;
use super::{LoadOptions, TraceError, TraceFormat};
use crate::workload::{Provenance, Workload};
use std::collections::HashMap;
use std::path::Path;

/// Records parsed per batch.
pub const BATCH_RECORDS: usize = 4096;

/// What a second pass needs from the first: each volume's first logical
/// page, and the content hashes already interned (so that ids agree).
#[derive(Clone, Debug, Default)]
pub struct Carry {
    bases: Vec<u64>,
    intern: HashMap<PageHash, u32>,
}

/// The account of one pass.
#[derive(Debug)]
pub struct StreamEnd {
    pub format: TraceFormat,
    pub provenance: Provenance,
    /// Lines skipped because they did not parse (`skip_bad_lines`).
    pub bad_lines: u64,
    /// Those of [`super::Loaded::warnings`].
    pub warnings: Vec<String>,
    /// Each kept volume with its first logical page.
    pub volumes: Vec<(u32, u64)>,
    /// Requests made.
    pub requests: u64,
    /// Logical pages addressed (`max lpn + pages`).
    pub lpn_span: u64,
    /// Distinct contents interned (content ids are below this).
    pub content_space: u32,
    /// Read requests carrying content hashes (what the pages held: a
    /// streamed replay does not use them, docs/streaming.md).
    pub reads_with_content: u64,
    /// `Some` when this pass could not place every volume: read the file
    /// again with this carry (module doc).
    pub rescan: Option<Carry>,
    /// For the next pass over the same file.
    pub carry: Carry,
}

/// Reads `path` once in batches of about [`BATCH_RECORDS`] records, calling
/// `each` with every batch (a [`Workload`] whose `requests`, `contents` and
/// `hints` are those of the batch; hint indices are the batch's). `carry`:
/// from an earlier pass over the same file (module doc).
pub fn stream<E: From<TraceError>>(
    path: &Path,
    opts: &LoadOptions,
    carry: Option<Carry>,
    each: &mut dyn FnMut(&mut Workload) -> Result<(), E>,
) -> Result<StreamEnd, E> {
    opts.validate()?;
    let reader = super::open::open(path)?;
    let mut rr = RecordReader::open(reader, path, opts)?;
    let given = carry.is_some();
    let carry = carry.unwrap_or_default();
    let mut b = Builder::new(rr.format(), path, opts, carry.bases);
    b.intern = carry.intern;
    let mut batch = Workload::default();
    // The first rule a record broke (reported at the end), or a volume
    // that could not be placed: nothing more is built then.
    let mut refused: Option<TraceError> = None;
    let mut unplaced = false;
    loop {
        let more = rr.fill(BATCH_RECORDS)?;
        let (recs, extras) = rr.take();
        if refused.is_none() && !unplaced {
            let mut extras = extras.into_iter();
            for r in &recs {
                let extra = if r.extra { extras.next() } else { None };
                if b.base(r.slot).is_none() {
                    debug_assert!(!given, "a carry places every volume");
                    unplaced = true;
                    break;
                }
                if let Err(e) = b.add(r, extra) {
                    refused = Some(e);
                    break;
                }
            }
            if refused.is_none() && !unplaced && !b.requests.is_empty() {
                batch.requests.clear();
                batch.contents.clear();
                batch.hints.clear();
                std::mem::swap(&mut batch.requests, &mut b.requests);
                std::mem::swap(&mut batch.contents, &mut b.contents);
                std::mem::swap(&mut batch.hints, &mut b.hints);
                each(&mut batch)?;
            }
        }
        if !more {
            break;
        }
    }
    let table = rr.volume_table().to_vec();
    let (mut parsed, _) = rr.finish();
    if table.is_empty() {
        return Err(empty_error(&parsed, path, opts).into());
    }
    if unplaced {
        let bases = volume_bases(&table, path, opts)?;
        let rescan = Some(Carry { bases, intern: HashMap::new() });
        let end = StreamEnd {
            format: parsed.format,
            provenance: provenance(path, parsed.format, parsed.description.take()),
            bad_lines: parsed.bad_lines,
            warnings: Vec::new(),
            volumes: Vec::new(),
            requests: 0,
            lpn_span: 0,
            content_space: 0,
            reads_with_content: 0,
            rescan,
            carry: Carry::default(),
        };
        return Ok(end);
    }
    if let Some(e) = refused {
        return Err(e.into());
    }
    let made = b.made();
    let reads_with_content = b.reads_with_content;
    let intern = std::mem::take(&mut b.intern);
    let built = b.finish(&mut parsed.warnings);
    let volumes = table.iter().zip(&built.bases).map(|(&(v, _, _), &b)| (v, b)).collect();
    Ok(StreamEnd {
        format: parsed.format,
        provenance: provenance(path, parsed.format, parsed.description.take()),
        bad_lines: parsed.bad_lines,
        warnings: parsed.warnings,
        volumes,
        requests: made,
        lpn_span: built.lpn_span,
        content_space: built.content_space.max(intern.len() as u32),
        reads_with_content,
        rescan: None,
        carry: Carry { bases: built.bases, intern },
    })
}
