//! The page-aligned workload the simulator replays.
//!
//! A [`Workload`] is a materialized list of [`Request`]s in arrival order,
//! produced by a trace reader ([`crate::trace`]) or a synthetic generator
//! ([`crate::synth`]). Workloads are plain data, shared read-only between
//! simulations (one per policy), so every policy sees exactly the same
//! requests and the same page contents.

use crate::prefetch::prefetch;
use crate::units::{ContentId, Nanos, Op};
use serde::{Deserialize, Serialize};

/// Sentinel for [`Request::content`]: the request carries no content ids.
pub const NO_CONTENT: u32 = u32::MAX;

/// One page-aligned host request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Arrival time, relative to the start of the workload.
    pub arrival: Nanos,
    pub op: Op,
    /// First logical page.
    pub lpn: u32,
    /// Number of pages (>= 1).
    pub pages: u32,
    /// For writes: index into [`Workload::contents`] of the first page's
    /// content id (the request's pages are consecutive there), or
    /// [`NO_CONTENT`].
    pub content: u32,
    /// The writer stream the request belongs to (Light-Dedup §4.3.2 keeps
    /// its prediction state per CPU; here per writer): the trace's volume
    /// and process where the format carries them (docs/trace-formats.md,
    /// "Streams"), the client connection under `serve`, the writer of
    /// `streams=N` synthetic workloads; 0 when there is one. It fits in the
    /// struct's padding (24 bytes either way).
    pub stream: u16,
}

/// Which logical pages are written, untimed, before the replay
/// (`precondition.rule`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionRule {
    /// Every page the trace reads anywhere, even a page it writes before
    /// reading it: SSDsim 2.1's trace pre-processing (`pre_process_page`).
    #[default]
    AllReads,
    /// Only pages read before they are ever written (dedupsim's rule before
    /// SSDsim agreement; MQSim maps such pages on their first read).
    ReadsBeforeWrites,
    /// Nothing: reads of never-written pages cost no flash access.
    None,
}

impl PreconditionRule {
    /// Name as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            PreconditionRule::AllReads => "all-reads",
            PreconditionRule::ReadsBeforeWrites => "reads-before-writes",
            PreconditionRule::None => "none",
        }
    }
}

/// In which order the preconditioning writes are written
/// (`precondition.order`): the order that stands for the past the trace
/// does not show. The writes themselves (one per read request, covering its
/// pages chosen by the [`PreconditionRule`], as maximal contiguous runs) are
/// the same either way.
///
/// The default is first-read order: a file read as one request was most
/// likely written as one file, and files read close together in time were
/// more likely written close together than files whose only relation is
/// their addresses; it is also the order the preconditioning writes had
/// before the order became a setting, so the default changes nothing for
/// content-free traces. Address order stands for a volume filled once,
/// front to back (a copied or restored file system). docs/preconditioning.md.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionOrder {
    /// In the order of the reads that first touch the pages.
    #[default]
    FirstRead,
    /// Sorted by first logical page.
    Address,
}

impl PreconditionOrder {
    /// Name as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            PreconditionOrder::FirstRead => "first-read",
            PreconditionOrder::Address => "address",
        }
    }
}

/// What a "file" (FAD's unit of placement, §III-B) is in a block trace
/// (`--files`). FAD does not say; its authors' simulator (FAD-SSDsim's
/// trace preprocessing) merges runs of records.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileRule {
    /// One trace request is one file (what SSDsim and MQSim replay).
    #[default]
    Request,
    /// Consecutive records of the same operation whose addresses are
    /// contiguous (each starts where the previous one ended) are one file:
    /// one request arriving with the first record (FAD-SSDsim's
    /// preprocessing, for reads and writes alike). Trims are not merged.
    Merged,
}

impl FileRule {
    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FileRule::Request => "request",
            FileRule::Merged => "merged",
        }
    }
}

impl std::str::FromStr for FileRule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "request" => Ok(FileRule::Request),
            "merged" => Ok(FileRule::Merged),
            other => Err(format!("unknown file rule `{other}`: use `request` (one trace request is one file) or `merged` (consecutive same-op contiguous records are one file, as FAD-SSDsim)")),
        }
    }
}

/// Where a workload came from, printed in every output.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Short name (trace file stem or synthetic workload name).
    pub name: String,
    /// Human-readable origin, e.g. "trace: /path (fiu)" or
    /// "synthetic (Table II-matched)".
    pub source: String,
}

