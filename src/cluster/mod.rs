//! `dedupsim cluster`: ReoDedup's clustered primary deduplication, the
//! system as the paper evaluates it (Wang et al., "Revisiting Fragmentation
//! for Deduplication in Clustered Primary Storage Systems"; issue 11 part 3).
//!
//! # The model (every open choice, with the section it fills; also in
//! `docs/cluster.md`)
//!
//! * **Files and chunks (§II-A).** A workload is a list of files, each a
//!   sequence of 4 KiB pages with a content fingerprint
//!   ([`workload::FileSet`]). Fixed-size chunking at the chunk size (4 KiB by
//!   default, 4-32 KiB in §V-B) joins `chunk / 4 KiB` consecutive pages of a
//!   file into one chunk; a file's last chunk may be shorter. A chunk's
//!   fingerprint is its page's fingerprint (4 KiB) or the xxh3-64 of its
//!   pages' fingerprints.
//! * **Routing (§II-A, §III-A, \[5\] = Dong et al. FAST'11).** A chunk goes to
//!   node `mix64(fingerprint) mod N` ([`routing::node_of`]; stateless, as
//!   in \[5\]). Each node deduplicates only its own chunks (§III-A,
//!   Simulation #1): an exact fingerprint index per node.
//! * **Concurrent writes (§III-A, Fig. 2).** `threads` write threads (4 by
//!   default, Fig. 3's largest) write the files: thread `t` writes files
//!   `t, t+T, t+2T, ...` one after the other, each as write requests of
//!   `request` chunks (1 MiB by default, the superchunk size of §V-B and a
//!   usual FIO block size; the paper does not give its clients' request
//!   size). Requests reach the nodes as independent arrivals (each
//!   thread a seeded Poisson process, [`Arrival::Poisson`], issue 28 item
//!   9) or in lockstep round-robin (`--arrival lockstep`, one request per
//!   thread per round), their chunks (or superchunks) routed one by one
//!   ([`routing::interleave`]). A node sees its chunks in that global order.
//! * **Time ([`timing`], issue 28 item 8).** The layout is then timed on
//!   the §V-B testbed: two 7,200 rpm HDDs per node (or, with `--device
//!   ssd`, two simulated SSDs: [`ssd`]), 10 Gbit/s links,
//!   requests queueing at disks and links, the write batching of Exp. 8
//!   and the read cache of §V-A; every choice there is in [`timing`]'s
//!   documentation. The read I/O count below stays the paper's Fig. 10(c)
//!   metric (cold, no cache).
//! * **Store (§V-A: "we just view the Ceph RBD device as a large and
//!   sequential storage backend").** Not a simulated SSD: each node has a
//!   sequential store of chunk slots. New (unique) chunks collect in the
//!   node's write buffer (`buffer` chunks, 1,024 = one 4 MiB container by
//!   default, §II-B) and are appended to the store, in arrival order, when
//!   the buffer is full and at the end of each phase; ReoDedup's `csr` and
//!   `atr` reorder the buffer first (§V-A: "when the buffer is full, the node
//!   will call the CSR or ATR algorithms to relocate the chunks into a new
//!   location"). The read I/O count is the paper's metric (Fig. 3, Fig.
//!   10(c)); a store of slots is all it needs.
//! * **Read I/Os (§III-B Fig. 4-5: files "read by two sequential I/Os";
//!   §V-B: "we read 1024 consecutive chunks on disk in one read I/O").**
//!   Reading a file fetches every chunk in its recipe. On each node, take
//!   the distinct slots the file needs, sorted; by default
//!   ([`ReadModel::Runs`]) one read I/O per run of consecutive slots, a run
//!   split every `window` (1,024) chunks ([`read::read_ios`]). The
//!   alternative [`ReadModel::Window`] (`--read window`) reads `window`
//!   consecutive slots from the lowest needed slot not yet fetched, gaps
//!   included (unaligned). Each file is read cold: the paper's read buffer
//!   (§V-A) is not modelled, so every scheme is charged the same way.
//! * **Dedup ratio (Eq. 1).** Bytes of the files written over bytes of the
//!   chunk copies stored, over the write phase.
//! * **Chunks shared by more than one file (Table II, §IV-B).** Distinct
//!   chunk contents found in two or more files, over distinct chunk
//!   contents.
//!
//! Write modes ([`WriteMode`]) and update modes ([`UpdateMode`]) document
//! their own rules. A run ([`experiment::run`]) is a pure function of the
//! workload and the [`ClusterConfig`]: nodes are processed on rayon threads
//! and the result does not depend on how many there are.

