//! A NOVA-style file-system write path on persistent memory: how
//! Light-Dedup is evaluated in its paper (Qiu et al., ATC'23, §3.2 Table 1,
//! §5.2 Fig. 7, §5.5 Table 4), beside the baselines it compares with.
//!
//! One CPU writes 4 KiB blocks synchronously (FIO's `sync` engine, §5.1);
//! each write syscall covers one or more consecutive blocks. Several
//! writer threads ([`NvmFs::threads`], Fig. 11) each keep their own clock
//! and read-ahead on the shared device and engine; the caller interleaves
//! their blocks ([`NvmFs::write_block`]), and [`Scheme::Cbp`] switches PN
//! to SP by the number of threads writing (§4.3's Transition). Per block the
//! CPU pays its computation ([`FsCosts`]) and the device
//! ([`crate::pmem::PmDevice`]) charges every load and persisted store at
//! its byte address. Three [`Scheme`]s:
//!
//! * **NOVA** (no dedup): every block is stored (4 KiB, 16 XPLines), then
//!   one log entry and the log tail per syscall.
//! * **NV-Dedup** (Wang et al., TC'18, as Light-Dedup describes it, §2.2,
//!   §3.2-3.3): a weak (CRC) fingerprint for every block and, when it
//!   matches an entry, a cryptographic fingerprint (MD5) of the block
//!   instead of a read of the stored copy; no hints; entry-based metadata
//!   (the engine's `layout = "entry"`). Our choice, optimistic for
//!   NV-Dedup: the stored copy's MD5 is taken as known (kept in its entry),
//!   so only the incoming block is hashed.
//! * **Light-Dedup**: xxHash, the rhashtable, a byte-by-byte comparison
//!   with the stored block read from PM, hints with trust degrees and the
//!   region-based LMT: the engine [`crate::engine::LightDedup`] itself,
//!   its decisions unchanged. Its prefetch variant says how the reads are
//!   issued: `none` (LD-w/o-P: a dependent scan of the block after the
//!   hash), `ibp` (In-Block Prefetch, §4.3.1: the block's 16 XPLines
//!   prefetched at once, [`FsCosts::mlp`] outstanding), `sp` (IBP, and a
//!   followed hint's entry and block are read at the block's start while
//!   the hash and the index are skipped, §4.3.2), `pc` (the same read, the
//!   hash kept), `pn` (SP, and the next block's predicted entry and block
//!   read as soon as this block's compared block is in, Fig. 4d: the
//!   engine's read-ahead, used by the next block; across a syscall boundary
//!   the CPU's copy is lost, §5.2, and the block is loaded again from the
//!   XPBuffer). Light-Dedup as evaluated is `pn` (CBP = PN+Transition,
//!   "effectively equivalent to PN in single-thread experiments", Fig. 10).
//!
//! The engine sees one block at a time, as Light-Dedup's loop over a
//! syscall's blocks does: a block repeating an earlier one of the same
//! syscall is found in the index and verified like any duplicate.
//!
//! The engine records every access it decides with its byte address
//! ([`crate::engine::Access`]); this module charges them: the entry read a
//! duplicate's decision waits for, the verify read, each 32 B entry store
//! (reference count, allocation, hint) and 8 B reverse-map store, the
//! deletions of freed blocks. The engine's flash-page operations (and its
//! controller-DRAM cache, the SSD's stand-in for the XPBuffer) are not
//! used: on PM the XPBuffer itself decides what a metadata access costs.
//!
//! Block numbers come from [`crate::ftl::Ftl`] used as the file system's
//! block allocator and block map (copy-on-write like NOVA: an overwrite
//! takes a new block and frees the old). Its flash GC has no PM meaning;
//! a run on a device large enough never triggers it
//! ([`NvmFs::block_store_gcs`] counts any).

mod costs;

pub use costs::{FsCosts, IndexLock};