/// A replayable workload.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub provenance: Provenance,
    pub requests: Vec<Request>,
    /// Content ids of written pages, referenced by [`Request::content`].
    pub contents: Vec<ContentId>,
    /// Number of distinct content ids in use (ids are `0..content_space`).
    pub content_space: u32,
    /// Logical pages the workload addresses (`max lpn + pages`).
    pub lpn_span: u64,
    /// The first `precondition` requests are untimed preconditioning writes
    /// added by [`Workload::add_precondition`].
    pub precondition: u32,
    /// Explicit write hints carried by the trace (FAST'24's die-allocation
    /// hint; native format's `hint` column, made by `trace from-files
    /// --segment`): `(i, hint)` for the `i`-th request of the trace
    /// (preconditioning writes not counted), sorted by `i`. Empty when the
    /// trace carries none; see [`Workload::hint_of`].
    pub hints: Vec<(u32, Hint)>,
    /// What pages held before the trace began, as far as the trace shows
    /// it: `(lpn, content)` for every page whose first access is a read
    /// carrying content hashes (FIU traces hash the data they read), sorted
    /// by `lpn`. A content no write of the trace carries has an id at or
    /// above [`Workload::content_space`] (`content_space + k`, `k` below
    /// [`Workload::past_only`]), outside the id space until
    /// [`Workload::apply_past_contents`] takes it in. Empty for traces
    /// whose reads carry no content and for synthetic workloads.
    pub past_contents: Vec<(u32, ContentId)>,
    /// How many distinct contents of [`Workload::past_contents`] no write
    /// of the trace carries.
    pub past_only: u32,
    /// Preconditioned pages written with the content the trace showed
    /// for them ([`Workload::apply_past_contents`]); 0 when their content
    /// was drawn by the content model.
    pub precondition_past_pages: u64,
    /// Writers to interleave once contents are drawn (`streams=N` of a
    /// synthetic or fitted workload; 0 or 1: none):
    /// [`Workload::interleave_writers`], applied by
    /// [`crate::runner::prepare`].
    pub writers: u16,
}

/// A host's hint on a write request (Jun et al., FAST'24: an NVMe write
/// command extension), in logical pages. docs/policies.md, "die-hint".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Hint {
    /// The write continues a file whose previous page is logical page
    /// `after` (not necessarily `lpn - 1`: a fragmented file's next extent
    /// lies elsewhere).
    Append { after: u32 },
    /// The write replaces data of a file in place.
    Overwrite,
}

/// Sets bits `from..to` of `bits` (long enough), a word at a time: the
/// page bitmaps of the trace loader and of [`Preconditioner`].
pub fn mark_bits(bits: &mut [u64], from: usize, to: usize) {
    if from >= to {
        return;
    }
    let (first, last) = (from / 64, (to - 1) / 64);
    // Bits `from % 64..` of the first word, `..=(to - 1) % 64` of the last.
    let head = !0u64 << (from % 64);
    let tail = !0u64 >> (63 - (to - 1) % 64);
    if first == last {
        bits[first] |= head & tail;
    } else {
        bits[first] |= head;
        bits[first + 1..last].fill(!0);
        bits[last] |= tail;
    }
}

/// The first bit in `from..to` of `bits` (long enough) that is `set`
/// (or clear), a word at a time.
fn next_bit(bits: &[u64], from: usize, to: usize, set: bool) -> Option<usize> {
    // Clear bits are sought as the set bits of the complement.
    let flip = if set { 0 } else { !0u64 };
    let mut i = from / 64;
    // The bits below `from` of its word are masked off.
    let mut word = (bits.get(i)? ^ flip) & (!0u64 << (from % 64));
    loop {
        if word != 0 {
            let at = i * 64 + word.trailing_zeros() as usize;
            return (at < to).then_some(at);
        }
        i += 1;
        if i * 64 >= to {
            return None;
        }
        word = bits[i] ^ flip;
    }
}

/// How many requests ahead [`Preconditioner::visit_all`] prefetches: a
/// few hundred nanoseconds of `visit`, about one memory latency.
const VISIT_AHEAD: usize = 16;

/// [`Workload::add_precondition_with`]'s rule fed one request at a time
/// (a streamed replay's first pass): keeps a bitmap of the logical pages
/// seen and the preconditioning writes chosen so far.
#[derive(Clone, Debug)]
pub struct Preconditioner {
    /// `None`: no preconditioning.
    rule: PreconditionRule,
    seen: Vec<u64>,
    pre: Vec<Request>,
}

impl Preconditioner {
    /// For `rule`, with room for `lpn_span` pages to begin with (it grows).
    pub fn new(rule: PreconditionRule, lpn_span: u64) -> Preconditioner {
        let words = if rule == PreconditionRule::None { 0 } else { (lpn_span as usize).div_ceil(64) };
        Preconditioner { rule, seen: vec![0u64; words], pre: Vec::new() }
    }