pub mod algotime;
pub mod apptime;
pub mod experiment;
pub mod layout;
pub mod node;
pub mod read;
pub mod reproduce;
pub mod routing;
pub mod ssd;
pub mod timing;
pub mod workload;

pub use experiment::{run, ClusterReport};
pub use routing::Arrival;
pub use ssd::{Device, SsdDevice};
pub use timing::{IoTask, IoTaskReport, TimeParams, TimeReport, WriteBatch};
pub use workload::{ChunkedFiles, FileSet};

use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Bytes of one fingerprinted page (the unit workloads are built from).
pub const PAGE_BYTES: u64 = 4096;

/// Errors of the cluster simulator; each says which flag fixes it.
#[derive(Debug, Error)]
pub enum ClusterError {
    #[error("invalid {flag}: {reason}")]
    Invalid { flag: &'static str, reason: String },
    #[error("the workload has no files (nothing written with content)")]
    NoFiles,
    #[error("trace {0} carries no chunk contents (use a trace with content: FIU IODedup, a native trace from `trace synth`/`trace from-files`)")]
    NoContent(String),
    #[error("unknown cluster workload `{0}`: use homes, mail, webvm, or fio:dedup=D[,files=N][,size=SIZE][,scope=file|global]")]
    UnknownWorkload(String),
    #[error("node {node}: the {mode} layout of the write buffer failed: {reason} (a bug: please report it)")]
    Layout { node: u32, mode: &'static str, reason: String },
    #[error("workload {workload}: {reason}")]
    Family { workload: String, reason: String },
    #[error(transparent)]
    FromFiles(#[from] crate::fromfiles::FromFilesError),
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    #[error("plot: {0}")]
    Plot(String),
    #[error("--device ssd: node {node}, disk {disk}: {reason}")]
    Device { node: usize, disk: usize, reason: String },
}

fn invalid(flag: &'static str, reason: impl Into<String>) -> ClusterError {
    ClusterError::Invalid { flag, reason: reason.into() }
}

/// How chunks are routed and laid out when written (`--mode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteMode {
    /// No optimisation (§V-B "Base"): chunks routed one by one, stored in
    /// arrival order.
    None,
    /// Superchunking (§II-D, §V-B "SC", \[5\]): a file is cut into
    /// superchunks of `superchunk` consecutive chunks (its last one may be
    /// shorter); a superchunk goes whole to the node of its representative,
    /// the minimum of `mix64` over its chunk fingerprints (a min-hash, as
    /// \[5\]'s stateless routing by a superchunk's minimum feature), and its
    /// chunks arrive there consecutively. Each node still deduplicates only
    /// its own chunks, so duplicates in superchunks with other
    /// representatives are missed (§III-A, Table I).
    Superchunk,
    /// Rewriting (§II-D, §V-B "Rewrite", Fig. 4): chunks are routed one by
    /// one; a node writes a file's chunks as one run, in file order, when the
    /// file's last chunk for that node has arrived. A duplicate is rewritten
    /// (a new copy in the run) exactly when referencing its stored copy
    /// would cost the file another read I/O (Fig. 4: "rewrite the fragmented
    /// chunks ... to ensure that each file can be read by" one sequential
    /// I/O per node; §V-C Exp. 2: "rewriting all fragmented chunks
    /// consecutively"). With [`ReadModel::Runs`] that is every duplicate
    /// stored outside the run; with [`ReadModel::Window`] every duplicate
    /// whose copy is not in the last `window − n` slots of the store (`n` =
    /// the file's chunks on this node: one I/O starting at the copy then
    /// covers the run). A duplicate of a chunk earlier in the same run is
    /// referenced. The index points to the newest copy.
    Rewrite,
    /// ReoDedup-C (§IV-A): stored in arrival order after the write buffer is
    /// relocated by the greedy cosine-similarity algorithm.
    Csr,
    /// ReoDedup-A (§IV-B): as `csr` with the adjacency-table heuristic.
    Atr,
}

impl WriteMode {
    pub const ALL: [WriteMode; 5] =
        [WriteMode::None, WriteMode::Superchunk, WriteMode::Rewrite, WriteMode::Csr, WriteMode::Atr];

    pub fn name(self) -> &'static str {
        match self {
            WriteMode::None => "none",
            WriteMode::Superchunk => "superchunk",
            WriteMode::Rewrite => "rewrite",
            WriteMode::Csr => "csr",
            WriteMode::Atr => "atr",
        }
    }
}

impl fmt::Display for WriteMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WriteMode {
    type Err = ClusterError;
    fn from_str(s: &str) -> Result<Self, ClusterError> {
        WriteMode::ALL.into_iter().find(|m| m.name() == s.trim()).ok_or_else(|| {
            invalid("--mode", format!("unknown write mode `{s}`; use none, superchunk, rewrite, csr or atr"))
        })
    }
}

/// What one read I/O fetches (`--read`): the one model of the project,
/// [`crate::reodedup::ReadModel`] (runs by default; window and containers
/// as options), counted by [`read::read_ios`].
pub use crate::reodedup::ReadModel;
pub use crate::reodedup::{AtrFile, CsrGreedy};

/// `--read` by name.
pub fn parse_read(s: &str) -> Result<ReadModel, ClusterError> {
    ReadModel::parse(s)
        .ok_or_else(|| invalid("--read", format!("unknown read model `{s}`; use runs, window or containers")))
}

/// `--csr` by name.
pub fn parse_csr(s: &str) -> Result<CsrGreedy, ClusterError> {
    CsrGreedy::parse(s).ok_or_else(|| {
        invalid("--csr", format!("unknown CSR algorithm `{s}`; use rows (the paper's greedy), global or brute"))
    })
}

/// `--atr-file` by name.
pub fn parse_atr_file(s: &str) -> Result<AtrFile, ClusterError> {
    AtrFile::parse(s)
        .ok_or_else(|| invalid("--atr-file", format!("unknown ATR file choice `{s}`; use random (seeded) or first")))
}

/// How updated chunks are written (`--update`, §IV-C).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateMode {
    /// Fragmented update (§IV-C, Fig. 8(a), "FU" in Exp. 5): the new chunk is
    /// routed by its new fingerprint to its node (the *new node*) and
    /// written there like any chunk.
    #[default]
    Normal,
    /// Index-remapping update (§IV-C, Fig. 8(b)): a new chunk that its
    /// fingerprint node does not already hold is written to the *old node*
    /// (in place when no other reference shares the old copy, §IV-C Step 1
    /// "update the content of the old chunk"; otherwise appended there), and
    /// a remapping index `fingerprint → old node` is inserted at the new node
    /// (Step 2). Reading such a chunk first sends a read request to the new
    /// node (§IV-C): one redirect per file and new node, charged
    /// [`ClusterConfig::redirect_ios`] read I/Os each (1; §V-C Exp. 5:
    /// "additional I/Os to the new nodes").
    Iru,
}

