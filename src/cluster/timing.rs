//! Time in the cluster (issue 28 item 8): each node's disks and network
//! link, the client's link, requests queueing at each, the per-node write
//! batching of Exp. 8 and the read cache of §V-A. It turns the functional
//! run's layout (which chunk copy sits in which slot of which node) into
//! the paper's throughput metrics: read throughput (Fig. 10(b), Fig. 11)
//! and write throughput (Fig. 13).
//!
//! # The testbed (§V-B) and every choice it leaves open
//!
//! §V-B: "8-24 ecs.n1.large instances ... two 1TiB SATA HDDs to store the
//! data. All instances are connected via a 10Gbps network ... each node
//! runs 2 OSD daemons." The paper gives no disk model, seek times, network
//! latency, request sizes or cache size; the defaults below are stated
//! here and in `docs/cluster.md` (table "Time").
//!
//! * **Disks.** [`TimeParams::disks`] = 2 per node (§V-B), 1 TiB each. A
//!   node's store of slots is striped over them in objects of 4 MiB
//!   ([`TimeParams::stripe_bytes`], Ceph RBD's default object size; §V-A
//!   "we just view the Ceph RBD device as a large and sequential storage
//!   backend"). Each disk is a 7,200 rpm SATA HDD (the paper's "SATA HDD";
//!   the model is not named, so values typical of 1 TB 7,200 rpm desktop
//!   drive datasheets): seek time `min + (max − min)·sqrt(d / capacity)`
//!   for a move of `d` bytes (1 ms track-to-track, 15 ms full stroke: a
//!   random seek over the whole disk averages 1 + 14·8/15 ≈ 8.5 ms, the
//!   usual datasheet average), plus half a revolution (4.17 ms at 7,200
//!   rpm, the expected rotational latency, not drawn) for any access that
//!   does not start where the head stopped, plus the transfer at 150 MB/s
//!   (sustained rate of such drives; 1 MB = 10^6 bytes). An access that
//!   starts where the previous one on that disk ended costs the transfer
//!   only. A disk serves its accesses first come, first served.
//! * **Network.** 10 Gbit/s links (§V-B), one per node and one for the
//!   client host on which all the write or read threads run (the paper's
//!   threads are FIO threads, §III-A), full duplex (a send and a receive
//!   queue each). A message costs [`TimeParams::msg_overhead_us`] (20 µs of
//!   messenger and TCP stack work, an assumption) plus its bytes at the
//!   link rate on the sender's send queue and on the receiver's receive
//!   queue, and [`TimeParams::latency_us`] (50 µs one way, a typical
//!   data-centre figure) in flight.
//! * **Writes (Exp. 8).** Each write thread sends one request at a time
//!   (FIO's iodepth 1) and sends the next when every node has acknowledged
//!   the current one; a node acknowledges on receipt (the chunks enter its
//!   write buffer in memory). How a request's chunks travel
//!   ([`WriteBatch`]): Base and Rewrite one message per chunk (Exp. 8:
//!   "the Base scheme sends only one small chunk per transmission"), SC one
//!   per superchunk, ReoDedup one per destination node ("we group each
//!   chunk in a specific local write buffer ... transfer all the chunks
//!   within each write buffer to a specific remote node via one network
//!   I/O", §V-A). A node writes its new chunks to disk when its write
//!   buffer holds `buffer` of them (and at the end), as one sequential
//!   write at the store's tail, in the background. Which received chunks
//!   are new is taken from the functional run: the node's k-th received
//!   chunk creates as many copies as the k-th chunk of its arrival stream
//!   did (the timed arrivals at a node can differ slightly from the
//!   functional order; the count is what matters here). The write phase
//!   ends when the last acknowledgement is back and the last flush is on
//!   disk. The CPU time of CSR/ATR is not charged here: it is measured on
//!   the real code apart (`cluster --algorithm-time`, Exp. 4).
//! * **Reads (Exp. 2-3).** [`TimeParams::readers`] threads (4, as many as
//!   the write threads; not given) read every file once, thread `t` files
//!   `t, t + R, ...`, one at a time: a small request to every node that
//!   holds a chunk of the file, the node reads the file's chunks it does
//!   not have in its read cache in the read model's I/Os (an I/O reads
//!   from its first needed slot to its last one), then sends them back in
//!   one message; the file is read when every node's answer has arrived.
//!   An IRU redirect costs a round trip to the new node before the file's
//!   reads (§IV-C: "system will first send a read request to the new
//!   node"). Read throughput = bytes of the files / time to read them all.
//! * **Read cache (§V-A: "a read buffer on each node to cache the
//!   duplicated chunks").** Per node, an LRU of [`TimeParams::cache_bytes`]
//!   (16 MiB; the size is not given) holding chunks read from disk that
//!   more than one file position references (the "duplicated chunks"). The
//!   node takes the read model's I/Os over all the slots the file needs,
//!   drops cached slots at the ends of each I/O and skips an I/O whose
//!   slots are all cached; a cached slot inside an I/O is read with it (a
//!   second access would cost a seek and a rotation).
//! * **Order.** Requests are handled in the order they are issued (a
//!   thread's next request at the time its previous one completed, ties by
//!   thread); each resource is reserved in that order, first come, first
//!   served. Everything is integer nanoseconds and deterministic.
//! * **Exp. 7's co-running I/O task ([`IoTask`], §V-C Exp. 7).** Off by
//!   default. When set, an application's I/O task runs on one disk of one
//!   node during the write phase (where the deduplication receives,
//!   relocates and flushes chunks): one request of
//!   [`IoTask::request_bytes`] at a time (iodepth 1), sequential over its
//!   own file starting at [`IoTask::offset_bytes`] on that disk, the next
//!   issued when the previous completes. The interference rule: the disk
//!   stays first come, first served, so the task's requests and the
//!   cluster's accesses queue behind one another in the order they are
//!   issued (a task request issued at or before a cluster access goes
//!   first); every switch between the task's file and the store moves the
//!   head (a seek and half a revolution by the HDD model), and the
//!   cluster's accesses wait for the task's as the task's wait for them.
//!   The task's speed is the bytes its head transferred within the phase
//!   (a request straddling the phase's end counted in proportion to its
//!   transfer done) over the phase's length, beside the same task alone on
//!   that disk over a window of the same length (the paper's NoDedup:
//!   "the application performance without ReoDedup-C and ReoDedup-A").
//!   HDD model only.
//! * **SSDs (`--device ssd`, [`super::ssd`]).** Each disk is then one
//!   simulated SSD: the same striping, each disk access one page request,
//!   the accesses issued together one batch (`Cluster::accesses`).
//! * **Not modelled:** CPU contention, Ceph replication, metadata accesses
//!   (Redis, in memory, §V-A), the update phase's time (Exp. 6).