    /// The next request of the workload, in order.
    pub fn visit(&mut self, r: &Request) {
        if self.rule == PreconditionRule::None {
            return;
        }
        // Whether writes and trims count as "seen" (only pages read before
        // they are written are preconditioned) or not (every page read).
        let writes_count = self.rule == PreconditionRule::ReadsBeforeWrites;
        let (a, b) = (r.lpn as usize, r.lpn as usize + r.pages as usize);
        if self.seen.len() < b.div_ceil(64) {
            self.seen.resize(b.div_ceil(64), 0);
        }
        let seen = &mut self.seen;
        match r.op {
            Op::Write | Op::Trim if writes_count => mark_bits(seen, a, b),
            Op::Write | Op::Trim => {}
            Op::Read => {
                // The runs of pages not seen yet, found a word at a time.
                let mut l = a;
                while let Some(s) = next_bit(seen, l, b, false) {
                    let e = next_bit(seen, s, b, true).unwrap_or(b);
                    self.pre.push(Request {
                        arrival: Nanos::ZERO,
                        op: Op::Write,
                        lpn: s as u32,
                        pages: (e - s) as u32,
                        content: NO_CONTENT,
                        stream: 0,
                    });
                    l = e;
                }
                mark_bits(seen, a, b);
            }
        }
    }

    /// [`Preconditioner::visit`] on each of `reqs` in order, the bitmap
    /// word of the request 16 places ahead (`VISIT_AHEAD`) prefetched. The
    /// bitmap (1 bit per page of the span: 1.6 MB for the benchmark
    /// trace's 13 M pages) is read at random, and nearly all of `visit`'s
    /// time was the wait for that word (issue 26 round 9, `perf annotate`);
    /// a hint only, the pages seen and the writes chosen are `visit`'s.
    pub fn visit_all(&mut self, reqs: &[Request]) {
        if self.rule == PreconditionRule::None {
            return;
        }
        for (k, r) in reqs.iter().enumerate() {
            if let Some(word) = reqs.get(k + VISIT_AHEAD).and_then(|n| self.seen.get(n.lpn as usize / 64)) {
                prefetch(word);
            }
            self.visit(r);
        }
    }

    /// The preconditioning writes, in first-read order.
    pub fn finish(self) -> Vec<Request> {
        self.pre
    }

    /// The preconditioning writes, in `order`.
    pub fn finish_in(self, order: PreconditionOrder) -> Vec<Request> {
        let mut pre = self.pre;
        if order == PreconditionOrder::Address {
            // Each page is preconditioned once: the writes do not overlap,
            // so their first pages order them (a stable sort, as a rule).
            pre.sort_by_key(|r| r.lpn);
        }
        pre
    }
}

/// [`FileRule::Merged`] applied to a workload given in batches (a streamed
/// trace, `trace::stream`), the same requests as
/// [`Workload::apply_file_rule`] on the whole: the last request made so far
/// is held back (with its contents and hint) until the next record shows
/// whether it continues it, across batch boundaries too, so it needs one
/// pending request whatever the trace's length.
#[derive(Debug, Default)]
pub struct FileJoiner {
    /// The request not handed over yet (`content`: [`NO_CONTENT`] or 0),
    /// its pages' contents and its hint.
    pending: Option<(Request, Option<Hint>)>,
    pending_contents: Vec<ContentId>,
    /// Records merged away so far.
    pub merged: u64,
}

impl FileJoiner {
    /// Appends to `out` the requests of `batch` (its `requests`,
    /// `contents` and `hints`, hint indices the batch's) merged with the
    /// pending request and each other, every one but the last, which stays
    /// pending; `out`'s hint indices are its own.
    pub fn join(&mut self, batch: &Workload, out: &mut Workload) {
        let mut hints = batch.hints.iter().peekable();
        for (i, r) in batch.requests.iter().enumerate() {
            let hint = hints.next_if(|&&(k, _)| k as usize == i).map(|&(_, h)| h);
            let merge = match &self.pending {
                Some((p, _)) => {
                    p.op == r.op
                        && matches!(r.op, Op::Read | Op::Write)
                        && p.lpn as u64 + p.pages as u64 == r.lpn as u64
                        && (p.pages as u64 + r.pages as u64) <= u32::MAX as u64
                        && (p.content == NO_CONTENT) == (r.content == NO_CONTENT)
                        // A record's explicit hint must agree with the
                        // merge: only an append continuing the previous
                        // record joins it (an overwrite starts its own
                        // file, its hint kept).
                        && match hint {
                            None => true,
                            Some(Hint::Append { after }) => after as u64 + 1 == p.lpn as u64 + p.pages as u64,
                            Some(Hint::Overwrite) => false,
                        }
                }
                None => false,
            };
            if merge {
                // A merged request keeps the hint of its first record.
                if let Some((p, _)) = self.pending.as_mut() {
                    p.pages += r.pages;
                }
                self.merged += 1;
            } else {
                self.flush(out);
                let mut n = *r;
                if n.content != NO_CONTENT {
                    n.content = 0;
                }
                self.pending = Some((n, hint));
            }
            if r.content != NO_CONTENT {
                let s = r.content as usize;
                self.pending_contents.extend_from_slice(&batch.contents[s..s + r.pages as usize]);
            }
        }
    }