impl UpdateMode {
    pub fn name(self) -> &'static str {
        match self {
            UpdateMode::Normal => "normal",
            UpdateMode::Iru => "iru",
        }
    }
}

impl fmt::Display for UpdateMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for UpdateMode {
    type Err = ClusterError;
    fn from_str(s: &str) -> Result<Self, ClusterError> {
        match s.trim() {
            "normal" | "fu" => Ok(UpdateMode::Normal),
            "iru" => Ok(UpdateMode::Iru),
            _ => Err(invalid("--update", format!("unknown update mode `{s}`; use normal (fragmented update) or iru"))),
        }
    }
}

/// One cluster run's parameters (validated by [`ClusterConfig::validate`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterConfig {
    /// Storage nodes (8 by default; 8-24 in §V-B, 3-20 in §III-A).
    pub nodes: u32,
    /// Chunk size in bytes, a multiple of 4 KiB (4 KiB default; 4-32 KiB in §V-B).
    pub chunk_bytes: u64,
    /// Superchunk size in chunks (`superchunk` mode; 1 MiB by default, §V-B).
    pub superchunk_chunks: u32,
    pub mode: WriteMode,
    pub update: UpdateMode,
    /// Share of files updated after the write phase (Exp. 5's update ratio).
    pub update_ratio: f64,
    /// Share of an updated file's chunks that get new content (one
    /// consecutive range at a seeded offset; at least one chunk).
    pub update_span: f64,
    /// Concurrent write threads (§III-A).
    pub threads: u32,
    /// Chunks per write request of a thread (the unit threads interleave in).
    pub request: u32,
    /// Write buffer of a node, in chunks (the unit CSR/ATR relocate).
    pub buffer: u32,
    /// Most consecutive chunk slots one read I/O fetches (1,024, §V-B).
    pub window: u32,
    pub read: ReadModel,
    /// CSR's algorithm (`csr` mode; §IV-A: the per-row greedy by default).
    pub csr: CsrGreedy,
    /// ATR's file choice (`atr` mode; §IV-B Step 3: random by default).
    pub atr: AtrFile,
    /// Read I/Os charged per IRU redirect (§V-C Exp. 5: remapping "will
    /// impair the read performance due to additional I/Os to the new
    /// nodes"): 1 by default, 0 to count redirects apart.
    pub redirect_ios: u32,
    /// How concurrent writers' requests interleave (§III-A; independent
    /// Poisson arrivals by default, issue 28 item 9).
    pub arrival: Arrival,
    /// The timed phases' disks, network, cache and batching (§V-B testbed).
    pub time: TimeParams,
    /// Seed of the update choices, of ATR's random file choice and of the
    /// arrivals.
    pub seed: u64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 8,
            chunk_bytes: 4096,
            superchunk_chunks: 256,
            mode: WriteMode::None,
            update: UpdateMode::Normal,
            update_ratio: 0.0,
            update_span: 0.25,
            threads: 4,
            request: 256,
            buffer: 1024,
            window: 1024,
            read: ReadModel::Runs,
            csr: CsrGreedy::Rows,
            atr: AtrFile::Random,
            redirect_ios: 1,
            arrival: Arrival::Poisson,
            time: TimeParams::default(),
            seed: 42,
        }
    }
}

