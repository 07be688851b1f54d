//! `dedupsim serve`: the simulated device as an NBD export, so that real
//! programs (qemu-img, fio, a real ext4 through nbdfuse + fuse2fs) drive it
//! with real bytes (docs/serve.md).
//!
//! ```text
//! client ──NBD──> connection thread ──Device::submit──> PageStore (bytes, content ids)
//!                     ^                      └────────> Simulation::submit (streaming, sim/stream.rs)
//!                     └── reply at the simulated completion <── Simulation::next_completion
//! ```
//!
//! One [`Device`] per server: one simulation (one policy, one engine), one
//! page store, shared by every connection under a mutex. Data is applied
//! when a request is received (reads see every write received before them);
//! the simulation decides only *when* each reply is due.
//!
//! # Clocks
//!
//! * `virtual` (default): each connection has a clock, the simulated
//!   completion of the last reply the server sent it (at connection: the
//!   device's current floor). A request arrives at its connection's clock
//!   (raised to the device floor, [`crate::sim::Simulation::floor`]). The
//!   server reads every request the client has already sent before it
//!   replies (up to [`MAX_WAITING`] requests or [`MAX_WAITING_BYTES`] of
//!   read data waiting); when none is waiting, it replies to the connection's
//!   outstanding request that completes first, once the simulation can
//!   vouch for it, sends the reply at once, and advances the clock to that
//!   completion. A client at
//!   queue depth 1 is thus a closed loop at depth 1, exactly and
//!   deterministically; at depth N the requests a client sends while the
//!   server replies arrive when the server reads them, so the realized
//!   depth can be lower than N, by host scheduling (not deterministic).
//!   Simulated time is independent of the host's speed.
//! * `real`: a request arrives at the wall-clock time since the server
//!   started (raised to the floor), and its reply is held until that wall
//!   time reaches its simulated completion: the application feels the
//!   simulated device's latency, as with FEMU.
//!
//! Several connections share the device; their requests are serialized in
//! the order the server receives them.

pub mod nbd;
pub mod store;

use crate::config::Config;
use crate::engine;
use crate::policy;
use crate::report::RunReport;
use crate::runner::RunError;
use crate::sim::{RequestHint, RunOptions, SimError, Simulation, StreamRequest};
use crate::units::{ContentId, Nanos, Op};
use nbd::{ExportInfo, Handshake, ProtocolError};
use std::collections::HashMap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
pub use store::{HashKind, PageStore, StoreError, StoreStats};

/// Errors that keep a server from starting.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("--record {}: {source}", path.display())]
    Record { path: PathBuf, source: io::Error },
}

/// The two clocks (module doc).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clock {
    Virtual,
    Real,
}

impl std::str::FromStr for Clock {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "virtual" => Ok(Clock::Virtual),
            "real" => Ok(Clock::Real),
            _ => Err(format!("unknown clock `{s}`: virtual or real")),
        }
    }
}

/// Where the server listens.
#[derive(Clone, Debug)]
pub enum Listen {
    Tcp(String),
    Unix(PathBuf),
}

/// Everything a server needs besides its configuration.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub policy: String,
    /// Export size in bytes (a multiple of the page size, at most the
    /// device's logical capacity).
    pub size: u64,
    pub clock: Clock,
    pub hash: HashKind,
    pub store_memory: u64,
    pub store_dir: Option<PathBuf>,
    /// Native trace of every request with per-page content.
    pub record: Option<PathBuf>,
    pub check: RunOptions,
    /// Record a time series with intervals of this much simulated time
    /// (`serve --timeseries`; `crate::series`).
    pub series: Option<Nanos>,
}

/// The pages one NBD request touches, and how.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ServeStats {
    pub connections: u64,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub write_zeroes: u64,
    pub flushes: u64,
    pub fua_writes: u64,
    /// Requests answered with an error (bad range, store full, ...).
    pub errors: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    /// Pages of unaligned writes read, patched and written back.
    pub rmw_pages: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// The served device: simulation, bytes, recorder, counters.