    /// Appends the pending request, if any, to `out`: after the last
    /// batch.
    pub fn flush(&mut self, out: &mut Workload) {
        if let Some((mut p, hint)) = self.pending.take() {
            if p.content != NO_CONTENT {
                p.content = out.contents.len() as u32;
                out.contents.extend_from_slice(&self.pending_contents);
            }
            self.pending_contents.clear();
            if let Some(h) = hint {
                out.hints.push((out.requests.len() as u32, h));
            }
            out.requests.push(p);
        }
    }
}

impl Workload {
    /// Builds a workload with no content from requests; computes the span.
    pub fn from_requests(provenance: Provenance, requests: Vec<Request>) -> Self {
        let lpn_span = requests.iter().map(|r| r.lpn as u64 + r.pages as u64).max().unwrap_or(0);
        Workload { provenance, requests, lpn_span, ..Workload::default() }
    }

    /// Applies [`Workload::writers`] (once): see
    /// [`Workload::interleave_streams`].
    pub fn interleave_writers(&mut self) {
        let n = std::mem::take(&mut self.writers);
        if n > 1 {
            self.interleave_streams(n);
        }
    }

    /// `n` interleaved writers (`streams=N`; Light-Dedup §4.3.2's
    /// concurrent writers): the replayed requests (after the preconditioning
    /// writes) are cut into `n` runs of consecutive requests, writer `w`
    /// taking the `w`-th run (as even as the count allows), and the device
    /// receives them round-robin: one request of writer 0, one of writer 1,
    /// and so on, a writer whose run is over dropping out. Each writer keeps
    /// its requests' order, addresses and contents (the workload's content
    /// order, as one writer made it), the `i`-th request arrives at the
    /// `i`-th arrival time of the original (the same load), and its
    /// [`Request::stream`] is its writer's number. Explicit hints follow
    /// their requests.
    pub fn interleave_streams(&mut self, n: u16) {
        let pre = self.precondition as usize;
        let timed = &self.requests[pre..];
        let m = timed.len();
        let n = usize::from(n.max(1)).min(m.max(1));
        // Writer w: timed[starts[w]..starts[w + 1]].
        let starts: Vec<usize> = (0..=n).map(|w| w * m / n).collect();
        let mut order = Vec::with_capacity(m);
        let longest = (0..n).map(|w| starts[w + 1] - starts[w]).max().unwrap_or(0);
        for j in 0..longest {
            for w in 0..n {
                if starts[w] + j < starts[w + 1] {
                    order.push((starts[w] + j, w as u16));
                }
            }
        }
        let mut out: Vec<Request> = Vec::with_capacity(m);
        let mut new_index = vec![0u32; m];
        for (i, &(k, w)) in order.iter().enumerate() {
            new_index[k] = i as u32;
            out.push(Request { arrival: timed[i].arrival, stream: w, ..timed[k] });
        }
        self.requests.truncate(pre);
        self.requests.extend(out);
        for h in &mut self.hints {
            h.0 = new_index[h.0 as usize];
        }
        self.hints.sort_by_key(|h| h.0);
    }

    /// The explicit hint of request `index` of [`Workload::requests`]
    /// (preconditioning writes included in `index`, and never hinted).
    pub fn hint_of(&self, index: usize) -> Option<Hint> {
        let i = u32::try_from(index.checked_sub(self.precondition as usize)?).ok()?;
        self.hints.binary_search_by_key(&i, |&(k, _)| k).ok().map(|k| self.hints[k].1)
    }

    /// True when every write request carries content ids.
    pub fn has_content(&self) -> bool {
        self.requests.iter().all(|r| r.op != Op::Write || r.content != NO_CONTENT)
    }

    /// Content ids of a write request's pages (empty if it has none).
    pub fn content_of(&self, r: &Request) -> &[ContentId] {
        if r.content == NO_CONTENT {
            &[]
        } else {
            let s = r.content as usize;
            &self.contents[s..s + r.pages as usize]
        }
    }