impl ClusterConfig {
    /// Pages per chunk.
    pub fn chunk_pages(&self) -> usize {
        (self.chunk_bytes / PAGE_BYTES) as usize
    }

    /// Refuses values the model cannot run, naming the flag.
    pub fn validate(&self) -> Result<(), ClusterError> {
        if self.nodes == 0 || self.nodes > 65_536 {
            return Err(invalid("--nodes", format!("{} nodes; use 1 to 65536 (the paper: 3-24)", self.nodes)));
        }
        if self.chunk_bytes == 0 || self.chunk_bytes % PAGE_BYTES != 0 || self.chunk_bytes > 1 << 20 {
            return Err(invalid(
                "--chunk",
                format!("{} bytes; use a multiple of 4KiB up to 1MiB (the paper: 4KiB-32KiB)", self.chunk_bytes),
            ));
        }
        if self.superchunk_chunks == 0 {
            return Err(invalid("--superchunk", "a superchunk holds at least one chunk"));
        }
        if self.threads == 0 {
            return Err(invalid("--threads", "at least one write thread"));
        }
        if self.request == 0 {
            return Err(invalid("--request", "a write request holds at least one chunk"));
        }
        if self.buffer == 0 {
            return Err(invalid("--buffer", "a write buffer holds at least one chunk"));
        }
        if self.window == 0 {
            return Err(invalid("--window", "a read I/O fetches at least one chunk"));
        }
        let max = crate::reodedup::BRUTE_FORCE_MAX;
        if self.mode == WriteMode::Csr && self.csr == CsrGreedy::BruteForce && self.buffer as usize > max {
            return Err(invalid(
                "--csr",
                format!(
                    "brute tries every order of a node's buffer (n!): use --buffer {max} or less (got {}), or rows",
                    self.buffer
                ),
            ));
        }
        if let Some((flag, reason)) = self.time.problem(self.chunk_bytes) {
            return Err(invalid(flag, reason));
        }
        if !(0.0..=1.0).contains(&self.update_ratio) {
            return Err(invalid("--update-ratio", format!("{} is not in [0, 1]", self.update_ratio)));
        }
        if !(self.update_span > 0.0 && self.update_span <= 1.0) {
            return Err(invalid("--update-span", format!("{} is not in (0, 1]", self.update_span)));
        }
        Ok(())
    }
}