use crate::engine::{
    Access, Engine, EngineIo, LightDedup, LightDedupParams, Prefetch, Target, Verdict, When, Why, WritePage, BEFORE,
};
use crate::ftl::{EntryId, Ftl, FtlError, FtlParams};
use crate::pmem::{Category, Counters, PmDevice, PmError, PmParams};
use crate::units::{ContentId, Lpn, Nanos};
use thiserror::Error;

/// Bytes of a file-system block.
pub const BLOCK: u64 = 4096;
/// Where the dedup metadata and the log live on the device (above any data
/// block address).
const LMT_BASE: u64 = 1 << 44;
const RMAP_BASE: u64 = 1 << 45;
const LOG_BASE: u64 = 1 << 46;

/// Which file system writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// NOVA without deduplication.
    Nova,
    /// NV-Dedup-style: weak + cryptographic fingerprint, entry-based table.
    NvDedup,
    /// Light-Dedup with this prefetch variant (`Prefetch::Pn` as evaluated).
    LightDedup(Prefetch),
    /// Light-Dedup (PN) with the entry-based table instead of regions
    /// (§5.5, Table 4's "Entry" columns).
    LightDedupEntry,
    /// Light-Dedup's Cross-Block Prefetch as §4.3 defines it: PN while
    /// fewer than `threshold` threads access the device at once, SP (no
    /// read-ahead of the next block) from `threshold` on (the
    /// *Transition*; the paper's default threshold is 6).
    Cbp { threshold: u32 },
}

impl Scheme {
    /// Short name for tables.
    pub fn name(self) -> String {
        match self {
            Scheme::Nova => "NOVA".into(),
            Scheme::NvDedup => "NV-Dedup".into(),
            Scheme::LightDedup(Prefetch::Pn) => "Light-Dedup".into(),
            Scheme::LightDedup(Prefetch::None) => "LD-w/o-P".into(),
            Scheme::LightDedup(p) => format!("Light-Dedup ({})", p.name().to_uppercase()),
            Scheme::LightDedupEntry => "Light-Dedup, entry-based".into(),
            Scheme::Cbp { threshold } => format!("Light-Dedup (CBP, Transition at {threshold})"),
        }
    }
}

/// Errors of the PM write path.
#[derive(Debug, Error)]
pub enum NvmFsError {
    #[error(transparent)]
    Device(#[from] PmError),
    #[error("persistent-memory file system's block store: {0}")]
    Blocks(#[from] FtlError),
    #[error("persistent-memory file system: {0}")]
    Engine(String),
}

/// CPU time by what it waited for, summed over blocks (Table 1's columns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// Fingerprints: xxHash / CRC, and NV-Dedup's MD5 ("fp").
    pub fp: u64,
    /// Waiting for the compared block and comparing it ("cmp").
    pub cmp: u64,
    /// Storing data blocks ("write").
    pub write: u64,
    /// Dedup metadata loads and stores.
    pub meta: u64,
    /// Everything else: the file system's own work, the index, the log.
    pub other: u64,
    /// Waiting for the shared index's lock ([`IndexLock::Global`] only).
    pub lock: u64,
}

impl Breakdown {
    fn since(&self, e: &Breakdown) -> Breakdown {
        Breakdown {
            fp: self.fp - e.fp,
            cmp: self.cmp - e.cmp,
            write: self.write - e.write,
            meta: self.meta - e.meta,
            other: self.other - e.other,
            lock: self.lock - e.lock,
        }
    }
}

/// The state at one moment ([`NvmFs::mark`]), to measure a phase.
#[derive(Clone, Debug)]
pub struct Mark {
    now: Nanos,
    blocks: u64,
    counters: Counters,
    breakdown: Breakdown,
}

/// What happened between two marks.
#[derive(Clone, Debug)]
pub struct Phase {
    /// Blocks written (every block of every write syscall).
    pub blocks: u64,
    pub elapsed: Nanos,
    pub counters: Counters,
    pub breakdown: Breakdown,
}

impl Phase {
    /// Write throughput, MiB/s.
    pub fn mib_per_s(&self) -> f64 {
        if self.elapsed.0 == 0 {
            return 0.0;
        }
        (self.blocks * BLOCK) as f64 / (1u64 << 20) as f64 / (self.elapsed.0 as f64 * 1e-9)
    }