    /// Applies a [`FileRule`]: with [`FileRule::Merged`], every run of
    /// consecutive reads (or writes) whose addresses continue each other
    /// becomes one request arriving at the run's first arrival, its pages'
    /// contents (if any) in order. Returns how many records were merged
    /// away. Must run before preconditioning is added. The rule is
    /// [`FileJoiner`]'s, which a streamed trace applies batch by batch.
    pub fn apply_file_rule(&mut self, rule: FileRule) -> u64 {
        if rule == FileRule::Request || self.requests.is_empty() {
            return 0;
        }
        debug_assert_eq!(self.precondition, 0, "files are merged before preconditioning");
        let mut j = FileJoiner::default();
        let mut out = Workload::default();
        out.requests.reserve(self.requests.len());
        out.contents.reserve(self.contents.len());
        j.join(self, &mut out);
        j.flush(&mut out);
        self.requests = out.requests;
        self.hints = out.hints;
        if !self.contents.is_empty() {
            self.contents = out.contents;
        }
        j.merged
    }

    /// Preconditioning with the pages-read-before-written rule
    /// ([`PreconditionRule::ReadsBeforeWrites`]); see
    /// [`Workload::add_precondition_with`].
    pub fn add_precondition(&mut self) {
        self.add_precondition_with(PreconditionRule::ReadsBeforeWrites);
    }

    /// Prepends untimed preconditioning writes chosen by `rule`: every
    /// logical page the rule selects is written once before the replay
    /// starts. The writes are prepended in order of first read, one write
    /// request per read request covering its selected pages not yet
    /// preconditioned, as maximal contiguous runs, so that such data
    /// lands on flash "as a file", like the data it stands for. Content for
    /// them is drawn by the content model like any other write, before the
    /// replayed writes' content. Idempotent.
    pub fn add_precondition_with(&mut self, rule: PreconditionRule) {
        self.add_precondition_in(rule, PreconditionOrder::FirstRead);
    }

    /// [`Workload::add_precondition_with`], the writes in `order`.
    pub fn add_precondition_in(&mut self, rule: PreconditionRule, order: PreconditionOrder) {
        if self.precondition > 0 || rule == PreconditionRule::None {
            return;
        }
        let mut p = Preconditioner::new(rule, self.lpn_span);
        p.visit_all(&self.requests);
        let mut pre = p.finish_in(order);
        self.precondition = pre.len() as u32;
        pre.append(&mut self.requests);
        self.requests = pre;
    }

    /// Gives the preconditioning writes' pages the content the trace showed
    /// for them ([`Workload::past_contents`]), in place of the contents the
    /// content model drew (which must have been drawn: every
    /// preconditioning write carries contents). `drawn_from` is
    /// [`Workload::content_space`] before the draw: a content no write
    /// carries (id `drawn_from + k`) gets id `content_space + k`, past the
    /// drawn ones, and the id space grows by [`Workload::past_only`].
    /// A write keeps its pages whether or not the trace showed each one's
    /// content (a page it did not show keeps its drawn content), so the
    /// files are the same under either content. Returns the pages given the
    /// trace's content (also in [`Workload::precondition_past_pages`]).
    /// Idempotent.
    pub fn apply_past_contents(&mut self, drawn_from: u32) -> u64 {
        if self.past_contents.is_empty() || self.precondition_past_pages > 0 {
            return self.precondition_past_pages;
        }
        let space = self.content_space;
        let mut given = 0u64;
        for r in &self.requests[..self.precondition as usize] {
            if r.content == NO_CONTENT {
                continue;
            }
            for k in 0..r.pages {
                let lpn = r.lpn + k;
                if let Ok(i) = self.past_contents.binary_search_by_key(&lpn, |&(l, _)| l) {
                    let c = self.past_contents[i].1;
                    let id = if c.0 >= drawn_from { ContentId(space + (c.0 - drawn_from)) } else { c };
                    self.contents[(r.content + k) as usize] = id;
                    given += 1;
                }
            }
        }
        if given > 0 {
            self.content_space = space + self.past_only;
        }
        self.precondition_past_pages = given;
        given
    }