use super::ssd::{Device, SsdDisk};
use super::ClusterError;
use crate::lru::LruMap;
use serde::Serialize;
use std::collections::BinaryHeap;

/// How a write request's chunks travel to the nodes (`--write-batch`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteBatch {
    /// The paper's per scheme (Exp. 8): `chunk` for Base and Rewrite,
    /// `unit` (one superchunk) for SC, `node` for ReoDedup.
    #[default]
    Auto,
    /// One message per chunk.
    Chunk,
    /// One message per routed unit (a chunk, or a superchunk under SC).
    Unit,
    /// One message per destination node and request (§V-A's write buffers).
    Node,
}

impl WriteBatch {
    pub const ALL: [WriteBatch; 4] = [WriteBatch::Auto, WriteBatch::Chunk, WriteBatch::Unit, WriteBatch::Node];

    pub fn name(self) -> &'static str {
        match self {
            WriteBatch::Auto => "auto",
            WriteBatch::Chunk => "chunk",
            WriteBatch::Unit => "unit",
            WriteBatch::Node => "node",
        }
    }

    pub fn parse(s: &str) -> Option<WriteBatch> {
        WriteBatch::ALL.into_iter().find(|b| b.name() == s.trim())
    }
}

/// The timing parameters (defaults: the paper's testbed, §V-B, and the
/// choices of the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeParams {
    /// HDDs per node (§V-B: two).
    pub disks: u32,
    /// Bytes per disk (§V-B: 1 TiB).
    pub disk_bytes: u64,
    /// Striping unit of a node's store over its disks (4 MiB, Ceph RBD's
    /// default object size).
    pub stripe_bytes: u64,
    /// Track-to-track seek, µs.
    pub seek_min_us: f64,
    /// Full-stroke seek, µs.
    pub seek_max_us: f64,
    /// Spindle speed.
    pub rpm: u32,
    /// Media transfer rate, MB/s (10^6 bytes).
    pub transfer_mb_s: f64,
    /// Link rate of every node and of the client, Gbit/s (§V-B: 10).
    pub net_gbit_s: f64,
    /// One-way network latency, µs.
    pub latency_us: f64,
    /// Per-message cost on the sender's and on the receiver's link, µs.
    pub msg_overhead_us: f64,
    /// Read cache per node, bytes (§V-A), 0 for none.
    pub cache_bytes: u64,
    /// Concurrent reader threads.
    pub readers: u32,
    pub batch: WriteBatch,
    /// What each disk is: the HDD above (§V-B, the default) or a simulated
    /// SSD (`--device ssd`, [`super::ssd`]).
    #[serde(skip_serializing_if = "Device::is_hdd")]
    pub device: Device,
    /// Exp. 7's co-running I/O task during the write phase ([`IoTask`]),
    /// `None` (the default) for none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_task: Option<IoTask>,
}

/// Exp. 7 (§V-C, "Application performance degradation"): an application's
/// I/O task on one disk of one node, co-running with the write phase (module
/// documentation). The paper gives neither the task's request size nor
/// where its file lies; both are parameters.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IoTask {
    /// The node whose disk it uses.
    pub node: u32,
    /// Which of the node's disks.
    pub disk: u32,
    /// Bytes per request, one request at a time, sequential.
    pub request_bytes: u64,
    /// Byte offset of the task's file on the disk (the node's store starts
    /// at 0).
    pub offset_bytes: u64,
}

impl IoTask {
    /// The task of `cluster --reproduce`'s Exp. 7: node 0's first disk,
    /// `request_bytes` per request, its file in the middle of the disk
    /// (512 GiB of 1 TiB: away from the store, which fills the disk from 0).
    pub fn on_first_disk(request_bytes: u64, disk_bytes: u64) -> IoTask {
        IoTask { node: 0, disk: 0, request_bytes, offset_bytes: disk_bytes / 2 }
    }
}

/// What the I/O task measured (Exp. 7).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IoTaskReport {
    /// The window: the write phase's length, seconds.
    pub seconds: f64,
    /// Bytes the task transferred within the window, beside the cluster.
    pub bytes: f64,
    /// Its speed beside the cluster, MB/s (10^6 bytes).
    pub mb_s: f64,
    /// Its speed alone on the disk over a window of the same length, MB/s.
    pub alone_mb_s: f64,
    /// Requests it issued within the window beside the cluster.
    pub requests: u64,
}

impl Default for TimeParams {
    fn default() -> Self {
        TimeParams {
            disks: 2,
            disk_bytes: 1 << 40,
            stripe_bytes: 4 << 20,
            seek_min_us: 1_000.0,
            seek_max_us: 15_000.0,
            rpm: 7_200,
            transfer_mb_s: 150.0,
            net_gbit_s: 10.0,
            latency_us: 50.0,
            msg_overhead_us: 20.0,
            cache_bytes: 16 << 20,
            readers: 4,
            batch: WriteBatch::Auto,
            device: Device::Hdd,
            io_task: None,
        }
    }
}

impl TimeParams {
    /// Why these parameters cannot run, naming the flag, or `None`.
    pub fn problem(&self, chunk_bytes: u64) -> Option<(&'static str, String)> {
        if self.disks == 0 {
            return Some(("--disks", "a node needs at least one disk".into()));
        }
        if self.readers == 0 {
            return Some(("--readers", "at least one reader thread".into()));
        }
        if self.stripe_bytes < chunk_bytes || self.disk_bytes < self.stripe_bytes {
            return Some((
                "--chunk",
                format!("the stripe of {} bytes holds no {chunk_bytes}-byte chunk", self.stripe_bytes),
            ));
        }
        if let Some(t) = &self.io_task {
            if !self.device.is_hdd() {
                return Some(("--device", "the co-running I/O task (Exp. 7) runs on the HDD model only".into()));
            }
            if t.disk >= self.disks || t.request_bytes == 0 || t.offset_bytes >= self.disk_bytes {
                return Some((
                    "--io-task",
                    format!(
                        "the I/O task needs a disk below {}, a request of at least one byte and an offset below {} \
                         (got disk {}, {} bytes, offset {})",
                        self.disks, self.disk_bytes, t.disk, t.request_bytes, t.offset_bytes
                    ),
                ));
            }
        }
        let positive =
            [("--transfer", self.transfer_mb_s), ("--net-gbit", self.net_gbit_s), ("--rpm", f64::from(self.rpm))];
        for (flag, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Some((flag, format!("{v} is not a positive number")));
            }
        }
        let non_negative = [
            ("--seek", self.seek_min_us),
            ("--seek", self.seek_max_us - self.seek_min_us),
            ("--latency", self.latency_us),
            ("--msg-overhead", self.msg_overhead_us),
        ];
        for (flag, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Some((flag, format!("{v} is negative or not a number (seek: 0 <= min <= max)")));
            }
        }
        None
    }
}