pub struct Device {
    sim: Option<Simulation<'static>>,
    store: PageStore,
    page: u64,
    size: u64,
    record: Option<(BufWriter<std::fs::File>, PathBuf)>,
    /// Completions handed out by the simulation, not yet replied.
    done: HashMap<u64, Nanos>,
    next_tag: u64,
    /// The connection of the request being submitted (its stream).
    conn: u16,
    stats: ServeStats,
    /// Scratch buffers.
    contents: Vec<ContentId>,
    fingerprints: Vec<u64>,
    page_buf: Vec<u8>,
    scratch: Vec<u8>,
    record_line: String,
    /// The first error that stopped the simulation, if any.
    failed: Option<String>,
}

/// What the server ends with.
pub struct ServeOutcome {
    pub report: RunReport,
    /// The time series, if [`ServeOptions::series`] asked for one.
    pub series: Option<crate::series::TimeSeries>,
    pub stats: ServeStats,
    pub store: StoreStats,
    pub store_memory_bytes: u64,
}

/// A reply's outcome: an NBD error, or success (with data for a read).
type Outcome = Result<Vec<u8>, u32>;

impl Device {
    pub fn new(cfg: &Config, o: &ServeOptions) -> Result<Device, ServeError> {
        let p = policy::build(&o.policy, cfg).map_err(RunError::from)?;
        let e =
            engine::build(&cfg.dedup.engine, &cfg.engine_context()).map_err(|e| RunError::from(SimError::from(e)))?;
        let mut sim = Simulation::streaming(cfg, p, e, o.check.clone()).map_err(RunError::from)?;
        if let Some(interval) = o.series {
            sim.record_series(interval);
        }
        let page = u64::from(cfg.geometry.page_size);
        let pages = o.size / page;
        let record = match &o.record {
            Some(path) => {
                let partial = partial_path(path);
                // `create_new`: a second server recording to the same file
                // between the CLI's check and here fails rather than
                // interleaving its lines into this recording.
                let f = std::fs::File::options()
                    .write(true)
                    .create_new(true)
                    .open(&partial)
                    .map_err(|source| ServeError::Record { path: partial.clone(), source })?;
                let mut w = BufWriter::with_capacity(1 << 20, f);
                let _ = writeln!(w, "{}", crate::trace::native::HEADER);
                let _ = writeln!(
                    w,
                    "# recorded by dedupsim serve (policy {}, clock {:?}); time_ns op offset size volume content",
                    o.policy, o.clock
                );
                Some((w, path.clone()))
            }
            None => None,
        };
        Ok(Device {
            sim: Some(sim),
            store: PageStore::new(page as usize, pages, o.hash, o.store_memory, o.store_dir.as_deref()),
            page,
            size: pages * page,
            record,
            done: HashMap::new(),
            next_tag: 0,
            conn: 0,
            stats: ServeStats::default(),
            contents: Vec::new(),
            fingerprints: Vec::new(),
            page_buf: vec![0; page as usize],
            scratch: Vec::new(),
            record_line: String::new(),
            failed: None,
        })
    }