    /// The replayed (timed) requests, after any preconditioning writes.
    pub fn timed(&self) -> &[Request] {
        &self.requests[self.precondition as usize..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mark_bits` sets exactly the bits of its range: by hand at the word
    /// edges, and against a bit at a time for every range below 200.
    #[test]
    fn mark_sets_a_range_of_bits() {
        let mut b = [0u64; 4];
        mark_bits(&mut b, 63, 65);
        assert_eq!(b, [1 << 63, 1, 0, 0]);
        mark_bits(&mut b, 2, 2);
        mark_bits(&mut b, 0, 1);
        assert_eq!(b, [1 << 63 | 1, 1, 0, 0]);
        mark_bits(&mut b, 128, 256);
        assert_eq!(b, [1 << 63 | 1, 1, !0, !0]);
        for from in 0..200 {
            for to in from..200 {
                let (mut fast, mut slow) = ([0u64; 4], [0u64; 4]);
                mark_bits(&mut fast, from, to);
                for i in from..to {
                    slow[i / 64] |= 1 << (i % 64);
                }
                assert_eq!(fast, slow, "{from}..{to}");
            }
        }
    }

    fn req(op: Op, lpn: u32, pages: u32) -> Request {
        Request { arrival: Nanos::ZERO, op, lpn, pages, content: NO_CONTENT, stream: 0 }
    }

    /// Seven requests, one preconditioning write, as three writers: runs of
    /// 2, 2 and 3 requests (w * 7 / 3), served round-robin at the original
    /// arrival times; the preconditioning write stays first and a hint
    /// follows its request.
    #[test]
    fn interleaved_writers_keep_their_order_and_the_load() {
        let reqs: Vec<Request> = (0..7u32)
            .map(|i| Request { arrival: Nanos(u64::from(i) * 10), content: i, ..req(Op::Write, 100 * i, 1) })
            .collect();
        let mut w = Workload::from_requests(Provenance::default(), reqs);
        w.hints = vec![(5, Hint::Overwrite)];
        w.requests.insert(0, req(Op::Write, 9999, 1));
        w.precondition = 1;
        w.writers = 3;
        w.interleave_writers();
        assert_eq!(w.writers, 0);
        let got: Vec<(u64, u32, u16)> = w.requests.iter().map(|r| (r.arrival.0, r.content, r.stream)).collect();
        let want =
            vec![(0, NO_CONTENT, 0), (0, 0, 0), (10, 2, 1), (20, 4, 2), (30, 1, 0), (40, 3, 1), (50, 5, 2), (60, 6, 2)];
        assert_eq!(got, want);
        // Request 5 of the original (content 5) is now the 6th replayed.
        assert_eq!(w.hints, vec![(5, Hint::Overwrite)]);
        assert_eq!(w.hint_of(6), Some(Hint::Overwrite));
        w.hints = vec![(0, Hint::Overwrite)];
        w.interleave_streams(1);
        assert!(w.requests[1..].iter().all(|r| r.stream == 0), "one writer: stream 0");
    }

    /// Hints follow their requests through merging (a merged request keeps
    /// its first record's) and are looked up past the preconditioning.
    #[test]
    fn hints_follow_merging_and_preconditioning() {
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![req(Op::Write, 0, 1), req(Op::Write, 1, 1), req(Op::Write, 7, 1), req(Op::Read, 20, 1)],
        );
        w.hints = vec![(1, Hint::Append { after: 0 }), (2, Hint::Overwrite)];
        assert_eq!(w.apply_file_rule(FileRule::Merged), 1);
        assert_eq!(w.hints, vec![(1, Hint::Overwrite)]);
        assert_eq!((w.hint_of(0), w.hint_of(1), w.hint_of(2)), (None, Some(Hint::Overwrite), None));
        w.add_precondition_with(PreconditionRule::AllReads);
        assert_eq!(w.precondition, 1);
        assert_eq!((w.hint_of(0), w.hint_of(1), w.hint_of(2)), (None, None, Some(Hint::Overwrite)));
    }

    /// An overwrite hint (or an append naming another page) on a record
    /// contiguous with the previous one keeps it a file of its own under
    /// `--files merged`: merging would put it under the first record's hint.
    #[test]
    fn merging_keeps_a_hint_that_disagrees() {
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![req(Op::Write, 0, 1), req(Op::Write, 1, 1), req(Op::Write, 2, 1), req(Op::Write, 3, 1)],
        );
        w.hints = vec![(1, Hint::Append { after: 0 }), (2, Hint::Overwrite), (3, Hint::Append { after: 9 })];
        assert_eq!(w.apply_file_rule(FileRule::Merged), 1);
        assert_eq!(w.requests.iter().map(|r| (r.lpn, r.pages)).collect::<Vec<_>>(), vec![(0, 2), (2, 1), (3, 1)]);
        assert_eq!(w.hints, vec![(1, Hint::Overwrite), (2, Hint::Append { after: 9 })]);
    }

    #[test]
    fn merged_files_join_contiguous_runs_of_one_operation() {
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![
                req(Op::Write, 10, 2),
                req(Op::Write, 12, 1), // continues: merged
                req(Op::Write, 14, 1), // gap: new file
                req(Op::Read, 15, 2),  // other op: new file
                req(Op::Read, 17, 3),  // continues: merged
                req(Op::Write, 15, 1), // continues the last write, but a read came between
                req(Op::Trim, 16, 1),
                req(Op::Trim, 17, 1), // trims never merge
            ],
        );
        for (k, r) in w.requests.iter_mut().enumerate() {
            r.arrival = Nanos(k as u64);
        }
        w.requests[1].arrival = Nanos(7);
        let mut contents = Vec::new();
        for r in w.requests.iter_mut().filter(|r| r.op == Op::Write) {
            r.content = contents.len() as u32;
            contents.extend((0..r.pages).map(|i| ContentId(100 * r.lpn + i)));
        }
        w.contents = contents;
        w.hints = vec![(1, Hint::Append { after: 11 }), (2, Hint::Overwrite)];
        // A streamed trace's batches, split anywhere: the same files.
        let files = |w: &Workload, hint_base: &mut u32, out: &mut Vec<(Request, Vec<ContentId>, Option<Hint>)>| {
            for (k, r) in w.requests.iter().enumerate() {
                let hint = w.hints.iter().find(|&&(i, _)| i as usize == k).map(|&(_, h)| h);
                out.push((Request { content: 0, ..*r }, w.content_of(r).to_vec(), hint));
            }
            *hint_base += w.requests.len() as u32;
        };
        let mut whole = w.clone();
        whole.apply_file_rule(FileRule::Merged);
        let mut expected = Vec::new();
        files(&whole, &mut 0, &mut expected);
        for cut in 0..=w.requests.len() {
            let mut j = FileJoiner::default();
            let mut got = Vec::new();
            let mut base = 0;
            for (from, to) in [(0, cut), (cut, w.requests.len())] {
                let batch = Workload {
                    requests: w.requests[from..to].to_vec(),
                    contents: w.contents.clone(),
                    hints: w
                        .hints
                        .iter()
                        .filter(|&&(i, _)| (from..to).contains(&(i as usize)))
                        .map(|&(i, h)| (i - from as u32, h))
                        .collect(),
                    ..Workload::default()
                };
                let mut out = Workload::default();
                j.join(&batch, &mut out);
                files(&out, &mut base, &mut got);
            }
            let mut last = Workload::default();
            j.flush(&mut last);
            files(&last, &mut base, &mut got);
            assert_eq!(got, expected, "split after {cut} requests");
            assert_eq!(j.merged, 2);
        }
        let mut request = w.clone();
        assert_eq!(request.apply_file_rule(FileRule::Request), 0);
        assert_eq!(request.requests, w.requests);
        assert_eq!(w.apply_file_rule(FileRule::Merged), 2);
        let shape: Vec<(Op, u32, u32, u64)> = w.requests.iter().map(|r| (r.op, r.lpn, r.pages, r.arrival.0)).collect();
        assert_eq!(
            shape,
            vec![
                (Op::Write, 10, 3, 0),
                (Op::Write, 14, 1, 2),
                (Op::Read, 15, 5, 3),
                (Op::Write, 15, 1, 5),
                (Op::Trim, 16, 1, 6),
                (Op::Trim, 17, 1, 7),
            ]
        );
        let first = w.content_of(&w.requests[0]).to_vec();
        assert_eq!(first, vec![ContentId(1000), ContentId(1001), ContentId(1200)]);
        assert_eq!(w.content_of(&w.requests[3]), &[ContentId(1500)]);
        assert_eq!("merged".parse::<FileRule>(), Ok(FileRule::Merged));
        assert!("file".parse::<FileRule>().is_err());
    }

    #[test]
    fn precondition_covers_reads_before_writes_only() {
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![
                req(Op::Write, 2, 2), // 2,3 written
                req(Op::Read, 0, 6),  // 0,1 and 4,5 unseen
                req(Op::Read, 0, 6),  // all seen now
                req(Op::Read, 10, 1), // unseen
            ],
        );
        w.add_precondition();
        assert_eq!(w.precondition, 3);
        let pre: Vec<(u32, u32)> = w.requests[..3].iter().map(|r| (r.lpn, r.pages)).collect();
        assert_eq!(pre, vec![(0, 2), (4, 2), (10, 1)]);
        assert_eq!(w.timed().len(), 4);
        w.add_precondition();
        assert_eq!(w.requests.len(), 7);
    }

    /// Address order writes the same preconditioning writes, sorted by
    /// address; first-read order keeps the reads' order.
    #[test]
    fn precondition_order_sorts_the_same_writes() {
        let reqs = vec![req(Op::Read, 9, 2), req(Op::Read, 0, 3), req(Op::Write, 5, 1), req(Op::Read, 4, 3)];
        let mut first = Workload::from_requests(Provenance::default(), reqs.clone());
        first.add_precondition_in(PreconditionRule::ReadsBeforeWrites, PreconditionOrder::FirstRead);
        let mut addr = Workload::from_requests(Provenance::default(), reqs);
        addr.add_precondition_in(PreconditionRule::ReadsBeforeWrites, PreconditionOrder::Address);
        let shape =
            |w: &Workload| w.requests[..w.precondition as usize].iter().map(|r| (r.lpn, r.pages)).collect::<Vec<_>>();
        assert_eq!(shape(&first), vec![(9, 2), (0, 3), (4, 1), (6, 1)]);
        assert_eq!(shape(&addr), vec![(0, 3), (4, 1), (6, 1), (9, 2)]);
        assert_eq!(first.timed(), addr.timed());
    }

    /// The trace's contents replace the drawn ones page by page; a content
    /// no write carries moves past the drawn ids.
    #[test]
    fn past_contents_replace_drawn_contents() {
        let mut w = Workload::from_requests(Provenance::default(), vec![req(Op::Read, 0, 3), req(Op::Write, 7, 1)]);
        w.requests[1].content = 0;
        w.contents = vec![ContentId(0)];
        w.content_space = 1;
        // Page 0 held the written content 0, page 2 a content only read
        // (id 1 = content_space + 0); page 1's is unknown.
        w.past_contents = vec![(0, ContentId(0)), (2, ContentId(1))];
        w.past_only = 1;
        w.add_precondition_with(PreconditionRule::AllReads);
        // As the content model would: three drawn ids 1, 2, 3.
        w.requests[0].content = 1;
        w.contents.extend([ContentId(1), ContentId(2), ContentId(3)]);
        w.content_space = 4;
        assert_eq!(w.apply_past_contents(1), 2);
        assert_eq!(w.content_of(&w.requests[0]), &[ContentId(0), ContentId(2), ContentId(4)]);
        assert_eq!((w.content_space, w.precondition_past_pages), (5, 2));
        assert_eq!(w.apply_past_contents(1), 2, "idempotent");
        assert_eq!(w.content_space, 5);
    }

    #[test]
    fn all_reads_rule_preconditions_every_page_read() {
        let mut w = Workload::from_requests(
            Provenance::default(),
            vec![
                req(Op::Write, 2, 2), // written first, still preconditioned when read
                req(Op::Read, 0, 6),
                req(Op::Read, 0, 6), // already preconditioned
                req(Op::Read, 10, 1),
            ],
        );
        w.add_precondition_with(PreconditionRule::AllReads);
        let pre: Vec<(u32, u32)> = w.requests[..w.precondition as usize].iter().map(|r| (r.lpn, r.pages)).collect();
        assert_eq!(pre, vec![(0, 6), (10, 1)]);
        let mut none = Workload::from_requests(Provenance::default(), vec![req(Op::Read, 0, 6)]);
        none.add_precondition_with(PreconditionRule::None);
        assert_eq!(none.precondition, 0);
    }

    /// `Preconditioner::visit`'s word-at-a-time runs are the runs a page at
    /// a time finds (the rule as first written, kept here as the
    /// reference): the same writes, in the same order, on random requests
    /// of both rules, short and long, across word edges.
    #[test]
    fn visit_finds_the_runs_a_page_at_a_time_finds() {
        // The loop over `a..=b` is the rule as first written (one step
        // past the end closes the last run), kept as it was.
        #[allow(clippy::needless_range_loop)]
        fn reference(rule: PreconditionRule, reqs: &[Request]) -> Vec<(u32, u32)> {
            let mut seen = vec![false; 4096];
            let mut pre = Vec::new();
            for r in reqs {
                let (a, b) = (r.lpn as usize, (r.lpn + r.pages) as usize);
                match r.op {
                    Op::Read => {
                        let mut run: Option<usize> = None;
                        for l in a..=b {
                            let unseen = l < b && !seen[l];
                            match (unseen, run) {
                                (true, None) => run = Some(l),
                                (false, Some(s)) => {
                                    pre.push((s as u32, (l - s) as u32));
                                    run = None;
                                }
                                _ => {}
                            }
                            if l < b {
                                seen[l] = true;
                            }
                        }
                    }
                    _ if rule == PreconditionRule::ReadsBeforeWrites => seen[a..b].fill(true),
                    _ => {}
                }
            }
            pre
        }
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(m)) as u32
        };
        for rule in [PreconditionRule::ReadsBeforeWrites, PreconditionRule::AllReads] {
            for round in 0..20u64 {
                let reqs: Vec<Request> = (0..300)
                    .map(|_| {
                        let op = [Op::Read, Op::Read, Op::Write, Op::Trim][next(4) as usize];
                        let pages = if next(8) == 0 { next(300) } else { next(9) };
                        req(op, next(3000), pages)
                    })
                    .collect();
                // A span too short to begin with: the bitmap grows.
                let mut p = Preconditioner::new(rule, round * 100);
                p.visit_all(&reqs);
                let got: Vec<(u32, u32)> = p.finish().iter().map(|r| (r.lpn, r.pages)).collect();
                assert!(got.len() > 30, "{rule:?} round {round}: {} writes", got.len());
                assert_eq!(got, reference(rule, &reqs), "{rule:?} round {round}");
            }
        }
    }
}