/// What the timed phases measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimeReport {
    /// Write phase: seconds, logical MB/s, network messages.
    pub write_seconds: f64,
    pub write_mb_s: f64,
    pub write_messages: u64,
    /// Read phase: seconds, logical MB/s.
    pub read_seconds: f64,
    pub read_mb_s: f64,
    /// Disk accesses of the read phase (read-model I/Os less those the
    /// cache covers whole, before striping splits them).
    pub read_disk_ios: u64,
    /// Chunks served from the read caches without a disk read (cached
    /// chunks inside an I/O's range are read with it).
    pub cache_hits: u64,
    /// Busy time of the busiest disk in the read phase, over its length.
    pub read_disk_utilization: f64,
    /// Exp. 7's co-running I/O task, when [`TimeParams::io_task`] is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_task: Option<IoTaskReport>,
}

/// Nanoseconds.
type Ns = u64;

fn ns(us: f64) -> Ns {
    (us * 1_000.0).round() as Ns
}

/// A first-come-first-served server: free from `free` on.
#[derive(Clone, Debug, Default)]
struct Server {
    free: Ns,
    busy: Ns,
}

impl Server {
    /// Serves a job of `dur` arriving at `at`; its completion.
    fn serve(&mut self, at: Ns, dur: Ns) -> Ns {
        self.free = self.free.max(at) + dur;
        self.busy += dur;
        self.free
    }
}

/// An HDD: a server with a head position (byte offset).
#[derive(Clone, Debug, Default)]
struct Disk {
    server: Server,
    head: u64,
}

/// The co-running I/O task's progress on its disk ([`IoTask`]).
#[derive(Clone, Debug)]
struct TaskRun {
    node: usize,
    disk: usize,
    len: u64,
    /// Where its next request starts on the disk.
    pos: u64,
    /// When its next request is issued (the previous one's completion).
    issue: Ns,
    requests: u64,
    /// Bytes of its requests served before `last`.
    bytes_before_last: u64,
    /// Its latest request served: (transfer start, completion).
    last: Option<(Ns, Ns)>,
}

impl TaskRun {
    fn new(t: &IoTask) -> TaskRun {
        TaskRun {
            node: t.node as usize,
            disk: t.disk as usize,
            len: t.request_bytes,
            pos: t.offset_bytes,
            issue: 0,
            requests: 0,
            bytes_before_last: 0,
            last: None,
        }
    }

    /// Serves on `disk`, first come first served, every request the task
    /// issues at or before `at` (`inclusive`) or before `at` (not); a
    /// closed loop, so each is issued when the previous one completes.
    fn advance(&mut self, disk: &mut Disk, hdd: &Hdd, at: Ns, inclusive: bool) {
        while self.issue < at || (inclusive && self.issue == at) {
            let dur = hdd.access(disk.head, self.pos, self.len);
            let transfer = hdd.transfer(self.len);
            let done = disk.server.serve(self.issue, dur);
            disk.head = self.pos + self.len;
            self.pos += self.len;
            if self.last.is_some() {
                self.bytes_before_last += self.len;
            }
            self.last = Some((done - transfer, done));
            self.requests += 1;
            self.issue = done;
        }
    }

    /// Bytes its head transferred by `end`: its requests served, the last
    /// one in proportion to its transfer done by `end`.
    fn bytes_by(&self, end: Ns) -> f64 {
        let Some((start, done)) = self.last else { return 0.0 };
        let part = if end >= done {
            1.0
        } else if end <= start {
            0.0
        } else {
            (end - start) as f64 / (done - start) as f64
        };
        self.bytes_before_last as f64 + part * self.len as f64
    }

    /// Bytes the same task transfers alone on a fresh disk (head at 0) in
    /// `window` ns.
    fn alone(t: &IoTask, hdd: &Hdd, window: Ns) -> f64 {
        let mut run = TaskRun::new(t);
        run.advance(&mut Disk::default(), hdd, window, false);
        run.bytes_by(window)
    }
}

/// The disk model's constants in nanoseconds.
struct Hdd {
    seek_min: f64,
    seek_span: f64,
    capacity: f64,
    half_rev: Ns,
    ns_per_byte: f64,
}

impl Hdd {
    fn new(p: &TimeParams) -> Hdd {
        Hdd {
            seek_min: p.seek_min_us * 1_000.0,
            seek_span: (p.seek_max_us - p.seek_min_us) * 1_000.0,
            capacity: p.disk_bytes as f64,
            half_rev: (30.0e9 / f64::from(p.rpm)).round() as Ns,
            ns_per_byte: 1_000.0 / p.transfer_mb_s,
        }
    }

    /// Media transfer time of `len` bytes.
    fn transfer(&self, len: u64) -> Ns {
        (len as f64 * self.ns_per_byte).round() as Ns
    }

    /// Time to access `len` bytes at byte `pos` with the head at `head`.
    fn access(&self, head: u64, pos: u64, len: u64) -> Ns {
        let transfer = self.transfer(len);
        if pos == head {
            return transfer;
        }
        let d = pos.abs_diff(head) as f64 / self.capacity;
        let seek = (self.seek_min + self.seek_span * d.min(1.0).sqrt()).round() as Ns;
        seek + self.half_rev + transfer
    }
}

/// A node's disks and link queues.
struct NodeTime {
    disks: Vec<Disk>,
    /// With `--device ssd`: one simulated SSD per disk (`disks` then only
    /// holds the striping's disk count).
    ssds: Vec<SsdDisk>,
    /// Slots written to the node's disks so far (the store's timed tail).
    written: u64,
    send: Server,
    recv: Server,
    cache: Lru,
}

/// An LRU set of slots.
#[derive(Default)]
struct Lru {
    cap: usize,
    slots: LruMap<u32, ()>,
}

impl Lru {
    fn new(cap: usize) -> Lru {
        Lru { cap, ..Lru::default() }
    }

    /// Whether `slot` is cached (refreshing it).
    fn hit(&mut self, slot: u32) -> bool {
        self.slots.get_mut(&slot).is_some()
    }