    /// Export size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn stats(&self) -> &ServeStats {
        &self.stats
    }

    pub fn store_stats(&self) -> &StoreStats {
        self.store.stats()
    }

    /// The simulated time no arrival can precede.
    pub fn floor(&self) -> Nanos {
        self.sim.as_ref().map_or(Nanos::ZERO, |s| s.floor())
    }

    /// Applies one request's data and submits it to the simulation,
    /// arriving at `at`. Returns the simulation's tag (`None` when the
    /// request costs no simulated time: flush, zero length, a trim of no
    /// whole page) and the outcome. `conn` is the client connection's
    /// number (0, 1, ... in connection order; the request's writer stream,
    /// [`crate::workload::Request::stream`], saturating at 65,535).
    pub fn submit(&mut self, conn: u16, req: &nbd::Request, payload: &[u8], at: Nanos) -> (Option<u64>, Outcome) {
        self.stats.requests += 1;
        self.conn = conn;
        match self.submit_inner(req, payload, at) {
            Ok(r) => r,
            Err(errno) => {
                self.stats.errors += 1;
                (None, Err(errno))
            }
        }
    }

    fn submit_inner(&mut self, req: &nbd::Request, payload: &[u8], at: Nanos) -> Result<(Option<u64>, Outcome), u32> {
        if self.sim.is_none() {
            return Err(nbd::EIO);
        }
        if !matches!(req.kind, nbd::CMD_READ | nbd::CMD_WRITE | nbd::CMD_WRITE_ZEROES | nbd::CMD_TRIM | nbd::CMD_FLUSH)
        {
            return Err(nbd::EINVAL);
        }
        let (off, len) = (req.offset, u64::from(req.length));
        let write_like = matches!(req.kind, nbd::CMD_WRITE | nbd::CMD_WRITE_ZEROES);
        match off.checked_add(len) {
            Some(end) if end <= self.size => {}
            // "Error values": ENOSPC for a write (or write zeroes) past the
            // end; EINVAL for "a read or trim request" past it, and otherwise.
            _ if write_like => return Err(nbd::ENOSPC),
            _ => return Err(nbd::EINVAL),
        }
        if req.kind == nbd::CMD_FLUSH {
            self.stats.flushes += 1;
            return Ok((None, Ok(Vec::new())));
        }
        if len == 0 {
            return Ok((None, Ok(Vec::new())));
        }
        let p = self.page;
        let (first, last) = (off / p, (off + len).div_ceil(p));
        match req.kind {
            nbd::CMD_READ => {
                self.stats.reads += 1;
                self.stats.pages_read += last - first;
                self.stats.bytes_read += len;
                let mut data = vec![0u8; ((last - first) * p) as usize];
                for (k, l) in (first..last).enumerate() {
                    let k = k * p as usize;
                    self.store.read_page(l, &mut data[k..k + p as usize]).map_err(|e| self.fail_io(e))?;
                }
                let s = (off - first * p) as usize;
                data.drain(..s);
                data.truncate(len as usize);
                let tag = self.simulate(Op::Read, first, last, at)?;
                Ok((Some(tag), Ok(data)))
            }
            nbd::CMD_WRITE | nbd::CMD_WRITE_ZEROES => {
                if req.kind == nbd::CMD_WRITE {
                    self.stats.writes += 1;
                    if req.flags & nbd::CMD_FLAG_FUA != 0 {
                        self.stats.fua_writes += 1;
                    }
                } else {
                    self.stats.write_zeroes += 1;
                }
                self.stats.pages_written += last - first;
                self.stats.bytes_written += len;
                self.contents.clear();
                self.fingerprints.clear();
                for l in first..last {
                    let (ps, pe) = (l * p, (l + 1) * p);
                    let (s, e) = (off.max(ps), (off + len).min(pe));
                    let mut buf = std::mem::take(&mut self.page_buf);
                    if e - s < p {
                        // A partial page: read, patch, write back.
                        self.stats.rmw_pages += 1;
                        self.store.read_page(l, &mut buf).map_err(|e| self.fail_io(e))?;
                    }
                    let dst = &mut buf[(s - ps) as usize..(e - ps) as usize];
                    if req.kind == nbd::CMD_WRITE {
                        dst.copy_from_slice(&payload[(s - off) as usize..(e - off) as usize]);
                    } else {
                        dst.fill(0);
                    }
                    let r = self.store.write_page(l, &buf, &mut self.scratch);
                    self.page_buf = buf;
                    let id = r.map_err(|e| self.fail_store(e))?;
                    self.contents.push(ContentId(id));
                    self.fingerprints.push(self.store.fingerprint(id));
                }
                let tag = self.simulate(Op::Write, first, last, at)?;
                Ok((Some(tag), Ok(Vec::new())))
            }
            nbd::CMD_TRIM => {
                self.stats.trims += 1;
                // Only whole pages are forgotten; partial ones keep their bytes.
                let (a, b) = (off.div_ceil(p), (off + len) / p);
                if a >= b {
                    return Ok((None, Ok(Vec::new())));
                }
                for l in a..b {
                    self.store.trim_page(l);
                }
                let tag = self.simulate(Op::Trim, a, b, at)?;
                Ok((Some(tag), Ok(Vec::new())))
            }
            _ => Err(nbd::EINVAL),
        }
    }

    fn fail_io(&mut self, e: StoreError) -> u32 {
        self.failed.get_or_insert_with(|| e.to_string());
        nbd::EIO
    }

    fn fail_store(&mut self, e: StoreError) -> u32 {
        let errno = if matches!(e, StoreError::Full { .. }) { nbd::ENOSPC } else { nbd::EIO };
        self.failed.get_or_insert_with(|| e.to_string());
        errno
    }

    /// Submits pages `first..last` to the simulation; records the request.
    fn simulate(&mut self, op: Op, first: u64, last: u64, at: Nanos) -> Result<u64, u32> {
        let tag = self.next_tag;
        self.next_tag += 1;
        let req = StreamRequest {
            tag,
            op,
            lpn: first as u32,
            pages: (last - first) as u32,
            contents: &self.contents,
            hint: RequestHint::Absent,
            fingerprints: Some(&self.fingerprints),
            stream: self.conn,
        };
        let sim = self.sim.as_mut().ok_or(nbd::EIO)?;
        let at = match sim.submit(&req, at) {
            Ok(at) => at,
            Err(e) => {
                // The simulated device failed (e.g. full): stop simulating.
                self.failed.get_or_insert_with(|| format!("simulation: {e}"));
                return Err(nbd::EIO);
            }
        };
        if self.record.is_some() {
            self.record_request(op, first, last, at);
        }
        Ok(tag)
    }

    /// One native trace line: the page-aligned extent the device wrote
    /// (after read-modify-write), one XXH3-128 per 4 KiB of it.
    fn record_request(&mut self, op: Op, first: u64, last: u64, at: Nanos) {
        use std::fmt::Write as _;
        let p = self.page;
        let line = &mut self.record_line;
        line.clear();
        let c = match op {
            Op::Read => 'R',
            Op::Write => 'W',
            Op::Trim => 'T',
        };
        let _ = write!(line, "{} {c} {} {}", at.0, first * p, (last - first) * p);
        if op == Op::Write {
            line.push_str(" 0 ");
            for (k, l) in (first..last).enumerate() {
                let _ = self.store.read_page(l, &mut self.page_buf);
                for (j, chunk) in self.page_buf.chunks(4096).enumerate() {
                    if k > 0 || j > 0 {
                        line.push(',');
                    }
                    let _ = write!(line, "{:032x}", xxhash_rust::xxh3::xxh3_128(chunk));
                }
            }
        }
        line.push('\n');
        if let Some((w, _)) = &mut self.record {
            if let Err(e) = w.write_all(line.as_bytes()) {
                self.failed.get_or_insert_with(|| format!("--record: {e}"));
                self.record = None;
            }
        }
    }

    /// The earliest completion among `mine` (tags this connection waits
    /// for), simulating as far as needed.
    fn completion_of(&mut self, mine: &[u64]) -> Option<(u64, Nanos)> {
        let best = mine.iter().filter_map(|t| self.done.get(t).map(|&c| (c, *t))).min();
        if let Some((c, t)) = best {
            self.done.remove(&t);
            return Some((t, c));
        }
        let sim = self.sim.as_mut()?;
        loop {
            match sim.next_completion() {
                Ok(Some((t, c))) if mine.contains(&t) => return Some((t, c)),
                Ok(Some((t, c))) => {
                    self.done.insert(t, c);
                }
                Ok(None) => return None,
                Err(e) => {
                    // The simulated device failed (e.g. full while placing
                    // a waiting write): stop simulating, as `submit` does.
                    self.failed.get_or_insert_with(|| format!("simulation: {e}"));
                    return None;
                }
            }
        }
    }

    /// Ends the simulation and the recording; the run's report.
    pub fn finish(&mut self, cfg: &Config, o: &ServeOptions) -> Result<ServeOutcome, String> {
        let sim = self.sim.take().ok_or("the device was already finished")?;
        if let Some((mut w, path)) = self.record.take() {
            w.flush().map_err(|e| format!("--record {}: {e}", path.display()))?;
            std::fs::rename(partial_path(&path), &path).map_err(|e| format!("--record {}: {e}", path.display()))?;
        }
        if sim.outstanding() == 0 && self.next_tag == 0 {
            return Err("no request reached the simulated device (nothing to report)".into());
        }
        let mut out = sim.end().map_err(|e| format!("simulation: {e}"))?;
        let series = out.series.take();
        let st = self.store.stats();
        let rate = if self.stats.pages_written == 0 {
            0.0
        } else {
            1.0 - st.contents as f64 / self.stats.pages_written as f64
        };
        let provenance = crate::workload::Provenance {
            name: "serve".into(),
            source: format!(
                "dedupsim serve: {} NBD connection(s), clock {}",
                self.stats.connections,
                if o.clock == Clock::Virtual { "virtual" } else { "real" }
            ),
        };
        let content = format!("real bytes ({})", o.hash);
        let report = RunReport::new(crate::runner::run_meta(cfg, provenance, content, rate.max(0.0)), out);
        self.store.remove_spill();
        Ok(ServeOutcome {
            report,
            series,
            stats: self.stats.clone(),
            store: self.store.stats().clone(),
            store_memory_bytes: self.store.memory_bytes(),
        })
    }

    /// Why the simulation stopped, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }
}