    /// Per written block: ns.
    pub fn per_block(&self, ns: u64) -> f64 {
        if self.blocks == 0 {
            0.0
        } else {
            ns as f64 / self.blocks as f64
        }
    }

    /// Dedup metadata media bytes read / written per written block (Table 4).
    pub fn meta_bytes_per_block(&self) -> (f64, f64) {
        let b = self.blocks.max(1) as f64;
        (self.counters.read(Category::Meta) as f64 / b, self.counters.written(Category::Meta) as f64 / b)
    }
}

/// The file system. See the module doc.
pub struct NvmFs {
    scheme: Scheme,
    costs: FsCosts,
    dev: PmDevice,
    ftl: Ftl,
    engine: Option<LightDedup>,
    now: Nanos,
    blocks: u64,
    unit: u32,
    units: u32,
    log_tail: u64,
    breakdown: Breakdown,
    io: EngineIo,
    pages: Vec<WritePage>,
    accesses: Vec<Access>,
    entries: Vec<EntryId>,
    programmed: Vec<bool>,
    freed: Vec<(ContentId, EntryId)>,
    /// PN: when the engine's read-ahead completes, and the block it read.
    ahead_done: Nanos,
    ahead_addr: u64,
    gcs: u64,
    /// The other writer threads' CPU state ([`Self::threads`]; the running
    /// one's is in `now`, `ahead_done`, `ahead_addr`), and which runs.
    cpus: Vec<Cpu>,
    cur: usize,
    /// Threads writing at once ([`Self::set_concurrency`]), for CBP and
    /// the cores' time-sharing ([`FsCosts::cores`]).
    concurrency: u32,
    /// When the shared index's lock is next free ([`IndexLock::Global`]).
    lock_free: Nanos,
}

/// One writer thread's CPU: its clock and its PN read-ahead.
#[derive(Copy, Clone, Debug, Default)]
struct Cpu {
    now: Nanos,
    ahead_done: Nanos,
    ahead_addr: u64,
}

impl NvmFs {
    /// A fresh file system of `scheme` on a device `pm`, its blocks managed
    /// by an FTL built from `blocks` (sized for the workload).
    pub fn new(scheme: Scheme, pm: PmParams, costs: FsCosts, blocks: &FtlParams) -> Result<NvmFs, NvmFsError> {
        let engine = match scheme {
            Scheme::Nova => None,
            Scheme::NvDedup => Some(LightDedupParams {
                layout: crate::engine::Layout::Entry,
                prefetch: Prefetch::None,
                warm_start: false,
                ..LightDedupParams::default()
            }),
            Scheme::LightDedup(p) => {
                Some(LightDedupParams { prefetch: p, warm_start: false, ..LightDedupParams::default() })
            }
            Scheme::LightDedupEntry => Some(LightDedupParams {
                prefetch: Prefetch::Pn,
                layout: crate::engine::Layout::Entry,
                warm_start: false,
                ..LightDedupParams::default()
            }),
            Scheme::Cbp { .. } => {
                Some(LightDedupParams { prefetch: Prefetch::Pn, warm_start: false, ..LightDedupParams::default() })
            }
        };
        let engine = match engine {
            None => None,
            Some(p) => {
                let mut e = LightDedup::new(p).map_err(|e| NvmFsError::Engine(e.to_string()))?;
                e.record_accesses();
                Some(e)
            }
        };
        let mut ftl = Ftl::new(blocks);
        if engine.is_some() {
            ftl.track_freed();
            ftl.track_derefs();
        }
        let units = ftl.geometry().unit_count().max(1);
        Ok(NvmFs {
            scheme,
            costs,
            dev: PmDevice::new(pm)?,
            ftl,
            engine,
            now: Nanos::ZERO,
            blocks: 0,
            unit: 0,
            units,
            log_tail: 0,
            breakdown: Breakdown::default(),
            io: EngineIo::default(),
            pages: Vec::new(),
            accesses: Vec::new(),
            entries: Vec::new(),
            programmed: Vec::new(),
            freed: Vec::new(),
            ahead_done: Nanos::ZERO,
            ahead_addr: 0,
            gcs: 0,
            cpus: vec![Cpu::default()],
            cur: 0,
            concurrency: 1,
            lock_free: Nanos::ZERO,
        })
    }