    fn insert(&mut self, slot: u32) {
        if self.cap == 0 || self.hit(slot) {
            return;
        }
        if self.slots.len() >= self.cap {
            self.slots.pop_lru();
        }
        self.slots.insert(slot, ());
    }
}

/// The cluster's resources.
pub struct Cluster {
    p: TimeParams,
    hdd: Hdd,
    chunk: u64,
    stripe_slots: u64,
    nodes: Vec<NodeTime>,
    client_send: Server,
    client_recv: Server,
    msg: Ns,
    latency: Ns,
    ns_per_byte: f64,
    /// The SSDs' clock at this phase's time 0 (`--device ssd`, [`super::ssd`]).
    epoch: Ns,
    /// Exp. 7's I/O task while it runs (the write phase).
    task: Option<TaskRun>,
    /// What it measured, once the write phase is over.
    task_report: Option<IoTaskReport>,
}

impl Cluster {
    /// The cluster's resources, with `p.device`'s disks (an SSD per disk
    /// with `--device ssd`).
    pub fn new(p: &TimeParams, nodes: u32, chunk_bytes: u64) -> Result<Cluster, ClusterError> {
        if let Some(t) = p.io_task.as_ref().filter(|t| t.node >= nodes) {
            return Err(ClusterError::Invalid {
                flag: "--io-task",
                reason: format!("the I/O task's node {} is not one of the {nodes} nodes", t.node),
            });
        }
        let mut c = Cluster::with_hdds(p, nodes, chunk_bytes);
        if let Device::Ssd(d) = &p.device {
            for (n, node) in c.nodes.iter_mut().enumerate() {
                for k in 0..p.disks as usize {
                    node.ssds.push(SsdDisk::new(d, n, k)?);
                }
            }
        }
        Ok(c)
    }

    /// The cluster with the HDD model's disks whatever `p.device` says.
    fn with_hdds(p: &TimeParams, nodes: u32, chunk_bytes: u64) -> Cluster {
        let cache = (p.cache_bytes / chunk_bytes.max(1)) as usize;
        Cluster {
            hdd: Hdd::new(p),
            chunk: chunk_bytes,
            stripe_slots: (p.stripe_bytes / chunk_bytes).max(1),
            nodes: (0..nodes)
                .map(|_| NodeTime {
                    disks: vec![Disk::default(); p.disks as usize],
                    ssds: Vec::new(),
                    written: 0,
                    send: Server::default(),
                    recv: Server::default(),
                    cache: Lru::new(cache),
                })
                .collect(),
            client_send: Server::default(),
            client_recv: Server::default(),
            msg: ns(p.msg_overhead_us),
            latency: ns(p.latency_us),
            ns_per_byte: 8.0 / p.net_gbit_s,
            epoch: 0,
            task: None,
            task_report: None,
            p: p.clone(),
        }
    }

    fn wire(&self, bytes: u64) -> Ns {
        self.msg + (bytes as f64 * self.ns_per_byte).round() as Ns
    }

    /// Accesses slots `start..start + len` of node `n`'s store at `at`
    /// (split over its disks by stripe); the completion of the last piece.
    fn disk_access(&mut self, n: usize, start: u64, len: u64, at: Ns) -> Ns {
        let disks = self.p.disks as u64;
        let (ss, chunk) = (self.stripe_slots, self.chunk);
        let mut done = at;
        let mut s = start;
        while s < start + len {
            let obj = s / ss;
            let piece = (ss - s % ss).min(start + len - s);
            let k = (obj % disks) as usize;
            let disk = &mut self.nodes[n].disks[k];
            if let Some(task) = self.task.as_mut().filter(|t| (t.node, t.disk) == (n, k)) {
                // Exp. 7: the task's requests issued by now go first.
                task.advance(disk, &self.hdd, at, true);
            }
            let pos = ((obj / disks) * ss + s % ss) * chunk;
            let dur = self.hdd.access(disk.head, pos, piece * chunk);
            disk.head = pos + piece * chunk;
            done = done.max(disk.server.serve(at, dur));
            s += piece;
        }
        done
    }

    /// Accesses the extents `(first slot, slots)` of node `n`'s store, all
    /// issued at `at` (split over its disks by stripe); the completion of
    /// the last piece. An HDD serves them one by one ([`Self::disk_access`]);
    /// an SSD takes them as one batch ([`super::ssd`]).
    fn accesses(&mut self, n: usize, ios: &[(u64, u64)], at: Ns, write: bool) -> Result<Ns, ClusterError> {
        if write {
            let w = &mut self.nodes[n].written;
            for &(s, l) in ios {
                *w = (*w).max(s + l);
            }
        }
        if self.nodes[n].ssds.is_empty() {
            let mut done = at;
            for &(s, l) in ios {
                done = done.max(self.disk_access(n, s, l, at));
            }
            return Ok(done);
        }
        let disks = self.p.disks as u64;
        let (ss, chunk, epoch) = (self.stripe_slots, self.chunk, self.epoch);
        let ssds = &mut self.nodes[n].ssds;
        for &(start, len) in ios {
            let mut s = start;
            while s < start + len {
                let obj = s / ss;
                let piece = (ss - s % ss).min(start + len - s);
                let k = (obj % disks) as usize;
                let pos = ((obj / disks) * ss + s % ss) * chunk;
                ssds[k].submit(write, pos, piece * chunk, epoch + at).map_err(|reason| ClusterError::Device {
                    node: n,
                    disk: k,
                    reason,
                })?;
                s += piece;
            }
        }
        let mut done = at;
        for (k, ssd) in ssds.iter_mut().enumerate() {
            if let Some(c) = ssd.drain().map_err(|reason| ClusterError::Device { node: n, disk: k, reason })? {
                done = done.max(c - epoch);
            }
        }
        Ok(done)
    }

    /// With SSDs: writes, untimed, the slots `files` read that the timed
    /// writes did not (the update phase's new copies), so every read finds
    /// its pages mapped.
    fn fill(&mut self, files: &[FileRead]) -> Result<(), ClusterError> {
        if self.nodes.iter().all(|n| n.ssds.is_empty()) {
            return Ok(());
        }
        let mut need = vec![0u64; self.nodes.len()];
        for f in files {
            for (n, slots) in &f.parts {
                if let Some(&(s, _)) = slots.last() {
                    let x = &mut need[*n as usize];
                    *x = (*x).max(u64::from(s) + 1);
                }
            }
        }
        for (n, &need) in need.iter().enumerate() {
            let have = self.nodes[n].written;
            if need > have {
                self.accesses(n, &[(have, need - have)], 0, true)?;
            }
        }
        Ok(())
    }