/// `FILE.partial`: where a recording grows until it is complete.
pub fn partial_path(p: &std::path::Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// What connection threads share.
pub struct Shared {
    pub device: Mutex<Device>,
    pub export: ExportInfo,
    pub clock: Clock,
    pub start: Instant,
    /// Connections open now, and ever.
    pub open: AtomicUsize,
    pub served: AtomicU64,
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Device> {
        // A connection thread that panicked cannot leave the device
        // half-updated in a way a reply depends on: keep serving.
        self.device.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A stream the server can poll for pending input.
pub trait Conn: Read + Write + AsRawFd + Send {
    fn try_clone_conn(&self) -> io::Result<Self>
    where
        Self: Sized;
}

impl Conn for std::net::TcpStream {
    fn try_clone_conn(&self) -> io::Result<Self> {
        let s = self.try_clone()?;
        s.set_nodelay(true)?;
        Ok(s)
    }
}

impl Conn for std::os::unix::net::UnixStream {
    fn try_clone_conn(&self) -> io::Result<Self> {
        self.try_clone()
    }
}

/// Whether `fd` has input waiting (a zero-timeout poll).
fn input_waiting(fd: i32) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
}

/// The most requests one connection may have waiting for their replies
/// before the server stops reading its input and replies first. Without a
/// bound a client that pipelines requests and never reads the replies
/// makes the server hold every read's data: 1,000 reads of 32 MiB sent
/// back to back were 32 GiB. qemu-nbd stops reading at 16 requests
/// (`MAX_NBD_REQUESTS`); 256 is above the queue depth of the clients the
/// server is used with (fio at depth 32, nbdcopy's 64), so their requests
/// arrive as before.
pub const MAX_WAITING: usize = 256;
/// The most read data one connection's waiting replies may hold before the
/// server stops reading its input (with [`MAX_WAITING`]).
pub const MAX_WAITING_BYTES: usize = 256 << 20;

/// A request this connection waits to answer.
struct Waiting {
    handle: u64,
    tag: u64,
    outcome: Outcome,
}

/// Serves one connection until the client disconnects; protocol errors
/// end it (returned for the log).
pub fn serve_connection<S: Conn>(stream: S, shared: &Shared) -> Result<(), ProtocolError> {
    let mut stream = stream;
    match nbd::handshake(&mut stream, &shared.export)? {
        Handshake::Go => {}
        Handshake::Closed => return Ok(()),
    }
    let conn = {
        let mut d = shared.lock();
        d.stats.connections += 1;
        u16::try_from(d.stats.connections - 1).unwrap_or(u16::MAX)
    };
    let fd = stream.as_raw_fd();
    let mut reader = BufReader::with_capacity(1 << 20, stream.try_clone_conn()?);
    let mut writer = BufWriter::with_capacity(1 << 20, stream);
    let mut clock = shared.lock().floor();
    let mut waiting: Vec<Waiting> = Vec::new();
    // Bytes of read data in `waiting`'s outcomes.
    let mut held = 0usize;
    let mut payload = Vec::new();
    let mut disconnecting = false;
    loop {
        let full = waiting.len() >= MAX_WAITING || held >= MAX_WAITING_BYTES;
        let input = !disconnecting && !full && (!reader.buffer().is_empty() || input_waiting(fd));
        if !disconnecting && (waiting.is_empty() || input) {
            if waiting.is_empty() {
                writer.flush()?;
            }
            let Some(req) = nbd::read_request(&mut reader)? else { break };
            if req.kind == nbd::CMD_DISC {
                disconnecting = true;
                continue;
            }
            shared.served.fetch_add(1, Ordering::SeqCst);
            payload.clear();
            if req.kind == nbd::CMD_WRITE {
                if req.length > shared.export.max_block {
                    // Past the advertised maximum: drain a modest payload and
                    // refuse it; an absurd one ends the connection.
                    if u64::from(req.length) > 4 * u64::from(shared.export.max_block) {
                        return Err(ProtocolError::PayloadTooLarge(req.length));
                    }
                    io::copy(&mut (&mut reader).take(u64::from(req.length)), &mut io::sink())?;
                    nbd::simple_reply(&mut writer, req.handle, nbd::EINVAL, &[])?;
                    continue;
                }
                payload.resize(req.length as usize, 0);
                reader.read_exact(&mut payload)?;
            } else if req.kind == nbd::CMD_READ && req.length > shared.export.max_block {
                nbd::simple_reply(&mut writer, req.handle, nbd::EINVAL, &[])?;
                continue;
            }
            let at = match shared.clock {
                Clock::Virtual => clock,
                Clock::Real => Nanos(shared.start.elapsed().as_nanos() as u64),
            };
            let (tag, outcome) = shared.lock().submit(conn, &req, &payload, at);
            match tag {
                Some(tag) => {
                    held += outcome.as_ref().map_or(0, Vec::len);
                    waiting.push(Waiting { handle: req.handle, tag, outcome });
                }
                None => reply(&mut writer, req.handle, &outcome)?,
            }
            continue;
        }
        if waiting.is_empty() {
            break; // disconnecting, all answered
        }
        let tags: Vec<u64> = waiting.iter().map(|w| w.tag).collect();
        let found = shared.lock().completion_of(&tags);
        let Some((tag, done)) = found else {
            // The simulation stopped: answer everything with EIO.
            held = 0;
            for w in waiting.drain(..) {
                reply(&mut writer, w.handle, &Err(nbd::EIO))?;
            }
            continue;
        };
        let i = waiting.iter().position(|w| w.tag == tag).expect("a tag of this connection");
        let w = waiting.swap_remove(i);
        held -= w.outcome.as_ref().map_or(0, Vec::len);
        if shared.clock == Clock::Real {
            let due = shared.start + Duration::from_nanos(done.0);
            let now = Instant::now();
            if due > now {
                writer.flush()?;
                std::thread::sleep(due - now);
            }
        }
        clock = clock.max(done);
        reply(&mut writer, w.handle, &w.outcome)?;
        // Sent now, so that a client resubmitting on each reply (fio at
        // iodepth N) can: its next request arrives at this completion if it
        // reaches the server before the next reply is decided.
        writer.flush()?;
    }
    writer.flush()?;
    Ok(())
}

fn reply(w: &mut impl Write, handle: u64, o: &Outcome) -> io::Result<()> {
    match o {
        Ok(data) => nbd::simple_reply(w, handle, 0, data),
        Err(e) => nbd::simple_reply(w, handle, *e, &[]),
    }
}

/// Blocks SIGINT and SIGTERM in this thread and every thread it starts
/// later, and sets `stop` when one arrives (a thread waiting in
/// `sigwait`: no process-wide handler state). Call before starting threads.
pub fn stop_on_signals(stop: Arc<AtomicBool>) -> io::Result<()> {
    // SAFETY: a zeroed sigset_t is initialized by sigemptyset; the calls get
    // valid pointers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        std::thread::Builder::new().name("signals".into()).spawn(move || {
            let mut sig = 0;
            libc::sigwait(&set, &mut sig);
            stop.store(true, Ordering::SeqCst);
        })?;
    }
    Ok(())
}