    /// From now on `n` writer threads (CPUs) share the device, each with
    /// its own clock (starting at the current time) and read-ahead; thread
    /// 0 runs. Their blocks are interleaved by the caller
    /// ([`Self::switch_to`], [`Self::write_block`]).
    pub fn threads(&mut self, n: usize) {
        let now = self.clock();
        self.now = now;
        self.cpus = vec![Cpu { now, ..Cpu::default() }; n.max(1)];
        self.cur = 0;
    }

    /// Thread `t`'s clock.
    pub fn thread_now(&self, t: usize) -> Nanos {
        if t == self.cur {
            self.now
        } else {
            self.cpus[t].now
        }
    }

    /// Thread `t` runs next.
    pub fn switch_to(&mut self, t: usize) {
        if t != self.cur {
            self.cpus[self.cur] = Cpu { now: self.now, ahead_done: self.ahead_done, ahead_addr: self.ahead_addr };
            let c = self.cpus[t];
            (self.now, self.ahead_done, self.ahead_addr, self.cur) = (c.now, c.ahead_done, c.ahead_addr, t);
        }
    }

    /// How many threads are in a write syscall at once (CBP's atomic
    /// counter, §4.3; the caller knows it).
    pub fn set_concurrency(&mut self, n: u32) {
        self.concurrency = n;
    }

    /// `ns` of one thread's computation, stretched while more threads
    /// write than there are cores ([`FsCosts::cores`]): ns × threads /
    /// cores, rounded up.
    fn cpu(&self, ns: u64) -> u64 {
        let cores = u64::from(self.costs.cores.max(1));
        let threads = u64::from(self.concurrency);
        if threads <= cores {
            ns
        } else {
            (ns * threads).div_ceil(cores)
        }
    }