    /// Clears the queues (not the heads, caches or SSD contents) between
    /// phases; the SSDs' clock goes on from their latest completion.
    fn new_phase(&mut self) {
        for n in &mut self.nodes {
            for d in &mut n.disks {
                d.server = Server::default();
            }
            n.send = Server::default();
            n.recv = Server::default();
        }
        self.client_send = Server::default();
        self.client_recv = Server::default();
        let floor = self.nodes.iter().flat_map(|n| n.ssds.iter().map(SsdDisk::floor)).max().unwrap_or(0);
        self.epoch = self.epoch.max(floor);
        for ssd in self.nodes.iter_mut().flat_map(|n| n.ssds.iter_mut()) {
            ssd.busy = 0;
        }
    }

    /// What Exp. 7's I/O task measured in the write phase, if it ran.
    pub fn io_task_report(&self) -> Option<IoTaskReport> {
        self.task_report.clone()
    }

    /// Ends the I/O task at the phase's end `end`: its requests issued
    /// before `end` are served, and its speed is taken over `[0, end)`
    /// beside that of the task alone.
    fn finish_task(&mut self, end: Ns) {
        let (Some(mut run), Some(spec)) = (self.task.take(), self.p.io_task) else { return };
        run.advance(&mut self.nodes[run.node].disks[run.disk], &self.hdd, end, false);
        let bytes = run.bytes_by(end);
        let secs = end as f64 / 1e9;
        let rate = |b: f64| if secs > 0.0 { b / 1e6 / secs } else { 0.0 };
        self.task_report = Some(IoTaskReport {
            seconds: secs,
            bytes,
            mb_s: rate(bytes),
            alone_mb_s: rate(TaskRun::alone(&spec, &self.hdd, end)),
            requests: run.requests,
        });
    }

    /// Busy time of the busiest disk (HDD or SSD) in this phase.
    fn busiest(&self) -> Ns {
        let hdd = self.nodes.iter().flat_map(|n| n.disks.iter().map(|d| d.server.busy));
        let ssd = self.nodes.iter().flat_map(|n| n.ssds.iter().map(|d| d.busy));
        hdd.chain(ssd).max().unwrap_or(0)
    }
}

/// A message of a write request: `chunks` chunks to `node`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub node: u32,
    pub chunks: u32,
}

/// The write phase: `requests[t]` are thread t's requests in order, each
/// its messages; `new_at[n][k]` the copies node n's k-th received chunk
/// creates; `buffer` the write buffer in chunks; `logical` the bytes
/// written. Returns (seconds, messages).
pub fn write_phase(
    c: &mut Cluster,
    requests: &[Vec<Vec<Message>>],
    new_at: &[Vec<u32>],
    buffer: u32,
    logical: u64,
) -> Result<(f64, f64, u64), ClusterError> {
    c.new_phase();
    c.task = c.p.io_task.as_ref().map(TaskRun::new);
    let nodes = c.nodes.len();
    let mut received = vec![0usize; nodes];
    let mut pending = vec![0u64; nodes];
    let mut tail = vec![0u64; nodes];
    let mut last_rx = vec![0 as Ns; nodes];
    let mut end: Ns = 0;
    let mut messages = 0u64;
    let mut next = vec![0usize; requests.len()];
    let mut heap: BinaryHeap<std::cmp::Reverse<(Ns, usize)>> =
        (0..requests.len()).map(|t| std::cmp::Reverse((0, t))).collect();
    let flush = |c: &mut Cluster, n: usize, k: u64, at: Ns, tail: &mut u64| -> Result<Ns, ClusterError> {
        let done = c.accesses(n, &[(*tail, k)], at, true)?;
        *tail += k;
        Ok(done)
    };
    while let Some(std::cmp::Reverse((t, th))) = heap.pop() {
        let Some(req) = requests[th].get(next[th]) else { continue };
        next[th] += 1;
        let mut finish = t;
        for m in req {
            messages += 1;
            let n = m.node as usize;
            let bytes = u64::from(m.chunks) * c.chunk;
            let wire = c.wire(bytes);
            let sent = c.client_send.serve(t, wire);
            let rx = c.nodes[n].recv.serve(sent + c.latency, wire);
            last_rx[n] = rx;
            let k = received[n];
            let upto = (k + m.chunks as usize).min(new_at[n].len());
            pending[n] += new_at[n][k.min(upto)..upto].iter().map(|&x| u64::from(x)).sum::<u64>();
            received[n] = k + m.chunks as usize;
            while pending[n] >= u64::from(buffer) {
                end = end.max(flush(c, n, u64::from(buffer), rx, &mut tail[n])?);
                pending[n] -= u64::from(buffer);
            }
            finish = finish.max(rx + c.latency);
        }
        end = end.max(finish);
        heap.push(std::cmp::Reverse((finish, th)));
    }
    for n in 0..nodes {
        // Chunks the timed stream did not reach (none when it matches).
        let rest: u64 = new_at[n].get(received[n]..).map_or(0, |r| r.iter().map(|&x| u64::from(x)).sum());
        let k = pending[n] + rest;
        if k > 0 {
            end = end.max(flush(c, n, k, last_rx[n], &mut tail[n])?);
        }
    }
    c.finish_task(end);
    let secs = end as f64 / 1e9;
    Ok((secs, if secs > 0.0 { logical as f64 / 1e6 / secs } else { 0.0 }, messages))
}

/// One file to read: per node it touches (ascending), its distinct slots
/// there (ascending) with whether each is a duplicated chunk (cacheable);
/// and the nodes that redirect it (IRU).
#[derive(Clone, Debug, Default)]
pub struct FileRead {
    pub parts: Vec<(u32, Vec<(u32, bool)>)>,
    pub redirects: Vec<u32>,
    pub bytes: u64,
}