/// Where the server listens, bound.
pub enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener, PathBuf),
}

impl Listener {
    /// Binds `l` (a Unix socket path must not exist yet: it is never
    /// replaced).
    pub fn bind(l: &Listen) -> io::Result<Listener> {
        let listener = match l {
            Listen::Tcp(addr) => Listener::Tcp(std::net::TcpListener::bind(addr)?),
            Listen::Unix(path) => Listener::Unix(std::os::unix::net::UnixListener::bind(path)?, path.clone()),
        };
        match &listener {
            Listener::Tcp(t) => t.set_nonblocking(true)?,
            Listener::Unix(u, _) => u.set_nonblocking(true)?,
        }
        Ok(listener)
    }

    /// The address clients connect to, for messages.
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(t) => t.local_addr().map_or_else(|_| "?".into(), |a| format!("nbd://{a}")),
            Listener::Unix(_, p) => format!("nbd+unix:///?socket={}", p.display()),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Accepts connections (a thread each) until `shared.stop` is set, or,
/// unless `persist`, until no connection is open after at least one
/// request was served (a client that only probes the export, as fio's
/// set-up does, does not end the server);
/// `status` is called about every `every`. Connections still open then
/// are not waited for: their requests get `EIO` once the device is
/// finished.
pub fn accept_loop(
    listener: &Listener,
    shared: &Arc<Shared>,
    persist: bool,
    every: Duration,
    status: &mut dyn FnMut(&Device),
    log: fn(&str),
) {
    let mut last_status = Instant::now();
    while !shared.stop.load(Ordering::SeqCst) {
        let accepted = match listener {
            Listener::Tcp(t) => t.accept().and_then(|(s, _)| {
                s.set_nonblocking(false)?;
                s.set_nodelay(true)?;
                spawn_conn(s, shared, log);
                Ok(())
            }),
            Listener::Unix(u, _) => u.accept().and_then(|(s, _)| {
                s.set_nonblocking(false)?;
                spawn_conn(s, shared, log);
                Ok(())
            }),
        };
        match accepted {
            Ok(()) => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => log(&format!("accept: {e}")),
        }
        if !persist && shared.served.load(Ordering::SeqCst) > 0 && shared.open.load(Ordering::SeqCst) == 0 {
            break;
        }
        if last_status.elapsed() >= every {
            last_status = Instant::now();
            status(&shared.lock());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let open = shared.open.load(Ordering::SeqCst);
    if open > 0 {
        log(&format!("{open} connection(s) still open; their further requests get EIO"));
    }
}

fn spawn_conn<S: Conn + 'static>(s: S, shared: &Arc<Shared>, log: fn(&str)) {
    shared.open.fetch_add(1, Ordering::SeqCst);
    let sh = Arc::clone(shared);
    std::thread::spawn(move || {
        if let Err(e) = serve_connection(s, &sh) {
            // A client that just vanished is not worth a word.
            let gone = matches!(&e, ProtocolError::Io(io) if matches!(io.kind(),
                io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe));
            if !gone {
                log(&format!("connection closed: {e}"));
            }
        }
        sh.open.fetch_sub(1, Ordering::SeqCst);
    });
}