    /// The latest of the threads' clocks: when everything written so far
    /// has been written.
    fn clock(&self) -> Nanos {
        self.cpus.iter().map(|c| c.now).fold(self.now, Nanos::max)
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    pub fn now(&self) -> Nanos {
        self.clock()
    }

    pub fn device(&self) -> &PmDevice {
        &self.dev
    }

    /// The dedup engine, if the scheme has one.
    pub fn engine(&self) -> Option<&LightDedup> {
        self.engine.as_ref()
    }

    /// Flash GC invocations of the block store (0 on a large enough device).
    pub fn block_store_gcs(&self) -> u64 {
        self.gcs
    }

    pub fn mark(&self) -> Mark {
        Mark {
            now: self.clock(),
            blocks: self.blocks,
            counters: self.dev.counters().clone(),
            breakdown: self.breakdown.clone(),
        }
    }

    pub fn since(&self, m: &Mark) -> Phase {
        Phase {
            blocks: self.blocks - m.blocks,
            elapsed: self.clock() - m.now,
            counters: self.dev.counters().since(&m.counters),
            breakdown: self.breakdown.since(&m.breakdown),
        }
    }

    /// Writes every dirty buffered line to the media (unmount).
    pub fn flush(&mut self) {
        self.dev.flush(self.clock());
    }

    fn sync_freed(&mut self) {
        let Some(engine) = &mut self.engine else { return };
        self.ftl.take_derefs(&mut self.freed);
        for &(c, e) in &self.freed {
            engine.dereferenced(c, u64::from(c.0), e);
        }
        self.freed.clear();
        self.ftl.take_freed(&mut self.freed);
        for &(c, e) in &self.freed {
            engine.forget(c, u64::from(c.0), e);
        }
        self.freed.clear();
    }

    /// Punches `pages` blocks from `lpn` (fallocate): the blocks are
    /// unmapped; the engine learns of the freed ones at the next write, which
    /// pays their metadata (Light-Dedup frees entries lazily the same way
    /// the SSD engine does).
    pub fn punch(&mut self, lpn: u32, pages: u32) -> Result<(), NvmFsError> {
        self.ftl.check_range(u64::from(lpn), pages)?;
        for l in lpn..lpn + pages {
            self.ftl.unmap(Lpn(l));
        }
        Ok(())
    }

    /// Applies the deletions and reference-count decrements of the blocks
    /// punched or overwritten so far, charging their metadata now (the
    /// punch's own syscall) instead of at the next write.
    pub fn settle(&mut self) -> Result<(), NvmFsError> {
        if self.engine.is_some() {
            self.step(None, 0, false)?;
        }
        Ok(())
    }

    /// One write syscall of `contents.len()` blocks from `lpn`, on writer
    /// stream `stream`. The file system handles the blocks one after the
    /// other (the engine decides each alone, as Light-Dedup's loop over a
    /// syscall's blocks does: a repeat inside the syscall is found in the
    /// index like any duplicate); then one log entry and the tail.
    pub fn write(&mut self, lpn: u32, contents: &[ContentId], stream: u16) -> Result<(), NvmFsError> {
        let n = contents.len();
        if n == 0 {
            return Ok(());
        }
        self.ftl.check_range(u64::from(lpn), n as u32)?;
        for (k, &c) in contents.iter().enumerate() {
            self.block(Lpn(lpn + k as u32), c, stream, k == 0)?;
        }
        self.end_syscall();
        Ok(())
    }

    /// Block `content` at `lpn` of a write syscall on the running thread
    /// (`first`, `last`: the syscall's first and last block; the last one
    /// appends the syscall's log entry), so that several threads' syscalls
    /// interleave block by block.
    pub fn write_block(
        &mut self,
        lpn: u32,
        content: ContentId,
        stream: u16,
        first: bool,
        last: bool,
    ) -> Result<(), NvmFsError> {
        self.ftl.check_range(u64::from(lpn), 1)?;
        self.block(Lpn(lpn), content, stream, first)?;
        if last {
            self.end_syscall();
        }
        Ok(())
    }

    /// One block of a syscall.
    fn block(&mut self, l: Lpn, c: ContentId, stream: u16, first: bool) -> Result<(), NvmFsError> {
        if let Scheme::Cbp { threshold } = self.scheme {
            let p = if self.concurrency >= threshold { Prefetch::Sp } else { Prefetch::Pn };
            if let Some(e) = self.engine.as_mut() {
                e.set_prefetch(p);
            }
        }
        if self.engine.is_some() {
            self.step(Some((l, c)), stream, first)?;
        } else {
            let fs = self.cpu(self.costs.fs_ns);
            let t = self.now + Nanos(fs);
            self.breakdown.other += fs;
            let e = self.program(c)?;
            self.ftl.map_pinned(l, e);
            let addr = u64::from(self.ftl.entry(e).ppn.0) * BLOCK;
            let r = self.dev.store(addr, BLOCK, t, Category::Data);
            self.breakdown.write += (r - t).0;
            self.now = r;
        }
        self.blocks += 1;
        Ok(())
    }

    /// NOVA's log entry for the syscall and its tail.
    fn end_syscall(&mut self) {
        let cpu = self.now;
        let r = self.dev.store(LOG_BASE + self.log_tail, self.costs.log_entry_bytes, cpu, Category::Log);
        self.log_tail += self.costs.log_entry_bytes;
        let r = self.dev.store(LOG_BASE - 4096, self.costs.log_tail_bytes, r, Category::Log);
        self.breakdown.other += (r - cpu).0;
        self.now = r;
    }

    /// A new block for `content` (pinned).
    fn program(&mut self, content: ContentId) -> Result<EntryId, NvmFsError> {
        let (e, _ppn, gc) = self.ftl.program(self.unit, content, false)?;
        self.unit = (self.unit + 1) % self.units;
        self.gcs += u64::from(gc.is_some());
        Ok(e)
    }

    /// One block through the engine (`None`: only the pending deletions),
    /// executed and charged. `syscall_start`: the syscall's first block.
    fn step(&mut self, page: Option<(Lpn, ContentId)>, stream: u16, syscall_start: bool) -> Result<(), NvmFsError> {
        self.sync_freed();
        self.pages.clear();
        if let Some((lpn, content)) = page {
            self.pages.push(WritePage { lpn, content, fingerprint: u64::from(content.0), repeat: false });
        }
        self.io.reset(self.pages.len());
        self.io.stream = stream;
        self.accesses.clear();
        let engine = self.engine.as_mut().expect("step runs with an engine");
        let before = engine.read_ahead_used();
        engine.lookup(&self.ftl, &self.pages, &mut self.io);
        let used_ahead = engine.read_ahead_used() > before;
        engine.take_accesses(&mut self.accesses);
        self.entries.clear();
        self.programmed.clear();
        if let Some((lpn, content)) = page {
            let dup = match self.io.verdicts.first() {
                Some(Verdict::Duplicate(e)) if self.ftl.entry_live(*e).is_some() => Some(*e),
                _ => None,
            };
            let (e, programmed) = match dup {
                Some(e) => {
                    self.ftl.pin(e);
                    (e, false)
                }
                None => (self.program(content)?, true),
            };
            self.ftl.map_pinned(lpn, e);
            self.entries.push(e);
            self.programmed.push(programmed);
            let engine = self.engine.as_mut().expect("step runs with an engine");
            engine.commit(&self.ftl, &self.pages, &self.entries, &self.programmed, &mut self.io);
            engine.take_accesses(&mut self.accesses);
        }
        self.charge(page.is_some(), used_ahead, syscall_start);
        Ok(())
    }

    fn meta_addr(t: Target) -> (u64, u64) {
        match t {
            Target::Entry(o) => (LMT_BASE + o, crate::engine::ENTRY_BYTES),
            Target::Rmap(o) => (RMAP_BASE + o, 8),
            Target::Data(p) => (u64::from(p.0) * BLOCK, BLOCK),
        }
    }

    /// Times one block (or only the pending deletions) from the recorded
    /// accesses: the deletions, the block's own work, the loads its
    /// decision waits for, the data store, the metadata stores.
    fn charge(&mut self, has_page: bool, used_ahead: bool, syscall_start: bool) {
        let prefetch = match self.scheme {
            Scheme::LightDedup(p) => p,
            Scheme::LightDedupEntry | Scheme::Cbp { .. } => Prefetch::Pn,
            _ => Prefetch::None,
        };
        let parallel = if prefetch == Prefetch::None { 1 } else { self.costs.mlp.max(1) };
        let nv = self.scheme == Scheme::NvDedup;
        let accesses = std::mem::take(&mut self.accesses);
        let mut cpu = self.now;
        let mut i = 0;
        // Deletions and decrements of the blocks freed before this one.
        while i < accesses.len() && accesses[i].page == BEFORE {
            cpu = self.meta_op(&accesses[i], cpu);
            i += 1;
        }
        if !has_page {
            self.now = cpu;
            self.accesses = accesses;
            return;
        }
        let page = &accesses[i..];
        let start = cpu;
        let (fs, hash, index) =
            (self.cpu(self.costs.fs_ns), self.cpu(self.costs.hash_ns), self.cpu(self.costs.index_ns));
        let (md5, cmp) = (self.cpu(self.costs.md5_ns), self.cpu(self.costs.cmp_ns));
        let mut t = start + Nanos(fs);
        self.breakdown.other += fs;
        // Whether this block holds the shared index's lock (from its
        // lookup until it is identified, `IndexLock::Global`).
        let mut locked = false;
        if self.io.hashed.first().copied().unwrap_or(false) {
            t += Nanos(hash);
            self.breakdown.fp += hash;
            if self.costs.index_lock == IndexLock::Global {
                let at = t.max(self.lock_free);
                self.breakdown.lock += (at - t).0;
                t = at;
                locked = true;
            }
            t += Nanos(index);
            self.breakdown.other += index;
        }
        // PN: the block read ahead behind the previous block. Inside a
        // syscall it is in the CPU caches when it arrives; across a syscall
        // the CPU's copy is lost ("CBP cannot work ideally across syscalls",
        // §5.2) and the block is loaded again, from the XPBuffer if still
        // there.
        let mut ready: Option<Nanos> = None;
        if used_ahead {
            ready = Some(if syscall_start {
                // The lines are in the XPBuffer once the read-ahead is done.
                self.dev.load(self.ahead_addr, BLOCK, start.max(self.ahead_done), parallel, Category::Data)
            } else {
                self.ahead_done.max(start)
            });
        }
        // The arrival chain (a followed hint): its entry, then its block.
        let mut chain = start;
        for a in page.iter().filter(|a| !a.write && a.why != Why::ReadAhead) {
            let (addr, len) = Self::meta_addr(a.target);
            match a.target {
                Target::Data(_) if a.when == When::Arrival => {
                    let r = self.dev.load(addr, len, chain, parallel, Category::Data);
                    ready = Some(ready.map_or(r, |x| x.max(r)));
                }
                Target::Data(_) if nv => {
                    // NV-Dedup: the weak fingerprint matched; MD5 decides.
                    t += Nanos(md5);
                    self.breakdown.fp += md5;
                }
                Target::Data(_) => {
                    let r = self.dev.load(addr, len, t, parallel, Category::Data);
                    self.breakdown.cmp += (r - t).0;
                    t = r;
                    ready = Some(ready.map_or(r, |x| x.max(r)));
                }
                _ if a.when == When::Arrival => {
                    chain = self.dev.load(addr, len, chain, 1, Category::Meta);
                }
                _ => {
                    let r = self.dev.load(addr, len, t, 1, Category::Meta);
                    self.breakdown.meta += (r - t).0;
                    t = r;
                }
            }
        }
        if let Some(r) = ready {
            let wait = r.max(t) - t;
            self.breakdown.cmp += wait.0 + cmp;
            t = r.max(t) + Nanos(cmp);
        }
        if locked {
            self.lock_free = t;
        }
        // PN's read-ahead, issued once this block's compared block is in.
        let mut ra = ready.unwrap_or(t);
        for a in page.iter().filter(|a| a.why == Why::ReadAhead) {
            let (addr, len) = Self::meta_addr(a.target);
            if let Target::Data(_) = a.target {
                self.ahead_done = self.dev.load(addr, len, ra, parallel, Category::Data);
                self.ahead_addr = addr;
            } else {
                ra = self.dev.load(addr, len, ra, 1, Category::Meta);
            }
        }
        if self.programmed.first().copied().unwrap_or(false) {
            let addr = u64::from(self.ftl.entry(self.entries[0]).ppn.0) * BLOCK;
            let r = self.dev.store(addr, BLOCK, t, Category::Data);
            self.breakdown.write += (r - t).0;
            t = r;
        }
        for a in page.iter().filter(|a| a.write) {
            if nv && a.why == Why::Hint {
                // NV-Dedup keeps no hints.
                continue;
            }
            t = self.meta_op(a, t);
        }
        self.now = t;
        self.accesses = accesses;
    }

    /// A metadata load or store on the CPU's critical path.
    fn meta_op(&mut self, a: &Access, t: Nanos) -> Nanos {
        let (addr, len) = Self::meta_addr(a.target);
        let r = if a.write {
            self.dev.store(addr, len, t, Category::Meta)
        } else {
            self.dev.load(addr, len, t, 1, Category::Meta)
        };
        self.breakdown.meta += (r - t).0;
        r
    }
}

#[cfg(test)]
mod tests;