/// The read phase: `files` read once by `readers` threads. Returns
/// (seconds, MB/s, disk I/Os, cache hits, busiest disk's utilization).
pub fn read_phase(
    c: &mut Cluster,
    files: &[FileRead],
    window: u32,
    model: super::ReadModel,
) -> Result<(f64, f64, u64, u64, f64), ClusterError> {
    c.fill(files)?;
    c.new_phase();
    let readers = (c.p.readers as usize).min(files.len()).max(1);
    let mut heap: BinaryHeap<std::cmp::Reverse<(Ns, usize)>> =
        (0..readers).map(|t| std::cmp::Reverse((0, t))).collect();
    let mut next: Vec<usize> = (0..readers).collect();
    let (mut end, mut ios, mut hits, mut logical) = (0 as Ns, 0u64, 0u64, 0u64);
    let mut all: Vec<u64> = Vec::new();
    let mut cached: Vec<bool> = Vec::new();
    let mut extents: Vec<(u64, u64)> = Vec::new();
    let mut ios_now: Vec<(u64, u64)> = Vec::new();
    while let Some(std::cmp::Reverse((t, th))) = heap.pop() {
        let Some(f) = files.get(next[th]) else { continue };
        next[th] += readers;
        logical += f.bytes;
        // Redirects first (§IV-C): a round trip to each new node.
        let mut start = t;
        for &n in &f.redirects {
            let sent = c.client_send.serve(t, c.msg);
            let rx = c.nodes[n as usize].recv.serve(sent + c.latency, c.msg);
            let back = c.nodes[n as usize].send.serve(rx, c.msg);
            start = start.max(c.client_recv.serve(back + c.latency, c.msg));
        }
        let mut finish = start;
        for (n, slots) in &f.parts {
            let n = *n as usize;
            let sent = c.client_send.serve(start, c.msg);
            let at = c.nodes[n].recv.serve(sent + c.latency, c.msg);
            // The read model's I/Os over every slot the file needs; cached
            // slots at an I/O's ends are not read, an I/O of cached slots
            // only is skipped (one in the middle is read with its run: a
            // second access would cost more than reading it again).
            all.clear();
            all.extend(slots.iter().map(|&(s, _)| u64::from(s)));
            cached.clear();
            cached.extend(slots.iter().map(|&(s, _)| c.nodes[n].cache.hit(s)));
            extents.clear();
            read_extents(&all, u64::from(window), model, &mut extents);
            ios_now.clear();
            let mut i = 0usize;
            for &(s, len) in &extents {
                let j = i + all[i..].partition_point(|&x| x < s + len);
                let (mut a, mut b) = (i, j);
                while a < b && cached[a] {
                    a += 1;
                }
                while b > a && cached[b - 1] {
                    b -= 1;
                }
                hits += ((a - i) + (j - b)) as u64;
                if a < b {
                    ios += 1;
                    ios_now.push((all[a], all[b - 1] - all[a] + 1));
                }
                i = j;
            }
            let done = c.accesses(n, &ios_now, at, false)?;
            for &(s, dup) in slots {
                if dup {
                    c.nodes[n].cache.insert(s);
                }
            }
            let bytes = slots.len() as u64 * c.chunk;
            let wire = c.wire(bytes);
            let out = c.nodes[n].send.serve(done, wire);
            finish = finish.max(c.client_recv.serve(out + c.latency, wire));
        }
        end = end.max(finish);
        heap.push(std::cmp::Reverse((finish, th)));
    }
    let secs = end as f64 / 1e9;
    let util = if end == 0 { 0.0 } else { c.busiest() as f64 / end as f64 };
    Ok((secs, if secs > 0.0 { logical as f64 / 1e6 / secs } else { 0.0 }, ios, hits, util))
}

/// The read model's I/Os over sorted distinct `slots` as extents (first
/// slot, length from the first needed slot to the last one the I/O
/// covers); as many as [`crate::reodedup::count_ios`] counts.
pub fn read_extents(slots: &[u64], window: u64, model: super::ReadModel, out: &mut Vec<(u64, u64)>) {
    use super::ReadModel;
    let w = window.max(1);
    let (mut start, mut prev) = (0u64, 0u64);
    let mut open = false;
    for &s in slots {
        let extends = open
            && match model {
                ReadModel::Runs => s == prev + 1 && s - start < w,
                ReadModel::Window => s < start + w,
                ReadModel::Containers => s / w == start / w,
            };
        if !extends {
            if open {
                out.push((start, prev - start + 1));
            }
            start = s;
            open = true;
        }
        prev = s;
    }
    if open {
        out.push((start, prev - start + 1));
    }
}

/// Bytes of an IRU remapping index sent to the new node (§IV-C: the new
/// chunk's fingerprint and the old node's ID; 8 + 8 bytes, an assumption).
pub const REMAP_INDEX_BYTES: u64 = 16;

/// Exp. 6 (§V-C, Fig. 12(g)): the latency of updating one chunk on an idle
/// cluster, in µs. A fragmented update (FU) is one message carrying the
/// chunk to the node its new fingerprint routes to, acknowledged as the
/// write phase's messages are (a 20 µs + bytes send on each link, the
/// one-way latency each way); IRU (§IV-C Steps 1-2) sends the chunk to the
/// old node and then the remapping index ([`REMAP_INDEX_BYTES`]) to the new
/// one, each acknowledged, one after the other. With `persist` the node
/// writes the chunk to its disk before acknowledging (a random access: the
/// seek over a uniformly random distance, whose mean is `seek_min + 8/15 ×
/// (seek_max − seek_min)`, half a revolution and the transfer); by default
/// it acknowledges on receipt into its write buffer, as in the write phase.
/// The remapping index is kept in memory (Redis, §V-A) in both. The disk
/// is the HDD model whatever `p.device` says (`--device ssd` is not timed here).
pub fn update_latency_us(p: &TimeParams, chunk_bytes: u64, iru: bool, persist: bool) -> f64 {
    let c = Cluster::with_hdds(p, 1, chunk_bytes);
    let message = |bytes: u64| 2 * c.wire(bytes) + 2 * c.latency;
    let disk = if persist {
        let seek = c.hdd.seek_min + c.hdd.seek_span * 8.0 / 15.0;
        (seek + (chunk_bytes as f64 * c.hdd.ns_per_byte)).round() as Ns + c.hdd.half_rev
    } else {
        0
    };
    let mut t = message(chunk_bytes) + disk;
    if iru {
        t += message(REMAP_INDEX_BYTES);
    }
    t as f64 / 1_000.0
}

#[cfg(test)]
mod tests {
    use super::super::ReadModel;
    use super::*;

    /// The disk model by hand: 7,200 rpm = 4,166,667 ns half revolution;
    /// a seek over a quarter of the disk = 1 + 14·0.5 = 8 ms; 150 MB/s =
    /// 27,307 ns per 4 KiB; a sequential continuation costs the transfer.
    #[test]
    fn hdd_access_times_by_hand() {
        let h = Hdd::new(&TimeParams::default());
        assert_eq!(h.half_rev, 4_166_667);
        assert_eq!(h.access(0, 0, 4096), 27_307);
        assert_eq!(h.access(0, 1 << 38, 4096), 8_000_000 + 4_166_667 + 27_307);
        // A short hop still pays the minimum seek and the rotation.
        // (sqrt(4096 / 2^40) = 2^-14: 14 ms x 2^-14 = 854 ns)
        assert_eq!(h.access(0, 4096, 4096), 1_000_000 + 854 + 4_166_667 + 27_307);
    }

    /// Extents have the counting model's number and cover each I/O from its
    /// first to its last needed slot.
    #[test]
    fn extents_match_the_counting_model() {
        let slots = [0u64, 1, 2, 5, 6, 9, 20];
        let mut out = Vec::new();
        read_extents(&slots, 4, ReadModel::Runs, &mut out);
        assert_eq!(out, [(0, 3), (5, 2), (9, 1), (20, 1)]);
        out.clear();
        read_extents(&slots, 4, ReadModel::Window, &mut out);
        assert_eq!(out, [(0, 3), (5, 2), (9, 1), (20, 1)]);
        out.clear();
        read_extents(&slots, 8, ReadModel::Window, &mut out);
        assert_eq!(out, [(0, 7), (9, 1), (20, 1)]);
        out.clear();
        read_extents(&slots, 4, ReadModel::Containers, &mut out);
        assert_eq!(out, [(0, 3), (5, 2), (9, 1), (20, 1)]);
        for m in ReadModel::ALL {
            for w in [1u64, 2, 3, 7] {
                out.clear();
                read_extents(&slots, w, m, &mut out);
                let mut v = slots.to_vec();
                assert_eq!(out.len() as u64, crate::reodedup::count_ios(&mut v, w, m), "{m:?} {w}");
            }
        }
    }

    /// One node, one disk, one reader, no cache: a file of 4 chunks in one
    /// run at slot 0 costs: request message (20 µs + 50 µs latency + 20 µs
    /// at the node), one access (the head is at 0: transfer only, 16 KiB
    /// at 150 MB/s = 109,227 ns), the answer (20 µs + 16 KiB at 0.8 ns/byte on the node's
    /// link, 50 µs, the same on the client's).
    #[test]
    fn a_read_by_hand() {
        let p = TimeParams { disks: 1, cache_bytes: 0, readers: 1, ..TimeParams::default() };
        let mut c = Cluster::new(&p, 1, 4096).unwrap();
        let f = FileRead { parts: vec![(0, (0..4).map(|s| (s, false)).collect())], redirects: vec![], bytes: 16384 };
        let (secs, _, ios, hits, _) = read_phase(&mut c, std::slice::from_ref(&f), 1024, ReadModel::Runs).unwrap();
        let wire = 20_000 + (16384.0f64 * 0.8).round() as u64;
        let want = 20_000 + 50_000 + 20_000 + 109_227 + wire + 50_000 + wire;
        assert_eq!((secs * 1e9).round() as u64, want);
        assert_eq!((ios, hits), (1, 0));
        // Split in two runs (slots 0-1 and 3-4), the second pays a seek
        // and half a revolution; with a cache, a second reader of the same
        // duplicated chunks hits it and reads nothing from disk.
        let p2 = TimeParams { readers: 1, ..p.clone() };
        let mut c2 = Cluster::new(&TimeParams { cache_bytes: 1 << 20, ..p2 }, 1, 4096).unwrap();
        let g = FileRead {
            parts: vec![(0, vec![(0, true), (1, true), (3, true), (4, true)])],
            redirects: vec![],
            bytes: 16384,
        };
        let (_, _, ios, hits, _) = read_phase(&mut c2, &[g.clone(), g], 1024, ReadModel::Runs).unwrap();
        assert_eq!((ios, hits), (2, 4));
        // A cached slot inside a run does not split it: file 1 caches slot
        // 1; file 2 needs 0-2, one I/O (slot 1 read again); file 3 needs
        // 1-2 (slot 2 is not duplicated, so not cached): slot 1 trimmed.
        let mut c3 = Cluster::new(&TimeParams { cache_bytes: 1 << 20, readers: 1, ..p.clone() }, 1, 4096).unwrap();
        let file = |v: Vec<(u32, bool)>| FileRead { parts: vec![(0, v)], redirects: vec![], bytes: 4096 };
        let files =
            [file(vec![(1, true)]), file(vec![(0, false), (1, true), (2, false)]), file(vec![(1, true), (2, false)])];
        let (_, _, ios, hits, _) = read_phase(&mut c3, &files, 1024, ReadModel::Runs).unwrap();
        assert_eq!((ios, hits), (3, 1));
    }

    /// `--device ssd` by hand (issue 28 item 8): the tiny SSD preset (two
    /// channels of one chip, FAD Table I timing: read 20 µs, 25 ns/B, so
    /// 102.4 µs per 4 KiB page on a channel, program 200 µs), writes
    /// complete when programmed. One node, one disk, one reader, no cache.
    /// A write message of two 4 KiB chunks fills the 2-chunk buffer: the
    /// flush writes both pages at once, one per chip, done 302.4 µs after
    /// the message is in. A file of one 8 KiB chunk (two pages, one per
    /// chip) reads in 20 + 102.4 µs: the same messages as with the HDD,
    /// the SSD's read instead of the disk's. Both fail if the device is
    /// ignored (the HDD takes 54,613 ns for 8 KiB).
    #[test]
    fn the_ssd_device_by_hand() {
        let mut config = crate::config::Config::preset("tiny").unwrap();
        config.timing.write_completion = crate::timing::WriteCompletion::Program;
        let device = Device::Ssd(Box::new(super::super::ssd::SsdDevice { policy: "native".into(), config }));
        let p = TimeParams { disks: 1, cache_bytes: 0, readers: 1, device, ..TimeParams::default() };
        let mut c = Cluster::new(&p, 1, 4096).unwrap();
        let req = vec![Message { node: 0, chunks: 2 }];
        let (secs, _, _) = write_phase(&mut c, &[vec![req]], &[vec![1; 2]], 2, 8192).unwrap();
        let wire = 20_000 + (8192.0f64 * 0.8).round() as u64;
        let rx = wire + 50_000 + wire;
        assert_eq!((secs * 1e9).round() as u64, rx + 102_400 + 200_000);
        let mut c = Cluster::new(&p, 1, 8192).unwrap();
        let f = FileRead { parts: vec![(0, vec![(0, false)])], redirects: vec![], bytes: 8192 };
        let (secs, _, ios, _, util) = read_phase(&mut c, std::slice::from_ref(&f), 1024, ReadModel::Runs).unwrap();
        let want = 20_000 + 50_000 + 20_000 + 20_000 + 102_400 + wire + 50_000 + wire;
        assert_eq!((secs * 1e9).round() as u64, want);
        assert_eq!(ios, 1);
        assert!((util - 122_400.0 / want as f64).abs() < 1e-12, "{util}");
    }

    /// Writes by hand: one thread, two messages of 2 chunks to one node
    /// with one disk and a 2-chunk buffer, every chunk new: each message
    /// (20 µs + 8 KiB on each link, 50 µs) then its flush of 2 chunks in
    /// the background; the thread waits for both acks (one request).
    #[test]
    fn a_write_by_hand() {
        let p = TimeParams { disks: 1, ..TimeParams::default() };
        let mut c = Cluster::new(&p, 1, 4096).unwrap();
        let req = vec![Message { node: 0, chunks: 2 }, Message { node: 0, chunks: 2 }];
        let (secs, _, msgs) = write_phase(&mut c, &[vec![req]], &[vec![1; 4]], 2, 16384).unwrap();
        let wire = 20_000 + (8192.0f64 * 0.8).round() as u64;
        // Message 1: sent at wire, received at wire + 50 µs + wire; message
        // 2 sent at 2·wire, received at max(2·wire + 50 µs, rx1) + wire.
        let rx1 = wire + 50_000 + wire;
        let rx2 = (2 * wire + 50_000).max(rx1) + wire;
        // Flush 1 at rx1: the head is at 0, transfer only (8 KiB at 150
        // MB/s = 54,613 ns); flush 2 continues it.
        let f1 = rx1 + 54_613;
        let f2 = f1.max(rx2) + 54_613;
        let end = f2.max(rx2 + 50_000);
        assert_eq!((secs * 1e9).round() as u64, end);
        assert_eq!(msgs, 2);
    }

    /// Exp. 7's I/O task by hand (the interference rule): one node, one
    /// disk, the task's 1 MiB requests at byte 2^38 (a quarter of the
    /// disk), the write phase of `a_write_by_hand` cut to one 2-chunk
    /// message that fills a 2-chunk buffer. At 0 the task issues request 1:
    /// seek over 2^38 bytes (1 + 14·0.5 = 8 ms), half a turn (4,166,667
    /// ns), 1 MiB at 150 MB/s (6,990,507 ns): done at 19,157,174. The flush
    /// arrives at rx = 103,108 ns (message of 8 KiB: 26,554 ns on each link,
    /// 50 µs between), after request 1 was issued, so it waits for it
    /// (first come, first served), then seeks back over 2^38 + 1 MiB bytes
    /// (8,000,013 ns), half a turn, 8 KiB (54,613 ns): done at 31,378,467,
    /// the phase's end. Request 2, issued at 19,157,174 behind the flush,
    /// has not started its transfer by then: 1 MiB in the window. Alone,
    /// request 2 follows request 1 without a seek (done 26,147,681) and
    /// request 3 has transferred (31,378,467 − 26,147,681) / 6,990,507 of
    /// its MiB by the window's end. Without the rule (the flush served at
    /// rx on an idle disk) the phase would end at rx + 50 µs.
    #[test]
    fn the_io_task_interferes_by_hand() {
        let task = IoTask { node: 0, disk: 0, request_bytes: 1 << 20, offset_bytes: 1 << 38 };
        let p = TimeParams { disks: 1, io_task: Some(task), ..TimeParams::default() };
        let mut c = Cluster::new(&p, 1, 4096).unwrap();
        let req = vec![Message { node: 0, chunks: 2 }];
        let (secs, _, _) = write_phase(&mut c, &[vec![req]], &[vec![1; 2]], 2, 8192).unwrap();
        let end = 31_378_467u64;
        assert_eq!((secs * 1e9).round() as u64, end);
        let r = c.io_task_report().unwrap();
        assert_eq!(r.requests, 2);
        assert_eq!(r.bytes, (1u64 << 20) as f64);
        let alone = 2.0 * (1u64 << 20) as f64 + (end - 26_147_681) as f64 / 6_990_507.0 * (1u64 << 20) as f64;
        let rate = |b: f64| b / 1e6 / (end as f64 / 1e9);
        assert!((r.mb_s - rate(r.bytes)).abs() < 1e-9, "{}", r.mb_s);
        assert!((r.alone_mb_s - rate(alone)).abs() < 1e-9, "{} vs {}", r.alone_mb_s, rate(alone));
        // A task on another node, or none, leaves the phase as it was.
        let mut c = Cluster::new(&TimeParams { disks: 1, ..TimeParams::default() }, 1, 4096).unwrap();
        let (secs, _, _) =
            write_phase(&mut c, &[vec![vec![Message { node: 0, chunks: 2 }]]], &[vec![1; 2]], 2, 8192).unwrap();
        assert_eq!((secs * 1e9).round() as u64, 103_108 + 54_613);
        assert_eq!(c.io_task_report(), None);
        // Bad tasks are typed errors naming the flag.
        let bad = |t: IoTask| Cluster::new(&TimeParams { io_task: Some(t), ..TimeParams::default() }, 1, 4096).err();
        assert!(matches!(bad(IoTask { node: 1, ..task }), Some(ClusterError::Invalid { flag: "--io-task", .. })));
        let p = TimeParams { io_task: Some(IoTask { disk: 2, ..task }), ..TimeParams::default() };
        assert_eq!(p.problem(4096).map(|x| x.0), Some("--io-task"));
    }

    /// Exp. 6 by hand, 4 KiB chunks on the default testbed: a message is
    /// 2 × (20 µs + 4096 × 0.8 ns) + 2 × 50 µs = 146.554 µs; the index
    /// (16 bytes) 2 × (20 µs + 12.8 ns → 13 ns) + 100 µs = 140.026 µs. A
    /// persisted chunk adds 1 ms + 14 ms × 8/15 + 4096 B at 150 MB/s
    /// (27.307 µs) = 8,493.973 µs, and 4,166.667 µs (half a turn at 7,200
    /// rpm, rounded to ns).
    #[test]
    fn update_latency_by_hand() {
        let p = TimeParams::default();
        let fu = update_latency_us(&p, 4096, false, false);
        let iru = update_latency_us(&p, 4096, true, false);
        assert!((fu - 146.554).abs() < 1e-9, "{fu}");
        assert!((iru - (146.554 + 140.026)).abs() < 1e-9, "{iru}");
        let fu_p = update_latency_us(&p, 4096, false, true);
        let disk = 8_493.973 + 4_166.667;
        assert!((fu_p - (146.554 + disk)).abs() < 1e-3, "{fu_p}");
        let iru_p = update_latency_us(&p, 4096, true, true);
        assert!((iru_p - fu_p - 140.026).abs() < 1e-9, "{iru_p}");
    }
}
